"""λ-gradients (LambdaRank / LambdaMART) for uplift ranking metrics, and LightGBM objectives.

For a pair of rows ``(i, j)`` of one query with ``rel_i > rel_j`` and model scores ``s``
(Burges 2010, SPEC §3)::

    ρ_ij = 1 / (1 + exp(σ (s_i − s_j)))
    λ_ij = σ |ΔM_ij| ρ_ij                  pushes s_i up and s_j down
    h_ij = σ² |ΔM_ij| ρ_ij (1 − ρ_ij)      added to the curvature of both rows

where ``ΔM_ij`` is the change of the metric when the two rows swap positions in the ranking
by the current scores.  ``ρ_ij`` is Burges's RankNet factor.  (Welleck 2016 prints the pair
cost ``C(o) = o + log(1 + e^o)`` with ``o_ij = s_j − s_i`` and the derivative ``1/(1 + e^o)``,
which is not that cost's derivative; taken literally it weights correctly ordered pairs
most — 0.953 for ``s_i − s_j = 3``, where ρ is 0.047.  UpRank follows Burges, as the
paper's own derivation intends.)  These are the first and second derivatives of the pair cost
``|ΔM_ij| log(1 + exp(−σ (s_i − s_j)))``, so ``grad = −Σ λ`` (LightGBM minimises: the row
that should go up gets a negative gradient) and ``hess = Σ h``; per query the gradients sum
to zero.

Positions are the ranks by score, descending, 1-based; **tied scores are ranked by row
order** (a stable sort), so the first boosting round, where every score is equal, ranks
each query in its given row order (as LightGBM's own ``lambdarank`` does).

Metrics (``n`` rows in the query, ``i`` the 1-based position, ``k`` the cut-off)
----------------------------------------------------------------------------------
Most metrics have the form ``M = Σ_rows gain(rel) · w(position)``, for which
``ΔM_ij = (gain_i − gain_j)(w(pos_i) − w(pos_j))``:

==============  =============================  ============================================
name            gain                           w(i)
==============  =============================  ============================================
``pcg``         rel                            ``(n − i + 1)·[i ≤ k]`` (Devriendt et al.)
``pcg_cutoff``  rel                            ``max(k − i + 1, 0)``: exact AUUC up to ``k``
``dcg``         rel (DCG1, linear)             ``[i ≤ k] / log2(i + 1)``
``dcg_exp``     ``2^rel − 1`` (DCG2)           ``[i ≤ k] / log2(i + 1)``
``ndcg``        rel, divided by the IDCG@k     ``[i ≤ k] / log2(i + 1)``
``ndcg_exp``    ``2^rel − 1``, / IDCG@k        ``[i ≤ k] / log2(i + 1)``
``auc``         ``ℓ = [rel > 0]``, / (m·n₋)    ``n − i``
``mauc``        ``1 / (R (n − m_c))``, c > 0    ``n − i``
==============  =============================  ============================================

Linear gain is the default for DCG because uplift relevance is often negative or tiny
(``Rel`` labels are ``±1/|T|``); ``2^rel − 1`` is offered under its own name.  Queries whose
ideal DCG is ``≤ 0`` (no positive gain) get zero λ under ``ndcg`` (LightGBM's convention),
with a warning.

*AUC* (Welleck 2016, eq. 9-12).  With ``m`` positives and ``n₋`` negatives,
``AUC = #{positive above negative} / (m n₋) = [Σ_pos (n − i) − m(m−1)/2] / (m n₋)``, linear in
the positions.  Swapping the rows at positions ``i < j`` (1 = top) changes it by
``ΔAUC = (ℓ_j − ℓ_i)(j − i) / (m n₋)``, which is the paper's eq. 12.  (The paper's final
display, ``(ℓ_i − ℓ_j)(j − i)/(mn)``, has the opposite sign; it holds when positions are
counted from the bottom.  Only ``|ΔAUC|`` enters λ.)

*MAUC* (Welleck 2016, eq. 5 and 18): ``MAUC = Σ_c p(c) AUC(c)`` where ``AUC(c)`` counts
pairs (row of grade ``c`` ranked above a row of another grade) over ``m_c (n − m_c)``.  The
classes and weights are those of :func:`core.evaluation.metrics.mauc`: the grades ``c > 0`` with
``p(c) = m_c / R`` (``R`` relevant rows), so the weights sum to 1 and MAUC = AUC for binary
relevance.  (Taken literally, the paper's ``p(c) = m_c / n`` over *all* grades makes grade 0
a class, whose "AUC" rewards ranking irrelevant rows first, and makes ``|ΔMAUC_ij|`` vanish
for pairs of a relevant and an irrelevant row of equally large classes.  Two relevant grades
of equal size still get ``|ΔMAUC_ij| = 0`` here: grades [1, 2, 0, 0] give no λ between the
grade-2 and the grade-1 row — brute force agrees.  The weights are each query's own shares,
not the dataset's the paper names: see :func:`core.evaluation.metrics.mauc`, which also says
why the ideal order is not always MAUC's best and λ can push against MAUC for a pair of
relevant grades.)  Summing eq. 12 over classes gives
``ΔMAUC_ij = (G_a − G_b)(pos_i − pos_j)`` with ``G_c = 1 / (R (n − m_c))`` for ``c > 0`` and
``G_0 = 0``, so MAUC is position-weighted too.  As in the paper, λ pushes the *more
relevant* row up with weight ``|ΔMAUC|``.  Between two relevant grades ``|ΔMAUC|`` only
depends on their sizes (a property of the definition, not of this code).

*MAP* (binary relevance ``rel > 0``, ``R`` relevant rows).  With ``R(u)`` the relevant rows
at positions ``≤ u``, ``H(u) = Σ_{relevant r ≤ u} 1/r`` and ``AP = (1/R) Σ_{relevant r}
R(r)/r``: moving a relevant row from ``a`` down to an irrelevant row's place ``b > a``
takes one relevant row away from above every relevant row strictly between them
(``−(H(b) − H(a))``, as ``b`` itself is irrelevant) and changes the moved row's precision from
``R(a)/a`` to ``R(b)/b``, so ``ΔAP = −(V(a) − V(b)) / R`` with ``V(u) = R(u)/u − H(u)``.  The
opposite swap (irrelevant row at ``a``, relevant at ``b > a``) gives
``ΔAP = +(V⁺(a) − V⁺(b)) / R`` with ``V⁺(u) = V(u) + 1/u``.  This is the ΔMAP of LambdaRank
(Donmez, Svore & Burges 2009), O(1) per pair from two prefix sums; MAP is thus
position-weighted with a weight that depends on whether the pair is correctly ordered,
which the binned engine handles too.  The tests check every ``|ΔM|`` above against swapping
the two rows and recomputing the metric (AP, or AUC by counting pairs) from scratch.

Methods
-------
``"exact"`` sums all pairs of a query, ``O(n²)`` per query (refused above
:data:`EXACT_MAX_ROWS` rows).  ``"binned"`` is ``O(n·C + B log B·C)`` for ``C`` relevance
classes and ``B`` score bins with the compiled back-end (FFT convolutions; ``O(n·C + B²·C)``
with numpy's matrix products); see :func:`core.objectives._kernels.binned_query` and
:func:`core.objectives._compiled.binned_query_compiled` for the algorithm and
:func:`lambda_gradients` for its accuracy.  ``"auto"`` uses exact up to
:data:`AUTO_EXACT_MAX_ROWS` rows per query and binned above.  The label-dependent set-up
(gains, position weights, per-query scales, which kernel runs which query) lives in
:mod:`core.objectives._plan` and is computed once per objective, not once per boosting round.

Both methods have two back-ends with the same results (to rounding): compiled numba loops
(:mod:`core.objectives._compiled`; a sort, two passes over the rows and FFT convolutions over
the bins — about 2.5 ms per call on a 30,000-row query with its set-up, 4× faster than numpy,
and about 1 ms per boosting round, where the set-up is kept and the sort starts from the last
round's order) and
vectorised numpy (:mod:`core.objectives._kernels`), used when numba is not installed or the
environment variable ``UPRANK_LAMBDA_BACKEND=numpy`` is set.  The first call in a process
imports numba and loads its compiled code (about 1 s; about 20 s to compile once in a fresh
checkout).

References
----------
C. J. C. Burges, "From RankNet to LambdaRank to LambdaMART: An overview", Microsoft
Research Technical Report MSR-TR-2010-82, 2010.

F. Devriendt, J. Van Belle, T. Guns, W. Verbeke, "Learning to rank for uplift modeling",
IEEE Transactions on Knowledge and Data Engineering, 2020 (PCG, eq. 25).

S. J. Welleck, "Efficient AUC optimization for information ranking applications", ECIR 2016
(λ-AUC and λ-MAUC; the λ-AUC paper is Welleck's, not Svore's or Donmez's).

P. Donmez, K. M. Svore, C. J. C. Burges, "On the local optimality of LambdaRank", SIGIR
2009 (λ-gradients for MAP and other IR metrics).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core._validation import check_scores
from core.objectives._plan import (
    AUTO_EXACT_MAX_ROWS,
    CUTOFF_METRICS,
    EXACT_MAX_ROWS,
    MAX_BINNED_CLASSES,
    METHODS,
    METRICS,
    Plan,
    check_groups,
    check_options,
)

__all__ = [
    "AUTO_EXACT_MAX_ROWS",
    "CUTOFF_METRICS",
    "EXACT_MAX_ROWS",
    "MAX_BINNED_CLASSES",
    "METHODS",
    "METRICS",
    "LambdaObjective",
    "lambda_gradients",
    "lightgbm_objective",
]


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def lambda_gradients(
    scores: Any,
    relevance: Any,
    group_sizes: Any = None,
    *,
    metric: str,
    k: int | float | None = None,
    method: str = "auto",
    bins: int = 256,
    sigma: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """λ-gradients and curvatures of a ranking metric, in LightGBM's sign convention.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Current model scores (raw, any finite values).
    relevance : array-like of shape (n,)
        Relevance labels; any finite values (negative and fractional are fine).  ``map``
        and ``auc`` use ``rel > 0`` as the binary label; ``mauc`` uses the distinct values > 0
        as classes.
    group_sizes : array-like of int, optional
        Sizes of contiguous query blocks, as LightGBM's ``group``; they must sum to ``n``.
        ``None`` makes all rows one query (the *joint* setting).
    metric : {"pcg", "pcg_cutoff", "dcg", "dcg_exp", "ndcg", "ndcg_exp", "map", "auc", "mauc"}
        The metric whose swap changes ``|ΔM|`` weight the pairs (see the module docstring).
    k : int or float, optional
        Cut-off for the ``pcg``, ``dcg`` and ``ndcg`` families: an ``int`` is a number of rows
        (capped at each query's length), a ``float`` in (0, 1] a fraction of each query's
        length, rounded half up to a row (at least 1).  ``None`` (default) is the whole
        query.  ``map``, ``auc`` and ``mauc`` take no cut-off.
    method : {"auto", "exact", "binned"}, default "auto"
        ``"exact"``: all pairs, ``O(n²)`` per query, refused above 20,000 rows.
        ``"binned"``: ``O(n·C + B log B·C)`` (numpy back-end: ``O(n·C + B²·C)``); queries
        with more than 16 distinct relevance values (continuous relevance) fall back to
        exact, and raise above 20,000 rows.
        ``"auto"``: exact up to 256 rows per query, binned above.
    bins : int, default 256
        Number of equal-width score bins per query for the binned method.
    sigma : float, default 1.0
        Steepness σ of the RankNet sigmoid.

    Returns
    -------
    grad, hess : ndarray of shape (n,)
        ``grad_i = −σ Σ_j ±λ_ij`` and ``hess_i = σ² Σ_j |ΔM_ij| ρ_ij (1 − ρ_ij) ≥ 0``.

    Notes
    -----
    *Binned accuracy.*  The binned kernel is exact except for the sigmoid, which it expands
    to second order around bin-centre differences; the error per pair is about
    ``0.02·(σ·width)³`` with ``width = (max s − min s)/bins`` (the width is capped at
    ``0.1/σ`` by adding bins, up to ``4·bins``; scores spread so wide that a bin stays wider
    than ``0.25/σ`` — an outlier, heavy tails — take the exact kernel for that call, or warn
    above 20,000 rows).  On 3,000-row queries with uplift labels
    and normal scores of standard deviation 0.1 to 20, the largest gradient error is
    ≤ 3e-7 of the largest gradient and the largest hessian error ≤ 1e-5 (the numpy
    back-end's hessian drops one near-field term; the compiled one keeps it).

    Examples
    --------
    Two tied rows: the first (row order) holds position 1; swapping them changes PCG by
    ``|1 − 0|·|2 − 1| = 1`` and ``ρ = ½``, so the relevant second row gets ``grad = −½``:

    >>> grad, hess = lambda_gradients([0.0, 0.0], [0.0, 1.0], metric="pcg")
    >>> grad.tolist(), hess.tolist()
    ([0.5, -0.5], [0.25, 0.25])
    """
    plan = Plan(relevance, group_sizes, metric=metric, k=k, method=method, bins=bins,
                sigma=sigma)
    scores = check_scores(scores, "scores", n=plan.n)
    return plan.gradients(scores)


class LambdaObjective:
    """A λ-gradient custom objective for LightGBM; build it with :func:`lightgbm_objective`.

    The instance is callable in both of LightGBM's conventions:

    * ``lgb.train(params={"objective": obj, "metric": "None"}, ...)`` calls
      ``obj(preds, train_data)``: relevance comes from ``train_data.get_label()``, query
      sizes from ``train_data.get_group()`` and row weights from ``get_weight()``;
    * ``lgb.LGBMRanker(objective=obj, metric="None")`` calls
      ``obj(y_true, y_pred, weight, group)``.

    Row weights multiply each row's gradient and hessian (as LightGBM's ``lambdarank``
    does).  The gradient and hessian come back as float32, the precision LightGBM keeps
    them in (computed in float64 and rounded once; LightGBM would otherwise convert a
    float64 copy every round).  The label-dependent set-up is cached between boosting
    rounds, and the previous round's ranking starts the next round's bucket sort
    (near-linear: between two rounds of boosting few rows change places) for queries up to
    ``WARM_MAX_ROWS`` rows; plans of large queries may use a packed-key sort instead (timed
    on their first rounds, see :data:`core.objectives._plan.SORT_TRIALS`).
    """

    def __init__(self, metric: str, *, group_sizes: Any = None, k: int | float | None = None,
                 method: str = "auto", bins: int = 256, sigma: float = 1.0) -> None:
        check_options(metric, k, method, bins, sigma)
        self.metric, self.k, self.method, self.bins, self.sigma = metric, k, method, bins, sigma
        self.group_sizes = None if group_sizes is None else check_groups(group_sizes, None)
        self._plan: Plan | None = None
        self._labels: np.ndarray | None = None
        #: the labels and group objects of the last call and copies of both: LightGBM
        #: passes the same objects every round, and a round whose labels and group still hold
        #: the same values skips the set-up checks
        self._last: tuple[Any, Any, Any, Any] | None = None  # labels, group, their copies

    def __deepcopy__(self, memo: dict) -> LambdaObjective:
        # LightGBM deep-copies its params (several times per ``train``): copy the options,
        # not the cached set-up (a plan of 14M rows is ~1 GB; the copy builds its own)
        return LambdaObjective(self.metric, group_sizes=self.group_sizes, k=self.k,
                               method=self.method, bins=self.bins, sigma=self.sigma)

    def __getstate__(self) -> dict:
        # pickled (to a Dask worker, a job process) without the cached set-up
        return {**self.__dict__, "_plan": None, "_labels": None, "_last": None}

    def __repr__(self) -> str:
        return (f"LambdaObjective(metric={self.metric!r}, k={self.k!r}, method={self.method!r}, "
                f"bins={self.bins!r}, sigma={self.sigma!r})")

    def __call__(self, first: Any, second: Any, weight: Any = None,
                 group: Any = None) -> tuple[np.ndarray, np.ndarray]:
        if hasattr(second, "get_label") and hasattr(second, "get_group"):  # lgb.train
            preds, labels = first, second.get_label()
            group, weight = second.get_group(), second.get_weight()
        else:  # scikit-learn API: (y_true, y_pred[, weight[, group]])
            labels, preds = first, second
        last = self._last
        if (last is not None and labels is last[0] and group is last[1]
                and np.array_equal(labels, last[3])  # unchanged in place (same dtype: cheap)
                and (group is None or np.array_equal(group, last[2]))):
            plan = self._plan  # the previous round's labels and groups: no set-up checks
        else:
            plan = self._plan_for(np.asarray(labels, dtype=np.float64), group)
            self._last = (labels, group, None if group is None else np.array(group),
                          np.array(labels))
        if weight is not None:
            weight = check_scores(weight, "weight", n=plan.n)
        return plan.gradients(check_scores(preds, "preds", n=plan.n), warm=True, weight=weight,
                              dtype=np.float32)

    def _plan_for(self, labels: np.ndarray, group: Any) -> Plan:
        sizes = self.group_sizes
        if group is not None:
            given = check_groups(group, labels.size)
            if sizes is not None and not np.array_equal(given, sizes):
                raise ValueError(
                    "group_sizes given to lightgbm_objective disagree with the training data's "
                    f"group ({sizes.size} vs {given.size} queries)."
                )
            sizes = given
        plan = self._plan
        if (plan is None or plan.n != labels.size or not np.array_equal(plan.sizes_arg, sizes)
                or not np.array_equal(self._labels, labels)):
            plan = Plan(labels, sizes, metric=self.metric, k=self.k, method=self.method,
                        bins=self.bins, sigma=self.sigma)
            self._plan, self._labels = plan, labels.copy()
        return plan


def lightgbm_objective(
    metric: str,
    *,
    group_sizes: Any = None,
    k: int | float | None = None,
    method: str = "auto",
    bins: int = 256,
    sigma: float = 1.0,
) -> LambdaObjective:
    """Return a LightGBM custom objective that boosts with λ-gradients of ``metric``.

    Parameters
    ----------
    metric, k, method, bins, sigma
        As in :func:`lambda_gradients`.
    group_sizes : array-like of int, optional
        Query sizes.  By default they come from the training data (``Dataset(group=...)`` or
        ``LGBMRanker.fit(group=...)``); without any, all rows form one query.

    Returns
    -------
    LambdaObjective
        Use as ``lgb.train({"objective": obj, "metric": "None", ...}, train_set)`` or
        ``lgb.LGBMRanker(objective=obj, metric="None")``.  Set the metric to ``"None"``:
        LightGBM's default ranking metric (ndcg) rejects negative labels and queries over
        10,000 rows.  LightGBM stores labels as float32; relevance classes are the distinct
        float32 values.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> rel = (X[:, 0] > 0).astype(float)  # one query of 200 rows, relevant when x0 > 0
    >>> obj = lightgbm_objective("pcg")
    >>> booster = lgb.train({"objective": obj, "metric": "None", "verbose": -1},
    ...                     lgb.Dataset(X, rel, group=[len(rel)]), num_boost_round=20)
    >>> score = booster.predict(X)
    >>> bool(score[rel == 1].mean() > score[rel == 0].mean())
    True
    """
    return LambdaObjective(metric, group_sizes=group_sizes, k=k, method=method, bins=bins,
                           sigma=sigma)
