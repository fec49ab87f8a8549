"""TCP variants on the Fall & Floyd (1996) drop-pattern experiments, and the
connection lifecycle, loss injection, counters and traces."""

from __future__ import annotations

from pathlib import Path

import pytest

import tcplab

from .conftest import dumbbell

FF = str(Path(__file__).resolve().parent.parent / "examples" / "fall-floyd-drops.toml")
MSS = 1000
# Base round trip: 1040-byte data and 40-byte ACK over 8 Mb/s + 0.1 ms and 0.8 Mb/s + 100 ms.
RTT = (0.1e-3 + 1040 * 8 / 8e6 + 100e-3 + 1040 * 8 / 0.8e6) + (100e-3 + 40 * 8 / 0.8e6 + 0.1e-3 + 40 * 8 / 8e6)
DROPS = {1: [20], 2: [20, 22], 3: [20, 22, 24], 4: [20, 22, 24, 26]}


def ff(cc: str, ndrops: int) -> tcplab.Result:
    return tcplab.run(FF, overrides={"tcp.cc": cc, "losses.0.packets": DROPS[ndrops]})


def retransmissions(res: tcplab.Result):
    pk = res.packets
    return pk[(pk.event == "dequeue") & pk.retx & (pk.kind == "data")]


@pytest.mark.parametrize("cc", ["tahoe", "reno", "newreno", "sack"])
@pytest.mark.parametrize("ndrops", [1, 2, 3, 4])
def test_drops_are_injected_exactly(cc: str, ndrops: int) -> None:
    res = ff(cc, ndrops)
    link = res.links[(res.links.src == "r1") & (res.links.dst == "k1")].iloc[0]
    assert link.loss_drops == ndrops and link.drops == ndrops
    drops = res.packets[res.packets.event == "drop"]
    # Packet n (1-based) of a loss-free slow start carries segment n - 1.
    assert list(drops.seq // MSS) == [n - 1 for n in DROPS[ndrops]]
    f = res.flows.iloc[0]
    assert f.retx_pkts == f.retx_fast_pkts + f.retx_timeout_pkts
    assert f.retx_pkts == len(retransmissions(res))


@pytest.mark.parametrize("ndrops", [1, 2, 3, 4])
def test_tahoe_slow_starts_after_the_loss(ndrops: int) -> None:
    res = ff("tahoe", ndrops)
    f = res.flows.iloc[0]
    assert f.fast_retx == 1 and f.timeouts == 0
    assert f.ss_entries == 2, "the initial slow start and one after the loss"
    # When the retransmission leaves the bottleneck, the sender's window is one segment.
    first_retx = retransmissions(res).t.min()
    at = res.traces[res.traces.t <= first_retx].iloc[-1]
    assert at.cwnd == MSS and at.state == "slow_start" and at.t > first_retx - RTT
    # Go-back-N: Tahoe resends segments that were not lost when several were.
    assert (f.retx_pkts == 1) if ndrops == 1 else (f.retx_pkts > ndrops)


def test_reno_one_drop_fast_recovery_without_timeout() -> None:
    f = ff("reno", 1).flows.iloc[0]
    assert (f.fast_retx, f.timeouts, f.retx_pkts) == (1, 0, 1)


@pytest.mark.parametrize("ndrops", [3, 4])
def test_reno_three_or_more_drops_end_in_a_timeout(ndrops: int) -> None:
    f = ff("reno", ndrops).flows.iloc[0]
    assert f.fast_retx == 1 and f.timeouts >= 1


@pytest.mark.parametrize("ndrops", [1, 2])
def test_newreno_one_retransmission_per_rtt_and_no_timeout(ndrops: int) -> None:
    res = ff("newreno", ndrops)
    f = res.flows.iloc[0]
    assert (f.fast_retx, f.timeouts, f.retx_pkts) == (1, 0, ndrops)
    rt = retransmissions(res)
    assert list(rt.seq // MSS) == [n - 1 for n in DROPS[ndrops]]
    gaps = rt.t.diff().dropna()
    assert all(g == pytest.approx(RTT, rel=0.05) for g in gaps), list(gaps)


@pytest.mark.parametrize("ndrops", [3, 4])
def test_newreno_times_out_when_the_first_partial_acks_timer_runs_out(ndrops: int) -> None:
    """RFC 6582 restarts the timer on the first partial ACK only: one RTO after it the timer
    fires, before the ACK of the second partial ACK's retransmission can return, and sends
    the third hole again."""
    res = ff("newreno", ndrops)
    f = res.flows.iloc[0]
    assert (f.fast_retx, f.timeouts) == (1, 1)
    rt = retransmissions(res)
    assert list(rt.seq // MSS)[:4] == [19, 21, 23, 23]
    first_partial, second_partial, timeout = rt.t.iloc[1:4]  # each leaves an idle link at once
    assert second_partial - first_partial == pytest.approx(RTT, rel=0.01)
    assert 1.5 * RTT < timeout - first_partial < 2 * RTT  # one RTO (SRTT + 4 RTTVAR) after the first
    assert timeout - second_partial < RTT


def _recovery_sends(recovery: str, ndrops: int) -> tuple[tcplab.Result, "object"]:
    """NewReno on the drop experiment with a window that does not limit; the
    new (not retransmitted) segments sent from the fast retransmit until a
    round trip after the last retransmission."""
    res = tcplab.run(FF, overrides={"tcp.cc": "newreno", "tcp.window": "100pkt", "tcp.newreno_recovery": recovery,
                                    "losses.0.packets": DROPS[ndrops]})  # fmt: skip
    d = res.packets[(res.packets.event == "enqueue") & (res.packets.kind == "data")]
    rt = d[d.retx]
    return res, d[~d.retx & (d.t > rt.t.min()) & (d.t < rt.t.max() + 0.9 * RTT)]


@pytest.mark.parametrize("ndrops", [1, 2, 3, 4])
def test_ns2_flywheel_newreno_one_retransmission_per_rtt_and_new_data_from_the_fifth_dupack(ndrops: int) -> None:
    res, new = _recovery_sends("ns2-1998", ndrops)
    f = res.flows.iloc[0]
    assert (f.fast_retx, f.timeouts, f.retx_pkts) == (1, 0, ndrops)
    rt = retransmissions(res)
    assert list(rt.seq // MSS) == [n - 1 for n in DROPS[ndrops]]
    assert all(g == pytest.approx(RTT, rel=0.05) for g in rt.t.diff().dropna())
    # The flywheel sends its first new segment at the fifth duplicate ACK,
    # before RFC 6582's inflated window opens (half a window of them); with
    # two or more holes RFC 6582 sends more in all, since a partial ACK
    # deflates it only by what was acknowledged, while ns-2 deflated to cwnd.
    _, new_rfc = _recovery_sends("rfc6582", ndrops)
    assert new.t.min() < new_rfc.t.min()
    if ndrops > 1:
        assert len(new) < len(new_rfc)


@pytest.mark.parametrize("ndrops", [1, 2, 3, 4])
def test_sack_repairs_the_window_within_one_rtt(ndrops: int) -> None:
    res = ff("sack", ndrops)
    f = res.flows.iloc[0]
    assert (f.fast_retx, f.timeouts, f.retx_pkts) == (1, 0, ndrops)
    assert f.sack_blocks > 0
    rt = retransmissions(res)
    assert list(rt.seq // MSS) == [n - 1 for n in DROPS[ndrops]]
    assert rt.t.max() - rt.t.min() < RTT


@pytest.mark.parametrize("ndrops", [1, 2, 3, 4])
def test_ns2_sack1_recovery_repairs_the_window_within_one_rtt_but_later(ndrops: int) -> None:
    # ns-2's 1998 Sack1 (a pipe counter from cwnd - 3) repairs every hole in
    # one round trip without a timeout, as in Fall and Floyd's figures, but
    # waits for the counter to drain where RFC 6675 counts the lost segments
    # out of pipe at once: its later retransmissions go out later.
    res = tcplab.run(FF, overrides={"tcp.cc": "sack", "tcp.sack_recovery": "ns2-1998", "losses.0.packets": DROPS[ndrops]})
    f = res.flows.iloc[0]
    assert (f.fast_retx, f.timeouts, f.retx_pkts) == (1, 0, ndrops)
    rt = retransmissions(res)
    assert list(rt.seq // MSS) == [n - 1 for n in DROPS[ndrops]]
    assert rt.t.max() - rt.t.min() < RTT
    rfc = retransmissions(ff("sack", ndrops))
    if ndrops > 1:
        assert rt.t.iloc[-1] > rfc.t.iloc[-1]
        assert f.bytes_delivered < ff("sack", ndrops).flows.iloc[0].bytes_delivered
    else:
        assert list(rt.t) == list(rfc.t)


@pytest.mark.parametrize("ndrops", [1, 2, 3, 4])
def test_fack_retransmits_as_soon_as_a_sack_lies_three_segments_past_the_hole(ndrops: int) -> None:
    # FACK deems segment 19 lost once a SACKed byte lies 3 segments past it.
    # One drop: that is the third duplicate ACK, as with RFC 6675's IsLost.
    # Two or more (every other segment): the second duplicate ACK, SACKing
    # 20 and 22, where IsLost waits for a third SACKed segment; so the fast
    # retransmit reaches the bottleneck one ACK (one data packet's 10.4 ms
    # there) sooner. The later holes wait for pipe either way.
    def sent(loss: str):
        res = tcplab.run(FF, overrides={"tcp.cc": "sack", "tcp.sack_loss": loss, "losses.0.packets": DROPS[ndrops]})
        pk = res.packets
        rt = pk[(pk.event == "enqueue") & pk.retx & (pk.kind == "data")]
        f = res.flows.iloc[0]
        return (f.fast_retx, f.timeouts, f.retx_pkts), list(rt.seq // MSS), list(rt.t)

    (counts, seqs, t_fack), (_, _, t_rfc) = sent("fack"), sent("rfc6675")
    assert counts == (1, 0, ndrops)
    assert seqs == [n - 1 for n in DROPS[ndrops]]
    early = 0 if ndrops == 1 else 1040 * 8 / 0.8e6
    assert t_fack[0] == pytest.approx(t_rfc[0] - early, abs=1e-4)
    assert t_fack[1:] == t_rfc[1:]


def test_sack_beats_reno_and_tahoe_on_four_drops() -> None:
    got = {cc: ff(cc, 4).flows.iloc[0].bytes_delivered for cc in ("tahoe", "reno", "newreno", "sack")}
    assert got["sack"] > got["newreno"] and got["sack"] > got["reno"] and got["sack"] > got["tahoe"]


# ------------------------------------------------------------------ lifecycle

def _one_path(**tcp):
    return dumbbell(bottleneck_rate="10Mbps", bottleneck_delay="50ms", access_rate="100Mbps", access_delay="1ms",
                    tcp={"handshake": True, **tcp}, apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "1460B"}])  # fmt: skip


def one_way(nbytes: int) -> float:
    return 2 * (1e-3 + nbytes * 8 / 100e6) + 50e-3 + nbytes * 8 / 10e6


def test_one_segment_with_handshake_takes_two_rtts_plus_serialization() -> None:
    f = tcplab.run(_one_path(iw=1)).flows.iloc[0]
    rtt = 2 * one_way(40)
    # SYN, SYN-ACK, request (40 bytes each), then the 1500-byte segment.
    assert f.fct_s == pytest.approx(2 * rtt + one_way(1500) - one_way(40), abs=1e-9)
    assert (f.syn_sent, f.synack_sent, f.completed, f.closed) == (1, 1, True, True)
    # The handshake gave the server its first RTT sample.
    assert f.rtt_samples >= 1


@pytest.mark.parametrize("rto", ["3s", "1s"])
@pytest.mark.parametrize("kind,link", [("syn", "k0->r1"), ("synack", "s0->r0"), ("request", "k0->r1")])
def test_a_lost_handshake_packet_adds_exactly_the_initial_rto(rto: str, kind: str, link: str) -> None:
    base = tcplab.run(_one_path(rto_initial=rto)).flows.iloc[0].fct_s
    sc = _one_path(rto_initial=rto)
    sc["losses"] = [{"link": link, "kind": kind, "packets": [1]}]
    f = tcplab.run(sc).flows.iloc[0]
    assert f.fct_s - base == pytest.approx(float(rto[:-1]), abs=1e-9)


def test_handshake_off_means_one_way_transfer() -> None:
    f = tcplab.run(_one_path(handshake=False)).flows.iloc[0]
    assert f.fct_s == pytest.approx(one_way(1500), abs=1e-9)
    assert f.syn_sent == 0


def test_limited_transmit_avoids_a_timeout_with_a_small_window() -> None:
    def run(lt: bool):
        sc = dumbbell(tcp={"iw": 3, "ssthresh": "3pkt", "limited_transmit": lt, "window": "64KiB"},
                      apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "20kB"}])  # fmt: skip
        sc["losses"] = [{"link": "r0->r1", "kind": "data", "packets": [1]}]
        return tcplab.run(sc).flows.iloc[0]

    off, on = run(False), run(True)
    assert (off.timeouts, off.fast_retx) == (1, 0)
    assert (on.timeouts, on.fast_retx) == (0, 1)
    assert on.fct_s < off.fct_s


@pytest.mark.parametrize("iw,segments", [(4, 4.0), ("4380B", 3.0), ("rfc3390", 3.0), ("rfc6928", 10.0), ("2000B", 2000 / 1460)])
def test_initial_window_forms(iw, segments) -> None:
    f = tcplab.run(dumbbell(tcp={"iw": iw})).flows.iloc[0]
    assert f.iw == pytest.approx(segments)


def test_ssthresh_bdp_is_the_path_bdp() -> None:
    sc = dumbbell(bottleneck_rate="10Mbps", bottleneck_delay="50ms", access_rate="100Mbps", access_delay="1ms",
                  tcp={"ssthresh": "bdp", "window": "1000pkt"})  # fmt: skip
    sc["trace"] = {"on_change": True}
    tr = tcplab.run(sc).traces
    rtt = one_way(1500) + one_way(40)
    assert tr.ssthresh.iloc[0] == int(10e6 * rtt / 8)


def test_window_above_64k_needs_scaling() -> None:
    with pytest.raises(tcplab.ScenarioError, match=r"tcp.window = '100pkt': is 146000 bytes, above 65535 without window scaling"):
        tcplab.run(dumbbell(tcp={"window": "100pkt", "window_scaling": False}))
    tcplab.run(dumbbell(tcp={"window": "44pkt", "window_scaling": False}))


def test_random_loss_rate() -> None:
    sc = dumbbell(duration="60s", tcp={"window": "30pkt"}, apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}])
    sc["losses"] = [{"link": "r0->r1", "rate": 0.02}]
    link = tcplab.run(sc).links.set_index(["src", "dst"]).loc[("r0", "r1")]
    n, p = link.arrivals, 0.02
    sd = (n * p * (1 - p)) ** 0.5
    assert abs(link.loss_drops - n * p) < 5 * sd and n > 2_000


def test_variants_share_a_link_and_each_completes() -> None:
    ccs = ["tahoe", "reno", "newreno", "sack", "highspeed", "cubic"]
    apps = [{"type": "bulk", "name": cc, "src": f"s{i}", "dst": f"k{i}", "size": "300kB", "tcp": {"cc": cc}} for i, cc in enumerate(ccs)]
    sc = dumbbell(left=6, right=6, bottleneck_rate="5Mbps", bottleneck_queue="15pkt", access_rate="100Mbps", apps=apps,
                  tcp={"rto_min": "200ms"})  # fmt: skip
    f = tcplab.run(sc).flows.set_index("app")
    assert list(f.cc) == ccs
    assert f.completed.all() and (f.bytes_delivered == 300_000).all()


def test_hystart_leaves_slow_start_before_the_queue_overflows() -> None:
    # One CUBIC flow, IW 10, a window that never limits, 10 Mb/s with 50
    # packets of buffer: plain slow start overshoots and loses 145 packets
    # (one timeout); with Linux's HyStart it ends when a round's RTT rises by
    # its 2 ms floor, the queue peaks at 26 and nothing is lost.
    got = {}
    for hystart in (False, True):
        sc = {"sim": {"duration": "3s", "seed": 1},
              "topology": {"type": "dumbbell", "left": 1, "right": 1, "bottleneck": {"rate": "10Mbps", "delay": "20ms", "queue": "50pkt"}},
              "tcp": {"cc": "cubic", "hystart": hystart, "iw": 10, "byte_counting": False, "window": "4MB"},
              "apps": [{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}]}  # fmt: skip
        res = tcplab.run(sc)
        f, links = res.flows.iloc[0], res.links
        b = links[(links.src == "r0") & (links.dst == "r1")].iloc[0]
        got[hystart] = (int(b.drops), int(b.queue_max_pkts), int(f.timeouts), int(f.bytes_delivered))
    assert got == {False: (145, 50, 1, 3_004_680), True: (0, 26, 0, 3_555_100)}


def test_the_readme_example_of_hystart() -> None:
    import pathlib
    import re
    import tomllib

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "hystart" in b)
    tcp = tomllib.loads(block)["tcp"]
    assert tcp == {"cc": "cubic", "hystart": True, "iw": 10, "byte_counting": False, "window": "4MB"}
    drops = {}
    for hystart in (False, True):
        sc = {"sim": {"duration": "3s", "seed": 1},
              "topology": {"type": "dumbbell", "left": 1, "right": 1, "bottleneck": {"rate": "10Mbps", "delay": "20ms", "queue": "50pkt"}},
              "tcp": {**tcp, "hystart": hystart}, "apps": [{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}]}  # fmt: skip
        drops[hystart] = int(tcplab.run(sc).links.drops.sum())
    assert drops == {False: 145, True: 0}


# ------------------------------------------------------------------ instrumentation

def test_periodic_trace_rows_and_throughput() -> None:
    sc = dumbbell(duration="20s", tcp={"window": "20pkt"}, apps=[{"type": "bulk", "name": "a", "src": "s0", "dst": "k0", "size": "inf"}])
    sc["trace"] = {"interval": "10ms"}
    res = tcplab.run(sc)
    tr = res.traces
    assert len(tr) == 2000 and (tr.t.diff().dropna().round(9) == 0.01).all()
    # Acknowledged throughput over the samples averages to the goodput.
    assert tr.tput_bps.mean() == pytest.approx(res.flows.goodput_bps.iloc[0], rel=0.01)
    assert set(tr.state) <= {"slow_start", "congestion_avoidance", "recovery"}
    assert (tr.flight <= tr.rwnd).all()


def test_packet_log_matches_link_counters() -> None:
    res = tcplab.run(FF, overrides={"losses.0.packets": [20, 22]})
    pk = res.packets
    link = res.links[(res.links.src == "r1") & (res.links.dst == "k1")].iloc[0]
    assert (pk.event == "drop").sum() == link.drops
    assert (pk.event == "enqueue").sum() + (pk.event == "drop").sum() == link.arrivals
    assert (pk.t.diff().dropna() >= 0).all()


def test_a_packet_logs_strings_and_booleans_come_as_codes_and_read_as_the_values() -> None:
    """The core sends a string column of few distinct values (the log's link,
    event, app and kind) as a code per row and the list of values, and a
    boolean column as a byte per row; Python reads them as the values, and
    makes the DataFrame columns pandas makes of the lists."""
    import pickle

    import pandas as pd

    from tcplab.api import Levels, rows_of

    res = tcplab.run(FF, overrides={"losses.0.packets": [20, 22]})
    cols = res.data["packets"]
    assert all(type(cols[c]) is Levels for c in ("link", "event", "app", "kind"))
    assert (cols["link"].levels, cols["event"].levels) == (["r1->k1"], ["enqueue", "dequeue", "drop"])
    pk = res.packets
    assert type(cols["retx"]) is Levels and cols["retx"].levels == [False, True]  # booleans as a byte each
    assert cols["retx"].tolist() == list(pk.retx) and type(cols["retx"][0]) is bool and pk.retx.dtype == bool
    assert cols["event"].tolist() == list(cols["event"]) == list(pk.event)
    assert cols["event"] == list(pk.event) and cols["event"] != list(pk.event)[1:]
    assert cols["kind"][:3] == ["data", "data", "data"] and cols["kind"][-1] == pk.kind.iloc[-1]
    assert pk.event.dtype == pd.Series(["x"]).dtype and pk.event.value_counts()["drop"] == 2
    assert rows_of(cols, [0])[0]["link"] == "r1->k1"
    assert res.to_dict()["packets"][0] == {**rows_of(cols, [0])[0], "t": pk.t.iloc[0]}
    back = pickle.loads(pickle.dumps(res))
    assert type(back.data["packets"]["link"]) is Levels and back.packets.equals(pk)


def test_tracing_is_off_by_default() -> None:
    res = tcplab.run(dumbbell())
    assert res.traces.empty and res.packets.empty


def test_counters_of_a_lossy_mix_add_up() -> None:
    apps = [{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "400kB", "tcp": {"cc": cc}}
            for i, cc in enumerate(["reno", "newreno", "sack", "tahoe"])]  # fmt: skip
    sc = dumbbell(left=4, right=4, bottleneck_rate="2Mbps", bottleneck_queue="8pkt", access_rate="10Mbps", apps=apps,
                  tcp={"rto_min": "200ms", "window": "40pkt"})  # fmt: skip
    f = tcplab.run(sc).flows
    assert f.timeouts.sum() > 0 and f.fast_retx.sum() > 0
    assert (f.retx_pkts == f.retx_fast_pkts + f.retx_timeout_pkts).all()
    assert ((f.retx_timeout_pkts > 0) <= (f.timeouts > 0)).all()


@pytest.mark.parametrize(("timestamps", "fct", "samples"), [(False, 7.26613728, 1), (True, 3.5819072, 3)])
def test_timestamps_time_the_retransmission_after_a_timeout(timestamps: bool, fct: float, samples: int) -> None:
    """Six segments, IW 4, RTO 1 s at first. The whole first window is lost,
    then the first retransmission (t = 1 s, backoff to 2 s), then the second
    go-back-N segment after the retransmission at t = 3 s gets through.
    Karn's rule: that ACK gives no RTT sample, the backoff stays, and the last
    loss waits 4 s (done at 7.27 s). With timestamps the ACK times the
    retransmission (about 105 ms): the backoff clears, the RTO is
    max(200 ms, SRTT + 4 RTTVAR) = 315 ms, and the flow is done at 3.58 s."""
    sc = dumbbell(tcp={"iw": 4, "rto_initial": "1s", "rto_min": "200ms", "timestamps": timestamps},
                  apps=[{"type": "bulk", "name": "f", "src": "s0", "dst": "k0", "size": "8760B"}])
    sc["losses"] = [{"link": "r0->r1", "kind": "data", "packets": [1, 2, 3, 4, 5, 7]}]
    f = tcplab.run(sc).flows.iloc[0]
    assert (f.timeouts, f.retx_pkts, f.data_pkts, f.rtt_samples) == (3, 6, 12, samples)
    assert f.fct_s == pytest.approx(fct, abs=1e-9)


def test_an_applications_tcp_table_overrides_with_the_unbounded_values_too() -> None:
    """`tcp = { ssthresh = "inf" }` in an application over a shared 8pkt,
    `max_retries = "none"` over a shared 3 and `clock_phase = "random"` over
    a shared 0.5ms, take effect (they parse to
    None, which was read as "not set", so the shared values stayed); a key
    left unset, or given as None from Python, keeps the shared value."""
    sc = dumbbell(duration="5s", tcp={"ssthresh": "8pkt", "max_retries": 3, "clock_phase": "0.5ms"},
                  apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "10kB",
                         "tcp": {"ssthresh": "inf", "max_retries": "none", "clock_phase": "random", "iw": None}},
                        {"type": "bulk", "src": "s0", "dst": "k0", "size": "10kB"}])  # fmt: skip
    core = tcplab.load(sc).to_core()
    own, shared = core["apps"][0]["tcp"], core["apps"][1].get("tcp", core.get("tcp"))
    assert (own["initial_ssthresh_bytes"], own["max_retries"], own["iw_bytes"]) == (None, None, 1460)
    assert (own.get("clock_phase_random"), own.get("clock_phase_ns")) == (True, None)
    assert (shared["initial_ssthresh_bytes"], shared["max_retries"], shared["clock_phase_ns"]) == (8 * 1460, 3, 500_000)
    # Written back ('inf', 'none'; an unset field as None) and read again,
    # as Result.to_json and tcplab.run(Scenario, overrides) do, they still hold.
    sc_obj = tcplab.load(sc)
    written = sc_obj.model_dump(mode="json", by_alias=True)["apps"][0]["tcp"]
    assert {k: v for k, v in written.items() if v is not None} == {"ssthresh": "inf", "max_retries": "none", "clock_phase": "random"}
    assert tcplab.load(sc_obj.model_dump(mode="json", by_alias=True)).to_core() == core
    res = tcplab.run(sc_obj, overrides={"sim.duration": "5s"})
    assert res.scenario.to_core()["apps"][0]["tcp"]["initial_ssthresh_bytes"] is None


def test_a_timeout_in_sack_recovery_halves_a_flight_that_counts_sacked_bytes() -> None:
    """The README's case for timeout_ssthresh: one SACK flow through RED with a
    1 MB window. A lost retransmission leaves the sender sending new data for
    the whole 1 s RTO, so RFC 5681's half of that flight is many times cwnd,
    and the slow start after it overshoots into the next timeout."""
    red = {"type": "red", "limit": "50pkt", "min_th": 5, "max_th": 15, "max_p": 0.1}
    out = {}
    for rule in ("rfc5681", "linux"):
        sc = dumbbell(duration="100s", bottleneck_delay="10ms", bottleneck_queue=red, access_rate="100Mbps",
                      tcp={"cc": "sack", "window": "1MB", "timeout_ssthresh": rule},
                      apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}])  # fmt: skip
        res = tcplab.run(sc)
        link = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
        out[rule] = (int(res.flows.timeouts.iloc[0]), round(float(link.utilization), 2))
    assert out == {"rfc5681": (41, 0.49), "linux": (3, 0.95)}


def _two_rtts(access_delay: str, jitter: str) -> dict:
    """Two Reno flows, round trips of about 24 and 102 ms plus the queue's,
    through a 100-packet drop-tail bottleneck."""
    return dumbbell(duration="200s", left=2, right=2, bottleneck_delay="10ms", bottleneck_queue="100pkt", access_rate="100Mbps",
                    access_delay=["1ms", access_delay], tcp={"cc": "reno", "window": "4MB", "send_jitter": jitter},
                    apps=[{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf"} for i in range(2)])  # fmt: skip


def test_send_jitter_breaks_a_drop_tail_phase_effect() -> None:
    """Floyd and Jacobson's phase effect: in a deterministic drop-tail
    network the split between two flows of different round trips swings with
    0.3 ms of propagation delay. A random wait of up to 1 ms before each
    opportunity to send (ns-2's overhead_, about one bottleneck packet time)
    steadies it, the shorter round trip getting more, as expected."""
    split = {}
    for jitter in ("0s", "1ms"):
        for delay in ("40ms", "40.3ms"):
            res = tcplab.run(_two_rtts(delay, jitter))
            split[(jitter, delay)] = tuple(round(float(x) / 1e6, 2) for x in res.flows.sort_values("app").goodput_bps)
    assert split == {("0s", "40ms"): (3.31, 6.01), ("0s", "40.3ms"): (8.31, 1.04),
                     ("1ms", "40ms"): (6.67, 2.52), ("1ms", "40.3ms"): (7.0, 2.31)}  # fmt: skip


def test_send_jitter_keeps_a_flows_segments_in_order_within_their_waits() -> None:
    sc = dumbbell(duration="2s", tcp={"iw": 10, "send_jitter": "5ms"}, apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "200kB"}])
    sc["trace"] = {"links": ["s0->r0"]}
    res = tcplab.run(sc)
    sent = res.packets[(res.packets.event == "enqueue") & (res.packets.kind == "data")]
    assert not sent.retx.any() and sent.seq.is_monotonic_increasing and sent.seq.is_unique
    # The first window waits one draw, then leaves whole, as ns-2's delayed send.
    assert sent.t.iloc[:10].nunique() == 1 and 0 < sent.t.iloc[0] <= 0.005 and sent.t.iloc[10] > sent.t.iloc[0]
    again, other = tcplab.run(sc), tcplab.run(sc, seed=2)
    assert again.packets.t.tolist() == res.packets.t.tolist() and other.packets.t.tolist() != res.packets.t.tolist()
    # Off, no wait: the first window leaves at once.
    sc["tcp"]["send_jitter"] = "0s"
    first = tcplab.run(sc).packets
    assert first[first.kind == "data"].t.iloc[:10].tolist() == [0.0] * 10


@pytest.mark.parametrize("tcp, message", [
    ({"send_jitter": "11s"}, "tcp.send_jitter = '11s': must be at most 10s"),
    ({"send_jitter": "1ms", "local_congestion": "linux"},
     "tcp.send_jitter = '1ms': holds segments back before the interface queue whose room local_congestion = 'linux' reads; use one or the other"),
])  # fmt: skip
def test_send_jitter_is_refused_beyond_its_range_or_with_send_stalls(tcp: dict, message: str) -> None:
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(dumbbell(duration="1s", tcp=tcp, apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "10kB"}]))
    assert str(e.value) == f"invalid scenario: {message}"


def test_with_send_jitter_renos_losses_interleave_and_it_times_out_more() -> None:
    """The README's caveat: two identical flows through a 50-packet drop-tail
    queue recover almost every loss by fast retransmit without jitter; with
    it a window more often loses several segments, and Reno (one loss
    recovered a window) times out where SACK does not."""
    out = {}
    for cc in ("reno", "sack"):
        for jitter in ("0s", "1ms"):
            sc = dumbbell(duration="200s", left=2, right=2, bottleneck_delay="20ms", bottleneck_queue="50pkt", access_rate="100Mbps",
                          tcp={"cc": cc, "window": "4MB", "send_jitter": jitter},
                          apps=[{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf", "start": f"{i * 0.1}s"} for i in range(2)])  # fmt: skip
            res = tcplab.run(sc)
            link = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
            out[(cc, jitter)] = (int(res.flows.fast_retx.sum()), int(res.flows.timeouts.sum()), round(float(link.utilization), 2))
    assert out[("reno", "0s")] == (201, 3, 0.99) and out[("reno", "1ms")] == (152, 80, 0.91)
    assert [out[("sack", j)][1:] for j in ("0s", "1ms")] == [(0, 1.0), (1, 1.0)]
