r"""LambdaMART with the λ-gradient objectives of :mod:`core.objectives.lambdas`.

* :class:`LambdaMARTUplift` — learning to rank **for uplift** (Devriendt et al. 2020, §3):
  an A/B test becomes one or two queries whose relevance labels come from the row's
  category (TR, TNR, CR, CNR), and LightGBM boosts an uplift ranking metric (PCG, DCG, NDCG,
  MAP) through λ-gradients.
* :class:`LambdaMARTRanker` — ordinary ranking data ``(X, relevance, group)``, with λ-AUC and
  λ-MAUC (Welleck 2016) besides NDCG, DCG and MAP.

Both call ``lgb.train`` with the custom objective of
:func:`core.objectives.lambdas.lightgbm_objective` and ``metric="None"`` (LightGBM's own ranking
metrics reject negative labels), ``deterministic=True``; the model output is the ranking
score.  See :mod:`core.models.baselines` for the conventions shared by every model.

References
----------
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897 (§3.2: queries and label sets; §3.3: PCG).
Burges, C. J. C. (2010). From RankNet to LambdaRank to LambdaMART: an overview. Microsoft
Research Technical Report MSR-TR-2010-82.
Welleck, S. (2016). Efficient AUC optimization for information ranking applications.
*ECIR 2016* (λ-AUC, λ-MAUC).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from core._validation import check_choice, check_group_ids, check_positive_int, check_scores
from core.evaluation import metrics as evaluation_metrics
from core.evaluation.metrics import UPLIFT_LABELS, relevance_labels, transformed_outcome
from core.models._base import (
    BaseModel,
    FeatureInfo,
    LightGBMParams,
    ValidationSet,
    check_callback,
    check_uplift_fit,
    predict_rows,
)
from core.objectives import CUTOFF_METRICS
from core.objectives import lambdas as objectives

__all__ = ["EVAL_METRICS", "QUERIES", "RANKER_METRICS", "RANKER_OBJECTIVES", "UPLIFT_METRICS",
           "LambdaMARTRanker", "LambdaMARTUplift", "validation_set"]

#: Metrics :class:`LambdaMARTUplift` can boost (``*_exp``: DCG2 gain ``2^rel − 1``).
UPLIFT_METRICS = ("pcg", "pcg_cutoff", "dcg", "dcg_exp", "ndcg", "ndcg_exp", "map")
#: Metrics :class:`LambdaMARTRanker` boosts with the λ engine of :mod:`core.objectives`.
RANKER_METRICS = ("auc", "mauc", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "map")
#: Every ``metric`` of :class:`LambdaMARTRanker`: the λ engine's, and LightGBM's built-in
#: ``lambdarank`` objective as the reference.
RANKER_OBJECTIVES = (*RANKER_METRICS, "lambdarank")
#: Query settings of :class:`LambdaMARTUplift`.
QUERIES = ("separate", "joint")
QUERY_WEIGHTS = ("none", "equal")


def _check_k(k: Any, metric: str) -> int | float | None:
    if k is None:
        return None
    ok_int = isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1
    ok_float = isinstance(k, (float, np.floating)) and np.isfinite(k) and 0 < k <= 1
    if not (ok_int or ok_float):
        raise ValueError(f"k must be None, a positive int (rows) or a float fraction in "
                         f"(0, 1]; got {k!r}.")
    if metric not in CUTOFF_METRICS:
        raise ValueError(f"k applies only to metrics {', '.join(CUTOFF_METRICS)}; metric "
                         f"{metric!r} takes no cut-off, got k={k!r}.")
    return k


class _LambdaMARTBase(LightGBMParams, BaseModel):
    """Shared keywords, objective and serialisation of the two LambdaMART models."""

    _fitted_attrs = ("booster_", "group_sizes_")

    def _objective_params(self, metrics: tuple[str, ...]) -> tuple[dict, int]:
        metric = check_choice(self.metric, "metric", metrics)
        k = _check_k(self.k, metric)
        check_choice(self.method, "method", objectives.METHODS)
        params, n_rounds = self._lgb_config()
        params["objective"] = objectives.lightgbm_objective(
            metric, k=k, method=self.method, bins=self.bins, sigma=self.sigma)
        return params, n_rounds

    def predict(self, X: Any) -> np.ndarray:
        """Ranking score: the raw model output (higher = ranked first)."""
        frame = self._features(X)
        return predict_rows(self.booster_, frame, raw_score=True)

    def _state_to_dict(self) -> dict:
        return {"booster": self.booster_.model_to_string(),
                "group_sizes": [int(s) for s in self.group_sizes_]}

    def _state_from_dict(self, state: Mapping) -> None:
        import lightgbm as lgb

        self.booster_ = lgb.Booster(model_str=state["booster"])
        self.group_sizes_ = np.asarray(state["group_sizes"], dtype=np.int64)


_COMMON_DOC = """\
    n_estimators : int, default=500
        Boosting rounds (500: Devriendt et al. (2020)'s budget; Welleck (2016) states none).
    learning_rate : float, default=0.01
    method : {"auto", "exact", "binned"}, default="auto"
        λ-gradient engine of :func:`core.objectives.lambdas.lambda_gradients` (exact pairs, or
        score bins for long queries).
    bins : int, default=256
        Score bins of the binned engine.
    sigma : float, default=1.0
        Steepness of the RankNet sigmoid.
    num_leaves, min_child_samples, subsample, colsample_bytree, reg_alpha, reg_lambda
        LightGBM tree parameters (scikit-learn API names).
    num_threads : int, default=0
        LightGBM threads; 0 = LightGBM's default (all cores).
    random_state : int, Generator or None, default=None
    lgb_params : dict, optional
        Further native LightGBM parameters, applied last."""


class LambdaMARTUplift(_LambdaMARTBase):
    __doc__ = f"""Learning to rank for uplift: LambdaMART on the paper's queries and labels.

    Queries (SPEC §3, Devriendt et al. 2020 §3.2):

    * ``query="separate"`` — two queries, the treated rows and the control rows; rows are
      reordered so that each query is one contiguous block (treated first), and
      ``group_sizes_ == [n_treated, n_control]``;
    * ``query="joint"`` — one query holding every row (``group_sizes_ == [n]``).

    Relevance labels: the set ``labels`` of :func:`core.evaluation.metrics.relevance_labels`
    (its table gives the label of a treated responder TR, treated non-responder TNR, control
    responder CR and control non-responder CNR in each set; paper Tables 3, 4 and 7),
    computed on all training rows at once, so for ``rel`` |T| and |C| are the training
    set's arm sizes (the same whether the control rows form their own query or not, since a
    query without treated rows has no TR row).  LightGBM
    stores labels as float32, so ``rel`` labels are used to float32 precision — a common
    factor per arm, which does not change the ranking the metric rewards.  The prediction
    is the model's raw output; higher = target first.

    Not every metric suits every label set.  ``map`` uses ``rel > 0`` as "relevant", and
    ``ndcg`` divides by the ideal DCG, which is ≤ 0 for a query without positive labels:
    with ``abs2`` or ``rel`` labels and ``query="separate"`` the control query (CR < 0,
    CNR = 0) therefore gets **zero** gradient (the objective warns for ``ndcg``), and only
    the treated rows are learned from.  ``abs1`` and ``abs3`` give both queries positive
    labels; ``pcg`` and ``dcg`` work with every set.

    Parameters
    ----------
    metric : {{"pcg", "pcg_cutoff", "dcg", "dcg_exp", "ndcg", "ndcg_exp", "map"}}, default="pcg"
        Metric whose λ-gradients are boosted (:mod:`core.objectives.lambdas`): PCG (the paper's
        promoted cumulative gain), PCG with the exact AUUC cut-off promotion, DCG with
        linear or ``2^rel − 1`` gain, NDCG, MAP.  (AUC and MAUC are for
        :class:`LambdaMARTRanker`.)
    query : {{"separate", "joint"}}, default="separate"
    labels : {{"abs1", "abs2", "abs3", "rel", "transformed"}}, default="abs1"
        The defaults are the paper's Table 6 set-up (separate queries, Abs1 labels, PCG);
        its final comparison, Table 11, uses separate queries with Rel labels
        (``labels="rel"``, as ``bench.paper_tables`` does).  ``"transformed"``: relevance =
        the transformed outcome :math:`y\\,(t/p - (1-t)/(1-p))`
        (:func:`core.evaluation.metrics.transformed_outcome`,
        negative for control rows with an outcome), the label set for a **continuous
        outcome** such as spend (the others need 0/1); quantised to at most 15 values
        (:func:`quantised_relevance`) so that the binned λ engine stays fast.
    k : int, float or None, default=None
        Cut-off of the pcg/dcg/ndcg families: rows (int ≥ 1) or a fraction of each query
        (float in (0, 1]); None = whole query (the paper's choice, §4.3).
    block_rows : int or None, default=None
        Queries of at most this many rows: the rows are shuffled (seeded by
        ``random_state``) and cut into blocks, and each block forms its own queries (its
        treated and control rows for ``query="separate"``, the block for ``"joint"``).  This
        is what training on Dask partitions does (a query never spans two partitions); the
        labels keep the whole training set's normalisation.  None = the paper's queries over
        all rows.
    query_weights : {{"none", "equal"}}, default="none"
        ``"none"`` is the paper's eq. 26: every query adds its PCG, so a query weighs in
        proportion to its rows — on separate queries about ``|T|`` × the treated area minus
        ``|C|`` × the control area.  ``"equal"`` gives every query the same total weight:
        each row's gradient and hessian times ``n / (Q·|q|)`` (``Q`` queries, ``|q|`` the
        row's query; LightGBM row weights, which the λ-objective applies), so on separate
        queries the objective is ``n/2`` × the separate relative AUUC (treated area minus
        control area) whatever the arm sizes.  The two coincide when the queries have equal
        sizes.
{_COMMON_DOC}

    Attributes
    ----------
    booster_ : lightgbm.Booster
    group_sizes_ : ndarray of int
        Query sizes passed to LightGBM.
    train_relevance_ : ndarray of float
        Relevance label of every training row, in the caller's row order (set by ``fit``;
        not saved by ``save_model``).

    References
    ----------
    Devriendt et al. (2020), §3; Burges (2010).
    """

    def __init__(self, metric: str = "pcg", *, query: str = "separate", labels: str = "abs1",
                 k: int | float | None = None, block_rows: int | None = None,
                 query_weights: str = "none", n_estimators: int = 500,
                 learning_rate: float = 0.01, method: str = "auto", bins: int = 256,
                 sigma: float = 1.0, num_leaves: int = 31, min_child_samples: int = 20,
                 subsample: float = 1.0, colsample_bytree: float = 1.0, reg_alpha: float = 0.0,
                 reg_lambda: float = 0.0, num_threads: int = 0, random_state: Any = None,
                 lgb_params: dict | None = None):
        self._store_params(locals())

    def fit(self, X: Any, y: Any, treatment: Any, *,
            callback: Any = None) -> LambdaMARTUplift:
        """Build the queries and labels, then boost; returns ``self``."""
        self._reset()
        self.__dict__.pop("train_relevance_", None)
        check_choice(self.query, "query", QUERIES)
        check_choice(self.labels, "labels", UPLIFT_LABELS)
        check_choice(self.query_weights, "query_weights", QUERY_WEIGHTS)
        info, frame, y, t = check_uplift_fit(X, y, treatment,
                                             continuous=self.labels == "transformed")
        # (the paper's label sets need 0/1: check_uplift_fit says so for a continuous y)
        callback = check_callback(callback)
        params, n_rounds = self._objective_params(UPLIFT_METRICS)
        if self.labels == "transformed":
            relevance = quantised_relevance(transformed_outcome(y, t))
        else:
            relevance = relevance_labels(y, t, labels=self.labels)
        order, sizes = uplift_queries(t, self.query, block_rows=self.block_rows,
                                      random_state=self.random_state)
        weight = query_weights(sizes) if self.query_weights == "equal" else None
        booster = self._train(params, frame.iloc[order].reset_index(drop=True),
                              relevance[order], n_rounds, callback=callback, group=sizes,
                              weight=weight)
        self.booster_, self.group_sizes_, self.features_ = booster, sizes, info
        self.train_relevance_ = relevance
        return self


def query_weights(sizes: np.ndarray) -> np.ndarray:
    """Row weights giving every query the same total, ``n / (Q·|q|)`` for a row of query ``q``
    (``Q`` queries, ``n`` rows, so the weights sum to ``n``), in query order."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.repeat(sizes.sum() / (sizes.size * sizes.astype(np.float64)), sizes)


def uplift_queries(t: np.ndarray, query: str, *, block_rows: int | None = None,
                   random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Row order and query sizes of the uplift queries: the treated then the control rows
    (``"separate"``) or all rows (``"joint"``); with ``block_rows``, the same inside each
    block of at most that many shuffled rows (blocks of equal size, ⌈n / block_rows⌉ of
    them; queries with no rows are dropped)."""
    from core._validation import as_generator, check_positive_int

    n = t.shape[0]
    if block_rows is None:
        blocks = [np.arange(n)]
    else:
        block_rows = check_positive_int(block_rows, "block_rows")
        rows = as_generator(random_state).permutation(n)
        blocks = np.array_split(rows, -(-n // block_rows))
    order, sizes = [], []
    for rows in blocks:
        parts = ([rows[t[rows] == 1], rows[t[rows] == 0]] if query == "separate" else [rows])
        for part in parts:
            if part.size:
                order.append(part)
                sizes.append(part.size)
    return np.concatenate(order), np.asarray(sizes, dtype=np.int64)


class LambdaMARTRanker(_LambdaMARTBase):
    __doc__ = f"""LambdaMART for ordinary ranking data, with λ-AUC and λ-MAUC (Welleck 2016).

    ``fit(X, relevance, group)`` takes the relevance of every row and its queries in either
    form:

    * **query sizes** (LightGBM's convention): a sequence of positive ints summing to
      ``n``, the rows of each query contiguous and in order;
    * **per-row query ids**: one id (number or string) per row, in any order; the rows are
      grouped by id (sorted ids, row order kept inside a query).

    A ``group`` of length ``n`` is read as per-row ids, any other length as sizes (a list of
    ``n`` sizes could only mean ``n`` one-row queries, which have nothing to rank);
    ``group=None`` makes all rows one query.

    Parameters
    ----------
    metric : {{"auc", "mauc", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "map", "lambdarank"}}, \
default="auc"
        ``auc`` uses ``relevance > 0`` as the binary label.  ``mauc`` has the classes of
        :func:`core.evaluation.metrics.mauc`: the grades ``c > 0`` of a query (rows with
        relevance ≤ 0 are no class, only part of the rest), MAUC = Σ_{{c>0}} p(c)·AUC(c vs
        every other row of the query) with p(c) = m_c / R, the class's share of the query's
        R relevant rows (so the weights sum to 1 and MAUC = AUC for 0/1 relevance).
        ``"lambdarank"`` is LightGBM's built-in objective (NDCG λ's with gain 2^rel − 1 and
        its default truncation at 30 positions; integer grades only): the reference the
        λ engine is measured against, not part of it.
    k : int, float or None, default=None
        Cut-off of the dcg/ndcg metrics (refused for auc, mauc, map).
{_COMMON_DOC}

    Attributes
    ----------
    booster_ : lightgbm.Booster
    group_sizes_ : ndarray of int
        Query sizes passed to LightGBM (after grouping rows by id).

    References
    ----------
    Welleck (2016); Burges (2010).
    """

    def __init__(self, metric: str = "auc", *, k: int | float | None = None,
                 n_estimators: int = 500, learning_rate: float = 0.01, method: str = "auto",
                 bins: int = 256, sigma: float = 1.0, num_leaves: int = 31,
                 min_child_samples: int = 20, subsample: float = 1.0,
                 colsample_bytree: float = 1.0, reg_alpha: float = 0.0,
                 reg_lambda: float = 0.0, num_threads: int = 0, random_state: Any = None,
                 lgb_params: dict | None = None):
        self._store_params(locals())

    def fit(self, X: Any, relevance: Any, group: Any = None, *, eval_set: Any = None,
            early_stopping_rounds: int | None = None, eval_metric: str | None = None,
            callback: Any = None) -> LambdaMARTRanker:
        """Boost the λ-gradients of ``metric`` on the queries of ``group``; returns ``self``.

        ``eval_set=(X_val, relevance_val, group_val)`` scores a validation split after every
        round with ``eval_metric`` (default: the boosted metric; NDCG for ``"lambdarank"``),
        recorded in ``eval_history_``; with ``early_stopping_rounds`` training stops when it
        has not improved for that many rounds and the model keeps its best round
        (``best_iteration_``).
        """
        self._reset()
        self.__dict__.pop("eval_history_", None)
        self.__dict__.pop("best_iteration_", None)
        info, frame = FeatureInfo.fit(X)
        rel = check_scores(relevance, "relevance", n=frame.shape[0])
        order, sizes = ranking_queries(group, frame.shape[0])
        callback = check_callback(callback)
        check_choice(self.metric, "metric", RANKER_OBJECTIVES)
        if self.metric == "lambdarank":
            params, n_rounds = self._builtin_params(rel)
        else:
            params, n_rounds = self._objective_params(RANKER_METRICS)
        if np.unique(rel).size < 2:
            raise ValueError("relevance must hold at least two distinct values; got a single "
                             f"value {float(rel[0]):g}, so there is nothing to rank.")
        valid = validation_set(info, eval_set, early_stopping_rounds,
                               eval_metric or EVAL_METRIC.get(self.metric, self.metric))
        booster = self._train(params, frame.iloc[order].reset_index(drop=True), rel[order],
                              n_rounds, callback=callback, group=sizes, valid=valid)
        self.booster_, self.group_sizes_, self.features_ = booster, sizes, info
        if valid is not None:
            self.eval_history_ = np.asarray(valid.history)
            self.best_iteration_ = int(booster.best_iteration or len(valid.history))
        return self

    def _builtin_params(self, rel: np.ndarray) -> tuple[dict, int]:
        """LightGBM's own ``lambdarank`` objective (NDCG λ's, its default gains and
        truncation): the reference the custom λ-objectives are measured against."""
        if self.k is not None:
            raise ValueError(f"metric 'lambdarank' takes no cut-off k; got k={self.k!r}.")
        if np.any(rel < 0) or np.any(rel != np.round(rel)) or rel.max() > 30:
            raise ValueError("metric 'lambdarank' (LightGBM's built-in objective) needs integer "
                             "relevance grades in 0..30; got values in "
                             f"[{rel.min():g}, {rel.max():g}].")
        params, n_rounds = self._lgb_config()
        params["objective"] = "lambdarank"
        return params, n_rounds


#: Validation metric of each boosted metric (early stopping and ``eval_history_``).
EVAL_METRIC = {"lambdarank": "ndcg", "ndcg_exp": "ndcg", "dcg": "ndcg", "dcg_exp": "ndcg"}
#: Validation metrics: name → ``f(relevance, score, *, group)`` of :mod:`core.evaluation`.
EVAL_METRICS = {"auc": "auc", "mauc": "mauc", "ndcg": "ndcg", "map": "mean_average_precision"}


def validation_set(info: FeatureInfo, eval_set: Any,
                   stopping_rounds: int | None, metric: str) -> ValidationSet | None:
    """The :class:`~core.models._base.ValidationSet` of ``eval_set = (X, relevance, group)``
    scored by ``metric`` (a key of :data:`EVAL_METRICS`), or ``None`` without ``eval_set``."""
    if eval_set is None:
        if stopping_rounds is not None:
            raise ValueError("early_stopping_rounds needs an eval_set (X, relevance, group).")
        return None
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 3:
        raise ValueError("eval_set must be a tuple (X, relevance, group) of the validation "
                         f"split; got {type(eval_set).__name__}.")
    if stopping_rounds is not None:
        stopping_rounds = check_positive_int(stopping_rounds, "early_stopping_rounds")
    check_choice(metric, "eval_metric", EVAL_METRICS)
    X_val, rel_val, group_val = eval_set
    frame = info.transform(X_val)
    rel = check_scores(rel_val, "eval_set relevance", n=frame.shape[0])
    order, sizes = ranking_queries(group_val, frame.shape[0])
    codes = np.repeat(np.arange(sizes.size), sizes)
    rel = rel[order]
    score_fn = getattr(evaluation_metrics, EVAL_METRICS[metric])

    def feval(preds: np.ndarray, _data: Any) -> tuple[str, float, bool]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # queries without a relevant row are left out
            return metric, float(score_fn(rel, preds, group=codes)), True

    return ValidationSet(frame.iloc[order].reset_index(drop=True), rel, sizes, feval,
                         stopping_rounds)


#: Distinct non-zero levels per sign that :func:`quantised_relevance` keeps.
TRANSFORMED_LEVELS = 7


def quantised_relevance(values: np.ndarray, levels: int = TRANSFORMED_LEVELS) -> np.ndarray:
    """A continuous relevance on at most ``2·levels + 1`` values, for the λ engine.

    The binned λ engine needs few relevance classes (its cost grows with their number; the
    exact engine is O(n²) per query), so a continuous label such as the transformed spend
    is quantised: 0 stays 0, the positive values are cut at their quantiles into ``levels``
    equal-count bins and each replaced by its bin's mean, and the same for the negative
    values.  Bin means keep each bin's total, so the query's total relevance is unchanged.

    >>> quantised_relevance(np.array([0.0, 1.0, 2.0, 3.0, 10.0, -4.0]), levels=2).tolist()
    [0.0, 1.5, 1.5, 6.5, 6.5, -4.0]
    """
    out = values.astype(np.float64).copy()
    for sign in (1.0, -1.0):
        idx = np.flatnonzero(sign * values > 0)
        if idx.size == 0:
            continue
        order = idx[np.argsort(values[idx], kind="stable")]
        for part in np.array_split(order, min(levels, order.size)):
            out[part] = values[part].mean()
    return out


def ranking_queries(group: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row order making each query contiguous, and the query sizes, from sizes or ids.

    See :class:`LambdaMARTRanker` for the two accepted forms of ``group``.
    """
    if group is None:
        return np.arange(n), np.array([n], dtype=np.int64)
    arr = np.asarray(group)
    if arr.ndim != 1:
        raise ValueError(f"group must be 1-d (query sizes or one id per row); got shape "
                         f"{arr.shape}.")
    if arr.shape[0] == n:
        codes = check_group_ids(arr, "group", n=n)
        order = np.argsort(codes, kind="stable")
        return order, np.bincount(codes).astype(np.int64)
    if arr.dtype.kind not in "iuf" or arr.size == 0 or not np.all(np.isfinite(arr)) \
            or np.any(arr != np.round(arr)) or np.any(arr < 1):
        raise ValueError(f"group must be query sizes (positive integers summing to {n}) or "
                         f"one query id per row (length {n}); got {arr.size} values "
                         f"that are not positive integers.")
    sizes = arr.astype(np.int64)
    if int(sizes.sum()) != n:
        raise ValueError(f"group sizes must sum to the number of rows ({n}); they sum to "
                         f"{int(sizes.sum())}.")
    return np.arange(n), sizes
