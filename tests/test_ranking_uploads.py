"""Stored ranking uploads (core.data.ranking_uploads) and reopening one on the Ranking data
page after the session forgot it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _apptest import assert_clean
from streamlit.testing.v1 import AppTest

from core.data import (
    DataError,
    guess_ranking_format,
    list_ranking_uploads,
    load_ranking_upload,
    make_ltr_world,
    read_letor,
    save_ranking_upload,
)

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LETOR = (b"2 qid:1 1:0.5 # docid = A\n0 qid:1 1:0.1 # docid = B\n1 qid:7 2:0.3\n0 qid:7 2:0.2\n"
         b"1 qid:9 3:0.7\n0 qid:9 3:0.1\n")  # 3 queries: the fewest the 60/20/20 split takes


def test_round_trip_of_a_letor_file_and_a_table(tmp_path):
    fp = save_ranking_upload(LETOR, name="a.txt", options={"format": "letor"}, root=tmp_path)
    again = load_ranking_upload(fp, root=tmp_path)
    direct = read_letor(LETOR)
    np.testing.assert_array_equal(again.X, direct.X)
    np.testing.assert_array_equal(again.qid, direct.qid)
    assert fp == direct.fingerprint() and again.name == "a.txt"
    table = make_ltr_world(20, random_state=0).to_frame().to_csv(index=False).encode()
    fp2 = save_ranking_upload(table, name="w.csv", options={"format": "table",
                                                             "query": "qid"}, root=tmp_path)
    assert load_ranking_upload(fp2, root=tmp_path).n_queries == 20
    assert {u["name"] for u in list_ranking_uploads(root=tmp_path)} == {"a.txt", "w.csv"}


def test_bad_and_damaged_uploads_are_refused(tmp_path):
    with pytest.raises(DataError, match="line 1"):
        save_ranking_upload(b"x qid:1 1:2\n", name="b.txt", options={"format": "letor"},
                            root=tmp_path)
    assert list_ranking_uploads(root=tmp_path) == []  # nothing stored for a bad file
    fp = save_ranking_upload(LETOR, name="a.txt", options={"format": "letor"}, root=tmp_path)
    (tmp_path / fp / "content.bin").write_bytes(LETOR.replace(b"0.5", b"0.6"))
    with pytest.raises(DataError, match="damaged"):
        load_ranking_upload(fp, root=tmp_path)
    with pytest.raises(DataError, match="not the fingerprint"):
        load_ranking_upload("../etc", root=tmp_path)


def test_page_reopens_an_earlier_upload():
    six = b"".join(f"{g} qid:{q} 1:{q + g / 10}\n".encode() for q in range(6)
                   for g in (2, 0, 1))  # 6 queries × 3 documents: enough for 3 splits
    save_ranking_upload(six, name="mine.txt", options={"format": "letor"})  # cache dir
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run())
    assert_clean(at.switch_page("pages/ranking_data.py").run())
    assert_clean(at.radio(key="rk_kind").set_value("upload").run())
    assert "mine.txt" in at.selectbox(key="rk_earlier").options[0]
    assert_clean(at.button(key="rk_reopen").click().run())
    assert any(s.value == "Upload: mine.txt" for s in at.subheader)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Queries"] == "6" and metrics["Documents"] == "18"



@pytest.mark.parametrize("n_queries", [1, 2])
def test_too_few_queries_for_the_split_are_refused_and_not_stored(tmp_path, n_queries):
    content = b"".join(f"{g} qid:{q} 1:{g / 4}\n".encode() for q in range(n_queries)
                       for g in (2, 0, 1))
    noun = "query" if n_queries == 1 else "queries"
    with pytest.raises(DataError, match=f"at least 3 queries for its 60/20/20 split .*this "
                                        f"file has {n_queries} {noun}"):
        save_ranking_upload(content, name="few.txt", options={"format": "letor"},
                            root=tmp_path)
    assert list_ranking_uploads(root=tmp_path) == []
    assert not any(tmp_path.iterdir())


def test_format_is_guessed_from_the_extension():
    tables = ["a.csv", "B.CSV", "a.tsv", "a.parquet", "a.csv.gz"]
    letor = ["a.txt", "a.txt.gz", "a.svm", "a.libsvm", "a.gz", "noextension"]
    assert [guess_ranking_format(n) for n in tables] == ["table"] * len(tables)
    assert [guess_ranking_format(n) for n in letor] == ["letor"] * len(letor)
