"""The λ-gradient engine: :func:`lambda_gradients` for PCG, DCG/NDCG, MAP, AUC and MAUC
(exact pairs or binned), and :func:`lightgbm_objective`, a LightGBM custom objective
``(y_true, y_pred, weight, group) -> (grad, hess)`` built on it.  Compiled (numba) kernels
are used when available, numpy kernels otherwise."""

from core.objectives.lambdas import (
    AUTO_EXACT_MAX_ROWS,
    EXACT_MAX_ROWS,
    MAX_BINNED_CLASSES,
    METHODS,
    METRICS,
    LambdaObjective,
    lambda_gradients,
    lightgbm_objective,
)

__all__ = ["AUTO_EXACT_MAX_ROWS", "EXACT_MAX_ROWS", "MAX_BINNED_CLASSES", "METHODS", "METRICS",
           "LambdaObjective", "lambda_gradients", "lightgbm_objective"]
