"""core.runs.report: a self-contained HTML file with every table value, one plotly.js bundle and
every user string escaped; the stakeholder report built on it (sections in order, readable
tables, figures that are never clipped and never mutated, flattened run configurations)."""

from __future__ import annotations

import copy
import html
import json
import re
import warnings
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.data.abdata import ABData
from core.data.hygiene import srm_test
from core.evaluation.compare import bootstrap_auuc, definition_ranks
from core.evaluation.targeting import targeting_summary, uplift_by_decile
from core.runs.report import (
    comparison_report,
    config_table,
    dataset_summary,
    html_report,
    takeaway,
)
from core.runs.store import RunConfig

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
    assert "Generated 2024-01-02 03:04 UTC" in stamped and "<nav>" not in stamped
    # an aware time is written in UTC: 12:04 at UTC+1 is 11:04 UTC
    plus_one = datetime(2024, 1, 2, 12, 4, 5, tzinfo=timezone(timedelta(hours=1)))
    assert "Generated 2024-01-02 11:04 UTC" in html_report("t", sections=[],
                                                          generated_at=plus_one)


@pytest.mark.parametrize("secs, match", [
    ([("x", 3)], r"sections\[0\] content must be a DataFrame, a plotly Figure, a dict or a str"),
    ([("only heading",)], r"sections\[0\] must be a \(heading: str, content\) pair"),
    ("text", "sections must be a list"),
])
def test_bad_sections_are_refused(secs, match):
    with pytest.raises(ValueError, match=match):
        html_report("t", sections=secs)


# --------------------------------------------------------------------- comparison report

HEADINGS = ["Takeaway", "Dataset", "Curves", "AUUC with intervals", "Definition sensitivity",
            "Targeting value", "Deciles", "Run configurations"]
FP = "ab" * 32


def run_configs() -> dict[str, RunConfig]:
    return {
        "LambdaMART": RunConfig(FP, "LambdaMART", {"learning_rate": 0.05, "n_estimators": 300},
                                dataset="uplift_world", options={"n": 5000},
                                scheme="repeated", n_repeats=5, seed=7),
        "two-model": RunConfig(FP, "two-model", {"C": 1.0, "seed": 3}),
    }


def small_figure() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[0, 0.5, 1], y=[0, 1_500_000, 2_000_000], name="A"))
    fig.update_layout(margin={"l": 10, "r": 10, "t": 40, "b": 10}, width=500,
                      yaxis_title="incremental responders")
    return fig


@pytest.fixture(scope="module")
def comparison():
    rng = np.random.default_rng(7)
    n = 2400
    x = rng.normal(size=n)
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.1 + 0.15 * t * (x > 0)).astype(int)
    data = ABData(pd.DataFrame({"x": x}), y, t, name="toy world")
    scores = {"LambdaMART": x + rng.normal(0, 0.3, n), "two-model": rng.random(n)}
    res = bootstrap_auuc(y, t, scores, definition="uplift_joint_rel", cutoffs=(0.3, 1.0),
                         n_boot=100, random_state=0, reference="two-model")
    table = res.table()
    table.loc[len(table)] = ["Random", 0.3, 0.001, np.nan, np.nan, np.nan]  # not resampled
    paired = res.paired()
    ranks = definition_ranks(y, t, scores, cutoff=0.3)
    text = takeaway(paired, ranks, cutoff=0.3, reference="two-model", n_boot=100)
    fig = small_figure()
    before = copy.deepcopy(fig.to_dict())
    deciles = {name: [uplift_by_decile(y, t, s), small_figure()] for name, s in scores.items()}
    page = comparison_report(
        "UpRank comparison", takeaway=text,
        dataset=data, srm=srm_test(t), figures=[("Test-set curves", fig)],
        auuc=table, paired=paired, ranks=ranks,
        depth=targeting_summary(y, t, scores, cost_per_treatment=0.1, value_per_response=10),
        deciles=deciles, configs={k: c.to_dict() for k, c in run_configs().items()},
        cutoff=0.3, n_boot=100, notes={"auuc": "One split.", "Pooling": "Not pooled."},
        generated_at="2024-01-02 03:04")
    return {"page": page, "fig": fig, "before": before, "data": data, "text": text,
            "paired": paired, "table": table}


def tables(page: str) -> list[str]:
    return re.findall(r"<table.*?</table>", page, flags=re.DOTALL)


def cells(table: str) -> list[str]:
    return [html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", table,
                                                                      re.DOTALL)]


def newplot_layouts(page: str) -> list[dict]:
    """The layout argument of every Plotly.newPlot(id, data, layout, config) call."""
    decoder = json.JSONDecoder()
    layouts = []
    for m in re.finditer(r"Plotly\.newPlot\(\s*", page):
        pos, args = m.end(), []
        for _ in range(3):
            value, pos = decoder.raw_decode(page, pos)
            args.append(value)
            pos = page.index(",", pos) + 1
            while page[pos].isspace():
                pos += 1
        layouts.append(args[2])
    return layouts


def test_sections_appear_in_order_and_notes_last(comparison):
    page = comparison["page"]
    positions = [page.index(f"<h2>{h}</h2>") for h in HEADINGS]
    assert positions == sorted(positions)
    assert page.index("<h2>Notes</h2>") > positions[-1]
    assert "<dt>Pooling</dt><dd>Not pooled.</dd>" in page
    auuc_section = page[positions[3]:positions[4]]
    assert "<p>One split.</p>" in auuc_section  # a note under its section


def test_takeaway_section_holds_the_takeaway(comparison):
    page, text = comparison["page"], comparison["text"]
    start = page.index("<h2>Takeaway</h2>")
    assert page.index(f"<p>{html.escape(text)}</p>") > start
    assert page.index(f"<p>{html.escape(text)}</p>") < page.index("<h2>Dataset</h2>")


def test_dataset_counts_shares_and_srm_verdict(comparison):
    page, data = comparison["page"], comparison["data"]
    n, n_t = len(data.t), int(data.t.sum())
    section = page[page.index("<h2>Dataset</h2>"):page.index("<h2>Curves</h2>")]
    body = cells("".join(tables(section)))
    assert f"{n:,}" in body and f"{n_t:,}" in body and f"{n - n_t:,}" in body
    assert f"{n_t / n * 100:.1f} %" in body
    rate_t = data.y[data.t == 1].mean()
    assert f"{rate_t * 100:.1f} %" in body
    assert html.escape(srm_test(data.t).attrs["verdict"]) in section


def test_auuc_and_paired_tables(comparison):
    page, table, paired = comparison["page"], comparison["table"], comparison["paired"]
    section = page[page.index("<h2>AUUC with intervals</h2>"):
                   page.index("<h2>Definition sensitivity</h2>")]
    auuc_table, paired_table = tables(section)
    row = table[(table["ranker"] == "LambdaMART") & np.isclose(table["cutoff"], 0.3)].iloc[0]
    body = cells(auuc_table)
    assert f"{row['auuc']:.4f}" in body
    assert f"{row['ci_low']:.4f} to {row['ci_high']:.4f}" in body
    assert "—" in body  # the baseline's missing interval
    header = cells(paired_table)
    assert header[1] == "verdict"  # first column after the index
    p = paired[np.isclose(paired["cutoff"], 0.3)].iloc[0]
    assert p["verdict"] in cells(paired_table)
    assert f"{p['difference']:.4f}" in cells(paired_table)
    assert "Paired tests against two-model" in section


def test_no_nan_text_in_any_table(comparison):
    for table in tables(comparison["page"]):
        assert not any(c.strip().lower() in {"nan", "none", "<na>"} for c in cells(table))


def test_figures_get_automargin_and_fill_the_width_without_mutating_the_caller(comparison):
    page, fig = comparison["page"], comparison["fig"]
    layouts = newplot_layouts(page)
    assert len(layouts) == 3  # curves + one chart per run in Deciles
    for layout in layouts:
        assert layout["xaxis"]["automargin"] is True
        assert layout["yaxis"]["automargin"] is True
        assert layout["margin"]["l"] >= 60
        assert "width" not in layout
    assert page.count("* plotly.js v") == 1
    assert fig.to_dict() == comparison["before"]
    assert fig.layout.yaxis.automargin is None and fig.layout.margin.l == 10


def test_html_report_can_embed_figures_unchanged():
    fig = small_figure()
    page = html_report("t", sections=[("f", fig)], fit_figures=False)
    (layout,) = newplot_layouts(page)
    assert "automargin" not in layout.get("yaxis", {}) and layout["margin"]["l"] == 10


def test_html_report_lists_and_subsections():
    page = html_report("t", sections=[("Deciles", [("run <a>", [pd.DataFrame({"x": [1]}),
                                                                  go.Figure()]),
                                                     "closing words"])])
    assert "<h3>run &lt;a&gt;</h3>" in page
    assert page.index("<h3>") < page.index("<table") < page.index("Plotly.newPlot") \
        < page.index("<p>closing words</p>")
    with pytest.raises(ValueError, match=r"sections\[0\] content must be a DataFrame"):
        html_report("t", sections=[("x", [3])])


def test_config_table_flattens_a_real_run_config():
    configs = run_configs()
    table = config_table({k: c.to_dict() for k, c in configs.items()})
    lm, tm = configs["LambdaMART"], configs["two-model"]
    assert list(table.index) == ["LambdaMART", "two-model"]
    assert list(table.columns) == ["model", "learning_rate", "n_estimators", "C", "params.seed",
                                   "dataset", "options.n", "scheme", "test size", "repeats",
                                   "seed", "data fingerprint"]
    row = table.loc["LambdaMART"]
    assert row["model"] == lm.model
    assert row["learning_rate"] == lm.params_dict["learning_rate"]
    assert row["n_estimators"] == lm.params_dict["n_estimators"]
    assert row["dataset"] == lm.dataset and row["options.n"] == lm.options_dict["n"]
    assert (row["scheme"], row["test size"], row["repeats"], row["seed"]) == \
        (lm.scheme, lm.test_size, lm.n_repeats, lm.seed)
    assert row["data fingerprint"] == lm.fingerprint[:12]
    assert np.isnan(row["C"])  # a setting this run does not have
    other = table.loc["two-model"]
    assert other["params.seed"] == tm.params_dict["seed"] and other["seed"] == tm.seed
    assert other["dataset"] == "upload or file" and other["repeats"] == 1
    # RunConfig objects are accepted as they are
    pd.testing.assert_frame_equal(config_table(configs), table)


def test_config_table_in_the_report_is_readable(comparison):
    page = comparison["page"]
    section = page[page.index("<h2>Run configurations</h2>"):page.index("<h2>Notes</h2>")]
    (table,) = tables(section)
    body = cells(table)
    assert "learning_rate" in body and "0.05" in body and "300" in body and "—" in body
    assert "{" not in "".join(body)  # no JSON blobs


def test_dataset_summary_counts():
    y = np.array([1, 0, 0, 1, 0, 1, 1])
    t = np.array([1, 1, 1, 0, 0, 0, 1])
    out = dataset_summary(y, t)
    n_t, n_c = (t == 1).sum(), (t == 0).sum()
    assert out["rows"].tolist() == [n_t, n_c, len(t)]
    assert out["responders"].tolist() == [y[t == 1].sum(), y[t == 0].sum(), y.sum()]
    np.testing.assert_allclose(out["outcome_rate"], [y[t == 1].mean(), y[t == 0].mean(),
                                                     y.mean()])
    np.testing.assert_allclose(out["share"], [n_t / len(t), n_c / len(t), 1.0])
    with pytest.warns(UserWarning, match="outcome rate of control is undefined"):
        assert np.isnan(dataset_summary([1, 0], [1, 1]).loc["control", "outcome_rate"])
    # one wording for a treatment that does not fit its outcome, as every other function says
    with pytest.raises(ValueError, match=r"^t must have the same length as y \(7\); got 6\.$"):
        dataset_summary(y, t[:-1])


def test_report_without_bootstrap_and_with_dict_dataset():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = comparison_report("t", takeaway="Only point estimates.",
                                 dataset={"rows": 12345, "outcome rate": np.nan},
                                 auuc=pd.DataFrame({"AUUC@30%": [0.0312, np.nan]},
                                                   index=["A", "B"]))
    assert "The paired bootstrap was not run" in page
    assert ">12,345<" in page and ">0.0312<" in page
    assert all(">nan<" not in t for t in tables(page))
    for heading in HEADINGS:
        assert f"<h2>{heading}</h2>" in page


@pytest.mark.parametrize("kwargs, match", [
    ({"takeaway": 3}, "takeaway must be a string"),
    ({"figures": [("curves", "not a figure")]}, r"figures\[0\] must be a \(heading"),
    ({"auuc": [1, 2]}, "auuc must be a DataFrame or None"),
    ({"dataset": 5}, "dataset must be None, a DataFrame, a dict or data with y and t"),
    ({"deciles": {"A": 3}}, r"deciles\['A'\] must be a DataFrame"),
    ({"configs": {"A": 3}}, r"configs\['A'\] must be a RunConfig"),
])
def test_comparison_report_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        comparison_report("t", **{"takeaway": "x", **kwargs})


# --------------------------------------------------------------------- assumptions and configs
def _section(page: str, heading: str, following: str) -> str:
    return page[page.index(f"<h2>{heading}</h2>"):page.index(f"<h2>{following}</h2>")]


@pytest.fixture(scope="module")
def profit_report():
    from core.evaluation.across_splits import TestSplit, profit_over_splits

    rng = np.random.default_rng(11)
    n_rows, n_test = 3000, 900
    x = rng.normal(size=n_test)
    t = rng.integers(0, 2, n_test)
    y = (rng.random(n_test) < 0.1 + 0.1 * t * (x > 0)).astype(int)
    split = TestSplit(y, t, {"model": x, "coin": rng.random(n_test)})
    depth = profit_over_splits([split], cost_per_treatment=0.25, value_per_response=7.5,
                               n_boot=100, random_state=0).summary()
    page = comparison_report("t", takeaway="x", depth=depth, assumptions=dict(
        cost_per_treatment=0.25, value_per_response=7.5, test_rows=n_test, n_rows=n_rows))
    return page, depth, n_test, n_rows


def test_targeting_value_states_cost_value_and_the_test_customers(profit_report):
    page, _, n_test, n_rows = profit_report
    section = html.unescape(_section(page, "Targeting value", "Deciles"))
    assert "a cost of 0.25 per treated customer and a value of 7.5 per response" in section
    assert (f"held-out test customers only: {n_test:,} customers "
            f"({n_test / n_rows * 100:.1f} % of the {n_rows:,} rows), on one test split") \
        in section
    assert "Profit = incremental value − cost" in section
    # the two ranges are explained after the table
    assert section.index("</table>") < section.index("Two different ranges")


def test_targeting_value_gives_each_runs_depth_verdict_before_the_table(profit_report):
    page, depth, _, _ = profit_report
    section = html.unescape(_section(page, "Targeting value", "Deciles"))
    for name, verdict in depth["verdict"].items():
        assert f"{name}: {verdict}" in section
        assert section.index(verdict) < section.index("<table")
    assert "verdict" not in cells(tables(_section(page, "Targeting value", "Deciles"))[0])


def test_a_value_column_and_unrecorded_assumptions_are_said():
    depth = pd.DataFrame({"best_fraction": [0.3], "best_profit": [12.0]}, index=["A"])
    page = html.unescape(comparison_report("t", takeaway="x", depth=depth, assumptions=dict(
        cost_per_treatment=1.5, value_column="spend", test_rows=19_200, n_rows=64_000,
        n_splits=3)))
    assert ("a cost of 1.5 per treated customer and each customer's value taken from the "
            'column "spend"') in page
    assert "19,200 customers (30.0 % of the 64,000 rows), in each of 3 test splits" in page
    unknown = html.unescape(comparison_report("t", takeaway="x", depth=depth))
    assert "cost per treatment and the value per response behind these profits were not " \
           "recorded" in unknown


def test_config_table_names_an_uploaded_file_and_its_columns():
    cfg = RunConfig(FP, "two-model", {"C": 1.0}).to_dict()  # dataset None: uploaded data
    source = {"treatment": "group", "outcome": "bought", "treatment_value": "promo",
              "control_value": None}
    table = config_table({"A": cfg}, data_name="spring_promo.csv", source_columns=source)
    row = table.loc["A"]
    assert row["dataset"] == "spring_promo.csv"
    assert (row["treatment column"], row["treated value"], row["outcome column"]) == \
        ("group", "promo", "bought")
    assert "control value" not in table.columns  # not given
    cols = list(table.columns)
    assert cols.index("dataset") < cols.index("treatment column") < cols.index("scheme")
    page = comparison_report("t", takeaway="x", configs=table)
    body = cells(tables(page)[0])
    assert "spring_promo.csv" in body and "upload or file" not in body


def test_typed_amounts_are_never_written_in_e_notation():
    """A cost of 0.0000125 and a value of 1,500,000 (the page accepts up to 1e9) read as typed
    (Python's 'g' format wrote 1.25e-05 and 1.5e+06), in the report and the several-arms
    cost sentence."""
    from core.runs.multiarm_runs import cost_sentence
    from core.runs.report import profit_assumptions

    text = profit_assumptions(cost_per_treatment=1.25e-5, value_per_response=1_500_000)
    assert "0.0000125" in text and "1,500,000" in text and "e-0" not in text
    assert "e+0" not in text
    assert "2,500,000" in cost_sentence(["control", "a"], [2_500_000])


def test_a_small_report_loads_plotly_from_its_cdn_and_keeps_the_content():
    """plotly_js="cdn": the same sections, one <script> from plotly's CDN instead of 4.8 MB of
    plotly.js inline (the inline file carries plotly.js's own source)."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    sections = [("Curves", [fig, go.Figure(go.Bar(x=["a"], y=[1]))]), ("Note", "text")]
    inline = html_report("t", sections=sections)
    small = html_report("t", sections=sections, plotly_js="cdn")
    assert len(inline) > 3_000_000 and len(small) < 100_000
    assert small.count('src="https://cdn.plot.ly/') == 1
    assert 'src="https://cdn.plot.ly/' not in inline
    assert small.count('class="plotly-graph-div"') == 2 and "text" in small
    # said in the file itself: opened offline, its charts were empty white areas
    from core.runs.report import CDN_NOTE

    assert html.escape(CDN_NOTE) in small and html.escape(CDN_NOTE) not in inline
    assert html.escape(CDN_NOTE) not in html_report("t", sections=[("Note", "text")],
                                                     plotly_js="cdn")  # no chart, no note
    with pytest.raises(ValueError, match="plotly_js"):
        html_report("t", sections=sections, plotly_js="online")


def test_a_table_with_a_named_index_has_one_header_row_with_that_name_in_its_corner():
    # pandas writes a named index as a second header row, empty but for the name
    import re

    frame = pd.DataFrame({"AUUC@30%": ["0.0041", "0.0032"]},
                         index=pd.Index(["A", "B"], name="run"))
    html = html_report("t", sections=[("AUUC", frame)], generated_at="now",
                       plotly_js="cdn")
    head = html[html.index("<thead>"):html.index("</thead>")]
    assert re.findall(r"<th[^>]*>(.*?)</th>", head) == ["run", "AUUC@30%"]
    assert head.count("<tr") == 1
    assert frame.index.name == "run" and frame.columns.name is None  # the caller's frame kept


def test_a_titled_figure_is_headed_by_its_title_and_an_untitled_one_by_its_heading():
    titled = small_figure().update_layout(title="Test-set curves — Qini")
    page = comparison_report("t", takeaway="x", figures=[("Test-set curves", titled),
                                                         ("Profit by depth", small_figure())])
    curves = page[page.index("<h2>Curves</h2>"):page.index("<h2>AUUC")]
    assert "<h3>Test-set curves</h3>" not in curves  # the chart's own title says it
    assert curves.count("Test-set curves") == 1  # the title, in the figure's JSON
    assert [lay.get("title", {}).get("text") for lay in newplot_layouts(curves)] == [
        "Test-set curves — Qini", None]
    assert curves.count("<h3>Profit by depth</h3>") == 1
    assert curves.count("Plotly.newPlot") == 2


@pytest.mark.parametrize("least, difference, interval", [
    # shares of an arm: two significant digits of the difference (the page's -0.00018)
    (4, "-0.00018", "-0.00211 to 0.00163"),
    # counts of responders: the narrowest interval, 2.4 wide, needs one decimal
    (1, "-3.2", "-4.4 to -2.0"),
])
def test_the_paired_table_has_the_pages_decimals(least, difference, interval):
    d, lo, hi = ((-0.00018, -0.00211, 0.00163) if least == 4 else (-3.2, -4.4, -2.0))
    paired = pd.DataFrame({"ranker": ["B"], "reference": ["A"], "cutoff": [0.3],
                           "difference": [d], "ci_low": [lo], "ci_high": [hi],
                           "p_value": [0.908], "verdict": ["not distinguishable"]})
    page = comparison_report("t", takeaway="x", paired=paired, cutoff=0.3, least=least)
    body = cells(tables(page[page.index("<h2>AUUC with intervals</h2>"):])[0])
    assert body[body.index("not distinguishable") + 1:][:2] == [difference, interval]


def test_a_long_auuc_table_takes_the_decimals_of_its_smallest_value():
    # a rare outcome: 0.000048 beside 0.0012 (fmt_auuc's fixed 4 decimals wrote 0.0000)
    long = pd.DataFrame({"ranker": ["A", "A", "B", "B"], "cutoff": [0.1, 1.0, 0.1, 1.0],
                         "auuc": [0.000048, 0.0012, 0.000031, 0.0011],
                         "ci_low": [0.00001, 0.0009, 0.0, 0.0008],
                         "ci_high": [0.00009, 0.0015, 0.00007, 0.0014]})
    page = comparison_report("t", takeaway="x", auuc=long)
    body = cells(tables(page[page.index("<h2>AUUC with intervals</h2>"):])[0])
    assert body[body.index("A") + 1:][:4] == ["0.000048", "0.000010 to 0.000090", "0.001200",
                                              "0.000900 to 0.001500"]
