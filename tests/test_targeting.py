"""core.evaluation.targeting: profit curves against an explicit loop over k, decile tables against a
pandas groupby, balance tests against scipy, hand cases for the best depth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core._validation import UndefinedMetricWarning
from core.evaluation.targeting import (
    PROFIT_COLUMNS,
    best_depth,
    profit_curve,
    targeting_summary,
    treatment_balance_along_ranking,
    uplift_by_decile,
)

Z95 = 1.959963984540054  # standard normal 97.5 % quantile


def case(seed=0, n=60, levels=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    t = rng.integers(0, 2, n)
    score = rng.integers(0, levels, n).astype(float) if levels else rng.normal(size=n)
    value = np.round(rng.gamma(2.0, 30.0, n) * y, 2)  # spend only by responders
    return y, t, score, value


def brute_profit(y, t, score, cost, vpr=None, value=None):
    """Rows in stable score order; counts over the top k by explicit loops."""
    order = sorted(range(len(y)), key=lambda i: (-score[i], i))
    rows = []
    for k in range(len(y) + 1):
        top = order[:k]
        nt = sum(1 for i in top if t[i] == 1)
        nc = k - nt
        rt = sum(y[i] for i in top if t[i] == 1)
        rc = sum(y[i] for i in top if t[i] == 0)
        resp = 0.0 if nt == 0 or nc == 0 else (rt / nt - rc / nc) * k
        if value is None:
            val = resp * vpr
        else:
            vt = sum(value[i] for i in top if t[i] == 1)
            vc = sum(value[i] for i in top if t[i] == 0)
            val = 0.0 if nt == 0 or nc == 0 else (vt / nt - vc / nc) * k
        rows.append((k / len(y), k, resp, val, k * cost, val - k * cost))
    return pd.DataFrame(rows, columns=list(PROFIT_COLUMNS))


# ----------------------------------------------------------------- profit
@pytest.mark.parametrize("levels, ties", [(None, "average"), (None, "stable"), (4, "stable")])
def test_profit_curve_equals_an_explicit_loop(levels, ties):
    y, t, score, value = case(levels=levels)
    fast = profit_curve(y, t, score, cost_per_treatment=0.3, value_per_response=2.5, ties=ties)
    pd.testing.assert_frame_equal(fast, brute_profit(y, t, score, 0.3, vpr=2.5),
                                  check_dtype=False, rtol=1e-12, atol=1e-12)
    fast_v = profit_curve(y, t, score, cost_per_treatment=0.3, value=value, ties=ties)
    pd.testing.assert_frame_equal(fast_v, brute_profit(y, t, score, 0.3, value=value),
                                  check_dtype=False, rtol=1e-10, atol=1e-10)


def test_tied_average_profit_is_the_mean_over_orders_at_run_ends():
    # Inside a tie the order is unknown; at the end of every tie run nothing depends on it.
    y, t, score, value = case(seed=2, levels=5)
    avg = profit_curve(y, t, score, cost_per_treatment=0.1, value=value)
    stable = profit_curve(y, t, score, cost_per_treatment=0.1, value=value, ties="stable")
    ends = np.cumsum(np.unique(-score, return_counts=True)[1])
    np.testing.assert_allclose(avg["profit"].to_numpy()[ends], stable["profit"].to_numpy()[ends])


def test_value_none_equals_value_array_of_y_times_value_per_response():
    y, t, score, _ = case(seed=4, n=300)
    by_rate = profit_curve(y, t, score, cost_per_treatment=1.0, value_per_response=7.5)
    by_value = profit_curve(y, t, score, cost_per_treatment=1.0, value=7.5 * y)
    pd.testing.assert_frame_equal(by_rate, by_value, rtol=1e-12, atol=1e-9)


def test_best_depth_hand_case():
    # Rank order (y, t): (1,1) (0,0) (1,1) (0,0) (0,1) (1,0); cost 0.1, value 1.
    # k:       1     2     3     4      5            6
    # uplift:  0     2     3     4      (2/3)·5      (2/3 - 1/3)·6 = 2
    # profit: -0.1   1.8   2.7   3.6    2.8333       1.4
    y = [1, 0, 1, 0, 0, 1]
    t = [1, 0, 1, 0, 1, 0]
    score = [6, 5, 4, 3, 2, 1]
    frame = profit_curve(y, t, score, cost_per_treatment=0.1, value_per_response=1.0)
    np.testing.assert_allclose(frame["profit"], [0, -0.1, 1.8, 2.7, 3.6, 10 / 3 - 0.5, 1.4])
    assert best_depth(frame) == {"fraction": pytest.approx(4 / 6), "targeted": 4,
                                 "profit": pytest.approx(3.6)}
    nobody = profit_curve(y, t, score, cost_per_treatment=5.0, value_per_response=1.0)
    assert best_depth(nobody) == {"fraction": 0.0, "targeted": 0, "profit": 0.0}


def test_max_points_thins_but_keeps_the_ends():
    y, t, score, _ = case(n=500)
    full = profit_curve(y, t, score, cost_per_treatment=0.1, value_per_response=1.0)
    thin = profit_curve(y, t, score, cost_per_treatment=0.1, value_per_response=1.0,
                        max_points=50)
    assert len(full) == 501 and len(thin) <= 50
    assert thin["targeted"].iloc[0] == 0 and thin["targeted"].iloc[-1] == 500
    pd.testing.assert_frame_equal(thin, full.loc[thin["targeted"]].reset_index(drop=True))


def test_targeting_summary_per_ranker():
    y, t, score, value = case(seed=5, n=400)
    scores = {"model": score, "reverse": -score}
    summary = targeting_summary(y, t, scores, cost_per_treatment=0.05, value=value)
    assert summary.index.tolist() == ["model", "reverse"]
    assert list(summary.columns) == ["best_fraction", "best_targeted", "best_profit",
                                     "profit_all", "profit_none"]
    for name, s in scores.items():
        frame = profit_curve(y, t, s, cost_per_treatment=0.05, value=value)
        best = best_depth(frame)
        assert summary.loc[name, "best_profit"] == best["profit"]
        assert summary.loc[name, "best_targeted"] == best["targeted"]
        assert summary.loc[name, "profit_all"] == pytest.approx(frame["profit"].iloc[-1])
    assert summary["profit_all"].nunique() == 1 or np.ptp(summary["profit_all"]) < 1e-9
    assert (summary["profit_none"] == 0).all() and (summary["best_profit"] >= 0).all()


@pytest.mark.parametrize("kwargs, match", [
    ({}, "give exactly one of value_per_response .* got neither"),
    ({"value_per_response": 1.0, "value": np.ones(60)}, "got both"),
    ({"value_per_response": float("nan")}, "value_per_response must be a finite number"),
    ({"value_per_response": 1.0, "ties": "x"}, "ties must be one of"),
    ({"value": np.ones(3)}, "value must have length 60"),
    ({"value_per_response": 1.0, "max_points": 0}, "max_points must be a positive integer"),
])
def test_profit_validation(kwargs, match):
    y, t, score, _ = case()
    with pytest.raises(ValueError, match=match):
        profit_curve(y, t, score, cost_per_treatment=0.1, **kwargs)
    with pytest.raises(ValueError, match="cost_per_treatment must be a finite number"):
        profit_curve(y, t, score, cost_per_treatment="free", value_per_response=1.0)


def test_profit_without_control_rows_warns_and_is_nan():
    y, t, score, value = case()
    with pytest.warns(UndefinedMetricWarning, match="no control rows"):
        frame = profit_curve(y, np.ones_like(t), score, cost_per_treatment=0.1, value=value)
    assert frame["profit"].isna().all()
    with pytest.warns(UndefinedMetricWarning, match="profit is nan everywhere"):
        assert np.isnan(best_depth(frame)["profit"])


# ----------------------------------------------------------------- deciles
def test_deciles_against_a_pandas_groupby():
    rng = np.random.default_rng(9)
    n = 1000
    score = rng.normal(size=n)
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.1 + 0.1 * (score > 0) * t).astype(int)
    table = uplift_by_decile(y, t, score)
    df = pd.DataFrame({"y": y, "t": t, "score": score})
    df["bin"] = 10 - pd.qcut(df["score"], 10, labels=False)  # 1 = highest scores
    g = df.groupby("bin")
    rate_t = df[df.t == 1].groupby("bin")["y"].mean()
    rate_c = df[df.t == 0].groupby("bin")["y"].mean()
    n_t = df[df.t == 1].groupby("bin").size()
    n_c = df[df.t == 0].groupby("bin").size()
    expected = pd.DataFrame({
        "bin": g.size().index.to_numpy(),
        "n": g.size().to_numpy(),
        "score_min": g["score"].min().to_numpy(),
        "score_max": g["score"].max().to_numpy(),
        "n_treated": n_t.to_numpy(),
        "n_control": n_c.to_numpy(),
        "response_rate_treated": rate_t.to_numpy(),
        "response_rate_control": rate_c.to_numpy(),
    })
    expected["uplift"] = expected["response_rate_treated"] - expected["response_rate_control"]
    se = np.sqrt(rate_t * (1 - rate_t) / n_t + rate_c * (1 - rate_c) / n_c).to_numpy()
    expected["ci_low"] = expected["uplift"] - Z95 * se
    expected["ci_high"] = expected["uplift"] + Z95 * se
    pd.testing.assert_frame_equal(table, expected, check_dtype=False, rtol=1e-12)
    assert (table["n"] == 100).all()


def test_deciles_of_an_amount_have_welch_intervals():
    # spend: the interval is Welch's normal one from each arm's variance in the bin (a
    # Bernoulli p(1 − p) of a mean amount is negative: NaN intervals before)
    rng = np.random.default_rng(10)
    n = 400
    t, score = rng.integers(0, 2, n), rng.normal(size=n)
    spend = np.where(rng.random(n) < 0.3, rng.gamma(2.0, 50.0, n), 0.0)
    table = uplift_by_decile(spend, t, score)
    df = pd.DataFrame({"y": spend, "t": t, "bin": 10 - pd.qcut(score, 10, labels=False)})
    arm = df.groupby(["bin", "t"])["y"]
    mean, var, size = arm.mean().unstack(), arm.var(ddof=0).unstack(), arm.size().unstack()
    se = np.sqrt(var[1] / size[1] + var[0] / size[0]).to_numpy()
    np.testing.assert_allclose(table["uplift"], (mean[1] - mean[0]).to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(table["ci_high"] - table["uplift"], Z95 * se, rtol=1e-9)
    assert np.isfinite(table["ci_low"]).all()


def test_equal_scores_share_a_bin():
    y, t, score, _ = case(seed=6, n=200, levels=7)
    table = uplift_by_decile(y, t, score)
    assert table["n"].sum() == 200
    # Each bin's score range is disjoint from the next one's: no score level is split.
    assert (table["score_min"].to_numpy()[:-1] > table["score_max"].to_numpy()[1:]).all()
    constant = uplift_by_decile(y, t, np.zeros(200), bins=4)
    # one run, mid-rank 100.5: bin ceil(100.5 · 4 / 200) = ceil(2.01) = 3
    assert constant["n"].tolist() == [200] and constant["bin"].tolist() == [3]


def test_decile_without_an_arm_warns_and_is_nan():
    y = np.array([1, 0, 1, 0, 1, 0])
    t = np.array([1, 1, 0, 0, 1, 0])
    score = np.array([6, 5, 4, 3, 2, 1.0])
    with pytest.warns(UndefinedMetricWarning, match="bin"):
        table = uplift_by_decile(y, t, score, bins=6)
    assert np.isnan(table["uplift"]).all() and len(table) == 6
    with pytest.raises(ValueError, match="bins must be a positive integer"):
        uplift_by_decile(y, t, score, bins=0)


def test_deciles_of_an_outcome_that_is_always_0_are_nan_not_a_certain_zero():
    t = np.tile([1, 0], 50)
    with pytest.warns(UndefinedMetricWarning,
                      match=r"by bin is undefined because there are no responders \(y is all 0\)"):
        table = uplift_by_decile(np.zeros(100, int), t, np.arange(100.0), bins=5)
    assert (table["response_rate_treated"] == 0).all() and (table["n"] == 20).all()
    assert table[["uplift", "ci_low", "ci_high"]].isna().all().all()


# ----------------------------------------------------------------- balance
def test_balance_flags_a_ranking_that_equals_the_treatment_flag():
    rng = np.random.default_rng(10)
    t = rng.integers(0, 2, 2000)
    tied = treatment_balance_along_ranking(t, t.astype(float))
    assert len(tied) == 2 and tied["share_treated"].tolist() == [1.0, 0.0]  # two tie runs
    assert (tied["p_value"] < 1e-10).all() and tied["imbalanced"].all()
    untied = treatment_balance_along_ranking(t, t + rng.random(2000) * 0.5)
    pure = untied["share_treated"].isin([0.0, 1.0])
    assert pure.sum() >= 9  # at most the bin where treated give way to control is mixed
    assert (untied.loc[pure, "p_value"] < 1e-10).all() and untied.loc[pure, "imbalanced"].all()


def test_balance_of_a_random_ranking_against_scipy():
    rng = np.random.default_rng(11)
    t = rng.integers(0, 2, 1000)
    score = rng.normal(size=1000)
    table = treatment_balance_along_ranking(t, score, bins=5)
    assert table["n"].tolist() == [200] * 5
    order = np.argsort(-score, kind="stable")
    for b in range(5):
        k = int(t[order[200 * b: 200 * (b + 1)]].sum())
        assert table["n_treated"].iloc[b] == k
        assert table["p_value"].iloc[b] == pytest.approx(
            stats.binomtest(k, 200, t.mean()).pvalue)
    assert table["overall_share"].eq(t.mean()).all()
    assert not table["imbalanced"].any()
    with pytest.raises(ValueError, match="alpha must be a number strictly between 0 and 1"):
        treatment_balance_along_ranking(t, score, alpha=0)
