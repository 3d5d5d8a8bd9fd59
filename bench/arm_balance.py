r"""Benchmark: LambdaMART uplift when the arms are unbalanced — which queries, labels and query
weights still find the customers with the largest effect, on a world whose true effect is
known.

Run::

    nice -n 10 .venv/bin/python -m bench.arm_balance --quick   # 2 seeds, 150 rounds, ~1 min
    .venv/bin/python -m bench.arm_balance                      # 3 seeds, 300 rounds, ~3 min

Protocol: :func:`core.data.make_uplift_world` (its τ(x) = p₁(x) − p₀(x) known) with a treated
share of 10 %, 50 % and 90 % — the paper's §4.2 arm sizes |C| = 9|T|, |T| = |C|,
|T| = 9|C| — ``--rows`` training rows (default 30,000) per seed; every model is scored on
one test world of 100,000 rows (seed 999, treated share 50 %; only its τ is used).  Models
(LightGBM, ``--rounds`` rounds at learning rate 0.03, 1 thread, ``random_state`` = seed):

* LambdaMART-PCG, separate queries, Abs1 labels — the paper's Table 6 set-up;
* the same with Rel labels — its Table 11 set-up (eq. 26 as written);
* separate, Rel, ``query_weights="equal"`` — every query the same total weight, so the
  objective is n/2 × the separate relative AUUC whatever the arm sizes;
* joint query, Rel labels — the objective is n × the joint relative AUUC;
* Two-model (Hansotia & Rukstales 2002) as the reference learner.

Reported per treated share (mean over seeds, its standard error in brackets):

* **true AUUC**: the area under the *true* uplift curve of the test ranking,
  ``mean_k (1/n) Σ_{i ≤ k} τ_(i)`` — what targeting by the score gains, by the known τ
  (random targeting: half the mean τ; the τ ranking: the best possible);
* Spearman correlation of the score with τ.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np
from scipy import stats

from bench._report import md_table, publish, report_parser, run_timed

#: model label → (LambdaMARTUplift keywords, or None for Two-model)
MODELS = {
    "LambdaMART-PCG, separate, Abs1 (paper Table 6)": {"query": "separate", "labels": "abs1"},
    "LambdaMART-PCG, separate, Rel (eq. 26)": {"query": "separate", "labels": "rel"},
    "LambdaMART-PCG, separate, Rel, equal query weights": {
        "query": "separate", "labels": "rel", "query_weights": "equal"},
    "LambdaMART-PCG, joint, Rel": {"query": "joint", "labels": "rel"},
    "Two-model": None,
}
SHARES = (0.1, 0.5, 0.9)


def true_auuc(tau: np.ndarray, score: np.ndarray) -> float:
    """Area under the true uplift curve: ``mean_k (1/n) Σ_{i ≤ k} τ_(i)``, rows ranked by
    ``score`` (ties by row order)."""
    order = np.argsort(-np.asarray(score, dtype=np.float64), kind="stable")
    return float((np.cumsum(tau[order]) / tau.size).mean())


def fit_score(name: str, train, test_x, *, rounds: int, seed: int,
              threads: int = 1) -> np.ndarray:
    """Fit model ``name`` on ``train`` and return its scores of ``test_x``."""
    from core.models import LambdaMARTUplift, TwoModel

    keywords = MODELS[name]
    common = {"n_estimators": rounds, "learning_rate": 0.03, "num_threads": threads,
              "random_state": seed}
    model = (TwoModel(**common) if keywords is None
             else LambdaMARTUplift("pcg", **keywords, **common))
    return model.fit(train.X, train.y, train.t).predict(test_x)


def _mean_se(values: Sequence[float], digits: int) -> str:
    from core.evaluation import mean_se

    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return f"{v.mean():.{digits}f}"
    mean, se = mean_se(v)
    return f"{mean:.{digits}f} ({se:.{digits}f})"


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark, print the markdown (and write ``--out``); returns the markdown."""
    from core.data import make_uplift_world

    argv = list(sys.argv[1:] if argv is None else argv)
    ap = report_parser(__doc__, quick="2 seeds, 150 rounds",
                       data_dir="not used (the data are simulated)")
    ap.add_argument("--rows", type=int, default=30_000, help="training rows per seed")
    ap.add_argument("--test-rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=None, help="boosting rounds (default 300)")
    ap.add_argument("--seeds", type=int, default=None, help="training worlds (default 3)")
    args = ap.parse_args(argv)
    rounds = args.rounds or (150 if args.quick else 300)
    seeds = args.seeds or (2 if args.quick else 3)
    t0 = time.perf_counter()
    test = make_uplift_world(args.test_rows, random_state=999)
    random_auuc, best_auuc = test.tau.mean() / 2, true_auuc(test.tau, test.tau)
    out = [f"# LambdaMART uplift with unbalanced arms ({' '.join(argv) or 'defaults'})", "",
           f"Uplift world, {args.rows:,} training rows per seed ({seeds} seeds), "
           f"{rounds} rounds at lr 0.03; scored on {args.test_rows:,} test rows by the known τ. "
           f"True AUUC of random targeting {random_auuc:.4f}, of the τ ranking "
           f"{best_auuc:.4f}. Mean over seeds (standard error).", ""]
    worlds = {(share, seed): make_uplift_world(args.rows, random_state=seed,
                                               treated_share=share)
              for share in SHARES for seed in range(args.seed, args.seed + seeds)}
    rows = []
    for name in MODELS:
        cells = {}
        for share in SHARES:
            auuc, rho = [], []
            for seed in range(args.seed, args.seed + seeds):
                score = fit_score(name, worlds[share, seed], test.X, rounds=rounds, seed=seed,
                                  threads=args.threads)
                auuc.append(true_auuc(test.tau, score))
                rho.append(stats.spearmanr(score, test.tau)[0])
            cells[share] = (_mean_se(auuc, 4), _mean_se(rho, 2))
        rows.append([name, *(f"{a} / ρ {r}" for a, r in (cells[s] for s in SHARES))])
    header = ["model", *(f"treated {s:.0%}: true AUUC / Spearman ρ" for s in SHARES)]
    out += [md_table(header, rows), "",
            f"{time.perf_counter() - t0:.0f} s in all."]
    return publish("\n".join(out) + "\n", args.out)


if __name__ == "__main__":
    run_timed(main)
