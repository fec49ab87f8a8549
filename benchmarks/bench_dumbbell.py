#!/usr/bin/env python3
"""Long-lived Reno flows on a dumbbell: tcplab against ns-2 on the same machine.

Sender i reaches router r0 over 1 Gb/s with a 1 + (i mod 10) ms delay; the
bottleneck r0->r1 has a 50 ms delay and a DropTail queue of 100 packets; r1
reaches receiver i over 1 Gb/s with a 1 ms delay. Segments carry 1460 bytes
(1500 on the wire), windows go up to 1000 packets, flow i starts at 0.01*i s.

    A: 10 flows at 1.5 Mb/s for 360 s
    B: 100 flows at 45 Mb/s for 100 s
    C: 1000 flows at 1 Gb/s for 10 s

For each case the script runs tcplab and, when available, the same case in
ns-2 (the `ns` binary of Debian's `ns2`; `--install-ns2` installs it with
apt-get) and in ns-3 (cases A and B: `ns3_dumbbell.cc`, compiled here against
the C++ headers and libraries of the PyPI wheel `ns3`; `--install-ns3` puts
the wheel in a virtualenv under ~/.cache/tcplab-bench), interleaved, each in a
fresh process. It prints the bottleneck packets departed per wall second of the
simulation loop, the peak resident memory and the whole-process time of each,
and tcplab's ratios to each peer: loop speed, and whole-process time. tcplab's
whole process is timed two ways: `tcplab run FILE --json` on the case as a
TOML file (what a user types, as `ns FILE` for ns-2), and a Python process
calling `tcplab.run` and reading its tables as DataFrames (which imports pandas).
The two must depart the same packets.

    python benchmarks/bench_dumbbell.py                 # all cases
    python benchmarks/bench_dumbbell.py --cases B --repeat 3
    python benchmarks/bench_dumbbell.py --cases AB --install-ns2 --install-ns3
    python benchmarks/bench_dumbbell.py --scale         # 1k, 10k and 100k flows (tcplab only)
    python benchmarks/bench_dumbbell.py --scale --repeat 5   # the same, medians of 5 interleaved rounds
    python benchmarks/bench_dumbbell.py --cases B --no-ns2 --pcap --repeat 3   # the cost of captures

`--scale` runs the dumbbell with 1,000, 10,000 and 100,000 Reno flows, each
starting at a uniform time in the first second, over a 10 Gb/s bottleneck
for 2 s, and prints per run: the loop speed, the set-up time (validation,
normalization, and the core's parsing and building, up to the first event),
the results time (the core's tables, their transfer to Python, and the
DataFrames, pandas' import included: `tcplab.run` imports it beside the
loop, which the benchmark does not, so as to time the loop alone), the peak RSS of the whole process, and RSS per flow.

This is a benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

CASES = {
    "A": dict(flows=10, rate="1.5Mbps", ns2_rate="1.5Mb", duration=360),
    "B": dict(flows=100, rate="45Mbps", ns2_rate="45Mb", duration=100),
    "C": dict(flows=1000, rate="1Gbps", ns2_rate="1Gb", duration=10),
}


def tcplab_scenario(flows: int, rate: str, duration: float, **_: object) -> dict:
    return {
        "sim": {"duration": f"{duration}s", "seed": 1},
        "topology": {
            "type": "dumbbell",
            "left": flows,
            "right": flows,
            "bottleneck": {"rate": rate, "delay": "50ms", "queue": "100pkt"},
            "left_access": {"rate": "1Gbps", "delay": [f"{1 + i % 10}ms" for i in range(flows)], "queue": "10000pkt"},
            "right_access": {"rate": "1Gbps", "delay": "1ms", "queue": "10000pkt"},
        },
        "tcp": {"cc": "reno", "mss": "1460B", "header": "40B", "window": "1000pkt", "iw": 1, "rto_min": "200ms"},
        "apps": [
            {"type": "bulk", "name": f"f{i}", "src": f"s{i}", "dst": f"k{i}", "size": "inf", "start": f"{0.01 * i:.2f}s"}
            for i in range(flows)
        ],
    }


TCPLAB_CHILD = r"""
import json, sys, time
import tcplab
sc = json.loads(sys.stdin.read())
res = tcplab.run(sc, pcap=sys.argv[1] if len(sys.argv) > 1 else None)
links = res.links
b = links[(links.src == "r0") & (links.dst == "r1")].iloc[0]
print(json.dumps({"departed": int(b.departures), "loop_s": res.engine["wall_seconds"], "events": res.engine["events"]}))
"""

SCALE_FLOWS = (1_000, 10_000, 100_000)


def scale_scenario(flows: int) -> dict:
    return {
        "sim": {"duration": "2s", "seed": 1},
        "topology": {
            "type": "dumbbell", "left": flows, "right": flows,
            "bottleneck": {"rate": "10Gbps", "delay": "10ms", "queue": "10000pkt"},
            "left_access": {"rate": "10Gbps", "delay": "1ms", "queue": "1000pkt"},
            "right_access": {"rate": "10Gbps", "delay": "1ms", "queue": "1000pkt"},
        },  # fmt: skip
        "tcp": {"cc": "reno", "mss": "1460B", "window": "64KiB", "rto_min": "200ms"},
        "apps": [
            {"type": "bulk", "name": f"f{i}", "src": f"s{i}", "dst": f"k{i}", "size": "inf",
             "start": {"type": "uniform", "min": "0s", "max": "1s"}}
            for i in range(flows)
        ],  # fmt: skip
    }


SCALE_CHILD = r"""
import json, sys, time
sc_doc = json.loads(sys.stdin.read())
import tcplab
import tcplab.scenario  # the models' import is start-up, not set-up (tcplab.api no longer imports them)
from tcplab.api import Result, encode_packed, run_core_columns
t0 = time.perf_counter()
from tcplab._bulk import no_gc
with no_gc():  # as tcplab.run does
    sc = tcplab.load(sc_doc)
    t1 = time.perf_counter()
    core, blobs = encode_packed(sc.to_core(packed=True))  # as tcplab.run does
t2 = time.perf_counter()
with no_gc():
    # tcplab.run imports pandas beside the loop (at_loop); not here, so that the
    # loop is timed alone and the results time includes pandas' import.
    data = run_core_columns(core, blobs=blobs)
    del core, blobs
    t3 = time.perf_counter()
    res = Result(scenario=sc, data=data)
    flows, links = res.flows, res.links
t4 = time.perf_counter()
e = res.engine
b = links[(links.src == "r0") & (links.dst == "r1")].iloc[0]
rest = (t3 - t2) - e["setup_seconds"] - e["wall_seconds"]
print(json.dumps({"departed": int(b.departures), "dropped": int(b.drops), "loop_s": e["wall_seconds"], "events": e["events"],
                  "setup_s": (t1 - t0) + (t2 - t1) + e["setup_seconds"], "results_s": rest + (t4 - t3)}))
"""


def run_scale(flows: int) -> dict:
    out, wall, rss = run_measured([sys.executable, "-c", SCALE_CHILD], json.dumps(scale_scenario(flows)))
    d = json.loads(out.strip().splitlines()[-1])
    return {"flows": flows, **d, "pps": d["departed"] / d["loop_s"], "eps": d["events"] / d["loop_s"],
            "ev_per_pkt": d["events"] / d["departed"], "drop_pct": 100 * d["dropped"] / (d["departed"] + d["dropped"]),
            "rss_mb": rss, "process_s": wall}  # fmt: skip


def scale_table(flow_counts: tuple[int, ...], repeat: int = 1) -> list[dict]:
    """Runs each flow count `repeat` times in interleaved rounds (1k, 10k, 100k, then again), so a
    busy spell of the machine falls on every size alike, and prints each column's median over the
    runs; with more than one round, the range of the loop speed beside it."""
    runs: dict[int, list[dict]] = {n: [] for n in flow_counts}
    for _ in range(repeat):
        for n in flow_counts:
            r = run_scale(n)
            runs[n].append(r)
            print(f"  {n}: {r['departed']:,} pkts in {r['loop_s']:.2f} s loop, {r['process_s']:.1f} s process", file=sys.stderr, flush=True)
    rows = [scale_summary(runs[n]) for n in flow_counts]
    spread = repeat > 1
    hdr = (f"{'flows':>8} | {'M pkts/s':>9}{'range' if spread else '':>12}{'ns/pkt':>8}{'ev/pkt':>8}{'ns/ev':>7}{'drop %':>8} | "
           f"{'set-up s':>9}{'results s':>10} | {'peak RSS MB':>12}{'KB/flow':>9}")  # fmt: skip
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        rng = f"{r['pps_min'] / 1e6:.2f}-{r['pps_max'] / 1e6:.2f}" if spread else ""
        print(f"{r['flows']:>8,} | {r['pps'] / 1e6:>9.2f}{rng:>12}{1e9 / r['pps']:>8.0f}{r['ev_per_pkt']:>8.2f}{1e9 / r['eps']:>7.0f}"
              f"{r['drop_pct']:>8.1f} | {r['setup_s']:>9.2f}{r['results_s']:>10.2f} | {r['rss_mb']:>12.0f}{r['rss_mb'] * 1024 / r['flows']:>9.1f}")  # fmt: skip
    if len(rows) > 1:
        lo, hi = rows[0], rows[-1]
        print(f"\ncost per packet at {hi['flows']:,} flows over {lo['flows']:,}: {lo['pps'] / hi['pps']:.2f}x (medians); "
              f"per event: {lo['eps'] / hi['eps']:.2f}x")
    print(f"\nM pkts/s: bottleneck packets per wall second of the loop{', median of ' + str(repeat) + ' runs' if spread else ''}; "
          "set-up: scenario to first event;")
    print("ev/pkt: events per bottleneck packet; ns/ev: loop time per event; drop %: the bottleneck's arrivals it dropped;")
    print("results: loop end to DataFrames; RSS: the whole process, Python included.")
    return rows


def scale_summary(runs: list[dict]) -> dict:
    """The median of each measurement over a flow count's runs (the runs themselves under `runs`)."""
    pps = [r["pps"] for r in runs]
    keys = ("pps", "eps", "ev_per_pkt", "drop_pct", "loop_s", "setup_s", "results_s", "rss_mb", "process_s")
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    return {"flows": runs[0]["flows"], **med, "pps_min": min(pps), "pps_max": max(pps), "runs": runs}


NS2_TEMPLATE = r"""
set ns [new Simulator]
Agent/TCP set packetSize_ 1500
Agent/TCP set window_ 1000
Agent/TCP set windowInit_ 1
Agent/TCP set minrto_ 0.2
set N {flows}
set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 {rate} 50ms DropTail
$ns queue-limit $r0 $r1 100
$ns queue-limit $r1 $r0 100
set qmon [$ns monitor-queue $r0 $r1 ""]
for {{set i 0}} {{$i < $N}} {{incr i}} {{
    set s($i) [$ns node]
    set k($i) [$ns node]
    $ns duplex-link $s($i) $r0 1Gb [expr 1 + $i % 10]ms DropTail
    $ns duplex-link $r1 $k($i) 1Gb 1ms DropTail
    $ns queue-limit $s($i) $r0 10000
    $ns queue-limit $r1 $k($i) 10000
    set tcp($i) [new Agent/TCP/Reno]
    $ns attach-agent $s($i) $tcp($i)
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $k($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [expr 0.01 * $i] "$ftp($i) start"
}}
proc finish {{}} {{
    global qmon t0
    set dt [expr ([clock microseconds] - $t0) / 1e6]
    puts "RESULT [$qmon set pdepartures_] $dt"
    exit 0
}}
$ns at {duration} "finish"
set t0 [clock microseconds]
$ns run
"""


@dataclass
class Sample:
    departed: int
    loop_s: float
    process_s: float
    rss_mb: float

    @property
    def pps(self) -> float:
        return self.departed / self.loop_s


def run_measured(cmd: list[str], stdin_text: str | None) -> tuple[str, float, float]:
    """Run `cmd`, returning (stdout, process wall seconds, peak RSS in MB)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as fin, tempfile.TemporaryFile("w+") as fout, tempfile.TemporaryFile("w+") as ferr:
        if stdin_text is not None:
            fin.write(stdin_text)
            fin.flush()
            fin.seek(0)
        # Started as subprocess does (no Python runs in the child between fork
        # and exec, which a multi-threaded parent must not), reaped by wait4
        # for the child's own peak RSS.
        child = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr)
        _, status, ru = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        fout.seek(0)
        ferr.seek(0)
        out, err = fout.read(), ferr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err[-2000:]}")
    return out, wall, ru.ru_maxrss / 1024.0


def run_tcplab(case: dict, python: str = sys.executable, pcap: str | None = None) -> Sample:
    """One run; with `pcap`, capturing the bottleneck both ways into that directory."""
    cmd = [python, "-c", TCPLAB_CHILD] + ([pcap] if pcap else [])
    out, wall, rss = run_measured(cmd, json.dumps(tcplab_scenario(**case)))
    d = json.loads(out.strip().splitlines()[-1])
    return Sample(d["departed"], d["loop_s"], wall, rss)


def tcplab_command(python: str) -> list[str]:
    """What a user types to run a scenario file: the `tcplab` script installed
    beside `python` (or, where there is none, the same entry point through `python`)."""
    script = os.path.join(os.path.dirname(python), "tcplab")
    if os.path.exists(script):
        return [script]
    return [python, "-c", "import sys; from tcplab.cli import main; sys.argv[0] = 'tcplab'; sys.exit(main())"]


def run_tcplab_cli(case: dict, workdir: str, python: str = sys.executable) -> Sample:
    """One run of the case as a TOML file through the command line, `tcplab run
    FILE --json`: the whole process a user waits for, as `ns FILE` is for ns-2
    (start-up, validation, the loop and the results as JSON; no pandas)."""
    path = os.path.join(workdir, f"case-{case['flows']}.toml")
    if not os.path.exists(path):
        from tcplab.scenario.loading import dumps_toml

        with open(path, "w") as f:
            f.write(dumps_toml(tcplab_scenario(**case)))
    out, wall, rss = run_measured([*tcplab_command(python), "run", path, "--json"], None)
    d = json.loads(out)
    b = next(ln for ln in d["links"] if ln["src"] == "r0" and ln["dst"] == "r1")
    return Sample(int(b["departures"]), d["engine"]["wall_seconds"], wall, rss)


def run_ns2(case: dict, workdir: str) -> Sample:
    path = os.path.join(workdir, "case.tcl")
    with open(path, "w") as f:
        f.write(NS2_TEMPLATE.format(flows=case["flows"], rate=case["ns2_rate"], duration=case["duration"]))
    out, wall, rss = run_measured(["ns", path], None)
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    _, departed, loop = line.split()
    return Sample(int(departed), float(loop), wall, rss)


NS3_CASES = "AB"  # case C (1000 flows at 1 Gb/s) takes ns-3 far too long
NS3_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "tcplab-bench")
NS3_MODULES = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]


def ns3_prefix() -> str | None:
    """The `ns3` package directory of the wheel (include/ and lib64/), if installed here."""
    for python in (os.path.join(NS3_CACHE, "ns3venv", "bin", "python"), sys.executable):
        if not os.path.exists(python):
            continue
        p = subprocess.run([python, "-c", "import importlib.util as u; s = u.find_spec('ns3'); print(s.submodule_search_locations[0] if s else '')"],
                           capture_output=True, text=True)  # fmt: skip
        path = p.stdout.strip()
        if p.returncode == 0 and path and os.path.isdir(os.path.join(path, "lib64")):
            return path
    return None


def install_ns3() -> None:
    venv = os.path.join(NS3_CACHE, "ns3venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "ns3"], check=True)


def build_ns3() -> str | None:
    """Compile ns3_dumbbell.cc against the wheel; the binary's path, or None."""
    prefix = ns3_prefix()
    if prefix is None:
        return None
    libs = sorted(os.listdir(os.path.join(prefix, "lib64")))
    version = next((f[len("libns3"):].split("-")[0] for f in libs if f.startswith("libns3") and f.endswith("-core.so")), None)
    if version is None:
        return None
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ns3_dumbbell.cc")
    os.makedirs(NS3_CACHE, exist_ok=True)
    exe = os.path.join(NS3_CACHE, f"ns3_dumbbell{version}")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        lib64 = os.path.join(prefix, "lib64")
        cmd = ["g++", "-O2", "-std=c++20", "-I", os.path.join(prefix, "include"), "-o", exe, src, "-L", lib64,
               *[f"-lns3{version}-{m}" for m in NS3_MODULES], f"-Wl,-rpath,{lib64}"]  # fmt: skip
        print(f"compiling {os.path.basename(src)} against the ns3 wheel ...", file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True)
    return exe


def run_ns3(case: dict, exe: str) -> Sample:
    out, wall, rss = run_measured([exe, str(case["flows"]), case["rate"], str(case["duration"])], None)
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    _, departed, loop = line.split()
    return Sample(int(departed), float(loop), wall, rss)


def peer_row(peer: str, samples: list[Sample], row: dict) -> dict:
    """A peer's medians, and tcplab's ratios to it: loop speed, whole-process time."""
    out = {
        f"{peer}_departed": samples[0].departed,
        f"{peer}_pps": statistics.median(s.pps for s in samples),
        f"{peer}_rss_mb": max(s.rss_mb for s in samples),
        f"{peer}_process_s": statistics.median(s.process_s for s in samples),
    }
    out[f"{peer}_ratio"] = row["tcplab_pps"] / out[f"{peer}_pps"]
    out[f"{peer}_process_ratio"] = out[f"{peer}_process_s"] / row["tcplab_process_s"]
    out[f"{peer}_run_ratio"] = out[f"{peer}_process_s"] / row["tcplab_run_s"]
    return out


def install_ns2() -> None:
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "ns2"], check=True)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="ABC", help="which cases to run (default: ABC)")
    ap.add_argument("--repeat", type=positive_int, default=1, help="interleaved repetitions per case, or per flow count with --scale (median reported)")
    ap.add_argument("--no-ns2", action="store_true", help="run tcplab only")
    ap.add_argument("--install-ns2", action="store_true", help="apt-get install ns2 first if `ns` is missing")
    ap.add_argument("--no-ns3", action="store_true", help="do not run ns-3")
    ap.add_argument("--install-ns3", action="store_true", help="pip install the ns3 wheel into ~/.cache/tcplab-bench first if it is missing")
    ap.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    ap.add_argument("--pcap", action="store_true",
                    help="also run each case capturing the bottleneck (both directions) to libpcap files, interleaved, and print the captures' cost in loop time")
    ap.add_argument("--scale", action="store_true", help="the scaling table: 1k, 10k and 100k flows (tcplab only)")
    ap.add_argument("--baseline-python", metavar="PYTHON",
                    help="also run each case with the tcplab of this interpreter (another build), interleaved, and print this build's speed over it")
    args = ap.parse_args()
    if args.scale:
        rows = scale_table(SCALE_FLOWS, args.repeat)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=2)
        return 0
    if args.install_ns2 and not args.no_ns2 and shutil.which("ns") is None:
        install_ns2()
    use_ns2 = not args.no_ns2 and shutil.which("ns") is not None
    if not args.no_ns2 and not use_ns2:
        print("ns-2 (`ns`) not found: running without it (pass --install-ns2 to install it)", file=sys.stderr)
    ns3_exe = None
    if not args.no_ns3:
        if args.install_ns3 and ns3_prefix() is None:
            install_ns3()
        ns3_exe = build_ns3()
        if ns3_exe is None:
            print("the ns3 wheel was not found: running without ns-3 (pass --install-ns3 to install it)", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as wd:
        for name in args.cases:
            case = CASES[name]
            ours, cli, theirs, base, captured, three = [], [], [], [], [], []
            for _ in range(args.repeat):
                ours.append(run_tcplab(case))
                print(f"  {name}: tcplab  {ours[-1].departed:>9} pkts  {ours[-1].loop_s:8.2f} s loop", file=sys.stderr, flush=True)
                cli.append(run_tcplab_cli(case, wd))
                if cli[-1].departed != ours[-1].departed:
                    raise RuntimeError(f"case {name}: `tcplab run` departed {cli[-1].departed} packets, tcplab.run {ours[-1].departed}")
                print(f"  {name}: tcplab run {cli[-1].process_s:6.2f} s process", file=sys.stderr, flush=True)
                if args.pcap:
                    pdir = os.path.join(wd, f"pcap-{name}")
                    captured.append(run_tcplab(case, pcap=pdir))
                    size = sum(os.path.getsize(os.path.join(pdir, f)) for f in os.listdir(pdir))
                    print(f"  {name}: +pcap   {captured[-1].departed:>9} pkts  {captured[-1].loop_s:8.2f} s loop, {size / 1e6:.0f} MB of captures",
                          file=sys.stderr, flush=True)  # fmt: skip
                    shutil.rmtree(pdir)
                if args.baseline_python:
                    base.append(run_tcplab(case, args.baseline_python))
                    print(f"  {name}: baseline {base[-1].departed:>8} pkts  {base[-1].loop_s:8.2f} s loop", file=sys.stderr, flush=True)
                if use_ns2:
                    theirs.append(run_ns2(case, wd))
                    print(f"  {name}: ns-2    {theirs[-1].departed:>9} pkts  {theirs[-1].loop_s:8.2f} s loop", file=sys.stderr, flush=True)
                if ns3_exe and name in NS3_CASES:
                    three.append(run_ns3(case, ns3_exe))
                    print(f"  {name}: ns-3    {three[-1].departed:>9} pkts  {three[-1].loop_s:8.2f} s loop", file=sys.stderr, flush=True)
            row = {
                "case": name,
                **case,
                "tcplab_departed": ours[0].departed,
                "tcplab_pps": statistics.median(s.pps for s in ours),
                "tcplab_rss_mb": max(s.rss_mb for s in ours),
                "tcplab_process_s": statistics.median(s.process_s for s in ours),
                "tcplab_run_s": statistics.median(s.process_s for s in cli),
                "tcplab_run_rss_mb": max(s.rss_mb for s in cli),
            }
            if captured:
                row.update(pcap_loop_s=statistics.median(s.loop_s for s in captured),
                           pcap_overhead=statistics.median(c.loop_s / o.loop_s - 1 for o, c in zip(ours, captured)))
            if base:
                row.update(baseline_pps=statistics.median(s.pps for s in base),
                           baseline_ratio=statistics.median(o.pps / b.pps for o, b in zip(ours, base)))
            for peer, samples in (("ns2", theirs), ("ns3", three)):
                if samples:
                    row.update(peer_row(peer, samples, row))
            rows.append(row)
    print()
    hdr = f"{'case':<5}{'flows':>6}{'rate':>9}{'sim s':>7} | {'tcplab pkts':>12}{'pkts/wall s':>13}{'RSS MB':>8}{'run s':>7}{'API s':>7}"
    if use_ns2:
        hdr += f" | {'ns-2 pkts':>10}{'pkts/wall s':>13}{'RSS MB':>8} | {'ratio':>7}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        line = (f"{r['case']:<5}{r['flows']:>6}{r['rate']:>9}{r['duration']:>7} | {r['tcplab_departed']:>12,}{r['tcplab_pps']:>13,.0f}"
                f"{r['tcplab_rss_mb']:>8.0f}{r['tcplab_run_s']:>7.2f}{r['tcplab_process_s']:>7.2f}")
        if use_ns2:
            line += f" | {r['ns2_departed']:>10,}{r['ns2_pps']:>13,.0f}{r['ns2_rss_mb']:>8.0f} | {r['ns2_ratio']:>6.1f}x"
        if "pcap_overhead" in r:
            line += f" | with captures {r['pcap_loop_s']:.2f} s loop, +{100 * r['pcap_overhead']:.0f}%"
        if "baseline_ratio" in r:
            line += f" | baseline {r['baseline_pps']:>11,.0f} pkts/s, this build {r['baseline_ratio']:.3f}x"
        print(line)
    peers = [(p, lbl) for p, lbl in (("ns2", "ns-2"), ("ns3", "ns-3")) if any(f"{p}_pps" in r for r in rows)]
    if peers:
        print()
        hdr = (f"{'case':<5}{'peer':>6} | {'peer pkts':>10}{'pkts/wall s':>13}{'RSS MB':>8}{'process s':>10} | {'run s':>6}{'API s':>6} | "
               f"{'loop ratio':>11}{'run ratio':>10}{'API ratio':>10}")
        print(hdr)
        print("-" * len(hdr))
        for r in rows:
            for p, lbl in peers:
                if f"{p}_pps" not in r:
                    continue
                print(f"{r['case']:<5}{lbl:>6} | {r[p + '_departed']:>10,}{r[p + '_pps']:>13,.0f}{r[p + '_rss_mb']:>8.0f}{r[p + '_process_s']:>10.2f} | "
                      f"{r['tcplab_run_s']:>6.2f}{r['tcplab_process_s']:>6.2f} | "
                      f"{r[p + '_ratio']:>10.1f}x{r[p + '_run_ratio']:>9.1f}x{r[p + '_process_ratio']:>9.1f}x")  # fmt: skip
        print("\nloop ratio: tcplab's bottleneck packets per loop second over the peer's; run ratio and API ratio:")
        print("the peer's whole-process time (start-up, building, the loop and results) over tcplab's, as")
        print("`tcplab run FILE --json` (run s) and as a Python script calling tcplab.run (API s).")
    print("\npkts/wall s: bottleneck packets departed per wall second of the simulation loop;")
    print("RSS MB: peak resident memory of the whole process (Python and Tcl interpreters included);")
    print("run s: `tcplab run FILE --json` as a whole process; API s: a Python process that calls tcplab.run")
    print("and reads the bottleneck's row from its links DataFrame (importing pandas).")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
