"""Background jobs: one queue that trains models — and runs other long tasks, such as the
Interleaving page's simulations (:mod:`core.runs.tasks`) — in separate worker processes.

:class:`JobRunner` is meant to be created once per app process (the Train page keeps it in
``st.cache_resource``) and shared by every browser session; all its methods are
thread-safe.  ``submit`` returns at once; the page polls :meth:`JobRunner.status`.

Design
------
* **Processes.**  Each worker is a fresh Python interpreter (``subprocess`` running
  :func:`core.runs._worker.worker_main`; like multiprocessing's "spawn", nothing is forked, so
  LightGBM's OpenMP threads are safe, and the Streamlit script is not re-imported).  A worker stays
  alive between jobs, so NumPy/LightGBM imports are paid once; ``max_workers`` bound how
  many jobs train at the same time, the rest wait in a FIFO queue.  A crash of LightGBM
  kills only that worker: its job fails, the next job gets a new worker.
* **No pickle.**  The runner sends a worker one JSON line per job on its stdin (config,
  paths, model factory) and reads one JSON line back.  The data is never sent: a listed
  dataset is reloaded from its key and options, uploaded data is read from the ``.npz``
  copy written by :meth:`~core.runs.store.RunStore.save_data`; both are checked against the
  config's fingerprint.
* **Progress** goes through a small file per job (``<runs>/_jobs/<job_id>/progress.json``,
  replaced atomically, at most ten times a second), read when a page asks for a status.
* **Restarts.**  A worker ends with the app process that started it (see
  :mod:`core.runs._worker`).  Each queued or running job has a ``job.json`` (what it trains,
  its label) in its folder, and its app process holds the folder's ``owner.lock``; both go
  when the job ends.  A new runner finds the ``job.json`` whose lock nobody holds — jobs of
  an app process that died — and lists them as ``interrupted`` (the run was not stored:
  train again; tasks too, with their ``target``, so each page shows its own), removes
  their folders with the half-written runs in them, and removes the half-written runs any
  dead worker left in other job folders.  Folders whose locks a live
  process holds (another app process sharing the runs directory, or its worker) are never
  touched.
* **The runs directory** must be writable: :meth:`JobRunner.submit` refuses at once
  (:class:`RunsDirError`, naming it) rather than train for nothing, and a run that cannot be
  saved after training fails with "Training finished but the run could not be saved to …".
* **Cancel** creates the file ``_jobs/<job_id>/cancel``; the worker's progress callback
  looks for it (every 20 ms at most) and raises :class:`core.models.baselines.TrainingCancelled`.
  Boosting rounds take milliseconds, so this stops a job in well under a second.  A model
  that does not report rounds often enough (one very long round, or no callback) is
  stopped by killing its worker ``cancel_grace`` seconds (default 1 s) after the request —
  either way the job is "cancelled" within 2 s, and no run is stored: runs are written to
  a temporary folder and renamed into the store only when complete.
* **Dedupe and caching.**  A job is keyed by its run id: submitting a config whose run is
  already stored gives a job that is "cached" at once (no training); one already queued or
  running returns the existing job id, which then lists both sessions.
* **Tasks.**  :meth:`JobRunner.submit_task` queues a :class:`~core.runs.tasks.TaskSpec` (a
  ``"module:function"`` and JSON parameters, with arrays handed over as ``.npz``) on the same
  workers, with the same progress file (share done and a text), cancel flag, queue, failure
  handling and caching: its result is stored under the task's key
  (:meth:`RunStore.load_result <core.runs.store.RunStore.load_result>`).

Job states: ``queued`` → ``running`` → ``done`` | ``failed`` | ``cancelled``; or ``cached``;
or ``interrupted`` (queued or running when the app process that owned it died).
A failure (an exception in the worker, or the worker dying) is recorded with a one-line
message and the traceback in the job's ``log.txt``; it is never raised into the caller.

Examples
--------
One runner per app process, keyed by the runs directory (tests change it)::

    runner = JobRunner(max_workers=1, store=default_runs_dir())   # cached as a resource
    config = RunConfig.for_data(data, "TwoModel", {"n_estimators": 200},
                                dataset="world", options={"n": 20_000, "random_state": 0},
                                scheme="repeated", n_repeats=10, seed=0)
    job = runner.submit(config, data=data, session=session_id)
    runner.status(job)         # JobStatus(state="running", split=2, round=57, total=200, ...)
    runner.cancel(job, session=session_id)
    run = runner.store.get(runner.status(job).run_id)   # once state is "done" or "cached"
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core._validation import check_positive_int
from core.data.abdata import ABData
from core.runs._worker import (
    OWNER_LOCK,
    WORKER_LOCK,
    WorkerProcess,
    append_log,
    release_lock,
    take_lock,
)
from core.runs.store import RunConfig, RunStore
from core.runs.tasks import TaskSpec

__all__ = ["CANCEL_GRACE_S", "FINAL_STATES", "MODEL_FACTORY", "STATES", "JobRunner",
           "JobStatus", "RunsDirError"]

#: Default model factory, as "module:attribute"; called in the worker as
#: ``factory(config.model, **config.params_dict)``.  Tests pass their own to
#: :class:`JobRunner` (``model_factory=``) to train tiny fake models.
MODEL_FACTORY = "core.models.baselines:make_model"
#: Seconds between a cancel request and killing a worker that has not stopped by itself.
CANCEL_GRACE_S = 1.0
STATES = ("queued", "running", "done", "cached", "failed", "cancelled", "interrupted")
FINAL_STATES = frozenset({"done", "cached", "failed", "cancelled", "interrupted"})
_KEEP_JOB_DIRS_S = 7 * 86_400.0
_JOB_FILE = "job.json"  # in the folder of a queued or running job: what it is
_HALF_WRITTEN = re.compile(r"[0-9a-f]{16}-.+")  # a run being written: "<run_id>-<random>"
_CACHED = {"train": "Already trained: the stored run is used.",
           "task": "Already computed: the stored result is used."}
_PHASES = {"starting": "Starting the worker process…", "running": "Running…",
           "loading": "Loading the data…", "splitting": "Splitting the data…",
           "training": "Training",
           "saving": "Saving the run…"}


class RunsDirError(OSError, ValueError):
    """The runs directory cannot be written, so a job could not store its run (an
    ``OSError``, and a ``ValueError`` so that pages show its sentence as bad input)."""


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of one job, for display.

    ``round``/``total`` count boosting rounds of the current split (``split`` of
    ``n_splits``, from 1) of a training job, per fitted model: a model that fits several
    (the two-model learner: the treated-arm model, then the control-arm model) is at model
    ``part`` of ``n_parts``, named ``part_name``, and ``total`` is the budget the user asked
    for, not the sum over the models; ``total`` is 0 until the model reports its first round.
    A task reports ``progress`` (share done) and its ``message`` instead; ``run_id`` is the
    run id of a training job and the result key of a task (``kind`` says which); ``elapsed``
    and ``eta`` are seconds (``eta`` is ``None`` until a rate is known); ``position`` is the
    place in the queue (1 = next), 0 otherwise;
    ``sessions`` are the sessions that submitted it; ``submitted``/``started``/``finished``
    are ``time.time()`` stamps (``None`` when not reached); ``cancelling`` is true from a
    cancel request until a running job has stopped; ``fingerprint`` is the
    fingerprint of the data the job works on (:meth:`ABData.fingerprint
    <core.data.abdata.ABData.fingerprint>`: a training job's config, a task's ``fingerprint``
    parameter), ``None`` for a task on no dataset; ``data_name`` names the job's data (a
    task's only when submitted with one); ``target`` is a task's ``"module:function"``
    (``None`` for a training job), so a page can pick out its own kind of task.
    """

    job_id: str
    run_id: str
    state: str
    label: str = ""
    message: str = ""
    round: int = 0
    total: int = 0
    split: int = 0
    n_splits: int = 1
    elapsed: float = 0.0
    eta: float | None = None
    position: int = 0
    sessions: tuple[str, ...] = ()
    submitted: float = 0.0
    started: float | None = None
    finished: float | None = None
    log_path: str | None = None
    kind: str = "train"
    progress: float | None = None
    fingerprint: str | None = None
    part: int = 1
    n_parts: int = 1
    part_name: str = ""
    data_name: str | None = None
    cancelling: bool = False
    target: str | None = None
    #: what ``round`` / ``total`` count: boosting rounds, or a forest's trees
    unit: str = "round"

    #: "Trained" for a training run or a task that trains models, else "Done": how the job's
    #: end reads ("Trained in 12.3 s")
    verb: str = "Trained"

    @property
    def is_final(self) -> bool:
        """True for done, cached, failed, cancelled and interrupted."""
        return self.state in FINAL_STATES

    @property
    def fraction(self) -> float:
        """Share of the boosting rounds of all splits done, in [0, 1]."""
        if self.state in ("done", "cached"):
            return 1.0
        if self.progress is not None:
            return self.progress
        if not self.total or not self.split:
            return 0.0
        per_split = self.n_parts * self.total
        done = (self.split - 1) * per_split + (self.part - 1) * self.total + self.round
        return min(1.0, done / (self.n_splits * per_split))


@dataclass
class _Job:
    job_id: str
    config: RunConfig | TaskSpec
    run_id: str
    label: str
    sessions: list[str]
    state: str
    job_dir: Path
    submitted: float
    started: float | None = None
    finished: float | None = None
    message: str = ""
    worker: WorkerProcess | None = None
    cancel_requested: bool = False
    progress: dict = field(default_factory=dict)
    data_name: str | None = None
    lock: int | None = None  # descriptor of the folder's owner.lock while queued or running

    @property
    def kind(self) -> str:
        return "task" if isinstance(self.config, TaskSpec) else "train"

    @property
    def n_steps(self) -> int:
        return 1 if isinstance(self.config, TaskSpec) else self.config.n_splits

    @property
    def target(self) -> str | None:
        """A task's ``"module:function"``; ``None`` for a training job."""
        return self.config.target if isinstance(self.config, TaskSpec) else None

    @property
    def fingerprint(self) -> str | None:
        if isinstance(self.config, TaskSpec):
            fp = self.config.params_dict.get("fingerprint")
            return fp if isinstance(fp, str) else None
        return self.config.fingerprint

    def is_stored(self, store: RunStore) -> bool:
        return (store.has_result(self.run_id) if isinstance(self.config, TaskSpec)
                else store.exists(self.run_id))

    def record(self) -> dict:
        """What a later app process needs to list this job if this one dies (``job.json``)."""
        return {"job_id": self.job_id, "kind": self.kind, "run_id": self.run_id,
                "label": self.label, "data_name": self.data_name, "submitted": self.submitted,
                "config": self.config.to_dict()}

    def worker_message(self, store: RunStore, factory: str) -> dict:
        head = {"job_id": self.job_id, "job_dir": str(self.job_dir), "store": str(store.root),
                "sys_path": list(sys.path)}
        if isinstance(self.config, TaskSpec):
            return {**head, "kind": "task", "task": self.config.to_dict()}
        return {**head, "kind": "train", "config": self.config.to_dict(), "factory": factory}


class JobRunner:
    """A queue of training jobs run by worker processes; see the module docstring.

    Parameters
    ----------
    max_workers : int, default 1
        Jobs training at the same time (each in its own process; LightGBM uses all cores of
        the machine unless the model's ``num_threads`` says otherwise).
    store : RunStore or path, optional
        Where runs, progress files and uploaded-data copies go; default ``RunStore()``.
    model_factory : str, default :data:`MODEL_FACTORY`
        ``"module:attribute"`` of the function the worker calls to build a model.
    cancel_grace : float, default 1.0
        Seconds a running job gets to stop by itself after :meth:`cancel` before its worker
        is killed.
    nice : int, default 5
        Lower priority of the workers (POSIX ``nice``), so the app's pages stay responsive.
    keep : int, default 200
        Finished jobs remembered; older ones are forgotten (their runs stay in the store).
    """

    def __init__(self, max_workers: int = 1, *, store: RunStore | str | Path | None = None,
                 model_factory: str = MODEL_FACTORY, cancel_grace: float = CANCEL_GRACE_S,
                 nice: int = 5, keep: int = 200):
        check_positive_int(max_workers, "max_workers")
        if not isinstance(model_factory, str) or model_factory.count(":") != 1:
            raise ValueError(f"model_factory must be 'module:attribute'; got {model_factory!r}.")
        self.store = store if isinstance(store, RunStore) else RunStore(store)
        self.max_workers = max_workers
        self.model_factory = model_factory
        self.cancel_grace = float(cancel_grace)
        self.nice = int(nice)
        self.keep = int(keep)
        self._jobs_dir = self.store.root / "_jobs"
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._jobs: dict[str, _Job] = {}
        self._queue: deque[str] = deque()
        self._active: dict[str, str] = {}  # run_id -> job_id of a queued or running job
        self._workers: list[WorkerProcess] = []
        self._closed = False
        self._finalizer = weakref.finalize(self, _kill_all, self._workers)
        with contextlib.suppress(OSError):
            self._recover()
        with contextlib.suppress(OSError):
            self.store.cleanup()

    # ------------------------------------------------------------------ public API
    def submit(self, config: RunConfig, *, data: ABData | None = None,
               session: str | None = None, label: str | None = None,
               data_name: str | None = None) -> str:
        """Queue the training of ``config``; returns the job id at once.

        Parameters
        ----------
        config : RunConfig
        data : ABData, optional
            The data the config was made for.  Required for uploaded data
            (``config.dataset is None``) unless a copy is already stored; for a listed
            dataset it is only checked against ``config.fingerprint``.
        session : str, optional
            Who submits (the page passes its session id); see :meth:`jobs`.
        label : str, optional
            Shown in job lists; default the model and data names.
        data_name : str, optional
            The data's name as the analyst knows it (:attr:`JobStatus.data_name`, e.g. to say
            which dataset a listed job is on); default ``data.name``, else ``config.dataset``.

        Raises
        ------
        TypeError
            ``config`` is not a :class:`~core.runs.store.RunConfig` or ``data`` not an ABData.
        ValueError
            ``data`` does not match ``config.fingerprint``, or uploaded data is missing
            (:class:`~core.data.abdata.DataError` when a column cannot be copied).
        RunsDirError
            The run is not stored yet and the runs directory cannot be written (it
            could not be stored).
        RuntimeError
            The runner was shut down.
        """
        if not isinstance(config, RunConfig):
            raise TypeError(f"config must be a RunConfig; got {type(config).__name__}.")
        if session is not None and not isinstance(session, str):
            raise ValueError(f"session must be None or a string; got {type(session).__name__}.")
        if data is not None:
            if not isinstance(data, ABData):
                raise TypeError(f"data must be an ABData; got {type(data).__name__}.")
            if (fp := data.fingerprint()) != config.fingerprint:
                raise ValueError("data must be the data the config was made for; its "
                                 f"fingerprint {fp[:12]}… differs from "
                                 f"config.fingerprint {config.fingerprint[:12]}….")
        run_id = config.run_id()
        if not self.store.exists(run_id):
            self._check_writable()  # before a data copy, and before any training
        if config.dataset is None and not self.store.exists(run_id):
            if data is not None:
                self.store.save_data(data)
            elif not self.store.has_data(config.fingerprint):
                raise ValueError("config is for uploaded data (dataset=None): pass data= the "
                                 "ABData so the training process can read a copy.")
        if data_name is None:
            data_name = data.name if data is not None else config.dataset
        if label is None:
            label = f"{config.model} — {data_name}"
        return self._enqueue(config, run_id, label, session, data_name=data_name)

    def submit_task(self, task: TaskSpec, *, inputs: dict | None = None,
                    session: str | None = None, data_name: str | None = None) -> str:
        """Queue a background task (see :mod:`core.runs.tasks`); returns the job id at once.

        ``inputs`` maps names to numpy arrays handed to the task (saved as ``.npz``, never
        pickled).  A task whose result is stored is "cached" at once; one already queued or
        running returns the existing job id.  Its :attr:`JobStatus.run_id` is the result key
        for :meth:`RunStore.load_result <core.runs.store.RunStore.load_result>`;
        ``data_name`` names the dataset it works on in job lists.  Raises
        :class:`RunsDirError` when the result is not stored and the runs directory cannot be
        written.
        """
        if not isinstance(task, TaskSpec):
            raise TypeError(f"task must be a TaskSpec; got {type(task).__name__}.")
        if session is not None and not isinstance(session, str):
            raise ValueError(f"session must be None or a string; got {type(session).__name__}.")
        if not self.store.has_result(task.key()):
            self._check_writable()
        return self._enqueue(task, task.key(), task.label or task.target, session,
                             inputs=inputs, data_name=data_name)

    def _enqueue(self, config: RunConfig | TaskSpec, run_id: str, label: str,
                 session: str | None, inputs: dict | None = None,
                 data_name: str | None = None) -> str:
        with self._lock:
            if self._closed:
                raise RuntimeError("This JobRunner was shut down; create a new one.")
            existing = self._active.get(run_id)
            if existing is not None:
                job = self._jobs[existing]
                if session is not None and session not in job.sessions:
                    job.sessions.append(session)
                return existing
            job_id = uuid.uuid4().hex[:12]
            job = _Job(job_id, config, run_id, label, [session] if session else [], "queued",
                       self._jobs_dir / job_id, time.time(), data_name=data_name)
            self._jobs[job_id] = job
            if job.is_stored(self.store):
                self._finish(job, "cached", _CACHED[job.kind])
            else:
                try:
                    self._claim(job)
                except OSError as err:
                    self._finish(job, "failed", self._no_folder(err))
                    return job_id
                if inputs:
                    try:
                        _save_inputs(job.job_dir, inputs)
                    except OSError as err:
                        self._finish(job, "failed", f"Could not hand the inputs over: {err}")
                        return job_id
                self._queue.append(job_id)
                self._active[run_id] = job_id
                self._dispatch()
            self._forget_old()
            return job_id

    def status(self, job_id: str) -> JobStatus:
        """Current state and progress of a job (``KeyError`` for an unknown id)."""
        with self._lock:
            job = self._job(job_id)
            snap = dict(job.__dict__, sessions=tuple(job.sessions),
                        fingerprint=job.fingerprint)
            position = (self._queue.index(job_id) + 1) if job.state == "queued" else 0
        progress = snap["progress"]
        if snap["state"] == "running":
            progress = _read_json(snap["job_dir"] / "progress.json") or progress
        return _make_status(snap, progress, position, time.time())

    def jobs(self, session: str | None = None, *, fingerprint: str | None = None,
             targets: Collection[str | None] | None = None) -> list[JobStatus]:
        """Statuses of all jobs, oldest first; of those ``session`` submitted, and with
        ``fingerprint`` only of those working on that data (see :attr:`JobStatus.fingerprint`);
        with ``targets`` only of those kinds (:attr:`JobStatus.target`: a task's
        ``"module:function"``, ``None`` for training jobs) — a status is built only for the
        jobs returned."""
        with self._lock:
            ids = [j.job_id for j in self._jobs.values()
                   if (session is None or session in j.sessions)
                   and (fingerprint is None or j.fingerprint == fingerprint)
                   and (targets is None or j.target in targets)]
        out = []
        for job_id in ids:
            with contextlib.suppress(KeyError):
                out.append(self.status(job_id))
        return out

    def cancel(self, job_id: str, *, session: str | None = None) -> bool:
        """Stop a queued or running job; ``False`` when it had already finished.

        A queued job is removed from the queue at once.  A running job stops at its next
        boosting round (its worker is killed after ``cancel_grace`` seconds otherwise).
        With ``session``, a job that other sessions also submitted keeps running for them
        (only ``session`` is detached from it), and another session's job is left alone
        (``False``).
        """
        with self._lock:
            job = self._job(job_id)
            if job.state in FINAL_STATES:
                return False
            if session is not None and job.sessions and session not in job.sessions:
                return False  # another session's job
            if session is not None and len(job.sessions) > 1:
                job.sessions.remove(session)
                self._changed.notify_all()
                return True
            if job.state == "queued":
                self._queue.remove(job_id)
                self._finish(job, "cancelled", "Cancelled before it started.")
                return True
            if not job.cancel_requested:
                job.cancel_requested = True
                with contextlib.suppress(OSError):
                    (job.job_dir / "cancel").touch()
                timer = threading.Timer(self.cancel_grace, self._force_stop,
                                        (job_id, job.worker))
                timer.daemon = True
                timer.start()
            return True

    def warm_up(self) -> None:
        """Start the worker processes now, so the first job does not wait for their imports
        (a few seconds: NumPy, pandas, scikit-learn, LightGBM)."""
        with self._lock:
            while not self._closed and len(self._workers) < self.max_workers:
                self._workers.append(WorkerProcess(self._on_reply, self._on_exit,
                                                   nice=self.nice))

    def wait(self, job_id: str, timeout: float | None = None) -> JobStatus:
        """Block until the job is final; raises ``TimeoutError`` after ``timeout`` seconds."""
        with self._changed:
            job = self._job(job_id)
            if not self._changed.wait_for(lambda: job.state in FINAL_STATES, timeout):
                raise TimeoutError(f"Job {job_id} is still {job.state} after {timeout} s.")
        return self.status(job_id)

    def dismiss(self, job_id: str) -> bool:
        """Forget a finished job (its stored run stays): it is no longer listed, and its
        folder is removed.  ``False`` while it is queued or running (cancel it first)."""
        with self._lock:
            job = self._job(job_id)
            if job.state not in FINAL_STATES:
                return False
            del self._jobs[job_id]
            self._changed.notify_all()
        _remove_job_dir(job.job_dir)
        return True

    def log(self, job_id: str) -> str:
        """The job's log (the traceback of a failure), or ``""``."""
        with self._lock:
            path = self._job(job_id).job_dir / "log.txt"
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def shutdown(self, *, wait: bool = True) -> None:
        """Cancel every job and stop the workers (killed if they do not stop in time)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            while self._queue:
                self._finish(self._jobs[self._queue.popleft()], "cancelled",
                             "Cancelled: the app is shutting down.")
            for job in self._jobs.values():
                if job.state == "running":
                    job.cancel_requested = True
                    with contextlib.suppress(OSError):
                        (job.job_dir / "cancel").touch()
            workers = list(self._workers)
        for w in workers:
            w.close_stdin()
        deadline = time.monotonic() + (self.cancel_grace if wait else 0.0)
        for w in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                w.proc.wait(max(0.0, deadline - time.monotonic()))
            w.kill()
        if wait:
            for w in workers:
                w.thread.join(2.0)
        with self._lock:
            for job in self._jobs.values():
                if job.state == "running":
                    self._finish(job, "cancelled", "Cancelled: the app is shutting down.")
                    _remove_half_written(job.job_dir)

    def __enter__(self) -> JobRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()

    # ------------------------------------------------------------------ internals
    def _job(self, job_id: str) -> _Job:
        try:
            return self._jobs[job_id]
        except (KeyError, TypeError):
            raise KeyError(f"Unknown job id {job_id!r}.") from None

    def _dispatch(self) -> None:
        """Start queued jobs on idle workers (called with the lock held)."""
        while self._queue and not self._closed:
            worker = next((w for w in self._workers if w.job_id is None and w.alive()), None)
            if worker is None and len(self._workers) >= self.max_workers:
                return
            job = self._jobs[self._queue.popleft()]
            if job.is_stored(self.store):
                self._finish(job, "cached", _CACHED[job.kind])
                continue
            message = job.worker_message(self.store, self.model_factory)
            try:
                job.job_dir.mkdir(parents=True, exist_ok=True)
            except OSError as err:  # the job's own trouble: the idle worker stays
                self._finish(job, "failed", self._no_folder(err))
                continue
            try:
                if worker is None:
                    worker = WorkerProcess(self._on_reply, self._on_exit, nice=self.nice)
                    self._workers.append(worker)
                worker.send(message)
            except OSError as err:
                if worker is not None:
                    worker.kill()
                    self._drop(worker)
                self._finish(job, "failed", f"Could not start the training process: {err}")
                continue
            worker.job_id, job.worker = job.job_id, worker
            job.state, job.started = "running", time.time()
            job.progress = {"phase": "starting", "n_splits": job.n_steps}
            self._changed.notify_all()

    def _finish(self, job: _Job, state: str, message: str) -> None:
        """Make ``job`` final (lock held)."""
        if job.state == "running":
            job.progress = _read_json(job.job_dir / "progress.json") or job.progress
        job.state, job.message, job.finished = state, message, time.time()
        if job.worker is not None and job.worker.job_id == job.job_id:
            job.worker.job_id = None
        job.worker = None
        if self._active.get(job.run_id) == job.job_id:
            del self._active[job.run_id]
        if job.lock is not None:  # no longer a live job: job.json first, then the lock
            with contextlib.suppress(OSError):
                (job.job_dir / _JOB_FILE).unlink(missing_ok=True)
            release_lock(job.lock)
            job.lock = None
        self._changed.notify_all()

    def _on_reply(self, worker: WorkerProcess, reply: dict) -> None:
        with self._lock:
            job = self._jobs.get(reply.get("job_id", ""))
            if job is None or job.worker is not worker or job.state != "running":
                return
            state = reply.get("state", "failed")
            message = reply.get("message", "")
            if state == "done":
                took = time.time() - (job.started or time.time())
                message = (f"{_verb(job.config)} in {took:.1f} s"
                           + (" (it finished before the cancel request took effect)."
                              if job.cancel_requested else "."))
            elif state == "cancelled":
                message = message or "Cancelled."
            self._finish(job, state if state in FINAL_STATES else "failed", message)
            self._dispatch()

    def _on_exit(self, worker: WorkerProcess) -> None:
        with self._lock:
            self._drop(worker)
            job = self._jobs.get(worker.job_id or "")
            if job is not None and job.state == "running" and job.worker is worker:
                if job.cancel_requested:
                    self._finish(job, "cancelled", "Cancelled.")
                else:
                    code = worker.proc.returncode
                    why = _exit_reason(code)
                    append_log(job.job_dir, f"The worker process exited with code {code}"
                               f"{': ' + why if why else ''}.\n")
                    what = "training" if job.kind == "train" else "worker"
                    why = f": {why}." if why else f" (exit code {code})."
                    self._finish(job, "failed", f"The {what} process stopped unexpectedly{why} "
                                 f"Its log: {job.job_dir / 'log.txt'}")
                _remove_half_written(job.job_dir)
            if not self._closed:
                self._dispatch()

    def _force_stop(self, job_id: str, worker: WorkerProcess | None) -> None:
        """Kill the worker of a job that did not stop within ``cancel_grace`` seconds."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state != "running" or job.worker is not worker \
                    or worker is None:
                return
            worker.kill()
            self._drop(worker)
            self._finish(job, "cancelled", "Cancelled (the training process was stopped).")
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(1.0)
            _remove_half_written(job.job_dir)
            self._dispatch()

    def _check_writable(self) -> None:
        """Raise :class:`RunsDirError` unless runs (and job folders) can be written."""
        try:
            self._jobs_dir.mkdir(parents=True, exist_ok=True)
            for folder in (self.store.root, self._jobs_dir):
                fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=folder)
                os.close(fd)
                os.unlink(probe)
        except OSError as err:
            raise RunsDirError(
                f"The runs directory {self.store.root} cannot be written ({_reason(err)}), so "
                "no trained run could be stored there. Make it writable, or set "
                "UPRANK_RUNS_DIR to a writable folder and restart the app.") from None

    def _no_folder(self, err: OSError) -> str:
        return f"Could not create the job's folder in {self._jobs_dir}: {_reason(err)}."

    def _claim(self, job: _Job) -> None:
        """Make the job's folder, hold its owner lock and write its ``job.json`` (the lock
        first: a new runner that finds ``job.json`` unlocked takes the job for dead)."""
        job.job_dir.mkdir(parents=True, exist_ok=True)
        job.lock = take_lock(job.job_dir / OWNER_LOCK)
        (job.job_dir / _JOB_FILE).write_text(json.dumps(job.record()), encoding="utf-8")

    def _recover(self) -> None:
        """At start: list the jobs of app processes that died as ``interrupted`` and remove
        their folders, and the half-written runs of dead workers (module docstring)."""
        if not self._jobs_dir.is_dir():
            return
        found, old = [], time.time() - _KEEP_JOB_DIRS_S
        for folder in self._jobs_dir.iterdir():
            with contextlib.suppress(OSError):
                if not folder.is_dir():
                    continue
                if (folder / _JOB_FILE).is_file() or any(_half_written(folder)):
                    # the job is the folder it was found in, whatever its job.json says
                    found.extend(({**record, "job_id": folder.name}, progress)
                                 for record, progress in _reclaim(folder))
                elif folder.stat().st_mtime < old:  # a finished job's folder (its log)
                    _remove_job_dir(folder)
        for record, progress in sorted(found, key=lambda rp: rp[0].get("submitted") or 0):
            job = _interrupted_job(record, progress, self._jobs_dir)
            if job is not None and job.job_id not in self._jobs:
                self._jobs[job.job_id] = job

    def _drop(self, worker: WorkerProcess) -> None:
        if worker in self._workers:
            self._workers.remove(worker)

    def _forget_old(self) -> None:
        final = [j for j in self._jobs.values() if j.state in FINAL_STATES]
        for job in final[:max(0, len(final) - self.keep)]:
            del self._jobs[job.job_id]
            if job.state != "failed":
                shutil.rmtree(job.job_dir, ignore_errors=True)


# --------------------------------------------------------------------------- helpers
def _make_status(snap: dict, progress: dict, position: int, now: float) -> JobStatus:
    state, started, finished = snap["state"], snap["started"], snap["finished"]
    task = isinstance(snap["config"], TaskSpec)
    n_splits = 1 if task else int(progress.get("n_splits") or snap["config"].n_splits)
    split, rnd, total = (int(progress.get(k) or 0) for k in ("split", "round", "total"))
    if state == "done":
        split = n_splits
        rnd = total
    part, n_parts, part_name, shown_round, shown_total = 1, 1, "", rnd, total
    names = [str(n) for n in progress.get("parts") or ()]
    if not task and len(names) > 1 and total and total % len(names) == 0:
        n_parts, shown_total = len(names), total // len(names)  # the budget of one model
        part = min(n_parts, max(1, -(-rnd // shown_total)))
        shown_round, part_name = rnd - (part - 1) * shown_total, names[part - 1]
    elapsed = 0.0 if started is None else (finished or now) - started
    eta, message = None, snap["message"]
    cancelling = state == "running" and bool(snap["cancel_requested"])
    if state == "running":
        phase = progress.get("phase", "starting")
        message = _PHASES.get(phase, phase)
        if phase == "training":
            message = f"Training split {split} of {n_splits}" if n_splits > 1 else "Training"
        elif phase == "running" and progress.get("text"):
            message = progress["text"]
        if snap["cancel_requested"]:
            message = "Cancelling…"
        done, fit0, updated = (split - 1) * total + rnd, progress.get("fit_started"), \
            progress.get("updated")
        if task:
            done, total = float(progress.get("fraction") or 0.0), 1
        # a rate from the first round or two is noise ("about 0 s left" at round 1 of 100):
        # an estimate once 2 % of the work and half a second of fitting are behind
        if (total and done >= 0.02 * n_splits * total and fit0 and updated
                and updated - fit0 >= 0.5):
            rate = done / (updated - fit0)
            eta = max(0.0, (n_splits * total - done) / rate - max(0.0, now - updated))
    elif state == "queued":
        message = f"Queued ({position - 1} ahead)" if position > 1 else "Queued (next)"
    log = snap["job_dir"] / "log.txt"
    return JobStatus(
        job_id=snap["job_id"], run_id=snap["run_id"], state=state, label=snap["label"],
        message=message, round=shown_round, total=shown_total, split=split, n_splits=n_splits,
        elapsed=max(0.0, elapsed), eta=eta, position=position,
        sessions=tuple(snap["sessions"]), submitted=snap["submitted"], started=started,
        finished=finished, log_path=str(log) if state == "failed" and log.is_file() else None,
        kind="task" if task else "train",
        progress=float(progress.get("fraction") or 0.0) if task else None,
        fingerprint=snap["fingerprint"], part=part, n_parts=n_parts, part_name=part_name,
        data_name=snap["data_name"], cancelling=cancelling,
        target=snap["config"].target if task else None, verb=_verb(snap["config"]),
        unit=str(progress.get("unit") or "round"))


def _verb(config: RunConfig | TaskSpec) -> str:
    """How a job's end reads: "Trained" for a run or a task that trains models, else "Done"."""
    return "Done" if isinstance(config, TaskSpec) and not config.trains else "Trained"


def _save_inputs(job_dir: Path, inputs: dict) -> None:
    """The arrays handed to a task, as ``inputs.npz`` in its job folder (read without pickle)."""
    import numpy as np

    job_dir.mkdir(parents=True, exist_ok=True)
    np.savez(job_dir / "inputs.npz", **{k: np.asarray(v) for k, v in inputs.items()})


def _read_json(path: Path) -> dict | None:
    """The JSON object in ``path``; ``None`` when it is missing, unreadable or not an object
    (a ``job.json`` or ``progress.json`` changed outside the app must not stop a page)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _reason(err: OSError) -> str:
    """The cause of an ``OSError`` without its file names ("Permission denied")."""
    return err.strerror or str(err) or type(err).__name__


def _exit_reason(code: int | None) -> str:
    """Why a worker ended with ``code``, in words, for a signal; ``""`` otherwise."""
    if code is None or code >= 0:
        return ""
    if code == -getattr(signal, "SIGKILL", 9):
        return ("it was killed (SIGKILL), most likely by the system because the machine ran "
                "out of memory")
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"it was stopped by {name} from outside the app"


def _half_written(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_dir() and _HALF_WRITTEN.fullmatch(p.name)]


def _remove_half_written(folder: Path) -> None:
    """Remove the runs a stopped worker was writing in a job's folder."""
    with contextlib.suppress(OSError):
        for tmp in _half_written(folder):
            shutil.rmtree(tmp, ignore_errors=True)


def _remove_job_dir(folder: Path) -> None:
    """Remove a job folder, unless a live process still holds one of its locks."""
    if not folder.is_dir():
        return
    owner = take_lock(folder / OWNER_LOCK, wait=False)
    worker = take_lock(folder / WORKER_LOCK, wait=False) if owner is not None else None
    try:
        if owner is not None and worker is not None:
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        release_lock(worker)
        release_lock(owner)


def _reclaim(folder: Path) -> list[tuple[dict, dict]]:
    """Clean one job folder that has a ``job.json`` or a half-written run, unless a live
    process holds its owner lock; returns ``[(job.json, progress.json)]`` of a job that was
    queued or running when its app process died, else ``[]``."""
    owner = take_lock(folder / OWNER_LOCK, wait=False)
    if owner is None:
        return []  # queued or running in a live app process
    worker = None
    try:
        found = []
        if (folder / _JOB_FILE).is_file():  # read under the lock: a live owner writes it
            record = _read_json(folder / _JOB_FILE)
            found = [(record, _read_json(folder / "progress.json") or {})] if record else []
            (folder / _JOB_FILE).unlink(missing_ok=True)
        worker = take_lock(folder / WORKER_LOCK, wait=False)
        if worker is None:
            return found  # its worker is still ending: the next start removes the rest
        if found:
            shutil.rmtree(folder, ignore_errors=True)
        else:  # a finished job's folder (its log stays), or one of an older version
            _remove_half_written(folder)
        return found
    finally:
        release_lock(worker)
        release_lock(owner)


def _interrupted_job(record: dict, progress: dict, jobs_dir: Path) -> _Job | None:
    """The ``interrupted`` job of a ``job.json``: a training job or a task (a per-arm run,
    a ranking or label-ranking experiment, a simulation); ``None`` for a record that does
    not read as one (changed outside the app: its folder is gone, nothing else is lost)."""
    try:
        task = record.get("kind") == "task"
        if record.get("kind") not in ("train", "task"):
            return None
        config = (TaskSpec.from_dict(record["config"]) if task
                  else RunConfig.from_dict(record["config"]))
        if task and not isinstance(config.params_dict, dict):  # JSONDecodeError: ValueError
            return None
        job_id = str(record["job_id"])
        named = record.get("label")
        label = (named if isinstance(named, str) and named
                 else (config.label or config.target) if task else config.model)
        run_id = config.key() if task else config.run_id()
        submitted = float(record.get("submitted") or 0.0)
        when = "running" if progress else "queued"
        if progress and not task:
            n, split = int(progress.get("n_splits") or 1), int(progress.get("split") or 0)
            when += f" (split {split} of {n})" if n > 1 and split else ""
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    again = "Start it again to rerun it." if task else "Press Train again to rerun it."
    message = f"The app was restarted while this job was {when}; nothing was stored. {again}"
    started = progress.get("started")
    if not isinstance(started, (int, float)) or isinstance(started, bool):
        started = None
    # its progress is not kept: nothing draws it, and an odd value would break its status
    return _Job(job_id, config, run_id, label, [], "interrupted", jobs_dir / job_id,
                submitted, started=started, finished=time.time(), message=message,
                data_name=name if isinstance(name := record.get("data_name"), str) else None)


def _kill_all(workers: list) -> None:
    for w in list(workers):
        w.kill()
