r"""Benchmark: λ-AUC / λ-MAUC LambdaMART on LETOR 4.0 MQ2008 (Welleck 2016, Tables 1-2), and
the λ engine's speed against LightGBM's built-in lambdarank.

Run::

    nice -n 10 .venv/bin/python -m bench.letor --quick     # the app's "quick" preset, ~1 minute
    .venv/bin/python -m bench.letor                        # the "paper" preset (lr picked on vali)

One code path with the app: every model is trained by :func:`core.runs.ltr_runs.train_ranker`
exactly as the Ranking pages' background runs are — the preset's candidate learning rates
(LambdaMART, pointwise) or L2 strengths (linear pairwise AUC) fitted on ``train``, early
stopping on ``vali``, the candidate with the best validation score of the model's own metric
kept.  Reported on ``test``: AUC (grade > 0 vs 0), MAUC, MAP under both conventions, NDCG@10,
P-nDCG and micro / macro Precision@1..10 (:mod:`core.evaluation`), the paper's MQ2008 numbers
beside ours, and seconds per model.  Every fold found in the data directory is run (fold 1
ships in ``../shared/data``; folds 2-5 are built from MQ2008's S1..S5 files when present, see
:func:`core.data.load_mq2008`) and the table is the mean over folds, as the paper's is.

Speed: λ-MAUC and LightGBM's ``lambdarank`` on the same fold-1 training rows, 500 trees, no
early stopping, one thread, timed alternately (``--speed-reps`` each); the ratio of medians
is the one to hold under 2×.

Read before comparing with the paper:

* 51 of the 156 fold-1 test queries (and 132 of 471 training queries) have no relevant
  document.  AUC, MAUC and AP are undefined there and are left out of the means; the LETOR
  evaluation tool counts them as AP = 0, which is what the paper's MAP (~0.47) appears to
  correspond to (the paper does not say; its level matches), so both MAPs are printed.
* With a single top-k for every grade, micro and macro P@k both equal binary P@k divided by
  the number of grades (2) and differ only through queries shorter than k.  The paper plots
  P@k for Yahoo! V1 only, so there is no MQ2008 value to compare with.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench._report import md_table, publish, report_parser, run_timed
from core.data import load_mq2008, mq2008_folds_available
from core.evaluation import compare_runs, per_query_metrics, verdict
from core.runs.ltr_runs import RANKING_PRESETS, TrainedRanker, train_ranker

ROOT = Path(__file__).resolve().parents[1]
KS = tuple(range(1, 11))

# Welleck (2016), "Efficient AUC optimization for information ranking applications"
# (../shared/papers/efficient-auc-optimization-lambdamart.txt): Table 1 (MAUC) and Table 2
# (MAP) on the MQ2008 test folds, averaged over the five folds.  The linear baseline's row is
# the paper's SVM-perf (ROCArea loss).  The paper gives no MQ2008 AUC or Precision@k.
PAPER_MQ2008: dict[str, dict[str, float]] = {
    "LambdaMART λ-MAUC": {"MAUC": 0.734, "MAP": 0.474},
    "Linear pairwise AUC": {"MAUC": 0.737, "MAP": 0.458},
}
#: The models of the table (short names for ``--models``).
SHORT = {"auc": "LambdaMART λ-AUC", "mauc": "LambdaMART λ-MAUC", "ndcg": "LambdaMART λ-NDCG",
         "map": "LambdaMART λ-MAP", "lambdarank": "LightGBM lambdarank (built-in)",
         "linear": "Linear pairwise AUC", "pointwise": "Pointwise regression"}
DEFAULT_MODELS = ("auc", "mauc", "ndcg", "lambdarank", "linear", "pointwise")


def _first_queries(data, max_queries: int | None):
    if max_queries is None:
        return data
    keep = list(dict.fromkeys(np.asarray(data.qid).tolist()))[:max_queries]
    return data.subset_queries(keep)


def load_fold(fold: int = 1, data_dir: str | Path | None = None,
              max_queries: int | None = None) -> dict:
    """Train / vali / test of MQ2008 ``fold`` (optionally the first ``max_queries`` queries
    of each split, for smoke tests)."""
    splits = load_mq2008(fold, data_dir=data_dir, allow_download=False)
    return {s: _first_queries(d, max_queries) for s, d in splits.items()}


def test_metrics(test, score: np.ndarray) -> dict[str, float]:
    """Means over the test queries of :func:`core.evaluation.per_query_metrics` (undefined
    queries left out, except the LETOR MAP where they count 0) and P@1..10."""
    out: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in KS:
            table = per_query_metrics(test.relevance, score, test.qid, k=k)
            if k == 10:
                out.update(AUC=table["auc"].mean(), MAUC=table["mauc"].mean(),
                           MAP=table["ap"].mean(), **{"MAP (LETOR)": table["ap_letor"].mean(),
                                                      "NDCG@10": table["ndcg@10"].mean(),
                                                      "P-nDCG": table["p_ndcg"].mean()})
            out[f"micro P@{k}"] = table[f"p_micro@{k}"].mean()
            out[f"macro P@{k}"] = table[f"p_macro@{k}"].mean()
    return out


def _f(v: float | None) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.4f}"


def render(results: dict[int, dict[str, tuple[TrainedRanker, dict]]], sizes: dict[int, str],
           speed: dict | None, *, preset: str, threads: int, argv: Sequence[str],
           seconds: float, tests=None) -> str:
    folds = sorted(results)
    out = ["## UpRank — λ-AUC / λ-MAUC LambdaMART on LETOR 4.0 MQ2008",
           f"`python -m bench.letor {' '.join(argv)}`",
           f"Folds: {', '.join(map(str, folds))} (mean over folds below). "
           + " ".join(f"Fold {f}: {sizes[f]}." for f in folds)
           + f" Preset {preset!r}: {RANKING_PRESETS[preset].description}. "
           f"LightGBM threads {threads}. Total {seconds:.0f} s."]
    names = list(next(iter(results.values())))
    rows = []
    for name in names:
        per_fold = [results[f][name][1] for f in folds]
        mean = {key: float(np.mean([m[key] for m in per_fold])) for key in per_fold[0]}
        fits = [results[f][name][0] for f in folds]
        chosen = ", ".join(f"{fit.value:g}" for fit in fits)
        paper = PAPER_MQ2008.get(name, {})
        rows.append([name, _f(mean["AUC"]), _f(mean["MAUC"]), _f(paper.get("MAUC")),
                     _f(mean["MAP"]), _f(mean["MAP (LETOR)"]), _f(paper.get("MAP")),
                     _f(mean["NDCG@10"]), _f(mean["P-nDCG"]), chosen,
                     f"{np.mean([fit.fit_seconds for fit in fits]):.1f}",
                     f"{np.mean([fit.total_seconds for fit in fits]):.1f}"])
    out.append("### Test metrics (paper Tables 1-2 layout)")
    out.append(md_table(["model", "AUC", "MAUC", "paper MAUC", "MAP (defined queries)",
                         "MAP (LETOR: no-rel = 0)", "paper MAP", "NDCG@10", "P-nDCG",
                         "chosen lr / α per fold", "fit s", "all candidates s"], rows))
    out.append("Paper values: mean of five folds; the linear row's paper values are SVM-perf's. "
               "AUC, MAUC, the first MAP, NDCG@10 and P-nDCG leave out test queries without a "
               "relevant document; the LETOR MAP counts them as 0, as the paper's does. "
               "P-nDCG discounts by the Platt-calibrated score (core.evaluation.per_query).")
    if tests is not None:
        out.append("### Paired per-query tests on MAUC, fold 1 (t-test, Holm over all pairs; "
                   "the app's Ranking compare page)")
        out.append(md_table(["run A", "run B", "mean A", "mean B", "queries", "p (Holm)",
                             "verdict"],
                            [[r.run_a, r.run_b, f"{r.mean_a:.4f}", f"{r.mean_b:.4f}",
                              str(r.n_queries), f"{r.p_adjusted:.3g}",
                              verdict(r._asdict(), metric_label="MAUC")]
                             for r in tests.itertuples(index=False)
                             if "λ-MAUC" in r.run_a + r.run_b]))
    prow = []
    for name in names:
        for avg in ("micro", "macro"):
            vals = [np.mean([results[f][name][1][f"{avg} P@{k}"] for f in folds]) for k in KS]
            prow.append([name, avg, *(f"{v:.4f}" for v in vals)])
    out.append("### Test Precision@k, micro and macro (the paper gives no MQ2008 values)")
    out.append(md_table(["model", "average", *(f"P@{k}" for k in KS)], prow))
    if speed:
        out.append("### Speed: λ-MAUC vs LightGBM's built-in lambdarank (fold 1 train, "
                   f"{speed['rows']:,} rows, {speed['trees']} trees, 1 thread)")
        out.append(md_table(
            ["objective", *(f"rep {i + 1} s" for i in range(len(speed["mauc"]))), "median s"],
            [[label, *(f"{v:.2f}" for v in speed[key]), f"{np.median(speed[key]):.2f}"]
             for key, label in (("mauc", "λ-MAUC (UpRank's λ engine)"),
                                ("lambdarank", "lambdarank (LightGBM built-in)"))]))
        ratio = np.median(speed["mauc"]) / np.median(speed["lambdarank"])
        out.append(f"Ratio of medians λ-MAUC / lambdarank: **{ratio:.2f}×** (target ≤ 2×).")
    return "\n\n".join(out) + "\n"


def measure_speed(train, *, trees: int, reps: int) -> dict:
    """Fit λ-MAUC and built-in lambdarank alternately ``reps`` times each (no early stopping)."""
    from core.models import LambdaMARTRanker

    times: dict[str, list[float]] = {"mauc": [], "lambdarank": []}
    for _ in range(reps):
        for metric in times:
            model = LambdaMARTRanker(metric, n_estimators=trees, learning_rate=0.1,
                                     num_threads=1, random_state=0)
            t0 = time.perf_counter()
            model.fit(train.X, train.relevance, train.qid)
            times[metric].append(time.perf_counter() - t0)
    return {**times, "rows": int(train.relevance.shape[0]), "trees": trees}


# =============================================================================== CLI
def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = report_parser(__doc__, quick="the app's quick preset (one learning rate, 100 trees)",
                       data_dir="folder holding mq2008_fold1/ (and MQ2008/S1..S5.txt)")
    ap.add_argument("--models", help=f"comma list of {','.join(SHORT)} (default "
                                     f"{','.join(DEFAULT_MODELS)})")
    ap.add_argument("--folds", help="comma list of folds (default: every fold found)")
    ap.add_argument("--max-queries", type=int, default=None,
                    help="use the first N queries of each split (smoke tests)")
    ap.add_argument("--speed-reps", type=int, default=3,
                    help="alternating fits per objective in the speed table (0 = skip)")
    ap.add_argument("--speed-trees", type=int, default=500)
    return ap.parse_args(argv)


def _chosen(value: str | None, allowed: Sequence, what: str, default: Sequence) -> list:
    if value is None:
        return list(default)
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in map(str, allowed)]
    if bad or not names:
        raise SystemExit(f"--{what} must be a comma list of {', '.join(map(str, allowed))}; "
                         f"got {value!r}.")
    return names


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark, print the markdown (and write ``--out``); returns the markdown."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    models = [SHORT[m] for m in _chosen(args.models, SHORT, "models", DEFAULT_MODELS)]
    found = mq2008_folds_available(args.data_dir)
    if not found:
        raise SystemExit("MQ2008 not found: put mq2008_fold1/{train,vali,test}.txt.gz in the "
                         "data directory (see core.data.load_mq2008) or pass --data-dir.")
    folds = [int(f) for f in _chosen(args.folds, found, "folds", found)]
    preset = "quick" if args.quick else "paper"
    t0 = time.perf_counter()
    results: dict[int, dict] = {}
    sizes: dict[int, str] = {}
    train1 = None
    for fold in folds:
        data = load_fold(fold, args.data_dir, args.max_queries)
        train1 = train1 or data["train"]
        sizes[fold] = ", ".join(f"{s} {d.n_rows:,} docs / {d.n_queries} queries "
                                f"({d.queries_without_relevant()} without a relevant doc)"
                                for s, d in data.items())
        results[fold] = {}
        for name in models:
            fit = train_ranker(name, data, preset=preset, seed=args.seed, threads=args.threads)
            results[fold][name] = (fit, test_metrics(data["test"], fit.test_score))
    tests = None
    if len(models) > 1:
        test = load_fold(folds[0], args.data_dir, args.max_queries)["test"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frames = {name: per_query_metrics(test.relevance, fit.test_score, test.qid)
                      for name, (fit, _) in results[folds[0]].items()}
        tests = compare_runs(frames, metrics=["mauc"], correction="holm")
    speed = (measure_speed(train1, trees=args.speed_trees, reps=args.speed_reps)
             if args.speed_reps > 0 else None)
    text = render(results, sizes, speed, preset=preset, threads=args.threads, argv=argv,
                  seconds=time.perf_counter() - t0, tests=tests)
    return publish(text, args.out)


if __name__ == "__main__":
    run_timed(main)
