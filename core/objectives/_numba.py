"""Compiled (numba) loops behind :mod:`core.objectives._compiled` (the same algorithms as the
numpy kernels of :mod:`core.objectives._kernels`); imported only when numba is.

Nothing here validates its input: the callers in :mod:`core.objectives._compiled` and
:mod:`core.objectives._plan` pass contiguous arrays of matching sizes and fixed dtypes
(float64 values, int8 classes, int32 or intp indices, uint64 keys; :func:`scatter` also
writes float32), so each function compiles once per dtype combination; ``cache=True`` keeps
the machine code in ``__pycache__`` between processes.

The binned kernel (the expansion of :func:`core.objectives._kernels.binned_query`) runs as

1. :func:`bin_moments` — bins the sorted rows on the equal-width grid and accumulates the
   per-bin partner moments ``Σ_{q ∈ β, c_q = b} W_u(q)(−δ_q)^m``, ``m ≤ 2``;
2. :func:`fft_inputs` → real FFT → :func:`fft_combine` → inverse FFT — the bin-to-bin
   sums ``Σ_β T_k(D_{αβ}) · moment_β`` are convolutions over the grid offset ``β − α``,
   ``O(B log B)`` instead of ``O(B²)``;
3. :func:`rows_signed` (every metric but MAP) or :func:`rows_split` (MAP) — one pass over
   the rows in rank order: each row's polynomial in ``δ_p``, the own-bin partners above
   the row by prefix moments, and the sigmoid-free sum over more relevant partners.

:func:`exact_queries` sums every pair of each query directly, ``O(n²)`` per query with one
exponential per pair and no temporaries; :func:`scatter` writes LightGBM's gradients back
in row order.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "bin_moments",
    "count_distinct",
    "exact_queries",
    "fft_combine",
    "fft_inputs",
    "pack_scores",
    "rows_signed",
    "rows_split",
    "scatter",
    "sort_queries",
    "unpack_sorted",
]

# "contract" only lets LLVM fuse a·b + c into one FMA (one rounding instead of two; ~35 % faster
# row passes); no reassociation, and NaN / inf keep their IEEE meaning.
_JIT = {"cache": True, "fastmath": {"contract"}, "nogil": True}
_N_COEF = 12  # per (bin, class): (f ∈ {ρ, ρ(1−ρ)}) × (j = power of δ_p, 0..2) × (s = 1 or W)


@numba.njit(**_JIT)
def bin_moments(x, cls, w_ok, w_inv, split, n_cls, width, n_bins, raw, delta):
    """Bin ``raw``, offset ``δ`` from the bin centre (both written), moments and per-class
    totals (returned) of one query's sorted rows.

    Bin ``β`` is ``(x₀ − (β+1)·width, x₀ − β·width]`` (the last one closed below too), centre
    ``x₀ − (β + ½)·width`` (``width = 0``, all scores tied: every row in bin 0).
    ``mom[β, b, 3u + m] = Σ_{q ∈ β, c_q = b} W_u(q)·(−δ_q)^m`` for the weight channels
    ``W_0 = 1``, ``W_1 = w_ok`` and (``split``) ``W_2 = w_inv``; ``totals[b] = (rows,
    Σ w_ok, Σ w_inv)`` of class ``b``.
    """
    n = x.size
    top = x[0]
    n_w = 3 if split else 2
    mom = np.zeros((n_bins, n_cls, 3 * n_w))
    totals = np.zeros((n_cls, 3))
    for p in range(n):
        if width > 0.0:
            beta = min(int((top - x[p]) / width), n_bins - 1)
            d = x[p] - (top - (beta + 0.5) * width)
        else:
            beta = 0
            d = 0.0
        raw[p] = beta
        delta[p] = d
        e = -d
        e2 = e * e
        b = cls[p]  # (indexing, not a row view: a view costs a reference count per row)
        mom[beta, b, 0] += 1.0
        mom[beta, b, 1] += e
        mom[beta, b, 2] += e2
        w = w_ok[p]
        mom[beta, b, 3] += w
        mom[beta, b, 4] += w * e
        mom[beta, b, 5] += w * e2
        if split:
            w = w_inv[p]
            mom[beta, b, 6] += w
            mom[beta, b, 7] += w * e
            mom[beta, b, 8] += w * e2
    for beta in range(n_bins):  # the totals from the bins: two stores less per row (−14 %)
        for b in range(n_cls):
            totals[b, 0] += mom[beta, b, 0]
            totals[b, 1] += mom[beta, b, 3]
            if split:
                totals[b, 2] += mom[beta, b, 6]
    return mom, totals


@numba.njit(**_JIT)
def fft_inputs(mom, folds, chan, split, width, n_bins, length):
    """Rows to transform: the Taylor kernels, then the folded moments, zero-padded.

    Kernel rows ``(side, f, k)``: ``r[τ] = T_{f,k}(−τ·width)`` stored circularly (so that
    ``(r ⊛ g)[α] = Σ_β T(D_{αβ}) g[β]`` with ``D_{αβ} = (β − α)·width``), times the side
    mask: signed (``+1`` for ``β ≥ α``, ``−1`` above; the own bin counts below) when not
    ``split``, else one-sided: below (``β ≥ α``) and above (``β < α``).  ``T_{f,k}`` is the
    k-th Taylor coefficient of ``F_0 = ρ``, ``F_1 = ρ(1−ρ)`` (see ``taylor_coefficients``).

    Moment rows ``(t, m, a, s)``: ``Σ_b folds[t, a, b]·mom[β, b, 3·u + m]`` with ``u = 0``
    (``s = 0``) or ``u = chan[t]`` (``s = 1``).
    """
    n_t, n_cls, _ = folds.shape
    n_sides = 2 if split else 1
    n_kern = n_sides * 6
    out = np.zeros((n_kern + n_t * 3 * n_cls * 2, length))
    for tau in range(length):
        if tau < n_bins:
            off = -tau
        elif tau > length - n_bins:
            off = length - tau
        else:
            continue
        d = off * width
        u = 1.0 / (1.0 + math.exp(d)) if d < 700.0 else 0.0  # ρ(D)
        v = u * (1.0 - u)
        tv = (1.0 - 2.0 * u) * v
        coef = (u, -v, 0.5 * tv, v, -tv, 0.5 * v * (1.0 - 6.0 * v))
        for side in range(n_sides):
            if split:
                sign = 1.0 if (off >= 0) == (side == 0) else 0.0
            else:
                sign = 1.0 if off >= 0 else -1.0
            for i in range(6):
                out[side * 6 + i, tau] = sign * coef[i]
    for t in range(n_t):
        for m in range(3):
            for a in range(n_cls):
                for s in range(2):
                    col = m if s == 0 else 3 * chan[t] + m
                    r = n_kern + ((t * 3 + m) * n_cls + a) * 2 + s
                    for b in range(n_cls):
                        k = folds[t, a, b]
                        if k != 0.0:
                            for beta in range(n_bins):
                                out[r, beta] += k * mom[beta, b, col]
    return out


@numba.njit(**_JIT)
def fft_combine(spec, n_t, n_cls, split):
    """Spectra of the tables: ``Σ_{m ≤ 2−j} C(j+m, j)·K̂_{side_t, f, j+m}·M̂_{t, m, a, s}``.

    Output row ``(((t·2 + f)·3 + j)·C + a)·2 + s`` is table ``t``'s coefficient of
    ``δ_p^j`` for ``F_f``, row class ``a`` and weight channel ``s``; split tables alternate
    below / above (``t`` even: below).
    """
    n_freq = spec.shape[1]
    n_kern = 12 if split else 6
    out = np.zeros((n_t * 2 * 3 * n_cls * 2, n_freq), dtype=np.complex128)
    for t in range(n_t):
        side = t % 2 if split else 0
        for f in range(2):
            for j in range(3):
                for m in range(3 - j):
                    binom = 2.0 if (j == 1 and m == 1) else 1.0
                    kr = side * 6 + f * 3 + j + m
                    for a in range(n_cls):
                        for s in range(2):
                            r = (((t * 2 + f) * 3 + j) * n_cls + a) * 2 + s
                            mr = n_kern + ((t * 3 + m) * n_cls + a) * 2 + s
                            for i in range(n_freq):
                                out[r, i] += binom * spec[kr, i] * spec[mr, i]
    return out


@numba.njit(**_JIT)
def _table(conv, n_t, n_cls, n_bins):
    """``tab[t, α, a, f·6 + j·2 + s]``, flattened, from the inverse transforms (rows as in
    fft_combine)."""
    tab = np.empty((n_t, n_bins, n_cls, _N_COEF))
    for t in range(n_t):
        for f in range(2):
            for j in range(3):
                for a in range(n_cls):
                    for s in range(2):
                        r = (((t * 2 + f) * 3 + j) * n_cls + a) * 2 + s
                        c = f * 6 + j * 2 + s
                        for alpha in range(n_bins):
                            tab[t, alpha, a, c] = conv[r, alpha]
    return tab.ravel()


# Helpers of the two row passes.  ``_own_bin``, ``_add_moments`` and ``_poly`` are inlined by
# numba itself (``inline="always"``): LLVM then sees, and fuses into FMAs, the same
# instructions as when they were written out in each pass, so the results are bit-for-bit
# unchanged (as plain calls they changed the last bit of a few hessians).
@numba.njit(**_JIT)
def _enter_row(p, raw, cls, delta, acc, current):
    """Row ``p``'s bin, class, offset ``δ`` and ``δ²``; zeroes the own-bin accumulator ``acc``
    when ``p`` opens a new bin (``current`` is the previous row's bin, ``-1`` before the
    first).  Left to LLVM's inliner: inlined by numba it made the passes about twice as slow."""
    alpha = raw[p]
    if alpha != current:
        # element loop, not ``acc[:] = 0``: with the slice the passes ran ~1.6x slower
        for q in range(acc.shape[0]):
            for m in range(acc.shape[1]):
                acc[q, m] = 0.0
    d = delta[p]
    return alpha, cls[p], d, d * d


@numba.njit(inline="always", **_JIT)
def _own_bin(folds, t, a, before, c):
    """``Σ_q folds[t, a, q]·before[q, m]`` for the count moments ``m = 0, 1, 2`` and the
    weighted moments ``m = c, c + 1, c + 2`` of the own-bin rows above the row."""
    b00 = b01 = b02 = b10 = b11 = b12 = 0.0
    for q in range(folds.shape[2]):
        k = folds[t, a, q]
        b00 += k * before[q, 0]
        b01 += k * before[q, 1]
        b02 += k * before[q, 2]
        b10 += k * before[q, c]
        b11 += k * before[q, c + 1]
        b12 += k * before[q, c + 2]
    return b00, b01, b02, b10, b11, b12


@numba.njit(inline="always", **_JIT)
def _add_moments(before, a, c, w, e, e2):
    """Add ``(w, w·e, w·e²)`` to ``before[a, c : c + 3]``."""
    before[a, c] += w
    before[a, c + 1] += w * e
    before[a, c + 2] += w * e2


@numba.njit(inline="always", **_JIT)
def _poly(tab, i, d):
    """``tab[i] + tab[i + 2]·δ + tab[i + 4]·δ²`` (Horner): a table entry at the row's offset."""
    return tab[i] + d * (tab[i + 2] + d * tab[i + 4])


@numba.njit(**_JIT)
def rows_signed(raw, delta, cls, w, kmat, khi, conv, n_bins, totals, lam, curv):
    """``(Λ, curvature)`` per sorted row, written to ``lam`` and ``curv``, when ok and
    inverted pairs share the weight ``w``.

    ``raw``, ``delta`` and ``totals`` come from :func:`bin_moments`.  The table (``conv``,
    one signed table folded with the full ``K``) holds, per bin ``α`` and row class ``a``,
    ``S_s = Σ_q K[a, c_q]·W_s(q)·sgn_q·F(y_pq)`` as a polynomial in ``δ_p`` (``W_0 = 1``,
    ``W_1 = w``; ``sgn_q = +1`` below the row, ``−1`` above, the own bin counted below).
    Own-bin partners above the row are moved to ``−1`` with their exact-order prefix moments
    (``ρ ≈ ½ − y/4``, ``ρ(1−ρ) ≈ ¼ − y²/16`` around 0), and since ``w`` is monotone,
    ``Σ_q M_pq F(y_pq) = w_p·S_0 − S_1``.  ``khi`` (``K`` above its diagonal) gives the
    sigmoid-free sum over more relevant partners, from running totals.

    The running sums are kept per class — the own-bin prefix moments ``(1, −δ, δ², w, −wδ,
    wδ²)`` and the count and ``Σ w`` of all rows above — and each row folds them with its
    class's row of ``K`` and ``khi`` when it reads them: a row adds to its own class's sums
    only, with no branch on the class.  Keeping them folded per partner class instead (every
    row adding to every class with ``K ≠ 0``) branches on the row's class, and with two
    classes in random order (Abs1 labels) the branches mispredict: the row pass took 405 µs
    instead of 270 at Hillstrom's 30k rows (Rel labels, one dominant class: 333 vs 320).
    """
    n_cls = kmat.shape[0]
    tab = _table(conv, 1, n_cls, n_bins)
    before = np.zeros((n_cls, 6))  # own-bin rows above, per class: (1, −δ, δ², w, −wδ, wδ²)
    above = np.zeros((n_cls, 2))  # all rows above, per class: (count, Σ w)
    free = np.zeros((n_cls, 2))  # Σ_q khi[a, c_q]·(1, w) over all rows
    khi2 = 2.0 * khi  # a row above moves from the rows below to those above: twice
    for a in range(n_cls):
        for q in range(n_cls):
            free[a, 0] += khi[a, q] * totals[q, 0]
            free[a, 1] += khi[a, q] * totals[q, 1]
    current = -1
    for p in range(raw.size):
        current, a, d, d2 = _enter_row(p, raw, cls, delta, before, current)
        wp = w[p]
        b00 = b01 = b02 = b10 = b11 = b12 = 0.0
        f0 = free[a, 0]  # Σ khi·(1, w) over the rows below minus those above
        f1 = free[a, 1]
        for q in range(n_cls):
            k = kmat[a, q]
            b00 += k * before[q, 0]
            b01 += k * before[q, 1]
            b02 += k * before[q, 2]
            b10 += k * before[q, 3]
            b11 += k * before[q, 4]
            b12 += k * before[q, 5]
            f0 -= khi2[a, q] * above[q, 0]
            f1 -= khi2[a, q] * above[q, 1]
        i = (current * n_cls + a) * _N_COEF
        # table value minus twice the own-bin part above the row
        r0 = _poly(tab, i, d) - (b00 - 0.5 * (d * b00 + b01))
        r1 = _poly(tab, i + 1, d) - (b10 - 0.5 * (d * b10 + b11))
        v0 = _poly(tab, i + 6, d) - (0.5 * b00 - 0.125 * (d2 * b00 + 2.0 * d * b01 + b02))
        v1 = _poly(tab, i + 7, d) - (0.5 * b10 - 0.125 * (d2 * b10 + 2.0 * d * b11 + b12))
        hi = wp * f0 - f1
        lam[p] = wp * r0 - r1 - hi
        curv[p] = wp * v0 - v1
        e = -d
        before[a, 0] += 1.0
        before[a, 1] += e
        before[a, 2] += d2
        before[a, 3] += wp
        before[a, 4] += wp * e
        before[a, 5] += wp * d2
        above[a, 0] += 1.0
        above[a, 1] += wp


@numba.njit(**_JIT)
def rows_split(raw, delta, cls, w_ok, w_inv, khi, folds, conv, n_bins, totals, lam, curv):
    """:func:`rows_signed` for MAP, where ok and inverted pairs weigh differently.

    Four one-sided tables ``t``: (less relevant partners, below the row; w_ok), (less
    relevant, above; w_inv), (more relevant, below; w_inv), (more relevant, above; w_ok)
    — see ``core.objectives._kernels._combine_split``.  Table ``t`` adds
    ``±(W(p)·S_0 − S_1)`` (``+`` below, ``−`` above); the own bin counts below, so its
    partners above the row move from the below tables to the above ones.
    """
    n_cls = folds.shape[1]
    tab = _table(conv, 4, n_cls, n_bins)
    before = np.zeros((n_cls, 9))  # (1, −δ, δ²) × (1, w_ok, w_inv)
    above = np.zeros((n_cls, 3))  # per class: count, Σ w_ok, Σ w_inv of the rows above
    current = -1
    for p in range(raw.size):
        current, a, d, d2 = _enter_row(p, raw, cls, delta, before, current)
        wo = w_ok[p]
        wi = w_inv[p]
        rho = 0.0
        crv = 0.0
        for t in range(4):
            c = 3 if t == 0 or t == 3 else 6  # partner weight: w_ok or w_inv
            b00, b01, b02, b10, b11, b12 = _own_bin(folds, t, a, before, c)
            own = -1.0 if t % 2 == 0 else 1.0
            i = ((t * n_bins + current) * n_cls + a) * _N_COEF
            r0 = _poly(tab, i, d) + own * (0.5 * b00 - 0.25 * (d * b00 + b01))
            r1 = _poly(tab, i + 1, d) + own * (0.5 * b10 - 0.25 * (d * b10 + b11))
            v0 = _poly(tab, i + 6, d) + own * (
                0.25 * b00 - 0.0625 * (d2 * b00 + 2.0 * d * b01 + b02))
            v1 = _poly(tab, i + 7, d) + own * (
                0.25 * b10 - 0.0625 * (d2 * b10 + 2.0 * d * b11 + b12))
            wt = wo if t == 0 or t == 3 else wi
            sign = -own
            rho += sign * (wt * r0 - r1)
            crv += sign * (wt * v0 - v1)
        hi = 0.0
        for q in range(n_cls):
            hi += khi[a, q] * (wi * (totals[q, 0] - above[q, 0]) - (totals[q, 2] - above[q, 2])
                               + above[q, 1] - wo * above[q, 0])
        lam[p] = rho - hi
        curv[p] = crv
        _add_moments(before, a, 0, 1.0, -d, d2)
        _add_moments(before, a, 3, wo, -d, d2)
        _add_moments(before, a, 6, wi, -d, d2)
        above[a, 0] += 1.0
        above[a, 1] += wo
        above[a, 2] += wi


@numba.njit(**_JIT)
def exact_queries(starts, sizes, scale, x, rel, gain, w_ok, w_inv, split, lam, curv):
    """Exact ``(Λ, curvature)`` of sorted queries, accumulated into ``lam`` and ``curv``.

    Every pair ``i < j`` (``i`` the upper slot) once: ``M = |g_i − g_j|·scale·|W(i) − W(j)|``
    with ``W = w_ok`` when the upper row is the more relevant one (``split``) and ``w_inv``
    otherwise; ``ρ_ij = 1/(1 + e^{x_i − x_j})`` and ``ρ_ji = 1 − ρ_ij`` from one exponential.
    """
    for qi in range(starts.size):
        lo = starts[qi]
        hi = lo + sizes[qi]
        sc = scale[qi]
        for i in range(lo, hi):
            gi = gain[i]
            ri = rel[i]
            xi = x[i]
            li = 0.0
            ci = 0.0
            for j in range(i + 1, hi):
                dg = gi - gain[j]
                if dg == 0.0:
                    continue
                rj = rel[j]
                if split and not ri > rj:
                    dw = w_inv[i] - w_inv[j]
                else:
                    dw = w_ok[i] - w_ok[j]
                m = abs(dg) * abs(dw) * sc
                if m == 0.0:
                    continue
                y = xi - x[j]
                if y > 0.0:
                    e = math.exp(-y)
                    r_ji = 1.0 / (1.0 + e)
                    r_ij = e * r_ji
                else:
                    e = math.exp(y)
                    r_ij = 1.0 / (1.0 + e)
                    r_ji = e * r_ij
                h = m * r_ij * r_ji
                li += m * r_ij
                lam[j] += m * r_ji
                if rj > ri:
                    li -= m
                elif ri > rj:
                    lam[j] -= m
                ci += h
                curv[j] += h
            lam[i] += li
            curv[i] += ci


@numba.njit(**_JIT)
def _insert(xs, order, first, j, v, r):
    """Insertion step by the rank order (score descending, then row ascending): slot ``j``
    gets score ``v`` of row ``r``, moved above the sorted slots ``[first, j)`` that rank
    below it; returns how many slots moved down.  Right for slots filled in any order (a
    stable fill never moves a tie)."""
    i = j - 1
    while i >= first and (xs[i] < v or (xs[i] == v and order[i] > r)):
        xs[i + 1] = xs[i]
        order[i + 1] = order[i]
        i -= 1
    xs[i + 1] = v
    order[i + 1] = r
    return j - 1 - i


#: :func:`sort_queries` starts from the previous ranking for queries up to this many rows; a
#: larger query's scores no longer fit in the CPU's caches, and reading them in that order
#: (random rows) cost more than it saved: 0.35–0.6 s instead of 0.12–0.22 s per round from row
#: order on a 12M-row query of tie-heavy scores.
WARM_MAX_ROWS = 1 << 19


@numba.njit(**_JIT)
def _fill_buckets(x, top, bottom, rows, from_rows, first_row, order, xs, count, key):
    """Counting sort of one query's rows into equal-width buckets, one per two rows, taken
    in the order of ``rows`` (``from_rows``) or in row order (stable; ``x`` is then the
    query's own slice, its first row ``first_row``); ``order`` and ``xs`` are the query's
    slices; returns the number of buckets (``count[k]`` then ends bucket ``k``; ``key``
    holds each row's bucket).  A row's bucket is
    ``⌊(top − x)·(buckets / span)⌋`` (``span = top − bottom``, finite; divided instead when
    the reciprocal overflows): monotone in ``x``, which is all the sort needs.  Every index
    is relative to the query's slices (0-based loops compile to tighter code than offset
    ones, ~25 % here)."""
    m = order.size
    n_buckets = max(m // 2, 1)
    span = top - bottom
    scale = n_buckets / span
    finite = scale < np.inf  # a subnormal span overflows the reciprocal
    for k in range(n_buckets + 1):
        count[k] = 0
    top_bucket = n_buckets - 1
    if from_rows and finite:  # the usual case, its own loop (a branch in it costs ~25 %)
        for i in range(m):
            k = min(int((top - x[rows[i]]) * scale), top_bucket)
            key[i] = k
            count[k + 1] += 1
    else:
        for i in range(m):
            gap = top - x[rows[i] if from_rows else i]
            k = min(int(gap * scale if finite else gap / span * n_buckets), top_bucket)
            key[i] = k
            count[k + 1] += 1
    run = 0
    for k in range(n_buckets + 1):  # running total in a register: no store-load chain
        run += count[k]
        count[k] = run
    if from_rows:
        for i in range(m):
            k = key[i]
            j = count[k]
            count[k] = j + 1
            r = rows[i]
            order[j] = r
            xs[j] = x[r]
    else:
        for i in range(m):
            k = key[i]
            j = count[k]
            count[k] = j + 1
            order[j] = first_row + i
            xs[j] = x[i]
    return n_buckets


@numba.njit(**_JIT)
def sort_queries(x, starts, sizes, prev, order, xs, bucket):
    """Rows of each query by score descending, ties by row order: ``order`` and ``xs = x[order]``.

    A bucket sort per query that starts from ``prev``, a previous ranking (any permutation of
    each query's rows: the order is exact whatever it holds, and the sort fast when it is
    the last boosting round's), for queries up to :data:`WARM_MAX_ROWS` rows: the rows,
    taken in ``prev``'s order, go to equal-width buckets, one per two rows (counting sort),
    then one insertion pass by the full rank order repairs what moved inside a bucket —
    under one move per row between most rounds of boosting, and no mispredicted branch for
    the rows already in place.  When that pass exceeds ``8m + 1024`` moves (``prev`` far
    from the order, or a large tie that split inside a bucket: ~1 % of Hillstrom's rounds),
    the query is sorted again from row order: buckets filled stably in row order, then a
    stable insertion sort inside each bucket, or a stable merge sort for a bucket of over
    256 rows that is not already in order (scores crowded by outliers), so the worst case
    is ``O(n log n)``; larger queries are sorted this way from the start.
    ``bucket`` is scratch (``2n + 1``, the counts and each row's bucket), of ``order``'s
    integer type (int32 halves the memory the sort touches); ``prev`` is read only and must
    not be ``order``.  0.2 ms at 30,000 rows between boosting rounds (0.25–0.45 ms from row
    order); numpy's stable argsort takes 2 ms.
    """
    for qi in range(starts.size):
        lo = starts[qi]
        m = sizes[qi]
        hi = lo + m
        xq, oq, sq = x[lo:hi], order[lo:hi], xs[lo:hi]  # the query's own slices, 0-based
        count = bucket[lo:lo + m // 2 + 2]
        key = bucket[x.size + 1 + lo:x.size + 1 + hi]  # (after every query's counts)
        top = xq[0]
        bottom = xq[0]
        for i in range(1, m):
            top = max(top, xq[i])
            bottom = min(bottom, xq[i])
        if not top > bottom:  # all tied (or one row): row order
            for i in range(m):
                oq[i] = lo + i
                sq[i] = xq[i]
            continue
        if m <= WARM_MAX_ROWS:
            _fill_buckets(x, top, bottom, prev[lo:hi], True, lo, oq, sq, count, key)
            budget = 8 * m + 1024
            moves = 0
            for j in range(1, m):
                v = sq[j]
                r = oq[j]
                u = sq[j - 1]
                if u < v or (u == v and oq[j - 1] > r):  # rare: a branch predicted right
                    moves += _insert(sq, oq, 0, j, v, r)
                    if moves > budget:
                        break
            if moves <= budget:
                continue
        # a large query, or far from ``prev``: buckets filled in row order, each sorted
        n_buckets = _fill_buckets(xq, top, bottom, prev[lo:hi], False, lo, oq, sq, count, key)
        first = 0  # count[k] now ends bucket k
        for k in range(n_buckets):
            last = count[k]
            if last - first > 256:
                ordered = True
                for j in range(first + 1, last):
                    if sq[j] > sq[j - 1]:
                        ordered = False
                        break
                if not ordered:
                    sub = np.argsort(-sq[first:last], kind="mergesort")  # stable
                    rows = oq[first:last][sub]
                    vals = sq[first:last][sub]
                    oq[first:last] = rows
                    sq[first:last] = vals
            else:
                for j in range(first + 1, last):
                    _insert(sq, oq, first, j, sq[j], oq[j])
            first = last


_SIGN = np.uint64(1) << np.uint64(63)
_NEG_ZERO = _SIGN  # the bits of −0.0


@numba.njit(inline="always", **_JIT)
def _index_mask(m):
    """``2^b − 1`` for the least ``b ≥ 1`` with ``2^b ≥ m``: the key bits of a row index."""
    b = 1
    while (1 << b) < m:
        b += 1
    return np.uint64((1 << b) - 1)


@numba.njit(**_JIT)
def pack_scores(bits_x, starts, sizes, keys):
    """Sort keys of every query's scores: ``np.sort`` of a query's keys is its rows by score
    descending, ties by row order, up to near-ties (see :func:`unpack_sorted`).

    ``bits_x`` is the float64 scores viewed as uint64.  Each float maps to a uint64 that
    increases with the score (sign bit flipped for ``x ≥ 0``, all bits for ``x < 0``; −0.0
    counts as +0.0), complemented so that *higher* scores get *smaller* keys; its low ``b``
    bits are then replaced by the row's index in its query (``2^b ≥`` the query's size).
    Rows with different keys are in score order; rows sharing everything but the low ``b``
    bits (equal scores, or scores within about ``2^(b−52)`` of each other) are in row order,
    which is right for ties and fixed by :func:`unpack_sorted` for near-ties.
    """
    for qi in range(starts.size):
        lo = starts[qi]
        m = sizes[qi]
        mask = _index_mask(m)
        for i in range(m):
            u = bits_x[lo + i]
            if u == _NEG_ZERO:
                u = np.uint64(0)
            up = u ^ _SIGN if u < _SIGN else ~u  # increasing in the score
            keys[lo + i] = (~up & ~mask) | np.uint64(i)


@numba.njit(**_JIT)
def unpack_sorted(keys, x, lo, m, order, xs, budget):
    """One query's rows in rank order from its sorted keys (:func:`pack_scores` then
    ``np.sort``): ``order`` and ``xs = x[order]`` on ``[lo, lo + m)``; returns False (order
    unfinished) when the near-tie repairs exceed ``budget`` element moves.

    The keys put rows in exact order except for near-ties (scores that differ only in the bits
    the row index replaced), which come in row order; a stable insertion step moves each row
    above the lower scores it follows — no moves for the usual input, ``budget`` bounds the
    pathological one (the caller then sorts the query another way).
    """
    mask = _index_mask(m)
    moves = 0
    for j in range(lo, lo + m):
        r = lo + np.int64(keys[j] & mask)
        moves += _insert(xs, order, lo, j, x[r], r)
        if moves > budget:
            return False
    return True


@numba.njit(**_JIT)
def count_distinct(xs):
    """Number of distinct values in the sorted ``xs`` (1 + the steps between neighbours)."""
    steps = 0
    for j in range(1, xs.size):
        steps += xs[j] != xs[j - 1]
    return steps + (xs.size > 0)


@numba.njit(**_JIT)
def scatter(order, lam, curv, sigma, weight, grad, hess):
    """LightGBM's ``grad = −σ·Λ`` and ``hess = σ²·max(curvature, 0)``, back in row order and
    times the row ``weight`` (none when empty); ``grad`` and ``hess`` may be float32."""
    s2 = sigma * sigma
    weighted = weight.size > 0
    for i in range(order.size):
        r = order[i]
        g = -sigma * lam[i]
        c = curv[i]
        h = s2 * c if c > 0.0 else 0.0
        if weighted:
            g *= weight[r]
            h *= weight[r]
        grad[r] = g
        hess[r] = h
