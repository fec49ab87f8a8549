"""The exceptions tcplab raises: everything derives from :class:`TcplabError`."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass


class TcplabError(Exception):
    """Base class of every error tcplab raises on purpose."""


def field_path(path: str) -> str:
    """A field's dotted path with list indices written as error messages
    write them (``apps[0].size``) turned into dotted ones (``apps.0.size``),
    so both spellings name the same field."""
    return re.sub(r"\[(-?\d+)\]", r".\1", path)


def is_field_path(path: object) -> bool:
    """Whether `path` names a field: dotted (or with list indices in
    brackets), with no empty part (``tcp..iw``, ``.tcp`` and ``''`` do not)."""
    return isinstance(path, str) and all(field_path(path).split("."))


@dataclass(frozen=True)
class FieldProblem:
    """One problem with one field of a scenario."""

    field: str
    message: str
    value: object = None
    has_value: bool = False

    def __str__(self) -> str:
        if self.has_value:
            return f"{self.field} = {_shown(self.value)}: {self.message}"
        return f"{self.field}: {self.message}"


def _shown(value: object) -> str:
    """A value as the message shows it: Python's repr, but a TOML date or
    time, and true and false, as TOML writes them (``1979-05-27``, not
    ``datetime.date(1979, 5, 27)``; ``true``, not ``True``), in a list too."""
    if isinstance(value, (datetime.date, datetime.time)):  # datetime.datetime is a date
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(_shown, value)) + "]"
    return repr(value)


class ScenarioError(TcplabError):
    """A scenario file, dictionary or override that cannot be run.

    ``problems`` lists each bad field with its value and what is allowed.
    """

    #: What the problems are in, for the message.
    what = "scenario"

    def __init__(self, problems: list[FieldProblem] | str, source: str | None = None):
        if isinstance(problems, str):
            problems = [FieldProblem(self.what, problems)]
        self.problems = problems
        self.source = source
        where = f" in {source}" if source else ""
        if len(problems) == 1:
            text = f"invalid {self.what}{where}: {problems[0]}"
        else:
            lines = "\n".join(f"  - {p}" for p in problems)
            text = f"invalid {self.what}{where} ({len(problems)} problems):\n{lines}"
        super().__init__(text)


class SweepError(ScenarioError):
    """A sweep file (or a sweep built in code) that cannot be run: its own
    fields, or a configuration whose scenario is refused, each problem
    naming the factor levels it comes from."""

    what = "sweep"


class UsageError(ScenarioError, ValueError):
    """A bad argument of a figure, an analysis or a function of the API (a
    command-line option, or the parameter of the function behind it), not of
    the scenario: each problem names the option, its value and what is
    allowed. A ValueError too, as Python's own bad arguments are."""

    what = "argument"


class SimulationError(TcplabError):
    """Kept for compatibility; nothing raises it now. A scenario the core
    refuses raises :class:`ScenarioError` naming the field, and a failure
    inside the core raises :class:`InternalError`."""


class RunsFailed(TcplabError):
    """Runs of a study failed (the scenarios were checked before, so a bug:
    a panic in the core, or a worker that died); the study is not analyzed
    on part of its runs. The failed runs are retried by the same command."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a study's runs: the finished ones are stored, and the
    same command (or call) resumes from them. A KeyboardInterrupt, so that a
    script stops as it would on any Ctrl-C; the message says what is kept."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


class InternalError(TcplabError):
    """tcplab itself failed (a panic in the core): a bug. ``scenario`` (the
    normalized scenario, JSON text) and ``seed`` reproduce it."""

    def __init__(self, message: str, scenario: str, seed: int):
        self.scenario = scenario
        self.seed = seed
        super().__init__(f"internal error in the simulator (a bug in tcplab, please report it): {message}; seed {seed}")
