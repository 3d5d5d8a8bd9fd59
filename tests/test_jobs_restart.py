"""core.runs.jobs with real app processes: a worker ends with the app process that started it,
even when that process is killed (SIGKILL) mid-training; a restarted app lists the jobs the
dead one had queued or running as "interrupted" and removes their half-written runs, but
never touches the jobs of an app process that is still alive.

A small "app" script (:data:`APP`) stands in for the Streamlit server: it starts a
:class:`~core.runs.jobs.JobRunner`, submits :class:`GatedModel` jobs, prints its worker's pid
and waits.  :class:`GatedModel` reports rounds until its last one, then waits for a gate
file (none: for ever), so a test decides when, if ever, it finishes.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _apptest import assert_clean
from streamlit.testing.v1 import AppTest

from core.data.abdata import ABData
from core.runs._worker import _BOOT
from core.runs.jobs import JobRunner
from core.runs.store import RunConfig, RunStore

ROOT = Path(__file__).resolve().parents[1]
WAIT = 60.0  # only ever reached when something is wrong: every wait ends on an event
APP_FILE = str(ROOT / "app.py")
FACTORY = f"{__name__}:make_model"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)])}


class GatedModel:
    """``n_estimators - 1`` rounds of 20 ms, then the last round once the file ``gate``
    exists (never without one); the round is reported while it waits, so a cancel works."""

    def __init__(self, n_estimators: int = 20, gate: str | None = None, tag: int = 0,
                 random_state: int | None = None):
        self.n_estimators, self.gate, self.tag = n_estimators, gate, tag
        self.random_state = random_state

    def get_params(self, deep: bool = False) -> dict:
        return {"n_estimators": self.n_estimators, "gate": self.gate, "tag": self.tag,
                "random_state": self.random_state}

    def set_params(self, **params) -> GatedModel:
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y, treatment, *, callback=None) -> GatedModel:
        n = self.n_estimators
        for r in range(1, n):
            time.sleep(0.02)
            callback(r, n)
        while self.gate is None or not Path(self.gate).exists():
            time.sleep(0.02)
            callback(n - 1, n)
        callback(n, n)
        y, t = np.asarray(y), np.asarray(treatment)
        self.coef_ = float(y[t == 1].mean() - y[t == 0].mean())
        return self

    def predict(self, X) -> np.ndarray:
        return X["x0"].to_numpy(dtype=float) * self.coef_

    def save_model(self, path) -> None:
        Path(path).write_text(json.dumps({"coef": self.coef_}), encoding="utf-8")


def make_model(name: str, **params) -> GatedModel:
    return GatedModel(**params)


def tiny_data(n: int = 200) -> ABData:
    rng = np.random.default_rng(0)
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.2 * t).astype(int)
    return ABData(pd.DataFrame({"x0": rng.normal(size=n)}), y, t, name="tiny")


def gated(gate: str | None, tag: int = 0) -> RunConfig:
    return RunConfig.for_data(tiny_data(), "gated", {"gate": gate, "tag": tag})


APP = """
import json, sys, time
from core.runs.jobs import JobRunner
from {module} import gated, tiny_data

args = json.loads(sys.argv[1])
runner = JobRunner(store=args["root"], model_factory="{factory}")
ids = [runner.submit(gated(args["gate"], k), data=tiny_data(), session="tab", label=f"Gated {{k}}")
       for k in range(args["jobs"])]
while (s := runner.status(ids[0])).round < 1 and not s.is_final:
    time.sleep(0.02)
print(json.dumps({{"worker": runner._workers[0].proc.pid, "jobs": ids, "state": s.state}}),
      flush=True)
print(json.dumps({{"final": runner.wait(ids[0]).state}}), flush=True)
runner.shutdown()
""".format(module=__name__, factory=FACTORY)


class App:
    """The stand-in app process; its stdout and stderr are read by threads (stderr is also
    the worker's: it reaches end of file once both processes have ended)."""

    def __init__(self, root: Path, *, jobs: int = 1, gate: str | None = None):
        args = json.dumps({"root": str(root), "jobs": jobs, "gate": gate})
        self.proc = subprocess.Popen([sys.executable, "-c", APP, args], cwd=ROOT, env=ENV,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        self._out = threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put),
                                     daemon=True)
        self._err = threading.Thread(target=self._pump, args=(self.proc.stderr, self.err.append),
                                     daemon=True)
        self._out.start()
        self._err.start()

    @staticmethod
    def _pump(stream, put) -> None:
        for line in stream:
            put(line)

    def read(self) -> dict:
        try:
            line = self.lines.get(timeout=WAIT)
        except queue.Empty:
            self.kill()
            raise AssertionError("the app printed nothing; stderr:\n" + "".join(self.err))
        return json.loads(line)

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no clean-up of any kind
        self.proc.wait()

    def stderr_closed(self, timeout: float) -> bool:
        """Whether every holder of the app's stderr (the app, its worker) ended in time."""
        self._err.join(timeout)
        return not self._err.is_alive()


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody has reaped yet counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def wait_gone(pid: int, timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def half_written(root: Path) -> list[Path]:
    return [p for p in (root / "_jobs").glob("*/*-*") if p.is_dir()]


def test_a_worker_ends_when_its_app_process_is_killed_mid_training(tmp_path):
    app = App(tmp_path)  # no gate: the job would train for ever
    info = app.read()
    assert info["state"] == "running"
    app.kill()
    try:
        # stderr reaches end of file only once the worker, which shares it, has ended too
        assert app.stderr_closed(WAIT), "the worker kept running after its app was killed"
        assert wait_gone(info["worker"])
    finally:  # never leave an orphan behind a failed test
        if not gone(info["worker"]):
            os.kill(info["worker"], signal.SIGKILL)
    err = "".join(app.err)
    assert "BrokenPipeError" not in err and "Traceback" not in err, err


def test_a_worker_whose_app_stops_reading_ends_quietly(tmp_path):
    # the reply to a finished job goes into a pipe nobody reads (its app is gone)
    store, gate = RunStore(tmp_path), tmp_path / "open"
    gate.write_text("")
    store.save_data(tiny_data())
    config = gated(str(gate))
    job_dir = tmp_path / "_jobs" / "j1"
    job_dir.mkdir(parents=True)
    msg = {"job_id": "j1", "job_dir": str(job_dir), "store": str(tmp_path), "kind": "train",
           "sys_path": sys.path, "config": config.to_dict(), "factory": FACTORY}
    proc = subprocess.Popen([sys.executable, "-c", _BOOT], cwd=ROOT, env=ENV, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    reader.start()
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()  # and stdin stays open: only the failed reply says the app is gone
    try:
        proc.wait(WAIT)
        reader.join(WAIT)
    finally:
        proc.kill()
        proc.stdin.close()
    assert store.exists(config.run_id())  # the job did run
    assert "BrokenPipeError" not in "".join(err) and "Traceback" not in "".join(err), err


def test_a_restarted_app_shows_the_interrupted_jobs_and_removes_their_runs():
    root = Path(os.environ["UPRANK_RUNS_DIR"])  # the app's runs directory in this test
    app = App(root, jobs=2)  # the first one running, the second queued
    info = app.read()
    app.kill()
    if not wait_gone(info["worker"], 10.0):  # this test is about the restart only
        os.kill(info["worker"], signal.SIGKILL)
    assert wait_gone(info["worker"])
    first, second = info["jobs"]
    assert half_written(root)  # left by the killed worker
    assert {p.parent.name for p in (root / "_jobs").glob("*/job.json")} == {first, second}

    at = assert_clean(AppTest.from_file(APP_FILE, default_timeout=60).run())
    assert_clean(at.switch_page("pages/train.py").run())
    assert_clean(at.toggle(key="train_all_jobs").set_value(True).run())  # on the tiny data
    lines = [m.value for m in at.markdown if str(m.value).startswith("**")]
    assert lines == ["**Gated 0** — interrupted", "**Gated 1** — interrupted"]
    assert [w.value for w in at.warning] == [
        "The app was restarted while this job was running; nothing was stored. "
        "Press Train again to rerun it.",
        "The app was restarted while this job was queued; nothing was stored. "
        "Press Train again to rerun it."]
    captions = " ".join(str(c.value) for c in at.caption)
    assert "Started in another tab" not in captions  # it is nobody's tab's: just gone
    assert half_written(root) == [] and not (root / "_jobs" / first).exists()
    assert list((root / "_jobs").glob("*/job.json")) == []

    assert_clean(at.button(key=f"cancel_{first}").click().run())  # Dismiss
    lines = [m.value for m in at.markdown if str(m.value).startswith("**")]
    assert lines == ["**Gated 1** — interrupted"]
    from ui import common

    assert [s.job_id for s in common.runner().jobs()] == [second]
    # a later restart does not bring them back
    with JobRunner(store=root) as later:
        assert later.jobs() == []


def test_the_jobs_of_a_live_app_process_are_left_alone(tmp_path):
    gate = tmp_path / "gate"
    app = App(tmp_path, gate=str(gate))
    try:
        info = app.read()
        (job,) = info["jobs"]
        job_dir = tmp_path / "_jobs" / job
        writing = half_written(tmp_path)
        assert [p.parent for p in writing] == [job_dir]
        with JobRunner(store=tmp_path) as second:  # another app process on the same runs
            assert second.jobs() == []  # not "interrupted": its app is alive
        assert half_written(tmp_path) == writing and (job_dir / "job.json").is_file()
        gate.write_text("")
        assert app.read() == {"final": "done"}
        assert RunStore(tmp_path).exists(gated(str(gate)).run_id())
    finally:
        app.kill()


def test_an_interrupted_job_is_the_folder_it_was_found_in(tmp_path):
    """A job.json naming another job id ('../outside') must not make Dismiss remove a folder
    outside the runs directory's _jobs: the job is its folder."""
    config = RunConfig(fingerprint="ab" * 32, model="TwoModel", params={"n_estimators": 5})
    folder = tmp_path / "_jobs" / "0123abcd4567"
    folder.mkdir(parents=True)
    (folder / "job.json").write_text(json.dumps({
        "job_id": "../outside", "kind": "train", "run_id": config.run_id(), "label": "x",
        "data_name": "d", "submitted": 1.0, "config": config.to_dict()}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not a job")
    with JobRunner(store=tmp_path) as runner:
        jobs = runner.jobs()
        assert [(j.job_id, j.state) for j in jobs] == [("0123abcd4567", "interrupted")]
        assert runner.dismiss("0123abcd4567")
    assert (outside / "keep.txt").is_file()


def test_an_interrupted_task_is_listed_with_its_target(tmp_path):
    """A per-arm run, ranking or label-ranking experiment that was running when its app died
    is listed as interrupted too (it used to be removed without a word), with its target so
    the page that starts that kind of task shows it; a queued one says so."""
    from core.runs.tasks import TaskSpec

    from core.runs import ltr_runs, multiarm_runs

    spec = TaskSpec.make(multiarm_runs.TASK, {"model": "TwoModel", "seed": 3},
                         label="Two-model · 100 trees")
    unnamed = TaskSpec.make(ltr_runs.TASK, {"seed": 1})
    for name, task, progress in (("0a", spec, {"fraction": 0.4, "text": "Fitting"}),
                                 ("0b", unnamed, None)):
        folder = tmp_path / "_jobs" / name
        folder.mkdir(parents=True)
        (folder / "job.json").write_text(json.dumps({
            "job_id": name, "kind": "task", "run_id": task.key(), "label": task.label,
            "data_name": None, "submitted": float(len(name + str(progress))),
            "config": task.to_dict()}))
        if progress:
            (folder / "progress.json").write_text(json.dumps(progress))
    with JobRunner(store=tmp_path) as runner:
        jobs = {j.job_id: j for j in runner.jobs()}
        assert {k: (j.state, j.kind, j.target, j.run_id, j.label) for k, j in jobs.items()} == {
            "0a": ("interrupted", "task", spec.target, spec.key(), "Two-model · 100 trees"),
            "0b": ("interrupted", "task", unnamed.target, unnamed.key(), unnamed.target)}
        assert jobs["0a"].message == ("The app was restarted while this job was running; "
                                      "nothing was stored. Start it again to rerun it.")
        assert "while this job was queued" in jobs["0b"].message
        # a page asks for its own kinds only (None: training jobs)
        for targets, ids in (((multiarm_runs.TASK,), ["0a"]), ((ltr_runs.TASK,), ["0b"]),
                             ((None,), []), ((None, ltr_runs.TASK), ["0b"])):
            assert [j.job_id for j in runner.jobs(targets=targets)] == ids
        assert runner.dismiss("0a") and [j.job_id for j in runner.jobs()] == ["0b"]


def test_a_job_json_changed_outside_the_app_is_left_out_not_fatal(tmp_path):
    """Records that do not read as a job (bad task parameters, a list for a file, a progress
    file that is not an object, a start time that is no number) are left out; the runner
    still starts, lists the good job beside them and gives every status."""
    from core.runs import multiarm_runs
    from core.runs.tasks import TaskSpec

    good = TaskSpec.make(multiarm_runs.TASK, {"seed": 1}, label="Good")
    head = {"kind": "task", "run_id": good.key(), "data_name": "Shop", "submitted": 1.0}
    records = {
        "good": ({**head, "label": "Good", "config": good.to_dict()}, {"started": "x"}),
        "cut": ({**head, "config": {**good.to_dict(), "params": "{trunc"}}, None),
        "list_params": ({**head, "config": {**good.to_dict(), "params": "[1, 2]"}}, None),
        "dict_params": ({**head, "config": {**good.to_dict(), "params": {"a": 1}}}, None),
        "no_label": ({**head, "label": None, "config": good.to_dict()}, [1, 2]),
        "list_file": ([1, 2], None),
    }
    for name, (record, progress) in records.items():
        folder = tmp_path / "_jobs" / name
        folder.mkdir(parents=True)
        (folder / "job.json").write_text(json.dumps(record))
        if progress is not None:
            (folder / "progress.json").write_text(json.dumps(progress))
    with JobRunner(store=tmp_path) as runner:
        jobs = {j.job_id: j for j in runner.jobs()}
        assert sorted(jobs) == ["good", "no_label"]
        assert jobs["good"].started is None and jobs["good"].data_name == "Shop"
        assert "was running" in jobs["good"].message  # its progress file says it ran
        assert jobs["no_label"].label == "Good"  # the task's own label, not "None"
        assert "was queued" in jobs["no_label"].message  # a list is no progress
        assert all(runner.status(job_id).state == "interrupted" for job_id in jobs)


def test_each_page_names_its_own_tasks_that_a_restart_interrupted():
    """Per-arm runs (Train), ranking runs, label-ranking experiments and simulations lost in
    a restart are named on the page that starts them, each once, with a Dismiss button; in
    a job panel (Train, Ranking runs) they are its jobs, not after "No jobs yet"."""
    from core.data import load_dataset
    from core.runs import label_runs, ltr_runs, multiarm_runs, simulations
    from core.runs.tasks import TaskSpec

    root = Path(os.environ["UPRANK_RUNS_DIR"])  # the app's runs directory in this test
    world = load_dataset("world").fingerprint()  # the app's default dataset
    pages = {"pages/train.py": (multiarm_runs.TASK, "cancel_"),
             "pages/ranking_runs.py": (ltr_runs.TASK, "rk_cancel_"),
             "pages/label_ranking.py": (label_runs.TASK, "lr_dismiss_"),
             "pages/interleaving.py": (simulations.TASK, "il_dismiss_")}
    for i, (target, _) in enumerate(pages.values()):
        task = TaskSpec.make(target, {"i": i, "fingerprint": world}, label=f"Lost task {i}")
        folder = root / "_jobs" / f"job{i}"
        folder.mkdir(parents=True)
        (folder / "job.json").write_text(json.dumps({
            "job_id": folder.name, "kind": "task", "run_id": task.key(), "label": task.label,
            "data_name": None, "submitted": float(i), "config": task.to_dict()}))
    at = assert_clean(AppTest.from_file(APP_FILE, default_timeout=120).run())
    for i, (page, (_, key)) in enumerate(pages.items()):
        assert_clean(at.switch_page(page).run(), page)
        titles = [m.value for m in at.markdown if "— interrupted" in str(m.value)]
        assert titles == [f"**Lost task {i}** — interrupted"], page
        assert ("The app was restarted while this job was queued; nothing was stored. Start "
                "it again to rerun it.") in [w.value for w in at.warning]
        if i < 2:  # a page with a job list: the lost task is in it
            assert not any("No jobs" in str(c.value) for c in at.caption), page
        assert_clean(at.button(key=f"{key}job{i}").click().run(), page)  # Dismiss
        assert not [m for m in at.markdown if "— interrupted" in str(m.value)], page
    from ui import common

    assert common.runner().jobs() == []  # every one dismissed
