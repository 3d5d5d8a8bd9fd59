"""Tests of core.evaluation.curves against the paper's Table 1, brute-force loops and formulas."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from core._validation import UndefinedMetricWarning
from core.evaluation import curves
from core.evaluation.curves import DEFINITIONS, UpliftCurves, auuc, uplift_curve

LINEAR = ("uplift_joint_rel", "uplift_sep_rel", "uplift_sep_abs", "qini_sep_abs")


# ----------------------------------------------------------------- brute force
def brute_joint(y, t, order, name):
    """V(k) for k = 0..n by explicit counting over the ranked rows (no cumsum)."""
    n, T, C = len(y), sum(t), len(t) - sum(t)
    out = [0.0]
    for k in range(1, n + 1):
        top = order[:k]
        nt = sum(1 for i in top if t[i] == 1)
        nc = k - nt
        rt = sum(1 for i in top if t[i] == 1 and y[i] == 1)
        rc = sum(1 for i in top if t[i] == 0 and y[i] == 1)
        if name == "uplift_joint_rel":
            out.append(rt / T - rc / C)
        elif nt == 0 or nc == 0:
            out.append(0.0)
        elif name == "qini_joint_abs":
            out.append(rt - rc * nt / nc)
        else:
            out.append((rt / nt - rc / nc) * (nt + nc))
    return np.array(out)


def brute_separate(y, t, order, name, points=100):
    T_rank = [i for i in order if t[i] == 1]
    C_rank = [i for i in order if t[i] == 0]
    T, C = len(T_rank), len(C_rank)
    out = []
    for j in range(points + 1):
        p = j / points
        kt = math.floor(p * T + 0.5 + 1e-12)
        kc = math.floor(p * C + 0.5 + 1e-12)
        r_t = sum(y[i] for i in T_rank[:kt])
        r_c = sum(y[i] for i in C_rank[:kc])
        if name == "uplift_sep_rel":
            out.append(r_t / T - r_c / C)
        elif name == "uplift_sep_abs":
            out.append(r_t - r_c)
        else:
            out.append(r_t - r_c * T / C)
    return np.array(out)


def brute_curve(y, t, order, name, points=100):
    if DEFINITIONS[name].setting == "joint":
        return brute_joint(y, t, order, name)
    return brute_separate(y, t, order, name, points)


def stable_order(score):
    return sorted(range(len(score)), key=lambda i: (-score[i], i))


def random_case(rng, n, n_levels=None):
    while True:
        y = rng.integers(0, 2, n)
        t = rng.integers(0, 2, n)
        if 0 < t.sum() < n and y.sum() > 0:
            break
    score = rng.integers(0, n_levels, n).astype(float) if n_levels else rng.normal(size=n)
    return y, t, score


# ----------------------------------------------------------------- paper Table 1
def test_paper_table1_counts():
    # rows (y, t) in rank order: (0,1), (1,1), (1,0), (1,1)
    y = np.array([0, 1, 1, 1])
    t = np.array([1, 1, 0, 1])
    score = np.array([4.0, 3.0, 2.0, 1.0])
    c = UpliftCurves(y, t, score)
    assert c._nt[1] == 1 and c._nt[3] == 2  # N^T(D,1)=1, N^T(D,3)=2
    assert c._rt[1] == 0 and c._rt[3] == 1  # R^T(D,1)=0, R^T(D,3)=1
    assert c._separate_responders("t", [1, 3]).tolist() == [0, 2]  # R(T,1)=0, R(T,3)=2
    # and the joint relative curve written out by hand: |T|=3, |C|=1
    _, v = uplift_curve(y, t, score, definition="uplift_joint_rel")
    np.testing.assert_allclose(v, [0, 0, 1 / 3, 1 / 3 - 1, 2 / 3 - 1])


# ----------------------------------------------------------------- brute force agreement
@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_stable_curves_match_brute_force(name, rng):
    for n in (2, 3, 7, 25, 60):
        for levels in (None, 3):
            y, t, s = random_case(rng, n, levels)
            _, v = uplift_curve(y, t, s, definition=name, ties="stable")
            ref = brute_curve(list(y), list(t), stable_order(list(s)), name)
            np.testing.assert_allclose(v, ref, atol=1e-12)


@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_auuc_mean_convention_matches_brute_force(name, rng):
    for cutoff in (0.1, 0.3, 0.5, 1.0):
        y, t, s = random_case(rng, 37)
        ref_curve = brute_curve(list(y), list(t), stable_order(list(s)), name)
        if DEFINITIONS[name].setting == "joint":
            ref = sum(ref_curve[k] for k in range(1, math.floor(cutoff * 37 + 1e-9) + 1)) / 37
        else:
            ref = sum(ref_curve[p] for p in range(1, round(cutoff * 100) + 1)) / 100
        assert auuc(y, t, s, definition=name, cutoff=cutoff, ties="stable") == pytest.approx(
            ref, abs=1e-12
        )


@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_average_ties_equal_mean_over_tie_permutations(name, rng):
    """ties='average' is the expectation over all orders inside each tie run
    (exactly, for the linear definitions; at run boundaries for all)."""
    for _ in range(6):
        y, t, s = random_case(rng, 7, n_levels=3)
        # enumerate every order consistent with the score ranking
        levels = sorted(set(s), reverse=True)
        runs = [[i for i in range(7) if s[i] == lv] for lv in levels]
        curves_all = []
        for perms in itertools.product(*(itertools.permutations(r) for r in runs)):
            order = [i for run in perms for i in run]
            curves_all.append(brute_curve(list(y), list(t), order, name))
        expected = np.mean(curves_all, axis=0)
        _, v = uplift_curve(y, t, s, definition=name, ties="average")
        if name in LINEAR:
            np.testing.assert_allclose(v, expected, atol=1e-12)
        else:
            ends = np.cumsum([0] + [len(r) for r in runs])
            np.testing.assert_allclose(v[ends], expected[ends], atol=1e-12)


def test_constant_score_with_average_ties_is_the_random_line(rng):
    y, t, _ = random_case(rng, 50)
    for name in ("uplift_joint_rel", "uplift_sep_rel"):
        x, v = uplift_curve(y, t, np.zeros(50), definition=name)
        _, v_rand = curves.random_curve(y, t, definition=name)
        # joint: exactly the line; separate: the line up to the rounding of p|T|, p|C|
        tol = 1e-12 if name == "uplift_joint_rel" else 1.0 / min(t.sum(), 50 - t.sum())
        np.testing.assert_allclose(v, v_rand, atol=tol)


# ----------------------------------------------------------------- invariances
@pytest.mark.parametrize("name", list(DEFINITIONS))
@pytest.mark.parametrize("ties", ["stable", "average"])
def test_invariant_to_row_order_and_monotone_transforms(name, ties, rng):
    y, t, s = random_case(rng, 80)  # continuous scores: no ties
    base = auuc(y, t, s, definition=name, ties=ties)
    perm = rng.permutation(80)
    assert auuc(y[perm], t[perm], s[perm], definition=name, ties=ties) == pytest.approx(base)
    for f in (np.exp, lambda z: 3 * z + 7, lambda z: z**3):
        assert auuc(y, t, f(s), definition=name, ties=ties) == pytest.approx(base)


@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_average_ties_invariant_to_row_order_even_with_ties(name, rng):
    y, t, s = random_case(rng, 60, n_levels=4)
    base = uplift_curve(y, t, s, definition=name)[1]
    perm = rng.permutation(60)
    np.testing.assert_allclose(uplift_curve(y[perm], t[perm], s[perm], definition=name)[1], base)


# ----------------------------------------------------------------- baselines
@pytest.mark.parametrize("name", LINEAR)
def test_perfect_curve_dominates_every_ordering(name, rng):
    for _ in range(4):
        y, t, _ = random_case(rng, 6)
        _, best = curves.perfect_curve(y, t, definition=name)
        for order in itertools.permutations(range(6)):
            v = brute_curve(list(y), list(t), list(order), name)
            assert np.all(best >= v - 1e-12)


def test_random_auuc_is_area_of_straight_line(rng):
    y, t, s = random_case(rng, 90)
    for name in DEFINITIONS:
        x, line = curves.random_curve(y, t, definition=name)
        _, v = uplift_curve(y, t, s, definition=name)
        np.testing.assert_allclose(line, x * v[-1])  # ends at V(1) of any ranking
        grid = 90 if DEFINITIONS[name].setting == "joint" else 100
        for c in (0.3, 1.0):
            last = math.floor(c * grid + 1e-9)
            ref = sum(v[-1] * k / grid for k in range(1, last + 1)) / grid
            assert curves.random_auuc(y, t, definition=name, cutoff=c) == pytest.approx(ref)
            assert curves.auuc_above_random(y, t, s, definition=name, cutoff=c) == pytest.approx(
                auuc(y, t, s, definition=name, cutoff=c) - ref
            )


def test_endpoint_of_relative_curves_is_the_ate(rng):
    y, t, s = random_case(rng, 500)
    ate = y[t == 1].mean() - y[t == 0].mean()
    for name in ("uplift_joint_rel", "uplift_sep_rel"):
        assert uplift_curve(y, t, s, definition=name)[1][-1] == pytest.approx(ate)


@pytest.mark.parametrize("outcome", ["binary", "amount"])
def test_endpoint_from_the_arm_totals_is_where_every_curve_ends(rng, outcome):
    # V(1) is read off the arm totals, not off a curve: it must be the last point the full
    # sort-and-accumulate computation reaches, for all six definitions (ties included)
    y, t, s = random_case(rng, 400)
    s = np.round(s, 1)  # many ties
    if outcome == "amount":
        y = y * rng.gamma(2.0, 30.0, y.size)
    for ties in ("average", "stable"):
        c = UpliftCurves(y, t, s, ties=ties)
        for name in DEFINITIONS:
            last = c.curve(name)[1][-1]
            assert c.endpoint(name) == pytest.approx(last, rel=1e-12, abs=1e-12), name
            x, line = c.random_curve(name)
            np.testing.assert_allclose(line, x * last, rtol=1e-12, atol=1e-12)
            # the same line without ranking the rows at all
            x0, line0 = UpliftCurves.unranked(y, t).random_curve(name)
            np.testing.assert_allclose(x0, x)
            np.testing.assert_allclose(line0, line, rtol=1e-12, atol=1e-12)


def test_auuc_table_matches_single_calls(rng):
    y, t, s = random_case(rng, 120)
    table = curves.auuc_table(y, t, s, cutoffs=(0.1, 1.0))
    assert list(table.columns) == ["AUUC@10%", "AUUC@100%"]
    for name in DEFINITIONS:
        assert table.loc[name, "AUUC@10%"] == pytest.approx(
            auuc(y, t, s, definition=name, cutoff=0.1)
        )


def test_auuc_table_keeps_every_cut_off_and_takes_one_definition_by_name(rng):
    y, t, s = random_case(rng, 400)
    # 0.12 and 0.125 are 48 and 50 of 400 rows: two columns, each the single call's value
    table = curves.auuc_table(y, t, s, cutoffs=(0.12, 0.125), definitions="uplift_joint_rel")
    assert list(table.columns) == ["AUUC@12%", "AUUC@12.5%"]
    assert list(table.index) == ["uplift_joint_rel"]
    for cut, column in ((0.12, "AUUC@12%"), (0.125, "AUUC@12.5%")):
        assert table.loc["uplift_joint_rel", column] == pytest.approx(
            auuc(y, t, s, definition="uplift_joint_rel", cutoff=cut))
    for bad, why in (((0.3, 0.3), "must be distinct; more than one reads AUUC@30%"),
                     ((True,), "got True"), (("0.3",), "got '0.3'"), ("0.3", "got '0.3'")):
        with pytest.raises(ValueError, match=why):
            curves.auuc_table(y, t, s, cutoffs=bad)
    with pytest.raises(ValueError, match="definitions must be one of"):
        curves.auuc_table(y, t, s, definitions=("qini",))


# ----------------------------------------------------------------- degenerate and bad input
@pytest.mark.parametrize(
    "y, t, why",
    [
        ([0, 1, 1], [1, 1, 1], "no control rows"),
        ([0, 1, 1], [0, 0, 0], "no treated rows"),
        ([0, 0, 0], [0, 1, 1], "no responders"),
    ],
)
def test_degenerate_input_warns_and_returns_nan(y, t, why):
    with pytest.warns(UndefinedMetricWarning, match=why):
        assert math.isnan(auuc(y, t, [1, 2, 3], definition="uplift_joint_rel"))
    with pytest.warns(UndefinedMetricWarning, match=why):
        assert np.isnan(uplift_curve(y, t, [1, 2, 3], definition="qini_sep_abs")[1]).all()


def test_undefined_ratio_at_top_of_joint_ranking_is_zero():
    # Top two rows are treated responders: N^C = 0 there, so V = 0 by definition.
    y, t, s = [1, 1, 0, 1], [1, 1, 0, 0], [4, 3, 2, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("qini_joint_abs", "uplift_joint_abs"):
            v = uplift_curve(y, t, s, definition=name)[1]
            assert v[1] == 0 and v[2] == 0 and v[3] != 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(y=[0, np.nan], t=[0, 1], score=[1, 2]), r"y must be finite \(0/1 or a continuous"),
        (dict(y=["a", "b"], t=[0, 1], score=[1, 2]), r"y must hold 0/1 values; got dtype"),
        (dict(y=[0, 1], t=[0, 2], score=[1, 2]), r"t must hold only 0 and 1"),
        # the values shown are legal: the NaN is what is wrong, and is said
        (dict(y=[1, 0, 1], t=[1, np.nan, 0], score=[3, 2, 1]),
         r"t must hold only 0 and 1; got values \[0.0, 1.0\] and 1 NaN \(missing\)"),
        (dict(y=[0, 1], t=[0, 1, 1], score=[1, 2]), r"t must have the same length as y \(2\)"),
        (dict(y=[0, 1], t=[0, 1], score=[1, np.nan]), "score must be finite"),
        (dict(y=[0, 1], t=[0, 1], score=[1]), "score must have length 2"),
        (dict(y=[], t=[], score=[]), "at least one row"),
    ],
)
def test_bad_input_raises_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        auuc(kwargs["y"], kwargs["t"], kwargs["score"], definition="uplift_joint_rel")


def test_bad_options_raise_clear_errors():
    args = ([0, 1], [0, 1], [1, 2])
    with pytest.raises(ValueError, match="definition must be one of .*'qini_sep_abs'; got 'qini'"):
        auuc(*args, definition="qini")
    with pytest.raises(ValueError, match=r"cutoff must be a number in \(0, 1\]; got 1.5"):
        auuc(*args, definition="uplift_joint_rel", cutoff=1.5)
    with pytest.raises(ValueError, match="ties must be one of 'average', 'stable'; got 'random'"):
        auuc(*args, definition="uplift_joint_rel", ties="random")


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_from_sorted_equals_constructor(ties, rng):
    y, t, s = random_case(rng, 90, n_levels=7)
    ref = UpliftCurves(y, t, s, ties=ties)
    order = np.argsort(-s, kind="stable")
    got = UpliftCurves.from_sorted((2 * t + y)[order].astype(np.int8), -s[order], ties=ties)
    for name in DEFINITIONS:
        np.testing.assert_allclose(got.curve(name)[1], ref.curve(name)[1])
        assert got.auuc(name, cutoff=0.3) == pytest.approx(ref.auuc(name, cutoff=0.3))


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_resampled_equals_the_repeated_rows(monkeypatch, ties):
    """Row multiplicities (a bootstrap resample) give the curves of the ``np.repeat``-ed rows
    — the reference built and read by the numpy path (no compiled pass): bit for bit for a
    0/1 outcome and for joint curves and AUUCs, to rounding for the rest with amounts; zero
    counts, tied scores, heavy copies."""
    from core.evaluation import _kernel
    from core.evaluation._kernel import ranking_order
    from core.evaluation.curves import outcome_code

    rng = np.random.default_rng(4)
    n = 400
    t = rng.integers(0, 2, n, dtype=np.int8)  # validated 0/1 arrays are int8 (outcome_code)
    cuts = (0.1, 0.3, 1.0)
    for y, score in ((rng.integers(0, 2, n, dtype=np.int8), rng.normal(size=n)),  # untied
                     (rng.integers(0, 2, n, dtype=np.int8),  # tied
                      rng.integers(0, 6, n).astype(float)),
                     (rng.exponential(size=n) * (rng.random(n) < 0.3), rng.normal(size=n))):
        code, y_values = outcome_code(y, t)
        order, neg = ranking_order(score, ties)
        y_sorted = None if y_values is None else y_values[order]
        heavy = np.where(rng.random(n) < 0.9, 0, 7)
        # int64 counts, and the one-byte counts the bootstrap draws (_stratified_counts)
        for counts in (rng.poisson(1.0, n), heavy, heavy.astype(np.uint8),
                       rng.poisson(1.0, n).astype(np.uint8)):
            base = UpliftCurves.from_sorted(code[order], neg, ties=ties, y_sorted=y_sorted)
            fast = base.resampled(counts)
            got = {d: [*fast.auucs(d, cuts), *fast.curve(d)[1], fast.endpoint(d)]
                   for d in DEFINITIONS}
            with monkeypatch.context() as m:
                m.setattr(_kernel, "_compiled", None)
                plain = UpliftCurves.from_sorted(code[order], neg, ties=ties,
                                                 y_sorted=y_sorted).resampled(counts)
                numpy_path = {d: [*plain.auucs(d, cuts), *plain.curve(d)[1],
                                  plain.endpoint(d)] for d in DEFINITIONS}
                slow = UpliftCurves.from_sorted(
                    np.repeat(code[order], counts), np.repeat(neg, counts), ties=ties,
                    y_sorted=None if y_sorted is None else np.repeat(y_sorted, counts))
                want = {d: [*(slow.auuc(d, cutoff=c) for c in cuts), *slow.curve(d)[1],
                            slow.endpoint(d)] for d in DEFINITIONS}
            assert (fast.n, fast.n_t, fast.n_c, fast.n_responders) == (
                slow.n, slow.n_t, slow.n_c, slow.n_responders)
            for d in DEFINITIONS:
                np.testing.assert_allclose(numpy_path[d], want[d], rtol=1e-12, atol=1e-12)
                if y_values is None:
                    np.testing.assert_array_equal(got[d], want[d])
                    continue
                # amounts: the arm totals (the endpoint) and separate curves are summed in
                # another order; a joint curve adds each copy as the repeated rows do
                np.testing.assert_allclose(got[d], want[d], rtol=1e-12, atol=1e-12)
                if DEFINITIONS[d].setting == "joint":
                    np.testing.assert_array_equal(got[d][:-1], want[d][:-1])


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_resample_of_a_resample_equals_the_twice_repeated_rows(ties):
    """Counts over a resample's repeated rows compose with its own counts: the curves are
    those of ``np.repeat`` applied twice (zero counts at both levels, tied scores)."""
    from core.evaluation._kernel import ranking_order
    from core.evaluation.curves import outcome_code

    rng = np.random.default_rng(11)
    n = 300
    y, t = rng.integers(0, 2, n, dtype=np.int8), rng.integers(0, 2, n, dtype=np.int8)
    code, y_values = outcome_code(y, t)
    assert y_values is None  # the 0/1 path (counts of responders)
    order, neg = ranking_order(rng.integers(0, 8, n).astype(float), ties)
    base = UpliftCurves.from_sorted(code[order], neg, ties=ties)
    c1 = rng.poisson(1.0, n)
    once = base.resampled(c1)
    c2 = rng.poisson(1.0, once.n)
    twice = once.resampled(c2)
    slow = UpliftCurves.from_sorted(np.repeat(np.repeat(code[order], c1), c2),
                                    np.repeat(np.repeat(neg, c1), c2), ties=ties)
    assert (twice.n, twice.n_t, twice.n_responders) == (slow.n, slow.n_t, slow.n_responders)
    for definition in DEFINITIONS:
        np.testing.assert_array_equal(twice.curve(definition)[1], slow.curve(definition)[1])
        assert twice.auuc(definition, cutoff=0.3) == slow.auuc(definition, cutoff=0.3)
    with pytest.raises(ValueError, match="integer row multiplicities"):
        base.resampled(np.ones(n - 1, dtype=int))
    with pytest.raises(ValueError, match="integer row multiplicities"):
        base.resampled(np.ones(n))
    with pytest.raises(ValueError, match="integer row multiplicities ≥ 0"):
        base.resampled(np.where(np.arange(n) == 3, -1, 1))
    unsigned = base.resampled(c1.astype(np.uint64))  # any integer dtype
    assert unsigned.auucs("qini_joint_abs", (0.3, 1.0)) == once.auucs("qini_joint_abs",
                                                                      (0.3, 1.0))
    assert once.auucs("qini_joint_abs", ()) == []


@pytest.mark.parametrize("definition, cutoff, grid", [
    ("qini_joint_abs", 0.1, 6),  # 0.1 · 6 = 0.6 rows: before the first point, 1/6
    ("qini_sep_abs", 0.005, 100),  # separate curves: 100 points, the first at 1 %
])
def test_a_cutoff_before_the_first_point_warns_that_its_area_is_the_empty_sum(definition,
                                                                                cutoff, grid):
    y, t, s = [1, 0, 1, 0, 1, 0], [1, 1, 1, 0, 0, 0], [6, 5, 4, 3, 2, 1]
    with pytest.warns(UndefinedMetricWarning, match=rf"keeps no point .* 1/{grid} .* 0\."):
        assert auuc(y, t, s, definition=definition, cutoff=cutoff) == 0.0
    with pytest.warns(UndefinedMetricWarning, match="keeps no point"):
        assert UpliftCurves(y, t, s).auucs(definition, [cutoff, 1.0])[0] == 0.0
    with pytest.warns(UndefinedMetricWarning, match="keeps no point"):  # and its baseline
        assert UpliftCurves(y, t, s).random_auuc(definition, cutoff=cutoff) == 0.0
    with warnings.catch_warnings():  # the first point itself is kept: no warning
        warnings.simplefilter("error")
        first = auuc(y, t, s, definition=definition, cutoff=1 / grid)
    v = uplift_curve(y, t, s, definition=definition)[1]
    assert first == pytest.approx(v[1] / grid)  # SPEC §2: the mean convention, one point
