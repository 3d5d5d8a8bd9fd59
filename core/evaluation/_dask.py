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

Blocks are a column's partitions (Series) or chunks (arrays).  The columns' blocks must hold
the same rows: columns of one frame (and a score predicted from it) are paired block by
block and each block checks its three lengths; otherwise, or when a block finds unequal
lengths, the blocks' lengths are computed and ``y`` and ``t`` rechunked to the score's
(:func:`_blocks`).  Empty blocks add nothing.  Each block runs the in-memory checks
(:func:`~core._validation.check_uplift_inputs`); a refused value raises the in-memory
message for the whole column (a second pass collects the column's offending values).
Whether the outcome is 0/1 is decided for the whole column: every block returns the
counts of its own kind, and when any block holds an amount, the blocks whose values
happen to be 0/1 are turned into the amount layout before the merge (exactly: their sums
are their responder counts).

Everything runs on the current Dask client; without one, ``dask.compute`` uses dask's
default scheduler (threads of this process), which gives the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core._validation import (
    as_generator,
    check_binary,
    check_cutoffs,
    check_outcome,
    check_positive_int,
    check_scores,
    check_uplift_inputs,
    distinct_and_nonfinite,
)
from core.constants import CUTOFFS, auuc_column
from core.evaluation._kernel import merge_runs, round_half_up

__all__ = ["binned_bootstrap", "binned_counts", "binned_error_bound", "is_dask",
           "separate_relative_curve", "tie_run_counts"]


def is_dask(*arrays: Any) -> bool:
    """True when any argument is a Dask collection (array, Series, DataFrame)."""
    return any(type(a).__module__.startswith("dask.") for a in arrays)


def _check_column(a: Any, name: str) -> Any:
    """``a`` as a one-dimensional column: a Dask array as it is, a Dask Series optimised,
    anything else as a numpy array; a Dask DataFrame or an array of another rank is refused.

    A Series is optimised here, once, so that its partition count is the one its blocks
    will have: dask's optimiser fuses the partitions of a Parquet read of a few of a file's
    columns (20 row groups into 4), and an unoptimised Series reports the 20 while its
    ``to_dask_array(lengths=True)`` computes 4 lengths and refuses them (dask 2026.8).
    """
    import dask.dataframe as dd

    if isinstance(a, dd.DataFrame):
        raise ValueError(f"{name} must be one-dimensional (a Dask array or Series); got a Dask "
                         f"DataFrame with columns {list(a.columns)}.")
    if isinstance(a, dd.Series):
        return a.optimize()
    if not is_dask(a):
        a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {a.shape}.")
    return a


def _chunk_lengths(a: Any) -> tuple | None:
    """The lengths of a column's blocks when they are known without computing anything (a
    numpy array: one block; a Dask array with known chunks), else ``None``."""
    if isinstance(a, np.ndarray):
        return (a.shape[0],)
    chunks = getattr(a, "chunks", None)
    if chunks is None or any(np.isnan(c) for c in chunks[0]):
        return None
    return tuple(int(c) for c in chunks[0])


def _blocks(y: Any, t: Any, score: Any, *, align: bool = False) -> tuple[list[tuple], bool]:
    """Blocks of the three columns as tuples of delayed objects, and whether they are known to
    hold the same rows (else each block must check that its three pieces have one length).

    Columns whose block lengths are known (numpy arrays, Dask arrays with known chunks) are
    zipped when the lengths agree and rechunked to the score's blocks otherwise.  Columns with
    unknown block lengths (Dask Series, arrays from a filter or a ``map_partitions``) and one
    number of blocks are zipped as they are, unchecked: the columns of one frame, or a score
    predicted from it, then cost nothing more.  With ``align`` (after a block found unequal
    lengths, or with other numbers of blocks) the lengths are computed and ``y``, ``t`` are
    rechunked to the score's blocks (the first Dask column's, for a numpy score).
    """
    import dask.array as da

    columns = [_check_column(a, name) for a, name in ((y, "y"), (t, "t"), (score, "score"))]
    lengths = [_chunk_lengths(a) for a in columns]
    if all(c is not None for c in lengths):
        totals = [sum(c) for c in lengths]
        if len(set(totals)) != 1:
            raise ValueError(f"y, t and score must have the same length; got {totals[0]}, "
                             f"{totals[1]} and {totals[2]}.")
        if len(set(lengths)) == 1:
            return list(zip(*(_delayed_blocks(a) for a in columns), strict=True)), True
    elif not align and all(is_dask(a) for a in columns) and len(
            {_n_blocks(a) for a in columns}) == 1:
        return list(zip(*(_delayed_blocks(a) for a in columns), strict=True)), False

    def as_array(a):
        if isinstance(a, np.ndarray):
            return a
        if hasattr(a, "to_dask_array"):
            return a.to_dask_array(lengths=True)
        return a.compute_chunk_sizes() if _chunk_lengths(a) is None else a

    arrays = [as_array(a) for a in columns]
    totals = [a.shape[0] for a in arrays]
    if len(set(totals)) != 1:
        raise ValueError(f"y, t and score must have the same length; got {totals[0]}, "
                         f"{totals[1]} and {totals[2]}.")
    target = next(a.chunks for a in (arrays[2], arrays[0], arrays[1])
                  if isinstance(a, da.Array))
    arrays = [da.from_array(a, chunks=target) if isinstance(a, np.ndarray)
              else a.rechunk(target) for a in arrays]
    return list(zip(*(a.to_delayed() for a in arrays), strict=True)), True


def _n_blocks(a: Any) -> int:
    return a.npartitions if hasattr(a, "npartitions") else a.numblocks[0]


def _delayed_blocks(a: Any) -> list:
    """A column's blocks as delayed objects (a numpy array: itself, one block)."""
    if isinstance(a, np.ndarray):
        return [a]
    return list(a.to_delayed())


class _Invalid:
    """What a block whose values fail the in-memory checks returns: the names of the columns
    that fail (the client then words the error for the whole column)."""

    def __init__(self, names: list[str], message: str):
        self.names, self.message = names, message


#: What a block returns when its three pieces have different lengths (the columns' blocks
#: hold different rows: they are rechunked and the work redone).
_MISALIGNED = "misaligned"

#: The checks of :func:`~core._validation.check_uplift_inputs`, column by column, in its order.
_CHECKS = {"y": lambda a: check_outcome(a, "y"), "t": lambda a: check_binary(a, "t"),
           "score": lambda a: check_scores(a, "score", keep_float32=True)}


def _run_block(fn: Any, checked: bool, yb: Any, tb: Any, sb: Any, *extra: Any) -> Any:
    """``fn`` of one block's validated columns; ``None`` for an empty block (it adds no
    rows), :data:`_MISALIGNED` for pieces of unequal lengths (``checked`` false), an
    :class:`_Invalid` for values the in-memory path refuses."""
    if not checked and not len(yb) == len(tb) == len(sb):
        return _MISALIGNED
    if len(sb) == 0:
        return None
    try:
        y, t, score = check_uplift_inputs(yb, tb, sb, keep_float32=True)
    except ValueError as error:
        failing = []
        for name, values in (("y", yb), ("t", tb), ("score", sb)):
            try:
                _CHECKS[name](values)
            except ValueError:
                failing.append(name)
        return _Invalid(failing, str(error))
    return fn(y, t, score, *extra)


def _raise_invalid(invalid: list[_Invalid], blocks: list[tuple]) -> None:
    """Raise the in-memory message of the first failing column (in the order ``y``, ``t``,
    ``score``) for the whole column: a second pass collects each block's distinct and
    non-finite values (:func:`~core._validation.distinct_and_nonfinite`) and the column check
    runs on them, so counts and value lists are the column's, not one block's."""
    import dask

    failing = {name for record in invalid for name in record.names}
    for j, name in enumerate(("y", "t", "score")):
        if name in failing:
            parts = dask.compute(*[dask.delayed(distinct_and_nonfinite)(block[j])
                                   for block in blocks])
            _CHECKS[name](np.concatenate([p for p in parts if p.size]))
    raise ValueError(invalid[0].message)


def _map_blocks(fn: Any, y: Any, t: Any, score: Any, extra: Any = None) -> list:
    """``fn(y, t, score, *extra(n_blocks)[i])`` on every non-empty block of validated
    columns, computed on the current Dask client (dask's default scheduler when there is
    none); the results of the non-empty blocks, in block order.  Values the in-memory path
    refuses raise its message, worded for the whole column (:func:`_raise_invalid`); no row
    at all raises the in-memory "at least one row"."""
    import dask

    for align in (False, True):
        blocks, checked = _blocks(y, t, score, align=align)
        extras = extra(len(blocks)) if extra is not None else [()] * len(blocks)
        out = dask.compute(*[dask.delayed(_run_block)(fn, checked, *block, *more)
                             for block, more in zip(blocks, extras, strict=True)])
        if not any(isinstance(o, str) and o == _MISALIGNED for o in out):
            break
    invalid = [o for o in out if isinstance(o, _Invalid)]
    if invalid:
        _raise_invalid(invalid, blocks)
    out = [o for o in out if o is not None]
    if not out:  # no rows at all: the in-memory message
        check_uplift_inputs(np.zeros(0, np.int8), np.zeros(0, np.int8), np.zeros(0))
    return out


def _as_amount(counts: np.ndarray) -> np.ndarray:
    """0/1 counts ``[TR, TNR, CR, CNR]`` in the amount layout ``[n_T, n_C, Σy_T, Σy_C]``
    (float64): a block whose amounts happen to be all 0/1 within an amount column."""
    c = counts.astype(np.float64)
    return np.stack([c[..., 0] + c[..., 1], c[..., 2] + c[..., 3], c[..., 0], c[..., 2]],
                    axis=-1)


def _one_layout(counts: list[np.ndarray]) -> tuple[list[np.ndarray], bool]:
    """The blocks' counts in one layout, and whether it is the 0/1 one: the outcome is 0/1
    when every block's is (integer counts); else the 0/1 blocks' counts are turned into
    the amount layout (:func:`_as_amount`), as the whole column is an amount."""
    binary = all(np.issubdtype(c.dtype, np.integer) for c in counts)
    if binary:
        return counts, True
    return [c if np.issubdtype(c.dtype, np.floating) else _as_amount(c) for c in counts], False


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
    """One block (validated): its distinct negated scores (ascending) and the rows' counts
    per score (:func:`_code_counts`)."""
    neg, inverse = np.unique(-(score + score.dtype.type(0.0)), return_inverse=True)
    return neg, _code_counts(inverse, y, t, neg.shape[0])


def _merge(pieces: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, bool]:
    """Merge sorted pieces: the concatenated runs in one stable (radix) order, the counts of
    equal scores added (:func:`~core.evaluation._kernel.merge_runs`), in one layout
    (:func:`_one_layout`); ``binary`` says which."""
    counts, binary = _one_layout([p[1] for p in pieces])
    neg, merged = merge_runs(np.concatenate([p[0] for p in pieces]), np.concatenate(counts))
    return neg, merged, binary


def tie_run_counts(y: Any, t: Any, score: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """Distinct negated scores (ascending = ranking order) and the counts per score over all
    blocks, computed on the current Dask client; ``binary`` says which counts (decided for
    the whole column: 0/1 when every block's outcome is)."""
    return _merge(_map_blocks(_piece, y, t, score))


def _edges(score: Any, bins: int, edges: Any = None) -> np.ndarray:
    """Ascending bin edges: ``edges`` as given, else ``bins`` quantiles of the score
    (:func:`dask.array.percentile`).  A score that fills more than one quantile step is a
    heavy tie: it gets a bin of its own, (nextafter(v, -inf), v], which is exact (see
    :func:`binned_error_bound`)."""
    import dask.array as da

    if edges is None:
        score = _check_column(score, "score")
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
    bins = check_positive_int(bins, "bins")
    edges = _edges(score, bins, edges)
    n_bins = edges.shape[0] + 1

    def piece(yb, tb, sb):
        b = n_bins - 1 - np.searchsorted(edges, sb, side="left")  # highest scores: bin 0
        ref = np.full(n_bins, np.nan)
        ref[b] = sb  # one score of each bin (the last written)
        mixed = np.bincount(b[sb != ref[b]], minlength=n_bins) > 0
        return _code_counts(b, yb, tb, n_bins), ref, mixed

    pieces = _map_blocks(piece, y, t, score)
    layout, binary = _one_layout([p[0] for p in pieces])
    counts = np.sum(layout, axis=0, dtype=np.int64 if binary else np.float64)
    refs = np.array([p[1] for p in pieces])
    # tied: no partition saw two scores in the bin, and all partitions saw the same one
    tied = ~np.any([p[2] for p in pieces], axis=0) & (
        np.nanmax(np.where(np.isnan(refs), -np.inf, refs), axis=0)
        == np.nanmin(np.where(np.isnan(refs), np.inf, refs), axis=0))
    keep = counts.sum(axis=1) > 0  # empty bins are no runs
    neg = np.arange(n_bins, dtype=np.float64)
    return neg[keep], counts[keep], binary, tied[keep]


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
                     cutoffs: tuple = CUTOFFS, random_state: Any = 0,
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
    import pandas as pd

    cutoffs = check_cutoffs(cutoffs)
    bins = check_positive_int(bins, "bins")
    n_boot = check_positive_int(n_boot, "n_boot")
    points = check_positive_int(points, "points")
    edges = _edges(score, bins)
    n_bins = edges.shape[0] + 1

    def piece(yb, tb, sb, seed):
        if yb.dtype != np.int8:
            return "amount"  # refused below, for the whole column
        b = n_bins - 1 - np.searchsorted(edges, sb, side="left")
        rng = np.random.default_rng(seed)
        out = np.empty((n_boot + 1, n_bins, 4))
        out[0] = _code_counts(b, yb, tb, n_bins)
        for r in range(1, n_boot + 1):
            out[r] = _code_counts(b, yb, tb, n_bins, weights=rng.poisson(1.0, b.shape[0]))
        return out

    # the shared seed rule (None, int, SeedSequence, Generator, RandomState); a Generator's
    # own seed sequence is continued, an int's is SeedSequence(int)
    root = as_generator(random_state).bit_generator.seed_seq

    def seeds(n_blocks):
        return [(s,) for s in root.spawn(n_blocks)]

    parts = _map_blocks(piece, y, t, score, extra=seeds)
    if any(isinstance(p, str) for p in parts):
        raise ValueError("binned_bootstrap needs a 0/1 outcome; y holds other values.")
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
