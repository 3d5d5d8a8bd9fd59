"""Cached computations of the Compare page: every number over all test splits of the chosen
runs (:mod:`core.evaluation.across_splits`).  Keys are the run ids and settings; the split
arrays are passed unhashed (``_splits``) because the run ids already identify them."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

import streamlit as st

from core.evaluation import across_splits as over
from core.evaluation import compare
from core.evaluation.targeting import treatment_balance_along_ranking
from core.runs.views import split_curves
from ui import charts

# The figures of the Compare page, kept per input (a plotly figure costs 20–50 ms to build
# and validate; a rerun after a widget change that does not touch a chart reuses it).
# ``cache_resource`` returns the object itself: the page never modifies a figure.
band_figure = st.cache_resource(show_spinner=False, max_entries=32)(charts.band_figure)
profit_figure = st.cache_resource(show_spinner=False, max_entries=32)(charts.profit_figure)
decile_figure = st.cache_resource(show_spinner=False, max_entries=32)(charts.decile_figure)


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
    return [compare.band(split_curves(run, definition), kind=kind) for run in _runs]


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
                   value_column: str | None = None, plotly_js: str = "inline"):
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
    from core.evaluation.across_splits import pooling_note
    from core.evaluation.curve_tables import RANDOM
    from core.evaluation.curves import DEFINITIONS
    from core.runs.report import comparison_report, config_table, takeaway
    from core.runs.views import auuc_display, depth_display, least_decimals
    from ui.charts import decile_figure

    def build() -> bytes:
        ids = tuple(chosen)
        # built on a download click, outside the page's script run: no progress bar to draw
        boot, paired = bootstrap(ids, splits, definition, cuts, n_boot, labels[reference],
                                 bar=False)
        decile_parts = []
        for rid in chosen:
            table, interval, _ = deciles(ids, splits, labels[rid])
            decile_parts.append((labels[rid], decile_figure(
                table, title=labels[rid], note=interval, color=colors[labels[rid]])))
        n_splits = len(splits)
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
            notes={"curves": f"Curve definition: {DEFINITIONS[definition].label}. The dashed "
                             "grey line is random targeting.",
                   "auuc": pooling_note(n_splits, bootstrap=True)},
            cutoff=cutoff, n_boot=n_boot, generated_at=generated_at,
            several_arms=several_arms() if several_arms is not None else None,
            assumptions={"cost_per_treatment": cost, "value_per_response": value_per_response,
                         "value_column": value_column, "n_rows": len(data.y),
                         "test_rows": round(np.mean([len(s.y) for s in splits])),
                         "n_splits": n_splits},
            plotly_js=plotly_js)
        return html.encode("utf-8")

    return build
