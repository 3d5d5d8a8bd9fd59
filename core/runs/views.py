"""Stored runs as arrays for comparison: shared test rows, per-split curves, exports."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.evaluation.across_splits import TestSplit
from core.evaluation.curves import UpliftCurves
from core.runs.presets import run_label

__all__ = ["bands_frame", "display_labels", "scores_frame", "split_curves", "test_scores",
           "test_splits"]


def display_labels(runs: Sequence) -> dict[str, str]:
    """Run id → a label unique among ``runs``, for legends, tables and selections.

    Runs are keyed by id everywhere; the label (:func:`~core.runs.presets.run_label`) is only
    for people.  Two runs whose labels coincide (same model and settings on other data
    options, or a changed preset) get the first six digits of their run id appended.
    """
    labels = {run.run_id: run_label(run.config) for run in runs}
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {rid: (f"{label} · #{rid[:6]}" if counts[label] > 1 else label)
            for rid, label in labels.items()}


def test_scores(runs: Sequence, *, split: int = 0):
    """Test rows of ``split`` shared by every run, and each run's scores on them.

    Returns ``(index, y, t, scores)`` with ``scores`` mapping the run's
    :func:`display_labels` label → array (unique even when two runs' settings read alike).
    Paired comparisons (bootstrap differences, profit at the same depth) need the *same*
    test rows, i.e. runs trained with the same split scheme and seed on the same data; a run
    with other test rows raises ``ValueError`` naming it.
    """
    if not runs:
        raise ValueError("runs must hold at least one stored run; got none.")
    first = runs[0].scores(split)
    labels = display_labels(runs)
    scores = {}
    for run in runs:
        s = run.scores(split)
        label = labels[run.run_id]
        if not np.array_equal(s.index, first.index):
            raise ValueError(
                f"Run '{label}' was evaluated on other test rows than "
                f"'{labels[runs[0].run_id]}' (different split scheme or seed): compare "
                "runs trained with the same evaluation settings.")
        scores[label] = s.score
    return first.index, first.y, first.t, scores


def test_splits(runs: Sequence, *, value=None) -> tuple[list[np.ndarray], list[TestSplit]]:
    """Every test split shared by ``runs``: row positions and a :class:`TestSplit` each.

    Runs trained with the same scheme and seed share their test rows split by split; with
    different numbers of repetitions the first ``min(n_splits)`` splits are used.  ``value``
    (an array over the data's rows, e.g. spend) is attached to each split's rows.  Raises
    ``ValueError`` like :func:`test_scores` when the runs' test rows differ.
    """
    if not runs:
        raise ValueError("runs must hold at least one stored run; got none.")
    indices, splits = [], []
    for i in range(min(run.n_splits for run in runs)):
        index, y, t, scores = test_scores(runs, split=i)
        indices.append(index)
        splits.append(TestSplit(y, t, scores, None if value is None else
                                np.asarray(value)[index]))
    return indices, splits


def split_curves(run, definition: str, *,
                 ties: str = "average") -> list[tuple[np.ndarray, np.ndarray]]:
    """The test-set curve ``(x, v)`` of every split of ``run`` (for min/max or 95 % bands)."""
    out = []
    for i in range(run.n_splits):
        s = run.scores(i)
        out.append(UpliftCurves(s.y, s.t, s.score, ties=ties).curve(definition))
    return out


def scores_frame(run, *, split: int = 0, data=None) -> pd.DataFrame:
    """Test-row scores of one split as a table: row id, treatment, outcome, score, split.

    The id column is the data's :meth:`~core.data.abdata.ABData.row_ids` (the CSV's ID
    column when it had one, named after it, else the 1-based row number ``"row"``); without
    ``data`` the 1-based row number.  ``split="all"`` stacks every split (column ``split``,
    1-based).
    """
    splits = range(run.n_splits) if split == "all" else [split]
    parts = []
    for i in splits:
        s = run.scores(i)
        ids = data.row_ids(s.index) if data is not None else s.index + 1
        name = data.id_name if data is not None else "row"
        parts.append(pd.DataFrame({name: ids, "split": i + 1, "treatment": s.t,
                                   "outcome": s.y, "score": s.score}))
    return pd.concat(parts, ignore_index=True)


def bands_frame(bands: dict) -> pd.DataFrame:
    """Long table of band curves (``bands``: label → (x, low, mid, high)) for CSV export."""
    return pd.concat([pd.DataFrame({"run": name, "fraction": x, "low": lo, "mean": mid,
                                    "high": hi}) for name, (x, lo, mid, hi) in bands.items()],
                     ignore_index=True)
