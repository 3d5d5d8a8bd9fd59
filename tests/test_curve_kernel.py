"""The fast paths of the curve kernel give the same bits as the plain NumPy one: float32
scores ranked by the radix sort of (key, code) words, the one-pass compiled accumulation
with tie runs interpolated as numpy.interp does, and -0.0 tying with 0.0."""

from __future__ import annotations

import numpy as np
import pytest

from core.evaluation import _kernel, auuc_table, uplift_curve
from core.evaluation.curves import DEFINITIONS, UpliftCurves


def _data(n, seed, decimals):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.2).astype(np.int8)
    t = (rng.random(n) < 0.6).astype(np.int8)
    s = np.round(rng.normal(size=n), decimals).astype(np.float32)
    return y, t, s


@pytest.mark.parametrize("decimals", [1, 3, 7])  # many, some, almost no ties
def test_float32_fast_path_equals_the_float64_path_bit_for_bit(decimals):
    y, t, s = _data(50_000, decimals, decimals)
    for name in DEFINITIONS:
        _, fast = uplift_curve(y, t, s, definition=name)
        _, plain = uplift_curve(y, t, s.astype(np.float64), definition=name)
        assert np.array_equal(fast, plain), name


@pytest.mark.parametrize("ties", ["average", "stable"])
@pytest.mark.parametrize("amounts", [False, True])
def test_compiled_and_numpy_kernels_agree_bit_for_bit(monkeypatch, ties, amounts):
    """The compiled passes (radix ranking, joint_values' V(k) without the cumulative
    arrays, code_totals) and the numpy formulas give the same bits."""
    y, t, s = _data(30_000, 1, 2)
    s[:50] = -0.0
    s[50:100] = 0.0  # -0.0 and 0.0 are one tie
    if amounts:  # a continuous outcome (the amounts branch of every pass); -0.0 for none
        y = np.where(y == 1, np.random.default_rng(3).gamma(2.0, 10.0, y.size), -0.0)
    compiled = {name: uplift_curve(y, t, s, definition=name, ties=ties)[1]
                for name in DEFINITIONS}
    table = auuc_table(y, t, s, ties=ties)
    monkeypatch.setattr(_kernel, "_compiled", None)
    for name in DEFINITIONS:  # the same bits, the sign of zero included
        numpy = uplift_curve(y, t, s, definition=name, ties=ties)[1]
        np.testing.assert_array_equal(compiled[name].view(np.uint64), numpy.view(np.uint64))
    assert np.array_equal(table.to_numpy(), auuc_table(y, t, s, ties=ties).to_numpy())


def test_descending_keys_order_and_tie_like_the_scores():
    s = np.array([3.5, -0.0, 0.0, -2.0, np.float32(1e-30), -1e-30, 3.5, -np.inf, np.inf],
                 dtype=np.float32)
    key = _kernel.descending_key(s)
    for i in range(s.size):
        for j in range(s.size):
            assert (key[i] < key[j]) == (s[i] > s[j]) and (key[i] == key[j]) == (s[i] == s[j])


@pytest.mark.parametrize("ties", ["average", "stable"])
def test_resampled_curves_compiled_and_numpy_agree_bit_for_bit(monkeypatch, ties):
    """A bootstrap resample's separate curves (counted_at, code_totals) and joint AUUCs
    (joint_values; the fallback builds the repeated rows): the compiled passes and
    the numpy fallback give the same bits, 0/1 outcomes and amounts."""
    from core.evaluation.curves import outcome_code

    y, t, s = _data(20_000, 5, 2)
    rng = np.random.default_rng(6)
    counts = rng.poisson(1.0, y.size)
    amounts = rng.exponential(size=y.size) * y
    separate = [d for d in DEFINITIONS if DEFINITIONS[d].setting == "separate"]
    for outcome in (y, amounts):
        code, y_values = outcome_code(outcome, t)
        order, neg = _kernel.ranking_order(s.astype(np.float64), ties)

        def values():
            base = UpliftCurves.from_sorted(code[order], neg, ties=ties,
                                            y_sorted=None if y_values is None else y_values[order])
            r = base.resampled(counts)
            joint = [a for d in DEFINITIONS if d not in separate
                     for a in base.resampled(counts).auucs(d, (0.1, 0.3, 1.0))]
            return ([r.n_t, r.n_responders] + [v for d in separate for v in r.curve(d)[1]]
                    + joint)

        compiled = values()
        with monkeypatch.context() as m:
            m.setattr(_kernel, "_compiled", None)
            assert compiled == values()


@pytest.mark.parametrize("ties", ["average", "stable"])
@pytest.mark.parametrize("amounts", [False, True])
def test_joint_values_at_chosen_positions_are_the_full_curves_bits(ties, amounts):
    """joint_values(..., at=positions) — what the profit bootstrap reads, 201 depths — gives
    the full curve's values at those positions bit for bit (the sign of zero included):
    resampled counts with zeros, tie runs, positions at 0, at the end, repeated, inside runs;
    every joint definition."""
    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(1, 300))
        code = rng.integers(0, 4, n).astype(np.int8)
        neg = np.sort(-rng.integers(0, max(1, n // int(rng.integers(1, 6))), n).astype(float))
        counts = None if trial % 3 == 0 else rng.poisson(1.0, n).astype(np.uint8)
        values = rng.normal(size=n) if amounts else None
        total = n if counts is None else int(counts.sum())
        at = np.sort(rng.integers(0, total + 1, int(rng.integers(1, 30))))
        at[0], at[-1] = (0 if trial % 2 else at[0]), (total if trial % 5 == 0 else at[-1])
        for kind in (0, 1, 2):
            full = np.empty(total + 1)
            if not _kernel.joint_values(code, counts, values, neg, ties, kind, 3.0, 5.0, full):
                pytest.skip("numba is not installed")
            chosen = np.full(at.size, np.nan)
            assert _kernel.joint_values(code, counts, values, neg, ties, kind, 3.0, 5.0,
                                        chosen, at=at)
            np.testing.assert_array_equal(chosen.view(np.uint64), full[at].view(np.uint64))


@pytest.mark.parametrize("run_ends", [None, np.array([0, 0])])  # stable, average
def test_counted_at_of_an_arm_without_rows_is_zero_in_both_backends(monkeypatch, run_ends):
    """An arm with no rows counts nothing at any k (compiled pass and numpy fallback)."""
    args = (np.ones(3, np.int64), np.empty(0, np.intp), np.empty(0), run_ends,
            np.array([0, 0, 0]))
    np.testing.assert_array_equal(_kernel.counted_at(*args), [0.0, 0.0, 0.0])
    monkeypatch.setattr(_kernel, "_compiled", None)
    np.testing.assert_array_equal(_kernel.counted_at(*args), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rank_codes_is_the_stable_descending_order_in_both_backends(monkeypatch, dtype):
    """The radix ranking of float32 / float64 scores puts the codes in the order of a stable
    argsort of -score (tied rows in row order: valid for ties="stable" too) — heavy ties,
    -0.0 / 0.0, ±inf, subnormals, adjacent floats — and its keys tie where the scores tie."""
    rng = np.random.default_rng(8)
    n = 5_000
    s = np.concatenate([np.round(rng.normal(size=n), 1), rng.normal(size=n),
                        np.where(rng.random(n) < 0.5, -0.0, 0.0),
                        np.where(rng.random(n) < 0.5, 1.0, np.nextafter(dtype(1.0), dtype(2.0))),
                        [np.inf, -np.inf, 1e-45, -1e-45, 5e-324]]).astype(dtype)
    code = rng.integers(0, 4, s.size).astype(np.int8)
    order = np.argsort(-s, kind="stable")
    for backend in ("compiled", "numpy"):
        if backend == "numpy":
            monkeypatch.setattr(_kernel, "_compiled", None)
        codes, keys = _kernel.rank_codes(s, code)
        np.testing.assert_array_equal(codes, code[order])
        assert np.all(keys[1:] >= keys[:-1])
        np.testing.assert_array_equal(keys[1:] == keys[:-1], s[order][1:] == s[order][:-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ranking_order_is_the_stable_argsort_in_both_backends(monkeypatch, dtype):
    """ranking_order's radix sort carrying the row numbers gives the stable argsort of -score
    (heavy ties, -0.0 / 0.0, ±inf, subnormals) and neg_sorted = -score[order]; NaN scores
    take NumPy's path (NaN last), as the numpy backend does."""
    rng = np.random.default_rng(9)
    s = np.concatenate([np.round(rng.normal(size=4000), 1), rng.normal(size=4000),
                        np.where(rng.random(500) < 0.5, -0.0, 0.0),
                        [np.inf, -np.inf, 1e-45, -1e-45, 5e-324]]).astype(dtype)
    with_nan = s.copy()
    with_nan[::97] = np.nan
    for backend in ("compiled", "numpy"):
        if backend == "numpy":
            monkeypatch.setattr(_kernel, "_compiled", None)
        for x in (s, with_nan):
            want = np.argsort(-x, kind="stable")
            for ties in ("average", "stable"):
                order, neg_sorted = _kernel.ranking_order(x, ties)
                np.testing.assert_array_equal(order, want)
                np.testing.assert_array_equal(neg_sorted.view(np.uint8), (-x)[want].view(np.uint8))


def test_from_sorted_with_float16_keys_takes_the_numpy_path():
    """Sorted keys the compiled passes do not take (float16 here) give the curves of the same
    ranking with float64 keys."""
    rng = np.random.default_rng(10)
    code = rng.integers(0, 4, 300).astype(np.int8)
    neg = np.sort(rng.integers(0, 8, 300)).astype(np.float16)
    half = UpliftCurves.from_sorted(code, neg, ties="average", points=7)
    full = UpliftCurves.from_sorted(code, neg.astype(np.float64), ties="average", points=7)
    for name in DEFINITIONS:
        np.testing.assert_array_equal(half.curve(name)[1], full.curve(name)[1])


@pytest.mark.parametrize("kind", ["counts", "amounts"])
def test_merge_runs_equals_a_stable_sort_and_reduceat_in_both_backends(monkeypatch, kind):
    """The Dask client's merge of per-partition pieces: distinct values ascending and the
    rows summed per value — compiled pass and numpy's stable argsort + np.add.reduceat
    against a plain dictionary sum (ties across pieces, -0.0); integer counts identical."""
    rng = np.random.default_rng(12)
    neg = np.concatenate([np.sort(np.round(rng.normal(size=300), 1)) for _ in range(5)]
                         + [np.array([-0.0, -0.0])])
    counts = (rng.integers(0, 5, (neg.size, 4)).astype(np.int32) if kind == "counts"
              else rng.normal(size=(neg.size, 4)))
    want = {}
    for v, row in zip(neg.tolist(), counts, strict=True):
        want[v] = want.get(v, 0) + row.astype(np.float64)
    results = []
    for backend in ("compiled", "numpy"):
        if backend == "numpy":
            monkeypatch.setattr(_kernel, "_compiled", None)
        values, sums = _kernel.merge_runs(neg, counts)
        np.testing.assert_array_equal(values, sorted(want))
        np.testing.assert_allclose(sums, [want[v] for v in sorted(want)], rtol=1e-12)
        results.append((values.view(np.uint64), sums))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1].dtype == results[1][1].dtype
    if kind == "counts":  # integers: the same sums; floats: summed in another order
        np.testing.assert_array_equal(results[0][1], results[1][1])
