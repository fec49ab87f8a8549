"""Järvinen, Nyrhinen, Ding and Kojo (IETF 78, 2010): a simulation study on
increasing TCP's initial window from 3 to 10 segments over EDGE, HSPA and
LTE-like links.

A burst of n simultaneous flows (n = 1, 2, 6, 18) carrying 180 kB in all
starts later than either a similar burst (workload n+n) or a long-running
bulk transfer (bulk+n), on one wireless link to one mobile client. Every
flow of a run uses IW 3 or IW 10. Each case is run 100 times, the later
burst's start drawn anew each time; the study reports the 25th percentile,
median and 75th percentile of each burst's elapsed time (start to the last
flow's completion), of Jain's index of the flows' throughputs within a
burst, and of Jain's index of the two bursts' longest flows.
"""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import Check, as_checks, check_call, check_lines, counted, finish, first_replication, jain, keep_metrics, md_table, print_table, replications_of, run_configs, save_figure, want_runs

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

#: The report's first line (`common.check_call` tells a study's output directory by it).
TITLE = "# Järvinen et al. (IETF 78, 2010), IW3 against IW10 on wireless links, reproduced with tcplab"
#: (profile, buffer) cases of the study; LTE had a BDP buffer only.
CASES = [("edge", "bdp"), ("edge", "large"), ("hspa", "bdp"), ("hspa", "large"), ("lte", "bdp")]
NS = (1, 2, 6, 18)
IWS = (3, 10)
WORKLOADS = ("n+n", "bulk+n")
TOTAL = "180kB"
INTERNET_DELAY_S = 0.011
WIRELESS_DELAY_S = {"edge": 0.250, "hspa": 0.070, "lte": 0.015}

#: The later burst starts uniformly between 2 and 6 base round trips after
#: the first traffic (the slides do not give the range). Slow start fills
#: these pipes (BDP plus buffer) in about 3 to 6 round trips, so the first
#: burst, or the bulk flow, is then at the end of slow start or early in
#: congestion avoidance. The report measures the sensitivity to this choice.
LATER_START_RTTS = (2.0, 6.0)
#: On LTE a 180 kB burst (124 segments) never fills its pipe of 250 packets:
#: it is over within one to three base round trips (52 ms), so there the
#: later burst of n+n starts within the first two, while the first burst is
#: still in slow start. (LTE's bulk flow fills its pipe as the others do.)
LTE_BURST_START_RTTS = (0.0, 2.0)


def later_start_rtts(profile: str, workload: str) -> tuple[float, float]:
    """The range, in base round trips, the later burst's start is drawn from."""
    return LTE_BURST_START_RTTS if (profile, workload) == ("lte", "n+n") else LATER_START_RTTS

#: Other start ranges the full study also runs (with SENSITIVITY_REPS replications) for the sensitivity table.
SENSITIVITY = [(1.0, 3.0), (4.0, 10.0)]
SENSITIVITY_REPS = 30

#: A burst's flows come from one server (its initial windows reach the
#: wireless link one flow after another), as the slides' "two servers" read
#: plainly; the full study also runs every flow from its own server (the
#: windows interleave at the gateway) with the main replications, since the
#: slides do not say how the flows were attached.

#: A bulk+n run stops when its later burst has finished (`sim.until`), or at
#: this time: past the 10-12 minutes a segment's 15 backed-off
#: retransmissions take (RTO from 3 s, at most 60 s), so that a burst is cut
#: off only if a flow of it gave up.
BULK_LONGEST = {"edge": "1800s", "hspa": "900s", "lte": "60s"}

#: A 2010 Linux-like TCP. SACK recovery (RFC 6675; Linux default since 2.4);
#: delayed ACKs, every second segment or after 40 ms (Linux's minimum delayed-ACK
#: timeout, TCP_DELACK_MIN); initial RTO 3 s (RFC 2988, Linux before 3.1);
#: minimum RTO 200 ms (Linux's TCP_RTO_MIN); MSS 1460; a receive window
#: (autotuned in Linux) that never limits; the window grows by a segment per
#: ACK of new data, not by bytes (Linux 2.6's default tcp_abc = 0), so slow
#: start with delayed ACKs grows 1.5 times per round trip; no handshake. The
#: receiver starts in Linux's quick-ACK mode: at a connection's first data it
#: ACKs every segment at once, for min(receive window / 2 MSS, 16) ACKs
#: (tcp_incr_quickack, TCP_MAX_QUICKACKS), 16 with a window that never limits.
#: A timeout halves the congestion window into ssthresh, but not a second time
#: in one recovery or loss (tcp_enter_loss). SACK recovery halves the window
#: as Linux 2.6 did before 3.2's PRR, by rate-halving (tcp_cwnd_down): a
#: segment less every second ACK of progress, at most pipe + 1 segment; and
#: it deems a segment lost by forward acknowledgement (tcp_fack, on by
#: default until Linux 4.11): once a SACKed byte lies 3 segments past it.
TCP = {"cc": "sack", "mss": "1460B", "delayed_ack": True, "delack_timeout": "40ms", "quickack": 16, "rto_initial": "3s",
       "rto_min": "200ms", "window": "4MB", "byte_counting": False, "timeout_ssthresh": "linux", "sack_recovery": "linux",
       "sack_loss": "fack"}  # fmt: skip

#: The congestion controls the full study also runs (SENSITIVITY_REPS
#: replications each): Linux's default of 2010, CUBIC (since 2.6.19), with and
#: without HyStart (on by default from 2.6.29). The main runs use Reno's
#: window with SACK, the controller the IW10 proposal and RFC 5681 reason about.
CC_VARIANTS = [("CUBIC", {"cc": "cubic"}), ("CUBIC + HyStart", {"cc": "cubic", "hystart": True})]

FULL = {"replications": 100}
QUICK = {"replications": 10}

#: Differences inside these bands count as no change ('0'): elapsed times
#: within 5% of IW 3's, Jain's indices within 0.02.
ELAPSED_BAND = 0.05
FAIR_BAND = 0.02


def base_rtt(profile: str) -> float:
    """The round trip's propagation delay, seconds: 2 x (11 ms + the wireless one-way delay)."""
    return 2 * (INTERNET_DELAY_S + WIRELESS_DELAY_S[profile])


def scenario(profile: str, buffer: str, workload: str, n: int, iw: int, start_rtts: tuple[float, float] | None = None,
             server_per_flow: bool = False, tcp: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """One case; with `server_per_flow`, every flow of a burst has its own
    server; `tcp` overrides TCP settings."""
    rtt = base_rtt(profile)
    lo, hi = (f"{k * rtt:.6f}s" for k in (start_rtts or later_start_rtts(profile, workload)))
    # The first traffic's servers, then the later burst's.
    k = n if server_per_flow else 1
    first_servers = [f"s{i}" for i in range(k if workload == "n+n" else 1)]
    later_servers = [f"s{len(first_servers) + i}" for i in range(k)]
    if workload == "n+n":
        first = {"type": "burst", "name": "first", "src": "s0", "dst": "m0", "flows": n, "total": TOTAL}
    else:
        first = {"type": "bulk", "name": "bulk", "src": "s0", "dst": "m0", "size": "inf"}
    later = {"type": "burst", "name": "later", "src": later_servers[0], "dst": "m0", "flows": n, "total": TOTAL, "start": {"type": "uniform", "min": lo, "max": hi}}
    for app, servers in ((first, first_servers), (later, later_servers)):
        if len(servers) > 1:
            app["extra_src"] = servers[1:]
    return {
        "sim": {"duration": "none", "seed": 1} if workload == "n+n" else {"duration": BULK_LONGEST[profile], "until": ["later"], "seed": 1},
        "topology": {"type": "wireless", "profile": profile, "buffer": buffer, "servers": len(first_servers) + len(later_servers)},
        "tcp": {**TCP, **(tcp or {}), "iw": iw},
        "apps": [first, later],
    }


def configurations(start_rtts: tuple[float, float] | None = None, server_per_flow: bool = False,
                   tcp: dict[str, Any] | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:  # fmt: skip
    out = []
    for workload in WORKLOADS:
        for profile, buffer in CASES:
            for n in NS:
                for iw in IWS:
                    levels = {"workload": workload, "profile": profile, "buffer": buffer, "n": n, "iw": iw}
                    out.append((levels, scenario(profile, buffer, workload, n, iw, start_rtts, server_per_flow, tcp)))
    return out


#: Runs go through the sweep machinery, which gives replication r of every
#: configuration the seed derived from (1, r), or from (S, r) with `--set sim.seed=S`.
SWEEP_SEEDS = True


def scenarios(quick: bool = False) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each case's scenario as its first replication runs (`--export-scenarios`)."""
    return first_replication(configurations())


# ---------------------------------------------------------------------------
# Per-run metrics.


def burst_metrics(flows: Any) -> dict[str, float]:
    """One burst's metrics from its flows (a DataFrame, or columns by name:
    start_s, end_s, fct_s, bytes_delivered, completed, timeouts, retx_pkts):
    elapsed time (start to the last completion; NaN if a flow did not
    complete), Jain's index of the flows' throughputs (NaN for one flow), the
    longest flow's throughput, timeouts and retransmissions."""
    import numpy as np

    fct = np.asarray(flows["fct_s"], dtype=float)
    done = bool(np.asarray(flows["completed"], dtype=bool).all())
    thr = np.asarray(flows["bytes_delivered"]) * 8 / fct
    nan = float("nan")
    return {
        "elapsed": float(np.max(flows["end_s"]) - np.min(flows["start_s"])) if done else nan,
        "fair_within": jain(thr) if done and len(fct) > 1 else nan,
        "longest_tput": float(thr[int(np.argmax(fct))]) if done else nan,
        "timeouts": float(np.sum(flows["timeouts"])),
        "retx": float(np.sum(flows["retx_pkts"])),
        "completed": float(done),
        "n_flows": float(len(fct)),
    }


def keep_run_metrics(store: str, per: "pd.DataFrame") -> None:
    """Keep each run's burst metrics in the store, one value per run, as
    iw10.elapsed_first_s, iw10.elapsed_later_s, iw10.fair_within_first,
    iw10.fair_within_later and iw10.fair_between (NaN where the run has no
    such burst, as bulk+n has no first one, or the burst did not finish)."""
    wide = per.pivot(index="run_id", columns="burst", values=["elapsed", "fair_within"])
    wide.columns = [f"{m}_{b}" for m, b in wide.columns]
    wide = wide.reindex(columns=[f"{m}_{b}" for m in ("elapsed", "fair_within") for b in ("first", "later")])
    wide["fair_between"] = per.groupby("run_id").fair_between.first()
    names = {"elapsed_first": "elapsed_first_s", "elapsed_later": "elapsed_later_s", "fair_within_first": "fair_within_first",
             "fair_within_later": "fair_within_later", "fair_between": "fair_between"}  # fmt: skip
    keep_metrics("iw10", store, wide.reset_index(), names)


def per_run(store: str, run_ids: "Sequence[str]") -> "pd.DataFrame":
    """One row per run and burst: the factors, the burst ('first', 'later';
    'bulk' is not a burst) and its metrics, with fairness between the bursts
    (Jain's index of their longest flows' throughputs) on both rows of n+n runs."""
    import json

    import numpy as np
    import pandas as pd

    from ..store import open_read

    con = open_read(store)
    try:
        want_runs(con, run_ids)
        f = con.execute(
            "SELECT f.run_id, r.factors, f.app, f.start_s, f.end_s, f.fct_s, f.bytes_delivered, f.completed, f.timeouts, f.retx_pkts "
            "FROM flows f JOIN runs r USING (run_id) JOIN wanted USING (run_id) WHERE r.status = 'ok' AND f.app IN ('first', 'later') "
            "ORDER BY f.run_id, f.app, f.id"
        ).df()
    finally:
        con.close()
    # Each (run, burst)'s flows are one slice of the columns, in the flows' order.
    cols = {c: f[c].to_numpy() for c in ("start_s", "end_s", "fct_s", "bytes_delivered", "completed", "timeouts", "retx_pkts")}
    run, app, factors = f.run_id.to_numpy(), f.app.to_numpy(), f.factors.to_numpy()
    starts = np.flatnonzero(np.r_[True, (run[1:] != run[:-1]) | (app[1:] != app[:-1])]) if len(f) else np.empty(0, int)
    ends = np.r_[starts[1:], len(f)]
    levels: dict[str, dict[str, Any]] = {}
    rows = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        run_id = run[a]
        if run_id not in levels:
            levels[run_id] = json.loads(factors[a])
        rows.append({"run_id": run_id, **levels[run_id], "burst": app[a], **burst_metrics({c: v[a:b] for c, v in cols.items()})})
    df = pd.DataFrame(rows)
    # Rows come by run, 'first' before 'later': a run's two bursts are neighbours.
    longest, ids = df.longest_tput.to_numpy(), df.run_id.to_numpy()
    between: dict[str, float] = {}
    for i, run_id in enumerate(ids):
        pair = i + 1 < len(ids) and ids[i + 1] == run_id and (i == 0 or ids[i - 1] != run_id) and (i + 2 >= len(ids) or ids[i + 2] != run_id)
        if pair and not np.isnan(longest[i : i + 2]).any():
            between[run_id] = jain(longest[i : i + 2])
    df["fair_between"] = [between.get(r, float("nan")) for r in ids]
    return df


# ---------------------------------------------------------------------------
# Quartiles, signs, and the slides' tables.


def slides_signs() -> list[dict[str, Any]]:
    text = resources.files("tcplab.studies").joinpath("data/jarvinen10_signs.csv").read_text(encoding="utf-8")
    rows = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    return [{**r, "n": int(r["n"])} for r in csv.DictReader(rows)]


def sign(iw3: float, iw10: float, metric: str) -> str:
    """'+' where IW 10 improves on IW 3 beyond the noise band, '-' where it is worse, '0' within it."""
    if iw3 != iw3 or iw10 != iw10 or iw3 == iw10 == float("inf"):
        return "?"
    if metric == "elapsed":
        if float("inf") in (iw3, iw10):  # among the runs that had not finished
            return "+" if iw3 == float("inf") else "-"
        d = (iw3 - iw10) / iw3 if iw3 > 0 else 0.0
        band = ELAPSED_BAND
    else:
        d, band = iw10 - iw3, FAIR_BAND
    return "+" if d > band else "-" if d < -band else "0"


def quartile_table(df: "pd.DataFrame", metric: str) -> "pd.DataFrame":
    """Per case (workload, profile, buffer, n, burst): IW 3's and IW 10's
    quartiles of `metric`, the signs at each quartile, and the runs in which
    the burst had not finished when the run ended (`unfinished`). For the
    elapsed time those runs count as slower than every finished one
    (right-censored: a quartile among them is `inf`); the fairness metrics
    leave them out."""
    import pandas as pd

    import numpy as np

    from ..analysis import censored_percentiles

    d = df if metric != "fair_between" else df[(df.burst == "later") & (df.workload == "n+n")].assign(burst="-")
    rows = []
    for key, g in d.groupby(["workload", "profile", "buffer", "n", "burst"], sort=False):
        row: dict[str, Any] = dict(zip(["workload", "profile", "buffer", "n", "burst"], key))
        iw, values = g.iw.to_numpy(), g[metric].to_numpy(dtype=float)
        q = {}
        for w in IWS:
            x = values[iw == w]
            have = x[~np.isnan(x)]
            # Linear interpolation between order statistics, as pandas' quantile.
            if metric == "elapsed":
                q[w] = censored_percentiles(x, (25, 50, 75))
            else:
                q[w] = [float(v) for v in np.percentile(have, (25, 50, 75))] if have.size else [float("nan")] * 3
            row.update({f"iw{w}_q1": q[w][0], f"iw{w}_median": q[w][1], f"iw{w}_q3": q[w][2]})
            row[f"iw{w}_unfinished"] = int(x.size - have.size)
        row["signs"] = "".join(sign(a, b, metric) for a, b in zip(q[3], q[10]))
        rows.append(row)
    out = pd.DataFrame(rows)
    if metric != "elapsed":
        out = out[~((out.n == 1) & (metric == "fair_within"))]
    # In the slides' order (the runs come from the store in no useful one):
    # workload, then link and buffer as CASES lists them, n, first burst first.
    rank = pd.DataFrame({"w": out.workload.map(WORKLOADS.index), "c": [CASES.index(c) for c in zip(out.profile, out.buffer)],
                         "n": out.n, "b": out.burst.map(("first", "later", "-").index)}, index=out.index)  # fmt: skip
    return out.loc[rank.sort_values(["w", "c", "n", "b"], kind="stable").index].reset_index(drop=True)


def compare(tables: dict[str, "pd.DataFrame"]) -> "pd.DataFrame":
    """Every cell the slides show with three signs, ours beside it."""
    import pandas as pd

    rows = []
    for s in slides_signs():
        t = tables[s["table"]]
        m = t[(t.workload == s["workload"]) & (t.burst == s["burst"]) & (t.profile == s["profile"]) & (t.buffer == s["buffer"]) & (t.n == s["n"])]
        ours = m.signs.iloc[0] if len(m) else "???"
        rows.append({**s, "ours": ours, "uniform": s["signs"] in ("+++", "---"), "median_agrees": ours[1] == s["signs"][1],
                     "all_agree": ours == s["signs"]})  # fmt: skip
    return pd.DataFrame(rows)


def tables(per: "pd.DataFrame") -> dict[str, "pd.DataFrame"]:
    t = {m: quartile_table(per, m) for m in ("elapsed", "fair_within", "fair_between")}
    t["slides"] = compare(t)
    return t


# ---------------------------------------------------------------------------
# Checks: the sign tables, the slides' four conclusions, the named cases.


def _count(t: "pd.DataFrame", mask: Any, pos: int = 1) -> tuple[int, int, int]:
    s = t[mask].signs.str[pos]
    return int((s == "+").sum()), int((s == "-").sum()), int(len(s))


def checks(t: dict[str, "pd.DataFrame"], per: "pd.DataFrame") -> list[Check]:
    out: list[Check] = []
    cmp = t["slides"]
    u = cmp[cmp.uniform]
    agree = int(u.median_agrees.sum())
    out.append(("Sign tables: where the slides show +++ or ---, our median's sign agrees in at least 75% of cells",
                agree >= 0.75 * len(u), f"{agree} of {len(u)} ({100 * agree / max(len(u), 1):.0f}%); all {len(cmp)} three-sign cells: "
                f"median {int(cmp.median_agrees.sum())}, all three quartiles {int(cmp.all_agree.sum())}"))  # fmt: skip
    el = t["elapsed"]
    # Each conclusion holds when, at the median, the cells that move its way
    # outnumber the cells that move the other way (the rest are within the band).
    p, m, n = _count(el, el.n <= 2)
    out.append(("Conclusion 1: with few flows (n = 1, 2) IW10 improves the elapsed time (at the median, better in more cells than worse)", p > m,
                f"better in {p}, worse in {m} of {n} cells"))  # fmt: skip
    p, m, n = _count(el, (el.n == 18) & (el.workload == "n+n"))
    out.append(("Conclusion 2: with many flows (18+18) IW10 tends to make the elapsed time worse (at the median, worse in more cells than better)", m > p,
                f"worse in {m}, better in {p} of {n} cells (both bursts, every link)"))  # fmt: skip
    fb = t["fair_between"]
    p, m, n = _count(fb, fb.n > 0)
    out.append(("Conclusion 3: the later-starting traffic's fairness (between bursts) improves with IW10 (at the median, better in more cells than worse)", p > m,
                f"better in {p}, worse in {m} of {n} cells"))  # fmt: skip
    fw = t["fair_within"]
    p, m, n = _count(fw, fw.n > 1)
    out.append(("Conclusion 4: fairness within a burst is worse with IW10 (at the median, worse in more cells than better)", m > p, f"worse in {m}, better in {p} of {n} cells"))
    return as_checks(out)


def named_cases(t: dict[str, "pd.DataFrame"], per: "pd.DataFrame") -> list[str]:
    """How the slides' per-case remarks fare, with the figures."""
    import numpy as np

    nan = float("nan")

    def med(metric: str, **k: Any) -> tuple[float, float]:
        g = per
        for a, v in k.items():
            g = g[g[a] == v]
        return tuple(float(g[g.iw == iw][metric].median()) for iw in IWS)  # type: ignore[return-value]

    def mean(metric: str, **k: Any) -> tuple[float, float]:
        g = per
        for a, v in k.items():
            g = g[g[a] == v]
        return tuple(float(g[g.iw == iw][metric].mean()) for iw in IWS)  # type: ignore[return-value]

    def verdict(ok: bool) -> str:
        return "**holds**" if ok else "**does not hold**"

    lines = []
    to = mean("timeouts", workload="n+n", profile="hspa", buffer="bdp", n=2)
    el_f, el_l = med("elapsed", workload="n+n", profile="hspa", buffer="bdp", n=2, burst="first"), med("elapsed", workload="n+n", profile="hspa", buffer="bdp", n=2, burst="later")
    fb = med("fair_between", workload="n+n", profile="hspa", buffer="bdp", n=2, burst="later")
    ok = to[1] > to[0] and (el_f[1] > el_f[0] or el_l[1] > el_l[0]) and fb[1] < fb[0]
    lines.append(f"- **HSPA, BDP buffer, 2+2** (slides: an IW10 overload causes a timeout; elapsed time and fairness suffer): {verdict(ok)} "
                 f"(criterion: more timeouts, a burst slower and fairness between bursts lower with IW10). Timeouts per burst "
                 f"{to[0]:.2f} with IW3, {to[1]:.2f} with IW10; median elapsed first burst {el_f[0]:.2f} -> {el_f[1]:.2f} s, later burst "
                 f"{el_l[0]:.2f} -> {el_l[1]:.2f} s; median fairness between bursts {fb[0]:.3f} -> {fb[1]:.3f}.")  # fmt: skip
    for n in (6, 18):
        rx = mean("retx", workload="n+n", profile="lte", buffer="bdp", n=n)
        e1 = med("elapsed", workload="n+n", profile="lte", buffer="bdp", n=n, burst="first")
        e2 = med("elapsed", workload="n+n", profile="lte", buffer="bdp", n=n, burst="later")
        ok = rx[1] > rx[0] and e1[1] > e1[0] and e2[1] > e2[0]
        case = per[(per.workload == "n+n") & (per.profile == "lte") & (per.buffer == "bdp") & (per.n == n)]
        # Runs (both bursts) that retransmitted anything, and the slowest burst, by IW.
        lossy = [int(case[case.iw == iw].groupby("run_id").retx.sum().gt(0).sum()) for iw in IWS]
        runs = [int(case[case.iw == iw].run_id.nunique()) for iw in IWS]
        worst = [float(np.nanmax(case[case.iw == iw].elapsed)) if len(case[case.iw == iw]) else nan for iw in IWS]
        why = ""
        if rx[1] == 0 and rx[0] == 0:
            why = " No run loses a packet with either IW."
        elif not ok and rx[1] > rx[0] and e1[1] <= e1[0] and e2[1] <= e2[0]:
            # Until stop 70 this said the losses were recovered within the
            # burst: the runs that lose take seconds, but are too few for the median.
            why = (f" IW10 retransmits in {lossy[1]} of its {runs[1]} runs (IW3 in {lossy[0]} of {runs[0]}), those whose later burst "
                   f"starts while the first one's windows are still queued. A burst in those runs takes up to {worst[1] * 1e3:.0f} ms, "
                   f"against at most {worst[0] * 1e3:.0f} ms with IW3 (a flow whose whole first window is lost waits out its initial "
                   "RTO), but they are too few to move the median.")  # fmt: skip
        lines.append(f"- **LTE, {n}+{n}** (slides: IW10 causes losses and reduces performance): {verdict(ok)} (criterion: more "
                     f"retransmissions and both bursts slower with IW10). Retransmissions per burst {rx[0]:.1f} with IW3, {rx[1]:.1f} with "
                     f"IW10; median elapsed first burst {e1[0] * 1e3:.0f} -> {e1[1] * 1e3:.0f} ms, later {e2[0] * 1e3:.0f} -> {e2[1] * 1e3:.0f} ms."
                     + why)  # fmt: skip
    el = t["elapsed"]
    edge = el[(el.profile == "edge") & (el.workload == "n+n")]
    first, later = edge[edge.burst == "first"], edge[edge.burst == "later"]
    yields = int((first.signs.str[1] == "-").sum())
    ok1 = yields > len(first) / 2
    l1 = later[later.n == 1].signs.str[1].eq("+").all()
    lmore = int(later[later.n > 1].signs.str[1].eq("+").sum())
    fmt = lambda d: ", ".join(f"{r.buffer} {r.n}+{r.n}: {r.signs}" for r in d.sort_values(["buffer", "n"]).itertuples())  # noqa: E731
    lines.append(f"- **EDGE, the first-starting burst yields**: {verdict(ok1)} (criterion: its median elapsed time worse with IW10 in most "
                 f"cells): worse in {yields} of {len(first)} cells ({fmt(first)}).")  # fmt: skip
    lines.append(f"- **EDGE, only 1+1 improves the later burst**: {verdict(l1 and lmore == 0)} (criterion: the later burst's median better "
                 f"with IW10 at n = 1 and not at n > 1): {fmt(later)}.")  # fmt: skip
    return lines


# ---------------------------------------------------------------------------
# Figures, printed tables, report.


def figures(per: "pd.DataFrame", out_dir: Path) -> list[Path]:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    specs = [("elapsed", "n+n", "elapsed time (s)"), ("elapsed", "bulk+n", "elapsed time (s)"),
             ("fair_within", "n+n", "Jain's index within the burst"), ("fair_between", "n+n", "Jain's index between bursts")]  # fmt: skip
    # Each box's runs, in the runs' order, found in one pass instead of a
    # filter of the whole table per box.
    cols = ["workload", "profile", "buffer", "burst", "n", "iw"]
    rows_of = per.groupby(cols, sort=False).indices
    none = np.array([], dtype=np.int64)
    for metric, workload, ylabel in specs:
        bursts = ["later"] if workload == "bulk+n" or metric == "fair_between" else ["first", "later"]
        fig, axes = plt.subplots(len(bursts), len(CASES), figsize=(3.2 * len(CASES), 3.3 * len(bursts)), squeeze=False)
        values = per[metric]
        done = per["completed"].to_numpy() == 1
        for r, burst in enumerate(bursts):
            for c, (profile, buffer) in enumerate(CASES):
                ax = axes[r][c]
                data, pos, colors, left_out = [], [], [], []
                for k, n in enumerate(NS):
                    for j, iw in enumerate(IWS):
                        idx = rows_of.get((workload, profile, buffer, burst, n, iw), none)
                        runs = values.iloc[idx]
                        data.append(runs.dropna().to_numpy())
                        # A burst of one flow has no index within it (NaN)
                        # though it finished: it was counted as unfinished.
                        left_out.append(int((~done[idx]).sum()) if metric == "fair_within" else len(runs) - len(data[-1]))
                        pos.append(3 * k + j)
                        colors.append("tab:blue" if iw == 3 else "tab:orange")
                bp = ax.boxplot(data, positions=pos, widths=0.8, patch_artist=True, showfliers=False)
                for patch, col in zip(bp["boxes"], colors):
                    patch.set_facecolor(col)
                for x, k in zip(pos, left_out):  # runs whose burst had not finished: not in the box
                    if k:
                        ax.annotate(f"{k}", (x, 1.0), xycoords=("data", "axes fraction"), ha="center", va="bottom", fontsize=6, color="tab:red")
                # Runs beyond the whiskers are not drawn (they would set the
                # scale: LTE 18+18's IW10 runs that lose a whole window take
                # 3.3 s, its boxes 0.06 s), but those beyond one by more than
                # the signs' noise band are counted at its cap.
                for i, (x, d) in enumerate(zip(pos, data)):
                    if not len(d):
                        continue
                    lo, hi = (bp["whiskers"][2 * i + k].get_ydata()[1] for k in (0, 1))
                    band = (lo * ELAPSED_BAND, hi * ELAPSED_BAND) if metric == "elapsed" else (FAIR_BAND, FAIR_BAND)
                    for cap, beyond, va in ((hi, d > hi + band[1], "bottom"), (lo, d < lo - band[0], "top")):
                        if beyond.any():
                            ax.annotate(f"+{int(beyond.sum())}", (x, cap), ha="center", va=va, fontsize=6, color="dimgrey")
                ax.set_xticks([3 * k + 0.5 for k in range(len(NS))], [f"{n}+{n}" if workload == "n+n" else f"bulk+{n}" for n in NS], fontsize=8)
                # Fairness between bursts is one index of both bursts, not the later one's.
                which = "" if metric == "fair_between" else f" ({burst} burst)"
                ax.set_title(f"{profile.upper()} {buffer}{which}", fontsize=9)
                if c == 0:
                    ax.set_ylabel(ylabel, fontsize=8)
                ax.grid(True, alpha=0.3)
        fig.legend([plt.Rectangle((0, 0), 1, 1, fc="tab:blue"), plt.Rectangle((0, 0), 1, 1, fc="tab:orange")], ["IW3", "IW10"], loc="upper right")
        single = "; 1+1: one flow, no index" if metric == "fair_within" else ""
        fig.suptitle(f"{ylabel}, workload {workload}: IW3 against IW10\n(boxes: quartiles of the runs that finished, whiskers 1.5 IQR; "
                     f"grey: runs beyond a whisker by more than the noise band; red: runs that did not finish{single})", fontsize=9)
        paths.append(save_figure(fig, out_dir / f"{metric}-{workload.replace('+', '_')}.png"))
    return paths


def sign_grid(t: "pd.DataFrame", workload: str, bursts: list[str]) -> "pd.DataFrame":
    """A summary table in the slides' layout: a row per link and buffer, a column per burst and n."""
    import pandas as pd

    rows = []
    for profile, buffer in CASES:
        row = {"link": f"{profile} {buffer}"}
        for b in bursts:
            for n in NS:
                m = t[(t.workload == workload) & (t.profile == profile) & (t.buffer == buffer) & (t.n == n) & (t.burst == b)]
                row[f"{b} n{n}" if b != "-" else f"n{n}"] = m.signs.iloc[0] if len(m) else "n/a"
        rows.append(row)
    return pd.DataFrame(rows)


def grids(t: dict[str, "pd.DataFrame"]) -> dict[str, "pd.DataFrame"]:
    return {
        "Elapsed time, n+n": sign_grid(t["elapsed"], "n+n", ["first", "later"]),
        "Fairness within burst, n+n": sign_grid(t["fair_within"], "n+n", ["first", "later"]),
        "Fairness between bursts (the longest flows), n+n": sign_grid(t["fair_between"], "n+n", ["-"]),
        "Elapsed time, bulk+n": sign_grid(t["elapsed"], "bulk+n", ["later"]),
        "Fairness within burst, bulk+n": sign_grid(t["fair_within"], "bulk+n", ["later"]),
    }


def report(t: dict[str, "pd.DataFrame"], per: "pd.DataFrame", results: list[Check], meta: dict[str, Any], figs: list[Path],
           sens: "pd.DataFrame") -> str:  # fmt: skip
    from ..scenario import WIRELESS_PROFILES
    from ..scenario.topology import wireless_bdp_packets
    from .. import units

    bdp = []
    for prof, p in WIRELESS_PROFILES.items():
        rate, delay = units.parse_rate(p["rate"]), units.parse_duration(p["delay"])
        exact = rate * 2 * delay / 1e9 / 8 / 1500
        with_internet = rate * 2 * (delay + 11e6) / 1e9 / 8 / 1500
        bdp.append(f"| {prof.upper()} | {p['rate']} | {p['delay']} | {exact:.1f} | {wireless_bdp_packets(rate, delay)} | {with_internet:.1f} | "
                   f"{base_rtt(prof) * 1e3:.0f} ms |")  # fmt: skip
    cmp = t["slides"]
    lines = [
        TITLE,
        "",
        f"Mode: **{meta['mode']}**: {counted(meta['replications'], 'replication')} per case, {meta['runs']} runs ({meta['skipped']} of them "
        f"reused from the store), {meta['wall_s']:.1f} s of wall time for the runs.",
        "",
        "## The model",
        "",
        "Two servers reach a gateway over 11 ms of propagation delay (100 Mb/s); the gateway reaches the mobile client over "
        "the wireless link, which carries the data (its buffer is the case's) and the ACKs back (a large buffer). No wireless "
        "errors or allocation delays. `[topology] type = \"wireless\"` builds this for any scenario.",
        "",
        "| link | rate | one-way delay | BDP (1500 B pkts) | buffer 'bdp' | BDP with the 11 ms | base RTT |",
        "|---|---|---|---|---|---|---|",
        *bdp,
        "",
        "The slides' BDPs (EDGE 6.7, HSPA 23.3, LTE 125) are rate x 2 x the wireless link's one-way delay in 1500-byte "
        "packets: their RTT leaves out the 11 ms to the wireless link. We use that BDP, rounded up, as the slides' "
        "buffers (7, 24, 125). The large buffer is 50 packets (EDGE and HSPA).",
        "",
        "Choices where the slides are silent:",
        "",
        f"- **Workloads.** n+n: a burst of n flows sharing {TOTAL} evenly starts at 0; a second such burst starts later. "
        "bulk+n: a bulk transfer starts at 0, a burst of n flows later; the run stops when the burst has finished "
        f"(`[sim] until`), or at the latest at {', '.join(f'{k.upper()} {v}' for k, v in BULK_LONGEST.items())}, past the "
        "time a segment's 15 backed-off retransmissions take (so a burst is cut off only if a flow of it gave up).",
        f"- **The later burst's start** is drawn per replication uniformly from {LATER_START_RTTS[0]:g} to {LATER_START_RTTS[1]:g} base "
        "round trips after 0 ("
        + ", ".join(f"{p.upper()} {LATER_START_RTTS[0] * base_rtt(p):.2f}-{LATER_START_RTTS[1] * base_rtt(p):.2f} s"
                    + (" for bulk+n" if p == "lte" else "") for p in WIRELESS_DELAY_S)
        + "): slow start fills these pipes (BDP plus buffer) in about 3 to 6 round trips, so the first burst or the bulk "
        "flow is then at the end of slow start or early in congestion avoidance. On LTE a 180 kB burst (124 segments) "
        "never fills its 250-packet pipe and is over within one to three round trips, so there the later burst of n+n "
        f"starts within the first {LTE_BURST_START_RTTS[1]:g} ({LTE_BURST_START_RTTS[0] * base_rtt('lte') * 1e3:.0f}-"
        f"{LTE_BURST_START_RTTS[1] * base_rtt('lte') * 1e3:.0f} ms), while the first is still in slow start. These ranges "
        "are our choice, not fitted; the sensitivity table below reruns the checks with other ranges (for every profile).",
        "- **TCP**, a 2010 Linux: SACK with Linux 2.6's rate-halving in recovery (`tcp_cwnd_down`: the window loses a segment "
        "every second ACK of progress down to ssthresh and stays at most a segment above the data in flight, where RFC 6675 "
        "drops it to ssthresh at once; in the full study the sign agreement is 18 of 29 either way) and forward acknowledgement marking losses "
        "(`tcp_fack`, on by default until Linux 4.11: a segment is lost once a SACKed byte lies 3 segments past its end, "
        "where RFC 6675's `IsLost` waits for 3 segments' worth of SACKed bytes above it; 18 of 29 either way in the full study), delayed ACKs (every second segment, else after 40 ms, Linux's "
        "TCP_DELACK_MIN) after Linux's quick-ACK mode at a connection's start (every segment ACKed at once for the first 16 "
        "ACKs: `tcp_incr_quickack` gives min(receive window / 2 MSS, TCP_MAX_QUICKACKS = 16)), initial RTO 3 s (RFC 2988; Linux before 3.1), minimum RTO 200 ms (TCP_RTO_MIN), a timeout's ssthresh half the "
        "congestion window but not reduced a second time in one recovery or loss (`tcp_enter_loss`; RFC 5681's half the flight "
        "at every timeout changed no sign-table count in the full study, 18 of 29 either way), MSS 1460, a receive "
        "window that never limits (Linux autotunes it), a segment of growth per ACK of new data (Linux 2.6's default "
        "`tcp_abc = 0`: no RFC 3465 byte counting); no handshake (the slides' elapsed time starts with the data). "
        "With RFC 3465 byte counting (L = 2) the sign agreement is 16 of 29 uniform cells in full mode, against 18 without it "
        "(15 either way at quick mode's 10 replications). "
        "The window grows and shrinks as Reno's (RFC 5681), the controller the IW10 proposal reasons about; Linux's own "
        "default of 2010, CUBIC with HyStart, is a row of the sensitivity table.",
        f"- **Signs.** As in the slides, `+` means IW10 improves on IW3 at the 25th percentile, median and 75th percentile in "
        f"turn; `0` means within the noise band (elapsed time within {ELAPSED_BAND:.0%} of IW3's, Jain's index within "
        f"{FAIR_BAND}); `-` worse. Fairness between bursts is Jain's index of the two bursts' longest flows' throughputs.",
        "",
        "## Acceptance checks",
        "",
        *check_lines(results),
        "",
        "## Sensitivity to the choices the slides leave open",
        "",
        "The same checks with the later burst's start drawn from other ranges; with every flow of a burst from its own "
        "server, so that the flows' initial windows interleave at the gateway instead of reaching it one flow after another; "
        "and with the congestion control a 2010 Linux used by default, CUBIC, with and without HyStart, which ends slow "
        "start when a round's RTT rises or its ACK train spans half the RTT (`[tcp] cc = \"cubic\"`, `hystart = true`; "
        "full mode reruns the study for each). "
        + ("No variant brings the sign agreement to 75%." if sens["signs"].str.startswith("FAIL").all() else ""),
        "",
        md_table(sens),
        "",
        "## The slides' named cases",
        "",
        *named_cases(t, per),
        "",
        "## Summary tables: ours (three quartiles)",
        "",
    ]
    for title, g in grids(t).items():
        lines += [f"### {title}", "", md_table(g), ""]
    lines += [
        "## Every three-sign cell of the slides against ours",
        "",
        "The slides' text lost its `0` glyphs, so only cells that still show three signs are compared "
        f"({len(cmp)} cells; {int(cmp.uniform.sum())} of them +++ or ---).",
        "",
        md_table(cmp[["table", "workload", "burst", "profile", "buffer", "n", "signs", "ours", "median_agrees", "all_agree"]]),
        "",
        "## Quartiles",
        "",
        "`iw3_unfinished` and `iw10_unfinished` count the runs in which the burst had not finished when the run ended "
        "(a flow of it gave up after 15 retransmissions, or a bulk+n run reached its longest time). The elapsed time ranks them as slower than every finished run, so a quartile "
        "that falls among them is `inf`; leaving them out would make the slowest cases look faster. The fairness "
        "tables leave them out.",
        "",
    ]
    for m, title in (("elapsed", "Elapsed time (s)"), ("fair_within", "Fairness within a burst"), ("fair_between", "Fairness between bursts")):
        lines += [f"### {title}", "", md_table(t[m], ".3f"), ""]
    lines += ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figs] + [""]
    return "\n".join(lines)


def reproduce(quick: bool = False, jobs: int | None = None, out: str | Path = "iw10-out", progress: bool = True, console: Any = None,
              overrides: dict[str, Any] | None = None, replications: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Run every case (quick: 10 replications), print the summary tables in the
    slides' layout beside the slides' signs, and write CSVs, box plots and a
    report; `overrides` (dotted scenario paths) are set in every run."""
    from rich.console import Console

    check_call("iw10", out, quick)
    console = console or Console()
    mode = QUICK if quick else FULL
    reps, named = replications_of(mode, replications)
    run = run_configs("iw10", configurations(), reps, quick, out, jobs, progress, variant=named, overrides=overrides)
    per = per_run(run.store, run.run_ids)
    keep_run_metrics(run.store, per)
    t = tables(per)
    results = checks(t, per)
    for title, g in grids(t).items():
        print_table(console, f"{title}: + IW10 better, - worse, 0 within the noise band (25th, 50th, 75th percentile)", g)
    cmp = t["slides"]
    print_table(console, "The slides' three-sign cells against ours", cmp[["table", "workload", "burst", "profile", "buffer", "n", "signs", "ours", "median_agrees"]])
    sens = sensitivity(results, reps, quick, out, jobs, progress, overrides)
    print_table(console, "Sensitivity to the choices the slides leave open", sens)
    figs = figures(per, run.out_dir)
    meta = {"mode": "quick" if quick else "full", "replications": reps, "runs": run.runs, "skipped": run.skipped, "wall_s": run.wall_s}
    tabs = {**t, "per_run": per, "sensitivity": sens}
    return finish(run, tabs, results, lambda: report(t, per, results, meta, figs, sens), console, figs)


def sensitivity(main: list[Check], reps: int, quick: bool, out: str | Path, jobs: int | None, progress: bool,
                overrides: dict[str, Any] | None = None) -> "pd.DataFrame":  # fmt: skip
    """The checks again with the later burst's start drawn from other ranges
    and with Linux's congestion controls of 2010 (SENSITIVITY_REPS
    replications each), and with a server per flow (`reps` replications, the
    main run's seeds); full mode only."""
    import pandas as pd

    def row(rng: tuple[float, float] | None, per_flow: bool, cc: str, n: int, res: list[Check]) -> dict[str, Any]:
        lo, hi = rng or LATER_START_RTTS
        label = f"{lo:g}-{hi:g}" if rng else f"{lo:g}-{hi:g} (LTE n+n {LTE_BURST_START_RTTS[0]:g}-{LTE_BURST_START_RTTS[1]:g})"
        r: dict[str, Any] = {"start (base RTTs)": label, "servers": "one per flow" if per_flow else "one per burst",
                             "congestion control": cc, "replications": n}  # fmt: skip
        for (name, ok, detail), label in zip(res, ("signs", "concl. 1", "concl. 2", "concl. 3", "concl. 4")):
            r[label] = ("PASS " if ok else "FAIL ") + detail.split(";")[0]
        return r

    main_cc = "Reno + SACK"
    rows = [row(None, False, main_cc, reps, main)]
    if not quick:
        variants: list[tuple[tuple[float, float] | None, bool, str, dict[str, Any] | None, int, str]] = [
            (rng, False, main_cc, None, SENSITIVITY_REPS, f"-start{rng[0]:g}-{rng[1]:g}") for rng in SENSITIVITY]
        variants.append((None, True, main_cc, None, reps, "-server-per-flow"))
        for label, tcp in CC_VARIANTS:
            variants.append((None, False, label, tcp, SENSITIVITY_REPS, "-" + label.lower().replace(" + ", "-")))
        for rng, per_flow, cc, tcp, n, name in variants:
            run = run_configs("iw10", configurations(rng, per_flow, tcp), n, quick, out, jobs, progress, variant=name, overrides=overrides)
            per = per_run(run.store, run.run_ids)
            keep_run_metrics(run.store, per)
            t = tables(per)
            rows.append(row(rng, per_flow, cc, n, checks(t, per)))
    return pd.DataFrame(rows)
