"""Continuous outcomes (spend, revenue) through every curve (SPEC §8): the six definitions
read as sums of y, checked against a direct sum written here from SPEC §2's table; a 0/1
outcome gives exactly today's numbers whatever its dtype; profit, bootstrap and the
definition table accept it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from core.evaluation import (
    DEFINITIONS,
    auuc,
    auuc_table,
    bootstrap_auuc,
    definition_ranks,
    perfect_auuc,
    profit_curve,
    uplift_curve,
)


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 2, n)
    score = rng.permutation(n).astype(float)  # no ties
    spend = np.where(rng.random(n) < 0.3, rng.gamma(2.0, 40.0, n), 0.0) * (1 + 0.3 * t)
    return spend, t, score


def _brute(y, t, score, definition, points=100):
    order = np.argsort(-score, kind="stable")
    ys, ts = y[order].astype(float), t[order]
    n_t, n_c = int(t.sum()), int((1 - t).sum())
    if DEFINITIONS[definition].setting == "joint":
        out = [0.0]
        for k in range(1, len(y) + 1):
            nt, nc = ts[:k].sum(), k - ts[:k].sum()
            rt, rc = (ys[:k] * ts[:k]).sum(), (ys[:k] * (1 - ts[:k])).sum()
            if definition == "uplift_joint_rel":
                out.append(rt / n_t - rc / n_c)
            elif nt == 0 or nc == 0:
                out.append(0.0)
            elif definition == "qini_joint_abs":
                out.append(rt - rc * nt / nc)
            else:
                out.append((rt / nt - rc / nc) * k)
        return np.array(out)
    yt, yc = ys[ts == 1], ys[ts == 0]
    out = []
    for j in range(points + 1):
        kt, kc = int(np.floor(j * n_t / points + 0.5)), int(np.floor(j * n_c / points + 0.5))
        r_t, r_c = yt[:kt].sum(), yc[:kc].sum()
        out.append({"qini_sep_abs": r_t - r_c * n_t / n_c, "uplift_sep_abs": r_t - r_c,
                    "uplift_sep_rel": r_t / n_t - r_c / n_c}[definition])
    return np.array(out)


@pytest.mark.parametrize("definition", list(DEFINITIONS))
def test_each_definition_is_the_direct_sum_of_the_outcome(definition):
    y, t, s = _data()
    _, v = uplift_curve(y, t, s, definition=definition, ties="stable")
    np.testing.assert_allclose(v, _brute(y, t, s, definition), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("definition", list(DEFINITIONS))
def test_a_zero_one_outcome_gives_todays_numbers_whatever_its_dtype(definition):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    t = rng.integers(0, 2, 300)
    s = rng.integers(0, 20, 300).astype(float)  # heavy ties: the averaged accumulation
    ref = [auuc(y, t, s, definition=definition, cutoff=c) for c in (0.1, 0.3, 1.0)]
    for yy in (y.astype(float), y.astype(np.int64), y.astype(bool), y.astype(np.float32)):
        assert [auuc(yy, t, s, definition=definition, cutoff=c)
                for c in (0.1, 0.3, 1.0)] == ref
        np.testing.assert_array_equal(uplift_curve(yy, t, s, definition=definition)[1],
                                      uplift_curve(y, t, s, definition=definition)[1])


def test_tables_bootstrap_and_definition_ranks_accept_spend():
    y, t, s = _data(1)
    table = auuc_table(y, t, s)
    assert table.loc["uplift_sep_rel", "AUUC@30%"] == pytest.approx(
        auuc(y, t, s, definition="uplift_sep_rel", cutoff=0.3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot = bootstrap_auuc(y, t, {"a": s, "b": -s}, definition="uplift_sep_rel",
                              n_boot=50, random_state=0)
    assert np.isfinite(boot.replicates).all()
    ranks = definition_ranks(y, t, {"a": s, "b": -s}, cutoff=0.3)
    assert ranks.shape[0] == len(DEFINITIONS)
    # The perfect reference (treated by spend descending, control by spend ascending) beats
    # the model under the relative definitions.
    assert perfect_auuc(y, t, definition="uplift_sep_rel") >= auuc(
        y, t, s, definition="uplift_sep_rel")


def test_profit_with_the_outcome_as_value():
    """value = the spend itself: incremental value of the top k = (mean spend of treated −
    mean spend of control among the top k) · k, minus the cost — computed directly."""
    y, t, s = _data(2, n=200)
    frame = profit_curve(y, t, s, cost_per_treatment=1.0, value=y, ties="stable")
    order = np.argsort(-s, kind="stable")
    for k in (20, 77, 200):
        top = order[:k]
        tt, yy = t[top], y[top]
        inc = (yy[tt == 1].mean() - yy[tt == 0].mean()) * k
        row = frame[frame["targeted"] == k].iloc[0]
        assert row["profit"] == pytest.approx(inc - k * 1.0)
        assert row["incremental_responses"] == pytest.approx(inc)  # y is the value here


def test_bad_outcomes_are_refused():
    _, t, s = _data(n=4)
    with pytest.raises(ValueError, match="y must be finite"):
        auuc([1.0, np.inf, 0.0, 2.0], t, s, definition="uplift_sep_rel")
    with pytest.raises(ValueError, match="y must hold 0/1 values; got dtype"):
        auuc(np.array(["a", "b", "c", "d"]), t, s, definition="uplift_sep_rel")


def test_transformed_outcome_by_hand_and_its_messages():
    from core.evaluation.metrics import transformed_outcome

    # p = 0.5: y·(t/p − (1−t)/(1−p)) = 2y for treated rows, −2y for control rows
    np.testing.assert_allclose(transformed_outcome([3.0, 1.0, 0.0, 2.0], [1, 0, 1, 0]),
                               [6.0, -2.0, 0.0, -4.0])
    for y, message in ((np.array(["a", "b"]), "y must hold 0/1 values"),
                       (np.ones((2, 2)), "y must be a 1-d array"),
                       ([1.0, np.nan], "y must be finite"),
                       ([1.0, 0.0, 1.0], r"t must have the same length as y \(3\); got 2")):
        with pytest.raises(ValueError, match=message):
            transformed_outcome(y, [0, 1])
