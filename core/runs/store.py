"""Trained runs kept on disk: the frozen :class:`RunConfig` that keys them, the train/test
splits (:func:`make_splits`) and :class:`RunStore`, the directory of finished runs.

A run is one model configuration trained and scored on every split of one dataset.  It is
keyed by :meth:`RunConfig.run_id` — a short SHA-256 of the dataset fingerprint
(:meth:`core.data.abdata.ABData.fingerprint`) and the canonical JSON of the frozen config — so
re-opening a page, reloading the browser or restarting the app finds the run instead of
training again.

Layout of the runs directory (``$UPRANK_RUNS_DIR``, else
``platformdirs.user_data_dir("uprank")/runs``)::

    <run_id>/             one finished run; it only ever appears complete (built in _tmp/,
                          then renamed in one step)
        config.json       RunConfig.to_json()
        scores_<i>.npz    split i: test-row positions ``index``, ``y``, ``t`` and ``score``
        model_<i>.json    the model fitted on split i, from its own ``save_model``
        result.json       status, timings, metrics and messages (written last)
    _data/<fp>.npz        uploaded data handed to the training process (arrays + JSON)
    _results/<key>/       result of a background task other than training (a simulation):
                          meta.json and one JSON table per frame (pandas "table" orient)
    _jobs/<job_id>/       progress file, cancel flag and log of a background job; job.json and
                          owner.lock while it is queued or running, worker.lock while a
                          worker runs it (core.runs.jobs)
    _settings.json        the settings the pages last used (RunStore.save_settings)
    _tmp/                 runs being written

Nothing is ever pickled: arrays are ``.npz`` files read with ``allow_pickle=False``, the rest
is JSON, and models use their own text/JSON format.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from core._validation import check_choice, check_fraction, check_int_at_least
from core.data.abdata import ABData, DataError
from core.data.splits import SCHEMES, make_splits
from core.runs._datacopy import COPY_FORMAT, copy_format, read_abdata_npz, write_abdata_npz

__all__ = ["RUN_FORMAT_VERSION", "SCHEMES", "Run", "RunConfig", "RunStore", "RunWriter",
           "SplitScores", "default_runs_dir", "make_splits"]

#: Version of the run layout; part of every run id, so a new layout never reads an old run.
RUN_FORMAT_VERSION = 1
_RUN_ID = re.compile(r"[0-9a-f]{16}")
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


def default_runs_dir() -> Path:
    """``$UPRANK_RUNS_DIR``, else ``platformdirs.user_data_dir("uprank")/runs`` (not created)."""
    env = os.environ.get("UPRANK_RUNS_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("uprank")) / "runs"


# --------------------------------------------------------------------------- config
class _FrozenDict(tuple):
    """A dict frozen as sorted ``(key, value)`` pairs; hashable, and thawed back to a dict."""


def _freeze(value: Any, name: str) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number; got {value!r}.")
        return value
    if isinstance(value, Mapping):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ValueError(f"{name} must have string keys; got {bad[0]!r}.")
        return _FrozenDict((k, _freeze(value[k], f"{name}[{k!r}]")) for k in sorted(value))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v, f"{name}[{i}]") for i, v in enumerate(value))
    raise ValueError(f"{name} must be a JSON value (number, string, bool, None, list or dict); "
                     f"got {type(value).__name__}.")


def _thaw(value: Any) -> Any:
    if isinstance(value, _FrozenDict):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _freeze_mapping(value: Any, name: str) -> _FrozenDict:
    if value is None:
        return _FrozenDict()
    if isinstance(value, _FrozenDict):
        return value
    if isinstance(value, tuple):  # sorted pairs, as a frozen config holds them
        try:
            value = dict(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a dict; got a tuple that is not of "
                             "(key, value) pairs.") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict; got {type(value).__name__}.")
    return _freeze(dict(value), name)


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a trained run; frozen and hashable (a cache key).

    Parameters
    ----------
    fingerprint : str
        SHA-256 of the data (:meth:`ABData.fingerprint`); part of :meth:`run_id`.
    model : str
        Model name for :func:`core.models.baselines.make_model` (UI label or class name).
    params : dict or sorted pairs
        Constructor keywords of the model; JSON values only.  Frozen as sorted pairs, so the
        order in which they were given does not matter.  When they set no ``random_state``
        and the model has one, the training process uses ``seed``.
    dataset, options : str and dict, optional
        Key and loader options of :data:`core.data.datasets.DATASETS` when the data is a listed
        dataset (the training process reloads it and checks the fingerprint); ``None`` for
        uploaded data (handed over as a stored copy, see :meth:`RunStore.save_data`).
    scheme : {"holdout", "repeated"}
        One stratified holdout, or ``n_repeats`` of them (the paper: 10 × 70/30).
    test_size : float in (0, 1), default 0.3
    n_repeats : int, default 1
        Number of splits; always 1 for ``"holdout"``.
    seed : int, default 0
        Seed of the splits (and of the model when ``params`` has no ``random_state``).
    """

    fingerprint: str
    model: str
    params: Any = ()
    dataset: str | None = None
    options: Any = ()
    scheme: str = "holdout"
    test_size: float = 0.3
    n_repeats: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        fp = self.fingerprint
        if not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp):
            raise ValueError(f"fingerprint must be a 64-character lower-case hex SHA-256 "
                             f"(ABData.fingerprint()); got {fp!r}.")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"model must be a non-empty string; got {self.model!r}.")
        if self.dataset is not None and not (isinstance(self.dataset, str) and self.dataset):
            raise ValueError(f"dataset must be None or a dataset key; got {self.dataset!r}.")
        options = _freeze_mapping(self.options, "options")
        if options and self.dataset is None:
            raise ValueError("options are only allowed with a dataset key; got options for "
                             "uploaded data (dataset=None).")
        check_choice(self.scheme, "scheme", SCHEMES)
        test_size = check_fraction(self.test_size, "test_size")
        if test_size >= 1:
            raise ValueError(f"test_size must be a number in (0, 1); got {self.test_size!r}.")
        n_repeats = (1 if self.scheme == "holdout"
                     else check_int_at_least(self.n_repeats, "n_repeats", 1))
        set_ = object.__setattr__
        set_(self, "params", _freeze_mapping(self.params, "params"))
        set_(self, "options", options)
        set_(self, "test_size", test_size)
        set_(self, "n_repeats", n_repeats)
        set_(self, "seed", check_int_at_least(self.seed, "seed", 0))

    @classmethod
    def for_data(cls, data: ABData, model: str, params: Mapping | None = None, *,
                 dataset: str | None = None, options: Mapping | None = None,
                 scheme: str = "holdout", test_size: float = 0.3,
                 n_repeats: int | None = None, seed: int = 0) -> RunConfig:
        """Config for training ``model`` on ``data`` (its fingerprint is computed here).

        ``n_repeats`` defaults to 10 for ``"repeated"`` (the paper's protocol).
        """
        if not isinstance(data, ABData):
            raise TypeError(f"data must be an ABData; got {type(data).__name__}.")
        if n_repeats is None:
            n_repeats = 10 if scheme == "repeated" else 1
        return cls(data.fingerprint(), model, params or {}, dataset, options or {}, scheme,
                   test_size, n_repeats, seed)

    @property
    def params_dict(self) -> dict:
        """The model parameters as a (new) plain dict."""
        return _thaw(self.params)

    @property
    def options_dict(self) -> dict:
        """The dataset loader options as a (new) plain dict."""
        return _thaw(self.options)

    @property
    def n_splits(self) -> int:
        return self.n_repeats

    def to_dict(self) -> dict:
        return {"version": RUN_FORMAT_VERSION, "fingerprint": self.fingerprint,
                "model": self.model, "params": self.params_dict, "dataset": self.dataset,
                "options": self.options_dict, "scheme": self.scheme,
                "test_size": self.test_size, "n_repeats": self.n_repeats, "seed": self.seed}

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no spaces): equal configs give equal strings."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=True, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Mapping) -> RunConfig:
        if not isinstance(d, Mapping) or d.get("version") != RUN_FORMAT_VERSION:
            got = d.get("version") if isinstance(d, Mapping) else type(d).__name__
            raise ValueError(f"Not a run config of format version {RUN_FORMAT_VERSION}; "
                             f"got version {got!r}.")
        keys = ("fingerprint", "model", "params", "dataset", "options", "scheme",
                "test_size", "n_repeats", "seed")
        return cls(**{k: d[k] for k in keys if k in d})

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        return cls.from_dict(json.loads(text))

    def run_id(self) -> str:
        """16 hex digits of SHA-256(fingerprint, canonical JSON); the same in every process."""
        payload = f"uprank-run\0{self.fingerprint}\0{self.to_json()}".encode()
        return hashlib.sha256(payload).hexdigest()[:16]

    def describe(self) -> str:
        """One line for a job list: model, split scheme and seed."""
        split = (f"holdout {1 - self.test_size:.0%}/{self.test_size:.0%}"
                 if self.scheme == "holdout" else
                 f"{self.n_repeats}× {1 - self.test_size:.0%}/{self.test_size:.0%}")
        return f"{self.model} · {split} · seed {self.seed}"


# --------------------------------------------------------------------------- runs
class SplitScores(NamedTuple):
    """Scores of one split's test rows: positions in the data, outcome, treatment, score."""

    index: np.ndarray
    y: np.ndarray
    t: np.ndarray
    score: np.ndarray


@dataclass(frozen=True)
class Run:
    """A finished run read from the store (``result`` is the parsed ``result.json``)."""

    run_id: str
    path: Path
    config: RunConfig
    result: dict

    @property
    def n_splits(self) -> int:
        return int(self.result.get("n_splits", self.config.n_splits))

    @property
    def created(self) -> str:
        return str(self.result.get("created", ""))

    def scores(self, i: int = 0) -> SplitScores:
        """Test rows and scores of split ``i`` (``np.load(..., allow_pickle=False)``)."""
        i = self._check_split(i)
        with np.load(self.path / f"scores_{i}.npz", allow_pickle=False) as z:
            return SplitScores(z["index"], z["y"], z["t"], z["score"])

    def problem(self) -> str | None:
        """What makes this run's score files unreadable (deleted, truncated, not an ``.npz``
        of the run's arrays), or ``None``.  Opens each file's index only (cheap: the arrays
        are not read)."""
        try:
            n_splits = self.n_splits
        except (TypeError, ValueError):
            return "result.json is damaged (its number of splits is not a number)"
        for i in range(n_splits):
            name = f"scores_{i}.npz"
            try:
                with np.load(self.path / name, allow_pickle=False) as z:
                    missing = sorted({"index", "y", "t", "score"} - set(z.files))
            except FileNotFoundError:
                return f"{name} is missing"
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
                return f"{name} is damaged ({type(err).__name__})"
            if missing:
                return f"{name} lacks {', '.join(missing)}"
        return None

    def all_scores(self) -> list[SplitScores]:
        return [self.scores(i) for i in range(self.n_splits)]

    def model_path(self, i: int = 0) -> Path | None:
        """The saved model of split ``i``, or ``None`` when the model could not be saved."""
        i = self._check_split(i)
        found = sorted(self.path.glob(f"model_{i}.*"))
        return found[0] if found else None

    def load_model(self, i: int = 0) -> Any:
        """The model of split ``i``, read with :func:`core.models.load_model` (no pickle)."""
        path = self.model_path(i)
        if path is None:
            raise FileNotFoundError(f"Run {self.run_id} has no saved model for split {i}.")
        from core.models.baselines import load_model

        return load_model(path)

    def _check_split(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) \
                or not 0 <= i < self.n_splits:
            raise ValueError(f"i must be a split number in 0..{self.n_splits - 1}; got {i!r}.")
        return int(i)


class RunWriter:
    """Builds one run in a temporary folder; :meth:`commit` renames it into the store.

    Use as a context manager: leaving the block without :meth:`commit` (an exception, a
    cancelled training) deletes the temporary folder, so a half-written run never appears.
    """

    def __init__(self, store: RunStore, config: RunConfig, workdir: Path | None = None):
        self.store, self.config = store, config
        self.run_id = config.run_id()
        parent = Path(workdir) if workdir is not None else store.root / "_tmp"
        parent.mkdir(parents=True, exist_ok=True)
        self.tmp: Path | None = Path(tempfile.mkdtemp(prefix=f"{self.run_id}-", dir=parent))
        (self.tmp / "config.json").write_text(config.to_json(), encoding="utf-8")
        self._splits: set[int] = set()

    def add_split(self, i: int, index: Any, y: Any, t: Any, score: Any,
                  model: Any = None) -> None:
        """Write split ``i``'s test rows and scores, and the model through its ``save_model``."""
        tmp = self._live()
        np.savez(tmp / f"scores_{i}.npz", index=np.asarray(index, dtype=np.int64),
                 y=np.asarray(y, dtype=np.int8), t=np.asarray(t, dtype=np.int8),
                 score=np.asarray(score, dtype=np.float64))
        if model is not None and callable(getattr(model, "save_model", None)):
            model.save_model(tmp / f"model_{i}.json")
        self._splits.add(int(i))

    def commit(self, result: Mapping | None = None) -> Run:
        """Write ``result.json`` and move the run into the store in one rename.

        When another process stored the same run meanwhile, that run is kept and returned.
        """
        tmp = self._live()
        missing = sorted(set(range(self.config.n_splits)) - self._splits)
        if missing:
            raise ValueError(f"commit needs every split written; splits {missing} are missing.")
        meta = {"format": "uprank-run", "version": RUN_FORMAT_VERSION, "run_id": self.run_id,
                "status": "done", "n_splits": self.config.n_splits,
                "created": datetime.now(UTC).isoformat(timespec="seconds")}
        body = {**meta, **dict(result or {})}
        (tmp / "result.json").write_text(json.dumps(body, indent=1, allow_nan=False),
                                         encoding="utf-8")
        final = self.store.path(self.run_id)
        try:
            os.rename(tmp, final)
        except OSError:
            if self.store.exists(self.run_id):
                self.discard()  # stored meanwhile by another process: keep theirs
            elif final.is_dir():  # a damaged copy of this run: replace it
                self.store.delete(self.run_id)
                os.rename(tmp, final)
            else:
                raise
        self.tmp = None
        return self.store.get(self.run_id)

    def discard(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def _live(self) -> Path:
        if self.tmp is None:
            raise RuntimeError("This run writer was already committed or discarded.")
        return self.tmp

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.discard()


def _on_data(folder: Path, fingerprint: str | None) -> bool:
    """Whether a damaged run folder may belong to the data ``fingerprint``: ``None`` (any
    data), a readable config naming it, or an unreadable config (its data is unknown)."""
    if fingerprint is None:
        return True
    try:
        config = RunConfig.from_json((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, KeyError):
        return True
    return config.fingerprint == fingerprint


def _mtime(path: Path) -> float:
    """A folder's modification time, ``0`` when it is gone (deleted by another tab)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class RunStore:
    """The directory of finished runs (see the module docstring for the layout).

    Safe to share between threads and processes: runs appear by an atomic rename and are
    never modified afterwards.

    Parameters
    ----------
    root : path, optional
        Default :func:`default_runs_dir`.  Created on first write.
    """

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root).expanduser() if root is not None else default_runs_dir()

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    def path(self, run_id: str) -> Path:
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            raise ValueError(f"run_id must be 16 lower-case hex digits; got {run_id!r}.")
        return self.root / run_id

    def exists(self, run_id: str) -> bool:
        """Whether the run is stored *and readable* (a damaged run is not: training it again
        replaces it)."""
        return self.get(run_id) is not None

    def get(self, run_id: str) -> Run | None:
        """The run, or ``None`` when it is not stored (or its files are unreadable)."""
        path = self.path(run_id)  # a bad id raises here, before touching the disk
        try:
            return self._read(run_id, path)
        except (OSError, ValueError, TypeError, KeyError):
            return None

    @staticmethod
    def _read(run_id: str, path: Path) -> Run:
        config = RunConfig.from_json((path / "config.json").read_text(encoding="utf-8"))
        result = json.loads((path / "result.json").read_text(encoding="utf-8"))
        if not isinstance(result, dict):
            raise ValueError("result.json does not hold a run's result")
        return Run(run_id, path, config, result)

    def scan(self, fingerprint: str | None = None) -> tuple[list[Run], list[tuple[str, str]]]:
        """:meth:`list` and :meth:`damaged` in one pass over the run folders (each run's
        JSON read once: the Train page shows both on every rerun)."""
        if not self.root.is_dir():
            return [], []
        runs, damaged = [], []
        for entry in sorted(self.root.iterdir(), key=_mtime):
            if not _RUN_ID.fullmatch(entry.name):
                continue
            try:
                run = self._read(entry.name, entry)
            except (OSError, ValueError, TypeError, KeyError) as err:
                if entry.is_dir() and _on_data(entry, fingerprint):  # (not deleted meanwhile)
                    damaged.append((entry.name, (
                        f"{err.filename and Path(err.filename).name} is missing or unreadable"
                        if isinstance(err, OSError) else f"a file is damaged ({err})")))
                continue
            if fingerprint is None or run.config.fingerprint == fingerprint:
                runs.append(run)
        return sorted(runs, key=lambda r: (r.created, r.run_id)), damaged

    def damaged(self, fingerprint: str | None = None) -> list[tuple[str, str]]:
        """Run folders whose ``config.json`` or ``result.json`` cannot be read (truncated,
        deleted by hand): ``(run id, what is wrong)``, oldest folder first.  With
        ``fingerprint``, only those whose readable config names that data, or whose config
        is unreadable (which data they were on is then unknown).  :meth:`list` skips them;
        :meth:`delete` removes them; training the same run again replaces them."""
        return self.scan(fingerprint)[1]

    def list(self, fingerprint: str | None = None) -> list[Run]:
        """Stored runs (of the data with ``fingerprint`` when given), oldest first."""
        return self.scan(fingerprint)[0]

    @property
    def settings_path(self) -> Path:
        """``_settings.json`` in the runs directory: the last settings the app's pages used."""
        return self.root / "_settings.json"

    def settings(self) -> dict:
        """The saved settings (``{}`` when there are none or the file cannot be read)."""
        try:
            saved = json.loads(self.settings_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return saved if isinstance(saved, dict) else {}

    def save_settings(self, changes: Mapping[str, Any]) -> bool:
        """Merge ``changes`` (JSON values) into the saved settings, atomically; ``False``
        when the directory cannot be written (the settings are then kept for the session
        only)."""
        from core.data.uploads import write_atomic

        merged = {**self.settings(), **dict(changes)}
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            write_atomic(self.settings_path, json.dumps(merged, indent=1).encode("utf-8"))
        except OSError:
            return False
        return True

    def delete(self, run_id: str) -> bool:
        """Remove a run (moved aside first, so readers never see half of it)."""
        path = self.path(run_id)
        if not path.is_dir():
            return False
        trash = self.root / "_tmp" / f"deleted-{run_id}-{os.getpid()}-{time.monotonic_ns()}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(path, trash)
        except FileNotFoundError:
            return False
        shutil.rmtree(trash, ignore_errors=True)
        return True

    def writer(self, config: RunConfig, *, workdir: str | Path | None = None) -> RunWriter:
        """A :class:`RunWriter` for ``config``; ``workdir`` must be on the same file system."""
        if not isinstance(config, RunConfig):
            raise TypeError(f"config must be a RunConfig; got {type(config).__name__}.")
        return RunWriter(self, config, None if workdir is None else Path(workdir))

    def cleanup(self, max_age_s: float = 86_400.0, data_max_age_s: float = 7 * 86_400.0
                ) -> None:
        """Delete leftovers of crashed writers (``_tmp`` entries older than ``max_age_s``)
        and data copies not saved or reused for ``data_max_age_s`` (finished runs do not
        need them; :meth:`JobRunner.submit <core.runs.jobs.JobRunner.submit>` saves them again)."""
        _remove_older_than(self.root / "_tmp", max_age_s)
        _remove_older_than(self.root / "_data", data_max_age_s)

    # ------------------------------------------------------------------ data hand-off
    def data_path(self, fingerprint: str) -> Path:
        if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
            raise ValueError(f"fingerprint must be a 64-character hex SHA-256; got "
                             f"{fingerprint!r}.")
        return self.root / "_data" / f"{fingerprint}.npz"

    def has_data(self, fingerprint: str) -> bool:
        return self.data_path(fingerprint).is_file()

    def save_data(self, data: ABData) -> str:
        """Store ``X``, ``y`` and ``t`` of ``data`` as ``_data/<fingerprint>.npz``.

        Numeric columns keep their dtype; ``category`` columns are stored as codes with
        their levels in a JSON header.  Returns the fingerprint.  Written atomically; a copy
        already stored is kept, unless it has an older layout (``COPY_FORMAT``).
        """
        if not isinstance(data, ABData):
            raise TypeError(f"data must be an ABData; got {type(data).__name__}.")
        fp = data.fingerprint()
        path = self.data_path(fp)
        if path.is_file() and copy_format(path) == COPY_FORMAT:
            with contextlib.suppress(OSError):
                os.utime(path)  # in use again: keep it from cleanup()
            return fp
        write_abdata_npz(data, path)
        return fp

    def load_data(self, fingerprint: str) -> ABData:
        """Read data stored by :meth:`save_data` and check its fingerprint."""
        path = self.data_path(fingerprint)
        if not path.is_file():
            raise DataError("The uploaded data is no longer in the runs directory; "
                            "upload the file again.")
        data = read_abdata_npz(path)
        if data.fingerprint() != fingerprint:
            raise DataError("The stored copy of the uploaded data is damaged (its fingerprint "
                            "changed); upload the file again.")
        return data


    # ------------------------------------------------------------------ task results
    def result_path(self, key: str) -> Path:
        if not isinstance(key, str) or not _RUN_ID.fullmatch(key):
            raise ValueError(f"key must be 16 lower-case hex digits; got {key!r}.")
        return self.root / "_results" / key

    def has_result(self, key: str) -> bool:
        return (self.result_path(key) / "meta.json").is_file()

    def save_result(self, key: str, meta: Mapping, frames: Mapping[str, Any]) -> None:
        """Store a task's result: ``meta`` (JSON-able) and named ``pandas.DataFrame`` s.

        Written into ``_tmp`` and renamed into place, so a reader sees all of it or nothing;
        ``meta.json`` is written last.  Floats keep 15 significant digits.
        """
        final = self.result_path(key)
        tmp = Path(tempfile.mkdtemp(prefix=f"result-{key}-", dir=self._tmp_dir()))
        try:
            for name, frame in frames.items():
                if not re.fullmatch(r"[A-Za-z0-9_]+", name):
                    raise ValueError(f"frame names must be identifiers; got {name!r}.")
                frame.to_json(tmp / f"{name}.json", orient="table", double_precision=15)
            (tmp / "meta.json").write_text(json.dumps(
                {"meta": dict(meta), "frames": sorted(frames)}, allow_nan=True), encoding="utf-8")
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(tmp, final)
            except OSError:  # stored meanwhile by another worker: theirs is as good
                if not self.has_result(key):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def list_results(self, **match: Any) -> list[tuple[str, dict]]:
        """``(key, meta)`` of every stored task result whose meta has all the ``match`` items
        (e.g. ``kind="multiarm", fingerprint=...``); unreadable results are skipped."""
        root = self.root / "_results"
        found = []
        for meta_path in sorted(root.glob("*/meta.json")) if root.is_dir() else []:
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))["meta"]
            except (OSError, ValueError, KeyError):
                continue
            if isinstance(meta, dict) and all(meta.get(k) == v for k, v in match.items()):
                found.append((meta_path.parent.name, meta))
        return found

    def load_result(self, key: str) -> tuple[dict, dict] | None:
        """``(meta, frames)`` of a stored task result, or ``None`` when absent or unreadable."""
        import io

        import pandas as pd

        path = self.result_path(key)
        try:
            head = json.loads((path / "meta.json").read_text(encoding="utf-8"))
            frames = {name: pd.read_json(io.StringIO((path / f"{name}.json").read_text(
                encoding="utf-8")), orient="table", precise_float=True)
                for name in head["frames"]}
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return head["meta"], frames

    def _tmp_dir(self) -> Path:
        path = self.root / "_tmp"
        path.mkdir(parents=True, exist_ok=True)
        return path


def _remove_older_than(folder: Path, max_age_s: float) -> None:
    if not folder.is_dir():
        return
    limit = time.time() - max_age_s
    for entry in folder.iterdir():
        try:
            if entry.stat().st_mtime < limit:
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink()
        except OSError:
            continue
