"""Streamlit side of the Several arms page: cached data and stored results, and its figures.
Numerics: :mod:`core.evaluation.policy`, :mod:`core.evaluation.calibration`; the task:
:mod:`core.runs.multiarm_runs`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.evaluation import (
    calibration_table,
    ipw_scores,
    multi_armed_qini,
    multi_armed_qini_band,
    uplift_curve,
)
from core.runs import multiarm_runs
from core.runs.store import RunStore
from ui import common
from ui.charts import run_colors
from ui.jobs import show_task


@st.cache_data(show_spinner="Loading the experiment…", max_entries=4)
def data(source: str):
    return multiarm_runs.load_multiarm(source)


@st.cache_data(show_spinner=False, max_entries=16)
def result(root: str, key: str):
    return RunStore(root).load_result(key)


def show_job(job_id: str):
    root = str(common.runner().store.root)
    return show_task(common.runner(), job_id, common.session_id(), key="ma_cancel",
                     what="Training", load=lambda key: result(root, key))


def _tau(test: pd.DataFrame) -> np.ndarray:
    return test[[c for c in test.columns if c.startswith("tau_")]].to_numpy()


def arm_curves(test: pd.DataFrame, arms: list[str]) -> go.Figure:
    """Each treatment arm vs control, ranked by that arm's predicted uplift."""
    fig = go.Figure()
    colors = run_colors(arms[1:])
    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    for k, arm in enumerate(arms[1:], start=1):
        rows = (t == k) | (t == 0)
        x, v = uplift_curve(y[rows], (t[rows] == k).astype(int), test[f"tau_{k}"][rows],
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
    for (c, g), arm in zip(singles, arms[1:]):
        fig.add_scatter(x=[0, c], y=[0, g], mode="lines+markers", name=f"everyone: {arm}",
                        line=dict(dash="dot"))
    fig.update_layout(title="Multi-armed Qini curve: gain against budget, one arm per customer",
                      xaxis_title="budget: mean cost per customer",
                      yaxis_title="gain: extra outcome per customer", height=420,
                      margin=dict(t=50, b=40, l=60, r=10))
    return fig


def calibration_figure(test: pd.DataFrame, arms: list[str]) -> go.Figure:
    fig = go.Figure()
    colors = run_colors(arms[1:])
    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    lo, hi = np.inf, -np.inf
    for k, arm in enumerate(arms[1:], start=1):
        rows = (t == k) | (t == 0)
        table = calibration_table(y[rows], (t[rows] == k).astype(int), test[f"tau_{k}"][rows])
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
