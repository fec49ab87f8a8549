"""tcplab against ns-2 2.35's one-way TCP agents, packet by packet, on Fall
and Floyd's drop patterns (`examples/fall-floyd-drops.toml`).

`tests/data/ns2_fall_floyd.csv` holds ns-2's departures and drops at the
slow link, written by `benchmarks/ns2_fall_floyd.py --write-reference` from
`benchmarks/ns2/fall_floyd.tcl`; ns-2 is not needed here. tcplab runs with
the settings ns-2's defaults amount to (`NS2_SETTINGS`). DEVELOPERS.md
("Checked against ns-2") explains the differences that remain."""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import ns2_fall_floyd as ff  # noqa: E402


def _reference() -> dict[tuple[int, str, str, int], list[tuple[str, float, int]]]:
    ref: dict[tuple[int, str, str, int], list[tuple[str, float, int]]] = defaultdict(list)
    with open(ROOT / "tests" / "data" / "ns2_fall_floyd.csv", newline="") as f:
        rows = csv.DictReader(ln for ln in f if not ln.startswith("#"))
        for r in rows:
            ref[(int(r["queue"]), r["sink"], r["variant"], int(r["drops"]))].append((r["event"], float(r["t"]), int(r["seq"])))
    return ref


EVERY = _reference()
#: The injected drops (the example's 100-packet queue), by (sink, variant, drops).
ALL = {(sink, v, n): trace for (q, sink, v, n), trace in EVERY.items() if q == ff.QUEUE}
REF = {(v, n): trace for (sink, v, n), trace in ALL.items() if sink == "ack"}
DELACK = {(v, n): trace for (sink, v, n), trace in ALL.items() if sink == "delack"}
SACK_NS2 = {"tcp.sack_recovery": "ns2-1998"}
NEWRENO_NS2 = {"tcp.newreno_recovery": "ns2-1998"}


def test_the_reference_holds_every_case_with_its_drops():
    setups = [(ff.QUEUE, n) for n in (1, 2, 3, 4)] + [(q, 0) for q in sorted(ff.QUEUES)]
    assert sorted(EVERY) == sorted((q, k, v, n) for q, n in setups for k in ff.SINKS for v in ff.VARIANTS)
    for (q, k, v, n), trace in EVERY.items():
        drops = [seq for ev, _, seq in trace if ev == "d"]
        if n:
            assert drops == [d - 1 for d in ff.DROPS[n]], (k, v, n)
        else:  # the queue overflows in slow start, but for 5 packets with delayed ACKs' slower growth
            assert len(drops) >= (0 if (q, k) == (5, "delack") else 3), (q, k, v)


@pytest.mark.parametrize(
    "sink,variant,ndrops,overrides",
    [("ack", "tahoe", n, {}) for n in (1, 2)]
    + [("ack", "reno", 1, {}), ("ack", "newreno", 1, {}), ("ack", "newreno", 1, NEWRENO_NS2), ("ack", "sack", 1, {}), ("ack", "sack", 1, SACK_NS2)]
    + [("delack", "tahoe", n, {}) for n in (1, 2)]
    + [(sink, "reno", n, {}) for sink in ("ack", "delack") for n in (2, 3, 4)]
    + [(sink, "tahoe", n, {}) for sink in ("ack", "delack") for n in (3, 4)]
    + [("delack", "reno", 1, {})]
    + [("delack", "newreno", n, {}) for n in (1, 2, 3, 4)],
)
def test_tcplab_sends_what_ns2_sends_packet_for_packet(sink, variant, ndrops, overrides):
    """Every departure and drop at r1->k1 over 3 s: the same segment at the same microsecond."""
    ours = ff.tcplab_trace(variant, ndrops, overrides, sink)
    ref = ALL[(sink, variant, ndrops)]
    assert len(ours) == len(ref) > 40
    assert ff.identical_prefix(ref, ours) == len(ref)


def test_with_delayed_acks_sack_sends_ns2s_segments_in_ns2s_order():
    """SACK's ACKs carry 4 bytes of option more in tcplab (44 us over the two links):
    otherwise the same packets."""
    ours = ff.tcplab_trace("sack", 1, {}, "delack")
    ref = DELACK[("sack", 1)]
    assert len(ours) == len(ref)
    assert ff.identical_prefix(ref, ours, tol=float("inf")) == len(ref)
    assert max(abs(x[1] - y[1]) for x, y in zip(ref, ours)) == pytest.approx(44e-6, abs=1e-6)


@pytest.mark.parametrize("sink,ndrops", [("ack", 2), ("ack", 3), ("delack", 2), ("delack", 3)])
def test_the_rto_in_whole_ticks_times_renos_timeout_as_ns2s(sink, ndrops):
    """ns-2 keeps SRTT and RTTVAR in whole ticks (here 1 ms). With `rtt_estimator = "ns2"`
    (in NS2_SETTINGS) Reno's timeout fires at ns-2's microsecond; with RFC 6298's estimator,
    0.713 ms (0.865 ms with delayed ACKs) before it, and the same packets follow in order."""
    ref = ALL[(sink, "reno", ndrops)]
    rfc = ff.tcplab_trace("reno", ndrops, {"tcp.rtt_estimator": "rfc6298"}, sink)
    assert len(rfc) == len(ref)
    assert ff.identical_prefix(ref, rfc, tol=float("inf")) == len(ref)
    lag = {"ack": 713e-6, "delack": 865e-6}[sink]
    assert max(abs(x[1] - y[1]) for x, y in zip(ref, rfc)) == pytest.approx(lag, abs=1e-6)


@pytest.mark.parametrize(
    "variant,ndrops,overrides",
    [("reno", n, {}) for n in (1, 2, 3, 4)]
    + [("newreno", n, o) for n in (2, 3, 4) for o in ({}, NEWRENO_NS2)]
    + [("newreno", 1, {})]
    + [("sack", n, o) for n in (2, 3, 4) for o in ({}, SACK_NS2)],
)
def test_the_other_cases_agree_through_the_first_fast_retransmit(variant, ndrops, overrides):
    """Slow start, the drops, the fast retransmit of the first loss: 40 events alike to the microsecond."""
    ours = ff.tcplab_trace(variant, ndrops, overrides)
    ref = REF[(variant, ndrops)]
    same = ff.identical_prefix(ref, ours)
    assert same >= 40
    assert ref[39] == ours[39] == ("-", 1.14474, 19)  # the retransmission of the first loss


@pytest.mark.parametrize("ndrops", [2, 3, 4])
def test_ns2_sack1_recovery_sends_ns2s_segments_in_ns2s_order(ndrops):
    """With ns-2's Sack1 recovery the segments follow ns-2's order throughout; the times
    differ by the ACKs' SACK option bytes and, after recovery, by a round of growth."""
    ours = ff.tcplab_trace("sack", ndrops, SACK_NS2)
    ref = REF[("sack", ndrops)]
    assert len(ours) > 120
    assert ff.identical_prefix(ref, ours, tol=float("inf")) == len(ours)


@pytest.mark.parametrize("queue,ndrops,n", [(ff.QUEUE, 3, 89), (ff.QUEUE, 4, 82), (5, 0, 88)])
def test_rfc6582_newreno_times_out_where_ns2s_newreno_does(queue, ndrops, n):
    """Only the first partial ACK restarts the timer (RFC 6582's Impatient variant, ns-2's
    newreno_changes1_), so the timer fires in recovery (with 3 and 4 drops before the third
    retransmission, at 1.70382 s). ns-2's Newreno zeroes its inflation before halving the
    window there: with `timeout_ssthresh = "ns2"` tcplab matches it packet for packet to the
    end of the run; halving the inflated window (20 segments, the receiver's window) would set
    ssthresh to 10, where ns-2's is 5."""
    ref = EVERY[(queue, "ack", "newreno", ndrops)]
    ours = ff.tcplab_trace("newreno", ndrops, {}, "ack", queue)
    assert len(ours) == len(ref) == n
    assert ff.identical_prefix(ref, ours) == n
    if ndrops:
        assert ("-", 1.70382, 23) in ref


@pytest.mark.parametrize("sink,ndrops,same", [("ack", 3, 45), ("ack", 4, 45), ("delack", 3, 39), ("delack", 4, 39)])
def test_ns2_resends_on_a_duplicate_ack_during_tahoes_go_back_where_rfc_3042_sends_nothing(sink, ndrops, same):
    """ns-2's singledup_ sends the segment at t_seqno_ on a duplicate ACK, segment 26, sent
    before, while Tahoe goes back. With `limited_transmit_data = "ns2"` (in NS2_SETTINGS)
    tcplab does the same and matches ns-2 to the end; limited transmit of previously unsent
    data only (RFC 5681 section 3.2 step 1) waits for the next ACK there instead."""
    ref = ALL[(sink, "tahoe", ndrops)]
    assert ff.identical_prefix(ref, ff.tcplab_trace("tahoe", ndrops, {}, sink)) == len(ref)
    rfc = ff.tcplab_trace("tahoe", ndrops, {"tcp.limited_transmit_data": "unsent"}, sink)
    assert ff.identical_prefix(ref, rfc) == same
    assert ref[same][2] == 26 and 26 in [seq for _, _, seq in ref[:same]]
    assert rfc[same][1] > ref[same][1]


@pytest.mark.parametrize("variant,sink,n", [("reno", "ack", 166), ("newreno", "ack", 166), ("tahoe", "delack", 151)])
def test_an_ack_per_segment_and_the_12_packet_queue_match_ns2_packet_for_packet(variant, sink, n):
    """With an ACK per segment ns-2's limited transmit resends segment 57 on a duplicate ACK
    after a timeout; with `limited_transmit_data = "ns2"` so does tcplab, and every packet of
    the run matches, as it does for Tahoe with delayed ACKs."""
    ref = EVERY[(12, sink, variant, 0)]
    ours = ff.tcplab_trace(variant, 0, {}, sink, 12)
    assert len(ours) == len(ref) == n
    assert ff.identical_prefix(ref, ours) == n


@pytest.mark.parametrize("variant", ["reno", "newreno"])
def test_drops_from_the_queue_alone_match_ns2_packet_for_packet(variant):
    """With delayed ACKs and a 64-packet window, the 17 losses of a 12-packet queue that
    overflows in slow start and all that follows: ns-2's DropTail of queue-limit 13 holds
    what tcplab's queue of 12 waiting packets does."""
    ours = ff.tcplab_trace(variant, 0, {}, "delack", 12)
    ref = EVERY[(12, "delack", variant, 0)]
    assert len(ours) == len(ref) > 150 and sum(e[0] == "d" for e in ours) == 17
    assert ff.identical_prefix(ref, ours) == len(ref)


@pytest.mark.parametrize("queue,ndrops,n", [(ff.QUEUE, 2, 68), (ff.QUEUE, 3, 68), (5, 0, 72)])
def test_a_timeout_in_renos_recovery_halves_the_window_as_ns2_does(queue, ndrops, n):
    """The timer fires during Reno's fast recovery. ns-2 halves its window, which the fast
    retransmit had already halved; RFC 5681 halves the flight. With ns-2's rule
    (`timeout_ssthresh = "ns2"`, in NS2_SETTINGS) tcplab sends what ns-2 sends, packet for
    packet; with RFC 5681's, slow start after the timeout goes on past ns-2's ssthresh: the
    same segments, but more of them, and sooner by up to 0.2 s."""
    ref = EVERY[(queue, "ack", "reno", ndrops)]
    ours = ff.tcplab_trace("reno", ndrops, {}, "ack", queue)
    assert len(ours) == len(ref) == n
    assert ff.identical_prefix(ref, ours) == n
    rfc = ff.tcplab_trace("reno", ndrops, {"tcp.timeout_ssthresh": "rfc5681"}, "ack", queue)
    assert len(rfc) > n + 5
    assert max(abs(x[1] - y[1]) for x, y in zip(ref, rfc)) > 0.15


@pytest.mark.parametrize("sink,variant,ndrops", [("ack", "reno", 1), ("ack", "newreno", 1), ("delack", "newreno", 2)])
def test_the_ack_that_ends_recovery_grows_the_window_as_in_ns2(sink, variant, ndrops):
    """ns-2's Reno and Newreno open the window on the ACK that ends recovery (opencwnd in
    recv_newack_helper); with `recovery_exit = "ns2"` (in NS2_SETTINGS) tcplab matches ns-2
    packet for packet, and with RFC 5681's deflation to ssthresh alone its next segment of
    congestion avoidance leaves a round trip later."""
    ref = ALL[(sink, variant, ndrops)]
    assert ff.identical_prefix(ref, ff.tcplab_trace(variant, ndrops, {}, sink)) == len(ref)
    rfc = ff.tcplab_trace(variant, ndrops, {"tcp.recovery_exit": "rfc5681"}, sink)
    same = ff.identical_prefix(ref, rfc)
    assert same < len(ref) and rfc[same][2] == ref[same][2] and rfc[same][1] - ref[same][1] > 0.075


def test_newreno_with_two_drops_matches_ns2_to_the_end_of_the_run():
    """RFC 6582's NewReno with ns-2's timeout and recovery-exit rules: every one of the 133
    departures and drops tcplab makes in 3 s is ns-2's; ns-2 sends one more at 2.997 s."""
    ref = REF[("newreno", 2)]
    ours = ff.tcplab_trace("newreno", 2, {})
    assert (len(ours), len(ref)) == (133, 134)
    assert ff.identical_prefix(ref, ours) == 133
