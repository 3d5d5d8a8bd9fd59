"""core.evaluation.curve_tables: the tidy tables pages plot and export agree with
core.evaluation.curves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.evaluation import curves
from core.evaluation.curve_tables import (
    PERFECT,
    RANDOM,
    RankerCurves,
    auuc_summary,
    curves_frame,
    thin,
)


@pytest.fixture
def data(rng):
    n = 300
    y = rng.integers(0, 2, n)
    t = rng.integers(0, 2, n)
    return y, t, {"a": rng.normal(size=n), "b": y * t + rng.normal(size=n)}


def test_curves_frame_matches_uplift_curve_per_ranker(data):
    y, t, scores = data
    for definition in ("qini_joint_abs", "uplift_sep_rel"):
        df = curves_frame(y, t, scores, definition=definition)
        assert set(df.ranker) == {"a", "b", RANDOM, PERFECT}
        for name, s in scores.items():
            x, v = curves.uplift_curve(y, t, s, definition=definition)
            part = df[df.ranker == name]
            np.testing.assert_allclose(part.fraction, x)
            np.testing.assert_allclose(part.value, v)
        line = df[df.ranker == RANDOM]
        np.testing.assert_allclose(line.value, line.fraction * v[-1])
        if definition == "uplift_sep_rel":
            # the oracle dominates every ranker pointwise and ends at the observed ATE
            best = df[df.ranker == PERFECT].value.to_numpy()
            for name in scores:
                assert np.all(best >= df[df.ranker == name].value.to_numpy() - 1e-12)
            ate = y[t == 1].mean() - y[t == 0].mean()
            assert best[-1] == pytest.approx(ate)


def test_thinning_keeps_ends_and_bounds_points(data):
    y, t, scores = data
    df = curves_frame(y, t, scores, definition="uplift_joint_rel", max_points=50, baselines=())
    for _, part in df.groupby("ranker"):
        assert len(part) <= 50
        assert part.fraction.iloc[0] == 0 and part.fraction.iloc[-1] == 1
    assert list(thin(5, 10)) == [0, 1, 2, 3, 4]
    assert thin(1001, 11).tolist() == list(range(0, 1001, 100))


def test_auuc_summary_matches_auuc_and_random_area(data):
    y, t, scores = data
    table = auuc_summary(y, t, scores, definition="uplift_joint_rel", cutoffs=(0.3, 1.0))
    for name, s in scores.items():
        assert table.loc[name, "AUUC@30%"] == pytest.approx(
            curves.auuc(y, t, s, definition="uplift_joint_rel", cutoff=0.3)
        )
    assert table.loc[RANDOM, "AUUC@100%"] == pytest.approx(
        curves.random_auuc(y, t, definition="uplift_joint_rel")
    )
    assert table.loc[PERFECT, "AUUC@100%"] == pytest.approx(
        curves.perfect_auuc(y, t, definition="uplift_joint_rel")
    )


def test_ranker_curves_read_every_definition_off_one_object(data):
    # one object, several definitions in turn: each read agrees with a fresh single-ranker
    # computation (uplift_curve / auuc), so nothing read first leaks into what is read next
    y, t, scores = data
    ranker_curves = RankerCurves(y, t, scores)
    for definition in ("qini_joint_abs", "uplift_sep_rel", "uplift_joint_abs", "qini_sep_abs"):
        frame = ranker_curves.frame(definition)
        table = ranker_curves.auuc(definition, cutoffs=(0.3, 1.0))
        for name, s in scores.items():
            x, v = curves.uplift_curve(y, t, s, definition=definition)
            np.testing.assert_allclose(frame[frame.ranker == name].value, v)
            for cut in (0.3, 1.0):
                assert table.loc[name, f"AUUC@{cut:.0%}"] == pytest.approx(
                    curves.auuc(y, t, s, definition=definition, cutoff=cut))
        assert table.loc[RANDOM, "AUUC@100%"] == pytest.approx(
            curves.random_auuc(y, t, definition=definition))


def test_float32_scores_give_the_float64_tables(data):
    # float32 scores take the radix-sort kernel; values exactly representable in float32
    # (here multiples of 1/8) must rank, tie and accumulate exactly as their float64 copies
    y, t, scores = data
    s64 = {k: np.round(v * 8) / 8 for k, v in scores.items()}
    s32 = {k: v.astype(np.float32) for k, v in s64.items()}
    for definition in ("uplift_joint_rel", "qini_sep_abs"):
        c64, c32 = RankerCurves(y, t, s64), RankerCurves(y, t, s32)
        f64, a64 = c64.frame(definition), c64.auuc(definition)
        f32, a32 = c32.frame(definition), c32.auuc(definition)
        pd.testing.assert_frame_equal(f32, f64, check_exact=True)
        pd.testing.assert_frame_equal(a32, a64, check_exact=True)


def test_bad_score_column_is_named(data):
    y, t, _ = data
    with pytest.raises(ValueError, match=r"scores\['x'\] must have length 300; got length 3"):
        curves_frame(y, t, {"x": [1, 2, 3]}, definition="uplift_joint_rel")
    with pytest.raises(ValueError, match="baselines must be one of"):
        curves_frame(y, t, {}, definition="uplift_joint_rel", baselines=("oracle",))


def test_a_ranker_never_replaces_a_baseline_or_another_ranker(data):
    y, t, scores = data
    s = scores["a"]
    with pytest.raises(ValueError, match="'Perfect \\(oracle\\)', the name of a baseline"):
        auuc_summary(y, t, {PERFECT: s}, definition="qini_sep_abs")
    with pytest.raises(ValueError, match="two rankers '1' once converted to text"):
        RankerCurves(y, t, {1: s, "1": -s})
    # without that baseline the name is free, and the table holds the ranker's own AUUC
    table = auuc_summary(y, t, {PERFECT: s}, definition="qini_sep_abs", baselines=(RANDOM,))
    own = curves.auuc(y, t, s, definition="qini_sep_abs")
    assert table.loc[PERFECT, "AUUC@100%"] == pytest.approx(own) and len(table) == 2


def test_thin_frame_thins_each_ranker(data):
    from core.evaluation.curve_tables import thin_frame

    y, t, scores = data
    df = curves_frame(y, t, scores, definition="uplift_joint_rel")
    small = thin_frame(df, 30)
    assert small.groupby("ranker").size().max() <= 30
    assert set(small.ranker) == set(df.ranker)


def test_compare_scenarios_table_and_swing(rng):
    from core.evaluation.curve_tables import compare_scenarios

    cases = {}
    for name, share in (("balanced", 0.5), ("more treated", 0.9)):
        n = 400
        t = (rng.random(n) < share).astype(int)
        y = rng.integers(0, 2, n)
        cases[name] = (y, t, y * t + rng.random(n))
    frames, table = compare_scenarios(cases, definitions=("qini_sep_abs", "uplift_sep_rel"))
    for d in ("qini_sep_abs", "uplift_sep_rel"):
        for name, (y, t, s) in cases.items():
            assert table.loc[d, name] == pytest.approx(curves.auuc(y, t, s, definition=d))
        a, b = table.loc[d, "balanced"], table.loc[d, "more treated"]
        assert table.loc[d, "swing"] == pytest.approx(abs(a - b) / ((abs(a) + abs(b)) / 2))
        assert set(frames[d].scenario) == set(cases)
