r"""Calibration of predicted uplift: does the predicted uplift match the observed uplift?

* :func:`calibration_table` — rows binned by quantile of the predicted uplift; per bin the
  mean predicted uplift and the observed uplift (mean outcome of the treated rows minus that
  of the control rows) with a normal confidence interval,
  :math:`SE = \sqrt{s_T^2/n_T + s_C^2/n_C}`; binary or continuous outcome.
* :func:`calibration_slope` — the slope of the least-squares line of the transformed outcome
  :math:`Y^* = y\,(t/p - (1-t)/(1-p))` on the predicted uplift (with an intercept), with a
  heteroskedasticity-robust (HC1) standard error.  :math:`E[Y^*\mid x] = \tau(x)` in a
  randomised experiment, so a calibrated model has slope 1; 0 means its ranking carries no
  signal, a slope below 1 that it exaggerates the differences between customers.

For several treatment arms, pass one arm's rows with the control rows (``t`` 0/1) and that
arm's column of predictions (:meth:`core.data.MultiArmData.pair`).

References
----------
Athey, S. & Imbens, G. (2016). Recursive partitioning for heterogeneous causal effects. *PNAS*.
Chernozhukov, V., Demirer, M., Duflo, E. & Fernández-Val, I. (2018). Generic machine learning
inference on heterogeneous treatment effects in randomized experiments. NBER w24678 (the
calibration regression, "BLP" slope).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from core._validation import (
    UndefinedMetricWarning,
    check_level,
    check_positive_int,
    check_uplift_inputs,
    undefined_reason,
)
from core.evaluation.metrics import transformed_outcome

__all__ = ["calibration_slope", "calibration_table"]


def calibration_table(y: Any, t: Any, tau_hat: Any, *, n_bins: int = 10,
                      level: float = 0.95) -> pd.DataFrame:
    """Predicted vs observed uplift by quantile bin of the predicted uplift.

    Bins are equal-count by rank of ``tau_hat`` (ties kept in one bin: rows with equal
    predictions never straddle two bins, so a bin may hold more rows and fewer bins may
    appear).  Bin 1 holds the lowest predictions.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin``, ``n``, ``n_treated``, ``n_control``, ``predicted`` (mean
        τ̂), ``observed`` (mean y treated − mean y control), ``low``, ``high`` (the
        ``level`` normal interval, Welch's standard error).  A bin without treated or
        control rows has ``nan`` (with a warning); one with a single treated or control row
        has an observed uplift but a ``nan`` interval (with a warning).
    """
    from scipy import stats

    y, t, tau = check_uplift_inputs(y, t, tau_hat, score_name="tau_hat")
    n_bins = check_positive_int(n_bins, "n_bins")
    level = check_level(level)
    nothing = undefined_reason(y, t)
    if nothing:
        warnings.warn(f"The observed uplift is undefined because {nothing}; every bin is nan.",
                      UndefinedMetricWarning, stacklevel=2)
    ranks = stats.rankdata(tau, method="min")  # equal predictions share a rank
    b = np.minimum((ranks - 1) * n_bins // y.shape[0], n_bins - 1)
    z = stats.norm.ppf(0.5 + level / 2)
    rows, missing, single = [], 0, 0
    for j in np.unique(b):
        m = b == j
        yt, yc = y[m & (t == 1)].astype(float), y[m & (t == 0)].astype(float)
        if nothing or yt.size == 0 or yc.size == 0:
            obs = se = np.nan
            missing += not nothing
        else:
            obs = yt.mean() - yc.mean()
            # one row in an arm: its variance, hence the interval, cannot be estimated
            # (taking it as 0 would drop that row's noise and give a far too narrow interval)
            se = (np.sqrt(yt.var(ddof=1) / yt.size + yc.var(ddof=1) / yc.size)
                  if min(yt.size, yc.size) > 1 else np.nan)
            single += min(yt.size, yc.size) == 1
        rows.append({"bin": int(j) + 1, "n": int(m.sum()), "n_treated": int(yt.size),
                     "n_control": int(yc.size), "predicted": float(tau[m].mean()),
                     "observed": obs, "low": obs - z * se, "high": obs + z * se})
    if missing:
        warnings.warn(f"{missing} bin(s) lack treated or control rows; their observed uplift "
                      "is nan.", UndefinedMetricWarning, stacklevel=2)
    if single:
        warnings.warn(f"{single} bin(s) have a single treated or control row; their interval "
                      "is nan (one row's variance is unknown).", UndefinedMetricWarning,
                      stacklevel=2)
    return pd.DataFrame(rows)


def calibration_slope(y: Any, t: Any, tau_hat: Any, *,
                      propensity: float | None = None) -> tuple[float, float]:
    r"""Slope of :math:`Y^* = a + b\,\hat\tau + e` and its HC1 standard error.

    Parameters
    ----------
    y, t, tau_hat : array-like of shape (n,)
        Outcome (0/1 or continuous), treatment 0/1, predicted uplift.
    propensity : float, optional
        Probability that a row of ``y, t`` is treated, default the observed treated share.
        For one arm ``k`` of a several-arm test (its rows and the control rows, as
        :meth:`core.data.MultiArmData.pair` gives them) that is the share within the pair,
        ``e_k / (e_0 + e_k)`` — not the arm's share of the whole design ``e_k``.

    Returns
    -------
    (slope, standard_error) : tuple of float
        ``nan`` (with a warning) when ``tau_hat`` is constant, the data has no treated row,
        no control row or no responder (an outcome of 0 everywhere: ``Y* = 0``, a slope of
        0 with a standard error of 0 would look certain), or fewer than 3 rows.
    """
    y, t, tau = check_uplift_inputs(y, t, tau_hat, score_name="tau_hat")
    nothing = undefined_reason(y, t) or ("there are fewer than 3 rows" if y.shape[0] < 3
                                         else "")
    if nothing:
        warnings.warn(f"The calibration slope is undefined because {nothing}; returning nan.",
                      UndefinedMetricWarning, stacklevel=2)
        return float("nan"), float("nan")
    y_star = transformed_outcome(y, t, propensity=propensity)
    x = tau - tau.mean()
    sxx = float(x @ x)
    if sxx == 0:
        warnings.warn("The calibration slope is undefined: tau_hat is constant; returning "
                      "nan.", UndefinedMetricWarning, stacklevel=2)
        return float("nan"), float("nan")
    slope = float(x @ (y_star - y_star.mean()) / sxx)
    resid = y_star - y_star.mean() - slope * x
    n = y.shape[0]
    var = (x ** 2 @ resid ** 2) / sxx ** 2 * n / (n - 2)  # HC1 sandwich for the slope
    return slope, float(np.sqrt(var))
