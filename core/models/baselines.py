r"""Uplift learners and rankers with one scikit-learn style API.

Every uplift model has ``fit(X, y, treatment, *, callback=None)`` and ``predict(X)``, which
returns an **uplift score** (higher = target first), plus ``get_params`` / ``set_params``
(they subclass :class:`sklearn.base.BaseEstimator`, so :func:`sklearn.base.clone` works),
``random_state``, ``model_to_dict`` and ``save_model``.  ``X`` is a pandas DataFrame
(numeric and ``category`` columns, NaN allowed) or a numeric numpy array.

=========================  ===========================================================
:class:`LambdaMARTUplift`  λ-gradient boosting of an uplift ranking metric (PCG, DCG…)
                           on the paper's queries and label sets (Devriendt et al. 2020)
:class:`FlippedLabel`      class transformation, Z = 1 for TR and CNR (Lai 2006)
:class:`TwoModel`          separate classifiers on T and C (Hansotia & Rukstales 2002)
:class:`DummyTreatment`    one classifier with the treatment flag and interactions (Lo 2002)
:class:`TransformedOutcome` one regression of y·(t/p − (1−t)/(1−p)) (Athey & Imbens 2016)
:class:`UpliftRandomForest` divergence-based uplift forest (Rzepakowski & Jaroszewicz
                           2012; Guelman et al. 2015)
=========================  ===========================================================

Ordinary ranking data (``fit(X, relevance, group)``): :class:`LambdaMARTRanker` (λ-AUC,
λ-MAUC, NDCG, DCG, MAP; Burges 2010; Donmez-style AUC extension) and the linear pairwise
baseline :class:`LinearPairwiseAUC` (in the spirit of SVM-perf's ROCArea).

Conventions
-----------
* **Boosting budget** — every LightGBM model defaults to ``n_estimators=500``,
  ``learning_rate=0.01`` (the paper's protocol, §4.1).  The forest defaults to 100 trees:
  its trees are averaged, not added, so more trees only reduce variance.
* **Progress** — ``fit(..., callback=f)`` calls ``f(round, total)`` once per boosting round
  (``round`` = 1..``total``; ``f`` may declare a third argument ``metric=None``, which is
  not passed: the models train with LightGBM's ``metric="None"``; :class:`TwoModel`:
  ``total = 2·n_estimators``, the control model's rounds follow the treated model's;
  forest: once per tree;
  :class:`LinearPairwiseAUC`: once per binary model).  ``f`` may raise — for example
  :class:`TrainingCancelled` — to stop training: the exception propagates out of ``fit``
  and the model is left **unfitted** (``predict`` raises
  :class:`sklearn.exceptions.NotFittedError`), even if it had been fitted before.
* **LightGBM** — ``lgb.train`` with ``deterministic=True``, ``force_row_wise=True``,
  ``verbose=-1``, ``num_threads`` (0 = LightGBM's default, all cores) and ``seed`` from an
  int ``random_state``.  Native parameters not exposed as keywords go in ``lgb_params``.
* **Saving** — ``save_model(path)`` writes one JSON file: the class, its parameters, the
  feature schema and the fitted state — LightGBM boosters in LightGBM's text format
  (``Booster.model_to_string``), forest trees and linear weights as number lists.  Never
  pickle.  :func:`load_model` reads it back; predictions are identical.
* **Registry** — :data:`MODELS` (uplift learners) and :data:`RANKERS` map UI labels to
  classes; :func:`make_model` builds one by label or class name.

References
----------
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897.
Lai, L. Y.-T. (2006). Influential marketing: a new direct marketing strategy addressing the
existence of voluntary buyers. MSc thesis, Simon Fraser University.
Hansotia, B. & Rukstales, B. (2002). Incremental value modeling. *Journal of Interactive
Marketing*, 16(3), 35–46.
Lo, V. S. Y. (2002). The true lift model: a novel data mining approach to response modeling
in database marketing. *ACM SIGKDD Explorations*, 4(2), 78–86.
Jaskowski, M. & Jaroszewicz, S. (2012). Uplift modeling for clinical trial data. *ICML
Workshop on Clinical Data Analysis* (the arm-balancing weights of :class:`FlippedLabel`).
Rzepakowski, P. & Jaroszewicz, S. (2012). Decision trees for uplift modeling with single and
multiple treatments. *Knowledge and Information Systems*, 32(2), 303–327.
Guelman, L., Guillén, M. & Pérez-Marín, A. M. (2015). Uplift random forests. *Cybernetics
and Systems*, 46(3–4), 230–248.
Burges, C. J. C. (2010). From RankNet to LambdaRank to LambdaMART: an overview. Microsoft
Research Technical Report MSR-TR-2010-82.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.models._base import (
    FORMAT_NAME,
    FORMAT_VERSION,
    BaseModel,
    LightGBMParams,
    check_callback,
    check_uplift_fit,
    is_binary_outcome,
    predict_rows,
)
from core.models.lambdamart import LambdaMARTRanker, LambdaMARTUplift
from core.models.linear_ranker import LinearPairwiseAUC
from core.models.pointwise import PointwiseRanker
from core.evaluation.metrics import transformed_outcome
from core.models.uplift_forest import UpliftRandomForest

__all__ = [
    "MODELS",
    "RANKERS",
    "DummyTreatment",
    "FlippedLabel",
    "LambdaMARTRanker",
    "LambdaMARTUplift",
    "LinearPairwiseAUC",
    "TrainingCancelled",
    "TransformedOutcome",
    "TwoModel",
    "UpliftRandomForest",
    "load_model",
    "make_model",
    "model_from_dict",
    "register_model_class",
]


class TrainingCancelled(Exception):
    """Raise this from a ``fit`` progress callback to stop training.

    It propagates out of ``fit`` unchanged and the model is left unfitted.
    """


# --------------------------------------------------------------------------- LightGBM base
class _LightGBMUplift(LightGBMParams, BaseModel):
    """Shared ``__init__`` and serialisation of the LightGBM classification baselines."""

    _boosters: tuple[str, ...] = ("booster_",)
    _fitted_attrs: tuple[str, ...] = ("booster_",)

    def __init__(self, *, n_estimators: int = 500, learning_rate: float = 0.01,
                 num_leaves: int = 31, min_child_samples: int = 20, subsample: float = 1.0,
                 colsample_bytree: float = 1.0, reg_alpha: float = 0.0,
                 reg_lambda: float = 0.0, num_threads: int = 0, random_state: Any = None,
                 lgb_params: dict | None = None):
        self._store_params(locals())

    def _binary_params(self) -> tuple[dict, int]:
        params, n_rounds = self._lgb_config()
        params["objective"] = "binary"
        return params, n_rounds

    def _outcome_params(self, y: np.ndarray) -> tuple[dict, int]:
        """Binary log-loss for a 0/1 outcome, squared error for a continuous one."""
        params, n_rounds = self._lgb_config()
        params["objective"] = "binary" if is_binary_outcome(y) else "regression"
        return params, n_rounds

    def _state_to_dict(self) -> dict:
        return {"boosters": {name: getattr(self, name).model_to_string()
                             for name in self._boosters}}

    def _state_from_dict(self, state: Mapping) -> None:
        import lightgbm as lgb

        for name in self._boosters:
            setattr(self, name, lgb.Booster(model_str=state["boosters"][name]))


_LGB_PARAMS_DOC = """\
    n_estimators : int, default=500
        Boosting rounds (the paper's 500 trees).
    learning_rate : float, default=0.01
    num_leaves, min_child_samples, subsample, colsample_bytree, reg_alpha, reg_lambda
        LightGBM tree parameters (scikit-learn API names; ``subsample < 1`` bags every round).
    num_threads : int, default=0
        LightGBM threads; 0 = LightGBM's default (all cores).
    random_state : int, Generator or None, default=None
        Seed of LightGBM's bagging and feature sampling.
    lgb_params : dict, optional
        Further native LightGBM parameters, applied last (objective, metric, number of
        rounds and learning rate are refused: use the keywords)."""


class FlippedLabel(_LightGBMUplift):
    __doc__ = f"""Class-transformation uplift model (Lai 2006): one classifier on a flipped label.

    ``Z = 1`` for treated responders (TR) and control non-responders (CNR), else 0; a
    LightGBM classifier estimates :math:`P(Z=1\\mid x)` and the uplift score is
    :math:`2P(Z=1\\mid x) - 1`.  With equal arm sizes this equals
    :math:`p_T(x) - p_C(x)`; with a treated share :math:`\\pi \\ne 1/2` it is
    :math:`2\\pi p_T + 2(1-\\pi)(1-p_C) - 1`, which mixes the response level into the score,
    so by default rows are weighted ``n / (2 n_arm)`` (Jaskowski & Jaroszewicz 2012), which
    restores :math:`2P(Z=1\\mid x) - 1 = p_T(x) - p_C(x)` for any split.  On the paper's
    (balanced) Hillstrom data both versions coincide.

    Parameters
    ----------
    balance_arms : bool, default=True
        Weight the arms equally (see above); ``False`` is Lai's original, unweighted model.
{_LGB_PARAMS_DOC}

    Attributes
    ----------
    booster_ : lightgbm.Booster
    features_ : the feature schema seen at ``fit``.

    References
    ----------
    Lai, L. Y.-T. (2006). Influential marketing. MSc thesis, Simon Fraser University.
    Jaskowski, M. & Jaroszewicz, S. (2012). Uplift modeling for clinical trial data.
    Devriendt et al. (2020), §4.1 (the flipped-label baseline).
    """

    def __init__(self, *, balance_arms: bool = True, n_estimators: int = 500,
                 learning_rate: float = 0.01, num_leaves: int = 31,
                 min_child_samples: int = 20, subsample: float = 1.0,
                 colsample_bytree: float = 1.0, reg_alpha: float = 0.0,
                 reg_lambda: float = 0.0, num_threads: int = 0, random_state: Any = None,
                 lgb_params: dict | None = None):
        self._store_params(locals())

    def fit(self, X: Any, y: Any, treatment: Any, *, callback: Any = None) -> FlippedLabel:
        """Fit the classifier on ``Z = [y == treatment]``; returns ``self``."""
        self._reset()
        info, frame, y, t = check_uplift_fit(X, y, treatment)
        callback = check_callback(callback)
        params, n_rounds = self._binary_params()
        z = (y == t).astype(np.float64)
        weight = None
        if self.balance_arms:
            n, n_t = t.shape[0], int(t.sum())
            weight = np.where(t == 1, n / (2.0 * n_t), n / (2.0 * (n - n_t)))
        booster = self._train(params, frame, z, n_rounds, callback=callback, weight=weight)
        self.booster_, self.features_ = booster, info
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Uplift score :math:`2P(Z=1\\mid x) - 1` in [−1, 1]."""
        frame = self._features(X)
        return 2.0 * predict_rows(self.booster_, frame) - 1.0


class TwoModel(_LightGBMUplift):
    __doc__ = f"""Two-model uplift (Hansotia & Rukstales 2002): :math:`p_T(x) - p_C(x)`.

    One LightGBM classifier of the response on the treated rows, one on the control rows;
    the uplift score is the difference of their predicted probabilities.  A continuous
    outcome (spend) gets two regressions (squared error) and the difference of their
    predictions, :math:`\\mu_T(x) - \\mu_C(x)`.  Both use the same
    parameters.  The progress callback sees ``total = 2·n_estimators`` rounds: the treated
    model's first, then the control model's.

    Parameters
    ----------
{_LGB_PARAMS_DOC}

    Attributes
    ----------
    booster_t_, booster_c_ : lightgbm.Booster
        The treated-arm and control-arm models.

    References
    ----------
    Hansotia, B. & Rukstales, B. (2002). Incremental value modeling. *Journal of
    Interactive Marketing*, 16(3), 35–46.
    """

    _boosters = _fitted_attrs = ("booster_t_", "booster_c_")

    def fit(self, X: Any, y: Any, treatment: Any, *, callback: Any = None) -> TwoModel:
        """Fit the treated-arm and the control-arm models; returns ``self``."""
        self._reset()
        info, frame, y, t = check_uplift_fit(X, y, treatment, continuous=True)
        callback = check_callback(callback)
        params, n_rounds = self._outcome_params(y)
        boosters = []
        for i, arm in enumerate((1, 0)):
            rows = np.flatnonzero(t == arm)
            boosters.append(self._train(
                params, frame.iloc[rows].reset_index(drop=True), y[rows].astype(np.float64),
                n_rounds, callback=callback, offset=i * n_rounds, total=2 * n_rounds))
        self.booster_t_, self.booster_c_ = boosters
        self.features_ = info
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Uplift score :math:`p_T(x) - p_C(x)` in [−1, 1]."""
        frame = self._features(X)
        return predict_rows(self.booster_t_, frame) - predict_rows(self.booster_c_, frame)


class TransformedOutcome(_LightGBMUplift):
    __doc__ = f"""Transformed-outcome regression (Athey & Imbens 2016): one model of :math:`Y^*`.

    :math:`Y^* = y\\,(t/p - (1-t)/(1-p))` with :math:`p` the treated share has
    :math:`E[Y^* \\mid x] = \\tau(x)` in a randomised experiment, so one LightGBM
    regression (squared error) of :math:`Y^*` on ``x`` estimates the uplift directly, for a
    binary or a continuous outcome (:func:`core.evaluation.metrics.transformed_outcome`).
    Unbiased but noisy (the target's variance grows as :math:`p` moves from ½).

    Parameters
    ----------
{_LGB_PARAMS_DOC}

    References
    ----------
    Athey, S. & Imbens, G. (2016). Recursive partitioning for heterogeneous causal effects.
    *PNAS* 113(27), 7353–7360.
    """

    def fit(self, X: Any, y: Any, treatment: Any, *,
            callback: Any = None) -> TransformedOutcome:
        """Fit the regression of the transformed outcome; returns ``self``."""
        self._reset()
        info, frame, y, t = check_uplift_fit(X, y, treatment, continuous=True)
        callback = check_callback(callback)
        params, n_rounds = self._lgb_config()
        params["objective"] = "regression"
        booster = self._train(params, frame, transformed_outcome(y, t), n_rounds,
                              callback=callback)
        self.booster_, self.features_ = booster, info
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Uplift score :math:`\\hat E[Y^* \\mid x]` (in the outcome's units)."""
        frame = self._features(X)
        return predict_rows(self.booster_, frame)


#: Name of the treatment-flag feature of :class:`DummyTreatment`.
TREATMENT_FEATURE = "__treatment__"


class DummyTreatment(_LightGBMUplift):
    __doc__ = f"""Dummy-treatment uplift model (Lo 2002): :math:`f(x, 1) - f(x, 0)`.

    One LightGBM classifier of the response (a regression for a continuous outcome) on all
    rows, with the features ``x``, the
    treatment flag ``t`` (column ``"{TREATMENT_FEATURE}"``) and the interactions
    :math:`t \\cdot x_j` (columns ``"__treatment_x_<name>"``).  The uplift score is the
    predicted probability with ``t = 1`` minus that with ``t = 0``.

    Interactions are built for **numeric columns only**: :math:`t \\cdot x_j` is ``x_j``
    for treated rows and 0 for control rows, which is meaningful for a number but not for
    a category code.  Categorical columns enter as they are; a tree still models their
    interaction with the treatment by splitting on the flag and on the category in one
    branch.  (Lo's original model is a logistic regression, where the interaction columns
    are the only way to let the effect vary with ``x``; with trees they make that effect
    easier to find.)

    Parameters
    ----------
{_LGB_PARAMS_DOC}

    Attributes
    ----------
    booster_ : lightgbm.Booster
    interaction_columns_ : list of str
        The numeric columns given a treatment interaction.

    References
    ----------
    Lo, V. S. Y. (2002). The true lift model. *ACM SIGKDD Explorations*, 4(2), 78–86.
    """

    _fitted_attrs = ("booster_", "interaction_columns_")

    def fit(self, X: Any, y: Any, treatment: Any, *, callback: Any = None) -> DummyTreatment:
        """Fit the model on ``[x, t, t·x]``; returns ``self``."""
        self._reset()
        info, frame, y, t = check_uplift_fit(X, y, treatment, continuous=True)
        callback = check_callback(callback)
        params, n_rounds = self._outcome_params(y)
        numeric = [c for c in info.names if c not in info.categories]
        booster = self._train(params, _with_treatment(frame, t, numeric),
                              y.astype(np.float64), n_rounds, callback=callback)
        self.booster_, self.interaction_columns_, self.features_ = booster, numeric, info
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Uplift score :math:`f(x, 1) - f(x, 0)` (difference of probabilities)."""
        frame = self._features(X)
        n = frame.shape[0]
        cols = self.interaction_columns_
        treated = predict_rows(self.booster_, _with_treatment(frame, np.ones(n), cols))
        control = predict_rows(self.booster_, _with_treatment(frame, np.zeros(n), cols))
        return treated - control

    def _state_to_dict(self) -> dict:
        return {**super()._state_to_dict(), "interaction_columns": self.interaction_columns_}

    def _state_from_dict(self, state: Mapping) -> None:
        super()._state_from_dict(state)
        self.interaction_columns_ = list(state["interaction_columns"])


def _with_treatment(frame: pd.DataFrame, t: np.ndarray, numeric: list[str]) -> pd.DataFrame:
    t = np.asarray(t, dtype=np.float64)
    extra = {TREATMENT_FEATURE: t}
    for name in numeric:
        extra[f"__treatment_x_{name}"] = t * frame[name].to_numpy()
    return pd.concat([frame, pd.DataFrame(extra, index=frame.index)], axis=1)


# --------------------------------------------------------------------------- registries
#: Uplift learners (``fit(X, y, treatment)``) by the label the UI shows.
MODELS: dict[str, type] = {
    "LambdaMART uplift (Devriendt et al. 2020)": LambdaMARTUplift,
    "Flipped label (Lai 2006)": FlippedLabel,
    "Two-model (Hansotia & Rukstales 2002)": TwoModel,
    "Dummy treatment (Lo 2002)": DummyTreatment,
    "Transformed outcome (Athey & Imbens 2016)": TransformedOutcome,
    "Uplift random forest (Guelman et al. 2015)": UpliftRandomForest,
}

#: Rankers for ordinary ranking data (``fit(X, relevance, group)``) by UI label.
RANKERS: dict[str, type] = {
    "LambdaMART ranker (λ-AUC / MAUC / NDCG / MAP)": LambdaMARTRanker,
    "Linear pairwise AUC (SVM-perf ROCArea style)": LinearPairwiseAUC,
    "Pointwise regression (LightGBM)": PointwiseRanker,
}

#: Every model class by name: the registries, plus wrappers that register themselves
#: (:func:`register_model_class`, e.g. :class:`core.models.multiarm.PerArmUplift`).
_BY_CLASS_NAME: dict[str, type] = {cls.__name__: cls for cls in (*MODELS.values(),
                                                                 *RANKERS.values())}


def register_model_class(cls: type) -> type:
    """Make ``cls`` buildable by name and loadable by :func:`load_model`; returns ``cls``."""
    _BY_CLASS_NAME[cls.__name__] = cls
    return cls


def make_model(name: str, **params: Any) -> BaseModel:
    """Build a model from its UI label (a key of :data:`MODELS` or :data:`RANKERS`) or its
    class name (``"TwoModel"``), with constructor keywords ``params``.

    Raises
    ------
    ValueError
        Unknown name, or a keyword the class does not take.
    """
    cls = MODELS.get(name) or RANKERS.get(name) or _BY_CLASS_NAME.get(name)
    if cls is None:
        raise ValueError(f"name must be one of the model classes ("
                         f"{', '.join(map(repr, _BY_CLASS_NAME))}) or their labels in the "
                         f"app ({', '.join(map(repr, [*MODELS, *RANKERS]))}); got {name!r}.")
    valid = cls._get_param_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"{cls.__name__} parameters must be among {', '.join(valid)}; got "
                         f"{', '.join(unknown)}.")
    return cls(**params)


def model_from_dict(d: Mapping) -> BaseModel:
    """Rebuild a fitted model from :meth:`model_to_dict` output."""
    if not isinstance(d, Mapping) or d.get("format") != FORMAT_NAME:
        raise ValueError(f"d must be a dict written by model_to_dict (format {FORMAT_NAME!r}).")
    if d.get("version") != FORMAT_VERSION:
        raise ValueError(f"Unsupported model format version {d.get('version')!r}; this "
                         f"version of UpRank reads version {FORMAT_VERSION}.")
    cls = _BY_CLASS_NAME.get(d.get("class"))
    if cls is None:
        raise ValueError(f"Unknown model class {d.get('class')!r}; expected one of "
                         f"{', '.join(_BY_CLASS_NAME)}.")
    return cls._from_dict(d)


def load_model(path: str | Path) -> BaseModel:
    """Read a model written by ``save_model`` (JSON; nothing is unpickled)."""
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not a saved UpRank model (invalid JSON: {err}).") from None
    return model_from_dict(d)
