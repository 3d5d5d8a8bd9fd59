"""core.runs.store / core.data.splits: the frozen run config and its id, stratified splits,
the run store on disk (atomic writes, npz without pickle) and the no-pickle copy of uploaded
data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.data.abdata import ABData, DataError
from core.runs.store import RunConfig, RunStore, default_runs_dir, make_splits

ROOT = Path(__file__).resolve().parents[1]
FP = "ab" * 32


def tiny_data(n: int = 200, seed: int = 0) -> ABData:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "x0": rng.normal(size=n),
        "k": rng.integers(0, 5, n),
        "city": pd.Categorical(rng.choice(["Ghent", "Leuven", "Liège"], n)),
        "level": pd.Categorical(rng.choice([3, 1, 2], n), categories=[1, 2, 3], ordered=True),
    })
    X.loc[3, "x0"] = np.nan
    X.loc[4, "city"] = np.nan
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.2 * t).astype(int)
    return ABData(X, y, t, name="tiny")


def config(**kw) -> RunConfig:
    base = {"fingerprint": FP, "model": "toy", "params": {"n_estimators": 3}}
    return RunConfig(**{**base, **kw})


# --------------------------------------------------------------------------- RunConfig
def test_config_is_frozen_hashable_and_param_order_free():
    a = config(params={"b": 1, "a": [1, 2], "c": {"y": 1.5, "x": None}})
    b = config(params={"c": {"x": None, "y": 1.5}, "a": [1, 2], "b": 1})
    assert a == b and hash(a) == hash(b) and a.run_id() == b.run_id()
    assert a.params_dict == {"a": [1, 2], "b": 1, "c": {"x": None, "y": 1.5}}
    assert {a: 1}[b] == 1
    with pytest.raises(AttributeError):
        a.seed = 3


def test_config_json_round_trip_and_canonical_form():
    c = config(dataset="world", options={"random_state": 1, "n": 500}, scheme="repeated",
               n_repeats=4, seed=7, test_size=0.25)
    text = c.to_json()
    assert RunConfig.from_json(text) == c
    assert " " not in text and list(json.loads(text)) == sorted(json.loads(text))
    assert json.loads(text)["options"] == {"n": 500, "random_state": 1}


@pytest.mark.parametrize("change", [
    {"fingerprint": "cd" * 32}, {"model": "other"}, {"params": {"n_estimators": 4}},
    {"seed": 1}, {"test_size": 0.2}, {"scheme": "repeated", "n_repeats": 2},
    {"dataset": "world"},
])
def test_run_id_changes_with_every_field(change):
    assert config(**change).run_id() != config().run_id()


def test_run_id_is_the_same_in_another_process():
    c = config(params={"lr": 0.1, "n_estimators": 5, "extra": {"b": [1, 2], "a": True}},
               scheme="repeated", n_repeats=3, seed=11)
    code = ("from core.runs.store import RunConfig; "
            f"print(RunConfig(fingerprint={FP!r}, model='toy', scheme='repeated', n_repeats=3, "
            "seed=11, params={'extra': {'a': True, 'b': [1, 2]}, 'n_estimators': 5, "
            "'lr': 0.1}).run_id())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, env={"PYTHONHASHSEED": "123", "PATH": ""}, check=True)
    assert out.stdout.strip() == c.run_id()
    assert len(c.run_id()) == 16


def test_holdout_has_one_split_and_repeated_defaults_to_ten():
    data = tiny_data()
    assert RunConfig.for_data(data, "toy", n_repeats=5).n_repeats == 1
    assert RunConfig.for_data(data, "toy", scheme="repeated").n_repeats == 10
    assert RunConfig.for_data(data, "toy").fingerprint == data.fingerprint()


@pytest.mark.parametrize("kw, match", [
    ({"fingerprint": "abc"}, "fingerprint must be a 64-character"),
    ({"model": ""}, "model must be a non-empty string"),
    ({"scheme": "kfold"}, "scheme must be one of 'holdout', 'repeated'; got 'kfold'"),
    ({"test_size": 1.0}, r"test_size must be a number in \(0, 1\); got 1.0"),
    ({"test_size": 0}, r"test_size must be a number in \(0, 1\]"),
    ({"scheme": "repeated", "n_repeats": 0}, "n_repeats must be an integer >= 1; got 0"),
    ({"seed": -1}, "seed must be an integer >= 0; got -1"),
    ({"seed": 1.5}, "seed must be an integer >= 0; got 1.5"),
    ({"params": {"random_state": np.random.default_rng()}},
     r"params\['random_state'\] must be a JSON value .*got Generator"),
    ({"params": {"lr": float("nan")}}, r"params\['lr'\] must be a finite number"),
    ({"params": [1, 2]}, "params must be a dict; got list"),
    ({"options": {"n": 5}}, "options are only allowed with a dataset key"),
])
def test_config_validation_messages(kw, match):
    with pytest.raises(ValueError, match=match):
        config(**kw)


def test_from_dict_refuses_other_versions():
    d = config().to_dict() | {"version": 99}
    with pytest.raises(ValueError, match="format version 1; got version 99"):
        RunConfig.from_dict(d)


# --------------------------------------------------------------------------- splits
def test_splits_are_stratified_on_treatment_and_outcome(rng):
    n = 1000
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < np.where(t == 1, 0.15, 0.05)).astype(int)
    cell = 2 * t + y
    splits = make_splits(y, t, scheme="repeated", test_size=0.3, n_repeats=10,
                         random_state=0)
    assert len(splits) == 10
    for train, test in splits:
        assert len(test) == 300 and len(train) == 700
        assert np.intersect1d(train, test).size == 0
        assert np.array_equal(np.union1d(train, test), np.arange(n))
        assert train.dtype == np.int64 and np.all(np.diff(test) > 0)
        for c in range(4):  # each cell's share of the test part is its overall share
            assert abs((cell[test] == c).sum() - 0.3 * (cell == c).sum()) <= 1
    assert len({tuple(te) for _, te in splits}) == 10  # ten different splits


def test_splits_are_deterministic_per_random_state(rng):
    t = rng.integers(0, 2, 300)
    y = rng.integers(0, 2, 300)
    a = make_splits(y, t, random_state=3)
    b = make_splits(y, t, random_state=3)
    c = make_splits(y, t, random_state=4)
    assert len(a) == 1 and np.array_equal(a[0][1], b[0][1])
    assert not np.array_equal(a[0][1], c[0][1])


@pytest.mark.parametrize("bad, message", [
    (-1, r"random_state must be an integer in 0 … 2\*\*32 − 1; got -1"),
    (2**32, r"random_state must be an integer in 0 … 2\*\*32 − 1; got 4294967296"),
    (True, r"random_state must be None, an integer >= 0, .*; got True \(bool\)"),
    (2.0, r"got 2.0 \(float\)")])
def test_every_seed_is_checked_alike(bad, message, rng):
    """One message for a bad seed wherever it goes: numpy's own said "expected
    non-negative integer" without naming the parameter, a model turned −1 into 2147483646
    and True read as 1."""
    from core._validation import as_generator
    from core.models import LambdaMARTUplift

    y, t = rng.integers(0, 2, 200), np.tile([0, 1], 100)
    for call in (lambda: as_generator(bad),
                 lambda: make_splits(y, t, random_state=bad),
                 lambda: LambdaMARTUplift(n_estimators=1, random_state=bad).fit(
                     np.c_[rng.random(200)], y, t)):
        with pytest.raises(ValueError, match=message):
            call()


def test_splits_refuse_a_cell_with_one_row():
    y = np.array([0, 0, 0, 1, 1, 0, 0, 1, 0, 0])
    t = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])  # one treated responder
    with pytest.raises(ValueError, match=r"treated responders: 1"):
        make_splits(y, t)


def test_splits_refuse_a_test_part_smaller_than_the_cells():
    y = np.tile([0, 1], 10)
    t = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="each part needs at least one row of each of the 4"):
        make_splits(y, t, test_size=0.1)


# --------------------------------------------------------------------------- store
class SavedModel:
    def __init__(self, w: float):
        self.w = w

    def save_model(self, path):
        Path(path).write_text(json.dumps({"w": self.w}), encoding="utf-8")


def write_run(store: RunStore, c: RunConfig, result=None):
    with store.writer(c) as w:
        for i in range(c.n_splits):
            idx = np.arange(i, i + 5)
            w.add_split(i, idx, idx % 2, (idx + 1) % 2, idx * 0.5, SavedModel(i))
        return w.commit(result or {"note": "hi"})


def test_default_root_is_env_then_platformdirs(monkeypatch, tmp_path):
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path / "r"))
    assert RunStore().root == tmp_path / "r"
    monkeypatch.delenv("UPRANK_RUNS_DIR")
    import platformdirs

    assert default_runs_dir() == Path(platformdirs.user_data_dir("uprank")) / "runs"


def test_store_write_get_list_delete(tmp_path):
    store = RunStore(tmp_path)
    c = config(scheme="repeated", n_repeats=2)
    run = write_run(store, c)
    assert store.exists(c.run_id()) and run.run_id == c.run_id()
    again = store.get(c.run_id())
    assert again.config == c and again.result["note"] == "hi" and again.n_splits == 2
    assert again.result["status"] == "done" and again.created
    s = again.scores(1)
    assert np.array_equal(s.index, np.arange(1, 6)) and s.score.dtype == np.float64
    assert s.y.dtype == np.int8 and np.array_equal(s.t, (np.arange(1, 6) + 1) % 2)
    assert json.loads(again.model_path(1).read_text()) == {"w": 1}
    with pytest.raises(ValueError, match=r"i must be a split number in 0..1; got 2"):
        again.scores(2)
    other = write_run(store, config(fingerprint="cd" * 32))
    assert {r.run_id for r in store.list()} == {c.run_id(), other.run_id}
    assert [r.run_id for r in store.list(fingerprint="cd" * 32)] == [other.run_id]
    assert store.delete(c.run_id()) and not store.exists(c.run_id())
    assert store.get(c.run_id()) is None and not store.delete(c.run_id())


def test_scores_npz_loads_without_pickle(tmp_path):
    store = RunStore(tmp_path)
    run = write_run(store, config())
    with np.load(run.path / "scores_0.npz", allow_pickle=False) as z:
        assert sorted(z.files) == ["index", "score", "t", "y"]
        assert all(z[k].dtype != object for k in z.files)


def test_runs_survive_a_new_store_instance(tmp_path):
    c = config()
    write_run(RunStore(tmp_path), c)
    fresh = RunStore(tmp_path)
    assert fresh.exists(c.run_id()) and fresh.get(c.run_id()).config == c


def test_crash_while_writing_leaves_no_run(tmp_path):
    store = RunStore(tmp_path)
    c = config(scheme="repeated", n_repeats=3)
    with pytest.raises(RuntimeError, match="simulated crash"):
        with store.writer(c) as w:
            w.add_split(0, [1, 2], [0, 1], [1, 0], [0.1, 0.2])
            raise RuntimeError("simulated crash")
    assert not store.exists(c.run_id()) and not store.path(c.run_id()).exists()
    assert store.list() == [] and list((tmp_path / "_tmp").iterdir()) == []


def test_leaving_without_commit_or_with_missing_splits_stores_nothing(tmp_path):
    store = RunStore(tmp_path)
    c = config(scheme="repeated", n_repeats=2)
    with store.writer(c) as w:
        w.add_split(0, [1], [0], [1], [0.5])
    assert not store.exists(c.run_id())
    with pytest.raises(ValueError, match=r"splits \[1\] are missing"):
        with store.writer(c) as w:
            w.add_split(0, [1], [0], [1], [0.5])
            w.commit({})
    assert not store.path(c.run_id()).exists()


def test_second_writer_of_the_same_run_keeps_the_first(tmp_path):
    store = RunStore(tmp_path)
    c = config()
    first = write_run(store, c, {"who": 1})
    second = write_run(store, c, {"who": 2})
    assert first.result["who"] == second.result["who"] == 1
    assert list((tmp_path / "_tmp").iterdir()) == []


def test_list_skips_temporary_and_broken_folders(tmp_path):
    store = RunStore(tmp_path)
    good = write_run(store, config())
    (tmp_path / ("0" * 16)).mkdir()  # no result.json: a half run from an old crash
    broken = tmp_path / ("1" * 16)
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    (broken / "result.json").write_text("{}")
    (tmp_path / "_data").mkdir()
    assert [r.run_id for r in store.list()] == [good.run_id]
    assert not store.exists("0" * 16)


def test_damaged_runs_are_named_not_listed_and_replaced_by_training_again(tmp_path):
    """A run whose result.json was truncated, or whose config.json was deleted, by hand: not
    listed, named by damaged() with what is wrong (only its dataset's, or any whose dataset
    is unknown), not 'exists' (so the same settings train again), and replaced by the new
    run's commit."""
    store = RunStore(tmp_path)
    truncated, other_data = config(), config(fingerprint="cd" * 32)
    run, kept = write_run(store, truncated), write_run(store, other_data)
    text = (run.path / "result.json").read_text()
    (run.path / "result.json").write_text(text[: len(text) // 2])
    gone = write_run(store, config(seed=5))
    (gone.path / "config.json").unlink()
    (kept.path / "result.json").write_text("[]")  # valid JSON, not a result
    assert store.list() == []
    damaged = dict(store.damaged())
    assert set(damaged) == {run.run_id, gone.run_id, kept.run_id}
    assert damaged[gone.run_id] == "config.json is missing or unreadable"
    assert damaged[run.run_id].startswith("a file is damaged")
    assert set(dict(store.damaged(fingerprint=truncated.fingerprint))) == {run.run_id,
                                                                          gone.run_id}
    assert not store.exists(run.run_id)
    again = write_run(store, truncated, {"note": "again"})
    assert store.get(run.run_id).result["note"] == "again" and again.run_id == run.run_id
    assert run.run_id not in dict(store.damaged())


def test_a_run_names_its_unreadable_score_files(tmp_path):
    store = RunStore(tmp_path)
    run = write_run(store, config(scheme="repeated", n_repeats=3))
    assert run.problem() is None
    (run.path / "scores_2.npz").unlink()
    assert run.problem() == "scores_2.npz is missing"
    (run.path / "scores_1.npz").write_bytes(b"")
    assert run.problem().startswith("scores_1.npz is damaged (")
    np.savez(run.path / "scores_0.npz", index=np.arange(3))
    assert run.problem() == "scores_0.npz lacks score, t, y"
    (run.path / "result.json").write_text('{"n_splits": "x"}')
    assert store.get(run.run_id).problem().startswith("result.json is damaged")


def test_compare_starts_with_the_newest_runs_sharing_test_rows(tmp_path):
    from core.runs.views import default_runs

    store = RunStore(tmp_path)
    runs = [write_run(store, config(seed=seed, model=model))
            for seed, model in ((0, "TwoModel"), (0, "FlippedLabel"), (1, "TwoModel"),
                                (0, "DummyTreatment"))]
    for minute, run in enumerate(runs):  # trained a minute apart, in this order
        result = json.loads((run.path / "result.json").read_text())
        result["created"] = f"2026-11-26T10:0{minute}:00+00:00"
        (run.path / "result.json").write_text(json.dumps(result))
    listed = store.list()
    assert [r.run_id for r in listed] == [r.run_id for r in runs]  # oldest first
    # the newest (seed 0) and the other seed-0 runs, not the seed-1 run in between
    assert default_runs(listed) == [runs[0].run_id, runs[1].run_id, runs[3].run_id]
    assert default_runs(listed, k=2) == [runs[1].run_id, runs[3].run_id]
    assert default_runs([]) == []


def test_settings_are_merged_atomically_and_never_break_the_app(tmp_path):
    store = RunStore(tmp_path / "runs")
    assert store.settings() == {}  # no folder yet
    assert store.save_settings({"train_seed": 7, "train_models": ["TwoModel"]})
    assert store.save_settings({"train_seed": 8})
    assert store.settings() == {"train_seed": 8, "train_models": ["TwoModel"]}
    store.settings_path.write_text("{cut off")
    assert store.settings() == {}  # unreadable: start from the defaults
    blocked = tmp_path / "a file"
    blocked.write_text("")
    assert not RunStore(blocked / "runs").save_settings({"x": 1})  # cannot write: False
    assert store.list() == [] and store.damaged() == []  # not a run
    from core.runs.store import _mtime

    assert _mtime(tmp_path / "deleted by another tab") == 0.0  # damaged() never fails on it


@pytest.mark.parametrize("bad", ["../etc", "ABCDEF0123456789", "abc", None])
def test_run_ids_are_checked_before_touching_the_disk(tmp_path, bad):
    with pytest.raises(ValueError, match="run_id must be 16 lower-case hex digits"):
        RunStore(tmp_path).get(bad)


# --------------------------------------------------------------------------- data copies
def test_data_copy_round_trip_keeps_fingerprint_and_dtypes(tmp_path):
    store = RunStore(tmp_path)
    data = tiny_data()
    fp = store.save_data(data)
    assert fp == data.fingerprint() and store.has_data(fp)
    back = store.load_data(fp)
    assert back.fingerprint() == fp and back.name == "tiny"
    pd.testing.assert_frame_equal(back.X, data.X)
    assert np.array_equal(back.y, data.y) and np.array_equal(back.t, data.t)
    with np.load(store.data_path(fp), allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)


def test_data_copy_of_an_abn_upload_keeps_its_arms(tmp_path):
    """The two-arm view of an A/B/n upload (what one-treatment models train on) hashes the
    experiment's arms too: its copy for the training process keeps them, so it loads with
    the same fingerprint (before, every such training failed with "damaged")."""
    from core.data import read_ab_csv

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.normal(size=200), "spend": rng.gamma(2, 3, 200).round(2),
                          "offer": rng.choice(["none", "A", "B"], 200, p=[0.5, 0.3, 0.2])})
    data = read_ab_csv(frame.to_csv(index=False).encode(), name="abn.csv", treatment="offer",
                       outcome="spend", control_value="none", all_arms=True,
                       outcome_kind="continuous")
    store = RunStore(tmp_path)
    back = store.load_data(store.save_data(data))
    assert back.fingerprint() == data.fingerprint()
    m, b = data.multiarm, back.multiarm
    assert b.arms == m.arms == ["none", "A", "B"] and b.design_assumed == m.design_assumed
    np.testing.assert_array_equal(b.t, m.t)
    np.testing.assert_array_equal(b.y, frame["spend"].to_numpy())
    np.testing.assert_array_equal(b.design, m.design)
    np.testing.assert_array_equal(back.y, frame["spend"].to_numpy() > 0)
    # a copy written before the arms were kept (format 1: no "format", no arms) is replaced
    path = store.data_path(data.fingerprint())
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(str(z["header"]))
        old = {k: z[k] for k in z.files if not k.startswith("arm_")}
    del header["format"], header["multiarm"]
    old["header"] = np.array(json.dumps(header))
    with open(path, "wb") as fh:
        np.savez(fh, **old)
    with pytest.raises(DataError, match="damaged"):
        store.load_data(data.fingerprint())
    assert store.load_data(store.save_data(data)).fingerprint() == data.fingerprint()
    part = data.subset(np.arange(0, 200, 3))  # e.g. a run's test rows (Interleaving page)
    assert store.load_data(store.save_data(part)).fingerprint() == part.fingerprint()


def test_data_copy_refuses_a_tampered_file(tmp_path):
    store = RunStore(tmp_path)
    data = tiny_data()
    fp = store.save_data(data)
    other = RunStore(tmp_path / "other")
    other_fp = other.save_data(tiny_data(seed=1))
    store.data_path(fp).write_bytes(other.data_path(other_fp).read_bytes())
    with pytest.raises(DataError, match="damaged"):
        store.load_data(fp)
    with pytest.raises(DataError, match="upload the file again"):
        store.load_data("ef" * 32)


def test_data_copy_refuses_unstorable_columns(tmp_path):
    X = pd.DataFrame({"when": pd.date_range("2024-01-01", periods=4)})
    data = ABData(X, [0, 1, 0, 1], [0, 0, 1, 1])
    with pytest.raises(DataError, match="Column 'when' has dtype datetime64"):
        RunStore(tmp_path).save_data(data)


def test_the_decile_chart_starts_with_the_best_run_at_the_cutoff():
    from core.runs.views import best_run

    summary = pd.DataFrame({"AUUC@30%": [0.001, 0.004, np.nan, 0.002],
                            "AUUC@100%": [0.05, 0.01, 0.02, 0.03]},
                           index=["baseline", "model", "broken", "Random targeting"])
    labels = {"id1": "baseline", "id2": "model", "id3": "broken"}
    assert best_run(summary, labels, 0.3) == "id2"
    assert best_run(summary, labels, 1.0) == "id1"
    assert best_run(summary, {"id3": "broken"}, 0.3) == "id3"  # nothing finite: the first
