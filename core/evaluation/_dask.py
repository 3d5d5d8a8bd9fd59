r"""Uplift curves of data that live in Dask collections: pieces per partition, merged.

With ``ties="average"`` (the default) every curve, AUUC and table is a function of the
counts of the four kinds of rows (treated / control × responder / not; for an amount, the
row counts and outcome sums per arm) in each run of tied scores: inside a run the kernel
interpolates between the run's ends (:mod:`core.evaluation._kernel`), so the order of the
rows inside a run never matters.  Those counts merge exactly across partitions:

**exact** (:func:`tie_run_counts`)
    each partition sorts its own scores and counts its rows per distinct score; the client
    merges the sorted pieces (one stable sort of the concatenated pieces) and
    adds the counts of equal scores.  The kernel then runs on rows rebuilt from the counts
    in ranking order, so a 0/1 outcome gives **bit-for-bit** the in-memory result; an amount
    agrees to rounding (its sums are added in another order).  The client holds one entry
    per distinct score — as many as rows for a continuous score, which is what the curve
    itself needs (a joint curve has ``n + 1`` points).

**binned** (:func:`binned_counts`)
    scores are cut at fixed edges (default: quantiles from :func:`dask.array.percentile`)
    and each partition counts its rows per bin: the pieces are tiny and add up exactly, and
    every bin is treated as one run of ties.  At bin ends the counts are exact; inside a bin
    the curve follows the chord.  For a count that rises by ``c`` over a bin of ``m`` rows
    with slope in [0, 1], the chord is off by at most :math:`c(m-c)/m \le \min(c, m/4)`, so

    .. math::
        |\Delta V(p)| \le \max_b \frac{c^{T}_b(m^{T}_b-c^{T}_b)}{m^{T}_b N_T}
                      + \max_b \frac{c^{C}_b(m^{C}_b-c^{C}_b)}{m^{C}_b N_C}

    for ``uplift_sep_rel`` (bins of each arm's rows, ``c`` = its responders) and the same
    with the bins' joint rows for ``uplift_joint_rel``; an AUUC, a mean of ``V`` over the
    grid, obeys the same bound (:func:`binned_error_bound`).  A bin whose rows all share one
    score is a run of ties of the exact curve as well, so it adds no error.

**bootstrap by partition** (:func:`binned_bootstrap`)
    a Poisson bootstrap: each partition weights its rows with its own Poisson(1) draws and
    returns weighted bin counts per replicate; the client adds them and evaluates every
    replicate's curve on the bins.

``ties="stable"`` depends on the order of the rows in the file, which only the whole
column has: those calls compute the columns into memory and run the in-memory kernel.

Everything runs on the current Dask client (``dask.compute`` uses the default scheduler,
which is the distributed client once one is created).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core._validation import check_cutoffs, check_uplift_inputs
from core.constants import CUTOFFS, auuc_column
from core.evaluation._kernel import merge_runs, round_half_up

__all__ = ["binned_bootstrap", "binned_counts", "binned_error_bound", "is_dask",
           "separate_relative_curve", "tie_run_counts"]


def is_dask(*arrays: Any) -> bool:
    """True when any argument is a Dask collection (array, Series, DataFrame)."""
    return any(type(a).__module__.startswith("dask.") for a in arrays)


def _blocks(y: Any, t: Any, score: Any) -> list[tuple]:
    """Aligned blocks of the three columns as tuples of delayed objects.

    Three Dask Series with the same partitions (columns of one dataframe) give their
    partitions; otherwise everything becomes a Dask array (numpy input as one chunk, a Series
    with its chunk sizes computed) and ``y``, ``t`` are rechunked to the score's chunks.
    """
    import dask.array as da

    columns = (y, t, score)
    if all(hasattr(a, "npartitions") for a in columns) and len(
            {a.npartitions for a in columns}) == 1:
        lengths = {len(a) for a in columns}
        if len(lengths) != 1:
            raise ValueError(f"y, t and score must have the same length; got {sorted(lengths)}.")
        return list(zip(*(a.to_delayed() for a in columns), strict=True))

    def as_array(a):
        if hasattr(a, "to_dask_array"):
            return a.to_dask_array().compute_chunk_sizes()
        return a if isinstance(a, da.Array) else da.from_array(np.asarray(a), chunks=-1)

    y, t, score = (as_array(a) for a in columns)
    for name, a in (("y", y), ("t", t), ("score", score)):
        if a.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {a.shape}.")
    if not (y.shape[0] == t.shape[0] == score.shape[0]):
        raise ValueError(f"y, t and score must have the same length; got {y.shape[0]}, "
                         f"{t.shape[0]} and {score.shape[0]}.")
    y, t = y.rechunk(score.chunks), t.rechunk(score.chunks)
    return list(zip(y.to_delayed(), t.to_delayed(), score.to_delayed(), strict=True))


def _code_counts(group: np.ndarray, y: np.ndarray, t: np.ndarray, n_groups: int,
                 weights: np.ndarray | None = None) -> np.ndarray:
    """Counts of a partition's rows per group (a distinct score, or a score bin): columns
    ``[TR, TNR, CR, CNR]`` for a 0/1 outcome (int32, or weighted float), or
    ``[n_T, n_C, Σy_T, Σy_C]`` (float) for an amount — integer counts mean 0/1 — the
    layout :func:`curves_from_counts <core.evaluation.curves.curves_from_counts>` reads."""
    if y.dtype == np.int8:
        index = group * 4 + (3 - (t << 1 | y).astype(np.int64))
        counts = np.bincount(index, weights=weights, minlength=4 * n_groups)
        counts = counts.reshape(n_groups, 4)
        return counts.astype(np.int32) if weights is None else counts
    tf = t.astype(np.float64)
    return np.column_stack([np.bincount(group, weights=w, minlength=n_groups)
                            for w in (tf, 1 - tf, y * tf, y * (1 - tf))])


def _piece(y: np.ndarray, t: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One partition: its distinct negated scores (ascending) and the rows' counts per
    score (:func:`_code_counts`)."""
    y, t, score = check_uplift_inputs(y, t, score, keep_float32=True)
    neg, inverse = np.unique(-(score + score.dtype.type(0.0)), return_inverse=True)
    return neg, _code_counts(inverse, y, t, neg.shape[0])


def _merge(pieces: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Merge sorted pieces: the concatenated runs in one stable (radix) order, the counts of
    equal scores added (:func:`~core.evaluation._kernel.merge_runs`)."""
    return merge_runs(np.concatenate([p[0] for p in pieces]),
                      np.concatenate([p[1] for p in pieces]))


def tie_run_counts(y: Any, t: Any, score: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """Distinct negated scores (ascending = ranking order) and the counts per score over all
    partitions, computed on the current Dask client; ``binary`` says which counts."""
    import dask

    parts = [dask.delayed(_piece)(*block) for block in _blocks(y, t, score)]
    pieces = dask.compute(*parts)
    neg, counts = _merge(list(pieces))
    return neg, counts, bool(np.issubdtype(counts.dtype, np.integer))


def _edges(score: Any, bins: int, edges: Any = None) -> np.ndarray:
    """Ascending bin edges: ``edges`` as given, else ``bins`` quantiles of the score
    (:func:`dask.array.percentile`).  A score that fills more than one quantile step is a
    heavy tie: it gets a bin of its own, (nextafter(v, -inf), v], which is exact (see
    :func:`binned_error_bound`)."""
    import dask.array as da

    if edges is None:
        arr = score.to_dask_array() if hasattr(score, "to_dask_array") else score
        arr = arr if isinstance(arr, da.Array) else da.from_array(np.asarray(arr), chunks=-1)
        edges = da.percentile(arr.astype(np.float64), np.linspace(0, 100, bins + 1)).compute()
    values, repeats = np.unique(np.asarray(edges, dtype=np.float64), return_counts=True)
    return np.unique(np.r_[values, np.nextafter(values[repeats > 1], -np.inf)])


def binned_counts(y: Any, t: Any, score: Any, *, bins: int = 10_000,
                  edges: Any = None) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray]:
    """Counts per score bin (highest bin first), summed over the partitions on the current
    Dask client.  ``edges`` (ascending) default to ``bins`` quantiles of the score from
    :func:`dask.array.percentile`; bins are ``(edge_{i-1}, edge_i]``.  Returned as
    ``(bin index, counts, binary, tied)`` (bin index 0 = the highest scores, as floats in
    ranking order) in the layout of :func:`tie_run_counts`, where
    ``tied`` marks the bins whose rows all have one score (their curve is exact: a run of
    ties is interpolated in the exact curve too)."""
    import dask

    blocks = _blocks(y, t, score)
    edges = _edges(score, bins, edges)
    n_bins = edges.shape[0] + 1

    def piece(yb, tb, sb):
        yb, tb, sb = check_uplift_inputs(yb, tb, sb, keep_float32=True)
        b = n_bins - 1 - np.searchsorted(edges, sb, side="left")  # highest scores: bin 0
        ref = np.full(n_bins, np.nan)
        ref[b] = sb  # one score of each bin (the last written)
        mixed = np.bincount(b[sb != ref[b]], minlength=n_bins) > 0
        return _code_counts(b, yb, tb, n_bins), ref, mixed

    pieces = dask.compute(*[dask.delayed(piece)(*block) for block in blocks])
    counts = np.sum([p[0] for p in pieces], axis=0, dtype=pieces[0][0].dtype)
    refs = np.array([p[1] for p in pieces])
    # tied: no partition saw two scores in the bin, and all partitions saw the same one
    tied = ~np.any([p[2] for p in pieces], axis=0) & (
        np.nanmax(np.where(np.isnan(refs), -np.inf, refs), axis=0)
        == np.nanmin(np.where(np.isnan(refs), np.inf, refs), axis=0))
    keep = counts.sum(axis=1) > 0  # empty bins are no runs
    neg = np.arange(n_bins, dtype=np.float64)
    return neg[keep], counts[keep], bool(np.issubdtype(counts.dtype, np.integer)), tied[keep]


def binned_error_bound(counts: np.ndarray, binary: bool = True,
                       tied: np.ndarray | None = None) -> dict[str, float]:
    r"""Upper bound on the error of the binned ``uplift_sep_rel`` and ``uplift_joint_rel``
    curves (and so of their AUUC at any cut-off) against the exact ones, from the bin counts
    (module docstring): :math:`\max_b c_b(m_b-c_b)/(m_b N)` per arm, added.  Bins marked in
    ``tied`` (one score) contribute nothing: the exact curve interpolates them too."""
    if not binary:
        raise ValueError("The stated bound is for a 0/1 outcome.")
    tr, tnr, cr, cnr = (counts[:, j].astype(np.float64) for j in range(4))
    n_t, n_c = tr.sum() + tnr.sum(), cr.sum() + cnr.sum()
    exact = np.zeros(len(counts), bool) if tied is None else np.asarray(tied, bool)

    def worst(c, m, total):
        with np.errstate(invalid="ignore", divide="ignore"):
            dev = np.where((m > 0) & ~exact, c * (m - c) / m, 0.0)
        return float(dev.max() / total)

    m_t, m_c, m_joint = tr + tnr, cr + cnr, counts.sum(axis=1)
    return {"uplift_sep_rel": worst(tr, m_t, n_t) + worst(cr, m_c, n_c),
            "uplift_joint_rel": worst(tr, m_joint, n_t) + worst(cr, m_joint, n_c)}


def separate_relative_curve(counts: np.ndarray, points: int = 100) -> np.ndarray:
    """``uplift_sep_rel`` at ``p = 0, 1/points, …, 1`` from counts per bin (rows in ranking
    order; columns TR, TNR, CR, CNR, any leading axes for replicates): each arm's responders
    interpolated linearly inside a bin, at ``k = ⌊p·N + ½⌋`` rows of the arm — the kernel's
    rule, with bins as runs of ties.  ``O(bins)`` per curve."""
    counts = np.asarray(counts, dtype=np.float64)
    j = np.arange(points + 1)
    out = []
    for resp, other in ((0, 1), (2, 3)):
        r = counts[..., resp]
        m = r + counts[..., other]
        ends = np.concatenate([np.zeros(m.shape[:-1] + (1,)), np.cumsum(m, axis=-1)], axis=-1)
        cum = np.concatenate([np.zeros(r.shape[:-1] + (1,)), np.cumsum(r, axis=-1)], axis=-1)
        size = ends[..., -1:]
        k = round_half_up(j, size, points)  # the kernel's k = ⌊p·N + ½⌋
        flat_e, flat_c, flat_k = (a.reshape(-1, a.shape[-1]) for a in (ends, cum, k))
        val = np.array([np.interp(kk, ee, cc) for kk, ee, cc in zip(flat_k, flat_e, flat_c,
                                                                       strict=True)])
        out.append(val.reshape(k.shape) / size)
    return out[0] - out[1]


def binned_bootstrap(y: Any, t: Any, score: Any, *, bins: int = 1_000, n_boot: int = 100,
                     cutoffs: tuple = CUTOFFS, random_state: int = 0,
                     points: int = 100) -> dict:
    """Bootstrap of the ``uplift_sep_rel`` curve and its AUUC, computed by partition.

    A Poisson bootstrap (every row weighted by an independent Poisson(1) count, the
    standard mergeable form of the bootstrap for partitioned data; Oza & Russell 2001,
    Chamandy et al. 2012): each partition draws its own weights from its own child of
    ``SeedSequence(random_state)`` and returns, per replicate, its weighted counts per score
    bin; the client adds them and evaluates each replicate's curve on the bins
    (:func:`separate_relative_curve`), so no row leaves its worker.  0/1 outcome only.

    Returns
    -------
    dict
        ``"auuc"``: DataFrame, one row per replicate, one column per cut-off
        (``"AUUC@30%"`` …); ``"curve"``: DataFrame with ``x``, ``low``, ``mid``, ``high``
        (2.5 %, 50 %, 97.5 % quantiles over replicates); ``"point"``: the unweighted binned
        AUUC per cut-off.
    """
    import dask
    import pandas as pd

    cutoffs = check_cutoffs(cutoffs)
    blocks = _blocks(y, t, score)
    edges = _edges(score, bins)
    n_bins = edges.shape[0] + 1
    seeds = np.random.SeedSequence(random_state).spawn(len(blocks))

    def piece(yb, tb, sb, seed):
        yb, tb, sb = check_uplift_inputs(yb, tb, sb, keep_float32=True)
        if yb.dtype != np.int8:
            raise ValueError("binned_bootstrap needs a 0/1 outcome.")
        b = n_bins - 1 - np.searchsorted(edges, sb, side="left")
        rng = np.random.default_rng(seed)
        out = np.empty((n_boot + 1, n_bins, 4))
        out[0] = _code_counts(b, yb, tb, n_bins)
        for r in range(1, n_boot + 1):
            out[r] = _code_counts(b, yb, tb, n_bins, weights=rng.poisson(1.0, b.shape[0]))
        return out

    parts = dask.compute(*[dask.delayed(piece)(*block, seed)
                           for block, seed in zip(blocks, seeds, strict=True)])
    counts = np.sum(parts, axis=0)
    curves = separate_relative_curve(counts, points)  # (n_boot + 1, points + 1)
    curves100 = curves if points == 100 else separate_relative_curve(counts, 100)
    columns = {auuc_column(c): curves100[:, 1:int(np.floor(c * 100 + 1e-9)) + 1].sum(axis=1)
               / 100 for c in cutoffs}
    table = pd.DataFrame(columns)
    low, mid, high = np.quantile(curves[1:], [0.025, 0.5, 0.975], axis=0)
    return {"auuc": table.iloc[1:].reset_index(drop=True), "point": table.iloc[0],
            "curve": pd.DataFrame({"x": np.arange(points + 1) / points, "low": low,
                                   "mid": mid, "high": high})}
