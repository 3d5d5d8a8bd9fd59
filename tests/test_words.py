"""Words a stakeholder understands on the Curves, Definitions and Glossary pages: definitions
by plain name (id small), tooltips from the glossary, readable numbers, Perfect off by default."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from _apptest import assert_clean
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from core.evaluation.curve_tables import PERFECT, RANDOM
from core.evaluation.curves import DEFINITIONS
from ui.glossary import GLOSSARY

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LABELS = [f"{d.kind.capitalize()} curve, {d.setting}, {d.units} ({name})"
          for name, d in DEFINITIONS.items()]


def run_page(page: str) -> AppTest:
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run(), "app start")
    return assert_clean(at.switch_page(page).run(), page)


def figure(at: AppTest, i: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def shown(at: AppTest, i: int = 0):
    """The table as displayed (the Styler's formatted strings)."""
    return convert_arrow_bytes_to_pandas_df(at.dataframe[i].proto.arrow_data.styler.display_values)


def test_labels_are_the_plain_names_with_their_ids():
    assert LABELS[3] == "Uplift curve, separate, relative (uplift_sep_rel)"
    assert [d.label for d in DEFINITIONS.values()] == LABELS


def test_every_model_on_the_train_page_is_explained_in_its_pickers_help():
    from core.models import MODELS

    at = run_page("pages/train.py")
    picker = at.multiselect(key="train_models")
    assert picker.options == list(MODELS)
    for label in MODELS:  # "Dummy treatment (Lo 2002)" -> the glossary's "Dummy treatment"
        name = label.split(" (")[0]
        entry = GLOSSARY["LambdaMART" if name == "LambdaMART uplift" else name]
        assert f"**{name}**: {entry}" in picker.help, label


def test_curves_page_names_definitions_and_explains_its_widgets():
    at = run_page("pages/curves.py")
    box = at.selectbox(key="curves_definition")
    assert box.options == LABELS
    assert box.help == GLOSSARY["Definition"]
    assert at.slider(key="curves_cutoff").help == GLOSSARY["Cut-off"]
    assert at.multiselect(key="curves_rankers").help == GLOSSARY["Ranker"]
    assert at.toggle(key="curves_random").help == GLOSSARY["Random / Perfect"]
    assert at.toggle(key="curves_perfect").help == GLOSSARY["Random / Perfect"]
    assert at.radio(key="curves_ties").help
    assert at.toggle(key="curves_perfect").value is False  # Perfect is off by default
    fig = figure(at)
    assert PERFECT not in [t["name"] for t in fig["data"]]
    first = at.selectbox(key="curves_definition").value  # the app-wide default
    assert first == "uplift_sep_rel"
    assert fig["layout"]["title"]["text"].startswith(DEFINITIONS[first].title)
    assert f"({first})" in fig["layout"]["title"]["text"]
    assert fig["layout"]["xaxis"]["title"]["text"] == "share targeted (%)"
    assert "share of arm" in fig["layout"]["yaxis"]["title"]["text"]

    assert_clean(box.set_value("qini_sep_abs").run(), "qini_sep_abs")
    fig = figure(at)
    assert fig["layout"]["title"]["text"].startswith("Qini curve, separate, absolute")
    assert "responders" in fig["layout"]["yaxis"]["title"]["text"]
    table = shown(at)
    value = table.loc[RANDOM, "AUUC@100%"]  # responders: one decimal, thousands separated
    assert len(value.split(".")[1]) == 1
    raw = at.dataframe[0].value.loc[RANDOM, "AUUC@100%"]
    assert value == f"{raw:,.1f}"

    assert_clean(at.toggle(key="curves_perfect").set_value(True).run(), "perfect on")
    assert PERFECT in [t["name"] for t in figure(at)["data"]]


def test_curves_page_keeps_two_significant_digits_of_a_rare_outcomes_auuc(shared_data):
    # Hillstrom womens, conversion (0.6 % of customers): AUUC@10 % is ~2e-5 of an arm, which
    # five decimals print as "0.00002"; the table takes the decimals that give the smallest
    # value two significant digits (at most seven)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"dataset": "hillstrom", "arm": "womens", "outcome": "conversion"})
    assert_clean(at.run())
    assert_clean(at.switch_page("pages/curves.py").run())
    table, raw = shown(at), at.dataframe[0].value
    values = np.abs(raw.to_numpy(dtype=float))
    smallest = values[np.isfinite(values) & (values > 0)].min()
    digits = min(7, max(5, 1 - int(np.floor(np.log10(smallest)))))
    assert digits > 5  # the case this is about
    for row in raw.index:
        for col in raw.columns:
            if np.isfinite(raw.loc[row, col]):
                assert table.loc[row, col] == f"{raw.loc[row, col]:.{digits}f}", (row, col)
    significant = f"{smallest:.{digits}f}".replace(".", "").lstrip("0")
    assert len(significant) >= 2  # "0.000017", not "0.00002"


def test_curves_page_relative_auuc_has_five_decimals_and_a_dash_for_missing():
    at = run_page("pages/curves.py")
    table, raw = shown(at), at.dataframe[0].value
    ranker = next(name for name in raw.index if name != RANDOM)
    for col in raw.columns:
        assert table.loc[ranker, col] == f"{raw.loc[ranker, col]:.5f}"
    for col in [c for c in raw.columns if c.startswith("AUUC@")]:
        assert table.loc[RANDOM, col] == f"{raw.loc[RANDOM, col]:.5f}"
    above = "above random @30%"
    assert table.loc[RANDOM, above] == "—"  # Random against itself: nothing to show
    assert at.dataframe[0].proto.placeholder == "—"  # the browser draws nulls with this
    assert abs(raw.loc[ranker, above] - (raw.loc[ranker, "AUUC@30%"]
                                         - raw.loc[RANDOM, "AUUC@30%"])) < 1e-12


#: What V counts, read off each formula of SPEC.md / the paper's Table 2, written out per
#: definition (not through the rule the code uses)
UNIT = {
    "uplift_joint_rel": "share of arm",            # R^T/|T| − R^C/|C|
    "qini_joint_abs": "incremental responders",    # R^T − R^C · N^T/N^C
    "uplift_joint_abs": "rate difference × rows",  # (R^T/N^T − R^C/N^C) · (N^T + N^C)
    "uplift_sep_rel": "share of arm",              # R(T)/|T| − R(C)/|C|
    "uplift_sep_abs": "difference in responders",  # R(T) − R(C)
    "qini_sep_abs": "incremental responders",      # R(T) − R(C) · |T|/|C|
}


def test_definitions_page_names_panels_rows_and_units():
    at = run_page("pages/definitions.py")
    assert at.number_input(key="defs_n").help and at.radio(key="defs_ties").help
    fig = figure(at)
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    for i, (name, d) in enumerate(DEFINITIONS.items()):
        assert titles[i].startswith(d.title) and f"({name})" in titles[i]
        axis = "" if i == 0 else str(i + 1)
        assert fig["layout"][f"xaxis{axis}"]["title"]["text"] == "share targeted (%)"
        assert UNIT[name] in fig["layout"][f"yaxis{axis}"]["title"]["text"]
    assert PERFECT not in " ".join(t["name"] for t in fig["data"])

    raw, table = at.dataframe[0].value, shown(at)
    assert at.dataframe[0].proto.placeholder == "—"
    assert list(raw.index) == LABELS
    for label, d in zip(LABELS, DEFINITIONS.values()):
        for case in raw.columns[:3]:
            expected = (f"{raw.loc[label, case]:.5f}" if d.units == "relative"
                        else f"{raw.loc[label, case]:,.1f}")
            assert table.loc[label, case] == expected
        assert table.loc[label, "swing"] == f"{raw.loc[label, 'swing']:.1%}"
        assert raw.loc[label, "unit"] == UNIT[d.name]


def test_glossary_page_lists_every_term_sorted_and_filters():
    at = run_page("pages/glossary.py")
    assert at.title[0].value == "Glossary"
    entries = [m.value for m in at.markdown]
    terms = [e.split("**")[1] for e in entries if e.startswith("**")]
    assert terms == sorted(GLOSSARY, key=str.lower)
    for term in GLOSSARY:
        assert any(GLOSSARY[term] in e for e in entries if e.startswith(f"**{term}**")), term

    assert_clean(at.text_input(key="glossary_search").input("random").run(), "search")
    found = [m.value.split("**")[1] for m in at.markdown if m.value.startswith("**")]
    expected = [t for t in sorted(GLOSSARY, key=str.lower)
                if "random" in t.lower() or "random" in GLOSSARY[t].lower()]
    assert found == expected and 0 < len(found) < len(GLOSSARY)

    assert_clean(at.text_input(key="glossary_search").input("no such term zzz").run())
    assert not [m for m in at.markdown if m.value.startswith("**")]
    assert "No term matches" in at.info[0].value
