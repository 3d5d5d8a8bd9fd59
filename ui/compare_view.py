"""The Compare page's cached computations and its sections.

Every number is over all test splits of the chosen runs (:mod:`core.evaluation.across_splits`).
Keys are the run ids and settings; the split arrays are passed unhashed (``_splits``) because
the run ids already identify them.

The sections (:func:`deleted_runs_warning`, :func:`pick_runs` … :func:`export_section`) draw
the page in its order; ``pages/compare.py`` calls them one after the other.  Their arguments
of the same name mean the same:

data : ABData
    The dataset.
runs : Mapping of str to Run
    The two-arm runs stored on the dataset, by run id.
chosen : list of str
    The picked run ids whose files can be read, in the picker's order (:func:`pick_runs`).
ids : tuple of str
    ``chosen`` as a tuple: with the settings, the key of every cached computation (the ids
    identify ``splits``).
selected : sequence of Run
    The picked runs, in the order of ``ids``.
splits : list of TestSplit
    Their shared test splits (:func:`core.runs.views.test_splits`).
labels : Mapping of str to str
    Each run's display name, by id (:func:`core.runs.views.display_labels`).
names : sequence of str
    The display names of ``ids``, in their order.
colors : Mapping of str to str
    Each run's colour, by display name.
definition : str
    The curve definition, a key of :data:`core.evaluation.curves.DEFINITIONS`.
cutoff : float
    The page's cut-off: the share of the rows targeted, in (0, 1].
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import streamlit as st

from core.constants import CUTOFFS
from core.evaluation import across_splits as over
from core.evaluation import compare
from core.evaluation.across_splits import pooling_note
from core.evaluation.curves import DEFINITIONS
from core.evaluation.targeting import treatment_balance_along_ranking
from core.runs.export import safe_csv_bytes
from core.runs.report import RANGES_NOTE
from core.runs.views import (
    auuc_csv,
    auuc_display,
    bands_frame,
    best_run,
    constant_rankers,
    default_runs,
    depth_display,
    least_decimals,
    mixed_splits_note,
    paired_display,
    ranks_display,
    scores_frame,
    split_curves,
    test_splits,
    unreadable_runs,
)
from ui import charts, common
from ui.charts import PART_SEP, label_width, shared_parts, short_names
from ui.glossary import GLOSSARY, PNDCG_NOTE

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from core.data import ABData
    from core.runs.store import Run

# The figures of the Compare page, kept per input (a plotly figure costs 20–50 ms to build
# and validate; a rerun after a widget change that does not touch a chart reuses it).
# ``cache_resource`` returns the object itself: the page never modifies a figure.
band_figure = st.cache_resource(show_spinner=False, max_entries=32)(charts.band_figure)
profit_figure = st.cache_resource(show_spinner=False, max_entries=32)(charts.profit_figure)
decile_figure = st.cache_resource(show_spinner=False, max_entries=32)(charts.decile_figure)


@st.cache_resource(show_spinner="Reading the runs' test scores…", max_entries=2)
def load_splits(ids: tuple, _runs: Sequence[Run], value_column: str | None = None,
                _value=None) -> list:
    """The test splits the runs ``ids`` share (:func:`core.runs.views.test_splits`), read
    from their score files once, not on every rerun (at 14M rows ~76 MB a run and split);
    with ``_value`` (the data's column ``value_column``) attached to each split's rows.
    The ids identify the runs, hence their data and its columns.  ``cache_resource``: the
    page never modifies a split; two entries, the splits and the splits with a value."""
    return test_splits(_runs, value=_value)[1]


@st.cache_data(show_spinner="Computing AUUC on every split…", max_entries=64)
def auuc(ids: tuple, _splits, definition: str, cutoffs: tuple):
    return over.auuc_over_splits(_splits, definition=definition, cutoffs=cutoffs)


#: results of the computations with a progress bar kept, least recently used first out
KEPT = 32


class _Results:
    """Results by key, shared by sessions: one computation per key at a time (a second
    caller waits for it, as ``st.cache_data`` makes callers wait), the :data:`KEPT` most
    recently used kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards ``results`` and ``locks``
        self.locks: dict[tuple, threading.Lock] = {}
        self.results: OrderedDict[tuple, object] = OrderedDict()

    def get(self, key: tuple, compute):
        """``results[key]``, computed by ``compute()`` (under the key's lock) if missing."""
        with self.lock:
            key_lock = self.locks.setdefault(key, threading.Lock())
        with key_lock:
            with self.lock:
                if key in self.results:
                    self.results.move_to_end(key)
                    return self.results[key]
            try:
                value = compute()
            except BaseException:  # a cancel (or a failure) stores nothing
                with self.lock:
                    self.locks.pop(key, None)
                raise
            with self.lock:
                self.results[key] = value
                while len(self.results) > KEPT:
                    old, _ = self.results.popitem(last=False)
                    self.locks.pop(old, None)
            return value


@st.cache_resource(show_spinner=False)
def _store() -> _Results:
    """Results of the bootstraps, by their inputs, shared by sessions.  Not
    ``st.cache_data``: the computation draws a progress bar on the page, and a cached
    function must not touch a container made outside it (its replay from the cache would
    fail)."""
    return _Results()


#: Shorter headers for the depth table (it must fit a laptop's width beside the run names),
#: each with the download's full name as its tooltip; the two ranges keep the names
#: RANGES_NOTE quotes.
DEPTH_COLUMNS = {
    "rows targeted": st.column_config.TextColumn("rows", help="Rows targeted at the best "
                                                 "depth."),
    "profit at best depth": st.column_config.TextColumn("profit", help="Profit at the best "
                                                        "depth."),
    "95 % CI of that profit": st.column_config.TextColumn(
        "profit, 95 % CI", help="95 % bootstrap interval of the profit at the best depth."),
    "profit if everyone is treated": st.column_config.TextColumn(
        "profit, all treated", help="Profit if everyone is treated (depth 100 %)."),
}


def depth_table(depth: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """The depth table as the page shows it, and the profit of treating everyone when it is
    the same for every run (it always is on shared test rows; ``None`` otherwise):
    :func:`~core.runs.views.depth_display` with the runs by the short names of the chart's
    legend, without that profit's column when the caption gives it.  The report and the
    downloads keep the full table."""
    table = depth_display(depth)
    everyone = table["profit if everyone is treated"].unique()
    if len(everyone) == 1:
        table = table.drop(columns="profit if everyone is treated")
    return (table.rename(index=short_names(table.index, drop_shared=True)),
            everyone[0] if len(everyone) == 1 else None)


def _with_progress(key: tuple, compute, what: str | None):
    """``compute(progress)`` once per ``key`` (kept in :func:`_store`), with a progress bar
    while it runs: ``what``, the replicates done and the time left (minutes at millions of
    test rows).  ``what`` None: no bar (``progress`` None), for a computation started
    outside the page's script run (a download button's callback)."""
    if what is None:
        return _store().get(key, lambda: compute(None))

    def with_bar():
        bar = st.empty()
        start = shown = time.perf_counter()

        def progress(done: int, total: int) -> None:
            nonlocal shown
            now = time.perf_counter()
            if now - shown < 0.2 and done < total:  # a few updates a second, not thousands
                return
            shown, spent = now, now - start
            left = f", about {spent * (total - done) / done:,.0f} s left" if spent > 2 else ""
            bar.progress(done / total, text=f"{what}: replicate {done:,} of {total:,}{left}")

        try:
            return compute(progress)
        finally:
            bar.empty()

    return _store().get(key, with_bar)


def bootstrap(ids: tuple, splits, definition: str, cutoffs: tuple, n_boot: int,
              reference: str, *, bar: bool = True):
    """``(table, paired)`` of the paired bootstrap over the splits, computed once per
    inputs (``ids`` = the run ids, which identify ``splits``), with a progress bar unless
    ``bar`` is False; copies, so callers may modify them."""
    def compute(progress):
        res = over.bootstrap_over_splits(splits, definition=definition, cutoffs=cutoffs,
                                         n_boot=n_boot, random_state=0, reference=reference,
                                         progress=progress)
        return res.table(), res.paired(reference)

    table, paired = _with_progress(("auuc", ids, definition, cutoffs, n_boot, reference),
                                   compute, "Bootstrapping the test rows" if bar else None)
    return table.copy(), paired.copy()


@st.cache_data(show_spinner="Computing the test-set curves of every run…", max_entries=64)
def bands(ids: tuple, _runs: list, definition: str, kind: str):
    """Each run's band over the splits every run has (the tables' splits, see
    :func:`core.runs.views.mixed_splits_note`): a run of 5 splits beside one of 1 was drawn
    as its 5-split mean while the tables read its first split."""
    shared = min(run.n_splits for run in _runs)
    return [compare.band(split_curves(run, definition, n_splits=shared), kind=kind)
            for run in _runs]


@st.cache_data(show_spinner="Ranking the runs under every curve definition…", max_entries=64)
def definition_ranks(ids: tuple, _splits, cutoff: float):
    return over.definition_ranks_over_splits(_splits, cutoff=cutoff)


@st.cache_data(show_spinner="Computing ranking metrics on every split…", max_entries=64)
def ranking_metrics(ids: tuple, _splits, probability: str):
    table = over.ranking_metrics_over_splits(_splits, probability=probability).round(4)
    if len(_splits) == 1:  # no spread across one split: no column of blanks
        table = table.drop(columns=[c for c in table.columns if c.startswith("sd ")])
    return table.rename_axis("run")


def profit(ids: tuple, splits, cost: float, econ_key: tuple, value_per_response):
    """``(curves, summary, band note)`` of the profit by depth with its bootstrap, computed
    once per inputs (``econ_key`` names the value column); copies, so callers may modify
    them."""
    def compute(progress):
        res = over.profit_over_splits(splits, cost_per_treatment=cost,
                                      value_per_response=value_per_response, random_state=0,
                                      progress=progress)
        return res.curves(), res.summary(), res.band_note()

    curves, summary, note = _with_progress(("profit", ids, cost, econ_key, value_per_response),
                                           compute, "Bootstrapping the profit by depth")
    return {name: frame.copy() for name, frame in curves.items()}, summary.copy(), note


@st.cache_data(show_spinner="Computing the decile table of every split…", max_entries=64)
def deciles(ids: tuple, _splits, label: str):
    table = over.deciles_over_splits(_splits, label)
    imbalanced = any(treatment_balance_along_ranking(s.t, s.scores[label])["imbalanced"].any()
                     for s in _splits)
    return table, table.attrs["interval"], imbalanced


def random_intervals(boot, names, cutoff: float) -> dict:
    """Each run's bootstrap interval at ``cutoff`` (``{}`` without a bootstrap)."""
    import numpy as np

    if boot is None:
        return {}
    at_cut = boot[np.isclose(boot["cutoff"].astype(float), cutoff)].set_index("ranker")
    return {n: (at_cut.at[n, "ci_low"], at_cut.at[n, "ci_high"]) for n in names
            if n in at_cut.index}


def random_warning(summary, boot, names, cutoff: float) -> tuple[str, str] | None:
    """What the page says of the shown runs against random targeting at ``cutoff`` — the
    report's rule (:func:`core.runs.takeaway.beats_random`) on the runs whose AUUC is
    defined — as ``(kind, text)``: ``"warning"`` when some run does not beat it (by its
    interval when the bootstrap ran, else by point estimate, said so), ``"caption"`` when
    every run is above it by point estimate only (the report, which always bootstraps, may
    still find one not clearly better), ``None`` when every run beats it by its interval."""
    import numpy as np

    from core.constants import auuc_column
    from core.evaluation.curve_tables import RANDOM
    from core.runs.takeaway import beats_random, random_sentence

    column = auuc_column(cutoff)
    if RANDOM not in summary.index or column not in summary.columns:
        return None
    values = {n: summary.at[n, column] for n in names if n in summary.index}
    auuc = {n: v for n, v in values.items() if np.isfinite(float(v))}
    undefined = [n for n in values if n not in auuc]
    note = (f" AUUC undefined for {', '.join(undefined)}." if undefined else "")
    base = summary.at[RANDOM, column]
    intervals = random_intervals(boot, names, cutoff)
    if not auuc or not np.isfinite(float(base)):
        return None
    if len(beats_random(auuc, base, intervals)) == len(auuc):
        if boot is None:
            return "caption", (f"Every run is above random targeting at {cutoff:.0%} by point "
                               "estimate; switch on the bootstrap (or read the report) to see "
                               "whether clearly." + note)
        return (None if not undefined else ("warning", note.strip()))
    text = random_sentence(auuc, base, cutoff=cutoff, intervals=intervals)
    if boot is None:
        text += (" (Point estimates: switch on the bootstrap for intervals, which the report "
                 "uses.)")
    return "warning", text + note


def _random_end(splits, definition: str) -> float:
    """Mean over ``splits`` of ``V(1)``, the curve's value at full targeting (the same for
    every ranking, :meth:`core.evaluation.curves.UpliftCurves.endpoint`)."""
    import numpy as np

    from core.evaluation.curves import UpliftCurves

    return float(np.mean([UpliftCurves.unranked(s.y, s.t).endpoint(definition)
                          for s in splits]))


@st.cache_data(show_spinner=False, max_entries=64)
def random_end(ids: tuple, _splits, definition: str) -> float:
    """:func:`_random_end` once per (runs, definition): the end of the page chart's
    random-targeting line (:func:`ui.charts.band_figure`)."""
    return _random_end(_splits, definition)


def random_line_figure(fig, splits, definition: str):
    """A copy of the test-set curves chart ``fig`` with the random-targeting line: the
    straight line from 0 to the mean over ``splits`` of ``V(1)`` (the same for every ranking,
    :meth:`core.evaluation.curves.UpliftCurves.endpoint`); ``fig`` itself when it has that
    line already (the page's chart draws it).  ``fig`` is not changed (it may be the page's
    cached figure)."""
    import numpy as np
    import plotly.graph_objects as go

    from core.evaluation.curve_tables import RANDOM

    if any(getattr(trace, "name", None) == RANDOM for trace in fig.data):
        return fig
    end = _random_end(splits, definition)
    if not np.isfinite(end):  # V(1) undefined (no treated or no control row): no line
        return fig
    out = go.Figure(fig)
    out.add_trace(charts.random_line(end, definition))
    return out


def report_builder(*, data, runs, chosen, labels, definition, cutoff, splits, cuts, summary,
                   reference, figures, ranks, depth, colors, generated_at, n_boot: int = 500,
                   several_arms=None, planned_share: tuple[float, bool] = (0.5, False),
                   cost: float | None = None, value_per_response: float | None = None,
                   value_column: str | None = None, profit_note: str | None = None,
                   band_kind: str = "minmax", plotly_js: str = "inline"):
    """A zero-argument callable building the HTML report (run only when the download is
    clicked): the bootstrap (cached, shared with the page's toggle), deciles of every run,
    the dataset summary with its SRM test, readable configurations and the takeaway, which
    first compares every run with random targeting (the ``Random targeting`` row of
    ``summary``, and each run's bootstrap interval); ``figures``' first chart (the test-set
    curves) gets the random-targeting line (:func:`random_line_figure`).
    ``several_arms`` (a callable giving a per-arm run's report sections) adds that run;
    ``planned_share`` is ``(treated share, assumed?)`` of the SRM test, as on the Data page
    (:func:`ui.common.planned_share`); ``cost``, ``value_per_response`` and ``value_column``
    (the page's inputs; the column's name when the value is per row) are the assumptions
    stated beside the profits; ``plotly_js`` as in :func:`core.runs.report.html_report`
    ("cdn": a small file whose charts load plotly.js from the internet)."""
    import numpy as np

    from core.constants import auuc_column
    from core.data import hygiene
    from core.evaluation.curve_tables import RANDOM
    from core.runs.report import comparison_report, config_table, takeaway
    from ui.charts import decile_figure, share_decile_range

    def build() -> bytes:
        ids = tuple(chosen)
        # built on a download click, outside the page's script run: no progress bar to draw
        boot, paired = bootstrap(ids, splits, definition, cuts, n_boot, labels[reference],
                                 bar=False)
        decile_parts = []
        for rid in chosen:
            table, interval, _ = deciles(ids, splits, labels[rid])
            decile_parts.append((labels[rid], decile_figure(  # the heading names the run
                table, title="Uplift by decile", note=interval, color=colors[labels[rid]])))
        share_decile_range([fig for _, fig in decile_parts])  # one scale for every run
        n_splits = len(splits)
        mixed = mixed_splits_note([runs[rid] for rid in chosen])
        column = auuc_column(cutoff)
        names = [labels[rid] for rid in chosen]
        intervals = random_intervals(boot, names, cutoff)
        random_auuc = summary.at[RANDOM, column] if RANDOM in summary.index else None
        text = takeaway(paired, ranks, cutoff=cutoff, reference=labels[reference],
                        n_splits=n_splits, definition=definition, n_boot=n_boot,
                        auuc={n: summary.at[n, column] for n in names},
                        random_auuc=random_auuc, intervals=intervals)
        share, assumed = planned_share
        srm = hygiene.srm_test(data.t, expected_treated_share=share, assumed=assumed)
        shown = [(h, random_line_figure(f, splits, definition) if i == 0 else f)
                 for i, (h, f) in enumerate(figures)]
        depth_table = depth_display(depth)
        if "verdict" in depth.columns:  # the page's sentence per run, with its caveat
            depth_table["verdict"] = [depth.at[name, "verdict"] for name in depth_table.index]
        html = comparison_report(
            f"UpRank comparison — {data.name}", takeaway=text, dataset=data,
            srm=srm, figures=shown,
            auuc=auuc_display(summary, boot, least=least_decimals(definition)),
            paired=paired, ranks=ranks,
            depth=depth_table, deciles=decile_parts,
            configs=config_table({labels[rid]: runs[rid].config.to_dict() for rid in chosen},
                                 data_name=data.name, source_columns=data.source_columns),
            notes={"curves": " ".join(filter(None, (
                       f"Curve definition: {DEFINITIONS[definition].label}. The dashed grey "
                       "line is random targeting.",
                       # one shared split of runs with more: the mixed note says it (not
                       # "the runs were trained on one 70/30 split")
                       band_meaning(band_kind, n_splits) if mixed is None or n_splits > 1
                       else None, mixed,
                       f"Profit chart: {profit_note}" if profit_note else None))),
                   "auuc": auuc_meaning(definition) + " "
                           + pooling_note(n_splits, bootstrap=True)},
            cutoff=cutoff, n_boot=n_boot, generated_at=generated_at,
            several_arms=several_arms() if several_arms is not None else None,
            assumptions={"cost_per_treatment": cost, "value_per_response": value_per_response,
                         "value_column": value_column, "n_rows": len(data.y),
                         "test_rows": round(np.mean([len(s.y) for s in splits])),
                         "n_splits": n_splits},
            plotly_js=plotly_js, least=least_decimals(definition))
        return html.encode("utf-8")

    return build


# --------------------------------------------------------------------------- the page's sections
#: the runs picked when the page was last drawn, by id, with their names (a plain session key)
_SHOWN = "cmp_shown_runs"


def deleted_runs_warning(runs: Mapping[str, Run]) -> None:
    """Name the runs picked when the page was last drawn that are stored no more.

    A run deleted in another tab or outside the app after the page was drawn drops out of
    ``runs`` and the picker silently; its downloads read its files only when clicked, so they
    can no longer be made.  The scores and model buttons rerun the page on a click
    (:func:`export_section`), so that rerun says which run is gone.  Only the picker's state
    of the page's previous run (``cmp_runs``, dropped by a run of another page) is read: a
    run deleted on another page of this session is not reported, nor one deleted from here
    (the button of :func:`pick_runs` deletes only runs never recorded as shown).

    Parameters
    ----------
    runs
        As in every section (module docstring): the runs stored now, on this rerun.
    """
    shown = st.session_state.get(_SHOWN, {})
    gone = [rid for rid in st.session_state.get("cmp_runs") or ()
            if rid in shown and rid not in runs]
    if gone:
        one = len(gone) == 1
        kept = [rid for rid in st.session_state.get("cmp_runs") or () if rid in runs]
        then = ("" if not runs else  # "No trained runs" follows
                ", and the comparison below leaves " + ("it" if one else "them") + " out"
                if kept else ", and the comparison below starts again from the newest runs")
        st.warning("; ".join(f"**{shown[rid]}**" for rid in gone)
                   + f" {'was' if one else 'were'} deleted after this page was drawn (in "
                   "another tab or outside the app): " + ("its" if one else "their")
                   + f" scores and model file cannot be downloaded{then}.",
                   icon=":material/delete:")


def pick_runs(runs: Mapping[str, Run], labels: Mapping[str, str], fingerprint: str
              ) -> list[str]:
    """Draw the run picker; name the picked runs whose files cannot be read, with a button
    deleting them.

    Parameters
    ----------
    runs, labels
        As in every section (module docstring).
    fingerprint : str
        The dataset's fingerprint: each dataset keeps its own pick across pages.

    Returns
    -------
    list of str
        The ids of the picked runs whose files can be read, in the picker's order.
    """
    # Run names are long: the run picker takes a row and the reference run sits with the paired
    # tests (side by side in thirds, a laptop-wide page cut the second run and the names off).
    common.remember("cmp_runs", default_runs(list(runs.values())),
                    shared=f"{common.SHARED_RUNS}_{fingerprint}", options=list(runs))
    chosen = st.multiselect("Runs", list(runs), key="cmp_runs", format_func=labels.get)
    if broken := unreadable_runs([runs[rid] for rid in chosen]):
        st.warning("Left out of the comparison — the files of "
                   + "; ".join(f"**{labels[rid]}** ({why})" for rid, why in broken.items())
                   + " cannot be read (changed or deleted outside the app). Delete "
                   + ("it" if len(broken) == 1 else "them") + " and train again.",
                   icon=":material/broken_image:")
        if st.button("Delete the damaged run" + "s" * (len(broken) > 1), key="cmp_drop_broken"):
            for rid in broken:
                common.runner().store.delete(rid)
            st.rerun()
        chosen = [rid for rid in chosen if rid not in broken]
    if shared := shared_parts(labels[rid] for rid in chosen):
        st.caption(f"{'Every run picked' if len(chosen) > 1 else 'The run'}: "
                   f"{PART_SEP.join(shared)}. The tables and charts below name the runs "
                   "without it.")
    st.session_state[_SHOWN] = {rid: labels[rid] for rid in chosen}  # deleted_runs_warning
    return chosen


def settings(n_splits: int = 2) -> tuple[str, float, str]:
    """Draw the curve definition, the cut-off and the band over splits (the first two kept
    across the pages that show them); the band's choice is greyed out, with the reason, when
    the runs share ``n_splits`` < 2 splits (no band to draw).

    Returns
    -------
    definition : str
        A key of :data:`core.evaluation.curves.DEFINITIONS`.
    cutoff : float
        The share of the rows targeted, in (0, 1].
    band_kind : {"minmax", "95"}
        The band over the splits: min/max (as in the paper) or a 95 % interval.
    """
    common.remember("cmp_def", "uplift_sep_rel", shared=common.SHARED_DEFINITION,
                    options=list(DEFINITIONS))
    definition = st.selectbox("Curve definition", list(DEFINITIONS), key="cmp_def",
                              format_func=lambda d: DEFINITIONS[d].label,
                              help=GLOSSARY["Definition"])
    c1, c2 = st.columns(2)
    common.remember("cmp_cutoff", 30, shared=common.SHARED_CUTOFF)
    cutoff = c1.slider("Cut-off (share targeted)", 1, 100, format="%d%%", key="cmp_cutoff",
                       help=GLOSSARY["Cut-off"]) / 100
    one = n_splits < 2
    band_kind = c2.radio("Band over splits", ["minmax", "95"], horizontal=True, key="cmp_band",
                         format_func={"minmax": "min/max (paper)", "95": "95 %"}.get,
                         help=("The chosen runs share one test split, so there is no band: "
                               "train with more splits (Train page) to see one. "
                               if one else "") + GLOSSARY["Repeated splits"], disabled=one)
    return definition, cutoff, band_kind


def curves_section(ids: tuple, selected: Sequence[Run], splits, names: Sequence[str], *,
                   definition: str, cutoff: float, band_kind: str, colors: Mapping[str, str]
                   ) -> tuple[go.Figure, dict]:
    """Draw the test-set curves with their band over the splits, and what the chart cannot
    say: a ranker giving every row one score, runs on different splits, a single split.

    Parameters
    ----------
    ids, selected, splits, names, definition, cutoff, colors
        As in every section (module docstring).
    band_kind : {"minmax", "95"}
        The band over the splits.

    Returns
    -------
    fig : plotly.graph_objects.Figure
        The chart (cached: not to be modified).
    bands : dict
        Each run's band ``(x, low, mid, high)`` by name, for the CSV export.
    """
    band_list = bands(ids, selected, definition, band_kind)
    shown = dict(zip(names, band_list))
    fig = band_figure(shown, definition=definition, cutoff=cutoff, colors=colors,
                      random_end=random_end(ids, splits, definition))
    st.plotly_chart(fig, width="stretch", config=common.plot_config("uprank_compare"),
                    key="cmp_fig")
    if flat := constant_rankers(splits):
        st.warning(f"{', '.join(flat)}: every test row gets the same score, so the model "
                   "ranks no one ahead of anyone — its curve is random targeting's. Check the "
                   "data (an outcome copied from the treatment, a constant feature set).",
                   icon=":material/horizontal_rule:")
    if (note := mixed_splits_note(selected)) is not None:
        st.info(note, icon=":material/call_split:")
    elif len(splits) == 1:
        st.caption(band_meaning(band_kind, 1))
    return fig, shown


class AuucTables(NamedTuple):
    """What :func:`auuc_section` computed, for the sections after it and the report."""

    summary: pd.DataFrame  #: AUUC at every cut-off over the splits, baselines included
    per_split: pd.DataFrame  #: the AUUCs of each split, for the CSV export
    cuts: tuple  #: the cut-offs of the table (the usual ones and the page's)
    boot: pd.DataFrame | None  #: the bootstrap intervals, when the toggle is on
    paired: pd.DataFrame | None  #: the paired tests against the reference, likewise
    reference: str  #: the reference run's id
    n_boot: int  #: the page's replicates when it bootstrapped, else the report's


def auuc_section(ids: tuple, splits, chosen: Sequence[str], labels: Mapping[str, str], *,
                 definition: str, cutoff: float) -> AuucTables:
    """Draw the AUUC table over the splits, with the bootstrap toggle (reference run and
    replicates when on), its caption and what it says against random targeting.

    Parameters
    ----------
    ids, splits, chosen, labels, definition, cutoff
        As in every section (module docstring); ``cutoff`` joins the table's cut-offs.

    Returns
    -------
    AuucTables
        The tables, the reference run and the replicates, for the paired tests and the
        report.
    """
    st.subheader("AUUC on the test rows", help=GLOSSARY["AUUC"])
    cuts = tuple(sorted(set(CUTOFFS) | {cutoff}))
    summary, per_split = auuc(ids, splits, definition, cuts)
    boot_on = st.toggle("Bootstrap 95 % intervals and paired tests", key="cmp_boot",
                        help=GLOSSARY["Bootstrap"])
    # the analyst's reference, kept while the bootstrap (and so its selectbox) is off
    reference = st.session_state.get("kept_cmp_ref")
    if reference not in chosen:
        reference = chosen[0]  # preselect: never "Choose an option"
    boot = paired = None
    n_boot = 500  # the report's replicates when the page did not bootstrap
    if boot_on:
        common.remember("cmp_ref", reference, options=chosen)
        reference = st.selectbox("Reference run (paired tests)", chosen, key="cmp_ref",
                                 format_func=labels.get)
        n_boot = st.select_slider("Replicates per split", [200, 500, 1000, 2000], 500,
                                  key="cmp_nboot")
        boot, paired = bootstrap(ids, splits, definition, cuts, n_boot, labels[reference])
    least = least_decimals(definition)  # shares of an arm, or counts of responders
    # the legend's short run names, and the intervals at the page's cut-off only (that of
    # the paired tests): the full table (every cut-off's interval) is in the report
    table = auuc_display(summary, boot, least=least, intervals_at=cutoff)
    shown = table.rename(index=short_names(table.index, drop_shared=True))
    st.dataframe(shown, width="stretch", key="cmp_table", column_config={
        "_index": st.column_config.Column(width=label_width(shown.index))})
    st.caption(auuc_meaning(definition) + " " + pooling_note(len(splits), bootstrap=boot_on)
               + " Random targeting and Perfect (oracle) are the baselines"
               + ("; a value without ± is the same on every split (stratified splits give "
                  "the baselines the same test counts)." if len(splits) > 1
                  else ".")
               + (f" Intervals at the cut-off ({cutoff:.0%}), where the paired tests are; "
                  "the report has them at every cut-off." if boot_on else ""))
    if (against := random_warning(summary, boot, [labels[r] for r in chosen],
                                  cutoff)) is not None:
        kind, text = against
        if kind == "warning":
            st.warning(text, icon=":material/shuffle:")
        else:
            st.caption(text)
    return AuucTables(summary, per_split, cuts, boot, paired, reference, n_boot)


def auuc_meaning(definition: str) -> str:
    """What an AUUC number is, in the units of ``definition``: under the page's AUUC table
    and in the report (which had no word on it)."""
    unit = ("a share of each arm (0.01 = one percentage point of extra response)"
            if DEFINITIONS[definition].units == "relative" else DEFINITIONS[definition].unit)
    return (f"AUUC@x % = the area under the curve from 0 to x % targeted (its average height "
            f"there times x), in {unit}; higher is better.")


def band_meaning(kind: str, n_splits: int) -> str:
    """What the shaded band around each run's curve is (the report said nothing of it)."""
    if n_splits < 2:
        return "One split: the runs were trained on one 70/30 split, so there is no band."
    spread = ("from the lowest to the highest" if kind == "minmax" else
              "the middle 95 % (2.5th to 97.5th percentile)")
    return (f"The shaded band around each run spans {spread} of its curves on the "
            f"{n_splits} test splits; the line is their mean.")


def paired_section(tables: AuucTables, labels: Mapping[str, str], *, definition: str,
                   cutoff: float) -> None:
    """Draw the paired tests against the reference run at ``cutoff`` (when the bootstrap
    ran).

    Parameters
    ----------
    tables : AuucTables
        What :func:`auuc_section` computed.
    labels, definition, cutoff
        As in every section (module docstring).
    """
    if tables.paired is not None:
        st.markdown(f"**Against the reference** ({labels[tables.reference]}) at {cutoff:.0%}")
        paired = paired_display(tables.paired, cutoff=cutoff, n_boot=tables.n_boot,
                                least=least_decimals(definition))
        # the legend's names: what every picked run shares (the reference among them, which
        # has no row here) left out; from the rows alone "· 500 trees" was dropped as shared
        short = short_names([labels[tables.reference], *paired.index], drop_shared=True)
        st.dataframe(paired.rename(index=short), width="stretch", key="cmp_paired",
                     column_config={"_index": st.column_config.Column(
                         width=label_width(short.values()))})


def ranks_section(ids: tuple, splits, names: Sequence[str], *, cutoff: float
                  ) -> pd.DataFrame:
    """Draw each run's AUUC and rank at ``cutoff`` under every curve definition, and say
    whether the winner changes with the definition.

    Parameters
    ----------
    ids, splits, names, cutoff
        As in every section (module docstring).

    Returns
    -------
    pandas.DataFrame
        The ranks (:func:`core.evaluation.across_splits.definition_ranks_over_splits`), for
        the report.
    """
    n_splits = len(splits)
    st.subheader("Does the winner depend on the definition?", help=GLOSSARY["Definition"])
    ranks = definition_ranks(ids, splits, cutoff)
    short = short_names(names, drop_shared=True)
    # narrow run columns ("0.0041 (rank 1)"), the full name in each header's tooltip: three
    # runs' columns ran past a laptop's width
    st.dataframe(ranks_display(ranks, short), width="stretch", key="cmp_ranks",
                 column_config={"winner": st.column_config.TextColumn(
                                    width=label_width(short.values(), least=200)),
                                **{s: st.column_config.TextColumn(s, help=full, width=125)
                                   for full, s in short.items()}})
    st.caption(f"AUUC@{cutoff:.0%} under each definition and the run's rank (1 = best)"
               + (f", mean over {n_splits} splits." if n_splits > 1 else ", one split.")
               + (" The winner changes with the definition: say which one you report."
                  if ranks["winner changes?"].any() else
                  " The winner is the same under every definition."))
    return ranks


def pndcg_section(ids: tuple, splits) -> None:
    """Draw, folded, the P-nDCG and nDCG of the scores with their CSV download.

    Parameters
    ----------
    ids, splits
        As in every section (module docstring).
    """
    with st.expander("P-nDCG and nDCG of the scores (relevant = Abs1 label: TR or CN)"):
        p_map = st.radio("Probability from the score", ["rank", "platt"], horizontal=True,
                         key="cmp_pndcg_map", format_func={
                             "rank": "score quantile (compares orderings)",
                             "platt": "Platt calibration (confidence)"}.get)
        pndcg = ranking_metrics(ids, splits, p_map)
        st.dataframe(pndcg, width="stretch", key="cmp_pndcg", column_config={
            c: st.column_config.NumberColumn(format="%.4f")  # 0.6880 beside 0.6811
            for c in pndcg.select_dtypes("number").columns})
        st.caption(GLOSSARY["P-nDCG"] + " " + PNDCG_NOTE[p_map])
        st.download_button("P-nDCG table (CSV)", safe_csv_bytes(pndcg, index=True),
                           f"uprank_pndcg_{p_map}.csv", "text/csv", key="cmp_pndcg_csv")


def depth_section(data: ABData, ids: tuple, selected: Sequence[Run], splits, *,
                  colors: Mapping[str, str]) -> tuple[go.Figure, pd.DataFrame, dict]:
    """Draw the value of the targeting depth: cost and value inputs, the incremental profit
    by depth with its uncertainty, each run's verdict and the summary table.

    Parameters
    ----------
    data, ids, selected, splits, colors
        As in every section (module docstring); a value column of
        ``data.value_columns()`` (preselected when the outcome is that amount)
        reads the ``selected`` runs' test rows again.

    Returns
    -------
    fig : plotly.graph_objects.Figure
        The profit chart (cached: not to be modified).
    depth : pandas.DataFrame
        Each run's best depth, equivalent depths and verdict.
    assumptions : dict
        ``cost``, ``value_per_response`` and ``value_column`` as
        :func:`report_builder` takes them.
    """
    n_splits = len(splits)
    st.subheader("What is the targeting depth worth?",
                 help=GLOSSARY["Statistically equivalent depths"])
    choice = st.container()  # the value's source first, then cost | value per response
    v1, v2 = st.columns(2)
    amounts = data.value_columns()  # an amount outcome's own column first
    value_col = choice.selectbox("Value per row from", ["fixed value per response", *amounts],
                                 index=0 if data.amount_name() is None else 1,
                                 key="cmp_value_col",
                                 help="A fixed value per extra response, or each customer's "
                                      "own amount (e.g. spend): the profit then counts the "
                                      "extra amount targeting brings.")
    cost = v1.number_input("Cost per treatment", 0.0, 1e6, 0.10, key="cmp_cost")
    per_resp = v2.number_input("Value per response", 0.0, 1e9, 10.0, key="cmp_value",
                               disabled=value_col != "fixed value per response")
    fixed = value_col == "fixed value per response"
    econ_splits = splits if fixed else load_splits(ids, selected, value_col,
                                                   amounts[value_col])
    curves, depth, band_note = profit(ids, econ_splits, cost, (value_col, per_resp),
                                      per_resp if fixed else None)
    equivalent = {name: (row["equivalent_low"], row["equivalent_high"])
                  for name, row in depth.iterrows() if "equivalent_low" in depth.columns}
    fig = profit_figure(curves, colors=colors, equivalent=equivalent)
    st.plotly_chart(fig, width="stretch", key="cmp_profit",
                    config=common.plot_config("uprank_profit"))
    profit_note = (f"Profit = incremental value − cost, on {n_splits} test split"
                   f"{'s (mean)' if n_splits > 1 else ''}; {band_note}. The thick segment "
                   "marks the depths whose profit is statistically equivalent to the best "
                   "(95 %).")
    st.caption(profit_note)
    shown = short_names(depth.index, drop_shared=True)  # as the legend and the tables
    for name, row in depth.iterrows():
        (st.info if "equivalent" in str(row["verdict"]) else st.success)(
            f"**{shown[name]}** — {row['verdict']}")
    table, everyone = depth_table(depth)
    st.dataframe(table, width="stretch", key="cmp_summary", column_config=DEPTH_COLUMNS)
    st.caption(RANGES_NOTE + " Profit is in the units of the value per response (or of the "
               "value column)" + (f"; treating everyone gives {everyone}, whichever the "
                                  "ranking." if everyone is not None else "."))
    common.figure_html_button(fig, "uprank_profit", "cmp_profit_html",
                              label="Profit chart (HTML)")
    return fig, depth, {"cost": cost, "value_per_response": per_resp if fixed else None,
                        "value_column": None if fixed else value_col,
                        "profit_note": profit_note}


def decile_section(ids: tuple, splits, summary: pd.DataFrame, chosen: Sequence[str],
                   labels: Mapping[str, str], *, cutoff: float, colors: Mapping[str, str]
                   ) -> str:
    """Draw the uplift by decile of one run (first the one with the best AUUC at
    ``cutoff``) and whether the treatment share drifts along its ranking.

    Parameters
    ----------
    ids, splits, chosen, labels, cutoff, colors
        As in every section (module docstring).
    summary : pandas.DataFrame
        The AUUC table (:attr:`AuucTables.summary`).

    Returns
    -------
    str
        The id of the run shown (its scores and model are the ones exported).
    """
    n_splits = len(splits)
    st.subheader("Uplift by decile")
    best = best_run(summary, {rid: labels[rid] for rid in chosen}, cutoff)
    which = st.selectbox("Run", chosen, key="cmp_decile_run", format_func=labels.get,
                         index=chosen.index(best))
    dec, interval, imbalanced = deciles(ids, splits, labels[which])
    fig = decile_figure(dec, title=labels[which], note=interval, color=colors[labels[which]])
    st.plotly_chart(fig, width="stretch", key="cmp_deciles",
                    config=common.plot_config("uprank_deciles"))
    common.figure_html_button(fig, "uprank_deciles", "cmp_deciles_html",
                              label="Decile chart (HTML)")
    (st.warning if imbalanced else st.success)(
        "Treatment share along the ranking: " + ("some deciles differ from the overall share "
        "— the model may have learnt the assignment." if imbalanced else
        f"no decile differs from the overall share (checked on {n_splits} split"
        f"{'s' if n_splits > 1 else ''})."))
    return which


def points_frame(bands: dict, fig: go.Figure) -> pd.DataFrame:
    """The points file of the test-set curves: each run's band (:func:`bands_frame`) and,
    when the chart ``fig`` draws it, the random-targeting line as its two end points (low =
    mean = high), as the Curves page's file has its baselines."""
    import pandas as pd

    from core.evaluation.curve_tables import RANDOM

    points = bands_frame(bands)
    line = next((t for t in fig.data if getattr(t, "name", None) == RANDOM), None)
    if line is None:
        return points
    x, y = ([float(v) for v in values] for values in (line.x, line.y))
    random = pd.DataFrame({"run": RANDOM, "fraction": x, "low": y, "mean": y, "high": y})
    return pd.concat([points, random], ignore_index=True)


def export_section(data: ABData, runs: Mapping[str, Run], labels: Mapping[str, str],
                   which: str, *, definition: str, fig: go.Figure, bands: dict,
                   per_split: pd.DataFrame, report: dict) -> None:
    """Draw the downloads: scores and model file of run ``which``, the report (offline or
    small), the curves' points and chart, the AUUC table of every split.

    Every file is built when its button is clicked.  The scores and model file are read from
    the run's folder then, so those two buttons rerun the page: a run deleted meanwhile (in
    another tab) cannot give its file, and the rerun says so (:func:`deleted_runs_warning`).
    The others are built from what the page holds and do not rerun it.

    Parameters
    ----------
    data, runs, labels, definition
        As in every section (module docstring).
    which : str
        The id of the run whose scores and model are offered (:func:`decile_section`).
    fig : plotly.graph_objects.Figure
        The test-set curves chart.
    bands : dict
        Each run's band by name (:func:`curves_section`).
    per_split : pandas.DataFrame
        The AUUCs of each split (:attr:`AuucTables.per_split`).
    report : dict
        The keyword arguments of :func:`report_builder`.
    """
    st.subheader("Export")
    st.caption(f"Scores and model file of **{labels[which]}** (the run picked for the "
               "decile chart above).")
    e1 = e2 = e3 = st.container(horizontal=True)  # buttons side by side, wrapped when narrow
    e1.download_button("Scores of this run, every split (CSV)", lambda: safe_csv_bytes(
        scores_frame(runs[which], split="all", data=data)),
        common.file_stem("uprank_scores", labels[which], which[:8]) + ".csv", "text/csv",
        key="cmp_dl_scores", on_click="rerun")
    model_path = runs[which].model_path(0)
    if model_path is not None:
        e2.download_button("Model file of split 1 (LightGBM text / JSON)", model_path.read_bytes,
                           common.file_stem("uprank_model", labels[which], which[:8])
                           + model_path.suffix, key="cmp_dl_model", on_click="rerun")
    e3.download_button("Report (one HTML file)", report_builder(**report),
                       common.file_stem("uprank_report", data.name) + ".html", "text/html",
                       key="cmp_dl_report", on_click="ignore",
                       help="Opens offline: the chart library is inside (about 5 MB).")
    e3.download_button("Report, small for e-mail", report_builder(**report, plotly_js="cdn"),
                       common.file_stem("uprank_report", data.name, "small") + ".html",
                       "text/html", key="cmp_dl_report_small", on_click="ignore",
                       help="The same report in about 100 kB: its charts load the chart "
                            "library (plotly.js) from the internet when opened.")
    row = st.container(horizontal=True)
    common.download_row(fig, points_frame(bands, fig), f"uprank_compare_{definition}",
                        key="cmp_dl", container=row)
    row.download_button("AUUC table (CSV, per split)", lambda: auuc_csv(per_split, definition),
                        f"uprank_auuc_{definition}.csv", "text/csv", key="cmp_dl_auuc",
                        on_click="ignore")
