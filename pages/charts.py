"""Plotly figures drawn from the tidy tables of ``core`` (compute arrays, then draw)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.curve_tables import PERFECT, RANDOM
from core.curves import DEFINITIONS

_BASELINE_STYLE = {RANDOM: dict(dash="dash", color="grey"), PERFECT: dict(dash="dot", color="black")}


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
