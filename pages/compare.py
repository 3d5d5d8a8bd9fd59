"""Compare: test-set curves with bands, AUUC over all splits with bootstrap intervals,
definition sensitivity, value of the targeting depth with its uncertainty, deciles, exports."""

from datetime import datetime, timezone

import streamlit as st

from core.runs.views import display_labels
from ui import common
from ui import compare_view as view
from ui.charts import run_colors
from ui.multiarm_view import compare_section

st.title("Compare runs")
data = common.current_data()
common.dataset_caption(data)
fingerprint = data.fingerprint()
arms_report = None  # the per-arm run's report sections, when one is shown
if data.multiarm is not None:
    arms_report = compare_section(data)
    st.divider()
    st.header("Any treatment vs control")
runs = {r.run_id: r for r in common.runner().store.list(fingerprint=fingerprint)}
labels = display_labels(list(runs.values()))
view.deleted_runs_warning(runs)
if not runs:
    st.info("No two-arm runs on this dataset yet: per-arm runs are shown above; train a model "
            "of any treatment vs control on the Train page for this section."
            if data.multiarm is not None else "No trained runs on this dataset yet.")
    st.page_link("pages/train.py", label="Train models", icon=":material/model_training:")
    st.stop()

chosen = view.pick_runs(runs, labels, fingerprint)
definition, cutoff, band_kind = view.settings(min((runs[r].n_splits for r in chosen),
                                                   default=2))
if not chosen:
    st.info("Pick at least one run.")
    st.stop()

with common.guard("Comparing the runs"):
    selected = [runs[rid] for rid in chosen]
    ids, names = tuple(chosen), [labels[rid] for rid in chosen]
    splits = view.load_splits(ids, selected)
    colors = {labels[rid]: color for rid, color in run_colors(chosen).items()}
    fig, bands = view.curves_section(ids, selected, splits, names, definition=definition,
                                     cutoff=cutoff, band_kind=band_kind, colors=colors)
    tables = view.auuc_section(ids, splits, chosen, labels, definition=definition,
                               cutoff=cutoff)
    view.paired_section(tables, labels, definition=definition, cutoff=cutoff)
    ranks = view.ranks_section(ids, splits, names, cutoff=cutoff)
    view.pndcg_section(ids, splits)
    profit_fig, depth, assumptions = view.depth_section(data, ids, selected, splits,
                                                        colors=colors)
    which = view.decile_section(ids, splits, tables.summary, chosen, labels, cutoff=cutoff,
                                colors=colors)
    report_inputs = dict(
        data=data, runs=runs, chosen=chosen, labels=labels, definition=definition,
        cutoff=cutoff, splits=splits, cuts=tables.cuts, summary=tables.summary,
        reference=tables.reference,
        figures=[("Test-set curves", fig), ("Incremental profit by depth", profit_fig)],
        ranks=ranks, depth=depth, colors=colors, several_arms=arms_report,
        planned_share=common.planned_share(data)[::2], n_boot=tables.n_boot, **assumptions,
        band_kind=band_kind,
        generated_at=datetime.now(timezone.utc))
    view.export_section(data, runs, labels, which, definition=definition, fig=fig, bands=bands,
                        per_split=tables.per_split, report=report_inputs)
