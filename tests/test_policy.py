"""Multi-treatment policies (core.evaluation.policy): the multi-armed Qini path against the
optimum of its linear program (scipy's linprog), the IPW value against the known truth of a
simulated randomised K-arm experiment, and small cases by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from core.evaluation import (
    best_arm_policy,
    ipw_scores,
    multi_armed_qini,
    multi_armed_qini_band,
    policy_difference,
    policy_terms,
    policy_value,
)
from core.evaluation.policy import _gain_at


def _lp_optimum(tau, cost, budget):
    """max Σ x_ik τ_ik  s.t. Σ_k x_ik ≤ 1, x ≥ 0, (1/n) Σ x_ik c_ik ≤ B (brute force LP)."""
    n, k = tau.shape
    a_units = np.kron(np.eye(n), np.ones(k))
    a_budget = cost.reshape(1, -1) / n
    res = linprog(-tau.ravel(), A_ub=np.vstack([a_units, a_budget]),
                  b_ub=np.r_[np.ones(n), budget], bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun / n


@pytest.mark.parametrize("seed", range(8))
def test_path_is_the_lp_optimum_at_every_budget(seed):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(5, 30), rng.integers(2, 5)
    tau = rng.normal(0.1, 0.3, (n, k))
    cost = rng.uniform(0, 1, (n, k)) if seed % 2 else rng.uniform(0, 1, k)
    if seed % 3 == 0:
        cost = np.where(rng.random((n, k)) < 0.2, 0.0, np.broadcast_to(cost, (n, k)))
    path = multi_armed_qini(tau, cost)
    c_full = np.broadcast_to(cost, (n, k))
    end = path["spend"].iloc[-1]
    budgets = np.r_[np.linspace(0, end, 13), end * 1.5 + 0.1]
    for b in budgets:
        assert _gain_at(path, np.array([b]))[0] == pytest.approx(
            _lp_optimum(tau, c_full, b), abs=1e-9)
    assert np.all(np.diff(path["spend"]) >= 0) and np.all(np.diff(path["gain"]) >= -1e-12)


def test_one_arm_is_the_sorted_ratio_curve():
    tau = np.array([[0.4], [0.1], [-0.2], [0.3]])
    cost = np.array([2.0])
    path = multi_armed_qini(tau, cost)
    # units by τ/c: 0 (0.2), 3 (0.15), 1 (0.05); unit 2 never (negative)
    assert path["unit"].tolist() == [-1, 0, 3, 1]
    np.testing.assert_allclose(path["spend"], [0, 0.5, 1.0, 1.5])
    np.testing.assert_allclose(path["gain"], [0, 0.1, 0.175, 0.2])


def test_reward_scores_the_path_chosen_by_tau():
    tau = np.array([[0.5, 0.9], [0.2, 0.1]])
    reward = np.array([[1.0, 3.0], [-1.0, 5.0]])
    path = multi_armed_qini(tau, [1.0, 2.0], reward=reward)
    # unit 0: control → arm 1 (slope .5) → arm 2 (slope .4); unit 1: → arm 1 (slope .2)
    assert list(zip(path["unit"], path["arm"]))[1:] == [(0, 1), (0, 2), (1, 1)]
    np.testing.assert_allclose(path["gain"], [0, 0.5, 1.5, 1.0])  # (1), (+2), (−1) over n=2


def test_free_arms_come_first_and_costs_are_checked():
    path = multi_armed_qini([[0.3, 0.5], [0.2, 0.0]], [0.0, 1.0])
    assert path["slope"].iloc[1] == np.inf and path["spend"].iloc[1] == 0
    with pytest.raises(ValueError, match="cost must be finite and ≥ 0"):
        multi_armed_qini([[0.1]], [-1.0])
    with pytest.raises(ValueError, match="cost must have shape"):
        multi_armed_qini([[0.1, 0.2]], [1.0, 2.0, 3.0])


def _experiment(seed, n=4000):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    design = np.array([0.4, 0.3, 0.3])
    t = rng.choice(3, n, p=design)
    mu0 = 1 + x
    tau = np.column_stack([np.maximum(x, 0), np.maximum(-x, 0) * 0.5])
    y0 = mu0 + rng.normal(0, 1, n)
    outcomes = np.column_stack([y0, y0 + tau[:, 0], y0 + tau[:, 1]])
    return x, t, outcomes[np.arange(n), t], outcomes, np.tile(design, (n, 1))


def test_ipw_value_covers_the_true_policy_value():
    inside = 0
    for seed in range(40):
        x, t, y, outcomes, prop = _experiment(seed)
        pi = np.where(x > 0, 1, 2)
        truth = outcomes[np.arange(len(x)), pi].mean()
        v, se = policy_value(pi, y, t, prop)
        inside += abs(v - truth) <= 1.96 * se
    assert inside >= 33  # ~95 % of 40


def test_policy_value_by_hand_and_checks():
    v, se = policy_value([1, 1, 0, 0], [1, 0, 1, 1], [1, 0, 0, 1], [[0.5, 0.5]] * 4)
    terms = np.array([1 / 0.5, 0, 1 / 0.5, 0])
    assert v == pytest.approx(terms.mean()) and se == pytest.approx(terms.std(ddof=1) / 2)
    with pytest.raises(ValueError, match="sum to 1"):
        policy_value([0, 1], [1, 0], [0, 1], [[0.5, 0.6], [0.5, 0.5]])
    with pytest.raises(ValueError, match="arm codes 0…1"):
        policy_value([0, 2], [1, 0], [0, 1], [[0.5, 0.5], [0.5, 0.5]])
    # ipw_scores checks the experiment as policy_value does, in the same words
    from core.evaluation import ipw_scores

    prop = [[0.5, 0.5]] * 3
    for y, t, message in (([1, 0, 1], [0, 2, 1], r"t must hold arm codes 0…1 \(propensity "
                           r"has 2 columns\); got 0…2"),
                          ([1, np.nan, 1], [0, 1, 1], r"y must be finite; 1 row\(s\) hold "
                           r"NaN or infinite values \(first: row 1\)")):
        for call in (lambda: ipw_scores(y, t, prop), lambda: policy_value([0, 0, 0], y, t, prop)):
            with pytest.raises(ValueError, match=message):
                call()


def test_paired_standard_error_is_the_spread_over_re_randomisations():
    """The SE of a difference of two policies' values is read off the spread of the
    difference over 400 re-randomisations of the same customers (their potential outcomes
    fixed): the paired SE matches it, √(SE₁² + SE₂²) does not when the policies mostly
    agree (here on 84 % of the customers)."""
    x, _, _, outcomes, prop = _experiment(0, n=3000)
    first, second = np.where(x > 0, 1, 2), np.where(x > 1, 2, np.where(x > 0, 1, 2))
    assert 0.8 < (first == second).mean() < 0.9
    rng = np.random.default_rng(1)
    diffs, paired, independent = [], [], []
    for _ in range(400):
        t = rng.choice(3, len(x), p=prop[0])
        y = outcomes[np.arange(len(x)), t]
        d, se = policy_difference(first, second, y, t, prop)
        diffs.append(d)
        paired.append(se)
        independent.append(np.hypot(policy_value(first, y, t, prop)[1],
                                    policy_value(second, y, t, prop)[1]))
    spread = np.std(diffs, ddof=1)
    assert np.mean(paired) == pytest.approx(spread, rel=0.1)
    assert np.mean(independent) > 1.3 * spread  # 1.43 × here
    truth = (outcomes[np.arange(len(x)), first] - outcomes[np.arange(len(x)), second]).mean()
    assert np.mean(diffs) == pytest.approx(truth, abs=3 * spread / np.sqrt(400))


def test_policy_difference_and_stochastic_terms_by_hand():
    y, t, prop = [1, 0, 1, 1], [1, 0, 0, 1], [[0.5, 0.5]] * 4
    # per-row terms 1[t = π] y / e: (2, 0, 2, 0) and (0, 0, 2, 0)
    d = np.array([2.0, 0, 0, 0])
    assert policy_difference([1, 1, 0, 0], [0, 0, 0, 0], y, t, prop) == pytest.approx(
        (d.mean(), d.std(ddof=1) / 2))
    # with a cost of 0.5 for arm 1: the first policy pays it on rows 0 and 1
    d_net = d - np.array([0.5, 0.5, 0, 0])
    assert policy_difference([1, 1, 0, 0], [0, 0, 0, 0], y, t, prop,
                             cost=[0.0, 0.5]) == pytest.approx(
        (d_net.mean(), d_net.std(ddof=1) / 2))
    # a single number is the treatment arm's cost (control free), as in best_arm_policy: it
    # was charged to control too, so it cancelled out and changed nothing
    assert policy_difference([1, 1, 0, 0], [0, 0, 0, 0], y, t, prop,
                             cost=0.5) == pytest.approx((d_net.mean(), d_net.std(ddof=1) / 2))
    # a uniformly random arm: each row's term is y / (2 e) — the mean of the two arms' terms
    assert policy_terms(np.full((4, 2), 0.5), y, t, prop) == pytest.approx([1, 0, 1, 1])
    with pytest.raises(ValueError, match=r"shape \(n, K\+1\) = \(4, 2\)"):
        policy_terms(np.full((4, 3), 1 / 3), y, t, prop)
    # one-hot rows (probability 0 for the other arm) are a policy too: arm 1 for everyone
    one_hot = np.tile([0.0, 1.0], (4, 1))
    assert policy_terms(one_hot, y, t, prop) == pytest.approx(
        policy_terms([1, 1, 1, 1], y, t, prop))
    with pytest.raises(ValueError, match="summing to 1"):
        policy_terms(np.tile([0.5, 0.6], (4, 1)), y, t, prop)
    with pytest.raises(ValueError, match="row 1"):
        policy_terms([0, 0, 0, 0], [1, np.nan, 1, 1], t, prop)
    with pytest.raises(ValueError, match="finite"):
        ipw_scores([np.nan, 1], [0, 1], [[0.5, 0.5]] * 2)
    with pytest.raises(ValueError, match=r"^y must hold numbers \(0/1 or an amount\); got "
                                         r"dtype <U1\.$"):
        policy_terms([0, 0, 0, 0], ["a", "b", "a", "b"], t, prop)


def test_ipw_scores_average_to_the_arm_effects():
    x, t, y, outcomes, prop = _experiment(0, n=60_000)
    g = ipw_scores(y, t, prop)
    true = (outcomes[:, 1:] - outcomes[:, [0]]).mean(axis=0)
    se = g.std(axis=0, ddof=1) / np.sqrt(len(y))
    assert np.all(np.abs(g.mean(axis=0) - true) < 4 * se)


def test_best_arm_and_band():
    assert best_arm_policy([[0.1, 0.3], [0.05, 0.02], [-0.1, -0.2]], [0.0, 0.1]).tolist() == [
        2, 1, 0]
    x, t, y, outcomes, prop = _experiment(1, n=2000)
    tau_hat = np.column_stack([np.maximum(x, 0), np.maximum(-x, 0) * 0.5])
    band = multi_armed_qini_band(tau_hat, [0.1, 0.05], ipw_scores(y, t, prop), n_boot=50,
                                 random_state=0)
    assert isinstance(band, pd.DataFrame) and len(band) == 50
    assert (band["low"] <= band["high"]).all()
    assert ((band["low"] <= band["gain"] + 0.05) & (band["gain"] <= band["high"] + 0.05)).all()
