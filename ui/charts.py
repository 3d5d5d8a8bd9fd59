"""Plotly figures drawn from the tidy tables of ``core`` (compute arrays, then draw)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.evaluation.curve_tables import PERFECT, RANDOM
from core.evaluation.curves import DEFINITIONS

_BASELINE_STYLE = {RANDOM: dict(dash="dash", color="grey"),
                   PERFECT: dict(dash="dot", color="black")}


def _value_label(definition: str) -> str:
    d = DEFINITIONS[definition]
    unit = "share of arm" if d.units == "relative" else "responders"
    return f"{d.kind.capitalize()} value V ({unit})"


def curve_figure(frame: pd.DataFrame, *, definition: str, x: str = "fraction",
                 cutoff: float | None = None, title: str | None = None) -> go.Figure:
    """Lines of ``value`` against ``x`` per ranker, baselines dashed, cut-off marked."""
    fig = go.Figure()
    for name, part in frame.groupby("ranker", sort=False):
        fig.add_trace(go.Scatter(x=part[x], y=part["value"], mode="lines", name=str(name),
                                 line=_BASELINE_STYLE.get(name, {})))
    if cutoff is not None:
        pos = cutoff if x == "fraction" else cutoff * frame["targeted"].max()
        fig.add_vline(x=pos, line=dict(color="firebrick", width=1, dash="dot"),
                      annotation_text=f"cut-off {cutoff:.0%}", annotation_position="top left")
    fig.update_layout(
        title=title or f"{definition}", height=460, margin=dict(l=10, r=10, t=50, b=10),
        xaxis_title="fraction targeted" if x == "fraction" else "rows targeted",
        yaxis_title=_value_label(definition), legend=dict(orientation="h", y=-0.18),
        hovermode="x unified",
    )
    if x == "fraction":
        fig.update_xaxes(tickformat=".0%")
    return fig


def definitions_grid(frames: dict[str, pd.DataFrame], *, cols: int = 3) -> go.Figure:
    """One panel per definition; one line per scenario (column ``ranker``), baselines dashed.

    ``frames`` maps definition → tidy frame with a ``scenario`` column.
    """
    names = list(frames)
    rows = -(-len(names) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names,
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for i, name in enumerate(names):
        r, c = divmod(i, cols)
        for j, (scenario, part) in enumerate(frames[name].groupby("scenario", sort=False)):
            for ranker, line in part.groupby("ranker", sort=False):
                baseline = ranker == RANDOM
                fig.add_trace(go.Scatter(
                    x=line["fraction"], y=line["value"], mode="lines",
                    name=f"{scenario}" + (" (random)" if baseline else ""),
                    legendgroup=str(scenario), showlegend=(i == 0),
                    line=dict(color=palette[j % len(palette)], dash="dash" if baseline else None,
                              width=1 if baseline else 2),
                ), row=r + 1, col=c + 1)
    fig.update_xaxes(tickformat=".0%")
    fig.update_layout(height=330 * rows, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.08))
    return fig

_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def band_figure(bands: dict, *, definition: str, cutoff: float | None = None,
                title: str | None = None) -> go.Figure:
    """Mean curve per run with its band across splits (``bands``: label → (x, low, mid, high))."""
    fig = go.Figure()
    for i, (name, (x, low, mid, high)) in enumerate(bands.items()):
        color = _PALETTE[i % len(_PALETTE)]
        if not (low == high).all():
            fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]),
                                     y=np.concatenate([high, low[::-1]]), fill="toself",
                                     fillcolor=_rgba(color, 0.15), line=dict(width=0),
                                     hoverinfo="skip", showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(x=x, y=mid, mode="lines", name=name, legendgroup=name,
                                 line=dict(color=color)))
    if cutoff is not None:
        fig.add_vline(x=cutoff, line=dict(color="firebrick", width=1, dash="dot"))
    fig.update_layout(title=title or f"Test-set curves — {definition}", height=440,
                      margin=dict(l=10, r=10, t=50, b=10), xaxis_title="fraction targeted",
                      yaxis_title=_value_label(definition), legend=dict(orientation="h", y=-0.2))
    fig.update_xaxes(tickformat=".0%")
    return fig


def profit_figure(frames: dict) -> go.Figure:
    """Incremental profit against targeting depth, one line per run, best depth marked."""
    fig = go.Figure()
    for i, (name, frame) in enumerate(frames.items()):
        color = _PALETTE[i % len(_PALETTE)]
        fig.add_trace(go.Scatter(x=frame["fraction"], y=frame["profit"], mode="lines",
                                 name=name, line=dict(color=color)))
        best = frame["profit"].idxmax()
        fig.add_trace(go.Scatter(x=[frame.loc[best, "fraction"]], y=[frame.loc[best, "profit"]],
                                 mode="markers", marker=dict(color=color, size=9),
                                 showlegend=False, hovertemplate="best depth %{x:.1%}: %{y:,.2f}"))
    fig.add_hline(y=0, line=dict(color="grey", width=1))
    fig.update_layout(title="Incremental profit vs targeting depth", height=400,
                      margin=dict(l=10, r=10, t=50, b=10), xaxis_title="fraction targeted",
                      yaxis_title="incremental profit", legend=dict(orientation="h", y=-0.2))
    fig.update_xaxes(tickformat=".0%")
    return fig


def decile_figure(table, *, title: str) -> go.Figure:
    """Uplift per score decile with its 95 % interval (decile 1 = highest scores)."""
    low, high = "ci_low", "ci_high"
    fig = go.Figure(go.Bar(x=table["bin"].astype(str), y=table["uplift"],
                           error_y=dict(type="data", symmetric=False,
                                        array=table[high] - table["uplift"],
                                        arrayminus=table["uplift"] - table[low])))
    fig.update_layout(title=title, height=360, margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title="score decile (1 = targeted first)",
                      yaxis_title="uplift (response T − C)")
    fig.update_yaxes(tickformat=".1%")
    return fig
