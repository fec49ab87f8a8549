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
from .errors import FieldProblem, ScenarioError, UsageError  # noqa: E402
from .scenario import Scenario, load  # noqa: E402
from .units import format_percent  # noqa: E402

FORMATS = (".png", ".svg", ".pdf")


def save_figure(fig: Any, path: Path, dpi: float | None = None) -> Path:
    """Lay out `fig`, write it to `path` (at `dpi`, or matplotlib's default),
    close it, and return the path. An SVG or a PDF carries no creation date,
    and an SVG names its elements from a fixed salt, so the same figure gives
    the same bytes."""
    fig.tight_layout()
    # tight_layout leaves a placeholder layout engine behind, for which
    # savefig lays the whole figure out once more before it draws it (a
    # third pass, with every text's layout and a legend's best place); the
    # layout is done, so drop the engine.
    fig.set_layout_engine(None)
    suffix = Path(path).suffix.lower()
    undated = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(suffix)
    with matplotlib.rc_context({"svg.hashsalt": "tcplab"} if suffix == ".svg" else {}):
        fig.savefig(path, dpi=dpi, metadata=undated)
    plt.close(fig)
    return path


def _check_out(out: str | Path) -> Path:
    """The figure's path, refused before anything runs when its format is
    not one of FORMATS or its directory does not exist."""
    p = Path(out)
    if p.suffix.lower() not in FORMATS:
        raise UsageError([FieldProblem("--out", f"unknown figure format; allowed: {', '.join(FORMATS)}", str(out), True)])
    if not p.parent.is_dir():
        raise UsageError([FieldProblem("--out", f"no such directory: {str(p.parent)!r}", str(out), True)])
    return p


#: Up to this many numeric levels, a store's figure puts an x tick at each.
MAX_LEVEL_TICKS = 12

#: Up to this many connections, a figure tells them apart: a colour each
#: (seq: for the connections of an application of several, as a burst's);
#: past it, a colour per application.
MAX_FLOWS_APART = 10


def _flow_styles(table: Any, own_label: Any) -> dict[Any, tuple[str, str]]:
    """Each connection's (colour, legend name) for a table with flow and app
    columns: a colour and name of its own (`own_label(flow, app)`) up to
    MAX_FLOWS_APART connections; past that, its application's colour and
    "APP (N connections)", so the legend stays short; and past
    MAX_FLOWS_APART applications, one name for them all, as the colours
    repeat."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    pairs = table[["flow", "app"]].drop_duplicates().sort_values("flow")
    if len(pairs) <= MAX_FLOWS_APART:
        return {f: (colors[k % len(colors)], own_label(f, a)) for k, (f, a) in enumerate(zip(pairs.flow, pairs.app))}
    count = pairs.app.value_counts()
    index = {a: i for i, a in enumerate(dict.fromkeys(pairs.app))}
    if len(index) > MAX_FLOWS_APART:
        name = f"{len(index)} applications, {len(pairs)} connections (colours repeat)"
        return {f: (colors[index[a] % len(colors)], name) for f, a in zip(pairs.flow, pairs.app)}
    return {f: (colors[index[a] % len(colors)], f"{a} ({count[a]} connections)") for f, a in zip(pairs.flow, pairs.app)}


class NothingToDraw(ScenarioError):
    """The run left the figure nothing to draw (exit status 2, as a bad
    scenario: the scenario or the options chose a run without it)."""

    def __init__(self, message: str):
        super().__init__([FieldProblem("figure", message)])
        Exception.__init__(self, f"nothing to draw: {message}")


def _who(apps: Sequence[str] | None) -> str:
    return ("application " if len(apps) == 1 else "applications ") + ", ".join(apps) if apps else "any application"


def seq_plot(res: Result, out: str | Path, apps: Sequence[str] | None = None, link: str | None = None, mss: int | None = None) -> Path:
    """Packet number against time at a logged link, one colour per
    application (or connection: see MAX_FLOWS_APART): transmissions as dots,
    retransmissions as circles, drops as crosses (the ns-2 test-suite figure)."""
    path = _check_out(out)
    apps = _check_apps(res.scenario.app_names(), apps)
    if link is not None and link not in res.scenario.link_names():
        raise UsageError([FieldProblem("--link", f"no such link; links: {_few(sorted(res.scenario.link_names()), 'link directions')}", link, True)])
    if mss is not None and (isinstance(mss, bool) or not isinstance(mss, int) or mss < 1):
        raise UsageError([FieldProblem("mss", "expected the segment size in bytes that numbers the packets, at least 1 (None: the scenario's)", mss, True)])
    pk = res.packets
    pk = pk[pk.kind == "data"]
    if link is not None:
        pk = pk[pk.link == link]
    if apps:
        pk = pk[pk.app.isin(list(apps))]
    if pk.empty:
        raise NothingToDraw(f"no data packets of {_who(apps)} crossed {link or 'a logged link'} in the run's {res.engine['sim_seconds']:g} s "
                            "(or [trace] links does not log that link)")
    seg = mss or int(res.scenario.tcp.mss)
    fig, ax = plt.subplots(figsize=(8, 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # A colour per application; per connection where an application has
    # several (a burst's flows) and there are few enough to tell apart.
    flows = pk.groupby("app").flow.nunique()
    by_flow = bool((flows > 1).any()) and int(flows.sum()) <= MAX_FLOWS_APART
    groups = pk.groupby(["app", "flow"], sort=True) if by_flow else pk.groupby("app", sort=True)
    # Past MAX_FLOWS_APART applications the colours repeat: the legend names
    # the marks once instead of every application's.
    many = len(flows) > MAX_FLOWS_APART
    for k, (key, g) in enumerate(groups):
        app = f"{key[0]} flow {key[1]}" if by_flow and flows[key[0]] > 1 else key[0] if by_flow else key
        c = colors[k % len(colors)]
        sent = g[(g.event == "dequeue") & ~g.retx]
        retx = g[(g.event == "dequeue") & g.retx]
        drops = g[g.event == "drop"]
        ax.scatter(sent.t, sent.seq // seg, s=6, color=c, label=None if many else f"{app} packets")
        if len(retx):
            ax.scatter(retx.t, retx.seq // seg, s=40, facecolors="none", edgecolors=c, label=None if many else f"{app} retransmissions")
        if len(drops):
            ax.scatter(drops.t, drops.seq // seg, s=50, marker="x", color="red" if k == 0 else c, label=None if many else f"{app} drops")
    if many:
        ax.scatter([], [], s=6, color="grey", label=f"packets ({len(flows)} applications; colours repeat)")
        ax.scatter([], [], s=40, facecolors="none", edgecolors="grey", label="retransmissions")
        ax.scatter([], [], s=50, marker="x", color="grey", label="drops")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"packet number (sequence / {seg} bytes)")
    ax.set_title(f"Packets leaving {link or pk.link.iloc[0]}")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return save_figure(fig, path)


def cwnd_plot(res: Result, out: str | Path, apps: Sequence[str] | None = None) -> Path:
    """cwnd and ssthresh, in segments, against time, for each traced connection."""
    path = _check_out(out)
    apps = _check_apps(res.scenario.app_names(), apps)
    tr = res.traces
    if apps:
        tr = tr[tr.app.isin(list(apps))]
    if tr.empty:
        raise NothingToDraw(f"no trace rows of {_who(apps)} in the run's {res.engine['sim_seconds']:g} s: no traced connection opened "
                            "(or [trace] sets neither on_change nor an interval)")
    mss = int(res.scenario.tcp.mss)
    fig, ax = plt.subplots(figsize=(8, 5))
    styles = _flow_styles(tr, lambda f, a: f"{a} (flow {f})")
    labelled: set[str] = set()

    def label(text: str) -> str | None:  # a legend entry once per text
        if text in labelled:
            return None
        labelled.add(text)
        return text

    for flow, g in tr.groupby("flow", sort=True):
        c, name = styles[flow]
        ax.step(g.t, g.cwnd / mss, where="post", color=c, lw=0.8 if len(styles) > MAX_FLOWS_APART else None, label=label(f"{name} cwnd"))
        ss = g.ssthresh.astype(float) / mss
        if ss.notna().any():
            ax.step(g.t, ss, where="post", color=c, linestyle="--", alpha=0.7, label=label(f"{name} ssthresh"))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("segments")
    ax.set_title("Congestion window and slow-start threshold")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return save_figure(fig, path)


#: The web100 views: what `tcplab plot web100-VIEW` and the HSTCP study draw.
WEB100_VIEWS = {
    "cwnd": "CurCwnd against time",
    "bw": "instantaneous bandwidth against time",
    "bw-cwnd": "instantaneous bandwidth against CurCwnd",
    "rtt": "histogram of SampleRTT",
    "acks": "ACKs in against data packets out, per interval",
}


def web100_plot(panels: dict[str, Any], out: str | Path, view: str) -> Path:
    """One web100 view (see WEB100_VIEWS), one panel per entry of `panels`
    (title -> web100 table); each connection, or each value of a `run`
    column, is one series."""
    if view not in WEB100_VIEWS:
        raise UsageError([FieldProblem("view", f"unknown web100 view; allowed: {', '.join(WEB100_VIEWS)}", view, True)])
    path = _check_out(out)
    if all(w.empty for w in panels.values()):
        raise NothingToDraw("no web100 rows: no connection was open at a sample time (or [trace] web100 is off)")
    if view == "rtt" and all(w.SampleRTT.isna().all() for w in panels.values()):
        raise NothingToDraw("no SampleRTT values: no connection timed a segment")
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False, sharey=view != "rtt")
    for ax, (title, w) in zip(axes[0], panels.items()):
        key = "run" if "run" in w.columns else "flow"
        styles = _flow_styles(w, lambda f, a: f"{a} (flow {f})") if key == "flow" else {n: (None, f"run {n}") for n in w.run.unique()}
        groups = w.groupby(key, sort=True)
        if view == "rtt":  # one histogram per legend entry, of all its connections' samples
            series_of = w[key].map(lambda n: styles[n][1])
            groups = ((s, w[series_of == s]) for s in dict.fromkeys(styles[n][1] for n in sorted(styles)))
            styles = {series: (color, series) for color, series in reversed(list(styles.values()))}  # the first colour
        labelled: set[str] = set()
        for name, g in groups:
            color, series = styles[name]
            label = None if series in labelled else series
            d_acks, d_data = g.AckPktsIn.diff(), g.DataPktsOut.diff()
            if view == "cwnd":
                ax.plot(g.t, g.CurCwnd / 1e3, lw=0.8, color=color, label=label)
                ax.set_xlabel("time (s)"), ax.set_ylabel("CurCwnd (kB)")
            elif view == "bw":
                ax.plot(g.t, g.InstantaneousBW / 1e6, lw=0.6, color=color, label=label)
                ax.set_xlabel("time (s)"), ax.set_ylabel("instantaneous bandwidth (Mb/s)")
            elif view == "bw-cwnd":
                ax.scatter(g.CurCwnd / 1e3, g.InstantaneousBW / 1e6, s=3, alpha=0.5, color=color, label=label)
                ax.set_xlabel("CurCwnd (kB)"), ax.set_ylabel("instantaneous bandwidth (Mb/s)")
            elif view == "rtt":
                rtt = g.SampleRTT.dropna()
                if rtt.empty:  # a connection that never timed a segment
                    continue
                ax.hist(rtt, bins=[x * 0.5 for x in range(int(rtt.min() * 2) - 1, int(rtt.max() * 2) + 3)], histtype="step", color=color, label=label)
                ax.set_xlabel("SampleRTT (ms)"), ax.set_ylabel("samples")
            else:
                ax.scatter(d_data, d_acks, s=3, alpha=0.5, color=color, label=label)
                ax.set_xlabel("DataPktsOut per interval"), ax.set_ylabel("AckPktsIn per interval")
            labelled.add(series)  # drawn: its legend entry is made
        if title:  # a panel per run: the figure's title names the view
            ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=7, markerscale=3)
    fig.suptitle(WEB100_VIEWS[view])
    return save_figure(fig, path)


def _few(names: Sequence[str], what: str) -> str:
    """Up to ten of `names`, and how many there are past that."""
    return ", ".join(names[:10]) + (f", ... ({len(names)} {what})" if len(names) > 10 else "")


def _check_apps(names: Sequence[str], apps: str | Sequence[str] | None) -> list[str] | None:
    """`apps` (the --app options) as a list, each checked against the
    scenario's application `names`; one name alone is a list of one (it was
    taken letter by letter)."""
    if apps is None:
        return None
    apps = [apps] if isinstance(apps, str) else list(apps)
    unknown = [a for a in apps if a not in names]
    if unknown:
        raise UsageError([FieldProblem("--app", f"unknown application; allowed: {_few(names, 'applications')}", a, True) for a in unknown])
    return apps


def plot_run(kind: str, scenario: "str | Path | dict[str, Any] | Scenario", out: str | Path, apps: Sequence[str] | None = None,
             link: str | None = None, overrides: dict[str, Any] | None = None, seed: int | None = None) -> Path:  # fmt: skip
    """Run `scenario` (what tcplab.run takes) with the tracing a figure needs
    and draw it ('seq', 'cwnd', or 'web100-VIEW' for a view of WEB100_VIEWS)."""
    _check_out(out)
    # As tcplab.run loads it: a seed given here and in the overrides as well
    # is refused (the seed won), and a list of overrides is a TypeError that
    # says what they are (it was an AttributeError).
    sc = load(scenario, overrides, seed)
    apps = _check_apps(sc.app_names(), apps)
    if kind == "seq":
        # The bottleneck by default: a dumbbell's r0->r1, the wireless link toward the client.
        given = link
        link = link or {"dumbbell": "r0->r1", "wireless": "gw->m0"}.get(sc.topology.type)
        names = sorted(sc.link_names()) if link is None or link not in sc.link_names() else []
        shown = _few(names, "link directions")
        if link is None:
            raise UsageError([FieldProblem("--link", f"required for an explicit topology; its links: {shown}")])
        if names:
            raise UsageError([FieldProblem("--link", f"no such link; links: {shown}", given, True)])
        return seq_plot(run(sc, {"trace.links": [link]}), out, apps, link)
    if kind == "cwnd":
        extra: dict[str, Any] = {"trace.on_change": True}
        if apps:
            extra["trace.apps"] = list(apps)
        return cwnd_plot(run(sc, extra), out, apps)
    if kind.startswith("web100-") and kind[7:] in WEB100_VIEWS:
        w = run(sc, {"trace.web100": True}).web100
        if apps:
            w = w[w.app.isin(list(apps))]
        return web100_plot({"": w}, out, kind[7:])
    allowed = ", ".join(["seq", "cwnd"] + [f"web100-{v}" for v in WEB100_VIEWS])
    raise UsageError([FieldProblem("plot", f"unknown figure; allowed: {allowed}", kind, True)])


def store_plot(store_path: str | Path, x: str, y: str, out: str | Path, hue: str | None = None, stat: str = "mean", conf: float = 0.95,
               sweep: str | None = None, where: Sequence[str] = ()) -> Path:  # fmt: skip
    """A line plot of a per-run metric `y` against factor `x` from the runs of
    `sweep` in a results store (its only sweep when None), one line per level
    of `hue`, with confidence-interval error bars (t-interval of the mean, or
    bootstrap interval of the median); only the runs at the levels `where`
    gives (FACTOR=LEVEL each, as :func:`tcplab.store.select_levels` reads them)."""
    import pandas as pd

    from .analysis import count_column, level_order, pooled_factors, summarize
    from .store import Store, resolve_factor, select_levels

    path = _check_out(out)
    if stat not in ("mean", "median"):
        raise UsageError([FieldProblem("--stat", "allowed: mean, median", stat, True)])
    st = Store(store_path, read_only=True)
    try:
        df = st.metric_table(y, sweep, option="--y")
    finally:
        st.close()
    if isinstance(where, str):  # one FACTOR=LEVEL, not its characters
        where = [where]
    df = select_levels(df, y, list(where))
    cols = [c for c in df.columns if c != y]
    xs = resolve_factor(cols, x, "--x")
    by = [xs] + ([resolve_factor(cols, hue, "--hue")] if hue else [])
    if by[1:] == [xs]:
        raise UsageError([FieldProblem("--hue", f"names {xs}, the --x factor; give another factor, or no --hue", hue, True)])
    summary = summarize(df, by, y, conf=conf)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = summary.groupby(by[1], sort=True, observed=True) if hue else [(None, summary)]
    # Numbers are placed by value; other levels evenly, in the sweep's order.
    numeric = pd.api.types.is_numeric_dtype(summary[xs]) and not pd.api.types.is_bool_dtype(summary[xs])
    ticks = None if numeric else level_order(df[xs])
    for level, g in groups:
        g = g.sort_values(xs)
        center = g[stat]
        lo, hi = g[f"{stat}_lo"], g[f"{stat}_hi"]
        xv = g[xs] if ticks is None else g[xs].map(ticks.index).astype(int)
        ax.errorbar(xv, center, yerr=[center - lo, hi - center], marker="o", capsize=3, label=None if level is None else f"{hue} = {level}")
    if ticks is not None:
        ax.set_xticks(range(len(ticks)), [str(t) for t in ticks])
    elif len(levels := sorted(summary[xs].dropna().unique())) <= MAX_LEVEL_TICKS:
        # A tick at each level, not matplotlib's round numbers: IW 1, 2 and 4 had ticks at 1.5, 2.5 and 3.5.
        ax.set_xticks(levels, [f"{v:g}" for v in levels])
    ax.set_xlabel(x)
    alone = "; none for a single run" if (summary[count_column(list(df.columns))] == 1).any() else ""
    ax.set_ylabel(f"{y} ({stat}, {format_percent(conf)} CI{alone})")
    ax.grid(True, alpha=0.3)
    chosen = f"where {', '.join(where)}" if where else ""
    pooled = pooled_factors(df, by, y)  # what each point mixes, on the figure itself
    if title := "; ".join(t for t in (chosen, pooled and f"pooled over {pooled}") if t):
        ax.set_title(title, fontsize=8, wrap=True)
    if hue:
        ax.legend(fontsize=8)
    return save_figure(fig, path)
