r"""Uplift models on a Dask cluster, with LightGBM's own Dask estimators.

Data too big for one machine come as a Dask DataFrame (e.g. ``dask.dataframe.read_parquet``
of a folder of Parquet files); LightGBM's ``DaskLGBMClassifier`` / ``DaskLGBMRanker`` train
one booster over all workers (LightGBM's distributed data-parallel mode: every worker builds
histograms of its rows, the histograms are reduced over the network).  Nothing here ships
data around by hand.

* :func:`fit_two_model_dask` — the two-model baseline: one ``DaskLGBMClassifier`` on the
  treated rows, one on the control rows; uplift = difference of the predicted probabilities.
* :func:`fit_lambdamart_dask` — LambdaMART-PCG: ``DaskLGBMRanker`` with UpRank's λ-objective
  (:class:`core.objectives.LambdaObjective`), which LightGBM calls on every worker with that
  worker's rows and query sizes.  So a query must live inside one partition: each partition
  is shuffled and cut into blocks of ``block_rows`` rows, and each block's treated and
  control rows form two queries (the layout of ``LambdaMARTUplift(block_rows=...)``, whose
  effect on the AUUC ``bench.blocks`` measures on one machine).  Labels: Abs1 (TR and CNR
  relevant), which needs no global normalisation.

Both return a :class:`DaskUplift` whose :meth:`~DaskUplift.predict` scores a pandas or Dask
frame (local boosters, so prediction needs no cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["BLOCK_ROWS", "DaskUplift", "fit_lambdamart_dask", "fit_two_model_dask"]

#: Rows per query block of :func:`fit_lambdamart_dask` (see its docstring for why).
BLOCK_ROWS = 100_000


@dataclass
class DaskUplift:
    """A model trained on a Dask cluster, kept as local LightGBM models.

    ``kind`` is ``"two_model"`` (``models`` = [treated, control] classifiers) or
    ``"lambdamart"`` (``models`` = [ranker]); ``features`` the column order."""

    kind: str
    models: list
    features: list[str]

    def predict(self, X: Any) -> Any:
        """Uplift scores of the rows of ``X`` (pandas or Dask DataFrame; a Dask frame gives a
        Dask array computed lazily, partition by partition)."""
        if hasattr(X, "map_partitions"):
            return X[self.features].map_partitions(
                lambda part: pd.Series(self._predict_local(part), index=part.index),
                meta=(None, "f8")).to_dask_array()
        return self._predict_local(X[self.features])

    def _predict_local(self, X: pd.DataFrame) -> np.ndarray:
        if self.kind == "two_model":
            treated, control = self.models
            return treated.predict_proba(X)[:, 1] - control.predict_proba(X)[:, 1]
        return self.models[0].predict(X)


def _lgb_params(n_estimators: int, learning_rate: float, random_state: int) -> dict:
    return {"n_estimators": int(n_estimators), "learning_rate": float(learning_rate),
            "num_leaves": 31, "random_state": int(random_state), "verbose": -1,
            "deterministic": True, "force_row_wise": True}


def fit_two_model_dask(frame: Any, *, features: Sequence[str], treatment: str, outcome: str,
                       n_estimators: int = 100, learning_rate: float = 0.1,
                       random_state: int = 0, client: Any = None) -> DaskUplift:
    """Two ``DaskLGBMClassifier`` s (treated rows, control rows) on the current client."""
    from lightgbm import DaskLGBMClassifier

    features = list(features)
    models = []
    for arm in (1, 0):
        part = _aligned(frame[frame[treatment] == arm][features + [outcome]], client)
        model = DaskLGBMClassifier(client=client,
                                   **_lgb_params(n_estimators, learning_rate, random_state))
        model.fit(part[features], part[outcome])
        models.append(model.to_local())
        del part  # the arm's rows leave the workers' memory
    return DaskUplift("two_model", models, features)


def _aligned(frame: Any, client: Any = None) -> Any:
    """``frame`` persisted (on ``client``, else the current one), so its column selections
    keep one partitioning.

    LightGBM's Dask estimators pair the partitions of ``X`` and ``y`` one to one.  Left lazy,
    each selection is optimised on its own, and dask's query optimiser fuses the partitions
    of a Parquet read by the share of the columns it reads: 12 feature columns of 10 row
    groups became 5 partitions, the outcome column 3, and LightGBM refused the pair.
    LightGBM holds its training rows in the workers' memory anyway.
    """
    return frame.persist() if client is None else client.persist(frame)


def _block_queries(part: pd.DataFrame, *, treatment: str, outcome: str, block_rows: int,
                   seed: int, partition_info: dict | None = None) -> pd.DataFrame:
    """One partition in query order with its Abs1 labels (``_label``) and query ids
    (``_qid``): shuffled, cut into blocks, each block's treated then control rows."""
    from core.evaluation.metrics import relevance_labels
    from core.models.lambdamart import uplift_queries

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
    block is one block."""
    from lightgbm import DaskLGBMRanker

    from core.objectives import lightgbm_objective

    features = list(features)
    meta = frame._meta.assign(_label=np.float64(0), _qid=np.int64(0))
    queried = _aligned(frame.map_partitions(
        _block_queries, treatment=treatment, outcome=outcome, block_rows=int(block_rows),
        seed=int(random_state), meta=meta)[features + ["_label", "_qid"]], client)
    sizes = queried["_qid"].map_partitions(
        lambda q: pd.Series(np.bincount(q.to_numpy()) if len(q) else np.zeros(0, np.int64)),
        meta=(None, "i8"))
    model = DaskLGBMRanker(client=client, objective=lightgbm_objective("pcg", method="binned"),
                           metric="None", **_lgb_params(n_estimators, learning_rate,
                                                        random_state))
    model.fit(queried[features], queried["_label"], group=sizes)
    return DaskUplift("lambdamart", [model.to_local()], features)
