"""Statistics: analysis of variation against statsmodels, interval coverage,
Jain's index and max-min fair shares on hand-worked examples."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from tcplab.analysis import _median_ci, allocation_of_variation, censored_percentiles, fairness_vs_max_min, max_min_fair, sem, summarize, t_interval, t_ppf
from tcplab.store import jain_index


def synthetic(reps: int = 4, noise: float = 0.5, seed: int = 1) -> tuple[pd.DataFrame, dict]:
    """y = 10 + a_i + b_j + z_k + (ab)_ij + noise, a full 3x2x2 factorial (Z has no effect)."""
    rng = np.random.default_rng(seed)
    a = {"a1": -2.0, "a2": 0.5, "a3": 1.5}
    b = {"b1": 3.0, "b2": -3.0}
    c = {"c1": 0.0, "c2": 0.0}
    ab = {("a1", "b1"): 1.0, ("a1", "b2"): -1.0, ("a2", "b1"): -0.5, ("a2", "b2"): 0.5, ("a3", "b1"): -0.5, ("a3", "b2"): 0.5}
    rows = []
    for (i, j, k) in itertools.product(a, b, c):
        for _ in range(reps):
            rows.append({"A": i, "B": j, "Z": k, "y": 10 + a[i] + b[j] + c[k] + ab[(i, j)] + rng.normal(0, noise)})
    return pd.DataFrame(rows), {"A": a, "B": b, "Z": c}


def test_allocation_matches_statsmodels_sums_of_squares() -> None:
    df, _ = synthetic()
    res = allocation_of_variation(df, ["A", "B", "Z"], "y")
    fit = smf.ols("y ~ C(A, Sum) * C(B, Sum) * C(Z, Sum)", data=df).fit()
    ref = sm.stats.anova_lm(fit, typ=2)
    ss = dict(zip(res.table.term, res.table.ss))
    pairs = {"A": "C(A, Sum)", "B": "C(B, Sum)", "Z": "C(Z, Sum)", "A:B": "C(A, Sum):C(B, Sum)",
             "A:Z": "C(A, Sum):C(Z, Sum)", "B:Z": "C(B, Sum):C(Z, Sum)", "error": "Residual"}  # fmt: skip
    for ours, theirs in pairs.items():
        assert ss[ours] == pytest.approx(ref.loc[theirs, "sum_sq"], rel=1e-9, abs=1e-9)
    assert ss["higher-order interactions"] == pytest.approx(ref.loc["C(A, Sum):C(B, Sum):C(Z, Sum)", "sum_sq"], rel=1e-9, abs=1e-9)
    total = float(((df.y - df.y.mean()) ** 2).sum())
    assert res.table.ss.sum() == pytest.approx(total, rel=1e-12)
    assert res.table.fraction.sum() == pytest.approx(1.0, rel=1e-12)


def test_known_effects_are_recovered() -> None:
    df, truth = synthetic(reps=10, noise=0.3)
    res = allocation_of_variation(df, ["A", "B", "Z"], "y", conf=0.99)
    assert res.grand_mean == pytest.approx(10.0, abs=0.1)
    for _, e in res.effects.iterrows():
        true = truth[e.term][e.level]
        assert e.lo <= true <= e.hi, (e.term, e.level, e.effect, true)
        assert e.effect == pytest.approx(true, abs=0.15)
    frac = dict(zip(res.table.term, res.table.fraction))
    # B (+-3) dominates, then A, then the A:B interaction; Z explains ~nothing.
    assert frac["B"] > frac["A"] > frac["A:B"] > frac["Z"]
    assert frac["Z"] < 0.01


def test_unbalanced_design_is_refused_naming_the_cells() -> None:
    df, _ = synthetic()  # 12 cells of 4 replications; the first run of (a1, b1, c1) is dropped below
    with pytest.raises(ValueError) as e:
        allocation_of_variation(df.iloc[1:], ["A", "B", "Z"], "y")
    assert str(e.value) == ("an allocation of variation over A, B, Z needs a balanced full factorial: "
                            "runs per cell differ: 4 in 11 of 12 cells, but 3 in A=a1, B=b1, Z=c1")  # fmt: skip
    with pytest.raises(ValueError) as e:  # a cell without runs, and runs without a value
        d = df[~((df.A == "a2") & (df.B == "b2"))].copy()
        d.loc[d.index[:3], "y"] = np.nan
        allocation_of_variation(d, ["A", "B"], "y")
    assert str(e.value) == ("an allocation of variation over A, B needs a balanced full factorial: 5 of 6 cells have runs; "
                            "none in A=a2, B=b2 (3 runs without a value of y are left out)")


def test_a_factor_of_one_level_is_refused() -> None:
    # It gave NaN fractions and a statsmodels RuntimeWarning on stderr.
    df, _ = synthetic()
    with pytest.raises(ValueError) as e:
        allocation_of_variation(df[df.B == "b1"], ["A", "B"], "y")
    assert str(e.value) == "an allocation of variation needs at least two levels of each factor; one only: B (b1)"
    # A level whose runs have no value of the metric is a missing cell, not a
    # missing level (it was "one only: B (b1)" when b2's runs had none).
    d = df.copy()
    d.loc[d.B == "b2", "y"] = np.nan
    with pytest.raises(ValueError) as e:
        allocation_of_variation(d, ["A", "B"], "y")
    assert str(e.value) == ("an allocation of variation over A, B needs a balanced full factorial: 3 of 6 cells have runs; "
                            "none in A=a1, B=b2; A=a2, B=b2; A=a3, B=b2 (24 runs without a value of y are left out)")  # fmt: skip


def test_mean_interval_coverage_is_nominal() -> None:
    rng = np.random.default_rng(7)
    trials, n = 2000, 8
    df = pd.DataFrame({"cfg": np.repeat(np.arange(trials), n), "x": rng.exponential(2.0, trials * n) ** 0.5})
    true_mean = np.sqrt(2.0) * np.sqrt(np.pi) / 2  # E[sqrt(X)], X ~ Exp(mean 2)
    s = summarize(df, ["cfg"], "x", conf=0.95, n_boot=200)
    cover = ((s.mean_lo <= true_mean) & (true_mean <= s.mean_hi)).mean()
    # Binomial standard error at 0.95 over 2000 trials: 0.0049; allow 4 of them.
    assert abs(cover - 0.95) < 0.02, cover


def test_median_bootstrap_coverage_is_close_to_nominal() -> None:
    rng = np.random.default_rng(11)
    trials, n = 400, 41
    df = pd.DataFrame({"cfg": np.repeat(np.arange(trials), n), "x": rng.normal(5.0, 1.0, trials * n)})
    s = summarize(df, ["cfg"], "x", conf=0.90, n_boot=400)
    cover = ((s.median_lo <= 5.0) & (5.0 <= s.median_hi)).mean()
    # Percentile-bootstrap intervals of a median run a little off nominal; SE 0.015.
    assert 0.84 <= cover <= 0.96, cover


def test_summary_quartiles_on_a_hand_example() -> None:
    df = pd.DataFrame({"k": ["a"] * 5, "x": [1.0, 2.0, 3.0, 4.0, 100.0]})
    s = summarize(df, ["k"], "x").iloc[0]
    assert (s["n"], s["median"], s["q1"], s["q3"], s["min"], s["max"]) == (5, 3.0, 2.0, 4.0, 1.0, 100.0)
    assert s["mean"] == 22.0


def test_censored_values_rank_above_every_observed_one() -> None:
    nan, inf = float("nan"), float("inf")
    # Five runs, two unfinished: sorted 1, 2, 3, c, c. Positions 1, 2 and 3 (of 0-4).
    assert censored_percentiles([3.0, nan, 1.0, nan, 2.0], (25, 50, 75)) == [2.0, 3.0, inf]
    # Four runs, one unfinished: positions 0.75, 1.5, 2.25 between 1, 2, 4, c.
    assert censored_percentiles([4.0, 1.0, nan, 2.0], (25, 50, 75)) == [1.75, 3.0, inf]
    # Left out, as before, the unfinished run would have made the median 2.
    assert np.percentile([4.0, 1.0, 2.0], 50) == 2.0
    assert censored_percentiles([nan, nan], (50,)) == [inf]
    assert all(v != v for v in censored_percentiles([], (25, 75)))


def test_without_censoring_the_percentiles_are_numpys_to_the_last_bit() -> None:
    x = np.random.default_rng(3).lognormal(0.0, 2.0, 101)
    q = (25, 50, 75, 12.5, 99.9)
    assert censored_percentiles(x, q) == [float(v) for v in np.percentile(x, q)]
    # A censored value changes nothing below it: the 25th percentile of 100
    # values and one unfinished is numpy's of the same 101 positions.
    y = np.append(x[:100], np.nan)
    assert censored_percentiles(y, (25,)) == [float(np.percentile(np.append(x[:100], x.max() * 10), 25))]


def test_one_run_has_no_interval_and_identical_runs_a_point() -> None:
    # One run gave an interval of zero width, as if it were certain.
    df = pd.DataFrame({"cfg": ["a", "b", "b", "c", "c"], "y": [1.0, 2.0, 2.0, 3.0, 5.0]})
    s = summarize(df, ["cfg"], "y").set_index("cfg")
    assert s.loc["a", ["mean", "median", "q1", "max"]].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert s.loc["a", ["mean_lo", "mean_hi", "median_lo", "median_hi"]].isna().all()
    assert s.loc["b", ["mean_lo", "mean_hi", "median_lo", "median_hi"]].tolist() == [2.0, 2.0, 2.0, 2.0]
    assert s.loc["c", "mean_lo"] < 4.0 < s.loc["c", "mean_hi"]


def test_a_summary_of_no_runs_has_its_columns() -> None:
    # It was a DataFrame without columns.
    out = summarize(pd.DataFrame({"iw": pd.Series([], dtype=int), "fct_s": pd.Series([], dtype=float)}), ["iw"], "fct_s")
    assert list(out.columns) == ["iw", "n", "mean", "mean_lo", "mean_hi", "median", "median_lo", "median_hi", "q1", "q3", "min", "max"]
    assert len(out) == 0
    one = summarize(pd.DataFrame({"iw": [1, 1], "fct_s": [1.0, 3.0]}), ["iw"], "fct_s")
    assert list(one.columns) == list(out.columns) and one.loc[0, "mean"] == 2.0


def test_a_factor_called_n_keeps_its_levels_and_the_count_is_runs() -> None:
    """iw10's factor n (flows per burst) was overwritten by the run counts:
    `tcplab analyze iw10.duckdb --by profile,n,iw` showed n = 400 in every
    row. Grouped by n, the count is the column runs; a factor named as
    another statistic is refused."""
    from tcplab import UsageError
    from tcplab.analysis import count_column

    df = pd.DataFrame({"n": [1, 1, 1, 18, 18], "iw": [3, 3, 10, 3, 3], "fct_s": [1.0, 2.0, 4.0, 8.0, 9.0]})
    out = summarize(df, ["n", "iw"], "fct_s")
    assert list(out.columns[:4]) == ["n", "iw", "runs", "mean"] and "n" not in list(out.columns[3:])
    assert out[["n", "iw", "runs", "mean"]].values.tolist() == [[1, 3, 2, 1.5], [1, 10, 1, 4.0], [18, 3, 2, 8.5]]
    assert count_column(["n", "iw"]) == "runs" and count_column(["iw"]) == "n"
    # Not grouped by n, the count is still runs: `--by workload,profile` on
    # iw10's store printed a column n of 1600, which read as flows per burst.
    pooled = summarize(df, ["iw"], "fct_s")
    assert list(pooled.columns[:3]) == ["iw", "runs", "mean"] and pooled.runs.tolist() == [4, 1]
    assert list(summarize(df.drop(columns="n"), ["iw"], "fct_s").columns[:2]) == ["iw", "n"]
    with pytest.raises(UsageError) as e:
        summarize(df.rename(columns={"iw": "mean"}), ["mean"], "fct_s")
    assert str(e.value) == ("invalid argument: by = ['mean']: 'mean' is also the name of a column of the summary (runs, mean, mean_lo, mean_hi, "
                            "median, median_lo, median_hi, q1, q3, min, max); rename that column of df first")


def test_jain_index_hand_examples() -> None:
    assert jain_index([1, 1, 1, 1]) == 1.0
    assert jain_index([1, 0, 0, 0]) == 0.25
    assert jain_index([1, 2, 3]) == pytest.approx(36 / 42)
    assert jain_index([5]) == 1.0


def test_max_min_fair_shares_hand_example() -> None:
    # Link A (capacity 1) carries f0 and f1; link B (capacity 2) carries f1, f2 and f3.
    # Water-filling: all rise to 1/2, A fills (f0 = f1 = 1/2); f2 and f3 share the 1.5 left on B.
    rates = max_min_fair({"A": 1.0, "B": 2.0}, [["A"], ["A", "B"], ["B"], ["B"]])
    assert rates == pytest.approx([0.5, 0.5, 0.75, 0.75])
    # A demand below the fair share frees capacity for the others.
    rates = max_min_fair({"L": 10.0}, [["L"], ["L"], ["L"]], demand=[1.0, 100.0, 100.0])
    assert rates == pytest.approx([1.0, 4.5, 4.5])
    # Fairness against the max-min shares: perfect when throughputs equal them.
    assert fairness_vs_max_min([0.5, 0.5, 0.75, 0.75], [0.5, 0.5, 0.75, 0.75]) == pytest.approx(1.0)
    assert fairness_vs_max_min([1.0, 0.0, 0.75, 0.75], [0.5, 0.5, 0.75, 0.75]) < 0.8


def test_fairness_functions_refuse_what_they_would_misread() -> None:
    import tcplab

    cases = [
        # [-1, 2] gave 0.1; [1, 2] against one share was broadcast and gave 0.9.
        (lambda: jain_index([-1, 2]), "x = [-1.0, 2.0]: expected finite amounts of 0 or more"),
        # [inf, 1] gave NaN and a RuntimeWarning; a list of capacities was an AttributeError.
        (lambda: jain_index([np.inf, 1]), "x = [inf, 1.0]: expected finite amounts of 0 or more"),
        (lambda: max_min_fair([1.0, 2.0], [[0], [1]]), "capacity = [1.0, 2.0]: expected each link's capacity by its name, as a dict such as {'A': 1.0}"),
        (lambda: fairness_vs_max_min([1, 2], [1]), "fair: gives 1 fair shares for 2 throughputs; expected one each"),
        (lambda: fairness_vs_max_min([1, 2], [0, 1]), "fair = [0, 1]: expected fair shares above 0 (a throughput is divided by its share)"),
        # A path given as a string was read letter by letter; a negative capacity gave negative rates;
        # a short demand list was an IndexError, an unknown link a KeyError.
        (lambda: max_min_fair({"ab": 1.0}, ["ab"]), "paths[0] = 'ab': expected a list of the links the flow crosses"),
        (lambda: max_min_fair({"A": -1.0}, [["A"]]), "capacity['A'] = -1.0: expected a rate, at least 0"),
        (lambda: max_min_fair({"A": 1.0}, [["A"], ["A"]], demand=[1.0]), "demand: gives 1 demands for 2 flows; expected one per path"),
        (lambda: max_min_fair({"A": 1.0}, [["A"], ["A"]], demand=[-1.0, 1.0]), "demand[0] = -1.0: expected a rate, at least 0 (inf: no limit)"),
        (lambda: max_min_fair({"A": 1.0}, [["B"]]), "paths[0] = ['B']: crosses 'B', which has no capacity; links: 'A'"),
        (lambda: max_min_fair({"A": 1.0}, [[], ["A"]]), "paths: a flow crosses no link and has no demand: its fair rate is unbounded"),
    ]
    for call, message in cases:
        with pytest.raises(tcplab.UsageError) as e:
            call()
        assert str(e.value) == f"invalid argument: {message}"
    assert max_min_fair({"A": 1.0}, [["A"], ["A"]], demand=[np.inf, 0.25]) == pytest.approx([0.75, 0.25])


def test_intervals_equal_scipy_stats_to_the_last_bit() -> None:
    """The intervals are computed without importing scipy.stats, as it computes them:
    t-intervals and quantiles, the standard error, and the median's percentile
    bootstrap (same resamples from the same seed, same quantile arithmetic)."""
    from scipy import stats

    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(400):
        n = int(rng.integers(2, 60))
        x = [rng.normal(size=n), rng.integers(0, 4, size=n).astype(float), np.round(rng.lognormal(size=n), 3), rng.pareto(1.2, size=n)][trial % 4]
        if np.all(x == x[0]):
            continue
        conf, n_boot, seed = [0.95, 0.9, 0.99][trial % 3], [2000, 999, 50][trial % 3], int(rng.integers(0, 2**31))
        b = stats.bootstrap((x,), np.median, confidence_level=conf, n_resamples=n_boot, method="percentile", random_state=seed)
        assert _median_ci(x, conf, n_boot, seed) == (float(b.confidence_interval.low), float(b.confidence_interval.high))
        mean = float(np.mean(x))
        assert sem(x) == float(stats.sem(x))
        lo, hi = stats.t.interval(conf, n - 1, loc=mean, scale=stats.sem(x))
        assert t_interval(conf, n - 1, mean, sem(x)) == (float(lo), float(hi))
        assert t_ppf(conf, n - 1) == float(stats.t.ppf(conf, n - 1))
        checked += 1
    assert checked > 350


def test_the_analysis_does_not_import_scipy_stats() -> None:
    """scipy.stats takes about a second to import; summaries and the studies' tables do without it."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, pandas as pd; from tcplab.analysis import summarize; "
            "summarize(pd.DataFrame({'c': [1, 1, 2, 2], 'y': [1.0, 2.0, 3.0, 5.0]}), ['c'], 'y'); "
            "print('scipy.stats' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_summarize_and_allocation_of_variation_name_a_bad_argument() -> None:
    import tcplab

    df, _ = synthetic(reps=2)
    cols = "A, B, Z, y"
    # Each was a KeyError, or (conf) intervals computed without a word.
    cases = [
        (lambda: summarize(df, ["A", "Q"], "y"), f"by = ['A', 'Q']: no such column: 'Q'; columns: {cols}"),
        (lambda: summarize(df, ["A"], "x"), f"metric = 'x': no such column; columns: {cols}"),
        (lambda: summarize(df, ["A"], "y", conf=2), "conf = 2: expected a confidence level between 0 and 1, such as 0.95"),
        (lambda: summarize(df, ["A"], "y", conf=float("nan")), "conf = nan: expected a confidence level between 0 and 1, such as 0.95"),
        (lambda: summarize(df, ["A"], "y", n_boot=0), "n_boot = 0: expected a number of bootstrap resamples, at least 1"),
        (lambda: allocation_of_variation(df, ["A", "C"], "y"), f"factors = ['A', 'C']: no such column: 'C'; columns: {cols}"),
        (lambda: allocation_of_variation(df, ["A", "B"], "y", conf=1), "conf = 1: expected a confidence level between 0 and 1, such as 0.95"),
    ]
    for call, message in cases:
        with pytest.raises(tcplab.UsageError) as e:
            call()
        assert str(e.value) == f"invalid argument: {message}"
    # One column named alone is a list of one, as pandas' groupby takes it: by="A" grouped by "A"'s letter.
    assert summarize(df, "A", "y").equals(summarize(df, ["A"], "y"))
    assert allocation_of_variation(df, "A", "y").table.equals(allocation_of_variation(df, ["A"], "y").table)
    assert summarize(df, ["A"], "y", conf=np.float64(0.9)).equals(summarize(df, ["A"], "y", conf=0.9))
