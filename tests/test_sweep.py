"""Sweeps: resumption after SIGKILL, backend equivalence, bad sweep files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from tcplab.runner import run_sweep
from tcplab.sweep import derive_seed, load_sweep, sweep_from_configs

BASE = """
[sim]
duration = "{duration}"
[topology]
type = "dumbbell"
left = 3
right = 3
[topology.bottleneck]
rate = "2Mbps"
delay = "20ms"
queue = "10pkt"
[topology.left_access]
rate = "10Mbps"
[topology.right_access]
rate = "10Mbps"
[tcp]
window = "20pkt"
rto_min = "200ms"
[[apps]]
type = "repeat"
name = "a"
src = "s0"
dst = "k0"
size = "50kB"
think = {{ type = "exponential", mean = "1s" }}
[[apps]]
type = "repeat"
name = "b"
src = "s1"
dst = "k1"
size = "50kB"
think = {{ type = "uniform", min = "0.5s", max = "1.5s" }}
[[apps]]
type = "bulk"
name = "c"
src = "s2"
dst = "k2"
size = "inf"
"""


def _ctrl_c_heard() -> None:
    """In a child about to run a sweep: SIGINT as a terminal delivers it,
    even when these tests run in the background, where the shell has the
    children ignore it (Python then installs no handler for it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_sweep(tmp: Path, *, duration: str = "20s", reps: int = 2, factors: str | None = None, store: str = "results.duckdb") -> Path:
    (tmp / "base.toml").write_text(BASE.format(duration=duration))
    factors = factors or '"tcp.cc" = ["reno", "sack"]\n"tcp.iw" = [1, 2, 4]'
    p = tmp / "sweep.toml"
    p.write_text(f'[sweep]\nscenario = "base.toml"\nreplications = {reps}\nseed = 3\nstore = "{tmp / store}"\n\n[factors]\n{factors}\n')
    return p


def snapshot(store: Path) -> dict[str, pd.DataFrame]:
    """Every table, sorted, without the machine's wall-clock fields."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        out = {}
        for t in sorted(tables):
            df = con.execute(f"SELECT * FROM {t}").df()
            df = df.drop(columns=[c for c in ("wall_s",) if c in df.columns])
            out[t] = df.sort_values(list(df.columns)).reset_index(drop=True)
        return out
    finally:
        con.close()


def assert_same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    assert a.keys() == b.keys()
    for t in a:
        pd.testing.assert_frame_equal(a[t], b[t], check_dtype=False, obj=t)


def test_sweep_expands_factorial_with_common_seeds(tmp_path) -> None:
    sw = load_sweep(write_sweep(tmp_path, reps=3))
    assert len(sw.runs) == 2 * 3 * 3
    assert len({r.run_id for r in sw.runs}) == 18
    assert {r.seed for r in sw.runs if r.rep == 1} == {derive_seed(3, 1)}
    assert sw.factor_names == ["tcp.cc", "tcp.iw"]


def test_a_point_that_leaves_a_factor_unset_is_labelled_with_the_bases_value(tmp_path) -> None:
    (tmp_path / "base.toml").write_text(BASE.format(duration="20s"))
    p = tmp_path / "points.toml"
    p.write_text('[sweep]\nscenario = "base.toml"\ndesign = "points"\n\n'
                 '[[points]]\n"tcp.cc" = "sack"\n"tcp.iw" = 4\n\n'
                 '[[points]]\n"tcp.iw" = 2\n\n'
                 '[[points]]\n"tcp.cc" = "newreno"\n"topology.bottleneck.queue" = "30pkt"\n')  # fmt: skip
    sw = load_sweep(p)
    assert sw.factor_names == ["tcp.cc", "tcp.iw", "topology.bottleneck.queue"]
    # tcp.cc and tcp.iw are the defaults (the base leaves them unset); the
    # queue is as the base writes it.
    assert [r.factors for r in sw.runs] == [
        {"tcp.cc": "sack", "tcp.iw": 4, "topology.bottleneck.queue": "10pkt"},
        {"tcp.cc": "reno", "tcp.iw": 2, "topology.bottleneck.queue": "10pkt"},
        {"tcp.cc": "newreno", "tcp.iw": 1, "topology.bottleneck.queue": "30pkt"},
    ]


def test_jobs_1_and_2_and_dask_give_identical_stores(tmp_path) -> None:
    from distributed import LocalCluster

    path = write_sweep(tmp_path, reps=2)
    run_sweep(load_sweep(path, str(tmp_path / "j1.duckdb")), jobs=1, progress=False)
    run_sweep(load_sweep(path, str(tmp_path / "j2.duckdb")), jobs=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        rep = run_sweep(load_sweep(path, str(tmp_path / "dask.duckdb")), backend="dask", scheduler=cluster.scheduler_address, progress=False)
    assert rep.done == 12 and rep.failed == 0
    one = snapshot(tmp_path / "j1.duckdb")
    assert len(one["runs"]) == 12 and len(one["flows"]) > 12
    assert_same(one, snapshot(tmp_path / "j2.duckdb"))
    assert_same(one, snapshot(tmp_path / "dask.duckdb"))


def test_runs_handed_to_workers_in_tasks_of_several_give_the_store_of_one_process(tmp_path, monkeypatch) -> None:
    """Once the first runs have finished, the pool hands short runs out several
    at a time (here up to 5 a task); the store is the one a single process writes."""
    from concurrent.futures import ProcessPoolExecutor

    import tcplab.runner as runner

    sizes: list[int] = []

    class Counting(ProcessPoolExecutor):
        def submit(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
            sizes.append(len(args[0]))
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(runner, "ProcessPoolExecutor", Counting)
    monkeypatch.setattr(runner, "TASK_S", 100.0)
    monkeypatch.setattr(runner, "TASK_MAX_RUNS", 5)
    path = write_sweep(tmp_path, duration="1s", reps=6)
    rep = run_sweep(load_sweep(path, str(tmp_path / "j2.duckdb")), jobs=2, progress=False)
    assert (rep.done, rep.failed) == (36, 0)
    assert sum(sizes) == 36 and sizes[:16] == [1] * 16 and max(sizes) == 5
    run_sweep(load_sweep(path, str(tmp_path / "j1.duckdb")), jobs=1, progress=False)
    assert_same(snapshot(tmp_path / "j1.duckdb"), snapshot(tmp_path / "j2.duckdb"))


def test_a_failed_run_in_a_task_of_several_fails_alone(tmp_path) -> None:
    from tcplab.sweep import execute, execute_many

    good = load_sweep(write_sweep(tmp_path, duration="1s", reps=1, factors='"tcp.iw" = [1]')).runs[0].core_json
    (bad, error), (payload, none) = execute_many(["{not json", good])
    assert bad is None and error is not None and error == "ScenarioError: invalid scenario: scenario: key must be a string at line 1 column 2"
    assert none is None and payload is not None and json.dumps(payload["metrics"]) == json.dumps(execute(good)["metrics"])


def test_a_sweep_whose_runs_fail_exits_1_naming_the_first_failure(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TCPLAB_DEBUG_PANIC", "1")  # each run's core panics (the check before any run does not run it)
    path = write_sweep(tmp_path, duration="1s", reps=1, factors='"tcp.iw" = [1, 2]')
    r = CliRunner().invoke(main, ["sweep", str(path), "-q", "-j", "1"])
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"sweep: 0 runs done, 0 already stored, 2 failed, of 2; store {tmp_path / 'results.duckdb'}"
    assert lines[1].startswith("the first failure: InternalError: internal error in the simulator (a bug in tcplab, please report it): "
                               "TCPLAB_DEBUG_PANIC is set: a deliberate panic; seed ")


def test_a_worker_runs_without_the_scenario_models_or_the_store(tmp_path) -> None:
    """A pool's worker imports tcplab.worker for its initializer and tasks, and a run
    there needs neither pydantic (the scenario models) nor duckdb (the store): each
    would cost every worker of every sweep a fraction of a second before its first run."""
    good = load_sweep(write_sweep(tmp_path, duration="1s", reps=1, factors='"tcp.iw" = [1]')).runs[0].core_json
    (tmp_path / "core.json").write_text(good)
    code = ("import sys, json; from tcplab.worker import die_with_parent, execute_many; "
            f"[(p, e)] = execute_many([open({str(tmp_path / 'core.json')!r}).read()]); "
            "print(json.dumps([e, sorted(m for m in ('pydantic', 'duckdb', 'tcplab.scenario', 'tcplab.store', 'rich') if m in sys.modules), p['metrics']]))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    error, imported, metrics = json.loads(out)
    from tcplab.sweep import execute

    assert error is None and imported == [] and json.dumps(metrics) == json.dumps(execute(good)["metrics"])


def test_each_replications_core_json_is_its_scenario_written_whole(tmp_path) -> None:
    """A run's core JSON (put together around its seed from the other values,
    written once) is the core form with the run's seed written in one piece,
    keys sorted and no spaces, and its run id that text's hash."""
    import hashlib

    from tcplab.studies import goyal98
    from tcplab.sweep import sweep_from_configs

    configs = goyal98.scenarios(quick=True)[:2]
    sw = sweep_from_configs("x", str(tmp_path / "s.duckdb"), configs, 3)
    assert len(sw.runs) == 6 and len({r.seed for r in sw.runs}) == 3
    for i, r in enumerate(sw.runs):  # a configuration's replications one after another
        assert r.rep == i % 3
        whole = json.dumps({**tcplab.load(configs[i // 3][1]).to_core(), "seed": r.seed}, sort_keys=True, separators=(",", ":"))
        assert r.core_json == whole and r.run_id == hashlib.sha256(whole.encode()).hexdigest()[:16]


def test_resume_after_sigkill(tmp_path) -> None:
    path = write_sweep(tmp_path, duration="60s", reps=4)
    total = len(load_sweep(path).runs)
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--jobs", "1", "-q", "-v"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True)
    stored = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        stored += line.startswith("stored ")
        if stored == 5:
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    kept = len(snapshot(tmp_path / "results.duckdb")["runs"])
    assert 5 <= kept < total
    # The rerun does only the missing runs.
    again = subprocess.run(cmd[:-1], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert f"{total - kept} runs done, {kept} already stored, 0 failed, of {total}" in again.stdout
    # And the store equals that of an uninterrupted sweep.
    run_sweep(load_sweep(path, str(tmp_path / "clean.duckdb")), jobs=1, progress=False)
    assert_same(snapshot(tmp_path / "results.duckdb"), snapshot(tmp_path / "clean.duckdb"))


def test_ctrl_c_keeps_every_finished_run(tmp_path) -> None:
    """Ctrl-C stops a sweep with exit status 130, and the runs it reported
    stored, and any others that had finished, are in the store: rerunning
    does only the rest, and the store ends as an uninterrupted sweep's."""
    path = write_sweep(tmp_path, duration="60s", reps=4)
    total = len(load_sweep(path).runs)
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--jobs", "1", "-q", "-v"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ctrl_c_heard)
    reported = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        reported += line.startswith("stored ")
        if reported == 3:
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate()
    reported += sum(line.startswith("stored ") for line in out.splitlines())
    assert proc.returncode == 130, err
    assert "interrupted." in err and "Run the same command to resume." in err
    kept = len(snapshot(tmp_path / "results.duckdb")["runs"])
    assert 3 <= reported <= kept < total
    again = subprocess.run(cmd[:-1], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert f"{total - kept} runs done, {kept} already stored, 0 failed, of {total}" in again.stdout
    run_sweep(load_sweep(path, str(tmp_path / "clean.duckdb")), jobs=1, progress=False)
    assert_same(snapshot(tmp_path / "results.duckdb"), snapshot(tmp_path / "clean.duckdb"))


def test_ctrl_c_inside_a_store_statement_stops_the_sweep_cleanly(tmp_path, monkeypatch) -> None:
    """DuckDB turns a SIGINT that arrives during one of its statements into
    its own error ("Query interrupted", or a failed function), which ended a
    sweep with a traceback. Here Ctrl-C comes while a store write runs a
    statement, sent by a function the statement calls (so it lands inside
    the statement whatever the machine's load; with Python's own handler the
    statement fails): the sweep stops as after any Ctrl-C, with the batch
    written."""
    from tcplab.store import Store

    path = write_sweep(tmp_path, reps=2)
    total = len(load_sweep(path).runs)
    real_write = Store.write_runs
    calls = []

    def sigint_now(x: int) -> int:
        os.kill(os.getpid(), signal.SIGINT)
        return x

    def write_runs(self, sweep, done, traces):
        calls.append(len(done))
        if len(calls) == 2:
            self.con.create_function("sigint_now", sigint_now)
            assert self.con.execute("SELECT sigint_now(42)").fetchall() == [(42,)]
        return real_write(self, sweep, done, traces)

    monkeypatch.setattr(Store, "write_runs", write_runs)
    monkeypatch.setattr("tcplab.runner.WRITE_AT_RUNS", 1)
    # Python's own handler, as in a terminal: a process started in the
    # background by a non-interactive shell inherits SIGINT ignored.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        rep = run_sweep(load_sweep(path), jobs=1, progress=False)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert rep.interrupted and (rep.done, rep.failed) == (2, 0) and calls == [1, 1]
    assert len(snapshot(tmp_path / "results.duckdb")["runs"]) == 2 < total


def test_workers_die_with_a_killed_sweep(tmp_path) -> None:
    import time

    import psutil

    path = write_sweep(tmp_path, duration="600s", reps=4)
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--jobs", "2", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers: list[psutil.Process] = []
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            workers = parent.children(recursive=True)
            if len(workers) >= 2:
                break
            time.sleep(0.1)
        assert len(workers) >= 2, "the sweep's workers did not start"
        time.sleep(1.0)
        workers = parent.children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)  # the sweep alone, not its process group
        proc.wait()
        _, alive = psutil.wait_procs(workers, timeout=5)
        assert not alive, f"{len(alive)} worker(s) outlived the sweep by 5 s"
    finally:
        proc.kill()
        for p in workers:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


@pytest.mark.parametrize(
    "factors,message",
    [
        ('"tcp.iww" = [1, 2]', "tcp.iww: unknown field"),
        ('"tcp.iw" = []', "factors.tcp.iw: has no levels; give at least one"),
        ('"tcp.iw" = [1, 0]', "factors (tcp.iw=0): tcp.iw = 0: expected an initial window"),
        ('"topology.bottleneck.rate" = ["1Mbps", "fast"]', "factors (topology.bottleneck.rate='fast'): topology.bottleneck.rate = 'fast'"),
        # Levels that resolve to one scenario would be the same runs (they
        # used to fail when the store met the second copy, with a traceback).
        ('"tcp.iw" = [2, "rfc3390", "4380B"]', "factors (tcp.iw='rfc3390') and factors (tcp.iw='4380B'): these configurations give the same scenario"),
        ('"tcp.iw" = [1, 1]', "factors (tcp.iw=1) and factors (tcp.iw=1): these configurations give the same scenario"),
        ('"topology.bottleneck.queue" = [25, 25.0, "25"]',
         "factors (topology.bottleneck.queue=25) and factors (topology.bottleneck.queue=25.0): these configurations give the same scenario"),
        # A factor's name must be a field (it was reported as a bad --set).
        ('"" = [1, 2]', "error: invalid sweep in {sweep}: factors: '' is not a field; expected a dotted field path such as 'tcp.iw'\n"),
        ('"tcp..iw" = [1, 2]', "error: invalid sweep in {sweep}: factors: 'tcp..iw' is not a field; expected a dotted field path such as 'tcp.iw'\n"),
        # A sweep sets every run's seed: this field would be ignored.
        ('"sim.seed" = [1, 2]', "factors.sim.seed: a sweep gives replication r of every configuration the seed derived from (sweep.seed, r)"),
        # Two factors that set one field: the later would overwrite the
        # earlier's levels (they used to be reported as same-scenario pairs).
        ('"tcp.iw" = [1, 2]\n"tcp" = [{cc = "reno"}, {cc = "sack"}]',
         "error: invalid sweep in {sweep}: factors.tcp.iw and factors.tcp: 'tcp' is a table holding 'tcp.iw', so one would "
         "overwrite the other's levels; vary the field by one of them\n"),
        ('"apps.0.size" = ["1kB", "2kB"]\n"apps[0].size" = ["3kB"]',
         "error: invalid sweep in {sweep}: factors.apps.0.size and factors.apps[0].size: name the same field, so one would "
         "overwrite the other's levels; vary the field by one of them\n"),
        # A check across fields that the core makes: before any run (every
        # run with it used to fail, and the sweep to exit 1 after them all).
        ('"tcp.hystart" = [false, true]',
         "error: invalid sweep in {sweep}: factors (tcp.hystart=True): apps[0].tcp.hystart: is cubic's slow start; cc is 'reno' "
         "(allowed with hystart: cubic)\n"),
    ],
)
def test_bad_sweep_is_refused_before_any_run(tmp_path, factors, message) -> None:
    path = write_sweep(tmp_path, factors=factors)
    r = CliRunner().invoke(main, ["sweep", str(path), "-q"])
    assert r.exit_code == 2, r.output
    assert message.format(sweep=path) in r.output
    assert not (tmp_path / "results.duckdb").exists(), "nothing ran, no store was created"


def test_a_sweep_file_given_to_run_and_a_scenario_given_to_sweep_say_so(tmp_path) -> None:
    path = write_sweep(tmp_path)
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 2
    assert "  - sweep: unknown field; allowed fields here: sim, topology, tcp, apps, losses, trace; this is a sweep file's table: run a sweep file with tcplab sweep FILE\n" in r.output
    r = CliRunner().invoke(main, ["sweep", str(tmp_path / "base.toml")])
    assert r.exit_code == 2
    assert ("  - topology: unknown field; allowed fields here: sweep, base, factors, points; this is a scenario's table: run a scenario with "
            "tcplab run FILE, or name it in sweep.scenario\n") in r.output  # fmt: skip


def test_two_points_of_one_scenario_are_refused(tmp_path) -> None:
    (tmp_path / "base.toml").write_text(BASE.format(duration="20s"))
    p = tmp_path / "points.toml"
    p.write_text('[sweep]\nscenario = "base.toml"\ndesign = "points"\n\n[[points]]\n"tcp.iw" = 2\n\n'
                 '[[points]]\n"tcp.cc" = "sack"\n\n[[points]]\n"tcp.iw" = 1\n"tcp.cc" = "sack"\n')  # fmt: skip
    r = CliRunner().invoke(main, ["sweep", str(p), "-q"])
    assert r.exit_code == 2, r.output
    # The second point leaves tcp.iw at its default, 1: the third point again.
    assert "points[1] (tcp.cc='sack') and points[2] (tcp.iw=1, tcp.cc='sack'): these configurations give the same scenario" in r.output


SCRIPT = """
from tcplab.runner import run_sweep
from tcplab.sweep import load_sweep
{body}
"""


def test_a_script_without_a_main_guard_fails_at_once_with_the_reason(tmp_path) -> None:
    """Workers are spawned, so each imports the script that started the
    sweep again. Unguarded, that script's sweep used to wait 300 s in each
    worker for the store the parent held, then fail with BrokenProcessPool."""
    path = write_sweep(tmp_path, reps=2, duration="2s")
    call = f"run_sweep(load_sweep({str(path)!r}), jobs=2, progress=False)"
    for name, body in (("unguarded.py", call), ("guarded.py", f"if __name__ == '__main__':\n    {call}")):
        (tmp_path / name).write_text(SCRIPT.format(body=body))
    r = subprocess.run([sys.executable, str(tmp_path / "unguarded.py")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "TcplabError: run_sweep was called by a worker process as it started: a script that runs the sweep without" in r.stderr
    assert r.stderr.rstrip().splitlines()[-1].startswith("tcplab.errors.TcplabError: a worker process of the sweep stopped unexpectedly")
    con = duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,), "no run is stored as failed"
    con.close()
    r = subprocess.run([sys.executable, str(tmp_path / "guarded.py")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(snapshot(tmp_path / "results.duckdb")["runs"]) == 12


def test_a_script_read_from_stdin_is_told_its_workers_cannot_import_it(tmp_path) -> None:
    """Spawned workers import the main script again by its path; one read
    from standard input is '<stdin>', so every worker died and the sweep
    said "killed, out of memory, or a script without a main guard"."""
    path = write_sweep(tmp_path, reps=1, duration="1s")
    body = f"if __name__ == '__main__':\n    run_sweep(load_sweep({str(path)!r}), jobs={{jobs}}, progress=False)\n    print('done')"
    for jobs in (2, 1):
        r = subprocess.run([sys.executable, "-"], input=SCRIPT.format(body=body.format(jobs=jobs)), capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)  # fmt: skip
        if jobs == 2:
            assert r.returncode == 1 and r.stderr.rstrip().splitlines()[-1] == (
                "tcplab.errors.TcplabError: the script that runs the sweep has no file its workers could import ('<stdin>'): "
                "each worker imports the script again, as multiprocessing's spawn method does; save the script as a file, "
                "or run the sweep with one job (jobs=1, --jobs 1), which runs in this process")
        else:  # in this process: no worker to import anything
            assert (r.returncode, r.stdout) == (0, "done\n"), r.stderr


def test_a_sweep_built_in_code_refuses_one_scenario_twice(tmp_path) -> None:
    from tcplab.errors import SweepError
    from tcplab.sweep import sweep_from_configs

    pair = ({"a": 1}, {"topology": {"type": "dumbbell"}, "apps": [{"type": "bulk", "src": "s0", "dst": "k0"}]})
    with pytest.raises(SweepError, match=r"^invalid sweep in x: configuration \(a=1\) and configuration \(a=1\): these configurations give"):
        sweep_from_configs("x", str(tmp_path / "s.duckdb"), [pair, pair], 2)


def test_a_study_shares_the_runs_of_configurations_that_resolve_alike(tmp_path) -> None:
    """A study's sensitivity rows leave some configurations as they were
    (rfc2415's "one connection for all FTP files" in the rows without FTPs):
    those share their runs, simulated and stored once, and each
    configuration finds its run by id. Refusing them, as a sweep file's
    twins are, stopped `tcplab reproduce rfc2415` (full) at its sensitivity runs."""
    from tcplab.studies.common import run_configs

    doc = {"sim": {"duration": "2s"}, "topology": {"type": "dumbbell"}, "apps": [{"type": "bulk", "src": "s0", "dst": "k0", "size": "50kB"}]}
    other = {**doc, "tcp": {"iw": 4}}
    configs = [({"variant": 0}, doc), ({"variant": 1}, other), ({"variant": 2}, doc)]
    run = run_configs("x", configs, 2, True, tmp_path, 1, False)
    assert (run.runs, run.skipped) == (6, 2)
    ids = run.run_ids
    assert ids[0:2] == ids[4:6] and len(set(ids)) == 4
    con = duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True)
    assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone() == (4, 4)
    assert con.execute("SELECT count(*) FROM sweep_runs").fetchone() == (6,)
    con.close()


def test_an_unreachable_scheduler_is_an_error_not_a_traceback(tmp_path) -> None:
    import dask

    path = write_sweep(tmp_path, reps=1, duration="2s")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        r = CliRunner().invoke(main, ["sweep", str(path), "-q", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1"])
    assert r.exit_code == 1, r.output
    assert r.output.startswith("error: --scheduler 'tcp://127.0.0.1:1': cannot reach a Dask scheduler there: Timed out trying to connect")


def test_bad_sweep_section(tmp_path) -> None:
    p = tmp_path / "s.toml"
    p.write_text('[sweep]\nscenario = "x.toml"\nreplication = 3\n')
    r = CliRunner().invoke(main, ["sweep", str(p)])
    assert r.exit_code == 2 and "sweep.replication: unknown field; allowed fields here: name, scenario, replications" in r.output
    # Bad values are named with the value and what is allowed, as a scenario's are.
    p.write_text('[sweep]\nscenario = "x.toml"\nreplications = 0\nseed = "one"\ndesign = "grid"\n[factors]\n"tcp.iw" = 1\n')
    r = CliRunner().invoke(main, ["sweep", str(p)])
    assert r.exit_code == 2
    assert r.output.splitlines()[1:] == [
        "  - sweep.replications = 0: out of range: at least 1",
        "  - sweep.seed = 'one': expected a whole number",
        "  - sweep.design = 'grid': not allowed; allowed values: 'factorial' or 'points'",
        "  - factors.tcp.iw = 1: expected a list",
    ]
    (tmp_path / "sub").mkdir()
    p = tmp_path / "sub" / "s.toml"
    p.write_text('[sweep]\nscenario = "x.toml"\n[factors]\n"tcp.iw" = [1]\n')
    r = CliRunner().invoke(main, ["sweep", str(p)])
    assert r.exit_code == 2
    assert f"error: invalid sweep in {p}: sweep.scenario = 'x.toml': no such file: {tmp_path / 'sub' / 'x.toml'} (a path relative to the sweep file)" in r.output
    # A sweep file named as the scenario (its tables were reported as unknown scenario fields).
    (tmp_path / "sub" / "x.toml").write_text('[sweep]\nscenario = "base.toml"\n[factors]\n"tcp.iw" = [1]\n')
    r = CliRunner().invoke(main, ["sweep", str(p)])
    assert r.exit_code == 2
    assert r.output == f"error: invalid sweep in {p}: sweep.scenario = 'x.toml': is a sweep file; name the scenario file its sweep varies\n"


def test_analyze_export_and_plot_from_the_store(tmp_path) -> None:
    path = write_sweep(tmp_path, reps=3)
    run_sweep(load_sweep(path), jobs=2, progress=False)
    store = str(tmp_path / "results.duckdb")
    r = CliRunner().invoke(main, ["analyze", store, "--by", "cc,iw", "--metric", "fct_s", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert len(rows) == 6 and all(row["n"] == 3 for row in rows)
    assert all(row["mean_lo"] <= row["mean"] <= row["mean_hi"] for row in rows)
    assert all(row["q1"] <= row["median"] <= row["q3"] for row in rows)
    r = CliRunner().invoke(main, ["analyze", store, "--anova", "--factors", "cc,iw", "--metric", "goodput_bps", "--json"])
    doc = json.loads(r.output)
    assert sum(v["fraction"] for v in doc["variation"]) == pytest.approx(1.0)
    r = CliRunner().invoke(main, ["analyze", store, "--by", "cc", "--metric", "nope"])
    assert r.exit_code == 2 and r.output.startswith("error: --metric 'nope': unknown metric; allowed:")
    # plot names the option the metric came by.
    r = CliRunner().invoke(main, ["plot", store, "--x", "cc", "--y", "nope", "-o", str(tmp_path / "f.png")])
    assert r.exit_code == 2 and r.output.startswith("error: --y 'nope': unknown metric; allowed:")
    r = CliRunner().invoke(main, ["analyze", store, "--by", "cc", "--metric", "page_delay_s"])  # the sweep has no web pages
    assert r.exit_code == 2 and r.output.endswith("(s)): no run of sweep sweep has a value\n")
    r = CliRunner().invoke(main, ["export", store, "--format", "parquet", "--out", str(tmp_path / "pq")])
    assert r.exit_code == 0
    flows = pd.read_parquet(tmp_path / "pq" / "flows.parquet")
    assert len(flows) == len(snapshot(tmp_path / "results.duckdb")["flows"])
    # A quote in the directory's name reaches DuckDB's COPY quoted; a file
    # where the directory goes, or a directory that cannot be made, is an error.
    r = CliRunner().invoke(main, ["export", store, "--format", "csv", "--out", str(tmp_path / "it's")])
    assert r.exit_code == 0, r.output
    assert len(pd.read_csv(tmp_path / "it's" / "flows.csv")) == len(flows)
    if Path("/dev/full").exists():  # a file that cannot be written: DuckDB's error as the OSError pandas would raise
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "factors.csv").symlink_to("/dev/full")
        r = CliRunner().invoke(main, ["export", store, "--format", "csv", "--out", str(tmp_path / "full")])
        assert r.exit_code == 1 and r.output == f"error: cannot write {tmp_path / 'full' / 'factors.csv'}: No space left on device\n"
    (tmp_path / "afile").write_text("")
    r = CliRunner().invoke(main, ["export", store, "--out", str(tmp_path / "afile")])
    assert r.exit_code == 2 and r.output == f"error: --out '{tmp_path / 'afile'}': is a file; expected a directory (made if missing)\n"
    r = CliRunner().invoke(main, ["export", store, "--out", str(tmp_path / "afile" / "sub")])
    assert r.exit_code == 2 and r.output == f"error: --out '{tmp_path / 'afile' / 'sub'}': cannot create the directory: Not a directory\n"
    # From Python: '' wrote every table into the working directory, an
    # unknown format was DuckDB's CatalogException, a file a FileExistsError.
    from tcplab.store import Store

    with Store(store, read_only=True) as st:
        for args, message in [(("", "csv"), "out_dir = '': expected a directory's path (made if missing)"),
                              ((tmp_path / "xl", "xlsx"), "fmt = 'xlsx': expected 'csv' or 'parquet'"),
                              ((tmp_path / "afile", "csv"), f"out_dir = '{tmp_path / 'afile'}': is a file; expected a directory (made if missing)")]:  # fmt: skip
            with pytest.raises(tcplab.UsageError) as e:
                st.export(*args)
            assert str(e.value) == f"invalid argument: {message}"
        assert not (tmp_path / "xl").exists()
    r = CliRunner().invoke(main, ["plot", store, "--x", "iw", "--y", "fct_s", "--hue", "cc", "--out", str(tmp_path / "f.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    # Bad arguments name themselves (not as a scenario's), and a factor is
    # chosen among the sweep's factors (the metric is none of them).
    for args, message in (
        (["--x", "iw", "--y", "fct_s", "--stat", "mode"], "error: invalid argument: --stat = 'mode': allowed: mean, median\n"),
        (["--x", "iw", "--y", "fct_s", "--out", "f.jpg"], "error: invalid argument: --out = 'f.jpg': unknown figure format; allowed: .png, .svg, .pdf\n"),
        (["--x", "fct_s", "--y", "fct_s"], "error: --x 'fct_s': unknown factor; the store's factors: tcp.cc, tcp.iw\n"),
        (["--x", "iw", "--y", "fct_s", "--hue", "queue"], "error: --hue 'queue': unknown factor; the store's factors: tcp.cc, tcp.iw\n"),
        (["--x", "iw", "--y", "fct_s", "--hue", "tcp.iw"], "error: invalid argument: --hue = 'tcp.iw': names tcp.iw, the --x factor; give another factor, or no --hue\n"),
    ):
        r = CliRunner().invoke(main, ["plot", store, "--out", str(tmp_path / "g.png"), *args])
        assert (r.exit_code, r.output) == (2, message)
    # A factor named twice (they used to end in a pandas traceback, or a
    # table with the column twice).
    for args, message in (
        (["--anova", "--factors", "cc,iw,tcp.cc"], "error: --factors: 'tcp.cc' names tcp.cc, which 'cc' named already; give each factor once\n"),
        (["--by", "iw,iw"], "error: --by: 'iw' names tcp.iw, which 'iw' named already; give each factor once\n"),
        # An unknown factor names the option that gave it.
        (["--by", "cc,foo"], "error: --by 'foo': unknown factor; the store's factors: tcp.cc, tcp.iw\n"),
        (["--anova", "--factors", "cc,bar"], "error: --factors 'bar': unknown factor; the store's factors: tcp.cc, tcp.iw\n"),
    ):
        r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", *args])
        assert (r.exit_code, r.output) == (2, message)


def test_where_takes_the_runs_at_a_factors_levels(tmp_path) -> None:
    """--where FACTOR=LEVEL: analyze and plot a part of a sweep (iw10's HSPA
    runs, goyal98's WAN ones), with the same numbers the whole sweep's
    table has for those runs, and no pooled note for the factor fixed."""
    path = write_sweep(tmp_path, reps=2, duration="5s")
    run_sweep(load_sweep(path), jobs=2, progress=False)
    store = str(tmp_path / "results.duckdb")
    code, out, _ = _analyze(store, "--by", "cc,iw")
    whole = {(r["tcp.cc"], r["tcp.iw"]): r for r in json.loads(out)}
    code, out, err = _analyze(store, "--by", "iw", "--where", "cc=sack")
    assert (code, err) == (0, "")
    assert json.loads(out) == [{k: v for k, v in whole[("sack", iw)].items() if k != "tcp.cc"} for iw in (1, 2, 4)]
    # A number by value, and a factor given twice takes either level.
    code, out, err = _analyze(store, "--by", "cc,iw", "--where", "iw=1.0", "--where", "tcp.iw=4")
    assert code == 0 and [(r["tcp.cc"], r["tcp.iw"]) for r in json.loads(out)] == [("reno", 1), ("reno", 4), ("sack", 1), ("sack", 4)]
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--by", "iw", "--where", "cc=reno"])
    assert r.exit_code == 0 and r.output.startswith("fct_s by tcp.iw, where cc=reno (95% CIs)")
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--anova", "--factors", "iw", "--where", "cc=reno"])
    assert r.exit_code == 0 and r.output.startswith("Allocation of variation of fct_s, where cc=reno (grand mean ")
    for args, message in (
        (["--where", "cc"], "error: --where 'cc': expected FACTOR=LEVEL, such as iw=4 or profile=hspa\n"),
        (["--where", "cc=cubic"], "error: --where 'cc=cubic': tcp.cc has no level 'cubic'; its levels: reno, sack\n"),
        (["--where", "queue=5pkt"], "error: --where 'queue': unknown factor; the store's factors: tcp.cc, tcp.iw\n"),
    ):
        r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--by", "iw", *args])
        assert (r.exit_code, r.output) == (2, message)
    drawn: list = []
    from tcplab import plots

    real = plots.save_figure
    try:
        plots.save_figure = lambda fig, path, dpi=None: drawn.append(fig) or path
        r = CliRunner().invoke(main, ["plot", store, "--x", "iw", "--y", "fct_s", "--where", "cc=sack", "-o", str(tmp_path / "w.png")])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(main, ["plot", store, "--x", "iw", "--y", "fct_s", "-o", str(tmp_path / "w.png")])
        assert r.exit_code == 0, r.output
    finally:
        plots.save_figure = real
    assert [f.axes[0].get_title() for f in drawn] == ["where cc=sack", "pooled over tcp.cc (reno, sack)"]
    sack = [whole[("sack", iw)]["mean"] for iw in (1, 2, 4)]
    assert list(drawn[0].axes[0].lines[0].get_ydata()) == sack
    # A level as the tables show it, a truth value as TOML writes it too, a number by value.
    from tcplab.store import _level_is

    assert [_level_is(v, g) for v, g in ((np.int64(4), "4.0"), (True, "true"), (True, "True"), (0.5, "5e-1"), ("sack", "sack"), ("x", "1"), (2, "two"))] == [
        True, True, True, True, True, False, False]
    r = CliRunner().invoke(main, ["plot", "seq", "examples/fall-floyd-drops.toml", "--where", "cc=sack", "-o", str(tmp_path / "s.png")])
    assert (r.exit_code, r.output) == (2, "error: plot seq: --where does not apply to this figure (it applies to: a results store)\n")


def test_export_of_one_sweep_takes_only_its_runs(tmp_path) -> None:
    """A store of two sweeps (a study's holds its sensitivity variants'):
    `export --sweep NAME` writes that sweep's runs only, in every table."""
    path = write_sweep(tmp_path, reps=1, duration="3s")
    run_sweep(load_sweep(path), jobs=1, progress=False)
    (tmp_path / "other.toml").write_text(path.read_text().replace('"tcp.iw" = [1, 2, 4]', '"tcp.iw" = [3]'))
    run_sweep(load_sweep(tmp_path / "other.toml"), jobs=1, progress=False)
    store = str(tmp_path / "results.duckdb")
    r = CliRunner().invoke(main, ["export", store, "--format", "csv", "--out", str(tmp_path / "o"), "--sweep", "other"])
    assert r.exit_code == 0, r.output
    runs = pd.read_csv(tmp_path / "o" / "runs.csv")
    assert sorted(runs.factors) == ['{"tcp.cc": "reno", "tcp.iw": 3}', '{"tcp.cc": "sack", "tcp.iw": 3}']
    for table in ("flows", "links", "metrics", "factors", "sweep_runs"):
        assert set(pd.read_csv(tmp_path / "o" / f"{table}.csv").run_id) == set(runs.run_id), table
    assert len(pd.read_csv(tmp_path / "o" / "flows.csv")) < len(snapshot(tmp_path / "results.duckdb")["flows"])
    r = CliRunner().invoke(main, ["export", store, "--out", str(tmp_path / "p"), "--sweep", "nope"])
    assert r.exit_code == 2 and r.output == f"error: --sweep 'nope': no such sweep in {store}; its sweeps: other (2 runs), sweep (6 runs)\n"
    assert not (tmp_path / "p").exists()


def test_levels_come_out_in_the_sweeps_order_whatever_their_type(tmp_path) -> None:
    """Levels that are not all numbers (text, a TOML table, numbers mixed
    with text) are grouped, tabled and drawn in the order the sweep file
    lists them; numbers by value. They used to be sorted as text (10pkt
    before 5pkt), and a table level or mixed types failed with a traceback."""
    factors = '"topology.bottleneck.queue" = ["5pkt", "10pkt", { type = "red", limit = "30pkt" }]\n"tcp.iw" = [4, "rfc6928", 2]'
    path = write_sweep(tmp_path, reps=2, duration="4s", factors=factors)
    run_sweep(load_sweep(path), jobs=2, progress=False)
    store = str(tmp_path / "results.duckdb")
    red = '{"limit": "30pkt", "type": "red"}'
    code, out, _ = _analyze(store, "--by", "queue,iw")
    assert code == 0
    assert [(r["topology.bottleneck.queue"], r["tcp.iw"]) for r in json.loads(out)] == [
        (q, iw) for q in ("5pkt", "10pkt", red) for iw in (4, "rfc6928", 2)]
    r = CliRunner().invoke(main, ["analyze", store, "--anova", "--factors", "queue,iw", "--metric", "goodput_bps", "--json"])
    assert r.exit_code == 0, r.output
    assert [(e["term"], e["level"]) for e in json.loads(r.output)["effects"]] == [
        ("topology.bottleneck.queue", "5pkt"), ("topology.bottleneck.queue", "10pkt"), ("topology.bottleneck.queue", red),
        ("tcp.iw", "4"), ("tcp.iw", "rfc6928"), ("tcp.iw", "2")]  # fmt: skip
    for x, hue in (("queue", "iw"), ("iw", "queue")):
        r = CliRunner().invoke(main, ["plot", store, "--x", x, "--y", "fct_s", "--hue", hue, "--out", str(tmp_path / f"{x}.svg")])
        assert r.exit_code == 0, r.output
    svg = (tmp_path / "queue.svg").read_text()
    # The x axis's tick labels, then the legend's entries, in the sweep's order.
    at = [svg.index(f"<!-- {t} -->") for t in ("5pkt", "10pkt", red)]
    assert at == sorted(at)
    at = [svg.index(f"<!-- iw = {t} -->") for t in ("4", "rfc6928", "2")]
    assert at == sorted(at)


def _analyze(store: str, *args: str) -> tuple[int, str, str]:
    """analyze's exit status, its JSON (stdout) and its other lines (stderr)."""
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--json", *args])
    lines = r.output.splitlines()
    return r.exit_code, "".join(x for x in lines if x.startswith("[")), "\n".join(x for x in lines if not x.startswith("["))


def test_analyze_takes_a_sweep_as_it_was_last_run(tmp_path) -> None:
    """An edited sweep file, run again, keeps its earlier runs in the store,
    but analyze counts only the runs of its new definition."""
    path = write_sweep(tmp_path, reps=2, factors='"tcp.iw" = [1, 2]')
    store = str(tmp_path / "results.duckdb")
    run_sweep(load_sweep(path), jobs=2, progress=False)
    (tmp_path / "base.toml").write_text(BASE.format(duration="10s"))
    run_sweep(load_sweep(path), jobs=2, progress=False)
    assert len(snapshot(Path(store))["runs"]) == 8, "the 20 s runs stay in the store"
    code, out, err = _analyze(store, "--by", "iw")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert [(r["tcp.iw"], r["n"]) for r in rows] == [(1, 2), (2, 2)]
    new = {r.run_id for r in load_sweep(path).runs}
    con = duckdb.connect(store, read_only=True)
    want = con.execute("SELECT avg(m.value) FROM metrics m JOIN factors f USING (run_id) WHERE m.metric = 'fct_s' AND f.name = 'tcp.iw' "
                       "AND f.value = '1' AND run_id IN (SELECT unnest(?::VARCHAR[]))", [sorted(new)]).fetchone()[0]  # fmt: skip
    con.close()
    assert rows[0]["mean"] == pytest.approx(want, rel=1e-12)
    # A level taken out of the file leaves the analysis too.
    path.write_text(path.read_text().replace("[1, 2]", "[2]"))
    run_sweep(load_sweep(path), jobs=2, progress=False)
    assert [(r["tcp.iw"], r["n"]) for r in json.loads(_analyze(store, "--by", "iw")[1])] == [(2, 2)]


def test_a_store_of_several_sweeps(tmp_path) -> None:
    """A run two sweeps share is stored once and analyzed under each sweep's
    own factors; with several sweeps, --sweep picks one, and is needed."""
    a = write_sweep(tmp_path, reps=2, factors='"tcp.iw" = [1, 2]')
    run_sweep(load_sweep(a), jobs=2, progress=False)
    b = tmp_path / "b.toml"
    b.write_text(a.read_text().replace("[sweep]", '[sweep]\nname = "ccs"').replace('"tcp.iw" = [1, 2]', '"tcp.cc" = ["reno", "sack"]'))
    rep = run_sweep(load_sweep(b), jobs=2, progress=False)
    assert (rep.skipped, rep.done) == (2, 2), "reno with IW 1 is sweep a's IW-1 run"
    store = str(tmp_path / "results.duckdb")
    assert len(snapshot(Path(store))["runs"]) == 6
    code, out, err = _analyze(store, "--by", "cc")
    assert code == 2 and out == ""
    assert f"error: {store} holds 2 sweeps: ccs (4 runs), sweep (4 runs); choose one with --sweep" in err
    code, out, err = _analyze(store, "--by", "cc", "--sweep", "ccs")
    assert code == 0, err
    assert [(r["tcp.cc"], r["n"]) for r in json.loads(out)] == [("reno", 2), ("sack", 2)]
    code, out, err = _analyze(store, "--by", "iw", "--sweep", "sweep")
    assert [(r["tcp.iw"], r["n"]) for r in json.loads(out)] == [(1, 2), (2, 2)]
    code, out, err = _analyze(store, "--by", "cc", "--sweep", "ccc")
    assert code == 2 and "--sweep 'ccc': no such sweep in" in err and "its sweeps: ccs (4 runs), sweep (4 runs)" in err
    fig = str(tmp_path / "f.png")
    r = CliRunner().invoke(main, ["plot", store, "--x", "cc", "--y", "fct_s", "-o", fig])
    assert r.exit_code == 2 and "choose one with --sweep" in r.output
    r = CliRunner().invoke(main, ["plot", store, "--x", "cc", "--y", "fct_s", "-o", fig, "--sweep", "ccs"])
    assert r.exit_code == 0, r.output


def test_analyze_says_what_a_sweep_has_not_stored_and_reads_older_stores(tmp_path) -> None:
    from tcplab.store import Store
    from tcplab.sweep import execute

    sw = load_sweep(write_sweep(tmp_path, reps=2, factors='"tcp.iw" = [1, 2]'))
    path = str(tmp_path / "results.duckdb")
    st = Store(path)
    st.set_sweep_runs(sw.name, sw.runs)
    st.write_runs(sw.name, [(r, execute(r.core_json), None) for r in sw.runs[:2]] + [(sw.runs[2], None, "boom")], traces=False)
    st.close()
    code, out, err = _analyze(path, "--by", "iw")
    assert code == 0
    assert err.split("\n")[0] == ("note: sweep sweep: 2 of its 4 runs are stored (1 failed, 1 not run yet); "
                                   "the tables below leave the others out")  # fmt: skip
    assert sum(r["n"] for r in json.loads(out)) == 2
    # A store written before sweep_runs: its runs counted by their sweep label.
    con = duckdb.connect(path)
    con.execute("DROP TABLE sweep_runs")
    con.close()
    code, out, err = _analyze(path, "--by", "iw")
    assert code == 0 and "2 of its 3 runs are stored (1 failed, 0 not run yet)" in err
    assert sum(r["n"] for r in json.loads(out)) == 2


def test_a_store_is_read_and_written_while_a_sweep_fills_it(tmp_path) -> None:
    """A running sweep closes its store for a process that waits to open it:
    analyze reads it mid-sweep, and a second sweep writes into it."""
    path = write_sweep(tmp_path, duration="600s", reps=50)
    store = str(tmp_path / "results.duckdb")
    cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(path), "--jobs", "1", "-q", "-v"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ctrl_c_heard)
    other = tmp_path / "other.toml"
    try:
        assert proc.stdout is not None
        reported = 0
        for line in proc.stdout:
            reported += line.startswith("stored ")
            if reported == 2:
                break
        code, out, err = _analyze(store, "--by", "iw")
        assert code == 0, err
        n = sum(r["n"] for r in json.loads(out))
        assert 2 <= n < 300
        assert f"note: sweep sweep: {n} of its 300 runs are stored (0 failed, {300 - n} not run yet)" in err
        # The same runs as the first sweep's first replication: those it has
        # stored already are skipped.
        other.write_text(path.read_text().replace("[sweep]", '[sweep]\nname = "other"').replace("replications = 50", "replications = 1"))
        rep = run_sweep(load_sweep(other), jobs=1, progress=False)
        assert rep.failed == 0 and rep.done + rep.skipped == 6
        assert proc.poll() is None, "the first sweep ran all along"
    finally:
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate()
    assert proc.returncode == 130, (err, rest[-500:])
    con = duckdb.connect(store, read_only=True)
    sweeps = dict(con.execute("SELECT sweep, count(*) FROM sweep_runs GROUP BY sweep").fetchall())
    stored = {r for (r,) in con.execute("SELECT run_id FROM runs WHERE status = 'ok'").fetchall()}
    ids = [r.run_id for r in load_sweep(other).runs]
    rows = con.execute("SELECT run_id, sweep, rep, status, error FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()
    con.close()
    assert sweeps == {"sweep": 300, "other": 6}
    assert set(ids) <= stored, (rows, err)
    assert not Path(store + ".waiting").exists()


def test_a_sweep_makes_its_stores_directory(tmp_path) -> None:
    path = write_sweep(tmp_path, reps=1, factors='"tcp.iw" = [1, 2]', store="a/b/r.duckdb")
    r = CliRunner().invoke(main, ["sweep", str(path), "-q"])
    assert r.exit_code == 0, r.output
    assert r.output == f"sweep: 2 runs done, 0 already stored, 0 failed, of 2; store {tmp_path / 'a/b/r.duckdb'}\n"
    assert len(snapshot(tmp_path / "a/b/r.duckdb")["runs"]) == 2


@pytest.mark.parametrize("command", ["sweep", "analyze", "export", "plot"])
def test_a_file_that_is_no_store_is_refused(tmp_path, command) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_text("not a store\n")
    args = {
        "sweep": ["sweep", str(write_sweep(tmp_path)), "--store", str(bad), "-q"],
        "analyze": ["analyze", str(bad), "--metric", "fct_s"],
        "export": ["export", str(bad), "--out", str(tmp_path / "out")],
        "plot": ["plot", str(bad), "--x", "iw", "--y", "fct_s", "-o", str(tmp_path / "f.png")],
    }[command]
    proc = subprocess.run([sys.executable, "-m", "tcplab.cli", *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"error: {bad} is not a results store (the DuckDB file that tcplab sweep and tcplab reproduce write): DuckDB cannot read it\n"
    assert bad.read_text() == "not a store\n"


def test_a_sweep_file_given_as_the_store_is_told_where_its_runs_are(tmp_path) -> None:
    """`tcplab analyze sweep.toml` said DuckDB's "IO Error: ... not a valid DuckDB database file"."""
    path = write_sweep(tmp_path)
    r = CliRunner().invoke(main, ["analyze", str(path), "--metric", "fct_s"])
    assert (r.exit_code, r.output) == (2, f"error: {path} is not a results store (the DuckDB file that tcplab sweep and tcplab reproduce "
                                          "write): it is a TOML file; a sweep file's runs are in the store its [sweep] store names "
                                          "(results.duckdb unless it says otherwise), a study's in OUT/STUDY.duckdb\n")


def test_a_batch_is_stored_as_its_runs_one_by_one_and_replaces_a_failed_run(tmp_path) -> None:
    """One write of several finished runs stores what writing each alone
    stores (every row under its own run), and a run stored as failed is
    replaced whole when it is written again."""
    from tcplab.store import Store
    from tcplab.sweep import execute

    runs = load_sweep(write_sweep(tmp_path, reps=1, factors='"tcp.iw" = [1, 2, 4]')).runs
    done = [(r, execute(r.core_json), None) for r in runs]
    single = Store(tmp_path / "single.duckdb")
    for d in done:
        single.write_runs("s", [d], traces=False)
    single.close()
    batch = Store(tmp_path / "batch.duckdb")
    batch.write_runs("s", [(runs[1], None, "RuntimeError: once")], traces=False)
    assert batch.con.execute("SELECT status, error FROM runs").fetchall() == [("error", "RuntimeError: once")]
    batch.write_runs("s", done, traces=False)
    batch.close()
    a, b = snapshot(tmp_path / "single.duckdb"), snapshot(tmp_path / "batch.duckdb")
    assert_same(a, b)
    assert sorted(a["runs"].status) == ["ok"] * 3
    per_run = a["flows"].groupby("run_id").size()
    assert per_run.to_dict() == {r.run_id: len(p["tables"]["flows"]) for r, p, _ in done}
    assert list(a["flows"].columns[:2]) == ["run_id", "id"]


def test_finished_runs_wait_for_a_write_worth_its_cost() -> None:
    """A write is due once the waiting runs took 0.05 s to simulate and four
    times as long as the last write took, or once 256 runs wait."""
    from tcplab.runner import write_due

    assert not write_due(10, 0.049, 0.0) and write_due(10, 0.05, 0.0)  # the first write: the floor
    assert not write_due(10, 0.05, 0.1) and not write_due(10, 0.399, 0.1) and write_due(10, 0.4, 0.1)
    assert not write_due(255, 0.0, 1.0) and write_due(256, 0.0, 1.0)


def test_run_metrics_on_hand_built_tables() -> None:
    """The store's per-run metrics, worked by hand: medians and means of the
    completed transfers and pages only, the busiest link the first of those
    at the highest utilization."""
    import math

    from tcplab.store import run_metrics

    nan = float("nan")
    flows = pd.DataFrame({"completed": [True, True, False, True], "fct_s": [1.0, 4.0, nan, 2.0],
                          "bytes_delivered": [1000, 2000, 500, 1500], "goodput_bps": [10.0, 10.0, 10.0, 30.0]})  # fmt: skip
    links = pd.DataFrame({"utilization": [0.2, 0.9, 0.9], "arrivals": [10, 200, 300], "drops": [0, 10, 60], "rate_bps": [1e6, 2e6, 4e6]})
    pages = pd.DataFrame({"completed": [True, False, True], "delay_s": [3.0, nan, 5.0]})
    m = run_metrics(flows, links, pages, {"sim_seconds": 10.0})
    goodput = 5000 * 8 / 10.0
    assert m == {
        "fct_s": 2.0, "fct_mean_s": 7.0 / 3, "completed": 3.0, "goodput_bps": goodput, "utilization": 0.9,
        "drop_rate": 10 / 200, "jain": 60.0**2 / (4 * 1200.0), "efficiency": goodput / 2e6, "power": goodput / 2.0,
        "page_delay_s": 4.0,
    }  # fmt: skip
    none = run_metrics(flows.assign(completed=False), links.iloc[:0], pages.iloc[:0], {"sim_seconds": 10.0})
    assert none["completed"] == 0.0 and none["goodput_bps"] == goodput
    assert all(math.isnan(none[k]) for k in ("fct_s", "fct_mean_s", "utilization", "drop_rate", "efficiency", "power", "page_delay_s"))


def test_a_factor_is_found_by_either_spelling_of_its_list_index() -> None:
    from tcplab.store import StoreError, resolve_factor

    cols = ["run_id", "rep", "seed", "apps[0].size", "apps[1].size", "tcp.iw"]
    assert resolve_factor(cols, "apps.0.size") == "apps[0].size"
    assert resolve_factor(cols, "apps[1].size") == "apps[1].size"
    assert resolve_factor(cols, "iw") == "tcp.iw"
    with pytest.raises(StoreError, match=r"^factor 'size' is ambiguous: apps\[0\].size, apps\[1\].size$"):
        resolve_factor(cols, "size")
    with pytest.raises(StoreError, match=r"^--x 'size': ambiguous factor, it could be apps\[0\].size or apps\[1\].size; give its full name$"):
        resolve_factor(cols, "size", "--x")


def test_the_readmes_python_sweep_runs_as_written(tmp_path) -> None:
    """The README's sweep from Python, run as a script: three IW levels of
    three runs each, and the means it prints are the store's own."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    code = text.split("<!-- python-sweep -->\n```python\n")[1].split("```\n<!-- /python-sweep -->")[0]
    (tmp_path / "s.py").write_text(code)
    (tmp_path / "examples").symlink_to(root / "examples")
    out = subprocess.run([sys.executable, "s.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()[1:]]
    assert [(int(r[1]), int(r[2])) for r in rows] == [(1, 3), (4, 3), (10, 3)]
    con = duckdb.connect(str(tmp_path / "iw.duckdb"), read_only=True)
    means = con.execute("SELECT CAST(json_extract(s.factors, '$.iw') AS INT) AS iw, avg(m.value) FROM sweep_runs s JOIN metrics m USING (run_id) "
                        "WHERE m.metric = 'goodput_bps' GROUP BY iw ORDER BY iw").fetchall()  # fmt: skip
    con.close()
    assert [float(r[3]) for r in rows] == pytest.approx([m for _, m in means], rel=1e-6)


def test_a_store_of_an_earlier_table_shape_takes_new_runs(tmp_path) -> None:
    """A store written before a flows column existed (here: `aborted`,
    dropped to make one) takes the runs of a newer tcplab: the column is
    added, NULL in the earlier rows."""
    path = write_sweep(tmp_path, reps=1, factors='"tcp.iw" = [1]')
    run_sweep(load_sweep(path), jobs=1, progress=False)
    con = duckdb.connect(str(tmp_path / "results.duckdb"))
    con.execute("ALTER TABLE flows DROP COLUMN aborted")
    before = con.execute("SELECT count(*) FROM flows").fetchone()[0]
    con.close()
    path = write_sweep(tmp_path, reps=1, factors='"tcp.iw" = [1, 2]')
    rep = run_sweep(load_sweep(path), jobs=1, progress=False)
    assert (rep.done, rep.skipped, rep.failed) == (1, 1, 0)
    con = duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True)
    rows = con.execute("SELECT aborted IS NULL, count(*) FROM flows GROUP BY ALL ORDER BY ALL").fetchall()
    con.close()
    assert rows[1] == (True, before) and rows[0][0] is False and rows[0][1] > 0  # the new run's flows have it


def test_sweep_from_configs_checks_its_arguments_and_names_a_bad_configuration(tmp_path) -> None:
    from tcplab.errors import SweepError
    from tcplab.sweep import sweep_from_configs

    base = tcplab.scenario.read_toml(write_sweep(tmp_path).parent / "base.toml")
    store = str(tmp_path / "s.duckdb")
    # Zero replications and no configurations made a sweep of no runs; a bare scenario, an unpacking error.
    with pytest.raises(tcplab.UsageError, match=r"^invalid argument: replications = 0: expected a whole number, at least 1$"):
        sweep_from_configs("t", store, [({"iw": 1}, base)], 0)
    with pytest.raises(tcplab.UsageError, match=r"^invalid argument: configs: is empty"):
        sweep_from_configs("t", store, [], 1)
    with pytest.raises(TypeError, match=r"^configs\[0\]: expected a \(factor levels, scenario dictionary\) pair of dicts; got tuple$"):
        sweep_from_configs("t", store, [(base,)], 1)  # type: ignore[list-item]
    with pytest.raises(tcplab.ScenarioError) as e:
        sweep_from_configs("t", store, [({"iw": 1}, base), ({"iw": 2}, {**base, "tcp": {"iw": 0}})], 1)
    assert str(e.value).startswith("invalid scenario in t, configuration (iw=2): tcp.iw = 0: ")
    # The core's checks across fields too, before any run.
    with pytest.raises(tcplab.ScenarioError) as e:
        sweep_from_configs("t", store, [({"iw": 1}, base), ({"iw": 2}, {**base, "tcp": {"hystart": True}})], 1)
    assert str(e.value) == "invalid scenario in t, configuration (iw=2): apps[0].tcp.hystart: is cubic's slow start; cc is 'reno' (allowed with hystart: cubic)"
    with pytest.raises(SweepError) as e:
        sweep_from_configs("t", store, [({"iw": 1}, {**base, "trace": {"pcap": ["r0->r1"]}})], 1)
    assert str(e.value) == "invalid sweep in t: configuration (iw=1): trace.pcap = ['r0->r1']: captures are written by single runs, not sweeps"


def _inline_base_problems(tmp_path: Path, app: str, factors: str) -> list[tuple[str, str]]:
    """The (field, message) problems of a sweep file whose [base] is inline:
    a dumbbell with one bulk application (`app`: its lines after the type)."""
    p = tmp_path / "s.toml"
    p.write_text(f'[sweep]\nstore = "r.duckdb"\n[base]\n[base.topology]\ntype = "dumbbell"\n[[base.apps]]\ntype = "bulk"\n{app}\n[factors]\n{factors}\n')
    with pytest.raises(tcplab.SweepError) as e:
        load_sweep(p)
    return [(q.field, q.message) for q in e.value.problems]


def test_a_base_tables_problem_is_named_in_it_and_once(tmp_path) -> None:
    # It was named as a scenario file's field ('apps[0].dst'), once per configuration.
    p = tmp_path / "s.toml"
    assert _inline_base_problems(tmp_path, 'src = "s0"\ndst = "k9"', '"tcp.iw" = [1, 0]\n"tcp.cc" = ["reno", "sack"]') == [
        ("factors (tcp.iw=1, tcp.cc='reno'): base.apps[0].dst", "unknown node; allowed: s0, r0, r1, k0"),
        ("factors (tcp.iw=0, tcp.cc='reno'): tcp.iw",
         "expected an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'; it must be at least 1"),
        ("factors (tcp.iw=0, tcp.cc='sack'): tcp.iw",
         "expected an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'; it must be at least 1"),
    ]  # fmt: skip
    # A sweep without factors: its one scenario's fields, without a 'factors ()' label.
    p.write_text('[sweep]\nstore = "r.duckdb"\n[base]\nx = 1\n')
    with pytest.raises(tcplab.SweepError) as e:
        load_sweep(p)
    assert [q.field for q in e.value.problems] == ["base.topology", "base.apps", "base.x"]


def test_a_problem_the_core_finds_is_named_at_each_configuration_that_has_it(tmp_path) -> None:
    # The core names the resolved scenario's field, in no table of the file:
    # not under 'base.', and at every configuration it refuses.
    says = "is cubic's slow start; cc is 'reno' (allowed with hystart: cubic)"
    assert _inline_base_problems(tmp_path, 'src = "s0"\ndst = "k0"\nsize = "10kB"', '"tcp.hystart" = [false, true]\n"tcp.iw" = [1, 2]') == [
        ("factors (tcp.hystart=True, tcp.iw=1): apps[0].tcp.hystart", says),
        ("factors (tcp.hystart=True, tcp.iw=2): apps[0].tcp.hystart", says),
    ]


def test_a_sweep_stores_every_result_table_of_its_runs(tmp_path) -> None:
    """An ATM port's counters and, with traces = true, the web100 samples
    are stored with the run's other tables, as tcplab.run gives them (they
    were left out: a sweep of the goyal98 kind kept no port counters)."""
    from tcplab.sweep import sweep_from_configs

    from .test_atm import _atm

    sc = _atm(policy="sd", buffer=300, n=2, duration="1s")
    sc["trace"] = {"interval": "100ms", "web100": True, "apps": ["b0"]}
    run_sweep(sweep_from_configs("atm", str(tmp_path / "s.duckdb"), [({"policy": "sd"}, sc)], replications=1, traces=True), progress=False)
    stored = snapshot(tmp_path / "s.duckdb")
    res = tcplab.run(sc, seed=derive_seed(1, 0))
    for table in ("ports", "web100", "traces", "flows"):
        mine = stored[table].drop(columns="run_id").reset_index(drop=True)
        theirs = getattr(res, table)
        theirs = theirs.sort_values(list(theirs.columns)).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, theirs, check_dtype=False, obj=table)
    assert len(stored["ports"]) == 2 and len(stored["web100"]) == 10


def test_a_stores_column_types_do_not_depend_on_which_runs_it_wrote_first(tmp_path) -> None:
    """A run of an unbounded bulk transfer has no page, size or completion time in its flows
    table; a web run has them. Whichever the store writes first, it writes the other after it,
    with the same types and the same rows (the first write once fixed the table's types: a
    column with no value became DuckDB's NULL type and the web run's write failed, and an
    integer column became BIGINT or DOUBLE as the first runs had a missing value or not)."""
    from tcplab.store import Store
    from tcplab.sweep import execute

    from .test_golden import store_digest

    base = tmp_path / "base.toml"
    base.write_text('[sim]\nduration = "2s"\n[topology]\ntype = "dumbbell"\nleft = 1\nright = 1\n'
                    '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "inf"\n')  # fmt: skip
    (tmp_path / "sw.toml").write_text('[sweep]\nscenario = "base.toml"\nreplications = 1\n[factors]\n'
                                      '"apps.0" = [{type = "bulk", src = "s0", dst = "k0", size = "inf"}, '
                                      '{type = "web", src = "k0", dst = "s0"}]\n')  # fmt: skip
    sw = load_sweep(tmp_path / "sw.toml", store=str(tmp_path / "unused.duckdb"))
    outs = {r.factors["apps.0"]["type"]: (r, execute(r.core_json), None) for r in sw.runs}
    bulk, web = outs["bulk"][1]["tables"]["flows"], outs["web"][1]["tables"]["flows"]
    assert bulk.column("page").null_count == bulk.num_rows and web.column("page").null_count == 0
    kinds = (bulk.schema.field("page").type, web.schema.field("page").type, bulk.schema.field("bytes").type, bulk.schema.field("fct_s").type)
    assert tuple(map(str, kinds)) == ("int64", "int64", "int64", "double")
    digests = []
    for order in (("bulk", "web"), ("web", "bulk")):
        path = str(tmp_path / f"{order[0]}-first.duckdb")
        st = Store(path)
        st.set_sweep_runs(sw.name, sw.runs)
        for kind in order:
            st.write_runs(sw.name, [outs[kind]], False)
        types = {c: t for c, t, *_ in st.con.execute("DESCRIBE flows").fetchall()}
        assert (types["page"], types["bytes"], types["fct_s"], types["srtt_s"]) == ("BIGINT", "BIGINT", "DOUBLE", "DOUBLE")
        st.close()
        digests.append(store_digest(path))
    assert digests[0] == digests[1]


def test_a_store_whose_first_runs_left_a_column_without_a_type_takes_values_there_again(tmp_path) -> None:
    """A store an earlier tcplab wrote with a column of DuckDB's NULL type (no run written
    first had a value there) takes a run with values in it: the column gets the run's type."""
    import pyarrow as pa

    from tcplab.store import Store

    path = str(tmp_path / "old.duckdb")
    Store(path).close()
    con = duckdb.connect(path)
    con.execute("CREATE TABLE flows AS SELECT 'r0' AS run_id, 0 AS id, NULL AS page")
    assert con.execute("DESCRIBE flows").fetchall()[2][1] == '"NULL"'
    con.close()
    st = Store(path)
    st._tables.add("flows")
    st._insert_arrow("flows", pa.table({"run_id": ["r1"], "id": pa.array([0], pa.int64()), "page": pa.array([3], pa.int64())}))
    assert st.con.execute("SELECT run_id, page FROM flows ORDER BY run_id").fetchall() == [("r0", None), ("r1", 3)]
    assert st.con.execute("DESCRIBE flows").fetchall()[2][1] == "BIGINT"
    st.close()


@pytest.mark.parametrize("example", ["atm-ubr", "fall-floyd-drops", "hstcp-web100", "web-pages"])
def test_a_workers_arrow_tables_are_what_the_runs_dataframes_convert_to(example) -> None:
    """A sweep's worker builds each result table as a pyarrow Table without
    pandas; it holds the values and types of the DataFrame a `tcplab.run`
    result has, as Arrow converts it (NaN as null), strings of either width."""
    import pyarrow as pa

    from tcplab import api

    res = api.run_core_columns(json.dumps(tcplab.load(f"examples/{example}.toml").to_core()))
    tables = [("flows", api._FLOW_COLUMNS), ("links", api._LINK_COLUMNS), ("pages", api._PAGE_COLUMNS), ("ports", api._PORT_COLUMNS),
              ("traces", api._TRACE_COLUMNS), ("packets", api._PACKET_COLUMNS), ("web100", api.WEB100_COLUMNS)]  # fmt: skip

    def plain(t: pa.Table) -> pa.Table:
        kinds = [pa.string() if f.type == pa.large_string() else f.type for f in t.schema]
        return t.cast(pa.schema([pa.field(f.name, k) for f, k in zip(t.schema, kinds)]))

    compared = 0
    for name, cols in tables:
        if not res[name]:
            continue
        ours = plain(api._arrow(res[name], cols, name))
        theirs = plain(pa.Table.from_pandas(api._frame(res[name], cols, name), preserve_index=False).replace_schema_metadata(None))
        assert ours.schema == theirs.schema, name
        assert ours.equals(theirs), name
        compared += 1
    assert compared == {"atm-ubr": 4, "fall-floyd-drops": 4, "hstcp-web100": 4, "web-pages": 3}[example]


def test_a_sweep_of_more_runs_than_it_can_hold_is_refused_before_building_them(tmp_path) -> None:
    """Replications of 10^30 used to build runs until the memory ran out."""
    path = write_sweep(tmp_path, reps=10**30)
    r = CliRunner().invoke(main, ["sweep", str(path), "-q"])
    assert r.exit_code == 2
    assert r.output == (f"error: invalid sweep in {path}: sweep.replications = {10**30}: 2 x 3 configurations x {10**30:,} replications make "
                        f"{6 * 10**30:,} runs; a sweep holds at most 1,000,000: split it into several sweeps (they can share a store)\n")  # fmt: skip
    with pytest.raises(tcplab.SweepError, match=r"^invalid sweep in s: replications = 500001: 2 configurations x 500,001 replications make 1,000,002 runs; "
                                                 r"a sweep holds at most 1,000,000: run fewer replications$"):  # fmt: skip
        sweep_from_configs("s", str(tmp_path / "x.duckdb"), [({"i": 1}, {}), ({"i": 2}, {})], 500_001)


def test_an_unreadable_base_scenario_is_named_at_sweep_scenario(tmp_path) -> None:
    """A directory, or a name too long for the file system (which stopped
    the sweep with an OSError), is reported as sweep.scenario."""
    (tmp_path / "adir").mkdir()
    for name, why in (("adir", "cannot read {at}: Is a directory"), ("a" * 300, "cannot read {at}: File name too long")):
        p = tmp_path / "s.toml"
        p.write_text(f'[sweep]\nscenario = "{name}"\n[factors]\n"tcp.iw" = [1, 2]\n')
        r = CliRunner().invoke(main, ["sweep", str(p), "-q"])
        assert r.exit_code == 2
        assert r.output == f"error: invalid sweep in {p}: sweep.scenario = '{name}': {why.format(at=tmp_path / name)}\n"


def test_mutated_sweep_files_load_or_are_refused_with_a_sweep_error(tmp_path) -> None:
    """2,000 sweep files with one to three fields replaced, removed or added
    (as the scenario test mutates the examples): each loads, or is refused
    with a SweepError in the words of the other messages. Drawn this way,
    they found 10^30 replications building runs until the memory ran out,
    and an OSError for a scenario name too long for the file system."""
    import random
    import tomllib

    from tcplab.scenario.loading import dumps_toml

    from .test_hardening import _mutate

    examples = Path(__file__).resolve().parents[1] / "examples"
    (tmp_path / "base.toml").write_text((examples / "dumbbell-bulk.toml").read_text())
    sweeps = [
        {"sweep": {"scenario": "base.toml", "replications": 2, "seed": 3}, "factors": {"tcp.iw": [1, 2, 4], "topology.bottleneck.queue": ["10pkt", "30pkt"]}},
        {"sweep": {"scenario": "base.toml", "design": "points"}, "points": [{"tcp.cc": "sack"}, {"tcp.iw": 4}, {"apps.0.size": "1MB"}]},
        {"sweep": {"replications": 1}, "base": tomllib.loads((examples / "web-pages.toml").read_text()), "factors": {"tcp.iw": [1, 3]}},
    ]  # fmt: skip
    rng = random.Random(67)
    loaded = 0
    for i in range(2000):
        p = tmp_path / "s.toml"
        p.write_text(dumps_toml(_mutate(rng.choice(sweeps), rng)))
        try:
            load_sweep(p, store=str(tmp_path / "x.duckdb"))
            loaded += 1
        except tcplab.SweepError as e:
            assert e.problems and all(pr.field and pr.message for pr in e.problems), p.read_text()
            assert not any(w in str(e) for w in ("Input should", "function-", "tagged-union", "literal[")), str(e)
    assert 100 <= loaded <= 400


def test_a_duckdb_file_that_is_not_a_store_is_refused_and_left_as_it_was(tmp_path) -> None:
    """Such a file (an empty one, or another program's tables) used to stop
    `analyze` with DuckDB's traceback, and a sweep added its tables to it."""
    theirs = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(theirs))
    con.execute("CREATE TABLE runs (x INTEGER)")
    con.close()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    path = write_sweep(tmp_path, reps=1, factors='"tcp.iw" = [1]')
    for args in (["analyze", str(theirs), "--metric", "goodput_bps"], ["sweep", str(path), "--store", str(theirs), "-q"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2
        assert r.output == f"error: {theirs} is not a tcplab results store: it has no factors, metrics (its tables: runs)\n"
    con = duckdb.connect(str(theirs), read_only=True)
    assert [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()] == ["runs"]
    con.close()
    for cmd in (["analyze", str(empty), "--metric", "goodput_bps"], ["export", str(empty), "--out", str(tmp_path / "x")]):
        r = CliRunner().invoke(main, cmd)
        assert r.exit_code == 2
        assert r.output == f"error: no results in {empty}: an empty DuckDB file (a sweep writes a store: tcplab sweep FILE --store {empty})\n"


def test_a_base_scenarios_own_seed_is_said_to_be_replaced(tmp_path) -> None:
    """A base scenario's sim.seed was replaced by the sweep's seeds without
    a word; it is still replaced (a sweep sets every run's seed), and said."""
    (tmp_path / "b.toml").write_text('[sim]\nduration = "2s"\nseed = 7\n[topology]\ntype = "dumbbell"\n'
                                     '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "10kB"\n')  # fmt: skip
    for sweep_seed, notes in [(1, ["b.toml sets sim.seed = 7, which the sweep replaces: replication r of every configuration runs the seed "
                                   "derived from (sweep.seed, r), here (1, r)"]), (7, [])]:  # fmt: skip
        (tmp_path / "s.toml").write_text(f'[sweep]\nscenario = "b.toml"\nseed = {sweep_seed}\nreplications = 2\n[factors]\n"tcp.iw" = [1]\n')
        sw = load_sweep(str(tmp_path / "s.toml"))
        assert sw.notes == notes and [r.seed for r in sw.runs] == [derive_seed(sweep_seed, 0), derive_seed(sweep_seed, 1)]
    inline = '[sweep]\nreplications = 1\n[base]\nsim = { duration = "2s", seed = 3 }\ntopology = { type = "dumbbell" }\n' \
             '[[base.apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "10kB"\n'  # fmt: skip
    (tmp_path / "i.toml").write_text(inline)
    r = CliRunner().invoke(main, ["sweep", str(tmp_path / "i.toml"), "--store", str(tmp_path / "i.duckdb"), "-q", "--jobs", "1"])
    assert r.exit_code == 0 and r.stderr == ("note: [base] sets sim.seed = 3, which the sweep replaces: replication r of every configuration "
                                             "runs the seed derived from (sweep.seed, r), here (1, r)\n"), r.output  # fmt: skip


def test_run_sweep_refuses_bad_arguments_before_opening_the_store(tmp_path) -> None:
    from tcplab.sweep import sweep_from_configs

    base = tcplab.scenario.read_toml(write_sweep(tmp_path).parent / "base.toml")
    store = tmp_path / "s.duckdb"
    sw = sweep_from_configs("t", str(store), [({"iw": 1}, base)], 1)
    # backend="foo" ran locally, jobs=0 on one worker, a scheduler with the
    # local backend went unused, and on_result=5 stopped the sweep at its first write.
    cases = [
        (dict(backend="foo"), "backend = 'foo': allowed: 'local' or 'dask'"),
        (dict(jobs=0), "jobs = 0: expected a number of worker processes, at least 1 (None: one per core)"),
        (dict(jobs=True), "jobs = true: expected a number of worker processes, at least 1 (None: one per core)"),
        (dict(scheduler="tcp://head:8786"), "scheduler = 'tcp://head:8786': applies with backend 'dask' only"),
        (dict(backend="dask"), "scheduler: backend 'dask' needs the scheduler's address, such as 'tcp://head:8786'"),
        (dict(backend="dask", jobs=2, scheduler="tcp://head:8786"), "jobs = 2: applies to backend 'local' only (with dask, the cluster's workers run the runs)"),
        (dict(on_result=5), "on_result = 5: expected a function called with each stored Run, or None"),
    ]
    for kw, message in cases:
        with pytest.raises(tcplab.UsageError) as exc:
            run_sweep(sw, progress=False, **kw)
        assert str(exc.value) == f"invalid argument: {message}"
    assert not store.exists()
    with pytest.raises(TypeError, match=r"^sweep is a tcplab.sweep.Sweep \(load_sweep or sweep_from_configs makes one\), not str$"):
        run_sweep("s.toml")  # type: ignore[arg-type]


def test_sweep_from_configs_and_load_sweep_refuse_blank_names_and_stores(tmp_path) -> None:
    from tcplab.sweep import load_sweep, sweep_from_configs

    path = write_sweep(tmp_path)
    base = tcplab.scenario.read_toml(path.parent / "base.toml")
    store = str(tmp_path / "s.duckdb")
    # Each built a sweep: a blank store runs into DuckDB's database in memory
    # and keeps nothing; seed=True was hashed as a seed of its own.
    cases = [
        (lambda: sweep_from_configs("", store, [({"iw": 1}, base)], 1), "name = '': expected a non-blank string"),
        (lambda: sweep_from_configs("t", " ", [({"iw": 1}, base)], 1), "store = ' ': expected a non-blank string"),
        (lambda: sweep_from_configs("t", store, [({"iw": 1}, base)], 1, seed=-1), "seed = -1: expected a whole number, at least 0"),
        (lambda: sweep_from_configs("t", store, [({"iw": 1}, base)], 1, seed=True), "seed = true: expected a whole number, at least 0"),
        (lambda: sweep_from_configs("t", store, [({1: 1}, base)], 1), "configs[0][0] = [1]: expected factor names that are non-blank strings"),
        # The file's store, without a word.
        (lambda: load_sweep(path, store=""), "store = '': expected a store's path, or None for the sweep file's"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(tcplab.UsageError) as exc:
            call()
        assert str(exc.value) == f"invalid argument: {message}"
    assert load_sweep(path, store=store).store == store


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_stops_a_sweep_in_the_middle_of_its_runs(tmp_path, jobs) -> None:
    """Ctrl-C during a long run: with one job the run stopped only at its end
    (and was stored); with a pool of workers, the interpreter's exit waited
    for them to finish their runs. Now the run is cancelled, or its worker
    ended, and nothing of it is stored."""
    import multiprocessing
    import os
    import signal
    import threading

    from tcplab.sweep import sweep_from_configs

    doc = {"sim": {"duration": "10000000s" if jobs > 1 else "100000s"}, "topology": {"type": "dumbbell", "bottleneck": {"rate": "1Gbps"}},
           "apps": [{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}]}  # fmt: skip
    sw = sweep_from_configs("long", str(tmp_path / "s.duckdb"), [({"iw": 1}, {**doc, "tcp": {"iw": 1}}), ({"iw": 2}, {**doc, "tcp": {"iw": 2}})], 1)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    rep = run_sweep(sw, jobs=jobs, progress=False)
    timer.join()
    assert (rep.interrupted, rep.done, rep.failed) == (True, 0, 0)
    for child in multiprocessing.active_children():  # the pool's workers, ended (they would run 20 minutes)
        child.join(30)
        assert not child.is_alive(), child


def test_ctrl_c_inside_the_pools_submit_still_ends_its_workers(tmp_path, monkeypatch) -> None:
    """A Ctrl-C that lands inside `pool.submit`, after the pool queued the
    task but before the sweep recorded it: the worker that takes the task
    is ended too, not left to run it to its end (here 20 minutes) while the
    interpreter's exit waits for it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from tcplab.sweep import sweep_from_configs

    doc = {"sim": {"duration": "10000000s"}, "topology": {"type": "dumbbell", "bottleneck": {"rate": "1Gbps"}},
           "apps": [{"type": "bulk", "src": "s0", "dst": "k0", "size": "inf"}]}  # fmt: skip
    sw = sweep_from_configs("long", str(tmp_path / "s.duckdb"), [({"iw": 1}, {**doc, "tcp": {"iw": 1}}), ({"iw": 2}, {**doc, "tcp": {"iw": 2}})], 1)
    submit = ProcessPoolExecutor.submit
    workers = []

    def interrupted_submit(self, *args, **kwargs):
        submit(self, *args, **kwargs)
        workers.extend(self._processes.values())
        raise KeyboardInterrupt

    monkeypatch.setattr(ProcessPoolExecutor, "submit", interrupted_submit)
    rep = run_sweep(sw, jobs=2, progress=False)
    assert (rep.interrupted, rep.done, rep.failed) == (True, 0, 0)
    assert workers, "the pool started a worker for the task"
    for child in workers:
        child.join(30)
        assert not child.is_alive(), child
    assert multiprocessing.active_children() == []


def test_put_metrics_adds_a_studys_metrics_and_replaces_its_earlier_values(tmp_path) -> None:
    """A study's own per-run metrics go beside the generic ones; storing them
    again (a rerun of the study's analysis) replaces them, leaving one row
    per run and metric, and leaves the other metrics as they were."""
    from tcplab.store import Store
    from tcplab.studies.common import keep_metrics

    (tmp_path / "base.toml").write_text('[sim]\nduration = "2s"\n[topology]\ntype = "dumbbell"\n'
                                        '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "50kB"\n')  # fmt: skip
    (tmp_path / "sw.toml").write_text('[sweep]\nscenario = "base.toml"\nreplications = 1\n[factors]\n"tcp.iw" = [1, 4]\n')
    store = str(tmp_path / "s.duckdb")
    assert CliRunner().invoke(main, ["sweep", str(tmp_path / "sw.toml"), "--store", store, "-q", "--jobs", "1"]).exit_code == 0
    with Store(store, read_only=True) as st:
        ids = st.metric_table("fct_s").sort_values("tcp.iw").run_id.tolist()
        before = st.con.execute("SELECT count(*) FROM metrics").fetchone()[0]
    keep_metrics("demo", store, pd.DataFrame({"run_id": ids, "a": [1.0, 2.0], "b": [float("nan"), 0.5]}), {"a": "x_s", "b": "y"})
    keep_metrics("demo", store, pd.DataFrame({"run_id": ids, "a": [3.0, 4.0], "b": [5.0, 6.0]}), {"a": "x_s", "b": "y"})
    with Store(store, read_only=True) as st:
        rows = st.con.execute("SELECT run_id, metric, value FROM metrics WHERE metric LIKE 'demo.%' ORDER BY metric, value").fetchall()
        assert st.con.execute("SELECT count(*) FROM metrics").fetchone()[0] == before + 4
        assert st.metric_table("demo.x_s").sort_values("tcp.iw")["demo.x_s"].tolist() == [3.0, 4.0]
    assert rows == [(ids[0], "demo.x_s", 3.0), (ids[1], "demo.x_s", 4.0), (ids[0], "demo.y", 5.0), (ids[1], "demo.y", 6.0)]
