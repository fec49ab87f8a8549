"""tcplab: a fast, reproducible laboratory for TCP congestion-control experiments.

>>> import tcplab
>>> res = tcplab.run("examples/dumbbell-bulk.toml", overrides={"tcp.iw": 4}, seed=7)
>>> res.flows  # one row per transfer
>>> res.links  # one row per link direction
"""

from ._core import __version__
from .api import Result, run
from .errors import FieldProblem, InternalError, ScenarioError, SimulationError, TcplabError
from .scenario import Scenario, load

__all__ = [
    "__version__",
    "run",
    "load",
    "Result",
    "Scenario",
    "TcplabError",
    "ScenarioError",
    "SimulationError",
    "InternalError",
    "FieldProblem",
]
