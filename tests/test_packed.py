"""The packed core scenario and the columnar results are encodings, not models.

`tcplab.run` hands the core the packed form (links and applications as index
columns, TCP settings and application templates shared) and reads its
results as columns; sweeps hash and send the plain form. Both must give the
same results, row for row, and like applications validated once and copied
must equal applications validated one by one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import tcplab
from tcplab import _core
from tcplab.api import TABLES, rows_of, without_wall_clock
from tcplab.errors import ScenarioError
from tcplab.scenario.loading import _like_apps, validate

from .conftest import dumbbell
from .golden_cases import cases

CASES = cases()
# Beyond the golden cases (all dumbbells): the other topologies, ATM links
# with a UBR port, a reverse-direction override and per-application TCP.
CASES["explicit-reverse-atm"] = {
    "sim": {"duration": "4s", "seed": 9},
    "topology": {
        "type": "explicit",
        "nodes": ["a", "b", "c", "d"],
        "links": [
            {"from": "a", "to": "b", "rate": "155Mbps", "delay": "1ms", "queue": "1000pkt", "atm": True},
            {"from": "b", "to": "c", "rate": "45Mbps", "delay": "5ms", "atm": True, "queue": {"type": "ubr", "buffer": 600, "policy": "sd"},
             "reverse": {"queue": "1000pkt"}},
            {"from": "d", "to": "b", "rate": "10Mbps", "delay": "3ms", "queue": "20pkt", "reverse": {"rate": "20Mbps", "delay": "2ms"}},
        ],
    },
    "tcp": {"cc": "sack", "mss": "1024B", "window": "1MiB"},
    "apps": [
        {"type": "bulk", "name": "x", "src": "a", "dst": "c", "size": "inf"},
        {"type": "bulk", "name": "y", "src": "d", "dst": "c", "size": "inf", "start": "0.5s", "tcp": {"cc": "newreno", "iw": 4}},
        {"type": "repeat", "name": "z", "src": "c", "dst": "d", "size": "50kB", "think": {"type": "exponential", "mean": "0.2s"}},
    ],
}  # fmt: skip
CASES["wireless-hspa-bursts"] = {
    "sim": {"duration": "20s", "seed": 4},
    "topology": {"type": "wireless", "profile": "hspa", "buffer": "bdp", "servers": 2},
    "tcp": {"cc": "sack", "iw": 10, "delayed_ack": True},
    "apps": [
        {"type": "burst", "name": "first", "src": "s0", "dst": "m0", "flows": 6, "total": "180kB"},
        {"type": "burst", "name": "later", "src": "s1", "dst": "m0", "flows": 6, "total": "180kB", "start": {"type": "uniform", "min": "0.2s", "max": "0.6s"}},
    ],
}  # fmt: skip
CASES["wireless-bursts-from-several-servers"] = {
    "sim": {"duration": "20s", "seed": 4},
    "topology": {"type": "wireless", "profile": "hspa", "buffer": "bdp", "servers": 4},
    "tcp": {"cc": "sack", "iw": 10},
    "apps": [
        {"type": "burst", "name": "first", "src": "s0", "extra_src": ["s1"], "dst": "m0", "flows": 6, "total": "180kB"},
        {"type": "burst", "name": "later", "src": "s2", "extra_src": ["s3", "s1"], "dst": "m0", "flows": 6, "total": "180kB", "start": "0.3s"},
    ],
}  # fmt: skip


def _rows(out: dict, columns: bool) -> dict:
    tables = {t: rows_of(out[t]) if columns else out[t] for t in TABLES}
    return {**tables, "engine": without_wall_clock(out["engine"])}


@pytest.mark.parametrize("name", sorted(CASES))
def test_packed_form_and_columns_give_the_plain_results(name: str) -> None:
    sc = tcplab.load(CASES[name])
    plain = json.loads(_core.run_json(json.dumps(sc.to_core())))
    packed_doc = sc.to_core(packed=True)
    assert "links" not in packed_doc and "app_columns" in packed_doc
    packed = json.loads(_core.run_json(json.dumps(packed_doc), True))
    assert _rows(packed, True) == _rows(plain, False)
    # A plain application without TCP overrides carries the settings the packed form gives once.
    for a, plain_app in zip(sc.apps, sc.to_core()["apps"]):
        if not a.tcp.model_fields_set:
            assert plain_app["tcp"] == packed_doc["tcp"]


def _like(n: int, **extra) -> dict:
    apps = [{"type": "bulk", "name": f"f{i}", "src": f"s{i}", "dst": f"k{i}", "size": "200kB", "start": {"type": "uniform", "min": "0s", "max": "1s"}, **extra}
            for i in range(n)]  # fmt: skip
    return dumbbell(left=n, right=n, duration="3s", apps=apps)


def test_like_applications_are_validated_once_and_equal_those_validated_each() -> None:
    doc = _like(100)
    copies = _like_apps(doc["apps"])
    assert copies is not None and len(copies) == 100
    one_by_one = tcplab.load({**doc, "apps": doc["apps"][:50]}).apps + tcplab.load({**doc, "apps": doc["apps"][50:]}).apps
    assert [a.model_dump() for a in copies] == [a.model_dump() for a in one_by_one]
    assert [a.model_fields_set for a in copies] == [a.model_fields_set for a in one_by_one]
    # Each copy has a set of its own: assigning a field of one marks that one only.
    copies[1].request = 5
    assert "request" in copies[1].model_fields_set and "request" not in copies[2].model_fields_set
    assert copies[2].__pydantic_extra__ is None and copies[2].__pydantic_private__ is None
    # One template in the packed form; names and nodes by column.
    core = tcplab.load(doc).to_core(packed=True)
    assert len(core["app_templates"]) == 1
    assert core["app_columns"]["name"][:3] == ["f0", "f1", "f2"]
    nodes = core["nodes"]
    assert [nodes[k] for k in core["app_columns"]["src"][:2]] == ["s0", "s1"]


def test_a_bad_application_among_like_ones_is_reported_as_written() -> None:
    doc = _like(80)
    doc["apps"][70]["src"] = 5  # not a node name (a string)
    doc["apps"][75]["bogus"] = 1
    with pytest.raises(ScenarioError) as e:
        validate(doc)
    fields = sorted(p.field for p in e.value.problems)
    assert fields == ["apps[70].src", "apps[75].bogus"], fields


def test_applications_that_differ_get_their_own_templates() -> None:
    doc = _like(70)
    doc["apps"][10]["size"] = "300kB"
    doc["apps"][20]["tcp"] = {"iw": 4}
    core = tcplab.load(doc).to_core(packed=True)
    # Runs: 0-9, 10, 11-19, 20, 21-69.
    assert len(core["app_templates"]) == 5
    assert core["app_columns"]["template"][9:12] == [0, 1, 2]
    assert core["app_templates"][3]["tcp"]["iw_bytes"] == 4 * 1460
    assert "tcp" not in core["app_templates"][0]


def test_mixed_kinds_and_unnamed_applications_pack_as_the_plain_form_gives_them() -> None:
    """Runs of like applications broken by another kind, by other settings and
    by missing names: the packed columns name each application as the plain
    form does (appN where unnamed), and loading them by runs gives the
    scenario that validating each one gives."""
    doc = _like(90)
    for i in (30, 31, 32):
        doc["apps"][i] = {"type": "burst", "name": f"b{i}", "src": f"s{i}", "dst": f"k{i}", "flows": 2, "total": "40kB", "start": "1s"}
    for i in (40, 41):
        del doc["apps"][i]["name"]
    doc["apps"][50]["size"] = "100kB"
    sc = validate(doc)
    every = tcplab.scenario.Scenario.model_validate(doc)
    assert sc.model_dump() == every.model_dump()
    assert [a.model_fields_set for a in sc.apps] == [a.model_fields_set for a in every.apps]
    packed, plain = sc.to_core(packed=True), sc.to_core()
    cols, tmpl = packed["app_columns"], packed["app_templates"]
    # Runs: 0-29, 30-32 (bursts), 33-49 (names missing in two change nothing else), 50, 51-89.
    assert len(tmpl) == 5
    assert cols["template"][29:34] == [0, 1, 1, 1, 2] and cols["template"][49:52] == [2, 3, 4]
    assert cols["name"] == [a["name"] for a in plain["apps"]]
    assert cols["name"][40:42] == ["app40", "app41"]
    nodes = packed["nodes"]
    for i, a in enumerate(plain["apps"]):
        t = tmpl[cols["template"][i]]
        assert (nodes[cols["src"][i]], nodes[cols["dst"][i]]) == (a["src"], a["dst"])
        assert {k: v for k, v in a.items() if k not in ("name", "src", "dst", "tcp")} == t
    assert tcplab.run(doc).flows.equals(tcplab.run(tcplab.scenario.Scenario.model_validate(doc)).flows)


def test_the_shared_tcp_settings_are_checked_once_and_named_by_their_first_user() -> None:
    """The core builds the shared [tcp] once; a bad one is reported against the
    first application that uses it, whichever the form."""
    doc = tcplab.load(_like(3)).to_core(packed=True)
    doc["tcp"]["cc"] = "bogus"
    with pytest.raises(ScenarioError, match=r"apps\[0\]\.tcp\.cc.*'bogus' is not a congestion control"):
        tcplab.api.run_core(json.dumps(doc))
    doc["app_templates"].append({**doc["app_templates"][0], "tcp": {**doc["tcp"], "cc": "reno"}})
    doc["app_columns"]["template"][0] = 1  # the first application brings its own, valid settings
    with pytest.raises(ScenarioError, match=r"apps\[1\]\.tcp\.cc"):
        tcplab.api.run_core(json.dumps(doc))


def test_the_core_checks_packed_indices() -> None:
    sc = tcplab.load(_like(2))
    doc = sc.to_core(packed=True)
    doc["link_columns"]["to"][3] = 999
    with pytest.raises(ScenarioError, match=r"link_columns.to\[3\].*out of range"):
        tcplab.api.run_core(json.dumps(doc))
    doc = sc.to_core(packed=True)
    doc["app_columns"]["template"][1] = 7
    with pytest.raises(ScenarioError, match=r"app_columns.template\[1\].*out of range"):
        tcplab.api.run_core(json.dumps(doc))
    doc = sc.to_core(packed=True)
    del doc["tcp"]
    with pytest.raises(ScenarioError, match=r"apps\[0\].tcp"):
        tcplab.api.run_core(json.dumps(doc))


def test_dataframes_from_columns_keep_the_row_types() -> None:
    res = tcplab.run(CASES["handshake-losses"])
    flows = res.flows
    assert str(flows["id"].dtype) == "int64"
    assert str(flows["goodput_bps"].dtype) == "float64"
    assert str(flows["completed"].dtype) == "bool"
    assert flows["app"].tolist() == [r["app"] for r in res.raw["flows"]]
    assert flows["srtt_s"].tolist() == [r["srtt_s"] for r in res.raw["flows"]]


def test_a_large_dumbbell_normalizes_to_a_size_linear_in_its_flows() -> None:
    """20,000 like flows: one template, four link directions per flow, and
    the packed document's bytes per flow no more than at 2,000 flows (but for
    the longer names and indices)."""
    per_flow = {}
    for n in (2_000, 20_000):
        core = tcplab.load(_like(n)).to_core(packed=True)
        assert len(core["nodes"]) == 2 * n + 2
        assert len(core["link_columns"]["from"]) == 4 * n + 2
        assert len(core["queues"]) == 1  # every link of this dumbbell has the same 1000-packet queue
        assert len(core["app_templates"]) == 1 and len(core["app_columns"]["name"]) == n
        per_flow[n] = len(json.dumps(core)) / n
    assert per_flow[20_000] <= 1.15 * per_flow[2_000], per_flow


def test_integer_columns_sent_as_bytes_give_the_same_rows_and_are_checked() -> None:
    from tcplab.api import encode_packed, run_core_columns

    sc = tcplab.load(CASES["cc-reno"])
    core = sc.to_core(packed=True)
    text, blobs = encode_packed(core)
    doc = json.loads(text)
    assert doc["link_columns"]["from"] == {"bin": 0, "dtype": "<u4"}
    assert doc["link_columns"]["rate_bps"]["dtype"] == "<u8" and doc["app_columns"]["template"]["dtype"] == "<u4"
    assert len(blobs) == 8 and len(blobs[0]) == 4 * len(core["link_columns"]["from"])
    plain = json.loads(_core.run_json(json.dumps(sc.to_core())))
    assert _rows(run_core_columns(text, blobs=blobs), True) == _rows(plain, False)
    bad = json.loads(text)
    bad["link_columns"]["queue"]["dtype"] = "<u8"
    with pytest.raises(ScenarioError, match=r"link_columns.queue.*dtype '<u8' is not this column's \('<u4'\)"):
        run_core_columns(json.dumps(bad), blobs=blobs)
    with pytest.raises(ScenarioError, match=r"blob 7 was not handed over \(7 were\)"):
        run_core_columns(text, blobs=blobs[:7])
    with pytest.raises(ScenarioError, match=r"app_columns.src.*not a whole number of 4-byte values"):
        run_core_columns(text, blobs=blobs[:5] + [blobs[5] + b"x"] + blobs[6:])


def test_the_cores_columns_are_read_in_place_and_each_is_released_once_copied(monkeypatch) -> None:
    """The core hands each column's bytes over as a read-only buffer over its
    own memory; `run_core_columns` copies each into its array and lets go
    of it at once."""
    from array import array

    import tcplab.api as api

    text = json.dumps(tcplab.load(CASES["cc-reno"]).to_core())
    doc, blobs = _core.run_columns(text)
    flows = json.loads(doc)["flows"]
    assert flows["id"] == {"bin": 0, "dtype": "<i8"}
    view = memoryview(blobs[0])
    assert (view.readonly, view.format, view.itemsize, len(blobs[0])) == (True, "B", 1, len(view))
    with pytest.raises(TypeError):
        view[0] = 1
    assert array("q", bytes(blobs[0])).tolist() == list(range(len(view) // 8))
    held: list[Any] = []
    real = _core.run_columns

    def keep(*args: Any) -> Any:
        doc, blobs = real(*args)
        held.append(blobs)
        return doc, blobs

    monkeypatch.setattr(api._core, "run_columns", keep)
    res = api.run_core_columns(text)
    assert held[0] and all(b is None for b in held[0])
    assert res["flows"]["id"] == array("q", range(len(view) // 8))


def test_a_float_column_with_missing_values_comes_as_bytes_and_reads_back_as_none() -> None:
    """Unfinished transfers (no end, no fct) and pages go in the blobs with NaN
    for each null: rows, the JSON output and the DataFrames see what the row
    form holds."""
    from array import array

    from tcplab.api import encode_packed, run_core_columns

    sc = tcplab.load(dumbbell(left=2, right=2, duration="1s", apps=[
        {"type": "web", "name": "w", "src": "s0", "dst": "k0", "cycle": "100ms"},
        {"type": "bulk", "name": "b", "src": "s1", "dst": "k1", "size": "inf"},
    ]))  # fmt: skip
    text, blobs = encode_packed(sc.to_core(packed=True))
    cols = run_core_columns(text, blobs=blobs)
    plain = json.loads(_core.run_json(json.dumps(sc.to_core())))
    for table, col in (("flows", "end_s"), ("flows", "fct_s"), ("flows", "srtt_s"), ("pages", "end_s"), ("pages", "delay_s")):
        values = cols[table][col]
        assert isinstance(values, array) and values.typecode == "d", (table, col)
        nulls = [r[col] is None for r in plain[table]]
        assert any(nulls) and not all(nulls), (table, col)
        assert [v != v for v in values] == nulls  # NaN exactly where the row form has null
    assert _rows(cols, True) == _rows(plain, False)
    assert rows_of(cols["flows"], [len(plain["flows"]) - 1])[0]["fct_s"] is None  # the bulk transfer's
    res = tcplab.run(sc)
    assert json.loads(res.to_json())["flows"] == plain["flows"]
    assert res.flows["fct_s"].isna().tolist() == [r["fct_s"] is None for r in plain["flows"]]


def test_a_dataframe_is_the_callers_to_change() -> None:
    res = tcplab.run(CASES["handshake-losses"])
    first = res.flows
    delivered = int(first.bytes_delivered.iloc[0])
    first.loc[0, "bytes_delivered"] = -1
    assert int(res.flows.bytes_delivered.iloc[0]) == delivered
    assert res.raw["flows"][0]["bytes_delivered"] == delivered
    # Every kind of column: floats, nullable integers, booleans, strings.
    before = res.flows.copy(deep=True)
    first.loc[0, ["goodput_bps", "bytes", "completed", "app"]] = [-1.0, -1, not before.completed.iloc[0], "x"]
    assert first.loc[0, "bytes"] == -1 and first.loc[0, "completed"] != before.completed.iloc[0]
    assert res.flows.equals(before)


@pytest.mark.parametrize("n", [5, 100_001])
def test_a_float_columns_nan_is_none_in_its_list_short_or_long(n: int) -> None:
    from array import array

    from tcplab.api import _listed

    nan = float("nan")
    values = array("d", [0.5, nan, 2.0, nan, -1.0] + [3.0] * (n - 5))
    assert _listed(values) == [0.5, None, 2.0, None, -1.0] + [3.0] * (n - 5)
    assert _listed(array("q", [1, 2])) == [1, 2] and _listed(["a", None]) == ["a", None]


@pytest.mark.parametrize("rows_at_once", [1, 7, 10_000])
def test_the_json_written_in_pieces_is_the_whole_documents_text(tmp_path, rows_at_once: int) -> None:
    # Web clients over an ATM port, every connection traced, the T3 logged and captured: every table has rows.
    trace = {"trace.web100": True, "trace.on_change": True, "trace.links": ["r0->r1"], "sim.duration": "2s"}
    res = tcplab.run("examples/atm-ubr.toml", overrides=trace, pcap=tmp_path)
    whole = json.dumps(res.to_dict(), sort_keys=True, allow_nan=False)
    assert all(res.raw[t] for t in TABLES) and res.data["captures"]
    pieces = list(res.json_pieces(rows_at_once))
    assert "".join(pieces) == whole == res.to_json()
    assert len(pieces) > len(res.raw["packets"]) // rows_at_once  # a piece per chunk of rows, not one text
    assert json.loads(res.to_json(indent=1)) == json.loads(whole)


def test_the_frame_a_save_writes_shares_the_results_columns_and_a_users_frame_does_not() -> None:
    import numpy as np

    from tcplab.api import TABLE_COLUMNS, _frame

    res = tcplab.run(CASES["handshake-losses"])
    for copy in (True, False):
        frame = _frame(res.data["flows"], TABLE_COLUMNS["flows"], "flows", copy=copy)
        for col in ("bytes_delivered", "goodput_bps", "srtt_s"):
            assert np.shares_memory(frame[col].to_numpy(), np.frombuffer(res.data["flows"][col])) is not copy, (col, copy)
        # A nullable integer column without a null came as bytes as well.
        assert np.shares_memory(frame["bytes"].array._data, np.frombuffer(res.data["flows"]["bytes"])) is not copy
        assert frame.equals(res.flows)


def test_an_application_setting_a_shared_field_to_none_writes_it_as_the_shared_table_does() -> None:
    """A per-application [tcp] key whose value parses to None ('inf' ssthresh, 'none'
    retries, a 'random' clock phase) is written back as written, and the written
    scenario loads as the same one; a key left unset is written as None."""
    over = {"apps.0.tcp.ssthresh": "inf", "apps.0.tcp.max_retries": "none", "apps.0.tcp.clock_phase": "random", "apps.0.tcp.iw": 4}
    from tests.golden_cases import ROOT

    sc = tcplab.load(ROOT / "examples" / "dumbbell-bulk.toml", over)
    written = sc.model_dump(mode="json", by_alias=True)
    t = written["apps"][0]["tcp"]
    assert {k: v for k, v in t.items() if v is not None} == {"ssthresh": "inf", "max_retries": "none", "clock_phase": "random", "iw": 4}
    assert all(v is None for v in written["apps"][1]["tcp"].values())
    assert tcplab.load(written) == sc


def test_at_loop_is_called_once_between_set_up_and_the_loop(monkeypatch) -> None:
    """`run_core_columns(at_loop=f)` calls f once, after set-up: not for a
    scenario the core refuses; a callable that raises leaves the run as it
    was (it is reported as unraisable)."""
    from tcplab.api import encode_packed, run_core_columns

    core = tcplab.load(_like(3)).to_core(packed=True)
    text, blobs = encode_packed(core)
    calls: list[int] = []
    quiet = run_core_columns(text, blobs=blobs)
    hooked = run_core_columns(text, blobs=blobs, at_loop=lambda: calls.append(1))
    assert calls == [1]

    def boom() -> None:
        calls.append(2)
        raise RuntimeError("at_loop failed")

    reported: list[str] = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: reported.append(str(u.exc_value)))
    raising = run_core_columns(text, blobs=blobs, at_loop=boom)
    assert calls == [1, 2] and reported == ["at_loop failed"]
    for data in (hooked, raising):
        assert without_wall_clock(data["engine"]) == without_wall_clock(quiet["engine"])
        assert {t: {c: list(v) for c, v in data[t].items()} for t in TABLES} == {t: {c: list(v) for c, v in quiet[t].items()} for t in TABLES}
    core["tcp"]["cc"] = "bogus"
    text, blobs = encode_packed(core)
    with pytest.raises(ScenarioError, match="bogus"):
        run_core_columns(text, blobs=blobs, at_loop=lambda: calls.append(3))
    assert calls == [1, 2]


def test_runs_of_equal_neighbours() -> None:
    from tcplab.scenario.model import runs_of_equal

    nan = float("nan")
    assert runs_of_equal([]) == [0, 0]
    assert runs_of_equal(["a"]) == [0, 1]
    assert runs_of_equal([1, 1, 2, 2, 2, 1, 3]) == [0, 2, 5, 6, 7]
    # A NaN equals nothing, not even itself; tuples holding the same NaN
    # object are equal, as == compares their items by identity first.
    assert runs_of_equal([nan, nan, (nan,), (nan,), (float("nan"),)]) == [0, 1, 2, 4, 5]
    keys = [{"a": 1, "b": 2}.keys(), {"b": 0, "a": 0}.keys(), {"a": 0}.keys()]
    assert runs_of_equal(keys) == [0, 2, 3]


def test_a_long_runs_finished_transfers_put_into_columns_as_it_goes_give_the_plain_rows() -> None:
    """Past 32,768 finished transfers (`stats::retired::HELPER_ROWS`), a run
    asked for columns has the rows of its recycled connections put into
    columns on a helper thread as it goes, in flow order, with those still
    open at its end after them: the same rows as the plain form."""
    from tcplab.api import encode_packed, run_core_columns

    apps = [{"type": "web", "name": f"w{i}", "src": f"s{i % 10}", "dst": f"k{i % 10}"} for i in range(100)]
    sc = tcplab.load(dumbbell(left=10, right=10, bottleneck_rate="100Mbps", duration="360s", apps=apps))
    plain = json.loads(_core.run_json(json.dumps(sc.to_core())))
    flows = plain["flows"]
    assert len(flows) > 40_000 and not all(f["completed"] for f in flows[-100:])
    text, blobs = encode_packed(sc.to_core(packed=True))
    assert _rows(run_core_columns(text, blobs=blobs), True) == _rows(plain, False)
    assert _rows(json.loads(_core.run_json(json.dumps(sc.to_core()), True)), True) == _rows(plain, False)
