r"""Multi-treatment policies: which arm for whom, what it is worth, and the multi-armed Qini
curve (SPEC §8).

An A/B/n test has a control arm (code 0) and K treatment arms (codes 1…K) randomised with
known shares.  A model predicts the uplift :math:`\hat\tau_{ik}` of arm k for unit i.

* :func:`best_arm_policy` — each unit's arm with the largest :math:`\hat\tau_{ik} - c_{ik}`
  if that is positive, else control;
* :func:`policy_value` — the inverse-propensity estimate of a policy's mean outcome on the
  randomised data, :math:`\hat V = \frac1n\sum_i 1[T_i = \pi_i]\,Y_i / e_{i,T_i}`, and its
  standard error :math:`sd/\sqrt n`;
* :func:`policy_difference` — two policies on the same rows, with the paired standard error
  of the difference (:func:`policy_terms` gives the per-row terms);
* :func:`ipw_scores` — per-unit unbiased uplift scores of each arm vs control,
  :math:`\Gamma_{ik} = 1[T_i=k]Y_i/e_{ik} - 1[T_i=0]Y_i/e_{i0}`, to evaluate a path with;
* :func:`multi_armed_qini` — gain against spend when each unit may get at most one of K
  arms with different costs (Sverdrup, Wu, Athey & Wager 2023): each unit's upper-left
  convex hull of :math:`\{(0,0)\}\cup\{(c_{ik}, \hat\tau_{ik})\}`, its segments taken
  greedily over all units by decreasing slope (gain per unit of cost).  At every spend the
  predicted gain is the optimum of the linear relaxation
  :math:`\max\sum_{ik} x_{ik}\hat\tau_{ik}` s.t. :math:`\sum_k x_{ik}\le 1`,
  :math:`x\ge0`, :math:`\frac1n\sum_{ik}x_{ik}c_{ik}\le B` (tested against an LP solver);
* :func:`multi_armed_qini_band` — a bootstrap band of the path evaluated on held-out scores.

References
----------
Sverdrup, E., Wu, H., Athey, S. & Wager, S. (2023). Qini curves for multi-armed treatment
rules. arXiv:2306.11979.
Sinha, P. & Zoltners, A. (1979). The multiple-choice knapsack problem. *Operations Research*
27(3) (the hull-and-greedy solution of its linear relaxation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from core._validation import as_generator, check_level, check_positive_int

__all__ = ["best_arm_policy", "ipw_scores", "mean_se", "multi_armed_qini",
           "multi_armed_qini_band", "policy_difference", "policy_terms", "policy_value"]


# ----------------------------------------------------------------------------- checks
def _tau(tau_hat: Any) -> np.ndarray:
    tau = np.asarray(tau_hat, dtype=np.float64)
    if tau.ndim == 1:
        tau = tau[:, None]
    if tau.ndim != 2 or tau.shape[0] == 0 or tau.shape[1] == 0:
        raise ValueError(f"tau_hat must be an (n, K) array of predicted uplifts; got shape "
                         f"{np.shape(tau_hat)}.")
    if not np.isfinite(tau).all():
        raise ValueError("tau_hat must be finite; it holds NaN or infinite values.")
    return tau


def _cost(cost: Any, n: int, k: int) -> np.ndarray:
    c = np.asarray(cost, dtype=np.float64)
    if c.ndim == 0:
        c = np.full(k, float(c))
    if c.shape == (k,):
        c = np.broadcast_to(c, (n, k))
    if c.shape != (n, k):
        raise ValueError(f"cost must have shape (K,) = ({k},) or (n, K) = ({n}, {k}); got "
                         f"{np.shape(cost)}.")
    if not np.isfinite(c).all() or (c < 0).any():
        raise ValueError(f"cost must be finite and ≥ 0; got a minimum of {np.nanmin(c):g}.")
    return c


def _arms(codes: Any, name: str, n: int | None = None, k1: int | None = None) -> np.ndarray:
    """Arm codes as int64, one per row (``n``), within ``0 … k1 − 1`` when ``k1`` is given
    (the propensity's columns)."""
    a = np.asarray(codes)
    if a.ndim != 1 or (n is not None and a.shape[0] != n):
        raise ValueError(f"{name} must be 1-d with one arm code per row ({n}); got shape "
                         f"{a.shape}.")
    if a.dtype.kind not in "iub" and not (a.dtype.kind == "f" and np.all(a == np.round(a))):
        raise ValueError(f"{name} must hold integer arm codes (0 = control); got dtype "
                         f"{a.dtype}.")
    a = a.astype(np.int64)
    if k1 is not None and a.size and (a.min() < 0 or a.max() >= k1):
        raise ValueError(f"{name} must hold arm codes 0…{k1 - 1} (propensity has {k1} "
                         f"columns); got {a.min()}…{a.max()}.")
    return a


def _experiment(y: Any, t: Any, propensity: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checked ``(y, t, propensity)`` of a randomised experiment: a finite 1-d outcome of
    at least two rows, arm codes within the propensity's columns."""
    raw = np.asarray(y)
    if raw.dtype.kind not in "biuf":  # numpy's own "could not convert string to float"
        raise ValueError(f"y must hold numbers (0/1 or an amount); got dtype {raw.dtype}.")
    yv = raw.astype(np.float64)
    n = yv.shape[0] if yv.ndim else 0
    if yv.ndim != 1 or n < 2:
        raise ValueError(f"y must be a 1-d array with at least two rows; got shape "
                         f"{yv.shape}.")
    if not np.isfinite(yv).all():
        bad = np.flatnonzero(~np.isfinite(yv))
        raise ValueError(f"y must be finite; {bad.size:,} row(s) hold NaN or infinite values "
                         f"(first: row {bad[0]}). Drop or fill them first.")
    e = _propensity(propensity, n)
    return yv, _arms(t, "t", n, e.shape[1]), e


def _propensity(propensity: Any, n: int) -> np.ndarray:
    e = np.asarray(propensity, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] != n or e.shape[1] < 2:
        raise ValueError(f"propensity must be an (n, K+1) array with n = {n} and at least two "
                         f"arms; got shape {e.shape}.")
    if not np.isfinite(e).all() or (e <= 0).any() or (e > 1).any():
        raise ValueError("propensity must hold probabilities in (0, 1] (a randomised design "
                         "gives every arm a positive chance).")
    if not np.allclose(e.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("each row of propensity must sum to 1 over the arms.")
    return e


# ----------------------------------------------------------------------------- values
def best_arm_policy(tau_hat: Any, cost: Any = 0.0) -> np.ndarray:
    """Arm code per unit: ``argmax_k τ̂_ik − c_ik`` (1-based) when positive, else 0.

    >>> best_arm_policy([[0.1, 0.3], [0.05, 0.02], [-0.1, -0.2]], [0.0, 0.1]).tolist()
    [2, 1, 0]
    """
    tau = _tau(tau_hat)
    net = tau - _cost(cost, *tau.shape)
    best = net.argmax(axis=1)
    return np.where(net[np.arange(tau.shape[0]), best] > 0, best + 1, 0)


def policy_value(assigned_arm: Any, y: Any, t: Any, propensity: Any) -> tuple[float, float]:
    r"""Inverse-propensity value of a policy and its standard error.

    :math:`\hat V = \frac1n\sum_i \frac{1[t_i = \pi_i]\,y_i}{e_{i,t_i}}`, SE =
    :math:`sd(\text{terms}, ddof=1)/\sqrt n` — unbiased for the mean outcome if every unit
    got the arm the policy assigns, when the arms were randomised with the probabilities
    ``propensity`` (Dudík, Langford & Li 2011; SPEC §8).

    Parameters
    ----------
    assigned_arm : array-like of int, shape (n,), or of float, shape (n, K+1)
        The policy's arm per row (0 = control), or each row's arm probabilities (a
        stochastic policy, :func:`policy_terms`).
    y : array-like of shape (n,)
        Outcome, 0/1 or continuous.
    t : array-like of int, shape (n,)
        The arm each row got in the experiment.
    propensity : array-like of shape (n, K+1)
        The design's probability of every arm for every row.

    Returns
    -------
    (value, standard_error) : tuple of float

    See Also
    --------
    policy_difference : two policies compared on the same rows (a paired standard error).

    >>> policy_value([1, 1, 0, 0], [1, 0, 1, 1], [1, 0, 0, 1], [[0.5, 0.5]] * 4)
    (1.0, 0.5773502691896257)
    """
    terms = policy_terms(assigned_arm, y, t, propensity)
    return mean_se(terms)


def policy_terms(assigned_arm: Any, y: Any, t: Any, propensity: Any) -> np.ndarray:
    r"""Per-row terms :math:`1[t_i = \pi_i]\,y_i / e_{i,t_i}` of :func:`policy_value` (their
    mean is the value): to compare policies on the same rows, or to bootstrap.

    ``assigned_arm`` may also be an ``(n, K+1)`` array of the probabilities with which a
    stochastic policy assigns each arm; the term is then :math:`\pi_i(t_i)\,y_i/e_{i,t_i}`
    (a uniformly random arm: :math:`y_i / ((K+1)\,e_{i,t_i})`, with no draw's noise).
    """
    yv, tv, e = _experiment(y, t, propensity)
    n, k1 = yv.shape[0], e.shape[1]
    weight = yv / e[np.arange(n), tv]
    if np.ndim(assigned_arm) == 2:
        prob = np.asarray(assigned_arm, dtype=np.float64)
        if prob.shape != (n, k1):
            raise ValueError(f"a stochastic assigned_arm needs shape (n, K+1) = ({n}, {k1}), "
                             f"one probability per arm; got {prob.shape}.")
        if (not np.isfinite(prob).all() or (prob < 0).any() or (prob > 1).any()
                or not np.allclose(prob.sum(axis=1), 1.0, atol=1e-6)):
            raise ValueError("a stochastic assigned_arm must hold probabilities in [0, 1] "
                             "summing to 1 over the arms in every row (0 for an arm it never "
                             "gives).")
        return prob[np.arange(n), tv] * weight
    return (tv == _arms(assigned_arm, "assigned_arm", n, k1)) * weight


def policy_difference(first: Any, second: Any, y: Any, t: Any, propensity: Any, *,
                      cost: Any = None) -> tuple[float, float]:
    r"""Value of policy ``first`` minus that of ``second`` on the same rows, and the paired
    standard error of the difference.

    :math:`\hat\Delta = \frac1n\sum_i d_i`, :math:`d_i = v_i(\pi_1) - v_i(\pi_2)` with the
    per-row terms :math:`v_i` of :func:`policy_terms`, minus the cost of each row's arm
    under each policy when ``cost`` (per arm, control first, or ``(n, K+1)``; a single number
    is the cost of every treatment arm, control costing 0, as in :func:`best_arm_policy`)
    is given; SE = :math:`sd(d, ddof=1)/\sqrt n`.  Both values come from the same rows, so
    their errors are correlated: :math:`\sqrt{SE_1^2 + SE_2^2}` is too large when the
    policies mostly agree (then most :math:`d_i` are 0) and too small when they disagree on
    most rows (a row that counts for one counts against the other).

    >>> policy_difference([1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1], [1, 0, 0, 1],
    ...                   [[0.5, 0.5]] * 4)
    (0.5, 0.5)
    """
    d = (policy_terms(first, y, t, propensity) - policy_terms(second, y, t, propensity))
    if cost is not None:
        n = d.shape[0]
        k1 = np.asarray(propensity).shape[1]
        if np.ndim(cost) == 0:  # each treatment arm's cost: charged to control too, it
            cost = np.r_[0.0, np.full(k1 - 1, cost, dtype=np.float64)]  # cancelled out
        try:
            c = _cost(cost, n, k1)
        except ValueError:
            raise ValueError(f"cost must hold one cost per arm, control first: shape ({k1},) "
                             f"or ({n}, {k1}), values ≥ 0; got shape {np.shape(cost)} (for "
                             "best_arm_policy the costs of the treatment arms only).") from None
        d = d - (_assigned_cost(first, c) - _assigned_cost(second, c))
    return mean_se(d)


def _assigned_cost(policy: Any, cost: np.ndarray) -> np.ndarray:
    """Each row's cost under a deterministic (arm codes) or stochastic (probabilities) policy."""
    if np.ndim(policy) == 2:
        return (np.asarray(policy, dtype=np.float64) * cost).sum(axis=1)
    return cost[np.arange(cost.shape[0]), np.asarray(policy, dtype=np.int64)]


def mean_se(terms: np.ndarray) -> tuple[float, float]:
    r"""The mean of per-row terms and its standard error :math:`sd(terms, ddof=1)/\sqrt n`:
    :func:`policy_value` of :func:`policy_terms`, :func:`policy_difference` of their
    differences — for several policies scored on the same rows without computing each
    one's terms again.

    >>> mean_se(np.array([1.0, 0.0, 2.0, 1.0]))
    (1.0, 0.408248290463863)
    """
    return float(terms.mean()), float(terms.std(ddof=1) / np.sqrt(terms.shape[0]))


def ipw_scores(y: Any, t: Any, propensity: Any) -> np.ndarray:
    r"""Unbiased per-unit uplift scores of every treatment arm vs control, shape (n, K):
    :math:`\Gamma_{ik} = 1[t_i=k]\,y_i/e_{ik} - 1[t_i=0]\,y_i/e_{i0}`."""
    yv, tv, e = _experiment(y, t, propensity)
    arms = np.arange(1, e.shape[1])
    treated = (tv[:, None] == arms) * yv[:, None] / e[:, 1:]
    control = (tv == 0) * yv / e[:, 0]
    return treated - control[:, None]


# ----------------------------------------------------------------------------- Qini path
def _hull_segments(tau: np.ndarray, cost: np.ndarray):
    """Every unit's upper-left hull from (0, 0): segments (unit, from, to, Δc, Δτ) in order."""
    units, frm, to, dc, dg = [], [], [], [], []
    for i in range(tau.shape[0]):
        # points sorted by cost, then by gain descending; arm codes are 1-based
        order = np.lexsort((-tau[i], cost[i]))
        hull = [(0.0, 0.0, 0)]
        for j in order:
            c, g = cost[i, j], tau[i, j]
            if g <= hull[-1][1]:
                continue  # not higher than a cheaper (or equal-cost) point: never on the hull
            if c == hull[-1][0] and len(hull) > 1:  # same cost, higher gain: replaces it
                hull.pop()
            while len(hull) >= 2:
                (c0, g0, _), (c1, g1, _) = hull[-2], hull[-1]
                # drop the middle vertex when it lies on or below the chord to the new point
                if (g1 - g0) * (c - c0) <= (g - g0) * (c1 - c0):
                    hull.pop()
                else:
                    break
            hull.append((c, g, int(j) + 1))
        for (c0, g0, a0), (c1, g1, a1) in zip(hull[:-1], hull[1:]):
            units.append(i)
            frm.append(a0)
            to.append(a1)
            dc.append(c1 - c0)
            dg.append(g1 - g0)
    return (np.array(units, dtype=np.int64), np.array(frm, dtype=np.int64),
            np.array(to, dtype=np.int64), np.array(dc, dtype=np.float64),
            np.array(dg, dtype=np.float64))


def multi_armed_qini(tau_hat: Any, cost: Any, *, reward: Any = None) -> pd.DataFrame:
    r"""The multi-armed Qini curve: mean gain per unit against mean spend per unit.

    Parameters
    ----------
    tau_hat : array-like of shape (n, K)
        Predicted uplift of each treatment arm vs control (decides the path).
    cost : array-like of shape (K,) or (n, K)
        Cost of giving arm k to a unit, ≥ 0 (in the outcome's units).
    reward : array-like of shape (n, K), optional
        Held-out evaluation scores (e.g. :func:`ipw_scores`); the path is still chosen by
        ``tau_hat`` but the gain adds ``reward[i, new] − reward[i, old]`` (0 for control).

    Returns
    -------
    pandas.DataFrame
        One row per vertex of the piecewise-linear path, from ``spend = gain = 0`` to the
        point where no arm adds predicted gain: ``spend``, ``gain``, and the step that led
        there — ``unit`` (row index; −1 at the start), ``arm`` (its new arm) and ``slope``
        (predicted gain per unit of cost; ``inf`` for a free arm).

    Examples
    --------
    Two units, one arm costing 1: unit 0 gains 0.5, unit 1 gains 0.2, so unit 0 first.

    >>> multi_armed_qini([[0.5], [0.2]], [1.0])[["spend", "gain"]].to_numpy().tolist()
    [[0.0, 0.0], [0.5, 0.25], [1.0, 0.35]]
    """
    tau = _tau(tau_hat)
    n, k = tau.shape
    c = _cost(cost, n, k)
    rew = None
    if reward is not None:
        rew = np.asarray(reward, dtype=np.float64)
        if rew.shape != (n, k) or not np.isfinite(rew).all():
            raise ValueError(f"reward must be a finite ({n}, {k}) array like tau_hat; got "
                             f"shape {np.shape(reward)}.")
    unit, frm, to, dc, dg = _hull_segments(tau, c)
    with np.errstate(divide="ignore"):
        slope = np.where(dc > 0, dg / np.where(dc > 0, dc, 1.0), np.inf)
    order = np.lexsort((np.arange(unit.size), -slope))  # steepest first; a unit's own
    # segments keep their order (their slopes decrease along the hull)
    unit, frm, to, dc, dg, slope = (a[order] for a in (unit, frm, to, dc, dg, slope))
    if rew is not None:
        padded = np.column_stack([np.zeros(n), rew])
        dg = padded[unit, to] - padded[unit, frm]
    return pd.DataFrame({
        "spend": np.concatenate(([0.0], np.cumsum(dc) / n)),
        "gain": np.concatenate(([0.0], np.cumsum(dg) / n)),
        "unit": np.concatenate(([-1], unit)),
        "arm": np.concatenate(([0], to)),
        "slope": np.concatenate(([np.nan], slope)),
    })


def _gain_at(path: pd.DataFrame, spend: np.ndarray) -> np.ndarray:
    """Gain of a path at the spends ``spend`` (linear between vertices, flat after the end)."""
    s, g = path["spend"].to_numpy(), path["gain"].to_numpy()
    # free steps share spend 0: keep the last vertex of each spend for interpolation
    keep = np.append(s[1:] != s[:-1], True)
    return np.interp(spend, s[keep], g[keep])


def multi_armed_qini_band(tau_hat: Any, cost: Any, reward: Any, *, spend: Any = None,
                          n_boot: int = 200, level: float = 0.95,
                          random_state: Any = 0) -> pd.DataFrame:
    """The path evaluated on ``reward`` with a bootstrap band over units.

    Units are resampled with replacement ``n_boot`` times; each resample's path (chosen by
    its ``tau_hat``, scored by its ``reward``) is read at the spends of ``spend`` (default 50
    points up to the full path's last spend), and the band is the percentile interval.
    ``random_state`` (default 0, as the other bootstraps) seeds the resamples; ``None``
    draws fresh ones.

    Returns
    -------
    pandas.DataFrame
        ``spend``, ``gain`` (the full sample's path), ``low``, ``high``.
    """
    tau = _tau(tau_hat)
    n, k = tau.shape
    c = _cost(cost, n, k)
    rew = np.asarray(reward, dtype=np.float64)
    full = multi_armed_qini(tau, c, reward=rew)
    grid = (np.linspace(0.0, float(full["spend"].iloc[-1]), 50) if spend is None
            else np.asarray(spend, dtype=np.float64))
    n_boot = check_positive_int(n_boot, "n_boot")
    level = check_level(level)
    rng = as_generator(random_state)
    reps = np.empty((n_boot, grid.size))
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        reps[b] = _gain_at(multi_armed_qini(tau[idx], c[idx], reward=rew[idx]), grid)
    alpha = (1.0 - level) / 2.0
    return pd.DataFrame({"spend": grid, "gain": _gain_at(full, grid),
                         "low": np.quantile(reps, alpha, axis=0),
                         "high": np.quantile(reps, 1.0 - alpha, axis=0)})
