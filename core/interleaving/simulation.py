r"""Simulated online experiments (Sato 2021, §4) and their summaries (Table 2, Figure 1).

:func:`simulate` runs many experiments of one method on a world (binary potential outcomes
and two rankers' lists, see :mod:`core.interleaving.estimators` for notation, estimators and the
decisions on undefined cases); :func:`simulate_many` and :func:`simulate_grid` run several
methods and user counts on shared random draws.  :func:`bias_table`,
:func:`false_judgment_rates` / :func:`false_judgment_curve` and :func:`users_needed` turn
the estimates into the paper's Table 2 and Figure 1 and the "AB-total needs ~30x the users"
comparison.  Everything is re-exported by :mod:`core.interleaving`.

References
----------
Sato, M. (2021). Online Evaluation Methods for the Causal Effect of Recommendations.
*RecSys '21*. doi:10.1145/3460231.3474235.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from core._validation import (
    UndefinedMetricWarning,
    as_generator,
    check_choice,
    check_positive_int,
    check_real,
)
from core.interleaving import _kernel as _k
from core.interleaving.comparison import (
    METHODS,
    PAPER_METHODS,
    PAPER_USER_COUNTS,
    Progress,
    _check_methods,
    _check_n_users,
    _unpack,
    _world,
    true_difference,
)

__all__ = [
    "bias_table",
    "biased_methods",
    "false_judgment_curve",
    "false_judgment_rates",
    "simulate",
    "simulate_grid",
    "simulate_many",
    "users_needed",
]


# ------------------------------------------------------------------------------ simulation
def _run(prep: _k.Prepared, methods: tuple[str, ...], counts: Sequence[int], n_reps: int,
         rng: np.random.Generator, rct_undefined: str, engine: str,
         progress: Progress | None, n_jobs: int = 1) -> list[dict[str, np.ndarray]]:
    """Simulate ``n_reps`` experiments for every user count in ``counts``.

    One random stream per purpose (users, and per design: counts, A-only and B-only draws),
    so results do not depend on which other methods run, nor on ``n_jobs``.  Repetitions run
    in blocks; in each block every repetition draws one random ordering of ``max(counts)``
    users and an experiment with ``N`` users takes its first ``N`` (A/B: the first
    ``floor(N/2)`` see A).  With ``n_jobs > 1`` the EPI and CBI designs run in two threads.
    """
    streams = _k.make_streams(rng)
    tables = engine == "tables" or (engine == "auto" and prep.n <= _k.FAST_MAX_N)
    designs = [d for d in ("epi", "cbi") if f"{d}_rct" in methods or f"{d}_ips" in methods]
    if tables and designs:
        _k.ensure_tables(prep)
    wanted = set(methods)
    out = [{m: np.empty(n_reps) for m in methods} for _ in counts]
    n_max = max(counts)
    block = max(1, min(n_reps, 2048, 4_000_000 // max(prep.n_users, n_max)))
    total, done = float(n_reps * sum(counts)), 0.0
    width = 2**14 if tables else 2**14 // prep.n  # ~16k elements per array: cache-friendly

    def design_pass(d: str, users: np.ndarray, res: dict, lo: int) -> None:
        sub = max(1, width // users.shape[1])
        for s in range(0, users.shape[0], sub):
            chunk = np.ascontiguousarray(users[s:s + sub])
            if tables:
                got = _k.tables_chunk(prep, [d], wanted, chunk, streams, rct_undefined)
            else:
                got = _k.lists_design(prep, d, wanted, chunk, streams, rct_undefined)
            for m, v in got.items():
                res[m][lo + s:lo + s + len(chunk)] = v

    pool = ThreadPoolExecutor(len(designs)) if n_jobs > 1 and len(designs) > 1 else None
    try:
        for lo in range(0, n_reps, block):
            hi = min(n_reps, lo + block)
            perm = _k.sample_users(streams["users"], prep.n_users, n_max, hi - lo)
            for res, nu in zip(out, counts):
                users = perm[:, :nu]
                h = nu // 2
                if "ab_total" in wanted:
                    res["ab_total"][lo:hi] = (prep.tot_a[users[:, :h]].mean(1)
                                              - prep.tot_b[users[:, h:]].mean(1))
                if "ab_list" in wanted:
                    res["ab_list"][lo:hi] = (prep.lst_a[users[:, :h]].mean(1)
                                             - prep.lst_b[users[:, h:]].mean(1))
                if pool is None:
                    for d in designs:
                        design_pass(d, users, res, lo)
                else:
                    for f in [pool.submit(design_pass, d, users, res, lo) for d in designs]:
                        f.result()
                done += (hi - lo) * nu
                if progress is not None:  # may raise to cancel
                    progress(min(1.0, done / total))
    finally:
        if pool is not None:
            pool.shutdown()
    for res in out:
        for m, v in res.items():
            if np.isnan(v).any():
                warnings.warn(f"{m}: {int(np.isnan(v).sum())} of {n_reps} simulated estimates "
                              "are undefined (nan); see rct_undefined.", UndefinedMetricWarning,
                              stacklevel=3)
    return out


def simulate_many(y_treated: Any, y_control: Any, lists_a: Any, lists_b: Any, *,
                  methods: Sequence[str] = PAPER_METHODS, n_users: int, n_reps: int = 10_000,
                  random_state: Any = None, progress: Progress | None = None,
                  rct_undefined: Literal["reweight", "drop"] = "reweight",
                  engine: Literal["auto", "tables", "lists"] = "auto",
                  n_jobs: int = 1) -> dict[str, np.ndarray]:
    """Run :func:`simulate` for several methods at once on shared random draws.

    Every method draws from its own random streams derived from ``random_state``, in a fixed
    order, so ``simulate_many(..., methods=M)[m]`` equals ``simulate(..., method=m)`` with the
    same ``random_state``, and all methods see the same user subsets (common random numbers,
    which sharpen comparisons between methods).  CBI-RCT and CBI-IPS share the same CBI
    lists; EPI-RCT and EPI-IPS the same EPI lists.

    Returns
    -------
    dict of str to ndarray of shape (n_reps,)
    """
    methods = _check_methods(methods)
    yt, yc, a, b = _world(y_treated, y_control, lists_a, lists_b)
    n_users = _check_n_users(n_users, yt.shape[0], methods)
    n_reps = check_positive_int(n_reps, "n_reps")
    check_choice(rct_undefined, "rct_undefined", ("reweight", "drop"))
    check_choice(engine, "engine", ("auto", "tables", "lists"))
    if engine == "tables" and a.shape[1] > _k.FAST_MAX_N:
        raise ValueError(f"engine='tables' supports n <= {_k.FAST_MAX_N}; got n={a.shape[1]} "
                         "(use engine='lists' or 'auto').")
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    prep = _k.prepare(yt, yc, a, b)
    return _run(prep, methods, [n_users], n_reps, as_generator(random_state), rct_undefined,
                engine, progress, n_jobs)[0]


def simulate(y_treated: Any, y_control: Any, lists_a: Any, lists_b: Any, *, method: str,
             n_users: int, n_reps: int = 10_000, random_state: Any = None,
             progress: Progress | None = None,
             rct_undefined: Literal["reweight", "drop"] = "reweight",
             engine: Literal["auto", "tables", "lists"] = "auto", n_jobs: int = 1) -> np.ndarray:
    r"""Simulated online experiments (Sato 2021, §4.1): estimates of :math:`\tau_A - \tau_B`.

    Each repetition draws ``n_users`` users without replacement.  A/B methods show
    :math:`L^A` to the first ``floor(n_users/2)`` (in random order) and :math:`L^B` to the
    rest; interleaving methods show every user an EPI or CBI list.  Outcomes follow eq. 1 and
    the method's estimator (module notes) gives one estimate per repetition.

    Vectorised over repetitions and users, processed in blocks so memory stays bounded.  Two
    exact engines: ``"tables"`` draws, per (repetition, user), the counts of common / A-only /
    B-only items shown and the outcome sums of each class from exactly tabulated laws (alias
    method, three draws per design); ``"lists"`` builds every interleaved list item by item.
    ``"auto"`` uses ``"tables"`` for ``n <= 12``.  Both give the same distribution (tests
    check it against each other and against a one-repetition-at-a-time loop).

    Parameters
    ----------
    y_treated, y_control : array-like of 0/1, shape (users, items)
    lists_a, lists_b : array-like of int, shape (users, n)
    method : {"ab_total", "ab_list", "epi_rct", "cbi_rct", "cbi_ips", "epi_ips"}
    n_users : int
        Users per experiment (at most the world's users; at least 2 for A/B methods).
    n_reps : int, default 10_000
    random_state : None, int, SeedSequence or Generator
    progress : callable, optional
        Called with the fraction done (0-1] after each block of repetitions (and user
        count); an exception raised inside it cancels the simulation.
    rct_undefined : {"reweight", "drop"}
        Treatment of undefined eq. 7 terms (module notes).
    engine : {"auto", "tables", "lists"}
    n_jobs : int, default 1
        Threads; with 2 the EPI and CBI designs of :func:`simulate_many` run side by side
        (numpy releases the GIL).  Results do not depend on it.

    Returns
    -------
    ndarray of float64, shape (n_reps,)
    """
    check_choice(method, "method", METHODS)
    return simulate_many(y_treated, y_control, lists_a, lists_b, methods=(method,),
                         n_users=n_users, n_reps=n_reps, random_state=random_state,
                         progress=progress, rct_undefined=rct_undefined, engine=engine,
                         n_jobs=n_jobs)[method]


# ------------------------------------------------------------------------------ summaries
def bias_table(estimates_by_method: Mapping[str, Any], truth: float, *,
               level: float = 0.95) -> pd.DataFrame:
    r"""Mean, sd and confidence interval of simulated estimates (Sato 2021, Table 2).

    CI of the mean: :math:`\bar x \pm t_{(1+level)/2,\,R-1}\, s/\sqrt R` over the ``R``
    non-nan estimates.  ``truth_in_ci`` is the paper's bold face.

    Returns
    -------
    DataFrame indexed by method with columns ``mean, sd, se, ci_low, ci_high, truth, bias,
    truth_in_ci, n_reps, n_nan``.
    """
    truth = check_real(truth, "truth", "a finite number")
    level = check_real(level, "level", "a number strictly between 0 and 1", low=0, high=1,
                        low_open=True, high_open=True)
    rows = {}
    for m, est in estimates_by_method.items():
        x = np.asarray(est, dtype=float).ravel()
        ok = x[~np.isnan(x)]
        r = ok.size
        mean = ok.mean() if r else np.nan
        sd = ok.std(ddof=1) if r > 1 else np.nan
        se = sd / math.sqrt(r) if r > 1 else np.nan
        half = stats.t.ppf((1 + level) / 2, r - 1) * se if r > 1 else np.nan
        rows[m] = {"mean": mean, "sd": sd, "se": se, "ci_low": mean - half, "ci_high": mean + half,
                   "truth": truth, "bias": mean - truth,
                   "truth_in_ci": bool(mean - half <= truth <= mean + half) if r > 1 else False,
                   "n_reps": int(x.size), "n_nan": int(x.size - r)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("method")


def biased_methods(bias: pd.DataFrame, *, n_users: int | None = None,
                   alpha: float = 0.05) -> frozenset[str]:
    r"""Methods whose mean estimate misses the truth, tested jointly over the methods.

    Read off the tidy bias table of the Interleaving page at one user count: by default the
    largest simulated, where the intervals are narrowest, so a bias shows most clearly.  With
    :math:`m` methods judged at once, an unbiased method's plain 95 % interval would miss the
    truth in one run in twenty *per method*, so a method is called biased only when

    .. math::  |\bar x - \tau| > t_{1-\alpha/(2m)}(r - 1)\; \mathrm{se},

    a Bonferroni-corrected two-sided t-test at family-wise level ``alpha`` (``r`` the
    defined estimates, ``se`` = sd/√r).  Methods with fewer than two defined estimates cannot
    be judged and are left out.  The paper's bold face (``truth_in_ci``, uncorrected) stays
    in the table.

    Parameters
    ----------
    bias : DataFrame
        Columns ``n_users, method, mean, se, truth, n_reps``: one
        ``core.interleaving.bias_table`` per user count, stacked
        (``core.runs.simulations.SimResult.bias``).
    n_users : int, optional
        The user count to judge at; default the largest in ``bias``.
    alpha : float, default=0.05
        Family-wise error rate over the methods judged.

    Returns
    -------
    frozenset of str

    Examples
    --------
    >>> bias = pd.DataFrame({"n_users": [10, 10, 100, 100], "method": ["A", "B", "A", "B"],
    ...                      "mean": [0.5, 0.5, 0.15, 0.35], "se": [0.2, 0.2, 0.02, 0.02],
    ...                      "truth": 0.15, "n_reps": 1000})
    >>> sorted(biased_methods(bias)), sorted(biased_methods(bias, n_users=10))
    (['B'], [])
    """
    need = {"n_users", "method", "mean", "se", "truth", "n_reps"}
    if not isinstance(bias, pd.DataFrame) or not need <= set(bias.columns):
        got = sorted(bias.columns) if isinstance(bias, pd.DataFrame) else type(bias).__name__
        raise ValueError(f"bias must be a DataFrame with columns {sorted(need)}; got {got}.")
    alpha = check_real(alpha, "alpha", "in (0, 1)", low=0, high=1, low_open=True,
                        high_open=True)
    if bias.empty:
        return frozenset()
    at = bias["n_users"].max() if n_users is None else n_users
    rows = bias[bias["n_users"] == at]
    if rows.empty:
        raise ValueError(f"n_users must be a user count of bias "
                         f"({', '.join(map(str, sorted(bias['n_users'].unique())))}); "
                         f"got {n_users!r}.")
    judged = rows[rows["se"].notna() & (rows["n_reps"] > 1) & rows["mean"].notna()]
    if judged.empty:
        return frozenset()
    m = len(judged)
    crit = stats.t.ppf(1 - alpha / (2 * m), judged["n_reps"].to_numpy() - 1)
    miss = (judged["mean"] - judged["truth"]).abs().to_numpy() > crit * judged["se"].to_numpy()
    return frozenset(judged.loc[miss, "method"].astype(str))


def simulate_grid(world: Any, *, methods: Sequence[str] = PAPER_METHODS,
                  user_counts: Sequence[int] = PAPER_USER_COUNTS, n_reps: int = 10_000,
                  random_state: Any = None, progress: Progress | None = None,
                  rct_undefined: Literal["reweight", "drop"] = "reweight",
                  engine: Literal["auto", "tables", "lists"] = "auto",
                  n_jobs: int = 1) -> dict[int, dict[str, np.ndarray]]:
    """Simulated estimates for every (user count, method) of a grid (Sato 2021, §4.2).

    Common random numbers: within one repetition, the users of the different user counts
    are nested (the first ``N`` of one random ordering of the users), and all methods see
    the same users.  Every cell is still an exact Monte-Carlo sample for its user count;
    neighbouring cells share randomness, which smooths curves (the paper drew every cell
    independently).  Interleaving draws are independent across user counts.

    Parameters
    ----------
    world : Comparison or (y_treated, y_control, lists_a, lists_b)
    methods, user_counts, n_reps, random_state, progress, rct_undefined, engine, n_jobs
        As in :func:`simulate`; ``progress`` gets the fraction of the whole grid.

    Returns
    -------
    dict mapping each user count to a dict of method -> ndarray of shape (n_reps,)
    """
    yt, yc, a, b = _world(*_unpack(world))
    methods = _check_methods(methods)
    counts = [_check_n_users(c, yt.shape[0], methods, "user_counts") for c in user_counts]
    if not counts:
        raise ValueError("user_counts must hold at least one user count; got none.")
    n_reps = check_positive_int(n_reps, "n_reps")
    check_choice(rct_undefined, "rct_undefined", ("reweight", "drop"))
    check_choice(engine, "engine", ("auto", "tables", "lists"))
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    counts = list(dict.fromkeys(counts))
    prep = _k.prepare(yt, yc, a, b)
    res = _run(prep, methods, counts, n_reps, as_generator(random_state), rct_undefined, engine,
               progress, n_jobs)
    return dict(zip(counts, res))


def false_judgment_rates(grid: Mapping[int, Mapping[str, Any]], truth: float, *,
                         ties: Literal["half", "correct", "false"] = "half") -> pd.DataFrame:
    r"""Share of estimates whose sign is opposite to the truth, per (method, user count).

    A run is a false judgment when :math:`\operatorname{sign}(\hat\Delta) =
    -\operatorname{sign}(\tau_A - \tau_B)` (Sato 2021, §4.2.2).  An estimate of exactly 0
    picks no winner: ``ties="half"`` (default) counts it as half a false judgment (a coin
    flip would decide), ``"correct"`` as right (the reference code counts ``estimate < 0`` for
    a positive truth), ``"false"`` as wrong.  ``nan`` estimates are left out (``nan_rate``);
    a truth of 0 has no sign, so every rate is ``nan`` (with a warning).

    Parameters
    ----------
    grid : mapping user count -> mapping method -> estimates (:func:`simulate_grid`)
    truth : float
    ties : {"half", "correct", "false"}

    Returns
    -------
    DataFrame with one row per (method, n_users): ``method, n_users, false_rate, se,
    tie_rate, nan_rate, n_reps, truth``.
    """
    check_choice(ties, "ties", ("half", "correct", "false"))
    truth = check_real(truth, "truth", "a finite number")
    if truth == 0:
        warnings.warn("the true difference is 0: no sign to judge; false_rate is nan.",
                      UndefinedMetricWarning, stacklevel=2)
    tie_weight = {"half": 0.5, "correct": 0.0, "false": 1.0}[ties]
    rows = []
    methods = list(dict.fromkeys(m for res in grid.values() for m in res))
    for m in methods:
        for c, res in grid.items():
            if m not in res:
                continue
            est = np.asarray(res[m], dtype=float).ravel()
            x = est[~np.isnan(est)]
            wrong = (np.sign(x) == -np.sign(truth)) + tie_weight * (x == 0)
            rate = float(wrong.mean()) if x.size and truth != 0 else np.nan
            se = math.sqrt(rate * (1 - rate) / x.size) if not math.isnan(rate) else np.nan
            rows.append({"method": m, "n_users": int(c), "false_rate": rate, "se": se,
                         "tie_rate": float((x == 0).mean()) if x.size else np.nan,
                         "nan_rate": 1 - x.size / max(est.size, 1), "n_reps": int(est.size),
                         "truth": truth})
    return pd.DataFrame(rows)


def false_judgment_curve(world: Any, *, methods: Sequence[str] = PAPER_METHODS,
                         user_counts: Sequence[int] = PAPER_USER_COUNTS, n_reps: int = 10_000,
                         random_state: Any = None, progress: Progress | None = None,
                         ties: Literal["half", "correct", "false"] = "half",
                         rct_undefined: Literal["reweight", "drop"] = "reweight",
                         engine: Literal["auto", "tables", "lists"] = "auto",
                         n_jobs: int = 1) -> pd.DataFrame:
    """False-judgment rate against the number of users (Sato 2021, Figure 1).

    :func:`simulate_grid` followed by :func:`false_judgment_rates` (see both for the
    nested users and the tie rule).

    Parameters
    ----------
    world : Comparison or (y_treated, y_control, lists_a, lists_b)
    methods : sequence of str, default PAPER_METHODS
    user_counts : sequence of int, default PAPER_USER_COUNTS
    n_reps : int, default 10_000
    random_state, progress, rct_undefined, engine, n_jobs
        As in :func:`simulate`; ``progress`` gets the fraction of the whole grid.
    ties : {"half", "correct", "false"}

    Returns
    -------
    DataFrame
        The table of :func:`false_judgment_rates` for the simulated grid.
    """
    check_choice(ties, "ties", ("half", "correct", "false"))  # before the long simulation
    grid = simulate_grid(world, methods=methods, user_counts=user_counts, n_reps=n_reps,
                         random_state=random_state, progress=progress,
                         rct_undefined=rct_undefined, engine=engine, n_jobs=n_jobs)
    truth = true_difference(*_unpack(world))
    return false_judgment_rates(grid, truth, ties=ties)


def users_needed(curve_df: pd.DataFrame, *, target: float = 0.05,
                 relative_to: str | None = "cbi_ips") -> pd.DataFrame:
    r"""Users each method needs to reach a false-judgment rate of ``target``.

    The first user count :math:`N_j` of the grid with ``false_rate <= target`` is found; the
    answer is interpolated between it and the previous grid point :math:`N_{j-1}`, linearly
    in the rate and logarithmically in users:
    :math:`\log N^* = \log N_{j-1} + \frac{r_{j-1} - \text{target}}{r_{j-1} - r_j}
    (\log N_j - \log N_{j-1})`.  If the smallest count already reaches the target, that count
    is returned (flag ``at_grid_start``: the true need may be smaller); ``nan`` if no count
    does.  ``ratio`` divides by the ``relative_to`` method's need (for ``ab_total`` it is the
    paper's "AB-total needs ~30x the users of CBI-IPS").

    Parameters
    ----------
    curve_df : DataFrame
        Output of :func:`false_judgment_curve`.
    target : float, default 0.05
        False-judgment rate in (0, 1).
    relative_to : str or None, default "cbi_ips"

    Returns
    -------
    DataFrame indexed by method: ``users_needed, reached, at_grid_start, ratio``.
    """
    need = {"method", "n_users", "false_rate"}
    if not isinstance(curve_df, pd.DataFrame) or not need <= set(curve_df.columns):
        raise ValueError(f"curve_df must be a DataFrame with columns {sorted(need)} "
                         "(the output of false_judgment_curve).")
    target = check_real(target, "target", "a false-judgment rate in (0, 1)", low=0, high=1,
                         low_open=True, high_open=True)
    rows = {}
    for m, g in curve_df.groupby("method", sort=False):
        g = g.sort_values("n_users")
        nu = g["n_users"].to_numpy(float)
        r = g["false_rate"].to_numpy(float)
        hit = np.flatnonzero(r <= target)
        if hit.size == 0:
            rows[m] = {"users_needed": np.nan, "reached": False, "at_grid_start": False}
            continue
        j = hit[0]
        if j == 0:
            val = nu[0]
        else:
            frac = (r[j - 1] - target) / (r[j - 1] - r[j])
            val = math.exp(math.log(nu[j - 1]) + frac * (math.log(nu[j]) - math.log(nu[j - 1])))
        rows[m] = {"users_needed": val, "reached": True, "at_grid_start": bool(j == 0)}
    out = pd.DataFrame.from_dict(rows, orient="index").rename_axis("method")
    if relative_to is not None:
        if relative_to not in out.index:
            raise ValueError(f"relative_to must be a method of curve_df ({', '.join(out.index)}); "
                             f"got {relative_to!r}.")
        out["ratio"] = out["users_needed"] / out.loc[relative_to, "users_needed"]
    return out
