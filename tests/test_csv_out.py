"""`csv_out.write_csv` writes what pandas' `to_csv(index=False)` writes, byte
for byte, whichever writer it picks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcplab
from tcplab import csv_out


@pytest.fixture
def always_fast(monkeypatch):
    """Every table, however short, offered to DuckDB."""
    monkeypatch.setattr(csv_out, "FAST_ROWS", 0)


def test_the_installed_duckdb_writes_the_probe_as_pandas_does():
    # Were it False, every table would still be written right, by pandas, but
    # at pandas' speed: this says the fast path is the one in use here.
    assert csv_out._writers_agree() is True


def test_a_table_of_the_handled_types_goes_to_duckdb_and_comes_out_as_pandas_writes_it(tmp_path, always_fast, monkeypatch):
    df = pd.DataFrame({
        "id": np.arange(6, dtype=np.int64),
        "x": [0.0, 1e-05, 1.5e16, math.nan, math.inf, 1 / 3],
        "n": pd.array([1, None, 3, None, 5, 6], dtype="Int64"),
        "ok": [True, False, True, True, False, False],
        "app": ["a", "b,c", 'say "hi"', "é", "line\nbreak", None],
    })
    assert csv_out._fast_query(df) is not None

    def no_pandas(*_a, **_k):
        raise AssertionError("written by pandas")

    monkeypatch.setattr(pd.DataFrame, "to_csv", no_pandas)
    with pytest.raises(AssertionError, match="by pandas"):  # a newline is a control character: left to pandas
        csv_out.write_csv(df, tmp_path / "a.csv")
    df.loc[4, "app"] = "line break"
    csv_out.write_csv(df, tmp_path / "a.csv")
    monkeypatch.undo()
    assert (tmp_path / "a.csv").read_bytes() == df.to_csv(index=False).encode()


@pytest.mark.parametrize("unsafe", ["", "#1", "a\rb", "tab\there"])
def test_a_string_the_writers_quote_otherwise_leaves_the_table_to_pandas(tmp_path, always_fast, unsafe):
    df = pd.DataFrame({"s": ["plain", unsafe], "v": [1, 2]})
    assert csv_out._duck_write(df, csv_out._fast_query(df), tmp_path / "d.csv") is False
    assert not (tmp_path / "d.csv").exists()
    csv_out.write_csv(df, tmp_path / "p.csv")
    assert (tmp_path / "p.csv").read_bytes() == df.to_csv(index=False).encode()


def test_other_column_types_are_not_offered_to_duckdb():
    assert csv_out._fast_query(pd.DataFrame({"c": pd.Categorical(["a", "b"])})) is None
    assert csv_out._fast_query(pd.DataFrame({"f": np.array([1.5], dtype=np.float32)})) is None
    assert csv_out._fast_query(pd.DataFrame({"o": [1, "a"]})) is None
    assert csv_out._fast_query(pd.DataFrame({"two words": [1]})) is None
    assert csv_out._fast_query(pd.DataFrame({"i": [1], "I": [2]})) is None  # one column to SQL


FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1e-05, 1e16, 1.5e300, 5e-324, 0.1])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], derandomize=True)
@given(rows=st.integers(0, 12), data=st.data())
def test_any_table_of_result_column_types_is_written_as_pandas_writes_it(tmp_path, always_fast, rows, data):
    col = lambda s: data.draw(st.lists(s, min_size=rows, max_size=rows))  # noqa: E731
    # Any text (which mostly goes to pandas), or text DuckDB is given (no '#', no control character).
    cats = ["Cs"] if data.draw(st.booleans()) else ["Cs", "Cc"]
    text = st.text(st.characters(codec="utf-8", exclude_categories=cats, exclude_characters="#" if "Cc" in cats else ""), max_size=6)
    if "Cc" in cats:  # beside the safe text, the strings the two writers quote otherwise, often enough to be drawn
        text = text | st.sampled_from(["", "#", "a#b", "\r", "x\ry", "\r\n"])
    df = pd.DataFrame({
        "i": np.array(col(st.integers(-(2**63), 2**63 - 1)), dtype=np.int64),
        "f": np.array(col(FLOATS), dtype=np.float64),
        "n": pd.array(col(st.none() | st.integers(-(2**40), 2**40)), dtype="Int64"),
        "b": np.array(col(st.booleans()), dtype=bool),
        "m": pd.array(col(st.none() | st.booleans()), dtype="boolean"),
        "s": pd.array(col(st.none() | text), dtype=object),
        "t": pd.Series(col(st.none() | text), dtype="str"),  # pandas 3's string columns, as result tables have them
    })
    path = tmp_path / "t.csv"
    csv_out.write_csv(df, path)
    assert path.read_bytes() == df.to_csv(index=False).encode()


def test_a_runs_tables_are_saved_as_pandas_writes_them(tmp_path, always_fast):
    # Web clients over an ATM port, every connection traced, the T3 logged: no table empty.
    trace = {"trace.web100": True, "trace.on_change": True, "trace.links": ["r0->r1"], "sim.duration": "4s"}
    res = tcplab.run("examples/atm-ubr.toml", overrides=trace)
    files = res.save(tmp_path / "out")
    tables = [p for p in files if p.suffix == ".csv"]
    assert [p.stem for p in tables] == ["flows", "links", "pages", "traces", "web100", "ports", "packets"]
    for p in tables:
        assert len(getattr(res, p.stem)) > 0, p.name
        assert p.read_bytes() == getattr(res, p.stem).to_csv(index=False).encode(), p.name


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("fast_rows", [0, 10**9])  # DuckDB writes, pandas writes
def test_a_file_that_cannot_be_written_raises_oserror_naming_it_and_the_cli_says_so(tmp_path, monkeypatch, fast_rows):
    from click.testing import CliRunner

    from tcplab.cli import main

    monkeypatch.setattr(csv_out, "FAST_ROWS", fast_rows)
    out = tmp_path / "out"
    out.mkdir()
    (out / "flows.csv").symlink_to("/dev/full")
    if fast_rows == 0:
        with pytest.raises(OSError) as e:
            csv_out.write_csv(pd.DataFrame({"v": [1, 2]}), out / "flows.csv")
        assert (e.value.errno, e.value.strerror, e.value.filename) == (28, "No space left on device", str(out / "flows.csv"))
    r = CliRunner().invoke(main, ["run", "examples/dumbbell-bulk.toml", "--out", str(out)])
    assert r.exit_code == 1
    assert r.output.endswith(f"error: --out {str(out)!r}: cannot write {out / 'flows.csv'}: No space left on device\n")
