"""Compare two builds of the core's loop in interleaved pairs.

    cargo build --release --example run_scenario && cp target/release/examples/run_scenario /tmp/rs_before
    # ... change the core ...
    cargo build --release --example run_scenario
    python benchmarks/core_pairs.py /tmp/rs_before target/release/examples/run_scenario --flows 100000 --pairs 12
    python benchmarks/core_pairs.py A B scenario.json --pairs 8     # any core scenario JSON

Each pair runs build A, then build B, on the same core scenario (a JSON file,
or with `--flows N` the `--scale` dumbbell of `bench_dumbbell.py` with N
flows), and takes the ratio of their loop times (`wall_seconds`, A over B:
above 1, B is faster). A busy spell of the machine then falls on both sides
of a pair, and the median of the ratios says more than either build's own
times. The two builds must give the same engine counters (events, packets):
a change meant to be a pure speed-up shows here when it is not, and the
script exits 1.

This is a benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

def run_core(binary: str, scenario: str) -> dict:
    out = subprocess.run([binary, scenario], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def counters(engine: dict) -> dict:
    """The engine's counters, without the fields that measure the machine, not the run."""
    from tcplab.api import without_wall_clock

    return without_wall_clock(engine)


def differing(pairs: list[tuple[dict, dict]]) -> dict:
    """The counters of the first pair whose builds disagree, as {name: (A's, B's)}; empty when none does."""
    for a, b in pairs:
        ca, cb = counters(a), counters(b)
        diff = {k: (ca.get(k), cb.get(k)) for k in sorted(ca.keys() | cb.keys()) if ca.get(k) != cb.get(k)}
        if diff:
            return diff
    return {}


def summarize(pairs: list[tuple[dict, dict]]) -> dict:
    """The pairs' loop-time ratios (A over B), their median and range, how
    many pairs B won, and the counters the builds disagree on (if any)."""
    ratios = [a["wall_seconds"] / b["wall_seconds"] for a, b in pairs]
    return {"ratios": ratios, "median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
            "faster": sum(r > 1 for r in ratios), "differ": differing(pairs)}  # fmt: skip


def scale_core_json(flows: int) -> str:
    """The `--scale` dumbbell with `flows` flows, as the core's JSON in a temporary file."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import tcplab
    from bench_dumbbell import scale_scenario

    core = tcplab.load(scale_scenario(flows)).to_core()
    f = tempfile.NamedTemporaryFile("w", suffix=".json", prefix=f"scale{flows}-", delete=False)
    with f:
        json.dump(core, f)
    return f.name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="build A: a core runner (target/release/examples/run_scenario)")
    ap.add_argument("b", help="build B: the other core runner")
    ap.add_argument("scenario", nargs="?", help="a core scenario JSON (or give --flows)")
    ap.add_argument("--flows", type=int, help="run the --scale dumbbell with this many flows instead")
    ap.add_argument("--pairs", type=int, default=8, help="interleaved pairs (default 8)")
    args = ap.parse_args()
    if (args.scenario is None) == (args.flows is None):
        ap.error("give a scenario JSON or --flows N, not both")
    if args.pairs < 1:
        ap.error(f"--pairs {args.pairs}: expected a whole number of at least 1")
    scenario = args.scenario or scale_core_json(args.flows)
    pairs = []
    try:
        for i in range(args.pairs):
            a, b = run_core(args.a, scenario), run_core(args.b, scenario)
            pairs.append((a, b))
            print(f"  pair {i + 1}: A {a['wall_seconds']:.3f} s, B {b['wall_seconds']:.3f} s, ratio {a['wall_seconds'] / b['wall_seconds']:.3f}",
                  file=sys.stderr, flush=True)  # fmt: skip
    finally:
        if args.flows is not None:
            Path(scenario).unlink()
    s = summarize(pairs)
    print(f"loop time A over B: median {s['median']:.3f} ({s['min']:.3f}-{s['max']:.3f}); "
          f"B faster in {s['faster']} of {len(pairs)} pairs")  # fmt: skip
    if s["differ"]:
        print(f"the builds' counters differ (A, B): {s['differ']}")
        return 1
    print(f"counters identical: {counters(pairs[0][0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
