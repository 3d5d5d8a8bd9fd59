"""AppTest tests of the Interleaving page (opened directly: it is not in app.py's navigation
in every checkout), plus the background job behind its progress bar and Cancel button."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core.data import datasets
from core.interleaving import PRESETS, biased_methods, users_needed
from core.runs import simulations as view
from tests._apptest import assert_clean
from ui import common
from ui import interleaving_view as iv
from ui.interleaving_charts import false_judgment_figure

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "interleaving.py")
FIVE = ["AB-total", "AB-list", "EPI-RCT", "CBI-RCT", "CBI-IPS"]


def texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


def open_page(**state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=30)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def job_status(at: AppTest):
    """Status of the page's simulation job in the app's (process-wide) job runner."""
    return common.runner().status(at.session_state["il_job"][0])


def run_until_done(at: AppTest, limit: float = 120.0) -> AppTest:
    """Click Run simulation, then rerun the page (as its fragment would) until the job ends."""
    at.button(key="il_run").click().run()
    common.runner().wait(at.session_state["il_job"][0], timeout=limit)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(element) -> pd.DataFrame:
    """The cell texts a dataframe element shows (its Styler's display values)."""
    return pa.ipc.open_stream(element.proto.arrow_data.styler.display_values).read_pandas()


def curve_trace_names(at: AppTest) -> list[str]:
    import json

    chart = next(c for c in at.get("plotly_chart") if "False judgments" in c.proto.spec)
    return [t["name"] for t in json.loads(chart.proto.spec)["data"]]


def small(at: AppTest, counts: str = "10, 20, 50", reps: int = 200) -> AppTest:
    at.text_input(key="il_counts").set_value(counts)
    at.number_input(key="il_reps").set_value(reps)
    return at


def test_page_renders_with_paper_defaults():
    at = open_page()
    assert at.text_input(key="il_counts").value == view.PAPER_COUNTS_TEXT
    assert at.multiselect(key="il_methods").value == view.DEFAULT_METHODS
    assert "Run simulation" in texts(at.info)
    assert not at.error


def test_small_preset_simulation_shows_tables_and_curve():
    at = run_until_done(small(open_page()))
    assert not at.error
    bias = at.dataframe[1].value
    assert list(bias.index) == FIVE
    assert {"mean", "sd", "ci_low", "ci_high", "truth_in_ci"} <= set(bias.columns)
    # 200 repetitions for every method, none undefined: said once, not two repeated columns
    assert not {"n_reps", "n_nan"} & set(bias.columns)
    assert "over the repetitions (200 each), every estimate defined." in texts(at.caption)
    need = at.dataframe[2].value
    assert list(need.index) == FIVE and "ratio" in need.columns
    table1 = at.dataframe[0].value
    assert list(table1.index) == ["all items", "A: causal (noise 0.5)", "B: accuracy (noise 0.5)"]
    assert at.selectbox(key="il_bias_n").options == ["10", "20", "50"]
    assert len(at.get("plotly_chart")) == 2
    at.toggle(key="il_paper_target").set_value(True).run()  # target = AB-total's rate at 50
    assert not at.exception
    assert "AB-total's rate at 50 users" in at.toggle(key="il_paper_target").label
    # Same settings again: served from the stored result at once.
    at.button(key="il_run").click().run()
    assert job_status(at).state == "cached"
    assert list(at.dataframe[1].value.index) == FIVE


def test_a_new_session_shows_the_stored_result_of_its_settings_without_a_run():
    """A reload (a new session) loses nothing: settings that ran before show their result at
    once; settings never run still wait for Run simulation."""
    at = run_until_done(small(open_page(), counts="10, 30", reps=100))
    again = open_page(il_counts="10, 30", il_reps=100)  # nothing clicked
    assert job_status(again).state == "cached"
    assert again.dataframe[1].value.equals(at.dataframe[1].value)
    other = open_page(il_counts="10, 30", il_reps=100, il_seed=1)  # never run
    assert "il_job" not in other.session_state and "Run simulation" in texts(other.info)


def test_a_new_session_finds_a_dataset_worlds_result_too():
    data = datasets.load_dataset("world").subset(slice(0, 2000))
    state = {"data": data, "il_source": view.DATASET, "il_ds_a": "true effect τ(x)",
             "il_ds_b": "Random ranker (seed 0)", "il_counts": "10, 50", "il_reps": 100}
    at = run_until_done(open_page(**state))
    assert not at.error and "il_last" in at.session_state
    again = open_page(**state)
    assert job_status(again).state == "cached"
    assert again.dataframe[1].value.equals(at.dataframe[1].value)


def test_world_built_from_the_current_dataset():
    data = datasets.load_dataset("world").subset(slice(0, 3000))
    at = open_page(data=data)
    at.radio(key="il_source").set_value(view.DATASET).run()
    assert "true effect τ(x)" in at.selectbox(key="il_ds_a").options
    at.selectbox(key="il_ds_a").set_value("true effect τ(x)")
    at.selectbox(key="il_ds_b").set_value("Random ranker (seed 0)")
    at.number_input(key="il_pool").set_value(20)
    at = run_until_done(small(at, counts="10, 50, 100, 500"))
    assert "150 users" in texts(at.info) and "500" in texts(at.info)  # 3000 rows / 20
    assert list(at.dataframe[1].value.index) == FIVE
    assert at.metric[0].value.startswith("+")  # the oracle beats a random ranker


def test_n_larger_than_pool_shows_error_not_exception():
    at = open_page(data=datasets.load_dataset("world").subset(slice(0, 2000)))
    at.radio(key="il_source").set_value(view.DATASET).run()
    at.number_input(key="il_pool").set_value(5)
    at.number_input(key="il_n").set_value(10)
    at = small(at).run()  # refused before Run (it failed in the job, after Run)
    assert not at.exception
    assert "n can be at most the pool size" in texts(at.error)
    assert at.button(key="il_run").disabled


@pytest.mark.parametrize("counts, message", [
    ("10, ten", "positive whole numbers"),
    ("5000", "at most the number of users in the world (3,000)"),
])
def test_bad_user_counts_show_error_and_disable_run(counts, message):
    at = open_page()
    at.text_input(key="il_counts").set_value(counts).run()
    assert not at.exception
    assert message in texts(at.error)
    assert at.button(key="il_run").disabled


def test_n_larger_than_the_items_of_a_preset_shows_error():
    at = small(open_page())
    at.number_input(key="il_n").set_value(400)
    at = at.run()  # refused before Run (it failed in the job, after Run)
    assert not at.exception
    assert "the grocery world has 300 items" in texts(at.error)
    assert at.button(key="il_run").disabled


def test_cancel_stops_a_long_simulation():
    at = open_page()
    at.number_input(key="il_reps").set_value(50_000).run()
    at.button(key="il_run").click().run()
    job_id = at.session_state["il_job"][0]
    deadline = time.monotonic() + 30
    while job_status(at).state == "queued" and time.monotonic() < deadline:
        time.sleep(0.1)
    at.run()
    assert job_status(at).state == "running" and at.button(key="il_cancel")
    at.button(key="il_cancel").click().run()
    assert common.runner().wait(job_id, 60).state == "cancelled"
    at.run()
    assert "cancelled" in texts(at.info)


def test_a_running_simulation_is_marked_when_the_settings_change():
    at = open_page()
    at.number_input(key="il_reps").set_value(100_000).run()  # minutes of work
    at.button(key="il_run").click().run()
    job_id = at.session_state["il_job"][0]
    earlier = "Simulation with earlier settings, still running:"
    assert not any(earlier in str(c.value) for c in at.caption)
    at.number_input(key="il_seed").set_value(1).run()  # other settings
    assert any(earlier in str(c.value) for c in at.caption) and at.button(key="il_cancel")
    at.button(key="il_cancel").click().run()
    assert common.runner().wait(job_id, 60).state == "cancelled"
    at.run()
    assert not any(earlier in str(c.value) for c in at.caption)


def test_simulation_reports_progress_and_cancels_from_the_callback():
    """The core computation reports its share done and stops when the callback raises."""
    from core.runs.tasks import TaskCancelled

    spec = view.WorldSpec(view.PRESET, "grocery", "causal", "accuracy", 10, seed=3)
    config, dropped = view.make_config(spec, ["ab_total", "cbi_ips"], "10, 2000", 2_000, 3)
    assert dropped == () and config.methods == ("ab_total", "cbi_ips")
    seen = []

    def progress(fraction, text):
        seen.append(fraction)
        if fraction > 0.2:
            raise TaskCancelled

    with pytest.raises(TaskCancelled):
        view.run_simulation(config, progress=progress)
    assert 0 < max(seen) < 1


def test_stored_simulation_result_round_trips(tmp_path):
    """What the worker stores is what the page reads back (frames, labels, numbers)."""
    from core.runs.store import RunStore

    spec = view.WorldSpec(view.PRESET, "grocery", "causal", "accuracy", 10, seed=3)
    config, _ = view.make_config(spec, ["ab_total", "cbi_ips"], "10, 50", 300, 3)
    res = view.run_simulation(config)
    store = RunStore(tmp_path)
    store.save_result("0123456789abcdef", *res.to_stored())
    back = view.load_simulation(store, "0123456789abcdef")
    assert (back.label_a, back.label_b, back.users) == (res.label_a, res.label_b, res.users)
    assert back.truth == res.truth
    for name in ("table1", "bias", "curve"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(res, name),
                                      check_dtype=False, rtol=1e-14)


def test_false_judgment_figure_has_log_axis_and_one_line_per_method():
    curve = pd.DataFrame({"method": ["AB-total"] * 3 + ["CBI-IPS"] * 3,
                          "n_users": [10, 100, 1000] * 2, "false_rate": [.4, .3, .2, .3, .1, 0],
                          "se": [.01] * 6})
    fig = false_judgment_figure(curve, target=0.05)
    assert fig.layout.xaxis.type == "log"
    assert [t.name for t in fig.data] == ["AB-total", "CBI-IPS"]
    assert list(fig.layout.xaxis.tickvals) == [10, 20, 50, 100, 200, 500, 1000]


def test_parse_counts_sorts_and_rejects_words():
    assert view.parse_counts("100; 10 10,20") == (10, 20, 100)
    with pytest.raises(ValueError, match="positive whole numbers.*'0'"):
        view.parse_counts("10, 0")


def test_a_model_trained_on_the_train_page_is_a_ranker(tmp_path):
    """A stored run's test-row scores become ranker A; the world uses those test rows."""
    import os

    from core.runs.jobs import JobRunner
    from core.runs.presets import model_params
    from core.runs.store import RunConfig, RunStore

    data = datasets.load_dataset("world").subset(slice(0, 4000))
    model = "Flipped label (Lai 2006)"
    config = RunConfig.for_data(data, model, model_params(model))
    with JobRunner(max_workers=1, store=RunStore(os.environ["UPRANK_RUNS_DIR"])) as runner:
        status = runner.wait(runner.submit(config, data=data), timeout=120)
    assert status.state == "done", status.message
    at = open_page(data=data)
    at.radio(key="il_source").set_value(view.DATASET).run()
    trained = [o for o in at.selectbox(key="il_ds_a").options if o.startswith("Trained: ")]
    assert len(trained) == 1
    at.selectbox(key="il_ds_a").set_value(trained[0])
    at.selectbox(key="il_ds_b").set_value("Random ranker (seed 0)")
    at.number_input(key="il_pool").set_value(20)
    at = run_until_done(small(at, counts="10, 30, 60"))
    assert at.metric[1].value == "60"  # users: 1,200 test rows (30 %) / 20 per pool
    assert list(at.dataframe[1].value.index) == FIVE


# ------------------------------------------------------------------ trust and clarity
def test_ratio_to_cbi_ips_is_shown_by_default_and_matches_users_needed():
    """The headline AB-total ÷ CBI-IPS and the ratio column need no toggle; their values are
    those of users_needed on the page's own curve, recomputed here from the curve."""
    at = assert_clean(run_until_done(small(open_page(), counts="10, 50, 200, 1000", reps=300)))
    assert not at.toggle(key="il_paper_target").value
    curve = at.session_state["il_last"][1].curve
    need = users_needed(curve, target=0.05, relative_to="CBI-IPS")
    ab, ref = need.loc["AB-total"], need.loc["CBI-IPS"]
    assert ref["reached"] and not ref["at_grid_start"]  # the world makes this a fair check
    metric = {m.label: m.value for m in at.metric}
    label = "Users needed, AB-total ÷ CBI-IPS"
    if ab["reached"]:
        expected = f"{ab['users_needed'] / ref['users_needed']:.1f}×"
    else:  # needs more users than the grid: a lower bound
        expected = f"> {1000 / ref['users_needed']:.1f}×"
    assert metric[label] == expected
    table = at.dataframe[2].value
    np.testing.assert_allclose(table["ratio"], need["users_needed"] / ref["users_needed"])
    assert shown(at.dataframe[2])["ratio"].iloc[-1] == "1.0×"  # CBI-IPS against itself
    # The paper's reading: AB-total reaches the target at the largest count, so a ratio exists.
    at.toggle(key="il_paper_target").set_value(True).run()
    assert_clean(at)
    rate = curve[(curve["method"] == "AB-total") & (curve["n_users"] == 1000)]["false_rate"]
    need = users_needed(curve, target=float(rate.iloc[0]), relative_to="CBI-IPS")
    ratio = need.loc["AB-total", "users_needed"] / need.loc["CBI-IPS", "users_needed"]
    assert {m.label: m.value for m in at.metric}[label] == f"{ratio:.1f}×"


def test_biased_methods_are_marked_in_chart_table_and_warning():
    at = assert_clean(run_until_done(small(open_page(), counts="10, 50, 200", reps=300)))
    bias = at.session_state["il_last"][1].bias
    last = bias[bias["n_users"] == 200].set_index("method")
    # AB-list (counts listed items: Y^T) and CBI-RCT (overlapping lists) are biased here.
    outside = (last["ci_high"] < last["truth"]) | (last["ci_low"] > last["truth"])
    expected = set(last.index[outside])
    assert {"AB-list", "CBI-RCT"} <= expected
    names = curve_trace_names(at)
    assert {f"{m} (biased)" for m in expected} <= set(names)
    assert {n for n in names if n.endswith("(biased)")} == {f"{m} (biased)" for m in expected}
    need = at.dataframe[2].value
    assert set(need.index[need["biased"]]) == expected
    warning = texts(at.warning)
    assert all(f"**{m}**" in warning for m in expected) and "200 users" in warning
    assert "200 users (the largest count simulated; t-test" in texts(at.caption)


def test_tables_show_no_none_or_nan_and_format_numbers():
    at = assert_clean(run_until_done(small(open_page(), counts="10, 20", reps=200)))
    for element in at.dataframe:
        cells = shown(element).astype(str)
        for bad in ("None", "nan", "NaN", "<NA>"):
            assert not cells.apply(lambda c, b=bad: c.str.contains(b)).any().any(), bad
        assert element.proto.placeholder == "—"
    need, cells = at.dataframe[2].value, shown(at.dataframe[2])
    missing = need["users_needed"].isna().to_numpy()
    assert missing.any()  # 5 % is out of reach with 20 users
    assert (cells["users_needed"][missing] == "—").all()
    assert (cells["ratio"][need["ratio"].isna().to_numpy()] == "—").all()
    assert (cells["note"][missing].str.startswith("not reached within 20 users")).all()
    world = shown(at.dataframe[0])
    assert world["users"].tolist() == ["3,000"] * 3
    bias = shown(at.dataframe[1])
    assert bias["mean"].str.fullmatch(r"-?\d\.\d{4}").all()


def test_users_needed_numbers_as_whole_users_and_ratios():
    """need_table / ratio_text / users_text on a hand-made users_needed result."""
    need = pd.DataFrame({"users_needed": [1740.4, np.nan, 50.0, 10.0],
                         "reached": [True, False, True, True],
                         "at_grid_start": [False, False, False, True]},
                        index=pd.Index(["AB-total", "AB-list", "CBI-IPS", "EPI-RCT"],
                                       name="method"))
    need["ratio"] = need["users_needed"] / 50.0
    assert iv.ratio_text(need, "AB-total", "CBI-IPS", 2000) == "34.8×"  # 1740.4 / 50
    assert iv.ratio_text(need, "AB-list", "CBI-IPS", 2000) == "> 40.0×"  # 2000 / 50
    assert iv.ratio_text(need, "EPI-RCT", "CBI-IPS", 2000) == "≤ 0.2×"  # 10 / 50, or less
    assert iv.ratio_text(need, "CBI-IPS", "AB-list", 2000) == "—"
    # a bound is rounded outwards, so it still holds: 2,000 / 379 = 5.277 is "> 5.2×", and
    # 10 / 30 = 0.333 (EPI-RCT's need an upper bound) "≤ 0.4×"
    other = need.assign(users_needed=[1740.4, np.nan, 379.0, 10.0])
    assert iv.ratio_text(other, "AB-list", "CBI-IPS", 2000) == "> 5.2×"
    assert iv.ratio_text(need.assign(users_needed=[1740.4, np.nan, 30.0, 10.0]), "EPI-RCT",
                         "CBI-IPS", 2000) == "≤ 0.4×"
    assert iv.users_text(need, "AB-total", 2000) == "1,740"
    assert iv.users_text(need, "AB-list", 2000) == "> 2,000"
    table = iv.need_table(need, {"AB-list": -5.57}, least=10, most=2000)
    assert list(table.columns) == ["users_needed", "ratio", "biased", "note"]
    assert table["biased"].tolist() == [False, True, False, False]
    assert table.loc["AB-list", "note"] == ("not reached within 2,000 users; "
                                            "biased: mean estimate off by -557%")
    assert table.loc["EPI-RCT", "note"].startswith("reached at the smallest count (10 users)")
    assert table.loc["AB-total", "note"] == ""
    cells = iv.styled(table).to_string(delimiter="|").splitlines()
    assert "AB-total|1,740|34.8×|False|" in cells
    assert "AB-list|—|—|True|not reached" in "".join(cells)


def test_biased_methods_reads_the_largest_user_count():
    """Bonferroni-corrected t-test of mean vs truth, at the largest user count only."""
    from scipy import stats

    truth, se, reps = 0.02, 0.001, 2000
    crit = stats.t.ppf(1 - 0.05 / (2 * 3), reps - 1)  # three methods judged at 1,000 users
    bias = pd.DataFrame({
        "n_users": [10, 10, 10, 1000, 1000, 1000],
        "method": ["AB-total", "CBI-RCT", "CBI-IPS"] * 2,
        # AB-total misses by 2.1 se: outside a plain 95 % CI, inside the corrected one.
        # CBI-RCT misses by crit + 0.5 se: biased.  CBI-IPS has no se: not judged.
        "mean": [0.5, 0.5, 0.5, truth + 2.1 * se, truth + (crit + 0.5) * se, truth],
        "se": [0.3, 0.3, 0.3, se, se, np.nan],
        "truth": truth, "n_reps": reps,
    })
    assert 2.1 < crit < crit + 0.5
    assert biased_methods(bias) == frozenset({"CBI-RCT"})
    assert biased_methods(bias, n_users=10) == frozenset()
    assert biased_methods(bias.iloc[:0]) == frozenset()
    with pytest.raises(ValueError, match="n_users must be a user count of bias.*got 50"):
        biased_methods(bias, n_users=50)
    with pytest.raises(ValueError, match="bias must be a DataFrame with columns"):
        biased_methods(bias.drop(columns="se"))


def test_false_judgment_figure_marks_biased_methods():
    curve = pd.DataFrame({"method": ["AB-total"] * 2 + ["CBI-RCT"] * 2,
                          "n_users": [10, 2000] * 2, "false_rate": [.4, .3, .2, 0],
                          "se": [.01] * 4})
    fig = false_judgment_figure(curve, biased={"CBI-RCT"})
    assert [t.name for t in fig.data] == ["AB-total", "CBI-RCT (biased)"]
    assert [t.line.dash for t in fig.data] == ["solid", "dash"]
    assert "biased" in fig.data[1].hovertemplate and "biased" not in fig.data[0].hovertemplate
    assert "%{x:,}" in fig.data[0].hovertemplate
    assert list(fig.layout.xaxis.ticktext) == ["10", "20", "50", "100", "200", "500", "1,000",
                                               "2,000"]
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_biased_text_names_methods_with_their_miss():
    bias = pd.DataFrame({"n_users": [10, 1000, 1000, 1000],
                         "method": ["CBI-RCT", "AB-list", "CBI-RCT", "CBI-IPS"],
                         "mean": [0.5, -0.0898, 0.0387, 0.0192], "truth": [0.0196] * 4})
    off = iv.misses(bias, {"CBI-RCT", "CBI-IPS"}, 1000)
    assert list(off) == ["CBI-RCT", "CBI-IPS"]
    assert off["CBI-RCT"] == pytest.approx((0.0387 - 0.0196) / 0.0196)
    text = iv.biased_text(bias, off, 1000)
    assert "**CBI-RCT** (mean +0.0387, off by +97%)" in text
    assert "**CBI-IPS** (mean +0.0192, off by -2%)" in text  # (0.0192 - 0.0196) / 0.0196
    assert "as for CBI-IPS, is small" in text  # a miss under 5 % of the truth
    assert "AB-list" not in text and "1,000 users" in text
    zero = bias.assign(truth=0.0)
    assert iv.biased_text(zero, iv.misses(zero, {"CBI-RCT"}, 1000), 1000).count(
        "misses the truth") == 1


def test_settings_that_cannot_run_are_refused_before_run_with_the_reason():
    """Each of these failed only after Run (or, with a pool larger than the data, named a
    world of 0 users): the checks say why up front."""
    from core.data import make_uplift_world

    grocery = PRESETS["grocery"].n_items  # 300
    refused = {
        (1, ("ab_total", "epi_rct", "cbi_rct")): "EPI-RCT and CBI-RCT compare",
        (grocery + 1, ("ab_total",)): f"the grocery world has {grocery:,} items",
    }
    for (n, methods), message in refused.items():
        spec = view.WorldSpec(view.PRESET, "grocery", "causal", "accuracy", n, seed=3)
        with pytest.raises(ValueError, match=message):
            view.make_config(spec, list(methods), "10, 50", 300, 3)
    spec = view.WorldSpec(view.PRESET, "grocery", "causal", "accuracy", 1, seed=3)
    assert view.make_config(spec, ["ab_total", "cbi_ips"], "10", 300, 3)[0].world.n == 1
    with pytest.raises(ValueError, match="User counts must be at least 2"):
        view.make_config(spec, ["ab_total"], "1, 10", 300, 3)
    data = make_uplift_world(1_000, random_state=0)
    for pool, n, message in ((2_000, 10, "exceed the 1,000 customers"),
                             (5, 10, "n can be at most the pool size")):
        spec = view.WorldSpec(view.DATASET, data.fingerprint(), "a", "b", n, pool_size=pool)
        with pytest.raises(ValueError, match=message):
            view.make_config(spec, ["ab_total"], "10", 300, 3, data)


def test_the_bias_table_keeps_a_count_only_where_methods_differ():
    """Repetitions shared by every method and no undefined estimate are said in words; a
    count that differs between methods stays a column (values written out by hand)."""
    methods = pd.Index(["AB-total", "CBI-IPS"], name="method")
    base = {c: [0.1, 0.2] for c in iv.BIAS_COLUMNS}
    same = pd.DataFrame({**base, "n_reps": [2000, 2000], "n_nan": [0, 0]}, index=methods)
    table, note = iv.bias_display(same)
    assert list(table.columns) == iv.BIAS_COLUMNS[:-2]
    assert note == " (2,000 each), every estimate defined"
    # CBI-IPS lost 3 repetitions to undefined estimates: both counts stay columns
    lost = pd.DataFrame({**base, "n_reps": [2000, 1997], "n_nan": [0, 3]}, index=methods)
    table, note = iv.bias_display(lost)
    assert list(table.columns) == iv.BIAS_COLUMNS and note == ""
    # the same number undefined for every method: the repetitions go, the undefined stay
    table, note = iv.bias_display(lost.assign(n_reps=1997, n_nan=3))
    assert "n_nan" in table and "n_reps" not in table and note == " (1,997 each)"
