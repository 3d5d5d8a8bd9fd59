r"""Label-ranking metrics: disagreement error, Kendall's τ and precision / recall / F1 at K.

Every metric takes ``metric(Y_true, Y_pred[, k=K])``: ``Y_true`` the observed rankings as
positions ``(n, L)`` (1 = most preferred, 0 = not ranked; rows may be incomplete, see
:mod:`core.label_ranking._rankings`) and ``Y_pred`` the predicted rankings, complete positions
``1 … L`` (what :meth:`LabelRanker.predict` returns).

Two private kernels feed everything: :func:`_discordant` counts, per row, the known pairs a
prediction puts in the wrong order (disagreement error and τ); :func:`_hits_at` counts, per row
and cut-off, the ranked labels among the predicted top K (precision, recall, F1 and the curve).
Only the functions that report F1 warn when it is undefined (precision = recall = 0).

Rows that rank no label (``L_t = 0``) carry no known preference: they are left out of every
metric here (their per-row values are ``nan``).  A ``Y_true`` where every row is empty is
refused.

References
----------
Dekel, O., Manning, C., Singer, Y. (2003). Log-linear models for label ranking. NIPS 16
(the disagreement error).
Djuric, N., Grbovic, M., Radosavljevic, V., Bhamidipati, N., Vucetic, S. (2014). Non-linear
label ranking for large-scale prediction of long-term user interests. AAAI, eqs. (15)–(16).
Kendall, M. G. (1938). A new measure of rank correlation. Biometrika 30(1/2), 81–93.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from core._validation import UndefinedMetricWarning, is_integer
from core.label_ranking._rankings import check_rankings, n_ranked

__all__ = [
    "disagreement_error",
    "disagreement_per_row",
    "f1_at_k",
    "kendall_tau",
    "precision_at_k",
    "prf_curve",
    "recall_at_k",
]

#: Rows per block in the pair kernel: bounds the temporary arrays to ~``_CHUNK × L`` cells.
_CHUNK = 65_536


# ------------------------------------------------------------------ validation
def _check_pair(Y_true, Y_pred) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``Y_true`` (incomplete allowed) and ``Y_pred`` (complete) of the same shape."""
    Y_true = check_rankings(Y_true, name="Y_true")
    n, L = Y_true.shape
    Y_pred = np.asarray(Y_pred)
    if Y_pred.ndim != 2 or Y_pred.shape[0] != n:
        raise ValueError(f"Y_pred must have the shape of Y_true ({n} rows × {L} labels); "
                         f"got shape {Y_pred.shape}.")
    Y_pred = check_rankings(Y_pred, n_labels=L, name="Y_pred")
    incomplete = (Y_pred == 0).any(axis=1)
    if incomplete.any():
        r = int(np.flatnonzero(incomplete)[0])
        raise ValueError(f"Y_pred must be complete rankings (positions 1 … {L} in every row; "
                         f"a prediction ranks every label); row {r} ranks only "
                         f"{int((Y_pred[r] > 0).sum())} of {L} labels.")
    return Y_true, Y_pred


def _check_k(k, L: int, name: str = "k") -> int:
    if not is_integer(k) or not 1 <= k <= L:
        raise ValueError(f"{name} must be an integer in 1 … {L} (the number of labels); "
                         f"got {k!r}.")
    return int(k)


# ------------------------------------------------------------------ kernels
def _discordant(Y_true: np.ndarray, Y_pred: np.ndarray) -> np.ndarray:
    """Per row, the known pairs ``(i ≻ j)`` of ``Y_true`` that ``Y_pred`` puts as ``j`` above ``i``.

    Unranked labels get position ``L + 1`` (tied below every ranked label).  The true positions
    are laid out in predicted order, ``s[r, Y_pred[r, j] − 1] = Y_true[r, j]``; a wrong pair is
    then an inversion ``a < b, s_a > s_b`` (strict, so two unranked labels never count).
    Cost ``O(n L²)`` comparisons, done as ``L`` vectorised column-vs-suffix comparisons per
    block of rows.
    """
    n, L = Y_true.shape
    dtype = np.int16 if L < 32_000 else np.int32
    out = np.empty(n, dtype=np.int64)
    for lo in range(0, n, _CHUNK):
        t = Y_true[lo:lo + _CHUNK]
        t = np.where(t > 0, t, L + 1).astype(dtype)
        s = np.empty_like(t)
        np.put_along_axis(s, Y_pred[lo:lo + _CHUNK] - 1, t, axis=1)
        count = np.zeros(t.shape[0], dtype=np.int64)
        for a in range(L - 1):
            count += np.count_nonzero(s[:, a + 1:] < s[:, a:a + 1], axis=1)
        out[lo:lo + _CHUNK] = count
    return out


def _known_pairs(lt: np.ndarray, L: int) -> np.ndarray:
    """``C(L_t, 2) + L_t (L − L_t) = L_t (L − (L_t + 1)/2)`` known pairs per row."""
    lt = lt.astype(np.float64)
    return lt * (L - (lt + 1.0) / 2.0)


def _hits_at(Y_true: np.ndarray, Y_pred: np.ndarray) -> np.ndarray:
    """``hits[r, k − 1]`` = how many of row ``r``'s ranked labels are in its predicted top ``k``."""
    rel = np.empty(Y_true.shape, dtype=np.int32)
    np.put_along_axis(rel, Y_pred - 1, (Y_true > 0).astype(np.int32), axis=1)
    return np.cumsum(rel, axis=1)


# ------------------------------------------------------------------ disagreement and τ
def disagreement_per_row(Y_true, Y_pred) -> np.ndarray:
    r"""Per-row disagreement error: the share of a row's known pairs predicted in the wrong order.

    .. math::

        \epsilon_t = \frac{\sum_{i,j} I\big(i \succ_{\pi_t} j\big)\,
                     I\big(\hat\pi^{-1}_{t j} < \hat\pi^{-1}_{t i}\big)}
                    {L_t \left(L - \tfrac{L_t + 1}{2}\right)}

    where ``i ≻ j`` holds when ``i`` is ranked above ``j`` in the observed ranking or ``i`` is
    ranked and ``j`` is not; the denominator counts those known pairs, ``C(L_t, 2)`` among the
    ranked labels plus ``L_t (L − L_t)`` ranked-vs-unranked (SPEC §7).

    Parameters
    ----------
    Y_true : array-like of int, shape (n, L)
        Observed positions (1 = most preferred, 0 = not ranked).
    Y_pred : array-like of int, shape (n, L)
        Predicted complete positions ``1 … L``.

    Returns
    -------
    ndarray of float, shape (n,)
        ``ε_t`` in [0, 1] per row; ``nan`` for rows that rank no label (no known pair).
        Used for paired tests between two methods on the same rows.

    Examples
    --------
    Row 1 gets one of its 3 known pairs wrong; row 2 ranks nothing; row 3 is exact.

    >>> disagreement_per_row([[1, 2, 0], [0, 0, 0], [1, 2, 3]],
    ...                      [[2, 1, 3], [1, 2, 3], [1, 2, 3]]).round(4).tolist()
    [0.3333, nan, 0.0]
    """
    Y_true, Y_pred = _check_pair(Y_true, Y_pred)
    lt = n_ranked(Y_true)
    known = _known_pairs(lt, Y_true.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lt > 0, _discordant(Y_true, Y_pred) / known, np.nan)


def disagreement_error(Y_true, Y_pred) -> float:
    r"""Disagreement error :math:`\epsilon_{dis}` (Dekel et al. 2003; Djuric et al. 2014, eq. 15).

    The mean over rows of the share of known label pairs predicted in the wrong order:

    .. math::

        \epsilon_{dis} = \frac{1}{N'} \sum_{t:\,L_t > 0}
            \frac{\sum_{i,j=1}^{L} I(\pi_{t} \text{ prefers } i \text{ to } j)\,
                  I(\hat\pi^{-1}_{t i} > \hat\pi^{-1}_{t j})}
                 {L_t\,(L - \tfrac{1}{2}(L_t + 1))}

    A ranked label is preferred to every unranked one; two unranked labels form no pair.  The
    printed eq. (15) counts the pairs predicted in the *right* order (its indicator reads
    :math:`\hat\pi^{-1}_{t\pi_{tj}} > \hat\pi^{-1}_{t\pi_{ti}}` for :math:`\pi_{ti} > \pi_{tj}`);
    the wrong ones are meant (SPEC §7), so 0 is a perfect prediction and a reversed complete
    ranking scores 1.  On complete rankings :math:`\epsilon_{dis} = (1 - \tau)/2`
    (:func:`kendall_tau`).

    Rows with ``L_t = 0`` have no known pair and are **left out** (``N'`` counts the others).

    Parameters
    ----------
    Y_true : array-like of int, shape (n, L)
        Observed positions (1 = most preferred, 0 = not ranked).
    Y_pred : array-like of int, shape (n, L)
        Predicted complete positions ``1 … L``.

    Returns
    -------
    float
        In [0, 1]; lower is better.

    Raises
    ------
    ValueError
        Shapes differ, ``Y_pred`` is not complete, positions are invalid, or every row of
        ``Y_true`` is empty.

    Examples
    --------
    Row 1 ranks ``a ≻ b`` of three labels; its 3 known pairs are ``a≻b, a≻c, b≻c`` and the
    prediction ``b, a, c`` gets ``a≻b`` wrong: 1/3.  Row 2 is complete and exactly reversed: 1.

    >>> disagreement_error([[1, 2, 0], [1, 2, 3]], [[2, 1, 3], [3, 2, 1]])
    0.6666666666666666
    """
    per_row = disagreement_per_row(Y_true, Y_pred)
    return float(np.nanmean(per_row))


def kendall_tau(Y_true, Y_pred) -> float:
    r"""Mean per-row Kendall τ between complete observed and predicted rankings.

    .. math::

        \tau_t = \frac{C_t - D_t}{\binom{L}{2}} = 1 - \frac{2 D_t}{\binom{L}{2}},
        \qquad \bar\tau = \frac{1}{n} \sum_t \tau_t

    with ``C_t`` / ``D_t`` the concordant / discordant label pairs of row ``t`` (τ-a; rankings
    have no ties, so τ-a = τ-b).  Hence ``disagreement_error = (1 − kendall_tau) / 2`` on
    complete rankings.  For incomplete ``Y_true`` use :func:`disagreement_error`.

    Parameters
    ----------
    Y_true, Y_pred : array-like of int, shape (n, L)
        Complete positions ``1 … L``.

    Returns
    -------
    float
        In [−1, 1]; 1 = identical rankings.

    References
    ----------
    Kendall, M. G. (1938). A new measure of rank correlation. Biometrika 30(1/2), 81–93.

    Examples
    --------
    Row 1 is identical (τ = 1); row 2 swaps one of 3 pairs (τ = (2 − 1)/3):

    >>> round(kendall_tau([[1, 2, 3], [1, 2, 3]], [[1, 2, 3], [2, 1, 3]]), 4)
    0.6667
    """
    Y_true, Y_pred = _check_pair(Y_true, Y_pred)
    incomplete = (Y_true == 0).any(axis=1)
    if incomplete.any():
        r = int(np.flatnonzero(incomplete)[0])
        raise ValueError(f"kendall_tau needs complete rankings in Y_true; row {r} ranks only "
                         f"{int((Y_true[r] > 0).sum())} of {Y_true.shape[1]} labels "
                         "(use disagreement_error for incomplete rankings).")
    L = Y_true.shape[1]
    tau = 1.0 - 2.0 * _discordant(Y_true, Y_pred) / (L * (L - 1) / 2.0)
    return float(tau.mean())


# ------------------------------------------------------------------ top-K retrieval
def _pr(Y_true: np.ndarray, Y_pred: np.ndarray, ks: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Averaged precision and recall at each ``k`` of ``ks`` over rows with ``L_t > 0``."""
    lt = n_ranked(Y_true)
    keep = lt > 0
    hits = _hits_at(Y_true[keep], Y_pred[keep])[:, np.asarray(ks) - 1].astype(np.float64)
    k_arr = np.asarray(ks, dtype=np.float64)
    precision = (hits / k_arr[None, :]).mean(axis=0)
    recall = (hits / lt[keep][:, None]).mean(axis=0)
    return precision, recall


def _f1(precision: np.ndarray, recall: np.ndarray, ks: list[int]) -> np.ndarray:
    """F1 from averaged precision and recall; ``nan`` with an ``UndefinedMetricWarning``
    where both are 0.  Only the functions that report F1 call it (so only they warn)."""
    denom = precision + recall
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(denom > 0, 2.0 * precision * recall / denom, np.nan)
    if np.isnan(f1).any():
        bad = [k for k, v in zip(ks, f1) if np.isnan(v)]
        warnings.warn(f"F1@K is undefined at k = {bad}: no ranked label is in any predicted "
                      "top K (precision = recall = 0); returning nan.", UndefinedMetricWarning,
                      stacklevel=3)
    return f1


def precision_at_k(Y_true, Y_pred, k: int) -> float:
    r"""Precision at the top ``k`` (Djuric et al. 2014, eq. 16).

    .. math::

        P@K = \frac{1}{N'} \sum_{t:\,L_t > 0} \frac{1}{K}
              \sum_{i=1}^{K} I(\hat\pi_{ti} \in \pi_t)

    the share of the ``K`` labels predicted on top that the row ranks (e.g. categories the
    user clicked).  Rows with ``L_t = 0`` are left out.

    Parameters
    ----------
    Y_true : array-like of int, shape (n, L)
        Observed positions (0 = not ranked).
    Y_pred : array-like of int, shape (n, L)
        Predicted complete positions ``1 … L``.
    k : int
        Cut-off, ``1 … L``.

    Returns
    -------
    float

    Examples
    --------
    >>> precision_at_k([[1, 0, 0, 2]], [[1, 2, 3, 4]], k=2)
    0.5
    """
    Y_true, Y_pred = _check_pair(Y_true, Y_pred)
    k = _check_k(k, Y_true.shape[1])
    return float(_pr(Y_true, Y_pred, [k])[0][0])


def recall_at_k(Y_true, Y_pred, k: int) -> float:
    r"""Recall at the top ``k`` (Djuric et al. 2014, eq. 16).

    .. math::

        R@K = \frac{1}{N'} \sum_{t:\,L_t > 0} \frac{1}{L_t}
              \sum_{i=1}^{K} I(\hat\pi_{ti} \in \pi_t)

    the share of the row's ranked labels found among the ``K`` predicted on top.  Rows with
    ``L_t = 0`` are left out.

    Parameters
    ----------
    Y_true, Y_pred, k
        As in :func:`precision_at_k`.

    Returns
    -------
    float

    Examples
    --------
    >>> recall_at_k([[1, 0, 0, 2]], [[1, 2, 3, 4]], k=2)
    0.5
    """
    Y_true, Y_pred = _check_pair(Y_true, Y_pred)
    k = _check_k(k, Y_true.shape[1])
    return float(_pr(Y_true, Y_pred, [k])[1][0])


def f1_at_k(Y_true, Y_pred, k: int) -> float:
    r"""F1 at the top ``k`` from the averaged precision and recall (Djuric et al. 2014, eq. 16).

    .. math::

        F1@K = \frac{2 \cdot P@K \cdot R@K}{P@K + R@K}

    (the harmonic mean of the *averaged* P@K and R@K, not the mean of per-row F1).  When both
    are 0 it is undefined: ``UndefinedMetricWarning`` and ``nan``.

    Parameters
    ----------
    Y_true, Y_pred, k
        As in :func:`precision_at_k`.

    Returns
    -------
    float

    Examples
    --------
    Both rows hit at K = 1: P = 1, R = (1/2 + 1/3)/2 = 5/12, F1 = (10/12)/(17/12) = 10/17.

    >>> round(f1_at_k([[1, 0, 0, 2], [1, 2, 3, 0]], [[1, 2, 3, 4], [1, 2, 3, 4]], k=1), 4)
    0.5882
    """
    Y_true, Y_pred = _check_pair(Y_true, Y_pred)
    k = _check_k(k, Y_true.shape[1])
    precision, recall = _pr(Y_true, Y_pred, [k])
    return float(_f1(precision, recall, [k])[0])


def prf_curve(Y_true, Y_pred, ks: Iterable[int] | None = None) -> pd.DataFrame:
    """Precision, recall and F1 at every cut-off of ``ks`` (the paper's Figure 3).

    Parameters
    ----------
    Y_true, Y_pred
        As in :func:`precision_at_k`.
    ks : iterable of int, optional
        Cut-offs, each in ``1 … L``.  Default ``1 … min(10, L)`` (the paper's K = 1 … 10).

    Returns
    -------
    DataFrame
        Columns ``k``, ``precision``, ``recall``, ``f1``; one row per cut-off, in the order
        given.  Values equal :func:`precision_at_k`, :func:`recall_at_k`, :func:`f1_at_k`.

    Examples
    --------
    >>> prf_curve([[1, 0, 0, 2]], [[1, 2, 3, 4]], ks=[1, 4]).round(3).to_dict("list")
    {'k': [1, 4], 'precision': [1.0, 0.5], 'recall': [0.5, 1.0], 'f1': [0.667, 0.667]}
    """
    Y_true, Y_pred = _check_pair(Y_true, Y_pred)
    L = Y_true.shape[1]
    if ks is None:
        ks = range(1, min(10, L) + 1)
    try:
        ks = list(ks)
    except TypeError:
        raise ValueError(f"ks must be an iterable of integers in 1 … {L}; got {ks!r}.") from None
    if not ks:
        raise ValueError(f"ks must hold at least one cut-off in 1 … {L}; got none.")
    ks = [_check_k(k, L, "every k of ks") for k in ks]
    precision, recall = _pr(Y_true, Y_pred, ks)
    f1 = _f1(precision, recall, ks)
    return pd.DataFrame({"k": ks, "precision": precision, "recall": recall, "f1": f1})
