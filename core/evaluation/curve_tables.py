"""Tidy tables of curves and AUUCs for several rankers at once (what pages plot and export).

Each ranker is sorted once (:class:`core.evaluation.curves.UpliftCurves`); the random and perfect
baselines are added as extra rows, labelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from core._validation import check_choice, check_cutoffs, check_scores, check_uplift_inputs
from core.constants import CUTOFFS, auuc_column
from core.evaluation.curves import DEFINITIONS, UpliftCurves, perfect_score

__all__ = [
    "BASELINES", "RANDOM", "PERFECT", "RankerCurves", "auuc_summary", "compare_scenarios",
    "curves_frame", "thin", "thin_frame",
]

RANDOM = "Random targeting"
PERFECT = "Perfect (oracle)"
BASELINES = (RANDOM, PERFECT)


def thin(m: int, max_points: int | None) -> np.ndarray:
    """Indices of at most ``max_points`` evenly spaced points of ``0..m-1`` (ends kept)."""
    if max_points is None or m <= max_points:
        return np.arange(m)
    return np.unique(np.linspace(0, m - 1, max_points).round().astype(np.int64))


def thin_frame(frame: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """At most ``max_points`` evenly spaced rows per ranker of a :func:`curves_frame` table."""
    keep = [part.index[thin(len(part), max_points)]
            for _, part in frame.groupby("ranker", sort=False)]
    return frame.loc[np.concatenate(keep)] if keep else frame


def _curve_objects(y, t, scores: Mapping[str, np.ndarray], ties: str, baselines: Iterable[str]):
    """Each ranker's :class:`UpliftCurves` (one sort each) and whether it is the random line.

    Scores keep float32 (the radix-sort kernel).  The random line needs only ``V(1)``, the
    same for every ranking: :meth:`UpliftCurves.unranked` (no sort) and its
    :meth:`~UpliftCurves.random_curve` (no curve built).
    """
    if not scores and not baselines:
        raise ValueError("scores must name at least one ranker; got none.")
    y, t, _ = check_uplift_inputs(y, t, np.zeros(len(np.asarray(y))))
    baselines = tuple(baselines)
    for b in baselines:
        check_choice(b, "baselines", BASELINES)
    out: dict[str, tuple[UpliftCurves, bool]] = {}
    for name, s in scores.items():
        key = str(name)
        if key in out:
            raise ValueError(f"scores names two rankers {key!r} once converted to text.")
        if key in baselines:
            raise ValueError(f"scores names a ranker {key!r}, the name of a baseline row; "
                             "rename it, or leave that baseline out (baselines=).")
        score = check_scores(s, f"scores[{key!r}]", n=len(y), keep_float32=True)
        out[key] = (UpliftCurves(y, t, score, ties=ties), False)
    if RANDOM in baselines:
        out[RANDOM] = (UpliftCurves.unranked(y, t), True)
    if PERFECT in baselines:
        out[PERFECT] = (UpliftCurves(y, t, perfect_score(y, t), ties="stable"), False)
    return out


class RankerCurves:
    """Curves of several rankers and the baselines, each ranker sorted once; then the curve
    points and AUUCs of any definition at the cost of reading them off.

    Parameters
    ----------
    y, t : array-like
        Outcome and treatment flag (see :class:`~core.evaluation.curves.UpliftCurves`).
    scores : mapping of str to array
        Ranker name → score (higher = target first); float32 scores are kept (radix sort).
    ties : {"average", "stable"}, default="average"
    baselines : iterable of str, default=BASELINES
        Any of :data:`RANDOM` (the straight line to ``V(1)``, from the arms' totals) and
        :data:`PERFECT` (the oracle ranking), added as extra rows.

    Notes
    -----
    ``RankerCurves(y, t, {"model": s}).frame("uplift_sep_rel")`` is
    :func:`curves_frame` with ``definition="uplift_sep_rel"``; the Curves page builds one
    and reads both tables off it.
    """

    def __init__(self, y, t, scores: Mapping[str, np.ndarray], *, ties: str = "average",
                 baselines: Iterable[str] = BASELINES):
        self._curves = _curve_objects(y, t, scores, ties, baselines)

    def frame(self, definition: str, *, max_points: int | None = None) -> pd.DataFrame:
        """Long table of curve points, one row per (ranker, point): see :func:`curves_frame`."""
        check_choice(definition, "definition", DEFINITIONS)
        parts = []
        for name, (c, is_random) in self._curves.items():
            x, v = c.random_curve(definition) if is_random else c.curve(definition)
            keep = thin(len(x), max_points)
            parts.append(pd.DataFrame({
                "ranker": name,
                "fraction": x[keep],
                "targeted": np.rint(x[keep] * c.n).astype(np.int64),
                "value": v[keep],
            }))
        return pd.concat(parts, ignore_index=True)

    def auuc(self, definition: str, *, cutoffs: Iterable[float] = CUTOFFS) -> pd.DataFrame:
        """AUUC of each ranker (rows) at each cut-off: see :func:`auuc_summary`."""
        cutoffs = check_cutoffs(cutoffs)
        rows = {}
        for name, (c, is_random) in self._curves.items():
            rows[name] = {
                auuc_column(cut): (c.random_auuc(definition, cutoff=cut) if is_random
                                    else c.auuc(definition, cutoff=cut))
                for cut in cutoffs
            }
        return pd.DataFrame.from_dict(rows, orient="index")


def curves_frame(
    y,
    t,
    scores: Mapping[str, np.ndarray],
    *,
    definition: str,
    ties: str = "average",
    baselines: Iterable[str] = BASELINES,
    max_points: int | None = None,
) -> pd.DataFrame:
    """Long table of curve points: one row per (ranker, point).

    Columns ``ranker``, ``fraction`` (share targeted), ``targeted`` (rows targeted,
    ``round(fraction · n)``), ``value``.  The random baseline is the straight line to
    ``V(1)``; ``max_points`` thins each curve for plotting (AUUCs are never computed from
    thinned points).  For several definitions, or curves and AUUCs, of the same rankers,
    build one :class:`RankerCurves` instead (one sort per ranker).
    """
    check_choice(definition, "definition", DEFINITIONS)
    curves = RankerCurves(y, t, scores, ties=ties, baselines=baselines)
    return curves.frame(definition, max_points=max_points)


def auuc_summary(
    y,
    t,
    scores: Mapping[str, np.ndarray],
    *,
    definition: str,
    cutoffs: Iterable[float] = CUTOFFS,
    ties: str = "average",
    baselines: Iterable[str] = BASELINES,
) -> pd.DataFrame:
    """AUUC of each ranker (rows) at each cut-off (columns ``"AUUC@10%"``, ...).

    The random baseline's row is the area of its straight line with the same convention.
    """
    curves = RankerCurves(y, t, scores, ties=ties, baselines=baselines)
    return curves.auuc(definition, cutoffs=cutoffs)


def compare_scenarios(
    cases: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    definitions: Iterable[str] = tuple(DEFINITIONS),
    ties: str = "average",
    max_points: int | None = 400,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Curves and AUUCs of several ``(y, t, score)`` cases under several definitions.

    Used for the paper's §4.2 view (Figs. 2–3): the same kind of ranking drawn with
    different treatment/control splits.  Returns

    * ``frames``: definition → tidy frame (columns ``scenario``, ``ranker``, ``fraction``,
      ``value``), each case with its random line;
    * ``table``: AUUC@100 % with one row per definition, one column per case, and
      ``swing`` = (max − min) / mean |AUUC| across the cases — how much the number moves
      when only the arm split changes.
    """
    definitions = tuple(definitions)
    frames: dict[str, list[pd.DataFrame]] = {d: [] for d in definitions}
    rows: dict[str, dict[str, float]] = {d: {} for d in definitions}
    for scenario, (y, t, score) in cases.items():
        objects = _curve_objects(y, t, {"ranking": score}, ties, (RANDOM,))
        for d in definitions:
            for name, (c, is_random) in objects.items():
                x, v = c.curve(d)
                if is_random:
                    v = x * v[-1]
                else:
                    rows[d][scenario] = c.auuc(d)
                keep = thin(len(x), max_points)
                frames[d].append(pd.DataFrame({"scenario": scenario, "ranker": name,
                                               "fraction": x[keep], "value": v[keep]}))
    table = pd.DataFrame.from_dict(rows, orient="index")
    spread = table.max(axis=1) - table.min(axis=1)
    table["swing"] = spread / table.abs().mean(axis=1)
    return {d: pd.concat(f, ignore_index=True) for d, f in frames.items()}, table
