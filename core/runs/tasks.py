"""Background tasks other than training runs, for the one job runner of :mod:`core.runs.jobs`.

A task is a plain function named ``"module:function"`` that the worker process calls as::

    meta, frames = fn(params, inputs=inputs, store=store, progress=progress)

``params`` is the task's JSON-able parameters, ``inputs`` the arrays handed over with it
(``{}`` when none; stored as ``.npz``, never pickled), ``store`` the
:class:`~core.runs.store.RunStore` (for data copies), and ``progress(fraction, text)``
reports the share done and raises :class:`TaskCancelled` once a cancel was requested.  The
function returns JSON-able ``meta`` and named ``pandas.DataFrame`` s, which the worker stores
under the task's :meth:`TaskSpec.key` (:meth:`RunStore.save_result
<core.runs.store.RunStore.save_result>`).  Tasks are deduplicated and cached by that key,
exactly as runs are by their run id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["TaskCancelled", "TaskSpec"]


class TaskCancelled(Exception):
    """Raised by a task's progress callback when the user cancelled the task."""


@dataclass(frozen=True)
class TaskSpec:
    """What a background task runs: ``target`` (``"module:function"``) and its parameters.

    Build one with :meth:`make`; ``params`` is held as canonical JSON so the spec is
    hashable and its :meth:`key` is stable across processes and restarts.
    """

    target: str
    params: str
    label: str = ""
    #: the task trains models (a ranking run, the several-arms models): its job ends with
    #: "Trained in … s", as a training run's does, not "Done in … s"; not part of the key
    trains: bool = False

    @classmethod
    def make(cls, target: str, params: Mapping[str, Any], *, label: str = "",
             trains: bool = False) -> TaskSpec:
        if not isinstance(target, str) or target.count(":") != 1:
            raise ValueError(f"target must be 'module:function'; got {target!r}.")
        try:
            text = json.dumps(dict(params), sort_keys=True, separators=(",", ":"),
                              allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"params must be JSON-able (no NaN); {exc}") from None
        return cls(target, text, str(label), bool(trains))

    @property
    def params_dict(self) -> dict:
        return json.loads(self.params)

    def key(self) -> str:
        """16 hex digits of SHA-256 over target and parameters: the result's id."""
        return hashlib.sha256(f"task\n{self.target}\n{self.params}".encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return {"target": self.target, "params": self.params, "label": self.label,
                "trains": self.trains}

    @classmethod
    def from_dict(cls, d: Mapping) -> TaskSpec:
        return cls(str(d["target"]), str(d["params"]), str(d.get("label", "")),
                   bool(d.get("trains", False)))
