"""Packet captures, read back by code nobody here wrote: dpkt, and (where
installed) tshark and tcptrace. Each must agree with tcplab's own counters
and packet log."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import dpkt
import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from tcplab.scenario.fields import CcName

ROOT = Path(__file__).resolve().parent.parent
FALL_FLOYD = str(ROOT / "examples" / "fall-floyd-drops.toml")
ALL_LINKS = ["s1->r1", "r1->k1", "k1->r1", "r1->s1"]

# Persistent and one-shot web connections with handshakes, SACK and a small
# bottleneck queue: several connections per capture, SYNs, FINs and drops.
WEB = {
    "sim": {"duration": "40s", "seed": 3},
    "topology": {"type": "dumbbell", "left": 2, "right": 2, "bottleneck": {"rate": "1Mbps", "delay": "50ms", "queue": "3pkt"}},
    "tcp": {"cc": "sack", "handshake": True, "window": "64pkt", "iw": 4},
    "apps": [
        {"type": "web", "src": "s0", "dst": "k0", "http": "1.1", "pages": 4, "think": {"type": "constant", "value": "0.5s"}},
        {"type": "web", "src": "s1", "dst": "k1", "http": "1.0", "pages": 3, "think": {"type": "constant", "value": "0.5s"}},
    ],
    "trace": {"links": ["r0->r1", "r1->r0"]},
}


@dataclass
class Rec:
    t: float
    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    win: int
    payload: int
    sack: list[tuple[int, int]]
    ip_len: int


def read(path: Path) -> list[Rec]:
    out = []
    with open(path, "rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == dpkt.pcap.DLT_EN10MB
        for ts, buf in reader:
            ip = dpkt.ethernet.Ethernet(buf).data
            tcp = ip.data
            sack: list[tuple[int, int]] = []
            for kind, val in dpkt.tcp.parse_opts(tcp.opts):
                if kind == dpkt.tcp.TCP_OPT_SACK:
                    sack += [(int.from_bytes(val[i:i + 4], "big"), int.from_bytes(val[i + 4:i + 8], "big")) for i in range(0, len(val), 8)]
            payload = ip.len - 4 * ip.hl - 4 * tcp.off
            out.append(Rec(float(ts), ".".join(map(str, ip.src)), ".".join(map(str, ip.dst)), tcp.sport, tcp.dport,
                           tcp.seq, tcp.ack, tcp.flags, tcp.win, payload, sack, ip.len))  # fmt: skip
    return out


def retransmissions(recs: list[Rec]) -> int:
    """Data segments whose sequence range was all sent before (per connection)."""
    seen: dict[tuple[int, int], set[int]] = {}
    n = 0
    for r in recs:
        if r.payload == 0:
            continue
        s = seen.setdefault((r.sport, r.dport), set())
        if r.seq in s:
            n += 1
        s.add(r.seq)
    return n


def log_rows(res: tcplab.Result, link: str, event: str) -> list:
    p = res.packets
    return list(p[(p.link == link) & (p.event == event)].itertuples())


@pytest.mark.parametrize("cc", get_args(CcName))
def test_dpkt_reads_what_the_sender_counted(cc: str, tmp_path: Path) -> None:
    res = tcplab.run(FALL_FLOYD, overrides={"tcp.cc": cc, "trace.links": ALL_LINKS, "trace.pcap": ALL_LINKS}, pcap=tmp_path)
    f = res.flows.iloc[0]
    # The sender's first link carries everything it sent.
    sent = read(tmp_path / "s1-r1.pcap")
    data = [r for r in sent if r.payload > 0]
    assert len(data) == f.data_pkts > 0
    assert retransmissions(sent) == f.retx_pkts
    assert {(r.src, r.dst, r.sport, r.dport) for r in sent} == {("10.0.0.1", "10.0.0.3", 5001, 32768)}
    # Packet by packet against the packet log: time, length, retransmission,
    # and a sequence number that is the log's plus one constant.
    logged = log_rows(res, "s1->r1", "dequeue")
    assert len(logged) == len(sent)
    offsets = {(r.seq - row.seq) % 2**32 for r, row in zip(sent, logged)}
    assert len(offsets) == 1
    assert [(round(r.t, 9), r.payload) for r in sent] == [(round(row.t, 9), row.len) for row in logged]
    assert sum(row.retx for row in logged) == f.retx_pkts
    # The last link before the sender carries every ACK it received.
    acks = read(tmp_path / "r1-s1.pcap")
    assert sum(len(r.sack) for r in acks) == f.sack_blocks
    if cc in ("reno", "sack"):
        assert (f.sack_blocks > 0) == (cc == "sack")
    (offset,) = offsets
    assert [(r.ack - offset) % 2**32 for r in acks] == [row.seq for row in log_rows(res, "r1->s1", "dequeue")]
    for r in acks:
        for left, right in r.sack:
            assert (r.ack - left) % 2**32 > 2**31 and (right - left) % 2**32 > 0, "SACK blocks lie above the cumulative ACK"
    # The link carried each ACK at its captured length: 40 bytes of headers, and
    # with SACK blocks two NOPs, the option's kind and length, and 8 bytes a block.
    back = res.links[(res.links.src == "r1") & (res.links.dst == "s1")].iloc[0]
    assert sum(r.ip_len for r in acks) == back.departure_bytes
    assert all(r.ip_len == 40 + (4 + 8 * len(r.sack) if r.sack else 0) for r in acks)
    # The drops file holds the four packets the loss rule took, when it took them.
    drops = read(tmp_path / "r1-k1.drops.pcap")
    dropped = log_rows(res, "r1->k1", "drop")
    assert len(drops) == len(dropped) == 4
    assert [(round(r.t, 9), (r.seq - offset) % 2**32) for r in drops] == [(round(row.t, 9), row.seq) for row in dropped]
    assert read(tmp_path / "s1-r1.drops.pcap") == []
    # Snapshot length: headers only, the true IP length.
    raw = (tmp_path / "s1-r1.pcap").read_bytes()
    assert raw[:4] == bytes.fromhex("4d3cb2a1"), "little-endian, nanosecond timestamps"
    assert all(r.ip_len == 40 + r.payload for r in data)
    assert len(raw) == 24 + len(sent) * (16 + 54)


def test_connections_with_handshakes_requests_and_fins(tmp_path: Path) -> None:
    caps = ["s0->r0", "s1->r0", "r0->s0", "r0->s1", "r0->r1", "r1->r0"]
    res = tcplab.run({**WEB, "trace": {**WEB["trace"], "pcap": caps}}, pcap=tmp_path)
    flows = res.flows
    assert len(flows) >= 7 and flows.completed.all()
    by_port = {32768 + int(i): f for i, f in zip(flows.id, flows.itertuples())}
    for side, server in (("s0", "10.0.0.1"), ("s1", "10.0.0.2")):
        sent = read(tmp_path / f"{side}-r0.pcap")
        ports = {r.dport for r in sent}
        assert ports == {p for p, f in by_port.items() if f.src == side}
        for port in ports:
            f = by_port[port]
            conn = [r for r in sent if r.dport == port]
            assert all(r.src == server for r in conn)
            assert sum(r.payload > 0 for r in conn) == f.data_pkts
            assert retransmissions(conn) == f.retx_pkts
            syn = [r for r in conn if r.flags & dpkt.tcp.TH_SYN]
            assert syn and all(r.flags & dpkt.tcp.TH_ACK for r in syn)
            # The server's FIN-ACK comes last and follows all its data.
            fin = [r for r in conn if r.flags & dpkt.tcp.TH_FIN]
            assert len(fin) == 1 and fin[0] is conn[-1]
            isn = syn[0].seq
            assert (fin[0].seq - isn - 1) % 2**32 == f.bytes
        acks = read(tmp_path / f"r0-{side}.pcap")
        for port in ports:
            f = by_port[port]
            conn = [r for r in acks if r.sport == port]
            syns = [r for r in conn if r.flags & dpkt.tcp.TH_SYN]
            assert len(syns) == f.syn_sent
            requests = [r for r in conn if r.payload > 0]
            # Requests follow each other in the client's sequence space.
            isn = syns[0].seq
            ends = sorted({(r.seq - isn - 1) % 2**32 + r.payload for r in requests})
            starts = sorted({(r.seq - isn - 1) % 2**32 for r in requests})
            assert starts == [0] + ends[:-1]
            fin = [r for r in conn if r.flags & dpkt.tcp.TH_FIN]
            assert len(fin) == 1 and (fin[0].seq - isn - 1) % 2**32 == ends[-1]
    # The bottleneck's drops, as the packet log has them.
    for link in ("r0->r1", "r1->r0"):
        drops = read(tmp_path / f"{link.replace('->', '-')}.drops.pcap")
        assert [round(r.t, 9) for r in drops] == [round(row.t, 9) for row in log_rows(res, link, "drop")]
        assert len(read(tmp_path / f"{link.replace('->', '-')}.pcap")) == len(log_rows(res, link, "dequeue"))
    assert sum(res.links.drops) > 0, "the scenario loses packets"


def test_cli_writes_every_link_and_a_hosts_file(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["run", FALL_FLOYD, "--pcap", str(tmp_path / "cap")])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / "cap").iterdir())
    assert names == sorted(["hosts"] + [f"{a}-{b}{ext}" for a, b in (l.split("->") for l in ALL_LINKS) for ext in (".pcap", ".drops.pcap")])
    assert (tmp_path / "cap" / "hosts").read_text() == "10.0.0.1\ts1\n10.0.0.2\tr1\n10.0.0.3\tk1\n"
    assert "Capture r1->k1" in r.output and "(4)" in r.output


def test_a_dumbbell_captures_its_bottleneck_by_default(tmp_path: Path) -> None:
    res = tcplab.run(str(ROOT / "examples" / "dumbbell-bulk.toml"), overrides={"sim.duration": "1s"}, pcap=tmp_path)
    assert list(res.captures.link) == ["r0->r1", "r1->r0"]
    assert list(res.captures.packets) == [len(read(tmp_path / "r0-r1.pcap")), len(read(tmp_path / "r1-r0.pcap"))]
    assert res.links.set_index("link" if "link" in res.links else "id").shape[0] > 0


def test_bad_capture_requests_name_the_field(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["run", FALL_FLOYD, "--set", 'trace.pcap=["s1->k1"]', "--pcap", str(tmp_path)])
    assert r.exit_code == 2
    assert "trace.pcap[0] = 's1->k1': no such link" in r.output
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = CliRunner().invoke(main, ["run", FALL_FLOYD, "--pcap", str(blocker / "sub")])
    assert r.exit_code == 2
    assert f"error: invalid argument: pcap = '{blocker / 'sub'}': cannot create the capture directory" in r.output
    r = CliRunner().invoke(main, ["run", FALL_FLOYD, "--pcap", str(blocker)])
    assert r.exit_code == 2
    assert r.output == f"error: invalid argument: pcap = '{blocker}': is a file; expected a directory (made if missing)\n"


def test_a_sweep_refuses_captures(tmp_path: Path) -> None:
    from tcplab.sweep import sweep_from_configs

    with pytest.raises(tcplab.ScenarioError, match="trace.pcap"):
        sweep_from_configs("s", str(tmp_path / "s.duckdb"), [({"x": 1}, {**WEB, "trace": {"pcap": ["r0->r1"]}})], 1)


def test_captures_leave_results_unchanged(tmp_path: Path) -> None:
    from tcplab.api import without_wall_clock

    plain = tcplab.run(WEB)
    captured = tcplab.run({**WEB, "trace": {**WEB["trace"], "pcap": ["r0->r1", "r1->r0"]}}, pcap=tmp_path)
    a, b = plain.to_dict(), captured.to_dict()
    for d in (a, b):
        d["engine"] = without_wall_clock(d["engine"])
        d.pop("scenario")
    assert b.pop("captures") == [
        {"link": "r0->r1", "file": str(tmp_path / "r0-r1.pcap"), "packets": len(read(tmp_path / "r0-r1.pcap")),
         "drops_file": str(tmp_path / "r0-r1.drops.pcap"), "drops": len(read(tmp_path / "r0-r1.drops.pcap"))},
        {"link": "r1->r0", "file": str(tmp_path / "r1-r0.pcap"), "packets": len(read(tmp_path / "r1-r0.pcap")),
         "drops_file": str(tmp_path / "r1-r0.drops.pcap"), "drops": len(read(tmp_path / "r1-r0.drops.pcap"))},
    ]  # fmt: skip
    assert a == b


# ---------------------------------------------------------------- tshark and tcptrace

needs_tools = pytest.mark.skipif(not (shutil.which("tshark") and shutil.which("tcptrace")), reason="tshark and tcptrace are not installed")


def tool(*args: str) -> str:
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # tshark's only allowed remark is about running as root.
    complaints = [l for l in p.stderr.splitlines() if l.strip() and "Running as user" not in l]
    assert complaints == [], complaints
    assert "Malformed" not in p.stdout
    return p.stdout


_UNITS = {"bytes": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9}


def tshark_conversations(path: Path) -> dict[tuple[str, str], tuple[int, int, int, float]]:
    """(a, b) endpoints -> (frames b->a, frames a->b, total bytes as shown,
    the unit they are shown in, which truncates) from ``-z conv,tcp``."""
    out = tool("tshark", "-r", str(path), "-q", "-z", "conv,tcp")
    size = r"(\d+)\s+(\d+)\s+(bytes|kB|MB|GB)"
    conv = {}
    for line in out.splitlines():
        m = re.match(rf"\s*(\S+:\d+)\s+<->\s+(\S+:\d+)\s+{size}\s+{size}\s+{size}", line)
        if m:
            unit = _UNITS[m[11]]
            conv[(m[1], m[2])] = (int(m[3]), int(m[6]), int(m[10]) * unit, unit)
    assert conv, out
    return conv


def tcptrace_counts(path: Path) -> list[tuple[int, int]]:
    """(actual data pkts, rexmt data pkts) of each connection, a->b."""
    out = tool("tcptrace", "-l", str(path))
    data = [int(x) for x in re.findall(r"actual data pkts:\s+(\d+)", out)]
    rexmt = [int(x) for x in re.findall(r"rexmt data pkts:\s+(\d+)", out)]
    return list(zip(data, rexmt))


@needs_tools
@pytest.mark.parametrize("cc", ["reno", "sack"])
def test_tshark_and_tcptrace_agree(cc: str, tmp_path: Path) -> None:
    res = tcplab.run(FALL_FLOYD, overrides={"tcp.cc": cc, "trace.links": ALL_LINKS, "trace.pcap": ALL_LINKS}, pcap=tmp_path)
    f = res.flows.iloc[0]
    for link in ALL_LINKS:
        path = tmp_path / f"{link.replace('->', '-')}.pcap"
        recs = read(path)
        conv = tshark_conversations(path)
        frames = len(log_rows(res, link, "dequeue"))
        assert len(conv) == 1
        ((ends, (back, forth, total, unit)),) = conv.items()
        assert back + forth == frames == len(recs)
        assert 0 <= sum(14 + r.ip_len for r in recs) - total < unit
        expert = tool("tshark", "-r", str(path), "-q", "-z", "expert")
        assert "Errors (" not in expert and "Malformed" not in expert
    (data, rexmt), _ = tcptrace_counts(tmp_path / "s1-r1.pcap")
    assert (data, rexmt) == (f.data_pkts, f.retx_pkts)
    assert "sack pkts sent" in tool("tcptrace", "-l", str(tmp_path / "r1-s1.pcap"))


@needs_tools
def test_tshark_and_tcptrace_agree_on_many_connections(tmp_path: Path) -> None:
    res = tcplab.run({**WEB, "trace": {**WEB["trace"], "pcap": ["s0->r0", "s1->r0"]}}, pcap=tmp_path)
    flows = res.flows
    for side in ("s0", "s1"):
        path = tmp_path / f"{side}-r0.pcap"
        mine = flows[flows.src == side].sort_values("id")
        conv = tshark_conversations(path)
        assert len(conv) == len(mine)
        frames = {int(b.rsplit(":", 1)[1]): back + forth for (a, b), (back, forth, _, _) in conv.items()}
        per_conn = {32768 + int(i): 0 for i in mine.id}
        for r in read(path):
            per_conn[r.dport] += 1
        assert frames == per_conn
        counts = tcptrace_counts(path)
        # tcptrace lists both directions of each connection; this link carries
        # only a->b. A repeated SYN-ACK retransmits its sequence number, and
        # tcptrace counts it with the data retransmissions.
        assert sorted(counts[::2]) == sorted(zip(mine.data_pkts, mine.retx_pkts + mine.synack_sent - 1))
    assert (flows.synack_sent > 1).any() and (flows.retx_pkts > 0).any(), "the scenario repeats SYN-ACKs and data"


def test_the_readme_round_trip_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's capture example, command by command (tools where installed)."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Packet captures", 1)[1].split("```", 2)[1]
    lines = [l.split("#", 1)[0].strip() for l in block.strip().splitlines()]
    assert lines[0].startswith("tcplab run examples/fall-floyd-drops.toml")
    monkeypatch.chdir(tmp_path)
    args = lines[0].split()[1:]
    args[1] = FALL_FLOYD
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    for line in lines[1:]:
        cmd = line.split()
        if cmd[0] == "wireshark":
            assert (tmp_path / cmd[1]).exists()
        elif shutil.which(cmd[0]):
            out = tool(*cmd)
            assert out.strip()


@pytest.mark.parametrize("queue", ["atm-epd", "red"])
def test_cell_switch_and_red_drops_are_captured_in_time_order(queue: str, tmp_path: Path) -> None:
    from tests.golden_cases import cases
    from tests.test_atm import _atm

    sc = _atm(policy="epd", buffer=300, n=8, duration="2s") if queue == "atm-epd" else cases()["red"]
    sc = {**sc, "trace": {"links": ["r0->r1"], "pcap": ["r0->r1"]}}
    res = tcplab.run(sc, pcap=tmp_path)
    for name, event in (("r0-r1.pcap", "dequeue"), ("r0-r1.drops.pcap", "drop")):
        recs = read(tmp_path / name)
        rows = log_rows(res, "r0->r1", event)
        assert len(recs) == len(rows) > 0
        assert [round(r.t, 9) for r in recs] == sorted(round(r.t, 9) for r in recs) == [round(row.t, 9) for row in rows]
        assert [r.payload for r in recs] == [row.len for row in rows]
