"""`sim.until`: a run that stops as soon as the named applications have
finished, while others (say, a bulk transfer) would go on for ever."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main

from .conftest import dumbbell

#: What a transfer's row says about how it went up to its completion.
UNTIL_COMPLETION = ["start_s", "end_s", "fct_s", "bytes_delivered", "completed", "data_pkts", "retx_pkts", "timeouts", "fast_retx"]


def _scenario(until: list[str] | None, duration: str = "60s", **later) -> dict:
    sc = dumbbell(left=2, right=2, bottleneck_rate="10Mbps", bottleneck_delay="20ms", bottleneck_queue="50pkt", access_rate="100Mbps",
                  duration=duration, apps=[
                      {"type": "bulk", "name": "background", "src": "s0", "dst": "k0", "size": "inf"},
                      {"type": "burst", "name": "later", "src": "s1", "dst": "k1", "flows": 4, "total": "400kB", "start": "2s", **later},
                  ])  # fmt: skip
    if until is not None:
        sc["sim"]["until"] = until
    return sc


def test_the_run_stops_when_the_burst_has_finished_and_the_burst_runs_as_in_a_longer_run() -> None:
    short, long = tcplab.run(_scenario(["later"])), tcplab.run(_scenario(None))
    burst = short.flows[short.flows.app == "later"]
    assert burst.completed.all()
    # The run ends at the instant its last flow completes, not at 60 s.
    assert short.engine["sim_seconds"] == burst.end_s.max()
    assert 4.0 < burst.end_s.max() < 10.0 and long.engine["sim_seconds"] == 60.0
    # Up to then, every flow of the burst went as in the run that went on.
    pd_long = long.flows[long.flows.app == "later"]
    assert burst[UNTIL_COMPLETION].reset_index(drop=True).equals(pd_long[UNTIL_COMPLETION].reset_index(drop=True))
    # The background transfer stopped with the run.
    bg_short, bg_long = (r.flows[r.flows.app == "background"].iloc[0] for r in (short, long))
    assert not bg_short.completed and 0 < bg_short.bytes_delivered < bg_long.bytes_delivered


def test_the_results_are_those_of_a_run_with_that_stop_time() -> None:
    # Links count what crossed them by the end as a run stopped there by its
    # duration counts it (so no packet is handed on to a link ahead of time).
    short = tcplab.run(_scenario(["later"]))
    end_ns = round(short.engine["sim_seconds"] * 1e9)
    fixed = tcplab.run(_scenario(None, duration=f"{end_ns}ns"))
    assert fixed.engine["sim_seconds"] == short.engine["sim_seconds"]
    assert short.links.equals(fixed.links)
    assert short.flows.equals(fixed.flows)


def test_a_capture_needs_a_fixed_duration() -> None:
    sc = _scenario(["later"])
    sc["trace"] = {"pcap": ["r0->r1"]}
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(sc)
    assert str(exc.value) == ("invalid scenario: trace.pcap = ['r0->r1']: cannot be written in a run that sim.until stops (a capture is "
                              "written as packets are queued, with the time each will go out, and such a run has no stop time to hold "
                              "them back at): give the run a fixed duration")


def test_the_run_waits_for_every_application_named() -> None:
    sc = _scenario(["later", "early"])
    sc["apps"].append({"type": "repeat", "name": "early", "src": "s1", "dst": "k1", "size": "20kB", "count": 3, "think": "0.5s"})
    r = tcplab.run(sc)
    f = r.flows
    assert list(f[f.app == "early"].completed) == [True] * 3
    assert r.engine["sim_seconds"] == max(f[f.app == "early"].end_s.max(), f[f.app == "later"].end_s.max())


def test_a_web_client_finishes_with_its_last_page() -> None:
    sc = _scenario(["web"])
    sc["apps"].append({"type": "web", "name": "web", "src": "s1", "dst": "k1", "pages": 3, "embedded": 2,
                       "primary": {"type": "constant", "size": "10kB"}, "object": {"type": "constant", "size": "5kB"}, "think": "1s"})  # fmt: skip
    r = tcplab.run(sc)
    pages = r.pages[r.pages.app == "web"]
    assert len(pages) == 3 and pages.completed.all()
    assert r.engine["sim_seconds"] == pages.end_s.max()


@pytest.mark.parametrize("app, tcp", [
    # Pages pipelined on one connection: the later pages end with the last.
    ({"type": "web", "http": "1.1", "persistent": True, "embedded": 4, "pages": 4, "cycle": "500ms",
      "primary": {"type": "constant", "size": "25000B"}, "object": {"type": "constant", "size": "25000B"}}, {"iw": 1}),
    # Files asked for one after another on one connection.
    ({"type": "repeat", "size": "100kB", "think": "0s", "count": 5, "persistent": True}, {"handshake": True, "window": "11pkt"}),
])  # fmt: skip
def test_a_persistent_client_finishes_with_its_last_page(app: dict, tcp: dict) -> None:
    background = {"type": "bulk", "name": "background", "src": "s1", "dst": "k1", "size": "inf"}
    sc = dumbbell(left=2, right=2, bottleneck_rate="2Mbps", bottleneck_delay="10ms", access_rate="100Mbps", duration="120s", tcp=tcp,
                  apps=[background, {**app, "name": "client", "src": "s0", "dst": "k0"}])  # fmt: skip
    sc["sim"]["until"] = ["client"]
    r = tcplab.run(sc)
    pages = r.pages[r.pages.app == "client"]
    assert len(pages) == (4 if app["type"] == "web" else 5) and pages.completed.all()
    assert r.engine["sim_seconds"] == pages.end_s.max() < 120


def test_the_duration_still_stops_a_run_whose_applications_have_not_finished() -> None:
    r = tcplab.run(_scenario(["later"], duration="3s"))
    assert r.engine["sim_seconds"] == 3.0
    assert not r.flows[r.flows.app == "later"].completed.all()


@pytest.mark.parametrize("until, duration, message", [
    (["nope"], "60s", "sim.until[0] = 'nope': unknown application; allowed: background, later"),
    (["later", "background"], "60s", "sim.until[1] = 'background': apps[0] never finishes: give it a size, or leave it out of sim.until"),
    (["later"], "none", "sim.until = ['later']: needs sim.duration, the longest the run may last if they never finish (a transfer that "
                        "never gets through would keep it going for ever)"),
])  # fmt: skip
def test_bad_until_is_refused_naming_the_field(until: list[str], duration: str, message: str) -> None:
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(_scenario(until, duration=duration))
    if duration == "none":  # the endless background is named too
        assert str(exc.value) == ("invalid scenario (2 problems):\n  - sim.duration: is 'none' but apps[0] never ends; set a duration such as "
                                  f"'60s'\n  - {message}")
    else:
        assert str(exc.value) == f"invalid scenario: {message}"


def test_the_summary_says_what_stopped_the_run() -> None:
    example = str(Path(__file__).resolve().parents[1] / "examples" / "bulk-then-burst.toml")
    r = CliRunner().invoke(main, ["run", example])
    assert r.exit_code == 0
    assert r.output.splitlines()[-1].startswith("Engine: 24.9461 simulated s, stopped as burst finished, 13,104 events, ")
    # Stopped by its duration, it says nothing more.
    r = CliRunner().invoke(main, ["run", example, "--set", "sim.duration=10s"])
    assert r.output.splitlines()[-1].startswith("Engine: 10 simulated s, ")


def test_the_command_line_exits_2_on_an_unknown_application(tmp_path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[sim]\nduration = "10s"\nuntil = ["web"]\n\n[topology]\ntype = "dumbbell"\n\n[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\n')
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 2
    assert r.output == f"error: invalid scenario in {path}: sim.until[0] = 'web': unknown application; allowed: app0\n"


def test_the_core_checks_until_too(tmp_path) -> None:
    core = tcplab.load(_scenario(["later"])).to_core()
    with pytest.raises(tcplab.ScenarioError, match=r"trace.pcap: cannot be written in a run that sim.until stops"):
        tcplab.api.run_core(json.dumps({**core, "trace": {**core["trace"], "pcap": [["r0", "r1"]], "pcap_dir": str(tmp_path)}}))
    core["until"] = ["background"]
    with pytest.raises(tcplab.ScenarioError, match=r"sim.until\[0\]: application 'background' never finishes"):
        tcplab.api.run_core(json.dumps(core))
    core["until"], core["stop_ns"] = ["later"], None
    with pytest.raises(tcplab.ScenarioError, match=r"sim.until: needs a stop time"):
        tcplab.api.run_core(json.dumps(core))
