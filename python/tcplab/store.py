"""The results store: one DuckDB file.

Tables:
- ``runs``: run_id, sweep, config_id, rep, seed, factors (JSON), status,
  error, wall_s, events, sim_seconds, packets_created (``sweep`` and the
  labels after it are those of the sweep that stored the run first).
- ``sweep_runs``: sweep, run_id, config_id, rep, seed, factors (JSON): the
  runs each sweep is made of, as it was last defined. Running a sweep
  replaces its rows, so a sweep file edited and run again counts only its
  new runs (its earlier ones stay in ``runs``), and a run that two sweeps
  share carries each sweep's own factor labels here.
- ``factors``: run_id, name, value (JSON text), one row per factor of a run.
- ``flows``, ``links``, ``pages``, ``ports``: the run's result tables, with
  run_id (a table no run has rows for is not made).
- ``metrics``: run_id, metric, value: per-run summaries (see :func:`run_metrics`).
- ``traces``, ``packets``, ``web100``: when the sweep asks for them.

Finished runs are written whole, in one transaction with whatever else has
finished since the last write (the runner writes once 64 runs, or 0.05 s of
their simulations, are waiting), so a sweep killed at any moment loses at
most the runs in flight (running, or finished and waiting for that write),
and rerunning the sweep skips stored runs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from .errors import FieldProblem, TcplabError, UsageError, field_path
from .metrics import METRICS, jain_index, run_metrics  # noqa: F401 - re-exported: the store's metrics

#: A run's result tables, stored for every run; and its instrumentation,
#: stored when the sweep asks for traces (`Result`'s tables of those names).
RESULT_TABLES = ("flows", "links", "pages", "ports")
TRACE_TABLES = ("traces", "packets", "web100")
#: The columns of the ``runs`` table, in order, with their Arrow types.
_RUN_COLUMNS = {"run_id": "string", "sweep": "string", "config_id": "string", "rep": "int32", "seed": "uint64", "factors": "string",
                "status": "string", "error": "string", "wall_s": "float64", "events": "uint64", "sim_seconds": "float64",
                "packets_created": "uint64"}  # fmt: skip

#: The tables every store has had from its first write (`SCHEMA`; stores
#: written before `sweep_runs` are read without it).
STORE_TABLES = ("runs", "factors", "metrics")

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, sweep VARCHAR, config_id VARCHAR, rep INTEGER, seed UBIGINT,
    factors VARCHAR, status VARCHAR, error VARCHAR, wall_s DOUBLE, events UBIGINT,
    sim_seconds DOUBLE, packets_created UBIGINT
);
CREATE TABLE IF NOT EXISTS factors (run_id VARCHAR, name VARCHAR, value VARCHAR);
CREATE TABLE IF NOT EXISTS metrics (run_id VARCHAR, metric VARCHAR, value DOUBLE);
CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep VARCHAR, run_id VARCHAR, config_id VARCHAR, rep INTEGER, seed UBIGINT, factors VARCHAR
);
"""

class StoreError(TcplabError):
    """The results store cannot be opened or read."""


def _with_run_ids(tables: list[Any], runs: list[str]) -> Any:
    """One pyarrow Table of the runs' tables, with the run_id of each row
    first: a column of null type in one run (no value in any row) takes its
    type from the others."""
    import pyarrow as pa

    data = pa.concat_tables(tables, promote_options="default") if len(tables) > 1 else tables[0]
    ids = np.repeat(np.array(runs, dtype=object), [t.num_rows for t in tables])
    return data.add_column(0, "run_id", pa.array(ids, type=pa.string()))


#: How long opening a store waits for another process's lock.
LOCK_WAIT_S = {"read": 30.0, "write": 300.0}
#: A wish to open older than this is taken to be from a process that died.
WISH_MAX_AGE_S = 60.0
#: How long a store that let go for a waiting process waits, before opening
#: it again, for that process to have opened it; a waiter renews its wish at
#: each try (every 50 ms at most), so a wish older than WISH_FRESH_S is not
#: waited for (its process may have died).
YIELD_MAX_S = 5.0
WISH_FRESH_S = 2.0


class Store:
    """A results store.

    DuckDB lets one process at a time open a file for writing, and none read
    it meanwhile. So a store is shared this way: a process that finds the
    file locked writes its wish beside it (``STORE.waiting``) and retries; a
    sweep, after each batch it writes, closes the file if someone waits
    (`release_if_wanted`, a file check when no one does) and opens it again
    at its next write. So `tcplab analyze` can read a store while a sweep
    fills it, and two sweeps can write into one store at once."""

    def __init__(self, path: str | Path, read_only: bool = False):
        self.path = str(path)
        self.read_only = read_only
        if not self.path.strip():  # DuckDB takes '' for a database in memory: the runs would be lost
            raise StoreError(f"{self.path!r} is no results store's path: expected a file path, such as results.duckdb")
        if read_only and not Path(path).exists():
            raise StoreError(f"no results store at {path}")
        if not read_only:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot open {path}: cannot create its directory: {e.strerror or e}") from None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._yielded = False  # released for a process that waits to open the file
        self._tables: set[str] = set()
        self._shaped: set[str] = set()  # tables given this version's columns
        con = self.con  # opened now, so that a file that is no store fails here
        try:
            self._check_is_store()
        except StoreError:
            self.close()  # a connection left open would keep this process from opening the file otherwise
            raise
        if not read_only:
            con.execute(SCHEMA)
            self._tables = set(self.tables())

    def _check_is_store(self) -> None:
        """Refuse a DuckDB file that a sweep did not make (its queries would
        fail on the first missing table or column), and, to read, an empty one."""
        have = self._tables
        if not have:
            if self.read_only:
                raise StoreError(f"no results in {self.path}: an empty DuckDB file (a sweep writes a store: tcplab sweep FILE --store {self.path})")
            return
        missing = [t for t in STORE_TABLES if t not in have]
        if not missing:
            cols = {r[0] for r in self.con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'runs'").fetchall()}
            missing = [f"runs.{c}" for c in ("run_id", "sweep", "factors", "status") if c not in cols]
        if missing:
            shown = ", ".join(sorted(have)[:8]) + (", ..." if len(have) > 8 else "")
            raise StoreError(f"{self.path} is not a tcplab results store: it has no {', '.join(missing[:4])} (its tables: {shown})")

    def _not_a_store(self) -> str:
        """What a file that DuckDB cannot open is, for the error: a sweep or
        scenario file given where its store was meant, or some other file."""
        what = f"{self.path} is not a results store (the DuckDB file that tcplab sweep and tcplab reproduce write)"
        if Path(self.path).suffix.lower() == ".toml":
            return (f"{what}: it is a TOML file; a sweep file's runs are in the store its [sweep] store names "
                    "(results.duckdb unless it says otherwise), a study's in OUT/STUDY.duckdb")
        return f"{what}: DuckDB cannot read it"

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = self._connect()
            self._tables = set(self.tables())  # another process may have added some
        return self._con

    def _connect(self) -> duckdb.DuckDBPyConnection:
        if self._yielded:
            # Let the waiting process in first: it removes its wish once it
            # has opened the file. Otherwise a sweep with a batch ready at
            # once would open the file again before the waiter, slowed by a
            # busy machine, tried again, and could keep it out for good.
            self._yielded = False
            give_up = time.monotonic() + YIELD_MAX_S
            while self._wished(WISH_FRESH_S) and time.monotonic() < give_up:
                time.sleep(0.005)
        wait = LOCK_WAIT_S["read" if self.read_only else "write"]
        deadline = time.monotonic() + wait
        pause = 0.005
        wished = False
        try:
            while True:
                try:
                    con = duckdb.connect(self.path, read_only=self.read_only)
                    break
                except duckdb.IOException as e:
                    if "not a valid duckdb database file" in str(e).lower():
                        raise StoreError(self._not_a_store()) from None
                    if "lock" not in str(e).lower():
                        raise StoreError(f"cannot open {self.path}: {e}") from None
                    if time.monotonic() >= deadline:
                        raise StoreError(f"cannot open {self.path}: another process held it for {wait:.0f} s: {e}") from None
                    try:
                        Path(self.wish_path).touch()
                        wished = True
                    except OSError:
                        pass  # a read-only directory: wait without asking
                    time.sleep(pause)
                    pause = min(2 * pause, 0.05)
                except duckdb.Error as e:
                    raise StoreError(f"cannot open {self.path}: {e}") from None
        finally:
            if wished:
                Path(self.wish_path).unlink(missing_ok=True)
        if not self.read_only:
            # A writer's statements are small (a batch of runs at a time):
            # one DuckDB thread does them faster, and leaves the cores to
            # the sweep's workers.
            con.execute("SET threads TO 1")
        return con

    @property
    def wish_path(self) -> str:
        return self.path + ".waiting"

    def release(self) -> None:
        """Close the file until the next use, for other processes to open."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def _wished(self, within: float = WISH_MAX_AGE_S) -> bool:
        """Whether another process waits to open the file (its wish renewed within `within` seconds)."""
        try:
            return time.time() - Path(self.wish_path).stat().st_mtime < within
        except OSError:
            return False

    def release_if_wanted(self) -> None:
        """Close the file if another process waits to open it; the next use
        opens it again once that process has had it."""
        if self._con is not None and self._wished():
            self.release()
            self._yielded = True

    def close(self) -> None:
        self.release()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def done_ids(self) -> set[str]:
        return {r[0] for r in self.con.execute("SELECT run_id FROM runs WHERE status = 'ok'").fetchall()}

    def tables(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables ORDER BY table_name").fetchall()]

    def _insert_arrow(self, table: str, data: Any) -> None:
        """Insert a pyarrow Table (DuckDB reads Arrow natively), creating
        `table` from it the first time."""
        self.con.register("_df", data)
        try:
            if table not in self._tables:
                self.con.execute(f"CREATE TABLE {table} AS SELECT * FROM _df")
                self._tables.add(table)
            else:
                self._add_new_columns(table, "_df")
                self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _df")
        finally:
            self.con.unregister("_df")

    def _add_new_columns(self, table: str, source: str) -> None:
        """Give `table` the columns of `source` it lacks (a store written by
        an earlier tcplab: its rows have NULL there), so that BY NAME inserts
        of a newer table shape go in; and give a column of DuckDB's NULL type
        (an earlier tcplab took a table's types from the first runs it wrote,
        and a column none of them had a value in got that type) the type of
        `source`'s. Checked once per table and store."""
        if table in self._shaped:
            return
        self._shaped.add(table)
        have = {r[0]: r[1] for r in self.con.execute(f"DESCRIBE {table}").fetchall()}
        for name, kind in self.con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {source})").fetchall():
            if name not in have:
                self.con.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {kind}')
            elif have[name] == '"NULL"' and kind != '"NULL"':
                self.con.execute(f'ALTER TABLE {table} ALTER COLUMN "{name}" SET DATA TYPE {kind}')

    def _insert_columns(self, table: str, columns: dict[str, list[Any]], types: dict[str, str]) -> None:
        """Insert rows given as columns of the given Arrow types, in one
        statement through Arrow (many rows of parameters cost DuckDB far more)."""
        import pyarrow as pa

        self.con.register("_cols", pa.table({c: pa.array(v, type=getattr(pa, types[c])()) for c, v in columns.items()}))
        try:
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _cols")
        finally:
            self.con.unregister("_cols")

    def write_runs(self, sweep: str, done: list[tuple[Any, dict[str, Any] | None, str | None]], traces: bool) -> None:
        """Write finished runs, each (run, payload, error), all of them or
        none, in one transaction: a run is stored whole or not at all. A
        payload is what :func:`tcplab.sweep.execute` returns."""
        if not done:
            return
        self.con.execute("BEGIN TRANSACTION")
        try:
            # Only a run already stored (a failed one, run again) has rows to
            # replace; one query asks that for the whole batch.
            ids = [run.run_id for run, _, _ in done]
            stored = [r[0] for r in self.con.execute("SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()]
            for run_id in stored:
                self.con.execute("DELETE FROM runs WHERE run_id = ?", [run_id])
                for t in ("factors", "metrics", *RESULT_TABLES, *TRACE_TABLES):
                    if t in self._tables:
                        self.con.execute(f"DELETE FROM {t} WHERE run_id = ?", [run_id])
            # Each table's per-run tables, and the run each is of: the run_id
            # column is added once per table and batch, not once per run.
            frames: dict[str, tuple[list[Any], list[str]]] = {}
            metrics: dict[str, list[Any]] = {"run_id": [], "metric": [], "value": []}
            factors: dict[str, list[Any]] = {"run_id": [], "name": [], "value": []}
            runs = []
            for run, payload, error in done:
                head = (run.run_id, sweep, run.config_id, run.rep, run.seed, json.dumps(run.factors, sort_keys=True))
                if payload is not None:
                    eng = payload["engine"]
                    runs.append(head + ("ok", None, payload["wall_s"], eng["events"], eng["sim_seconds"], eng["packets_created"]))
                    for table in RESULT_TABLES + (TRACE_TABLES if traces else ()):
                        df = payload["tables"][table]
                        if len(df):
                            dfs, of = frames.setdefault(table, ([], []))
                            dfs.append(df)
                            of.append(run.run_id)
                    for k, v in payload["metrics"].items():
                        metrics["run_id"].append(run.run_id)
                        metrics["metric"].append(k)
                        metrics["value"].append(float(v))
                else:
                    runs.append(head + ("error", error, None, None, None, None))
                for k, v in run.factors.items():
                    factors["run_id"].append(run.run_id)
                    factors["name"].append(k)
                    factors["value"].append(json.dumps(v))
            for table, (dfs, of) in frames.items():
                self._insert_arrow(table, _with_run_ids(dfs, of))
            if metrics["run_id"]:
                self._insert_columns("metrics", metrics, {"run_id": "string", "metric": "string", "value": "float64"})
            if factors["run_id"]:
                self._insert_columns("factors", factors, {"run_id": "string", "name": "string", "value": "string"})
            self._insert_columns("runs", dict(zip(_RUN_COLUMNS, zip(*runs))), _RUN_COLUMNS)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def set_sweep_runs(self, sweep: str, runs: list[Any]) -> None:
        """Record `runs` (each with run_id, config_id, rep, seed, factors) as
        the whole of sweep `sweep`, replacing what it was made of before."""
        cols: dict[str, list[Any]] = {"sweep": [], "run_id": [], "config_id": [], "rep": [], "seed": [], "factors": []}
        for r in runs:
            cols["sweep"].append(sweep)
            cols["run_id"].append(r.run_id)
            cols["config_id"].append(r.config_id)
            cols["rep"].append(r.rep)
            cols["seed"].append(r.seed)
            cols["factors"].append(json.dumps(r.factors, sort_keys=True))
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute("DELETE FROM sweep_runs WHERE sweep = ?", [sweep])
            if runs:
                types = {"sweep": "string", "run_id": "string", "config_id": "string", "rep": "int32", "seed": "uint64", "factors": "string"}
                self._insert_columns("sweep_runs", cols, types)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def put_metrics(self, rows: dict[str, list[Any]]) -> None:
        """Store more per-run metrics (columns run_id, metric, value): a
        study's own, computed from its runs' tables after the sweep. Each
        run's earlier values of these metrics are replaced, in one
        transaction; every run given should have every metric given."""
        if not rows["run_id"]:
            return
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute("DELETE FROM metrics WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND metric IN (SELECT unnest(?::VARCHAR[]))",
                             [sorted(set(rows["run_id"])), sorted(set(rows["metric"]))])  # fmt: skip
            self._insert_columns("metrics", rows, {"run_id": "string", "metric": "string", "value": "float64"})
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ reading

    def _members(self) -> str:
        """SQL for every sweep's runs (sweep, run_id, config_id, rep, seed,
        factors): `sweep_runs`, and for a sweep stored by a tcplab that did
        not record it there, its runs by their ``sweep`` label."""
        legacy = "SELECT sweep, run_id, config_id, rep, seed, factors FROM runs"
        self.con  # opens a released store, which refreshes self._tables
        if "sweep_runs" not in self._tables:
            return legacy
        return f"SELECT sweep, run_id, config_id, rep, seed, factors FROM sweep_runs UNION ALL {legacy} WHERE sweep NOT IN (SELECT sweep FROM sweep_runs)"

    def sweeps(self) -> dict[str, dict[str, int]]:
        """Each sweep of the store with its counts of runs: ``runs`` (what the
        sweep is made of), ``ok`` (stored and successful) and ``failed``; the
        rest are not run yet."""
        rows = self.con.execute(
            "SELECT s.sweep, count(*), count(*) FILTER (WHERE r.status = 'ok'), count(*) FILTER (WHERE r.status = 'error') "
            f"FROM ({self._members()}) s LEFT JOIN runs r USING (run_id) GROUP BY s.sweep ORDER BY s.sweep"
        ).fetchall()
        return {name: {"runs": n, "ok": ok, "failed": failed} for name, n, ok, failed in rows}

    def pick_sweep(self, sweep: str | None) -> str:
        """The sweep named `sweep`, or the store's only sweep when None."""
        have = self.sweeps()
        listing = ", ".join(f"{k} ({v['runs']} runs)" for k, v in have.items())
        if sweep is None:
            if len(have) == 1:
                return next(iter(have))
            if not have:
                raise StoreError(f"{self.path}: the store has no runs")
            raise StoreError(f"{self.path} holds {len(have)} sweeps: {listing}; choose one with --sweep")
        if sweep not in have:
            raise StoreError(f"--sweep {sweep!r}: no such sweep in {self.path}; its sweeps: {listing or '(none)'}")
        return sweep

    def metric_table(self, metric: str, sweep: str | None = None, option: str = "--metric") -> pd.DataFrame:
        """One row per successful run of sweep `sweep` (the store's only
        sweep when None; see :meth:`pick_sweep`), as the sweep was last
        defined: run_id, rep, seed, every factor (short and full names),
        and the metric's value. `option` names the metric in error messages
        (the command-line option that gave it)."""
        known = {r[0] for r in self.con.execute("SELECT DISTINCT metric FROM metrics").fetchall()}
        if metric not in known:
            study = metric.split(".", 1)[0] if "." in metric else ""
            hint = ""
            if study and not any(k.startswith(f"{study}.") for k in known) and any(w.startswith(f"{study}-") for w in self.sweeps()):
                # A study's own metrics are kept when it is analyzed (since
                # stop 71): a study's store from before has none.
                hint = (f"; {study}'s own metrics are stored when `tcplab reproduce {study}` analyzes its runs: run it again with "
                        "--out set to this store's directory (it reuses the stored runs)")
            raise StoreError(f"{option} {metric!r}: unknown metric; allowed: {', '.join(sorted(known)) or '(the store has no runs)'}{hint}")
        name = self.pick_sweep(sweep)
        runs = self.con.execute(
            f"SELECT s.run_id, s.rep, s.seed, s.factors, m.value FROM ({self._members()}) s JOIN runs r USING (run_id) JOIN metrics m USING (run_id) "
            "WHERE s.sweep = ? AND r.status = 'ok' AND m.metric = ? ORDER BY s.run_id",
            [name, metric],
        ).df()
        if len(runs) and runs.value.isna().all():
            what = f" ({METRICS[metric]})" if metric in METRICS else ""
            raise StoreError(f"{option} {metric!r}{what}: no run of sweep {name} has a value")
        facs = pd.DataFrame([{k: _label(v) for k, v in json.loads(f).items()} for f in runs.factors], index=runs.index)
        declared = self._declared_levels(name)
        for col in facs.columns:
            if not all_numbers(facs[col]):
                # Levels that are not all numbers keep the order the sweep
                # lists them in (a sweep file's order), not the text's.
                seen = dict.fromkeys(declared.get(col, []))
                seen.update(dict.fromkeys(sorted(set(facs[col]) - seen.keys(), key=str)))
                facs[col] = pd.Categorical(facs[col], categories=list(seen), ordered=True)
        out = pd.concat([runs.drop(columns=["factors"]), facs], axis=1)
        return out.rename(columns={"value": metric})

    def _declared_levels(self, sweep: str) -> dict[str, list[Any]]:
        """Each factor's levels in the order sweep `sweep` lists its runs
        (the order of its configurations: a factorial design's levels as its
        file lists them, a points design's points in turn); empty for a sweep
        stored without `sweep_runs`."""
        if "sweep_runs" not in self._tables:
            return {}
        order: dict[str, dict[Any, None]] = {}
        for (f,) in self.con.execute("SELECT factors FROM sweep_runs WHERE sweep = ? ORDER BY rowid", [sweep]).fetchall():
            for k, v in json.loads(f).items():
                order.setdefault(k, {})[_label(v)] = None
        return {k: list(v) for k, v in order.items()}

    def export(self, out_dir: str | Path, fmt: str, sweep: str | None = None) -> list[Path]:
        """Write every table as `out_dir`/TABLE.`fmt` ('csv' or 'parquet'),
        making the directory if missing; the files written. With `sweep`,
        only that sweep's runs (a study's store holds its sensitivity
        variants' sweeps too), and its rows of `sweep_runs`."""
        from .api import out_directory
        from .csv_out import as_os_error

        # '' wrote every table into the working directory, 'xlsx' was DuckDB's
        # CatalogException after the directory was made, a file a FileExistsError.
        if fmt not in ("csv", "parquet"):
            raise UsageError([FieldProblem("fmt", "expected 'csv' or 'parquet'", fmt, True)])
        if sweep is not None:
            self.pick_sweep(sweep)  # refused before the directory is made
        d = out_directory("out_dir", out_dir)
        written = []
        for t in self.tables():
            p = d / f"{t}.{fmt}"
            opt = "(FORMAT PARQUET)" if fmt == "parquet" else "(HEADER, DELIMITER ',')"
            quoted = str(p).replace("'", "''")  # a quote in the path is doubled inside SQL's quotes
            try:
                if sweep is None:
                    self.con.execute(f"COPY (SELECT * FROM {t} ORDER BY ALL) TO '{quoted}' {opt}")
                else:
                    only = "sweep = $1" if t == "sweep_runs" else f"run_id IN (SELECT run_id FROM ({self._members()}) WHERE sweep = $1)"
                    self.con.execute(f"COPY (SELECT * FROM {t} WHERE {only} ORDER BY ALL) TO '{quoted}' {opt}", [sweep])
            except duckdb.IOException as e:
                raise as_os_error(e, p) from e
            written.append(p)
        return written


def open_read(path: str | Path) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB connection to the store at `path`, got as
    :class:`Store` gets one (waiting for a sweep writing it to let go)."""
    return Store(path, read_only=True).con


def all_numbers(values: Any) -> bool:
    """Whether every factor level is a number (booleans are not): such
    levels are ordered by value, any others as the sweep lists them."""
    return all(isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in values)


def _label(level: Any) -> Any:
    """A factor level as a table cell: a table or list level (a queue
    written as a TOML table) as its JSON text, so it can be grouped on."""
    return json.dumps(level, sort_keys=True) if isinstance(level, (dict, list)) else level


def select_levels(df: pd.DataFrame, metric: str, where: "list[str] | tuple[str, ...]", option: str = "--where") -> pd.DataFrame:
    """The rows of a metric table of `metric` (:meth:`Store.metric_table`) at
    the factor levels `where` gives, each as FACTOR=LEVEL (a factor by either
    of its names, as :func:`resolve_factor` finds it; a level as the tables
    show it, or a number by value). A factor given twice takes either level."""
    from .analysis import level_order

    columns = [c for c in df.columns if c not in ("run_id", "rep", "seed", metric)]
    chosen: dict[str, list[Any]] = {}
    for item in where:
        name, sep, given = item.partition("=")
        if not sep or not name.strip() or not given.strip():
            raise StoreError(f"{option} {item!r}: expected FACTOR=LEVEL, such as iw=4 or profile=hspa")
        full = resolve_factor(columns, name.strip(), option)
        levels = level_order(df[full])
        match = [v for v in levels if _level_is(v, given.strip())]
        if not match:
            raise StoreError(f"{option} {item!r}: {full} has no level {given.strip()!r}; its levels: {', '.join(map(str, levels))}")
        chosen.setdefault(full, []).extend(match)
    for full, values in chosen.items():
        df = df[df[full].isin(values)]
    if chosen and not len(df):
        combined = " and ".join(f"{k} = {' or '.join(map(str, v))}" for k, v in chosen.items())
        raise StoreError(f"{option}: no run of the sweep has {combined}")
    return df


def _level_is(value: Any, given: str) -> bool:
    """Whether factor level `value` is the level a user wrote as `given`:
    its text as the tables show it (a truth value as TOML writes it too:
    true), or for a number the same number (`iw=4.0`, `rate=1e6`)."""
    if given == str(value) or (isinstance(value, (bool, np.bool_)) and given == str(value).lower()):
        return True
    if all_numbers([value]):
        try:
            return float(given) == float(value)
        except ValueError:
            return False
    return False


def resolve_factor(columns: list[str], name: str, option: str | None = None) -> str:
    """A factor by its full dotted name or by a unique last component ('iw'
    for 'tcp.iw'). `option`, when given, is the option or argument that named
    it, and an error begins with it."""
    if name in columns:
        return name
    same = [c for c in columns if field_path(c) == field_path(name)]  # apps[0].size is apps.0.size
    if len(same) == 1:
        return same[0]
    matches = [c for c in columns if field_path(c).split(".")[-1] == name]
    if len(matches) == 1:
        return matches[0]
    factors = [c for c in columns if c not in ("run_id", "rep", "seed")]
    if option is not None:
        if not matches:
            raise StoreError(f"{option} {name!r}: unknown factor; the store's factors: {', '.join(factors)}")
        raise StoreError(f"{option} {name!r}: ambiguous factor, it could be {' or '.join(matches)}; give its full name")
    if not matches:
        raise StoreError(f"unknown factor {name!r}; the store's factors: {', '.join(factors)}")
    raise StoreError(f"factor {name!r} is ambiguous: {', '.join(matches)}")
