"""Learning-to-rank (LETOR) data: the :class:`LTRData` container, readers, MQ2008 and a
synthetic world.

* :func:`read_letor` reads the SVMlight / LETOR text format
  (``label qid:Q 1:v 2:v … # comment``), plain or gzip-compressed; the numbers are parsed by
  scikit-learn's :func:`~sklearn.datasets.load_svmlight_file` and every malformed file is
  refused with a :class:`~core.data.abdata.DataError` naming the first offending line;
* :func:`read_ltr_table` reads the same data as a table (CSV through
  :func:`core.data.csvio.read_frame`, or Parquet) with a query, a relevance and feature columns;
* :func:`load_mq2008` gives LETOR 4.0 MQ2008 (Qin & Liu, 2013) train / vali / test of a fold,
  checksum-verified; :func:`mq2008_folds_available` says which folds are on disk;
* :func:`make_ltr_world` draws a seeded synthetic ranking world with a known expected grade,
  including queries without any relevant document; :func:`split_queries` splits any dataset
  into train / vali / test by whole queries.

>>> from core.data import read_letor
>>> d = read_letor(b"2 qid:10 1:0.5 3:1 # docid = A\\n0 qid:10 2:1 # docid = B\\n")
>>> d.n_rows, d.n_queries, d.n_features, d.ids.tolist()
(2, 1, 3, ['A', 'B'])
>>> d.X.tolist()
[[0.5, 0.0, 1.0], [0.0, 1.0, 0.0]]

References
----------
Qin, T., Liu, T.-Y. (2013). Introducing LETOR 4.0 Datasets. arXiv:1306.2597.
Joachims, T. (1999). Making large-scale SVM learning practical (the SVMlight format).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import os
import re
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from core._validation import (
    as_generator,
    check_fraction,
    check_int_at_least,
    check_positive_int,
    is_integer,
)
from core.data import csvio
from core.data.abdata import DataError
from core.data.csvio import read_frame, source_name
from core.data.datafiles import DOWNLOAD_TIMEOUT_S, REGISTRY, cache_dir, data_dir_candidates

__all__ = ["MAX_LAMBDARANK_GRADE", "MQ2008_N_FEATURES", "LTRData", "grade_warnings",
           "load_mq2008", "make_ltr_world", "mq2008_folds_available", "read_letor",
           "read_ltr_table", "split_queries"]

#: Beyond this many cells (rows × features) ``X`` stays a sparse CSR matrix.
DENSE_MAX_CELLS = 50_000_000
#: Largest feature index :func:`read_letor` accepts (LETOR sets have tens to hundreds).
MAX_FEATURES = 100_000
#: Number of features of LETOR 4.0 MQ2008.
MQ2008_N_FEATURES = 46
#: The publisher's copy of MQ2008's five parts S1..S5 (meta-toolkit/meta, LETOR 4.0 files).
MQ2008_COMMIT = "eab9748c3c40da28619f043c99d030e1ca66401d"
MQ2008_URL = ("https://raw.githubusercontent.com/meta-toolkit/meta/" + MQ2008_COMMIT
              + "/data/MQ2008/S{part}.txt")
_SPLITS = ("train", "vali", "test")
_MB = 2**20
#: Largest grade LightGBM's built-in ``lambdarank`` objective accepts (its default label gain
#: table has 31 entries, 2^g − 1 for g = 0 … 30).
MAX_LAMBDARANK_GRADE = 30


# ======================================================================= the container
@dataclass(eq=False)
class LTRData:
    """A learning-to-rank dataset: documents with features, a relevance grade and a query id.

    Rows of one query need not be contiguous (a file may interleave queries); consumers
    group by :attr:`qid`.  Readers validate the content; the constructor only checks shapes.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d), or scipy.sparse CSR matrix
        Features; a CSR matrix when a dense array would exceed :data:`DENSE_MAX_CELLS` cells.
    relevance : ndarray of float64, shape (n,)
        Relevance grades (0 = not relevant; LETOR uses 0, 1, 2 …).
    qid : ndarray, shape (n,)
        Query id of each row, as read: ``int64`` from LETOR files; from tables integers when
        every id is integral, else strings.
    ids : ndarray of str, shape (n,), or None
        Document ids (LETOR's ``#docid = …`` comment, a table's id column), or None.
    feature_names : list of str, optional
        Default ``f1 … fd``.
    name : str
        Short human label.
    truth : ndarray of float64, shape (n,), or None
        True expected relevance of each row (synthetic data only).
    """

    X: Any
    relevance: np.ndarray
    qid: np.ndarray
    ids: np.ndarray | None = None
    feature_names: list[str] | None = None
    name: str = "LTR data"
    truth: np.ndarray | None = None

    def __post_init__(self) -> None:
        if sp.issparse(self.X):
            self.X = sp.csr_matrix(self.X, dtype=np.float64)
        else:
            self.X = np.asarray(self.X, dtype=np.float64)
        if self.X.ndim != 2:
            raise ValueError(f"X must be 2-d (rows × features); got shape {self.X.shape}.")
        n, d = self.X.shape
        self.relevance = np.asarray(self.relevance, dtype=np.float64).reshape(-1)
        qid = np.asarray(self.qid)
        if qid.dtype == object:
            qid = qid.astype(str)
        self.qid = qid.reshape(-1)
        if self.ids is not None:
            self.ids = np.asarray(self.ids).astype(str).reshape(-1)
        if self.truth is not None:
            self.truth = np.asarray(self.truth, dtype=np.float64).reshape(-1)
        for label, arr in (("relevance", self.relevance), ("qid", self.qid),
                           ("ids", self.ids), ("truth", self.truth)):
            if arr is not None and arr.shape[0] != n:
                raise ValueError(f"{label} must have one value per row of X ({n}); "
                                 f"got {arr.shape[0]}.")
        if self.feature_names is None:
            self.feature_names = [f"f{j + 1}" for j in range(d)]
        self.feature_names = [str(f) for f in self.feature_names]
        if len(self.feature_names) != d:
            raise ValueError(f"feature_names must name the {d} columns of X; "
                             f"got {len(self.feature_names)} names.")

    # ------------------------------------------------------------------ sizes
    @property
    def n_rows(self) -> int:
        """Number of documents (rows)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def n_queries(self) -> int:
        """Number of distinct query ids."""
        return int(pd.unique(self.qid).size)

    # ------------------------------------------------------------------ summaries
    def query_table(self) -> pd.DataFrame:
        """One row per query, in order of first appearance.

        Columns ``qid``, ``n_docs``, ``n_relevant`` (documents with grade > 0) and
        ``max_grade``.
        """
        frame = pd.DataFrame({"qid": self.qid, "relevant": self.relevance > 0,
                              "rel": self.relevance})
        grouped = frame.groupby("qid", sort=False)
        out = pd.DataFrame({
            "n_docs": grouped.size(),
            "n_relevant": grouped["relevant"].sum(),
            "max_grade": grouped["rel"].max(),
        }).reset_index()
        return out.astype({"n_docs": np.int64, "n_relevant": np.int64})

    def queries_without_relevant(self) -> int:
        """Number of queries with no document of grade > 0 (AUC, AP… are undefined there)."""
        grades = pd.Series(self.relevance).groupby(self.qid, sort=False).max()
        return int((grades <= 0).sum())

    def grade_counts(self) -> pd.Series:
        """Documents per relevance grade, grades ascending (integers when all are integral)."""
        counts = pd.Series(self.relevance).value_counts().sort_index()
        if np.all(np.mod(counts.index.to_numpy(), 1) == 0):
            counts.index = counts.index.astype(np.int64)
        counts.index.name = "grade"
        return counts.rename("documents")

    # ------------------------------------------------------------------ subsets
    def subset_queries(self, qids: Iterable[Any]) -> LTRData:
        """The rows of the queries ``qids``, in file order, as a new :class:`LTRData`.

        Raises
        ------
        ValueError
            ``qids`` is empty or names a query the data does not have.
        """
        wanted = np.asarray(list(qids))
        if wanted.size == 0:
            raise ValueError("qids must name at least one query; got none.")
        present = pd.unique(self.qid)
        missing = wanted[~np.isin(wanted, present)]
        if missing.size:
            shown = ", ".join(map(repr, missing[:5].tolist()))
            raise ValueError(f"qids must be query ids of the data; got unknown id(s) {shown}"
                             + (f" and {missing.size - 5} more" if missing.size > 5 else "")
                             + ".")
        return self._rows(np.flatnonzero(np.isin(self.qid, wanted)), self.name)

    def _rows(self, pos: np.ndarray, name: str) -> LTRData:
        return LTRData(X=self.X[pos], relevance=self.relevance[pos], qid=self.qid[pos],
                       ids=None if self.ids is None else self.ids[pos],
                       feature_names=list(self.feature_names), name=name,
                       truth=None if self.truth is None else self.truth[pos])

    # ------------------------------------------------------------------ identity, export
    def fingerprint(self) -> str:
        """First 16 hex digits of a SHA-256 over the content (X, relevance, qid, ids, feature
        names, truth); stable across processes and machines.  ``name`` does not enter it."""
        h = hashlib.sha256()
        h.update(json.dumps([self.feature_names, list(self.X.shape)]).encode())
        if sp.issparse(self.X):
            X = self.X.copy()
            X.sum_duplicates()
            X.sort_indices()
            h.update(b"|csr|" + X.indptr.astype("<i8").tobytes()
                     + X.indices.astype("<i8").tobytes() + X.data.astype("<f8").tobytes())
        else:
            h.update(b"|dense|" + np.ascontiguousarray(self.X, dtype="<f8").tobytes())
        h.update(b"|rel|" + self.relevance.astype("<f8").tobytes())
        h.update(b"|qid|" + _array_bytes(self.qid))
        if self.ids is not None:
            h.update(b"|ids|" + _array_bytes(self.ids))
        if self.truth is not None:
            h.update(b"|truth|" + self.truth.astype("<f8").tobytes())
        return h.hexdigest()[:16]

    def to_frame(self) -> pd.DataFrame:
        """A table for download: ``qid``, ``doc_id`` (when :attr:`ids` is set), ``relevance``,
        then one column per feature.  :func:`read_ltr_table` reads it back (pass
        ``doc_id="doc_id"``).  A feature whose name clashes with those columns gets a
        ``_feature`` suffix."""
        head: dict[str, Any] = {"qid": self.qid}
        if self.ids is not None:
            head["doc_id"] = self.ids
        head["relevance"] = self.relevance
        names = [f"{f}_feature" if f in head else f for f in self.feature_names]
        if sp.issparse(self.X):
            feats = pd.DataFrame.sparse.from_spmatrix(self.X, columns=names)
        else:
            feats = pd.DataFrame(self.X, columns=names)
        return pd.concat([pd.DataFrame(head), feats], axis=1)

    def __repr__(self) -> str:
        return (f"LTRData(name={self.name!r}, rows={self.n_rows}, queries={self.n_queries}, "
                f"features={self.n_features})")


def _array_bytes(arr: np.ndarray) -> bytes:
    if arr.dtype.kind in "biu":
        return b"i" + arr.astype("<i8").tobytes()
    if arr.dtype.kind == "f":
        return b"f" + arr.astype("<f8").tobytes()
    return b"s" + "\x1f".join(map(str, arr.tolist())).encode("utf-8")


# ======================================================================= reading bytes
def _source_bytes(source: Any, max_bytes: int) -> bytes:
    """Raw bytes of ``source``, refusing files over ``max_bytes`` before reading them."""
    size = None
    if isinstance(source, (str, Path)) and Path(source).is_file():
        size = Path(source).stat().st_size
    elif isinstance(getattr(source, "size", None), int):  # Streamlit's UploadedFile
        size = source.size
    if size is not None and size > max_bytes:
        raise DataError(_too_large(size, max_bytes))
    content = csvio._read_source(source)
    raw = content.encode("utf-8") if isinstance(content, str) else content
    if len(raw) > max_bytes:
        raise DataError(_too_large(len(raw), max_bytes))
    return raw


def _too_large(size: int, max_bytes: int, *, unpacked: bool = False) -> str:
    what = "Decompressed, the file is more than" if unpacked else "The file is"
    amount = f"{max_bytes / _MB:.1f} MB" if unpacked else f"{size / _MB:.1f} MB"
    return (f"{what} {amount}; the limit is {max_bytes / _MB:.1f} MB (max_bytes). "
            "Split the file or raise max_bytes.")


def _text_bytes(raw: bytes, max_bytes: int) -> bytes:
    """Decompress gzip (by its magic bytes), refuse binary content, normalise BOMs."""
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
                raw = fh.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error):
            raise DataError("The file looks gzip-compressed but is damaged or truncated; "
                            "decompress it and upload the text file.") from None
        if len(raw) > max_bytes:
            raise DataError(_too_large(len(raw), max_bytes, unpacked=True))
    for magic, what in csvio._MAGIC:  # the signatures the CSV reader refuses
        if raw.startswith(magic):
            what = what.split(" (")[0]
            hint = " (read tables with read_ltr_table)" if magic == b"PAR1" else ""
            raise DataError(f"This is not a LETOR text file: it looks like {what}{hint}.")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            raise DataError("The file starts with a UTF-16 mark but cannot be decoded as "
                            "UTF-16; save it as UTF-8 text.") from None
    try:  # csvio's text check (control bytes, NUL) on the head
        csvio._decode(raw[:8192], [])
    except DataError:
        raise DataError("This is not a LETOR text file: it contains binary data (control "
                        "bytes), not text.") from None
    if re.match(rb"\s*<(!doctype html|html|\?xml)", raw[:200], re.IGNORECASE):
        raise DataError("This is not a LETOR text file: it looks like an HTML/XML page "
                        "(a download that returned a web page?).")
    return raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw


# ======================================================================= diagnosing lines
def _finite(text: str) -> float | None:
    """``float(text)``, or None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def _line_problem(body: bytes, n_features: int | None) -> str | None:
    """Why the data part (comment removed) of one line is not valid LETOR, or None."""
    tokens = [t.decode("utf-8", "replace") for t in body.split()]
    label = tokens[0]
    if ":" in label:
        return (f"the line starts with {label!r} where the relevance label should be "
                "(each line starts with a grade such as 0, 1 or 2)")
    value = _finite(label)
    if value is None:
        return f"the relevance label {label!r} is not a number"
    if not math.isfinite(value):
        return f"the relevance label {label!r} is not a finite number"
    if value < 0:
        return f"the relevance grade {label} is negative; LETOR grades are 0 or more"
    later = [t for t in tokens[2:] if t.startswith("qid:")]
    if later and not tokens[1].startswith("qid:"):
        return f"{later[0]!r} must come right after the relevance label"
    if len(tokens) < 2 or not tokens[1].startswith("qid:"):
        return ("'qid:' is missing; every line needs 'qid:<query id>' right after the "
                "relevance label")
    try:
        q = int(tokens[1][4:])
    except ValueError:
        return f"the query id in {tokens[1]!r} is not an integer"
    if not -(2**63) <= q < 2**63:
        return f"the query id in {tokens[1]!r} is too large (at most 19 digits)"
    prev = 0
    for tok in tokens[2:]:
        if tok.startswith("qid:"):
            return f"{tok!r} must come right after the relevance label"
        if ":" not in tok:
            return f"{tok!r} is not a feature written as index:value"
        idx_text, val_text = tok.split(":", 1)
        try:
            idx = int(idx_text)
        except ValueError:
            return f"the feature index {idx_text!r} in {tok!r} is not an integer"
        if idx <= 0:
            return f"feature index {idx} in {tok!r}: feature indices start at 1"
        if n_features is None and idx > MAX_FEATURES:
            return (f"feature index {idx} is beyond UpRank's limit of {MAX_FEATURES:,} "
                    "features")
        if idx == prev:
            return f"feature {idx} appears twice"
        if idx < prev:
            return (f"feature {idx} comes after feature {prev}; feature indices must "
                    "increase along a line")
        if n_features is not None and idx > n_features:
            return f"feature index {idx} exceeds n_features={n_features}"
        value = _finite(val_text)
        if value is None:
            return f"the value {val_text!r} of feature {idx} is not a number"
        if not math.isfinite(value):
            return f"feature {idx} has the value {val_text!r}, which is not a finite number"
        prev = idx
    return None


def _located(line_no: int, reason: str, line: bytes) -> DataError:
    shown = line.decode("utf-8", "replace").strip()
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return DataError(f"Cannot read the LETOR file: line {line_no}: {reason} "
                     f"(the line reads {shown!r}).")


_LETOR_LINE = re.compile(rb"\s*[0-9.eE+-]+\s+qid:\S+")
_TABLE_HINT = (" Line 1 looks like the header of a CSV table: read the file as a table "
               "(on Ranking data, switch Format to \"CSV / Parquet\"; in code, "
               "read_ltr_table).")


def _first_line(raw: bytes) -> bytes:
    """The first line that is neither blank nor a comment (b"" when there is none)."""
    for line in raw.split(b"\n"):
        if line.strip() and not line.lstrip().startswith(b"#"):
            return line
    return b""


def _with_table_hint(error: DataError, raw: bytes) -> DataError:
    """``error``, with a hint to read the file as a table when its line 1 is a CSV header
    (delimited by commas, semicolons or tabs, and no 'qid:')."""
    first = raw.split(b"\n", 1)[0]
    if (str(error).startswith("Cannot read the LETOR file: line 1:") and b"qid:" not in first
            and re.search(rb"[,;\t]", first)):
        return DataError(str(error) + _TABLE_HINT)
    return error


def _diagnose(raw: bytes, n_features: int | None) -> DataError | None:
    """The first line breaking a LETOR rule, as a DataError; None when every line is valid."""
    for line_no, line in enumerate(raw.split(b"\n"), start=1):
        body = line.split(b"#", 1)[0]
        if body.strip():
            reason = _line_problem(body, n_features)
            if reason is not None:
                return _located(line_no, reason, line)
    return None


def _load(raw: bytes, n_features: int | None) -> tuple[Any, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(io.BytesIO(raw), query_id=True, zero_based=False,
                              n_features=n_features)


def _first_failing_line(raw: bytes, n_features: int | None, message: str) -> DataError:
    """Bisect on prefixes to find the first line scikit-learn refuses (fallback when the
    line rules above see nothing wrong)."""
    lines = raw.split(b"\n")
    lo, hi = 1, len(lines)  # the full file fails; find the shortest failing prefix
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            _load(b"\n".join(lines[:mid]), n_features)
        except (ValueError, TypeError, OverflowError, IndexError):
            hi = mid
        else:
            lo = mid + 1
    return _located(lo, f"it could not be read as SVMlight/LETOR ({message})", lines[lo - 1])


def _data_lines(raw: bytes) -> tuple[np.ndarray, list[bytes] | None]:
    """1-based line number of each data row, and each row's comment (None if no '#')."""
    has_comments = b"#" in raw
    numbers, comments = [], []
    for line_no, line in enumerate(raw.split(b"\n"), start=1):
        body, sep, comment = line.partition(b"#")
        if body.strip():
            numbers.append(line_no)
            if has_comments:
                comments.append(comment if sep else None)
    return np.asarray(numbers, dtype=np.int64), comments if has_comments else None


_DOCID = re.compile(r"docid\s*=\s*(\S+)")


def _doc_ids(comments: list[bytes | None], lines: np.ndarray) -> np.ndarray | None:
    if all(c is None or not c.strip() for c in comments):
        return None
    out = []
    for comment, line_no in zip(comments, lines, strict=True):
        text = (comment or b"").decode("utf-8", "replace").strip()
        m = _DOCID.search(text)
        out.append(m.group(1) if m else (text or f"line {line_no}"))
    return np.asarray(out, dtype=str)


def _one_document_query(qid: np.ndarray) -> tuple[Any, int] | None:
    """(query id, row) of the first query (by its row) that has a single document."""
    uniq, first, counts = np.unique(qid, return_index=True, return_counts=True)
    single = counts == 1
    if not single.any():
        return None
    k = int(np.argmin(np.where(single, first, np.iinfo(np.int64).max)))
    return uniq[k].item() if hasattr(uniq[k], "item") else uniq[k], int(first[k])


def _one_document_error(qid: Any, where: str) -> DataError:
    shown = repr(qid) if isinstance(qid, str) else qid
    return DataError(f"Query {shown} ({where}) has one document; a ranking needs at least two. "
                     "Remove that row or add documents to the query.")


def read_letor(source: Any, *, n_features: int | None = None, max_bytes: int = 500 * _MB,
               name: str | None = None) -> LTRData:
    """Read a LETOR / SVMlight ranking file: ``label qid:Q 1:v 2:v … # comment``.

    The numbers are parsed by :func:`sklearn.datasets.load_svmlight_file` (``query_id=True``,
    one-based feature indices); features absent from a line are 0.  Query ids need not be
    contiguous numbers and a query's lines may be interleaved with other queries'; the file
    order is kept.  A comment ``#docid = GX008-86-4444840 inc = 1 …`` gives the document id
    ``"GX008-86-4444840"``; another comment gives its stripped text; rows without a comment
    in a file that has some get ``"line N"``; a file without comments has ``ids=None``.

    Parameters
    ----------
    source : str, Path, bytes or binary file object
        A path, the raw bytes, or an open file (Streamlit's ``UploadedFile`` works).  Gzip
        compression is recognised by its magic bytes, whatever the file name.
    n_features : int, optional
        Pad ``X`` to this many columns (MQ2008 has 46); a feature index beyond it is an error.
        Without it, indices up to :data:`MAX_FEATURES` are accepted.
    max_bytes : int, default 500 MiB
        Refuse files (after decompression) larger than this.
    name : str, optional
        Label of the data; default the file name.

    Returns
    -------
    LTRData
        ``X`` dense ``float64`` (CSR when more than :data:`DENSE_MAX_CELLS` cells),
        ``relevance``, ``qid`` (``int64``), ``ids``, ``feature_names`` ``f1 … fd``.

    Raises
    ------
    DataError
        With the 1-based line number: a label that is not a finite number ≥ 0, a missing or
        non-integer ``qid:``, a feature index ≤ 0, repeated or decreasing along a line, a
        value that is not a finite number, a query with one document.  Without one: an empty
        file (or comments only), a file over ``max_bytes``, binary content, a damaged gzip.
    """
    if n_features is not None:
        n_features = check_positive_int(n_features, "n_features")
    max_bytes = check_positive_int(max_bytes, "max_bytes")
    raw = _text_bytes(_source_bytes(source, max_bytes), max_bytes)
    if not raw.strip():
        raise DataError("The file is empty: a LETOR file has one line per document, "
                        "'label qid:Q 1:v 2:v …'.")
    try:
        X, y, qid = _load(raw, n_features)
    except (ValueError, TypeError, OverflowError, IndexError) as exc:
        error = _diagnose(raw, n_features) or _first_failing_line(raw, n_features, str(exc))
        raise _with_table_hint(error, raw) from None
    n = y.shape[0]
    if n == 0:
        raise DataError("The file has no data lines, only comments or blank lines: a LETOR "
                        "file has one line per document, 'label qid:Q 1:v 2:v …'.")
    X = sp.csr_matrix(X, dtype=np.float64)
    if (qid.shape[0] != n or not np.isfinite(y).all() or (y < 0).any()
            or not np.isfinite(X.data).all() or X.shape[1] > (n_features or MAX_FEATURES)):
        error = _diagnose(raw, n_features)
        if error is None:  # pragma: no cover - the line rules cover every post-check
            raise DataError("Cannot read the LETOR file: some lines lack 'qid:' or hold "
                            "values that are not finite numbers.")
        raise error
    if X.indices.size == 0:
        raise DataError("The file has no feature values: every line is only 'label qid:Q'.")
    single = _one_document_query(qid)
    ids = None
    if single is not None or b"#" in raw:
        lines, comments = _data_lines(raw)
        if single is not None:
            raise _one_document_error(single[0], f"line {lines[single[1]]}")
        ids = None if comments is None else _doc_ids(comments, lines)
    dense = X.shape[0] * X.shape[1] <= DENSE_MAX_CELLS
    return LTRData(X=X.toarray() if dense else X, relevance=y.astype(np.float64),
                   qid=qid.astype(np.int64), ids=ids, name=name or source_name(source)
                   or "LETOR data")


# ======================================================================= tables
def _parquet(raw: bytes) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(io.BytesIO(raw))
    except Exception as exc:  # noqa: BLE001 (pyarrow raises many types on a damaged file)
        raise DataError(f"The file starts like a Parquet file but could not be read: {exc}."
                        ) from None
    if frame.empty:
        raise DataError("The Parquet file has no rows.")
    frame.columns = [str(c) for c in frame.columns]
    return frame.reset_index(drop=True)


def _numbers(col: pd.Series, what: str, where: Any) -> np.ndarray:
    """``col`` as finite float64, else a DataError naming ``what`` and the first bad row."""
    values = pd.to_numeric(col, errors="coerce")
    arr = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        held = col.iloc[i]
        if pd.isna(held):
            raise DataError(f"{what} is missing on {where(i)}; fill or drop missing values.")
        raise DataError(f"{what} must hold finite numbers; {where(i)} holds {held!r}.")
    return arr


def read_ltr_table(source: Any, *, query: str = "qid", relevance: str = "relevance",
                   features: list[str] | None = None, doc_id: str | None = None,
                   name: str | None = None) -> LTRData:
    """Read ranking data from a table: one row per document.

    CSV files are read by :func:`core.data.csvio.read_frame` (delimiter sniffing, encodings,
    gzip, binary refusal); Parquet files (recognised by their magic bytes ``PAR1``) by pandas
    and pyarrow.

    Parameters
    ----------
    source : str, Path, bytes or file object
    query : str, default "qid"
        Column of query ids; kept as integers when every id is integral, else as strings.
    relevance : str, default "relevance"
        Column of relevance grades: finite numbers ≥ 0.
    features : list of str, optional
        Feature columns (numeric, no missing value); default every other numeric column.
    doc_id : str, optional
        Column of document ids (kept as strings).
    name : str, optional
        Label of the data; default the file name.

    Returns
    -------
    LTRData

    Raises
    ------
    DataError
        A missing column (the message lists the table's columns), a relevance or feature
        value that is not a finite number (with its row; for CSV also the line, assuming a
        one-line header and no blank lines), a negative grade, a missing query id, a query
        with one document, an empty table, no feature column.
    """
    content = csvio._read_source(source)
    if isinstance(content, str):
        content = content.encode("utf-8")
    if content[:4] == b"PAR1":
        frame = _parquet(content)

        def where(i: int) -> str:
            return f"row {i + 1}"
    else:
        plain = _plain(content)
        first = _first_line(plain[:65536]) if plain is not None else b""
        if _LETOR_LINE.match(first):
            shown = first.decode("utf-8", "replace").strip()
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise DataError(f"This looks like a LETOR / SVMlight file, not a table (its first "
                            f"line reads {shown!r}): on Ranking data, switch Format to "
                            "\"LETOR / SVMlight\"; in code, read it with read_letor.")
        frame, _ = read_frame(content, needs="A ranking table needs a query column, a "
                              "relevance column and feature columns.")

        def where(i: int) -> str:
            return f"row {i + 1}, line {i + 2}"

    for label, value in (("query", query), ("relevance", relevance)):
        if not isinstance(value, str):
            raise TypeError(f"{label} must be a column name (str); got {value!r}.")
    if query == relevance:
        raise ValueError(f"query and relevance must be different columns; both are {query!r}.")
    columns = list(frame.columns)
    wanted = [query, relevance, *([doc_id] if doc_id is not None else []),
              *(features if features is not None else [])]
    missing = [c for c in dict.fromkeys(wanted) if c not in columns]
    if missing:
        raise DataError(f"Column(s) {', '.join(map(repr, missing))} not found; the table has "
                        f"columns {', '.join(map(repr, columns))}.")
    reserved = {query, relevance, doc_id}
    if features is None:
        features = [c for c in columns if c not in reserved
                    and frame[c].dtype.kind in "biuf"]
    else:
        features = list(features)
        clash = [c for c in features if c in reserved]
        if clash:
            raise ValueError(f"features must not include the query, relevance or doc_id "
                             f"column; got {', '.join(map(repr, clash))}.")
    if not features:
        raise DataError(f"The table has no numeric feature column besides {query!r} and "
                        f"{relevance!r}; its columns are {', '.join(map(repr, columns))}.")
    rel = _numbers(frame[relevance], f"The relevance column {relevance!r}", where)
    if (rel < 0).any():
        i = int(np.argmax(rel < 0))
        raise DataError(f"Relevance grades must be 0 or more; {where(i)} of column "
                        f"{relevance!r} holds {rel[i]:g}.")
    X = np.column_stack([_numbers(frame[c], f"The feature column {c!r}", where)
                         for c in features])
    qcol = frame[query]
    if qcol.isna().any():
        i = int(np.argmax(qcol.isna().to_numpy()))
        raise DataError(f"The query column {query!r} is missing on {where(i)}.")
    qnum = pd.to_numeric(qcol, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    if qcol.dtype.kind == "i" or (qcol.dtype.kind == "u"
                                  and qcol.max() <= np.iinfo(np.int64).max):
        # integer ids as read: no trip through float64 (ids above 2**53 stay distinct)
        qid = qcol.to_numpy().astype(np.int64)
    elif np.isfinite(qnum).all() and np.all(np.mod(qnum, 1) == 0) and qcol.dtype.kind == "f":
        qid = qnum.astype(np.int64)
    else:
        qid = qcol.astype(str).to_numpy().astype(str)
    single = _one_document_query(qid)
    if single is not None:
        raise _one_document_error(single[0], where(single[1]))
    ids = None
    if doc_id is not None:
        ids = frame[doc_id].astype("string").fillna("").to_numpy().astype(str)
    return LTRData(X=X, relevance=rel, qid=qid, ids=ids, feature_names=list(features),
                   name=name or source_name(source) or "LTR table")


# ======================================================================= MQ2008
def _fold_parts(fold: int) -> dict[str, tuple[int, ...]]:
    """LETOR's partition: Fold k = train S_k, S_k+1, S_k+2; vali S_k+3; test S_k+4 (cyclic)."""
    s = [(fold - 1 + j) % 5 + 1 for j in range(5)]
    return {"train": tuple(s[:3]), "vali": (s[3],), "test": (s[4],)}


def _search_dirs(data_dir: str | Path | None) -> list[Path]:
    return data_dir_candidates() if data_dir is None else [Path(data_dir), cache_dir()]


def _fold1_entry(split: str) -> dict[str, Any]:
    return REGISTRY[f"mq2008_fold1_{split}"]


def _fold1_files(dirs: list[Path]) -> dict[str, Path] | None:
    """``mq2008_fold1/{train,vali,test}.txt[.gz]`` of the first directory holding all three."""
    for d in dirs:
        found = {}
        for split in _SPLITS:
            for suffix in (".txt.gz", ".txt"):
                p = Path(d) / "mq2008_fold1" / f"{split}{suffix}"
                if p.is_file():
                    found[split] = p
                    break
        if len(found) == 3:
            return found
    return None


def _part_files(dirs: list[Path]) -> dict[int, Path] | None:
    """``MQ2008/S1.txt … S5.txt`` (or ``.txt.gz``) of the first directory holding all five."""
    for d in dirs:
        found = {}
        for part in range(1, 6):
            for suffix in (".txt", ".txt.gz"):
                p = Path(d) / "MQ2008" / f"S{part}{suffix}"
                if p.is_file():
                    found[part] = p
                    break
        if len(found) == 5:
            return found
    return None


def _plain(raw: bytes) -> bytes | None:
    """Decompressed content of a gzip file (or ``raw`` itself); None when damaged."""
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error):
        return None


def _mismatch(path: Path | str, got: str, expected: str) -> DataError:
    return DataError(f"{str(path)!r} does not match the published checksum (SHA-256 "
                     f"{got[:12]}..., expected {expected[:12]}...). The file is damaged or a "
                     "different version; delete it and get a fresh copy.")


def _verified_fold1(path: Path, split: str) -> bytes:
    entry = _fold1_entry(split)
    raw = path.read_bytes()
    got = hashlib.sha256(raw).hexdigest()
    if got == entry["sha256"]:
        return raw
    plain = _plain(raw)  # re-compressed or uncompressed copies: compare the text
    if plain is not None and hashlib.sha256(plain).hexdigest() == entry["content_sha256"]:
        return plain
    raise _mismatch(path, got, entry["sha256"])


def _verified_parts(paths: dict[int, Path]) -> dict[int, bytes]:
    """S1..S5 contents, checked against the fold-1 checksums: S4 = vali, S5 = test and
    S1 + S2 + S3 = train."""
    parts: dict[int, bytes] = {}
    for part, path in paths.items():
        plain = _plain(path.read_bytes())
        if plain is None:
            raise DataError(f"{str(path)!r} looks gzip-compressed but is damaged or "
                            "truncated; delete it and get a fresh copy.")
        parts[part] = plain
    checks = (((4,), "vali"), ((5,), "test"), ((1, 2, 3), "train"))
    for which, split in checks:
        got = hashlib.sha256(b"".join(parts[p] for p in which)).hexdigest()
        expected = _fold1_entry(split)["content_sha256"]
        if got != expected:
            if len(which) == 1:
                raise _mismatch(paths[which[0]], got, expected)
            names = " + ".join(str(paths[p]) for p in which)
            raise DataError(f"S1 + S2 + S3 ({names}) together do not match the published "
                            f"checksum of fold 1's train (SHA-256 {got[:12]}..., expected "
                            f"{expected[:12]}...). One of them is damaged or a different "
                            "version; delete them and get fresh copies.")
    return parts


def _how_to_obtain(dirs: list[Path]) -> str:
    where = ", ".join(str(d) for d in dirs) or "(no directory)"
    base = MQ2008_URL.rsplit("/", 1)[0]
    return (f"UpRank looked for mq2008_fold1/{{train,vali,test}}.txt.gz and MQ2008/S1.txt … "
            f"S5.txt in: {where}. Download S1.txt … S5.txt from {base}/ into "
            f"{cache_dir() / 'MQ2008'} (load_mq2008 does it itself when allowed to download), "
            "or put the folder holding mq2008_fold1/ or MQ2008/ in the UPRANK_DATA_DIR "
            "environment variable.")


def _download_parts(dirs: list[Path]) -> dict[int, Path]:
    """Download S1..S5 into ``cache_dir()/MQ2008`` (each atomically) and return their paths."""
    target = cache_dir() / "MQ2008"
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"Cannot create the cache folder {str(target)!r}: {exc}.") from None
    paths, fetched = {}, []
    try:
        for part in range(1, 6):
            dest = target / f"S{part}.txt"
            if not dest.is_file():
                _download(MQ2008_URL.format(part=part), dest)
                fetched.append(dest)
            paths[part] = dest
        _verified_parts(paths)
    except DataError as exc:
        for p in fetched:
            p.unlink(missing_ok=True)
        if fetched and "checksum" in str(exc):
            raise DataError(f"{exc} The downloaded files were deleted.") from None
        raise
    except (urllib.error.URLError, OSError, ValueError) as exc:
        for p in fetched:
            p.unlink(missing_ok=True)
        reason = getattr(exc, "reason", None) or exc
        raise DataError(f"Download of MQ2008 failed ({reason}). " + _how_to_obtain(dirs)
                        ) from None
    return paths


def _download(url: str, dest: Path) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".download-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, \
                urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as resp:
            for block in iter(lambda: resp.read(1 << 16), b""):
                out.write(block)
        os.replace(tmp_name, dest)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def _joined(parts: list[bytes]) -> bytes:
    return b"".join(p if p.endswith(b"\n") else p + b"\n" for p in parts)


def _check_fold(fold: Any) -> int:
    if not is_integer(fold) or not 1 <= fold <= 5:
        raise ValueError(f"fold must be one of 1, 2, 3, 4, 5; got {fold!r}.")
    return int(fold)


def load_mq2008(fold: int = 1, *, data_dir: str | Path | None = None,
                allow_download: bool = True) -> dict[str, LTRData]:
    """LETOR 4.0 MQ2008 (supervised ranking, 46 features, grades 0/1/2): one fold's splits.

    Fold 1 ships as ``mq2008_fold1/{train,vali,test}.txt.gz`` (``../shared/data``); its
    SHA-256 is checked against ``data/registry.json`` (a re-compressed or uncompressed copy
    is checked on its text).  Otherwise the fold is built from MQ2008's five parts
    ``MQ2008/S1.txt … S5.txt`` with LETOR's partition — Fold k: train S_k, S_k+1, S_k+2,
    vali S_k+3, test S_k+4 (indices cyclic in 1..5), so Fold 1 = train S1+S2+S3, vali S4,
    test S5.  The parts are checked as a set: S4 and S5 against fold 1's vali and test,
    S1 + S2 + S3 against fold 1's train.  When no directory holds them and
    ``allow_download``, they are downloaded from the publisher's copy
    (:data:`MQ2008_URL`, meta-toolkit/meta at :data:`MQ2008_COMMIT`) into
    ``cache_dir()/MQ2008``.

    Parameters
    ----------
    fold : {1, 2, 3, 4, 5}
    data_dir : path, optional
        Look only there (then in the download cache); default
        :func:`core.data.datafiles.data_dir_candidates`.
    allow_download : bool, default True

    Returns
    -------
    dict
        ``{"train": LTRData, "vali": LTRData, "test": LTRData}``; fold 1 has 9,630 / 2,707 /
        2,874 documents in 471 / 157 / 156 queries.

    Raises
    ------
    DataError
        A checksum mismatch, or the files are not found and cannot be downloaded (the
        message says where UpRank looked and how to obtain them).

    References
    ----------
    Qin, T., Liu, T.-Y. (2013). Introducing LETOR 4.0 Datasets. arXiv:1306.2597.
    """
    fold = _check_fold(fold)
    dirs = _search_dirs(data_dir)
    texts: dict[str, bytes] | None = None
    files = _fold1_files(dirs) if fold == 1 else None
    if files is not None:
        texts = {split: _verified_fold1(files[split], split) for split in _SPLITS}
    else:
        paths = _part_files(dirs)
        if paths is None:
            if not allow_download:
                raise DataError(f"LETOR 4.0 MQ2008 fold {fold} was not found. "
                                + _how_to_obtain(dirs))
            paths = _download_parts(dirs)
        parts = _verified_parts(paths)
        texts = {split: _joined([parts[p] for p in which])
                 for split, which in _fold_parts(fold).items()}
    return {split: read_letor(texts[split], n_features=MQ2008_N_FEATURES,
                              name=f"MQ2008 fold {fold} — {split}") for split in _SPLITS}


def mq2008_folds_available(data_dir: str | Path | None = None) -> list[int]:
    """Folds :func:`load_mq2008` can load without downloading: ``[1]`` when fold 1's files
    are found, ``[1, 2, 3, 4, 5]`` when S1..S5 are (checksums are checked on loading)."""
    dirs = _search_dirs(data_dir)
    if _part_files(dirs) is not None:
        return [1, 2, 3, 4, 5]
    return [1] if _fold1_files(dirs) is not None else []


# ======================================================================= synthetic world
def _normal_cdf(z: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(z)


def make_ltr_world(n_queries: int = 300, *, n_features: int = 20,
                   docs_per_query: tuple[int, int] = (5, 80), no_relevant_share: float = 0.3,
                   max_grade: int = 4, noise: float = 1.0, random_state: Any = None
                   ) -> LTRData:
    r"""A seeded synthetic learning-to-rank world with known expected relevance.

    Each query ``q`` has ``m_q`` documents, log-uniform in ``docs_per_query``, and an offset
    ``b_q`` (how well the collection serves it).  Document features are standard normal,
    except: ``f6`` is a query-level feature ``b_q + N(0, 0.3²)`` shared by the query's
    documents (like LETOR's query-level features); ``f7 … f10`` are noisy copies
    ``f_j + N(0, 1)`` of ``f1 … f4``; the rest is noise.  The latent utility is

    .. math::
        u = 1.2\tanh(1.5 x_1) + 0.8 x_2 x_3 + 0.5(x_4^2 - 1) + 0.6\sin(2 x_5) + b_q
            + \sigma\varepsilon,\qquad \varepsilon \sim N(0, 1),

    and the grade is the number of thresholds ``c_k = 1.5 + 0.9 (k - 1)``, ``k = 1 …
    max_grade``, below ``u`` (about 20 % of documents get a grade > 0).  ``truth`` is the
    expected grade ``Σ_k Φ((u - σε - c_k) / σ)`` (the grade itself when ``noise = 0``).

    Exactly ``round(no_relevant_share · n_queries)`` queries, chosen at random, have no
    relevant document (the imbalance P-nDCG is about): their offsets are drawn lower
    (``b_q ~ N(-1.5, 0.5²)`` instead of ``N(0, 0.5²)``, so ``f6`` hints at them), every
    grade is 0 and ``truth`` is 0.  Every other query has at least one document with grade
    > 0: its noise is redrawn (up to 50 times) until one does, else its highest-utility
    document gets grade 1; ``truth`` stays the unconditional expectation.

    Parameters
    ----------
    n_queries : int, default 300
        At least 3.
    n_features : int, default 20
        At least 6.
    docs_per_query : (int, int), default (5, 80)
        Smallest and largest number of documents of a query (2 ≤ low ≤ high).
    no_relevant_share : float in [0, 1], default 0.3
    max_grade : int, default 4
    noise : float ≥ 0, default 1.0
        Standard deviation σ of the utility noise.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    LTRData
        Rows grouped by query, ``qid`` 1..n_queries, ids ``"q<qid>-d<j>"``, ``truth`` set.
    """
    n_queries = check_int_at_least(n_queries, "n_queries", 3)
    n_features = check_int_at_least(n_features, "n_features", 6)
    max_grade = check_positive_int(max_grade, "max_grade")
    try:
        low, high = docs_per_query
    except (TypeError, ValueError):
        raise ValueError("docs_per_query must be a pair of integers (low, high); "
                         f"got {docs_per_query!r}.") from None
    if not (is_integer(low) and is_integer(high) and 2 <= low <= high):
        raise ValueError("docs_per_query must be integers with 2 <= low <= high; "
                         f"got {docs_per_query!r}.")
    share = check_fraction(no_relevant_share, "no_relevant_share", allow_zero=True)
    try:
        sigma = float(noise)
    except (TypeError, ValueError):
        raise ValueError(f"noise must be a finite number >= 0; got {noise!r}.") from None
    if isinstance(noise, (bool, np.bool_)) or not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"noise must be a finite number >= 0; got {noise!r}.")
    rng = as_generator(random_state)

    sizes = np.floor(np.exp(rng.uniform(np.log(low), np.log(high + 1), n_queries)))
    sizes = np.clip(sizes, low, high).astype(np.int64)
    n_none = round(share * n_queries)
    none = np.zeros(n_queries, dtype=bool)
    none[rng.choice(n_queries, n_none, replace=False)] = True
    offset = np.where(none, rng.normal(-1.5, 0.5, n_queries), rng.normal(0.0, 0.5, n_queries))

    n = int(sizes.sum())
    q_of_row = np.repeat(np.arange(n_queries), sizes)
    X = rng.normal(size=(n, n_features))
    X[:, 5] = (offset + rng.normal(0.0, 0.3, n_queries))[q_of_row]
    n_copies = min(4, n_features - 6)
    X[:, 6:6 + n_copies] = X[:, :n_copies] + rng.normal(size=(n, n_copies))
    signal = (1.2 * np.tanh(1.5 * X[:, 0]) + 0.8 * X[:, 1] * X[:, 2]
              + 0.5 * (X[:, 3] ** 2 - 1) + 0.6 * np.sin(2 * X[:, 4]) + offset[q_of_row])
    cuts = 1.5 + 0.9 * np.arange(max_grade)

    def grades(u: np.ndarray) -> np.ndarray:
        return (u[:, None] > cuts[None, :]).sum(axis=1).astype(np.float64)

    rel = grades(signal + sigma * rng.normal(size=n))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for q in range(n_queries):
        rows = slice(starts[q], starts[q + 1])
        if none[q]:
            rel[rows] = 0.0
            continue
        for _ in range(50):
            if rel[rows].max() > 0:
                break
            rel[rows] = grades(signal[rows] + sigma * rng.normal(size=sizes[q]))
        if rel[rows].max() <= 0:
            rel[starts[q] + int(np.argmax(signal[rows]))] = 1.0
    if sigma > 0:
        truth = _normal_cdf((signal[:, None] - cuts[None, :]) / sigma).sum(axis=1)
    else:
        truth = grades(signal)
    truth[none[q_of_row]] = 0.0

    qid = (q_of_row + 1).astype(np.int64)
    doc = np.arange(n) - starts[q_of_row] + 1
    ids = np.char.add(np.char.add(np.char.add("q", qid.astype(str)), "-d"), doc.astype(str))
    return LTRData(X=X, relevance=rel, qid=qid, ids=ids,
                   feature_names=[f"f{j + 1}" for j in range(n_features)],
                   name="Synthetic LTR world", truth=truth)


# ======================================================================= splits
def _check_fractions(fractions: Any) -> np.ndarray:
    try:
        values = [float(f) for f in fractions]
    except (TypeError, ValueError):
        raise ValueError("fractions must be three numbers (train, vali, test) summing to 1; "
                         f"got {fractions!r}.") from None
    arr = np.asarray(values)
    if (arr.shape != (3,) or not np.isfinite(arr).all() or (arr <= 0).any()
            or abs(arr.sum() - 1) > 1e-9):
        raise ValueError("fractions must be three positive numbers (train, vali, test) "
                         f"summing to 1; got {fractions!r}.")
    return arr


def split_queries(data: LTRData, *, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2),
                  random_state: Any = None) -> dict[str, LTRData]:
    """Split ``data`` into train / vali / test by whole queries.

    Vali gets ``round(fractions[1] · Q)`` queries and test ``round(fractions[2] · Q)`` (at
    least one each), train the rest.  The split is stratified on whether a query has a
    relevant document (grade > 0), so every part keeps about the same share of queries
    without one.  Rows keep their file order within each part.

    Parameters
    ----------
    data : LTRData
        At least 3 queries.
    fractions : (float, float, float), default (0.6, 0.2, 0.2)
        Positive shares of queries for train, vali and test, summing to 1.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    dict
        ``{"train": LTRData, "vali": LTRData, "test": LTRData}``, disjoint in queries and
        together every row; names get a `` — train`` … suffix.
    """
    if not isinstance(data, LTRData):
        raise TypeError(f"data must be an LTRData; got {type(data).__name__}.")
    frac = _check_fractions(fractions)
    rng = as_generator(random_state)
    table = data.query_table()
    n_q = len(table)
    counts = np.maximum(1, np.round(frac[1:] * n_q)).astype(np.int64)
    counts = np.concatenate([[n_q - counts.sum()], counts])
    if n_q < 3 or counts[0] < 1:
        raise ValueError("data must have enough queries to give train, vali and test one "
                         f"each with fractions {tuple(frac.tolist())}; got {n_q} queries.")
    # Interleave the split labels evenly (label s at positions (j + 0.5) / counts[s]) and
    # deal them over the queries shuffled within each stratum: both strata get their share.
    keys = np.concatenate([(np.arange(c) + 0.5) / c for c in counts])
    labels = np.repeat(np.arange(3), counts)[np.argsort(keys, kind="stable")]
    has_rel = table["n_relevant"].to_numpy() > 0
    order = np.concatenate([rng.permutation(np.flatnonzero(~has_rel)),
                            rng.permutation(np.flatnonzero(has_rel))])
    qids = table["qid"].to_numpy()
    out = {}
    for s, split in enumerate(_SPLITS):
        chosen = qids[order[labels == s]]
        out[split] = data._rows(np.flatnonzero(np.isin(data.qid, chosen)),
                                f"{data.name} — {split}")
    return out


# ======================================================================= grade checks
def grade_warnings(relevance: Any) -> list[str]:
    """Plain sentences about relevance grades that read but will surprise: grades that are
    not whole numbers, grades above :data:`MAX_LAMBDARANK_GRADE`, and a single grade for
    every document.  An empty list when the grades look like LETOR grades (0, 1, 2 …).

    Parameters
    ----------
    relevance : array-like of shape (n,)
        Finite grades ≥ 0 (as the readers return them).

    Returns
    -------
    list of str

    Examples
    --------
    >>> grade_warnings([0, 1, 2, 0])
    []
    >>> [w.split(":")[0] for w in grade_warnings([0, 2.5, 1])]
    ['1 of 3 documents have a grade that is not a whole number (e.g. 2.5)']
    >>> grade_warnings([0, 0, 0])[0][:36]
    'Every document has the same grade, 0'
    """
    rel = np.asarray(relevance, dtype=np.float64).reshape(-1)
    if rel.size == 0:
        return []
    out = []
    fractional = rel != np.round(rel)
    if fractional.any():
        example = float(rel[np.argmax(fractional)])
        out.append(f"{int(fractional.sum()):,} of {rel.size:,} documents have a grade that is "
                   f"not a whole number (e.g. {example:g}): LightGBM's built-in lambdarank "
                   "refuses such grades, and MAUC and macro P@k count every distinct value "
                   "as a grade of its own. LETOR grades are 0, 1, 2 …")
    top = float(rel.max())
    if top > MAX_LAMBDARANK_GRADE:
        out.append(f"The largest grade is {top:g}: LightGBM's built-in lambdarank takes grades "
                   f"0 to {MAX_LAMBDARANK_GRADE} only, and NDCG's gains are dominated by the "
                   "largest grades. Check that the relevance column holds graded judgements, "
                   "not scores or counts.")
    if np.all(rel == rel[0]):
        what = ("no query has a relevant document, so every AUC, MAP and NDCG is undefined"
                if rel[0] == 0 else "every document is equally relevant: there is nothing "
                "to put first")
        out.append(f"Every document has the same grade, {rel[0]:g}: {what}. The rankers "
                   "cannot be trained on these data.")
    return out
