"""The one sort-and-accumulate kernel behind every uplift curve, AUUC and PCG.

Private: callers validate their input first (``core._validation``).

A ranking sorts rows by score, descending.  Everything UpRank reports about a ranking is a
function of *cumulative sums along that order* (treated rows in the top k, responders in the
top k, gains in the top k, ...).  :func:`ranking_order` sorts once; :func:`cumulative`
accumulates any number of value columns along it, with an explicit tie policy:

``"stable"``
    Rows with equal scores keep their row order (``np.argsort(kind="stable")``).
    Deterministic, but the result depends on how the file happens to be sorted.
``"average"``
    Inside a run of tied scores the cumulative sums are interpolated linearly between the
    run's ends.  Every order of the tied rows is equally likely, so the *expected* number of
    any kind of row among the first j of a run of m rows holding c of them is j·c/m
    (hypergeometric mean): the interpolation is that expectation, exact for every quantity
    linear in the counts.  At run boundaries the sums do not depend on the order at all.
"""

from __future__ import annotations

import numpy as np

TIES = ("average", "stable")


def ranking_order(score: np.ndarray) -> np.ndarray:
    """Indices that sort ``score`` descending, ties in row order (stable)."""
    # argsort of the negated score with a stable sort keeps row order inside ties.
    return np.argsort(-score, kind="stable")


def tie_run_ends(sorted_score: np.ndarray) -> np.ndarray:
    """Cumulative positions ``0 = e_0 < e_1 < ... < e_r = n`` where tie runs end."""
    n = sorted_score.shape[0]
    change = np.flatnonzero(sorted_score[1:] != sorted_score[:-1]) + 1
    return np.concatenate(([0], change, [n]))


def cumulative(
    sorted_values: np.ndarray,
    sorted_score: np.ndarray | None,
    *,
    ties: str,
) -> np.ndarray:
    """Cumulative sums of ``sorted_values`` along a ranking, with a tie policy.

    Parameters
    ----------
    sorted_values : ndarray of shape (n,) or (n, m)
        Values already in ranking order.
    sorted_score : ndarray of shape (n,) or None
        The scores in the same order (needed for ``ties="average"``; ignored otherwise).
    ties : {"stable", "average"}

    Returns
    -------
    ndarray of shape (n + 1,) or (n + 1, m), float64
        ``out[k]`` is the (expected) sum over the top ``k`` rows; ``out[0] = 0``.
    """
    vals = np.asarray(sorted_values)
    n = vals.shape[0]
    out = np.zeros((n + 1,) + vals.shape[1:], dtype=np.float64)
    np.cumsum(vals, axis=0, out=out[1:])
    if ties == "stable" or n == 0:
        return out
    ends = tie_run_ends(sorted_score)
    if ends.shape[0] == n + 1:  # no ties at all
        return out
    k = np.arange(n + 1)
    hi_idx = np.searchsorted(ends, k, side="left")  # first run end >= k
    hi = ends[hi_idx]
    lo = ends[np.maximum(hi_idx - 1, 0)]
    lo = np.where(hi == k, k, lo)  # on a boundary: exact
    span = hi - lo
    frac = np.divide(k - lo, span, out=np.zeros(n + 1), where=span > 0)
    if out.ndim == 2:
        frac = frac[:, None]
    return out[lo] + frac * (out[hi] - out[lo])
