"""AppTest smoke and flow tests: every page renders without an error or exception, bad input
shows its message (never a traceback), and the main flows work end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _apptest import assert_clean, assert_only_error
from streamlit.testing.v1 import AppTest

from core import data as datasets

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT = 60


def run_page(page: str | None = None) -> AppTest:
    at = assert_clean(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app start")
    if page:
        assert_clean(at.switch_page(page).run(), page)
    return at


def texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


def test_data_page_shows_default_world_with_srm_and_balance():
    at = run_page()
    assert "Uplift world" in texts(at.subheader)
    assert "No sample ratio mismatch" in texts(at.success)
    assert len(at.dataframe) >= 3  # SRM table, balance table, preview
    import pandas as pd

    from core.data import hygiene

    balance = next(d.value for d in at.dataframe if "smd" in d.value.columns)
    data = at.session_state["data"]
    expected = hygiene.covariate_balance(data.X, data.t)
    # a numeric feature by its name (no "None"), a level of a text feature as "feature = level"
    assert list(balance["feature"]) == [f if pd.isna(lvl) else f"{f} = {lvl}" for f, lvl in
                                        zip(expected["feature"], expected["level"])]
    np.testing.assert_allclose(balance["smd"], expected["smd"])
    # means stay numbers (they sort) shown with four significant digits: "localized" printed
    # at most 3 decimals, so a standardised feature's mean of -0.0001 read "-0"
    import json

    table = next(d for d in at.dataframe if "smd" in d.value.columns)
    config = json.loads(table.proto.columns)
    for column in ("mean_treated", "mean_control"):
        np.testing.assert_allclose(balance[column], expected[column])
        assert config[column]["type_config"] == {"type": "number", "format": "%.4g"}


def test_data_page_srm_against_a_wrong_design_is_a_plain_warning_not_an_error():
    at = run_page()
    assert at.number_input(key="data_share").value == 0.5  # the world treats with p = 1/2
    assert_clean(at.number_input(key="data_share").set_value(0.9).run())
    warning = texts(at.warning)
    assert "not split as designed" in warning and "where 90% was planned" in warning
    assert "Sample ratio mismatch: 10,082 treated vs 9,918 control" in warning


def test_data_page_bad_upload_shows_error_not_exception():
    at = run_page()
    at.file_uploader(key="data_upload").set_value(("bad.csv", b"", "text/csv")).run()
    assert_only_error(at, "empty")


def test_data_page_upload_ragged_csv_names_the_line():
    at = run_page()
    content = b"treatment,outcome,x\n1,0,3\n0,1,4,5\n1,1,2\n"
    at.file_uploader(key="data_upload").set_value(("ragged.csv", content, "text/csv")).run()
    assert_only_error(at, "Line 3 has 4 fields but the header has 3")


def test_data_page_upload_then_use_csv(rng):
    import numpy as np

    n = 400
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.2 + 0.1 * t).astype(int)
    rows = "\n".join(f"{a};{b};{c:.3f}" for a, b, c in zip(t, y, rng.normal(size=n)))
    content = ("group;converted;score\n" + rows + "\n").encode()
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("mine.csv", content, "text/csv")).run())
    assert at.selectbox(key="data_treatment").value == "group"
    assert at.selectbox(key="data_outcome").value == "converted"
    assert_clean(at.button(key="data_use_csv").click().run())
    assert "mine" in texts(at.subheader)
    assert np.isclose(float(at.metric[0].value.replace(",", "")), n)


def _balance_columns(at) -> list[str]:
    """The columns the Data page's balance table shows, in their order."""
    [table] = [d for d in at.dataframe if "smd" in d.value.columns]
    return list(table.proto.column_order)


def test_balance_table_leads_with_the_smd_and_shows_missing_shares_only_when_some(rng):
    at = run_page()  # the default world has no missing value
    assert _balance_columns(at)[:3] == ["feature", "smd", "imbalanced"]
    # a text feature's level is named in the feature's cell, as the several arms' table does
    [table] = [d.value for d in at.dataframe if "smd" in d.value.columns]
    world = at.session_state["data"]
    channels = sorted(world.X["channel"].astype(str).unique())
    assert [f for f in table["feature"] if f.startswith("channel")] == [
        f"channel = {c}" for c in channels]
    assert not any(c.startswith("missing") for c in _balance_columns(at))
    n = 400
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.2).astype(int)
    x = ["" if i % 10 == 0 else f"{v:.3f}" for i, v in enumerate(rng.normal(size=n))]
    content = ("group;converted;age\n" + "\n".join(
        f"{a};{b};{c}" for a, b, c in zip(t, y, x)) + "\n").encode()
    at.file_uploader(key="data_upload").set_value(("gaps.csv", content, "text/csv")).run()
    assert_clean(at.button(key="data_use_csv").click().run())
    assert _balance_columns(at)[-2:] == ["missing_treated", "missing_control"]


def test_a_listed_dataset_is_one_shared_read_only_object():
    """Every session gets the same object (no 0.8 GB copy per session at 14M rows); writing
    into its arrays fails instead of changing the data of the other sessions."""
    from ui import common

    options = (("n", 10_000), ("outcome", "binary"), ("random_state", 1))
    shared = common.load_benchmark("multiarm_world", options)
    assert common.load_benchmark("multiarm_world", options) is shared
    fresh = datasets.load_dataset("multiarm_world", **dict(options))
    assert np.array_equal(shared.y, fresh.y) and shared.X.equals(fresh.X)
    for array in (shared.y, shared.t, shared.tau, shared.multiarm.t, shared.multiarm.y):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0


def test_benchmark_switch_to_paper_simulation():
    at = run_page()
    assert_clean(at.selectbox(key="data_key").set_value("paper_simulation").run())
    assert_clean(at.button(key="data_load").click().run())
    assert "simulation" in texts(at.subheader).lower()


@pytest.mark.parametrize("key", list(datasets.DATASETS))
def test_every_dataset_option_is_named_in_words_not_code(key):
    """A box of the Data page reads "Rows" or "Seed", never a loader's argument name."""
    at = run_page()
    at.selectbox(key="data_key").set_value(key).run()
    for name in datasets.DATASETS[key].options:
        label = at.selectbox(key=f"data_{key}_{name}").label
        assert label == datasets.OPTION_NAMES[name]
        assert "_" not in label and label[0].isupper() and label not in ("N", "n")


def test_curves_page_default_and_every_definition():
    from core.evaluation.curves import DEFINITIONS

    at = run_page("pages/curves.py")
    table = at.dataframe[0].value
    assert "AUUC@30%" in table.columns and "Random targeting" in table.index
    for definition in DEFINITIONS:  # options show labels; set_value takes the id
        assert_clean(at.selectbox(key="curves_definition").set_value(definition).run(),
                     definition)
    assert_clean(at.slider(key="curves_cutoff").set_value(10).run())
    assert "AUUC@10%" in at.dataframe[0].value.columns
    # the ranker names' column is as wide as label_width says for the longest name ("Random
    # ranker (seed 0)" was cut to "Random ranker (see" at 1,400 px)
    import json

    from ui.charts import label_width

    assert_clean(at.multiselect(key="curves_rankers").set_value(
        ["Random ranker (seed 0)"]).run())
    names = list(at.dataframe[0].value.index)
    assert "Random ranker (seed 0)" in names
    width = json.loads(at.dataframe[0].proto.columns)["_index"]["width"]
    assert width == label_width(["Random ranker (seed 0)"]) == 189  # 22 characters

def test_curves_of_a_carried_score_follow_the_score_not_only_the_rows():
    """Two files with the same rows and an 'uplift' column scored again by a new model: the
    scores are not in the data's fingerprint, and Curves showed the first file's AUUC."""
    from core.data import ABData
    from core.evaluation import auuc_table

    rng = np.random.default_rng(5)
    n = 2_000
    X = pd.DataFrame({"x": rng.random(n)})
    y, t = rng.integers(0, 2, n), rng.integers(0, 2, n)
    first, second = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    at = AppTest.from_file(str(Path(APP).parent / "pages" / "curves.py"),
                           default_timeout=TIMEOUT)
    at.session_state["curves_rankers"] = ["uplift"]
    for score in (first, second):
        data = ABData(X=X, y=y, t=t, scores={"uplift": score}, name="rescored.parquet")
        at.session_state["data"] = data
        assert_clean(at.run())
        shown = at.dataframe[0].value
        want = auuc_table(y, t, score.astype(np.float64))
        assert shown.loc["uplift", "AUUC@30%"] == pytest.approx(
            want.loc["uplift_sep_rel", "AUUC@30%"], rel=1e-9)
    assert ABData(X=X, y=y, t=t, scores={"uplift": first}).fingerprint() == data.fingerprint()


def test_the_curves_auuc_download_is_the_table_on_screen(monkeypatch):
    # the CSV left out the table's "above random @30%" column
    from core.runs import export

    written = []
    original = export.safe_csv_bytes
    monkeypatch.setattr(export, "safe_csv_bytes",
                        lambda frame, **kw: written.append(frame) or original(frame, **kw))
    at = run_page("pages/curves.py")
    shown = at.dataframe[0].value
    [csv] = [f for f in written if "AUUC@30%" in getattr(f, "columns", ())]
    assert "above random @30%" in csv.columns
    pd.testing.assert_frame_equal(csv, shown, check_dtype=False)


def test_curves_page_oracle_beats_random_on_world():
    at = run_page("pages/curves.py")
    assert_clean(at.toggle(key="curves_perfect").set_value(True).run())
    table = at.dataframe[0].value
    oracle = table.loc["true effect τ(x)", "AUUC@100%"]
    assert oracle > table.loc["Random targeting", "AUUC@100%"]
    assert table.loc["Perfect (oracle)", "AUUC@100%"] > oracle


def test_definitions_page_renders_three_scenarios():
    at = run_page("pages/definitions.py")
    table = at.dataframe[0].value
    assert list(table.columns[:3]) == ["|T| = |C|", "|T| = 9|C|", "|C| = 9|T|"]
    assert len(table) == 6


@pytest.mark.parametrize("page", ["pages/data.py", "pages/curves.py", "pages/definitions.py",
                                  "pages/train.py", "pages/compare.py", "pages/interleaving.py"])
def test_every_page_renders(page):
    run_page(page)


PAGES = sorted(str(p.relative_to(Path(APP).parent))
               for p in (Path(APP).parent / "pages").glob("[!_]*.py"))

# Runs one page the way a fresh server runs the first URL it is asked for: in Streamlit's
# legacy multipage mode (file-name sidebar, no page config), which only app.py's
# st.navigation switches off.  The page must switch it off itself and rerun; the rerun stops
# here, before the page draws, so the test costs one partial run of each page.
LEGACY_FIRST_URL = """
import runpy
import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
if st.session_state.get("_test_legacy_set"):
    st.stop()
st.session_state["_test_legacy_set"] = True
PagesManager.uses_pages_directory = True
runpy.run_path({page!r}, run_name="__main__")
"""


@pytest.mark.parametrize("page", PAGES)
def test_every_page_leaves_the_legacy_pages_mode_when_its_url_comes_first(page):
    from streamlit.runtime.pages_manager import PagesManager

    path = str(Path(APP).parent / page)
    try:
        at = AppTest.from_string(LEGACY_FIRST_URL.format(page=path), default_timeout=TIMEOUT)
        assert not at.run().exception
        assert PagesManager.uses_pages_directory is False, f"{page} left the legacy mode on"
    finally:
        PagesManager.uses_pages_directory = None  # as AppTest leaves it for the next test


def test_data_page_asks_for_the_control_arm_only_when_two_codes_say_nothing(rng):
    """variant / control: coded without asking.  A / B: asked, A preselected as control (the
    A/B convention), also when A is the larger arm (it was taken as treated: the effect's
    sign flipped).  red / blue: nothing preselected, the file waits for the answer."""
    n = 200
    y = rng.integers(0, 2, n)
    for codes, p, preselected in ((("variant", "control"), None, None),
                                  (("A", "B"), [0.7, 0.3], "A"),
                                  (("red", "blue"), [0.7, 0.3], None)):
        arms = rng.choice(codes, n, p=p)
        body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(arms, y, rng.integers(0, 9, n)))
        at = run_page()
        assert_clean(at.file_uploader(key="data_upload").set_value(
            ("ab.csv", f"group,converted,age\n{body}\n".encode(), "text/csv")).run())
        asked = codes[0] != "variant"
        assert not any(s.key == "data_tv" for s in at.selectbox)  # two codes: one question
        assert any(s.key == "data_cv" for s in at.selectbox) == asked
        if asked:
            assert at.selectbox(key="data_cv").value == preselected
            assert at.button(key="data_use_csv").disabled == (preselected is None)
            assert_clean(at.selectbox(key="data_cv").set_value(codes[0]).run())
            assert f"Treated arm: **{codes[1]}**" in texts(at.markdown)
        assert_clean(at.button(key="data_use_csv").click().run())
        treated = codes[0] if codes[0] == "variant" else codes[1]
        assert at.metric[1].value == f"{int((arms == treated).sum()):,}"  # Treated
        rate = y[arms == treated].mean() - y[arms != treated].mean()
        assert at.metric[5].value == f"{100 * rate:+.2f} pp"  # the effect, its sign


def test_data_page_multi_arm_upload_offers_arms_and_reports_dropped_rows(rng):
    n = 300
    arms = rng.choice(["Womens E-Mail", "Mens E-Mail", "No E-Mail"], n)
    y = rng.integers(0, 2, n)
    body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(arms, y, rng.integers(0, 9, n)))
    content = ("segment,visit,recency\n" + body + "\n").encode()
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("three.csv", content, "text/csv")).run())
    assert at.radio(key="data_arms_segment").value == "all"  # all arms kept by default
    assert_clean(at.radio(key="data_arms_segment").set_value("two").run())
    assert set(at.selectbox(key="data_tv").options) == {"Womens E-Mail", "Mens E-Mail", "No E-Mail"}
    at.selectbox(key="data_tv").set_value("Womens E-Mail")
    assert_clean(at.selectbox(key="data_cv").set_value("No E-Mail").run())
    assert_clean(at.button(key="data_use_csv").click().run())
    kept = int(((arms == "Womens E-Mail") | (arms == "No E-Mail")).sum())
    assert at.metric[0].value == f"{kept:,}"
    assert str(n - kept) in texts(at.warning)


def test_data_page_keeps_all_arms_and_reads_an_amount(rng):
    n = 300
    arms = rng.choice(["Womens E-Mail", "Mens E-Mail", "No E-Mail"], n)
    spend = np.where(rng.random(n) < 0.3, rng.gamma(2.0, 20.0, n).round(2), 0.0)
    body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(arms, spend, rng.integers(0, 9, n)))
    content = ("segment,spend,recency\n" + body + "\n").encode()
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("three.csv", content, "text/csv")).run())
    at.selectbox(key="data_outcome").set_value("spend")
    assert_clean(at.run())
    assert at.radio(key="data_kind_spend").value == "continuous"  # detected
    assert at.selectbox(key="data_cv_all").value == "No E-Mail"  # the control arm found
    assert_clean(at.button(key="data_use_csv").click().run())
    table = next(d.value for d in at.dataframe if "assumed share" in d.value.columns)
    assert list(table.index) == ["No E-Mail", "Womens E-Mail", "Mens E-Mail"]
    for arm in table.index:
        assert table.loc[arm, "mean outcome"] == pytest.approx(spend[arms == arm].mean())
    assert "continuous" in texts(at.warning)  # the one-treatment pages use spend > 0
    # The override: read the amount as 0/1 is refused with the reason, nothing is lost.
    at.radio(key="data_kind_spend").set_value("binary")
    assert_clean(at.run())
    at.button(key="data_use_csv").click().run()
    assert "not a binary outcome" in texts(at.error)
    assert "assumed share" in at.dataframe[0].value.columns or any(
        "assumed share" in d.value.columns for d in at.dataframe)


def test_a_zero_one_outcome_with_a_few_other_values_is_named_with_its_rows(rng):
    # 0/1 with 2 in 3 of 400 rows was read as an amount without a word (2 a "response")
    n = 400
    y = rng.integers(0, 2, n)
    odd = np.sort(rng.choice(n, 3, replace=False))
    y[odd] = 2
    body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(rng.integers(0, 2, n), y,
                                                      rng.integers(0, 9, n)))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("odd.csv", ("treatment,converted,age\n" + body + "\n").encode(), "text/csv")).run())
    assert at.radio(key="data_kind_converted").value == "continuous"
    rows = ", ".join(str(i + 1) for i in odd)
    assert (f"except 2 (3 rows; data rows {rows}), so it is read as an amount"
            in texts(at.warning))
    assert_clean(at.radio(key="data_kind_converted").set_value("binary").run())
    assert "except 2" not in texts(at.warning)  # read as 0/1: the refusal says the rest


def test_an_amount_outcome_with_codes_a_and_b_preselects_a_as_control(rng):
    n = 300  # as for a 0/1 outcome (the amount's control box had nothing preselected)
    arms = rng.choice(["A", "B"], n, p=[0.7, 0.3])
    spend = np.where(rng.random(n) < 0.3, rng.gamma(2.0, 10.0, n).round(2), 0.0)
    body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(arms, spend, rng.integers(0, 9, n)))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("ab.csv", ("group,spend,age\n" + body + "\n").encode(), "text/csv")).run())
    assert at.radio(key="data_kind_spend").value == "continuous"
    assert at.selectbox(key="data_cv_all").value == "A"
    assert_clean(at.button(key="data_use_csv").click().run())
    assert at.metric[1].value == f"{int((arms == 'B').sum()):,}"  # Treated: B


def test_two_arms_of_an_amount_outcome_keep_those_arms_and_the_amounts_name(rng):
    """Three arms with revenue, 'compare two arms': the two arms' rows only (it kept all
    three, without a word), and the amount named as the file names it (it read 'outcome
    amount')."""
    n = 600
    arms = rng.choice(["control", "A", "B"], n)
    revenue = np.where(rng.random(n) < 0.2, rng.gamma(2.0, 10.0, n).round(2), 0.0)
    body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(arms, revenue, rng.integers(0, 9, n)))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("rev.csv", ("arm,revenue,age\n" + body + "\n").encode(), "text/csv")).run())
    at.selectbox(key="data_treatment").set_value("arm")
    at.selectbox(key="data_outcome").set_value("revenue")
    assert_clean(at.run())
    assert at.radio(key="data_kind_revenue").value == "continuous"
    assert_clean(at.radio(key="data_arms_arm").set_value("two").run())
    assert at.selectbox(key="data_cv").value == "control"  # it reads as control
    assert_clean(at.selectbox(key="data_tv").set_value("B").run())
    assert_clean(at.button(key="data_use_csv").click().run())
    kept = (arms == "B") | (arms == "control")
    assert at.metric[0].value == f"{int(kept.sum()):,}"
    assert at.metric[1].value == f"{int((arms == 'B').sum()):,}"
    assert f"Dropped {int((arms == 'A').sum())} rows" in texts(at.warning)
    labels = [m.label for m in at.metric]
    assert "revenue > 0, treated" in labels and "Mean revenue, treated" in labels
    data = at.session_state["data"]
    assert list(data.value_columns()) == ["revenue"]
    np.testing.assert_allclose(data.value_columns()["revenue"], revenue[kept])


# --------------------------------------------------------------------------- kept across reloads
HILLSTROM_PARAMS = {"dataset": "hillstrom", "arm": "womens", "outcome": "visit"}


def fresh(query_params: dict) -> AppTest:
    """A new browser session (a reload, a new tab, a shared link) opening the app's URL with
    ``query_params``."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query_params)
    return at.run()


def test_an_upload_without_a_design_gets_a_neutral_srm_note_until_one_is_typed():
    """59 % treated, no design: the test against the assumed 60 % passes, but is shown as a
    note saying the share was assumed — not a green all-clear; 50 % typed: the alarm."""
    rows = [f"{int(i < 590)},{i % 3 % 2},{i % 50}" for i in range(1000)]
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("srm.csv", ("treatment,visit,age\n" + "\n".join(rows) + "\n").encode(),
         "text/csv")).run())
    assert_clean(at.button(key="data_use_csv").click().run())
    assert at.number_input(key="data_share").value == 0.6
    assert "No sample ratio mismatch" not in texts(at.success)
    assert "consistent with a 60% treated share" in texts(at.info)
    assert "The planned share was not given" in texts(at.info)
    assert_clean(at.number_input(key="data_share").set_value(0.5).run())
    warning = texts(at.warning)
    assert "not split as designed: 59.0% of the rows are treated where 50% was planned" in (
        warning)
    assert warning.count("before trusting results") == 1


def test_a_link_with_hillstrom_reopens_it_on_every_page(shared_data):
    at = assert_clean(fresh(HILLSTROM_PARAMS), "reload")
    # the arms as the file and the three-arm data name them
    assert "Hillstrom — Womens E-Mail vs No E-Mail, visit" in texts(at.subheader)
    assert at.metric[0].value == "42,693"  # SOURCES.md: 21,387 womens + 21,306 no e-mail
    assert at.selectbox(key="data_key").value == "hillstrom"  # the boxes show it
    assert at.selectbox(key="data_hillstrom_arm").value == "womens"
    assert at.number_input(key="data_share").value == 0.5  # designed 50/50: no alarm
    assert "not split as designed" not in texts(at.warning)
    assert "No sample ratio mismatch" in texts(at.success)
    for page in ("pages/train.py", "pages/curves.py", "pages/data.py"):
        assert_clean(at.switch_page(page).run(), page)
        assert "Hillstrom" in texts(at.caption) + texts(at.subheader), page
        assert at.query_params == HILLSTROM_PARAMS, page  # the URL keeps naming it


def test_a_chosen_dataset_is_in_the_url_and_a_fresh_session_reopens_it():
    at = run_page()
    assert at.query_params == {"dataset": "world", "n": "20000", "random_state": "0"}
    at.selectbox(key="data_key").set_value("paper_simulation").run()
    at.selectbox(key="data_paper_simulation_scenario").set_value("more_treated")
    assert_clean(at.button(key="data_load").click().run())
    want = {"dataset": "paper_simulation", "scenario": "more_treated", "n": "10000",
            "random_state": "0"}
    assert at.query_params == want
    assert at.number_input(key="data_share").value == 0.9  # the scenario's design: no alarm
    again = assert_clean(fresh(at.query_params), "reload")
    assert "Paper simulation (|T| = 9|C|)" in texts(again.subheader)
    assert again.metric[1].value == "9,000"  # |T| = 0.9 · 10,000
    assert again.selectbox(key="data_paper_simulation_scenario").value == "more_treated"


def test_an_upload_is_stored_and_reopened_by_fingerprint_in_a_fresh_session(tmp_path):
    import os

    content = b"arm,bought,age\n" + b"".join(
        f"{i % 2},{int(i % 7 == 0)},{20 + i % 40}\n".encode() for i in range(500))
    at = run_page()
    at.file_uploader(key="data_upload").set_value(("shop test.csv", content, "text/csv")).run()
    assert_clean(at.button(key="data_use_csv").click().run())
    fingerprint = at.query_params["upload"]
    assert set(at.query_params) == {"upload"} and len(fingerprint) == 64
    folder = Path(os.environ["UPRANK_CACHE_DIR"]) / "uploads" / fingerprint
    assert (folder / "content.bin").read_bytes() == content
    again = assert_clean(fresh({"upload": fingerprint}), "reload")
    assert "shop test" in texts(again.subheader)
    assert [m.value for m in again.metric[:3]] == ["500", "250", "250"]
    # the assumed design (50 %, the observed share rounded) is said so, not alarmed about
    assert again.number_input(key="data_share").value == 0.5 and "assumed" in texts(again.caption)
    assert again.selectbox(key="data_stored").value == fingerprint  # offered for reopening


@pytest.mark.parametrize("params", [
    {"dataset": "nope"},
    {"dataset": "hillstrom", "arm": "kids"},
    {"dataset": "world", "n": "-1"},
    {"upload": "f" * 64},  # well formed, but nothing is stored under it
    {"upload": "../../etc/passwd"},
    {"upload": "a" * 64, "dataset": "world"},
])
def test_a_bad_link_warns_and_shows_the_default_dataset(params):
    at = assert_clean(fresh(params), str(params))
    assert "could not be opened" in texts(at.warning)
    assert "Uplift world" in texts(at.subheader)
    assert at.query_params == {"dataset": "world", "n": "20000", "random_state": "0"}
    assert_clean(at.run())
    assert "could not be opened" not in texts(at.warning)  # said once, not on every rerun


def _two_pages():
    """A tiny app: two widget sets on two "pages" (a radio), sharing the definition."""
    import streamlit as st

    from ui import common

    if st.radio("Page", ["curves", "compare"], key="page") == "curves":
        common.remember("c_def", "qini", shared=common.SHARED_DEFINITION,
                        options=["qini", "uplift", "lift"])
        st.selectbox("Definition", ["qini", "uplift", "lift"], key="c_def")
        common.remember("c_cut", 30, shared=common.SHARED_CUTOFF)
        st.slider("Cut-off", 5, 100, key="c_cut")
        common.remember("c_runs", ["a"], shared=common.SHARED_RUNS, options=["a", "b", "c"])
        st.multiselect("Runs", ["a", "b", "c"], key="c_runs")
    else:
        common.remember("m_def", "qini", shared=common.SHARED_DEFINITION,
                        options=["qini", "uplift"])  # no "lift" here
        st.selectbox("Definition", ["qini", "uplift"], key="m_def")
        common.remember("m_runs", [], shared=common.SHARED_RUNS, options=["b", "c", "d"])
        st.multiselect("Runs", ["b", "c", "d"], key="m_runs")


def test_remember_keeps_widget_values_across_pages():
    at = assert_clean(AppTest.from_function(_two_pages).run())
    assert (at.selectbox(key="c_def").value, at.slider(key="c_cut").value) == ("qini", 30)
    at.selectbox(key="c_def").set_value("uplift")
    at.slider(key="c_cut").set_value(70)
    assert_clean(at.multiselect(key="c_runs").set_value(["a", "b"]).run())
    assert_clean(at.radio(key="page").set_value("compare").run())
    assert at.selectbox(key="m_def").value == "uplift"  # shared with the other page
    assert at.multiselect(key="m_runs").value == ["b"]  # "a" is not offered here
    assert_clean(at.run())
    assert "c_cut" not in at.session_state  # Streamlit dropped the hidden widget's state...
    assert_clean(at.radio(key="page").set_value("curves").run())
    assert at.slider(key="c_cut").value == 70  # ...and remember() brought it back
    assert at.selectbox(key="c_def").value == "uplift"
    assert at.multiselect(key="c_runs").value == ["b"]  # the choice made on the other page
    # a value the other page cannot show gives way to that page's default
    assert_clean(at.selectbox(key="c_def").set_value("lift").run())
    assert_clean(at.radio(key="page").set_value("compare").run())
    assert at.selectbox(key="m_def").value == "qini"
    assert not at.warning and not at.exception


def test_train_settings_survive_a_visit_to_another_page():
    at = run_page("pages/train.py")
    assert_clean(at.radio(key="train_scheme").set_value("repeated").run())
    at.number_input(key="train_repeats").set_value(5)
    assert_clean(at.selectbox(key="train_metric").set_value("ndcg").run())
    assert_clean(at.switch_page("pages/data.py").run())
    assert_clean(at.switch_page("pages/train.py").run())
    assert at.radio(key="train_scheme").value == "repeated"
    assert at.number_input(key="train_repeats").value == 5
    assert at.selectbox(key="train_metric").value == "ndcg"


def test_a_large_file_by_path_is_summarised_used_and_kept_in_the_url(tmp_path):
    from core.data import make_criteo_like

    d = make_criteo_like(20_000, random_state=2)
    path = tmp_path / "big.parquet"
    d.X.assign(treatment=d.t, visit=d.y).to_parquet(path)
    at = run_page()
    at.text_input(key="data_file_path").set_value(f" '{path}' ")  # pasted with its quotes
    assert_clean(at.run())
    assert at.selectbox(key="data_file_t").value == "treatment"
    assert at.selectbox(key="data_file_y").value == "visit"
    assert at.metric[0].value == "20,000"
    assert at.metric[3].value == f"{d.t.mean():.1%}"
    assert_clean(at.button(key="data_file_use").click().run())
    assert at.query_params["file"] == [str(path)] or at.query_params["file"] == str(path)
    assert "Current dataset: big.parquet" in texts(at.subheader)
    again = AppTest.from_file(APP, default_timeout=TIMEOUT)  # a reload / shared link
    again.query_params.update({"file": str(path), "file_treatment": "treatment",
                               "file_outcome": "visit"})
    assert "Current dataset: big.parquet" in texts(assert_clean(again.run()).subheader)
    # and the tab shows that file and its columns (an empty box before), to switch columns
    assert again.text_input(key="data_file_path").value == str(path)
    assert again.selectbox(key="data_file_y").value == "visit"
    # the size as people read it: a number and a unit that give the bytes on disk back
    number, unit = again.metric[2].value.split()
    scale = {"bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
    assert float(number.replace(",", "")) * scale == pytest.approx(path.stat().st_size,
                                                                   rel=0.06)
    # a file rewritten in place is read again, not served from the cache
    d2 = make_criteo_like(5_000, random_state=3)
    d2.X.assign(treatment=d2.t, visit=d2.y).to_parquet(path)
    assert_clean(again.run())
    assert again.metric[0].value == "5,000"
    at.text_input(key="data_file_path").set_value(str(tmp_path / "missing.parquet"))
    assert_only_error(at.run(), "No file at")


def test_columns_whose_names_say_nothing_are_asked_for_not_preselected(tmp_path):
    """A file without a treatment-like name preselected its first column ('f0'), and the page
    answered "Column 'f0' has 34,992 distinct values …" in red; it now asks, and goes on once
    the analyst picks."""
    from core.data import make_criteo_like

    d = make_criteo_like(2_000, random_state=2)
    path = tmp_path / "unnamed.parquet"
    d.X.assign(arm_flag_x=d.t, visit=d.y).rename(columns={"arm_flag_x": "w8"}).to_parquet(path)
    at = run_page()
    at.text_input(key="data_file_path").set_value(str(path))
    assert_clean(at.run())
    assert at.selectbox(key="data_file_t").value is None
    assert at.selectbox(key="data_file_y").value == "visit"  # a name it knows
    assert [i.value for i in at.info] == [
        "No column's name says it is the treatment: pick the **treatment** (which arm each "
        "row was assigned to) above."]
    assert not [b for b in at.button if b.key == "data_file_use"]
    assert "Treated share" not in [m.label for m in at.metric]
    assert_clean(at.selectbox(key="data_file_t").set_value("w8").run())
    shown = {m.label: m.value for m in at.metric}
    assert shown["Treated share"] == f"{d.t.mean():.1%}" and not at.info
    # an upload whose names say nothing of either
    content = b"a,b,c\n" + b"".join(f"{i % 2},{i // 2 % 2},{i}\n".encode() for i in range(40))
    up = run_page()
    assert_clean(up.file_uploader(key="data_upload").set_value(
        ("plain.csv", content, "text/csv")).run())
    assert up.selectbox(key="data_treatment").value is None
    assert up.selectbox(key="data_outcome").value is None
    assert "pick the **treatment** (which arm each row was assigned to) and the **outcome** " \
           "(what was measured after it) above." in texts(up.info)
    up.selectbox(key="data_treatment").set_value("a")
    assert_clean(up.selectbox(key="data_outcome").set_value("b").run())
    assert "pick the" not in texts(up.info)
    assert [b for b in up.button if b.key == "data_use_csv"]


def test_download_names_carry_the_run_and_are_safe_file_names():
    from ui.common import file_stem

    # two runs' score files no longer share "uprank_scores.csv"
    a = file_stem("uprank_scores", "LambdaMART-PCG (separate, abs1) · 100 trees", "a1b2c3d4")
    assert a == "uprank_scores_LambdaMART-PCG_separate_abs1_100_trees_a1b2c3d4"
    assert file_stem("uprank_scores", "Flipped label · 100 trees", "ffff0000") != a
    assert file_stem("uprank_report", "Hillstrom — Womens E-Mail, visit") == \
        "uprank_report_Hillstrom_Womens_E-Mail_visit"
    assert len(file_stem("x", "y" * 200)) == 80
    # a long run label is shortened, never the run id that tells two such runs apart
    label = "LambdaMART-PCG_CUTOFF (30 %, separate, abs1) · 500 trees · 10 splits, seed 0"
    one, two = (file_stem("uprank_scores", label, i) for i in ("a1b2c3d4", "e5f6a7b8"))
    assert one != two and one.endswith("_a1b2c3d4") and one.startswith("uprank_scores_Lambda")
    assert len(one) <= 80
    # a long dataset name and the model: both keep a share of the room (cut from the end,
    # the dataset took it all and two per-arm reports differed only by their ids)
    stem = file_stem("uprank_several_arms_report",
                     "Hillstrom three arms (No / Womens / Mens E-Mail), visit",
                     "LambdaMART uplift 100 trees seed 0", "1a2b3c4d")
    # 80 − 26 (head) − 8 (id) − 3 (separators) = 43 characters: the shorter part, the model
    # (34), gets half, 21; the dataset (48) the other 22
    assert stem == ("uprank_several_arms_report_Hillstrom_three_arms_N_LambdaMART_uplift_100"
                    "_1a2b3c4d")
    assert len(stem) == 80


def test_counts_in_metric_tiles_are_short_enough_to_show_whole():
    from ui.common import short_count

    # exact below ten million; in millions (two decimals) from there on
    assert short_count(0) == "0"
    assert short_count(2_097_244) == "2,097,244"
    assert short_count(9_999_999) == "9,999,999"
    assert short_count(10_000_000) == "10.00M"
    assert short_count(13_979_592) == "13.98M"
    assert short_count(1_250_000_000) == "1,250.00M"


@pytest.mark.parametrize("n_bytes, text", [(500, "500 bytes"), (148_000, "148 KB"),
                                           (12_340_000, "12.3 MB"), (1_230_000_000, "1.2 GB"),
                                           (250_000_000, "250 MB")])
def test_file_sizes_read_as_people_write_them(n_bytes, text):
    from ui.common import size_text

    assert size_text(n_bytes) == text


def test_a_float32_score_or_feature_reaches_the_curves_as_float32():
    """The curve kernel's float32 path and half the memory at 14M rows: the Curves page's
    rankers were upcast to float64; other dtypes still become float64, gaps rank last."""
    import pandas as pd

    from core.data import ABData
    from ui.common import score_values

    data = ABData(X=pd.DataFrame({"f32": np.array([0.5, np.nan, 2.0], np.float32),
                                  "i": [3, 1, 2]}),
                  y=np.array([0, 1, 1]), t=np.array([1, 0, 1]), name="tiny",
                  scores={"model": np.array([0.1, 0.2, 0.3], np.float32)})
    assert score_values(data, "model").dtype == np.float32
    f32 = score_values(data, "f32")
    assert f32.dtype == np.float32 and f32.tolist() == [0.5, -np.inf, 2.0]
    assert score_values(data, "i").dtype == np.float64


def test_stray_markers_in_a_0_1_treatment_never_flip_the_effect(rng):
    """The fuzz case: a 0/1 treatment with 'none' in every 50th row was offered as three
    arms with control = 1 (the most frequent code: 0 and 'none' both read as control), and
    the page showed −13 pp for a +13 pp effect. Now 'none' is named as a stray marker, two
    arms are preselected with 0 as control, and the effect keeps its sign."""
    n = 2_000
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.1 + 0.13 * t).astype(int)
    cells = np.where(np.arange(n) % 50 == 0, "none", t.astype(str))
    body = "\n".join(f"{a},{b},{c}" for a, b, c in zip(cells, y, rng.integers(0, 9, n)))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("strays.csv", ("treatment,visit,recency\n" + body + "\n").encode(),
         "text/csv")).run())
    assert "except 'none' (40 rows): stray markers, not arms?" in texts(at.warning)
    assert at.radio(key="data_arms_treatment").value == "two"
    assert (at.selectbox(key="data_tv").value, at.selectbox(key="data_cv").value) == ("1", "0")
    assert_clean(at.button(key="data_use_csv").click().run())
    kept = cells != "none"
    want = y[kept & (t == 1)].mean() - y[kept & (t == 0)].mean()
    assert at.session_state["data"].n == int(kept.sum())
    data = at.session_state["data"]
    assert data.y[data.t == 1].mean() - data.y[data.t == 0].mean() == pytest.approx(want)
    assert want > 0.08


def test_an_ambiguous_control_arm_must_be_picked(rng):
    """Two codes read as control (0 and 'none', both frequent): no guess, no default — the
    page asks, and 'Use this CSV' waits for the answer."""
    n = 600
    cells = rng.choice(["0", "1", "none"], n)
    body = "\n".join(f"{a},{b}" for a, b in zip(cells, rng.integers(0, 2, n)))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("three.csv", ("arm,visit\n" + body + "\n").encode(), "text/csv")).run())
    assert at.radio(key="data_arms_arm").value == "all"  # 'none' is a third of the rows
    assert at.selectbox(key="data_cv_all").value is None
    assert at.button(key="data_use_csv").disabled
    assert_clean(at.selectbox(key="data_cv_all").set_value("none").run())
    assert not at.button(key="data_use_csv").disabled


def test_an_outcome_of_two_words_asks_which_is_the_response(rng):
    n = 400
    t = rng.integers(0, 2, n)
    bought = rng.random(n) < 0.2 + 0.1 * t
    body = "\n".join(f"{a},{'bought' if b else 'none'},{c}"
                     for a, b, c in zip(t, bought, rng.integers(0, 9, n)))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("words.csv", ("treatment,outcome,recency\n" + body + "\n").encode(),
         "text/csv")).run())
    assert at.radio(key="data_kind_outcome").value == "binary"
    assert at.selectbox(key="data_yv_outcome").value is None
    assert at.button(key="data_use_csv").disabled
    assert "Pick the outcome's response above" in texts(at.info)
    assert_clean(at.selectbox(key="data_yv_outcome").set_value("bought").run())
    assert_clean(at.button(key="data_use_csv").click().run())
    data = at.session_state["data"]
    assert np.array_equal(data.y, bought.astype(np.int8))
    again = assert_clean(fresh(at.query_params), "reload")  # the mapping is kept
    assert np.array_equal(again.session_state["data"].y, bought.astype(np.int8))


def test_use_this_csv_maps_the_table_the_mapping_step_parsed(monkeypatch):
    """The upload is parsed once: the mapping step's table is the one *Use this CSV* maps
    (before, it parsed the file again: 39 s at 220 MB), and the reader's own warnings (the
    Latin-1 decoding, Excel's sep= line) still reach the dataset, as read_ab_csv gives them."""
    import core.data as datasets

    calls = []
    real = datasets.read_frame

    def counting(source, *args, **kwargs):
        calls.append(source)
        return real(source, *args, **kwargs)

    from core.data import datasets as reader

    for module in (datasets, reader):  # the app's name for it and read_ab_csv's
        monkeypatch.setattr(module, "read_frame", counting)
    rows = "\n".join(f"{i % 2};{(i * 7) % 3 == 0:d};{i % 5}.{i % 7};caf\xe9 {i % 3}"
                     for i in range(120))
    content = ("sep=;\ngroup;bought;spend;shop\n" + rows + "\n").encode("latin-1")
    counted = []
    real_codes = datasets.arm_codes
    monkeypatch.setattr(datasets, "arm_codes", lambda col: counted.append(col.name)
                        or real_codes(col))
    at = run_page()
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("latin.csv", content, "text/csv")).run())
    assert_clean(at.run())  # a rerun of the mapping step (any widget) counts nothing again
    assert counted == ["group"]
    assert_clean(at.button(key="data_use_csv").click().run())
    assert calls.count(content) == 1  # the mapping step's parse, reused on use
    data = at.session_state["data"]
    expected = datasets.read_ab_csv(content, name="latin.csv", treatment="group",
                                    outcome="bought")
    assert data.warnings == expected.warnings and len(expected.warnings) >= 2
    assert data.fingerprint() == expected.fingerprint()
    # and as the file was written (read_ab_csv maps with the same map_ab_frame)
    np.testing.assert_array_equal(data.t, np.arange(120) % 2)
    np.testing.assert_array_equal(data.y, (np.arange(120) * 7) % 3 == 0)
    assert list(data.X["shop"].cat.categories) == ["caf\xe9 0", "caf\xe9 1", "caf\xe9 2"]


def test_an_amount_outcome_shows_its_own_means_and_effect_beside_the_binary_view(shared_data):
    # Hillstrom's three arms with spend: the one-treatment pages read spend > 0, and the
    # Data page also shows the dollars, recomputed here from the CSV with pandas
    import pandas as pd

    at = assert_clean(fresh({"dataset": "hillstrom_arms", "outcome": "spend"}), "link")
    raw = pd.read_csv(shared_data / "hillstrom.csv", usecols=["segment", "spend"])
    treated = raw["segment"] != "No E-Mail"
    mean_t, mean_c = raw["spend"][treated].mean(), raw["spend"][~treated].mean()
    metrics = {m.label: m.value for m in at.metric}
    # one number of decimals for the three, so that they add up as shown: 1.250 − 0.653 =
    # +0.597 (three significant digits of the smallest)
    assert metrics["Mean spend, treated"] == f"{mean_t:.3f}" == "1.250"
    assert metrics["Mean spend, control"] == f"{mean_c:.3f}"
    assert metrics["Average effect on spend"] == f"+{mean_t - mean_c:.3f}"
    rate = (raw["spend"][treated] > 0).mean()
    assert metrics["spend > 0, treated"] == f"{rate:.2%}"
    assert "Average effect on spend > 0" in metrics
    # the arms table: mean spend per arm from the CSV, no comparison of the control with
    # itself (a missing value the browser draws as "—"), numbers kept numbers
    [arms] = [d for d in at.dataframe if "vs control" in d.value.columns]
    means = raw.groupby("segment")["spend"].mean()
    np.testing.assert_allclose(arms.value["mean outcome"], means[list(arms.value.index)])
    assert np.isnan(arms.value.loc["No E-Mail", "vs control"]) and arms.proto.placeholder == "—"
    assert arms.value.loc["Mens E-Mail", "vs control"] == pytest.approx(
        means["Mens E-Mail"] - means["No E-Mail"])
    # the one-treatment pages say which outcome their curves and models read
    for page in ("pages/curves.py", "pages/train.py", "pages/compare.py"):
        assert_clean(at.switch_page(page).run(), page)
        assert "read the outcome as **spend > 0**" in texts(at.caption), page
    # a binary outcome has no amount cards, nor the note
    visit = assert_clean(fresh({"dataset": "hillstrom_arms", "outcome": "visit"}), "link")
    assert not [m for m in visit.metric if m.label.startswith("Mean ")]
    assert_clean(visit.switch_page("pages/curves.py").run())
    assert "read the outcome as" not in texts(visit.caption)


def test_the_srm_test_uses_a_design_of_two_thirds_exactly_not_its_four_decimals(shared_data):
    # Hillstrom "any e-mail": 2/3 of the customers were sent one; the box shows 0.67 (0.6667
    # kept), and the test expects 64,000 · 2/3 = 42,666.7 treated rows (scipy's χ² here)
    from scipy import stats

    at = assert_clean(fresh({"dataset": "hillstrom", "arm": "any", "outcome": "visit"}), "link")
    assert at.number_input(key="data_share").value == round(2 / 3, 4)
    [srm] = [d.value for d in at.dataframe if "expected" in d.value.columns]
    data = at.session_state["data"]
    assert srm.loc["treated", "expected"] == pytest.approx(data.n * 2 / 3)
    want = stats.chisquare([data.n_treated, data.n_control], [data.n * 2 / 3, data.n / 3])
    assert srm["contribution"].sum() == pytest.approx(want.statistic)
    assert f"p = {want.pvalue:.2g}" in texts(at.success)
    # a share typed by the analyst is tested as typed
    assert_clean(at.number_input(key="data_share").set_value(0.6).run())
    [srm] = [d.value for d in at.dataframe if "expected" in d.value.columns]
    assert srm.loc["treated", "expected"] == pytest.approx(data.n * 0.6)
