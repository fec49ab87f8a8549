"""The ``tcplab`` command line."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .api import Result, run
from .errors import ScenarioError, TcplabError
from .scenario import parse_override_value

EXIT_USAGE = 2


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _parse_sets(sets: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in sets:
        if "=" not in item:
            _fail(f"--set {item!r}: expected FIELD=VALUE, such as tcp.iw=4 or topology.bottleneck.rate=2Mbps")
        key, _, value = item.partition("=")
        out[key.strip()] = parse_override_value(value.strip())
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="tcplab")
def main() -> None:
    """tcplab: a fast, reproducible laboratory for TCP congestion-control experiments."""


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="Override a scenario field (repeatable), e.g. --set tcp.iw=4.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Replace sim.seed.")
@click.option("--json", "as_json", is_flag=True, help="Print all results as one JSON document.")
def run_cmd(scenario: str, sets: tuple[str, ...], seed: int | None, as_json: bool) -> None:
    """Run one SCENARIO file and print a summary (or JSON)."""
    try:
        res = run(scenario, overrides=_parse_sets(sets), seed=seed)
    except ScenarioError as e:
        _fail(str(e))
        return
    except TcplabError as e:
        _fail(str(e), 1)
        return
    if as_json:
        click.echo(res.to_json())
    else:
        print_summary(res, Console(width=None if sys.stdout.isatty() else 132))


@main.command("plot")
@click.argument("figure", type=click.Choice(["seq", "cwnd"]))
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, help="Output file, .png or .svg.")
@click.option("--app", "apps", multiple=True, help="Application to draw (repeatable; default: all).")
@click.option("--link", default=None, help="seq: the link whose packets are drawn, 'from->to' (dumbbell default: r0->r1).")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="Override a scenario field (repeatable).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Replace sim.seed.")
def plot_cmd(figure: str, scenario: str, out: str, apps: tuple[str, ...], link: str | None, sets: tuple[str, ...], seed: int | None) -> None:
    """Run SCENARIO and draw FIGURE: 'seq' (packet number against time at a
    link, with drops and retransmissions) or 'cwnd' (cwnd and ssthresh)."""
    from .plots import plot_run

    try:
        path = plot_run(figure, scenario, out, apps=list(apps) or None, link=link, overrides=_parse_sets(sets), seed=seed)
    except ScenarioError as e:
        _fail(str(e))
        return
    except TcplabError as e:
        _fail(str(e), 1)
        return
    click.echo(f"wrote {path}")


def _si(x: float, unit: str) -> str:
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= factor:
            return f"{x / factor:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def print_summary(res: Result, console: Console, max_rows: int = 20) -> None:
    """Readable tables of flows, the busiest links and the engine counters."""
    flows = res.flows
    t = Table(title=f"Transfers ({len(flows)})", title_justify="left")
    for col in ("id", "app", "src→dst", "cc", "iw", "bytes", "delivered", "start s", "fct s", "goodput", "pkts", "retx", "RTOs", "FR"):
        t.add_column(col, justify="left" if col in ("app", "src→dst", "cc") else "right")
    for r in flows.head(max_rows).itertuples():
        t.add_row(
            str(r.id), r.app, f"{r.src}→{r.dst}", r.cc, f"{r.iw:g}",
            "inf" if r.bytes != r.bytes else _si(r.bytes, "B"),
            _si(r.bytes_delivered, "B"), f"{r.start_s:.3f}",
            "—" if not r.completed else f"{r.fct_s:.3f}",
            _si(r.goodput_bps, "b/s"), str(r.data_pkts), str(r.retx_pkts), str(r.timeouts), str(r.fast_retx),
        )  # fmt: skip
    if len(flows) > max_rows:
        done = flows[flows.completed]
        t.caption = (
            f"{len(flows) - max_rows} more rows; {len(done)}/{len(flows)} completed"
            + (f", median fct {done.fct_s.median():.3f} s" if len(done) else "")
        )
    console.print(t)
    links = res.links
    busy = links[links.arrivals > 0].sort_values(["utilization", "id"], ascending=[False, True]).head(8)
    lt = Table(title="Busiest links", title_justify="left")
    for col in ("link", "rate", "delay", "util %", "pkts out", "drops", "drop %", "avg q", "max q"):
        lt.add_column(col, justify="left" if col == "link" else "right")
    for r in busy.itertuples():
        drop_pct = 100 * r.drops / r.arrivals if r.arrivals else 0.0
        lt.add_row(
            f"{r.src}→{r.dst}", _si(r.rate_bps, "b/s"), f"{r.delay_s * 1e3:g} ms", f"{100 * r.utilization:.1f}",
            str(r.departures), str(r.drops), f"{drop_pct:.2f}", f"{r.queue_avg_pkts:.2f}", str(r.queue_max_pkts),
        )  # fmt: skip
    console.print(lt)
    e = res.engine
    console.print(
        f"[bold]Engine[/bold]: {e['sim_seconds']:g} simulated s, {e['events']:,} events, "
        f"{e['packets_created']:,} packets, {e['wall_seconds']:.3f} wall s"
    )


if __name__ == "__main__":  # pragma: no cover
    main()
