r"""Ranking metrics query by query, the score-to-probability map of P-nDCG, the discount
table of the P-nDCG explorer and the imbalance view.

:func:`per_query_metrics` gives one row per query with AUC, MAUC, AP (both conventions for
queries without a relevant document), NDCG@k, P@k (binary, micro, macro) and P-nDCG.  It
runs the same private per-query kernels as the aggregate functions of
:mod:`core.evaluation.metrics`, so the mean of a column over the queries where it is defined
**is** the aggregate (tested): ``per_query_metrics(...)["auc"].mean() == auc(..., group=qid)``.

Conventions for a query without a relevant document (grade > 0): AUC, MAUC, AP, NDCG and
P-nDCG are ``nan`` (undefined: there is nothing to put first) and pandas' ``mean`` leaves
them out, as the aggregate functions do; ``ap_letor`` is 0 there, as the LETOR 4.0
evaluation tool counts it (the MAP of papers evaluated with it, e.g. Welleck 2016).

References
----------
Welleck, S. (2016). Efficient AUC optimization for information ranking applications.
Wong, U. (2019). P-nDCG (``p-ndcg-imbalanced-lists.txt``); SPEC §5.
Platt, J. (1999). Probabilistic outputs for support vector machines.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from core._validation import (
    UndefinedMetricWarning,
    check_choice,
    check_positive_int,
    check_positive_number,
    check_probabilities,
)
from core.evaluation._kernel import ranking_order, tie_run_ends
from core.evaluation._queries import checked_lists, rank
from core.evaluation.auc_metrics import _auc_per_query, _mauc_per_query
from core.evaluation.metrics import _ap_per_query, _ndcg_per_query, p_ndcg

__all__ = ["PROBABILITY_METHODS", "RELEVANT_BINS", "by_relevant_count", "discount_table",
           "per_query_metrics", "score_to_probability"]

#: How :func:`score_to_probability` turns a ranking score into a probability.
PROBABILITY_METHODS = ("platt", "rank")
#: Bins of :func:`by_relevant_count`: (label, low, high) on the number of relevant documents.
RELEVANT_BINS = (("0", 0, 0), ("1", 1, 1), ("2", 2, 2), ("3–4", 3, 4), ("5–9", 5, 9),
                 ("10+", 10, np.inf))


def score_to_probability(score: Any, relevant: Any = None, *,
                         method: str = "platt") -> np.ndarray:
    r"""Map a ranking score to a probability in (0, 1), monotone non-decreasing.

    P-nDCG discounts by a predicted probability; a ranker's score is not one.  The map:

    * ``"platt"`` (default): Platt scaling — :math:`p = 1/(1 + e^{-(a z + b)})` with
      :math:`z` the standardised score and :math:`a, b` a scikit-learn
      ``LogisticRegression`` of ``relevant`` on :math:`z`, **fitted on the evaluated rows
      themselves**.  An in-sample, monotone map: the ranking is unchanged, it only says how
      confident each score is, on a common scale for every run.  When ``relevant`` has a
      single class, or the fit is not increasing (:math:`a \le 0`, a ranker worse than
      random), it falls back to ``"rank"`` with a warning.
    * ``"rank"``: the empirical distribution function of the score, :math:`(r - 0.5)/n`
      with :math:`r` the mid-rank (ties share a value); no labels used.

    Parameters
    ----------
    score : array-like of shape (n,)
    relevant : array-like of shape (n,), optional
        Binary labels (required for ``"platt"``).
    method : {"platt", "rank"}, default="platt"

    Returns
    -------
    ndarray of shape (n,)
    """
    check_choice(method, "method", PROBABILITY_METHODS)
    y, s, _, _ = checked_lists(np.zeros(np.shape(score)[0]) if relevant is None else relevant,
                               score, None)
    if method == "platt":
        if relevant is None:
            raise ValueError("relevant is required for method='platt'; pass the binary "
                             "labels or use method='rank'.")
        pos = y > 0
        sd = s.std()
        if pos.all() or not pos.any() or sd == 0:
            warnings.warn("Platt scaling needs both relevant and other rows and varying "
                          "scores; using the score's rank instead.", UndefinedMetricWarning,
                          stacklevel=2)
        else:
            from sklearn.linear_model import LogisticRegression

            z = ((s - s.mean()) / sd)[:, None]
            fit = LogisticRegression(C=1e6).fit(z, pos)
            if fit.coef_[0, 0] > 0:
                return fit.predict_proba(z)[:, 1]
            warnings.warn("The score does not increase with relevance (Platt slope ≤ 0); "
                          "using the score's rank instead.", UndefinedMetricWarning,
                          stacklevel=2)
    return (mid_ranks(s) - 0.5) / s.shape[0]


def mid_ranks(score: np.ndarray) -> np.ndarray:
    """Ascending 1-based ranks, ties sharing the mean of their ranks — the numbers of
    ``scipy.stats.rankdata(score)`` (``method="average"``) — from the shared ranking
    (:func:`~core.evaluation._kernel.ranking_order`: a radix sort with numba, 3× scipy's
    argsort at 4M rows), for finite scores (as float64).  The rows at descending positions
    ``[a, b)`` (a tie run) hold the ascending ranks ``n − b + 1 … n − a``, mean
    ``n − (a + b − 1)/2``."""
    score = np.asarray(score, dtype=np.float64)  # negating an unsigned int would wrap
    n = score.shape[0]
    order, neg_sorted = ranking_order(score)
    ends = tie_run_ends(neg_sorted)
    out = np.empty(n)
    out[order] = np.repeat(n - (ends[:-1] + ends[1:] - 1) / 2.0, np.diff(ends))
    return out


def per_query_metrics(relevance: Any, score: Any, qid: Any, *, k: int = 10,
                      probability: Any = None) -> pd.DataFrame:
    """Ranking metrics of every query.

    Parameters
    ----------
    relevance : array-like of shape (n,)
        Graded relevance (0 = not relevant).
    score : array-like of shape (n,)
        Ranker score, higher first; ties keep row order (as every metric of
        :mod:`core.evaluation.metrics`).
    qid : array-like of shape (n,)
        Query id of every row (numbers or strings; rows of a query need not be contiguous).
    k : int, default=10
        Cut-off of NDCG and the precisions (``k_q = min(k, n_q)``).
    probability : array-like of shape (n,), optional
        Predicted probabilities for P-nDCG; default :func:`score_to_probability` of the
        score against ``relevance > 0`` (Platt, on these rows).  That default is fitted on
        the evaluated rows' own labels, across queries: a query's P-nDCG then depends on
        the other queries evaluated with it, and the labels it is scored on shape its
        probabilities.  Wong (2019) uses the classifier's own probabilities: pass them
        (e.g. Platt fitted on a validation split) for a score that is the query's alone.

    Returns
    -------
    pandas.DataFrame
        Indexed by query id in order of first appearance.  Columns ``n_docs``,
        ``n_relevant``, ``auc``, ``mauc``, ``ap``, ``ap_letor``, ``ndcg@k``, ``p@k``
        (binary precision), ``p_micro@k``, ``p_macro@k``, ``p_ndcg``.  Micro and macro
        precision of one query are both its hits / (C·k_q) with C the number of grades > 0
        in the data; ``p_macro@k`` holds the query's term of the macro average,
        hits / (C·mean k_q), so that its mean over queries is the macro precision
        (:func:`~core.evaluation.auc_metrics.multiclass_precision_at_k`); the two columns
        are equal when every query holds at least k documents.
    """
    k = check_positive_int(k, "k")
    y, s, codes, _ = checked_lists(relevance, score, qid)
    if codes is None:  # pragma: no cover - checked_lists gives codes whenever qid is given
        codes = np.zeros(y.shape[0], dtype=np.int64)
    n_q = int(codes.max()) + 1
    # check_group_ids numbers the sorted ids: map each code to its id, then reorder.
    first = np.full(n_q, -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(y.shape[0])[::-1]
    code_order = np.argsort(first, kind="stable")  # codes by first appearance
    index = np.asarray(qid)[first[code_order]]
    r = rank(y, s, codes)
    positive = (y > 0).astype(np.float64)
    auc_q, auc_ok = _auc_per_query(positive, s, codes, n_q)
    mauc_q, mauc_ok = _mauc_per_query(y, s, codes, n_q)
    ap_q, n_rel = _ap_per_query(y, s, codes, None)
    ndcg_q, ndcg_ok = _ndcg_per_query(r, y, k, exp=False)
    hits = r.per_query(((r.rel > 0) & r.in_top(k)).astype(np.float64))
    k_q = r.cutoff(k)
    n_classes = max(np.unique(y[y > 0]).shape[0], 1)
    p = (score_to_probability(s, y > 0) if probability is None
         else check_probabilities(probability, "probability", n=y.shape[0]))
    pr = rank(positive, p, codes)
    n_pos = pr.per_query(pr.rel)
    dcg_p = pr.per_query(pr.rel * pr.score)
    idcg_p = pr.per_query(pr.score * (pr.pos <= n_pos[pr.qid]))
    p_ok = (n_pos > 0) & (idcg_p > 0)
    table = pd.DataFrame({
        "n_docs": r.size, "n_relevant": n_rel.astype(np.int64),
        "auc": np.where(auc_ok, auc_q, np.nan), "mauc": np.where(mauc_ok, mauc_q, np.nan),
        "ap": np.where(n_rel > 0, ap_q, np.nan), "ap_letor": ap_q,
        f"ndcg@{k}": np.where(ndcg_ok, ndcg_q, np.nan), f"p@{k}": hits / k_q,
        f"p_micro@{k}": hits / (n_classes * k_q),
        f"p_macro@{k}": hits / (n_classes * k_q.mean()),
        "p_ndcg": np.divide(dcg_p, idcg_p, out=np.full(n_q, np.nan), where=p_ok),
    })
    table = table.iloc[code_order]
    table.index = pd.Index(index, name="qid")
    return table


_DISCOUNTS = {
    "log2": "1 / log2(i + 1)",
    "zipf": "1 / i",
    "zipf_beta": "1 / i^β",
    "probability": "p(i)",
}


def discount_table(relevance: Any, probability: Any = None, *,
                   beta: float = 1.5) -> pd.DataFrame:
    r"""DCG, ideal DCG and nDCG of one list under each discount of the P-nDCG post.

    The list is ranked by ``probability`` descending when given (ties in row order), else
    taken in the given order.  With gain = grade :math:`g_i` at position :math:`i`:
    :math:`DCG = \sum_i g_i\, w_i` with :math:`w_i = 1/\log_2(i+1)` (``log2``),
    :math:`1/i` (``zipf``), :math:`1/i^\beta` (``zipf_beta``) or :math:`p_{(i)}`, the
    probability at position i (``probability``); the ideal DCG puts the grades in
    descending order against the same weights (for ``probability``: the highest grades on
    the highest probabilities); nDCG = DCG / ideal DCG.  For binary grades the
    ``probability`` row is P-nDCG (:func:`core.evaluation.metrics.p_ndcg`) and ``log2``
    standard nDCG: y = [1, 0, 1] with p = [0.9, 0.8, 0.1] gives 0.588 and 0.920.  For
    graded lists a row ``probability_binary`` adds the paper's binary P-nDCG (relevant =
    grade > 0), the value :func:`per_query_metrics` reports.

    Returns
    -------
    pandas.DataFrame
        Indexed by discount; columns ``weight``, ``DCG``, ``ideal DCG``, ``nDCG`` (``nan``
        when the ideal DCG is 0).
    """
    g = checked_lists(relevance, np.zeros(np.shape(relevance)[0]), None)[0]
    if (g < 0).any():
        raise ValueError(f"relevance must be grades ≥ 0; got a minimum of {g.min():g}.")
    beta = check_positive_number(beta, "beta", "the exponent of 'zipf_beta'")
    i = np.arange(1, g.shape[0] + 1, dtype=np.float64)
    weights = {"log2": 1.0 / np.log2(i + 1.0), "zipf": 1.0 / i, "zipf_beta": i ** -float(beta)}
    if probability is not None:
        p = check_probabilities(probability, "probability", n=g.shape[0])
        order = np.argsort(-p, kind="stable")
        g = g[order]
        weights["probability"] = p[order]
    ideal = np.sort(g)[::-1]
    rows = {}
    for name, w in weights.items():
        dcg, idcg = float((g * w).sum()), float((ideal * w).sum())
        rows[name] = {"weight": _DISCOUNTS[name].replace("β", f"{beta:g}"), "DCG": dcg,
                      "ideal DCG": idcg, "nDCG": dcg / idcg if idcg > 0 else np.nan}
    if probability is not None and g.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            binary = p_ndcg((g > 0).astype(np.int64), p[order])  # the paper's function
        if set(np.unique(g)) <= {0.0, 1.0}:
            rows["probability"]["nDCG"] = binary
        else:  # graded: also the paper's binary P-nDCG (relevant = grade > 0)
            n_pos = int((g > 0).sum())
            rows["probability_binary"] = {
                "weight": "p(i), relevant = grade > 0", "DCG": float(p[order][g > 0].sum()),
                "ideal DCG": float(np.sort(p)[::-1][:n_pos].sum()), "nDCG": binary}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("discount")


def by_relevant_count(per_query: pd.DataFrame, metrics: Any = ("ndcg@10", "p_ndcg"), *,
                      bins: Any = RELEVANT_BINS) -> pd.DataFrame:
    """The imbalance view: mean of each metric by the number of relevant documents.

    Parameters
    ----------
    per_query : DataFrame
        Output of :func:`per_query_metrics` (needs ``n_relevant`` and the metric columns).
    metrics : sequence of str
    bins : sequence of (label, low, high)
        Inclusive ranges of ``n_relevant``; default 0, 1, 2, 3–4, 5–9, 10+.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``queries`` and, per metric, the mean and a 95 % normal
        interval half-width (``± <metric>``, 1.96·sd/√m over the m queries where the metric
        is defined; ``nan`` below two).
    """
    metrics = list(metrics)
    missing = [c for c in ["n_relevant", *metrics] if c not in per_query.columns]
    if missing:
        raise ValueError(f"per_query lacks the columns {missing}; pass per_query_metrics "
                         "output.")
    rows = {}
    for label, low, high in bins:
        part = per_query[(per_query["n_relevant"] >= low) & (per_query["n_relevant"] <= high)]
        if part.empty:
            continue
        row: dict[str, float] = {"queries": len(part)}
        for m in metrics:
            vals = part[m].dropna()
            row[m] = vals.mean() if len(vals) else np.nan
            row[f"± {m}"] = (1.96 * vals.std(ddof=1) / np.sqrt(len(vals))
                             if len(vals) > 1 else np.nan)
        rows[label] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("relevant documents")
