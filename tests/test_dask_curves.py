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


def test_columns_of_a_parquet_read_of_a_few_of_the_file_s_columns(client, tmp_path):
    # dask fuses the partitions of a read of a few of a file's columns (20 row groups into
    # 4): an unoptimised Series claimed 20, and beside a numpy score the table failed with
    # dask's "The number of items in 'lengths' does not match the number of partitions"
    import pyarrow as pa
    import pyarrow.parquet as pq

    y, t, s = _data(seed=4)
    rng = np.random.default_rng(1)
    wide = pd.DataFrame({"visit": y, "treatment": t, "score": s,
                         **{f"unread{i}": rng.random(len(y)) for i in range(12)}})
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.Table.from_pandas(wide, preserve_index=False), path,
                   row_group_size=6_000)
    two = dd.read_parquet(path, split_row_groups=True, columns=["visit", "treatment"])
    every = dd.read_parquet(path, split_row_groups=True)
    assert two["visit"].optimize().npartitions < two["visit"].npartitions == 20
    ref = auuc_table(y, t, s)
    for score in (s, every["score"], every["score"].values):  # numpy; other partitions
        got = auuc_table(two["visit"], two["treatment"], score)
        assert np.array_equal(got.to_numpy(), ref.to_numpy())
        x_got, v_got = uplift_curve(two["visit"], two["treatment"], score,
                                    definition="uplift_sep_rel")
        x_ref, v_ref = uplift_curve(y, t, s, definition="uplift_sep_rel")
        assert np.array_equal(x_ref, x_got) and np.array_equal(v_ref, v_got)


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


def test_connect_names_workers_that_cannot_import_core(tmp_path):
    """A cluster started outside the project (helper's walk: a LocalCluster from /tmp) has
    workers without ``core``: connect() says so and how to fix it, where the first task
    failed with "Error during deserialization of the task graph"."""
    import os
    import subprocess
    import sys

    from core.runs.cluster import connect

    start = ("from distributed import LocalCluster; import time\n"
             "c = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, "
             "dashboard_address=None)\n"
             "print(c.scheduler_address, flush=True)\ntime.sleep(300)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if subprocess.run([sys.executable, "-c", "import core.evaluation._dask"], cwd=tmp_path,
                      env=env, capture_output=True).returncode == 0:
        pytest.skip("core is installed in this environment (pip install -e): every worker "
                    "started from any folder imports it")
    outside = subprocess.Popen([sys.executable, "-c", start], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = outside.stdout.readline().strip()
        assert address.startswith("tcp://"), address
        with pytest.raises(RuntimeError, match=r"1 of 1 Dask workers cannot import UpRank's "
                           r"'core' package \(tcp://.*No module named 'core'\)\. Install it "
                           r"where they run \(pip install -e .*\) or start them with "
                           r"PYTHONPATH="):
            connect(address)
    finally:
        outside.kill()
        outside.wait()


def test_connect_accepts_workers_that_import_core(client):
    from core.runs.cluster import check_workers

    check_workers(client)  # the test cluster's workers import core: nothing raised
    with pytest.raises(RuntimeError, match="2 of 2 Dask workers cannot import UpRank's "
                       "'no_such_module' package"):
        check_workers(client, "no_such_module.sub")


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
    # a Generator is a random_state too (it was a TypeError); the same seed, the same draws
    by_generator = [binned_bootstrap(dy, dt, ds, bins=500, n_boot=20,
                                     random_state=np.random.default_rng(5))["auuc"]
                    for _ in range(2)]
    assert by_generator[0].equals(by_generator[1])
    other = binned_bootstrap(dy, dt, ds, bins=500, n_boot=20,
                             random_state=np.random.default_rng(6))["auuc"]
    assert not other.equals(by_generator[0])  # another seed, other draws
    # the shared seed rule: a SeedSequence is a random_state too (it was refused), and
    # SeedSequence(3) is what the integer 3 means, so it draws the same replicates
    by_sequence = binned_bootstrap(dy, dt, ds, bins=500, n_boot=200,
                                   random_state=np.random.SeedSequence(3))
    assert by_sequence["auuc"].equals(res["auuc"])
    with pytest.raises(ValueError,
                       match=r"random_state must be an integer in 0 … 2\*\*32 − 1; got -1"):
        binned_bootstrap(dy, dt, ds, bins=500, n_boot=2, random_state=-1)
    band = res["curve"]
    _, point = binned.curve("uplift_sep_rel")
    inside = (band["low"] <= point + 1e-12) & (point <= band["high"] + 1e-12)
    assert inside.mean() > 0.95


# ------------------------------------------------------------------ review fixes
def _purchases(n=20_000):
    """Purchases per row (0, 1, rarely 2+): an amount, not a 0/1 outcome."""
    rng = np.random.default_rng(0)
    t = (rng.random(n) < 0.7).astype(np.int8)
    s = rng.normal(size=n)
    y = rng.poisson(0.05 + 0.02 * t * (s > 0))
    return y, t, s


@pytest.mark.parametrize("first_chunk", ["only 0/1", "all zero"])
def test_an_amount_whose_partition_holds_only_0_1_is_an_amount(client, first_chunk):
    """Whether y is 0/1 is decided for the whole column, not per partition."""
    y, t, s = _purchases()
    y[:5_000] = np.minimum(y[:5_000], 1) if first_chunk == "only 0/1" else 0
    assert y.max() >= 2 and set(np.unique(y[:5_000]).tolist()) <= {0, 1}
    dy, dt, ds = (da.from_array(a, chunks=5_000) for a in (y, t, s))
    _, v = uplift_curve(dy, dt, ds, definition="uplift_sep_rel")
    # at p = 1 the separate relative curve is the difference of the arms' mean outcomes
    assert v[-1] == pytest.approx(y[t == 1].mean() - y[t == 0].mean(), rel=1e-12)
    assert np.array_equal(auuc_table(dy, dt, ds).to_numpy(), auuc_table(y, t, s).to_numpy())
    for name in DEFINITIONS:
        x_ref, v_ref = uplift_curve(y, t, s, definition=name)
        x_got, v_got = uplift_curve(dy, dt, ds, definition=name)
        assert np.array_equal(x_ref, x_got) and np.array_equal(v_ref, v_got), name
    _, counts, binary, _ = binned_counts(dy, dt, ds, bins=50)
    assert not binary  # [n_T, n_C, Σy_T, Σy_C] per bin
    np.testing.assert_array_equal(counts.sum(axis=0), [(t == 1).sum(), (t == 0).sum(),
                                                       y[t == 1].sum(), y[t == 0].sum()])


def test_empty_partitions_add_nothing(client):
    y, t, _ = _data(n=30_000, seed=9)
    rng = np.random.default_rng(10)  # 22 scores of >= 100 rows each: every bin is one score
    s = (rng.integers(0, 20, y.size) + 2 * y * t).astype(np.float32)
    chunks = ((0, 10_000, 0, 20_000, 0),)
    dy, dt, ds = (da.from_array(a, chunks=chunks) for a in (y, t, s))
    assert np.array_equal(auuc_table(dy, dt, ds).to_numpy(), auuc_table(y, t, s).to_numpy())
    frame = pd.DataFrame({"y": y, "t": t, "s": s, "block": np.arange(y.size) // 10_000})
    parts = dd.from_pandas(frame, npartitions=3)
    test = parts[parts["block"] != 1]  # as ddf[ddf.split == "test"]: partition 1 is empty
    assert test.map_partitions(len).compute().tolist() == [10_000, 0, 10_000]
    kept = frame[frame["block"] != 1]
    yk, tk, sk = (kept[c].to_numpy() for c in ("y", "t", "s"))
    assert np.array_equal(auuc_table(test["y"], test["t"], test["s"]).to_numpy(),
                          auuc_table(yk, tk, sk).to_numpy())
    _, counts, binary, tied = binned_counts(test["y"], test["t"], test["s"], bins=1_000)
    assert binary and tied.all()
    np.testing.assert_array_equal(counts.sum(axis=0), [((yk == a) & (tk == b)).sum() for b, a
                                                       in ((1, 1), (1, 0), (0, 1), (0, 0))])
    from core.evaluation._dask import binned_bootstrap

    res = binned_bootstrap(test["y"], test["t"], test["s"], bins=1_000, n_boot=20)
    for cut in (0.3, 1.0):  # bins of one score each: the binned curve is the exact one
        assert res["point"][f"AUUC@{cut:.0%}"] == pytest.approx(
            auuc(yk, tk, sk, definition="uplift_sep_rel", cutoff=cut), abs=1e-12)
    nothing = parts[parts["block"] > 5]
    with pytest.raises(ValueError, match="y must contain at least one row"):
        auuc_table(nothing["y"], nothing["t"], nothing["s"])


def test_errors_count_the_whole_column(client):
    y, t, s = _data(n=20_000)
    bad = {"score": s.astype(np.float64), "y": y.astype(np.float64), "t": t.copy()}
    bad["score"][[5, 5_005, 10_005, 15_005]] = np.nan  # one NaN in each partition
    bad["y"][[7, 12_007]] = np.nan
    bad["t"][12_345] = 2
    for name, values in bad.items():
        args = {"y": y, "t": t, "score": s, name: values}
        with pytest.raises(ValueError) as in_memory:
            auuc_table(args["y"], args["t"], args["score"])
        with pytest.raises(ValueError) as on_dask:
            auuc_table(*(da.from_array(args[k], chunks=5_000) for k in ("y", "t", "score")))
        assert str(on_dask.value) == str(in_memory.value), name
        if name == "score":
            assert "got 4 NaN" in str(on_dask.value)


def test_columns_whose_blocks_hold_other_rows_are_rechunked(client):
    y, t, s = _data(n=20_000)
    ref = auuc_table(y, t, s).to_numpy()
    # as many chunks, other boundaries
    got = auuc_table(da.from_array(y, chunks=((1_000, 19_000),)),
                     da.from_array(t, chunks=((1_000, 19_000),)),
                     da.from_array(s, chunks=((19_000, 1_000),)))
    assert np.array_equal(got.to_numpy(), ref)
    # Series of two frames with as many partitions of other sizes
    first = dd.from_pandas(pd.DataFrame({"y": y, "t": t}), npartitions=4)
    second = dd.from_dask_array(da.from_array(s, chunks=((1_000, 1_000, 1_000, 17_000),)))
    assert first.npartitions == second.npartitions == 4
    got = auuc_table(first["y"], first["t"], second)
    assert np.array_equal(got.to_numpy(), ref)
    # a score of unknown chunk sizes (a map_partitions, as DaskUplift.predict returns)
    frame = dd.from_pandas(pd.DataFrame({"y": y, "t": t, "s": s}), npartitions=5)
    score = frame["s"].map_partitions(lambda part: part.copy()).to_dask_array()
    assert np.isnan(score.chunks[0][0])
    assert np.array_equal(auuc_table(frame["y"], frame["t"], score).to_numpy(), ref)
    masked = da.from_array(s, chunks=3_000)[da.from_array(np.ones(s.size, bool), chunks=3_000)]
    assert np.array_equal(auuc_table(frame["y"], frame["t"], masked).to_numpy(), ref)
    dy, dt = da.from_array(y, chunks=5_000), da.from_array(t, chunks=5_000)
    with pytest.raises(ValueError, match="score must be one-dimensional"):
        auuc_table(dy, dt, da.from_array(s[:, None], chunks=(5_000, 1)))
    with pytest.raises(ValueError, match="y must be one-dimensional"):
        auuc_table(frame[["y"]], frame["t"], frame["s"])
    with pytest.raises(ValueError, match="same length"):
        auuc_table(dy, dt, da.from_array(s[:-1], chunks=5_000))


def test_bootstrap_arguments_are_checked(client):
    from core.evaluation._dask import binned_bootstrap

    y, t, s = _data(n=10_000)
    dy, dt, ds = (da.from_array(a, chunks=5_000) for a in (y, t, s))
    with pytest.raises(ValueError, match="n_boot must be a positive integer; got 0"):
        binned_bootstrap(dy, dt, ds, n_boot=0)
    with pytest.raises(ValueError, match="bins must be a positive integer; got 0"):
        binned_bootstrap(dy, dt, ds, bins=0)
    amount = y * 2.5
    with pytest.raises(ValueError, match="needs a 0/1 outcome"):
        binned_bootstrap(da.from_array(amount, chunks=5_000), dt, ds, n_boot=2)


def test_without_a_distributed_client_dask_default_scheduler_computes(client):
    y, t, s = _data(n=10_000)
    with dask.config.set(scheduler="sync"):
        got = auuc_table(*(da.from_array(a, chunks=2_500) for a in (y, t, s)))
    assert np.array_equal(got.to_numpy(), auuc_table(y, t, s).to_numpy())
