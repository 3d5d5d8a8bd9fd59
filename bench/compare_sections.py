"""Benchmark: the Compare page's computations at Criteo size, section by section.

Run:  .venv/bin/python -m bench.compare_sections [--rows 13979592 | --quick] [--boot 50]

Data: the Criteo-size stand-in (:func:`core.data.make_criteo_like`, seed 0), its last 30 % of
rows as the test split (4.2M rows at 14M) with two float32 scores, as the page gets them from
two stored runs: a good ranker (the known effect τ(x) plus noise) and a weak one (feature
``f2``, on which τ depends, plus noise).  Each section calls the core function the page calls
(``ui/compare_view.py``) on the same arrays, in one process, in the page's order:

* **curves and bands** — every ranker's test-set curve (``UpliftCurves.curve``) and its band;
* **AUUC table** — ``auuc_over_splits`` at the page's cut-offs;
* **definition ranks** — ``definition_ranks_over_splits`` (six definitions);
* **P-nDCG / nDCG** — ``ranking_metrics_over_splits``;
* **deciles** — ``deciles_over_splits`` and the treatment share along each ranking;
* **profit bootstrap** — ``profit_over_splits`` (its default 200 replicates, the page's
  default economics);
* **AUUC bootstrap** — ``bootstrap_over_splits`` with ``--boot`` replicates (the page's
  toggle, off by default, runs 500), its one-time set-up (ranking each score) included.

Printed: seconds per section and the process's peak memory.  One run on a shared 2-core
machine varies by ±20 %.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable

import numpy as np

from core.constants import CUTOFFS
from core.data import make_criteo_like
from core.evaluation import across_splits as over
from core.evaluation.across_splits import TestSplit
from core.evaluation.compare import band
from core.evaluation.curves import UpliftCurves
from core.evaluation.targeting import treatment_balance_along_ranking
from bench._report import bench_parser

DEFINITION = "uplift_sep_rel"  # the page's default


def test_split(rows: int, seed: int = 0) -> TestSplit:
    """The last 30 % of ``rows`` stand-in rows with the two rankers' float32 scores."""
    d = make_criteo_like(rows, random_state=seed)
    test = slice(int(round(0.7 * rows)), rows)
    rng = np.random.default_rng(seed)
    tau = d.tau[test]
    good = (tau + rng.normal(0.0, tau.std(), tau.size)).astype(np.float32)
    f2 = d.X["f2"].to_numpy()[test]
    weak = (f2 + rng.normal(0.0, 2.0 * f2.std(), f2.size)).astype(np.float32)
    return TestSplit(d.y[test], d.t[test], {"tau + noise": good, "f2 + noise": weak})


def sections(split: TestSplit, boot: int) -> list[tuple[str, float]]:
    """Seconds of each section."""
    splits = [split]
    names = list(split.scores)
    out = []

    def timed(label: str, call: Callable[[], object]) -> None:
        start = time.perf_counter()
        call()
        out.append((label, time.perf_counter() - start))

    timed("curves and bands", lambda: [
        band([UpliftCurves(split.y, split.t, s, ties="average").curve(DEFINITION)])
        for s in split.scores.values()])
    timed("AUUC table", lambda: over.auuc_over_splits(splits, definition=DEFINITION,
                                                      cutoffs=CUTOFFS))
    timed("definition ranks", lambda: over.definition_ranks_over_splits(splits, cutoff=0.3))
    timed("P-nDCG / nDCG", lambda: over.ranking_metrics_over_splits(splits))
    timed("deciles", lambda: [
        (over.deciles_over_splits(splits, name),
         treatment_balance_along_ranking(split.t, split.scores[name])) for name in names])
    timed("profit bootstrap (200 replicates)", lambda: over.profit_over_splits(
        splits, cost_per_treatment=0.1, value_per_response=10.0, random_state=0))
    timed(f"AUUC bootstrap ({boot} replicates, its set-up included)", lambda: (
        over.bootstrap_over_splits(splits, definition=DEFINITION, cutoffs=CUTOFFS,
                                   n_boot=boot, random_state=0, reference=names[0])))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--rows", type=int, default=13_979_592)
    parser.add_argument("--quick", action="store_true", help="1,000,000 rows")
    parser.add_argument("--boot", type=int, default=50,
                        help="AUUC bootstrap replicates timed")
    args = parser.parse_args(argv)
    rows = 1_000_000 if args.quick else args.rows
    split = test_split(rows)
    small = TestSplit(split.y[:2_000], split.t[:2_000],
                      {k: v[:2_000] for k, v in split.scores.items()})
    sections(small, 2)  # compiled kernels loaded (numba's cache) before the clock runs
    data_gb = sum(a.nbytes for a in (split.y, split.t, *split.scores.values())) / 1e9
    timed = sections(split, args.boot)
    print(f"## The Compare page's computations on {split.y.size:,} test rows (of a {rows:,}-row "
          f"stand-in), two float32 rankers, one split\n")
    print("| section | seconds |\n|---|---:|")
    for label, sec in timed:
        print(f"| {label} | {sec:.2f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"\nProcess peak memory {peak:.2f} GB (the test split's arrays: {data_gb:.2f} GB; the "
          "stand-in's generation included).")


if __name__ == "__main__":
    main()
