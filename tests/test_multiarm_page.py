"""The Several arms page (AppTest): train per-arm models on the K-arm world through the page;
the policy table's values equal policy_value computed here on the stored test rows."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from _apptest import assert_clean
from streamlit.testing.v1 import AppTest

from core.evaluation import best_arm_policy, policy_value

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_train_on_the_world_and_read_the_policies():
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page("pages/multiarm.py").run())
    at.selectbox(key="ma_source").set_value("world")
    assert_clean(at.run())
    at.selectbox(key="ma_model").set_value("Two-model per arm")
    at.select_slider(key="ma_trees").set_value(50)
    assert_clean(at.button(key="ma_train").click().run())
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
    import os

    from core.runs import RunStore, multiarm_runs

    key = multiarm_runs.multiarm_spec("world", "Two-model per arm", trees=50).key()
    meta, frames = RunStore(os.environ["UPRANK_RUNS_DIR"]).load_result(key)
    test = frames["test"]
    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    prop = np.tile(meta["design"], (len(y), 1))
    tau = test[["tau_1", "tau_2", "tau_3"]].to_numpy()
    cost = np.array(meta["cost"])
    v, se = policy_value(best_arm_policy(tau, cost), y, t, prop)
    row = table.loc["best arm per customer (model)"]
    assert row["value"] == pytest.approx(v, abs=1e-4) and row["± SE"] == pytest.approx(
        se, abs=1e-4)
    assert len(table) == 6  # best arm, four single arms, random
    assert any("Calibration slope" in str(c.value) for c in at.caption)
