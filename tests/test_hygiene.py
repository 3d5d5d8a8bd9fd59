"""Tests for core.data.hygiene: sample ratio mismatch and covariate balance.

Reference values are hand formulas (Σ(O − E)²/E, the χ²₁ survival function, SMDs computed
by hand on tiny data) — never outputs of the code under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.data.hygiene import covariate_balance, srm_test


def test_srm_flags_a_55_45_split_of_10000_rows():
    t = np.r_[np.ones(5_500, int), np.zeros(4_500, int)]
    res = srm_test(t)
    # E = 5000 per arm: χ² = 500²/5000 + 500²/5000 = 100.
    assert res.attrs["statistic"] == pytest.approx(100.0)
    assert res.attrs["df"] == 1
    assert res.attrs["pvalue"] == pytest.approx(stats.chi2.sf(100.0, 1))
    assert res.attrs["srm"] is True
    assert "Sample ratio mismatch" in res.attrs["verdict"]
    assert res.loc["treated", "observed"] == 5_500 and res.loc["control", "observed"] == 4_500
    assert res.loc["treated", "expected"] == pytest.approx(5_000)
    assert res.loc["treated", "observed_share"] == pytest.approx(0.55)


@pytest.mark.parametrize("n_t,n_c,share", [(21_387, 21_306, 0.5), (930, 70, 0.9),
                                           (12, 30, 0.25), (500, 500, 0.5)])
def test_srm_statistic_matches_hand_formula(n_t, n_c, share):
    t = np.r_[np.ones(n_t, int), np.zeros(n_c, int)]
    res = srm_test(t, expected_treated_share=share)
    n = n_t + n_c
    e_t, e_c = share * n, (1 - share) * n
    chi2 = (n_t - e_t) ** 2 / e_t + (n_c - e_c) ** 2 / e_c
    assert res.attrs["statistic"] == pytest.approx(chi2)
    assert res.attrs["pvalue"] == pytest.approx(stats.chi2.sf(chi2, 1))
    assert res["contribution"].sum() == pytest.approx(chi2)
    assert res.attrs["srm"] is bool(stats.chi2.sf(chi2, 1) < 0.001)


def test_srm_balanced_hillstrom_counts_pass():
    # Hillstrom Womens E-Mail vs No E-Mail (SOURCES.md): 21,387 vs 21,306.
    res = srm_test(np.r_[np.ones(21_387, int), np.zeros(21_306, int)])
    assert res.attrs["srm"] is False
    assert "No sample ratio mismatch" in res.attrs["verdict"]


def test_a_gross_mismatch_reads_p_below_0_001_never_p_0():
    res = srm_test(np.r_[np.ones(849_716, int), np.zeros(150_284, int)])
    assert res.attrs["srm"] and res.attrs["pvalue"] < 1e-300
    assert "p < 0.001)" in res.attrs["verdict"] and "p = 0" not in res.attrs["verdict"]


def test_an_assumed_share_is_said_in_the_verdict():
    t = np.r_[np.ones(590, int), np.zeros(410, int)]
    plain, assumed = srm_test(t, expected_treated_share=0.6), srm_test(
        t, expected_treated_share=0.6, assumed=True)
    assert assumed.attrs["verdict"] == plain.attrs["verdict"] + (
        " The planned share was not given: it is the observed share rounded to 5 % or a "
        "simple fraction (⅓, ⅙, ⅛ …), so only a gross mismatch shows.")


def test_srm_validation():
    with pytest.raises(ValueError, match="t must hold only 0 and 1"):
        srm_test([0, 1, 2])
    with pytest.raises(ValueError, match="t must contain at least one row"):
        srm_test([])
    with pytest.raises(ValueError, match=r"expected_treated_share must be a number in \(0, 1\); "
                                         r"got 1.0"):
        srm_test([0, 1], expected_treated_share=1.0)
    with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\); got 'x'"):
        srm_test([0, 1], alpha="x")


def test_smd_numeric_and_categorical_by_hand():
    X = pd.DataFrame({
        "x": [1.0, 2.0, 3.0, 2.0, 4.0, 6.0],
        "c": pd.Categorical(["a", "a", "b", "a", "b", "b"]),
    })
    t = [1, 1, 1, 0, 0, 0]
    res = covariate_balance(X, t)
    num = res[res["feature"] == "x"].iloc[0]
    # T: mean 2, var 1; C: mean 4, var 4 -> SMD = -2 / sqrt(2.5).
    assert num["mean_treated"] == pytest.approx(2.0)
    assert num["mean_control"] == pytest.approx(4.0)
    assert num["smd"] == pytest.approx(-2.0 / np.sqrt(2.5))
    assert bool(num["imbalanced"]) is True
    lev = res[(res["feature"] == "c") & (res["level"] == "a")].iloc[0]
    # Indicator of "a": T = (1,1,0) mean 2/3 var 1/3; C = (1,0,0) mean 1/3 var 1/3.
    assert lev["smd"] == pytest.approx((1 / 3) / np.sqrt(1 / 3))
    levb = res[(res["feature"] == "c") & (res["level"] == "b")].iloc[0]
    assert levb["smd"] == pytest.approx(-(1 / 3) / np.sqrt(1 / 3))
    assert len(res) == 3 and res.attrs["n_imbalanced"] == 3


def test_smd_missing_values_constants_and_threshold():
    X = pd.DataFrame({
        "m": [1.0, np.nan, 3.0, 5.0, 0.0, 1.0, np.nan, np.nan],
        "k": [7, 7, 7, 7, 7, 7, 7, 7],
        "d": [1, 1, 1, 1, 0, 0, 0, 0],
        "s": ["u", "v", None, "u", "u", "v", "v", "u"],
    })
    t = [1, 1, 1, 1, 0, 0, 0, 0]
    res = covariate_balance(X, t, threshold=0.5).set_index(["feature"])
    m = res.loc["m"]
    # T non-missing (1, 3, 5): mean 3, var 4; C non-missing (0, 1): mean 0.5, var 0.5.
    assert m["smd"] == pytest.approx(2.5 / np.sqrt(2.25))
    assert m["missing_treated"] == pytest.approx(0.25)
    assert m["missing_control"] == pytest.approx(0.5)
    assert res.loc["k", "smd"] == 0.0  # constant everywhere
    assert res.loc["d", "smd"] == np.inf  # constant within arms, different means
    s = res.loc["s"].set_index("level")
    # Non-missing T: u, v, u -> share u = 2/3 (var 1/3); C: u, v, v, u -> 1/2 (var 1/3).
    assert s.loc["u", "smd"] == pytest.approx((2 / 3 - 1 / 2) / np.sqrt(1 / 3))
    assert s.loc["u", "missing_treated"] == pytest.approx(0.25)
    assert not bool(s.loc["u", "imbalanced"])  # 0.289 < 0.5


def test_balance_accepts_arrays_and_validates():
    X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    res = covariate_balance(X, [1, 0, 1, 0])
    assert res["feature"].tolist() == ["x0", "x1"]
    with pytest.raises(ValueError, match=r"t must have one value per row of X \(4\); got 3"):
        covariate_balance(X, [1, 0, 1])
    with pytest.raises(ValueError, match="t must have at least 2 control rows"):
        covariate_balance(X, [1, 1, 1, 0])
    with pytest.raises(ValueError, match="threshold must be a positive number"):
        covariate_balance(X, [1, 0, 1, 0], threshold=0)
    with pytest.raises(ValueError, match="X must be a DataFrame or a 2-d array"):
        covariate_balance(np.ones(4), [1, 0, 1, 0])


def test_an_infinite_feature_value_is_left_out_like_a_gap_not_a_nan_smd():
    """The fuzz case: one inf made the feature's SMD nan, so it was never flagged."""
    t = np.array([1, 1, 1, 0, 0, 0])
    x = np.array([5.0, 6.0, np.inf, 1.0, 2.0, 3.0])
    row = covariate_balance(pd.DataFrame({"x": x}), t).iloc[0]
    a, b = np.array([5.0, 6.0]), np.array([1.0, 2.0, 3.0])
    smd = (a.mean() - b.mean()) / np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    assert row["smd"] == pytest.approx(smd) and row["imbalanced"]
    assert row["missing_treated"] == pytest.approx(1 / 3) and row["missing_control"] == 0


def test_randomised_world_is_balanced():
    from core.data import make_uplift_world

    w = make_uplift_world(20_000, random_state=0)
    res = covariate_balance(w.X, w.t)
    assert res.attrs["n_imbalanced"] == 0
    assert set(res["feature"]) == set(w.X.columns)
    assert srm_test(w.t).attrs["srm"] is False


def test_srm_verdict_names_a_planned_share_as_typed():
    t = np.r_[np.ones(595), np.zeros(405)].astype(int)
    assert "consistent with a 59.5% treated share" in srm_test(
        t, expected_treated_share=0.595).attrs["verdict"]
    assert "consistent with a 60% treated share" in srm_test(
        t, expected_treated_share=0.6).attrs["verdict"]


def test_the_imbalance_note_names_the_flagged_features_largest_first():
    from core.data.hygiene import imbalance_note

    rng = np.random.default_rng(0)
    t = np.r_[np.ones(2000, int), np.zeros(2000, int)]
    X = pd.DataFrame({"age": rng.normal(40, 10, 4000) + 5 * t,  # SMD ≈ +0.5
                      "noise": rng.normal(size=4000),
                      "channel": np.where(rng.random(4000) < 0.3 + 0.2 * t, "web", "phone")})
    balance = covariate_balance(X, t)
    note = imbalance_note(balance)
    smd_age = (X.age[t == 1].mean() - X.age[t == 0].mean()) / np.sqrt(
        (X.age[t == 1].var() + X.age[t == 0].var()) / 2)
    assert note.startswith(f"Treated and control rows differ on age ({smd_age:+.2f}), channel")
    assert "noise" not in note
    assert imbalance_note(covariate_balance(X[["noise"]], t)) is None


def test_small_cells_are_announced_and_a_single_row_cell_says_training_is_refused():
    from core.data.hygiene import small_cells_note
    from core.data.splits import make_splits

    t = np.r_[np.ones(50, int), np.zeros(50, int)]
    y = np.r_[np.ones(20, int), np.zeros(30, int), np.ones(20, int), np.zeros(30, int)]
    assert small_cells_note(y, t) is None
    y1 = y.copy()
    y1[50:70] = 0
    y1[50] = 1  # one control responder: make_splits refuses it
    note = small_cells_note(y1, t)
    assert note.startswith("Few rows in some cells: 1 control responder.")
    assert "cannot be trained" in note
    with pytest.raises(ValueError, match="at least 2 rows in every"):
        make_splits(y1, t)
    y5 = y.copy()
    y5[55:70] = 0  # five control responders: trainable, but noise
    assert "learn little" in small_cells_note(y5, t)
    make_splits(y5, t)
    for short in (t[:-1], t[:1]):  # one row short, or one row that numpy would broadcast
        with pytest.raises(ValueError, match="t must have the same length as y"):
            small_cells_note(y, short)
