"""Several-arms experiments as background tasks: one per-arm uplift model
(:class:`core.models.PerArmUplift`) trained on 70 % of an A/B/n dataset, its predicted uplift
of every arm on the other 30 % stored with the outcomes and arms — from which the Several
arms page draws per-arm curves, the policy table, the multi-armed Qini curve and calibration.

``bench.multiarm`` measures the same models on Hillstrom; this module is the app's path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_choice
from core.runs.tasks import TaskSpec

__all__ = ["MULTIARM_MODELS", "SOURCES", "load_multiarm", "multiarm_spec", "multiarm_task",
           "policy_table", "split_rows"]

TASK = "core.runs.multiarm_runs:multiarm_task"

#: Data the page offers: key → (label, loader keywords).
SOURCES = {
    "hillstrom_visit": ("Hillstrom, three arms — visit", {"outcome": "visit"}),
    "hillstrom_spend": ("Hillstrom, three arms — spend ($)", {"outcome": "spend"}),
    "world": ("Multi-arm world (3 arms, known effects)", {"outcome": "binary"}),
}

#: Model label → (per-arm class, keywords); ``binary_only`` models need a 0/1 outcome.
MULTIARM_MODELS = {
    "Two-model per arm": ("TwoModel", {}),
    "Transformed outcome per arm": ("TransformedOutcome", {}),
    "Flipped label per arm (0/1 only)": ("FlippedLabel", {}),
    "LambdaMART-PCG per arm (0/1 only)": ("LambdaMARTUplift", {"metric": "pcg"}),
    "LambdaMART-PCG, transformed-outcome labels, per arm": (
        "LambdaMARTUplift", {"metric": "pcg", "labels": "transformed"}),
}


def load_multiarm(source: str):
    """The :class:`~core.data.MultiArmData` of a :data:`SOURCES` key."""
    from core.data import load_hillstrom, make_multiarm_world

    check_choice(source, "source", SOURCES)
    if source == "world":
        return make_multiarm_world(30_000, n_arms=3, random_state=0)
    return load_hillstrom(arm="all", **SOURCES[source][1])


def split_rows(t: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """70 / 30 train / test rows, stratified by arm."""
    from sklearn.model_selection import train_test_split

    return train_test_split(np.arange(t.shape[0]), test_size=0.3, stratify=t,
                            random_state=seed)


def multiarm_spec(source: str, model: str, *, trees: int = 100, seed: int = 0) -> TaskSpec:
    check_choice(source, "source", SOURCES)
    check_choice(model, "model", MULTIARM_MODELS)
    return TaskSpec.make(TASK, {"source": source, "model": model, "trees": int(trees),
                                "seed": int(seed)},
                         label=f"{model} · {SOURCES[source][0]} · {trees} trees")


def multiarm_task(params: dict, *, inputs: dict, store: Any,
                  progress: Callable[[float, str], None]) -> tuple[dict, dict]:
    """The worker's entry point (see :mod:`core.runs.tasks`)."""
    from core.models import PerArmUplift

    progress(0.0, "loading the data…")
    data = load_multiarm(params["source"])
    cls, extra = MULTIARM_MODELS[params["model"]]
    if "0/1 only" in params["model"] and data.outcome_kind != "binary":
        raise ValueError(f"{params['model']} needs a 0/1 outcome; this outcome is "
                         "continuous — pick Two-model or Transformed outcome.")
    tr, te = split_rows(data.t, params["seed"])
    model = PerArmUplift(cls, {"n_estimators": params["trees"], "learning_rate": 0.1,
                               "num_threads": 1, **extra}, random_state=params["seed"])
    t0 = time.perf_counter()
    model.fit(data.X.iloc[tr], data.y[tr], data.t[tr],
              callback=lambda i, total: progress(i / total, f"round {i}/{total}"))
    tau = model.predict(data.X.iloc[te])
    frame = pd.DataFrame({"y": data.y[te].astype(np.float64), "t": data.t[te]})
    for k in range(tau.shape[1]):
        frame[f"tau_{k + 1}"] = tau[:, k]
    meta = {"source": params["source"], "model": params["model"], "arms": list(data.arms),
            "design": [float(v) for v in data.design], "outcome": data.outcome_kind,
            "fit_seconds": time.perf_counter() - t0,
            "cost": None if data.cost is None else [float(c) for c in data.cost]}
    return meta, {"test": frame}


def policy_table(test: pd.DataFrame, arms: list[str], design: list[float],
                 cost: np.ndarray) -> pd.DataFrame:
    """IPW value ± SE of the best-arm rule, every single arm and a random arm, each with its
    mean cost and net value (value − cost) per customer."""
    from core.evaluation import best_arm_policy, policy_value

    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    tau = test[[f"tau_{k}" for k in range(1, len(arms))]].to_numpy()
    prop = np.tile(np.asarray(design), (len(y), 1))
    full_cost = np.r_[0.0, cost]
    rng = np.random.default_rng(0)
    policies = {"best arm per customer (model)": best_arm_policy(tau, cost),
                **{f"everyone: {a}": np.full(len(y), k) for k, a in enumerate(arms)},
                "random arm": rng.integers(0, len(arms), len(y))}
    rows = []
    for name, pi in policies.items():
        value, se = policy_value(pi, y, t, prop)
        spend = float(full_cost[pi].mean())
        shares = np.bincount(pi, minlength=len(arms)) / len(y)
        rows.append({"policy": name, "value": value, "± SE": se, "cost": spend,
                     "net value": value - spend,
                     "arm shares": " / ".join(f"{s:.0%}" for s in shares)})
    return pd.DataFrame(rows).set_index("policy")
