"""core.evaluation.compare: the fast bootstrap against a brute-force loop on the same resamples,
interval coverage in a simulated world, paired verdicts, definition flips and bands."""

from __future__ import annotations

import numpy as np
import pytest

from core._validation import UndefinedMetricWarning
from core.evaluation.compare import (
    BootstrapResult,
    _stratified_counts,
    band,
    bootstrap_auuc,
    definition_ranks,
)
from core.evaluation.curves import DEFINITIONS, auuc


def small_case(seed=3, n=40):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    t = rng.integers(0, 2, n)
    scores = {
        "untied": rng.normal(size=n),
        "tied": rng.integers(0, 4, n).astype(float),
    }
    return y, t, scores


def world(rng, n, *, effect=0.2):
    """x ~ U(0, 1); control rate 0.1, treated rate 0.1 + effect·x; the score is x."""
    x = rng.random(n)
    t = (rng.random(n) < 0.5).astype(int)
    y = (rng.random(n) < 0.1 + effect * x * t).astype(int)
    return y, t, x


# ----------------------------------------------------------------- resamples
def test_stratified_counts_keep_each_arm_size():
    t = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1])
    draws = np.array(list(_stratified_counts(t, 500, np.random.default_rng(0))))
    assert draws.shape == (500, 9)
    assert (draws[:, t == 1].sum(axis=1) == 5).all()
    assert (draws[:, t == 0].sum(axis=1) == 4).all()
    np.testing.assert_allclose(draws.mean(axis=0), 1.0, atol=0.15)  # E[w_i] = 1


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
def test_resample_counts_are_the_bincount_of_the_draws(backend, monkeypatch):
    # The counts of a replicate = np.bincount of the same generator's draws, arm by arm
    # (treated first), as one byte per row; int64 when a count passes 255.
    from core.evaluation import _kernel, compare

    if backend == "numpy":
        monkeypatch.setattr(_kernel, "_compiled", None)
    t = (np.random.default_rng(2).random(5000) < 0.7).astype(np.int8)
    got = list(_stratified_counts(t, 4, np.random.default_rng(9)))
    rng = np.random.default_rng(9)
    for w in got:
        assert w.dtype == np.uint8
        want = np.zeros(t.size, dtype=np.int64)
        for arm in (1, 0):
            rows = np.flatnonzero(t == arm)
            want[rows] = np.bincount(rng.integers(0, rows.size, size=rows.size),
                                     minlength=rows.size)
        np.testing.assert_array_equal(w, want)
    # a row drawn 300 times does not fit a byte: add_draws refuses, the counts are int64
    w8 = np.zeros(3, dtype=np.uint8)
    assert not _kernel.add_draws(w8, np.array([0, 2]), np.full(300, 1))
    monkeypatch.setattr(compare, "add_draws", lambda *args: False)
    wide = list(_stratified_counts(t, 4, np.random.default_rng(9)))
    assert all(w.dtype == np.int64 for w in wide)
    np.testing.assert_array_equal(np.array(wide), np.array(got))


@pytest.mark.parametrize("ties", ["average", "stable"])
@pytest.mark.parametrize("definition", list(DEFINITIONS))
def test_bootstrap_equals_brute_force_on_the_same_resamples(definition, ties):
    y, t, scores = small_case()
    cutoffs = (0.1, 0.5, 1.0)
    n_boot = 12
    fast = bootstrap_auuc(y, t, scores, definition=definition, cutoffs=cutoffs,
                          n_boot=n_boot, ties=ties, random_state=7)
    assert fast.replicates.shape == (n_boot, 2, 3)
    for j, s in enumerate(scores.values()):
        for c, cut in enumerate(cutoffs):
            assert fast.estimates[j, c] == auuc(y, t, s, definition=definition, cutoff=cut,
                                                ties=ties)
    rng = np.random.default_rng(7)
    for b, w in enumerate(_stratified_counts(t, n_boot, rng)):
        idx = np.repeat(np.arange(len(y)), w)  # expanded rows, copies of a row adjacent
        for j, s in enumerate(scores.values()):
            for c, cut in enumerate(cutoffs):
                slow = auuc(y[idx], t[idx], s[idx], definition=definition, cutoff=cut,
                            ties=ties)
                np.testing.assert_allclose(fast.replicates[b, j, c], slow, rtol=1e-12,
                                           atol=1e-12)


def test_stable_and_tied_average_replicates_are_bit_identical_to_brute_force():
    y, t, scores = small_case(seed=11)
    for ties, name in (("stable", "untied"), ("stable", "tied"), ("average", "tied")):
        fast = bootstrap_auuc(y, t, {name: scores[name]}, definition="qini_joint_abs",
                              cutoffs=(1.0,), n_boot=5, ties=ties, random_state=1)
        for b, w in enumerate(_stratified_counts(t, 5, np.random.default_rng(1))):
            idx = np.repeat(np.arange(len(y)), w)
            assert fast.replicates[b, 0, 0] == auuc(
                y[idx], t[idx], scores[name][idx], definition="qini_joint_abs", ties=ties)


def test_same_random_state_same_replicates_and_generator_accepted():
    y, t, scores = small_case()
    a = bootstrap_auuc(y, t, scores, definition="uplift_sep_rel", n_boot=20, random_state=5)
    b = bootstrap_auuc(y, t, scores, definition="uplift_sep_rel", n_boot=20,
                       random_state=np.random.default_rng(5))
    c = bootstrap_auuc(y, t, scores, definition="uplift_sep_rel", n_boot=20, random_state=6)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    assert not np.array_equal(a.replicates, c.replicates)
    with pytest.raises(ValueError):
        a.replicates[0, 0, 0] = 1.0  # read-only: safe to share from a cache


# ----------------------------------------------------------------- statistics
def test_percentile_interval_covers_the_truth_in_a_simulated_world():
    rng = np.random.default_rng(2024)
    yb, tb, xb = world(rng, 1_000_000)
    truth = auuc(yb, tb, xb, definition="uplift_joint_rel")
    sims, covered, estimates, sds = 40, 0, [], []
    for _ in range(sims):
        y, t, x = world(rng, 500)
        res = bootstrap_auuc(y, t, {"x": x}, definition="uplift_joint_rel", cutoffs=(1.0,),
                             n_boot=150, random_state=rng)
        row = res.table().iloc[0]
        covered += row["ci_low"] <= truth <= row["ci_high"]
        estimates.append(row["auuc"])
        sds.append(row["sd"])
    assert covered / sims >= 0.85  # nominal 0.95; 40 fixed-seed simulations
    ratio = np.mean(sds) / np.std(estimates, ddof=1)
    assert 0.7 < ratio < 1.4  # bootstrap sd ≈ sampling sd across data sets


def test_table_columns_and_formulas():
    y, t, scores = small_case()
    res = bootstrap_auuc(y, t, scores, definition="uplift_sep_abs", cutoffs=(0.5, 1.0),
                         n_boot=40, level=0.9)
    table = res.table()
    assert list(table.columns) == ["ranker", "cutoff", "auuc", "ci_low", "ci_high", "sd"]
    assert table["ranker"].tolist() == ["untied", "untied", "tied", "tied"]
    reps = res.replicates[:, 1, 0]
    row = table.iloc[2]
    assert row["ci_low"] == pytest.approx(np.percentile(reps, 5))
    assert row["ci_high"] == pytest.approx(np.percentile(reps, 95))
    assert row["sd"] == pytest.approx(np.std(reps, ddof=1))
    assert res.n_boot == 40 and isinstance(res, BootstrapResult)


def test_identical_rankers_are_not_distinguishable():
    y, t, scores = small_case()
    s = scores["untied"]
    res = bootstrap_auuc(y, t, {"a": s, "b": s.copy()}, definition="uplift_joint_abs",
                         n_boot=50)
    paired = res.paired("a")
    assert (paired["difference"] == 0).all()
    assert (paired["ci_low"] == 0).all() and (paired["ci_high"] == 0).all()
    assert (paired["p_value"] == 1).all()
    assert (paired["verdict"] == "not distinguishable from a at 95 %").all()


def test_oracle_is_better_than_random_with_a_big_effect():
    rng = np.random.default_rng(8)
    y, t, x = world(rng, 2000, effect=0.6)
    res = bootstrap_auuc(y, t, {"random": rng.normal(size=2000), "oracle": x},
                         definition="uplift_sep_rel", cutoffs=(0.3, 1.0), n_boot=200,
                         reference="random")
    paired = res.paired()
    assert paired["ranker"].tolist() == ["oracle", "oracle"]
    assert (paired["verdict"] == "better than random at 95 %").all()
    assert (paired["p_value"] < 0.05).all() and (paired["ci_low"] > 0).all()
    worse = res.paired("oracle")
    assert (worse["verdict"] == "worse than oracle at 95 %").all()
    np.testing.assert_allclose(worse["difference"].to_numpy(), -paired["difference"].to_numpy())


def test_p_value_is_twice_the_share_on_the_other_side():
    res = BootstrapResult(("a", "b"), (1.0,), "uplift_joint_rel", "average", 0.95,
                          estimates=np.array([[0.0], [1.0]]),
                          replicates=np.array([[[0.0], [d]] for d in
                                               [-1.0, 0.0, 1, 2, 3, 4, 5, 6, 7, 8]]))
    row = res.paired("a").iloc[0]
    assert row["difference"] == 1.0
    assert row["p_value"] == pytest.approx(2 * 2 / 10)  # -1 and 0 are on the other side
    assert row["verdict"] == "not distinguishable from a at 95 %"


def test_progress_is_reported_and_can_cancel():
    y, t, scores = small_case()
    calls = []
    bootstrap_auuc(y, t, scores, definition="uplift_joint_rel", n_boot=120,
                   progress=lambda done, total: calls.append((done, total)))
    assert calls == [(50, 120), (100, 120), (120, 120)]

    class Cancelled(Exception):
        pass

    def cancel(done, total):
        raise Cancelled

    with pytest.raises(Cancelled):
        bootstrap_auuc(y, t, scores, definition="uplift_joint_rel", n_boot=120,
                       progress=cancel)


def test_progress_comes_more_often_on_large_data(monkeypatch):
    # about every PROGRESS_WORK rows × rankers of work: with 2 rankers on n rows and a budget
    # of 10·n, a call every 5 replicates (and after the last)
    from core.evaluation import compare as module

    y, t, scores = small_case()
    monkeypatch.setattr(module, "PROGRESS_WORK", 10 * len(y))
    calls = []
    bootstrap_auuc(y, t, dict(list(scores.items())[:2]), definition="uplift_joint_rel",
                   n_boot=12, progress=lambda done, total: calls.append(done))
    assert calls == [5, 10, 12]


def test_degenerate_input_warns_and_returns_nan():
    y, t, scores = small_case()
    with pytest.warns(UndefinedMetricWarning, match="no control rows"):
        res = bootstrap_auuc(y, np.ones_like(t), scores, definition="uplift_joint_rel",
                             n_boot=10)
    assert np.isnan(res.estimates).all() and np.isnan(res.replicates).all()
    assert (res.paired()["verdict"] == "undefined").all()


def test_replicates_without_responders_are_nan_and_counted():
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0])
    t = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    with pytest.warns(UndefinedMetricWarning, match="drew no responder"):
        res = bootstrap_auuc(y, t, {"s": np.arange(8.0)}, definition="uplift_joint_rel",
                             n_boot=60, cutoffs=(1.0,))
    empty = np.isnan(res.replicates[:, 0, 0])
    assert 0 < empty.sum() < 60  # P(no responder) = (3/4)^4 ≈ 0.32
    assert np.isfinite(res.table()["ci_low"]).all()


@pytest.mark.parametrize("kwargs, match", [
    ({"definition": "auuc"}, "definition must be one of"),
    ({"n_boot": 0}, "n_boot must be a positive integer"),
    ({"n_boot": 10.0}, "n_boot must be a positive integer"),
    ({"level": 1.0}, "level must be a number strictly between 0 and 1"),
    ({"cutoffs": (0.0,)}, r"cutoffs must be a number in \(0, 1\]"),
    ({"cutoffs": ()}, "cutoffs must hold at least one"),
    ({"ties": "random"}, "ties must be one of"),
    ({"reference": "nope"}, "reference must be one of"),
    ({"random_state": "seed"}, "random_state must be"),
])
def test_bootstrap_validation(kwargs, match):
    y, t, scores = small_case()
    args = {"definition": "uplift_joint_rel", "n_boot": 5} | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_auuc(y, t, scores, **args)


def test_scores_mapping_is_validated():
    y, t, scores = small_case()
    with pytest.raises(ValueError, match="non-empty mapping"):
        bootstrap_auuc(y, t, {}, definition="uplift_joint_rel")
    with pytest.raises(ValueError, match=r"scores\['short'\] must have length 40"):
        bootstrap_auuc(y, t, {"short": np.zeros(3)}, definition="uplift_joint_rel")
    res = bootstrap_auuc(y, t, scores, definition="uplift_joint_rel", n_boot=2)
    with pytest.raises(ValueError, match="reference must be one of 'untied', 'tied'"):
        res.paired("other")


# ----------------------------------------------------------------- definitions
def flip_case():
    """|T| = 90 (30 responders), |C| = 10 (5 responders); two rankers built by reasoning.

    A puts the responders of both arms first; B spreads the treated responders evenly
    (every third place) but puts the control responders last.  With the continuous
    approximations V_A(p) = min(90p, 30) - min(10p, 5) and V_B(p) = 30p - max(0, 10p - 5),
    uplift_sep_abs gives A ≈ 21.25 > B ≈ 13.75; dividing each arm by its size,
    uplift_sep_rel gives A ≈ 1/18 + 2/9 - 3/8 ≈ -0.097 < B ≈ 1/6 - 1/8 ≈ 0.042:
    a control responder weighs |T|/|C| = 9 times more in the relative definition.
    """
    rank_t, rank_c = np.arange(90), np.arange(10)
    y = np.r_[(rank_t < 30).astype(int), (rank_c < 5).astype(int)]
    t = np.r_[np.ones(90, int), np.zeros(10, int)]
    score_a = np.r_[-rank_t * 1.0, -rank_c - 0.5]
    pos_t = np.r_[np.arange(30) * 3, np.setdiff1d(np.arange(90), np.arange(30) * 3)]
    pos_c = np.r_[np.arange(5, 10), np.arange(5)]
    score_b = np.r_[-pos_t * 1.0, -pos_c - 0.5]
    return y, t, {"A": score_a, "B": score_b}


def test_winner_flips_between_absolute_and_relative_definitions():
    y, t, scores = flip_case()
    table = definition_ranks(y, t, scores, definitions=("uplift_sep_abs", "uplift_sep_rel"))
    for d in ("uplift_sep_abs", "uplift_sep_rel"):
        for r, s in scores.items():
            assert table.loc[d, f"AUUC {r}"] == auuc(y, t, s, definition=d)
    assert table.loc["uplift_sep_abs", "AUUC A"] == pytest.approx(21.25, abs=0.5)
    assert table.loc["uplift_sep_abs", "AUUC B"] == pytest.approx(13.75, abs=0.5)
    assert table.loc["uplift_sep_rel", "AUUC A"] == pytest.approx(-0.097, abs=0.005)
    assert table.loc["uplift_sep_rel", "AUUC B"] == pytest.approx(0.042, abs=0.005)
    assert table["winner"].tolist() == ["A", "B"]
    assert table.loc["uplift_sep_abs", "rank A"] == 1 and table.loc["uplift_sep_rel", "rank A"] == 2
    assert table["winner changes?"].all()


def test_no_flip_when_one_ranker_dominates():
    rng = np.random.default_rng(4)
    y, t, x = world(rng, 3000, effect=0.6)
    table = definition_ranks(y, t, {"noise": rng.normal(size=3000), "oracle": x})
    assert table.index.tolist() == list(DEFINITIONS)
    assert (table["winner"] == "oracle").all()
    assert not table["winner changes?"].any()
    assert list(table.columns) == ["AUUC noise", "AUUC oracle", "rank noise", "rank oracle",
                                   "winner", "winner changes?"]


def test_equal_rankers_share_rank_one():
    y, t, scores = small_case()
    s = scores["tied"]
    table = definition_ranks(y, t, {"a": s, "b": s}, definitions=("uplift_joint_rel",))
    assert table["winner"].tolist() == ["a = b"]
    assert table[["rank a", "rank b"]].to_numpy().tolist() == [[1.0, 1.0]]


# ----------------------------------------------------------------- bands
def test_minmax_band_is_pointwise_min_mean_max():
    rng = np.random.default_rng(1)
    x = np.linspace(0, 1, 11)
    vs = [rng.normal(size=11) for _ in range(5)]
    gx, low, mid, high = band([(x, v) for v in vs], grid=11)
    np.testing.assert_allclose(gx, x)
    np.testing.assert_allclose(low, np.min(np.vstack(vs), axis=0))
    np.testing.assert_allclose(high, np.max(np.vstack(vs), axis=0))
    np.testing.assert_allclose(mid, np.mean(np.vstack(vs), axis=0))


def test_band_interpolates_curves_of_different_lengths():
    curves = [(np.array([0.0, 1.0]), np.array([0.0, 1.0])),
              (np.array([0.0, 0.25, 0.5, 0.75, 1.0]), np.array([0.0, 1.0, 1.0, 1.0, 1.0]))]
    x, low, mid, high = band(curves, grid=np.array([0.0, 0.5, 1.0]))
    assert low.tolist() == [0.0, 0.5, 1.0]
    assert high.tolist() == [0.0, 1.0, 1.0]
    assert mid.tolist() == [0.0, 0.75, 1.0]


def test_percentile_band_by_hand():
    # 41 flat curves at heights 0..40: the 2.5 % / 97.5 % percentiles are 1 and 39.
    curves = [(np.array([0.0, 1.0]), np.full(2, float(i))) for i in range(41)]
    _, low, mid, high = band(curves, kind="95", grid=3)
    assert low.tolist() == [1.0] * 3 and high.tolist() == [39.0] * 3 and mid.tolist() == [20.0] * 3


def test_band_validation():
    with pytest.raises(ValueError, match="kind must be one of 'minmax', '95'"):
        band([(np.zeros(2), np.zeros(2))], kind="90")
    with pytest.raises(ValueError, match="non-empty list"):
        band([])
    with pytest.raises(ValueError, match="same, non-zero length"):
        band([(np.zeros(2), np.zeros(3))])
    with pytest.raises(ValueError, match="non-decreasing"):
        band([(np.array([1.0, 0.0]), np.zeros(2))])
