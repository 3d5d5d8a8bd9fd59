"""The Criteo-size stand-in and Parquet by path (core.data.large): the published Criteo
Uplift v2.1 rates (Diemert et al. 2018: 85 % treated, visit 4.70 %, conversion 0.29 %), rows
that do not depend on how many are asked for, a Parquet file written block by block equal to
the in-memory rows, column reads that keep float32, and clear errors for bad files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.data import (
    DataError,
    make_criteo_like,
    parquet_summary,
    read_parquet_columns,
    write_criteo_like,
)
from core.data.large import BLOCK_ROWS
from core.evaluation import auuc


@pytest.fixture(scope="module")
def million():
    return make_criteo_like(1_000_000, random_state=0)


def test_rates_match_the_published_criteo_numbers(million):
    d = million
    assert d.n == 1_000_000 and list(d.X.columns) == [f"f{j}" for j in range(12)]
    assert (d.X.dtypes == np.float32).all()
    # Published for v2.1: treatment ratio 0.85, visit 4.70 %, conversion 0.29 %,
    # exposure 3.06 %; binomial SE at 1M rows ≈ 0.0004 / 0.0002 / 0.00005.
    assert d.t.mean() == pytest.approx(0.85, abs=0.002)
    assert d.y.mean() == pytest.approx(0.0470, abs=0.001)
    assert d.extra["conversion"].mean() == pytest.approx(0.0029, abs=0.0003)
    assert d.extra["exposure"].mean() == pytest.approx(0.0306, abs=0.001)
    assert d.extra["exposure"][d.t == 0].sum() == 0  # only treated users see the ad
    # The known effect: its mean is the observed difference of the arms (within 3 SE).
    diff = d.y[d.t == 1].mean() - d.y[d.t == 0].mean()
    se = np.sqrt(d.y[d.t == 1].var() / (d.t == 1).sum() + d.y[d.t == 0].var() / (d.t == 0).sum())
    assert abs(diff - d.tau.mean()) < 3 * se


def test_the_true_effect_ranks_better_than_noise(million):
    d = million
    rng = np.random.default_rng(0)
    oracle = auuc(d.y, d.t, d.tau, definition="uplift_sep_rel")
    noise = auuc(d.y, d.t, rng.random(d.n), definition="uplift_sep_rel")
    assert oracle > noise + 0.001


def test_rows_do_not_depend_on_how_many_are_asked_for(million):
    small = make_criteo_like(BLOCK_ROWS + 1_234, random_state=0)
    np.testing.assert_array_equal(small.X.to_numpy()[:1_000_000], million.X.to_numpy())
    np.testing.assert_array_equal(small.y[:1_000_000], million.y)
    assert make_criteo_like(1_000, random_state=1).fingerprint() != make_criteo_like(
        1_000, random_state=0).fingerprint()
    # and within a block: 1,000 or 54,321 rows are the first rows of the million
    for n in (1_000, 54_321):
        head = make_criteo_like(n, random_state=0)
        np.testing.assert_array_equal(head.X.to_numpy(), million.X.to_numpy()[:n])
        for got, full in ((head.t, million.t), (head.y, million.y), (head.tau, million.tau),
                          (head.extra["conversion"], million.extra["conversion"]),
                          (head.extra["exposure"], million.extra["exposure"])):
            np.testing.assert_array_equal(got, full[:n])


def test_the_seed_may_be_a_generator_or_none_and_bad_seeds_are_named():
    from core.data import load_dataset

    a = make_criteo_like(500, random_state=np.random.default_rng(7))
    b = make_criteo_like(500, random_state=np.random.default_rng(7))
    assert a.fingerprint() == b.fingerprint() and "seeded by a Generator" in a.name
    unseeded = load_dataset("criteo_like", n_rows=500, random_state=None)
    assert unseeded.n == 500 and "unseeded" in unseeded.name
    assert load_dataset("criteo_like", n_rows=500, random_state="0").fingerprint() == \
        make_criteo_like(500, random_state=0).fingerprint()  # a link's text
    for bad in (-1, 1.5, "x", True):
        with pytest.raises((ValueError, TypeError), match="random_state|invalid literal"):
            make_criteo_like(10, random_state=bad)


def test_parquet_written_in_blocks_reads_back_the_same_rows(tmp_path):
    n = BLOCK_ROWS + 5_000  # two blocks, two row groups
    path = write_criteo_like(tmp_path / "c.parquet", n, random_state=3,
                             scores={"model": lambda b: b["tau"] + 0.01 * b["f0"]})
    ref = make_criteo_like(n, random_state=3)
    cols = read_parquet_columns(path, ["f0", "f11", "visit", "treatment", "model"])
    assert cols["f0"].dtype == np.float32 and cols["visit"].dtype == np.int8
    np.testing.assert_array_equal(cols["f11"], ref.X["f11"].to_numpy())
    np.testing.assert_array_equal(cols["visit"], ref.y)
    np.testing.assert_allclose(cols["model"], (ref.tau + 0.01 * ref.X["f0"].to_numpy()),
                               rtol=1e-6)
    summary = parquet_summary(path, treatment="treatment", outcome="visit")
    assert summary["rows"] == n and summary["row groups"] == 2
    assert summary["treated share"] == pytest.approx(ref.t.mean())
    assert summary["outcome control"] == pytest.approx(ref.y[ref.t == 0].mean())


def test_bad_files_give_clear_messages(tmp_path):
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="cannot be read as Parquet"):
        read_parquet_columns(junk, ["visit"])
    from core.data.large import file_columns

    with pytest.raises(DataError, match=r"junk.parquet is not a Parquet file \(those start"):
        file_columns(junk)
    path = tmp_path / "small.parquet"
    pd.DataFrame({"visit": [0, 1, None], "treatment": [0, 1, 1]}).to_parquet(path)
    with pytest.raises(DataError, match=r"'score' not in small.parquet; its columns are visit"):
        read_parquet_columns(path, ["score"])
    with pytest.raises(DataError, match=r"'visit' of small.parquet has missing values \(1 in "
                       r"all, the first at data row 3\); fill or drop them first\."):
        read_parquet_columns(path, ["visit"])
    # gaps in three row groups, reading stops at the first batch with one: the message counts
    # the whole column (495 gaps at rows 1.2M and 1.3M read "rows 1,200,001, 1,300,001 of
    # this part of the file", and no count)
    visit = pd.array([0, 1] * 150, dtype="Int8")
    visit[[120, 150, 151, 299]] = pd.NA  # row groups of 100: three in the 2nd, one in the 3rd
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"visit": visit}), path, row_group_size=100)
    with pytest.raises(DataError, match=r"missing values \(4 in all, the first at data rows "
                       r"121, 151, 152\)"):
        read_parquet_columns(path, ["visit"], batch_rows=100)
    pd.DataFrame({"visit": [0, 1, 1], "treatment": [0, 2, 1]}).to_parquet(path)
    with pytest.raises(DataError, match="coded 0/1"):
        parquet_summary(path, treatment="treatment", outcome="visit")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_missing_feature_values_are_kept_and_missing_arms_are_named_by_row(tmp_path, suffix):
    """The fuzz case: a Parquet file with gaps in a feature was refused ("rows 1…5,000", the
    whole batch) where an upload keeps them as NaN; now features keep their gaps, and a gap
    in the treatment or outcome names its rows."""
    from core.data import load_ab_file

    rng = np.random.default_rng(1)
    n = 300
    x = rng.random(n)
    x[[4, 77]] = np.nan
    frame = pd.DataFrame({"x": x, "z": rng.random(n), "treatment": rng.integers(0, 2, n),
                          "visit": rng.integers(0, 2, n)})
    path = tmp_path / f"gaps{suffix}"

    def write(f):
        f.to_parquet(path) if suffix == ".parquet" else f.to_csv(path, index=False)

    write(frame)
    d = load_ab_file(path, treatment="treatment", outcome="visit", features=["x", "z"])
    assert np.flatnonzero(np.isnan(d.X["x"].to_numpy())).tolist() == [4, 77]
    np.testing.assert_allclose(d.X["x"].to_numpy()[:4], x[:4].astype(np.float32))
    assert any("Missing feature values are kept" in w and "'x' 2" in w for w in d.warnings)
    gap = frame.astype({"visit": "float64"})
    gap.loc[[9, 120], "visit"] = np.nan
    write(gap)
    count = "2 in all, " if suffix == ".parquet" else ""  # a CSV has no statistics
    with pytest.raises(DataError, match=rf"'visit' of gaps.* has missing values \({count}the "
                       r"first at data rows 10, 121\)"):
        load_ab_file(path, treatment="treatment", outcome="visit", features=["x", "z"])


def test_criteo_file_is_converted_once_and_a_different_copy_is_refused(shared_data, tmp_path):
    """The real file's first 1,000 rows (SOURCES.md §6: treatment 863, visit 35, conversion
    2, exposure 24) stand in for the 300 MB download: converted to Parquet, read back with
    Criteo's schema, the copy's SHA-256 recorded."""
    import gzip
    import shutil

    from core.data import load_criteo

    gz = tmp_path / "data" / "criteo-research-uplift-v2.1.csv.gz"
    gz.parent.mkdir()
    with open(shared_data / "criteo_uplift_head1000.csv", "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    d = load_criteo("visit", data_dir=gz.parent)
    assert (d.n, int(d.t.sum()), int(d.y.sum())) == (1_000, 863, 35)
    assert int(d.extra["conversion"].sum()) == 2 and int(d.extra["exposure"].sum()) == 24
    assert (d.X.dtypes == np.float32).all() and "13,979,592" in d.warnings[0]
    assert load_criteo("conversion", data_dir=gz.parent).y.sum() == 2
    with gzip.open(gz, "wb") as dst:  # another copy under the same name
        dst.write(b"f0,f1\n1,2\n")
    with pytest.raises(DataError, match="is not the copy converted before"):
        load_criteo(data_dir=gz.parent)


def test_missing_criteo_file_names_the_stand_in(tmp_path):
    from core.data import load_criteo

    with pytest.raises(DataError, match="make_criteo_like"):
        load_criteo(data_dir=tmp_path)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_an_ab_file_by_path_reads_float32_features(tmp_path, suffix):
    from core.data import file_columns, load_ab_file

    d = make_criteo_like(3_000, random_state=4)
    frame = d.X.assign(treatment=d.t, visit=d.y, name="x",  # a text column is skipped
                       conversion=d.extra["conversion"], tau=d.tau)  # outcomes and oracles too
    path = tmp_path / f"ab{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    assert file_columns(path)[-5:] == ["treatment", "visit", "name", "conversion", "tau"]
    got = load_ab_file(path, treatment="treatment", outcome="visit")
    assert list(got.X.columns) == list(d.X.columns) and (got.X.dtypes == np.float32).all()
    assert "conversion, tau" in got.warnings[0]
    np.testing.assert_array_equal(got.y, d.y)
    np.testing.assert_array_equal(got.X.to_numpy(), d.X.to_numpy())
    with pytest.raises(DataError, match="'arm' \\(treatment\\) is not in"):
        load_ab_file(path, treatment="arm", outcome="visit")
    with pytest.raises(DataError, match="must be coded 0/1"):
        load_ab_file(path, treatment="treatment", outcome="f0")
    with pytest.raises(DataError, match="No file at"):
        load_ab_file(tmp_path / "nope.parquet", treatment="t", outcome="y")


def _ab_frame(n: int = 40, **columns) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"f0": rng.normal(size=n), "treatment": np.arange(n) % 2,
                          "visit": (np.arange(n) // 2) % 2})
    return frame.assign(**columns)


def _write(frame: pd.DataFrame, path) -> None:
    frame.to_parquet(path) if path.suffix == ".parquet" else frame.to_csv(path, index=False)


BAD_AB = [  # (columns replaced, what the message must say) — as an uploaded CSV is checked
    ({"treatment": ["A", "B"] * 20}, r"'treatment' \(treatment\) of ab\.\w+ holds text values"),
    ({"visit": ["yes", "no"] * 20}, r"'visit' \(outcome\) of ab\.\w+ holds text values"),
    ({"treatment": [0, 1, 2, 3] * 10}, r"other values: 2, 3\. To compare two of several arms"),
    ({"treatment": np.arange(40) * 0.5}, r"'treatment' has 40 distinct values \(other than "
                                         r"0/1: 0\.5, 1\.5, 2, 2\.5, 3 and more\): it does not"),
    ({"visit": np.linspace(-1, 1, 40)}, r"'visit' \(outcome\) must be coded 0/1 .* -1, .* and "
                                        r"more\. A continuous outcome"),
    ({"visit": [0.0, 1.0000001] * 20}, r"other values: 1\.0000001\."),
    ({"treatment": [1] * 40}, r"'treatment' has only one arm: every row is 1"),
    ({"treatment": [0] + [1] * 39}, r"Only 1 control row is left; each arm needs"),
    ({"visit": [0] * 40}, r"'visit' has no responders"),
    ({"visit": [1] * 40}, r"'visit' has only responders"),
]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize(("columns", "message"), BAD_AB)
def test_a_large_file_gets_the_checks_of_an_upload(tmp_path, suffix, columns, message):
    """Text codes, extra arms, a continuous outcome, one arm, a constant outcome: a clear
    DataError from the summary (Parquet) and from the loader, never a numpy / Arrow one."""
    from core.data import load_ab_file

    path = tmp_path / f"ab{suffix}"
    _write(_ab_frame(**columns), path)
    if suffix == ".parquet":
        with pytest.raises(DataError, match=message):
            parquet_summary(path, treatment="treatment", outcome="visit")
    with pytest.raises(DataError, match=message):
        load_ab_file(path, treatment="treatment", outcome="visit")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_large_file_codes_may_be_booleans_or_floats(tmp_path, suffix):
    """true/false columns (pyarrow reads them as booleans, which it does not cast to a
    number) and 0.0/1.0 floats are 0/1 codes."""
    from core.data import load_ab_file

    base = _ab_frame()
    path = tmp_path / f"ab{suffix}"
    _write(base.assign(treatment=base["treatment"].astype(bool),
                       visit=base["visit"].astype(float)), path)
    got = load_ab_file(path, treatment="treatment", outcome="visit")
    np.testing.assert_array_equal(got.t, base["treatment"].to_numpy())
    np.testing.assert_array_equal(got.y, base["visit"].to_numpy())
    assert got.t.dtype == np.int8 and got.n_control == 20
    if suffix == ".parquet":
        summary = parquet_summary(path, treatment="treatment", outcome="visit")
        assert summary["treated share"] == 0.5
        assert summary["outcome treated"] == base["visit"][base["treatment"] == 1].mean()


def test_large_file_refusals_before_reading(tmp_path):
    """The same column for both roles, NaN codes, an all-missing column, a CSV given to the
    Parquet summary: each a DataError naming what is wrong."""
    from core.data import load_ab_file

    for suffix in (".parquet", ".csv"):
        path = tmp_path / f"ab{suffix}"
        _write(_ab_frame(), path)
        with pytest.raises(DataError, match=r"the same column \('visit'\)"):
            load_ab_file(path, treatment="visit", outcome="visit")
    with pytest.raises(DataError, match=r"ab\.csv cannot be read as Parquet"):
        parquet_summary(tmp_path / "ab.csv", treatment="treatment", outcome="visit")
    path = tmp_path / "nan.parquet"  # NaN values, not nulls (pandas would write nulls)
    frame = _ab_frame(visit=[0.0, np.nan] * 20)
    pq.write_table(pa.table({c: pa.array(frame[c].to_numpy(), from_pandas=False)
                             for c in frame}), path)
    for read in (parquet_summary, load_ab_file):
        with pytest.raises(DataError, match=r"'visit' \(outcome\) has 20 missing value\(s\)"):
            read(path, treatment="treatment", outcome="visit")
    path = tmp_path / "empty.csv"
    _write(_ab_frame(visit=[None] * 40), path)
    with pytest.raises(DataError, match=r"'visit' \(outcome\) of empty\.csv is empty"):
        load_ab_file(path, treatment="treatment", outcome="visit")


@pytest.mark.parametrize("tail", ["0.5,B,1\n", "0.5,1,1,7\n"])
def test_trouble_below_the_csv_type_inference_is_a_data_error(tmp_path, tail):
    """pyarrow infers a CSV's column types from its first block (1 MB): text further down, or
    a row with an extra field, fails while streaming, and says so as a DataError."""
    from core.data import load_ab_file

    path = tmp_path / "late.csv"
    _ab_frame(120_000).to_csv(path, index=False)
    with open(path, "a") as out:
        out.write(tail)
    assert path.stat().st_size > 1 << 20
    with pytest.raises(DataError, match="late.csv could not be read to the end: a value that "
                                        "is not a number"):
        load_ab_file(path, treatment="treatment", outcome="visit")


def test_float32_effect_and_scores_are_kept_as_float32():
    # a 14M-row τ(x) upcast to float64 was a second 112 MB copy
    d = make_criteo_like(100, random_state=0)
    assert d.tau.dtype == np.float32
    from core.data import ABData

    kept = ABData(X=d.X, y=d.y, t=d.t, tau=d.tau, scores={"s": d.tau, "l": [0.5] * 100})
    assert kept.tau is d.tau and kept.scores["s"] is d.tau
    assert kept.scores["l"].dtype == np.float64


def test_pasted_paths_folders_and_semicolon_files_get_plain_answers(tmp_path, monkeypatch):
    from core.data.large import file_columns

    frame = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "treatment": [0, 1, 0, 1],
                          "visit": [0, 1, 1, 0]})
    frame.to_csv(tmp_path / "ab.csv", index=False)
    frame.to_csv(tmp_path / "semi.csv", index=False, sep=";")
    monkeypatch.setenv("HOME", str(tmp_path))
    for typed in (f" '{tmp_path / 'ab.csv'}' ", f'"{tmp_path / "ab.csv"}"', "~/ab.csv"):
        assert file_columns(typed) == ["x", "treatment", "visit"]
    with pytest.raises(DataError, match="is a folder: give the path of a Parquet or CSV file"):
        file_columns(tmp_path)
    parts = tmp_path / "dataset"
    for arm in (0, 1):
        (parts / f"treatment={arm}").mkdir(parents=True)
        frame.drop(columns="treatment").to_parquet(parts / f"treatment={arm}" / "part.parquet")
    with pytest.raises(DataError, match="is a folder of 2 Parquet files .* Write it to one"):
        file_columns(parts)
    with pytest.raises(DataError, match="reads as one column .*seems ';'-separated"):
        file_columns(tmp_path / "semi.csv")


def test_files_by_path_that_pyarrow_reads_badly_get_a_sentence(tmp_path):
    """The fuzz cases: Latin-1 text ('utf-8' codec can't decode …), UTF-16 (a one-column
    parse error), a Parquet file named .csv (binary in the message), a CSV named .parquet,
    and duplicate column names (KeyError: 'Column f0 does not exist in schema' on Use)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.data import load_ab_file
    from core.data.large import file_columns

    frame = pd.DataFrame({"âge": [30, 40, 50, 60], "treatment": [0, 1, 0, 1],
                          "visit": [0, 1, 1, 0]})
    frame.to_csv(tmp_path / "latin1.csv", index=False, encoding="latin-1")
    frame.to_csv(tmp_path / "utf16.csv", index=False, encoding="utf-16")
    frame.to_parquet(tmp_path / "renamed.csv")
    frame.to_csv(tmp_path / "text.parquet", index=False)
    columns = [pa.array([0, 1, 0, 1]), pa.array([0, 1, 1, 0]), pa.array([0.1, 0.2, 0.3, 0.4]),
               pa.array([1.0, 2.0, 3.0, 4.0])]
    pq.write_table(pa.table(columns, names=["treatment", "visit", "f0", "f0"]),
                   tmp_path / "dup.parquet")
    for name, message in (("latin1.csv", "is not UTF-8 text .*upload it on the Upload tab"),
                          ("utf16.csv", "is UTF-16 text: save it as CSV UTF-8"),
                          ("renamed.csv", "is a Parquet file under another name: rename it"),
                          ("text.parquet", r"is not a Parquet file .*a CSV under a .parquet name"),
                          ("dup.parquet", r"duplicate column names: 'f0' \(2×\)")):
        with pytest.raises(DataError, match=message):
            file_columns(tmp_path / name)
    with pytest.raises(DataError, match="duplicate column names"):
        load_ab_file(tmp_path / "dup.parquet", treatment="treatment", outcome="visit")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_an_id_column_names_the_rows_and_text_columns_are_named(tmp_path, suffix):
    from core.data import load_ab_file

    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"customer_id": np.arange(10**12, 10**12 + n), "recency": rng.random(n),
                          "region": rng.choice(["north", "south"], n),
                          "treatment": rng.integers(0, 2, n), "visit": rng.integers(0, 2, n)})
    path = tmp_path / f"campaign{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    d = load_ab_file(path, treatment="treatment", outcome="visit")
    assert list(d.X.columns) == ["recency"]  # the ID was a feature before
    assert d.id_name == "customer_id" and d.ids.tolist() == frame["customer_id"].tolist()
    assert any("ID-like: customer_id" in w for w in d.warnings)
    assert any("not numbers" in w and "region" in w for w in d.warnings)


def test_a_file_of_no_rows_says_so_as_csv_and_as_parquet(tmp_path):
    """A header-only CSV read "Column 'treatment' … is empty: every value is missing" (its
    columns' type is null) where a Parquet file of no rows said the data is empty."""
    from core.data import load_ab_file

    frame = pd.DataFrame({"treatment": pd.Series([], dtype="int8"),
                          "visit": pd.Series([], dtype="int8"),
                          "f0": pd.Series([], dtype="float32")})
    frame.to_parquet(tmp_path / "none.parquet")
    (tmp_path / "none.csv").write_text("treatment,visit,f0\n")
    for name in ("none.parquet", "none.csv"):
        with pytest.raises(DataError, match="No rows with 'treatment' and 'visit': the data "
                           "is empty"):
            load_ab_file(tmp_path / name, treatment="treatment", outcome="visit")
    # a column of gaps in a file with rows is still named as such
    (tmp_path / "gaps.csv").write_text("treatment,visit,f0\n,1,0.5\n,0,0.7\n")
    with pytest.raises(DataError, match="'treatment' .* is empty: every value is missing"):
        load_ab_file(tmp_path / "gaps.csv", treatment="treatment", outcome="visit")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_known_effect_column_is_a_ranker_not_a_feature(tmp_path, suffix):
    """'tau' was named "a known effect" and dropped: Curves never offered it.  It is now a
    ranking score under its own name (float32, every value as in the file); with a gap it is
    not offered, and the note says why."""
    from core.data import load_ab_file, make_criteo_like
    from ui.common import score_names

    d = make_criteo_like(3_000, random_state=1)
    frame = d.X.assign(treatment=d.t, visit=d.y, tau=d.tau, exposure=0)
    path = tmp_path / f"effect{suffix}"
    write = (lambda f: f.to_parquet(path)) if suffix == ".parquet" else (
        lambda f: f.to_csv(path, index=False))
    write(frame)
    data = load_ab_file(path, treatment="treatment", outcome="visit")
    assert list(data.scores) == ["tau"] and "tau" not in data.X.columns
    assert data.scores["tau"].dtype == np.float32
    np.testing.assert_array_equal(data.scores["tau"], d.tau.astype(np.float32))
    assert score_names(data)[0] == "tau"
    assert any("'tau' is offered as a ranker on Curves" in w for w in data.warnings)
    gap = frame.astype({"tau": "float64"})
    gap.loc[[5, 6], "tau"] = np.nan
    write(gap)
    data = load_ab_file(path, treatment="treatment", outcome="visit")
    assert not data.scores
    assert "'tau' is not offered as a ranker: 2 of its values are missing or infinite." in \
        data.warnings
    assert not any("is offered" in w for w in data.warnings)  # no note saying both


def test_whole_number_columns_with_gaps_are_read_as_float_with_nan(tmp_path):
    """An Int64 feature or uplift score with one gap refused the whole file ("has missing
    values"): such columns are now read as float32 with NaN, as float columns are."""
    from core.data import load_ab_file

    n = 400
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"treatment": rng.integers(0, 2, n), "visit": rng.integers(0, 2, n),
                          "visits_7d": pd.array(rng.integers(0, 9, n), dtype="Int64"),
                          "uplift": pd.array(rng.integers(-3, 4, n), dtype="Int64")})
    frame.loc[[3], "visits_7d"] = pd.NA
    frame.loc[[8], "uplift"] = pd.NA
    frame.to_parquet(tmp_path / "ints.parquet")
    data = load_ab_file(tmp_path / "ints.parquet", treatment="treatment", outcome="visit")
    feature = data.X["visits_7d"].to_numpy()
    assert feature.dtype == np.float32 and np.flatnonzero(np.isnan(feature)).tolist() == [3]
    np.testing.assert_array_equal(np.delete(feature, 3),
                                  np.delete(frame["visits_7d"].to_numpy(float), 3))
    assert not data.scores
    assert "'uplift' is not offered as a ranker: 1 of its values is missing or infinite." in \
        data.warnings
    # without the gap, the score is offered, its whole numbers as they are
    frame.loc[[8], "uplift"] = 0
    frame.to_parquet(tmp_path / "ints.parquet")
    data = load_ab_file(tmp_path / "ints.parquet", treatment="treatment", outcome="visit")
    np.testing.assert_array_equal(data.scores["uplift"], frame["uplift"].to_numpy(float))


def test_the_gap_count_reads_the_column_s_own_statistics_after_a_nested_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.data import read_parquet_columns

    # a struct's field b holds 5 gaps; visit 1: its count was read from s.b ("5 in all")
    table = pa.table({"s": pa.array([{"a": 1, "b": None}] * 5),
                      "visit": pa.array([0, 1, None, 1, 0], pa.int8())})
    pq.write_table(table, tmp_path / "nested.parquet")
    with pytest.raises(DataError, match=r"\(1 in all, the first at data row 3\)"):
        read_parquet_columns(tmp_path / "nested.parquet", ["visit"])
