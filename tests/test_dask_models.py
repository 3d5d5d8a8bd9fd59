"""Uplift models trained by LightGBM's Dask estimators on a real LocalCluster (2 worker
processes) agree with the same models trained in memory within seed noise: both find the
known effect of the Criteo-like stand-in, and their test AUUCs differ by less than the
spread of in-memory models over seeds.  Columns the in-memory models refuse are refused with
their messages; empty partitions and arms on few partitions train; the models' own Dask
predictions evaluate as in memory."""

from __future__ import annotations

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from core.data import make_criteo_like  # noqa: E402
from core.evaluation import auuc, auuc_table  # noqa: E402
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


def test_models_train_on_a_parquet_file_with_columns_the_models_do_not_read(dask_client,
                                                                           tmp_path):
    # a Criteo-like file holds more columns than a model reads (conversion, exposure, …):
    # read with columns=, persist fused 20 partitions into 10 futures while the collection
    # still claimed 20, and both fits failed in LightGBM's wait(): "lost dependencies"
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = make_criteo_like(200_000, random_state=3)
    rng = np.random.default_rng(0)
    table = data.X.assign(treatment=data.t, visit=data.y,
                          **{f"unread{i}": rng.random(len(data.y)) for i in range(12)})
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path,
                   row_group_size=10_000)
    frame = dd.read_parquet(path, split_row_groups=True,
                            columns=FEATURES + ["treatment", "visit"]).partitions[:15]
    treated = frame[frame["treatment"] == 1][FEATURES + ["visit"]]
    assert treated.optimize().npartitions < treated.npartitions == 15  # the reads fuse
    for fit in (fit_two_model_dask, fit_lambdamart_dask):
        model = fit(frame, features=FEATURES, treatment="treatment", outcome="visit",
                    n_estimators=10, random_state=0)
        score = model.predict(table.iloc[150_000:])
        assert np.corrcoef(score, data.tau[150_000:])[0, 1] > 0.1, fit.__name__


# ------------------------------------------------------------------ review fixes
@pytest.fixture(scope="module")
def small():
    data = make_criteo_like(20_000, random_state=0)
    frame = data.X.assign(treatment=data.t, visit=data.y)
    return data, frame


def _bad_columns(frame):
    """Outcome / treatment columns the in-memory models refuse, each confined to a part of
    the rows (so a partition-by-partition check would word it for that partition only)."""
    half = np.arange(len(frame)) >= len(frame) // 2
    nan_y = frame["visit"].astype(np.float64).mask(np.arange(len(frame)) % 5_000 == 3)
    return {
        "outcome in {0, 0.5}": (frame.assign(visit=frame["visit"] * 0.5), ("lambdamart",)),
        "NaN outcome": (frame.assign(visit=nan_y), ("lambdamart", "two_model")),
        "treatment 0.5 on half the rows": (
            frame.assign(treatment=np.where(half, 0.5, frame["treatment"])),
            ("lambdamart", "two_model")),
        "treatment coded 0/2": (frame.assign(treatment=frame["treatment"] * 2),
                                ("lambdamart", "two_model")),
        "no treated rows": (frame.assign(treatment=0), ("lambdamart", "two_model")),
    }


def test_bad_outcome_or_treatment_gets_the_in_memory_message(dask_client, small):
    _, frame = small
    fits = {"lambdamart": (fit_lambdamart_dask, LambdaMARTUplift),
            "two_model": (fit_two_model_dask, TwoModel)}
    for label, (bad, models) in _bad_columns(frame).items():
        for name in models:
            fit, in_memory = fits[name]
            with pytest.raises(ValueError) as expected:
                in_memory(n_estimators=2, num_threads=1).fit(bad[FEATURES], bad["visit"],
                                                             bad["treatment"])
            with pytest.raises(ValueError) as got:
                fit(dd.from_pandas(bad, npartitions=4), features=FEATURES,
                    treatment="treatment", outcome="visit", n_estimators=2)
            assert str(got.value) == str(expected.value), (label, name)


def test_empty_partitions_and_one_arm_per_partition_train(dask_client, small):
    """A filtered split leaves empty partitions; rows sorted by treatment leave each arm on
    some partitions only.  Both train, on the partitions that hold rows (of the arm)."""
    data, frame = small
    parts = dd.from_pandas(frame.assign(split=np.where(np.arange(data.n) < 5_000, "test",
                                                       "train")), npartitions=4)
    train = parts[parts["split"] == "train"]
    assert 0 in train.map_partitions(len).compute().tolist()
    ordered = dd.from_pandas(frame.sort_values("treatment", kind="stable"), npartitions=4,
                             sort=False)
    control = ordered["treatment"].map_partitions(lambda t: int((t == 0).sum()))
    assert control.compute().tolist()[1:] == [0, 0, 0]  # the control rows: partition 0
    for fit in (fit_two_model_dask, fit_lambdamart_dask):
        for rows in (train, ordered):
            model = fit(rows, features=FEATURES, treatment="treatment", outcome="visit",
                        n_estimators=10, random_state=0)
            score = model.predict(frame)
            assert np.corrcoef(score, data.tau)[0, 1] > 0.1, fit.__name__


def test_the_dask_predictions_of_a_model_evaluate_as_in_memory(dask_client, small):
    data, frame = small
    parts = dd.from_pandas(frame, npartitions=4)
    model = fit_lambdamart_dask(parts, features=FEATURES, treatment="treatment",
                                outcome="visit", n_estimators=5, random_state=0)
    lazy = model.predict(parts)  # a Dask array of unknown chunk sizes
    got = auuc_table(parts["visit"], parts["treatment"], lazy)
    expected = auuc_table(data.y, data.t, model.predict(frame))
    assert np.array_equal(got.to_numpy(), expected.to_numpy())


def test_plain_messages_for_wrong_frames_and_columns(dask_client, small):
    _, frame = small
    parts = dd.from_pandas(frame, npartitions=2)
    kw = {"features": FEATURES, "treatment": "treatment", "outcome": "visit",
          "n_estimators": 2}
    for fit in (fit_two_model_dask, fit_lambdamart_dask):
        with pytest.raises(ValueError, match="frame must be a Dask DataFrame; got a pandas"):
            fit(frame, **kw)
        with pytest.raises(ValueError, match=r"outcome names column\(s\) \['visits'\] that "
                                             r"frame does not have; its columns are \['f0'"):
            fit(parts, **{**kw, "outcome": "visits"})
        with pytest.raises(ValueError, match=r"features names column\(s\) \['zz'\]"):
            fit(parts, **{**kw, "features": FEATURES + ["zz"]})


def test_no_lightgbm_chatter_on_the_client(dask_client, small, capsys):
    import warnings

    _, frame = small
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_two_model_dask(dd.from_pandas(frame, npartitions=2), features=FEATURES,
                           treatment="treatment", outcome="visit", n_estimators=2)
    assert "Finding random open ports" not in capsys.readouterr().out
    assert not [w for w in caught if "n_jobs" in str(w.message)]


def test_two_model_on_an_amount_fits_regressions(dask_client, small):
    """As TwoModel in memory: an amount gets one regression per arm (squared error), whose
    mean prediction over its arm's rows is the arm's mean amount."""
    data, frame = small
    rng = np.random.default_rng(1)
    amount = frame.assign(visit=frame["visit"] * rng.gamma(2.0, 30.0, len(frame)))
    model = fit_two_model_dask(dd.from_pandas(amount, npartitions=4), features=FEATURES,
                               treatment="treatment", outcome="visit", n_estimators=20)
    for arm, booster in zip((1, 0), model.models, strict=True):
        rows = amount[amount["treatment"] == arm]
        assert not hasattr(booster, "predict_proba")
        assert booster.predict(rows[FEATURES]).mean() == pytest.approx(
            rows["visit"].mean(), rel=0.02)


def test_feature_names_lightgbm_refuses_train_on_dask_too(dask_client, small):
    """'Revenue, 2023' or 'clicks:7d' (LightGBM: "Do not support special JSON characters in
    feature name"): the same predictions as with plain names."""
    data, frame = small
    odd = {f: n for f, n in zip(FEATURES[:3], ["Revenue, 2023", "clicks:7d", "x{1}"])}
    renamed = frame.rename(columns=odd)
    names = [odd.get(f, f) for f in FEATURES]
    for fit in (fit_two_model_dask, fit_lambdamart_dask):
        plain = fit(dd.from_pandas(frame, npartitions=1), features=FEATURES,
                    treatment="treatment", outcome="visit", n_estimators=5, random_state=0)
        model = fit(dd.from_pandas(renamed, npartitions=1), features=names,
                    treatment="treatment", outcome="visit", n_estimators=5, random_state=0)
        np.testing.assert_allclose(model.predict(renamed), plain.predict(frame))
