r"""Comparing rankers with their uncertainty: a paired, arm-stratified bootstrap of AUUC,
the definition-sensitivity table and min/max bands over repeated splits.

Bootstrap (Efron & Tibshirani 1993; Davison & Hinkley 1997, §3.2 for strata)
-----------------------------------------------------------------------------
A replicate draws the test rows *with replacement inside each arm*: the :math:`|T|` treated
rows are resampled among the treated and the :math:`|C|` control rows among the control, so
every replicate keeps the experiment's arm sizes (the design is fixed; only who fell in each
arm is random).  Row :math:`i` appears :math:`w_i` times, with
:math:`(w_i)_{i\in T} \sim \mathrm{Multinomial}(|T|; 1/|T|, \dots)` and likewise for
:math:`C`, independently.  The **same** counts are used for every ranker (a *paired*
bootstrap), so differences between rankers are not blurred by sampling noise they share.

A resample of a ranked list is still ranked: with ``order`` the ranking of the original rows,
the replicate's ranking is ``np.repeat(order, w[order])`` — duplicates of one row carry its
score and sit next to each other.  Each replicate therefore costs :math:`O(n)` per ranker
(:meth:`core.evaluation.curves.UpliftCurves.resampled` with the counts ``w[order]``), never
a new sort, and never the repeated rows: separate definitions read their 101 points off the
counts, joint ones their curve's values along the copies (one compiled pass each).  This is
*exactly* the AUUC that :func:`core.evaluation.curves.auuc` gives on the expanded rows
``y[idx], t[idx], score[idx]`` with ``idx = np.repeat(np.arange(n), w)``:

* ``ties="average"``: copies of one row are tied with each other (and with the row's own
  ties), and every quantity at a tie-run boundary is order-free, so the result does not
  depend on where the copies sit.  When the original scores have no ties at all, the only
  ties of a replicate are copies of a single row, inside which the interpolated and the
  plain cumulative counts coincide; the faster ``"stable"`` accumulation is then used
  (equal up to floating-point rounding).
* ``ties="stable"``: tied rows keep their row order and **duplicates of one row stay
  adjacent** (row ``i``'s copies, then row ``j``'s for ``i < j``) — the stable order of the
  expanded rows above.

Percentile interval: the :math:`(1-\ell)/2` and :math:`(1+\ell)/2` quantiles of the replicate
AUUCs (``np.nanpercentile``, linear interpolation) for level :math:`\ell`; ``sd`` is the
replicates' standard deviation (ddof = 1).  Paired comparison of ranker :math:`A` with a
reference :math:`R`: replicate differences :math:`d_b = \mathrm{AUUC}_b(A) - \mathrm{AUUC}_b(R)`,
their percentile interval, and the two-sided bootstrap p-value

.. math::  p = \min\Bigl(1,\; 2\,\frac{\#\{b: d_b \text{ on the other side of 0 than }
           \hat d\}}{B}\Bigr),

where "the other side" includes 0 (:math:`d_b \le 0` when :math:`\hat d > 0`,
:math:`d_b \ge 0` when :math:`\hat d < 0`) and :math:`p = 1` when :math:`\hat d = 0`
(Efron & Tibshirani 1993, §15–16, the percentile test).  :math:`p = 0` means "below the
resolution :math:`2/B`", not zero.  The verdict uses the percentile interval shown beside
it: "better than" when its lower end is > 0, "worse than" when its upper end is < 0, else
"not distinguishable"; at the boundary the interval and ``p < 1 - level`` can disagree by
one replicate.

The bootstrap measures *test-set* sampling noise for fixed, already-trained rankers; the
variation from re-training on other splits is what :func:`band` shows.

References
----------
Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
Davison, A. C. & Hinkley, D. V. (1997). *Bootstrap Methods and their Application*. CUP.
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897 (min/max bands over 10 repetitions, §4.1).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

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
    undefined_reason,
)
from core.constants import CUTOFFS
from core.evaluation._kernel import TIES, add_draws, ranking_order
from core.evaluation.curves import DEFINITIONS, UpliftCurves, check_definitions, outcome_code

__all__ = ["BAND_KINDS", "BootstrapResult", "band", "bootstrap_auuc", "definition_ranks"]

PROGRESS_EVERY = 50  # replicates between two progress(done, total) calls, at most
#: rows × rankers between two calls, at least (~0.4 s of replicates): at 4M test rows every
#: replicate reports, so a progress bar moves about every second instead of every minute
PROGRESS_WORK = 5_000_000
BAND_KINDS = ("minmax", "95")


# ---------------------------------------------------------------------- helpers
def _check_score_mapping(scores: Mapping, n: int) -> dict[str, np.ndarray]:
    """Validated ``{name: float64 score}``; names are ``str``-ed and must stay distinct."""
    if not isinstance(scores, Mapping) or len(scores) == 0:
        what = "an empty mapping" if isinstance(scores, Mapping) else type(scores).__name__
        raise ValueError(
            f"scores must be a non-empty mapping of ranker name -> score array; got {what}."
        )
    out: dict[str, np.ndarray] = {}
    for name, s in scores.items():
        key = str(name)
        if key in out:
            raise ValueError(f"scores names two rankers {key!r} once converted to text.")
        out[key] = check_scores(s, f"scores[{key!r}]", n=n)
    return out


def _ranked(code: np.ndarray, score: np.ndarray, ties: str):
    """``(order, code_sorted, neg_sorted, has_ties)`` of one ranker."""
    order, neg_sorted = ranking_order(score, ties)
    has_ties = bool(np.any(neg_sorted[1:] == neg_sorted[:-1]))
    return order, code[order], neg_sorted, has_ties


def _stratified_counts(
    t: np.ndarray, n_boot: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """Multiplicity counts ``w`` (length n) of ``n_boot`` arm-stratified resamples.

    Per replicate: the treated rows' counts are the bincount of ``|T|`` uniform draws among
    the treated rows (a Multinomial(|T|, 1/|T|) vector), then the same for the control rows,
    in that order from ``rng``.  uint8 (:func:`~core.evaluation._kernel.add_draws`), or int64
    if a row is drawn over 255 times (impossible in an arm of ≤ 255 rows, astronomically
    unlikely in a larger one).
    Shared by :func:`bootstrap_auuc`, :func:`~core.evaluation.across_splits.profit_over_splits`
    and their brute-force tests.
    """
    arms = [rows for rows in (np.flatnonzero(t == 1), np.flatnonzero(t == 0)) if rows.size]
    for _ in range(n_boot):
        draws = [rng.integers(0, rows.shape[0], size=rows.shape[0]) for rows in arms]
        w = np.zeros(t.shape[0], dtype=np.uint8)
        if not all(add_draws(w, rows, d) for rows, d in zip(arms, draws, strict=True)):
            w = np.zeros(t.shape[0], dtype=np.int64)
            for rows, d in zip(arms, draws, strict=True):
                w[rows] = np.bincount(d, minlength=rows.shape[0])
        yield w


def _level_text(level: float) -> str:
    return f"{level * 100:g} %"


def _quiet_stats(fn, *args, **kwargs):
    """Run a nan-aware numpy statistic without its all-nan / dof RuntimeWarnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


# ---------------------------------------------------------------------- bootstrap
@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Point estimates and paired bootstrap replicates of AUUC for several rankers.

    Attributes
    ----------
    rankers : tuple of str
        Ranker names, in the order of the ``scores`` mapping.
    cutoffs : tuple of float
        Cut-offs of the AUUC (fraction of the ranking summed; the divisor never changes).
    definition, ties : str
        Curve definition and tie policy used.
    level : float
        Confidence level of the percentile intervals (0.95 by default).
    estimates : ndarray of shape (n_rankers, n_cutoffs)
        AUUC on the original test rows.
    replicates : ndarray of shape (n_boot, n_rankers, n_cutoffs)
        AUUC of every bootstrap replicate (``nan`` for a replicate without responders).
        Read-only.
    reference : str or None
        Default reference of :meth:`paired` (first ranker when ``None``).
    """

    rankers: tuple[str, ...]
    cutoffs: tuple[float, ...]
    definition: str
    ties: str
    level: float
    estimates: np.ndarray
    replicates: np.ndarray
    reference: str | None = None

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[0])

    def _interval(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = 100 * np.array([(1 - self.level) / 2, (1 + self.level) / 2])
        low, high = _quiet_stats(np.nanpercentile, values, q, axis=0)
        return low, high

    def table(self) -> pd.DataFrame:
        """One row per (ranker, cut-off): ``ranker``, ``cutoff``, ``auuc`` (original sample),
        ``ci_low``, ``ci_high`` (percentile interval at :attr:`level`) and ``sd``
        (bootstrap standard deviation)."""
        low, high = self._interval(self.replicates)
        sd = _quiet_stats(np.nanstd, self.replicates, axis=0, ddof=1)
        r, c = len(self.rankers), len(self.cutoffs)
        return pd.DataFrame({
            "ranker": np.repeat(self.rankers, c),
            "cutoff": np.tile(self.cutoffs, r),
            "auuc": self.estimates.reshape(-1),
            "ci_low": low.reshape(-1),
            "ci_high": high.reshape(-1),
            "sd": sd.reshape(-1),
        })

    def paired(self, reference: str | None = None) -> pd.DataFrame:
        """Each other ranker against ``reference`` on the same replicates.

        Columns ``ranker``, ``reference``, ``cutoff``, ``difference`` (AUUC − reference's,
        original sample), ``ci_low``, ``ci_high`` (percentile interval of the replicate
        differences), ``p_value`` (two-sided bootstrap p-value, see the module docstring)
        and ``verdict`` ("better than <ref> at 95 %", "worse than ...", "not
        distinguishable from ..."; "undefined" when the AUUC is ``nan``).  The reference
        itself has no row.
        """
        ref = reference if reference is not None else self.reference
        if ref is None:
            ref = self.rankers[0]
        ref = check_choice(ref, "reference", self.rankers)
        j_ref = self.rankers.index(ref)
        others = [j for j in range(len(self.rankers)) if j != j_ref]
        columns = ["ranker", "reference", "cutoff", "difference", "ci_low", "ci_high",
                   "p_value", "verdict"]
        if not others:
            return pd.DataFrame(columns=columns)
        diff = self.replicates[:, others, :] - self.replicates[:, [j_ref], :]
        point = self.estimates[others, :] - self.estimates[[j_ref], :]
        low, high = self._interval(diff)
        valid = np.isfinite(diff)
        n_valid = valid.sum(axis=0)
        below = ((diff <= 0) & valid).sum(axis=0)
        above = ((diff >= 0) & valid).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            other_side = np.where(point > 0, below, np.where(point < 0, above, n_valid))
            p = np.minimum(1.0, 2.0 * other_side / n_valid)
        p = np.where(point == 0, 1.0, p)
        p = np.where(np.isfinite(point) & (n_valid > 0), p, np.nan)
        lvl = _level_text(self.level)
        verdict = np.full(point.shape, f"not distinguishable from {ref} at {lvl}", dtype=object)
        verdict[low > 0] = f"better than {ref} at {lvl}"
        verdict[high < 0] = f"worse than {ref} at {lvl}"
        verdict[~np.isfinite(point) | ~np.isfinite(low) | ~np.isfinite(high)] = "undefined"
        c = len(self.cutoffs)
        return pd.DataFrame({
            "ranker": np.repeat([self.rankers[j] for j in others], c),
            "reference": ref,
            "cutoff": np.tile(self.cutoffs, len(others)),
            "difference": point.reshape(-1),
            "ci_low": low.reshape(-1),
            "ci_high": high.reshape(-1),
            "p_value": p.reshape(-1),
            "verdict": verdict.reshape(-1),
        }, columns=columns)


def bootstrap_auuc(
    y,
    t,
    scores: Mapping[str, np.ndarray],
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
    """Paired, arm-stratified bootstrap of the AUUC of several rankers on one test set.

    Parameters
    ----------
    y, t : array-like of shape (n,)
        Outcome (0/1, or a continuous amount) and binary treatment flag of the test rows.
    scores : mapping of str to array-like of shape (n,)
        Each ranker's score on the same rows (higher = target first).
    definition : str
        One of :data:`core.evaluation.curves.DEFINITIONS`.
    cutoffs : sequence of float in (0, 1], default=(0.1, 0.3, 0.5, 1.0)
        AUUC cut-offs (paper Table 10), mean convention of :func:`core.evaluation.curves.auuc`.
    n_boot : int, default=1000
        Number of replicates ``B``.
    ties : {"average", "stable"}, default="average"
        Tie policy (module docstring: how duplicates of a resampled row are ordered).
    level : float in (0, 1), default=0.95
        Level of the percentile intervals and of the verdicts.
    random_state : None, int, SeedSequence or Generator, default=0
        Source of the resamples; the same value gives the same replicates.
    reference : str, optional
        Default reference ranker of :meth:`BootstrapResult.paired`.
    progress : callable ``(done, total)``, optional
        Called after every 50 replicates (more often on large data: about every
        ``PROGRESS_WORK`` = 5M rows × rankers of work, down to every replicate) and after the
        last; raise from it to cancel (the exception propagates).

    Returns
    -------
    BootstrapResult
        ``estimates`` (rankers × cut-offs), ``replicates`` (B × rankers × cut-offs),
        :meth:`~BootstrapResult.table` and :meth:`~BootstrapResult.paired`.

    Notes
    -----
    Cost: one sort per ranker, then :math:`O(n)` per ranker and replicate (module
    docstring); 3 rankers × 1,000 replicates × 13,000 rows × 4 cut-offs take about 4–6 s
    on one core with untied scores, 7–10 s when every score is heavily tied (the
    tie-averaged accumulation is dearer).  Degenerate input (no treated rows, no control rows
    or no responders) warns
    with :class:`~core._validation.UndefinedMetricWarning` and returns all-``nan``
    estimates and replicates.  A replicate that happens to draw no responder gets ``nan``
    (one warning gives their count); the statistics ignore it.
    """
    y, t, _ = check_uplift_inputs(y, t, np.zeros(len(np.asarray(y))))
    named = _check_score_mapping(scores, y.shape[0])
    check_choice(definition, "definition", DEFINITIONS)
    cutoffs = check_cutoffs(cutoffs)
    n_boot = check_positive_int(n_boot, "n_boot")
    check_choice(ties, "ties", TIES)
    level = check_level(level)
    rankers = tuple(named)
    if reference is not None:
        check_choice(reference, "reference", rankers)
    check_progress(progress)
    rng = as_generator(random_state)

    code, y_values = outcome_code(y, t)
    shape = (len(rankers), len(cutoffs))
    estimates = np.full(shape, np.nan)
    replicates = np.full((n_boot,) + shape, np.nan)

    def result() -> BootstrapResult:
        estimates.setflags(write=False)
        replicates.setflags(write=False)
        return BootstrapResult(rankers, cutoffs, definition, ties, level, estimates,
                               replicates, reference)

    if (reason := undefined_reason(y, t)) is not None:
        warnings.warn(f"The bootstrap of AUUC ({definition}) is undefined because {reason}; "
                      "returning nan.", UndefinedMetricWarning, stacklevel=2)
        return result()

    ranked = []
    for j, name in enumerate(rankers):
        order, code_sorted, neg_sorted, has_ties = _ranked(code, named[name], ties)
        y_sorted = None if y_values is None else y_values[order]
        curves = UpliftCurves.from_sorted(code_sorted, neg_sorted, ties=ties,
                                          y_sorted=y_sorted)
        estimates[j] = [curves.auuc(definition, cutoff=c) for c in cutoffs]
        # Untied scores: a replicate's only ties are copies of one row, where the
        # tie-averaged and the stable accumulation agree — use the cheaper one.
        rep_ties = ties if has_ties else "stable"
        ranked.append((order, curves if rep_ties == ties else UpliftCurves.from_sorted(
            code_sorted, neg_sorted, ties=rep_ties, y_sorted=y_sorted)))

    empty = 0
    every = max(1, min(PROGRESS_EVERY, PROGRESS_WORK // (y.shape[0] * len(rankers))))
    for b, w in enumerate(_stratified_counts(t, n_boot, rng)):
        for j, (order, base) in enumerate(ranked):
            curves = base.resampled(w[order])
            if curves.n_responders == 0:  # same resample for every ranker
                empty += j == 0
                continue
            replicates[b, j] = curves.auucs(definition, cutoffs)
        done = b + 1
        if progress is not None and (done % every == 0 or done == n_boot):
            progress(done, n_boot)
    if empty:
        warnings.warn(f"{empty} of {n_boot} bootstrap replicates drew no responder; their AUUC "
                      "is nan and they are left out of the intervals.",
                      UndefinedMetricWarning, stacklevel=2)
    return result()


# ---------------------------------------------------------------------- definitions
def definition_ranks(
    y,
    t,
    scores: Mapping[str, np.ndarray],
    *,
    definitions: Iterable[str] = tuple(DEFINITIONS),
    cutoff: float = 1.0,
    ties: str = "average",
) -> pd.DataFrame:
    r"""AUUC and rank of every ranker under every curve definition: does the winner depend
    on the definition?

    Parameters
    ----------
    y, t : array-like of shape (n,)
    scores : mapping of str to array-like of shape (n,)
    definitions : iterable of str, default=all six of :data:`core.evaluation.curves.DEFINITIONS`
    cutoff : float in (0, 1], default=1.0
    ties : {"average", "stable"}, default="average"

    Returns
    -------
    pandas.DataFrame
        Indexed by definition (index name ``"definition"``).  Columns ``"AUUC <ranker>"``
        for each ranker, then ``"rank <ranker>"`` (1 = best, ties share the smallest rank,
        ``nan`` for an undefined AUUC), ``"winner"`` (the rank-1 ranker(s), joined by
        ``" = "``) and ``"winner changes?"``: the same value on every row, ``True`` when the
        winner is not the same under all the definitions shown.

    Notes
    -----
    Relative and absolute definitions weigh the arms differently (SPEC §2): with
    :math:`|T| \ne |C|`, ``uplift_sep_abs`` counts a control responder as much as a treated
    one while ``uplift_sep_rel`` weighs it by :math:`|T|/|C|`, so the best ranker can flip.
    """
    y, t, _ = check_uplift_inputs(y, t, np.zeros(len(np.asarray(y))))
    named = _check_score_mapping(scores, y.shape[0])
    definitions = check_definitions(definitions)
    cutoff = check_fraction(cutoff, "cutoff")
    check_choice(ties, "ties", TIES)

    values = _definition_values(y, t, named, definitions, cutoff, ties)
    return _ranks_table(values, definitions, list(named))


def _definition_values(y, t, named: Mapping[str, np.ndarray], definitions: Sequence[str],
                       cutoff: float, ties: str) -> np.ndarray:
    """AUUC (definitions × rankers) of validated input; ``nan`` (with a warning) when
    undefined."""
    code, y_values = outcome_code(y, t)
    values = np.full((len(definitions), len(named)), np.nan)
    for j, s in enumerate(named.values()):
        order, code_sorted, neg_sorted, _ = _ranked(code, s, ties)
        curves = UpliftCurves.from_sorted(
            code_sorted, neg_sorted, ties=ties,
            y_sorted=None if y_values is None else y_values[order])
        if curves.degenerate is not None:
            warnings.warn(f"AUUC is undefined because {curves.degenerate}; returning nan.",
                          UndefinedMetricWarning, stacklevel=3)
            break
        values[:, j] = [curves.auuc(d, cutoff=cutoff) for d in definitions]
    return values


def _ranks_table(values: np.ndarray, definitions: Sequence[str], names: list[str]) -> pd.DataFrame:
    """The :func:`definition_ranks` table of an AUUC array (definitions × rankers)."""
    auuc = pd.DataFrame(values, index=pd.Index(definitions, name="definition"),
                        columns=[f"AUUC {r}" for r in names])
    ranks = auuc.rank(axis=1, ascending=False, method="min")
    ranks.columns = [f"rank {r}" for r in names]
    winners = [" = ".join(r for r, k in zip(names, row) if k == 1) or None
               for row in ranks.to_numpy()]
    out = pd.concat([auuc, ranks], axis=1)
    out["winner"] = winners
    distinct = {w for w in winners if w is not None}
    out["winner changes?"] = len(distinct) > 1
    return out


# ---------------------------------------------------------------------- bands
def band(
    curves: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    kind: str = "minmax",
    grid: int | np.ndarray = 101,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Band of several curves (e.g. one per repeated train/test split) on a common grid.

    Each curve ``(x, v)`` (``x`` the fraction targeted, non-decreasing) is linearly
    interpolated to the grid (``np.interp``), then per grid point:

    * ``kind="minmax"``: low = min, high = max over the curves (the paper's band, Devriendt
      et al. 2020 §4.1, 10 repetitions);
    * ``kind="95"``: low, high = the 2.5 % and 97.5 % percentiles (``np.percentile``, linear).

    ``mid`` is the mean in both cases.

    Parameters
    ----------
    curves : sequence of (x, v) pairs
        Arrays of equal length per pair; lengths may differ between pairs (joint curves of
        splits with different ``n``).
    kind : {"minmax", "95"}, default="minmax"
    grid : int or array-like, default=101
        Number of evenly spaced points on [0, 1], or the grid itself.

    Returns
    -------
    x, low, mid, high : ndarray
        A ``nan`` in a curve propagates to the band at the points it touches.
    """
    check_choice(kind, "kind", BAND_KINDS)
    if isinstance(curves, (str, bytes)) or not isinstance(curves, Sequence) or not curves:
        raise ValueError("curves must be a non-empty list of (x, v) pairs; "
                         f"got {type(curves).__name__}.")
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, (bool, np.bool_)):
        x_grid = np.linspace(0.0, 1.0, check_positive_int(grid, "grid"))
    else:
        x_grid = check_scores(grid, "grid")
        if x_grid.shape[0] == 0:
            raise ValueError("grid must be a positive integer or a non-empty array; got [].")
    rows = []
    for i, pair in enumerate(curves):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"curves[{i}] must be an (x, v) pair; got {type(pair).__name__}.")
        x = check_scores(pair[0], f"curves[{i}] x")
        v = np.asarray(pair[1], dtype=np.float64)
        if v.ndim != 1 or v.shape[0] != x.shape[0] or x.shape[0] == 0:
            raise ValueError(f"curves[{i}] must hold two 1-d arrays of the same, non-zero "
                             f"length; got shapes {x.shape} and {v.shape}.")
        if np.any(np.diff(x) < 0):
            raise ValueError(f"curves[{i}] x must be non-decreasing (fraction targeted).")
        rows.append(np.interp(x_grid, x, v))
    stack = np.vstack(rows)
    mid = stack.mean(axis=0)
    if kind == "minmax":
        return x_grid, stack.min(axis=0), mid, stack.max(axis=0)
    low, high = np.percentile(stack, [2.5, 97.5], axis=0)
    return x_grid, low, mid, high
