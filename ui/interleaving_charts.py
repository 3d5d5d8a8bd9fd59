"""Plotly figures of the Interleaving page (Sato 2021, Figure 1 and Table 2), drawn from
the tidy tables of ``core.interleaving.estimators`` (compute arrays, then draw)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

_Z95 = 1.959964
COLORS = {"AB-total": "#1f77b4", "AB-list": "#ff7f0e", "EPI-RCT": "#2ca02c", "CBI-RCT": "#d62728",
          "CBI-IPS": "#9467bd", "EPI-IPS": "#8c564b"}
_TICKS = [v * 10**k for k in range(7) for v in (1, 2, 5)]


def false_judgment_figure(curve: pd.DataFrame, *, target: float | None = None,
                          title: str | None = None) -> go.Figure:
    """False-judgment rate against users (log x-axis), one line per method, ±1.96 se bars.

    ``curve`` has the columns of ``core.interleaving.estimators.false_judgment_rates``.
    """
    fig = go.Figure()
    for method, part in curve.groupby("method", sort=False):
        part = part.sort_values("n_users")
        fig.add_trace(go.Scatter(
            x=part["n_users"], y=part["false_rate"], mode="lines+markers", name=str(method),
            line=dict(color=COLORS.get(str(method))),
            error_y=dict(type="data", array=_Z95 * part["se"], visible=True, thickness=1),
            hovertemplate="%{x} users: %{y:.2%}<extra>" + str(method) + "</extra>",
        ))
    if target is not None:
        fig.add_hline(y=target, line=dict(color="grey", width=1, dash="dot"),
                      annotation_text=f"{target:.1%}", annotation_position="top right")
    lo, hi = curve["n_users"].min(), curve["n_users"].max()
    ticks = [v for v in _TICKS if lo <= v <= hi] or sorted(curve["n_users"].unique())
    fig.update_xaxes(type="log", title="users in the experiment (log scale)", tickvals=ticks,
                     ticktext=[f"{v:,}" for v in ticks])
    fig.update_yaxes(title="false-judgment rate", tickformat=".0%", rangemode="tozero")
    fig.update_layout(title=title or "False judgments against the number of users",
                      height=460, margin=dict(l=10, r=10, t=50, b=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def bias_figure(table: pd.DataFrame, *, truth: float, title: str | None = None) -> go.Figure:
    """Mean estimate with its 95 % CI per method, the true difference as a vertical line.

    ``table`` has the columns of ``core.interleaving.bias_table`` and a ``method`` column.
    """
    fig = go.Figure(go.Scatter(
        x=table["mean"], y=table["method"], mode="markers", name="mean estimate",
        error_x=dict(type="data", symmetric=False, array=table["ci_high"] - table["mean"],
                     arrayminus=table["mean"] - table["ci_low"], visible=True),
        customdata=table["sd"],
        hovertemplate="%{y}: %{x:.4f} (sd %{customdata:.4f})<extra></extra>",
    ))
    fig.add_vline(x=truth, line=dict(color="firebrick", width=1, dash="dash"),
                  annotation_text=f"τA − τB = {truth:.4f}", annotation_position="top")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=title or "Mean estimate and 95 % CI",
                      xaxis_title="estimate of τA − τB", height=120 + 45 * len(table),
                      margin=dict(l=10, r=10, t=60, b=10), showlegend=False)
    return fig
