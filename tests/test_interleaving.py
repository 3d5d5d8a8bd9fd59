"""Tests for core.interleaving.estimators (Sato 2021): propensities, list designs, estimators,
simulator.

References used here never come from the code under test: propensities are checked against
hand-derived values, exact enumeration of Algorithm 1 with fractions and Monte-Carlo runs;
estimators against values worked out by hand; the vectorised simulator against a
one-repetition-at-a-time loop written below.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from functools import cache

import numpy as np
import pandas as pd
import pytest

from core._validation import UndefinedMetricWarning
from core.interleaving import (
    METHODS,
    PAPER_METHODS,
    PAPER_USER_COUNTS,
    Comparison,
    bias_table,
    biased_methods,
    cbi_lists,
    cbi_propensities,
    cbi_propensities_mc,
    cbi_propensity_table,
    epi_lists,
    estimate_ab_list,
    estimate_ab_total,
    estimate_ips,
    estimate_rct,
    false_judgment_curve,
    false_judgment_rates,
    make_recommendation_world,
    observe,
    ranker_scores,
    simulate,
    simulate_grid,
    simulate_many,
    targeting_world_from_ab,
    true_difference,
    user_effects,
    users_needed,
)
from core.interleaving import _kernel as kernel


# ----------------------------------------------------------------------------- references
@cache
def enumerate_cbi(n: int, overlap: int) -> dict[tuple[int, int, int], Fraction]:
    """Exact law of (common, A-only, B-only) counts shown by Algorithm 1, by enumerating every
    sequence of choices with fractions (A = 0..n-1, B = n-overlap..2n-overlap-1)."""
    a_list = tuple(range(n))
    b_list = tuple(range(n - overlap, 2 * n - overlap))
    states: dict[tuple[frozenset, bool], Fraction] = {
        (frozenset(), True): Fraction(1, 2), (frozenset(), False): Fraction(1, 2)}
    for _ in range(n):
        nxt: dict[tuple[frozenset, bool], Fraction] = {}
        for (shown, a_turn), p in states.items():
            cand = [i for i in (a_list if a_turn else b_list) if i not in shown]
            for i in cand:
                key = (shown | {i}, not a_turn)
                nxt[key] = nxt.get(key, 0) + p / len(cand)
        states = nxt
    out: dict[tuple[int, int, int], Fraction] = {}
    for (shown, _), p in states.items():
        c = sum(1 for i in shown if n - overlap <= i < n)
        a = sum(1 for i in shown if i < n - overlap)
        key = (c, a, n - c - a)
        out[key] = out.get(key, 0) + p
    return out


@cache
def exact_cbi(n: int, overlap: int) -> tuple[float, float, float]:
    """(p_common, p_other, q) from the enumeration; q = P(eq. 7 defined for list A)."""
    law = enumerate_cbi(n, overlap)
    e_c = sum(c * p for (c, a, b), p in law.items())
    e_a = sum(a * p for (c, a, b), p in law.items())
    q = sum(p for (c, a, b), p in law.items() if 1 <= b <= n - 1)
    pc = float(e_c / overlap) if overlap else math.nan
    po = float(e_a / (n - overlap)) if overlap < n else math.nan
    return pc, po, float(q)


def epi_q(n: int, m: int) -> float:
    """P(EPI shows some but not all of list A) for a union of m items (closed form)."""
    if m == n:
        return 0.0
    return 1 - 1 / math.comb(m, n) - (1 / math.comb(2 * n, n) if m == 2 * n else 0)


def small_world(seed=0, users=60, items=14, n=4, overlaps=None):
    """A random world whose list pairs have the given overlaps (cycled over users)."""
    rng = np.random.default_rng(seed)
    pt = rng.uniform(0.05, 0.9, (users, items))
    pc = pt * rng.uniform(0, 1, (users, items))
    yt = (rng.random((users, items)) < pt).astype(np.uint8)
    yc = (rng.random((users, items)) < pc).astype(np.uint8)
    overlaps = overlaps or list(range(n + 1))
    la = np.empty((users, n), np.int64)
    lb = np.empty((users, n), np.int64)
    for u in range(users):
        ov = overlaps[u % len(overlaps)]
        perm = rng.permutation(items)[: 2 * n - ov]
        la[u] = perm[:n]
        lb[u] = np.concatenate([perm[n - ov:n], perm[n:]])
        lb[u] = rng.permutation(lb[u])
    return yt, yc, la, lb


def _ips(lst, y, shown, common, p_c, p_o, n):
    """Eq. 8 for one user's list, straight from the formula."""
    s = 0.0
    for i in lst:
        p = p_c if i in common else p_o
        s += y[i] / p if i in shown else (-y[i] / (1 - p) if p < 1 else 0.0)
    return s / n


def _rct(lst, y, shown):
    """Eq. 7 for one user's list; None when undefined."""
    on = [y[i] for i in lst if i in shown]
    off = [y[i] for i in lst if i not in shown]
    return (np.mean(on) - np.mean(off)) if on and off else None


def loop_simulate(yt, yc, la, lb, method, n_users, n_reps, seed):
    """One repetition at a time, one user at a time (like the paper's reference code)."""
    rng = np.random.default_rng(seed)
    n = la.shape[1]
    out = np.empty(n_reps)
    for r in range(n_reps):
        users = rng.choice(yt.shape[0], n_users, replace=False)
        if method in ("ab_total", "ab_list"):
            h = n_users // 2
            vals = []
            for group, lists in ((users[:h], la), (users[h:], lb)):
                tot = []
                for u in group:
                    z = np.zeros(yt.shape[1], bool)
                    z[lists[u]] = True
                    y = np.where(z, yt[u], yc[u])
                    tot.append(y.sum() / n if method == "ab_total" else y[lists[u]].sum() / n)
                vals.append(np.mean(tot))
            out[r] = vals[0] - vals[1]
            continue
        design = method[:3]
        terms = []
        for u in users:
            a, b = list(la[u]), list(lb[u])
            union = a + [i for i in b if i not in a]
            if design == "epi":
                shown = set(rng.choice(union, n, replace=False).tolist())
            else:
                shown, a_turn = [], rng.random() < 0.5
                while len(shown) < n:
                    cand = [i for i in (a if a_turn else b) if i not in shown]
                    shown.append(cand[rng.integers(len(cand))])
                    a_turn = not a_turn
                shown = set(shown)
            y = {i: int(yt[u, i] if i in shown else yc[u, i]) for i in union}
            ov = len(set(a) & set(b))
            if method.endswith("ips"):
                if design == "epi":
                    p_c = p_o = n / len(union)
                else:
                    p_c, p_o, _ = exact_cbi(n, ov)
                common = set(a) & set(b)
                terms.append(_ips(a, y, shown, common, p_c, p_o, n)
                             - _ips(b, y, shown, common, p_c, p_o, n))
            else:
                q = epi_q(n, len(union)) if design == "epi" else exact_cbi(n, ov)[2]
                ta, tb = _rct(a, y, shown), _rct(b, y, shown)
                if ov == n:
                    terms.append(0.0)
                else:
                    ta, tb = (0 if ta is None else ta), (0 if tb is None else tb)
                    terms.append((ta - tb) / q)
        out[r] = np.mean(terms)
    return out


# ----------------------------------------------------------------------------- propensities
def test_cbi_propensities_hand_derived_cases():
    # n = 1.  overlap 0: A = {a}, B = {b}; the first turn (A or B, 1/2 each) decides: 1/2.
    #         overlap 1: the only item is in both lists and always shown: 1.
    # n = 2.  overlap 0: A and B each add exactly one of their two items: 1/2.
    #         overlap 1: A = {c, a}, B = {c, b}.  A starts (1/2): A takes c (1/2) -> B must
    #         take b -> {c, b}; A takes a (1/2) -> B takes c or b -> {a, c} or {a, b}.  So
    #         P(c) = 1/2 + 1/4 = 3/4, P(a) = 1/2, P(b) = 3/4; B starting is the mirror image.
    #         p_common = 3/4, p_other = (1/2 + 3/4)/2 = 5/8; check 3/4 + 2 * 5/8 = 2.
    #         overlap 2: identical lists, both items shown: p_common = 1.
    assert cbi_propensities(1, 0)[1] == pytest.approx(0.5)
    assert math.isnan(cbi_propensities(1, 0)[0])
    assert cbi_propensities(1, 1)[0] == pytest.approx(1.0)
    assert math.isnan(cbi_propensities(1, 1)[1])
    assert cbi_propensities(2, 0)[1] == pytest.approx(0.5)
    assert cbi_propensities(2, 1) == pytest.approx((0.75, 0.625))
    assert cbi_propensities(2, 2)[0] == pytest.approx(1.0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_cbi_propensities_equal_exact_enumeration(n):
    table = cbi_propensity_table(n)
    for ov in range(n + 1):
        pc, po, q = exact_cbi(n, ov)
        got = cbi_propensities(n, ov)
        np.testing.assert_allclose(got, (pc, po), rtol=0, atol=1e-12, equal_nan=True)
        assert table.loc[ov, "p_rct_defined"] == pytest.approx(q, abs=1e-12)
        assert table.loc[ov, "epi_p_rct_defined"] == pytest.approx(epi_q(n, 2 * n - ov), abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 17, 30])
def test_cbi_propensities_sum_to_n(n):
    for ov in range(n + 1):
        pc, po = cbi_propensities(n, ov)
        total = (ov * pc if ov else 0) + (2 * (n - ov) * po if ov < n else 0)
        assert total == pytest.approx(n, abs=1e-9)
        if 0 < ov < n:
            assert 0 < po < pc < 1  # items in both lists are favoured (Sato 2021, §3.3)


@pytest.mark.parametrize("n, overlap", [(10, 3), (10, 9), (7, 5)])
def test_cbi_propensities_equal_monte_carlo(n, overlap):
    pc, po = cbi_propensities(n, overlap)
    mc_c, mc_o, se_c, se_o = cbi_propensities_mc(n, overlap, n_draws=200_000, random_state=7,
                                                 return_se=True)
    if overlap:
        assert abs(mc_c - pc) <= 4 * se_c + 1e-12
    assert abs(mc_o - po) <= 4 * se_o + 1e-12


def test_epi_lists_have_equal_inclusion_probabilities():
    n, ov, draws = 6, 2, 60_000
    a = np.broadcast_to(np.arange(n), (draws, n))
    b = np.broadcast_to(np.arange(n - ov, 2 * n - ov), (draws, n))
    shown = epi_lists(a, b, random_state=3)
    freq = np.bincount(shown.ravel(), minlength=2 * n - ov) / draws
    p = n / (2 * n - ov)
    assert np.abs(freq - p).max() < 4 * math.sqrt(p * (1 - p) / draws)


# ----------------------------------------------------------------------------- kernel
def test_class_law_equals_subset_enumeration():
    # the tables engine's foundation: (T, C) of a uniform k-subset of a class
    comps = np.array([[2, 1, 1, 3], [0, 0, 0, 4], [1, 2, 2, 0]])
    n = 7
    law = kernel.class_law(comps, n)
    for m, (n11, n10, n01, n00) in enumerate(comps):
        items = [(1, 1)] * n11 + [(1, 0)] * n10 + [(0, 1)] * n01 + [(0, 0)] * n00
        for k in range(len(items) + 1):
            expect = np.zeros((n + 1) ** 2)
            subsets = list(itertools.combinations(range(len(items)), k))
            for sub in subsets:
                t = sum(items[i][0] for i in sub)
                c = sum(items[i][1] for i in range(len(items)) if i not in sub)
                expect[t + (n + 1) * c] += 1 / len(subsets)
            np.testing.assert_allclose(law[m, k], expect, atol=1e-12)


def test_alias_tables_sample_their_laws():
    rng = np.random.default_rng(0)
    prob = rng.random((3, 9)) * (rng.random((3, 9)) < 0.6)
    prob[:, 0] += 0.01
    prob /= prob.sum(1, keepdims=True)
    alias = kernel.AliasSet.from_probabilities(prob)
    draws = 300_000
    for t in range(3):
        got = np.bincount(alias.draw(rng, np.full(draws, t * alias.width)), minlength=9) / draws
        assert np.abs(got - prob[t]).max() < 4 * math.sqrt(0.25 / draws)
        assert (got[prob[t] == 0] == 0).all()


# ----------------------------------------------------------------------------- lists
@pytest.mark.parametrize("design", [epi_lists, cbi_lists])
def test_lists_hold_n_distinct_items_of_the_union(design):
    _, _, la, lb = small_world(seed=1, users=200, items=20, n=5)
    shown = design(la, lb, random_state=0)
    assert shown.shape == la.shape and shown.dtype == np.int64
    assert (np.diff(np.sort(shown, 1), axis=1) > 0).all()
    for u in range(la.shape[0]):
        assert set(shown[u]) <= set(la[u]) | set(lb[u])
    np.testing.assert_array_equal(shown, design(la, lb, random_state=0))
    # leading axes (repetitions) are vectorised
    reps = design(np.broadcast_to(la, (3, *la.shape)), np.broadcast_to(lb, (3, *lb.shape)),
                  random_state=0)
    assert reps.shape == (3, *la.shape)


def test_cbi_lists_alternate_between_the_two_lists():
    _, _, la, lb = small_world(seed=2, users=300, items=20, n=6, overlaps=[0])
    shown = cbi_lists(la, lb, random_state=1)
    in_a = (shown[:, :, None] == la[:, None, :]).any(2)
    first_a = in_a[:, 0]
    expect = np.where(first_a[:, None], np.arange(6) % 2 == 0, np.arange(6) % 2 == 1)
    np.testing.assert_array_equal(in_a, expect)
    assert 0.4 < first_a.mean() < 0.6


def test_observe_is_eq_1():
    yt, yc, la, _ = small_world(seed=3, users=10, items=8, n=3)
    y = observe(yt, yc, la)
    z = np.zeros(yt.shape, bool)
    for u in range(10):
        z[u, la[u]] = True
    np.testing.assert_array_equal(y, z * yt + (1 - z) * yc)


# ----------------------------------------------------------------------------- truth and estimators
def test_true_difference_by_hand():
    yt = np.array([[1, 0, 1, 1], [0, 1, 1, 0]])
    yc = np.array([[0, 0, 1, 0], [0, 0, 0, 1]])
    la = np.array([[0, 1], [1, 2]])  # tau: user0 items 0,1 -> 1, 0 ; user1 items 1,2 -> 1, 1
    lb = np.array([[2, 3], [0, 3]])  # tau: user0 items 2,3 -> 0, 1 ; user1 items 0,3 -> 0, -1
    # tau_A = (0.5 + 1) / 2 = 0.75 ; tau_B = (0.5 - 0.5) / 2 = 0
    assert true_difference(yt, yc, la, lb) == pytest.approx(0.75)
    np.testing.assert_allclose(user_effects(yt, yc, la), [0.5, 1.0])


HAND = {
    "y": np.array([[1, 0, 1, 0], [0, 1, 1, 0]]),
    "shown": np.array([[0, 2], [1, 3]]),
    "la": np.array([[0, 1], [0, 1]]),
    "lb": np.array([[1, 2], [2, 3]]),
}


def test_estimate_rct_by_hand():
    # user 0: A = {0,1}: shown {0} Y=1, unshown {1} Y=0 -> 1; B = {1,2}: shown {2} Y=1,
    #         unshown {1} Y=0 -> 1; difference 0.
    # user 1: A = {0,1}: shown {1} Y=1, unshown {0} Y=0 -> 1; B = {2,3}: shown {3} Y=0,
    #         unshown {2} Y=1 -> -1; difference 2.
    h = HAND
    assert estimate_rct(h["y"], h["shown"], h["la"], h["lb"], design="epi",
                        rct_undefined="drop") == 1.0
    # reweight, EPI: q = 1 - 1/C(3,2) = 2/3 (user 0, union 3) and 1 - 2/C(4,2) = 2/3 (user 1)
    assert estimate_rct(h["y"], h["shown"], h["la"], h["lb"], design="epi") == pytest.approx(1.5)


def test_estimate_ips_by_hand():
    # CBI, user 0 (overlap 1, n = 2): p_common = 3/4, p_other = 5/8.  A: item 0 shown Y=1 ->
    # 1/(5/8); item 1 unshown Y=0 -> 0; tau_A = 0.8.  B: item 2 shown Y=1 -> 0.8; item 1 -> 0.
    # user 1 (disjoint, p = 1/2): tau_A = (1/2)(1/0.5) = 1; tau_B = -(1/2)(1/0.5) = -1.
    h = HAND
    assert estimate_ips(h["y"], h["shown"], h["la"], h["lb"],
                        design="cbi") == pytest.approx((0 + 2) / 2)
    # EPI: p = 2/3 (user 0) -> A and B both 0.75; user 1 p = 1/2 -> 2
    assert estimate_ips(h["y"], h["shown"], h["la"], h["lb"], design="epi") == pytest.approx(1.0)


def test_estimate_ab_by_hand():
    y_a, y_b = np.array([[1, 0, 1, 0]]), np.array([[0, 1, 1, 1]])
    assert estimate_ab_total(y_a, y_b, n=2) == pytest.approx(2 / 2 - 3 / 2)
    assert estimate_ab_list(y_a, [[0, 1]], y_b, [[1, 3]]) == pytest.approx(0.5 - 1.0)


def test_identical_lists_give_zero_difference():
    y = np.array([[1, 0, 1, 0]])
    la = lb = np.array([[0, 2]])
    shown = np.array([[2, 0]])
    for design in ("cbi", "epi"):
        assert estimate_ips(y, shown, la, lb, design=design) == 0.0  # p = 1: control term 0
        assert estimate_rct(y, shown, la, lb, design=design) == 0.0
        with pytest.warns(UndefinedMetricWarning, match="undefined"):
            assert math.isnan(estimate_rct(y, shown, la, lb, design=design,
                                           rct_undefined="drop"))


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, match", [
    ({"la": np.zeros((5, 12), int)}, "more than the 10 items"),
    ({"la": np.array([[0, 0, 1]] * 5)}, "duplicate items"),
    ({"lb": np.zeros((5, 2), int) + [0, 1]}, "lists_b must have the same shape"),
    ({"la": np.array([[0, 1, 10]] * 5)}, "out of range: maximum 10 >= number of items 10"),
    ({"la": np.array([[0, 1, -1]] * 5)}, "out of range: minimum -1"),
    ({"la": np.array([[0.0, 1, 2]] * 5)}, "integer item ids"),
    ({"yt": np.full((5, 10), 2)}, "y_treated must hold only 0 and 1"),
    ({"yc": np.zeros((4, 10), int)}, "y_control must have the same shape"),
    ({"method": "ab_magic"}, "method must be one of"),
    ({"n_users": 6}, r"n_users must be at most the number of users in the world \(5\)"),
    ({"n_users": 1}, "n_users must be at least 2"),
    ({"n_reps": 0}, "n_reps must be a positive integer"),
    ({"la": np.arange(3)}, "lists_a must be a 2-d"),
])
def test_simulate_rejects_bad_arguments(kwargs, match):
    args = {"yt": np.zeros((5, 10), int), "yc": np.zeros((5, 10), int),
                "la": np.array([[0, 1, 2]] * 5), "lb": np.array([[3, 4, 5]] * 5),
                "method": "ab_total", "n_users": 4, "n_reps": 3}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate(args["yt"], args["yc"], args["la"], args["lb"], method=args["method"],
                 n_users=args["n_users"], n_reps=args["n_reps"])


def test_other_functions_reject_bad_arguments():
    with pytest.raises(ValueError, match="overlap must be an integer in"):
        cbi_propensities(3, 4)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        cbi_propensities(0, 0)
    with pytest.raises(ValueError, match="shown must hold items of lists_a or lists_b"):
        estimate_ips(HAND["y"], [[0, 3], [1, 3]], HAND["la"], HAND["lb"], design="cbi")
    with pytest.raises(ValueError, match="design must be one of"):
        estimate_rct(HAND["y"], HAND["shown"], HAND["la"], HAND["lb"], design="tdi")
    with pytest.raises(ValueError, match="rct_undefined must be one of"):
        estimate_rct(HAND["y"], HAND["shown"], HAND["la"], HAND["lb"], design="epi",
                     rct_undefined="zero")
    with pytest.raises(ValueError, match="duplicate items"):
        cbi_lists([[1, 1]], [[2, 3]])
    with pytest.raises(ValueError, match="world must be a Comparison"):
        false_judgment_curve("grocery")
    with pytest.raises(ValueError, match="user_counts must be at most"):
        false_judgment_curve(small_world(users=20), user_counts=(10, 30), n_reps=2)
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate(*small_world(users=20), method="cbi_ips", n_users=5, n_reps=2, engine="gpu")


def test_estimators_require_the_design_that_produced_the_lists():
    # Without design=, estimate_rct reweighted by EPI's probabilities and estimate_ips by CBI's,
    # whatever design had made the lists; now both must be told.
    h = HAND
    with pytest.raises(TypeError, match="design"):
        estimate_rct(h["y"], h["shown"], h["la"], h["lb"])
    with pytest.raises(TypeError, match="design"):
        estimate_ips(h["y"], h["shown"], h["la"], h["lb"])
    # HAND's shown lists are CBI draws too.  With user 0's item 2 not bought, eq. 7 gives user
    # 0 a difference of 1 (A: shown 0 bought, unshown 1 not -> 1; B: shown 2, unshown 1, none
    # bought -> 0) and user 1 a difference of 2 (test_estimate_rct_by_hand).  Under CBI user
    # 0's term is defined with the probability q of the exact enumeration of Algorithm 1 (5/8
    # by hand: A first, common item 1/4 + A-only then B-only 1/8; B first, B-only 1/4); user
    # 1's lists are disjoint, so one A item is always shown and q = 1: (1/(5/8) + 2)/2 = 1.8.
    # EPI's q is 2/3 for both users: (1.5 + 3)/2 = 2.25.
    y = h["y"].copy()
    y[0, 2] = 0
    q0 = float(exact_cbi(2, 1)[2])
    assert q0 == pytest.approx(5 / 8)
    assert estimate_rct(y, h["shown"], h["la"], h["lb"], design="cbi") == pytest.approx(1.8)
    assert estimate_rct(y, h["shown"], h["la"], h["lb"], design="epi") == pytest.approx(2.25)


@pytest.mark.parametrize("methods, n_users, message", [
    (("cbi_ips",), 0, r"^n_users must be at least 1; got 0\.$"),
    (("epi_rct", "cbi_ips"), -3, r"^n_users must be at least 1; got -3\.$"),
    (("ab_total", "cbi_ips"), 1,
     r"^n_users must be at least 2 \(A/B methods split users in two: ab_total\); got 1\.$"),
    (("ab_list",), 0, r"^n_users must be at least 2 \(A/B methods .*ab_list\); got 0\.$"),
])
def test_n_users_minimum_gives_the_a_b_reason_only_for_a_b_methods(methods, n_users, message):
    world = small_world(users=20)
    with pytest.raises(ValueError, match=message):
        simulate_many(*world, methods=methods, n_users=n_users, n_reps=2)


def test_targeting_world_pool_larger_than_the_data_names_both_numbers():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2_000, 2))
    y, t = (rng.random(2_000) < 0.3).astype(int), (rng.random(2_000) < 0.5).astype(int)
    with pytest.raises(ValueError, match=r"^pool_size \(5,000\) exceeds the number of rows of "
                                         r"X \(2,000\)") as err:
        targeting_world_from_ab(x, y, t, x[:, 0], x[:, 1], pool_size=5_000)
    assert "n_pools" not in str(err.value)  # the user did not pass it


@pytest.mark.parametrize("call, message", [
    (lambda: make_recommendation_world(10, 10, control_rate="0.1"),
     r"^control_rate must be in \(0, 1\); got '0\.1' \(str, not a number\)\.$"),
    (lambda: make_recommendation_world(10, 10, reactive_share=True),
     r"^reactive_share must be in \[0, 1\]; got True"),
    (lambda: make_recommendation_world(10, 10, alignment=None),
     r"^alignment must be in \[-1, 1\]; got None"),
    (lambda: make_recommendation_world(10, 10, uplift_scale="2"),
     r"^uplift_scale must be a finite number >= 0; got '2'"),
    (lambda: ranker_scores(make_recommendation_world(5, 4, random_state=0), "causal",
                           noise="a"), r"^noise must be a finite number >= 0; got 'a'"),
    (lambda: ranker_scores(make_recommendation_world(5, 4, random_state=0), "causal",
                           noise=True), r"^noise must be a finite number >= 0; got True"),
    (lambda: bias_table({"m": [0.1, 0.2]}, 0.1, level="0.95"),
     r"^level must be a number strictly between 0 and 1; got '0\.95'"),
    (lambda: bias_table({"m": [0.1, 0.2]}, 0.1, level=1.0),
     r"^level must be a number strictly between 0 and 1; got 1\.0\.$"),
    (lambda: bias_table({"m": [0.1, 0.2]}, "0.1"), r"^truth must be a finite number; got '0\.1'"),
    (lambda: false_judgment_rates({10: {"m": [0.1]}}, "x"), r"^truth must be a finite number"),
    (lambda: biased_methods(pd.DataFrame({"n_users": [10], "method": ["m"], "mean": [0.1],
                                          "se": [0.01], "truth": [0.1], "n_reps": [100]}),
                            alpha="0.05"), r"^alpha must be in \(0, 1\); got '0\.05'"),
    (lambda: users_needed(pd.DataFrame({"method": ["m"], "n_users": [10],
                                        "false_rate": [0.1]}), target="0.05"),
     r"^target must be a false-judgment rate in \(0, 1\); got '0\.05'"),
])
def test_numeric_parameters_refuse_text_and_booleans(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ----------------------------------------------------------------------------- bias (Table 2)
def test_unbiased_and_biased_methods_on_a_world_with_overlap():
    # every overlap 0..n occurs, including near-identical and identical lists
    world = small_world(seed=4, users=120, items=14, n=4)
    truth = true_difference(*world)
    est = simulate_many(*world, methods=METHODS, n_users=120, n_reps=20_000, random_state=11)
    table = bias_table(est, truth).set_index(pd.Index(list(est)))
    z = table["bias"] / table["se"]
    for m in ("epi_rct", "cbi_ips", "epi_ips"):
        assert abs(z[m]) < 4, (m, table.loc[m].to_dict())
    for m in ("cbi_rct", "ab_list"):
        assert abs(z[m]) > 10, (m, table.loc[m].to_dict())


def test_ab_total_is_unbiased():
    world = small_world(seed=5, users=200, items=14, n=4)
    est = simulate(*world, method="ab_total", n_users=100, n_reps=20_000, random_state=2)
    truth = true_difference(*world)
    assert abs(est.mean() - truth) < 4 * est.std() / math.sqrt(est.size)


def test_reference_drop_rule_is_biased_when_lists_nearly_coincide():
    # A = {0,1,2,3}, B = {1,2,3,4} (overlap n - 1).  Item 0 is bought anyway (Y^T = Y^C = 1),
    # item 4 never: tau_A - tau_B = 0.  EPI shows 4 of the 5 items; a user is "comparable"
    # (reference code) only when a common item is left out, and then its term is
    # (Y^T_0 - Y^T_4)/3 = 1/3.  The reweighted estimator stays unbiased.
    rng = np.random.default_rng(0)
    users = 200
    yt = rng.integers(0, 2, (users, 5)).astype(np.uint8)
    yc = rng.integers(0, 2, (users, 5)).astype(np.uint8)
    yt[:, 0] = yc[:, 0] = 1
    yt[:, 4] = yc[:, 4] = 0
    yc[:, 1:4] = yt[:, 1:4]  # tau = 0 everywhere: truth 0
    la = np.tile([0, 1, 2, 3], (users, 1))
    lb = np.tile([1, 2, 3, 4], (users, 1))
    assert true_difference(yt, yc, la, lb) == 0
    kw = {"method": "epi_rct", "n_users": 50, "n_reps": 4000, "random_state": 3}
    fair = simulate(yt, yc, la, lb, **kw)
    drop = simulate(yt, yc, la, lb, rct_undefined="drop", **kw)
    assert abs(fair.mean()) < 4 * fair.std() / math.sqrt(fair.size)
    assert drop.mean() == pytest.approx(1 / 3)


def test_cbi_rct_equals_cbi_ips_without_overlap_even_n():
    # paper footnote 11: no overlap -> propensity constant 1/2 and, for even n, exactly n/2
    # items of each list are shown, so eq. 7 and eq. 8 coincide draw by draw.
    world = small_world(seed=7, users=50, items=20, n=4, overlaps=[0])
    kw = {"n_users": 30, "n_reps": 500, "random_state": 5}
    np.testing.assert_allclose(simulate(*world, method="cbi_rct", **kw),
                               simulate(*world, method="cbi_ips", **kw), rtol=0, atol=1e-12)


def test_cbi_rct_equals_cbi_ips_in_expectation_without_overlap_odd_n():
    world = small_world(seed=8, users=80, items=20, n=5, overlaps=[0])
    est = simulate_many(*world, methods=("cbi_rct", "cbi_ips"), n_users=80, n_reps=20_000,
                        random_state=6)
    truth = true_difference(*world)
    for x in est.values():
        assert abs(x.mean() - truth) < 4 * x.std() / math.sqrt(x.size)


# ----------------------------------------------------------------------------- simulator
@pytest.mark.parametrize("method", METHODS)
def test_vectorised_simulate_matches_a_loop_reference(method):
    world = small_world(seed=9, users=40, items=12, n=4)
    reps = 800
    ref = loop_simulate(*world, method, n_users=16, n_reps=reps, seed=1)
    vec = simulate(*world, method=method, n_users=16, n_reps=8000, random_state=2)
    se = math.sqrt(ref.var() / ref.size + vec.var() / vec.size)
    assert abs(ref.mean() - vec.mean()) < 4 * se
    assert vec.std() == pytest.approx(ref.std(), rel=0.12)


@pytest.mark.parametrize("method", ["epi_rct", "cbi_rct", "cbi_ips", "epi_ips"])
def test_tables_and_lists_engines_agree(method):
    world = small_world(seed=10, users=60, items=12, n=4)
    kw = {"method": method, "n_users": 30, "n_reps": 8000}
    t = simulate(*world, engine="tables", random_state=1, **kw)
    li = simulate(*world, engine="lists", random_state=2, **kw)
    se = math.sqrt(t.var() / t.size + li.var() / li.size)
    assert abs(t.mean() - li.mean()) < 4 * se
    assert t.std() == pytest.approx(li.std(), rel=0.06)


@pytest.mark.parametrize("rct_undefined", ["reweight", "drop"])
def test_compiled_tables_loop_draws_what_the_numpy_passes_draw(monkeypatch, rct_undefined):
    # the fused numba loop takes the same uniforms from the same streams as the NumPy
    # passes; only the order of the per-repetition sums differs (last bits)
    pytest.importorskip("numba")
    world = small_world(seed=12, users=80, items=14, n=5)
    kw = {"methods": ("epi_rct", "cbi_rct", "cbi_ips", "epi_ips"), "n_users": 25,
          "n_reps": 500, "random_state": 4, "engine": "tables",
          "rct_undefined": rct_undefined}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # "drop": some nan
        fused = simulate_many(*world, **kw)
        monkeypatch.setattr(kernel, "_compiled", None)
        passes = simulate_many(*world, **kw)
    for method, values in passes.items():
        np.testing.assert_allclose(fused[method], values, rtol=1e-12, atol=1e-14,
                                   equal_nan=True, err_msg=method)


def test_simulate_many_uses_the_same_draws_as_simulate():
    world = small_world(seed=11, users=50, items=12, n=4)
    kw = {"n_users": 20, "n_reps": 300, "random_state": 9}
    many = simulate_many(*world, methods=METHODS, **kw)
    for m in METHODS:
        np.testing.assert_array_equal(many[m], simulate(*world, method=m, **kw))


def test_threads_do_not_change_results():
    world = small_world(seed=17, users=50, items=12, n=4)
    kw = {"methods": METHODS, "user_counts": (5, 20), "n_reps": 700, "random_state": 4}
    one = simulate_grid(world, **kw)
    two = simulate_grid(world, n_jobs=2, **kw)
    for c in one:
        for m in METHODS:
            np.testing.assert_array_equal(one[c][m], two[c][m])


def test_grid_cells_match_their_own_distribution():
    # nested users across counts: each cell is still a sample for its user count
    world = small_world(seed=18, users=60, items=12, n=4)
    grid = simulate_grid(world, methods=("ab_total", "cbi_ips"), user_counts=(10, 40),
                         n_reps=6000, random_state=1)
    for c in (10, 40):
        for m in ("ab_total", "cbi_ips"):
            ref = simulate(*world, method=m, n_users=c, n_reps=6000, random_state=2)
            x = grid[c][m]
            se = math.sqrt(x.var() / x.size + ref.var() / ref.size)
            assert abs(x.mean() - ref.mean()) < 4 * se
            assert x.std() == pytest.approx(ref.std(), rel=0.06)
    with pytest.warns(UndefinedMetricWarning, match="no sign to judge"):
        rates = false_judgment_rates(grid, 0.0)
    assert rates["false_rate"].isna().all()


def test_long_lists_use_the_lists_engine():
    world = small_world(seed=12, users=30, items=40, n=14)
    est = simulate(*world, method="cbi_ips", n_users=10, n_reps=50, random_state=0)
    assert est.shape == (50,) and np.isfinite(est).all()
    with pytest.raises(ValueError, match="engine='tables' supports n <= 12"):
        simulate(*world, method="cbi_ips", n_users=10, n_reps=5, engine="tables")


def test_progress_is_reported_and_can_cancel():
    world = small_world(seed=13, users=40, items=12, n=4)
    seen = []
    simulate(*world, method="cbi_ips", n_users=20, n_reps=30_000, random_state=0,
             progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and 0 < seen[0] <= 1

    class Stop(Exception):
        pass

    def cancel(frac):
        raise Stop

    with pytest.raises(Stop):
        simulate(*world, method="cbi_ips", n_users=20, n_reps=10, progress=cancel)


def test_n_equal_one_makes_eq7_undefined():
    world = small_world(seed=14, users=20, items=6, n=1, overlaps=[0])
    with pytest.warns(UndefinedMetricWarning, match="nan"):
        est = simulate(*world, method="epi_rct", n_users=5, n_reps=10, random_state=0)
    assert np.isnan(est).all()
    assert np.isfinite(simulate(*world, method="cbi_ips", n_users=5, n_reps=10)).all()


# ----------------------------------------------------------------------------- summaries
def test_bias_table_values():
    est = {"x": np.array([1.0, 2.0, 3.0, 4.0]), "y": np.array([0.0, np.nan, 0.0])}
    t = bias_table(est, truth=2.0)
    assert t.loc["x", "mean"] == 2.5
    assert t.loc["x", "sd"] == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    half = 3.182446305284263 * t.loc["x", "sd"] / 2  # t(0.975, 3)
    assert t.loc["x", "ci_low"] == pytest.approx(2.5 - half)
    assert t.loc["x", "truth_in_ci"]
    assert t.loc["y", "n_nan"] == 1 and t.loc["y", "n_reps"] == 3
    assert not t.loc["y", "truth_in_ci"]


def test_false_judgment_curve_falls_with_users():
    world = small_world(seed=15, users=400, items=14, n=4, overlaps=[0, 1, 2])
    truth = true_difference(*world)
    assert truth != 0
    curve = false_judgment_curve(world, methods=("ab_total", "cbi_ips", "epi_rct"),
                                 user_counts=(4, 20, 100, 400), n_reps=600, random_state=0)
    assert list(curve.columns) == ["method", "n_users", "false_rate", "se", "tie_rate",
                                   "nan_rate", "n_reps", "truth"]
    for m, g in curve.groupby("method"):
        r = g.sort_values("n_users")["false_rate"].to_numpy()
        assert r[-1] < r[0], m
        assert (np.diff(r) <= 0.05).all(), m


def test_false_judgment_curve_tie_rules():
    # user 0 has identical lists, so its interleaving estimate is exactly 0: a tie
    yt, yc, la, lb = small_world(seed=16, users=30, items=10, n=3, overlaps=[0])
    lb[0] = la[0]
    world = Comparison(yt, yc, la, lb)
    assert world.truth != 0
    kw = {"methods": ("cbi_ips",), "user_counts": (1,), "n_reps": 400, "random_state": 0}
    rates = {t: false_judgment_curve(world, ties=t, **kw)["false_rate"].iloc[0]
             for t in ("half", "correct", "false")}
    tie = false_judgment_curve(world, **kw)["tie_rate"].iloc[0]
    assert tie > 0
    assert rates["false"] - rates["correct"] == pytest.approx(tie)
    assert rates["half"] == pytest.approx((rates["false"] + rates["correct"]) / 2)


def test_users_needed_interpolates_on_log_users():
    curve = pd.DataFrame({
        "method": ["slow"] * 3 + ["fast"] * 3 + ["never"] * 3,
        "n_users": [10, 100, 1000] * 3,
        "false_rate": [0.5, 0.1, 0.01, 0.04, 0.01, 0.0, 0.5, 0.4, 0.3],
    })
    out = users_needed(curve, target=0.05, relative_to="fast")
    # slow: between 100 (0.1) and 1000 (0.01): log N = log 100 + (0.05/0.09) log 10
    expect = 100 * 10 ** (0.05 / 0.09)
    assert out.loc["slow", "users_needed"] == pytest.approx(expect)
    assert out.loc["fast", "users_needed"] == 10 and out.loc["fast", "at_grid_start"]
    assert math.isnan(out.loc["never", "users_needed"]) and not out.loc["never", "reached"]
    assert out.loc["slow", "ratio"] == pytest.approx(expect / 10)
    with pytest.raises(ValueError, match="target must be a false-judgment rate"):
        users_needed(curve, target=0)
    with pytest.raises(ValueError, match="relative_to must be a method"):
        users_needed(curve, relative_to="cbi_ips")
    with pytest.raises(ValueError, match="curve_df must be a DataFrame"):
        users_needed(curve.drop(columns="false_rate"))


def test_paper_constants():
    assert PAPER_METHODS == ("ab_total", "ab_list", "epi_rct", "cbi_rct", "cbi_ips")
    assert PAPER_USER_COUNTS[0] == 10 and PAPER_USER_COUNTS[-1] == 2000
    assert len(PAPER_USER_COUNTS) == 15


def test_bench_script_runs(capsys):
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "interleaving.py"
    spec = importlib.util.spec_from_file_location("bench_interleaving", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    bench.main(["--reps", "20", "--no-loop", "--presets", "grocery"])
    out = capsys.readouterr().out
    assert "### Table 2" in out and "### Figure 1" in out and "x CBI-IPS" in out
    comp = Comparison(*small_world(seed=19, users=30, items=12, n=4))
    rng = np.random.default_rng(0)
    for rep in (bench.loop_api_rep, bench.loop_python_rep):
        assert set(rep(comp, 10, rng)) == set(PAPER_METHODS)
