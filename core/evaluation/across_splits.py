r"""Every number of a comparison over all test splits of repeated train/test splits.

A run trained with repeated splits has one test set (and one trained model) per split.  The
band chart shows all of them; the numbers beside it must too.  Each function here takes a
sequence of :class:`TestSplit` — one per split, the rankers' scores on that split's test
rows — and returns the number over all of them, saying how it was pooled.  With a single
split every function reduces to its one-split counterpart exactly.

Pooling
-------
* **AUUC table** (:func:`auuc_over_splits`): the mean over splits of each split's AUUC and
  the standard deviation across splits (ddof = 1, ``nan`` with one split).  The sd is the
  spread from re-training *and* re-testing on other rows — the paper's protocol
  (Devriendt et al. 2020, §4.1: mean ± sd over 10 repetitions).
* **Bootstrap** (:func:`bootstrap_over_splits`): the paired, arm-stratified bootstrap of
  :func:`core.evaluation.compare.bootstrap_auuc` is run on every split with its own
  independent stream; replicate :math:`b` of the pooled statistic is the mean over splits of
  each split's replicate :math:`b`,

  .. math::  \bar A_b = \frac1S \sum_{s=1}^{S} A_{s,b},

  and its point estimate the mean of the splits' estimates.  The interval therefore covers
  the test-row sampling noise of the split-averaged AUUC, treating the splits' test sets as
  independent samples (they overlap, so it is somewhat narrow; the across-split sd of the
  AUUC table shows the re-training variation).  Differences between rankers stay paired:
  within a split every ranker sees the same resample.
* **Definition ranks** (:func:`definition_ranks_over_splits`): ranks of the mean AUUC over
  splits under each definition.
* **Deciles** (:func:`deciles_over_splits`): the uplift of decile :math:`d` is the mean over
  splits of each split's decile-:math:`d` uplift; ``low``/``high`` are its min and max across
  splits (with one split: the Wald interval of :func:`~core.evaluation.targeting.uplift_by_decile`).
* **Profit and its best depth** (:func:`profit_over_splits`): the profit curve on a grid of
  depths, averaged over splits, with a pooled bootstrap as for AUUC.  The best depth is the
  argmax of the mean curve; its uncertainty is the percentile interval of the argmax over
  the replicates, and the *equivalent range* is the contiguous range of depths around the
  best whose profit is not significantly below the best's: the upper end of the
  percentile interval of :math:`P_b(d) - P_b(d^\ast)` is :math:`\ge 0` (a one-sided test at
  :math:`(1-\ell)/2`).  A wide range means the profit curve is flat there and the exact best
  depth is noise.

References
----------
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897.
Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from core._validation import (
    UndefinedMetricWarning,
    as_generator,
    check_choice,
    check_cutoffs,
    check_fraction,
    check_level,
    check_positive_int,
    check_progress,
    check_scores,
    check_uplift_inputs,
)
from core.constants import CUTOFFS
from core.evaluation._kernel import TIES, ranking_order
from core.evaluation.compare import (
    BootstrapResult,
    _check_score_mapping,
    _definition_values,
    _quiet_stats,
    _ranks_table,
    _stratified_counts,
    bootstrap_auuc,
)
from core.evaluation.curve_tables import BASELINES, auuc_summary
from core.evaluation.curves import DEFINITIONS, check_definitions, outcome_code
from core.evaluation.metrics import LABEL_SETS, ndcg, p_ndcg, relevance_labels
from core.evaluation.per_query import PROBABILITY_METHODS, score_to_probability
from core.evaluation.targeting import (
    _check_number,
    _profit_at,
    _profit_counted,
    uplift_by_decile,
)

__all__ = [
    "DepthResult",
    "TestSplit",
    "auuc_over_splits",
    "bootstrap_over_splits",
    "deciles_over_splits",
    "definition_ranks_over_splits",
    "pool_bootstraps",
    "pooling_note",
    "ranking_metrics_over_splits",
    "profit_over_splits",
]


class TestSplit(NamedTuple):
    """The test rows of one split: outcome, treatment, each ranker's score, optional value.

    ``value`` is a per-row value (e.g. spend) for the profit view; ``None`` otherwise.
    """

    __test__ = False  # not a pytest test class

    y: np.ndarray
    t: np.ndarray
    scores: Mapping[str, np.ndarray]
    value: np.ndarray | None = None


def _check_splits(splits) -> list[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
    """Validated ``[(y, t, {name: score})]``; every split must score the same rankers."""
    if isinstance(splits, (str, bytes, Mapping)) or not isinstance(splits, Sequence) \
            or len(splits) == 0:
        raise ValueError("splits must be a non-empty list of TestSplit(y, t, scores); "
                         f"got {type(splits).__name__}.")
    out, names = [], None
    for i, split in enumerate(splits):
        if not isinstance(split, tuple) or len(split) < 3:
            raise ValueError(f"splits[{i}] must be a TestSplit(y, t, scores); "
                             f"got {type(split).__name__}.")
        y, t, _ = check_uplift_inputs(split[0], split[1], np.zeros(len(np.asarray(split[0]))))
        scores = _check_score_mapping(split[2], y.shape[0])
        if names is None:
            names = list(scores)
        elif list(scores) != names:
            raise ValueError(f"splits[{i}] scores the rankers {list(scores)}, split 0 scores "
                             f"{names}: every split must score the same rankers.")
        out.append((y, t, scores))
    return out


def pooling_note(n_splits: int, *, bootstrap: bool = False) -> str:
    """One sentence saying how a table's numbers were pooled (for under the table)."""
    n_splits = check_positive_int(n_splits, "n_splits")
    if n_splits == 1:
        return "One split: the numbers are from one test set" + (
            "; intervals from the paired bootstrap of its test rows." if bootstrap else ".")
    if bootstrap:
        return (f"Over {n_splits} repeated splits: estimates are the mean over the splits; "
                "intervals and tests pool the paired bootstrap of each split's test rows "
                "(replicate b = mean over splits of each split's replicate b).")
    return (f"Over {n_splits} repeated splits: mean ± sd across the splits (each split: a "
            "model trained on its training rows, scored on its test rows).")


# ---------------------------------------------------------------------- P-nDCG
def ranking_metrics_over_splits(splits: Sequence[TestSplit], *, labels: str = "abs1",
                                probability: str = "rank") -> pd.DataFrame:
    r"""P-nDCG and nDCG of each ranker's test list, mean and sd over splits (SPEC §5).

    Each split's test rows form one list (the joint ranking), relevant = the row's label in
    the paper's set ``labels`` is > 0 (Abs1: treated responders and control
    non-responders, the rows a persuadable-first ranking should put on top; Devriendt et
    al. 2020, Table 3).  P-nDCG needs a probability and an uplift score is not one: the
    score is mapped by :func:`~core.evaluation.per_query.score_to_probability` with
    ``method=probability``:

    * ``"rank"`` (default): the score's quantile in the split, so every ranker's discount
      falls linearly with its position — P-nDCG then compares orderings, like nDCG with a
      linear instead of a logarithmic discount;
    * ``"platt"``: Platt scaling of the relevant label on the score (fitted on the split's
      test rows).  This keeps P-nDCG's idea (confidence as the discount) but rewards
      uninformative scores: a ranker with no signal gets flat probabilities, and with equal
      probabilities P-nDCG = 1 whatever the order.  Read it beside nDCG.

    nDCG (log2 discount, whole list) is returned beside it.

    Returns
    -------
    pandas.DataFrame
        Indexed by ranker: ``P-nDCG``, ``sd P-nDCG``, ``nDCG``, ``sd nDCG`` (sd across
        splits, ddof = 1; ``nan`` with one split).
    """
    checked = _check_splits(splits)
    check_choice(labels, "labels", LABEL_SETS)
    check_choice(probability, "probability", PROBABILITY_METHODS)
    rows: dict[str, dict[str, list[float]]] = {}
    for y, t, scores in checked:
        rel = relevance_labels(y, t, labels=labels) > 0
        for name, score in scores.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a ranker worse than random: rank-based p
                prob = score_to_probability(score, rel, method=probability)
            row = rows.setdefault(name, {"P-nDCG": [], "nDCG": []})
            row["P-nDCG"].append(p_ndcg(rel.astype(np.int64), prob))
            row["nDCG"].append(ndcg(rel.astype(np.float64), score))
    out = {}
    for name, vals in rows.items():
        out[name] = {}
        for metric, v in vals.items():
            out[name][metric] = float(np.mean(v))
            out[name][f"sd {metric}"] = float(np.std(v, ddof=1)) if len(v) > 1 else np.nan
    frame = pd.DataFrame.from_dict(out, orient="index")
    frame.attrs["n_splits"] = len(checked)
    return frame


# ---------------------------------------------------------------------- AUUC
def auuc_over_splits(
    splits: Sequence[TestSplit],
    *,
    definition: str,
    cutoffs: Iterable[float] = CUTOFFS,
    ties: str = "average",
    baselines: Iterable[str] = BASELINES,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """AUUC of each ranker at each cut-off, mean and sd over splits.

    Parameters
    ----------
    splits : sequence of TestSplit
    definition : str
        One of :data:`core.evaluation.curves.DEFINITIONS`.
    cutoffs : iterable of float in (0, 1], default=(0.1, 0.3, 0.5, 1.0)
    ties : {"average", "stable"}, default="average"
    baselines : iterable of str, default=("Random targeting", "Perfect (oracle)")
        Baselines of :func:`core.evaluation.curve_tables.auuc_summary`, computed per split.

    Returns
    -------
    summary : pandas.DataFrame
        Indexed by ranker (baselines after the rankers).  Columns ``"AUUC@<c>"`` (mean over
        splits, the same numbers as :func:`~core.evaluation.curve_tables.auuc_summary` with
        one split) then ``"sd@<c>"`` (sd across splits, ddof = 1; ``nan`` with one split).
        ``summary.attrs["n_splits"]`` is the number of splits.
    per_split : pandas.DataFrame
        Long table: ``split`` (0-based), ``ranker``, then the ``"AUUC@<c>"`` columns.
    """
    checked = _check_splits(splits)
    check_choice(definition, "definition", DEFINITIONS)
    cutoffs = check_cutoffs(tuple(cutoffs))
    check_choice(ties, "ties", TIES)
    baselines = tuple(baselines)
    parts = []
    for i, (y, t, scores) in enumerate(checked):
        table = auuc_summary(y, t, scores, definition=definition, cutoffs=cutoffs, ties=ties,
                             baselines=baselines)
        parts.append(table.rename_axis("ranker").reset_index().assign(split=i))
    per_split = pd.concat(parts, ignore_index=True)
    cols = [c for c in per_split.columns if c.startswith("AUUC@")]
    per_split = per_split[["split", "ranker", *cols]]
    order = list(dict.fromkeys(per_split["ranker"]))
    grouped = per_split.groupby("ranker", sort=False)[cols]
    mean = grouped.mean().reindex(order)
    sd = _quiet_stats(lambda: grouped.std(ddof=1).reindex(order))
    sd.columns = [c.replace("AUUC@", "sd@") for c in cols]
    summary = pd.concat([mean, sd], axis=1)
    summary.index.name = "ranker"
    summary.attrs["n_splits"] = len(checked)
    return summary, per_split


# ---------------------------------------------------------------------- bootstrap
def pool_bootstraps(results: Sequence[BootstrapResult]) -> BootstrapResult:
    """One :class:`~core.evaluation.compare.BootstrapResult` of the mean over splits.

    ``estimates`` is the mean of the results' estimates and replicate ``b`` the mean of
    their replicate ``b`` (module docstring).  The results must share rankers, cut-offs,
    definition, tie policy, level and number of replicates.  A single result is returned
    unchanged.
    """
    if isinstance(results, BootstrapResult) or not isinstance(results, Sequence) \
            or len(results) == 0:
        raise ValueError("results must be a non-empty list of BootstrapResult.")
    first = results[0]
    for i, r in enumerate(results):
        if not isinstance(r, BootstrapResult):
            raise ValueError(f"results[{i}] must be a BootstrapResult; got {type(r).__name__}.")
        same = (r.rankers, r.cutoffs, r.definition, r.ties, r.level, r.n_boot)
        if same != (first.rankers, first.cutoffs, first.definition, first.ties, first.level,
                    first.n_boot):
            raise ValueError(f"results[{i}] differs from results[0] in rankers, cut-offs, "
                             "definition, ties, level or replicates: cannot pool them.")
    if len(results) == 1:
        return first
    estimates = np.mean([r.estimates for r in results], axis=0)
    replicates = np.mean([r.replicates for r in results], axis=0)
    estimates.setflags(write=False)
    replicates.setflags(write=False)
    return BootstrapResult(first.rankers, first.cutoffs, first.definition, first.ties,
                           first.level, estimates, replicates, first.reference)


def _streams(random_state, k: int) -> list:
    """``k`` independent random streams; with ``k == 1`` the seed itself (one-split results
    equal :func:`bootstrap_auuc`'s)."""
    if k == 1:
        return [random_state]
    return as_generator(random_state).spawn(k)


def bootstrap_over_splits(
    splits: Sequence[TestSplit],
    *,
    definition: str,
    cutoffs: Sequence[float] = CUTOFFS,
    n_boot: int = 1000,
    ties: str = "average",
    level: float = 0.95,
    random_state=0,
    reference: str | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> BootstrapResult:
    """Paired, arm-stratified bootstrap of AUUC on every split, pooled (module docstring).

    Options as in :func:`core.evaluation.compare.bootstrap_auuc`; ``progress(done, total)``
    counts replicates over all splits.  Split ``s`` uses the ``s``-th stream spawned from
    ``random_state`` (with one split: ``random_state`` itself, so the result equals
    ``bootstrap_auuc``'s).
    """
    checked = _check_splits(splits)
    n_boot = check_positive_int(n_boot, "n_boot")
    total = n_boot * len(checked)
    results = []
    for s, ((y, t, scores), stream) in enumerate(zip(checked, _streams(random_state,
                                                                       len(checked)))):
        step = None
        if check_progress(progress) is not None:
            step = (lambda done, _t, s=s: progress(s * n_boot + done, total))
        results.append(bootstrap_auuc(y, t, scores, definition=definition, cutoffs=cutoffs,
                                      n_boot=n_boot, ties=ties, level=level,
                                      random_state=stream, reference=reference,
                                      progress=step))
    return pool_bootstraps(results)


# ---------------------------------------------------------------------- definitions
def definition_ranks_over_splits(
    splits: Sequence[TestSplit],
    *,
    definitions: Iterable[str] = tuple(DEFINITIONS),
    cutoff: float = 1.0,
    ties: str = "average",
) -> pd.DataFrame:
    """:func:`core.evaluation.compare.definition_ranks` on the mean AUUC over splits.

    Same columns; the ``"AUUC <ranker>"`` values are means over the splits and the ranks
    and winners are those of the means.  ``attrs["n_splits"]`` holds the number of splits.
    """
    checked = _check_splits(splits)
    definitions = check_definitions(definitions)
    cutoff = check_fraction(cutoff, "cutoff")
    check_choice(ties, "ties", TIES)
    values = np.mean([_definition_values(y, t, scores, definitions, cutoff, ties)
                      for y, t, scores in checked], axis=0)
    out = _ranks_table(values, definitions, list(checked[0][2]))
    out.attrs["n_splits"] = len(checked)
    return out


# ---------------------------------------------------------------------- deciles
def deciles_over_splits(splits: Sequence[TestSplit], ranker: str, *, bins: int = 10,
                        level: float = 0.95) -> pd.DataFrame:
    """Uplift per score bin of one ranker, over splits (module docstring).

    Returns one row per bin: ``bin``, ``n`` (mean rows per split), ``uplift`` (mean over
    splits), ``low``, ``high`` (min/max across splits; with one split the Wald interval
    ``ci_low``/``ci_high`` of :func:`~core.evaluation.targeting.uplift_by_decile`) and
    ``n_splits`` (splits in which the bin exists).  ``attrs["interval"]`` names the
    interval.
    """
    checked = _check_splits(splits)
    check_choice(ranker, "ranker", checked[0][2])
    parts = [uplift_by_decile(y, t, scores[ranker], bins=bins, level=level).assign(split=i)
             for i, (y, t, scores) in enumerate(checked)]
    if len(parts) == 1:
        one = parts[0]
        out = pd.DataFrame({"bin": one["bin"], "n": one["n"].astype(float),
                            "uplift": one["uplift"], "low": one["ci_low"],
                            "high": one["ci_high"], "n_splits": 1})
        out.attrs["interval"] = f"{level:.0%} Wald interval"
        return out
    g = pd.concat(parts, ignore_index=True).groupby("bin")
    out = pd.DataFrame({"n": g["n"].mean(), "uplift": g["uplift"].mean(),
                        "low": g["uplift"].min(), "high": g["uplift"].max(),
                        "n_splits": g["split"].nunique()}).reset_index()
    out.attrs["interval"] = f"min–max over {len(parts)} splits"
    return out


# ---------------------------------------------------------------------- profit
@dataclass(frozen=True, eq=False)
class DepthResult:
    """Profit by targeting depth over splits, with a pooled bootstrap (module docstring).

    Attributes
    ----------
    rankers : tuple of str
    fractions : ndarray of shape (g,)
        Grid of depths (share of the test rows targeted), from 0 to 1.
    per_split : ndarray of shape (n_splits, n_rankers, g)
        Profit of every split on the grid.
    replicates : ndarray of shape (n_boot, n_rankers, g)
        Pooled replicate profit curves.
    level : float
    n_rows : float
        Mean number of test rows per split (to turn fractions into rows).
    """

    rankers: tuple[str, ...]
    fractions: np.ndarray
    per_split: np.ndarray
    replicates: np.ndarray
    level: float
    n_rows: float

    @property
    def estimate(self) -> np.ndarray:
        """Mean profit over splits, shape (n_rankers, g)."""
        return self.per_split.mean(axis=0)

    @property
    def n_splits(self) -> int:
        return int(self.per_split.shape[0])

    def _q(self) -> np.ndarray:
        return 100 * np.array([(1 - self.level) / 2, (1 + self.level) / 2])

    def curves(self) -> dict[str, pd.DataFrame]:
        """Per ranker: ``fraction``, ``targeted`` (rows, mean split size), ``profit`` (mean),
        ``low``, ``high`` — min/max across splits, or with one split the pointwise
        bootstrap percentile interval."""
        est = self.estimate
        if self.n_splits > 1:
            low, high = self.per_split.min(axis=0), self.per_split.max(axis=0)
        else:
            low, high = _quiet_stats(np.nanpercentile, self.replicates, self._q(), axis=0)
        return {name: pd.DataFrame({
            "fraction": self.fractions,
            "targeted": np.rint(self.fractions * self.n_rows).astype(np.int64),
            "profit": est[j], "low": low[j], "high": high[j]})
            for j, name in enumerate(self.rankers)}

    def band_note(self) -> str:
        return (f"band: min–max over {self.n_splits} splits" if self.n_splits > 1 else
                f"band: pointwise {self.level:.0%} bootstrap interval")

    def summary(self) -> pd.DataFrame:
        """Best depth per ranker with its uncertainty.

        Columns: ``best_fraction``, ``best_targeted``, ``best_profit`` (argmax of the mean
        curve; the smallest depth among equal maxima), ``profit_low``/``profit_high``
        (percentile interval of the profit at that depth), ``depth_low``/``depth_high``
        (percentile interval of the replicates' best depth, on the grid: the order
        statistics at or just outside the percentiles), ``equivalent_low``/
        ``equivalent_high`` (the contiguous range of depths not significantly less
        profitable than the best), ``profit_all`` (everyone targeted) and ``verdict`` (a
        plain sentence).
        """
        est = self.estimate
        q = self._q()
        rows = {}
        for j, name in enumerate(self.rankers):
            curve = est[j]
            if np.isnan(curve).all():
                rows[name] = {"verdict": "undefined (no treated or no control rows)"}
                continue
            g = int(np.nanargmax(curve))
            reps = self.replicates[:, j, :]
            ok = np.isfinite(reps).all(axis=1)
            reps = reps[ok]
            if reps.shape[0] == 0:
                rows[name] = {"best_fraction": self.fractions[g], "best_profit": curve[g],
                              "verdict": "no usable bootstrap replicate"}
                continue
            p_lo, p_hi = np.percentile(reps[:, g], q)
            # the replicates' best depths lie on the grid, and so does their interval: the
            # order statistics just outside it (an interpolated 99.51 % read "99.5 %" in the
            # table beside a sentence saying 99.51 %)
            best = self.fractions[np.argmax(reps, axis=1)]
            d_lo = np.percentile(best, q[0], method="lower")
            d_hi = np.percentile(best, q[1], method="higher")
            upper = np.percentile(reps - reps[:, [g]], q[1], axis=0)
            eq = upper >= 0
            lo = g
            while lo > 0 and eq[lo - 1]:
                lo -= 1
            hi = g
            while hi < eq.shape[0] - 1 and eq[hi + 1]:
                hi += 1
            rows[name] = {
                "best_fraction": self.fractions[g],
                "best_targeted": int(round(self.fractions[g] * self.n_rows)),
                "best_profit": curve[g], "profit_low": p_lo, "profit_high": p_hi,
                "depth_low": d_lo, "depth_high": d_hi,
                "equivalent_low": self.fractions[lo], "equivalent_high": self.fractions[hi],
                "profit_all": curve[-1],
                "verdict": _depth_verdict(self.fractions[g], self.fractions[lo],
                                          self.fractions[hi], self.level, d_lo, d_hi,
                                          profit=(p_lo, p_hi)),
            }
        out = pd.DataFrame.from_dict(rows, orient="index")
        out.index.name = "ranker"
        return out


def _pct(fraction: float) -> str:
    """A depth on the 0.5 % grid as the tables show it: 26 %, 26.5 % (never rounded away)."""
    return f"{100 * fraction:.4g}%"


def _depth_verdict(best: float, lo: float, hi: float, level: float, d_lo: float = np.nan,
                   d_hi: float = np.nan, *, profit: tuple[float, float] | None = None) -> str:
    """One sentence on the best depth: flat (equivalent depths span ≥ 10 points), unstable
    (its bootstrap interval ``d_lo … d_hi`` does), or well determined; then, when the
    ``profit`` interval at that depth holds 0, a second sentence saying so (a well
    determined depth can still earn nothing distinguishable from zero)."""
    text = _depth_sentence(best, lo, hi, level, d_lo, d_hi)
    if best > 0 and profit is not None and profit[0] <= 0 <= profit[1]:
        text += (f" Its profit is not distinguishable from zero ({level:.0%} interval "
                 f"{profit[0]:,.2f} to {profit[1]:,.2f}).")
    return text


def _depth_sentence(best: float, lo: float, hi: float, level: float, d_lo: float,
                    d_hi: float) -> str:
    """The first sentence of :func:`_depth_verdict`."""
    if best == 0:
        head = "No depth pays more than targeting nobody"
    else:
        head = f"Best depth {_pct(best)}"
    if hi - lo >= 0.10:
        return (f"{head}; any depth from {_pct(lo)} to {_pct(hi)} is statistically equivalent "
                f"(at {level:.0%}): the profit curve is flat there, so the exact best depth "
                "is noise.")
    if np.isfinite(d_lo) and np.isfinite(d_hi) and d_hi - d_lo >= 0.10:
        return (f"{head} (equivalent depths {_pct(lo)}–{_pct(hi)}), but the best depth moves "
                f"from {_pct(d_lo)} to {_pct(d_hi)} across bootstrap samples ({level:.0%} "
                "interval): treat it as approximate.")
    return f"{head}; well determined (equivalent depths {_pct(lo)}–{_pct(hi)})."


def profit_over_splits(
    splits: Sequence[TestSplit],
    *,
    cost_per_treatment: float,
    value_per_response: float | None = None,
    grid: int = 201,
    n_boot: int = 200,
    ties: str = "average",
    level: float = 0.95,
    random_state=0,
    progress: Callable[[int, int], object] | None = None,
) -> DepthResult:
    """Profit by depth on a grid, averaged over splits, with a pooled stratified bootstrap.

    Parameters
    ----------
    splits : sequence of TestSplit
        With ``value_per_response=None`` every split must carry ``value`` (per-row value,
        e.g. spend); otherwise ``value`` is ignored.
    cost_per_treatment : float
    value_per_response : float, optional
    grid : int, default=201
        Number of evenly spaced depths in [0, 1] (201 = every 0.5 %); depth ``f`` targets
        the top ``round(f·n)`` rows of a split of ``n`` rows.
    n_boot : int, default=200
        Replicates per split (arm-stratified, the same resample for every ranker).
    ties : {"average", "stable"}, default="average"
    level : float in (0, 1), default=0.95
    random_state : None, int, SeedSequence or Generator, default=0
    progress : callable ``(done, total)``, optional
        Called after each replicate of each split; raise from it to cancel.

    Returns
    -------
    DepthResult
        Curves with bands (:meth:`DepthResult.curves`) and the best depth with its
        uncertainty and equivalent range (:meth:`DepthResult.summary`).  The profit at a
        grid depth equals :func:`core.evaluation.targeting.profit_curve` at that row count.
    """
    checked = _check_splits(splits)
    cost = _check_number(cost_per_treatment, "cost_per_treatment")
    vpr = None if value_per_response is None else _check_number(value_per_response,
                                                                "value_per_response")
    values = []
    for i, (split, (y, _, _)) in enumerate(zip(splits, checked)):
        if vpr is not None:
            values.append(y * vpr)
        else:
            value = split[3] if len(split) > 3 else None
            if value is None:
                raise ValueError(f"splits[{i}] has no per-row value: give value_per_response "
                                 "or TestSplit(..., value=...) for every split.")
            values.append(check_scores(value, f"splits[{i}].value", n=y.shape[0]))
    grid = check_positive_int(grid, "grid")
    if grid < 2:
        raise ValueError(f"grid must be at least 2 (both ends); got {grid}.")
    n_boot = check_positive_int(n_boot, "n_boot")
    check_choice(ties, "ties", TIES)
    level = check_level(level)
    fractions = np.linspace(0.0, 1.0, grid)
    names = tuple(checked[0][2])
    per_split = np.empty((len(checked), len(names), grid))
    replicates = np.zeros((n_boot, len(names), grid))
    total, done = n_boot * len(checked), 0
    for s, ((y, t, scores), v, stream) in enumerate(zip(checked, values,
                                                        _streams(random_state, len(checked)))):
        n = y.shape[0]
        ks = np.rint(fractions * n).astype(np.int64)
        # Value per response: as in profit_curve, no responder at all makes the incremental
        # responses (uplift_joint_abs) undefined -> nan, and a replicate that draws none too.
        needs_responders = vpr is not None
        if needs_responders and not y.any():
            warnings.warn(f"The profit of split {s} is undefined because there are no "
                          "responders (y is all 0); returning nan.", UndefinedMetricWarning,
                          stacklevel=2)
        ranked = []
        binary = outcome_code(y, t)[1] is None
        for j, name in enumerate(names):
            order, neg_sorted = ranking_order(scores[name], ties)
            t_sorted = t[order]
            v_sorted = np.ascontiguousarray(v[order], dtype=np.float64)
            per_split[s, j] = (np.nan if needs_responders and not y.any() else
                               _profit_at(t_sorted.astype(np.float64), v_sorted, neg_sorted, ks,
                                          ties, cost))
            if vpr is not None and binary:  # vpr × the responders (0/1 sums: a faster pass)
                ranked.append((order, (2 * t_sorted + y[order]).astype(np.int8), None,
                               neg_sorted))
            else:  # the per-row values' sums
                ranked.append((order, (2 * t_sorted).astype(np.int8), v_sorted, neg_sorted))
        out = np.empty(grid)  # the resampled incremental values, one ranking at a time
        responders = np.flatnonzero(y)
        both_arms = bool(t.any()) and not bool(t.all())  # kept by every stratified resample
        for b, w in enumerate(_stratified_counts(t, n_boot, as_generator(stream))):
            if not both_arms or (needs_responders and not w[responders].any()):
                replicates[b] = np.nan
                done += 1
                if progress is not None:  # may raise to cancel
                    progress(done, total)
                continue
            for j, (order, code, v_sorted, neg_sorted) in enumerate(ranked):
                ws = w[order]
                got = _profit_counted(code, v_sorted, vpr if v_sorted is None else 1.0,
                                      neg_sorted, ws, ks, ties, cost, out)
                if got is None:  # no numba: the repeated rows
                    got = _profit_at(np.repeat(code >= 2, ws).astype(np.float64),
                                     np.repeat(v[order], ws), np.repeat(neg_sorted, ws), ks,
                                     ties, cost)
                replicates[b, j] += got
            done += 1
            if progress is not None:
                progress(done, total)
    replicates /= len(checked)
    n_rows = float(np.mean([y.shape[0] for y, _, _ in checked]))
    for a in (per_split, replicates):
        a.setflags(write=False)
    return DepthResult(names, fractions, per_split, replicates, level, n_rows)
