"""Benchmark: LightGBM training time with UpRank's λ-objectives vs LightGBM's own lambdarank.

Run:  .venv/bin/python -m bench.objective_speed [--trees 500 | --quick] [--threads 1]
      [--subsample 3000] [--skip-exact] [--seed 0] [--repeats 3]
      [--backend auto|numba|numpy] [--profile | --decompose]

Data: Hillstrom, "Womens E-Mail" (t = 1) vs "No E-Mail" (t = 0), outcome ``visit``; the text
columns (history_segment, zip_code, channel) one-hot encoded; a seeded 70 % training split
(29,885 rows).  Every run below trains on those rows with the same number of trees, learning
rate 0.01, 31 leaves, ``--threads`` threads (default 1: the numbers are per core), so the
times differ only by the objective:

* **floor**: a trivial custom objective (``grad = pred − label``, ``hess = 1``) fitting the
  Rel labels: tree building alone, the least any custom objective can cost;
* **outcome floor**: the same trivial objective fitting the outcome (visit, 0/1) instead.
  Tree building costs depend on the gradients (through the splits they lead to): on
  this data fitting the outcome takes 20–26 % longer than fitting the Rel or Abs1 labels, and
  longer than LightGBM spends on PCG's own gradients (``--decompose``), so the Rel floor is
  the reference of every ratio and this row shows what a floor on the outcome would say;
* **lambdarank (trunc 30)**: LightGBM's built-in ``lambdarank`` at its default
  ``lambdarank_truncation_level`` (30; NDCG pairs whose upper row is in the top 30).  It needs
  integer labels ≥ 0 and queries of ≤ 10,000 rows, so it gets the paper's Abs3 labels
  (TR 3, CNR 2, TNR 1, CR 0) and the joint query is cut into 3 contiguous chunks of ≤ 10,000
  rows (the training rows are in random order, so the chunks are random thirds);
* **PCG / AUC / MAUC binned**: ``core.objectives.lambdas.lightgbm_objective`` with
  ``method="binned"`` on ONE joint query of all rows: PCG with the Rel labels (1/|T|, 0,
  −1/|C|, 0) and with Abs1 (TR and CNR relevant, the flipped label; the default labels of
  ``LambdaMARTUplift``), AUC with Abs1, MAUC with Abs3;
* **LambdaMARTUplift.fit**: the model a user (or an outside check) calls — PCG, one joint
  query, Abs1 labels, binned — timed as a whole, its LightGBM Dataset included;
* on a random **subsample** (``--subsample`` rows, one query; default 3,000 because the exact
  objective costs ``O(n²)`` numpy work per tree): the floor again, built-in lambdarank at
  full depth (truncation = all rows) and our PCG with ``method="exact"``.

Printed: seconds, milliseconds per tree, the ratio to the floor and to built-in lambdarank
(full-data rows against the full-data floor and lambdarank at truncation 30; subsample rows
against the subsample floor and full-depth lambdarank), the one-time warm-up of the kernel
back-end (numba's import and compilation, or its cache load; paid before the timed runs, as a
long-lived training worker pays it once), the agreement of the exact and
binned gradients on the 3,000-row subsample query (at the trained PCG model's scores), and
the training ranking's joint relative AUUC (PCG/n with Rel labels) as a sanity check.  On a
shared machine one training's time varies by ±30 % from run to run, so every configuration
runs ``--repeats`` times (default 3), in rounds, and the fastest of each is reported.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

from core.evaluation import relevance_labels
from core.models.lambdamart import LambdaMARTUplift
from core.objectives import _compiled as _lambda_compiled
from core.objectives._plan import Plan
from core.objectives.lambdas import lambda_gradients, lightgbm_objective
from bench._report import bench_parser

HILLSTROM = ROOT.parent / "shared" / "data" / "hillstrom.csv"
CATEGORICAL = ["history_segment", "zip_code", "channel"]
CHUNK = 10_000  # LightGBM's lambdarank refuses queries of more rows


def load(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training split of Hillstrom (womens e-mail vs no e-mail, visit): X, y, t."""
    frame = pd.read_csv(HILLSTROM)
    frame = frame[frame["segment"].isin(["Womens E-Mail", "No E-Mail"])].reset_index(drop=True)
    t = (frame["segment"] == "Womens E-Mail").to_numpy(np.int64)
    y = frame["visit"].to_numpy(np.int64)
    features = frame.drop(columns=["segment", "visit", "conversion", "spend"])
    x = pd.get_dummies(features, columns=CATEGORICAL, dtype=np.float64).to_numpy(np.float64)
    train = np.random.default_rng(seed).permutation(len(frame))[: int(round(0.7 * len(frame)))]
    return x[train], y[train], t[train]


def labels(y: np.ndarray, t: np.ndarray, which: str) -> np.ndarray:
    """Relevance labels (SPEC §3), from :func:`core.evaluation.relevance_labels`."""
    return relevance_labels(y, t, labels=which)


def joint_auuc(score: np.ndarray, rel: np.ndarray) -> float:
    """PCG(n)/n with Rel labels = the joint relative AUUC of the ranking (SPEC §3)."""
    order = np.argsort(-score, kind="stable")
    n = len(rel)
    return float(np.sum(rel[order] * (n - np.arange(n))) / n)


def trivial(preds: np.ndarray, data: lgb.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The tree-building floor: squared error with unit hessian."""
    return preds - data.get_label(), np.ones_like(preds)


def warm_up_kernels() -> float:
    """Seconds to import and compile (or load from cache) every kernel the runs use."""
    start = time.perf_counter()
    scores = np.linspace(0.0, 1.0, 600)
    labels_ = np.tile([0.0, 1.0, 2.0], 200)
    for metric in ("pcg", "auc", "mauc"):
        for method in ("binned", "exact"):
            lambda_gradients(scores, labels_, metric=metric, method=method)
    return time.perf_counter() - start


def fit_model(base: dict, x: np.ndarray, y: np.ndarray, t: np.ndarray,
              trees: int) -> tuple[float, lgb.Booster]:
    """Seconds of ``LambdaMARTUplift(query="joint", labels="abs1").fit`` with the bench's
    LightGBM settings (its Dataset construction included), and its booster."""
    model = LambdaMARTUplift("pcg", query="joint", labels="abs1", method="binned",
                             n_estimators=trees, learning_rate=base["learning_rate"],
                             num_leaves=base["num_leaves"], num_threads=base["num_threads"],
                             random_state=base["seed"])  # (always deterministic)
    start = time.perf_counter()
    model.fit(x, y, t)
    return time.perf_counter() - start, model.booster_


def train(params: dict, x: np.ndarray, label: np.ndarray, group: list[int],
          trees: int) -> tuple[float, lgb.Booster]:
    data = lgb.Dataset(x, label, group=group, free_raw_data=False).construct()
    start = time.perf_counter()
    booster = lgb.train(params, data, num_boost_round=trees)
    return time.perf_counter() - start, booster


#: Phases of the compiled PCG objective, timed inside LightGBM by ``--profile``: the
#: module that calls each function, the function's name, and its label.
PHASES = (
    ("plan", "_sort_compiled", "sort of the scores (bucket sort, or packed keys)"),
    ("np", "take", "classes in rank order (gather)"),
    ("nb", "bin_moments", "bin pass (moments per score bin)"),
    ("nb", "fft_inputs", "FFT inputs"),
    ("fft", "rfft", "FFT"),
    ("nb", "fft_combine", "FFT products"),
    ("fft", "irfft", "inverse FFT"),
    ("nb", "rows_signed", "row pass (each row's λ and curvature)"),
    ("nb", "scatter", "scatter to row order (float32)"),
)


def profile_rounds(x: np.ndarray, rel: np.ndarray, base: dict, trees: int) -> dict[str, float]:
    """Microseconds per round of each phase of the binned PCG objective inside LightGBM.

    Each phase function is wrapped by a timer for one training run (restored afterwards);
    "rest of the objective" is the objective's own Python (validation, dispatch), and
    "LightGBM" everything outside the objective call (tree building and its callback).
    The timers add about 1 µs per call.
    """
    import contextlib
    from unittest import mock

    import scipy.fft

    owners = {"nb": _lambda_compiled.compiled(), "np": np, "plan": Plan, "fft": scipy.fft}
    spent = {label: 0.0 for *_, label in PHASES}

    def timed(func, label):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - start
        return wrapper

    objective = lightgbm_objective("pcg", method="binned")
    in_objective = [0.0]

    def outer(preds, data):
        start = time.perf_counter()
        try:
            return objective(preds, data)
        finally:
            in_objective[0] += time.perf_counter() - start

    data = lgb.Dataset(x, rel, group=[len(rel)], free_raw_data=False).construct()
    with contextlib.ExitStack() as stack:
        for owner, name, label in PHASES:
            module = owners[owner]
            stack.enter_context(mock.patch.object(module, name, timed(getattr(module, name),
                                                                      label)))
        start = time.perf_counter()
        lgb.train({**base, "objective": outer}, data, num_boost_round=trees)
        total = time.perf_counter() - start
    out = {label: sec / trees * 1e6 for label, sec in spent.items()}
    out["rest of the objective (Python)"] = (in_objective[0] - sum(spent.values())) / trees * 1e6
    out["LightGBM (trees, callback)"] = (total - in_objective[0]) / trees * 1e6
    return out


def decompose(x: np.ndarray, label: np.ndarray, base: dict, trees: int,
              repeats: int) -> dict[str, float]:
    """Milliseconds per round of LambdaMART-PCG split into what LightGBM does and what the
    objective does, each timed without the other (one training varies by ±30 % here, so
    comparing two whole trainings cannot resolve a 10 % change in the objective).

    One training of binned PCG records, every round, the scores LightGBM passed the objective
    and the gradients it returned.  Then, ``repeats`` times in rounds: the floor (trivial
    objective); **LightGBM on PCG's gradients** — a custom objective that returns the
    recorded gradients, so LightGBM builds the same trees as in the PCG training and only
    the objective's cost is missing; and **the objective alone** — a fresh objective called
    on the recorded scores, round by round, outside LightGBM.  Each is the fastest of its
    ``repeats`` (the objective: per round).  ``floor × 1.5 − LightGBM on PCG's gradients`` is
    what a 1.5× target leaves the objective.
    """
    record: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    objective = lightgbm_objective("pcg", method="binned")

    def recording(preds, data):
        grad, hess = objective(preds, data)
        record.append((preds.copy(), grad.copy(), hess.copy()))
        return grad, hess

    train({**base, "objective": recording}, x, label, [len(label)], trees)

    def replaying() -> Callable:
        rounds = iter(record)

        def replay(preds, data):
            _, grad, hess = next(rounds)
            return grad, hess
        return replay

    best = {"floor": np.inf, "lightgbm": np.inf}
    per_round = np.full(trees, np.inf)
    data = lgb.Dataset(x, label, group=[len(label)], free_raw_data=False).construct()
    for _ in range(repeats):
        best["floor"] = min(best["floor"], train({**base, "objective": trivial}, x, label,
                                                 [len(label)], trees)[0])
        best["lightgbm"] = min(best["lightgbm"], train({**base, "objective": replaying()}, x,
                                                       label, [len(label)], trees)[0])
        fresh = lightgbm_objective("pcg", method="binned")
        for r, (preds, _, _) in enumerate(record):
            start = time.perf_counter()
            fresh(preds, data)
            per_round[r] = min(per_round[r], time.perf_counter() - start)
    return {"floor": best["floor"] / trees * 1e3, "lightgbm": best["lightgbm"] / trees * 1e3,
            "objective": float(per_round.mean()) * 1e3}


def main(argv: list[str] | None = None) -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="100 trees")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--subsample", type=int, default=3000)
    parser.add_argument("--skip-exact", action="store_true",
                        help="skip the O(n²) exact run (about 0.3–0.5 s per tree at 3,000 rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each configuration, in rounds; the fastest is reported")
    parser.add_argument("--backend", choices=("auto", *_lambda_compiled.BACKENDS),
                        default="auto", help="λ-kernel back-end (auto: numba when installed)")
    parser.add_argument("--decompose", action="store_true",
                        help="only LightGBM's and the objective's share of a PCG round, each "
                             "timed without the other (recorded rounds replayed)")
    parser.add_argument("--profile", action="store_true",
                        help="only the per-phase profile of binned PCG inside LightGBM (numba)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    trees = 100 if args.quick else args.trees
    _lambda_compiled.BACKEND = args.backend
    warm_up = warm_up_kernels()

    x, y, t = load(args.seed)
    n = len(y)
    rel, abs1, abs3 = (labels(y, t, w) for w in ("rel", "abs1", "abs3"))
    chunks = [CHUNK] * (n // CHUNK) + ([n % CHUNK] if n % CHUNK else [])
    sub = np.sort(np.random.default_rng(args.seed + 1).choice(n, args.subsample, replace=False))
    xs, rel_s, abs3_s = x[sub], labels(y[sub], t[sub], "rel"), abs3[sub]
    base = {"metric": "None", "verbose": -1, "num_threads": args.threads,
            "learning_rate": 0.01, "num_leaves": 31, "deterministic": True, "seed": args.seed}

    if args.decompose:
        print(f"## A round of LambdaMART-PCG, LightGBM and the objective apart ({trees} trees, "
              f"{args.threads} thread(s), {n:,} Hillstrom rows, one joint query; fastest of "
              f"{args.repeats})\n")
        print("| labels | floor ms | LightGBM on PCG's gradients ms (× floor) | objective "
              "alone ms (× floor) | sum × floor | left for the objective at 1.5× |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, label in (("Rel", rel), ("Abs1", abs1)):
            ms = decompose(x, label, base, trees, args.repeats)
            floor = ms["floor"]
            print(f"| {name} | {floor:.3f} | {ms['lightgbm']:.3f} ({ms['lightgbm'] / floor:.2f}) "
                  f"| {ms['objective']:.3f} ({ms['objective'] / floor:.2f}) | "
                  f"{(ms['lightgbm'] + ms['objective']) / floor:.2f} | "
                  f"{1.5 * floor - ms['lightgbm']:.3f} ms |")
        return

    if args.profile:
        if _lambda_compiled.backend() != "numba":
            parser.error("--profile times the numba kernels; numba is not available")
        phases = profile_rounds(x, rel, base, trees)
        total = sum(phases.values())
        print(f"## Where a round of LambdaMART-PCG goes ({trees} trees, {args.threads} "
              f"thread(s), {n:,} Hillstrom rows, one joint query)\n")
        print("| phase | µs per round | share |")
        print("|---|---:|---:|")
        for label, micro in phases.items():
            print(f"| {label} | {micro:.0f} | {micro / total:.0%} |")
        print(f"| **round** | {total:.0f} | 100% |")
        return

    runs = [  # name, data part, query layout, labels, params, X, label, group
        ("floor (trivial objective)", "full", "1 × all", "Rel", {"objective": trivial},
         x, rel, [n]),
        ("outcome floor (trivial objective)", "full", "1 × all", "visit",
         {"objective": trivial}, x, y.astype(np.float64), [n]),
        ("lambdarank, trunc 30 (built-in)", "full", f"{len(chunks)} chunks ≤ 10k", "Abs3",
         {"objective": "lambdarank"}, x, abs3, chunks),
        ("PCG binned (ours)", "full", "1 × all", "Rel",
         {"objective": ("pcg", "binned")}, x, rel, [n]),
        ("PCG binned, Abs1 labels (ours)", "full", "1 × all", "Abs1",
         {"objective": ("pcg", "binned")}, x, abs1, [n]),
        ("AUC binned (ours)", "full", "1 × all", "Abs1",
         {"objective": ("auc", "binned")}, x, abs1, [n]),
        ("MAUC binned (ours)", "full", "1 × all", "Abs3",
         {"objective": ("mauc", "binned")}, x, abs3, [n]),
        ("LambdaMARTUplift.fit (PCG, Abs1)", "full", "1 × all", "Abs1",
         {"objective": "model"}, x, abs1, [n]),
        ("floor (trivial objective)", "sub", "1 × sub", "Rel", {"objective": trivial},
         xs, rel_s, [len(sub)]),
        ("lambdarank, full depth (built-in)", "sub", "1 × sub", "Abs3",
         {"objective": "lambdarank", "lambdarank_truncation_level": len(sub)},
         xs, abs3_s, [len(sub)]),
    ]
    if not args.skip_exact:
        runs.append(("PCG exact (ours)", "sub", "1 × sub", "Rel",
                     {"objective": ("pcg", "exact")},
                     xs, rel_s, [len(sub)]))

    # every run ``--repeats`` times, in rounds (floor, lambdarank, ours, floor, ...), and the
    # fastest of each: the least disturbed by the machine's other load (as timeit does);
    # ours get a fresh objective each time (its set-up is part of the training time)
    best: dict[tuple[str, str], float] = {}
    boosters = {}
    for rep in range(args.repeats):
        for name, part, layout, lab, extra, xx, label, group in runs:
            if extra["objective"] == "model":
                seconds, booster = fit_model(base, xx, y, t, trees)
            else:
                if isinstance(extra["objective"], tuple):
                    metric, method = extra["objective"]
                    extra = {"objective": lightgbm_objective(metric, method=method)}
                seconds, booster = train({**base, **extra}, xx, label, group, trees)
            best[name, part] = min(best.get((name, part), np.inf), seconds)
            boosters[name, part] = booster
            print(f"  {rep + 1}/{args.repeats} {name:36s} {part:4s} {seconds:8.2f} s",
                  file=sys.stderr)
    results = [(name, part, layout, lab, best[name, part])
               for name, part, layout, lab, *_ in runs]

    ref = {(part, kind): sec for name, part, _, _, sec in results
           for kind in ("floor", "lambdarank") if name.startswith(kind)}
    print(f"\n## λ-objective speed inside LightGBM ({trees} trees, {args.threads} thread(s), "
          f"lr 0.01, 31 leaves; fastest of {args.repeats} runs each, in rounds)\n")
    print(f"Hillstrom womens vs no e-mail, visit: {n:,} training rows, {x.shape[1]} features; "
          f"subsample {len(sub):,} rows. numpy {np.__version__}, LightGBM {lgb.__version__}, "
          f"{platform.processor() or platform.machine()}. λ-kernel back-end: "
          f"{_lambda_compiled.backend()} (one-time warm-up before the timed runs: "
          f"{warm_up:.2f} s).\n")
    print("| run | rows | queries | labels | seconds | ms / tree | × floor | × lambdarank |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for name, part, layout, lab, sec in results:
        rows = n if part == "full" else len(sub)
        print(f"| {name} | {rows:,} | {layout} | {lab} | {sec:.2f} | {sec / trees * 1e3:.1f} | "
              f"{sec / ref[part, 'floor']:.2f} | {sec / ref[part, 'lambdarank']:.2f} |")
    print("\n(× lambdarank: full-data rows against lambdarank at truncation 30, subsample rows "
          "against full-depth lambdarank on the subsample.)\n")

    # agreement of the two engines on the subsample query, at realistic (trained) scores
    scores = boosters["PCG binned (ours)", "full"].predict(xs, raw_score=True)
    print(f"### exact vs binned on one {len(sub):,}-row query (trained PCG model's scores, "
          f"spread {np.ptp(scores):.3f})\n")
    print("| metric | labels | cosine(grad) | max rel err grad | max rel err hess |")
    print("|---|---|---:|---:|---:|")
    for metric, lab, yy in (("pcg", "Rel", rel_s), ("auc", "Abs1", abs1[sub]),
                            ("mauc", "Abs3", abs3_s)):
        ge, he = lambda_gradients(scores, yy, metric=metric, method="exact")
        gb, hb = lambda_gradients(scores, yy, metric=metric, method="binned")
        cosine = ge @ gb / (np.linalg.norm(ge) * np.linalg.norm(gb))
        print(f"| {metric} | {lab} | {cosine:.10f} | {np.abs(ge - gb).max() / np.abs(ge).max():.1e}"
              f" | {np.abs(he - hb).max() / np.abs(he).max():.1e} |")

    print("\n### training-ranking joint relative AUUC (PCG/n, Rel labels; sanity check)\n")
    print("| run | AUUC |")
    print("|---|---:|")
    for name in ("lambdarank, trunc 30 (built-in)", "PCG binned (ours)", "AUC binned (ours)",
                 "MAUC binned (ours)"):
        print(f"| {name} | {joint_auuc(boosters[name, 'full'].predict(x), rel):.5f} |")
    seconds = {(nm, p): s for nm, p, _, _, s in results}
    pcg = seconds["PCG binned (ours)", "full"]
    fit = seconds["LambdaMARTUplift.fit (PCG, Abs1)", "full"]
    outcome = seconds["outcome floor (trivial objective)", "full"]
    print(f"\nTargets: binned PCG ≤ 1.5× lambdarank (trunc 30): "
          f"{pcg / ref['full', 'lambdarank']:.2f}×; ≤ 1.5× the floor: "
          f"{pcg / ref['full', 'floor']:.2f}× (Rel labels), "
          f"{fit / ref['full', 'floor']:.2f}× (LambdaMARTUplift.fit, Abs1); against the "
          f"outcome floor {pcg / outcome:.2f}× and {fit / outcome:.2f}×.")


if __name__ == "__main__":
    main()
