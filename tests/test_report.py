"""core.runs.report: a self-contained HTML file with every table value, one plotly.js bundle and
every user string escaped."""

from __future__ import annotations

import html
from datetime import datetime

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.runs.report import html_report

EVIL = "<script>alert(1)</script>"


def sections():
    auuc = pd.DataFrame({"ranker": [EVIL, "two-model"], "auuc": [0.0306, 0.0282123456],
                         "ci_low": [0.021, np.nan]})
    deciles = pd.DataFrame({"bin": [1, 2], "uplift": [0.125, -0.0625]},
                           index=pd.Index([f"{EVIL} a", "b"], name="run"))
    fig1 = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], name=EVIL))
    fig2 = go.Figure(go.Bar(x=["a"], y=[2]))
    return [
        (f"Run {EVIL}", "First paragraph.\n\nSecond paragraph " + EVIL),
        ("AUUC", auuc),
        ("Curves", fig1),
        ("Deciles", deciles),
        ("Profit", fig2),
        ("Config", {"model": EVIL, "params": {"trees": 500, "note": EVIL}, EVIL: 1}),
    ]


@pytest.fixture(scope="module")
def page():
    return html_report(f"Compare {EVIL}", sections=sections(),
                       generated_at=datetime(2024, 1, 2, 3, 4, 5))


def test_every_table_value_is_in_the_report(page):
    for _, content in sections():
        if isinstance(content, pd.DataFrame):
            for value in content.to_numpy().ravel().tolist() + content.index.tolist():
                if isinstance(value, float):
                    text = "nan" if np.isnan(value) else f"{value:.6g}"
                else:
                    text = html.escape(str(value))
                assert f">{text}<" in page, text
            for column in content.columns:
                assert f">{html.escape(column)}<" in page


def test_one_inline_plotly_bundle_for_two_figures(page):
    assert page.count("* plotly.js v") == 1
    assert page.count('class="plotly-graph-div"') == 2
    # the bundle comes before the first figure is drawn
    assert page.index("* plotly.js v") < page.index("Plotly.newPlot")
    assert "<script src=" not in page  # nothing loaded from outside: opens offline


def test_user_strings_are_escaped_everywhere(page):
    assert EVIL not in page
    assert "<script>alert" not in page
    escaped = html.escape(EVIL)
    assert f"<title>Compare {escaped}</title>" in page
    assert f"<h1>Compare {escaped}</h1>" in page
    assert f"<h2>Run {escaped}</h2>" in page
    assert f"<p>Second paragraph {escaped}</p>" in page
    assert f"<dt>{escaped}</dt>" in page and f"<dd>{escaped}</dd>" in page
    assert "&quot;note&quot;: &quot;&lt;script&gt;" in page  # nested dict as escaped JSON


def test_timestamp_is_explicit_and_output_deterministic():
    secs = [("Table", pd.DataFrame({"a": [1.5]})), ("Figure", go.Figure())]
    one = html_report("t", sections=secs, generated_at="2024-05-06 07:08")
    assert "Generated 2024-05-06 07:08" in one
    assert one == html_report("t", sections=secs, generated_at="2024-05-06 07:08")
    assert "Generated" not in html_report("t", sections=secs[:1])
    stamped = html_report("t", sections=[], generated_at=datetime(2024, 1, 2, 3, 4, 5))
    assert "Generated 2024-01-02 03:04:05" in stamped and "<nav>" not in stamped


@pytest.mark.parametrize("secs, match", [
    ([("x", 3)], r"sections\[0\] content must be a DataFrame, a plotly Figure, a dict or a str"),
    ([("only heading",)], r"sections\[0\] must be a \(heading: str, content\) pair"),
    ("text", "sections must be a list"),
])
def test_bad_sections_are_refused(secs, match):
    with pytest.raises(ValueError, match=match):
        html_report("t", sections=secs)
