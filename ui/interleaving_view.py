"""Streamlit-side helpers of the Interleaving page: frozen configs, cached worlds and
simulations, and a background job with progress and cancel.  Numerical work is in ``core``.

Progress and cancel
-------------------
"Run simulation" submits a :class:`SimJob` to one process-wide worker thread
(:func:`_executor`, one simulation at a time for the whole app, so two browser tabs never
compete for the CPU) and keeps the job in ``st.session_state``.  The worker calls
:func:`run_simulation`, a ``st.cache_data`` function keyed on the frozen :class:`SimConfig`;
the core's ``progress`` callback (:meth:`SimJob._progress`) stores the fraction done and
raises :class:`Cancelled` once the Cancel button has set the job's flag, which stops
``simulate_grid`` after its current block of repetitions and user count (about a second of
work at most; a dataset world's outcome models, fitted once per world, finish first) and
caches nothing.
The page only reads the job: a fragment re-drawn every half second shows the progress bar
and reruns the page when the job has finished.  The worker makes no ``st`` calls, so
nothing is recorded for cache replay, and a rerun or a change of page never interrupts it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core.data.datasets import ABData, DataError
from core.interleaving import (
    METHODS,
    PAPER_USER_COUNTS,
    PRESETS,
    bias_table,
    false_judgment_rates,
    make_comparison,
    make_recommendation_world,
    simulate_grid,
    targeting_world_from_ab,
)

log = logging.getLogger("uprank")

NAMES = {"ab_total": "AB-total", "ab_list": "AB-list", "epi_rct": "EPI-RCT",
         "cbi_rct": "CBI-RCT", "cbi_ips": "CBI-IPS", "epi_ips": "EPI-IPS"}
"""Display names of the methods (Sato 2021, Table 2)."""
PRESET, DATASET = "preset", "dataset"
TABLE2_USERS = 1000  # the paper's Table 2 is at 1000 users


class Cancelled(Exception):
    """Raised by a job's progress callback to stop a simulation the user cancelled."""


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


@st.cache_data(show_spinner=False, max_entries=8)
def build_world(spec: WorldSpec, _data: ABData | None, _scores: tuple | None = None):
    """The world's Table-1 statistics and the two rankers' lists (a ``Comparison``)."""
    if spec.source == PRESET:  # as core.interleaving.worlds.preset_comparison (and bench/interleaving.py)
        rng = np.random.default_rng(spec.seed)
        world = make_recommendation_world(preset=spec.name, random_state=rng)
        comp = make_comparison(world, spec.ranker_a, spec.ranker_b, n=spec.n,
                               noise_a=spec.noise_a, noise_b=spec.noise_b, random_state=rng)
        la, lb = comp.label_a, comp.label_b
    else:
        world, comp = targeting_world_from_ab(feature_matrix(_data), _data.y, _data.t, *_scores,
                                              pool_size=spec.pool_size, n=spec.n,
                                              random_state=spec.seed)
        la, lb = spec.ranker_a, spec.ranker_b
    la, lb = f"A: {la}", f"B: {lb}"
    return world.table1({la: comp.lists_a, lb: comp.lists_b}), comp, la, lb


@st.cache_data(show_spinner=False, max_entries=16)
def run_simulation(config: SimConfig, _data: ABData | None, _scores: tuple | None = None,
                   _progress=None) -> SimResult:
    """Simulated experiments on every (user count, method); ``_progress(fraction, text)``."""
    report = _progress or (lambda *_: None)
    start = time.perf_counter()
    report(0.0, "Building the world…" + (" (fitting the outcome models)"
                                          if config.world.source == DATASET else ""))
    table1, comp, la, lb = build_world(config.world, _data, _scores)
    report(0.0, "Simulating…")
    grid = simulate_grid(comp, methods=config.methods, user_counts=config.user_counts,
                         n_reps=config.n_reps, random_state=config.seed,
                         progress=lambda f: report(f, "Simulating…"))
    grid = {c: {NAMES[m]: v for m, v in res.items()} for c, res in grid.items()}
    truth = comp.truth
    bias = pd.concat({c: bias_table(res, truth) for c, res in grid.items()}, names=["n_users"])
    return SimResult(la, lb, truth, comp.lists_a.shape[0], table1, bias.reset_index(),
                     false_judgment_rates(grid, truth), time.perf_counter() - start)


class SimJob:
    """One simulation running in the background; the page polls it (thread-safe reads)."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.state = "queued"  # queued -> running -> done | failed | cancelled
        self.fraction, self.text = 0.0, "Waiting for another simulation to finish…"
        self.result: SimResult | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._done = threading.Event()

    @property
    def running(self) -> bool:
        return self.state in ("queued", "running")

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def _progress(self, fraction: float, text: str) -> None:
        if self._cancel.is_set():
            raise Cancelled
        self.fraction, self.text = float(fraction), text

    def _run(self, data: ABData | None, scores: tuple | None) -> None:
        try:
            self.state = "running"
            self._progress(0.0, "Starting…")
            self.result = run_simulation(self.config, data, scores, _progress=self._progress)
            self.state = "done"
        except Cancelled:
            self.state = "cancelled"
        except (DataError, ValueError) as exc:
            self.error, self.state = str(exc), "failed"
        except Exception as exc:  # noqa: BLE001 - reported on the page, never raised
            log.exception("The interleaving simulation failed")
            self.error, self.state = f"The simulation failed: {type(exc).__name__}: {exc}", "failed"
        finally:
            self._done.set()


@st.cache_resource(show_spinner=False)
def _executor() -> ThreadPoolExecutor:
    """One worker thread for the whole app: simulations queue instead of sharing the CPU."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="uprank-interleaving")


def submit(config: SimConfig, data: ABData | None = None, scores: tuple | None = None) -> SimJob:
    """Start ``config`` in the background and return its job (cached configs finish at once)."""
    job = SimJob(config)
    _executor().submit(job._run, data, scores)
    return job


def make_config(spec: WorldSpec, methods, counts_text: str, n_reps: int, seed: int,
                data: ABData | None = None) -> tuple[SimConfig, tuple[int, ...]]:
    """The frozen config of the settings and the user counts left out (above the world's
    users); ``ValueError`` with a message for settings that cannot run."""
    if not methods:
        raise ValueError("Methods: pick at least one method to simulate.")
    counts = parse_counts(counts_text)
    most = spec.max_users(data)
    kept = tuple(c for c in counts if c <= most)
    if not kept:
        raise ValueError(f"User counts must be at most the number of users in the world "
                         f"({most:,}); got {', '.join(map(str, counts))}.")
    config = SimConfig(spec, tuple(m for m in METHODS if m in methods), kept, int(n_reps),
                       int(seed))
    return config, tuple(c for c in counts if c > most)


@st.fragment(run_every=0.5)
def watch(job: SimJob) -> None:
    """Progress bar of a running job, redrawn every half second; reruns the page when done."""
    if job.running:
        st.progress(min(1.0, job.fraction), text=f"{job.text} {job.fraction:.0%}")
    else:
        st.rerun()


def show_job(job: SimJob) -> SimResult | None:
    """Progress and Cancel of a running job, or how it ended; its result once done."""
    if job.running:
        st.button("Cancel", key="il_cancel", on_click=job.cancel, icon=":material/cancel:")
        watch(job)
    elif job.state == "failed":
        st.error(job.error, icon=":material/error:")
    elif job.state == "cancelled":
        st.info("Simulation cancelled; nothing was stored.")
    return job.result


def paper_target(curve: pd.DataFrame) -> tuple[int, float] | None:
    """AB-total's false-judgment rate at the largest user count: the target at which the
    paper reads "AB-total needs ~30x the users of CBI-IPS" (``None`` without AB-total)."""
    ab = curve[curve["method"] == NAMES["ab_total"]].sort_values("n_users")
    if ab.empty or not 0 < ab["false_rate"].iloc[-1] < 1:
        return None
    return int(ab["n_users"].iloc[-1]), float(ab["false_rate"].iloc[-1])


PAPER_COUNTS_TEXT = ", ".join(map(str, PAPER_USER_COUNTS))
DEFAULT_METHODS = [m for m in METHODS if m != "epi_ips"]
