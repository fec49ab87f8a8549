"""`copies = N` in an `[[apps]]` table stands for N applications, copy k's
`{k}`, `{k + M}`, `{k * M}`, `{k // M}` and `{k % M}` in its name, hosts
and start time filled in:
the same scenario as the N tables written out, and errors named by the
table as written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from tcplab.errors import ScenarioError

from .conftest import dumbbell


def _doc(*apps: dict[str, Any], hosts: int = 4) -> dict[str, Any]:
    return dumbbell(left=hosts, right=hosts, duration="5s", apps=list(apps))


def test_copies_are_the_applications_written_out() -> None:
    web = {"type": "web", "src": "s{k}", "dst": "k{k % 2}", "cycle": "1s"}
    copied = _doc(
        {**web, "name": "w", "start": "{k * 50}ms", "copies": 3},  # w0, w1, w2, starting at 0, 50 and 100 ms
        {**web, "name": "page{k}x", "src": "s{k // 2}", "copies": 4},  # page0x..page3x from s0, s0, s1, s1
        {"type": "bulk", "src": "s{k + 2}", "dst": "k3", "size": "50kB", "copies": 2},  # unnamed: app7, app8
        {"type": "burst", "name": "b", "src": "s0", "extra_src": ["s{k % 3}", "s3"], "dst": "k{k}", "flows": 4, "copies": 2},
        {"type": "repeat", "name": "r", "src": "s2", "dst": "k1", "size": "10kB"},  # after the copies: apps[4] as written
    )  # fmt: skip
    written = _doc(
        *({**web, "name": f"w{k}", "src": f"s{k}", "dst": f"k{k % 2}", "start": f"{k * 50}ms"} for k in range(3)),
        *({**web, "name": f"page{k}x", "src": f"s{k // 2}", "dst": f"k{k % 2}"} for k in range(4)),
        *({"type": "bulk", "src": f"s{k + 2}", "dst": "k3", "size": "50kB"} for k in range(2)),
        *({"type": "burst", "name": f"b{k}", "src": "s0", "extra_src": [f"s{k % 3}", "s3"], "dst": f"k{k}", "flows": 4} for k in range(2)),
        {"type": "repeat", "name": "r", "src": "s2", "dst": "k1", "size": "10kB"},
    )  # fmt: skip
    sc = tcplab.load(copied)
    assert [sc.app_name(i) for i in range(len(sc.apps))] == ["w0", "w1", "w2", "page0x", "page1x", "page2x", "page3x", "app7", "app8", "b0", "b1", "r"]
    assert sc.to_core() == tcplab.load(written).to_core()
    # A sweep factor or --set changes the number, as any field.
    assert len(tcplab.load(copied, overrides={"apps.0.copies": 1}).apps) == 10
    assert tcplab.load(copied, overrides={"apps[0].copies": 1}).apps[0].name == "w0"


# (the application tables, the exact problems, one a line)
BAD = [
    ([{"type": "web", "src": "s0", "dst": "k0", "copies": 0}],
     "apps[0].copies = 0: expected a whole number of applications from 1 to 1,000,000"),
    ([{"type": "web", "src": "s0", "dst": "k0", "copies": "8"}],
     "apps[0].copies = '8': expected a whole number of applications from 1 to 1,000,000"),
    ([{"type": "web", "src": "s0", "dst": "k0", "copies": True}],
     "apps[0].copies = true: expected a whole number of applications from 1 to 1,000,000"),
    ([{"type": "web", "src": "s0", "dst": "k0", "copies": 1_000_001}],
     "apps[0].copies = 1000001: expected a whole number of applications from 1 to 1,000,000"),
    ([{"type": "web", "src": "s{i}", "dst": "k0", "copies": 2}],
     "apps[0].src = 's{i}': unknown placeholder '{i}'; allowed: {k} (the copy's number, 0 to copies - 1 = 1), {k + M}, {k * M}, {k // M} and {k % M} "
     "(M a whole number, at least 1 to divide by)"),
    ([{"type": "web", "src": "s{k // 0}", "dst": "k0", "copies": 2}],
     "apps[0].src = 's{k // 0}': unknown placeholder '{k // 0}'; allowed: {k} (the copy's number, 0 to copies - 1 = 1), {k + M}, {k * M}, {k // M} and {k % M} "
     "(M a whole number, at least 1 to divide by)"),
    ([{"type": "web", "src": "s{k - 1}", "dst": "k0", "copies": 2}],
     "apps[0].src = 's{k - 1}': unknown placeholder '{k - 1}'; allowed: {k} (the copy's number, 0 to copies - 1 = 1), {k + M}, {k * M}, {k // M} and {k % M} "
     "(M a whole number, at least 1 to divide by)"),
    ([{"type": "burst", "src": "s0", "extra_src": ["s1", "s{k}"], "dst": "k0"}],
     "apps[0].extra_src[1] = 's{k}': a copy's number {k} is filled in only where the application sets copies = N"),
    ([{"type": "web", "src": "s{k}", "dst": "k{k}", "copies": 6}],
     "apps[0].src = 's4': unknown node; allowed: s0, s1, s2, s3, r0, r1, k0, k1, k2, k3 (in copies 4, 5 of 6)\n"
     "apps[0].dst = 'k4': unknown node; allowed: s0, s1, s2, s3, r0, r1, k0, k1, k2, k3 (in copies 4, 5 of 6)"),
    # A table after the copies keeps its index as written; a name a copy took is named by its copy.
    ([{"type": "web", "name": "w", "src": "s{k}", "dst": "k0", "copies": 3}, {"type": "bulk", "name": "w1", "src": "x", "dst": "k1"}],
     "apps[1].src = 'x': unknown node; allowed: s0, s1, s2, s3, r0, r1, k0, k1, k2, k3\n"
     "apps[1].name = 'w1': already used by apps[0] (copy 1); names must be unique"),
    ([{"type": "web", "src": "s{k}", "dst": "k0", "size": "1kB", "copies": 3}],
     "apps[0].size: unknown field; allowed fields here: type, name, src, dst, http, embedded, primary, object, think, request, pages, "
     "cycle, closed_loop, think_from, embedded_start, persistent, start, tcp, copies (in every copy of 3)"),
]  # fmt: skip


@pytest.mark.parametrize(("apps", "message"), BAD)
def test_bad_copies_are_named_by_the_table_as_written(apps: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ScenarioError) as e:
        tcplab.load(_doc(*apps))
    assert "\n".join(map(str, e.value.problems)) == message


def test_the_command_line_takes_copies_and_refuses_a_bad_number_with_status_2(tmp_path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[sim]\nduration = "3s"\n[topology]\ntype = "dumbbell"\nleft = 3\nright = 3\n'
                    '[[apps]]\ntype = "web"\nname = "c"\nsrc = "s{k}"\ndst = "k{k}"\ncycle = "1s"\ncopies = 3\n')  # fmt: skip
    run = CliRunner().invoke(main, ["run", str(path), "--json"])
    assert run.exit_code == 0, run.output
    assert sorted({f["app"] for f in json.loads(run.output)["flows"]}) == ["c0", "c1", "c2"]
    bad = CliRunner().invoke(main, ["run", str(path), "--set", "apps.0.copies=4"])
    assert bad.exit_code == 2
    assert "apps[0].src = 's3': unknown node; allowed: s0, s1, s2, r0, r1, k0, k1, k2 (in copy 3 of 4)" in bad.output
    assert "Traceback" not in bad.output


def test_the_readme_example() -> None:
    import pathlib
    import re
    import tomllib

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "copies = 8" in b)
    sc = tcplab.load(dumbbell(left=50, right=50, duration="5s", apps=tomllib.loads(block)["apps"]))
    got = [(a.name, a.src, a.dst) for a in sc.apps]
    assert got[:2] == [("w0", "s0", "k0"), ("w1", "s1", "k1")] and got[7] == ("w7", "s7", "k7")
    assert got[8:10] == [("m0", "s0", "k0"), ("m1", "s1", "k1")] and got[-1] == ("m99", "s49", "k49") and len(got) == 108
    assert [a.type for a in sc.apps] == ["web"] * 108


def test_a_scenario_built_in_code_takes_copies_as_a_file_does() -> None:
    from tcplab.scenario.apps import WebApp

    doc = _doc({"type": "web", "name": "w", "src": "s{k}", "dst": "k{k}", "cycle": "1s", "copies": 3})
    sc = tcplab.Scenario(**doc)
    assert [a.name for a in sc.apps] == ["w0", "w1", "w2"] and sc.to_core() == tcplab.load(doc).to_core()
    bad = _doc({"type": "web", "name": "w", "src": "s{k}", "dst": "k{k}", "copies": 3, "http": "3"})
    with pytest.raises(ScenarioError) as e:
        tcplab.Scenario(**bad)
    assert [str(p) for p in e.value.problems] == ["apps[0].http = '3': not allowed; allowed values: '1.0' or '1.1' (in every copy of 3)"]
    # One application's model stands for one application: no copies, and none offered.
    with pytest.raises(ScenarioError) as e:
        WebApp(type="web", src="s0", dst="k0", copies=2)
    assert str(e.value.problems[0]).startswith("copies: unknown field; allowed fields here: type, name,")
    assert "copies" not in str(e.value.problems[0]).split("allowed fields here:")[1]
