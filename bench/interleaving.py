"""Benchmark: Sato (2021) Figure 1 and Table 2 on both preset worlds, beside loop versions.

Run:  .venv/bin/python -m bench.interleaving [--quick] [--reps 10000] [--presets grocery movie]
                                             [--seed 0] [--no-loop]

For every preset (``core.interleaving.worlds.PRESETS``) the script prints, as markdown:

* the Table-1-like statistics of the world and of the two rankers' top-10 lists;
* the time of the paper's full Figure-1 grid -- 15 user counts x ``--reps`` repetitions x 5
  methods, n = 10 -- with :func:`core.interleaving.estimators.simulate_grid` (wall and CPU seconds);
* beside it, two one-repetition-at-a-time loops timed on a slice of the grid and
  extrapolated to the full grid: (a) the public per-experiment API called once per
  repetition (``epi_lists`` / ``cbi_lists`` / ``observe`` / ``estimate_*``, vectorised over the
  users of one experiment), and (b) a pure-Python loop over repetitions *and* users, like the
  paper's reference code (``evaluator/comparator.py``, itself slower still: pandas per user);
* Table 2 (mean, sd, 95 % CI at 1000 users), the false-judgment rates (Figure 1) and the users
  each method needs, with the ratio AB-total / CBI-IPS (the paper: ~30x on Dunnhumby), both at
  a 5 % false rate and at the rate AB-total reaches with 2000 users (the paper's reading).

``--quick`` runs 1000 repetitions and a smaller loop slice.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

from core.interleaving import (
    PAPER_METHODS,
    PAPER_USER_COUNTS,
    PRESETS,
    bias_table,
    cbi_lists,
    cbi_propensities,
    epi_lists,
    estimate_ab_list,
    estimate_ab_total,
    estimate_ips,
    estimate_rct,
    false_judgment_rates,
    observe,
    preset_comparison,
    simulate_grid,
    users_needed,
)
from core.runs.simulations import GRID_THREADS
from bench._report import bench_parser

NAMES = {"ab_total": "AB-total", "ab_list": "AB-list", "epi_rct": "EPI-RCT",
         "cbi_rct": "CBI-RCT", "cbi_ips": "CBI-IPS"}


# ----------------------------------------------------------------------------- loops
def loop_api_rep(comp, n_users: int, rng: np.random.Generator) -> dict[str, float]:
    """One experiment of every method with the public per-experiment functions."""
    yt, yc, la, lb = comp.arrays
    n = la.shape[1]
    users = rng.choice(yt.shape[0], n_users, replace=False)
    h = n_users // 2
    ua, ub = users[:h], users[h:]
    y_a = observe(yt[ua], yc[ua], la[ua])
    y_b = observe(yt[ub], yc[ub], lb[ub])
    out = {"ab_total": estimate_ab_total(y_a, y_b, n=n),
           "ab_list": estimate_ab_list(y_a, la[ua], y_b, lb[ub])}
    a, b = la[users], lb[users]
    shown = epi_lists(a, b, random_state=rng)
    out["epi_rct"] = estimate_rct(observe(yt[users], yc[users], shown), shown, a, b, design="epi")
    shown = cbi_lists(a, b, random_state=rng)
    y = observe(yt[users], yc[users], shown)
    out["cbi_rct"] = estimate_rct(y, shown, a, b, design="cbi")
    out["cbi_ips"] = estimate_ips(y, shown, a, b, design="cbi")
    return out


def _rct(lst, y, shown):
    on = [y[i] for i in lst if i in shown]
    off = [y[i] for i in lst if i not in shown]
    return sum(on) / len(on) - sum(off) / len(off) if on and off else None


def _ips(lst, y, shown, common, pc, po, n):
    s = 0.0
    for i in lst:
        p = pc if i in common else po
        s += y[i] / p if i in shown else (-y[i] / (1 - p) if p < 1 else 0.0)
    return s / n


def loop_python_rep(comp, n_users: int, rng: np.random.Generator) -> dict[str, float]:
    """One experiment of every method, looping over users in Python (paper-style)."""
    yt, yc, la, lb = comp.arrays
    n = la.shape[1]
    users = rng.choice(yt.shape[0], n_users, replace=False)
    h = n_users // 2
    out = {}
    for method in ("ab_total", "ab_list"):
        arms = []
        for group, lists in ((users[:h], la), (users[h:], lb)):
            vals = []
            for u in group:
                z = np.zeros(yt.shape[1], bool)
                z[lists[u]] = True
                y = np.where(z, yt[u], yc[u])
                vals.append((y.sum() if method == "ab_total" else y[lists[u]].sum()) / n)
            arms.append(np.mean(vals))
        out[method] = arms[0] - arms[1]
    terms = {"epi_rct": [], "cbi_rct": [], "cbi_ips": []}
    for u in users:
        a, b = la[u].tolist(), lb[u].tolist()
        union = a + [i for i in b if i not in a]
        ov = n - (len(union) - n)
        for design in ("epi", "cbi"):
            if design == "epi":
                shown = set(rng.choice(union, n, replace=False).tolist())
            else:
                picks, a_turn = [], rng.random() < 0.5
                while len(picks) < n:
                    cand = [i for i in (a if a_turn else b) if i not in picks]
                    picks.append(cand[rng.integers(len(cand))])
                    a_turn = not a_turn
                shown = set(picks)
            y = {i: int(yt[u, i] if i in shown else yc[u, i]) for i in union}
            ra, rb = _rct(a, y, shown), _rct(b, y, shown)
            if ra is not None and rb is not None:
                terms[f"{design}_rct"].append(ra - rb)
            if design == "cbi":
                pc, po = cbi_propensities(n, ov)
                common = set(a) & set(b)
                terms["cbi_ips"].append(_ips(a, y, shown, common, pc, po, n)
                                        - _ips(b, y, shown, common, pc, po, n))
    out.update({m: float(np.mean(v)) if v else math.nan for m, v in terms.items()})
    return out


def time_loop(rep_fn, comp, counts, reps: int, seed: int) -> dict[int, float]:
    """CPU seconds per repetition at each user count (mean over ``reps``)."""
    rng = np.random.default_rng(seed)
    out = {}
    for c in counts:
        t0 = time.process_time()
        for _ in range(reps):
            rep_fn(comp, c, rng)
        out[c] = (time.process_time() - t0) / reps
    return out


def extrapolate(per_rep: dict[int, float], counts, n_reps: int) -> float:
    """Grid time from per-repetition times: measured points as they are, other user
    counts from a least-squares line t(N) = alpha + beta N through the measured points."""
    x = np.array(list(per_rep))
    y = np.array(list(per_rep.values()))
    beta, alpha = np.polyfit(x, y, 1) if len(x) > 1 else (0.0, y[0])
    return float(sum((per_rep.get(c, alpha + beta * c)) for c in counts) * n_reps)


# ----------------------------------------------------------------------------- report
def md(df: pd.DataFrame, floatfmt: str = "{:.4f}") -> str:
    """A DataFrame as a markdown table (bools as **yes** / no)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join([df.index.name or ""] + cols) + " |",
             "|" + "---|" * (len(cols) + 1)]
    for idx, *row in df.itertuples(name=None):
        cells = []
        for v in row:
            if isinstance(v, (bool, np.bool_)):
                cells.append("**yes**" if v else "no")
            elif isinstance(v, (float, np.floating)):
                cells.append("nan" if np.isnan(v) else floatfmt.format(v))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join([str(idx)] + cells) + " |")
    return "\n".join(lines)


def run_preset(name: str, args) -> dict:
    t0 = time.perf_counter()
    world, comp = preset_comparison(name, random_state=args.seed)
    t_world = time.perf_counter() - t0
    truth = comp.truth
    n = comp.lists_a.shape[1]
    p = PRESETS[name]
    print(f"\n## Preset `{name}` — {world.shape[0]} users x {world.shape[1]} items, n = {n}\n")
    print(p.description + "\n")
    t1 = world.table1({f"A: {comp.label_a}": comp.lists_a, f"B: {comp.label_b}": comp.lists_b})
    print("Table 1 (realised outcomes; paper: Dunnhumby CUBN-T 0.0507 / 0.136, BPR 0.0295 / "
          "0.187; ML-1M CUBN-O 0.332 / 0.341, UBN -0.186 / 0.308):\n")
    print(md(t1[["n", "mean_y_treated", "mean_y_control", "mean_tau"]]))
    ov = (comp.lists_a[:, :, None] == comp.lists_b[:, None, :]).sum((1, 2))
    print(f"\nTrue difference tau_A - tau_B = {truth:.4f}; mean overlap of the two lists "
          f"{ov.mean():.2f} of {n}; world generated in {t_world:.2f} s.\n")

    counts = PAPER_USER_COUNTS
    w0, c0 = time.perf_counter(), time.process_time()
    grid = simulate_grid(comp, methods=PAPER_METHODS, user_counts=counts, n_reps=args.reps,
                         random_state=args.seed)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    cells = len(counts) * args.reps
    print(f"Figure-1 grid: {len(counts)} user counts x {args.reps} repetitions x "
          f"{len(PAPER_METHODS)} methods ({sum(counts) * args.reps / 1e6:.1f} M simulated "
          f"user-experiments per interleaving design): **{wall:.1f} s wall, {cpu:.1f} s CPU**.\n")

    res = {"preset": name, "grid_wall": wall, "grid_cpu": cpu, "cells": cells}
    if GRID_THREADS > 1:  # the app's jobs: the two interleaving designs in two threads
        w0 = time.perf_counter()
        threaded = simulate_grid(comp, methods=PAPER_METHODS, user_counts=counts,
                                 n_reps=args.reps, random_state=args.seed, n_jobs=GRID_THREADS)
        res["grid_wall_threads"] = time.perf_counter() - w0
        same = all(np.array_equal(grid[c][m], threaded[c][m], equal_nan=True)
                   for c in grid for m in grid[c])
        print(f"The same grid with n_jobs={GRID_THREADS} (as the app runs it): "
              f"**{res['grid_wall_threads']:.1f} s wall**; the same numbers: {same}.\n")
    if not args.no_loop:
        slice_a = [10, 100, 1000] if args.quick else [10, 30, 100, 300, 1000, 2000]
        per_a = time_loop(loop_api_rep, comp, slice_a, 2 if args.quick else 5, args.seed + 1)
        slice_b = [10, 30] if args.quick else [10, 30, 100]
        per_b = time_loop(loop_python_rep, comp, slice_b, 1 if args.quick else 3, args.seed + 2)
        res["loop_api"] = extrapolate(per_a, counts, args.reps)
        res["loop_python"] = extrapolate(per_b, counts, args.reps)
        print(f"Loops, extrapolated to the same grid from a slice (CPU s): (a) "
              f"per-repetition public API {res['loop_api']:.0f} s (measured at N = {slice_a}); "
              f"(b) per-repetition, per-user Python {res['loop_python']:.0f} s (measured at "
              f"N = {slice_b}).\n")

    ref = 1000 if 1000 in grid else max(grid)
    bt = bias_table(grid[ref], truth)
    bt.index = [NAMES.get(m, m) for m in bt.index]
    bt.index.name = "method"
    bt["mean ± sd"] = [f"{m:.4f} ± {s:.4f}" for m, s in zip(bt["mean"], bt["sd"])]
    bt["95% CI of mean"] = [f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(bt["ci_low"], bt["ci_high"])]
    print(f"### Table 2 — estimates of tau_A - tau_B = {truth:.4f} at {ref} users "
          f"({args.reps} runs)\n")
    print(md(bt[["mean ± sd", "95% CI of mean", "truth_in_ci"]]))

    curve = false_judgment_rates(grid, truth)
    piv = curve.pivot(index="n_users", columns="method", values="false_rate")[list(PAPER_METHODS)]
    piv.columns = [NAMES[m] for m in piv.columns]
    print("\n### Figure 1 — share of runs with the wrong sign (ties count 1/2)\n")
    print(md(piv))

    ab_2000 = float(piv.loc[max(counts), "AB-total"])
    print("\n### Users needed for a given false-judgment rate (log-interpolated)\n")
    rows = []
    for target, label in ((0.05, "5 %"), (ab_2000, f"AB-total @ {max(counts)} = {ab_2000:.3f}")):
        if not 0 < target < 1:
            continue
        un = users_needed(curve, target=target, relative_to="cbi_ips")
        floor = bool(un.loc["cbi_ips", "at_grid_start"])  # CBI-IPS may need fewer: ratio >=
        for m in PAPER_METHODS:
            r = un.loc[m]
            v = r["users_needed"]
            ratio = "" if np.isnan(r["ratio"]) else f"{'>= ' if floor else ''}{r['ratio']:.1f}"
            rows.append({"target": label, "method": NAMES[m],
                         "users": ("never (nan)" if np.isnan(v) else
                                   (f"<= {v:.0f}" if r["at_grid_start"] else f"{v:.0f}")),
                         "x CBI-IPS": ratio or "nan"})
        res[f"ratio_{label}"] = float(un.loc["ab_total", "ratio"])
    tab = pd.DataFrame(rows).set_index("target")
    print(md(tab, "{:.1f}"))
    res["truth"] = truth
    return res


def main(argv=None) -> None:
    ap = bench_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="1000 repetitions, small loop slice")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per grid cell")
    ap.add_argument("--presets", nargs="+", default=list(PRESETS), choices=list(PRESETS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-loop", action="store_true", help="skip the loop baselines")
    args = ap.parse_args(argv)
    args.reps = args.reps or (1000 if args.quick else 10_000)
    print("# Interleaving benchmark (Sato 2021, RecSys '21)\n")
    print(f"numpy {np.__version__}, pandas {pd.__version__}; seed {args.seed}; "
          f"{args.reps} repetitions per cell.")
    results = [run_preset(name, args) for name in args.presets]
    print("\n## Timing summary (full Figure-1 grid: 15 user counts x 5 methods)\n")
    rows = []
    for r in results:
        row = {"grid wall s": r["grid_wall"], "grid CPU s": r["grid_cpu"]}
        if "grid_wall_threads" in r:
            row[f"grid wall s, {GRID_THREADS} threads (app)"] = r["grid_wall_threads"]
        if "loop_api" in r:
            row.update({"loop (a) API per rep, CPU s": r["loop_api"],
                        "speed-up vs (a)": r["loop_api"] / r["grid_cpu"],
                        "loop (b) Python per user, CPU s": r["loop_python"],
                        "speed-up vs (b)": r["loop_python"] / r["grid_cpu"]})
        rows.append(pd.Series(row, name=r["preset"]))
    summary = pd.DataFrame(rows)
    summary.index.name = "preset"
    if len(summary) > 1:
        summary.loc["total"] = summary.sum(numeric_only=True)
        for c in [c for c in summary.columns if c.startswith("speed-up")]:
            base = c.replace("speed-up vs (a)", "loop (a) API per rep, CPU s").replace(
                "speed-up vs (b)", "loop (b) Python per user, CPU s")
            total = summary.loc["total"]
            summary.loc["total", c] = total[base] / total["grid CPU s"]
    print(md(summary, "{:.1f}"))


if __name__ == "__main__":
    main()
