"""Stored runs as arrays for comparison: shared test rows, per-split curves, exports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core.constants import DASH
from core.evaluation.across_splits import TestSplit
from core.evaluation.curves import DEFINITIONS, UpliftCurves
from core.runs.export import safe_csv_bytes
from core.runs.presets import run_label
from core.runs.takeaway import auuc_decimals, fmt_decimals, fmt_p

__all__ = ["auuc_csv", "auuc_decimals", "auuc_display", "bands_frame", "best_run",
           "constant_rankers", "default_runs", "depth_display", "display_labels", "fmt_number",
           "least_decimals", "mixed_splits_note", "paired_display", "ranks_display", "scores_frame",
           "split_curves", "test_scores", "test_splits", "unreadable_runs"]



def fmt_number(value, digits: int = 4) -> str:
    """A number for people: ``digits`` decimals, thousands separators, "—" when missing.

    >>> fmt_number(1234.5, 1), fmt_number(float("nan")), fmt_number(None), fmt_number(0.012345)
    ('1,234.5', '—', '—', '0.0123')
    """
    if value is None:
        return DASH
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    return DASH if not np.isfinite(v) else f"{v:,.{digits}f}"


def least_decimals(definition: str) -> int:
    """Fewest decimals for a definition's AUUCs: 4 for shares of an arm (relative), 1 for
    counts of responders (absolute)."""
    return 4 if DEFINITIONS[definition].units == "relative" else 1


def _interval(low, high, digits: int = 4) -> str:
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return DASH
    return f"[{fmt_decimals(low, digits)}, {fmt_decimals(high, digits)}]"


def _shown_sd(summary: pd.DataFrame, col: str) -> list:
    """The sd over splits of column ``col`` (``"AUUC@30%"``) per row, ``None`` where there is
    none or where it is zero up to rounding (at most 1e-12 of the mean: the same on every
    split)."""
    sd = summary.get(f"sd@{col[len('AUUC@'):]}")
    if sd is None:
        return [None] * len(summary)
    return [None if np.isfinite(e) and abs(e) <= 1e-12 * max(1.0, abs(m)) else e
            for m, e in zip(summary[col], sd)]


def auuc_display(summary: pd.DataFrame, boot: pd.DataFrame | None = None, *,
                 digits: int | None = None, least: int = 4,
                 intervals_at: float | None = None) -> pd.DataFrame:
    """AUUC table for the screen and the report: one row per run (baselines kept), per
    cut-off the AUUC, its spread over splits and its bootstrap interval, as text.

    ``summary`` is :func:`~core.evaluation.across_splits.auuc_over_splits`' first frame
    (columns ``AUUC@c`` and ``sd@c``); ``boot`` is
    :meth:`~core.evaluation.compare.BootstrapResult.table` (``ranker``, ``cutoff``,
    ``ci_low``, ``ci_high``) or ``None``.  With several splits a cell reads
    ``"0.0291 ± 0.0010"`` (mean ± sd over splits), and a value that is the same on every
    split (the baselines, when the splits keep each arm's responders: stratified) the mean
    alone, not "± 0.0000"; the interval column ``"95 % CI @c"``
    appears only with ``boot`` ("—" for the baselines, which are not resampled), at every
    cut-off or, with ``intervals_at`` (a fraction), at that one only (the page's: its paired
    tests are at that cut-off, and five interval columns did not fit a laptop's width).
    ``digits=None`` picks enough decimals for the narrowest interval or sd
    (:func:`resolving_digits`, at least ``least``: 4 for shares of an arm, 1 for counts of
    responders under an absolute definition) and for two significant digits of the smallest
    non-zero AUUC, with at most two decimals more than ``least`` (four for counts).
    """
    n_splits = summary.attrs.get("n_splits", 1)
    cols = [c for c in summary.columns if c.startswith("AUUC@")]
    spread = {col: _shown_sd(summary, col) for col in cols}
    if digits is None:
        widths = [] if boot is None else list(boot["ci_high"] - boot["ci_low"])
        if n_splits > 1:
            widths += [e for sd in spread.values() for e in sd if e is not None]
        digits = auuc_decimals(summary[cols].to_numpy().ravel(), widths, least=least)
    out = pd.DataFrame(index=summary.index.copy())
    out.index.name = "run"
    for col in cols:
        cut = col[len("AUUC@"):]
        out[col] = [fmt_number(m, digits) + (f" ± {fmt_number(e, digits)}"
                                             if n_splits > 1 and e is not None else "")
                    for m, e in zip(summary[col], spread[col])]
        cut_value = float(cut.rstrip("%")) / 100
        if boot is not None and (intervals_at is None or np.isclose(cut_value, intervals_at)):
            part = boot[np.isclose(boot["cutoff"], cut_value)].set_index("ranker")
            out[f"95 % CI @{cut}"] = [
                _interval(part.at[r, "ci_low"], part.at[r, "ci_high"], digits)
                if r in part.index else DASH for r in out.index]
    return out


def paired_display(paired: pd.DataFrame, *, cutoff: float, digits: int | None = None,
                   n_boot: int | None = None, least: int = 4) -> pd.DataFrame:
    """The paired tests at one cut-off for people: run as the index, the verdict first,
    then the AUUC difference to the reference, its interval and the p-value
    (:func:`~core.runs.takeaway.fmt_p`: a bootstrap p of 0 reads "p < 2/B" with ``n_boot``).
    The verdict calls the reference "the reference" (name it once, above the table).
    ``digits=None`` picks enough decimals for the narrowest interval (:func:`resolving_digits`,
    at least ``least``, as in :func:`auuc_display`).
    """
    part = paired[np.isclose(paired["cutoff"], cutoff)]
    if digits is None:  # as the AUUC table: two significant digits of the smallest difference
        digits = auuc_decimals(part["difference"], part["ci_high"] - part["ci_low"],
                               least=least)
    # The reference is named once, in the heading above the table.
    verdicts = [str(v).replace(str(ref), "the reference")
                for v, ref in zip(part["verdict"], part["reference"])]
    out = pd.DataFrame({
        "verdict": verdicts,
        "difference to reference": [fmt_decimals(v, digits) for v in part["difference"]],
        "95 % CI": [_interval(lo, hi, digits) for lo, hi in zip(part["ci_low"],
                                                              part["ci_high"])],
        "p-value": [fmt_p(p, n_boot=n_boot) or DASH for p in part["p_value"]],
    }, index=pd.Index(part["ranker"].to_numpy(), name="run"))
    return out


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


def default_runs(runs: Sequence, k: int = 4) -> list[str]:
    """Run ids the Compare page starts with: up to ``k`` of the newest runs evaluated on the
    same test rows as the newest run (same split scheme, test share and seed), in ``runs``'
    order — the first ``k`` runs of any settings could not be compared with each other."""
    if not runs:
        return []
    newest = max(runs, key=lambda r: (r.created, r.run_id)).config

    def key(config):
        return config.scheme, config.test_size, config.seed

    same = [r for r in runs if key(r.config) == key(newest)]
    keep = {r.run_id for r in sorted(same, key=lambda r: (r.created, r.run_id))[-k:]}
    return [r.run_id for r in runs if r.run_id in keep]


def best_run(summary: pd.DataFrame, labels: dict, cutoff: float) -> str:
    """The run id (a key of ``labels``, run id → its row label in ``summary``) with the
    highest AUUC at ``cutoff`` in the Compare page's AUUC table — what its decile chart and
    exports start with (the first run picked may be one the page warns not to target by)."""
    from core.constants import auuc_column

    column = summary[auuc_column(cutoff)]
    scored = {rid: float(column.get(label, float("nan"))) for rid, label in labels.items()}
    finite = {rid: v for rid, v in scored.items() if np.isfinite(v)}
    return max(finite, key=finite.get) if finite else next(iter(labels))


def unreadable_runs(runs: Sequence) -> dict[str, str]:
    """``run id → what is wrong`` for the runs whose score files cannot be read
    (:meth:`core.runs.store.Run.problem`); the others are not listed."""
    return {run.run_id: problem for run in runs if (problem := run.problem()) is not None}


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


def constant_rankers(splits: Sequence) -> list[str]:
    """Rankers that give every test row the same score in every split (a model that learned
    nothing, e.g. from an outcome that copies the treatment): their curves are Random's."""
    names = list(splits[0].scores) if splits else []
    return [name for name in names
            if all(np.ptp(np.asarray(sp.scores[name], dtype=np.float64)) == 0 for sp in splits)]


def auuc_csv(per_split: pd.DataFrame, definition: str) -> bytes:
    """The Compare page's per-split AUUC download: splits numbered from 1 (as the scores
    CSV numbers them) and the curve definition named in a column; spreadsheet-safe."""
    return safe_csv_bytes(per_split.assign(split=per_split["split"] + 1,
                                           definition=definition))


def mixed_splits_note(runs: Sequence) -> str | None:
    """What the Compare page says when ``runs`` were trained on different numbers of
    repeated splits (their numbers are compared on the splits they share, the first
    ``min(n_splits)``, see :func:`test_splits`); None when they all have the same."""
    counts = sorted({run.n_splits for run in runs})
    if len(counts) < 2:
        return None
    shared = counts[0]
    listed = " and ".join(map(str, counts))
    return (f"The runs were trained on different numbers of splits ({listed}): the chart and "
            f"every table compare them on the {shared} test split{'s' * (shared > 1)} they "
            f"share (the first {shared}); a run's other splits are left out. For a "
            "like-for-like comparison pick runs with the same evaluation.")


def split_curves(run, definition: str, *, ties: str = "average",
                 n_splits: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The test-set curve ``(x, v)`` of every split of ``run`` (for min/max or 95 % bands),
    or of its first ``n_splits`` (those it shares with runs of fewer splits)."""
    out = []
    for i in range(run.n_splits if n_splits is None else min(n_splits, run.n_splits)):
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


def ranks_display(ranks: pd.DataFrame, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The definition-sensitivity table for people: one row per definition (plain-words
    label), the winner first (the table's answer, visible however many runs follow), then
    one column per run with "AUUC (rank k)".

    ``ranks`` is :func:`~core.evaluation.compare.definition_ranks` (or its mean over
    splits); ``names`` maps a run label to the (shorter) column name shown.  Relative
    definitions get 4 decimals, absolute ones (counts of responders) 1 decimal, and up to
    three more where two different values would print alike ("12.1 (rank 1)" beside
    "12.1 (rank 2)" for 12.105 and 12.099).
    """
    names = dict(names or {})
    runs = [c[len("AUUC "):] for c in ranks.columns if c.startswith("AUUC ")]
    out = pd.DataFrame(index=pd.Index([DEFINITIONS[d].label for d in ranks.index],
                                      name="definition"))
    digits = {d: _separating_digits(ranks.loc[d, [f"AUUC {r}" for r in runs]],
                                    least_decimals(d)) for d in ranks.index}
    for run in runs:
        cells = []
        for d, value, rank in zip(ranks.index, ranks[f"AUUC {run}"], ranks[f"rank {run}"]):
            cells.append(DASH if not np.isfinite(value) else
                         f"{fmt_number(value, digits[d])} (rank {int(rank)})")
        out[names.get(run, run)] = cells
    out.insert(0, "winner", [DASH if w is None else " = ".join(names.get(r, r)
                                                             for r in w.split(" = "))
                             for w in ranks["winner"]])
    return out


def _separating_digits(values, least: int, most_extra: int = 3) -> int:
    """Fewest decimals from ``least`` (up to ``least + most_extra``) at which the distinct
    finite ``values`` print distinctly.

    >>> _separating_digits([12.105, 12.099, 10.2], 1), _separating_digits([0.0041, 0.0032], 4)
    (2, 4)
    """
    v = np.asarray(list(values), dtype=float)
    v = np.unique(v[np.isfinite(v)])
    digits = least
    while digits < least + most_extra and len({f"{x:.{digits}f}" for x in v}) < v.size:
        digits += 1
    return digits


def depth_display(summary: pd.DataFrame) -> pd.DataFrame:
    """Best targeting depth per run for people, from
    :meth:`~core.evaluation.across_splits.DepthResult.summary`: depth, rows, profit with its
    interval, the interval of the best depth, the equivalent range and everyone-treated."""
    def pct(v):
        return DASH if v is None or not np.isfinite(v) else f"{v:.1%}".replace(".0%", "%")

    def get(row, col):
        value = row.get(col)
        return None if value is None or (isinstance(value, float) and np.isnan(value)) \
            else value

    def money(v):
        return fmt_number(v, 2)

    def between(row, low, high, fmt):  # "a to b": read aloud, unlike "[a, b]"
        lo, hi = get(row, low), get(row, high)
        return DASH if lo is None or hi is None else f"{fmt(lo)} to {fmt(hi)}"

    rows = {}
    for name, row in summary.iterrows():
        rows[name] = {
            "best depth": pct(get(row, "best_fraction")),
            "rows targeted": fmt_number(get(row, "best_targeted"), 0),
            "profit at best depth": money(get(row, "best_profit")),
            "95 % CI of that profit": between(row, "profit_low", "profit_high", money),
            "best depth, 95 % interval": between(row, "depth_low", "depth_high", pct),
            "statistically equivalent depths": between(row, "equivalent_low",
                                                       "equivalent_high", pct),
            "profit if everyone is treated": money(get(row, "profit_all")),
        }
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "run"
    return out
