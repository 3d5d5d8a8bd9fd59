"""A comparison as one self-contained HTML file (tables, interactive figures, configs).

:func:`html_report` turns a list of ``(heading, content)`` sections into a single HTML
document that opens offline: the first plotly figure carries plotly.js inline
(``include_plotlyjs=True``; ``plotly_js="cdn"`` instead loads it from plotly's CDN, for a
small file to e-mail), later figures reuse it.  Every user-supplied string — title,
headings, run and ranker names, table cells, dictionary keys and values — is HTML-escaped;
plotly escapes ``<`` and ``/`` inside its own JSON.  The module never reads the clock: the
caller passes ``generated_at``.

:func:`comparison_report` builds the report for a stakeholder on top of it, in a fixed order
(:data:`REPORT_SECTIONS`): the takeaway (:func:`core.runs.takeaway.takeaway`), the dataset
with its sample-ratio check, the curves, AUUC with intervals and the paired tests, definition
sensitivity, targeting value, deciles and the run configurations
(:func:`config_table`).  Its tables are written for people: counts with thousands
separators, AUUC with the decimals its values need, shares in per cent and "—" for a
missing number.
"""

from __future__ import annotations

import html
import json
import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd

from core._validation import (
    UndefinedMetricWarning,
    check_binary,
    check_choice,
    check_fraction,
    check_int_at_least,
    check_level,
    check_positive_int,
    check_same_length,
)
from core.constants import DASH
from core.runs.takeaway import (
    auuc_decimals,
    definition_sentence,
    fmt_decimals,
    fmt_p,
    takeaway,
)

__all__ = ["PROFIT_NOTE", "RANGES_NOTE", "REPORT_SECTIONS", "comparison_report", "config_table",
           "dataset_summary", "html_report", "profit_assumptions", "takeaway"]

#: Headings of :func:`comparison_report`, in order, with the short keys ``notes`` may use.
REPORT_SECTIONS: dict[str, str] = {
    "takeaway": "Takeaway",
    "dataset": "Dataset",
    "curves": "Curves",
    "auuc": "AUUC with intervals",
    "definitions": "Definition sensitivity",
    "targeting": "Targeting value",
    "deciles": "Deciles",
    "configs": "Run configurations",
}
#: Left margin (px) at least given to a figure embedded in a report; automargin grows it.
FIGURE_MIN_LEFT_MARGIN = 70

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1100px; padding: 0 1rem; color: #1f2933; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; }
.generated { color: #616e7c; margin-top: 0; }
nav ol { padding-left: 1.2rem; }
section { margin: 2rem 0; }
table.report-table { border-collapse: collapse; font-size: 0.9rem; margin: 0.5rem 0; }
table.report-table th, table.report-table td { border: 1px solid #d3d9e0; padding: 0.25rem 0.6rem;
       text-align: right; }
table.report-table th { background: #f0f3f7; }
dl.report-dict { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
dl.report-dict dt { font-weight: 600; }
dl.report-dict dd { margin: 0; }
pre { background: #f5f7fa; padding: 0.5rem; overflow-x: auto; margin: 0; }
h3 { margin: 1.2rem 0 0.4rem; }
.table-wrap { overflow-x: auto; max-width: 100%; }
.plotly-graph-div { width: 100%; }
""".strip()


def _float(value: float) -> str:
    return f"{value:.6g}"


def _is_figure(content) -> bool:
    try:
        from plotly.basedatatypes import BaseFigure
    except ImportError:  # plotly is a runtime dependency; be lenient anyway
        return False
    return isinstance(content, BaseFigure)


def _render_frame(frame: pd.DataFrame) -> str:
    if frame.index.name is not None and not isinstance(frame.columns, pd.MultiIndex) \
            and frame.columns.name is None:
        # the index's name in the header row's corner: pandas writes a named index as a
        # second header row, empty but for that name
        frame = frame.rename_axis(index=None, columns=frame.index.name)
    table = frame.to_html(classes="report-table", border=0, escape=True,
                          float_format=_float, na_rep="nan")
    return f'<div class="table-wrap">{table}</div>'


def _report_figure(fig):
    """A copy of ``fig`` fit for a report page: axes with ``automargin`` (tick labels and
    axis titles are never cut), a left margin of at least :data:`FIGURE_MIN_LEFT_MARGIN`
    pixels, no fixed width (the figure fills the report's width).  ``fig`` is not changed."""
    import plotly.graph_objects as go

    out = go.Figure(fig)
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    left = out.layout.margin.l
    out.update_layout(width=None, autosize=True,
                      margin={"l": max(FIGURE_MIN_LEFT_MARGIN, left if left is not None else 0)})
    return out


def _figure_title(fig) -> str:
    """The text of ``fig``'s title, "" when it has none."""
    text = fig.layout.title.text
    return str(text).strip() if text else ""


def _render_dict(content: Mapping) -> str:
    items = []
    for key, value in content.items():
        if isinstance(value, (Mapping, list, tuple)):
            text = json.dumps(value, indent=2, default=str, ensure_ascii=False)
            body = f"<pre>{html.escape(text)}</pre>"
        else:
            body = html.escape(str(value))
        items.append(f"<dt>{html.escape(str(key))}</dt><dd>{body}</dd>")
    return '<dl class="report-dict">' + "".join(items) + "</dl>"


def _render_text(content: str) -> str:
    paragraphs = [p.strip() for p in content.split("\n\n") if p.strip()]
    return "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)


_CONTENT_TYPES = ("sections[{i}] content must be a DataFrame, a plotly Figure, a dict or a str "
                  "(or a list of those, with (heading, content) pairs as sub-sections)")


class _Renderer:
    """Renders section contents; counts figures so plotly.js is inlined exactly once."""

    def __init__(self, fit_figures: bool, plotly_js: str = "inline") -> None:
        self.fit_figures = fit_figures
        self.plotly_js = plotly_js
        self.plotly_included = False

    def render(self, content, where: int, fig_id: str) -> str:
        if isinstance(content, pd.DataFrame):
            return _render_frame(content)
        if _is_figure(content):
            fig = _report_figure(content) if self.fit_figures else content
            extra = ({"config": {"responsive": True}, "default_width": "100%"}
                     if self.fit_figures else {})
            first = (True if self.plotly_js == "inline" else "cdn")
            out = fig.to_html(full_html=False,
                              include_plotlyjs=False if self.plotly_included else first,
                              div_id=fig_id, **extra)
            self.plotly_included = True
            return out
        if isinstance(content, Mapping):
            return _render_dict(content)
        if isinstance(content, str):
            return _render_text(content)
        if isinstance(content, list):
            parts = []
            for j, item in enumerate(content, start=1):
                if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                    sub, item = item
                    parts.append(f"<h3>{html.escape(sub)}</h3>")
                parts.append(self.render(item, where, f"{fig_id}-{j}"))
            return "\n".join(parts)
        raise ValueError(_CONTENT_TYPES.format(i=where)
                         + f"; got {type(content).__name__}.")


def html_report(
    title: str,
    *,
    sections: Sequence[tuple[str, object]],
    generated_at: datetime | str | None = None,
    fit_figures: bool = True,
    plotly_js: str = "inline",
) -> str:
    """One self-contained HTML document of a comparison.

    Parameters
    ----------
    title : str
        Document title (``<title>`` and ``<h1>``), escaped.
    sections : sequence of (heading, content)
        ``content`` may be

        * a ``pandas.DataFrame`` — ``to_html`` with class ``report-table``, cells escaped,
          floats written with 6 significant digits (``f"{v:.6g}"``), ``nan`` as "nan"
          (format the frame as text first for other number formats, as
          :func:`comparison_report` does);
        * a plotly ``Figure`` — embedded; the first one includes plotly.js inline, so the
          file opens offline (about 4.8 MB), the others only their data;
        * a ``dict`` (e.g. a model configuration) — a definition list; nested dicts, lists
          and tuples as an indented JSON block;
        * a ``str`` — paragraphs (split on blank lines);
        * a ``list`` of the above, rendered one after the other; an item that is a
          ``(heading, content)`` tuple becomes a sub-section under an ``<h3>``.

        Every string is HTML-escaped.
    generated_at : datetime or str, optional
        Shown under the title ("Generated ..."; a ``datetime`` as "2026-11-26 11:22 UTC");
        nothing is shown when omitted.  The
        function never reads the clock and names figure containers by section number, so
        equal input gives an identical file.
    fit_figures : bool, default=True
        Embed a copy of each figure whose axes have ``automargin`` and whose left margin is
        at least :data:`FIGURE_MIN_LEFT_MARGIN` px (tick labels and axis titles are never
        cut off), without a fixed width and with plotly's responsive config, so figures
        fill the page width.  The caller's figures are never modified.  ``False`` embeds
        the figures as they are.
    plotly_js : {"inline", "cdn"}, default="inline"
        ``"inline"``: plotly.js inside the file (about 4.8 MB; opens offline). ``"cdn"``:
        one ``<script>`` tag loading it from plotly's CDN (a file of tens of kB, for
        e-mail; its charts need an internet connection when opened).

    Returns
    -------
    str
        The HTML document.
    """
    if not isinstance(title, str):
        raise ValueError(f"title must be a string; got {type(title).__name__}.")
    if isinstance(sections, (str, bytes, Mapping)) or not isinstance(sections, Sequence):
        raise ValueError("sections must be a list of (heading, content) pairs; "
                         f"got {type(sections).__name__}.")
    if generated_at is not None and not isinstance(generated_at, (datetime, str)):
        raise ValueError("generated_at must be None, a datetime or a string; "
                         f"got {type(generated_at).__name__}.")

    check_choice(plotly_js, "plotly_js", ("inline", "cdn"))
    renderer = _Renderer(bool(fit_figures), plotly_js)
    nav, body = [], []
    for i, section in enumerate(sections, start=1):
        if not isinstance(section, (tuple, list)) or len(section) != 2 \
                or not isinstance(section[0], str):
            raise ValueError(f"sections[{i - 1}] must be a (heading: str, content) pair; "
                             f"got {section!r:.80}.")
        heading, content = section
        rendered = renderer.render(content, i - 1, f"uprank-figure-{i}")
        anchor = f"section-{i}"
        nav.append(f'<li><a href="#{anchor}">{html.escape(heading)}</a></li>')
        body.append(f'<section id="{anchor}">\n<h2>{html.escape(heading)}</h2>\n'
                    f"{rendered}\n</section>")

    if isinstance(generated_at, datetime):  # to the minute, in UTC (a naive time is UTC)
        when = generated_at if generated_at.tzinfo is None else generated_at.astimezone(
            timezone.utc)
        stamp = when.strftime("%Y-%m-%d %H:%M UTC")
    else:
        stamp = generated_at
    generated = (f'<p class="generated">Generated {html.escape(stamp)}</p>\n'
                 if stamp is not None else "")
    contents = f"<nav><ol>{''.join(nav)}</ol></nav>\n" if nav else ""
    if plotly_js == "cdn" and renderer.plotly_included:  # offline its charts stay empty
        generated += f'<p class="generated">{html.escape(CDN_NOTE)}</p>\n'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{generated}{contents}"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


#: Printed under the title of a report whose charts load plotly.js from its CDN.
CDN_NOTE = ("The charts of this small report load their library from the internet "
            "(cdn.plot.ly): without a connection they stay empty. The full report works "
            "offline.")


# ---------------------------------------------------------------------- tables for people
def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and not np.isfinite(value)


def _float_format(values: list, *, percent: bool, plain: bool):
    """One format for every float of a column, so its numbers line up.

    Per cent: one decimal.  Plain: ``f"{v:g}"``.  Otherwise all whole numbers: thousands
    separators, no decimals; largest magnitude >= 10: 2 decimals with thousands separators;
    largest magnitude below 0.001 (but not 0): 2 significant digits in scientific notation;
    else 4 decimals.
    """
    if percent:
        return lambda v: f"{v * 100:.1f} %"
    if plain:
        return lambda v: f"{v:g}"
    finite = [abs(float(v)) for v in values
              if isinstance(v, (float, np.floating)) and np.isfinite(v)]
    if not finite:
        return lambda v: f"{v:.4f}"
    if all(v == int(v) for v in finite) and max(finite) < 1e15:
        return lambda v: f"{v:,.0f}"
    top = max(finite)
    if top >= 10:
        return lambda v: f"{v:,.2f}"
    if top < 0.001:
        return lambda v: f"{v:.1e}"
    return lambda v: f"{v:.4f}"


def _cell(value, float_format, *, plain: bool = False) -> str:
    """One table cell as text (see :func:`_readable`)."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str, ensure_ascii=False)
    if _is_missing(value):
        return DASH
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)) if plain else ("yes" if value else "no")
    if isinstance(value, (int, np.integer)):
        return str(int(value)) if plain else f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return float_format(float(value))
    return str(value)


def _readable(frame: pd.DataFrame, *, percent=(), plain: bool = False,
              rename: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``frame`` with every cell (and index label) as text for people.

    Missing numbers read "—"; integers get thousands separators; the floats of a column
    share one format (:func:`_float_format`: 4 decimals, or 2 from 10 up, whole numbers
    without decimals); columns in ``percent`` are fractions written as per cent;
    booleans "yes" / "no"; lists and dicts compact JSON.  ``plain=True`` writes numbers as
    they were typed (``str(int)``, ``f"{float:g}"``: seeds and learning rates, not counts).
    ``rename`` renames columns (after ``percent`` is looked up).  A default ``RangeIndex``
    in front of a ``bin`` column is replaced by that column.
    """
    if isinstance(frame.index, pd.RangeIndex) and "bin" in frame.columns:
        frame = frame.set_index("bin")
    names = [str((rename or {}).get(c, c)) for c in frame.columns]
    out = pd.DataFrame(index=[DASH if _is_missing(v) else str(v) for v in frame.index],
                       columns=names, dtype=object)
    out.index.name = "score bin (1 = highest scores)" if frame.index.name == "bin" \
        else frame.index.name
    for j, col in enumerate(frame.columns):
        values = frame.iloc[:, j].tolist()
        fmt = _float_format(values, percent=col in percent, plain=plain)
        out.iloc[:, j] = [_cell(v, fmt, plain=plain) for v in values]
    return out


def _pct(fraction: float, digits: int = 1) -> str:
    return DASH if _is_missing(fraction) else f"{fraction * 100:.{digits}f} %"


# ---------------------------------------------------------------------- dataset
def dataset_summary(y, t) -> pd.DataFrame:
    """Rows, share, responders and outcome rate of each arm of an A/B test.

    Parameters
    ----------
    y, t : array-like of shape (n,)
        Binary outcome and treatment flag.

    Returns
    -------
    pandas.DataFrame
        Index ``["treated", "control", "all"]`` (name ``"arm"``); columns ``rows`` (int),
        ``share`` (rows / n), ``responders`` (int, :math:`\\sum y`) and ``outcome_rate``
        (responders / rows; ``nan`` with an
        :class:`~core._validation.UndefinedMetricWarning` for an empty arm).

    Examples
    --------
    >>> dataset_summary([1, 0, 0, 1, 0], [1, 1, 1, 0, 0])
           rows  share  responders  outcome_rate
    arm
    treated     3    0.6           1      0.333333
    control     2    0.4           1      0.500000
    all         5    1.0           2      0.400000
    """
    y = check_binary(y, "y")
    t = check_binary(t, "t")
    check_same_length(y, t)
    if y.size == 0:
        raise ValueError("y and t must hold at least one row; got none.")
    masks = {"treated": t == 1, "control": t == 0, "all": np.ones(t.shape, dtype=bool)}
    rows = np.array([m.sum() for m in masks.values()], dtype=np.int64)
    responders = np.array([y[m].sum() for m in masks.values()], dtype=np.int64)
    if (rows == 0).any():
        empty = [k for k, r in zip(masks, rows) if r == 0]
        warnings.warn(f"The outcome rate of {' and '.join(empty)} is undefined because that "
                      "arm has no rows; returning nan.", UndefinedMetricWarning, stacklevel=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = responders / rows
    return pd.DataFrame({"rows": rows, "share": rows / y.size, "responders": responders,
                         "outcome_rate": rate},
                        index=pd.Index(list(masks), name="arm"))


def _dataset_blocks(dataset, srm) -> list:
    blocks: list = []
    if dataset is None:
        blocks.append("No dataset summary was included.")
    elif isinstance(dataset, pd.DataFrame):
        blocks.append(_readable(dataset))
    elif isinstance(dataset, Mapping):
        frame = pd.DataFrame({"value": list(dataset.values())},
                             index=pd.Index([str(k) for k in dataset], name="item"),
                             dtype=object)
        blocks.append(_readable(frame))
    elif hasattr(dataset, "y") and hasattr(dataset, "t"):
        summary = dataset_summary(dataset.y, dataset.t)
        n_t, n_c, n = summary["rows"].tolist()
        r_t, r_c, _ = summary["outcome_rate"].tolist()
        name = getattr(dataset, "name", None)
        blocks.append(
            (f"{name}: " if name else "")
            + f"{n:,} rows — {n_t:,} treated ({_pct(n_t / n)}) and {n_c:,} control "
            f"({_pct(n_c / n)}). Outcome rate {_pct(r_t, 2)} treated vs {_pct(r_c, 2)} "
            "control.")
        shown = summary.rename(columns={"share": "share of rows",
                                        "outcome_rate": "outcome rate"})
        blocks.append(_readable(shown, percent=("share of rows", "outcome rate")))
    else:
        raise ValueError("dataset must be None, a DataFrame, a dict or data with y and t "
                         f"arrays (ABData); got {type(dataset).__name__}.")
    if srm is None:
        blocks.append("No sample-ratio check was included.")
    elif isinstance(srm, pd.DataFrame):
        verdict = srm.attrs.get("verdict")
        sub: list = [verdict] if verdict else []
        sub.append(_readable(srm, percent=("observed_share", "expected_share"),
                             rename=_SRM_NAMES))
        blocks.append(("Sample ratio check", sub))
    else:
        raise ValueError(f"srm must be None or the DataFrame of core.data.hygiene.srm_test; "
                         f"got {type(srm).__name__}.")
    return blocks


_SRM_NAMES = {"observed": "observed rows", "expected": "expected rows",
              "observed_share": "observed share", "expected_share": "expected share",
              "contribution": "χ² contribution"}


# ---------------------------------------------------------------------- AUUC tables
_PAIRED = {"ranker", "reference", "cutoff", "difference", "ci_low", "ci_high", "p_value",
           "verdict"}


def _cut_text(cutoff: float) -> str:
    return f"{cutoff * 100:g} %"


def _interval_text(low, high, digits: int) -> str:
    if _is_missing(low) or _is_missing(high):
        return DASH
    return f"{fmt_decimals(low, digits)} to {fmt_decimals(high, digits)}"


def _auuc_wide(table: pd.DataFrame, level: float, least: int = 4) -> pd.DataFrame:
    """A long ``BootstrapResult.table()`` as one row per run: AUUC and its interval per
    cut-off, as text, every cell with the decimals of :func:`auuc_decimals`."""
    lvl = _cut_text(level)
    cutoffs = list(dict.fromkeys(table["cutoff"].astype(float).tolist()))
    runs = list(dict.fromkeys(str(r) for r in table["ranker"]))
    out = pd.DataFrame(index=pd.Index(runs, name="run"))
    has_ci = {"ci_low", "ci_high"} <= set(table.columns)
    digits = auuc_decimals(table["auuc"].astype(float), (table["ci_high"] - table["ci_low"])
                           .astype(float) if has_ci else (), least=least)
    for c in cutoffs:
        part = table[np.isclose(table["cutoff"].astype(float), c)]
        part = part.assign(ranker=part["ranker"].astype(str)).set_index("ranker")
        out[f"AUUC @{_cut_text(c)}"] = [
            DASH if r not in part.index or _is_missing(part.at[r, "auuc"])
            else fmt_decimals(part.at[r, "auuc"], digits) for r in runs]
        if has_ci:
            out[f"{lvl} CI @{_cut_text(c)}"] = [
                _interval_text(part.at[r, "ci_low"], part.at[r, "ci_high"], digits)
                if r in part.index else DASH for r in runs]
    return out


def _paired_wide(paired: pd.DataFrame, cutoff: float | None, level: float,
                 n_boot: int | None, least: int = 4) -> pd.DataFrame:
    """The paired tests as one row per (run, cut-off): verdict first, then the difference to
    the reference, its interval and the p-value, as text, with the page's decimals
    (:func:`~core.runs.takeaway.auuc_decimals`: "-0.00018", not "-0.0002", beside a
    takeaway that says 0.00018)."""
    part = paired
    if cutoff is not None:
        part = paired[np.isclose(paired["cutoff"].astype(float), cutoff)]
    several = len(set(part["cutoff"].astype(float).round(12))) > 1
    out = pd.DataFrame({"verdict": [DASH if _is_missing(v) else str(v)
                                    for v in part["verdict"]]},
                       index=pd.Index([str(r) for r in part["ranker"]], name="run"))
    if several:
        out["cut-off"] = [_cut_text(float(c)) for c in part["cutoff"]]
    low, high = part["ci_low"].astype(float), part["ci_high"].astype(float)
    digits = auuc_decimals(part["difference"].astype(float), high - low, least=least)
    out["difference to reference"] = [fmt_decimals(v, digits) for v in part["difference"]]
    out[f"{_cut_text(level)} CI"] = [_interval_text(lo, hi, digits)
                                     for lo, hi in zip(low, high)]
    out["p-value"] = [fmt_p(p, n_boot=n_boot).removeprefix("p").removeprefix(" = ").strip()
                      or DASH for p in part["p_value"]]
    return out


def _auuc_blocks(auuc, paired, cutoff, level, n_boot, least: int = 4) -> list:
    blocks: list = []
    if auuc is None:
        blocks.append("No AUUC table was included.")
    elif {"ranker", "cutoff", "auuc"} <= set(auuc.columns):
        blocks.append(_readable(_auuc_wide(auuc, level, least)))
    else:
        blocks.append(_readable(auuc))
    if paired is None:
        blocks.append(("Paired tests", ("The paired bootstrap was not run: no intervals or "
                                        "tests of the differences were computed.")))
    elif len(paired) == 0:
        blocks.append(("Paired tests", "Only one run: there is no pair to test."))
    elif _PAIRED <= set(paired.columns):
        refs = list(dict.fromkeys(str(r) for r in paired["reference"]))
        blocks.append((f"Paired tests against {' / '.join(refs)}",
                       _readable(_paired_wide(paired, cutoff, level, n_boot, least))))
    else:
        cols = list(paired.columns)
        if "verdict" in cols:
            cols = ["verdict", *[c for c in cols if c != "verdict"]]
        blocks.append(("Paired tests against the reference", _readable(paired[cols])))
    return blocks


def _ranks_blocks(ranks) -> list:
    if ranks is None:
        return ["The definition sensitivity was not computed."]
    from core.evaluation.curves import DEFINITIONS

    shown = ranks.rename(index=lambda d: DEFINITIONS[d].label if d in DEFINITIONS else d)
    shown = shown.astype(object)
    # Definitions differ in scale (rates vs counts): one format per row for the AUUCs.
    auuc_cols = [c for c in shown.columns if str(c).startswith("AUUC ")]
    for i in range(len(shown)):
        values = shown.iloc[i][auuc_cols].tolist()
        fmt = _float_format(values, percent=False, plain=False)
        for c, v in zip(auuc_cols, values):
            shown.iat[i, shown.columns.get_loc(c)] = _cell(v, fmt)
    return [definition_sentence(ranks), _readable(shown)]


_FRACTIONS = ("best_fraction", "depth_low", "depth_high", "equivalent_low", "equivalent_high")
_TARGETING_NAMES = {"best_fraction": "best depth", "best_targeted": "rows targeted",
                    "best_profit": "profit at best depth", "profit_low": "profit CI low",
                    "profit_high": "profit CI high", "depth_low": "best depth CI low",
                    "depth_high": "best depth CI high",
                    "equivalent_low": "equivalent depths from",
                    "equivalent_high": "equivalent depths to",
                    "profit_all": "profit if everyone is treated",
                    "profit_none": "profit if nobody is treated"}
_DECILE_RATES = ("response_rate_treated", "response_rate_control")
_DECILE_NAMES = {"n": "rows", "n_treated": "treated rows", "n_control": "control rows",
                 "score_min": "lowest score", "score_max": "highest score",
                 "response_rate_treated": "response rate treated",
                 "response_rate_control": "response rate control", "ci_low": "CI low",
                 "ci_high": "CI high", "n_splits": "splits"}


#: What a profit is, as the Compare page's caption says it.
PROFIT_NOTE = ("Profit = incremental value − cost: the value of the extra responses that "
               "targeting the top-scored customers brings (treated minus what they would have "
               "done untreated), minus the cost of treating them.")
#: The two ranges of the targeting table, as the Compare page's caption says them.
RANGES_NOTE = ("Two different ranges: \"best depth, 95 % interval\" is where the best depth of "
               "a bootstrap resample falls — wide when the curve is flat near its top; "
               "\"statistically equivalent depths\" are the depths whose profit is not "
               "significantly below the best one (the thick segment in the chart). A range of "
               "one point (e.g. 100 % to 100 %) does not make that depth certain: read it with "
               "the run's sentence above the table.")


def _money(value: float) -> str:
    """A typed amount as people read it, never in e-notation (``1.25e-05`` → "0.0000125",
    ``1500000`` → "1,500,000"): :func:`core.runs.takeaway.fmt_significant`, 6 digits."""
    from core.runs.takeaway import fmt_significant

    return fmt_significant(value, 6)


def profit_assumptions(
    *,
    cost_per_treatment: float | None,
    value_per_response: float | None = None,
    value_column: str | None = None,
    test_rows: int | None = None,
    n_rows: int | None = None,
    n_splits: int = 1,
) -> str:
    """The assumptions behind every profit number of a report, in one paragraph.

    Parameters
    ----------
    cost_per_treatment : float or None
        Cost of treating one customer; ``None`` when it was not recorded (the sentence then
        says so).
    value_per_response : float, optional
        Value of one response (a 0/1 outcome), when the value is fixed.
    value_column : str, optional
        Name of the column giving each customer's value, when the value is per row (then
        ``value_per_response`` is ignored).
    test_rows : int, optional
        Held-out test customers per split, the customers the profit is counted over.
    n_rows : int, optional
        Rows of the whole dataset, for the share ``test_rows / n_rows``.
    n_splits : int, default=1
        Number of test splits; more than one: the profits are means over the splits.

    Returns
    -------
    str

    Examples
    --------
    >>> profit_assumptions(cost_per_treatment=0.1, value_per_response=10, test_rows=900,
    ...                    n_rows=3000)  # doctest: +NORMALIZE_WHITESPACE
    'Assumptions behind every profit number: a cost of 0.1 per treated customer and a value
    of 10 per response. Profits are counted over the held-out test customers only: 900
    customers (30.0 % of the 3,000 rows), on one test split.'
    """
    n_splits = check_positive_int(n_splits, "n_splits")
    if cost_per_treatment is None:
        money = ("the cost per treatment and the value per response behind these profits "
                 "were not recorded")
    else:
        if value_column is not None:
            value = f"each customer's value taken from the column \"{value_column}\""
        elif value_per_response is not None:
            value = f"a value of {_money(value_per_response)} per response"
        else:
            value = "a value per response that was not recorded"
        money = f"a cost of {_money(cost_per_treatment)} per treated customer and {value}"
    text = f"Assumptions behind every profit number: {money}."
    if test_rows is not None:
        share = (f" ({_pct(test_rows / n_rows)} of the {int(n_rows):,} rows)"
                 if n_rows else "")
        scope = (f"in each of {n_splits} test splits (the profits are means over the splits)"
                 if n_splits > 1 else "on one test split")
        text += (" Profits are counted over the held-out test customers only: "
                 f"{int(test_rows):,} customers{share}, {scope}.")
    return text


def _targeting_blocks(depth, assumptions: str) -> list:
    """The targeting section: assumptions, what profit means, each run's verdict on its best
    depth (the ``verdict`` column, taken out of the table), the table and the two ranges."""
    if depth is None:
        return ["The value of the targeting depth was not computed."]
    blocks: list = [assumptions, PROFIT_NOTE]
    table = depth
    if "verdict" in depth.columns:
        blocks += [f"{name}: {verdict}" for name, verdict in depth["verdict"].items()
                   if not _is_missing(verdict)]
        table = depth.drop(columns="verdict")
    blocks.append(_readable(table, percent=_FRACTIONS, rename=_TARGETING_NAMES))
    blocks.append(RANGES_NOTE)
    return blocks


def _content_blocks(value, name: str) -> list:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        if isinstance(item, pd.DataFrame):
            out.append(_readable(item, percent=_DECILE_RATES, rename=_DECILE_NAMES))
        elif _is_figure(item) or isinstance(item, str):
            out.append(item)
        else:
            raise ValueError(f"{name} must be a DataFrame, a plotly Figure, a str or a list of "
                             f"those; got {type(item).__name__}.")
    return out


def _deciles_blocks(deciles) -> list:
    if deciles is None or len(deciles) == 0:
        return ["No deciles were included."]
    pairs = deciles.items() if isinstance(deciles, Mapping) else deciles
    blocks = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not isinstance(pair[0], str):
            raise ValueError(f"deciles must map run -> table/figure or be (run, table/figure) "
                             f"pairs; item {i} is {type(pair).__name__}.")
        blocks.append((pair[0], _content_blocks(pair[1], f"deciles[{pair[0]!r}]")))
    return blocks


# ---------------------------------------------------------------------- configs
_CONFIG_COLUMNS = ("model", "dataset", "scheme", "test size", "repeats", "seed",
                   "data fingerprint")


def _flatten(d: Mapping, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.update(_flatten(v, f"{key}."))
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(list(v), default=str, ensure_ascii=False)
        elif isinstance(v, Mapping):
            out[key] = "{}"
        else:
            out[key] = v
    return out


#: ``ABData.source_columns`` keys shown by :func:`config_table`, with their column names.
_SOURCE_NAMES = {"treatment": "treatment column", "treatment_value": "treated value",
                 "control_value": "control value", "outcome": "outcome column"}


def config_table(configs: Mapping[str, Mapping], *, data_name: str | None = None,
                 source_columns: Mapping | None = None) -> pd.DataFrame:
    """Run configurations as one readable table: one row per run, one column per setting.

    Parameters
    ----------
    configs : mapping of run label → config
        Each config is :meth:`core.runs.store.RunConfig.to_dict` (or a ``RunConfig``, whose
        ``to_dict()`` is taken).
    data_name : str, optional
        Name of the data the runs were trained on (``ABData.name``, e.g. the uploaded file's
        name): the ``dataset`` of a run on uploaded data or a file, instead of
        ``"upload or file"``.
    source_columns : mapping, optional
        ``ABData.source_columns``: the columns ``treatment column``, ``treated value``,
        ``control value`` and ``outcome column`` (those given and not ``None``) follow
        ``dataset`` in every row.

    Returns
    -------
    pandas.DataFrame
        Indexed by run (index name ``"run"``), columns in this order: ``model``; every model
        parameter under its own name (``learning_rate``, ``n_estimators``...; nested dicts as
        ``outer.inner``; a parameter whose name is one of the fixed columns gets a
        ``params.`` prefix); ``dataset`` (the dataset key, or ``data_name`` — else
        ``"upload or file"`` — for data uploaded or read by path); the columns of
        ``source_columns``; every dataset loader option as ``options.<name>``;
        ``scheme``; ``test size``
        (fraction of rows in each test split); ``repeats`` (number of splits); ``seed``;
        ``data fingerprint`` (first 12 hex digits of the data's SHA-256); then any other key
        of the dicts, as it is.  The format ``version`` is left out.  A setting a run does
        not have is ``nan``; lists are JSON text.

    Examples
    --------
    >>> cfg = {"version": 1, "fingerprint": "ab" * 32, "model": "LambdaMART",
    ...        "params": {"learning_rate": 0.05, "n_estimators": 300}, "dataset": None,
    ...        "options": {}, "scheme": "repeated", "test_size": 0.3, "n_repeats": 10,
    ...        "seed": 0}
    >>> config_table({"A": cfg}).iloc[0].to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'model': 'LambdaMART', 'learning_rate': 0.05, 'n_estimators': 300,
     'dataset': 'upload or file', 'scheme': 'repeated', 'test size': 0.3, 'repeats': 10,
     'seed': 0, 'data fingerprint': 'abababababab'}
    """
    if not isinstance(configs, Mapping) or not configs:
        what = "an empty mapping" if isinstance(configs, Mapping) else type(configs).__name__
        raise ValueError("configs must be a non-empty mapping of run label -> "
                         f"RunConfig.to_dict(); got {what}.")
    if source_columns is not None and not isinstance(source_columns, Mapping):
        raise ValueError("source_columns must be a mapping (ABData.source_columns) or None; "
                         f"got {type(source_columns).__name__}.")
    source = {name: str(source_columns[key]) for key, name in _SOURCE_NAMES.items()
              if source_columns and source_columns.get(key) is not None}
    unnamed = str(data_name) if data_name else "upload or file"
    rows = {}
    params_cols: dict[str, None] = {}  # ordered sets, first seen first
    option_cols: dict[str, None] = {}
    other_cols: dict[str, None] = {}
    for label, cfg in configs.items():
        if hasattr(cfg, "to_dict") and not isinstance(cfg, Mapping):
            cfg = cfg.to_dict()
        if not isinstance(cfg, Mapping):
            raise ValueError(f"configs[{label!r}] must be a RunConfig or its to_dict(); "
                             f"got {type(cfg).__name__}.")
        cfg = dict(cfg)
        cfg.pop("version", None)
        params = {f"params.{k}" if k in _CONFIG_COLUMNS else k: v
                  for k, v in _flatten(cfg.pop("params", None) or {}).items()}
        options = _flatten(cfg.pop("options", None) or {}, "options.")
        dataset = cfg.pop("dataset", None)
        fingerprint = cfg.pop("fingerprint", None)
        row = {"model": cfg.pop("model", None), **params,
               "dataset": unnamed if dataset is None else dataset, **source, **options,
               "scheme": cfg.pop("scheme", None), "test size": cfg.pop("test_size", None),
               "repeats": cfg.pop("n_repeats", None), "seed": cfg.pop("seed", None),
               "data fingerprint": fingerprint[:12] if isinstance(fingerprint, str) else None}
        others = {k: v for k, v in _flatten(cfg).items() if k not in row}
        row.update(others)
        params_cols.update(dict.fromkeys(params))
        option_cols.update(dict.fromkeys(options))
        other_cols.update(dict.fromkeys(others))
        rows[str(label)] = row
    order = ["model", *params_cols, "dataset", *source, *option_cols, "scheme", "test size",
             "repeats", "seed", "data fingerprint", *other_cols]
    out = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=order)
    out.index.name = "run"
    return out


def _configs_blocks(configs) -> list:
    if configs is None or len(configs) == 0:
        return ["No run configurations were included."]
    table = configs if isinstance(configs, pd.DataFrame) else config_table(configs)
    return ["Each run's settings under the names the models take them (LightGBM and "
            "UpRank parameter names such as learning_rate, n_estimators), so that a data "
            "scientist can train the same run again; the run's name above gives the same "
            "in words.", _readable(table, plain=True)]


# ---------------------------------------------------------------------- the report
def comparison_report(
    title: str,
    *,
    takeaway: str,
    dataset=None,
    srm: pd.DataFrame | None = None,
    figures: Sequence[tuple[str, object]] = (),
    auuc: pd.DataFrame | None = None,
    paired: pd.DataFrame | None = None,
    ranks: pd.DataFrame | None = None,
    depth: pd.DataFrame | None = None,
    deciles=None,
    configs: Mapping[str, Mapping] | pd.DataFrame | None = None,
    notes: Mapping[str, str] | None = None,
    cutoff: float | None = None,
    level: float = 0.95,
    n_boot: int | None = None,
    generated_at: datetime | str | None = None,
    several_arms: Sequence[tuple[str, object]] | None = None,
    assumptions: Mapping[str, Any] | None = None,
    plotly_js: str = "inline",
    least: int = 4,
) -> str:
    """The comparison of several runs as one HTML file for a stakeholder.

    Built on :func:`html_report` (offline, escaped, deterministic).  The sections are always
    present and always in this order (:data:`REPORT_SECTIONS`); a part not given says so.

    Parameters
    ----------
    title : str
        Title of the document.
    takeaway : str
        Section "Takeaway": the conclusion, usually :func:`core.runs.takeaway.takeaway`.
    dataset : ABData, dict or DataFrame, optional
        Section "Dataset".  Data with ``y`` and ``t`` arrays (an
        :class:`~core.data.abdata.ABData`): a sentence and the :func:`dataset_summary` table
        (rows, share of rows, responders and outcome rate per arm); a dict: a two-column
        item/value table; a DataFrame: shown as it is (numbers formatted).
    srm : DataFrame, optional
        :func:`core.data.hygiene.srm_test`: its ``attrs["verdict"]`` sentence and its table,
        under "Sample ratio check" in the Dataset section.
    figures : sequence of (heading, plotly Figure)
        Section "Curves", one sub-section each (e.g. the test-set curves and the profit by
        depth), headed by ``heading`` when the figure has no title of its own (a titled
        figure is headed by its title, which the heading would repeat).  Embedded as copies
        with automargin axes (:func:`html_report`).
    auuc : DataFrame, optional
        Section "AUUC with intervals".  A long
        :meth:`~core.evaluation.compare.BootstrapResult.table` (columns ``ranker``,
        ``cutoff``, ``auuc``, ``ci_low``, ``ci_high``) is turned into one row per run with
        the AUUC and its interval per cut-off; any other frame (e.g. already formatted for
        the screen) is shown as it is.
    paired : DataFrame, optional
        In the same section, under "Paired tests against <reference>".  A
        :meth:`~core.evaluation.compare.BootstrapResult.paired` frame is shown with the
        verdict first, then the difference to the reference, its interval and the p-value
        (only the rows at ``cutoff`` when given, else every cut-off with a "cut-off"
        column); any other frame is shown with a ``verdict`` column moved first.  ``None``:
        "the paired bootstrap was not run".
    ranks : DataFrame, optional
        Section "Definition sensitivity": :func:`core.evaluation.compare.definition_ranks`
        (or its mean over splits) — the :func:`~core.runs.takeaway.definition_sentence` and
        the table, definitions named by their plain title.
    depth : DataFrame, optional
        Section "Targeting value": :func:`core.evaluation.targeting.targeting_summary`,
        :meth:`core.evaluation.across_splits.DepthResult.summary` (depth columns in per cent)
        or a frame already formatted.  The section opens with :func:`profit_assumptions`
        and :data:`PROFIT_NOTE`; a ``verdict`` column becomes one sentence per run
        ("<run>: <verdict>") above the table; :data:`RANGES_NOTE` follows the table.
    deciles : mapping of run → content, or sequence of (run, content), optional
        Section "Deciles", one sub-section per run; content is a DataFrame (e.g.
        :func:`core.evaluation.targeting.uplift_by_decile`), a plotly Figure (bar chart), or
        a list of those (table and chart).
    configs : mapping of run → RunConfig.to_dict(), or DataFrame, optional
        Section "Run configurations": :func:`config_table` of the mapping (or the given
        frame), one row per run, values written as typed.
    notes : mapping of str → str, optional
        Extra sentences.  A key naming a section — its short key (``"takeaway"``,
        ``"dataset"``, ``"curves"``, ``"auuc"``, ``"definitions"``, ``"targeting"``,
        ``"deciles"``, ``"configs"``) or its heading — adds the text at the end of that
        section; other keys are listed in a last section, "Notes".
    cutoff : float in (0, 1], optional
        Cut-off of the paired table (see ``paired``).
    level : float in (0, 1), default=0.95
        Level of the intervals, for column names ("95 % CI").
    n_boot : int, optional
        Bootstrap replicates behind ``paired``: a p-value of 0 is then written "< 2/B"
        (:func:`~core.runs.takeaway.fmt_p`); without it "< 0.001".
    generated_at : datetime or str, optional
        As in :func:`html_report`.
    several_arms : sequence of (heading, content), optional
        A per-arm run of an A/B/n experiment (:func:`core.runs.multiarm_runs.
        multiarm_sections`): one last section "Several arms", its parts as sub-sections.
    assumptions : mapping, optional
        The assumptions behind the profits of ``depth``, the keyword arguments of
        :func:`profit_assumptions` (``cost_per_treatment``, ``value_per_response`` or
        ``value_column``, ``test_rows`` per split, ``n_rows`` of the dataset, ``n_splits``);
        without them the section says they were not recorded.
    plotly_js : {"inline", "cdn"}, default="inline"
        As in :func:`html_report`: a file that opens offline (~5 MB) or a small one whose
        charts load plotly.js from the internet.
    least : int, default=4
        Fewest decimals of the paired table's differences and bounds (4 for shares of an
        arm, 1 for counts of responders): it shows as many as the narrowest interval and
        two significant digits of the smallest difference need
        (:func:`~core.runs.takeaway.auuc_decimals`), as the Compare page's tables; the
        same for a long AUUC table (``auuc``).

    Returns
    -------
    str
        The HTML document.  Tables hold text: "—" for a missing number, thousands
        separators for counts, AUUC with the decimals its values and intervals need
        (:func:`~core.runs.takeaway.auuc_decimals`: at least 4, or 1 for counts), shares
        in per cent.
    """
    if not isinstance(takeaway, str):
        raise ValueError(f"takeaway must be a string; got {type(takeaway).__name__}.")
    level = check_level(level)
    if cutoff is not None:
        cutoff = check_fraction(cutoff, "cutoff")
    if n_boot is not None:
        n_boot = check_positive_int(n_boot, "n_boot")
    least = check_int_at_least(least, "least", 0)
    for name, frame in (("auuc", auuc), ("paired", paired), ("ranks", ranks),
                        ("depth", depth)):
        if frame is not None and not isinstance(frame, pd.DataFrame):
            raise ValueError(f"{name} must be a DataFrame or None; got {type(frame).__name__}.")
    if isinstance(figures, (str, bytes, Mapping)) or not isinstance(figures, Sequence):
        raise ValueError("figures must be a list of (heading, plotly Figure) pairs; "
                         f"got {type(figures).__name__}.")
    curves: list = []
    for i, pair in enumerate(figures):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not isinstance(pair[0], str) \
                or not _is_figure(pair[1]):
            raise ValueError(f"figures[{i}] must be a (heading: str, plotly Figure) pair; "
                             f"got {pair!r:.80}.")
        # A figure with its own title is headed by it: the heading would only repeat it.
        curves.append(pair[1] if _figure_title(pair[1]) else (pair[0], pair[1]))

    body = {
        "takeaway": [takeaway],
        "dataset": _dataset_blocks(dataset, srm),
        "curves": curves or ["No figures were included."],
        "auuc": _auuc_blocks(auuc, paired, cutoff, level, n_boot, least),
        "definitions": _ranks_blocks(ranks),
        "targeting": _targeting_blocks(depth, profit_assumptions(
            **{"cost_per_treatment": None, **dict(assumptions or {})})),
        "deciles": _deciles_blocks(deciles),
        "configs": _configs_blocks(configs),
    }
    extra = {}
    by_heading = {h.lower(): k for k, h in REPORT_SECTIONS.items()}
    for key, text in (notes or {}).items():
        k = key if key in REPORT_SECTIONS else by_heading.get(str(key).lower())
        if k is None:
            extra[str(key)] = str(text)
        else:
            body[k].append(str(text))
    sections = [(REPORT_SECTIONS[k], blocks) for k, blocks in body.items()]
    if several_arms:
        sections.append(("Several arms: which treatment for whom", list(several_arms)))
    if extra:
        sections.append(("Notes", extra))
    return html_report(title, sections=sections, generated_at=generated_at,
                       plotly_js=plotly_js)
