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
    long_run = [(ff.QUEUE, "ack", v, ff.BACKOFF) for v in ff.VARIANTS]
    assert sorted(EVERY) == sorted([(q, k, v, n) for q, n in setups for k in ff.SINKS for v in ff.VARIANTS] + long_run)
    for (q, k, v, n), trace in EVERY.items():
        drops = [seq for ev, _, seq in trace if ev == "d"]
        if n == ff.BACKOFF:  # packets 20 and 40-44 are segment 19 and its retransmissions, 107 and 120 segment 100
            assert drops == [19] * 6 + [100, 100], (k, v, n)
        elif n:  # the nth packet on the link is segment n - 1
            assert drops == [d - 1 for d in ff.DROPS[n]], (k, v, n)
        else:  # the queue overflows in slow start, but for 5 packets with delayed ACKs' slower growth
            assert len(drops) >= (0 if (q, k) == (5, "delack") else 3), (q, k, v)


@pytest.mark.parametrize(
    "sink,variant,ndrops,overrides",
    [("ack", "tahoe", n, {}) for n in (1, 2)]
    + [("ack", "reno", 1, {}), ("ack", "newreno", 1, {}), ("ack", "newreno", 1, NEWRENO_NS2), ("ack", "sack", 1, {}), ("ack", "sack", 1, SACK_NS2)]
    + [("delack", "sack", 1, {})]
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


SACK_235 = {"tcp.sack_recovery": "ns2"}
SETUPS = [(ff.QUEUE, n) for n in (1, 2, 3, 4)] + [(q, 0) for q in sorted(ff.QUEUES)]


@pytest.mark.parametrize("queue,ndrops", SETUPS)
@pytest.mark.parametrize("sink", ["ack", "delack"])
def test_sack_with_ns2_235s_recovery_matches_ns2_in_every_case(sink, queue, ndrops):
    """`sack_recovery = "ns2"` (ns-2 2.35's Sack1: pipe from the segments outstanding,
    duplicate ACKs that count only with new SACK information and none after a timeout, the
    scoreboard cleared at each ACK of new data) with the rest of NS2_SETTINGS: every
    departure and drop of the 3 s, in each set-up and with either sink."""
    ref = EVERY[(queue, sink, "sack", ndrops)]
    ours = ff.tcplab_trace("sack", ndrops, SACK_235, sink, queue)
    assert len(ours) == len(ref) > 70
    assert ff.identical_prefix(ref, ours) == len(ref)


@pytest.mark.parametrize("queue,sink,ndrops,same", [(ff.QUEUE, "ack", 2, 40), (ff.QUEUE, "delack", 1, 33), (12, "ack", 0, 116)])
def test_the_sack_options_bytes_as_ns2_counts_them(queue, sink, ndrops, same):
    """ns-2's Sack1 sink adds 8 bytes a block to a 40-byte ACK; stacks send 4 more (two NOPs,
    kind and length). With `sack_option_bytes = "rfc2018"` the same packets follow in the
    same order, each SACK-carrying ACK 44 us later over this path's two links."""
    ref = EVERY[(queue, sink, "sack", ndrops)]
    rfc = ff.tcplab_trace("sack", ndrops, {**SACK_235, "tcp.sack_option_bytes": "rfc2018"}, sink, queue)
    assert ff.identical_prefix(ref, rfc) == same
    assert ff.identical_prefix(ref, rfc, tol=float("inf")) == len(ref) == len(rfc)
    assert rfc[same][1] - ref[same][1] == pytest.approx(44e-6, abs=1e-6)


@pytest.mark.parametrize("ndrops,same", [(2, 102), (3, 103), (4, 104)])
def test_congestion_avoidance_keeps_the_fraction_as_ns2s_double_cwnd_does(ndrops, same):
    """After SACK recovery ns-2's cwnd_ grows by 1/cwnd_ a segment per ACK, a double; in
    whole bytes (RFC 5681 equation 3, `ca_increment = "rfc5681"`) the truncation loses about
    0.001 segment an ACK, and segment 100 leaves a round trip (77 ms) after ns-2's."""
    ref = REF[("sack", ndrops)]
    assert ff.identical_prefix(ref, ff.tcplab_trace("sack", ndrops, SACK_235)) == len(ref)
    rfc = ff.tcplab_trace("sack", ndrops, {**SACK_235, "tcp.ca_increment": "rfc5681"})
    assert ff.identical_prefix(ref, rfc) == same
    assert ref[same][2] == rfc[same][2] == 100
    assert rfc[same][1] - ref[same][1] == pytest.approx(0.07688, abs=1e-6)


def test_a_fast_retransmit_halves_the_window_with_its_fraction_as_ns2_does():
    """The 5-packet queue: a loss in congestion avoidance with cwnd_ 10.867 segments. ns-2's
    slowdown sets ssthresh 5 and cwnd_ 5.433; halving the flight (10 segments) leaves cwnd at
    5, and segment 76 leaves 62 ms later (`fast_retransmit_ssthresh = "rfc5681"`)."""
    ref = EVERY[(5, "ack", "sack", 0)]
    rfc = ff.tcplab_trace("sack", 0, {**SACK_235, "tcp.fast_retransmit_ssthresh": "rfc5681"}, "ack", 5)
    assert ff.identical_prefix(ref, rfc) == 80
    assert ref[80][2] == rfc[80][2] == 76
    assert rfc[80][1] - ref[80][1] == pytest.approx(0.062224, abs=1e-6)


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
def test_the_1998_sack1_recovery_matches_ns2_235s_with_an_ack_per_segment(ndrops):
    """With an ACK per segment and the injected drops, the 1998 Sack1 (`ns2-1998`, pipe from
    cwnd) sends what ns-2 2.35's sends, packet for packet; with delayed ACKs its pipe, three
    segments below cwnd while limited transmit has sent two more, lets it resend segment 21
    sooner than 2.35's (21 to 79 ms)."""
    ref = REF[("sack", ndrops)]
    ours = ff.tcplab_trace("sack", ndrops, SACK_NS2)
    assert len(ours) == len(ref) > 120
    assert ff.identical_prefix(ref, ours) == len(ref)
    dl = DELACK[("sack", ndrops)]
    old = ff.tcplab_trace("sack", ndrops, SACK_NS2, "delack")
    same = ff.identical_prefix(dl, old)
    assert same == 34 and dl[same][2] == old[same][2] == 21
    assert 0.02 < dl[same][1] - old[same][1] < 0.08


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


@pytest.mark.parametrize("variant,overrides,n", [("tahoe", {}, 382), ("reno", {}, 405), ("newreno", {}, 405), ("sack", SACK_235, 386)])
def test_a_long_run_of_losses_matches_ns2_for_20_seconds(variant, overrides, n):
    """Segment 19 lost six times (five timeouts in a row, the timer backed off to 32 times the
    RTO), then segment 100 and its fast retransmission: every packet of 20 s matches ns-2.
    Past a backoff of 8 ns-2 sets its SRTT aside (`rtt_backoff`) and the next sample starts
    the estimate afresh; the timeout after the second loss depends on it (without that rule,
    Tahoe parted from ns-2 at packet 120 and Reno at 124)."""
    ref = EVERY[(ff.QUEUE, "ack", variant, ff.BACKOFF)]
    assert ref[-1][1] > 19.9
    ours = ff.tcplab_trace(variant, ff.BACKOFF, overrides)
    assert len(ours) == len(ref) == n
    assert ff.identical_prefix(ref, ours) == n


def test_tahoe_keeps_its_duplicate_ack_count_across_a_timeout_and_ticks_at_its_agents_phase():
    """Tahoe with 12 packets waiting and an ACK per segment: after the fast retransmit of
    segment 56 the timer fires while duplicate ACKs still arrive. ns-2's Agent/TCP keeps its
    count of them across the timeout, so they send nothing (with `limited_transmit_data =
    "ns2"` so does tcplab's Tahoe), and its RTT samples count ticks from its agent's
    boot_time_ (`clock_phase`, 0.52-0.60 ms here): every one of the 141 packets matches. With
    ticks at whole milliseconds the last sample before the loss counts 212 ticks, not 213,
    and each timeout fires 1 ms early: the same segments in the same order."""
    ref = EVERY[(12, "ack", "tahoe", 0)]
    ours = ff.tcplab_trace("tahoe", 0, {}, "ack", 12)
    assert len(ours) == len(ref) == 141
    assert ff.identical_prefix(ref, ours) == 141
    whole_ms = ff.tcplab_trace("tahoe", 0, {"tcp.clock_phase": "0s"}, "ack", 12)
    same = ff.identical_prefix(ref, whole_ms)
    assert same == 116 and ref[same] == ("-", 1.86942, 56) and whole_ms[same] == ("-", 1.86842, 56)
    assert ff.identical_prefix(ref, whole_ms, tol=1.0001e-3) == len(whole_ms) == 141


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
    """RFC 6582's NewReno with ns-2's timeout, recovery-exit and growth rules: all 134
    departures and drops of the 3 s. Growing in whole bytes (`ca_increment = "rfc5681"`),
    tcplab makes 133 of them, and ns-2 sends one more at 2.997 s."""
    ref = REF[("newreno", 2)]
    assert ff.identical_prefix(ref, ff.tcplab_trace("newreno", 2, {})) == len(ref) == 134
    ours = ff.tcplab_trace("newreno", 2, {"tcp.ca_increment": "rfc5681"})
    assert len(ours) == 133
    assert ff.identical_prefix(ref, ours) == 133 and ref[133][1] == pytest.approx(2.99738)
