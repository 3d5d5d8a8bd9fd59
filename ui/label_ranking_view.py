"""Streamlit side of the Label ranking page: cached data, the experiment's background job and
its stored result, and the page's figures.  Numerics: :mod:`core.label_ranking`; the
experiment: :mod:`core.runs.label_runs`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.label_ranking import data as lrdata
from core.label_ranking.baselines import borda_consensus
from core.runs import label_runs
from core.runs.store import RunStore
from core.runs.views import fmt_number
from ui import common
from ui.jobs import show_task


@st.cache_data(show_spinner="Generating the data…", max_entries=8)
def generated(generator: str, args: tuple):
    return label_runs.make_data(generator, dict(args))


@st.cache_data(show_spinner="Reading the CSV…", max_entries=4)
def uploaded(content: bytes, options: tuple):
    return lrdata.read_rankings_csv(content, **dict(options))


@st.cache_data(show_spinner=False, max_entries=16)
def result(root: str, key: str):
    return label_runs.load_experiment(RunStore(root), key)


def submit(config, data) -> str:
    return label_runs.submit_experiment(common.runner(), config, data,
                                        session=common.session_id())


def show_job(job_id: str):
    """The stored ``(meta, frames)`` once the job is done; progress or how it ended before."""
    root = str(common.runner().store.root)
    return show_task(common.runner(), job_id, common.session_id(), key="lr_cancel",
                     what="Experiment", load=lambda key: result(root, key))


def frequency_figure(data) -> go.Figure:
    """Figure 1 (left): how often each label is ranked, most frequent first."""
    freq = (np.asarray(data.Y) > 0).mean(axis=0)
    order = np.argsort(-freq)
    labels = [str(data.labels[j]) for j in order]
    short = [lab if len(lab) <= 18 else lab[:17] + "…" for lab in labels]
    fig = go.Figure(go.Bar(x=short, y=freq[order], customdata=labels,
                           hovertemplate="%{customdata}: ranked by %{y:.1%} of users"
                                         "<extra></extra>"))
    fig.update_xaxes(tickangle=-60)
    fig.update_layout(title="How often each label is ranked", height=420,
                      margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title="label (most frequent first)",
                      yaxis_title="share of users ranking it")
    fig.update_yaxes(tickformat=".0%")
    return fig


def length_figure(data) -> go.Figure:
    """Figure 1 (right): how many labels each user ranks (L_t)."""
    lt = (np.asarray(data.Y) > 0).sum(axis=1)
    counts = np.bincount(lt)
    fig = go.Figure(go.Bar(x=np.arange(counts.shape[0]), y=counts,
                           hovertemplate="%{y:,} users rank %{x} labels<extra></extra>"))
    fig.update_layout(title="Labels ranked per user (L_t)", height=420,
                      margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title="labels ranked by the user (count)",
                      yaxis_title="users (count)")
    return fig


def consensus_table(data, top: int = 5) -> pd.DataFrame | None:
    """Figure 2: each group's consensus (Borda) ranking, its ``top`` labels."""
    if getattr(data, "groups", None) is None:
        return None
    groups = np.asarray(data.groups)
    Y = np.asarray(data.Y)
    rows = {}
    for g in sorted(set(groups.tolist()), key=str):
        scores = borda_consensus(Y[groups == g])
        order = np.argsort(-scores, kind="stable")[:top]
        rows[str(g)] = {f"#{i + 1}": str(data.labels[j]) for i, j in enumerate(order)}
        rows[str(g)]["users"] = f"{int((groups == g).sum()):,}"
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out


def table1_display(table1: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 layout: method × feature set, "ε mean ± sd", the paper's value."""
    t = table1.copy()
    t["ε_dis (mean ± sd over folds)"] = [
        f"{m:.4f} ± {s:.4f}" if np.isfinite(s) else f"{m:.4f}"
        for m, s in zip(t["eps_dis"], t["sd"])]
    wide = t.pivot(index="method", columns="features", values="ε_dis (mean ± sd over folds)")
    paper = t.pivot(index="method", columns="features", values="paper (Yahoo)")
    for col in paper.columns:
        wide[f"paper, {col} (Yahoo; not reproducible here)"] = [
            fmt_number(v, 4) for v in paper[col]]
    order = [m for m in label_runs.METHODS if m in wide.index]
    sets = [c for c in (label_runs.WITHOUT, label_runs.WITH, "all features") if c in wide]
    cols = sets + [f"paper, {c} (Yahoo; not reproducible here)" for c in sets]
    return wide.loc[order, cols]


def prf_figure(prf: pd.DataFrame, features: str, metric: str = "f1") -> go.Figure:
    """Figure 3: precision, recall or F1 at K = 1 … 10, one line per method."""
    names = {"precision": "precision P@K", "recall": "recall R@K", "f1": "F1@K"}
    fig = go.Figure()
    part = prf[prf["features"] == features]
    palette = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677"]
    for i, (method, m) in enumerate(part.groupby("method", sort=False)):
        fig.add_trace(go.Scatter(
            x=m["k"], y=m[metric], mode="lines+markers", name=method,
            line=dict(color=palette[i % len(palette)]),
            hovertemplate=f"{method}: {names[metric]} at K = %{{x}}: %{{y:.1%}}<extra></extra>"))
    fig.update_layout(title=f"{names[metric]} of the top K labels ({features})", height=420,
                      margin=dict(l=10, r=10, t=50, b=10), xaxis_title="K (top labels)",
                      yaxis_title=f"{names[metric]} (share)",
                      legend=dict(orientation="h", y=-0.2))
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(dtick=1)
    return fig


def sweep_figure(sweep: pd.DataFrame) -> go.Figure:
    fig = go.Figure(go.Scatter(x=sweep["lam"], y=sweep["eps_dis"], mode="lines+markers",
                               hovertemplate="λ = %{x:g}: ε_dis %{y:.4f}<extra></extra>"))
    fig.update_xaxes(type="log", title="regularisation λ (log scale)", exponentformat="power",
                     dtick=1)  # one tick per power of ten: 10⁻⁵, 10⁻⁴, …
    fig.update_layout(title="AMM-rank: disagreement error against λ (first fold)", height=320,
                      margin=dict(l=10, r=10, t=50, b=10),
                      yaxis_title="disagreement error ε_dis")
    return fig
