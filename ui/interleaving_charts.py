"""Plotly figures of the Interleaving page (Sato 2021, Figure 1 and Table 2), drawn from
the tidy tables of ``core.interleaving.estimators`` (compute arrays, then draw)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

_Z95 = 1.959964
COLORS = {"AB-total": "#1f77b4", "AB-list": "#ff7f0e", "EPI-RCT": "#2ca02c", "CBI-RCT": "#d62728",
          "CBI-IPS": "#9467bd", "EPI-IPS": "#8c564b"}
_TICKS = [v * 10**k for k in range(7) for v in (1, 2, 5)]
BIASED_SUFFIX = " (biased)"


def false_judgment_figure(curve: pd.DataFrame, *, target: float | None = None,
                          biased: frozenset[str] | set[str] = frozenset(),
                          title: str | None = None) -> go.Figure:
    """False-judgment rate against users (log x-axis), one line per method, ±1.96 se bars.

    ``curve`` has the columns of ``core.interleaving.false_judgment_rates``.  Methods in
    ``biased`` (:func:`biased_methods`) get a dashed line, " (biased)" after their legend name
    and a note in their hover text: their rate can fall fast towards a wrong answer.
    """
    fig = go.Figure()
    for method, part in curve.groupby("method", sort=False):
        part = part.sort_values("n_users")
        name, bad = str(method), str(method) in biased
        note = "<br>biased: its mean estimate misses the true τA − τB" if bad else ""
        fig.add_trace(go.Scatter(
            x=part["n_users"], y=part["false_rate"], mode="lines+markers",
            name=name + BIASED_SUFFIX if bad else name,
            line=dict(color=COLORS.get(name), dash="dash" if bad else "solid"),
            error_y=dict(type="data", array=_Z95 * part["se"], visible=True, thickness=1),
            customdata=_Z95 * part["se"],
            hovertemplate="%{x:,} users: %{y:.1%} false judgments (± %{customdata:.1%})"
                          + note + "<extra>" + name + "</extra>",
        ))
    if target is not None:
        fig.add_hline(y=target, line=dict(color="grey", width=1, dash="dot"),
                      annotation_text=f"{target:.1%}", annotation_position="top right")
    lo, hi = curve["n_users"].min(), curve["n_users"].max()
    ticks = [v for v in _TICKS if lo <= v <= hi] or sorted(curve["n_users"].unique())
    fig.update_xaxes(type="log", title="users in the experiment (log scale)", tickvals=ticks,
                     ticktext=[f"{v:,}" for v in ticks])
    fig.update_yaxes(title="false-judgment rate (% of experiments)", tickformat=".0%",
                     rangemode="tozero")
    fig.update_layout(title=title or "False judgments against the number of users",
                      height=460, margin=dict(l=10, r=10, t=50, b=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def bias_figure(table: pd.DataFrame, *, truth: float, title: str | None = None) -> go.Figure:
    """Mean estimate with its 95 % CI per method, the true difference as a vertical line.

    ``table`` has the columns of ``core.interleaving.bias_table`` and a ``method`` column;
    methods whose interval excludes the truth are drawn in red.
    """
    miss = ~table["truth_in_ci"].astype(bool)
    fig = go.Figure(go.Scatter(
        x=table["mean"], y=table["method"], mode="markers", name="mean estimate",
        marker=dict(color=["firebrick" if m else "#1f77b4" for m in miss], size=9),
        error_x=dict(type="data", symmetric=False, array=table["ci_high"] - table["mean"],
                     arrayminus=table["mean"] - table["ci_low"], visible=True),
        customdata=list(zip(table["ci_low"], table["ci_high"], table["sd"],
                            ["<br>the interval excludes the truth" if m else "" for m in miss])),
        hovertemplate="%{y}: mean %{x:.4f}, 95 % CI %{customdata[0]:.4f} to "
                      "%{customdata[1]:.4f} (sd %{customdata[2]:.4f})%{customdata[3]}"
                      "<extra></extra>",
    ))
    fig.add_vline(x=truth, line=dict(color="firebrick", width=1, dash="dash"),
                  annotation_text=f"τA − τB = {truth:.4f}", annotation_position="top")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=title or "Mean estimate and 95 % CI",
                      xaxis_title="estimate of τA − τB (difference in causal effect per "
                                  "listed item)", height=120 + 45 * len(table),
                      margin=dict(l=10, r=10, t=60, b=10), showlegend=False)
    return fig
