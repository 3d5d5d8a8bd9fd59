"""Uplift and ranking estimators with one API (``fit(X, y, t, ...)`` / ``predict(X)`` for
uplift models; ``fit(X, y, group=...)`` for rankers), models saved as text/JSON, never
pickled.  :data:`MODELS` names what the Train page offers; :func:`make_model` builds one."""

from core.models.baselines import (
    MODELS,
    RANKERS,
    DummyTreatment,
    FlippedLabel,
    TrainingCancelled,
    TransformedOutcome,
    TwoModel,
    load_model,
    make_model,
    model_from_dict,
)
from core.models.lambdamart import LambdaMARTRanker, LambdaMARTUplift
from core.models.linear_ranker import LinearPairwiseAUC
from core.models.multiarm import PerArmUplift
from core.models.pointwise import PointwiseRanker
from core.models.uplift_forest import UpliftRandomForest

__all__ = ["MODELS", "RANKERS", "DummyTreatment", "FlippedLabel", "LambdaMARTRanker",
           "LambdaMARTUplift", "LinearPairwiseAUC", "PerArmUplift", "PointwiseRanker",
           "TrainingCancelled", "TransformedOutcome", "TwoModel", "UpliftRandomForest",
           "load_model", "make_model", "model_from_dict"]
