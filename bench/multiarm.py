r"""Benchmark: Hillstrom's three arms (No E-Mail, Womens E-Mail, Mens E-Mail) — per-arm uplift
models, the best-arm policy against every single arm and random, for visit and spend.

Run::

    nice -n 10 .venv/bin/python -m bench.multiarm --quick     # 100 trees, ~1 minute
    .venv/bin/python -m bench.multiarm                        # 500 trees, lr 0.01 (the paper's)

Protocol: all 64,000 rows (:func:`core.data.load_hillstrom` with ``arm="all"``), one split
70 / 30 stratified by arm (seeded).  Every model is a :class:`core.models.PerArmUplift` — one
uplift model per e-mail arm against No E-Mail, fitted on the training rows — giving an (n, 2)
matrix of predicted uplifts on the test rows.  Reported on the test rows:

* per-arm AUUC (``uplift_sep_rel``, at 30 % and 100 %: the arm's rows and the control rows
  ranked by that arm's predicted uplift);
* the inverse-propensity value of policies (:func:`core.evaluation.policy_value`, the
  designed shares 1/3 as propensities) with its standard error: the best-arm rule
  (:func:`core.evaluation.best_arm_policy`: each customer's arm with the largest predicted
  uplift above the arm's cost, else no e-mail), everyone Womens, everyone Mens, nobody, and
  a uniformly random arm;
* seconds to fit each model (both arms).

Visit is binary; spend is continuous (dollars, mostly 0), modelled by Two-model,
Transformed outcome and LambdaMART with the transformed-outcome labels.  Costs per e-mail
are 0 by default (``--cost`` sets one for both arms, in the outcome's units).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bench._report import md_table, publish, report_parser, run_timed

#: outcome → model label → (class of the per-arm model, its keywords beyond the budget)
MODELS = {
    "visit": {
        "LambdaMART-PCG per arm": ("LambdaMARTUplift", {"metric": "pcg"}),
        "Two-model per arm": ("TwoModel", {}),
        "Flipped label per arm": ("FlippedLabel", {}),
        "Transformed outcome per arm": ("TransformedOutcome", {}),
    },
    "spend": {
        "LambdaMART-PCG, transformed labels": ("LambdaMARTUplift",
                                               {"metric": "pcg", "labels": "transformed"}),
        "Two-model per arm (regression)": ("TwoModel", {}),
        "Transformed outcome per arm": ("TransformedOutcome", {}),
    },
}


def evaluate(data, tr, te, name: str, cls: str, extra: dict, *, trees: int, lr: float,
             threads: int, seed: int, cost: float) -> tuple[dict, pd.DataFrame]:
    """Fit one per-arm model and score it on the test rows with the app's own tables
    (:func:`core.runs.multiarm_runs.arm_summary`, :func:`~core.runs.multiarm_runs.policy_table`)."""
    from core.models import PerArmUplift
    from core.runs.multiarm_runs import arm_summary, policy_table

    params = {"n_estimators": trees, "learning_rate": lr, "num_threads": threads, **extra}
    t0 = time.perf_counter()
    model = PerArmUplift(cls, params, random_state=seed).fit(
        data.X.iloc[tr], data.y[tr], data.t[tr])
    seconds = time.perf_counter() - t0
    tau = model.predict(data.X.iloc[te])
    test = pd.DataFrame({"y": data.y[te].astype(np.float64), "t": data.t[te],
                         **{f"tau_{k}": tau[:, k - 1] for k in range(1, tau.shape[1] + 1)}})
    out = {"model": name, "seconds": seconds}
    for arm, row in arm_summary(test, list(data.arms)).iterrows():
        for c in (30, 100):
            out[f"AUUC@{c}% {arm}"] = row[f"AUUC@{c} %"]
    policies = policy_table(test, list(data.arms), list(data.design),
                            np.full(tau.shape[1], cost))
    best = policies.loc["best arm per customer (model)"]
    out["best-arm"] = (best["value"], best["± SE"])
    out["share per arm"] = best["arm shares"]
    return out, policies


def _vse(v: tuple[float, float], digits: int) -> str:
    return f"{v[0]:.{digits}f} ± {v[1]:.{digits}f}"


def render(results: dict, argv: Sequence[str], *, trees: int, lr: float, seconds: float) -> str:
    out = ["## UpRank — Hillstrom, three arms: per-arm uplift models and the best-arm policy",
           f"`python -m bench.multiarm {' '.join(argv)}`",
           f"All 64,000 rows, 70/30 split stratified by arm; {trees} trees, learning rate "
           f"{lr:g}; policy values are inverse-propensity estimates on the test rows "
           f"(propensity 1/3 per arm) ± one standard error. Total {seconds:.0f} s."]
    for outcome, (rows, base, arms) in results.items():
        digits = 4 if outcome == "visit" else 3
        auuc_cols = [c for c in rows[0] if c.startswith("AUUC")]
        out.append(f"### {outcome}: per-arm AUUC (uplift_sep_rel) and the best-arm policy")
        out.append(md_table(
            ["model", *auuc_cols, "best-arm value", "share: " + " / ".join(arms), "fit s"],
            [[r["model"], *(f"{r[c]:.4f}" for c in auuc_cols), _vse(r["best-arm"], digits),
              r["share per arm"], f"{r['seconds']:.1f}"]
             for r in rows]))
        out.append(md_table(["policy", f"value ({outcome} per customer)"],
                            [[k, _vse(v, digits)] for k, v in base.items()]))
    return "\n\n".join(out) + "\n"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = report_parser(__doc__, quick="100 trees, learning rate 0.1",
                       data_dir="folder holding hillstrom.csv")
    ap.add_argument("--outcomes", default="visit,spend", help="comma list of visit,spend")
    ap.add_argument("--cost", type=float, default=0.0, help="cost per e-mail (both arms)")
    ap.add_argument("--max-rows", type=int, default=None, help="subsample (smoke tests)")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark, print the markdown (and write ``--out``); returns the markdown."""
    from core.data import load_hillstrom
    from core.runs.multiarm_runs import split_rows

    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    trees, lr = (100, 0.1) if args.quick else (500, 0.01)
    t0 = time.perf_counter()
    results = {}
    for outcome in [o.strip() for o in args.outcomes.split(",") if o.strip()]:
        if outcome not in MODELS:
            raise SystemExit(f"--outcomes must be a comma list of visit,spend; got {outcome!r}.")
        data = load_hillstrom(arm="all", outcome=outcome, data_dir=args.data_dir)
        if args.max_rows:
            data = data.subset(np.random.default_rng(args.seed).choice(
                data.n, args.max_rows, replace=False))
        tr, te = split_rows(data.t, args.seed)
        fitted = [evaluate(data, tr, te, name, cls, extra, trees=trees, lr=lr,
                           threads=args.threads, seed=args.seed, cost=args.cost)
                  for name, (cls, extra) in MODELS[outcome].items()]
        policies = fitted[0][1]  # every model's table has the same single-arm rows
        base = {name: (row["value"], row["± SE"]) for name, row in policies.iterrows()
                if not name.startswith("best arm")}
        results[outcome] = ([row for row, _ in fitted], base, list(data.arms))
    text = render(results, argv, trees=trees, lr=lr, seconds=time.perf_counter() - t0)
    return publish(text, args.out)


if __name__ == "__main__":
    run_timed(main)
