"""tcplab against ns-2 2.35's one-way TCP agents, packet by packet, on Fall
and Floyd's drop patterns (`examples/fall-floyd-drops.toml`).

`tests/data/ns2_fall_floyd.csv` holds ns-2's departures and drops at the
slow link, written by `benchmarks/ns2_fall_floyd.py --write-reference` from
`benchmarks/ns2/fall_floyd.tcl`; ns-2 is not needed here. tcplab runs with
the settings ns-2's defaults amount to (`NS2_SETTINGS`). DEVELOPERS.md
("Checked against ns-2") explains the differences that remain."""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import ns2_fall_floyd as ff  # noqa: E402


def _reference() -> dict[tuple[str, int], list[tuple[str, float, int]]]:
    ref: dict[tuple[str, int], list[tuple[str, float, int]]] = defaultdict(list)
    with open(ROOT / "tests" / "data" / "ns2_fall_floyd.csv", newline="") as f:
        rows = csv.DictReader(ln for ln in f if not ln.startswith("#"))
        for r in rows:
            ref[(r["variant"], int(r["drops"]))].append((r["event"], float(r["t"]), int(r["seq"])))
    return ref


REF = _reference()
SACK_NS2 = {"tcp.sack_recovery": "ns2-1998"}
NEWRENO_NS2 = {"tcp.newreno_recovery": "ns2-1998"}


def test_the_reference_holds_every_case_with_its_drops():
    assert sorted(REF) == [(v, n) for v in sorted(ff.VARIANTS) for n in (1, 2, 3, 4)]
    for (v, n), trace in REF.items():
        drops = [seq for ev, _, seq in trace if ev == "d"]
        assert drops == [d - 1 for d in ff.DROPS[n]], (v, n)


@pytest.mark.parametrize(
    "variant,ndrops,overrides",
    [("tahoe", n, {}) for n in (1, 2, 3, 4)]
    + [("newreno", 1, NEWRENO_NS2), ("sack", 1, {}), ("sack", 1, SACK_NS2)],
)
def test_tcplab_sends_what_ns2_sends_packet_for_packet(variant, ndrops, overrides):
    """Every departure and drop at r1->k1 over 3 s: the same segment at the same microsecond."""
    ours = ff.tcplab_trace(variant, ndrops, overrides)
    ref = REF[(variant, ndrops)]
    assert len(ours) == len(ref) > 100
    assert ff.identical_prefix(ref, ours) == len(ref)


@pytest.mark.parametrize(
    "variant,ndrops,overrides",
    [("reno", n, {}) for n in (1, 2, 3, 4)]
    + [("newreno", n, o) for n in (2, 3, 4) for o in ({}, NEWRENO_NS2)]
    + [("newreno", 1, {})]
    + [("sack", n, o) for n in (2, 3, 4) for o in ({}, SACK_NS2)],
)
def test_the_other_cases_agree_through_the_first_fast_retransmit(variant, ndrops, overrides):
    """Slow start, the drops, the fast retransmit of the first loss: 40 events alike to the microsecond."""
    ours = ff.tcplab_trace(variant, ndrops, overrides)
    ref = REF[(variant, ndrops)]
    same = ff.identical_prefix(ref, ours)
    assert same >= 40
    assert ref[39] == ours[39] == ("-", 1.14474, 19)  # the retransmission of the first loss


@pytest.mark.parametrize("ndrops", [2, 3, 4])
def test_ns2_sack1_recovery_sends_ns2s_segments_in_ns2s_order(ndrops):
    """With ns-2's Sack1 recovery the segments follow ns-2's order throughout; the times
    differ by the ACKs' SACK option bytes and, after recovery, by a round of growth."""
    ours = ff.tcplab_trace("sack", ndrops, SACK_NS2)
    ref = REF[("sack", ndrops)]
    assert len(ours) > 120
    assert ff.identical_prefix(ref, ours, tol=float("inf")) == len(ours)


@pytest.mark.parametrize("ndrops", [3, 4])
def test_rfc6582_newreno_times_out_where_ns2s_newreno_does(ndrops):
    """Only the first partial ACK restarts the timer (RFC 6582's Impatient variant, ns-2's
    newreno_changes1_): the timer fires before the third retransmission, 0.71 ms earlier than
    ns-2's (its RTO in whole ticks), and every segment ns-2 sends follows in ns-2's order."""
    ours = ff.tcplab_trace("newreno", ndrops, {})
    ref = REF[("newreno", ndrops)]
    same = ff.identical_prefix(ref, ours)
    assert (ref[same], ours[same]) == (("-", 1.70382, 23), ("-", 1.703107, 23))
    assert ff.identical_prefix(ref, ours, tol=float("inf")) == len(ref) < len(ours)
