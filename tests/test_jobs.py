"""core.runs.jobs: background training in worker processes — queueing, dedupe, cached runs, cancel
within 2 s, failure isolation, sessions, progress, restarts, and one real LightGBM model.

Most tests train :class:`ToyModel`, a fake model that sleeps per "boosting round", through
the documented ``model_factory`` hook (``"module:attribute"``, imported in the worker), so
the runner is tested apart from the real models.  One module-wide runner (one warm worker)
serves most tests: jobs are told apart by their configs and sessions.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.data.abdata import ABData
from core.runs.jobs import JobRunner, RunsDirError
from core.runs.store import RunConfig, RunStore

ROOT = Path(__file__).resolve().parents[1]
WAIT = 60.0  # generous: a cold worker imports NumPy, pandas, scikit-learn and LightGBM


class ToyModel:
    """A fake uplift model: ``n_estimators`` rounds of ``sleep`` seconds, each reported to the
    callback (unless ``report=False``: one silent sleep); ``fail`` raises ``ValueError``;
    ``counter`` gets one line per ``fit`` (evidence of training); ``crash`` kills the
    process."""

    def __init__(self, n_estimators: int = 5, sleep: float = 0.0, fail: str | None = None,
                 counter: str | None = None, report: bool = True, tag: int = 0,
                 crash: bool = False, random_state: int | None = None):
        self.n_estimators, self.sleep, self.fail, self.counter = n_estimators, sleep, fail, counter
        self.report, self.tag, self.crash, self.random_state = report, tag, crash, random_state

    def get_params(self, deep: bool = False) -> dict:
        return {k: getattr(self, k) for k in ("n_estimators", "sleep", "fail", "counter",
                                              "report", "tag", "crash", "random_state")}

    def set_params(self, **params) -> ToyModel:
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y, treatment, *, callback=None) -> ToyModel:
        if self.counter:
            with open(self.counter, "a", encoding="utf-8") as fh:
                fh.write("fit\n")
        if self.fail:
            raise ValueError(self.fail)
        if self.crash:  # like a segfault in native code: the process just dies
            os._exit(3)
        if not self.report:
            time.sleep(self.sleep)
        for r in range(1, self.n_estimators + 1):
            if self.report and self.sleep:
                time.sleep(self.sleep)
            if callback is not None and self.report:
                callback(r, self.n_estimators)
        y, t = np.asarray(y), np.asarray(treatment)
        self.coef_ = float(y[t == 1].mean() - y[t == 0].mean())
        return self

    def predict(self, X) -> np.ndarray:
        return X["x0"].fillna(0.0).to_numpy(dtype=float) * self.coef_

    def save_model(self, path) -> None:
        Path(path).write_text(json.dumps({"coef": self.coef_}), encoding="utf-8")


class TwoModel(ToyModel):
    """Reports its rounds as :class:`core.models.TwoModel` does: two models of ``n_estimators``
    rounds each, counted as one run of ``total = 2·n_estimators`` (the worker knows the class
    by its name)."""

    def fit(self, X, y, treatment, *, callback=None) -> TwoModel:
        n = self.n_estimators
        for r in range(1, 2 * n + 1):
            time.sleep(self.sleep)
            if callback is not None:
                callback(r, 2 * n)
        y, t = np.asarray(y), np.asarray(treatment)
        self.coef_ = float(y[t == 1].mean() - y[t == 0].mean())
        return self


def make_toy_model(name: str, **params):
    """Model factory for the tests: "toy" is :class:`ToyModel`, "two" the toy
    :class:`TwoModel`, anything else a real model."""
    if name == "toy":
        return ToyModel(**params)
    if name == "two":
        return TwoModel(**params)
    from core.models import make_model

    return make_model(name, **params)


FACTORY = f"{__name__}:make_toy_model"


def tiny_data(n: int = 300, seed: int = 0) -> ABData:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x0": rng.normal(size=n),
                      "city": pd.Categorical(rng.choice(["Ghent", "Leuven"], n))})
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.2 * t).astype(int)
    return ABData(X, y, t, name="tiny")


DATA = tiny_data()


def toy(data: ABData = DATA, **params) -> RunConfig:
    return RunConfig.for_data(data, "toy", params)


def poll(runner: JobRunner, job_id: str, until, timeout: float = WAIT):
    """Status of ``job_id`` once ``until(status)`` holds (polled, with a timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = runner.status(job_id)
        if until(s):
            return s
        assert not s.is_final, f"job ended before the condition held: {s}"
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting on {runner.status(job_id)}")


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    r = JobRunner(max_workers=1, store=tmp_path_factory.mktemp("runs"), model_factory=FACTORY)
    r.warm_up()
    yield r
    r.shutdown()


# --------------------------------------------------------------------------- queue
def test_queued_jobs_run_one_after_another_and_all_finish(runner):
    ids = [runner.submit(toy(n_estimators=5, sleep=0.02, tag=i), data=DATA, session="q")
           for i in range(3)]
    done = [runner.wait(j, WAIT) for j in ids]
    assert [s.state for s in done] == ["done"] * 3
    assert done[1].started >= done[0].finished and done[2].started >= done[1].finished
    assert [s.job_id for s in runner.jobs(session="q")] == ids
    for s in done:
        assert runner.store.exists(s.run_id) and s.fraction == 1.0
        assert s.round == s.total == 5 and s.message.startswith("Trained in")


def test_identical_submissions_share_one_job(runner, tmp_path):
    counter = tmp_path / "fits.txt"
    c = toy(n_estimators=10, sleep=0.05, counter=str(counter))
    first = runner.submit(c, data=DATA, session="tab1")
    second = runner.submit(c, data=DATA, session="tab2")
    assert first == second
    assert runner.status(first).sessions == ("tab1", "tab2")
    assert runner.wait(first, WAIT).state == "done"
    assert counter.read_text().count("fit") == 1
    assert first in [s.job_id for s in runner.jobs("tab2")]

    # the run is stored: a third tab gets it at once, without training
    third = runner.submit(c, data=DATA, session="tab3")
    s = runner.status(third)
    assert third != first and s.state == "cached" and s.started is None
    assert s.run_id == c.run_id() and s.fraction == 1.0
    assert counter.read_text().count("fit") == 1


def test_runs_survive_a_restart(runner, tmp_path):
    c = toy(n_estimators=3, tag=77)
    assert runner.wait(runner.submit(c, data=DATA), WAIT).state == "done"
    with JobRunner(store=RunStore(runner.store.root), model_factory=FACTORY) as fresh:
        job = fresh.submit(c)  # no data needed: the run is stored
        s = fresh.status(job)
        assert s.state == "cached" and s.started is None and s.is_final
        run = fresh.store.get(s.run_id)
        assert run.config == c and run.result["data_name"] == "tiny"
        assert run.result["model_random_state"] == c.seed  # seeded from the config


def test_shared_job_cancelled_by_one_session_keeps_running_for_the_other(runner):
    c = toy(n_estimators=400, sleep=0.01, tag=5)
    j = runner.submit(c, data=DATA, session="s1")
    assert runner.submit(c, data=DATA, session="s2") == j
    assert not runner.cancel(j, session="intruder")  # not its job
    assert runner.cancel(j, session="s1")
    s = runner.status(j)
    assert s.state in ("queued", "running") and s.sessions == ("s2",)
    assert j not in [x.job_id for x in runner.jobs("s1")]
    assert runner.cancel(j)
    assert runner.wait(j, WAIT).state == "cancelled"


# --------------------------------------------------------------------------- cancel
def test_cancel_stops_a_running_job_at_its_next_round(runner, monkeypatch):
    # no forced stop after 1 s if the machine stalls: only the model's own stop can end it
    monkeypatch.setattr(runner, "cancel_grace", WAIT)
    c = toy(n_estimators=2000, sleep=0.05)  # 100 s if never stopped
    job = runner.submit(c, data=DATA)
    poll(runner, job, lambda s: s.round >= 3)
    assert runner.cancel(job)
    s = runner.wait(job, WAIT)
    # the model stopped itself at a round's callback ("Cancelled."), not killed after the
    # grace period ("… the training process was stopped"): no wall-clock limit to race
    assert (s.state, s.message) == ("cancelled", "Cancelled."), s
    assert 3 <= s.round < s.total == 2000
    assert not runner.store.exists(c.run_id())
    job_dir = runner.store.root / "_jobs" / job
    assert not list(job_dir.glob(f"{c.run_id()}-*"))  # no half-written run left
    assert not runner.cancel(job)  # already final


def test_cancel_kills_a_model_that_never_reports_then_the_next_job_runs(runner):
    c = toy(n_estimators=1, sleep=60.0, report=False)  # one silent 60 s round
    job = runner.submit(c, data=DATA)
    poll(runner, job, lambda s: s.split == 1)  # inside fit
    with runner._lock:  # the worker cannot be stopped meanwhile: the request is seen
        runner.cancel(job)
        s = runner.status(job)
    assert s.state == "running" and s.cancelling and s.message == "Cancelling…"
    s = runner.wait(job, WAIT)
    # killed after the grace period, long before its silent 60 s round could end
    assert (s.state, s.message) == ("cancelled", "Cancelled (the training process was stopped).")
    assert not runner.store.exists(c.run_id())
    after = runner.wait(runner.submit(toy(n_estimators=2, tag=9), data=DATA), WAIT)
    assert after.state == "done"  # a fresh worker took over


def test_cancel_a_queued_job_removes_it_from_the_queue(runner, tmp_path):
    counter = tmp_path / "fits.txt"
    long = runner.submit(toy(n_estimators=400, sleep=0.01, tag=1), data=DATA)
    queued = runner.submit(toy(n_estimators=2, counter=str(counter)), data=DATA)
    s = runner.status(queued)
    assert s.state == "queued" and s.position == 1 and s.message == "Queued (next)"
    assert runner.cancel(queued)
    s = runner.status(queued)
    assert s.state == "cancelled" and s.started is None
    runner.cancel(long)
    assert runner.wait(long, WAIT).state == "cancelled"
    assert not counter.exists()


# --------------------------------------------------------------------------- failures
def test_a_failing_job_is_reported_and_the_next_one_still_runs(runner):
    bad = runner.submit(toy(fail="too few responders in the treated arm"), data=DATA)
    s = runner.wait(bad, WAIT)
    assert s.state == "failed"
    assert s.message == "Training failed: too few responders in the treated arm"
    log = runner.log(bad)
    assert "Traceback" in log and "ValueError: too few responders" in log
    assert s.log_path and Path(s.log_path).is_file()
    good = runner.wait(runner.submit(toy(n_estimators=2, tag=2), data=DATA), WAIT)
    assert good.state == "done"


def test_a_crashed_worker_fails_its_job_and_a_new_worker_takes_the_next(runner):
    s = runner.wait(runner.submit(toy(crash=True), data=DATA), WAIT)
    log = runner.store.root / "_jobs" / s.job_id / "log.txt"
    assert s.state == "failed"
    assert s.message == f"The training process stopped unexpectedly (exit code 3). Its log: {log}"
    assert "exited with code 3" in log.read_text()
    assert runner.wait(runner.submit(toy(n_estimators=2, tag=3), data=DATA), WAIT).state == "done"


def test_a_worker_killed_by_the_system_names_the_likely_cause_and_its_run_goes(runner):
    c = toy(n_estimators=2000, sleep=0.05, tag=41)  # 100 s if never stopped
    job = runner.submit(c, data=DATA)
    poll(runner, job, lambda s: s.round >= 1)
    job_dir = runner.store.root / "_jobs" / job
    assert list(job_dir.glob(f"{c.run_id()}-*"))  # the run it is writing
    (worker,) = runner._workers
    os.kill(worker.proc.pid, signal.SIGKILL)  # what the kernel's out-of-memory killer sends
    s = runner.wait(job, WAIT)
    log = job_dir / "log.txt"
    assert s.state == "failed"
    assert s.message == ("The training process stopped unexpectedly: it was killed (SIGKILL), "
                         "most likely by the system because the machine ran out of memory. "
                         f"Its log: {log}")
    assert "exited with code -9" in log.read_text()
    assert not list(job_dir.glob(f"{c.run_id()}-*"))  # no half-written run left behind


def test_submit_refuses_a_runs_directory_that_cannot_be_written(tmp_path):
    # running as root, permissions do not stop writes: a runs directory under a file does
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    root = blocker / "runs"
    r = JobRunner(store=root, model_factory=FACTORY)
    expected = (f"The runs directory {root} cannot be written ({os.strerror(errno.ENOTDIR)}), "
                "so no trained run could be stored there.")
    with pytest.raises(RunsDirError, match=re.escape(expected)) as caught:
        r.submit(toy(tag=46), data=DATA, session="ro")
    assert isinstance(caught.value, ValueError)  # so a page shows the sentence as it is
    assert r.jobs() == [] and r._workers == []  # nothing queued, no worker started
    r.shutdown()


def test_a_run_that_cannot_be_saved_says_so_without_temporary_paths(runner):
    c = toy(n_estimators=3, tag=42)
    in_the_way = runner.store.root / c.run_id()  # a file where the run goes: no rename onto it
    in_the_way.write_text("")
    try:
        s = runner.wait(runner.submit(c, data=DATA), WAIT)
    finally:
        in_the_way.unlink()
    assert s.state == "failed"
    assert s.message == (f"Training finished but the run could not be saved to "
                         f"{runner.store.root}: {os.strerror(errno.ENOTDIR)}.")
    assert "Traceback" in runner.log(s.job_id)  # the details stay in the log
    job_dir = runner.store.root / "_jobs" / s.job_id
    assert not list(job_dir.glob(f"{c.run_id()}-*"))


def test_a_job_whose_folder_cannot_be_made_fails_alone_and_the_worker_stays(runner,
                                                                             monkeypatch):
    monkeypatch.setattr(runner, "cancel_grace", 60.0)  # the worker stops by itself, unkilled
    long = runner.submit(toy(n_estimators=400, sleep=0.01, tag=43), data=DATA)
    poll(runner, long, lambda s: s.round >= 1)
    (worker,) = runner._workers
    queued = runner.submit(toy(n_estimators=2, tag=44), data=DATA)
    folder = runner.store.root / "_jobs" / queued
    shutil.rmtree(folder, ignore_errors=True)
    folder.write_text("")  # a file where its folder should be
    runner.cancel(long)
    s = runner.wait(queued, WAIT)
    assert s.state == "failed"
    assert s.message == (f"Could not create the job's folder in {runner.store.root / '_jobs'}: "
                         f"{os.strerror(errno.EEXIST)}.")
    after = runner.wait(runner.submit(toy(n_estimators=2, tag=45), data=DATA), WAIT)
    assert after.state == "done"
    assert runner._workers == [worker] and worker.alive()  # the same worker ran it


def test_a_dataset_that_changed_fails_with_a_clear_message(runner):
    c = RunConfig(fingerprint="ab" * 32, model="toy", dataset="world",
                  options={"n": 500, "random_state": 0})
    s = runner.wait(runner.submit(c), WAIT)
    assert s.state == "failed"
    assert "differs from the one the run was set up with" in s.message


def test_submit_checks_its_arguments(runner):
    with pytest.raises(TypeError, match="config must be a RunConfig; got dict"):
        runner.submit({"model": "toy"})
    with pytest.raises(ValueError, match="data must be the data the config was made for"):
        runner.submit(toy(), data=tiny_data(seed=5))
    with pytest.raises(ValueError, match="pass data= the ABData"):
        runner.submit(toy(tiny_data(seed=6)))
    with pytest.raises(ValueError, match="session must be None or a string; got int"):
        runner.submit(toy(), data=DATA, session=3)
    with pytest.raises(KeyError, match="Unknown job id"):
        runner.status("nope")


# --------------------------------------------------------------------------- sessions
def test_two_sessions_submitting_at_once_see_only_their_own_jobs(runner):
    barrier, ids, errors = threading.Barrier(2), {}, []

    def session(name: str, tag: int) -> None:
        try:
            barrier.wait(5)
            ids[name] = [runner.submit(toy(n_estimators=3, sleep=0.01, tag=tag + k),
                                       data=DATA, session=name) for k in range(2)]
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=session, args=("A", 100)),
               threading.Thread(target=session, args=("B", 200))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert not errors
    assert [s.job_id for s in runner.jobs("A")] == ids["A"]
    assert [s.job_id for s in runner.jobs("B")] == ids["B"]
    assert all(runner.wait(j, WAIT).state == "done" for j in ids["A"] + ids["B"])


# --------------------------------------------------------------------------- progress
def test_progress_is_monotone_and_reaches_the_total(runner):
    # 3 s in all: the progress file is written at most 10 times a second, and a test
    # process descheduled for a while must still see several readings
    c = RunConfig.for_data(DATA, "toy", {"n_estimators": 20, "sleep": 0.05},
                           scheme="repeated", n_repeats=3)
    job = runner.submit(c, data=DATA)
    seen = []
    deadline = time.monotonic() + WAIT
    while (s := runner.status(job)).state in ("queued", "running"):
        assert time.monotonic() < deadline
        assert s.eta is None or s.eta >= 0
        if s.total:
            seen.append((s.split - 1) * s.total + s.round)
        time.sleep(0.02)
    assert s.state == "done" and (s.split, s.round, s.total, s.n_splits) == (3, 20, 20, 3)
    assert seen == sorted(seen) and len(set(seen)) >= 3
    assert all(0 <= u <= 60 for u in seen)
    assert len(runner.store.get(s.run_id).result["fit_seconds"]) == 3


def test_two_model_progress_counts_the_budget_of_each_model(runner):
    c = RunConfig.for_data(DATA, "two", {"n_estimators": 30, "sleep": 0.01})
    job = runner.submit(c, data=DATA)
    seen = []
    deadline = time.monotonic() + WAIT
    while (s := runner.status(job)).state in ("queued", "running"):
        assert time.monotonic() < deadline
        if s.total:
            assert s.total == 30 and s.n_parts == 2 and 0 <= s.round <= 30
            seen.append((s.part, s.part_name, s.round, s.fraction))
        time.sleep(0.02)
    assert s.state == "done" and (s.part, s.round, s.total) == (2, 30, 30)
    assert s.part_name == "control-arm model" and s.fraction == 1.0
    parts = {p: name for p, name, _, _ in seen}
    assert parts.get(1, "treated-arm model") == "treated-arm model"
    assert parts.get(2, "control-arm model") == "control-arm model"
    # the share done follows both models: round r of model 2 is (30 + r) / 60
    assert all(abs(f - ((p - 1) * 30 + r) / 60) < 1e-9 for p, _, r, f in seen)
    assert [(p, r) for p, _, r, _ in seen] == sorted((p, r) for p, _, r, _ in seen)


def toy_task(params: dict, *, inputs: dict, store, progress) -> tuple[dict, dict]:
    """A background task for the tests: reports done at once."""
    progress(1.0, "Done")
    return {"tag": params.get("tag")}, {}


def test_jobs_carry_the_fingerprint_of_their_data_and_can_be_filtered(runner):
    from core.runs.tasks import TaskSpec

    other = tiny_data(seed=1)
    fp, fp_other = DATA.fingerprint(), other.fingerprint()
    a = runner.submit(toy(tag=301), data=DATA, session="fp")
    b = runner.submit(toy(other, tag=302), data=other, session="fp", data_name="Other tiny")
    task = runner.submit_task(TaskSpec.make(f"{__name__}:toy_task",
                                            {"fingerprint": fp_other, "tag": 303}), session="fp")
    free = runner.submit_task(TaskSpec.make(f"{__name__}:toy_task",
                                            {"fingerprint": None, "tag": 304}), session="fp")
    for j in (a, b, task, free):
        assert runner.wait(j, WAIT).state == "done", runner.log(j)
    assert [runner.status(j).fingerprint for j in (a, b, task, free)] == [fp, fp_other,
                                                                          fp_other, None]
    assert [s.job_id for s in runner.jobs("fp", fingerprint=fp)] == [a]
    assert [s.job_id for s in runner.jobs("fp", fingerprint=fp_other)] == [b, task]
    assert [s.job_id for s in runner.jobs("fp")] == [a, b, task, free]
    assert runner.jobs("nobody", fingerprint=fp) == []
    # and the name of that data: the ABData's by default, the one given, none for a task
    assert [runner.status(j).data_name for j in (a, b, task, free)] == [
        DATA.name, "Other tiny", None, None]
    assert runner.status(a).label.endswith(f" — {DATA.name}")


# --------------------------------------------------------------------------- real model
def test_a_lightgbm_model_trains_in_the_background(tmp_path):
    from core.data.datasets import load_dataset

    data = load_dataset("world", n=2000, random_state=0)
    c = RunConfig.for_data(data, "FlippedLabel", {"n_estimators": 15, "num_threads": 1},
                           dataset="world", options={"n": 2000, "random_state": 0}, seed=3)
    with JobRunner(store=tmp_path) as real:  # the default factory: core.models.baselines.make_model
        s = real.wait(real.submit(c, data=data, session="x"), WAIT)
        assert s.state == "done", (s, real.log(s.job_id))
        run = real.store.get(s.run_id)
    scores = run.scores(0)
    model = run.load_model(0)
    assert np.allclose(model.predict(data.X.iloc[scores.index]), scores.score)
    assert (scores.t == data.t[scores.index]).all() and len(scores.index) == 600
    assert run.result["model_class"] == "FlippedLabel" and run.result["model_random_state"] == 3
    assert set(run.result["metrics"][0]["auuc"]["qini_sep_abs"]) == {
        "AUUC@10%", "AUUC@30%", "AUUC@50%", "AUUC@100%"}
    assert json.loads(run.model_path(0).read_text())["format"] == "uprank-model"


def test_the_real_two_model_reports_rounds_per_arm_model(tmp_path):
    from core.data.datasets import load_dataset

    data = load_dataset("world", n=2000, random_state=0)
    c = RunConfig.for_data(data, "TwoModel", {"n_estimators": 12, "num_threads": 1},
                           dataset="world", options={"n": 2000, "random_state": 0})
    with JobRunner(store=tmp_path) as real:
        s = real.wait(real.submit(c, data=data), WAIT)
    assert s.state == "done", s
    # a budget of 12 rounds: 12/12 of the second (control-arm) model, not 24/24
    assert (s.round, s.total, s.part, s.n_parts, s.part_name) == (12, 12, 2, 2,
                                                                  "control-arm model")


def test_the_uplift_forest_counts_trees_and_boosting_counts_rounds(tmp_path):
    # a forest's callback counts the trees grown: its progress line reads "tree 8/8", a
    # boosted model's "round 12/12"
    from core.data.datasets import load_dataset
    from ui.jobs import progress_text

    data = load_dataset("world", n=1500, random_state=0)
    forest = RunConfig.for_data(data, "UpliftRandomForest", {"n_estimators": 8},
                                dataset="world", options={"n": 1500, "random_state": 0})
    boosted = RunConfig.for_data(data, "FlippedLabel", {"n_estimators": 12, "num_threads": 1},
                                 dataset="world", options={"n": 1500, "random_state": 0})
    with JobRunner(store=tmp_path) as real:
        trees, rounds = (real.wait(real.submit(c, data=data), WAIT) for c in (forest, boosted))
    assert trees.state == rounds.state == "done", (trees, rounds)
    assert (trees.unit, trees.round, trees.total) == ("tree", 8, 8)
    assert (rounds.unit, rounds.round, rounds.total) == ("round", 12, 12)
    running = dataclasses.replace(trees, state="running", round=3, eta=None, elapsed=2.0)
    assert progress_text(running) == "tree 3/8, 2 s"


# --------------------------------------------------------------------------- lifecycle
def test_shutdown_stops_the_workers_and_refuses_new_jobs(tmp_path):
    r = JobRunner(store=tmp_path, model_factory=FACTORY)
    job = r.submit(toy(n_estimators=1000, sleep=0.05), data=DATA)
    procs = [w.proc for w in r._workers]
    r.shutdown()
    assert r.status(job).state == "cancelled"
    assert all(p.poll() is not None for p in procs)
    with pytest.raises(RuntimeError, match="shut down"):
        r.submit(toy(), data=DATA)


def test_importing_core_jobs_does_not_import_lightgbm_or_sklearn():
    code = ("import sys, core.runs.jobs, core.runs.store; "
            "print(sorted(m for m in ('lightgbm', 'sklearn', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- progress text
def _running(**fields):
    from core.runs.jobs import JobStatus

    base = {"job_id": "j", "run_id": "r", "state": "running", "elapsed": 3.2}
    return JobStatus(**{**base, **fields})


@pytest.mark.parametrize("fields, text", [
    # two-model with a budget of 100 rounds: each model counts to 100 (never "95/200")
    ({"split": 1, "round": 95, "total": 100, "part": 1, "n_parts": 2,
      "part_name": "treated-arm model"}, "round 95/100 of the treated-arm model, 3 s"),
    ({"split": 1, "round": 5, "total": 100, "part": 2, "n_parts": 2,
      "part_name": "control-arm model"}, "round 5/100 of the control-arm model, 3 s"),
    ({"split": 1, "round": 7, "total": 50, "part": 2, "n_parts": 3},
     "round 7/50 of model 2/3, 3 s"),
    ({"split": 2, "n_splits": 10, "round": 40, "total": 100, "eta": 12.4},
     "split 2/10, round 40/100, 3 s, about 12 s left"),
    # no total known yet: "starting…", never "0/0"
    ({"split": 0, "round": 0, "total": 0}, "starting…, 3 s"),
    ({"split": 0, "n_splits": 5, "round": 0, "total": 0}, "split 1/5, starting…, 3 s"),
    ({"split": 1, "n_splits": 5, "round": 0, "total": 0, "message": "Training split 1 of 5"},
     "split 1/5, starting…, 3 s"),
    # setup: the status says which step (at 14M rows it takes half a minute)
    ({"split": 0, "n_splits": 5, "message": "Loading the data…"}, "Loading the data…, 3 s"),
    ({"split": 0, "message": "Splitting the data…"}, "Splitting the data…, 3 s"),
    # a cancel request: no more rounds, but that it is stopping
    ({"split": 2, "n_splits": 10, "round": 40, "total": 100, "eta": 12.4, "cancelling": True,
      "message": "Cancelling…"}, "Cancelling…, 3 s"),
    ({"state": "queued", "position": 2}, "queued, position 2"),
    ({"kind": "task", "message": "Simulating…", "progress": 0.25}, "Simulating… — 25%, 3 s"),
    # a step ending in a number stays apart from the share done
    ({"kind": "task", "message": "PW-LR, fold 5/5: C = 1", "progress": 0.49},
     "PW-LR, fold 5/5: C = 1 — 49%, 3 s"),
])
def test_progress_text(fields, text):
    from ui.jobs import progress_text

    assert progress_text(_running(**fields)) == text


def test_fraction_counts_every_model_of_every_split():
    # split 2 of 3, model 2 of 2, round 50 of 100: (1·200 + 100 + 50) / 600
    s = _running(split=2, n_splits=3, round=50, total=100, part=2, n_parts=2)
    assert s.fraction == pytest.approx(350 / 600)
    assert _running(split=1, round=0, total=0).fraction == 0.0


def test_newly_done_names_the_jobs_finished_since_the_page_was_drawn():
    from ui.jobs import newly_done

    jobs = [_running(job_id="a", state="done"), _running(job_id="b", state="running"),
            _running(job_id="c", state="done"), _running(job_id="d", state="cached"),
            _running(job_id="e", state="failed")]
    assert newly_done(jobs, set()) == {"a", "c"}
    assert newly_done(jobs, {"a"}) == {"c"}
    assert newly_done(jobs, {"a", "c"}) == set()


def test_no_time_left_is_claimed_from_the_first_rounds(tmp_path):
    from types import SimpleNamespace

    from core.runs.jobs import _make_status

    snap = dict(state="running", started=100.0, finished=None, message="",
                config=SimpleNamespace(n_splits=1), cancel_requested=False,
                job_dir=tmp_path, job_id="j", run_id="r", label="L", sessions=[],
                submitted=99.0, fingerprint=None, data_name=None)
    first = {"phase": "training", "split": 1, "round": 1, "total": 100, "fit_started": 100.0,
             "updated": 100.05}
    # round 1 of 100 after 0.05 s, read 3 s later: 99 rounds at 20 per second "left 0 s"
    assert _make_status(snap, first, 0, 103.0).eta is None
    later = {**first, "round": 20, "updated": 104.0}  # 20 rounds in 4 s: 80 left, 16 s
    assert _make_status(snap, later, 0, 104.0).eta == pytest.approx(16.0)


def test_the_status_says_what_a_job_is_setting_up_and_that_it_is_cancelling(tmp_path):
    from types import SimpleNamespace

    from core.runs.jobs import _make_status
    from ui.jobs import progress_text

    snap = dict(state="running", started=100.0, finished=None, message="",
                config=SimpleNamespace(n_splits=3), cancel_requested=False,
                job_dir=tmp_path, job_id="j", run_id="r", label="L", sessions=["A"],
                submitted=99.0, fingerprint=None, data_name=None)
    for phase, text in (("starting", "Starting the worker process…"),
                        ("loading", "Loading the data…"), ("splitting", "Splitting the data…")):
        s = _make_status(snap, {"phase": phase, "n_splits": 3}, 0, 127.0)
        assert not s.cancelling and progress_text(s) == f"{text}, 27 s"
    training = {"phase": "training", "split": 2, "n_splits": 3, "round": 40, "total": 100}
    assert progress_text(_make_status(snap, training, 0, 127.0)) == "split 2/3, round 40/100, 27 s"
    s = _make_status({**snap, "cancel_requested": True}, training, 0, 127.0)
    assert s.cancelling and s.message == "Cancelling…"
    assert progress_text(s) == "Cancelling…, 27 s"
    # once stopped, nothing is cancelling any more
    done = _make_status({**snap, "state": "cancelled", "cancel_requested": True,
                         "finished": 128.0}, training, 0, 130.0)
    assert not done.cancelling


def test_a_task_that_trains_ends_with_trained_in_and_others_with_done_in(runner):
    """A ranking run or the several-arms models read as training does ("Trained in 1.2 s"),
    a simulation or an experiment "Done in 1.2 s"; the flag survives the job's record."""
    from core.runs.tasks import TaskSpec

    trains = TaskSpec.make(f"{__name__}:toy_task", {"tag": 311}, trains=True)
    plain = TaskSpec.make(f"{__name__}:toy_task", {"tag": 312})
    assert trains.key() != plain.key()  # (other params); the flag itself is not in the key
    assert TaskSpec.make(f"{__name__}:toy_task", {"tag": 311}).key() == trains.key()
    assert TaskSpec.from_dict(trains.to_dict()) == trains
    assert TaskSpec.from_dict({k: v for k, v in plain.to_dict().items()
                               if k != "trains"}) == plain  # records written before the flag
    a = runner.submit_task(trains, session="verb")
    b = runner.submit_task(plain, session="verb")
    for job, verb in ((a, "Trained"), (b, "Done")):
        status = runner.wait(job, WAIT)
        assert status.state == "done", runner.log(job)
        assert status.verb == verb and status.message.startswith(f"{verb} in ")
    run = runner.submit(toy(tag=313), data=DATA, session="verb")
    assert runner.wait(run, WAIT).verb == "Trained"
