"""Stored runs as arrays for comparison: shared test rows, per-split curves, exports."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.evaluation.curves import UpliftCurves
from core.runs.presets import run_label

__all__ = ["bands_frame", "scores_frame", "split_curves", "test_scores"]


def test_scores(runs: Sequence, *, split: int = 0):
    """Test rows of ``split`` shared by every run, and each run's scores on them.

    Returns ``(index, y, t, scores)`` with ``scores`` mapping :func:`run_label` → array.
    Paired comparisons (bootstrap differences, profit at the same depth) need the *same*
    test rows, i.e. runs trained with the same split scheme and seed on the same data; a run
    with other test rows raises ``ValueError`` naming it.
    """
    if not runs:
        raise ValueError("runs must hold at least one stored run; got none.")
    first = runs[0].scores(split)
    scores = {}
    for run in runs:
        s = run.scores(split)
        label = run_label(run.config)
        if not np.array_equal(s.index, first.index):
            raise ValueError(
                f"Run '{label}' was evaluated on other test rows than "
                f"'{run_label(runs[0].config)}' (different split scheme or seed): compare "
                "runs trained with the same evaluation settings.")
        scores[label] = s.score
    return first.index, first.y, first.t, scores


def split_curves(run, definition: str, *, ties: str = "average") -> list[tuple[np.ndarray, np.ndarray]]:
    """The test-set curve ``(x, v)`` of every split of ``run`` (for min/max or 95 % bands)."""
    out = []
    for i in range(run.n_splits):
        s = run.scores(i)
        out.append(UpliftCurves(s.y, s.t, s.score, ties=ties).curve(definition))
    return out


def scores_frame(run, *, split: int = 0) -> pd.DataFrame:
    """Test-row scores of one split as a table (row position in the data, y, t, score)."""
    s = run.scores(split)
    return pd.DataFrame({"row": s.index, "treatment": s.t, "outcome": s.y, "score": s.score})


def bands_frame(bands: dict) -> pd.DataFrame:
    """Long table of band curves (``bands``: label → (x, low, mid, high)) for CSV export."""
    return pd.concat([pd.DataFrame({"run": name, "fraction": x, "low": lo, "mean": mid,
                                    "high": hi}) for name, (x, lo, mid, hi) in bands.items()],
                     ignore_index=True)
