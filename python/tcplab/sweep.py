"""Sweeps: a base scenario, factors with levels, replications.

A sweep file (TOML) names a base scenario (a path, relative to the sweep
file, or an inline ``[base]`` table), the factors to vary (dotted scenario
fields with a list of levels each), full factorial by default or an explicit
list of points, and R replications. Every configuration is validated before
any run starts. Replication r of every configuration uses the same seed,
derived from the sweep's seed and r (common random numbers), and each run is
named by a hash of its fully resolved scenario, so a store knows which runs
it already holds.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import FieldProblem, ScenarioError, SweepError, UsageError, is_field_path
from .worker import execute, execute_many  # noqa: F401 - the sweep's runs, re-exported
from .scenario import apply_overrides, field_path, read_toml, validate, value_at
from .scenario.fields import Int, not_blank
from .scenario.loading import _problems_from

if TYPE_CHECKING:
    from collections.abc import Iterator


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SweepSection(_M):
    name: Annotated[Optional[str], not_blank("the file's stem")] = None
    """Label of this sweep in the store; default: the file's stem."""
    scenario: Optional[str] = None
    """The base scenario file, relative to the sweep file (or give [base])."""
    replications: Int = Field(default=1, ge=1)
    seed: Int = Field(default=1, ge=0)
    design: Literal["factorial", "points"] = "factorial"
    store: Annotated[str, not_blank("results.duckdb")] = "results.duckdb"
    """The DuckDB file, relative to the working directory."""
    traces: bool = False
    """Also store the trace and packet tables the scenario records."""


class SweepFile(_M):
    sweep: SweepSection = SweepSection()
    base: Optional[dict[str, Any]] = None
    factors: dict[str, list[Any]] = {}
    points: list[dict[str, Any]] = []


@dataclass(frozen=True)
class Run:
    """One simulation of a sweep."""

    run_id: str
    config_id: str
    rep: int
    seed: int
    factors: dict[str, Any]
    core_json: str


@dataclass
class Sweep:
    name: str
    store: str
    traces: bool
    factor_names: list[str]
    runs: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the sweep file says that the runs do not use, for the user."""


def derive_seed(base_seed: int, rep: int) -> int:
    """The seed of replication `rep`: stable across machines and releases."""
    h = hashlib.sha256(f"tcplab/{base_seed}/{rep}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def _replications(sc: Any, replications: int, seed: int) -> "Iterator[tuple[int, int, str, str]]":
    """Each replication of a validated scenario: (rep, its seed, the run id,
    the core JSON). The core JSON is the text the run id hashes: the core
    form with the replication's seed, keys sorted and no spaces. Only the
    seed differs between replications, so the other top-level values are
    written once and each replication's text is put together around its
    seed (JSON text nests: a value's text is the same alone and inside its
    document); a study's scenario of a hundred applications takes some
    30 ms to write."""
    base = sc.to_core()
    parts = {k: json.dumps(v, sort_keys=True, separators=(",", ":")) for k, v in base.items() if k != "seed"}
    for rep in range(replications):
        run_seed = derive_seed(seed, rep)
        fields = {**parts, "seed": json.dumps(run_seed)}
        text = "{" + ",".join(f"{json.dumps(k)}:{fields[k]}" for k in sorted(fields)) + "}"
        yield rep, run_seed, hashlib.sha256(text.encode()).hexdigest()[:16], text


def _check_core(core_json: str) -> None:
    """What the core refuses in a scenario that Python's validation passed
    (checks across fields, such as ``tcp.hystart`` with a controller other
    than cubic), raised before any run starts rather than failing every run."""
    from .api import check_core

    check_core(core_json)


def load_sweep(path: str | Path, store: str | None = None) -> Sweep:
    """Read and check a sweep file; every configuration is validated here.
    `store` replaces the file's store (None: the file's)."""
    if store is not None and (not isinstance(store, str) or not store.strip()):  # '' went to the file's store without a word
        raise UsageError([FieldProblem("store", "expected a store's path, or None for the sweep file's", store, True)])
    p = Path(path)
    try:
        raw = read_toml(p)
    except ScenarioError as e:  # not found, or not TOML
        raise SweepError("; ".join(pr.message for pr in e.problems), str(p)) from None
    try:
        sf = SweepFile.model_validate(raw)
    except ValidationError as e:
        raise SweepError(_problems_from(e, raw, SweepFile), str(p)) from None
    s = sf.sweep
    if (s.scenario is None) == (sf.base is None):
        raise SweepError([FieldProblem("sweep.scenario", "give exactly one of sweep.scenario (a file) and a [base] table")], str(p))
    if sf.base is not None:
        base = sf.base
    else:
        at = p.parent / s.scenario  # type: ignore[operator]
        try:
            base = read_toml(at)
        except ScenarioError as e:
            # Not found, unreadable (a directory, a name too long) or not TOML.
            missing = e.problems[0].message.startswith("file not found")
            why = f"no such file: {at} (a path relative to the sweep file)" if missing else e.problems[0].message
            raise SweepError([FieldProblem("sweep.scenario", why, s.scenario, True)], str(p)) from None
        if "sweep" in base:
            raise SweepError([FieldProblem("sweep.scenario", "is a sweep file; name the scenario file its sweep varies", s.scenario, True)], str(p))
    if s.design == "factorial":
        if sf.points:
            raise SweepError([FieldProblem("points", "only with sweep.design = 'points'")], str(p))
        for name, levels in sf.factors.items():
            if not levels:
                raise SweepError([FieldProblem(f"factors.{name}", "has no levels; give at least one")], str(p))
        names = list(sf.factors)
        n_configs = math.prod(len(sf.factors[n]) for n in names)
        _check_size(n_configs, s.replications, " x ".join(str(len(sf.factors[n])) for n in names) + " configurations", str(p))
        configs = [dict(zip(names, combo)) for combo in itertools.product(*(sf.factors[n] for n in names))]
    else:
        if sf.factors:
            raise SweepError([FieldProblem("factors", "only with sweep.design = 'factorial'; list [[points]] instead")], str(p))
        if not sf.points:
            raise SweepError([FieldProblem("points", "sweep.design = 'points' needs at least one [[points]] table")], str(p))
        names = sorted({k for pt in sf.points for k in pt})
        _check_size(len(sf.points), s.replications, f"{len(sf.points)} points", str(p))
        configs = [dict(pt) for pt in sf.points]
    sweep = Sweep(name=s.name or p.stem, store=store or s.store, traces=s.traces, factor_names=names)
    given = (base.get("sim") or {}).get("seed") if isinstance(base.get("sim"), dict) else None
    if given is not None and given != s.seed:
        # Replaced in every run, like any seed a sweep runs; said, not silent.
        sweep.notes.append(f"{'[base]' if sf.base is not None else s.scenario} sets sim.seed = {given!r}, which the sweep replaces: replication r "
                           f"of every configuration runs the seed derived from (sweep.seed, r), here ({s.seed}, r)")  # fmt: skip
    where = "points[]" if s.design == "points" else "factors"
    not_paths = [n for n in names if not is_field_path(n)]
    if not_paths:
        raise SweepError([FieldProblem(where, f"{n!r} is not a field; expected a dotted field path such as 'tcp.iw'") for n in not_paths], str(p))
    overlaps = _overlapping(names)
    if overlaps:
        raise SweepError([FieldProblem(f"{where}.{a} and {where}.{b}", f"{how}, so one would overwrite the other's levels; "
                                          "vary the field by one of them") for a, b, how in overlaps], str(p))  # fmt: skip
    if "sim.seed" in map(field_path, names):
        # The sweep sets every run's seed (below), so this field would be
        # ignored; two of its levels would make one run.
        where = "points[].sim.seed" if s.design == "points" else "factors.sim.seed"
        raise SweepError([FieldProblem(where, "a sweep gives replication r of every configuration the seed derived from "
                                          "(sweep.seed, r), so this field has no effect; vary sweep.replications or sweep.seed instead")], str(p))  # fmt: skip
    problems: list[FieldProblem] = []
    reported: set[tuple[str, str, str]] = set()
    first_of: dict[str, int] = {}  # replication 0's run id -> the configuration that has it

    def report(where: str, levels: dict[str, Any], e: ScenarioError, core: bool = False) -> None:
        for prob in e.problems:
            lv = ", ".join(f"{k}={v!r}" for k, v in levels.items())
            at = f"{where} ({lv}): " if levels else ""  # a sweep without factors: its one scenario
            # A field of the [base] table is named as the file has it; one a factor sets, as before.
            # The core names the resolved scenario's fields (apps[0].tcp.hystart), in no table of the file.
            by_factor = core or any((field_path(prob.field) + ".").startswith(field_path(n) + ".") for n in levels)
            inside = "base." if sf.base is not None and not by_factor else ""
            key = (inside + prob.field, prob.message, repr(prob.value))
            if not by_factor and key in reported:
                continue  # the base's own problem, named at the first configuration that has it
            reported.add(key)
            problems.append(FieldProblem(f"{at}{inside}{prob.field}", prob.message, prob.value, prob.has_value))

    for ci, levels in enumerate(configs):
        where = f"points[{ci}]" if s.design == "points" else "factors"
        try:
            sc = validate(apply_overrides(base, levels), source=None)
        except ScenarioError as e:
            report(where, levels, e)
            continue
        if sc.trace.pcap:
            problems.append(FieldProblem(f"{where}: trace.pcap", "captures are written by single runs: tcplab run SCENARIO --pcap DIR", sc.trace.pcap, True))
            continue
        config_id = _hash(levels)
        # A point that leaves a factor unset runs with the base's value: its
        # label says which, not a blank.
        labels = {n: levels[n] if n in levels else _base_level(base, sc, n) for n in names}
        for rep, seed, run_id, core_json in _replications(sc, s.replications, s.seed):
            if rep == 0:
                if first_of.setdefault(run_id, ci) != ci:
                    twin = first_of[run_id]
                    problems.append(_twins(f"points[{twin}]" if s.design == "points" else "factors", configs[twin], where, levels))
                    break
                try:
                    _check_core(core_json)
                except ScenarioError as e:
                    report(where, levels, e, core=True)
                    break
            sweep.runs.append(Run(run_id, config_id, rep, seed, labels, core_json))
    if problems:
        raise SweepError(problems[:20], str(p))
    return sweep


#: The most runs a sweep may hold: each is validated and kept (its scenario
#: as the core reads it) before the first one starts.
MAX_RUNS = 1_000_000


def _check_size(configs: int, replications: int, what: str, source: str, field: str = "sweep.replications",
                advice: str = "split it into several sweeps (they can share a store)") -> None:  # fmt: skip
    if configs * replications > MAX_RUNS:
        raise SweepError([FieldProblem(field, f"{what} x {replications:,} replications make {configs * replications:,} runs; "
                                          f"a sweep holds at most {MAX_RUNS:,}: {advice}", replications, True)], source)  # fmt: skip


def _overlapping(names: list[str]) -> list[tuple[str, str, str]]:
    """Pairs of factor names that set the same field, with how: equal once
    list indices are spelled alike (``apps[0].size``, ``apps.0.size``), or
    one a table holding the other (``tcp``, ``tcp.iw``)."""
    canon = [field_path(n) + "." for n in names]
    out = []
    for i, j in itertools.combinations(range(len(names)), 2):
        if canon[i] == canon[j]:
            out.append((names[i], names[j], "name the same field"))
        elif canon[i].startswith(canon[j]) or canon[j].startswith(canon[i]):
            inner, outer = (i, j) if len(canon[i]) > len(canon[j]) else (j, i)
            out.append((names[i], names[j], f"{names[outer]!r} is a table holding {names[inner]!r}"))
    return out


def _twins(where_a: str, a: dict[str, Any], where_b: str, b: dict[str, Any]) -> FieldProblem:
    """Two configurations whose scenarios resolve to the same one: with the
    same seeds, every replication of one would be a replication of the other."""
    lv = lambda c: ", ".join(f"{k}={v!r}" for k, v in c.items())  # noqa: E731
    return FieldProblem(f"{where_a} ({lv(a)}) and {where_b} ({lv(b)})",
                        "these configurations give the same scenario once resolved, so their runs would be the same runs; keep one of them")  # fmt: skip


def _base_level(base: dict[str, Any], sc: Any, name: str) -> Any:
    """The value of dotted field `name` in a configuration that does not set
    it: as the base scenario writes it, or else as a scenario file would
    write the default (a table as JSON text, to label runs with)."""
    missing = object()
    value = value_at(base, name, missing)
    if value is missing:
        value = value_at(sc.model_dump(by_alias=True, mode="json"), name)
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def check_replications(replications: object) -> None:
    """A replication count given to the API: a whole number, at least 1 (a
    UsageError naming the argument otherwise; `True` is no count)."""
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise UsageError([FieldProblem("replications", "expected a whole number, at least 1", replications, True)])


def sweep_from_configs(name: str, store: str, configs: list[tuple[dict[str, Any], dict[str, Any]]], replications: int, seed: int = 1,
                       traces: bool = False, shared_runs: bool = False) -> Sweep:  # fmt: skip
    """A sweep built in code: (factor levels, scenario dictionary) pairs, each
    run `replications` times with the seeds a sweep file would give.

    Two configurations that resolve to one scenario would have the same
    runs: they are refused, or with `shared_runs` they share them (each
    run is simulated and stored once, and counted under both), as a
    study's one-at-a-time sensitivity rows do where a variant leaves a
    configuration as it was."""
    check_replications(replications)
    bad = [FieldProblem(arg, "expected a non-blank string", v, True) for arg, v in (("name", name), ("store", store))
           if not isinstance(v, str) or not v.strip()]  # a blank store was DuckDB's database in memory  # fmt: skip
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:  # as a sweep file's seed; True was hashed as another seed
        bad.append(FieldProblem("seed", "expected a whole number, at least 0", seed, True))
    if bad:
        raise UsageError(bad)
    if not configs:
        raise UsageError([FieldProblem("configs", "is empty: a sweep needs at least one (factor levels, scenario) pair")])
    for ci, c in enumerate(configs):
        if not (isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], dict) and isinstance(c[1], dict)):
            raise TypeError(f"configs[{ci}]: expected a (factor levels, scenario dictionary) pair of dicts; got {type(c).__name__}")
        if not all(isinstance(k, str) and k.strip() for k in c[0]):  # a factor is named in the store's tables
            raise UsageError([FieldProblem(f"configs[{ci}][0]", "expected factor names that are non-blank strings", list(c[0]), True)])
    _check_size(len(configs), replications, f"{len(configs)} configurations", name, "replications", "run fewer replications")
    names = sorted({k for levels, _ in configs for k in levels})
    sweep = Sweep(name=name, store=store, traces=traces, factor_names=names)
    first_of: dict[str, int] = {}  # replication 0's run id -> the configuration that has it
    for ci, (levels, doc) in enumerate(configs):
        lv = ", ".join(f"{k}={v!r}" for k, v in levels.items())
        sc = validate(doc, f"{name}, configuration ({lv})")
        if sc.trace.pcap:
            raise SweepError([FieldProblem(f"configuration ({lv}): trace.pcap", "captures are written by single runs, not sweeps", sc.trace.pcap, True)], name)
        config_id = _hash(levels)
        for rep, run_seed, run_id, core_json in _replications(sc, replications, seed):
            if rep == 0:
                twin = first_of.setdefault(run_id, ci)
                if twin != ci and not shared_runs:
                    raise SweepError([_twins("configuration", configs[twin][0], "configuration", levels)], name)
                if twin == ci:
                    try:
                        _check_core(core_json)
                    except ScenarioError as e:
                        raise ScenarioError(e.problems, f"{name}, configuration ({lv})") from None
            sweep.runs.append(Run(run_id, config_id, rep, run_seed, levels, core_json))
    return sweep
