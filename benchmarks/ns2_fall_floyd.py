#!/usr/bin/env python3
"""Fall and Floyd's drop patterns, packet by packet, in tcplab and in ns-2.

Runs `examples/fall-floyd-drops.toml` (one flow over a 0.8 Mb/s, 100 ms
link, 1 to 4 packets dropped from the window of the fifth round of slow
start) in tcplab and the same set-up in ns-2 2.35's one-way TCP agents
(`ns2/fall_floyd.tcl`: Agent/TCP, /Reno, /Newreno and /Sack1), and compares
every departure and drop at the slow link over 3 s (20 s for a long run of
losses, `BACKOFF`): the segment and the
time, to the microsecond.

tcplab runs with the settings that ns-2 2.35's defaults amount to
(`NS2_SETTINGS`): a segment of growth per ACK instead of RFC 3465 byte
counting, limited transmit (ns-2's `singledup_`, on since 2001), and a
timeout that halves the window, not the flight (`timeout_ssthresh = "ns2"`,
ns-2's `slowdown`), and growth on the ACK that ends a Reno or NewReno
recovery (`recovery_exit = "ns2"`, ns-2's `recv_newack_helper`), and an RTO
kept in whole ticks (`rtt_estimator = "ns2"`, ns-2's `rtt_update`), and
limited transmit that resends during a go-back (`limited_transmit_data =
"ns2"`, ns-2's `send_one`), and the agent's clock phase (`clock_phase`, ns-2's
`boot_time_`, `NS2_CLOCK_PHASE`); SACK
recovery and NewReno both ways, RFC 6675 / RFC 6582 and the ns-2 agents'
own (`ns2-1998`). It prints, for each case, how many packets the two traces
have, how long a prefix is identical, and the first difference. The
differences that remain, and their causes, are in DEVELOPERS.md ("Checked
against ns-2").

Every case runs twice: with an ACK for every segment (TCPSink), and with
delayed ACKs (TCPSink/DelAck: every second segment, else after 100 ms;
tcplab's `delayed_ack` with `delack_timeout = "100ms"`). Besides the
injected drops, two set-ups lose packets to the slow link's queue alone:
5 packets waiting with a 20-packet window, and 12 with a 64-packet window
(ns-2's `queue-limit` 6 and 13: its DropTail counts the packet being sent).

`--write-reference FILE` writes ns-2's traces as CSV
(`tests/data/ns2_fall_floyd.csv` is that file; `tests/test_ns2_reference.py`
checks tcplab against it without ns-2). It asserts nothing.

    python benchmarks/ns2_fall_floyd.py
    python benchmarks/ns2_fall_floyd.py --install-ns2 --write-reference tests/data/ns2_fall_floyd.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "fall-floyd-drops.toml")
#: The data packets dropped at r1->k1 (1-based, as the example counts them).
DROPS = {1: [20], 2: [20, 22], 3: [20, 22, 24], 4: [20, 22, 24, 26]}
#: A long run of losses (key 8 of DROPS, an ACK per segment only): segment 19
#: and each of its five retransmissions (five timeouts in a row: the timer backs
#: off to 32 times the RTO), then segment 100 and its fast retransmission, over
#: 20 s. Past a backoff of 8, ns-2 restarts its estimate at the next RTT
#: sample (`rtt_backoff`), which the timeout after the second loss shows.
BACKOFF = 8
DROPS[BACKOFF] = [20, 40, 41, 42, 43, 44, 107, 120]
#: How long each set-up runs, in seconds (3 unless listed).
SECONDS = {BACKOFF: 20}
#: Set-ups with no injected drop: the r1->k1 queue (packets waiting), and the window.
QUEUES = {5: 20, 12: 64}
#: The example's window and queue.
WINDOW, QUEUE = 20, 100
VARIANTS = ("tahoe", "reno", "newreno", "sack")
#: Where the script's agent's clock ticks fall: its boot_time_, a draw of ns-2's
#: default random stream, puts them 0.52-0.60 ms past each whole millisecond
#: (the range in which every run matches; at 0.60 ms and above, or below 0.52 ms,
#: some RTT sample counts a tick more or fewer).
NS2_CLOCK_PHASE = "0.56ms"
#: What ns-2 2.35's defaults amount to, in tcplab's fields.
NS2_SETTINGS = {"tcp.byte_counting": False, "tcp.limited_transmit": True, "tcp.timeout_ssthresh": "ns2", "tcp.recovery_exit": "ns2", "tcp.rtt_estimator": "ns2",
                "tcp.limited_transmit_data": "ns2", "tcp.sack_option_bytes": "ns2", "tcp.ca_increment": "ns2", "tcp.fast_retransmit_ssthresh": "ns2",
                "tcp.clock_phase": NS2_CLOCK_PHASE}  # fmt: skip
#: Each variant's recovery settings to compare (label, overrides).
RECOVERY = {
    "tahoe": [("", {})],
    "reno": [("", {})],
    "newreno": [("rfc6582", {}), ("ns2-1998", {"tcp.newreno_recovery": "ns2-1998"})],
    "sack": [("rfc6675", {}), ("ns2-1998", {"tcp.sack_recovery": "ns2-1998"}), ("ns2", {"tcp.sack_recovery": "ns2"})],
}
#: The receivers compared: ns-2's sink argument and tcplab's overrides.
SINKS = {"ack": ("", {}), "delack": ("delack", {"tcp.delayed_ack": True, "tcp.delack_timeout": "100ms"})}
START = 0.5  # the ns-2 script starts the flow at 0.5 s
MSS = 1000


def ns2_trace(variant: str, ndrops: int, workdir: str, sink: str = "ack", queue: int = QUEUE) -> list[tuple[str, float, int]]:
    """ns-2's departures ('-') and drops ('d') at r1->k1: (event, time, segment number), with
    `ndrops` injected drops (0: none) and `queue` packets waiting at most."""
    out = os.path.join(workdir, f"{variant}-{ndrops}-{sink}-{queue}.tr")
    drops = " ".join(str(n - 1) for n in DROPS.get(ndrops, []))
    window = QUEUES.get(queue, WINDOW)
    qlimit = queue + 1 if queue in QUEUES else queue
    cmd = ["ns", os.path.join(HERE, "ns2", "fall_floyd.tcl"), variant, drops, out, SINKS[sink][0] or "ack", str(window), str(qlimit),
           str(SECONDS.get(ndrops, 3))]  # fmt: skip
    subprocess.run(cmd, capture_output=True, check=True)
    rows = []
    with open(out) as f:
        for line in f:
            ev, t, *_, seq, _uid = line.split()
            if ev in ("-", "d"):
                rows.append((ev, round(float(t) - START, 6), int(seq)))
    return rows


def tcplab_trace(variant: str, ndrops: int, overrides: dict, sink: str = "ack", queue: int = QUEUE) -> list[tuple[str, float, int]]:
    """tcplab's departures and drops at r1->k1, in the same form."""
    import tcplab

    losses = {"losses.0.packets": DROPS[ndrops]} if ndrops else {"losses": []}
    setup = {"tcp.window": f"{QUEUES[queue]}pkt", "topology.links.1.queue": f"{queue}pkt"} if queue in QUEUES else {}
    ov = {"tcp.cc": variant, **losses, **setup, "sim.duration": f"{SECONDS.get(ndrops, 3)}s", **NS2_SETTINGS, **SINKS[sink][1], **overrides}
    pk = tcplab.run(EXAMPLE, overrides=ov).packets
    pk = pk[pk.event.isin(["dequeue", "drop"])]
    return [("-" if e == "dequeue" else "d", round(float(t), 6), int(s) // MSS) for t, e, s in zip(pk.t, pk.event, pk.seq)]


def identical_prefix(a: list, b: list, tol: float = 1e-6) -> int:
    """How many entries from the start are the same event, segment and time (within `tol` s)."""
    n = 0
    for x, y in zip(a, b):
        if x[0] != y[0] or x[2] != y[2] or abs(x[1] - y[1]) > tol:
            break
        n += 1
    return n


def compare(variant: str, ndrops: int, label: str, overrides: dict, ns2: list, sink: str, queue: int = QUEUE) -> dict:
    ours = tcplab_trace(variant, ndrops, overrides, sink, queue)
    same = identical_prefix(ns2, ours)
    whole = same == len(ns2) == len(ours)
    first = None if whole else (ns2[same] if same < len(ns2) else None, ours[same] if same < len(ours) else None)
    order = identical_prefix(ns2, ours, tol=float("inf"))
    lag = max((abs(x[1] - y[1]) for x, y in zip(ns2[:order], ours[:order])), default=0.0)
    return {"queue": queue, "sink": sink, "variant": variant, "recovery": label, "drops": ndrops, "ns2": len(ns2),
            "tcplab": len(ours), "same": same, "whole": whole, "first": first, "order": order, "lag": lag}  # fmt: skip


def fmt(e: tuple | None) -> str:
    return "-" if e is None else f"{'sent' if e[0] == '-' else 'drop'} {e[2]} at {e[1]:.6f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--install-ns2", action="store_true", help="apt-get install ns2 first if `ns` is missing")
    ap.add_argument("--write-reference", metavar="FILE", help="write ns-2's traces as CSV (queue, sink, variant, drops, event, t, seq)")
    args = ap.parse_args()
    if shutil.which("ns") is None:
        if not args.install_ns2:
            print("ns-2 (`ns`) is not installed: use --install-ns2", file=sys.stderr)
            return 2
        from bench_dumbbell import install_ns2

        install_ns2()
    rows, reference = [], []
    with tempfile.TemporaryDirectory() as tmp:
        setups = [(QUEUE, nd) for nd in DROPS] + [(q, 0) for q in QUEUES]
        for queue, nd in setups:
            for sink in ["ack"] if nd == BACKOFF else SINKS:
                for v in VARIANTS:
                    ns2 = ns2_trace(v, nd, tmp, sink, queue)
                    reference += [(queue, sink, v, nd, *e) for e in ns2]
                    rows += [compare(v, nd, label, ov, ns2, sink, queue) for label, ov in RECOVERY[v]]
    print(f"{'queue':>5} {'sink':6} {'variant':8} {'recovery':9} {'drops':>5} {'ns-2':>5} {'tcplab':>6} {'identical':>9}"
          f" {'in order':>8} {'max dt ms':>9}  first difference (ns-2 | tcplab)")  # fmt: skip
    for r in rows:
        same = "all" if r["whole"] else str(r["same"])
        diff = "" if r["whole"] else f"{fmt(r['first'][0])} | {fmt(r['first'][1])}"
        print(f"{r['queue']:>5} {r['sink']:6} {r['variant']:8} {r['recovery']:9} {r['drops']:>5} {r['ns2']:>5} {r['tcplab']:>6}"
              f" {same:>9} {r['order']:>8} {r['lag'] * 1e3:>9.3f}  {diff}")  # fmt: skip
    print("\nidentical: the leading departures and drops at r1->k1 with the same segment and time (to 1 us);")
    print("in order: the leading ones with the same segment, at any time; max dt: the largest time difference among those;")
    print(f"tcplab with {NS2_SETTINGS}")
    if args.write_reference:
        with open(args.write_reference, "w", newline="") as f:
            f.write("# ns-2 2.35, benchmarks/ns2/fall_floyd.tcl: departures (-) and drops (d) at r1->k1 with each sink,\n")
            f.write("# times from the flow's start, segment numbers from 0. Written by benchmarks/ns2_fall_floyd.py.\n")
            w = csv.writer(f)
            w.writerow(["queue", "sink", "variant", "drops", "event", "t", "seq"])
            w.writerows(reference)
        print(f"wrote {args.write_reference} ({len(reference)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
