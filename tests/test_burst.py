"""The burst workload: N connections opened at one instant, sharing a number
of bytes evenly, at a fixed start or one drawn per seed from a range."""

from __future__ import annotations

import pytest

import tcplab
from tcplab.sweep import sweep_from_configs

from .conftest import dumbbell


def _burst(**app) -> dict:
    return dumbbell(bottleneck_rate="2Mbps", bottleneck_delay="70ms", bottleneck_queue="50pkt", access_rate="100Mbps",
                    tcp={"cc": "sack", "iw": 10, "window": "200pkt"},
                    apps=[{"type": "burst", "name": "b", "src": "s0", "dst": "k0", **app}])  # fmt: skip


def test_every_connection_opens_at_the_same_instant() -> None:
    f = tcplab.run(_burst(flows=6, total="180kB", start="1.25s")).flows
    assert len(f) == 6
    assert set(f.start_s) == {1.25}
    assert f.completed.all()


@pytest.mark.parametrize("flows, total, sizes", [(1, 180_000, [180_000]), (6, 180_000, [30_000] * 6),
                                                 (4, 10_003, [2501, 2501, 2501, 2500])])  # fmt: skip
def test_the_total_is_split_evenly(flows: int, total: int, sizes: list[int]) -> None:
    f = tcplab.run(_burst(flows=flows, total=f"{total}B")).flows
    assert list(f.bytes) == sizes
    assert list(f.bytes_delivered) == sizes


def test_size_is_per_connection() -> None:
    f = tcplab.run(_burst(flows=3, size="20kB")).flows
    assert list(f.bytes) == [20_000] * 3


def test_a_start_range_is_drawn_per_seed() -> None:
    starts = {}
    for seed in range(1, 41):
        f = tcplab.run(_burst(flows=2, total="20kB", start={"type": "uniform", "min": "2s", "max": "4s"}), seed=seed).flows
        assert f.start_s.nunique() == 1, "both connections open together"
        starts[seed] = float(f.start_s.iloc[0])
    assert all(2.0 <= s <= 4.0 for s in starts.values())
    assert len(set(starts.values())) == 40
    # Uniform on [2, 4]: mean 3, standard error of 40 draws 0.09; allow 4 of them.
    assert abs(sum(starts.values()) / 40 - 3.0) < 0.37
    again = tcplab.run(_burst(flows=2, total="20kB", start={"type": "uniform", "min": "2s", "max": "4s"}), seed=7).flows
    assert float(again.start_s.iloc[0]) == starts[7]


def test_each_replication_of_a_sweep_draws_its_own_start(tmp_path) -> None:
    doc = _burst(flows=2, total="20kB", start={"type": "uniform", "min": "1s", "max": "3s"})
    sw = sweep_from_configs("b", str(tmp_path / "s.duckdb"), [({"n": 2}, doc)], replications=5)
    from tcplab.sweep import execute

    starts = [execute(r.core_json)["tables"]["flows"].column("start_s")[0].as_py() for r in sw.runs]
    assert len(set(starts)) == 5 and all(1.0 <= s <= 3.0 for s in starts)


@pytest.mark.parametrize("app, field, text", [
    ({"flows": 2, "size": "1kB", "total": "2kB"}, "apps[0]", "give size (bytes per connection) or total (bytes split evenly), not both"),
    ({"flows": 0, "total": "2kB"}, "apps[0].flows", "out of range: at least 1"),
    ({"flows": 3, "total": "2B"}, "apps[0]", "at least one byte"),
    ({"start": {"type": "uniform", "min": "3s", "max": "2s"}}, "apps[0].start", "min (3s) must not exceed max (2s)"),
    ({"start": {"type": "uniform", "min": "1s", "mx": "2s"}}, "apps[0].start", "unknown field(s) mx"),
])  # fmt: skip
def test_bad_bursts_name_their_field(app: dict, field: str, text: str) -> None:
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(_burst(**app))
    assert any(p.field == field and text in p.message for p in e.value.problems), e.value.problems


def _two_servers(**extra) -> dict:
    return {"sim": {"duration": "none", "seed": 1},
            "topology": {"type": "wireless", "profile": "hspa", "servers": 2},
            "tcp": {"cc": "sack", "iw": 3},
            "trace": {"links": ["gw->m0"]},
            "apps": [{"type": "burst", "name": "b", "src": "s0", "dst": "m0", "flows": 2, "total": "8760B", **extra}]}  # fmt: skip


def test_a_burst_from_one_server_queues_its_windows_one_after_another() -> None:
    r = tcplab.run(_two_servers())
    arrivals = r.packets[(r.packets.event == "enqueue")].head(6)
    # s0's 100 Mb/s link sends flow 0's three segments, then flow 1's.
    assert list(arrivals.flow) == [0, 0, 0, 1, 1, 1]
    assert list(r.flows.src) == ["s0", "s0"]


def test_a_burst_from_two_servers_interleaves_its_windows() -> None:
    r = tcplab.run(_two_servers(extra_src=["s1"]))
    arrivals = r.packets[(r.packets.event == "enqueue")].head(6)
    # Each server's link carries one flow, so the gateway sees them in turn,
    # 0.12 ms apart (1500 bytes at 100 Mb/s), both 11.12 ms after the start.
    assert list(arrivals.flow) == [0, 1, 0, 1, 0, 1]
    assert list(arrivals.t.round(5)) == [0.01112, 0.01112, 0.01124, 0.01124, 0.01136, 0.01136]
    assert list(r.flows.src) == ["s0", "s1"]
    assert list(r.flows.bytes_delivered) == [4380, 4380]


@pytest.mark.parametrize("extra, field, text", [
    (["s9"], "apps[0].extra_src[0]", "unknown node; allowed: s0, s1, gw, m0"),
    (["s1", "m0"], "apps[0].extra_src[1]", "must differ from dst"),
])  # fmt: skip
def test_bad_extra_servers_name_their_field(extra: list, field: str, text: str) -> None:
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(_two_servers(extra_src=extra))
    assert any(p.field == field and text in p.message for p in e.value.problems), e.value.problems


def test_the_readme_example_of_extra_servers() -> None:
    import pathlib
    import re
    import tomllib

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "extra_src" in b)
    doc = dumbbell(left=3, right=1, bottleneck_rate="2Mbps", bottleneck_delay="70ms", bottleneck_queue="50pkt", access_rate="100Mbps",
                   tcp={"cc": "sack", "iw": 3}, apps=tomllib.loads(block)["apps"])  # fmt: skip
    f = tcplab.run(doc).flows
    assert list(f.src) == ["s0", "s1", "s2", "s0", "s1", "s2"]
    assert list(f.bytes_delivered) == [30_000] * 6
