"""Safe exports: CSV that spreadsheet programs will not execute."""

from __future__ import annotations

import pandas as pd

__all__ = ["neutralise", "safe_csv_bytes"]

# A cell starting with one of these is read as a formula by Excel / LibreOffice / Sheets
# (OWASP "CSV injection").  Numbers are never touched: -0.5 stays a number.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """Prefix a text cell that a spreadsheet would run as a formula with a single quote."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def safe_csv_bytes(frame: pd.DataFrame, *, index: bool = False) -> bytes:
    """UTF-8 CSV of ``frame`` with every text cell and header neutralised (see ``neutralise``)."""
    out = frame.copy()
    out.columns = [neutralise(str(c)) for c in out.columns]
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].map(neutralise)
    if index:
        out.index = out.index.map(lambda v: neutralise(str(v)))
    return out.to_csv(index=index).encode("utf-8")
