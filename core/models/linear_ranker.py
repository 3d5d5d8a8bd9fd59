r"""A linear pairwise AUC ranker: the baseline of the AUC-optimising LambdaMART paper.

Welleck (2016, §5) compares λ-AUC / λ-MAUC with SVM-perf's ROCArea loss (Joachims 2005), a
linear model trained on **pairs**: for a relevant row ``i`` and a non-relevant row ``j`` of
one query, the hinge loss of :math:`w \cdot (x_i - x_j)` is exactly a convex surrogate of
the AUC's pair count.  :class:`LinearPairwiseAUC` does the same with scikit-learn's
:class:`~sklearn.linear_model.SGDClassifier` on the pair differences (standardised
features, no intercept), subsampling pairs per query so the cost stays linear in ``n``.
One difference to SVM-perf, stated because it matters: SVM-perf is a classifier with no
query structure, so its ROCArea loss runs over every (positive, negative) pair of the whole
training set; here the pairs are taken **within each query** (at most 20,000 per query and
500,000 in all), as a ranker is evaluated.
A pair is one example in one of its two orientations, :math:`(x_i - x_j, +1)` or
:math:`(x_j - x_i, -1)`: without an intercept both say :math:`w \cdot (x_i - x_j) > 0`, so the
orientation changes nothing but the classifier's view of two classes.  Exactly half of the
pairs (rounded down, chosen at random) are flipped, so both classes are present whatever
the seed; a model with a single pair uses it in both orientations.

Multi-relevance data (paper §5): "a binary classifier was trained for each individual
relevance class.  Prediction scores … :math:`\sum_{c=1}^{C} c\, f_c(d)`" — one model per
relevance class ``c > 0`` (class ``c`` against every other row of its query, as in the
MAUC's AUC(c)), combined with weights ``c`` (``multiclass="sum"``, the default).
``multiclass="pairwise"`` instead trains one model on all pairs with ``rel_i > rel_j``
(RankSVM style).  For 0/1 relevance both are the same model.

References
----------
Welleck, S. (2016). Efficient AUC optimization for information ranking applications.
*ECIR 2016*, §5 (``efficient-auc-optimization-lambdamart.txt``).
Joachims, T. (2005). A support vector method for multivariate performance measures.
*ICML 2005* (SVM-perf, ROCArea loss).
Herbrich, R., Graepel, T. & Obermayer, K. (2000). Large margin rank boundaries for ordinal
regression (pairwise differences as classification examples).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import SGDClassifier

from core._validation import (
    as_generator,
    check_choice,
    check_positive_int,
    check_positive_number,
    check_scores,
)
from core.models._base import BaseModel, FeatureInfo, check_callback, seed_from
from core.models.lambdamart import ranking_queries

__all__ = ["LOSSES", "MULTICLASS", "LinearPairwiseAUC"]

MULTICLASS = ("sum", "pairwise")
#: ``hinge`` = SVM (ROCArea); ``logistic`` = RankNet-style logistic pair loss.
LOSSES = ("hinge", "logistic")


class LinearPairwiseAUC(BaseModel):
    r"""Linear pairwise AUC ranker in the spirit of SVM-perf's ROCArea (Welleck 2016, §5).

    ``fit(X, relevance, group=None)`` takes ranking data like
    :class:`~core.models.lambdamart.LambdaMARTRanker` (query sizes or per-row ids; None = one
    query); ``predict(X)`` returns :math:`w \cdot z(x)`, ``z`` the standardised features.

    Features: numeric columns are standardised (missing values → the training mean, i.e.
    0); a categorical column becomes one indicator per training level (missing or unseen
    levels → all zero), standardised too.

    Parameters
    ----------
    multiclass : {"sum", "pairwise"}, default="sum"
        ``sum``: one binary model per relevance class ``c > 0`` (class ``c`` vs the other
        rows of its query) and score :math:`\sum_c c\, f_c(x)` (the paper's baseline);
        ``pairwise``: one model on every pair with ``rel_i > rel_j``.
    loss : {"hinge", "logistic"}, default="hinge"
        Pair loss of :class:`~sklearn.linear_model.SGDClassifier` (hinge = linear SVM).
    alpha : float, default=1e-4
        L2 regularisation strength of SGDClassifier.
    max_pairs_per_query : int, default=20000
        Pairs drawn (uniformly among the query's pairs, with replacement) from a query with
        more pairs than this; smaller queries use all their pairs.
    max_pairs : int, default=500000
        Cap on the pairs of one binary model over all queries (uniform subsample).
    max_iter : int, default=20
        SGD epochs over the pairs.
    random_state : int, Generator or None, default=None
        Pair sampling, pair orientation (which half is flipped) and SGD shuffling.

    Attributes
    ----------
    classes_ : ndarray
        Relevance classes with a model (``[nan]`` for ``multiclass="pairwise"``).
    coef_ : ndarray of shape (n_models, n_encoded_features)
    n_pairs_ : list of int
        Training pairs of each model (before a single pair is doubled).

    Raises
    ------
    ValueError
        If no query holds rows of two different relevance values (no pair at all), or, for
        ``multiclass="sum"``, if a relevance class has no pair (no query holds it together
        with another relevance value).

    References
    ----------
    Welleck (2016), §5; Joachims (2005).
    """

    _fitted_attrs = ("encoder_", "classes_", "coef_", "weights_")

    def __init__(self, *, multiclass: str = "sum", loss: str = "hinge", alpha: float = 1e-4,
                 max_pairs_per_query: int = 20_000, max_pairs: int = 500_000,
                 max_iter: int = 20, random_state: Any = None):
        self._store_params(locals())

    def fit(self, X: Any, relevance: Any, group: Any = None, *,
            callback: Any = None) -> LinearPairwiseAUC:
        """Train the pair model(s); ``callback(model, n_models)`` after each one."""
        self._reset()
        self.__dict__.pop("n_pairs_", None)
        check_choice(self.multiclass, "multiclass", MULTICLASS)
        check_choice(self.loss, "loss", LOSSES)
        alpha = check_positive_number(self.alpha, "alpha", "L2 regularisation strength")
        per_query = check_positive_int(self.max_pairs_per_query, "max_pairs_per_query")
        cap = check_positive_int(self.max_pairs, "max_pairs")
        max_iter = check_positive_int(self.max_iter, "max_iter")
        info, frame = FeatureInfo.fit(X)
        n = frame.shape[0]
        rel = check_scores(relevance, "relevance", n=n)
        order, sizes = ranking_queries(group, n)
        callback = check_callback(callback)
        classes = np.unique(rel[rel > 0])
        if classes.size == 0:
            raise ValueError("relevance must contain positive values (relevant rows); got "
                             f"values in [{rel.min():g}, {rel.max():g}].")
        targets = [np.nan] if self.multiclass == "pairwise" else classes.tolist()
        rel = rel[order]
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        if not np.any(np.minimum.reduceat(rel, starts) < np.maximum.reduceat(rel, starts)):
            raise ValueError("relevance gives no pair to learn from: every query holds a "
                             "single relevance value; LinearPairwiseAUC needs a query with rows "
                             "of two different relevance values (check relevance and group).")
        encoder = _Encoder.fit(frame, info)
        z = encoder.transform(frame)[order]
        rng = as_generator(self.random_state)
        coefs, n_pairs = [], []
        for m, c in enumerate(targets):
            if np.isnan(c):
                i, j = _ordered_pairs(rel, starts, sizes, per_query, rng)
            else:
                i, j = _class_pairs(rel == c, starts, sizes, per_query, rng)
            if i.size == 0:  # only for a class: the check above found a pair
                raise ValueError(f"relevance class {c:g} gives no pair to learn from: no query "
                                 f"holds rows of relevance {c:g} and of another value; "
                                 "multiclass='sum' trains a model per class, "
                                 "multiclass='pairwise' one on all pairs.")
            if i.size > cap:
                keep = rng.choice(i.size, cap, replace=False)
                i, j = i[keep], j[keep]
            diff, label = _oriented(z[i] - z[j], rng)
            # no intercept: a pair and its flipped copy must be the same example
            clf = SGDClassifier(loss="hinge" if self.loss == "hinge" else "log_loss",
                                alpha=alpha, fit_intercept=False, max_iter=max_iter,
                                tol=None, random_state=seed_from(rng))
            clf.fit(diff, label)
            coefs.append(clf.coef_[0].copy())
            n_pairs.append(int(i.size))
            if callback is not None:
                callback(m + 1, len(targets))
        coef = np.vstack(coefs)
        weights = np.ones(1) if np.isnan(targets[0]) else np.asarray(targets, dtype=np.float64)
        self.encoder_, self.classes_ = encoder, np.asarray(targets, dtype=np.float64)
        self.coef_, self.weights_ = coef, weights
        self.n_pairs_, self.features_ = n_pairs, info
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Score :math:`\\sum_c c\\, w_c \\cdot z(x)` (``pairwise``: :math:`w \\cdot z(x)`)."""
        frame = self._features(X)
        return self.encoder_.transform(frame) @ (self.weights_ @ self.coef_)

    def _state_to_dict(self) -> dict:
        return {"encoder": self.encoder_.to_dict(),
                "classes": [None if np.isnan(c) else float(c) for c in self.classes_],
                "coef": self.coef_.tolist(), "weights": self.weights_.tolist()}

    def _state_from_dict(self, state: Mapping) -> None:
        self.encoder_ = _Encoder.from_dict(state["encoder"])
        self.classes_ = np.array([np.nan if c is None else c for c in state["classes"]],
                                 dtype=np.float64)
        self.coef_ = np.asarray(state["coef"], dtype=np.float64)
        self.weights_ = np.asarray(state["weights"], dtype=np.float64)


# ---------------------------------------------------------------------------- pairs
def _class_pairs(positive: np.ndarray, starts: np.ndarray, sizes: np.ndarray, cap: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(positive row, other row) pairs inside each query; all, or ``cap`` drawn per query."""
    out_i, out_j = [], []
    for start, size in zip(starts.tolist(), sizes.tolist(), strict=True):
        pos = start + np.flatnonzero(positive[start:start + size])
        neg = start + np.flatnonzero(~positive[start:start + size])
        if pos.size == 0 or neg.size == 0:
            continue
        if pos.size * neg.size <= cap:
            out_i.append(np.repeat(pos, neg.size))
            out_j.append(np.tile(neg, pos.size))
        else:
            out_i.append(rng.choice(pos, cap))
            out_j.append(rng.choice(neg, cap))
    if not out_i:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(out_i), np.concatenate(out_j)


def _ordered_pairs(rel: np.ndarray, starts: np.ndarray, sizes: np.ndarray, cap: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(more relevant, less relevant) pairs inside each query; all, or ``cap`` drawn.

    A query with at most ``cap`` such pairs gives all of them; a larger one ``cap`` pairs
    drawn uniformly among its pairs, with replacement (row ``a`` with probability
    proportional to its number of less relevant rows, then one of those uniformly).
    """
    out_i, out_j = [], []
    for start, size in zip(starts.tolist(), sizes.tolist(), strict=True):
        r = rel[start:start + size]
        ascending = np.argsort(r, kind="stable")
        below = np.searchsorted(r[ascending], r, side="left")  # less relevant rows of each
        total = int(below.sum())
        if total == 0:
            continue
        if total <= cap:
            a = np.repeat(np.arange(size), below)
            b = ascending[np.arange(total) - np.repeat(np.cumsum(below) - below, below)]
        else:
            a = rng.choice(size, cap, p=below / total)
            b = ascending[rng.integers(0, below[a])]
        out_i.append(start + a)
        out_j.append(start + b)
    if not out_i:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(out_i), np.concatenate(out_j)


def _oriented(diff: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Pair differences ``x_i - x_j`` as classifier examples: half of them (rounded down,
    chosen at random) flipped to ``x_j - x_i`` with label 0, the others label 1; a single
    pair is given in both orientations.  Both labels are thus always present."""
    if diff.shape[0] == 1:
        return np.vstack([diff, -diff]), np.array([1, 0], dtype=np.int64)
    flip = rng.permutation(diff.shape[0]) < diff.shape[0] // 2
    return np.where(flip[:, None], -diff, diff), (~flip).astype(np.int64)


# ---------------------------------------------------------------------------- features
class _Encoder:
    """Standardised numeric columns and one-hot categorical columns (JSON-serialisable)."""

    def __init__(self, names: list[str], levels: dict[str, int], mean: np.ndarray,
                 scale: np.ndarray):
        self.names, self.levels, self.mean, self.scale = names, levels, mean, scale

    @classmethod
    def fit(cls, frame: pd.DataFrame, info: FeatureInfo) -> _Encoder:
        levels = {name: len(cats) for name, cats in info.categories.items()}
        enc = cls(list(info.names), levels, np.zeros(0), np.ones(0))
        raw = enc._raw(frame)
        seen = ~np.isnan(raw)
        mean = np.where(seen, raw, 0.0).sum(axis=0) / np.maximum(seen.sum(axis=0), 1)
        filled = np.where(np.isnan(raw), mean, raw)
        scale = filled.std(axis=0)
        enc.mean, enc.scale = mean, np.where(scale > 0, scale, 1.0)
        return enc

    def _raw(self, frame: pd.DataFrame) -> np.ndarray:
        blocks = []
        for name in self.names:
            col = frame[name]
            if name in self.levels:
                codes = col.cat.codes.to_numpy()
                blocks.append((codes[:, None] == np.arange(self.levels[name])[None, :])
                              .astype(np.float64))
            else:
                blocks.append(col.to_numpy(dtype=np.float64)[:, None])
        return np.hstack(blocks)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        raw = self._raw(frame)
        return np.where(np.isnan(raw), 0.0, (raw - self.mean) / self.scale)

    def to_dict(self) -> dict:
        return {"names": self.names, "levels": self.levels, "mean": self.mean.tolist(),
                "scale": self.scale.tolist()}

    @classmethod
    def from_dict(cls, d: Mapping) -> _Encoder:
        return cls(list(d["names"]), {k: int(v) for k, v in d["levels"].items()},
                   np.asarray(d["mean"], dtype=np.float64),
                   np.asarray(d["scale"], dtype=np.float64))
