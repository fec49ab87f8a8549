"""Figures and shipped examples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from tcplab import plots
from tcplab.plots import seq_plot
from tcplab.scenario.loading import dumps_toml

ROOT = Path(__file__).resolve().parent.parent
FF = str(ROOT / "examples" / "fall-floyd-drops.toml")


def test_plot_seq_writes_a_png(tmp_path) -> None:
    out = tmp_path / "seq.png"
    r = CliRunner().invoke(main, ["plot", "seq", FF, "--link", "r1->k1", "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plot_cwnd_writes_an_svg(tmp_path) -> None:
    out = tmp_path / "cwnd.svg"
    r = CliRunner().invoke(main, ["plot", "cwnd", FF, "--set", "tcp.cc=newreno", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text


def test_plot_writes_a_pdf_for_a_paper(tmp_path) -> None:
    out = tmp_path / "cwnd.pdf"
    r = CliRunner().invoke(main, ["plot", "cwnd", FF, "-o", str(out)])
    assert r.exit_code == 0, r.output
    data = out.read_bytes()
    assert data[:5] == b"%PDF-" and b"/CreationDate" not in data and data.rstrip().endswith(b"%%EOF")


@pytest.mark.parametrize("suffix", [".svg", ".png", ".pdf"])
def test_a_figure_drawn_twice_is_the_same_bytes(tmp_path, suffix) -> None:
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    for out in (a, b):
        r = CliRunner().invoke(main, ["plot", "seq", FF, "--link", "r1->k1", "-o", str(out)])
        assert r.exit_code == 0, r.output
    assert a.read_bytes() == b.read_bytes()


def test_seq_plot_marks_every_drop_and_retransmission(tmp_path) -> None:
    res = tcplab.run(FF)
    pk = res.packets
    assert (pk.event == "drop").sum() == 4
    assert ((pk.event == "dequeue") & pk.retx).sum() == res.flows.retx_pkts.iloc[0]
    seq_plot(res, tmp_path / "x.png", link="r1->k1")


@pytest.mark.parametrize("args,message", [
    (["plot", "seq", FF, "-o", "fig.jpg", "--link", "r1->k1"], "--out = 'fig.jpg': unknown figure format; allowed: .png, .svg, .pdf"),
    (["plot", "seq", FF, "-o", "fig.png"], "--link: required for an explicit topology"),
    (["plot", "seq", FF, "-o", "fig.png", "--link", "r1->k9"], "error: invalid argument: --link = 'r1->k9': no such link; links: k1->r1, r1->k1, "),
    (["plot", "seq", FF, "-o", "no/fig.png", "--link", "r1->k1"], "error: invalid argument: --out = 'no/fig.png': no such directory: 'no'\n"),
    # --app names an application of the scenario, for every figure of a run
    # (a name that matched nothing used to end in "no data packets were logged").
    (["plot", "seq", FF, "-o", "fig.png", "--link", "r1->k1", "--app", "ftp9"],
     "error: invalid argument: --app = 'ftp9': unknown application; allowed: tcp1\n"),
    (["plot", "cwnd", FF, "-o", "fig.png", "--app", "ftp9"], "error: invalid argument: --app = 'ftp9': unknown application; allowed: tcp1\n"),
    (["plot", "web100-cwnd", FF, "-o", "fig.png", "--app", "ftp9", "--app", "tcp1", "--app", "x"],
     "error: invalid argument (2 problems):\n  - --app = 'ftp9': unknown application; allowed: tcp1\n"
     "  - --app = 'x': unknown application; allowed: tcp1\n"),
])  # fmt: skip
def test_plot_bad_input_exits_2(tmp_path, monkeypatch, args, message) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert message in r.output
    assert not list(tmp_path.iterdir())


def test_a_figure_that_cannot_be_written_exits_1(tmp_path) -> None:
    (tmp_path / "d.png").mkdir()
    r = CliRunner().invoke(main, ["plot", "seq", FF, "--link", "r1->k1", "-o", str(tmp_path / "d.png")])
    assert r.exit_code == 1 and r.output == f"error: cannot write {tmp_path / 'd.png'}: Is a directory\n"


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_examples_run(path) -> None:
    res = tcplab.run(str(path))
    assert len(res.flows) >= 1 and res.flows.bytes_delivered.sum() > 0


def test_a_web100_figure_of_one_run_names_its_view_once(tmp_path) -> None:
    """One run: the figure's title names the view, and its one panel does
    not repeat it (a panel per run is titled with the run, as the studies' are)."""
    from tcplab.plots import WEB100_VIEWS

    out = tmp_path / "w.svg"
    r = CliRunner().invoke(main, ["plot", "web100-cwnd", str(ROOT / "examples" / "dumbbell-bulk.toml"), "-o", str(out), "--set", "sim.duration=2s"])
    assert r.exit_code == 0, r.output
    assert out.read_text().count(f"<!-- {WEB100_VIEWS['cwnd']} -->") == 1


def test_seq_tells_a_bursts_connections_apart_and_defaults_to_the_wireless_link(tmp_path) -> None:
    """A burst's connections share an application name: each gets its own
    colour and legend entry (they were drawn as one). A wireless topology's
    figure is of gw->m0 by default (it asked for --link)."""
    doc = {"sim": {"duration": "5s"}, "topology": {"type": "wireless", "profile": "hspa", "buffer": "bdp"},
           "apps": [{"type": "burst", "src": "s0", "dst": "m0", "flows": 2, "total": "180kB"}]}  # fmt: skip
    (tmp_path / "w.toml").write_text(dumps_toml(doc))
    out = tmp_path / "w.svg"
    r = CliRunner().invoke(main, ["plot", "seq", str(tmp_path / "w.toml"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    legend = re.findall(r"<!-- (app0[^>]*) -->", svg)
    assert legend == ["app0 flow 0 packets", "app0 flow 1 packets", "app0 flow 1 retransmissions", "app0 flow 1 drops"]
    assert "<!-- Packets leaving gw-&gt;m0 -->" in svg
    # One connection per application: a colour per application, as before.
    r = CliRunner().invoke(main, ["plot", "seq", FF, "--link", "r1->k1", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert re.findall(r"<!-- (tcp1[^>]*) -->", out.read_text()) == ["tcp1 packets", "tcp1 retransmissions", "tcp1 drops"]


BURSTS = {"topology": {"type": "wireless", "profile": "hspa", "buffer": "bdp"}, "tcp": {"iw": 10},
          "apps": [{"type": "burst", "name": "first", "src": "s0", "dst": "m0", "flows": 18, "total": "180kB"},
                   {"type": "burst", "name": "later", "src": "s0", "dst": "m0", "flows": 18, "total": "180kB", "start": "0.5s"}]}  # fmt: skip


def test_figures_of_many_connections_keep_a_legend_entry_per_application(tmp_path, monkeypatch) -> None:
    """36 connections: past MAX_FLOWS_APART a figure colours by application
    and names each once (the legend had 70 entries and covered the axes).
    Most of these connections never time a segment (each loses its window
    and Karn's rule keeps the retransmissions out): the SampleRTT histogram
    leaves them out (it failed on them with a ValueError)."""
    from tcplab.plots import MAX_FLOWS_APART

    res = tcplab.run(BURSTS, overrides={"trace.web100": True})
    assert len(res.flows) == 36 > MAX_FLOWS_APART and (res.flows.rtt_samples == 0).sum() == 28
    (tmp_path / "b.toml").write_text(dumps_toml(BURSTS))
    for figure, entries in (
        ("cwnd", ["first (18 connections) cwnd", "first (18 connections) ssthresh", "later (18 connections) cwnd", "later (18 connections) ssthresh"]),
        ("web100-cwnd", ["first (18 connections)", "later (18 connections)"]),
        ("web100-rtt", ["first (18 connections)", "later (18 connections)"]),
    ):  # fmt: skip
        out = tmp_path / f"{figure}.svg"
        r = CliRunner().invoke(main, ["plot", figure, str(tmp_path / "b.toml"), "-o", str(out)])
        assert r.exit_code == 0, r.output
        assert re.findall(r"<!-- ((?:first|later)[^>]*) -->", out.read_text()) == entries, figure
    # Up to MAX_FLOWS_APART connections, each is named by its application
    # and number, as in the cwnd figure (web100's legend said "flow 0" only).
    two = {**BURSTS, "apps": [{**a, "flows": 2} for a in BURSTS["apps"]]}
    (tmp_path / "two.toml").write_text(dumps_toml(two))
    for figure in ("web100-cwnd", "web100-rtt"):
        r = CliRunner().invoke(main, ["plot", figure, str(tmp_path / "two.toml"), "-o", str(tmp_path / "two.svg")])
        assert r.exit_code == 0, r.output
        named = re.findall(r"<!-- ((?:first|later)[^>]*) -->", (tmp_path / "two.svg").read_text())
        assert named == ["first (flow 0)", "first (flow 1)", "later (flow 2)", "later (flow 3)"], figure
    # The SampleRTT histogram draws one histogram per legend entry, of all
    # its connections' samples (it drew one per connection, 8 here, in two
    # colours).
    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path, dpi=None: drawn.append(fig) or path)
    plots.web100_plot({"": res.web100}, tmp_path / "h.svg", "rtt")
    (ax,) = drawn[0].axes
    assert [p.get_label() for p in ax.patches] == ["first (18 connections)", "later (18 connections)"]


def test_a_seq_figure_of_many_applications_names_the_marks_once(tmp_path) -> None:
    """12 applications: past MAX_FLOWS_APART, the legend names the three
    marks, not 36 entries over the axes."""
    from .conftest import dumbbell

    sc = dumbbell(left=12, right=12, duration="2s", bottleneck_queue="5pkt",
                  apps=[{"type": "bulk", "name": f"b{i}", "src": f"s{i}", "dst": f"k{i}", "size": "100kB"} for i in range(12)])  # fmt: skip
    (tmp_path / "m.toml").write_text(dumps_toml(sc))
    out = tmp_path / "m.svg"
    r = CliRunner().invoke(main, ["plot", "seq", str(tmp_path / "m.toml"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    legend = re.findall(r"<!-- ((?:packets|retransmissions|drops|b\d+)[^>]*) -->", out.read_text())
    assert legend == ["packets (12 applications; colours repeat)", "retransmissions", "drops"]
    # The per-connection figures the same way: one entry for the twelve
    # (there was one per application, 100 over the axes in a goyal98 run).
    for figure, entries in (
        ("cwnd", ["12 applications, 12 connections (colours repeat) cwnd", "12 applications, 12 connections (colours repeat) ssthresh"]),
        ("web100-cwnd", ["12 applications, 12 connections (colours repeat)"]),
    ):  # fmt: skip
        r = CliRunner().invoke(main, ["plot", figure, str(tmp_path / "m.toml"), "-o", str(out)])
        assert r.exit_code == 0, r.output
        assert re.findall(r"<!-- ((?:12 app|b\d+)[^>]*) -->", out.read_text()) == entries, figure


@pytest.mark.parametrize("figure, message", [
    ("cwnd", "nothing to draw: no trace rows of any application in the run's 60 s: no traced connection opened "
             "(or [trace] sets neither on_change nor an interval)\n"),
    ("seq", "nothing to draw: no data packets of any application crossed r1->k1 in the run's 60 s (or [trace] links does not log that link)\n"),
    ("web100-cwnd", "nothing to draw: no web100 rows: no connection was open at a sample time (or [trace] web100 is off)\n"),
])  # fmt: skip
def test_a_run_with_nothing_to_draw_says_why(tmp_path, figure, message) -> None:
    # Every application starts after the stop: the figure's own tracing was
    # on, but the message asked for it ("set [trace] on_change = true ...").
    args = ["plot", figure, FF, "-o", str(tmp_path / "f.png"), "--set", "sim.duration=60s", "--set", "apps.0.start=100s"]
    r = CliRunner().invoke(main, args + (["--link", "r1->k1"] if figure == "seq" else []))
    assert (r.exit_code, r.output) == (2, "error: " + message)


def test_figures_of_a_result_check_their_arguments_against_its_scenario(tmp_path) -> None:
    res = tcplab.run(FF)
    cases = [
        # These drew "nothing to draw ... (or [trace] links does not log that link)", or (mss) a figure numbered by -5 bytes.
        (lambda: seq_plot(res, tmp_path / "a.png", apps=["ftp9"]), "--app = 'ftp9': unknown application; allowed: tcp1"),
        (lambda: plots.cwnd_plot(res, tmp_path / "a.png", apps=["ftp9"]), "--app = 'ftp9': unknown application; allowed: tcp1"),
        (lambda: seq_plot(res, tmp_path / "a.png", link="r1->k9"), "--link = 'r1->k9': no such link; links: k1->r1, r1->k1, r1->s1, s1->r1"),
        (lambda: seq_plot(res, tmp_path / "a.png", link="r1->k1", mss=-5),
         "mss = -5: expected the segment size in bytes that numbers the packets, at least 1 (None: the scenario's)"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(tcplab.UsageError) as exc:
            call()
        assert str(exc.value) == f"invalid argument: {message}"
    # One application named alone is a list of one: "tcp1" was taken as the applications t, c, p and 1.
    a, b = tmp_path / "one.svg", tmp_path / "list.svg"
    seq_plot(res, a, apps="tcp1", link="r1->k1")  # type: ignore[arg-type]
    seq_plot(res, b, apps=["tcp1"], link="r1->k1")
    assert a.read_bytes() == b.read_bytes()


def test_a_figure_of_a_run_loads_its_scenario_as_tcplab_run_does(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    # --seed 3 beside --set sim.seed=4 drew seed 3 without a word.
    r = CliRunner().invoke(main, ["plot", "cwnd", FF, "--seed", "3", "--set", "sim.seed=4", "-o", "c.png"])
    assert r.exit_code == 2 and not (tmp_path / "c.png").exists()
    assert r.output == f"error: invalid scenario in {FF}: sim.seed: is given twice, as 3 (the seed option) and as 4 (sim.seed); give it once\n"
    # A list of overrides was an AttributeError; a Scenario is taken as tcplab.run takes it.
    with pytest.raises(TypeError, match=r"^overrides map field paths to values, such as \{'tcp.iw': 4\}; got list$"):
        plots.plot_run("cwnd", FF, "c.png", overrides=["tcp.iw=4"])  # type: ignore[arg-type]
    a, b = plots.plot_run("seq", tcplab.load(FF), "a.svg", link="r1->k1"), plots.plot_run("seq", FF, "b.svg", link="r1->k1")
    assert a.read_bytes() == b.read_bytes()
