"""What every reproduced study shares: configurations run through the sweep
machinery into a store (so a rerun reuses stored runs), acceptance checks
printed and written, tables written as CSV and Markdown, and the report.

A study module supplies its configurations, its per-run metrics (read back
from the store), its tables against the published ones, its checks, its
figures and the text of its report; :func:`run_configs`, :func:`finish` and
the formatting helpers do the rest.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..csv_out import write_csv

if TYPE_CHECKING:
    import pandas as pd

#: One acceptance check: what is claimed, whether it holds, the figures behind it.
Check = tuple[str, bool, str]


@dataclass
class StudyRun:
    """Where a study's runs went and how long they took."""

    out_dir: Path
    store: str
    sweep: str
    runs: int
    skipped: int
    wall_s: float
    #: The sweep's runs. A run whose scenario another sweep already ran (a
    #: sensitivity variant that changes some configurations only) keeps that
    #: sweep's name in the store, so select a sweep's runs by these ids.
    run_ids: tuple[str, ...] = ()
    #: The scenario fields the user set in every run (`tcplab reproduce --set`).
    overrides: dict[str, Any] = field(default_factory=dict)


def vary(study: str, configs: list[tuple[dict[str, Any], dict[str, Any]]],
         overrides: dict[str, Any] | None, check: bool = True) -> list[tuple[dict[str, Any], dict[str, Any]]]:  # fmt: skip
    """The study's (factor levels, scenario) pairs with the user's scenario
    fields set in each (`tcplab reproduce --set`), each validated unless
    `check` is false (the caller validates them anyway). An override
    of a field the study varies (it differs between two configurations) is
    refused, naming the field and two levels where it differs; so is one
    that makes two of its configurations one run."""
    from collections.abc import Mapping

    if overrides is not None and not isinstance(overrides, Mapping):  # a list was an AttributeError
        raise TypeError(f"overrides map field paths to values, such as {{'tcp.iw': 4}}; got {type(overrides).__name__}")
    if not overrides:
        return configs
    from ..errors import FieldProblem, ScenarioError
    from ..scenario.loading import apply_overrides, validate, value_at

    # A field the study varies, set in every run, runs one value under every
    # level (`reproduce iw10 --set topology.profile=edge` ran EDGE in the rows
    # labelled HSPA and LTE), whether or not two configurations merge.
    varies: list[FieldProblem] = []
    for p, value in overrides.items():
        values = [json.dumps(value_at(doc, p), sort_keys=True) for _, doc in configs]
        for i, v in enumerate(values):
            if v != values[0]:
                a, b = configs[0], configs[i]
                varies.append(FieldProblem(p, f"{study} varies this field ({value_at(a[1], p)!r} in {a[0]}, {value_at(b[1], p)!r} in {b[0]}); "
                                           "setting it in every run would run one value under all of its levels: set a field the study keeps fixed",
                                           value, True))  # fmt: skip
                break
    if varies:
        raise ScenarioError(varies, f"{study} with --set")
    try:
        out = [(levels, apply_overrides(doc, overrides)) for levels, doc in configs]
    except ScenarioError as e:
        raise ScenarioError(e.problems, f"{study} with --set") from None
    seen: dict[str, int] = {}
    for i, (levels, doc) in enumerate(out):
        if check:
            validate(doc, f"{study} with --set")
        key = json.dumps(doc, sort_keys=True)
        j = seen.setdefault(key, i)
        a, b = configs[j][1], configs[i][1]
        if j == i or a == b:  # a new scenario, or one the study itself runs twice
            continue
        varied = [p for p in overrides if value_at(a, p) != value_at(b, p)] or list(overrides)
        raise ScenarioError([FieldProblem(
            p, f"{study} varies this field ({value_at(a, p)!r} in {configs[j][0]}, {value_at(b, p)!r} in {configs[i][0]}); "
            "setting it makes those configurations one run: set a field the study keeps fixed", overrides[p], True) for p in varied],
            f"{study} with --set")  # fmt: skip
    return out



def variation_suffix(overrides: dict[str, Any] | None) -> str:
    """What a variation adds to its sweep's name: `-set-` and a hash of the overrides."""
    if not overrides:
        return ""
    return "-set-" + hashlib.sha256(json.dumps(overrides, sort_keys=True).encode()).hexdigest()[:8]


def variation_dir(study: str, overrides: dict[str, Any] | None) -> str:
    """The default output directory: STUDY-out, or for a variation STUDY-out-
    and its fields (`iw10-out-tcp.cc=cubic`; their hash when they are long or
    a value is a table or list)."""
    if not overrides:
        return f"{study}-out"
    slug = re.sub(r"[^A-Za-z0-9._=,+-]", "_", ",".join(f"{k}={_as_typed(v)}" for k, v in overrides.items()))
    if len(slug) > 60 or any(isinstance(v, (dict, list)) for v in overrides.values()):
        slug = variation_suffix(overrides)[5:]
    return f"{study}-out-{slug}"


def _as_typed(value: Any) -> str:
    """A --set value as a user types it: text bare, anything else as JSON (`true`, `4`)."""
    return value if isinstance(value, str) else json.dumps(value)


def variation_note(overrides: dict[str, Any]) -> list[str]:
    """The report's paragraph on a variation (nothing for the study as published)."""
    if not overrides:
        return []
    sets = " ".join(f"--set {k}={_as_typed(v)}" for k, v in overrides.items())
    return [
        f"**A variation of the study** (`{sets}`). Every run, the sensitivity rows' included, had these scenario fields "
        "set; where the text below describes the study's own setup, these values replace it. The published numbers and "
        "the checks are the study's, so they compare this variation with the published results. A sensitivity row that "
        "varies one of these fields shows the value set here.",
        "",
    ]


def run_configs(study: str, configs: list[tuple[dict[str, Any], dict[str, Any]]], replications: int, quick: bool,
                out: str | Path, jobs: int | None, progress: bool, variant: str = "",
                overrides: dict[str, Any] | None = None) -> StudyRun:  # fmt: skip
    """Run (factor levels, scenario) pairs, `replications` times each, into
    OUT/STUDY.duckdb, as the sweep STUDY-quick or STUDY-full (plus `variant`,
    and for a variation a hash of `overrides`, the fields set in every run)."""
    from ..api import out_directory
    from ..errors import ScenarioError
    from ..runner import run_sweep
    from ..sweep import sweep_from_configs

    out_dir = Path(out)
    store = str(out_dir / f"{study}.duckdb")
    name = f"{study}-{'quick' if quick else 'full'}{variant}{variation_suffix(overrides)}"
    t0 = time.perf_counter()
    try:  # sweep_from_configs validates each scenario
        # A sensitivity variant may leave a configuration as it was: that
        # run is shared, not refused.
        sw = sweep_from_configs(name, store, vary(study, configs, overrides, check=False), replications, seed=sweep_seed(overrides), shared_runs=True)
    except ScenarioError as e:
        raise ScenarioError(e.problems, f"{study} with --set" if overrides else e.source) from None
    out_directory("out", out)
    rep = run_sweep(sw, jobs=jobs, progress=progress)
    if rep.interrupted:
        # Analyzing part of the runs would mislead (or fail): stop here.
        from ..errors import Interrupted

        raise Interrupted(f"{name}: {rep.done} runs done, {rep.skipped} already stored, {rep.failed} failed, of {rep.total}; store {store}")
    if rep.failed:
        from ..errors import RunsFailed

        # Analyzing the others would mislead (or fail on a missing table).
        raise RunsFailed(f"{name}: {rep.failed} of {rep.total} runs failed, so the study is not analyzed; the first: {rep.first_error}; "
                         f"store {store} (the same command runs the failed ones again)")  # fmt: skip
    return StudyRun(out_dir, store, name, rep.total, rep.skipped, time.perf_counter() - t0, tuple(r.run_id for r in sw.runs),
                    dict(overrides or {}))  # fmt: skip


def keep_metrics(study: str, store: str, per: "pd.DataFrame", names: dict[str, str]) -> None:
    """Store a study's own per-run metrics beside each run's generic ones, as
    STUDY.NAME, so that `tcplab analyze` and `tcplab plot` take them
    (`--metric goyal98.efficiency`; the store's `efficiency` is the generic
    goodput over the busiest link's rate, not the study's). `per` has one
    row per run (a run_id column); `names` maps its columns to the names
    stored. A rerun replaces the values it stored before."""
    from ..store import Store

    rows: dict[str, list[Any]] = {"run_id": [], "metric": [], "value": []}
    for col, name in names.items():
        rows["run_id"] += per.run_id.tolist()
        rows["metric"] += [f"{study}.{name}"] * len(per)
        rows["value"] += per[col].astype(float).tolist()
    with Store(store) as st:
        st.put_metrics(rows)


#: The studies `tcplab reproduce` runs.
STUDIES = ("rfc2415", "iw10", "hstcp", "goyal98")


def check_call(study: str, out: str | Path, quick: bool = False) -> None:
    """A study's `reproduce` arguments, checked before anything runs: `quick`
    a truth value (`quick="no"` ran the quick mode), and `out` no directory
    that holds another study's results, whose report.md, per_run.csv and
    (full mode) sensitivity.csv would be written over (a study's variations share their
    directory and store on purpose). Another study's results are told by its
    store, or by its report's first line."""
    import importlib

    from ..errors import FieldProblem, UsageError

    if not isinstance(quick, bool):
        raise UsageError([FieldProblem("quick", "expected True or False", quick, True)])

    where = Path(out)
    try:
        first = (where / "report.md").read_text(encoding="utf-8").split("\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        first = None
    for other in STUDIES:
        if other == study:
            continue
        store = where / f"{other}.duckdb"
        if store.exists() or first == importlib.import_module(f"{__package__}.{other}").TITLE:
            what = f"{store}" if store.exists() else f"its report, {where / 'report.md'}"
            raise UsageError([FieldProblem("out", f"holds the results of {other} ({what}), whose report and tables {study}'s would write "
                                           f"over; give {study} a directory of its own, such as {study}-out", str(out), True)])  # fmt: skip


def replications_of(mode: dict[str, Any], replications: int | None) -> tuple[int, str]:
    """The replications a study runs (its mode's, or the user's
    --replications) and what they add to its sweep's name (`-r30`, when
    they are not the mode's), so a store keeps both sweeps and shares
    their common runs."""
    from ..sweep import check_replications

    if replications is None:
        return mode["replications"], ""
    check_replications(replications)
    if replications == mode["replications"]:
        return mode["replications"], ""
    return replications, f"-r{replications}"


def sweep_seed(overrides: dict[str, Any] | None) -> int:
    """The seed a study's sweep derives its replications' seeds from: 1, or
    the user's `--set sim.seed=S` (replication r then runs with the seed
    derived from (S, r), as a sweep file's `seed` does)."""
    return int((overrides or {}).get("sim.seed", 1))


def first_replication(configs: list[tuple[dict[str, Any], dict[str, Any]]], base_seed: int = 1) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Configurations as `run_configs` runs their first replication: with the
    seed the sweep gives replication 0 (`sim.seed`)."""
    from ..sweep import derive_seed

    seed = derive_seed(base_seed, 0)
    return [(levels, {**doc, "sim": {**doc.get("sim", {}), "seed": seed}}) for levels, doc in configs]


def export_scenarios(study: str, configs: list[tuple[dict[str, Any], dict[str, Any]]], out: str | Path,
                     overrides: dict[str, Any] | None = None, data_files: list[Path] | None = None) -> list[Path]:  # fmt: skip
    """Write each configuration's scenario (with `overrides` set) as a TOML
    file into `out`, named by its factor levels, for `tcplab run` to run or a
    user to edit (`tcplab reproduce STUDY --export-scenarios DIR`). The
    empirical size distributions they use go beside them as CSV files, each
    once, which `data_files` (when given) receives."""
    import importlib

    from ..api import out_directory
    from ..scenario.loading import dumps_toml

    docs = vary(study, configs, overrides)
    if "sim.seed" in (overrides or {}) and getattr(importlib.import_module(f"{__package__}.{study}"), "SWEEP_SEEDS", False):
        docs = first_replication(docs, sweep_seed(overrides))  # the seed its sweep gives replication 0
    names = [re.sub(r"[^A-Za-z0-9.+=-]", "_", "_".join(f"{k}-{v}" for k, v in levels.items())) + ".toml" for levels, _ in docs]
    assert len(set(names)) == len(names), "a study's configurations have distinct factor levels"
    out_dir = out_directory("out", out)
    paths = []
    tables: dict[str, str] = {}
    for name, (_, doc) in zip(names, docs):
        (out_dir / name).write_text(dumps_toml(_points_as_files(doc, study, out_dir, tables)))
        paths.append(out_dir / name)
    if data_files is not None:
        data_files.extend(out_dir / t for t in dict.fromkeys(tables.values()))
    return paths


def _points_as_files(node: Any, study: str, out_dir: Path, tables: dict[str, str]) -> Any:
    """`node` with each empirical size distribution's points written once as
    a 'bytes,cdf' CSV file in `out_dir` and named by it (`file =
    "sizes-1a2b3c4d.csv"`, found beside the scenario): goyal98's SPECweb96
    table was written out in full twice for each of its 100 clients, in each
    of 72 files, so changing it meant editing 14,400 copies. `tables` maps a
    distribution's points to its file's name across the files written."""
    if isinstance(node, list):
        return [_points_as_files(v, study, out_dir, tables) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "empirical" and node.get("points"):
        from ..units import parse_size

        key = json.dumps(node["points"])
        if key not in tables:
            tables[key] = f"sizes-{hashlib.sha256(key.encode()).hexdigest()[:8]}.csv"
            lines = [f"# An empirical size distribution of tcplab reproduce {study}'s scenarios: edit it to change theirs.", "bytes,cdf"]
            lines += [f"{parse_size(b)},{c!r}" for b, c in node["points"]]
            (out_dir / tables[key]).write_text("\n".join(lines) + "\n")
        return {**{k: v for k, v in node.items() if k != "points"}, "file": tables[key]}
    return {k: _points_as_files(v, study, out_dir, tables) for k, v in node.items()}


def want_runs(con: Any, run_ids: "Any") -> None:
    """Make the temporary table `wanted` (run_id) of `run_ids` on DuckDB
    connection `con`, to join a study's queries with (see StudyRun.run_ids)."""
    con.execute("CREATE TEMP TABLE wanted AS SELECT unnest(?::VARCHAR[]) AS run_id", [list(run_ids)])


def as_checks(out: list[tuple[str, Any, str]]) -> list[Check]:
    """A study's checks with each outcome a Python bool: a comparison of
    NumPy or pandas numbers gives numpy.bool_, which is not `True` to `is`
    and is named "bool" by NumPy 2."""
    return [(name, bool(ok), detail) for name, ok, detail in out]


def counted(n: int, noun: str) -> str:
    """`n` and the noun, plural unless n is 1: "1 replication", "2 workers"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def md_table(df: "pd.DataFrame", floatfmt: str = ".2f") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cells(row, floatfmt)) + " |")
    return "\n".join(lines)


def _cells(row: Any, floatfmt: str) -> list[str]:
    """A table row's cells as text; NaN, a quantity with no value (the
    interval of one run), as "—", as `tcplab analyze` shows it."""
    return [("—" if v != v else format(v, floatfmt)) if isinstance(v, float) else str(v) for v in row]


def print_table(console: Any, title: str, df: "pd.DataFrame", floatfmt: str = ".2f") -> None:
    from rich.table import Table

    tab = Table(title=title, title_justify="left")
    for c in df.columns:
        tab.add_column(str(c), justify="right")
    for row in df.itertuples(index=False):
        tab.add_row(*_cells(row, floatfmt))
    console.print(tab)


def check_lines(results: list[Check]) -> list[str]:
    """The checks as Markdown list items."""
    return [f"- {'PASS' if ok else 'FAIL'}: {name} ({detail})" for name, ok, detail in results]


def finish(run: StudyRun, tables: dict[str, "pd.DataFrame"], results: list[Check], report_text: Callable[[], str],
           console: Any, figures: list[Path]) -> dict[str, Any]:  # fmt: skip
    """Write the tables as CSV and the report, and print the checks."""
    for n, df in tables.items():
        write_csv(df, run.out_dir / f"{n}.csv")
    text = report_text().rstrip("\n") + "\n" + "".join(f"\n{line}\n" for line in store_note(run))
    if run.overrides:  # the variation's paragraph below the title
        title, _, rest = text.partition("\n\n")
        text = "\n\n".join([title, "\n".join(variation_note(run.overrides)).rstrip(), rest])
    (run.out_dir / "report.md").write_text(text)
    if run.overrides:
        console.print(f"A variation ({' '.join(f'--set {k}={_as_typed(v)}' for k, v in run.overrides.items())} in every run), "
                      "checked against the published results:")  # fmt: skip
    for label, ok, detail in results:
        console.print(f"{'[green]PASS' if ok else '[red]FAIL'}[/] {label}: {detail}")
    figs = ", ".join(p.name for p in figures)
    console.print(f"{run.runs} runs ({run.skipped} already stored) in {run.wall_s:.1f} s; wrote {run.out_dir}/report.md, tables as CSV, {figs}")
    return {"tables": tables, "checks": results, "wall_s": run.wall_s, "report": run.out_dir / "report.md"}


def store_note(run: StudyRun) -> list[str]:
    """The report's last section: where the runs are, and the study's own
    per-run metrics kept beside them (`keep_metrics`), with the command that
    analyzes one; nothing for a study that keeps none."""
    from ..store import open_read

    if not run.store:  # hstcp runs in-process, with no store
        return []
    study = run.sweep.split("-")[0]
    con = open_read(run.store)
    try:
        kept = [r[0] for r in con.execute("SELECT DISTINCT metric FROM metrics WHERE starts_with(metric, ?) ORDER BY metric", [f"{study}."]).fetchall()]
        row = con.execute("SELECT factors FROM sweep_runs WHERE sweep = ? LIMIT 1", [run.sweep]).fetchone()
    finally:
        con.close()
    if not kept or row is None:
        return []
    by = ",".join(json.loads(row[0]))
    where = f"{run.out_dir}/{study}.duckdb"
    return [
        "## The runs in the store",
        f"The runs are in `{where}`, as the sweep `{run.sweep}`, with each run's figures of this study beside the generic "
        f"metrics: {', '.join(f'`{k}`' for k in kept)}. For example:",
        f"```\ntcplab analyze {shlex.quote(where)} --sweep {run.sweep} --metric {kept[0]} --by {by}\n```",  # a path with a space, quoted
    ]


def save_figure(fig: Any, path: Path, dpi: int = 90) -> Path:
    """Lay out `fig`, write it to `path`, close it, and return the path."""
    from .. import plots

    return plots.save_figure(fig, path, dpi)


def jain(x: Any) -> float:
    """Jain's fairness index (the store's definition)."""
    from ..store import jain_index

    return jain_index(x)
