"""Keeping the chosen dataset across reloads: stored uploads (core.data.uploads), the dataset
choice as URL query parameters (core.data.selection) and the designed arm split the SRM check
uses.

Expected values are written by hand from the tiny CSVs below, or taken from
../shared/data/SOURCES.md (Hillstrom's segment counts) and the paper's scenarios (§4.2).
"""

from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from core.data import (
    DATASET_PARAMS,
    DATASETS,
    DataError,
    DatasetChoice,
    assumed_treated_share,
    designed_treated_share,
    hygiene,
    list_uploads,
    load_dataset,
    load_upload,
    read_ab_csv,
    save_upload,
    srm_design,
    upload_info,
    uploads_dir,
)

CSV = b"grp;y;age\nA;1;30\nB;0;41\nA;0;25\nB;1;38\nC;1;50\nA;1;22\nB;0;47\n"
MAPPING = {"treatment": "grp", "outcome": "y", "treatment_value": "A", "control_value": "B"}


@pytest.fixture
def stored(tmp_path):
    data = read_ab_csv(CSV, name="three arms.csv", **MAPPING)
    return data, save_upload(data, CSV, name="three arms.csv", mapping=MAPPING, root=tmp_path)


# --------------------------------------------------------------------------- storage
def test_upload_round_trip_by_fingerprint(stored, tmp_path):
    data, info = stored
    assert info.folder == tmp_path / data.fingerprint()
    assert (info.folder / "content.bin").read_bytes() == CSV  # the bytes as received
    meta = json.loads((info.folder / "upload.json").read_text())
    assert meta["name"] == "three arms.csv" and meta["mapping"] == MAPPING
    assert meta["sha256"] == hashlib.sha256(CSV).hexdigest() and meta["size"] == len(CSV)
    again = load_upload(data.fingerprint(), root=tmp_path)
    # arms A (3 rows) vs B (3 rows); the C row is dropped
    assert (again.n, again.n_treated, again.n_control) == (6, 3, 3)
    assert again.y.tolist() == [1, 0, 0, 1, 1, 0] and again.name == data.name
    assert again.fingerprint() == data.fingerprint()
    assert not list(tmp_path.rglob("*.part"))  # atomic writes leave no temporary file


def test_default_folder_is_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("UPRANK_CACHE_DIR", str(tmp_path / "cache"))
    assert uploads_dir() == tmp_path / "cache" / "uploads"
    data = read_ab_csv(CSV, name="x.csv", **MAPPING)
    save_upload(data, CSV, name="x.csv", mapping=MAPPING)
    assert (tmp_path / "cache" / "uploads" / data.fingerprint() / "upload.json").is_file()
    assert load_upload(data.fingerprint()).n == 6


def test_list_uploads_newest_first_and_skips_broken_folders(stored, tmp_path):
    _, first = stored
    other_csv = b"treatment,outcome,x\n1,0,1\n0,1,2\n1,1,3\n0,0,4\n"
    other = read_ab_csv(other_csv, name="b.csv", treatment="treatment", outcome="outcome")
    second = save_upload(other, other_csv, name="b.csv",
                         mapping={"treatment": "treatment", "outcome": "outcome"}, root=tmp_path)
    (tmp_path / ("0" * 64)).mkdir()  # a folder without upload.json
    (tmp_path / "not-a-fingerprint").mkdir()
    names = [u.name for u in list_uploads(root=tmp_path)]
    assert names == (["b.csv", "three arms.csv"] if second.saved >= first.saved
                     else ["three arms.csv", "b.csv"])
    assert list_uploads(root=tmp_path / "missing") == []


def test_missing_upload_is_a_clear_data_error(tmp_path):
    with pytest.raises(DataError, match=r"No stored upload with fingerprint aaaaaaaaaaaa… .*"
                                        r"upload the CSV again"):
        load_upload("a" * 64, root=tmp_path)


@pytest.mark.parametrize("bad", ["../../etc", "A" * 64, "a" * 63, 12, None])
def test_a_fingerprint_must_be_64_lower_case_hex(bad, tmp_path):
    with pytest.raises(DataError, match="fingerprint must be 64 lower-case hex digits"):
        load_upload(bad, root=tmp_path)


def test_corrupt_json_is_a_clear_data_error(stored, tmp_path):
    data, info = stored
    (info.folder / "upload.json").write_text("{not json")
    with pytest.raises(DataError, match=r"is damaged \(upload.json cannot be read"):
        load_upload(data.fingerprint(), root=tmp_path)
    (info.folder / "upload.json").write_text(json.dumps({"version": 1}))
    with pytest.raises(DataError, match=r"is damaged \(upload.json: 'fingerprint'\)"):
        upload_info(data.fingerprint(), root=tmp_path)


def test_json_of_another_upload_is_refused(stored, tmp_path):
    _, info = stored
    meta = json.loads((info.folder / "upload.json").read_text())
    (tmp_path / ("b" * 64)).mkdir()
    (tmp_path / ("b" * 64) / "upload.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="describes another upload"):
        load_upload("b" * 64, root=tmp_path)


def test_missing_or_changed_bytes_are_a_clear_data_error(stored, tmp_path):
    data, info = stored
    (info.folder / "content.bin").write_bytes(CSV.replace(b"A;1;30", b"A;0;30"))
    with pytest.raises(DataError, match=r"three arms.csv\) is damaged: content.bin has"):
        load_upload(data.fingerprint(), root=tmp_path)
    (info.folder / "content.bin").unlink()
    with pytest.raises(DataError, match="content.bin cannot be read"):
        load_upload(data.fingerprint(), root=tmp_path)


def test_bytes_that_read_as_other_data_are_refused(stored, tmp_path):
    data, info = stored
    meta = json.loads((info.folder / "upload.json").read_text())
    meta["mapping"] = {**MAPPING, "treatment_value": "B", "control_value": "A"}  # arms swapped
    (info.folder / "upload.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="now reads as other data"):
        load_upload(data.fingerprint(), root=tmp_path)


def test_save_upload_checks_its_arguments(tmp_path):
    data = read_ab_csv(CSV, name="x.csv", **MAPPING)
    with pytest.raises(DataError, match="mapping must have the keys"):
        save_upload(data, CSV, name="x.csv", mapping={"treatment": "grp"}, root=tmp_path)
    with pytest.raises(DataError, match="mapping must have the keys"):
        save_upload(data, CSV, name="x.csv", mapping={**MAPPING, "sep": ";"}, root=tmp_path)
    with pytest.raises(DataError, match="content must be bytes; got str"):
        save_upload(data, CSV.decode(), name="x.csv", mapping=MAPPING, root=tmp_path)
    with pytest.raises(DataError, match="data must be an ABData; got dict"):
        save_upload({}, CSV, name="x.csv", mapping=MAPPING, root=tmp_path)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(DataError, match="Cannot store the upload in"):
        save_upload(data, CSV, name="x.csv", mapping=MAPPING, root=blocked)


def test_numpy_arm_codes_are_stored_as_json_numbers(tmp_path):
    csv = b"arm,y,x\n1,1,5\n2,0,6\n3,1,7\n1,0,8\n2,1,5\n1,1,6\n2,0,7\n"
    mapping = {"treatment": "arm", "outcome": "y", "treatment_value": np.int64(1),
               "control_value": np.int64(2)}
    data = read_ab_csv(csv, name="n.csv", **mapping)
    info = save_upload(data, csv, name="n.csv", mapping=mapping, root=tmp_path)
    assert info.mapping["treatment_value"] == 1 and type(info.mapping["treatment_value"]) is int
    assert load_upload(data.fingerprint(), root=tmp_path).n == 6


# --------------------------------------------------------------------------- query params
def test_choice_of_a_listed_dataset_round_trips():
    choice = DatasetChoice.from_params({"dataset": "hillstrom", "arm": "mens",
                                        "outcome": "conversion", "page": "x"})
    assert choice == DatasetChoice("hillstrom", (("arm", "mens"), ("outcome", "conversion")))
    assert choice.to_params() == {"dataset": "hillstrom", "arm": "mens",
                                  "outcome": "conversion"}
    assert DatasetChoice.from_params(choice.to_params()) == choice


def test_a_link_to_a_value_no_longer_listed_opens_the_same_data():
    # Hillstrom's "spend>0" is its "conversion" column (tests/test_datasets.py checks the
    # rows); it left the listing, and a link written before opens conversion
    for key in ("hillstrom", "hillstrom_arms"):
        assert "spend>0" not in DATASETS[key].options["outcome"]
        old = DatasetChoice.from_params({"dataset": key, "outcome": "spend>0"})
        assert dict(old.options)["outcome"] == "conversion"
        assert old == DatasetChoice.listed(key, {"outcome": "conversion"})


def test_options_are_typed_and_missing_ones_take_the_default():
    choice = DatasetChoice.from_params({"dataset": "world", "n": ["20000", "5000"]})
    assert choice.options == (("n", 5000), ("random_state", 0))  # the last value counts
    assert type(choice.options[0][1]) is int
    assert DatasetChoice.listed("paper_simulation", {"scenario": "more_control"}).options == (
        ("scenario", "more_control"), ("n", 10_000), ("random_state", 0))


def test_upload_choice_and_no_choice():
    fp = "0123456789abcdef" * 4
    assert DatasetChoice.from_params({"upload": fp}).to_params() == {"upload": fp}
    assert DatasetChoice.from_params({}) is None
    assert DatasetChoice.from_params({"tab": "2"}) is None


@pytest.mark.parametrize("params, match", [
    ({"dataset": "nope"}, r"dataset must be one of 'world', .*; got 'nope'"),
    ({"dataset": "hillstrom", "arm": "kids"},
     r"arm of dataset 'hillstrom' must be one of womens, mens, any; got 'kids'"),
    ({"dataset": "world", "n": "20_000"}, r"n of dataset 'world' must be one of 20000, "),
    ({"upload": "../../etc/passwd"}, "upload must be the 64 hex digits"),
    ({"upload": "a" * 64, "dataset": "world"}, "both a dataset and an upload"),
])
def test_bad_query_params_raise_a_clear_value_error(params, match):
    with pytest.raises(ValueError, match=match):
        DatasetChoice.from_params(params)


def test_dataset_params_cover_every_option_name():
    assert DATASET_PARAMS == {"dataset", "upload", "n", "random_state", "arm", "outcome",
                              "split", "scenario", "n_rows", "file", "file_treatment",
                              "file_outcome"}
    assert all(set(spec.options) <= DATASET_PARAMS for spec in DATASETS.values())


# --------------------------------------------------------------------------- designed share
def test_designed_shares_of_the_listed_datasets():
    assert designed_treated_share("world")[0] == 0.5
    assert designed_treated_share("hillstrom", {"arm": "womens"})[0] == 0.5
    assert designed_treated_share("hillstrom", (("arm", "mens"),))[0] == 0.5
    assert designed_treated_share("hillstrom", {"arm": "any"})[0] == pytest.approx(2 / 3)
    for scenario, share in (("balanced", 0.5), ("more_treated", 0.9), ("more_control", 0.1)):
        assert designed_treated_share("paper_simulation", {"scenario": scenario})[0] == share
    assert designed_treated_share("information", {"split": "train"}) == (None, "")
    assert designed_treated_share(None) == (None, "")


@pytest.mark.parametrize("n_treated, n, expected, text", [
    (524, 1000, 0.5, "50%"), (526, 1000, 0.55, "55%"), (300, 1000, 0.3, "30%"),
    (10, 1000, 0.05, "5%"), (990, 1000, 0.95, "95%"), (1, 1000, 0.05, "5%"),
    # a 1 : 2 split is a third, not 35 % (p = 1e-9 against 35 % at 30,000 rows)
    (667, 1000, 2 / 3, "66.7%"), (10_000, 30_000, 1 / 3, "33.3%"), (340, 1000, 1 / 3, "33.3%"),
    (345, 1000, 0.35, "35%"), (125, 1000, 0.125, "12.5%"), (170, 1000, 1 / 6, "16.7%")])
def test_an_unknown_design_is_the_observed_share_rounded_to_5_percent_or_a_simple_fraction(
        n_treated, n, expected, text):
    t = np.r_[np.ones(n_treated, int), np.zeros(n - n_treated, int)]
    assert assumed_treated_share(t) == pytest.approx(expected)
    share, note, assumed = srm_design(t)
    assert (share, assumed) == (pytest.approx(expected), True)
    assert f"{text} treated is assumed" in note


def test_srm_design_of_the_paper_scenarios_never_cries_wolf():
    for scenario in ("balanced", "more_treated", "more_control"):
        data = load_dataset("paper_simulation", scenario=scenario, n=1000)
        share, note, assumed = srm_design(data.t, "paper_simulation", {"scenario": scenario})
        assert not assumed and "fixes the treated share" in note
        assert not hygiene.srm_test(data.t, expected_treated_share=share).attrs["srm"]
        # the old default (50 %) was a false alarm for the unbalanced scenarios
        assert hygiene.srm_test(data.t).attrs["srm"] == (scenario != "balanced")


def test_hillstrom_arms_match_their_design(shared_data):
    # SOURCES.md: Womens 21,387 / Mens 21,307 / No E-Mail 21,306
    womens = load_dataset("hillstrom", arm="womens", data_dir=shared_data)
    assert (womens.n_treated, womens.n_control) == (21_387, 21_306)
    share, _, assumed = srm_design(womens.t, "hillstrom", {"arm": "womens"})
    assert share == 0.5 and not assumed
    assert not hygiene.srm_test(womens.t, expected_treated_share=share).attrs["srm"]
    both = load_dataset("hillstrom", arm="any", data_dir=shared_data)
    assert both.n_treated == 21_387 + 21_307
    share, _, _ = srm_design(both.t, "hillstrom", {"arm": "any"})
    assert not hygiene.srm_test(both.t, expected_treated_share=share).attrs["srm"]
    assert hygiene.srm_test(both.t, expected_treated_share=0.5).attrs["srm"]


def test_one_bad_cell_in_a_numeric_feature_is_missing_not_a_dropped_column():
    """The fuzz case: one 'abc' (or '-' as a missing marker) in a column of 400 amounts
    dropped the column as "text with more than 20 distinct values"; now the feature is kept
    as numbers with those cells missing, said in a warning. A real text column still goes."""
    rng = np.random.default_rng(2)
    n = 400
    x1 = rng.normal(size=n).round(3).astype(object)
    x1[3], x1[10] = "abc", "-"
    frame = pd.DataFrame({"x1": x1, "x2": rng.random(n), "words": [f"w{i}" for i in range(n)],
                          "treatment": rng.integers(0, 2, n), "visit": rng.integers(0, 2, n)})
    d = read_ab_csv(frame.to_csv(index=False).encode(), treatment="treatment", outcome="visit")
    assert d.X["x1"].dtype == np.float64 and "words" not in d.X.columns
    assert np.isnan(d.X["x1"].to_numpy()[[3, 10]]).all()
    np.testing.assert_allclose(np.delete(d.X["x1"].to_numpy(), [3, 10]),
                               np.delete(x1, [3, 10]).astype(float))
    assert any("'x1' holds numbers except 2 rows ('abc', '-'): read as missing values" in w
               for w in d.warnings)
    x1[:20] = "abc"  # 5 % bad: not a numeric column with a few slips
    d = read_ab_csv(frame.assign(x1=x1).to_csv(index=False).encode(), treatment="treatment",
                    outcome="visit")
    assert "x1" not in d.X.columns


def test_an_outcome_written_as_two_words_is_binary_once_its_response_is_named():
    """The fuzz case: 'bought' / 'none' was read as an amount and refused ("should hold
    numbers"), and as binary refused too, with no way to say which word is a response."""
    from core.data import guess_outcome_kind, outcome_labels

    rng = np.random.default_rng(4)
    n = 400
    bought = rng.random(n) < 0.3
    words = np.where(bought, "bought", "none").astype(object)
    words[7] = np.nan
    frame = pd.DataFrame({"x": rng.random(n), "treatment": rng.integers(0, 2, n),
                          "outcome": words})
    assert guess_outcome_kind(frame["outcome"]) == "binary"
    assert outcome_labels(frame["outcome"]) == ["none", "bought"]  # most frequent first
    for col in (pd.Series(["yes", "no"]), pd.Series([1, 0]), pd.Series(["3", "x"]),
                pd.Series(["a", "b", "c"])):
        assert outcome_labels(col) is None
    content = frame.to_csv(index=False).encode()
    with pytest.raises(DataError, match=r"name the value that is a response \(outcome_value=\)"):
        read_ab_csv(content, treatment="treatment", outcome="outcome")
    d = read_ab_csv(content, treatment="treatment", outcome="outcome", outcome_value=" BOUGHT")
    kept = np.arange(n) != 7
    assert d.n == n - 1 and np.array_equal(d.y, bought[kept].astype(np.int8))
    multi = read_ab_csv(content, treatment="treatment", outcome="outcome", all_arms=True,
                        outcome_value="bought").multiarm
    assert np.array_equal(multi.y, bought[kept].astype(float))
    with pytest.raises(DataError, match="outcome_value= reads a column of two codes"):
        read_ab_csv(frame.assign(outcome=rng.choice(["a", "b", "c"], n)).to_csv(index=False)
                    .encode(), treatment="treatment", outcome="outcome", outcome_value="a")


def test_stray_codes_only_beside_a_true_false_pair():
    """'none' beside 1 and 0 is a stray; but when 'none' outnumbers a small real control arm
    0 (the reviewer's case: 950 × 1, 30 × 'none', 20 × 0), 0 is no stray and the control
    arm is asked for (0 and 'none' both read as control)."""
    from core.data import guess_control, stray_arm_codes, two_arm_defaults

    assert stray_arm_codes(pd.Series(["1"] * 950 + ["0"] * 930 + ["none"] * 20)) == [
        ("none", 20)]
    assert stray_arm_codes(pd.Series([1.0] * 950 + [0.0] * 930 + [2.0] * 20)) == [(2.0, 20)]
    small_control = pd.Series(["1"] * 950 + ["none"] * 30 + ["0"] * 20)
    assert stray_arm_codes(small_control) == []
    assert guess_control(["1", "none", "0"]) is None  # ambiguous: the page asks
    assert stray_arm_codes(pd.Series(["yes"] * 50 + ["no"] * 50 + ["?"] * 3)) == [("?", 3)]
    assert stray_arm_codes(pd.Series(["1"] * 50 + ["0"] * 40 + ["2"] * 10)) == []  # 10 %
    assert two_arm_defaults(["0", "1", "none"]) == (1, 0)


def test_twenty_digit_ids_keep_their_digits_and_name_the_rows():
    """The fuzz case: IDs wider than int64 became float64 (1.2345678901234567e+19), collided,
    and were kept as a feature; now they stay text, exactly, and name the rows."""
    rng = np.random.default_rng(6)
    n = 400
    ids = [str(12345678901234567890 + 7 * i) for i in range(n)]
    frame = pd.DataFrame({"customer_id": ids, "x": rng.random(n),
                          "treatment": rng.integers(0, 2, n), "visit": rng.integers(0, 2, n)})
    d = read_ab_csv(frame.to_csv(index=False).encode(), treatment="treatment", outcome="visit")
    assert list(d.X.columns) == ["x"] and d.id_name == "customer_id"
    assert list(d.ids) == ids  # every digit, all distinct


def test_the_preview_never_overwrites_a_feature_named_like_a_role():
    """The fuzz case: a feature named 'treatment' beside a treatment column mapped from
    another name was replaced by the 0/1 codes in the Data page's preview."""
    from core.data import as_table

    rng = np.random.default_rng(8)
    n = 60
    frame = pd.DataFrame({"treatment": rng.random(n), "grp": rng.integers(0, 2, n),
                          "visit": rng.integers(0, 2, n)})
    d = read_ab_csv(frame.to_csv(index=False).encode(), treatment="grp", outcome="visit",
                    features=["treatment"])
    table = as_table(d, rows=10)
    assert list(table.columns) == ["treatment", "grp", "visit"] and len(table) == 10
    np.testing.assert_allclose(table["treatment"], frame["treatment"][:10])
    np.testing.assert_array_equal(table["grp"], frame["grp"][:10])


def test_the_preview_shows_a_text_coded_treatment_in_its_own_words():
    """An upload coded control / variant: the preview shows the file's codes row by row (0/1
    under the file's column name read as a recoded column); the CSV export keeps 0/1."""
    from core.data import as_table, to_csv_bytes

    rng = np.random.default_rng(9)
    n = 40
    frame = pd.DataFrame({"x": rng.random(n), "arm": rng.choice(["control", "variant"], n),
                          "visit": rng.integers(0, 2, n)})
    d = read_ab_csv(frame.to_csv(index=False).encode(), treatment="arm", outcome="visit")
    table = as_table(d, rows=12)
    assert table["arm"].tolist() == frame["arm"][:12].tolist()
    exported = pd.read_csv(io.BytesIO(to_csv_bytes(d)))
    np.testing.assert_array_equal(exported["arm"], (frame["arm"] == "variant").astype(int))


def test_the_preview_of_hillstrom_names_the_e_mails(shared_data):
    from core.data import as_table, load_hillstrom

    raw = pd.read_csv(shared_data / "hillstrom.csv", usecols=["segment"])
    kept = raw["segment"][raw["segment"] != "Mens E-Mail"].reset_index(drop=True)
    d = load_hillstrom("womens", "visit", data_dir=shared_data, allow_download=False)
    assert as_table(d, rows=50)["segment"].tolist() == kept[:50].tolist()
