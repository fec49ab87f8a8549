"""Scenario and sweep files are read by the core's TOML parser where JSON
carries the document exactly, else by tomllib: the same dictionaries, keys in
the same order, and tomllib's errors."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest

from tcplab import _core
from tcplab.errors import ScenarioError
from tcplab.scenario.loading import dumps_toml, parse_toml, read_toml

ROOT = Path(__file__).resolve().parent.parent

EVERY_KIND = r'''
title = 'literal \no escape'
"quoted.key" = 1
dotted.inner.leaf = "x"
ints = [0, -17, 9_223_372_036_854_775_807, -9223372036854775808, 0xDEAD_beef, 0o755, 0b1101]
floats = [0.1, -2.5e-3, 6.02E23, 1_000.000_1, -0.0, 5e+22, 1e-320]
bools = [true, false]
text = "tab\there \"q\" \\ \u00e9 \U0001F600"
multi = """
two
lines"""
raw = @@@C:\path@@@
empty = []
mixed = [1, "a", [2, 3], {k = "v"}]

[sim]
duration = "5s"
seed = 3

[topology.bottleneck]
rate = "2Mbps"

[[apps]]
type = "bulk"
start = {type = "uniform", min = "0s", max = "1s"}

[[apps]]
type = "web"
[apps.tcp]
iw = 4
'''.replace("@@@", "'''")


def _same(text: str) -> bool:
    js = _core.toml_to_json(text)
    assert js is not None
    # json.dumps keeps insertion order: the key order is compared too.
    return json.dumps(json.loads(js)) == json.dumps(tomllib.loads(text))


def test_every_kind_of_value_reads_as_tomllib_reads_it_keys_in_order():
    assert _same(EVERY_KIND)
    doc = parse_toml(EVERY_KIND)
    assert list(doc) == ["title", "quoted.key", "dotted", "ints", "floats", "bools", "text", "multi", "raw", "empty", "mixed", "sim", "topology", "apps"]
    assert doc["floats"][-1] == 1e-320 and math.copysign(1, doc["floats"][4]) == -1
    assert doc["text"] == 'tab\there "q" \\ é 😀' and doc["apps"][1]["tcp"] == {"iw": 4}


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_the_examples_read_as_tomllib_reads_them(path):
    assert _same(path.read_text())


def test_a_written_scenario_of_many_applications_reads_as_tomllib_reads_it():
    apps = [{"type": "bulk", "name": f"f{i}", "src": f"s{i}", "dst": f"k{i}", "size": "inf",
             "start": {"type": "uniform", "min": "0s", "max": "1s"}} for i in range(2000)]  # fmt: skip
    doc = {"sim": {"duration": "2s", "seed": 1}, "topology": {"type": "dumbbell", "left": 2000, "right": 2000}, "apps": apps}
    assert _same(dumps_toml(doc))


def test_a_value_toml_cannot_hold_is_named_by_its_field_path():
    # The first in the order the file is written: top-level values, then the sections.
    doc = {"sim": {"seed": 1}, "apps": [{"name": "a"}, {"name": "b", "start": {"min": "0s", "max": {1, 2}}}]}
    with pytest.raises(ScenarioError) as e:
        dumps_toml(doc)
    assert str(e.value) == "invalid scenario: apps.1.start.max = {1, 2}: cannot be written as TOML: set"
    with pytest.raises(ScenarioError) as e:
        dumps_toml({**doc, "x": b"1"})
    assert str(e.value) == "invalid scenario: x = b'1': cannot be written as TOML: bytes"


@pytest.mark.parametrize("text, check", [
    ("t = 1979-05-27T07:32:00Z", lambda d: d["t"].year == 1979),
    ("x = inf", lambda d: d["x"] == math.inf),
    ("x = nan", lambda d: math.isnan(d["x"])),
    ("seed = 18446744073709551615", lambda d: d["seed"] == 2**64 - 1),
])  # fmt: skip
def test_what_json_cannot_carry_is_read_by_tomllib(text, check):
    assert _core.toml_to_json(text) is None
    assert check(parse_toml(text))


@pytest.mark.parametrize("text", ["[topology\n", "a = 1\na = 2\n", "x = = 1\n"])
def test_an_invalid_file_gets_tomllibs_message(tmp_path, text):
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(tomllib.TOMLDecodeError) as expected:
        tomllib.loads(text)
    with pytest.raises(ScenarioError) as e:
        read_toml(tmp_path / "s.toml")
    assert str(e.value) == f"invalid scenario in {tmp_path / 's.toml'}: scenario: not valid TOML: {expected.value}"


def test_toml_1_1_is_read_where_json_carries_the_document():
    """The core's parser reads TOML 1.1 (the `toml` crate's spec), tomllib
    TOML 1.0: an inline table over several lines, a trailing comma in one,
    and the escapes \\e and \\xHH read as 1.1 says. A document that also holds
    what JSON cannot carry (a date, inf or nan) goes to tomllib, as 1.0."""
    text = 'a = { x = 1,\n  y = "\\e\\x41", }\n'
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    assert parse_toml(text) == {"a": {"x": 1, "y": "\x1bA"}}
    with pytest.raises(ScenarioError, match="not valid TOML"):
        parse_toml(text + "t = 1979-05-27\n")


def test_mutated_files_read_as_tomllib_reads_them_wherever_tomllib_reads_them():
    """4,000 copies of the examples with bytes inserted, removed or copied
    (quotes, brackets, escapes, dates, inf, long numbers, control
    characters): wherever tomllib reads a copy, the core's reading gives the
    same document; where tomllib refuses one, the core's reading refuses it
    too unless TOML 1.1 allows it (the test above)."""
    import random
    import re

    pieces = ['=', '"', "'", '[', ']', '{', '}', ',', '\n', '#', '.', 'inf', 'nan', '-', '+', '1e400', '0x1F', '0o7', '0b1', '1_000',
              '"""', "'''", '\\', '\\u00e9', 'true', '1979-05-27', '07:32:00', ' ', '\t', '[[apps]]', 'a.b.c', '9' * 30, '-0', 'é', '\x00']  # fmt: skip
    texts = [p.read_text() for p in sorted((ROOT / "examples").glob("*.toml"))]
    rng = random.Random(67)

    def same(a, b):  # nan is nan
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
            return math.isnan(b)
        if isinstance(a, dict):
            return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return type(a) is type(b) and a == b

    read = 0
    for _ in range(4000):
        t = list(rng.choice(texts))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(t) + 1)
            r = rng.random()
            if r < 0.4:
                t[i:i] = list(rng.choice(pieces))
            elif r < 0.7:
                del t[i : i + rng.randint(1, 8)]
            else:
                j = rng.randrange(len(t))
                t[i:i] = t[j : j + rng.randint(1, 20)]
        text = "".join(t)
        try:
            ref = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            try:
                parse_toml(text)
            except ScenarioError:
                continue
            # Read by the core only: TOML 1.1's multi-line inline tables and escapes.
            assert re.search(r"\{[^}\n]*\n|\\[ex]|,\s*\}", text), (str(e), text)
            continue
        assert same(ref, parse_toml(text)), text
        read += 1
    assert 1000 <= read <= 2000
