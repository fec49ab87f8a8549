#!/usr/bin/env python3
"""Sweep machinery: the overhead per run, and the speedup of 2 workers over 1.

1. Overhead: a sweep of 40 trivial runs (one 1-segment transfer each) with
   --jobs 1; overhead per run = (sweep wall time - simulation time) / 40,
   store writes and metrics included (sweep-file loading and validation are
   reported separately).
2. Speedup: a 40-run sweep of a heavier scenario (100 Reno flows on a
   45 Mb/s dumbbell; about a second of simulation each) with --jobs 1 and
   --jobs 2, wall time of the whole sweep including worker start-up.
3. Short runs on 2 workers: 2,000 runs of a study's kind (a 10 kB transfer
   over a 2 Mb/s, 70 ms link; a few milliseconds of simulation each) with
   --jobs 2, worker start-up included: what the pool's hand-over, the
   tables and the store cost per run when they, not the simulation, decide
   a sweep's time.

    python benchmarks/bench_sweep.py

This is a benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import duckdb

from tcplab.runner import run_sweep
from tcplab.sweep import load_sweep

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dumbbell import tcplab_scenario  # noqa: E402

TRIVIAL = """
[topology]
type = "dumbbell"
[[apps]]
type = "bulk"
src = "s0"
dst = "k0"
size = "1460B"
"""


def _toml_scenario(sc: dict) -> str:
    lines = [f'[sim]\nduration = "{sc["sim"]["duration"]}"\nseed = 1\n']
    t = sc["topology"]
    lines.append(f'[topology]\ntype = "dumbbell"\nleft = {t["left"]}\nright = {t["right"]}\n')
    b = t["bottleneck"]
    lines.append(f'[topology.bottleneck]\nrate = "{b["rate"]}"\ndelay = "{b["delay"]}"\nqueue = "{b["queue"]}"\n')
    la = t["left_access"]
    delays = ", ".join(f'"{d}"' for d in la["delay"])
    lines.append(f'[topology.left_access]\nrate = "{la["rate"]}"\ndelay = [{delays}]\nqueue = "{la["queue"]}"\n')
    ra = t["right_access"]
    lines.append(f'[topology.right_access]\nrate = "{ra["rate"]}"\ndelay = "{ra["delay"]}"\nqueue = "{ra["queue"]}"\n')
    lines.append("[tcp]\n" + "\n".join(f'{k} = "{v}"' if isinstance(v, str) else f"{k} = {v}" for k, v in sc["tcp"].items()) + "\n")
    for a in sc["apps"]:
        lines.append(f'[[apps]]\ntype = "bulk"\nname = "{a["name"]}"\nsrc = "{a["src"]}"\ndst = "{a["dst"]}"\nsize = "inf"\nstart = "{a["start"]}"\n')
    return "\n".join(lines)


SHORT = """
[sim]
duration = "30s"
[topology]
type = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "70ms", queue = "24pkt" }
[tcp]
cc = "sack"
[[apps]]
type = "bulk"
src = "s0"
dst = "k0"
size = "10kB"
start = { type = "uniform", min = "0s", max = "1s" }
"""


def sweep_file(d: Path, base: str, name: str, runs: int) -> Path:
    (d / f"{name}-base.toml").write_text(base)
    p = d / f"{name}.toml"
    p.write_text(f'[sweep]\nscenario = "{name}-base.toml"\nreplications = {runs}\nstore = "{d / name}.duckdb"\n')
    return p


def timed_sweep(path: Path, store: str, jobs: int) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    sw = load_sweep(path, store)
    t1 = time.perf_counter()
    run_sweep(sw, jobs=jobs, progress=False)
    t2 = time.perf_counter()
    con = duckdb.connect(store, read_only=True)
    sim = con.execute("SELECT sum(wall_s) FROM runs").fetchone()[0]
    con.close()
    return t1 - t0, t2 - t1, sim


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        p = sweep_file(d, TRIVIAL, "trivial", 40)
        load_s, wall, sim = timed_sweep(p, str(d / "trivial.duckdb"), 1)
        print(f"trivial runs: {40} runs in {wall:.3f} s; simulation {sim * 1e3:.1f} ms in all")
        print(f"  overhead per run (store writes and metrics included): {(wall - sim) / 40 * 1e3:.1f} ms")
        print(f"  loading and validating the sweep file (40 configurations): {load_s * 1e3:.1f} ms")
        heavy = _toml_scenario(tcplab_scenario(flows=100, rate="45Mbps", duration=600))
        p = sweep_file(d, heavy, "heavy", 40)
        _, w1, sim1 = timed_sweep(p, str(d / "heavy-j1.duckdb"), 1)
        _, w2, _ = timed_sweep(p, str(d / "heavy-j2.duckdb"), 2)
        print(f"heavy runs: 40 runs of {sim1 / 40:.2f} s simulation each")
        print(f"  --jobs 1: {w1:.1f} s; --jobs 2: {w2:.1f} s; speedup {w1 / w2:.2f}x (target 1.8x)")
        p = sweep_file(d, SHORT, "short", 2000)
        _, w, sim = timed_sweep(p, str(d / "short.duckdb"), 2)
        print(f"short runs: 2000 runs with --jobs 2 in {w:.2f} s; simulation {sim:.2f} s in all ({sim / 2000 * 1e3:.2f} ms a run)")
        print(f"  wall time per run on 2 workers: {w / 2000 * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
