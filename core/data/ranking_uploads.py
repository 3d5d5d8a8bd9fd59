"""Uploaded ranking files (LETOR / SVMlight, CSV, Parquet) kept on disk, so a reload, a new
tab or a restart can reopen them — the ranking twin of :mod:`core.data.uploads`.

An upload lives in ``<cache>/ranking_uploads/<fingerprint>/`` (``<cache>`` is
:func:`core.data.datafiles.cache_dir`; the fingerprint is :meth:`LTRData.fingerprint
<core.data.letor.LTRData.fingerprint>` of the data it gives): ``content.bin`` holds the bytes
exactly as received, ``upload.json`` the file name, how it was read (``format`` "letor" or
"table" and the column names), the SHA-256 of the bytes and the time.  Both are written
atomically, the JSON last.  :func:`load_ranking_upload` re-reads the bytes and refuses a
folder whose data no longer has its fingerprint.

The Ranking lab splits an upload by whole queries into training, validation and test
(60 / 20 / 20), so :func:`read_ranking_upload` (and hence saving and reopening) refuses a
file with fewer than :data:`MIN_QUERIES` queries: such a file is never stored.

>>> import tempfile
>>> root = tempfile.mkdtemp()
>>> content = b"".join(b"%d qid:%d 1:0.%d\\n" % (g, q, g) for q in (1, 2, 3) for g in (2, 0))
>>> fp = save_ranking_upload(content, name="mine.txt", options={"format": "letor"}, root=root)
>>> load_ranking_upload(fp, root=root).n_queries
3
>>> [u["name"] for u in list_ranking_uploads(root=root)]
['mine.txt']
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.data.abdata import DataError
from core.data.datafiles import cache_dir
from core.data.letor import LTRData, read_letor, read_ltr_table
from core.data.uploads import write_atomic

__all__ = ["MIN_QUERIES", "check_ranking_upload", "guess_ranking_format",
           "list_ranking_uploads", "load_ranking_upload", "read_ranking_upload",
           "save_ranking_upload"]

#: Fewest queries the Ranking lab's 60 / 20 / 20 split by whole queries accepts (one query
#: each for training, validation and test; :func:`core.data.letor.split_queries`).
MIN_QUERIES = 3

_CONTENT, _META = "content.bin", "upload.json"
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_OPTION_KEYS = ("format", "query", "relevance", "features", "doc_id")


def _root(root: str | Path | None) -> Path:
    return Path(root) if root is not None else cache_dir() / "ranking_uploads"


def _check_options(options: Any) -> dict:
    if not isinstance(options, Mapping) or options.get("format") not in ("letor", "table"):
        raise ValueError("options must be a dict with format 'letor' or 'table'; got "
                         f"{options!r}.")
    unknown = sorted(set(options) - set(_OPTION_KEYS))
    if unknown:
        raise ValueError(f"options may only hold {', '.join(_OPTION_KEYS)}; got {unknown}.")
    return dict(options)


_TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq", ".csv.gz", ".tsv.gz")


def guess_ranking_format(name: str) -> str:
    """``"table"`` for a file name ending in .csv, .tsv or .parquet (also .csv.gz), else
    ``"letor"`` (.txt, .gz, .svm, .libsvm and anything unknown: LETOR's own extensions).

    >>> guess_ranking_format("train.CSV"), guess_ranking_format("Fold1/train.txt.gz")
    ('table', 'letor')
    """
    return "table" if str(name).lower().endswith(_TABLE_SUFFIXES) else "letor"


def check_ranking_upload(data: LTRData) -> LTRData:
    """``data`` unchanged when the Ranking lab can use it, else a :class:`DataError`.

    The lab splits an upload by whole queries, 60 / 20 / 20, into training, validation and
    test: it needs at least :data:`MIN_QUERIES` queries.

    >>> one = LTRData(X=[[0.1], [0.2]], relevance=[1, 0], qid=[7, 7])
    >>> check_ranking_upload(one)
    Traceback (most recent call last):
    ...
    core.data.abdata.DataError: The Ranking lab needs at least 3 queries ... this file has 1 query.
    """
    n_q = data.n_queries
    if n_q < MIN_QUERIES:
        raise DataError(f"The Ranking lab needs at least {MIN_QUERIES} queries for its "
                        "60/20/20 split (one query each for training, validation and test); "
                        f"this file has {n_q} quer{'y' if n_q == 1 else 'ies'}.")
    return data


def read_ranking_upload(content: bytes, *, name: str, options: Mapping) -> LTRData:
    """Read uploaded bytes: ``options["format"]`` "letor" (:func:`read_letor`) or "table"
    (:func:`read_ltr_table` with the remaining options as its keywords).

    Raises
    ------
    DataError
        The file cannot be read, or has fewer than :data:`MIN_QUERIES` queries
        (:func:`check_ranking_upload`).
    """
    opts = _check_options(options)
    if opts.pop("format") == "letor":
        return check_ranking_upload(read_letor(content, name=name))
    return check_ranking_upload(read_ltr_table(content, name=name, **opts))


def save_ranking_upload(content: bytes, *, name: str, options: Mapping,
                        root: str | Path | None = None) -> str:
    """Read ``content`` (so only a valid file is kept), store it, return its fingerprint."""
    data = read_ranking_upload(content, name=name, options=options)
    fp = data.fingerprint()
    folder = _root(root) / fp
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / _CONTENT, bytes(content))
        meta = {"name": str(name), "options": _check_options(options),
                "sha256": hashlib.sha256(content).hexdigest(), "size": len(content),
                "saved": time.strftime("%Y-%m-%d %H:%M:%S")}
        write_atomic(folder / _META, json.dumps(meta).encode("utf-8"))
    except OSError as exc:
        raise DataError(f"The upload could not be stored in {str(folder)!r}: {exc}.") from None
    return fp


def list_ranking_uploads(*, root: str | Path | None = None) -> list[dict]:
    """Stored uploads, newest first: dicts with ``fingerprint``, ``name``, ``saved``."""
    base = _root(root)
    out = []
    for meta_path in base.glob(f"*/{_META}") if base.is_dir() else []:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _FINGERPRINT.fullmatch(meta_path.parent.name):
            out.append({"fingerprint": meta_path.parent.name, "name": meta.get("name", "?"),
                        "saved": meta.get("saved", "")})
    return sorted(out, key=lambda u: u["saved"], reverse=True)


def load_ranking_upload(fingerprint: str, *, root: str | Path | None = None) -> LTRData:
    """Re-read a stored upload; :class:`DataError` when it is missing or was altered."""
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
        raise DataError(f"{fingerprint!r} is not the fingerprint of a stored ranking upload.")
    folder = _root(root) / fingerprint
    try:
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        content = (folder / _CONTENT).read_bytes()
    except (OSError, ValueError):
        raise DataError("That ranking upload is no longer stored; upload the file "
                        "again.") from None
    if hashlib.sha256(content).hexdigest() != meta.get("sha256"):
        raise DataError("The stored copy of that ranking upload is damaged; upload the file "
                        "again.")
    data = read_ranking_upload(content, name=meta["name"], options=meta["options"])
    if data.fingerprint() != fingerprint:
        raise DataError("The stored ranking upload no longer gives the same data; upload the "
                        "file again.")
    return data
