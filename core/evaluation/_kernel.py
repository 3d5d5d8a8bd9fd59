"""The one sort-and-accumulate kernel behind every uplift curve and AUUC (and the ranking
order of the one-query ranking metrics, e.g. PCG on the joint query; several queries are
ordered by ``np.lexsort`` in :mod:`core.evaluation._queries`).

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

With numba the same numbers come from compiled passes (:mod:`core.evaluation._compiled`):
a stable LSD radix sort of the scores' keys (:func:`rank_codes`, :func:`ranking_order`), a
joint definition's curve straight from the ranked codes (:func:`joint_values`), each arm's
sums at a separate curve's grid points (:func:`arm_sums_at`) and a bootstrap resample's
(:func:`counted_at`) — each one the numpy formulas operation for operation, so both
back-ends give the same bits (tests/test_curve_kernel.py).
"""

from __future__ import annotations

import numpy as np

TIES = ("average", "stable")

try:  # compiled loops; the numpy versions below give the same numbers without numba
    from core.evaluation import _compiled
except ImportError:  # pragma: no cover - numba is a listed dependency
    _compiled = None


def descending_key(score: np.ndarray) -> np.ndarray:
    """Unsigned keys of float32 (uint32) or float64 (uint64) scores that sort ascending where
    the scores sort descending and tie exactly where they tie (-0.0 and 0.0 included)."""
    u = np.uint32 if score.dtype == np.float32 else np.uint64
    bits = (score + score.dtype.type(0.0)).view(u)  # x + 0.0 turns -0.0 into 0.0
    top = u(1) << u(8 * score.dtype.itemsize - 1)
    return ~np.where(bits & top, ~bits, bits | top)


def rank_codes(score: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranking of float32 or float64 scores: ``(code_sorted, key_sorted)`` — the row codes in
    ranking order, tied rows in row order (the stable order, so valid for both tie
    policies), and the ascending :func:`descending_key` of the scores in that order (usable
    wherever ``neg_sorted`` is: they tie where the scores tie).  No argsort or gather: with
    numba an LSD radix sort (float32: one sort of ``key << 2 | code`` words; float64: the
    keys with the codes riding along), else NumPy's stable argsort of the keys."""
    if _compiled is not None:
        if score.dtype == np.float32:
            return _compiled.rank_codes32(score, code)
        return _compiled.radix_rank64(score, code)
    key = descending_key(score)
    order = np.argsort(key, kind="stable")
    return code[order], key[order]


def joint_cumulatives(code_sorted: np.ndarray, neg_sorted: np.ndarray,
                      ties: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Treated rows, treated responders and responders among the top k (k = 0…n) of a
    ranking whose rows are coded ``2·t + y``: :func:`cumulative` of each (the numpy path of
    the joint curves; the compiled one, :func:`joint_values`, builds none of them)."""
    runs = tie_runs(neg_sorted, ties)
    return (cumulative(code_sorted >= 2, runs), cumulative(code_sorted == 3, runs),
            cumulative((code_sorted & 1).astype(bool), runs))


def round_half_up(p_num: np.ndarray, size, denom: int) -> np.ndarray:
    """Row counts ``floor(p*size + 1/2)`` for ``p = p_num/denom``, in exact integer arithmetic
    (``size`` an int, or integer-valued floats such as weighted counts)."""
    return (2 * p_num * size + denom) // (2 * denom)


def tie_runs(sorted_score: np.ndarray, ties: str) -> TieRuns | None:
    """The :class:`TieRuns` of a ranking for ``ties="average"``, ``None`` for ``"stable"``."""
    return TieRuns(sorted_score) if ties == "average" else None


def ranking_order(score: np.ndarray, ties: str = "stable") -> tuple[np.ndarray, np.ndarray]:
    """Sort ``score`` descending: returns ``(order, neg_sorted)``.

    ``neg_sorted = -score[order]`` is ascending, ready for ``np.searchsorted``.  With
    ``ties="stable"`` tied rows keep their row order (stable argsort of ``-score``).  With
    ``ties="average"`` the order inside a tie is irrelevant — everything accumulated along it
    is interpolated across the run — but amounts summed inside a run in another order differ
    in the last bits, so the order is the stable one for both policies (``ties`` is kept
    for the callers' symmetry).  With numba, float scores without NaN are ranked by the
    stable radix sort :func:`core.evaluation._compiled.radix_rank64` of their float64 values
    (float32 cast first) carrying the row numbers (14M scores: float64 ≈ 0.7 s, float32
    ≈ 0.6 s, against ≈ 2.9 s for NumPy's stable argsort), else by NumPy's stable
    argsort — the same order.  ``order`` is int32 from the radix sort (n < 2^31; half the
    memory of int64 for the gathers), int64 otherwise: index with it, do not do arithmetic.
    """
    neg = -score
    if (_compiled is not None and score.dtype.kind == "f" and score.dtype.itemsize <= 8
            and score.shape[0] > 1 and not np.isnan(score).any()):
        index = np.int32 if score.shape[0] < 2**31 else np.int64
        order, _ = _compiled.radix_rank64(score.astype(np.float64, copy=False),
                                          np.arange(score.shape[0], dtype=index))
        return order, neg[order]
    order = np.argsort(neg, kind="stable")
    return order, neg[order]


def cumulative_at(cum: np.ndarray, neg_sorted: np.ndarray, k: np.ndarray, ties: str) -> np.ndarray:
    """Values of an accumulated column at a few counts ``k`` (e.g. the 101 points of a
    separate curve), with the tie policy applied only where it is needed.

    ``cum`` is the plain cumulative sum (length ``m + 1``) along a ranking whose negated
    sorted scores are ``neg_sorted`` (ascending, length ``m``).  For ``ties="average"`` a
    count inside a run of equal scores is interpolated between the run's ends, found by
    binary search: ``O(len(k) log m)``.
    """
    k = np.asarray(k, dtype=np.int64)
    if ties == "stable" or neg_sorted.shape[0] == 0:
        return cum[k]
    last = neg_sorted[np.maximum(k - 1, 0)]
    lo = np.searchsorted(neg_sorted, last, side="left")
    hi = np.searchsorted(neg_sorted, last, side="right")
    inside = (k > 0) & (hi > k)
    span = np.where(inside, hi - lo, 1)
    frac = np.where(inside, (k - lo) / span, 0.0)
    lo = np.where(inside, lo, k)
    hi = np.where(inside, hi, k)
    return cum[lo] + frac * (cum[hi] - cum[lo])


def merge_runs(neg: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of ``neg`` (ascending) and the rows of ``counts`` summed per value, in
    the stable order of ``neg`` (integer counts summed as int64, as ``np.add.reduceat`` does
    with them).  With numba the stable radix order of :func:`ranking_order` and one compiled
    pass (:func:`core.evaluation._compiled.merge_runs`): the same integer sums as numpy's;
    float sums (weights, amounts) agree to rounding (``reduceat`` adds in another order)."""
    order, neg_sorted = ranking_order(-neg, "stable")  # neg_sorted = -(-neg)[order] = neg[order]
    starts = np.flatnonzero(np.r_[True, neg_sorted[1:] != neg_sorted[:-1]])
    if _compiled is not None and _compiled_keys(neg) and neg.shape[0]:
        wide = np.int64 if np.issubdtype(counts.dtype, np.integer) else np.float64
        out = np.empty((starts.shape[0], counts.shape[1]), dtype=wide)
        _compiled.merge_runs(neg_sorted, np.ascontiguousarray(counts), order, out)
        return neg_sorted[starts], out
    return neg_sorted[starts], np.add.reduceat(counts[order], starts, axis=0)


def _compiled_keys(neg_sorted: np.ndarray) -> bool:
    """Whether the compiled passes take these sorted keys (the scores' float32 / float64
    values, their uint32 / uint64 radix keys, or int64); others (float16, longdouble, from a direct
    :meth:`~core.evaluation.curves.UpliftCurves.from_sorted`) take the numpy path."""
    return neg_sorted.dtype in (np.float64, np.float32, np.uint32, np.uint64, np.int64)


def arm_sums_at(code: np.ndarray, y_values: np.ndarray | None, neg_sorted: np.ndarray,
                ties: str, treated: bool, k: np.ndarray) -> np.ndarray | None:
    """:func:`cumulative_at` of one arm's :func:`cumulative` outcome (0/1 from ``code``, or
    ``y_values``) at its counts ``k`` (ascending), read in one compiled pass over the joint
    ranking without gathering the arm's rows (:func:`core.evaluation._compiled.arm_sums_at`):
    the same bits.  None without numba, or for sorted keys the compiled pass does not take
    (the caller then gathers them)."""
    if _compiled is None or not _compiled_keys(neg_sorted):
        return None
    return _compiled.arm_sums_at(
        np.ascontiguousarray(code),
        np.empty(0) if y_values is None else np.ascontiguousarray(y_values, dtype=np.float64),
        np.ascontiguousarray(neg_sorted), ties == "average", treated,
        np.asarray(k, dtype=np.int64))


def add_draws(w: np.ndarray, rows: np.ndarray, draws: np.ndarray) -> bool:
    """Count a resample's draws into one-byte row counts: ``w[rows[d]] += 1`` for every
    draw ``d`` (indices into ``rows``), as ``w[rows] += np.bincount(draws,
    minlength=len(rows))`` does.  ``w`` is uint8: a resample's counts are gathered into
    every ranker's order, and a byte per row stays in cache where eight do not (4.2M rows:
    10-15 vs 60 ms per gather).  Returns False when a count would pass 255 (the caller then
    counts in int64)."""
    if _compiled is not None:
        return _compiled.add_draws(w, rows, draws)
    counts = np.bincount(draws, minlength=rows.shape[0])
    if counts.size and counts.max() + w[rows].max() > 255:
        return False
    w[rows] += counts.astype(np.uint8)
    return True


def code_totals(code: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """Copies of each row code 0..3 (CNR, CR, TNR, TR) when row ``i`` appears ``counts[i]``
    times (None: once): ``np.bincount(code, weights=counts)`` as integers (one compiled pass
    with numba)."""
    if _compiled is not None:
        return _compiled.code_totals(code, np.empty(0, np.int64) if counts is None else counts)
    return np.bincount(code, weights=counts, minlength=4).astype(np.int64)


def counted_at(counts: np.ndarray, rows: np.ndarray, values: np.ndarray,
               run_ends: np.ndarray | None, k: np.ndarray) -> np.ndarray:
    """:func:`cumulative_at` of the ranking in which ranked row ``rows[i]`` (one arm's rows,
    in rank order) appears ``counts[rows[i]]`` times — a bootstrap resample — without
    building that ranking: ``O(m)`` for ``m`` rows instead of ``O(Σ counts)`` plus the
    repeated arrays.

    ``values[i]`` is row ``rows[i]``'s outcome; ``run_ends`` the :func:`tie_run_ends` of the
    rows' scores for ``ties="average"``, None for ``"stable"``; ``k`` ascending counts.
    With ``E`` and ``C`` the cumulative counts and sums of ``counts·values`` at the ends of
    the runs (every row its own run for ``"stable"``), the ``k``-th repeated row lies in
    the run ``r`` with ``E[r−1] < k ≤ E[r]`` (zero-count rows take no place).
    ``"stable"``: copies of a row are in a row, each adding ``values[i]``, so the sum is
    ``C[r−1] + (k − E[r−1])·values[i]``.  ``"average"``: ``C[r]`` at the run's end, inside it
    the straight line ``C[r−1] + (k − E[r−1])/(E[r] − E[r−1])·(C[r] − C[r−1])`` — the
    repeated ranking's :func:`cumulative_at`, operation for operation (the same bits for
    0/1 outcomes; amounts are summed in another order).  One compiled pass with numba.
    """
    k = np.asarray(k, dtype=np.int64)
    if _compiled is not None:
        return _compiled.counted_at(counts, rows, values,
                                    np.empty(0, np.int64) if run_ends is None else run_ends, k)
    if rows.shape[0] == 0:  # an arm without rows: nothing is ever counted
        return np.zeros(k.shape[0], dtype=np.float64)
    w = counts[rows]
    ends = np.empty(w.shape[0] + 1, dtype=np.float64)
    ends[0] = 0.0
    np.cumsum(w, dtype=np.float64, out=ends[1:])
    cum = np.empty(w.shape[0] + 1, dtype=np.float64)
    cum[0] = 0.0
    np.cumsum(values * w, dtype=np.float64, out=cum[1:])
    r_ = np.searchsorted(ends if run_ends is None else ends[run_ends], k, side="left")
    if run_ends is None:  # stable; r_ is 0 only for k = 0
        before = np.maximum(r_ - 1, 0)
        return np.where(r_ > 0, cum[before] + (k - ends[before]) * values[before], 0.0)
    ends, cum = ends[run_ends], cum[run_ends]
    before = np.maximum(r_ - 1, 0)
    at_end = ends[r_] == k
    span = np.where(at_end, 1.0, ends[r_] - ends[before])
    frac = (k - ends[before]) / span
    return np.where(at_end, cum[r_], cum[before] + frac * (cum[r_] - cum[before]))


def joint_values(code: np.ndarray, counts: np.ndarray | None, y_values: np.ndarray | None,
                 neg_sorted: np.ndarray, ties: str, kind: int, n_t: float, n_c: float,
                 out: np.ndarray, at: np.ndarray | None = None) -> bool:
    """``out[k] = V(k)`` (``k = 0 … len(out) − 1``) of a joint definition (``kind`` 0
    ``uplift_joint_rel``, 1 ``qini_joint_abs``, 2 ``uplift_joint_abs``) along a ranking
    (``code[i] = 2·t + y`` in rank order, ``neg_sorted`` its negated scores) in which row
    ``i`` appears ``counts[i]`` times (None: once; a bootstrap resample, never built), in one
    compiled pass (:func:`core.evaluation._compiled.joint_values`): the same bits as the
    numpy formulas on :func:`joint_cumulatives` / :func:`cumulative` of the (repeated) rows,
    without their five arrays.  ``y_values``: the rows' amounts (None: 0/1 outcomes).
    ``at`` (non-decreasing positions ``0 … Σ counts``): only ``out[j] = V(at[j])``, the same
    bits as the full curve there, ``len(out) == len(at)``.
    Returns False (``out`` untouched) without numba, or with ``ties="average"`` for sorted
    keys the compiled pass does not take: the caller then takes the numpy path.
    """
    if _compiled is None or (ties == "average" and not _compiled_keys(neg_sorted)):
        return False
    args = (np.ascontiguousarray(code),
            np.empty(0, np.int64) if counts is None else np.ascontiguousarray(counts),
            np.empty(0) if y_values is None else np.ascontiguousarray(y_values, dtype=np.float64),
            np.ascontiguousarray(neg_sorted) if ties == "average" else np.empty(0),
            kind, float(n_t), float(n_c))
    if at is None:
        _compiled.joint_values(*args, out)
    else:
        _compiled.joint_values_at(*args, np.ascontiguousarray(at, dtype=np.int64), out)
    return True


def tie_run_ends(sorted_score: np.ndarray) -> np.ndarray:
    """Cumulative positions ``0 = e_0 < e_1 < ... < e_r = n`` where tie runs end."""
    n = sorted_score.shape[0]
    change = np.flatnonzero(sorted_score[1:] != sorted_score[:-1]) + 1
    return np.concatenate(([0], change, [n]))


class TieRuns:
    """Where a ranking's runs of tied scores end: cumulative counts ``0 = e_0 < ... < e_r = n``.

    Built once per ranking and reused for every accumulated column: inside a run the
    expected cumulative sum is the straight line between its values at the run's ends.
    """

    __slots__ = ("ends", "positions", "any")

    def __init__(self, sorted_score: np.ndarray):
        ends = tie_run_ends(sorted_score)
        self.any = ends.shape[0] < sorted_score.shape[0] + 1  # some run has 2+ rows
        self.ends = ends
        self.positions = ends.astype(np.float64)


def cumulative(sorted_values: np.ndarray, runs: TieRuns | None) -> np.ndarray:
    """Cumulative sums of ``sorted_values`` along a ranking, with a tie policy.

    Parameters
    ----------
    sorted_values : ndarray of shape (n,)
        Values already in ranking order.
    runs : TieRuns or None
        ``None`` for ``ties="stable"`` (plain cumulative sums); otherwise the ranking's tie
        runs, inside which the sums are interpolated linearly (``ties="average"``).

    Returns
    -------
    ndarray of shape (n + 1,), float64
        ``out[k]`` is the (expected) sum over the top ``k`` rows; ``out[0] = 0``.
    """
    n = sorted_values.shape[0]
    out = np.empty(n + 1, dtype=np.float64)
    out[0] = 0.0
    np.cumsum(sorted_values, dtype=np.float64, out=out[1:])
    if runs is not None and runs.any:
        # linear interpolation between the run ends (np.interp: one pass, no index arrays)
        return np.interp(np.arange(n + 1, dtype=np.float64), runs.positions, out[runs.ends])
    return out
