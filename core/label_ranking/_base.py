"""The one estimator API of the label rankers: ``fit(X, Y, *, groups=None)``, ``predict(X)``.

Subclasses implement ``_fit(X, Y, groups, progress)`` on validated arrays and
``decision_function(X)`` (a score per label, higher = preferred); :meth:`LabelRanker.predict`
turns scores into complete positions ``1 … L`` (:func:`positions_from_scores`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.base import BaseEstimator

from core.label_ranking._rankings import check_features, check_rankings, positions_from_scores

__all__ = ["LabelRanker"]


class LabelRanker(BaseEstimator):
    """Base class: validation, the fitted attributes and position predictions.

    Fitted attributes: ``n_labels_`` (L) and ``n_features_in_`` (d).
    """

    def fit(self, X, Y, *, groups=None,
            progress: Callable[[int, int], object] | None = None) -> LabelRanker:
        """Learn from features ``X`` (n, d) and positions ``Y`` (n, L), 0 = not ranked.

        ``groups`` (n,) labels rows with a group (e.g. age × gender) for the models that use
        it; others ignore it.  ``progress(done, total)`` is called during long fits; raise
        from it to cancel.
        """
        X = check_features(X)
        Y = check_rankings(Y)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y must have one row per row of X ({X.shape[0]}); "
                             f"got {Y.shape[0]}.")
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (X.shape[0],):
                raise ValueError(f"groups must have one value per row ({X.shape[0]}); got "
                                 f"shape {groups.shape}.")
        if progress is not None and not callable(progress):
            raise ValueError(f"progress must be None or a callable (done, total); "
                             f"got {progress!r}.")
        self.n_labels_ = Y.shape[1]
        self.n_features_in_ = X.shape[1]
        try:
            self._fit(X, Y, groups, progress)
        except BaseException:  # a failed or cancelled fit leaves the estimator unfitted
            for name in ("n_labels_", "n_features_in_"):
                self.__dict__.pop(name, None)
            raise
        return self

    def _fit(self, X, Y, groups, progress) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_predict(self, X) -> np.ndarray:
        if not hasattr(self, "n_labels_"):
            raise ValueError(f"This {type(self).__name__} is not fitted yet: call fit first.")
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
