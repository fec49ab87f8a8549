"""Invariants that hold for every run: conservation of packets and bytes,
queue limits, utilization bounds."""

from __future__ import annotations

import itertools

import pytest

from tcplab.api import without_wall_clock
import tcplab

from .conftest import dumbbell


def lossy_scenarios():
    """Congested dumbbells: small buffers, many flows, packet and byte limits, delayed ACKs."""
    for n, queue, delack, iw in itertools.product([2, 6], ["8pkt", "20pkt", "16KiB"], [False, True], [1, 4]):
        apps = [{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf", "start": f"{0.05 * i}s"} for i in range(n)]
        apps.append({"type": "repeat", "name": "ftp", "src": "s0", "dst": "k1", "size": "30kB", "think": {"type": "exponential", "mean": "500ms"}})
        yield pytest.param(
            dumbbell(
                left=n,
                right=n,
                bottleneck_rate="2Mbps",
                bottleneck_delay="20ms",
                bottleneck_queue=queue,
                access_rate="10Mbps",
                access_delay=[f"{1 + i}ms" for i in range(n)],
                access_queue="50pkt",
                duration="20s",
                tcp={"iw": iw, "delayed_ack": delack, "window": "40pkt", "rto_min": "200ms"},
                apps=apps,
            ),
            id=f"n{n}-{queue}-delack{int(delack)}-iw{iw}",
        )
    # A burst into the bulk transfers, the run stopped when it has finished
    # (sim.until): packets are still queued and in flight at the end.
    for iw in (1, 4):
        sc = dumbbell(left=6, right=6, bottleneck_rate="2Mbps", bottleneck_delay="20ms", bottleneck_queue="8pkt", access_rate="10Mbps",
                      access_delay=[f"{1 + i}ms" for i in range(6)], access_queue="50pkt", duration="20s",
                      tcp={"iw": iw, "delayed_ack": True, "window": "40pkt", "rto_min": "200ms"},
                      apps=[{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf", "start": f"{0.05 * i}s"} for i in range(6)]
                      + [{"type": "burst", "name": "later", "src": "s1", "dst": "k2", "flows": 6, "total": "180kB", "start": "3s"}])  # fmt: skip
        sc["sim"]["until"] = ["later"]
        yield pytest.param(sc, id=f"until-burst-iw{iw}")


@pytest.mark.parametrize("sc", list(lossy_scenarios()))
def test_conservation_and_limits(sc) -> None:
    res = tcplab.run(sc)
    links, flows, eng = res.links, res.flows, res.engine
    assert links.drops.sum() > 0, "the scenario must exercise loss"
    # Every link: arrivals = departures + drops + backlog at the end.
    assert (links.arrivals == links.departures + links.drops + links.backlog_end).all()
    # The whole network: every packet made is delivered, dropped or still inside.
    inside = int(links.backlog_end.sum() + links.propagating_end.sum())
    assert eng["packets_in_network_end"] == inside
    assert eng["packets_created"] == eng["packets_delivered"] + eng["packets_dropped"] + inside
    assert eng["packets_dropped"] == links.drops.sum()
    # Queue limits hold, utilization is a fraction.
    limit = sc["topology"]["bottleneck"]["queue"]
    bott = links[(links.src == "r0") & (links.dst == "r1")].iloc[0]
    if limit.endswith("pkt"):
        assert bott.queue_max_pkts <= int(limit[:-3])
    else:
        assert bott.queue_max_bytes <= 16 * 1024
    access = links[~links.src.isin(["r0", "r1"]) | ~links.dst.isin(["r0", "r1"])]
    assert (access.queue_max_pkts <= 50).all()
    assert ((links.utilization >= 0) & (links.utilization <= 1 + 1e-12)).all()
    assert (links.queue_avg_pkts <= links.queue_max_pkts + 1e-12).all()
    # Receivers: completed transfers got exactly their bytes; none got more.
    done = flows[flows.completed]
    assert len(done) > 0
    assert (done.bytes_delivered == done.bytes).all()
    bounded = flows[flows.bytes.notna()]
    assert (bounded.bytes_delivered <= bounded.bytes).all()
    # Retransmissions were needed and counted, and never exceed what was sent.
    assert flows.retx_pkts.sum() > 0
    assert (flows.retx_pkts <= flows.data_pkts).all()


def test_packet_counts_match_across_hops() -> None:
    """Departures from the access links equal arrivals at the bottleneck plus
    what is still propagating on them, for a run that ends with traffic in flight."""
    sc = dumbbell(left=3, right=3, bottleneck_rate="1.5Mbps", bottleneck_queue="10pkt", access_rate="10Mbps", duration="30s",
                  tcp={"window": "30pkt"},
                  apps=[{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf"} for i in range(3)])  # fmt: skip
    links = tcplab.run(sc).links
    into_r0 = links[links.dst == "r0"]
    out_of_r0 = links[links.src == "r0"]
    # Packets that reached r0 = departures onto links into r0 minus those still propagating.
    reached = int((into_r0.departures - into_r0.propagating_end).sum())
    # Everything that reaches r0 is offered to exactly one outgoing link of r0.
    assert reached == int(out_of_r0.arrivals.sum())


def test_more_buffer_means_fewer_drops() -> None:
    drops = []
    for q in ("5pkt", "20pkt", "80pkt"):
        sc = dumbbell(left=4, right=4, bottleneck_rate="2Mbps", bottleneck_queue=q, access_rate="10Mbps", duration="30s",
                      tcp={"window": "50pkt"},
                      apps=[{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf"} for i in range(4)])  # fmt: skip
        drops.append(int(tcplab.run(sc).links.drops.sum()))
    assert drops[0] > drops[1] > drops[2]


@pytest.mark.parametrize("duration", ["none", "7.3s"])
def test_event_free_hand_on_changes_nothing(duration) -> None:
    """Links that hand packets straight on to a link fed by them alone save
    an event per packet; every result must be the same as with arrival events."""
    import json

    from tcplab import _core

    apps = [{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "400kB", "start": f"{0.1 * i}s"} for i in range(4)]
    apps.append({"type": "bulk", "src": "k0", "dst": "s1", "size": "300kB"})  # reverse traffic shares the links
    sc = tcplab.load(dumbbell(left=4, right=4, bottleneck_rate="3Mbps", bottleneck_queue="12pkt", access_rate="20Mbps",
                              duration=duration, tcp={"window": "40pkt", "delayed_ack": True}, apps=apps))  # fmt: skip
    doc = sc.to_core()
    runs = []
    for advance in (False, True):
        out = json.loads(_core.run_json(json.dumps({**doc, "advance_links": advance})))
        runs.append(out)
    events = [r["engine"].pop("events") for r in runs]
    for r in runs:
        r["engine"] = without_wall_clock(r["engine"])
    assert runs[0] == runs[1]
    assert events[1] < events[0], "some links hand packets on without events"
    assert sum(r["drops"] for r in runs[0]["links"]) > 0


def test_deep_prefetch_changes_nothing() -> None:
    """The loop's staged prefetching (used on its own above 8 MiB of
    per-flow state) only reads ahead: forced on or off, every result is the
    same, event for event."""
    import json

    from tcplab import _core

    apps = [{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "300kB", "start": f"{0.05 * i}s"} for i in range(6)]
    apps.append({"type": "bulk", "src": "k0", "dst": "s1", "size": "200kB", "tcp": {"cc": "sack"}})
    sc = tcplab.load(dumbbell(left=6, right=6, bottleneck_rate="4Mbps", bottleneck_queue="10pkt", access_rate="20Mbps",
                              duration="none", tcp={"window": "40pkt", "delayed_ack": True, "handshake": True}, apps=apps))  # fmt: skip
    doc = sc.to_core()
    runs = [json.loads(_core.run_json(json.dumps({**doc, "deep_prefetch": deep}))) for deep in (False, True)]
    for r in runs:
        r["engine"] = without_wall_clock(r["engine"])
    assert runs[0] == runs[1]
    assert runs[0]["engine"]["events"] > 1000
    assert sum(r["drops"] for r in runs[0]["links"]) > 0


@pytest.mark.parametrize("jitter", ["0s", "2ms"])
def test_recycling_connections_changes_nothing(jitter) -> None:
    """A run whose applications open connections as they go uses a finished
    connection's slot again once nothing of it is left in the network or the
    event queue. Forced off, every result is the same, event for event: web
    pages over HTTP/1.0 and 1.1 with a handshake, a persistent client, loss
    injection by application, send jitter, and a run to completion."""
    import json

    from tcplab import _core

    apps = [{"type": "web", "name": f"w{i}", "src": f"s{i % 3}", "dst": f"k{i % 3}", "http": "1.1" if i % 2 else "1.0",
             "pages": 12, "start": f"{0.1 * i}s"} for i in range(6)]
    apps.append({"type": "web", "name": "p", "src": "s0", "dst": "k1", "http": "1.1", "persistent": True, "pages": 10,
                 "tcp": {"handshake": False}})
    apps.append({"type": "repeat", "name": "r", "src": "s2", "dst": "k0", "size": "20kB", "count": 40, "think": {"type": "exponential", "mean": "50ms"}})
    sc = dumbbell(left=3, right=3, bottleneck_rate="2Mbps", bottleneck_delay="20ms", bottleneck_queue="8pkt", access_rate="10Mbps",
                  duration="none", seed=11, apps=apps,
                  tcp={"handshake": True, "delayed_ack": True, "iw": 4, "rto_min": "200ms", "send_jitter": jitter})  # fmt: skip
    sc["losses"] = [{"link": "r0->r1", "app": "w1", "kind": "data", "rate": 0.03}, {"link": "r1->r0", "kind": "ack", "rate": 0.02}]
    doc = tcplab.load(sc).to_core()
    runs = [json.loads(_core.run_json(json.dumps({**doc, "recycle_connections": r}))) for r in (False, None)]
    for r in runs:
        r["engine"] = without_wall_clock(r["engine"])
    assert runs[0] == runs[1]
    flows = runs[0]["flows"]
    assert len(flows) > 200 and all(f["completed"] for f in flows)
    assert [f["id"] for f in flows] == list(range(len(flows)))
    assert sum(f["retx_pkts"] for f in flows) > 20


@pytest.mark.parametrize("cc", ["tahoe", "reno", "newreno"])
def test_every_variant_conserves_and_delivers(cc) -> None:
    sc = dumbbell(left=4, right=4, bottleneck_rate="2Mbps", bottleneck_queue="10pkt", access_rate="10Mbps",
                  tcp={"cc": cc, "window": "40pkt", "rto_min": "200ms"},
                  apps=[{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "500kB"} for i in range(4)])  # fmt: skip
    res = tcplab.run(sc)
    flows, links = res.flows, res.links
    assert (flows.cc == cc).all()
    assert flows.completed.all() and (flows.bytes_delivered == flows.bytes).all()
    assert links.drops.sum() > 0 and flows.fast_retx.sum() > 0
    assert (links.arrivals == links.departures + links.drops + links.backlog_end).all()
