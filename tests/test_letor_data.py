"""Learning-to-rank data (core.data.letor): the LETOR reader and its error messages, tables,
MQ2008 fold 1 against the counts published in ../shared/data/SOURCES.md, the S1..S5 route and
its download (from file:// URLs, never the network), the synthetic world and query splits."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from core.data import (
    DataError,
    LTRData,
    grade_warnings,
    load_mq2008,
    make_ltr_world,
    mq2008_folds_available,
    read_letor,
    read_ltr_table,
    split_queries,
)
from core.data import letor as letor_module
from core.data.datafiles import cache_dir

ROOT = Path(__file__).resolve().parents[1]
FOLD1 = "mq2008_fold1"

GOOD = (b"2 qid:10 1:0.5 3:1.5 # docid = GX008-86-4444840 inc = 1 prob = 0.086\n"
        b"0 qid:10 2:1 # docid = GX037-06-11625428 inc = 0.02 prob = 0.01\n"
        b"1 qid:42 1:1 2:2 3:3 # docid = D3\n"
        b"0 qid:42 3:-1 # docid = D4\n")


def _lines(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


# ============================================================================ reader: good
def test_reads_features_labels_queries_and_docids():
    d = read_letor(GOOD, name="tiny")
    assert isinstance(d, LTRData) and d.name == "tiny"
    np.testing.assert_array_equal(d.X, [[0.5, 0, 1.5], [0, 1, 0], [1, 2, 3], [0, 0, -1]])
    assert d.X.dtype == np.float64 and isinstance(d.X, np.ndarray)
    np.testing.assert_array_equal(d.relevance, [2, 0, 1, 0])
    assert d.qid.dtype == np.int64 and d.qid.tolist() == [10, 10, 42, 42]
    assert d.ids.tolist() == ["GX008-86-4444840", "GX037-06-11625428", "D3", "D4"]
    assert d.feature_names == ["f1", "f2", "f3"]
    assert (d.n_rows, d.n_features, d.n_queries) == (4, 3, 2)
    assert d.truth is None


def test_gzip_is_detected_by_magic_bytes_and_gives_identical_data(tmp_path):
    plain = read_letor(GOOD)
    packed = gzip.compress(GOOD)
    misnamed = tmp_path / "train.txt"  # gzip content, plain-text name
    misnamed.write_bytes(packed)
    for source in (packed, misnamed, io.BytesIO(packed)):
        d = read_letor(source)
        np.testing.assert_array_equal(d.X, plain.X)
        np.testing.assert_array_equal(d.relevance, plain.relevance)
        np.testing.assert_array_equal(d.qid, plain.qid)
        np.testing.assert_array_equal(d.ids, plain.ids)
        assert d.fingerprint() == plain.fingerprint()
    assert read_letor(misnamed).name == "train.txt"


def test_uploaded_file_like_object_is_rewound():
    class Upload(io.BytesIO):
        name = "upload.txt"
        size = len(GOOD)

    up = Upload(GOOD)
    up.read()
    d = read_letor(up)
    assert d.n_rows == 4 and d.name == "upload.txt"


def test_comments_without_docid_and_files_without_comments():
    d = read_letor(_lines("1 qid:1 1:1 #  first doc ", "0 qid:1 1:2 # second", "0 qid:1 1:3"))
    assert d.ids.tolist() == ["first doc", "second", "line 3"]
    assert read_letor(_lines("1 qid:1 1:1", "0 qid:1 1:2")).ids is None
    # comment-only and blank lines are skipped
    d = read_letor(_lines("# header comment", "", "1 qid:1 1:1", "   ", "0 qid:1 1:2"))
    assert d.n_rows == 2 and d.ids is None


def test_non_contiguous_and_interleaved_query_ids_keep_file_order():
    d = read_letor(_lines("1 qid:42 1:1", "0 qid:7 1:2", "2 qid:10 1:3", "0 qid:42 1:4",
                          "1 qid:7 1:5", "0 qid:10 1:6", "0 qid:42 1:7"))
    assert d.qid.tolist() == [42, 7, 10, 42, 7, 10, 42]
    np.testing.assert_array_equal(d.X[:, 0], [1, 2, 3, 4, 5, 6, 7])
    table = d.query_table()
    assert table["qid"].tolist() == [42, 7, 10]  # order of first appearance
    assert table["n_docs"].tolist() == [3, 2, 2]
    assert table["n_relevant"].tolist() == [1, 1, 1]
    assert table["max_grade"].tolist() == [1.0, 1.0, 2.0]
    sub = d.subset_queries([10, 42])
    assert sub.qid.tolist() == [42, 10, 42, 10, 42]
    np.testing.assert_array_equal(sub.X[:, 0], [1, 3, 4, 6, 7])


def test_sparse_features_are_zero_and_n_features_pads():
    d = read_letor(_lines("1 qid:1 5:2.5", "0 qid:1 2:1"))
    np.testing.assert_array_equal(d.X, [[0, 0, 0, 0, 2.5], [0, 1, 0, 0, 0]])
    padded = read_letor(_lines("1 qid:1 5:2.5", "0 qid:1 2:1"), n_features=8)
    assert padded.X.shape == (2, 8) and padded.feature_names[-1] == "f8"
    np.testing.assert_array_equal(padded.X[:, :5], d.X)
    assert not padded.X[:, 5:].any()


def test_crlf_bom_and_utf16_are_read():
    ref = read_letor(GOOD)
    for raw in (GOOD.replace(b"\n", b"\r\n"), b"\xef\xbb\xbf" + GOOD,
                GOOD.decode().encode("utf-16")):
        d = read_letor(raw)
        np.testing.assert_array_equal(d.X, ref.X)
        np.testing.assert_array_equal(d.ids, ref.ids)


def test_large_data_stays_sparse(monkeypatch):
    dense = read_letor(GOOD)
    monkeypatch.setattr(letor_module, "DENSE_MAX_CELLS", 5)
    d = read_letor(GOOD)
    assert sp.issparse(d.X) and d.X.format == "csr"
    np.testing.assert_array_equal(d.X.toarray(), dense.X)
    assert d.fingerprint() == read_letor(GOOD).fingerprint()
    assert d.subset_queries([42]).X.shape == (2, 3)
    frame = d.to_frame()
    np.testing.assert_array_equal(frame[["f1", "f2", "f3"]].sparse.to_dense().to_numpy(),
                                  d.X.toarray())


# ============================================================================ reader: errors
@pytest.mark.parametrize(("raw", "pattern"), [
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "x qid:1 1:3"),
     r"line 3: the relevance label 'x' is not a number"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "qid:1 1:3"),
     r"line 3: the line starts with 'qid:1' where the relevance label should be"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "-1 qid:1 1:3"),
     r"line 3: the relevance grade -1 is negative"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "nan qid:1 1:3"),
     r"line 3: the relevance label 'nan' is not a finite number"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 1:3"),
     r"line 3: 'qid:' is missing"),
    (_lines("1 1:1", "0 1:2", "0 1:3"), r"line 1: 'qid:' is missing"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:q7 1:3"),
     r"line 3: the query id in 'qid:q7' is not an integer"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 1:3 qid:1"),
     r"line 3: 'qid:1' must come right after the relevance label"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 0:3"),
     r"line 3: feature index 0 in '0:3': feature indices start at 1"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 -2:3"),
     r"line 3: feature index -2 .*feature indices start at 1"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2:3 2:4"),
     r"line 3: feature 2 appears twice"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 3:3 2:4"),
     r"line 3: feature 2 comes after feature 3; feature indices must increase"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2:abc"),
     r"line 3: the value 'abc' of feature 2 is not a number"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2:"),
     r"line 3: the value '' of feature 2 is not a number"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2:nan"),
     r"line 3: feature 2 has the value 'nan', which is not a finite number"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2:inf"),
     r"line 3: feature 2 has the value 'inf'"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 7"),
     r"line 3: '7' is not a feature written as index:value"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2.5:1"),
     r"line 3: the feature index '2.5' in '2.5:1' is not an integer"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:99999999999999999999 1:1"),
     r"line 3: the query id .* is too large"),
    (_lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 999999999:1"),
     r"line 3: feature index 999999999 is beyond UpRank's limit"),
])
def test_malformed_lines_name_the_line(raw, pattern):
    with pytest.raises(DataError, match=pattern) as err:
        read_letor(raw)
    msg = str(err.value)
    assert msg.startswith("Cannot read the LETOR file: line ")
    assert "SVMlight/LibSVM" not in msg and "could not convert" not in msg


def test_line_numbers_count_comment_and_blank_lines():
    raw = _lines("# a comment", "", "1 qid:1 1:1", "0 qid:1 1:x")
    with pytest.raises(DataError, match="line 4: the value 'x' of feature 1"):
        read_letor(raw)


def test_first_offending_line_is_reported():
    raw = _lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 2:3 2:4", "zz qid:1 1:3")
    with pytest.raises(DataError, match="line 3: feature 2 appears twice"):
        read_letor(raw)


def test_lines_scikit_learn_refuses_are_found_even_without_a_rule(monkeypatch):
    monkeypatch.setattr(letor_module, "_line_problem", lambda body, n_features: None)
    raw = _lines("1 qid:1 1:1", "0 qid:1 1:2", "0 qid:1 1:2", "x qid:1 1:3", "y qid:1 1:3")
    with pytest.raises(DataError, match=r"line 4: it could not be read as SVMlight/LETOR"):
        read_letor(raw)


def test_feature_index_beyond_n_features():
    with pytest.raises(DataError, match="line 2: feature index 9 exceeds n_features=5"):
        read_letor(_lines("1 qid:1 1:1", "0 qid:1 9:2"), n_features=5)


def test_one_document_query_names_query_and_line():
    lines = ["1 qid:3 1:1", "0 qid:3 1:2"] + [f"0 qid:5 1:{i}" for i in range(38)]
    lines += ["1 qid:17 1:9", "0 qid:5 1:1"]  # query 17 is on line 41 only
    with pytest.raises(DataError, match=r"Query 17 \(line 41\) has one document; a ranking "
                                        r"needs at least two"):
        read_letor(_lines(*lines))


@pytest.mark.parametrize(("raw", "pattern"), [
    (b"", "The file is empty"),
    (b"  \n\n", "The file is empty"),
    (b"# only\n# comments\n", "no data lines, only comments"),
    (b"\x89PNG\r\n\x1a\n" + bytes(100), "not a LETOR text file: it looks like a PNG image"),
    (b"PK\x03\x04" + bytes(100), "not a LETOR text file: it looks like a ZIP archive"),
    (b"%PDF-1.4\n" + bytes(100), "not a LETOR text file: it looks like a PDF document"),
    (b"1 qid:1 1:1\x00\x00\x00\x00\n" * 3, "not a LETOR text file: it contains binary data"),
    (b"PAR1" + bytes(20), "not a LETOR text file.*read_ltr_table"),
    (b"<!DOCTYPE html><html></html>", "looks like an HTML/XML page"),
    (gzip.compress(GOOD)[:-12], "gzip-compressed but is damaged or truncated"),
    (_lines("1 qid:1", "0 qid:1"), "no feature values"),
])
def test_unusable_files(raw, pattern):
    with pytest.raises(DataError, match=pattern):
        read_letor(raw)


def test_size_limit_names_size_and_limit(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(GOOD * 4000)
    size = f"{len(GOOD) * 4000 / 2**20:.1f}"
    with pytest.raises(DataError, match=rf"The file is {size} MB; the limit is 0\.5 MB "
                                        r"\(max_bytes\)"):
        read_letor(path, max_bytes=2**19)
    with pytest.raises(DataError, match=r"the limit is 0\.5 MB"):
        read_letor(path.read_bytes(), max_bytes=2**19)
    packed = gzip.compress(GOOD * 4000)  # small compressed, too large unpacked
    assert len(packed) < 2**19
    with pytest.raises(DataError, match=r"Decompressed, the file is more than 0\.5 MB"):
        read_letor(packed, max_bytes=2**19)


def test_argument_errors():
    with pytest.raises(ValueError, match="n_features must be a positive integer; got 0"):
        read_letor(GOOD, n_features=0)
    with pytest.raises(DataError, match="File not found"):
        read_letor("/no/such/file.txt")
    with pytest.raises(TypeError, match="source must be a path"):
        read_letor(12)


# ============================================================================ container
def test_summaries_subset_and_frame():
    d = read_letor(_lines("2 qid:5 1:1", "0 qid:5 1:2", "0 qid:6 1:3", "0 qid:6 1:4",
                          "1 qid:7 1:5", "1 qid:7 1:6"))
    assert d.queries_without_relevant() == 1
    assert d.grade_counts().to_dict() == {0: 3, 1: 2, 2: 1}
    with pytest.raises(ValueError, match=r"unknown id\(s\) 99"):
        d.subset_queries([5, 99])
    with pytest.raises(ValueError, match="at least one query"):
        d.subset_queries([])
    frame = d.to_frame()
    assert list(frame.columns) == ["qid", "relevance", "f1"]
    assert "LTRData(name=" in repr(d) and "queries=3" in repr(d)
    with pytest.raises(ValueError, match="relevance must have one value per row of X"):
        LTRData(X=np.zeros((3, 2)), relevance=[0, 1], qid=[1, 1, 1])


def test_fingerprint_depends_on_content_and_is_stable_across_processes():
    d = read_letor(GOOD)
    assert d.fingerprint() == read_letor(GOOD, name="other").fingerprint()
    assert len(d.fingerprint()) == 16 and int(d.fingerprint(), 16) >= 0
    changed = read_letor(GOOD.replace(b"1:0.5", b"1:0.25"))
    assert changed.fingerprint() != d.fingerprint()
    code = ("import sys; from core.data.letor import read_letor; "
            "print(read_letor(sys.stdin.buffer.read()).fingerprint())")
    out = subprocess.run([sys.executable, "-c", code], input=GOOD, cwd=ROOT,
                         capture_output=True, check=True)
    assert out.stdout.decode().strip() == d.fingerprint()


# ============================================================================ tables
def _assert_same(a: LTRData, b: LTRData) -> None:
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.relevance, b.relevance)
    np.testing.assert_array_equal(a.qid, b.qid)
    assert a.qid.dtype == b.qid.dtype


def test_csv_and_parquet_round_trip():
    world = make_ltr_world(12, n_features=7, docs_per_query=(3, 9), random_state=4)
    frame = world.to_frame()
    assert list(frame.columns[:3]) == ["qid", "doc_id", "relevance"]
    back = read_ltr_table(frame.to_csv(index=False).encode(), doc_id="doc_id")
    _assert_same(back, world)
    np.testing.assert_array_equal(back.ids, world.ids)
    assert back.feature_names == world.feature_names
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    back = read_ltr_table(buf.getvalue(), doc_id="doc_id")
    _assert_same(back, world)
    np.testing.assert_array_equal(back.ids, world.ids)


def test_hashed_64_bit_query_ids_stay_distinct_and_unchanged():
    # 2**53 + 1 and 2**53 are one float64: read through float they merged into one query
    big = 2**53
    csv = (f"qid,relevance,f1\n{big + 1},1,0.2\n{big + 1},0,0.3\n{big},1,0.5\n{big},0,0.1\n"
           f"{2**63 - 1},1,0.4\n{2**63 - 1},0,0.6\n").encode()
    d = read_ltr_table(csv)
    assert d.qid.dtype == np.int64 and d.n_queries == 3
    assert d.qid.tolist() == [big + 1, big + 1, big, big, 2**63 - 1, 2**63 - 1]


def test_table_from_letor_round_trip_and_semicolon_csv(tmp_path):
    d = read_letor(GOOD)
    text = d.to_frame().to_csv(index=False, sep=";")
    path = tmp_path / "ranking.csv"
    path.write_text(text)
    back = read_ltr_table(path, doc_id="doc_id")
    _assert_same(back, d)
    assert back.name == "ranking.csv"


def test_table_choices_features_and_string_queries():
    csv = (b"query,doc,grade,bm25,title,pagerank\n"
           b"q1,a,1,2.5,Intro,0.1\nq1,b,0,1.5,Other,0.2\nq2,c,2,0.5,More,0.3\nq2,d,0,0.1,X,0.4\n")
    d = read_ltr_table(csv, query="query", relevance="grade", doc_id="doc")
    assert d.feature_names == ["bm25", "pagerank"]  # the text column is not a feature
    assert d.qid.tolist() == ["q1", "q1", "q2", "q2"] and d.qid.dtype.kind == "U"
    assert d.ids.tolist() == ["a", "b", "c", "d"]
    only = read_ltr_table(csv, query="query", relevance="grade", features=["pagerank"])
    np.testing.assert_array_equal(only.X[:, 0], [0.1, 0.2, 0.3, 0.4])
    floats = read_ltr_table(b"qid,relevance,f\n3.0,1,1\n3.0,0,2\n")
    assert floats.qid.dtype == np.int64 and floats.qid.tolist() == [3, 3]


@pytest.mark.parametrize(("csv", "kwargs", "pattern"), [
    (b"q,rel,f\n1,1,1\n1,0,2\n", {},
     r"Column\(s\) 'qid', 'relevance' not found; the table has columns 'q', 'rel', 'f'"),
    (b"qid,relevance,f\n1,1,1\n1,0,2\n", {"features": ["g"]}, r"Column\(s\) 'g' not found"),
    (b"qid,relevance,f\n1,1,1\n1,high,2\n1,0,3\n", {},
     r"relevance column 'relevance' must hold finite numbers; row 2, line 3 holds 'high'"),
    (b"qid,relevance,f\n1,1,1\n1,,2\n", {}, r"'relevance' is missing on row 2, line 3"),
    (b"qid,relevance,f\n1,1,1\n1,-1,2\n", {}, r"0 or more; row 2, line 3 .* holds -1"),
    (b"qid,relevance,f,g\n1,1,1,a\n1,0,2,b\n", {"features": ["f", "g"]},
     r"feature column 'g' must hold finite numbers; row 1, line 2 holds 'a'"),
    (b"qid,relevance,f\n1,1,1\n1,0,\n", {}, r"feature column 'f' is missing on row 2, line 3"),
    (b"qid,relevance,f\n1,1,1\n1,0,2\n2,1,3\n", {},
     r"Query 2 \(row 3, line 4\) has one document; a ranking needs at least two"),
    (b"qid,relevance,name\n1,1,a\n1,0,b\n", {}, "no numeric feature column"),
    (b"qid,relevance,f\n", {}, "header but no data rows"),
    (b"", {}, "The file is empty"),
])
def test_table_errors(csv, kwargs, pattern):
    with pytest.raises(DataError, match=pattern):
        read_ltr_table(csv, **kwargs)


def test_parquet_errors_name_rows():
    buf = io.BytesIO()
    pd.DataFrame({"qid": [1, 1, 2], "relevance": [1.0, 0.0, np.nan], "f": [1.0, 2.0, 3.0]}
                 ).to_parquet(buf)
    with pytest.raises(DataError, match=r"'relevance' is missing on row 3; fill"):
        read_ltr_table(buf.getvalue())
    buf = io.BytesIO()
    pd.DataFrame({"qid": [], "relevance": [], "f": []}).to_parquet(buf)
    with pytest.raises(DataError, match="Parquet file has no rows"):
        read_ltr_table(buf.getvalue())
    with pytest.raises(DataError, match="starts like a Parquet file but could not be read"):
        read_ltr_table(b"PAR1" + bytes(30))


# ============================================================================ MQ2008
@pytest.fixture(scope="module")
def mq2008():
    shared = ROOT.parent / "shared" / "data"
    if not (shared / FOLD1).is_dir():
        pytest.skip("../shared/data/mq2008_fold1 is not present beside the project")
    return load_mq2008(1, data_dir=shared, allow_download=False)


def test_mq2008_fold1_matches_sources_md(mq2008):
    # Counts from ../shared/data/SOURCES.md, section 5 (independent of this code).
    sizes = {s: (d.n_rows, d.n_queries) for s, d in mq2008.items()}
    assert sizes == {"train": (9_630, 471), "vali": (2_707, 157), "test": (2_874, 156)}
    assert mq2008["train"].grade_counts().to_dict() == {0: 7_820, 1: 1_223, 2: 587}
    assert mq2008["vali"].grade_counts().to_dict() == {0: 2_140, 1: 400, 2: 167}
    assert mq2008["test"].grade_counts().to_dict() == {0: 2_319, 1: 378, 2: 177}
    train = mq2008["train"]
    assert train.X.shape == (9_630, 46) and isinstance(train.X, np.ndarray)
    assert train.ids[0] == "GX008-86-4444840" and train.qid[0] == 10002
    assert train.feature_names[-1] == "f46"
    assert 0 < train.queries_without_relevant() < train.n_queries
    assert mq2008["test"].name == "MQ2008 fold 1 — test"


def test_mq2008_checksum_mismatch_is_detected(tmp_path, shared_data):
    fold = tmp_path / FOLD1
    shutil.copytree(shared_data / FOLD1, fold)
    target = fold / "vali.txt.gz"
    target.chmod(0o644)
    raw = bytearray(target.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    target.write_bytes(bytes(raw))
    with pytest.raises(DataError, match=r"vali\.txt\.gz' does not match the published "
                                        r"checksum .*delete it and get a fresh copy"):
        load_mq2008(1, data_dir=tmp_path, allow_download=False)


def test_mq2008_uncompressed_copy_is_verified_on_its_text(tmp_path, shared_data):
    fold = tmp_path / FOLD1
    fold.mkdir()
    for split in ("train", "vali", "test"):
        text = gzip.decompress((shared_data / FOLD1 / f"{split}.txt.gz").read_bytes())
        (fold / f"{split}.txt").write_bytes(text if split != "test" else text + b"\n")
    with pytest.raises(DataError, match=r"test\.txt' does not match the published checksum"):
        load_mq2008(1, data_dir=tmp_path, allow_download=False)


def test_mq2008_not_found_says_where_and_how(tmp_path):
    with pytest.raises(DataError) as err:
        load_mq2008(1, data_dir=tmp_path, allow_download=False)
    msg = str(err.value)
    for part in ("MQ2008 fold 1 was not found", str(tmp_path), str(cache_dir()),
                 "S1.txt", letor_module.MQ2008_COMMIT, "UPRANK_DATA_DIR"):
        assert part in msg
    assert mq2008_folds_available(tmp_path) == []
    with pytest.raises(ValueError, match="fold must be one of 1, 2, 3, 4, 5; got 6"):
        load_mq2008(6, allow_download=False)


def test_mq2008_folds_available(shared_data):
    assert mq2008_folds_available(shared_data) == [1]


def _parts_from_fold1(shared_data: Path) -> dict[int, bytes]:
    """S1..S5 consistent with the published checksums: S4 = vali, S5 = test, and fold 1's
    train cut into three pieces at query boundaries (only S1 + S2 + S3 is checked)."""
    text = {s: gzip.decompress((shared_data / FOLD1 / f"{s}.txt.gz").read_bytes())
            for s in ("train", "vali", "test")}
    lines = text["train"].splitlines(keepends=True)
    qids = [line.split(b" ", 2)[1] for line in lines]
    cuts = [i for i in range(1, len(lines)) if qids[i] != qids[i - 1]]
    a, b = cuts[len(cuts) // 3], cuts[2 * len(cuts) // 3]
    return {1: b"".join(lines[:a]), 2: b"".join(lines[a:b]), 3: b"".join(lines[b:]),
            4: text["vali"], 5: text["test"]}


def test_mq2008_folds_from_parts_follow_letor_partition(tmp_path, shared_data, mq2008):
    parts = _parts_from_fold1(shared_data)
    (tmp_path / "MQ2008").mkdir()
    for k, content in parts.items():
        (tmp_path / "MQ2008" / f"S{k}.txt").write_bytes(content)
    assert mq2008_folds_available(tmp_path) == [1, 2, 3, 4, 5]
    fold1 = load_mq2008(1, data_dir=tmp_path, allow_download=False)
    for split in ("train", "vali", "test"):
        assert fold1[split].fingerprint() == mq2008[split].fingerprint()
    fold2 = load_mq2008(2, data_dir=tmp_path, allow_download=False)  # train S2 S3 S4
    assert fold2["vali"].fingerprint() == mq2008["test"].fingerprint()  # vali S5
    s1 = read_letor(parts[1], n_features=46)
    assert fold2["test"].n_rows == s1.n_rows  # test S1
    assert fold2["train"].n_rows == 9_630 - s1.n_rows + 2_707
    # a damaged part is refused
    (tmp_path / "MQ2008" / "S2.txt").write_bytes(parts[2].replace(b"qid", b"qiD", 1))
    with pytest.raises(DataError, match=r"S1 \+ S2 \+ S3 .* do not match the published"):
        load_mq2008(3, data_dir=tmp_path, allow_download=False)


def test_mq2008_download_from_publisher_url(tmp_path, shared_data, monkeypatch):
    parts = _parts_from_fold1(shared_data)
    publisher = tmp_path / "publisher"
    publisher.mkdir()
    for k, content in parts.items():
        (publisher / f"S{k}.txt").write_bytes(content)
    monkeypatch.setattr(letor_module, "MQ2008_URL", publisher.as_uri() + "/S{part}.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    splits = load_mq2008(4, data_dir=empty)  # train S4 S5 S1, vali S2, test S3
    target = cache_dir() / "MQ2008"
    assert sorted(p.name for p in target.iterdir()) == [f"S{k}.txt" for k in range(1, 6)]
    assert (target / "S3.txt").read_bytes() == parts[3]
    assert splits["test"].n_rows == read_letor(parts[3]).n_rows
    assert mq2008_folds_available(empty) == [1, 2, 3, 4, 5]  # the cache is searched too


def test_mq2008_download_with_wrong_content_is_deleted(tmp_path, shared_data, monkeypatch):
    parts = _parts_from_fold1(shared_data)
    publisher = tmp_path / "publisher"
    publisher.mkdir()
    for k, content in parts.items():
        (publisher / f"S{k}.txt").write_bytes(content if k != 5 else content[:-5])
    monkeypatch.setattr(letor_module, "MQ2008_URL", publisher.as_uri() + "/S{part}.txt")
    with pytest.raises(DataError, match=r"S5\.txt' does not match the published checksum.*"
                                        r"downloaded files were deleted"):
        load_mq2008(1, data_dir=tmp_path / "nowhere")
    assert not list((cache_dir() / "MQ2008").iterdir())


def test_mq2008_download_failure_explains(tmp_path, monkeypatch):
    monkeypatch.setattr(letor_module, "MQ2008_URL", (tmp_path / "gone").as_uri() + "/S{part}.txt")
    with pytest.raises(DataError, match=r"Download of MQ2008 failed .*UPRANK_DATA_DIR"):
        load_mq2008(1, data_dir=tmp_path)


def test_registry_holds_mq2008_checksums_of_sources_md():
    reg = json.loads((ROOT / "data" / "registry.json").read_text())
    expected = {  # ../shared/data/SOURCES.md, section 5: stored and decompressed SHA-256
        "train": ("2727418103568610416237a96f74669c3352c9e373e8f601d60b6efdbfd508b8",
                  "9b98c14e9536f2a18c59670714c99defc63e74359c56cba219a61db248f27123"),
        "vali": ("c7bc4ddf6645c84232b5e7055ef00678fc6fbbd7946e6a166aa483af76868085",
                 "a239850bc6fe960ad08c2b7b0d99db90fe976dd93a15358e98036591b4e7a2ac"),
        "test": ("1b76af5009fc175033f6490bd1b8d116e14168bf5bc7d4b20e0aad86e23b5381",
                 "c68c52feb1ecae7f17b64c8e2fda2098302681bbd4ea5fad8c73a1d32a1cf2b2"),
    }
    for split, (stored, content) in expected.items():
        entry = reg[f"mq2008_fold1_{split}"]
        assert (entry["sha256"], entry["content_sha256"]) == (stored, content)
        assert entry["filename"] == f"mq2008_fold1/{split}.txt.gz"
        assert entry["citation"] and entry["licence"]


def test_shared_fold1_files_match_registry(shared_data):
    for split in ("train", "vali", "test"):
        raw = (shared_data / FOLD1 / f"{split}.txt.gz").read_bytes()
        entry = letor_module.REGISTRY[f"mq2008_fold1_{split}"]
        assert hashlib.sha256(raw).hexdigest() == entry["sha256"]
        assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == entry["content_sha256"]


# ============================================================================ synthetic world
def test_world_is_deterministic_by_seed():
    a, b = make_ltr_world(60, random_state=3), make_ltr_world(60, random_state=3)
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != make_ltr_world(60, random_state=4).fingerprint()
    assert a.name == "Synthetic LTR world"


@pytest.mark.parametrize(("n_queries", "share"), [(300, 0.3), (101, 0.25), (40, 0.0),
                                                  (10, 1.0), (7, 0.5)])
def test_world_has_exact_share_of_queries_without_relevant(n_queries, share):
    w = make_ltr_world(n_queries, no_relevant_share=share, random_state=0)
    table = w.query_table()
    assert len(table) == n_queries
    assert int((table["n_relevant"] == 0).sum()) == round(share * n_queries)
    assert w.queries_without_relevant() == round(share * n_queries)


def test_world_grades_sizes_and_truth():
    w = make_ltr_world(200, n_features=12, docs_per_query=(4, 30), max_grade=3,
                       random_state=1)
    assert set(np.unique(w.relevance)) <= {0.0, 1.0, 2.0, 3.0}
    assert w.relevance.max() == 3
    sizes = w.query_table()["n_docs"]
    assert sizes.min() >= 4 and sizes.max() <= 30 and sizes.nunique() > 10
    assert w.X.shape == (w.n_rows, 12) and w.feature_names[0] == "f1"
    assert w.truth.shape == (w.n_rows,)
    assert (w.truth >= 0).all() and (w.truth <= 3).all()
    rank_corr = pd.Series(w.truth).corr(pd.Series(w.relevance), method="spearman")
    assert rank_corr > 0.5
    # the expected grade is higher where the drawn grade is higher
    means = [w.truth[w.relevance == g].mean() for g in range(4)]
    assert means == sorted(means)
    # truth is 0 exactly on the queries without a relevant document
    none = w.query_table().query("n_relevant == 0")["qid"]
    assert not w.truth[np.isin(w.qid, none)].any()
    assert len(set(w.ids)) == w.n_rows


def test_world_argument_errors():
    with pytest.raises(ValueError, match=r"docs_per_query must be integers with 2 <= low <= "
                                         r"high; got \(1, 5\)"):
        make_ltr_world(10, docs_per_query=(1, 5))
    with pytest.raises(ValueError, match="docs_per_query must be a pair"):
        make_ltr_world(10, docs_per_query=5)
    with pytest.raises(ValueError, match="n_features must be an integer >= 6; got 3"):
        make_ltr_world(10, n_features=3)
    with pytest.raises(ValueError, match=r"no_relevant_share must be a number in \[0, 1\]"):
        make_ltr_world(10, no_relevant_share=1.5)
    with pytest.raises(ValueError, match="noise must be a finite number >= 0; got -1"):
        make_ltr_world(10, noise=-1)


def test_world_without_noise_has_truth_equal_to_grades_where_drawn():
    w = make_ltr_world(50, noise=0.0, no_relevant_share=0.0, random_state=2)
    assert w.queries_without_relevant() == 0
    assert np.mean(w.truth == w.relevance) > 0.99  # all but the forced grade-1 documents


# ============================================================================ splits
def test_split_queries_keeps_queries_whole_and_disjoint():
    w = make_ltr_world(300, random_state=5)
    parts = split_queries(w, random_state=0)
    assert list(parts) == ["train", "vali", "test"]
    assert [p.n_queries for p in parts.values()] == [180, 60, 60]
    q = {s: set(p.qid.tolist()) for s, p in parts.items()}
    assert not (q["train"] & q["vali"] or q["train"] & q["test"] or q["vali"] & q["test"])
    assert q["train"] | q["vali"] | q["test"] == set(w.qid.tolist())
    assert sum(p.n_rows for p in parts.values()) == w.n_rows
    for s, p in parts.items():
        for qid in q[s]:  # every document of the query went with it
            assert (p.qid == qid).sum() == (w.qid == qid).sum()
        pos = np.flatnonzero(np.isin(w.ids, p.ids))
        np.testing.assert_array_equal(w.ids[pos], p.ids)  # file order kept
        np.testing.assert_array_equal(w.truth[pos], p.truth)
        assert p.name == f"Synthetic LTR world — {s}"
    # stratified: each part keeps the 30 % of queries without a relevant document
    assert [p.queries_without_relevant() for p in parts.values()] == [54, 18, 18]


def test_split_queries_is_seeded_and_validates():
    d = make_ltr_world(20, random_state=0)
    a = split_queries(d, random_state=7)
    b = split_queries(d, random_state=7)
    assert all(a[s].fingerprint() == b[s].fingerprint() for s in a)
    c = split_queries(d, random_state=8)
    assert any(a[s].fingerprint() != c[s].fingerprint() for s in a)
    small = d.subset_queries([1, 2, 3])
    assert [p.n_queries for p in split_queries(small, fractions=(0.8, 0.1, 0.1),
                                               random_state=0).values()] == [1, 1, 1]
    with pytest.raises(ValueError, match="enough queries .* got 2 queries"):
        split_queries(d.subset_queries([1, 2]), random_state=0)
    with pytest.raises(ValueError, match=r"fractions must be three positive numbers .* "
                                         r"summing to 1; got \(0\.5, 0\.5\)"):
        split_queries(d, fractions=(0.5, 0.5))
    with pytest.raises(TypeError, match="data must be an LTRData"):
        split_queries(pd.DataFrame())



# ============================================================================ format hints
def test_a_csv_read_as_letor_gets_the_hint_to_read_a_table():
    csv = b"qid,relevance,f1\n1,2,0.5\n1,0,0.1\n"
    with pytest.raises(DataError, match=r'line 1: .*header of a CSV table.*switch Format to '
                                        r'"CSV / Parquet"'):
        read_letor(csv)
    with pytest.raises(DataError) as bad_label:  # a LETOR mistake on line 1: no CSV hint
        read_letor(b"x qid:1 1:2\n")
    assert "CSV" not in str(bad_label.value)


@pytest.mark.parametrize("compress", [False, True])
def test_a_letor_file_read_as_a_table_is_recognised(compress):
    raw = gzip.compress(GOOD) if compress else GOOD
    with pytest.raises(DataError, match=r"looks like a LETOR / SVMlight file.*2 qid:10 1:0\.5"
                                        r'.*switch Format to "LETOR / SVMlight"'):
        read_ltr_table(raw)


# ============================================================================ grade warnings
def test_grade_warnings_name_fractional_huge_and_single_grades():
    assert grade_warnings([0, 1, 2, 4, 0]) == []
    frac = grade_warnings([0, 2.5, 1, 0.5])
    assert len(frac) == 1
    assert frac[0].startswith("2 of 4 documents have a grade that is not a whole number "
                              "(e.g. 2.5)") and "lambdarank" in frac[0]
    huge = grade_warnings([0, 1e10, 1])
    assert len(huge) == 1 and "The largest grade is 1e+10" in huge[0]
    assert grade_warnings([0, 30, 1]) == []  # lambdarank's own limit is fine
    zero, = grade_warnings(np.zeros(5))
    assert "same grade, 0" in zero and "no query has a relevant document" in zero
    one, = grade_warnings(np.ones(5))
    assert "same grade, 1" in one and "np.float64" not in one


def test_a_one_column_table_is_told_what_a_ranking_table_needs():
    with pytest.raises(DataError) as err:
        read_ltr_table(b"qid\n1\n2\n")
    assert str(err.value).endswith("A ranking table needs a query column, a relevance column "
                                   "and feature columns.")
    assert "treatment" not in str(err.value)
