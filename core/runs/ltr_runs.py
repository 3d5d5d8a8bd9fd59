"""Ranking-lab runs: one learning-to-rank model trained on one dataset, in the background.

The Ranking pages (and ``python -m bench.letor``) share one code path:

* :class:`RankingSource` names the data — LETOR 4.0 MQ2008 (a fold), the seeded synthetic
  LTR world, or an uploaded file — and :func:`load_splits` gives its train / validation /
  test splits (uploads and the world are split by whole queries, 60 / 20 / 20, seeded);
* :data:`RANKING_MODELS` lists the models (λ-AUC, λ-MAUC, λ-NDCG, λ-MAP LambdaMART, LightGBM's
  built-in lambdarank as the reference, the linear pairwise AUC baseline, a pointwise
  regressor) and :data:`RANKING_PRESETS` their budgets;
* :func:`train_ranker` fits one model — every candidate learning rate (or L2 strength) of the
  preset on train, early stopping on the validation split, the candidate with the best
  validation score of the model's own metric kept — and scores the test split;
* :func:`submit_ranking_run` queues that as a task on the app's job runner
  (:func:`ranking_task` runs in the worker) and :func:`list_ranking_runs` /
  :func:`load_ranking_run` read the stored runs back: test scores per document, the chosen
  settings, the validation curve and the seconds it took.  A run's key hashes the data's
  fingerprint, the model, the preset and the seed, so the same run is never trained twice.

Comparisons (per-query metrics, paired tests) are computed from the stored test scores by
:mod:`core.evaluation.per_query` and :mod:`core.evaluation.significance`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_choice
from core.runs.tasks import TaskSpec

__all__ = ["RANKING_MODELS", "RANKING_PRESETS", "RankingSource", "TrainedRanker",
           "data_fingerprint", "list_ranking_runs", "load_ranking_run", "load_splits",
           "ranking_spec", "ranking_task", "run_name", "submit_ranking_run", "train_ranker"]

TASK = "core.runs.ltr_runs:ranking_task"
KIND = "ranking_run"
SPLITS = ("train", "vali", "test")


@dataclass(frozen=True)
class ModelEntry:
    """One model the Ranking pages offer: its class, fixed keywords and selection metric."""

    cls: str  # class name in core.models
    fixed: tuple  # (name, value) pairs
    metric: str  # the validation metric that picks the learning rate / alpha
    boosted: bool  # LightGBM (learning-rate grid, early stopping) or linear (alpha grid)


#: Display name → model.  "λ-X" boosts the λ-gradients of metric X (Welleck 2016 for AUC and
#: MAUC; Burges 2010 for NDCG and MAP); "lambdarank" is LightGBM's own objective.
RANKING_MODELS: dict[str, ModelEntry] = {
    "LambdaMART λ-AUC": ModelEntry("LambdaMARTRanker", (("metric", "auc"),), "auc", True),
    "LambdaMART λ-MAUC": ModelEntry("LambdaMARTRanker", (("metric", "mauc"),), "mauc", True),
    "LambdaMART λ-NDCG": ModelEntry("LambdaMARTRanker", (("metric", "ndcg"),), "ndcg", True),
    "LambdaMART λ-MAP": ModelEntry("LambdaMARTRanker", (("metric", "map"),), "map", True),
    "LightGBM lambdarank (built-in)": ModelEntry("LambdaMARTRanker",
                                                 (("metric", "lambdarank"),), "ndcg", True),
    "Linear pairwise AUC": ModelEntry("LinearPairwiseAUC", (("multiclass", "sum"),), "mauc",
                                      False),
    "Pointwise regression": ModelEntry("PointwiseRanker", (), "ndcg", True),
}


@dataclass(frozen=True)
class Preset:
    """Budget of a run: trees, candidate learning rates (boosted models) or L2 strengths
    (linear model), and the early-stopping patience on the validation split."""

    n_estimators: int
    learning_rates: tuple[float, ...]
    alphas: tuple[float, ...]
    patience: int
    description: str


#: "quick": one learning rate, 100 trees (seconds on MQ2008); "paper": Welleck (2016)'s
#: learning-rate grid {0.1, 0.25, 0.5, 0.9}, chosen by validation score per fold (the paper
#: chose it per dataset), within UpRank's budget — 500 trees, early stopping after 50 rounds
#: (the paper states neither) — and the linear baseline's L2 strength α from a grid, standing
#: in for SVM-perf's C ∈ {0.1, 1, 10, 100} (another loss and scale: no mapping between them).
RANKING_PRESETS: dict[str, Preset] = {
    "quick": Preset(100, (0.1,), (1e-4,), 20,
                    "100 trees, learning rate 0.1 (linear: α = 0.0001); stops after 20 rounds "
                    "without a better validation score"),
    "paper": Preset(500, (0.1, 0.25, 0.5, 0.9), (1e-5, 1e-4, 1e-3, 1e-2), 50,
                    "the paper's learning rates {0.1, 0.25, 0.5, 0.9} (linear: α from "
                    "{1e-5 … 1e-2}), the best by validation score, with UpRank's budget of "
                    "500 trees; stops after 50 rounds without a better validation score"),
}


# =============================================================================== data
@dataclass(frozen=True)
class RankingSource:
    """Which ranking data: ``kind`` in {"mq2008", "world", "upload"} and sorted ``args``.

    * ``mq2008``: ``(("fold", 1),)``;
    * ``world``: keywords of :func:`core.data.make_ltr_world` (``n_queries``,
      ``no_relevant_share``, ``random_state`` …);
    * ``upload``: ``(("fingerprint", fp), ("name", file name))`` — the arrays travel with
      the task.
    """

    kind: str
    args: tuple = ()

    @classmethod
    def make(cls, kind: str, **args: Any) -> RankingSource:
        check_choice(kind, "kind", ("mq2008", "world", "upload"))
        return cls(kind, tuple(sorted(args.items())))

    @property
    def args_dict(self) -> dict:
        return dict(self.args)

    def label(self) -> str:
        a = self.args_dict
        if self.kind == "mq2008":
            return f"LETOR 4.0 MQ2008, fold {a.get('fold', 1)}"
        if self.kind == "world":
            return (f"Synthetic LTR world ({a.get('n_queries', '?')} queries, "
                    f"{a.get('no_relevant_share', 0):.0%} without a relevant document, "
                    f"seed {a.get('random_state', 0)})")
        return f"Upload: {a.get('name', 'file')}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "args": [list(p) for p in self.args]}

    @classmethod
    def from_dict(cls, d: Mapping) -> RankingSource:
        return cls(str(d["kind"]), tuple(tuple(p) for p in d["args"]))


def load_splits(source: RankingSource, data: Any = None, *,
                data_dir: Any = None) -> dict[str, Any]:
    """Train / vali / test :class:`~core.data.letor.LTRData` of ``source``.

    ``data`` is the uploaded :class:`~core.data.letor.LTRData` (``kind="upload"``): it is split
    by whole queries, 60 / 20 / 20 with seed 0, as the world is (with its own seed).
    """
    from core.data import letor

    args = source.args_dict
    if source.kind == "mq2008":
        return letor.load_mq2008(int(args.get("fold", 1)), data_dir=data_dir)
    if source.kind == "world":
        world = letor.make_ltr_world(**args)
        return letor.split_queries(world, random_state=args.get("random_state", 0))
    if data is None:
        raise ValueError("an uploaded ranking dataset needs its data.")
    return letor.split_queries(data, random_state=0)


def data_fingerprint(source: RankingSource) -> str:
    """What identifies the data of a run: the upload's fingerprint, else the source itself
    (benchmarks are fixed files or seeded)."""
    if source.kind == "upload":
        return str(source.args_dict["fingerprint"])
    return f"{source.kind}:" + ",".join(f"{k}={v}" for k, v in source.args)


# =============================================================================== training
@dataclass
class TrainedRanker:
    """What :func:`train_ranker` returns: the model, its test scores and how it was chosen."""

    name: str
    model: Any
    value: float  # chosen learning rate (boosted) or alpha (linear)
    vali: dict[float, float]  # candidate -> best validation score
    history: list[float]  # validation score per round of the chosen model (boosted)
    best_iteration: int | None
    fit_seconds: float  # the chosen candidate's fit
    total_seconds: float  # every candidate
    test_score: np.ndarray


def _build(name: str, value: float, preset: Preset, *, seed: int, threads: int) -> Any:
    from core.models import make_model

    entry = RANKING_MODELS[name]
    params = dict(entry.fixed)
    if entry.boosted:
        params.update(n_estimators=preset.n_estimators, learning_rate=value,
                      num_threads=threads, random_state=seed)
    else:
        params.update(alpha=value, random_state=seed)
    return make_model(entry.cls, **params)


def train_ranker(name: str, splits: Mapping[str, Any], *, preset: str = "quick",
                 seed: int = 0, threads: int = 1,
                 progress: Callable[[float, str], None] | None = None) -> TrainedRanker:
    """Fit model ``name`` (a key of :data:`RANKING_MODELS`) on ``splits["train"]``.

    Every candidate of the preset is fitted (boosted models with early stopping on
    ``splits["vali"]`` when it exists); the one with the best validation score of the
    model's own metric (:attr:`ModelEntry.metric`) is kept and scores ``splits["test"]``.
    ``progress(fraction, text)`` reports after every boosting round (or pair model).

    Raises
    ------
    ValueError
        The training split holds a single relevance grade (nothing to learn), or LightGBM
        cannot build trees on it (too few documents, or no feature varies): a plain sentence
        with the split's size instead of LightGBM's internal "Check failed" message.
    """
    from core.evaluation import metrics

    entry = RANKING_MODELS[check_choice(name, "model", RANKING_MODELS)]
    conf = RANKING_PRESETS[check_choice(preset, "preset", RANKING_PRESETS)]
    train, vali = splits["train"], splits.get("vali")
    _check_trainable(train)
    grid = conf.learning_rates if entry.boosted else conf.alphas
    score_fn = {"auc": metrics.auc, "mauc": metrics.mauc, "ndcg": metrics.ndcg,
                "map": metrics.mean_average_precision}[entry.metric]
    best: tuple | None = None
    scores: dict[float, float] = {}
    t_all = time.perf_counter()
    for c, value in enumerate(grid):
        model = _build(name, value, conf, seed=seed, threads=threads)
        what = (f"learning rate {value:g}" if entry.boosted else f"α = {value:g}")

        def report(i: int, total: int, c: int = c, what: str = what) -> None:
            if progress is not None:
                progress((c + i / total) / len(grid),
                         f"{name}: {what} ({c + 1}/{len(grid)}), "
                         + (f"round {i}/{total}" if entry.boosted else f"pair model {i}/{total}"))

        kwargs: dict[str, Any] = {"callback": report}
        if entry.boosted and vali is not None:
            kwargs.update(eval_set=(vali.X, vali.relevance, vali.qid),
                          early_stopping_rounds=conf.patience, eval_metric=entry.metric)
        t0 = time.perf_counter()
        try:
            model.fit(train.X, train.relevance, train.qid, **kwargs)
        except Exception as exc:
            if type(exc).__name__ != "LightGBMError":  # lightgbm.basic.LightGBMError
                raise
            raise ValueError(_too_small_for_trees(name, train)) from None
        seconds = time.perf_counter() - t0
        if vali is None:
            scores[value] = float("nan")
        elif entry.boosted:
            scores[value] = float(np.max(model.eval_history_))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # queries without a relevant row: left out
                scores[value] = float(score_fn(vali.relevance, model.predict(vali.X),
                                               group=vali.qid))
        if best is None or scores[value] > scores[best[0]]:
            best = (value, model, seconds)
    value, model, seconds = best
    history = [float(v) for v in getattr(model, "eval_history_", [])]
    return TrainedRanker(name, model, value, scores, history,
                         getattr(model, "best_iteration_", None), seconds,
                         time.perf_counter() - t_all, model.predict(splits["test"].X))


def _check_trainable(train: Any) -> None:
    """A plain ValueError when the training split holds a single relevance grade."""
    grades = np.unique(np.asarray(train.relevance, dtype=np.float64))
    if grades.size < 2:
        what = ("no training document is relevant" if grades[0] == 0
                else "every training document is equally relevant")
        raise ValueError(f"Every training document has grade {float(grades[0]):g}: {what}, "
                         "so there is nothing to learn. The training queries need documents "
                         "of at least two different grades.")


def _varying_features(X: Any) -> int:
    """How many columns of ``X`` (dense or CSR) hold more than one value."""
    if hasattr(X, "toarray"):
        lo, hi = X.min(axis=0).toarray().ravel(), X.max(axis=0).toarray().ravel()
    else:
        lo, hi = np.min(X, axis=0), np.max(X, axis=0)
    return int(np.sum(hi > lo))


def _too_small_for_trees(name: str, train: Any) -> str:
    """The plain message replacing LightGBM's internal "Check failed" errors."""
    n_docs, n_q = train.relevance.shape[0], int(pd.unique(train.qid).size)
    docs = f"{n_docs:,} document{'s' if n_docs != 1 else ''}"
    queries = f"{n_q:,} quer{'ies' if n_q != 1 else 'y'}"
    if _varying_features(train.X) == 0:
        why = f"no feature varies among the {docs} of the training split"
    else:
        why = (f"the training split has only {docs} in {queries}, too few for LightGBM to "
               "build trees (it needs enough documents per leaf and per feature bin)")
    return (f"{name} could not be trained: {why}. Boosted trees need more training "
            "queries and documents; upload more data, or try the Linear pairwise AUC model.")


# =============================================================================== tasks
def ranking_spec(source: RankingSource, fingerprint: str, model: str, *,
                 preset: str = "quick", seed: int = 0, threads: int = 1) -> TaskSpec:
    """The task of one run (its :meth:`~core.runs.tasks.TaskSpec.key` is the run's id)."""
    check_choice(model, "model", RANKING_MODELS)
    check_choice(preset, "preset", RANKING_PRESETS)
    conf = RANKING_PRESETS[preset]
    params = {"source": source.to_dict(), "fingerprint": fingerprint, "model": model,
              "preset": preset, "seed": int(seed), "threads": int(threads),
              # the preset's settings, so a run of an earlier grid is not served as this one
              "budget": [conf.n_estimators, list(conf.learning_rates), list(conf.alphas),
                         conf.patience]}
    return TaskSpec.make(TASK, params, label=f"{model} · {preset} · seed {seed}", trains=True)


def submit_ranking_run(runner: Any, source: RankingSource, model: str, *, data: Any = None,
                       preset: str = "quick", seed: int = 0, threads: int = 1,
                       session: str = "") -> str:
    """Queue one run on ``runner`` (uploaded ``data`` travels as arrays); returns the job id."""
    inputs = {}
    if source.kind == "upload":
        if data is None:
            raise ValueError("a run on uploaded data needs the data.")
        X = data.X.toarray() if hasattr(data.X, "toarray") else np.asarray(data.X)
        inputs = {"X": X.astype(np.float64), "relevance": np.asarray(data.relevance),
                  "qid": np.asarray(data.qid).astype(str)}
        if data.ids is not None:
            inputs["ids"] = np.asarray(data.ids).astype(str)
    spec = ranking_spec(source, data_fingerprint(source), model, preset=preset, seed=seed,
                        threads=threads)
    return runner.submit_task(spec, inputs=inputs, session=session)


def _upload_from_inputs(inputs: Mapping[str, np.ndarray], name: str) -> Any:
    from core.data.letor import LTRData

    n_features = inputs["X"].shape[1]
    return LTRData(X=inputs["X"], relevance=inputs["relevance"], qid=inputs["qid"],
                   ids=inputs.get("ids"), feature_names=[f"f{j + 1}" for j in range(n_features)],
                   name=name)


def _test_ids(test: Any) -> np.ndarray:
    if test.ids is not None:
        return np.asarray(test.ids).astype(str)
    return np.array([f"row {i + 1}" for i in range(test.relevance.shape[0])])


def ranking_task(params: dict, *, inputs: dict, store: Any,
                 progress: Callable[[float, str], None]) -> tuple[dict, dict]:
    """The worker's entry point (see :mod:`core.runs.tasks`)."""
    source = RankingSource.from_dict(params["source"])
    data = (_upload_from_inputs(inputs, source.args_dict.get("name", "upload"))
            if source.kind == "upload" else None)
    progress(0.0, "loading the data…")
    splits = load_splits(source, data)
    fitted = train_ranker(params["model"], splits, preset=params["preset"],
                          seed=params["seed"], threads=params["threads"], progress=progress)
    test = splits["test"]
    scores = pd.DataFrame({"qid": np.asarray(test.qid).astype(str), "doc": _test_ids(test),
                           "relevance": np.asarray(test.relevance, dtype=np.float64),
                           "score": np.asarray(fitted.test_score, dtype=np.float64)})
    if getattr(test, "truth", None) is not None:
        scores["truth"] = np.asarray(test.truth, dtype=np.float64)
    entry = RANKING_MODELS[params["model"]]
    meta = {"kind": KIND, "model": params["model"], "preset": params["preset"],
            "seed": params["seed"], "fingerprint": params["fingerprint"],
            "source": params["source"], "dataset": source.label(),
            "chosen": fitted.value, "chosen_name": "learning rate" if entry.boosted else "alpha",
            "vali": {f"{k:g}": v for k, v in fitted.vali.items()},
            "selection_metric": entry.metric, "best_iteration": fitted.best_iteration,
            "fit_seconds": fitted.fit_seconds, "total_seconds": fitted.total_seconds,
            "sizes": {s: [int(d.relevance.shape[0]), int(np.unique(d.qid).size)]
                      for s, d in splits.items()},
            "created": time.strftime("%Y-%m-%d %H:%M:%S")}
    frames = {"scores": scores,
              "history": pd.DataFrame({"round": np.arange(1, len(fitted.history) + 1),
                                       "validation": fitted.history})}
    return meta, frames


#: How a chosen setting is named for people (stored runs say "alpha").
_SETTING_NAMES = {"alpha": "α"}


def list_ranking_runs(store: Any, fingerprint: str) -> pd.DataFrame:
    """Stored runs on the data ``fingerprint``: one row per run (key, model, preset, seed,
    chosen setting as "learning rate = 0.1" or "α = 0.0001", seconds, created), newest
    first."""
    rows = [{"key": key, "model": meta["model"], "preset": meta["preset"], "seed": meta["seed"],
             "chosen": f"{_SETTING_NAMES.get(meta['chosen_name'], meta['chosen_name'])} = "
                       f"{meta['chosen']:g}",
             "best round": meta.get("best_iteration"), "fit (s)": meta["fit_seconds"],
             "created": meta["created"]}
            for key, meta in store.list_results(kind=KIND, fingerprint=fingerprint)]
    cols = ["key", "model", "preset", "seed", "chosen", "best round", "fit (s)", "created"]
    frame = pd.DataFrame(rows, columns=cols)
    return frame.sort_values("created", ascending=False, kind="stable").reset_index(drop=True)


def load_ranking_run(store: Any, key: str) -> tuple[dict, dict] | None:
    """Stored ``(meta, frames)`` of a run (frames ``scores`` and ``history``), or ``None``."""
    return store.load_result(key)


def run_name(meta: Mapping) -> str:
    """Short name of a run for tables and legends: the model, plus preset and seed when not
    the defaults."""
    extra = [] if meta["preset"] == "quick" else [meta["preset"]]
    if meta["seed"]:
        extra.append(f"seed {meta['seed']}")
    return meta["model"] + (f" ({', '.join(extra)})" if extra else "")
