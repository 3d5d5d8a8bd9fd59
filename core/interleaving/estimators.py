r"""Online evaluation of the causal effect of recommendations: A/B tests and causal interleaving.

Implements Sato (2021), *Online Evaluation Methods for the Causal Effect of Recommendations*
(RecSys '21, doi:10.1145/3460231.3474235; SPEC §4).  Users :math:`u`, items :math:`i`, binary
potential outcomes :math:`Y^T_{ui}` (item recommended) and :math:`Y^C_{ui}` (not), effect
:math:`\tau_{ui} = Y^T_{ui} - Y^C_{ui}`.  Ranker A shows each user a list :math:`L^A_u` of
``n`` items; its average causal effect (eqs. 2, 6) is
:math:`\tau_A = \frac{1}{|U|}\sum_u \tau_{L^A_u}` with
:math:`\tau_{L^A_u}=\frac1n\sum_{i\in L^A_u}\tau_{ui}`.
An experiment shows user :math:`u` a list :math:`L_u` (:math:`Z_{ui} = 1` for its items) and
observes :math:`Y_{ui} = Z_{ui}Y^T_{ui} + (1 - Z_{ui})Y^C_{ui}` (eq. 1) on **every** item.

Methods (``method=`` names)
---------------------------
``ab_total``  A/B test, half the users see :math:`L^A`, half :math:`L^B`; eq. 4:
              :math:`\hat Y^{total}_A = \frac{1}{n|S_A|}\sum_{u\in S_A}\sum_{i} Y_{ui}`.
``ab_list``   A/B test counting listed items only; eq. 5 (biased: it measures :math:`Y^T`).
``epi_rct``   equal-probability interleaving (n items uniformly from :math:`L^A\cup L^B`) with
              the difference-in-means estimator, eq. 7.
``cbi_rct``   causal balanced interleaving (Algorithm 1) with eq. 7 (biased when lists overlap).
``cbi_ips``   CBI with inverse propensity scoring, eq. 8:
              :math:`\hat\tau_{L^A_u} = \frac1n\sum_{i\in L^A_u}\big[\frac{Z_{ui}Y_{ui}}{p_{ui}}
              - \frac{(1-Z_{ui})Y_{ui}}{1-p_{ui}}\big]`.
``epi_ips``   EPI with eq. 8 and :math:`p = n/|L^A_u\cup L^B_u|` (not in the paper; unbiased).

Every method estimates :math:`\tau_A - \tau_B`.

Contents: exact CBI propensities, the two list designs (:func:`epi_lists`, :func:`cbi_lists`),
:func:`observe` and the estimators on observed data (``estimate_*``).  The method names,
:class:`~core.interleaving.comparison.Comparison` and the truth live in
:mod:`core.interleaving.comparison`; simulation and its summaries in
:mod:`core.interleaving.simulation`; worlds and rankers in :mod:`core.interleaving.worlds`.
All are one import away: ``from core.interleaving import simulate_grid, cbi_lists``.

Decisions the paper leaves open (SPEC §4)
-----------------------------------------
* **Eq. 7 undefined** — :math:`\hat\tau_{L^A_u}` needs shown *and* unshown items of
  :math:`L^A_u`.  It is undefined when the design shows all of :math:`L^A_u` or none of it.
  Default ``rct_undefined="reweight"``: the estimate is
  :math:`\frac{1}{|S|}\sum_{u\in S} [D^A_u\hat\tau_{L^A_u} - D^B_u\hat\tau_{L^B_u}]/q_u`, where
  :math:`D^A_u` flags a defined term and :math:`q_u = P(D^A_u = 1)` is known exactly from the
  design (a Horvitz-Thompson correction for the dropped terms; symmetric, so
  :math:`P(D^B_u=1) = q_u` too).  Users whose two lists hold the same items contribute 0:
  their difference is exactly 0, and eq. 7 cannot see it (everything is shown).  Under EPI this
  pooled estimator is exactly unbiased.  ``rct_undefined="drop"`` follows the paper's reference
  code (``evaluator/comparator.py``): per-user eq. 7, averaged over the users whose A *and* B
  terms are defined; ``nan`` when none is.  It is biased when lists nearly coincide: with
  overlap ``n - 1`` a comparable EPI user always shows both list-specific items, so its term
  measures :math:`(Y^T_a - Y^T_b)/(n-1)` instead of :math:`(\tau_a - \tau_b)/n`.
  With ``n = 1`` eq. 7 is never defined: ``nan`` with an ``UndefinedMetricWarning``.
* **CBI list exhausted** — cannot happen: both lists have ``n`` items and Algorithm 1 stops at
  ``n`` picks, so before the t-th pick (t < n) each list has at least ``n - t >= 1`` unshown
  items.  (The reference code would fail on an empty choice; no rule is needed.)
* **p = 1 in eq. 8** — only when the two lists hold the same items (the union has ``n``
  items, all shown).  The control term :math:`(1-Z)Y/(1-p)` then has :math:`1 - Z = 0` and
  is defined as 0; the user's :math:`\hat\tau_{L^A_u}` is then the mean :math:`Y^T` (not
  :math:`\tau`), but :math:`\hat\tau_{L^A_u} - \hat\tau_{L^B_u} = 0`, the true difference.
  Otherwise :math:`0 < p < 1` (positivity holds).
* **EPI sampling** — n items *without* replacement (the paper's text); the reference code
  calls ``np.random.choice(items, n)``, which samples with replacement.
* **A/B split** — ``floor(n_users / 2)`` users see A, the rest B (as the reference code).

CBI propensities are computed exactly by dynamic programming over Algorithm 1
(:func:`cbi_propensities`); the paper estimates them by repeating Algorithm 1.

References
----------
Sato, M. (2021). Online Evaluation Methods for the Causal Effect of Recommendations.
*RecSys '21*. doi:10.1145/3460231.3474235.
Reference code: github.com/masatoh73/causal-interleaving (``evaluator/comparator.py``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd

from core._validation import (
    UndefinedMetricWarning,
    as_generator,
    check_choice,
    check_positive_int,
    is_integer,
)
from core.interleaving import _kernel as _k
from core.interleaving.comparison import _binary_matrix, _lists, _pair, _world

__all__ = [
    "cbi_lists",
    "cbi_propensities",
    "cbi_propensities_mc",
    "cbi_propensity_table",
    "epi_lists",
    "estimate_ab_list",
    "estimate_ab_total",
    "estimate_ips",
    "estimate_rct",
    "observe",
]

# ------------------------------------------------------------------------------ propensities
def _check_n_overlap(n: Any, overlap: Any) -> tuple[int, int]:
    n = check_positive_int(n, "n")
    if not (is_integer(overlap) and 0 <= overlap <= n):
        raise ValueError(f"overlap must be an integer in [0, n={n}]; got {overlap!r}.")
    return n, int(overlap)


def cbi_propensities(n: int, overlap: int) -> tuple[float, float]:
    r"""Exact CBI inclusion probabilities for two lists of ``n`` items sharing ``overlap``.

    Algorithm 1 treats items exchangeably within three classes, so the propensity of an item
    depends only on whether it is in both lists and on :math:`|L^A\cup L^B| = 2n - \text{overlap}`
    (Sato 2021, §3.3).  A dynamic programme over the alternating draws tracks the counts
    :math:`(c, a, b)` of common, A-only and B-only items shown: at A's turn, with :math:`c`
    common and :math:`a` A-only items shown, A draws a common item with probability
    :math:`(\text{overlap} - c)/(n - c - a)`; B's turn likewise; the first turn is A's or B's
    with probability 1/2.  Then :math:`p_{common} = E[c]/\text{overlap}` and
    :math:`p_{other} = E[a]/(n - \text{overlap})`, so
    :math:`\text{overlap}\,p_{common} + 2(n-\text{overlap})\,p_{other} = n`.
    Tables are cached per ``n`` (``n = 100`` takes about 2 s once).

    Hand-checked: ``n = 2, overlap = 1`` gives ``(3/4, 5/8)``; no overlap gives ``p_other = 1/2``.

    Parameters
    ----------
    n : int
        List length (both lists and the interleaved list).
    overlap : int
        :math:`|L^A \cap L^B|`, in ``[0, n]``.

    Returns
    -------
    p_common, p_other : float
        ``p_common`` is ``nan`` when ``overlap = 0`` and ``p_other`` is ``nan`` when
        ``overlap = n`` (no such item exists).
    """
    n, overlap = _check_n_overlap(n, overlap)
    info = _k.design_summary("cbi", n)
    return float(info["p_common"][overlap]), float(info["p_other"][overlap])


def cbi_propensity_table(n: int) -> pd.DataFrame:
    """Exact CBI propensities for every overlap of lists of length ``n`` (see
    :func:`cbi_propensities`), with the union size and the probability that eq. 7 is defined
    for a list (``p_rct_defined``; the EPI value beside it)."""
    n = check_positive_int(n, "n")
    cbi = _k.design_summary("cbi", n)
    epi = _k.design_summary("epi", n)
    ov = np.arange(n + 1)
    return pd.DataFrame({
        "overlap": ov, "union_size": 2 * n - ov, "p_common": cbi["p_common"],
        "p_other": cbi["p_other"], "p_rct_defined": cbi["q"], "epi_p": n / (2 * n - ov),
        "epi_p_rct_defined": epi["q"],
    })


def cbi_propensities_mc(n: int, overlap: int, *, n_draws: int = 100_000, random_state: Any = None,
                        return_se: bool = False) -> tuple[float, ...]:
    """Monte-Carlo CBI propensities: run :func:`cbi_lists` ``n_draws`` times (the paper's way).

    Used to test :func:`cbi_propensities`.  With ``return_se`` also returns the standard
    errors, from the per-draw share of each class shown.

    Returns
    -------
    p_common, p_other[, se_common, se_other] : float
    """
    n, overlap = _check_n_overlap(n, overlap)
    n_draws = check_positive_int(n_draws, "n_draws")
    a = np.arange(n)
    b = np.arange(n) + n - overlap
    shown = cbi_lists(np.broadcast_to(a, (n_draws, n)), np.broadcast_to(b, (n_draws, n)),
                      random_state=random_state)
    n_common = ((shown >= n - overlap) & (shown < n)).sum(1)
    out = []
    for count, size in ((n_common, overlap), (n - n_common, 2 * (n - overlap))):
        share = count / size if size else np.full(n_draws, np.nan)
        out.append((share.mean(), share.std(ddof=1) / math.sqrt(n_draws)))
    (pc, sc), (po, so) = out
    return (float(pc), float(po), float(sc), float(so)) if return_se else (float(pc), float(po))


# ------------------------------------------------------------------------------ list construction
def _interleave(lists_a: Any, lists_b: Any, random_state: Any, design: str) -> np.ndarray:
    a, b = _pair(lists_a, lists_b, ndim=None)
    shape = a.shape
    n = shape[-1]
    a2, b2 = a.reshape(-1, n), b.reshape(-1, n)
    rng = as_generator(random_state)
    out = np.empty_like(a2)
    step = max(1, 2**16 // n)
    for lo in range(0, a2.shape[0], step):
        items, valid, pos_b, _ = _k.union_slots(a2[lo:lo + step], b2[lo:lo + step])
        picks = _k.slot_epi(rng, valid, n) if design == "epi" else _k.slot_cbi(rng, pos_b)
        out[lo:lo + step] = np.take_along_axis(items, picks, 1)
    return out.reshape(shape)


def epi_lists(lists_a: Any, lists_b: Any, *, random_state: Any = None) -> np.ndarray:
    r"""Equal-probability interleaving (EPI, Sato 2021 §3.3).

    Each user is shown ``n`` items drawn uniformly *without replacement* from
    :math:`L^A_u \cup L^B_u`, so every union item has propensity :math:`n/|L^A_u\cup L^B_u|`.

    Parameters
    ----------
    lists_a, lists_b : array-like of int, shape (..., n)
        Leading axes (users, repetitions, ...) are all vectorised.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of int64, same shape as ``lists_a``
        The shown items, in uniformly random order.
    """
    return _interleave(lists_a, lists_b, random_state, "epi")


def cbi_lists(lists_a: Any, lists_b: Any, *, random_state: Any = None) -> np.ndarray:
    r"""Causal balanced interleaving (CBI, Sato 2021, Algorithm 1), vectorised.

    Start with A or B (probability 1/2), then alternate; each turn adds an item drawn
    uniformly from that ranker's list among the items not yet shown.  A list is never
    exhausted (see the module notes), so no fallback rule is needed.

    Parameters
    ----------
    lists_a, lists_b : array-like of int, shape (..., n)
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of int64, same shape as ``lists_a``
        The interleaved list, in pick order.
    """
    return _interleave(lists_a, lists_b, random_state, "cbi")


def observe(y_treated: Any, y_control: Any, shown: Any) -> np.ndarray:
    r"""Observed outcomes, eq. 1: :math:`Y_{ui} = Z_{ui}Y^T_{ui} + (1-Z_{ui})Y^C_{ui}`,
    with :math:`Z_{ui} = 1` for the items in ``shown[u]``.

    Returns
    -------
    ndarray of uint8, shape (users, items)
    """
    yt, yc, s, _ = _world(y_treated, y_control, shown, shown)
    z = np.zeros(yt.shape, bool)
    np.put_along_axis(z, s, True, 1)
    return np.where(z, yt, yc)


# ------------------------------------------------------------------------------ estimators
def estimate_ab_total(y_a: Any, y_b: Any, *, n: int) -> float:
    r"""AB-total, eq. 4: :math:`\hat Y^{total}_A - \hat Y^{total}_B`.

    :math:`\hat Y^{total}_A = \frac{1}{n|S_A|}\sum_{u\in S_A}\sum_{i\in I}Y_{ui}`; unbiased for
    :math:`\tau_A - \tau_B` because the control-outcome term is the same for both arms.

    Parameters
    ----------
    y_a, y_b : array-like of 0/1, shape (users in S_A or S_B, items)
        Observed outcomes of the users shown :math:`L^A` (resp. :math:`L^B`).
    n : int
        List length.
    """
    n = check_positive_int(n, "n")
    ya, yb = _binary_matrix(y_a, "y_a"), _binary_matrix(y_b, "y_b")
    if ya.shape[0] == 0 or yb.shape[0] == 0:
        raise ValueError(
            f"y_a and y_b need at least one user each; got {ya.shape[0]} and {yb.shape[0]}."
        )
    return float(ya.sum(1).mean() / n - yb.sum(1).mean() / n)


def estimate_ab_list(y_a: Any, lists_a: Any, y_b: Any, lists_b: Any) -> float:
    r"""AB-list, eq. 5: mean observed outcome over the listed items only.

    :math:`\hat Y^{list}_A = \frac{1}{n|S_A|}\sum_{u\in S_A}\sum_{i\in L^A_u} Y_{ui}`, which
    estimates :math:`E[Y^T]` on the lists, not :math:`\tau` (shown for contrast).
    """
    ya, yb = _binary_matrix(y_a, "y_a"), _binary_matrix(y_b, "y_b")
    la = _lists(lists_a, "lists_a", n_items=ya.shape[1])
    lb = _lists(lists_b, "lists_b", n_items=yb.shape[1])
    for y, li, name in ((ya, la, "lists_a"), (yb, lb, "lists_b")):
        if li.shape[0] != y.shape[0] or li.shape[0] == 0:
            raise ValueError(
                f"{name} must have one row per user of its arm ({y.shape[0]}); "
                f"got {li.shape[0]}."
            )
    return float(np.take_along_axis(ya, la, 1).mean() - np.take_along_axis(yb, lb, 1).mean())


def _interleaved_inputs(y: Any, shown: Any, lists_a: Any, lists_b: Any):
    yy = _binary_matrix(y, "y")
    a, b = _pair(lists_a, lists_b, n_items=yy.shape[1])
    s = _lists(shown, "shown", n_items=yy.shape[1])
    if a.shape[0] != yy.shape[0] or s.shape != a.shape:
        raise ValueError(
            f"shown and lists_a must have shape (users, n) = ({yy.shape[0]}, n) like y; "
            f"got {s.shape} and {a.shape}."
        )
    items, valid, pos_b, common_a = _k.union_slots(a, b)
    z = (items[:, :, None] == s[:, None, :]).any(2) & valid
    if (z.sum(1) != a.shape[1]).any():
        raise ValueError("shown must hold items of lists_a or lists_b only (an interleaved list).")
    yslot = np.take_along_axis(yy, np.where(valid, items, 0), 1) * valid
    return z, yslot, pos_b, common_a.sum(1), a.shape[1]


def estimate_rct(y: Any, shown: Any, lists_a: Any, lists_b: Any, *,
                 design: Literal["epi", "cbi"],
                 rct_undefined: Literal["reweight", "drop"] = "reweight") -> float:
    r"""Difference-in-means estimator, eq. 7, pooled over users: EPI-RCT / CBI-RCT.

    Per user, :math:`\hat\tau_{L^A_u} = \frac{1}{|L^A_u\cap L_u|}\sum_{i\in L^A_u\cap L_u}Y_{ui}
    - \frac{1}{|L^A_u\setminus L_u|}\sum_{i\in L^A_u\setminus L_u}Y_{ui}`; pooling over users
    and the undefined cases follow ``rct_undefined`` (module notes): ``"reweight"`` divides
    each defined term by its probability of being defined under ``design`` and averages over
    all users (identical lists contribute 0); ``"drop"`` averages over users whose two terms
    are defined (the reference code).  ``nan`` with an :class:`UndefinedMetricWarning` when no
    user is usable.

    Parameters
    ----------
    y : array-like of 0/1, shape (users, items)
        Observed outcomes (:func:`observe`).
    shown : array-like of int, shape (users, n)
        The interleaved lists.
    lists_a, lists_b : array-like of int, shape (users, n)
    design : {"epi", "cbi"}
        Design that produced ``shown`` (:func:`epi_lists` or :func:`cbi_lists`); required,
        with no default, since a wrong one silently reweights by the other design's
        probabilities (only used by ``"reweight"``).
    rct_undefined : {"reweight", "drop"}

    Returns
    -------
    float
        The estimate of :math:`\tau_A - \tau_B`.
    """
    check_choice(design, "design", ("epi", "cbi"))
    check_choice(rct_undefined, "rct_undefined", ("reweight", "drop"))
    z, yslot, pos_b, ov, n = _interleaved_inputs(y, shown, lists_a, lists_b)
    est = _k.slot_estimates(z, yslot, pos_b, ov, n, design)
    d = est["rct_a"] - est["rct_b"]
    if rct_undefined == "drop":
        ok = est["ok_a"] & est["ok_b"]
        if not ok.any():
            return _undefined("eq. 7 is undefined for every user (rct_undefined='drop')")
        return float(d[ok].mean())
    q = _k.design_summary(design, n)["q"][ov]
    ident = ov == n
    if ((q == 0) & ~ident).any():
        return _undefined("eq. 7 can never be defined for some user (n = 1?)")
    return float(np.where(ident, 0.0, d / np.where(q > 0, q, 1.0)).mean())


def estimate_ips(y: Any, shown: Any, lists_a: Any, lists_b: Any, *,
                 design: Literal["cbi", "epi"]) -> float:
    r"""Inverse-propensity estimator, eq. 8: CBI-IPS (or EPI-IPS).

    :math:`\hat\tau_{L^A_u} = \frac1n\sum_{i\in L^A_u}\big[\frac{Z_{ui}Y_{ui}}{p_{ui}} -
    \frac{(1-Z_{ui})Y_{ui}}{1-p_{ui}}\big]`, averaged over users, minus the same for B.
    :math:`p_{ui}` is the exact propensity of ``design`` (:func:`cbi_propensities`, or
    :math:`n/|L^A_u\cup L^B_u|` for EPI).  With :math:`p = 1` (identical lists) the control
    term is 0 (module notes).

    Parameters
    ----------
    y, shown, lists_a, lists_b
        As in :func:`estimate_rct`: outcomes, interleaved lists, the two rankers' lists.
    design : {"cbi", "epi"}
        Design that produced ``shown`` (:func:`cbi_lists` or :func:`epi_lists`), whose
        propensities weigh the outcomes; required, with no default, as in
        :func:`estimate_rct`.

    Returns
    -------
    float
        The estimate of :math:`\tau_A - \tau_B`.
    """
    check_choice(design, "design", ("cbi", "epi"))
    z, yslot, pos_b, ov, n = _interleaved_inputs(y, shown, lists_a, lists_b)
    est = _k.slot_estimates(z, yslot, pos_b, ov, n, design)
    return float((est["ips_a"] - est["ips_b"]).mean())


def _undefined(msg: str) -> float:
    warnings.warn(msg + "; returning nan.", UndefinedMetricWarning, stacklevel=3)
    return float("nan")
