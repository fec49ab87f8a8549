"""Bad scenarios are refused with a message naming the field, the value and
what is allowed; on the command line, with exit status 2 and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main

from .conftest import dumbbell

BASE = dumbbell()

# (overrides, exact message after "invalid scenario: ")
CASES = [
    ({"topology.bottleneck.rate": "2Mbs"},
     "topology.bottleneck.rate = '2Mbs': unknown unit 'Mbs': expected a rate such as '1.5Mbps', '10Gbps', '64kbps' (units: bps, kbps, Mbps, Gbps, Tbps)"),
    ({"topology.bottleneck.delay": "-5ms"},
     "topology.bottleneck.delay = '-5ms': expected a duration such as '50ms', '1.5s', '200us' (units: ns, us, ms, s, min)"),
    ({"topology.type": "star"}, "topology.type = 'star': unknown type; allowed: 'dumbbell', 'explicit', 'wireless'"),
    ({"tcp.cc": "vegas"}, "tcp.cc = 'vegas': not allowed; allowed values: 'tahoe', 'reno', 'newreno', 'sack', 'highspeed' or 'cubic'"),
    ({"tcp.iw": 0}, "tcp.iw = 0: expected an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'; it must be at least 1"),
    ({"topology.bottleneck.queue": "lots"},
     "topology.bottleneck.queue.limit = 'lots': expected a queue limit in packets such as '25pkt', or in bytes such as '64KiB'"),
    ({"topology.bottleneck.queue": {"type": "droptail", "limt": 4}},
     "topology.bottleneck.queue.limt: unknown field; allowed fields here: type, limit"),
    ({"topology.left_access.delay": ["1ms", "2ms", "3ms"], "topology.left": 2},
     "topology: left_access.delay lists 3 delays for 2 hosts; give one delay or exactly 2"),
    ({"apps.0.size": "inf"}, "sim.duration: is 'none' but apps[0] never ends; set a duration such as '60s'"),
    ({"apps.0.src": "x9"}, "apps[0].src = 'x9': unknown node; allowed: s0, r0, r1, k0"),
    ({"tcp.window": "1000B"}, "tcp.window = '1kB': must hold at least one segment of mss = 1460 bytes"),
    ({"apps.0.type": "repeat", "apps.0.think": {"type": "uniform", "min": "5s", "max": "1s"}, "sim.duration": "10s"},
     "apps[0].think: min must not exceed max"),
    ({"apps.0.type": "ftp"}, "apps[0].type = 'ftp': unknown type; allowed: 'bulk', 'repeat', 'web', 'burst'"),
    ({"apps.0.tcp": {"iww": 3}},
     "apps[0].tcp.iww: unknown field; allowed fields here: cc, iw, mss, header, window, window_scaling, ssthresh, rto_initial, rto_min, "
     "rto_max, clock_granularity, max_backoff, max_retries, dupack_threshold, abc_limit, byte_counting, hystart, delayed_ack, delack_timeout, delack_segments, quickack, timestamps, "
     "limited_transmit, idle_restart, sack_blocks, handshake, local_congestion, window_growth, sack_recovery, sack_loss, newreno_recovery, timeout_ssthresh, rtt_estimator, clock_phase, limited_transmit_data, recovery_exit, "
     "sack_option_bytes, ca_increment, fast_retransmit_ssthresh, hstcp_lookup, send_jitter"),
    ({"tcp.sack_recovery": "ns3"}, "tcp.sack_recovery = 'ns3': not allowed; allowed values: 'rfc6675', 'ns2-1998', 'ns2' or 'linux'"),
    ({"tcp.sack_option_bytes": "bsd"}, "tcp.sack_option_bytes = 'bsd': not allowed; allowed values: 'rfc2018' or 'ns2'"),
    ({"tcp.ca_increment": 1}, "tcp.ca_increment = 1: not allowed; allowed values: 'rfc5681' or 'ns2'"),
    ({"tcp.fast_retransmit_ssthresh": "linux"}, "tcp.fast_retransmit_ssthresh = 'linux': not allowed; allowed values: 'rfc5681' or 'ns2'"),
    ({"tcp.newreno_recovery": "hoe"}, "tcp.newreno_recovery = 'hoe': not allowed; allowed values: 'rfc6582' or 'ns2-1998'"),
    ({"tcp.rtt_estimator": "karn"}, "tcp.rtt_estimator = 'karn': not allowed; allowed values: 'rfc6298' or 'ns2'"),
    ({"tcp.clock_phase": "1ms"}, "tcp.clock_phase = '1ms': must be less than clock_granularity (1ms), or 'random'"),
    ({"apps.0.tcp": {"clock_granularity": "500us"}, "tcp.clock_phase": "0.5ms"}, "tcp.clock_phase = '500us': must be less than clock_granularity (500us), or 'random'"),
    ({"tcp.clock_phase": "soon"}, "tcp.clock_phase = 'soon': expected a duration such as '50ms', '1.5s', '200us' (units: ns, us, ms, s, min); or 'random' (a phase drawn for each connection)"),
    ({"tcp.limited_transmit_data": "old"}, "tcp.limited_transmit_data = 'old': not allowed; allowed values: 'unsent' or 'ns2'"),
    ({"tcp.recovery_exit": "linux"}, "tcp.recovery_exit = 'linux': not allowed; allowed values: 'rfc5681' or 'ns2'"),
    ({"tcp.timeout_ssthresh": "bsd"}, "tcp.timeout_ssthresh = 'bsd': not allowed; allowed values: 'rfc5681', 'ns2' or 'linux'"),
    ({"sim.seed": -1}, "sim.seed = -1: out of range: at least 0"),
    ({"tcp.delayed_ack": "maybe"}, "tcp.delayed_ack = 'maybe': expected true or false"),
    ({"apps": []}, "apps: needs at least 1 item(s)"),
    ({"tcp": 5}, "tcp = 5: expected a table"),
    # A list element is named as validation names it, however it was written.
    ({"apps.5.size": 3}, "apps[5]: no such list element; indices 0..0 (1 adds a whole element)"),
    ({"apps[5].size": 3}, "apps[5]: no such list element; indices 0..0 (1 adds a whole element)"),
    ({"apps[0].size": "-1kB"}, "apps[0].size = '-1kB': expected a size such as '1460B', '64KiB', '1MB' (units: B, kB, MB, GB, KiB, MiB, GiB)"),
    ({"sim.duration": "forever"},
     "sim.duration = 'forever': expected a duration such as '50ms', '1.5s', '200us' (units: ns, us, ms, s, min)"),
    ({"apps.0.name": ""}, "apps[0].name = '': must not be empty; leave it out for the default, app{i}"),
    # No field takes inf or nan, and a count the core keeps in 64 bits is bounded (both reached the core).
    ({"topology.bottleneck.queue": {"type": "red", "max_th": float("inf")}}, "topology.bottleneck.queue.max_th = inf: expected a finite number"),
    ({"topology.left": float("inf")}, "topology.left = inf: expected a finite number"),
    ({"tcp.iw": 10**30}, "tcp.iw = 1000000000000000000000000000000: packet count out of range: at most 1000000000pkt"),
    ({"apps[-1].size": 3}, "apps[-1]: no such list element; indices 0..0 (1 adds a whole element)"),
    # A bare number counts packets or segments, so it must be whole (1.5 was once read as 2 bytes).
    ({"tcp.iw": 1.5},
     "tcp.iw = 1.5: expected an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'; a count of packets must be whole"),
    ({"topology.bottleneck.queue": 2.5},
     "topology.bottleneck.queue.limit = 2.5: expected a queue limit in packets such as '25pkt', or in bytes such as '64KiB'; a count of packets must be whole"),
    ({"tcp.window": "1.5pkt"},
     "tcp.window = '1.5pkt': expected a window in segments such as '1000pkt', or in bytes such as '64KiB'; a count of packets must be whole"),
    ({"tcp.window": "3zz"}, "tcp.window = '3zz': unknown unit 'zz': expected a window in segments such as '1000pkt', or in bytes such as '64KiB'"),
]  # fmt: skip


def test_a_bare_number_counts_packets_however_written() -> None:
    """`25`, `25.0`, `"25"` and `"25pkt"` are one queue limit of 25 packets
    (a float or a string without a unit was once taken for 25 bytes)."""
    from tcplab.scenario import load

    limits = {load(BASE, overrides={"topology.bottleneck.queue": q}).topology.bottleneck.queue.limit for q in (25, 25.0, "25", " 25 pkts ", "25pkt")}
    assert limits == {("pkts", 25)}
    assert load(BASE, overrides={"topology.bottleneck.queue": "25B"}).topology.bottleneck.queue.limit == ("bytes", 25)
    assert load(BASE, overrides={"tcp.iw": 3.0}).tcp.iw == ("pkts", 3)


@pytest.mark.parametrize("overrides,message", CASES, ids=[m.split(" ")[0].split(":")[0] + f"-{i}" for i, (_, m) in enumerate(CASES)])
def test_bad_field_message(overrides, message) -> None:
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(BASE, overrides=overrides)
    assert str(exc.value) == f"invalid scenario: {message}"


def test_a_list_element_is_set_as_apps_0_or_apps_bracket_0() -> None:
    """``--set apps[0].size=...``, as error messages name the field, sets
    what ``apps.0.size`` sets (it used to be refused as an unknown field)."""
    a = tcplab.run(BASE, overrides={"apps.0.size": "30kB"})
    b = tcplab.run(BASE, overrides={"apps[0].size": "30kB"})
    assert a.flows.bytes_delivered.tolist() == b.flows.bytes_delivered.tolist() == [30_000]


def test_unknown_top_level_table() -> None:
    with pytest.raises(tcplab.ScenarioError, match=r"^invalid scenario: simm: unknown field; allowed fields here: sim, topology, tcp, apps, losses, trace$"):
        tcplab.run({**BASE, "simm": {}})


def test_explicit_topology_unknown_node_and_self_loop() -> None:
    sc = {
        "topology": {"type": "explicit", "nodes": ["a", "b"], "links": [{"from": "a", "to": "c", "rate": "1Mbps"}, {"from": "b", "to": "b", "rate": "1Mbps"}]},
        "apps": [{"type": "bulk", "src": "a", "dst": "b"}],
    }
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(sc)
    assert exc.value.problems[0].field == "topology.links[0].to"
    assert str(exc.value.problems[0]) == "topology.links[0].to = 'c': unknown node; allowed: a, b"
    assert str(exc.value.problems[1]) == "topology.links[1].to = 'b': a link must join two different nodes"


def test_unreachable_destination_is_reported() -> None:
    sc = {
        "topology": {"type": "explicit", "nodes": ["a", "b", "c"], "links": [{"from": "a", "to": "b", "rate": "1Mbps", "duplex": False}]},
        "apps": [{"type": "bulk", "src": "a", "dst": "b"}],
    }
    with pytest.raises(tcplab.ScenarioError, match=r"apps\[0\]: no route from 'b' to 'a'"):
        tcplab.run(sc)


def test_every_problem_is_listed() -> None:
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(BASE, overrides={"tcp.iw": 0, "tcp.cc": "x", "topology.bottleneck.rate": "fast"})
    assert [p.field for p in exc.value.problems] == ["topology.bottleneck.rate", "tcp.cc", "tcp.iw"]
    assert str(exc.value).startswith("invalid scenario (3 problems):\n  - topology.bottleneck.rate = 'fast'")


def test_applications_that_never_end_are_named_in_one_problem() -> None:
    """A scenario of 100 web clients and no duration listed 100 problems, one
    line per client, all saying the same."""
    for n, named in ((1, "apps[0] never ends"), (2, "apps[0] and apps[1] never end"),
                     (100, "apps[0], apps[1], apps[2] and 97 more never end")):  # fmt: skip
        sc = dumbbell(duration="none", apps=[{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}] * n)
        with pytest.raises(tcplab.ScenarioError) as e:
            tcplab.run(sc)
        assert str(e.value) == f"invalid scenario: sim.duration: is 'none' but {named}; set a duration such as '60s'"


def test_errors_are_tcplab_errors() -> None:
    assert issubclass(tcplab.ScenarioError, tcplab.TcplabError)
    assert issubclass(tcplab.SimulationError, tcplab.TcplabError)


# ------------------------------------------------------------------ CLI


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return str(p)


GOOD = """
[topology]
type = "dumbbell"
[[apps]]
type = "bulk"
src = "s0"
dst = "k0"
size = "100kB"
"""


@pytest.mark.parametrize(
    "text,args,message",
    [
        (GOOD, ["--set", "tcp.iw=zero"], "tcp.iw = 'zero': expected an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'"),
        (GOOD, ["--set", "tcp.iw"], "--set 'tcp.iw': expected FIELD=VALUE, such as tcp.iw=4 or topology.bottleneck.rate=2Mbps"),
        (GOOD, ["--set", "tcp..iw=4"], "--set 'tcp..iw=4': 'tcp..iw' is no field path; expected FIELD=VALUE with a dotted path such as tcp.iw=4 or apps[0].size=1MB"),
        (GOOD, ["--set", "=4"], "--set '=4': '' is no field path; expected FIELD=VALUE with a dotted path such as tcp.iw=4 or apps[0].size=1MB"),
        (GOOD + "\n[tcp]\nmss = 'x'\n", [], "tcp.mss = 'x': expected a size such as '1460B', '64KiB', '1MB'"),
        ("[topology\n", [], "not valid TOML"),
        (GOOD + "\n[tcp]\nhystart = true\n", [], "apps[0].tcp.hystart: is cubic's slow start; cc is 'reno' (allowed with hystart: cubic)"),
        (GOOD, ["--set", "tcp.sack_loss=fast"], "tcp.sack_loss = 'fast': not allowed; allowed values: 'rfc6675' or 'fack'"),
        (GOOD + "\n[tcp]\ncc = 'sack'\nsack_recovery = 'ns2'\nsack_loss = 'fack'\n", [],
         "apps[0].tcp.sack_loss: 'fack' reads the SACK scoreboard; sack_recovery 'ns2' keeps a pipe counter instead (allowed with fack: rfc6675, linux)"),
        (GOOD.replace('type = "dumbbell"', 'type = "dumbbell"\nspeed = 3'), [], "topology.speed: unknown field; allowed fields here: type, left, right, bottleneck, left_access, right_access"),
    ],
)
def test_cli_bad_input_exits_2(tmp_path, text, args, message) -> None:
    path = _write(tmp_path, text)
    r = CliRunner().invoke(main, ["run", path, *args])
    assert r.exit_code == 2
    assert message in r.output
    assert "Traceback" not in r.output


def test_a_problem_the_core_finds_names_the_file_too(tmp_path) -> None:
    path = _write(tmp_path, GOOD + "\n[tcp]\nhystart = true\n")
    r = CliRunner().invoke(main, ["run", path])
    assert r.exit_code == 2
    assert r.output == f"error: invalid scenario in {path}: apps[0].tcp.hystart: is cubic's slow start; cc is 'reno' (allowed with hystart: cubic)\n"


def test_cli_missing_file_exits_2_without_traceback(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tcplab.cli", "run", str(tmp_path / "nope.toml")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "file not found" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_route_longer_than_65535_links_is_refused() -> None:
    # A packet carries its route's length in 16 bits (so the loop knows
    # where it ends without reading the route): a chain one link longer.
    n = 65_537
    sc = {
        "sim": {"duration": "1s"},
        "topology": {"type": "explicit", "nodes": [f"n{i}" for i in range(n)], "links": [{"from": f"n{i}", "to": f"n{i + 1}", "rate": "1Gbps"} for i in range(n - 1)]},
        "apps": [{"type": "bulk", "src": "n0", "dst": f"n{n - 1}"}],
    }
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(sc)
    assert str(exc.value) == "invalid scenario: apps[0]: the route from \"n0\" to \"n65536\" has 65536 links; at most 65535 are allowed"


def test_the_python_api_says_what_a_scenario_and_overrides_are() -> None:
    # A list of FIELD=VALUE strings gave "dictionary update sequence element #0 has length 8".
    with pytest.raises(TypeError, match=r"^overrides map field paths to values, such as \{'tcp.iw': 4\}; got list$"):
        tcplab.run(BASE, overrides=["tcp.iw=4"])
    with pytest.raises(TypeError, match="^a scenario is a TOML file's path, a dictionary or a tcplab.Scenario, not int$"):
        tcplab.load(42)
    # load takes a Scenario too, as run does: a copy checked again as a
    # document, with the overrides.
    sc = tcplab.load(BASE)
    assert tcplab.load(sc) == sc and tcplab.load(sc) is not sc
    assert tcplab.load(sc, {"tcp.iw": 4}, seed=9).to_core() == tcplab.load(BASE, {"tcp.iw": 4}, seed=9).to_core()
    # pcap is a directory: a number gave "expected str, bytes or os.PathLike object, not int".
    with pytest.raises(TypeError, match=r"^pcap is a directory's path \(str or pathlib.Path\), not int$"):
        tcplab.run(BASE, pcap=5)
    # A path that is no path is named as the API's argument (it was called --set).
    for key in ("tcp..iw", "", 3):
        with pytest.raises(tcplab.ScenarioError) as exc:
            tcplab.load(BASE, {key: 4})
        assert str(exc.value) == f"invalid scenario: overrides = {key!r}: expected a dotted field path such as 'tcp.iw'"


def test_a_seed_given_twice_two_ways_is_refused(tmp_path) -> None:
    # `--seed 3 --set sim.seed=5` ran with 3, silently.
    from tcplab.scenario.loading import dumps_toml

    (tmp_path / "b.toml").write_text(dumps_toml(BASE))
    r = CliRunner().invoke(main, ["run", str(tmp_path / "b.toml"), "--seed", "3", "--set", "sim.seed=5"])
    assert (r.exit_code, r.output) == (2, f"error: invalid scenario in {tmp_path / 'b.toml'}: sim.seed: is given twice, as 3 (the seed option) "
                                          "and as 5 (sim.seed); give it once\n")  # fmt: skip
    with pytest.raises(tcplab.ScenarioError, match=r"^invalid scenario: sim.seed: is given twice, as 3 \(the seed option\) and as 4 \(sim\); give it once$"):
        tcplab.load(BASE, {"sim": {"seed": 4}}, seed=3)
    # The same value twice is no conflict.
    assert tcplab.load(BASE, {"sim.seed": 3}, seed=3).sim.seed == 3


def test_the_package_lists_its_public_names() -> None:
    # dir(tcplab) listed `annotations`, `importlib` and `Any`, and not `run`
    # or `load` before their first use.
    import subprocess
    import sys

    names = subprocess.run([sys.executable, "-c", "import tcplab; print(' '.join(dir(tcplab)))"], capture_output=True, text=True, check=True).stdout.split()
    assert {"run", "load", "Result", "Scenario", "TcplabError", "analysis", "studies"} <= set(names)
    assert not {"annotations", "importlib", "Any"} & set(names)


@pytest.mark.parametrize("command", [["run"], ["sweep"], ["plot", "cwnd"]])
def test_a_results_store_or_binary_file_given_as_a_scenario_exits_2(tmp_path, command) -> None:
    # It was read as UTF-8 text: a UnicodeDecodeError traceback.
    import duckdb

    store = tmp_path / "results.duckdb"
    duckdb.connect(str(store)).close()
    binary = tmp_path / "x.toml"
    binary.write_bytes(b"\x00\x01\xfe\xff" * 8)
    kind = "sweep" if command == ["sweep"] else "scenario"
    out = ["-o", str(tmp_path / "f.png")] if command[0] == "plot" else []
    for path, what in [(store, "a DuckDB file (a results store: read it with tcplab analyze, export or plot)"),
                       (binary, "not UTF-8 text (byte 0xfe at offset 2)")]:  # fmt: skip
        r = subprocess.run([sys.executable, "-m", "tcplab.cli", *command, str(path), *out], capture_output=True, text=True)
        assert r.returncode == 2
        assert r.stderr == f"error: invalid {kind} in {path}: {kind}: not a TOML file: {what}\n"


def test_an_explicit_links_ubr_queue_and_reverse_are_checked_where_they_are_written() -> None:
    links = [{"from": "a", "to": "b", "rate": "10Mbps"}, {"from": "b", "to": "c", "rate": "10Mbps", "atm": True, "queue": {"type": "ubr", "buffer": 100}}]
    doc = {"topology": {"type": "explicit", "nodes": ["a", "b", "c"], "links": links}, "apps": [{"type": "bulk", "src": "a", "dst": "c"}]}
    tcplab.load(doc)
    for link, message in [
        # The core refused these as links[1].queue, a number the scenario does not show.
        ({"reverse": {"queue": {"type": "ubr", "buffer": 5}}}, "reverse.queue is a ubr (cell) queue: set atm = true on this link"),
        ({"queue": {"type": "ubr", "buffer": 5}}, "queue is a ubr (cell) queue: set atm = true on this link"),
        # A reverse direction that duplex = false leaves out was ignored.
        ({"duplex": False, "reverse": {"rate": "2Mbps"}}, "reverse sets the other direction, which duplex = false leaves out: drop one of them"),
    ]:  # fmt: skip
        bad = {**doc, "topology": {**doc["topology"], "links": [{**links[0], **link}, links[1]]}}
        with pytest.raises(tcplab.ScenarioError) as e:
            tcplab.load(bad)
        assert [(p.field, p.message) for p in e.value.problems] == [("topology.links[0]", message)]


@pytest.mark.parametrize("dist, message", [
    ({"type": "lognormal", "median": "0B", "sigma": 1}, "apps[0].primary.median = '0B': must be at least 1 byte"),
    ({"type": "pareto", "median": "2kB", "shape": 1.2, "max": "1kB"}, "apps[0].primary: max (1kB) must not be below the median (2kB)"),
    ({"type": "empirical", "points": [[100, 0.5], [50, 1.0]]},
     "apps[0].primary: points: point 2 (50, 1) goes below point 1 (100, 0.5); sizes and probabilities must not decrease"),
    # A distribution that stopped short of 1 gave the last size for every draw above it.
    ({"type": "empirical", "points": [[100, 0.5], [200, 0.9]]},
     "apps[0].primary: points: the last cumulative probability is 0.9; a distribution function ends at 1"),
    # A missing file was a FileNotFoundError traceback.
    ({"type": "empirical", "file": "nonexistent.csv"}, "apps[0].primary: file 'nonexistent.csv': no such file (a path relative to the working directory)"),
    ({"type": "empirical", "file": "sizes.csv"}, "apps[0].primary: file 'sizes.csv': line 3: expected 'bytes,cdf', got '2000;1.0'"),
])  # fmt: skip
def test_a_web_size_distribution_is_checked_with_its_file(tmp_path, monkeypatch, dist, message) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sizes.csv").write_text("bytes,cdf\n1000,0.5\n2000;1.0\n")
    sc = dumbbell(apps=[{"type": "web", "src": "s0", "dst": "k0", "primary": dist, "pages": 1}])
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load(sc)
    assert str(e.value) == f"invalid scenario: {message}"
    (tmp_path / "sizes.csv").write_text("bytes,cdf\n# Mah's median\n1000,0.5\n\n2000,1.0\n")
    ok = tcplab.load(dumbbell(apps=[{"type": "web", "src": "s0", "dst": "k0", "primary": {"type": "empirical", "file": "sizes.csv"}, "pages": 1}]))
    assert ok.to_core()["apps"][0]["web"]["primary"] == {"type": "empirical", "points": [(1000.0, 0.5), (2000.0, 1.0)]}
    # Kept as the file found, so the scenario written out runs again from
    # anywhere (a relative path is read from the written file's directory).
    assert ok.apps[0].primary.file == str(tmp_path / "sizes.csv")
    res = tcplab.run(ok)
    res.save(tmp_path / "run1")
    monkeypatch.chdir(tmp_path / "run1")
    assert tcplab.run("scenario.toml").flows.equals(res.flows)


def test_a_size_file_named_in_a_toml_file_is_found_beside_it(tmp_path, monkeypatch) -> None:
    """`file = "sizes.csv"` in sub/web.toml is sub/sizes.csv, wherever the run
    starts from (it was taken from the working directory: `tcplab run
    sub/web.toml` failed with no such file); the same in a sweep's scenario,
    and in the scenario `--out` writes, which runs again from anywhere."""
    from tcplab.scenario.loading import dumps_toml

    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "sizes.csv").write_text("bytes,cdf\n1000,0.5\n2000,1.0\n")
    doc = dumbbell(duration="5s", apps=[{"type": "web", "src": "s0", "dst": "k0", "primary": {"type": "empirical", "file": "sizes.csv"}, "pages": 2}])
    (sub / "web.toml").write_text(dumps_toml(doc))
    monkeypatch.chdir(tmp_path)  # no sizes.csv here
    r = CliRunner().invoke(main, ["run", "sub/web.toml", "--json", "--out", "run1"])
    assert r.exit_code == 0, r.output
    assert tcplab.load("sub/web.toml").to_core()["apps"][0]["web"]["primary"] == {"type": "empirical", "points": [(1000.0, 0.5), (2000.0, 1.0)]}
    assert f'file = "{sub / "sizes.csv"}"' in (tmp_path / "run1" / "scenario.toml").read_text()
    monkeypatch.chdir(sub)
    again = CliRunner().invoke(main, ["run", str(tmp_path / "run1" / "scenario.toml"), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["flows"] == json.loads(r.stdout)["flows"]
    (sub / "sw.toml").write_text('[sweep]\nscenario = "web.toml"\nreplications = 1\nstore = "s.duckdb"\n[factors]\n"tcp.iw" = [1, 2]\n')
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["sweep", "sub/sw.toml", "-q", "--jobs", "1"])
    assert r.exit_code == 0 and "2 runs done" in r.output, r.output
    (sub / "sizes.csv").unlink()
    r = CliRunner().invoke(main, ["run", "sub/web.toml"])
    assert (r.exit_code, r.output) == (2, f"error: invalid scenario in sub/web.toml: apps[0].primary: file '{sub / 'sizes.csv'}': no such file\n")


@pytest.mark.parametrize("fields, message", [
    ({"closed_loop": True}, "closed_loop applies to pages every cycle: give cycle too, or leave closed_loop out"),
    ({"cycle": "2s", "think": "1s"}, "think has no effect with cycle (pages start a cycle apart): leave one of them out"),
    ({"cycle": "2s", "think_from": "start"}, "think_from has no effect with cycle (pages start a cycle apart): leave one of them out"),
    ({"http": "1.1", "persistent": True, "embedded_start": "with_primary"},
     "embedded_start has no effect on a persistent client (each page is one reply): leave it out"),
])  # fmt: skip
def test_a_web_field_given_where_it_has_no_effect_is_refused(fields, message) -> None:
    # Each ran as if the field were not there.
    sc = dumbbell(duration="5s", tcp={"handshake": False}, apps=[{"type": "web", "src": "s0", "dst": "k0", **fields}])
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load(sc)
    assert [(p.field, p.message) for p in e.value.problems] == [("apps[0]", message)]


def test_trace_apps_without_samples_is_refused() -> None:
    # It recorded nothing, without a word.
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load({**BASE, "trace": {"apps": ["app0"]}})
    assert [(p.field, p.message) for p in e.value.problems] == [("trace", "apps chooses whose samples are taken: give interval, on_change or web100 too")]
    assert len(tcplab.run({**BASE, "trace": {"apps": ["app0"], "on_change": True}}).traces) > 0


def test_a_loss_rule_for_handshake_packets_needs_a_handshake() -> None:
    # It dropped nothing, without a word.
    rule = {"link": "r1->r0", "kind": "syn", "packets": [1]}
    for extra, message in [({}, "no application sends such packets: they come with tcp.handshake, which is off"),
                           ({"app": "app0"}, "application 'app0' sends no such packets: they come with tcp.handshake, which is off for it")]:  # fmt: skip
        with pytest.raises(tcplab.ScenarioError) as e:
            tcplab.load({**BASE, "losses": [{**rule, **extra}]})
        assert [(p.field, p.message) for p in e.value.problems] == [("losses[0].kind", message)]
    res = tcplab.run({**BASE, "tcp": {"handshake": True}, "losses": [rule]})
    assert res.flows.syn_sent.iloc[0] == 2


def test_a_packet_listed_twice_in_a_loss_rule_is_refused() -> None:
    # [20, 20] dropped packet 20 once, without a word.
    rule = {"link": "r0->r1", "packets": [3, 5, 3, 5, 3]}
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load({**BASE, "losses": [rule]})
    assert [(p.field, p.value, p.message) for p in e.value.problems] == [
        (f"losses[0].packets[{k}]", n, f"listed already, as packets[{j}]: a packet is dropped once; give each number once")
        for k, n, j in [(2, 3, 0), (3, 5, 1), (4, 3, 0)]]  # fmt: skip
    res = tcplab.run({**BASE, "losses": [{**rule, "packets": [5, 3]}]})
    assert res.links.set_index(["src", "dst"]).loc[("r0", "r1"), "loss_drops"] == 2


def test_a_loss_rule_on_a_direction_its_packets_never_take_is_refused(tmp_path) -> None:
    # The rule dropped nothing, without a word: the project's own golden case
    # "handshake-losses" had three such rules (SYN and request rules on the
    # data's direction), and its connections never lost a SYN.
    ff = Path(__file__).parent.parent / "examples" / "fall-floyd-drops.toml"
    r = CliRunner().invoke(main, ["run", str(ff), "--set", "losses.0.link=k1->r1"])
    assert r.exit_code == 2
    assert r.output == (f"error: invalid scenario in {ff}: losses[0].link: no route of application 'tcp1' carries 'data' packets over "
                        "k1->r1, so the rule would drop nothing (data, SYN-ACKs and closes go from an application's src to its dst; "
                        "ACKs, SYNs and requests back)\n")  # fmt: skip
    # The same rule for ACKs is on their way, and drops the 20th, 22nd, 24th and 26th.
    res = tcplab.run(str(ff), overrides={"losses.0.link": "k1->r1", "losses.0.kind": "ack"})
    assert res.links.set_index(["src", "dst"]).loc[("k1", "r1"), "loss_drops"] == 4
    # A sweep names the factor and level that make such a rule, before anything runs.
    sweep = tmp_path / "sw.toml"
    sweep.write_text(f'[sweep]\nscenario = "{ff}"\n[factors]\n"losses.0.link" = ["r1->k1", "k1->r1"]\n')
    r = CliRunner().invoke(main, ["sweep", str(sweep), "--store", str(tmp_path / "s.duckdb")])
    assert r.exit_code == 2
    assert r.output.startswith(f"error: invalid sweep in {sweep}: factors (losses.0.link='k1->r1'): losses[0].link: no route of application "
                               "'tcp1' carries 'data' packets over k1->r1, so the rule would drop nothing"), r.output  # fmt: skip
    assert not (tmp_path / "s.duckdb").exists()


def test_a_lists_next_index_adds_an_element() -> None:
    # --set 'apps.1={...}' on a one-application scenario said "no such list element".
    app = {"type": "bulk", "src": "s0", "dst": "k0", "size": "10kB", "name": "more"}
    sc = tcplab.load(BASE, {"apps.1": app, "losses.0": {"link": "r0->r1", "rate": 0.01}})
    assert [a.name for a in sc.apps] == [None, "more"] and sc.losses[0].rate == 0.01
    for over, message in [({"apps.2": app}, "apps[2]: no such list element; indices 0..0, or 1 to add one"),
                          ({"losses.1": {}}, "losses[1]: no such list element; the list is empty, or 0 to add one")]:  # fmt: skip
        with pytest.raises(tcplab.ScenarioError) as e:
            tcplab.load(BASE, over)
        assert str(e.value) == f"invalid scenario: {message}"


WIRELESS = Path(__file__).resolve().parents[1] / "examples" / "wireless-bursts.toml"


@pytest.mark.parametrize(
    "buffer,message",
    [
        ("huge", "topology.buffer = 'huge': expected 'bdp', 'large', a queue limit in packets such as '25pkt', or in bytes such as '64KiB', or a queue table"),
        (True, "topology.buffer = true: expected 'bdp', 'large', a queue limit in packets such as '25pkt', or in bytes such as '64KiB', or a queue table"),
        ({"type": "droptail", "limit": "x"}, "topology.buffer.limit = 'x': expected a queue limit in packets such as '25pkt', or in bytes such as '64KiB'"),
        ({"type": "fifo"}, "topology.buffer.type = 'fifo': unknown type; allowed: 'droptail', 'red', 'ubr'"),
        # The core refused it, naming its own link number (links[2].queue).
        ({"type": "ubr", "buffer": 10}, "topology: buffer is a ubr (cell) queue, which needs ATM links; the wireless topology has none: "
                                        "give 'bdp', 'large', or a droptail or red queue"),
    ],
)
def test_a_wireless_buffer_is_refused_once_as_what_it_was_meant_to_be(buffer, message) -> None:
    """The wireless buffer is a study's buffer by name or a queue: a bad one
    gets one message, not one per kind naming pydantic's union members."""
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(WIRELESS, overrides={"topology.buffer": buffer})
    assert str(exc.value) == f"invalid scenario in {WIRELESS}: {message}"


def test_http_version_unquoted_is_the_version() -> None:
    """`http = 1.1`, which TOML reads as a float, means "1.1"; 2.0 is refused."""
    web = Path(__file__).resolve().parents[1] / "examples" / "web-pages.toml"
    assert tcplab.load(web, overrides={"apps.1.http": 1.1}).apps[1].http == "1.1"
    with pytest.raises(tcplab.ScenarioError, match=r"apps\[1\]\.http = 2\.0: not allowed; allowed values: '1\.0' or '1\.1' \(in every copy of 8\)$"):
        tcplab.load(web, overrides={"apps.1.http": 2.0})


def test_an_unknown_node_is_named_in_a_scenario_that_names_links() -> None:
    """Loss rules and the packet log name links; with a link of the explicit
    topology joining an unknown node, those checks used to build the link
    table anyway and stop with a KeyError."""
    ff = Path(__file__).resolve().parents[1] / "examples" / "fall-floyd-drops.toml"
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(ff, overrides={"topology.links.0.from": "zz"})
    assert str(exc.value) == f"invalid scenario in {ff}: topology.links[0].from = 'zz': unknown node; allowed: s1, r1, k1"


def test_a_toml_date_or_time_is_shown_as_toml_writes_it(tmp_path) -> None:
    """TOML has dates and times; a field given one names it in TOML's
    spelling, not as Python's datetime repr."""
    p = tmp_path / "dt.toml"
    p.write_text('[sim]\nduration = 1979-05-27T07:32:00Z\n[topology]\ntype = "dumbbell"\n'
                 '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nstart = 07:32:00\nsize = 1979-05-27\n')  # fmt: skip
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(p)
    assert [str(pr) for pr in exc.value.problems] == [
        "sim.duration = 1979-05-27T07:32:00+00:00: expected a duration such as '50ms', '1.5s', '200us' (units: ns, us, ms, s, min)",
        "apps[0].size = 1979-05-27: expected a size such as '1460B', '64KiB', '1MB' (units: B, kB, MB, GB, KiB, MiB, GiB)",
        "apps[0].start = 07:32:00: expected a duration such as '50ms', '1.5s', '200us' (units: ns, us, ms, s, min)",
    ]


def test_toml_bare_inf_is_the_unlimited_size(tmp_path) -> None:
    """`size = inf` unquoted (TOML's float) means what `size = "inf"` means;
    it was refused as not a size."""
    text = (Path(__file__).resolve().parents[1] / "examples" / "dumbbell-bulk.toml").read_text()
    assert 'size = "inf"' in text
    p = tmp_path / "bare.toml"
    p.write_text(text.replace('size = "inf"', "size = inf"))
    assert tcplab.load(p).apps[0].size is None
    p.write_text(text.replace('size = "inf"', "size = -inf", 1))
    with pytest.raises(tcplab.ScenarioError, match=r"apps\[0\]\.size = -inf: expected a size such as"):
        tcplab.load(p)


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("example, field, expected", [
    ("dumbbell-bulk", "sim.seed", "a whole number"),
    ("dumbbell-bulk", "tcp.quickack", "a whole number"),
    ("dumbbell-bulk", "tcp.dupack_threshold", "a whole number"),
    ("dumbbell-bulk", "tcp.sack_blocks", "a whole number"),
    ("dumbbell-bulk", "topology.left", "a whole number"),
    ("atm-ubr", "topology.bottleneck.queue.buffer", "a whole number"),
    ("atm-ubr", "topology.bottleneck.queue.z", "a number"),
    ("web-pages", "apps[1].embedded", "a whole number (in every copy of 8)"),  # its browsers are one table, copies = 8
])  # fmt: skip
@pytest.mark.parametrize("value", [True, False])
def test_true_or_false_is_no_number(example, field, expected, value) -> None:
    """A number field given TOML's true or false is refused; pydantic read
    them as 1 and 0, so `seed = true` ran seed 1 and `quickack = true` one
    quick ACK."""
    path = EXAMPLES / f"{example}.toml"
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(path, overrides={field: value})
    assert str(exc.value) == f"invalid scenario in {path}: {field} = {str(value).lower()}: expected {expected}"


def _unguarded_numbers(schema: object, guarded: bool = False, where: tuple = ()) -> list[tuple]:
    """The int and float nodes of a pydantic core schema that no
    before-validator of their own field sees first (a field's own parser,
    such as a size's or a duration's, or the guard against true and false)."""
    out: list[tuple] = []
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("model-field", "typed-dict-field", "dataclass-field"):
            guarded = False  # a new field: its own validators must guard it
        if kind in ("function-before", "function-wrap", "function-plain"):
            guarded = True
        if kind in ("int", "float") and not guarded:
            out.append(where)
        for key, sub in schema.items():
            if key != "serialization":
                out += _unguarded_numbers(sub, guarded, (*where, key))
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            out += _unguarded_numbers(sub, guarded, (*where, i))
    return out


def test_every_number_field_refuses_true_and_false() -> None:
    """No int or float field of a scenario or a sweep file is validated by
    pydantic alone, which takes true for 1: each has the guard (`fields.Int`,
    `fields.Float`) or a parser of its own (the parsers' refusals of true are
    pinned with their messages elsewhere)."""
    from tcplab.scenario import Scenario
    from tcplab.sweep import SweepFile

    for model in (Scenario, SweepFile):
        assert _unguarded_numbers(model.__pydantic_core_schema__) == [], model.__name__
    assert _unguarded_numbers({"type": "model-field", "schema": {"type": "int"}}) == [("schema",)]  # the walk sees one


@pytest.mark.parametrize("command", [["run", "{path}"], ["plot", "cwnd", "{path}", "-o", "{out}"], ["reproduce", "iw10", "--quick", "-o", "{out}"]])
def test_a_field_set_twice_with_two_values_is_refused(tmp_path, command) -> None:
    """`--set tcp.iw=4 --set tcp.iw=10` ran IW 10 without a word (the last
    one won), and so did apps.0.size beside apps[0].size; the same value
    twice is one setting."""
    path, out = _write(tmp_path, GOOD), str(tmp_path / "out")
    args = [a.format(path=path, out=out) for a in command]
    for sets, message in [(["tcp.iw=4", "tcp.iw=10"], "--set tcp.iw: given twice, as tcp.iw=4 and tcp.iw=10; give it once"),
                          (["apps.0.size=1MB", 'apps[0].size="2MB"'], "--set apps[0].size: given twice, as apps.0.size='1MB' and apps[0].size='2MB'; give it once"),
                          (["tcp.delayed_ack=true", "tcp.delayed_ack=false"], "--set tcp.delayed_ack: given twice, as tcp.delayed_ack=true and tcp.delayed_ack=false; give it once")]:  # fmt: skip
        r = CliRunner().invoke(main, [*args, *[x for s in sets for x in ("--set", s)]])
        assert (r.exit_code, r.output) == (2, f"error: {message}\n")
    assert not Path(out).exists()
    r = CliRunner().invoke(main, ["run", path, "--set", "tcp.iw=4", "--set", "tcp.iw=4", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["flows"][0]["iw"] == 4


def test_a_field_overridden_twice_in_two_spellings_is_refused() -> None:
    """The API's overrides are a dictionary, so one key cannot come twice,
    but apps.0.size and apps[0].size name one field: the last one won."""
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(BASE, {"apps.0.size": "1MB", "apps[0].size": "2MB"})
    assert str(exc.value) == "invalid scenario: apps[0].size: is given twice, as apps.0.size = '1MB' and apps[0].size = '2MB'; give it once"
    assert tcplab.load(BASE, {"apps.0.size": "1MB", "apps[0].size": "1MB"}).apps[0].size == 1_000_000


@pytest.mark.parametrize("args, message", [
    (["run", "{scenario}", "--out", ""], "--out '': expected a directory's path (made if missing)"),
    (["run", "{scenario}", "--pcap", " "], "--pcap ' ': expected a directory's path (made if missing)"),
    (["export", "{store}", "--out", ""], "--out '': expected a directory's path (made if missing)"),
    (["reproduce", "iw10", "--quick", "--out", ""], "--out '': expected a directory's path (made if missing)"),
    (["reproduce", "iw10", "--export-scenarios", ""], "--export-scenarios '': expected a directory's path (made if missing)"),
    (["sweep", "{sweep}", "--store", ""], "--store '': expected a results store's file path, such as results.duckdb"),
    (["analyze", "", "--metric", "fct_s"], "'' is no results store's path: expected a file path, such as results.duckdb"),
    (["export", " ", "--out", "x"], "' ' is no results store's path: expected a file path, such as results.duckdb"),
])  # fmt: skip
def test_an_empty_path_is_refused(tmp_path, monkeypatch, args, message) -> None:
    """An empty directory option wrote every table into the working directory
    (Path('') is '.'), `reproduce --out ''` went to STUDY-out, `sweep --store
    ''` to the sweep file's store, and DuckDB took an empty store path for a
    database in memory. Nothing is written."""
    monkeypatch.chdir(tmp_path)
    scenario = _write(tmp_path, GOOD)
    (tmp_path / "sw.toml").write_text('[sweep]\nscenario = "s.toml"\n')
    before = sorted(tmp_path.iterdir())
    r = CliRunner().invoke(main, [a.format(scenario=scenario, sweep=tmp_path / "sw.toml", store=tmp_path / "no.duckdb") for a in args])
    assert (r.exit_code, r.output) == (2, f"error: {message}\n")
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize("field, default", [("name", "the file's stem"), ("store", "results.duckdb")])
@pytest.mark.parametrize("value", ["", "  "])
def test_a_blank_sweep_name_or_store_is_refused(tmp_path, field, default, value) -> None:
    """`name = ""` labelled the sweep by its file's stem without a word, and
    `store = ""` ran every run into a database in memory, then lost it."""
    from tcplab.sweep import load_sweep

    _write(tmp_path, GOOD)
    path = tmp_path / "sw.toml"
    path.write_text(f'[sweep]\nscenario = "s.toml"\n{field} = "{value}"\n')
    with pytest.raises(tcplab.ScenarioError) as exc:
        load_sweep(str(path))
    assert str(exc.value) == f"invalid sweep in {path}: sweep.{field} = {value!r}: must not be empty; leave it out for the default, {default}"


def test_the_api_refuses_an_empty_capture_directory() -> None:
    with pytest.raises(tcplab.UsageError) as exc:
        tcplab.run(BASE, pcap="")
    assert str(exc.value) == "invalid argument: pcap = '': expected a directory's path (made if missing)"
    from tcplab.store import Store, StoreError

    assert issubclass(StoreError, tcplab.TcplabError)
    with pytest.raises(StoreError, match=r"^'' is no results store's path: expected a file path, such as results\.duckdb$"):
        Store("")


FALL_FLOYD = EXAMPLES / "fall-floyd-drops.toml"


@pytest.mark.parametrize("name, message", [
    ("", "a node needs a name"),
    (" ", "a node needs a name"),
    ("a->b", "'->' joins the two nodes of a link's name (r0->r1), so a node's name cannot hold it"),
    ("x/y", "a node's name is part of its links' capture file names (from-to.pcap): no '/', '\\' or control characters"),
    ("a\tb", "a node's name is part of its links' capture file names (from-to.pcap): no '/', '\\' or control characters"),
])  # fmt: skip
def test_a_node_name_that_cannot_name_links_or_files_is_refused(name, message) -> None:
    """A node named 'x/y' made its capture 'x/y-r1.pcap' (a failure naming the
    directory), one named 'a->b' made link names ambiguous, and one named ''
    was taken without a word."""
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(FALL_FLOYD, {"topology.nodes": ["s1", "r1", "k1", name]})
    assert str(exc.value) == f"invalid scenario in {FALL_FLOYD}: topology.nodes[3] = {name!r}: {message}"
    assert tcplab.load(FALL_FLOYD, {"topology.nodes": ["s1", "r1", "k1", "a b"]}).topology.nodes[3] == "a b"


@pytest.mark.parametrize("link, problems", [
    ({"from": "r1", "to": "s1", "rate": "1Mbps", "duplex": False},
     ["topology.links[2]: r1->s1 again: links[0] (duplex) makes it already; a link is named by its two nodes, so set links[0].reverse "
      "for that direction's settings, or duplex = false there"]),
    ({"from": "s1", "to": "r1", "rate": "1Mbps"},
     ["topology.links[2]: s1->r1 again: links[0] makes it already; a link is named by its two nodes, so give each direction once",
      "topology.links[2]: r1->s1 again: links[0] (duplex) makes it already; a link is named by its two nodes, so set links[0].reverse "
      "for that direction's settings, or duplex = false there"]),
])  # fmt: skip
def test_a_direction_given_twice_is_refused(link, problems) -> None:
    """A reverse link written out beside a duplex one (r1->s1 at 1 Mb/s) was
    made a second time and never used: routes took the first, and the
    second's rate, delay and queue went unused without a word."""
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.load(FALL_FLOYD, {"topology.links.2": link})
    assert [str(p) for p in exc.value.problems] == problems
    # Each direction once, the reverse written out: accepted.
    one_way = {"topology.links.0.duplex": False, "topology.links.2": {"from": "r1", "to": "s1", "rate": "1Mbps", "duplex": False}}
    assert [(lk.src, lk.dst) for lk in tcplab.load(FALL_FLOYD, one_way).topology.links] == [("s1", "r1"), ("r1", "k1"), ("r1", "s1")]


def test_two_captures_that_would_share_a_file_are_refused(tmp_path) -> None:
    """a-b->c and a->b-c are both captured as a-b-c.pcap: the second
    overwrote the first."""
    doc = {"sim": {"duration": "1s"}, "topology": {"type": "explicit", "nodes": ["a-b", "c", "a", "b-c"], "links": [
        {"from": "a-b", "to": "c", "rate": "1Mbps"}, {"from": "c", "to": "a", "rate": "1Mbps"}, {"from": "a", "to": "b-c", "rate": "1Mbps"}]},
        "apps": [{"type": "bulk", "src": "a-b", "dst": "b-c", "size": "10kB"}]}  # fmt: skip
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(doc, pcap=tmp_path / "p")
    assert str(exc.value) == ("invalid scenario: trace.pcap: the captures of a->b-c and a-b->c would both be a-b-c.pcap; "
                              "rename a node so that their names differ with '->' written '-'")  # fmt: skip
    assert not (tmp_path / "p").exists()
    caps = tcplab.run(doc, overrides={"trace.pcap": ["a-b->c", "c->a"]}, pcap=tmp_path / "q").captures
    assert [(c.link, Path(c.file).name, c.packets) for c in caps.itertuples()] == [("a-b->c", "a-b-c.pcap", 7), ("c->a", "c-a.pcap", 7)]


def test_a_blank_application_name_is_refused_like_an_empty_one() -> None:
    for name in ("", "  "):
        with pytest.raises(tcplab.ScenarioError) as exc:
            tcplab.load(BASE, {"apps.0.name": name})
        assert str(exc.value) == f"invalid scenario: apps[0].name = {name!r}: must not be empty; leave it out for the default, app{{i}}"


def test_a_scenario_built_or_changed_in_code_is_checked_as_a_file_is() -> None:
    doc = BASE
    # Built by its constructor: pydantic's ValidationError, not a ScenarioError.
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.Scenario(**{**doc, "sim": 3})
    assert str(exc.value) == "invalid scenario: sim = 3: expected a table"
    # Its fields were checked, the whole was not: an unknown node reached the core as a KeyError.
    sc = tcplab.Scenario(**{**doc, "apps": [dict(doc["apps"][0], src="nosuch")]})
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(sc)
    assert str(exc.value).startswith("invalid scenario: apps[0].src = 'nosuch': unknown node; allowed: ")
    # An assignment is read as the file's value is: the bare 10 was stored as
    # it was, and the core form failed on it with a TypeError.
    sc = tcplab.load(BASE)
    sc.tcp.iw = 10
    assert sc.tcp.iw == tcplab.load(BASE, {"tcp.iw": 10}).tcp.iw
    assert tcplab.run(sc).scenario.to_core() == tcplab.load(BASE, {"tcp.iw": 10}).to_core()
    with pytest.raises(tcplab.ScenarioError) as exc:
        sc.tcp.iw = "ten"
    assert str(exc.value).startswith("invalid scenario: iw = 'ten': expected an initial window in segments such as 4")
    with pytest.raises(tcplab.ScenarioError) as exc:
        sc.tcp.nosuch = 3
    assert str(exc.value).startswith("invalid scenario: nosuch: unknown field; allowed fields here: cc, iw, mss,")
    # A list's contents are not checked on assignment: a value that cannot
    # be written out is named when the scenario runs, a table is read as one.
    sc = tcplab.load(BASE)
    sc.apps.append(object())
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(sc)
    assert str(exc.value).startswith(f"invalid scenario: apps[{len(sc.apps) - 1}] = <object object at ")
    assert str(exc.value).endswith(": cannot be written out as a scenario value (object)")
    sc.apps[-1] = {**doc["apps"][0], "name": "more", "size": "10kB"}
    assert tcplab.run(sc).flows["app"].tolist()[-1] == "more"


def test_the_api_refuses_a_blank_or_unusable_output_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = tcplab.run(BASE, overrides={"sim.duration": "1s"})
    # Path('') is the working directory: save('') wrote every table there.
    for where, message in (("", "out_dir = '': expected a directory's path (made if missing)"),
                           (" ", "out_dir = ' ': expected a directory's path (made if missing)")):  # fmt: skip
        with pytest.raises(tcplab.UsageError) as exc:
            res.save(where)
        assert str(exc.value) == f"invalid argument: {message}"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    (tmp_path / "f").write_text("x")
    with pytest.raises(tcplab.UsageError) as exc:  # was FileExistsError
        res.save("f")
    assert str(exc.value) == "invalid argument: out_dir = 'f': is a file; expected a directory (made if missing)"
    with pytest.raises(tcplab.UsageError) as exc:  # was FileExistsError too
        res.save("f/g")
    assert str(exc.value) == "invalid argument: out_dir = 'f/g': cannot create the directory: Not a directory"
    with pytest.raises(tcplab.UsageError) as exc:  # a ValueError still, as before
        res.save("d", fmt="xls")
    assert isinstance(exc.value, ValueError)
    assert str(exc.value) == "invalid argument: fmt = 'xls': expected 'csv' or 'parquet'"
    assert [p.name for p in res.save("d")][-2:] == ["engine.json", "scenario.toml"]


def test_a_study_from_python_checks_its_replications_and_output_directory(tmp_path, monkeypatch) -> None:
    from tcplab.studies import hstcp, iw10

    monkeypatch.chdir(tmp_path)
    # True ran one replication, labelled "-rTrue"; 0 and "5" failed inside the sweep.
    for bad in (True, 0, "5"):
        with pytest.raises(tcplab.UsageError) as exc:
            iw10.reproduce(quick=True, replications=bad, progress=False)  # type: ignore[arg-type]
        assert str(exc.value) == f"invalid argument: replications = {tcplab.errors._shown(bad)}: expected a whole number, at least 1"
    for study in (iw10, hstcp):
        with pytest.raises(tcplab.UsageError) as exc:
            study.reproduce(quick=True, out="", progress=False, replications=1) if study is iw10 else study.reproduce(quick=True, out="")
        assert str(exc.value) == "invalid argument: out = '': expected a directory's path (made if missing)"
    assert list(tmp_path.iterdir()) == []


def test_a_scenario_and_a_result_can_be_pickled_and_a_copy_set_without_validation_is_named() -> None:
    import pickle

    # TcpOverride, a class made at import, pickled as 'abc.TcpOverride' and failed:
    # a multiprocessing pool could not return a Result.
    sc = tcplab.load(BASE, {"apps.0.tcp": {"iw": 4}})
    assert type(sc.apps[0].tcp).__qualname__ == "TcpOverride"
    assert pickle.loads(pickle.dumps(sc)) == sc
    res = tcplab.run(sc)
    again = pickle.loads(pickle.dumps(res))
    assert again.flows.equals(res.flows) and again.scenario == res.scenario
    # model_copy(update=...) validates nothing: the field is named when the scenario runs.
    bad = sc.model_copy(update={"tcp": sc.tcp.model_copy(update={"iw": "x"})})
    with pytest.raises(tcplab.ScenarioError) as exc:
        tcplab.run(bad)
    assert str(exc.value) == "invalid scenario: tcp.iw = 'x': is not a value this field takes (set without validation)"
