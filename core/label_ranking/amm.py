r"""AMM-rank and multi-class AMM: label rankers made of several hyperplanes per label.

=====================  =========================================================  ===========
class                  loss of one example (hinge over ...)                       paper
=====================  =========================================================  ===========
:class:`AMMRank`       every known pair of the ranking (eq. 11)                   AMM-rank
:class:`MultiClassAMM` the top label vs the best-scoring other label (eq. 5)      AMM
=====================  =========================================================  ===========

The model (Wang et al. 2011; Djuric et al. 2014, eqs. 1–3)
-----------------------------------------------------------
Label :math:`i` owns :math:`b_i \le` ``budget`` hyperplanes :math:`w_{i,1}, …, w_{i,b_i}`
over :math:`\tilde x = (x, \text{bias})`; its score is the best of them,

.. math:: g(i, x) = \max_{j \le b_i} w_{i,j}^\top \tilde x, \qquad g(i, x) = 0
          \text{ when } b_i = 0,

and the predicted ranking sorts the scores (eq. 9; ties to the lower label index).  The
counts :math:`b_i` are learned: a label starts with none and grows hyperplanes during SGD.

The AMM-rank loss (eq. 11)
--------------------------
For an example ranking :math:`L_t` labels, :math:`\pi_1 \succ \pi_2 \succ \dots \succ
\pi_{L_t}`, every unranked label below every ranked one (unranked labels are not compared
with each other),

.. math:: \ell_{rank} = \sum_{i=1}^{L_t} \nu(i) \sum_{j=1}^{L} I(\pi_i \succ j)\,
          \max\bigl(0,\; 1 + g(j, x) - w_{\pi_i, z_i}^\top \tilde x\bigr),

with :math:`\nu(i) = 1` (``nu="constant"``, the paper's setting) or :math:`\nu(i) = 1/i`
(``nu="inverse"``).  Here :math:`i` is the **rank** of the preferred label: in the
subgradient (eq. 12) the printed :math:`\nu(k)` of the third term must read
:math:`\nu(\pi^{-1}_k)`, the weight of the pair's preferred label, or the two halves of a
pair's subgradient would carry different weights (the loss weighs the pair once).

:class:`MultiClassAMM` uses the AMM loss of Wang et al. (2011), eq. 5 of the paper, on the
top label :math:`y = \pi_1` only: :math:`\max(0, 1 + \max_{i \ne y} g(i, x) -
w_{y, z}^\top \tilde x)` — one hinge against the *best-scoring* other label, not one per
other label (that would be AMM-rank on rankings of length 1).

The zero hyperplane and the updates (BudgetedSVM's ``trainAMMonline``)
----------------------------------------------------------------------
Both papers start SGD from :math:`W = 0` "comprising an infinite number of zero-vectors for
each class": when an update hits a zero vector it becomes a new hyperplane, :math:`b_i
\mathrel{+}= 1`.  BudgetedSVM's AMM, the implementation the paper used, fixes the details
(its ``trainAMMonline``; AMM-rank applies them to every violated pair):

* **the hinge** compares raw best scores, :math:`1 + g(j, x) - g(\pi_i, x) > 0` — the
  preferred label's :math:`w_{\pi_i,z_i}^\top\tilde x` is its best existing hyperplane's
  score, negative too (BudgetedSVM's ``1 + fx2 - fx1 > 0``), and 0 only for a label without
  hyperplanes.  A pair whose two labels both score below 0 is still violated when the other
  label is ahead: :math:`g = (-2, -1.5)` costs :math:`1.5`.
* **preferred** role: when the label's best hyperplane scores above 0 it is pulled toward
  :math:`x`; otherwise the update **creates** a hyperplane (:math:`+\eta\,\nu\,\tilde x`)
  while the label has fewer than ``budget``, and with the budget full the preferred role
  makes no update (BudgetedSVM adds a weight only below its budget, else skips the true
  class).
* **less preferred** role: the label's highest-scoring existing hyperplane is pushed away —
  it may score below 0, so labels nobody prefers still get ordered; a label without
  hyperplanes scores 0 and the update creates its first one (BudgetedSVM gives every class
  one explicit zero weight that takes such updates; pushing a zero vector away when the label
  already has hyperplanes would not lower :math:`g(j, x)` and only fill the budget with
  opposite-pointing copies of :math:`x`).

Both roles point at the same hyperplane when the label has none yet or when its best
hyperplane scores above 0: the two coefficients are then summed.

SGD (eqs. 6–7, 12; Pegasos scaling)
-----------------------------------
At step :math:`t = 1, 2, …` (counted over all examples of all epochs), with
:math:`\eta_t = 1/(\lambda t)`: all weights are scaled by :math:`(1 - 1/t)`, then for each
violated pair (:math:`w_{\pi_i,z_i}^\top\tilde x - g(j,x) < 1`) the preferred label's
hyperplane gains :math:`\eta_t \nu\, \tilde x` and the other label's loses it.  The kernel
stores :math:`U_t = \lambda t\, W_t`, for which the shrinkage disappears:
:math:`U_t = U_{t-1} + \Delta_t` with :math:`\Delta_t` the unscaled updates (exact, since
:math:`(1 - 1/t)/(\lambda (t-1)) = 1/(\lambda t)`).

Pruning (BudgetedSVM's AMM): after every ``prune_every``-th step the hyperplanes are sorted
by squared norm and the smallest ones removed while their summed squared norm stays
:math:`\le c^2/(\lambda t)^2` — in :math:`U` units simply :math:`\sum \|u\|^2 \le c^2`: a
hyperplane that collected less than :math:`c` worth of updates is dropped (a label may lose
all of them and score 0 again; BudgetedSVM keeps each class's last weight instead).

Features are used as given (BudgetedSVM does not scale them either); put them on
comparable scales first.  :math:`\lambda`, ``budget``, ``epochs``, ``bias``,
``prune_every`` and :math:`c` default to BudgetedSVM's AMM defaults, which the paper used.

References
----------
Djuric, N., Grbovic, M., Radosavljevic, V., Bhamidipati, N. & Vucetic, S. (2014).
Non-linear label ranking for large-scale prediction of long-term user interests. *AAAI*
(``papers/amm-rank-label-ranking.txt``; eqs. 1–12).
Wang, Z., Djuric, N., Crammer, K. & Vucetic, S. (2011). Trading representability for
scalability: adaptive multi-hyperplane machine for nonlinear classification. *KDD*, 24–32.
Djuric, N., Lan, L., Vucetic, S. & Wang, Z. (2013). BudgetedSVM: a toolbox for scalable SVM
approximations. *JMLR*, 14, 3813–3817.
Shalev-Shwartz, S., Singer, Y. & Srebro, N. (2007). Pegasos: primal estimated sub-gradient
solver for SVM. *ICML*, 807–814.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from core._validation import as_generator, check_choice, check_positive_int, check_positive_number
from core.label_ranking._base import LabelRanker

__all__ = ["AMMRank", "MultiClassAMM"]

#: Allowed values of ``nu`` (the rank weights ν(i) of eq. 11).
NU_CHOICES = ("constant", "inverse")
#: Examples per kernel call; ``progress`` is called between calls.
_CHUNK = 10_000
#: Rows scored at once by :meth:`_AMMBase.decision_function`.
_BLOCK = 8192

# "contract" lets LLVM fuse a·b + c into FMAs and "reassoc" lets it vectorise the dot
# products (sums in another order: results differ from a plain loop by rounding only, and
# stay identical run to run).
_JIT = {"cache": True, "nogil": True, "fastmath": {"contract", "reassoc"}}


# ------------------------------------------------------------------------- the kernel
@numba.njit(**_JIT)
def _axpy(u, a, x, bias, has_bias):
    """``u += a · (x, bias)`` in place."""
    d = x.shape[0]
    for k in range(d):
        u[k] += a * x[k]
    if has_bias:
        u[d] += a * bias


@numba.njit(**_JIT)
def _prune(U, counts, c2):
    """Drop the smallest-norm hyperplanes while their summed ``‖u‖²`` stays ``≤ c2``."""
    n_labels, _, D = U.shape
    total = 0
    for i in range(n_labels):
        total += counts[i]
    if total == 0:
        return
    norms = np.empty(total)
    lab = np.empty(total, np.int64)
    idx = np.empty(total, np.int64)
    h = 0
    for i in range(n_labels):
        for j in range(counts[i]):
            s = 0.0
            for k in range(D):
                s += U[i, j, k] * U[i, j, k]
            norms[h] = s
            lab[h] = i
            idx[h] = j
            h += 1
    order = np.argsort(norms, kind="mergesort")
    drop = np.zeros(U.shape[:2], np.bool_)
    acc = 0.0
    for h in order:
        acc += norms[h]
        if acc > c2:
            break
        drop[lab[h], idx[h]] = True
    for i in range(n_labels):  # compact the survivors in order, zero the freed slots
        keep = 0
        for j in range(counts[i]):
            if not drop[i, j]:
                if keep != j:
                    U[i, keep, :] = U[i, j, :]
                keep += 1
        for j in range(keep, counts[i]):
            U[i, j, :] = 0.0
        counts[i] = keep


@numba.njit(**_JIT)
def _sgd_kernel(X, Y, order, U, counts, t0, lam, bias, prune_every, c2, inverse_nu,
                multiclass):
    """Run SGD steps ``t0 + 1 …`` over rows ``order`` of ``(X, Y)``; return the last ``t``.

    ``U`` (L, budget, D) holds :math:`U_t = \\lambda t W_t` (module docstring) and
    ``counts`` (L,) the hyperplanes in use; slots ``j ≥ counts[i]`` must be zero.  Both
    are updated in place.  ``D = d + 1`` when ``has bias`` else ``d``.
    """
    n_labels, budget, D = U.shape
    d = X.shape[1]
    has_bias = D > d
    graw = np.empty(n_labels)  # λ(t−1)·g(i, x): best existing hyperplane, 0 when none
    arg = np.empty(n_labels, np.int64)
    P = np.zeros(n_labels)  # preferred-role coefficients (Σ ν over violated pairs)
    N = np.zeros(n_labels)  # less-preferred-role coefficients
    t = t0
    for r in order:
        t += 1
        x = X[r]
        for i in range(n_labels):
            best = 0.0
            bj = -1
            for j in range(counts[i]):
                s = 0.0
                for k in range(d):
                    s += U[i, j, k] * x[k]
                if has_bias:
                    s += U[i, j, d] * bias
                if bj < 0 or s > best:
                    best = s
                    bj = j
            graw[i] = best
            arg[i] = bj
        scale = 1.0 / (lam * (t - 1)) if t > 1 else 0.0  # W_{t-1} = U_{t-1} / (λ(t−1))
        for i in range(n_labels):
            P[i] = 0.0
            N[i] = 0.0
        violated = False
        if multiclass:
            y = -1
            for i in range(n_labels):
                if Y[r, i] == 1:
                    y = i
            if y >= 0:
                other = -1
                for i in range(n_labels):
                    if i != y and (other < 0 or graw[i] > graw[other]):
                        other = i
                if 1.0 + scale * (graw[other] - graw[y]) > 0.0:
                    P[y] = 1.0
                    N[other] = 1.0
                    violated = True
        else:
            for i in range(n_labels):
                pi = Y[r, i]
                if pi == 0:
                    continue
                nu = 1.0 / pi if inverse_nu else 1.0
                for j in range(n_labels):
                    pj = Y[r, j]
                    if (pj == 0 or pj > pi) and 1.0 + scale * (graw[j] - graw[i]) > 0.0:
                        P[i] += nu
                        N[j] += nu
                        violated = True
        if violated:
            for i in range(n_labels):
                p = P[i]
                q = N[i]
                if p == 0.0 and q == 0.0:
                    continue
                c = counts[i]
                if c == 0:  # both roles hit the label's first (zero) hyperplane
                    if p != q:
                        _axpy(U[i, 0], p - q, x, bias, has_bias)
                        counts[i] = 1
                elif graw[i] > 0.0:  # both roles hit the best one
                    _axpy(U[i, arg[i]], p - q, x, bias, has_bias)
                else:  # best ≤ 0: the less-preferred role pushes the best one, the
                    # preferred role creates a hyperplane — or, the budget full, is skipped
                    if p > 0.0 and c < budget:
                        _axpy(U[i, c], p, x, bias, has_bias)
                        counts[i] = c + 1
                    if q > 0.0:
                        _axpy(U[i, arg[i]], -q, x, bias, has_bias)
        if prune_every > 0 and t % prune_every == 0:
            _prune(U, counts, c2)
    return t


# ----------------------------------------------------------------- the reference step
def _step_reference(W, counts, x, y, t, *, lam, budget, nu="constant", multiclass=False):
    r"""One SGD step written directly from eqs. 5, 11 and 12 on the weights themselves.

    A slow numpy version of one step of the compiled kernel, for tests.

    Parameters
    ----------
    W : ndarray of shape (L, budget, D)
        :math:`W_{t-1}`; rows ``j ≥ counts[i]`` are unused (zero).
    counts : ndarray of shape (L,)
        Hyperplanes in use per label.
    x : ndarray of shape (D,)
        The example with its bias feature already appended.
    y : ndarray of shape (L,)
        Its positions (1 = most preferred, 0 = not ranked).
    t : int
        This step's index (1-based): :math:`\eta_t = 1/(\lambda t)`, shrink
        :math:`1 - 1/t`.

    Returns
    -------
    W, counts : the weights and counts after the step (new arrays).
    """
    W = np.array(W, dtype=np.float64)
    counts = np.array(counts, dtype=np.int64)
    y = np.asarray(y)
    L = W.shape[0]
    g = np.zeros(L)
    best = np.full(L, -1)
    for i in range(L):
        if counts[i]:
            s = W[i, : counts[i]] @ x
            best[i], g[i] = int(np.argmax(s)), s.max()
    # w_{i, z_i}ᵀx is the raw best score g(i, x), below 0 too (0 only without hyperplanes)
    if multiclass:
        P, N = np.zeros(L), np.zeros(L)
        if (y == 1).any():
            yy = int(np.flatnonzero(y == 1)[0])
            others = [i for i in range(L) if i != yy]
            o = others[int(np.argmax(g[others]))]
            if 1 + g[o] - g[yy] > 0:
                P[yy], N[o] = 1.0, 1.0
    else:
        prefers = (y[:, None] > 0) & ((y[None, :] == 0) | (y[None, :] > y[:, None]))
        weight = np.where(y > 0, 1.0 / np.maximum(y, 1), 0.0) if nu == "inverse" else \
            np.ones(L)
        hinge = prefers & (1 + g[None, :] - g[:, None] > 0)
        P = (hinge * weight[:, None]).sum(axis=1)
        N = (hinge * weight[:, None]).sum(axis=0)
    W_new = (1 - 1 / t) * W
    eta = 1 / (lam * t)
    for i in range(L):
        if P[i] == 0 and N[i] == 0:
            continue
        if counts[i] == 0:
            if P[i] != N[i]:
                W_new[i, 0] += eta * (P[i] - N[i]) * x
                counts[i] = 1
        elif g[i] > 0:
            W_new[i, best[i]] += eta * (P[i] - N[i]) * x
        else:  # best ≤ 0: a new hyperplane for the preferred role, none when the budget is full
            if P[i] > 0 and counts[i] < budget:
                W_new[i, counts[i]] += eta * P[i] * x
                counts[i] += 1
            if N[i] > 0:
                W_new[i, best[i]] -= eta * N[i] * x
    return W_new, counts


# ------------------------------------------------------------------------ estimators
class _AMMBase(LabelRanker):
    """Shared fit / predict of the AMM estimators (validation, chunked kernel, scoring)."""

    _multiclass = False

    def _params(self) -> dict:
        out = {
            "lam": check_positive_number(self.lam, "lam", "the regularisation λ"),
            "budget": check_positive_int(self.budget, "budget"),
            "epochs": check_positive_int(self.epochs, "epochs"),
            "prune_every": check_positive_int(self.prune_every, "prune_every"),
            "c": check_positive_number(self.c, "c", "the pruning constant"),
        }
        try:
            bias = float(self.bias)
        except (TypeError, ValueError):
            bias = float("nan")
        if isinstance(self.bias, (bool, np.bool_)) or not (np.isfinite(bias) and bias >= 0):
            raise ValueError("bias must be a number >= 0 (the value of the appended constant "
                             f"feature; 0 = no bias); got {self.bias!r}.")
        out["bias"] = bias
        out["inverse_nu"] = check_choice(getattr(self, "nu", "constant"), "nu",
                                         NU_CHOICES) == "inverse"
        as_generator(self.random_state)  # fail before the data is touched
        return out

    def fit(self, X, Y, *, groups=None,
            progress: Callable[[int, int], object] | None = None):
        """Learn the hyperplanes from features ``X`` (n, d) and positions ``Y`` (n, L).

        Parameters are checked first (``ValueError`` naming the bad one), then the data
        (:meth:`LabelRanker.fit`).  ``groups`` is ignored.  ``progress(done, total)`` is
        called after every 10,000 examples (``total = epochs · n``); raise from it to
        cancel.
        """
        self._params()
        return super().fit(X, Y, groups=groups, progress=progress)

    def _fit(self, X, Y, groups, progress) -> None:
        prm = self._params()
        for name in ("weights_", "hyperplanes_per_label_", "n_iter_", "n_steps_"):
            self.__dict__.pop(name, None)  # a cancelled refit leaves no stale model
        rng = as_generator(self.random_state)
        n, d = X.shape
        L = Y.shape[1]
        D = d + (prm["bias"] != 0.0)
        X = np.ascontiguousarray(X, dtype=np.float64)
        Y = np.ascontiguousarray(Y, dtype=np.int64)
        U = np.zeros((L, prm["budget"], D))
        counts = np.zeros(L, dtype=np.int64)
        t, total = 0, prm["epochs"] * n
        for _ in range(prm["epochs"]):
            order = rng.permutation(n).astype(np.int64)
            for start in range(0, n, _CHUNK):
                t = _sgd_kernel(X, Y, order[start:start + _CHUNK], U, counts, t, prm["lam"],
                                prm["bias"], prm["prune_every"], prm["c"] ** 2,
                                prm["inverse_nu"], self._multiclass)
                if progress is not None:
                    progress(t, total)
        W = U / (prm["lam"] * t)
        self.hyperplanes_per_label_ = counts.copy()
        self.weights_ = [W[i, : counts[i]].copy() for i in range(L)]
        self.n_iter_ = prm["epochs"]
        self.n_steps_ = t
        self._bias = prm["bias"]
        self._flat = np.concatenate(self.weights_, axis=0) if counts.sum() else np.zeros((0, D))

    def decision_function(self, X, *, groups=None) -> np.ndarray:
        r"""Label scores :math:`g(i, x) = \max_j w_{i,j}^\top (x, \text{bias})`, 0 for a label
        without hyperplanes; shape ``(n_rows, n_labels)``, higher = preferred."""
        X = self._check_predict(X)
        if not hasattr(self, "weights_"):
            raise self._not_fitted()
        n, d = X.shape
        L = self.n_labels_
        out = np.zeros((n, L))
        if self._flat.shape[0] == 0:
            return out
        counts = self.hyperplanes_per_label_
        has = counts > 0
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[has]
        Wx = np.ascontiguousarray(self._flat[:, :d].T)
        wb = self._flat[:, d] * self._bias if self._flat.shape[1] > d else 0.0
        for lo in range(0, n, _BLOCK):
            s = X[lo:lo + _BLOCK] @ Wx
            s += wb
            out[lo:lo + _BLOCK, has] = np.maximum.reduceat(s, starts, axis=1)
        return out


class AMMRank(_AMMBase):
    r"""AMM-rank (Djuric et al. 2014): hyperplanes per label trained on every known pair.

    Scores :math:`g(i, x) = \max_j w_{i,j}^\top (x, \text{bias})`, sorted for the ranking
    (eq. 9); trained by SGD on the pairwise hinge loss of eq. 11 (module docstring: the
    loss, the zero-hyperplane convention, the update and pruning).

    Parameters
    ----------
    budget : int, default=50
        Maximum hyperplanes per label.
    lam : float, default=1e-4
        Regularisation :math:`\lambda`; the step size is :math:`1/(\lambda t)`.
    epochs : int, default=5
        Passes over the data, each in a new random order.
    nu : {"constant", "inverse"}, default="constant"
        Rank weights :math:`\nu(i)` of eq. 11: 1 (the paper's setting) or :math:`1/i`, with
        :math:`i` the rank of the pair's preferred label.
    bias : float, default=1.0
        Value of the constant feature appended to ``x`` (0 = none).
    prune_every : int, default=10000
        Steps between two prunings.
    c : float, default=10.0
        Pruning constant: the removed hyperplanes' summed squared norm stays
        :math:`\le c^2/(\lambda t)^2`.
    random_state : int, Generator or None, default=None
        Seeds the order of each epoch.

    Attributes
    ----------
    hyperplanes_per_label_ : ndarray of shape (n_labels,)
        :math:`b_i`, the hyperplanes each label ended with (0 … ``budget``).
    weights_ : list of ndarray
        ``weights_[i]`` has shape ``(b_i, n_features + 1)`` (``n_features`` when
        ``bias == 0``); the last column multiplies the bias feature.
    n_iter_ : int
        Epochs run.
    n_steps_ : int
        SGD steps run, ``epochs · n_rows``.

    Examples
    --------
    Label 0 is preferred at both ends of the line, label 1 in the middle: a non-linear
    preference that one hyperplane per label cannot express.

    >>> import numpy as np
    >>> x = np.linspace(-1, 1, 200)[:, None]
    >>> Y = np.where(np.abs(x) > 0.5, [1, 2], [2, 1])
    >>> m = AMMRank(lam=1e-3, epochs=20, random_state=0).fit(x, Y)
    >>> m.predict([[-0.9], [0.0], [0.9]]).tolist()
    [[1, 2], [2, 1], [1, 2]]
    >>> int(m.hyperplanes_per_label_[0]) >= 2
    True
    """

    def __init__(self, *, budget: int = 50, lam: float = 1e-4, epochs: int = 5,
                 nu: str = "constant", bias: float = 1.0, prune_every: int = 10_000,
                 c: float = 10.0, random_state: Any = None):
        self.budget = budget
        self.lam = lam
        self.epochs = epochs
        self.nu = nu
        self.bias = bias
        self.prune_every = prune_every
        self.c = c
        self.random_state = random_state


class MultiClassAMM(_AMMBase):
    r"""Multi-class AMM (Wang et al. 2011) on the top label; labels ranked by their scores.

    The paper's "AMM" baseline: the loss of one example is eq. 5,
    :math:`\max(0, 1 + \max_{i \ne y} g(i, x) - w_{y,z}^\top \tilde x)` with
    :math:`y = \pi_1` its most preferred label — one hinge against the best-scoring other
    label (the rest of the ranking is not used; rows ranking no label only shrink the
    weights).  The same kernel, hyperplanes, zero-hyperplane convention and pruning as
    :class:`AMMRank` (module docstring).

    Parameters
    ----------
    budget, lam, epochs, bias, prune_every, c, random_state
        As in :class:`AMMRank`.

    Attributes
    ----------
    hyperplanes_per_label_, weights_, n_iter_, n_steps_
        As in :class:`AMMRank`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-1, 1, 200)[:, None]
    >>> Y = np.where(x > 0, [1, 2, 0], [2, 1, 0])   # top label: 0 on the right, 1 on the left
    >>> m = MultiClassAMM(lam=1e-3, epochs=10, random_state=0).fit(x, Y)
    >>> (m.predict([[-0.8], [0.8]]) == 1).argmax(axis=1).tolist()   # the top label
    [1, 0]
    """

    _multiclass = True

    def __init__(self, *, budget: int = 50, lam: float = 1e-4, epochs: int = 5,
                 bias: float = 1.0, prune_every: int = 10_000, c: float = 10.0,
                 random_state: Any = None):
        self.budget = budget
        self.lam = lam
        self.epochs = epochs
        self.bias = bias
        self.prune_every = prune_every
        self.c = c
        self.random_state = random_state
