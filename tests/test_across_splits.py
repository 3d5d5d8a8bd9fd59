"""core.evaluation.across_splits: every number over repeated splits against independent
computations — per-split AUUC / bootstrap / profit from the one-split functions, brute-force
resampled profit curves on expanded rows, deciles from an explicit sort, ranks from scipy —
plus the row ids of exported scores (core.data, core.runs.views)."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core._validation import UndefinedMetricWarning
from core.data import make_uplift_world, read_ab_csv
from core.evaluation.across_splits import (
    TestSplit,
    auuc_over_splits,
    bootstrap_over_splits,
    deciles_over_splits,
    definition_ranks_over_splits,
    pool_bootstraps,
    profit_over_splits,
)
from core.evaluation.compare import _stratified_counts, bootstrap_auuc, definition_ranks
from core.evaluation.curve_tables import PERFECT, RANDOM, auuc_summary
from core.evaluation.curves import DEFINITIONS, auuc, perfect_auuc, random_auuc
from core.evaluation import _kernel
from core.evaluation.targeting import _profit_at, _profit_counted, profit_curve, uplift_by_decile
from core.runs import views
from core.runs.store import RunConfig, RunStore


# ----------------------------------------------------------------- simulated splits
def sim_split(seed, n, *, effect=0.3, tied=False, value=False):
    """x ~ U(0, 1); control rate 0.15, treated rate 0.15 + effect·x; rankers "model" (x plus
    noise) and "noise"; ``tied`` rounds both scores to one decimal (many ties)."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    t = (rng.random(n) < 0.5).astype(np.int8)
    y = (rng.random(n) < 0.15 + effect * x * t).astype(np.int8)
    scores = {"model": x + rng.normal(0, 0.3, n), "noise": rng.normal(size=n)}
    if tied:
        scores = {k: np.round(v, 1) for k, v in scores.items()}
    v = np.round(rng.gamma(2.0, 30.0, n) * y, 2) if value else None  # spend of responders
    return TestSplit(y, t, scores, v)


def sim_splits(seed, sizes, **kw):
    return [sim_split(seed + i, n, **kw) for i, n in enumerate(sizes)]


# ----------------------------------------------------------------- AUUC
@pytest.mark.parametrize("ties", ["average", "stable"])
def test_auuc_over_splits_is_mean_and_sd_of_each_splits_auuc(ties):
    splits = sim_splits(1, (300, 320, 280), tied=True)
    definition, cutoffs = "uplift_sep_rel", (0.3, 1.0)
    summary, per_split = auuc_over_splits(splits, definition=definition, cutoffs=cutoffs,
                                          ties=ties)
    assert summary.attrs["n_splits"] == 3
    assert list(summary.index) == ["model", "noise", RANDOM, PERFECT]
    assert list(summary.columns) == ["AUUC@30%", "AUUC@100%", "sd@30%", "sd@100%"]
    assert len(per_split) == 3 * 4
    assert list(per_split.columns) == ["split", "ranker", "AUUC@30%", "AUUC@100%"]

    for cut in cutoffs:
        label = f"{cut:.0%}"
        expected = {
            name: [auuc(s.y, s.t, s.scores[name], definition=definition, cutoff=cut, ties=ties)
                   for s in splits]
            for name in ("model", "noise")
        }
        expected[RANDOM] = [random_auuc(s.y, s.t, definition=definition, cutoff=cut)
                            for s in splits]
        expected[PERFECT] = [perfect_auuc(s.y, s.t, definition=definition, cutoff=cut)
                             for s in splits]
        for name, vals in expected.items():
            np.testing.assert_allclose(summary.loc[name, f"AUUC@{label}"], np.mean(vals),
                                       rtol=1e-12)
            np.testing.assert_allclose(summary.loc[name, f"sd@{label}"],
                                       np.std(vals, ddof=1), rtol=1e-9)
            for i, v in enumerate(vals):
                row = per_split[(per_split["split"] == i) & (per_split["ranker"] == name)]
                assert len(row) == 1
                np.testing.assert_allclose(row[f"AUUC@{label}"].iloc[0], v, rtol=1e-12)
    # the tie policy is passed on: the two policies give other numbers on tied scores
    other = "stable" if ties == "average" else "average"
    assert auuc(splits[0].y, splits[0].t, splits[0].scores["model"], definition=definition,
                ties=other) != per_split.loc[0, "AUUC@100%"]


def test_auuc_over_one_split_equals_auuc_summary_with_nan_sd():
    split = sim_split(7, 400)
    summary, per_split = auuc_over_splits([split], definition="qini_joint_abs")
    table = auuc_summary(split.y, split.t, split.scores, definition="qini_joint_abs")
    assert summary.attrs["n_splits"] == 1
    assert list(summary.index) == list(table.index)
    auuc_cols = [c for c in summary.columns if c.startswith("AUUC@")]
    assert auuc_cols == list(table.columns)
    np.testing.assert_array_equal(summary[auuc_cols].to_numpy(), table.to_numpy())
    sd_cols = [c for c in summary.columns if c.startswith("sd@")]
    assert len(sd_cols) == len(auuc_cols)
    assert summary[sd_cols].isna().all().all()
    assert (per_split["split"] == 0).all()


def test_auuc_over_splits_without_baselines_and_with_mismatched_rankers():
    splits = sim_splits(3, (200, 200))
    summary, _ = auuc_over_splits(splits, definition="uplift_joint_abs", baselines=())
    assert list(summary.index) == ["model", "noise"]
    bad = [splits[0], TestSplit(splits[1].y, splits[1].t, {"model": splits[1].scores["model"]})]
    with pytest.raises(ValueError, match="same rankers"):
        auuc_over_splits(bad, definition="uplift_joint_abs")
    with pytest.raises(ValueError, match="non-empty list"):
        auuc_over_splits([], definition="uplift_joint_abs")


# ----------------------------------------------------------------- bootstrap
def test_bootstrap_over_one_split_equals_bootstrap_auuc():
    split = sim_split(11, 300)
    kw = {"definition": "qini_joint_abs", "cutoffs": (0.3, 1.0), "n_boot": 60, "random_state": 5}
    pooled = bootstrap_over_splits([split], **kw)
    single = bootstrap_auuc(split.y, split.t, split.scores, **kw)
    assert pooled.rankers == single.rankers
    np.testing.assert_array_equal(pooled.estimates, single.estimates)
    np.testing.assert_array_equal(pooled.replicates, single.replicates)


def test_bootstrap_over_splits_pools_each_splits_bootstrap_on_spawned_streams():
    splits = sim_splits(20, (250, 300, 270))
    seed, n_boot, cutoffs, definition = 9, 40, (0.3, 1.0), "uplift_sep_abs"
    pooled = bootstrap_over_splits(splits, definition=definition, cutoffs=cutoffs,
                                   n_boot=n_boot, random_state=seed)
    # estimates: mean over splits of each split's AUUC
    expected = np.array([[np.mean([auuc(s.y, s.t, s.scores[name], definition=definition,
                                        cutoff=c) for s in splits])
                          for c in cutoffs] for name in ("model", "noise")])
    np.testing.assert_allclose(pooled.estimates, expected, rtol=1e-12)
    # replicates: mean over splits of the one-split bootstrap on stream s of the seed
    streams = np.random.default_rng(seed).spawn(3)
    per = [bootstrap_auuc(s.y, s.t, s.scores, definition=definition, cutoffs=cutoffs,
                          n_boot=n_boot, random_state=g).replicates
           for s, g in zip(splits, streams)]
    assert pooled.replicates.shape == (n_boot, 2, 2)
    np.testing.assert_allclose(pooled.replicates, (per[0] + per[1] + per[2]) / 3, rtol=1e-12)


def test_identical_rankers_over_splits_are_not_distinguishable():
    splits = [TestSplit(s.y, s.t, {"a": s.scores["model"], "b": s.scores["model"].copy()})
              for s in sim_splits(30, (200, 220, 240))]
    res = bootstrap_over_splits(splits, definition="uplift_joint_rel", cutoffs=(0.5, 1.0),
                                n_boot=50, random_state=1)
    paired = res.paired("a")
    assert list(paired["ranker"]) == ["b", "b"]
    assert (paired["difference"] == 0).all()
    assert (paired["p_value"] == 1).all()
    assert paired["verdict"].str.startswith("not distinguishable").all()


def test_bootstrap_progress_counts_every_replicate_of_every_split():
    splits = sim_splits(40, (150, 160, 170))
    n_boot, calls = 120, []
    bootstrap_over_splits(splits, definition="qini_sep_abs", cutoffs=(1.0,), n_boot=n_boot,
                          progress=lambda done, total: calls.append((done, total)))
    done = [d for d, _ in calls]
    assert {tot for _, tot in calls} == {3 * n_boot}
    assert all(b > a for a, b in itertools.pairwise(done))
    assert done[-1] == 3 * n_boot
    # each split reports its last replicate (bootstrap_auuc: "after the last")
    assert {n_boot, 2 * n_boot}.issubset(done)


def test_pool_bootstraps_refuses_results_that_do_not_match():
    s = sim_split(50, 200)
    base = {"definition": "qini_joint_abs", "cutoffs": (0.3, 1.0), "n_boot": 10, "random_state": 0}
    a = bootstrap_auuc(s.y, s.t, s.scores, **base)
    for change in ({"cutoffs": (1.0,)}, {"n_boot": 11}, {"definition": "uplift_sep_rel"},
                   {"level": 0.9}):
        b = bootstrap_auuc(s.y, s.t, s.scores, **{**base, **change})
        with pytest.raises(ValueError, match="cannot pool"):
            pool_bootstraps([a, b])
    c = bootstrap_auuc(s.y, s.t, {"model": s.scores["model"]}, **base)
    with pytest.raises(ValueError, match="cannot pool"):
        pool_bootstraps([a, c])
    with pytest.raises(ValueError, match="non-empty list"):
        pool_bootstraps([])
    assert pool_bootstraps([a]) is a


# ----------------------------------------------------------------- definition ranks
def test_definition_ranks_over_splits_rank_the_mean_auuc():
    rng = np.random.default_rng(60)
    n = 3000
    splits = []
    for good in ("A", "B"):
        x = rng.random(n)
        t = (rng.random(n) < 0.4).astype(np.int8)  # unequal arms
        y = (rng.random(n) < 0.1 + 0.4 * x * t).astype(np.int8)
        if good == "A":  # split 0: A is the true score, B is noise (a big gap)
            scores = {"A": x, "B": rng.normal(size=n)}
        else:  # split 1: B is the true score, A a slightly noisier copy (a small gap)
            scores = {"A": x + rng.normal(0, 0.15, n), "B": x}
        splits.append(TestSplit(y, t, scores))
    definitions = tuple(DEFINITIONS)
    table = definition_ranks_over_splits(splits, definitions=definitions, cutoff=1.0)
    per = [definition_ranks(s.y, s.t, s.scores, definitions=definitions) for s in splits]
    # the winner flips between the splits
    assert (per[0]["winner"] == "A").all()
    assert (per[1]["winner"] == "B").any()
    assert table.attrs["n_splits"] == 2
    names = ["A", "B"]
    winners = []
    for d in definitions:
        means = np.array([np.mean([p.loc[d, f"AUUC {r}"] for p in per]) for r in names])
        np.testing.assert_allclose([table.loc[d, f"AUUC {r}"] for r in names], means,
                                   rtol=1e-12)
        ranks = stats.rankdata(-means, method="min")
        assert [table.loc[d, f"rank {r}"] for r in names] == list(ranks)
        winner = " = ".join(r for r, k in zip(names, ranks) if k == 1)
        assert table.loc[d, "winner"] == winner
        winners.append(winner)
    assert (table["winner changes?"] == (len(set(winners)) > 1)).all()
    # where the splits disagree, the pooled winner is not simply the last split's
    assert (table["winner"] != per[1]["winner"]).any()


# ----------------------------------------------------------------- deciles
def brute_deciles(y, t, score, bins=10):
    """Equal-count bins of the sorted order (n divisible by bins, untied scores)."""
    n = len(y)
    order = np.argsort(-score, kind="stable")
    b = np.empty(n, dtype=int)
    b[order] = np.arange(n) // (n // bins) + 1
    out = []
    for k in range(1, bins + 1):
        m = b == k
        out.append((m.sum(), y[m & (t == 1)].mean() - y[m & (t == 0)].mean()))
    return np.array(out)


def test_deciles_over_splits_are_mean_min_max_of_each_splits_deciles():
    splits = sim_splits(70, (200, 300, 250), effect=0.5)
    out = deciles_over_splits(splits, "model")
    per = np.array([brute_deciles(s.y, s.t, s.scores["model"]) for s in splits])
    assert list(out["bin"]) == list(range(1, 11))
    np.testing.assert_allclose(out["n"], per[:, :, 0].mean(axis=0))
    np.testing.assert_allclose(out["uplift"], per[:, :, 1].mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(out["low"], per[:, :, 1].min(axis=0), rtol=1e-12)
    np.testing.assert_allclose(out["high"], per[:, :, 1].max(axis=0), rtol=1e-12)
    assert (out["n_splits"] == 3).all()
    # and the same through uplift_by_decile
    ub = [uplift_by_decile(s.y, s.t, s.scores["model"])["uplift"].to_numpy() for s in splits]
    np.testing.assert_allclose(out["uplift"], np.mean(ub, axis=0), rtol=1e-12)


def test_deciles_over_one_split_are_the_wald_interval():
    split = sim_split(80, 400, effect=0.5)
    out = deciles_over_splits([split], "model", bins=5, level=0.9)
    one = uplift_by_decile(split.y, split.t, split.scores["model"], bins=5, level=0.9)
    np.testing.assert_array_equal(out["low"], one["ci_low"])
    np.testing.assert_array_equal(out["high"], one["ci_high"])
    np.testing.assert_array_equal(out["uplift"], one["uplift"])
    # the Wald interval by hand
    y, t, s = split.y, split.t, split.scores["model"]
    order = np.argsort(-s, kind="stable")
    z = stats.norm.ppf(0.95)
    for k, rows in enumerate(np.split(order, 5)):
        yt, yc = y[rows][t[rows] == 1], y[rows][t[rows] == 0]
        pt, pc = yt.mean(), yc.mean()
        se = np.sqrt(pt * (1 - pt) / len(yt) + pc * (1 - pc) / len(yc))
        np.testing.assert_allclose([out["low"].iloc[k], out["high"].iloc[k]],
                                   [pt - pc - z * se, pt - pc + z * se], rtol=1e-10)
    with pytest.raises(ValueError, match="ranker"):
        deciles_over_splits([split], "nobody")


# ----------------------------------------------------------------- profit
def _rows_at(fractions, n):
    return [round(float(f) * n) for f in fractions]


def _profit_at_rows(y, t, score, ks, *, cost, vpr=None, value=None, ties="average"):
    frame = profit_curve(y, t, score, cost_per_treatment=cost, value_per_response=vpr,
                         value=value, ties=ties)
    assert (frame["targeted"].to_numpy() == np.arange(len(y) + 1)).all()
    return frame["profit"].to_numpy()[ks]


@pytest.mark.parametrize("economics", ["per_response", "per_row"])
@pytest.mark.parametrize("ties", ["average", "stable"])
def test_profit_over_splits_equals_profit_curve_at_each_grid_depth(economics, ties):
    splits = sim_splits(90, (150, 170, 160), tied=True, value=True)
    kw = {"value_per_response": 3.0} if economics == "per_response" else {}
    res = profit_over_splits(splits, cost_per_treatment=0.4, grid=41, n_boot=3, ties=ties,
                             **kw)
    assert res.per_split.shape == (3, 2, 41)
    np.testing.assert_allclose(res.fractions, np.linspace(0, 1, 41))
    for s, split in enumerate(splits):
        ks = _rows_at(res.fractions, len(split.y))
        for j, name in enumerate(res.rankers):
            econ = {"vpr": 3.0} if economics == "per_response" else {"value": split.value}
            expected = _profit_at_rows(split.y, split.t, split.scores[name], ks, cost=0.4,
                                       ties=ties, **econ)
            np.testing.assert_allclose(res.per_split[s, j], expected, rtol=1e-10, atol=1e-10)
    # the policy matters on these tied scores, so the comparison above pinned it
    other = "stable" if ties == "average" else "average"
    ks = _rows_at(res.fractions, len(splits[0].y))
    assert not np.allclose(res.per_split[0, 0], _profit_at_rows(
        splits[0].y, splits[0].t, splits[0].scores["model"], ks, cost=0.4, ties=other,
        **({"vpr": 3.0} if economics == "per_response" else {"value": splits[0].value})))
    # curves(): mean over splits, min/max across them
    curves = res.curves()
    for j, name in enumerate(res.rankers):
        c = curves[name]
        np.testing.assert_allclose(c["profit"], res.per_split[:, j].mean(axis=0))
        np.testing.assert_allclose(c["low"], res.per_split[:, j].min(axis=0))
        np.testing.assert_allclose(c["high"], res.per_split[:, j].max(axis=0))
        assert list(c["targeted"]) == _rows_at(res.fractions, np.mean([150, 170, 160]))


@pytest.mark.parametrize("path", ["compiled", "numpy"])
@pytest.mark.parametrize("ties", ["average", "stable"])
def test_one_split_profit_replicates_equal_profit_curve_on_expanded_rows(ties, path,
                                                                          monkeypatch):
    # compiled: one pass over the rows and their counts; numpy: the rows repeated
    if path == "numpy":
        monkeypatch.setattr(_kernel, "_compiled", None)
    split = sim_split(100, 80, tied=True, value=True)
    n_boot, seed, cost = 25, 11, 0.5
    res = profit_over_splits([split], cost_per_treatment=cost, grid=41, n_boot=n_boot,
                             ties=ties, random_state=seed)
    n = len(split.y)
    ks = _rows_at(res.fractions, n)
    brute = np.empty((n_boot, 2, 41))
    for b, w in enumerate(_stratified_counts(split.t, n_boot, np.random.default_rng(seed))):
        idx = np.repeat(np.arange(n), w)  # copies of one row adjacent, in row order
        for j, name in enumerate(res.rankers):
            brute[b, j] = _profit_at_rows(split.y[idx], split.t[idx], split.scores[name][idx],
                                          ks, cost=cost, value=split.value[idx], ties=ties)
    np.testing.assert_allclose(res.replicates, brute, rtol=1e-10, atol=1e-10)
    # one split: the band is the pointwise percentile interval of the replicates
    low, high = np.percentile(brute, [2.5, 97.5], axis=0)
    for j, name in enumerate(res.rankers):
        np.testing.assert_allclose(res.curves()[name]["low"], low[j], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(res.curves()[name]["high"], high[j], rtol=1e-10,
                                   atol=1e-10)


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_counted_profit_is_the_profit_of_the_repeated_rows(ties):
    # Brute force: _profit_at on the rows repeated counts[i] times (zero counts, tied
    # scores): per-row values (negative ones too) and a value per response of a 0/1 outcome.
    pytest.importorskip("numba")
    rng = np.random.default_rng(5)
    n = 300
    neg = np.sort(-rng.integers(0, 40, n).astype(np.float64))
    t = (rng.random(n) < 0.6).astype(np.int8)
    y = (rng.random(n) < 0.3).astype(np.int8)
    v = np.where(y == 1, rng.normal(2.0, 3.0, n), 0.0)
    for counts in (rng.poisson(1.0, n), rng.poisson(1.0, n).astype(np.uint8)):
        m = int(counts.sum())
        ks = np.rint(np.linspace(0, 1, 57) * m).astype(np.int64)
        for code, values, scale, per_row in (((2 * t).astype(np.int8), v, 1.0, v),
                                             ((2 * t + y).astype(np.int8), None, 2.5, 2.5 * y)):
            got = _profit_counted(code, values, scale, neg, counts, ks, ties, 0.3,
                                  np.empty(ks.size))
            assert got is not None  # numba present: the compiled pass ran
            want = _profit_at(np.repeat(t, counts).astype(np.float64),
                              np.repeat(per_row, counts), np.repeat(neg, counts), ks, ties,
                              0.3)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["compiled", "numpy"])
def test_profit_of_a_split_with_one_arm_is_nan_with_its_replicates(path, monkeypatch):
    # no control rows: no incremental value at any depth (as _profit_at says), in every
    # resample too (an arm-stratified resample keeps the arms)
    if path == "numpy":
        monkeypatch.setattr(_kernel, "_compiled", None)
    rng = np.random.default_rng(21)
    n = 60
    y, t = (rng.random(n) < 0.4).astype(np.int8), np.ones(n, dtype=np.int8)
    split = TestSplit(y, t, {"r": rng.normal(size=n)}, value=rng.gamma(2.0, 1.0, n))
    for kw in ({"value_per_response": 2.0}, {}):
        res = profit_over_splits([split], cost_per_treatment=0.1, grid=11, n_boot=4, **kw)
        assert np.isnan(res.per_split).all() and np.isnan(res.replicates).all()


def test_profit_replicates_over_splits_pool_spawned_streams():
    splits = sim_splits(110, (60, 70, 65))
    n_boot, seed, cost, vpr = 8, 4, 0.2, 2.0
    res = profit_over_splits(splits, cost_per_treatment=cost, value_per_response=vpr,
                             grid=21, n_boot=n_boot, random_state=seed)
    streams = np.random.default_rng(seed).spawn(3)
    total = np.zeros((n_boot, 2, 21))
    for split, g in zip(splits, streams):
        n = len(split.y)
        ks = _rows_at(res.fractions, n)
        for b, w in enumerate(_stratified_counts(split.t, n_boot, g)):
            idx = np.repeat(np.arange(n), w)
            for j, name in enumerate(res.rankers):
                total[b, j] += _profit_at_rows(split.y[idx], split.t[idx],
                                               split.scores[name][idx], ks, cost=cost, vpr=vpr)
    np.testing.assert_allclose(res.replicates, total / 3, rtol=1e-10, atol=1e-10)


def _equivalent_range(reps, g, fractions, level):
    """Docstring definition, scanned outward from the best depth: depths d with the upper
    (1+level)/2 percentile of P_b(d) - P_b(best) >= 0, contiguous around the best."""
    ok = [np.percentile(reps[:, d] - reps[:, g], 100 * (1 + level) / 2) >= 0
          for d in range(reps.shape[1])]
    members = {g}
    for step in (-1, 1):
        d = g + step
        while 0 <= d < len(ok) and ok[d]:
            members.add(d)
            d += step
    return fractions[min(members)], fractions[max(members)]


def _flat_and_sharp():
    """Flat: no effect, cost 0 (profit is noise around 0).  Sharp: a large effect only in the
    top 20 % of the score and a cost, so profit climbs to 20 % and falls after."""
    flat, sharp = [], []
    for i in range(3):
        rng = np.random.default_rng(120 + i)
        n = 3000
        x = rng.random(n)
        t = (rng.random(n) < 0.5).astype(np.int8)
        y = (rng.random(n) < 0.3).astype(np.int8)
        flat.append(TestSplit(y, t, {"r": x}))
        y2 = (rng.random(n) < 0.1 + 0.6 * (x > 0.8) * t).astype(np.int8)
        sharp.append(TestSplit(y2, t, {"r": x}))
    kw = {"value_per_response": 1.0, "grid": 101, "n_boot": 200, "random_state": 3}
    return (profit_over_splits(flat, cost_per_treatment=0.0, **kw),
            profit_over_splits(sharp, cost_per_treatment=0.15, **kw), sharp)


def test_depth_summary_flat_curve_is_equivalent_over_a_wide_range_sharp_one_is_narrow():
    flat, sharp, sharp_splits = _flat_and_sharp()
    widths = {}
    for res in (flat, sharp):
        row = res.summary().loc["r"]
        mean = res.per_split[:, 0].mean(axis=0)
        g = int(np.argmax(mean))
        assert row["best_fraction"] == res.fractions[g]
        np.testing.assert_allclose(row["best_profit"], mean[g])
        np.testing.assert_allclose(row["profit_all"], mean[-1])
        lo, hi = _equivalent_range(res.replicates[:, 0], g, res.fractions, res.level)
        assert (row["equivalent_low"], row["equivalent_high"]) == (lo, hi)
        assert lo <= row["best_fraction"] <= hi
        widths[id(res)] = hi - lo
        # the best depth's interval: replicates' best depths, on the grid (no 99.51 % to be
        # shown as 99.5 %), the order statistics just outside the 2.5 / 97.5 percentiles
        best = np.sort(res.fractions[np.argmax(res.replicates[:, 0], axis=1)])
        b = best.size
        assert row["depth_low"] == best[int(np.floor(0.025 * (b - 1)))]
        assert row["depth_high"] == best[int(np.ceil(0.975 * (b - 1)))]
        assert {row["depth_low"], row["depth_high"]} <= set(res.fractions)
        # the verdict follows the docstring rule (≥ 0.10 wide: flat, statistically equivalent)
        assert ("statistically equivalent" in row["verdict"]) == (hi - lo >= 0.10)
    assert "statistically equivalent" in flat.summary().loc["r", "verdict"]
    assert widths[id(sharp)] < widths[id(flat)]
    # the sharp world's true best depth (the top 20 %) is among the equivalent depths
    srow = sharp.summary().loc["r"]
    assert srow["equivalent_low"] <= 0.2 <= srow["equivalent_high"]
    # best-depth mean curve recomputed from profit_curve on each split
    ks = _rows_at(sharp.fractions, 3000)
    mean = np.mean([_profit_at_rows(s.y, s.t, s.scores["r"], ks, cost=0.15, vpr=1.0)
                    for s in sharp_splits], axis=0)
    assert srow["best_fraction"] == sharp.fractions[int(np.argmax(mean))]


def test_profit_progress_counts_each_replicate_and_value_is_required():
    splits = sim_splits(130, (50, 60), value=True)
    calls = []
    profit_over_splits(splits, cost_per_treatment=0.1, grid=5, n_boot=7,
                       progress=lambda d, tot: calls.append((d, tot)))
    assert calls == [(d, 14) for d in range(1, 15)]
    no_value = [TestSplit(s.y, s.t, s.scores) for s in splits]
    with pytest.raises(ValueError, match="no per-row value"):
        profit_over_splits(no_value, cost_per_treatment=0.1)
    # value_per_response given: the split's value is not needed
    res = profit_over_splits(no_value, cost_per_treatment=0.1, value_per_response=1.0,
                             grid=5, n_boot=2)
    assert res.per_split.shape == (2, 2, 5)
    with pytest.raises(ValueError, match="grid"):
        profit_over_splits(splits, cost_per_treatment=0.1, grid=1)


def test_profit_without_responders_matches_profit_curve():
    rng = np.random.default_rng(135)
    n = 40
    y, t, s = np.zeros(n, dtype=np.int8), (np.arange(n) % 2).astype(np.int8), rng.normal(size=n)
    with pytest.warns(UndefinedMetricWarning):
        expected = _profit_at_rows(y, t, s, _rows_at(np.linspace(0, 1, 5), n), cost=0.5,
                                   vpr=1.0)
    calls = []
    with pytest.warns(UndefinedMetricWarning):
        res = profit_over_splits([TestSplit(y, t, {"r": s})], cost_per_treatment=0.5,
                                 value_per_response=1.0, grid=5, n_boot=2,
                                 progress=lambda d, tot: calls.append((d, tot)))
    np.testing.assert_array_equal(res.per_split[0, 0], expected)
    assert np.isnan(res.replicates).all()
    assert calls == [(1, 2), (2, 2)]  # skipped replicates are reported too (a cancel is seen)


# ----------------------------------------------------------------- row ids
def _csv(rng, n, *, with_id, blank_treatment_row=None):
    ids = rng.permutation(np.arange(1000, 1000 + 10 * n, 10))[:n]  # distinct, not sorted
    lines = [("customer_id," if with_id else "") + "x,seg,treatment,outcome"]
    for i in range(n):
        tr = "" if i == blank_treatment_row else str(int(rng.random() < 0.5))
        lines.append((f"{ids[i]}," if with_id else "")
                     + f"{rng.normal():.4f},{'abc'[i % 3]},{tr},{int(rng.random() < 0.3)}")
    return "\n".join(lines) + "\n", ids


def test_csv_id_column_becomes_the_row_ids():
    rng = np.random.default_rng(140)
    text, ids = _csv(rng, 30, with_id=True, blank_treatment_row=7)
    data = read_ab_csv(io.BytesIO(text.encode()), treatment="treatment", outcome="outcome")
    frame = pd.read_csv(io.StringIO(text))
    kept = frame["treatment"].notna().to_numpy()
    assert data.n == 29
    assert "customer_id" not in data.X.columns
    assert data.id_name == "customer_id"
    np.testing.assert_array_equal(data.ids, ids[kept])
    np.testing.assert_array_equal(data.row_ids(), ids[kept])
    sub = data.subset([5, 0, 12])
    assert sub.id_name == "customer_id"
    np.testing.assert_array_equal(sub.ids, ids[kept][[5, 0, 12]])


def test_csv_without_id_column_numbers_the_kept_data_rows():
    rng = np.random.default_rng(150)
    text, _ = _csv(rng, 25, with_id=False, blank_treatment_row=4)
    data = read_ab_csv(text.encode(), treatment="treatment", outcome="outcome")
    # 1-based data-row numbers (the header is not a data row) of rows with a treatment
    body = text.splitlines()[1:]
    expected = [i + 1 for i, line in enumerate(body) if line.split(",")[2] != ""]
    assert len(expected) == 24 and 5 not in expected
    assert data.id_name == "row"
    np.testing.assert_array_equal(data.ids, expected)
    np.testing.assert_array_equal(data.subset(slice(3, 6)).ids, expected[3:6])


def test_row_ids_of_data_not_read_from_a_file_are_one_to_n():
    data = make_uplift_world(n=50, random_state=0)
    assert data.ids is None and data.id_name == "row"
    np.testing.assert_array_equal(data.row_ids(), np.arange(1, 51))
    np.testing.assert_array_equal(data.row_ids([4, 0]), [5, 1])
    np.testing.assert_array_equal(data.subset([9, 2]).row_ids(), [10, 3])


# ----------------------------------------------------------------- runs → splits, exports
@pytest.fixture
def csv_data_and_runs(tmp_path):
    """Data read from a CSV with an id column and two stored runs (3 and 2 splits) that share
    their test rows split by split; the scores are written directly (no training)."""
    rng = np.random.default_rng(160)
    text, _ = _csv(rng, 120, with_id=True, blank_treatment_row=10)
    data = read_ab_csv(text.encode(), treatment="treatment", outcome="outcome")
    store = RunStore(tmp_path)
    tests = [np.sort(rng.choice(data.n, 36, replace=False)) for _ in range(3)]
    written, runs = {}, []
    for n_repeats in (3, 2):
        config = RunConfig.for_data(data, "TwoModel", {"n_estimators": 10},
                                    scheme="repeated", n_repeats=n_repeats)
        with store.writer(config) as w:
            for i in range(n_repeats):
                score = rng.normal(size=len(tests[i]))
                w.add_split(i, tests[i], data.y[tests[i]], data.t[tests[i]], score)
                written[(config.run_id(), i)] = score
            run = w.commit({})
        runs.append(run)
    return data, runs, tests, written


def test_test_splits_uses_the_shared_splits_and_each_runs_scores(csv_data_and_runs):
    data, runs, tests, written = csv_data_and_runs
    spend = np.arange(data.n, dtype=float) * 1.5
    indices, splits = views.test_splits(runs, value=spend)
    assert len(indices) == len(splits) == min(r.n_splits for r in runs) == 2
    labels = views.display_labels(runs)
    for i, (index, split) in enumerate(zip(indices, splits)):
        np.testing.assert_array_equal(index, tests[i])
        np.testing.assert_array_equal(split.y, data.y[tests[i]])
        np.testing.assert_array_equal(split.t, data.t[tests[i]])
        np.testing.assert_array_equal(split.value, spend[tests[i]])
        assert set(split.scores) == set(labels.values())
        for run in runs:
            np.testing.assert_array_equal(split.scores[labels[run.run_id]],
                                          written[(run.run_id, i)])
    _, no_value = views.test_splits(runs)
    assert all(s.value is None for s in no_value)


def test_scores_frame_carries_the_data_ids(csv_data_and_runs):
    data, runs, tests, written = csv_data_and_runs
    run = runs[0]
    frame = views.scores_frame(run, split=1, data=data)
    assert list(frame.columns) == ["customer_id", "split", "treatment", "outcome", "score"]
    np.testing.assert_array_equal(frame["customer_id"], data.ids[tests[1]])
    assert (frame["split"] == 2).all()
    np.testing.assert_array_equal(frame["score"], written[(run.run_id, 1)])
    np.testing.assert_array_equal(frame["outcome"], data.y[tests[1]])

    every = views.scores_frame(run, split="all", data=data)
    sizes = [len(x) for x in tests]
    assert len(every) == sum(sizes)
    np.testing.assert_array_equal(every["split"], np.repeat([1, 2, 3], sizes))
    np.testing.assert_array_equal(every["customer_id"], data.ids[np.concatenate(tests)])
    np.testing.assert_array_equal(every["score"], np.concatenate(
        [written[(run.run_id, i)] for i in range(3)]))

    plain = views.scores_frame(run)
    assert plain.columns[0] == "row"
    np.testing.assert_array_equal(plain["row"], tests[0] + 1)


def test_ranking_metrics_over_splits_p_ndcg_by_score_quantile():
    """P-nDCG of each split's whole test list with relevant = Abs1 label (TR or CN) and
    probability = the score's quantile (mid-rank − ½)/n, recomputed from the definition."""
    from scipy.stats import rankdata

    from core.evaluation import p_ndcg, ranking_metrics_over_splits
    from core.evaluation.metrics import ndcg

    rng = np.random.default_rng(7)
    splits = []
    for _ in range(3):
        y, t = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
        splits.append(TestSplit(y, t, {"a": rng.normal(size=300) + y * t,
                                       "b": rng.normal(size=300)}))
    table = ranking_metrics_over_splits(splits)
    for name in ("a", "b"):
        vals, nd = [], []
        for s in splits:
            rel = ((s.y == 1) & (s.t == 1)) | ((s.y == 0) & (s.t == 0))
            score = s.scores[name]
            vals.append(p_ndcg(rel.astype(int), (rankdata(score) - 0.5) / score.size))
            nd.append(ndcg(rel.astype(float), score))
        assert table.loc[name, "P-nDCG"] == pytest.approx(np.mean(vals))
        assert table.loc[name, "sd P-nDCG"] == pytest.approx(np.std(vals, ddof=1))
        assert table.loc[name, "nDCG"] == pytest.approx(np.mean(nd))
    assert table.loc["a", "P-nDCG"] > table.loc["b", "P-nDCG"]


def test_p_ndcg_is_one_for_flat_probabilities_whatever_the_order():
    """Why the Compare page offers the quantile map: with equal probabilities DCG_p and
    IDCG_p are both n₊·c (SPEC §5's formula), so any order scores 1."""
    from core.evaluation import p_ndcg

    assert p_ndcg([0, 0, 1, 0, 1], [0.3] * 5) == pytest.approx(1.0)


def test_depth_verdict_shows_half_percents_and_an_unstable_best_depth():
    from core.evaluation.across_splits import _depth_verdict

    # depths on the 0.5 % grid read as the table shows them, never rounded to 26 % / 28 %
    assert _depth_verdict(0.265, 0.20, 0.275, 0.95) == (
        "Best depth 26.5%; well determined (equivalent depths 20%–27.5%).")
    # equivalent depths narrow, but the best depth's own interval 22.5–48 % is not
    text = _depth_verdict(0.255, 0.205, 0.26, 0.95, 0.225, 0.48)
    assert "well determined" not in text
    assert "moves from 22.5% to 48% across bootstrap samples" in text
    assert "any depth from 15% to 27.5% is statistically equivalent" in _depth_verdict(
        0.25, 0.15, 0.275, 0.95, 0.2, 0.3)


def test_a_depth_whose_profit_interval_holds_zero_is_said_to_earn_nothing_distinguishable():
    """'Well determined' depth, profit −74.85 to 75.35 (a walk's Compare page): the verdict
    adds that this profit is not distinguishable from zero; an interval above 0 adds nothing,
    and 'targeting nobody' needs no such sentence."""
    from core.evaluation.across_splits import _depth_verdict

    text = _depth_verdict(0.01, 0.005, 0.02, 0.95, 0.005, 0.02, profit=(-74.85, 75.35))
    assert text == ("Best depth 1%; well determined (equivalent depths 0.5%–2%). Its profit is "
                    "not distinguishable from zero (95% interval -74.85 to 75.35).")
    assert "zero" not in _depth_verdict(0.01, 0.005, 0.02, 0.95, profit=(3.0, 75.35))
    assert "zero" not in _depth_verdict(0.0, 0.0, 0.02, 0.95, profit=(-5.0, 5.0))
