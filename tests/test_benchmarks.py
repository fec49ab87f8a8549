"""The benchmark script's own arithmetic (its timings are never asserted)."""

import argparse
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_dumbbell  # noqa: E402
import core_pairs  # noqa: E402
import rfc2415_calibration  # noqa: E402


def _run(flows, pps, setup, rss, events_per_pkt=4.0, drop_pct=1.0):
    return {"flows": flows, "pps": pps, "eps": pps * events_per_pkt, "ev_per_pkt": events_per_pkt, "drop_pct": drop_pct,
            "loop_s": 1.0, "setup_s": setup, "results_s": 0.5, "rss_mb": rss, "process_s": 2.0}  # fmt: skip


def test_scale_summary_takes_each_columns_median_and_the_speed_range():
    runs = [_run(1000, 3.0e6, 0.02, 128), _run(1000, 2.0e6, 0.01, 130), _run(1000, 2.5e6, 0.05, 129)]
    s = bench_dumbbell.scale_summary(runs)
    assert (s["flows"], s["pps"], s["setup_s"], s["rss_mb"]) == (1000, 2.5e6, 0.02, 129)
    assert (s["pps_min"], s["pps_max"]) == (2.0e6, 3.0e6)
    assert s["runs"] is runs


def test_scale_table_prints_the_cost_ratio_of_the_largest_count_over_the_smallest(monkeypatch, capsys):
    speeds = {1000: iter([3.0e6, 2.0e6]), 100000: iter([1.0e6, 0.5e6])}
    work = {1000: (4.0, 0.3), 100000: (5.0, 27.0)}
    monkeypatch.setattr(bench_dumbbell, "run_scale", lambda n: {**_run(n, next(speeds[n]), 0.1, 100, *work[n]), "departed": 1})
    rows = bench_dumbbell.scale_table((1000, 100000), repeat=2)
    assert [r["pps"] for r in rows] == [2.5e6, 0.75e6]
    assert [(r["ev_per_pkt"], r["drop_pct"]) for r in rows] == [(4.0, 0.3), (5.0, 27.0)]
    out = capsys.readouterr().out
    assert "2.00-3.00" in out and "0.50-1.00" in out
    # 1e9 / (0.75e6 * 5) = 267 ns an event at 100,000 flows, 1e9 / (2.5e6 * 4) = 100 at 1,000.
    assert "    5.00    267    27.0 |" in out and "    4.00    100     0.3 |" in out
    assert "cost per packet at 100,000 flows over 1,000: 3.33x (medians); per event: 2.67x" in out


def test_a_scale_run_reports_its_events_per_packet_and_the_share_of_bottleneck_arrivals_dropped(monkeypatch):
    child = {"departed": 300, "dropped": 100, "loop_s": 0.5, "events": 1500, "setup_s": 0.1, "results_s": 0.2}
    monkeypatch.setattr(bench_dumbbell, "run_measured", lambda cmd, stdin: (json.dumps(child) + "\n", 1.5, 120.0))
    r = bench_dumbbell.run_scale(1000)
    assert (r["pps"], r["eps"], r["ev_per_pkt"], r["drop_pct"]) == (600.0, 3000.0, 5.0, 25.0)
    assert (r["rss_mb"], r["process_s"], r["flows"]) == (120.0, 1.5, 1000)


@pytest.mark.parametrize("bad", ["0", "-2", "x", "1.5"])
def test_repeat_must_be_a_whole_number_of_at_least_one(bad):
    assert bench_dumbbell.positive_int("3") == 3
    with pytest.raises(argparse.ArgumentTypeError) as e:
        bench_dumbbell.positive_int(bad)
    assert str(e.value) == f"{bad!r}: expected a whole number of at least 1"


def _engine(wall, events=100, created=50):
    return {"events": events, "packets_created": created, "wall_seconds": wall, "setup_seconds": 0.1, "results_seconds": 0.2}


def test_core_pairs_takes_the_median_of_each_pairs_ratio_and_ignores_the_wall_clock_fields():
    pairs = [(_engine(2.0), _engine(1.0)), (_engine(1.0), _engine(1.25)), (_engine(3.0), _engine(2.0))]
    pairs[1][1]["setup_seconds"] = 9.0  # a wall-clock field: not a counter
    s = core_pairs.summarize(pairs)
    assert s["ratios"] == [2.0, 0.8, 1.5]
    assert (s["median"], s["min"], s["max"], s["faster"]) == (1.5, 0.8, 2.0, 2)
    assert s["differ"] == {}


def test_core_pairs_names_the_counters_the_two_builds_disagree_on():
    pairs = [(_engine(1.0), _engine(1.0)), (_engine(1.0, events=101), _engine(1.0, created=49))]
    assert core_pairs.differing(pairs) == {"events": (101, 100), "packets_created": (50, 49)}


@pytest.mark.parametrize("argv", [["a", "b"], ["a", "b", "s.json", "--flows", "10"], ["a", "b", "s.json", "--pairs", "0"]])
def test_core_pairs_wants_one_scenario_and_at_least_one_pair(monkeypatch, capsys, argv):
    monkeypatch.setattr(sys, "argv", ["core_pairs.py", *argv])
    with pytest.raises(SystemExit) as e:
        core_pairs.main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert ("not both" in err) if "--pairs" not in argv else ("--pairs 0: expected a whole number of at least 1" in err)


def test_the_command_line_run_departs_what_the_api_run_departs(tmp_path):
    # The same case through `tcplab run FILE --json` (the case written as
    # TOML) and through tcplab.run: the bottleneck's departures agree.
    import tcplab
    from tcplab.scenario.loading import read_toml

    case = dict(flows=3, rate="1.5Mbps", duration=5)
    s = bench_dumbbell.run_tcplab_cli(case, str(tmp_path))
    assert read_toml(tmp_path / "case-3.toml") == bench_dumbbell.tcplab_scenario(**case)
    links = tcplab.run(bench_dumbbell.tcplab_scenario(**case)).links
    expected = int(links[(links.src == "r0") & (links.dst == "r1")].departures.iloc[0])
    assert s.departed == expected > 0
    assert 0 < s.loop_s < s.process_s


def test_the_command_line_is_the_script_beside_the_interpreter_or_its_entry_point(tmp_path):
    python = tmp_path / "python"
    assert bench_dumbbell.tcplab_command(str(python))[:2] == [str(python), "-c"]
    (tmp_path / "tcplab").write_text("")
    assert bench_dumbbell.tcplab_command(str(python)) == [str(tmp_path / "tcplab")]


def test_a_peers_ratios_divide_its_process_time_by_each_of_tcplabs():
    peer = [bench_dumbbell.Sample(departed=100, loop_s=2.0, process_s=3.0, rss_mb=10.0)]
    r = bench_dumbbell.peer_row("ns2", peer, {"tcplab_pps": 500.0, "tcplab_process_s": 1.5, "tcplab_run_s": 0.5})
    assert (r["ns2_pps"], r["ns2_ratio"], r["ns2_process_ratio"], r["ns2_run_ratio"]) == (50.0, 10.0, 2.0, 6.0)


def test_a_calibration_value_is_json_where_it_parses_and_a_string_otherwise():
    assert rfc2415_calibration.parse_set("ftp_persistent=true") == ("ftp_persistent", True)
    assert rfc2415_calibration.parse_set('primary={"type": "pareto", "median": "1900B"}') == ("primary", {"type": "pareto", "median": "1900B"})
    assert rfc2415_calibration.parse_set("think_from=end") == ("think_from", "end")
    with pytest.raises(argparse.ArgumentTypeError, match="expected KEY=VALUE"):
        rfc2415_calibration.parse_set("think_from")


def test_an_unknown_calibration_key_exits_2_before_any_run(monkeypatch, capsys, tmp_path):
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["rfc2415_calibration.py", "--set", "think=end", "--out", str(out)])
    assert rfc2415_calibration.main() == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --set think: unknown calibration key; allowed: access_delay, delack_timeout, embedded_start, ")
    assert not out.exists()
