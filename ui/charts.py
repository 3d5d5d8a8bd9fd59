"""Plotly figures drawn from the tidy tables of ``core`` (compute arrays, then draw).

Words a stakeholder reads: definitions by their plain name with the id small
(:func:`definition_title`), axis titles with units, long run names shortened in legends
(:func:`short_name`) with the full name in the hover, and one colour per run that stays the
same whichever runs are shown (:func:`run_colors`).  Random/Perfect baselines are always
grey dashed / black dotted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.evaluation.curve_tables import PERFECT, RANDOM
from core.evaluation.curves import DEFINITIONS

__all__ = [
    "PALETTE", "band_figure", "curve_figure", "decile_figure", "definition_title",
    "definitions_grid", "profit_figure", "run_colors", "short_name", "short_names",
]

#: Paul Tol's colour-blind-safe "muted" scheme without its pale sand, plus Okabe & Ito's
#: orange and blue; no grey or black, which belong to the Random and Perfect baselines.
#: Ordered so that neighbours contrast: a run whose hashed colour is taken gets the next one
#: (sand next to olive read as one colour in a demo).
PALETTE: tuple[str, ...] = ("#332288", "#E69F00", "#117733", "#CC6677", "#88CCEE", "#882255",
                            "#44AA99", "#AA4499", "#0072B2", "#999933")
_BASELINE_STYLE = {RANDOM: dict(dash="dash", color="grey"),
                   PERFECT: dict(dash="dot", color="black")}
_SHARE_AXIS = "share targeted (%)"
_MARGIN = dict(l=10, r=10, t=60, b=10)


# ------------------------------------------------------------------------ words
def definition_title(definition: str) -> str:
    """Plain-words name of a definition with its id small and grey (plotly title HTML)."""
    return (f"{DEFINITIONS[definition].title} "
            f"<span style='font-size:0.75em;color:grey'>({definition})</span>")


def _value_label(definition: str) -> str:
    d = DEFINITIONS[definition]
    return f"{d.kind.capitalize()} value V ({d.unit})"


def _value_format(definition: str) -> str:
    """d3 format of a curve value: shares of an arm with 5 decimals, responders with 1."""
    return ".5f" if DEFINITIONS[definition].units == "relative" else ",.1f"


def _snap_head(label: str, n: int) -> str:
    head = label[:n]
    if n < len(label) and label[n] != " ":
        cut = head.rfind(" ")
        if cut >= 0.6 * n:
            head = head[:cut]
    return head.rstrip(" ·,;:-(")


def _snap_tail(label: str, n: int) -> str:
    if n <= 0:
        return ""
    start = len(label) - n
    tail = label[start:]
    if label[start - 1] != " ":
        cut = tail.find(" ")
        if 0 <= cut <= 0.4 * n:
            tail = tail[cut + 1:]
    return tail.lstrip(" ·,;:-)")


def short_name(label: str, max_len: int = 32, *, tail: float = 0.0) -> str:
    """``label`` cut to at most ``max_len`` characters with an ellipsis, for legends.

    A label that fits is returned unchanged.  Otherwise the start (and, with ``tail`` > 0,
    that share of the room from the end) is kept, cut at a word boundary where one is near:
    ``"LambdaMART-PCG@30% (joint, rel) · 500 trees · 5 splits · seed 0"`` →
    ``"LambdaMART-PCG@30% (joint, rel)…"``.  :func:`short_names` keeps a set unique.

    Parameters
    ----------
    label : str
    max_len : int, default=32
        At least 8.
    tail : float in [0, 1), default=0.0
        Share of the room kept from the end of the label (``1/3``: an ellipsis in the middle
        that keeps, e.g., the ``"#1a2b3c"`` that tells two like-named runs apart).

    Examples
    --------
    >>> short_name("Random targeting")
    'Random targeting'
    >>> short_name("LambdaMART-PCG@30% (joint, rel) · 500 trees · 5 splits · seed 0")
    'LambdaMART-PCG@30% (joint, rel)…'
    >>> short_name("LambdaMART-PCG@30% (joint, rel) · 500 trees · seed 0 · #1a2b3c", tail=1/3)
    'LambdaMART-PCG@30% … #1a2b3c'
    """
    label = str(label)
    if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 8:
        raise ValueError(f"max_len must be an integer of at least 8; got {max_len!r}.")
    if not 0 <= tail < 1:
        raise ValueError(f"tail must be a share in [0, 1); got {tail!r}.")
    if len(label) <= max_len:
        return label
    room = max_len - 1
    n_tail = round(room * tail)
    head, end = _snap_head(label, room - n_tail), _snap_tail(label, n_tail)
    if not end:
        return head + "…"
    sep = " … " if len(head) + len(end) + 3 <= max_len else "…"
    return head + sep + end


#: What separates the parts of a run's name (:func:`core.runs.presets.run_label`).
PART_SEP = " · "


def shared_parts(labels: Iterable[str]) -> list[str]:
    """The parts (after the first, split at :data:`PART_SEP`) that every run name holds.

    Names of one part (the baselines: "Random targeting") do not count.  With one run, all
    its parts after the model's name:

    >>> shared_parts(["Two-model · 100 trees · seed 0", "X-learner · 100 trees · seed 0",
    ...               "Random targeting"])
    ['100 trees', 'seed 0']
    """
    runs = [str(label).split(PART_SEP) for label in labels]
    runs = [parts for parts in runs if len(parts) > 1]
    if not runs:
        return []
    return [part for part in runs[0][1:] if all(part in parts[1:] for parts in runs[1:])]


def _without_shared(labels: list[str]) -> dict[str, str]:
    shared = set(shared_parts(labels))
    out = {}
    for label in labels:
        first, *rest = label.split(PART_SEP)
        out[label] = PART_SEP.join([first] + [p for p in rest if p not in shared])
    return out


def short_names(labels: Iterable[str], max_len: int = 32, *,
                drop_shared: bool = False) -> dict[str, str]:
    """Label → :func:`short_name`, distinct within ``labels`` where possible.

    ``drop_shared``: first leave out the parts every run name holds (:func:`shared_parts`,
    for a caption to say once): "Transformed outcome · 100 trees · one 70/30 split · seed
    0" beside "Flipped label · 100 trees · one 70/30 split · seed 0" become "Transformed
    outcome" and "Flipped label", where both were cut to "… · 100 trees…".  Labels whose
    short names coincide are cut again with more of their end kept (a third, then two
    thirds of the room); any still equal get ``" (2)"``, ``" (3)"``, … .
    """
    labels = list(dict.fromkeys(str(label) for label in labels))
    given = _without_shared(labels) if drop_shared else {label: label for label in labels}
    out = {label: short_name(given[label], max_len) for label in labels}
    for tail in (1 / 3, 2 / 3):
        clash = _clashes(out)
        if not clash:
            return out
        out.update({label: short_name(given[label], max_len, tail=tail) for label in clash})
    seen: dict[str, int] = {}
    for label in labels:
        short = out[label]
        seen[short] = seen.get(short, 0) + 1
        if seen[short] > 1:
            suffix = f" ({seen[short]})"
            out[label] = short_name(given[label], max_len - len(suffix), tail=1 / 3) + suffix
    return out


def label_width(labels: Iterable[object], *, least: int = 100, most: int = 340) -> int:
    """Pixels a table column needs to show every one of ``labels`` whole: about 7.5 px a
    character at the tables' 14 px font, plus 24 px of padding, between ``least`` and
    ``most``.  Streamlit sizes a text column by its first rows and cut run names to
    "LambdaMART-PCG (separate, Abs1" and "Random ranker (see" at 1,400 px."""
    longest = max((len(str(label)) for label in labels), default=0)
    return int(min(most, max(least, 7.5 * longest + 24)))


def _clashes(shorts: Mapping[str, str]) -> set[str]:
    count: dict[str, int] = {}
    for s in shorts.values():
        count[s] = count.get(s, 0) + 1
    return {label for label, s in shorts.items() if count[s] > 1}


# ----------------------------------------------------------------------- colours
def _digest(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def _assign(keys: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Each key its hashed palette colour; a key whose colour is taken (by ``taken`` or a key
    earlier in hash order) gets the next least-used colour after it."""
    used = {c: 0 for c in PALETTE}
    for c in taken:
        if c in used:
            used[c] += 1
    out = {}
    for key in sorted(dict.fromkeys(keys), key=lambda k: (_digest(k), k)):
        start = _digest(key) % len(PALETTE)
        order = [PALETTE[(start + i) % len(PALETTE)] for i in range(len(PALETTE))]
        color = min(order, key=lambda c: used[c])  # first of the least used, from start
        used[color] += 1
        out[key] = color
    return out


def run_colors(run_ids: Sequence[str]) -> dict[str, str]:
    """Run id → a colour of :data:`PALETTE` that does not depend on the other runs shown.

    Each id hashes (BLAKE2b, not Python's salted ``hash``) to a palette colour, so a run keeps
    its colour whichever subset of runs is selected and in any order.  Two ids of the set that
    hash to the same colour are resolved in hash order: the later one takes the next free
    colour, so up to ``len(PALETTE)`` runs never share one (more reuse the least-used).

    Examples
    --------
    >>> run_colors(["run-a", "run-b"])["run-a"] == run_colors(["run-b", "run-a"])["run-a"]
    True
    >>> len(set(run_colors([f"run-{i}" for i in range(10)]).values()))
    10
    """
    keys = [str(r) for r in run_ids]
    colors = _assign(keys)
    return {k: colors[k] for k in keys}


def _rgba(color: str, alpha: float) -> str:
    if color.startswith("#") and len(color) == 7:
        r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
        return f"rgba({r},{g},{b},{alpha})"
    return color


def _names_and_colors(names: Sequence[str], colors: Mapping[str, str] | None,
                      max_len: int = 32) -> tuple[dict[str, str], dict[str, str]]:
    """Legend name and colour of every name; baselines keep their own style."""
    colors = dict(colors or {})
    runs = [n for n in names if n not in _BASELINE_STYLE]
    missing = [n for n in runs if n not in colors]
    given = {n: colors[n] for n in runs if n in colors}
    given.update(_assign(missing, taken=given.values()))
    for b, style in _BASELINE_STYLE.items():
        given[b] = style["color"]
    return short_names(names, max_len, drop_shared=True), given


def _line(name: str, color: str, width: float = 2) -> dict:
    return dict(_BASELINE_STYLE.get(name, dict(color=color, width=width)))


# ----------------------------------------------------------------------- figures
def curve_figure(frame: pd.DataFrame, *, definition: str, x: str = "fraction",
                 cutoff: float | None = None, title: str | None = None,
                 colors: Mapping[str, str] | None = None) -> go.Figure:
    """Lines of ``value`` against ``x`` per ranker, baselines dashed, cut-off marked.

    ``colors`` maps a ranker name to its colour (default: hashed, :func:`run_colors`); the
    legend shows :func:`short_names`, the hover the full name.
    """
    names = [str(n) for n in frame["ranker"].unique()]
    legend, palette = _names_and_colors(names, colors)
    fig = go.Figure()
    for name, part in frame.groupby("ranker", sort=False):
        name = str(name)
        fig.add_trace(go.Scatter(
            x=part[x], y=part["value"], mode="lines", name=legend[name], legendgroup=name,
            meta=[name], line=_line(name, palette[name]),
            hovertemplate=f"%{{meta[0]}}: %{{y:{_value_format(definition)}}}<extra></extra>"))
    if cutoff is not None:
        pos = cutoff if x == "fraction" else cutoff * frame["targeted"].max()
        _rule(fig, x=pos, color="firebrick", dash="dot", text=f"cut-off {cutoff:.0%}")
    fig.update_layout(
        title=title or definition_title(definition), height=460, margin=_MARGIN,
        xaxis_title=_SHARE_AXIS if x == "fraction" else "rows targeted (count)",
        yaxis_title=_value_label(definition), legend=dict(orientation="h", y=-0.18),
        hovermode="x unified",
    )
    fig.update_xaxes(tickformat=".0%" if x == "fraction" else ",",
                     hoverformat=".1%" if x == "fraction" else ",")
    if x == "fraction":
        _share_ticks(fig)
    return fig


def _share_ticks(fig: go.Figure) -> None:
    """A share-targeted axis labelled every 20 % up to 100 % (autorange can end just short
    of 1 and drop the last label)."""
    fig.update_xaxes(tickformat=".0%", tick0=0, dtick=0.2, range=[-0.01, 1.01])


def definitions_grid(frames: dict[str, pd.DataFrame], *, cols: int = 2) -> go.Figure:
    """One panel per definition; one line per scenario (column ``ranker``), baselines dashed.

    ``frames`` maps definition → tidy frame with a ``scenario`` column.  Each panel is titled
    with the definition's plain name (id small) and has its own axis titles: x the share
    targeted, y the value in the definition's unit (share of arm or responders).  Two
    panels a row: with three, at a laptop's 1,280 px each y-axis title ran into the panel
    on its left and the titles into each other.
    """
    names = list(frames)
    rows = -(-len(names) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[definition_title(n) for n in names],
                        horizontal_spacing=0.16, vertical_spacing=0.5 / rows)
    scenarios = list(dict.fromkeys(s for f in frames.values() for s in f["scenario"]))
    palette = {s: PALETTE[(2 * j) % len(PALETTE)] for j, s in enumerate(scenarios)}
    for i, name in enumerate(names):
        r, c = divmod(i, cols)
        for scenario, part in frames[name].groupby("scenario", sort=False):
            for ranker, line in part.groupby("ranker", sort=False):
                baseline = ranker == RANDOM
                label = f"{scenario}" + (" (random)" if baseline else "")
                fig.add_trace(go.Scatter(
                    x=line["fraction"], y=line["value"], mode="lines", name=label,
                    legendgroup=label, showlegend=(i == 0), meta=[label],
                    hovertemplate=f"%{{meta[0]}}<br>%{{x:.0%}} targeted: "
                                  f"%{{y:{_value_format(name)}}}<extra></extra>",
                    line=dict(color=palette[scenario], dash="dash" if baseline else None,
                              width=1 if baseline else 2),
                ), row=r + 1, col=c + 1)
        fig.update_xaxes(title_text=_SHARE_AXIS, row=r + 1, col=c + 1)
        fig.update_yaxes(title_text=_value_label(name), row=r + 1, col=c + 1)
    fig.update_xaxes(tickformat=".0%", title_font_size=11)
    fig.update_yaxes(title_font_size=11)
    fig.update_annotations(font_size=13)
    fig.update_layout(height=330 * rows, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.4 / rows,
                                  title_text="Arm split (|T| treated, |C| control rows): "))
    return fig


def _rule(fig: go.Figure, *, x: float | None = None, y: float | None = None, color: str,
          dash: str = "solid", text: str | None = None) -> None:
    """A vertical (``x``) or horizontal (``y``) line across the plot, as one layout shape —
    what ``add_vline`` / ``add_hline`` draw, without their per-call cost (~8 ms each)."""
    line = {"color": color, "width": 1, "dash": dash}
    if x is not None:
        shape = {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0,
                 "y1": 1, "line": line}
    else:
        shape = {"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": y,
                 "y1": y, "line": line}
    fig.layout.shapes = (*fig.layout.shapes, shape)
    if text is not None:
        fig.layout.annotations = (*fig.layout.annotations, {
            "x": x, "y": 1, "xref": "x", "yref": "paper", "text": text, "showarrow": False,
            "xanchor": "right", "yanchor": "top", "font": {"color": color}})


def random_line(end: float, definition: str) -> go.Scatter:
    """Random targeting on a curve chart: the straight line from 0 to ``end``, the curve's
    value at full targeting ``V(1)`` (the same for every ranking)."""
    return go.Scatter(x=[0.0, 1.0], y=[0.0, float(end)], mode="lines", name=RANDOM,
                      line=dict(width=2, **_BASELINE_STYLE[RANDOM]),
                      hovertemplate=f"{RANDOM}<br>%{{x:.0%}} targeted: "
                                    f"%{{y:{_value_format(definition)}}}<extra></extra>")


def band_figure(bands: dict, *, definition: str, cutoff: float | None = None,
                title: str | None = None, colors: Mapping[str, str] | None = None,
                random_end: float | None = None) -> go.Figure:
    """Mean curve per run with its band across splits (``bands``: label → (x, low, mid, high)).

    ``colors`` maps a label to its colour (:func:`run_colors`); the legend shows
    :func:`short_names`, the hover the full label.  ``random_end`` — the curve's value at
    full targeting, ``V(1)``, the same for every ranking — draws random targeting: the
    straight line from 0 to it (:func:`random_line`), so a run below it is seen to be no better.
    """
    legend, palette = _names_and_colors([str(n) for n in bands], colors)
    fig = go.Figure()
    for name, (x, low, mid, high) in bands.items():
        name = str(name)
        color = palette[name]
        x, low, mid, high = (np.asarray(a, dtype=float) for a in (x, low, mid, high))
        if not np.array_equal(low, high, equal_nan=True):
            fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]),
                                     y=np.concatenate([high, low[::-1]]), fill="toself",
                                     fillcolor=_rgba(color, 0.15), line=dict(width=0),
                                     hoverinfo="skip", showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(
            x=x, y=mid, mode="lines", name=legend[name], legendgroup=name, meta=[name],
            line=_line(name, color),
            hovertemplate=f"%{{meta[0]}}<br>%{{x:.0%}} targeted: "
                          f"%{{y:{_value_format(definition)}}}<extra></extra>"))
    if random_end is not None and np.isfinite(random_end):
        fig.add_trace(random_line(random_end, definition))
    if cutoff is not None:
        _rule(fig, x=cutoff, color="firebrick", dash="dot", text=f"cut-off {cutoff:.0%}")
    fig.update_layout(title=title or f"Test-set curves — {definition_title(definition)}",
                      height=440, margin=_MARGIN, xaxis_title=_SHARE_AXIS,
                      yaxis_title=_value_label(definition), legend=dict(orientation="h", y=-0.2))
    _share_ticks(fig)
    return fig


def profit_figure(frames: dict, *, colors: Mapping[str, str] | None = None,
                  equivalent: Mapping[str, tuple[float, float]] | None = None,
                  title: str = "Incremental profit vs targeting depth") -> go.Figure:
    """Incremental profit against targeting depth, one line per run, best depth marked.

    ``frames`` maps a run label to a frame with ``fraction`` and ``profit`` (the mean) and,
    optionally, ``low``/``high``: drawn as a shaded band.  ``equivalent`` maps a label to
    ``(lo_fraction, hi_fraction)``, the depths whose profit is equivalent to the best: drawn
    as a thick translucent segment at the best profit.  ``colors`` as in :func:`band_figure`.
    """
    legend, palette = _names_and_colors([str(n) for n in frames], colors)
    equivalent = equivalent or {}
    fig = go.Figure()
    for name, frame in frames.items():
        name = str(name)
        color = palette[name]
        if {"low", "high"} <= set(frame.columns):
            band = frame.dropna(subset=["low", "high"])
            if len(band) and not np.allclose(band["low"], band["high"]):
                fig.add_trace(go.Scatter(
                    x=np.concatenate([band["fraction"], band["fraction"][::-1]]),
                    y=np.concatenate([band["high"], band["low"][::-1]]), fill="toself",
                    fillcolor=_rgba(color, 0.15), line=dict(width=0), hoverinfo="skip",
                    showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(
            x=frame["fraction"], y=frame["profit"], mode="lines", name=legend[name],
            legendgroup=name, meta=[name], line=_line(name, color),
            hovertemplate="%{meta[0]}<br>%{x:.1%} targeted: profit %{y:,.2f}<extra></extra>"))
        if frame["profit"].notna().any():
            best = frame["profit"].idxmax()
            bx, by = frame.loc[best, "fraction"], frame.loc[best, "profit"]
            lo_hi = equivalent.get(name)
            if lo_hi is not None and np.all(np.isfinite(np.asarray(lo_hi, dtype=float))):
                lo, hi = (float(v) for v in lo_hi)
                fig.add_trace(go.Scatter(
                    x=[lo, hi], y=[by, by], mode="lines", legendgroup=name, showlegend=False,
                    line=dict(color=_rgba(color, 0.35), width=12), meta=[name, lo, hi],
                    hovertemplate="%{meta[0]}<br>equivalent depths "
                                  "%{meta[1]:.0%}–%{meta[2]:.0%}<extra></extra>"))
            fig.add_trace(go.Scatter(
                x=[bx], y=[by], mode="markers", marker=dict(color=color, size=9),
                legendgroup=name, showlegend=False, meta=[name],
                hovertemplate="%{meta[0]}<br>best depth %{x:.1%}: profit %{y:,.2f}"
                              "<extra></extra>"))
    _rule(fig, y=0, color="grey")
    fig.update_layout(title=title, height=400, margin=_MARGIN, xaxis_title=_SHARE_AXIS,
                      yaxis_title="incremental profit (value units)",
                      legend=dict(orientation="h", y=-0.2))
    _share_ticks(fig)
    fig.update_yaxes(tickformat=",")
    return fig


def share_decile_range(figures: Sequence[go.Figure], pad: float = 0.05) -> None:
    """Give :func:`decile_figure` s one y range, from the lowest bar end to the highest (plus
    ``pad`` of the span each side), so that runs shown one under the other (the report)
    compare by eye: each chose its own range (0 to 10 pp beside −2 to 12 pp)."""
    lows, highs = [0.0], [0.0]
    for fig in figures:
        for bar in fig.data:
            y = np.asarray(bar.y, dtype=float)
            err = bar.error_y
            up = y + (np.asarray(err.array, dtype=float) if err.array is not None else 0.0)
            down = y - (np.asarray(err.arrayminus, dtype=float)
                        if err.arrayminus is not None else 0.0)
            lows.append(np.nanmin(down))
            highs.append(np.nanmax(up))
    lo, hi = min(lows), max(highs)
    margin = pad * (hi - lo or 1.0)
    for fig in figures:
        fig.update_yaxes(range=[lo - margin, hi + margin])


def decile_figure(table, *, title: str, note: str | None = None,
                  color: str | None = None) -> go.Figure:
    """Uplift per score decile with error bars (decile 1 = highest scores).

    Bars span ``low``/``high`` when the table has them (e.g. min–max over splits), else the
    interval ``ci_low``/``ci_high`` of :func:`core.evaluation.targeting.uplift_by_decile`.
    ``note`` (default ``table.attrs["interval"]``) is the subtitle; one that does not mention
    the bars is read as their description (``"bars: <note>"``).
    """
    low, high = ("low", "high") if {"low", "high"} <= set(table.columns) else ("ci_low", "ci_high")
    note = note if note is not None else table.attrs.get("interval", "confidence interval")
    subtitle = note if "bar" in note.lower() else f"bars: {note}"
    # in percentage points, as the Data page gives the average effect (+3.90 pp): a
    # difference of rates on a "%" axis read as a rate
    pp = 100.0
    uplift, lo, hi = (pp * np.asarray(table[c], dtype=float) for c in ("uplift", low, high))
    custom = np.column_stack([lo, hi, table["n"] if "n" in table.columns
                              else np.full(len(table), np.nan)])
    fig = go.Figure(go.Bar(
        x=table["bin"].astype(str), y=uplift, marker_color=color or PALETTE[0],
        customdata=custom, name="uplift",
        hovertemplate="decile %{x}: uplift %{y:.2f} pp<br>bar %{customdata[0]:.2f} to "
                      "%{customdata[1]:.2f} pp<br>rows %{customdata[2]:,.0f}<extra></extra>",
        error_y=dict(type="data", symmetric=False, array=hi - uplift, arrayminus=uplift - lo)))
    fig.update_layout(title=dict(text=title, subtitle=dict(text=subtitle)), height=380,
                      margin=dict(l=10, r=10, t=70, b=10),
                      xaxis_title="score decile (1 = targeted first)",
                      yaxis_title="uplift: response rate T − C (percentage points)")
    fig.update_yaxes(ticksuffix=" pp")
    fig.update_xaxes(type="category")  # every decile labelled, 1 … 10
    return fig
