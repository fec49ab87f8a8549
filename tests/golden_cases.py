"""The scenarios whose results the golden-results test pins (tests/test_golden.py).

Every example in examples/ plus a fixed set that covers each congestion
control, handshake on and off, delayed ACKs, web pages over HTTP/1.0 and
1.1, repeating and persistent clients, bursts, loss injection, RED, and
traces. Each is small enough to run in well under a second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import dumbbell

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))

CCS = ("tahoe", "reno", "newreno", "sack", "highspeed", "cubic")


def _mixed(cc: str) -> dict[str, Any]:
    """Three flows of one controller on a congested bottleneck: losses, recovery, timeouts."""
    return dumbbell(
        left=3, right=3, bottleneck_rate="2Mbps", bottleneck_delay="30ms", bottleneck_queue="12pkt",
        access_rate="20Mbps", access_delay=["1ms", "4ms", "9ms"], duration="12s", seed=3,
        tcp={"cc": cc, "window": "60pkt", "rto_min": "200ms", "delayed_ack": cc in ("sack", "cubic")},
        apps=[
            {"type": "bulk", "name": "a", "src": "s0", "dst": "k0", "size": "inf"},
            {"type": "bulk", "name": "b", "src": "s1", "dst": "k1", "size": "inf", "start": "0.5s"},
            {"type": "repeat", "name": "c", "src": "s2", "dst": "k2", "size": "80kB", "think": {"type": "exponential", "mean": "0.5s"}},
        ],
    )  # fmt: skip


def _web(http: str, handshake: bool) -> dict[str, Any]:
    return dumbbell(
        left=2, right=2, bottleneck_rate="1.5Mbps", bottleneck_delay="50ms", bottleneck_queue="10pkt",
        access_rate="10Mbps", duration="20s", seed=5,
        tcp={"window": "11pkt", "handshake": handshake, "rto_initial": "3s", "delayed_ack": True, "delack_timeout": "100ms",
             "byte_counting": False},
        apps=[
            {"type": "web", "name": f"web{i}", "src": f"s{i % 2}", "dst": f"k{i % 2}", "http": http, "start": f"{0.3 * i}s"}
            for i in range(4)
        ] + [{"type": "repeat", "name": "ftp", "src": "s1", "dst": "k1", "size": "300kB", "persistent": handshake}],
    )  # fmt: skip


def cases() -> dict[str, Any]:
    """name -> scenario (a TOML path or a dictionary)."""
    out: dict[str, Any] = {f"example-{p.stem}": p for p in EXAMPLES}
    for cc in CCS:
        out[f"cc-{cc}"] = _mixed(cc)
    for http in ("1.0", "1.1"):
        for hs in (False, True):
            out[f"web-http{http}-{'handshake' if hs else 'oneway'}"] = _web(http, hs)
    out["handshake-losses"] = dumbbell(
        left=1, right=1, bottleneck_rate="5Mbps", duration="none", seed=2,
        tcp={"handshake": True, "rto_initial": "1s", "iw": "rfc3390", "limited_transmit": True},
        apps=[{"type": "repeat", "name": "x", "src": "s0", "dst": "k0", "size": "40kB", "count": 6, "request": "300B",
               "think": {"type": "uniform", "min": "0.1s", "max": "0.4s"}}],
    )  # fmt: skip
    # SYNs and requests go from the client (k0) to the server (s0), over
    # r1->r0; SYN-ACKs from the server, over r0->r1.
    out["handshake-losses"]["losses"] = [
        {"link": "r1->r0", "kind": "syn", "packets": [1]},
        {"link": "r0->r1", "kind": "synack", "packets": [2]},
        {"link": "r1->r0", "kind": "request", "packets": [3]},
        {"link": "r0->r1", "kind": "data", "packets": [7, 30, 31]},
        {"link": "r1->r0", "kind": "ack", "rate": 0.05},
    ]
    out["persistent-http11-losses"] = _web("1.1", True)
    out["persistent-http11-losses"]["losses"] = [{"link": "r1->r0", "app": "web1", "kind": "request", "packets": [2, 5]}]
    out["red"] = dumbbell(
        left=4, right=4, bottleneck_rate="3Mbps", bottleneck_delay="20ms",
        bottleneck_queue={"type": "red", "limit": "40pkt", "min_th": 4, "max_th": 12, "gentle": True},
        access_rate="100Mbps", duration="10s", seed=9, tcp={"cc": "newreno", "window": "40pkt"},
        apps=[{"type": "bulk", "name": f"f{i}", "src": f"s{i}", "dst": f"k{i}", "size": "inf", "start": f"{0.2 * i}s"} for i in range(4)],
    )  # fmt: skip
    out["red-bytes"] = dumbbell(
        left=2, right=2, bottleneck_rate="2Mbps", bottleneck_delay="20ms",
        bottleneck_queue={"type": "red", "limit": "30KiB", "min_th": 3000, "max_th": 9000, "mode": "bytes", "gentle": False},
        duration="8s", seed=4, tcp={"cc": "sack", "window": "30pkt", "iw": 4},
        apps=[{"type": "repeat", "name": f"r{i}", "src": f"s{i}", "dst": f"k{i}", "size": "50kB"} for i in range(2)],
    )  # fmt: skip
    out["traces"] = dumbbell(
        left=2, right=2, bottleneck_rate="4Mbps", bottleneck_delay="25ms", bottleneck_queue="15pkt", duration="1.5s", seed=6,
        tcp={"cc": "cubic", "window": "80pkt", "ssthresh": "bdp", "idle_restart": False},
        apps=[{"type": "bulk", "name": "t0", "src": "s0", "dst": "k0", "size": "inf"},
              {"type": "repeat", "name": "t1", "src": "s1", "dst": "k1", "size": "60kB", "think": "0.3s",
               "tcp": {"cc": "highspeed", "iw": "4380B", "byte_counting": True}}],
    )  # fmt: skip
    out["traces"]["trace"] = {"interval": "100ms", "on_change": True, "apps": ["t1"], "links": ["r0->r1", "r1->r0"]}
    out["oneway-options"] = dumbbell(
        left=2, right=2, bottleneck_rate="1Mbps", bottleneck_queue="8pkt", duration="15s", seed=8,
        tcp={"cc": "reno", "window": "16pkt", "delayed_ack": True, "delack_segments": 3, "byte_counting": False,
             "abc_limit": 1, "dupack_threshold": 2, "max_backoff": 3, "sack_blocks": 2, "iw": "rfc6928"},
        apps=[{"type": "repeat", "name": "p", "src": "s0", "dst": "k0", "size": "120kB",
               "think": {"type": "exponential", "mean": "1s"}},
              {"type": "bulk", "name": "q", "src": "s1", "dst": "k1", "size": "2MB", "tcp": {"cc": "sack"}}],
    )  # fmt: skip
    out["bursts"] = dumbbell(
        left=2, right=2, bottleneck_rate="2Mbps", bottleneck_delay="70ms", bottleneck_queue="24pkt", access_rate="100Mbps",
        access_delay="11ms", duration="none", seed=11, tcp={"cc": "sack", "iw": 10, "delayed_ack": True, "rto_initial": "3s", "rto_min": "200ms", "window": "500pkt"},
        apps=[{"type": "burst", "name": "first", "src": "s0", "dst": "k0", "flows": 6, "total": "180kB"},
              {"type": "burst", "name": "later", "src": "s1", "dst": "k1", "flows": 6, "total": "180kB", "start": {"type": "uniform", "min": "0.2s", "max": "0.6s"}}],
    )  # fmt: skip
    # Send stalls at each sender's small interface queue, HSTCP's table, and web100 samples.
    out["local-congestion-web100"] = dumbbell(
        left=2, right=2, bottleneck_rate="100Mbps", bottleneck_delay="7ms", access_rate="20Mbps", access_delay="0.5ms",
        access_queue="12pkt", duration="3s", seed=12,
        tcp={"cc": "highspeed", "hstcp_lookup": "table", "local_congestion": "linux", "byte_counting": False, "window": "4MiB",
             "mss": "1448B", "header": "90B", "iw": 2, "rto_min": "200ms"},
        apps=[{"type": "bulk", "name": "h", "src": "s0", "dst": "k0", "size": "inf"},
              {"type": "repeat", "name": "r", "src": "s1", "dst": "k1", "size": "300kB", "think": "0.2s",
               "tcp": {"cc": "sack", "hstcp_lookup": "formula"}}],
    )  # fmt: skip
    out["local-congestion-web100"]["trace"] = {"web100": True, "interval": "50ms"}
    return out
