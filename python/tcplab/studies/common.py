"""What every reproduced study shares: configurations run through the sweep
machinery into a store (so a rerun reuses stored runs), acceptance checks
printed and written, tables written as CSV and Markdown, and the report.

A study module supplies its configurations, its per-run metrics (read back
from the store), its tables against the published ones, its checks, its
figures and the text of its report; :func:`run_configs`, :func:`finish` and
the formatting helpers do the rest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

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


def run_configs(study: str, configs: list[tuple[dict[str, Any], dict[str, Any]]], replications: int, quick: bool,
                out: str | Path, jobs: int | None, progress: bool, variant: str = "") -> StudyRun:  # fmt: skip
    """Run (factor levels, scenario) pairs, `replications` times each, into
    OUT/STUDY.duckdb, as the sweep STUDY-quick or STUDY-full (plus `variant`)."""
    from ..runner import run_sweep
    from ..sweep import sweep_from_configs

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    store = str(out_dir / f"{study}.duckdb")
    name = f"{study}-{'quick' if quick else 'full'}{variant}"
    t0 = time.perf_counter()
    sw = sweep_from_configs(name, store, configs, replications, seed=1)
    rep = run_sweep(sw, jobs=jobs, progress=progress)
    return StudyRun(out_dir, store, name, rep.total, rep.skipped, time.perf_counter() - t0, tuple(r.run_id for r in sw.runs))


def want_runs(con: Any, run_ids: "Any") -> None:
    """Make the temporary table `wanted` (run_id) of `run_ids` on DuckDB
    connection `con`, to join a study's queries with (see StudyRun.run_ids)."""
    con.execute("CREATE TEMP TABLE wanted AS SELECT unnest(?::VARCHAR[]) AS run_id", [list(run_ids)])


def md_table(df: "pd.DataFrame", floatfmt: str = ".2f") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [format(v, floatfmt) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def print_table(console: Any, title: str, df: "pd.DataFrame", floatfmt: str = ".2f") -> None:
    from rich.table import Table

    tab = Table(title=title, title_justify="left")
    for c in df.columns:
        tab.add_column(str(c), justify="right")
    for row in df.itertuples(index=False):
        tab.add_row(*[format(v, floatfmt) if isinstance(v, float) else str(v) for v in row])
    console.print(tab)


def check_lines(results: list[Check]) -> list[str]:
    """The checks as Markdown list items."""
    return [f"- {'PASS' if ok else 'FAIL'}: {name} ({detail})" for name, ok, detail in results]


def finish(run: StudyRun, tables: dict[str, "pd.DataFrame"], results: list[Check], report_text: Callable[[], str],
           console: Any, figures: list[Path]) -> dict[str, Any]:  # fmt: skip
    """Write the tables as CSV and the report, and print the checks."""
    for n, df in tables.items():
        df.to_csv(run.out_dir / f"{n}.csv", index=False)
    (run.out_dir / "report.md").write_text(report_text())
    for label, ok, detail in results:
        console.print(f"{'[green]PASS' if ok else '[red]FAIL'}[/] {label}: {detail}")
    figs = ", ".join(p.name for p in figures)
    console.print(f"{run.runs} runs ({run.skipped} already stored) in {run.wall_s:.1f} s; wrote {run.out_dir}/report.md, tables as CSV, {figs}")
    return {"tables": tables, "checks": results, "wall_s": run.wall_s, "report": run.out_dir / "report.md"}


def save_figure(fig: Any, path: Path, dpi: int = 90) -> Path:
    """Lay out `fig`, write it to `path`, close it, and return the path."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def jain(x: Any) -> float:
    """Jain's fairness index (the store's definition)."""
    from ..store import jain_index

    return jain_index(x)
