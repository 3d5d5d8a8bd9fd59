"""Private λ-gradient kernels behind :mod:`core.objectives.lambdas`: the vectorised numpy back-end.

:mod:`core.objectives._compiled` runs the same algorithms as compiled numba loops (used when
numba is installed); both share :func:`grid`, the bins.

Every kernel works on queries whose rows are **already sorted by score, descending** (slot
``i`` holds position ``i + 1``) and trusts its input; validation happens once, in
:class:`core.objectives._plan.Plan` and the public entry points of
:mod:`core.objectives.lambdas`.

Notation (σ is already folded into the scores, ``x = σ·s``):

* ``y_pq = x_p − x_q`` and the RankNet factor ``ρ(y) = 1 / (1 + e^y)``;
* ``M_pq ≥ 0`` is the pair's ``|ΔM|``, the change of the metric when rows ``p`` and ``q``
  swap positions (zero when their relevance is equal);
* the *up-push* of row ``p`` is (using ``ρ(−y) = 1 − ρ(y)``)

  .. math::

      Λ_p = \\sum_{q:\\,r_q<r_p} M_{pq}\\,ρ(y_{pq}) - \\sum_{q:\\,r_q>r_p} M_{pq}\\,ρ(y_{qp})
          = \\sum_{q} M_{pq}\\,ρ(y_{pq}) - \\sum_{q:\\,r_q>r_p} M_{pq},

  so the sigmoid enters through one sum over *all* partners, and the sum over
  more-relevant partners is sigmoid-free (exact in every method);
* the curvature is ``Σ_q M_pq ρ(y_pq)(1 − ρ(y_pq))``.

Pair magnitudes have the form ``M_pq = K[c_p, c_q] · |W(p) − W(q)|``: ``K`` is a class-pair
matrix (``|g_a − g_b|`` times the query's scale, zero on the diagonal) and ``W`` a per-slot
weight, monotone in the position.  ``W`` is ``w_ok`` when the upper row of the pair is the
more relevant one and ``w_inv`` otherwise; they coincide for every ``gain × position-weight``
metric and differ only for MAP.
"""

from __future__ import annotations

import contextlib
from math import comb
from typing import NamedTuple

import numpy as np
from scipy.special import expit

__all__ = ["bin_rows", "binned_query", "exact_batch", "grid", "single_thread_blas"]

#: Taylor order of the expansion of ρ and ρ(1−ρ) around bin-centre differences (fixed:
#: :func:`taylor_coefficients` holds the closed forms up to second order).
TAYLOR_ORDER = 2
#: Largest bin width (in units of σ·score) before the kernel adds bins beyond ``bins``.
MAX_BIN_WIDTH = 0.1
#: The kernel never uses more than ``MAX_BIN_FACTOR * bins`` bins.
MAX_BIN_FACTOR = 4
#: Widest bin (σ·score units) the binned kernel is trusted with: scores spread wider than
#: ``MAX_BIN_FACTOR · bins · TRUSTED_BIN_WIDTH`` (an outlier, heavy tails) go to the exact
#: kernel (see ``Plan``).  3,000 rows, 256 bins, largest error relative to the largest exact
#: value — width 0.22: gradient 9e-8, hessian 7e-5; 0.34: 1e-7, 3e-4; 0.82: 7e-7, 6e-3;
#: Cauchy scores (width 3.3): 0.07, 0.9; one score at 1e4 (width 9.8): 0.5, 1.0.
TRUSTED_BIN_WIDTH = 0.25
#: Pair-matrix elements per chunk in the exact kernel (8 MB per temporary array).
EXACT_CHUNK = 1 << 20


_BLAS_CONTROLLER = None


def single_thread_blas() -> contextlib.AbstractContextManager:
    """Context manager limiting BLAS to one thread (a no-op without ``threadpoolctl``).

    The binned kernel multiplies many small (``B × B``) matrices; multi-threaded OpenBLAS
    is up to 20× slower on those than one thread, and it competes with LightGBM's threads.
    """
    global _BLAS_CONTROLLER
    try:
        if _BLAS_CONTROLLER is None:
            from threadpoolctl import ThreadpoolController

            _BLAS_CONTROLLER = ThreadpoolController()
        return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # pragma: no cover - threadpoolctl missing or unusable
        return contextlib.nullcontext()


# --------------------------------------------------------------------------------------------
# Taylor coefficients of ρ and ρ(1 − ρ)
# --------------------------------------------------------------------------------------------
def taylor_coefficients(d: np.ndarray | float) -> np.ndarray:
    """``T[f, k, ...] = F_f^{(k)}(d) / k!`` for ``F_0 = ρ``, ``F_1 = ρ(1−ρ)`` and ``k ≤ 2``.

    With ``u = ρ(d)``, ``v = u(1 − u)`` and ``t = 1 − 2u`` (so ``dρ/dy = −v`` and
    ``dv/dy = −t·v``): ``ρ' = −v``, ``ρ'' = t·v``, ``v' = −t·v``, ``v'' = v(1 − 6v)``.
    """
    u = expit(-np.asarray(d, dtype=np.float64))
    v = u * (1.0 - u)
    tv = (1.0 - 2.0 * u) * v
    out = np.empty((2, TAYLOR_ORDER + 1) + u.shape)
    out[0, 0] = u
    out[0, 1] = -v
    out[0, 2] = 0.5 * tv
    out[1, 0] = v
    out[1, 1] = -tv
    out[1, 2] = 0.5 * v * (1.0 - 6.0 * v)
    return out


def _near_coefficients() -> np.ndarray:
    """``N[f, j, m] = C(j+m, j)·F_f^{(j+m)}(0)/(j+m)!`` (zero when ``j + m > order``).

    ``F(0 + δ_p + e_q) = Σ_{j,m} δ_p^j · N[f, j, m] · e_q^m`` for two rows of the same bin.
    """
    t0 = taylor_coefficients(0.0)
    out = np.zeros((2, TAYLOR_ORDER + 1, TAYLOR_ORDER + 1))
    for j in range(TAYLOR_ORDER + 1):
        for m in range(TAYLOR_ORDER + 1 - j):
            out[:, j, m] = comb(j + m, j) * t0[:, j + m]
    return out


_NEAR = _near_coefficients()


# --------------------------------------------------------------------------------------------
# exact kernel: dense pair blocks, batched over padded queries
# --------------------------------------------------------------------------------------------
def exact_batch(
    x: np.ndarray,
    rel: np.ndarray,
    gain: np.ndarray,
    w_ok: np.ndarray,
    w_inv: np.ndarray | None,
    scale: np.ndarray,
    valid: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``(Λ, curvature)`` for a batch of sorted, padded queries, shape ``(Q, L)``.

    ``M_pq = |g_p − g_q| · scale · |W(p) − W(q)|`` on every pair of valid slots.  The pair
    matrices are built in chunks of at most :data:`EXACT_CHUNK` elements (over queries, or
    over rows of one query when ``L²`` alone exceeds the chunk), so memory stays bounded.
    """
    q_count, length = x.shape
    lam = np.zeros((q_count, length))
    curv = np.zeros((q_count, length))
    per_query = length * length
    q_step = max(1, EXACT_CHUNK // per_query)
    r_step = length if per_query <= EXACT_CHUNK else max(1, EXACT_CHUNK // length)
    slots = np.arange(length)
    padded = not valid.all()
    for q0 in range(0, q_count, q_step):
        qs = slice(q0, q0 + q_step)
        for r0 in range(0, length, r_step):
            rs = slice(r0, r0 + r_step)
            lam[qs, rs], curv[qs, rs] = _exact_block(
                x[qs], rel[qs], gain[qs], w_ok[qs], None if w_inv is None else w_inv[qs],
                valid[qs] if padded else None, rs, slots,
            )
    # |ΔM| is linear in the query's scale: apply it once per row
    lam *= scale[:, None]
    curv *= scale[:, None]
    return lam, curv


def _exact_block(x, rel, gain, w_ok, w_inv, valid, rs, slots):
    """Rows ``rs`` of every query in the batch against all of that query's slots."""
    rp, rq = rel[:, rs, None], rel[:, None, :]
    mag = np.abs(gain[:, rs, None] - gain[:, None, :])
    if valid is not None:
        mag *= valid[:, rs, None] & valid[:, None, :]
    dw = np.abs(w_ok[:, rs, None] - w_ok[:, None, :])
    if w_inv is not None:
        # a pair is "ok" when its upper row (smaller slot) is the more relevant one
        upper_is_p = slots[rs, None] < slots[None, :]
        ok = (rp > rq) == upper_is_p
        dw = np.where(ok, dw, np.abs(w_inv[:, rs, None] - w_inv[:, None, :]))
    mag *= dw
    rho = np.subtract(x[:, None, :], x[:, rs, None])
    expit(rho, out=rho)  # ρ(y_pq) = 1 / (1 + e^{x_p − x_q})
    lam = np.einsum("qij,qij->qi", mag, rho) - np.einsum("qij,qij->qi", mag, rq > rp)
    np.multiply(rho, 1.0 - rho, out=rho)
    curv = np.einsum("qij,qij->qi", mag, rho)
    return lam, curv


# --------------------------------------------------------------------------------------------
# binned kernel: one large query, O(n·C + B²·C)
# --------------------------------------------------------------------------------------------
class Bins(NamedTuple):
    """Equal-width score bins of one sorted query (only non-empty bins are kept)."""

    starts: np.ndarray  #: first sorted row of each bin
    ends: np.ndarray  #: one past the last sorted row of each bin
    row_bin: np.ndarray  #: bin of each sorted row (0 .. nb − 1)
    grid: np.ndarray  #: index of each bin on the full equal-width grid
    width: float
    delta: np.ndarray  #: offset of each row from its bin's grid centre, |δ| ≤ width / 2


def bin_rows(x: np.ndarray, bins: int) -> Bins:
    """Cut sorted scores into equal-width bins.

    The width is ``span / bins``, shrunk to :data:`MAX_BIN_WIDTH` when wider (but never to
    more than ``MAX_BIN_FACTOR * bins`` bins), because the Taylor error grows like
    ``width³``.  Bins are contiguous runs of the sorted rows; centres lie on a regular grid,
    so the centre differences ``D_{αβ}`` only depend on ``grid_β − grid_α``.
    """
    n = x.size
    width, n_raw = grid(x, bins)
    if width == 0:
        zero = np.zeros(n)
        return Bins(np.array([0]), np.array([n]), np.zeros(n, np.intp), np.array([0]), 0.0, zero)
    raw = np.minimum(((x[0] - x) / width).astype(np.intp), n_raw - 1)
    change = raw[1:] != raw[:-1]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    ends = np.append(starts[1:], n)
    row_bin = np.concatenate(([0], np.cumsum(change)))
    delta = x - (x[0] - (raw + 0.5) * width)
    return Bins(starts, ends, row_bin, raw[starts], float(width), delta)


def grid(x: np.ndarray, bins: int) -> tuple[float, int]:
    """Bin width and number of grid bins for sorted scores ``x`` (width 0: all tied)."""
    span = float(x[0] - x[-1])
    if not span > 0:
        return 0.0, 1
    width = span / bins
    if width > MAX_BIN_WIDTH:
        width = max(MAX_BIN_WIDTH, span / (bins * MAX_BIN_FACTOR))
    return width, int(np.ceil(span / width))


def _side_taylor(bins: Bins, split: bool) -> list[np.ndarray]:
    """Taylor coefficients of ρ and ρ(1−ρ) at every bin pair, masked by side.

    ``D_{αβ} = (grid_β − grid_α)·width``, so the coefficients are computed once per grid
    offset and gathered.  Signed mode returns one array, ``+T`` where the partner bin β is
    below α and ``−T`` where it is above; split mode returns the two one-sided arrays.
    """
    reach = int(bins.grid[-1])
    offsets = np.arange(-reach, reach + 1)
    coef = taylor_coefficients(offsets * bins.width)  # (2, M, 2·reach + 1)
    index = bins.grid[None, :] - bins.grid[:, None] + reach
    if split:
        return [(coef * (offsets > 0))[:, :, index], (coef * (offsets < 0))[:, :, index]]
    return [(coef * np.sign(offsets))[:, :, index]]


def binned_query(
    x: np.ndarray,
    cls: np.ndarray,
    kmat: np.ndarray,
    w_ok: np.ndarray,
    w_inv: np.ndarray | None,
    bins: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Binned ``(Λ, curvature)`` of one sorted query in ``O(n·C + B²·C)``.

    Parameters
    ----------
    x : (n,) σ-scaled scores, sorted descending.
    cls : (n,) relevance class of each sorted row, classes ordered by relevance.
    kmat : (C, C) class-pair factor ``K[a, b] ≥ 0`` with a zero diagonal.
    w_ok, w_inv : (n,) position weights of the sorted slots (``w_inv=None``: same as ok).
    bins : number of equal-width score bins (see :func:`bin_rows`).

    Notes
    -----
    With bin centres ``c`` and offsets ``δ_p = x_p − c_{α(p)}`` (``|δ| ≤ width/2``), every
    pair's score gap is ``y_pq = D_{αβ} + δ_p − δ_q`` with ``D = c_α − c_β``.  Both
    ``F ∈ {ρ, ρ(1−ρ)}`` are expanded to second order around ``D``::

        F(y_pq) ≈ Σ_{j+m ≤ 2} C(j+m, j) F^{(j+m)}(D)/(j+m)! · δ_p^j · (−δ_q)^m,

    which separates the row ``p`` from its partner ``q``:

    * partners in other bins enter through per-bin moments ``Σ_q K[a, c_q] W(q) (−δ_q)^m``
      (one set per row class ``a``) and ``B × B`` matrix products;
    * partners in the row's own bin (``D = 0``) are split exactly at the row by prefix sums
      over rank order; there ``ρ(y) = ½ − y/4 + O(y³)``, and the ``δ_q²`` term of
      ``ρ(1−ρ) = ¼ − y²/16 + O(y⁴)`` is dropped (curvature error ``≤ width²/64`` per pair).

    ``|W(p) − W(q)|`` is exact: ``W`` is monotone in the position, so its sign is known from
    the rank order and the sum splits into ``W(p)·Σ F − Σ W(q)·F``.  The only approximation is
    the truncated Taylor series: ``|F − F̃| ≲ 0.02·width³`` per pair for the gradient.
    """
    n = x.size
    if n < 2 or not kmat.any():
        return np.zeros(n), np.zeros(n)
    n_cls = kmat.shape[0]
    cls = cls.astype(np.intp, copy=False)  # (the plan keeps int8 classes: index arithmetic)
    split = w_inv is not None
    bins_ = bin_rows(x, bins)
    nb = bins_.starts.size
    delta = bins_.delta

    weights = np.stack([np.ones(n), w_ok] + ([w_inv] if split else []))  # (J, n)
    n_w = weights.shape[0]
    chan1 = weights * -delta  # W_u(q)·(−δ_q)
    # per-bin, per-class partner moments (C, J, 3, nb), m = 0, 1, 2
    key = cls * nb + bins_.row_bin
    mom = np.empty((n_cls, n_w, 3, nb))
    for u in range(n_w):
        for m, vals in enumerate((weights[u], chan1[u], chan1[u] * -delta)):
            mom[:, u, m] = np.bincount(key, weights=vals, minlength=n_cls * nb).reshape(
                n_cls, nb
            )
    if split:  # folds: less / more relevant partners; sides: below / above the row
        folds = [np.tril(kmat, -1), np.triu(kmat, 1)]
        sides = [(-1.0, 1.0, 0.0), (1.0, 0.0, -1.0)]  # (own, bin-through, bin-before) signs
    else:  # fold: all partners (with signed sides); plus more relevant ones, sigmoid-free
        folds = [kmat]
        sides = [(-2.0, 1.0, 1.0)]
    khi = np.triu(kmat, 1)

    # per-row prefix sums through the row, over the whole query, of K_f[c_p, c_q]·W_u(q)·e^m
    # for m = 0, 1 (and, signed mode only, the K_hi fold at m = 0 for the sigmoid-free sum).
    # A row reads the fold of its own class; K[a, a] = 0 so "through" equals "before" it.
    blocks = [(kf, np.concatenate([weights, chan1])) for kf in folds]
    if not split:
        blocks.append((khi, weights))
    n_ch = sum(v.shape[0] for _, v in blocks)
    z = np.empty((n_ch, n_cls, n))
    row = 0
    for kf, vals in blocks:
        np.multiply(vals[:, None, :], kf[:, cls][None], out=z[row:row + vals.shape[0]])
        row += vals.shape[0]
    np.cumsum(z, axis=-1, out=z)
    through = z.reshape(n_ch, -1).take(cls * n + np.arange(n), axis=1)  # (n_ch, n)

    taylor = _side_taylor(bins_, split)
    dpow = np.stack([np.ones(n), delta, delta * delta])  # (j, n): δ_p^j
    near_poly = np.tensordot(_NEAR[:, :, :2], dpow, axes=([1], [0]))  # (f, m, n)
    table_row = bins_.row_bin * n_cls + cls
    sums = []
    for f_no, kf in enumerate(folds):
        mom_f = np.einsum("ab,bumk->aumk", kf, mom)  # (C(a), J, 3, nb)
        before = np.cumsum(mom_f[:, :, :2], axis=-1) - mom_f[:, :, :2]  # bins above α
        own = through[f_no * 2 * n_w:(f_no + 1) * 2 * n_w].reshape(2, n_w, n)  # (m, u, n)
        own_term = near_poly[:, 0, None] * own[0][None]
        own_term += near_poly[:, 1, None] * own[1][None]  # (f, u, n)
        for tay, (own_sign, through_sign, before_sign) in zip(taylor, sides, strict=True):
            near = through_sign * (before + mom_f[:, :, :2]) + before_sign * before
            table = _bin_table(tay, mom_f, near)  # (f, j, u, nb, C)
            per_row = table.reshape(6 * n_w, -1).take(table_row, axis=1).reshape(2, 3, n_w, n)
            val = own_sign * own_term
            val += per_row[:, 0]
            val += per_row[:, 1] * delta
            val += per_row[:, 2] * dpow[2]
            sums.append(val)

    total = np.einsum("ab,bu->ua", khi, mom[:, :, 0].sum(-1))[:, cls]  # (J, n)
    if split:
        hi0 = through[2 * n_w:3 * n_w]  # hi fold, m = 0: partners at or above the row
        below = total - hi0
        sig_free = (w_inv * below[0] - below[2]) + (hi0[1] - w_ok * hi0[0])
        d_rho = _combine_split(sums, 0, w_ok, w_inv)
        d_curv = _combine_split(sums, 1, w_ok, w_inv)
    else:
        signed = total - 2.0 * through[2 * n_w:]  # below − above
        sig_free = w_ok * signed[0] - signed[1]
        d_rho = w_ok * sums[0][0, 0] - sums[0][0, 1]
        d_curv = w_ok * sums[0][1, 0] - sums[0][1, 1]
    return d_rho - sig_free, d_curv


def _bin_table(taylor: np.ndarray, mom: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Per (row bin α, row class a) polynomial coefficients in ``δ_p``.

    ``A[f, j, u, α, a] = Σ_m C(j+m, j) Σ_β T[f, j+m, α, β]·mom[a, u, m, β]`` (other bins)
    ``+ Σ_{m<2} N[f, j, m]·near[a, u, m, α]`` (the whole-bin part of the row's own bin).
    """
    n_f, n_k, nb, _ = taylor.shape
    n_cls, n_w, _, _ = mom.shape
    table = np.zeros((n_f, n_k, n_w, nb, n_cls))
    for k in range(n_k):
        # T_k pairs with partner moments m = 0..k and row powers j = k − m
        right = mom[:, :, : k + 1, :].reshape(-1, nb).T  # (nb, C·J·(k+1))
        prod = (taylor[:, k].reshape(n_f * nb, nb) @ right).reshape(n_f, nb, n_cls, n_w, k + 1)
        for m in range(k + 1):
            table[:, k - m] += comb(k, m) * prod[..., m].transpose(0, 3, 1, 2)
    near_t = near.transpose(2, 1, 3, 0)  # (m, u, α, a)
    for j in range(n_k):
        for m in range(min(2, n_k - j)):
            table[:, j] += _NEAR[:, j, m, None, None, None] * near_t[m][None]
    return table


def _combine_split(sums, f, w_ok, w_inv):
    """``Σ_q M_pq F(y_pq)`` when ok and inverted pairs use different weights (MAP).

    ``sums`` holds (lo-below, lo-above, hi-below, hi-above) with channels
    ``(1, w_ok, w_inv)``.  Less relevant partners (fold ``lo``) below the row form ok pairs,
    above it inverted ones; more relevant partners (``hi``) the reverse.
    """
    bl, al, bh, ah = (s[f] for s in sums)
    return (
        (w_ok * bl[0] - bl[1]) + (al[2] - w_inv * al[0])
        + (w_inv * bh[0] - bh[2]) + (ah[1] - w_ok * ah[0])
    )
