"""Uplift models trained by LightGBM's Dask estimators on a real LocalCluster (2 worker
processes) agree with the same models trained in memory within seed noise: both find the
known effect of the Criteo-like stand-in, and their test AUUCs differ by less than the
spread of in-memory models over seeds."""

from __future__ import annotations

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from core.data import make_criteo_like  # noqa: E402
from core.evaluation import auuc  # noqa: E402
from core.models import LambdaMARTUplift, TwoModel  # noqa: E402
from core.models.distributed import fit_lambdamart_dask, fit_two_model_dask  # noqa: E402

FEATURES = [f"f{j}" for j in range(12)]


@pytest.fixture(scope="module")
def split():
    data = make_criteo_like(120_000, random_state=5)
    frame = data.X.assign(treatment=data.t, visit=data.y)
    train, test = frame.iloc[:80_000], frame.iloc[80_000:]
    return data, dd.from_pandas(train, npartitions=4), train, test


def _test_auuc(test, score):
    return auuc(test["visit"].to_numpy(), test["treatment"].to_numpy(), score,
                definition="uplift_sep_rel", cutoff=0.3)


def test_two_model_on_dask_matches_in_memory_within_seed_noise(dask_client, split):
    data, parts, train, test = split
    model = fit_two_model_dask(parts, features=FEATURES, treatment="treatment",
                               outcome="visit", n_estimators=60, random_state=0)
    score = model.predict(test)
    lazy = model.predict(dd.from_pandas(test, npartitions=3)).compute()
    np.testing.assert_allclose(lazy, score)  # a Dask frame scores the same rows the same
    local = [_test_auuc(test, TwoModel(n_estimators=60, learning_rate=0.1, num_threads=1,
                                       random_state=seed).fit(train[FEATURES], train["visit"],
                                                              train["treatment"])
                        .predict(test[FEATURES])) for seed in range(3)]
    tau = data.tau[80_000:]
    assert np.corrcoef(score, tau)[0, 1] > 0.15  # it finds the known effect (in memory: 0.22)
    assert abs(_test_auuc(test, score) - np.mean(local)) < max(3 * np.std(local), 0.002)


def test_lambdamart_pcg_on_dask_with_partition_local_blocks(dask_client, split):
    data, parts, train, test = split
    model = fit_lambdamart_dask(parts, features=FEATURES, treatment="treatment",
                                outcome="visit", block_rows=5_000, n_estimators=60,
                                random_state=0)
    score = model.predict(test)
    local = [_test_auuc(test, LambdaMARTUplift(block_rows=5_000, n_estimators=60,
                                               learning_rate=0.1, num_threads=1,
                                               random_state=seed)
                        .fit(train[FEATURES], train["visit"], train["treatment"])
                        .predict(test[FEATURES])) for seed in range(3)]
    assert np.corrcoef(score, data.tau[80_000:])[0, 1] > 0.3
    assert abs(_test_auuc(test, score) - np.mean(local)) < max(3 * np.std(local), 0.002)


def test_models_train_on_a_parquet_read_whose_columns_fuse_differently(dask_client, tmp_path):
    # dask's optimiser fuses the partitions of a Parquet read by the share of columns read:
    # left lazy, 12 feature columns and the outcome column get different partitionings,
    # which LightGBM's Dask estimators refuse (they pair X and y partition by partition)
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = make_criteo_like(200_000, random_state=3)
    table = data.X.assign(treatment=data.t, visit=data.y, tau=data.tau.astype(np.float32))
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path,
                   row_group_size=10_000)
    frame = dd.read_parquet(path, split_row_groups=True)
    treated = frame[frame["treatment"] == 1]
    assert treated[FEATURES].optimize().npartitions != treated["visit"].optimize().npartitions
    test = table.iloc[:20_000]
    for fit in (fit_two_model_dask, fit_lambdamart_dask):
        model = fit(frame, features=FEATURES, treatment="treatment", outcome="visit",
                    n_estimators=10, random_state=0)
        score = model.predict(test)
        assert np.corrcoef(score, data.tau[:20_000])[0, 1] > 0.1, fit.__name__
