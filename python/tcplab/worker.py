"""What a sweep's worker process runs: normalized scenarios (the core's
JSON), each into the payload the store keeps.

This module imports the core and, on the first run, numpy and pyarrow
(which brings in pandas on its first array), but neither pydantic nor
duckdb nor the runner's modules: a process pool's worker starts by
importing it (its initializer and tasks live here), and those imports
would cost each worker most of a second before its first run.
"""

from __future__ import annotations

import os
import time
from typing import Any


def die_with_parent(parent: int) -> None:
    """A worker's initializer: exit when the sweep that started it is gone,
    even if it was killed with SIGKILL. On Linux the kernel sends this worker
    SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG); elsewhere, and in
    case the parent died before that was set, a thread watches the parent."""
    import threading

    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="tcplab-parent-watch").start()


_EMPTY: dict[str, Any] = {}


def _empty(name: str, columns: list[str]) -> Any:
    """The empty result table `name`, made once per process (most runs have
    no pages, ports, traces or packets; the store writes no empty table, and
    nothing changes these tables)."""
    if name not in _EMPTY:
        import pyarrow as pa

        _EMPTY[name] = pa.table({c: pa.array([], type=pa.null()) for c in columns})
    return _EMPTY[name]


def execute(core_json: str, cancel: Any = None) -> dict[str, Any]:
    """Run one normalized scenario in this process and return what the store
    keeps: the wall time, the engine counters, the result tables as pyarrow
    Tables (of the types a DataFrame of :class:`tcplab.Result` converts to)
    and the per-run metrics. Top-level, so process pools and Dask can ship
    it; the tables are built here, in the worker, not in the process that
    writes the store, and without pandas, whose frames cost a study's short
    runs several times their simulation. `cancel` (a ``_core.Cancel``)
    stops the run's loop once set."""
    from .api import TABLE_COLUMNS, _arrow, run_core_columns
    from .metrics import run_metrics

    t0 = time.perf_counter()
    res = run_core_columns(core_json, cancel=cancel)
    wall = time.perf_counter() - t0
    tables = {
        name: _arrow(res[name], TABLE_COLUMNS[name], name) if res[name] else _empty(name, TABLE_COLUMNS[name])
        for name in ("flows", "links", "pages", "ports", "traces", "packets", "web100")
    }
    metrics = run_metrics(res["flows"], res["links"], res["pages"], res["engine"])
    return {"wall_s": wall, "engine": res["engine"], "tables": tables, "metrics": metrics}


def execute_many(core_jsons: list[str], cancel: Any = None) -> list[tuple[dict[str, Any] | None, str | None]]:
    """:func:`execute` for each scenario, in this process: per run its
    payload and no error, or no payload and the error it raised (as
    "Type: message"), so a failed run fails alone. A process pool's task,
    several short runs at once."""
    out: list[tuple[dict[str, Any] | None, str | None]] = []
    for c in core_jsons:
        try:
            out.append((execute(c, cancel), None))
        except Exception as e:  # noqa: BLE001 - a failed run is recorded, not fatal
            out.append((None, f"{type(e).__name__}: {e}"))
    return out
