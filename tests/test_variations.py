"""A user's variation of a reproduced study (`tcplab reproduce STUDY --set
FIELD=VALUE`): the field is set in every run, the runs land beside the
study's own in the store, and a bad or self-defeating field is refused
before anything runs."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

import tcplab
from tcplab.api import run
from tcplab.cli import main
from tcplab.errors import ScenarioError
from tcplab.studies import hstcp
from tcplab.studies.common import run_configs, variation_dir, variation_suffix, vary
from tcplab.sweep import derive_seed, sweep_from_configs


def _bulk(rate: str) -> dict:
    return {
        "sim": {"duration": "3s", "seed": 1},
        "topology": {"type": "dumbbell", "left": 1, "right": 1, "bottleneck": {"rate": rate, "delay": "10ms", "queue": "20pkt"}},
        "tcp": {"cc": "reno"},
        "apps": [{"type": "bulk", "name": "f", "src": "s0", "dst": "k0", "size": "inf"}],
    }


CONFIGS = [({"rate": r}, _bulk(r)) for r in ("2Mbps", "5Mbps")]


def test_a_variation_sets_its_fields_in_every_run_beside_the_studys_own(tmp_path) -> None:
    over = {"sim.duration": "1s", "tcp.cc": "newreno"}
    base = run_configs("t", CONFIGS, 2, True, tmp_path, 1, False)
    var = run_configs("t", CONFIGS, 2, True, tmp_path, 1, False, overrides=over)
    assert base.sweep == "t-quick" and var.sweep == "t-quick" + variation_suffix(over)
    assert variation_suffix(over) == variation_suffix(dict(reversed(over.items()))) and len(variation_suffix(over)) == 13
    assert var.overrides == over and base.overrides == {}
    # The variation's runs are the study's scenarios with the fields set.
    want = [{**c, "sim": {"duration": "1s", "seed": 1}, "tcp": {"cc": "newreno"}} for _, c in CONFIGS]
    ids = sweep_from_configs(var.sweep, var.store, list(zip([lv for lv, _ in CONFIGS], want)), 2).runs
    assert var.run_ids == tuple(r.run_id for r in ids)
    assert set(var.run_ids).isdisjoint(base.run_ids) and var.runs == 4 and var.skipped == 0
    con = duckdb.connect(var.store, read_only=True)
    try:
        rows = con.execute("SELECT sweep, sim_seconds, count(*) FROM runs GROUP BY ALL ORDER BY sweep").fetchall()
        ccs = con.execute("SELECT DISTINCT r.sweep, f.cc FROM flows f JOIN runs r USING (run_id) ORDER BY r.sweep").fetchall()
    finally:
        con.close()
    assert rows == [("t-quick", 3.0, 4), (var.sweep, 1.0, 4)]
    assert ccs == [("t-quick", "reno"), (var.sweep, "newreno")]
    # A rerun of the variation reuses every stored run.
    again = run_configs("t", CONFIGS, 2, True, tmp_path, 1, False, overrides=over)
    assert again.run_ids == var.run_ids and again.skipped == 4


def test_setting_what_the_study_varies_is_refused_naming_the_levels() -> None:
    with pytest.raises(ScenarioError) as e:
        vary("t", CONFIGS, {"sim.duration": "1s", "topology.bottleneck.rate": "1Mbps"})
    (p,) = e.value.problems
    assert p.field == "topology.bottleneck.rate" and p.value == "1Mbps"
    assert p.message.startswith("t varies this field ('2Mbps' in {'rate': '2Mbps'}, '5Mbps' in {'rate': '5Mbps'})")
    assert e.value.source == "t with --set"
    # A field inside what the study varies merges nothing and is allowed.
    assert [d["topology"]["bottleneck"] for _, d in vary("t", CONFIGS, {"topology.bottleneck.queue": "5pkt"})] == [
        {"rate": "2Mbps", "delay": "10ms", "queue": "5pkt"}, {"rate": "5Mbps", "delay": "10ms", "queue": "5pkt"}]  # fmt: skip
    assert vary("t", CONFIGS, {}) is CONFIGS
    # Two configurations the study itself runs alike stay allowed.
    twice = [*CONFIGS, ({"rate": "2Mbps", "again": True}, _bulk("2Mbps"))]
    assert [d["sim"]["duration"] for _, d in vary("t", twice, {"sim.duration": "1s"})] == ["1s"] * 3


def test_setting_what_the_study_varies_is_refused_even_when_no_runs_merge() -> None:
    """`reproduce iw10 --set topology.profile=edge` ran EDGE in the rows
    labelled HSPA and LTE: their other fields (start times, stop times)
    differ by profile, so no two configurations became one run."""
    two = [({"rate": r, "delay": d}, _bulk(r)) for r, d in (("2Mbps", "10ms"), ("5Mbps", "30ms"))]
    two[1][1]["topology"]["bottleneck"]["delay"] = "30ms"
    with pytest.raises(ScenarioError) as e:
        vary("t", two, {"topology.bottleneck.rate": "1Mbps"})
    assert [str(p) for p in e.value.problems] == [
        "topology.bottleneck.rate = '1Mbps': t varies this field ('2Mbps' in {'rate': '2Mbps', 'delay': '10ms'}, '5Mbps' in "
        "{'rate': '5Mbps', 'delay': '30ms'}); setting it in every run would run one value under all of its levels: set a field the study keeps fixed"]
    # What the study keeps fixed, or leaves out everywhere, may be set.
    assert [d["tcp"] for _, d in vary("t", two, {"tcp.cc": "cubic", "tcp.hystart": True})] == [{"cc": "cubic", "hystart": True}] * 2


def test_cli_refuses_a_profile_set_across_a_studys_profiles(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--set", "topology.profile=edge", "--export-scenarios", "x"])
    assert res.exit_code == 2 and res.output.startswith(
        "error: invalid scenario in iw10 with --set: topology.profile = 'edge': iw10 varies this field ('edge' in {'workload': 'n+n', "
        "'profile': 'edge', 'buffer': 'bdp', 'n': 1, 'iw': 3}, 'hspa' in {"), res.output
    assert list(tmp_path.iterdir()) == []


def test_the_default_output_directory_names_the_variation() -> None:
    assert variation_dir("iw10", {}) == "iw10-out"
    assert variation_dir("iw10", {"tcp.cc": "cubic", "tcp.hystart": True}) == "iw10-out-tcp.cc=cubic,tcp.hystart=true"
    assert variation_dir("iw10", {"apps.1.start": "2 s"}) == "iw10-out-apps.1.start=2_s"
    table = {"apps.0.think": {"type": "uniform", "min": "1s"}}
    assert variation_dir("goyal98", table) == "goyal98-out-" + variation_suffix(table)[5:]
    long = {f"topology.bottleneck.field{i}": "x" * 10 for i in range(3)}
    assert variation_dir("rfc2415", long) == "rfc2415-out-" + variation_suffix(long)[5:] and len(variation_suffix(long)[5:]) == 8


def test_cli_reproduces_a_variation_of_a_study(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["reproduce", "hstcp", "--quick", "-q", "--set", "sim.duration=2s"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "hstcp-out-sim.duration=2s"
    per = pd.read_csv(out / "per_run.csv").set_index("stack")
    # Each row is what the study's own scenario gives with the field set.
    for stack in hstcp.STACKS:
        direct = hstcp.metrics(run(hstcp.scenario(stack, seed=1), overrides={"sim.duration": "2s"}))
        assert per.loc[stack, "throughput_Mbps"] == pytest.approx(direct["throughput_Mbps"], rel=1e-12)
        assert per.loc[stack, "peaks"] == direct["peaks"]
    full = hstcp.metrics(run(hstcp.scenario("standard", seed=1)))
    assert per.loc["standard", "throughput_Mbps"] != pytest.approx(full["throughput_Mbps"], rel=1e-6)
    report = (out / "report.md").read_text()
    assert report.splitlines()[2].startswith("**A variation of the study** (`--set sim.duration=2s`). Every run, the sensitivity rows' included")
    assert not (tmp_path / "hstcp-out").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["iw10", "--set", "tcp.ccc=1"], "error: invalid scenario in iw10 with --set: tcp.ccc: unknown field; allowed fields here: cc, iw,"),
        (["iw10", "--set", "tcp.iw=4"], "error: invalid scenario in iw10 with --set: tcp.iw = 4: iw10 varies this field (3 in {'workload': 'n+n', 'profile': 'edge', 'buffer': 'bdp', 'n': 1, 'iw': 3}, 10 in"),
        (["hstcp", "--set", "tcp.cc=reno"], "error: invalid scenario in hstcp with --set: tcp.cc = 'reno': hstcp varies this field ('sack' in {'stack': 'standard', 'seed': 1}, 'highspeed' in"),
        (["goyal98", "--set", "apps.500.size=1kB"], "error: invalid scenario in goyal98 with --set: apps[500]: no such list element; indices 0..99"),
        (["rfc2415", "--set", "tcp.mss"], "error: --set 'tcp.mss': expected FIELD=VALUE"),
        # Checks across fields that the core makes: before any run, not in each.
        (["iw10", "--set", "tcp.hystart=true"],
         "error: invalid scenario in iw10 with --set: apps[0].tcp.hystart: is cubic's slow start; cc is 'sack' (allowed with hystart: cubic)\n"),
        (["iw10", "--set", "tcp.sack_recovery=ns2-1998"],
         "error: invalid scenario in iw10 with --set: apps[0].tcp.sack_loss: 'fack' reads the SACK scoreboard; sack_recovery 'ns2-1998' keeps a "
         "pipe counter instead (allowed with fack: rfc6675, linux)\n"),
    ],
)
def test_a_bad_variation_exits_2_before_running_anything(tmp_path, monkeypatch, args, says) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["reproduce", *args, "--quick", "-q"])
    assert res.exit_code == 2, res.output
    assert res.output.startswith(says), res.output
    assert list(tmp_path.iterdir()) == []


def test_the_readme_error_example_is_what_the_command_prints(tmp_path, monkeypatch) -> None:
    import pathlib
    import shlex

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    lines = text.split("## Your own variations of a study", 1)[1].splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("$ tcplab reproduce"))
    argv = shlex.split(lines[i][2:])[1:]
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 2 and res.output == lines[i + 1] + "\n"


def _inline(node):
    """A document with each empirical distribution as its (bytes, cdf) points,
    whether it names a file or lists them."""
    from tcplab.scenario.apps import _read_cdf
    from tcplab.units import parse_size

    if isinstance(node, list):
        return [_inline(v) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "empirical":
        pts = [(parse_size(b), float(c)) for b, c in node["points"]] if "points" in node else _read_cdf(node["file"])
        return {"type": "empirical", "points": pts}
    return {k: _inline(v) for k, v in node.items()}


@pytest.mark.parametrize("study", ["rfc2415", "iw10", "hstcp", "goyal98"])
def test_exported_scenarios_are_the_runs_the_study_makes(tmp_path, study) -> None:
    import importlib
    import tomllib

    from tcplab.scenario.loading import parse_toml, read_toml
    from tcplab.studies.common import export_scenarios

    mod = importlib.import_module(f"tcplab.studies.{study}")
    over = {"tcp.rto_min": "1s"}
    configs = mod.scenarios(quick=True)
    data: list = []
    paths = export_scenarios(study, configs, tmp_path / "sc", over, data_files=data)
    assert len(paths) == len(configs) == len(set(paths)) and sorted(tmp_path.joinpath("sc").iterdir()) == sorted(paths + data)
    # goyal98's SPECweb96 sizes go once into a CSV file beside the scenarios,
    # which name it (they held the table 200 times each).
    assert [p.name[:6] for p in data] == (["sizes-"] if study == "goyal98" else [])
    for path, (_, doc) in zip(paths, vary(study, configs, over)):
        assert _inline(read_toml(path)) == _inline(json.loads(json.dumps(doc))) and tomllib.loads(path.read_text()) == parse_toml(path.read_text())
        assert read_toml(path)["tcp"]["rto_min"] == "1s"
        if study == "goyal98":
            assert "points = " not in path.read_text() and f'file = "{data[0].name}"' in path.read_text()
    if study == "hstcp":  # run in-process with each scenario's own seed
        assert [read_toml(p)["sim"]["seed"] for p in paths] == [lv["seed"] for lv, _ in configs]
        return
    # The first replication of the study's sweep runs exactly the file's scenario.
    sw = sweep_from_configs("x", str(tmp_path / "s.duckdb"), vary(study, configs[:3], over), 1)
    for r, path in zip(sw.runs, paths):
        assert r.core_json == json.dumps(tcplab.load(path).to_core(), sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize("study", ["rfc2415", "iw10", "goyal98"])
def test_a_studys_seed_is_its_sweeps_seed(tmp_path, study, monkeypatch) -> None:
    """`--set sim.seed=S` on a study run through the sweep machinery makes its
    sweep derive replication r's seed from (S, r), as a sweep file's seed
    does; it used to be overwritten by the seeds derived from 1, so the
    variation reran the study's own runs. The exported scenarios carry the
    seed of replication 0."""
    import importlib

    import tcplab.runner
    from tcplab.runner import SweepReport
    from tcplab.scenario.loading import read_toml
    from tcplab.studies.common import export_scenarios

    swept = []

    def record(sweep, **_):  # the study's sweep, not run
        swept.append(sweep)
        return SweepReport(len(sweep.runs), 0, 0, 0, False)

    monkeypatch.setattr(tcplab.runner, "run_sweep", record)
    mod = importlib.import_module(f"tcplab.studies.{study}")
    configs = mod.scenarios(quick=True)[:2]
    over = {"sim.seed": 7}
    run_configs(study, configs, 2, True, tmp_path, 1, False)
    run_configs(study, configs, 2, True, tmp_path, 1, False, overrides=over)
    own, sw = swept
    assert [r.seed for r in sw.runs] == [derive_seed(7, 0), derive_seed(7, 1)] * 2
    assert [r.seed for r in own.runs] == [derive_seed(1, 0), derive_seed(1, 1)] * 2
    assert not {r.run_id for r in sw.runs} & {r.run_id for r in own.runs}
    paths = export_scenarios(study, configs, tmp_path / "sc", over)
    for r, path in zip(sw.runs[::2], paths):
        assert read_toml(path)["sim"]["seed"] == derive_seed(7, 0)
        assert r.core_json == json.dumps(tcplab.load(path).to_core(), sort_keys=True, separators=(",", ":"))


def test_cli_exports_scenarios_and_runs_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["reproduce", "iw10", "--export-scenarios", "sc", "--set", "tcp.cc=cubic"])
    assert res.exit_code == 0, res.output
    assert res.output == ("wrote 80 scenarios of iw10 into sc, each as its first replication runs; "
                          "run one with: tcplab run sc/workload-n+n_profile-edge_buffer-bdp_n-1_iw-3.toml\n")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sc"]
    assert "workload-bulk+n_profile-hspa_buffer-large_n-18_iw-10.toml" in {p.name for p in (tmp_path / "sc").iterdir()}
    ran = CliRunner().invoke(main, ["run", "sc/workload-n+n_profile-edge_buffer-bdp_n-1_iw-3.toml", "--json"])
    assert ran.exit_code == 0 and {f["cc"] for f in json.loads(ran.output)["flows"]} == {"cubic"}
    res = CliRunner().invoke(main, ["reproduce", "goyal98", "--export-scenarios", "g"])
    table = [p.name for p in (tmp_path / "g").glob("*.csv")]
    assert res.exit_code == 0 and res.output == (f"wrote 72 scenarios of goyal98 into g (with the size distribution they name: {table[0]}), each as its "
                                                 "first replication runs; run one with: tcplab run g/link-wan_flavour-vanilla_buffer-0.5_RTT_policy-epd.toml\n")
    bad = CliRunner().invoke(main, ["reproduce", "iw10", "--export-scenarios", "sc2", "--set", "tcp.iw=4"])
    assert bad.exit_code == 2 and bad.output.startswith("error: invalid scenario in iw10 with --set: tcp.iw = 4: iw10 varies this field")
    assert not (tmp_path / "sc2").exists()


def test_the_readme_export_example_runs(tmp_path, monkeypatch) -> None:
    import pathlib
    import shlex

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = text.split("To look at one case closely", 1)[1].split("```")[1]
    commands = [shlex.split(ln, comments=True) for ln in block.strip().splitlines()]
    assert [c[:3] for c in commands] == [["tcplab", "reproduce", "iw10"], ["tcplab", "run", commands[1][2]], ["tcplab", "plot", "seq"]]
    monkeypatch.chdir(tmp_path)
    outputs = []
    for argv in commands:
        res = CliRunner().invoke(main, argv[1:])
        assert res.exit_code == 0, (argv, res.output)
        outputs.append(res.output)
    assert len(list((tmp_path / "iw10-scenarios").iterdir())) == 80
    # The HSPA 2+2 case with IW10: the later burst's second flow times out (the slides' remark).
    assert "│  3 │ later │ s1→m0   │ sack │ 10 │ 90 kB │     90 kB │   0.617 │ 4.822 │" in outputs[1]
    assert (tmp_path / "hspa-2+2.png").stat().st_size > 10_000


@pytest.mark.parametrize("option", ["--out", "--export-scenarios"])
def test_an_output_path_that_is_a_file_exits_2(tmp_path, monkeypatch, option) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    res = CliRunner().invoke(main, ["reproduce", "hstcp", "--quick", option, "afile"])
    assert res.exit_code == 2 and res.output == f"error: {option} 'afile': is a file; expected a directory (made if missing)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    # A directory that cannot be made is refused before the study runs
    # (it ran, then failed to write its files, with exit status 1).
    res = CliRunner().invoke(main, ["reproduce", "hstcp", "--quick", option, "afile/sub"])
    assert res.exit_code == 2 and res.output == f"error: {option} 'afile/sub': cannot create the directory: Not a directory\n"


def test_replications_other_than_the_studys_share_the_store_and_are_named(tmp_path, monkeypatch) -> None:
    from tcplab.store import Store

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    res = runner.invoke(main, ["reproduce", "iw10", "--quick", "--replications", "2", "-q"])
    assert res.exit_code == 0, res.output
    assert "Mode: **quick**: 2 replications per case, 160 runs (0 of them reused from the store)" in (tmp_path / "iw10-out" / "report.md").read_text()
    # Three replications reuse the two stored, as a sweep of its own.
    res = runner.invoke(main, ["reproduce", "iw10", "--quick", "-r", "3", "-q"])
    assert res.exit_code == 0, res.output
    assert "3 replications per case, 240 runs (160 of them reused from the store)" in (tmp_path / "iw10-out" / "report.md").read_text()
    with Store(tmp_path / "iw10-out" / "iw10.duckdb", read_only=True) as st:
        assert st.sweeps() == {"iw10-quick-r2": {"runs": 160, "ok": 160, "failed": 0}, "iw10-quick-r3": {"runs": 240, "ok": 240, "failed": 0}}
    # The study's own count names no sweep of its own.
    from tcplab.studies.common import replications_of
    from tcplab.studies.iw10 import QUICK

    assert replications_of(QUICK, 10) == (10, "") and replications_of(QUICK, None) == (10, "") and replications_of(QUICK, 4) == (4, "-r4")
    for args, message in ((["hstcp", "-r", "2"], "error: --replications does not apply to hstcp, which runs each stack with seeds 1, 2 and 3 "
                                                 "(its iperf runs) itself\n"),
                          (["iw10", "-r", "2", "--export-scenarios", "x"], "error: --replications does not apply with --export-scenarios, "
                                                                           "which runs nothing (the scenarios go into its DIR)\n")):  # fmt: skip
        res = runner.invoke(main, ["reproduce", *args])
        assert (res.exit_code, res.output) == (2, message)


def test_a_study_whose_runs_failed_stops_before_its_analysis(tmp_path, monkeypatch) -> None:
    """Runs that fail (the scenarios were checked before they started: a
    panic in the core) leave the study unanalyzed, with the first failure
    named and exit status 1, instead of tables built from the others."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TCPLAB_DEBUG_PANIC", "1")  # every run's core panics; the check before does not run the core's loop
    res = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "-q", "-r", "1", "-j", "1", "-o", "out"])
    assert res.exit_code == 1, res.output
    assert res.output.startswith("error: iw10-quick-r1: 80 of 80 runs failed, so the study is not analyzed; the first: "), res.output
    assert "a deliberate panic" in res.output and "the same command runs the failed ones again" in res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["iw10.duckdb"]


def test_a_study_from_python_says_what_overrides_are(tmp_path) -> None:
    from tcplab.studies import hstcp, iw10

    # A list of FIELD=VALUE strings was an AttributeError ('list' object has no attribute 'items').
    for study in (iw10, hstcp):
        with pytest.raises(TypeError, match=r"^overrides map field paths to values, such as \{'tcp.iw': 4\}; got list$"):
            study.reproduce(quick=True, progress=False, out=str(tmp_path / "o"), overrides=["tcp.cc=cubic"])  # type: ignore[arg-type]
    assert not (tmp_path / "o").exists()


def test_counted_says_one_thing_or_several() -> None:
    from tcplab.studies.common import counted

    assert [counted(1, "replication"), counted(2, "worker"), counted(0, "run")] == ["1 replication", "2 workers", "0 runs"]


def test_a_checks_outcome_is_a_python_bool() -> None:
    import numpy as np

    from tcplab.studies.common import as_checks

    out = as_checks([("a", np.float64(2.0) > 1, "x"), ("b", np.False_, "y"), ("c", True, "z")])
    assert out == [("a", True, "x"), ("b", False, "y"), ("c", True, "z")] and [type(ok) for _, ok, _ in out] == [bool] * 3


def test_a_value_that_is_not_there_shows_as_a_dash_in_the_reports_tables() -> None:
    import pandas as pd

    from tcplab.studies.common import md_table

    assert md_table(pd.DataFrame({"a": [1.0, float("nan")], "b": ["x", "y"]})).splitlines() == ["| a | b |", "|---|---|", "| 1.00 | x |", "| — | y |"]
