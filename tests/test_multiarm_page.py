"""Several arms through the app (AppTest): the multi-arm world picked on the Data page shows
every arm, the SRM test over all arms and the balance of each arm; per-arm models trained on
the Train page; the Compare page's policy table and per-arm AUUC equal policy_value and auuc
computed here on the stored test rows; the report and the export carry every arm."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _apptest import assert_clean
from scipy import stats
from streamlit.testing.v1 import AppTest

from core.data import make_multiarm_world
from core.evaluation import auuc, best_arm_policy, policy_value

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _open_world(at: AppTest) -> AppTest:
    at.selectbox(key="data_key").set_value("multiarm_world")
    assert_clean(at.run())
    at.selectbox(key="data_multiarm_world_n").set_value(10_000)
    assert_clean(at.run())
    return assert_clean(at.button(key="data_load").click().run())


def test_data_page_shows_every_arm_srm_and_balance():
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    _open_world(at)
    world = make_multiarm_world(10_000, n_arms=3, random_state=0)
    arms = next(d.value for d in at.dataframe if "designed share" in d.value.columns)
    assert list(arms.index) == world.arms
    assert arms["rows"].tolist() == np.bincount(world.t).tolist()
    p = stats.chisquare(np.bincount(world.t)).pvalue
    assert any(f"p = {p:.3f}" in str(s.value) for s in at.success)
    balance = next(d.value for d in at.dataframe if "SMD arm 1" in d.value.columns)
    assert list(balance.columns) == ["SMD arm 1", "SMD arm 2", "SMD arm 3"]


def test_train_per_arm_and_compare_policies_against_a_direct_computation():
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    _open_world(at)
    assert_clean(at.switch_page("pages/train.py").run())
    at.multiselect(key="ma_models").set_value(["Two-model per arm"])
    at.select_slider(key="ma_trees").set_value(50)
    assert_clean(at.button(key="ma_train").click().run())
    assert_clean(at.switch_page("pages/compare.py").run())
    deadline = time.time() + 180
    table = None
    while time.time() < deadline:
        time.sleep(1)
        assert_clean(at.run())
        found = [d.value for d in at.dataframe if "net value" in d.value.columns]
        if found:
            table = found[0]
            break
    assert table is not None, "training did not finish"
    from core.runs import RunStore, multiarm_runs

    store = RunStore(os.environ["UPRANK_RUNS_DIR"])
    runs = multiarm_runs.list_multiarm_runs(store, at.session_state["data"].fingerprint())
    meta, frames = store.load_result(runs["key"].iloc[0])
    test = frames["test"]
    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    prop = np.tile(meta["design"], (len(y), 1))
    tau = test[["tau_1", "tau_2", "tau_3"]].to_numpy()
    cost = np.array(meta["cost"])  # the world's costs are the inputs' defaults
    v, se = policy_value(best_arm_policy(tau, cost), y, t, prop)
    row = table.loc["best arm per customer (model)"]
    assert row["value"] == pytest.approx(v, abs=1e-9) and row["± SE"] == pytest.approx(se)
    assert len(table) == 6  # best arm, four single arms, random
    # the rule is not compared with itself: missing, drawn as "—" by the table's placeholder
    policies = next(d for d in at.dataframe if "value" in d.value.columns
                    and "best arm per customer (model)" in d.value.index)
    assert policies.proto.placeholder == "—"
    assert row[[multiarm_runs.VS_RULE, multiarm_runs.VS_RULE_SE]].isna().all()
    per_arm = next(d.value for d in at.dataframe if "AUUC@30 %" in d.value.columns)
    rows = (t == 2) | (t == 0)
    assert per_arm.loc["arm 2", "AUUC@30 %"] == pytest.approx(auuc(
        y[rows], (t[rows] == 2).astype(int), tau[rows, 1], definition="uplift_sep_rel",
        cutoff=0.3))
    assert any("Calibration slope" in str(c.value) for c in at.caption)
    assert any("best-arm rule is worth" in str(m.value) for m in at.markdown)
    # the report's calibration caveat is on the page too, exactly when the report has one
    from core.runs.multiarm_runs import arm_summary, calibration_caveat

    caveat = calibration_caveat(arm_summary(test, meta["arms"]))
    assert (caveat in [str(w.value) for w in at.warning]) == bool(caveat)


def _stored_run(n: int, seed: int):
    """A two-arm world and a per-arm run's stored test rows (random scores) and meta."""
    world = make_multiarm_world(n, n_arms=2, random_state=seed)
    m = int(0.3 * n)
    rng = np.random.default_rng(seed)
    test = pd.DataFrame({"row": np.arange(1, m + 1), "y": world.y[:m].astype(float),
                         "t": world.t[:m], "tau_1": rng.normal(size=m),
                         "tau_2": rng.normal(size=m)})
    meta = {"arms": world.arms, "design": list(world.design), "model": "Two-model per arm",
            "trees": 50, "seed": 0, "fit_seconds": 1.0}
    return world, test, meta


def test_score_export_and_report_carry_every_arm():
    from core.runs import multiarm_runs

    world, test, meta = _stored_run(2_000, 1)
    out = multiarm_runs.score_export(test, world.arms)
    assert list(out.columns) == ["row", "arm", "outcome", "uplift arm 1", "uplift arm 2"]
    assert (out["arm"] == np.asarray(world.arms)[world.t[:600]]).all()
    html = multiarm_runs.multiarm_report(meta, test, world, cost=[0.01, 0.02], figures=[])
    for text in ("Takeaway", "best-arm rule", "Policies", "everyone: arm 2", "Calibration",
                 "AUUC@30 %"):
        assert text in html


def test_comparison_report_adds_the_per_arm_run():
    from core.runs import multiarm_runs
    from core.runs.report import comparison_report

    world, test, meta = _stored_run(1_000, 2)
    sections = multiarm_runs.multiarm_sections(meta, test, world, cost=[0.0, 0.0], figures=[])
    html = comparison_report("t", takeaway="x", several_arms=sections)
    assert "Several arms: which treatment for whom" in html
    assert "Not drawn: every arm is free" in html and "everyone: arm 1" in html
    assert "Several arms" not in comparison_report("t", takeaway="x")


def test_hillstrom_three_arms_on_the_data_page(shared_data):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "hillstrom_arms", "outcome": "visit"})
    assert_clean(at.run())
    arms = next(d.value for d in at.dataframe if "designed share" in d.value.columns)
    # ../shared/data/SOURCES.md: No E-Mail 21,306, Womens 21,387, Mens 21,307.
    assert arms["rows"].to_dict() == {"No E-Mail": 21_306, "Womens E-Mail": 21_387,
                                      "Mens E-Mail": 21_307}
    p = stats.chisquare([21_306, 21_387, 21_307]).pvalue
    assert any(f"p = {p:.3f}" in str(s.value) for s in at.success)
    assert_clean(at.switch_page("pages/train.py").run())
    assert "Uplift forest per arm (0/1 only)" in at.multiselect(key="ma_models").options
    assert_clean(at.switch_page("pages/compare.py").run())
    assert any("No per-arm models yet" in str(i.value) for i in at.info)


def test_report_takeaway_is_plain_text_with_costs_and_the_calibration_caveat():
    import html as html_lib
    import re
    from datetime import datetime, timezone

    from core.runs import multiarm_runs

    world, test, meta = _stored_run(3_000, 4)  # random scores: no signal
    cost = [0.5, 0.25]
    page = multiarm_runs.multiarm_report(
        meta, test, world, cost=cost, figures=[],
        generated_at=datetime(2026, 11, 26, 11, 22, 43, tzinfo=timezone.utc))
    assert "Generated 2026-11-26 11:22 UTC" in page
    text = html_lib.unescape(page[page.index("<h2>Takeaway</h2>"):
                                  page.index("<h2>Experiment</h2>")])
    assert "*" not in text  # no raw markdown
    assert "best-arm rule is worth" in text
    assert (f"{world.arms[0]} (control) 0, {world.arms[1]} 0.5, {world.arms[2]} 0.25"
            in text)
    # the slopes and SEs are the per-arm table's (tested with the calibration code); here the
    # rule |slope| < 2 SE and the words of the caveat are checked
    arms = multiarm_runs.arm_summary(test, world.arms)
    flat = [a for a, r in arms.iterrows()
            if abs(r["calibration slope"]) < 2 * r["slope SE"]]
    assert flat, "random scores should leave some slope near 0"
    assert "cannot tell who benefits from" in text
    for arm in flat:
        assert arm in text.split("Calibration:")[1]

    # tables as the comparison report writes them: counts with separators, 4 decimals,
    # shares in per cent, and the arm-share column named by the arms
    cells = [html_lib.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", page)]
    counts = np.bincount(world.t)
    for k, arm in enumerate(world.arms):
        assert f"{counts[k]:,}" in cells
        assert f"{world.y[world.t == k].mean():.4f}" in cells
        assert f"{counts[k] / world.n * 100:.1f} %" in cells
    assert f"arm shares ({' / '.join(world.arms)})" in cells
    assert not [c for c in cells if re.fullmatch(r"-?\d\.\d{5,}", c)]  # no 6-digit floats



def test_calibration_caveat_names_exactly_the_arms_within_two_standard_errors_of_0():
    """|slope| < 2 SE, by hand: 0.1 ± 0.06 is flat (0.1 < 0.12), 0.13 ± 0.06 is not; a NaN
    slope (no responder) is flat; no flat arm, no caveat."""
    import pandas as pd

    from core.runs.multiarm_runs import calibration_caveat

    def table(rows):
        return pd.DataFrame(rows, index=["calibration slope", "slope SE"]).T

    mixed = calibration_caveat(table({"A": [0.1, 0.06], "B": [0.13, 0.06]}))
    assert "A (0.10 ± 0.06)" in mixed and "B" not in mixed
    every = calibration_caveat(table({"A": [0.1, 0.06], "C": [float("nan"), 0.1]}))
    assert every.startswith("Calibration: every arm's slope") and "C (slope undefined)" in every
    assert "nan" not in every
    assert calibration_caveat(table({"B": [0.13, 0.06], "D": [-0.5, 0.2]})) == ""


def test_policy_table_random_arm_and_paired_comparison_by_brute_force():
    """The random arm's value is the mean of the single-arm values (its expectation, no
    draw); each policy's net value minus the rule's has the SE of the per-row differences,
    computed here row by row."""
    from core.runs import multiarm_runs

    world, test, meta = _stored_run(3_000, 4)
    cost = np.array([0.01, 0.03])
    table = multiarm_runs.policy_table(test, world.arms, meta["design"], cost)
    singles = table[table.index.str.startswith("everyone: ")]
    assert table.loc["random arm", "value"] == pytest.approx(singles["value"].mean())
    assert table.loc["random arm", "cost"] == pytest.approx(np.r_[0.0, cost].mean())
    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    design = np.asarray(meta["design"])
    rule = best_arm_policy(test[["tau_1", "tau_2"]].to_numpy(), cost)
    full = np.r_[0.0, cost]

    def net_terms(arm_of_row):
        return np.array([(t[i] == arm_of_row[i]) * y[i] / design[t[i]] - full[arm_of_row[i]]
                         for i in range(len(y))])

    for k, arm in enumerate(world.arms):
        d = net_terms(np.full(len(y), k)) - net_terms(rule)
        row = table.loc[f"everyone: {arm}"]
        assert row[multiarm_runs.VS_RULE] == pytest.approx(d.mean())
        assert row[multiarm_runs.VS_RULE_SE] == pytest.approx(d.std(ddof=1) / np.sqrt(len(y)))
    # the rule against itself is no comparison: missing ("—"), not 0 ± 0
    assert table.loc[multiarm_runs.RULE, [multiarm_runs.VS_RULE, multiarm_runs.VS_RULE_SE]
                     ].isna().all()


def test_policy_takeaway_judges_by_the_paired_standard_error():
    """Hillstrom visit's case (Two-model, seed 0): the rule 0.1711, everyone-Mens 0.1853;
    √(SE₁² + SE₂²) = 0.0072 would call a −0.0142 difference noise, its paired SE 0.0048
    does not."""
    from core.runs import multiarm_runs

    def table(paired_se):
        return pd.DataFrame(
            {"net value": [0.1711, 0.1075, 0.1853], "± SE": [0.0050, 0.0040, 0.0052],
             multiarm_runs.VS_RULE: [np.nan, -0.0636, 0.0142],
             multiarm_runs.VS_RULE_SE: [np.nan, 0.0063, paired_se]},
            index=[multiarm_runs.RULE, "everyone: No E-Mail", "everyone: Mens E-Mail"])

    worse = multiarm_runs.policy_takeaway(table(0.0048), markdown=False)
    assert "is worse than it" in worse
    # the sentence's difference has the table's sign: Mens minus the rule, +0.0142
    assert 'its net value minus the rule\'s: +0.0142, the table\'s "vs rule" column' in worse
    assert "not distinguishable" in multiarm_runs.policy_takeaway(table(0.0072),
                                                                   markdown=False)


def test_a_per_arm_ranker_is_said_to_give_scores_not_uplifts_beside_its_costs():
    """LambdaMART-PCG per arm fits an order, not amounts: the page and the report say that
    its predicted uplift, cost rule and calibration read scores as amounts; a two-model run
    (uplifts in outcome units) gets no such warning."""
    from core.runs import multiarm_runs

    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    _open_world(at)
    assert_clean(at.switch_page("pages/train.py").run())
    model = "LambdaMART-PCG per arm (0/1 only)"
    at.multiselect(key="ma_models").set_value([model])
    at.select_slider(key="ma_trees").set_value(50)
    assert_clean(at.button(key="ma_train").click().run())
    assert_clean(at.switch_page("pages/compare.py").run())
    deadline = time.time() + 180
    while time.time() < deadline and not any("net value" in d.value.columns
                                             for d in at.dataframe):
        time.sleep(1)
        assert_clean(at.run())
    warnings = [str(w.value) for w in at.warning]
    assert f"{model} ranks customers" in " ".join(warnings)
    assert multiarm_runs.score_scale_caveat(model) in warnings
    assert multiarm_runs.score_scale_caveat("Two-model per arm") == ""
    for name, (cls, _) in multiarm_runs.MULTIARM_MODELS.items():  # every ranker, only them
        assert bool(multiarm_runs.score_scale_caveat(name)) == (cls == "LambdaMARTUplift")
