"""The Ranking lab pages (AppTest): Ranking data, Ranking runs, Ranking compare, P-nDCG
explorer.  Numbers on the pages are checked against values computed here independently:
the world's designed share of queries without a relevant document, per-query AUC by brute
force over document pairs, scipy's paired t-test, and the P-nDCG post's worked examples."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from _apptest import assert_clean
from scipy import stats
from streamlit.testing.v1 import AppTest

from core.runs import RunStore, ltr_runs
from core.runs.ltr_runs import RankingSource

APP = str(Path(__file__).resolve().parents[1] / "app.py")
WORLD = {"n_queries": 100, "no_relevant_share": 0.5, "random_state": 0}


def _open(page: str) -> AppTest:
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    return assert_clean(at.switch_page(page).run())


def _world(at: AppTest) -> AppTest:
    at.radio(key="rk_kind").set_value("world")
    assert_clean(at.run())
    at.select_slider(key="rk_wq").set_value(WORLD["n_queries"])
    at.slider(key="rk_wshare").set_value(WORLD["no_relevant_share"])
    return assert_clean(at.run())


def _brute_auc(rel, score):
    pos, neg = score[rel > 0], score[rel == 0]
    if pos.size == 0 or neg.size == 0:
        return np.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (pos.size * neg.size)


def test_data_page_shows_mq2008_by_default(shared_data):
    at = _open("pages/ranking_data.py")
    metrics = {m.label: m.value for m in at.metric}
    # SOURCES.md: fold 1 = 471 + 157 + 156 queries, 9,630 + 2,707 + 2,874 documents.
    assert metrics["Queries"] == "784" and metrics["Documents"] == "15,211"
    assert metrics["Features"] == "46"


def test_data_page_world_has_its_designed_share_without_relevant_documents():
    at = _world(_open("pages/ranking_data.py"))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Queries"] == "100"
    assert metrics["Without a relevant document"] == "50 (50%)"  # round(0.5 · 100)
    table = next(d.value for d in at.dataframe if "queries without a relevant doc" in
                 d.value.columns)
    assert table["queries"].sum() == 100


def test_upload_mode_waits_for_a_file():
    at = _open("pages/ranking_data.py")
    assert_clean(at.radio(key="rk_kind").set_value("upload").run())
    assert any("Upload a file" in str(i.value) for i in at.info)


def _train_two(at: AppTest) -> AppTest:
    at.switch_page("pages/ranking_runs.py")
    assert_clean(at.run())
    at.multiselect(key="rk_models").set_value(["LambdaMART λ-MAUC", "Pointwise regression"])
    assert_clean(at.run())
    assert_clean(at.button(key="rk_train").click().run())
    deadline = time.time() + 180
    while time.time() < deadline:
        time.sleep(1)
        assert_clean(at.run())
        table = [d.value for d in at.dataframe if "model" in d.value.columns]
        if table and len(table[0]) == 2:
            return at
    pytest.fail("the two ranking runs did not finish")


def test_train_two_rankers_then_compare_per_query(monkeypatch, tmp_path):
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path / "runs"))
    at = _train_two(_world(_open("pages/ranking_data.py")))
    at.switch_page("pages/ranking_compare.py")
    assert_clean(at.run())
    means = next(d.value for d in at.dataframe if "MAUC" in d.value.columns)
    assert set(means.index) == {"LambdaMART λ-MAUC", "Pointwise regression"}
    # Recompute from the stored test scores: brute-force AUC per query, mean over the
    # queries where it is defined.
    store = RunStore(tmp_path / "runs")
    fp = ltr_runs.data_fingerprint(RankingSource.make("world", **WORLD))
    per_run = {}
    for _, row in ltr_runs.list_ranking_runs(store, fp).iterrows():
        s = ltr_runs.load_ranking_run(store, row["key"])[1]["scores"]
        per_run[row["model"]] = np.array([_brute_auc(g["relevance"].to_numpy(),
                                                     g["score"].to_numpy())
                                          for _, g in s.groupby("qid", sort=False)])
    for model, values in per_run.items():
        assert means.loc[model, "AUC"] == pytest.approx(np.nanmean(values), abs=1e-4)
    # The paired t-test on AUC (two runs: no correction) equals scipy's on the same queries.
    at.selectbox(key="rkc_metric").set_value("auc")
    at.radio(key="rkc_test").set_value("t-test")
    assert_clean(at.run())
    tests = next(d.value for d in at.dataframe if "p (corrected)" in d.value.columns)
    a, b = per_run[tests["run A"].iloc[0]], per_run[tests["run B"].iloc[0]]
    ok = ~np.isnan(a) & ~np.isnan(b)
    expected = stats.ttest_rel(a[ok], b[ok]).pvalue
    assert tests["p"].iloc[0] == pytest.approx(expected, rel=1e-6)
    assert tests["p (corrected)"].iloc[0] == pytest.approx(expected, rel=1e-6)
    verdicts = [str(m.value) for m in [*at.success, *at.info] if "AUC" in str(m.value)]
    assert any(("beats" in v or "No significant difference" in v) and "p" in v
               for v in verdicts)
    # Query explorer: the first query's list is in the run's score order.
    lists = [d.value for d in at.dataframe if "position" in d.value.columns]
    assert len(lists) == 2 and all(np.all(np.diff(li["score"]) <= 0) for li in lists)


def test_p_ndcg_explorer_reproduces_the_posts_worked_examples():
    at = _open("pages/p_ndcg.py")
    table = next(d.value for d in at.dataframe if "probability" in d.value.index)
    ndcg_col = next(c for c in table.columns if c.lower().startswith("ndcg"))
    # Wong (2019): y = [1, 0, 1], p = [0.9, 0.8, 0.1]: P-nDCG 1.0 / 1.7, nDCG 0.920.
    assert table.loc["probability", ndcg_col] == pytest.approx(1.0 / 1.7, abs=1e-3)
    assert table.loc["log2", ndcg_col] == pytest.approx((1 + 1 / np.log2(4)) /
                                                        (1 + 1 / np.log2(3)), abs=1e-3)
    assert_clean(at.button(key="pn_ex_1").click().run())
    table = next(d.value for d in at.dataframe if "probability" in d.value.index)
    assert table.loc["probability", ndcg_col] == pytest.approx(1.6 / 1.7, abs=1e-3)


def test_p_ndcg_explorer_takes_a_query_of_a_run(monkeypatch, tmp_path):
    """A run's test query in the explorer: its P-nDCG is the run's per-query P-nDCG
    (two code paths: the vectorised per-query table and the one-list discount table)."""
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path / "runs"))
    at = _train_two(_world(_open("pages/ranking_data.py")))
    at.switch_page("pages/p_ndcg.py")
    assert_clean(at.run())
    qid = at.selectbox(key="pn_qid").value
    assert_clean(at.button(key="pn_use_query").click().run())
    table = next(d.value for d in at.dataframe if "probability" in d.value.index)
    store = RunStore(tmp_path / "runs")
    key = at.selectbox(key="pn_qrun").value
    s = ltr_runs.load_ranking_run(store, key)[1]["scores"]
    from core.evaluation import per_query_metrics

    expected = per_query_metrics(s["relevance"], s["score"], s["qid"]).loc[qid, "p_ndcg"]
    row = "probability_binary" if "probability_binary" in table.index else "probability"
    assert table.loc[row, "nDCG"] == pytest.approx(expected, abs=2e-4)

