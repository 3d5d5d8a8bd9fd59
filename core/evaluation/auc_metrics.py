r"""The metrics of the AUC-optimising LambdaMART paper: AUC, MAUC, micro/macro precision@k.

Same conventions as :mod:`core.evaluation.metrics` (which re-exports these): ``(y_true, score)``
first, keyword-only ``group``, the unweighted mean over queries, ``UndefinedMetricWarning``
and ``nan`` for degenerate input.

**Classes.**  For multi-class relevance the classes are the distinct values of ``y_true``
that are **> 0** (the relevant grades); grade 0 (and any negative value) is "not relevant"
and is never a class of its own.  Reason: with a single ranking score, "class 0 vs the rest"
would reward ranking irrelevant rows first.  The paper does the same: its Table 3 reports
AUC(c1)…AUC(c4) for the Yahoo! grades 0–4, and its class shares are "of the documents …
with a positive label".

References
----------
Welleck, S. J. Efficient AUC optimization for information ranking applications. §3
(eqs. 1–5, 9) (``efficient-auc-optimization-lambdamart.txt``).
Fawcett, T. (2006). An introduction to ROC analysis. *Pattern Recogn. Lett.* 27(8).
Manning, C., Raghavan, P. & Schütze, H. (2008). *Introduction to Information Retrieval*, §13.6.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core._validation import check_choice
from core.evaluation._queries import checked_lists, mean_over_queries, rank, undefined

__all__ = ["auc", "mauc", "multiclass_precision_at_k"]


def _auc_per_query(
    positive: np.ndarray, score: np.ndarray, codes: np.ndarray, n_q: int
) -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon–Mann–Whitney AUC of every query from mid-ranks (ties count ½).

    Returns the per-query AUC and whether it is defined (both classes present).
    """
    order = np.lexsort((score, codes))  # ascending score inside each query
    s, c, pos = score[order], codes[order], positive[order]
    n = s.shape[0]
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = (s[1:] != s[:-1]) | (c[1:] != c[:-1])
    run_start = np.flatnonzero(new_run)
    run_end = np.append(run_start[1:], n)
    mid = (run_start + run_end + 1) / 2.0  # mean 1-based global position of each tie run
    size = np.bincount(c, minlength=n_q)
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    ranks = mid[np.cumsum(new_run) - 1] - start[c]  # mid-rank inside the query
    m = np.bincount(c, weights=pos, minlength=n_q)
    neg = size - m
    u = np.bincount(c, weights=pos * ranks, minlength=n_q) - m * (m + 1) / 2.0
    ok = (m > 0) & (neg > 0)
    return np.divide(u, m * neg, out=np.zeros(n_q), where=ok), ok


def _mauc_per_query(
    y: np.ndarray, score: np.ndarray, codes: np.ndarray, n_q: int
) -> tuple[np.ndarray, np.ndarray]:
    """MAUC of every query (shares of the grades > 0 inside the query) and where it is
    defined (a relevant row and a row of another grade)."""
    n_rel = np.bincount(codes, weights=(y > 0).astype(np.float64), minlength=n_q)
    total = np.zeros(n_q)
    ok = n_rel > 0
    for c in np.unique(y[y > 0]):
        is_c = (y == c).astype(np.float64)
        n_c = np.bincount(codes, weights=is_c, minlength=n_q)
        vals, defined = _auc_per_query(is_c, score, codes, n_q)
        present = n_c > 0
        ok &= defined | ~present
        total += np.divide(n_c, n_rel, out=np.zeros(n_q), where=n_rel > 0) * vals
    return total, ok


def _codes(codes: np.ndarray | None, n: int) -> tuple[np.ndarray, int]:
    if codes is None:
        return np.zeros(n, dtype=np.int64), 1
    return codes, int(codes.max()) + 1


def auc(y_true: Any, score: Any, *, group: Any = None) -> float:
    r"""Area under the ROC curve, the Wilcoxon–Mann–Whitney statistic (paper eq. 9).

    :math:`AUC = \frac{1}{mn}\sum_{p}\sum_{q} \left([s_p > s_q] + \tfrac12 [s_p = s_q]\right)`
    over the m relevant (``y_true > 0``) and n other rows of a query; mean over queries.
    Ties count ½ (the paper's eq. 9 counts strict wins only; ½ makes AUC independent of
    the order inside ties and equal to ``sklearn.metrics.roc_auc_score``).  Computed from
    mid-ranks in O(n log n).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Relevance; a row is positive when ``y_true > 0``.
    score : array-like of shape (n,)
        Ranker score, higher = more relevant.
    group : array-like of shape (n,), optional
        Query id of every row.

    Returns
    -------
    float
        ``nan`` with an :class:`~core._validation.UndefinedMetricWarning` when no query has
        both a positive and a negative row (such queries are left out of the mean).
    """
    y, s, codes, _ = checked_lists(y_true, score, group)
    codes, n_q = _codes(codes, y.shape[0])
    vals, ok = _auc_per_query((y > 0).astype(np.float64), s, codes, n_q)
    return mean_over_queries(vals, ok, "AUC", "it needs both relevant and other rows")


def mauc(y_true: Any, score: Any, *, group: Any = None) -> float:
    r"""Multi-class AUC :math:`MAUC = \sum_c p(c)\,AUC(c)` (paper eq. 5, Fawcett 2006).

    :math:`AUC(c)` is the :func:`auc` of "grade c vs every other row" (other grades and the
    non-relevant rows) with the same score; the classes are the grades > 0 (module
    docstring) and :math:`p(c) = n_c / \sum_{c'} n_{c'}` is the class's share **among the
    relevant rows**, so the weights sum to 1 and MAUC = AUC for binary relevance.  (The
    paper's Table 1 is consistent with these normalised shares, not with shares of all
    rows.)  Computed per query (shares inside the query), then averaged over queries.

    Two properties to know before reading MAUC:

    * **Per-query weights** — the paper weighs by the class's share of the *dataset*
      ("the proportion of the dataset examples with that class label"); UpRank uses each
      query's own shares, so a query is a list of its own (as AUC, MAP and nDCG are).  The
      two weightings can differ as much as two rankers do (a reviewer's λ-MAUC model on
      MQ2008 fold 1: 0.769 per query, 0.754 with the dataset's shares of relevant rows).
    * **Not maximised by the ideal order** — "grade c vs the rest" counts the higher grades
      as the rest, so AUC(1) rewards grade-1 rows above grade-2 rows.  Grades [2, 1, 1, 0]
      in that order score 0.667, the order [1, 1, 2, 0] scores 0.778; on MQ2008 fold 1's
      test queries the ideal ranking reads 0.941 and one with grade 1 above grade 2 0.946
      (random tie-breaks inside a grade).
      This is the paper's definition, kept; NDCG and MAP do not have this property.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Graded relevance (e.g. 0–4); each distinct value > 0 is a class.
    score, group
        As in :func:`auc`.

    Returns
    -------
    float
        ``nan`` with an :class:`~core._validation.UndefinedMetricWarning` when no query has
        a relevant row together with a row of another grade.
    """
    y, s, codes, _ = checked_lists(y_true, score, group)
    codes, n_q = _codes(codes, y.shape[0])
    total, ok = _mauc_per_query(y, s, codes, n_q)
    return mean_over_queries(total, ok, "MAUC", "it needs relevant rows and rows of another grade")


def multiclass_precision_at_k(
    y_true: Any,
    score: Any,
    *,
    group: Any = None,
    k: int | None = None,
    average: str = "micro",
) -> float:
    r"""Micro- or macro-averaged precision at k over C relevance classes (paper eqs. 2, 4).

    With :math:`TP_{qc}` the rows of grade c in the top :math:`k_q = \min(k, n_q)` of query
    q (the top k is "predicted" for every class, so :math:`TP_{qc} + FP_{qc} = k_q`) and C
    the number of grades > 0 in the data (module docstring), ``|Q|`` queries:

    * ``"micro"`` (eq. 2, pooled over classes, averaged over queries):
      :math:`\frac{1}{|Q|}\sum_q \frac{\sum_c TP_{qc}}{C\,k_q}`;
    * ``"macro"`` (eq. 4, per-class precision pooled over queries, averaged over classes):
      :math:`\frac{1}{C}\sum_c \frac{\sum_q TP_{qc}}{\sum_q k_q}` — eq. 4 as printed lacks
      the 1/|Q| (it would exceed 1); dividing by :math:`\sum_q k_q = |Q|\,k` restores it.

    **Read this before comparing the two**: because the same top k serves every class,
    :math:`\sum_c TP_{qc}` is just the number of relevant rows in the top k, so both
    equal (binary precision@k) / C, and they coincide exactly whenever every query holds at
    least k rows; they differ only in how queries shorter than k are weighted (averaged
    for micro, pooled for macro).  These are the paper's definitions taken literally.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Graded relevance; each distinct value > 0 is a class.
    score, group, k
        As in :func:`core.evaluation.metrics.precision_at_k`.
    average : {"micro", "macro"}, default="micro"

    Returns
    -------
    float
        ``nan`` with an :class:`~core._validation.UndefinedMetricWarning` when ``y_true`` has
        no value > 0 (no class).
    """
    check_choice(average, "average", ("micro", "macro"))
    y, s, codes, k = checked_lists(y_true, score, group, k)
    n_classes = np.unique(y[y > 0]).shape[0]
    if n_classes == 0:
        return undefined(f"{average.capitalize()} precision is undefined: y_true has no class > 0")
    r = rank(y, s, codes)
    hits = r.per_query(((r.rel > 0) & r.in_top(k)).astype(np.float64))
    k_q = r.cutoff(k)
    if average == "micro":
        return float((hits / (n_classes * k_q)).mean())
    return float(hits.sum() / (n_classes * k_q.sum()))
