"""Compare: test-set curves with bands, AUUC over all splits with bootstrap intervals,
definition sensitivity, value of the targeting depth with its uncertainty, deciles, exports."""

from datetime import datetime, timezone

import streamlit as st

from core.constants import CUTOFFS, DASH
from core.evaluation.across_splits import pooling_note
from core.evaluation.curves import DEFINITIONS
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
    display_labels,
    least_decimals,
    mixed_splits_note,
    paired_display,
    ranks_display,
    scores_frame,
    test_splits,
    unreadable_runs,
)
from ui import common
from ui import compare_view as view
from ui.charts import run_colors, short_names
from ui.glossary import GLOSSARY, PNDCG_NOTE
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
if not runs:
    st.info("No two-arm runs on this dataset yet: per-arm runs are shown above; train a model "
            "of any treatment vs control on the Train page for this section."
            if data.multiarm is not None else "No trained runs on this dataset yet.")
    st.page_link("pages/train.py", label="Train models", icon=":material/model_training:")
    st.stop()

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
common.remember("cmp_def", "uplift_sep_rel", shared=common.SHARED_DEFINITION,
                options=list(DEFINITIONS))
definition = st.selectbox("Curve definition", list(DEFINITIONS), key="cmp_def",
                          format_func=lambda d: DEFINITIONS[d].label,
                          help=GLOSSARY["Definition"])
c1, c2 = st.columns(2)
common.remember("cmp_cutoff", 30, shared=common.SHARED_CUTOFF)
cutoff = c1.slider("Cut-off (share targeted)", 1, 100, format="%d%%", key="cmp_cutoff",
                   help=GLOSSARY["Cut-off"]) / 100
band_kind = c2.radio("Band over splits", ["minmax", "95"], horizontal=True, key="cmp_band",
                     format_func={"minmax": "min/max (paper)", "95": "95 %"}.get,
                     help=GLOSSARY["Repeated splits"])
if chosen and st.session_state.get("cmp_ref_kept") not in chosen:
    st.session_state["cmp_ref_kept"] = chosen[0]  # preselect: never "Choose an option"
reference = st.session_state["cmp_ref_kept"] if chosen else None
if not chosen:
    st.info("Pick at least one run.")
    st.stop()

with common.guard("Comparing the runs"):
    selected = [runs[rid] for rid in chosen]
    ids = tuple(chosen)
    indices, splits = test_splits(selected)
    n_splits = len(splits)
    colors = {labels[rid]: color for rid, color in run_colors(chosen).items()}
    band_list = view.bands(ids, selected, definition, band_kind)
    bands = dict(zip([labels[r] for r in chosen], band_list))
    fig = view.band_figure(bands, definition=definition, cutoff=cutoff, colors=colors,
                           random_end=view.random_end(ids, splits, definition))
    st.plotly_chart(fig, width="stretch", config=common.plot_config("uprank_compare"),
                    key="cmp_fig")
    if flat := constant_rankers(splits):
        st.warning(f"{', '.join(flat)}: every test row gets the same score, so the model "
                   "ranks no one ahead of anyone — its curve is random targeting's. Check the "
                   "data (an outcome copied from the treatment, a constant feature set).",
                   icon=":material/horizontal_rule:")
    if (note := mixed_splits_note(selected)) is not None:
        st.info(note, icon=":material/call_split:")
    elif n_splits == 1:
        st.caption("One split: the runs were trained on one 70/30 split, so there is no band.")

    st.subheader("AUUC on the test rows", help=GLOSSARY["AUUC"])
    cuts = tuple(sorted(set(CUTOFFS) | {cutoff}))
    summary, per_split = view.auuc(ids, splits, definition, cuts)
    boot_on = st.toggle("Bootstrap 95 % intervals and paired tests", key="cmp_boot",
                        help=GLOSSARY["Bootstrap"])
    boot = paired = None
    if boot_on:
        st.session_state.setdefault("cmp_ref", reference)
        if st.session_state["cmp_ref"] not in chosen:
            st.session_state["cmp_ref"] = reference
        reference = st.selectbox("Reference run (paired tests)", chosen, key="cmp_ref",
                                 format_func=labels.get)
        st.session_state["cmp_ref_kept"] = reference  # kept while the bootstrap is off
        n_boot = st.select_slider("Replicates per split", [200, 500, 1000, 2000], 500,
                                  key="cmp_nboot")
        boot, paired = view.bootstrap(ids, splits, definition, cuts, n_boot, labels[reference])
    least = least_decimals(definition)  # shares of an arm, or counts of responders
    st.dataframe(auuc_display(summary, boot, least=least), width="stretch", key="cmp_table")
    unit = ("a share of each arm (0.01 = one percentage point of extra response)"
            if DEFINITIONS[definition].units == "relative" else "extra responders (a count)")
    st.caption(f"AUUC@x % = the area under the curve from 0 to x % targeted (its average "
               f"height there times x), in {unit}; "
               "higher is better. " + pooling_note(n_splits, bootstrap=boot_on)
               + " Random targeting and Perfect (oracle) are the baselines.")
    if (against := view.random_warning(summary, boot, [labels[r] for r in chosen],
                                       cutoff)) is not None:
        kind, text = against
        if kind == "warning":
            st.warning(text, icon=":material/shuffle:")
        else:
            st.caption(text)
    if paired is not None:
        st.markdown(f"**Against the reference** ({labels[reference]}) at {cutoff:.0%}")
        st.dataframe(paired_display(paired, cutoff=cutoff, n_boot=n_boot, least=least),
                     width="stretch", key="cmp_paired")

    st.subheader("Does the winner depend on the definition?", help=GLOSSARY["Definition"])
    ranks = view.definition_ranks(ids, splits, cutoff)
    st.dataframe(ranks_display(ranks, short_names([labels[r] for r in chosen])),
                 width="stretch", key="cmp_ranks")
    st.caption(f"AUUC@{cutoff:.0%} under each definition and the run's rank (1 = best)"
               + (f", mean over {n_splits} splits." if n_splits > 1 else ", one split.")
               + (" The winner changes with the definition: say which one you report."
                  if ranks["winner changes?"].any() else
                  " The winner is the same under every definition."))

    with st.expander("P-nDCG and nDCG of the scores (relevant = Abs1 label: TR or CN)"):
        p_map = st.radio("Probability from the score", ["rank", "platt"], horizontal=True,
                         key="cmp_pndcg_map", format_func={
                             "rank": "score quantile (compares orderings)",
                             "platt": "Platt calibration (confidence)"}.get)
        pndcg = view.ranking_metrics(ids, splits, p_map)
        st.dataframe(pndcg, width="stretch", key="cmp_pndcg")
        st.caption(GLOSSARY["P-nDCG"] + " " + PNDCG_NOTE[p_map])
        st.download_button("P-nDCG table (CSV)", safe_csv_bytes(pndcg, index=True),
                           f"uprank_pndcg_{p_map}.csv", "text/csv", key="cmp_pndcg_csv")

    st.subheader("What is the targeting depth worth?")
    choice = st.container()  # the value's source first, then cost | value per response
    v1, v2 = st.columns(2)
    value_col = choice.selectbox("Value per row from",
                                 ["fixed value per response", *data.extra], key="cmp_value_col")
    cost = v1.number_input("Cost per treatment", 0.0, 1e6, 0.10, key="cmp_cost")
    per_resp = v2.number_input("Value per response", 0.0, 1e9, 10.0, key="cmp_value",
                               disabled=value_col != "fixed value per response")
    fixed = value_col == "fixed value per response"
    econ_splits = splits if fixed else test_splits(selected, value=data.extra[value_col])[1]
    curves, depth, band_note = view.profit(ids, econ_splits, cost, (value_col, per_resp),
                                           per_resp if fixed else None)
    equivalent = {name: (row["equivalent_low"], row["equivalent_high"])
                  for name, row in depth.iterrows() if "equivalent_low" in depth.columns}
    profit_fig = view.profit_figure(curves, colors=colors, equivalent=equivalent)
    st.plotly_chart(profit_fig, width="stretch", key="cmp_profit",
                    config=common.plot_config("uprank_profit"))
    st.caption(f"Profit = incremental value − cost, on {n_splits} test split"
               f"{'s (mean)' if n_splits > 1 else ''}; {band_note}. The thick segment marks "
               "the depths whose profit is statistically equivalent to the best (95 %).")
    for name, row in depth.iterrows():
        (st.info if "equivalent" in str(row["verdict"]) else st.success)(
            f"**{name}** — {row['verdict']}")
    st.dataframe(depth_display(depth), width="stretch", key="cmp_summary")
    st.caption(RANGES_NOTE + " Profit is in the units of the value per response (or of the "
               "value column).")
    common.figure_html_button(profit_fig, "uprank_profit", "cmp_profit_html",
                              label="Profit chart (HTML)")

    st.subheader("Uplift by decile")
    best = best_run(summary, {rid: labels[rid] for rid in chosen}, cutoff)
    which = st.selectbox("Run", chosen, key="cmp_decile_run", format_func=labels.get,
                         index=chosen.index(best))
    dec, interval, imbalanced = view.deciles(ids, splits, labels[which])
    decile_fig = view.decile_figure(dec, title=labels[which], note=interval,
                                    color=colors[labels[which]])
    st.plotly_chart(decile_fig, width="stretch", key="cmp_deciles",
                    config=common.plot_config("uprank_deciles"))
    common.figure_html_button(decile_fig, "uprank_deciles", "cmp_deciles_html",
                              label="Decile chart (HTML)")
    (st.warning if imbalanced else st.success)(
        "Treatment share along the ranking: " + ("some deciles differ from the overall share "
        "— the model may have learnt the assignment." if imbalanced else
        f"no decile differs from the overall share (checked on {n_splits} split"
        f"{'s' if n_splits > 1 else ''})."))

    st.subheader("Export")
    st.caption(f"Scores and model file of **{labels[which]}** (the run picked for the "
               "decile chart above).")
    e1 = e2 = e3 = st.container(horizontal=True)  # buttons side by side, wrapped when narrow
    e1.download_button("Scores of this run, every split (CSV)", lambda: safe_csv_bytes(
        scores_frame(runs[which], split="all", data=data)),
        common.file_stem("uprank_scores", labels[which], which[:8]) + ".csv", "text/csv",
        key="cmp_dl_scores", on_click="ignore")
    model_path = runs[which].model_path(0)
    if model_path is not None:
        e2.download_button("Model file of split 1 (LightGBM text / JSON)", model_path.read_bytes,
                           common.file_stem("uprank_model", labels[which], which[:8])
                           + model_path.suffix, key="cmp_dl_model", on_click="ignore")
    report_inputs = dict(
        data=data, runs=runs, chosen=chosen, labels=labels, definition=definition,
        cutoff=cutoff, splits=splits, cuts=cuts, summary=summary, reference=reference,
        figures=[("Test-set curves", fig), ("Incremental profit by depth", profit_fig)],
        ranks=ranks, depth=depth, colors=colors, several_arms=arms_report,
        planned_share=common.planned_share(data)[::2], cost=cost,
        n_boot=n_boot if boot_on else 500,  # the page's replicates when it bootstrapped
        value_per_response=per_resp if fixed else None, value_column=None if fixed else value_col,
        generated_at=datetime.now(timezone.utc))
    e3.download_button("Report (one HTML file)", view.report_builder(**report_inputs),
                       common.file_stem("uprank_report", data.name) + ".html", "text/html",
                       key="cmp_dl_report", on_click="ignore",
                       help="Opens offline: the chart library is inside (about 5 MB).")
    e3.download_button("Report, small for e-mail", view.report_builder(
        **report_inputs, plotly_js="cdn"),
        common.file_stem("uprank_report", data.name, "small") + ".html", "text/html",
        key="cmp_dl_report_small", on_click="ignore",
        help="The same report in tens of kB: its charts load the chart library (plotly.js) "
             "from the internet when opened.")
    row = st.container(horizontal=True)
    common.download_row(fig, bands_frame(bands), f"uprank_compare_{definition}", key="cmp_dl",
                        container=row)
    row.download_button("AUUC table (CSV, per split)", lambda: auuc_csv(per_split, definition),
                       f"uprank_auuc_{definition}.csv", "text/csv", key="cmp_dl_auuc",
                       on_click="ignore")
