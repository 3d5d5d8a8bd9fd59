"""Benchmark: Criteo-size experiments — the AUUC table of 1M / 14M rows from Parquet, in
memory and on a Dask LocalCluster, with seconds and peak memory; one curve beside
scikit-uplift's ``qini_curve``.

Run:  .venv/bin/python -m bench.scale [--rows 1000000 13979592] [--quick] [--workers 2]
      [--data-dir DIR]

Data: :func:`core.data.write_criteo_like` — the seeded stand-in with Criteo Uplift v2.1's
schema (13,979,592 rows, 85 % treated, visit 4.7 %), written once per size to
``<data-dir>/criteo_like_<rows>.parquet`` (one row group per 1M rows) with a model score
column ``score`` = τ(x) + 0.002·(f0 − 12.6) (float32).  Every measurement runs in a fresh
Python process and reports its own wall seconds and peak resident memory (``ru_maxrss``;
the Dask rows add the workers' peak, sampled by ``distributed``'s ``MemorySampler``):

* **Parquet → table**: read ``visit``, ``treatment``, ``score`` with pyarrow in record
  batches (:func:`core.data.read_parquet_columns`, int8 / float32 kept), then
  :func:`core.evaluation.auuc_table` (6 definitions × 4 cut-offs);
* **in memory → table**: the same arrays already loaded; only the table is timed;
* **Dask exact / binned**: a ``LocalCluster`` (``--workers`` processes, 1 thread each)
  reads the file with ``dask.dataframe.read_parquet(split_row_groups=True)`` (a partition
  per row group of 1M rows) and
  computes the table from per-partition tie-run counts merged on the client (exact), or
  from 10,000 quantile bins (binned; its stated error bound and the measured error are
  printed);
* **Dask bootstrap**: :func:`core.evaluation._dask.binned_bootstrap` — 100 Poisson
  replicates drawn by partition, curves on 1,000 bins;
* **curve vs scikit-uplift**: ``uplift_curve(definition="qini_joint_abs")`` against
  ``sklift.metrics.qini_curve`` on the same float32 / int8 arrays, alternated, best of 3.

``--train-dask`` instead trains the two-model baseline and LambdaMART-PCG (queries of random
``--block-rows`` blocks, default 100,000 as ``fit_lambdamart_dask``'s: the layout a partition
forces) on the first ~70 % of the file's rows and
scores the rest: in memory (pyarrow read, ``num_threads = --workers``) and on a LocalCluster
(``--workers`` processes × 1 thread; :mod:`core.models.distributed`, LightGBM's own Dask
estimators), each in a fresh process — seconds, peak memory, test AUUC@30 % (uplift,
separate, relative) and the correlation of the score with the known τ(x).

Targets (issue 14): Parquet → table at 14M rows ≤ 15 s and ≤ 3 GB; one curve ≥ 4×
scikit-uplift at 1M and 10M rows.  Times on a shared 2-core machine vary by ±30 %.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from core.models.distributed import BLOCK_ROWS as DASK_BLOCK_ROWS
from bench._report import bench_parser

ROWS = (1_000_000, 13_979_592)


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB on Linux


def _score(block: dict) -> np.ndarray:
    return block["tau"] + np.float32(0.002) * (block["f0"] - np.float32(12.6))


def ensure_file(data_dir: Path, rows: int) -> Path:
    from core.data import write_criteo_like

    path = data_dir / f"criteo_like_{rows}.parquet"
    if not path.exists():
        start = time.perf_counter()
        write_criteo_like(path, rows, random_state=0, scores={"score": _score})
        print(f"  wrote {path.name} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


COLUMNS = ["visit", "treatment", "score"]


def child(mode: str, path: str, workers: int) -> dict:
    """One measurement in this (fresh) process."""
    from core.data import read_parquet_columns
    from core.evaluation import auuc_table

    base = _peak_gb()
    out: dict = {"mode": mode}
    if mode in ("parquet", "memory"):
        start = time.perf_counter()
        cols = read_parquet_columns(path, COLUMNS)
        loaded = time.perf_counter()
        table = auuc_table(cols["visit"], cols["treatment"], cols["score"])
        out["seconds"] = time.perf_counter() - (start if mode == "parquet" else loaded)
        out["read_seconds"] = loaded - start
    else:
        import dask.dataframe as dd
        from distributed import Client, LocalCluster
        from distributed.diagnostics import MemorySampler

        from core.evaluation._dask import binned_counts, binned_error_bound
        from core.evaluation.curves import DEFINITIONS, curves_from_counts

        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit="4GiB") as cluster, \
                Client(cluster):
            sampler = MemorySampler()
            frame = dd.read_parquet(path, columns=COLUMNS, split_row_groups=True)
            with sampler.sample("run", interval=0.1):
                start = time.perf_counter()
                if mode == "dask_exact":
                    table = auuc_table(frame["visit"], frame["treatment"], frame["score"])
                elif mode == "dask_boot":
                    from core.evaluation._dask import binned_bootstrap

                    boot = binned_bootstrap(frame["visit"], frame["treatment"], frame["score"],
                                            bins=1_000, n_boot=100, random_state=0)
                    table = {"sd": boot["auuc"].std().to_dict()}
                else:
                    neg, counts, binary, tied = binned_counts(
                        frame["visit"], frame["treatment"], frame["score"], bins=10_000)
                    curves = curves_from_counts(neg, counts, binary, points=100)
                    out["bound"] = binned_error_bound(counts, tied=tied)
                    table = {d: [curves.auuc(d, cutoff=c) for c in (0.1, 0.3, 0.5, 1.0)]
                             for d in DEFINITIONS}
                out["seconds"] = time.perf_counter() - start
            series = sampler.to_pandas()
            out["cluster_gb"] = float(series.max().iloc[0]) / 1e9
            out["partitions"] = frame.npartitions
    out["peak_gb"] = _peak_gb()
    out["import_gb"] = base
    out["table"] = (table.to_dict(orient="index") if hasattr(table, "to_dict")
                    else table)
    return out


FEATURES = [f"f{j}" for j in range(12)]
TRAIN_MODELS = ("two_model", "lambdamart")


def _train_parts(frame, share: float = 0.7):
    """The Dask frame in at least 10 partitions; the first ``share`` of them train."""
    if frame.npartitions < 10:
        frame = frame.repartition(npartitions=10)
    k = int(round(share * frame.npartitions))
    # len() of the slice, not per-partition lengths: the query optimiser may fuse those
    return frame, k, len(frame.partitions[:k])


def train_child(where: str, path: str, workers: int, trees: int,
                block_rows: int = DASK_BLOCK_ROWS) -> dict:
    """Fit both models on the training rows (in memory or on a LocalCluster) and score the
    test rows in memory; one process, so the peak memory is this run's."""
    import dask.dataframe as dd
    import pandas as pd

    from core.data import read_parquet_columns
    from core.evaluation import auuc
    from core.models import LambdaMARTUplift, TwoModel
    from core.models.distributed import fit_lambdamart_dask, fit_two_model_dask

    columns = FEATURES + ["treatment", "visit", "tau"]
    frame, k, n_train = _train_parts(dd.read_parquet(path, columns=columns,
                                                     split_row_groups=True))
    if where == "memory":
        cols = read_parquet_columns(path, columns)
        test = pd.DataFrame({c: cols[c][n_train:] for c in columns})
    else:  # the client reads only the test partitions; the workers read the training ones
        test = frame.partitions[k:].compute().reset_index(drop=True)
    out: dict = {"where": where, "train_rows": n_train, "test_rows": len(test),
                 "partitions": k}
    fits: dict = {}
    if where == "memory":
        train = pd.DataFrame({c: cols[c][:n_train] for c in FEATURES})
        y, t = cols["visit"][:n_train], cols["treatment"][:n_train]
        for name in TRAIN_MODELS:
            model = (TwoModel(n_estimators=trees, learning_rate=0.1, num_threads=workers,
                              random_state=0) if name == "two_model" else
                     LambdaMARTUplift(block_rows=block_rows, n_estimators=trees, learning_rate=0.1,
                                      num_threads=workers, random_state=0))
            start = time.perf_counter()
            model.fit(train, y, t)
            fits[name] = (time.perf_counter() - start, model)
    else:
        from distributed import Client, LocalCluster
        from distributed.diagnostics import MemorySampler

        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit="6GiB") as cluster, \
                Client(cluster):
            parts = frame.partitions[:k]  # read by the workers inside each fit
            sampler = MemorySampler()
            with sampler.sample("run", interval=0.2):
                for name in TRAIN_MODELS:
                    fit = fit_two_model_dask if name == "two_model" else fit_lambdamart_dask
                    kw = {} if name == "two_model" else {"block_rows": block_rows}
                    start = time.perf_counter()
                    model = fit(parts, features=FEATURES, treatment="treatment",
                                outcome="visit", n_estimators=trees, learning_rate=0.1,
                                random_state=0, **kw)
                    fits[name] = (time.perf_counter() - start, model)
            out["cluster_gb"] = float(sampler.to_pandas().max().iloc[0]) / 1e9
    for name, (seconds, model) in fits.items():
        score = np.asarray(model.predict(test[FEATURES]), dtype=np.float64)
        out[name] = {"seconds": seconds,
                     "auuc30": auuc(test["visit"].to_numpy(), test["treatment"].to_numpy(),
                                    score, definition="uplift_sep_rel", cutoff=0.3),
                     "corr_tau": float(np.corrcoef(score, test["tau"].to_numpy())[0, 1])}
    out["peak_gb"] = _peak_gb()
    return out


def measure(mode: str, path: Path, workers: int, trees: int = 50,
            block_rows: int = DASK_BLOCK_ROWS) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.scale", "--child", mode,
                           "--path", str(path), "--workers", str(workers),
                           "--trees", str(trees), "--block-rows", str(block_rows)],
                          capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parents[1])
    if done.returncode:
        raise RuntimeError(f"{mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def curve_speed(rows: int, repeats: int = 3) -> tuple[float, float]:
    """Best-of seconds of our qini_joint_abs curve and scikit-uplift's qini_curve, alternated
    on the same arrays (float32 score, int8 arms and outcomes)."""
    import warnings

    from sklift.metrics import qini_curve

    from core.evaluation import uplift_curve

    rng = np.random.default_rng(0)
    y = (rng.random(rows) < 0.047).astype(np.int8)
    t = (rng.random(rows) < 0.85).astype(np.int8)
    s = rng.random(rows).astype(np.float32)
    uplift_curve(y[:1000], t[:1000], s[:1000], definition="qini_joint_abs")  # compile
    ours, theirs = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            uplift_curve(y, t, s, definition="qini_joint_abs")
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            qini_curve(y, s, t)
            theirs.append(time.perf_counter() - start)
    return min(ours), min(theirs)


def train_rounds(rows: int, rounds: int, threads: int,
                 block_rows: int = DASK_BLOCK_ROWS) -> dict:
    """Seconds per boosting round on ``rows`` stand-in rows (Abs1 labels): the tree-building
    floor (trivial objective ``grad = pred − label``, ``hess = 1``), LambdaMART-PCG with the
    paper's separate queries (treated rows, control rows), and LambdaMART-PCG with queries of
    random blocks of ``block_rows`` rows (``LambdaMARTUplift(block_rows=...)``; bench.blocks:
    no measurable AUUC loss) — same rows, same trees.

    A callback stamps the end of every round: "per round" is the median of the rounds after
    the first; the first round also pays the one-time set-up (LightGBM's booster, the
    objective's label-dependent plan), reported apart as ``<name>_first``.
    """
    import lightgbm as lgb

    from core.data import make_criteo_like
    from core.evaluation import relevance_labels
    from core.models.lambdamart import uplift_queries
    from core.objectives import lightgbm_objective

    d = make_criteo_like(rows, random_state=0)
    label_all = relevance_labels(d.y, d.t, labels="abs1")
    X_all = d.X.to_numpy()
    datasets = {}
    for name, block in (("paper", None), ("blocks", block_rows)):
        order, sizes = uplift_queries(d.t, "separate", block_rows=block, random_state=0)
        datasets[name] = lgb.Dataset(X_all[order], label_all[order], group=sizes,
                                     free_raw_data=False).construct()
    del d, X_all
    base = {"metric": "None", "verbose": -1, "num_threads": threads, "learning_rate": 0.1,
            "num_leaves": 31, "deterministic": True, "seed": 0}

    def trivial(preds, train):
        return preds - train.get_label(), np.ones_like(preds)

    runs = {"floor": (trivial, "paper"),
            "pcg": (lightgbm_objective("pcg", method="binned"), "paper"),
            "pcg_blocks": (lightgbm_objective("pcg", method="binned"), "blocks")}
    per: dict = {name: [] for name in runs}
    first: dict = {name: [] for name in runs}
    for _ in range(2):  # alternated
        for name, (objective, layout) in runs.items():
            stamps: list[float] = []
            start = time.perf_counter()
            lgb.train({**base, "objective": objective}, datasets[layout],
                      num_boost_round=rounds,
                      callbacks=[lambda env, add=stamps.append: add(time.perf_counter())])
            first[name].append(stamps[0] - start)
            per[name].append(float(np.median(np.diff(stamps))))
    out = {name: min(v) for name, v in per.items()}
    out.update({f"{name}_first": min(v) for name, v in first.items()})
    return out


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=list(ROWS))
    parser.add_argument("--quick", action="store_true", help="1M rows only, no 10M curve")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--train", type=int, default=0, metavar="ROWS",
                        help="only time boosting rounds on ROWS rows (floor vs PCG)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--train-dask", type=int, nargs="+", default=None, metavar="ROWS",
                        help="only train both models in memory and on a LocalCluster")
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--block-rows", type=int, default=DASK_BLOCK_ROWS,
                        help="--train-dask: LambdaMART-PCG's query blocks (rows)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--path", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = (train_child(args.child[len("train_"):], args.path, args.workers,
                              args.trees, args.block_rows)
                  if args.child.startswith("train_") else
                  child(args.child, args.path, args.workers))
        print(json.dumps(result, default=float))
        return
    if args.train:
        per = train_rounds(args.train, args.rounds, 1)
        print(f"## Boosting rounds on {args.train:,} stand-in rows (1 thread, 31 leaves; "
              f"median round after the first, best of 2 runs × {args.rounds} rounds)\n")
        print("| objective | seconds per round | × floor | first round (with set-up) |")
        print("|---|---:|---:|---:|")
        for name, label in (("floor", "floor (trivial objective)"),
                            ("pcg", "LambdaMART-PCG, separate queries (binned λ engine)"),
                            ("pcg_blocks", "LambdaMART-PCG, queries of 100,000-row blocks")):
            print(f"| {label} | {per[name]:.2f} | {per[name] / per['floor']:.2f} | "
                  f"{per[name + '_first']:.2f} |")
        print("\nTarget: ≤ 2× the floor.")
        return
    from core.data import cache_dir

    data_dir = args.data_dir or cache_dir() / "bench"
    if args.train_dask:
        print(f"## Training in memory vs on a LocalCluster ({args.workers} workers × 1 thread; "
              f"in memory {args.workers} threads), {args.trees} trees, lr 0.1\n")
        print("| rows in file | model | where | fit seconds | peak memory (process) | "
              "peak memory (cluster) | test AUUC@30 % | corr(score, τ) |")
        print("|---:|---|---|---:|---:|---:|---:|---:|")
        for rows in args.train_dask:
            path = ensure_file(data_dir, rows)
            for where in ("memory", "dask"):
                r = measure(f"train_{where}", path, args.workers, args.trees,
                            args.block_rows)
                cluster = f"{r['cluster_gb']:.2f} GB" if "cluster_gb" in r else "—"
                for name, label in (("two_model", "two-model"),
                                    ("lambdamart", f"LambdaMART-PCG, blocks of "
                                                   f"{args.block_rows:,} rows")):
                    m = r[name]
                    print(f"| {rows:,} | {label} | {where} | {m['seconds']:.1f} | "
                          f"{r['peak_gb']:.2f} GB | {cluster} | {m['auuc30']:.5f} | "
                          f"{m['corr_tau']:.3f} |")
            print(f"\n{rows:,} rows: {r['train_rows']:,} train ({r['partitions']} partitions), "
                  f"{r['test_rows']:,} test.\n")
        return
    sizes = [1_000_000] if args.quick else args.rows
    print("## UpRank at Criteo size: the AUUC table from Parquet, in memory and on Dask\n")
    print(f"`python -m bench.scale{' --quick' if args.quick else ''}` — Criteo-like stand-in "
          f"(core.data.make_criteo_like, seed 0), {args.workers} Dask workers × 1 thread; "
          "each row a fresh process (seconds: wall; memory: peak RSS of the process, and of "
          "the whole LocalCluster for Dask).\n")
    print("| rows | path | seconds | peak memory (process) | peak memory (cluster) | "
          "partitions | same table as in memory |")
    print("|---:|---|---:|---:|---:|---:|---|")
    notes = []
    for rows in sizes:
        path = ensure_file(data_dir, rows)
        results = {mode: measure(mode, path, args.workers)
                   for mode in ("parquet", "memory", "dask_exact", "dask_binned", "dask_boot")}
        ref = results["memory"]["table"]
        for mode, label in (("parquet", "Parquet → table (pyarrow batches)"),
                            ("memory", "in memory → table"),
                            ("dask_exact", "Dask LocalCluster, exact"),
                            ("dask_binned", "Dask LocalCluster, 10,000 bins"),
                            ("dask_boot", "Dask bootstrap by partition (100 Poisson "
                                          "replicates, 1,000 bins)")):
            r = results[mode]
            if mode == "dask_boot":
                same = f"sd of AUUC@30 %: {r['table']['sd']['AUUC@30%']:.2e}"
            elif mode == "dask_binned":
                worst = max(abs(r["table"][d][i] - list(ref[d].values())[i])
                            for d in ("uplift_sep_rel", "uplift_joint_rel") for i in range(4))
                same = (f"max |error| {worst:.1e} (rel. definitions; bound "
                        f"{r['bound']['uplift_sep_rel']:.1e} / "
                        f"{r['bound']['uplift_joint_rel']:.1e})")
            else:
                same = "yes" if r["table"] == ref else "NO"
            cluster = f"{r['cluster_gb']:.2f} GB" if "cluster_gb" in r else "—"
            print(f"| {rows:,} | {label} | {r['seconds']:.2f} | {r['peak_gb']:.2f} GB | "
                  f"{cluster} | {r.get('partitions', '—')} | {same} |")
        notes.append(f"{rows:,} rows: reading the three columns took "
                     f"{results['parquet']['read_seconds']:.2f} s of the Parquet row.")
    print("\n" + " ".join(notes) + "\n")
    print("### One curve (qini_joint_abs) vs scikit-uplift's qini_curve, same arrays\n")
    print("| rows | ours (s) | scikit-uplift (s) | ratio |")
    print("|---:|---:|---:|---:|")
    for rows in ([1_000_000] if args.quick else [1_000_000, 10_000_000]):
        ours, theirs = curve_speed(rows)
        print(f"| {rows:,} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.1f}× |")
    print("\nTargets: Parquet → table at 14M rows ≤ 15 s and ≤ 3 GB; curve ≥ 4× scikit-uplift.")


if __name__ == "__main__":
    main()
