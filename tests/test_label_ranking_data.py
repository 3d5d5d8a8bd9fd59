"""Tests for core.label_ranking.data: the container, the generators and the CSV reader.

Independent references: exact Mallows probabilities by enumerating permutations, the closed
form of the expected Kendall distance (Fligner and Verducci 1986), scipy.stats.kendalltau,
scikit-learn's GaussianNB fitted here, eqs. (13)–(14) read as properties of the features,
and hand-written CSV files.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from sklearn import datasets
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from core.label_ranking import data as D
from core.label_ranking._rankings import check_rankings, positions_from_scores


# ------------------------------------------------------------------ container and helpers
@pytest.mark.parametrize("scores, count, first", [
    ([[np.nan, 1.0, 0.0]], 1, "row 0, label 0 is nan"),
    ([[0.0, 1.0, 2.0], [np.inf, np.nan, 0.0]], 2, "row 1, label 0 is inf"),
    ([[0.0, -np.inf], [1.0, 2.0]], 1, "row 0, label 1 is -inf"),
])
def test_positions_from_scores_refuses_non_finite_scores(scores, count, first):
    # sorting put NaN last, a silent ranking of a label that has no score
    with pytest.raises(ValueError, match=rf"^scores must be finite; got {count} NaN or "
                                         rf"infinite value\(s\) \(the first: {first}\)\.$"):
        positions_from_scores(scores)


def test_positions_from_scores_highest_first_ties_to_lower_label():
    # written out by hand: row 0 ranks label 1 (0.9), 2 (0.5), 0 (0.1); row 1 ties all three
    assert positions_from_scores([[0.1, 0.9, 0.5], [2.0, 2.0, 2.0]]).tolist() == [
        [3, 1, 2], [1, 2, 3]]


def test_container_from_array_and_validation():
    d = D.LabelRankingData(X=np.zeros((2, 3)), Y=[[1, 0], [2, 1]], labels=["a", "b"])
    assert d.feature_names == ["x1", "x2", "x3"]
    assert d.Y.dtype == np.int64
    with pytest.raises(ValueError, match=r"Y must have one row per row of X \(3\); got 2"):
        D.LabelRankingData(X=np.zeros((3, 1)), Y=[[1, 0], [2, 1]], labels=["a", "b"])
    with pytest.raises(ValueError, match=r"labels must be 2 distinct names .*got 3"):
        D.LabelRankingData(X=np.zeros((2, 1)), Y=[[1, 0], [2, 1]], labels=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"labels must be 2 distinct names .*\(1 distinct\)"):
        D.LabelRankingData(X=np.zeros((2, 1)), Y=[[1, 0], [2, 1]], labels=["a", "a"])
    with pytest.raises(ValueError, match=r"groups must have one value per row \(2\)"):
        D.LabelRankingData(X=np.zeros((2, 1)), Y=[[1, 0], [2, 1]], labels=["a", "b"],
                           groups=["g"])
    with pytest.raises(ValueError, match=r"feature block 'adv' names columns that X does not "
                                         r"have: \['nope'\]"):
        D.LabelRankingData(X=np.zeros((2, 1)), Y=[[1, 0], [2, 1]], labels=["a", "b"],
                           feature_blocks={"adv": ["nope"]})
    with pytest.raises(ValueError, match=r"Y row 1: position 2 is given to two labels"):
        D.LabelRankingData(X=np.zeros((2, 1)), Y=[[1, 0], [2, 2]], labels=["a", "b"])
    with pytest.raises(ValueError, match=r"X must be finite"):
        D.LabelRankingData(X=pd.DataFrame({"f": [1.0, np.nan]}), Y=[[1, 0], [2, 1]],
                           labels=["a", "b"])


def test_without_drops_exactly_the_block():
    X = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0], "c": [5.0, 6.0]})
    d = D.LabelRankingData(X=X, Y=[[1, 0], [2, 1]], labels=["p", "q"],
                           feature_blocks={"one": ["a"], "two": ["b", "c"]})
    w = d.without("two")
    assert w.feature_names == ["a"] and list(w.feature_blocks) == ["one"]
    assert d.feature_names == ["a", "b", "c"]  # the original is untouched
    with pytest.raises(ValueError, match=r"block must be one of 'one', 'two'; got 'adv'"):
        d.without("adv")


def test_frequency_and_length_helpers_hand_worked():
    Y = [[1, 2, 0, 0], [0, 1, 0, 0], [3, 1, 2, 0]]
    assert D.label_frequencies(Y).tolist() == [2, 3, 1, 0]
    assert D.ranking_lengths(Y).tolist() == [0, 1, 1, 1, 0]


# ------------------------------------------------------------------ ad clicks
@pytest.fixture(scope="module")
def clicks():
    return D.make_ad_clicks(3000, 12, random_state=4)


def test_ad_clicks_reproducible_and_seed_dependent():
    a = D.make_ad_clicks(400, 8, random_state=11)
    b = D.make_ad_clicks(400, 8, random_state=11)
    c = D.make_ad_clicks(400, 8, random_state=12)
    pd.testing.assert_frame_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    np.testing.assert_array_equal(a.groups, b.groups)
    assert not np.array_equal(a.Y, c.Y)


def test_ad_clicks_fewer_users_are_a_prefix_of_more():
    small = D.make_ad_clicks(300, 8, random_state=5)
    large = D.make_ad_clicks(5000, 8, random_state=5)  # two simulation batches
    pd.testing.assert_frame_equal(small.X, large.X.iloc[:300])
    np.testing.assert_array_equal(small.Y, large.Y[:300])


def test_ad_clicks_shapes_validity_and_kept_users(clicks):
    L = 12
    assert clicks.Y.shape == (3000, L)
    check_rankings(clicks.Y, n_labels=L)
    assert clicks.X.shape == (3000, 11 + 8 * L + 2 * L)
    assert np.isfinite(clicks.X.to_numpy()).all()
    assert ((clicks.Y > 0).sum(axis=1) > 2).all()  # only users who clicked > 2 categories
    assert clicks.labels == list(D.AD_CATEGORIES[:L])
    # blocks partition the columns
    cols = [c for block in clicks.feature_blocks.values() for c in block]
    assert sorted(cols) == sorted(clicks.feature_names) and len(cols) == len(set(cols))
    assert set(clicks.feature_blocks) == {"demographics", "pv", "sq", "slc", "olc", "adv"}


def test_paper_dimensions_at_fifty_labels():
    with_adv = D.make_ad_clicks(50, 50, random_state=0)
    without = D.make_ad_clicks(50, 50, with_ad_views=False, random_state=0)
    assert (without.X.shape[1], with_adv.X.shape[1]) == (411, 511)  # the paper's d


def test_groups_match_the_one_hots(clicks):
    X = clicks.X
    assert sorted(set(clicks.groups)) == sorted(
        f"{g} {a}" for g in "FM" for a in D.AGE_BUCKETS if f"{g} {a}" in set(clicks.groups))
    assert len(set(clicks.groups)) == 18
    for r in range(0, 3000, 97):
        gender, age = clicks.groups[r].split(" ")
        assert X.loc[r, f"gender_{gender}"] == 1 and X.loc[r, f"age_{age}"] == 1
    assert (X.filter(like="age_").sum(axis=1) == 1).all()
    assert (X[["gender_F", "gender_M"]].sum(axis=1) == 1).all()


def test_with_ad_views_adds_exactly_the_adv_block():
    a = D.make_ad_clicks(500, 10, with_ad_views=True, random_state=2)
    b = D.make_ad_clicks(500, 10, with_ad_views=False, random_state=2)
    extra = set(a.feature_names) - set(b.feature_names)
    assert extra == set(a.feature_blocks["adv"]) and len(extra) == 2 * 10
    assert all(c.startswith("adv_") for c in extra)
    assert set(b.feature_names) <= set(a.feature_names) and "adv" not in b.feature_blocks
    pd.testing.assert_frame_equal(a.X[b.feature_names], b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    pd.testing.assert_frame_equal(a.without("adv").X, b.X)


def test_intensity_and_recency_follow_eqs_13_and_14(clicks):
    # eq. (14): recency = weeks since the last event (13 = none in the window); eq. (13): the
    # last event alone contributes α^recency, so intensity ≥ 0.8^recency when there is one.
    for g in ("pv", "sq", "slc", "olc", "adv"):
        for lab in clicks.labels[:4]:
            inten = clicks.X[f"{g}_intensity[{lab}]"].to_numpy()
            rec = clicks.X[f"{g}_recency[{lab}]"].to_numpy()
            assert ((rec >= 0) & (rec <= 13)).all() and (inten >= 0).all()
            has = inten > 0
            np.testing.assert_array_equal(has, rec < 13)
            assert (inten[has] >= 0.8 ** rec[has] - 1e-12).all()


def test_label_popularity_and_lengths_look_like_figure_1():
    d = D.make_ad_clicks(5000, 50, random_state=0)
    freq = D.label_frequencies(d.Y)
    assert freq.max() >= 5 * freq.min()  # a skewed label popularity
    rho = pd.Series(freq).corr(pd.Series(np.arange(50)), method="spearman")
    assert rho < -0.6  # the listed order is (mostly) the popularity order
    lengths = D.ranking_lengths(d.Y)
    assert lengths[:3].sum() == 0
    assert lengths[3:11].sum() / lengths.sum() > 0.95  # L_t mostly 3–10
    assert lengths.argmax() == 3


def test_ad_views_carry_information():
    # The paper's "with adv" gain: a per-label logistic model is more accurate with ad views.
    from core.label_ranking._rankings import positions_from_scores
    from core.label_ranking.metrics import disagreement_error

    d = D.make_ad_clicks(4000, 8, random_state=9)

    def error(data):
        X = data.X.to_numpy()
        X = np.where([("intensity" in c) for c in data.feature_names], np.log1p(X), X)
        X = (X - X[:3000].mean(0)) / (X[:3000].std(0) + 1e-9)
        S = np.column_stack([
            LogisticRegression(max_iter=500).fit(X[:3000], data.Y[:3000, j] > 0)
            .decision_function(X[3000:]) for j in range(8)])
        return disagreement_error(data.Y[3000:], positions_from_scores(S))

    assert error(d) < error(d.without("adv")) - 0.02


def test_oracle_interest_beats_popularity():
    from core.label_ranking._rankings import positions_from_scores
    from core.label_ranking.metrics import disagreement_error

    d = D.make_ad_clicks(3000, 15, random_state=1)
    oracle = disagreement_error(d.Y, positions_from_scores(d.truth["expected_clicks"]))
    popular = positions_from_scores(np.tile(-np.arange(15.0), (3000, 1)))
    assert oracle < disagreement_error(d.Y, popular) - 0.05


def test_nonlinearity_changes_the_rankings():
    a = D.make_ad_clicks(500, 10, nonlinearity=0.0, random_state=3)
    b = D.make_ad_clicks(500, 10, nonlinearity=1.0, random_state=3)
    assert not np.array_equal(a.Y, b.Y)


@pytest.mark.parametrize("kwargs, message", [
    ({"n_labels": 4}, r"n_labels must be an integer in 5 … 50; got 4"),
    ({"n_labels": 51}, r"n_labels must be an integer in 5 … 50; got 51"),
    ({"nonlinearity": 1.5}, r"nonlinearity must be a number in \[0, 1\]; got 1.5"),
    ({"n_users": 0}, r"n_users must be an integer >= 1; got 0"),
    ({"with_ad_views": "yes"}, r"with_ad_views must be True or False; got 'yes'"),
    ({"random_state": "seed"}, r"random_state must be None, an integer >= 0"),
])
def test_ad_clicks_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        D.make_ad_clicks(**{"n_users": 10, **kwargs})


# ------------------------------------------------------------------ scikit-learn sets
@pytest.mark.parametrize("name, shape", [("iris", (150, 3)), ("wine", (178, 3)),
                                         ("digits", (1797, 10))])
def test_from_sklearn_complete_and_top_label_is_naive_bayes_argmax(name, shape):
    d = D.from_sklearn(name, random_state=0)
    assert d.Y.shape == shape
    check_rankings(d.Y, allow_empty_rows=False)
    assert (d.Y > 0).all()  # complete
    bunch = getattr(datasets, f"load_{name}")()
    nb = GaussianNB().fit(bunch.data, bunch.target)
    top = np.argmax(d.Y == 1, axis=1)
    np.testing.assert_array_equal(top, nb.predict(d.X.to_numpy()))
    assert d.labels == [str(c) for c in bunch.target_names]
    assert d.feature_names == list(bunch.feature_names)


def test_from_sklearn_full_order_follows_posterior():
    d = D.from_sklearn("iris", random_state=0)
    bunch = datasets.load_iris()
    proba = GaussianNB().fit(bunch.data, bunch.target).predict_proba(d.X.to_numpy())
    for r in range(0, 150, 7):
        if len(set(proba[r])) == 3:  # no tied posteriors
            expected = [int(np.sum(proba[r] > p)) + 1 for p in proba[r]]
            assert d.Y[r].tolist() == expected


def test_from_sklearn_seed_only_shuffles_rows():
    a, b = D.from_sklearn("wine", random_state=0), D.from_sklearn("wine", random_state=1)
    assert not np.array_equal(a.X.to_numpy(), b.X.to_numpy())
    rows = lambda d: sorted(map(tuple, np.column_stack([d.X.to_numpy(), d.Y]).tolist()))
    assert rows(a) == rows(b)
    pd.testing.assert_frame_equal(a.X, D.from_sklearn("wine", random_state=0).X)


def test_from_sklearn_bad_name():
    with pytest.raises(ValueError, match=r"name must be one of 'iris', 'wine', 'digits'; "
                                         r"got 'mnist'"):
        D.from_sklearn("mnist")


# ------------------------------------------------------------------ Mallows mixture
def kendall_distance(a, b):
    """Discordant pairs between two complete position vectors, from scipy's τ."""
    L = len(a)
    return round((1 - kendalltau(a, b).statistic) / 2 * L * (L - 1) / 2)


def test_mallows_matches_exact_probabilities_by_enumeration():
    L, theta, n = 4, 0.7, 60_000
    d = D.make_mallows_mixture(n, L, n_components=1, theta=theta, random_state=0)
    centre = d.truth["centres"][0]
    perms = list(itertools.permutations(range(1, L + 1)))
    weights = np.array([math.exp(-theta * kendall_distance(p, centre)) for p in perms])
    expected = weights / weights.sum()
    index = {p: i for i, p in enumerate(perms)}
    counts = np.bincount([index[tuple(row)] for row in d.Y.tolist()], minlength=len(perms))
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(counts / n - expected) < 4.5 * se)


@pytest.mark.parametrize("theta", [0.2, 0.8, 2.0])
def test_mallows_mean_distance_matches_closed_form(theta):
    L, n = 8, 20_000
    d = D.make_mallows_mixture(n, L, n_components=1, theta=theta, random_state=1)
    centre = d.truth["centres"][0]
    dist = np.array([kendall_distance(row, centre) for row in d.Y[:4000]])
    phi = math.exp(-theta)
    expected = L * phi / (1 - phi) - sum(j * phi**j / (1 - phi**j) for j in range(1, L + 1))
    assert abs(dist.mean() - expected) < 4 * dist.std() / math.sqrt(len(dist))


def test_mallows_large_theta_concentrates_on_its_centre():
    def mean_normalised_distance(theta):
        d = D.make_mallows_mixture(1500, 10, n_components=3, theta=theta, random_state=2)
        centres = d.truth["centres"][d.truth["component"]]
        return np.mean([kendall_distance(y, c) for y, c in zip(d.Y, centres)]) / 45

    tight, loose = mean_normalised_distance(3.0), mean_normalised_distance(0.05)
    assert tight < 0.02 and loose > 0.4


def test_mallows_components_depend_on_features():
    d = D.make_mallows_mixture(4000, 6, n_components=3, random_state=3)
    z = d.truth["component"]
    assert len(set(z.tolist())) == 3
    acc = LogisticRegression(max_iter=500).fit(d.X[:3000], z[:3000]).score(d.X[3000:], z[3000:])
    assert acc > 0.7  # chance is at most the largest share


def test_mallows_top_k_truncates_the_same_rankings():
    full = D.make_mallows_mixture(500, 7, top_k=None, random_state=4)
    top3 = D.make_mallows_mixture(500, 7, top_k=3, random_state=4)
    check_rankings(top3.Y)
    assert ((top3.Y > 0).sum(axis=1) == 3).all()
    np.testing.assert_array_equal(top3.Y, np.where(full.Y <= 3, full.Y, 0))
    np.testing.assert_array_equal(D.make_mallows_mixture(500, 7, top_k=9, random_state=4).Y,
                                  full.Y)  # k ≥ L keeps complete rankings
    pd.testing.assert_frame_equal(full.X, top3.X)


def test_mallows_reproducible():
    a = D.make_mallows_mixture(300, 5, random_state=8)
    b = D.make_mallows_mixture(300, 5, random_state=8)
    np.testing.assert_array_equal(a.Y, b.Y)
    pd.testing.assert_frame_equal(a.X, b.X)
    assert a.X.shape == (300, 5) and a.labels == ["L1", "L2", "L3", "L4", "L5"]


@pytest.mark.parametrize("kwargs, message", [
    ({"theta": -1}, r"theta must be a number >= 0; got -1"),
    ({"theta": "x"}, r"theta must be a number >= 0; got 'x'"),
    ({"n_components": 0}, r"n_components must be an integer >= 1; got 0"),
    ({"top_k": 0}, r"top_k must be an integer >= 1; got 0"),
    ({"n_labels": 1}, r"n_labels must be an integer >= 2; got 1"),
    ({"n_features": 0}, r"n_features must be an integer >= 1; got 0"),
])
def test_mallows_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        D.make_mallows_mixture(10, **{"n_labels": 4, **kwargs})


# ------------------------------------------------------------------ CSV
def csv(text: str) -> bytes:
    return text.encode()


def test_csv_ranking_column():
    d = D.read_rankings_csv(csv("age,income,ranking,segment\n"
                                "31,2.5,sports>news,A\n"
                                "45,1.0,,B\n"
                                "22,3.0,autos>sports>news,A\n"),
                            ranking_column="ranking", group_column="segment")
    assert d.labels == ["autos", "news", "sports"]
    assert d.Y.tolist() == [[0, 2, 1], [0, 0, 0], [1, 3, 2]]
    assert d.feature_names == ["age", "income"]
    assert d.X.to_numpy().tolist() == [[31, 2.5], [45, 1.0], [22, 3.0]]
    assert d.groups.tolist() == ["A", "B", "A"]
    assert d.warnings == ["1 row(s) rank no label (left out of the metrics)."]


def test_csv_ranking_column_with_given_labels_and_separator():
    d = D.read_rankings_csv(csv("x,r\n1,b|a\n2,c\n"), ranking_column="r",
                            labels=["c", "b", "a", "d"], separator="|")
    assert d.labels == ["c", "b", "a", "d"]
    assert d.Y.tolist() == [[0, 1, 2, 0], [1, 0, 0, 0]]


def test_csv_ranking_column_found_by_name_and_semicolons():
    d = D.read_rankings_csv(csv("x;ranking\n1,5;a>b\n2,5;b\n"))
    assert d.Y.tolist() == [[1, 2], [0, 1]]
    assert d.X["x"].tolist() == [1.5, 2.5]


def test_csv_position_columns():
    d = D.read_rankings_csv(csv("f,a,b,c\n0.5,2,1,\n1.5,0,0,1\n"),
                            position_columns=["a", "b", "c"])
    assert d.labels == ["a", "b", "c"]
    assert d.Y.tolist() == [[2, 1, 0], [0, 0, 1]]
    assert d.feature_names == ["f"]


def test_csv_position_columns_found_by_prefix():
    d = D.read_rankings_csv(csv("f,pos_news,pos_sports\n1,1,2\n2,,1\n"))
    assert d.labels == ["news", "sports"]
    assert d.Y.tolist() == [[1, 2], [0, 1]]


@pytest.mark.parametrize("text, kwargs, message", [
    ("x,ranking\n1,a>b\n2,b>a>b\n", {}, (r"Data row 2: label 'b' appears twice in the ranking "
                                        r"'b>a>b'")),
    ("x,ranking\n1,a>b\n2,a\n3,a>zz\n", {"labels": ["a", "b"]},
     r"Data row 3: unknown label 'zz' \(labels: a, b\)"),
    ("x,ranking\n1,a>>b\n", {}, (r"Data row 1: the ranking 'a>>b' in column 'ranking' has an "
                                r"empty label")),
    ("x,ranking\n1,\n2,\n", {}, r"Every ranking is empty: no row of column 'ranking'"),
    ("x,ranking\n1,a\n2,a\n", {}, r"The rankings name only one label \('a'\)"),
    ("x,a,b\n1,1,2\n2,3,1\n", {"position_columns": ["a", "b"]},
     r"Data row 2: position 3 of label 'a' is out of range 0 … 2"),
    ("x,a,b,c\n1,1,2,0\n2,1,3,0\n", {"position_columns": ["a", "b", "c"]},
     r"Data row 2: positions \[1, 3\] skip 2 \(the 2 ranked labels must take positions 1 … 2\)"),
    ("x,a,b,c\n1,1,1,0\n", {"position_columns": ["a", "b", "c"]},
     r"Data row 1: position 1 is given to two labels \('a' and 'b'\)"),
    ("x,a,b\n1,1,x\n", {"position_columns": ["a", "b"]},
     r"Data row 1, column 'b': 'x' is not a position"),
    ("x,a,b\n1,1,2\n1,1.5,0\n", {"position_columns": ["a", "b"]},
     r"Data row 2, column 'a': 1.5 is not a whole-number position"),
    ("x,a,b\n1,0,\n2,,0\n", {"position_columns": ["a", "b"]},
     r"Every ranking is empty: no row gives any label a position"),
    ("x,city,ranking\n1,Rome,a>b\n2,Oslo,b\n", {}, (r"Feature column 'city' is not numeric: "
                                                   r"data row 1 holds 'Rome'")),
    ("x,y,ranking\n1,2,a>b\n2,3,b\n3,five,a\n", {}, (r"Feature column 'y' is not numeric: data "
                                                    r"row 3 holds 'five'")),
    ("x,ranking\n1,a>b\n,b\n", {}, r"Feature column 'x' has no value in data row 2"),
    ("x,ranking\n1,a>b\n", {"ranking_column": "rank"},
     r"Ranking column 'rank' not found; the columns are: 'x', 'ranking'"),
    ("x,a\n1,1\n", {"position_columns": ["a", "b"]}, r"Position column\(s\) \['b'\] not found"),
    ("x,y\n1,2\n", {},
     r"No rankings found: the file needs a column named 'ranking' .* 'pos_<label>' column"),
    ("x,ranking\n1,a>b\n", {"group_column": "seg"}, r"Group column 'seg' not found"),
    ("x,seg,ranking\n1,A,a>b\n2,,b\n", {"group_column": "seg"},
     r"Group column 'seg' is empty in data row 2"),
    ("ranking,seg\na>b,A\n", {"group_column": "seg"}, r"The CSV has no feature columns"),
    ("", {}, r"The file is empty"),
])
def test_csv_errors(text, kwargs, message):
    with pytest.raises(ValueError, match=message):
        D.read_rankings_csv(csv(text), **kwargs)


def test_csv_ranking_and_position_columns_together():
    with pytest.raises(ValueError, match=r"Give either ranking_column or position_columns"):
        D.read_rankings_csv(csv("x,ranking\n1,a\n"), ranking_column="ranking",
                            position_columns=["a"])


# ------------------------------------------------------------------ QA findings (uploads)
def test_fingerprint_covers_groups_and_label_names():
    # a result cached under features + rankings only came back for other groups (AG-Mal)
    plain = D.read_rankings_csv(csv("x,ranking\n1,a>b\n2,b\n3,a\n"))
    again = D.read_rankings_csv(csv("x,ranking\n1,a>b\n2,b\n3,a\n"))
    seg = D.read_rankings_csv(csv("x,seg,ranking\n1,A,a>b\n2,B,b\n3,A,a\n"),
                              group_column="seg")
    assert seg.X.equals(plain.X) and (seg.Y == plain.Y).all()  # only the groups differ
    assert plain.fingerprint() == again.fingerprint()  # same file: same key
    assert plain.fingerprint() != seg.fingerprint()  # a group column set (or cleared)
    regrouped = D.LabelRankingData(X=seg.X, Y=seg.Y, labels=seg.labels, groups=["A", "A", "B"])
    assert regrouped.fingerprint() != seg.fingerprint()  # other groups
    renamed = D.LabelRankingData(X=plain.X, Y=plain.Y, labels=["news", "sports"])
    assert renamed.fingerprint() != plain.fingerprint()  # other label names
    assert len(plain.fingerprint()) == 16 and int(plain.fingerprint(), 16) >= 0


@pytest.mark.parametrize("column", ["ranking", "pos_a"])
def test_group_column_cannot_be_the_rankings(column):
    # groups read from the rankings leak the answer: AG-Mal then looks perfect
    text = ("x,ranking\n1,a>b\n2,b>a\n" if column == "ranking"
            else "x,pos_a,pos_b\n1,1,2\n2,2,1\n")
    what = "ranking column" if column == "ranking" else "a position column"
    with pytest.raises(ValueError, match=rf"The group column cannot be the {what} "
                                         rf"\('{column}'\)"):
        D.read_rankings_csv(csv(text), group_column=column)


@pytest.mark.parametrize("cells, sep", [
    (["autos|sports|news", "sports|autos", "sports", "autos"], "|"),
    (['"news,sports"', '"sports,news,autos"', "news", "autos"], ","),
    (["news;sports", "sports;news", "news", "autos;news"], ";"),
    (["news/sports", "sports/news", "autos", "news"], "/"),
])
def test_other_separator_is_named_not_read_as_one_label(cells, sep):
    # every row then "ranks one label" (e.g. 'autos|sports|news'): silently wrong data
    text = "x,ranking\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cells))
    with pytest.raises(ValueError, match=(rf"Column 'ranking' seems to join labels with "
                                          rf"'\{sep}' .*Write each ranking with '>'")):
        D.read_rankings_csv(csv(text))


def test_one_label_with_another_separator_gets_the_same_hint():
    text = "x,ranking\n" + "".join(f'{i},"news,sports,autos"\n' for i in range(5))
    with pytest.raises(ValueError, match=(r"only one label \('news,sports,autos'\).* seems to "
                                          r"join labels with ',' .*with '>'")):
        D.read_rankings_csv(csv(text))


def test_single_labels_that_merely_contain_a_slash_are_read():
    # one category per user, names with '/' that never recur as pieces: a valid top-1 upload
    d = D.read_rankings_csv(csv("x,ranking\n1,Retail/Apparel\n2,Travel/Air\n"
                                "3,Retail/Home\n4,Travel/Air\n"))
    assert d.labels == ["Retail/Apparel", "Retail/Home", "Travel/Air"]
    assert d.Y.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1]]


def test_missing_ranking_column_points_to_the_position_columns():
    with pytest.raises(ValueError, match=(r"Ranking column 'ranking' not found.* position "
                                          r"columns \(pos_a, pos_b\): leave the ranking "
                                          r"column empty")):
        D.read_rankings_csv(csv("x,pos_a,pos_b\n1,1,2\n"), ranking_column="ranking")


def test_labels_found_sort_numbers_by_value():
    # 'L10' before 'L2' made a 12-label axis read L1, L10, L11, L12, L2 …
    cells = ">".join(f"L{j}" for j in (12, 3, 1, 10, 2))
    d = D.read_rankings_csv(csv(f"x,ranking\n1,{cells}\n2,L2>L1\n"))
    assert d.labels == ["L1", "L2", "L3", "L10", "L12"]
    assert d.Y[0].tolist() == [3, 5, 2, 4, 1]


def test_read_warnings_are_kept_for_the_page():
    d = D.read_rankings_csv("x,ranking\n1,café>news\n2,news\n3,\n".encode("latin-1"))
    assert d.labels == ["café", "news"]
    assert any("Latin-1" in w for w in d.warnings)
    assert "1 row(s) rank no label (left out of the metrics)." in d.warnings


def test_a_one_column_file_is_told_what_a_label_ranking_file_needs():
    from core.data import DataError
    from core.label_ranking.data import read_rankings_csv

    with pytest.raises(DataError) as err:
        read_rankings_csv(b"ranking\nnews>sports\nsports>news\n")
    assert str(err.value).endswith("A label-ranking file needs feature columns and a ranking "
                                   "column (or one position column per label).")


def test_the_upload_description_counts_in_words():
    from core.label_ranking.data import read_rankings_csv

    one = read_rankings_csv(b"age,ranking\n31,news>sports\n")
    assert one.description.startswith("Uploaded CSV: 1 row, 1 feature, 2 labels")
    two = read_rankings_csv(b"age,income,ranking\n31,2,news>sports\n40,3,sports>news\n")
    assert two.description.startswith("Uploaded CSV: 2 rows, 2 features, 2 labels")


def test_labels_differing_only_in_case_are_pointed_out():
    from core.label_ranking.data import read_rankings_csv

    d = read_rankings_csv(b"age,ranking\n31,News>sports\n40,news>Sports\n52,autos>news\n")
    assert sorted(d.labels) == ["News", "Sports", "autos", "news", "sports"]
    assert any("differ only in upper / lower case" in w and "'News' and 'news'" in w
               and "'Sports' and 'sports'" in w for w in d.warnings)
    clean = read_rankings_csv(b"age,ranking\n31,news>sports\n40,sports>news\n")
    assert not any("lower case" in w for w in clean.warnings)
