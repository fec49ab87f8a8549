"""ATM links, UBR switch ports, the SPECweb96-like workload and the goyal98 study's arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tcplab
from tcplab.studies import goyal98

from .conftest import dumbbell


def _atm(policy: str = "epd", buffer: int = 2000, n: int = 1, duration: str = "5s", window: str = "4MiB") -> dict:
    sc = dumbbell(left=n, right=n, bottleneck_rate="45Mbps", bottleneck_delay="5ms", access_rate="155Mbps",
                  access_delay="0.01ms", access_queue="100000pkt", duration=duration,
                  tcp={"cc": "sack", "mss": "1024B", "window": window, "ssthresh": "bdp"},
                  apps=[{"type": "bulk", "name": f"b{i}", "src": f"s{i}", "dst": f"k{i}", "size": "inf"} for i in range(n)])  # fmt: skip
    sc["topology"]["atm"] = True
    sc["topology"]["bottleneck"]["queue"] = {"type": "ubr", "buffer": buffer, "policy": policy}
    return sc


def test_one_flow_reaches_the_t3s_goodput_after_the_cell_tax() -> None:
    # A lone flow whose window (100 KiB) fits the path (56 kB) plus the
    # buffer (2000 cells, 86 frames): the T3 is busy, and 1024 of every
    # 23 x 53 = 1219 bytes are goodput: 37.80 Mb/s.
    res = tcplab.run(_atm(duration="10s", window="100KiB"))
    f = res.flows.iloc[0]
    assert f.retx_pkts == 0
    port = res.ports.iloc[0]
    assert (port.early_drops, port.ppd_frames, port.dropped_cells) == (0, 0, 0)
    t3 = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
    assert t3.utilization > 0.98
    # Cells: every frame of 1064 bytes is 23 cells; the run ends inside the last one.
    assert port.frames_out == port.frames - 1
    assert 23 * port.frames_out < port.cells_in < 23 * port.frames
    late = f.bytes_delivered * 8 / 10
    assert 37.0e6 < late <= goyal98.capacity_bps(1024)


@pytest.mark.parametrize("policy", ["ubr", "epd", "sd"])
def test_ports_conserve_frames_and_cells(policy: str) -> None:
    res = tcplab.run(_atm(policy=policy, buffer=300, n=8))
    port = res.ports.iloc[0]
    t3 = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
    assert t3.arrivals == port.frames
    assert t3.arrivals == t3.departures + t3.drops + t3.backlog_end
    assert t3.drops == port.early_drops + port.ppd_frames
    # Every frame left whole, was refused, was cut, or is still arriving
    # (at most one per access link feeding the port).
    in_progress = port.frames - port.frames_out - port.early_drops - port.ppd_frames
    assert 0 <= in_progress <= 8
    if policy == "ubr":
        assert port.early_drops == 0 and port.ppd_frames > 0 and port.wasted_cells > 0
    else:
        assert port.early_drops > 0
    assert port.vc_max_cells <= 300
    # The port's queue is counted in cells: at most the buffer less the cell
    # in transmission, and a tail drop happens only at a full buffer.
    assert t3.queue_max_bytes == 53 * t3.queue_max_pkts
    if policy == "ubr":
        assert t3.queue_max_pkts == 299
    else:
        assert 240 < t3.queue_max_pkts <= 299
    assert 0 < t3.queue_avg_pkts < t3.queue_max_pkts


def test_a_port_is_busy_while_it_sends_cells_wasted_ones_included_and_no_longer() -> None:
    # 20 frames of 193 cells at once into a 200-cell buffer on a 64 kb/s
    # port: one frame fits, the others are cut (PPD) and their queued cells
    # go out after it. Those cells were counted as sent the moment their
    # frame was lost, 1.86 s of busy time in a 1 s run.
    sc = _atm(policy="ubr", buffer=200, n=1, duration="1s")
    sc["topology"]["bottleneck"]["rate"] = "64kbps"
    sc["topology"]["left_access"]["rate"] = "10Mbps"
    sc["tcp"] = {"mss": "9180B", "iw": 10}
    sc["apps"] = [{"type": "burst", "src": "s0", "dst": "k0", "flows": 20, "size": "100kB"}]
    res = tcplab.run(sc)
    port = res.ports.iloc[0]
    assert (port.frames_out, port.ppd_frames, port.wasted_cells) == (1, 121, 156)
    # Busy from the first cell's arrival (0.01 ms of access delay and a cell
    # time at 10 Mb/s) to the end of the run.
    t = res.links[(res.links.src == "r0") & (res.links.dst == "r1")].iloc[0]
    assert t.utilization == pytest.approx(1 - (0.00001 + 53 * 8 / 10e6), abs=1e-9)


def test_a_ubr_queue_needs_an_atm_link() -> None:
    sc = _atm()
    sc["topology"]["atm"] = False
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load(sc)
    assert "topology.atm" in str(e.value) and "ubr" in str(e.value)
    sc = _atm()
    sc["topology"]["bottleneck"]["queue"]["policy"] = "fifo"
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.load(sc)
    assert "policy" in str(e.value) and "'fifo'" in str(e.value) and "epd" in str(e.value)


def test_specweb96_file_set_mean_and_class_shares() -> None:
    fs = goyal98.fileset()
    assert len(fs) == 36
    assert sum(p for _, p in fs) == pytest.approx(1.0, abs=1e-12)
    assert sum(b * p for b, p in fs) == pytest.approx(120_300, abs=1)
    # The unscaled mean is about 15,027 bytes, so every size is scaled by about 8.006.
    scale = 120_300 / 15_027.2
    shares = {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}
    for b, p in fs:
        c = int(np.floor(np.log10(b / scale / 100)))  # 102-921 B: class 0, 1024-9216 B: class 1, ...
        shares[c] += p
    assert shares == pytest.approx({0: 0.35, 1: 0.50, 2: 0.14, 3: 0.01})
    cdf = goyal98.size_cdf()
    assert cdf[0] == (fs[0][0], 0.0) and cdf[-1] == (fs[-1][0], 1.0)


def test_the_efficiency_capacity_c_for_each_mss() -> None:
    # 1024 B: 1064 + 16 = 1080 B in 23 cells; 9180 B: 9236 B in 193 cells.
    assert goyal98.capacity_bps(1024) == pytest.approx(45e6 * 1024 / (23 * 53))
    assert goyal98.capacity_bps(9180) == pytest.approx(45e6 * 9180 / (193 * 53))
    assert round(goyal98.capacity_bps(1024) / 1e6, 2) == 37.80
    assert round(goyal98.capacity_bps(9180) / 1e6, 2) == 40.39
    # A variation's fields change C: it was the T3's with the study's MSS whatever was set.
    assert goyal98.link_capacity("wan")[0] == goyal98.capacity_bps(1024)
    assert goyal98.link_capacity("geo", {"tcp.mss": "4000B"}) == (
        pytest.approx(45e6 * 4000 / (85 * 53)), {"mss": 4000, "header": 40, "rate_bps": 45_000_000, "atm": True})
    assert goyal98.link_capacity("meo", {"topology.bottleneck.rate": "90Mbps"})[0] == pytest.approx(2 * goyal98.capacity_bps(9180))
    assert goyal98.capacity_bps(1460, atm=False) == pytest.approx(45e6 * 1460 / 1500)


def test_fluid_shares_water_fill_at_every_instant() -> None:
    # Capacity 10 for 10 s. Client 0 asks 30 at 0, client 1 asks 10 at 1,
    # client 2 asks 100 at 8. 0-1 s: client 0 alone gets 10; 1-3 s: 5 each, and
    # client 1 is done; 3-4 s: client 0 gets its last 10; idle until 8; 8-10 s:
    # client 2 gets 20.
    got = goyal98.fluid_shares([(8.0, 2, 100.0), (0.0, 0, 30.0), (1.0, 1, 10.0)], 3, 10.0, 10.0)
    assert got.tolist() == pytest.approx([30.0, 10.0, 20.0])
    # Shares of the totals ignore when the demand came: client 2 would be owed 60.
    assert goyal98.waterfill([30, 10, 100], 100).tolist() == [30.0, 10.0, 60.0]
    # Two clients asking at once share equally until the smaller is done.
    assert goyal98.fluid_shares([(0.0, 0, 4.0), (0.0, 1, 100.0)], 2, 2.0, 10.0).tolist() == pytest.approx([4.0, 16.0])


def _fluid_shares_every_client(arrivals, clients, capacity, duration):
    """The plain form of goyal98.fluid_shares: every step masks and updates all clients."""
    import numpy as np

    backlog, served = np.zeros(clients), np.zeros(clients)
    t, k, arr = 0.0, 0, sorted(arrivals)
    while t < duration:
        nxt = min(arr[k][0] if k < len(arr) else duration, duration)
        while t < nxt:
            busy = backlog > 0
            if not busy.any():
                t = nxt
                break
            rate = capacity / busy.sum()
            dt = min(backlog[busy].min() / rate, nxt - t)
            served[busy] += rate * dt
            backlog[busy] -= rate * dt
            backlog[backlog <= 1e-9 * capacity] = 0.0
            t += dt
        while k < len(arr) and arr[k][0] <= t:
            backlog[arr[k][1]] += arr[k][2]
            k += 1
        if k == len(arr) and not backlog.any():
            break
    return served


def test_fluid_shares_is_the_every_client_stepping_bit_for_bit() -> None:
    """fluid_shares steps only the busy clients, in lists; its results are those of
    stepping every client's entry of NumPy arrays, to the last bit, on random loads
    (ties in time, clients that empty together, loads past the end, idle spells)."""
    import numpy as np

    rng = np.random.default_rng(3)
    for trial in range(60):
        clients = int(rng.integers(1, 40))
        n = int(rng.integers(0, 300))
        times = np.round(rng.uniform(0, 12, n), int(rng.integers(0, 3)))  # rounded: many arrivals at one time
        amounts = rng.choice([1.0, 8.0, 1000.0, 12345.678, 1e6], n) * rng.integers(1, 4, n)
        arrivals = list(zip(times.tolist(), rng.integers(0, clients, n).tolist(), amounts.tolist()))
        cap, dur = float(rng.choice([1e3, 4e4, 4.039e7])), float(rng.choice([5.0, 10.0]))
        assert goyal98.fluid_shares(arrivals, clients, cap, dur).tolist() == _fluid_shares_every_client(arrivals, clients, cap, dur).tolist()


def test_max_min_shares_by_water_filling() -> None:
    # Capacity 10 among demands 1, 2, 8, 9: 1 and 2 are met, then 7 is split: 3.5 each.
    assert goyal98.waterfill([8, 1, 9, 2], 10).tolist() == [3.5, 1.0, 3.5, 2.0]
    # Everyone fits: shares are the demands.
    assert goyal98.waterfill([1, 2, 3], 10).tolist() == [1.0, 2.0, 3.0]
    # Equal demands above capacity: equal split.
    assert goyal98.waterfill([5, 5, 5, 5], 10).tolist() == [2.5] * 4
    m = goyal98.run_metrics([1.0, 2.0, 3.5, 3.5], [1, 2, 8, 9], 10.0)
    assert m == {"efficiency": 1.0, "fairness": 1.0, "fairness_backlogged": 1.0, "backlogged": 2, "served": 1.0}
    m = goyal98.run_metrics([0.5, 2.0, 3.5, 3.5], [1, 2, 8, 9], 10.0)
    assert m["efficiency"] == pytest.approx(0.95)
    assert m["fairness"] == pytest.approx(3.5**2 / (4 * (0.25 + 3)))
    # The two clients asking 8 and 9 are backlogged (share 3.5 each) and get it;
    # the others get half and all of their demand.
    assert (m["fairness_backlogged"], m["backlogged"], m["served"]) == (1.0, 2, 0.75)
    m = goyal98.run_metrics([1.0, 2.0, 2.0, 5.0], [1, 2, 8, 9], 10.0)
    # Backlogged: x / e = 2 / 3.5 and 5 / 3.5, Jain's index (a + b)^2 / (2 (a^2 + b^2)).
    a, b = 2 / 3.5, 5 / 3.5
    assert m["fairness_backlogged"] == pytest.approx((a + b) ** 2 / (2 * (a * a + b * b)))
    # Nobody backlogged: no index.
    assert math.isnan(goyal98.run_metrics([1.0, 2.0], [1, 2], 10.0)["fairness_backlogged"])


def test_allocation_of_variation_on_a_hand_built_design() -> None:
    # y = 10 * (flavour index) + (buffer index), no policy effect, one replication:
    # the flavour and buffer shares are their sums of squares over the total.
    import pandas as pd

    rows = []
    for i, f in enumerate(goyal98.FLAVOURS):
        for j, b in enumerate(goyal98.BUFFER_LEVELS):
            for p in goyal98.POLICIES:
                rows.append({"flavour": f, "buffer": b, "policy": p, "y": 10.0 * i + j})
    shares, effects = goyal98.anova(pd.DataFrame(rows), "y")
    s = dict(zip(shares.effect, shares.percent))
    ss_f = 6 * sum((10.0 * i - 15.0) ** 2 for i in range(4))
    ss_b = 8 * sum((j - 1.0) ** 2 for j in range(3))
    assert s["flavour"] == pytest.approx(100 * ss_f / (ss_f + ss_b))
    assert s["buffer"] == pytest.approx(100 * ss_b / (ss_f + ss_b))
    assert s["policy"] == pytest.approx(0.0, abs=1e-9) and s["error"] == pytest.approx(0.0, abs=1e-9)
    sack = effects[(effects.factor == "flavour") & (effects.level == "sack")].iloc[0]
    assert sack.effect == pytest.approx(15.0)


def test_the_report_analyses_fairness_with_the_replications_as_blocks() -> None:
    # Fairness = buffer effect + a replication effect that every configuration
    # shares (common random numbers); efficiency = flavour effect + the same.
    # As error, the replications hide part of each effect; averaged per
    # configuration or removed as blocks, the effect explains all of it.
    import pandas as pd

    rows = []
    for link in goyal98.LINKS:
        for i, f in enumerate(goyal98.FLAVOURS):
            for j, b in enumerate(goyal98.BUFFER_LEVELS):
                for p in goyal98.POLICIES:
                    for rep in (0, 1):
                        rows.append({"link": link, "flavour": f, "buffer": b, "policy": p, "rep": rep,
                                     "efficiency": 0.9 + 0.01 * i + 0.03 * rep, "fairness": 0.9 + 0.01 * j + 0.05 * rep,
                                     "fairness_backlogged": 0.8 + 0.01 * j + 0.1 * (f == "vanilla"), "backlogged": 30 + 10 * rep,
                                     "served": 0.9, "offered": 1.2 if link == "wan" else 1.1})  # fmt: skip
    per = pd.DataFrame(rows)
    an = goyal98.analyses(per)
    assert goyal98.share(an, "wan", "fairness", "buffer") < 10
    bullet = next(b for b in goyal98.differences(per, an, [], []) if b.startswith("- **Nor does the analysis"))
    assert "the buffer explains 100% of WAN fairness's variation (flavour 0%)" in bullet
    assert "removed first), 100% (flavour 0%)" in bullet
    assert "the flavour 100% and 100% of MEO's efficiency variation and 100% and 100% of GEO's" in bullet
    # The offered load is the runs', not a fixed figure.
    share = next(b for b in goyal98.differences(per, an, [], []) if b.startswith("- **The flavour's share"))
    assert "the clients ask for 110-120% of C by run (means: WAN 120%, MEO 110%, GEO 110%)" in share
    made = next(b for b in goyal98.differences(per, an, [], []) if b.startswith("- **What WAN fairness"))
    assert "On average 35 of the 100 clients ask for more than their max-min share" in made
    # Flavour means: vanilla 0.9x, the others 0.8x, so the mean over flavours is 0.825 + 0.01 j.
    assert "is 0.825 / 0.835 / 0.845 at 0.5 RTT / 1 RTT / 2 RTT (vanilla 0.900 / 0.910 / 0.920)" in made
    assert "the other clients receive 90% of what they asked for. From 0.5 to 2 RTT the backlogged clients' index changes by +0.020" in made


def test_web_cycle_starts_a_page_every_cycle_open_loop() -> None:
    sc = dumbbell(duration="35s", apps=[{"type": "web", "name": "w", "src": "s0", "dst": "k0", "http": "1.1", "embedded": 4,
                                         "primary": {"type": "constant", "size": "20kB"}, "object": {"type": "constant", "size": "20kB"},
                                         "cycle": "10s", "start": "1s"}])  # fmt: skip
    pages = tcplab.run(sc).pages
    assert pages.start_s.tolist() == [1.0, 11.0, 21.0, 31.0]
    assert (pages.bytes == 100_000).all() and (pages.objects == 5).all()


def test_the_study_pipeline_from_store_to_metrics(tmp_path) -> None:
    # Two WAN configurations for 10 s through the sweep machinery and back.
    from tcplab.studies.common import run_configs

    cfgs = [({"link": "wan", "flavour": f, "buffer": "0.5 RTT", "policy": "epd"}, goyal98.scenario("wan", f, 531, "epd", duration="10s"))
            for f in ("vanilla", "sack")]  # fmt: skip
    run = run_configs("goyal98", cfgs, 1, True, tmp_path, 1, False)
    per = goyal98.per_run(run.store, run.run_ids).set_index("flavour")
    assert len(per) == 2 and run.runs == 2
    assert ((per.efficiency > 0.5) & (per.efficiency <= 1.0)).all()
    assert ((per.fairness > 0.0) & (per.fairness <= 1.0)).all()
    # Recovery by timeout only costs vanilla TCP dearly on a small WAN buffer.
    assert per.loc["sack", "efficiency"] > per.loc["vanilla", "efficiency"] + 0.05
    # A variant that changes NewReno only: vanilla and SACK are the runs
    # already stored (not run again), and still belong to the variant.
    cfgs2 = [({"link": "wan", "flavour": f, "buffer": "0.5 RTT", "policy": "epd"},
              goyal98.scenario("wan", f, 531, "epd", duration="10s", tcp={"newreno_recovery": "rfc6582"}))
             for f in ("vanilla", "newreno", "sack")]  # fmt: skip
    run2 = run_configs("goyal98", cfgs2, 1, True, tmp_path, 1, False, variant="-nr")
    assert (run2.runs, run2.skipped) == (3, 2)
    per2 = goyal98.per_run(run2.store, run2.run_ids).set_index("flavour")
    assert sorted(per2.index) == ["newreno", "sack", "vanilla"]
    assert per2.loc["sack", "efficiency"] == per.loc["sack", "efficiency"]


def test_the_flavours_reach_the_core_as_the_slides_describe_them() -> None:
    # Vanilla: no fast retransmit; NewReno: ns-2's flywheel NewReno of the
    # slides' time (slide 6); the sensitivity variant overrides it.
    core = {f: tcplab.load(goyal98.scenario("wan", f, 531, "epd")).to_core()["apps"][0]["tcp"] for f in goyal98.FLAVOURS}
    assert {f: (c["cc"], c["dupack_threshold"], c.get("newreno_recovery")) for f, c in core.items()} == {
        "vanilla": ("tahoe", 10**6, None), "reno": ("reno", 3, None), "newreno": ("newreno", 3, "ns2-1998"), "sack": ("sack", 3, None)}
    variant = tcplab.load(goyal98.scenario("wan", "newreno", 531, "epd", tcp={"newreno_recovery": "rfc6582"})).to_core()["apps"][0]["tcp"]
    assert "newreno_recovery" not in variant


def test_the_timers_are_ns2s_of_1998() -> None:
    # TcpAgent::rtt_timeout of 1998 floors the RTO at two 100 ms ticks (no
    # minrto_ yet); the initial RTO is rtxcur_init_ 6 s; the 1 s minimum is a
    # sensitivity row.
    tcp = tcplab.load(goyal98.scenario("meo", "reno", 10615, "sd")).tcp
    assert (tcp.rto_min, tcp.clock_granularity, tcp.rto_initial, tcp.rto_max) == (200_000_000, 100_000_000, 6_000_000_000, 64_000_000_000)
    # Each agent's reset draws boot_time_ within a tick: every connection's clock ticks at its own phase.
    core = tcplab.load(goyal98.scenario("meo", "reno", 10615, "sd")).to_core()["apps"][0]["tcp"]
    assert (tcp.rtt_estimator, tcp.clock_phase, core["clock_phase_random"]) == ("ns2", None, True)
    rows = dict(goyal98.SENSITIVITY)
    later = tcplab.load(goyal98.scenario("meo", "reno", 10615, "sd", tcp=rows["RTO minimum 1 s (ns-2's minrto_, from 2001)"]["tcp"])).tcp
    assert (later.rto_min, later.rto_initial) == (1_000_000_000, 6_000_000_000)


def _designed_runs(fair_newreno: float = 0.96, equal: bool = False):
    """Two replications of every configuration, y = base + flavour + buffer +
    policy effects + a replication's +-0.001: the claims' figures follow by hand."""
    import pandas as pd

    flav = {"wan": {"vanilla": -0.06, "reno": -0.01, "newreno": 0.03, "sack": 0.04},
            "meo": {"vanilla": -0.06, "reno": -0.01, "newreno": 0.02, "sack": 0.05},
            "geo": {"vanilla": -0.06, "reno": -0.01, "newreno": 0.02, "sack": 0.05}}  # fmt: skip
    buf = {"wan": 0.02, "meo": 0.01, "geo": 0.005}
    rows = []
    for link in goyal98.LINKS:
        for f in goyal98.FLAVOURS:
            for j, b in enumerate(goyal98.BUFFER_LEVELS):
                for p in goyal98.POLICIES:
                    for rep in (0, 1):
                        eff = 0.9 + flav[link][f] + buf[link] * (j - 1) + (0.001 if p == "sd" else -0.001) + (0.001 if rep else -0.001)
                        fair = {"vanilla": 0.95, "reno": 0.94, "newreno": fair_newreno, "sack": 0.93}[f] - (0.1 if link == "geo" and j == 0 else 0.0)
                        rows.append({"link": link, "flavour": f, "buffer": b, "policy": p, "rep": rep,
                                     "efficiency": 0.9 if equal else eff, "fairness": 1.0 if equal else fair})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_slides_claims_on_a_designed_result() -> None:
    per = _designed_runs()
    an = goyal98.analyses(per)
    cl = goyal98.claims(per, an)
    assert [ok for _, ok, _ in cl] == [True, False, True, True, True, True, True, False, True]
    assert [type(ok) for _, ok, _ in cl] == [bool] * 9
    details = [d for _, _, d in cl]
    assert details[0] == "sack 0.940, newreno 0.930, reno 0.890, vanilla 0.840"
    assert details[1] == "0.5 RTT: SACK 0.920, NewReno 0.910"
    assert details[2] == "MEO SACK ahead by +0.030, GEO SACK ahead by +0.030"
    # The flavour effects sum to 0, so each buffer's mean is 0.9 + its effect.
    assert details[3] == "WAN 0.880 / 0.900 / 0.920; MEO 0.890 / 0.900 / 0.910; GEO 0.895 / 0.900 / 0.905"
    assert details[6] == "newreno 0.960, vanilla 0.950, reno 0.940, sack 0.930"
    assert details[7] == "MEO lowest 0.930, GEO lowest 0.830"
    # Shares by hand (48 runs a link): SS_flavour = 12 * sum(F^2), SS_buffer =
    # 16 * 2 * b^2, SS_policy = 24 * 2 * 0.001^2, error = 48 * 0.001^2.
    ss_f = {k: 12 * sum(v * v for v in f) for k, f in
            {"wan": (-0.06, -0.01, 0.03, 0.04), "meo": (-0.06, -0.01, 0.02, 0.05), "geo": (-0.06, -0.01, 0.02, 0.05)}.items()}  # fmt: skip
    tot = {k: ss_f[k] + 32 * b * b + 48e-6 + 48e-6 for k, b in (("wan", 0.02), ("meo", 0.01), ("geo", 0.005))}
    pct = [100 * ss_f[k] / tot[k] for k in ("wan", "meo", "geo")]
    assert details[8] == " / ".join(f"{v:.0f}%" for v in pct) == "85% / 96% / 99%"
    alloc = goyal98.allocation_checks(an)
    # WAN fairness: only the flavour varies there (newreno), so the buffer is not the largest.
    assert [ok for _, ok, _ in alloc] == [False, False, False, False]
    assert alloc[0][2] == f"ours: flavour {pct[0]:.0f}%, buffer {100 * 32 * 0.02 ** 2 / tot['wan']:.0f}%, policy 0%"


def test_a_tie_makes_no_claim_of_best_or_rising_hold() -> None:
    """Every configuration alike: no flavour is the best, nothing rises with
    the buffer, and no factor is the largest. Claims 4, 7 and 9 held on ties
    (>= and a sort's first place)."""
    per = _designed_runs(equal=True)
    an = goyal98.analyses(per)
    assert [ok for _, ok, _ in goyal98.claims(per, an)] == [False, False, False, False, True, True, False, True, False]
    assert [ok for _, ok, _ in goyal98.allocation_checks(an)] == [False] * 4
    # The slides' "at least as efficient" (claim 6) holds on a tie, as it says.
    assert goyal98.claims(per, an)[5][2] == "SD 0.900, EPD 0.900"


def test_the_study_writes_its_tables_figures_and_report(tmp_path, monkeypatch) -> None:
    # A much smaller study (4 clients, 10 s), to pin the wiring from the runs
    # to the report, not the science.
    monkeypatch.setattr(goyal98, "N", 4)
    monkeypatch.setattr(goyal98, "DURATION", "10s")
    res = goyal98.reproduce(quick=True, jobs=2, out=tmp_path / "g", progress=False)
    out = tmp_path / "g"
    for name in ("per_run", "configurations", "allocation", "effects"):
        assert len((out / f"{name}.csv").read_text().splitlines()) > 1
    for fig in ("efficiency", "fairness", "allocation"):
        assert (out / f"{fig}.png").read_bytes()[:4] == b"\x89PNG"
    checks = res["checks"]
    assert len(checks) == 4 + 9 + 1 and [type(ok) for _, ok, _ in checks] == [bool] * 14
    held = sum(ok for _, ok, _ in checks[4:13])
    assert checks[13] == ("at least 7 of the slides' 9 claims hold", held >= 7, f"{held} of 9")
    per = res["tables"]["per_run"]
    assert len(per) == 72 and set(per.link) == {"wan", "meo", "geo"} and per.run_id.is_unique
    report = (out / "report.md").read_text()
    assert report.startswith(goyal98.TITLE + "\n\nMode quick: 1 replication of each of the 72 configurations, 72 runs (0 already stored)")
    for name, ok, detail in checks[:13]:
        assert f"- {'PASS' if ok else 'FAIL'}: {name} ({detail})" in report
    assert f"## The slides' claims: {held} of 9 hold\n" in report
    assert "efficiency.png" in report and "## The runs in the store" in report


def test_a_change_that_rounds_to_zero_is_said_in_words() -> None:
    # The full study's report said "the backlogged clients' index changes by -0.000".
    assert [goyal98.by_change(d) for d in (0.02, -0.0123, -0.0001, 0.0004, 0.0)] == [
        "by +0.020", "by -0.012", "by less than 0.001", "by less than 0.001", "by less than 0.001"]
