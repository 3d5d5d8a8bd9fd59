r"""What a ranking is worth when acted on: profit by targeting depth, uplift by score decile
and a check that the ranking did not learn the treatment assignment.

Profit curve
------------
Target the top :math:`k` rows of the joint ranking (all rows, :math:`k = 0..n`).  The
incremental responses are the ``uplift_joint_abs`` curve of :mod:`core.evaluation.curves`,

.. math::  \Delta R(k) = \Bigl(\frac{R^T(k)}{N^T(k)} - \frac{R^C(k)}{N^C(k)}\Bigr)\,k,

the response-rate difference in the top :math:`k` times the number targeted (Radcliffe
2007; Devriendt et al. 2020, Table 2).  With a per-row value :math:`v_i` (e.g. Hillstrom
spend) the same estimator is applied to value instead of responses,

.. math::  \Delta V(k) = \Bigl(\frac{\sum_{i\in T_k} v_i}{N^T(k)} -
           \frac{\sum_{i\in C_k} v_i}{N^C(k)}\Bigr)\,k,

otherwise :math:`\Delta V(k) = \Delta R(k)\cdot` ``value_per_response``.  Cost
:math:`= k\cdot` ``cost_per_treatment`` and profit :math:`= \Delta V(k) - \mathrm{cost}`.
Where the top :math:`k` holds no treated or no control row yet the rate difference is
undefined and taken as 0, as in :mod:`core.evaluation.curves`; so profit(0) = 0 (targeting nobody).
Ties follow the same policy as the curves (``"average"``: the expected counts over the
orders of tied rows, the ratio of expectations inside a run).

Score bins
----------
:func:`uplift_by_decile` and :func:`treatment_balance_along_ranking` bin rows by their rank
in the ranking (1 = highest score).  A run of tied scores shares its mid-rank
:math:`r = (\text{first} + \text{last})/2` (1-based positions in the sorted order) and the
whole run goes to bin :math:`\lceil r \cdot \text{bins} / n \rceil` — rows with equal
scores are never split between bins.  Without ties this is the equal-count split of the
sorted order (bin sizes differ by at most one; exactly :math:`n/\text{bins}` when it
divides).  Bins that receive no row (only possible with ties) are left out.

References
----------
Radcliffe, N. J. (2007). Using control groups to target on predicted lift. *Direct Marketing
Analytics Journal*, 1, 14–21.
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897.
Gutierrez, P. & Gérardy, J.-Y. (2017). Causal inference and uplift modelling: a review of
the literature. *PMLR* 67 (uplift by decile, §4).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from core._validation import (
    UndefinedMetricWarning,
    check_binary,
    check_choice,
    check_level,
    check_positive_int,
    check_scores,
    check_uplift_inputs,
    undefined_reason,
)
from core.evaluation._kernel import (
    TIES,
    cumulative,
    cumulative_at,
    joint_values,
    ranking_order,
    tie_run_ends,
    tie_runs,
)
from core.evaluation.curve_tables import thin
from core.evaluation.curves import UpliftCurves, outcome_code

__all__ = [
    "PROFIT_COLUMNS",
    "best_depth",
    "profit_curve",
    "targeting_summary",
    "treatment_balance_along_ranking",
    "uplift_by_decile",
]

PROFIT_COLUMNS = ("fraction", "targeted", "incremental_responses", "incremental_value",
                  "cost", "profit")


# ---------------------------------------------------------------------- validation
def _check_number(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a finite number; got {value!r}.")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number; got {value!r}.") from None
    if not np.isfinite(v):
        raise ValueError(f"{name} must be a finite number; got {value!r}.")
    return v


def _check_economics(n: int, cost_per_treatment, value_per_response, value):
    cost = _check_number(cost_per_treatment, "cost_per_treatment")
    if (value is None) == (value_per_response is None):
        raise ValueError(
            "give exactly one of value_per_response (a number per incremental response) "
            "and value (one number per row); got "
            + ("neither." if value is None else "both.")
        )
    if value is None:
        return cost, _check_number(value_per_response, "value_per_response"), None
    return cost, None, check_scores(value, "value", n=n)


# ---------------------------------------------------------------------- profit
def _profit_frame(y, t, score, cost, value_per_response, value, ties, max_points):
    """Profit table of validated inputs (see :func:`profit_curve`)."""
    n = y.shape[0]
    order, neg_sorted = ranking_order(score, ties)
    code, y_values = outcome_code(y, t)
    k = np.arange(n + 1, dtype=np.float64)
    # Incremental responses (a continuous y: incremental outcome): the uplift_joint_abs
    # curve (warns / nan when undefined).
    _, responses = UpliftCurves.from_sorted(
        code[order], neg_sorted, ties=ties,
        y_sorted=None if y_values is None else y_values[order]).curve("uplift_joint_abs")
    if value is None:
        inc_value = responses * value_per_response
    else:
        n_t = int(t.sum())
        if n_t in (0, n):
            inc_value = np.full(n + 1, np.nan)  # the curve call above has warned
        else:
            runs = tie_runs(neg_sorted, ties)
            t_sorted = t[order].astype(np.float64)
            v_sorted = value[order]
            nt = cumulative(t_sorted, runs)
            nc = k - nt
            vt = cumulative(t_sorted * v_sorted, runs)
            vc = cumulative((1.0 - t_sorted) * v_sorted, runs)
            with np.errstate(divide="ignore", invalid="ignore"):
                inc_value = (vt / nt - vc / nc) * k
            inc_value[(nt <= 0) | (nc <= 0)] = 0.0  # undefined top: 0, as in core.evaluation.curves
    cost_k = k * cost
    keep = thin(n + 1, max_points)
    return pd.DataFrame({
        "fraction": k[keep] / n,
        "targeted": k[keep].astype(np.int64),
        "incremental_responses": responses[keep],
        "incremental_value": inc_value[keep],
        "cost": cost_k[keep],
        "profit": inc_value[keep] - cost_k[keep],
    })


def _profit_at(t_sorted: np.ndarray, v_sorted: np.ndarray, neg_sorted: np.ndarray,
               ks: np.ndarray, ties: str, cost: float) -> np.ndarray:
    """Profit of targeting the top ``ks`` rows of a ranking, from its sorted columns.

    ``t_sorted`` (float 0/1) and ``v_sorted`` (per-row value; ``y * value_per_response`` for
    a value per response) are in ranking order, ``neg_sorted`` its negated sorted scores.
    Same estimator and tie policy as :func:`profit_curve` (module docstring), evaluated only
    at ``ks``: ``O(n + len(ks) log n)``.
    """
    zero = np.zeros(1)
    cum_t = np.concatenate([zero, np.cumsum(t_sorted)])
    cum_vt = np.concatenate([zero, np.cumsum(t_sorted * v_sorted)])
    cum_vc = np.concatenate([zero, np.cumsum((1.0 - t_sorted) * v_sorted)])
    k = np.asarray(ks, dtype=np.float64)
    nt = cumulative_at(cum_t, neg_sorted, ks, ties)
    nc = k - nt
    vt = cumulative_at(cum_vt, neg_sorted, ks, ties)
    vc = cumulative_at(cum_vc, neg_sorted, ks, ties)
    with np.errstate(divide="ignore", invalid="ignore"):
        inc = (vt / nt - vc / nc) * k
    defined = (nt > 0) & (nc > 0)
    if not (t_sorted.any() and (1.0 - t_sorted).any()):
        return np.full(k.shape[0], np.nan)
    return np.where(defined, inc, 0.0) - k * cost


def _profit_counted(code: np.ndarray, v_sorted: np.ndarray | None, scale: float,
                    neg_sorted: np.ndarray, counts: np.ndarray, ks: np.ndarray, ties: str,
                    cost: float, out: np.ndarray) -> np.ndarray | None:
    """:func:`_profit_at` of the ranking in which ranked row ``i`` appears ``counts[i]``
    times (a bootstrap resample), without building it: the incremental value at every depth
    is ``scale ·`` ``uplift_joint_abs`` (``(V_T/N_T − V_C/N_C)·k``, 0 while an arm is empty,
    tie runs interpolated) of the per-row values ``v_sorted`` (``code = 2·t``), or of the 0/1
    outcome (``v_sorted`` None, ``code = 2·t + y``: a value per response ``scale``), read by
    one compiled pass over the rows and their counts
    (:func:`~core.evaluation._kernel.joint_values`) at the depths ``ks`` only (non-decreasing)
    into ``out`` (``len(ks)`` floats, reused between calls: of the 4.2M positions of a
    Criteo-size test set a profit curve reads 201).  Agrees with :func:`_profit_at` on the
    repeated rows to rounding when both arms have rows (the caller checks that once: an
    arm-stratified resample keeps them).  None without numba (or for sorted keys the compiled
    pass does not take): the caller then repeats the rows.
    """
    if not joint_values(code, counts, v_sorted, neg_sorted, ties, 2, 0.0, 0.0, out, at=ks):
        return None
    return scale * out - ks.astype(np.float64) * cost


def profit_curve(
    y,
    t,
    score,
    *,
    cost_per_treatment: float,
    value_per_response: float | None = None,
    value=None,
    ties: str = "average",
    max_points: int | None = None,
) -> pd.DataFrame:
    """Incremental responses, value, cost and profit of targeting the top k of a ranking.

    Parameters
    ----------
    y, t, score : array-like of shape (n,)
        Outcome (0/1, or a continuous amount), treatment flag and ranker score (higher =
        target first), as in
        :func:`core.evaluation.curves.uplift_curve`.
    cost_per_treatment : float
        Cost of treating one row (e.g. sending one e-mail).
    value_per_response : float, optional
        Value of one incremental response.  Give this **or** ``value``, not both.
    value : array-like of shape (n,), optional
        Per-row value (e.g. spend); the incremental value is then the difference of mean
        value between treated and control rows in the top k, times k (module docstring).
    ties : {"average", "stable"}, default="average"
    max_points : int, optional
        Keep at most this many evenly spaced depths (ends kept) for plotting; call
        :func:`best_depth` on the full table.

    Returns
    -------
    pandas.DataFrame
        Columns ``fraction`` (k/n), ``targeted`` (k), ``incremental_responses``,
        ``incremental_value``, ``cost``, ``profit``; ``n + 1`` rows from k = 0.

    Notes
    -----
    Undefined curves follow :mod:`core.evaluation.curves`: no treated or no control rows (and, for
    ``incremental_responses``, no responders) warn with
    :class:`~core._validation.UndefinedMetricWarning` and give ``nan``.
    """
    y, t, score = check_uplift_inputs(y, t, score)
    cost, vpr, value = _check_economics(y.shape[0], cost_per_treatment, value_per_response,
                                        value)
    check_choice(ties, "ties", TIES)
    if max_points is not None:
        max_points = check_positive_int(max_points, "max_points")
    return _profit_frame(y, t, score, cost, vpr, value, ties, max_points)


def best_depth(frame: pd.DataFrame) -> dict:
    """Most profitable depth of a :func:`profit_curve` table.

    Returns ``{"fraction", "targeted", "profit"}`` of the row with the largest profit; among
    equal profits the smallest depth (cheapest campaign).  The k = 0 row (profit 0) makes
    "target nobody" the answer when no depth pays.  All-``nan`` profit warns and returns
    ``nan`` values.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a profit_curve DataFrame; got {type(frame).__name__}.")
    missing = [c for c in ("fraction", "targeted", "profit") if c not in frame.columns]
    if missing or len(frame) == 0:
        raise ValueError("frame must be a non-empty profit_curve table with columns "
                         f"'fraction', 'targeted', 'profit'; missing {missing or 'rows'}.")
    profit = frame["profit"].to_numpy(dtype=np.float64)
    if np.isnan(profit).all():
        warnings.warn("The best depth is undefined because the profit is nan everywhere; "
                      "returning nan.", UndefinedMetricWarning, stacklevel=2)
        return {"fraction": float("nan"), "targeted": float("nan"), "profit": float("nan")}
    i = int(np.nanargmax(profit))
    return {
        "fraction": float(frame["fraction"].iloc[i]),
        "targeted": int(frame["targeted"].iloc[i]),
        "profit": float(profit[i]),
    }


def targeting_summary(
    y,
    t,
    scores: Mapping[str, np.ndarray],
    *,
    cost_per_treatment: float,
    value_per_response: float | None = None,
    value=None,
    ties: str = "average",
) -> pd.DataFrame:
    """Best targeting depth of each ranker, with the two trivial policies beside it.

    Returns a DataFrame indexed by ranker (index name ``"ranker"``) with columns
    ``best_fraction``, ``best_targeted``, ``best_profit`` (:func:`best_depth` on the full
    profit curve), ``profit_all`` (everyone treated — the same for every ranker) and
    ``profit_none`` (nobody treated: 0).  Options as in :func:`profit_curve`.
    """
    y, t, _ = check_uplift_inputs(y, t, np.zeros(len(np.asarray(y))))
    cost, vpr, value = _check_economics(y.shape[0], cost_per_treatment, value_per_response,
                                        value)
    check_choice(ties, "ties", TIES)
    if not isinstance(scores, Mapping) or len(scores) == 0:
        raise ValueError("scores must be a non-empty mapping of ranker name -> score array.")
    rows = {}
    for name, s in scores.items():
        s = check_scores(s, f"scores[{str(name)!r}]", n=y.shape[0])
        frame = _profit_frame(y, t, s, cost, vpr, value, ties, None)
        best = best_depth(frame)
        rows[str(name)] = {
            "best_fraction": best["fraction"],
            "best_targeted": best["targeted"],
            "best_profit": best["profit"],
            "profit_all": float(frame["profit"].iloc[-1]),
            "profit_none": 0.0,
        }
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "ranker"
    return out


# ---------------------------------------------------------------------- bins
def _rank_bins(score: np.ndarray, bins: int) -> np.ndarray:
    """Bin 1..bins of every row (1 = highest scores); tie runs share their mid-rank's bin."""
    n = score.shape[0]
    order, neg_sorted = ranking_order(score, "stable")
    ends = tie_run_ends(neg_sorted)
    lengths = np.diff(ends)
    twice_mid = ends[:-1] + 1 + ends[1:]  # 2 × mid-rank (1-based) of each run, an integer
    run_bin = (twice_mid * bins + 2 * n - 1) // (2 * n)  # ceil(mid · bins / n), exact
    out = np.empty(n, dtype=np.int64)
    out[order] = np.repeat(np.clip(run_bin, 1, bins), lengths)
    return out


def uplift_by_decile(y, t, score, *, bins: int = 10, level: float = 0.95) -> pd.DataFrame:
    r"""Observed uplift per score bin (decile by default), bin 1 = highest scores.

    Per bin: ``n``, ``score_min``, ``score_max``, ``n_treated``, ``n_control``,
    ``response_rate_treated`` :math:`\hat p_T`, ``response_rate_control`` :math:`\hat p_C`,
    ``uplift`` :math:`\hat p_T - \hat p_C` and its normal-approximation interval
    ``ci_low``, ``ci_high``:

    .. math::  \hat p_T - \hat p_C \pm z_{(1+\ell)/2}
               \sqrt{\hat\sigma_T^2/n_T + \hat\sigma_C^2/n_C},

    with :math:`\hat\sigma^2` the arm's variance of ``y`` in the bin (divided by its
    :math:`n`): for a 0/1 outcome :math:`\hat p(1-\hat p)`, the Wald interval; for an amount
    (spend) the "rates" are mean amounts and the interval is Welch's normal one.
    The Wald interval is poor for small bins or rates near 0/1 (zero width when both rates
    are 0 or 1).  Binning: module docstring (equal scores share a bin).  A bin without
    treated or control rows has ``nan`` rates / uplift, with one
    :class:`~core._validation.UndefinedMetricWarning`; so has every bin's uplift and
    interval when the outcome is 0 in every row (the rates stay 0).

    Parameters
    ----------
    y, t, score : array-like of shape (n,)
    bins : int, default=10
    level : float in (0, 1), default=0.95

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin, column ``bin`` first.
    """
    y, t, score = check_uplift_inputs(y, t, score)
    bins = check_positive_int(bins, "bins")
    level = check_level(level)
    b = _rank_bins(score, bins)
    size = bins + 1
    n = np.bincount(b, minlength=size)[1:]
    n_t = np.bincount(b, weights=t, minlength=size)[1:]
    r_t = np.bincount(b, weights=t * y, minlength=size)[1:]
    r_c = np.bincount(b, weights=(1 - t) * y, minlength=size)[1:]
    q_t = np.bincount(b, weights=t * y * y, minlength=size)[1:]
    q_c = np.bincount(b, weights=(1 - t) * y * y, minlength=size)[1:]
    n_c = n - n_t
    lo = np.full(size, np.inf)
    hi = np.full(size, -np.inf)
    np.minimum.at(lo, b, score)
    np.maximum.at(hi, b, score)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_t = r_t / n_t
        p_c = r_c / n_c
        var_t = np.maximum(q_t / n_t - p_t * p_t, 0.0)  # = p(1 − p) for a 0/1 outcome
        var_c = np.maximum(q_c / n_c - p_c * p_c, 0.0)
        se = np.sqrt(var_t / n_t + var_c / n_c)
    uplift = p_t - p_c
    z = stats.norm.ppf((1 + level) / 2)
    keep = n > 0
    undefined = keep & ((n_t == 0) | (n_c == 0))
    if undefined.any():
        warnings.warn(
            f"The uplift of bin(s) {', '.join(map(str, np.flatnonzero(undefined) + 1))} is "
            "undefined because a bin has no treated or no control rows; returning nan.",
            UndefinedMetricWarning, stacklevel=2,
        )
    if not y.any():  # 0 − 0 with a zero-width interval would read as a certain "no effect"
        warnings.warn(f"The uplift by bin is undefined because "
                      f"{undefined_reason(y, t)}; returning nan.",
                      UndefinedMetricWarning, stacklevel=2)
        uplift = se = np.full(size - 1, np.nan)
    return pd.DataFrame({
        "bin": np.arange(1, size)[keep],
        "n": n[keep],
        "score_min": lo[1:][keep],
        "score_max": hi[1:][keep],
        "n_treated": n_t[keep].astype(np.int64),
        "n_control": n_c[keep].astype(np.int64),
        "response_rate_treated": p_t[keep],
        "response_rate_control": p_c[keep],
        "uplift": uplift[keep],
        "ci_low": (uplift - z * se)[keep],
        "ci_high": (uplift + z * se)[keep],
    })


def treatment_balance_along_ranking(
    t, score, *, bins: int = 10, alpha: float = 0.05
) -> pd.DataFrame:
    r"""Share treated per score bin against the overall share, with a binomial test.

    In a randomised test the treatment flag is independent of the features, so a ranker
    that did not peek at the assignment spreads treated rows evenly along its ranking.  Per
    bin (binning as in :func:`uplift_by_decile`): ``n``, ``n_treated``, ``share_treated``,
    ``overall_share`` :math:`\bar t`, ``difference``, ``p_value`` of the exact two-sided
    binomial test of :math:`H_0`: treated ~ Binomial(n, :math:`\bar t`)
    (``scipy.stats.binomtest``) and ``imbalanced``: ``p_value < alpha / m`` with
    :math:`m` the number of non-empty bins (Bonferroni).

    Parameters
    ----------
    t : array-like of shape (n,)
        Binary treatment flag.
    score : array-like of shape (n,)
        Ranker score.
    bins : int, default=10
    alpha : float in (0, 1), default=0.05
        Family-wise level of the ``imbalanced`` flag.
    """
    t = check_binary(t, "t")
    if t.shape[0] == 0:
        raise ValueError("t must contain at least one row; got an empty array.")
    score = check_scores(score, "score", n=t.shape[0])
    bins = check_positive_int(bins, "bins")
    alpha = check_level(alpha, "alpha")
    b = _rank_bins(score, bins)
    n = np.bincount(b, minlength=bins + 1)[1:]
    n_t = np.bincount(b, weights=t, minlength=bins + 1)[1:].astype(np.int64)
    keep = np.flatnonzero(n > 0)
    overall = float(t.mean())
    p_values = np.array([stats.binomtest(int(n_t[i]), int(n[i]), overall).pvalue for i in keep])
    share = n_t[keep] / n[keep]
    return pd.DataFrame({
        "bin": keep + 1,
        "n": n[keep],
        "n_treated": n_t[keep],
        "share_treated": share,
        "overall_share": overall,
        "difference": share - overall,
        "p_value": p_values,
        "imbalanced": p_values < alpha / keep.shape[0],
    })
