r"""Multi-treatment uplift: one binary uplift model per treatment arm, each against control.

An A/B/n test has a control arm (code 0) and K treatment arms (codes 1…K).
:class:`PerArmUplift` fits, for every arm k, any uplift learner of
:mod:`core.models.baselines` on the rows of arm k and of the control arm (t = 1 for arm k,
0 for control) and predicts an (n, K) matrix of uplifts τ̂_k(x) = model_k(x).

Why one model per arm rather than one model with one query per arm: the λ-objectives
contrast an arm's rows with the control rows (separate queries or a joint query of both);
a single LightGBM booster cannot hold K outputs for a custom objective, and the per-arm
models keep every baseline (two-model = K + 1 outcome models in effect, flipped label,
transformed outcome, the forest) usable unchanged.  The cost: the control rows are reused
by every arm's model, so the K scores are correlated through them (as in causalml's
meta-learners, which fit per arm the same way).

References
----------
Zhao, Y., Fang, X. & Simchi-Levi, D. (2017). Uplift modeling with multiple treatments and
general response types. *SDM* (per-treatment models against one control).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from core._validation import is_integer
from core.models._base import BaseModel, FeatureInfo, check_callback
from core.models.baselines import make_model, model_from_dict, register_model_class

__all__ = ["SMALL_ARM", "PerArmUplift"]

#: An arm with fewer rows than this gets a warning when its model is fitted.
SMALL_ARM = 50


@register_model_class
class PerArmUplift(BaseModel):
    """One uplift model per treatment arm vs control; ``predict`` gives (n, K) uplifts.

    Parameters
    ----------
    model : str, default="LambdaMARTUplift"
        Class name (or Train-page label) of the per-arm learner
        (:func:`core.models.make_model`).
    params : dict, optional
        Its keywords (the same for every arm).
    random_state : int or None, default=None
        Seed of every arm's model (arm k = 1…K uses ``random_state + k − 1`` when an int, so
        arm 1 uses ``random_state`` itself).

    Attributes
    ----------
    models_ : list of fitted models, one per treatment arm (arm 1 first)
    n_arms_ : int
        K, the number of treatment arms.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3)); t = rng.integers(0, 3, 3000)
    >>> y = (rng.random(3000) < 0.2 + 0.1 * (t == 1) * (X[:, 0] > 0)).astype(int)
    >>> m = PerArmUplift("TwoModel", {"n_estimators": 20, "learning_rate": 0.1,
    ...                               "num_threads": 1}, random_state=0).fit(X, y, t)
    >>> m.predict(X).shape
    (3000, 2)
    """

    _fitted_attrs = ("models_", "n_arms_")

    def __init__(self, model: str = "LambdaMARTUplift", params: dict | None = None, *,
                 random_state: Any = None):
        self._store_params(locals())

    def fit(self, X: Any, y: Any, treatment: Any, *, callback: Any = None) -> PerArmUplift:
        """Fit arm k's model on the rows with treatment k or 0, for k = 1…K."""
        self._reset()
        info, frame = FeatureInfo.fit(X)
        t = np.asarray(treatment)
        if t.ndim != 1 or t.shape[0] != frame.shape[0] or t.dtype.kind not in "iub" \
                or t.size == 0 or t.min() < 0:
            raise ValueError(f"treatment must hold one integer arm code ≥ 0 per row of X "
                             f"(0 = control); got dtype {t.dtype} with shape {t.shape}.")
        n_arms = int(t.max())
        if n_arms < 1:
            raise ValueError("treatment must contain a treatment arm (codes 1…K) besides the "
                             "control arm 0.")
        empty = [k for k in range(n_arms + 1) if not (t == k).any()]
        if empty:
            raise ValueError(f"every arm needs rows; arm code(s) {empty} have none.")
        counts = np.bincount(t, minlength=n_arms + 1)
        small = [f"arm {k}: {counts[k]} rows" for k in range(n_arms + 1)
                 if counts[k] < SMALL_ARM]
        if small:
            warnings.warn(f"Arms with fewer than {SMALL_ARM} rows ({'; '.join(small)}): the "
                          "uplift predicted for them rests on a handful of customers and is "
                          "mostly noise.", UserWarning, stacklevel=2)
        y = np.asarray(y)
        callback = check_callback(callback)
        if self.params is not None and not isinstance(self.params, Mapping):
            raise ValueError(f"params must be a dict of the per-arm model's keywords; got "
                             f"{type(self.params).__name__}.")
        params = dict(self.params or {})
        if "random_state" in params:  # make_model's "multiple values for keyword" TypeError
            raise ValueError("params must not hold random_state: PerArmUplift seeds arm k's "
                             "model with random_state + k − 1; pass random_state="
                             f"{params['random_state']!r} to PerArmUplift itself.")
        try:
            takes_seed = "random_state" in make_model(self.model)._get_param_names()
        except ValueError as error:  # make_model names its argument "name"; here: model
            raise ValueError(str(error).replace("name must be", "model must be", 1)) from None
        models = []
        for k in range(1, n_arms + 1):
            rows = np.flatnonzero((t == k) | (t == 0))
            seed = (int(self.random_state) + k - 1 if is_integer(self.random_state)
                    else self.random_state)
            model = make_model(self.model, **params,
                               **({"random_state": seed} if takes_seed else {}))

            def report(i: int, total: int, k: int = k) -> None:
                if callback is not None:
                    callback((k - 1) * total + i, n_arms * total)

            model.fit(frame.iloc[rows].reset_index(drop=True), y[rows],
                      (t[rows] == k).astype(np.int8), callback=report)
            models.append(model)
        self.models_, self.n_arms_, self.features_ = models, n_arms, info
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted uplift of every treatment arm vs control, shape (n, K)."""
        frame = self._features(X)
        return np.column_stack([m.predict(frame) for m in self.models_])

    def _state_to_dict(self) -> dict:
        return {"models": [m.model_to_dict() for m in self.models_]}

    def _state_from_dict(self, state: Mapping) -> None:
        self.models_ = [model_from_dict(d) for d in state["models"]]
        self.n_arms_ = len(self.models_)

