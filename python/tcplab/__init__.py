"""tcplab: a fast, reproducible laboratory for TCP congestion-control experiments.

>>> import tcplab
>>> res = tcplab.run("examples/dumbbell-bulk.toml", overrides={"tcp.iw": 4}, seed=7)
>>> res.flows  # one row per transfer
>>> res.links  # one row per link direction

`run`, `load`, `Result` and `Scenario` (and the submodules) are imported when
first used, so `import tcplab` and `tcplab --version` stay fast.
"""

from __future__ import annotations as _annotations

import importlib as _importlib
from typing import Any as _Any

from ._core import __version__
from .errors import FieldProblem, InternalError, Interrupted, RunsFailed, ScenarioError, SimulationError, SweepError, TcplabError, UsageError

__all__ = [
    "__version__",
    "run",
    "load",
    "Result",
    "Scenario",
    "TcplabError",
    "ScenarioError",
    "UsageError",
    "SweepError",
    "SimulationError",
    "InternalError",
    "RunsFailed",
    "Interrupted",
    "FieldProblem",
]

_LAZY = {"run": "api", "Result": "api", "load": "scenario", "Scenario": "scenario"}
_SUBMODULES = {"analysis", "api", "cli", "plots", "runner", "scenario", "store", "studies", "sweep", "units"}


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'tcplab' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, the lazily imported ones and the submodules
    included (tab completion and `dir(tcplab)` list `run` before its first use)."""
    return sorted({*__all__, *_SUBMODULES, *(n for n in globals() if not n.startswith("_"))})
