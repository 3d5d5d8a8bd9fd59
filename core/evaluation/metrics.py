r"""Ranked-list metrics for learning to rank and uplift: P@k, AP/MAP, CG, DCG, NDCG, PCG.

Every metric takes ``(y_true, score)`` like scikit-learn — relevance first, the ranker's
score second — and keyword-only options.  The AUC-paper metrics (AUC, MAUC, micro/macro
precision) live in :mod:`core.evaluation.auc_metrics` and are re-exported here.

Conventions shared by every function
------------------------------------
* **Order** — rows are ranked by ``score`` descending; **ties are broken by row order**
  (stable sort, ``np.argsort(-score, kind="stable")``), so results are deterministic but
  depend on the row order inside a tie.  (:mod:`core.evaluation.curves` offers tie-averaged curves;
  the metrics here use the stable order.  AUC and MAUC count ties ½ and are tie-free.)
* **Queries** — ``group`` gives one query id per row (numbers or strings; the rows of a
  query need not be contiguous).  A metric is computed inside each query and the result is
  the **unweighted mean over queries** (paper eq. 19: MAP, and "similarly" for DCG/NDCG).
  Queries where the metric is undefined (e.g. AP without a relevant row) are left out of
  the mean with an :class:`~core._validation.UndefinedMetricWarning`; ``nan`` if none is
  defined.  ``group=None`` means one query holding every row.
* **Cut-off** — ``k=None`` means the whole list; an int ``k >= 1`` keeps the top
  ``k_q = min(k, n_q)`` rows of each query (a shorter query is used whole).
* **Binary relevance** (P@k, AP, AUC) — a row is relevant when ``y_true > 0``; zero and
  negative relevance (the −1/|C| of the Rel labels) both count as not relevant.
* Bad input raises ``ValueError`` naming the parameter; valid but degenerate input warns
  and returns ``nan``.

References
----------
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. §3.1 (eqs. 17–24), §3.2 (eqs. 25–26) (``learning-to-rank-for-uplift-modeling.txt``).
Järvelin, K. & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques.
Wong, U. (2019). P-nDCG: a new learning-to-rank metric for large lists of imbalanced binary
data. Valassis Engineering Blog (``p-ndcg-imbalanced-lists.txt``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from core._validation import (
    check_binary,
    check_choice,
    check_cutoff,
    check_fraction,
    check_outcome,
    check_positive_number,
    check_probabilities,
    check_same_length,
    check_scores,
    check_uplift_inputs,
    undefined_reason,
)
from core.evaluation._kernel import TIES, ranking_order
from core.evaluation._queries import Ranked, checked_lists, mean_over_queries, rank, undefined
from core.evaluation.auc_metrics import auc, mauc, multiclass_precision_at_k

__all__ = [
    "DISCOUNTS",
    "LABEL_SETS",
    "UPLIFT_LABELS",
    "METRICS",
    "WHOLE_LIST_METRICS",
    "auc",
    "average_precision",
    "cg",
    "dcg",
    "dcg_exp",
    "mauc",
    "mean_average_precision",
    "mean_average_precision_letor",
    "multiclass_precision_at_k",
    "ndcg",
    "ndcg_exp",
    "p_ndcg",
    "pcg",
    "pcg_cutoff",
    "precision_at_k",
    "relevance_labels",
    "transformed_outcome",
    "uplift_pcg",
]

#: Names of the relevance label sets of SPEC §3 (paper Tables 3, 4, 7).
LABEL_SETS: tuple[str, ...] = ("abs1", "abs2", "abs3", "rel")
#: Labels LambdaMART uplift can learn from: the paper's sets, and the transformed outcome
#: (:func:`transformed_outcome`), the one that also serves a continuous outcome.
UPLIFT_LABELS: tuple[str, ...] = (*LABEL_SETS, "transformed")
#: Discounts of :func:`p_ndcg`.
DISCOUNTS: tuple[str, ...] = ("probability", "log2", "zipf", "zipf_beta")

# (TR, TNR, CR, CNR) for the absolute sets; "rel" depends on |T| and |C|.
_ABSOLUTE = {
    "abs1": (1.0, 0.0, 0.0, 1.0),
    "abs2": (1.0, 0.0, -1.0, 0.0),
    "abs3": (3.0, 1.0, 0.0, 2.0),
}


def relevance_labels(y: Any, t: Any, *, labels: str) -> np.ndarray:
    """Relevance of every row from its outcome and treatment (SPEC §3).

    ========  =====  =====  ======  =====
    set       TR     TNR    CR      CNR
    ========  =====  =====  ======  =====
    ``abs1``  1      0      0       1
    ``abs2``  1      0      −1      0
    ``abs3``  3      1      0       2
    ``rel``   1/|T|  0      −1/|C|  0
    ========  =====  =====  ======  =====

    TR = treated responder (t=1, y=1), TNR = treated non-responder, CR = control responder,
    CNR = control non-responder.

    Parameters
    ----------
    y : array-like of shape (n,)
        Outcome, 0/1.
    t : array-like of shape (n,)
        Treatment flag, 0/1.
    labels : {"abs1", "abs2", "abs3", "rel"}
        Label set.  For ``"rel"``, |T| and |C| are the treated and control counts **of the
        rows passed** (pass one query at a time to get per-query counts).  Rows with no
        treated (or no control) row have no TR (CR) row, so 1/|T| (−1/|C|) is never needed.

    Returns
    -------
    ndarray of shape (n,), float64

    References
    ----------
    Devriendt et al. (2020), §3.2.1, Tables 3, 4 and 7.
    """
    check_choice(labels, "labels", LABEL_SETS)
    y = check_binary(y, "y")
    t = check_binary(t, "t")
    check_same_length(y, t)
    treated = t == 1
    responder = y == 1
    if labels == "rel":
        n_t = int(treated.sum())
        n_c = y.shape[0] - n_t
        values = (1.0 / n_t if n_t else 0.0, 0.0, -1.0 / n_c if n_c else 0.0, 0.0)
    else:
        values = _ABSOLUTE[labels]
    out = np.where(
        treated,
        np.where(responder, values[0], values[1]),
        np.where(responder, values[2], values[3]),
    )
    return out.astype(np.float64, copy=False)


def transformed_outcome(y: Any, t: Any, *, propensity: float | None = None) -> np.ndarray:
    r"""The transformed outcome :math:`Y^* = y\,\left(\frac{t}{p} - \frac{1-t}{1-p}\right)`.

    In a randomised experiment with treated share :math:`p`, :math:`E[Y^* \mid x] = \tau(x)`
    (Athey & Imbens 2016), for a binary or a continuous outcome (spend, revenue).  As a
    relevance label it is negative for control rows with an outcome, which the λ engine
    accepts (LightGBM's own ranking objectives do not).

    Parameters
    ----------
    y : array-like of shape (n,)
        Outcome: 0/1 or any finite real.
    t : array-like of shape (n,)
        Treatment flag, 0/1.
    propensity : float in (0, 1), optional
        Treated share of the design; default the observed share of ``t``.

    References
    ----------
    Athey, S. & Imbens, G. (2016). Recursive partitioning for heterogeneous causal effects.
    *PNAS* 113(27). Hitsch, G. & Misra, S. (2018), the transformed outcome for uplift.
    """
    y = check_outcome(y, "y").astype(np.float64, copy=False)
    t = check_binary(t, "t")
    check_same_length(y, t)
    if propensity is None:
        if t.size == 0 or t.min() == t.max():  # the observed share is 0, 1 or undefined
            raise ValueError(f"t must hold both arms to estimate the treated share; got "
                             f"{'no rows' if t.size == 0 else f'only {int(t[0])}s'}. Pass "
                             "propensity= (the design's treated share) otherwise.")
        p = float(t.mean())
    else:
        p = check_fraction(propensity, "propensity")
    if not 0 < p < 1:
        raise ValueError(f"propensity must be in (0, 1); got {p!r}.")
    return y * np.where(t == 1, 1.0 / p, -1.0 / (1.0 - p))


# ------------------------------------------------------------------ binary relevance
def precision_at_k(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""Precision at k: share of relevant rows among the top k (paper eq. 17).

    :math:`P(k) = \frac{1}{k_q}\sum_{i \le k_q} [rel_i > 0]`, ``k_q = min(k, n_q)``, averaged
    over queries.  ``k=None`` gives the share of relevant rows in the whole list.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Relevance; a row is relevant when ``y_true > 0``.
    score : array-like of shape (n,)
        Ranker score, higher ranks first; ties keep row order.
    group : array-like of shape (n,), optional
        Query id of every row; see the module docstring.
    k : int, optional
        Cut-off in rows; None means the whole list.

    Returns
    -------
    float
    """
    y, s, codes, k = checked_lists(y_true, score, group, k)
    r = rank(y, s, codes)
    hits = r.per_query(((r.rel > 0) & r.in_top(k)).astype(np.float64))
    return float((hits / r.cutoff(k)).mean())


def average_precision(
    y_true: Any, score: Any, *, group: Any = None, k: int | None = None
) -> float:
    r"""Average precision of each query, averaged over queries (= MAP; paper eqs. 18–19).

    :math:`\mathrm{AvgP}(q) = \frac{\sum_{i \le k_q} P(i)\,[rel_i > 0]}{\sum_{i \le n_q}
    [rel_i > 0]}` — the mean of P(i) over the positions of the relevant rows.  (Eq. 18 as
    printed omits the :math:`rel_i` factor in the numerator; the paper's text, "the average
    of the P(k) values at every rank k where a relevant document is positioned", and the
    standard definition include it.)  With a cut-off the denominator stays the number of
    relevant rows of the whole query (TREC / ranx convention), so AP@k < 1 when a query
    holds more than k relevant rows.  Without ties this equals
    ``sklearn.metrics.average_precision_score``.

    Parameters
    ----------
    y_true, score, group, k
        As in :func:`precision_at_k`.

    Returns
    -------
    float
        ``nan`` with an :class:`~core._validation.UndefinedMetricWarning` when no query has
        a relevant row (queries without one are left out of the mean).
    """
    vals, n_rel = _ap_per_query(y_true, score, group, k)
    return mean_over_queries(vals, n_rel > 0, "Average precision", "no relevant row")


def _ap_per_query(y_true: Any, score: Any, group: Any, k: int | None):
    """AvgP of every query (0 where it has no relevant row) and its number of relevant rows."""
    y, s, codes, k = checked_lists(y_true, score, group, k)
    r = rank(y, s, codes)
    rel = (r.rel > 0).astype(np.float64)
    cum = np.cumsum(rel)
    before = np.concatenate(([0.0], cum))[r.start][r.qid]  # relevant rows before the query
    prec = (cum - before) / r.pos
    n_rel = r.per_query(rel)
    num = r.per_query(prec * rel * r.in_top(k))
    return np.divide(num, n_rel, out=np.zeros_like(num), where=n_rel > 0), n_rel


def mean_average_precision(
    y_true: Any, score: Any, *, group: Any = None, k: int | None = None
) -> float:
    r"""Mean average precision :math:`\mathrm{MAP}(Q) = \frac{1}{|Q|}\sum_q \mathrm{AvgP}(q)`.

    The same function as :func:`average_precision` (which already averages over the queries
    of ``group``), under the name of paper eq. 19.
    """
    return average_precision(y_true, score, group=group, k=k)


def mean_average_precision_letor(
    y_true: Any, score: Any, *, group: Any = None, k: int | None = None
) -> float:
    r"""MAP as the LETOR 4.0 evaluation tool computes it: a query without any relevant row
    counts as :math:`\mathrm{AvgP}(q) = 0` and stays in the mean over all queries.

    :func:`mean_average_precision` leaves such queries out (with a warning), because their AP
    is undefined; LETOR's tool — and so, we infer, the MAP values of papers evaluated with
    it, e.g. Welleck (2016) on MQ2008, where a third of the test queries have no relevant
    document (the paper does not say how it computed MAP; its level, ~0.47, matches this
    one) — counts them as 0.  Equal to ``mean_average_precision · (#queries with a relevant
    row) / #queries``.

    References
    ----------
    Qin, T. & Liu, T.-Y. (2013). Introducing LETOR 4.0 datasets. arXiv:1306.2597.
    """
    vals, _ = _ap_per_query(y_true, score, group, k)
    return float(vals.mean())


# ----------------------------------------------------------------- graded relevance
def _exp_gain(rel: np.ndarray) -> np.ndarray:
    return np.exp2(rel) - 1.0


def _weights(r: Ranked, k: int | None, kind: str) -> np.ndarray:
    """Position weight of every ranked row, zero beyond the query's cut-off."""
    top = r.in_top(k)
    if kind == "cg":
        return top.astype(np.float64)
    if kind == "dcg":
        return top / np.log2(r.pos + 1.0)
    last = r.size if kind == "pcg" else r.cutoff(k)  # "pcg" promotes n-i+1, "cutoff" K-i+1
    return top * (last[r.qid] - r.pos + 1.0)


def _gain_metric(y_true, score, group, k, *, kind: str, exp: bool = False) -> float:
    y, s, codes, k = checked_lists(y_true, score, group, k)
    r = rank(y, s, codes)
    gain = _exp_gain(r.rel) if exp else r.rel
    return float(r.per_query(gain * _weights(r, k, kind)).mean())


def _ndcg_per_query(r: Ranked, y: np.ndarray, k: int | None, *,
                    exp: bool) -> tuple[np.ndarray, np.ndarray]:
    """NDCG of every query of the ranked rows ``r`` (``y``: relevance in input order) and
    where it is defined (ideal DCG > 0)."""
    w = _weights(r, k, "dcg")
    gain_fn = _exp_gain if exp else (lambda x: x)
    dcg_q = r.per_query(gain_fn(r.rel) * w)
    idcg_q = r.per_query(r.ideal(gain_fn(y)) * w)
    ok = idcg_q > 0
    return np.divide(dcg_q, idcg_q, out=np.zeros_like(dcg_q), where=ok), ok


def _ndcg(y_true, score, group, k, *, exp: bool) -> float:
    y, s, codes, k = checked_lists(y_true, score, group, k)
    vals, ok = _ndcg_per_query(rank(y, s, codes), y, k, exp=exp)
    name = "NDCG2" if exp else "NDCG"
    return mean_over_queries(vals, ok, name, "the ideal DCG is not positive")


def cg(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""Cumulative gain :math:`CG(k) = \sum_{i \le k} rel_i` (paper eq. 20), mean over queries.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Graded relevance; any finite real (negative allowed).
    score, group, k
        As in :func:`precision_at_k`.
    """
    return _gain_metric(y_true, score, group, k, kind="cg")


def dcg(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""DCG1, linear gain: :math:`\sum_{i \le k} rel_i / \log_2(i+1)` (paper eq. 21).

    Mean over queries.  Equals ``sklearn.metrics.dcg_score`` (linear gain) without ties.
    Parameters as in :func:`cg`.
    """
    return _gain_metric(y_true, score, group, k, kind="dcg")


def dcg_exp(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""DCG2, exponential gain: :math:`\sum_{i \le k} (2^{rel_i} - 1)/\log_2(i+1)` (eq. 22).

    Mean over queries (Burges et al. 2005).  A negative relevance gives a gain in (−1, 0).
    Parameters as in :func:`cg`.
    """
    return _gain_metric(y_true, score, group, k, kind="dcg", exp=True)


def ndcg(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""NDCG1 = DCG1(k) / IDCG1(k) (paper eqs. 23–24), mean over queries.

    IDCG is the DCG of the query's relevance sorted descending (the best ranking), cut at
    the same ``k``.  **Negative relevance**: sorting descending still maximises the DCG
    (rearrangement inequality), so NDCG ≤ 1 whenever IDCG > 0, but NDCG may be negative,
    even below −1.  A query with IDCG ≤ 0 (no positive gain can be had in its top k) has
    no meaningful normaliser: it is left out of the mean with an
    :class:`~core._validation.UndefinedMetricWarning`; ``nan`` when every query is so.
    Parameters as in :func:`cg`.
    """
    return _ndcg(y_true, score, group, k, exp=False)


def ndcg_exp(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""NDCG2 = DCG2(k) / IDCG2(k): :func:`ndcg` with the gain :math:`2^{rel} - 1` (eq. 22).

    Same ideal ordering (the gain is increasing in rel) and the same IDCG ≤ 0 rule as
    :func:`ndcg`.  Parameters as in :func:`cg`.
    """
    return _ndcg(y_true, score, group, k, exp=True)


def pcg(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""Promoted cumulative gain, the paper's version (eq. 25), mean over queries.

    :math:`PCG(k) = \sum_{i \le k} rel_i\,(n_q - i + 1)`: each row is *promoted* by the number
    of positions at or below it in the **whole** query; a cut-off only truncates the sum.
    With Rel labels on one joint query, :math:`PCG(n) = \sum_{k=1}^{n} V(k)`
    = n · AUUC of ``uplift_joint_rel`` (paper §3.2.2).  Parameters as in :func:`cg`.
    """
    return _gain_metric(y_true, score, group, k, kind="pcg")


def pcg_cutoff(y_true: Any, score: Any, *, group: Any = None, k: int | None = None) -> float:
    r"""PCG with exact cut-off promotion: :math:`\sum_{i \le K} rel_i\,(K - i + 1)`.

    ``K = k_q = min(k, n_q)``.  Promotion :math:`K - i + 1` makes this exactly the area
    :math:`\sum_{j=1}^{K}\sum_{i \le j} rel_i` under the cumulative-gain curve up to the
    cut-off, so with Rel labels on one joint query it is :math:`\sum_{j \le K} V(j)`,
    n · AUUC@(K/n) of ``uplift_joint_rel`` (SPEC §3 note).  Equals :func:`pcg` when
    ``k=None``.  Mean over queries; parameters as in :func:`cg`.
    """
    return _gain_metric(y_true, score, group, k, kind="pcg_cutoff")


# -------------------------------------------------------------------------- uplift PCG
def uplift_pcg(
    y: Any,
    t: Any,
    score: Any,
    *,
    labels: str = "rel",
    query: str = "joint",
    k: int | float | None = None,
    metric: str = "pcg",
    ties: str = "stable",
) -> float:
    r"""PCG of an uplift ranking in the joint or separate query setting (paper §3.2).

    * ``query="joint"``: one query of all n rows, :math:`PCG(K)` (eq. 25).
    * ``query="separate"``: the treated rows ranked alone and the control rows ranked alone,
      :math:`PCG^T(k_1) + PCG^C(k_2)` (eq. 26), **summed** as in the paper, each promoted by
      its own query length (:math:`|T| - i + 1`, :math:`|C| - i + 1`).

    With ``labels="rel"`` the identities are: joint, ``k=None``: :math:`\sum_{k=1}^{n} V(k)`
    of ``uplift_joint_rel``; separate, ``k=None``:
    :math:`\sum_{j=1}^{|T|} R(T,j)/|T| - \sum_{j=1}^{|C|} R(C,j)/|C|` (Appendix A, eq. 33).
    ``metric="pcg_cutoff"`` promotes by :math:`K - i + 1` instead (see :func:`pcg_cutoff`),
    making these identities hold at every cut-off.

    Parameters
    ----------
    y, t : array-like of shape (n,)
        Binary outcome and treatment flag.
    score : array-like of shape (n,)
        Uplift score, higher ranks first; ties keep row order.
    labels : {"abs1", "abs2", "abs3", "rel"}, default="rel"
        Relevance label set (:func:`relevance_labels`), computed once on all rows.  For
        ``"rel"`` in the separate setting |T| and |C| are therefore the arm sizes of the
        data — which are exactly the sizes of the treated and control queries, as in the
        paper's :math:`g^T(i) = 1/|T|`, :math:`g^C(i) = -1/|C|` (eqs. 35–36).  (Recomputing
        "rel" literally on each one-arm query would need 1/|C| on a query without control
        rows; it never does, since that query holds no CR row.)
    query : {"joint", "separate"}, default="joint"
    k : int, float or None, default=None
        None: the whole lists.  An ``int`` (rows, ``joint`` only): ``K = min(k, n)``.  A
        ``float`` p in (0, 1] (both settings): joint ``K = floor(p·n)`` (the points kept by
        :func:`core.evaluation.curves.auuc` at ``cutoff=p``); separate :math:`k_1 = \lfloor p|T| +
        1/2\rfloor`, :math:`k_2 = \lfloor p|C| + 1/2\rfloor` (nearest row, halves up — the
        rounding of :mod:`core.evaluation.curves`).  Note ``1`` is one row but ``1.0`` is 100 %.  A
        cut-off that rounds to 0 rows contributes 0.
    metric : {"pcg", "pcg_cutoff"}, default="pcg"
        Promotion :math:`n - i + 1` (paper) or :math:`K - i + 1` (exact cut-off area).
    ties : {"stable", "average"}, default="stable"
        ``"stable"``: tied scores keep row order (the module's convention, and the order the
        λ-objectives train on).  ``"average"``: the mean PCG over every order of the tied
        rows — each row of a tie run spanning positions :math:`a \dots b` gets the mean of
        its promotion :math:`\mathbb 1[p \le K]\,(L - p + 1)` over :math:`p = a \dots b`
        (:math:`L` = n or K) — so it does not depend on the row order and equals
        n·AUUC of :mod:`core.evaluation.curves`'s default ``ties="average"`` (joint, Rel).

    Returns
    -------
    float
        ``nan`` with an :class:`~core._validation.UndefinedMetricWarning` when the data has
        no treated row, no control row or no responder (as :mod:`core.evaluation.curves`).
    """
    y, t, s = check_uplift_inputs(y, t, score)
    check_choice(labels, "labels", LABEL_SETS)
    check_choice(query, "query", ("joint", "separate"))
    check_choice(metric, "metric", ("pcg", "pcg_cutoff"))
    check_choice(ties, "ties", TIES)
    n = y.shape[0]
    frac, rows = 1.0, None
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        if query == "separate":
            raise ValueError(
                "k must be None or a fraction in (0, 1] when query='separate' "
                f"(k1 = p|T|, k2 = p|C|); got the integer {k!r}."
            )
        rows = check_cutoff(k, "k")
    elif k is not None:
        frac = check_fraction(k, "k")
    if (reason := undefined_reason(y, t)) is not None:
        return undefined(f"Uplift PCG is undefined because {reason}")
    rel = relevance_labels(y, t, labels=labels)
    if query == "joint":
        r = rank(rel, s, None)
        cut = np.array([min(rows, n) if rows else int(np.floor(frac * n + 1e-9))])
    else:
        r = rank(rel, s, t.astype(np.int64))  # query 0 = control, query 1 = treated
        cut = np.floor(frac * r.size + 0.5 + 1e-9).astype(np.int64)
    last = (r.size if metric == "pcg" else cut)[r.qid].astype(np.float64)
    if ties == "average":
        return float((r.rel * _mean_promotion(r, cut[r.qid], last)).sum())
    top = r.pos <= cut[r.qid]
    return float((r.rel * top * (last - r.pos + 1.0)).sum())


def _mean_promotion(r: Ranked, cut: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per ranked row, the mean of ``[p <= cut] (last - p + 1)`` over the positions ``p`` of
    its tie run (equal scores inside one query): an arithmetic series over ``a … min(b, cut)``."""
    n = r.pos.shape[0]
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = (r.score[1:] != r.score[:-1]) | (r.qid[1:] != r.qid[:-1])
    run = np.cumsum(new_run) - 1
    first = np.flatnonzero(new_run)
    a = r.pos[first][run].astype(np.float64)
    b = a + np.bincount(run)[run] - 1
    hi = np.minimum(b, cut)
    m = np.maximum(hi - a + 1, 0.0)  # positions of the run inside the cut-off
    total = m * (last + 1) - (a + hi) * m / 2
    return total / (b - a + 1)


# ----------------------------------------------------------------------------- P-nDCG
def p_ndcg(
    y_true: Any, p_score: Any, *, discount: str = "probability", beta: float | None = None
) -> float:
    r"""P-nDCG: nDCG of a binary list discounted by the predicted probabilities (SPEC §5).

    Rows are ranked by ``p_score`` descending (ties in row order), :math:`n_+ = \sum y`:

    * ``"probability"`` (P-nDCG): :math:`DCG_p = \sum_i y_i\,p_i`,
      :math:`IDCG_p = \sum_{i=1}^{n_+} p_{(i)}` (the :math:`n_+` largest probabilities).
      Worked examples: y = [1, 0, 1] with p = [0.9, 0.8, 0.1] gives 1.0/1.7 = 0.588, with
      p = [0.9, 0.8, 0.7] gives 1.6/1.7 = 0.941.
    * ``"log2"`` (standard nDCG): weight :math:`1/\log_2(i+1)`; [1, 0, 1] gives 0.920
      (the post prints 0.91, truncating 0.9197).
    * ``"zipf"``: weight :math:`1/i`; ``"zipf_beta"``: weight :math:`1/i^\beta`.

    For the position discounts :math:`IDCG = \sum_{i \le n_+} w(i)`.  The formula image of
    the post is reconstructed from its worked examples (SPEC §5).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcome, 0/1.
    p_score : array-like of shape (n,)
        Predicted probabilities (in [0, 1] for ``"probability"``; any finite score else).
    discount : {"probability", "log2", "zipf", "zipf_beta"}, default="probability"
    beta : float, optional
        Exponent > 0 of ``"zipf_beta"`` (required there, refused elsewhere).

    Returns
    -------
    float
        ``nan`` with an :class:`~core._validation.UndefinedMetricWarning` when there is no
        positive row or the ideal DCG is 0 (all of the n₊ largest probabilities are 0).

    References
    ----------
    Wong, U. (2019). P-nDCG (``p-ndcg-imbalanced-lists.txt``); Wang et al. (2013), COLT.
    """
    y = check_binary(y_true, "y_true")
    if y.shape[0] == 0:
        raise ValueError("y_true must contain at least one row; got an empty array.")
    check_choice(discount, "discount", DISCOUNTS)
    p = (check_probabilities(p_score, "p_score", n=y.shape[0],
                             why=" with discount='probability'")
         if discount == "probability" else check_scores(p_score, "p_score", n=y.shape[0]))
    if discount == "zipf_beta":
        if beta is None:
            raise ValueError("beta must be a finite number > 0 for 'zipf_beta'; got None.")
        beta = check_positive_number(beta, "beta", "the exponent of 'zipf_beta'")
    elif beta is not None:
        raise ValueError(f"beta is only used with discount='zipf_beta'; got beta={beta!r}.")
    n_pos = int(y.sum())
    if n_pos == 0:
        return undefined("P-nDCG is undefined: y_true has no positive row")
    order, _ = ranking_order(p)
    i = np.arange(1, y.shape[0] + 1, dtype=np.float64)
    w = {
        "probability": lambda: p[order],
        "log2": lambda: 1.0 / np.log2(i + 1.0),
        "zipf": lambda: 1.0 / i,
        "zipf_beta": lambda: i ** -float(beta),
    }[discount]()
    idcg = float(w[:n_pos].sum())
    if idcg <= 0:
        return undefined("P-nDCG is undefined: the ideal DCG is 0")
    return float((y[order] * w).sum() / idcg)


# --------------------------------------------------------------------------- registry
#: Ranked-list metrics with the uniform signature ``f(y_true, score, *, group=None, k=None)``.
METRICS: dict[str, Callable[..., float]] = {
    "precision_at_k": precision_at_k,
    "average_precision": average_precision,
    "cg": cg,
    "dcg": dcg,
    "dcg_exp": dcg_exp,
    "ndcg": ndcg,
    "ndcg_exp": ndcg_exp,
    "pcg": pcg,
    "pcg_cutoff": pcg_cutoff,
    "precision_micro": partial(multiclass_precision_at_k, average="micro"),
    "precision_macro": partial(multiclass_precision_at_k, average="macro"),
}
#: Whole-list metrics (no cut-off): ``f(y_true, score, *, group=None)``.
WHOLE_LIST_METRICS: dict[str, Callable[..., float]] = {"auc": auc, "mauc": mauc}
