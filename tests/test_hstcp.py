"""The HSTCP web100 study: its helpers on hand-made series, and its checks."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from tcplab.studies import hstcp


def test_sawtooth_counts_peaks_with_hysteresis() -> None:
    # Three teeth 100 -> 200, with a 3% wobble on the way up that is not a peak.
    up = list(np.linspace(100, 200, 21))
    up[10] *= 0.97
    series = up + up + up + [150.0]
    peaks, troughs = hstcp.sawtooth(series)
    assert peaks == [200.0, 200.0, 200.0]
    assert troughs == [100.0, 100.0]


def test_knee_finds_the_bend_of_a_clipped_line() -> None:
    cwnd = np.arange(60e3, 400e3, 5e3)
    bw = 0.45 * np.minimum(cwnd, 200e3)
    assert hstcp.knee(cwnd, bw) == 200e3


def test_quick_reproduction_meets_every_check(tmp_path) -> None:
    res = hstcp.reproduce(quick=True, out=tmp_path, progress=False)
    assert [ok for _, ok, _ in res["checks"]] == [True] * 6, res["checks"]
    assert [type(ok) for _, ok, _ in res["checks"]] == [bool] * 6  # not numpy.bool_
    per = res["tables"]["per_run"].set_index("stack")
    # Pinned figures of the model (one run per stack, seed 1).
    assert per.loc["standard", "peaks"] == 4 and per.loc["hstcp", "peaks"] == 10
    assert per.loc["standard", "retx_pct"] == 0.0 and per.loc["hstcp", "retx_pct"] == 0.0
    assert round(per.loc["standard", "cwnd_max_kB"]) == 334
    assert per.loc["standard", "acks_per_data_ss"] == 0.5 and per.loc["standard", "acks_per_data_ca"] == 1.0
    assert len(res["tables"]["sensitivity"]) == len(hstcp.SENSITIVITY)
    report = (tmp_path / "report.md").read_text()
    assert "## Model parameters and their sources" in report and "txqueuelen" in report
    assert ("median 17-22 ms**: standard TCP's mode 16 ms and median 21.8 ms, HSTCP's 26 ms and 22.6 ms. For standard "
            "TCP the mode") in report and "(its troughs are 199 kB)" in report
    # It said "20 runs (3 per stack, seeds 1-3)", the sensitivity table's runs counted as the stacks'.
    n_sens = 2 * len(hstcp.SENSITIVITY)
    assert f"{2 + n_sens} runs in " in report and f" s: 1 per stack (seed 1), and {n_sens} for the sensitivity table. " in report
    for view in ("cwnd", "bw", "bw-cwnd", "rtt", "acks"):
        assert (tmp_path / f"web100-{view}.png").stat().st_size > 10_000


def test_a_study_does_not_write_over_another_studys_directory(tmp_path, monkeypatch) -> None:
    """Every study writes report.md, per_run.csv and sensitivity.csv: one run
    into another study's directory wrote over its report. It is refused
    before anything runs; the same study (or a variation) goes on as before."""
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["reproduce", "hstcp", "--quick", "-q", "--out", "x"]).exit_code == 0
    report = (tmp_path / "x" / "report.md").read_text()
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "-q", "--out", "x"])
    assert (r.exit_code, r.output) == (2, "error: --out 'x': holds the results of hstcp (its report, x/report.md), whose report and tables iw10's "
                                          "would write over; give iw10 a directory of its own, such as iw10-out\n")  # fmt: skip
    assert (tmp_path / "x" / "report.md").read_text() == report and not (tmp_path / "x" / "iw10.duckdb").exists()
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "goyal98.duckdb").write_bytes(b"")
    with pytest.raises(tcplab.UsageError) as e:
        hstcp.reproduce(quick=True, out=tmp_path / "y")
    assert str(e.value) == (f"invalid argument: out = '{tmp_path / 'y'}': holds the results of goyal98 ({tmp_path / 'y' / 'goyal98.duckdb'}), "
                            "whose report and tables hstcp's would write over; give hstcp a directory of its own, such as hstcp-out")
    r = CliRunner().invoke(main, ["reproduce", "hstcp", "--quick", "-q", "--out", "x", "--set", "tcp.mss=1000"])
    assert r.exit_code == 0, r.output
    # quick="no" was true enough to run the quick mode.
    with pytest.raises(tcplab.UsageError) as e:
        hstcp.reproduce(quick="no", out=tmp_path / "z")
    assert str(e.value) == "invalid argument: quick = 'no': expected True or False" and not (tmp_path / "z").exists()


def test_the_rtt_reading_says_which_stack_drains_its_queue() -> None:
    """The report quoted only standard TCP's RTT mode (16 ms) against the
    study's; HSTCP's is 26 ms, as its troughs stay above the path's BDP."""
    assert hstcp.rtt_reading(150, 180, 188) == (
        "The mode is the part of each cycle in which the window is below the BDP (188 kB of payload) and the queue "
        "empty; the rest spreads up to a full queue's RTT.")
    assert hstcp.rtt_reading(167, 199, 188).startswith(
        "For standard TCP the mode is the part of each cycle in which the window is below the BDP (188 kB of payload) "
        "and the queue empty; the rest spreads up to a full queue's RTT. HSTCP's window does not fall below the BDP "
        "after slow start (its troughs are 199 kB), so its queue never empties: its RTTs spread almost evenly")
    assert hstcp.rtt_reading(236, 290, 188).startswith(
        "Neither window falls below the BDP (188 kB of payload) after slow start (troughs 236 and 290 kB), so the "
        "queue never empties: RTTs spread")


def test_the_reading_uses_the_interface_queue_the_runs_had(tmp_path) -> None:
    """A variation with another txqueuelen was read against 100 packets: the
    reading's predicted peak (333 kB) and RTT range belonged to the study's."""
    assert hstcp.txqueuelen() == 100.0
    assert hstcp.txqueuelen({"topology.left_access.queue": "50pkt"}) == 50.0
    assert hstcp.txqueuelen({"topology.left_access.queue": f"{60 * hstcp.FRAME_BYTES}B"}) == 60.0
    assert hstcp.txqueuelen({"topology.left_access.queue": {"type": "red", "limit": "70pkt"}}) == 70.0
    hstcp.reproduce(quick=True, out=tmp_path, progress=False, overrides={"topology.left_access.queue": "50pkt"})
    report = (tmp_path / "report.md").read_text()
    assert ("Add the 50 packets of the sender's interface queue (Linux's txqueuelen; 72 kB) and the window at which the queue "
            "refuses a segment is about 261 kB: the study's 340-350 kB peaks (ours: 262 and 261 kB). A full queue adds 6.2 ms, "
            "so RTTs range from 16 to about 22 ms") in report
