"""A/B/n data (core.data.multiarm): Hillstrom's three arms against a direct read of the CSV,
the seeded K-arm world against its known effects, and the IPW value of policies on it
against the truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.data import DataError, MultiArmData, load_hillstrom, make_multiarm_world
from core.evaluation import best_arm_policy, policy_value


def test_hillstrom_three_arms_match_the_csv(shared_data):
    raw = pd.read_csv(shared_data / "hillstrom.csv")
    for outcome in ("visit", "spend"):
        d = load_hillstrom(arm="all", outcome=outcome)
        assert d.n == 64_000 and d.arms == ["No E-Mail", "Womens E-Mail", "Mens E-Mail"]
        for k, arm in enumerate(d.arms):
            part = raw[raw["segment"] == arm]
            assert (d.t == k).sum() == len(part)
            assert d.y[d.t == k].sum() == pytest.approx(part[outcome].sum())
    assert d.outcome_kind == "continuous"
    counts = raw["segment"].value_counts()[d.arms].to_numpy()
    assert d.srm()["p_value"] == pytest.approx(stats.chisquare(counts).pvalue)


def test_a_pair_is_todays_two_arm_data(shared_data):
    d = load_hillstrom(arm="all")
    X, y, t = d.pair(1)
    womens = load_hillstrom(arm="womens")
    np.testing.assert_array_equal(y, womens.y)
    np.testing.assert_array_equal(t, womens.t)
    pd.testing.assert_frame_equal(X, womens.X)
    with pytest.raises(ValueError, match="needs arm='all'"):
        load_hillstrom(arm="womens", outcome="spend")


@pytest.mark.parametrize("outcome", ["binary", "spend"])
def test_world_effects_are_what_the_arms_show(outcome):
    d = make_multiarm_world(60_000, n_arms=3, outcome=outcome, random_state=0)
    again = make_multiarm_world(60_000, n_arms=3, outcome=outcome, random_state=0)
    np.testing.assert_array_equal(d.y, again.y)
    assert d.tau.shape == (60_000, 3) and d.n_arms == 3 and d.cost.shape == (3,)
    for k in (1, 2, 3):
        a, c = d.y[d.t == k], d.y[d.t == 0]
        se = np.sqrt(a.var() / a.size + c.var() / c.size)
        assert abs((a.mean() - c.mean()) - d.tau[:, k - 1].mean()) < 4 * se


def test_ipw_value_of_the_true_best_arm_rule_is_within_its_ci_of_the_truth():
    inside, beats = 0, 0
    for seed in range(30):
        d = make_multiarm_world(6_000, n_arms=2, random_state=seed)
        pi = best_arm_policy(d.tau, d.cost)
        # truth: control response + the assigned arm's effect (known in the world)
        p0 = 1 / (1 + np.exp(1.5 - 0.5 * d.X["x2"].to_numpy()))
        truth = np.mean(p0 + np.where(pi > 0, d.tau[np.arange(d.n), np.maximum(pi - 1, 0)], 0))
        v, se = policy_value(pi, d.y, d.t, d.propensity())
        inside += abs(v - truth) <= 1.96 * se
        singles = [policy_value(np.full(d.n, k), d.y, d.t, d.propensity())[0] for k in (1, 2)]
        beats += v > max(singles)
    assert inside >= 25  # ~95 % of 30
    assert beats >= 20  # the best-arm rule usually beats every single arm


def test_bad_experiments_are_refused():
    X = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(DataError, match="have none"):
        MultiArmData(X=X, y=np.array([0, 1, 0, 1]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a", "b"])
    with pytest.raises(DataError, match="outcome column cannot be used"):
        MultiArmData(X=X, y=np.array(["a", "b", "c", "d"]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a"])
    with pytest.raises(DataError, match="cost must be"):
        MultiArmData(X=X, y=np.array([0, 1, 0, 1]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a"], cost=[-1.0])
    with pytest.raises(DataError, match="summing to 1"):
        MultiArmData(X=X, y=np.array([0, 1, 0, 1]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a"], design=[0.5, 0.6])
