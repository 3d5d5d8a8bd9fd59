"""Uploaded A/B CSVs kept on disk, so a reload, a new tab or a restart can reopen them.

An upload is stored under the fingerprint of the data it gives
(:meth:`ABData.fingerprint <core.data.abdata.ABData.fingerprint>`), in
``<cache>/uploads/<fingerprint>/`` (``<cache>`` is :func:`core.data.datafiles.cache_dir`:
``$UPRANK_CACHE_DIR`` or the user cache directory):

``content.bin``
    the uploaded bytes, exactly as received (CSV, TSV or gzip);
``upload.json``
    the original file name, the column mapping (the keywords of
    :func:`core.data.read_ab_csv`: ``treatment``, ``outcome`` and, for a multi-arm column,
    ``treatment_value``/``control_value``), the SHA-256 and size of the bytes, and the time
    it was saved.

Both files are written atomically (a temporary file, then a rename), the JSON last: a folder
without a readable ``upload.json`` holds no upload.  :func:`load_upload` re-reads the bytes
with the mapping and checks that the data has the fingerprint it is stored under, so a
damaged or edited folder is refused with a :class:`~core.data.abdata.DataError`, never read
as other data.

>>> import tempfile
>>> from core.data import make_uplift_world, read_ab_csv, to_csv_bytes
>>> content = to_csv_bytes(make_uplift_world(n=300, random_state=0))
>>> mapping = {"treatment": "treatment", "outcome": "outcome"}
>>> data = read_ab_csv(content, name="world.csv", **mapping)
>>> root = tempfile.mkdtemp()
>>> stored = save_upload(data, content, name="world.csv", mapping=mapping, root=root)
>>> stored.fingerprint == data.fingerprint(), stored.name
(True, 'world.csv')
>>> load_upload(stored.fingerprint, root=root).fingerprint() == data.fingerprint()
True
>>> [u.name for u in list_uploads(root=root)]
['world.csv']
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.data.abdata import ABData, DataError
from core.data.datafiles import cache_dir

__all__ = ["MAPPING_KEYS", "StoredUpload", "list_uploads", "load_upload", "save_upload",
           "upload_info", "uploads_dir", "write_atomic"]

UPLOAD_FORMAT_VERSION = 1
#: Keywords of :func:`core.data.read_ab_csv` an upload's column mapping may hold.
MAPPING_KEYS = ("treatment", "outcome", "treatment_value", "control_value", "all_arms",
                "outcome_kind", "outcome_value")
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")
_CONTENT, _META = "content.bin", "upload.json"


@dataclass(frozen=True)
class StoredUpload:
    """What :func:`save_upload` wrote: ``fingerprint`` (the folder's name), the original file
    ``name``, the column ``mapping``, ``size`` (bytes), ``sha256`` of the bytes, ``saved``
    (a ``time.time()`` stamp) and the ``folder``."""

    fingerprint: str
    name: str
    mapping: dict[str, Any]
    size: int
    sha256: str
    saved: float
    folder: Path


def uploads_dir(root: str | Path | None = None) -> Path:
    """``root`` or ``<cache_dir()>/uploads`` (not created here)."""
    return Path(root) if root is not None else cache_dir() / "uploads"


def _check_fingerprint(fingerprint: Any) -> str:
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
        raise DataError("fingerprint must be 64 lower-case hex digits (ABData.fingerprint()); "
                        f"got {fingerprint!r}.")
    return fingerprint


def _check_mapping(mapping: Any) -> dict[str, Any]:
    if not isinstance(mapping, Mapping):
        raise DataError(f"mapping must be a dict of column names; got {type(mapping).__name__}.")
    unknown = sorted(set(mapping) - set(MAPPING_KEYS))
    missing = [k for k in ("treatment", "outcome") if not isinstance(mapping.get(k), str)]
    if unknown or missing:
        raise DataError(f"mapping must have the keys {MAPPING_KEYS[:2]} (column names) and "
                        f"may have {MAPPING_KEYS[2:]}; got {dict(mapping)!r}.")
    out = {}
    for key, value in mapping.items():
        value = value.item() if hasattr(value, "item") else value  # numpy scalars
        if not (value is None or isinstance(value, (str, int, float, bool))
                or (isinstance(value, list) and all(isinstance(v, (str, int, float))
                                                    for v in value))):
            raise DataError(f"mapping[{key!r}] must be a column name or an arm code; got "
                            f"{value!r}.")
        out[key] = value
    return out


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` through a temporary file in the same folder and one
    ``os.replace``: a reader sees the old file or the new one, never half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def save_upload(data: ABData, content: bytes, *, name: str, mapping: Mapping[str, Any],
                root: str | Path | None = None) -> StoredUpload:
    """Store the bytes of an uploaded CSV and how it was read, under ``data.fingerprint()``.

    Parameters
    ----------
    data : ABData
        What ``read_ab_csv(content, name=name, **mapping)`` gave: its fingerprint names the
        folder.  Saving the same upload again replaces the folder's files (same content).
    content : bytes
        The uploaded file, as received.
    name : str
        The original file name (the data's name when reopened).
    mapping : mapping
        The keywords of :func:`core.data.read_ab_csv` (see :data:`MAPPING_KEYS`).
    root : path, optional
        The uploads folder; default :func:`uploads_dir`.

    Returns
    -------
    StoredUpload

    Raises
    ------
    DataError
        Bad arguments, or the folder cannot be written (the message names it).
    """
    if not isinstance(data, ABData):
        raise DataError(f"data must be an ABData; got {type(data).__name__}.")
    if not isinstance(content, (bytes, bytearray)):
        raise DataError(f"content must be bytes; got {type(content).__name__}.")
    if not isinstance(name, str) or not name:
        raise DataError(f"name must be a non-empty file name; got {name!r}.")
    mapping = _check_mapping(mapping)
    fingerprint = data.fingerprint()
    folder = uploads_dir(root) / fingerprint
    meta = {"version": UPLOAD_FORMAT_VERSION, "fingerprint": fingerprint, "name": name,
            "mapping": mapping, "size": len(content),
            "sha256": hashlib.sha256(content).hexdigest(), "saved": time.time()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / _CONTENT, bytes(content))
        write_atomic(folder / _META, json.dumps(meta, indent=1).encode("utf-8"))
    except OSError as exc:
        raise DataError(f"Cannot store the upload in {str(folder)!r}: {exc}.") from None
    return _stored(meta, folder)


def _stored(meta: dict, folder: Path) -> StoredUpload:
    return StoredUpload(meta["fingerprint"], meta["name"], dict(meta["mapping"]),
                        int(meta["size"]), meta["sha256"], float(meta["saved"]), folder)


def upload_info(fingerprint: str, *, root: str | Path | None = None) -> StoredUpload:
    """The stored description of upload ``fingerprint`` (its bytes are not read).

    Raises
    ------
    DataError
        Not a fingerprint, no such upload, or an ``upload.json`` that is unreadable or does not
        describe this folder.
    """
    fingerprint = _check_fingerprint(fingerprint)
    folder = uploads_dir(root) / fingerprint
    path = folder / _META
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"No stored upload with fingerprint {fingerprint[:12]}… (looked in "
                        f"{str(folder)!r}); upload the CSV again.") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"The stored upload {fingerprint[:12]}… is damaged ({path.name} "
                        f"cannot be read: {exc}); upload the CSV again.") from None
    try:
        if meta["fingerprint"] != fingerprint or meta["version"] != UPLOAD_FORMAT_VERSION:
            raise ValueError("it describes another upload or format")
        _check_mapping(meta["mapping"])
        return _stored(meta, folder)
    except (KeyError, TypeError, ValueError) as exc:  # DataError is a ValueError
        raise DataError(f"The stored upload {fingerprint[:12]}… is damaged ({path.name}: "
                        f"{exc}); upload the CSV again.") from None


def load_upload(fingerprint: str, *, root: str | Path | None = None) -> ABData:
    """Reopen a stored upload: its bytes read with its mapping, checked against the fingerprint.

    Raises
    ------
    DataError
        No such upload, a missing or damaged file (size, SHA-256), or bytes that no longer
        give data with this fingerprint.
    """
    from core.data.datasets import read_ab_csv

    info = upload_info(fingerprint, root=root)
    path = info.folder / _CONTENT
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise DataError(f"The stored upload {fingerprint[:12]}… ({info.name}) is damaged: its "
                        f"file {path.name} cannot be read ({exc}); upload the CSV again.") from None
    if len(content) != info.size or hashlib.sha256(content).hexdigest() != info.sha256:
        raise DataError(f"The stored upload {fingerprint[:12]}… ({info.name}) is damaged: "
                        f"{path.name} has {len(content):,} bytes and another checksum than the "
                        f"{info.size:,} bytes stored; upload the CSV again.")
    data = read_ab_csv(content, name=info.name, **info.mapping)
    if data.fingerprint() != fingerprint:
        raise DataError(f"The stored upload {info.name!r} now reads as other data (fingerprint "
                        f"{data.fingerprint()[:12]}… instead of {fingerprint[:12]}…), e.g. after "
                        "an update of the CSV reader; upload the CSV again.")
    return data


def list_uploads(*, root: str | Path | None = None) -> list[StoredUpload]:
    """Stored uploads, newest first; folders without a valid ``upload.json`` are left out."""
    base = uploads_dir(root)
    out = []
    try:
        folders = [p for p in base.iterdir() if p.is_dir() and _FINGERPRINT.fullmatch(p.name)]
    except OSError:
        return []
    for folder in folders:
        try:
            out.append(upload_info(folder.name, root=base))
        except DataError:
            continue
    return sorted(out, key=lambda u: u.saved, reverse=True)
