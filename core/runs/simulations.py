"""Interleaving simulations as background tasks: the frozen settings of the Interleaving page,
the computation (world, repeated experiments, summaries) and its stored result.

The page builds a :class:`SimConfig` (:func:`make_config`), :func:`submit_simulation` queues
it on the app's :class:`~core.runs.jobs.JobRunner` (the same worker processes, queue,
progress, cancel and caching as training), the worker runs :func:`simulation_task`, and
:func:`load_simulation` reads the stored :class:`SimResult` back.  A result is keyed by the
config (a dataset world also by the data fingerprint and the two score columns' digest), so
it survives reloads and restarts.  Numerics: :mod:`core.interleaving`.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.data.abdata import ABData, DataError
from core.interleaving import (
    METHODS,
    PAPER_USER_COUNTS,
    PRESETS,
    bias_table,
    false_judgment_rates,
    preset_comparison,
    simulate_grid,
    targeting_world_from_ab,
)
from core.runs.tasks import TaskSpec

__all__ = ["DATASET", "DEFAULT_METHODS", "NAMES", "PAPER_COUNTS_TEXT", "PRESET", "TABLE2_USERS",
           "SimConfig", "SimResult", "WorldSpec", "feature_matrix", "load_simulation",
           "make_config", "paper_target", "parse_counts", "run_simulation", "scores_digest",
           "simulation_key", "simulation_task", "submit_simulation"]

NAMES = {"ab_total": "AB-total", "ab_list": "AB-list", "epi_rct": "EPI-RCT",
         "cbi_rct": "CBI-RCT", "cbi_ips": "CBI-IPS", "epi_ips": "EPI-IPS"}
"""Display names of the methods (Sato 2021, Table 2)."""
PRESET, DATASET = "preset", "dataset"
TABLE2_USERS = 1000  # the paper's Table 2 is at 1000 users
PAPER_COUNTS_TEXT = ", ".join(map(str, PAPER_USER_COUNTS))
DEFAULT_METHODS = [m for m in METHODS if m != "epi_ips"]
TASK = "core.runs.simulations:simulation_task"
#: Threads of a simulation job: the EPI and CBI designs run side by side (the same numbers as
#: one thread, :func:`~core.interleaving.simulate_grid`); the paper's grid 5.3-5.4 -> 3.4-4.0 s
#: (grocery) and 4.5 -> 2.8 s (movie) on this project's 2-core machine.
GRID_THREADS = min(2, os.cpu_count() or 1)


@dataclass(frozen=True)
class WorldSpec:
    """Everything that defines the world and the two rankers' lists (hashable)."""

    source: str  # PRESET or DATASET
    name: str  # preset key, or the dataset's fingerprint
    ranker_a: str
    ranker_b: str
    n: int = 10
    noise_a: float = 0.0
    noise_b: float = 0.0
    pool_size: int = 20
    scores_digest: str = ""  # dataset: the two score columns enter the key by content
    seed: int = 0

    def max_users(self, data: ABData | None = None) -> int:
        """Users of the world: the preset's users, or the dataset's pools of customers."""
        if self.source == PRESET:
            return PRESETS[self.name].n_users
        return 0 if data is None else data.n // max(1, self.pool_size)


@dataclass(frozen=True)
class SimConfig:
    world: WorldSpec
    methods: tuple[str, ...]
    user_counts: tuple[int, ...]
    n_reps: int
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SimConfig:
        return cls(WorldSpec(**d["world"]), tuple(d["methods"]), tuple(d["user_counts"]),
                   int(d["n_reps"]), int(d["seed"]))


@dataclass(frozen=True)
class SimResult:
    """What the page shows: Table 1, truth, bias tables for every user count, the curve."""

    label_a: str
    label_b: str
    truth: float
    users: int
    table1: pd.DataFrame
    bias: pd.DataFrame  # tidy: n_users, method, mean, sd, se, ci_low, ci_high, ...
    curve: pd.DataFrame  # false_judgment_rates output, display names in ``method``
    seconds: float

    def to_stored(self) -> tuple[dict, dict[str, pd.DataFrame]]:
        meta = {"label_a": self.label_a, "label_b": self.label_b, "truth": self.truth,
                "users": self.users, "seconds": self.seconds}
        return meta, {"table1": self.table1, "bias": self.bias, "curve": self.curve}

    @classmethod
    def from_stored(cls, meta: dict, frames: dict[str, pd.DataFrame]) -> SimResult:
        return cls(meta["label_a"], meta["label_b"], float(meta["truth"]), int(meta["users"]),
                   frames["table1"], frames["bias"], frames["curve"], float(meta["seconds"]))


def parse_counts(text: str) -> tuple[int, ...]:
    """User counts typed as "10, 20, 50": sorted, without duplicates."""
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    if not parts:
        raise ValueError("User counts: type at least one number of users, e.g. 10, 100, 1000.")
    bad = [p for p in parts if not p.isdigit() or int(p) < 1]
    if bad:
        raise ValueError(f"User counts must be positive whole numbers separated by commas; "
                         f"got {', '.join(map(repr, bad[:3]))}.")
    return tuple(sorted({int(p) for p in parts}))


def scores_digest(*scores: np.ndarray) -> str:
    h = hashlib.sha256()
    for s in scores:
        h.update(np.ascontiguousarray(s, dtype="<f8").tobytes() + b"|")
    return h.hexdigest()[:16]


def feature_matrix(data: ABData) -> np.ndarray:
    """Numeric features for the outcome models: numbers as they are, categories as codes
    (missing values stay NaN; gradient boosting handles them), other text columns left out."""
    cols = []
    for name in data.X.columns:
        s = data.X[name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cols.append(np.where(s.cat.codes.to_numpy() < 0, np.nan, s.cat.codes.to_numpy()))
        elif s.dtype.kind in "biuf":
            cols.append(s.to_numpy(dtype=float, na_value=np.nan))
    if not cols:
        raise DataError("The dataset has no numeric or categorical feature column to fit the "
                        "outcome models on.")
    return np.column_stack(cols).astype(float)


def make_config(spec: WorldSpec, methods, counts_text: str, n_reps: int, seed: int,
                data: ABData | None = None) -> tuple[SimConfig, tuple[int, ...]]:
    """The frozen config of the settings and the user counts left out (above the world's
    users); ``ValueError`` with a message for settings that cannot run."""
    if not methods:
        raise ValueError("Methods: pick at least one method to simulate.")
    if spec.n < 2 and (short := [NAMES[m] for m in ("epi_rct", "cbi_rct") if m in methods]):
        raise ValueError(f"List length 1: {' and '.join(short)} compare the two rankers' "
                         "items within one list, so they need at least 2 items per list "
                         "(every estimate would be undefined). Raise the list length or leave "
                         "them out.")
    if spec.source == PRESET and spec.n > PRESETS[spec.name].n_items:
        raise ValueError(f"List length {spec.n:,}: the {spec.name} world has "
                         f"{PRESETS[spec.name].n_items:,} items; a list can hold at most that.")
    if spec.source == DATASET and data is not None:
        if spec.pool_size > data.n:
            raise ValueError(f"Customers per pool ({spec.pool_size:,}) exceed the "
                             f"{data.n:,} customers of the data: not one user (pool) can be "
                             "formed. Lower the pool size.")
        if spec.n > spec.pool_size:
            raise ValueError(f"List length {spec.n:,}: each ranker contacts the top n of a "
                             f"pool of {spec.pool_size:,} customers, so n can be at most the "
                             "pool size. Lower the list length or raise the pool size.")
    counts = parse_counts(counts_text)
    if counts[0] < 2:
        raise ValueError("User counts must be at least 2: one user gives no spread to test "
                         "a difference with.")
    most = spec.max_users(data)
    kept = tuple(c for c in counts if c <= most)
    if not kept:
        raise ValueError(f"User counts must be at most the number of users in the world "
                         f"({most:,}); got {', '.join(map(str, counts))}.")
    config = SimConfig(spec, tuple(m for m in METHODS if m in methods), kept, int(n_reps),
                       int(seed))
    return config, tuple(c for c in counts if c > most)


def build_world(spec: WorldSpec, data: ABData | None, scores: tuple | None = None):
    """The world's Table-1 statistics, the two rankers' lists (a ``Comparison``) and labels."""
    if spec.source == PRESET:
        world, comp = preset_comparison(spec.name, n=spec.n, ranker_a=spec.ranker_a,
                                        ranker_b=spec.ranker_b, noise_a=spec.noise_a,
                                        noise_b=spec.noise_b, random_state=spec.seed)
        la, lb = comp.label_a, comp.label_b
    else:
        world, comp = targeting_world_from_ab(feature_matrix(data), data.y, data.t, *scores,
                                              pool_size=spec.pool_size, n=spec.n,
                                              random_state=spec.seed)
        la, lb = spec.ranker_a, spec.ranker_b
    la, lb = f"A: {la}", f"B: {lb}"
    return world.table1({la: comp.lists_a, lb: comp.lists_b}), comp, la, lb


def run_simulation(config: SimConfig, data: ABData | None = None, scores: tuple | None = None,
                   progress: Callable[[float, str], Any] | None = None) -> SimResult:
    """Simulated experiments on every (user count, method); ``progress(fraction, text)``."""
    report = progress or (lambda *_: None)
    start = time.perf_counter()
    report(0.0, "Building the world…" + (" (fitting the outcome models)"
                                          if config.world.source == DATASET else ""))
    table1, comp, la, lb = build_world(config.world, data, scores)
    report(0.0, "Simulating…")
    grid = simulate_grid(comp, methods=config.methods, user_counts=config.user_counts,
                         n_reps=config.n_reps, random_state=config.seed, n_jobs=GRID_THREADS,
                         progress=lambda f: report(f, "Simulating…"))
    grid = {c: {NAMES[m]: v for m, v in res.items()} for c, res in grid.items()}
    truth = comp.truth
    bias = pd.concat({c: bias_table(res, truth) for c, res in grid.items()}, names=["n_users"])
    return SimResult(la, lb, truth, comp.lists_a.shape[0], table1, bias.reset_index(),
                     false_judgment_rates(grid, truth), time.perf_counter() - start)


def _task(config: SimConfig, fingerprint: str | None) -> TaskSpec:
    world = config.world
    label = (f"Interleaving simulation: {world.ranker_a} vs {world.ranker_b}, "
             f"{len(config.user_counts)} user counts × {config.n_reps:,} repetitions")
    return TaskSpec.make(TASK, {"config": config.to_dict(), "fingerprint": fingerprint},
                         label=label)


def simulation_key(config: SimConfig, data: ABData | None = None) -> str:
    """The key :func:`submit_simulation` stores ``config``'s result under (a dataset world:
    built from ``data``), for asking whether it is stored without queueing a job."""
    if config.world.source == DATASET and data is None:
        raise ValueError("A world built from a dataset needs data=.")
    return _task(config, data.fingerprint() if config.world.source == DATASET else None).key()


def submit_simulation(runner, config: SimConfig, data: ABData | None = None,
                      scores: tuple | None = None, *, session: str | None = None) -> str:
    """Queue ``config`` on ``runner`` (a :class:`~core.runs.jobs.JobRunner`); returns the job
    id.  A dataset world hands the data (as an ``.npz`` copy in the run store) and the two
    score columns to the worker; a stored result makes the job "cached" at once."""
    fingerprint = inputs = None
    if config.world.source == DATASET:
        if data is None or scores is None:
            raise ValueError("A world built from a dataset needs data= and scores= (A, B).")
        fingerprint = runner.store.save_data(data)
        inputs = {"scores_a": np.asarray(scores[0], float), "scores_b": np.asarray(scores[1],
                                                                                    float)}
    return runner.submit_task(_task(config, fingerprint), inputs=inputs, session=session)


def simulation_task(params: dict, *, inputs: dict, store, progress) -> tuple[dict, dict]:
    """Worker side of :func:`submit_simulation` (see :mod:`core.runs.tasks`)."""
    config = SimConfig.from_dict(params["config"])
    data = scores = None
    if config.world.source == DATASET:
        data = store.load_data(params["fingerprint"])
        scores = (inputs["scores_a"], inputs["scores_b"])
    return run_simulation(config, data, scores, progress).to_stored()


def load_simulation(store, key: str) -> SimResult | None:
    """The stored result of a finished simulation job (``JobStatus.run_id``), or ``None``."""
    stored = store.load_result(key)
    return None if stored is None else SimResult.from_stored(*stored)


def paper_target(curve: pd.DataFrame) -> tuple[int, float] | None:
    """AB-total's false-judgment rate at the largest user count: the target at which the
    paper reads "AB-total needs ~30x the users of CBI-IPS" (``None`` without AB-total)."""
    ab = curve[curve["method"] == NAMES["ab_total"]].sort_values("n_users")
    if ab.empty or not 0 < ab["false_rate"].iloc[-1] < 1:
        return None
    return int(ab["n_users"].iloc[-1]), float(ab["false_rate"].iloc[-1])
