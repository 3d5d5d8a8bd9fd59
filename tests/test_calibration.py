"""Calibration of predicted uplift (core.evaluation.calibration) against the known τ of the
simulated worlds and a per-bin computation written out here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from core.data import make_multiarm_world, make_uplift_world
from core.evaluation import calibration_slope, calibration_table


@pytest.mark.parametrize("outcome", ["binary", "spend"])
def test_the_true_effect_has_slope_one_and_a_doubled_one_half(outcome):
    d = make_multiarm_world(80_000, n_arms=1, outcome=outcome, random_state=0)
    X, y, t = d.pair(1)
    tau = d.tau[(d.t == 1) | (d.t == 0), 0]
    slope, se = calibration_slope(y, t, tau)
    assert abs(slope - 1) < 3 * se
    half, se2 = calibration_slope(y, t, 2 * tau)
    assert abs(half - 0.5) < 3 * se2
    shifted, _ = calibration_slope(y, t, tau + 5.0)  # a constant shift changes no slope
    assert shifted == pytest.approx(slope)


def test_bins_against_a_direct_computation():
    d = make_uplift_world(n=6_000, random_state=1)
    tau = d.tau
    table = calibration_table(d.y, d.t, tau, n_bins=5)
    order = np.argsort(tau, kind="stable")
    for j, rows in enumerate(np.array_split(order, 5)):  # no ties in τ: equal-count bins
        yt, yc = d.y[rows][d.t[rows] == 1], d.y[rows][d.t[rows] == 0]
        row = table.iloc[j]
        assert row["n"] == len(rows)
        assert row["observed"] == pytest.approx(yt.mean() - yc.mean())
        assert row["predicted"] == pytest.approx(tau[rows].mean())
        se = np.sqrt(yt.var(ddof=1) / yt.size + yc.var(ddof=1) / yc.size)
        assert row["high"] - row["low"] == pytest.approx(2 * 1.959964 * se, rel=1e-5)
    # The known τ is calibrated: observed and predicted agree within the intervals.
    inside = (table["low"] <= table["predicted"]) & (table["predicted"] <= table["high"])
    assert inside.sum() >= 4


def test_ties_stay_in_one_bin_and_degenerate_bins_warn():
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0])
    t = np.array([1, 1, 0, 0, 1, 1, 1, 1])
    tau = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = calibration_table(y, t, tau, n_bins=4)
    assert table["n"].tolist() == [4, 2, 2]  # the four ties form one bin
    assert np.isnan(table["observed"].iloc[1]) and any("lack treated" in str(w.message)
                                                        for w in caught)
    with pytest.warns(UserWarning, match="constant"):
        assert np.isnan(calibration_slope(y, t, np.zeros(8))[0])


def test_a_bin_with_one_control_row_has_no_interval():
    """The reviewer's case: bin 2 has one control row (y = 5) and four treated (mean 1). Its
    observed uplift is 1 − 5 = −4, but one row has no variance estimate: the interval is
    nan (it was [−5.39, −2.61], excluding 0 on one customer's word), with a warning."""
    y = [0, 1, 0, 1, 0, 5.0, 0, 3.0, 1.0, 0]
    t = [0, 0, 0, 0, 1, 0, 1, 1, 1, 1]
    with pytest.warns(UserWarning, match="single treated or control row"):
        table = calibration_table(y, t, np.arange(10), n_bins=2)
    second = table.iloc[1]
    assert (second["n_treated"], second["n_control"]) == (4, 1)
    assert second["observed"] == pytest.approx((0 + 3 + 1 + 0) / 4 - 5)
    assert np.isnan(second["low"]) and np.isnan(second["high"])
    first = table.iloc[0]  # 1 treated row too: no interval either
    assert (first["n_treated"], first["n_control"]) == (1, 4) and np.isnan(first["low"])


@pytest.mark.parametrize("y, t, why", [
    (np.zeros(100, int), np.r_[np.ones(50, int), np.zeros(50, int)], "no responder"),
    (np.r_[np.ones(50, int), np.zeros(50, int)], np.ones(100, int), "no control row"),
    (np.r_[np.ones(50, int), np.zeros(50, int)], np.zeros(100, int), "no treated row"),
])
def test_no_observable_uplift_is_nan_with_the_reason_never_a_certain_zero(y, t, why):
    # with an outcome of 0 everywhere Y* = 0: slope 0 with standard error 0 looked certain
    tau = np.linspace(0, 1, 100)
    with pytest.warns(UserWarning, match=f"calibration slope is undefined because there are {why}"):
        assert np.isnan(calibration_slope(y, t, tau)).all()
    with pytest.warns(UserWarning, match=f"observed uplift is undefined because there are {why}"):
        table = calibration_table(y, t, tau, n_bins=2)
    assert table[["observed", "low", "high"]].isna().all().all() and len(table) == 2


def test_every_undefined_uplift_gives_the_same_reason():
    """One wording for 'no control rows' whether a curve, the bootstrap, calibration, the
    deciles or PCG says it (there were three)."""
    from core.evaluation import auuc, bootstrap_auuc, uplift_by_decile
    from core.evaluation.metrics import uplift_pcg

    y, t, s = np.r_[np.ones(5, int), np.zeros(5, int)], np.ones(10, int), np.arange(10.0)
    calls = [lambda: auuc(y, t, s, definition="uplift_sep_rel"),
             lambda: bootstrap_auuc(y, t, {"s": s}, definition="uplift_sep_rel", n_boot=2,
                                    random_state=0),
             lambda: calibration_slope(y, t, s), lambda: calibration_table(y, t, s),
             lambda: uplift_pcg(y, t, s)]
    for call in calls:
        with pytest.warns(UserWarning, match=r"because there are no control rows \(t == 0\)"):
            call()
    with pytest.warns(UserWarning, match=r"because there are no responders \(y is all 0\)"):
        uplift_by_decile(np.zeros(10, int), np.tile([0, 1], 5), s, bins=2)


def test_a_bad_tau_hat_is_named_as_the_argument_it_is():
    # the message said "score must be finite", an argument these functions do not have
    from core.evaluation import calibration_slope, calibration_table

    for f in (calibration_slope, calibration_table):
        with pytest.raises(ValueError, match=r"^tau_hat must be finite"):
            f([0, 1, 0, 1], [0, 0, 1, 1], [0.1, np.nan, 0.2, 0.3])
