"""RFC 2415 (Poduri and Nichols, 1998): simulation studies of increased
initial TCP window size.

Topology (section 2): four server nodes and four client nodes on 10 Mb/s
links, a 1.5 Mb/s, 50 ms bottleneck in both directions, 25-packet buffers.
TCP: window 11 packets, 1460-byte segments, two-way TCP (SYN, request, FIN),
one-segment restart window after a loss. Web clients fetch pages of one
primary and three embedded objects (HTTP/1.0: a connection per object;
HTTP/1.1: the RFC's rough model, one connection per page, the embedded
objects requested together once the primary has arrived), thinking
Uniform(1 s, 5 s) between pages; FTP clients fetch 1 MB files back to back.
Data flows from the servers (s0..s3) to the clients (k0..k3).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import as_checks, check_call, check_lines, counted, finish, first_replication, keep_metrics, md_table, print_table, replications_of, run_configs, save_figure

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

#: The report's first line (`common.check_call` tells a study's output directory by it).
TITLE = "# RFC 2415 reproduced with tcplab"
#: The model's parameters that the RFC does not give. Each is either taken
#: from the code the RFC's authors ran (ns-2's BayFullTcp and its FTP
#: applications, by K. Nichols: the RFC's "tcp-full code ... modified to use an
#: application class") or fitted; the report lists every one with its source.
CALIBRATION = {
    # Fitted (no source): the access links' one-way delay.
    "access_delay": "1ms",
    # Object sizes, primary and embedded: Pareto (heavy-tailed, as Crovella and
    # Bestavros found web transfers). Median 1600 B: the RFC says the median of
    # both kinds "fits completely into two packets" (1461-2920 B). Fitted
    # within that range, with the tail index, to Table 1.
    "primary": {"type": "pareto", "median": "1600B", "shape": 1.4, "max": "10MB"},
    "object": {"type": "pareto", "median": "1600B", "shape": 1.4, "max": "10MB"},
    # Web request size: the median of Mah's (1997) HTTP request lengths, as
    # ns-2 ships them (tcl/http/data/HttpRequestLength.cdf: 231 B; 250 B,
    # a round number near it, until stop 70).
    "request": "231B",
    # FTP request: BayTcp's FTP client sends an 80-byte GET (ns-2 baytcp/ftpc.cc).
    "ftp_request": "80B",
    # Receivers ACK every segment: BayFullTcp ACKs each segment of a
    # connection's first 16 KB and then every `segsperack_` segments, whose
    # default is 1 (ns-2 baytcp/tcp-full-bay.cc, need_send). None: no delayed ACKs.
    "delack_timeout": None,
    # A connection per file: BayTcp's FTP server closes after each file, and
    # the client is written to ask for the next one at once when the connection
    # ends (ns-2 baytcp/ftps.cc, ftpc.cc). In ns-2 2.35 as it runs, that upcall
    # never comes, and the client's fallback timer asks 5 s after the data
    # (one FTP alone: 44% of the link, 72% without the pause); the RFC's FTPs
    # "continuously request" their files, so the model asks at once.
    "ftp_persistent": False,
    # "Requesting a new page after a random delay uniformly distributed between
    # 1 and 5 seconds": read as counted from the previous request (a page's
    # start), one page at a time. Counted from the page's end, the web load
    # without FTPs comes out 20-30% lower.
    "think_from": "start",
    # The RTO's floor in the ns-2 the RFC's authors ran: TcpAgent::rtt_timeout
    # (tcp.cc 1.59, April 1998) clamps it to two clock ticks and to nothing
    # else, and tcpTick_ was 0.1 s (0.01 s from March 2002). minrto_, with
    # RFC 2988's 1 s, came in May 2001 (ns-2's CHANGES.html).
    "rto_min": "200ms",
    # The clock tick, 0.1 s: ns-2 kept RTT and its variation in ticks, so the
    # RTO was at least the smoothed RTT plus one tick.
    "granularity": "100ms",
}

#: "Buffer sizes were set at 25 packets", as ns-2 counts them. Its DropTail
#: refuses an arrival that would leave 25 packets waiting (drop-tail.cc of
#: 1997: enqueue, then drop while `length() >= qlim_`; of 2.35: drop when
#: `length() + 1 >= qlim_`), and the packet being sent is on the link, not in
#: the queue: 25 packets in all, 24 of them waiting. A tcplab limit counts
#: waiting packets, so the RFC's 25 is 24 here. ns-2's RED tests the length
#: before it enqueues (red.cc: drop when `qlen >= qlim`), so its 25 wait.
DROPTAIL_QUEUE = "24pkt"

RED_QUEUE = {"type": "red", "limit": "25pkt", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "gentle": True}


def scenario(
    webs: int,
    ftps: int,
    iw: int,
    http: str = "1.0",
    red: bool = False,
    duration: str = "360s",
    split_iw: int | None = None,
    calibration: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One RFC 2415 configuration. With `split_iw`, the second half of the
    web clients use that initial window (the half-and-half runs)."""
    cal = {**CALIBRATION, **(calibration or {})}
    queue: Any = RED_QUEUE if red else DROPTAIL_QUEUE
    apps: list[dict[str, Any]] = []
    for i in range(webs):
        app: dict[str, Any] = {
            "type": "web",
            "name": f"web{i}",
            "src": f"s{i % 4}",
            "dst": f"k{i % 4}",
            "http": http,
            "embedded": 3,
            "primary": cal["primary"],
            "object": cal["object"],
            "think": {"type": "uniform", "min": "1s", "max": "5s"},
            "request": cal["request"],
            "think_from": cal["think_from"],
            # A calibration's fetch order is the HTTP/1.0 model's: the RFC's
            # HTTP/1.1 model asks for the embedded objects once the primary is in.
            "embedded_start": cal.get("embedded_start", "after_primary") if http == "1.0" else "after_primary",
            # Stagger the first requests over the first 5 s.
            "start": f"{5.0 * i / max(webs, 1):.6f}s",
        }
        if split_iw is not None and i >= webs // 2:
            app["tcp"] = {"iw": split_iw}
        apps.append(app)
    for j in range(ftps):
        n = webs + j
        apps.append({
            "type": "repeat", "name": f"ftp{j}", "src": f"s{n % 4}", "dst": f"k{n % 4}", "size": "1MB",
            "think": "0s", "request": cal["ftp_request"], "start": f"{0.5 * j:.3f}s", "persistent": cal["ftp_persistent"],
        })  # fmt: skip
    return {
        "sim": {"duration": duration, "seed": 1},
        "topology": {
            "type": "dumbbell",
            "left": 4,
            "right": 4,
            "bottleneck": {"rate": "1.5Mbps", "delay": "50ms", "queue": queue},
            "left_access": {"rate": "10Mbps", "delay": cal["access_delay"], "queue": DROPTAIL_QUEUE},
            "right_access": {"rate": "10Mbps", "delay": cal["access_delay"], "queue": DROPTAIL_QUEUE},
        },
        "tcp": {
            "cc": "reno",
            "iw": iw,
            "mss": "1460B",
            "window": "11pkt",
            "handshake": True,
            "rto_initial": "3s",
            "rto_min": cal["rto_min"],
            "clock_granularity": cal["granularity"],
            # ns-2's TCPs count ACKs, not bytes: every ACK of new data opens the window by a segment.
            "byte_counting": False,
            # A timeout halves the window, not the flight: BayFullTcpAgent::timeout calls ns-2's
            # TcpAgent::slowdown (CLOSE_SSTHRESH_HALF), which halves min(cwnd, wnd) with the inflation.
            "timeout_ssthresh": "ns2",
            "delayed_ack": cal["delack_timeout"] is not None,
            "delack_timeout": cal["delack_timeout"] or "200ms",
        },
        "apps": apps,
    }


# ---------------------------------------------------------------------------
# The RFC's numbers (Tables 1-6), for comparison.

ROWS = [(w, f) for w in (8, 16, 32) for f in (0, 1, 2, 3)]

#: Table 1 (HTTP/1.0) and Table 4 (HTTP/1.1): IW=1 median page delay (s) and
#: the % decrease at IW 2, 3, 4.
RFC_DELAY = {
    "1.0": {
        (8, 0): (0.56, 14.3, 17.9, 16.1), (8, 1): (1.06, 18.9, 25.5, 32.1), (8, 2): (1.18, 16.1, 17.1, 28.9),
        (8, 3): (1.26, 11.9, 19.0, 27.0), (16, 0): (0.64, 11.0, 15.6, 18.8), (16, 1): (1.04, 17.3, 24.0, 35.6),
        (16, 2): (1.22, 17.2, 20.5, 25.4), (16, 3): (1.31, 10.7, 21.4, 22.1), (32, 0): (0.92, 17.6, 28.6, 21.0),
        (32, 1): (1.19, 19.6, 25.0, 26.1), (32, 2): (1.43, 23.8, 35.0, 33.6), (32, 3): (1.56, 19.2, 29.5, 33.3),
    },
    "1.1": {
        (8, 0): (0.47, 14.9, 19.1, 21.3), (8, 1): (0.84, 17.9, 19.0, 25.0), (8, 2): (0.99, 11.5, 17.3, 23.0),
        (8, 3): (1.04, 12.1, 20.2, 28.3), (16, 0): (0.54, 7.4, 14.8, 20.4), (16, 1): (0.89, 14.6, 21.3, 27.0),
        (16, 2): (1.02, 14.7, 19.6, 25.5), (16, 3): (1.11, 9.0, 17.0, 18.9), (32, 0): (0.94, 16.0, 29.8, 36.2),
        (32, 1): (1.23, 12.2, 28.5, 21.1), (32, 2): (1.39, 6.5, 13.7, 12.2), (32, 3): (1.46, 4.0, 11.0, 15.0),
    },
}  # fmt: skip

#: Table 2: link utilization (%) and drop rate (%) at IW 1-4 (HTTP/1.0).
RFC_UTIL_DROP = {
    (8, 0): ((34, 37, 38, 39), (0.0, 0.0, 0.0, 0.0)), (8, 1): ((95, 92, 93, 92), (0.6, 1.2, 1.4, 1.3)),
    (8, 2): ((98, 97, 97, 96), (1.8, 2.3, 2.3, 2.7)), (8, 3): ((98, 98, 98, 98), (2.6, 3.0, 3.5, 3.5)),
    (16, 0): ((67, 69, 69, 67), (0.1, 0.5, 0.8, 1.0)), (16, 1): ((96, 95, 93, 92), (2.1, 2.6, 2.9, 2.9)),
    (16, 2): ((98, 98, 97, 96), (3.5, 3.6, 4.2, 4.5)), (16, 3): ((99, 99, 98, 98), (4.5, 4.7, 5.2, 4.9)),
    (32, 0): ((92, 87, 85, 84), (0.1, 0.5, 0.8, 1.0)), (32, 1): ((98, 97, 96, 96), (2.1, 2.6, 2.9, 2.9)),
    (32, 2): ((99, 99, 98, 98), (3.5, 3.6, 4.2, 4.5)), (32, 3): ((100, 99, 99, 98), (9.3, 8.4, 7.7, 7.6)),
}  # fmt: skip

#: Tables 3 (HTTP/1.0) and 5 (HTTP/1.1): FTP network power at IW 1-4.
RFC_FTP_POWER = {
    "1.0": {
        (8, 1): (4.7, 4.2, 4.2, 4.2), (8, 2): (3.0, 2.8, 3.0, 2.8), (8, 3): (2.2, 2.2, 2.2, 2.2),
        (16, 1): (2.3, 2.4, 2.4, 2.5), (16, 2): (1.8, 2.0, 1.8, 1.9), (16, 3): (1.4, 1.6, 1.5, 1.7),
        (32, 1): (0.7, 0.9, 1.3, 0.9), (32, 2): (0.8, 1.0, 1.3, 1.1), (32, 3): (0.7, 1.0, 1.2, 1.0),
    },
    "1.1": {
        (8, 1): (4.2, 4.2, 4.2, 3.7), (8, 2): (2.7, 2.5, 2.6, 2.3), (8, 3): (2.1, 1.9, 2.0, 2.0),
        (16, 1): (1.8, 1.8, 1.5, 1.4), (16, 2): (1.5, 1.2, 1.1, 1.5), (16, 3): (1.0, 1.0, 1.0, 1.0),
        (32, 1): (0.3, 0.3, 0.5, 0.3), (32, 2): (0.4, 0.3, 0.4, 0.4), (32, 3): (0.4, 0.3, 0.4, 0.5),
    },
}  # fmt: skip

#: Table 6: (goodput MB, delay s) of the IW=1 and IW=3 groups, utilization %, drops %.
RFC_HALF = {
    16: {"all1": (35.5, 0.64, 67, 0.1), "all3": (36.4, 0.54, 69, 0.7), "split1": (16.9, 0.67), "split3": (18.9, 0.52), "split": (68, 0.5)},
    32: {"all1": (48.9, 0.91, 92, 3.5), "all3": (44.7, 0.68, 85, 4.3), "split1": (22.8, 0.94), "split3": (22.9, 0.71), "split": (89, 4.6)},
    64: {"all1": (51.9, 1.50, 98, 13.0), "all3": (47.6, 0.86, 91, 8.6), "split1": (29.0, 1.40), "split3": (22.0, 1.20), "split": (98, 12.0)},
}  # fmt: skip


# ---------------------------------------------------------------------------
# The experiment: every configuration of the RFC, through the sweep machinery.

FULL = {"replications": 5, "duration": "360s"}
QUICK = {"replications": 2, "duration": "180s"}


def configurations(duration: str, calibration: dict[str, Any] | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(factor levels, scenario) for Tables 1-5 (both HTTP versions), the
    half-and-half runs of Table 6, and the RED runs; `calibration` replaces
    values of CALIBRATION (`benchmarks/rfc2415_calibration.py` runs the
    study that way)."""
    out = []
    cal = calibration
    for http in ("1.0", "1.1"):
        for webs, ftps in ROWS:
            for iw in (1, 2, 3, 4):
                levels = {"part": "grid", "http": http, "webs": webs, "ftps": ftps, "iw": iw, "queue": "droptail", "mix": "-"}
                out.append((levels, scenario(webs, ftps, iw, http, duration=duration, calibration=cal)))
    for webs in (16, 32, 64):
        for mix, iw, split in (("all1", 1, None), ("all3", 3, None), ("split", 1, 3)):
            if webs in (16, 32) and mix != "split":
                continue  # the same runs as the grid's 16 and 32 webs without FTPs
            levels = {"part": "half", "http": "1.0", "webs": webs, "ftps": 0, "iw": iw, "queue": "droptail", "mix": mix}
            out.append((levels, scenario(webs, 0, iw, "1.0", duration=duration, split_iw=split, calibration=cal)))
    for webs, ftps in ROWS:
        for iw in (1, 3):
            levels = {"part": "red", "http": "1.0", "webs": webs, "ftps": ftps, "iw": iw, "queue": "red", "mix": "-"}
            out.append((levels, scenario(webs, ftps, iw, "1.0", red=True, duration=duration, calibration=cal)))
    return out


PER_RUN_SQL = """
WITH w AS (SELECT run_id, CAST(value AS INTEGER) AS webs FROM factors WHERE name = 'webs'),
pg AS (
    SELECT p.run_id,
           median(p.delay_s) FILTER (WHERE p.completed AND p.app LIKE 'web%') AS web_delay,
           median(p.delay_s) FILTER (WHERE p.completed AND p.app LIKE 'web%' AND CAST(substr(p.app, 4) AS INTEGER) < w.webs / 2) AS delay_lo,
           median(p.delay_s) FILTER (WHERE p.completed AND p.app LIKE 'web%' AND CAST(substr(p.app, 4) AS INTEGER) >= w.webs / 2) AS delay_hi,
           count(*) FILTER (WHERE p.completed AND p.app LIKE 'web%') AS pages,
           median(p.delay_s) FILTER (WHERE p.completed AND p.app LIKE 'ftp%') AS ftp_page_delay
    FROM pages p JOIN w USING (run_id) GROUP BY p.run_id
),
fl AS (
    SELECT f.run_id,
           sum(f.bytes_delivered) FILTER (WHERE f.app LIKE 'web%') AS web_bytes,
           sum(f.bytes_delivered) FILTER (WHERE f.app LIKE 'web%' AND CAST(substr(f.app, 4) AS INTEGER) < w.webs / 2) AS bytes_lo,
           sum(f.bytes_delivered) FILTER (WHERE f.app LIKE 'web%' AND CAST(substr(f.app, 4) AS INTEGER) >= w.webs / 2) AS bytes_hi,
           sum(f.bytes_delivered) FILTER (WHERE f.app LIKE 'ftp%') AS ftp_bytes,
           median(f.fct_s) FILTER (WHERE f.app LIKE 'ftp%' AND f.completed) AS ftp_delay
    FROM flows f JOIN w USING (run_id) GROUP BY f.run_id
),
ln AS (
    SELECT run_id, 100 * utilization AS util, 100.0 * drops / nullif(arrivals, 0) AS drop_pct
    FROM links WHERE src = 'r0' AND dst = 'r1'
)
SELECT r.run_id, r.factors, r.sim_seconds, pg.web_delay, pg.delay_lo, pg.delay_hi, pg.pages,
       fl.web_bytes, fl.bytes_lo, fl.bytes_hi, fl.ftp_bytes,
       coalesce(pg.ftp_page_delay, fl.ftp_delay) AS ftp_delay, ln.util, ln.drop_pct
FROM runs r LEFT JOIN pg USING (run_id) LEFT JOIN fl USING (run_id) LEFT JOIN ln USING (run_id)
WHERE r.status = 'ok' AND (CAST(? AS VARCHAR) IS NULL OR r.sweep = ?)
"""


#: The per-run metrics of the RFC's tables kept in the store, as rfc2415.NAME
#: (`tcplab analyze OUT/rfc2415.duckdb --metric rfc2415.web_power`).
STORED_METRICS = {"web_delay": "web_delay_s", "ftp_delay": "ftp_delay_s", "web_power": "web_power", "ftp_power": "ftp_power",
                  "util": "utilization_pct", "drop_pct": "drop_pct"}  # fmt: skip


def per_run(store_path: str, sweep_name: str | None = "rfc2415", run_ids: "Sequence[str] | None" = None) -> "pd.DataFrame":
    """One row per run (of the sweep `sweep_name`, every sweep if None; or
    only `run_ids`, in their order): the factors and the RFC's metrics. Goodput is
    in MB per 360 s (the RFC's run length), whatever the run's length;
    network power is goodput (MB) over median delay (s)."""
    import json

    from ..store import open_read
    import pandas as pd

    con = open_read(store_path)
    try:
        df = con.execute(PER_RUN_SQL, [sweep_name, sweep_name]).df()
    finally:
        con.close()
    if run_ids is not None:  # in the order of run_ids (of the configurations), whatever the store's
        pos = {rid: i for i, rid in enumerate(dict.fromkeys(run_ids))}
        df = df[df.run_id.isin(pos)].sort_values("run_id", key=lambda c: c.map(pos)).reset_index(drop=True)
    facs = pd.DataFrame([json.loads(f) for f in df.pop("factors")])
    df = pd.concat([facs, df], axis=1)
    scale = 360.0 / df.sim_seconds / 1e6
    for col in ("web_bytes", "bytes_lo", "bytes_hi", "ftp_bytes"):
        df[col.replace("bytes", "mb")] = df[col].astype(float) * scale
    df["web_power"] = df.web_mb / df.web_delay
    df["ftp_power"] = df.ftp_mb / df.ftp_delay
    return df


# ---------------------------------------------------------------------------
# Tables: our mean over replications (with a 95% t-interval half-width), the
# RFC's number, and the difference.


def _stats(df: "pd.DataFrame", keys: list[str], col: str) -> "pd.DataFrame":
    from ..analysis import summarize

    s = summarize(df, keys, col, n_boot=200)
    s[f"{col}_hw"] = (s.mean_hi - s.mean_lo) / 2
    return s.rename(columns={"mean": col})[keys + [col, f"{col}_hw", "n"]]


def _cell(df: "pd.DataFrame", **where: Any) -> "pd.DataFrame":
    m = None
    for k, v in where.items():
        c = df[k] == v
        m = c if m is None else m & c
    return df[m]


def tables(df: "pd.DataFrame") -> dict[str, "pd.DataFrame"]:
    import numpy as np
    import pandas as pd

    grid = df[df.part == "grid"]
    out: dict[str, pd.DataFrame] = {}
    for name, http in (("table1", "1.0"), ("table4", "1.1")):
        s = _stats(grid[grid.http == http], ["webs", "ftps", "iw"], "web_delay")
        rows = []
        for w, f in ROWS:
            d = {iw: _cell(s, webs=w, ftps=f, iw=iw) for iw in (1, 2, 3, 4)}
            base = float(d[1].web_delay.iloc[0])
            rfc = RFC_DELAY[http][(w, f)]
            row: dict[str, Any] = {"webs": w, "ftps": f, "iw1_s": base, "iw1_ci": float(d[1].web_delay_hw.iloc[0]), "rfc_iw1_s": rfc[0],
                                   "iw1_diff_pct": 100 * (base - rfc[0]) / rfc[0]}  # fmt: skip
            for k, iw in enumerate((2, 3, 4), start=1):
                dec = 100 * (1 - float(d[iw].web_delay.iloc[0]) / base)
                row[f"dec{iw}_pct"] = dec
                row[f"rfc_dec{iw}_pct"] = rfc[k]
                row[f"dec{iw}_diff"] = dec - rfc[k]
            rows.append(row)
        out[name] = pd.DataFrame(rows)
    g10 = grid[grid.http == "1.0"]
    su = _stats(g10, ["webs", "ftps", "iw"], "util")
    sd = _stats(g10, ["webs", "ftps", "iw"], "drop_pct")
    rows = []
    for w, f in ROWS:
        row = {"webs": w, "ftps": f}
        ru, rd = RFC_UTIL_DROP[(w, f)]
        for iw in (1, 2, 3, 4):
            row[f"util{iw}"] = float(_cell(su, webs=w, ftps=f, iw=iw).util.iloc[0])
            row[f"rfc_util{iw}"] = ru[iw - 1]
        for iw in (1, 2, 3, 4):
            row[f"drop{iw}"] = float(_cell(sd, webs=w, ftps=f, iw=iw).drop_pct.iloc[0])
            row[f"rfc_drop{iw}"] = rd[iw - 1]
        rows.append(row)
    out["table2"] = pd.DataFrame(rows)
    for name, http in (("table3", "1.0"), ("table5", "1.1")):
        s = _stats(grid[(grid.http == http) & (grid.ftps > 0)], ["webs", "ftps", "iw"], "ftp_power")
        rows = []
        for w, f in ROWS:
            if f == 0:
                continue
            row = {"webs": w, "ftps": f}
            for iw in (1, 2, 3, 4):
                c = _cell(s, webs=w, ftps=f, iw=iw)
                row[f"power{iw}"] = float(c.ftp_power.iloc[0])
                row[f"power{iw}_ci"] = float(c.ftp_power_hw.iloc[0])
                row[f"rfc_power{iw}"] = RFC_FTP_POWER[http][(w, f)][iw - 1]
            rows.append(row)
        out[name] = pd.DataFrame(rows)
    half = df[df.part == "half"]
    rows = []
    for n in (16, 32, 64):
        h = half[half.webs == n]
        rfc = RFC_HALF[n]
        for mix, label in (("all1", f"{n} all IW=1"), ("all3", f"{n} all IW=3"), ("split", f"{n // 2}/{n // 2}")):
            if mix != "split" and n in (16, 32):
                c = _cell(g10, webs=n, ftps=0, iw=1 if mix == "all1" else 3)
            else:
                c = h[h["mix"] == mix]
            row = {"webs": label, "util": c.util.mean(), "drop_pct": c.drop_pct.mean()}
            if mix == "split":
                row.update(iw1_mb=c.mb_lo.mean(), iw1_delay=c.delay_lo.mean(), iw1_delay_ci=_hw(c.delay_lo),
                           iw3_mb=c.mb_hi.mean(), iw3_delay=c.delay_hi.mean(), iw3_delay_ci=_hw(c.delay_hi),
                           rfc_iw1_mb=rfc["split1"][0], rfc_iw1_delay=rfc["split1"][1], rfc_iw3_mb=rfc["split3"][0],
                           rfc_iw3_delay=rfc["split3"][1], rfc_util=rfc["split"][0], rfc_drop_pct=rfc["split"][1])  # fmt: skip
            else:
                r = rfc[mix]
                key = "iw1" if mix == "all1" else "iw3"
                row.update({f"{key}_mb": c.web_mb.mean(), f"{key}_delay": c.web_delay.mean(), f"{key}_delay_ci": _hw(c.web_delay),
                            f"rfc_{key}_mb": r[0], f"rfc_{key}_delay": r[1], "rfc_util": r[2], "rfc_drop_pct": r[3]})  # fmt: skip
            rows.append(row)
    out["table6"] = pd.DataFrame(rows)
    red = df[df.part == "red"]
    sr = _stats(red, ["webs", "ftps", "iw"], "web_delay")
    sdt = _stats(g10, ["webs", "ftps", "iw"], "web_delay")
    rows = []
    for w, f in ROWS:
        dt1 = float(_cell(sdt, webs=w, ftps=f, iw=1).web_delay.iloc[0])
        dt3 = float(_cell(sdt, webs=w, ftps=f, iw=3).web_delay.iloc[0])
        r1 = float(_cell(sr, webs=w, ftps=f, iw=1).web_delay.iloc[0])
        r3 = float(_cell(sr, webs=w, ftps=f, iw=3).web_delay.iloc[0])
        rows.append({"webs": w, "ftps": f, "droptail_iw1_s": dt1, "droptail_iw3_s": dt3, "red_iw1_s": r1, "red_iw3_s": r3,
                     "red_iw1_gain_pct": 100 * (1 - r1 / dt1), "droptail_iw3_gain_pct": 100 * (1 - dt3 / dt1)})  # fmt: skip
    out["table_red"] = pd.DataFrame(rows)
    # Figures' data: web network power per scenario and IW.
    sp = _stats(grid, ["http", "webs", "ftps", "iw"], "web_power")
    sp["normalized"] = np.nan
    mb = grid.groupby(["http", "webs", "ftps", "iw"]).web_mb.mean()
    # The RFC's points, from its Tables 1 and 4: its median delay at each IW
    # (the IW-1 delay less the % decrease) with our goodput, and, normalized,
    # the delay ratio alone (goodput held equal across IW).
    sp["rfc_web_power"] = np.nan
    sp["rfc_normalized"] = np.nan
    for (http, w, f), g in sp.groupby(["http", "webs", "ftps"]):
        base = float(g[g.iw == 1].web_power.iloc[0])
        sp.loc[g.index, "normalized"] = g.web_power / base
        rfc = RFC_DELAY[http][(w, f)]
        for i, iw in zip(g.index, g.iw):
            ratio = 1.0 if iw == 1 else 1 - rfc[iw - 1] / 100
            sp.loc[i, "rfc_web_power"] = float(mb.loc[(http, w, f, iw)]) / (rfc[0] * ratio)
            sp.loc[i, "rfc_normalized"] = 1 / ratio
    out["power"] = sp
    return out


def _hw(x: "pd.Series") -> float:
    from ..analysis import sem, t_interval

    x = x.dropna()
    if len(x) < 2:  # one run has no interval, not one of zero width
        return float("nan")
    if x.std() == 0:
        return 0.0
    lo, hi = t_interval(0.95, len(x) - 1, loc=x.mean(), scale=sem(x.to_numpy(dtype=float)))
    return float((hi - lo) / 2)


# ---------------------------------------------------------------------------
# The acceptance checks of the reproduction, computed from the tables.


def _scored_drop_rows(t2: "pd.DataFrame") -> "pd.DataFrame":
    """Table 2's rows whose drop rates are scored: those with FTPs, less the
    RFC's 32-web rows with 0-2 FTPs, which repeat its 16-web rows."""
    return t2[(t2.ftps >= 1) & ~(t2.webs.eq(32) & t2.ftps.le(2))]


def checks(t: dict[str, "pd.DataFrame"], per: "pd.DataFrame") -> list[tuple[str, bool, str]]:
    import numpy as np

    out: list[tuple[str, bool, str]] = []
    t1, t2, t4 = t["table1"], t["table2"], t["table4"]
    falls = [(r.webs, r.ftps) for r in t1.itertuples() if not r.dec3_pct > 0]
    out.append(("Table 1: in every row the median page delay falls from IW 1 to IW 3", not falls,
                "all 12 rows" if not falls else f"not in rows {falls}"))  # fmt: skip
    avg = [t1[f"dec{iw}_pct"].mean() for iw in (2, 3, 4)]
    rfc_avg = [16.5, 23.3, 26.7]
    ok = all(abs(a - r) <= 5 for a, r in zip(avg, rfc_avg))
    out.append(("Table 1: average % decrease at IW 2, 3, 4 within 5 points of 16.5, 23.3, 26.7", ok,
                "ours " + ", ".join(f"{a:.1f}" for a in avg)))  # fmt: skip
    within = int((t1.iw1_diff_pct.abs() <= 30).sum())
    out.append(("Table 1: IW-1 delay within 30% of the RFC's in at least 8 of 12 rows", within >= 8, f"{within} of 12 rows"))
    rows_ftp = t2[t2.ftps >= 1]
    worst = max(abs(getattr(r, f"util{iw}") - getattr(r, f"rfc_util{iw}")) for r in rows_ftp.itertuples() for iw in (1, 2, 3, 4))
    out.append(("Table 2: utilization within 10 points of the RFC's in every row with ftps >= 1", worst <= 10, f"largest difference {worst:.1f} points"))
    scored = _scored_drop_rows(t2)
    cells = [(r.webs, r.ftps, iw, getattr(r, f"drop{iw}"), getattr(r, f"rfc_drop{iw}")) for r in scored.itertuples() for iw in (1, 2, 3, 4)]
    near = [c for c in cells if abs(c[3] / c[4] - 1) <= 0.35]
    ratio1 = np.mean([c[3] / c[4] for c in cells if c[2] == 1])
    out.append((f"Table 2: drop rate within 35% of the RFC's in at least 20 of the {len(cells)} cells with FTPs (not the copied 32-web rows)",
                len(near) >= 20, f"{len(near)} of {len(cells)}; mean ratio to the RFC's at IW 1: {ratio1:.2f}"))  # fmt: skip
    z = t2[t2.ftps == 0].sort_values("webs")
    rises = all(np.all(np.diff(z[f"util{iw}"].to_numpy()) > 0) for iw in (1, 2, 3, 4))
    out.append(("Table 2: utilization rises with web clients when there are no FTPs", rises,
                "; ".join(f"IW {iw}: " + " < ".join(f"{u:.0f}" for u in z[f"util{iw}"]) for iw in (1, 2, 3, 4))))  # fmt: skip
    # The RFC's 32-web drop rows for ftps 0-2 repeat its 16-web rows digit for
    # digit (a copying error), so they say nothing and are left out.
    copied = t2.webs.eq(32) & t2.ftps.le(2)
    rfc_small = t2[(t2.rfc_drop4 - t2.rfc_drop1).between(0, 1, inclusive="left") & ~copied]
    bad = [(r.webs, r.ftps, round(r.drop4 - r.drop1, 2)) for r in rfc_small.itertuples() if not r.drop4 - r.drop1 < 1]
    out.append(("Table 2: drop rate rises by less than 1 point from IW 1 to 4 where the RFC's does", not bad,
                f"{len(rfc_small)} rows" + ("" if not bad else f"; not in {bad}")))  # fmt: skip
    t3 = t["table3"]
    # With one replication there are no intervals to compare: the checks that
    # need them do not hold, and say why (a NaN interval made Table 3's pass).
    no_ci = "no interval: it needs at least 2 replications"
    trend = []
    for r in t3.itertuples():
        lo = max(getattr(r, f"power{iw}") - getattr(r, f"power{iw}_ci") for iw in (1, 2, 3, 4))
        hi = min(getattr(r, f"power{iw}") + getattr(r, f"power{iw}_ci") for iw in (1, 2, 3, 4))
        if lo > hi:
            trend.append((r.webs, r.ftps))
    missing = t3[[f"power{iw}_ci" for iw in (1, 2, 3, 4)]].isna().any().any()
    out.append(("Table 3: FTP network power shows no trend with IW (intervals across IW overlap)", not trend and not missing,
                no_ci if missing else "all 9 rows" if not trend else f"not in rows {trend}"))  # fmt: skip
    lower = [(a.webs, a.ftps) for a, b in zip(t4.itertuples(), t1.itertuples()) if not a.iw1_s < b.iw1_s]
    out.append(("Table 4: HTTP/1.1 IW-1 delays are lower than HTTP/1.0's", not lower, "all 12 rows" if not lower else f"not in rows {lower}"))
    out.append(("Table 4: average decrease IW 1 to 2 smaller than in Table 1", t4.dec2_pct.mean() < t1.dec2_pct.mean(),
                f"{t4.dec2_pct.mean():.1f}% against {t1.dec2_pct.mean():.1f}%"))  # fmt: skip
    t6 = t["table6"]
    notes, ok, missing = [], True, False
    for n in (16, 32):
        all1 = t6[t6.webs == f"{n} all IW=1"].iloc[0]
        split = t6[t6.webs == f"{n // 2}/{n // 2}"].iloc[0]
        worse = split.iw1_delay - all1.iw1_delay > split.iw1_delay_ci + all1.iw1_delay_ci
        ok &= not worse
        missing |= bool(np.isnan(split.iw1_delay_ci) or np.isnan(all1.iw1_delay_ci))
        notes.append(f"{n // 2}/{n // 2}: {split.iw1_delay:.3f} ± {split.iw1_delay_ci:.3f} s against {all1.iw1_delay:.3f} ± "
                     f"{all1.iw1_delay_ci:.3f} s all IW=1")
    out.append(("Table 6: with 8/8 and 16/16 the IW-1 clients are not worse than in the all-IW-1 run (slower by no more than "
                "the two 95% intervals' half-widths together)", ok and not missing, no_ci if missing else "; ".join(notes)))
    return as_checks(out)


# ---------------------------------------------------------------------------
# Every parameter with its source, and the free ones varied one at a time.

#: (parameter, value, source). "fitted" marks a value chosen to match the RFC's tables.
PARAMETERS = [
    ("topology", "4 servers, 4 clients, 10 Mb/s access links, 1.5 Mb/s 50 ms bottleneck both ways", "RFC 2415 section 2"),
    ("buffers", "25 packets at every link as ns-2 counts them: 24 waiting and the one being sent (RED: 25 waiting)",
     "RFC 2415 section 2; ns-2 drop-tail.cc (1997 and 2.35) and red.cc"),
    ("access-link delay", CALIBRATION["access_delay"], "**fitted** (the RFC gives none)"),
    ("TCP", "Reno, 11-packet window, 1460-byte segments, IW 1-4, a one-segment window after a loss", "RFC 2415 section 2"),
    ("window growth", "a segment per ACK of new data (no byte counting)", "ns-2's TCPs (TcpAgent::opencwnd)"),
    ("ssthresh at a timeout", "half the congestion window in whole segments, without a fast recovery's inflation (BayFullTcp keeps its inflation in cwnd_ and halves that too: a difference only for a timeout during a fast recovery)", "ns-2 baytcp/tcp-full-bay.cc, timeout: TcpAgent::slowdown (CLOSE_SSTHRESH_HALF)"),
    ("connection set-up", "SYN, SYN-ACK, request on the third segment, FIN after the data", "RFC 2415 (two-way TCP); ns-2 baytcp/tcp-full-bay.cc"),
    ("ACKs", "every segment (no delayed ACKs)", "ns-2 baytcp/tcp-full-bay.cc: every segment of a connection's first 16 KB, then every segsperack_ (default 1)"),
    ("RTO", "initial 3 s; at least 200 ms and the smoothed RTT plus 100 ms (RFC 6298's formula with clock granularity 100 ms)",
     "tcp-full-bay.cc (\"3sec, kmn\"); ns-2 tcp.cc 1.59 (1998), TcpAgent::rtt_timeout: two ticks of tcpTick_ 0.1 s"),
    ("web pages", "a primary and 3 embedded objects; HTTP/1.0: a connection per object, the embedded ones at once", "RFC 2415 section 2"),
    ("think time", "Uniform(1 s, 5 s), counted from the previous page's request, one page at a time", "RFC 2415 section 2 (where it counts from: our reading)"),
    ("object sizes", "Pareto, median 1600 B, tail index 1.4, at most 10 MB", "median: the RFC (fits in two packets); **fitted** within 1461-2920 B, tail index **fitted**"),
    ("web request", CALIBRATION["request"], "Mah (1997): the median of his HTTP request lengths, as ns-2 ships them (tcl/http/data/HttpRequestLength.cdf)"),
    ("FTP", "1 MB files back to back, a new connection per file, 80-byte request",
     "RFC 2415 section 2 (\"continuously request\"); ns-2 baytcp/ftpc.cc and ftps.cc, whose client in ns-2 2.35 pauses 5 s after each file"),
]

#: Free parameters varied one at a time (full mode; HTTP/1.0 grid, IW 1 and 3, one replication).
SENSITIVITY = [
    ("as calibrated", {}),
    ("object median 1200 B", {"size": (1200, 1.4)}),
    ("object median 2400 B", {"size": (2400, 1.4)}),
    ("tail index 1.2", {"size": (1600, 1.2)}),
    ("tail index 1.6", {"size": (1600, 1.6)}),
    ("think time from the page's end", {"think_from": "end"}),
    ("delayed ACKs, 100 ms timer", {"delack_timeout": "100ms"}),
    ("FTP: one connection for all files", {"ftp_persistent": True}),
    ("access-link delay 10 ms", {"access_delay": "10ms"}),
    ("RTO minimum 1 s (RFC 2988, 2000), 1 ms clock", {"rto_min": "1s", "granularity": "1ms"}),
    # Heavier tails: the web load of the RFC's rows without FTPs, and its drops.
    ("tail index 1.1", {"size": (1600, 1.1)}),
    ("object median 1000 B, tail index 1.0", {"size": (1000, 1.0)}),
    # The object sizes the RFC cites (Mah 1997, as ns-2 ships them), think
    # times from a page's end (requests are the model's, Mah's median): no fitted web parameter.
    ("Mah's reply sizes, think from the end", {"mah": True, "think_from": "end"}),
    ("... and a page's four objects at once", {"mah": True, "think_from": "end", "embedded_start": "with_primary"}),
    # Burstier web traffic instead of more of it: the best fit found to Tables
    # 1 and 2 together, which the report explains and does not adopt.
    ("four objects at once, refitted (1900 B, 1.2), think from the end, FTP on one connection",
     {"size": (1900, 1.2), "think_from": "end", "ftp_persistent": True, "embedded_start": "with_primary"}),
]


def mah_reply_sizes() -> dict[str, Any]:
    """Mah's (1997) HTTP reply lengths, the sizes RFC 2415 cites (its
    reference [1]), as an empirical size distribution: the percentiles in
    studies/data/mah97_http_reply_sizes.csv (median 2,112 B, mean 7.2 kB)."""
    from importlib import resources

    from ..scenario.apps import parse_cdf

    text = resources.files("tcplab.studies").joinpath("data/mah97_http_reply_sizes.csv").read_text(encoding="utf-8")
    return {"type": "empirical", "points": [[f"{int(b)}B", c] for b, c in parse_cdf(text, "mah97_http_reply_sizes.csv")]}


#: Runs go through the sweep machinery, which gives replication r of every
#: configuration the seed derived from (1, r), or from (S, r) with `--set sim.seed=S`.
SWEEP_SEEDS = True


def scenarios(quick: bool = False) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each configuration's scenario as its first replication runs (`--export-scenarios`)."""
    return first_replication(configurations((QUICK if quick else FULL)["duration"]))


def _sensitivity_cal(kw: dict[str, Any]) -> dict[str, Any]:
    cal = {k: v for k, v in kw.items() if k not in ("size", "mah")}
    if "size" in kw:
        median, shape = kw["size"]
        dist = {"type": "pareto", "median": f"{median}B", "shape": shape, "max": "10MB"}
        cal.update(primary=dist, object=dist)
    if kw.get("mah"):
        cal.update(primary=mah_reply_sizes(), object=mah_reply_sizes())
    return cal


def sensitivity(out: str | Path, jobs: int | None, progress: bool, overrides: dict[str, Any] | None = None) -> "pd.DataFrame":
    """Each free parameter varied alone: its effect on Table 1's IW-1 delay and
    IW-3 decrease, and on Table 2's utilization and drop rate."""
    import numpy as np
    import pandas as pd

    cfgs = []
    for k, (name, kw) in enumerate(SENSITIVITY):
        for webs, ftps in ROWS:
            for iw in (1, 3):
                levels = {"variant": k, "webs": webs, "ftps": ftps, "iw": iw}
                cfgs.append((levels, scenario(webs, ftps, iw, "1.0", duration=FULL["duration"], calibration=_sensitivity_cal(kw))))
    run = run_configs("rfc2415", cfgs, 1, False, out, jobs, progress, variant="-sensitivity", overrides=overrides)
    # A run identical to one already stored (the calibrated model's, or a
    # variant that changes nothing in a row) is stored once: look runs up by
    # id (one replication: the runs are in the configurations' order).
    metrics = per_run(run.store, None).drop(columns=["variant", "webs", "ftps", "iw", "part", "http", "queue", "mix"], errors="ignore")
    metrics = metrics.drop_duplicates("run_id").set_index("run_id")
    keep_metrics("rfc2415", run.store, metrics.loc[list(dict.fromkeys(run.run_ids))].reset_index(), STORED_METRICS)
    per = pd.DataFrame([{**levels, **metrics.loc[rid].to_dict()} for (levels, _), rid in zip(cfgs, run.run_ids, strict=True)])
    rows = []
    scored = [(w, f) for w, f in ROWS if f >= 1 and not (w == 32 and f <= 2)]
    for k, (name, _) in enumerate(SENSITIVITY):
        d = per[per.variant == k].set_index(["webs", "ftps", "iw"])
        d1 = np.array([d.loc[(w, f, 1), "web_delay"] for w, f in ROWS])
        rfc1 = np.array([RFC_DELAY["1.0"][r][0] for r in ROWS])
        dec3 = np.mean([100 * (1 - d.loc[(w, f, 3), "web_delay"] / d.loc[(w, f, 1), "web_delay"]) for w, f in ROWS])
        util_ftp = np.mean([d.loc[(w, f, 1), "util"] - RFC_UTIL_DROP[(w, f)][0][0] for w, f in ROWS if f >= 1])
        util_web = np.mean([d.loc[(w, 0, 1), "util"] for w in (8, 16, 32)])
        ratios = [d.loc[(w, f, iw), "drop_pct"] / RFC_UTIL_DROP[(w, f)][1][iw - 1] for w, f in scored for iw in (1, 3)]
        rows.append({
            "variant": name,
            "IW-1 delay / RFC": round(float(np.mean(d1 / rfc1)), 2),
            "IW-1 rows within 30%": int(np.sum(np.abs(d1 / rfc1 - 1) <= 0.3)),
            "IW-3 decrease %": round(float(dec3), 1),
            "util. - RFC, FTP rows": round(float(util_ftp), 1),
            "util. no FTPs (RFC 64)": round(float(util_web), 1),
            "drop / RFC": round(float(np.mean(ratios)), 2),
            "drop cells within 35%": f"{sum(abs(r - 1) <= 0.35 for r in ratios)} of {len(ratios)}",
        })  # fmt: skip
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Figures, printed tables, the report, and the command.

PATHOLOGICAL = {(32, 2), (32, 3)}


def figures(t: dict[str, "pd.DataFrame"], out_dir: "Path") -> list["Path"]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    sp = t["power"]
    for num, http, col, ylabel in ((1, "1.0", "web_power", "network power (MB / s of median page delay)"),
                                   (2, "1.0", "normalized", "network power / network power at IW = 1"),
                                   (3, "1.1", "web_power", "network power (MB / s of median page delay)"),
                                   (4, "1.1", "normalized", "network power / network power at IW = 1")):  # fmt: skip
        fig, ax = plt.subplots(figsize=(7, 4.8))
        colors = plt.get_cmap("tab20").colors
        for k, ((w, f), g) in enumerate(sp[sp.http == http].groupby(["webs", "ftps"])):
            g = g.sort_values("iw")
            style = "--" if (w, f) in PATHOLOGICAL else "-"
            color = colors[(2 * k) % 20 + (k >= 10)]
            ax.plot(g.iw, g[col], style, marker="o", color=color, label=f"{w} webs / {f} ftps")
            ax.plot(g.iw, g[f"rfc_{col}"], linestyle="none", marker="x", markersize=7, color=color)
        ax.set_xticks([1, 2, 3, 4])
        ax.set_xlabel("initial window (segments)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"Figure {num}: HTTP/{http}" + (", normalized to IW = 1" if col == "normalized" else ""))
        ax.grid(True, alpha=0.3)
        ax.plot([], [], linestyle="none", marker="x", color="0.3",
                label="RFC: its delays (Table " + ("1" if http == "1.0" else "4") + ")" + (", our goodput" if col == "web_power" else ", goodput equal"))  # fmt: skip
        ax.legend(fontsize=7, ncol=2)
        paths.append(save_figure(fig, out_dir / f"figure{num}.png", dpi=110))
    return paths


def _view(name: str, t: "pd.DataFrame") -> "pd.DataFrame":
    """The columns printed for each table (ours, the RFC's, the difference)."""
    if name in ("table1", "table4"):
        return t[["webs", "ftps", "iw1_s", "iw1_ci", "rfc_iw1_s", "iw1_diff_pct", "dec2_pct", "rfc_dec2_pct", "dec3_pct", "rfc_dec3_pct", "dec4_pct", "rfc_dec4_pct"]]
    if name in ("table3", "table5"):
        return t[["webs", "ftps"] + [c for iw in (1, 2, 3, 4) for c in (f"power{iw}", f"power{iw}_ci", f"rfc_power{iw}")]]
    return t


TITLES = {
    "table1": "Table 1. Median web page delay, HTTP/1.0: IW=1 (s) and % decrease at IW 2-4",
    "table2": "Table 2. Link utilization (%) and packet drop rate (%), HTTP/1.0",
    "table3": "Table 3. Network power of the file transfers (MB / s), HTTP/1.0",
    "table4": "Table 4. Median web page delay, HTTP/1.1: IW=1 (s) and % decrease at IW 2-4",
    "table5": "Table 5. Network power of the file transfers (MB / s), HTTP/1.1",
    "table6": "Table 6. Half-and-half: goodput (MB per 360 s), median page delay (s), utilization (%), drops (%)",
    "table_red": "Table R. RED at the bottleneck (HTTP/1.0): median page delay (s) and gain over DropTail at IW=1",
}


def print_tables(t: dict[str, "pd.DataFrame"], console: Any) -> None:
    for name, title in TITLES.items():
        print_table(console, title, _view(name, t[name]))


def _load_and_drops(t: dict[str, "pd.DataFrame"]) -> str:
    """The report's account of Table 2's load and drops, from the table."""
    import numpy as np

    t2 = t["table2"]
    z = t2[t2.ftps == 0].sort_values("webs")
    below = "below the RFC's in every row" if (z.util1 < z.rfc_util1).all() else "not below the RFC's in every row"
    load = ", ".join(f"{r.webs} webs {r.util1:.0f}% against {r.rfc_util1:.0f}%" for r in z.itertuples())
    ratio = sorted((float(np.mean([getattr(r, f"drop{iw}") / getattr(r, f"rfc_drop{iw}") for iw in (1, 2, 3, 4)])), r.webs, r.ftps)
                   for r in _scored_drop_rows(t2).itertuples())  # fmt: skip
    far = [f"{w}/{f}" for v, w, f in ratio if v < 0.65]
    return ("- **Load and drops.** With an 11-packet window over a ~110 ms round trip, one FTP client can carry at most "
            "about 1.1 Mb/s, so rows with FTPs reach their utilization only with the web load on top. Our web load without "
            f"FTPs is {below} (Table 2 at IW 1: {load}). Our drop rates as a share of the RFC's (each scored row's mean ratio over IW 1-4, webs/FTPs): "
            + ", ".join(f"{w}/{f} {v:.2f}" for v, w, f in ratio)
            + (f"; far below it (under 0.65) in {', '.join(far)}, where the FTPs leave the bottleneck room that our lighter web "
               "load does not fill (see the calibration above)." if far else "."))


def _http11_gains(t: dict[str, "pd.DataFrame"]) -> str:
    """The report's comparison of HTTP/1.1's IW gains (Table 4) with
    HTTP/1.0's (Table 1), ours and the RFC's, from the tables."""
    mean = {(n, who): [t[n][f"{who}dec{iw}_pct"].mean() for iw in (2, 3, 4)] for n in ("table1", "table4") for who in ("", "rfc_")}
    show = lambda v: " / ".join(f"{x:.1f}" for x in v)  # noqa: E731
    gap = {who: [a - b for a, b in zip(mean["table1", who], mean["table4", who])] for who in ("", "rfc_")}
    if all(g > 0 for g in gap[""]):
        how = "smaller at every IW, as the RFC's are"
        how += ", but by less" if all(a < b for a, b in zip(gap[""], gap["rfc_"])) else ""
    elif all(g < 0 for g in gap[""]):
        how = "larger at every IW, where the RFC's are smaller"
    else:
        how = "smaller at some IWs and larger at others, where the RFC's are smaller at every IW"
    return (f"- **HTTP/1.1's IW gains** (Table 4) average {show(mean['table4', ''])}% at IW 2 / 3 / 4, against HTTP/1.0's "
            f"{show(mean['table1', ''])}% (Table 1): {how} ({show(mean['table4', 'rfc_'])}% against {show(mean['table1', 'rfc_'])}%; "
            f"HTTP/1.0 minus HTTP/1.1, ours {show(gap[''])} points, the RFC's {show(gap['rfc_'])}). Our HTTP/1.1 page saves the "
            "second round of handshakes, so its base delay is shorter and the same saved round trips weigh more; the RFC's rough "
            "model is not described closely enough to tell which of its details (a single response of all four objects, or "
            "requests in turn) made its gains smaller. A single four-object response gave larger gains (23% at IW 2).")


def report(t: dict[str, "pd.DataFrame"], results: list[tuple[str, bool, str]], meta: dict[str, Any], figs: list["Path"],
           sens: "pd.DataFrame | None" = None) -> str:  # fmt: skip
    lines = [
        TITLE,
        "",
        f"Mode: **{meta['mode']}**: {counted(meta['replications'], 'replication')} of {meta['duration']} per configuration, "
        f"{meta['runs']} runs, {meta['wall_s']:.1f} s of wall time on "
        + (f"{counted(meta['jobs'], 'worker')}." if isinstance(meta["jobs"], int) else "all cores."),
        "Numbers are means over replications of each run's metric, with 95% t-interval half-widths (`_ci`); "
        "`rfc_` columns are the RFC's.",
        "",
        "## The model",
        "",
        "As in RFC 2415 section 2, with the TCP and applications of the code its authors ran where the RFC is silent: "
        "ns-2's BayFullTcp and its FTP client and server (`baytcp/` in ns-2, by K. Nichols; the RFC's \"tcp-full code "
        "... modified to use an application class\"). Page delay runs from the primary's connection opening to the last "
        "object's arrival. Network power is goodput (MB per 360 s) over median delay (s). Every parameter:",
        "",
        "| parameter | value | source |",
        "|---|---|---|",
        *[f"| {n} | {v} | {src} |" for n, v, src in PARAMETERS],
        "",
        "### Calibration",
        "",
        "Three values are fitted, and say so above: the access-link delay, and the object sizes' median (inside the "
        "range the RFC gives) and tail index, chosen against Table 1's IW-1 delays and IW decreases. Reading the think "
        "time as counted from the previous request is a choice the RFC's wording allows; the sensitivity table shows "
        "what the other reading does.",
        "",
        "**Where Table 2's drops went missing.** An earlier calibration delayed ACKs (a 50 ms timer, fitted), kept each "
        "FTP client on one connection, counted think times from a page's end and drew objects of median 1000 B; its drop "
        "rates were about half the RFC's (mean ratio 0.47 at IW 1; 5 of the 28 cells within 35%). Each change, on the "
        "whole HTTP/1.0 grid (3 replications): ACKing every segment, as BayFullTcp does, raised drop rates by about half "
        "(16 webs / 2 FTPs: 1.4 to 2.2%) and cut the IW gains (IW-3 decrease 24.8 to 17.2%); a connection per FTP file "
        "changed little on its own; counting think times from the request raised the web load by a quarter (8 webs, no "
        "FTPs: 27 to 38% utilization) and the drops with it; a median of 1600 B (inside two packets, as the RFC says, "
        "where 1000 B fits in one) restored the IW gains. The buffers hold 25 packets as ns-2's DropTail counts them, 24 "
        "waiting and the one being sent (until this model counted 25 waiting, one more than ns-2 holds; the change "
        "raised the mean drop ratio at IW 1 from 0.57 to 0.60 and left 14 drop cells within 35%); RFC 2988's 1 s RTO minimum, which this model used before it took the 200 ms floor of 1998's "
        "ns-2, is a row of the sensitivity table (it changes one or two drop cells). What remains: "
        "the rows with one FTP (8/1, 16/1) and 8/2 drop far less than the RFC's; with our windows one FTP cannot fill "
        "the bottleneck (11 packets against a ~13-packet pipe), so their drops come from web bursts alone, and our web "
        "load without FTPs is well below the RFC's (Table 2). Heavier-tailed objects raise it to the RFC's and bring "
        "most drop cells within 35% (the sensitivity rows `tail index 1.1` and `object median 1000 B, tail index "
        "1.0`), but the congested rows' page delays then run far above Table 1's and the IW gains fall. A scan of 72 "
        "combinations (one replication each, IW 1-4) of object median (900-2000 B), tail index (0.9-1.3), size cap "
        "(1 or 10 MB), think times from the request or from the page's end, and RTO minimum (0.2 or 1 s) found none "
        "that meets Table 1's checks and 20 of Table 2's 28 drop cells together: those with 20 or more drop cells "
        "within 35% had at most 6 IW-1 delays within 30%, and those with 8 or more such delays at most 16 drop "
        "cells. Without FTPs at IW 4 our page delays agree with the RFC's, but at IW 1 they are up to a round trip "
        "longer (Table 1), while the RFC's pages carry more bytes: its objects need fewer round trips at IW 1 than any "
        "size distribution we tried gives, and its web model is not published.",
        "",
        "**A sourced web load.** The RFC cites Mah (1997) for its object sizes, and ns-2, which it ran, ships Mah's "
        "reply lengths as an empirical distribution: median 2,112 B (\"fits completely into two packets\"), mean "
        "7.2 kB. With those sizes and think times counted from a page's end (the RFC's plain wording), a web client "
        "offers 4 x 7.2 kB per ~3.6 s, and 8 of them load the bottleneck to the RFC's 34% without FTPs "
        "(`studies/data/mah97_http_reply_sizes.csv`; the last two rows of the sensitivity table). Fetched as the model "
        "above does, primary first, those pages take far longer than Table 1's. If a page's four objects are asked for "
        "at once (four connections, as the RFC's HTTP/1.1 model sends a page on one), the uncongested delays come near "
        "Table 1's and the drop rates near Table 2's, with no fitted web parameter; but the congested rows' delays "
        "then run to two or three times the RFC's, mostly lost SYN-ACKs waiting out the 3 s initial RTO, and the IW "
        "gains fall below its. ns-2's own TCP does the same with this load (`benchmarks/ns2_rfc2415.py`: ns-2 2.35's "
        "FullTcp, 3 seeds, 10 rows, IW 1 and 3): its median page delays are within 15% of ours in every row and its "
        "utilization within 2.3 points, its pages in the rows with 3 FTPs also take 1.6-2.4 times Table 1's (8 webs "
        "at IW 1: 2.16-2.42 s, the RFC's 1.26 s), and it drops more than we do (up to 1.7 times as often with 8 webs and "
        "1 FTP, about as often with 32 webs and 3). So no sourced web model we found, in ns-2 or here, gives Table 1 "
        "and Table 2 together. We keep the fitted model, which matches Table 1, and report this one beside it.",
        "",
        "**Drops from bursts, not load.** What the missing drops need is burstier web traffic more than heavier. With "
        "a page's four objects asked for at once over HTTP/1.0 (four connections opened together), the sizes refitted "
        "to Pareto median 1900 B and tail index 1.2, think times from a page's end and each FTP client on one "
        "connection (the sensitivity table's last row; `benchmarks/rfc2415_calibration.py` runs it), the whole study (5 replications) comes close to both "
        "tables: 10 of 12 IW-1 delays within 30%, decreases 13.1 / 18.2 / 22.2 (at IW 3, 0.1 point short of the check), Table 2's "
        "drop rates in 18 of 28 cells, its utilization within 5.5 points. With the 250-byte requests this model used until it "
        "took Mah's median of 231 B, the same variant met every Table 1 check and 21 of 28 drop cells: 19 bytes "
        "more per request moved three cells, so that fit is within the noise of its replications. With the primary first, as here, "
        "and the other three changes kept, a scan of medians 1200-1800 B and tail indices 1.1-1.3 (3 replications, 250-byte requests) "
        "reached at most 16 drop cells. It is not adopted, as it contradicts the RFC elsewhere: its HTTP/1.1 pages come "
        "faster than its HTTP/1.0 pages in 2 of the 12 rows (the RFC's in 10), while the RFC's text has the embedded "
        "URLs, not the primary, open their connections together; its drop rates rise by more than a point from IW 1 "
        "to 4 in four rows where the RFC's do not; and its FTP network power trends with IW in three rows (Table 3).",
        "",
        *(["### Sensitivity", "",
           "Each free parameter varied alone, on the HTTP/1.0 grid at IW 1 and 3 (one replication of 360 s each). "
           "`IW-1 delay / RFC`: mean ratio over the 12 rows; `util. - RFC, FTP rows`: mean difference in points at IW 1; "
           "`drop / RFC` and the cells within 35%: the 7 scored rows at IW 1 and 3.", "",
           md_table(sens), ""] if sens is not None else []),
        "## Acceptance checks",
        "",
    ]
    lines += check_lines(results)
    lines += ["", "## Tables", ""]
    for name, title in TITLES.items():
        lines += [f"### {title}", "", md_table(_view(name, t[name])), ""]
    lines += ["## Figures", ""]
    for p in figs:
        lines += [f"![{p.stem}]({p.name})", ""]
    lines += [
        "## Where we differ from the RFC, and why we think so",
        "",
        _load_and_drops(t),
        "- **Absolute delays** depend on the object-size model, which the RFC only cites; the trends (every row faster "
        "with larger IW, HTTP/1.1 faster than HTTP/1.0, smaller gains from IW 1 to 2 with HTTP/1.1) do not.",
        "- **Table 2's 32-web drop rows** for ftps 0-2 repeat the 16-web rows digit for digit in the RFC, a copying "
        "error we do not chase; the drop-rate check leaves them out.",
        _http11_gains(t),
        "- **FTP network power** is our goodput (MB per 360 s) over the median 1 MB transfer time; the RFC's unit is "
        "not stated exactly, so compare its trend across IW, not its level.",
        "- **RED** (Table R): the RFC only remarks that RED with IW = 1 gained about as much as larger IWs without RED. "
        "Compare `red_iw1_gain_pct` with `droptail_iw3_gain_pct` row by row.",
        "",
    ]
    return "\n".join(lines)


def reproduce(quick: bool = False, jobs: int | None = None, out: str | Path = "rfc2415-out", progress: bool = True, console: Any = None,
              overrides: dict[str, Any] | None = None, replications: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Run the whole study (or its quick form), print Tables 1-6 against the
    RFC's, and write CSVs, Figures 1-4 and a Markdown report into `out`;
    `overrides` (dotted scenario paths) are set in every run."""
    from rich.console import Console

    check_call("rfc2415", out, quick)
    console = console or Console()
    mode = QUICK if quick else FULL
    reps, named = replications_of(mode, replications)
    run = run_configs("rfc2415", configurations(mode["duration"]), reps, quick, out, jobs, progress, variant=named, overrides=overrides)
    per = per_run(run.store, None, run.run_ids)
    keep_metrics("rfc2415", run.store, per, STORED_METRICS)
    t = tables(per)
    results = checks(t, per)
    print_tables(t, console)
    figs = figures(t, run.out_dir)
    sens = None if quick else sensitivity(out, jobs, progress, overrides)
    tabs = {**t, "per_run": per}  # every study writes its per-run metrics
    if sens is not None:
        tabs["sensitivity"] = sens
    meta = {"mode": "quick" if quick else "full", "replications": reps, "duration": mode["duration"],
            "runs": run.runs, "wall_s": run.wall_s, "jobs": jobs or "all cores"}  # fmt: skip
    return finish(run, tabs, results, lambda: report(t, results, meta, figs, sens), console, figs)
