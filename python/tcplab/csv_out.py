"""Writing a table as CSV: pandas' ``to_csv(index=False)`` bytes, faster.

pandas formats every cell through Python objects: 1.5 s for the 400,000
link rows of a 100,000-flow run, and most of `tcplab run --out`'s time on a
long web run's flows. DuckDB's CSV writer reads the DataFrame's columns in
place and formats them in native code, and for the column types result
tables hold it writes the same bytes: numbers alike (a float as its
shortest round-trip form, ``1e-05``, ``1.0``, ``inf``; an empty field for
NaN and for a nullable integer's missing value), strings quoted alike where
they hold a comma, a quote or a newline. The differences are written
around: booleans are spelt ``True``/``False`` by the query, and a table
with a string that the two writers quote differently (empty, or holding
``#`` or a control character) is left to pandas. So is any other column
type, and a table of fewer than :data:`FAST_ROWS` rows, where pandas is
quick and DuckDB's import is not free.

Whether the installed DuckDB and pandas agree is not assumed: the first
large table written in a process is preceded by a probe
(:func:`_writers_agree`), a small table of every handled type and of edge
values written both ways; if the bytes differ, every table goes to pandas.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: Tables of fewer rows are written by pandas.
FAST_ROWS = 20_000

# A string either writer would quote otherwise than the other (found by
# writing every ASCII character and some others alone, first, in the middle
# and last: only '#', '\r' and the empty string differ; every control
# character is left out for margin).
_UNSAFE = r"[#\x00-\x1f\x7f]"


def write_csv(frame: "pd.DataFrame", path: str | Path) -> None:
    """Write `frame` to `path` as ``frame.to_csv(path, index=False)`` would."""
    query = _fast_query(frame) if len(frame) >= FAST_ROWS else None
    if query is None or not _writers_agree() or not _duck_write(frame, query, Path(path)):
        frame.to_csv(path, index=False)


def _fast_query(frame: "pd.DataFrame") -> str | None:
    """The SELECT over `frame` (registered as ``t``) that DuckDB writes as
    pandas would, or None where a column's type is not one handled."""
    import pandas as pd

    if len({str(n).lower() for n in frame.columns}) < len(frame.columns):
        return None  # SQL's names ignore case: 'a' and 'A' would be one column
    cols = []
    for name, dtype in frame.dtypes.items():
        if not isinstance(name, str) or not name.isidentifier():
            return None
        q = f'"{name}"'
        if dtype.kind == "b":  # NumPy's bool, and pandas' nullable boolean (a missing value an empty field)
            cols.append(f"CASE WHEN {q} THEN 'True' WHEN NOT {q} THEN 'False' END AS {q}")
        elif dtype.kind in "if" and dtype.itemsize == 8:  # int64, float64, and pandas' nullable Int64
            cols.append(q)
        elif isinstance(dtype, pd.StringDtype) or (dtype == object and _all_strings(frame[name])):
            cols.append(q)
        else:
            return None
    return "SELECT " + ", ".join(cols) + " FROM t"


def _all_strings(col: "pd.Series") -> bool:
    import pandas as pd

    return pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty")


def _duck_write(frame: "pd.DataFrame", query: str, path: Path) -> bool:
    """Write `frame` by `query` with DuckDB; False, writing nothing, where a
    string is one the two writers quote differently."""
    import duckdb

    # One thread: with more, DuckDB holds the rows it has formatted until
    # they can go out in order (600 MB more at the peak for 4.6 M rows of 26
    # columns, which one thread writes in 5.9 s against 4.1 s, and pandas in 27 s).
    con = duckdb.connect(config={"threads": 1})
    try:
        con.register("t", frame)
        strings = [n for n, d in frame.dtypes.items() if d.kind not in "ifb"]
        if strings:
            unsafe = " OR ".join(f"\"{n}\" = '' OR regexp_matches(\"{n}\", '{_UNSAFE}')" for n in strings)
            if con.execute(f"SELECT count(*) FROM t WHERE {unsafe}").fetchone()[0]:
                return False
        quoted = str(path).replace("'", "''")
        try:
            con.execute(f"COPY ({query}) TO '{quoted}' (FORMAT CSV, HEADER, DELIMITER ',')")
        except duckdb.IOException as e:
            raise as_os_error(e, path) from e
        return True
    finally:
        con.close()


def as_os_error(e: Exception, path: str | Path) -> OSError:
    """DuckDB's error writing `path` (a full disk, a directory in the way) as
    the OSError pandas or `open` would raise, with the errno DuckDB's message
    gives (EIO without one), so that callers handle one kind."""
    found = re.search(r'"errno":\s*"?(\d+)', str(e))
    code = int(found.group(1)) if found else errno.EIO
    return OSError(code, os.strerror(code), str(path))


@functools.cache
def _writers_agree() -> bool:
    """Whether DuckDB writes the probe table as pandas does (once a process)."""
    import numpy as np
    import pandas as pd

    floats = [0.0, -0.0, 0.1, 1 / 3, 1e-05, 0.0001234, 2.5, 100.0, 1e15, 1e16, 1.5e16, 1e22, 1.5e300, 5e-324,
              9007199254740993.0, float("inf"), float("-inf"), float("nan")]  # fmt: skip
    n = len(floats)
    probe = pd.DataFrame({
        "f": floats,
        "i": np.arange(n, dtype=np.int64) * -123456789012345,
        "n": pd.array([7, None] * (n // 2), dtype="Int64"),
        "b": np.arange(n) % 3 == 0,
        "m": pd.array([True, None, False] * (n // 3), dtype="boolean"),
        "s": pd.array(["a", "b,c", 'q"t', "n:l", None, "é", " sp", "x y", "True", "1.0", "-", "ü,", "'", ";", "€",
                       "z", "w", "v"], dtype=object),  # fmt: skip
    })
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "probe.csv"
        query = _fast_query(probe)
        assert query is not None
        try:
            written = _duck_write(probe, query, p)
        except Exception:  # noqa: BLE001 - any failure means: use pandas
            return False
        return written and p.read_bytes() == probe.to_csv(index=False).encode()
