"""core.runs.export: CSV cells a spreadsheet would execute are neutralised, numbers untouched."""

from __future__ import annotations

import io

import pandas as pd

from core.runs.export import neutralise, safe_csv_bytes


def test_formula_cells_are_prefixed_and_numbers_kept():
    df = pd.DataFrame({"=name": ["=HYPERLINK(1)", "+1", "-x", "@sum", "plain"],
                       "value": [-0.5, 1.0, 2.0, 3.0, 4.0]})
    back = pd.read_csv(io.BytesIO(safe_csv_bytes(df)))
    assert list(back.columns) == ["'=name", "value"]
    assert back["'=name"].tolist() == ["'=HYPERLINK(1)", "'+1", "'-x", "'@sum", "plain"]
    assert back["value"].tolist() == [-0.5, 1.0, 2.0, 3.0, 4.0]
    assert neutralise(-3) == -3 and neutralise("\tcmd") == "'\tcmd"


def test_index_is_neutralised_when_written():
    df = pd.DataFrame({"a": [1]}, index=["=evil"])
    assert safe_csv_bytes(df, index=True).decode().splitlines()[1].startswith("'=evil")
