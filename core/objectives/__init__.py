"""The λ-gradient engine: :func:`lambda_gradients` for PCG, DCG/NDCG, MAP, AUC and MAUC
(exact pairs or binned), and :func:`lightgbm_objective`, a LightGBM custom objective
``(y_true, y_pred, weight, group) -> (grad, hess)`` built on it.  Compiled (numba) kernels
are used when available, numpy kernels otherwise."""

from core.objectives import lambdas
from core.objectives.lambdas import *  # noqa: F403 - lambdas' __all__ is the wing's API

__all__ = list(lambdas.__all__)
