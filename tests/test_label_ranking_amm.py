"""Tests for core.label_ranking.amm (AMM-rank and multi-class AMM).

References, never the code under test: SGD steps worked by hand from eqs. 5, 11 and 12 of
the paper (with the zero-hyperplane convention of the module docstring), the pure-numpy
step ``_step_reference``, the eq. 10/11 objective and the disagreement error written here as
plain loops over label pairs, and brute force over every constant ranking.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from core.label_ranking import amm
from core.label_ranking.amm import AMMRank, MultiClassAMM

NO_PRUNE = 10**12


# ------------------------------------------------------------------ references and worlds
def kernel_step(W, counts, x, y, t, *, lam, nu="constant", multiclass=False, bias=1.0):
    """Run the compiled kernel for the single step ``t`` from weights ``W = W_{t-1}``."""
    U = np.array(W, dtype=np.float64) * lam * (t - 1)  # the kernel stores U = λ(t−1) W
    counts = np.array(counts, dtype=np.int64)
    t_end = amm._sgd_kernel(np.array([x], dtype=np.float64), np.array([y], dtype=np.int64),
                            np.array([0]), U, counts, t - 1, lam, bias, NO_PRUNE, 100.0,
                            nu == "inverse", multiclass)
    assert t_end == t
    return U / (lam * t), counts


def scores(model, X, bias=1.0):
    """g(i, x) = max_j w_ij · (x, bias), 0 for a label without hyperplanes, by a loop."""
    out = np.zeros((len(X), len(model.weights_)))
    for r, x in enumerate(X):
        xt = np.append(x, bias) if bias else np.asarray(x)
        for i, Wi in enumerate(model.weights_):
            out[r, i] = max(float(w @ xt) for w in Wi) if len(Wi) else 0.0
    return out


def rank_loss(model, X, Y):
    """Mean eq. 11 loss (ν = 1): Σ over known pairs i ≻ j of max(0, 1 + g(j) − w_{i,z_i}·x),
    where z_i is the best weight of label i: w_{i,z_i}·x = g(i), negative too (BudgetedSVM's
    1 + fx2 − fx1 on raw best scores; 0 for a label without hyperplanes)."""
    g = scores(model, X)
    total = 0.0
    for gr, y in zip(g, Y):
        for i in range(len(y)):
            for j in range(len(y)):
                if y[i] > 0 and (y[j] == 0 or y[j] > y[i]):
                    total += max(0.0, 1.0 + gr[j] - gr[i])
    return total / len(Y)


def objective(model, X, Y, lam):
    """Eq. 10 averaged over the rows: λ/2 ‖W‖²_F + mean eq. 11 loss."""
    return lam / 2 * sum(float((W ** 2).sum()) for W in model.weights_) + rank_loss(model, X, Y)


def disagreement(Y_true, P):
    """ε_dis: the share of known pairs i ≻ j that the predicted positions P put the wrong
    way round, averaged over rows (SPEC §7)."""
    errs = []
    for t, p in zip(Y_true, P):
        wrong = known = 0
        for i in range(len(t)):
            for j in range(len(t)):
                if t[i] > 0 and (t[j] == 0 or t[i] < t[j]):
                    known += 1
                    wrong += p[i] > p[j]
        errs.append(wrong / known)
    return float(np.mean(errs))


def xor_world(n, seed):
    """Label 0 preferred where x₁x₂ > 0, label 1 where x₁x₂ < 0, label 2 always second,
    label 3 never ranked: no linear score per label orders labels 0 and 1."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    same = X[:, 0] * X[:, 1] > 0
    return X, np.where(same[:, None], [1, 3, 2, 0], [3, 1, 2, 0])


def linear_world(seed):
    """Complete rankings of 3 labels by linear utilities with a gap ≥ 0.3 between them."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(3000, 2))
    U = X @ np.array([[2.0, 0.0], [0.0, 2.0], [-2.0, -2.0]]).T
    keep = np.diff(np.sort(U, axis=1), axis=1).min(axis=1) > 0.3
    X, U = X[keep][:600], U[keep][:600]
    return X, np.argsort(np.argsort(-U, axis=1), axis=1) + 1


def random_data(n, d, L, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.zeros((n, L), dtype=np.int64)
    for r in range(n):
        k = rng.integers(0, L + 1)
        Y[r, rng.permutation(L)[:k]] = np.arange(1, k + 1)
    return X, Y


# --------------------------------------------------------- one step, worked by hand
# λ = 1 and t = 2: η = 1/2 and every weight shrinks by 1 − 1/2.  x̃ = (1, 0.5, 1).
X_T = np.array([1.0, 0.5])
XT = np.array([1.0, 0.5, 1.0])


def start(w10):
    """W₁: label 0 has w00 = (−1, 0, 0), label 1 has w10, label 2 has none; budget 2."""
    W = np.zeros((3, 2, 3))
    W[0, 0] = [-1.0, 0.0, 0.0]
    W[1, 0] = w10
    return W, np.array([1, 1, 0])


def test_step_by_hand_creates_pushes_and_nets():
    # g = (−1, 0.5, 0); ranking 0 ≻ 1 ≻ 2 (Y = [1, 2, 0]).  w_{0,z}·x = g(0) = −1.
    # Pairs: (0≻1) 1 + 0.5 + 1 > 0, (0≻2) 1 + 0 + 1 > 0, (1≻2) 1 + 0 − 0.5 > 0: all violated.
    W, counts = start([0.0, 1.0, 0.0])
    W2, c2 = kernel_step(W, counts, X_T, [1, 2, 0], 2, lam=1.0)
    # label 0: preferred twice, best scores ≤ 0 → a new hyperplane η·2·x̃ = x̃; w00 shrinks.
    # label 1: preferred once, less preferred once, best scores > 0 → net 0, shrink only.
    # label 2: less preferred twice, no hyperplane → its first one, η·(−2)·x̃ = −x̃.
    expect = np.zeros((3, 2, 3))
    expect[0, 0], expect[0, 1] = [-0.5, 0, 0], XT
    expect[1, 0] = [0.0, 0.5, 0.0]
    expect[2, 0] = -XT
    np.testing.assert_allclose(W2, expect, rtol=0, atol=1e-12)
    assert c2.tolist() == [2, 1, 1]


def test_step_by_hand_inverse_nu_weighs_pairs_by_the_preferred_rank():
    # ν(1) = 1 for the pairs of label 0, ν(2) = 1/2 for the pair (1 ≻ 2): label 1 nets
    # 1/2 − 1 = −1/2 (eq. 12 with ν(π⁻¹_k), the rank of the preferred label), label 2 gets
    # −(1 + 1/2).
    W, counts = start([0.0, 1.0, 0.0])
    W2, c2 = kernel_step(W, counts, X_T, [1, 2, 0], 2, lam=1.0, nu="inverse")
    expect = np.zeros((3, 2, 3))
    expect[0, 0], expect[0, 1] = [-0.5, 0, 0], XT
    expect[1, 0] = [0.0, 0.5, 0.0] - 0.25 * XT
    expect[2, 0] = -0.75 * XT
    np.testing.assert_allclose(W2, expect, rtol=0, atol=1e-12)
    assert c2.tolist() == [2, 1, 1]


def test_step_by_hand_label_both_roles_with_negative_best():
    # w10 = (0, −1, 0): g(1) = −0.5 ≤ 0, so label 1's preferred role (1 ≻ 2) creates a new
    # hyperplane η·x̃ while its less-preferred role (0 ≻ 1: 1 − 0.5 − 0 > 0) pushes its
    # existing best away by η·x̃.
    W, counts = start([0.0, -1.0, 0.0])
    W2, c2 = kernel_step(W, counts, X_T, [1, 2, 0], 2, lam=1.0)
    expect = np.zeros((3, 2, 3))
    expect[0, 0], expect[0, 1] = [-0.5, 0, 0], XT
    expect[1, 0], expect[1, 1] = [0.0, -0.5, 0.0] - 0.5 * XT, 0.5 * XT
    expect[2, 0] = -XT
    np.testing.assert_allclose(W2, expect, rtol=0, atol=1e-12)
    assert c2.tolist() == [2, 2, 1]


@pytest.mark.parametrize("step", ["kernel", "reference"])
def test_step_by_hand_full_budget_skips_the_preferred_update_of_a_label_scoring_below_0(step):
    # Budget 1: label 0 (g = −1 ≤ 0) would need a new hyperplane and cannot grow, so — as
    # BudgetedSVM's trainAMMonline, which adds a weight only below the budget and otherwise
    # skips the true class — its preferred role makes no update: w00 only shrinks.  Label 1
    # nets 0 on its best (g > 0); label 2 has no hyperplane and gets its first, −2ηx̃.
    W, counts = start([0.0, 1.0, 0.0])
    W1 = W[:, :1].copy()
    if step == "kernel":
        W2, c2 = kernel_step(W1, counts, X_T, [1, 2, 0], 2, lam=1.0)
    else:
        W2, c2 = amm._step_reference(W1, counts, XT, np.array([1, 2, 0]), 2, lam=1.0, budget=1)
    np.testing.assert_allclose(W2[0, 0], [-0.5, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(W2[1, 0], [0.0, 0.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(W2[2, 0], -XT, atol=1e-12)
    assert c2.tolist() == [1, 1, 1]


def test_step_by_hand_full_budget_still_pushes_a_less_preferred_label_scoring_below_0():
    # Budget 1, ranking 1 ≻ 0 with g = (−1, 0.5): label 0 is only less preferred, so its
    # best hyperplane is pushed away even though it scores ≤ 0 and the budget is full.
    W, counts = start([0.0, 1.0, 0.0])
    W2, c2 = kernel_step(W[:2, :1].copy(), counts[:2], X_T, [2, 1], 2, lam=1.0)
    # (1≻0): 1 + (−1) − 0.5 = −0.5 ≤ 0: satisfied, both only shrink
    np.testing.assert_allclose(W2[:, 0], [[-0.5, 0, 0], [0, 0.5, 0]], atol=1e-12)
    W[1, 0] = [0.0, -1.0, 0.0]  # g = (−1, −0.5): (1≻0) 1 − 1 + 0.5 > 0 violated
    W2, c2 = kernel_step(W[:2, :1].copy(), counts[:2], X_T, [2, 1], 2, lam=1.0)
    np.testing.assert_allclose(W2[0, 0], [-0.5, 0, 0] - 0.5 * XT, atol=1e-12)  # pushed
    np.testing.assert_allclose(W2[1, 0], [0.0, -0.5, 0.0], atol=1e-12)  # full: no update
    assert c2.tolist() == [1, 1]


# g = (−2, −1.5) at x̃ = (1, 0.5, 1): label 0 preferred but scored below label 1.
NEG = np.zeros((2, 2, 3))
NEG[0, 0], NEG[1, 0] = [-2.0, 0.0, 0.0], [0.0, -3.0, 0.0]


@pytest.mark.parametrize("multiclass", [False, True])
@pytest.mark.parametrize("step", ["kernel", "reference"])
def test_step_by_hand_hinge_uses_the_raw_negative_score_of_the_preferred_label(step,
                                                                              multiclass):
    # Eq. 11 (eq. 5 for AMM) with z the best-scoring weight of label 0: 1 + g(1) − g(0) =
    # 1 − 1.5 + 2 = 1.5 > 0, violated (BudgetedSVM: 1 + fx2 − fx1 on raw scores).  Flooring
    # g(0) at 0 would give 1 − 1.5 − 0 = −0.5: no update although label 1 is ranked above.
    # Update (λ = 1, t = 2, η = 1/2, shrink 1/2): label 0's best scores ≤ 0 → a new
    # hyperplane ηx̃; label 1's best is pushed away by ηx̃.
    if step == "kernel":
        W2, c2 = kernel_step(NEG, [1, 1], X_T, [1, 2], 2, lam=1.0, multiclass=multiclass)
    else:
        W2, c2 = amm._step_reference(NEG, [1, 1], XT, np.array([1, 2]), 2, lam=1.0, budget=2,
                                     multiclass=multiclass)
    expect = np.zeros((2, 2, 3))
    expect[0, 0], expect[0, 1] = [-1.0, 0.0, 0.0], 0.5 * XT
    expect[1, 0] = [0.0, -1.5, 0.0] - 0.5 * XT
    np.testing.assert_allclose(W2, expect, rtol=0, atol=1e-12)
    assert c2.tolist() == [2, 1]


def test_step_by_hand_satisfied_pairs_only_shrink():
    # x̃ = (2, 1.5, 1), w00 = (1, 0, 0), w10 = (0, 1, 0): g = (2, 1.5, 0).  Ranking 1 ≻ 0,
    # label 2 unranked.  (1≻0): 1 + 2 − 1.5 > 0 violated; (1≻2): 1 + 0 − 1.5 < 0 and
    # (0≻2): 1 + 0 − 2 < 0 are satisfied — label 2 keeps no hyperplane.
    W = np.zeros((3, 2, 3))
    W[0, 0], W[1, 0] = [1.0, 0, 0], [0, 1.0, 0]
    W2, c2 = kernel_step(W, [1, 1, 0], [2.0, 1.5], [2, 1, 0], 2, lam=1.0)
    expect = np.zeros((3, 2, 3))
    expect[0, 0] = [0.5, 0, 0] - 0.5 * np.array([2.0, 1.5, 1.0])
    expect[1, 0] = [0, 0.5, 0] + 0.5 * np.array([2.0, 1.5, 1.0])
    np.testing.assert_allclose(W2, expect, atol=1e-12)
    assert c2.tolist() == [1, 1, 0]


def test_multiclass_step_by_hand_uses_only_the_best_other_label():
    # Top label 0; best other label = 1 (g = 0.5 > 0 = g(2)).  Eq. 5: 1 + 0.5 − (−1) > 0
    # → label 0 creates η·x̃, label 1's best loses η·x̃, label 2 (no hyperplane) is untouched.
    W, counts = start([0.0, 1.0, 0.0])
    W2, c2 = kernel_step(W, counts, X_T, [1, 2, 0], 2, lam=1.0, multiclass=True)
    expect = np.zeros((3, 2, 3))
    expect[0, 0], expect[0, 1] = [-0.5, 0, 0], 0.5 * XT
    expect[1, 0] = [0.0, 0.5, 0.0] - 0.5 * XT
    np.testing.assert_allclose(W2, expect, atol=1e-12)
    assert c2.tolist() == [2, 1, 0]


def test_first_step_from_zero_treats_every_pair_as_violated():
    # t = 1: W₀ = 0, η = 1/λ.  Ranking 0 ≻ 1, labels 2, 3 unranked: label 0 is preferred in
    # 3 pairs, label 1 in 2 and less preferred in 1, labels 2, 3 less preferred in 2 each.
    W, counts = kernel_step(np.zeros((4, 3, 3)), np.zeros(4), [1.0, -2.0], [1, 2, 0, 0], 1,
                            lam=0.5)
    xt = np.array([1.0, -2.0, 1.0])
    assert counts.tolist() == [1, 1, 1, 1]
    np.testing.assert_allclose(W[:, 0], np.outer([3, 1, -2, -2], xt) / 0.5, atol=1e-12)


@pytest.mark.parametrize("nu", ["constant", "inverse"])
@pytest.mark.parametrize("multiclass", [False, True])
def test_kernel_step_equals_numpy_reference_on_random_states(nu, multiclass):
    rng = np.random.default_rng(7)
    L, B, d = 5, 3, 4
    for _ in range(200):
        counts = rng.integers(0, B + 1, size=L)
        W = np.zeros((L, B, d + 1))
        for i in range(L):
            W[i, : counts[i]] = rng.normal(scale=0.7, size=(counts[i], d + 1))
        x = rng.normal(size=d)
        y = np.zeros(L, dtype=np.int64)
        k = rng.integers(0, L + 1)
        y[rng.permutation(L)[:k]] = np.arange(1, k + 1)
        t = int(rng.integers(2, 50))
        lam = float(rng.choice([0.05, 0.5, 2.0]))
        got_W, got_c = kernel_step(W, counts, x, y, t, lam=lam, nu=nu, multiclass=multiclass)
        ref_W, ref_c = amm._step_reference(W, counts, np.append(x, 1.0), y, t, lam=lam,
                                           budget=B, nu=nu, multiclass=multiclass)
        np.testing.assert_allclose(got_W, ref_W, rtol=1e-10, atol=1e-10)
        assert got_c.tolist() == ref_c.tolist()


def test_kernel_run_equals_iterated_reference():
    """Many steps from W = 0 with the Pegasos scaling U = λtW match step-by-step updates."""
    X, Y = random_data(150, 3, 4, seed=3)
    lam, B = 0.1, 3
    U = np.zeros((4, B, 4))
    counts = np.zeros(4, dtype=np.int64)
    order = np.random.default_rng(0).permutation(150)
    t = amm._sgd_kernel(X, Y, order, U, counts, 0, lam, 1.0, NO_PRUNE, 100.0, False, False)
    W, c = np.zeros((4, B, 4)), np.zeros(4, dtype=np.int64)
    for step, r in enumerate(order, start=1):
        W, c = amm._step_reference(W, c, np.append(X[r], 1.0), Y[r], step, lam=lam, budget=B)
    assert t == 150
    np.testing.assert_allclose(U / (lam * t), W, rtol=1e-9, atol=1e-9)
    assert counts.tolist() == c.tolist()


# ------------------------------------------------------------------------------ pruning
def test_prune_removes_smallest_norms_while_their_sum_stays_within_c_squared():
    # Squared norms 1, 4, 9 | 50, 200: 1 + 4 + 9 = 14 ≤ c² = 14 < 14 + 50.
    U = np.zeros((2, 3, 2))
    U[0, 0], U[0, 1], U[0, 2] = [5.0, 5.0], [1.0, 0.0], [0.0, 3.0]   # 50, 1, 9
    U[1, 0], U[1, 1] = [0.0, 2.0], [10.0, 10.0]                     # 4, 200
    counts = np.array([3, 2])
    amm._prune(U, counts, 14.0)
    assert counts.tolist() == [1, 1]
    np.testing.assert_array_equal(U[0], [[5.0, 5.0], [0, 0], [0, 0]])
    np.testing.assert_array_equal(U[1], [[10.0, 10.0], [0, 0], [0, 0]])


def test_prune_may_empty_a_label_and_keeps_order_of_survivors():
    U = np.zeros((2, 3, 1))
    U[0, :, 0] = [3.0, 0.5, 2.0]  # 9, 0.25, 4
    U[1, :1, 0] = [0.1]           # 0.01
    counts = np.array([3, 1])
    amm._prune(U, counts, 0.3)    # 0.01 + 0.25 ≤ 0.3 < 0.26 + 4
    assert counts.tolist() == [2, 0]
    np.testing.assert_array_equal(U[0, :, 0], [3.0, 2.0, 0.0])


def test_fit_prunes_every_prune_every_steps():
    X, Y = xor_world(300, 0)
    kept = AMMRank(lam=1e-2, epochs=2, random_state=0, prune_every=NO_PRUNE).fit(X, Y)
    # c so large that every hyperplane is within c²/(λt)² at the last pruning (t = 600)
    gone = AMMRank(lam=1e-2, epochs=2, random_state=0, prune_every=600, c=1e6).fit(X, Y)
    assert kept.hyperplanes_per_label_.sum() > 0
    assert gone.hyperplanes_per_label_.tolist() == [0, 0, 0, 0]
    np.testing.assert_array_equal(gone.decision_function(X), 0.0)


# ---------------------------------------------------------------------------- learning
def test_objective_decreases_over_epochs_on_separable_data():
    X, Y = linear_world(3)
    lam = 1e-3
    at_zero = SimpleNamespace(weights_=[np.zeros((0, 3))] * 3)
    assert rank_loss(at_zero, X, Y) == 3.0  # W = 0: each of the 3 pairs of a row costs 1
    values = [objective(AMMRank(lam=lam, epochs=e, random_state=s).fit(X, Y), X, Y, lam)
              for s in (0, 1, 2) for e in (1, 4, 16)]
    for s in range(3):
        v = values[3 * s: 3 * s + 3]
        assert v[0] > v[1] > v[2], v
    final = [rank_loss(AMMRank(lam=lam, epochs=16, random_state=s).fit(X, Y), X, Y)
             for s in (0, 1, 2)]
    assert max(final) < 0.1


def test_beats_every_constant_ranking_on_xor_world_with_several_hyperplanes():
    X, Y = xor_world(2000, 0)
    Xt, Yt = xor_world(1000, 1)
    best_constant = min(disagreement(Yt, np.tile(np.array(p) + 1, (len(Yt), 1)))
                        for p in itertools.permutations(range(4)))
    model = AMMRank(lam=1e-3, epochs=10, random_state=0).fit(X, Y)
    err = disagreement(Yt, model.predict(Xt))
    assert best_constant > 0.2
    assert err < 0.1 < best_constant
    assert model.hyperplanes_per_label_.max() > 1
    # labels 0 and 1 each need two hyperplanes (|x₁ + x₂| vs |x₁ − x₂|)
    assert (model.hyperplanes_per_label_[:2] >= 2).all()


def test_multiclass_amm_learns_the_top_label_but_ranks_worse_than_amm_rank():
    X, Y = xor_world(2000, 0)
    Xt, Yt = xor_world(1000, 1)
    mc = MultiClassAMM(lam=1e-3, epochs=10, random_state=0).fit(X, Y)
    top = (mc.predict(Xt) == 1).argmax(axis=1)
    assert (top == (Yt == 1).argmax(axis=1)).mean() > 0.9
    rank = AMMRank(lam=1e-3, epochs=10, random_state=0).fit(X, Y)
    assert disagreement(Yt, rank.predict(Xt)) < disagreement(Yt, mc.predict(Xt))


def test_multiclass_amm_uses_only_the_top_label():
    X, Y = random_data(300, 3, 5, seed=4)
    top_only = np.where(Y == 1, 1, 0)
    a = MultiClassAMM(lam=1e-2, epochs=2, random_state=0).fit(X, Y)
    b = MultiClassAMM(lam=1e-2, epochs=2, random_state=0).fit(X, top_only)
    assert a.hyperplanes_per_label_.tolist() == b.hyperplanes_per_label_.tolist()
    for wa, wb in zip(a.weights_, b.weights_):
        np.testing.assert_array_equal(wa, wb)


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_budget_is_never_exceeded(budget):
    X, Y = xor_world(1000, 2)
    for cls in (AMMRank, MultiClassAMM):
        # no pruning, so the final counts are the largest ever reached
        m = cls(lam=1e-3, epochs=3, budget=budget, prune_every=NO_PRUNE, random_state=0)
        m.fit(X, Y)
        assert m.hyperplanes_per_label_.max() == budget  # XOR needs more, so it fills up
        assert [len(w) for w in m.weights_] == m.hyperplanes_per_label_.tolist()


# ---------------------------------------------------------------------- predictions
def test_predictions_are_permutations_and_follow_the_scores():
    X, Y = random_data(400, 6, 7, seed=5)
    m = AMMRank(lam=1e-2, epochs=2, random_state=0).fit(X, Y)
    P = m.predict(X)
    np.testing.assert_array_equal(np.sort(P, axis=1), np.tile(np.arange(1, 8), (400, 1)))
    S = scores(m, X)
    np.testing.assert_allclose(m.decision_function(X), S, rtol=1e-10, atol=1e-10)
    # position 1 goes to the highest score (the lowest index among ties)
    assert (P.argmin(axis=1) == S.argmax(axis=1)).all()


def test_no_bias_feature():
    X, Y = xor_world(500, 3)
    m = AMMRank(lam=1e-2, epochs=2, bias=0.0, random_state=0).fit(X, Y)
    assert all(w.shape[1] == 2 for w in m.weights_)
    np.testing.assert_allclose(m.decision_function(X), scores(m, X, bias=0.0), atol=1e-10)


def test_same_random_state_gives_identical_models():
    X, Y = random_data(500, 4, 6, seed=6)
    a = AMMRank(lam=1e-3, epochs=3, random_state=11).fit(X, Y)
    b = AMMRank(lam=1e-3, epochs=3, random_state=11).fit(X, Y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    c = AMMRank(lam=1e-3, epochs=3, random_state=12).fit(X, Y)
    assert not np.array_equal(a.decision_function(X), c.decision_function(X))


def test_fitted_attributes():
    X, Y = random_data(250, 3, 4, seed=8)
    m = AMMRank(lam=1e-2, epochs=3, budget=4, random_state=0).fit(X, Y)
    assert m.n_iter_ == 3 and m.n_steps_ == 750
    assert m.hyperplanes_per_label_.shape == (4,)
    assert all(w.shape == (b, 4) for w, b in zip(m.weights_, m.hyperplanes_per_label_))


def test_progress_reports_every_chunk_and_can_cancel():
    X, Y = random_data(25_000, 2, 3, seed=9)
    calls = []
    AMMRank(epochs=2, random_state=0).fit(X, Y, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(d, 50_000) for d in (10_000, 20_000, 25_000, 35_000, 45_000, 50_000)]

    class Cancelled(Exception):
        pass

    def stop(done, total):
        raise Cancelled

    m = AMMRank(epochs=1, random_state=0).fit(X[:100], Y[:100])
    with pytest.raises(Cancelled):
        m.fit(X, Y, progress=stop)
    with pytest.raises(ValueError, match="not fitted yet"):  # no stale model left behind
        m.predict(X[:3])


def test_rows_ranking_nothing_only_shrink():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    Y = np.array([[1, 2, 0], [0, 0, 0]])
    m = AMMRank(lam=1.0, epochs=1, random_state=0).fit(X, Y)
    # Whichever row comes first, the ranked row meets W = 0 (all pairs violated): label 0
    # gains 2x̃, label 1 nets 1 − 1 = 0 (no hyperplane), label 2 loses 2x̃ — in units of
    # η_t; the empty row only shrinks.  After t = 2 steps that is W = (±2x̃)/(λ·2).
    assert m.n_steps_ == 2
    xt = np.array([1.0, 0.0, 1.0])
    np.testing.assert_allclose(m.weights_[0], [2 * xt / 2], atol=1e-12)
    np.testing.assert_allclose(m.weights_[2], [-2 * xt / 2], atol=1e-12)


# -------------------------------------------------------------------------- errors
@pytest.mark.parametrize("cls", [AMMRank, MultiClassAMM])
@pytest.mark.parametrize("param, value, match", [
    ("lam", 0.0, r"lam must be a positive number .*got 0\.0"),
    ("lam", -1e-4, r"lam must be a positive number"),
    ("lam", float("nan"), r"lam must be a positive number"),
    ("budget", 0, r"budget must be a positive integer; got 0"),
    ("budget", 2.5, r"budget must be a positive integer"),
    ("epochs", 0, r"epochs must be a positive integer; got 0"),
    ("prune_every", 0, r"prune_every must be a positive integer"),
    ("c", 0.0, r"c must be a positive number"),
    ("bias", -1.0, r"bias must be a number >= 0"),
    ("random_state", "seed", r"random_state must be"),
])
def test_bad_parameters_raise(cls, param, value, match):
    X, Y = xor_world(20, 0)
    with pytest.raises(ValueError, match=match):
        cls(**{param: value}).fit(X, Y)


def test_unknown_nu_raises():
    X, Y = xor_world(20, 0)
    with pytest.raises(ValueError, match=r"nu must be one of 'constant', 'inverse'; got 'log'"):
        AMMRank(nu="log").fit(X, Y)


def test_bad_parameters_leave_the_model_unfitted():
    X, Y = xor_world(20, 0)
    m = AMMRank(lam=0.0)
    with pytest.raises(ValueError):
        m.fit(X, Y)
    with pytest.raises(ValueError, match="not fitted yet"):
        m.predict(X)


@pytest.mark.parametrize("cls", [AMMRank, MultiClassAMM])
def test_unfitted_predict_raises(cls):
    with pytest.raises(ValueError, match=f"This {cls.__name__} is not fitted yet"):
        cls().predict(np.zeros((2, 2)))


@pytest.mark.parametrize("cls", [AMMRank, MultiClassAMM])
def test_unfitted_predict_raises_sklearn_not_fitted_error(cls):
    # the scikit-learn type (a ValueError subclass), as the sklearn-style siblings raise
    with pytest.raises(NotFittedError, match=rf"^This {cls.__name__} is not fitted yet: call "
                                             r"fit first\.$"):
        cls().predict(np.zeros((1, 2)))
    m = cls(lam=0.0)  # a failed fit leaves it unfitted: the same error
    with pytest.raises(ValueError):
        m.fit(*xor_world(20, 0))
    with pytest.raises(NotFittedError, match="not fitted yet"):
        m.decision_function(np.zeros((1, 2)))


def test_wrong_feature_count_raises():
    X, Y = xor_world(50, 0)
    m = AMMRank(lam=1e-2, epochs=1, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="X has 3 features; the model was fitted with 2"):
        m.predict(np.zeros((4, 3)))


@pytest.mark.parametrize("make", ["AMMRank", "LogisticPerLabel", "KNNMallows",
                                  "PairwiseLogistic"])
def test_a_data_frame_is_read_by_its_column_names(make):
    """Fitted on a DataFrame, a label ranker read predict's columns by position: reversed
    columns scored silently worse and renamed ones were accepted.  Now, as scikit-learn and
    the uplift models do, by name."""
    import pandas as pd

    import core.label_ranking as lr

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=["age", "views", "clicks", "spend"])
    Y = np.argsort(np.argsort(-(X.to_numpy() @ rng.normal(size=(4, 5))), axis=1), axis=1) + 1
    params = {"AMMRank": {"lam": 1e-3, "epochs": 3, "random_state": 0}}.get(make, {})
    model = getattr(lr, make)(**params).fit(X, Y)
    assert model.feature_names_in_ == ["age", "views", "clicks", "spend"]
    np.testing.assert_array_equal(model.predict(X[X.columns[::-1]]), model.predict(X))
    np.testing.assert_array_equal(model.predict(X.to_numpy()), model.predict(X))  # by position
    with pytest.raises(ValueError, match="X lacks 4 of the columns the model was fitted on: "
                                         "'age', 'views'"):
        model.predict(X.rename(columns=lambda c: "zz" + c))
    model.fit(X.to_numpy(), Y)  # a refit on an array forgets the names
    assert not hasattr(model, "feature_names_in_")
