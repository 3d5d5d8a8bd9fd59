"""The compiled (numba) back-end of the λ-gradient engine (private; see
:mod:`core.objectives.lambdas`).

:mod:`core.objectives._kernels` holds the vectorised numpy kernels; this module runs the same
algorithms through the numba loops of :mod:`core.objectives._numba`, which it imports on first
use (so ``import core.objectives.lambdas`` does not pay numba's import) and only when numba is
installed.  :func:`backend` says which back-end :class:`core.objectives._plan.Plan` uses.

Each compiled function has one signature per argument dtype combination and ``cache=True``:
the first call in a fresh checkout compiles (about 20 s for all of them) and writes the
machine code to ``core/objectives/__pycache__``; every later process loads it (about 0.3 s,
plus 0.5 s to import numba), once per process — a long-lived training worker pays it once.

The only approximation is the binned kernel's, the same as the numpy one's (same bins, same
second-order expansion; the compiled kernel also keeps the own-bin ``δ²`` curvature term that
the numpy one drops): gradients agree with the numpy back-end to ~1e-13 of the largest.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import NamedTuple

import numpy as np
import scipy.fft

from core.objectives._kernels import grid

__all__ = [
    "BACKEND",
    "BACKENDS",
    "CompiledSpec",
    "backend",
    "binned_query_compiled",
    "compiled",
    "compiled_spec",
    "exact_compiled",
]

#: Kernel back-ends: ``"numba"`` (compiled loops, :mod:`core.objectives._numba`) and ``"numpy"``
#: (the vectorised kernels of :mod:`core.objectives._kernels`, used when numba is not installed).
BACKENDS = ("numba", "numpy")
#: Which back-end to use: ``"auto"`` (numba when importable) or one of :data:`BACKENDS`;
#: set from the environment variable ``UPRANK_LAMBDA_BACKEND`` (tests patch it).
BACKEND = os.environ.get("UPRANK_LAMBDA_BACKEND", "auto")
_NUMBA: ModuleType | None | bool = None  # the compiled module, False when numba is missing


def compiled() -> ModuleType | None:
    """:mod:`core.objectives._numba`, imported on first use (numba's import costs ~0.5 s)."""
    global _NUMBA
    if _NUMBA is None:
        try:
            from core.objectives import _numba as _lambda_numba

            _NUMBA = _lambda_numba
        except ImportError:
            _NUMBA = False
    return _NUMBA or None


def backend() -> str:
    """The kernel back-end in use: ``"numba"`` or ``"numpy"`` (see :data:`BACKEND`)."""
    if BACKEND == "numpy":
        return "numpy"
    return "numba" if compiled() is not None else "numpy"


# --------------------------------------------------------------------------------------------
# the binned kernel: the same expansion in two O(n) numba passes and FFT convolutions
# --------------------------------------------------------------------------------------------
class CompiledSpec(NamedTuple):
    """Label-only set-up of :func:`binned_query_compiled` for one query."""

    split: bool  #: MAP: ok and inverted pairs weigh differently
    kmat: np.ndarray  #: (C, C) class-pair factor
    khi: np.ndarray  #: ``K`` above its diagonal: more relevant partners
    folds: np.ndarray  #: (T, C, C) the ``K`` each table sums with
    chan: np.ndarray  #: (T,) partner weight channel of each table: 1 = w_ok, 2 = w_inv


def compiled_spec(kmat: np.ndarray, split: bool) -> CompiledSpec:
    """Tables of the compiled kernel: one signed table, or (MAP) four one-sided ones.

    Split tables: (less relevant partners, below the row; w_ok), (less relevant, above;
    w_inv), (more relevant, below; w_inv), (more relevant, above; w_ok), as in
    :func:`core.objectives._kernels._combine_split`.
    """
    kmat = np.ascontiguousarray(kmat, dtype=np.float64)
    khi = np.triu(kmat, 1)
    if split:
        lo = np.tril(kmat, -1)
        folds = np.ascontiguousarray(np.stack([lo, lo, khi, khi]))
        chan = np.array([1, 2, 2, 1], dtype=np.intp)
    else:
        folds = kmat[None].copy()
        chan = np.array([1], dtype=np.intp)
    return CompiledSpec(split, kmat, khi, folds, chan)


def binned_query_compiled(
    xs: np.ndarray,
    order: np.ndarray,
    cls: np.ndarray,
    spec: CompiledSpec,
    w_ok: np.ndarray,
    w_inv: np.ndarray | None,
    bins: int,
    sigma: float,
    weight: np.ndarray,
    grad: np.ndarray,
    hess: np.ndarray,
    scratch: tuple[np.ndarray, ...],
) -> None:
    """``binned_query`` (:mod:`core.objectives._kernels`) with numba loops, written into
    LightGBM's gradient and hessian: same bins, same second-order expansion.

    ``xs``, ``order``, ``w_ok`` and ``w_inv`` are one query's sorted slots (scores, their
    rows, slot weights), ``cls`` the class of every row (indexed by row), ``spec`` from
    :func:`compiled_spec` (``split`` ⇔ ``w_inv`` given).
    Writes ``grad[r] = −σ·Λ_r·weight_r`` and ``hess[r] = σ²·max(curvature_r, 0)·weight_r``
    for the query's rows (``weight`` empty: no weights; ``grad`` and ``hess`` start as zeros
    and may be float32).  ``scratch`` holds five arrays of at least the query's size (sorted
    classes, bins, offsets, ``Λ``, curvature), reused across queries and rounds: at 14M rows
    fresh memory page-faults on every call and costs more than the kernel.

    1. one pass bins the rows and accumulates the per-bin moments
       ``Σ_{q ∈ β, c_q = b} W_u(q)(−δ_q)^m`` (``m ≤ 2``) on the full equal-width grid;
    2. the bin-to-bin sums ``Σ_β T_k(D_{αβ})·moment_β`` depend on ``β − α`` only
       (``D_{αβ} = (β − α)·width``): convolutions, done with real FFTs in ``O(B log B)``;
       the row's own bin is counted whole on the table's side;
    3. a second pass walks the rows in rank order, evaluates each row's polynomial in
       ``δ_p``, moves the own-bin partners above the row to the other side with prefix
       moments (second order around ``D = 0``, for the curvature too), and adds the
       sigmoid-free sum over more relevant partners from running per-class totals;
    4. the results go back to row order.

    The FFTs add a rounding error of about ``1e-16`` times the largest table entry, far
    below the truncation error of the expansion.
    """
    n = xs.size
    if n < 2 or not spec.kmat.any():
        return  # no pair changes the metric: the rows keep the zeros ``grad`` / ``hess`` hold
    nb = compiled()
    cls_s, raw, delta, lam, curv = (a[:n] for a in scratch)
    np.take(cls, order, out=cls_s, mode="clip")  # (valid rows; "raise" copies via a buffer)
    n_cls = spec.kmat.shape[0]
    width, n_bins = grid(xs, bins)
    w_inv_ = w_ok if w_inv is None else w_inv
    mom, totals = nb.bin_moments(xs, cls_s, w_ok, w_inv_, spec.split, n_cls, width, n_bins,
                                 raw, delta)
    length = scipy.fft.next_fast_len(2 * n_bins - 1, real=True)
    spectra = scipy.fft.rfft(
        nb.fft_inputs(mom, spec.folds, spec.chan, spec.split, width, n_bins, length), axis=-1)
    conv = scipy.fft.irfft(nb.fft_combine(spectra, spec.folds.shape[0], n_cls, spec.split),
                           n=length, axis=-1)
    if spec.split:
        nb.rows_split(raw, delta, cls_s, w_ok, w_inv_, spec.khi, spec.folds, conv, n_bins,
                      totals, lam, curv)
    else:
        nb.rows_signed(raw, delta, cls_s, w_ok, spec.kmat, spec.khi, conv, n_bins, totals,
                       lam, curv)
    nb.scatter(order, lam, curv, sigma, weight, grad, hess)


def exact_compiled(
    starts: np.ndarray,
    sizes: np.ndarray,
    scale: np.ndarray,
    x: np.ndarray,
    rel: np.ndarray,
    gain: np.ndarray,
    w_ok: np.ndarray,
    w_inv: np.ndarray | None,
    lam: np.ndarray,
    curv: np.ndarray,
) -> None:
    """Exact ``(Λ, curvature)`` of the sorted queries ``[starts, starts + sizes)`` (numba).

    The same pair magnitudes as ``exact_batch`` (:mod:`core.objectives._kernels`); results are
    added into ``lam`` and ``curv`` (sorted-slot layout, queries concatenated).
    """
    compiled().exact_queries(
        starts, sizes, scale, x, rel, gain, w_ok, w_ok if w_inv is None else w_inv,
        w_inv is not None, lam, curv,
    )
