r"""Paired significance tests between rankers evaluated on the same queries (or rows).

Modelled on ranx's ``compare``: every pair of runs, every metric, a paired test on the
per-query values, a correction for testing several pairs, and a table a reader can act on.

* :func:`paired_test` — Student's paired t-test (``scipy.stats.ttest_rel``) or the paired
  randomisation test (Fisher's sign-flip test, ``scipy.stats.permutation_test`` with
  ``permutation_type="samples"``: under H0 the two runs' values of a query are exchangeable,
  so the sign of each difference is flipped at random), two-sided, on the mean difference;
* :func:`holm` — Holm's step-down adjustment (family-wise error control);
* :func:`compare_runs` — all pairs × metrics with corrected p-values and the winner;
* :func:`verdict` — the plain sentence of one comparison.

References
----------
Smucker, M. D., Allan, J. & Carterette, B. (2007). A comparison of statistical significance
tests for information retrieval evaluation. *CIKM*.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scand. J. Stat.*
Bassani, E. (2022). ranx: a blazing-fast Python library for ranking evaluation and
comparison. *ECIR* (the ``compare`` report this module mirrors).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from core._validation import as_generator, check_choice, check_positive_int

__all__ = ["CORRECTIONS", "PAIRED_TESTS", "compare_runs", "holm", "paired_test", "verdict"]

PAIRED_TESTS = ("t-test", "permutation")
CORRECTIONS = ("holm", "bonferroni", "none")
_CORRECTION_NAME = {"holm": "Holm's correction", "bonferroni": "Bonferroni's correction"}


def holm(p_values: Any) -> np.ndarray:
    """Holm's step-down adjustment of ``m`` p-values (family-wise error control).

    The i-th smallest p-value becomes ``max_{j ≤ i} min(1, (m − j + 1) p_(j))``.  A NaN (a
    test that could not be run) stays NaN and is not counted in ``m``, as R's ``p.adjust``
    does.  ``p_values`` must be one-dimensional, in [0, 1] or NaN (``ValueError`` otherwise).

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    try:
        p = np.asarray(p_values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("p_values must be numbers (p-values in [0, 1], or NaN); got "
                         f"{type(p_values).__name__}.") from None
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional; got shape {p.shape}.")
    tested = ~np.isnan(p)
    if ((p[tested] < 0) | (p[tested] > 1)).any():
        raise ValueError("p_values must lie in [0, 1] (NaN for a test not run); got values in "
                         f"[{p[tested].min():g}, {p[tested].max():g}].")
    out = np.full(p.shape, np.nan)
    q = p[tested]
    m = q.size
    order = np.argsort(q, kind="stable")
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
    out[tested] = adjusted
    return out


def _adjust(p: np.ndarray, correction: str) -> np.ndarray:
    if correction == "holm":
        return holm(p)
    if correction == "bonferroni":
        return np.minimum(1.0, p * p.shape[0])
    return p.copy()


def paired_test(a: Any, b: Any, *, test: str = "t-test", n_permutations: int = 10_000,
                random_state: Any = 0) -> tuple[float, float]:
    r"""Two-sided paired test of :math:`H_0: E[a - b] = 0`; returns ``(statistic, p)``.

    ``"t-test"``: :math:`t = \bar d / (s_d/\sqrt n)` with :math:`d = a - b`
    (``scipy.stats.ttest_rel``).  ``"permutation"``: the statistic is :math:`\bar d` and p the
    share of sign-flip assignments (all :math:`2^n` when :math:`2^n \le` ``n_permutations``,
    else ``n_permutations`` random ones) whose :math:`|\bar d|` is at least the observed one.
    Identical vectors (every :math:`d = 0`) give ``(0.0, 1.0)``; a constant shift
    :math:`d_i = c \ne 0` gives :math:`t = \pm\infty`, p = 0 for the t-test, but the exact
    :math:`p = 2/2^n` for the permutation test when all :math:`2^n` flips are enumerated
    (only the all-plus and all-minus flips reach :math:`|c|`; with sampled flips about
    ``2/(n_permutations + 1)``).

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Paired values (finite), n ≥ 2.
    test : {"t-test", "permutation"}, default="t-test"
    n_permutations : int, default=10000
    random_state : int, Generator or None, default=0
        Seeds the sampled sign flips (the same p-value twice, as the bootstraps' default
        0 gives); ``None`` draws fresh ones.
    """
    check_choice(test, "test", PAIRED_TESTS)
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be 1-d and of the same length; got shapes {x.shape} "
                         f"and {y.shape}.")
    if x.shape[0] < 2:
        raise ValueError(f"a and b must hold at least two finite pairs; got {x.shape[0]}.")
    if bad := int(np.count_nonzero(~(np.isfinite(x) & np.isfinite(y)))):
        raise ValueError(f"a and b must hold finite values; {bad} of the {x.shape[0]} pairs "
                         "hold NaN or ±inf (leave those pairs out first).")
    d = x - y
    if not d.any():  # identical runs
        return 0.0, 1.0
    from scipy import stats

    if test == "t-test":
        if np.all(d == d[0]):  # a constant shift: no spread, t = ±inf (as scipy's ttest_rel)
            return float(np.sign(d[0]) * np.inf), 0.0
        res = stats.ttest_rel(x, y)
        return float(res.statistic), float(res.pvalue)
    n_perm = check_positive_int(n_permutations, "n_permutations")
    res = stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis),
                                 vectorized=True, permutation_type="samples", n_resamples=n_perm,
                                 alternative="two-sided", random_state=as_generator(random_state))
    return float(res.statistic), float(min(1.0, res.pvalue))


def compare_runs(per_query: Mapping[str, pd.DataFrame], *, metrics: Any,
                 test: str = "t-test", correction: str = "holm", alpha: float = 0.05,
                 n_permutations: int = 10_000, random_state: Any = 0) -> pd.DataFrame:
    """Paired tests of every pair of runs on every metric (ranx's ``compare``).

    Parameters
    ----------
    per_query : mapping of run name → DataFrame
        Per-query values (e.g. :func:`core.evaluation.per_query_metrics`), indexed by query,
        one column per metric; the runs are aligned on the index.  A query where a metric is
        undefined (``nan``) in either run of a pair is left out of that pair's test, and
        ``n_queries`` says how many remain.
    metrics : sequence of str
        Columns to test.
    test : {"t-test", "permutation"}, default="t-test"
    correction : {"holm", "bonferroni", "none"}, default="holm"
        Applied per metric over the pairs (with two runs there is one pair: no change).
    alpha : float, default=0.05
    n_permutations, random_state
        Of the permutation test (one seeded stream for the whole table; default seed 0,
        so the same table twice).

    Returns
    -------
    pandas.DataFrame
        One row per (metric, pair): ``metric, run_a, run_b, mean_a, mean_b, difference``
        (mean of a − b over the pair's queries), ``n_queries, statistic, p_value,
        p_adjusted, significant, winner`` (the run with the higher mean when significant,
        else ``""``), plus ``correction``, ``n_pairs`` and ``alpha`` (the level tested).
    """
    check_choice(test, "test", PAIRED_TESTS)
    check_choice(correction, "correction", CORRECTIONS)
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.number)) \
            or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}.")
    names = list(per_query)
    if len(names) < 2:
        raise ValueError(f"per_query must hold at least two runs; got {len(names)}.")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    index = per_query[names[0]].index
    for name in names[1:]:
        if not per_query[name].index.isin(index).any():
            raise ValueError(f"run {name!r} shares no query with run {names[0]!r}; compare "
                             "runs on the same queries.")
    for name in names:
        missing = [m for m in metrics if m not in per_query[name].columns]
        if missing:
            raise ValueError(f"run {name!r} has no column {missing[0]!r}; columns are "
                             f"{list(per_query[name].columns)}.")
    rng = as_generator(random_state)
    rows = []
    for metric in metrics:
        part = []
        for a, b in itertools.combinations(names, 2):
            va, vb = per_query[a][metric].align(per_query[b][metric], join="inner")
            ok = va.notna().to_numpy() & vb.notna().to_numpy()
            x, y = va.to_numpy(float)[ok], vb.to_numpy(float)[ok]
            stat, p = (paired_test(x, y, test=test, n_permutations=n_permutations,
                                   random_state=rng) if ok.sum() >= 2 else (np.nan, np.nan))
            part.append({"metric": metric, "run_a": a, "run_b": b,
                         "mean_a": float(x.mean()) if x.size else np.nan,
                         "mean_b": float(y.mean()) if y.size else np.nan,
                         "difference": float((x - y).mean()) if x.size else np.nan,
                         "n_queries": int(ok.sum()), "statistic": stat, "p_value": p})
        p = np.array([r["p_value"] for r in part])
        adjusted = np.full(p.shape, np.nan)
        finite = np.isfinite(p)
        adjusted[finite] = _adjust(p[finite], correction)
        for r, q in zip(part, adjusted):
            r["p_adjusted"] = q
            r["significant"] = bool(np.isfinite(q) and q < alpha)
            r["winner"] = ((r["run_a"] if r["difference"] > 0 else r["run_b"])
                           if r["significant"] else "")
            r["correction"] = correction
            r["n_pairs"] = int(finite.sum())
            r["alpha"] = float(alpha)
        rows.extend(part)
    return pd.DataFrame(rows, columns=["metric", "run_a", "run_b", "mean_a", "mean_b",
                                       "difference", "n_queries", "statistic", "p_value",
                                       "p_adjusted", "significant", "winner", "correction",
                                       "n_pairs", "alpha"])


def _fmt_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict(row: Mapping, *, metric_label: str | None = None,
            alpha: float | None = None) -> str:
    """One comparison of :func:`compare_runs` in plain words.

    ``alpha`` is the level the sentence names for "not significant"; default the row's own
    ``alpha`` (the level :func:`compare_runs` tested), else 0.05.

    >>> verdict({"metric": "mauc", "run_a": "λ-MAUC", "run_b": "Linear", "mean_a": 0.734,
    ...          "mean_b": 0.701, "difference": 0.033, "n_queries": 156, "p_value": 0.001,
    ...          "p_adjusted": 0.003, "significant": True, "winner": "λ-MAUC",
    ...          "correction": "holm", "n_pairs": 3}, metric_label="MAUC")
    "λ-MAUC beats Linear on MAUC (0.734 vs 0.701, p = 0.003 after Holm's correction over 3
    pairs, 156 queries)."
    """
    label = metric_label or str(row["metric"])
    if alpha is None:
        alpha = row.get("alpha", 0.05)
    p = row["p_adjusted"]
    if not np.isfinite(p):
        return (f"{row['run_a']} and {row['run_b']} cannot be compared on {label}: fewer than "
                "two queries where both are defined.")
    how = _fmt_p(p)
    if row.get("correction", "none") != "none" and row.get("n_pairs", 1) > 1:
        how += f" after {_CORRECTION_NAME[row['correction']]} over {row['n_pairs']} pairs"
    how += f", {row['n_queries']:,} queries"
    if row["significant"]:
        winner = row["winner"]
        loser = row["run_b"] if winner == row["run_a"] else row["run_a"]
        w, lo = ((row["mean_a"], row["mean_b"]) if winner == row["run_a"]
                 else (row["mean_b"], row["mean_a"]))
        return f"{winner} beats {loser} on {label} ({w:.3f} vs {lo:.3f}, {how})."
    return (f"No significant difference between {row['run_a']} and {row['run_b']} on {label} "
            f"({row['mean_a']:.3f} vs {row['mean_b']:.3f}, {how}; not below {alpha:g}).")
