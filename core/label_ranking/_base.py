"""The one estimator API of the label rankers: ``fit(X, Y, *, groups=None)``, ``predict(X)``.

Subclasses implement ``_fit(X, Y, groups, progress)`` on validated arrays and
``decision_function(X)`` (a score per label, higher = preferred); :meth:`LabelRanker.predict`
turns scores into complete positions ``1 … L`` (:func:`positions_from_scores`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from core._validation import check_progress, pd_isna
from core.label_ranking._rankings import check_features, check_rankings, positions_from_scores

__all__ = ["LabelRanker"]


def check_groups(groups, n: int, *, rows: str = "row") -> np.ndarray:
    """``groups`` as an array of shape ``(n,)`` with no missing value, else ``ValueError``.

    A missing group (NaN in a float array; NaN, None, ``pd.NA`` in an object array) is refused
    with the number of rows that hold one: it names no group, and NaN is not even equal to
    itself, so it cannot key a group.  ``rows`` says what ``n`` counts in the message.
    """
    arr = np.asarray(groups)
    if arr.shape != (n,):
        raise ValueError(f"groups must have one value per {rows} ({n}); got shape "
                         f"{arr.shape}.")
    missing = (np.isnan(arr) if arr.dtype.kind == "f"
               else pd_isna(arr) if arr.dtype.kind == "O" else None)
    if missing is not None and missing.any():
        raise ValueError(f"groups must name a group for every {rows}; got NaN or None "
                         f"(missing) in {int(missing.sum())} of {n}.")
    return arr


class LabelRanker(BaseEstimator):
    """Base class: validation, the fitted attributes and position predictions.

    Fitted attributes: ``n_labels_`` (L), ``n_features_in_`` (d) and, for a DataFrame ``X``,
    ``feature_names_in_`` (its column names, as scikit-learn keeps them): a DataFrame given
    to ``predict`` is then read by those names — its columns reordered, a missing one
    refused — where it was read by position (reversed columns scored silently worse).
    """

    def fit(self, X, Y, *, groups=None,
            progress: Callable[[int, int], object] | None = None) -> LabelRanker:
        """Learn from features ``X`` (n, d) and positions ``Y`` (n, L), 0 = not ranked.

        ``groups`` (n,) labels rows with a group (e.g. age × gender) for the models that use
        it; others ignore it.  A missing group (NaN or None) is refused (``ValueError``).
        ``progress(done, total)`` is called during long fits; raise from it to cancel.
        """
        names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
        X = check_features(X)
        Y = check_rankings(Y)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y must have one row per row of X ({X.shape[0]}); "
                             f"got {Y.shape[0]}.")
        if groups is not None:
            groups = check_groups(groups, X.shape[0])
        check_progress(progress)
        self.n_labels_ = Y.shape[1]
        self.n_features_in_ = X.shape[1]
        self.__dict__.pop("feature_names_in_", None)  # a refit on an array forgets names
        if names is not None:
            self.feature_names_in_ = names
        try:
            self._fit(X, Y, groups, progress)
        except BaseException:  # a failed or cancelled fit leaves the estimator unfitted
            for name in ("n_labels_", "n_features_in_", "feature_names_in_"):
                self.__dict__.pop(name, None)
            raise
        return self

    def _fit(self, X, Y, groups, progress) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _not_fitted(self) -> NotFittedError:
        """The error of a model used before ``fit`` (a ``ValueError``, as in scikit-learn)."""
        return NotFittedError(f"This {type(self).__name__} is not fitted yet: call fit first.")

    def _check_predict(self, X) -> np.ndarray:
        if not hasattr(self, "n_labels_"):
            raise self._not_fitted()
        names = getattr(self, "feature_names_in_", None)
        if names is not None and isinstance(X, pd.DataFrame):
            given = {str(c): c for c in X.columns}
            missing = [c for c in names if c not in given]
            if missing:
                raise ValueError(f"X lacks {len(missing)} of the columns the model was fitted "
                                 f"on: {', '.join(map(repr, missing[:5]))}"
                                 f"{', …' if len(missing) > 5 else ''}.")
            X = X[[given[c] for c in names]]  # by name, in the fitted order
        X = check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features; the model was fitted with "
                             f"{self.n_features_in_}.")
        return X

    def decision_function(self, X, *, groups=None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def predict(self, X, *, groups=None) -> np.ndarray:
        """Complete positions ``1 … L`` per row (1 = most preferred)."""
        return positions_from_scores(self.decision_function(X, groups=groups))
