"""Tests for core.interleaving.worlds: latent-factor worlds, presets, rankers, worlds from A/B
data."""

from __future__ import annotations


import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from core.interleaving import (
    PRESETS,
    RANKERS,
    Comparison,
    RecWorld,
    make_comparison,
    make_recommendation_world,
    preset_comparison,
    rank_lists,
    ranker_scores,
    targeting_world_from_ab,
    true_difference,
)


def test_world_shapes_dtypes_and_determinism():
    w = make_recommendation_world(200, 40, random_state=1)
    assert isinstance(w, RecWorld) and w.shape == (200, 40)
    assert w.y_treated.dtype == np.uint8 and w.y_control.dtype == np.uint8
    assert set(np.unique(w.y_treated)) <= {0, 1}
    assert ((0 <= w.p_control) & (w.p_control <= 1) & (0 <= w.p_treated) & (w.p_treated <= 1)).all()
    again = make_recommendation_world(200, 40, random_state=1)
    np.testing.assert_array_equal(w.y_treated, again.y_treated)
    other = make_recommendation_world(200, 40, random_state=2)
    assert not np.array_equal(w.y_control, other.y_control)


def test_default_world_has_3000_users_and_300_items():
    w = make_recommendation_world(random_state=0)
    assert w.shape == (3000, 300)


def test_world_follows_its_mechanism():
    kappa = 0.3
    w = make_recommendation_world(2000, 100, random_state=3, suppression=kappa, control_rate=0.2)
    # calibrated base rate, and P(Y^T = 0 | Y^C = 1) = suppression
    assert w.p_control.mean() == pytest.approx(0.2, abs=0.01)
    assert w.y_control.mean() == pytest.approx(w.p_control.mean(), abs=0.005)
    assert w.y_treated.mean() == pytest.approx(w.p_treated.mean(), abs=0.005)
    lost = 1 - w.y_treated[w.y_control == 1].mean()
    assert lost == pytest.approx(kappa, abs=0.01)
    np.testing.assert_allclose(w.p_treated >= w.p_control * (1 - kappa), True)


def test_world_parameters_are_validated():
    with pytest.raises(ValueError, match="unknown world parameter"):
        make_recommendation_world(10, 10, colour="red")
    with pytest.raises(ValueError, match="alignment must be in"):
        make_recommendation_world(10, 10, alignment=2)
    with pytest.raises(ValueError, match="preset must be one of"):
        make_recommendation_world(10, 10, preset="books")
    with pytest.raises(ValueError, match="n_users must be a positive integer"):
        make_recommendation_world(0, 10)


def test_grocery_preset_matches_paper_table1_in_spirit():
    # paper Table 1 (Dunnhumby): CUBN-T tau 0.0507 / Y^T 0.136 vs BPR 0.0295 / 0.187
    w, comp = preset_comparison("grocery", random_state=0)
    t = w.table1({"A": comp.lists_a, "B": comp.lists_b})
    assert 0.03 < t.loc["A", "mean_tau"] < 0.07
    assert 0.015 < t.loc["B", "mean_tau"] < 0.045
    assert 0.08 < t.loc["A", "mean_y_treated"] < t.loc["B", "mean_y_treated"] < 0.26
    assert 0.01 < comp.truth < 0.03
    overlap = (comp.lists_a[:, :, None] == comp.lists_b[:, None, :]).sum((1, 2))
    assert overlap.mean() > 1


def test_movie_preset_matches_paper_table1_in_spirit():
    # paper Table 1 (MovieLens-1M): CUBN-O tau 0.332 / Y^T 0.341 vs UBN -0.186 / 0.308
    w, comp = preset_comparison("movie", random_state=0)
    t = w.table1({"A": comp.lists_a, "B": comp.lists_b})
    assert 0.25 < t.loc["A", "mean_tau"] < 0.42
    assert -0.3 < t.loc["B", "mean_tau"] < -0.1
    assert 0.2 < t.loc["B", "mean_y_treated"] < 0.42
    overlap = (comp.lists_a[:, :, None] == comp.lists_b[:, None, :]).sum((1, 2))
    assert overlap.mean() < 0.2


def test_table1_columns():
    w = make_recommendation_world(50, 20, random_state=0)
    t = w.table1({"top": rank_lists(w.p_treated, 5)})
    assert list(t.index) == ["all items", "top"]
    assert list(t.columns) == ["users", "n", "mean_y_treated", "mean_y_control", "mean_tau",
                               "share_tau_pos", "share_tau_neg"]
    assert t.loc["all items", "mean_tau"] == pytest.approx(
        w.y_treated.mean() - w.y_control.mean())
    with pytest.raises(ValueError, match=r"lists\['bad'\] must have shape"):
        w.table1({"bad": np.zeros((3, 2), int)})


def test_rank_lists_orders_and_breaks_ties_by_item_id():
    s = np.array([[0.1, 0.9, 0.5, 0.9], [1.0, 1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(rank_lists(s, 3), [[1, 3, 2], [0, 1, 2]])
    with pytest.raises(ValueError, match=r"n must be at most the number of items \(4\)"):
        rank_lists(s, 5)
    with pytest.raises(ValueError, match="scores must not contain NaN"):
        rank_lists(np.array([[np.nan, 1.0]]), 1)
    with pytest.raises(ValueError, match="scores must be a 2-d"):
        rank_lists(np.ones(3), 1)


def test_rankers_registry():
    w = make_recommendation_world(300, 60, random_state=4, preset="grocery")
    tau = w.p_treated - w.p_control
    mean_tau = {}
    for name in RANKERS:
        s = ranker_scores(w, name, random_state=0)
        assert s.shape == w.shape
        li = rank_lists(s, 5)
        mean_tau[name] = np.take_along_axis(tau, li, 1).mean()
    assert mean_tau["causal"] == max(mean_tau.values())
    noisy = ranker_scores(w, "causal", noise=1.0, random_state=5)
    np.testing.assert_array_equal(noisy, ranker_scores(w, "causal", noise=1.0, random_state=5))
    assert not np.array_equal(rank_lists(noisy, 5), rank_lists(tau, 5))
    with pytest.raises(ValueError, match="ranker must be one of"):
        ranker_scores(w, "bpr")
    with pytest.raises(ValueError, match="noise must be a finite number"):
        ranker_scores(w, "causal", noise=-1)


def test_make_comparison_builds_valid_lists():
    w = make_recommendation_world(100, 30, random_state=6)
    comp = make_comparison(w, "causal", "popularity", n=4, noise_a=0.5, random_state=1)
    assert isinstance(comp, Comparison)
    assert comp.lists_a.shape == comp.lists_b.shape == (100, 4)
    assert comp.label_a == "causal (noise 0.5)" and comp.label_b == "popularity"
    assert (comp.lists_b == comp.lists_b[0]).all()  # popularity: same list for everyone
    assert comp.truth == true_difference(*comp.arrays)
    assert set(PRESETS) == {"grocery", "movie"}


def _ab_data(rows=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 3))
    t = rng.integers(0, 2, rows)
    p = 0.1 + 0.05 * (x[:, 1] > 0) + t * 0.2 * (x[:, 0] > 0)
    y = (rng.random(rows) < p).astype(int)
    return x, y, t


@pytest.mark.parametrize("model", ["logistic", "hgb"])
def test_targeting_world_from_ab(model):
    x, y, t = _ab_data()
    with threadpool_limits(1):  # OpenMP threads of the boosted trees: keep CI modest
        world, comp = targeting_world_from_ab(x, y, t, x[:, 0], -x[:, 0], pool_size=50, n=5,
                                              outcome_model=model, random_state=0)
    assert world.shape == (60, 50) and comp.lists_a.shape == (60, 5)
    assert comp.lists_a.max() < 50 and comp.lists_a.min() >= 0
    rows = world.meta["rows"]
    assert rows.shape == (60, 50) and np.unique(rows).size == rows.size
    # the scorer that follows the true uplift beats its mirror image
    assert comp.truth > 0.05
    np.testing.assert_array_equal(np.take_along_axis(x[:, 0][rows], comp.lists_a, 1).min(1)
                                  >= np.sort(x[:, 0][rows], 1)[:, -5], True)


def test_targeting_world_comonotone_coupling_never_hurts_when_p1_ge_p0():
    x, y, t = _ab_data(seed=1)
    world, _ = targeting_world_from_ab(x, y, t, x[:, 0], x[:, 1], pool_size=30, n=3,
                                       outcome_model="logistic", random_state=2)
    hurt = (world.y_control == 1) & (world.y_treated == 0)
    assert not hurt[world.p_treated >= world.p_control].any()


def test_targeting_world_validation():
    x, y, t = _ab_data(rows=200)
    with pytest.raises(ValueError, match=r"n must be at most pool_size \(10\)"):
        targeting_world_from_ab(x, y, t, x[:, 0], x[:, 1], pool_size=10, n=11)
    with pytest.raises(ValueError, match="scores_a must have length 200"):
        targeting_world_from_ab(x, y, t, x[:5, 0], x[:, 1])
    with pytest.raises(ValueError, match="n_pools must be in"):
        targeting_world_from_ab(x, y, t, x[:, 0], x[:, 1], pool_size=50, n_pools=5)
    with pytest.raises(ValueError, match="outcome_model must be one of"):
        targeting_world_from_ab(x, y, t, x[:, 0], x[:, 1], outcome_model="forest")
    with pytest.raises(ValueError, match="X must be a 2-d numeric array"):
        targeting_world_from_ab(x[:, 0], y, t, x[:, 0], x[:, 1])
