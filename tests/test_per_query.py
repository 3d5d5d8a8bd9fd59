"""Per-query ranking metrics (core.evaluation.per_query) against brute-force definitions, the
aggregate functions of core.evaluation.metrics, trec_eval (through ir-measures) and the
P-nDCG post's worked examples."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from core.evaluation import (
    auc,
    by_relevant_count,
    discount_table,
    mauc,
    mean_average_precision,
    mean_average_precision_letor,
    multiclass_precision_at_k,
    ndcg,
    p_ndcg,
    per_query_metrics,
    precision_at_k,
    score_to_probability,
)


def _data(seed: int, n_queries: int = 30, grades: int = 3, empty: int = 5):
    """Random graded lists of varied length, ``empty`` queries without a relevant document,
    string ids in shuffled row order (queries interleaved), distinct scores."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 25, n_queries)
    qid = np.repeat([f"q{i:03d}" for i in range(n_queries)], sizes)
    rel = rng.integers(0, grades, qid.size).astype(float)
    rel[np.isin(qid, [f"q{i:03d}" for i in range(empty)])] = 0
    score = rng.permutation(qid.size) + rng.normal(0, 0.1, qid.size)
    perm = rng.permutation(qid.size)
    return rel[perm], score[perm], qid[perm]


# ------------------------------------------------------------------ brute force, per query
def _auc(rel, s):
    pos, neg = s[rel > 0], s[rel == 0]
    if not pos.size or not neg.size:
        return np.nan
    return np.mean([(p > q) + 0.5 * (p == q) for p in pos for q in neg])


def _mauc(rel, s):
    classes = np.unique(rel[rel > 0])
    if not classes.size or np.all(rel == rel[0]):
        return np.nan
    n_rel = (rel > 0).sum()
    total = 0.0
    for c in classes:
        pos, neg = s[rel == c], s[rel != c]
        total += (rel == c).sum() / n_rel * np.mean([(p > q) + 0.5 * (p == q)
                                                     for p in pos for q in neg])
    return total


def _ranked(rel, s):
    return rel[np.argsort(-s, kind="stable")]


def _ap(rel, s):
    r = _ranked(rel, s) > 0
    if not r.any():
        return np.nan
    return np.mean([r[: i + 1].mean() for i in range(r.size) if r[i]])


def _ndcg(rel, s, k):
    r = _ranked(rel, s)[:k]
    ideal = np.sort(rel)[::-1][:k]
    disc = 1 / np.log2(np.arange(2, r.size + 2))
    idcg = (ideal * disc[: ideal.size]).sum()
    return np.nan if idcg <= 0 else (r * disc).sum() / idcg


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_query_values_equal_brute_force(seed):
    rel, s, qid = _data(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = per_query_metrics(rel, s, qid, k=5)
    assert list(table.index) == list(dict.fromkeys(qid))  # order of first appearance
    n_classes = np.unique(rel[rel > 0]).size
    for q, row in table.iterrows():
        m = qid == q
        r, sc = rel[m], s[m]
        assert row["n_docs"] == m.sum() and row["n_relevant"] == (r > 0).sum()
        np.testing.assert_allclose(row["auc"], _auc(r, sc), equal_nan=True)
        np.testing.assert_allclose(row["mauc"], _mauc(r, sc), equal_nan=True)
        np.testing.assert_allclose(row["ap"], _ap(r, sc), equal_nan=True)
        assert row["ap_letor"] == pytest.approx(0.0 if (r == 0).all() else _ap(r, sc))
        np.testing.assert_allclose(row["ndcg@5"], _ndcg(r, sc, 5), equal_nan=True)
        hits = (_ranked(r, sc)[:5] > 0).sum()
        assert row["p@5"] == pytest.approx(hits / min(5, m.sum()))
        assert row["p_micro@5"] == pytest.approx(hits / (n_classes * min(5, m.sum())))


@pytest.mark.parametrize("seed", [0, 3])
def test_means_over_queries_are_the_aggregate_metrics(seed):
    rel, s, qid = _data(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = per_query_metrics(rel, s, qid, k=7)
        expected = {
            "auc": auc(rel, s, group=qid), "mauc": mauc(rel, s, group=qid),
            "ap": mean_average_precision(rel, s, group=qid),
            "ap_letor": mean_average_precision_letor(rel, s, group=qid),
            "ndcg@7": ndcg(rel, s, group=qid, k=7), "p@7": precision_at_k(rel, s, group=qid,
                                                                           k=7),
            "p_micro@7": multiclass_precision_at_k(rel, s, group=qid, k=7, average="micro"),
            "p_macro@7": multiclass_precision_at_k(rel, s, group=qid, k=7, average="macro"),
        }
    for col, value in expected.items():
        assert table[col].mean() == pytest.approx(value, rel=1e-12), col


def test_p_ndcg_per_query_is_the_papers_function_on_each_query():
    rel, s, qid = _data(4)
    p = np.random.default_rng(4).uniform(size=rel.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = per_query_metrics(rel, s, qid, probability=p)
        for q, row in table.iterrows():
            m = qid == q
            expected = p_ndcg((rel[m] > 0).astype(int), p[m]) if (rel[m] > 0).any() else np.nan
            np.testing.assert_allclose(row["p_ndcg"], expected, equal_nan=True)


def test_row_order_does_not_matter():
    rel, s, qid = _data(5)
    perm = np.random.default_rng(0).permutation(rel.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = per_query_metrics(rel, s, qid).sort_index()
        b = per_query_metrics(rel[perm], s[perm], qid[perm]).sort_index()
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)


def test_agrees_with_trec_eval_through_ir_measures():
    """trec_eval (pytrec_eval, via ir-measures) — an independent implementation — on
    nDCG@k (gain = grade, log2 discount), P@k and AP over the queries with a relevant
    document (trec_eval only evaluates queries that have relevance judgements ≥ 1)."""
    ir_measures = pytest.importorskip("ir_measures")
    rel, s, qid = _data(6, empty=0)
    docs = [f"d{i}" for i in range(rel.size)]
    qrels = [ir_measures.Qrel(q, d, int(r)) for q, d, r in zip(qid, docs, rel)]
    run = [ir_measures.ScoredDoc(q, d, float(x)) for q, d, x in zip(qid, docs, s)]
    measures = [ir_measures.nDCG @ 5, ir_measures.P @ 5, ir_measures.AP]
    ref = pd.DataFrame([(m.query_id, str(m.measure), m.value)
                        for m in ir_measures.iter_calc(measures, qrels, run)],
                       columns=["qid", "measure", "value"]).pivot(index="qid",
                                                                   columns="measure",
                                                                   values="value")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = per_query_metrics(rel, s, qid, k=5)
    defined = ours[ours["n_relevant"] > 0]
    ref = ref.loc[defined.index]
    np.testing.assert_allclose(defined["ndcg@5"], ref["nDCG@5"], rtol=1e-6)
    np.testing.assert_allclose(defined["ap"], ref["AP"], rtol=1e-6)
    # trec_eval's P@k divides by k even for shorter queries; ours by min(k, n_q).
    full = defined[defined["n_docs"] >= 5]
    np.testing.assert_allclose(full["p@5"], ref.loc[full.index, "P@5"], rtol=1e-6)


# ------------------------------------------------------------------ probabilities, P-nDCG
def test_score_to_probability_is_monotone_and_documented():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400)
    y = (s + rng.normal(size=400) > 0.5).astype(int)
    p = score_to_probability(s, y)
    order = np.argsort(s)
    assert np.all(np.diff(p[order]) >= 0) and np.all((p > 0) & (p < 1))
    # Platt: the fitted sigmoid's mean matches the base rate (logistic score equation).
    assert p.mean() == pytest.approx(y.mean(), abs=1e-3)
    r = score_to_probability(np.array([3.0, 1.0, 2.0, 2.0]), method="rank")
    np.testing.assert_allclose(r, [3.5 / 4, 0.5 / 4, 2 / 4, 2 / 4])  # (mid-rank − ½)/n
    with pytest.warns(UserWarning, match="rank instead"):
        flat = score_to_probability(s, np.ones(400))
    np.testing.assert_allclose(flat, score_to_probability(s, method="rank"))
    with pytest.warns(UserWarning, match="slope"):
        score_to_probability(-s, y)
    with pytest.raises(ValueError, match="relevant is required"):
        score_to_probability(s)


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
def test_mid_ranks_are_scipys_average_ranks(backend, monkeypatch):
    from scipy.stats import rankdata

    from core.evaluation import _kernel
    from core.evaluation.per_query import mid_ranks

    if backend == "numpy":
        monkeypatch.setattr(_kernel, "_compiled", None)
    rng = np.random.default_rng(12)
    for s in (rng.normal(size=5000),  # untied
              np.round(rng.normal(size=5000), 1),  # many ties
              np.array([0.0, -0.0, 1.0, -0.0, -np.inf, np.inf, 1.0]),  # ±0 tie, infinities
              rng.integers(0, 3, 999).astype(np.float32), np.array([2.5]),
              np.array([0, 200, 200, 7], dtype=np.uint8)):  # unsigned: no wrapped negation
        np.testing.assert_array_equal(mid_ranks(s), rankdata(s))


def test_discount_table_reproduces_the_posts_worked_examples():
    a = discount_table([1, 0, 1], [0.9, 0.8, 0.1])
    b = discount_table([1, 0, 1], [0.9, 0.8, 0.7])
    assert a.loc["probability", "nDCG"] == pytest.approx(1.0 / 1.7)  # 0.588
    assert b.loc["probability", "nDCG"] == pytest.approx(1.6 / 1.7)  # 0.941
    log2 = (1 + 1 / np.log2(4)) / (1 + 1 / np.log2(3))  # 0.920 for both
    assert a.loc["log2", "nDCG"] == pytest.approx(log2) == b.loc["log2", "nDCG"]
    assert a.loc["zipf", "nDCG"] == pytest.approx((1 + 1 / 3) / 1.5)
    beta = discount_table([1, 0, 1], beta=2.0)
    assert beta.loc["zipf_beta", "nDCG"] == pytest.approx((1 + 1 / 9) / (1 + 1 / 4))
    assert "probability" not in beta.index  # no probabilities: positions only
    graded = discount_table([2, 0, 1], [0.2, 0.9, 0.5])  # ranked by p: grades 0, 1, 2
    assert graded.loc["probability", "DCG"] == pytest.approx(0 * 0.9 + 1 * 0.5 + 2 * 0.2)
    assert graded.loc["probability", "ideal DCG"] == pytest.approx(2 * 0.9 + 1 * 0.5)
    # ... and the paper's binary P-nDCG beside it: relevant p's 0.5 + 0.2 over the top two.
    assert graded.loc["probability_binary", "nDCG"] == pytest.approx(0.7 / 1.4)
    with pytest.raises(ValueError, match="grades ≥ 0"):
        discount_table([1, -1])


def test_by_relevant_count_bins_and_means():
    table = pd.DataFrame({"n_relevant": [0, 1, 1, 3, 4, 12],
                          "ndcg@10": [np.nan, 0.5, 0.7, 0.9, 0.8, 1.0],
                          "p_ndcg": [np.nan, 0.2, 0.4, 0.6, 0.6, 0.9]})
    out = by_relevant_count(table)
    assert list(out.index) == ["0", "1", "3–4", "10+"]
    assert out.loc["1", "queries"] == 2 and out.loc["1", "ndcg@10"] == pytest.approx(0.6)
    assert out.loc["1", "± ndcg@10"] == pytest.approx(1.96 * np.std([0.5, 0.7], ddof=1)
                                                      / np.sqrt(2))
    assert np.isnan(out.loc["0", "ndcg@10"]) and np.isnan(out.loc["10+", "± p_ndcg"])
    with pytest.raises(ValueError, match="lacks the columns"):
        by_relevant_count(table, ["map"])
