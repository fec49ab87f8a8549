#!/usr/bin/env python3
"""RFC 2415's web and FTP load with sourced object sizes, in tcplab and in ns-2.

Runs the same configurations in both simulators and prints them beside the
RFC's Tables 1 and 2: web clients fetching a primary and three embedded
objects over HTTP/1.0 (a connection per object, 231-byte requests, reply sizes
from Mah (1997), the distribution the RFC cites, as
`studies/data/mah97_http_reply_sizes.csv` holds it), thinking Uniform(1 s, 5 s)
from a page's end, and FTP clients fetching 1 MB files back to back, a
connection per file. ns-2 runs `ns2/rfc2415_web.tcl` (FullTcp with its TcpApp,
ns-2 2.35 with the 1998 clock tick and RTO floor); tcplab runs
`tcplab.studies.rfc2415.scenario` with the same settings
(`_sensitivity_cal`, the report's "Mah's reply sizes" rows). Two ways of
fetching a page: `after` (the embedded objects once the primary has arrived)
and `with` (all four at once).

The two simulators draw different random numbers, and the sizes are
heavy-tailed, so compare means over seeds (`--seeds`). It also prints the
CPU time each simulator took. It asserts nothing.

    python benchmarks/ns2_rfc2415.py                       # 3 seeds, both modes, IW 1 and 3
    python benchmarks/ns2_rfc2415.py --seeds 1 --modes with --install-ns2
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from importlib import resources

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = [(8, 0), (8, 1), (8, 2), (8, 3), (16, 0), (16, 1), (16, 2), (16, 3), (32, 0), (32, 3)]
EMBEDDED = {"after": "after_primary", "with": "with_primary"}
LINE = re.compile(r"pages (\d+) median ([\d.]+) droprate ([\d.]+) util ([\d.]+)")


def mah_cdf(path: str) -> None:
    """The reply sizes in ns-2's Empirical format ("bytes count cdf")."""
    text = resources.files("tcplab.studies").joinpath("data/mah97_http_reply_sizes.csv").read_text(encoding="utf-8")
    with open(path, "w") as f:
        for ln in text.splitlines():
            if ln and not ln.startswith("#") and not ln[0].isalpha():
                b, c = ln.split(",")
                f.write(f"{b} 0 {c}\n")


def run_ns2(job: tuple) -> tuple:
    webs, ftps, iw, mode, seed, cdf, duration = job
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(["ns", os.path.join(HERE, "ns2", "rfc2415_web.tcl"), str(webs), str(ftps), str(iw), mode, str(seed), cdf,
                        str(duration)], capture_output=True, text=True, check=True)  # fmt: skip
    m = LINE.search(r.stdout)
    if m is None:
        raise RuntimeError(f"ns-2 printed no result: {r.stdout!r} {r.stderr!r}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return job[:5], (float(m[2]), float(m[3]), float(m[4])), cpu


def run_ours(job: tuple) -> tuple:
    import tcplab
    from tcplab.studies import rfc2415

    webs, ftps, iw, mode, seed, _, duration = job
    kw = {"mah": True, "think_from": "end", "request": "231B", "embedded_start": EMBEDDED[mode]}
    sc = rfc2415.scenario(webs, ftps, iw, duration=f"{duration}s", calibration=rfc2415._sensitivity_cal(kw))
    sc["sim"]["seed"] = seed
    t0 = time.process_time()
    res = tcplab.run(sc)
    cpu = time.process_time() - t0
    p = res.pages
    p = p[p.completed & p.app.str.startswith("web")]
    b = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
    return job[:5], (float(p.delay_s.median()), 100.0 * b.drops / b.arrivals, 100.0 * b.utilization), cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N of each configuration in each simulator (default 3)")
    ap.add_argument("--modes", default="after,with", help="comma-separated: after, with (default both)")
    ap.add_argument("--duration", type=float, default=360.0, help="simulated seconds (default 360, the RFC's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--install-ns2", action="store_true", help="apt-get install ns2 first if `ns` is missing")
    args = ap.parse_args()
    modes = args.modes.split(",")
    if bad := [m for m in modes if m not in EMBEDDED]:
        ap.error(f"--modes: {', '.join(bad)} is not one of: after, with")
    if args.install_ns2 and shutil.which("ns") is None:
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "ns2"], check=True)
    if shutil.which("ns") is None:
        print("ns-2 (`ns`) is not installed: use --install-ns2", file=sys.stderr)
        return 2
    from tcplab.studies.rfc2415 import RFC_DELAY, RFC_UTIL_DROP

    tmp = tempfile.mkdtemp(prefix="tcplab-ns2-")
    cdf = os.path.join(tmp, "mah97.cdf")
    mah_cdf(cdf)
    jobs = [(w, f, iw, m, s, cdf, args.duration) for m in modes for s in range(1, args.seeds + 1) for (w, f) in ROWS for iw in (1, 3)]
    got: dict[str, dict] = {"ns2": {}, "tcplab": {}}
    cpu = {"ns2": 0.0, "tcplab": 0.0}
    with ProcessPoolExecutor(args.jobs) as ex:
        for name, fn in (("tcplab", run_ours), ("ns2", run_ns2)):
            t0 = time.perf_counter()
            for key, vals, c in ex.map(fn, jobs):
                got[name].setdefault(key[:4], []).append(vals)
                cpu[name] += c
            print(f"{name}: {len(jobs)} runs in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    mean = lambda xs, i: statistics.fmean(x[i] for x in xs)  # noqa: E731
    for m in modes:
        print(f"\n{m}: mean of {args.seeds} seed(s); delay = median page delay (s); dec3 = % decrease IW 1 to 3")
        print(f"{'webs/ftps':>9} | {'IW-1 delay ns-2 ours RFC':>25} | {'dec3 ns-2 ours RFC':>19} | {'drop IW1 ns-2 ours RFC':>23} | "
              f"{'drop IW3 ns-2 ours RFC':>23} | {'util IW1 ns-2 ours RFC':>22}")  # fmt: skip
        for w, f in ROWS:
            a1, a3 = got["ns2"][(w, f, 1, m)], got["ns2"][(w, f, 3, m)]
            b1, b3 = got["tcplab"][(w, f, 1, m)], got["tcplab"][(w, f, 3, m)]
            rd, (ru, rdrop) = RFC_DELAY["1.0"][(w, f)], RFC_UTIL_DROP[(w, f)]
            dec = lambda x1, x3: 100.0 * (1.0 - mean(x3, 0) / mean(x1, 0))  # noqa: E731
            print(f"{w:>6}/{f} | {mean(a1, 0):8.2f} {mean(b1, 0):5.2f} {rd[0]:5.2f} | {dec(a1, a3):6.1f} {dec(b1, b3):5.1f} {rd[2]:5.1f} | "
                  f"{mean(a1, 1):9.2f} {mean(b1, 1):5.2f} {rdrop[0]:5.1f} | {mean(a3, 1):9.2f} {mean(b3, 1):5.2f} {rdrop[2]:5.1f} | "
                  f"{mean(a1, 2):8.1f} {mean(b1, 2):5.1f} {ru[0]:5d}")  # fmt: skip
    print(f"\nCPU seconds, all runs: ns-2 {cpu['ns2']:.1f} (its processes), tcplab {cpu['tcplab']:.1f} (its tcplab.run calls): "
          f"{cpu['ns2'] / cpu['tcplab']:.0f}x")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
