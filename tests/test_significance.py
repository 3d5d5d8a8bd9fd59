"""Paired per-query tests (core.evaluation.significance) against formulas, an exhaustive
sign-flip enumeration and hand-computed corrections."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from core.evaluation import compare_runs, holm, paired_test, verdict


def test_t_test_is_the_paired_formula():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.7, 0.1, 40), rng.normal(0.68, 0.1, 40)
    stat, p = paired_test(a, b)
    d = a - b
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    from scipy import stats

    assert stat == pytest.approx(t)
    assert p == pytest.approx(2 * stats.t.sf(abs(t), d.size - 1))


def test_permutation_test_equals_exhaustive_sign_flips():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.6, 0.1, 10), rng.normal(0.5, 0.1, 10)
    d = a - b
    observed = abs(d.mean())
    flips = np.array(list(itertools.product([1, -1], repeat=10)))
    exhaustive = np.mean(np.abs((flips * d).mean(axis=1)) >= observed - 1e-12)
    stat, p = paired_test(a, b, test="permutation", random_state=0)
    assert stat == pytest.approx(d.mean()) and p == pytest.approx(exhaustive)


def test_identical_runs_give_p_one():
    a = np.linspace(0, 1, 8)
    assert paired_test(a, a) == (0.0, 1.0)
    assert paired_test(a, a, test="permutation") == (0.0, 1.0)
    with pytest.raises(ValueError, match="at least two finite pairs"):
        paired_test([0.1], [0.2])
    with pytest.raises(ValueError, match="test must be one of"):
        paired_test(a, a, test="wilcoxon")


def test_a_constant_shift_is_exact_under_the_permutation_test():
    # d = (0.25, 0.25, 0.25): of the 2**3 sign flips only +++ and --- reach |mean| = 0.25
    a, b = [0.5, 0.75, 1.0], [0.25, 0.5, 0.75]
    flips = np.array(list(itertools.product([1, -1], repeat=3)))
    exhaustive = np.mean(np.abs((flips * 0.25).mean(axis=1)) >= 0.25 - 1e-12)
    stat, p = paired_test(a, b, test="permutation")
    assert exhaustive == 2 / 8 and stat == pytest.approx(0.25) and p == pytest.approx(0.25)
    # so a three-query verdict is not "significant"; the t-test's t is ±inf, p = 0 (scipy's)
    frames = {"A": pd.DataFrame({"m": a}), "B": pd.DataFrame({"m": b})}
    row = compare_runs(frames, metrics=["m"], test="permutation").iloc[0]
    assert not row["significant"] and row["p_value"] == pytest.approx(0.25)
    assert paired_test(a, b) == (np.inf, 0.0) and paired_test(b, a) == (-np.inf, 0.0)


def test_a_pair_with_nan_is_named_as_such():
    with pytest.raises(ValueError, match="1 of the 3 pairs hold NaN"):
        paired_test([1.0, 2.0, np.nan], [1.0, 3.0, 2.0])


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03, 2·0.03 = 0.06, max(0.06, 1·0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]).tolist() == pytest.approx([1.0, 1.0])


def test_holm_leaves_a_test_not_run_out_of_the_count():
    # R: p.adjust(c(0.01, NA, 0.03), "holm") gives 0.02 NA 0.03 (m = 2, not 3)
    out = holm([0.01, np.nan, 0.03])
    assert np.isnan(out[1]) and out[[0, 2]].tolist() == pytest.approx([0.02, 0.03])
    assert np.isnan(holm([np.nan])).all() and holm([]).size == 0


@pytest.mark.parametrize("p, match", [
    ([1.5, 0.2], r"in \[0, 1\].*\[0.2, 1.5\]"),
    ([-0.2, 0.5], r"in \[0, 1\]"),
    ([np.inf], r"in \[0, 1\]"),
    ([[0.1, 0.2]], r"one-dimensional; got shape \(1, 2\)"),
    (["a", "b"], "must be numbers"),
])
def test_holm_refuses_what_is_not_p_values(p, match):
    with pytest.raises(ValueError, match=match):
        holm(p)


def _frames():
    rng = np.random.default_rng(2)
    index = pd.Index([f"q{i}" for i in range(60)], name="qid")
    base = rng.uniform(0.4, 0.9, 60)
    return {
        "good": pd.DataFrame({"auc": base + 0.05 + rng.normal(0, 0.02, 60)}, index=index),
        "same": pd.DataFrame({"auc": base + rng.normal(0, 0.02, 60)}, index=index),
        "twin": pd.DataFrame({"auc": base + rng.normal(0, 0.02, 60)}, index=index),
    }


def test_compare_runs_corrects_over_pairs_and_names_the_winner():
    frames = _frames()
    table = compare_runs(frames, metrics=["auc"], correction="holm")
    assert len(table) == 3 and set(table["n_pairs"]) == {3}
    np.testing.assert_allclose(table["p_adjusted"], holm(table["p_value"]))
    row = table.set_index(["run_a", "run_b"]).loc[("good", "same")]
    assert row["significant"] and row["winner"] == "good"
    assert row["difference"] == pytest.approx((frames["good"]["auc"]
                                               - frames["same"]["auc"]).mean())
    bonf = compare_runs(frames, metrics="auc", correction="bonferroni")
    np.testing.assert_allclose(bonf["p_adjusted"], np.minimum(1, 3 * bonf["p_value"]))
    two = compare_runs({k: frames[k] for k in ("good", "same")}, metrics=["auc"])
    assert two["p_adjusted"].iloc[0] == two["p_value"].iloc[0]  # one pair: no correction


def test_undefined_queries_are_left_out_of_a_pair():
    frames = _frames()
    frames["same"].iloc[:10, 0] = np.nan
    table = compare_runs(frames, metrics=["auc"]).set_index(["run_a", "run_b"])
    assert table.loc[("good", "same"), "n_queries"] == 50
    assert table.loc[("good", "twin"), "n_queries"] == 60
    with pytest.raises(ValueError, match="at least two runs"):
        compare_runs({"a": frames["good"]}, metrics=["auc"])
    with pytest.raises(ValueError, match="no column 'map'"):
        compare_runs(frames, metrics=["map"])


def test_verdict_states_the_numbers():
    table = compare_runs(_frames(), metrics=["auc"])
    first = table.iloc[0]
    assert (first["run_a"], first["run_b"]) == ("good", "same")
    win = verdict(first, metric_label="AUC")
    assert win.startswith("good beats same on AUC (")
    assert "Holm's correction over 3 pairs" in win and "60 queries" in win
    none = verdict(table[(table.run_a == "same") & (table.run_b == "twin")].iloc[0],
                   metric_label="AUC")
    assert none.startswith("No significant difference between same and twin on AUC")


def test_the_verdict_names_the_level_compare_runs_tested():
    # p = 0.024 (t-test on these six pairs): significant at 0.05, not at 0.01
    a = pd.DataFrame({"m": [0.50, 0.60, 0.70, 0.55, 0.65, 0.58]})
    b = pd.DataFrame({"m": [0.45, 0.58, 0.62, 0.56, 0.60, 0.52]})
    d = a["m"] - b["m"]
    from scipy import stats

    p = 2 * stats.t.sf(abs(d.mean() / (d.std(ddof=1) / np.sqrt(6))), 5)
    assert 0.01 < p < 0.05
    strict = compare_runs({"A": a, "B": b}, metrics="m", alpha=0.01).iloc[0]
    assert not strict["significant"] and strict["alpha"] == 0.01
    assert verdict(strict).endswith(f"p = {p:.3f}, 6 queries; not below 0.01).")
    assert verdict(compare_runs({"A": a, "B": b}, metrics="m").iloc[0]).startswith("A beats B")
    for bad in ("0.05", True, 1.0):
        with pytest.raises(ValueError, match="alpha must be a number in"):
            compare_runs({"A": a, "B": b}, metrics="m", alpha=bad)


def test_sampled_permutation_tests_repeat_without_a_seed_given():
    # random_state defaulted to None here while every bootstrap defaults to 0: the same call
    # gave another p-value each time
    from core.evaluation import compare_runs, paired_test
    from core.evaluation.policy import multi_armed_qini_band

    rng = np.random.default_rng(3)
    a, b = rng.normal(size=40), rng.normal(size=40)  # 2^40 flips: sampled
    first = paired_test(a, b, test="permutation", n_permutations=500)
    assert paired_test(a, b, test="permutation", n_permutations=500) == first
    runs = {"A": pd.DataFrame({"m": a}), "B": pd.DataFrame({"m": b})}
    table = compare_runs(runs, metrics=["m"], test="permutation", n_permutations=500)
    pd.testing.assert_frame_equal(table, compare_runs(runs, metrics=["m"], test="permutation",
                                                      n_permutations=500))
    tau, reward = rng.normal(size=(60, 2)), rng.normal(size=(60, 2))
    band = multi_armed_qini_band(tau, [0.1, 0.1], reward, n_boot=20)
    pd.testing.assert_frame_equal(band, multi_armed_qini_band(tau, [0.1, 0.1], reward,
                                                              n_boot=20))
