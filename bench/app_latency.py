"""Benchmark: server time of a Compare-page rerun after a widget change, and first render.

Run:  .venv/bin/python -m bench.app_latency [--repeats 15] [--dataset hillstrom|world]

Set-up: two runs trained on Hillstrom (womens vs No E-Mail, visit; quick preset:
LambdaMART-PCG and Flipped label, one 70/30 split) in a fresh run store, through the same
JobRunner the Train page uses.  Then Streamlit's AppTest drives the real app script
in-process: the time of ``at.run()`` after changing the curve definition or the cut-off is
the server time of that rerun (script execution incl. cached calls; no network, no browser
paint).  "First render" is the first ``run()`` of the app in a fresh Python process, imports
included.  Target: Compare rerun under 300 ms; under 100 ms on the 100k-row world
(``--dataset world --rows 100000``).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._report import bench_parser

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("UPRANK_RUNS_DIR", tempfile.mkdtemp(prefix="uprank_bench_runs_"))

FIRST_RENDER = """
import time; t0 = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=120).run()
assert not at.exception, at.exception
print(time.perf_counter() - t0)
"""


def train_two(dataset: str, options: dict):
    from core.data.datasets import load_dataset
    from core.models import MODELS
    from core.runs.jobs import JobRunner
    from core.runs.presets import LAMBDAMART, model_params
    from core.runs.store import RunConfig, RunStore

    data = load_dataset(dataset, **options)
    runner = JobRunner(max_workers=1, store=RunStore(os.environ["UPRANK_RUNS_DIR"]))
    jobs = []
    for model in (LAMBDAMART, list(MODELS)[1]):
        config = RunConfig.for_data(data, model, model_params(model), dataset=dataset,
                                    options=options)
        jobs.append(runner.submit(config))
    t0 = time.perf_counter()
    for job in jobs:
        status = runner.wait(job, timeout=600)
        assert status.state in ("done", "cached"), status
    runner.shutdown()
    return data, time.perf_counter() - t0


def timed_reruns(at, widget, values, repeats):
    times = []
    for i in range(repeats):
        widget().set_value(values[i % len(values)])
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return times


def main() -> None:
    ap = bench_parser(__doc__)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--dataset", default="hillstrom", choices=["hillstrom", "world"])
    ap.add_argument("--rows", type=int, default=None, choices=[5_000, 20_000, 50_000, 100_000],
                    help="rows of the world dataset (the 100k-row comparison of issue 14)")
    args = ap.parse_args()
    options = ({"arm": "womens", "outcome": "visit"} if args.dataset == "hillstrom"
               else {"n": args.rows} if args.rows else {})
    data, train_s = train_two(args.dataset, options)

    from streamlit.testing.v1 import AppTest

    app = str(ROOT / "app.py")
    at = AppTest.from_file(app, default_timeout=120).run()
    at.selectbox(key="data_key").set_value(args.dataset).run()
    for name, value in options.items():
        at.selectbox(key=f"data_{args.dataset}_{name}").set_value(value)
    at.button(key="data_load").click().run()
    t0 = time.perf_counter()
    at.switch_page("pages/compare.py").run()
    open_s = time.perf_counter() - t0
    assert not at.exception, at.exception
    timed_reruns(at, lambda: at.selectbox(key="cmp_def"), ["uplift_joint_rel"], 1)  # warm
    defs = ["uplift_sep_rel", "qini_joint_abs", "uplift_joint_rel", "qini_sep_abs"]
    t_def = timed_reruns(at, lambda: at.selectbox(key="cmp_def"), defs, args.repeats)
    t_cut = timed_reruns(at, lambda: at.slider(key="cmp_cutoff"), [10, 20, 40, 50, 70],
                         args.repeats)
    first = [float(subprocess.run([sys.executable, "-c", FIRST_RENDER.format(app=app)],
                                  capture_output=True, text=True, cwd=ROOT,
                                  check=True).stdout.strip().splitlines()[-1])
             for _ in range(3)]

    def row(name, xs):
        return (f"| {name} | {statistics.median(xs) * 1000:.0f} ms | "
                f"{max(xs) * 1000:.0f} ms | {len(xs)} |")

    print(f"Data: {data.name}, {data.n:,} rows; two runs trained in {train_s:.1f} s "
          f"(test rows: {int(round(data.n * 0.3)):,}).\n")
    print("| server time | median | max | n |\n|---|---:|---:|---:|")
    print(row("Compare rerun after changing the definition", t_def))
    print(row("Compare rerun after moving the cut-off slider", t_cut))
    print(row("Compare page opened (first time, cold caches)", [open_s]))
    print(row("First render of the app (fresh process, imports included)", first))
    print("\nTarget: Compare rerun after a widget change under 300 ms (100 ms on the 100k-row "
          "world).")


if __name__ == "__main__":
    main()
