"""Label-ranking experiments as background tasks: the paper's Table 1 protocol (k-fold cross
validation of every method, with and without a feature block, each method's λ or C tuned
inside every fold), P/R/F1@K curves, timings, AMM hyperplanes per label, paired per-row tests,
and the tuning curves.

The paper "used the default parameters from BudgetedSVM … with the exception of the λ
parameter which, together with competitors' parameters, was configured through
cross-validation on a small held-out set" (Djuric et al. 2014).  Here, in every outer fold:
a seeded ``tune_fraction`` (20 %) of the fold's **training** users is held out, each value of
the method's grid is fitted on the other 80 % and scored (ε_dis) on the held-out users, and
the value with the lowest error (ties: the first in the grid) is refitted on all the fold's
training users and scored on its test users — the test users never choose a parameter.
Tuned: λ of AMM-rank and AMM (``lam_grid``), ``C`` of LR and PW-LR (``c_grid``); the
Mallows-based methods have no such parameter (IB-Mal keeps the paper's k = 10).  A grid of
one value fixes the parameter (no held-out fits).

The Label ranking page builds a :class:`LabelExperiment`, :func:`submit_experiment` queues it on
the app's :class:`~core.runs.jobs.JobRunner` (the worker runs :func:`experiment_task`), and
:func:`load_experiment` reads the stored tables back — keyed by the settings (and, for
uploaded data, the arrays' digest), so the same settings answer at once after a restart.
The bench (``python -m bench.label_ranking``) calls :func:`run_experiment`: one code path.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.model_selection import KFold

from core.data.abdata import DataError
from core.evaluation.significance import holm
from core.runs.takeaway import fmt_p
from core.runs.tasks import TaskSpec

__all__ = ["C_GRID", "DEFAULTS", "FIXED", "GENERATORS", "LAM_GRID", "METHODS", "PAPER_TABLE1",
           "PROTOCOL", "TUNED", "LabelExperiment", "experiment_task", "holm", "load_experiment",
           "make_data", "run_experiment", "submit_experiment", "too_few_users"]

TASK = "core.runs.label_runs:experiment_task"

#: Version of the experiment's procedure, part of every stored result's key: bump it when the
#: same settings would give other numbers (2: λ / C tuned inside each fold, and AMM's hinge on
#: raw scores with BudgetedSVM's full-budget rule), so older stored results are not reused.
PROTOCOL = 2

#: Display name → estimator class name in :mod:`core.label_ranking` (paper's names).
METHODS = {
    "AMM-rank": "AMMRank",
    "AMM": "MultiClassAMM",
    "Central-Mal": "CentralMallows",
    "AG-Mal": "GroupMallows",
    "IB-Mal": "KNNMallows",
    "LR": "LogisticPerLabel",
    "PW-LR": "PairwiseLogistic",
}

#: The paper's Table 1 (Yahoo ad clicks, 3.3M users, not public): ε_dis without / with the
#: ad-view features.  Shown beside ours as "paper (Yahoo)"; a caption says they are not to be
#: matched.
PAPER_TABLE1 = {
    "AMM": (0.3446, 0.2611), "Central-Mal": (0.2957, 0.2957), "AG-Mal": (0.2820, 0.2820),
    "IB-Mal": (0.2694, 0.1899), "LR": (0.2110, 0.1419), "PW-LR": (0.2091, 0.1226),
    "AMM-rank": (0.1996, 0.1083),
}

#: Generators of :mod:`core.label_ranking.data` the page offers (name → function name).
GENERATORS = {"ad_clicks": "make_ad_clicks", "sklearn": "from_sklearn",
              "mallows": "make_mallows_mixture"}

WITHOUT, WITH = "without ad views", "with ad views"
KS = tuple(range(1, 11))

#: The parameter each tuned method takes from its grid (display name, estimator argument).
TUNED = {"AMM-rank": ("λ", "lam"), "AMM": ("λ", "lam"), "LR": ("C", "C"),
         "PW-LR": ("C", "C")}
#: λ of AMM-rank and AMM: BudgetedSVM's default 1e-4 up to 30.  On the simulated ad clicks
#: (2,000–5,000 users, 20 labels) 1e-4 … 1e-2 score alike, the held-out optimum lies at
#: 1 … 10 and 30 is past it; the half-decades 0.3 and 3 resolve the optimum.  AMM fits are
#: cheap, so the grid is wide.
LAM_GRID = (1e-4, 1e-3, 1e-2, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
#: C (inverse L2 strength) of LR and PW-LR: 1e-3 … 1 (scikit-learn's default).  The simulated
#: ad clicks pick 3e-3 … 0.03; below 1e-3 the error rises steeply, above 1 it is flat and no
#: lower (10 and 100 were never chosen) while those fits are the slowest: 10 and 100 would
#: double PW-LR's tuning time.
C_GRID = (1e-3, 3e-3, 0.01, 0.03, 0.1, 1.0)
#: The fixed values when a grid is not searched: BudgetedSVM's λ and scikit-learn's C.
DEFAULTS = {"lam": 1e-4, "C": 1.0}
#: A :class:`LabelExperiment`'s settings for "λ and C fixed" at :data:`DEFAULTS` (one-value
#: grids: nothing is tuned), for the page's choice and ``bench.label_ranking --fixed``.
FIXED = {"lam_grid": (DEFAULTS["lam"],), "c_grid": (DEFAULTS["C"],)}


@dataclass(frozen=True)
class LabelExperiment:
    """Frozen settings of one experiment (hashable; its task key identifies the result)."""

    generator: str | None  # a GENERATORS key, or None for uploaded data
    generator_args: tuple = ()  # sorted (name, value) pairs
    methods: tuple[str, ...] = tuple(METHODS)
    n_folds: int = 5
    seed: int = 0
    epochs: int = 5
    #: λ values tried for AMM-rank and AMM, C values for LR and PW-LR, in each outer fold on
    #: the held-out ``tune_fraction`` of its training users; one value = fixed, not tuned
    lam_grid: tuple[float, ...] = LAM_GRID
    c_grid: tuple[float, ...] = C_GRID
    tune_fraction: float = 0.2
    #: uploads: the data's fingerprint (LabelRankingData.fingerprint: features, rankings,
    #: label names, groups), so other groups or labels are another experiment
    data_digest: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def params(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        d["generator_args"] = [list(p) for p in self.generator_args]
        d["methods"] = list(self.methods)
        d["lam_grid"] = [float(v) for v in self.lam_grid]
        d["c_grid"] = [float(v) for v in self.c_grid]
        d["protocol"] = PROTOCOL  # another procedure is another result (PROTOCOL)
        return d

    def grid(self, method: str) -> tuple[float, ...]:
        """The values tried for ``method`` (empty for a method without a tuned parameter)."""
        if method not in TUNED:
            return ()
        return tuple(self.lam_grid if TUNED[method][1] == "lam" else self.c_grid)

    def task(self, label: str = "") -> TaskSpec:
        return TaskSpec.make(TASK, self.params(), label=label or "Label ranking experiment")


def make_data(generator: str, args: Mapping[str, Any]):
    """The :class:`~core.label_ranking.data.LabelRankingData` of a listed generator."""
    from core.label_ranking import data as lrdata

    if generator not in GENERATORS:
        raise ValueError(f"generator must be one of {sorted(GENERATORS)}; got {generator!r}.")
    return getattr(lrdata, GENERATORS[generator])(**dict(args))


def _estimator(method: str, config: LabelExperiment, n_train: int, value: float | None = None):
    """The method's estimator; ``value`` is its tuned parameter (:data:`TUNED`), if any."""
    import core.label_ranking as lr

    cls = getattr(lr, METHODS[method])
    params = {"random_state": config.seed}
    if method in ("AMM-rank", "AMM"):
        params.update(epochs=config.epochs)
    if method in TUNED:
        params[TUNED[method][1]] = value
    if method == "IB-Mal":  # its 10 neighbours, or every training user of a small upload
        params.update(n_neighbors=min(10, n_train))
    return cls(**params)


def _check_tuning(config: LabelExperiment) -> None:
    """Plain ValueErrors for grids and a held-out share that cannot tune anything."""
    for name in ("lam_grid", "c_grid"):
        grid = getattr(config, name)
        if len(grid) == 0 or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                     and np.isfinite(v) and v > 0 for v in grid):
            raise ValueError(f"{name} must hold one or more positive numbers; got {grid!r}.")
    f = config.tune_fraction
    if isinstance(f, bool) or not (isinstance(f, numbers.Real) and 0 < f < 1):
        raise ValueError(f"tune_fraction must be a number between 0 and 1 (the share of each "
                         f"fold's training users held out to pick λ and C); got {f!r}.")


def _inner_split(Y: np.ndarray, train: np.ndarray, config: LabelExperiment, fold: int):
    """``(fit_rows, held_out_rows)``: a seeded ``tune_fraction`` of the fold's training rows
    held out (the same for every method and feature set of the fold), or ``None`` when either
    part would rank no label (a tiny upload): the defaults are used then."""
    rng = np.random.default_rng([config.seed, fold])
    rows = rng.permutation(train)
    n_out = int(round(config.tune_fraction * rows.size))
    if n_out < 1 or n_out >= rows.size:
        return None
    held, fit = np.sort(rows[:n_out]), np.sort(rows[n_out:])
    if not (Y[held] > 0).any() or not (Y[fit] > 0).any():
        return None
    return fit, held


def too_few_users(n: int, folds: int) -> str | None:
    """The message when ``n`` users cannot fill ``folds`` folds (two per fold), else None:
    what :func:`run_experiment` refuses, and the page says before a run."""
    if n >= 2 * folds:
        return None
    fewer = ("Use fewer folds (2 folds need 4 users) or more users." if n >= 4
             else "Upload more users (at least 4, for 2 folds).")
    return (f"{folds}-fold cross-validation needs at least {2 * folds} users (two per fold); "
            f"this data has {n:,}. {fewer}")


def _check_folds(Y: np.ndarray, folds: list) -> None:
    """A plain ValueError when a fold's training or test users rank no label at all (the
    error and the models are then undefined): too few users who rank labels for the folds."""
    for f, (train, test) in enumerate(folds, start=1):
        for part, rows in (("training", train), ("test", test)):
            if not (Y[rows] > 0).any():
                raise ValueError(
                    f"In fold {f} of {len(folds)} no {part} user ranks any label, so the "
                    f"methods cannot be {'trained' if part == 'training' else 'scored'}. "
                    "Use fewer folds, or data with more users who rank labels.")


def _feature_sets(data) -> dict[str, np.ndarray]:
    """Column selections: all features, and without the ad-view block when there is one."""
    X = np.asarray(data.X, dtype=np.float64)
    blocks = getattr(data, "feature_blocks", None) or {}
    adv = blocks.get("adv")
    if not adv:
        return {"all features": X}
    names = list(getattr(data, "feature_names", None) or getattr(data.X, "columns", []))
    drop = {names.index(c) for c in adv if c in names}
    keep = [j for j in range(X.shape[1]) if j not in drop]
    return {WITHOUT: X[:, keep], WITH: X}


def run_experiment(config: LabelExperiment, data, *,
                   progress: Callable[[float, str], object] | None = None) -> tuple[dict, dict]:
    """Cross-validate every method on every feature set, λ / C tuned per fold; ``(meta, frames)``.

    Frames: ``table1`` (method × feature set: ε_dis mean and sd over folds, the paper's value,
    the λ or C chosen in each fold), ``prf`` (method, feature set, k, precision, recall, f1 —
    pooled over folds), ``timing`` (fit / predict seconds per fold, the final fit; ``tune_s``
    the held-out fits before it), ``hyperplanes`` (AMM-rank's hyperplanes per label, last
    fold, richest feature set), ``paired`` (every pair of methods per feature set: mean
    per-row ε_dis difference, paired t-test p-value over all held-out rows), ``tuning``
    (method, feature set, fold, parameter, value, ε_dis on the fold's held-out training users,
    chosen: every fit of the search), ``chosen`` (the value each tuned method used in each
    fold and how it was set: "held-out", "fixed" for a one-value grid, "default" when the
    held-out part could not be formed), ``predictions`` (every row's observed ranking and
    each method's held-out top-10 labels, richest feature set).

    ``progress(fraction, text)`` is called before every fit and during the long ones (every
    label or pair of the logistic models, every 10,000 AMM steps); raise from it to cancel.
    """
    from core.label_ranking.metrics import disagreement_error, prf_curve

    report = progress or (lambda fraction, text: None)
    _check_tuning(config)
    Y = np.asarray(data.Y)
    groups = None if getattr(data, "groups", None) is None else np.asarray(data.groups)
    sets = _feature_sets(data)
    if (short := too_few_users(Y.shape[0], config.n_folds)) is not None:
        raise DataError(short)  # (KFold's own message names n_splits / n_samples)
    folds = list(KFold(config.n_folds, shuffle=True, random_state=config.seed).split(Y))
    _check_folds(Y, folds)
    methods = [m for m in config.methods if m != "AG-Mal" or groups is not None]
    skipped = [m for m in config.methods if m not in methods]  # AG-Mal needs groups
    searched = [len(config.grid(m)) if len(config.grid(m)) > 1 else 0 for m in methods]
    inner = ([_inner_split(Y, train, config, f) for f, (train, _) in enumerate(folds)]
             if any(searched) else [])
    steps = max(1, len(sets) * sum(len(folds) + k * sum(s is not None for s in inner)
                                   for k in searched))
    done = 0
    rows, prf_rows, timing, per_row, planes = [], [], [], {}, None
    tuning, chosen_rows = [], []
    labels = getattr(data, "labels", None)
    labels = [str(x) for x in (range(1, Y.shape[1] + 1) if labels is None else labels)]
    predictions = {}

    def g_of(rows):
        return None if groups is None else groups[rows]

    def fit(method, value, X_fit, Y_fit, g_fit, text):
        """Fit one estimator, reporting progress inside the fit (raise there to cancel)."""
        nonlocal done
        report(done / steps, text)
        est = _estimator(method, config, len(Y_fit), value)
        est.fit(X_fit, Y_fit, groups=g_fit,
                progress=lambda d, t: report((done + min(d / max(t, 1), 1.0)) / steps, text))
        done += 1
        return est

    for set_name, X in sets.items():
        for method in methods:
            errs, pred_all, picked = [], np.zeros_like(Y), []
            grid = config.grid(method)
            symbol = TUNED[method][0] if method in TUNED else ""
            for f, (train, test) in enumerate(folds):
                where = f"{method}, {set_name}, fold {f + 1}/{len(folds)}"
                value, how, t_tune = None, "", 0.0
                if len(grid) == 1:
                    value, how = grid[0], "fixed"
                elif grid and inner[f] is None:
                    value, how = DEFAULTS[TUNED[method][1]], "default"
                elif grid:
                    t0 = time.perf_counter()
                    fit_rows, held = inner[f]
                    X_fit, X_held = _scaled(method, X[fit_rows], X[held])
                    scores = []
                    for v in grid:
                        est = fit(method, v, X_fit, Y[fit_rows], g_of(fit_rows),
                                  f"{where}: tuning {symbol} = {v:g}")
                        scores.append(disagreement_error(Y[held],
                                                         est.predict(X_held, groups=g_of(held))))
                    best = int(np.argmin(scores))  # ties: the first value of the grid
                    value, how = grid[best], "held-out"
                    tuning += [{"method": method, "features": set_name, "fold": f + 1,
                                "parameter": symbol, "value": float(v), "eps_dis": float(e),
                                "chosen": i == best} for i, (v, e) in enumerate(zip(grid, scores))]
                    t_tune = time.perf_counter() - t0
                if grid:
                    picked.append(value)
                    chosen_rows.append({"method": method, "features": set_name, "fold": f + 1,
                                        "parameter": symbol, "value": float(value), "how": how})
                t0 = time.perf_counter()
                X_train, X_test = _scaled(method, X[train], X[test])
                est = fit(method, value, X_train, Y[train], g_of(train),
                          where if not grid else f"{where}: {symbol} = {value:g}")
                t1 = time.perf_counter()
                pred = est.predict(X_test, groups=g_of(test))
                t2 = time.perf_counter()
                pred_all[test] = pred
                errs.append(disagreement_error(Y[test], pred))
                timing.append({"method": method, "features": set_name, "fold": f + 1,
                               "fit_s": t1 - t0, "predict_s": t2 - t1, "tune_s": t_tune,
                               "rows": len(test)})
                if method == "AMM-rank" and hasattr(est, "hyperplanes_per_label_"):
                    planes = (set_name, np.asarray(est.hyperplanes_per_label_))
            paper = PAPER_TABLE1.get(method)
            rows.append({"method": method, "features": set_name,
                         "eps_dis": float(np.mean(errs)), "sd": float(np.std(errs, ddof=1))
                         if len(errs) > 1 else float("nan"),
                         "paper (Yahoo)": {WITHOUT: paper[0], WITH: paper[1]}.get(
                             set_name, float("nan")) if paper else float("nan"),
                         "chosen per fold": (f"{symbol} = " + ", ".join(f"{v:g}" for v in picked)
                                             if picked else "")})
            curve = prf_curve(Y, pred_all, ks=[k for k in KS if k <= Y.shape[1]])
            prf_rows.append(curve.assign(method=method, features=set_name))
            per_row[(method, set_name)] = _per_row_errors(Y, pred_all)
            if set_name == list(sets)[-1]:  # held-out predictions, richest feature set
                predictions[method] = _top_labels(pred_all, labels)
    paired = _paired(per_row)
    report(1.0, "done")
    frames = {"table1": pd.DataFrame(rows), "prf": pd.concat(prf_rows, ignore_index=True),
              "timing": pd.DataFrame(timing), "paired": paired,
              "tuning": pd.DataFrame(tuning, columns=["method", "features", "fold", "parameter",
                                                      "value", "eps_dis", "chosen"]),
              "chosen": pd.DataFrame(chosen_rows, columns=["method", "features", "fold",
                                                           "parameter", "value", "how"])}
    frames["predictions"] = pd.DataFrame({"row": np.arange(1, Y.shape[0] + 1),
                                          "observed": _top_labels(Y, labels, top=None),
                                          **predictions})
    if planes is not None:
        frames["hyperplanes"] = pd.DataFrame({"label": labels, "hyperplanes": planes[1]})
    meta = {"n_rows": int(Y.shape[0]), "n_labels": int(Y.shape[1]),
            "feature_sets": {k: int(v.shape[1]) for k, v in sets.items()},
            "n_folds": config.n_folds, "protocol": PROTOCOL,
            "tuning": {"fraction": config.tune_fraction, "lam_grid": list(config.lam_grid),
                       "c_grid": list(config.c_grid),
                       "folds_without_held_out": [f + 1 for f, s in enumerate(inner)
                                                  if s is None]},
            "skipped": {m: "the data have no groups (e.g. age × gender)" for m in skipped}}
    return meta, frames


def _top_labels(P: np.ndarray, labels: list[str], top: int | None = 10) -> list[str]:
    """Each row's ranked labels as "a > b > c" (the first ``top`` for predictions)."""
    out = []
    for row in P:
        ranked = np.flatnonzero(row > 0)
        ranked = ranked[np.argsort(row[ranked])][:top]
        out.append(" > ".join(labels[j] for j in ranked))
    return out


def _scaled(method: str, X_train: np.ndarray, X_test: np.ndarray):
    """AMM works on raw features (as BudgetedSVM): standardise them on the training fold
    (scikit-learn's StandardScaler); the other methods scale inside their own fit."""
    if method not in ("AMM-rank", "AMM"):
        return X_train, X_test
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test)


def _per_row_errors(Y, pred) -> np.ndarray:
    from core.label_ranking.metrics import disagreement_per_row

    return disagreement_per_row(Y, pred)


def _paired(per_row: Mapping[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    """Paired t-test of per-row ε_dis for every pair of methods on the same feature set,
    Holm-corrected over the pairs of each feature set."""
    out = []
    keys = list(per_row)
    for i, (m1, s1) in enumerate(keys):
        for m2, s2 in keys[i + 1:]:
            if s1 != s2:
                continue
            a, b = per_row[(m1, s1)], per_row[(m2, s2)]
            ok = np.isfinite(a) & np.isfinite(b)
            d = a[ok] - b[ok]
            p = float(stats.ttest_rel(a[ok], b[ok]).pvalue) if d.std() > 0 else 1.0
            out.append({"features": s1, "method A": m1, "method B": m2,
                        "mean difference (A − B)": float(d.mean()), "p_value": p})
    frame = pd.DataFrame(out, columns=["features", "method A", "method B",
                                       "mean difference (A − B)", "p_value"])
    if frame.empty:
        return frame.assign(verdict=pd.Series(dtype=object))
    for _, idx in frame.groupby("features").groups.items():
        frame.loc[idx, "p_value"] = holm(frame.loc[idx, "p_value"].to_numpy())
    frame["verdict"] = [
        (f"{a if d < 0 else b} has the lower error ({fmt_p(p)})" if p < 0.05
         else "not distinguishable at 5 %")
        for a, b, d, p in zip(frame["method A"], frame["method B"],
                              frame["mean difference (A − B)"], frame["p_value"])]
    return frame


def submit_experiment(runner, config: LabelExperiment, data=None, *, session: str = "") -> str:
    """Queue the experiment (uploaded ``data`` travels as arrays); returns the job id."""
    inputs = {}
    if config.generator is None:
        if data is None:
            raise ValueError("an experiment on uploaded data needs the data.")
        inputs = {"X": np.asarray(data.X, dtype=np.float64), "Y": np.asarray(data.Y)}
        if getattr(data, "labels", None) is not None:  # the results name the labels
            inputs["labels"] = np.asarray([str(x) for x in data.labels])
        if getattr(data, "groups", None) is not None:
            inputs["groups"] = np.asarray(data.groups).astype(str)
    return runner.submit_task(config.task(), inputs=inputs, session=session)


def experiment_task(params: dict, *, inputs: dict, store, progress) -> tuple[dict, dict]:
    """The worker's entry point (see :mod:`core.runs.tasks`)."""
    config = LabelExperiment(
        generator=params["generator"],
        generator_args=tuple(tuple(p) for p in params["generator_args"]),
        methods=tuple(params["methods"]), n_folds=params["n_folds"], seed=params["seed"],
        epochs=params["epochs"], lam_grid=tuple(params["lam_grid"]),
        c_grid=tuple(params["c_grid"]), tune_fraction=params["tune_fraction"],
        data_digest=params["data_digest"])
    if config.generator is None:
        from types import SimpleNamespace

        labels = inputs.get("labels")
        data = SimpleNamespace(X=inputs["X"], Y=inputs["Y"], groups=inputs.get("groups"),
                               feature_blocks={},
                               labels=None if labels is None else [str(x) for x in labels])
    else:
        data = make_data(config.generator, dict(config.generator_args))
    return run_experiment(config, data, progress=progress)


def load_experiment(store, key: str) -> tuple[dict, dict] | None:
    """Stored ``(meta, frames)`` of an experiment, or ``None``."""
    return store.load_result(key)
