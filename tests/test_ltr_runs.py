"""Ranking-lab runs (core.runs.ltr_runs): one code path for the app's background runs and
bench.letor — data sources, model selection on the validation split, stored results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from core.data import LTRData, make_ltr_world, split_queries
from core.evaluation.metrics import mauc
from core.models import LambdaMARTRanker
from core.runs import JobRunner, RunStore, ltr_runs
from core.runs.ltr_runs import RANKING_MODELS, RankingSource

WORLD = {"n_queries": 60, "no_relevant_share": 0.3, "random_state": 0}


@pytest.fixture(scope="module")
def world_splits():
    return ltr_runs.load_splits(RankingSource.make("world", **WORLD))


def test_world_source_is_the_seeded_world_split_by_queries(world_splits):
    direct = split_queries(make_ltr_world(**WORLD), random_state=0)
    for split in ("train", "vali", "test"):
        np.testing.assert_array_equal(world_splits[split].relevance, direct[split].relevance)
        np.testing.assert_array_equal(world_splits[split].qid, direct[split].qid)
    queries = [set(np.unique(world_splits[s].qid)) for s in ("train", "vali", "test")]
    assert not (queries[0] & queries[1] or queries[0] & queries[2] or queries[1] & queries[2])


def test_source_label_and_round_trip():
    src = RankingSource.make("world", **WORLD)
    assert RankingSource.from_dict(src.to_dict()) == src
    assert "60 queries" in src.label() and "30%" in src.label()
    assert RankingSource.make("mq2008", fold=2).label() == "LETOR 4.0 MQ2008, fold 2"
    with pytest.raises(ValueError, match="kind must be one of"):
        RankingSource.make("yahoo")


def test_train_ranker_picks_the_best_validation_candidate(world_splits):
    """The paper preset fits every learning rate; the kept one has the best validation
    MAUC, and its test scores are the kept model's predictions."""
    fit = ltr_runs.train_ranker("LambdaMART λ-MAUC", world_splits, preset="paper")
    assert set(fit.vali) == {0.1, 0.25, 0.5, 0.9}  # Welleck (2016)'s grid
    assert fit.value == max(fit.vali, key=fit.vali.get)
    vali = world_splits["vali"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Refit the kept candidate by hand: same validation curve, same test scores.
        model = LambdaMARTRanker("mauc", n_estimators=500, learning_rate=fit.value,
                                 num_threads=1, random_state=0)
        model.fit(world_splits["train"].X, world_splits["train"].relevance,
                  world_splits["train"].qid, eval_set=(vali.X, vali.relevance, vali.qid),
                  early_stopping_rounds=50, eval_metric="mauc")
        assert mauc(vali.relevance, model.predict(vali.X), group=vali.qid) == pytest.approx(
            fit.vali[fit.value], rel=1e-6)
    np.testing.assert_allclose(fit.test_score, model.predict(world_splits["test"].X))
    assert fit.best_iteration == model.best_iteration_ and len(fit.history) > 0


@pytest.mark.parametrize("name", list(RANKING_MODELS))
def test_every_model_trains_and_beats_random_on_the_world(name, world_splits):
    fit = ltr_runs.train_ranker(name, world_splits, preset="quick")
    test = world_splits["test"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert mauc(test.relevance, fit.test_score, group=test.qid) > 0.6  # random: 0.5


def test_progress_reports_rounds_of_the_asked_budget(world_splits):
    seen = []
    ltr_runs.train_ranker("LambdaMART λ-AUC", world_splits, preset="quick",
                          progress=lambda f, text: seen.append((f, text)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 0 < fractions[0] and fractions[-1] <= 1
    assert "round 1/100" in seen[0][1]


def test_task_stores_test_scores_and_is_listed_per_dataset(tmp_path):
    store = RunStore(tmp_path)
    src = RankingSource.make("world", **WORLD)
    fp = ltr_runs.data_fingerprint(src)
    spec = ltr_runs.ranking_spec(src, fp, "Pointwise regression")
    assert spec.trains  # its job ends "Trained in … s", as a run on the Train page does
    meta, frames = ltr_runs.ranking_task(spec.params_dict, inputs={}, store=store,
                                         progress=lambda f, t: None)
    store.save_result(spec.key(), meta, frames)
    splits = ltr_runs.load_splits(src)
    scores = frames["scores"]
    assert len(scores) == splits["test"].n_rows
    np.testing.assert_array_equal(scores["relevance"], splits["test"].relevance)
    assert "truth" in scores  # the world's known relevance travels with the run
    table = ltr_runs.list_ranking_runs(store, fp)
    assert table["key"].tolist() == [spec.key()] and table["model"].tolist() == [
        "Pointwise regression"]
    assert ltr_runs.list_ranking_runs(store, "other").empty
    # the chosen setting reads as the budget's description writes it ("α = 0.0001")
    linear = ltr_runs.ranking_spec(src, fp, "Linear pairwise AUC")
    meta, frames = ltr_runs.ranking_task(linear.params_dict, inputs={}, store=store,
                                         progress=lambda f, t: None)
    store.save_result(linear.key(), meta, frames)
    alpha = ltr_runs.RANKING_PRESETS["quick"].alphas[0]
    listed = ltr_runs.list_ranking_runs(store, fp).set_index("model")["chosen"]
    assert listed["Linear pairwise AUC"] == f"α = {alpha:g}" == "α = 0.0001"
    assert f"(linear: {listed['Linear pairwise AUC']})" in ltr_runs.RANKING_PRESETS[
        "quick"].description
    _, loaded = ltr_runs.load_ranking_run(store, spec.key())
    np.testing.assert_allclose(loaded["scores"]["score"], scores["score"])


def test_uploaded_data_runs_in_the_worker(tmp_path):
    """An upload travels to the worker as arrays and is split there like the world."""
    data = make_ltr_world(40, random_state=3)
    upload = LTRData(X=data.X, relevance=data.relevance, qid=data.qid, ids=data.ids,
                     name="mine.txt")
    src = RankingSource.make("upload", fingerprint=upload.fingerprint(), name="mine.txt")
    with JobRunner(store=tmp_path) as runner:
        job = ltr_runs.submit_ranking_run(runner, src, "Linear pairwise AUC", data=upload)
        status = runner.wait(job, timeout=120)
        assert status.state == "done", status.message
        meta, frames = ltr_runs.load_ranking_run(runner.store, status.run_id)
    expected = ltr_runs.load_splits(src, upload)["test"]
    assert frames["scores"]["qid"].tolist() == np.asarray(expected.qid).astype(str).tolist()
    assert meta["fingerprint"] == upload.fingerprint() and meta["dataset"] == "Upload: mine.txt"
    with pytest.raises(ValueError, match="needs the data"):
        ltr_runs.submit_ranking_run(runner, src, "Linear pairwise AUC")



def _three_queries(grades) -> dict:
    """3 queries × 8 documents split 60/20/20: one training query of 8 documents."""
    rng = np.random.default_rng(0)
    rel = np.tile(np.asarray(grades, dtype=float), 3)
    data = LTRData(X=rng.random((rel.size, 3)), relevance=rel, qid=np.repeat([1, 2, 3], 8))
    return split_queries(data, random_state=0)


def test_too_little_data_for_trees_trains_as_lightgbms_own_lambdarank():
    """8 training documents: LightGBM's pre-filter keeps no feature (20 rows per leaf).  Its
    own lambdarank then grows one-leaf trees; a λ-objective made LightGBM fail its check
    "num_features() > 0" (a sentence said so) — it now trains the same way."""
    splits = _three_queries([0, 2, 2, 0, 1, 1, 0, 1])
    assert (splits["train"].n_rows, splits["train"].n_queries) == (8, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = ltr_runs.train_ranker("LambdaMART λ-NDCG", splits)
        builtin = ltr_runs.train_ranker("LightGBM lambdarank (built-in)", splits)
    for run in (own, builtin):
        assert np.isfinite(run.test_score).all()
        assert np.ptp(run.test_score) == 0  # a constant ranking: no split was possible


@pytest.mark.parametrize("grade, what", [(0, "no training document is relevant"),
                                         (1, "every training document is equally relevant")])
@pytest.mark.parametrize("model", ["LambdaMART λ-MAUC", "Linear pairwise AUC"])
def test_a_single_training_grade_is_said_in_plain_numbers(grade, what, model):
    splits = _three_queries([grade] * 8)
    with pytest.raises(ValueError, match=f"Every training document has grade {grade}: {what}"
                       ) as err:
        ltr_runs.train_ranker(model, splits)
    assert "np.float64" not in str(err.value)


def test_a_preset_whose_settings_change_is_another_run():
    """A stored run of an earlier grid (the paper preset had no 0.9) is not served as a run
    of today's grid: the run's key holds the preset's settings, not only its name."""
    from dataclasses import replace

    source = RankingSource.make("mq2008", fold=1)
    before = ltr_runs.ranking_spec(source, "fp", "LambdaMART λ-MAUC", preset="paper").key()
    paper = ltr_runs.RANKING_PRESETS["paper"]
    ltr_runs.RANKING_PRESETS["paper"] = replace(paper, learning_rates=(0.1, 0.25, 0.5))
    try:
        after = ltr_runs.ranking_spec(source, "fp", "LambdaMART λ-MAUC", preset="paper").key()
    finally:
        ltr_runs.RANKING_PRESETS["paper"] = paper
    assert before != after
