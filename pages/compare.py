"""Compare: test-set curves with bands, AUUC with bootstrap intervals, definition
sensitivity, value of the targeting depth, deciles, and exports."""

from datetime import datetime, timezone

import streamlit as st

from core.constants import CUTOFFS
from core.evaluation import compare, targeting
from core.evaluation.curve_tables import auuc_summary
from core.evaluation.curves import DEFINITIONS
from core.runs.export import safe_csv_bytes
from core.runs.report import html_report
from core.runs.views import (
    bands_frame,
    display_labels,
    scores_frame,
    split_curves,
    test_scores,
)
from ui import common
from ui.charts import band_figure, decile_figure, profit_figure


@st.cache_data(show_spinner="Bootstrapping…", max_entries=32)
def bootstrap(_scores, run_ids: tuple, y, t, definition, cutoffs, n_boot, reference):
    res = compare.bootstrap_auuc(y, t, _scores, definition=definition, cutoffs=cutoffs,
                                 n_boot=n_boot, random_state=0, reference=reference)
    return res.table(), res.paired(reference)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_bands(run_ids: tuple, _runs: list, definition: str, kind: str):
    return [compare.band(split_curves(run, definition), kind=kind) for run in _runs]


@st.cache_data(show_spinner=False, max_entries=64)
def cached_value(run_ids: tuple, _y, _t, _scores, cost: float, econ_key: tuple, _econ):
    profits = {n: targeting.profit_curve(_y, _t, s, cost_per_treatment=cost, max_points=500,
                                         **_econ) for n, s in _scores.items()}
    return profits, targeting.targeting_summary(_y, _t, _scores, cost_per_treatment=cost, **_econ)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_deciles(run_id: str, _y, _t, _score):
    return (targeting.uplift_by_decile(_y, _t, _score),
            targeting.treatment_balance_along_ranking(_t, _score))


st.title("Compare runs")
data = common.current_data()
common.dataset_caption(data)
runs = {r.run_id: r for r in common.runner().store.list(fingerprint=data.fingerprint())}
labels = display_labels(list(runs.values()))
if not runs:
    st.info("No trained runs on this dataset yet.")
    st.page_link("pages/train.py", label="Train models", icon=":material/model_training:")
    st.stop()

c1, c2 = st.columns([3, 2])
chosen = c1.multiselect("Runs", list(runs), default=list(runs)[:4], key="cmp_runs",
                        format_func=labels.get)
definition = c2.selectbox("Curve definition", list(DEFINITIONS), index=3, key="cmp_def")
c1, c2, c3 = st.columns(3)
cutoff = c1.slider("Cut-off", 1, 100, 30, format="%d%%", key="cmp_cutoff") / 100
band_kind = c2.radio("Band over splits", ["minmax", "95"], horizontal=True, key="cmp_band",
                     format_func={"minmax": "min/max (paper)", "95": "95 %"}.get)
reference = c3.selectbox("Reference run", chosen or [None], key="cmp_ref",
                         format_func=lambda rid: labels.get(rid, "—"))
if not chosen:
    st.stop()

with common.guard("Comparing the runs"):
    selected = [runs[name] for name in chosen]
    index, y, t, scores = test_scores(selected)
    ids = tuple(chosen)
    bands = dict(zip([labels[r] for r in chosen], cached_bands(ids, selected, definition,
                                                               band_kind)))
    fig = band_figure(bands, definition=definition, cutoff=cutoff)
    st.plotly_chart(fig, width="stretch", config=common.plot_config("uprank_compare"),
                    key="cmp_fig")

    st.subheader("AUUC on the test rows")
    cuts = tuple(sorted(set(CUTOFFS) | {cutoff}))
    table = auuc_summary(y, t, scores, definition=definition, cutoffs=cuts)
    if st.toggle("Bootstrap 95 % intervals and paired tests", key="cmp_boot"):
        n_boot = st.select_slider("Replicates", [200, 500, 1000, 2000], 500, key="cmp_nboot")
        table, paired = bootstrap(scores, ids, y, t, definition, cuts, n_boot, labels[reference])
        st.dataframe(paired, width="stretch", hide_index=True, key="cmp_paired")
    st.dataframe(table, width="stretch", key="cmp_table")

    st.subheader("Does the winner depend on the definition?")
    ranks = compare.definition_ranks(y, t, scores, cutoff=cutoff)
    st.dataframe(ranks, width="stretch", key="cmp_ranks")

    st.subheader("What is the targeting depth worth?")
    v1, v2, v3 = st.columns(3)
    cost = v1.number_input("Cost per treatment", 0.0, 1e6, 0.10, key="cmp_cost")
    value_col = v3.selectbox("Value per row from", ["fixed value per response", *data.extra],
                             key="cmp_value_col")
    per_resp = v2.number_input("Value per response", 0.0, 1e9, 10.0, key="cmp_value",
                               disabled=value_col != "fixed value per response")
    econ = (dict(value_per_response=per_resp) if value_col == "fixed value per response"
            else dict(value=data.extra[value_col][index]))
    profits, summary = cached_value(ids, y, t, scores, cost, (value_col, per_resp), econ)
    profit_fig = profit_figure(profits)
    st.plotly_chart(profit_fig, width="stretch", key="cmp_profit",
                    config=common.plot_config("uprank_profit"))
    common.figure_html_button(profit_fig, "uprank_profit", "cmp_profit_html")
    st.dataframe(summary, width="stretch", key="cmp_summary")

    st.subheader("Uplift by decile")
    which = st.selectbox("Run", chosen, key="cmp_decile_run", format_func=labels.get)
    deciles, balance = cached_deciles(which, y, t, scores[labels[which]])
    decile_fig = decile_figure(deciles, title=labels[which])
    st.plotly_chart(decile_fig, width="stretch", key="cmp_deciles",
                    config=common.plot_config("uprank_deciles"))
    common.figure_html_button(decile_fig, "uprank_deciles", "cmp_deciles_html")
    (st.warning if balance["imbalanced"].any() else st.success)(
        "Treatment share along the ranking: " + ("some deciles differ from the overall share — "
        "the model may have learnt the assignment." if balance["imbalanced"].any() else
        "no decile differs from the overall share."))

    st.subheader("Export")
    e1, e2, e3 = st.columns(3)
    e1.download_button("Scores of this run (CSV)", lambda: safe_csv_bytes(
        scores_frame(runs[which])), "uprank_scores.csv", "text/csv", key="cmp_dl_scores",
        on_click="ignore")
    model_path = runs[which].model_path(0)
    if model_path is not None:
        e2.download_button("Model file (LightGBM text / JSON)", model_path.read_bytes,
                           model_path.name, key="cmp_dl_model", on_click="ignore")
    sections = [("Curves", fig), ("AUUC", table), ("Definition sensitivity", ranks),
                ("Targeting value", profit_fig), ("Best depth", summary),
                ("Run configurations", {labels[r]: runs[r].config.to_dict() for r in chosen})]
    e3.download_button("Report (one HTML file)", lambda: html_report(
        f"UpRank comparison — {data.name}", sections=sections, generated_at=datetime.now(
            timezone.utc).strftime("%Y-%m-%d %H:%M UTC")).encode("utf-8"),
        "uprank_report.html", "text/html", key="cmp_dl_report", on_click="ignore")
    common.download_row(fig, bands_frame(bands), f"uprank_compare_{definition}", key="cmp_dl")
    st.download_button("AUUC table (CSV)", lambda: safe_csv_bytes(table, index=True),
                       "uprank_auuc.csv", "text/csv", key="cmp_dl_auuc", on_click="ignore")
