"""A comparison as one self-contained HTML file (tables, interactive figures, configs).

:func:`html_report` turns a list of ``(heading, content)`` sections into a single HTML
document that opens offline: the first plotly figure carries plotly.js inline
(``include_plotlyjs=True``), later figures reuse it.  Every user-supplied string — title,
headings, run and ranker names, table cells, dictionary keys and values — is HTML-escaped;
plotly escapes ``<`` and ``/`` inside its own JSON.  The module never reads the clock: the
caller passes ``generated_at``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from datetime import datetime

import pandas as pd

__all__ = ["html_report"]

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
    return frame.to_html(classes="report-table", border=0, escape=True,
                         float_format=_float, na_rep="nan")


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


def html_report(
    title: str,
    *,
    sections: Sequence[tuple[str, object]],
    generated_at: datetime | str | None = None,
) -> str:
    """One self-contained HTML document of a comparison.

    Parameters
    ----------
    title : str
        Document title (``<title>`` and ``<h1>``), escaped.
    sections : sequence of (heading, content)
        ``content`` may be

        * a ``pandas.DataFrame`` — ``to_html`` with class ``report-table``, cells escaped,
          floats written with 6 significant digits (``f"{v:.6g}"``), ``nan`` as "nan";
        * a plotly ``Figure`` — embedded; the first one includes plotly.js inline, so the
          file opens offline (about 4.8 MB), the others only their data;
        * a ``dict`` (e.g. a model configuration) — a definition list; nested dicts, lists
          and tuples as an indented JSON block;
        * a ``str`` — paragraphs (split on blank lines).

        Every string is HTML-escaped.
    generated_at : datetime or str, optional
        Shown under the title ("Generated ..."); nothing is shown when omitted.  The
        function never reads the clock and names figure containers by section number, so
        equal input gives an identical file.

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

    plotly_included = False
    nav, body = [], []
    for i, section in enumerate(sections, start=1):
        if not isinstance(section, (tuple, list)) or len(section) != 2 \
                or not isinstance(section[0], str):
            raise ValueError(f"sections[{i - 1}] must be a (heading: str, content) pair; "
                             f"got {section!r:.80}.")
        heading, content = section
        if isinstance(content, pd.DataFrame):
            rendered = _render_frame(content)
        elif _is_figure(content):
            rendered = content.to_html(full_html=False, include_plotlyjs=not plotly_included,
                                       div_id=f"uprank-figure-{i}")
            plotly_included = True
        elif isinstance(content, Mapping):
            rendered = _render_dict(content)
        elif isinstance(content, str):
            rendered = _render_text(content)
        else:
            raise ValueError(
                f"sections[{i - 1}] content must be a DataFrame, a plotly Figure, a dict or a "
                f"str; got {type(content).__name__}."
            )
        anchor = f"section-{i}"
        nav.append(f'<li><a href="#{anchor}">{html.escape(heading)}</a></li>')
        body.append(f'<section id="{anchor}">\n<h2>{html.escape(heading)}</h2>\n'
                    f"{rendered}\n</section>")

    if isinstance(generated_at, datetime):
        stamp = generated_at.isoformat(sep=" ", timespec="seconds")
    else:
        stamp = generated_at
    generated = (f'<p class="generated">Generated {html.escape(stamp)}</p>\n'
                 if stamp is not None else "")
    contents = f"<nav><ol>{''.join(nav)}</ol></nav>\n" if nav else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{generated}{contents}"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
