"""The Dask path of the curves (core.evaluation._dask) on a real distributed.LocalCluster
(2 worker processes): AUUC tables and curves of Dask arrays, Dask Series and a Parquet
dataset equal the in-memory ones bit for bit (0/1 outcome) or to rounding (an amount); the
binned variant stays within its stated bound; bad partitions give the in-memory message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

from core.evaluation import auuc, auuc_table, uplift_curve  # noqa: E402
from core.evaluation._dask import binned_counts, binned_error_bound  # noqa: E402
from core.evaluation.curves import curves_from_counts  # noqa: E402
from core.evaluation.curves import DEFINITIONS  # noqa: E402


@pytest.fixture
def client(dask_client):
    return dask_client


def _data(n=120_000, seed=0, decimals=2):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(np.int8)
    t = (rng.random(n) < 0.7).astype(np.int8)
    score = np.round(rng.normal(size=n) + 0.5 * y * t, decimals).astype(np.float32)  # ties
    return y, t, score


def test_dask_arrays_give_the_in_memory_table_and_curves_exactly(client):
    y, t, s = _data()
    chunks = ((7_000, 50_000, 13, 62_987),)  # uneven partitions, one tiny
    dy, dt, ds = (da.from_array(a, chunks=chunks) for a in (y, t, s))
    ref, got = auuc_table(y, t, s), auuc_table(dy, dt, ds)
    assert np.array_equal(ref.to_numpy(), got.to_numpy())
    for name in DEFINITIONS:
        x_ref, v_ref = uplift_curve(y, t, s, definition=name)
        x_got, v_got = uplift_curve(dy, dt, ds, definition=name)
        assert np.array_equal(x_ref, x_got) and np.array_equal(v_ref, v_got), name
    assert client.run(lambda: 1)  # the workers are alive: the work ran on them


def test_dask_series_of_a_parquet_dataset(client, tmp_path):
    y, t, s = _data(seed=1)
    frame = pd.DataFrame({"visit": y, "treatment": t, "score": s})
    dd.from_pandas(frame, npartitions=6).to_parquet(tmp_path / "ab")
    parts = dd.read_parquet(tmp_path / "ab")
    got = auuc_table(parts["visit"], parts["treatment"], parts["score"])
    assert np.array_equal(got.to_numpy(), auuc_table(y, t, s).to_numpy())
    assert auuc(parts["visit"], parts["treatment"], parts["score"],
                definition="qini_joint_abs", cutoff=0.3) == auuc(
        y, t, s, definition="qini_joint_abs", cutoff=0.3)


def test_an_amount_agrees_to_rounding_and_stable_ties_use_the_row_order(client):
    y, t, s = _data(seed=2)
    rng = np.random.default_rng(3)
    amount = np.where(y == 1, rng.gamma(2.0, 30.0, y.size), 0.0)
    dy, dt, ds = (da.from_array(a, chunks=25_000) for a in (amount, t, s))
    np.testing.assert_allclose(auuc_table(dy, dt, ds).to_numpy(),
                               auuc_table(amount, t, s).to_numpy(), rtol=1e-10, atol=1e-9)
    for name in DEFINITIONS:
        _, v_ref = uplift_curve(y, t, s, definition=name, ties="stable")
        _, v_got = uplift_curve(*(da.from_array(a, chunks=25_000) for a in (y, t, s)),
                                definition=name, ties="stable")
        assert np.array_equal(v_ref, v_got), name


def test_a_bad_partition_gives_the_in_memory_message(client):
    y, t, s = _data(n=10_000)
    s = s.astype(np.float64)
    s[9_000] = np.nan
    with pytest.raises(ValueError, match="finite") as in_memory:
        auuc_table(y, t, s)
    with pytest.raises(ValueError, match="finite") as distributed_error:
        auuc_table(*(da.from_array(a, chunks=2_500) for a in (y, t, s)))
    assert str(in_memory.value).split(";")[0] in str(distributed_error.value)


@pytest.mark.parametrize("bins", [100, 1_000])
def test_binned_curves_stay_within_the_stated_bound(client, bins):
    y, t, s = _data(n=200_000, seed=4, decimals=6)
    dy, dt, ds = (da.from_array(a, chunks=40_000) for a in (y, t, s))
    neg, counts, binary, tied = binned_counts(dy, dt, ds, bins=bins)
    assert counts.sum() == y.size and counts[:, 0].sum() == ((y == 1) & (t == 1)).sum()
    approx = curves_from_counts(neg, counts, binary, points=100)
    bound = binned_error_bound(counts, tied=tied)
    exact = auuc_table(y, t, s, definitions=("uplift_sep_rel", "uplift_joint_rel"))
    for name in ("uplift_sep_rel", "uplift_joint_rel"):
        for cut, col in zip((0.1, 0.3, 0.5, 1.0), exact.columns):
            err = abs(approx.auuc(name, cutoff=cut) - exact.loc[name, col])
            assert err <= bound[name] + 1e-15, (name, cut, err, bound[name])
        _, v_exact = uplift_curve(y, t, s, definition=name)
        _, v_approx = approx.curve(name)
        if name == "uplift_sep_rel":  # joint curves have other x grids (bins vs rows)
            assert np.abs(v_exact - v_approx).max() <= bound[name] + 1e-15
    assert bound["uplift_sep_rel"] < (0.002 if bins == 1_000 else 0.02)


def test_connect_reaches_a_running_scheduler_by_address(client, monkeypatch):
    from core.runs.cluster import SCHEDULER_ENV, connect

    monkeypatch.setenv(SCHEDULER_ENV, client.scheduler.address)
    other = connect()
    try:
        assert other.scheduler.address == client.scheduler.address
        assert sorted(other.scheduler_info()["workers"]) == sorted(
            client.scheduler_info()["workers"])
    finally:
        other.close()


def test_bins_of_one_tied_score_add_no_error(client):
    """Half the rows share one score (as Criteo's rows with every feature at its mode): a
    bin holding only that score is exact, so the bound drops to the other bins'."""
    y, t, s = _data(n=100_000, seed=6, decimals=6)
    s[: 50_000] = 0.25
    dy, dt, ds = (da.from_array(a, chunks=25_000) for a in (y, t, s))
    neg, counts, binary, tied = binned_counts(dy, dt, ds, bins=200)
    assert tied.sum() >= 1 and counts[tied].sum() >= 50_000
    loose = binned_error_bound(counts)
    tight = binned_error_bound(counts, tied=tied)
    assert tight["uplift_sep_rel"] < loose["uplift_sep_rel"] / 10
    approx = curves_from_counts(neg, counts, binary, points=100)
    err = abs(approx.auuc("uplift_sep_rel") - auuc(y, t, s, definition="uplift_sep_rel"))
    assert err <= tight["uplift_sep_rel"]


def test_bootstrap_by_partition_matches_the_in_memory_bootstrap(client):
    """The Poisson bootstrap computed by partition: its point estimate is the binned curve's
    AUUC; its spread is the arm-stratified in-memory bootstrap's (within 30 %); the same
    seed gives the same replicates; the band holds the point curve."""
    from core.evaluation import bootstrap_auuc
    from core.evaluation._dask import binned_bootstrap

    y, t, s = _data(n=60_000, seed=8, decimals=6)
    dy, dt, ds = (da.from_array(a, chunks=15_000) for a in (y, t, s))
    res = binned_bootstrap(dy, dt, ds, bins=500, n_boot=200, random_state=3)
    neg, counts, binary, _ = binned_counts(dy, dt, ds, bins=500)
    binned = curves_from_counts(neg, counts, binary)
    for cut in (0.1, 0.3, 1.0):
        assert res["point"][f"AUUC@{cut:.0%}"] == pytest.approx(
            binned.auuc("uplift_sep_rel", cutoff=cut), abs=1e-12)
    ref = bootstrap_auuc(y, t, {"s": s}, definition="uplift_sep_rel", n_boot=400,
                         random_state=0)
    sd_ref = ref.replicates[:, 0, 1].std()  # replicates × rankers × cut-offs; 30 %
    sd_dask = res["auuc"]["AUUC@30%"].std()
    assert 0.7 < sd_dask / sd_ref < 1.3
    again = binned_bootstrap(dy, dt, ds, bins=500, n_boot=200, random_state=3)
    assert again["auuc"].equals(res["auuc"])
    band = res["curve"]
    _, point = binned.curve("uplift_sep_rel")
    inside = (band["low"] <= point + 1e-12) & (point <= band["high"] + 1e-12)
    assert inside.mean() > 0.95
