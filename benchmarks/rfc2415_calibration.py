#!/usr/bin/env python3
"""The whole RFC 2415 study with other values of its calibration, and its checks.

`tcplab reproduce rfc2415` runs the model as calibrated
(`tcplab.studies.rfc2415.CALIBRATION`). This runs the same configurations
(Tables 1-6 and the RED runs) with some of those values replaced, through the
sweep machinery into OUT/rfc2415.duckdb (a killed run resumes), and prints
the study's acceptance checks. Keys are CALIBRATION's, plus `embedded_start`
(`after_primary` or `with_primary`: when an HTTP/1.0 page asks for its
embedded objects; the RFC's HTTP/1.1 model always asks once the primary is
in). Sizes take a scenario's size distribution. It writes no report: the
report describes the model as calibrated.

    # the report's "Drops from bursts, not load": a page's four objects at once
    python benchmarks/rfc2415_calibration.py --jobs 2 --set embedded_start=with_primary \\
        --set think_from=end --set ftp_persistent=true \\
        --set 'primary={"type": "pareto", "median": "1900B", "shape": 1.2, "max": "10MB"}' \\
        --set 'object={"type": "pareto", "median": "1900B", "shape": 1.2, "max": "10MB"}'

It asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys


def parse_set(text: str) -> tuple[str, object]:
    """KEY=VALUE, the value read as JSON when it is JSON and as a string otherwise."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: expected KEY=VALUE, such as think_from=end")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main() -> int:
    from tcplab.studies import rfc2415

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", dest="sets", type=parse_set, action="append", default=[], metavar="KEY=VALUE",
                    help="replace a calibration value (repeatable)")
    ap.add_argument("--replications", type=int, default=rfc2415.FULL["replications"])
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--out", default="rfc2415-calibration-out")
    args = ap.parse_args()
    allowed = set(rfc2415.CALIBRATION) | {"embedded_start"}
    cal = dict(args.sets)
    unknown = sorted(set(cal) - allowed)
    if unknown:
        print(f"error: --set {unknown[0]}: unknown calibration key; allowed: {', '.join(sorted(allowed))}", file=sys.stderr)
        return 2
    from tcplab.errors import TcplabError
    from tcplab.studies.common import run_configs

    tag = hashlib.sha256(json.dumps(cal, sort_keys=True).encode()).hexdigest()[:10]
    try:
        run = run_configs("rfc2415", rfc2415.configurations(rfc2415.FULL["duration"], cal), args.replications, False,
                          args.out, args.jobs, True, variant=f"-calibration-{tag}")
    except TcplabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    per = rfc2415.per_run(run.store, None, run.run_ids)
    t = rfc2415.tables(per)
    print(f"calibration: {json.dumps(cal, sort_keys=True)}; {args.replications} replications")
    for name, ok, detail in rfc2415.checks(t, per):
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
