"""The Ranking lab pages (AppTest): Ranking data, Ranking runs, Ranking compare, P-nDCG
explorer.  Numbers on the pages are checked against values computed here independently:
the world's designed share of queries without a relevant document, per-query AUC by brute
force over document pairs, scipy's paired t-test, and the P-nDCG post's worked examples."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _apptest import assert_clean, assert_only_error
from scipy import stats
from streamlit.testing.v1 import AppTest

from core.data import LTRData, list_ranking_uploads
from core.runs import RunStore, ltr_runs
from core.runs.ltr_runs import RankingSource
from ui import ranking_view as view

APP = str(Path(__file__).resolve().parents[1] / "app.py")
WORLD = {"n_queries": 100, "no_relevant_share": 0.5, "random_state": 0}
PROB, PROB_BINARY = "probability (P-nDCG)", "probability, grade > 0 = 1"


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
    # documents per query, counted here from the qid fields of the fold's files: the test
    # split's median is 14.5 (an even number of queries) and is shown so, not as 15
    import collections
    import gzip
    import json
    import re

    table = next(d for d in at.dataframe if "docs per query (median)" in d.value.columns)
    for name, split in view.SPLIT_LABELS.items():
        with gzip.open(shared_data / "mq2008_fold1" / f"{name}.txt.gz", "rt") as lines:
            sizes = collections.Counter(re.search(r"qid:(\S+)", line)[1] for line in lines)
        assert table.value.loc[split, "docs per query (median)"] == np.median(
            list(sizes.values()))
    config = json.loads(table.proto.columns)
    assert config["docs per query (median)"]["type_config"]["format"] == "localized"


def test_data_page_world_has_its_designed_share_without_relevant_documents():
    at = _world(_open("pages/ranking_data.py"))
    metrics = {m.label: (m.value, m.delta) for m in at.metric}
    assert metrics["Queries"][0] == "100"
    # 50 of the 100 queries: round(0.5 · 100)
    assert metrics["No relevant doc"] == ("50", "50% of the queries")
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
    table = next(d.value for d in at.dataframe if PROB in d.value.index)
    # The table names the discounts as the chart does, not by their code names.
    assert list(table.index) == ["log2 (standard nDCG)", "Zipf 1/i", "Zipf-β 1/iᵝ", PROB]
    ndcg_col = next(c for c in table.columns if c.lower().startswith("ndcg"))
    # Wong (2019): y = [1, 0, 1], p = [0.9, 0.8, 0.1]: P-nDCG 1.0 / 1.7, nDCG 0.920.
    assert table.loc[PROB, ndcg_col] == pytest.approx(1.0 / 1.7, abs=1e-3)
    assert table.loc["log2 (standard nDCG)", ndcg_col] == pytest.approx(
        (1 + 1 / np.log2(4)) / (1 + 1 / np.log2(3)), abs=1e-3)
    assert_clean(at.button(key="pn_ex_1").click().run())
    table = next(d.value for d in at.dataframe if PROB in d.value.index)
    assert table.loc[PROB, ndcg_col] == pytest.approx(1.6 / 1.7, abs=1e-3)


def test_p_ndcg_explorer_takes_a_query_of_a_run(monkeypatch, tmp_path):
    """A run's test query in the explorer: its P-nDCG is the run's per-query P-nDCG
    (two code paths: the vectorised per-query table and the one-list discount table)."""
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path / "runs"))
    at = _train_two(_world(_open("pages/ranking_data.py")))
    at.switch_page("pages/p_ndcg.py")
    assert_clean(at.run())
    qid = at.selectbox(key="pn_qid").value
    assert_clean(at.button(key="pn_use_query").click().run())
    table = next(d.value for d in at.dataframe if PROB in d.value.index)
    store = RunStore(tmp_path / "runs")
    key = at.selectbox(key="pn_qrun").value
    s = ltr_runs.load_ranking_run(store, key)[1]["scores"]
    from core.evaluation import per_query_metrics

    expected = per_query_metrics(s["relevance"], s["score"], s["qid"]).loc[qid, "p_ndcg"]
    row = PROB_BINARY if PROB_BINARY in table.index else PROB
    assert table.loc[row, "nDCG"] == pytest.approx(expected, abs=2e-4)



# ------------------------------------------------------------------ uploads on Ranking data
def _letor(queries: int, grades=(2, 0, 1)) -> bytes:
    return b"".join(f"{g:g} qid:{q + 1} 1:{0.1 + q / 10 + i / 100:.3f} 2:{i}\n".encode()
                    for q in range(queries) for i, g in enumerate(grades))


def _upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.radio(key="rk_kind").set_value("upload")
    assert_clean(at.run())
    return at.file_uploader(key="rk_file").set_value((name, content, "text/plain")).run()


@pytest.mark.parametrize("queries", [1, 2])
def test_upload_with_too_few_queries_keeps_the_dataset_and_stores_nothing(queries):
    at = _world(_open("pages/ranking_data.py"))
    world = RankingSource.make("world", **WORLD).label()
    assert_only_error(_upload(at, "few.txt", _letor(queries)),
                      f"needs at least 3 queries for its 60/20/20 split")
    assert f"this file has {queries} quer" in at.error[0].value
    assert [s.value for s in at.subheader] == [world]  # the previous dataset stays in use
    assert any(world in c.value and "still uses" in c.value for c in at.caption)
    assert list_ranking_uploads() == []  # nothing stored, nothing to reopen
    at.switch_page("pages/ranking_runs.py")
    assert_clean(at.run())
    assert any(world in c.value for c in at.caption)


def test_runs_page_falls_back_from_an_unsplittable_upload_in_the_session():
    """A session holding an upload the lab cannot split (e.g. stored by an older version):
    Ranking runs says so and works on the default dataset, no traceback."""
    at = _world(_open("pages/ranking_data.py"))
    one = LTRData(X=[[0.1], [0.2], [0.3]], relevance=[1, 0, 2], qid=[5, 5, 5], name="one.txt")
    at.session_state["rk_source"] = RankingSource.make(
        "upload", fingerprint=one.fingerprint(), name="one.txt")
    at.session_state["rk_upload"] = one
    at.switch_page("pages/ranking_runs.py")
    assert_clean(at.run())
    assert any("this file has 1 query" in w.value for w in at.warning)
    assert not any("one.txt" in c.value for c in at.caption)


def test_runs_page_lists_its_jobs_when_the_data_cannot_be_read(monkeypatch):
    """When the lab's data fails to load, Ranking runs names the failure and still lists its
    ranking jobs (here one a restart interrupted), so a job can be followed, cancelled or
    dismissed; jobs of other kinds stay off the list."""
    import json
    import os

    import streamlit as st

    from core.data import DataError
    from core.runs import label_runs
    from core.runs.tasks import TaskSpec

    root = Path(os.environ["UPRANK_RUNS_DIR"])
    for i, (target, label) in enumerate([(ltr_runs.TASK, "Lost ranking run"),
                                         (label_runs.TASK, "Lost label experiment")]):
        task = TaskSpec.make(target, {"i": i}, label=label)
        folder = root / "_jobs" / f"job{i}"
        folder.mkdir(parents=True)
        (folder / "job.json").write_text(json.dumps({
            "job_id": folder.name, "kind": "task", "run_id": task.key(), "label": task.label,
            "data_name": None, "submitted": float(i), "config": task.to_dict()}))

    def unreadable(*args, **kwargs):
        raise DataError("The ranking file is damaged.")

    monkeypatch.setattr(ltr_runs, "load_splits", unreadable)
    st.cache_data.clear()  # an earlier test's splits must not hide the failure
    at = AppTest.from_file(APP, default_timeout=120).run()
    at = assert_only_error(at.switch_page("pages/ranking_runs.py").run(), "damaged")
    titles = [m.value for m in at.markdown if "— interrupted" in str(m.value)]
    assert titles == ["**Lost ranking run** — interrupted"]
    assert not any("Train" == b.label for b in at.button)  # nothing to train on
    assert_only_error(at.button(key="rk_cancel_job0").click().run(), "damaged")  # Dismiss
    assert not [m for m in at.markdown if "— interrupted" in str(m.value)]
    assert "No ranking jobs." in [c.value for c in at.caption]


def test_three_query_upload_with_odd_grades_warns_and_counts_queries_in_words():
    at = _open("pages/ranking_data.py")
    content = _letor(3, grades=(2.5, 0, 1))  # 3 of 9 documents have grade 2.5
    assert_clean(_upload(at, "frac.txt", content))
    assert [s.value for s in at.subheader] == ["Upload: frac.txt"]
    warnings = " ".join(w.value for w in at.warning)
    assert "3 of 9 documents have a grade that is not a whole number (e.g. 2.5)" in warnings
    assert "lambdarank" in warnings
    queries = next(d.value for d in at.dataframe if "relevant documents" in d.value.columns)
    assert list(queries.columns) == ["query", "documents", "relevant documents",
                                     "highest grade"]
    assert queries["documents"].tolist() == [3]  # 60/20/20 of 3 queries: 1 training query
    at.switch_page("pages/ranking_runs.py")
    assert_clean(at.run())
    text = " ".join(c.value for c in at.caption)
    assert "on the 1 validation query," in text and "on the 1 test query." in text


@pytest.mark.parametrize("grade, expected", [(0, "same grade, 0: no query has a relevant"),
                                             (1, "same grade, 1: every document is equally")])
def test_upload_with_a_single_grade_warns(grade, expected):
    at = _open("pages/ranking_data.py")
    assert_clean(_upload(at, "flat.txt", _letor(3, grades=(grade,) * 3)))
    assert any(expected in w.value for w in at.warning)


def test_upload_format_follows_the_file_extension():
    """A CSV is read as a table without touching *Format*; a LETOR file after it switches
    the format back; a CSV read as LETOR gets the hint to switch."""
    table = LTRData(X=[[0.1], [0.2], [0.3], [0.4], [0.5], [0.6]], relevance=[1, 0] * 3,
                    qid=[1, 1, 2, 2, 3, 3]).to_frame().to_csv(index=False).encode()
    at = _open("pages/ranking_data.py")
    assert_clean(_upload(at, "mine.csv", table))
    assert at.radio(key="rk_fmt").value == "table"
    assert [s.value for s in at.subheader] == ["Upload: mine.csv"]
    at.file_uploader(key="rk_file").set_value(("mine.txt", _letor(3), "text/plain"))
    assert_clean(at.run())
    assert at.radio(key="rk_fmt").value == "letor"
    assert_clean(at.file_uploader(key="rk_file").set_value(("other.csv", table, "text/csv"))
                 .run())
    assert at.radio(key="rk_fmt").value == "table"
    at.radio(key="rk_fmt").set_value("letor")  # the user's choice stands for this file
    assert_only_error(at.run(), 'switch Format to "CSV / Parquet"')
    assert "looks like the header of a CSV table" in at.error[0].value


# ------------------------------------------------------------------ Ranking compare
def _fake_runs(root: Path) -> dict[str, pd.DataFrame]:
    """Two stored runs on the WORLD source, written directly (no training): query
    "=cmd|q5" has 61 documents, 40 relevant; "q2" 2 documents, 1 relevant; "q3" none."""
    store = RunStore(root)
    fp = ltr_runs.data_fingerprint(RankingSource.make("world", **WORLD))
    qid = ["=cmd|q5"] * 61 + ["q2"] * 2 + ["q3"] * 2
    rel = np.r_[np.ones(40), np.zeros(21), [1.0, 0.0], [0.0, 0.0]]
    rng = np.random.default_rng(0)
    out = {}
    for i, model in enumerate(["LambdaMART λ-MAUC", "Pointwise regression"]):
        scores = pd.DataFrame({"qid": qid, "doc": [f"D{j}" for j in range(rel.size)],
                               "relevance": rel, "score": rel + rng.normal(size=rel.size)})
        meta = {"kind": ltr_runs.KIND, "model": model, "preset": "quick", "seed": 0,
                "fingerprint": fp, "chosen": 0.1, "chosen_name": "learning rate",
                "best_iteration": 5, "fit_seconds": 1.0,
                "created": f"2024-01-0{i + 1} 00:00:00"}
        store.save_result(f"{i + 1:016x}", meta, {"scores": scores, "history": pd.DataFrame(
            {"round": [1], "validation": [0.5]})})
        out[model] = scores
    return out


def test_compare_keeps_the_metric_family_and_shows_no_precision_above_one(monkeypatch,
                                                                          tmp_path):
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path / "runs"))
    _fake_runs(tmp_path / "runs")
    at = _world(_open("pages/ranking_data.py"))
    at.switch_page("pages/ranking_compare.py")
    assert_clean(at.run())
    assert_clean(at.number_input(key="rkc_k").set_value(100).run())
    # Query "=cmd|q5": 40 of 61 documents relevant, k_q = min(100, 61): P@100 = 40 / 61.
    # Its term of the macro P@100 is 40 / mean(61, 2, 2) = 1.85: not shown per query.
    tables = [d.value for d in at.dataframe if "P@100" in d.value.columns]
    assert len(tables) == 2  # the means, then the query explorer's table
    means, qm = tables
    assert "macro P@100" not in qm.columns and "micro P@100" not in qm.columns
    assert qm["P@100"].tolist() == [f"{40 / 61:.3f}"] * 2
    assert (qm.select_dtypes("number").fillna(0).to_numpy() <= 1).all()
    # Macro P@k over the queries (Welleck 2016): total hits / (C · Σ k_q) = 41 / 65.
    assert means["macro P@100"].tolist() == pytest.approx([41 / 65] * 2, abs=1e-4)
    # Cut-off change keeps the family: NDCG@100 → NDCG@5.
    assert_clean(at.selectbox(key="rkc_metric").set_value("ndcg").run())
    assert_clean(at.number_input(key="rkc_k").set_value(5).run())
    assert at.selectbox(key="rkc_metric").value == "ndcg"
    assert at.selectbox(key="rkc_metric").format_func("ndcg") == "NDCG@5"
    # Paired tests: "q3" has no relevant document, so NDCG pairs 2 of the 3 test queries.
    tests = next(d.value for d in at.dataframe if "p (corrected)" in d.value.columns)
    assert tests["queries"].tolist() == [2]
    assert any("use 2 of the 3 test queries" in c.value for c in at.caption)


def test_verdict_from_few_paired_queries_carries_a_caution():
    row = {"metric": "auc", "run_a": "A", "run_b": "B", "mean_a": 0.9, "mean_b": 0.5,
           "difference": 0.4, "n_queries": 2, "p_value": 0.045, "p_adjusted": 0.045,
           "significant": True, "winner": "A", "correction": "none", "n_pairs": 1}
    few = view.verdicts(pd.DataFrame([row]), "AUC")
    assert few[0][1] and "only 2 paired queries" in few[0][0]
    many = view.verdicts(pd.DataFrame([{**row, "n_queries": view.FEW_QUERIES}]), "AUC")
    assert "Careful" not in many[0][0]


def test_per_query_downloads_carry_the_query_id_and_escape_formulas(tmp_path):
    runs = _fake_runs(tmp_path)
    from core.evaluation import per_query_metrics
    from core.runs.export import safe_csv_bytes

    frames = {m: per_query_metrics(s["relevance"], s["score"], s["qid"], k=10)
              for m, s in runs.items()}
    back = pd.read_csv(io.BytesIO(safe_csv_bytes(view.long_frame(frames))))
    assert list(back.columns[:2]) == ["run", "qid"]
    assert back["qid"].tolist() == ["'=cmd|q5", "q2", "q3"] * 2  # neutralised, not dropped
    assert "term of macro p@10" in back.columns and "p_macro@10" not in back.columns
    one = pd.read_csv(io.BytesIO(view.per_query_csv(frames["Pointwise regression"])))
    assert one["qid"].tolist() == ["'=cmd|q5", "q2", "q3"]
    assert one["p_ndcg"].tolist() == pytest.approx(
        frames["Pointwise regression"]["p_ndcg"].tolist(), nan_ok=True)


def test_ranking_compare_preselects_the_papers_pair_then_the_newest_runs():
    import pandas as pd

    from ui.ranking_view import DEFAULT_MODELS, preselected_runs

    table = pd.DataFrame({"key": list("abcdefg"),  # newest first
                          "model": ["Pointwise", "LambdaMART λ-NDCG", "Linear pairwise AUC",
                                    "LambdaMART λ-MAP", "LambdaMART λ-MAUC",
                                    "Linear pairwise AUC", "LambdaMART λ-MAUC"]})
    assert DEFAULT_MODELS == ("LambdaMART λ-MAUC", "Linear pairwise AUC")
    assert preselected_runs(table) == ["e", "c", "a", "b"]
    assert preselected_runs(table.iloc[:2]) == ["a", "b"]  # neither default model trained


def test_the_query_explorer_writes_an_undefined_metric_as_a_dash_not_none():
    """A query without a relevant document has no AUC or MAP: "—", as everywhere else."""
    from core.evaluation import per_query_metrics
    from ui.ranking_view import query_metrics

    rel, score, qid = [0, 0, 0, 1, 0, 2], [0.3, 0.2, 0.1, 0.9, 0.5, 0.7], [1, 1, 1, 2, 2, 2]
    frame = per_query_metrics(rel, score, qid, k=3)
    table = query_metrics({"run": frame}, 1, {"auc": "AUC", "p@3": "P@3"})
    assert table.loc["run", "AUC"] == "—"  # query 1: nothing relevant
    assert table.loc["run", "P@3"] == "0.000"  # defined: no relevant document in the top 3
    both = query_metrics({"run": frame}, 2, {"auc": "AUC"})
    # query 2: the relevant documents (0.9, 0.7) above the irrelevant one (0.5): AUC 1
    assert both.loc["run", "AUC"] == "1.000"


def test_the_paired_note_names_only_the_reason_that_applies_to_the_metric():
    """AUC and MAUC need a relevant and an irrelevant document; MAP, NDCG, P-nDCG only a
    relevant one — the caption said both reasons for every metric."""
    import pandas as pd

    from ui.ranking_view import paired_note

    frames = {"a": pd.DataFrame(index=range(10)), "b": pd.DataFrame(index=range(10))}
    tests = pd.DataFrame({"n_queries": [7]})
    assert "(no relevant document, or only relevant ones)" in paired_note(frames, tests, "AUC")
    for label in ("MAP", "NDCG@10", "P-nDCG"):
        note = paired_note(frames, tests, label)
        assert "7 of the 10 test queries" in note
        assert "(no relevant document)" in note and "only relevant" not in note
