"""The command line on the shipped example."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcplab.api import without_wall_clock
import tcplab
from tcplab.cli import main

EXAMPLE = str(Path(__file__).resolve().parent.parent / "examples" / "dumbbell-bulk.toml")


def test_run_prints_summary_tables() -> None:
    r = CliRunner().invoke(main, ["run", EXAMPLE])
    assert r.exit_code == 0, r.output
    assert "Transfers (" in r.output and "Busiest links" in r.output
    assert "r0→r1" in r.output


def test_busiest_links_are_the_highest_utilization_with_arrivals_ties_by_id() -> None:
    """The summary's link rows: links that saw an arrival, by utilization
    falling, equal utilizations by link id, as a full sort would give."""
    from tcplab.cli import busiest

    lc = {
        "id": [5, 3, 9, 1, 7, 2, 8, 4],
        "utilization": [0.5, 0.9, 0.5, 0.0, 0.9, 0.99, 0.5, 0.2],
        "arrivals": [10, 4, 3, 0, 6, 0, 1, 2],
    }
    assert busiest(lc, 4) == [1, 4, 0, 6]  # 0.99 has no arrival; 0.9 ids 3, 7; 0.5 ids 5, 8 (9 cut)
    reference = sorted((i for i, a in enumerate(lc["arrivals"]) if a > 0), key=lambda i: (-lc["utilization"][i], lc["id"][i]))
    assert busiest(lc, 8) == reference == [1, 4, 0, 6, 2, 7]
    assert busiest({}, 8) == []


@pytest.mark.parametrize("n", [7, 150_001])
def test_summary_sorts_the_completed_values_as_python_would(n) -> None:
    """The summary's medians and quartiles read the completed transfers' and
    pages' values in order; past 100,000 of them NumPy sorts them. Either
    way: exactly Python's sorted() of the values kept, as Python floats."""
    import random
    from array import array

    from tcplab.api import Levels
    from tcplab.cli import _sorted_where

    rng = random.Random(n)
    values = [rng.expovariate(3.0) if rng.random() < 0.9 else None for _ in range(n)]
    keep = Levels(array("B", [v is not None for v in values]), [False, True])
    out = _sorted_where(values, keep)
    assert out == sorted(v for v in values if v is not None)
    assert len(out) > 0.85 * n and all(type(v) is float for v in out)


def test_rows_of_indexes_the_rows_asked_for_as_the_whole_columns_give_them() -> None:
    from array import array

    from tcplab.api import Levels, rows_of

    table = {"id": array("q", [4, 5, 6]), "x": array("d", [0.5, 1.5, 2.5]), "app": Levels(array("I", [1, 0, 1]), ["a", "b"]),
             "ok": Levels(array("B", [1, 0, 1]), [False, True]), "fct": [0.1, None, 0.3]}  # fmt: skip
    whole = rows_of(table)
    assert rows_of(table, [2, 0]) == [whole[2], whole[0]] == [
        {"id": 6, "x": 2.5, "app": "b", "ok": True, "fct": 0.3}, {"id": 4, "x": 0.5, "app": "b", "ok": True, "fct": 0.1}]  # fmt: skip
    assert [type(v) for v in rows_of(table, [1])[0].values()] == [int, float, str, bool, type(None)]


def test_summary_rows_are_the_runs_own_figures() -> None:
    """The summary's flow rows come from the result: each flow's row, its
    bottleneck row, and the engine line, in the boxed layout."""
    r = CliRunner().invoke(main, ["run", EXAMPLE])
    res = tcplab.run(EXAMPLE)
    lines = r.output.splitlines()
    f = res.flows
    assert len(f) == 8 and lines[0] == "Transfers (8)"  # the FTP-like client's files are flows of their own
    assert lines[1].startswith("┏━━━━┳") and lines[3].startswith("┡━━━━╇")
    header = [c.strip() for c in lines[2].strip("┃").split("┃")]
    assert header == ["id", "app", "src→dst", "cc", "iw", "bytes", "delivered", "start s", "fct s", "goodput", "pkts", "retx", "RTOs", "FR"]
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines[4:12]]
    assert lines[12].startswith("└")
    assert [row[1] for row in rows] == list(f.app)
    assert [int(row[10]) for row in rows] == list(f.data_pkts)
    assert [int(row[11]) for row in rows] == list(f.retx_pkts)
    assert lines[-1].startswith("Engine: 60 simulated s, " + f"{res.engine['events']:,} events")


def test_text_table_layout_clips_text_to_fit_and_centres_the_caption() -> None:
    from tcplab.text_table import TextTable, cell_len

    t = TextTable("T", [("name", False), ("n", True)], caption="two rows")
    t.add_row("alpha", "1")
    t.add_row("βeta-long-name", "22")
    assert t.render(80).splitlines() == [
        "T",
        "┏━━━━━━━━━━━━━━━━┳━━━━┓",
        "┃ name           ┃  n ┃",
        "┡━━━━━━━━━━━━━━━━╇━━━━┩",
        "│ alpha          │  1 │",
        "│ βeta-long-name │ 22 │",
        "└────────────────┴────┘",
        "        two rows",
    ]
    # 17 columns: the text column gives up what the table lacks; numbers stay whole.
    narrow = t.render(17).splitlines()
    assert narrow[5] == "│ βeta-lo… │ 22 │" and {len(x) for x in narrow[1:7]} == {17}
    assert cell_len("表a") == 3
    with pytest.raises(ValueError, match="a row of 1 cells for 2 columns"):
        t.add_row("x")


def test_json_matches_python_api() -> None:
    r = CliRunner().invoke(main, ["run", EXAMPLE, "--json"])
    assert r.exit_code == 0
    doc = json.loads(r.output)
    api = json.loads(tcplab.run(EXAMPLE).to_json())
    for d in (doc, api):
        d["engine"] = without_wall_clock(d["engine"])
    assert doc == api
    assert set(doc) == {"tcplab_version", "seed", "scenario", "flows", "links", "pages", "traces", "web100", "ports", "packets", "engine"}


def test_set_and_seed_reach_the_simulation() -> None:
    args = ["run", EXAMPLE, "--json", "--set", "tcp.iw=4", "--set", "topology.bottleneck.rate=2Mbps", "--seed", "7"]
    doc = json.loads(CliRunner().invoke(main, args).output)
    assert doc["seed"] == 7
    assert doc["scenario"]["topology"]["bottleneck"]["rate"] == "2Mbps"
    assert {f["iw"] for f in doc["flows"]} == {4}
    bott = next(link for link in doc["links"] if (link["src"], link["dst"]) == ("r0", "r1"))
    assert bott["rate_bps"] == 2_000_000


def test_version() -> None:
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and tcplab.__version__ in r.output


def test_dumped_scenario_reloads_to_the_same_run() -> None:
    res = tcplab.run(EXAMPLE, overrides={"tcp.iw": 3})
    again = tcplab.run(res.to_dict()["scenario"])
    assert again.raw["flows"] == res.raw["flows"]


def test_new_tcp_options_work_from_set() -> None:
    args = ["run", EXAMPLE, "--json", "--set", "tcp.cc=cubic", "--set", "tcp.handshake=true", "--set", "tcp.iw=rfc6928",
            "--set", "tcp.limited_transmit=true", "--set", "tcp.ssthresh=bdp", "--set", "trace.interval=100ms"]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    long0 = [f for f in doc["flows"] if f["app"] == "long0"][0]
    assert long0["cc"] == "cubic" and long0["syn_sent"] == 1 and long0["iw"] == 10.0 and long0["sack_blocks"] > 0
    # One trace row per traced, unfinished connection every 100 ms over 60 s.
    assert len({(t["flow"], t["t"]) for t in doc["traces"]}) == len(doc["traces"]) > 600


def test_run_prints_unbounded_transfers_when_every_one_is(tmp_path) -> None:
    # Every flow unbounded: the bytes column holds only None (no NaN to test for).
    path = tmp_path / "all-inf.toml"
    path.write_text(
        '[sim]\nduration = "2s"\n[topology]\ntype = "dumbbell"\nleft = 2\nright = 2\n'
        + "".join(f'[[apps]]\ntype = "bulk"\nsrc = "s{i}"\ndst = "k{i}"\nsize = "inf"\n' for i in range(2))
    )
    assert tcplab.run(str(path)).flows.bytes.isna().all()
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 0, r.output
    assert r.output.count(" inf ") == 2


def _child_output(code: str, env: dict[str, str] | None = None) -> str:
    """What `code` prints, run by a fresh interpreter (nothing imported yet),
    with this environment or `env`."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300, env=env).stdout.strip()


def test_run_and_its_summary_import_no_pandas() -> None:
    """Start-up time: `tcplab run` builds its summary from the result rows."""
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from tcplab.cli import main\n"
        f"r = CliRunner().invoke(main, ['run', {EXAMPLE!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'Busiest links' in r.output\n"
        "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'duckdb') if m in sys.modules))\n"
    )
    assert _child_output(code) == "[]"


def test_the_command_line_skips_pydantics_search_for_plugins_unless_the_user_set_it() -> None:
    """Start-up time: the commands build their models without scanning every
    installed distribution's entry points for pydantic plugins; a
    PYDANTIC_DISABLE_PLUGINS the user set is kept, and pydantic then scans."""
    import os

    code = (
        "import os\n"
        "from click.testing import CliRunner\n"
        "from tcplab.cli import main\n"
        f"r = CliRunner().invoke(main, ['run', {EXAMPLE!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "import pydantic.plugin._loader as loader\n"
        "print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'), loader._plugins is None)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    assert _child_output(code, env) == "__all__ True"
    assert _child_output(code, {**env, "PYDANTIC_DISABLE_PLUGINS": "someplugin"}) == "someplugin False"


def test_the_api_imports_pandas_beside_a_loop_that_outlasts_its_wait(monkeypatch) -> None:
    """tcplab.run's tables are DataFrames: its hook imports pandas in a thread
    beside the loop, once the run has lasted PANDAS_AFTER_S, and not when the
    run ended first or pandas is imported already; no thread outlives
    tcplab.run; tcplab run's summary passes no hook."""
    import tcplab.api

    code = (
        "import sys\n"
        "from tcplab.api import PandasMeanwhile\n"
        "ended = PandasMeanwhile(); ended.done.set(); ended(); ended.finish()\n"
        "first = 'pandas' in sys.modules\n"
        "running = PandasMeanwhile(); running(); running.thread.join()\n"  # waits PANDAS_AFTER_S for a run that never ends
        "print(first, 'pandas' in sys.modules)\n"
    )
    assert _child_output(code) == "False True"
    code = (
        "import sys, threading\n"
        "import tcplab, tcplab.api\n"
        "tcplab.api.PANDAS_AFTER_S = 3600\n"  # the thread waits for the run's end, which tcplab.run signals and joins
        f"tcplab.run({EXAMPLE!r})\n"
        "print('pandas' in sys.modules, threading.active_count())\n"
    )
    assert _child_output(code) == "False 1"
    hooks = []
    real = tcplab.api.run_core_columns

    def recording(*a, **k):
        hooks.append(k.get("at_loop"))
        return real(*a, **k)

    monkeypatch.setattr(tcplab.api, "run_core_columns", recording)
    import pandas  # noqa: F401

    tcplab.run(EXAMPLE)
    assert CliRunner().invoke(main, ["run", EXAMPLE]).exit_code == 0
    assert isinstance(hooks[0], tcplab.api.PandasMeanwhile) and hooks[0].done.is_set() and hooks[1] is None
    assert hooks[0].thread is None  # pandas is imported in this process: no thread


def test_run_counts_an_atm_ports_queue_in_cells(tmp_path) -> None:
    # Two bulk flows through a 300-cell EPD port: the busiest-links table
    # shows the port's queue in cells (at most 299 wait beside the one in
    # transmission) and says so.
    path = tmp_path / "atm.toml"
    path.write_text(
        '[sim]\nduration = "2s"\n[topology]\ntype = "dumbbell"\nleft = 2\nright = 2\natm = true\n'
        '[topology.bottleneck]\nrate = "45Mbps"\ndelay = "5ms"\nqueue = { type = "ubr", buffer = 300, policy = "epd" }\n'
        '[topology.left_access]\nrate = "155Mbps"\ndelay = "0.01ms"\n[topology.right_access]\nrate = "155Mbps"\ndelay = "0.01ms"\n'
        '[tcp]\ncc = "sack"\nmss = "1024B"\nwindow = "4MiB"\n'
        + "".join(f'[[apps]]\ntype = "bulk"\nsrc = "s{i}"\ndst = "k{i}"\n' for i in range(2))
    )
    t3 = tcplab.run(str(path)).links.set_index(["src", "dst"]).loc[("r0", "r1")]
    assert 240 < t3.queue_max_pkts <= 299 and t3.queue_max_bytes == 53 * t3.queue_max_pkts
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["run", str(path)])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if line.startswith("│ r0→r1"))
    assert int(row.split("│")[-2]) == t3.queue_max_pkts
    assert "on an ATM switch port (r0→r1, r1→r0), cells" in r.output


@pytest.mark.parametrize(
    "args,message",
    [
        (["plot", "seq", EXAMPLE, "-o", "f.png", "--x", "iw"], "plot seq: --x does not apply to this figure (it applies to: a results store)"),
        (["plot", "cwnd", EXAMPLE, "-o", "f.png", "--link", "r0->r1"], "plot cwnd: --link does not apply to this figure (it applies to: seq)"),
        (["plot", "web100-rtt", EXAMPLE, "-o", "f.png", "--sweep", "s"], "plot web100-rtt: --sweep does not apply to this figure (it applies to: a results store)"),
        # Given as its default value, too (it used to pass unnoticed).
        (["plot", "cwnd", EXAMPLE, "-o", "f.png", "--stat", "mean"], "plot cwnd: --stat does not apply to this figure (it applies to: a results store)"),
        (["plot", "r.duckdb", "--x", "iw", "--y", "fct_s", "-o", "f.png", "--app", "a"],
         "plot r.duckdb: --app does not apply to this figure (it applies to: seq, cwnd, web100-VIEW)"),
        (["plot", "r.duckdb", EXAMPLE, "--x", "iw", "--y", "fct_s", "-o", "f.png"],
         "plot r.duckdb: SCENARIO does not apply to this figure (it applies to: seq, cwnd, web100-VIEW)"),
        (["analyze", "r.duckdb", "--metric", "fct_s", "--factors", "iw"], "--factors applies with --anova only"),
        (["analyze", "r.duckdb", "--metric", "fct_s", "--anova", "--factors", "iw", "--by", "cc"], "--by does not apply with --anova"),
        (["sweep", "s.toml", "--scheduler", "tcp://h:8786"], "--scheduler applies with --backend dask only"),
        (["sweep", "s.toml", "--backend", "dask", "--scheduler", "tcp://h:8786", "--jobs", "2"], "--jobs applies to --backend local only"),
        (["reproduce", "iw10", "--export-scenarios", "d", "--out", "o"], "--out does not apply with --export-scenarios"),
        (["reproduce", "iw10", "--export-scenarios", "d", "--jobs", "2"], "--jobs does not apply with --export-scenarios"),
    ],
)
def test_an_option_that_does_not_apply_is_refused(tmp_path, monkeypatch, args, message) -> None:
    """Before anything runs or is read, with exit status 2: never ignored."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert r.output.strip() == f"error: {message}" or r.output.startswith(f"error: {message}"), r.output
    assert list(tmp_path.iterdir()) == [], "nothing was written"


def test_ctrl_c_in_a_study_stops_it_with_130_before_its_analysis(tmp_path, monkeypatch) -> None:
    # The study went on to analyze the runs stored so far, and failed with a KeyError traceback.
    import tcplab.runner
    from tcplab.runner import SweepReport

    monkeypatch.setattr(tcplab.runner, "run_sweep", lambda sw, **kw: SweepReport(total=len(sw.runs), skipped=0, done=3, failed=0, interrupted=True))
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--out", str(tmp_path / "o")])
    assert r.exit_code == 130
    assert r.output.startswith("interrupted. iw10-quick: 3 runs done, 0 already stored, 0 failed, of ")
    assert r.output.endswith(f"; store {tmp_path / 'o' / 'iw10.duckdb'}. Run the same command to resume.\n")
    assert not (tmp_path / "o" / "report.md").exists()


def test_ctrl_c_in_any_command_exits_130(monkeypatch) -> None:
    # click's own handling printed 'Aborted!' and exited 1.
    import tcplab.api

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(tcplab.api, "_run", interrupted)
    r = CliRunner().invoke(main, ["run", EXAMPLE])
    assert (r.exit_code, r.output) == (130, "interrupted.\n")


def test_the_summary_gives_the_pages_and_the_switch_ports() -> None:
    """A run of web pages or over an ATM switch port says how they fared
    below the tables (the pages and ports were only in --json)."""
    root = Path(__file__).resolve().parent.parent / "examples"
    r = CliRunner().invoke(main, ["run", str(root / "web-pages.toml")])
    assert r.exit_code == 0, r.output
    res = tcplab.run(str(root / "web-pages.toml"))
    done = res.pages[res.pages.completed.astype(bool)].delay_s
    assert (len(res.pages), len(done), round(done.median(), 3)) == (124, 120, 0.858)
    assert "Pages: 124 of 8 application(s), 120 completed; delay median 0.858 s, quartiles 0.717-1.031 s\n" in r.output
    r = CliRunner().invoke(main, ["run", str(root / "atm-ubr.toml")])
    assert r.exit_code == 0, r.output
    port = tcplab.run(str(root / "atm-ubr.toml")).ports.iloc[0]
    assert (port.frames, port.early_drops, port.ppd_frames, port.dropped_cells, port.wasted_cells) == (93315, 5946, 9, 135746, 102)
    assert "Port r0→r1 (sd, 1,062 cells): 93,315 frames, 5,946 refused early, 9 cut (PPD); cells 135,746 dropped, 102 wasted\n" in r.output
    r = CliRunner().invoke(main, ["run", str(root / "dumbbell-bulk.toml")])
    assert "Pages" not in r.output and "Port" not in r.output


@pytest.mark.parametrize("example", sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.toml")), ids=lambda p: p.stem)
def test_every_command_an_example_suggests_runs(example, tmp_path, monkeypatch) -> None:
    """Each example's header lists commands to run it and vary it: each runs
    (exit 0), and a figure it asks for is written."""
    import shlex

    commands = [shlex.split(line[1:].split("  #")[0]) for line in example.read_text().splitlines() if line.startswith("#   tcplab ")]
    assert commands, "the header suggests no command"
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        argv = [str(example) if a == f"examples/{example.name}" else a for a in argv[1:]]
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 0, (argv, r.output)
        if "-o" in argv:
            assert (tmp_path / argv[argv.index("-o") + 1]).stat().st_size > 10_000, argv


def test_out_writes_every_table_and_a_scenario_file_that_runs_again_to_the_same_results(tmp_path) -> None:
    import pandas as pd

    args = ["--set", "tcp.iw=4", "--seed", "7"]
    r = CliRunner().invoke(main, ["run", EXAMPLE, "--json", *args, "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    files = ["flows.csv", "links.csv", "pages.csv", "traces.csv", "web100.csv", "ports.csv", "packets.csv", "engine.json", "scenario.toml"]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == sorted(files)
    assert r.stderr.strip() == f"wrote 9 files into {tmp_path / 'o'}: " + ", ".join(files)
    doc = json.loads(r.stdout)
    res = tcplab.run(EXAMPLE, overrides={"tcp.iw": 4}, seed=7)
    # Each table file is the run's table; an empty one keeps its columns.
    for name in ("flows", "links", "pages", "ports"):
        assert (tmp_path / "o" / f"{name}.csv").read_text() == getattr(res, name).to_csv(index=False)
    assert pd.read_csv(tmp_path / "o" / "links.csv").departures.tolist() == [row["departures"] for row in doc["links"]]
    assert (tmp_path / "o" / "pages.csv").read_text().splitlines() == ["id,app,start_s,end_s,delay_s,objects,bytes,completed"]
    engine = json.loads((tmp_path / "o" / "engine.json").read_text())
    assert without_wall_clock(engine) == without_wall_clock(doc["engine"])
    # The scenario file holds the fields as given, --set and --seed applied, and runs to the same results.
    again = CliRunner().invoke(main, ["run", str(tmp_path / "o" / "scenario.toml"), "--json"])
    assert again.exit_code == 0, again.output
    doc2 = json.loads(again.stdout)
    for d in (doc, doc2):
        d["engine"] = without_wall_clock(d["engine"])
    assert doc2 == doc and doc2["seed"] == 7 and {f["iw"] for f in doc2["flows"]} == {4}


def test_out_in_parquet_reads_back_as_the_runs_tables(tmp_path) -> None:
    import pandas as pd

    r = CliRunner().invoke(main, ["run", EXAMPLE, "--out", str(tmp_path), "--format", "parquet"])
    assert r.exit_code == 0, r.output
    res = tcplab.run(EXAMPLE)
    for name in ("flows", "links", "traces"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"{name}.parquet"), getattr(res, name))


@pytest.mark.parametrize("golden", ["example-web-pages", "example-atm-ubr", "example-wireless-bursts", "red", "traces", "bursts", "local-congestion-web100"])
def test_a_runs_scenario_file_runs_to_the_same_results(golden, tmp_path) -> None:
    from tests.golden_cases import cases

    res = tcplab.run(cases()[golden])
    (tmp_path / "s.toml").write_text(res.scenario_toml())
    again = tcplab.run(tmp_path / "s.toml")
    assert again.scenario == res.scenario
    a, b = json.loads(res.to_json()), json.loads(again.to_json())
    for d in (a, b):
        d["engine"] = without_wall_clock(d["engine"])
    assert a == b


def test_format_without_out_and_out_at_a_file_are_refused(tmp_path) -> None:
    r = CliRunner().invoke(main, ["run", EXAMPLE, "--format", "parquet"])
    assert r.exit_code == 2 and "error: --format parquet: writes the tables given --out DIR; add --out DIR" in r.output
    (tmp_path / "f").write_text("")
    r = CliRunner().invoke(main, ["run", EXAMPLE, "--out", str(tmp_path / "f")])
    assert r.exit_code == 2 and f"error: --out '{tmp_path / 'f'}': is a file; expected a directory (made if missing)" in r.output
    r = CliRunner().invoke(main, ["run", EXAMPLE, "--out", str(tmp_path / "o"), "--format", "xlsx"])
    assert r.exit_code == 2 and "'xlsx' is not one of 'csv', 'parquet'" in r.output


def test_analyze_says_which_factors_its_table_pools_over(tmp_path, monkeypatch) -> None:
    """A goyal98 store analyzed by flavour, buffer and policy put its three
    link types into the error term, which nothing said. Levels come in the
    order the tables give them (numbers by value, names as the sweep file
    lists them)."""
    (tmp_path / "base.toml").write_text('[sim]\nduration = "5s"\n[topology]\ntype = "dumbbell"\n'
                                        '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "100kB"\n')  # fmt: skip
    (tmp_path / "sw.toml").write_text('[sweep]\nscenario = "base.toml"\nreplications = 2\n[factors]\n"tcp.iw" = [4, 1]\n"tcp.cc" = ["sack", "reno"]\n')
    store = str(tmp_path / "s.duckdb")
    assert CliRunner().invoke(main, ["sweep", str(tmp_path / "sw.toml"), "--store", store, "-q", "--jobs", "1"]).exit_code == 0
    for args, note in [
        (["--by", "iw"], "note: pooled over tcp.cc (sack, reno): each row mixes runs at all of those levels"),
        (["--anova", "--factors", "iw"], "note: pooled over tcp.cc (sack, reno): their variation is in the error term"),
        ([], "note: pooled over tcp.cc (sack, reno); tcp.iw (1, 4): each row mixes runs at all of those levels"),
        (["--by", "iw,cc"], None),
        (["--anova", "--factors", "cc,iw"], None),
    ]:
        r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", *args])
        assert r.exit_code == 0, r.output
        assert r.stderr == (f"{note}\n" if note else ""), args
    # A store's figure says it on the figure.
    from tcplab import plots

    drawn: list = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path, dpi=None: drawn.append(fig) or path)
    plots.store_plot(store, "iw", "fct_s", tmp_path / "a.png")
    plots.store_plot(store, "iw", "fct_s", tmp_path / "b.png", hue="cc")
    assert [f.axes[0].get_title() for f in drawn] == ["pooled over tcp.cc (sack, reno)", ""]
    # Numeric levels are placed by value, with a tick at each level (IW 1 and 4 had ticks at 1.5, 2.0, ..., 3.5).
    assert [list(f.axes[0].get_xticks()) for f in drawn] == [[1.0, 4.0], [1.0, 4.0]]
    assert [t.get_text() for t in drawn[0].axes[0].get_xticklabels()] == ["1", "4"]


def test_an_allocation_of_variation_of_one_run_per_cell_has_no_intervals_and_valid_json(tmp_path) -> None:
    """One replication leaves the error no degrees of freedom: --json wrote
    the intervals as NaN, which is no JSON, and statsmodels' RuntimeWarnings
    went to stderr."""
    (tmp_path / "base.toml").write_text('[sim]\nduration = "5s"\n[topology]\ntype = "dumbbell"\n'
                                        '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "100kB"\n')  # fmt: skip
    (tmp_path / "sw.toml").write_text('[sweep]\nscenario = "base.toml"\nreplications = 1\n[factors]\n"tcp.iw" = [1, 4]\n')
    store = str(tmp_path / "s.duckdb")
    assert CliRunner().invoke(main, ["sweep", str(tmp_path / "sw.toml"), "--store", store, "-q", "--jobs", "1"]).exit_code == 0
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--anova", "--factors", "iw", "--json"])
    assert r.exit_code == 0 and r.stderr == ""
    doc = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} is no JSON"))
    assert [(e["level"], e["lo"], e["hi"]) for e in doc["effects"]] == [("1", None, None), ("4", None, None)]
    assert [(v["term"], v["df"]) for v in doc["variation"]] == [("tcp.iw", 1), ("error", 0)]
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--anova", "--factors", "iw"])
    assert r.exit_code == 0 and r.stderr == ""
    assert r.stdout.endswith("  —: with one run per configuration the error has no degrees of freedom, so no interval\n")
    # Per configuration, --json gives the store's numbers in full (pandas'
    # to_json kept 10 significant digits).
    from tcplab.store import Store

    with Store(store, read_only=True) as st:
        power = st.metric_table("power").sort_values("tcp.iw").power.tolist()
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "power", "--by", "iw", "--json"])
    assert r.exit_code == 0 and r.stderr == ""
    assert [(x["tcp.iw"], x["mean"], x["mean_lo"]) for x in json.loads(r.stdout)] == [(1, power[0], None), (4, power[1], None)]
    assert any(float(f"{v:.10g}") != v for v in power), power  # a value 10 digits do not hold


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["run", EXAMPLE, "--json"], ["run", EXAMPLE], ["--help"], ["run", "--help"]], ids=" ".join)
def test_output_that_cannot_be_written_to_stdout_ends_with_an_error_not_a_traceback(args: list[str]) -> None:
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "tcplab.cli", *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert r.returncode == 1
    assert r.stderr == "error: cannot write the output: No space left on device\n"
