"""Golden results: every output byte of a fixed set of runs, pinned.

Each case of tests/golden_cases.py is run and its results (flows, links,
pages, traces, packets and the engine counters, the wall-clock time aside)
are compared with tests/golden/NAME.json, row by row. The store of
`tcplab reproduce rfc2415 --quick` is pinned by a digest of each table.

A refactor keeps this green. A change meant to alter results re-blesses it
in a commit of its own that says why:

    TCPLAB_BLESS=1 python -m pytest tests/test_golden.py

rewrites the files; `git diff tests/golden` then shows what moved.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tcplab.api import without_wall_clock
import tcplab

from .golden_cases import cases

GOLDEN = Path(__file__).resolve().parent / "golden"
BLESS = os.environ.get("TCPLAB_BLESS") == "1"
TABLES = ("flows", "links", "pages", "traces", "packets")


def canonical(res: tcplab.Result) -> str:
    """The run's results as text: one JSON line per row, keys sorted, wall clock left out."""
    raw = res.raw
    engine = without_wall_clock(raw["engine"])
    lines = ["engine " + json.dumps(engine, sort_keys=True)]
    # The web100 table only where a case asks for it (it came later).
    for t in TABLES + (("web100",) if raw["web100"] else ()):
        lines.append(f"{t} {len(raw[t])}")
        lines += [json.dumps(row, sort_keys=True) for row in raw[t]]
    return "\n".join(lines) + "\n"


def _compare(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if BLESS:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"no golden results for {name}: bless with TCPLAB_BLESS=1"
    want = path.read_text().splitlines()
    got = text.splitlines()
    if want == got:
        return
    diffs = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if w != g]
    first = diffs[0] if diffs else (min(len(want), len(got)), "(end)", "(end)")
    pytest.fail(
        f"{name}: results changed ({len(diffs)} differing lines, {len(want)} golden against {len(got)} now); "
        f"first at line {first[0] + 1}:\n  golden: {first[1][:400]}\n  now:    {first[2][:400]}"
    )


CASES = cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_are_unchanged(name: str) -> None:
    res = tcplab.run(CASES[name])
    _compare(name, canonical(res))


def store_digest(path: str) -> str:
    """A digest of every table of a results store, rows sorted, wall-clock columns left out."""
    import duckdb

    con = duckdb.connect(path, read_only=True)
    try:
        lines = []
        for (t,) in con.execute("SELECT table_name FROM information_schema.tables ORDER BY table_name").fetchall():
            cols = [c for (c,) in con.execute(f"SELECT column_name FROM information_schema.columns WHERE table_name = '{t}' ORDER BY ordinal_position").fetchall()]
            keep = [c for c in cols if c not in ("wall_s", "wall_seconds")]
            rows = con.execute(f"SELECT {', '.join(keep)} FROM {t} ORDER BY ALL").fetchall()
            h = hashlib.sha256()
            for r in rows:
                h.update(repr(r).encode())
                h.update(b"\n")
            lines.append(f"{t} columns={','.join(keep)} rows={len(rows)} sha256={h.hexdigest()}")
        return "\n".join(lines) + "\n"
    finally:
        con.close()


def test_rfc2415_quick_store_is_unchanged(tmp_path: Path) -> None:
    from tcplab.runner import run_sweep
    from tcplab.studies import rfc2415
    from tcplab.sweep import sweep_from_configs

    store = str(tmp_path / "rfc2415.duckdb")
    sw = sweep_from_configs("rfc2415-quick", store, rfc2415.configurations(rfc2415.QUICK["duration"]), rfc2415.QUICK["replications"], seed=1)
    rep = run_sweep(sw, jobs=2, progress=False)
    assert rep.failed == 0
    _compare("rfc2415-quick-store", store_digest(store))
