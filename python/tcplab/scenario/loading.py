"""Loading scenario files and dictionaries, dotted-path overrides, and
validation errors that name each bad field, its value and what is allowed."""

from __future__ import annotations

import collections
import copy
import itertools
import json
import math
import operator
import re
import tomllib
import types
import typing
from pathlib import Path
from collections.abc import Mapping
from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, Tag, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ..errors import FieldProblem, ScenarioError, field_path, is_field_path
from .apps import App, BulkApp, BurstApp, RepeatApp, WebApp
from .model import _IDENTITY, Scenario, runs_of_equal

def _is_duckdb(p: Path) -> bool:
    """Whether the file starts as a DuckDB database does ('DUCK' at offset 8)."""
    try:
        with p.open("rb") as f:
            return f.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def read_toml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"file not found: {p}") from None
    except OSError as e:
        raise ScenarioError(f"cannot read {p}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        what = "a DuckDB file (a results store: read it with tcplab analyze, export or plot)" if _is_duckdb(p) else f"not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})"
        raise ScenarioError(f"not a TOML file: {what}", source=str(p)) from None
    doc = parse_toml(text, str(p))
    if "empirical" in text:  # a scenario of 100,000 applications is not walked for none
        _files_beside(doc, p.resolve().parent)
    return doc


def _files_beside(node: Any, base: Path) -> None:
    """Give each empirical distribution's relative `file` in a document read
    from a TOML file as a path from `base`, that file's directory, made
    absolute: `file = "sizes.csv"` is the one beside the scenario (or sweep)
    file, wherever it is run from, and a scenario written out as it ran
    (`tcplab run --out`) finds it again. It was taken from the working
    directory, so `tcplab run sub/scenario.toml` could not find the CSV
    beside it."""
    if isinstance(node, dict):
        f = node.get("file")
        if node.get("type") == "empirical" and isinstance(f, str) and f and not Path(f).is_absolute():
            node["file"] = str(base / f)
        for v in node.values():
            _files_beside(v, base)
    elif isinstance(node, list):
        for v in node:
            _files_beside(v, base)


def parse_toml(text: str, source: str | None = None) -> dict[str, Any]:
    """A TOML document as a dictionary, as `tomllib` reads it. The core's
    parser reads it when the document's values are what JSON carries (the
    usual case, and about 8 times faster on a large scenario); `tomllib` reads
    the rest, and reports every error."""
    from .. import _core

    js = _core.toml_to_json(text)
    if js is not None:
        return json.loads(js)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"not valid TOML: {e}", source=source) from None


def dumps_toml(doc: dict[str, Any]) -> str:
    """A scenario dictionary as TOML that `read_toml` reads back equal (tuples
    as lists): a section per table, `[[name]]` per element of a list of tables, and
    tables inside those inline. A value that TOML cannot hold is named by its
    field path, found only then (:func:`_unwritable`): a scenario of 100,000
    applications has some 600,000 values."""
    keys: dict[str, str] = {}
    plain, bare, dumps = _PLAIN_STRING.fullmatch, _BARE_KEY.fullmatch, json.dumps

    def value(v: Any) -> str:
        t = type(v)
        if t is str:
            return f'"{v}"' if plain(v) else dumps(v)  # ASCII, with TOML's escapes (as json.dumps writes them)
        if t is int:
            return str(v)
        if t is dict:
            return "{" + ", ".join([f"{keys.get(k) or key(k)} = {value(x)}" for k, x in v.items()]) + "}"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
        if isinstance(v, str):
            return dumps(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join([value(x) for x in v]) + "]"
        if isinstance(v, dict):
            return value(dict(v))
        raise _Unwritable

    def key(k: str) -> str:
        q = keys[k] = k if bare(k) else dumps(k)
        return q

    def body(table: dict[str, Any]) -> list[str]:
        return [f"{keys.get(k) or key(k)} = {value(v)}" for k, v in table.items()]

    top = {k: v for k, v in doc.items() if not isinstance(v, dict) and not _tables(v)}
    try:
        lines = body(top)
        for k, v in doc.items():
            if isinstance(v, dict):
                lines += ["", f"[{key(k)}]", *body(v)]
            elif _tables(v):
                for t in v:
                    lines += ["", f"[[{key(k)}]]", *body(t)]
    except _Unwritable:
        where, v = _unwritable(top) or _unwritable(doc)
        raise ScenarioError([FieldProblem(".".join(map(str, where)), f"cannot be written as TOML: {type(v).__name__}", v, True)]) from None
    return "\n".join(lines).lstrip("\n") + "\n"


class _Unwritable(Exception):
    """A value `dumps_toml` cannot write (its field path is found afterwards)."""


def _unwritable(v: Any, where: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], Any] | None:
    """The field path and value of the first value in `v` (in the order
    `dumps_toml` writes them) that TOML cannot hold, or None."""
    if isinstance(v, dict):
        for k, x in v.items():
            if (found := _unwritable(x, (*where, k))) is not None:
                return found
        return None
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            if (found := _unwritable(x, (*where, i))) is not None:
                return found
        return None
    return None if isinstance(v, (str, int, float)) else (where, v)


#: Strings json.dumps writes as they are between quotes (printable ASCII but
#: the quote and the backslash), and keys TOML takes bare.
_PLAIN_STRING = re.compile(r'[ !#-\[\]-~]*')
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _tables(v: Any) -> bool:
    """A non-empty list of tables (written as `[[name]]` sections)."""
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def parse_override_value(text: str) -> Any:
    """A TOML value (`4`, `true`, `"x"`, `[1, 2]`) or, failing that, the bare text (`2Mbps`).
    TOML reads a bare `inf` or `nan` as a float, which no field takes: they
    stay text, as the fields that take 'inf' (sizes, ssthresh) spell it."""
    try:
        v = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    return text if isinstance(v, float) and not math.isfinite(v) else v


def apply_overrides(doc: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Set dotted paths (``tcp.iw``, ``apps.0.size`` or ``apps[0].size``) in
    a copy of `doc` (`doc` itself, unchanged, when there is nothing to set).
    A list's next index (``apps.4`` of four applications) adds an element."""
    if not overrides:
        return doc
    out = copy.deepcopy(doc)
    for path, value in (overrides or {}).items():
        if not is_field_path(path):
            # The command line's --set checks its paths first, so this names the API's argument.
            raise ScenarioError([FieldProblem("overrides", "expected a dotted field path such as 'tcp.iw'", path, True)])
        parts = field_path(path).split(".")
        node: Any = out
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            where = "".join(f"[{q}]" if q.lstrip("-").isdigit() else f".{q}" for q in parts[: depth + 1]).removeprefix(".")  # as validation names fields
            if isinstance(node, list):
                if last and part.isdigit() and int(part) == len(node):
                    node.append(value)  # the next index adds an element: --set 'apps.4={...}' after four
                    break
                if not part.isdigit() or int(part) >= len(node):
                    have = f"indices 0..{len(node) - 1}" if node else "the list is empty"
                    more = f" ({len(node)} adds a whole element)" if not last else f", or {len(node)} to add one"
                    raise ScenarioError([FieldProblem(where, f"no such list element; {have}{more}")])
                key: Any = int(part)
            elif isinstance(node, dict):
                key = part
            else:
                raise ScenarioError([FieldProblem(where, f"'{'.'.join(parts[:depth])}' is a value, not a table")])
            if last:
                node[key] = value
            else:
                if isinstance(node, dict) and key not in node:
                    node[key] = [] if parts[depth + 1].isdigit() else {}  # losses.0 of a scenario without losses
                node = node[key]
    return out


def value_at(doc: Any, path: str, missing: Any = None) -> Any:
    """The value at dotted `path` (``tcp.iw``, ``apps.0.size``) in `doc`, or
    `missing` where there is none."""
    for part in field_path(path).split("."):
        if isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            return missing
    return doc


def validate(doc: dict[str, Any], source: str | None = None) -> Scenario:
    """Validate a scenario document; raise :class:`ScenarioError` naming every bad field."""
    if not isinstance(doc, dict):
        raise ScenarioError("a scenario is a table (dictionary) of tables", source)
    doc, origins = expand_copies(doc, source)
    try:
        return _validate(doc, source)
    except ScenarioError as e:
        if origins is None:
            raise
        raise ScenarioError(_as_written(e.problems, origins), source) from None


def _validate(doc: dict[str, Any], source: str | None) -> Scenario:
    try:
        apps = _like_apps(doc.get("apps"))
        if apps is None:
            sc = Scenario.model_validate(doc)
        else:
            # Every application is a validated model already, which the list's
            # validation would pass through one by one: give it the first, then
            # the whole list.
            sc = Scenario.model_validate({**doc, "apps": apps[:1]})
            sc.__dict__["apps"] = apps
    except ValidationError as e:
        if apps is not None:  # report against the document as written
            try:
                Scenario.model_validate(doc)
            except ValidationError as e2:
                e = e2
        raise ScenarioError(_problems_from(e, doc), source) from None
    problems = sc.problems()
    if problems:
        raise ScenarioError(problems, source)
    return sc


#: The application models, whose tables also take `copies` (:func:`expand_copies`).
_APP_KINDS = (BulkApp, RepeatApp, WebApp, BurstApp)

#: The most applications one `[[apps]]` table may stand for.
MAX_COPIES = 1_000_000

# A copy's number in a name, a host or a start time: {k}, or {k + M},
# {k * M}, {k // M}, {k % M}.
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_COPY_NUMBER = re.compile(r"\s*k\s*(?:(\+|\*|//|%)\s*([0-9]+)\s*)?")
_OPS = {None: lambda k, m: k, "+": operator.add, "*": operator.mul, "//": operator.floordiv, "%": operator.mod}
_TEMPLATED = ("name", "src", "dst", "extra_src", "start")


def expand_copies(doc: dict[str, Any], source: str | None = None) -> tuple[dict[str, Any], list[tuple[int, int, int]] | None]:
    """`doc` with each application that sets ``copies = N`` replaced by N
    applications, copy k's ``{k}``, ``{k + M}``, ``{k * M}``, ``{k // M}``
    and ``{k % M}`` in its name, src, dst, extra_src and start (a time)
    replaced by their values (a name without a placeholder gets k
    appended), and for each application of the result, the index of the
    table it came from, its copy number and the number of copies (None,
    and `doc` itself, where no application sets copies)."""
    apps = doc.get("apps")
    if not isinstance(apps, list) or not any(isinstance(a, dict) and "copies" in a for a in apps):
        _check_no_placeholders(apps, source)
        return doc, None
    out: list[Any] = []
    origins: list[tuple[int, int, int]] = []
    problems: list[FieldProblem] = []
    for i, app in enumerate(apps):
        if not (isinstance(app, dict) and "copies" in app):
            problems += _placeholders_without_copies(app, i)
            out.append(app)
            origins.append((i, 0, 0))
            continue
        n = app["copies"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_COPIES:
            problems.append(FieldProblem(f"apps[{i}].copies", f"expected a whole number of applications from 1 to {MAX_COPIES:,}", n, True))
            continue
        base = {k: v for k, v in app.items() if k != "copies"}
        fills: dict[tuple[str, int], Any] = {}
        for key, j, text, at in _templated_texts(base, i):
            try:
                fill = _template(text, n)
            except ValueError as e:
                problems.append(FieldProblem(at, str(e), text, True))
                continue
            if fill is None and key == "name":
                fill = lambda k, name=text: f"{name}{k}"  # noqa: E731
            if fill is not None:
                fills[key, j] = fill
        for k in range(n):
            copy_k = dict(base)
            for (key, j), fill in fills.items():
                if key == "extra_src":
                    copy_k[key] = [*copy_k[key][:j], fill(k), *copy_k[key][j + 1 :]]
                else:
                    copy_k[key] = fill(k)
            out.append(copy_k)
        origins += [(i, k, n) for k in range(n)]
    if problems:
        raise ScenarioError(problems, source)
    return {**doc, "apps": out}, origins


def _templated_texts(app: dict[str, Any], i: int) -> Any:
    """The strings of `app` (table `i`) that may hold placeholders: each
    field's name, its index in a list (extra_src), the text and its path."""
    for key in _TEMPLATED:
        value = app.get(key)
        listed = key == "extra_src" and isinstance(value, list)
        for j, text in enumerate(value if listed else [value]):
            if isinstance(text, str):
                yield key, j, text, f"apps[{i}].{key}" + (f"[{j}]" if listed else "")


def _template(text: str, n: int) -> Any:
    """The function of a copy's number that fills `text`'s placeholders
    (None where it has none)."""
    parts: list[Any] = []
    last = 0
    for m in _PLACEHOLDER.finditer(text):
        number = _COPY_NUMBER.fullmatch(m.group(1))
        if number is None or (number.group(1) in ("//", "%") and int(number.group(2)) < 1):
            raise ValueError(f"unknown placeholder {m.group(0)!r}; allowed: {{k}} (the copy's number, 0 to copies - 1 = {n - 1}), "
                             "{k + M}, {k * M}, {k // M} and {k % M} (M a whole number, at least 1 to divide by)")
        op, by = _OPS[number.group(1)], int(number.group(2) or 0)
        parts += [text[last : m.start()], lambda k, op=op, by=by: str(op(k, by))]
        last = m.end()
    if not parts:
        return None
    parts.append(text[last:])
    return lambda k: "".join(p(k) if callable(p) else p for p in parts)


def _placeholders_without_copies(app: Any, i: int) -> list[FieldProblem]:
    """A {k} placeholder in an application that sets no copies."""
    if not isinstance(app, dict):
        return []
    return [FieldProblem(at, "a copy's number {k} is filled in only where the application sets copies = N", text, True)
            for _, _, text, at in _templated_texts(app, i)
            if any(_COPY_NUMBER.fullmatch(m.group(1)) for m in _PLACEHOLDER.finditer(text))]  # fmt: skip


def _check_no_placeholders(apps: Any, source: str | None) -> None:
    if not isinstance(apps, list) or not _may_hold_placeholders(apps):
        return
    problems = [p for i, a in enumerate(apps) for p in _placeholders_without_copies(a, i)]
    if problems:
        raise ScenarioError(problems, source)


def _may_hold_placeholders(apps: list[Any]) -> bool:
    """Whether a string where a placeholder may stand holds a '{', found by
    C-level maps over the list: a Python loop over a scenario of 100,000
    applications took 0.3-0.4 s of its set-up."""
    if not all(map(dict.__instancecheck__, apps)):
        return True
    for key in _TEMPLATED:
        values: Any = map(dict.get, apps, itertools.repeat(key))
        if key == "extra_src":
            values = itertools.chain.from_iterable(filter(list.__instancecheck__, values))
        if "{" in "".join(filter(str.__instancecheck__, values)):
            return True
    return False


_APP_AT = re.compile(r"apps\[(\d+)\]")


def _as_written(problems: list[FieldProblem], origins: list[tuple[int, int, int]]) -> list[FieldProblem]:
    """Problems of the expanded applications named by the tables they came
    from: ``apps[9].dst`` of copy 3 of ``apps[1]`` becomes ``apps[1].dst``
    (in copy 3 of N), and a problem several copies share is listed once."""

    def written(m: re.Match[str], own: int | None = None) -> str:
        j = int(m.group(1))
        if j >= len(origins):
            return m.group(0)
        i, k, n = origins[j]
        return f"apps[{i}]" + (f" (copy {k})" if n and j != own else "")

    groups: dict[tuple[str, str, bool, str], tuple[FieldProblem, int, list[int]]] = {}
    for p in problems:
        m = _APP_AT.match(p.field)
        own = int(m.group(1)) if m and int(m.group(1)) < len(origins) else None
        i, k, n = origins[own] if own is not None else (0, 0, 0)
        field = _APP_AT.sub(lambda x: written(x, own), p.field, count=1) if own is not None else p.field
        message = _APP_AT.sub(lambda x: written(x, own), p.message)
        key = (field, message, p.has_value, "" if n else repr(p.value))
        _, _, ks = groups.setdefault(key, (FieldProblem(field, message, p.value, p.has_value), n, []))
        if n:
            ks.append(k)
    out = []
    for p, n, ks in groups.values():
        if ks:
            which = "every copy" if len(ks) == n > 1 else ("copy " if len(ks) == 1 else "copies ") + ", ".join(map(str, ks[:5]))
            which += f" and {len(ks) - 5} more" if len(ks) > 5 and len(ks) < n else ""
            p = FieldProblem(p.field, f"{p.message} (in {which} of {n})", p.value, p.has_value)
        out.append(p)
    return out


_APP: list[TypeAdapter[Any]] = []  # built on first use: large scenarios only


def _like_apps(apps: Any) -> list[Any] | None:
    """Applications validated once per run of neighbours that differ only in
    name, src and dst: a scenario of 100,000 like flows validates one and
    copies it. None (validate them all the usual way) when any is not a
    table, has a name or node that is not a string, or fails validation, so
    errors name the field as written.

    The runs are found by C-level maps over the whole list (neighbours with
    equal keys, then equal other settings), not by a Python loop: at 100,000
    applications each pass of the loop was a noticeable part of set-up."""
    if not isinstance(apps, list) or len(apps) < 64 or set(map(type, apps)) != {dict}:
        return None
    keys = list(map(dict.keys, apps))
    key_runs = runs_of_equal(keys)
    out: list[Any] = []
    for s, e in zip(key_runs, key_runs[1:]):
        first = apps[s]
        names = [k for k in _IDENTITY if k in first]
        rest, ident = _tuple_getter([k for k in first if k not in _IDENTITY]), _tuple_getter(names)
        part = apps[s:e]
        idents = list(map(ident, part))
        if names and set(map(type, itertools.chain.from_iterable(idents))) != {str}:
            return None
        runs = runs_of_equal(list(map(rest, part)))
        for p, q in zip(runs, runs[1:]):
            if not _APP:
                _APP.append(TypeAdapter(App))
            try:
                m = _APP[0].validate_python(part[p])
            except ValidationError:
                return None
            out.append(m)
            if q - p > 1:
                out += _copies(m, names, idents[p + 1 : q])
    return out


def _copies(m: Any, names: list[str], idents: list[tuple[Any, ...]]) -> list[Any]:
    """Copies of model `m` with the values `idents` at `names`: shallow, as
    copy.copy makes them (these models have no extra or private fields). The
    nested settings are shared: nothing changes them. Each of a copy's four
    slots is set by a C-level map over all the copies, not in a Python loop."""
    cls, base = type(m), m.__dict__
    fields_set = m.__pydantic_fields_set__ | set(names)
    n = len(idents)
    if names == list(_IDENTITY):
        dicts = [{**base, "name": a, "src": b, "dst": c} for a, b, c in idents]
    else:
        dicts = [{**base, **dict(zip(names, vals))} for vals in idents]
    out = list(map(new, itertools.repeat(cls, n)))
    for slot, values in (
        ("__dict__", dicts),
        ("__pydantic_extra__", itertools.repeat(None)),
        ("__pydantic_fields_set__", map(set, itertools.repeat(fields_set, n))),
        ("__pydantic_private__", itertools.repeat(None)),
    ):
        _exhaust(map(setattr_, out, itertools.repeat(slot), values))
    return out


_exhaust = collections.deque(maxlen=0).extend


new = object.__new__
setattr_ = object.__setattr__


def _tuple_getter(keys: list[str]) -> Any:
    """A function of a dictionary returning the tuple of its values at `keys`."""
    if len(keys) > 1:
        return operator.itemgetter(*keys)
    if keys:
        get = operator.itemgetter(keys[0])
        return lambda d: (get(d),)
    return lambda d: ()


def _dumped(sc: Scenario) -> dict[str, Any]:
    """A Scenario's document, to be validated again. Assignments are
    validated, but a list's contents are not (`sc.apps.append(...)`): a
    value there that cannot be written out is refused, naming its field."""
    try:
        return sc.model_dump(by_alias=True, mode="json", exclude_unset=True, warnings=False)
    except PydanticSerializationError:
        pass
    # Which field: the first whose own dump fails, found by walking the
    # models (a value put in a list, or by `model_copy(update=...)`, which
    # validates nothing).
    def walk(node: Any, path: str) -> FieldProblem | None:
        if isinstance(node, list):
            return next(filter(None, (walk(item, f"{path}[{i}]") for i, item in enumerate(node))), None)
        if not isinstance(node, BaseModel):
            try:
                to_jsonable_python(node)
            except PydanticSerializationError:
                return FieldProblem(path, f"cannot be written out as a scenario value ({type(node).__name__})", node, True)
            return None
        for name, info in type(node).model_fields.items():
            key = info.alias or name
            at, value = f"{path}.{key}" if path else key, getattr(node, name)
            try:
                node.model_dump(mode="json", include={name}, warnings=False)
            except PydanticSerializationError:
                return walk(value, at) or FieldProblem(at, "is not a value this field takes (set without validation)", value, True)
        return None

    raise ScenarioError([walk(sc, "") or FieldProblem("scenario", "cannot be written out as a document")])


def load(source: str | Path | dict[str, Any] | Scenario, overrides: dict[str, Any] | None = None, seed: int | None = None) -> Scenario:
    """Load a scenario from a TOML path, a dictionary or a :class:`Scenario`,
    apply overrides and validate it."""
    if isinstance(source, Scenario):
        # Checked again as a document: its models check each field as it is
        # built or assigned, but not the whole (an application's unknown node
        # reached the core as a KeyError), nor what a list is given
        # (`sc.apps.append(...)`).
        doc, where = _dumped(source), None
    elif isinstance(source, dict):
        doc, where = source, None
    elif isinstance(source, (str, Path)):
        doc, where = read_toml(source), str(source)
    else:
        raise TypeError(f"a scenario is a TOML file's path, a dictionary or a tcplab.Scenario, not {type(source).__name__}")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides map field paths to values, such as {{'tcp.iw': 4}}; got {type(overrides).__name__}")
    over = dict(overrides or {})
    spelled: dict[str, tuple[str, Any]] = {}
    for key, value in over.items():  # apps.0.size and apps[0].size: the last one silently won
        first = spelled.setdefault(field_path(key), (key, value)) if isinstance(key, str) else (key, value)
        if first[1] != value:
            raise ScenarioError([FieldProblem(key, f"is given twice, as {first[0]} = {first[1]!r} and {key} = {value!r}; give it once")], where)
    if seed is not None:
        # The seed given twice, two ways (`--seed 3 --set sim.seed=5`): the
        # seed silently won.
        for key, value in over.items():
            path = field_path(key)
            if path == "sim" and isinstance(value, Mapping):
                path, value = "sim.seed", value.get("seed", seed)
            if path == "sim.seed" and value != seed:
                raise ScenarioError([FieldProblem("sim.seed", f"is given twice, as {seed} (the seed option) and as {value!r} ({key}); give it once")], where)
        over["sim.seed"] = seed
    try:
        doc = apply_overrides(doc, over)
    except ScenarioError as e:
        raise ScenarioError(e.problems, where) from None
    return validate(doc, where)


# ---------------------------------------------------------------- error messages


def _unwrap(ann: Any) -> Any:
    """Strip Annotated/Optional down to a model class, a list, or a union."""
    while True:
        origin = typing.get_origin(ann)
        if origin is Annotated:
            ann = typing.get_args(ann)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) == 1:
                ann = args[0]
            else:
                return ann
        else:
            return ann


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _walk(loc: tuple[Any, ...], root: type[BaseModel] = Scenario) -> tuple[str, Optional[type[BaseModel]], tuple[Any, ...]]:
    """Render a pydantic location in `root` as `a.b[0].c`, dropping union
    tags, and return the model class that holds the last element, and the
    location without its tags (the keys and indices of the document)."""
    path = ""
    kept: list[Any] = []
    current: Any = root
    parent: Optional[type[BaseModel]] = None
    for elem in loc:
        ann = _unwrap(current)
        if typing.get_origin(ann) in (Union, types.UnionType):
            tags = {}
            for arg in typing.get_args(ann):
                for meta in getattr(arg, "__metadata__", ()):
                    if isinstance(meta, Tag):  # a member of a union told apart by a function
                        tags[meta.tag] = typing.get_args(arg)[0]
                arg = _unwrap(arg)
                if isinstance(arg, type) and issubclass(arg, BaseModel) and "type" in arg.model_fields:
                    for t in typing.get_args(arg.model_fields["type"].annotation):
                        tags[t] = arg
            if elem in tags:
                current = tags[elem]
                continue
            ann = None
        if typing.get_origin(ann) in (list, tuple) and isinstance(elem, int):
            path += f"[{elem}]"
            kept.append(elem)
            current = typing.get_args(ann)[0]
            continue
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            if elem not in ann.model_fields and "type" in ann.model_fields and elem in typing.get_args(ann.model_fields["type"].annotation):
                continue  # the tag of a one-member tagged union
            parent = ann
            field = ann.model_fields.get(elem) or next((f for f in ann.model_fields.values() if f.alias == elem), None)
            current = field.annotation if field is not None else None
        else:
            parent, current = None, None
        path += f".{elem}" if path else str(elem)
        kept.append(elem)
    return path or "scenario", parent, tuple(kept)


def _lookup(doc: Any, loc: tuple[Any, ...]) -> tuple[bool, Any]:
    node = doc
    for elem in loc:
        if isinstance(node, dict) and elem in node:
            node = node[elem]
        elif isinstance(node, list) and isinstance(elem, int) and 0 <= elem < len(node):
            node = node[elem]
        elif not isinstance(node, (dict, list)):
            return True, node  # a shorthand (queue = "25pkt") stands for the whole table
        else:
            return False, None
    return True, node


#: Pydantic's type errors in the words of the other messages.
_EXPECTED = {
    "bool_type": "expected true or false", "bool_parsing": "expected true or false",
    "int_type": "expected a whole number", "int_parsing": "expected a whole number", "int_from_float": "expected a whole number",
    "float_type": "expected a number", "float_parsing": "expected a number", "finite_number": "expected a finite number",
    "string_type": "expected text (a quoted string)",
}  # fmt: skip

#: An unknown top-level table that belongs to the other kind of file.
_OTHER_FILE = {"sweep": "; this is a sweep file's table: run a sweep file with tcplab sweep FILE",
               "topology": "; this is a scenario's table: run a scenario with tcplab run FILE, or name it in sweep.scenario"}  # fmt: skip


def _problems_from(err: ValidationError, doc: dict[str, Any], root: type[BaseModel] = Scenario) -> list[FieldProblem]:
    """Each error of `err` (validating `doc` as `root`: a scenario, or a sweep
    file) as the field's path, its value and what is allowed."""
    out: list[FieldProblem] = []
    for e in err.errors(include_url=False):
        loc = tuple(e["loc"])
        kind = e["type"]
        path, parent, fields = _walk(loc, root)
        has, value = _lookup(doc, fields)
        ctx = e.get("ctx") or {}
        if kind in ("extra_forbidden", "no_such_attribute"):  # the second: an assignment (`sc.tcp.nosuch = 3`)
            # An application's table in a scenario also takes copies (expand_copies).
            tables = ["copies"] * (root is Scenario and parent in _APP_KINDS)
            allowed = ", ".join(_field_names(parent) + tables) if parent else "see the README's scenario file reference"
            hint = _OTHER_FILE.get(loc[0], "") if len(loc) == 1 and loc[0] not in root.model_fields else ""
            out.append(FieldProblem(path, f"unknown field; allowed fields here: {allowed}{hint}"))
            continue
        if kind == "missing":
            out.append(FieldProblem(path, "required field is missing"))
            continue
        if kind == "value_error":
            msg = str(ctx.get("error", e["msg"]))
        elif kind == "literal_error":
            msg = f"not allowed; allowed values: {ctx.get('expected')}"
        elif kind == "union_tag_invalid":
            msg = f"unknown type; allowed: {ctx.get('expected_tags')}"
            path = f"{path}.type" if path != "scenario" else "type"
            has, value = True, ctx.get("tag")
        elif kind == "union_tag_not_found":
            msg = "a 'type' field is required to tell which kind this is"
            path = f"{path}.type"
            has = False
        elif kind in ("model_type", "model_attributes_type", "dict_type"):
            msg = "expected a table"
        elif kind == "list_type":
            msg = "expected a list"
        elif kind in _EXPECTED:
            msg = _EXPECTED[kind]
        elif kind in ("less_than_equal", "greater_than_equal", "less_than", "greater_than"):
            bound = {"less_than_equal": ("at most", "le"), "greater_than_equal": ("at least", "ge"), "less_than": ("below", "lt"),
                     "greater_than": ("above", "gt")}[kind]  # fmt: skip
            msg = f"out of range: {bound[0]} {ctx.get(bound[1])}"
        elif kind == "too_short":
            msg = f"needs at least {ctx.get('min_length')} item(s)"
        else:
            msg = e["msg"]
        # Tables and lists are not repeated in the message: the path names them.
        out.append(FieldProblem(path, msg, value, has and not isinstance(value, (dict, list))))
    return out

