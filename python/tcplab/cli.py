"""The ``tcplab`` command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .errors import InternalError, ScenarioError, TcplabError, UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console

    from .api import Result

# pandas, pydantic, rich, duckdb and the rest are imported by the commands
# that use them, so `tcplab --version` and `--help` start fast.

EXIT_USAGE = 2


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _check_out_dir(option: str, where: str | None) -> None:
    """An output directory option: made if missing (by the command, once it
    has something to write), refused before anything runs if a file is there
    or it cannot be made (tried here, and what was made taken away again)."""
    if where is None:
        return
    if not where.strip():  # Path('') is the working directory: --out '' wrote every table there
        _fail(f"{option} {where!r}: expected a directory's path (made if missing)")
    path = Path(where)
    if path.exists() and not path.is_dir():
        _fail(f"{option} {where!r}: is a file; expected a directory (made if missing)")
    missing = [d for d in (path, *path.parents) if not d.exists()]
    try:
        for d in reversed(missing):
            d.mkdir()
    except OSError as e:
        _fail(f"{option} {where!r}: cannot create the directory: {e.strerror or e}")
    finally:
        for d in missing:
            if d.is_dir():
                d.rmdir()


def _console(width: int | None = None) -> "Console":
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else width)


def _parse_sets(sets: tuple[str, ...]) -> dict[str, Any]:
    from .errors import _shown, field_path, is_field_path
    from .scenario import parse_override_value

    out: dict[str, Any] = {}
    given: dict[str, tuple[str, Any]] = {}  # each field as dotted path: its first spelling and value
    for item in sets:
        if "=" not in item:
            _fail(f"--set {item!r}: expected FIELD=VALUE, such as tcp.iw=4 or topology.bottleneck.rate=2Mbps")
        key, _, value = item.partition("=")
        key, parsed = key.strip(), parse_override_value(value.strip())
        if not is_field_path(key):
            _fail(f"--set {item!r}: {key!r} is no field path; expected FIELD=VALUE with a dotted path such as tcp.iw=4 or apps[0].size=1MB")
        # The same field twice (`--set tcp.iw=4 --set tcp.iw=10`, or
        # apps.0.size and apps[0].size): the last one silently won.
        first = given.setdefault(field_path(key), (key, parsed))
        if first[1] != parsed:
            _fail(f"--set {key}: given twice, as {first[0]}={_shown(first[1])} and {key}={_shown(parsed)}; give it once")
        out[key] = parsed
    return out


def _cannot_write(e: OSError) -> str:
    """A write that failed (a full disk), as the line a command prints."""
    return f"cannot write {e.filename if e.filename is not None else 'the output'}: {e.strerror}"


class _Group(click.Group):
    """The command group: Ctrl-C ends any command with status 130 and a line
    saying what is kept (click's own 'Aborted!' exits 1); a write that fails
    where no command expects it (standard output on a full disk, even for
    --help) with status 1 and one line, not a traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)  # click itself ends quietly when a reader stops early (EPIPE)
        except OSError as e:
            try:
                click.echo(f"error: {_cannot_write(e)}", err=True)
            except OSError:
                pass  # standard error cannot be written either
            sys.exit(1)

    def invoke(self, ctx: click.Context) -> Any:
        from .errors import Interrupted

        try:
            return super().invoke(ctx)
        except Interrupted as e:
            click.echo(f"interrupted. {e.message}. Run the same command to resume.", err=True)
            sys.exit(130)
        except (KeyboardInterrupt, click.exceptions.Abort):
            click.echo("interrupted.", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="tcplab")
def main() -> None:
    """tcplab: a fast, reproducible laboratory for TCP congestion-control experiments."""
    # Building the first pydantic model looks for pydantic plugins among the
    # entry points of every installed distribution (about 15 ms of `tcplab
    # run` here, more where more is installed); the commands use none. A
    # value the user set is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="Override a scenario field (repeatable), e.g. --set tcp.iw=4.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Replace sim.seed.")
@click.option("--json", "as_json", is_flag=True, help="Print all results as one JSON document.")
@click.option("--pcap", "pcap", default=None, metavar="DIR",
              help="Write libpcap captures into DIR: of the links in [trace] pcap, or by default of a dumbbell's bottleneck (both ways) or of every link.")
@click.option("-o", "--out", default=None, metavar="DIR",
              help="Also write the results into DIR: every table as a file (flows, links, pages, traces, web100, ports, packets), "
                   "engine.json, and scenario.toml (the scenario as it ran, --set and --seed included).")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default=None, help="The tables' format with --out (default csv).")
def run_cmd(scenario: str, sets: tuple[str, ...], seed: int | None, as_json: bool, pcap: str | None, out: str | None, fmt: str | None) -> None:
    """Run one SCENARIO file and print a summary (or JSON)."""
    from .api import _run

    if fmt is not None and out is None:
        _fail(f"--format {fmt}: writes the tables given --out DIR; add --out DIR")
    _check_out_dir("--out", out)
    if pcap is not None and not pcap.strip():
        _fail(f"--pcap {pcap!r}: expected a directory's path (made if missing)")
    try:
        res = _run(scenario, _parse_sets(sets), seed, pcap, tables=out is not None)  # the summary and --json need no pandas
    except ScenarioError as e:
        _fail(str(e))
        return
    except InternalError as e:
        import tempfile

        with tempfile.NamedTemporaryFile("w", prefix="tcplab-internal-error-", suffix=".json", delete=False) as f:
            f.write(e.scenario)
        _fail(f"{e}; the normalized scenario that reproduces it is in {f.name}", 1)
        return
    except TcplabError as e:
        _fail(str(e), 1)
        return
    if as_json:
        for piece in res.json_pieces():  # a table's rows a chunk at a time: millions of rows take no more memory
            sys.stdout.write(piece)
        sys.stdout.write("\n")
        sys.stdout.flush()
    else:
        print_summary(res, _terminal_width(132))
    if out is not None:
        try:
            files = res.save(out, fmt or "csv")
        except OSError as e:
            _fail(f"--out {out!r}: cannot write {e.filename}: {e.strerror}", 1)
            return
        click.echo(f"wrote {len(files)} files into {out}: " + ", ".join(f.name for f in files), err=True)


@main.command("plot")
@click.argument("figure")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, help="Output file, .png, .svg or .pdf.")
@click.option("--app", "apps", multiple=True, help="seq/cwnd: application to draw (repeatable; default: all).")
@click.option("--link", default=None, help="seq: the link whose packets are drawn, 'from->to' (default: a dumbbell's r0->r1, a wireless topology's gw->m0).")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="seq/cwnd: override a scenario field (repeatable).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="seq/cwnd: replace sim.seed.")
@click.option("--x", "x", default=None, help="store: the factor on the x axis.")
@click.option("--y", "y", default=None, help="store: the per-run metric on the y axis.")
@click.option("--hue", default=None, help="store: a factor drawn as separate lines.")
@click.option("--stat", default=None, help="store: mean (t-interval, the default) or median (bootstrap interval).")
@click.option("--sweep", default=None, help="store: the sweep to draw (needed when the store holds several).")
@click.option("--where", "where", multiple=True, metavar="FACTOR=LEVEL", help="store: only the runs at this level of a factor (repeatable).")
def plot_cmd(figure: str, scenario: str | None, out: str, apps: tuple[str, ...], link: str | None, sets: tuple[str, ...],
             seed: int | None, x: str | None, y: str | None, hue: str | None, stat: str | None, sweep: str | None,
             where: tuple[str, ...]) -> None:  # fmt: skip
    """Draw a figure.

    \b
    tcplab plot seq SCENARIO -o fig.png     packet number against time at a link
    tcplab plot cwnd SCENARIO -o fig.svg    cwnd and ssthresh against time
    tcplab plot web100-VIEW SCENARIO -o f.png   web100 views: cwnd, bw (against
                                            time), bw-cwnd, rtt (histogram), acks
    tcplab plot STORE.duckdb --x iw --y fct_s [--hue webs] [--where ftps=1] -o fig.png
    """
    from .plots import plot_run, store_plot
    from .store import StoreError

    # Each option applies to some figures only; one given where it does not
    # apply is refused rather than ignored.
    kind = "store" if figure.endswith(".duckdb") else "web100" if figure.startswith("web100-") else figure
    given = {"SCENARIO": scenario is not None, "--app": bool(apps), "--link": link is not None, "--set": bool(sets),
             "--seed": seed is not None, "--x": x is not None, "--y": y is not None, "--hue": hue is not None,
             "--stat": stat is not None, "--sweep": sweep is not None, "--where": bool(where)}  # fmt: skip
    applies = {"SCENARIO": ("seq", "cwnd", "web100"), "--app": ("seq", "cwnd", "web100"), "--link": ("seq",),
               "--set": ("seq", "cwnd", "web100"), "--seed": ("seq", "cwnd", "web100"), "--x": ("store",),
               "--y": ("store",), "--hue": ("store",), "--stat": ("store",), "--sweep": ("store",), "--where": ("store",)}  # fmt: skip
    if kind in ("seq", "cwnd", "web100", "store"):
        for opt, on in given.items():
            if on and kind not in applies[opt]:
                where = ", ".join("a results store" if k == "store" else "web100-VIEW" if k == "web100" else k for k in applies[opt])
                _fail(f"plot {figure}: {opt} does not apply to this figure (it applies to: {where})")
                return

    try:
        if figure in ("seq", "cwnd") or figure.startswith("web100-"):
            if scenario is None:
                _fail(f"plot {figure}: give the scenario file, e.g. tcplab plot {figure} examples/fall-floyd-drops.toml -o fig.png")
            path = plot_run(figure, scenario, out, apps=list(apps) or None, link=link, overrides=_parse_sets(sets), seed=seed)  # type: ignore[arg-type]
        elif figure.endswith(".duckdb"):
            if not x or not y:
                _fail("plot STORE: --x FACTOR and --y METRIC are required")
            path = store_plot(figure, x, y, out, hue=hue, stat=stat or "mean", sweep=sweep, where=where)  # type: ignore[arg-type]
        else:
            _fail(f"plot {figure!r}: expected seq, cwnd, web100-VIEW (cwnd, bw, bw-cwnd, rtt, acks) or a results store (.duckdb)")
            return
    except ScenarioError as e:
        _fail(str(e))
        return
    except TcplabError as e:
        _fail(str(e), 2 if isinstance(e, StoreError) else 1)
        return
    except OSError as e:
        _fail(_cannot_write(e), 1)
        return
    click.echo(f"wrote {path}")


@main.command("sweep")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Local worker processes (default: all cores).")
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local", help="Where runs execute.")
@click.option("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://head:8786 (with --backend dask).")
@click.option("--store", default=None, help="Results store (default: the sweep file's, or results.duckdb).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--verbose", "-v", is_flag=True, help="Print a line as each run is stored.")
def sweep_cmd(sweep_file: str, jobs: int | None, backend: str, scheduler: str | None, store: str | None, quiet: bool, verbose: bool) -> None:
    """Run every configuration and replication of SWEEP_FILE into a results store.
    Runs already stored are skipped, so an interrupted sweep resumes."""
    from .runner import run_sweep
    from .store import StoreError
    from .sweep import load_sweep

    if backend == "dask" and not scheduler:
        _fail("--backend dask needs --scheduler ADDRESS (e.g. tcp://head:8786)")
    if backend == "dask" and jobs is not None:
        _fail("--jobs applies to --backend local only (with dask, the cluster's workers run the runs)")
    if backend == "local" and scheduler:
        _fail("--scheduler applies with --backend dask only")
    if store is not None and not store.strip():  # '' fell back to the sweep file's store
        _fail(f"--store {store!r}: expected a results store's file path, such as results.duckdb")
    try:
        sw = load_sweep(sweep_file, store)
    except ScenarioError as e:
        _fail(str(e))
        return
    for note in sw.notes:
        click.echo(f"note: {note}", err=True)
    def stored(run: Any) -> None:
        click.echo(f"stored {run.run_id} rep {run.rep} {run.factors}")

    try:
        rep = run_sweep(sw, jobs=jobs, backend=backend, scheduler=scheduler, progress=not quiet, on_result=stored if verbose else None)
    except TcplabError as e:
        # The store cannot be opened (2), or the runs cannot (a scheduler out
        # of reach, workers that died: 1).
        _fail(str(e), 2 if isinstance(e, (StoreError, ScenarioError)) else 1)
        return
    msg = f"{sw.name}: {rep.done} runs done, {rep.skipped} already stored, {rep.failed} failed, of {rep.total}; store {sw.store}"
    if rep.interrupted:
        click.echo(f"interrupted. {msg}. Run the same command to resume.", err=True)
        sys.exit(130)
    click.echo(msg)
    if rep.failed:
        click.echo(f"the first failure: {rep.first_error}", err=True)
        sys.exit(1)


@main.command("analyze")
@click.argument("store", type=click.Path(dir_okay=False))
@click.option("--metric", required=True, help="Per-run metric: fct_s, goodput_bps, utilization, drop_rate, jain, efficiency, power, ...; "
              "in a study's store also the study's own, as STUDY.NAME (goyal98.efficiency, iw10.elapsed_later_s).")
@click.option("--by", default="", help="Comma-separated factors defining a configuration (full names or last components).")
@click.option("--anova", is_flag=True, help="Full-factorial allocation of variation over --factors.")
@click.option("--factors", default="", help="With --anova: the factors, comma-separated.")
@click.option("--conf", type=click.FloatRange(0.5, 0.999), default=0.95, help="Confidence level.")
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON.")
@click.option("--sweep", default=None, help="The sweep to analyze (needed when the store holds several).")
@click.option("--where", "where", multiple=True, metavar="FACTOR=LEVEL",
              help="Only the runs at this level of a factor (repeatable; a factor given twice takes either level), e.g. --where profile=hspa.")
def analyze_cmd(store: str, metric: str, by: str, anova: bool, factors: str, conf: float, as_json: bool, sweep: str | None,
                where: tuple[str, ...]) -> None:  # fmt: skip
    """Summarize a results store: per-configuration statistics, or an analysis
    of variation. It takes the runs of one sweep as the sweep was last run;
    a sweep file edited since leaves its earlier runs out."""
    import json as _json

    from .analysis import allocation_of_variation, count_column, summarize
    from .store import Store, select_levels
    from .units import format_percent

    if anova and by:
        _fail("--by does not apply with --anova (give the factors with --factors)")
    if factors and not anova:
        _fail("--factors applies with --anova only (for per-configuration statistics give --by)")
    try:
        st = Store(store, read_only=True)
        try:
            df = st.metric_table(metric, sweep)
            name = st.pick_sweep(sweep)  # the sweep metric_table read
            counts = st.sweeps()[name]
        finally:
            st.close()
        missing = counts["runs"] - counts["ok"]
        if missing:
            click.echo(f"note: sweep {name}: {counts['ok']} of its {counts['runs']} runs are stored ({counts['failed']} failed, "
                       f"{missing - counts['failed']} not run yet); the tables below leave the others out", err=True)  # fmt: skip
        df = select_levels(df, metric, where)
        cols = [c for c in df.columns if c != metric]
        if anova:
            fs = _factor_list(cols, factors, "--factors")
            if not fs:
                _fail("--anova needs --factors a,b,...")
            try:
                res = allocation_of_variation(df, fs, metric, conf=conf)
            except ValueError as e:
                _fail(str(e))
                return
            if as_json:
                records = {k: _json_records(t) for k, t in (("variation", res.table), ("effects", res.effects))}
                click.echo(_json.dumps({"grand_mean": res.grand_mean, **records}, allow_nan=False))
                return
            _print_df(res.table, f"Allocation of variation of {metric}{_where_text(where)} (grand mean {res.grand_mean:.6g})")
            _print_df(res.effects, f"Effects ({format_percent(conf)} confidence intervals)")
            if res.effects.lo.isna().all():
                click.echo("  —: with one run per configuration the error has no degrees of freedom, so no interval")
            _pooled_note(df, fs, metric, "their variation is in the error term")
            return
        keys = _factor_list(cols, by, "--by")
        table = summarize(df, keys, metric, conf=conf)
    except TcplabError as e:
        _fail(str(e))
        return
    if as_json:
        click.echo(_json.dumps(_json_records(table), allow_nan=False))
    else:
        _print_df(table, f"{metric} by {', '.join(keys) or 'all runs'}{_where_text(where)} ({format_percent(conf)} CIs)")
        if (table[count_column(list(df.columns))] == 1).any():
            click.echo("  —: a configuration of one run has no confidence interval")
        _pooled_note(df, keys, metric, "each row mixes runs at all of those levels")


def _where_text(where: tuple[str, ...]) -> str:
    """The runs --where chose, for a table's title (', where profile=hspa')."""
    return f", where {', '.join(where)}" if where else ""


def _json_records(table: Any) -> list[dict[str, Any]]:
    """A table's rows for JSON: every float as Python writes it, which reads
    back as the same number (pandas' to_json kept 10 significant digits: 1/3
    came out as 0.3333333333), and an undefined value (NaN) as null."""
    return [{c: None if isinstance(v, float) and v != v else v for c, v in r.items()} for r in table.to_dict("records")]


def _pooled_note(df: Any, used: list[str], metric: str, meaning: str) -> None:
    """Say which of the sweep's factors the table pools over: a goyal98
    store analyzed by flavour, buffer and policy mixes its three link types
    into the error term, which the tables alone do not show."""
    from .analysis import pooled_factors

    if what := pooled_factors(df, used, metric):
        click.echo(f"note: pooled over {what}: {meaning}", err=True)


def _factor_list(columns: list[str], text: str, option: str) -> list[str]:
    """The factors a comma-separated option names, each resolved (full name
    or last component) and each at most once."""
    from .store import StoreError, resolve_factor

    out: dict[str, str] = {}
    for given in (f.strip() for f in text.split(",") if f.strip()):
        full = resolve_factor(columns, given, option)
        if full in out:
            raise StoreError(f"{option}: {given!r} names {full}, which {out[full]!r} named already; give each factor once")
        out[full] = given
    return list(out)


def _print_df(df: Any, title: str) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left", min_width=len(title))  # the title on one line
    for c in df.columns:
        t.add_column(str(c), justify="right")
    for row in df.itertuples(index=False):
        t.add_row(*[("—" if v != v else f"{v:.6g}") if isinstance(v, float) else str(v) for v in row])
    _console(160).print(t)


@main.command("reproduce")
@click.argument("study", type=click.Choice(["rfc2415", "iw10", "hstcp", "goyal98"]))
@click.option("--quick", is_flag=True, help="Fewer replications and shorter runs (on 2 cores: hstcp about 3 s, iw10 about 6 s, rfc2415 about 8 s, goyal98 about 16 s).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: all cores).")
@click.option("--out", "-o", default=None, help="Output directory (default: STUDY-out; with --set, STUDY-out-FIELD=VALUE).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE",
              help="Set a scenario field in every run of the study (repeatable), e.g. --set tcp.cc=cubic.")
@click.option("--replications", "-r", type=click.IntRange(min=1), default=None, metavar="N",
              help="Replications of each configuration instead of the study's own (rfc2415: 5, quick 2; iw10: 100, quick 10; goyal98: 5, quick 1).")
@click.option("--export-scenarios", "export", default=None, metavar="DIR",
              help="Run nothing: write each configuration's scenario (its first replication, --set applied) as TOML into DIR.")
def reproduce_cmd(study: str, quick: bool, jobs: int | None, out: str | None, quiet: bool, sets: tuple[str, ...], replications: int | None,
                  export: str | None) -> None:  # fmt: skip
    """Reproduce a classic study: its tables next to the published ones,
    figures, CSVs and a Markdown report. Results go through the sweep
    machinery into OUT/STUDY.duckdb, so a rerun reuses stored runs. With
    --set, a variation of the study: the fields are set in every run, and
    the report compares the variation with the published results."""
    import importlib

    from .studies.common import check_call, export_scenarios, variation_dir

    overrides = _parse_sets(sets)
    if replications is not None and study == "hstcp":
        _fail("--replications does not apply to hstcp, which runs each stack with seeds 1, 2 and 3 (its iperf runs) itself")
    if export is not None:
        for option, on in (("--jobs", jobs is not None), ("--out", out is not None), ("--quiet", quiet), ("--replications", replications is not None)):
            if on:
                _fail(f"{option} does not apply with --export-scenarios, which runs nothing (the scenarios go into its DIR)")
    for option, where in (("--out", out), ("--export-scenarios", export)):
        _check_out_dir(option, where)
    mod = importlib.import_module(f".studies.{study}", __package__)
    try:
        if export is not None:
            data: list[Path] = []
            paths = export_scenarios(study, mod.scenarios(quick), export, overrides, data_files=data)
            tables = [p.name for p in data]
            beside = f" (with the size distribution{'s' if len(tables) > 1 else ''} they name: {', '.join(tables)})" if tables else ""
            click.echo(f"wrote {len(paths)} scenarios of {study}{' (quick)' if quick else ''} into {export}{beside}, each as its first "
                       f"replication runs; run one with: tcplab run {paths[0]}")  # fmt: skip
            return
        target = out or variation_dir(study, overrides)
        try:
            check_call(study, target)
        except UsageError as e:
            _fail(f"{'--out' if out else 'the output directory'} {target!r}: {e.problems[0].message}")
        more = {} if replications is None else {"replications": replications}
        mod.reproduce(quick=quick, jobs=jobs, out=target, progress=not quiet, console=_console(180),
                      overrides=overrides, **more)  # fmt: skip
    except ScenarioError as e:
        _fail(str(e))
    except TcplabError as e:
        _fail(str(e), 1)
    except OSError as e:
        _fail(_cannot_write(e), 1)


@main.command("export")
@click.argument("store", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet")
@click.option("--out", "-o", required=True, help="Output directory (one file per table).")
@click.option("--sweep", default=None, help="Only the runs of this sweep (default: every run of the store).")
def export_cmd(store: str, fmt: str, out: str, sweep: str | None) -> None:
    """Write every table of a results store as Parquet or CSV."""
    from .store import Store, StoreError

    _check_out_dir("--out", out)
    try:
        st = Store(store, read_only=True)
    except TcplabError as e:
        _fail(str(e))
        return
    try:
        for p in st.export(out, fmt, sweep):
            click.echo(f"wrote {p}")
    except StoreError as e:
        _fail(str(e))
    except OSError as e:
        _fail(_cannot_write(e), 1)
    finally:
        st.close()


def _si(x: float, unit: str) -> str:
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= factor:
            return f"{x / factor:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def _terminal_width(default: int) -> int:
    """The terminal's width when printing to one, else `default`."""
    if sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size((default, 24)).columns
    return default


def busiest(lc: dict, n: int) -> list[int]:
    """The rows of the `n` links with the highest utilization among those
    that saw an arrival, ties by link id: `sorted(...)[:n]`'s rows, found
    with tuples compared in C (a key function per link took about 1 s at
    300,000 links)."""
    import heapq
    from itertools import compress
    from operator import neg

    arrivals = lc.get("arrivals", [])  # counts, so truthy exactly when above 0
    keyed = zip(map(neg, lc.get("utilization", [])), lc.get("id", []), range(len(arrivals)))
    return [i for _, _, i in heapq.nsmallest(n, compress(keyed, arrivals))]


def _sorted_where(values: "Iterable[float]", keep: "Iterable[bool]") -> list[float]:
    """The values whose `keep` is true, in ascending order. A long column
    (millions of transfers) is sorted by NumPy: the same order, in a
    fraction of the time."""
    from itertools import compress

    out = list(compress(values, keep))
    if len(out) < 100_000:
        out.sort()
        return out
    import numpy as np

    return np.sort(np.array(out, dtype=np.float64)).tolist()


def print_summary(res: "Result", width: int, max_rows: int = 20) -> None:
    """Readable tables of flows and the busiest links, a line on the web
    pages and one per ATM switch port, and the engine counters."""
    from .api import rows_of
    from .text_table import TextTable

    def bold(text: str) -> str:
        return click.style(text, bold=True)  # echo drops the styling where stdout is no terminal

    # From the result columns themselves: a summary needs no pandas (start-up
    # time), and turns only the rows it shows into dictionaries.
    fc = res.data["flows"]
    n_flows = len(fc.get("id", []))
    flows = rows_of(fc, range(min(n_flows, max_rows)))
    left = ("app", "src→dst", "cc")
    cols = ("id", "app", "src→dst", "cc", "iw", "bytes", "delivered", "start s", "fct s", "goodput", "pkts", "retx", "RTOs", "FR")
    t = TextTable(f"Transfers ({n_flows})", [(c, c not in left) for c in cols])
    for r in flows[:max_rows]:
        t.add_row(
            str(r["id"]), r["app"], f"{r['src']}→{r['dst']}", r["cc"], f"{r['iw']:g}",
            "inf" if r["bytes"] is None else _si(r["bytes"], "B"),  # None: unbounded
            _si(r["bytes_delivered"], "B"), f"{r['start_s']:.3f}",
            "gave up" if r["aborted"] else "—" if not r["completed"] else f"{r['fct_s']:.3f}",
            _si(r["goodput_bps"], "b/s"), str(r["data_pkts"]), str(r["retx_pkts"]), str(r["timeouts"]), str(r["fast_retx"]),
        )  # fmt: skip
    notes = []
    if n_flows > max_rows:
        import statistics

        done = _sorted_where(fc["fct_s"], fc["completed"])
        notes.append(f"{n_flows - max_rows} more rows; {len(done)}/{n_flows} completed" + (f", median fct {statistics.median(done):.3f} s" if done else ""))
    gave_up = sum(fc.get("aborted", []))
    if gave_up:
        notes.append(f"{gave_up} gave up: a retransmission went unanswered tcp.max_retries times")
    t.caption = "; ".join(notes) or None
    click.echo(t.render(width))
    lc = res.data["links"]
    busy = rows_of(lc, busiest(lc, 8))
    cols = ("link", "rate", "delay", "util %", "pkts out", "drops", "drop %", "avg q", "max q")
    lt = TextTable("Busiest links", [(c, c != "link") for c in cols])
    for r in busy:
        drop_pct = 100 * r["drops"] / r["arrivals"] if r["arrivals"] else 0.0
        lt.add_row(
            f"{r['src']}→{r['dst']}", _si(r["rate_bps"], "b/s"), f"{r['delay_s'] * 1e3:g} ms", f"{100 * r['utilization']:.1f}",
            str(r["departures"]), str(r["drops"]), f"{drop_pct:.2f}", f"{r['queue_avg_pkts']:.2f}", str(r["queue_max_pkts"]),
        )  # fmt: skip
    if res.data.get("ports", {}).get("link"):
        lt.caption = "avg q and max q: packets waiting; on an ATM switch port (" + ", ".join(n.replace("->", "→") for n in res.data["ports"]["link"]) + "), cells"
    click.echo(lt.render(width))
    pc = res.data.get("pages", {})
    if pc.get("id"):
        import statistics

        delays = _sorted_where(pc["delay_s"], pc["completed"])
        line = f"{bold('Pages')}: {len(pc['id']):,} of {len(set(pc['app']))} application(s), {len(delays):,} completed"
        if delays:
            q1, median, q3 = statistics.quantiles(delays, n=4) if len(delays) > 1 else (delays[0],) * 3
            line += f"; delay median {median:.3f} s, quartiles {q1:.3f}-{q3:.3f} s"
        click.echo(line)
    for r in rows_of(res.data.get("ports", {}), range(len(res.data.get("ports", {}).get("link", [])))):
        click.echo(f"{bold('Port')} {r['link'].replace('->', '→')} ({r['policy']}, {r['buffer_cells']:,} cells): {r['frames']:,} frames, "
                   f"{r['early_drops']:,} refused early, {r['ppd_frames']:,} cut (PPD); cells {r['dropped_cells']:,} dropped, "
                   f"{r['wasted_cells']:,} wasted")  # fmt: skip
    e = res.engine
    sim = res.scenario.sim
    # A run sim.until stopped before its duration says so.
    early = f", stopped as {', '.join(sim.until)} finished" if sim.until and round(e["sim_seconds"] * 1e9) < sim.duration else ""
    click.echo(f"{bold('Engine')}: {e['sim_seconds']:g} simulated s{early}, {e['events']:,} events, {e['packets_created']:,} packets, "
               f"{e['wall_seconds']:.3f} wall s")  # fmt: skip
    for c in res.data.get("captures", []):
        click.echo(f"{bold('Capture')} {c['link']}: {c['file']} ({c['packets']:,} packets), drops in {c['drops_file']} ({c['drops']:,})")


if __name__ == "__main__":  # pragma: no cover
    main()
