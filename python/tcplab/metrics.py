"""The per-run metrics a sweep stores, computed with NumPy alone: a sweep's
worker imports this, not the store (pandas, DuckDB)."""

from __future__ import annotations

from typing import Any

import numpy as np

#: Per-run metrics written to the ``metrics`` table.
METRICS = {
    "fct_s": "median completion time of the completed transfers (s)",
    "fct_mean_s": "mean completion time of the completed transfers (s)",
    "completed": "number of completed transfers",
    "goodput_bps": "bits delivered to receivers per simulated second",
    "utilization": "utilization of the busiest link",
    "drop_rate": "drops / arrivals at the busiest link",
    "jain": "Jain's fairness index of the transfers' goodputs",
    "efficiency": "goodput over the busiest link's rate",
    "power": "goodput_bps / fct_s (network power)",
    "page_delay_s": "median delay of the completed pages (web pages; a persistent client's transfers) (s)",
}


def jain_index(x: Any) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes all."""
    a = np.asarray(x, dtype=float)
    # The index is for finite amounts of 0 or more: [-1, 2] gave 0.1, and
    # [inf, 1] NaN with a RuntimeWarning. NaN (an amount not known) gives NaN.
    if (a < 0).any() or np.isinf(a).any():
        from .errors import FieldProblem, UsageError

        raise UsageError([FieldProblem("x", "expected finite amounts of 0 or more", a.tolist(), True)])
    if a.size == 0 or not np.any(a):
        return float("nan")
    return float(a.sum() ** 2 / (a.size * np.square(a).sum()))


def _median(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(np.median(x)) if x.size else float("nan")


def _mean(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(x.mean()) if x.size else float("nan")


def _col(table: Any, name: str, dtype: Any) -> np.ndarray:
    """Column `name` of a table (a DataFrame, or columns by name as the core
    returns them: lists or arrays, none for an empty table) as an array."""
    return np.asarray(table[name], dtype=dtype) if name in table else np.empty(0, dtype=dtype)


def run_metrics(flows: Any, links: Any, pages: Any, engine: dict[str, Any]) -> dict[str, float]:
    """The per-run summaries of :data:`METRICS`, computed with NumPy on the
    tables' columns (DataFrames, or columns by name as the core returns
    them; NaN left out of medians and means): the same values whatever
    optional accelerators pandas has, and a fraction of its cost on the
    small tables of a run."""
    sim_s = float(engine["sim_seconds"])
    completed = _col(flows, "completed", bool)
    fct_done = _col(flows, "fct_s", float)[completed]
    fct = _median(fct_done)
    goodput = float(_col(flows, "bytes_delivered", np.int64).sum()) * 8 / sim_s if sim_s > 0 else float("nan")
    nan = float("nan")
    util = drop = eff = nan
    utilization = _col(links, "utilization", float)
    if utilization.size:
        b = int(np.nanargmax(utilization))
        util = float(utilization[b])
        arrivals = int(_col(links, "arrivals", np.int64)[b])
        drop = float(int(_col(links, "drops", np.int64)[b]) / arrivals) if arrivals else nan
        eff = goodput / float(_col(links, "rate_bps", float)[b])
    page_done = _col(pages, "completed", bool)
    return {
        "fct_s": fct,
        "fct_mean_s": _mean(fct_done),
        "completed": float(completed.sum()),
        "goodput_bps": goodput,
        "utilization": util,
        "drop_rate": drop,
        "jain": jain_index(_col(flows, "goodput_bps", float)),
        "efficiency": eff,
        "power": goodput / fct if fct and fct == fct else nan,
        "page_delay_s": _median(_col(pages, "delay_s", float)[page_done]),
    }
