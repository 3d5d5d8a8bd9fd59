"""Experiment hygiene checks run before any uplift analysis: sample ratio and covariate balance.

A randomised A/B test should split units in the planned ratio and leave the arms alike on
every pre-treatment feature.  :func:`srm_test` checks the first (a sample ratio mismatch
points to broken assignment or logging, and makes every downstream estimate suspect);
:func:`covariate_balance` checks the second with standardised mean differences.

References
----------
Fabijan, A., Gupchup, J., Gupta, S., Omhover, J., Qin, W., Vermeer, L., Dmitriev, P. (2019).
Diagnosing Sample Ratio Mismatch in Online Controlled Experiments. KDD 2019.
Kohavi, R., Tang, D., Xu, Y. (2020). Trustworthy Online Controlled Experiments, ch. 21.
Austin, P. C. (2009). Balance diagnostics for comparing the distribution of baseline
covariates between treatment groups in propensity-score matched samples. Statistics in
Medicine 28(25), 3083-3107.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from core._validation import check_binary, check_same_length
from core.data.splits import split_problem

__all__ = ["ROUND_SHARES", "SMALL_CELL", "SMD_THRESHOLD", "SRM_ALPHA", "balance_labels",
           "covariate_balance", "imbalance_note", "rounded_share", "share_text",
           "small_cells_note", "srm_test"]

#: p-value below which a sample ratio mismatch is flagged (Kohavi et al. 2020).
SRM_ALPHA = 0.001
#: |SMD| above which a feature is flagged as imbalanced (Austin 2009).
SMD_THRESHOLD = 0.1


def _open_unit(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}.") from None
    if not 0 < v < 1:
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}.")
    return v


def srm_test(t: Any, *, expected_treated_share: float = 0.5,
             alpha: float = SRM_ALPHA, assumed: bool = False) -> pd.DataFrame:
    """Chi-square goodness-of-fit test of the treated/control split (sample ratio mismatch).

    With n rows, observed counts O = (n_T, n_C) and expected counts
    E = (s·n, (1 − s)·n) for the planned treated share s:

        χ² = Σ (O − E)² / E,   df = 1,   p = P(χ²₁ ≥ χ²)  (``scipy.stats.chisquare``).

    A mismatch is flagged when p < ``alpha``; the default 0.001 is the usual SRM alarm
    (Kohavi et al. 2020): with many experiments a 0.05 threshold would cry wolf, while a real
    SRM on a large test gives a tiny p-value.

    Parameters
    ----------
    t : array-like of 0/1
        Treatment flags.
    expected_treated_share : float in (0, 1), default 0.5
    alpha : float in (0, 1), default 0.001
    assumed : bool, default False
        The share was not given but assumed from the data (the observed share rounded to
        5 % or a simple fraction, :func:`rounded_share`): the verdict then says that only a
        gross mismatch can show.

    Returns
    -------
    DataFrame
        Index ``["treated", "control"]``; columns ``observed``, ``expected``,
        ``observed_share``, ``expected_share`` and ``contribution`` ((O − E)²/E, summing to
        χ²).  ``attrs`` holds ``statistic``, ``df`` (1), ``pvalue``, ``alpha``, ``srm`` (bool)
        and ``verdict`` (a sentence).
    """
    t = check_binary(t, "t")
    if t.size == 0:
        raise ValueError("t must contain at least one row; got an empty array.")
    share = _open_unit(expected_treated_share, "expected_treated_share")
    alpha = _open_unit(alpha, "alpha")
    n = t.size
    observed = np.array([t.sum(), n - t.sum()], dtype=np.float64)
    expected = np.array([share, 1.0 - share]) * n
    res = stats.chisquare(observed, expected)
    statistic, pvalue = float(res.statistic), float(res.pvalue)
    out = pd.DataFrame(
        {"observed": observed.astype(np.int64), "expected": expected,
         "observed_share": observed / n, "expected_share": [share, 1.0 - share],
         "contribution": (observed - expected) ** 2 / expected},
        index=pd.Index(["treated", "control"], name="arm"),
    )
    srm = pvalue < alpha
    planned = share_text(share)
    verdict = (
        f"Sample ratio mismatch: {observed[0]:,.0f} treated vs {observed[1]:,.0f} control is "
        f"unlikely under a planned {planned} treated share (χ² = {statistic:.2f}, "
        + ("p < 0.001" if pvalue < 0.001 else f"p = {pvalue:.2g} < {alpha:g}")
        + "). Check assignment and logging before trusting results."
        if srm else
        f"No sample ratio mismatch: {observed[0]:,.0f} treated vs {observed[1]:,.0f} control is "
        f"consistent with a {planned} treated share (χ² = {statistic:.2f}, p = {pvalue:.2g})."
    )
    if assumed:
        verdict += (" The planned share was not given: it is the observed share rounded to "
                    "5 % or a simple fraction (⅓, ⅙, ⅛ …), so only a gross mismatch shows.")
    out.attrs.update(statistic=statistic, df=1, pvalue=pvalue, alpha=alpha, srm=bool(srm),
                     verdict=verdict)
    return out


def balance_labels(balance: pd.DataFrame) -> list[str]:
    """Each row of :func:`covariate_balance` named for people: the feature, and for a level
    of a text feature ``"feature = level"``.

    >>> balance_labels(pd.DataFrame({"feature": ["age", "channel"], "level": [None, "Web"]}))
    ['age', 'channel = Web']
    """
    return [f"{f} = {lvl}" if isinstance(lvl, str) and lvl else str(f)
            for f, lvl in zip(balance["feature"], balance["level"])]


def imbalance_note(balance: pd.DataFrame, *, most: int = 5) -> str | None:
    """A sentence naming the features flagged by :func:`covariate_balance` (largest |SMD|
    first, at most ``most``), or None when none is."""
    flagged = balance[balance["imbalanced"]].sort_values("abs_smd", ascending=False)
    if flagged.empty:
        return None
    names = balance_labels(flagged)
    shown = ", ".join(f"{nm} ({smd:+.2f})" for nm, smd in zip(names[:most],
                                                               flagged["smd"][:most]))
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return (f"Treated and control rows differ on {shown}{more} (|SMD| > {SMD_THRESHOLD:g}). In "
            "a randomised test this points at the assignment or at how rows were dropped; "
            "uplift estimates may be biased.")


#: Fewest rows per (treatment, outcome) cell below which the Data page warns.
SMALL_CELL = 10


def small_cells_note(y: Any, t: Any, *, least: int = SMALL_CELL) -> str | None:
    """A sentence when a (treatment, outcome) cell has fewer than ``least`` rows, else None.

    Training splits the rows 70/30 within each of the four cells (treated / control ×
    responder / non-responder, :func:`core.data.splits.make_splits`), refuses a cell of
    fewer than 2 rows, and learns little from a handful."""
    y, t = check_binary(y, "y"), check_binary(t, "t")
    check_same_length(y, t)
    names = {(1, 1): "treated responder", (1, 0): "treated non-responder",
             (0, 1): "control responder", (0, 0): "control non-responder"}
    count = {cell: int(((t == cell[0]) & (y == cell[1])).sum()) for cell in names}
    small = [f"{count[cell]:,} {what}{'s' * (count[cell] != 1)}"
             for cell, what in names.items() if count[cell] < least]
    if not small:
        return None
    refused = split_problem(y, t) is not None  # what make_splits refuses
    return (f"Few rows in some cells: {', '.join(small)}. Training splits the rows within "
            "each treated/control × responder cell, "
            + ("and cannot split these: models cannot be trained on these data."
               if refused else "and models learn little from a handful; treat any "
               "result as noise."))


#: The shares a design is assumed to have when none is given: multiples of 5 % and the
#: simple fractions analysts split by that are not (thirds, sixths, eighths: 1 : 2, 1 : 2 : 3,
#: 1 : 7), from 5 % to 95 %.
ROUND_SHARES = np.unique(np.r_[np.arange(1, 20) / 20, np.arange(1, 6) / 6, np.arange(1, 8) / 8])


def rounded_share(share: Any) -> Any:
    """Shares snapped to the nearest of :data:`ROUND_SHARES` (5 %, 10 %, …, 95 % and the
    thirds, sixths and eighths — an exact 1 : 2 split is tested against ⅓, not 35 %): the
    design assumed when none is known (one arm's share, or every arm's; the caller rescales
    several to sum to 1)."""
    arr = np.asarray(share, dtype=np.float64)
    nearest = np.abs(arr[..., None] - ROUND_SHARES).argmin(axis=-1)
    out = ROUND_SHARES[nearest]
    return float(out) if out.ndim == 0 else out


def share_text(share: float) -> str:
    """A planned share as the analyst typed it: ``0.6`` → "60%", ``0.595`` → "59.5%"."""
    return f"{share:.0%}" if round(share * 100, 6).is_integer() else f"{share:.1%}"


def _smd(a: np.ndarray, b: np.ndarray) -> float:
    diff = a.mean() - b.mean()
    pooled = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2.0)
    if pooled == 0:
        return 0.0 if diff == 0 else float(np.copysign(np.inf, diff))
    return float(diff / pooled)


def covariate_balance(X: Any, t: Any, *, threshold: float = SMD_THRESHOLD,
                      max_levels: int = 50) -> pd.DataFrame:
    """Standardised mean differences (SMD) of every feature between treated and control.

    Numeric feature x (missing and infinite values left out, and counted as missing):

        SMD = (mean_T(x) − mean_C(x)) / sqrt((var_T(x) + var_C(x)) / 2),

    with sample variances (ddof = 1), as in Austin (2009).  A categorical (or text / boolean
    -as-text) feature gets one row per level, computed on the 0/1 indicator of that level
    among the non-missing rows.  When both variances are 0 the SMD is 0 for equal means and
    ±inf otherwise.  Rows with |SMD| > ``threshold`` (default 0.1) are flagged.

    Parameters
    ----------
    X : DataFrame or 2-d array
        Pre-treatment features (an array gets columns ``x0, x1, ...``).
    t : array-like of 0/1, one per row of X
    threshold : float > 0, default 0.1
    max_levels : int, default 50
        Categorical features with more levels are skipped (listed in ``attrs["skipped"]``).

    Returns
    -------
    DataFrame
        One row per numeric feature or categorical level, columns ``feature``, ``level``
        (None for numeric), ``mean_treated``, ``mean_control``, ``smd``, ``abs_smd``,
        ``missing_treated``, ``missing_control`` (share of missing values per arm) and
        ``imbalanced`` (|SMD| > threshold).  ``attrs``: ``threshold``, ``n_imbalanced``,
        ``skipped``.
    """
    t = check_binary(t, "t")
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X must be a DataFrame or a 2-d array; got shape {arr.shape}.")
        frame = pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])
    if len(frame) != t.size:
        raise ValueError(f"t must have one value per row of X ({len(frame)}); got {t.size}.")
    if not (isinstance(threshold, (int, float)) and threshold > 0):
        raise ValueError(f"threshold must be a positive number; got {threshold!r}.")
    for code, arm in ((1, "treated"), (0, "control")):
        if (t == code).sum() < 2:
            raise ValueError(f"t must have at least 2 {arm} rows for variances; got "
                             f"{int((t == code).sum())}.")
    treated = t == 1
    rows, skipped = [], []
    for col in frame.columns:
        s = frame[col]
        miss = s.isna().to_numpy()
        m_t, m_c = float(miss[treated].mean()), float(miss[~treated].mean())
        if s.dtype.kind in "biuf":
            v = s.to_numpy(dtype=np.float64)
            miss = miss | ~np.isfinite(v)  # ±inf has no mean: left out like a gap
            m_t, m_c = float(miss[treated].mean()), float(miss[~treated].mean())
            a, b = v[treated & ~miss], v[~treated & ~miss]
            if a.size < 2 or b.size < 2:
                skipped.append(str(col))
                continue
            rows.append((col, None, a.mean(), b.mean(), _smd(a, b), m_t, m_c))
            continue
        levels = s.dropna().unique()
        if len(levels) > max_levels:
            skipped.append(str(col))
            continue
        if isinstance(s.dtype, pd.CategoricalDtype):
            levels = [lv for lv in s.cat.categories if lv in set(levels)]
        vals = s.to_numpy(dtype=object)
        for lv in levels:
            ind = (vals == lv).astype(np.float64)
            a, b = ind[treated & ~miss], ind[~treated & ~miss]
            if a.size < 2 or b.size < 2:
                continue
            rows.append((col, lv, a.mean(), b.mean(), _smd(a, b), m_t, m_c))
    out = pd.DataFrame(rows, columns=["feature", "level", "mean_treated", "mean_control", "smd",
                                      "missing_treated", "missing_control"])
    out.insert(5, "abs_smd", out["smd"].abs())
    out["imbalanced"] = out["abs_smd"] > threshold
    out.attrs.update(threshold=float(threshold), n_imbalanced=int(out["imbalanced"].sum()),
                     skipped=skipped)
    return out
