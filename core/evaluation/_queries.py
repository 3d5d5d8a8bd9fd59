"""Sort-once kernel for ranked-list metrics over one or many queries.

Private: public functions validate with :func:`checked_lists` first; the rest trusts its input.

Layout
------
Rows are sorted once by (query, score descending) with ``np.lexsort`` (one query: the
stable radix ranking :func:`core.evaluation._kernel.ranking_order`), both stable, so
rows with equal scores keep their row order (the tie policy of every metric in
:mod:`core.evaluation.metrics`).  After the sort each query occupies one contiguous block
``[start[q], start[q] + size[q])`` and ``pos`` is the 1-based position inside the block, so
every per-query sum is one ``np.bincount(qid, weights=...)`` — no Python loop over queries.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from core._validation import UndefinedMetricWarning, check_cutoff, check_group_ids, check_scores
from core.evaluation._kernel import ranking_order


@dataclass(frozen=True)
class Ranked:
    """Rows laid out query by query, each query ranked by score descending (stable)."""

    rel: np.ndarray  # relevance in ranked order
    score: np.ndarray  # scores in ranked order
    qid: np.ndarray  # query code (0..Q-1) of each ranked row
    pos: np.ndarray  # 1-based position inside its query
    size: np.ndarray  # rows per query, shape (Q,)
    start: np.ndarray  # offset of each query block, shape (Q,)
    codes: np.ndarray  # query code of each *input* row (for re-sorting, e.g. the ideal order)

    @property
    def n_queries(self) -> int:
        return int(self.size.shape[0])

    def per_query(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` (in ranked order) inside each query."""
        return np.bincount(self.qid, weights=values, minlength=self.n_queries)

    def cutoff(self, k: int | None) -> np.ndarray:
        """Per-query cut-off ``k_q = min(k, n_q)`` (``n_q`` when ``k`` is None)."""
        return self.size.copy() if k is None else np.minimum(self.size, k)

    def in_top(self, k: int | None) -> np.ndarray:
        """Boolean mask of the ranked rows inside their query's top ``k_q``."""
        return self.pos <= self.cutoff(k)[self.qid]

    def ideal(self, gain: np.ndarray) -> np.ndarray:
        """``gain`` (per input row) re-sorted descending inside each query, same layout."""
        return gain[np.lexsort((-gain, self.codes))]


def rank(rel: np.ndarray, score: np.ndarray, codes: np.ndarray | None) -> Ranked:
    """Sort rows by (query, −score), stable; ``codes`` None means one query."""
    n = score.shape[0]
    if codes is None:
        order, _ = ranking_order(score)
        codes = np.zeros(n, dtype=np.int64)
    else:
        order = np.lexsort((-score, codes))
    size = np.bincount(codes)
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    qid = codes[order]
    pos = np.arange(1, n + 1) - start[qid]
    return Ranked(rel[order], score[order], qid, pos, size, start, codes)


def checked_lists(
    y_true: Any, score: Any, group: Any, k: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int | None]:
    """Validate ``(y_true, score, group, k)`` once; return float arrays, query codes, k."""
    y = check_scores(y_true, "y_true")
    if y.shape[0] == 0:
        raise ValueError("y_true must contain at least one row; got an empty array.")
    s = check_scores(score, "score", n=y.shape[0])
    codes = None if group is None else check_group_ids(group, "group", n=y.shape[0])
    return y, s, codes, check_cutoff(k, "k")


def undefined(message: str) -> float:
    """Issue an :class:`UndefinedMetricWarning` and return ``nan``."""
    warnings.warn(f"{message}; returning nan.", UndefinedMetricWarning, stacklevel=3)
    return float("nan")


def mean_over_queries(values: np.ndarray, defined: np.ndarray, name: str, why: str) -> float:
    """Unweighted mean of per-query ``values`` over the queries where the metric is defined.

    Queries where it is undefined (``why``) are left out with an
    :class:`UndefinedMetricWarning`; if no query is defined the result is ``nan``.
    """
    n_q = values.shape[0]
    if defined.all():
        return float(values.mean())
    if not defined.any():
        where = "" if n_q == 1 else f" in all {n_q} queries"
        return undefined(f"{name} is undefined{where}: {why}")
    warnings.warn(
        f"{name} is undefined in {int((~defined).sum())} of {n_q} queries ({why}); "
        "they are left out of the mean.",
        UndefinedMetricWarning,
        stacklevel=3,
    )
    return float(values[defined].mean())
