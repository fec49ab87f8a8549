"""web100 / RFC 4898 samples, and Linux 2.4 local congestion (send stalls)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tcplab
from tcplab.api import WEB100_COLUMNS
from tcplab.cli import main

from .conftest import dumbbell

ROOT = Path(__file__).resolve().parent.parent
FF = str(ROOT / "examples" / "fall-floyd-drops.toml")
COUNTERS = ["PktsOut", "DataPktsOut", "AckPktsIn", "DupAcksIn", "SACKsRcvd", "PktsRetrans", "Timeouts", "SlowStart",
            "CongAvoid", "CongestionSignals", "SendStall"]  # fmt: skip
MSS = 1460


def _bulk(**kw: object) -> dict:
    sc = dumbbell(bottleneck_rate="10Mbps", bottleneck_delay="20ms", bottleneck_queue="1000pkt", duration="3s",
                  tcp={"cc": "sack", "window": "1MiB", "iw": 2, "byte_counting": False},
                  apps=[{"type": "bulk", "name": "b", "src": "s0", "dst": "k0", "size": "inf"}])  # fmt: skip
    sc.update(kw)
    sc["trace"] = {**{"web100": True}, **sc.get("trace", {})}
    return sc


def test_a_clean_transfer_reads_as_web100_would_report_it() -> None:
    res = tcplab.run(_bulk())
    w, tr, f = res.web100, res.traces, res.flows.iloc[0]
    assert list(w.columns) == WEB100_COLUMNS
    # Every 10 ms (web100's default), from 10 ms to the 3 s stop.
    assert len(w) == 300 and np.allclose(np.diff(w.t), 0.01)
    for c in COUNTERS:
        assert (w[c].diff().dropna() >= 0).all(), f"{c} is cumulative"
    # No loss: nothing retransmitted, SndNxt is SndMax, and each ACK of new
    # data is handled by exactly one of slow start and congestion avoidance.
    assert (w.PktsRetrans == 0).all() and (w.DupAcksIn == 0).all() and (w.SACKsRcvd == 0).all()
    assert (w.SndNxt == w.SndMax).all()
    assert (w.SlowStart + w.CongAvoid == w.AckPktsIn).all()
    # No delayed ACKs: one ACK per data packet, each sent one RTT earlier.
    assert (w.AckPktsIn <= w.DataPktsOut).all()
    # The same instants in the trace table: SndMax - SndUna is the flight, CurCwnd the cwnd.
    periodic = tr[tr.tput_bps.notna()].reset_index(drop=True)
    assert np.array_equal(periodic.t, w.t)
    assert np.array_equal(w.SndMax - w.SndUna, periodic.flight)
    assert np.array_equal(w.CurCwnd, periodic.cwnd)
    assert np.array_equal(w.InstantaneousBW, periodic.tput_bps)
    # Slow start ends at no loss here: ssthresh is never set, the window only grows.
    assert w.CurSsthresh.isna().all() and (w.CurCwnd.diff().dropna() >= 0).all()
    assert w.DataPktsOut.iloc[-1] == w.SndMax.iloc[-1] // MSS <= f.data_pkts
    # SmoothedRTT in ms: 2 x (20 ms + 2 x 1 ms) of propagation at least.
    assert (w.SmoothedRTT.dropna() >= 44.0).all() and (w.SampleRTT.dropna() >= 44.0).all()
    assert (w.CurRwinRcvd == 1024 * 1024).all()


def test_data_pkts_out_counts_retransmissions_as_web100_does() -> None:
    # The 30th data packet is lost once: DataPktsOut counts its first sending
    # and its retransmission (web100 counts every data segment sent).
    sc = _bulk(losses=[{"link": "r0->r1", "kind": "data", "packets": [30]}])
    res = tcplab.run(sc)
    last = res.web100.iloc[-1]
    assert last.PktsRetrans == 1 == res.flows.retx_pkts.iloc[0]
    assert last.DataPktsOut == last.SndMax // MSS + last.PktsRetrans
    assert last.DupAcksIn >= 3 and last.SACKsRcvd >= 1
    assert last.CongestionSignals == 1 and last.Timeouts == 0 and last.SendStall == 0
    assert last.PktsOut == last.DataPktsOut  # no handshake: no SYN-ACK


def _stall_case(mode: str) -> tcplab.Result:
    # A 10 Mb/s sender interface with a 5-packet queue, a fast path beyond it.
    sc = dumbbell(bottleneck_rate="100Mbps", bottleneck_delay="10ms", access_rate="10Mbps", access_queue="5pkt",
                  duration="4s", tcp={"cc": "sack", "window": "1MiB", "iw": 2, "local_congestion": mode},
                  apps=[{"type": "bulk", "name": "b", "src": "s0", "dst": "k0", "size": "inf"}])  # fmt: skip
    sc["trace"] = {"web100": True}
    return tcplab.run(sc)


def test_a_full_interface_queue_stalls_and_reduces_without_loss() -> None:
    res = _stall_case("linux")
    f, w = res.flows.iloc[0], res.web100
    link = res.links[(res.links.src == "s0") & (res.links.dst == "r0")].iloc[0]
    assert link.drops == 0, "nothing is dropped at the interface"
    assert f.retx_pkts == 0 and f.timeouts == 0 and f.fast_retx == 0
    assert f.send_stalls > 0 and w.SendStall.iloc[-1] <= f.send_stalls
    # Each window reduction was a CWR after a stall.
    assert w.CongestionSignals.iloc[-1] > 0 and (w.state == "cwr").any()
    assert (w.PktsRetrans == 0).all()
    assert link.queue_max_pkts <= 5


def test_without_local_congestion_the_interface_drops() -> None:
    res = _stall_case("none")
    f = res.flows.iloc[0]
    link = res.links[(res.links.src == "s0") & (res.links.dst == "r0")].iloc[0]
    assert link.drops > 0 and f.retx_pkts > 0 and f.send_stalls == 0
    assert res.web100.SendStall.max() == 0


def test_web100_needs_an_interval_in_the_core_and_gets_10ms_from_the_scenario() -> None:
    sc = tcplab.load(_bulk())
    assert sc.to_core()["trace"]["interval_ns"] == 10_000_000
    off = tcplab.load(dumbbell())
    assert "web100" not in off.to_core()["trace"], "absent unless set, so stored run ids stay valid"
    assert "local_congestion" not in off.to_core()["apps"][0]["tcp"]


def test_bad_local_congestion_and_lookup_name_the_field() -> None:
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load(dumbbell(tcp={"local_congestion": "bsd", "hstcp_lookup": "guess"}))
    text = str(e.value)
    assert "tcp.local_congestion" in text and "'bsd'" in text and "linux" in text
    assert "tcp.hstcp_lookup" in text and "'guess'" in text and "formula" in text


@pytest.mark.parametrize("view", ["cwnd", "bw", "bw-cwnd", "rtt", "acks"])
def test_plot_web100_views(tmp_path, view: str) -> None:
    out = tmp_path / f"{view}.png"
    r = CliRunner().invoke(main, ["plot", f"web100-{view}", FF, "--set", "tcp.cc=sack", "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plot_unknown_web100_view_exits_2(tmp_path) -> None:
    r = CliRunner().invoke(main, ["plot", "web100-nope", FF, "-o", str(tmp_path / "x.png")])
    assert r.exit_code == 2
    assert "web100-rtt" in r.output and "'web100-nope'" in r.output


def test_a_growing_receive_window_is_advertised_on_every_ack() -> None:
    # Linux 2.4: 4 segments at first, 2 more per data segment received, up
    # to the window; ACKs carry it, so at each sample (no loss, an ACK per
    # segment, full segments) CurRwinRcvd = min(window, 4 MSS + 2 SndUna).
    sc = _bulk()
    sc["tcp"].update({"window_growth": "linux", "window": "400KiB"})
    w = tcplab.run(sc).web100
    want = np.minimum(400 * 1024, 4 * MSS + 2 * w.SndUna)
    assert np.array_equal(w.CurRwinRcvd, want)
    assert w.CurRwinRcvd.iloc[0] < 400 * 1024 == w.CurRwinRcvd.iloc[-1]
