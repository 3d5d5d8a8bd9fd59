r"""Benchmark: AMM-rank and its baselines under the paper's Table 1 protocol (Djuric et al. 2014).

Run::

    nice -n 10 .venv/bin/python -m bench.label_ranking --quick   # 5k users, L = 20, 3 folds
    .venv/bin/python -m bench.label_ranking                      # 20k and 200k users, L = 50

The paper's Yahoo ad-click data (3.3M users) is not public, so the protocol runs on the
seeded ad-click simulator of :mod:`core.label_ranking.data` (the paper's feature blocks, with
and without the ad-view block "adv") and on complete rankings derived from scikit-learn's
iris / wine / digits (Cheng et al. 2009).  k-fold cross validation (5 folds; ``--quick``: 3)
through :func:`core.runs.label_runs.run_experiment` — the code path the app's Label ranking
page runs, with the paper's tuning: in every fold λ (AMM-rank, AMM) and C (LR, PW-LR) are
picked on 20 % of the fold's training users held out and refitted on all of them
(``--fixed``: λ = 1e-4, C = 1 everywhere instead).  Reported: ε_dis mean ± sd over folds per
method and feature set with the paper's Yahoo numbers beside (for the ranking of methods, not
to be matched), the λ or C chosen in each fold, seconds per fold (tuning, final fit), and
AMM-rank's fit / predict seconds at 200k users × ~400 features × 50 labels (targets ≤ 60 s /
≤ 5 s for 100k predictions).  The 200k run trains the pairwise model only with ``--full``
(1,225 logistic models per fold).
"""

from __future__ import annotations

import time

import numpy as np

from bench._report import md_table, publish, report_parser, run_timed
from core.runs.label_runs import (FIXED, PAPER_TABLE1, LabelExperiment, make_data,
                                  run_experiment)


def _table(config: LabelExperiment, data, title: str) -> str:
    t0 = time.perf_counter()
    meta, frames = run_experiment(config, data)
    wall = time.perf_counter() - t0
    t1 = frames["table1"]
    cols = ["tune_s", "fit_s", "predict_s"]
    timing = frames["timing"].groupby(["method", "features"])[cols].mean()
    rows = []
    for _, r in t1.iterrows():
        tune, fit, pred = timing.loc[(r["method"], r["features"])]
        paper = r["paper (Yahoo)"]
        rows.append([r["method"], r["features"], f"{r['eps_dis']:.4f} ± {r['sd']:.4f}",
                     "—" if not np.isfinite(paper) else f"{paper:.4f}",
                     r["chosen per fold"] or "—", f"{tune:.2f}", f"{fit:.2f}", f"{pred:.2f}"])
    head = (f"### {title}\n\n{meta['n_rows']:,} users, {meta['n_labels']} labels, features "
            f"{meta['feature_sets']}, {meta['n_folds']}-fold CV, wall {wall:.0f} s\n\n")
    return head + md_table(["method", "features", "ε_dis (mean ± sd)", "paper (Yahoo)",
                            "λ / C per fold", "tune s / fold", "fit s / fold",
                            "predict s / fold"], rows)


def _amm_speed(n: int, labels: int, seed: int) -> str:
    import core.label_ranking as lr

    data = make_data("ad_clicks", {"n_users": n, "n_labels": labels, "random_state": seed})
    X, Y = np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)
    model = lr.AMMRank(random_state=seed)
    t0 = time.perf_counter()
    model.fit(X, Y)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.predict(X[:100_000])
    pred = time.perf_counter() - t0
    return (f"AMM-rank speed: fit {X.shape[0]:,} users × {X.shape[1]} features × {labels} "
            f"labels (5 epochs) in {fit:.1f} s (target ≤ 60 s); predict "
            f"{min(100_000, X.shape[0]):,} users in {pred:.2f} s (target ≤ 5 s).")


def main() -> None:
    ap = report_parser(__doc__, quick="5k users, L = 20, 3 folds (a few minutes)",
                       data_dir="unused (the data are generated)")
    ap.add_argument("--full", action="store_true", help="also PW-LR at 200k users")
    ap.add_argument("--fixed", action="store_true",
                    help="λ = 1e-4 (BudgetedSVM) and C = 1 everywhere, no tuning")
    args = ap.parse_args()
    seed = args.seed
    fixed = FIXED if args.fixed else {}
    parts = ["# Label ranking (Table 1 protocol)\n",
             "Paper (Yahoo, ε_dis without / with ad views): " + ", ".join(
                 f"{m} {a:.4f}/{b:.4f}" for m, (a, b) in PAPER_TABLE1.items())]
    if args.quick:
        sizes = [(5_000, 20, 3)]
    else:
        sizes = [(20_000, 50, 5), (200_000, 50, 5)]
    for n, labels, folds in sizes:
        methods = tuple(m for m in ("AMM-rank", "AMM", "Central-Mal", "AG-Mal", "IB-Mal", "LR",
                                    "PW-LR") if n <= 20_000 or args.full or m != "PW-LR")
        config = LabelExperiment("ad_clicks", (("n_labels", labels), ("n_users", n),
                                               ("random_state", seed)),
                                 methods=methods, n_folds=folds, seed=seed, **fixed)
        data = make_data("ad_clicks", dict(config.generator_args))
        parts.append(_table(config, data, f"Simulated ad clicks, {n:,} users"))
    for name in ("iris", "wine") if args.quick else ("iris", "wine", "digits"):
        config = LabelExperiment("sklearn", (("name", name), ("random_state", seed)),
                                 methods=("AMM-rank", "Central-Mal", "IB-Mal", "LR", "PW-LR"),
                                 n_folds=5, seed=seed, **fixed)
        parts.append(_table(config, make_data("sklearn", dict(config.generator_args)),
                            f"scikit-learn {name} (complete rankings)"))
    parts.append(_amm_speed(20_000 if args.quick else 200_000, 50, seed))
    publish("\n\n".join(parts), args.out)


if __name__ == "__main__":
    run_timed(main)
