"""Finding, verifying and downloading the public data files UpRank uses.

Where files are looked for (:func:`data_dir_candidates`), in order:

1. ``$UPRANK_DATA_DIR`` when set;
2. the per-user cache directory: ``$UPRANK_CACHE_DIR`` when set, else
   ``platformdirs.user_cache_dir("uprank")`` — downloads go here;
3. ``<project root>/../shared/data`` when it exists (the team's shared copy).

``data/registry.json`` lists every file: its name, SHA-256, the original publisher's URL and
the citation.  A file found locally is verified against its SHA-256 (a mismatch is refused);
a missing one is downloaded from the publisher with :mod:`urllib.request`, verified, and
written atomically (temporary file, then rename).  The Information files are published as R
``.rda`` files: they are downloaded, verified, and converted to CSV with the optional ``rdata``
package (``pip install rdata``); the converted CSV (``*.from_rda.csv``) is trusted because its
source was verified.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

from core.data.abdata import DataError

__all__ = ["REGISTRY", "REGISTRY_PATH", "cache_dir", "data_dir_candidates", "fetch_data_file",
           "find_data_file", "sha256_file"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
REGISTRY_PATH = PROJECT_ROOT / "data" / "registry.json"
#: Dataset key -> entry (filename, sha256, download, citation, licence); see data/registry.json.
REGISTRY: dict[str, dict[str, Any]] = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
DOWNLOAD_TIMEOUT_S = 20.0


def cache_dir() -> Path:
    """``$UPRANK_CACHE_DIR`` or ``platformdirs.user_cache_dir("uprank")`` (not created here)."""
    env = os.environ.get("UPRANK_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("uprank"))


def data_dir_candidates() -> list[Path]:
    """Directories searched for data files, in order (see the module docstring)."""
    out = []
    env = os.environ.get("UPRANK_DATA_DIR")
    if env:
        out.append(Path(env).expanduser())
    out.append(cache_dir())
    shared = PROJECT_ROOT.parent / "shared" / "data"
    if shared.is_dir():
        out.append(shared)
    return out


def find_data_file(filename: str, *, dirs: list[Path] | None = None) -> Path | None:
    """First ``dir / filename`` that is a file, over ``dirs`` (default: the candidates)."""
    for d in data_dir_candidates() if dirs is None else dirs:
        p = Path(d) / filename
        if p.is_file():
            return p
    return None


def sha256_file(path: str | Path) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB blocks."""
    return _sha256_cached(str(path), *_stamp(Path(path)))


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=32)
def _sha256_cached(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _entry(key: str) -> dict[str, Any]:
    if key not in REGISTRY:
        raise ValueError(f"key must be one of {', '.join(map(repr, REGISTRY))}; got {key!r}.")
    return REGISTRY[key]


def _how_to_obtain(entry: dict[str, Any], dirs: list[Path]) -> str:
    where = ", ".join(str(d) for d in dirs) or "(no directory)"
    dl = entry.get("download") or {}
    source = (f"Download it from {dl['url']}" if dl.get("url")
              else entry.get("how_to_obtain", "Obtain it from its publisher")).rstrip(" .")
    return (f"UpRank needs the file {entry['filename']!r} ({entry.get('title', '')}). "
            f"It looked in: {where}. {source}. Put {entry['filename']!r} in a folder and name "
            "that folder in the UPRANK_DATA_DIR environment variable.")


def fetch_data_file(key: str, *, allow_download: bool = True,
                    data_dir: str | Path | None = None) -> Path:
    """Path of the data file ``key`` of the registry, downloading it if needed and allowed.

    Parameters
    ----------
    key : str
        A key of :data:`REGISTRY` (``"hillstrom"``, ``"information_train"``...).
    allow_download : bool, default True
        Download from the publisher's URL into :func:`cache_dir` when not found locally.
    data_dir : path, optional
        Look only in this directory (and then in the cache, where downloads go) instead of
        the candidate list.

    Raises
    ------
    DataError
        The file is not found and cannot be downloaded (offline, not allowed, no URL), its
        checksum does not match, or the ``.rda`` conversion needs ``rdata``.
    """
    entry = _entry(key)
    dirs = data_dir_candidates() if data_dir is None else [Path(data_dir), cache_dir()]
    dl = entry.get("download") or {}
    for d in dirs:
        path = Path(d) / entry["filename"]
        if path.is_file():
            got = sha256_file(path)
            if got != entry["sha256"]:
                raise DataError(
                    f"{str(path)!r} does not match the published checksum (SHA-256 {got[:12]}..., "
                    f"expected {entry['sha256'][:12]}...). The file is damaged or a different "
                    "version; delete it and get a fresh copy."
                )
            return path
        if dl.get("save_as") and dl["save_as"] != entry["filename"]:
            converted = Path(d) / dl["save_as"]
            if converted.is_file():
                return converted
    if not allow_download or not dl.get("url"):
        why = "" if dl.get("url") else " There is no automatic download for it."
        raise DataError(_how_to_obtain(entry, dirs) + why)
    return _download(entry, dirs)


def _download(entry: dict[str, Any], dirs: list[Path]) -> Path:
    dl = entry["download"]
    rdata = _import_rdata() if dl.get("format") == "rda" else None
    if dl.get("format") == "rda" and rdata is None:
        raise DataError(
            f"{entry['filename']!r} is published as an R data file; converting it needs the "
            "optional package rdata (pip install rdata). Or put the CSV file "
            f"{entry['filename']!r} in the folder named by UPRANK_DATA_DIR. "
            + _how_to_obtain(entry, dirs)
        )
    target_dir = cache_dir()
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"Cannot create the cache folder {str(target_dir)!r}: {exc}.") from None
    fd, tmp_name = tempfile.mkstemp(dir=target_dir, prefix=".download-", suffix=".part")
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, \
                urllib.request.urlopen(dl["url"], timeout=DOWNLOAD_TIMEOUT_S) as resp:
            for block in iter(lambda: resp.read(1 << 16), b""):
                h.update(block)
                out.write(block)
        if h.hexdigest() != dl["sha256"]:
            raise DataError(
                f"The download from {dl['url']} does not match the published checksum "
                f"(SHA-256 {h.hexdigest()[:12]}..., expected {dl['sha256'][:12]}...); it was "
                "deleted. " + _how_to_obtain(entry, dirs)
            )
        dest = target_dir / dl["save_as"]
        if rdata is not None:
            _rda_to_csv(rdata, tmp, dl["rda_object"], dest)
        else:
            os.replace(tmp, dest)
        return dest
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        reason = getattr(exc, "reason", None) or exc
        raise DataError(f"Download failed ({reason}). " + _how_to_obtain(entry, dirs)) from None
    finally:
        tmp.unlink(missing_ok=True)


def _import_rdata() -> Any:
    """The optional ``rdata`` module, or None when it is not installed."""
    try:
        import rdata
    except ImportError:
        return None
    return rdata


def _rda_to_csv(rdata: Any, rda_path: Path, obj: str, dest: Path) -> None:
    """Convert object ``obj`` of an R data file to CSV at ``dest`` (atomically).

    Columns whose values are all integral are written as integers, as in ../shared/data.
    """
    try:
        frames = rdata.read_rda(str(rda_path))
        frame = frames[obj]
    except Exception as exc:  # noqa: BLE001 (rdata raises many types on a damaged file)
        raise DataError(f"Could not read object {obj!r} from the R data file: {exc}.") from None
    frame = frame.reset_index(drop=True)
    for col in frame.columns:
        vals = frame[col]
        if vals.dtype.kind == "f" and vals.notna().all() and np.all(np.mod(vals, 1) == 0):
            frame[col] = vals.astype("int64")
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".convert-", suffix=".part")
    os.close(fd)
    try:
        frame.to_csv(tmp_name, index=False, lineterminator="\n")
        os.replace(tmp_name, dest)
    finally:
        Path(tmp_name).unlink(missing_ok=True)
