"""Compiled (numba) loops behind :mod:`core.evaluation._kernel`; imported only when numba is.

Nothing here validates its input.  The loops:

* :func:`rank_codes32` — ranks float32 scores (descending) with the row codes ``2·t + y``
  riding along: each row becomes one 64-bit word ``key << 2 | code`` with ``key`` the
  order-reversing image of the float's bits, and an LSD radix sort on the 32 key bits
  (four passes of 8 bits, histograms of all four digits in one read) puts them in ranking
  order — stable (tied rows keep their row order, so right for both tie policies), about
  3× NumPy's sort of the same words, and no argsort / gather;
* :func:`radix_rank64` — the same for float64 scores: a stable LSD radix sort of their
  64-bit keys with a payload (the row codes, or the row numbers) riding along, skipping
  the passes whose digit never varies;
* :func:`merge_runs` — per-run sums of partial counts in a merged ranking (the Dask path);
* :func:`arm_sums_at` — one arm's outcome sums at a few cut-offs, read off the joint
  ranking in one pass;
* :func:`code_totals` — rows (or bootstrap counts) per code ``2·t + y``;
* :func:`joint_values` — one pass over the ranked codes (and a bootstrap resample's counts)
  accumulating the treated rows, treated responders and responders of the top k, with the
  tie runs interpolated exactly as :func:`numpy.interp` does in
  :func:`core.evaluation._kernel.cumulative`, and writing a joint definition's ``V(k)``
  from them (the numpy formulas on one point: the same bits, none of their arrays);
* :func:`counted_at` — one pass over an arm's ranked rows with their bootstrap counts,
  reading the accumulated outcome at a few counts ``k`` (the numpy version in
  :func:`core.evaluation._kernel.counted_at` states the formula; same operations, same
  bits);
* :func:`add_draws` — a bootstrap resample's one-byte row counts from its draws.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["add_draws", "arm_sums_at", "code_totals", "counted_at", "joint_values",
           "joint_values_at", "merge_runs", "radix_rank64", "rank_codes32"]

_JIT = {"cache": True, "nogil": True}
#: bits 2..33 of the packed word (the 32 key bits) in four 8-bit digits: 256 buckets per pass
#: keep the scatter's write streams in cache (three 11/11/10-bit passes took 12.5 vs 8.0 ms at
#: 1M rows, 190 vs 145 ms at 10M)
_DIGITS = (8, 8, 8, 8)


@numba.njit(**_JIT)
def _pack(score: np.ndarray, code: np.ndarray, counts: np.ndarray) -> np.ndarray:
    n = score.shape[0]
    out = np.empty(n, dtype=np.uint64)
    bits = score.view(np.uint32)
    for i in range(n):
        b = bits[i]
        if score[i] == 0.0:          # -0.0 ties with 0.0
            b = np.uint32(0)
        # ascending map of the float's bits, then reversed: larger score → smaller key
        asc = ~b if (b >> np.uint32(31)) else (b | np.uint32(0x80000000))
        key = np.uint64(~asc)
        word = (key << np.uint64(2)) | np.uint64(code[i])
        out[i] = word
        for d in range(4):  # the four 8-bit digits of the key (bits 2..33 of the word)
            counts[d, ((word >> np.uint64(2 + 8 * d)) & np.uint64(0xFF)) + 1] += 1
    return out


@numba.njit(**_JIT)
def _scatter(src: np.ndarray, dst: np.ndarray, start: np.ndarray, shift: int, mask: int):
    for j in range(start.shape[0] - 1):
        start[j + 1] += start[j]
    s, m = np.uint64(shift), np.uint64(mask)
    for i in range(src.shape[0]):
        d = (src[i] >> s) & m
        dst[start[d]] = src[i]
        start[d] += 1


@numba.njit(**_JIT)
def _scatter_unpack(src: np.ndarray, start: np.ndarray, shift: int, mask: int):
    """The last pass of :func:`_scatter`, writing each word's code and key (not the word)."""
    n = src.shape[0]
    code = np.empty(n, dtype=np.int8)
    key = np.empty(n, dtype=np.uint32)
    for j in range(start.shape[0] - 1):
        start[j + 1] += start[j]
    s, m = np.uint64(shift), np.uint64(mask)
    for i in range(n):
        w = src[i]
        d = (w >> s) & m
        code[start[d]] = np.int8(w & np.uint64(3))
        key[start[d]] = np.uint32(w >> np.uint64(2))
        start[d] += 1
    return code, key


def rank_codes32(score: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(code_sorted, key_sorted)``: the codes in ranking order (score descending; an LSD
    radix sort is stable, so tied rows keep their row order) and ascending uint32 keys that
    tie exactly where the scores tie."""
    counts = np.zeros((len(_DIGITS), 257), dtype=np.int64)
    words = _pack(np.ascontiguousarray(score), np.ascontiguousarray(code), counts)
    other = np.empty_like(words)
    shift = 2
    for digit, width in enumerate(_DIGITS[:-1]):
        _scatter(words, other, counts[digit, : (1 << width)].copy(), shift, (1 << width) - 1)
        words, other = other, words
        shift += width
    width = _DIGITS[-1]
    return _scatter_unpack(words, counts[-1, : (1 << width)].copy(), shift, (1 << width) - 1)


@numba.njit(**_JIT)
def _pack64(score: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Descending uint64 keys of float64 scores (as :func:`_pack`) and the histograms of
    their eight 8-bit digits, in one read."""
    n = score.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    bits = score.view(np.uint64)
    top = np.uint64(0x8000000000000000)
    for i in range(n):
        b = bits[i]
        if score[i] == 0.0:          # -0.0 ties with 0.0
            b = np.uint64(0)
        asc = ~b if (b & top) else (b | top)
        key = ~asc
        keys[i] = key
        for d in range(8):
            counts[d, ((key >> np.uint64(8 * d)) & np.uint64(0xFF)) + 1] += 1
    return keys


@numba.njit(**_JIT)
def _scatter_pair(keys, codes, keys_out, codes_out, start, shift):
    """One stable LSD pass over 8 key bits at ``shift``, the payload riding along."""
    for j in range(start.shape[0] - 1):
        start[j + 1] += start[j]
    s = np.uint64(shift)
    for i in range(keys.shape[0]):
        k = keys[i]
        d = (k >> s) & np.uint64(0xFF)
        p = start[d]
        keys_out[p] = k
        codes_out[p] = codes[i]
        start[d] = p + 1


def radix_rank64(score: np.ndarray, payload: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(payload_sorted, key_sorted)`` for float64 scores: their uint64 descending keys
    (:func:`_pack64`) sorted by a stable LSD radix sort of eight 8-bit passes with the
    ``payload`` (the int8 row codes, or the row numbers) riding along; a pass whose digit is
    the same for every row (a score's top bits often are; a float32 score's low ones always)
    is skipped."""
    n = score.shape[0]
    counts = np.zeros((8, 257), dtype=np.int64)
    keys = _pack64(np.ascontiguousarray(score), counts)
    values = np.ascontiguousarray(payload)
    spare_keys = np.empty_like(keys)
    buffers = [np.empty(n, dtype=values.dtype), np.empty(n, dtype=values.dtype)]  # never
    for d in range(8):                                                     # the caller's
        if counts[d].max() == n:
            continue
        out = buffers[0] if values is not buffers[0] else buffers[1]
        _scatter_pair(keys, values, spare_keys, out, counts[d, :256].copy(), 8 * d)
        keys, spare_keys, values = spare_keys, keys, out
    return (values if values is not payload else values.copy()), keys


@numba.njit(**_JIT)
def merge_runs(neg_sorted, counts, order, out_counts):
    """``out_counts[m]`` = the sum of the rows ``counts[order[i]]`` over the ``m``-th run of
    equal ``neg_sorted[i]`` (``neg[order]``), in ``order`` from the run's first row on —
    ``np.add.reduceat`` of the gathered rows (the same integer sums, float ones to
    rounding), in one pass with nothing gathered first."""
    m = -1
    width = counts.shape[1]
    for i in range(order.shape[0]):
        o = order[i]
        if i == 0 or neg_sorted[i] != neg_sorted[i - 1]:
            m += 1
            for c in range(width):
                out_counts[m, c] = counts[o, c]
        else:
            for c in range(width):
                out_counts[m, c] += counts[o, c]


@numba.njit(**_JIT)
def counted_at(counts, rows, values, run_ends, k):
    """``Σ`` of ``values`` over the top ``k[j]`` rows of the list where ranked row
    ``rows[i]`` appears ``counts[rows[i]]`` times, for ascending ``k``; ``run_ends`` (empty:
    ``ties="stable"``) are the ends of the tie runs among ``rows``, inside which the sum is
    interpolated."""
    out = np.zeros(k.shape[0])
    j = 0
    while j < k.shape[0] and k[j] <= 0:
        j += 1
    e = 0.0
    c = 0.0
    if run_ends.shape[0] == 0:  # stable: every row its own run, copies add values[i] each
        for i in range(rows.shape[0]):
            v = values[i]
            w = counts[rows[i]]
            e_next = e + w
            while j < k.shape[0] and k[j] <= e_next:
                out[j] = c + (k[j] - e) * v
                j += 1
            e = e_next
            c += w * v
        return out
    i = 0
    for r in range(1, run_ends.shape[0]):
        e_run = e
        c_run = c
        while i < run_ends[r]:
            w = counts[rows[i]]
            e_run += w
            c_run += w * values[i]
            i += 1
        j = _close_run(out, k, j, e, c, e_run, c_run)
        e = e_run
        c = c_run
    return out


@numba.njit(**_JIT)
def arm_sums_at(code, values, neg, average, treated, k):
    """Σ of the outcome over the top ``k[j]`` rows of one arm's own ranking (``treated``:
    the rows with ``code >> 1 == 1``, else the others), for ascending ``k``, in one pass over
    the joint ranking's codes — :func:`core.evaluation._kernel.cumulative_at` of the arm's
    :func:`~core.evaluation._kernel.cumulative`, operation for operation, without the arm's
    rows, outcomes or cumulative sums ever being gathered.  ``values``: amounts (empty: 0/1
    from ``code``); ``average``: inside a run of the arm's rows with equal ``neg`` the sum is
    the straight line between the run's ends."""
    m = k.shape[0]
    out = np.full(m, np.nan)  # a k beyond the arm's rows stays nan
    j = 0
    while j < m and k[j] <= 0:
        out[j] = 0.0
        j += 1
    if code.shape[0] == 0:
        return out
    amounts = values.shape[0] > 0
    arm = 1 if treated else 0
    e = 0            # arm rows before the open run
    c = -0.0         # their sum (-0.0 + x is x: numpy's cumsum)
    e_run = 0
    c_run = -0.0
    c_start = 0.0    # cum[e]: 0.0 at e = 0, as the cumulative sums' leading zero
    key = neg[0]
    for i in range(code.shape[0]):
        if j >= m:
            break
        ci = code[i]
        if (ci >> 1) != arm:
            continue
        v = values[i] if amounts else float(ci & 1)
        if not average:
            e_run += 1
            c_run += v
            while j < m and k[j] == e_run:
                out[j] = c_run
                j += 1
            continue
        if e_run > e and neg[i] != key:  # the open run ends before this row
            j = _close_run(out, k, j, e, c_start, e_run, c_run)
            e = e_run
            c_start = c_run
        key = neg[i]
        e_run += 1
        c_run += v
    if average and e_run > e:
        j = _close_run(out, k, j, e, c_start, e_run, c_run)
    return out


@numba.njit(**_JIT)
def _close_run(out, k, j, lo, c_lo, hi, c_hi):
    """The points ``k`` in ``(lo, hi]`` of a closed tie run: cumulative_at's formula."""
    while j < k.shape[0] and k[j] <= hi:
        if k[j] < hi:
            frac = (k[j] - lo) / (hi - lo)
            out[j] = c_lo + frac * (c_hi - c_lo)
        else:  # cumulative_at's lo + frac·(hi − lo) at a run's end: −0.0 becomes +0.0
            out[j] = c_hi + 0.0 * (c_hi - c_hi)
        j += 1
    return j


@numba.njit(inline="always", **_JIT)
def _joint_value(kind, k, nt, rt, r, n_t, n_c):
    """``V(k)`` of joint definition ``kind`` (0 ``uplift_joint_rel``, 1 ``qini_joint_abs``,
    2 ``uplift_joint_abs``) from the top k's counts — the operations of
    :meth:`UpliftCurves._compute_joint <core.evaluation.curves.UpliftCurves>` on one point
    (``N^C = k − N^T``, ``R^C = R − R^T``; 0 while an arm is still empty, kinds 1 and 2)."""
    nc = k - nt
    rc = r - rt
    if kind == 0:
        return rt / n_t - rc / n_c
    if nt == 0.0 or nc == 0.0:
        return 0.0
    if kind == 1:
        return rt - nt / nc * rc
    return (rt / nt - rc / nc) * k


@numba.njit(inline="always", **_JIT)
def _add_copy(c, t, y, amounts, nt, rt, r):
    """The top k's sums after one more copy of a row (``code`` c, ``t = c >> 1``, amount y)."""
    if amounts:
        return nt + t, rt + t * y, r + y
    return nt + t, rt + (t & c), r + (c & 1)


@numba.njit(inline="always", **_JIT)
def _slopes(k0, k, nt0, rt0, r0, nt, rt, r):
    """Slopes of the sums over the tie run ``(k0, k]``, as numpy.interp divides them."""
    span = float(k - k0)
    return (nt - nt0) / span, (rt - rt0) / span, (r - r0) / span


@numba.njit(inline="always", **_JIT)
def _run_value(kind, kk, k0, slopes, nt0, rt0, r0, n_t, n_c):
    """``V(kk)`` inside a tie run that starts at ``k0`` with sums ``(nt0, rt0, r0)``:
    numpy.interp's straight line, ``slope·off + start``."""
    off = float(kk - k0)
    s_nt, s_rt, s_r = slopes
    return _joint_value(kind, float(kk), s_nt * off + nt0, s_rt * off + rt0, s_r * off + r0,
                        n_t, n_c)


@numba.njit(**_JIT)
def joint_values(code, counts, values, neg, kind, n_t, n_c, out):
    """``out[k] = V(k)`` for ``k = 0 … len(out) − 1`` of a joint definition
    (:func:`_joint_value`) along a ranking (``code[i] = 2·t + y`` in rank order) in which row
    ``i`` appears ``counts[i]`` times (empty ``counts``: once) — a bootstrap resample
    without building it (:func:`joint_values_at`: only at a few positions).

    ``values``: the rows' amounts (empty: 0/1 outcomes from ``code``); ``neg``: the sorted
    negated scores for ``ties="average"`` (empty: ``"stable"``) — inside a run of equal
    ``neg`` the counts are the straight line between the run's ends, as
    :func:`core.evaluation._kernel.cumulative` (``numpy.interp``) gives them.  Each copy
    adds its row's values one at a time, so every ``V(k)`` has the bits of the numpy
    formulas on the (repeated) rows' cumulative counts, with none of those arrays built."""
    last = out.shape[0] - 1
    out[0] = 0.0
    n = code.shape[0]
    weighted = counts.shape[0] > 0
    amounts = values.shape[0] > 0
    average = neg.shape[0] > 0
    k = 0
    nt = -0.0  # -0.0 + x is x for every x (-0.0 too): the sums start as numpy's cumsum does
    rt = -0.0
    r = -0.0
    k0, nt0, rt0, r0 = 0, 0.0, 0.0, 0.0  # the open tie run's start (average; k = 0: +0.0)
    for i in range(n):
        if (k0 if average else k) >= last:
            break
        c = code[i]
        t = c >> 1
        y = values[i] if amounts else 0.0
        for _ in range(counts[i] if weighted else 1):
            k += 1
            nt, rt, r = _add_copy(c, t, y, amounts, nt, rt, r)
            if not average and k <= last:
                out[k] = _joint_value(kind, float(k), nt, rt, r, n_t, n_c)
        if average and (i == n - 1 or neg[i + 1] != neg[i]):
            if k > k0:
                if k - k0 > 1:  # inner points (a run of one copy has none)
                    slopes = _slopes(k0, k, nt0, rt0, r0, nt, rt, r)
                    for kk in range(k0 + 1, min(k - 1, last) + 1):
                        out[kk] = _run_value(kind, kk, k0, slopes, nt0, rt0, r0, n_t, n_c)
                if k <= last:
                    out[k] = _joint_value(kind, float(k), nt, rt, r, n_t, n_c)
            k0, nt0, rt0, r0 = k, nt, rt, r


@numba.njit(**_JIT)
def joint_values_at(code, counts, values, neg, kind, n_t, n_c, at, out):
    """:func:`joint_values` at the positions ``at`` only: ``out[j] = V(at[j])``, the same bits.

    A profit curve reads 201 depths of a Criteo-size test set's 4.2M positions: the others'
    values (two divisions each) are not computed, and with 0/1 outcomes a row's copies are
    added at once unless a position falls among them — the sums are whole numbers, so that
    has the bits of one copy at a time (a zero count adds +0.0: only ``V(0)``, written
    apart, comes before a first copy), without a loop of a random trip count, whose
    mispredictions took most of the pass (ties="average" writes only at run ends)."""
    j = 0
    while j < at.shape[0] and at[j] == 0:  # V(0) = 0
        out[j] = 0.0
        j += 1
    n = code.shape[0]
    weighted = counts.shape[0] > 0
    amounts = values.shape[0] > 0
    average = neg.shape[0] > 0
    k = 0
    nt = -0.0
    rt = -0.0
    r = -0.0
    k0, nt0, rt0, r0 = 0, 0.0, 0.0, 0.0
    for i in range(n):
        if j >= at.shape[0]:
            break
        c = code[i]
        t = c >> 1
        y = values[i] if amounts else 0.0
        copies = counts[i] if weighted else 1
        if not amounts and (average or at[j] > k + copies):
            k += copies
            nt += copies * t
            rt += copies * (t & c)
            r += copies * (c & 1)
        else:
            for _ in range(copies):
                k += 1
                nt, rt, r = _add_copy(c, t, y, amounts, nt, rt, r)
                while not average and j < at.shape[0] and at[j] == k:
                    out[j] = _joint_value(kind, float(k), nt, rt, r, n_t, n_c)
                    j += 1
        if average and (i == n - 1 or neg[i + 1] != neg[i]):
            # positions in (k0, k] (each at[j] > k0): inside the run, then at its end
            if j < at.shape[0] and at[j] < k:
                slopes = _slopes(k0, k, nt0, rt0, r0, nt, rt, r)
                while j < at.shape[0] and at[j] < k:
                    out[j] = _run_value(kind, at[j], k0, slopes, nt0, rt0, r0, n_t, n_c)
                    j += 1
            while j < at.shape[0] and at[j] == k:
                out[j] = _joint_value(kind, float(k), nt, rt, r, n_t, n_c)
                j += 1
            k0, nt0, rt0, r0 = k, nt, rt, r


@numba.njit(**_JIT)
def code_totals(code, counts):
    """``Σ counts`` over the rows of each code 0..3 (``np.bincount(code, counts)``, as
    integers), in one pass; empty ``counts``: every row once, from three sums that
    vectorise (rows with y, with t, with both) instead of a counter per code."""
    out = np.zeros(4, dtype=np.int64)
    if counts.shape[0] == 0:
        with_y = 0
        with_t = 0
        both = 0
        for i in range(code.shape[0]):
            c = np.int64(code[i])
            with_y += c & 1
            with_t += c >> 1
            both += (c & 1) & (c >> 1)
        out[3] = both
        out[2] = with_t - both
        out[1] = with_y - both
        out[0] = code.shape[0] - with_y - with_t + both
        return out
    for i in range(code.shape[0]):
        out[code[i]] += counts[i]
    return out


@numba.njit(**_JIT)
def add_draws(w, rows, draws):
    """``w[rows[d]] += 1`` for every draw ``d`` (``w`` uint8); False as soon as a count
    would pass 255 (``w`` then partly counted).  Counted first by draw index (one byte per
    row of the arm: random increments in cache, not random reads of ``rows``), then added
    in row order."""
    local = np.zeros(rows.shape[0], dtype=np.uint8)
    for i in range(draws.shape[0]):
        d = draws[i]
        c = local[d]
        if c == 255:
            return False
        local[d] = c + 1
    for j in range(rows.shape[0]):
        c = w[rows[j]] + local[j]
        if c > 255:
            return False
        w[rows[j]] = c
    return True
