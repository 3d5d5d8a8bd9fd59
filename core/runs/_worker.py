"""The worker processes of :mod:`core.runs.jobs`: their handle in the app and their main loop.

App side, :class:`WorkerProcess` starts ``python -c "from core.runs._worker import worker_main;
worker_main()"`` and a thread that reads its replies.  Worker side, :func:`worker_main` reads
one JSON job per line on stdin, trains it (:func:`run_job`) and writes one JSON reply per line
on the original stdout (anything else printed to stdout goes to stderr).  Progress and the
cancel flag are files in the job's folder (:class:`Progress`).  Nothing is pickled.

A worker never outlives the app process that started it: a thread reads its stdin, whose other
end only that app process holds, and end of file there means the app is gone (killed, even
with SIGKILL, or shutting down), so the worker ends at once (``os._exit``) even in the middle
of a training run — it would otherwise train on, unseen and uncancellable, and could train
the same run a second time beside a restarted app.  (Not ``prctl(PR_SET_PDEATHSIG)``: Linux
sends that signal when the *thread* that started the worker ends, and Streamlit starts it
from a script thread that ends after every page run.)

Lock files tell live jobs from dead ones (:func:`take_lock`): the app process holds
``owner.lock`` of each job it has queued or running, the worker ``worker.lock`` of the job
it runs; the operating system releases them when a process dies, however it dies.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.data.abdata import ABData
from core.runs.store import RunConfig, RunStore, make_splits

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None
    import msvcrt

log = logging.getLogger("uprank")
_PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = "from core.runs._worker import worker_main; worker_main()"
CHECK_EVERY_S = 0.02  # cancel-flag checks, at most this often
WRITE_EVERY_S = 0.1  # progress-file writes, at most this often
#: Models that fit several models one after the other and count their rounds as one run of
#: ``len(parts) · n_estimators`` (see :class:`core.models.TwoModel`): the names of the parts,
#: in the order they are fitted, so progress can say "round 95/100 of the treated-arm model".
PROGRESS_PARTS: dict[str, tuple[str, ...]] = {
    "TwoModel": ("treated-arm model", "control-arm model"),
}
#: Lock files in a job's folder: held by the app process that queued the job, and by the
#: worker that runs it.
OWNER_LOCK, WORKER_LOCK = "owner.lock", "worker.lock"
#: Exit code of a worker whose app process is gone.
ORPHAN_EXIT = 17


class WorkerProcess:
    """One worker process and the daemon thread that reads its replies.

    ``on_reply(worker, reply)`` is called for every reply and ``on_exit(worker)`` once when
    the process has ended; both are held as weak references (the runner owns the worker).
    """

    def __init__(self, on_reply: Callable, on_exit: Callable, *, nice: int = 0):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PROJECT_ROOT, env.get("PYTHONPATH"))
                                            if p)
        env["UPRANK_WORKER_NICE"] = str(nice)
        self.job_id: str | None = None
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env, text=True, encoding="utf-8", bufsize=1)
        self._on_reply = weakref.WeakMethod(on_reply)
        self._on_exit = weakref.WeakMethod(on_exit)
        self.thread = threading.Thread(target=self._read, daemon=True,
                                       name=f"uprank-worker-{self.proc.pid}")
        self.thread.start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.poll() is None:
                self.proc.kill()

    def _read(self) -> None:
        try:
            for line in self.proc.stdout:
                try:
                    reply = json.loads(line)
                except ValueError:  # not a reply (the worker's own stdout was redirected)
                    log.warning("Worker %s wrote a line that is not a JSON reply: %.200r",
                                self.proc.pid, line)
                    continue
                callback = self._on_reply()
                if callback is None:
                    break
                try:
                    callback(self, reply)
                except Exception:  # noqa: BLE001 - keep reading: the next reply still counts
                    log.exception("Handling a reply of worker %s failed", self.proc.pid)
                del callback
        except OSError:  # the pipe broke: the process is gone, handled below
            pass
        self.proc.wait()
        self.close_stdin()
        callback = self._on_exit()
        if callback is not None:
            callback(self)


def take_lock(path: Path, *, wait: bool = True) -> int | None:
    """Open ``path`` (created if missing) and lock it for this open file; returns its
    descriptor, to pass to :func:`release_lock`.

    ``None`` when another holder has the lock (with ``wait=False``; ``flock`` locks are per
    open file, so this includes a second ``take_lock`` in the same process) or when the file
    cannot be opened.  The operating system drops the lock when the holder's process ends,
    however it ends: a held lock means a live owner, never a stale one.  On Windows
    (``msvcrt.locking`` of the file's first byte) a waiting call gives up after the C
    runtime's ten one-second retries and returns ``None`` (tests/test_locks.py).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        else:  # pragma: no cover - Windows
            msvcrt.locking(fd, msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
    except OSError:
        os.close(fd)
        return None
    return fd


def release_lock(fd: int | None) -> None:
    """Release a lock of :func:`take_lock` (``None`` is ignored)."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def append_log(job_dir: Path, text: str) -> None:
    """Append to the job's ``log.txt`` (never raises)."""
    with contextlib.suppress(OSError):
        job_dir.mkdir(parents=True, exist_ok=True)
        with open(job_dir / "log.txt", "a", encoding="utf-8") as fh:
            fh.write(text)


# --------------------------------------------------------------------------- worker side
def worker_main() -> None:
    """Entry point of a worker process: one JSON job per stdin line, one reply per job."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not break replies
    nice = int(os.environ.get("UPRANK_WORKER_NICE", "0") or 0)
    if nice and hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(nice)
    with contextlib.suppress(ImportError):  # what every job needs: load it before the first
        import sklearn.model_selection  # noqa: F401

        import core.data.datasets  # noqa: F401
        import core.evaluation.curves  # noqa: F401
        import core.models.baselines  # noqa: F401
    _warm_lambda_kernels()
    jobs: queue.Queue[str | None] = queue.Queue()
    busy, eof = threading.Event(), threading.Event()
    threading.Thread(target=_read_stdin, args=(sys.stdin, jobs, busy, eof), daemon=True,
                     name="uprank-stdin").start()
    while (line := jobs.get()) is not None:
        if not line.strip():
            continue
        msg = json.loads(line)
        for p in msg.get("sys_path", []):
            if p not in sys.path:
                sys.path.append(p)
        busy.set()
        if eof.is_set():  # the app went away between the job's line and now
            os._exit(ORPHAN_EXIT)
        reply = run_job(msg)
        busy.clear()
        try:
            replies.write(json.dumps(reply) + "\n")
        except (OSError, ValueError):  # the app is gone (BrokenPipeError): nobody to tell
            os._exit(ORPHAN_EXIT)


def _read_stdin(stdin: Any, jobs: queue.Queue, busy: threading.Event,
                eof: threading.Event) -> None:
    """Hand the job lines of ``stdin`` to the main loop; at end of file — the app process
    closed the pipe or died — stop the loop, or end the process at once when a job is
    running (the app removes its half-written run: :mod:`core.runs.jobs`)."""
    with contextlib.suppress(OSError, ValueError):
        for line in stdin:
            jobs.put(line)
    eof.set()
    if busy.is_set():
        os._exit(ORPHAN_EXIT)
    jobs.put(None)


def _warm_lambda_kernels() -> None:
    """Load (or, in a fresh checkout, compile: ~20 s once) the λ-objective's compiled kernels
    now, while the worker waits for its first job, instead of inside the first training run."""
    try:
        import numpy as np

        from core.objectives.lambdas import lambda_gradients

        for method in ("binned", "exact"):
            lambda_gradients(np.linspace(0, 1, 300), np.tile([1.0, 0.0, -1.0], 100), [300],
                             metric="pcg", method=method)
    except Exception:  # noqa: BLE001 - a warm-up must never stop the worker
        pass


class JobCancelled(Exception):
    """Raised by the progress callback when :mod:`core.models.baselines` (and its
    ``TrainingCancelled``) cannot be imported."""


class Progress:
    """Worker side of the progress file and the cancel flag of one job."""

    def __init__(self, job_dir: Path, n_splits: int, cancelled: type[BaseException]):
        self.path, self.flag = job_dir / "progress.json", job_dir / "cancel"
        self.cancelled = cancelled
        self.state = {"phase": "starting", "split": 0, "n_splits": n_splits, "round": 0,
                      "total": 0, "started": time.time(), "fit_started": None}
        self._last_check = self._last_write = 0.0

    def set(self, **fields: Any) -> None:
        self.state.update(fields)
        self.write()

    def write(self) -> None:
        now = time.time()
        self.state["updated"] = now
        self._last_write = now
        tmp = self.path.with_suffix(".tmp")
        with contextlib.suppress(OSError):  # a reader holding the file (Windows): next time
            tmp.write_text(json.dumps(self.state), encoding="utf-8")
            os.replace(tmp, self.path)

    def check(self) -> None:
        self._last_check = time.monotonic()
        if self.flag.exists():
            raise self.cancelled("Training cancelled.")

    def requested(self) -> bool:
        return self.flag.exists()

    def report(self, fraction: float, text: str = "") -> None:
        """A task's progress callback: share done in [0, 1] and what it is doing; raises
        the cancel exception once a cancel was requested."""
        self.state["fraction"], self.state["text"] = min(1.0, max(0.0, float(fraction))), text
        self._tick(last=fraction >= 1)

    def callback(self, round: int, total: int, metric: Any = None) -> None:
        """The ``fit`` callback: record the round, raise when a cancel was requested."""
        self.state["round"], self.state["total"] = int(round), int(total)
        self._tick(last=round >= total)

    def _tick(self, *, last: bool) -> None:
        """After a step: note when work began, look for the cancel flag (at most every
        ``CHECK_EVERY_S``) and write the file (at most every ``WRITE_EVERY_S``, and last)."""
        if self.state["fit_started"] is None:
            self.state["fit_started"] = time.time()
        if time.monotonic() - self._last_check >= CHECK_EVERY_S:
            self.check()
        if time.time() - self._last_write >= WRITE_EVERY_S or last:
            self.write()


def run_job(msg: dict) -> dict:
    """Run one job message (``kind`` "train", the default, or "task"); returns the reply."""
    job_id, job_dir = msg["job_id"], Path(msg["job_dir"])
    reply = {"job_id": job_id}
    task = msg.get("kind") == "task"
    if task:
        from core.runs.tasks import TaskCancelled as cancelled
        n_steps = 1
    else:
        try:
            from core.models import TrainingCancelled as cancelled
        except Exception:  # noqa: BLE001 - a broken model module fails the job below, with a log
            cancelled = JobCancelled
        n_steps = int(msg["config"].get("n_repeats", 1))
    progress = Progress(job_dir, n_steps, cancelled)
    lock = take_lock(job_dir / WORKER_LOCK)  # "this job's worker is alive"
    progress.write()
    try:
        reply.update(_run_task(msg, progress) if task else _train(msg, progress))
    except BaseException as exc:  # noqa: BLE001 - reported to the runner, never raised
        if progress.requested():
            return {**reply, "state": "cancelled", "message": "Cancelled."}
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            raise
        append_log(job_dir, traceback.format_exc())
        if isinstance(exc, RunNotSaved):
            return {**reply, "state": "failed", "message": str(exc)}
        what = (msg["task"].get("label") or "The task").split(":")[0] if task else "Training"
        return {**reply, "state": "failed", "message": _one_line(exc, progress.state, what)}
    finally:
        release_lock(lock)
    return reply


class RunNotSaved(Exception):
    """The training finished but its run could not be moved into the runs directory; the
    message names that directory and the reason, not the temporary folders."""


def _one_line(exc: BaseException, state: dict, what: str = "Training") -> str:
    text = (str(exc).strip().splitlines() or [""])[0]
    if not isinstance(exc, ValueError):  # DataError is a ValueError
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    where = ""
    if state.get("phase") == "training" and state.get("n_splits", 1) > 1:
        where = f" (split {state['split']} of {state['n_splits']})"
    elif state.get("phase") in ("loading", "splitting"):
        where = f" while {state['phase']} the data"
    return f"{what} failed{where}: {text}"


def _run_task(msg: dict, progress: Progress) -> dict:
    """Run a :class:`~core.runs.tasks.TaskSpec` and store its result under its key."""
    import numpy as np

    from core.runs.tasks import TaskSpec

    spec = TaskSpec.from_dict(msg["task"])
    store = RunStore(msg["store"])
    key = spec.key()
    if store.has_result(key):
        return {"state": "cached", "message": "Already computed: the stored result is used."}
    inputs_path = Path(msg["job_dir"]) / "inputs.npz"
    inputs = {}
    if inputs_path.is_file():
        with np.load(inputs_path, allow_pickle=False) as npz:
            inputs = {name: npz[name] for name in npz.files}
    progress.set(phase="running", fraction=0.0, text="Starting…")
    meta, frames = _resolve(spec.target)(spec.params_dict, inputs=inputs, store=store,
                                         progress=progress.report)
    progress.check()
    progress.set(phase="saving")
    store.save_result(key, meta, frames)
    return {"state": "done", "run_id": key}


def _load_data(config: RunConfig, store: RunStore) -> ABData:
    from core.data.abdata import DataError

    if config.dataset is None:
        return store.load_data(config.fingerprint)
    from core.data.datasets import load_dataset

    data = load_dataset(config.dataset, **config.options_dict)
    if data.fingerprint() != config.fingerprint:
        raise DataError(f"The dataset {config.dataset!r} {config.options_dict} loaded for "
                        "training differs from the one the run was set up with (fingerprint "
                        f"{data.fingerprint()[:12]}… vs {config.fingerprint[:12]}…); reload "
                        "the page and try again.")
    return data


def _resolve(factory: str) -> Any:
    import importlib

    module, _, attr = factory.partition(":")
    return getattr(importlib.import_module(module), attr)


def _train(msg: dict, progress: Progress) -> dict:
    import numpy as np

    from core._validation import check_scores

    t0 = time.perf_counter()
    config = RunConfig.from_dict(msg["config"])
    store = RunStore(msg["store"])
    run_id = config.run_id()
    if store.exists(run_id):
        return {"state": "cached", "message": "Already trained: the stored run is used."}
    progress.set(phase="loading")
    data = _load_data(config, store)
    progress.set(phase="splitting")
    splits = make_splits(data.y, data.t, scheme=config.scheme, test_size=config.test_size,
                         n_repeats=config.n_repeats, random_state=config.seed)
    factory = _resolve(msg["factory"])
    fit_s, predict_s, metrics, messages, seeded = [], [], [], [], None
    with store.writer(config, workdir=Path(msg["job_dir"])) as writer, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, (train, test) in enumerate(splits):
            progress.check()
            model = factory(config.model, **config.params_dict)
            progress.set(phase="training", split=i + 1, round=0,
                         parts=list(PROGRESS_PARTS.get(type(model).__name__, ())),
                         unit=getattr(model, "progress_unit", "round"))
            seeded = _seed_model(model, config)
            t = time.perf_counter()
            model.fit(data.X.iloc[train].reset_index(drop=True), data.y[train], data.t[train],
                      callback=progress.callback)
            fit_s.append(round(time.perf_counter() - t, 4))
            t = time.perf_counter()
            score = model.predict(data.X.iloc[test].reset_index(drop=True))
            predict_s.append(round(time.perf_counter() - t, 4))
            score = check_scores(np.asarray(score, dtype=np.float64).reshape(-1), "score",
                                 n=len(test))
            writer.add_split(i, test, data.y[test], data.t[test], score, model)
            metrics.append(_auuc_metrics(data.y[test], data.t[test], score))
        progress.check()
        progress.set(phase="saving")
        messages = sorted({str(w.message) for w in caught})
        result = {
            "data_name": data.name, "n_rows": data.n, "n_features": int(data.X.shape[1]),
            "model_class": type(model).__name__, "model_random_state": seeded,
            "train_sizes": [len(tr) for tr, _ in splits],
            "test_sizes": [len(te) for _, te in splits],
            "fit_seconds": fit_s, "predict_seconds": predict_s,
            "total_seconds": round(time.perf_counter() - t0, 4),
            "metrics": metrics, "metrics_mean": _mean_metrics(metrics),
            "messages": messages, "versions": _versions(),
        }
        try:
            writer.commit(result)
        except OSError as err:
            reason = err.strerror or type(err).__name__
            raise RunNotSaved(f"Training finished but the run could not be saved to "
                              f"{store.root}: {reason}.") from err
    return {"state": "done", "run_id": run_id}


def _seed_model(model: Any, config: RunConfig) -> int | None:
    """Give the model ``config.seed`` as ``random_state`` when the params set none."""
    get_params = getattr(model, "get_params", None)
    if "random_state" in config.params_dict or not callable(get_params):
        return config.params_dict.get("random_state")
    if "random_state" in get_params(deep=False) and get_params(deep=False)["random_state"] \
            is None:
        model.set_params(random_state=config.seed)
        return config.seed
    return None


def _auuc_metrics(y: Any, t: Any, score: Any) -> dict:
    """AUUC of every curve definition at the default cut-offs (``None`` where undefined), as
    :func:`core.evaluation.auuc_table` computes it."""
    import math

    from core.evaluation.curves import auuc_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = auuc_table(y, t, score)
    return {"auuc": {name: {col: (float(v) if math.isfinite(v) else None)
                            for col, v in row.items()}
                     for name, row in table.iterrows()}}


def _mean_metrics(metrics: list[dict]) -> dict:
    if not metrics:
        return {}
    out = {}
    for name, row in metrics[0]["auuc"].items():
        out[name] = {}
        for key in row:
            vals = [m["auuc"][name][key] for m in metrics if m["auuc"][name][key] is not None]
            out[name][key] = sum(vals) / len(vals) if vals else None
    return {"auuc": out}


def _versions() -> dict:
    import platform

    import numpy as np

    out = {"python": platform.python_version(), "numpy": np.__version__}
    if "lightgbm" in sys.modules:
        out["lightgbm"] = getattr(sys.modules["lightgbm"], "__version__", "?")
    return out
