"""Plotly figures of the Interleaving page (Sato 2021, Figure 1 and Table 2), drawn from
the tidy tables of ``core.interleaving.estimators`` (compute arrays, then draw)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from scipy import stats

_Z95 = 1.959964
COLORS = {"AB-total": "#1f77b4", "AB-list": "#ff7f0e", "EPI-RCT": "#2ca02c", "CBI-RCT": "#d62728",
          "CBI-IPS": "#9467bd", "EPI-IPS": "#8c564b"}
_TICKS = [v * 10**k for k in range(7) for v in (1, 2, 5)]
BIASED_SUFFIX = " (biased)"


def biased_methods(bias: pd.DataFrame, *, n_users: int | None = None,
                   alpha: float = 0.05) -> frozenset[str]:
    r"""Methods whose mean estimate misses the truth, tested jointly over the methods.

    Read off the tidy bias table of the Interleaving page at one user count: by default the
    largest simulated, where the intervals are narrowest, so a bias shows most clearly.  With
    :math:`m` methods judged at once, an unbiased method's plain 95 % interval would miss the
    truth in one run in twenty *per method*, so a method is called biased only when

    .. math::  |\bar x - \tau| > t_{1-\alpha/(2m)}(r - 1)\; \mathrm{se},

    a Bonferroni-corrected two-sided t-test at family-wise level ``alpha`` (``r`` the
    defined estimates, ``se`` = sd/√r).  Methods with fewer than two defined estimates cannot
    be judged and are left out.  The paper's bold face (``truth_in_ci``, uncorrected) stays
    in the table.

    Parameters
    ----------
    bias : DataFrame
        Columns ``n_users, method, mean, se, truth, n_reps``: one
        ``core.interleaving.bias_table`` per user count, stacked
        (``core.runs.simulations.SimResult.bias``).
    n_users : int, optional
        The user count to judge at; default the largest in ``bias``.
    alpha : float, default=0.05
        Family-wise error rate over the methods judged.

    Returns
    -------
    frozenset of str

    Examples
    --------
    >>> bias = pd.DataFrame({"n_users": [10, 10, 100, 100], "method": ["A", "B", "A", "B"],
    ...                      "mean": [0.5, 0.5, 0.15, 0.35], "se": [0.2, 0.2, 0.02, 0.02],
    ...                      "truth": 0.15, "n_reps": 1000})
    >>> sorted(biased_methods(bias)), sorted(biased_methods(bias, n_users=10))
    (['B'], [])
    """
    need = {"n_users", "method", "mean", "se", "truth", "n_reps"}
    if not isinstance(bias, pd.DataFrame) or not need <= set(bias.columns):
        got = sorted(bias.columns) if isinstance(bias, pd.DataFrame) else type(bias).__name__
        raise ValueError(f"bias must be a DataFrame with columns {sorted(need)}; got {got}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}.")
    if bias.empty:
        return frozenset()
    at = bias["n_users"].max() if n_users is None else n_users
    rows = bias[bias["n_users"] == at]
    if rows.empty:
        raise ValueError(f"n_users must be a user count of bias "
                         f"({', '.join(map(str, sorted(bias['n_users'].unique())))}); "
                         f"got {n_users!r}.")
    judged = rows[rows["se"].notna() & (rows["n_reps"] > 1) & rows["mean"].notna()]
    if judged.empty:
        return frozenset()
    m = len(judged)
    crit = stats.t.ppf(1 - alpha / (2 * m), judged["n_reps"].to_numpy() - 1)
    miss = (judged["mean"] - judged["truth"]).abs().to_numpy() > crit * judged["se"].to_numpy()
    return frozenset(judged.loc[miss, "method"].astype(str))


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
