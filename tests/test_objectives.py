"""Tests for core.objectives.lambdas: λ-gradients against a brute-force swap-and-recompute
reference.

The reference below never uses the engine's ΔM formulas: for every pair it swaps the two rows'
positions in the ranking and recomputes the metric from scratch (counting pairs for AUC and
MAUC, recomputing AP for MAP).
"""

from __future__ import annotations

import math
import warnings

import lightgbm as lgb
import numba  # noqa: F401 - required (requirements.txt): the compiled back-end must be tested
import numpy as np
import pytest

from core.objectives import _compiled as _lambda_compiled
from core.objectives.lambdas import (
    EXACT_MAX_ROWS,
    METRICS,
    lambda_gradients,
    lightgbm_objective,
)

K_METRICS = ("pcg", "pcg_cutoff", "dcg", "dcg_exp", "ndcg", "ndcg_exp")

BACKENDS = ["numba", "numpy"]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """Run the test with each kernel back-end: numba's compiled loops and pure numpy."""
    monkeypatch.setattr(_lambda_compiled, "BACKEND", request.param)
    assert _lambda_compiled.backend() == request.param
    return request.param


# --------------------------------------------------------------------------------------------
# brute-force reference (pure Python)
# --------------------------------------------------------------------------------------------
def _metric_value(metric, ranked, k):
    """Metric of a ranked list of relevance values (position 1 first); None = undefined."""
    n = len(ranked)
    if metric == "pcg":
        return sum(ranked[i] * (n - i) for i in range(min(k, n)))
    if metric == "pcg_cutoff":
        return sum(ranked[i] * max(k - i, 0) for i in range(n))
    if metric in ("dcg", "dcg_exp", "ndcg", "ndcg_exp"):
        gains = [2.0**v - 1.0 if metric.endswith("exp") else v for v in ranked]
        dcg = sum(gains[i] / math.log2(i + 2) for i in range(min(k, n)))
        if metric.startswith("n"):
            ideal = sorted(gains, reverse=True)
            idcg = sum(ideal[i] / math.log2(i + 2) for i in range(min(k, n)))
            return None if idcg <= 0 else dcg / idcg
        return dcg
    if metric == "map":
        relevant = sum(v > 0 for v in ranked)
        hits, total = 0, 0.0
        for i, v in enumerate(ranked):
            if v > 0:
                hits += 1
                total += hits / (i + 1)
        return total / relevant if relevant else 0.0
    if metric == "auc":
        lab = [v > 0 for v in ranked]
        m = sum(lab)
        if m in (0, n):
            return 0.0
        correct = sum(lab[a] and not lab[b] for a in range(n) for b in range(a + 1, n))
        return correct / (m * (n - m))
    if metric == "mauc":
        # core.evaluation.metrics.mauc: classes are the grades > 0, weighted by their share of
        # relevant rows
        relevant = sum(v > 0 for v in ranked)
        total = 0.0
        for c in {v for v in ranked if v > 0}:
            m_c = sum(v == c for v in ranked)
            if m_c == n:
                continue
            above = sum(ranked[a] == c and ranked[b] != c
                        for a in range(n) for b in range(a + 1, n))
            total += (m_c / relevant) * above / (m_c * (n - m_c))
        return total
    raise AssertionError(metric)


def _cutoff(k, size):
    if k is None:
        return size
    if isinstance(k, int):
        return min(k, size)
    return max(1, min(size, math.floor(k * size + 0.5)))


def brute_force(scores, rel, sizes, metric, k=None, sigma=1.0):
    """λ-gradients by swapping every pair and recomputing the metric (O(n⁴) per query)."""
    scores, rel = list(map(float, scores)), list(map(float, rel))
    grad, hess = [0.0] * len(scores), [0.0] * len(scores)
    start = 0
    for size in sizes:
        rows = list(range(start, start + size))
        start += size
        kq = _cutoff(k, size)
        ranking = sorted(rows, key=lambda i: -scores[i])  # stable: ties keep row order
        base = _metric_value(metric, [rel[i] for i in ranking], kq)
        if base is None:
            continue
        for i in rows:
            for j in rows:
                if not rel[i] > rel[j]:
                    continue
                swapped = ranking[:]
                a, b = swapped.index(i), swapped.index(j)
                swapped[a], swapped[b] = swapped[b], swapped[a]
                delta = abs(_metric_value(metric, [rel[t] for t in swapped], kq) - base)
                rho = 1.0 / (1.0 + math.exp(sigma * (scores[i] - scores[j])))
                grad[i] -= sigma * delta * rho
                grad[j] += sigma * delta * rho
                hess[i] += sigma**2 * delta * rho * (1 - rho)
                hess[j] += sigma**2 * delta * rho * (1 - rho)
    return np.array(grad), np.array(hess)


def _close(actual, expected, rtol):
    scale = max(np.abs(expected).max(), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
SIZES = [7, 1, 5, 9, 4, 6]


@pytest.fixture
def queries(rng):
    """Several queries: negative and fractional labels, tied scores, tied labels, a single-row
    query (rows 7) and a query whose labels are all equal (rows 13..21)."""
    n = sum(SIZES)
    scores = np.round(rng.normal(size=n), 1)  # ties in scores
    rel = rng.choice([-0.5, 0.0, 0.25, 1.0, 2.0], size=n)
    rel[13:22] = 0.25  # the 9-row query: all labels equal
    rel[22:26] = [1.0, 1.0, -0.5, 0.0]  # ties in relevance
    return scores, rel


def _cases():
    for metric in METRICS:
        for k in (None, 3, 0.5) if metric in K_METRICS else (None,):
            for method in ("exact", "binned"):
                yield pytest.param(metric, k, method, id=f"{metric}-k{k}-{method}")


# --------------------------------------------------------------------------------------------
# correctness against the brute-force reference
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("metric", "k", "method"), list(_cases()))
def test_matches_brute_force(queries, metric, k, method, backend):
    scores, rel = queries
    grad, hess = lambda_gradients(scores, rel, SIZES, metric=metric, k=k, method=method,
                                  sigma=1.3)
    ref_grad, ref_hess = brute_force(scores, rel, SIZES, metric, k, sigma=1.3)
    tol = 1e-10 if method == "exact" else 1e-5
    _close(grad, ref_grad, tol)
    _close(hess, ref_hess, tol)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("method", ["exact", "binned"])
def test_sums_signs_and_degenerate_queries(queries, metric, method, backend):
    scores, rel = queries
    grad, hess = lambda_gradients(scores, rel, SIZES, metric=metric, method=method)
    bounds = np.cumsum([0, *SIZES])
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        assert abs(grad[lo:hi].sum()) <= 1e-9 * max(1.0, np.abs(grad[lo:hi]).max())
    assert np.all(hess >= 0)
    assert grad[7] == 0 and hess[7] == 0  # single-row query
    assert np.all(grad[13:22] == 0) and np.all(hess[13:22] == 0)  # all labels equal


@pytest.mark.parametrize("metric", ["pcg", "pcg_cutoff", "dcg", "auc", "map"])
def test_hessian_positive_wherever_a_pair_exists(rng, metric, backend):
    # every row has a partner of another relevance (and, for auc / map, of the other binary
    # label), and these weights are strictly monotone, so every row is in a pair with ΔM ≠ 0
    rel = np.tile([0.0, 1.0, 2.0], 14)[:40]
    grad, hess = lambda_gradients(rng.normal(size=40), rel, metric=metric)
    assert np.all(hess > 0)
    assert np.all(np.isfinite(grad))


def test_ties_ranked_by_row_order(backend):
    # equal scores: row 0 holds position 1, row 1 position 2; swapping them changes PCG by
    # |1 − 0|·|2 − 1| = 1 and ρ = ½, so the more relevant row 1 gets grad −½.
    grad, hess = lambda_gradients([0.0, 0.0], [0.0, 1.0], metric="pcg")
    np.testing.assert_allclose(grad, [0.5, -0.5])
    np.testing.assert_allclose(hess, [0.25, 0.25])
    # with rows reversed the relevant row is already first: same |ΔPCG|, same ρ
    grad, _ = lambda_gradients([0.0, 0.0], [1.0, 0.0], metric="pcg")
    np.testing.assert_allclose(grad, [-0.5, 0.5])


def test_pcg_cutoff_k_equal_n_is_pcg(queries):
    scores, rel = queries
    a = lambda_gradients(scores, rel, SIZES, metric="pcg")
    b = lambda_gradients(scores, rel, SIZES, metric="pcg_cutoff")
    np.testing.assert_allclose(a, b)


# --------------------------------------------------------------------------------------------
# AUC and MAUC: the O(1) swap formula against recounting pairs
# --------------------------------------------------------------------------------------------
def _auc_by_counting(labels_ranked):
    n = len(labels_ranked)
    m = sum(labels_ranked)
    correct = sum(labels_ranked[a] and not labels_ranked[b] for a in range(n)
                  for b in range(a + 1, n))
    return correct / (m * (n - m))


def test_delta_auc_formula_matches_recounting(rng):
    labels = list(rng.integers(0, 2, size=12))
    labels[0], labels[1] = 1, 0
    m, n_neg = sum(labels), 12 - sum(labels)
    base = _auc_by_counting(labels)
    for i in range(12):  # positions counted from the top: i = 0 is position 1
        for j in range(i + 1, 12):
            swapped = labels[:]
            swapped[i], swapped[j] = swapped[j], swapped[i]
            recount = _auc_by_counting(swapped) - base
            # Welleck (2016) eq. 12, positions from the top
            assert recount == pytest.approx((labels[j] - labels[i]) * (j - i) / (m * n_neg))


def test_auc_and_mauc_lambdas_use_recounted_deltas(rng, backend):
    n = 10
    scores = rng.normal(size=n)
    labels = rng.integers(0, 3, size=n).astype(float)
    order = np.argsort(-scores, kind="stable")
    pos = np.empty(n, int)
    pos[order] = np.arange(n)
    for metric in ("auc", "mauc"):
        grad, _ = lambda_gradients(scores, labels, metric=metric, method="exact")
        expected = np.zeros(n)
        for i in range(n):
            for j in range(n):
                if labels[i] > labels[j]:
                    ranked = list(labels[order])
                    a, b = pos[i], pos[j]
                    base = _metric_value(metric, ranked, n)
                    ranked[a], ranked[b] = ranked[b], ranked[a]
                    delta = abs(_metric_value(metric, ranked, n) - base)
                    lam = delta / (1 + math.exp(scores[i] - scores[j]))
                    expected[i] -= lam
                    expected[j] += lam
        _close(grad, expected, 1e-12)


def test_mauc_two_classes_equals_auc(rng, backend):
    # with one relevant grade MAUC is AUC (core.evaluation.metrics.mauc), so the λ's coincide
    scores, labels = rng.normal(size=30), (rng.random(30) < 0.3).astype(float)
    g_auc, h_auc = lambda_gradients(scores, labels, metric="auc")
    g_mauc, h_mauc = lambda_gradients(scores, labels, metric="mauc")
    np.testing.assert_allclose(g_mauc, g_auc, atol=1e-15)
    np.testing.assert_allclose(h_mauc, h_auc, atol=1e-15)


def test_mauc_delta_matches_core_metrics_mauc_after_swap(rng):
    from core.evaluation.metrics import mauc

    scores = rng.normal(size=12)
    labels = rng.integers(0, 3, size=12).astype(float)
    order = np.argsort(-scores, kind="stable")
    ranked = labels[order]
    base = _metric_value("mauc", list(ranked), 12)
    assert base == pytest.approx(mauc(labels, scores))


# --------------------------------------------------------------------------------------------
# binned engine against the exact one on a 3,000-row query
# --------------------------------------------------------------------------------------------
def _uplift_labels(rng, n):
    t = rng.integers(0, 2, size=n)
    y = (rng.random(n) < np.where(t == 1, 0.16, 0.11)).astype(int)
    rel = np.where((t == 1) & (y == 1), 1 / t.sum(), 0.0)
    rel = np.where((t == 0) & (y == 1), -1 / (n - t.sum()), rel)  # Rel: 1/|T|, 0, −1/|C|
    abs3 = np.select([(t == 1) & (y == 1), (t == 1) & (y == 0), (t == 0) & (y == 1)],
                     [3.0, 1.0, 0.0], 2.0)  # Abs3: TR 3, TNR 1, CR 0, CNR 2
    return rel, abs3


@pytest.mark.parametrize(
    ("metric", "labels", "k"),
    [("pcg", "rel", None), ("pcg", "abs3", 0.3), ("pcg_cutoff", "rel", 900),
     ("ndcg", "abs3", None), ("auc", "rel", None), ("mauc", "abs3", None), ("map", "rel", None)],
)
def test_binned_agrees_with_exact_on_3000_rows(rng, metric, labels, k, backend):
    rel, abs3 = _uplift_labels(rng, 3000)
    y = rel if labels == "rel" else abs3
    scores = np.round(rng.normal(scale=1.5, size=3000), 3)  # spread like trained scores, ties
    exact = lambda_gradients(scores, y, metric=metric, k=k, method="exact")
    binned = lambda_gradients(scores, y, metric=metric, k=k, method="binned")
    for e, b in zip(exact, binned, strict=True):
        cosine = e @ b / (np.linalg.norm(e) * np.linalg.norm(b))
        assert cosine >= 0.9999
        assert np.abs(e - b).max() <= 1e-4 * np.abs(e).max()


@pytest.mark.parametrize("method", ["exact", "binned"])
def test_backends_agree(rng, monkeypatch, method):
    # same pair sums (exact) and the same bins and expansion (binned): the compiled kernel
    # differs from numpy only by rounding, FFT convolutions, and (curvature) the own-bin δ²
    # term that the numpy kernel drops
    rel, abs3 = _uplift_labels(rng, 3000)
    scores = np.round(rng.normal(scale=1.5, size=3000), 3)
    for metric in METRICS:
        y = abs3 if metric in ("mauc", "ndcg", "ndcg_exp", "dcg_exp") else rel
        out = {}
        for name in ("numba", "numpy"):
            monkeypatch.setattr(_lambda_compiled, "BACKEND", name)
            assert _lambda_compiled.backend() == name  # never numpy against numpy
            out[name] = lambda_gradients(scores, y, [1000, 1700, 300], metric=metric,
                                         method=method)
        (g_nb, h_nb), (g_np, h_np) = out["numba"], out["numpy"]
        _close(g_nb, g_np, 1e-12 if method == "exact" else 1e-10)
        _close(h_nb, h_np, 1e-12 if method == "exact" else 1e-5)


def test_numpy_backend_without_numba(monkeypatch):
    monkeypatch.setattr(_lambda_compiled, "BACKEND", "auto")
    monkeypatch.setattr(_lambda_compiled, "_NUMBA", False)  # as if the import had failed
    assert _lambda_compiled.backend() == "numpy"
    grad, _ = lambda_gradients([0.0, 0.0], [0.0, 1.0], metric="pcg", method="binned")
    np.testing.assert_allclose(grad, [0.5, -0.5])


def test_compiled_sort_matches_stable_lexsort(rng):
    """The bucket sort gives the stable order (score descending, ties by row order) from any
    start: row order, the answer, shuffled, reversed, a nearby ranking (the last round's);
    a start too far from the order (past the repair budget) is sorted again from row order."""
    pytest.importorskip("numba")
    from core.objectives import _numba as _lambda_numba

    n = 4000
    cases = [
        rng.normal(size=n),
        np.round(rng.normal(size=n), 1),  # long runs of ties
        np.zeros(n),  # all tied
        np.concatenate([rng.normal(size=n - 40), 1e6 * rng.normal(size=40)]),  # outliers
        np.exp(50 * rng.normal(size=n)),  # most rows crowded into a few buckets
        np.sort(rng.normal(size=n)),  # reversed
        np.where(rng.random(n) < 0.5, 0.0, 1e-300 * rng.normal(size=n)),  # tiny span
        np.where(rng.random(n) < 0.5, 0.0, 5e-320 * rng.random(n)),  # 1/span overflows
    ]
    for x in cases:
        for sizes in ([n], [1, 999, 2000, 1000], [1] * 10 + [n - 10]):
            sizes = np.array(sizes)
            starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            expected = np.lexsort((-x, np.repeat(np.arange(sizes.size), sizes)))
            qid = np.repeat(np.arange(sizes.size), sizes)
            starts_ = [  # where the sort starts: any permutation of each query's rows
                np.arange(n),  # row order (a plan's first round)
                expected,  # the answer
                expected[np.lexsort((rng.random(n), qid))],  # shuffled within queries
                np.lexsort((np.arange(n)[::-1], qid)),  # reversed rows
                np.lexsort((-(x + 0.01 * rng.normal(size=n)), qid)),  # a nearby ranking
            ]
            for index in (np.int32, np.intp):
                for prev in starts_:
                    prev = prev.astype(index)
                    kept = prev.copy()
                    order, xs = np.empty(n, dtype=index), np.empty(n)
                    _lambda_numba.sort_queries(x, starts, sizes, prev, order, xs,
                                               np.empty(2 * n + 1, dtype=index))
                    np.testing.assert_array_equal(order, expected)
                    np.testing.assert_array_equal(xs, x[expected])
                    np.testing.assert_array_equal(prev, kept)  # read, not written


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_scores_beyond_float64s_range_are_refused_with_a_message(rng, monkeypatch, backend):
    """Scores whose span (max − min, times sigma) overflows float64 are refused where the
    plan receives them, in both back-ends — before, the compiled sort indexed a bucket
    int(NaN) (a segfault) and the numpy bins got a NaN count."""
    monkeypatch.setattr(_lambda_compiled, "BACKEND", backend)
    n = 3_000
    rel = (rng.random(n) < 0.3).astype(float)
    x = rng.normal(size=n)
    x[:5], x[5:10] = 1.7e308, -1.7e308
    with pytest.raises(ValueError, match="beyond float64's range"):
        lambda_gradients(x, rel, metric="pcg", method="binned")
    with pytest.raises(ValueError, match=r"sigma=100.*beyond float64's range"):
        lambda_gradients(np.where(x > 1e300, 1e307, 0.0), rel, metric="pcg", sigma=100.0)
    grad, hess = lambda_gradients(np.clip(x, -1e100, 1e100), rel, metric="pcg",
                                  method="binned")  # huge outliers, a finite span: no error
    assert np.isfinite(grad).all() and np.isfinite(hess).all()


def test_compiled_sort_of_a_query_past_the_warm_start_limit(rng):
    """Queries over WARM_MAX_ROWS rows sort from row order (their scores in a previous
    ranking's order would be read from random rows): the same stable order from any start."""
    pytest.importorskip("numba")
    from core.objectives import _numba as _lambda_numba

    big = _lambda_numba.WARM_MAX_ROWS + 1
    sizes = np.array([1_000, big])
    n = int(sizes.sum())
    x = np.round(rng.normal(size=n), 3)  # ties
    starts = np.array([0, 1_000])
    expected = np.lexsort((-x, np.repeat([0, 1], sizes)))
    for prev in (np.arange(n), expected):
        order, xs = np.empty(n, dtype=np.int32), np.empty(n)
        _lambda_numba.sort_queries(x, starts, sizes, prev.astype(np.int32), order, xs,
                                   np.empty(2 * n + 1, dtype=np.int32))
        np.testing.assert_array_equal(order, expected)
        np.testing.assert_array_equal(xs, x[expected])


def _near_tie_pairs(rng, n):
    """Normal scores where every 200th row is followed by one a few ulps higher (same key)."""
    x = rng.normal(size=n)
    x[1::200] = x[0::200] * (1 + 1e-15) + 1e-300
    return x


def test_packed_sort_matches_stable_lexsort(rng):
    """The plan's packed-key sort (numpy's sort of score bits + row index) gives the stable
    order: ties by row order, −0.0 tied with +0.0, near-ties (scores equal in all but the bits
    the index replaces) repaired — by insertion, or by the bucket sort past the repair budget;
    after a round of mostly tied scores the bucket sort takes over, with the same order."""
    pytest.importorskip("numba")
    from core.objectives._plan import PACKED_MIN_DISTINCT, PACKED_MIN_MEAN_ROWS, Plan

    n = 12_000  # queries of 2,400+ rows on average: the packed path
    cases = [
        rng.normal(size=n),
        np.round(rng.normal(size=n), 1),  # long runs of ties
        np.zeros(n),
        np.where(rng.random(n) < 0.5, -0.0, 0.0),  # signed zeros are ties
        np.concatenate([rng.normal(size=n - 40), 1e6 * rng.normal(size=40)]),
        np.exp(50 * rng.normal(size=n)),
        np.where(rng.random(n) < 0.5, 0.0, 5e-320 * rng.random(n)),  # subnormals
        np.tile([np.inf, -np.inf, 1.0, -1.0], n // 4),
        1.0 + 1e-15 * rng.permutation(n),  # near-ties only: past the budget, bucket sort
        _near_tie_pairs(rng, n),  # a few near-ties: repaired in place
    ]
    for x in cases:
        for sizes in ([n], [1, 999, 2000, n - 3000], [1] * 4 + [n - 4]):
            sizes = np.array(sizes)
            assert n >= PACKED_MIN_MEAN_ROWS * sizes.size  # the packed path
            plan = Plan(np.zeros(n), sizes, metric="pcg", k=None, method="binned", bins=256,
                        sigma=1.0)
            plan._packed_faster = True  # no timing trials: the packed path whenever eligible
            expected = np.lexsort((-x, np.repeat(np.arange(sizes.size), sizes)))
            for _ in range(2):  # packed first; then the bucket sort if the scores were tied
                order, xs = plan._sort_compiled(x)
                np.testing.assert_array_equal(order, expected)
                np.testing.assert_array_equal(xs, x[expected])
            distinct = np.unique(x).size
            assert plan._ties == (distinct < PACKED_MIN_DISTINCT * n)
    # the budget: near-ties everywhere need the bucket sort, a few are repaired in place
    plan = Plan(np.zeros(n), None, metric="pcg", k=None, method="binned", bins=256, sigma=1.0)
    plan._packed_faster = True
    plan._sort_compiled(_near_tie_pairs(rng, n))
    assert plan._bucket is None
    plan._sort_compiled(1.0 + 1e-15 * rng.permutation(n))
    assert plan._bucket is not None


def test_plan_bucket_sort_from_the_last_round_stays_exact_over_rounds(rng):
    """The plan's bucket sort starts each round from the previous round's order (its two order
    buffers take turns): over boosting-like rounds — small moves, a tie that splits, scores
    reversed, all tied, back to distinct — every round's order is the stable lexsort one."""
    pytest.importorskip("numba")
    from core.objectives._plan import Plan

    n = 5_000
    leaf = rng.integers(0, 31, n)
    x = np.zeros(n)
    rounds = []
    for r in range(12):  # boosting: every row moves by its leaf's value
        x = x + 0.05 * rng.normal(size=31)[leaf if r % 3 else rng.integers(0, 31, n)]
        rounds.append(x.copy())
    rounds += [-rounds[-1], np.zeros(n), rng.normal(size=n), np.round(rng.normal(size=n), 1)]
    for sizes in ([n], [1, 1_999, 3_000]):
        plan = Plan(np.zeros(n), np.array(sizes), metric="pcg", k=None, method="binned",
                    bins=256, sigma=1.0)
        plan._packed_faster = False  # the bucket sort every round
        qid = np.repeat(np.arange(len(sizes)), sizes)
        seen = []
        for x in rounds:
            order, xs = plan._sort_compiled(x)
            expected = np.lexsort((-x, qid))
            np.testing.assert_array_equal(order, expected)
            np.testing.assert_array_equal(xs, x[expected])
            seen.append(order)
        assert seen[-1] is seen[-3] and seen[-2] is not seen[-1]  # two buffers take turns


def test_plan_times_both_sorts_then_keeps_the_faster_with_the_same_gradients(rng):
    """numpy's sort is SIMD on some CPUs only: a plan of large queries times the packed and
    the bucket sort on its first rounds of distinct scores (SORT_TRIALS each, alternating),
    then keeps the faster; every round's gradients are those of a plan forced to either."""
    pytest.importorskip("numba")
    from core.objectives import _compiled as comp
    from core.objectives._plan import SORT_TRIALS, Plan

    if comp.backend() != "numba":
        pytest.skip("the compiled back-end is off")
    n = 6_000
    rel = (rng.random(n) < 0.3).astype(float)
    rounds = [rng.normal(size=n) for _ in range(2 * SORT_TRIALS + 2)]
    plans = {}
    for forced in (None, True, False):
        plan = Plan(rel, None, metric="pcg", k=None, method="binned", bins=256, sigma=1.0)
        plan._packed_faster = forced
        plans[forced] = (plan, [plan.gradients(x) for x in rounds])
    timed, got = plans[None]
    assert [len(v) for v in timed._sort_times.values()] == [SORT_TRIALS, SORT_TRIALS]
    assert timed._packed_faster == (min(timed._sort_times["packed"])
                                    < min(timed._sort_times["bucket"]))
    for forced in (True, False):
        assert plans[forced][0]._sort_times == {"packed": [], "bucket": []}  # no trials
        for (g, h), (g2, h2) in zip(got, plans[forced][1], strict=True):
            np.testing.assert_array_equal(g, g2)
            np.testing.assert_array_equal(h, h2)


def test_auto_switches_to_binned_above_threshold(rng, backend):
    from core.objectives.lambdas import AUTO_EXACT_MAX_ROWS

    small, large = AUTO_EXACT_MAX_ROWS, AUTO_EXACT_MAX_ROWS + 1
    rel, _ = _uplift_labels(rng, small + large)
    scores = rng.normal(size=small + large)
    auto = lambda_gradients(scores, rel, [small, large], metric="pcg")
    binned = lambda_gradients(scores, rel, [small, large], metric="pcg", method="binned")
    exact_small = lambda_gradients(scores[:small], rel[:small], metric="pcg", method="exact")
    np.testing.assert_array_equal(auto[0][small:], binned[0][small:])  # above the threshold
    np.testing.assert_array_equal(auto[0][:small], exact_small[0])  # at the threshold: exact


def test_continuous_relevance_falls_back_to_exact(rng, backend):
    rel = rng.normal(size=300)  # 300 distinct values: too many classes for the binned kernel
    scores = rng.normal(size=300)
    a = lambda_gradients(scores, rel, metric="dcg", method="binned")
    b = lambda_gradients(scores, rel, metric="dcg", method="exact")
    np.testing.assert_array_equal(a[0], b[0])


def test_wide_score_range_stays_accurate(rng, backend):
    rel, abs3 = _uplift_labels(rng, 2000)
    scores = rng.normal(scale=30.0, size=2000)  # 4·256 bins of width ~0.2: still binned
    e = lambda_gradients(scores, abs3, metric="pcg", method="exact")[0]
    b = lambda_gradients(scores, abs3, metric="pcg", method="binned")[0]
    assert not np.array_equal(e, b)  # the binned kernel ran
    assert np.abs(e - b).max() <= 1e-4 * np.abs(e).max()


@pytest.mark.parametrize("spread", ["cauchy", "outlier", "huge outlier"])
def test_scores_too_spread_for_the_bins_get_the_exact_gradients(rng, backend, spread):
    # One outlying score stretched every bin past its second-order expansion: the binned
    # gradients were off by 0.07 (Cauchy), 0.5 (one score at 1e4) and 220 (1e20) of the
    # largest gradient.  Such a query now takes the exact kernel, for that round.
    rel, abs3 = _uplift_labels(rng, 3000)
    scores = {"cauchy": rng.standard_cauchy(3000),
              "outlier": np.r_[1e4, rng.normal(size=2999)],
              "huge outlier": np.r_[1e20, rng.normal(size=2999)]}[spread]
    for metric, labels in (("pcg", abs3), ("ndcg", rel), ("map", rel)):
        e = lambda_gradients(scores, labels, metric=metric, method="exact")
        for method in ("auto", "binned"):
            b = lambda_gradients(scores, labels, metric=metric, method=method)
            np.testing.assert_allclose(b[0], e[0], rtol=0, atol=1e-12 * np.abs(e[0]).max())
            np.testing.assert_allclose(b[1], e[1], rtol=0, atol=1e-12 * np.abs(e[1]).max())


def test_a_query_too_large_for_the_exact_kernel_warns_when_too_spread(rng, backend):
    from core.objectives._plan import EXACT_MAX_ROWS

    n = EXACT_MAX_ROWS + 1
    rel, abs3 = _uplift_labels(rng, n)
    scores = np.r_[1e4, rng.normal(size=n - 1)]
    with pytest.warns(RuntimeWarning, match=r"20,001-row query .* bins 9\.\d+ wide"):
        lambda_gradients(scores, abs3, metric="pcg")
    from core.objectives._plan import Plan

    plan = Plan(abs3, None, metric="pcg", k=None, method="auto", bins=256, sigma=1.0)
    with warnings.catch_warnings(record=True) as caught:  # a training: once, not per round
        warnings.simplefilter("always")
        for shift in range(3):
            plan.gradients(scores + shift)
    assert len([w for w in caught if "bins" in str(w.message)]) == 1


# --------------------------------------------------------------------------------------------
# LightGBM integration
# --------------------------------------------------------------------------------------------
def _pcg(score, rel):
    order = np.argsort(-np.asarray(score), kind="stable")
    n = len(rel)
    return float(np.sum(rel[order] * (n - np.arange(n))))


def _uplift_problem(rng, n=1500):
    x = rng.normal(size=(n, 4))
    t = rng.integers(0, 2, size=n)
    base = 0.15 + 0.05 * (x[:, 1] > 0)
    effect = 0.25 * (x[:, 0] > 0.3)  # treatment helps only where x0 > 0.3
    y = (rng.random(n) < base + t * effect).astype(int)
    rel = np.where((t == 1) & (y == 1), 1 / t.sum(), 0.0)
    rel = np.where((t == 0) & (y == 1), -1 / (n - t.sum()), rel)
    return x, rel


def test_lightgbm_fits_with_pcg_objective(rng):
    x, rel = _uplift_problem(rng)
    params = {"objective": lightgbm_objective("pcg"), "metric": "None", "verbose": -1,
              "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 20, "num_threads": 1}
    booster = lgb.train(params, lgb.Dataset(x, rel, group=[len(rel)]), num_boost_round=30)
    initial = _pcg(np.zeros(len(rel)), rel)  # constant score: ties ranked by row order
    fitted = _pcg(booster.predict(x), rel)
    assert fitted > 1.5 * initial > 0


def test_lightgbm_sklearn_api_with_groups_and_weights(rng):
    x, rel = _uplift_problem(rng, n=600)
    obj = lightgbm_objective("pcg", k=0.5)
    ranker = lgb.LGBMRanker(objective=obj, metric="None", n_estimators=5, num_leaves=4,
                            verbose=-1, n_jobs=1)
    ranker.fit(x, rel, group=[300, 300])
    assert np.all(np.isfinite(ranker.predict(x)))
    # called as LightGBM's sklearn wrapper does: (y_true, y_pred, weight, group)
    preds = rng.normal(size=600)
    weight = rng.uniform(0.5, 2.0, size=600)
    grad, hess = obj(rel, preds, weight, np.array([300, 300]))
    ref_grad, ref_hess = lambda_gradients(preds, rel, [300, 300], metric="pcg", k=0.5)
    np.testing.assert_allclose(grad, ref_grad * weight)
    np.testing.assert_allclose(hess, ref_hess * weight)


def test_objective_warm_start_matches_fresh_computation(rng, backend):
    rel, _ = _uplift_labels(rng, 2500)
    obj = lightgbm_objective("auc")
    preds = np.round(rng.normal(size=2500), 2)
    ds = lgb.Dataset(np.zeros((2500, 1)), rel, group=[1000, 1500]).construct()
    for _ in range(3):  # warm-started sorts with ties must equal a fresh stable sort
        got = obj(preds, ds)
        want = lambda_gradients(preds, rel.astype(np.float32), [1000, 1500], metric="auc")
        # float32, as LightGBM keeps gradients: the float64 values rounded once (2^-24)
        assert got[0].dtype == got[1].dtype == np.float32
        np.testing.assert_allclose(got[0], want[0], rtol=2.0**-24, atol=1e-30)
        np.testing.assert_allclose(got[1], want[1], rtol=2.0**-24, atol=1e-30)
        preds = preds + np.round(rng.normal(scale=0.05, size=2500), 2)


def test_labels_changed_in_place_between_rounds_give_a_new_plan(rng):
    # LightGBM passes the same label object every round; the objective skips its set-up
    # only while the values are the same (checked against a copy in the labels' dtype)
    n = 3000
    rel, _ = _uplift_labels(rng, n)
    labels = rel.astype(np.float32)  # what Dataset.get_label() hands over
    preds = rng.normal(size=n)
    obj = lightgbm_objective("pcg")
    first = obj(labels, preds)
    plan = obj._plan
    np.testing.assert_array_equal(obj(labels, preds)[0], first[0])
    assert obj._plan is plan  # unchanged labels: the same plan
    before = labels.copy()
    labels[:] = np.roll(labels, 7)  # changed in place: same object, new values
    assert not np.array_equal(labels, before)
    got = obj(labels, preds)
    assert obj._plan is not plan  # new values: a new plan
    want = lambda_gradients(preds, labels.astype(np.float64), metric="pcg")
    np.testing.assert_allclose(got[0], want[0], rtol=2.0**-24, atol=1e-30)


def test_objective_copies_and_pickles_without_its_cached_plan(rng):
    import copy
    import pickle

    x, rel = _uplift_problem(rng, n=400)
    obj = lightgbm_objective("pcg", k=0.5, bins=64)
    ds = lgb.Dataset(x, rel, group=[len(rel)]).construct()
    preds = rng.normal(size=len(rel))
    first = obj(preds, ds)
    assert obj._plan is not None  # built on the first call, reused afterwards
    for twin in (copy.deepcopy(obj), pickle.loads(pickle.dumps(obj))):
        assert twin._plan is None and repr(twin) == repr(obj)
        again = twin(preds, ds)
        np.testing.assert_array_equal(again[0], first[0])
        np.testing.assert_array_equal(again[1], first[1])


def test_objective_weights_on_both_backends(rng, backend):
    rel, _ = _uplift_labels(rng, 1200)
    preds = rng.normal(size=1200)
    weight = rng.uniform(0.5, 2.0, size=1200)
    obj = lightgbm_objective("pcg", method="binned")
    grad, hess = obj(rel, preds, weight, np.array([500, 700]))
    ref_grad, ref_hess = lambda_gradients(preds, rel, [500, 700], metric="pcg", method="binned")
    np.testing.assert_allclose(grad, ref_grad * weight, rtol=2.0**-24, atol=1e-30)
    np.testing.assert_allclose(hess, ref_hess * weight, rtol=2.0**-24, atol=1e-30)
    with pytest.raises(ValueError, match="weight must have length 1200"):
        obj(rel, preds, weight[:-1], np.array([500, 700]))


def test_objective_group_disagreement_is_an_error(rng):
    obj = lightgbm_objective("pcg", group_sizes=[5, 5])
    with pytest.raises(ValueError, match="disagree with the training data's group"):
        obj(np.zeros(10), np.zeros(10), None, np.array([4, 6]))


# --------------------------------------------------------------------------------------------
# bad arguments and degenerate input
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"metric": "ndcg2"}, r"metric must be one of 'pcg', .*; got 'ndcg2'"),
        ({"metric": "pcg", "k": 0}, r"k must be a positive int \(rows\) or a float fraction"),
        ({"metric": "pcg", "k": -3}, r"k must be a positive int .*got -3"),
        ({"metric": "pcg", "k": 1.5}, r"float fraction in \(0, 1\]; got 1.5"),
        ({"metric": "dcg", "k": True}, r"k must be a positive int"),
        ({"metric": "auc", "k": 5}, r"metric 'auc' takes no cut-off"),
        ({"metric": "pcg", "method": "fast"}, r"method must be one of 'auto', 'exact', 'binned'"),
        ({"metric": "pcg", "bins": 0}, r"bins must be a positive int; got 0"),
        ({"metric": "pcg", "sigma": 0.0}, r"sigma must be a finite number > 0; got 0.0"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lambda_gradients(np.zeros(4), [0, 1, 0, 1], **kwargs)
    with pytest.raises(ValueError, match=match):
        lightgbm_objective(**kwargs)


def test_bad_arrays():
    with pytest.raises(ValueError, match=r"group_sizes must sum to the number of rows \(4\); "
                                         r"they sum to 5"):
        lambda_gradients(np.zeros(4), [0, 1, 0, 1], [2, 3], metric="pcg")
    with pytest.raises(ValueError, match="group_sizes must hold positive integers"):
        lambda_gradients(np.zeros(4), [0, 1, 0, 1], [4, 0], metric="pcg")
    with pytest.raises(ValueError, match=r"scores must be finite; got 1 NaN or infinite"):
        lambda_gradients([0.0, np.nan, 1.0, 2.0], [0, 1, 0, 1], metric="pcg")
    with pytest.raises(ValueError, match=r"scores must have length 4; got length 3"):
        lambda_gradients([0.0, 1.0, 2.0], [0, 1, 0, 1], metric="pcg")
    with pytest.raises(ValueError, match=r"relevance must be finite"):
        lambda_gradients(np.zeros(2), [0.0, np.inf], metric="dcg")
    with pytest.raises(ValueError, match=r"relevance must contain at least one row"):
        lambda_gradients([], [], metric="dcg")
    with pytest.raises(ValueError, match=r"overflows"):
        lambda_gradients(np.zeros(2), [0.0, 5000.0], metric="dcg_exp")


def test_exact_refuses_huge_queries_and_binned_needs_few_classes():
    n = EXACT_MAX_ROWS + 1
    with pytest.raises(ValueError, match=r"method='exact' .* at most 20,000 rows per query"):
        lambda_gradients(np.zeros(n), np.arange(n) % 2, metric="pcg", method="exact")
    with pytest.raises(ValueError, match=r"more than 16 distinct relevance values"):
        lambda_gradients(np.zeros(n), np.arange(n) % 17, metric="pcg", method="auto")


def test_ndcg_without_positive_gain_warns_and_gives_zero(rng):
    rel = np.array([0.0, -1.0, -1.0, 0.0])
    with pytest.warns(UserWarning, match=r"ideal DCG <= 0"):
        grad, hess = lambda_gradients(rng.normal(size=4), rel, metric="ndcg")
    assert np.all(grad == 0) and np.all(hess == 0)


def test_finite_check_with_an_overflowing_sum():
    # check_scores first sums the array (no mask allocated); a sum that overflows must not
    # reject finite values, and NaN / ±inf are still counted one by one
    from core._validation import check_scores

    big = np.array([1e308, 1e308, -5.0])
    np.testing.assert_array_equal(check_scores(big), big)
    assert check_scores(np.full(3, 3e38, dtype=np.float32), keep_float32=True).dtype == np.float32
    with pytest.raises(ValueError, match="score must be finite; got 2 NaN or infinite"):
        check_scores([np.inf, -np.inf, 1.0])
    with pytest.raises(ValueError, match="score must be finite; got 1 NaN or infinite"):
        check_scores([1e308, 1e308, np.nan])
