"""Same scenario and seed: the same bytes. Random streams are per component."""

from __future__ import annotations

import json

from tcplab.api import without_wall_clock
import tcplab

from .conftest import dumbbell


def _scenario(seed: int = 1) -> dict:
    return dumbbell(
        left=3, right=3, bottleneck_rate="1.5Mbps", bottleneck_queue="15pkt", access_rate="10Mbps",
        duration="60s", seed=seed, tcp={"window": "20pkt", "delayed_ack": True},
        apps=[
            {"type": "repeat", "name": f"ftp{i}", "src": f"s{i}", "dst": f"k{i}", "size": "300kB",
             "think": {"type": "uniform", "min": "1s", "max": "5s"}}
            for i in range(3)
        ],
    )  # fmt: skip


def _without_wall_clock(text: str) -> str:
    doc = json.loads(text)
    doc["engine"] = without_wall_clock(doc["engine"])
    return json.dumps(doc, sort_keys=True)


def test_same_seed_gives_identical_json() -> None:
    a = tcplab.run(_scenario(7)).to_json()
    b = tcplab.run(_scenario(7)).to_json()
    assert _without_wall_clock(a) == _without_wall_clock(b)
    assert len(json.loads(a)["flows"]) > 6


def test_seed_changes_the_draws() -> None:
    a = tcplab.run(_scenario(1)).flows
    b = tcplab.run(_scenario(2)).flows
    assert list(a.start_s) != list(b.start_s)


def test_seed_override_equals_seed_in_file() -> None:
    a = tcplab.run(_scenario(5)).to_json()
    b = tcplab.run(_scenario(1), seed=5).to_json()
    assert _without_wall_clock(a) == _without_wall_clock(b)


def _two_paths(extra_app: bool) -> dict:
    """Two disjoint paths: a-b and c-d. App 'x' uses a->b; app 'y' (and maybe 'z') use c->d."""
    sc = {
        "sim": {"duration": "40s", "seed": 3},
        "topology": {
            "type": "explicit",
            "nodes": ["a", "b", "c", "d"],
            "links": [
                {"from": "a", "to": "b", "rate": "2Mbps", "delay": "10ms", "queue": "10pkt"},
                {"from": "c", "to": "d", "rate": "2Mbps", "delay": "10ms", "queue": "10pkt"},
            ],
        },
        "apps": [
            {"type": "repeat", "name": "x", "src": "a", "dst": "b", "size": "100kB", "think": {"type": "exponential", "mean": "1s"}},
            {"type": "repeat", "name": "y", "src": "c", "dst": "d", "size": "100kB", "think": {"type": "exponential", "mean": "1s"}},
        ],
    }
    if extra_app:
        sc["apps"].insert(0, {"type": "repeat", "name": "z", "src": "c", "dst": "d", "size": "50kB", "think": {"type": "exponential", "mean": "2s"}})
    return sc


def test_adding_a_component_leaves_other_streams_alone() -> None:
    base = tcplab.run(_two_paths(False)).flows
    more = tcplab.run(_two_paths(True)).flows
    cols = ["start_s", "end_s", "bytes_delivered", "data_pkts"]
    x0 = base[base.app == "x"][cols].reset_index(drop=True)
    x1 = more[more.app == "x"][cols].reset_index(drop=True)
    assert len(x0) > 5
    assert x0.equals(x1), "app x shares nothing with z, so its draws and results are unchanged"
    # y shares its path with z, so its transfers do change.
    y0 = base[base.app == "y"][cols].reset_index(drop=True)
    y1 = more[more.app == "y"][cols].reset_index(drop=True)
    assert not y0.equals(y1)
