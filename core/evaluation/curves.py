r"""Qini and uplift curves under the six definitions of the literature, AUUC and baselines.

Every function takes the fixed triple ``(y, t, score)``: outcome (0/1, or a continuous
amount such as spend: the curves then sum it), binary treatment flag and the ranker's score
(higher = target first).  One sort and one accumulation (:mod:`core.evaluation._kernel`)
feed all six definitions; :class:`UpliftCurves` keeps them so a page can ask for every
definition and cut-off without re-sorting.

Notation (Devriendt, Van Belle, Guns & Verbeke 2020, §2, Table 2): ``T``/``C`` the treated
and control rows; for the *joint* ranking of all rows, :math:`N^T(k), N^C(k)` count treated
and control rows in the top :math:`k` and :math:`R^T(k), R^C(k)` the responders among them;
for the *separate* rankings of ``T`` alone and ``C`` alone, :math:`R(T, k)` and
:math:`R(C, k)` count responders in the top :math:`k` of each arm.

==================== ========== =====================================================
name                 ranking    :math:`V`
==================== ========== =====================================================
``qini_sep_abs``     separate   :math:`R(T,p|T|) - R(C,p|C|)\,|T|/|C|`
``uplift_sep_abs``   separate   :math:`R(T,p|T|) - R(C,p|C|)`
``uplift_sep_rel``   separate   :math:`R(T,p|T|)/|T| - R(C,p|C|)/|C|`
``qini_joint_abs``   joint      :math:`R^T(k) - R^C(k)\,N^T(k)/N^C(k)`
``uplift_joint_abs`` joint      :math:`(R^T/N^T - R^C/N^C)(k)\,(N^T + N^C)(k)`
``uplift_joint_rel`` joint      :math:`R^T(k)/|T| - R^C(k)/|C|`
==================== ========== =====================================================

Choices the paper leaves open (SPEC §2), made here once for every function:

* **Rounding** — in the separate setting :math:`p|T|` becomes the nearest row count,
  halves rounded up: :math:`k_T = \lfloor p|T| + 1/2 \rfloor` (likewise :math:`k_C`).
* **Undefined ratios** — at the top of a joint ranking :math:`N^C(k)` or :math:`N^T(k)` can be
  0; ``qini_joint_abs`` and ``uplift_joint_abs`` are then defined as :math:`V(k) = 0`
  (nothing has been targeted from that arm yet, so no incremental effect is measured).
* **Ties** — ``ties="average"`` (the default) gives the expected curve over all orders of
  tied rows: cumulative counts are interpolated inside each run of equal scores (their
  hypergeometric mean), exact for the linear definitions (``uplift_joint_rel``, all three
  separate ones) and at every run boundary for all six; for the two joint ratio definitions
  the value inside a run is the ratio of expected counts (a plug-in approximation).
  ``ties="stable"`` keeps tied rows in row order.  Average is the default because a stable
  order lets the file's row order leak into the result (a constant score would show
  "uplift" on a file sorted by treatment).
* **Degenerate input** — no treated rows, no control rows or no responders at all: the
  curve is undefined; an :class:`~core._validation.UndefinedMetricWarning` is issued and
  ``nan`` returned.

AUUC follows the paper's mean convention (SPEC §2): separate
:math:`\mathrm{AUUC}@c = \frac{1}{100}\sum_{p=1}^{\lfloor 100c \rfloor} V(p/100)`, joint
:math:`\mathrm{AUUC}@c = \frac{1}{n}\sum_{k=1}^{\lfloor cn \rfloor} V(k)` — the divisor stays
the same at every cut-off, so AUUC@10 % is much smaller than AUUC@100 %.

References
----------
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897.
Radcliffe, N. J. (2007). Using control groups to target on predicted lift. *Direct Marketing
Analytics Journal*, 1, 14–21.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from core._validation import (
    UndefinedMetricWarning,
    check_choice,
    check_cutoffs,
    check_fraction,
    check_positive_int,
    check_uplift_inputs,
    reason_from_counts,
)
from core.constants import CUTOFFS, auuc_column
from core.evaluation._kernel import (
    TIES,
    arm_sums_at,
    cumulative,
    code_totals,
    counted_at,
    cumulative_at,
    joint_cumulatives,
    rank_codes,
    ranking_order,
    joint_values,
    round_half_up,
    tie_run_ends,
    tie_runs,
)

__all__ = [
    "DEFINITIONS",
    "Definition",
    "UpliftCurves",
    "auuc",
    "auuc_above_random",
    "auuc_table",
    "curves_from_counts",
    "perfect_auuc",
    "perfect_curve",
    "outcome_code",
    "perfect_score",
    "random_auuc",
    "random_curve",
    "uplift_curve",
]

SEPARATE_POINTS = 100  # the paper's grid p = 1/100, ..., 100/100


@dataclass(frozen=True)
class Definition:
    """Metadata of one curve definition (for tables, legends and the formula on screen)."""

    name: str
    setting: str  # "joint" or "separate"
    kind: str  # "qini" or "uplift"
    units: str  # "absolute" or "relative"
    formula: str  # LaTeX
    summary: str = field(default="")

    @property
    def title(self) -> str:
        """Plain-words name, e.g. ``"Uplift curve, separate, relative"``."""
        return f"{self.kind.capitalize()} curve, {self.setting}, {self.units}"

    @property
    def label(self) -> str:
        """Title with the id, e.g. ``"Uplift curve, separate, relative (uplift_sep_rel)"``."""
        return f"{self.title} ({self.name})"

    @property
    def unit(self) -> str:
        """What the curve's value counts, for axis titles and tables: a share of an arm
        (relative), incremental responders (Qini), a difference in responders (uplift,
        separate, absolute), or the top's rate difference times the rows targeted (uplift,
        joint, absolute: it can exceed the responders there are, early in a small arm).

        >>> [d.unit for d in DEFINITIONS.values()]  # doctest: +NORMALIZE_WHITESPACE
        ['share of arm', 'incremental responders', 'rate difference × rows', 'share of arm',
         'difference in responders', 'incremental responders']
        """
        if self.units == "relative":
            return "share of arm"
        if self.kind == "qini":
            return "incremental responders"
        # short: it is an axis title of one of six panels on Definitions
        return ("rate difference × rows" if self.setting == "joint"
                else "difference in responders")


def _definition(name: str, formula: str, summary: str) -> Definition:
    """The :class:`Definition` called ``name``: kind, setting and units are read off the name
    (``"<kind>_<joint|sep>_<rel|abs>"``)."""
    kind, setting, units = name.split("_")
    return Definition(name, {"sep": "separate"}.get(setting, setting), kind,
                      {"rel": "relative", "abs": "absolute"}[units], formula, summary)


DEFINITIONS: dict[str, Definition] = {
    d.name: d
    for d in (
        _definition("uplift_joint_rel",
                    r"V(k) = \frac{R^T(D,k)}{|T|} - \frac{R^C(D,k)}{|C|}",
                    "Response-rate difference; Qini and uplift coincide. Shifts with the arm "
                    "split (paper §4.2)."),
        _definition("qini_joint_abs",
                    r"V(k) = R^T(D,k) - R^C(D,k)\,\frac{N^T(D,k)}{N^C(D,k)}",
                    "Incremental responders, control scaled to the treated count in the top k."),
        _definition("uplift_joint_abs",
                    r"V(k) = \left(\frac{R^T}{N^T} - \frac{R^C}{N^C}\right)(D,k)\,(N^T + N^C)(D,k)",
                    "Rate difference in the top k times the number targeted."),
        _definition("uplift_sep_rel",
                    r"V(p) = \frac{R(T,p|T|)}{|T|} - \frac{R(C,p|C|)}{|C|}",
                    "Each arm ranked alone; response-rate difference. Robust to the arm split."),
        _definition("uplift_sep_abs",
                    r"V(p) = R(T,p|T|) - R(C,p|C|)",
                    "Each arm ranked alone; raw responder difference (swings with the split)."),
        _definition("qini_sep_abs",
                    r"V(p) = R(T,p|T|) - R(C,p|C|)\,\frac{|T|}{|C|}",
                    "Radcliffe's original Qini curve: control responders scaled by |T|/|C|."),
    )
}


class UpliftCurves:
    """All six curves of one ranking, from a single sort.

    Parameters
    ----------
    y, t : array-like of shape (n,)
        Outcome (0/1, or a finite continuous amount: the curves then sum it) and treatment
        flag (0/1, bool, or numbers equal to 0/1).
    score : array-like of shape (n,)
        Ranker score; higher means "target first". Must be finite.
    ties : {"average", "stable"}, default="average"
        Tie policy, see the module docstring.
    points : int, default=100
        Grid size of the separate curves (``p = 1/points, ..., 1``); AUUC always uses the
        paper's 100-point grid.

    Notes
    -----
    Cost: one sort (with numba a stable radix sort of the scores' keys, ``O(n)``, for any
    outcome; without numba NumPy's stable argsort) plus ``O(n)`` accumulations; every curve
    and AUUC afterwards is ``O(n)`` (joint) or ``O(points)`` (separate).
    """

    def __init__(self, y, t, score, *, ties: str = "average", points: int = SEPARATE_POINTS):
        y, t, score = check_uplift_inputs(y, t, score, keep_float32=True)
        check_choice(ties, "ties", TIES)
        check_positive_int(points, "points")
        code, y_values = outcome_code(y, t)
        if score.dtype != np.float32:
            score = score.astype(np.float64, copy=False)
        if y_values is None:  # 0/1 outcome: a radix sort of the scores' keys with the codes
            self._accumulate(*rank_codes(score, code), ties, int(points))
            return
        order, neg_sorted = ranking_order(score, ties)
        self._accumulate(code[order], neg_sorted, ties, int(points), y_values[order])

    @classmethod
    def from_sorted(cls, code_sorted: np.ndarray, neg_sorted: np.ndarray, *,
                    ties: str = "average", points: int = SEPARATE_POINTS,
                    y_sorted: np.ndarray | None = None) -> UpliftCurves:
        """Curves of rows that are *already* in ranking order (no validation, no sort).

        ``code_sorted`` holds ``2·t + y`` per row in rank order (3 = TR, 2 = TNR, 1 = CR,
        0 = CNR) and ``neg_sorted`` the negated scores (ascending).  Used by the bootstrap
        (see also :meth:`resampled`).  A continuous outcome comes as ``y_sorted`` (see
        :func:`outcome_code`).
        """
        self = cls.__new__(cls)
        self._accumulate(code_sorted, neg_sorted, ties, points, y_sorted)
        return self

    def resampled(self, counts: np.ndarray) -> UpliftCurves:
        """The curves of this ranking with row ``i`` (in rank order) repeated ``counts[i]``
        times — a bootstrap resample, still ranked — with the same numbers as
        :meth:`from_sorted` of the ``np.repeat``-ed rows.

        Separate definitions never build the repeated rows: each arm's responders at the
        curve's points are read off its counts (:func:`~core.evaluation._kernel.counted_at`,
        one pass), with the arm's rows, outcomes and tie runs found once per ranking and
        shared by every resample.  A joint definition's values are read off the copies in
        one compiled pass (:func:`~core.evaluation._kernel.joint_values`, the same bits);
        only without numba are the repeated rows built.  A resample of a resample
        (``counts`` over its ``n`` repeated rows) is the original ranking resampled with the
        composed counts.
        """
        counts = np.asarray(counts)
        if (counts.shape != (self.n,) or counts.dtype.kind not in "iu"
                or (counts.size and counts.min() < 0)):
            raise ValueError(f"counts must be {self.n} integer row multiplicities ≥ 0 (one per "
                             f"row in rank order); got shape {counts.shape}, dtype "
                             f"{counts.dtype}.")
        if counts.dtype != np.uint8:  # the bootstrap's one-byte counts pass as they are
            counts = counts.astype(np.int64, copy=False)
        if self._counts is not None:
            # A resample of a resample: row i's copies are adjacent in rank order, so the
            # composed multiplicity of an original row is the sum of its copies' counts.
            cum = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
            ends = np.concatenate(([0], np.cumsum(self._counts, dtype=np.int64)))
            return self._layout.resampled(cum[ends[1:]] - cum[ends[:-1]])
        new = type(self).__new__(type(self))
        code, y_values, neg_sorted = self._sorted
        new.ties, new.points, new._sorted, new._counts = (self.ties, self.points, self._sorted,
                                                          counts)
        new._joint, new._joint_cache, new._sep = None, {}, {}
        new._layout = self  # the ranking whose arm layout it shares (found on first use)
        per_code = new._per_code = code_totals(code, counts)  # CNR, CR, TNR, TR
        new.n = int(per_code.sum())
        new.n_t = int(per_code[2] + per_code[3])
        new.n_c = new.n - new.n_t
        new.n_responders = (int(per_code[1] + per_code[3]) if y_values is None
                            else int(counts[y_values != 0].sum()))
        return new

    @classmethod
    def unranked(cls, y, t, *, points: int = SEPARATE_POINTS) -> UpliftCurves:
        """The data without a ranking (one tied score for every row), for what no ranking
        changes: :meth:`endpoint`, :meth:`random_curve`, :meth:`random_auuc`.  No sort: with
        one tied score the rows in any order are in ranking order."""
        y, t, _ = check_uplift_inputs(y, t, np.zeros(len(np.asarray(y))))
        code, y_values = outcome_code(y, t)
        return cls.from_sorted(code, np.zeros(code.shape[0]), ties="average", points=points,
                               y_sorted=y_values)

    def _accumulate(self, code: np.ndarray, neg_sorted: np.ndarray, ties: str, points: int,
                    y_values: np.ndarray | None = None):
        """``code`` = 2·t + y in rank order; with ``y_values`` (a continuous outcome, in rank
        order) R^T and R^C are sums of y instead of counts of responders.

        Only the arm totals are counted here; a joint definition's values are computed on
        first use (one compiled pass each, :meth:`_fill_joint`; without numba from the
        cumulative counts of :meth:`_joint_arrays`) and the separate rankings' counts
        likewise, so a caller
        that reads only separate definitions (the bootstrap on the Compare page's default)
        never pays for the other.
        """
        self.ties = ties
        self.points = points
        self._counts = None  # row multiplicities of a resample (:meth:`resampled`)
        self.n = int(code.shape[0])
        per_code = self._per_code = code_totals(code)  # CNR, CR, TNR, TR
        self.n_t = int(per_code[2] + per_code[3])
        self.n_c = self.n - self.n_t
        self.n_responders = (int(per_code[1] + per_code[3]) if y_values is None
                             else int(np.count_nonzero(y_values)))
        self._sorted = (code, y_values, neg_sorted)  # for both rankings, lazily
        #: each arm's rows, outcomes and tie runs (for resamples); a resample: its ranking
        self._layout: dict | UpliftCurves | None = None
        self._joint: tuple[np.ndarray, ...] | None = None
        #: (arm, grid points' bytes) → the arm's responders (or outcome sums) at the grid
        self._sep: dict[tuple[str, bytes], np.ndarray] = {}
        self._joint_cache: dict[str, np.ndarray] = {}
        self._buffer: np.ndarray | None = None  # its resamples' joint V (:meth:`_scratch`)

    def _joint_arrays(self) -> tuple[np.ndarray, ...]:
        """``(k, N^T, R^T, N^C, R^C)`` of the joint ranking for ``k = 0..n``, built once (the
        numpy path of the joint values; with numba :meth:`_fill_joint` needs none of them).

        Three accumulations — cumulative N^T, R^T and R (all responders) — give the four
        counts: N^C = k − N^T and R^C = R − R^T.
        """
        if self._joint is None:
            code, y_values, neg_sorted = self._sorted
            if self._counts is not None:  # the repeated rows, built for the joint ranking only
                code, neg_sorted = np.repeat(code, self._counts), np.repeat(neg_sorted,
                                                                             self._counts)
                y_values = None if y_values is None else np.repeat(y_values, self._counts)
            k = np.arange(self.n + 1, dtype=np.float64)
            if y_values is None:
                nt, rt, responders = joint_cumulatives(code, neg_sorted, self.ties)
            else:
                t_sorted = code >= 2
                runs = tie_runs(neg_sorted, self.ties)
                nt = cumulative(t_sorted, runs)
                rt = cumulative(t_sorted * y_values, runs)
                responders = cumulative(y_values, runs)
            self._joint = (k, nt, rt, k - nt, responders - rt)
        return self._joint

    _k = property(lambda self: self._joint_arrays()[0])
    _nt = property(lambda self: self._joint_arrays()[1])
    _rt = property(lambda self: self._joint_arrays()[2])
    _nc = property(lambda self: self._joint_arrays()[3])
    _rc = property(lambda self: self._joint_arrays()[4])

    # ------------------------------------------------------------------ helpers
    @property
    def degenerate(self) -> str | None:
        """Why the curves are undefined (no treated / control rows, no responders), or None."""
        return reason_from_counts(self.n_t, self.n_c, self.n_responders != 0)

    def _warn_if_degenerate(self, what: str) -> bool:
        reason = self.degenerate
        if reason is not None:
            warnings.warn(
                f"{what} is undefined because {reason}; returning nan.",
                UndefinedMetricWarning,
                stacklevel=3,
            )
            return True
        return False

    def _joint_values(self, name: str) -> np.ndarray:
        if name not in self._joint_cache:
            self._joint_cache[name] = self._compute_joint(name)
        return self._joint_cache[name]

    def _fill_joint(self, name: str, out: np.ndarray) -> bool:
        """``out[k] = V(k)`` for ``k < len(out)`` in one compiled pass over the rows (and a
        resample's counts) — :func:`~core.evaluation._kernel.joint_values`, the bits of the
        numpy formulas below without their arrays; False without numba (or for sorted keys
        the compiled pass does not take)."""
        code, y_values, neg_sorted = self._sorted
        return joint_values(code, self._counts, y_values, neg_sorted, self.ties,
                            self._JOINT_KIND[name], self.n_t, self.n_c, out)

    def _compute_joint(self, name: str) -> np.ndarray:
        out = np.empty(self.n + 1)
        if self._fill_joint(name, out):
            return out
        nt, nc, rt, rc = self._nt, self._nc, self._rt, self._rc
        if name == "uplift_joint_rel":
            return rt / self.n_t - rc / self.n_c
        with np.errstate(divide="ignore", invalid="ignore"):
            if name == "qini_joint_abs":
                out = np.divide(nt, nc)
                out *= rc
                np.subtract(rt, out, out=out)
            else:  # uplift_joint_abs; N^T + N^C = k
                out = np.divide(rt, nt)
                out -= rc / nc
                out *= self._k
        # Undefined ratio at the top: V = 0 (see module doc).  N^T and N^C never decrease,
        # so the rows where one of them is still 0 are a prefix.
        out[: max(np.searchsorted(nt, 0.0, side="right"),
                  np.searchsorted(nc, 0.0, side="right"))] = 0.0
        return out

    def _separate_responders(self, arm: str, k: np.ndarray) -> np.ndarray:
        """R(T, k) (arm "t") or R(C, k) (arm "c") at the counts ``k`` (a curve's grid points),
        found once per grid.  The treated rows, taken in joint order, are already ranked by
        score (ties in row order for "stable") — no second sort; only the grid points are
        ever read, so ties are resolved there (cumulative_at).  With numba one pass over the
        joint ranking reads them (:func:`~core.evaluation._kernel.arm_sums_at`; a resample:
        over the arm's rows and counts, :func:`~core.evaluation._kernel.counted_at`)."""
        k = np.asarray(k, dtype=np.int64)
        key = (arm, k.tobytes())
        known = self._sep.get(key)
        if known is not None:
            return known
        code, y_values, neg_sorted = self._sorted
        if self._counts is not None:  # a resample: one pass over the arm's counts
            rows, values, runs = self._layout._arm_layout()[arm]
            sums = counted_at(self._counts, rows, values, runs, k)
        else:
            sums = arm_sums_at(code, y_values, neg_sorted, self.ties, arm == "t", k)
            if sums is None:  # numpy: the arm's rows gathered, their cumulative sums read
                mask = code >= 2 if arm == "t" else code < 2
                y_sorted = (code & 1).astype(bool) if y_values is None else y_values
                sums = cumulative_at(cumulative(y_sorted[mask], None), neg_sorted[mask], k,
                                     self.ties)
        self._sep[key] = sums
        return sums

    def _arm_layout(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """Per arm (``"t"``, ``"c"``): its rows' positions in rank order, their outcomes (0/1
        or amounts) and, for ``ties="average"``, the ends of the arm's tie runs — all that
        :meth:`resampled` needs besides the counts, found once per ranking."""
        if self._layout is None:
            code, y_values, neg_sorted = self._sorted
            treated = code >= 2
            y_sorted = (code & 1) if y_values is None else y_values
            self._layout = {}
            for arm, mask in (("t", treated), ("c", ~treated)):
                rows = np.flatnonzero(mask)
                runs = tie_run_ends(neg_sorted[rows]) if self.ties == "average" else None
                self._layout[arm] = (rows, y_sorted[rows], runs)
        return self._layout

    def _separate_values(self, name: str, points: int) -> np.ndarray:
        j = np.arange(points + 1)
        kt = round_half_up(j, self.n_t, points)
        kc = round_half_up(j, self.n_c, points)
        return self._separate_formula(name, self._separate_responders("t", kt),
                                      self._separate_responders("c", kc))

    def _separate_formula(self, name: str, r_t, r_c):
        """A separate definition's ``V`` from the responders R(T, p|T|), R(C, p|C|)."""
        if name == "uplift_sep_rel":
            return r_t / self.n_t - r_c / self.n_c
        if name == "uplift_sep_abs":
            return r_t - r_c
        return r_t - r_c * (self.n_t / self.n_c)  # qini_sep_abs

    def _grid(self, definition: str) -> np.ndarray:
        """``x`` of a definition's curve: ``k/n`` (joint) or ``p`` (separate), from 0."""
        if DEFINITIONS[definition].setting == "joint":
            return np.arange(self.n + 1) / self.n
        return np.arange(self.points + 1) / self.points

    # ------------------------------------------------------------------ public
    def curve(self, definition: str) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(x, v)``: fraction targeted (starting at 0) and the curve value.

        Joint definitions have ``n + 1`` points (``x = k/n``); separate ones ``points + 1``
        (``x = p``).  Undefined input warns and returns ``v`` full of ``nan``.
        """
        d = DEFINITIONS[check_choice(definition, "definition", DEFINITIONS)]
        x = self._grid(definition)
        if self._warn_if_degenerate(f"The {definition} curve"):
            return x, np.full(x.shape, np.nan)
        if d.setting == "joint":
            return x, self._joint_values(definition)
        return x, self._separate_values(definition, self.points)

    def random_curve(self, definition: str) -> tuple[np.ndarray, np.ndarray]:
        """The random-targeting line on this data: :meth:`curve`'s ``x`` and ``x·V(1)``
        (:meth:`endpoint`; no ranking is read)."""
        check_choice(definition, "definition", DEFINITIONS)
        x = self._grid(definition)
        if self._warn_if_degenerate(f"The random {definition} line"):
            return x, np.full(x.shape, np.nan)
        return x, x * self.endpoint(definition)

    def auuc(self, definition: str, *, cutoff: float = 1.0) -> float:
        """Area under the curve up to ``cutoff`` with the paper's mean convention."""
        check_choice(definition, "definition", DEFINITIONS)
        cutoff = check_fraction(cutoff, "cutoff")
        if self._warn_if_degenerate(f"AUUC ({definition})"):
            return float("nan")
        self._warn_if_no_point(definition, [cutoff])
        return self._areas(definition, [cutoff])[0]

    def auucs(self, definition: str, cutoffs) -> list[float]:
        """:meth:`auuc` at several cut-offs (one pass over a resample's joint counts)."""
        d = check_choice(definition, "definition", DEFINITIONS)
        cutoffs = [check_fraction(c, "cutoff") for c in cutoffs]
        if self._warn_if_degenerate(f"AUUC ({d})"):
            return [float("nan")] * len(cutoffs)
        self._warn_if_no_point(d, cutoffs)
        return self._areas(d, cutoffs)

    def _last_point(self, definition: str, cutoff: float) -> tuple[int, int]:
        """``(M, K)``: the curve's grid size (``n`` joint, 100 separate) and the last of
        its points an AUUC at ``cutoff`` sums (SPEC §2; 0 when none is)."""
        grid = self.n if DEFINITIONS[definition].setting == "joint" else SEPARATE_POINTS
        return grid, int(np.floor(cutoff * grid + 1e-9))

    def _warn_if_no_point(self, definition: str, cutoffs: list[float]) -> None:
        """Warn when a cut-off lies before the curve's first point (``1/n`` joint, 1 %
        separate): its AUUC is the empty sum, 0, which must not pass for a result."""
        empty = [c for c in cutoffs if self._last_point(definition, c)[1] < 1]
        if empty:
            grid = self._last_point(definition, empty[0])[0]
            warnings.warn(
                f"AUUC ({definition}) at cut-off {min(empty):g} keeps no point of the curve "
                f"(its first point is at 1/{grid:,} = {1 / grid:.3g}): the area is the empty "
                "sum, 0.", UndefinedMetricWarning, stacklevel=3)

    #: the code of each joint definition in the compiled resample pass
    _JOINT_KIND = {"uplift_joint_rel": 0, "qini_joint_abs": 1, "uplift_joint_abs": 2}

    def _areas(self, definition: str, cutoffs: list[float]) -> list[float]:
        if not cutoffs:
            return []
        lasts = [self._last_point(definition, c)[1] for c in cutoffs]
        if DEFINITIONS[definition].setting == "joint":
            v = self._joint_cache.get(definition)
            if v is None and self._counts is not None:
                # a resample: V up to the last cut-off, in its ranking's buffer
                v = self._layout._scratch(max(lasts) + 1)
                if not self._fill_joint(definition, v):
                    v = None
            if v is None:
                v = self._joint_values(definition)
            return [float(v[1 : last + 1].sum() / self.n) for last in lasts]
        v = self._separate_values(definition, SEPARATE_POINTS)
        return [float(v[1 : last + 1].sum() / SEPARATE_POINTS) for last in lasts]

    def _scratch(self, size: int) -> np.ndarray:
        """A float64 buffer of ``size`` kept by this ranking and reused by its resamples (a
        fresh array of millions of rows page-faults on every replicate).  One thread per
        ranking: the compiled pass that fills it releases the GIL (``bootstrap_auuc`` builds
        its own rankings)."""
        if self._buffer is None or self._buffer.shape[0] < size:
            self._buffer = np.empty(max(size, self.n + 1))
        return self._buffer[:size]

    def random_auuc(self, definition: str, *, cutoff: float = 1.0) -> float:
        r"""AUUC of the random baseline (straight line from (0, 0) to (1, V(1))).

        :math:`V(1)\,K(K+1)/(2M^2)` with ``K`` the last point kept and ``M`` the grid size
        (``n`` joint, 100 separate) — the same convention as :meth:`auuc`.
        """
        d = DEFINITIONS[check_choice(definition, "definition", DEFINITIONS)]
        cutoff = check_fraction(cutoff, "cutoff")
        if self._warn_if_degenerate(f"Random AUUC ({definition})"):
            return float("nan")
        self._warn_if_no_point(definition, [cutoff])
        grid, last = self._last_point(definition, cutoff)
        return float(self.endpoint(definition) * (last * (last + 1) / 2) / grid**2)

    #: the separate definition with the same ``V(1)`` (``uplift_joint_abs``: times ``n``)
    _SAME_END = {"uplift_joint_rel": "uplift_sep_rel", "qini_joint_abs": "qini_sep_abs",
                 "uplift_joint_abs": "uplift_sep_rel"}

    def endpoint(self, definition: str) -> float:
        """``V`` at 100 % targeted: the same for every ranking of the data, so it is read off
        the arms' totals (no curve is built).  At ``k = n`` the joint counts are the arm
        totals, as at ``p = 1`` the separate ones: ``uplift_joint_rel`` ends where
        ``uplift_sep_rel`` does, ``qini_joint_abs`` where ``qini_sep_abs`` does, and
        ``uplift_joint_abs`` at ``n`` times ``uplift_joint_rel``'s end."""
        check_choice(definition, "definition", DEFINITIONS)
        if self._warn_if_degenerate(f"V(1) ({definition})"):
            return float("nan")
        code, y_values, _ = self._sorted
        if y_values is None:
            r_t, r_c = int(self._per_code[3]), int(self._per_code[1])
        else:
            treated = code >= 2
            yw = y_values if self._counts is None else y_values * self._counts
            r_t, r_c = float(yw[treated].sum()), float(yw[~treated].sum())
        v = self._separate_formula(self._SAME_END.get(definition, definition), r_t, r_c)
        return float(v * self.n if definition == "uplift_joint_abs" else v)


# ---------------------------------------------------------------------- functional API
def uplift_curve(
    y, t, score, *, definition: str, ties: str = "average", points: int = SEPARATE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Qini / uplift curve of a ranking under one of the six definitions.

    Parameters
    ----------
    y, t : array-like of shape (n,)
        Outcome (0/1, or a continuous amount) and binary treatment flag.
    score : array-like of shape (n,)
        Ranker score (higher = target first).
    definition : str
        One of :data:`DEFINITIONS` (``"uplift_joint_rel"``, ``"qini_joint_abs"``,
        ``"uplift_joint_abs"``, ``"uplift_sep_rel"``, ``"uplift_sep_abs"``,
        ``"qini_sep_abs"``); formulas in the module docstring.
    ties : {"average", "stable"}, default="average"
        Expected curve over the orders of tied rows, or row order inside ties.
    points : int, default=100
        Grid size of the separate definitions.

    Returns
    -------
    x : ndarray
        Fraction of the population targeted, from 0 to 1.
    v : ndarray
        Curve value at each ``x`` (``v[0] = 0``).

    Examples
    --------
    Paper Table 1 — rows (y, t) = (0,1), (1,1), (1,0), (1,1) in rank order:

    >>> x, v = uplift_curve([0, 1, 1, 1], [1, 1, 0, 1], [4, 3, 2, 1],
    ...                     definition="uplift_joint_rel")
    >>> v.tolist()
    [0.0, 0.0, 0.3333333333333333, -0.6666666666666667, -0.33333333333333337]
    """
    return _curves(y, t, score, ties=ties, points=points).curve(definition)


def curves_from_counts(neg: np.ndarray, counts: np.ndarray, binary: bool, *,
                       points: int = SEPARATE_POINTS) -> UpliftCurves:
    """:class:`UpliftCurves` (``ties="average"``) of the rows that tie-run or bin counts
    describe (:mod:`core.evaluation._dask`), rebuilt in ranking order: inside a run the
    order of its rows is irrelevant, so each run lists its TR, TNR, CR, CNR rows in that
    order (an amount: the run's treated sum on its first treated row, the control sum on its
    first control row)."""
    if binary:
        sizes = counts.sum(axis=1, dtype=np.int64)
        code = np.repeat(np.tile(np.array([3, 2, 1, 0], dtype=np.int8), neg.shape[0]),
                         counts.ravel())
        return UpliftCurves.from_sorted(code, np.repeat(neg, sizes), ties="average",
                                        points=points)
    n_t = np.rint(counts[:, 0]).astype(np.int64)
    n_c = np.rint(counts[:, 1]).astype(np.int64)
    sizes = n_t + n_c
    code = np.repeat(np.tile(np.array([2, 0], dtype=np.int8), neg.shape[0]),
                     np.column_stack([n_t, n_c]).ravel())
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    y_sorted = np.zeros(int(sizes.sum()), dtype=np.float64)
    y_sorted[starts[n_t > 0]] = counts[n_t > 0, 2]
    y_sorted[(starts + n_t)[n_c > 0]] = counts[n_c > 0, 3]
    return UpliftCurves.from_sorted(code, np.repeat(neg, sizes), ties="average",
                                    points=points, y_sorted=y_sorted)


def _curves(y, t, score, *, ties: str, points: int = SEPARATE_POINTS) -> UpliftCurves:
    """:class:`UpliftCurves` of numpy-like input, or of Dask arrays / Series: then the tie
    runs are counted per partition on the current Dask client and merged exactly
    (:mod:`core.evaluation._dask`; ``ties="stable"`` computes the columns into memory, as
    only the whole column has the row order)."""
    from core.evaluation import _dask

    if _dask.is_dask(y, t, score):
        check_choice(ties, "ties", TIES)
        check_positive_int(points, "points")
        if ties == "average":
            return curves_from_counts(*_dask.tie_run_counts(y, t, score), points=points)
        import dask

        y, t, score = dask.compute(y, t, score)
    return UpliftCurves(y, t, score, ties=ties, points=points)


def auuc(
    y, t, score, *, definition: str, cutoff: float = 1.0, ties: str = "average"
) -> float:
    r"""Area under the uplift curve (AUUC), mean convention, up to a cut-off.

    Separate: :math:`\frac{1}{100}\sum_{p=1}^{\lfloor 100c\rfloor} V(p/100)`;
    joint: :math:`\frac{1}{n}\sum_{k=1}^{\lfloor cn\rfloor} V(k)` (SPEC §2; Devriendt et al.
    2020, Table 10 reports AUUC at 10, 30, 50 and 100 %).

    Parameters
    ----------
    y, t, score : array-like of shape (n,)
    definition : str
        One of :data:`DEFINITIONS`.
    cutoff : float in (0, 1], default=1.0
        Fraction of the ranking whose points enter the sum (the divisor does not change).
    ties : {"average", "stable"}, default="average"

    Returns
    -------
    float
        ``nan`` (with an :class:`UndefinedMetricWarning`) when an arm or all responders are
        missing.
    """
    return _curves(y, t, score, ties=ties).auuc(definition, cutoff=cutoff)


def check_definitions(definitions) -> tuple[str, ...]:
    """A non-empty tuple of known definition names; one name alone counts as a tuple of one."""
    if isinstance(definitions, str):
        definitions = (definitions,)
    try:
        definitions = tuple(definitions)
    except TypeError:
        raise ValueError(f"definitions must be a sequence of names; got {definitions!r}.") from None
    if not definitions:
        raise ValueError("definitions must name at least one definition; got none.")
    for d in definitions:
        check_choice(d, "definitions", DEFINITIONS)
    return definitions


def auuc_table(
    y,
    t,
    score,
    *,
    definitions=tuple(DEFINITIONS),
    cutoffs=CUTOFFS,
    ties: str = "average",
    above_random: bool = False,
):
    r"""AUUC of one ranking for several definitions and cut-offs, from a single sort.

    Each cell is :func:`auuc`: the mean convention of Devriendt et al. (2020), separate
    :math:`\frac{1}{100}\sum_{p \le c} V(p)` over the percent grid, joint
    :math:`\frac{1}{n}\sum_{k \le cn} V(k)` over the rows.  ``y``, ``t`` and ``score``
    may be Dask arrays or Series (e.g. columns of a Parquet dataset): the table is then
    computed on the current Dask client from per-partition counts and equals the in-memory
    table exactly (0/1 outcome; an amount to rounding; without a ``distributed`` client
    dask's default scheduler computes it).

    Parameters
    ----------
    y, t : array-like of shape (n,)
        Outcome (0/1, or a continuous amount) and binary treatment flag.
    score : array-like of shape (n,)
        Ranker score (higher = target first); float32 is kept as it is.
    definitions : iterable of str, default=every key of :data:`DEFINITIONS`
        The rows of the table, in the order given.
    cutoffs : iterable of float in (0, 1], default=(0.1, 0.3, 0.5, 1.0)
        Shares targeted: the columns, ``"AUUC@10%"`` etc. (two cut-offs whose labels would
        read alike are refused).
    ties : {"average", "stable"}, default="average"
        As in :func:`uplift_curve`.
    above_random : bool, default=False
        Subtract the random baseline's area at the same cut-off, as some authors report
        it (the paper does not).

    Returns
    -------
    pandas.DataFrame
        Indexed by definition, one column per cut-off.

    Examples
    --------
    Paper Table 1's four rows; the joint relative curve is 0, 0, 1/3, −2/3, −1/3 at
    k = 0 … 4, so AUUC@50 % = (0 + 1/3)/4 and AUUC@100 % = (0 + 1/3 − 2/3 − 1/3)/4:

    >>> auuc_table([0, 1, 1, 1], [1, 1, 0, 1], [4, 3, 2, 1],
    ...            definitions=["uplift_joint_rel"], cutoffs=[0.5, 1.0]).round(4).to_dict()
    {'AUUC@50%': {'uplift_joint_rel': 0.0833}, 'AUUC@100%': {'uplift_joint_rel': -0.1667}}
    """
    import pandas as pd

    cutoffs = check_cutoffs(cutoffs)
    definitions = check_definitions(definitions)
    curves = _curves(y, t, score, ties=ties)
    rows = {}
    for name in definitions:
        row = {}
        for c in cutoffs:
            value = curves.auuc(name, cutoff=c)
            if above_random:
                value -= curves.random_auuc(name, cutoff=c)
            row[auuc_column(c)] = value
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


# ---------------------------------------------------------------------- baselines
def random_curve(
    y, t, *, definition: str, points: int = SEPARATE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Random-targeting baseline: the straight line from ``V(0) = 0`` to ``V(1)``.

    ``V(1)`` does not depend on the ranking.  Same ``x`` grid as :func:`uplift_curve`.
    """
    return UpliftCurves.unranked(y, t, points=points).random_curve(definition)


def random_auuc(y, t, *, definition: str, cutoff: float = 1.0) -> float:
    """AUUC of the random-targeting baseline (see :meth:`UpliftCurves.random_auuc`)."""
    return UpliftCurves.unranked(y, t).random_auuc(definition, cutoff=cutoff)


def auuc_above_random(
    y, t, score, *, definition: str, cutoff: float = 1.0, ties: str = "average"
) -> float:
    """AUUC minus the random baseline's AUUC at the same cut-off (baseline-subtracted area).

    Positive when the ranking beats random targeting.  The paper reports plain AUUC;
    this is the numerator of scikit-uplift's ``uplift_auc_score`` / ``qini_auc_score``,
    which divide it further by the perfect ranking's area above random (a share of the
    best possible); the area itself is kept here.
    """
    curves = _curves(y, t, score, ties=ties)
    value = curves.auuc(definition, cutoff=cutoff)
    if np.isnan(value):
        return value
    return value - curves.random_auuc(definition, cutoff=cutoff)


def outcome_code(y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Row codes for the kernel: ``2·t + y`` (int8) for a validated 0/1 ``y`` and no values;
    for a continuous ``y`` (float64 from :func:`~core._validation.check_uplift_inputs`)
    ``2·t`` and the outcome values, which the curves then sum."""
    if y.dtype == np.int8:
        return (t << 1 | y).astype(np.int8), None
    return (t << 1).astype(np.int8), y


def perfect_score(y, t) -> np.ndarray:
    """Oracle score of SPEC §2: TR rows first, then the zero-effect rows, CR rows last.

    TR → 2, TNR and CNR → 1, CR → 0.  Inside each group rows keep their order (use with
    ``ties="stable"``) — for the separate and ``uplift_joint_rel`` definitions every order
    inside the groups gives the same, pointwise maximal, curve.  For the two joint absolute
    definitions the ratio :math:`N^T/N^C` means this order is the conventional "perfect"
    reference, not a proven maximum.  A continuous outcome: score = y for treated rows and
    −y for control rows (the same order as above for 0/1 y), the analogous reference.
    """
    y, t, _ = check_uplift_inputs(y, t, np.zeros(len(np.asarray(y))))
    if y.dtype != np.int8:  # continuous: treated rows by outcome descending, control rows
        return np.where(t == 1, y, -y)  # by outcome ascending (largest outcomes last)
    return np.where(y == 1, np.where(t == 1, 2.0, 0.0), 1.0)


def perfect_curve(
    y, t, *, definition: str, points: int = SEPARATE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Curve of the oracle ranking :func:`perfect_score` (stable order inside groups)."""
    return uplift_curve(
        y, t, perfect_score(y, t), definition=definition, ties="stable", points=points
    )


def perfect_auuc(y, t, *, definition: str, cutoff: float = 1.0) -> float:
    """AUUC of the oracle ranking :func:`perfect_score`."""
    return auuc(y, t, perfect_score(y, t), definition=definition, cutoff=cutoff, ties="stable")
