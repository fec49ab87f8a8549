"""The IW10 study (Järvinen et al. 2010): wireless profiles, per-burst
metrics, signs, the slides' cells, and a closed form for one flow on EDGE."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import tcplab
from tcplab.studies import iw10


def _flows(rows: list[tuple[float, float, int]]) -> pd.DataFrame:
    """Flows as (start_s, end_s, bytes), all completed, no losses."""
    return pd.DataFrame([{"start_s": s, "end_s": e, "fct_s": e - s, "bytes_delivered": b, "completed": True, "timeouts": 0, "retx_pkts": 0}
                         for s, e, b in rows])  # fmt: skip


def test_burst_metrics_on_hand_built_flows() -> None:
    # Two flows of 90 kB from 1.0 s: one done at 2.0 s (720 kb/s), one at 3.0 s (360 kb/s).
    m = iw10.burst_metrics(_flows([(1.0, 2.0, 90_000), (1.0, 3.0, 90_000)]))
    assert m["elapsed"] == pytest.approx(2.0)
    # Jain: (720 + 360)^2 / (2 (720^2 + 360^2)) = 0.9.
    assert m["fair_within"] == pytest.approx(0.9)
    assert m["longest_tput"] == pytest.approx(360_000)
    # Fairness between bursts: Jain of the two bursts' longest flows.
    other = iw10.burst_metrics(_flows([(1.5, 4.5, 90_000), (1.5, 3.0, 90_000)]))
    assert other["longest_tput"] == pytest.approx(240_000)
    assert iw10.jain([m["longest_tput"], other["longest_tput"]]) == pytest.approx(600**2 / (2 * (360**2 + 240**2)))


def test_an_unfinished_burst_has_no_elapsed_time_and_one_flow_no_fairness() -> None:
    f = _flows([(0.0, 1.0, 1000), (0.0, 2.0, 1000)])
    f.loc[1, ["completed", "end_s", "fct_s"]] = [False, math.nan, math.nan]
    assert math.isnan(iw10.burst_metrics(f)["elapsed"])
    assert math.isnan(iw10.burst_metrics(_flows([(0.0, 1.0, 1000)]))["fair_within"])


def test_an_unfinished_burst_counts_as_slower_than_every_finished_one() -> None:
    # Four runs of one case per IW: IW 3's fourth burst never finished.
    rows = [{"workload": "bulk+n", "profile": "edge", "buffer": "bdp", "n": 2, "burst": "later", "iw": iw, "elapsed": e,
             "fair_within": f, "fair_between": math.nan}
            for iw, es in ((3, [10.0, 20.0, 30.0, math.nan]), (10, [12.0, 14.0, 16.0, 18.0]))
            for e, f in zip(es, [0.9, 0.8, 0.7, math.nan if math.isnan(es[3]) else 0.6])]  # fmt: skip
    el = iw10.quartile_table(pd.DataFrame(rows), "elapsed").iloc[0]
    # IW 3: 10, 20, 30, unfinished -> 17.5, 25, inf (leaving it out gave 15, 20, 25).
    assert (el.iw3_q1, el.iw3_median, el.iw3_q3, el.iw3_unfinished) == (17.5, 25.0, math.inf, 1)
    assert (el.iw10_q1, el.iw10_median, el.iw10_q3, el.iw10_unfinished) == (13.5, 15.0, 16.5, 0)
    assert el.signs == "+++"
    # Fairness leaves the unfinished run out: IW 3's 0.9, 0.8, 0.7.
    fw = iw10.quartile_table(pd.DataFrame(rows), "fair_within").iloc[0]
    assert (fw.iw3_q1, fw.iw3_median, fw.iw3_q3, fw.iw3_unfinished) == (pytest.approx(0.75), pytest.approx(0.8), pytest.approx(0.85), 1)


def test_the_lte_named_cases_say_how_many_runs_lose_and_how_slow_they_are() -> None:
    # Four runs per IW of LTE 6+6 (no loss) and 18+18, where one IW 10 run
    # loses packets and takes 3.2 s. The report said such losses were
    # "recovered within the burst": in the study they took up to 3.3 s.
    rows = []
    for n in (6, 18):
        for iw in (3, 10):
            for r in range(4):
                lossy = n == 18 and iw == 10 and r == 3
                for burst in ("first", "later"):
                    elapsed = 3.2 if lossy else (0.095 if iw == 3 else 0.056)
                    rows.append({"run_id": f"{n}-{iw}-{r}", "workload": "n+n", "profile": "lte", "buffer": "bdp", "n": n, "iw": iw,
                                 "burst": burst, "elapsed": elapsed, "fair_within": 0.9, "fair_between": 0.9, "timeouts": 1.0 if lossy else 0.0,
                                 "retx": 6.0 if lossy and burst == "later" else 0.0})  # fmt: skip
    per = pd.DataFrame(rows)
    t = {m: iw10.quartile_table(per, m) for m in ("elapsed", "fair_within", "fair_between")}
    lines = iw10.named_cases(t, per)
    six = next(line for line in lines if line.startswith("- **LTE, 6+6**"))
    assert six.endswith("median elapsed first burst 95 -> 56 ms, later 95 -> 56 ms. No run loses a packet with either IW.")
    eighteen = next(line for line in lines if line.startswith("- **LTE, 18+18**"))
    assert eighteen.endswith(
        "Retransmissions per burst 0.0 with IW3, 0.8 with IW10; median elapsed first burst 95 -> 56 ms, later 95 -> 56 ms. "
        "IW10 retransmits in 1 of its 4 runs (IW3 in 0 of 4), those whose later burst starts while the first one's windows are "
        "still queued. A burst in those runs takes up to 3200 ms, against at most 95 ms with IW3 (a flow whose whole first "
        "window is lost waits out its initial RTO), but they are too few to move the median.")  # fmt: skip


def test_the_quartile_tables_list_the_cases_in_the_slides_order() -> None:
    """The rows came in the store's order of run ids, so a case could not be
    found by eye in the report's long tables."""
    rows = []
    for workload in ("bulk+n", "n+n"):
        for profile, buffer in reversed(iw10.CASES):
            for n in (18, 2):
                for burst in ("later", "first") if workload == "n+n" else ("later",):
                    for iw in (3, 10):
                        rows.append({"workload": workload, "profile": profile, "buffer": buffer, "n": n, "iw": iw, "burst": burst,
                                     "elapsed": 1.0, "fair_within": 0.9, "fair_between": 0.9})  # fmt: skip
    per = pd.DataFrame(rows).sample(frac=1.0, random_state=1)
    el = iw10.quartile_table(per, "elapsed")
    keys = list(zip(el.workload, el.profile, el.buffer, el.n, el.burst))
    assert keys[:5] == [("n+n", "edge", "bdp", 2, "first"), ("n+n", "edge", "bdp", 2, "later"), ("n+n", "edge", "bdp", 18, "first"),
                        ("n+n", "edge", "bdp", 18, "later"), ("n+n", "edge", "large", 2, "first")]  # fmt: skip
    assert keys[20] == ("bulk+n", "edge", "bdp", 2, "later") and keys[-1] == ("bulk+n", "lte", "bdp", 18, "later") and len(keys) == 30
    fb = iw10.quartile_table(per, "fair_between")
    assert list(zip(fb.profile, fb.buffer, fb.n))[:3] == [("edge", "bdp", 2), ("edge", "bdp", 18), ("edge", "large", 2)]


@pytest.mark.parametrize("iw3, iw10_, metric, s", [
    (math.inf, 9.4, "elapsed", "+"), (9.4, math.inf, "elapsed", "-"), (math.inf, math.inf, "elapsed", "?"),
    (10.0, 9.4, "elapsed", "+"), (10.0, 9.6, "elapsed", "0"), (10.0, 10.6, "elapsed", "-"),
    (0.90, 0.93, "fair_within", "+"), (0.90, 0.91, "fair_within", "0"), (0.90, 0.85, "fair_between", "-"),
])  # fmt: skip
def test_signs_use_the_stated_noise_bands(iw3: float, iw10_: float, metric: str, s: str) -> None:
    assert iw10.sign(iw3, iw10_, metric) == s


def test_the_slides_cells_are_transcribed() -> None:
    cells = iw10.slides_signs()
    assert len(cells) == 42
    assert sum(c["signs"] in ("+++", "---") for c in cells) == 29
    assert all(len(c["signs"]) == 3 and set(c["signs"]) <= {"+", "-"} for c in cells)
    assert {"table": "elapsed", "workload": "bulk+n", "burst": "later", "profile": "hspa", "buffer": "bdp", "n": 18, "signs": "+++"} in cells


def test_every_case_and_the_later_start_range() -> None:
    cfg = iw10.configurations()
    assert len(cfg) == 2 * 5 * 4 * 2
    levels, sc = next((lv, s) for lv, s in cfg if lv == {"workload": "n+n", "profile": "hspa", "buffer": "bdp", "n": 6, "iw": 10})
    later = sc["apps"][1]
    assert (later["flows"], later["total"]) == (6, "180kB")
    # 2 to 6 base round trips of 2 x (11 + 70) ms.
    assert (later["start"]["min"], later["start"]["max"]) == ("0.324000s", "0.972000s")
    res = tcplab.run(sc, seed=3).flows
    assert res.start_s.nunique() == 2 and 0.324 <= res[res.app == "later"].start_s.iloc[0] <= 0.972
    # On LTE a burst is over within a few round trips of 2 x (11 + 15) ms:
    # the later one starts within the first two, but after a bulk flow within 2 to 6.
    lte = {w: next(s for lv, s in cfg if lv == {"workload": w, "profile": "lte", "buffer": "bdp", "n": 18, "iw": 3})["apps"][1]["start"]
           for w in ("n+n", "bulk+n")}  # fmt: skip
    assert (lte["n+n"]["min"], lte["n+n"]["max"], lte["bulk+n"]["min"], lte["bulk+n"]["max"]) == ("0.000000s", "0.104000s", "0.104000s", "0.312000s")


def test_a_bulk_run_stops_when_the_later_burst_has_finished() -> None:
    sc = iw10.scenario("hspa", "bdp", "bulk+n", 2, 10)
    assert sc["sim"] == {"duration": "900s", "until": ["later"], "seed": 1}
    r = tcplab.run(sc, seed=3)
    later = r.flows[r.flows.app == "later"]
    assert later.completed.all() and r.engine["sim_seconds"] == later.end_s.max() < 60


def _edge_closed_form(iw: int) -> float:
    """Completion of one 180 kB flow on an idle EDGE path, packet by packet:
    segment i leaves the server at 0 (i < IW) or when the ACK of segment
    (i - IW) // 2 returns (slow start with byte counting: each ACK of a full
    segment releases two); every link is FIFO; the receiver ACKs every segment."""
    mss, hdr, total = 1460, 40, 180_000
    sizes = [mss] * (total // mss) + ([total % mss] if total % mss else [])
    ser = lambda bytes_, rate: (bytes_ + hdr) * 8 / rate  # noqa: E731
    ack_back = ser(0, 160e3) + 0.250 + ser(0, 100e6) + 0.011  # uplink 2 ms + 250 ms, then 3.2 us + 11 ms
    acc_end = wl_end = up_end = 0.0
    ack_at: list[float] = []
    arrive = 0.0
    for i, b in enumerate(sizes):
        send = 0.0 if i < iw else ack_at[(i - iw) // 2]
        acc_end = max(send, acc_end) + ser(b, 100e6)
        wl_end = max(acc_end + 0.011, wl_end) + ser(b, 160e3)
        arrive = wl_end + 0.250
        up_end = max(arrive, up_end) + ser(0, 160e3)
        ack_at.append(up_end - ser(0, 160e3) + ack_back)
    return arrive


@pytest.mark.parametrize("iw", [3, 10])
def test_one_flow_on_an_idle_edge_link_matches_the_closed_form(iw: int) -> None:
    sc = {
        "sim": {"duration": "none"},
        "topology": {"type": "wireless", "profile": "edge", "buffer": "1000pkt"},
        "tcp": {**iw10.TCP, "iw": iw, "delayed_ack": False},
        "apps": [{"type": "bulk", "src": "s0", "dst": "m0", "size": "180kB"}],
    }
    fct = float(tcplab.run(sc).flows.fct_s.iloc[0])
    assert fct == pytest.approx(_edge_closed_form(iw), abs=1e-6)


def test_iw10_saves_the_first_round_trips_on_edge() -> None:
    # 180 kB at 160 kb/s is 9.3 s of serialization (124 packets of 75 ms).
    # Slow start keeps the link busy after a few round trips either way; IW10
    # saves one of the 522 ms round trips IW3 spends idle: 10.03 s against 9.51 s.
    assert _edge_closed_form(3) == pytest.approx(10.0324, abs=1e-4)
    assert _edge_closed_form(3) - _edge_closed_form(10) == pytest.approx(0.5232, abs=1e-4)


def test_a_server_per_flow_gives_each_flow_of_a_burst_its_own_server() -> None:
    one = iw10.scenario("hspa", "bdp", "n+n", 6, 10)
    assert one["topology"]["servers"] == 2
    assert [(a["src"], a.get("extra_src")) for a in one["apps"]] == [("s0", None), ("s1", None)]
    each = iw10.scenario("hspa", "bdp", "n+n", 6, 10, server_per_flow=True)
    assert each["topology"]["servers"] == 12
    assert [(a["src"], a.get("extra_src")) for a in each["apps"]] == [
        ("s0", ["s1", "s2", "s3", "s4", "s5"]), ("s6", ["s7", "s8", "s9", "s10", "s11"])]
    bulk = iw10.scenario("edge", "large", "bulk+n", 2, 3, server_per_flow=True)
    assert bulk["topology"]["servers"] == 3
    assert [(a["src"], a.get("extra_src")) for a in bulk["apps"]] == [("s0", None), ("s1", ["s2"])]
    # Every flow then comes from its own server.
    f = tcplab.run(each).flows
    assert sorted(f.src) == sorted(f"s{i}" for i in range(12))
    assert (f.groupby("app").src.nunique() == 6).all()


def test_the_congestion_control_rows_run_linux_cubic_with_and_without_hystart() -> None:
    assert iw10.TCP["cc"] == "sack"
    assert [(name, tcp) for name, tcp in iw10.CC_VARIANTS] == [("CUBIC", {"cc": "cubic"}), ("CUBIC + HyStart", {"cc": "cubic", "hystart": True})]
    cfgs = iw10.configurations(tcp={"cc": "cubic", "hystart": True})
    assert len(cfgs) == len(iw10.configurations())
    # Every other TCP setting stays; the IW is the case's.
    for levels, sc in cfgs:
        assert sc["tcp"] == {**iw10.TCP, "cc": "cubic", "hystart": True, "iw": levels["iw"]}
    # The bulk flow of bulk+n on HSPA with a BDP buffer, IW 10, alone for
    # 3 s: slow start overshoots the 24-packet buffer, which drops 34 packets
    # (31 with RFC 6675's recovery, which sends nothing until pipe falls below
    # ssthresh; rate-halving sends from the start, into a buffer still full);
    # with HyStart slow start ends before the buffer fills and loses nothing.
    drops = {}
    for tcp in ({"cc": "cubic"}, {"cc": "cubic", "hystart": True}):
        sc = iw10.scenario("hspa", "bdp", "bulk+n", 1, 10, tcp=tcp)
        sc["apps"] = sc["apps"][:1]
        sc["sim"] = {"duration": "3s", "seed": 1}
        links = tcplab.run(sc).links
        drops[tcp.get("hystart", False)] = int(links.drops.sum())
    assert drops == {False: 34, True: 0}


def test_a_variant_keeps_the_runs_it_shares_with_the_main_sweep(tmp_path) -> None:
    # LTE 1+1 and 2+2 at IW 3, two replications; a server per flow changes 2+2 only.
    from tcplab.studies.common import run_configs

    def cfgs(per_flow: bool) -> list:
        return [({"workload": "n+n", "profile": "lte", "buffer": "bdp", "n": n, "iw": 3}, iw10.scenario("lte", "bdp", "n+n", n, 3, server_per_flow=per_flow))
                for n in (1, 2)]  # fmt: skip

    main = run_configs("iw10", cfgs(False), 2, True, tmp_path, 1, False)
    run = run_configs("iw10", cfgs(True), 2, True, tmp_path, 1, False, variant="-server-per-flow")
    assert (run.runs, run.skipped) == (4, 2)
    per = iw10.per_run(run.store, run.run_ids)
    assert sorted(per.groupby("n").run_id.nunique().items()) == [(1, 2), (2, 2)]
    assert len(per) == 8  # two bursts per run
    shared = set(main.run_ids) & set(run.run_ids)
    assert len(shared) == 2 and set(per[per.n == 1].run_id) == shared


def test_analyze_by_the_studys_factor_n_keeps_its_levels(tmp_path) -> None:
    """`tcplab analyze iw10.duckdb --by n,iw` showed n = 400 (the run count)
    in every row: the factor's column was overwritten by the counts. The
    count is now the column runs, and n keeps 1 and 2."""
    import json

    from click.testing import CliRunner

    from tcplab.cli import main
    from tcplab.studies.common import run_configs

    cfgs = [({"workload": "n+n", "profile": "lte", "buffer": "bdp", "n": n, "iw": iw}, iw10.scenario("lte", "bdp", "n+n", n, iw))
            for n in (1, 2) for iw in (3, 10)]  # fmt: skip
    run = run_configs("iw10", cfgs, 2, True, tmp_path, 1, False)
    r = CliRunner().invoke(main, ["analyze", str(run.store), "--metric", "completed", "--by", "n,iw", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [(x["n"], x["iw"], x["runs"], x["mean"]) for x in rows] == [(1, 3, 2, 2.0), (1, 10, 2, 2.0), (2, 3, 2, 4.0), (2, 10, 2, 4.0)]
    # A study's store written before the study kept its metrics says how to add them.
    r = CliRunner().invoke(main, ["analyze", str(run.store), "--metric", "iw10.elapsed_later_s", "--by", "n,iw"])
    assert r.exit_code == 2 and r.output.endswith(
        "power, utilization; iw10's own metrics are stored when `tcplab reproduce iw10` analyzes its runs: run it again with --out set "
        "to this store's directory (it reuses the stored runs)\n")
    # The study's own metrics, kept in the store, are the per-run table's:
    # a burst's elapsed time, fairness within it and between the bursts.
    per = iw10.per_run(run.store, run.run_ids)
    iw10.keep_run_metrics(run.store, per)
    for metric, column, burst in (("iw10.elapsed_later_s", "elapsed", "later"), ("iw10.fair_within_first", "fair_within", "first"),
                                  ("iw10.fair_between", "fair_between", "first")):  # fmt: skip
        r = CliRunner().invoke(main, ["analyze", str(run.store), "--metric", metric, "--by", "n,iw", "--json"])
        assert r.exit_code == 0, r.output
        got = [(x["n"], x["iw"], x["runs"], x["min"], x["max"]) for x in json.loads(r.stdout)]
        want = per[per.burst == burst].groupby(["n", "iw"])[column].agg(["count", "min", "max"]).reset_index()
        assert got == [tuple(None if v != v else v for v in w) for w in want.itertuples(index=False)], metric
        # One flow has no fairness within its burst: no value, not a run left out.
        assert [g[2] for g in got] == ([0, 0, 2, 2] if column == "fair_within" else [2, 2, 2, 2])
    # The report's last section names them, with a command that runs.
    from tcplab.studies.common import store_note

    note = store_note(run)
    assert note[0] == "## The runs in the store"
    assert note[1].startswith(f"The runs are in `{tmp_path}/iw10.duckdb`, as the sweep `iw10-quick`, with each run's figures of this study beside the "
                              "generic metrics: `iw10.elapsed_first_s`, `iw10.elapsed_later_s`, `iw10.fair_between`, `iw10.fair_within_first`, "
                              "`iw10.fair_within_later`.")  # fmt: skip
    command = f"tcplab analyze {tmp_path}/iw10.duckdb --sweep iw10-quick --metric iw10.elapsed_first_s --by buffer,iw,n,profile,workload"
    assert note[2] == f"```\n{command}\n```"
    r = CliRunner().invoke(main, command.split()[1:])
    assert r.exit_code == 0 and r.stderr == "", r.output
    # A directory with a space in its name is quoted, so the command still runs as written.
    import dataclasses
    import shlex
    import shutil

    (tmp_path / "a b").mkdir()
    shutil.copy(run.store, tmp_path / "a b" / "iw10.duckdb")
    spaced = store_note(dataclasses.replace(run, out_dir=tmp_path / "a b", store=str(tmp_path / "a b" / "iw10.duckdb")))
    assert f"tcplab analyze '{tmp_path}/a b/iw10.duckdb' --sweep iw10-quick" in spaced[2]
    r = CliRunner().invoke(main, shlex.split(spaced[2].splitlines()[1])[1:])
    assert r.exit_code == 0 and r.stderr == "", r.output


def test_box_plots_count_the_runs_far_beyond_the_whisker(tmp_path, monkeypatch) -> None:
    """The boxes leave out runs beyond the whiskers (LTE 18+18's IW10 runs
    that lose a whole first window take 3.3 s against 0.06 s); those beyond
    a whisker by more than the noise band are counted at its cap, so the
    figure shows the tail the report describes."""
    import numpy as np

    from tcplab import plots

    drawn: list = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path, dpi=None: drawn.append(fig) or path)
    base = np.linspace(0.055, 0.057, 96)
    case = {"workload": "n+n", "profile": "lte", "buffer": "bdp"}
    rows = [{**case, "burst": b, "n": 18, "iw": 10, "elapsed": e, "fair_within": 0.5 if e > 3 else 0.9, "fair_between": 0.99, "completed": 1.0}
            for b in ("first", "later") for e in [*base, 0.0575, 3.1, 3.2, 3.28]]  # fmt: skip
    # One flow has no index within its burst (NaN) though it finished; a
    # burst that did not finish has no value either, and is counted in red.
    nan = float("nan")
    rows += [{**case, "burst": b, "n": 1, "iw": 3, "elapsed": 0.33, "fair_within": nan, "fair_between": 1.0, "completed": 1.0} for b in ("first", "later")]
    rows += [{**case, "burst": "first", "n": 2, "iw": 3, "elapsed": nan, "fair_within": nan, "fair_between": nan, "completed": 0.0}]
    iw10.figures(pd.DataFrame(rows), tmp_path)
    elapsed, within = drawn[0], drawn[2]  # n+n; the LTE panels are the last of each row
    for ax in (elapsed.axes[4], elapsed.axes[9]):
        assert [t.get_text() for t in ax.texts if t.get_color() == "dimgrey"] == ["+3"]  # 0.0575 s is within 5% of the whisker's end, 3.1-3.28 s are not
    assert all(not ax.texts for ax in elapsed.axes[:4])
    # The unfinished 2+2 burst is the only red count, in both figures (the
    # 1+1 bursts' missing index was counted as 100 unfinished runs).
    for fig in (elapsed, within):
        assert [(t.get_text(), t.xy[0]) for t in fig.axes[4].texts if t.get_color() == "tab:red"] == [("1", 3)]
    assert "1+1: one flow, no index" in within._suptitle.get_text()
    # Fairness between bursts is an index of both bursts: its panels named the later one.
    assert [ax.get_title() for ax in drawn[3].axes] == ["EDGE bdp", "EDGE large", "HSPA bdp", "HSPA large", "LTE bdp"]
    assert [elapsed.axes[k].get_title() for k in (0, 9)] == ["EDGE bdp (first burst)", "LTE bdp (later burst)"]
    # For fairness the bad tail is below: the slow runs' index of 0.5 under a whisker at 0.9.
    assert [(t.get_text(), t.get_va()) for t in within.axes[4].texts if t.get_color() == "dimgrey"] == [("+3", "top")]


def test_the_checks_count_the_median_signs_and_say_their_criterion() -> None:
    """Each conclusion holds when, at the median, more cells move its way
    than the other way; the names say so (they did not)."""
    def table(rows):
        return pd.DataFrame(rows, columns=["workload", "n", "signs"])

    t = {
        "slides": pd.DataFrame({"uniform": [True] * 4 + [False], "median_agrees": [True, True, True, False, True],
                                "all_agree": [True, False, False, False, False]}),
        # n <= 2: the middle signs are + + - 0 (2 better, 1 worse); 18+18: - - + (2 worse).
        "elapsed": table([("n+n", 1, "-+-"), ("n+n", 2, "++-"), ("bulk+n", 1, "+-+"), ("bulk+n", 2, "000"),
                          ("n+n", 18, "---"), ("n+n", 18, "0-0"), ("n+n", 18, "+++"), ("bulk+n", 18, "---"), ("n+n", 6, "---")]),
        "fair_between": table([("n+n", 1, "+0+"), ("n+n", 2, "0-0"), ("n+n", 6, "000")]),  # 0 better, 1 worse
        "fair_within": table([("n+n", 2, "---"), ("n+n", 6, "-+-"), ("n+n", 18, "+--")]),  # 2 worse, 1 better
    }
    out = iw10.checks(t, pd.DataFrame())
    assert [ok for _, ok, _ in out] == [True, True, True, False, True] and [type(ok) for _, ok, _ in out] == [bool] * 5
    assert out[0][2] == "3 of 4 (75%); all 5 three-sign cells: median 4, all three quartiles 1"
    assert out[1] == ("Conclusion 1: with few flows (n = 1, 2) IW10 improves the elapsed time (at the median, better in more cells "
                      "than worse)", True, "better in 2, worse in 1 of 4 cells")
    assert out[2][2] == "worse in 2, better in 1 of 3 cells (both bursts, every link)"
    assert out[3][1:] == (False, "better in 0, worse in 1 of 3 cells")
    assert out[4][0].endswith("(at the median, worse in more cells than better)") and out[4][2] == "worse in 2, better in 1 of 3 cells"
