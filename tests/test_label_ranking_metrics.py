"""Tests for core.label_ranking.metrics against independent references.

References: pure-Python loops over label pairs and top-K sets written from the paper's
eqs. (15)–(16) (with the SPEC §7 reading: wrong pairs counted), hand-worked small examples,
and scipy.stats.kendalltau — never the code under test.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import kendalltau

from core._validation import UndefinedMetricWarning
from core.label_ranking import metrics as M

NAN = float("nan")


# ------------------------------------------------------------------ data and references
def random_rankings(rng, n, L, *, lengths=None):
    """Random incomplete positions: each row a random order truncated to a random ``L_t``.

    ``lengths`` fixes ``L_t`` per row; by default ``L_t`` is uniform on 0 … L with rows of
    length 0, 1 and L always present.
    """
    if lengths is None:
        lengths = rng.integers(0, L + 1, size=n)
        lengths[:3] = [0, 1, L]
    Y = np.zeros((n, L), dtype=np.int64)
    for r in range(n):
        order = rng.permutation(L)[: lengths[r]]
        for p, j in enumerate(order, start=1):
            Y[r, j] = p
    return Y


def random_complete(rng, n, L):
    return np.array([rng.permutation(L) + 1 for _ in range(n)], dtype=np.int64)


def bf_row(t, p):
    """(wrong, known) pairs of one row by a double loop: i ≻ j when i is ranked and j is not,
    or both are ranked with i before j; wrong when the prediction puts j above i."""
    wrong = known = 0
    L = len(t)
    for i in range(L):
        for j in range(L):
            prefers = t[i] > 0 and (t[j] == 0 or t[i] < t[j])
            if prefers:
                known += 1
                wrong += p[i] > p[j]
    return wrong, known


def bf_disagreement(Y_true, Y_pred):
    vals = []
    for t, p in zip(Y_true.tolist(), Y_pred.tolist()):
        wrong, known = bf_row(t, p)
        vals.append(wrong / known if known else None)
    kept = [v for v in vals if v is not None]
    return vals, sum(kept) / len(kept)


def bf_prf(Y_true, Y_pred, k):
    precisions, recalls = [], []
    for t, p in zip(Y_true.tolist(), Y_pred.tolist()):
        lt = sum(v > 0 for v in t)
        if lt == 0:
            continue
        top = {j for j in range(len(p)) if p[j] <= k}
        hits = sum(1 for j in top if t[j] > 0)
        precisions.append(hits / k)
        recalls.append(hits / lt)
    P = sum(precisions) / len(precisions)
    R = sum(recalls) / len(recalls)
    return P, R, (2 * P * R / (P + R) if P + R else NAN)


# ------------------------------------------------------------------ disagreement error
@pytest.mark.parametrize("L", [2, 3, 5, 8, 13])
def test_disagreement_matches_brute_force(L):
    rng = np.random.default_rng(L)
    Y_true = random_rankings(rng, 60, L)
    Y_pred = random_complete(rng, 60, L)
    per_row, mean = bf_disagreement(Y_true, Y_pred)
    got = M.disagreement_per_row(Y_true, Y_pred)
    expected = np.array([NAN if v is None else v for v in per_row])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert M.disagreement_error(Y_true, Y_pred) == pytest.approx(mean, abs=1e-12)


def test_known_pairs_formula_matches_counted_pairs():
    rng = np.random.default_rng(1)
    L = 7
    for lt in range(L + 1):
        Y = random_rankings(rng, 1, L, lengths=np.array([lt]))
        _, known = bf_row(Y[0].tolist(), list(range(1, L + 1)))
        assert known == math.comb(lt, 2) + lt * (L - lt) == lt * (L - (lt + 1) / 2)


def test_disagreement_chunked_kernel_matches_brute_force(monkeypatch):
    monkeypatch.setattr(M, "_CHUNK", 7)  # many blocks, a ragged last one
    rng = np.random.default_rng(7)
    Y_true = random_rankings(rng, 50, 6)
    Y_pred = random_complete(rng, 50, 6)
    per_row, mean = bf_disagreement(Y_true, Y_pred)
    expected = np.array([NAN if v is None else v for v in per_row])
    np.testing.assert_allclose(M.disagreement_per_row(Y_true, Y_pred), expected, atol=1e-12)
    assert M.disagreement_error(Y_true, Y_pred) == pytest.approx(mean, abs=1e-12)


def test_disagreement_hand_worked_example():
    # labels a b c d; observed c ≻ a ≻ {b, d}; predicted a, b, c, d.
    # Known pairs (5 = 2·(4 − 3/2)): c≻a ✗, c≻b ✗, c≻d ✓, a≻b ✓, a≻d ✓ → 2/5.
    Y_true = [[2, 0, 1, 0]]
    Y_pred = [[1, 2, 3, 4]]
    assert M.disagreement_error(Y_true, Y_pred) == pytest.approx(0.4)


def test_disagreement_extremes():
    Y_true = np.array([[1, 2, 3, 0, 0], [0, 1, 0, 0, 0], [5, 4, 3, 2, 1]])
    perfect = np.array([[1, 2, 3, 4, 5], [2, 1, 3, 4, 5], [5, 4, 3, 2, 1]])
    worst = np.array([[5, 4, 3, 1, 2], [1, 5, 2, 3, 4], [1, 2, 3, 4, 5]])
    assert M.disagreement_error(Y_true, perfect) == 0.0
    assert M.disagreement_error(Y_true, worst) == 1.0


def test_unranked_labels_tied_among_themselves():
    # Order among unranked labels never counts: any permutation of them gives the same error.
    Y_true = [[1, 0, 0, 0]]
    assert M.disagreement_error(Y_true, [[1, 2, 3, 4]]) == 0.0
    assert M.disagreement_error(Y_true, [[1, 4, 3, 2]]) == 0.0
    assert M.disagreement_error(Y_true, [[2, 1, 3, 4]]) == pytest.approx(1 / 3)


def test_empty_rows_are_left_out():
    Y_true = np.array([[1, 2, 0], [0, 0, 0], [0, 0, 1]])
    Y_pred = np.array([[2, 1, 3], [1, 2, 3], [1, 2, 3]])
    per_row = M.disagreement_per_row(Y_true, Y_pred)
    assert np.isnan(per_row[1])
    # row 0: 1 wrong of 3 known; row 2: label c ≻ a, b, both wrong: 2/2.
    np.testing.assert_allclose(per_row[[0, 2]], [1 / 3, 1.0])
    assert M.disagreement_error(Y_true, Y_pred) == pytest.approx((1 / 3 + 1) / 2)


def test_disagreement_invariant_to_row_order():
    rng = np.random.default_rng(3)
    Y_true = random_rankings(rng, 40, 6)
    Y_pred = random_complete(rng, 40, 6)
    perm = rng.permutation(40)
    assert M.disagreement_error(Y_true[perm], Y_pred[perm]) == pytest.approx(
        M.disagreement_error(Y_true, Y_pred), abs=1e-12)


# ------------------------------------------------------------------ Kendall τ
@pytest.mark.parametrize("L", [2, 4, 9])
def test_kendall_tau_matches_scipy(L):
    rng = np.random.default_rng(10 + L)
    Y_true = random_complete(rng, 40, L)
    Y_pred = random_complete(rng, 40, L)
    expected = np.mean([kendalltau(a, b).statistic for a, b in zip(Y_true, Y_pred)])
    assert M.kendall_tau(Y_true, Y_pred) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("L", [3, 6, 10])
def test_disagreement_equals_one_minus_tau_over_two_on_complete_rankings(L):
    rng = np.random.default_rng(20 + L)
    Y_true = random_complete(rng, 50, L)
    Y_pred = random_complete(rng, 50, L)
    per_row_tau = np.array([kendalltau(a, b).statistic for a, b in zip(Y_true, Y_pred)])
    np.testing.assert_allclose(M.disagreement_per_row(Y_true, Y_pred), (1 - per_row_tau) / 2,
                               atol=1e-12)
    assert M.disagreement_error(Y_true, Y_pred) == pytest.approx(
        (1 - M.kendall_tau(Y_true, Y_pred)) / 2, abs=1e-12)


def test_kendall_tau_hand_worked():
    # identical: τ = 1; reversed: τ = −1; one adjacent swap of 4 labels: (5 − 1)/6.
    assert M.kendall_tau([[1, 2, 3, 4]], [[1, 2, 3, 4]]) == 1.0
    assert M.kendall_tau([[1, 2, 3, 4]], [[4, 3, 2, 1]]) == -1.0
    assert M.kendall_tau([[1, 2, 3, 4]], [[2, 1, 3, 4]]) == pytest.approx(4 / 6)


def test_kendall_tau_refuses_incomplete_truth():
    with pytest.raises(ValueError, match=r"kendall_tau needs complete rankings in Y_true; "
                                         r"row 1 ranks only 2 of 3 labels"):
        M.kendall_tau([[1, 2, 3], [1, 2, 0]], [[1, 2, 3], [1, 2, 3]])


# ------------------------------------------------------------------ precision / recall / F1
@pytest.mark.parametrize("L", [2, 5, 12])
def test_prf_match_brute_force(L):
    rng = np.random.default_rng(30 + L)
    Y_true = random_rankings(rng, 80, L)
    Y_pred = random_complete(rng, 80, L)
    for k in range(1, L + 1):
        P, R, F = bf_prf(Y_true, Y_pred, k)
        assert M.precision_at_k(Y_true, Y_pred, k) == pytest.approx(P, abs=1e-12)
        assert M.recall_at_k(Y_true, Y_pred, k) == pytest.approx(R, abs=1e-12)
        assert M.f1_at_k(Y_true, Y_pred, k) == pytest.approx(F, abs=1e-12)


def test_prf_hand_worked_example():
    # ranked {a, c} (c first); predicted a, b, c, d.
    Y_true = [[2, 0, 1, 0]]
    Y_pred = [[1, 2, 3, 4]]
    assert M.precision_at_k(Y_true, Y_pred, 2) == 0.5
    assert M.recall_at_k(Y_true, Y_pred, 2) == 0.5
    assert M.precision_at_k(Y_true, Y_pred, 3) == pytest.approx(2 / 3)
    assert M.recall_at_k(Y_true, Y_pred, 3) == 1.0
    assert M.f1_at_k(Y_true, Y_pred, 3) == pytest.approx(2 * (2 / 3) / (5 / 3))


def test_f1_is_from_averaged_precision_and_recall():
    # k = 2: row 1 ranks 1 label, hit → P 1/2, R 1; row 2 ranks 3, one hit → P 1/2, R 1/3.
    Y_true = [[1, 0, 0, 0], [0, 1, 2, 3]]
    Y_pred = [[1, 2, 3, 4], [1, 2, 3, 4]]
    P = (1 / 2 + 1 / 2) / 2
    R = (1 + 1 / 3) / 2
    assert M.f1_at_k(Y_true, Y_pred, 2) == pytest.approx(2 * P * R / (P + R))
    per_row_f1 = np.mean([2 * 0.5 * 1 / 1.5, 2 * 0.5 * (1 / 3) / (0.5 + 1 / 3)])
    assert M.f1_at_k(Y_true, Y_pred, 2) != pytest.approx(per_row_f1)


def test_prf_leaves_empty_rows_out():
    Y_true = np.array([[1, 0, 0], [0, 0, 0]])
    Y_pred = np.array([[1, 2, 3], [1, 2, 3]])
    assert M.precision_at_k(Y_true, Y_pred, 1) == 1.0
    assert M.recall_at_k(Y_true, Y_pred, 1) == 1.0


def test_f1_undefined_warns_and_returns_nan():
    with pytest.warns(UndefinedMetricWarning, match="F1@K is undefined at k = \\[1\\]"):
        value = M.f1_at_k([[0, 1, 0]], [[1, 2, 3]], 1)
    assert math.isnan(value)


def test_precision_and_recall_do_not_warn_about_f1():
    # No ranked label in the top 1: P@1 = R@1 = 0 are defined; only F1 (0/0) is undefined.
    Y_true, Y_pred = [[1, 0, 0]], [[3, 2, 1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        assert M.precision_at_k(Y_true, Y_pred, k=1) == 0.0
        assert M.recall_at_k(Y_true, Y_pred, k=1) == 0.0
    with pytest.warns(UndefinedMetricWarning, match=r"F1@K is undefined at k = \[1\]"):
        assert math.isnan(M.f1_at_k(Y_true, Y_pred, k=1))
    with pytest.warns(UndefinedMetricWarning, match=r"F1@K is undefined at k = \[1\]"):
        curve = M.prf_curve(Y_true, Y_pred, ks=[1, 3])
    # k = 3: the one ranked label is found, P = 1/3, R = 1, F1 = 2(1/3)/(4/3) = 1/2
    np.testing.assert_allclose(curve["f1"], [np.nan, 0.5])


def test_prf_curve_equals_pointwise_functions():
    rng = np.random.default_rng(5)
    Y_true = random_rankings(rng, 70, 12)
    Y_pred = random_complete(rng, 70, 12)
    curve = M.prf_curve(Y_true, Y_pred)
    assert list(curve.columns) == ["k", "precision", "recall", "f1"]
    assert curve["k"].tolist() == list(range(1, 11))
    for row in curve.itertuples():
        P, R, F = bf_prf(Y_true, Y_pred, row.k)
        assert (row.precision, row.recall, row.f1) == pytest.approx((P, R, F), abs=1e-12)


def test_prf_curve_default_and_order():
    Y_true = [[1, 0, 2], [0, 1, 0]]
    Y_pred = [[1, 2, 3], [3, 2, 1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        curve = M.prf_curve(Y_true, Y_pred)
    assert curve["k"].tolist() == [1, 2, 3]  # min(10, L) when L < 10
    assert M.prf_curve(Y_true, Y_pred, ks=[3, 1])["k"].tolist() == [3, 1]
    # recall at k = L is 1 for every row
    assert curve["recall"].iloc[-1] == 1.0


# ------------------------------------------------------------------ bad input
GOOD_TRUE = [[1, 2, 0], [0, 1, 0]]
GOOD_PRED = [[1, 2, 3], [3, 1, 2]]


@pytest.mark.parametrize("fn", [M.disagreement_error, M.disagreement_per_row, M.kendall_tau,
                                lambda a, b: M.precision_at_k(a, b, 1), M.prf_curve])
def test_shape_mismatch(fn):
    with pytest.raises(ValueError, match=r"Y_pred must have the shape of Y_true \(2 rows × 3 "
                                         r"labels\); got shape \(1, 3\)"):
        fn(GOOD_TRUE, GOOD_PRED[:1])
    with pytest.raises(ValueError, match=r"Y_pred must have one column per label \(3\); got 4"):
        fn(GOOD_TRUE, [[1, 2, 3, 4], [1, 2, 3, 4]])


def test_prediction_must_be_complete():
    with pytest.raises(ValueError, match=r"Y_pred must be complete rankings \(positions 1 … 3 "
                                         r"in every row.*row 1 ranks only 2 of 3 labels"):
        M.disagreement_error(GOOD_TRUE, [[1, 2, 3], [1, 2, 0]])


def test_prediction_with_repeated_position():
    with pytest.raises(ValueError, match=r"Y_pred row 0: position 1 is given to two labels"):
        M.disagreement_error(GOOD_TRUE, [[1, 1, 3], [1, 2, 3]])


def test_invalid_truth():
    with pytest.raises(ValueError, match=r"Y_true row 0: positions \[1, 3\] are not 1 … 2"):
        M.disagreement_error([[1, 3, 0]], [[1, 2, 3]])
    with pytest.raises(ValueError, match=r"Y_true: every ranking is empty"):
        M.disagreement_error([[0, 0, 0]], [[1, 2, 3]])


@pytest.mark.parametrize("k", [0, 4, -1, 2.0, True, "2", None])
def test_k_out_of_range(k):
    for fn in (M.precision_at_k, M.recall_at_k, M.f1_at_k):
        with pytest.raises(ValueError, match=r"k must be an integer in 1 … 3 \(the number of "
                                             r"labels\); got"):
            fn(GOOD_TRUE, GOOD_PRED, k)


def test_prf_curve_bad_ks():
    with pytest.raises(ValueError, match=r"every k of ks must be an integer in 1 … 3.*got 4\."):
        M.prf_curve(GOOD_TRUE, GOOD_PRED, ks=range(1, 12))
    with pytest.raises(ValueError, match=r"ks must hold at least one cut-off"):
        M.prf_curve(GOOD_TRUE, GOOD_PRED, ks=[])
    with pytest.raises(ValueError, match=r"ks must be an iterable of integers"):
        M.prf_curve(GOOD_TRUE, GOOD_PRED, ks=3)


# ------------------------------------------------------------------ large data
def test_disagreement_of_a_random_prediction_on_large_data_is_one_half():
    """200k rows × 50 labels: a random prediction orders half of the pairs wrong."""
    rng = np.random.default_rng(0)
    n, L = 200_000, 50
    Y_pred = np.argsort(rng.random((n, L)), axis=1).argsort(axis=1) + 1
    Y_true = np.argsort(rng.random((n, L)), axis=1).argsort(axis=1) + 1
    Y_true[Y_true > rng.integers(3, 11, n)[:, None]] = 0
    value = M.disagreement_error(Y_true, Y_pred)
    assert value == pytest.approx(0.5, abs=0.01)  # a random prediction gets half wrong
