"""Figures of one run: the classic sequence-number plot and cwnd against time.

Both draw from a :class:`tcplab.Result` whose scenario asked for the data
(``[trace] links`` for :func:`seq_plot`, ``[trace] on_change`` or
``interval`` for :func:`cwnd_plot`); :func:`plot_run` runs a scenario with
what a figure needs switched on. Figures are written as PNG or SVG, chosen by
the file name's extension.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .api import Result, run  # noqa: E402
from .errors import ScenarioError, FieldProblem  # noqa: E402
from .scenario import Dumbbell, apply_overrides, load, read_toml  # noqa: E402

FORMATS = (".png", ".svg")


def _check_out(out: str | Path) -> Path:
    p = Path(out)
    if p.suffix.lower() not in FORMATS:
        raise ScenarioError([FieldProblem("--out", f"unknown figure format; allowed: {', '.join(FORMATS)}", str(out), True)])
    return p


def seq_plot(res: Result, out: str | Path, apps: Sequence[str] | None = None, link: str | None = None, mss: int | None = None) -> Path:
    """Packet number against time at a logged link, one colour per
    application: transmissions as dots, retransmissions as circles, drops as
    crosses (the ns-2 test-suite figure)."""
    path = _check_out(out)
    pk = res.packets
    pk = pk[pk.kind == "data"]
    if link is not None:
        pk = pk[pk.link == link]
    if apps:
        pk = pk[pk.app.isin(list(apps))]
    if pk.empty:
        raise ScenarioError("no data packets were logged for this figure: check [trace] links and the application names")
    seg = mss or int(res.scenario.tcp.mss)
    fig, ax = plt.subplots(figsize=(8, 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (app, g) in enumerate(pk.groupby("app", sort=True)):
        c = colors[k % len(colors)]
        sent = g[(g.event == "dequeue") & ~g.retx]
        retx = g[(g.event == "dequeue") & g.retx]
        drops = g[g.event == "drop"]
        ax.scatter(sent.t, sent.seq // seg, s=6, color=c, label=f"{app} packets")
        if len(retx):
            ax.scatter(retx.t, retx.seq // seg, s=40, facecolors="none", edgecolors=c, label=f"{app} retransmissions")
        if len(drops):
            ax.scatter(drops.t, drops.seq // seg, s=50, marker="x", color="red" if k == 0 else c, label=f"{app} drops")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"packet number (sequence / {seg} bytes)")
    ax.set_title(f"Packets leaving {link or pk.link.iloc[0]}")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def cwnd_plot(res: Result, out: str | Path, apps: Sequence[str] | None = None) -> Path:
    """cwnd and ssthresh, in segments, against time, for each traced connection."""
    path = _check_out(out)
    tr = res.traces
    if apps:
        tr = tr[tr.app.isin(list(apps))]
    if tr.empty:
        raise ScenarioError("no trace rows for this figure: set [trace] on_change = true or an interval")
    mss = int(res.scenario.tcp.mss)
    fig, ax = plt.subplots(figsize=(8, 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (flow, g) in enumerate(tr.groupby("flow", sort=True)):
        c = colors[k % len(colors)]
        label = f"{g.app.iloc[0]} (flow {flow})"
        ax.step(g.t, g.cwnd / mss, where="post", color=c, label=f"{label} cwnd")
        ss = g.ssthresh.astype(float) / mss
        if ss.notna().any():
            ax.step(g.t, ss, where="post", color=c, linestyle="--", alpha=0.7, label=f"{label} ssthresh")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("segments")
    ax.set_title("Congestion window and slow-start threshold")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _default_link(doc: dict[str, Any]) -> str | None:
    sc = load(doc)
    return "r0->r1" if isinstance(sc.topology, Dumbbell) else None


def plot_run(kind: str, scenario: str | Path | dict[str, Any], out: str | Path, apps: Sequence[str] | None = None,
             link: str | None = None, overrides: dict[str, Any] | None = None, seed: int | None = None) -> Path:  # fmt: skip
    """Run `scenario` with the tracing a figure needs and draw it ('seq' or 'cwnd')."""
    _check_out(out)
    doc = scenario if isinstance(scenario, dict) else read_toml(scenario)
    doc = apply_overrides(doc, overrides)
    if seed is not None:
        doc = apply_overrides(doc, {"sim.seed": seed})
    if kind == "seq":
        link = link or _default_link(doc)
        if link is None:
            raise ScenarioError([FieldProblem("--link", "required for an explicit topology, e.g. --link r1->k1")])
        doc = apply_overrides(doc, {"trace.links": [link]})
        return seq_plot(run(doc), out, apps, link)
    if kind == "cwnd":
        extra: dict[str, Any] = {"trace.on_change": True}
        if apps:
            extra["trace.apps"] = list(apps)
        return cwnd_plot(run(apply_overrides(doc, extra)), out, apps)
    raise ScenarioError([FieldProblem("plot", "unknown figure; allowed: seq, cwnd", kind, True)])


def store_plot(store_path: str | Path, x: str, y: str, out: str | Path, hue: str | None = None, stat: str = "mean", conf: float = 0.95) -> Path:
    """A line plot of a per-run metric `y` against factor `x` from a results
    store, one line per level of `hue`, with confidence-interval error bars
    (t-interval of the mean, or bootstrap interval of the median)."""
    from .analysis import summarize
    from .store import Store, resolve_factor

    path = _check_out(out)
    if stat not in ("mean", "median"):
        raise ScenarioError([FieldProblem("--stat", "allowed: mean, median", stat, True)])
    st = Store(store_path, read_only=True)
    try:
        df = st.metric_table(y)
    finally:
        st.close()
    cols = list(df.columns)
    xs = resolve_factor(cols, x)
    by = [xs] + ([resolve_factor(cols, hue)] if hue else [])
    summary = summarize(df, by, y, conf=conf)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = summary.groupby(by[1], sort=True) if hue else [(None, summary)]
    for level, g in groups:
        g = g.sort_values(xs)
        center = g[stat]
        lo, hi = g[f"{stat}_lo"], g[f"{stat}_hi"]
        xv = g[xs].astype(str) if g[xs].dtype == object else g[xs]
        ax.errorbar(xv, center, yerr=[center - lo, hi - center], marker="o", capsize=3, label=None if level is None else f"{hue} = {level}")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} ({stat}, {int(conf * 100)}% CI)")
    ax.grid(True, alpha=0.3)
    if hue:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
