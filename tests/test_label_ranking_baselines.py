"""Tests of core.label_ranking.baselines: the Mallows-consensus and logistic baselines.

Reference values are derived here independently: brute-force mean positions and pairwise
wins for the Borda consensus, a brute-force nearest neighbour, logistic regressions fitted
directly with scikit-learn on hand-standardised features, and a brute-force pair loop for the
disagreement error.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from core.label_ranking.baselines import (
    CentralMallows,
    GroupMallows,
    KNNMallows,
    LogisticPerLabel,
    PairwiseLogistic,
    borda_consensus,
)


# ----------------------------------------------------------------------------- helpers
def _standardise(X_train, X):
    """Hand-written z-scores with the training mean and population sd (sd 0 -> 1)."""
    mu = X_train.mean(axis=0)
    sd = X_train.std(axis=0)
    sd[sd == 0] = 1.0
    return (X - mu) / sd


def _world(n, *, d=4, L=6, top=3, noise=0.3, seed=0):
    """Preferences that depend on x: utilities X @ W + noise, each row ranks its top ``top``.

    Also returns groups from the signs of the first two features (four buckets).
    """
    rng = np.random.default_rng(seed)
    W = np.random.default_rng(1000).normal(size=(d, L))
    X = rng.normal(size=(n, d))
    U = X @ W + noise * rng.normal(size=(n, L))
    Y = np.zeros((n, L), dtype=np.int64)
    for r in range(n):
        best = np.argsort(-U[r])[:top]
        for p, j in enumerate(best, start=1):
            Y[r, j] = p
    groups = 2 * (X[:, 0] > 0) + (X[:, 1] > 0)
    return X, Y, groups


def _disagreement(Y, pred):
    """ε_dis by brute force: wrongly ordered known pairs / known pairs, averaged over rows.

    A pair (a, b) is known when a is ranked and b is ranked below it or not ranked.
    """
    errors = []
    for y, p in zip(Y, pred):
        L = len(y)
        known = wrong = 0
        for a in range(L):
            for b in range(L):
                if y[a] > 0 and (y[b] == 0 or y[a] < y[b]):
                    known += 1
                    wrong += p[a] > p[b]
        lt = int((y > 0).sum())
        assert known == lt * (L - (lt + 1) / 2)
        errors.append(wrong / known)
    return float(np.mean(errors))


def _complete_from(y, tie_break):
    """Complete positions from one ranking: its ranked labels in order, then the unranked
    ones by ``tie_break`` (higher first), then by label index."""
    ranked = sorted((int(y[j]), j) for j in range(len(y)) if y[j] > 0)
    rest = sorted((-tie_break[j], j) for j in range(len(y)) if y[j] == 0)
    order = [j for _, j in ranked] + [j for _, j in rest]
    out = np.zeros(len(y), dtype=np.int64)
    for p, j in enumerate(order, start=1):
        out[j] = p
    return out


def _random_incomplete(n, L, rng):
    Y = np.zeros((n, L), dtype=np.int64)
    for r in range(n):
        lt = rng.integers(1, L + 1)
        labels = rng.permutation(L)[:lt]
        Y[r, labels] = np.arange(1, lt + 1)
    return Y


# --------------------------------------------------------------------------- consensus
HAND_Y = np.array([[1, 2, 0, 0],
                   [0, 1, 0, 0],
                   [2, 0, 1, 3]])


def _brute_mean_positions(Y, weights=None):
    """Every unranked label at the mean of the positions left over, by enumeration."""
    n, L = Y.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    total = np.zeros(L)
    for r in range(n):
        lt = int((Y[r] > 0).sum())
        leftover = list(range(lt + 1, L + 1))
        for j in range(L):
            total[j] += w[r] * (Y[r, j] if Y[r, j] > 0 else sum(leftover) / len(leftover))
    return total / w.sum()


def _brute_wins(Y, weights=None):
    """Mean number of labels each label beats, a tie between unranked labels counting 1/2."""
    n, L = Y.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    wins = np.zeros(L)
    for r in range(n):
        for a in range(L):
            for b in range(L):
                if a == b:
                    continue
                ya, yb = Y[r, a], Y[r, b]
                if ya > 0 and (yb == 0 or ya < yb):
                    wins[a] += w[r]
                elif ya == 0 and yb == 0:
                    wins[a] += 0.5 * w[r]
    return wins / w.sum()


def test_borda_consensus_hand_example():
    # Row means by hand: [1, 2, 3.5, 3.5], [3, 1, 3, 3], [2, 4, 1, 3].
    mean_pos = np.array([(1 + 3 + 2) / 3, (2 + 1 + 4) / 3, (3.5 + 3 + 1) / 3,
                         (3.5 + 3 + 3) / 3])
    np.testing.assert_allclose(_brute_mean_positions(HAND_Y), mean_pos)
    np.testing.assert_allclose(borda_consensus(HAND_Y), 4 - mean_pos)
    assert list(np.argsort(-borda_consensus(HAND_Y), kind="stable")) == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_borda_consensus_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    Y = _random_incomplete(25, 5, rng)
    w = rng.uniform(0.1, 3.0, size=25)
    for weights in (None, w):
        scores = borda_consensus(Y, weights=weights)
        np.testing.assert_allclose(scores, 5 - _brute_mean_positions(Y, weights))
        np.testing.assert_allclose(scores, _brute_wins(Y, weights))


def test_borda_integer_weights_equal_repeated_rows():
    w = np.array([2, 0, 3])
    np.testing.assert_allclose(borda_consensus(HAND_Y, weights=w),
                               borda_consensus(np.repeat(HAND_Y, w, axis=0)))


def test_borda_consensus_bad_input():
    with pytest.raises(ValueError, match="weights must be non-negative"):
        borda_consensus(HAND_Y, weights=[1, -1, 1])
    with pytest.raises(ValueError, match="weights must have a positive sum"):
        borda_consensus(HAND_Y, weights=[0, 0, 0])
    with pytest.raises(ValueError, match="weights must have length 3"):
        borda_consensus(HAND_Y, weights=[1, 1])
    with pytest.raises(ValueError, match="position 2 is given to two labels"):
        borda_consensus([[1, 2, 2]])


# ------------------------------------------------------------------------ Mallows models
def test_central_mallows_predicts_the_consensus_for_every_row():
    X = np.random.default_rng(0).normal(size=(3, 2))
    model = CentralMallows().fit(X, HAND_Y)
    # Consensus of HAND_Y: labels 0, 1, 2, 3 in that order (mean positions 2, 7/3, 2.5, 19/6).
    expected = np.tile([1, 2, 3, 4], (5, 1))
    np.testing.assert_array_equal(model.predict(np.zeros((5, 2))), expected)
    np.testing.assert_allclose(model.decision_function(X), np.tile(borda_consensus(HAND_Y),
                                                                   (3, 1)))


def test_group_mallows_equals_borda_per_group():
    X, Y, groups = _world(200, seed=3)
    names = np.array(["f-young", "f-old", "m-young", "m-old"])[groups]
    model = GroupMallows().fit(X, Y, groups=names)
    assert model.groups_ == sorted(set(names.tolist()))
    scores = model.decision_function(X, groups=names)
    for g in set(names.tolist()):
        rows = names == g
        np.testing.assert_allclose(scores[rows], np.tile(borda_consensus(Y[rows]),
                                                         (rows.sum(), 1)))
        np.testing.assert_array_equal(model.group_sizes_[model.groups_.index(g)], rows.sum())
    central = borda_consensus(Y)
    # Unseen group and groups=None: the consensus of all training rows.
    mixed = np.array(["f-old", "unseen"])
    out = model.decision_function(X[:2], groups=mixed)
    np.testing.assert_allclose(out[0], borda_consensus(Y[names == "f-old"]))
    np.testing.assert_allclose(out[1], central)
    np.testing.assert_allclose(model.decision_function(X[:3]), np.tile(central, (3, 1)))


def test_group_mallows_numeric_groups_match_numpy_and_python_values():
    X, Y, groups = _world(120, seed=4)
    model = GroupMallows().fit(X, Y, groups=groups)  # numpy int64 groups
    as_list = [int(g) for g in groups]
    np.testing.assert_array_equal(model.predict(X, groups=as_list),
                                  model.predict(X, groups=groups))
    np.testing.assert_allclose(model.decision_function(X[:1], groups=[int(groups[0])])[0],
                               borda_consensus(Y[groups == groups[0]]))


def test_knn_one_neighbour_reproduces_nearest_training_row():
    rng = np.random.default_rng(5)
    X_train = rng.normal(size=(60, 3)) * [1.0, 10.0, 0.1]  # scales differ: standardising matters
    Y_train = _random_incomplete(60, 5, rng)
    X_test = rng.normal(size=(25, 3)) * [1.0, 10.0, 0.1]
    model = KNNMallows(n_neighbors=1).fit(X_train, Y_train)
    Z_train, Z_test = _standardise(X_train, X_train), _standardise(X_train, X_test)
    central = -_brute_mean_positions(Y_train)  # ties among unranked labels: overall consensus
    pred = model.predict(X_test)
    for r in range(len(X_test)):
        nearest = int(np.argmin(((Z_train - Z_test[r]) ** 2).sum(axis=1)))
        np.testing.assert_array_equal(pred[r], _complete_from(Y_train[nearest], central))


def test_knn_consensus_of_k_neighbours_is_their_borda():
    rng = np.random.default_rng(6)
    X_train, X_test = rng.normal(size=(80, 2)), rng.normal(size=(10, 2))
    Y_train = _random_incomplete(80, 4, rng)
    model = KNNMallows(n_neighbors=7).fit(X_train, Y_train)
    Z_train, Z_test = _standardise(X_train, X_train), _standardise(X_train, X_test)
    scores, pred = model.decision_function(X_test), model.predict(X_test)
    central = -_brute_mean_positions(Y_train)
    n_ties = 0
    for r in range(len(X_test)):
        near = np.argsort(((Z_train - Z_test[r]) ** 2).sum(axis=1))[:7]
        local = 4 - _brute_mean_positions(Y_train[near])
        # Borda of the neighbours, up to a tie-break below 1/(4k) ...
        assert np.all(scores[r] - local >= 0) and np.all(scores[r] - local < 1 / 28)
        # ... which orders labels by neighbours' score, then overall consensus, then index.
        order = sorted(range(4), key=lambda j: (-local[j], -central[j], j))
        np.testing.assert_array_equal(np.argsort(pred[r]), order)
        n_ties += len(set(np.round(local * 14).tolist())) < 4
    assert n_ties > 0  # the tie-break was exercised


def test_knn_searches_a_seeded_subsample():
    rng = np.random.default_rng(7)
    X_train, X_test = rng.normal(size=(100, 2)), rng.normal(size=(15, 2))
    Y_train = _random_incomplete(100, 4, rng)
    model = KNNMallows(n_neighbors=1, max_train=30, random_state=11).fit(X_train, Y_train)
    idx = model.train_index_
    assert idx.size == 30 and np.unique(idx).size == 30 and np.all(np.diff(idx) > 0)
    Z_train, Z_test = _standardise(X_train, X_train), _standardise(X_train, X_test)
    central = -_brute_mean_positions(Y_train)  # the tie-break uses every training row
    pred = model.predict(X_test)
    for r in range(len(X_test)):
        nearest = idx[np.argmin(((Z_train[idx] - Z_test[r]) ** 2).sum(axis=1))]
        np.testing.assert_array_equal(pred[r], _complete_from(Y_train[nearest], central))
    again = KNNMallows(n_neighbors=1, max_train=30, random_state=11).fit(X_train, Y_train)
    np.testing.assert_array_equal(again.train_index_, idx)
    other = KNNMallows(n_neighbors=1, max_train=30, random_state=12).fit(X_train, Y_train)
    assert not np.array_equal(other.train_index_, idx)
    full = KNNMallows(n_neighbors=1, max_train=100).fit(X_train, Y_train)
    np.testing.assert_array_equal(full.train_index_, np.arange(100))


def test_knn_searches_the_papers_100000_users_by_default():
    # "for each user we search for nearest neighbors in a subsampled set of 100,000 users"
    rng = np.random.default_rng(3)
    n = 100_001
    X = rng.normal(size=(n, 1))
    Y = np.zeros((n, 3), dtype=np.int64)
    Y[:, 0] = 1
    model = KNNMallows(n_neighbors=1, random_state=0).fit(X, Y)
    assert model.train_index_.size == 100_000
    assert KNNMallows(n_neighbors=1).fit(X[:60_000], Y[:60_000]).train_index_.size == 60_000


# ----------------------------------------------------------------------- logistic models
def test_logistic_per_label_equals_sklearn_fitted_directly():
    X, Y3, _ = _world(300, d=3, L=3, top=2, seed=8)
    # Label 3 is ranked in every row (last), label 4 in none: both have one class.
    Y = np.column_stack([Y3, (Y3 > 0).sum(axis=1) + 1, np.zeros(300, dtype=np.int64)])
    model = LogisticPerLabel(C=0.5).fit(X, Y)
    X_test = np.random.default_rng(9).normal(size=(40, 3))
    Z, Z_test = _standardise(X, X), _standardise(X, X_test)
    proba = model.predict_proba(X_test)
    for j in range(3):
        clf = LogisticRegression(C=0.5).fit(Z, (Y[:, j] > 0).astype(int))
        np.testing.assert_allclose(proba[:, j], clf.predict_proba(Z_test)[:, 1], atol=1e-6)
    np.testing.assert_array_equal(proba[:, 3], 1.0)
    np.testing.assert_array_equal(proba[:, 4], 0.0)
    np.testing.assert_array_equal(model.decision_function(X_test), proba)


def _pair_known_and_target(ya, yb):
    """(known, a beats b) for one row, written out case by case."""
    if ya > 0 and yb > 0:
        return True, ya < yb
    if ya > 0 and yb == 0:
        return True, True
    if ya == 0 and yb > 0:
        return True, False
    return False, None


def test_pairwise_soft_votes_equal_direct_computation_three_labels():
    rng = np.random.default_rng(10)
    n = 150
    X = rng.normal(size=(n, 2))
    Y = np.zeros((n, 3), dtype=np.int64)
    for r in range(n):
        first, second = (0, 1) if X[r, 0] + 0.5 * rng.normal() > 0 else (1, 0)
        Y[r, first] = 1
        if rng.random() < 0.6:
            Y[r, second] = 2
        if Y[r, 1] > 0 and rng.random() < 0.5:  # label 2 only ever below label 1
            Y[r, 2] = (Y[r] > 0).sum() + 1
    model = PairwiseLogistic(C=2.0).fit(X, Y)
    X_test = rng.normal(size=(30, 2))
    Z, Z_test = _standardise(X, X), _standardise(X, X_test)
    P = {}
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        rows, target = [], []
        for r in range(n):
            known, wins = _pair_known_and_target(Y[r, a], Y[r, b])
            if known:
                rows.append(r)
                target.append(int(wins))
        if len(set(target)) == 1:
            P[a, b] = np.full(len(X_test), float(target[0]))
        else:
            clf = LogisticRegression(C=2.0).fit(Z[rows], target)
            P[a, b] = clf.predict_proba(Z_test)[:, 1]
    np.testing.assert_array_equal(P[1, 2], 1.0)  # the toy has a one-class pair
    votes = np.column_stack([P[0, 1] + P[0, 2],
                             (1 - P[0, 1]) + P[1, 2],
                             (1 - P[0, 2]) + (1 - P[1, 2])])
    np.testing.assert_allclose(model.decision_function(X_test), votes, atol=1e-6)
    np.testing.assert_array_equal(model.pairs_, [[0, 1], [0, 2], [1, 2]])
    np.testing.assert_array_equal(model.constant_[2], 1.0)


def test_pairwise_unknown_pair_is_one_half_and_one_class_pair_constant():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 2))
    Y = np.zeros((40, 4), dtype=np.int64)  # labels 2 and 3 never ranked
    first = X[:, 0] > 0
    Y[first, 0], Y[first, 1] = 1, 2
    Y[~first, 1], Y[~first, 0] = 1, 2
    model = PairwiseLogistic().fit(X, Y)
    const = {tuple(p): c for p, c in zip(model.pairs_.tolist(), model.constant_)}
    assert const[2, 3] == 0.5 and model.n_pair_rows_[-1] == 0
    for pair in [(0, 2), (0, 3), (1, 2), (1, 3)]:
        assert const[pair] == 1.0
    assert np.isnan(const[0, 1])
    # Labels 2 and 3 each collect 0 + 0 + 1/2.
    scores = model.decision_function(X)
    np.testing.assert_allclose(scores[:, 2:], 0.5)


def test_pairwise_row_cap_subsamples_each_pair():
    X, Y, _ = _world(300, d=3, L=4, seed=12)
    model = PairwiseLogistic(max_pairs_rows=50, random_state=0).fit(X, Y)
    known = [int(((Y[:, i] > 0) | (Y[:, j] > 0)).sum()) for i, j in model.pairs_]
    np.testing.assert_array_equal(model.n_pair_rows_, np.minimum(known, 50))
    full = PairwiseLogistic().fit(X, Y)
    np.testing.assert_array_equal(full.n_pair_rows_, known)


# ------------------------------------------------------------------ all the estimators
def _all_estimators(random_state=0):
    return [CentralMallows(random_state=random_state), GroupMallows(random_state=random_state),
            KNNMallows(n_neighbors=10, max_train=500, random_state=random_state),
            LogisticPerLabel(random_state=random_state),
            PairwiseLogistic(max_pairs_rows=400, random_state=random_state)]


def test_every_estimator_beats_central_when_preferences_depend_on_x():
    X, Y, groups = _world(1000, seed=13)
    train, test = slice(0, 700), slice(700, None)
    errors = {}
    for model in _all_estimators():
        model.fit(X[train], Y[train], groups=groups[train])
        pred = model.predict(X[test], groups=groups[test])
        errors[type(model).__name__] = _disagreement(Y[test], pred)
    central = errors.pop("CentralMallows")
    for name, err in errors.items():
        assert err < central - 0.02, (name, err, central)


def test_predictions_are_permutations():
    X, Y, groups = _world(300, seed=14)
    for model in _all_estimators():
        pred = model.fit(X, Y, groups=groups).predict(X[:50], groups=groups[:50])
        assert pred.shape == (50, Y.shape[1])
        np.testing.assert_array_equal(np.sort(pred, axis=1),
                                      np.tile(np.arange(1, Y.shape[1] + 1), (50, 1)))


def test_same_random_state_same_predictions():
    X, Y, groups = _world(800, seed=15)
    for first, second in zip(_all_estimators(3), _all_estimators(3)):
        a = first.fit(X, Y, groups=groups).decision_function(X[:100], groups=groups[:100])
        b = second.fit(X, Y, groups=groups).decision_function(X[:100], groups=groups[:100])
        np.testing.assert_array_equal(a, b)


def test_estimators_clone_with_their_params():
    for model in _all_estimators(5):
        assert clone(model).get_params() == model.get_params()
        assert model.get_params()["random_state"] == 5


@pytest.mark.parametrize("model, total", [(LogisticPerLabel(), 6),
                                          (PairwiseLogistic(), 15)])
def test_progress_reports_every_model_and_can_cancel(model, total):
    X, Y, _ = _world(150, seed=16)
    calls = []
    model.fit(X, Y, progress=lambda done, tot: calls.append((done, tot)))
    assert calls == [(k, total) for k in range(1, total + 1)]

    class Stop(Exception):
        pass

    def cancel(done, tot):
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        clone(model).fit(X, Y, progress=cancel)


# -------------------------------------------------------------------------- bad params
@pytest.mark.parametrize("model, match", [
    (KNNMallows(n_neighbors=0), "n_neighbors must be a positive integer; got 0"),
    (KNNMallows(n_neighbors=2.5), "n_neighbors must be a positive integer; got 2.5"),
    (KNNMallows(max_train=0), "max_train must be a positive integer; got 0"),
    (KNNMallows(n_neighbors=50),
     r"n_neighbors must be at most the number of training rows searched \(30\); got 50"),
    (KNNMallows(n_neighbors=20, max_train=10), r"searched \(10\); got 20"),
    (LogisticPerLabel(C=0), "C must be a positive number"),
    (LogisticPerLabel(C=True), "C must be a positive number"),
    (LogisticPerLabel(C=-1.0), "C must be a positive number"),
    (LogisticPerLabel(C="big"), "C must be a positive number"),
    (LogisticPerLabel(max_iter=0), "max_iter must be a positive integer; got 0"),
    (PairwiseLogistic(C=float("inf")), "C must be a positive number"),
    (PairwiseLogistic(max_iter=-3), "max_iter must be a positive integer; got -3"),
    (PairwiseLogistic(max_pairs_rows=0), "max_pairs_rows must be a positive integer; got 0"),
])
def test_bad_params_raise(model, match):
    X, Y, _ = _world(30, seed=17)
    with pytest.raises(ValueError, match=match):
        model.fit(X, Y)


def test_group_mallows_without_groups_is_central_mallows_and_warns():
    X, Y, _ = _world(40, seed=19)
    with pytest.warns(UserWarning, match="no groups"):
        grouped = GroupMallows(random_state=0).fit(X, Y).predict(X)
    np.testing.assert_array_equal(grouped, CentralMallows(random_state=0).fit(X, Y).predict(X))


@pytest.mark.parametrize("groups, missing", [
    (np.array([1.0, 1.0, np.nan, np.nan]), 2),
    (np.array(["f", None, "m", "m"], dtype=object), 1),
    (np.array(["f", "f", float("nan"), None], dtype=object), 2),
])
def test_group_mallows_refuses_missing_groups(groups, missing):
    # NaN raised a bare KeyError (NaN != NaN, so it keyed no group); None became a group
    X, Y = np.zeros((4, 1)), [[1, 2, 0], [1, 2, 0], [0, 1, 2], [0, 2, 1]]
    message = (rf"^groups must name a group for every row; got NaN or None \(missing\) in "
               rf"{missing} of 4\.$")
    with pytest.raises(ValueError, match=message):
        GroupMallows().fit(X, Y, groups=groups)
    model = GroupMallows().fit(X, Y, groups=["f", "f", "m", "m"])
    with pytest.raises(ValueError, match=message.replace("every row", "every row of X")):
        model.predict(X, groups=groups)
    with pytest.raises(ValueError, match=r"got NaN or None \(missing\) in 1 of 2"):
        CentralMallows().fit(X[:2], Y[:2], groups=[0.5, np.nan])  # checked for every model


@pytest.mark.parametrize("cls", [CentralMallows, GroupMallows, KNNMallows, LogisticPerLabel,
                                 PairwiseLogistic])
def test_unfitted_predict_raises_sklearn_not_fitted_error(cls):
    with pytest.raises(NotFittedError, match=rf"^This {cls.__name__} is not fitted yet: call "
                                             r"fit first\.$"):
        cls().predict(np.zeros((1, 2)))


def test_bad_predict_input_raises():
    X, Y, groups = _world(40, seed=18)
    with pytest.raises(ValueError, match="not fitted yet"):
        CentralMallows().predict(X)
    model = GroupMallows().fit(X, Y, groups=groups)
    with pytest.raises(ValueError, match=r"groups must have one value per row of X \(5\)"):
        model.predict(X[:5], groups=groups[:4])
    with pytest.raises(ValueError, match="X has 2 features"):
        model.predict(X[:, :2])
