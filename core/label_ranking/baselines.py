r"""The label-ranking baselines of Djuric et al. (2014): Mallows consensus and logistic models.

=========================  ==========================================================  =========
class                      what it predicts                                            paper
=========================  ==========================================================  =========
:class:`CentralMallows`    one consensus ranking of all training rows, for everyone     Central-Mal
:class:`GroupMallows`      one consensus per group (age × gender bucket)                AG-Mal
:class:`KNNMallows`        consensus of the ``k`` nearest training rows                 IB-Mal
:class:`LogisticPerLabel`  ``L`` binary models "label ranked?", sorted by probability  LR
:class:`PairwiseLogistic`  ``L(L−1)/2`` pair models, sum of soft votes per label        PW-LR
=========================  ==========================================================  =========

Rankings are position arrays (:mod:`core.label_ranking._rankings`): ``Y[r, j] = 1`` for row
``r``'s most preferred label, ``0`` for a label the row does not rank (below every ranked
label, tied with the other unranked ones).  Every estimator follows
:class:`~core.label_ranking._base.LabelRanker`: ``fit(X, Y, *, groups=None, progress=None)``,
``decision_function(X, *, groups=None)`` (a score per label, higher = preferred) and
``predict`` (complete positions ``1 … L``, ties broken by the lower label index).

The Mallows centre
------------------
Central-Mal, AG-Mal and IB-Mal predict "the central ranking of the Mallows model" fitted to a
set of rankings.  Under Mallows with Kendall's distance the maximum-likelihood centre is the
**Kemeny** ranking (the one with the least total Kendall distance to the sample), which is
NP-hard to find already for four rankings (Dwork et al. 2001).  We use
:func:`borda_consensus` instead — Borda's count with every unranked label at the mean of the
positions left over.  Borda is a 5-approximation of the Kemeny objective (Coppersmith,
Fleischer & Rudra 2010) and a consistent estimator of the Mallows centre: with enough samples
it returns the true centre with probability tending to one (Fligner & Verducci 1988;
Caragiannis, Procaccia & Shah 2013).  It costs one pass over the data, so the consensus of
the 10 neighbours of 20,000 users is a single vectorised sum.  For incomplete rankings the
mean-of-remaining-positions rule is the expected Borda score under a uniformly random
completion of each ranking.  Cheng, Hühn & Hüllermeier (2009) fit the incomplete-ranking
Mallows centre by EM instead; that is not implemented here.

References
----------
Djuric, N., Grbovic, M., Radosavljevic, V., Bhamidipati, N. & Vucetic, S. (2014).
Non-linear label ranking for large-scale prediction of long-term user interests. *AAAI*
(``papers/amm-rank-label-ranking.txt``: the five baselines and their names).
Grbovic, M., Djuric, N. & Vucetic, S. (2013). Multi-prototype label ranking with novel
pairwise-to-total-rank aggregation. *IJCAI* (cited there for IB-Mal and PW-LR as strong
label rankers).
Mallows, C. L. (1957). Non-null ranking models. *Biometrika*, 44(1/2), 114–130.
Dwork, C., Kumar, R., Naor, M. & Sivakumar, D. (2001). Rank aggregation methods for the web.
*WWW*, 613–622.
Coppersmith, D., Fleischer, L. & Rudra, A. (2010). Ordering by weighted number of wins gives
a good ranking for weighted tournaments. *ACM Transactions on Algorithms*, 6(3), 55.
Fligner, M. A. & Verducci, J. S. (1988). Multistage ranking models. *JASA*, 83(403), 892–901.
Caragiannis, I., Procaccia, A. D. & Shah, N. (2013). When do noisy votes reveal the truth?
*ACM EC*, 143–160.
Cheng, W., Hühn, J. & Hüllermeier, E. (2009). Decision tree and instance-based learning for
label ranking. *ICML*, 161–168.
Hüllermeier, E., Fürnkranz, J., Cheng, W. & Brinker, K. (2008). Label ranking by learning
pairwise preferences. *Artificial Intelligence*, 172(16–17), 1897–1916.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from core._validation import as_generator, check_positive_int, check_positive_number, check_scores
from core.label_ranking._base import LabelRanker, check_groups
from core.label_ranking._rankings import check_rankings

__all__ = [
    "CentralMallows",
    "GroupMallows",
    "KNNMallows",
    "LogisticPerLabel",
    "PairwiseLogistic",
    "borda_consensus",
]

#: Rows scored at once by the decision functions that build an ``(rows, models)`` matrix.
_BLOCK = 4096


# ------------------------------------------------------------------------------ helpers
def _mean_positions(Y: np.ndarray) -> np.ndarray:
    """Float positions with every unranked label at the mean of the positions left over.

    Row ``r`` ranks ``L_t`` labels; its ``L − L_t`` unranked labels share the positions
    ``L_t + 1 … L``, whose mean is ``(L_t + 1 + L) / 2``.
    """
    L = Y.shape[1]
    lt = (Y > 0).sum(axis=1)
    fill = (lt + 1 + L) / 2.0
    return np.where(Y > 0, Y, fill[:, None]).astype(np.float64)


def _borda_from_positions(P: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``L − (weighted) mean position`` over the rows of a :func:`_mean_positions` array."""
    L = P.shape[1]
    mean = P.mean(axis=0) if weights is None else weights @ P / weights.sum()
    return L - mean


def _check_weights(weights: Any, n: int) -> np.ndarray:
    w = check_scores(weights, "weights", n=n)
    if (w < 0).any():
        raise ValueError(f"weights must be non-negative; got a minimum of {w.min()!r}.")
    if w.sum() <= 0:
        raise ValueError("weights must have a positive sum; got all zeros.")
    return w


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**31 - 1))


def _fit_logistic(Z: np.ndarray, y: np.ndarray, C: float, max_iter: int,
                  seed: int) -> tuple[np.ndarray, float]:
    """Fit the one binary model of the logistic baselines; returns ``(coef, intercept)``.

    Callers run it under :func:`_single_thread_blas`.
    """
    clf = LogisticRegression(C=C, max_iter=max_iter, solver="lbfgs",
                             random_state=seed).fit(Z, y)
    return clf.coef_[0].copy(), float(clf.intercept_[0])


def _single_thread_blas():
    """BLAS single-threaded while many lbfgs fits run.

    scikit-learn's logistic loss already runs on OpenMP threads; OpenBLAS threads competing
    with them made each fit about 10× slower (3,200 × 400 problems on 2 cores: 0.25 s → 0.025
    s per fit), so the pairwise fit on 20,000 × 400 × 50 labels went from 198 s to 26 s.
    """
    return threadpool_limits(limits=1, user_api="blas")


# ----------------------------------------------------------------------------- consensus
def borda_consensus(Y, weights=None) -> np.ndarray:
    r"""Consensus scores of (possibly incomplete) rankings: Borda with unranked labels tied.

    Every unranked label of row :math:`t` (which ranks :math:`L_t` of the :math:`L` labels)
    takes the mean of the positions left over, :math:`(L_t + 1 + L)/2`; the score of label
    :math:`j` is :math:`L` minus its (weighted) mean position,

    .. math:: s_j = L - \frac{\sum_t w_t\, \bar\pi_t(j)}{\sum_t w_t}, \qquad
              \bar\pi_t(j) = \begin{cases} \pi_t(j) & j \text{ ranked in row } t \\
              (L_t + 1 + L)/2 & \text{otherwise,} \end{cases}

    which equals the mean number of labels :math:`j` beats, a tie (two unranked labels)
    counting one half.  Higher score = preferred; sort descending for the consensus ranking.

    This is the documented stand-in for the centre of a Mallows model: the Mallows
    maximum-likelihood centre is the Kemeny ranking, NP-hard to compute; Borda is a
    5-approximation of it and consistent for the Mallows centre (module docstring).

    Parameters
    ----------
    Y : array-like of shape (n_rows, n_labels)
        Positions, 1 = most preferred, 0 = not ranked.
    weights : array-like of shape (n_rows,), default=None
        Non-negative row weights with a positive sum; ``None`` weighs rows equally.

    Returns
    -------
    scores : ndarray of shape (n_labels,)
        Values in ``[0, L − 1]``; higher = preferred.

    Examples
    --------
    Label 1 is second once and unranked (at 2.5) once; label 2 is third and at 2.5:

    >>> borda_consensus([[1, 2, 0], [1, 0, 0]]).tolist()
    [2.0, 0.75, 0.25]
    >>> borda_consensus([[1, 2, 0], [1, 0, 0]], weights=[1, 3]).tolist()
    [2.0, 0.625, 0.375]
    """
    Y = check_rankings(Y)
    w = None if weights is None else _check_weights(weights, Y.shape[0])
    return _borda_from_positions(_mean_positions(Y), w)


# ------------------------------------------------------------------------ Mallows models
class CentralMallows(LabelRanker):
    """Central-Mal: the consensus ranking of all training rows, predicted for every row.

    The consensus is :func:`borda_consensus` (the documented approximation of the Mallows
    centre, see the module docstring).

    Parameters
    ----------
    random_state : int, Generator or None, default=None
        Unused (the fit is deterministic); kept so every label ranker takes one.

    Attributes
    ----------
    consensus_ : ndarray of shape (n_labels,)
        Borda scores of the training rankings (higher = preferred).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.zeros((3, 1))
    >>> CentralMallows().fit(X, [[1, 2, 0], [2, 1, 0], [1, 0, 2]]).predict(X[:1]).tolist()
    [[1, 2, 3]]
    """

    def __init__(self, *, random_state: Any = None):
        self.random_state = random_state

    def _fit(self, X, Y, groups, progress) -> None:
        self.consensus_ = _borda_from_positions(_mean_positions(Y))

    def decision_function(self, X, *, groups=None) -> np.ndarray:
        """The consensus scores, the same for every row: shape ``(n_rows, n_labels)``."""
        X = self._check_predict(X)
        return np.tile(self.consensus_, (X.shape[0], 1))


class GroupMallows(LabelRanker):
    """AG-Mal: one consensus ranking per group (the paper: 9 age × 2 gender buckets).

    ``groups`` are given at ``fit`` (without them every row is one group, i.e. Central-Mal,
    with a warning); at ``predict`` a row takes its group's consensus, and a group not seen in
    training (or ``groups=None``) takes the consensus of all training rows (Central-Mal).
    A missing group (NaN or None) is refused at ``fit`` and at ``predict`` (``ValueError``
    with the number of rows that hold one): it names no group.

    Parameters
    ----------
    random_state : int, Generator or None, default=None
        Unused (the fit is deterministic); kept so every label ranker takes one.

    Attributes
    ----------
    groups_ : list
        The distinct training groups, in sorted order (by ``str`` when they do not sort).
    group_consensus_ : ndarray of shape (n_groups, n_labels)
        Borda scores of each group's training rankings, rows in the order of ``groups_``.
    group_sizes_ : ndarray of shape (n_groups,)
        Training rows per group.
    consensus_ : ndarray of shape (n_labels,)
        Borda scores of all training rows (the fallback).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.zeros((4, 1))
    >>> Y = [[1, 2, 0], [1, 2, 0], [0, 1, 2], [0, 2, 1]]
    >>> model = GroupMallows().fit(X, Y, groups=["f", "f", "m", "m"])
    >>> model.predict(X[:3], groups=["f", "m", "unseen"]).tolist()
    [[1, 2, 3], [3, 1, 2], [2, 1, 3]]
    """

    def __init__(self, *, random_state: Any = None):
        self.random_state = random_state

    def _fit(self, X, Y, groups, progress) -> None:
        if groups is None:  # one group: the central consensus (the estimator contract)
            warnings.warn("GroupMallows got no groups (fit(X, Y, groups=...), e.g. age × "
                          "gender): every row is one group, as CentralMallows.", UserWarning,
                          stacklevel=3)
            groups = np.zeros(Y.shape[0], dtype=np.int64)
        P = _mean_positions(Y)
        keys = _distinct(groups)
        index = {_key(g): i for i, g in enumerate(keys)}
        codes = np.array([index[_key(g)] for g in groups.tolist()], dtype=np.int64)
        sizes = np.bincount(codes, minlength=len(keys))
        sums = np.zeros((len(keys), Y.shape[1]))
        np.add.at(sums, codes, P)
        self.groups_ = keys
        self.group_sizes_ = sizes
        self.group_consensus_ = Y.shape[1] - sums / sizes[:, None]
        self.consensus_ = _borda_from_positions(P)

    def decision_function(self, X, *, groups=None) -> np.ndarray:
        """Each row's group consensus (unseen group or ``groups=None``: the overall one)."""
        X = self._check_predict(X)
        out = np.tile(self.consensus_, (X.shape[0], 1))
        if groups is None:
            return out
        groups = check_groups(groups, X.shape[0], rows="row of X")
        index = {_key(g): i for i, g in enumerate(self.groups_)}
        codes = np.array([index.get(_key(g), -1) for g in groups.tolist()], dtype=np.int64)
        seen = codes >= 0
        out[seen] = self.group_consensus_[codes[seen]]
        return out


def _key(g: Any) -> Hashable:
    """Dictionary key of a group value: numpy scalars and their Python twins match."""
    return g.item() if isinstance(g, np.generic) else g


def _distinct(groups: np.ndarray) -> list:
    values = {_key(g) for g in groups.tolist()}
    try:
        return sorted(values)
    except TypeError:  # mixed types (e.g. numbers and strings)
        return sorted(values, key=str)


class KNNMallows(LabelRanker):
    """IB-Mal: the consensus ranking of a row's ``n_neighbors`` nearest training rows.

    Neighbours are found by :class:`~sklearn.neighbors.NearestNeighbors` (Euclidean) among at
    most ``max_train`` training rows drawn uniformly without replacement — the paper searched
    a subsample of 100,000 users "due to large time cost", the default here.  Before the
    search the features are standardised (:class:`~sklearn.preprocessing.StandardScaler`,
    fitted on all training rows): UpRank's choice — the paper does not say how it measured
    distance, and raw counts, recencies and 0/1 demographics on their own scales would let
    the widest feature decide the neighbours.
    The neighbours' consensus is :func:`borda_consensus` (unweighted), computed for all rows
    at once from the neighbours' mean-position rows (Cheng, Hühn & Hüllermeier 2009 use the
    Mallows centre of the neighbours; see the module docstring).

    Ties: ``k`` short rankings leave many labels tied (with ``L = 50`` labels and about four
    ranked per user, ten neighbours rank at most 40 of them, and the rest tie).  Labels the
    neighbours do not separate are ordered by the consensus of all training rows
    (``consensus_``), added as a term smaller than half the neighbours' score resolution
    ``1/(2k)``, so it never reverses an order the neighbours give.

    Parameters
    ----------
    n_neighbors : int, default=10
        Neighbours per row (the paper's cross-validated ``k = 10``); at most the number of
        training rows searched.
    max_train : int, default=100_000
        Cap on the training rows searched (the paper's subsample size); more rows are
        subsampled.
    random_state : int, Generator or None, default=None
        The subsample (only drawn when there are more than ``max_train`` training rows).

    Attributes
    ----------
    train_index_ : ndarray of shape (n_searched,)
        Training rows searched, sorted.
    scaler_ : StandardScaler
    neighbors_ : NearestNeighbors
        Fitted on the standardised searched rows.
    positions_ : ndarray of shape (n_searched, n_labels)
        Their mean positions (unranked labels at the mean of the positions left over).
    consensus_ : ndarray of shape (n_labels,)
        Borda scores of all training rows (the tie-break).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> Y = [[1, 2, 0], [1, 0, 2], [0, 1, 2], [0, 1, 0]]
    >>> KNNMallows(n_neighbors=2).fit(X, Y).predict([[0.05], [5.05]]).tolist()
    [[1, 2, 3], [3, 1, 2]]
    """

    def __init__(self, *, n_neighbors: int = 10, max_train: int = 100_000,
                 random_state: Any = None):
        self.n_neighbors = n_neighbors
        self.max_train = max_train
        self.random_state = random_state

    def _fit(self, X, Y, groups, progress) -> None:
        k = check_positive_int(self.n_neighbors, "n_neighbors")
        cap = check_positive_int(self.max_train, "max_train")
        rng = as_generator(self.random_state)
        n = X.shape[0]
        if n > cap:
            index = np.sort(rng.choice(n, cap, replace=False))
        else:
            index = np.arange(n)
        if k > index.size:
            raise ValueError(f"n_neighbors must be at most the number of training rows searched "
                             f"({index.size}); got {k}.")
        scaler = StandardScaler().fit(X)
        self.scaler_ = scaler
        self.train_index_ = index
        self.neighbors_ = NearestNeighbors(n_neighbors=k).fit(scaler.transform(X[index]))
        self.positions_ = _mean_positions(Y[index])
        self.consensus_ = _borda_from_positions(_mean_positions(Y))

    def decision_function(self, X, *, groups=None) -> np.ndarray:
        """Borda scores of each row's neighbours, ``L −`` the mean of their mean positions,
        plus the tie-break (class docstring), below ``1/(4k)``."""
        X = self._check_predict(X)
        idx = self.neighbors_.kneighbors(self.scaler_.transform(X), return_distance=False)
        k = idx.shape[1]
        total = np.zeros((X.shape[0], self.n_labels_))
        for c in range(k):  # k vectorised gathers, no (n, k, L) array
            total += self.positions_[idx[:, c]]
        # Neighbour scores are multiples of 1/(2k); the tie-break lies in [0, 1/(4k)).
        c = self.consensus_ - self.consensus_.min()
        tie_break = c / (c.max() + 1.0) / (4 * k)
        return self.n_labels_ - total / k + tie_break


# ----------------------------------------------------------------------- logistic models
class LogisticPerLabel(LabelRanker):
    r"""LR: one logistic regression per label, "was label :math:`j` ranked (clicked)?".

    Features are standardised; label :math:`j`'s model is
    :class:`~sklearn.linear_model.LogisticRegression` (L2, lbfgs) on target
    :math:`Y_{\cdot j} > 0`.  Labels are ranked by :math:`P(j \text{ ranked} \mid x)`.  The
    order *among* ranked labels is not used (the paper's LR, the industry standard for ad
    targeting).  A label ranked in no training row, or in every one, has one class only: its
    score is the constant frequency (0 or 1).

    Parameters
    ----------
    C : float, default=1.0
        Inverse L2 strength of every model (scikit-learn's ``C``).
    max_iter : int, default=100
        lbfgs iterations per model.
    random_state : int, Generator or None, default=None
        Seeds passed to the models (lbfgs itself is deterministic).

    Attributes
    ----------
    scaler_ : StandardScaler
    coef_ : ndarray of shape (n_labels, n_features)
        Weights on the standardised features (0 for one-class labels).
    intercept_ : ndarray of shape (n_labels,)
    constant_ : ndarray of shape (n_labels,)
        The constant score of a one-class label, ``nan`` for a modelled one.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> Y = [[1, 2, 0], [1, 0, 2], [2, 1, 0], [0, 1, 2]]
    >>> LogisticPerLabel().fit(X, Y).predict([[-3.0], [3.0]]).tolist()
    [[1, 2, 3], [3, 1, 2]]
    """

    def __init__(self, *, C: float = 1.0, max_iter: int = 100, random_state: Any = None):
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y, groups, progress) -> None:
        C = check_positive_number(self.C, "C", "inverse L2 strength")
        max_iter = check_positive_int(self.max_iter, "max_iter")
        rng = as_generator(self.random_state)
        scaler = StandardScaler().fit(X)
        Z = scaler.transform(X)
        L, d = Y.shape[1], X.shape[1]
        coef, intercept = np.zeros((L, d)), np.zeros(L)
        constant = np.full(L, np.nan)
        with _single_thread_blas():
            for j in range(L):
                y = (Y[:, j] > 0).astype(np.int64)
                seed = _seed(rng)
                if y.min() == y.max():
                    constant[j] = float(y[0])
                else:
                    coef[j], intercept[j] = _fit_logistic(Z, y, C, max_iter, seed)
                if progress is not None:
                    progress(j + 1, L)
        self.scaler_, self.coef_, self.intercept_, self.constant_ = (
            scaler, coef, intercept, constant)

    def predict_proba(self, X) -> np.ndarray:
        """:math:`P(\\text{label ranked} \\mid x)` per label, shape ``(n_rows, n_labels)``."""
        X = self._check_predict(X)
        proba = expit(self.scaler_.transform(X) @ self.coef_.T + self.intercept_)
        fixed = ~np.isnan(self.constant_)
        proba[:, fixed] = self.constant_[fixed]
        return proba

    def decision_function(self, X, *, groups=None) -> np.ndarray:
        """The probabilities of :meth:`predict_proba` (higher = preferred)."""
        return self.predict_proba(X)


class PairwiseLogistic(LabelRanker):
    r"""PW-LR: one logistic regression per pair of labels, soft votes summed per label.

    For every pair :math:`i < j` the model learns :math:`P(i \succ j \mid x)` on the rows
    where the pair is known — at least one of the two labels ranked: both ranked (the lower
    position wins) or one ranked and the other not (the ranked one wins).  A label's score
    is the sum of its soft votes (Hüllermeier et al. 2008),

    .. math:: s_i(x) = \sum_{j \ne i} P(i \succ j \mid x), \qquad
              P(j \succ i \mid x) = 1 - P(i \succ j \mid x).

    A pair known in no training row gets the constant probability 1/2; a pair with one
    class only (say :math:`i` always wins) gets that class's constant probability (1 or 0).
    Features are standardised once; each model is
    :class:`~sklearn.linear_model.LogisticRegression` (L2, lbfgs).

    Cost: :math:`L(L-1)/2` models (1,225 for :math:`L = 50`), each on the rows where one of
    its two labels is ranked, so about :math:`(L-1)\,\bar L_t\, n` rows in all.  With
    ``max_pairs_rows`` a pair with more known rows than that is fitted on a uniform
    subsample of them.

    Parameters
    ----------
    C : float, default=1.0
        Inverse L2 strength of every model.
    max_iter : int, default=100
        lbfgs iterations per model.
    max_pairs_rows : int or None, default=None
        Cap on the training rows of one pair model; ``None`` uses all known rows.
    random_state : int, Generator or None, default=None
        The row subsamples (with ``max_pairs_rows``) and the models' seeds.

    Attributes
    ----------
    pairs_ : ndarray of shape (n_pairs, 2)
        ``(i, j)`` with ``i < j``, in lexicographic order.
    scaler_ : StandardScaler
    coef_ : ndarray of shape (n_pairs, n_features)
        Weights of :math:`\operatorname{logit} P(i \succ j)` on the standardised features.
    intercept_ : ndarray of shape (n_pairs,)
    constant_ : ndarray of shape (n_pairs,)
        Constant :math:`P(i \succ j)` of an unmodelled pair, ``nan`` for a modelled one.
    n_pair_rows_ : ndarray of shape (n_pairs,)
        Training rows of each pair model (after the cap).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> Y = [[1, 2, 0], [1, 0, 2], [2, 1, 0], [0, 1, 2]]
    >>> PairwiseLogistic().fit(X, Y).predict([[-3.0], [3.0]]).tolist()
    [[1, 2, 3], [3, 1, 2]]
    """

    def __init__(self, *, C: float = 1.0, max_iter: int = 100,
                 max_pairs_rows: int | None = None, random_state: Any = None):
        self.C = C
        self.max_iter = max_iter
        self.max_pairs_rows = max_pairs_rows
        self.random_state = random_state

    def _fit(self, X, Y, groups, progress) -> None:
        C = check_positive_number(self.C, "C", "inverse L2 strength")
        max_iter = check_positive_int(self.max_iter, "max_iter")
        cap = (None if self.max_pairs_rows is None
               else check_positive_int(self.max_pairs_rows, "max_pairs_rows"))
        rng = as_generator(self.random_state)
        scaler = StandardScaler().fit(X)
        Z = scaler.transform(X)
        L, d = Y.shape[1], X.shape[1]
        pairs = np.array([(i, j) for i in range(L) for j in range(i + 1, L)], dtype=np.int64)
        P = len(pairs)
        coef, intercept = np.zeros((P, d)), np.zeros(P)
        constant, n_rows = np.full(P, np.nan), np.zeros(P, dtype=np.int64)
        ranked = Y > 0
        # Unranked labels sit below every ranked one: compare with position L + 1.
        pos = np.where(ranked, Y, L + 1)
        with _single_thread_blas():
            for p, (i, j) in enumerate(pairs):
                rows = np.flatnonzero(ranked[:, i] | ranked[:, j])
                seed = _seed(rng)
                if cap is not None and rows.size > cap:
                    rows = np.sort(rng.choice(rows, cap, replace=False))
                n_rows[p] = rows.size
                y = (pos[rows, i] < pos[rows, j]).astype(np.int64)
                if rows.size == 0:
                    constant[p] = 0.5
                elif y.min() == y.max():
                    constant[p] = float(y[0])
                else:
                    coef[p], intercept[p] = _fit_logistic(Z[rows], y, C, max_iter, seed)
                if progress is not None:
                    progress(p + 1, P)
        self.pairs_, self.scaler_ = pairs, scaler
        self.coef_, self.intercept_, self.constant_ = coef, intercept, constant
        self.n_pair_rows_ = n_rows

    def pair_proba(self, X) -> np.ndarray:
        r""":math:`P(i \succ j \mid x)` for every pair of ``pairs_``: ``(n_rows, n_pairs)``."""
        X = self._check_predict(X)
        proba = expit(self.scaler_.transform(X) @ self.coef_.T + self.intercept_)
        fixed = ~np.isnan(self.constant_)
        proba[:, fixed] = self.constant_[fixed]
        return proba

    def decision_function(self, X, *, groups=None) -> np.ndarray:
        r"""Soft votes :math:`\sum_{j \ne i} P(i \succ j \mid x)` per label."""
        X = self._check_predict(X)
        L = self.n_labels_
        P = len(self.pairs_)
        win = np.zeros((P, L))  # proba @ win  -> votes of i from P(i > j)
        win[np.arange(P), self.pairs_[:, 0]] = 1.0
        lose = np.zeros((P, L))  # (1 - proba) @ lose -> votes of j from P(j > i)
        lose[np.arange(P), self.pairs_[:, 1]] = 1.0
        out = np.empty((X.shape[0], L))
        for start in range(0, X.shape[0], _BLOCK):  # (rows, pairs) stays small
            proba = self.pair_proba(X[start:start + _BLOCK])
            out[start:start + _BLOCK] = proba @ win + (1.0 - proba) @ lose
        return out
