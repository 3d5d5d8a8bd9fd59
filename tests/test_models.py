"""Tests for core.models.baselines: uplift learners, LambdaMART rankers, the linear AUC baseline.

Reference values are the SPEC §3 label table, hand formulas on constant features (where
every model must predict the arms' observed response-rate difference) and the known effect
τ(x) of ``make_uplift_world`` — never outputs of the code under test.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import core.objectives.lambdas
from core.data.synthetic import make_uplift_world
from core.evaluation.curves import auuc, random_auuc
from core.evaluation.metrics import auc, mauc
from core.models import (
    MODELS,
    RANKERS,
    DummyTreatment,
    FlippedLabel,
    LambdaMARTRanker,
    LambdaMARTUplift,
    LinearPairwiseAUC,
    PointwiseRanker,
    TrainingCancelled,
    TransformedOutcome,
    TwoModel,
    UpliftRandomForest,
    load_model,
    make_model,
    model_from_dict,
)

# Small, regularised trees: 60 rounds at 0.05 find the world's effect reliably in < 1 s.
LGB = dict(n_estimators=60, learning_rate=0.05, num_leaves=4, min_child_samples=100,
           num_threads=1, random_state=0)
FACTORIES = {
    "flipped": lambda: FlippedLabel(**LGB),
    "two_model": lambda: TwoModel(**LGB),
    "dummy": lambda: DummyTreatment(**LGB),
    "forest_ed": lambda: UpliftRandomForest(n_estimators=40, random_state=0),
    "forest_kl": lambda: UpliftRandomForest(n_estimators=40, criterion="kl", random_state=0),
    "lambdamart_pcg_separate_abs1": lambda: LambdaMARTUplift(**LGB),
    "lambdamart_pcg_joint_rel": lambda: LambdaMARTUplift(query="joint", labels="rel", **LGB),
}


@pytest.fixture(scope="module")
def train():
    return make_uplift_world(6_000, random_state=1)


@pytest.fixture(scope="module")
def test_data():
    return make_uplift_world(20_000, random_state=99)


@pytest.fixture(scope="module")
def fitted(train):
    return {name: make().fit(train.X, train.y, train.t) for name, make in FACTORIES.items()}


@pytest.fixture(scope="module")
def small():
    return make_uplift_world(1_500, random_state=5)


# --------------------------------------------------------------------------- learning
@pytest.mark.parametrize("name", FACTORIES)
def test_model_beats_random_on_the_uplift_world(name, fitted, test_data):
    score = fitted[name].predict(test_data.X)
    assert score.shape == (test_data.n,) and np.isfinite(score).all()
    assert np.corrcoef(score, test_data.tau)[0, 1] > 0.2
    model_auuc = auuc(test_data.y, test_data.t, score, definition="uplift_sep_rel")
    base = random_auuc(test_data.y, test_data.t, definition="uplift_sep_rel")
    assert model_auuc > base + 0.002


@pytest.mark.parametrize("metric", ["pcg", "pcg_cutoff", "dcg", "ndcg", "map"])
@pytest.mark.parametrize("query", ["separate", "joint"])
def test_every_uplift_metric_and_query_fits(metric, query, small):
    labels = "abs1" if metric in ("map", "ndcg") else "abs2"  # see LambdaMARTUplift notes
    k = 200 if metric == "pcg_cutoff" else None
    model = LambdaMARTUplift(metric, query=query, labels=labels, k=k, n_estimators=5,
                             learning_rate=0.1, num_threads=1, random_state=0)
    score = model.fit(small.X, small.y, small.t).predict(small.X)
    assert np.isfinite(score).all() and np.ptp(score) > 0


def test_models_accept_numpy_and_missing_values(small):
    X = small.X.copy()
    X.loc[::7, "history"] = np.nan
    X.loc[::11, "channel"] = np.nan
    for make in FACTORIES.values():
        model = clone(make()).set_params(n_estimators=5)
        assert np.isfinite(model.fit(X, small.y, small.t).predict(X)).all()
    numeric = small.X[["recency", "history", "age", "opens_90d"]].to_numpy()
    for make in FACTORIES.values():
        model = clone(make()).set_params(n_estimators=5)
        assert np.isfinite(model.fit(numeric, small.y, small.t).predict(numeric)).all()


def test_same_random_state_same_predictions(small):
    for make in (FACTORIES["forest_ed"], lambda: TwoModel(**{**LGB, "subsample": 0.7})):
        a = clone(make()).set_params(n_estimators=10).fit(small.X, small.y, small.t)
        b = clone(make()).set_params(n_estimators=10).fit(small.X, small.y, small.t)
        np.testing.assert_array_equal(a.predict(small.X), b.predict(small.X))


# --------------------------------------------------------------------------- hand formulas
def _constant_feature_data(n_t=300, n_c=900, r_t=60, r_c=90):
    t = np.r_[np.ones(n_t, int), np.zeros(n_c, int)]
    y = np.r_[np.arange(n_t) < r_t, np.arange(n_c) < r_c].astype(int)
    return pd.DataFrame({"x": np.ones(n_t + n_c)}), y, t, r_t / n_t - r_c / n_c


@pytest.mark.parametrize("make", [
    lambda: FlippedLabel(n_estimators=5, num_threads=1),
    lambda: TwoModel(n_estimators=5, num_threads=1),
    lambda: UpliftRandomForest(n_estimators=3, bootstrap=False, random_state=0),
])
def test_constant_feature_predicts_the_observed_effect(make):
    # Nothing to split on: each model must return r_T/|T| − r_C/|C| = 0.2 − 0.1 for every
    # row; FlippedLabel only because its arms are weighted n/(2·n_arm) (|T| ≠ |C| here).
    X, y, t, effect = _constant_feature_data()
    np.testing.assert_allclose(make().fit(X, y, t).predict(X), effect, atol=1e-6)


def test_unbalanced_flipped_label_without_weights_is_lai_original():
    X, y, t, _ = _constant_feature_data()
    z_share = ((y == t).sum()) / y.size  # unweighted P(Z = 1) = (60 + 810) / 1200
    score = FlippedLabel(balance_arms=False, n_estimators=5, num_threads=1).fit(X, y, t)
    np.testing.assert_allclose(score.predict(X), 2 * z_share - 1, atol=1e-6)


def test_forest_groups_categories_by_uplift():
    # Levels A and C have a +30-point effect, B none: one split must send {A, C} one way.
    rng = np.random.default_rng(0)
    n = 6_000
    level = rng.choice(np.array(["A", "B", "C"]), n)
    t = rng.integers(0, 2, n)
    p = np.where((level != "B") & (t == 1), 0.5, 0.2)
    y = (rng.random(n) < p).astype(int)
    X = pd.DataFrame({"level": pd.Categorical(level), "noise": rng.random(n)})
    model = UpliftRandomForest(n_estimators=1, max_depth=1, bootstrap=False,
                               max_features=None, random_state=0).fit(X, y, t)
    probe = pd.DataFrame({"level": pd.Categorical(["A", "B", "C"]), "noise": [0.5] * 3})
    a, b, c = model.predict(probe)
    assert a == c and a > b + 0.2


def test_forest_learns_from_missingness():
    rng = np.random.default_rng(1)
    n = 6_000
    missing = rng.random(n) < 0.5
    x = np.where(missing, np.nan, rng.random(n))
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < np.where(missing & (t == 1), 0.5, 0.2)).astype(int)
    model = UpliftRandomForest(n_estimators=1, max_depth=1, bootstrap=False,
                               random_state=0).fit(pd.DataFrame({"x": x}), y, t)
    score = model.predict(pd.DataFrame({"x": [np.nan, 0.5]}))
    assert score[0] > score[1] + 0.2


def test_dummy_treatment_interacts_numeric_columns_only(fitted, train):
    cats = {"channel", "zip_type"}
    assert fitted["dummy"].interaction_columns_ == [c for c in train.X.columns if c not in cats]


# --------------------------------------------------------------------------- queries, labels
def _record_objective(monkeypatch):
    seen = []
    real = core.objectives.lambdas.lightgbm_objective

    def recording(*args, **kwargs):
        objective = real(*args, **kwargs)

        def wrapped(preds, train_data):
            seen.append((np.asarray(train_data.get_group()), train_data.get_label().copy()))
            return objective(preds, train_data)
        return wrapped

    monkeypatch.setattr(core.objectives.lambdas, "lightgbm_objective", recording)
    return seen


def test_separate_query_builds_two_contiguous_queries(monkeypatch, small):
    seen = _record_objective(monkeypatch)
    model = LambdaMARTUplift(query="separate", labels="abs1", n_estimators=3,
                             num_threads=1).fit(small.X, small.y, small.t)
    n_t, n_c = int(small.t.sum()), int((small.t == 0).sum())
    assert model.group_sizes_.tolist() == [n_t, n_c]
    assert len(seen) == 3
    group, label = seen[0]
    assert group.tolist() == [n_t, n_c]
    # Abs1: treated block holds TR = 1 / TNR = 0, control block CR = 0 / CNR = 1.
    treated_y, control_y = small.y[small.t == 1], small.y[small.t == 0]
    np.testing.assert_array_equal(label[:n_t], treated_y)
    np.testing.assert_array_equal(label[n_t:], 1 - control_y)


def test_joint_query_is_one_query(monkeypatch, small):
    seen = _record_objective(monkeypatch)
    model = LambdaMARTUplift(query="joint", n_estimators=2, num_threads=1)
    model.fit(small.X, small.y, small.t)
    assert model.group_sizes_.tolist() == [small.n]
    assert seen[0][0].tolist() == [small.n]


@pytest.mark.parametrize("labels", ["abs1", "abs2", "abs3", "rel"])
def test_label_sets_follow_the_spec_table(labels, small):
    n_t, n_c = small.n_treated, small.n_control
    table = {  # SPEC §3: (TR, TNR, CR, CNR)
        "abs1": (1, 0, 0, 1), "abs2": (1, 0, -1, 0), "abs3": (3, 1, 0, 2),
        "rel": (1 / n_t, 0, -1 / n_c, 0),
    }[labels]
    model = LambdaMARTUplift(labels=labels, n_estimators=2, num_threads=1)
    rel = model.fit(small.X, small.y, small.t).train_relevance_
    y, t = small.y, small.t
    for value, mask in zip(table, [(t == 1) & (y == 1), (t == 1) & (y == 0),
                                   (t == 0) & (y == 1), (t == 0) & (y == 0)]):
        np.testing.assert_allclose(rel[mask], value)


# --------------------------------------------------------------------------- progress
@pytest.mark.parametrize("make,total", [
    (lambda: FlippedLabel(n_estimators=7, num_threads=1), 7),
    (lambda: TwoModel(n_estimators=7, num_threads=1), 14),
    (lambda: DummyTreatment(n_estimators=7, num_threads=1), 7),
    (lambda: UpliftRandomForest(n_estimators=7, random_state=0), 7),
    (lambda: LambdaMARTUplift(n_estimators=7, num_threads=1), 7),
])
def test_callback_once_per_round(make, total, small):
    calls = []
    make().fit(small.X, small.y, small.t, callback=lambda r, n, metric=None: calls.append((r, n)))
    assert calls == [(r, total) for r in range(1, total + 1)]


def test_ranker_callbacks_once_per_round():
    X, rel, qid = _ranking_data(10, 30, seed=0, classes=4)
    calls = []
    LambdaMARTRanker(n_estimators=4, num_threads=1).fit(
        X, rel, qid, callback=lambda r, n: calls.append((r, n)))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    calls.clear()
    LinearPairwiseAUC(random_state=0).fit(X, rel, qid, callback=lambda r, n: calls.append(r))
    assert calls == [1, 2, 3]  # one binary model per relevance class 1, 2, 3


@pytest.mark.parametrize("make", [
    lambda: FlippedLabel(n_estimators=20, num_threads=1),
    lambda: TwoModel(n_estimators=20, num_threads=1),
    lambda: DummyTreatment(n_estimators=20, num_threads=1),
    lambda: UpliftRandomForest(n_estimators=20, random_state=0),
    lambda: LambdaMARTUplift(n_estimators=20, num_threads=1),
])
def test_callback_can_cancel_training(make, small):
    model = make().fit(small.X, small.y, small.t)  # a previous fit is forgotten too
    calls = []

    def cancel(r, n, metric=None):
        calls.append(r)
        if r == 3:
            raise TrainingCancelled("stop")

    with pytest.raises(TrainingCancelled, match="stop"):
        model.fit(small.X, small.y, small.t, callback=cancel)
    assert calls == [1, 2, 3]
    with pytest.raises(NotFittedError):
        model.predict(small.X)


def test_ranker_cancel_leaves_it_unfitted():
    X, rel, qid = _ranking_data(10, 30, seed=0)

    def cancel(r, n):
        raise TrainingCancelled

    for model in (LambdaMARTRanker(n_estimators=5, num_threads=1), LinearPairwiseAUC(),
                  PointwiseRanker(n_estimators=5, num_threads=1)):
        with pytest.raises(TrainingCancelled):
            model.fit(X, rel, qid, callback=cancel)
        with pytest.raises(NotFittedError):
            model.predict(X)


# --------------------------------------------------------------------------- persistence
@pytest.mark.parametrize("name", FACTORIES)
def test_save_load_round_trip(name, fitted, test_data, tmp_path):
    model = fitted[name]
    path = model.save_model(tmp_path / f"{name}.json")
    json.loads(path.read_text(encoding="utf-8"))  # plain JSON, nothing pickled
    loaded = load_model(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    X = test_data.X.iloc[:3_000]
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    again = model_from_dict(json.loads(json.dumps(loaded.model_to_dict())))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_lightgbm_models_store_text_boosters(fitted):
    state = fitted["two_model"].model_to_dict()["state"]
    assert set(state["boosters"]) == {"booster_t_", "booster_c_"}
    assert state["boosters"]["booster_t_"].startswith("tree\n")


def test_rankers_round_trip(tmp_path):
    X, rel, qid = _ranking_data(10, 30, seed=0, classes=4)
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame["kind"] = pd.Categorical(np.resize(["u", "v", None], len(frame)))
    for model in (LambdaMARTRanker("mauc", n_estimators=5, num_threads=1),
                  LambdaMARTRanker("lambdarank", n_estimators=5, num_threads=1),
                  PointwiseRanker(n_estimators=5, num_threads=1),
                  LinearPairwiseAUC(random_state=0)):
        model.fit(frame, rel, qid)
        loaded = load_model(model.save_model(tmp_path / "r.json"))
        np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_load_model_refuses_foreign_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="written by model_to_dict"):
        load_model(path)
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a saved UpRank model"):
        load_model(path)


# --------------------------------------------------------------------------- sklearn API
def test_get_set_params_and_clone(small):
    extra = {"max_bin": 63}
    model = LambdaMARTUplift("dcg", query="joint", labels="abs3", k=50, n_estimators=4,
                             num_leaves=7, lgb_params=extra, num_threads=1)
    params = model.get_params()
    assert params["metric"] == "dcg" and params["query"] == "joint" and params["k"] == 50
    assert params["lgb_params"] is extra and params["num_leaves"] == 7
    copy = clone(model)
    assert copy.get_params()["labels"] == "abs3" and copy is not model
    copy.set_params(labels="rel", n_estimators=3)
    assert copy.labels == "rel" and model.labels == "abs3"
    model.fit(small.X, small.y, small.t)
    with pytest.raises(NotFittedError):
        clone(model).predict(small.X)
    for cls in (*MODELS.values(), *RANKERS.values()):
        assert clone(cls()).get_params() == cls().get_params()


def test_lgb_params_may_choose_the_histogram_layout(small):
    """Models train row-wise by default; lgb_params may ask for col-wise instead (LightGBM
    refuses both switches at once), and on one thread both layouts grow the same trees."""
    kw = {"n_estimators": 5, "num_leaves": 7, "num_threads": 1, "random_state": 0}
    row = TwoModel(**kw)
    col = TwoModel(**kw, lgb_params={"force_col_wise": True})
    assert row._lgb_config()[0]["force_row_wise"] is True
    params = col._lgb_config()[0]
    assert params["force_col_wise"] is True and "force_row_wise" not in params
    for model in (row, col):
        model.fit(small.X, small.y, small.t)
    np.testing.assert_array_equal(row.predict(small.X), col.predict(small.X))


def test_registry_and_make_model():
    assert set(MODELS.values()) == {LambdaMARTUplift, FlippedLabel, TwoModel, DummyTreatment,
                                    TransformedOutcome, UpliftRandomForest}
    assert set(RANKERS.values()) == {LambdaMARTRanker, LinearPairwiseAUC, PointwiseRanker}
    label = next(k for k, v in MODELS.items() if v is TwoModel)
    assert isinstance(make_model(label, n_estimators=3), TwoModel)
    model = make_model("UpliftRandomForest", criterion="kl")
    assert isinstance(model, UpliftRandomForest) and model.criterion == "kl"
    with pytest.raises(ValueError, match="name must be one of"):
        make_model("XGBoost")
    with pytest.raises(ValueError, match="TwoModel parameters must be among .*; got depth"):
        make_model("TwoModel", depth=3)


# --------------------------------------------------------------------------- rankers
def _ranking_data(n_queries, size, *, seed, classes=2):
    """Queries of ``size`` rows; relevance grows with a linear signal plus noise."""
    rng = np.random.default_rng(seed)
    n = n_queries * size
    X = rng.normal(size=(n, 5))
    signal = X @ np.array([1.0, -0.7, 0.5, 0.0, 0.0]) + rng.normal(0.0, 1.0, n)
    cuts = [0.8] if classes == 2 else [0.0, 1.0, 2.0]
    rel = np.digitize(signal, cuts).astype(np.float64)
    return X, rel, np.repeat(np.arange(n_queries), size)


@pytest.mark.parametrize("model", [
    LambdaMARTRanker("auc", n_estimators=40, learning_rate=0.1, num_threads=1, random_state=0),
    LambdaMARTRanker("lambdarank", n_estimators=40, learning_rate=0.1, num_threads=1,
                     random_state=0),
    PointwiseRanker(n_estimators=40, learning_rate=0.1, num_threads=1, random_state=0),
    LinearPairwiseAUC(random_state=0),
    LinearPairwiseAUC(loss="logistic", random_state=0),
])
def test_rankers_beat_random_auc(model):
    X, rel, qid = _ranking_data(40, 60, seed=0)
    Xt, relt, qt = _ranking_data(40, 60, seed=1)
    assert auc(relt, model.fit(X, rel, qid).predict(Xt), group=qt) > 0.75  # random: 0.5


@pytest.mark.parametrize("model", [
    LambdaMARTRanker("mauc", n_estimators=40, learning_rate=0.1, num_threads=1, random_state=0),
    LinearPairwiseAUC(multiclass="sum", random_state=0),
    LinearPairwiseAUC(multiclass="pairwise", random_state=0),
])
def test_rankers_beat_random_mauc(model):
    X, rel, qid = _ranking_data(40, 60, seed=0, classes=4)
    Xt, relt, qt = _ranking_data(40, 60, seed=1, classes=4)
    assert mauc(relt, model.fit(X, rel, qid).predict(Xt), group=qt) > 0.65  # random: 0.5


def test_linear_sum_model_has_one_model_per_positive_class():
    X, rel, qid = _ranking_data(10, 30, seed=0, classes=4)
    model = LinearPairwiseAUC(random_state=0).fit(X, rel, qid)
    assert model.classes_.tolist() == [1.0, 2.0, 3.0] and model.coef_.shape == (3, 5)
    z = (X - X.mean(axis=0)) / X.std(axis=0)  # standardised as at fit
    w = 1 * model.coef_[0] + 2 * model.coef_[1] + 3 * model.coef_[2]  # score = Σ_c c·f_c(x)
    np.testing.assert_allclose(model.predict(X[:4]), z[:4] @ w, rtol=1e-10)


def test_ranker_group_as_sizes_or_ids():
    X, rel, qid = _ranking_data(12, 25, seed=3)
    by_ids = LambdaMARTRanker(n_estimators=5, num_threads=1).fit(X, rel, qid)
    by_sizes = LambdaMARTRanker(n_estimators=5, num_threads=1).fit(X, rel, [25] * 12)
    assert by_ids.group_sizes_.tolist() == by_sizes.group_sizes_.tolist() == [25] * 12
    np.testing.assert_array_equal(by_ids.predict(X), by_sizes.predict(X))
    # Shuffled rows with string ids: grouped by id, same queries.
    perm = np.random.default_rng(0).permutation(len(rel))
    ids = np.array([f"q{q:02d}" for q in qid])[perm]
    shuffled = LambdaMARTRanker(n_estimators=5, num_threads=1).fit(X[perm], rel[perm], ids)
    assert shuffled.group_sizes_.tolist() == [25] * 12


# --------------------------------------------------------------------------- bad arguments
def test_bad_uplift_arguments(small):
    X, y, t = small.X, small.y, small.t
    with pytest.raises(ValueError, match="metric must be one of 'pcg'.*got 'auc'"):
        LambdaMARTUplift("auc").fit(X, y, t)
    with pytest.raises(ValueError, match="labels must be one of 'abs1'.*got 'abs4'"):
        LambdaMARTUplift(labels="abs4").fit(X, y, t)
    with pytest.raises(ValueError, match="query must be one of 'separate', 'joint'; got 'both'"):
        LambdaMARTUplift(query="both").fit(X, y, t)
    for k in (0, -3, 1.5):
        with pytest.raises(ValueError, match=r"k must be None, a positive int .*got"):
            LambdaMARTUplift(k=k).fit(X, y, t)
    with pytest.raises(ValueError, match="k applies only to metrics .*'map'"):
        LambdaMARTUplift("map", k=10).fit(X, y, t)
    with pytest.raises(ValueError, match="fit needs treated and control rows; got no control"):
        TwoModel().fit(X, y, np.ones(len(y)))
    with pytest.raises(ValueError, match="fit needs treated and control rows; got no treated"):
        UpliftRandomForest().fit(X, y, np.zeros(len(y)))
    with pytest.raises(ValueError, match="y has no responders"):
        FlippedLabel().fit(X, np.zeros(len(y)), t)
    with pytest.raises(ValueError, match=r"y must have one value per row of X \(1500\); got 1499"):
        DummyTreatment().fit(X, y[:-1], t)
    with pytest.raises(ValueError, match="treatment must have one value per row of X"):
        LambdaMARTUplift().fit(X, y, t[:10])
    with pytest.raises(ValueError, match="treatment must hold only 0 and 1"):
        TwoModel().fit(X, y, t * 2)
    with pytest.raises(ValueError, match="n_estimators must be a positive integer; got 0"):
        TwoModel(n_estimators=0).fit(X, y, t)
    with pytest.raises(ValueError, match="learning_rate must be a positive number"):
        FlippedLabel(learning_rate=-1).fit(X, y, t)
    with pytest.raises(ValueError, match=r"got '0.1' \(str, not a number\)"):  # as C= says
        FlippedLabel(learning_rate="0.1").fit(X, y, t)
    with pytest.raises(ValueError, match=r"lgb_params must not set \['objective'\]"):
        TwoModel(lgb_params={"objective": "regression"}).fit(X, y, t)
    with pytest.raises(ValueError, match="criterion must be one of 'ed', 'kl'; got 'gini'"):
        UpliftRandomForest(criterion="gini").fit(X, y, t)
    with pytest.raises(ValueError, match="max_features must be 'sqrt'"):
        UpliftRandomForest(max_features=0).fit(X, y, t)
    with pytest.raises(ValueError, match="callback must be None or a callable \\(done, total\\)"):
        TwoModel().fit(X, y, t, callback="print")
    text = X.assign(channel=X["channel"].astype(str).astype(object))
    with pytest.raises(ValueError, match="X column 'channel' must be numeric or a pandas "
                                         "category column"):
        TwoModel().fit(text, y, t)


@pytest.mark.parametrize("make", list(FACTORIES.values()))
def test_predict_before_fit_and_with_wrong_columns(make, small):
    model = make()
    with pytest.raises(NotFittedError):
        model.predict(small.X)
    model = clone(model).set_params(n_estimators=2).fit(small.X, small.y, small.t)
    with pytest.raises(ValueError, match=r"X is missing the training column\(s\) \['age'\]"):
        model.predict(small.X.drop(columns="age"))
    with pytest.raises(ValueError, match="X must be a pandas DataFrame: the model was fitted "
                                         "with categorical columns"):
        model.predict(small.X[["recency", "age"]].to_numpy())
    # no rows: no scores, as the forest (LightGBM itself refuses an empty frame)
    empty = model.predict(small.X.iloc[:0])
    assert empty.shape == (0,) and empty.dtype == np.float64


def test_rankers_predict_no_rows_as_an_empty_array():
    X, rel, qid = _ranking_data(10, 20, seed=0)
    for model in (LambdaMARTRanker("auc", n_estimators=3, num_threads=1, random_state=0),
                  PointwiseRanker(n_estimators=3, num_threads=1, random_state=0)):
        assert model.fit(X, rel, qid).predict(X[:0]).shape == (0,)


def test_bad_ranker_arguments():
    X, rel, qid = _ranking_data(5, 20, seed=0)
    with pytest.raises(ValueError, match="metric must be one of 'auc'.*got 'pcg'"):
        LambdaMARTRanker("pcg").fit(X, rel, qid)
    with pytest.raises(ValueError, match=r"group sizes must sum to the number of rows \(100\)"):
        LambdaMARTRanker().fit(X, rel, [20, 20])
    with pytest.raises(ValueError, match="group must be query sizes"):
        LambdaMARTRanker().fit(X, rel, [20, -20, 100])
    with pytest.raises(ValueError, match="relevance must have length 100; got length 99"):
        LinearPairwiseAUC().fit(X, rel[:-1], qid)
    with pytest.raises(ValueError, match="relevance must contain positive values"):
        LinearPairwiseAUC().fit(X, np.zeros(100), qid)
    with pytest.raises(ValueError, match="multiclass must be one of 'sum', 'pairwise'"):
        LinearPairwiseAUC(multiclass="ovr").fit(X, rel, qid)
    with pytest.raises(ValueError, match="relevance must hold at least two distinct values"):
        LambdaMARTRanker().fit(X, np.ones(100), qid)


def test_builtin_lambdarank_is_lightgbms_own_objective():
    """metric="lambdarank" is LightGBM's LGBMRanker with the same trees: identical scores."""
    import lightgbm as lgb

    X, rel, qid = _ranking_data(15, 30, seed=2, classes=3)
    ours = LambdaMARTRanker("lambdarank", n_estimators=10, learning_rate=0.1, num_threads=1,
                            random_state=0).fit(X, rel, [30] * 15)
    ref = lgb.LGBMRanker(objective="lambdarank", n_estimators=10, learning_rate=0.1,
                         num_threads=1, random_state=0, deterministic=True,
                         force_row_wise=True, verbose=-1, min_child_samples=20)
    ref.fit(X, rel, group=[30] * 15)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X, raw_score=True), rtol=1e-9)
    with pytest.raises(ValueError, match="integer relevance grades"):
        LambdaMARTRanker("lambdarank", n_estimators=2).fit(X, rel + 0.5, qid)
    with pytest.raises(ValueError, match="takes no cut-off"):
        LambdaMARTRanker("lambdarank", k=5, n_estimators=2).fit(X, rel, qid)


def test_early_stopping_on_a_validation_split_keeps_the_best_round():
    from core.evaluation.metrics import ndcg

    X, rel, qid = _ranking_data(20, 30, seed=0, classes=3)
    Xv, relv, qv = _ranking_data(10, 30, seed=1, classes=3)
    for model in (LambdaMARTRanker("mauc", n_estimators=300, learning_rate=0.5, num_threads=1,
                                   random_state=0),
                  PointwiseRanker(n_estimators=300, learning_rate=0.5, num_threads=1,
                                  random_state=0)):
        metric = "mauc" if isinstance(model, LambdaMARTRanker) else "ndcg"
        model.fit(X, rel, qid, eval_set=(Xv, relv, qv), early_stopping_rounds=5,
                  eval_metric=metric)
        history = model.eval_history_
        assert len(history) < 300  # stopped early
        best = model.best_iteration_
        assert history[best - 1] == history.max()  # the best round is kept ...
        assert len(history) == best + 5  # ... after 5 rounds without a better score
        # ... and the validation score of the history is the metric of the kept model.
        fn = mauc if metric == "mauc" else ndcg
        assert fn(relv, model.predict(Xv), group=qv) == pytest.approx(history[best - 1],
                                                                      rel=1e-6)
    with pytest.raises(ValueError, match="needs an eval_set"):
        PointwiseRanker(n_estimators=2).fit(X, rel, qid, early_stopping_rounds=3)
    with pytest.raises(ValueError, match="eval_metric must be one of"):
        PointwiseRanker(n_estimators=2).fit(X, rel, qid, eval_set=(Xv, relv, qv),
                                            eval_metric="p@10")


def test_block_queries_cover_every_row_once_in_single_arm_blocks():
    from core.models.lambdamart import uplift_queries

    t = (np.random.default_rng(0).random(10_007) < 0.7).astype(np.int8)
    order, sizes = uplift_queries(t, "separate", block_rows=1_000, random_state=0)
    assert np.array_equal(np.sort(order), np.arange(t.size)) and sizes.sum() == t.size
    assert sizes.size == 2 * 11  # ⌈10,007 / 1,000⌉ blocks, a treated and a control query each
    start = 0
    for size in sizes:
        arms = t[order[start:start + size]]
        assert (arms == arms[0]).all()
        start += size
    # Pairs of consecutive queries are one block: at most block_rows rows.
    assert (sizes[::2] + sizes[1::2] <= 1_000).all()
    whole, sizes_all = uplift_queries(t, "separate")
    assert sizes_all.tolist() == [int(t.sum()), int((t == 0).sum())]
    assert np.array_equal(whole, np.r_[np.flatnonzero(t == 1), np.flatnonzero(t == 0)])


def test_equal_query_weights_make_separate_pcg_the_separate_relative_auuc():
    """Weights n / (Q·|q|) (by hand: sizes 3 and 1 of 4 rows → 2/3 and 2) turn eq. 26's
    separate PCG on the §4.2 simulation with |C| = 9|T| from −160.9 (the control query's
    9× weight wins) into n/2 × the separate relative AUUC, 340.9, up to the two formulas'
    discretisation (340.3)."""
    from core.data.synthetic import make_paper_simulation
    from core.evaluation.metrics import pcg, relevance_labels, uplift_pcg
    from core.models.lambdamart import query_weights, uplift_queries

    np.testing.assert_allclose(query_weights([3, 1]), [2 / 3, 2 / 3, 2 / 3, 2.0])
    d = make_paper_simulation(20_000, scenario="more_control", random_state=0)
    s, n = d.scores["simulated score"], d.n
    order, sizes = uplift_queries(d.t, "separate")
    rel, weight = relevance_labels(d.y, d.t, labels="rel")[order], query_weights(sizes)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    per_query = [pcg(rel[a:a + m], s[order][a:a + m]) for a, m in zip(starts, sizes)]
    assert sum(per_query) == pytest.approx(uplift_pcg(d.y, d.t, s, query="separate"))
    weighted = sum(p * weight[a] for p, a in zip(per_query, starts))
    target = n / 2 * auuc(d.y, d.t, s, definition="uplift_sep_rel", ties="stable")
    assert sum(per_query) < 0 < target
    assert weighted == pytest.approx(target, rel=0.005)


def test_equal_query_weights_train_on_those_weights_and_change_nothing_for_equal_arms(
        monkeypatch):
    world = make_uplift_world(2_000, random_state=3)
    X, y = world.X, world.y
    kw = {"n_estimators": 5, "num_threads": 1, "random_state": 0}
    balanced = np.r_[np.ones(1_000, np.int8), np.zeros(1_000, np.int8)]
    plain = LambdaMARTUplift(labels="rel", **kw).fit(X, y, balanced)
    equal = LambdaMARTUplift(labels="rel", query_weights="equal", **kw).fit(X, y, balanced)
    np.testing.assert_array_equal(plain.predict(X), equal.predict(X))  # every weight is 1
    # unequal arms (200 treated, 1,800 control): the objective gets n / (2|q|) per row
    skewed = (np.arange(2_000) % 10 == 0).astype(np.int8)
    unweighted = LambdaMARTUplift(labels="rel", **kw).fit(X, y, skewed)
    seen = {}
    original = core.objectives.lambdas.LambdaObjective.__call__

    def spy(self, preds, data, *rest):
        seen.setdefault("weight", np.array(data.get_weight()))
        seen.setdefault("group", np.array(data.get_group()))
        return original(self, preds, data, *rest)

    monkeypatch.setattr(core.objectives.lambdas.LambdaObjective, "__call__", spy)
    fitted = LambdaMARTUplift(labels="rel", query_weights="equal", **kw).fit(X, y, skewed)
    assert seen["group"].tolist() == [200, 1_800]
    np.testing.assert_allclose(seen["weight"], np.r_[np.full(200, 2_000 / 400),
                                                     np.full(1_800, 2_000 / 3_600)], rtol=1e-7)
    assert not np.array_equal(fitted.predict(X), unweighted.predict(X))
    with pytest.raises(ValueError, match="query_weights"):
        LambdaMARTUplift(query_weights="size").fit(X, y, skewed)


# --------------------------------------------------------------------------- small data
@pytest.mark.parametrize("multiclass", ["sum", "pairwise"])
@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_linear_pairwise_fits_few_pairs_for_every_seed(multiclass, loss):
    # The relevant row has the smallest feature, so every pair says "lower x ranks first".
    X4, X2 = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([[0.0], [1.0]])
    for seed in range(20):
        model = LinearPairwiseAUC(multiclass=multiclass, loss=loss, random_state=seed)
        score = model.fit(X4, [1, 0, 0, 0]).predict(X4)
        assert model.n_pairs_ == [3] and np.argmax(score) == 0 and score[0] > score[1:].max()
        score = model.fit(X2, [1, 0]).predict(X2)  # one pair: used in both orientations
        assert model.n_pairs_ == [1] and score[0] > score[1]


def test_linear_pairwise_fits_a_class_with_one_pair():
    # Query 0: grade 2 vs grade 0 (1 pair); query 1: two grade-1 rows vs four grade-0 rows
    # (2·4 = 8 pairs); lower x is more relevant throughout.
    X = np.arange(8.0)[:, None]
    rel = np.array([2, 0, 1, 1, 0, 0, 0, 0])
    qid = np.array([0, 0, 1, 1, 1, 1, 1, 1])
    for seed in range(20):
        for multiclass, pairs in (("sum", [8, 1]), ("pairwise", [1 + 8])):
            model = LinearPairwiseAUC(multiclass=multiclass, random_state=seed)
            score = model.fit(X, rel, qid).predict(X)
            assert model.n_pairs_ == pairs
            assert np.all(np.diff(score) < 0)  # decreasing in x, as every pair says


def test_linear_pairwise_without_pairs_says_what_is_missing():
    X = np.arange(4.0)[:, None]
    for multiclass in ("sum", "pairwise"):
        with pytest.raises(ValueError, match="no pair to learn from: every query holds a "
                                             "single relevance value"):
            LinearPairwiseAUC(multiclass=multiclass).fit(X, [1, 1, 0, 0], [0, 0, 1, 1])
    # Grade 2 never shares a query with another grade: no model for it under "sum" ...
    with pytest.raises(ValueError, match="relevance class 2 gives no pair to learn from"):
        LinearPairwiseAUC(multiclass="sum").fit(X, [2, 2, 1, 0], [0, 0, 1, 1])
    # ... while "pairwise" learns from the one pair of query 1.
    model = LinearPairwiseAUC(multiclass="pairwise").fit(X, [2, 2, 1, 0], [0, 0, 1, 1])
    assert model.n_pairs_ == [1]


def test_linear_pairwise_uses_all_pairs_up_to_the_cap_and_draws_ordered_pairs_beyond():
    from core.models.linear_ranker import _ordered_pairs

    # 10 rows, one relevant: 9 pairs, fewer than max_pairs_per_query=10, so all are used.
    X = np.arange(10.0)[:, None]
    rel = np.r_[1, np.zeros(9)]
    for seed in range(5):
        model = LinearPairwiseAUC(multiclass="pairwise", max_pairs_per_query=10,
                                  random_state=seed).fit(X, rel)
        assert model.n_pairs_ == [9]
    # Every (more relevant, less relevant) pair of each query, counted by brute force.
    rng = np.random.default_rng(0)
    grades = rng.integers(0, 4, 30).astype(float)
    starts, sizes = np.array([0, 12]), np.array([12, 18])
    expected = sorted((a, b) for s, n in zip(starts, sizes, strict=True)
                      for a in range(s, s + n) for b in range(s, s + n)
                      if grades[a] > grades[b])
    i, j = _ordered_pairs(grades, starts, sizes, 10**6, rng)
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == expected
    # Above the cap: exactly cap pairs per query, each one correctly ordered.
    i, j = _ordered_pairs(grades, starts, sizes, 7, rng)
    assert i.size == 2 * 7 and np.all(grades[i] > grades[j])
    assert np.all((i < 12) == (j < 12))  # never across queries


@pytest.mark.parametrize("metric", ["auc", "mauc", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "map",
                                    "lambdarank"])
def test_lambdamart_ranker_trains_on_40_rows(metric):
    # 40 rows and min_child_samples=20: LightGBM's pre-filter keeps no feature (bins of
    # >= 3 rows never split 20/20); the λ objectives crashed in LightGBM where the built-in
    # "lambdarank" trained.
    X = np.random.default_rng(0).normal(size=(40, 3))
    rel = (np.arange(40) % 3 == 0).astype(float)
    qid = np.arange(40) // 6
    model = LambdaMARTRanker(metric, n_estimators=3, num_threads=1, random_state=0)
    model.fit(X, rel, qid, eval_set=(X, rel, qid))
    assert model.predict(X).shape == (40,) and np.isfinite(model.predict(X)).all()
    assert model.eval_history_.shape[0] >= 1


def test_lambdamart_uplift_trains_on_40_rows():
    X = np.random.default_rng(0).normal(size=(40, 3))
    y, t = np.arange(40) % 2, (np.arange(40) % 4 < 2).astype(int)
    score = LambdaMARTUplift(n_estimators=3, num_threads=1, random_state=0).fit(X, y, t)
    assert np.isfinite(score.predict(X)).all()


def test_lambdamart_ranker_equals_plain_lgb_train_with_the_lambda_objective():
    # The model's Dataset must be the one lgb.train builds itself: same trees, bit for bit.
    import lightgbm as lgb

    X, rel, qid = _ranking_data(20, 50, seed=2, classes=3)
    model = LambdaMARTRanker("mauc", n_estimators=10, learning_rate=0.1, num_threads=1,
                             random_state=0).fit(X, rel, [50] * 20)
    params = {"objective": core.objectives.lambdas.lightgbm_objective("mauc"),
              "metric": "None", "learning_rate": 0.1, "num_leaves": 31,
              "min_child_samples": 20, "num_threads": 1, "deterministic": True,
              "force_row_wise": True, "verbose": -1, "seed": 0}
    booster = lgb.train(params, lgb.Dataset(pd.DataFrame(X, columns=model.features_.names),
                                            label=rel, group=[50] * 20,
                                            params={"verbose": -1}),
                        num_boost_round=10)
    np.testing.assert_array_equal(model.predict(X), booster.predict(X, raw_score=True))


@pytest.mark.parametrize("cls", [TwoModel, FlippedLabel, DummyTreatment, TransformedOutcome,
                                 LambdaMARTUplift])
def test_feature_names_lightgbm_refuses_are_renamed_for_it_alone(cls):
    """A CSV header 'Revenue, 2023', 'clicks:7d' or pandas' 'Unnamed: 2' (a blank header
    cell) made every model fail with LightGBM's "Do not support special JSON characters in
    feature name"; now each fits and predicts exactly as with names LightGBM accepts."""
    world = make_uplift_world(1_500, random_state=4)
    X = world.X.select_dtypes("number").iloc[:, :4]
    # 'clicks 7d' and 'clicks_7d': LightGBM turns the space into "_" itself (a collision)
    odd = X.set_axis(["Revenue, 2023", "clicks 7d", "clicks_7d", 'say "hi" [x]'], axis=1)
    kw = {"n_estimators": 5, "num_threads": 1, "random_state": 0}
    plain = cls(**kw).fit(X, world.y, world.t).predict(X)
    model = cls(**kw).fit(odd, world.y, world.t)
    np.testing.assert_array_equal(model.predict(odd), plain)
    assert model.features_.names == list(odd.columns)  # the user's names are kept


def test_an_outcome_of_two_other_codes_is_asked_to_be_recoded():
    # y coded 1/2 read "y is continuous (2 distinct values)" and pointed to amount models
    from core.models import FlippedLabel

    rng = np.random.default_rng(0)
    X, t = rng.normal(size=(60, 2)), np.repeat([0, 1], 30)
    with pytest.raises(ValueError, match=r"y holds the two codes 1 and 2: recode it to 0/1 "
                                         r"\(1 = response\), e\.g\. \(y == 2\)\.astype\(int\)\."):
        FlippedLabel(n_estimators=2).fit(X, rng.integers(1, 3, 60), t)
