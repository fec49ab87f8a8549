"""Statistics over replications, fairness, and full-factorial analysis of variation.

Intervals: t-intervals for means (Student's t quantiles from
`scipy.special.stdtrit`) and percentile-bootstrap intervals for medians,
each computed as `scipy.stats` computes it, to the last bit (a test compares
them), without importing `scipy.stats` (about 1 s). The analysis of
variation follows Jain, *The Art of Computer
Systems Performance Analysis*, chapters 20-22 (effects as deviations of
level means from the grand mean, sums of squares, allocation of variation),
with effect confidence intervals from a statsmodels least-squares fit with
sum-to-zero contrasts.
"""

from __future__ import annotations

import itertools
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import FieldProblem, UsageError
from .store import all_numbers, jain_index

__all__ = ["summarize", "jain_index", "max_min_fair", "fairness_vs_max_min", "allocation_of_variation", "Anova", "t_ppf", "t_interval", "sem"]


def t_ppf(q: float, dof: float) -> float:
    """Student's t quantile: `scipy.stats.t.ppf(q, dof)`."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, q))


def sem(x: np.ndarray) -> float:
    """The standard error of the mean: `scipy.stats.sem(x)` (ddof 1)."""
    return float(np.std(x, ddof=1) / len(x) ** 0.5)


def t_interval(conf: float, dof: float, loc: float, scale: float) -> tuple[float, float]:
    """`scipy.stats.t.interval(conf, dof, loc=loc, scale=scale)`: the
    quantiles (1 - conf) / 2 and (1 + conf) / 2, scaled and shifted."""
    from scipy.special import stdtrit

    lo, hi = stdtrit(dof, np.array([(1.0 - conf) / 2, (1.0 + conf) / 2]))
    return float(lo * scale + loc), float(hi * scale + loc)


def _median_ci(x: np.ndarray, conf: float, n_boot: int, seed: int) -> tuple[float, float]:
    """A percentile-bootstrap interval of the median, as `scipy.stats.bootstrap((x,),
    np.median, method="percentile", random_state=seed)` draws and bounds it:
    `n_boot` resamples of indices from a `RandomState(seed)` in one batch,
    then the resampled medians' quantiles by Hyndman and Fan's definition 7
    in scipy's arithmetic."""
    n = len(x)
    if n < 2:
        return float("nan"), float("nan")  # one run: no interval
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    idx = np.random.RandomState(seed).randint(0, n, size=(n_boot, n), dtype=np.int64)
    y = np.sort(np.median(x[idx], axis=-1))
    alpha = (1 - conf) / 2
    p = np.array([alpha, 1 - alpha])
    jg = p * n_boot + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = np.where(j < 0, 0.0, jg % 1)
    j = np.clip(j, 0.0, n_boot - 1).astype(np.int64)
    jp1 = np.clip(jp1, 0.0, n_boot - 1).astype(np.int64)
    lo, hi = (1 - g) * y[j] + g * y[jp1]
    return float(lo), float(hi)


_SUMMARY_COLUMNS = ("n", "mean", "mean_lo", "mean_hi", "median", "median_lo", "median_hi", "q1", "q3", "min", "max")


def count_column(columns: Sequence[str]) -> str:
    """The name of :func:`summarize`'s column of run counts for a table of
    these `columns` (its factors and metric): ``n``, or ``runs`` when a
    factor is itself called n (iw10's number of flows), grouped by or not,
    so that the store's tables always say runs for the count."""
    return "runs" if "n" in columns else "n"


def summarize(df: pd.DataFrame, by: Sequence[str], metric: str, conf: float = 0.95, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per configuration (the `by` columns): n, mean with its t-interval,
    median with a bootstrap interval, quartiles, min and max. A
    configuration of one run has no interval (NaN), not one of zero width.
    Where `df` has a factor called n, the count is the column ``runs``
    (:func:`count_column`)."""
    by = _checked_arguments(df, by, "by", metric, conf)
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise UsageError([FieldProblem("n_boot", "expected a number of bootstrap resamples, at least 1", n_boot, True)])
    count = count_column(list(df.columns))
    stats = (count, *_SUMMARY_COLUMNS[1:])
    # A factor named as a statistic's column was overwritten by it (iw10's
    # factor n by the counts, 400 in every row).
    if clash := [b for b in by if b in stats]:
        raise UsageError([FieldProblem("by", f"{b!r} is also the name of a column of the summary ({', '.join(stats)}); rename that column of df first", by, True) for b in clash])
    rows = []
    # A categorical factor (a store's non-numeric levels) groups in its
    # categories' order, and only the combinations the runs have.
    groups = df.groupby(list(by), sort=True, dropna=False, observed=True) if by else [((), df)]
    for key, g in groups:
        x = g[metric].dropna().to_numpy(dtype=float)
        n = len(x)
        row: dict[str, Any] = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        mean = float(np.mean(x)) if n else float("nan")
        if n >= 2 and np.std(x, ddof=1) > 0:
            lo, hi = t_interval(conf, n - 1, loc=mean, scale=sem(x))
        elif n >= 2:
            lo = hi = mean  # every run alike
        else:
            lo = hi = float("nan")
        mlo, mhi = _median_ci(x, conf, n_boot, seed) if n else (float("nan"), float("nan"))
        row[count] = n
        row.update(
            mean=mean, mean_lo=float(lo), mean_hi=float(hi),
            median=float(np.median(x)) if n else float("nan"), median_lo=mlo, median_hi=mhi,
            q1=float(np.quantile(x, 0.25)) if n else float("nan"), q3=float(np.quantile(x, 0.75)) if n else float("nan"),
            min=float(np.min(x)) if n else float("nan"), max=float(np.max(x)) if n else float("nan"),
        )  # fmt: skip
        rows.append(row)
    # The columns are there with no rows too (an empty table had none: a
    # caller's out[["iw", "median"]] was a KeyError).
    out = pd.DataFrame(rows, columns=[*by, *stats])
    for b in by:  # a categorical factor stays one, so its rows sort in its order
        if isinstance(df[b].dtype, pd.CategoricalDtype) and b in out:
            out[b] = out[b].astype(df[b].dtype)
    return out


def _checked_arguments(df: pd.DataFrame, columns: str | Sequence[str], arg: str, metric: str, conf: float) -> list[str]:
    """The columns `arg` names (one name alone is a list of one, as in
    pandas' groupby: `by="iw"` grouped by "i" and "w"), each of them and
    `metric` a column of `df`, and `conf` a level between 0 and 1; a
    UsageError naming the argument otherwise (a KeyError, or intervals
    computed at a confidence of 2 without a word)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df is a pandas DataFrame (one row per run, as Store.metric_table gives), not {type(df).__name__}")
    names = [columns] if isinstance(columns, str) else list(columns)
    have = ", ".join(map(str, df.columns))
    bad = [FieldProblem(arg, f"no such column: {c!r}; columns: {have}", names, True) for c in names if c not in df.columns]
    if not isinstance(metric, str) or metric not in df.columns:
        bad.append(FieldProblem("metric", f"no such column; columns: {have}", metric, True))
    if isinstance(conf, bool) or not isinstance(conf, numbers.Real) or not 0 < conf < 1:  # NaN fails this too
        bad.append(FieldProblem("conf", "expected a confidence level between 0 and 1, such as 0.95", conf, True))
    if bad:
        raise UsageError(bad)
    return names


def censored_percentiles(x: Sequence[float], q: Sequence[float]) -> list[float]:
    """Percentiles `q` (0-100) of a sample whose NaN values are right-censored:
    known only to lie above every observed value, as the time of a transfer
    still going when its run ended. They rank above the observed values
    rather than leaving the sample (which would make the rest look faster);
    a percentile is `inf` where its interpolation gives any weight to one of
    them. Otherwise it is `numpy.percentile`'s (linear interpolation between
    order statistics) of the whole sample, to the last bit."""
    v = np.asarray(x, dtype=float)
    censored = np.isnan(v)
    n, k = v.size, int(censored.sum())
    if n == 0:
        return [float("nan")] * len(q)
    if k == n:
        return [float("inf")] * len(q)
    # A finite stand-in above every observed value keeps numpy's arithmetic
    # between two observed values as it is; positions that reach it are inf.
    top = float(np.max(v[~censored]))
    filled = np.where(censored, top + abs(top) + 1.0, v)
    values = np.percentile(filled, q)
    first_censored = n - k  # its index among the sorted values
    out = []
    for p, val in zip(q, values):
        h = p / 100.0 * (n - 1)  # as numpy computes the position
        reach = int(np.ceil(h)) if h > np.floor(h) else int(h)
        out.append(float("inf") if reach >= first_censored else float(val))
    return out


def pooled_factors(df: pd.DataFrame, used: Sequence[str], metric: str) -> str:
    """The factors of a store's metric table (`Store.metric_table`) that a
    summary by `used` pools over, each with its levels in the tables' order,
    as text (`tcp.cc (sack, reno); webs (8, 16, ... (4 levels))`); empty
    when none is."""
    pooled = [c for c in df.columns if c not in ("run_id", "rep", "seed", metric, *used) and df[c].nunique(dropna=False) > 1]

    def levels(c: str) -> str:
        vals = [str(v) for v in level_order(df[c])] + (["none"] if df[c].isna().any() else [])
        return ", ".join(vals[:6]) + (f", ... ({len(vals)} levels)" if len(vals) > 6 else "")

    return "; ".join(f"{c} ({levels(c)})" for c in pooled)


def level_order(col: pd.Series) -> list[Any]:
    """A factor's levels in the order to show them: a categorical's
    categories (those present), numbers by value, anything else by its text."""
    present = set(col.dropna())
    if isinstance(col.dtype, pd.CategoricalDtype):
        return [c for c in col.cat.categories if c in present]
    if all_numbers(present):
        return sorted(present)
    return sorted(present, key=str)


def max_min_fair(capacity: Mapping[Any, float], paths: Sequence[Iterable[Any]], demand: Sequence[float] | None = None) -> np.ndarray:
    """Max-min fair rates of flows over links, by water-filling: raise every
    unfrozen flow's rate equally until a link fills (or a flow meets its
    demand), freeze the flows through it, repeat."""
    if not isinstance(capacity, Mapping):  # a list was an AttributeError ('list' object has no attribute 'items')
        raise UsageError([FieldProblem("capacity", "expected each link's capacity by its name, as a dict such as {'A': 1.0}", capacity, True)])
    bad: list[FieldProblem] = []
    bad += [FieldProblem(f"capacity[{k!r}]", "expected a rate, at least 0", c, True) for k, c in capacity.items()
            if isinstance(c, bool) or not isinstance(c, numbers.Real) or not 0 <= c < np.inf]  # fmt: skip
    # A path is the links a flow crosses: a string would be taken letter by letter.
    bad += [FieldProblem(f"paths[{i}]", "expected a list of the links the flow crosses", p, True) for i, p in enumerate(paths) if isinstance(p, str)]
    if bad:
        raise UsageError(bad)
    paths = [list(p) for p in paths]
    n = len(paths)
    bad += [FieldProblem(f"paths[{i}]", f"crosses {link!r}, which has no capacity; links: {', '.join(map(repr, capacity))}", p, True)
            for i, p in enumerate(paths) for link in p if link not in capacity]  # fmt: skip
    if demand is not None and len(demand) != n:
        bad.append(FieldProblem("demand", f"gives {len(demand)} demands for {n} flows; expected one per path"))
    elif demand is not None:
        bad += [FieldProblem(f"demand[{i}]", "expected a rate, at least 0 (inf: no limit)", d, True) for i, d in enumerate(demand)
                if isinstance(d, bool) or not isinstance(d, numbers.Real) or not d >= 0]  # fmt: skip
    if bad:
        raise UsageError(bad)
    rate = np.zeros(n)
    frozen = np.zeros(n, dtype=bool)
    want = np.full(n, np.inf) if demand is None else np.asarray(demand, dtype=float)
    left = dict(capacity)
    while not frozen.all():
        active = ~frozen
        # The largest equal increment before a link fills or a flow is satisfied.
        inc = np.inf
        for link, cap in left.items():
            users = sum(1 for i in range(n) if active[i] and link in paths[i])
            if users:
                inc = min(inc, cap / users)
        inc = min(inc, float(np.min(want[active] - rate[active])))
        if not np.isfinite(inc):
            raise UsageError([FieldProblem("paths", "a flow crosses no link and has no demand: its fair rate is unbounded")])
        for i in np.flatnonzero(active):
            rate[i] += inc
            for link in paths[i]:
                left[link] -= inc
        for i in np.flatnonzero(active):
            if rate[i] >= want[i] - 1e-12 or any(left[link] <= 1e-12 * max(1.0, capacity[link]) for link in paths[i]):
                frozen[i] = True
    return rate


def fairness_vs_max_min(throughput: Sequence[float], fair: Sequence[float]) -> float:
    """Jain's index of throughputs normalized by their max-min fair shares."""
    x, e = np.asarray(throughput, dtype=float), np.asarray(fair, dtype=float)
    if x.shape != e.shape:  # [1, 2] against [1] was broadcast, and gave 0.9
        raise UsageError([FieldProblem("fair", f"gives {e.size} fair shares for {x.size} throughputs; expected one each")])
    if not (e > 0).all():
        raise UsageError([FieldProblem("fair", "expected fair shares above 0 (a throughput is divided by its share)", list(fair), True)])
    return jain_index(x / e)


@dataclass
class Anova:
    """The allocation of variation of a full-factorial experiment."""

    table: pd.DataFrame
    """term, ss, df, fraction (of the total sum of squares)."""
    effects: pd.DataFrame
    """term, level, effect, lo, hi (confidence interval)."""
    grand_mean: float


def allocation_of_variation(df: pd.DataFrame, factors: Sequence[str], metric: str, conf: float = 0.90) -> Anova:
    """Jain ch. 20-22: main effects, two-factor interactions, higher-order
    interactions together, and error (from replications), as sums of squares
    and fractions of the total. The design must be a full factorial with the
    same number of replications in every cell."""
    import statsmodels.formula.api as smf

    factors = _checked_arguments(df, factors, "factors", metric, conf)
    # The design's levels are those of every run, with a value or not: a
    # level whose runs have none is a missing cell, not a missing level.
    order = {f: [str(v) for v in level_order(df[f].dropna())] for f in factors}
    single = [f"{f} ({order[f][0]})" for f in factors if len(order[f]) == 1]
    if single:
        raise ValueError(f"an allocation of variation needs at least two levels of each factor; one only: {', '.join(single)}")
    d = df[list(factors) + [metric]].dropna().copy()
    for f in factors:
        d[f] = d[f].astype(object).astype(str)
    cells = d.groupby(list(factors)).size()
    full = int(np.prod([len(order[f]) for f in factors]))
    if len(cells) != full or cells.nunique() != 1:
        name = lambda key: ", ".join(f"{f}={v}" for f, v in zip(factors, key if isinstance(key, tuple) else (key,)))  # noqa: E731
        if len(cells) != full:
            grid = itertools.product(*(order[f] for f in factors))
            missing = [name(k) for k in grid if (k if len(factors) > 1 else k[0]) not in cells.index]
            what = f"{len(cells)} of {full} cells have runs; none in " + "; ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        else:
            usual = int(cells.mode().iloc[0])
            odd = [f"{n} in {name(k)}" for k, n in cells.items() if n != usual]
            what = (f"runs per cell differ: {usual} in {int((cells == usual).sum())} of {full} cells, but " + "; ".join(odd[:4])
                    + (f" and {len(odd) - 4} more" if len(odd) > 4 else ""))  # fmt: skip
        dropped = len(df) - len(d)
        why = f" ({dropped} runs without a value of {metric} are left out)" if dropped else ""
        raise ValueError(f"an allocation of variation over {', '.join(factors)} needs a balanced full factorial: {what}{why}")
    y = d[metric].to_numpy(dtype=float)
    grand = y.mean()
    sst = float(np.sum((y - grand) ** 2))
    rows, effects = [], []
    cell_mean = d.groupby(list(factors))[metric].transform("mean").to_numpy()
    sse = float(np.sum((y - cell_mean) ** 2))
    main: dict[str, pd.Series] = {}
    for f in factors:
        m = d.groupby(f)[metric].mean() - grand
        main[f] = m
        ss = float(np.sum(m.loc[d[f]].to_numpy() ** 2))
        rows.append((f, ss, d[f].nunique() - 1))
    for a, b in itertools.combinations(factors, 2):
        mab = d.groupby([a, b])[metric].mean() - grand
        inter = mab - main[a].reindex(mab.index.get_level_values(0)).to_numpy() - main[b].reindex(mab.index.get_level_values(1)).to_numpy()
        idx = pd.MultiIndex.from_arrays([d[a], d[b]])
        ss = float(np.sum(inter.loc[idx].to_numpy() ** 2))
        rows.append((f"{a}:{b}", ss, (d[a].nunique() - 1) * (d[b].nunique() - 1)))
    explained = sum(r[1] for r in rows)
    dof_cells = full - 1
    if len(factors) > 2:
        rows.append(("higher-order interactions", sst - explained - sse, dof_cells - sum(r[2] for r in rows)))
    rows.append(("error", sse, len(y) - full))
    table = pd.DataFrame(rows, columns=["term", "ss", "df"])
    table["fraction"] = table.ss / sst if sst > 0 else np.nan
    # Effects and their intervals: OLS with sum-to-zero contrasts.
    # The full model (every interaction), so the error is the replication
    # error. Columns are renamed so that no factor name clashes with the
    # formula language.
    safe = pd.DataFrame({f"f{i}": pd.Categorical(d[f].to_numpy(), categories=order[f]) for i, f in enumerate(factors)})
    safe["y"] = y
    terms = " * ".join(f"C(f{i}, Sum)" for i in range(len(factors)))
    # With one run per cell the error has no degrees of freedom, so the
    # intervals are NaN (undefined), not statsmodels' RuntimeWarnings on stderr.
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        if len(y) == full:
            warnings.simplefilter("ignore", RuntimeWarning)
        fit = smf.ols(f"y ~ {terms}", data=safe).fit()
        ci = fit.conf_int(alpha=1 - conf)
        index = list(fit.params.index)
        for i, f in enumerate(factors):
            levels = order[f]
            names = [f"C(f{i}, Sum)[S.{lv}]" for lv in levels[:-1]]
            for lv, name in zip(levels[:-1], names):
                effects.append((f, lv, float(fit.params[name]), float(ci.loc[name, 0]), float(ci.loc[name, 1])))
            # The last level's effect is minus the sum of the others.
            r = np.zeros(len(index))
            for nm in names:
                r[index.index(nm)] = -1.0
            t = fit.t_test(r)
            lo, hi = t.conf_int(alpha=1 - conf)[0]
            effects.append((f, levels[-1], float(np.asarray(t.effect).ravel()[0]), float(lo), float(hi)))
    eff = pd.DataFrame(effects, columns=["term", "level", "effect", "lo", "hi"])
    return Anova(table=table, effects=eff, grand_mean=float(grand))
