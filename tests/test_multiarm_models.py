"""Continuous outcomes in the uplift learners and the per-arm multi-treatment model, each
against the same fit written out by hand (LightGBM directly, the transformed outcome from
its formula, arm-k-vs-control rows selected in the test)."""

from __future__ import annotations

import json

import lightgbm as lgb
import numpy as np
import pytest

from core.models import (
    LambdaMARTUplift,
    PerArmUplift,
    TransformedOutcome,
    TwoModel,
    load_model,
    model_from_dict,
)

KW = {"n_estimators": 15, "learning_rate": 0.1, "num_threads": 1, "random_state": 0}
LGB = {"learning_rate": 0.1, "num_leaves": 31, "min_child_samples": 20,
       "feature_fraction": 1.0, "bagging_fraction": 1.0, "bagging_freq": 0, "lambda_l1": 0.0,
       "lambda_l2": 0.0, "num_threads": 1, "deterministic": True, "force_row_wise": True,
       "verbose": -1, "metric": "None", "seed": 0}


def _spend(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    t = rng.integers(0, 2, n)
    tau = 5 * np.maximum(X[:, 0], 0)
    y = np.maximum(0, 10 + 2 * X[:, 1] + t * tau + rng.normal(0, 3, n))
    return X, y, t, tau


def _lgb(X, target, objective):
    ds = lgb.Dataset(X, label=target, params={"verbose": -1})
    return lgb.train({**LGB, "objective": objective}, ds, num_boost_round=15)


def test_two_model_regresses_a_continuous_outcome_per_arm():
    X, y, t, _ = _spend()
    ours = TwoModel(**KW).fit(X, y, t).predict(X)
    ref = (_lgb(X[t == 1], y[t == 1], "regression").predict(X)
           - _lgb(X[t == 0], y[t == 0], "regression").predict(X))
    np.testing.assert_allclose(ours, ref, rtol=1e-9)


def test_transformed_outcome_is_a_regression_of_the_formula():
    X, y, t, tau = _spend()
    p = t.mean()
    y_star = y * (t / p - (1 - t) / (1 - p))
    ours = TransformedOutcome(**KW).fit(X, y, t).predict(X)
    np.testing.assert_allclose(ours, _lgb(X, y_star, "regression").predict(X), rtol=1e-9)
    assert np.corrcoef(TransformedOutcome(n_estimators=100, learning_rate=0.05,
                                          num_threads=1, random_state=0).fit(X, y, t)
                       .predict(X), tau)[0, 1] > 0.3


def test_lambdamart_learns_from_the_transformed_outcome():
    X, y, t, tau = _spend()
    m = LambdaMARTUplift("pcg", labels="transformed", **KW).fit(X, y, t)
    p = t.mean()
    y_star = y * np.where(t == 1, 1 / p, -1 / (1 - p))
    rel = m.train_relevance_
    # quantised: 0 stays 0, at most 7 levels per sign, each level the mean of its rows
    assert np.array_equal(rel == 0, y_star == 0) and np.unique(rel).size <= 15
    for level in np.unique(rel[rel != 0]):
        assert y_star[rel == level].mean() == pytest.approx(level)
    assert np.all(np.sign(rel) == np.sign(y_star))
    assert np.corrcoef(m.predict(X), tau)[0, 1] > 0.5
    with pytest.raises(ValueError, match="needs a 0/1 outcome.*labels='transformed'"):
        LambdaMARTUplift("pcg", labels="abs1", **KW).fit(X, y, t)


def test_continuous_outcome_checks():
    X, y, t, _ = _spend(200)
    with pytest.raises(ValueError, match="finite"):
        TwoModel(**KW).fit(X, np.where(np.arange(200) == 3, np.nan, y), t)
    with pytest.raises(ValueError, match="constant"):
        TwoModel(**KW).fit(X, np.full(200, 2.5), t)


def _three_arms(n=4000, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    t = rng.integers(0, 3, n)
    p = 0.2 + 0.15 * (t == 1) * (X[:, 0] > 0) + 0.15 * (t == 2) * (X[:, 0] < 0)
    return X, (rng.random(n) < p).astype(int), t


def test_per_arm_columns_are_arm_vs_control_models():
    X, y, t = _three_arms()
    m = PerArmUplift("TwoModel", {k: v for k, v in KW.items() if k != "random_state"},
                     random_state=0).fit(X, y, t)
    pred = m.predict(X)
    assert pred.shape == (len(y), 2)
    for k in (1, 2):
        rows = (t == k) | (t == 0)
        by_hand = TwoModel(**{**KW, "random_state": k - 1}).fit(
            X[rows], y[rows], (t[rows] == k).astype(int))
        np.testing.assert_allclose(pred[:, k - 1], by_hand.predict(X), rtol=1e-12)
    # Arm 1 helps x0 > 0, arm 2 helps x0 < 0: the best predicted arm follows.
    best = pred.argmax(axis=1) + 1
    assert (best[X[:, 0] > 0.5] == 1).mean() > 0.8 and (best[X[:, 0] < -0.5] == 2).mean() > 0.8


def test_a_numpy_integer_seed_steps_per_arm_like_an_int():
    X, y, t = _three_arms(1500)
    kw = {"n_estimators": 3, "num_threads": 1, "colsample_bytree": 0.5}  # seeds matter
    as_int = PerArmUplift("TwoModel", kw, random_state=3).fit(X, y, t)
    as_numpy = PerArmUplift("TwoModel", kw, random_state=np.int64(3)).fit(X, y, t)
    np.testing.assert_array_equal(as_int.predict(X), as_numpy.predict(X))
    assert [m.random_state for m in as_numpy.models_] == [3, 4]


def test_per_arm_saves_loads_and_refuses_bad_arms(tmp_path):
    X, y, t = _three_arms(1500)
    m = PerArmUplift("FlippedLabel", {"n_estimators": 5, "num_threads": 1}).fit(X, y, t)
    again = load_model(m.save_model(tmp_path / "m.json"))
    np.testing.assert_array_equal(again.predict(X), m.predict(X))
    d = json.loads(json.dumps(m.model_to_dict()))
    np.testing.assert_array_equal(model_from_dict(d).predict(X), m.predict(X))
    with pytest.raises(ValueError, match="have none"):
        PerArmUplift("TwoModel").fit(X, y, np.where(t == 1, 2, t))
    with pytest.raises(ValueError, match="besides the control arm"):
        PerArmUplift("TwoModel").fit(X, y, np.zeros_like(t))
    seen = []
    PerArmUplift("TwoModel", {"n_estimators": 3, "num_threads": 1}).fit(
        X, y, t, callback=lambda i, total: seen.append((i, total)))
    assert seen[-1] == (12, 12) and seen == sorted(seen)  # 2 arms × 2 models × 3 rounds
    # an arm of 3 rows is fitted, with a warning naming it (its uplift is mostly noise)
    tiny = t.copy()
    tiny[np.flatnonzero(t == 2)[3:]] = 1
    with pytest.warns(UserWarning, match=r"fewer than 50 rows \(arm 2: 3 rows\)"):
        PerArmUplift("TwoModel", {"n_estimators": 3, "num_threads": 1}).fit(X, y, tiny)


def test_per_arm_settings_a_user_gets_wrong_are_named():
    # an unknown model was "name must be one of …" (the argument is model); a seed in params
    # was make_model's TypeError "got multiple values for keyword argument 'random_state'"
    from core.models import PerArmUplift

    rng = np.random.default_rng(0)
    X, y, t = rng.normal(size=(90, 2)), rng.integers(0, 2, 90), np.repeat([0, 1, 2], 30)
    with pytest.raises(ValueError, match=r"^model must be one of the model classes \(.*"
                                         r"'TwoModel'.*; got 'Nope'\."):
        PerArmUplift("Nope").fit(X, y, t)
    with pytest.raises(ValueError, match=r"params must not hold random_state: .* pass "
                                         r"random_state=3 to PerArmUplift itself\."):
        PerArmUplift("TwoModel", {"random_state": 3}, random_state=0).fit(X, y, t)
