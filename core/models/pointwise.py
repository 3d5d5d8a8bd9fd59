r"""Pointwise baseline for ordinary ranking data: a LightGBM regressor of the relevance grade.

Each document is scored on its own (squared error on the grade, no query structure), the
simplest learning-to-rank baseline: the λ-objectives of :class:`~core.models.lambdamart.\
LambdaMARTRanker` must beat it to be worth their pairs.

References
----------
Liu, T.-Y. (2009). Learning to rank for information retrieval. *Foundations and Trends in
Information Retrieval* 3(3), §2 (the pointwise approach).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core._validation import check_scores
from core.models._base import (BaseModel, FeatureInfo, LightGBMParams, check_callback,
                              predict_rows)
from core.models.lambdamart import ranking_queries, validation_set

__all__ = ["PointwiseRanker"]


class PointwiseRanker(LightGBMParams, BaseModel):
    """LightGBM regression of the relevance grade; the prediction is the ranking score.

    Same ``fit(X, relevance, group, *, eval_set=None, early_stopping_rounds=None)`` as
    :class:`~core.models.lambdamart.LambdaMARTRanker`; ``group`` only matters for the
    validation metric (``eval_metric``, default NDCG over the validation queries).

    Parameters
    ----------
    n_estimators : int, default=500
    learning_rate : float, default=0.01
    num_leaves, min_child_samples, subsample, colsample_bytree, reg_alpha, reg_lambda
        LightGBM tree parameters (scikit-learn API names).
    num_threads : int, default=0
    random_state : int, Generator or None, default=None
    lgb_params : dict, optional

    Attributes
    ----------
    booster_ : lightgbm.Booster
    eval_history_ : ndarray
        Validation score after every round (only with ``eval_set``).
    best_iteration_ : int
        Round kept by early stopping (only with ``eval_set``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); rel = (X[:, 0] > 0).astype(float)
    >>> model = PointwiseRanker(n_estimators=20, learning_rate=0.3, num_threads=1,
    ...                         random_state=0).fit(X, rel, np.repeat(np.arange(10), 20))
    >>> bool(np.corrcoef(model.predict(X), rel)[0, 1] > 0.9)
    True
    """

    _fitted_attrs = ("booster_",)

    def __init__(self, *, n_estimators: int = 500, learning_rate: float = 0.01,
                 num_leaves: int = 31, min_child_samples: int = 20, subsample: float = 1.0,
                 colsample_bytree: float = 1.0, reg_alpha: float = 0.0, reg_lambda: float = 0.0,
                 num_threads: int = 0, random_state: Any = None,
                 lgb_params: dict | None = None):
        self._store_params(locals())

    def fit(self, X: Any, relevance: Any, group: Any = None, *, eval_set: Any = None,
            early_stopping_rounds: int | None = None, eval_metric: str = "ndcg",
            callback: Any = None) -> PointwiseRanker:
        """Fit the regressor on the grades; returns ``self``."""
        self._reset()
        self.__dict__.pop("eval_history_", None)
        self.__dict__.pop("best_iteration_", None)
        info, frame = FeatureInfo.fit(X)
        rel = check_scores(relevance, "relevance", n=frame.shape[0])
        ranking_queries(group, frame.shape[0])  # validates group like the rankers do
        callback = check_callback(callback)
        params, n_rounds = self._lgb_config()
        params["objective"] = "regression"
        valid = validation_set(info, eval_set, early_stopping_rounds, eval_metric)
        booster = self._train(params, frame, rel, n_rounds, callback=callback, valid=valid)
        self.booster_, self.features_ = booster, info
        if valid is not None:
            self.eval_history_ = np.asarray(valid.history)
            self.best_iteration_ = int(booster.best_iteration or len(valid.history))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted grade (higher = ranked first)."""
        frame = self._features(X)  # checks that the model is fitted
        return predict_rows(self.booster_, frame)

    def _state_to_dict(self) -> dict:
        return {"booster": self.booster_.model_to_string()}

    def _state_from_dict(self, state: Mapping) -> None:
        import lightgbm as lgb

        self.booster_ = lgb.Booster(model_str=state["booster"])
