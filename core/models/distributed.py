r"""Uplift models on a Dask cluster, with LightGBM's own Dask estimators.

Data too big for one machine come as a Dask DataFrame (e.g. ``dask.dataframe.read_parquet``
of a folder of Parquet files); LightGBM's ``DaskLGBMClassifier`` / ``DaskLGBMRanker`` train
one booster over all workers (LightGBM's distributed data-parallel mode: every worker builds
histograms of its rows, the histograms are reduced over the network).  The training rows
stay on the workers: nothing here ships data around by hand.

* :func:`fit_two_model_dask` — the two-model baseline: one ``DaskLGBMClassifier`` on the
  treated rows, one on the control rows; uplift = difference of the predicted probabilities
  (``DaskLGBMRegressor`` s and predicted means for an amount).
* :func:`fit_lambdamart_dask` — LambdaMART-PCG: ``DaskLGBMRanker`` with UpRank's λ-objective
  (:class:`core.objectives.LambdaObjective`), which LightGBM calls on every worker with that
  worker's rows and query sizes.  So a query must live inside one partition: each partition
  is shuffled and cut into blocks of ``block_rows`` rows, and each block's treated and
  control rows form two queries (the layout of ``LambdaMARTUplift(block_rows=...)``, whose
  effect on the AUUC ``bench.blocks`` measures on one machine).  Labels: Abs1 (TR and CNR
  relevant), which needs no global normalisation.

Both check the outcome and the treatment over the whole columns first (one pass over the
two columns) and refuse what the in-memory models refuse, with their messages; both need a
running ``distributed`` client (LightGBM's Dask estimators do).  Both return a
:class:`DaskUplift` whose :meth:`~DaskUplift.predict` scores a pandas or Dask frame (local
boosters, so prediction needs no cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.models._base import lightgbm_frame

__all__ = ["BLOCK_ROWS", "DaskUplift", "fit_lambdamart_dask", "fit_two_model_dask"]

#: Rows per query block of :func:`fit_lambdamart_dask` (see its docstring for why).
BLOCK_ROWS = 100_000


@dataclass
class DaskUplift:
    """A model trained on a Dask cluster, kept as local LightGBM models.

    ``kind`` is ``"two_model"`` (``models`` = [treated, control] classifiers, or regressors
    for an amount) or ``"lambdamart"`` (``models`` = [ranker]); ``features`` the column
    order."""

    kind: str
    models: list
    features: list[str]

    def predict(self, X: Any) -> Any:
        """Uplift scores of the rows of ``X`` (pandas or Dask DataFrame).  A Dask frame gives a
        Dask array computed lazily, partition by partition (chunk sizes unknown until
        computed); :func:`core.evaluation.auuc_table` and the other curves take it as it
        is, with the frame's outcome and treatment columns."""
        if hasattr(X, "map_partitions"):
            return X[self.features].map_partitions(
                lambda part: pd.Series(self._predict_local(part), index=part.index),
                meta=(None, "f8")).to_dask_array()
        return self._predict_local(X[self.features])

    def _predict_local(self, X: pd.DataFrame) -> np.ndarray:
        if len(X) == 0:  # LightGBM refuses an empty frame
            return np.empty(0, dtype=np.float64)
        X = lightgbm_frame(X)  # the names it was fitted on
        if self.kind == "two_model":
            treated, control = self.models
            return _arm_prediction(treated, X) - _arm_prediction(control, X)
        return self.models[0].predict(X)


def _arm_prediction(model: Any, X: pd.DataFrame) -> np.ndarray:
    """P(y = 1 | x) of a classifier, E[y | x] of a regressor (an amount)."""
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)[:, 1]
    return model.predict(X)


def _lgb_params(n_estimators: int, learning_rate: float, random_state: int) -> dict:
    return {"n_estimators": int(n_estimators), "learning_rate": float(learning_rate),
            "num_leaves": 31, "random_state": int(random_state), "verbose": -1,
            "deterministic": True, "force_row_wise": True}


# --------------------------------------------------------------------------- validation
def _check_frame(frame: Any, features: Sequence[str], treatment: str,
                 outcome: str) -> list[str]:
    """The feature names as a list, after checking that ``frame`` is a Dask DataFrame holding
    every named column."""
    import dask.dataframe as dd

    if isinstance(frame, pd.DataFrame):
        raise ValueError("frame must be a Dask DataFrame; got a pandas DataFrame. Use the "
                         "in-memory models (TwoModel, LambdaMARTUplift) for it, or "
                         "dask.dataframe.from_pandas(frame, npartitions=...) to spread it "
                         "over the cluster.")
    if not isinstance(frame, dd.DataFrame):
        raise ValueError(f"frame must be a Dask DataFrame; got {type(frame).__name__}.")
    if isinstance(features, str):
        features = [features]
    features = list(features)
    if not features:
        raise ValueError("features must name at least one column; got none.")
    columns = list(frame.columns)
    for what, names in (("features", features), ("treatment", [treatment]),
                        ("outcome", [outcome])):
        missing = [c for c in names if c not in columns]
        if missing:
            raise ValueError(f"{what} names column(s) {missing} that frame does not have; "
                             f"its columns are {columns}.")
    inside = [c for c in (treatment, outcome) if c in features]
    if inside:
        raise ValueError(f"features must not include the treatment or outcome column; got "
                         f"{inside}.")
    return features


def _column_checks(continuous: bool) -> dict:
    """The in-memory models' checks of the outcome and the treatment (``check_uplift_fit``),
    column by column, in its order."""
    from core._validation import check_binary
    from core.models._base import check_outcome

    return {"outcome": lambda a: check_outcome(a, continuous=continuous),
            "treatment": lambda a: check_binary(a, "treatment")}


def _partition_summary(part: pd.DataFrame, *, treatment: str, outcome: str,
                       continuous: bool) -> dict:
    """One partition's part of the checks: the columns its values fail, else per arm
    (control, treated) the rows, the responders (0/1 outcome) and the outcome's range."""
    failing = []
    checked = {}
    for name, check in _column_checks(continuous).items():
        try:
            checked[name] = check(part[treatment if name == "treatment" else outcome]
                                  .to_numpy())
        except ValueError:
            failing.append(name)
    if failing:
        return {"failing": failing}
    y, t = checked["outcome"], checked["treatment"]
    binary = bool(np.isin(y, (0, 1)).all())
    out = {"failing": [], "binary": binary, "rows": [], "responders": [], "range": []}
    for arm in (0, 1):
        values = y[t == arm].astype(np.float64)
        out["rows"].append(values.size)
        out["responders"].append(int(np.count_nonzero(values)) if binary else 0)
        out["range"].append((values.min(), values.max()) if values.size else None)
    return out


def _check_fit_columns(frame: Any, client: Any, *, features: list[str], treatment: str,
                       outcome: str, continuous: bool) -> bool:
    """Run the in-memory models' checks (:func:`core.models._base.check_uplift_fit`) on the
    whole columns and return whether the outcome is 0/1.

    One pass over the two columns: each partition checks its values and counts its rows per
    arm and outcome.  A refused value raises the in-memory message for the whole column (a
    second pass collects the column's distinct and non-finite values and the same check runs
    on them); the checks of the totals (both arms present, responders and non-responders,
    an outcome that varies) run on a few rows standing for what the partitions found, so
    their messages are the in-memory ones too."""
    import dask

    from core._validation import distinct_and_nonfinite
    from core.models._base import check_uplift_fit

    parts = frame[[treatment, outcome]].to_delayed()
    summaries = client.gather(client.compute([dask.delayed(_partition_summary)(
        p, treatment=treatment, outcome=outcome, continuous=continuous) for p in parts]))
    failing = {name for s in summaries for name in s["failing"]}
    checks = _column_checks(continuous)
    for name in ("outcome", "treatment"):
        if name in failing:
            column = outcome if name == "outcome" else treatment
            values = client.gather(client.compute(
                [dask.delayed(distinct_and_nonfinite)(p[column]) for p in parts]))
            checks[name](np.concatenate([v for v in values if v.size]))
            raise ValueError(f"{name} column {column!r} holds values the in-memory models "
                             "refuse.")
    binary = all(s["binary"] for s in summaries)
    y_rows, t_rows = [], []  # a few rows standing for each arm's outcomes
    for arm in (0, 1):
        rows = sum(s["rows"][arm] for s in summaries)
        if binary:
            responders = sum(s["responders"][arm] for s in summaries)
            values = [v for v, present in ((1.0, responders), (0.0, rows - responders))
                      if present]
        else:
            ranges = [s["range"][arm] for s in summaries if s["range"][arm] is not None]
            values = ([min(r[0] for r in ranges), max(r[1] for r in ranges)] if ranges
                      else [])
        y_rows += values
        t_rows += [arm] * len(values)
    stand_in = pd.DataFrame(np.zeros((len(y_rows), len(features))), columns=features)
    if not y_rows:  # no rows at all: the in-memory message names the frame's shape
        stand_in = pd.DataFrame(np.zeros((0, len(features))), columns=features)
    check_uplift_fit(stand_in, np.array(y_rows), np.array(t_rows), continuous=continuous)
    return binary


# --------------------------------------------------------------------------- cluster
def _client(client: Any) -> Any:
    """``client``, else the current Dask client; LightGBM's Dask estimators need one."""
    if client is not None:
        return client
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        raise ValueError("The Dask models need a running distributed client: create one "
                         "first (core.runs.cluster.connect(), or distributed.Client(...)), "
                         "or pass client=.") from None


def _aligned(frame: Any, client: Any) -> Any:
    """``frame`` persisted on ``client`` without its empty partitions, so its column
    selections keep one partitioning and every worker LightGBM uses holds rows.

    LightGBM's Dask estimators pair the partitions of ``X`` and ``y`` one to one.  Left lazy,
    each selection is optimised on its own, and dask's query optimiser fuses the partitions
    of a Parquet read by the share of the columns it reads: 12 feature columns of 10 row
    groups became 5 partitions, the outcome column 3, and LightGBM refused the pair.
    LightGBM holds its training rows in the workers' memory anyway.  A worker whose
    partitions are all empty (an arm's rows filtered from a frame sorted by treatment, a
    filtered split) makes LightGBM fail ("Input data must be 2 dimensional and non empty"):
    empty partitions are dropped.

    The frame is optimised before it is persisted.  ``client.persist`` optimises it too, but
    (dask 2026.8) returns a collection with the unoptimised partition count: a Parquet file
    with columns left unread fused 10 partitions into 5 futures, the collection still
    claimed 10, and LightGBM's ``wait`` failed with "lost dependencies" (Criteo-size
    training from a file with more columns than the model reads).
    """
    import dask.dataframe as dd
    from distributed import futures_of

    persisted = client.persist(frame.optimize())
    parts = sorted(futures_of(persisted), key=lambda f: f.key[1])  # keys: (name, partition)
    lengths = client.gather(client.map(len, parts))
    if all(lengths):
        return persisted
    return dd.from_delayed([p for p, n in zip(parts, lengths, strict=True) if n],
                           meta=frame._meta, verify_meta=False)


def _fit_quietly(model: Any, *args: Any, **kwargs: Any) -> Any:
    """``model.fit(*args, **kwargs)`` without LightGBM's Python-side chatter: the client's
    "Finding random open ports for workers" print and "Parameter n_jobs will be ignored"
    warning (its Dask estimators pass their own ``n_jobs``).  The workers' native
    "[LightGBM] [Info] Listening..." lines stay: LightGBM's log level and log callback are
    per thread, and its network listener thread prints with the defaults whatever
    ``verbose`` says."""
    import contextlib
    import io
    import warnings

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
        return model.fit(*args, **kwargs)


# --------------------------------------------------------------------------- models
def fit_two_model_dask(frame: Any, *, features: Sequence[str], treatment: str, outcome: str,
                       n_estimators: int = 100, learning_rate: float = 0.1,
                       random_state: int = 0, client: Any = None) -> DaskUplift:
    """Two LightGBM Dask models (treated rows, control rows) on the current client.

    ``DaskLGBMClassifier`` s for a 0/1 outcome, ``DaskLGBMRegressor`` s for an amount (as
    :class:`~core.models.TwoModel` does in memory); the outcome and the treatment are
    checked first, with the in-memory models' messages.  Each arm's model trains on the
    partitions that hold rows of that arm.  ``client``: the current Dask client when
    ``None`` (one must be running; :func:`core.runs.cluster.connect` makes one).

    Not reproducible fit to fit: ``random_state`` seeds LightGBM (``deterministic`` on),
    but LightGBM's Dask interface orders the workers (their network ranks) and each worker's
    partitions by a set of task keys, and the model depends on that order (each worker bins
    its share of the features from its own rows).  Measured: 8 fits with the same seed, data
    and 2-worker cluster (50,000 rows, 4 partitions, 40 trees) gave 3 distinct two-models
    (test AUUC@30 % 0.000900–0.000921) and 2 distinct LambdaMART-PCG models (0.001087–
    0.001156) — the spread of the in-memory LambdaMART-PCG over seeds 0–3 (0.001083–
    0.001161).  Keep the fitted :class:`DaskUplift` (its boosters are local) to reuse a
    model."""
    from lightgbm import DaskLGBMClassifier, DaskLGBMRegressor

    features = _check_frame(frame, features, treatment, outcome)
    client = _client(client)
    binary = _check_fit_columns(frame, client, features=features, treatment=treatment,
                                outcome=outcome, continuous=True)
    estimator = DaskLGBMClassifier if binary else DaskLGBMRegressor
    models = []
    for arm in (1, 0):
        part = _aligned(frame[frame[treatment] == arm][features + [outcome]], client)
        model = estimator(client=client,
                          **_lgb_params(n_estimators, learning_rate, random_state))
        _fit_quietly(model, lightgbm_frame(part[features]), part[outcome])
        models.append(model.to_local())
        del part  # the arm's rows leave the workers' memory
    return DaskUplift("two_model", models, features)


def _block_queries(part: pd.DataFrame, *, treatment: str, outcome: str, block_rows: int,
                   seed: int, partition_info: dict | None = None) -> pd.DataFrame:
    """One partition in query order with its Abs1 labels (``_label``) and query ids
    (``_qid``): shuffled, cut into blocks, each block's treated then control rows.  The
    columns were checked (:func:`_check_fit_columns`); an empty partition stays empty."""
    from core.evaluation.metrics import relevance_labels
    from core.models.lambdamart import uplift_queries

    if len(part) == 0:
        return part.assign(_label=np.float64(0), _qid=np.int64(0))
    number = 0 if partition_info is None else int(partition_info["number"])
    t = part[treatment].to_numpy().astype(np.int8)
    y = part[outcome].to_numpy().astype(np.int8)
    order, sizes = uplift_queries(t, "separate", block_rows=block_rows,
                                  random_state=np.random.default_rng([seed, number]))
    out = part.iloc[order].copy()
    out["_label"] = relevance_labels(y, t, labels="abs1")[order]
    out["_qid"] = np.repeat(np.arange(sizes.size), sizes)
    return out


def fit_lambdamart_dask(frame: Any, *, features: Sequence[str], treatment: str, outcome: str,
                        block_rows: int = BLOCK_ROWS, n_estimators: int = 100,
                        learning_rate: float = 0.1, random_state: int = 0,
                        client: Any = None) -> DaskUplift:
    """LambdaMART-PCG with queries of at most ``block_rows`` rows inside each partition,
    trained by ``DaskLGBMRanker`` with UpRank's λ-objective on every worker.

    ``block_rows``: ``bench.blocks`` finds no AUUC lost down to blocks of 1,000 rows, but
    each query costs the λ engine a fixed ~0.1 ms per round (its bins' FFTs and the calls),
    so small blocks cost time: at Criteo's 85 % treated share (a block's control query is
    15 % of it) the fixed cost is ~5 % of the objective's time with the default 100,000 rows
    and ~30 % with blocks of 10,000 (per-row cost ~40–45 ns).  A partition smaller than a
    block is one block; empty partitions are left out.

    The outcome (0/1) and the treatment are checked first, with the messages of
    :class:`~core.models.LambdaMARTUplift`.  ``client``: the current Dask client when
    ``None`` (one must be running).  Reproducibility: as :func:`fit_two_model_dask` (the
    blocks' shuffles are seeded by ``random_state`` and the partition's number — its number
    after dask's optimiser, which merges a Parquet read's partitions by the share of the
    file's columns read: the same rows in a file with more columns can get other blocks)."""
    from lightgbm import DaskLGBMRanker

    from core._validation import check_positive_int
    from core.objectives import lightgbm_objective

    features = _check_frame(frame, features, treatment, outcome)
    block_rows = check_positive_int(block_rows, "block_rows")
    client = _client(client)
    _check_fit_columns(frame, client, features=features, treatment=treatment, outcome=outcome,
                       continuous=False)
    meta = frame._meta.assign(_label=np.float64(0), _qid=np.int64(0))
    queried = _aligned(frame.map_partitions(
        _block_queries, treatment=treatment, outcome=outcome, block_rows=block_rows,
        seed=int(random_state), meta=meta)[features + ["_label", "_qid"]], client)
    sizes = queried["_qid"].map_partitions(lambda q: pd.Series(np.bincount(q.to_numpy())),
                                           meta=(None, "i8"))
    model = DaskLGBMRanker(client=client, objective=lightgbm_objective("pcg", method="binned"),
                           metric="None", **_lgb_params(n_estimators, learning_rate,
                                                        random_state))
    _fit_quietly(model, lightgbm_frame(queried[features]), queried["_label"], group=sizes)
    return DaskUplift("lambdamart", [model.to_local()], features)
