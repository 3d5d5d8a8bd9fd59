"""Benchmark: all six curve definitions + AUUC on 1M and 10M rows, beside scikit-uplift.

Run:  .venv/bin/python -m bench.curves [--sizes 1000000 10000000] [--repeats 3]

scikit-uplift is *not* a product dependency (it is in requirements-dev.txt).  It runs as a
subprocess on the same arrays (saved as .npy), so both are timed in one run of this script on
the same machine: with this interpreter when it can import ``sklift``, else in an environment
of its own created on first use in the user cache (``core.data.cache_dir()/venv-sklift``,
``python -m venv`` + ``pip install scikit-uplift``) — never inside the project, whose
layout check reads every file under ``bench/``.  Printed: seconds (best of ``--repeats``) and
the ratio scikit-uplift ÷ UpRank, plus the largest difference between scikit-uplift's
Qini/uplift curves and ours at scikit-uplift's thresholds (a correctness cross-check).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench._report import bench_parser
from core.data.datafiles import cache_dir
from core.evaluation.curves import DEFINITIONS, UpliftCurves

SKLIFT_SNIPPET = r"""
import json, sys, time
import numpy as np
from sklift.metrics import qini_curve, uplift_curve
d = sys.argv[1]; repeats = int(sys.argv[2])
y, t, s = (np.load(f"{d}/{k}.npy") for k in "yts")
best = float("inf")
for _ in range(repeats):
    t0 = time.perf_counter()
    qx, qv = qini_curve(y, s, t)
    ux, uv = uplift_curve(y, s, t)
    best = min(best, time.perf_counter() - t0)
np.save(f"{d}/qx.npy", qx); np.save(f"{d}/qv.npy", qv)
np.save(f"{d}/ux.npy", ux); np.save(f"{d}/uv.npy", uv)
print(json.dumps({"seconds": best}))
"""


def ensure_sklift() -> Path | None:
    """A Python that can import scikit-uplift: this one (requirements-dev.txt has it), else
    one in ``cache_dir()/venv-sklift``, created here on first use; ``None`` when neither."""
    if importlib.util.find_spec("sklift") is not None:
        return Path(sys.executable)
    env = cache_dir() / "venv-sklift"
    py = env / "bin" / "python"
    if not py.exists():
        print(f"creating {env} for scikit-uplift ...", file=sys.stderr)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
            subprocess.run([str(py), "-m", "pip", "install", "-q", "scikit-uplift", "numpy",
                            "pandas"], check=True)
        except subprocess.CalledProcessError as exc:
            print(f"scikit-uplift unavailable: {exc}", file=sys.stderr)
            return None
    return py


def make_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 2, n).astype(np.int8)
    x = rng.normal(size=n)
    p = 0.10 + 0.05 * t * (x > 0)
    y = (rng.random(n) < p).astype(np.int8)
    score = np.round(x + rng.normal(scale=0.5, size=n), 4)  # realistic: some ties
    return y, t, score


def time_ours(y, t, s, repeats: int, ties: str):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        c = UpliftCurves(y, t, s, ties=ties)
        for name in DEFINITIONS:
            c.curve(name)
            c.auuc(name)
        best = min(best, time.perf_counter() - t0)
    return best, c


def main() -> None:
    ap = bench_parser(__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sk_py = ensure_sklift()
    print("| rows | UpRank: 6 curves + 6 AUUC, ties=average (s) | ties=stable (s) "
          "| scikit-uplift qini_curve + uplift_curve (s) | ratio sklift ÷ UpRank (average) "
          "| max |Δ| vs sklift (qini, uplift) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        y, t, s = make_data(n)
        ours, c = time_ours(y, t, s, args.repeats, "average")
        ours_stable, _ = time_ours(y, t, s, args.repeats, "stable")
        sk, diff = float("nan"), "n/a"
        if sk_py is not None:
            with tempfile.TemporaryDirectory() as d:
                for k, a in zip("yts", (y, t, s)):
                    np.save(f"{d}/{k}.npy", a)
                out = subprocess.run([str(sk_py), "-c", SKLIFT_SNIPPET, d, str(args.repeats)],
                                     capture_output=True, text=True)
                if out.returncode == 0:
                    sk = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
                    qx, qv, ux, uv = (np.load(f"{d}/{k}.npy") for k in ("qx", "qv", "ux", "uv"))
                    # sklift evaluates at tie boundaries (x = rows targeted), where ours is
                    # exact. Compared where both arms are present: at the very top sklift
                    # sets the undefined ratio to 0 (V = R^T), UpRank sets V = 0 (SPEC §2).
                    _, q = c.curve("qini_joint_abs")
                    _, u = c.curve("uplift_joint_abs")
                    both = (c._nt > 0) & (c._nc > 0)
                    kq, ku = qx.astype(int), ux.astype(int)
                    dq = np.nanmax(np.abs(q[kq] - qv)[both[kq]])
                    du = np.nanmax(np.abs(u[ku] - uv)[both[ku]])
                    diff = f"{dq:.2e}, {du:.2e}"
                else:
                    print(out.stderr[-2000:], file=sys.stderr)
        print(f"| {n:,} | {ours:.3f} | {ours_stable:.3f} | {sk:.3f} | {sk / ours:.1f}× | {diff} |")
    print("\nTargets: 1M rows, all six, under 1 s; at least 2× faster than scikit-uplift "
          "(which computes two of the six); 10M rows under 15 s.")


if __name__ == "__main__":
    main()
