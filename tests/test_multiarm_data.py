"""A/B/n data (core.data.multiarm): Hillstrom's three arms against a direct read of the CSV,
the seeded K-arm world against its known effects, and the IPW value of policies on it
against the truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.data import DataError, MultiArmData, load_hillstrom, make_multiarm_world
from core.evaluation import best_arm_policy, policy_value


def test_hillstrom_three_arms_match_the_csv(shared_data):
    raw = pd.read_csv(shared_data / "hillstrom.csv")
    for outcome in ("visit", "spend"):
        d = load_hillstrom(arm="all", outcome=outcome)
        assert d.n == 64_000 and d.arms == ["No E-Mail", "Womens E-Mail", "Mens E-Mail"]
        for k, arm in enumerate(d.arms):
            part = raw[raw["segment"] == arm]
            assert (d.t == k).sum() == len(part)
            assert d.y[d.t == k].sum() == pytest.approx(part[outcome].sum())
    assert d.outcome_kind == "continuous"
    counts = raw["segment"].value_counts()[d.arms].to_numpy()
    assert d.srm()["p_value"] == pytest.approx(stats.chisquare(counts).pvalue)


def test_a_pair_is_todays_two_arm_data(shared_data):
    d = load_hillstrom(arm="all")
    X, y, t = d.pair(1)
    womens = load_hillstrom(arm="womens")
    np.testing.assert_array_equal(y, womens.y)
    np.testing.assert_array_equal(t, womens.t)
    pd.testing.assert_frame_equal(X, womens.X)
    with pytest.raises(ValueError, match="needs arm='all'"):
        load_hillstrom(arm="womens", outcome="spend")


@pytest.mark.parametrize("outcome", ["binary", "spend"])
def test_world_effects_are_what_the_arms_show(outcome):
    d = make_multiarm_world(60_000, n_arms=3, outcome=outcome, random_state=0)
    again = make_multiarm_world(60_000, n_arms=3, outcome=outcome, random_state=0)
    np.testing.assert_array_equal(d.y, again.y)
    assert d.tau.shape == (60_000, 3) and d.n_arms == 3 and d.cost.shape == (3,)
    for k in (1, 2, 3):
        a, c = d.y[d.t == k], d.y[d.t == 0]
        se = np.sqrt(a.var() / a.size + c.var() / c.size)
        assert abs((a.mean() - c.mean()) - d.tau[:, k - 1].mean()) < 4 * se


def test_ipw_value_of_the_true_best_arm_rule_is_within_its_ci_of_the_truth():
    inside, beats = 0, 0
    for seed in range(30):
        d = make_multiarm_world(6_000, n_arms=2, random_state=seed)
        pi = best_arm_policy(d.tau, d.cost)
        # truth: control response + the assigned arm's effect (known in the world)
        p0 = 1 / (1 + np.exp(1.5 - 0.5 * d.X["x2"].to_numpy()))
        truth = np.mean(p0 + np.where(pi > 0, d.tau[np.arange(d.n), np.maximum(pi - 1, 0)], 0))
        v, se = policy_value(pi, d.y, d.t, d.propensity())
        inside += abs(v - truth) <= 1.96 * se
        singles = [policy_value(np.full(d.n, k), d.y, d.t, d.propensity())[0] for k in (1, 2)]
        beats += v > max(singles)
    assert inside >= 25  # ~95 % of 30
    assert beats >= 20  # the best-arm rule usually beats every single arm


def test_bad_experiments_are_refused():
    X = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(DataError, match="have none"):
        MultiArmData(X=X, y=np.array([0, 1, 0, 1]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a", "b"])
    with pytest.raises(DataError, match="outcome column cannot be used"):
        MultiArmData(X=X, y=np.array(["a", "b", "c", "d"]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a"])
    with pytest.raises(DataError, match="cost must be"):
        MultiArmData(X=X, y=np.array([0, 1, 0, 1]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a"], cost=[-1.0])
    with pytest.raises(DataError, match="summing to 1"):
        MultiArmData(X=X, y=np.array([0, 1, 0, 1]), t=np.array([0, 1, 0, 1]),
                     arms=["c", "a"], design=[0.5, 0.6])


def test_the_world_is_seeded_by_default_checks_its_design_and_pairs_whole_arms():
    from core.data import make_multiarm_world

    assert np.array_equal(make_multiarm_world(500).y, make_multiarm_world(500).y)
    assert np.array_equal(make_multiarm_world(500).X, make_multiarm_world(500, random_state=0).X)
    for design in ([0.5, 0.5], [0.2, 0.3, 0.6], [0.5, np.nan, 0.5], "equal"):
        with pytest.raises(DataError, match="design must give each of the 3 arms a share"):
            make_multiarm_world(300, design=design)
    world = make_multiarm_world(300, random_state=0)
    X, y, t = world.pair(1)
    assert t.sum() == (world.t == 1).sum() and len(t) == ((world.t == 1) | (world.t == 0)).sum()
    for k in (1.5, 0, 3, "1", True):
        with pytest.raises(ValueError, match="k must be a treatment arm 1…2"):
            world.pair(k)


# --------------------------------------------------------------------------- A/B/n in the app
def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def test_upload_keeping_all_arms_equals_the_loader(shared_data):
    from core.data import read_ab_csv

    raw = (shared_data / "hillstrom.csv").read_bytes()
    for outcome in ("visit", "spend"):
        data = read_ab_csv(raw, treatment="segment", outcome=outcome, all_arms=True,
                           control_value="No E-Mail",
                           features=["recency", "history_segment", "history", "mens",
                                     "womens", "zip_code", "newbie", "channel"])
        ref = load_hillstrom(arm="all", outcome=outcome)
        multi = data.multiarm
        assert multi.arms == ref.arms and multi.outcome_kind == ref.outcome_kind
        np.testing.assert_array_equal(multi.t, ref.t)
        np.testing.assert_allclose(multi.y, ref.y)
        np.testing.assert_array_equal(data.t, ref.t > 0)  # the two-arm view: any e-mail
        np.testing.assert_array_equal(data.y, ref.y > 0)
    assert "continuous" in " ".join(data.warnings)  # spend: the view says it uses spend > 0


def test_the_control_arm_is_found_or_asked_for():
    from core.data.abmapping import frame_to_multiarm

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=300), "y": rng.integers(0, 2, 300),
                          "arm": rng.choice(["control", "offer A", "offer B"], 300)})
    d = frame_to_multiarm(frame, treatment="arm", outcome="y")
    assert d.arms[0] == "control" and sorted(d.arms[1:]) == ["offer A", "offer B"]
    for k, arm in enumerate(d.arms):
        assert (d.t == k).sum() == (frame["arm"] == arm).sum()
    frame["arm"] = frame["arm"].map({"control": "a", "offer A": "b", "offer B": "c"})
    with pytest.raises(DataError, match="say which one is the control arm"):
        frame_to_multiarm(frame, treatment="arm", outcome="y")
    assert frame_to_multiarm(frame, treatment="arm", outcome="y", control_value="c").arms[0] == "c"


def test_without_a_design_the_srm_test_uses_rounded_observed_shares():
    """An upload gives no design: the propensities take the observed shares when the arms
    differ, but the sample ratio test compares the counts with the observed shares rounded
    to 5 % or a simple fraction (as the one-treatment test does), not with the counts' own
    shares (p = 1 whatever the counts)."""
    from core.data.abmapping import frame_to_multiarm

    arms = np.repeat(["control", "coupon", "discount"], [2363, 1830, 1807])
    frame = pd.DataFrame({"x": np.arange(arms.size) % 7, "y": np.arange(arms.size) % 2,
                          "arm": arms})
    d = frame_to_multiarm(frame, treatment="arm", outcome="y")
    assert d.design_assumed
    np.testing.assert_allclose(d.design, [2363 / 6000, 1830 / 6000, 1807 / 6000])
    srm = d.srm()
    np.testing.assert_allclose(srm["expected_share"], [0.4, 0.3, 0.3])
    want = stats.chisquare([2363, 1830, 1807], [2400, 1800, 1800])
    assert srm["assumed"] and srm["p_value"] == pytest.approx(want.pvalue)
    assert want.pvalue < 0.9  # the counts differ from their rounded shares
    table = d.arm_table()
    assert list(table.columns[:3]) == ["rows", "share", "assumed share"]
    # each arm's mean outcome minus the control's; none on the control's own row
    y, codes = frame["y"].to_numpy(), frame["arm"].to_numpy()
    control = y[codes == d.arms[0]].mean()
    assert np.isnan(table["vs control"].iloc[0])
    for arm in d.arms[1:]:
        assert table.loc[arm, "vs control"] == pytest.approx(y[codes == arm].mean() - control)
    assert d.subset(np.arange(0, arms.size, 10)).design_assumed
    # equal thirds round to 35 % each, scaled back to a third: the usual equal-split test
    equal = frame_to_multiarm(frame.assign(arm=np.resize(["control", "b", "c"], arms.size)),
                              treatment="arm", outcome="y")
    np.testing.assert_allclose(equal.srm()["expected_share"], [1 / 3] * 3)
    # splits of 1 : 2 and 1 : 2 : 3 are tested against thirds and sixths, not 35 % / 65 %
    # (p = 1.4e-9 at 30,000 rows) or 15 % / 35 % / 50 %
    for counts in ([10_000, 20_000], [10_000, 20_000, 30_000]):
        split = np.repeat(["control", "b", "c"][:len(counts)], counts)
        d = frame_to_multiarm(pd.DataFrame({"x": np.arange(split.size) % 7,
                                            "y": np.arange(split.size) % 2, "arm": split}),
                              treatment="arm", outcome="y")
        srm = d.srm()
        assert sorted(srm["counts"]) == counts
        np.testing.assert_allclose(srm["expected_share"], srm["counts"] / sum(counts))
        assert srm["p_value"] == pytest.approx(1.0)
    # a design given with the data is tested as it is
    given = frame_to_multiarm(frame, treatment="arm", outcome="y", design=[0.5, 0.25, 0.25])
    assert not given.design_assumed
    assert given.srm()["p_value"] == pytest.approx(
        stats.chisquare([2363, 1830, 1807], [3000, 1500, 1500]).pvalue)


def test_bad_uploads_with_all_arms_give_clear_messages():
    from core.data import read_ab_csv

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=200), "spend": rng.gamma(2, 3, 200).round(2),
                          "arm": rng.choice(["none", "A", "B"], 200)})
    text = frame.astype({"spend": object})
    text.loc[17, "spend"] = "n/a!"
    with pytest.raises(DataError, match=r"'spend' should hold numbers .* data row 18 holds 'n/a!'"):
        read_ab_csv(_csv(text), treatment="arm", outcome="spend", all_arms=True,
                    control_value="none")
    lonely = frame.copy()
    lonely.loc[0, "arm"] = "C"  # an arm with one row
    with pytest.raises(DataError, match="Arm 'C' of column 'arm' has 1 row"):
        read_ab_csv(_csv(lonely), treatment="arm", outcome="spend", all_arms=True,
                    control_value="none")
    with pytest.raises(DataError, match="not a binary outcome"):  # override to binary
        read_ab_csv(_csv(frame), treatment="arm", outcome="spend", all_arms=True,
                    control_value="none", outcome_kind="binary")
    with pytest.raises(DataError, match="holds one value only"):
        read_ab_csv(_csv(frame.assign(spend=5.0)), treatment="arm", outcome="spend",
                    all_arms=True, control_value="none")
    with pytest.raises(DataError, match="name only the control arm"):
        read_ab_csv(_csv(frame), treatment="arm", outcome="spend", all_arms=True,
                    treatment_value="A")


def test_a_feature_picked_as_the_treatment_is_refused_with_a_clear_message():
    # An age column (63 values, each in 5-15 rows) is not the arm each row was assigned to:
    # refused before any arm is built; 20 arms (MAX_ARMS) are still an A/B/n test.
    from core.data import MAX_ARMS, check_arm_count, read_ab_csv

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"age": rng.integers(18, 81, 600), "income": rng.normal(size=600),
                          "bought": rng.integers(0, 2, 600)})
    assert frame["age"].nunique() > MAX_ARMS
    with pytest.raises(DataError, match=r"'age' has \d+ distinct values .* does not look like "
                                        "a treatment column"):
        read_ab_csv(_csv(frame), treatment="age", outcome="bought", all_arms=True,
                    control_value=int(frame["age"].iloc[0]))
    with pytest.raises(DataError, match="at most 20 arms"):
        check_arm_count(frame["age"], "age")
    with pytest.raises(DataError, match="does not look like a treatment column"):  # two arms
        read_ab_csv(_csv(frame), treatment="age", outcome="bought",
                    treatment_value=int(frame["age"].iloc[0]),
                    control_value=int(frame["age"].iloc[1]))
    arms = frame.assign(arm=np.arange(600) % MAX_ARMS)
    check_arm_count(arms["arm"], "arm")  # 20 arms: fine
    data = read_ab_csv(_csv(arms), treatment="arm", outcome="bought", all_arms=True,
                       control_value=0)
    assert len(data.multiarm.arms) == MAX_ARMS


def test_a_two_arm_revenue_test_is_read_as_continuous():
    from core.data import read_ab_csv
    from core.data.abmapping import guess_outcome_kind

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.normal(size=400), "t": rng.integers(0, 2, 400)})
    frame["revenue"] = np.where(rng.random(400) < 0.3, rng.gamma(2, 10, 400), 0.0)
    assert guess_outcome_kind(frame["revenue"]) == "continuous"
    assert guess_outcome_kind(frame["t"]) == "binary"
    data = read_ab_csv(_csv(frame), treatment="t", outcome="revenue",
                       outcome_kind="continuous")
    assert data.multiarm.arms == ["0", "1"] and data.multiarm.outcome_kind == "continuous"
    np.testing.assert_allclose(data.multiarm.y, frame["revenue"])
    # Another amount with the same "revenue > 0" is other data: the fingerprints differ.
    other = read_ab_csv(_csv(frame.assign(revenue=frame["revenue"] * 2)), treatment="t",
                        outcome="revenue", outcome_kind="continuous")
    np.testing.assert_array_equal(other.y, data.y)
    assert other.fingerprint() != data.fingerprint()
    assert list(data.value_columns()) == ["revenue"]  # the file's name, not "outcome amount"


def test_two_arms_of_an_amount_outcome_drop_the_other_arms_rows():
    from core.data import read_ab_csv

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(size=300), "arm": rng.choice(["none", "A", "B"], 300),
                          "spend": np.where(rng.random(300) < 0.3, rng.gamma(2, 5, 300), 0.0)})
    frame.loc[5, "spend"] = np.nan  # a gap in a kept arm's row is still named by its row
    kept = frame["arm"].isin(["B", "none"]).to_numpy()
    data = read_ab_csv(_csv(frame), treatment="arm", outcome="spend", outcome_kind="continuous",
                       treatment_value="B", control_value="none")
    good = kept & frame["spend"].notna().to_numpy()
    assert data.multiarm.arms == ["none", "B"] and data.n == good.sum()
    np.testing.assert_allclose(data.multiarm.y, frame["spend"][good])
    np.testing.assert_array_equal(data.t, (frame["arm"][good] == "B").astype(int))
    dropped = int((frame["arm"] == "A").sum())
    assert any(w.startswith(f"Dropped {dropped} rows whose 'arm' is neither the treatment "
                            "('B') nor the control ('none')") for w in data.warnings)
    gap = "with a missing value in 'arm' or 'spend' (data rows 6)"
    assert any(gap in w for w in data.warnings) == bool(kept[5])
    assert data.source_columns["treatment_value"] == "B"
    assert list(data.value_columns()) == ["spend"]


def test_upload_with_all_arms_is_stored_and_reopened(tmp_path):
    from core.data import load_upload, read_ab_csv, save_upload

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(size=300), "spend": rng.gamma(2, 3, 300),
                          "arm": rng.choice(["none", "A", "B"], 300)})
    content = _csv(frame)
    mapping = {"treatment": "arm", "outcome": "spend", "control_value": "none",
               "all_arms": True, "outcome_kind": "continuous"}
    data = read_ab_csv(content, name="abn.csv", **mapping)
    save_upload(data, content, name="abn.csv", mapping=mapping, root=tmp_path)
    back = load_upload(data.fingerprint(), root=tmp_path)
    assert back.fingerprint() == data.fingerprint() and back.multiarm.arms == data.multiarm.arms
    np.testing.assert_allclose(back.multiarm.y, data.multiarm.y)


def test_balance_per_arm_is_the_two_arm_balance_of_each_pair():
    from core.data.hygiene import covariate_balance

    d = make_multiarm_world(3_000, n_arms=3, random_state=0)
    table = d.balance()
    assert list(table.columns) == [f"SMD {a}" for a in d.arms[1:]]
    for k in (1, 2, 3):
        X, _, t = d.pair(k)
        np.testing.assert_allclose(table[f"SMD {d.arms[k]}"].to_numpy(),
                                   covariate_balance(X, t)["smd"].to_numpy())


def test_listed_abn_datasets_and_their_two_arm_view():
    from core.data import load_dataset
    from core.data.selection import designed_treated_share

    w = load_dataset("multiarm_world", n=10_000)
    ref = make_multiarm_world(10_000, n_arms=3, random_state=0)
    np.testing.assert_array_equal(w.t, ref.t > 0)
    # The pooled effect of "any treatment" is the design-weighted mean of the arms' effects.
    np.testing.assert_allclose(w.tau, ref.tau.mean(axis=1))
    assert designed_treated_share("multiarm_world")[0] == 0.75
    assert w.subset(np.arange(10)).multiarm.n == 10


def test_guess_control_reads_names_and_a_zero_code():
    from core.data import guess_control

    assert guess_control([2, 0, 1]) == 0  # a code of 0 is an answer, not "none found"
    assert guess_control(["Offer A", "No E-Mail", "Offer B"]) == "No E-Mail"
    assert guess_control(["holdout", "a"]) == "holdout"
    assert guess_control(["a", "b", "c"]) is None
    assert guess_control(["control", "no"]) is None  # two candidates: ask


def test_per_arm_runs_resolve_every_kind_of_dataset_choice(tmp_path):
    from core.data import DataError, DatasetChoice, load_ab_file, make_criteo_like
    from core.runs.multiarm_runs import load_multiarm

    world = load_multiarm({"dataset": "multiarm_world", "n": "10000"})
    assert world.multiarm.arms == ["control", "arm 1", "arm 2", "arm 3"]
    d = make_criteo_like(2_000, random_state=0)
    path = tmp_path / "ab.parquet"
    d.X.assign(treatment=d.t, visit=d.y).to_parquet(path)
    choice = DatasetChoice(file=(str(path), "treatment", "visit"))
    assert choice.load().fingerprint() == load_ab_file(
        path, treatment="treatment", outcome="visit").fingerprint()
    with pytest.raises(DataError, match="two-arm A/B test"):
        load_multiarm(choice.to_params())


def test_an_amount_with_only_the_treated_arm_named_takes_the_other_code_as_control():
    # As for a 0/1 outcome: red / blue, treatment_value='red', no control_value (it was
    # refused: 'say which one is the control arm')
    from core.data import read_ab_csv

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"x": rng.normal(size=200), "arm": rng.choice(["red", "blue"], 200),
                          "spend": np.where(rng.random(200) < 0.3, rng.gamma(2, 5, 200), 0.0)})
    data = read_ab_csv(_csv(frame), treatment="arm", outcome="spend", outcome_kind="continuous",
                       treatment_value="red")
    assert data.multiarm.arms == ["blue", "red"]
    np.testing.assert_array_equal(data.t, (frame["arm"] == "red").astype(int))
    with pytest.raises(DataError, match="other arm is ambiguous"):  # two others: which?
        read_ab_csv(_csv(frame.assign(arm=rng.choice(["red", "blue", "green"], 200))),
                    treatment="arm", outcome="spend", outcome_kind="continuous",
                    treatment_value="red")
