"""The dataset a user chose, written as URL query parameters, and the arm split it was designed
with (for the sample-ratio-mismatch check).

A listed dataset is ``?dataset=<key>&<option>=<value>…`` (the options of its
:class:`~core.data.datasets.DatasetSpec`, e.g. ``?dataset=hillstrom&arm=womens&outcome=visit``);
a stored upload (:mod:`core.data.uploads`) is ``?upload=<fingerprint>``.  Parsing is strict
where it matters and lenient where it does not: an unknown dataset, a value not offered for an
option, a malformed fingerprint or both forms at once raise ``ValueError`` naming the
parameter, the allowed values and what was received; a missing option takes its default; query
parameters that name no dataset setting are ignored (other pages may use them).

>>> choice = DatasetChoice.from_params({"dataset": "hillstrom", "arm": "womens"})
>>> choice.key, choice.options
('hillstrom', (('arm', 'womens'), ('outcome', 'visit')))
>>> choice.to_params()
{'dataset': 'hillstrom', 'arm': 'womens', 'outcome': 'visit'}
>>> designed_treated_share("paper_simulation", {"scenario": "more_treated"})[0]
0.9
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.data.datasets import DATASETS
from core.data.hygiene import rounded_share, share_text
from core.data.synthetic import PAPER_SCENARIOS

__all__ = ["DATASET_PARAMS", "DatasetChoice", "assumed_treated_share",
           "designed_treated_share", "srm_design"]

#: Every query parameter a dataset choice may write: ``dataset``, ``upload`` and the option
#: names of every listed dataset.  Setting a new choice removes all of them first.
DATASET_PARAMS: frozenset[str] = frozenset(
    {"dataset", "upload", "file", "file_treatment", "file_outcome",
     *(name for spec in DATASETS.values() for name in spec.options)})
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


def _last(value: Any) -> str:
    """One query value: the last of a repeated parameter, as stripped text."""
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else ""
    return str(value).strip()


@dataclass(frozen=True)
class DatasetChoice:
    """A listed dataset (``key`` of :data:`~core.data.datasets.DATASETS` and its ``options``
    as ``(name, value)`` pairs in the spec's order, every option present), a stored upload
    (``upload``: its fingerprint; ``key`` is None) or a large file read by path (``file`` =
    ``(path, treatment column, outcome column)``; URL ``?file=…&file_treatment=…&
    file_outcome=…``)."""

    key: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    upload: str | None = None
    file: tuple[str, str, str] | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DatasetChoice | None:
        """The choice written in ``params`` (``st.query_params`` or a dict of str or lists of
        str), or ``None`` when they name no dataset.

        Raises
        ------
        ValueError
            Unknown dataset, a value not offered for an option, a malformed fingerprint, or
            both ``dataset`` and ``upload``.
        """
        key = _last(params["dataset"]) if "dataset" in params else None
        upload = _last(params["upload"]) if "upload" in params else None
        if "file" in params:
            if key is not None or upload is not None:
                raise ValueError("The link names a file and also a dataset or an upload; give "
                                 "only one.")
            parts = [_last(params.get(name, "")) for name in
                     ("file", "file_treatment", "file_outcome")]
            if not all(parts):
                raise ValueError("A link to a file needs file=, file_treatment= and "
                                 "file_outcome= (the path and the two column names).")
            return cls(file=(parts[0], parts[1], parts[2]))
        if key is not None and upload is not None:
            raise ValueError("The link names both a dataset and an upload (query parameters "
                             f"dataset={key!r} and upload={upload!r}); give only one.")
        if upload is not None:
            if not _FINGERPRINT.fullmatch(upload):
                raise ValueError("Query parameter upload must be the 64 hex digits of a stored "
                                 f"upload's fingerprint; got {upload[:80]!r}.")
            return cls(upload=upload)
        if key is None:
            return None
        if key not in DATASETS:
            raise ValueError(f"Query parameter dataset must be one of "
                             f"{', '.join(map(repr, DATASETS))}; got {key[:80]!r}.")
        options = []
        spec = DATASETS[key]
        for name, allowed in spec.options.items():
            if name not in params:
                options.append((name, allowed[0]))
                continue
            text = _last(params[name])
            text = str(spec.renamed.get((name, text), text))
            match = [v for v in allowed if str(v) == text]
            if not match:
                raise ValueError(f"Query parameter {name} of dataset {key!r} must be one of "
                                 f"{', '.join(str(v) for v in allowed)}; got {text[:80]!r}.")
            options.append((name, match[0]))
        return cls(key, tuple(options))

    @classmethod
    def listed(cls, key: str, options: Mapping[str, Any] | tuple = ()) -> DatasetChoice:
        """A listed dataset with ``options`` (missing ones take their default), validated."""
        return cls.from_params({"dataset": key, **{k: str(v) for k, v in dict(options).items()}})

    def load(self):
        """The :class:`~core.data.ABData` this choice names: a listed dataset, a stored
        upload (:func:`core.data.load_upload`) or a large file
        (:func:`core.data.load_ab_file`).  The app's pages load through cached versions of
        the same three loaders (``ui.common``); background tasks call this."""
        from core.data.large import load_ab_file
        from core.data.uploads import load_upload

        if self.upload is not None:
            return load_upload(self.upload)
        if self.file is not None:
            path, treatment, outcome = self.file
            return load_ab_file(path, treatment=treatment, outcome=outcome)
        from core.data.datasets import load_dataset

        return load_dataset(self.key, **dict(self.options))

    def to_params(self) -> dict[str, str]:
        """The query parameters of this choice (every value as text)."""
        if self.upload is not None:
            return {"upload": self.upload}
        if self.file is not None:
            return dict(zip(("file", "file_treatment", "file_outcome"), self.file, strict=True))
        return {"dataset": str(self.key), **{name: str(value) for name, value in self.options}}


def designed_treated_share(key: str | None,
                           options: Mapping[str, Any] | tuple = ()) -> tuple[float | None, str]:
    """Treated share a listed dataset was designed with, and one sentence saying so.

    ============================  =====  ====================================================
    dataset                       share  design
    ============================  =====  ====================================================
    world                         0.5    each row treated with probability 1/2
    hillstrom, arm womens / mens  0.5    three arms of a third each; one e-mail vs no e-mail
    hillstrom, arm any            2/3    both e-mail arms (two thirds) vs no e-mail
    hillstrom_arms                2/3    all three arms: any e-mail vs no e-mail
    multiarm_world                3/4    control and three arms, a quarter each
    criteo_like                   0.85   Criteo's treatment share
    paper_simulation              0.5, 0.9 or 0.1 (|T| fixed by the scenario, §4.2)
    information, uploads          None   not documented
    ============================  =====  ====================================================

    Hillstrom (2008) assigned 64,000 customers at random, a third to each arm.
    """
    opts = dict(options)
    if key == "world":
        return 0.5, "The uplift world treats each row with probability 50 %."
    if key == "criteo_like":
        return 0.85, ("The Criteo-like stand-in treats each row with probability 85 %, as "
                      "Criteo's test did.")
    if key == "multiarm_world":
        return 0.75, ("The multi-arm world gives each of its four arms a quarter of the rows: "
                      "3/4 get one of the three treatments.")
    if key == "hillstrom_arms" or key == "hillstrom":
        if key == "hillstrom_arms" or opts.get("arm", "womens") == "any":
            return 2 / 3, ("Hillstrom's test sent each of the two e-mails to a third of the "
                           "customers: 2/3 treated by design.")
        return 0.5, ("Hillstrom's test gave each arm a third of the customers: one e-mail arm "
                     "vs no e-mail is 50/50 by design.")
    if key == "paper_simulation":
        share = PAPER_SCENARIOS[opts.get("scenario", "balanced")]
        return share, f"The paper's scenario fixes the treated share at {share:.0%}."
    return None, ""


def assumed_treated_share(t: Any) -> float:
    """The observed treated share snapped to a round share (the nearest 5 % or third, sixth,
    eighth: :func:`core.data.hygiene.rounded_share`) — the design assumed when none is
    known."""
    t = np.asarray(t)
    return float(rounded_share(float(t.mean()) if t.size else 0.5))


def srm_design(t: Any, key: str | None = None,
               options: Mapping[str, Any] | tuple = ()) -> tuple[float, str, bool]:
    """``(designed treated share, a sentence on where it comes from, assumed?)`` for the SRM
    check of data ``t`` from listed dataset ``key`` (``None`` for an upload)."""
    share, note = designed_treated_share(key, options)
    if share is not None:
        return share, note, False
    share = assumed_treated_share(t)
    return share, (f"The design of this test is not known: {share_text(share)} treated is "
                   "assumed (the observed share rounded to the nearest 5 %, third, sixth or "
                   "eighth). Enter the planned share if you know it."), True
