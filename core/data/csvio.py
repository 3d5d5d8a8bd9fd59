"""Reading analysts' CSV files into a typed DataFrame, with plain-language errors.

:func:`read_frame` turns a path, bytes or file object into a DataFrame whose text columns are
stripped strings (missing tokens become ``<NA>``) and whose numeric-looking columns are numbers.
The parsing itself is pandas' (``pd.read_csv``, C engine); this module only decides how to call
it and translates every failure into :class:`core.data.abdata.DataError`:

* decoding: UTF-8 with or without BOM, UTF-16 with BOM, else Windows-1252 / Latin-1 (noted in
  the warnings); ``.gz`` content is decompressed transparently;
* binary content (PNG, ZIP/XLSX, PDF, NUL bytes...) and HTML pages are refused;
* the delimiter (comma, semicolon or tab) is sniffed by counting delimiters *outside quotes*
  on the first records and keeping the one with a non-zero, consistent count, so
  ``"1,5";"2,3"`` is read as two semicolon-separated fields;
* values are stripped; with a semicolon or tab delimiter a column of decimal-comma numbers
  (``1,5``, also with points grouping thousands: ``2.969,95``) is read as numbers.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_positive_int
from core.data.abdata import DataError

__all__ = ["MISSING_TOKENS", "peek_csv", "read_frame", "source_name"]

#: Cell values read as missing after stripping: pandas' default ``na_values`` (case-sensitive,
#: so a level such as ``none`` stays a value while ``None`` and ``NA`` are missing).
MISSING_TOKENS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})
_DELIMITERS = (",", ";", "\t")
#: Integers of 19 digits or more: candidates for :func:`_beyond_int64`.
_LONG_INTEGER = re.compile(r"[+-]?\d{19,}")
_EXCEL_SEP = re.compile(r"[ \t]*sep=([,;\t|])[ \t]*\r?\n", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?")
_DELIM_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx file is one too; save the sheet as CSV)"),
    (b"%PDF", "a PDF document"),
    (b"GIF8", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office file (save the sheet as CSV)"),
    (b"PAR1", "a Parquet file"),
)


def source_name(source: Any) -> str | None:
    """A display name for ``source``: a path's file name, an upload's ``.name``, else None."""
    if isinstance(source, (str, Path)):
        return Path(source).name
    name = getattr(source, "name", None)
    return Path(name).name if isinstance(name, str) and name else None


def _read_source(source: Any) -> bytes | str:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"File not found: {str(path)!r}.")
        try:
            return path.read_bytes()
        except OSError as exc:
            raise DataError(f"Could not read {str(path)!r}: {exc.strerror or exc}.") from None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if hasattr(source, "read"):
        try:
            if getattr(source, "seekable", lambda: False)():
                source.seek(0)
            content = source.read()
        except UnicodeDecodeError as exc:
            raise DataError(f"The file could not be decoded as {exc.encoding}; open it in binary "
                            "mode (or pass its bytes) so the encoding can be detected.") from None
        except OSError as exc:
            raise DataError(f"Could not read the file: {exc}.") from None
        if isinstance(content, (bytes, bytearray, str)):
            return content if isinstance(content, str) else bytes(content)
    raise TypeError(
        "source must be a path (str or Path), bytes, or a binary/text file object; "
        f"got {type(source).__name__}."
    )


def _decode(raw: bytes, warnings: list[str]) -> str:
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise DataError("The file looks gzip-compressed but is damaged or truncated; "
                            "decompress it and upload the CSV.") from None
    for magic, what in _MAGIC:
        if raw.startswith(magic):
            raise DataError(f"This is not a CSV file: it looks like {what}.")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise DataError("The file starts with a UTF-16 mark but cannot be decoded as "
                            "UTF-16; save it as UTF-8 CSV.") from None
    head = raw[:8192]
    controls = sum(b < 32 and b not in (9, 10, 13) for b in head)
    if b"\x00" in head or controls > max(2, len(head) // 100):
        raise DataError("This is not a CSV file: it contains binary data (control bytes), "
                        "not text.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    for enc in ("cp1252", "latin-1"):
        try:
            text = raw.decode(enc)
        except UnicodeDecodeError:
            continue
        warnings.append("The file is not valid UTF-8; it was read as Latin-1 (Windows-1252). "
                        "Check accented text.")
        return text
    # latin-1 decodes every byte, so this is unreachable; kept as a guard.
    raise DataError("The file could not be decoded as text.")  # pragma: no cover


def _records(text: str, limit: int) -> list[str]:
    """The first ``limit`` complete records of ``text`` (newlines inside quotes kept)."""
    out, start, quoted = [], 0, False
    for m in re.finditer(r'["\n]', text):
        if m.group() == '"':
            quoted = not quoted
        elif not quoted:
            out.append(text[start:m.start()])
            start = m.end()
            if len(out) >= limit:
                return out
    if start < len(text):
        out.append(text[start:])
    return out


def _count_outside_quotes(record: str, delim: str) -> int:
    count, quoted = 0, False
    for ch in record:
        if ch == '"':
            quoted = not quoted
        elif ch == delim and not quoted:
            count += 1
    return count


def _sniff(text: str, needs: str) -> str:
    records = [r for r in _records(text, 30) if r.strip()]
    header = records[0]
    best, best_key = None, None
    for d in _DELIMITERS:
        counts = [_count_outside_quotes(r, d) for r in records]
        if counts[0] == 0:
            continue
        consistent = sum(c == counts[0] for c in counts)
        key = (consistent, counts[0])
        if best_key is None or key > best_key:
            best, best_key = d, key
    if best is None:
        shown = header.strip()[:80]
        raise DataError(
            "This does not look like a CSV table: the first line has no comma, semicolon or tab "
            f"separating columns (first line: {shown!r}). {needs}"
        )
    return best


def _physical_line(text: str, record: int) -> int:
    """Physical line (1-based) where pandas' record number ``record`` starts."""
    outside = physical = 0
    quoted = False
    for m in re.finditer(r'["\n]', text):
        if outside >= record - 1:
            break
        if m.group() == '"':
            quoted = not quoted
        else:
            physical += 1
            outside += not quoted
    return physical + 1


def _parse(text: str, sep: str, nrows: int | None) -> pd.DataFrame:
    try:
        return pd.read_csv(
            io.StringIO(text), sep=sep, header=None, dtype=str, na_filter=False,
            skipinitialspace=True, skip_blank_lines=True, engine="c", nrows=nrows,
            quoting=csv.QUOTE_MINIMAL,
        )
    except pd.errors.EmptyDataError:
        raise DataError("The file is empty: it has no header and no rows.") from None
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
        if m:
            want, rec, saw = map(int, m.groups())
            line = _physical_line(text, rec)
            raise DataError(
                f"Line {line} has {saw} fields but the header has {want} "
                f"({_DELIM_NAMES[sep]}-separated). Check for a stray {_DELIM_NAMES[sep]} or an "
                "unquoted value containing one on that line."
            ) from None
        if "EOF inside string" in msg:
            m = re.search(r"row (\d+)", msg)
            opens = _physical_line(text, int(m.group(1)) + 1) if m else None
            where = f" (the quote opens on line {opens})" if m else ""
            raise DataError(f"A quoted value is never closed{where}: the file ends inside "
                            "quotes. Check for an unbalanced double quote.") from None
        raise DataError(f"The file could not be parsed as CSV: {msg}") from None
    except (ValueError, UnicodeError, MemoryError) as exc:
        raise DataError(f"The file could not be parsed as CSV: {exc}") from None


def _numbers_line(names: list[str]) -> str:
    return ("The first line holds only numbers (" + ", ".join(names[:4])
            + (", …" if len(names) > 4 else "") + ")")


def _header(raw: pd.DataFrame, warnings: list[str]) -> list[str]:
    names = [str(v).strip() for v in raw.iloc[0]]
    seen: dict[str, list[int]] = {}
    for i, nm in enumerate(names, start=1):
        if nm:
            seen.setdefault(nm, []).append(i)
    dups = {k: v for k, v in seen.items() if len(v) > 1}
    if dups:
        if all(_NUMBER.fullmatch(nm) for nm in names if nm):  # 0,0,1.45,…: data, not names
            raise DataError(f"{_numbers_line(names)}: the file seems to have no header "
                            "line. Add one with the column names.")
        parts = "; ".join(f"{k!r} (columns {', '.join(map(str, v))})" for k, v in dups.items())
        raise DataError(f"Duplicate column names in the header: {parts}. "
                        "Rename the columns so each name is unique.")
    out = []
    for i, nm in enumerate(names):
        if not nm:
            nm = f"Unnamed: {i}"
            while nm in seen:
                nm += "_"
            warnings.append(f"Column {i + 1} has no name in the header; it is called {nm!r}.")
        out.append(nm)
    return out


def _to_number(present: pd.Series) -> pd.Series:
    """Numbers from stripped strings (NaN where not a number); fast casts first."""
    for dtype in ("int64", "float64"):
        try:
            return present.astype(dtype)
        except (ValueError, TypeError, OverflowError):
            pass
    return pd.to_numeric(present, errors="coerce")


def _beyond_int64(cells: pd.Series) -> bool:
    """Whether a cell is an integer too large for int64 (a 20-digit ID): as float64 it loses
    its last digits.  2**63 − 1 still fits (a 64-bit hashed query id)."""
    long = cells[cells.str.fullmatch(_LONG_INTEGER)]
    return any(not -2**63 <= int(v) < 2**63 for v in long.unique())


#: A number as a semicolon- or tab-separated (European) export writes it: a decimal comma
#: (``12,5``), perhaps with points grouping thousands (``2.969,95``, ``1.234.567``).
_EXP = r"(?:[eE][+-]?\d+)?"
_DECIMAL_COMMA = r"[+-]?\d*,?\d+" + _EXP
_GROUPED = r"[+-]?[1-9]\d{0,2}(?:\.\d{3})+(?:,\d+)?" + _EXP
#: ... and the cells that can only be read so: a point group before a comma, or two point
#: groups (``1.000`` alone may be one and a thousandth, or a thousand).
_SURELY_GROUPED = r"[+-]?[1-9]\d{0,2}(?:\.\d{3})+,\d+|[+-]?[1-9]\d{0,2}(?:\.\d{3}){2,}"


def _typed(col: pd.Series, sep: str) -> pd.Series:
    s = col.astype("str").str.strip()
    missing = s.isin(MISSING_TOKENS).to_numpy()
    present = s[~missing]
    if present.empty:
        return pd.Series(np.nan, index=col.index, dtype="float64")
    either = f"(?:{_DECIMAL_COMMA})|(?:{_GROUPED})"
    head = present.iloc[:50]
    if (pd.to_numeric(head, errors="coerce").isna().any()
            and (sep == "," or not head.str.fullmatch(either).all())):
        return s.mask(missing)  # text: cheap exit before converting every cell
    if _beyond_int64(present):
        return s.mask(missing)  # 20-digit IDs: as numbers they would round and collide
    num = _to_number(present)
    if num.isna().any() and sep != ",":
        if present.str.fullmatch(_DECIMAL_COMMA).all():
            num = _to_number(present.str.replace(",", ".", regex=False))
        elif (present.str.fullmatch(either).all()
              and present.str.fullmatch(_SURELY_GROUPED).any()):
            # 2.969,95: the points group thousands (a column that reads so in every cell,
            # one at least unambiguously: 0.125 beside 0,5 stays text, not 125)
            num = _to_number(present.str.replace(".", "", regex=False)
                             .str.replace(",", ".", regex=False))
    if num.notna().all() and num.dtype.kind in "iuf":
        if not missing.any():
            return pd.Series(num.to_numpy(), index=col.index)
        out = np.full(len(s), np.nan)
        out[~missing] = num.to_numpy(dtype=np.float64)
        return pd.Series(out, index=col.index)
    return s.mask(missing)


#: What :func:`read_frame` says a one-column file lacks, unless the caller names its own table.
AB_TABLE = "An A/B test file needs at least a treatment and an outcome column."


def read_frame(source: Any, *, nrows: int | None = None,
               needs: str = AB_TABLE) -> tuple[pd.DataFrame, list[str]]:
    """Parse ``source`` into a typed DataFrame plus warnings about how it was read.

    Parameters
    ----------
    source : str, Path, bytes or file object
        A path, raw bytes, or an open binary/text file (Streamlit's ``UploadedFile`` works;
        it is rewound first when seekable).
    nrows : int, optional
        Read only the header and the first ``nrows`` data rows.
    needs : str
        The sentence that ends the message for content without a column separator: which
        columns the caller's table must have (default: an A/B test's).

    Returns
    -------
    frame : DataFrame
        Column names stripped; text cells stripped, :data:`MISSING_TOKENS` (``""``, ``NA``...)
        as ``<NA>``; numeric columns as ``int64`` / ``float64``.
    warnings : list of str

    Raises
    ------
    DataError
        Empty file, header only, binary or non-tabular content, ragged rows (with the line
        number), unclosed quotes, duplicate column names.
    """
    warnings: list[str] = []
    content = _read_source(source)
    text = content if isinstance(content, str) else _decode(content, warnings)
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise DataError("The file is empty: it has no header and no rows.")
    if re.match(r"\s*<(!doctype html|html|\?xml)", text[:200], re.IGNORECASE):
        raise DataError("This is not a CSV file: it looks like an HTML/XML page "
                        "(a download that returned a web page?).")
    if hint := _EXCEL_SEP.match(text):  # Excel's "sep=;" line: it names the separator
        text = text[hint.end():]
        warnings.append(f"The first line ({hint.group(0).strip()!r}) names the separator for "
                        "Excel; it was read as that, not as the header.")
        sep = hint.group(1)
    else:
        sep = _sniff(text, needs)
    raw = _parse(text, sep, None if nrows is None else nrows + 1)
    names = _header(raw, warnings)
    body = raw.iloc[1:]
    if body.empty:
        raise DataError("The file has a header but no data rows.")
    if len(names) > 1 and all(_NUMBER.fullmatch(nm) for nm in names):
        warnings.append(f"{_numbers_line(names)}: it was read as the column names, so that "
                        "row is not in the data. If the file has no header line, add one with "
                        "the column names.")
    frame = pd.DataFrame({nm: _typed(body.iloc[:, i], sep) for i, nm in enumerate(names)})
    empty_unnamed = [nm for nm in names if nm.startswith("Unnamed: ") and frame[nm].isna().all()]
    if empty_unnamed:
        frame = frame.drop(columns=empty_unnamed)
        warnings[:] = [w for w in warnings if not any(repr(nm) in w for nm in empty_unnamed)]
        warnings.append(f"Dropped {len(empty_unnamed)} empty unnamed column(s) "
                        "(a trailing delimiter on each line?).")
    return frame.reset_index(drop=True), warnings


def peek_csv(source: Any, *, nrows: int = 20, needs: str = AB_TABLE) -> pd.DataFrame:
    """Header and first ``nrows`` rows of a CSV, read exactly like :func:`read_frame`.

    A look at a file's columns before mapping treatment and outcome, without parsing the
    whole file (from a notebook; the Data page previews the head of the table its mapping
    step parses anyway, :func:`read_frame`).
    Raises :class:`~core.data.abdata.DataError` on the same problems as the full reader.
    """
    check_positive_int(nrows, "nrows")
    return read_frame(source, nrows=nrows, needs=needs)[0]
