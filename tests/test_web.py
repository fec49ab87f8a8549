"""The web workload: HTTP/1.0 and HTTP/1.1 pages, object sizes, think times; RED."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tcplab

from .conftest import dumbbell


def web(http: str, size: str = "1460B", embedded: int = 3, pages: int = 1, **extra) -> dict:
    app = {"type": "web", "src": "s0", "dst": "k0", "http": http, "embedded": embedded, "pages": pages, "request": "0B",
           "primary": {"type": "constant", "size": size}, "object": {"type": "constant", "size": size}, **extra}  # fmt: skip
    return dumbbell(bottleneck_rate="1Gbps", bottleneck_delay="50ms", access_rate="10Gbps", access_delay="1ms",
                    tcp={"handshake": True, "iw": 1}, apps=[app])  # fmt: skip


def one_object_time() -> float:
    return tcplab.run(web("1.0", embedded=0)).pages.delay_s.iloc[0]


def test_http10_page_is_primary_then_embedded_in_parallel() -> None:
    res = tcplab.run(web("1.0"))
    page = res.pages.iloc[0]
    assert page.objects == 4 and page.bytes == 4 * 1460 and page.completed
    assert len(res.flows) == 4 and (res.flows.page == 0).all()
    # Two object times in sequence: the embedded ones run side by side.
    assert page.delay_s == pytest.approx(2 * one_object_time(), rel=0.001)
    # The embedded connections open together, when the primary completes.
    starts = res.flows.sort_values("id").start_s.to_numpy()
    assert np.all(starts[1:] == starts[1]) and starts[1] == pytest.approx(res.flows.end_s.iloc[0])


def test_http11_page_is_one_connection() -> None:
    res = tcplab.run(web("1.1"))
    page = res.pages.iloc[0]
    assert len(res.flows) == 1 and res.flows.bytes.iloc[0] == 4 * 1460
    # Handshake, then 1 + 2 + 1 segments in slow start: one RTT less than HTTP/1.0's two handshakes.
    assert page.delay_s < tcplab.run(web("1.0")).pages.delay_s.iloc[0]


def test_embedded_with_primary_fetches_the_whole_page_at_once() -> None:
    # HTTP/1.0: the four connections open together, so the page takes one object time, not two.
    res = tcplab.run(web("1.0", embedded_start="with_primary"))
    page = res.pages.iloc[0]
    assert page.objects == 4 and page.completed and len(res.flows) == 4
    assert (res.flows.start_s == 0).all()
    # Four SYN-ACKs and segments share the path, so a few serialization times more than one object alone.
    assert page.delay_s == pytest.approx(one_object_time(), abs=1e-4)
    # HTTP/1.1: one connection whose one reply is the whole page: as long as a page of one 4-segment object.
    one = tcplab.run(web("1.1", embedded_start="with_primary"))
    assert len(one.flows) == 1 and one.flows.bytes.iloc[0] == 4 * 1460
    assert one.pages.delay_s.iloc[0] == tcplab.run(web("1.1", size=f"{4 * 1460}B", embedded=0)).pages.delay_s.iloc[0]


def test_think_times_between_pages_are_uniform_1_to_5_s() -> None:
    sc = web("1.0", pages=200)
    del sc["apps"][0]["pages"]
    sc["sim"]["duration"] = "800s"
    p = tcplab.run(sc).pages
    gaps = (p.start_s.shift(-1) - p.end_s).dropna()
    assert len(gaps) > 100
    assert gaps.min() >= 1.0 and gaps.max() <= 5.0
    assert gaps.mean() == pytest.approx(3.0, abs=0.25)


@pytest.mark.parametrize("dist,median", [
    ({"type": "pareto", "median": "2kB", "shape": 1.2, "max": "2MB"}, 2000),
    ({"type": "lognormal", "median": "3kB", "sigma": 1.0}, 3000),
    ({"type": "empirical", "points": [[1000, 0.0], [2000, 0.5], [10000, 1.0]]}, 2000),
])  # fmt: skip
def test_object_size_distributions_have_their_median(dist, median) -> None:
    sc = web("1.1", embedded=0, pages=3000, primary=dist)
    sc["sim"]["duration"] = "30000s"
    p = tcplab.run(sc).pages
    assert len(p) == 3000
    # The sample median's standard error is under 3% here.
    assert np.median(p.bytes) == pytest.approx(median, rel=0.08)


def test_red_drops_early_and_keeps_the_queue_short() -> None:
    def run(queue):
        apps = [{"type": "bulk", "src": f"s{i}", "dst": f"k{i}", "size": "inf"} for i in range(4)]
        sc = dumbbell(left=4, right=4, bottleneck_rate="1.5Mbps", bottleneck_queue=queue, access_rate="10Mbps",
                      duration="100s", tcp={"window": "40pkt"}, apps=apps)  # fmt: skip
        return tcplab.run(sc).links.set_index(["src", "dst"]).loc[("r0", "r1")]

    dt = run("60pkt")
    red = run({"type": "red", "limit": "60pkt", "min_th": 5, "max_th": 15})
    assert red.queue_avg_pkts < dt.queue_avg_pkts / 2
    assert red.drops > 0
    assert red.utilization > 0.9


def test_http11_requests_the_embedded_objects_on_the_same_connection() -> None:
    res = tcplab.run(web("1.1"))
    f = res.flows.iloc[0]
    assert len(res.flows) == 1 and f.syn_sent == 1 and f.closed and f.completed
    # The primary alone takes exactly as long as with HTTP/1.0; the embedded
    # objects then cost one request round trip more than their transfer.
    primary_only = tcplab.run(web("1.0", embedded=0)).pages.delay_s.iloc[0]
    assert primary_only < res.pages.delay_s.iloc[0] < tcplab.run(web("1.0")).pages.delay_s.iloc[0]


def test_a_lost_pipelined_request_costs_one_rto() -> None:
    base = tcplab.run(web("1.1")).pages.delay_s.iloc[0]
    sc = web("1.1")
    # The first request rides on the handshake; the second asks for the embedded objects.
    sc["losses"] = [{"link": "k0->r1", "kind": "request", "packets": [2]}]
    res = tcplab.run(sc)
    assert res.links.loss_drops.sum() == 1
    # RTO after the handshake and the primary: the minimum, 1 s (to within a
    # segment's serialization, as the server's ACK clock differs once idle).
    assert res.pages.delay_s.iloc[0] - base == pytest.approx(1.0, abs=1e-4)


def test_persistent_repeat_client_reuses_its_connection() -> None:
    def ftp(persistent: bool):
        app = {"type": "repeat", "src": "s0", "dst": "k0", "size": "100kB", "think": "0s", "count": 5, "persistent": persistent}
        sc = dumbbell(bottleneck_rate="10Mbps", tcp={"handshake": True, "window": "11pkt"}, apps=[app])
        return tcplab.run(sc)

    per, fresh = ftp(True), ftp(False)
    assert len(per.flows) == 1 and len(fresh.flows) == 5
    f = per.flows.iloc[0]
    assert f.bytes_delivered == 500_000 and f.syn_sent == 1 and f.closed
    assert len(per.pages) == 5 and (per.pages.bytes == 100_000).all() and per.pages.completed.all()
    # Each next file starts when the previous one completes.
    assert np.allclose(per.pages.start_s.iloc[1:].to_numpy(), per.pages.end_s.iloc[:-1].to_numpy())
    # No handshake and no new slow start: faster than a connection per file.
    assert per.pages.end_s.max() < fresh.flows.end_s.max()


def test_think_from_start_keeps_the_page_rate_whatever_the_page_delay() -> None:
    think = {"type": "constant", "value": "2s"}
    rows = {}
    for where in ("end", "start"):
        sc = web("1.0", size="20KB", embedded=0, pages=3, think=think, think_from=where)
        assert ("think_from_start" in tcplab.load(sc).to_core()["apps"][0]["web"]) == (where == "start")
        rows[where] = tcplab.run(sc).pages.sort_values("id")
    # From the end, each page starts 2 s after the previous one ended; from the start, 2 s after it started.
    end, start = rows["end"], rows["start"]
    assert np.allclose(end.start_s.iloc[1:].to_numpy(), end.end_s.iloc[:-1].to_numpy() + 2.0)
    assert np.allclose(start.start_s.to_numpy(), [0.0, 2.0, 4.0])
    assert (start.delay_s < 2.0).all() and (start.delay_s > 0.3).all()
    with pytest.raises(tcplab.ScenarioError, match="think_from"):
        tcplab.load(web("1.0", think_from="later"))


def test_a_persistent_client_pipelines_its_pages_on_one_connection() -> None:
    # Pages of 125 kB every 0.5 s over 1 Mb/s: each needs over a second of the
    # bottleneck, so they queue up behind one another on the one connection.
    app = {"type": "web", "src": "s0", "dst": "k0", "http": "1.1", "persistent": True, "embedded": 4, "pages": 4, "cycle": "500ms",
           "primary": {"type": "constant", "size": "25000B"}, "object": {"type": "constant", "size": "25000B"}}  # fmt: skip
    sc = dumbbell(bottleneck_rate="1Mbps", bottleneck_delay="10ms", access_rate="100Mbps", tcp={"iw": 1}, apps=[app])
    res = tcplab.run(sc)
    assert len(res.flows) == 1 and res.flows.bytes.iloc[0] == 4 * 125_000
    pages = res.pages.sort_values("id")
    assert list(pages.start_s) == [0.0, 0.5, 1.0, 1.5] and pages.completed.all()
    # Each completes once its own last byte is through: page k after k + 1 seconds
    # of payload alone, in order, the last one with the connection.
    ends = pages.end_s.to_numpy()
    assert np.all(ends > np.arange(1, 5)) and np.all(np.diff(ends) > 0)
    assert ends[-1] == res.flows.end_s.iloc[0]


@pytest.mark.parametrize(
    ("http", "handshake", "message"),
    [("1.0", False, "persistent needs http = '1.1' (got '1.0')"), ("1.1", True, "apps[0].persistent: a persistent web client pipelines its pages, which needs one-way TCP (tcp.handshake = false)")],
)
def test_a_persistent_client_needs_http11_and_one_way_tcp(http: str, handshake: bool, message: str) -> None:
    sc = web(http, persistent=True)
    sc["tcp"]["handshake"] = handshake
    with pytest.raises(tcplab.ScenarioError, match=re.escape(message)):
        tcplab.run(sc)


def test_a_persistent_client_with_think_times_reuses_its_connection_page_after_page() -> None:
    sc = web("1.1", pages=3, persistent=True, think={"type": "constant", "value": "1s"})
    sc["tcp"]["handshake"] = False
    res = tcplab.run(sc)
    assert len(res.flows) == 1 and res.flows.bytes.iloc[0] == 3 * 4 * 1460
    pages = res.pages.sort_values("id")
    assert pages.completed.all()
    # Each page is asked for a think time after the previous one ended.
    assert np.allclose(pages.start_s.to_numpy()[1:] - pages.end_s.to_numpy()[:-1], 1.0, atol=1e-9)


def test_the_readme_example_of_a_persistent_client() -> None:
    import pathlib
    import tomllib

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = tomllib.loads(next(b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "persistent = true" in b))
    sc = dumbbell(duration="12s", tcp=block["tcp"], apps=block["apps"])
    res = tcplab.run(sc)
    assert len(res.flows) == 1
    pages = res.pages.sort_values("id")
    assert list(pages.start_s) == [0.0, 2.0, 4.0, 6.0, 8.0] and pages.completed.all()
    assert res.flows.bytes.iloc[0] == pages.bytes.sum()
