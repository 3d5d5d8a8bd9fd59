"""Tests for core.evaluation.metrics / core.evaluation.auc_metrics against independent references.

References: slow pure-Python versions written with explicit loops over positions and pairs,
scikit-learn, the papers' worked examples and hand-computed values — never the code under
test.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    average_precision_score,
    dcg_score,
    ndcg_score,
    roc_auc_score,
)

from core._validation import UndefinedMetricWarning
from core.evaluation import curves
from core.evaluation import metrics as M
from core.evaluation.per_query import per_query_metrics

NAN = float("nan")


# ------------------------------------------------------------------ brute-force references
def bf_queries(rel, score, group):
    """{query id: relevance list in ranked order}; stable descending sort by score."""
    rows = defaultdict(list)
    for i in range(len(rel)):
        rows[0 if group is None else group[i]].append(i)
    out = {}
    for q, idx in rows.items():
        ranked = sorted(idx, key=lambda i: -score[i])  # Python's sort is stable
        out[q] = ([float(rel[i]) for i in ranked], [float(score[i]) for i in ranked])
    return out


def bf_mean(values):
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else NAN


def bf_cut(n, k):
    return n if k is None else min(n, k)


def bf_precision(r, k):
    kk = bf_cut(len(r), k)
    return sum(1 for i in range(kk) if r[i] > 0) / kk


def bf_ap(r, k):
    n_rel = sum(1 for x in r if x > 0)
    if n_rel == 0:
        return None
    total, seen = 0.0, 0
    for i in range(bf_cut(len(r), k)):
        if r[i] > 0:
            seen += 1
            total += seen / (i + 1)
    return total / n_rel


def bf_cg(r, k):
    return sum(r[i] for i in range(bf_cut(len(r), k)))


def bf_dcg(r, k, exp=False):
    total = 0.0
    for i in range(bf_cut(len(r), k)):
        gain = 2.0 ** r[i] - 1.0 if exp else r[i]
        total += gain / math.log2(i + 2)
    return total


def bf_ndcg(r, k, exp=False):
    ideal = bf_dcg(sorted(r, reverse=True), k, exp)
    return None if ideal <= 0 else bf_dcg(r, k, exp) / ideal


def bf_pcg(r, k):
    n = len(r)
    return sum(r[i] * (n - (i + 1) + 1) for i in range(bf_cut(n, k)))


def bf_pcg_cutoff(r, k):
    kk = bf_cut(len(r), k)
    return sum(r[i] * (kk - (i + 1) + 1) for i in range(kk))


def bf_auc_pairs(pos, s):
    """WMW by explicit pairs; pos: list of bools."""
    p = [s[i] for i in range(len(s)) if pos[i]]
    q = [s[i] for i in range(len(s)) if not pos[i]]
    if not p or not q:
        return None
    wins = 0.0
    for a in p:
        for b in q:
            wins += 1.0 if a > b else 0.5 if a == b else 0.0
    return wins / (len(p) * len(q))


def bf_auc(r, s):
    return bf_auc_pairs([x > 0 for x in r], s)


def bf_mauc(r, s):
    classes = sorted({x for x in r if x > 0})
    n_rel = sum(1 for x in r if x > 0)
    if n_rel == 0:
        return None
    total = 0.0
    for c in classes:
        a = bf_auc_pairs([x == c for x in r], s)
        if a is None:
            return None
        total += sum(1 for x in r if x == c) / n_rel * a
    return total


def bf_list_metric(name, rel, score, group, k):
    queries = bf_queries(rel, score, group)
    if name in ("precision_micro", "precision_macro"):
        n_cls = len({float(x) for x in rel if x > 0})
        if n_cls == 0:
            return NAN
        hits = {
            q: sum(1 for i in range(bf_cut(len(r), k)) if r[i] > 0)
            for q, (r, _) in queries.items()
        }
        cuts = {q: bf_cut(len(r), k) for q, (r, _) in queries.items()}
        if name == "precision_micro":  # eq. 2: per query pooled over classes, mean over queries
            return bf_mean([hits[q] / (n_cls * cuts[q]) for q in queries])
        per_class = []  # eq. 4: per class pooled over queries, mean over classes
        for c in sorted({float(x) for x in rel if x > 0}):
            tp = sum(sum(1 for i in range(cuts[q]) if r[i] == c) for q, (r, _) in queries.items())
            per_class.append(tp / sum(cuts.values()))
        return sum(per_class) / n_cls
    fn = {
        "precision_at_k": bf_precision,
        "average_precision": bf_ap,
        "cg": bf_cg,
        "dcg": bf_dcg,
        "dcg_exp": lambda r, k: bf_dcg(r, k, exp=True),
        "ndcg": bf_ndcg,
        "ndcg_exp": lambda r, k: bf_ndcg(r, k, exp=True),
        "pcg": bf_pcg,
        "pcg_cutoff": bf_pcg_cutoff,
        "auc": lambda r, k, s: bf_auc(r, s),
        "mauc": lambda r, k, s: bf_mauc(r, s),
    }[name]
    if name in ("auc", "mauc"):
        return bf_mean([fn(r, k, s) for r, s in queries.values()])
    return bf_mean([fn(r, k) for r, _ in queries.values()])


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return f(*args, **kwargs)


def random_case(rng, kind):
    n = int(rng.integers(1, 13))
    score = rng.integers(0, 4, n).astype(float)  # few values: many ties
    if kind == "graded":
        rel = rng.integers(0, 4, n).astype(float)
    elif kind == "negative":
        rel = rng.integers(-2, 3, n).astype(float)
    elif kind == "fractional":
        rel = np.round(rng.normal(0.3, 1.0, n), 3)
    else:  # Rel uplift labels
        rel = M.relevance_labels(rng.integers(0, 2, n), rng.integers(0, 2, n), labels="rel")
    group = None if rng.random() < 0.4 else rng.integers(0, 3, n)
    k = None if rng.random() < 0.3 else int(rng.integers(1, 7))
    return rel, score, group, k


ALL_METRICS = {**M.METRICS, **M.WHOLE_LIST_METRICS}


# ---------------------------------------------------------------------- relevance labels
def test_relevance_labels_table():
    # rows: TR, TNR, CR, CNR, TR, CNR, CNR  -> |T| = 3, |C| = 4
    y = [1, 0, 1, 0, 1, 0, 0]
    t = [1, 1, 0, 0, 1, 0, 0]
    expected = {
        "abs1": [1, 0, 0, 1, 1, 1, 1],
        "abs2": [1, 0, -1, 0, 1, 0, 0],
        "abs3": [3, 1, 0, 2, 3, 2, 2],
        "rel": [1 / 3, 0, -1 / 4, 0, 1 / 3, 0, 0],
    }
    assert set(M.LABEL_SETS) == set(expected)
    for name, values in expected.items():
        out = M.relevance_labels(y, t, labels=name)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, values)


def test_relevance_labels_rel_uses_rows_passed_and_one_arm_is_fine():
    out = M.relevance_labels([1, 0, 1], [1, 1, 1], labels="rel")  # no control row at all
    np.testing.assert_allclose(out, [1 / 3, 0, 1 / 3])
    out = M.relevance_labels([True, False], [False, False], labels="rel")
    np.testing.assert_allclose(out, [-1 / 2, 0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": [1, 0], "t": [1, 0], "labels": "abs4"}, r"labels must be one of 'abs1'.*got 'abs4'"),
        ({"y": [1, 2], "t": [1, 0], "labels": "rel"}, r"y must hold only 0 and 1; got .*\[1, 2"),
        ({"y": [1, 0], "t": [1, 0, 1], "labels": "rel"}, r"t must have the same length as y \(2"),
    ],
)
def test_relevance_labels_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        M.relevance_labels(kwargs.pop("y"), kwargs.pop("t"), **kwargs)


# ---------------------------------------------------------------- brute force, all metrics
@pytest.mark.parametrize("kind", ["graded", "negative", "fractional", "rel"])
def test_every_metric_matches_brute_force(kind):
    rng = np.random.default_rng(hash(kind) % 2**32)
    for _ in range(120):
        rel, score, group, k = random_case(rng, kind)
        for name, f in ALL_METRICS.items():
            kw = {"group": group} if name in M.WHOLE_LIST_METRICS else {"group": group, "k": k}
            got = quiet(f, rel, score, **kw)
            want = bf_list_metric(name, rel, score, group, k)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


def test_string_and_non_contiguous_group_ids():
    rel = np.array([1, 0, 2, 0, 1, 3, 0])
    score = np.array([0.1, 0.9, 0.3, 0.2, 0.8, 0.4, 0.5])
    group = np.array(["b", "a", "b", "a", "c", "b", "a"])
    codes = np.array([1, 0, 1, 0, 2, 1, 0])
    for name, f in M.METRICS.items():
        assert quiet(f, rel, score, group=group, k=2) == pytest.approx(
            quiet(f, rel, score, group=codes, k=2)
        ), name


def test_object_group_ids_from_pandas():
    rel, score = [1, 0, 2, 1], [1.0, 2.0, 3.0, 4.0]
    got = M.dcg(rel, score, group=pd.Series(["a", "b", "a", "b"]))
    assert got == pytest.approx(M.dcg(rel, score, group=[0, 1, 0, 1]))
    with pytest.raises(ValueError, match="group must hold numbers or strings of one kind"):
        M.dcg(rel, score, group=np.array(["a", "b", "a", 1], dtype=object))
    with pytest.raises(ValueError, match=r"group must not contain NaN \(or None\)"):
        M.dcg(rel, score, group=np.array(["a", None, "a", 1], dtype=object))


# --------------------------------------------------------------------------- scikit-learn
def test_auc_matches_sklearn_with_ties():
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        y = rng.integers(0, 2, n)
        if y.min() == y.max():
            continue
        s = rng.integers(0, 5, n)  # heavy ties
        assert M.auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_mauc_matches_sklearn_per_class():
    rng = np.random.default_rng(2)
    for _ in range(30):
        y = rng.integers(0, 4, 60)
        s = rng.normal(size=60).round(1)
        classes = [c for c in np.unique(y) if c > 0]
        n_rel = (y > 0).sum()
        want = sum((y == c).sum() / n_rel * roc_auc_score(y == c, s) for c in classes)
        assert M.mauc(y, s) == pytest.approx(want, abs=1e-12)


def test_mauc_equals_auc_for_binary_relevance():
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 50), rng.normal(size=50)
    assert M.mauc(y, s) == pytest.approx(M.auc(y, s))


def test_average_precision_matches_sklearn_without_ties():
    rng = np.random.default_rng(4)
    for _ in range(40):
        n = int(rng.integers(2, 50))
        y = rng.integers(0, 2, n)
        if y.sum() == 0:
            continue
        s = rng.permutation(n).astype(float)
        assert M.average_precision(y, s) == pytest.approx(average_precision_score(y, s))
        assert M.mean_average_precision(y, s) == M.average_precision(y, s)


@pytest.mark.parametrize("k", [None, 1, 3, 10])
def test_dcg_family_matches_sklearn_without_ties(k):
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 30))
        rel = rng.integers(0, 4, n).astype(float)
        s = rng.permutation(n).astype(float)
        kw = {"k": k, "ignore_ties": True}
        # sklearn's dcg uses the linear gain rel/log2(i+1): DCG1; DCG2 = DCG1 of 2^rel - 1.
        assert M.dcg(rel, s, k=k) == pytest.approx(dcg_score([rel], [s], **kw))
        assert M.dcg_exp(rel, s, k=k) == pytest.approx(dcg_score([2**rel - 1], [s], **kw))
        if rel.max() > 0:
            assert M.ndcg(rel, s, k=k) == pytest.approx(ndcg_score([rel], [s], **kw))
            assert M.ndcg_exp(rel, s, k=k) == pytest.approx(ndcg_score([2**rel - 1], [s], **kw))


def test_grouped_ndcg_matches_sklearn_rows_as_queries():
    rng = np.random.default_rng(6)
    rel = rng.integers(0, 4, (5, 8)).astype(float)
    rel[:, 0] = 1.0  # every query has a positive gain
    s = np.array([rng.permutation(8) for _ in range(5)], dtype=float)
    group = np.repeat(np.arange(5), 8)
    got = M.ndcg(rel.ravel(), s.ravel(), group=group, k=4)
    assert got == pytest.approx(ndcg_score(rel, s, k=4, ignore_ties=True))


# ---------------------------------------------------------------------- hand examples
def test_pcg_hand_example():
    rel = [1, 3, 0, 2]
    score = [1.0, 4.0, 2.0, 3.0]  # ranked relevance: 3, 2, 0, 1 ; n = 4
    assert M.cg(rel, score, k=2) == 5
    assert M.pcg(rel, score) == 3 * 4 + 2 * 3 + 0 * 2 + 1 * 1
    assert M.pcg(rel, score, k=2) == 3 * 4 + 2 * 3  # paper: truncate, keep n - i + 1
    assert M.pcg_cutoff(rel, score, k=2) == 3 * 2 + 2 * 1  # promotion K - i + 1
    assert M.pcg_cutoff(rel, score) == M.pcg(rel, score)
    assert M.dcg(rel, score, k=2) == pytest.approx(3 + 2 / math.log2(3))
    assert M.dcg_exp(rel, score, k=2) == pytest.approx(7 + 3 / math.log2(3))


def test_pcg_cutoff_on_rel_labels_is_the_area_up_to_k():
    # rank order (y, t): TR, TNR, CR, TR, CNR, CNR -> |T| = 3, |C| = 3
    y = np.array([1, 0, 1, 1, 0, 0])
    t = np.array([1, 1, 0, 1, 0, 0])
    score = np.arange(6, 0, -1.0)
    rel = M.relevance_labels(y, t, labels="rel")
    # V(k) = R^T(k)/|T| - R^C(k)/|C| = 1/3, 1/3, 0, 1/3, 1/3, 1/3
    assert M.pcg_cutoff(rel, score, k=3) == pytest.approx(2 / 3)
    assert M.pcg_cutoff(rel, score, k=4) == pytest.approx(1.0)
    assert M.pcg(rel, score, k=4) == pytest.approx(5 / 3)  # the paper's truncation differs
    assert M.pcg(rel, score) == pytest.approx(5 / 3)  # = sum of all six V(k)


def test_precision_and_ap_hand_example():
    rel = [0, 1, 1, 0, 1]  # ranked by the score below: 1, 0, 1, 0, 1
    score = [4.0, 5.0, 3.0, 2.0, 1.0]
    assert M.precision_at_k(rel, score, k=3) == pytest.approx(2 / 3)
    assert M.average_precision(rel, score) == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert M.average_precision(rel, score, k=3) == pytest.approx((1 + 2 / 3) / 3)


def test_ties_are_broken_by_row_order():
    rel = [0, 1]
    assert M.precision_at_k(rel, [1.0, 1.0], k=1) == 0.0
    assert M.precision_at_k(rel[::-1], [1.0, 1.0], k=1) == 1.0
    assert M.auc([0, 1, 1, 0], [1, 1, 2, 0]) == pytest.approx(0.875)  # the tie counts 1/2


def test_ndcg_with_negative_relevance():
    rel = [-1.0, 2.0, 0.0]
    score = [3.0, 2.0, 1.0]
    ideal = 2 / 1 + 0 / math.log2(3) - 1 / 2
    assert M.ndcg(rel, score) == pytest.approx((-1 + 2 / math.log2(3)) / ideal)
    assert M.ndcg([-1.0, 2.0], [2.0, 1.0], k=1) == pytest.approx(-0.5)  # below 0 is legal


def test_micro_and_macro_precision():
    # query a: ranked grades [1, 0]; query b: ranked grades [2, 1, 1, 0]; C = 2 classes
    rel = [1, 0, 2, 1, 1, 0]
    score = [2.0, 1.0, 4.0, 3.0, 2.0, 1.0]
    group = [0, 0, 1, 1, 1, 1]
    micro = M.multiclass_precision_at_k(rel, score, group=group, k=4, average="micro")
    macro = M.multiclass_precision_at_k(rel, score, group=group, k=4, average="macro")
    assert micro == pytest.approx((1 / (2 * 2) + 3 / (2 * 4)) / 2)
    assert macro == pytest.approx(((1 + 2) / 6 + 1 / 6) / 2)  # class 1: 1 + 2 hits, class 2: 1
    # every query holds >= k rows: the two coincide (= P@k / C)
    for avg in ("micro", "macro"):
        got = M.multiclass_precision_at_k(rel, score, group=group, k=2, average=avg)
        assert got == pytest.approx(M.precision_at_k(rel, score, group=group, k=2) / 2)


# -------------------------------------------------------------------------------- P-nDCG
def test_p_ndcg_worked_examples():
    y = [1, 0, 1]
    assert M.p_ndcg(y, [0.9, 0.8, 0.1]) == pytest.approx(1.0 / 1.7)
    assert round(M.p_ndcg(y, [0.9, 0.8, 0.1]), 3) == 0.588
    assert round(M.p_ndcg(y, [0.9, 0.8, 0.7]), 3) == 0.941
    for p in ([0.9, 0.8, 0.1], [0.9, 0.8, 0.7]):
        assert round(M.p_ndcg(y, p, discount="log2"), 3) == 0.920
        assert M.p_ndcg(y, p, discount="log2") == pytest.approx(ndcg_score([y], [p]))
        assert M.p_ndcg(y, p, discount="zipf") == pytest.approx((1 + 1 / 3) / (1 + 1 / 2))
        assert M.p_ndcg(y, p, discount="zipf_beta", beta=2.0) == pytest.approx(
            (1 + 1 / 9) / (1 + 1 / 4)
        )


def test_p_ndcg_brute_force_and_row_order():
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(1, 15))
        y = rng.integers(0, 2, n)
        p = rng.integers(0, 11, n) / 10
        top = sorted(p, reverse=True)[: y.sum()]
        want = NAN if y.sum() == 0 or sum(top) == 0 else sum(y * p) / sum(top)
        np.testing.assert_allclose(quiet(M.p_ndcg, y, p), want)
        perm = rng.permutation(n)
        np.testing.assert_allclose(quiet(M.p_ndcg, y[perm], p[perm]), want)  # tie-free


# ------------------------------------------------------------------------------ uplift PCG
def bf_joint_v_sum(y, t, score, last):
    order = sorted(range(len(y)), key=lambda i: -score[i])
    n_t, n_c = sum(t), len(t) - sum(t)
    total = 0.0
    for k in range(1, last + 1):
        top = order[:k]
        total += sum(y[i] * t[i] for i in top) / n_t - sum(y[i] * (1 - t[i]) for i in top) / n_c
    return total


def bf_separate_sum(y, t, score, k1, k2):
    out = 0.0
    for arm, size_k in ((1, k1), (0, k2)):
        idx = sorted([i for i in range(len(y)) if t[i] == arm], key=lambda i: -score[i])
        sign = 1 if arm == 1 else -1
        for j in range(1, size_k + 1):
            out += sign * sum(y[i] for i in idx[:j]) / len(idx)
    return out


def test_uplift_pcg_spec_table1():
    # SPEC §1 Table 1 rows in rank order: (y, t) = (0,1), (1,1), (1,0), (1,1)
    y, t, s = [0, 1, 1, 1], [1, 1, 0, 1], [4.0, 3.0, 2.0, 1.0]
    assert M.uplift_pcg(y, t, s) == pytest.approx(0 * 4 + 3 / 3 - 1 * 2 + 1 / 3)
    assert M.uplift_pcg(y, t, s, query="separate") == pytest.approx((2 + 1) / 3 - 1)
    # p = 0.5: k1 = floor(1.5 + 0.5) = 2, k2 = floor(0.5 + 0.5) = 1
    assert M.uplift_pcg(y, t, s, query="separate", k=0.5) == pytest.approx(2 / 3 - 1)
    got = M.uplift_pcg(y, t, s, query="separate", k=0.5, metric="pcg_cutoff")
    assert got == pytest.approx(1 / 3 - 1)


def test_uplift_pcg_identities_with_uplift_curves():
    rng = np.random.default_rng(8)
    for _ in range(40):
        n = int(rng.integers(4, 30))
        y, t = rng.integers(0, 2, n), rng.integers(0, 2, n)
        if t.min() == t.max() or y.max() == 0:
            continue
        s = rng.integers(0, 6, n).astype(float)
        yl, tl, sl = y.tolist(), t.tolist(), s.tolist()
        assert M.uplift_pcg(y, t, s) == pytest.approx(bf_joint_v_sum(yl, tl, sl, n))
        for p in (0.1, 0.3, 0.5, 1.0):
            last = math.floor(p * n + 1e-9)
            got = M.uplift_pcg(y, t, s, k=p, metric="pcg_cutoff")
            assert got == pytest.approx(bf_joint_v_sum(yl, tl, sl, last), abs=1e-12)
            k1 = math.floor(p * t.sum() + 0.5)
            k2 = math.floor(p * (n - t.sum()) + 0.5)
            got = M.uplift_pcg(y, t, s, query="separate", k=p, metric="pcg_cutoff")
            assert got == pytest.approx(bf_separate_sum(yl, tl, sl, k1, k2), abs=1e-12)
        got = M.uplift_pcg(y, t, s, k=3, metric="pcg_cutoff")
        assert got == pytest.approx(bf_joint_v_sum(yl, tl, sl, 3), abs=1e-12)


def test_tie_averaged_uplift_pcg_is_the_mean_over_every_row_order():
    # brute force: the stable PCG of every permutation of the rows, averaged — each order of
    # the tied rows equally often — against ties="average" on one order
    rng = np.random.default_rng(12)
    for _ in range(12):
        n = 6
        y, t = rng.integers(0, 2, n), np.array([1, 0] * 3)
        if y.max() == 0:
            y[0] = 1
        s = rng.integers(0, 3, n).astype(float)
        perms = [list(p) for p in itertools.permutations(range(n))]
        cases = [dict(), dict(query="separate"), dict(k=0.5, metric="pcg_cutoff"),
                 dict(k=4), dict(k=0.5, query="separate", metric="pcg_cutoff")]
        for kw in cases:
            mean = np.mean([M.uplift_pcg(y[p], t[p], s[p], **kw) for p in perms])
            assert M.uplift_pcg(y, t, s, ties="average", **kw) == pytest.approx(mean, abs=1e-12)
            assert M.uplift_pcg(y[::-1], t[::-1], s[::-1], ties="average",
                                **kw) == pytest.approx(mean, abs=1e-12)
        # and the joint Rel PCG is n·AUUC of the curves' default (tie-averaged) order
        for c in (0.5, 1.0):
            auuc = curves.auuc(y, t, s, definition="uplift_joint_rel", cutoff=c)
            got = M.uplift_pcg(y, t, s, k=c, metric="pcg_cutoff", ties="average")
            assert got == pytest.approx(n * auuc, abs=1e-12)
    with pytest.raises(ValueError, match="ties must be one of"):
        M.uplift_pcg(y, t, s, ties="random")


def test_uplift_pcg_joint_is_n_times_auuc_of_core_curves():
    rng = np.random.default_rng(9)
    y, t, s = rng.integers(0, 2, 200), rng.integers(0, 2, 200), rng.normal(size=200)
    for c in (0.1, 0.3, 1.0):
        auuc = curves.auuc(y, t, s, definition="uplift_joint_rel", cutoff=c, ties="stable")
        got = M.uplift_pcg(y, t, s, k=c, metric="pcg_cutoff")
        assert got == pytest.approx(200 * auuc)


def test_uplift_pcg_separate_equals_per_arm_queries():
    rng = np.random.default_rng(10)
    y, t, s = rng.integers(0, 2, 40), rng.integers(0, 2, 40), rng.normal(size=40)
    for labels in M.LABEL_SETS:
        per_arm = 0.0
        for arm in (0, 1):
            m = t == arm  # labels recomputed on the one-arm query alone
            per_arm += M.pcg(M.relevance_labels(y[m], t[m], labels=labels), s[m])
        got = M.uplift_pcg(y, t, s, labels=labels, query="separate")
        assert got == pytest.approx(per_arm)
        joint = M.pcg(M.relevance_labels(y, t, labels=labels), s)
        assert M.uplift_pcg(y, t, s, labels=labels) == pytest.approx(joint)


# -------------------------------------------------------------- registry-driven properties
@pytest.mark.parametrize("name", sorted(ALL_METRICS))
def test_invariant_to_row_order_and_increasing_transforms(name):
    f = ALL_METRICS[name]
    rng = np.random.default_rng(11)
    for _ in range(15):
        n = int(rng.integers(2, 25))
        rel = rng.integers(-1, 4, n).astype(float)
        s = rng.permutation(n).astype(float)  # distinct scores
        group = rng.integers(0, 3, n)
        for g in (None, group):
            kws = [{}] if name in M.WHOLE_LIST_METRICS else [{"k": None}, {"k": 3}]
            for kw in kws:
                base = quiet(f, rel, s, group=g, **kw)
                perm = rng.permutation(n)
                gp = None if g is None else g[perm]
                np.testing.assert_allclose(quiet(f, rel[perm], s[perm], group=gp, **kw), base)
                for transform in (np.exp, lambda x: x**3 - 7, lambda x: np.log1p(x) * 5):
                    got = quiet(f, rel, transform(s), group=g, **kw)
                    np.testing.assert_allclose(got, base, err_msg=name)


@pytest.mark.parametrize("name", sorted(M.WHOLE_LIST_METRICS))
def test_whole_list_metrics_invariant_to_row_order_inside_ties(name):
    rng = np.random.default_rng(12)
    rel, s = rng.integers(0, 3, 30), rng.integers(0, 3, 30)
    perm = rng.permutation(30)
    f = M.WHOLE_LIST_METRICS[name]
    assert f(rel[perm], s[perm]) == pytest.approx(f(rel, s))


@pytest.mark.parametrize("name", sorted(set(ALL_METRICS) - {"mauc"}))
def test_ranking_by_relevance_beats_every_order(name):
    # MAUC is left out: "grade c vs rest" for a middle grade is not maximised by that order.
    f = ALL_METRICS[name]
    rng = np.random.default_rng(13)
    for _ in range(4):
        rel = rng.integers(-1, 3, 6).astype(float)
        if not (rel > 0).any() or (rel > 0).all():
            continue
        kw = {} if name in M.WHOLE_LIST_METRICS else {"k": 3}
        best = f(rel, rel, **kw)
        for perm in itertools.permutations(range(6)):
            assert f(rel, np.array(perm, dtype=float), **kw) <= best + 1e-12


def test_registry_uniform_signature():
    rel, s = [1.0, 0.0, 2.0], [0.3, 0.2, 0.1]
    for name, f in M.METRICS.items():
        assert isinstance(f(rel, s, group=None, k=None), float), name
    for name, f in M.WHOLE_LIST_METRICS.items():
        assert isinstance(f(rel, s, group=None), float), name


# ------------------------------------------------------------------------------ degenerate
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: M.average_precision([0, 0, 0], [1, 2, 3]), "Average precision is undefined"),
        (lambda: M.auc([1, 1, 1], [1, 2, 3]), "AUC is undefined"),
        (lambda: M.auc([0, 0], [1, 2]), "AUC is undefined"),
        (lambda: M.mauc([0, 0], [1, 2]), "MAUC is undefined"),
        (lambda: M.mauc([2, 2], [1, 2]), "MAUC is undefined"),
        (lambda: M.ndcg([0, 0], [1, 2]), "NDCG is undefined"),
        (lambda: M.ndcg([-1, 0], [1, 2]), "NDCG is undefined"),
        (lambda: M.ndcg_exp([-1, -0.5], [2, 1], k=1), "NDCG2 is undefined"),
        (lambda: M.multiclass_precision_at_k([0, -1], [1, 2]), "Micro precision is undefined"),
        (lambda: M.p_ndcg([0, 0], [0.5, 0.4]), "P-nDCG is undefined"),
        (lambda: M.p_ndcg([0, 1], [0.0, 0.0]), "P-nDCG is undefined"),
        (lambda: M.uplift_pcg([1, 0], [1, 1], [1, 2]), "no control row"),
        (lambda: M.uplift_pcg([1, 0], [0, 0], [1, 2]), "no treated row"),
        (lambda: M.uplift_pcg([0, 0], [0, 1], [1, 2]), "no responder"),
    ],
)
def test_degenerate_input_warns_and_returns_nan(call, match):
    assert issubclass(UndefinedMetricWarning, UserWarning)
    with pytest.warns(UndefinedMetricWarning, match=match):
        assert math.isnan(call())


def test_undefined_queries_are_left_out_of_the_mean():
    rel = [1, 0, 0, 0, 1, 0]
    score = [2.0, 1.0, 2.0, 1.0, 1.0, 2.0]
    group = [0, 0, 1, 1, 2, 2]  # query 1 has no relevant row
    with pytest.warns(UndefinedMetricWarning, match="undefined in 1 of 3 queries"):
        assert M.average_precision(rel, score, group=group) == pytest.approx((1 + 0.5) / 2)
    with pytest.warns(UndefinedMetricWarning, match="left out of the mean"):
        assert M.auc(rel, score, group=group) == pytest.approx((1 + 0) / 2)


# ---------------------------------------------------------------------------------- errors
def _up(**kw):
    return M.uplift_pcg([1, 0], [1, 0], [1, 2], **kw)


def _pn(**kw):
    return M.p_ndcg([1, 0], [0.5, 0.2], **kw)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: M.dcg([[1, 0]], [[1, 2]]), r"y_true must be a 1-d array; got .* shape \(1, 2\)"),
        (lambda: M.dcg([], []), "y_true must contain at least one row; got an empty array"),
        (lambda: M.ndcg([1, 0, 1], [1, 2]), "score must have length 3; got length 2"),
        (lambda: M.pcg([1, 0], [1, np.nan]), "score must be finite; got 1 NaN"),
        (lambda: M.cg(["a", "b"], [1, 2]), "y_true must be numeric; got dtype <U1"),
        (lambda: M.auc([1, 0, 1], [1, 2, 3], group=[0, 1]), r"group must have length 3 \(one id"),
        (lambda: M.dcg([1, 0], [1, 2], group=[0.0, np.nan]), "group must not contain NaN"),
        # a pandas object column with NaN: np.unique kept each NaN a query of its own
        (lambda: M.auc([1, 0, 0, 1], [1, 2, 3, 4], group=pd.Series([1.0, np.nan, 1.0, None],
                                                                   dtype=object)),
         r"group must not contain NaN \(or None\); got 2 missing id"),
        (lambda: M.dcg([1, 0], [1, 2], k=0), "k must be None or a positive integer; got 0"),
        (lambda: M.dcg([1, 0], [1, 2], k=2.0), "k must be None or a positive integer; got 2.0"),
        (lambda: M.dcg([1, 0], [1, 2], k=True), "k must be None or a positive integer; got True"),
        (
            lambda: M.multiclass_precision_at_k([1, 0], [1, 2], average="weighted"),
            "average must be one of 'micro', 'macro'; got 'weighted'",
        ),
        (lambda: _up(labels="abs9"), "labels must be one of"),
        (lambda: _up(query="both"), "query must be one of 'joint', 'separate'; got 'both'"),
        (lambda: _up(metric="dcg"), "metric must be one of 'pcg', 'pcg_cutoff'"),
        (
            lambda: _up(query="separate", k=1),
            r"k must be None or a fraction in \(0, 1\] when query='separate'.*got the integer 1",
        ),
        (lambda: _up(k=1.5), r"k must be a number in \(0, 1\]; got 1.5"),
        (lambda: _up(k=0), "k must be None or a positive integer; got 0"),
        (lambda: M.uplift_pcg([1, 2], [1, 0], [1, 2]), "y must hold only 0 and 1"),
        (lambda: M.p_ndcg([1, 2], [0.1, 0.2]), "y_true must hold only 0 and 1"),
        (lambda: M.p_ndcg([1, 0], [1.5, 0.2]), r"p_score must hold probabilities in \[0, 1\]"),
        (lambda: _pn(discount="zipf_beta"), "beta must be a finite number > 0"),
        (lambda: _pn(beta=2.0), "beta is only used with discount='zipf_beta'"),
        (lambda: _pn(discount="zipf_beta", beta="2"), r"beta must be a positive number .*'2'"),
        # per query, as p_ndcg: a "probability" of 3 gave a P-nDCG of 0.6 without a word
        (lambda: per_query_metrics([1, 0, 1, 0], [2.0, 3.0, 1.0, 0.5], [1] * 4,
                                   probability=[2.0, 3.0, 1.0, 0.5]),
         r"probability must hold probabilities in \[0, 1\]; got values in \[0.5, 3\]"),
        (lambda: _pn(discount="exp"), "discount must be one of 'probability'"),
    ],
)
def test_bad_input_raises_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_large_grouped_input_is_vectorised():
    rng = np.random.default_rng(14)
    n = 200_000
    rel, s, g = rng.integers(0, 3, n), rng.normal(size=n), rng.integers(0, 5000, n)
    for f in ALL_METRICS.values():
        assert np.isfinite(quiet(f, rel, s, group=g))  # one sort, no loop over 5000 queries


def test_map_letor_counts_queries_without_relevant_rows_as_zero():
    from core.evaluation.metrics import mean_average_precision_letor

    # query 0: relevant at positions 1 and 3 -> AP = (1/1 + 2/3) / 2; query 1: none -> 0
    y = np.array([1, 0, 1, 0, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    g = np.array([0, 0, 0, 1, 1])
    assert mean_average_precision_letor(y, s, group=g) == pytest.approx((1 + 2 / 3) / 2 / 2)
    # with a relevant row in every query it equals the usual MAP
    g2 = np.array([0, 0, 0, 0, 0])
    from core.evaluation.metrics import mean_average_precision

    assert mean_average_precision_letor(y, s, group=g2) == pytest.approx(
        mean_average_precision(y, s, group=g2))


def test_transformed_outcome_of_one_arm_asks_for_the_design_share():
    # it said "propensity must be in (0, 1); got nan", an argument the user never passed
    from core.evaluation.metrics import transformed_outcome

    with pytest.raises(ValueError, match=r"^t must hold both arms .*got only 1s\. Pass "
                                         r"propensity="):
        transformed_outcome([1, 0, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="got no rows"):
        transformed_outcome([], [])
    # with the design's share it is defined: y / p for treated rows
    np.testing.assert_allclose(transformed_outcome([1, 0, 1], [1, 1, 1], propensity=0.5),
                               [2.0, 0.0, 2.0])
