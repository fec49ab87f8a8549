"""The public entry point: :func:`run` and its :class:`Result`."""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from . import _core
from ._bulk import no_gc
from .csv_out import write_csv
from .errors import FieldProblem, InternalError, ScenarioError, UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    import pandas as pd

    from .scenario import Scenario

T = TypeVar("T")


#: The result columns that may hold no value (a transfer of unbounded size, a
#: flow of no page, an infinite ssthresh, a page not finished, no RTT sample
#: yet), by table: typed by what they hold, not inferred from one run's
#: values, so that every run's frames have the same types (an integer column
#: with a missing value is pandas' nullable Int64, not float64) and a results
#: store's tables do not take their types from whichever runs it wrote first.
NULLABLE = {
    "flows": {"page": "Int64", "bytes": "Int64", "end_s": "float64", "fct_s": "float64", "srtt_s": "float64"},
    "pages": {"start_s": "float64", "end_s": "float64", "delay_s": "float64"},
    "traces": {"ssthresh": "Int64", "srtt_s": "float64", "rttvar_s": "float64", "tput_bps": "float64"},
    "web100": {"CurSsthresh": "Int64", "SmoothedRTT": "float64", "SampleRTT": "float64"},
}


def _frame(table: dict[str, list[Any]], columns: list[str], name: str = "", copy: bool = True) -> "pd.DataFrame":
    """A DataFrame of result table `name` given as columns (pandas is imported
    on first use: a run needs none). Without `copy`, the numeric columns are
    views of the result's own: for a frame that is only read, never handed out."""
    import pandas as pd

    if not table:
        return pd.DataFrame.from_records([], columns=columns)
    typed = NULLABLE.get(name, {})
    return pd.DataFrame({c: _typed(table[c], typed.get(c), copy) for c in columns}, columns=columns, copy=False)


def _arrow(table: dict[str, Any], columns: list[str], name: str = "") -> Any:
    """Result table `name` given as columns, as a pyarrow Table of the types
    ``pyarrow.Table.from_pandas(_frame(...))`` gives (a float's NaN a null,
    a nullable column typed by :data:`NULLABLE`), without pandas: what a
    sweep's worker hands the store, at a fraction of a DataFrame's cost."""
    import numpy as np
    import pyarrow as pa

    typed = NULLABLE.get(name, {})
    arrays = []
    for c in columns:
        values, dtype = table[c], typed.get(c)
        if dtype == "Int64":
            v = np.frombuffer(values, dtype=np.int64) if isinstance(values, array) else values
            arrays.append(pa.array(v, type=pa.int64()))
        elif dtype is not None:
            arrays.append(pa.array(np.array(values, dtype=np.float64), from_pandas=True))
        elif type(values) is Levels:
            arrays.append(values.arrow())
        else:
            arrays.append(pa.array(_column(values), from_pandas=True))
    return pa.Table.from_arrays(arrays, names=columns)


def _typed(values: Any, dtype: str | None, copy: bool = True) -> Any:
    """A column as `_column` makes it, or of `dtype` (missing values as NA or NaN)."""
    if dtype is None:
        return _column(values, copy)
    import numpy as np
    import pandas as pd

    if dtype == "Int64":
        if isinstance(values, list):
            return pd.array(values, dtype="Int64")
        # `_column` has made the copy, if one is wanted.
        return pd.array(np.asarray(_column(values, copy)), dtype="Int64", copy=False)
    if isinstance(values, array) and values.typecode == "d":
        return _column(values, copy)
    return np.array(values, dtype=np.float64) if copy else np.asarray(values, dtype=np.float64)


class Levels(Sequence[Any]):
    """A column that the core sent as a code per row into a list of its
    distinct values: strings (a packet log's link, event, app and kind) or
    booleans (levels [False, True]). A sequence of the values, which makes no
    object per row until asked to."""

    __slots__ = ("codes", "levels")

    def __init__(self, codes: array, levels: list[str]) -> None:
        self.codes = codes
        self.levels = levels

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.levels[c] for c in self.codes[i]]
        return self.levels[self.codes[i]]

    def __iter__(self) -> Any:
        return map(self.levels.__getitem__, self.codes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Levels, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment] - compared by value, as a list

    def __repr__(self) -> str:
        return f"Levels({self.tolist()!r})"

    def tolist(self) -> list[str]:
        lv = self.levels
        return [lv[c] for c in self.codes]

    def _codes(self) -> Any:
        import numpy as np

        return np.frombuffer(self.codes, dtype=np.uint8 if self.codes.itemsize == 1 else np.uint32)

    def _bools(self) -> bool:
        return self.levels == [False, True]

    def arrow(self, large: bool = False) -> Any:
        """As a pyarrow array, as ``pyarrow.array(self.tolist())`` makes it
        (`large`: strings as large strings, as pandas keeps them)."""
        import pyarrow as pa

        if self._bools():
            return pa.array(self._codes().astype(bool))
        # Each row's level taken by its code: a third of the time of casting
        # a dictionary array to strings, the same array.
        return pa.array(self.levels, type=pa.large_string() if large else pa.string()).take(pa.array(self._codes()))

    def pandas(self) -> Any:
        """As the array pandas makes of the list of values, without the list."""
        import numpy as np
        import pandas as pd

        if self._bools():
            # The codes are bytes of 0 and 1: a copy of them is the booleans
            # (copied by the array itself, as `_column` copies).
            return np.frombuffer(self.codes[:], dtype=bool) if self.codes.itemsize == 1 else self._codes().astype(bool)
        dtype = pd.Series(self.levels).dtype
        if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
            return pd.array(self.arrow(large=True), dtype=dtype)
        return np.asarray(self.levels, dtype=object)[self._codes()]


def _column(values: Any, copy: bool = True) -> Any:
    """A numeric column as a NumPy array: pandas' type inference over a list
    costs several times more. An all-integer column becomes int64 and a float
    column float64 (None as NaN), as pandas would infer them; a column of
    :class:`Levels` what pandas would make of its values; any other column
    (strings, booleans, integers with None) is left to pandas."""
    import numpy as np

    if type(values) is Levels:
        return values.pandas()
    if isinstance(values, array):
        # A copy: each DataFrame is the caller's to change, as the result
        # stays as it was. The array copies itself (a plain allocation): a
        # NumPy copy of several MB asks the kernel for huge pages, whose
        # first touch can stall (3.4 s against 0.8 s for the first frame of
        # 4.6 million flows on a VM with the kernel's default THP settings).
        return np.frombuffer(values[:] if copy else values, dtype=np.int64 if values.typecode == "q" else np.float64)
    if values:
        kind = type(values[0])
        try:
            if kind is int:
                return np.fromiter(values, dtype=np.int64, count=len(values))
            if kind is float:
                return np.array(values, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            pass
    return values


#: The tables the core returns as columns.
TABLES = ("flows", "links", "pages", "traces", "web100", "ports", "packets")


def rows_of(table: dict[str, Any], which: "Iterable[int] | None" = None) -> list[dict[str, Any]]:
    """A table given as columns (lists or arrays), as a list of rows of
    Python values (those numbered in `which`). A float column's NaN is a
    missing value (the core sends null as NaN), None in a row."""
    names = list(table)
    if which is None:
        cols = [_listed(c) for c in table.values()]
        return [dict(zip(names, values)) for values in zip(*cols)]
    # Indexed where they are: an array's or a Levels' item is the Python
    # value its tolist() holds, with no list of the whole column.
    cols = list(table.values())
    return [{n: _cell(c, i) for n, c in zip(names, cols)} for i in which]


def _listed(column: Any) -> list[Any]:
    """A column as a list of Python values, a float array's NaN as None."""
    if not hasattr(column, "tolist"):
        return column
    values = column.tolist()
    if isinstance(column, array) and column.typecode == "d":
        if len(values) < 100_000:  # no NumPy to import (start-up time) for a short table
            return [None if v != v else v for v in values]
        import numpy as np

        for i in np.flatnonzero(np.isnan(np.frombuffer(column, dtype=np.float64))).tolist():
            values[i] = None
    return values


def _cell(column: Any, i: int) -> Any:
    v = column[i]
    return None if v != v else v  # NaN (only a float is unequal to itself): a missing value

#: Fields that measure the machine, not the simulation; they differ between
#: identical runs and are left out of comparisons.
WALL_CLOCK_FIELDS = ("engine.wall_seconds", "engine.setup_seconds", "engine.results_seconds")


def without_wall_clock(engine: dict[str, Any]) -> dict[str, Any]:
    """The engine counters without the fields that measure the machine."""
    drop = {f.split(".", 1)[1] for f in WALL_CLOCK_FIELDS}
    return {k: v for k, v in engine.items() if k not in drop}


@dataclass
class Result:
    """What one run produced."""

    scenario: Scenario
    data: dict[str, Any] = field(repr=False)
    """The core's output: each table as columns (``{"id": [...], ...}``),
    ``engine``, and ``captures`` when files were written."""

    @cached_property
    def raw(self) -> dict[str, Any]:
        """The same output with each table as a list of rows (dictionaries)."""
        return {k: rows_of(v) if k in TABLES else v for k, v in self.data.items()}

    def _table(self, name: str, copy: bool = True) -> "pd.DataFrame":
        """Result table `name` as a DataFrame (see :func:`_frame` for `copy`)."""
        return _frame(self.data[name], columns=TABLE_COLUMNS[name], name=name, copy=copy)

    @property
    def flows(self) -> pd.DataFrame:
        """One row per transfer (connection): identity, sizes and times, goodput,
        and web100-style counters (see the README's Results section)."""
        return self._table("flows")

    @property
    def links(self) -> pd.DataFrame:
        """One row per link direction: id, src, dst, rate_bps, delay_s, arrivals,
        departures, departure_bytes, drops, drop_bytes, backlog_end,
        propagating_end, utilization, queue_avg_pkts, queue_max_pkts,
        queue_max_bytes."""
        return self._table("links")

    @property
    def pages(self) -> pd.DataFrame:
        """One row per web page: id, app, start_s, end_s, delay_s, objects, bytes, completed."""
        return self._table("pages")

    @property
    def traces(self) -> pd.DataFrame:
        """Per-connection time series (with ``[trace] interval`` or ``on_change``):
        flow, app, t, cwnd, ssthresh, srtt_s, rttvar_s, rto_s, flight, snd_una,
        snd_nxt, rwnd (bytes), tput_bps (periodic rows), state."""
        return self._table("traces")

    @property
    def web100(self) -> pd.DataFrame:
        """web100 / RFC 4898 samples (with ``[trace] web100``), one row per traced
        connection per interval: flow, app, t, then the variables under their
        web100 names (see the README's Results section)."""
        return self._table("web100")

    @property
    def ports(self) -> pd.DataFrame:
        """One row per UBR switch port (an ATM link with a ubr queue): link, policy,
        buffer_cells, frames, cells_in, early_drops, ppd_frames, dropped_cells,
        wasted_cells, frames_out, vc_max_cells, vc_max_mean."""
        return self._table("ports")

    @property
    def packets(self) -> pd.DataFrame:
        """The packet log of the links in ``[trace] links``: t, link, event
        (enqueue, dequeue, drop), flow, app, kind, seq, len, retx."""
        return self._table("packets")

    @property
    def captures(self) -> pd.DataFrame:
        """The capture files written (``[trace] pcap``): link, file, packets,
        drops_file, drops."""
        import pandas as pd

        return pd.DataFrame.from_records(self.data.get("captures", []), columns=["link", "file", "packets", "drops_file", "drops"])

    @property
    def engine(self) -> dict[str, Any]:
        """events, sim_seconds, wall_seconds (the loop), setup_seconds, results_seconds, packets_created, packets_delivered,
        packets_dropped, packets_in_network_end, packet_pool_peak."""
        return dict(self.data["engine"])

    def to_dict(self, tables: bool = True) -> dict[str, Any]:
        """All results as one dictionary, each table a list of rows
        (`tables` False: without the tables)."""
        return {
            "tcplab_version": _core.__version__,
            "seed": self.scenario.sim.seed,
            "scenario": self.scenario.model_dump(mode="json", by_alias=True),
            **({name: self.raw[name] for name in TABLES} if tables else {}),
            "engine": self.data["engine"],
            **({"captures": self.data["captures"]} if self.data.get("captures") else {}),
        }

    def to_json(self, indent: int | None = None) -> str:
        """All results as one JSON document (keys sorted, so equal runs give equal text)."""
        if indent is None:
            return "".join(self.json_pieces())
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent, allow_nan=False)

    def json_pieces(self, rows_at_once: int = 10_000) -> "Iterator[str]":
        """:meth:`to_json`'s text in pieces, each table's rows `rows_at_once`
        at a time: a run of millions of transfers is written (``tcplab run
        --json``) without all its rows as dictionaries or the whole text in
        memory at once."""
        doc = self.to_dict(tables=False)
        dumps = functools.partial(json.dumps, sort_keys=True, allow_nan=False)
        yield "{"
        for n, key in enumerate(sorted([*doc, *TABLES])):
            yield (", " if n else "") + f"{dumps(key)}: "
            if key not in TABLES:
                yield dumps(doc[key])
                continue
            table = self.data[key]
            rows = len(next(iter(table.values()))) if table else 0
            yield "["
            for start in range(0, rows, rows_at_once):
                piece = dumps(rows_of({k: c[start : start + rows_at_once] for k, c in table.items()}))
                yield (", " if start else "") + piece[1:-1]  # the rows without the list's brackets
            yield "]"
        yield "}"

    def scenario_toml(self) -> str:
        """The scenario as it ran, as a scenario file: the fields it was given
        (overrides and seed included), in their normalized units. Running the
        file gives the same results."""
        from .scenario.loading import dumps_toml

        return dumps_toml(self.scenario.model_dump(mode="json", by_alias=True, exclude_unset=True))

    def save(self, out_dir: str | Path, fmt: str = "csv") -> list[Path]:
        """Write the run into `out_dir` (made if missing): every table as
        NAME.csv or NAME.parquet (`fmt`; an empty table as its columns only),
        the engine counters as engine.json and the scenario as scenario.toml
        (:meth:`scenario_toml`). Returns the files written, in that order."""
        if fmt not in ("csv", "parquet"):
            raise UsageError([FieldProblem("fmt", "expected 'csv' or 'parquet'", fmt, True)])
        d = out_directory("out_dir", out_dir)
        written = []
        for name in TABLES:
            # Read once and dropped: the frame may share the result's columns (no copy of each).
            frame = self._table(name, copy=False)
            path = d / f"{name}.{fmt}"
            try:
                if fmt == "csv":
                    write_csv(frame, path)
                else:
                    frame.to_parquet(path, index=False)
            except OSError as e:
                e.filename = e.filename or str(path)  # pandas' error at the file's close names none
                raise
            written.append(path)
        (d / "engine.json").write_text(json.dumps(self.engine, sort_keys=True, indent=1) + "\n")
        (d / "scenario.toml").write_text(self.scenario_toml())
        return [*written, d / "engine.json", d / "scenario.toml"]


def interruptibly(call: Callable[[Any], T]) -> T:
    """`call(cancel)` (a run of the core, which stops its loop once `cancel`
    is set) made stoppable by Ctrl-C: the core holds no lock Python needs,
    but the interpreter only handles a signal when the main thread runs
    Python code, so a run in the main thread went on to its end (a 100,000 s
    run took its 13 s and printed its results). So the run goes to a helper
    thread while the main thread waits: Ctrl-C there sets `cancel`, the loop
    stops within `CANCEL_EVERY` events (a few ms), and the KeyboardInterrupt
    is raised here. Off the main thread, which no signal reaches, `call`
    runs here with no flag."""
    if threading.current_thread() is not threading.main_thread():
        return call(None)
    cancel = _core.Cancel()
    box: dict[str, Any] = {}
    entered, done = threading.Event(), threading.Event()

    def target() -> None:
        entered.set()
        try:
            box["out"] = call(cancel)
        except BaseException as e:  # raised in the caller's thread below
            box["error"] = e
        finally:
            done.set()

    worker = threading.Thread(target=target, name="tcplab-run", daemon=True)
    started = False
    # A Ctrl-C from here on, the thread's start included, cancels the run and
    # waits for it (one that came before the waiting loop below went up with
    # the flag unset and the run going on). An Event, not Thread.join: Python
    # 3.11's join, interrupted, marks the thread finished while it runs
    # (bpo-45274's fix releases its lock), and an interpreter that then exits
    # under a thread still in the core aborts the process ("FATAL: exception
    # not rethrown") when the core returns. Waited for in steps, so that a
    # signal another thread took (or `_thread.interrupt_main`), which wakes no
    # wait, is handled within one.
    try:
        try:
            worker.start()
        except RuntimeError:  # no thread can start (at the interpreter's exit): run here, not stoppable
            pass
        else:
            started = True
            while not done.wait(0.05):
                pass
    except BaseException:  # KeyboardInterrupt, or what a handler of the user's raised
        cancel.set()
        # Interrupted inside start(), the thread runs if it was made, and
        # enters `target` straight away: a moment's wait tells which.
        if started or entered.wait(0.5):
            # The loop stops within CANCEL_EVERY events; set-up or the
            # results (a second or two at 100,000 flows) run to their end.
            # Until then a second Ctrl-C waits too: the process must not
            # exit under the core.
            while not done.is_set():
                try:
                    done.wait(0.05)
                except KeyboardInterrupt:
                    pass
        raise
    if not started:
        return call(None)
    if "error" in box:
        raise box.pop("error")
    return box["out"]


def out_directory(arg: str, where: str | os.PathLike[str], what: str = "the directory") -> Path:
    """The directory argument `arg` names, made if missing; a blank path
    (`Path('')` is the working directory), a file or a directory that cannot
    be made is a UsageError naming the argument."""
    if not isinstance(where, (str, os.PathLike)):
        raise TypeError(f"{arg} is a directory's path (str or pathlib.Path), not {type(where).__name__}")
    if not str(where).strip():
        raise UsageError([FieldProblem(arg, "expected a directory's path (made if missing)", str(where), True)])
    d = Path(where)
    if d.exists() and not d.is_dir():
        raise UsageError([FieldProblem(arg, "is a file; expected a directory (made if missing)", str(d), True)])
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError([FieldProblem(arg, f"cannot create {what}: {e.strerror or e}", str(d), True)]) from None
    return d


def default_capture_links(sc: Scenario) -> list[str]:
    """The links captured when none is named: a dumbbell's bottleneck both
    ways, otherwise every link direction of the topology."""
    names = sc.link_names()
    if {"r0->r1", "r1->r0"} <= names and sc.topology.type == "dumbbell":
        return ["r0->r1", "r1->r0"]
    return sorted(names)


_PAGE_COLUMNS = ["id", "app", "start_s", "end_s", "delay_s", "objects", "bytes", "completed"]
_FLOW_COLUMNS = [
    "id", "app", "page", "src", "dst", "cc", "iw", "bytes", "bytes_delivered", "start_s", "end_s", "fct_s",
    "goodput_bps", "data_pkts", "retx_pkts", "retx_fast_pkts", "retx_timeout_pkts", "timeouts", "fast_retx",
    "dupacks", "sack_blocks", "ss_entries", "ca_entries", "rwnd_stalls", "send_stalls", "rtt_samples", "srtt_s", "syn_sent",
    "synack_sent", "closed", "aborted", "completed",
]  # fmt: skip
_TRACE_COLUMNS = [
    "flow", "app", "t", "cwnd", "ssthresh", "srtt_s", "rttvar_s", "rto_s", "flight", "snd_una", "snd_nxt",
    "rwnd", "tput_bps", "state",
]  # fmt: skip
#: The web100 table's columns: RFC 4898 (TCP-ESTATS-MIB) names where it has
#: them (SndMax, CurCwnd, ...), web100's own otherwise (PktsOut, InstantaneousBW).
WEB100_COLUMNS = [
    "flow", "app", "t", "CurCwnd", "CurSsthresh", "SmoothedRTT", "SampleRTT", "CurRwinRcvd", "SndNxt", "SndMax",
    "SndUna", "PktsOut", "DataPktsOut", "AckPktsIn", "DupAcksIn", "SACKsRcvd", "PktsRetrans", "Timeouts",
    "SlowStart", "CongAvoid", "CongestionSignals", "SendStall", "InstantaneousBW", "state",
]  # fmt: skip
_PORT_COLUMNS = [
    "link", "policy", "buffer_cells", "frames", "cells_in", "early_drops", "ppd_frames", "dropped_cells",
    "wasted_cells", "frames_out", "vc_max_cells", "vc_max_mean",
]  # fmt: skip
_PACKET_COLUMNS = ["t", "link", "event", "flow", "app", "kind", "seq", "len", "retx"]
_LINK_COLUMNS = [
    "id", "src", "dst", "rate_bps", "delay_s", "arrivals", "departures", "departure_bytes", "drops",
    "drop_bytes", "loss_drops", "backlog_end", "propagating_end", "utilization", "queue_avg_pkts", "queue_max_pkts",
    "queue_max_bytes",
]  # fmt: skip
#: Each result table's columns, in order.
TABLE_COLUMNS = {"flows": _FLOW_COLUMNS, "links": _LINK_COLUMNS, "pages": _PAGE_COLUMNS, "traces": _TRACE_COLUMNS, "web100": WEB100_COLUMNS,
                 "ports": _PORT_COLUMNS, "packets": _PACKET_COLUMNS}  # fmt: skip


def run_core(core_doc: str, seed: int | None = None) -> str:
    """Run a normalized scenario in the core and return its results as JSON
    text, each table a list of rows: a scenario the core refuses raises
    :class:`ScenarioError` naming the field, a panic :class:`InternalError`."""
    return _call_core(_core.run_json, core_doc, seed)


def check_core(core_doc: str) -> None:
    """Check a normalized scenario as the core's run would, without running
    it (parsing, links, routes, applications and their TCP settings, such as
    ``tcp.hystart`` with a controller other than cubic): errors as
    :func:`run_core`."""
    _call_core(_core.check_json, core_doc, None)


def run_core_columns(
    core_doc: str, seed: int | None = None, blobs: list[bytes] | None = None, reproducer: Any = None, at_loop: Any = None, cancel: Any = None
) -> dict[str, Any]:
    """Run a normalized scenario in the core and return its results with each
    table as columns: ``array.array`` where a column is all numbers (64-bit
    integers or floats, which NumPy and pandas take without a copy),
    :class:`Levels` where it is booleans or strings of a few distinct values,
    lists otherwise. `blobs`: the bytes the document's packed columns refer to (see
    :func:`encode_packed`); `reproducer` gives a document that runs on its
    own, for the report of a panic; `at_loop` is called once the core has
    built the simulation, just before its loop; `cancel`, a ``_core.Cancel``,
    stops the loop once set. Errors as :func:`run_core`."""
    sent = blobs or []
    text, blobs = _call_core(lambda d: _core.run_columns(d, sent, at_loop, cancel), core_doc, seed, reproducer)
    data = json.loads(text)
    for name in TABLES if blobs else ():
        table = data[name]
        for col, v in table.items():
            if type(v) is dict:
                a = array(_TYPECODES[v["dtype"]])
                # Copied straight from the core's memory, which is freed
                # as soon as its column is copied: one column at a time is
                # held twice, not the whole run's.
                blob, blobs[v["bin"]] = blobs[v["bin"]], None
                a.frombytes(blob)
                del blob
                if sys.byteorder == "big":  # pragma: no cover - the core writes little-endian
                    a.byteswap()
                table[col] = Levels(a, v["levels"]) if "levels" in v else a
    return data


#: The core's column dtypes as ``array`` type codes ("<u4" and "|u1": the codes of :class:`Levels`).
_TYPECODES = {"<i8": "q", "<f8": "d", "<u4": "I", "|u1": "B"}


def _call_core(fn: Any, core_doc: str, seed: int | None, reproducer: Any = None) -> Any:
    try:
        return fn(core_doc)
    except _core.CoreScenarioError as e:
        field, message = e.args
        raise ScenarioError([FieldProblem(field or "scenario", message)]) from None
    except _core.CorePanic as e:
        doc = core_doc if reproducer is None else reproducer()  # a document that runs on its own
        raise InternalError(str(e), doc, json.loads(doc).get("seed") if seed is None else seed) from None


#: The packed form's integer columns that go to the core as bytes: (table,
#: column, array type code); "<u4" and "<u8" in the core's terms.
_BLOB_COLUMNS = [("link_columns", c, "I") for c in ("from", "to", "queue")] + [("link_columns", c, "Q") for c in ("rate_bps", "delay_ns")] + [
    ("app_columns", c, "I") for c in ("src", "dst", "template")
]  # fmt: skip
_DTYPES = {"I": "<u4", "Q": "<u8"}


def encode_packed(core: dict[str, Any]) -> tuple[str, list[bytes]]:
    """A packed scenario (``Scenario.to_core(packed=True)``) as JSON text with
    its long integer columns as little-endian bytes: formatting and parsing a
    few million numbers as text costs a large scenario a third of a second."""
    out = dict(core)
    blobs: list[bytes] = []
    for table, col, code in _BLOB_COLUMNS:
        if table not in out:
            continue
        values = out[table][col]
        a = array(code)
        if a.itemsize != int(_DTYPES[code][-1]):  # pragma: no cover - a platform whose C ints differ
            continue
        try:
            a.fromlist(values)
        except (OverflowError, TypeError):
            continue  # left as JSON: the core reports the bad value
        if sys.byteorder == "big":  # pragma: no cover
            a.byteswap()
        out[table] = {**out[table], col: {"bin": len(blobs), "dtype": _DTYPES[code]}}
        blobs.append(a.tobytes())
    return json.dumps(out), blobs


#: A run whose loop ends within this many seconds does not import pandas
#: beside it (see :class:`PandasMeanwhile`).
PANDAS_AFTER_S = 0.2


class PandasMeanwhile:
    """The hook `tcplab.run` gives the core (`at_loop`): called once the
    simulation is built, just before the loop, which runs with the GIL
    released. A Result's tables are DataFrames, and pandas' import (0.35-0.5
    s on a slow machine) can run on another core beside the loop instead of
    after it. Not during set-up, whose helper thread maps the memory of a
    large simulation on that core.

    The thread first waits :data:`PANDAS_AFTER_S` for the run to end: a
    short run imports nothing early, so a script that reads no table does
    not pay for pandas. When the core returns, the caller calls
    :meth:`finish`, which ends the wait and joins the thread, so no thread
    outlives `tcplab.run`: a process forked afterwards (multiprocessing's
    default on Linux) cannot inherit an import half done by a thread it does
    not have. A failed import is left for the caller's own import to
    report."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self) -> None:
        if "pandas" in sys.modules:
            return
        self.thread = threading.Thread(target=self._import, name="tcplab-import-pandas")
        self.thread.start()

    def finish(self) -> None:
        """End the wait, and wait for an import under way to finish."""
        self.done.set()
        if self.thread is not None:
            self.thread.join()

    def _import(self) -> None:
        if self.done.wait(PANDAS_AFTER_S):
            return  # the run ended first: pandas is imported when a table is read
        import importlib

        try:
            importlib.import_module("pandas")
        except Exception:  # noqa: BLE001 - the main thread's import of it raises the same error
            pass


def run(
    scenario: str | Path | dict[str, Any] | Scenario,
    overrides: dict[str, Any] | None = None,
    seed: int | None = None,
    pcap: str | Path | None = None,
) -> Result:
    """Run one scenario.

    `scenario` is a TOML file path, a scenario dictionary, or a validated
    :class:`Scenario`. `overrides` maps dotted field paths to values
    (``{"tcp.iw": 4, "topology.bottleneck.rate": "2Mbps"}``); `seed`
    replaces ``sim.seed``. `pcap` is the directory (created if need be)
    that packet captures go to: those of ``[trace] pcap``, or when that names
    none, of :func:`default_capture_links`. With ``[trace] pcap`` and no
    `pcap`, they go to ``./pcap``. Raises :class:`tcplab.ScenarioError` for
    a bad scenario, naming each bad field.
    """
    return _run(scenario, overrides, seed, pcap, tables=True)


def _run(
    scenario: str | Path | dict[str, Any] | Scenario,
    overrides: dict[str, Any] | None,
    seed: int | None,
    pcap: str | Path | None,
    tables: bool,
) -> Result:
    """:func:`run`; `tables`: the caller will want the results as DataFrames
    (pandas is imported while the core runs), which `tcplab run`'s summary and
    JSON do not."""
    if pcap is not None and not isinstance(pcap, (str, os.PathLike)):
        raise TypeError(f"pcap is a directory's path (str or pathlib.Path), not {type(pcap).__name__}")
    from .scenario import load  # not at import: a sweep's worker runs the core without the scenario models

    with no_gc():
        sc = load(scenario, overrides, seed)
    pcap_dir = None
    if pcap is not None or sc.trace.pcap:
        if not sc.trace.pcap:
            sc = sc.model_copy(update={"trace": sc.trace.model_copy(update={"pcap": default_capture_links(sc)})})
        files: dict[str, str] = {}  # a-b->c and a->b-c would both write a-b-c.pcap, the second over the first
        for name in dict.fromkeys(sc.trace.pcap):
            other = files.setdefault(name.replace("->", "-"), name)
            if other != name:
                raise ScenarioError([FieldProblem("trace.pcap", f"the captures of {other} and {name} would both be {name.replace('->', '-')}.pcap; "
                                                  "rename a node so that their names differ with '->' written '-'")], str(scenario) if isinstance(scenario, (str, Path)) else None)  # fmt: skip
        pcap_dir = out_directory("pcap", "pcap" if pcap is None else pcap, "the capture directory")
    with no_gc():
        core = sc.to_core(None if pcap_dir is None else str(pcap_dir), packed=True)
        text, blobs = encode_packed(core)
        beside = PandasMeanwhile() if tables else None
        try:
            data = interruptibly(lambda cancel: run_core_columns(text, sc.sim.seed, blobs, reproducer=lambda: json.dumps(core), at_loop=beside,
                                                                cancel=cancel))  # fmt: skip
        except ScenarioError as e:  # found by the core's checks: name the file, as the Python checks do
            if e.source is None and isinstance(scenario, (str, Path)):
                raise ScenarioError(e.problems, str(scenario)) from None
            raise
        finally:
            if beside is not None:
                beside.finish()
        del core, text, blobs
        return Result(scenario=sc, data=data)
