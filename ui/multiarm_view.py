"""Several treatment arms on the Train and Compare pages: the training panel, the stored
results and their figures (per-arm curves, policy table, multi-armed Qini curve,
calibration).  Numerics: :mod:`core.evaluation.policy`, :mod:`core.evaluation.calibration`;
the task and tables: :mod:`core.runs.multiarm_runs`."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.data import ABData
from core.constants import DASH
from core.data.hygiene import share_text
from core.evaluation import (
    calibration_table,
    ipw_scores,
    multi_armed_qini,
    multi_armed_qini_band,
    uplift_curve,
)
from core.runs import multiarm_runs
from core.runs.export import safe_csv_bytes
from core.runs.store import RunStore
from ui import common
from ui.charts import PALETTE
from ui.glossary import GLOSSARY
from ui.jobs import watch_task


def arm_colors(arms: list[str]) -> dict[str, str]:
    """The palette in order, arm by arm: a dataset's arms are fixed, so each keeps its colour,
    and the first arms get contrasting neighbours (hashed run colours may fall close)."""
    return {arm: PALETTE[j % len(PALETTE)] for j, arm in enumerate(arms)}


@st.cache_data(show_spinner=False, max_entries=16)
def result(root: str, key: str):
    return RunStore(root).load_result(key)


def arms_caption(data: ABData) -> str:
    multi = data.multiarm
    k = len(multi.arms) - 1
    return (f"An experiment with a control and {k} treatment arm{'s' * (k > 1)} "
            f"({', '.join(multi.arms)}; control first) and a {multi.outcome_kind} outcome.")


def data_section(data: ABData) -> None:
    """Data page: every arm with its designed share, the SRM test over all arms, and the
    covariate balance of each treatment arm against control."""
    multi = data.multiarm
    st.caption(arms_caption(data))
    # one under the other: side by side, the arms table's "vs control" (the effect of each
    # arm) and the balance table's columns were cut off at a laptop's width
    left, right = st.container(), st.container()
    with left:
        design = "assumed" if multi.design_assumed else "designed"
        outcome = data.amount_name() or "outcome"  # the amount's name: spend
        st.markdown(f"**Arms** (observed vs {design} share; mean {outcome} and its difference "
                    "to control)", help=GLOSSARY["SRM"])
        # headers as the two-arm SRM table writes them; the control's own "vs control" (NaN)
        # drawn as "—" by the placeholder, the column staying numbers
        st.dataframe(multi.arm_table().rename_axis("Arm"), width="stretch",
                     key="data_arm_table", placeholder=DASH, column_config={
                         "rows": st.column_config.NumberColumn("Rows", format="localized"),
                         "share": st.column_config.NumberColumn("Share", format="percent"),
                         f"{design} share": st.column_config.NumberColumn(
                             f"Share {'planned' if design == 'designed' else 'assumed'}",
                             format="percent"),
                         "mean outcome": st.column_config.NumberColumn(f"Mean {outcome}",
                                                                       format="%.4f"),
                         "vs control": st.column_config.NumberColumn(format="%+.4f")})
        srm = multi.srm()
        if srm["assumed"]:
            shares = " / ".join(share_text(s) for s in srm["expected_share"])
            text = ("χ² test of the arm counts against the shares assumed from the data (no "
                    "design given: the observed shares rounded to 5 % or a simple fraction, "
                    f"{shares}): "
                    f"p = {srm['p_value']:.3f}")
        else:
            text = f"χ² test of the arm counts against the design: p = {srm['p_value']:.3f}"
        if srm["p_value"] < 0.001:
            st.warning(text + " — a sample ratio mismatch. Check how customers were assigned "
                       "and logged before trusting results.", icon=":material/warning:")
        else:
            st.success(text + " (no sample ratio mismatch).")
    with right:
        st.markdown("**Covariate balance of each arm vs control** (standardised mean "
                    "differences; |SMD| > 0.1 flagged in the sentence below)",
                    help=GLOSSARY["SMD"])
        with common.guard("The balance table"):
            balance = multi.balance().rename_axis("Feature")
            st.dataframe(balance, key="data_balance_arms", column_config={
                c: st.column_config.NumberColumn(format="%+.3f") for c in balance.columns})
            worst = float(balance.abs().max().max())
            st.caption(f"Largest |SMD| over all arms and features: {worst:.3f}"
                       + (" — above 0.1." if worst > 0.1 else "."))


def train_section(data: ABData) -> None:
    """Train page: per-arm models on the whole A/B/n experiment, queued as background jobs
    (the page's job panel shows them)."""
    multi = data.multiarm
    st.subheader("Several arms: one model per treatment arm")
    st.caption(arms_caption(data) + " Each model predicts what every treatment arm adds "
               "against control (70 % of the rows, stratified by arm; evaluated on the other "
               "30 % on the Compare page). The models below this section see only "
               "'any treatment vs control'.")
    options = multiarm_runs.models_for(multi.outcome_kind)
    common.remember("ma_models", options[:1], options=options)
    chosen = st.multiselect("Per-arm models", options, key="ma_models",
                            help=GLOSSARY["Best-arm rule"])
    c2, c3 = st.columns([3, 1], vertical_alignment="bottom")
    common.remember("ma_trees", 100, options=[50, 100, 300])
    trees = c2.select_slider("Trees", [50, 100, 300], key="ma_trees")
    if c3.button("Train per arm", type="primary", key="ma_train", disabled=not chosen):
        with common.guard("Queueing the per-arm models"):
            for model in chosen:
                spec = multiarm_runs.multiarm_spec(common.current_choice().to_params(), model,
                                                   trees=int(trees),
                                                   fingerprint=data.fingerprint())
                common.runner().submit_task(spec, session=common.session_id(),
                                            data_name=data.name)


def compare_section(data: ABData):
    """Compare page: pick a stored per-arm run of this dataset and show what it is worth.
    Returns a zero-argument callable giving that run's report sections (for the page's
    comparison report), or ``None`` when no run is shown."""
    st.header("Several arms: which treatment for whom")
    runner, sid = common.runner(), common.session_id()
    store = runner.store
    active = [job for job in runner.jobs(session=sid, fingerprint=data.fingerprint())
              if job.kind != "train" and not job.is_final]  # per-arm runs still training
    for job in active:
        st.caption(f"Training: {job.label} (shown here when it ends)")
        watch_task(runner, job.job_id, sid, key=f"ma_cancel_{job.job_id}")
    runs = multiarm_runs.list_multiarm_runs(store, data.fingerprint())
    if runs.empty and active:
        return None
    if runs.empty:
        st.info(arms_caption(data) + " No per-arm models yet: train them on the Train page "
                "(section *Several arms*).")
        st.page_link("pages/train.py", label="Train per-arm models",
                     icon=":material/model_training:")
        return None
    labels = {row.key: f"{row.model} · {row.trees} trees · seed {row.seed}"
              for row in runs.itertuples()}
    key = st.selectbox("Per-arm run", list(labels), key="ma_run", format_func=labels.get)
    loaded = result(str(store.root), key)
    if loaded is None:
        st.warning("This run's stored result cannot be read; train it again.",
                   icon=":material/warning:")
        return None
    return draw_result(key, *loaded, data=data)


def draw_result(key: str, meta: dict, frames: dict, *, data: ABData):
    """Per-arm curves and AUUC, the policy table with cost inputs, the multi-armed Qini
    curve, calibration, downloads (scores, report); returns the report sections' builder."""
    test, names = frames["test"], meta["arms"]
    st.caption(f"{meta['model']}: evaluated on {len(test):,} test rows, fitted in "
               f"{meta['fit_seconds']:.1f} s. Outcome: {meta['outcome']}.")
    if scale := multiarm_runs.score_scale_caveat(meta["model"]):
        st.warning(scale, icon=":material/straighten:")
    curves = arm_curves(test, names)
    st.plotly_chart(curves, width="stretch", key="ma_curves")
    arms_table = multiarm_runs.arm_summary(test, names)
    st.dataframe(arms_table, width="stretch", key="ma_arm_table",
                 column_config={c: st.column_config.NumberColumn(
                     format="localized" if c == multiarm_runs.PAIR_ROWS else "%.4f")
                     for c in arms_table.columns})

    st.subheader("Policies: value per customer on the test rows")
    unit = 0.02 if meta["outcome"] == "binary" else 0.5  # outcome units (visit / $)
    default = meta["cost"] or [unit] * (len(names) - 1)
    cols = st.columns(len(names) - 1)
    cost = np.array([cols[k].number_input(f"Cost of {arm} (outcome units)", 0.0, 1e6,
                                          float(default[k]), format="%.3f",
                                          key=f"ma_cost_{k}", help=GLOSSARY["Arm cost"])
                     for k, arm in enumerate(names[1:])])
    table = multiarm_runs.policy_table(test, names, meta["design"], cost)
    st.markdown(multiarm_runs.policy_takeaway(table))
    if caveat := multiarm_runs.calibration_caveat(arms_table):  # as the report says it
        st.warning(caveat, icon=":material/warning:")
    st.dataframe(table.rename(columns={"arm shares": multiarm_runs.shares_label(names)}),
                 width="stretch", key="ma_policies", placeholder=DASH,  # the rule's own row
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("value", "± SE", "cost", "net value",
                                          multiarm_runs.VS_RULE, multiarm_runs.VS_RULE_SE)})
    st.caption(multiarm_runs.POLICY_NOTE)

    qini_fig = None
    if not cost.any():
        st.info("Set a cost for at least one arm to see the multi-armed Qini curve (gain "
                "against budget): with free arms the whole budget is 0.")
    else:
        predicted, band, singles = qini(key, test, tuple(meta["design"]), tuple(cost))
        qini_fig = qini_figure(predicted, band, singles, names)
        st.plotly_chart(qini_fig, width="stretch", key="ma_qini")
        st.caption("Each customer may get one arm; customers and arms are added in order of "
                   "predicted gain per unit of cost (Sverdrup et al. 2023). The blue line is "
                   "that path scored on the test rows; the dotted lines give one arm to "
                   "everyone.")

    st.subheader("Calibration of the predicted uplift")
    calib_fig = calibration_figure(test, names)
    st.plotly_chart(calib_fig, width="stretch", key="ma_calib")
    st.caption("Calibration slope (1 = the predicted uplift matches the observed uplift; "
               "0 = no signal), per arm: " + "; ".join(
                   f"{arm}: {row['calibration slope']:.2f} ± {row['slope SE']:.2f}"
                   for arm, row in arms_table.iterrows()) + ".")
    c1 = c2 = st.container(horizontal=True)  # side by side, wrapped when the page is narrow
    c1.download_button("Test rows with one score column per arm (CSV)",
                       lambda: safe_csv_bytes(multiarm_runs.score_export(test, names)),
                       "uprank_several_arms_scores.csv", "text/csv", key="ma_dl",
                       on_click="ignore")
    figures = [("Uplift curve of each arm vs control", curves),
               *([("Multi-armed Qini curve", qini_fig)] if qini_fig is not None else []),
               ("Calibration by decile", calib_fig)]
    c2.download_button(
        "Report of this run (one HTML file)",
        lambda: multiarm_runs.multiarm_report(
            meta, test, data.multiarm, cost=cost, figures=figures,
            generated_at=datetime.now(timezone.utc)).encode("utf-8"),
        common.file_stem("uprank_several_arms_report", data.name,
                         f"{meta['model']} {meta['trees']} trees seed {meta['seed']}", key[:8])
        + ".html", "text/html", key="ma_dl_report", on_click="ignore")
    return lambda: multiarm_runs.multiarm_sections(meta, test, data.multiarm, cost=cost,
                                                   figures=figures)


def _tau(test: pd.DataFrame) -> np.ndarray:
    return test[[c for c in test.columns if c.startswith("tau_")]].to_numpy()


def arm_curves(test: pd.DataFrame, arms: list[str]) -> go.Figure:
    """Each treatment arm vs control, ranked by that arm's predicted uplift."""
    fig = go.Figure()
    colors = arm_colors(arms[1:])
    for k, arm in enumerate(arms[1:], start=1):
        x, v = uplift_curve(*multiarm_runs.arm_pair(test, k),
                            definition="uplift_sep_rel")
        fig.add_scatter(x=x, y=v, name=f"{arm} vs {arms[0]}", line=dict(color=colors[arm]))
        fig.add_scatter(x=[0, 1], y=[0, v[-1]], mode="lines", showlegend=False,
                        line=dict(color=colors[arm], dash="dot", width=1),
                        hoverinfo="skip")
    fig.update_layout(title="Uplift curve of each arm vs control (dotted: random targeting)",
                      xaxis_title="share of customers targeted", xaxis_tickformat=".0%",
                      yaxis_title="uplift (outcome per customer of the arm)", height=380,
                      margin=dict(t=50, b=40, l=60, r=10))
    return fig


@st.cache_data(show_spinner="Bootstrapping the multi-armed Qini curve…", max_entries=16)
def qini(key: str, _test: pd.DataFrame, design: tuple, cost: tuple):
    tau = _tau(_test)
    prop = np.tile(np.asarray(design), (len(_test), 1))
    reward = ipw_scores(_test["y"], _test["t"].to_numpy(), prop)
    predicted = multi_armed_qini(tau, np.asarray(cost))
    band = multi_armed_qini_band(tau, np.asarray(cost), reward, n_boot=100, random_state=0)
    singles = [(cost[k], float(reward[:, k].mean())) for k in range(tau.shape[1])]
    return predicted, band, singles


def qini_figure(predicted, band, singles, arms: list[str]) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=np.r_[band["spend"], band["spend"][::-1]],
                    y=np.r_[band["high"], band["low"][::-1]], fill="toself", mode="none",
                    fillcolor="rgba(68,119,170,0.2)", name="95 % bootstrap band")
    fig.add_scatter(x=band["spend"], y=band["gain"], name="estimated on the test rows (IPW)",
                    line=dict(color="#4477AA", width=3))
    fig.add_scatter(x=predicted["spend"], y=predicted["gain"], name="predicted by the model",
                    line=dict(color="#888888", dash="dash"))
    colors = arm_colors(arms[1:])  # each arm its colour of the other charts
    for (c, g), arm in zip(singles, arms[1:]):
        fig.add_scatter(x=[0, c], y=[0, g], mode="lines+markers", name=f"everyone: {arm}",
                        line=dict(dash="dot", color=colors[arm]))
    fig.update_layout(title="Multi-armed Qini curve: gain against budget, one arm per customer",
                      xaxis_title="budget: mean cost per customer",
                      yaxis_title="gain: extra outcome per customer", height=420,
                      margin=dict(t=50, b=40, l=60, r=10))
    return fig


def calibration_figure(test: pd.DataFrame, arms: list[str]) -> go.Figure:
    fig = go.Figure()
    colors = arm_colors(arms[1:])
    lo, hi = np.inf, -np.inf
    for k, arm in enumerate(arms[1:], start=1):
        table = calibration_table(*multiarm_runs.arm_pair(test, k))
        fig.add_scatter(x=table["predicted"], y=table["observed"], mode="markers+lines",
                        name=arm, line=dict(color=colors[arm]),
                        error_y=dict(type="data", symmetric=False,
                                     array=table["high"] - table["observed"],
                                     arrayminus=table["observed"] - table["low"]))
        lo = min(lo, table["predicted"].min())
        hi = max(hi, table["predicted"].max())
    fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="perfect calibration",
                    line=dict(color="#999999", dash="dot"))
    fig.update_layout(title="Calibration: observed vs predicted uplift by decile (95 % CI)",
                      xaxis_title="predicted uplift (decile mean)",
                      yaxis_title="observed uplift (treated − control)", height=400,
                      margin=dict(t=50, b=40, l=60, r=10))
    return fig
