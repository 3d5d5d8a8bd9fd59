"""Tests for core.data.datasets: the CSV reader, the data directory, the loaders, the generators.

Expected values are written by hand from the tiny CSVs below, or copied from
../shared/data/SOURCES.md (Hillstrom and Information counts), or derived from the
definitions in the paper (§4.2) — never from running the code under test.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.data import (
    DATASETS,
    REGISTRY,
    ABData,
    DataError,
    data_dir_candidates,
    datafiles,
    fetch_data_file,
    find_data_file,
    frame_to_abdata,
    guess_columns,
    load_criteo_head,
    load_dataset,
    load_hillstrom,
    load_information,
    make_paper_simulation,
    make_uplift_world,
    peek_csv,
    read_ab_csv,
    to_csv_bytes,
)

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- corpus
BASIC = (
    "id,treatment,visit,age,channel,notes\n"
    "101,1,1,34,web,first\n"
    "102,0,0,45,phone,second\n"
    "103,1,0,,web,third\n"
    "104,0,1,29,phone,fourth\n"
)


def read(text: str | bytes, **kw) -> ABData:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    kw.setdefault("treatment", "treatment")
    kw.setdefault("outcome", "visit")
    return read_ab_csv(raw, **kw)


# --------------------------------------------------------------------------- parsing
def test_basic_csv_values_features_and_warnings():
    d = read(BASIC, features=["age", "channel"])
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0])
    np.testing.assert_array_equal(d.y, [1, 0, 0, 1])
    assert d.y.dtype == np.int8 and d.t.dtype == np.int8
    assert list(d.X.columns) == ["age", "channel"]
    np.testing.assert_array_equal(d.X["age"].to_numpy(), [34, 45, np.nan, 29])
    assert isinstance(d.X["channel"].dtype, pd.CategoricalDtype)
    assert list(d.X["channel"].cat.categories) == ["phone", "web"]
    assert d.X["channel"].tolist() == ["web", "phone", "web", "phone"]
    assert any("'age'" in w and "1" in w and "Missing" in w for w in d.warnings)
    assert (d.n, d.n_treated, d.n_control) == (4, 2, 2)
    assert d.source_columns["treatment"] == "treatment"
    assert d.source_columns["outcome"] == "visit"


def test_default_features_keep_numeric_and_low_cardinality_drop_text():
    rows = ["id,treatment,visit,age,channel,notes"]
    for i in range(30):  # 30 distinct notes > 20 levels; ids 1..30 all distinct
        rows.append(f"{i + 1},{i % 2},{(i // 2) % 2},{20 + i % 7},{'web' if i % 3 else 'phone'},"
                    f"note number {i}")
    d = read("\n".join(rows) + "\n")
    assert list(d.X.columns) == ["age", "channel"]
    assert isinstance(d.X["channel"].dtype, pd.CategoricalDtype)
    text = " ".join(d.warnings)
    assert "'notes'" in text and "30 distinct" in text
    assert "'id'" in text


def test_semicolon_with_quoted_decimal_commas():
    text = ('treatment;"visit";score;city\n1;1;"1,5";"Paris, FR"\n0;0;"2,25";Lyon\n'
            '1;0;3;Nice\n0;1;"0,5";Lyon\n')
    d = read(text)
    np.testing.assert_allclose(d.X["score"].to_numpy(), [1.5, 2.25, 3.0, 0.5])
    assert d.X["city"].tolist() == ["Paris, FR", "Lyon", "Nice", "Lyon"]


def test_unquoted_decimal_comma_with_semicolons():
    d = read("treatment;visit;x\n1;1;0,5\n0;0;1,25\n1;0;2\n0;1;3,0\n")
    np.testing.assert_allclose(d.X["x"].to_numpy(), [0.5, 1.25, 2.0, 3.0])


def test_decimal_commas_with_points_grouping_thousands():
    # A German Excel export: '2.969,95' read as text with 1,995 distinct values and dropped.
    d = read("treatment;visit;spend;code\n1;1;2.969,95;1.5\n0;0;12,5;2.5\n1;0;1.234;3.5\n"
             "0;1;1.234.567,1;4.5\n")
    np.testing.assert_allclose(d.X["spend"].to_numpy(), [2969.95, 12.5, 1234.0, 1234567.1])
    np.testing.assert_allclose(d.X["code"].to_numpy(), [1.5, 2.5, 3.5, 4.5])  # points: decimals
    mixed = read("treatment;visit;z;w;v\n1;1;1.5;0,5;1.000\n0;0;2,5;0.125;2,5\n"
                 "1;0;3;2,25;3\n0;1;4;1,75;4\n")
    # ambiguous, kept as text: 1.5 beside 2,5; 0.125 beside 0,5 (it read 125); 1.000 beside
    # 2,5 (a thousand, or one?)
    assert mixed.X["z"].tolist() == ["1.5", "2,5", "3", "4"]
    assert mixed.X["w"].tolist() == ["0,5", "0.125", "2,25", "1,75"]
    assert mixed.X["v"].tolist() == ["1.000", "2,5", "3", "4"]


def test_excel_separator_line_and_a_file_without_a_header_line():
    """The fuzz cases: Excel's 'sep=;' first line was reported as a ragged line 2; a file
    without a header line silently lost its first row to the column names."""
    from core.data.csvio import read_frame

    d = read("sep=;\ntreatment;visit;x\n1;1;0,5\n0;0;1,25\n1;0;2\n0;1;3,0\n")
    np.testing.assert_allclose(d.X["x"].to_numpy(), [0.5, 1.25, 2.0, 3.0])
    assert any("('sep=;') names the separator for Excel" in w for w in d.warnings)
    frame, warnings = read_frame(b"1,0,-0.23\n0,1,0.5\n1,1,2\n")
    assert list(frame.columns) == ["1", "0", "-0.23"] and len(frame) == 2
    assert any("The first line holds only numbers (1, 0, -0.23)" in w for w in warnings)
    assert not read_frame(b"a,1,2\n0,1,2\n")[1]  # a name among numbers: a header
    # ... and when that first row repeats a value it is not "duplicate column names"
    with pytest.raises(DataError, match=r"first line holds only numbers \(0, 0, 1\.45\): "
                                        "the file seems to have no header line"):
        read_frame(b"0,0,1.45\n1,0,0.5\n1,1,2\n")
    with pytest.raises(DataError, match="Duplicate column names"):
        read_frame(b"x,x,1\n1,0,0.5\n")


def test_tab_delimited_with_padding():
    d = read("treatment\tvisit\tx\n 1 \t 1 \t 7 \n0\t0\t8\n1\t0\t9\n0\t1\t10\n")
    np.testing.assert_array_equal(d.X["x"].to_numpy(), [7, 8, 9, 10])
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0])


def test_utf8_bom_crlf_and_quoted_newline():
    text = ('\ufefftreatment,visit,comment,x\r\n1,1,"two\r\nlines",1\r\n0,0,plain,2\r\n'
            '1,0,"a ""quote""",3\r\n0,1,x,4')
    d = read(text, features=["comment", "x"])
    assert list(d.X.columns) == ["comment", "x"]  # BOM not glued to the first name
    assert d.X["comment"].tolist()[0].replace("\r\n", "\n") == "two\nlines"
    assert d.X["comment"].tolist()[2] == 'a "quote"'
    np.testing.assert_array_equal(d.X["x"].to_numpy(), [1, 2, 3, 4])


def test_latin1_fallback_is_reported():
    raw = "treatment,visit,city\n1,1,Besançon\n0,0,Orléans\n1,0,Orléans\n0,1,Besançon\n"
    d = read(raw.encode("latin-1"))
    assert sorted(d.X["city"].cat.categories) == ["Besançon", "Orléans"]
    assert any("Latin-1" in w for w in d.warnings)


def test_gzip_content_is_decompressed():
    d = read(gzip.compress(BASIC.encode()), features=["age"])
    assert d.n == 4


@pytest.mark.parametrize("yes,no", [("1", "0"), ("1.0", "0.0"), (" Yes ", "no"),
                                    ("TRUE", "False"), ("y", "N"), ("true", "false")])
def test_binary_codings(yes, no):
    text = f"treatment,visit,x\n{yes},{yes},1\n{no},{no},2\n{yes},{no},3\n{no},{yes},4\n"
    d = read(text)
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0])
    np.testing.assert_array_equal(d.y, [1, 0, 0, 1])


def test_control_treatment_words():
    d = read("group,visit,x\ntreatment,1,1\ncontrol,0,2\ntreatment,0,3\nControl,1,4\n",
             treatment="group")
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0])


def test_multi_arm_mapping_drops_other_rows():
    text = ("arm,visit,x\nA,1,1\nB,0,2\n c ,1,3\nA,0,4\nC,0,5\nB,1,6\nb,0,7\n")
    d = read(text, treatment="arm", treatment_value="c", control_value="a")
    np.testing.assert_array_equal(d.t, [0, 1, 0, 1])
    np.testing.assert_array_equal(d.X["x"].to_numpy(), [1, 3, 4, 5])
    assert any("Dropped 3 rows" in w and "'B'" in w for w in d.warnings)


def test_multi_arm_numeric_codes_match_strings():
    text = "arm,visit,x\n1,1,1\n2,0,2\n3,1,3\n2,1,4\n3,0,5\n1,0,6\n"
    d = read(text, treatment="arm", treatment_value="2", control_value=3.0)
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0])
    np.testing.assert_array_equal(d.y, [0, 1, 1, 0])


def test_treatment_value_alone_with_two_codes_and_lists():
    text = "arm,visit,x\nA,1,1\nB,0,2\nA,0,3\nB,1,4\n"
    np.testing.assert_array_equal(read(text, treatment="arm", treatment_value="B").t, [0, 1, 0, 1])
    text3 = "arm,visit,x\nA,1,1\nB,0,2\nC,0,3\nB,1,4\nC,1,5\n"
    d = read(text3, treatment="arm", treatment_value=["A", "C"], control_value="B")
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0, 1])


def test_missing_treatment_or_outcome_rows_are_dropped_and_counted():
    text = "treatment,visit,x\n1,1,1\n0,,2\n,1,3\n0,0,4\n1,0,5\nNA,0,6\n0,1,7\n"
    d = read(text)
    np.testing.assert_array_equal(d.X["x"].to_numpy(), [1, 4, 5, 7])
    assert any("Dropped 3 rows" in w and "missing" in w for w in d.warnings)


def test_trailing_delimiter_column_is_dropped():
    d = read("treatment,visit,x,\n1,1,1,\n0,0,2,\n1,0,3,\n0,1,4,\n")
    assert list(d.X.columns) == ["x"]


def test_frame_to_abdata_on_a_user_frame():
    df = pd.DataFrame({
        "t": [1, 0, 1, 0, None],
        "y": [True, False, False, True, True],
        "mixed": [1, "a", None, 2.5, "a"],
        "count": pd.array([1, None, 3, 4, 5], dtype="Int64"),
    })
    d = frame_to_abdata(df, treatment="t", outcome="y")
    np.testing.assert_array_equal(d.t, [1, 0, 1, 0])
    np.testing.assert_array_equal(d.y, [1, 0, 0, 1])
    assert d.X["count"].dtype == np.float64  # nullable integers become float with NaN
    assert isinstance(d.X["mixed"].dtype, pd.CategoricalDtype)
    assert "Dropped 1 row with a missing value in 't' or 'y'" in d.warnings[0]


def test_sources_path_str_bytes_binary_and_text_file_objects(tmp_path):
    p = tmp_path / "mine.csv"
    p.write_text(BASIC, encoding="utf-8")

    class Upload(io.BytesIO):  # like Streamlit's UploadedFile
        name = "upload.csv"

    up = Upload(BASIC.encode())
    results = [
        read_ab_csv(p, treatment="treatment", outcome="visit"),
        read_ab_csv(str(p), treatment="treatment", outcome="visit"),
        read_ab_csv(io.StringIO(BASIC), treatment="treatment", outcome="visit"),
        read_ab_csv(up, treatment="treatment", outcome="visit"),
    ]
    assert peek_csv(up, nrows=2).shape == (2, 6)  # peek then read the same upload
    results.append(read_ab_csv(up, treatment="treatment", outcome="visit"))
    assert results[0].name == "mine.csv" and results[3].name == "upload.csv"
    assert len({r.fingerprint() for r in results}) == 1


def test_peek_csv_returns_header_and_first_rows():
    df = peek_csv(BASIC.encode(), nrows=2)
    assert list(df.columns) == ["id", "treatment", "visit", "age", "channel", "notes"]
    assert df["notes"].tolist() == ["first", "second"]
    with pytest.raises(DataError, match="empty"):
        peek_csv(b"")
    with pytest.raises(ValueError, match="nrows must be a positive integer"):
        peek_csv(BASIC.encode(), nrows=0)


# --------------------------------------------------------------------------- refusals
REFUSALS = [
    (b"", {}, r"The file is empty"),
    (b"   \n\n", {}, r"The file is empty"),
    (b"treatment,visit,x\n", {}, r"header but no data rows"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", {}, r"not a CSV file: it looks like a PNG"),
    (b"PK\x03\x04\x14\x00\x00\x00", {}, r"not a CSV file: it looks like a ZIP"),
    (bytes(range(256)) * 4, {}, r"not a CSV file: it contains binary data"),
    (b"just one column\n1\n2\n", {}, r"no comma, semicolon or tab"),
    (b"<!DOCTYPE html><html><body>404</body></html>", {}, r"HTML"),
    (b"treatment,visit,x\n1,1,1\n0,0,2\n1,0,3,9\n", {},
     r"Line 4 has 4 fields but the header has 3"),
    (b'treatment,visit,x\n1,1,"a\nb"\n0,0,2\n1,0,3,9\n', {},
     r"Line 5 has 4 fields but the header has 3"),
    (b'treatment,visit,x\n1,1,1\n0,0,"2\n1,0,3\n', {}, r"quoted value is never closed"),
    (b"treatment,visit,x,visit\n1,1,1,1\n0,0,2,0\n", {},
     r"Duplicate column names.*'visit' \(columns 2, 4\)"),
    (BASIC.encode(), {"treatment": "treat"},
     (r"Column 'treat' \(treatment\) is not in the file\. Did you mean 'treatment'\?.*"
      r"Available columns: id, treatment, visit, age, channel, notes")),
    (BASIC.encode(), {"outcome": "conversion"}, r"Column 'conversion' \(outcome\) is not"),
    (BASIC.encode(), {"outcome": "treatment"}, r"treatment and the outcome are the same"),
    (b"treatment,visit,x\n1,1,1\n1,0,2\n1,0,3\n", {},
     (r"Column 'treatment' has only one arm: every row is 1\. An A/B test needs treated and "
      r"control rows\.")),
    (b"treatment,visit,x\nyes,1,1\nyes,0,2\n", {}, r"only one arm: every row is 'yes'"),
    (b"treatment,visit,x\n1,0,3\n", {}, r"The file has a single data row: an A/B test"),
    (b"treatment,visit,x\nA,1,1\nB,0,2\nC,0,3\nA,0,4\n", {},
     r"Column 'treatment' has 3 codes: 'A' \(2 rows\), .*treatment_value= and control_value="),
    (b"treatment,visit,x\nA,1,1\nB,0,2\n", {}, r"two codes, 'A' and 'B'.*treatment_value="),
    (b"treatment,visit,x\n1,0,1\n0,12.5,2\n1,33,3\n0,0,4\n", {},
     r"Column 'visit' is not a binary outcome: it holds values such as .*12\.5"),
    (b"treatment,visit,x\n1,0,1\n0,0,2\n1,0,3\n0,0,4\n", {},
     r"Column 'visit' has no responders: every row is 0"),
    (b"treatment,visit,x\n1,1,1\n0,1,2\n1,1,3\n0,1,4\n", {},
     r"Column 'visit' has only responders: every row is 1"),
    (b"treatment,visit,x\n1,1,1\n0,0,2\n1,0,3\n", {},
     r"Only 1 control row is left; each arm needs at least 2 rows"),
    (b"treatment,visit,notes\n" + b"".join(f"{i % 2},{i // 2 % 2},free text {i}\n".encode()
                                           for i in range(30)), {},
     r"No feature columns are left"),
    (BASIC.encode(), {"features": ["age", "income"]},
     r"Feature column\(s\) 'income' not in the file"),
    (BASIC.encode(), {"features": ["age", "visit"]}, r"must not include the treatment or outcome"),
    (b"arm,visit,x\nA,1,1\nB,0,2\nA,0,3\nB,1,4\n", {"treatment": "arm", "treatment_value": "Z",
                                                    "control_value": "A"},
     r"treatment_value='Z' matches no row of column 'arm'"),
    (b"arm,visit,x\nA,1,1\nB,0,2\nC,0,3\nB,1,4\n", {"treatment": "arm", "treatment_value": "A"},
     r"other arm is ambiguous"),
]


@pytest.mark.parametrize("raw,kw,message", REFUSALS)
def test_refusals_are_data_errors_with_plain_messages(raw, kw, message):
    with pytest.raises(DataError, match=message):
        read(raw, **kw)


@pytest.mark.parametrize("raw", [
    b'"', b",,,\n,,,\n", b"a,b\n\xff\xfe\x00\x01", b"\x1f\x8b\x08\x00garbage",
    b"\xff\xfet\x00,\x00", b"treatment,visit\n1,1\n0,0\n1,0\n0,1\n", b";;\n;;\n",
    b"treatment,visit,x\n" + b"1,1,1\n" * 3 + b'0,0,"\n', "é,ü\n1,2\n".encode("utf-16"),
    b"PK\x05\x06" + b"\x00" * 18, b"\t\t\n\t\t\n",
])
def test_odd_inputs_never_leak_raw_errors(raw):
    try:
        read_ab_csv(raw, treatment="treatment", outcome="visit")
    except DataError:
        pass  # any other exception type fails the test


def test_missing_file_and_bad_source_type(tmp_path):
    with pytest.raises(DataError, match="File not found"):
        read_ab_csv(tmp_path / "nope.csv", treatment="t", outcome="y")
    with pytest.raises(TypeError, match="source must be a path"):
        read_ab_csv(12, treatment="t", outcome="y")


def test_a_one_column_file_is_told_what_its_table_needs():
    """The reader is shared: an A/B upload hears about treatment and outcome, another table
    (label ranking, LETOR as CSV) about its own columns."""
    from core.data.csvio import AB_TABLE, peek_csv, read_frame

    content = b"just one column\n1\n2\n"
    for read in (read_frame, peek_csv):
        with pytest.raises(DataError) as err:
            read(content)
        assert str(err.value).endswith(AB_TABLE)
        with pytest.raises(DataError) as err:
            read(content, needs="A ranking file needs a query column.")
        assert "treatment" not in str(err.value)
        assert str(err.value).endswith("A ranking file needs a query column.")


def test_two_arms_with_one_control_name_are_read_without_asking():
    """control / variant: the arm that reads as control (guess_control) is 0, the other 1;
    two codes that say nothing (A / B) still need the analyst."""
    from core.data import arms_readable

    content = b"group,converted,age\ncontrol,0,31\nvariant,1,40\nvariant,0,25\ncontrol,1,52\n"
    data = read_ab_csv(content, treatment="group", outcome="converted")
    np.testing.assert_array_equal(data.t, [0, 1, 1, 0])
    assert arms_readable(["variant", "control"]) and arms_readable(["No E-Mail", "E-Mail"])
    assert arms_readable([0, 1]) and arms_readable(["yes", "no"])
    assert not arms_readable(["A", "B"]) and not arms_readable(["control", "holdout"])


def test_an_outcome_that_copies_the_treatment_is_flagged():
    rows = [f"{i % 2},{i % 2},{i % 30}" for i in range(40)]
    data = read_ab_csv(("treatment,converted,age\n" + "\n".join(rows)).encode(),
                       treatment="treatment", outcome="converted")
    assert any("'converted' equals the treatment 'treatment' in every row" in w
               for w in data.warnings)
    flipped = [f"{i % 2},{1 - i % 2},{i % 30}" for i in range(40)]
    data = read_ab_csv(("treatment,converted,age\n" + "\n".join(flipped)).encode(),
                       treatment="treatment", outcome="converted")
    assert any("equals the treatment 'treatment' reversed" in w for w in data.warnings)
    honest = [f"{i % 2},{int(i % 3 == 0)},{i % 30}" for i in range(40)]
    data = read_ab_csv(("treatment,converted,age\n" + "\n".join(honest)).encode(),
                       treatment="treatment", outcome="converted")
    assert not any("equals the treatment" in w for w in data.warnings)


def test_a_constant_feature_is_kept_with_a_note():
    rows = [f"{i % 2},{int(i % 3 == 0)},{i % 30},FR,7" for i in range(40)]
    data = read_ab_csv(("treatment,converted,age,country,const_num\n"
                        + "\n".join(rows)).encode(), treatment="treatment", outcome="converted")
    assert list(data.X.columns) == ["age", "country", "const_num"]
    assert ("Column(s) 'country', 'const_num' hold one value in every row: kept as features, "
            "but they cannot help any model.") in data.warnings


# --------------------------------------------------------------------------- guess_columns
@pytest.mark.parametrize("columns,expected", [
    (["recency", "history", "segment", "visit", "conversion", "spend"], ("segment", "visit")),
    (["f0", "f1", "treatment", "conversion", "visit", "exposure"], ("treatment", "visit")),
    (["TREATMENT", "PURCHASE", "UNIQUE_ID", "AGE"], ("TREATMENT", "PURCHASE")),
    (["id", "call", "name", "ethnicity"], (None, "call")),
    (["user", "is_treatment", "converted"], ("is_treatment", "converted")),
    (["treatmentGroup", "clickedLink", "age"], ("treatmentGroup", "clickedLink")),
    (["T", "Y", "x"], ("T", "Y")),
    (["a", "b"], (None, None)),
    # amounts: a revenue outcome is found, after any 0/1 outcome
    (["customer_id", "age", "offer", "spend"], ("offer", "spend")),
    (["group", "total_revenue", "tenure"], ("group", "total_revenue")),
    (["arm", "revenue", "converted"], ("arm", "converted")),
])
def test_guess_columns(columns, expected):
    got = guess_columns(columns)
    assert (got["treatment"], got["outcome"]) == expected


def test_guess_columns_accepts_a_frame():
    assert guess_columns(pd.DataFrame(columns=["arm", "response"])) == {
        "treatment": "arm", "outcome": "response"}


# --------------------------------------------------------------------------- ABData
def test_abdata_subset_numeric_columns_and_validation():
    w = make_uplift_world(200, random_state=3)
    sub = w.subset(w.t == 1)
    assert sub.n == w.n_treated and sub.n_control == 0
    np.testing.assert_array_equal(sub.tau, w.tau[w.t == 1])
    np.testing.assert_array_equal(sub.extra["p0"], w.extra["p0"][w.t == 1])
    assert sub.X.index.equals(pd.RangeIndex(sub.n))
    assert w.subset([0, 5]).X.iloc[1].equals(w.X.iloc[5])
    assert w.numeric_columns() == ["recency", "history", "newbie", "age", "opens_90d"]
    with_nan = ABData(pd.DataFrame({"a": [1.0, np.nan], "b": [1, 2]}), [0, 1], [1, 0])
    assert with_nan.numeric_columns() == ["b"]
    with pytest.raises(ValueError, match="y must hold only 0 and 1"):
        ABData(pd.DataFrame({"a": [1, 2]}), [0, 2], [1, 0])
    with pytest.raises(ValueError, match="t must have one value per row of X"):
        ABData(pd.DataFrame({"a": [1, 2]}), [0, 1], [1, 0, 1])
    with pytest.raises(ValueError, match=r"scores\['s'\] must have length 2"):
        ABData(pd.DataFrame({"a": [1, 2]}), [0, 1], [1, 0], scores={"s": [1.0]})


def test_fingerprint_is_content_based_and_stable_across_processes():
    w = make_uplift_world(500, random_state=7)
    fp = w.fingerprint()
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert make_uplift_world(500, random_state=7).fingerprint() == fp
    renamed = ABData(w.X.rename(columns={"age": "years"}), w.y, w.t)
    changed_x = ABData(w.X.assign(age=w.X["age"].where(w.X.index != 0, 99)), w.y, w.t)
    flipped_t = ABData(w.X, w.y, 1 - w.t)
    flipped_y = ABData(w.X, 1 - w.y, w.t)
    assert len({fp, renamed.fingerprint(), changed_x.fingerprint(), flipped_t.fingerprint(),
                flipped_y.fingerprint()}) == 5
    assert ABData(w.X, w.y, w.t, name="other").fingerprint() == fp  # name is not content
    code = ("from core.data import make_uplift_world;"
            "print(make_uplift_world(500, random_state=7).fingerprint())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": "123"}, check=True)
    assert out.stdout.strip() == fp


def test_fingerprint_is_kept_until_a_part_is_replaced():
    w = make_uplift_world(500, random_state=7)
    first = w.fingerprint()
    assert w.fingerprint() is first  # kept: not hashed again
    w.y = 1 - w.y  # another array: hashed again, as a fresh object would be
    assert w.fingerprint() == ABData(w.X, w.y, w.t).fingerprint() != first
    w.X = w.X.assign(age=0.0)
    assert w.fingerprint() == ABData(w.X, w.y, w.t).fingerprint()
    assert dataclasses.replace(w, name="copy").fingerprint() == w.fingerprint()


def test_csv_round_trip_of_the_world():
    w = make_uplift_world(1_000, random_state=11)
    raw = to_csv_bytes(w)
    header = raw.split(b"\n", 1)[0].decode()
    assert header == "recency,history,channel,newbie,zip_type,age,opens_90d,treatment,outcome"
    back = read_ab_csv(raw, treatment="treatment", outcome="outcome")
    np.testing.assert_array_equal(back.y, w.y)
    np.testing.assert_array_equal(back.t, w.t)
    pd.testing.assert_frame_equal(back.X.astype({c: str for c in ("channel", "zip_type")}),
                                  w.X.astype({c: str for c in ("channel", "zip_type")}))
    assert back.fingerprint() == w.fingerprint()
    assert back.warnings == []


def test_to_csv_bytes_avoids_name_clashes():
    d = ABData(pd.DataFrame({"treatment": [1, 2]}), [0, 1], [1, 0])
    assert to_csv_bytes(d).split(b"\n")[0] == b"treatment,treatment_ab,outcome"


# --------------------------------------------------------------------------- data directory
def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_data_dir_candidates_order(monkeypatch, tmp_path):
    monkeypatch.setenv("UPRANK_DATA_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("UPRANK_CACHE_DIR", str(tmp_path / "cache"))
    got = data_dir_candidates()
    assert got[:2] == [tmp_path / "mine", tmp_path / "cache"]
    shared = ROOT.parent / "shared" / "data"
    assert got[2:] == ([shared] if shared.is_dir() else [])
    monkeypatch.delenv("UPRANK_DATA_DIR")
    monkeypatch.delenv("UPRANK_CACHE_DIR")
    import platformdirs

    assert data_dir_candidates()[0] == Path(platformdirs.user_cache_dir("uprank"))


def test_find_data_file(monkeypatch, tmp_path):
    monkeypatch.setenv("UPRANK_DATA_DIR", str(tmp_path))
    assert find_data_file("toy.csv") is None
    (tmp_path / "toy.csv").write_text("a,b\n")
    assert find_data_file("toy.csv") == tmp_path / "toy.csv"


@pytest.fixture
def toy_entry(monkeypatch, tmp_path):
    """A registry entry 'toy' whose publisher file is a local file:// URL."""
    content = BASIC.encode()
    published = tmp_path / "publisher" / "toy.csv"
    published.parent.mkdir()
    published.write_bytes(content)
    entry = {"filename": "toy.csv", "sha256": _sha(content), "title": "Toy data",
             "download": {"url": published.as_uri(), "sha256": _sha(content), "format": "csv",
                          "save_as": "toy.csv"}}
    monkeypatch.setitem(REGISTRY, "toy", entry)
    monkeypatch.delenv("UPRANK_DATA_DIR", raising=False)
    return entry, content


def test_download_verifies_and_writes_atomically(toy_entry, tmp_path):
    entry, content = toy_entry
    path = fetch_data_file("toy")
    assert path == datafiles.cache_dir() / "toy.csv"
    assert path.read_bytes() == content
    assert not list(path.parent.glob("*.part"))
    entry["download"]["url"] = (tmp_path / "gone.csv").as_uri()  # second call: no download
    assert fetch_data_file("toy") == path
    assert read_ab_csv(path, treatment="treatment", outcome="visit").n == 4


def test_download_with_wrong_checksum_is_deleted(toy_entry):
    entry, _ = toy_entry
    entry["download"]["sha256"] = "0" * 64
    with pytest.raises(DataError, match="does not match the published checksum.*deleted"):
        fetch_data_file("toy")
    assert not any(datafiles.cache_dir().iterdir())


def test_offline_download_error_says_what_and_where(toy_entry, tmp_path):
    entry, _ = toy_entry
    url = (tmp_path / "no" / "such" / "file.csv").as_uri()
    entry["download"]["url"] = url
    with pytest.raises(DataError) as err:
        fetch_data_file("toy")
    msg = str(err.value)
    for part in ("Download failed", "'toy.csv'", url, "UPRANK_DATA_DIR",
                 str(datafiles.cache_dir())):
        assert part in msg
    with pytest.raises(DataError, match=r"needs the file 'toy.csv'.*UPRANK_DATA_DIR"):
        fetch_data_file("toy", allow_download=False)


def test_local_file_with_wrong_checksum_is_refused(toy_entry, monkeypatch, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "toy.csv").write_bytes(b"treatment,visit\n1,1\n")
    monkeypatch.setenv("UPRANK_DATA_DIR", str(mine))
    with pytest.raises(DataError, match="does not match the published checksum"):
        fetch_data_file("toy")
    with pytest.raises(DataError, match="does not match"):
        fetch_data_file("toy", data_dir=mine, allow_download=False)


def test_explicit_data_dir_looks_only_there(toy_entry, tmp_path):
    _, content = toy_entry
    mine = tmp_path / "elsewhere"
    mine.mkdir()
    (mine / "toy.csv").write_bytes(content)
    assert fetch_data_file("toy", data_dir=mine) == mine / "toy.csv"
    with pytest.raises(DataError, match=str(tmp_path / "empty")):
        fetch_data_file("toy", data_dir=tmp_path / "empty", allow_download=False)
    with pytest.raises(ValueError, match="key must be one of"):
        fetch_data_file("nope")


def test_rda_download_needs_rdata(monkeypatch, toy_entry):
    entry, _ = toy_entry
    entry["download"].update(format="rda", rda_object="toy", save_as="toy.from_rda.csv")
    monkeypatch.setattr(datafiles, "_import_rdata", lambda: None)
    with pytest.raises(DataError, match=r"pip install rdata.*UPRANK_DATA_DIR"):
        fetch_data_file("toy")


def test_rda_download_is_converted_with_rdata(monkeypatch, toy_entry):
    entry, _ = toy_entry
    entry["download"].update(format="rda", rda_object="toy", save_as="toy.from_rda.csv")
    frame = pd.DataFrame({"TREATMENT": [1.0, 0.0, 1.0, 0.0], "PURCHASE": [1.0, 0.0, 0.0, 1.0],
                          "X": [0.5, 1.5, 2.5, 3.25]})

    class FakeRdata:
        @staticmethod
        def read_rda(path):
            assert Path(path).read_bytes() == BASIC.encode()  # the verified download
            return {"toy": frame}

    monkeypatch.setattr(datafiles, "_import_rdata", lambda: FakeRdata)
    path = fetch_data_file("toy")
    assert path.name == "toy.from_rda.csv"
    assert path.read_text() == "TREATMENT,PURCHASE,X\n1,1,0.5\n0,0,1.5\n1,0,2.5\n0,1,3.25\n"
    assert fetch_data_file("toy", allow_download=False) == path


def test_registry_matches_sources_md():
    reg = json.loads((ROOT / "data" / "registry.json").read_text())
    expected = {  # SHA-256 values from ../shared/data/SOURCES.md
        "hillstrom": "ff9e59285e9dc3f5fa3e0975419e6631ea5bdccd65d818991473d2367e02979c",
        "information_train": "2536becaafdb50d22aef4c218ef3e56723b2e731c668f4395f8114b237eebdf3",
        "information_valid": "45eb8d5a0483b8b06562e45e37ac27047546305f68cc6824505ab47caeb58b84",
        "criteo_head": "3177ba5085da27f2092bae08f6318e3908a23e38965040432dd8889b688a71a7",
    }
    assert {k: reg[k]["sha256"] for k in expected} == expected
    assert reg["hillstrom"]["download"]["url"] == (
        "http://www.minethatdata.com/Kevin_Hillstrom_MineThatData_E-MailAnalytics_"
        "DataMiningChallenge_2008.03.20.csv")
    commit = "b3a826a6f8a38aa8c664156cef4f16edae196ec3"
    assert reg["information_train"]["download"]["url"].endswith(f"{commit}/data/train.rda")
    assert reg["information_valid"]["download"]["url"].endswith(f"{commit}/data/valid.rda")
    assert reg["information_train"]["download"]["sha256"].startswith("ed6b6412a9a3")
    assert reg["information_valid"]["download"]["sha256"].startswith("4c8452285ac1")
    for entry in reg.values():
        assert entry["citation"] and entry["licence"]


# --------------------------------------------------------------------------- public data
def test_hillstrom_womens_visit_matches_sources(shared_data):
    d = load_hillstrom(data_dir=shared_data, allow_download=False)
    assert (d.n, d.n_treated, d.n_control) == (42_693, 21_387, 21_306)
    assert round(d.y[d.t == 1].mean(), 3) == 0.151
    assert round(d.y[d.t == 0].mean(), 3) == 0.106
    assert list(d.X.columns) == ["recency", "history_segment", "history", "mens", "womens",
                                 "zip_code", "newbie", "channel"]
    for col in ("history_segment", "zip_code", "channel"):
        assert isinstance(d.X[col].dtype, pd.CategoricalDtype)
    assert d.extra["spend"].shape == (d.n,)
    assert any("21,307" in w for w in d.warnings)  # the Mens E-Mail rows


def test_hillstrom_other_arms_and_outcomes(shared_data):
    mens = load_hillstrom("mens", "visit", data_dir=shared_data, allow_download=False)
    assert (mens.n_treated, mens.n_control) == (21_307, 21_306)
    assert round(mens.y[mens.t == 1].mean(), 3) == 0.183
    conv = load_hillstrom("mens", "conversion", data_dir=shared_data, allow_download=False)
    assert round(conv.y[conv.t == 1].mean(), 4) == 0.0125
    assert round(conv.y[conv.t == 0].mean(), 4) == 0.0057
    anyarm = load_hillstrom("any", data_dir=shared_data, allow_download=False)
    assert (anyarm.n_treated, anyarm.n_control) == (21_387 + 21_307, 21_306)
    spend = load_hillstrom("womens", "spend>0", data_dir=shared_data, allow_download=False)
    np.testing.assert_array_equal(spend.y, (spend.extra["spend"] > 0).astype(np.int8))
    # the same rows as conversion (why the Data page lists only conversion)
    womens = load_hillstrom("womens", "conversion", data_dir=shared_data, allow_download=False)
    np.testing.assert_array_equal(spend.y, womens.y)
    raw = pd.read_csv(shared_data / "hillstrom.csv", usecols=["conversion", "spend"])
    assert ((raw["spend"] > 0) == (raw["conversion"] == 1)).all() and raw["conversion"].sum() \
        == 578
    with pytest.raises(ValueError,
                       match=r"arm must be one of 'womens', 'mens', 'any', 'all'; got 'kids'"):
        load_hillstrom("kids")


def test_hillstrom_loader_returns_fresh_objects(shared_data):
    a = load_hillstrom(data_dir=shared_data, allow_download=False)
    a.X.loc[0, "recency"] = -1
    a.y[:] = 0
    b = load_hillstrom(data_dir=shared_data, allow_download=False)
    assert b.X.loc[0, "recency"] != -1 and b.y.sum() > 0


def test_generic_reader_on_raw_hillstrom(shared_data):
    d = read_ab_csv(shared_data / "hillstrom.csv", treatment="segment", outcome="visit",
                    treatment_value="womens e-mail", control_value=" No E-Mail ")
    assert (d.n_treated, d.n_control) == (21_387, 21_306)
    assert {"spend", "conversion"} <= set(d.X.columns)  # generic reader keeps other columns


def test_information_splits_match_sources(shared_data):
    tr = load_information("train", data_dir=shared_data, allow_download=False)
    assert (tr.n, tr.n_treated, tr.n_control) == (10_000, 4_972, 5_028)
    assert round(tr.y[tr.t == 1].mean(), 4) == 0.2037
    assert round(tr.y[tr.t == 0].mean(), 4) == 0.1955
    assert tr.X.shape[1] == 67 and "UNIQUE_ID" not in tr.X.columns
    va = load_information("valid", data_dir=shared_data, allow_download=False)
    assert (va.n_treated, va.n_control) == (5_060, 4_940)
    assert round(va.y[va.t == 1].mean(), 4) == 0.1990
    assert round(va.y[va.t == 0].mean(), 4) == 0.2036
    assert list(va.X.columns) == list(tr.X.columns)  # selected by name despite the order
    both = load_information("both", data_dir=shared_data, allow_download=False)
    assert both.n == 20_000 and both.n_treated == 4_972 + 5_060
    ids = both.extra["UNIQUE_ID"]
    assert (ids[both.extra["split"] == "train"].min(), ids[both.extra["split"] == "train"].max()) \
        == (1, 10_000)
    assert (ids[both.extra["split"] == "valid"].min(), ids[both.extra["split"] == "valid"].max()) \
        == (66_668, 76_667)


def test_criteo_head_and_resume_names(shared_data):
    c = load_criteo_head(data_dir=shared_data)
    assert (c.n, c.n_treated, int(c.y.sum())) == (1_000, 863, 35)
    assert list(c.X.columns) == [f"f{i}" for i in range(12)]
    assert int(load_criteo_head("conversion", data_dir=shared_data).y.sum()) == 2
    r = read_ab_csv(shared_data / "resume_names.csv", treatment="ethnicity", outcome="call",
                    treatment_value="afam", control_value="cauc")
    assert (r.n_treated, r.n_control) == (2_435, 2_435)
    assert (int(r.y[r.t == 1].sum()), int(r.y[r.t == 0].sum())) == (157, 235)
    assert "id" not in r.X.columns and "name" not in r.X.columns


def test_shared_files_found_and_verified_through_candidates(shared_data, monkeypatch):
    monkeypatch.delenv("UPRANK_DATA_DIR", raising=False)
    assert fetch_data_file("hillstrom", allow_download=False) == shared_data / "hillstrom.csv"


# --------------------------------------------------------------------------- generators
@pytest.mark.parametrize("scenario,n_t,n_c", [("balanced", 5_000, 5_000),
                                              ("more_treated", 9_000, 1_000),
                                              ("more_control", 1_000, 9_000)])
def test_paper_simulation_follows_section_4_2(scenario, n_t, n_c):
    d = make_paper_simulation(10_000, scenario=scenario, random_state=1)
    assert (d.n_treated, d.n_control) == (n_t, n_c)
    assert d.y[d.t == 1].sum() == round(0.07 * n_t)
    assert d.y[d.t == 0].sum() == round(0.05 * n_c)
    s = d.scores["simulated score"]
    high = d.t == d.y  # TR and CNR
    assert s[high].min() >= 0.2 and s[high].max() <= 1.0
    assert s[~high].min() >= 0.0 and s[~high].max() <= 0.8
    assert stats.kstest(s[high], stats.uniform(0.2, 0.8).cdf).pvalue > 1e-3
    assert stats.kstest(s[~high], stats.uniform(0.0, 0.8).cdf).pvalue > 1e-3
    assert d.tau is None and list(d.X.columns) == ["random ranking"]


def test_paper_simulation_is_seeded_and_validated():
    a = make_paper_simulation(2_000, random_state=5)
    assert a.fingerprint() == make_paper_simulation(2_000, random_state=5).fingerprint()
    assert a.fingerprint() != make_paper_simulation(2_000, random_state=6).fingerprint()
    with pytest.raises(ValueError, match="scenario must be one of 'balanced'.*got 'even'"):
        make_paper_simulation(scenario="even")
    with pytest.raises(ValueError, match="n must be an integer >= 4; got 2"):
        make_paper_simulation(2)


def test_uplift_world_is_a_randomised_test_with_known_effect():
    w = make_uplift_world(20_000, random_state=0)
    assert w.n == 20_000
    np.testing.assert_allclose(w.tau, w.extra["p1"] - w.extra["p0"])
    np.testing.assert_array_equal(w.scores["true effect τ(x)"], w.tau)
    assert ((w.extra["p0"] > 0) & (w.extra["p0"] < 1)).all()
    # Bernoulli(0.5) assignment: within 4 standard deviations of n/2.
    assert abs(w.n_treated - 10_000) < 4 * np.sqrt(20_000 * 0.25)
    # Responses follow p_t(x): observed rates agree with the mean probabilities.
    for arm, p in ((1, w.extra["p1"]), (0, w.extra["p0"])):
        m = w.t == arm
        se = np.sqrt(p[m].mean() * (1 - p[m].mean()) / m.sum())
        assert abs(w.y[m].mean() - p[m].mean()) < 4 * se
    # Heterogeneity: persuadables, sure things (τ = 0) and sleeping dogs (τ < 0).
    assert 0.01 < (w.tau < 0).mean() < 0.2 and (w.tau == 0).any() and w.tau.max() > 0.1
    # The oracle ranking separates high from low observed uplift.
    order = np.argsort(-w.tau)
    top, bottom = order[:4_000], order[-4_000:]

    def uplift(idx):
        return w.y[idx][w.t[idx] == 1].mean() - w.y[idx][w.t[idx] == 0].mean()

    assert uplift(top) > uplift(bottom) + 0.05
    assert isinstance(w.X["channel"].dtype, pd.CategoricalDtype)
    assert w.fingerprint() == make_uplift_world(20_000, random_state=0).fingerprint()
    assert w.fingerprint() != make_uplift_world(20_000, random_state=1).fingerprint()


def test_dataset_registry_and_dispatcher():
    assert list(DATASETS) == ["world", "hillstrom", "hillstrom_arms", "multiarm_world",
                             "criteo_like", "criteo", "information", "paper_simulation"]
    for spec in DATASETS.values():
        assert spec.label and callable(spec.loader)
    a, b = load_dataset("world", n=1_000), load_dataset("world", n=1_000)
    assert a is not b and a.fingerprint() == b.fingerprint() and a.n == 1_000
    sim = load_dataset("paper_simulation", scenario="more_control", n=1_000)
    assert (sim.n_treated, sim.n_control) == (100, 900)
    with pytest.raises(ValueError, match="key must be one of 'world'.*got 'criteo_full'"):
        load_dataset("criteo_full")
    with pytest.raises(ValueError, match=r"load_dataset\('world'\) options must be among "
                                         r"n, random_state; got arm"):
        load_dataset("world", arm="womens")


def test_dispatcher_passes_file_options(shared_data):
    h = load_dataset("hillstrom", arm="mens", data_dir=shared_data, allow_download=False)
    assert h.n_treated == 21_307


def test_text_file_object_with_wrong_encoding(tmp_path):
    p = tmp_path / "latin.csv"
    p.write_bytes("treatment,visit,city\n1,1,Orléans\n".encode("latin-1"))
    with open(p, encoding="utf-8") as fh, pytest.raises(DataError, match="open it in binary"):
        read_ab_csv(fh, treatment="treatment", outcome="visit")


def test_arm_codes_lists_each_arm_once_most_frequent_first():
    import pandas as pd

    from core.data import arm_codes

    col = pd.Series([" Mens E-Mail", "No E-Mail", "mens e-mail", "Womens", "No E-Mail", None,
                     "No E-Mail"])
    assert arm_codes(col) == ["No E-Mail", "Mens E-Mail", "Womens"]
    codes = arm_codes(pd.Series([2, 0, 1, 1]))
    assert codes[0] == 1 and sorted(codes) == [0, 1, 2]


@pytest.mark.parametrize("mapping", [
    {"treatment": "arm", "outcome": "spent", "all_arms": True, "control_value": "none",
     "outcome_kind": "continuous"},
    {"treatment": "arm", "outcome": "bought", "treatment_value": "mail",
     "control_value": "none"},
    {"treatment": "arm", "outcome": "bought", "all_arms": True, "control_value": "none"},
])
def test_map_ab_frame_maps_a_parsed_table_and_leaves_it_as_it_was(mapping):
    """The mapping half of read_ab_csv on a table read_frame parsed: arms and outcomes as
    written in the file (checked against the generating arrays), the reader's warning first,
    and the parsed table unchanged, so an app can map it again."""
    from core.data import map_ab_frame
    from core.data.csvio import read_frame

    rng = np.random.default_rng(5)
    arms = rng.choice(["none", "mail", "sms"], 300)
    spent = np.round(rng.exponential(1, 300) * (rng.random(300) < .3), 2)
    rows = "\n".join(f"{a};{'yes' if s > 0 else 'no'};{s:.2f};{x:.3f};"
                     for a, s, x in zip(arms, spent, rng.normal(size=300)))
    content = ("sep=;\narm;bought;spent;age;empty\n" + rows + "\n").encode()
    frame, warnings = read_frame(content)
    before = frame.copy(deep=True)
    data = map_ab_frame(frame, warnings=warnings, name="x.csv", **mapping)
    pd.testing.assert_frame_equal(frame, before)
    assert data.warnings[0] == warnings[0] and "sep=;" in warnings[0]
    kept = np.isin(arms, ["mail", "none"]) if "treatment_value" in mapping else np.ones(300, bool)
    np.testing.assert_array_equal(data.t, arms[kept] != "none")  # any treatment vs control
    np.testing.assert_array_equal(data.y, spent[kept] > 0)  # bought = yes, or spent > 0
    if mapping.get("all_arms"):  # each row in its own arm, not only treated or not
        np.testing.assert_array_equal(np.asarray(data.multiarm.arms)[data.multiarm.t], arms)
    if mapping.get("outcome_kind") == "continuous":
        np.testing.assert_allclose(data.multiarm.y, spent)  # the amounts as written
    assert map_ab_frame(frame, warnings=warnings, name="x.csv",
                        **mapping).fingerprint() == data.fingerprint()
