"""One Reno flow against closed forms: without loss (below), and with
random loss against Padhye et al.'s throughput (at the end).

The slow-start model, round by round: with per-segment ACKs and a pipe so
large that each round drains before the next starts, round r (r = 0, 1, ...)
carries iw * 2**r segments and starts exactly r base RTTs after the first.
Within a round, segments leave the bottleneck one serialization time apart.
So segment m (m = 1, 2, ...) of round r reaches the receiver at

    r * RTT + D + (m - 1) * X_b + (adjustment for a short last segment)

where RTT is the round trip of one full segment and its ACK with no
queueing (propagation plus serialization on every hop both ways), D is the
one-way delay of a full segment (propagation plus serialization on each hop)
and X_b the bottleneck's serialization time of a full segment.
"""

from __future__ import annotations

import math

import pytest

import tcplab

from .conftest import HDR, MSS, dumbbell

ACCESS_BPS = 1e9
BOTTLENECK_BPS = 100e6
ACCESS_DELAY = 1e-3
BOTTLENECK_DELAY = 50e-3


def ser(nbytes: float, bps: float) -> float:
    return nbytes * 8 / bps


def hops(nbytes: float) -> float:
    """One-way delay of a packet of `nbytes` wire bytes across the three hops."""
    return (
        2 * (ser(nbytes, ACCESS_BPS) + ACCESS_DELAY)
        + ser(nbytes, BOTTLENECK_BPS)
        + BOTTLENECK_DELAY
    )


def model_completion(size: int, iw: int) -> float:
    n = math.ceil(size / MSS)
    last = size - (n - 1) * MSS
    rtt = hops(MSS + HDR) + hops(HDR)
    # Find the round r and the index m within it of segment n.
    r, sent = 0, 0
    while sent + iw * 2**r < n:
        sent += iw * 2**r
        r += 1
    m = n - sent
    xb_full = ser(MSS + HDR, BOTTLENECK_BPS)
    if m == 1:
        return r * rtt + hops(last + HDR)
    # The previous segment of the round leaves the bottleneck at
    # r*RTT + (first two hops of a full segment) + (m-2)*X_b; the last one
    # follows it, then crosses the last hop.
    prev_leaves = r * rtt + 2 * (ser(MSS + HDR, ACCESS_BPS) + ACCESS_DELAY) - ACCESS_DELAY + xb_full * (m - 1)
    return prev_leaves + ser(last + HDR, BOTTLENECK_BPS) + BOTTLENECK_DELAY + ser(last + HDR, ACCESS_BPS) + ACCESS_DELAY


SIZES = [MSS, 2 * MSS, 3 * MSS + 100, 10 * MSS, 20_000, 64 * 1024, 100_000, 250_000, 500_000, 1_000_000]


@pytest.mark.parametrize("iw", [1, 2, 4, 10])
@pytest.mark.parametrize("size", SIZES)
def test_slow_start_completion_time_matches_round_model(iw: int, size: int) -> None:
    sc = dumbbell(
        bottleneck_rate="100Mbps",
        bottleneck_delay="50ms",
        access_rate="1Gbps",
        access_delay="1ms",
        tcp={"iw": iw, "window": "1000pkt"},
        apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": size}],
    )
    res = tcplab.run(sc)
    f = res.flows.iloc[0]
    assert f.completed and f.bytes_delivered == size
    assert f.retx_pkts == 0 and res.links.drops.sum() == 0
    expected = model_completion(size, iw)
    assert f.fct_s == pytest.approx(expected, rel=0.01), (f.fct_s, expected)


def test_model_is_sensitive_to_the_initial_window() -> None:
    """Guard against a vacuous model: iw changes the predicted time by far more than 1%."""
    assert model_completion(100_000, 1) > 1.5 * model_completion(100_000, 10)


def base_rtt(bottleneck_bps: float) -> float:
    def one_way(nbytes: float) -> float:
        return 2 * (ser(nbytes, ACCESS_BPS) + ACCESS_DELAY) + ser(nbytes, bottleneck_bps) + BOTTLENECK_DELAY

    return one_way(MSS + HDR) + one_way(HDR)


def long_flow(window: int) -> tcplab.Result:
    """One unbounded transfer over a 10 Mb/s bottleneck for 200 s."""
    return tcplab.run(
        dumbbell(
            bottleneck_rate="10Mbps",
            duration="200s",
            tcp={"window": f"{window}pkt"},
            apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}],
        )
    )


@pytest.mark.parametrize("window", [5, 20, 60])
def test_window_below_bdp_gets_window_over_rtt(window: int) -> None:
    res = long_flow(window)
    rtt = base_rtt(10e6)
    assert window * (MSS + HDR) * 8 / rtt < 10e6, "the window is below the BDP"
    expected = window * MSS * 8 / rtt
    assert res.flows.goodput_bps.iloc[0] == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("window", [100, 300])
def test_window_above_bdp_gets_the_bottleneck_rate(window: int) -> None:
    res = long_flow(window)
    assert window * (MSS + HDR) * 8 / base_rtt(10e6) > 10e6, "the window is above the BDP"
    assert res.links.drops.sum() == 0
    expected = 10e6 * MSS / (MSS + HDR)
    assert res.flows.goodput_bps.iloc[0] == pytest.approx(expected, rel=0.01)
    bottleneck = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
    assert bottleneck.utilization == pytest.approx(1.0, abs=0.01)


def pftk_bps(p: float, rtt: float, t0: float, b: int = 1) -> float:
    """Padhye, Firoiu, Towsley and Kurose (SIGCOMM 1998), eq. (31) without
    the window limit: a Reno flow's throughput with loss probability p,
    round trip rtt, timeout t0 and b segments per ACK."""
    return MSS * 8 / (rtt * math.sqrt(2 * b * p / 3) + t0 * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p))


@pytest.mark.parametrize("p", [0.001, 0.003, 0.01])
def test_reno_with_random_loss_gets_padhye_throughput(p: float) -> None:
    """Losses drawn at random on the bottleneck's data packets, no queueing
    (a 100 Mb/s bottleneck far above the flow's rate), an ACK per segment:
    the mean goodput of 8 seeds is within 10% of the closed form, with
    t0 = 200 ms (the RTO floor, as RTTVAR stays near zero without queueing).
    Measured: 1.05, 0.98 and 0.93 of it. By AIMD's closed form, a window
    that grew 2 segments a round trip, or fell to 0.7 of itself at a loss
    instead of half, would give about 1.4 times as much."""
    goodputs = []
    for seed in range(1, 9):
        sc = dumbbell(bottleneck_rate="100Mbps", duration="300s", seed=seed, tcp={"window": "100MB", "rto_min": "200ms"},
                      apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}])  # fmt: skip
        sc["losses"] = [{"link": "r0->r1", "kind": "data", "rate": p}]
        res = tcplab.run(sc)
        assert res.links[(res.links.src == "r0") & (res.links.dst == "r1")].drops.iloc[0] > 0
        goodputs.append(res.flows.goodput_bps.iloc[0])
    expected = pftk_bps(p, base_rtt(100e6), t0=0.2)
    assert sum(goodputs) / len(goodputs) == pytest.approx(expected, rel=0.10)


@pytest.mark.parametrize("cc, expected, rel", [
    # RFC 3649 section 5: w = 0.12 / p^0.835 segments (263 at p = 1e-4).
    ("highspeed", 0.12 / 1e-4**0.835, 0.05),
    # RFC 9438 section 5.1 (C = 0.4, beta = 0.7): w = (C (3 + beta) / (4 (1 - beta)))^(1/4) RTT^(3/4) / p^(3/4),
    # RTT in seconds (188 at 100.4 ms and p = 1e-4), above its Reno-friendly 122.
    ("cubic", (0.4 * 3.7 / 1.2) ** 0.25 * 0.1004**0.75 / 1e-4**0.75, 0.10),
    ("reno", math.sqrt(1.5 / 1e-4), 0.05),  # Mathis et al. (1997): sqrt(3 / (2 p))
])  # fmt: skip
def test_each_controllers_mean_window_follows_its_response_function(cc: str, expected: float, rel: float) -> None:
    """Random losses (p = 1e-4) on the data of one long flow over a 10 Gb/s,
    100 ms path that never queues: the mean window (goodput x RTT) over 600 s
    is its controller's response function. Measured: highspeed 1.01, cubic
    1.07, reno 1.01 of it."""
    sc = dumbbell(bottleneck_rate="10Gbps", access_rate="10Gbps", access_delay="0.1ms", duration="600s", bottleneck_queue="100000pkt",
                  tcp={"cc": cc, "window": "1GB", "iw": 10}, apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}])  # fmt: skip
    sc["losses"] = [{"link": "r0->r1", "kind": "data", "rate": 1e-4}]
    res = tcplab.run(sc)
    window = res.flows.goodput_bps.iloc[0] * 2 * 0.0502 / 8 / MSS
    assert window == pytest.approx(expected, rel=rel)


def _expiries(n: int, rto: float = 1.0, cap: float = 60.0, max_backoff: int = 6) -> float:
    """When the n-th expiry of a retransmission timer comes, from the first
    send: the RTO doubles (at most max_backoff times) up to rto_max."""
    return sum(min(rto * 2 ** min(k, max_backoff), cap) for k in range(n))


@pytest.mark.parametrize("handshake", [False, True])
def test_a_connection_gives_up_after_max_retries_unanswered(handshake: bool) -> None:
    """RFC 9293 3.8.3's R2 as a count (Linux tcp_retries2 = 15): every packet
    the server (or, with a handshake, the client's SYN) sends is lost, so
    the 16th expiry finds 15 retransmissions unanswered and the connection
    closes: the run ends at 1 + 2 + ... + 32 + 10 x 60 = 663 s instead of
    never (duration 'none'). The SYN's timer backs off up to rto_max as
    the data's does (it went on doubling to 64 s)."""
    sc = dumbbell(tcp={"handshake": handshake})
    sc["losses"] = [{"link": "r1->r0" if handshake else "r0->r1", "rate": 1.0}]
    res = tcplab.run(sc)
    f = res.flows.iloc[0]
    assert _expiries(16) == 663.0
    assert res.engine["sim_seconds"] == pytest.approx(663.0, abs=1e-6)
    assert (bool(f.aborted), bool(f.completed), int(f.bytes_delivered)) == (True, False, 0)
    assert (int(f.syn_sent), int(f.timeouts)) == ((16, 0) if handshake else (0, 15))
    # 'none': never (as ns-2); the timer keeps expiring until the stop time.
    res = tcplab.run(sc, overrides={"tcp.max_retries": "none", "sim.duration": "2000s"})
    f = res.flows.iloc[0]
    expiries = max(n for n in range(100) if _expiries(n) <= 2000)
    assert (bool(f.aborted), int(f.syn_sent if handshake else f.timeouts)) == (False, expiries + 1 if handshake else expiries)


@pytest.mark.parametrize("retries,completes", [(3, True), (2, False)])
def test_a_new_ack_starts_the_count_again(retries: int, completes: bool) -> None:
    """The first segment's first three transmissions are lost: three
    expiries in a row (at 1, 3 and 7 s). With max_retries 3 the fourth
    transmission gets through and the transfer completes; with 2 the third
    expiry closes the connection at 7 s. The count is of one segment's
    retransmissions: the transfer's later losses start it again."""
    sc = dumbbell(tcp={"max_retries": retries}, apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "100kB"}])
    sc["losses"] = [{"link": "r0->r1", "packets": [1, 2, 3]}]
    res = tcplab.run(sc)
    f = res.flows.iloc[0]
    assert (bool(f.completed), bool(f.aborted)) == (completes, not completes)
    assert int(f.timeouts) == (3 if completes else 2)
    if not completes:
        assert res.engine["sim_seconds"] == pytest.approx(_expiries(3))
