"""Label-dependent set-up of the λ-gradient engine (private; see :mod:`core.objectives.lambdas`).

Validation of the options, the metric definitions (row gains, slot weights, per-query
scales, MAP weights) and :class:`Plan`, which assigns every query to a kernel
(:mod:`core.objectives._kernels`, or their compiled versions in
:mod:`core.objectives._compiled`) and evaluates the gradients for given scores.  Everything that
depends only on the labels and groups is computed once and reused across boosting rounds.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_choice, check_scores
from core.objectives import _compiled as _comp
from core.objectives import _kernels as _kern

METRICS = ("pcg", "pcg_cutoff", "dcg", "dcg_exp", "ndcg", "ndcg_exp", "map", "auc", "mauc")
METHODS = ("auto", "exact", "binned")
#: ``method="auto"`` uses the exact kernel for queries up to this many rows.
AUTO_EXACT_MAX_ROWS = 256  # binned is 5-20x faster from ~500 rows, within 1e-7 (bench)
#: ``method="exact"`` refuses queries larger than this (an n×n pair matrix per query).
EXACT_MAX_ROWS = 20_000
#: The binned kernel handles queries with at most this many distinct relevance classes;
#: queries with more (continuous relevance) use the exact kernel instead.
MAX_BINNED_CLASSES = 16
#: Queries up to this many rows are padded and batched through the exact kernel together.
_BATCH_MAX_ROWS = 512
#: The compiled back-end sorts plans whose queries hold at least this many rows on average by
#: packed keys and numpy's sort, one call per query (see ``Plan._sort_compiled``); plans of
#: smaller queries (LETOR's) by a bucket sort in one call.
PACKED_MIN_MEAN_ROWS = 2048
#: ... and only while at least this share of the scores were distinct at the previous round:
#: among heavy ties (the first rounds of boosting) the bucket sort is faster (bench: 0.15 vs
#: 0.34 s at 12M rows and 31 distinct scores; 0.58 vs 0.39 s when all are distinct).
PACKED_MIN_DISTINCT = 0.03
#: The packed sort leans on numpy's sort, SIMD (x86-simd-sort) and fast on most CPUs but
#: slow on AMD Zen 4, where numpy's AVX-512 sort hits microcoded compress-stores: 30k
#: Hillstrom scores took 0.20 ms packed vs 0.41 ms bucket-sorted on one machine, 1.0 ms vs
#: 0.2-0.36 ms on a Zen 4 (numpy 2.4; its AVX2 sort: 0.3 ms).  So a plan times both
#: on its first rounds of distinct scores, this many each (alternating), and keeps the
#: faster; both give the same order, so the choice changes the time, never the gradients.
SORT_TRIALS = 3
_NO_WEIGHT = np.empty(0)  # the compiled kernels' "no row weights"

#: Metrics whose λ-gradients take a cut-off ``k`` (the others use the whole list).
CUTOFF_METRICS = ("pcg", "pcg_cutoff", "dcg", "dcg_exp", "ndcg", "ndcg_exp")
_EXP_GAIN = ("dcg_exp", "ndcg_exp")


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------
def check_options(metric: Any, k: Any, method: Any, bins: Any, sigma: Any) -> None:
    """Validate the keyword options shared by every public entry point."""
    check_choice(metric, "metric", METRICS)
    check_choice(method, "method", METHODS)
    if k is not None:
        if metric not in CUTOFF_METRICS:
            raise ValueError(
                f"k applies to metrics {', '.join(map(repr, CUTOFF_METRICS))}; metric {metric!r} "
                f"takes no cut-off, got k={k!r}."
            )
        _check_k(k)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive int; got {bins!r}.")
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.number)) or not (
        np.isfinite(sigma) and sigma > 0
    ):
        raise ValueError(f"sigma must be a finite number > 0; got {sigma!r}.")


def _check_k(k: Any) -> None:
    msg = "k must be a positive int (rows) or a float fraction in (0, 1]; got {!r}."
    if isinstance(k, bool):
        raise ValueError(msg.format(k))
    if isinstance(k, (int, np.integer)):
        if k <= 0:
            raise ValueError(msg.format(k))
    elif isinstance(k, (float, np.floating)):
        if not (np.isfinite(k) and 0 < k <= 1):
            raise ValueError(msg.format(k))
    else:
        raise ValueError(msg.format(k))


def check_groups(group_sizes: Any, n: int | None) -> np.ndarray:
    """Query sizes as int64, positive, summing to ``n`` (when given)."""
    sizes = np.asarray(group_sizes)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(
            f"group_sizes must be a non-empty 1-d array of query sizes; got shape {sizes.shape}."
        )
    if sizes.dtype.kind not in "iuf" or not np.all(np.isfinite(sizes)) or np.any(
        sizes != np.round(sizes)
    ) or np.any(sizes <= 0):
        raise ValueError(f"group_sizes must hold positive integers; got {sizes[:5]!r}...")
    sizes = sizes.astype(np.int64)
    if n is not None and int(sizes.sum()) != n:
        raise ValueError(
            f"group_sizes must sum to the number of rows ({n}); they sum to {int(sizes.sum())}."
        )
    return sizes


def _query_cutoffs(k: Any, sizes: np.ndarray) -> np.ndarray:
    """Per-query cut-off in rows: ``int`` rows (capped), ``float`` fraction (half up, ≥ 1)."""
    if k is None:
        return sizes.copy()
    if isinstance(k, (int, np.integer)):
        return np.minimum(sizes, int(k))
    return np.clip(np.floor(float(k) * sizes + 0.5), 1, sizes).astype(np.int64)


# --------------------------------------------------------------------------------------------
# the label-dependent set-up, reused across boosting rounds
# --------------------------------------------------------------------------------------------
class Plan:
    """Everything that depends on the labels and groups but not on the scores."""

    def __init__(self, relevance: Any, group_sizes: Any, *, metric: str, k: Any, method: str,
                 bins: int, sigma: float) -> None:
        check_options(metric, k, method, bins, sigma)
        rel = check_scores(relevance, "relevance")
        n = rel.size
        if n == 0:
            raise ValueError("relevance must contain at least one row; got an empty array.")
        self.sizes_arg = None if group_sizes is None else check_groups(group_sizes, n)
        sizes = np.array([n]) if self.sizes_arg is None else self.sizes_arg
        self.n, self.metric, self.bins, self.sigma = n, metric, int(bins), float(sigma)
        self.rel, self.sizes = rel, sizes
        self.starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        self.qid = np.repeat(np.arange(sizes.size), sizes)
        cutoffs = _query_cutoffs(k, sizes) if metric in CUTOFF_METRICS else sizes
        if method == "exact" and sizes.max() > EXACT_MAX_ROWS:
            raise ValueError(
                f"method='exact' builds an n×n pair matrix per query and accepts at most "
                f"{EXACT_MAX_ROWS:,} rows per query; got a query of {int(sizes.max()):,} rows. "
                "Use method='binned' or 'auto'."
            )
        self.gain = _row_gains(metric, rel, self.qid, sizes)
        self.slot_w = None if metric == "map" else _slot_weights(metric, sizes, cutoffs)
        self.scale = _query_scales(metric, rel, self.gain, self.qid, sizes, self.slot_w)
        self._assign(method)
        self._order: np.ndarray | None = None
        self._specs: list | None = None  # compiled back-end: per binned query, on first use
        # compiled back-end, set on first use (_compiled_setup, _sort_compiled)
        self._scratch = self._exact_slots = None
        #: the sort's order, the previous round's (the bucket sort's start), x[order] and
        #: packed keys
        self._buffers: tuple | None = None
        self._bucket: np.ndarray | None = None  # the bucket sort's scratch
        self._ties = False  # the last sorted scores were mostly tied: bucket-sort the next
        self._sort_times: dict[str, list[float]] = {"packed": [], "bucket": []}
        self._packed_faster: bool | None = None  # decided after SORT_TRIALS rounds of each
        self._warned_wide = False  # a query too spread for its bins and the exact kernel

    # ---- which kernel runs each query ------------------------------------------------------
    def _assign(self, method: str) -> None:
        #: binned queries: (start, size, K); the class of each of their rows is in ``cls``
        self.binned: list[tuple[int, int, np.ndarray]] = []
        self.cls = np.zeros(self.n, dtype=np.int8)  # ≤ 16 classes; a small array to stream
        self.exact_big: list[tuple[int, int]] = []
        small: list[int] = []
        for q, (start, size) in enumerate(zip(self.starts.tolist(), self.sizes.tolist(),
                                              strict=True)):
            if size < 2 or self.scale[q] == 0:
                continue
            want_binned = method == "binned" or (method == "auto" and size > AUTO_EXACT_MAX_ROWS)
            if want_binned:
                kmat = self._classes(start, size, q)
                if kmat is not None:
                    self.binned.append((start, size, kmat))
                    continue
                if size > EXACT_MAX_ROWS:
                    raise ValueError(
                        f"query {q} has {size:,} rows and more than {MAX_BINNED_CLASSES} "
                        "distinct relevance values: the binned method needs a few relevance "
                        "classes and the exact one is limited to "
                        f"{EXACT_MAX_ROWS:,} rows. Quantise the relevance labels."
                    )
            if size <= _BATCH_MAX_ROWS:
                small.append(q)
            else:
                self.exact_big.append((start, size))
        self.buckets = self._buckets(np.array(small, dtype=np.int64))
        #: every query of an exact kernel (the compiled back-end runs them in one call)
        self.exact_queries = np.sort(np.array(
            small + [int(self.qid[start]) for start, _ in self.exact_big], dtype=np.intp))

    def _classes(self, start: int, size: int, q: int) -> np.ndarray | None:
        """Relevance classes of one query's rows (written to :attr:`cls`) and its class-pair
        factor ``K`` (returned), or None if there are too many.

        Classes are the distinct gains (ordered like the relevance, since every gain is a
        non-decreasing function of it), except for ``mauc``, whose class gains depend on the
        class sizes and whose direction comes from the relevance: there they are the
        distinct relevance values.
        """
        key = self.rel if self.metric == "mauc" else self.gain
        # hashing, not np.unique's sort: 0.3 s instead of 1-2.5 s for a 12M-row query
        cls, values = pd.factorize(key[start:start + size], sort=True)
        if values.size > MAX_BINNED_CLASSES:
            return None
        first = np.zeros(values.size, dtype=np.int64)
        first[cls[::-1]] = np.arange(size)[::-1]
        class_gain = self.gain[start + first]
        self.cls[start:start + size] = cls
        return np.abs(class_gain[:, None] - class_gain[None, :]) * self.scale[q]

    def _buckets(self, small: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Pad small queries to the next power of two and group them by padded length."""
        out = []
        if small.size == 0:
            return out
        sizes = self.sizes[small]
        length = 2 ** np.ceil(np.log2(sizes)).astype(np.int64)
        for ell in np.unique(length):
            qs = small[length == ell]
            slots = np.arange(ell)[None, :]
            valid = slots < self.sizes[qs][:, None]
            index = np.where(valid, self.starts[qs][:, None] + slots, 0)
            out.append((qs, index, valid))
        return out

    # ---- one evaluation ---------------------------------------------------------------------
    def gradients(self, scores: np.ndarray, *, warm: bool = False, weight: np.ndarray | None = None,
                  dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
        """LightGBM's ``(grad, hess)`` at ``scores``, times the row ``weight`` when given.

        ``dtype`` of the results: float64, or float32 (what LightGBM keeps; a custom
        objective returning float32 spares LightGBM a converted copy).  Not thread-safe: the
        compiled back-end reuses the plan's sort buffers between calls.
        """
        with np.errstate(over="ignore"):  # refused below
            x = scores * self.sigma if self.sigma != 1.0 else scores
        # every sort, bin grid and score difference below needs max − min in float64 (one
        # check here, 7 µs at 30k rows; Python floats: an overflow is inf, no warning)
        span = float(x.max()) - float(x.min())
        if not np.isfinite(span):
            raise ValueError(
                f"the scores (times sigma={self.sigma:g}) span {scores.min():.3g} to "
                f"{scores.max():.3g}: beyond float64's range, where no ranking differences "
                "can be computed. Scores this large mean the boosting diverged; lower the "
                "learning rate or sigma."
            )
        if _comp.backend() == "numba":  # its sorts keep their own state (``warm`` unused)
            return self._gradients_compiled(x, weight, dtype)
        order = self._sort(x, warm)
        xs, rel_s, gain_s = x[order], self.rel[order], self.gain[order]
        if self.metric == "map":
            w_ok, w_inv = _map_weights(rel_s, self.starts, self.sizes)
        else:
            w_ok, w_inv = self.slot_w, None
        with _kern.single_thread_blas():
            lam, curv = self._kernels(order, xs, rel_s, gain_s, w_ok, w_inv)
        grad = np.empty(self.n)
        hess = np.empty(self.n)
        grad[order] = -self.sigma * lam
        hess[order] = self.sigma**2 * np.maximum(curv, 0.0)
        if weight is not None:
            grad *= weight
            hess *= weight
        return grad.astype(dtype, copy=False), hess.astype(dtype, copy=False)

    def _too_wide(self, xs: np.ndarray, start: int, size: int) -> bool:
        """Whether a binned query's sorted scores ``xs[start:start + size]`` spread too
        wide for its bins (:data:`~core.objectives._kernels.TRUSTED_BIN_WIDTH`): True sends
        it to the exact kernel this round (O(n²): up to 4e8 pairs at 20,000 rows).  A query
        too large for the exact kernel stays binned, with a warning giving its bin width
        (once per plan: a training would repeat it every round)."""
        width, _ = _kern.grid(xs[start:start + size], self.bins)
        if width <= _kern.TRUSTED_BIN_WIDTH:
            return False
        if size <= EXACT_MAX_ROWS:
            return True
        if self._warned_wide:  # once per plan, not once per boosting round
            return False
        self._warned_wide = True
        warnings.warn(
            f"the scores (times sigma={self.sigma:g}) of a {size:,}-row query spread from "
            f"{xs[start + size - 1]:.3g} to {xs[start]:.3g}: the binned λ-gradients use bins "
            f"{width:.3g} wide (trusted up to {_kern.TRUSTED_BIN_WIDTH}), so they are "
            "approximate. Raise bins, lower sigma, or look for outlying scores.",
            RuntimeWarning, stacklevel=4)
        return False

    def _kernels(self, order, xs, rel_s, gain_s, w_ok, w_inv):
        """Run each query's kernel; inputs and outputs in sorted-slot layout."""
        lam = np.zeros(self.n)
        curv = np.zeros(self.n)
        wide = []
        for start, size, kmat in self.binned:
            if self._too_wide(xs, start, size):
                wide.append((start, size))
                continue
            sl = slice(start, start + size)
            lam[sl], curv[sl] = _kern.binned_query(
                xs[sl], self.cls[order[sl]], kmat, w_ok[sl],
                None if w_inv is None else w_inv[sl], self.bins,
            )
        for start, size in self.exact_big + wide:
            sl = slice(start, start + size)
            q = self.qid[start]
            out = _kern.exact_batch(
                xs[None, sl], rel_s[None, sl], gain_s[None, sl], w_ok[None, sl],
                None if w_inv is None else w_inv[None, sl], self.scale[q:q + 1],
                np.ones((1, size), dtype=bool),
            )
            lam[sl], curv[sl] = out[0][0], out[1][0]
        for qs, index, valid in self.buckets:
            out = _kern.exact_batch(
                xs[index], rel_s[index], gain_s[index], w_ok[index],
                None if w_inv is None else w_inv[index], self.scale[qs], valid,
            )
            lam[index[valid]], curv[index[valid]] = out[0][valid], out[1][valid]
        return lam, curv

    # ---- the numba back-end ----------------------------------------------------------------
    def _gradients_compiled(self, x: np.ndarray, weight: np.ndarray | None,
                            dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`gradients` with the compiled kernels (same results to rounding).

        Binned queries write their rows' gradients directly; exact queries go through
        sorted-slot ``Λ`` / curvature arrays.  Rows of skipped queries (one row, or no pair
        that changes the metric) keep the zeros they start with.
        """
        if self._specs is None:
            self._compiled_setup()
        order, xs = self._sort_compiled(x)
        rel_s = None
        if self.metric == "map":
            rel_s = self.rel[order]
            w_ok, w_inv = _map_weights(rel_s, self.starts, self.sizes)
        else:
            w_ok, w_inv = self.slot_w, None
        grad, hess = np.zeros(self.n, dtype=dtype), np.zeros(self.n, dtype=dtype)
        weight = _NO_WEIGHT if weight is None else weight
        wide = []
        for (start, size, _), spec in zip(self.binned, self._specs, strict=True):
            if self._too_wide(xs, start, size):
                wide.append(start)
                continue
            sl = slice(start, start + size)
            _comp.binned_query_compiled(
                xs[sl], order[sl], self.cls, spec, w_ok[sl],
                None if w_inv is None else w_inv[sl], self.bins, self.sigma, weight, grad, hess,
                self._scratch,
            )
        if self.exact_queries.size or wide:
            qs, slots = self.exact_queries, self._exact_slots
            if wide:  # this round's binned queries spread too wide for their bins
                extra = self.qid[np.array(wide, dtype=np.intp)]
                qs = np.concatenate([qs, extra])
                slots = np.concatenate([slots] + [
                    np.arange(self.starts[q], self.starts[q] + self.sizes[q]) for q in extra])
            lam = np.zeros(self.n)
            curv = np.zeros(self.n)
            _comp.exact_compiled(
                self.starts[qs], self.sizes[qs], self.scale[qs], xs,
                self.rel[order] if rel_s is None else rel_s, self.gain[order], w_ok, w_inv,
                lam, curv,
            )
            _comp.compiled().scatter(order[slots], lam[slots], curv[slots], self.sigma, weight,
                                     grad, hess)
        return grad, hess

    def _compiled_setup(self) -> None:
        """Per binned query its :class:`~core.objectives._compiled.CompiledSpec`; scratch for
        the largest binned query; the sorted slots of the exact queries."""
        split = self.metric == "map"
        self._specs = [_comp.compiled_spec(kmat, split) for *_, kmat in self.binned]
        largest = max((size for _, size, _ in self.binned), default=0)
        self._scratch = (np.empty(largest, dtype=np.int8), np.empty(largest, dtype=np.int32),
                         np.empty(largest), np.empty(largest), np.empty(largest))
        qs = self.exact_queries
        self._exact_slots = np.concatenate(
            [np.arange(self.starts[q], self.starts[q] + self.sizes[q]) for q in qs]
        ) if qs.size else np.empty(0, dtype=np.intp)

    def _sort_compiled(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_sort` by compiled code, and ``x[order]``; the previous call's order is the
        bucket sort's start (exact from any start, faster from a near one).

        Plans of large queries (:data:`PACKED_MIN_MEAN_ROWS` rows on average) pack each score
        with its row index into a uint64 key and sort the keys with numpy's (SIMD) sort,
        1.5-2.6x faster than the bucket sort at 10k-12M rows of distinct scores
        (:func:`~core.objectives._numba.pack_scores`).  The bucket sort
        (:func:`~core.objectives._numba.sort_queries`) runs instead when the previous round's
        scores were mostly tied (:data:`PACKED_MIN_DISTINCT`), for a query whose near-ties
        would cost too many repairs, and for every plan of small queries, in one call (a
        numpy sort per small query costs more than it saves).  Both give the same order.
        Which one is faster depends on the CPU (numpy's sort is SIMD on some only): the plan
        times both on its first rounds of distinct scores and keeps the faster
        (:data:`SORT_TRIALS`).
        The buffers are the plan's, reused every round (fresh arrays of 14M rows page-fault
        on every call): two order arrays take turns, this round's and the previous one's.
        """
        if x.dtype != np.float64:  # the packed keys read the float64 bits
            raise TypeError(f"scores must be float64 (check_scores); got {x.dtype}.")
        nb = _comp.compiled()
        if self._buffers is None:
            index = np.int32 if self.n < 2**31 - 1 else np.intp  # less memory to touch
            packed = self.n >= PACKED_MIN_MEAN_ROWS * self.sizes.size
            self._buffers = (np.empty(self.n, dtype=index), np.arange(self.n, dtype=index),
                             np.empty(self.n),
                             np.empty(self.n, dtype=np.uint64) if packed else None)
        order, prev, xs, keys = self._buffers
        packed = keys is not None and not self._ties and self._packed_faster is not False
        trial = packed and self._packed_faster is None
        if trial:  # time both (alternating) until each has SORT_TRIALS rounds
            times = self._sort_times
            packed = len(times["packed"]) <= len(times["bucket"])
            start = time.perf_counter()
        if not packed:
            nb.sort_queries(x, self.starts, self.sizes, prev, order, xs,
                            self._bucket_scratch())
        else:
            x = np.ascontiguousarray(x)
            nb.pack_scores(x.view(np.uint64), self.starts, self.sizes, keys)
            for lo, m in zip(self.starts.tolist(), self.sizes.tolist(), strict=True):
                keys[lo:lo + m].sort()
                if not nb.unpack_sorted(keys, x, lo, m, order, xs, 8 * m + 1024):
                    nb.sort_queries(x, np.array([lo]), np.array([m]), prev, order, xs,
                                    self._bucket_scratch())
        if trial:
            times["packed" if packed else "bucket"].append(time.perf_counter() - start)
            if min(map(len, times.values())) >= SORT_TRIALS:
                self._packed_faster = min(times["packed"]) < min(times["bucket"])
        if keys is not None and self._packed_faster is not False:  # packed may still run
            self._ties = nb.count_distinct(xs) < PACKED_MIN_DISTINCT * self.n
        # this round's order starts the next round's sort; swapped only once complete, so
        # the start is always a whole ranking (a partial one would lose rows)
        self._buffers = (prev, order, xs, keys)
        return order, xs

    def _bucket_scratch(self) -> np.ndarray:
        """The bucket sort's scratch (``2n + 1`` indices), made on first use."""
        if self._bucket is None:
            self._bucket = np.empty(2 * self.n + 1, dtype=self._buffers[0].dtype)
        return self._bucket

    def _sort(self, x: np.ndarray, warm: bool) -> np.ndarray:
        """Rows sorted by query, then score descending, ties by row order (stable).

        With ``warm`` the previous ranking seeds an adaptive stable sort (near-linear when
        the scores moved little); if that leaves a tie out of row order, a full sort runs.
        """
        single = self.sizes.size == 1
        prev = self._order if warm else None
        if prev is not None:
            key = -x[prev]
            sub = np.argsort(key, kind="stable") if single else np.lexsort((key, self.qid))
            order = prev[sub]
            xs = x[order]
            tie = (xs[1:] == xs[:-1]) & (self.qid[1:] == self.qid[:-1])
            if not np.any(tie & (order[1:] < order[:-1])):
                self._order = order
                return order
        order = np.argsort(-x, kind="stable") if single else np.lexsort((-x, self.qid))
        if warm:
            self._order = order
        return order


# --------------------------------------------------------------------------------------------
# metric definitions
# --------------------------------------------------------------------------------------------
def _row_gains(metric: str, rel: np.ndarray, qid: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    if metric in _EXP_GAIN:
        with np.errstate(over="ignore"):
            gain = np.expm1(rel * np.log(2.0))
        if not np.all(np.isfinite(gain)):
            raise ValueError(
                f"metric {metric!r} uses the gain 2**rel − 1, which overflows for relevance "
                f"up to {rel.max()!r}; use a linear-gain metric or rescale the labels."
            )
        return gain
    if metric in ("map", "auc"):
        return (rel > 0).astype(np.float64)
    if metric == "mauc":
        # G_c = p(c) / (m_c (n − m_c)) = 1 / (R (n − m_c)) for a grade c > 0 with m_c rows,
        # R relevant rows in the query and p(c) = m_c / R (core.evaluation.metrics.mauc);
        # grade 0 is no class (G = 0): "irrelevant vs the rest" would reward ranking
        # irrelevant rows first.
        key = np.lexsort((rel, qid))
        same = np.concatenate(([False], (rel[key][1:] == rel[key][:-1])
                               & (qid[key][1:] == qid[key][:-1])))
        run = np.cumsum(~same) - 1
        run_size = np.bincount(run)
        m_c = np.empty(rel.size)
        m_c[key] = run_size[run]
        n_q = sizes[qid].astype(np.float64)
        r_q = np.bincount(qid, weights=(rel > 0).astype(np.float64), minlength=sizes.size)[qid]
        with np.errstate(divide="ignore"):
            gain = np.where((rel > 0) & (m_c < n_q), 1.0 / (r_q * (n_q - m_c)), 0.0)
        return gain
    return rel.copy()


def _slot_weights(metric: str, sizes: np.ndarray, cutoffs: np.ndarray) -> np.ndarray:
    """Position weight ``w(i)`` of every sorted slot, queries concatenated."""
    qid = np.repeat(np.arange(sizes.size), sizes)
    pos = np.arange(qid.size) - np.repeat(np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + 1
    n_q, k_q = sizes[qid], cutoffs[qid]
    if metric == "pcg":
        return np.where(pos <= k_q, n_q - pos + 1, 0).astype(np.float64)
    if metric == "pcg_cutoff":
        return np.maximum(k_q - pos + 1, 0).astype(np.float64)
    if metric in ("auc", "mauc"):
        return (n_q - pos).astype(np.float64)
    return np.where(pos <= k_q, 1.0 / np.log2(pos + 1.0), 0.0)  # dcg family


def _query_scales(metric: str, rel: np.ndarray, gain: np.ndarray, qid: np.ndarray,
                  sizes: np.ndarray, slot_w: np.ndarray | None) -> np.ndarray:
    """Per-query factor of ``|ΔM|``: 1/IDCG (ndcg), 1/(m·n₋) (auc), 1/R (map), else 1."""
    n_q = sizes.size
    if metric in ("ndcg", "ndcg_exp"):
        ideal = gain[np.lexsort((-gain, qid))]  # gains sorted descending within each query
        idcg = np.bincount(qid, weights=ideal * slot_w, minlength=n_q)
        bad = idcg <= 0
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        varied = np.maximum.reduceat(ideal, starts) > np.minimum.reduceat(ideal, starts)
        if np.any(bad & varied):
            warnings.warn(
                f"metric {metric!r}: {int(bad.sum())} of {n_q} queries have an ideal DCG <= 0 "
                "(no positive gain); they get zero gradient.",
                UserWarning,
                stacklevel=4,
            )
        return np.where(bad, 0.0, 1.0 / np.where(bad, 1.0, idcg))
    if metric in ("auc", "map"):
        positives = np.bincount(qid, weights=(rel > 0), minlength=n_q)
        if metric == "map":
            return np.where(positives > 0, 1.0 / np.maximum(positives, 1), 0.0)
        pairs = positives * (sizes - positives)
        return np.where(pairs > 0, 1.0 / np.maximum(pairs, 1), 0.0)
    return np.ones(n_q)


def _map_weights(rel_sorted: np.ndarray, starts: np.ndarray,
                 sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``V(u) = R(u)/u − H(u)`` and ``V⁺(u) = V(u) + 1/u`` of every sorted slot."""
    rel_bin = (rel_sorted > 0).astype(np.float64)
    first = np.repeat(starts, sizes)
    pos = np.arange(rel_sorted.size) - first + 1.0
    r_cum = np.cumsum(rel_bin)
    h_cum = np.cumsum(rel_bin / pos)
    r_before = np.concatenate(([0.0], r_cum))[first]
    h_before = np.concatenate(([0.0], h_cum))[first]
    v = (r_cum - r_before) / pos - (h_cum - h_before)
    return v, v + 1.0 / pos
