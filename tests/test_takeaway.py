"""core.runs.takeaway: the plain-words conclusion says what the paired table and the
definition ranks say — numbers, direction, verdict, scope — and nothing else."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.evaluation.compare import bootstrap_auuc, definition_ranks
from core.runs.takeaway import definition_sentence, fmt_p, takeaway
from core.runs.views import paired_display


def paired_frame(rows, reference="B"):
    """A hand-made BootstrapResult.paired() frame: rows of
    (ranker, cutoff, difference, ci_low, ci_high, p_value, verdict)."""
    return pd.DataFrame(
        [{"ranker": r, "reference": reference, "cutoff": c, "difference": d, "ci_low": lo,
          "ci_high": hi, "p_value": p, "verdict": v} for r, c, d, lo, hi, p, v in rows])


@pytest.mark.parametrize("d, lo, hi, p, sentence", [
    # the leader is the larger AUUC; difference and interval are leader − other, with the
    # page's paired-table decimals (two significant digits of the difference, enough for the
    # interval's width): written out by hand
    (0.0041, 0.0012, 0.0070, 0.004,
     "A leads B by 0.0041 AUUC (95 % CI 0.0012 to 0.0070, p = 0.004): A is better."),
    (-0.0052, -0.0081, -0.0017, 0.012,
     "B leads A by 0.0052 AUUC (95 % CI 0.0017 to 0.0081, p = 0.012): A is worse."),
    (0.0016, -0.0007, 0.0044, 0.2,
     "A leads B by 0.0016 AUUC (95 % CI -0.0007 to 0.0044, p = 0.200): the two are not "
     "distinguishable."),
    (-0.0009, -0.0031, 0.0013, 0.46,
     "B leads A by 0.00090 AUUC (95 % CI -0.00130 to 0.00310, p = 0.460): the two are not "
     "distinguishable."),
])
def test_pair_sentence_numbers_and_verdict_come_from_the_frame(d, lo, hi, p, sentence):
    paired = paired_frame([("A", 0.3, d, lo, hi, p, "from compare")])
    text = takeaway(paired, None, cutoff=0.3, reference="B")
    assert text == "At 30 % targeting depth, on one test split, " + sentence
    if lo <= 0 <= hi:
        assert "better" not in text and "worse" not in text


def test_the_row_at_the_cutoff_is_used_and_every_run_gets_a_sentence():
    rows = []
    for cut in (0.1, 0.30000000000000004, 1.0):  # 0.1 + 0.2: matched with np.isclose
        rows += [("A", cut, cut / 10, cut / 20, cut / 5, 0.03, "v"),
                 ("C", cut, -cut / 10, -cut / 5, -cut / 20, 0.0004, "v")]
    text = takeaway(paired_frame(rows), None, cutoff=0.3, reference="B", n_splits=10)
    cut = 0.30000000000000004
    assert text.startswith("At 30 % targeting depth, over 10 repeated splits (mean; intervals "
                           "from the per-split bootstrap pooled), A leads B by "
                           f"{cut / 10:.4f} AUUC (95 % CI {cut / 20:.4f} to {cut / 5:.4f}")
    assert (f"B leads C by {cut / 10:.4f} AUUC (95 % CI {cut / 20:.4f} to {cut / 5:.4f}, "
            "p < 0.001): C is worse.") in text
    assert f"{0.1 / 10:.4f}" not in text and f"{1.0 / 10:.4f}" not in text


def test_p_value_text():
    assert fmt_p(0.0042) == "p = 0.004"
    assert fmt_p(0.00099) == "p < 0.001"
    assert fmt_p(0.0, n_boot=500) == f"p < {2 / 500:.3g}"  # the bootstrap's resolution
    assert fmt_p(0.0, n_boot=5000) == "p < 0.001"
    assert fmt_p(np.nan) == ""


def test_undefined_and_nan_rows_are_said_to_be_undefined():
    paired = paired_frame([("A", 0.3, np.nan, np.nan, np.nan, np.nan, "undefined"),
                           ("C", 0.3, 0.01, np.nan, 0.02, np.nan, "undefined")])
    text = takeaway(paired, None, cutoff=0.3, reference="B")
    assert "the comparison of A with B is undefined" in text
    assert "The comparison of C with B is undefined" in text
    assert "nan" not in text and "better" not in text


def test_a_single_run_has_no_pair():
    rng = np.random.default_rng(0)
    y, t = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    res = bootstrap_auuc(y, t, {"solo": rng.random(300)}, definition="uplift_joint_rel",
                         n_boot=20, random_state=0)
    ranks = definition_ranks(y, t, {"solo": rng.random(300)}, cutoff=0.3)
    text = takeaway(res.paired(), ranks, cutoff=0.3, reference="solo")
    assert text == "Only one run (solo) was compared, so there is no pair to test."


def test_without_bootstrap_the_leader_is_a_point_estimate():
    auuc = {"A": 0.0312, "B": 0.0401, "C": 0.0250}
    text = takeaway(None, None, cutoff=0.5, reference="A", auuc=auuc, n_splits=3)
    assert text.startswith("Intervals were not computed")
    assert (f"At 50 % targeting depth, over 3 repeated splits (mean), B has the highest AUUC "
            f"({auuc['B']:.4f}), ahead of A ({auuc['A']:.4f}) and C ({auuc['C']:.4f}).") in text
    assert "better" not in text and "CI" not in text


def test_without_bootstrap_the_point_estimates_can_come_from_the_ranks():
    ranks = pd.DataFrame({"AUUC A": [0.02, 5.0], "AUUC B": [0.03, 4.0], "winner": ["B", "A"]},
                         index=pd.Index(["uplift_joint_rel", "qini_joint_abs"],
                                        name="definition"))
    text = takeaway(None, ranks, cutoff=0.3, reference="A", definition="qini_joint_abs")
    assert f"A has the highest AUUC ({5.0:.4f}), ahead of B ({4.0:.4f})." in text
    assert text.endswith(definition_sentence(ranks))


def test_definition_sentence_when_the_winner_is_the_same():
    rng = np.random.default_rng(3)
    n = 2000
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.1 + 0.3 * t).astype(int)
    oracle = (2 * t - 1) * (2 * y - 1) + 0.01 * rng.random(n)  # treated responders first
    ranks = definition_ranks(y, t, {"oracle": oracle, "noise": rng.random(n)}, cutoff=0.5)
    assert not ranks["winner changes?"].any()
    assert definition_sentence(ranks) == \
        f"The winner is the same under all six definitions: {ranks['winner'].iloc[0]}."


def test_definition_sentence_when_the_winner_changes():
    ranks = pd.DataFrame({"winner": ["A", "B", "A", None]},
                         index=["uplift_joint_rel", "uplift_sep_abs", "qini_sep_abs", "custom"])
    assert definition_sentence(ranks) == (
        "The winner depends on the definition: A under the joint relative uplift and "
        "separate absolute Qini curves; B under the separate absolute uplift curve. "
        "The AUUC is undefined under custom.")


def test_takeaway_agrees_with_a_real_bootstrap():
    rng = np.random.default_rng(1)
    n = 3000
    t = rng.integers(0, 2, n)
    x = rng.normal(size=n)
    y = (rng.random(n) < 0.1 + 0.15 * t * (x > 0)).astype(int)
    scores = {"good": x + rng.normal(0, 0.3, n), "random": rng.random(n)}
    res = bootstrap_auuc(y, t, scores, definition="uplift_joint_rel", cutoffs=(0.3, 1.0),
                         n_boot=200, random_state=0)
    paired = res.paired("random")
    ranks = definition_ranks(y, t, scores, cutoff=0.3)
    text = takeaway(paired, ranks, cutoff=0.3, reference="random", n_boot=200)
    row = paired[np.isclose(paired["cutoff"], 0.3)].iloc[0]
    # the numbers as the page's paired table shows them (good − random: good leads)
    shown = paired_display(paired, cutoff=0.3).loc["good"]
    low, high = shown["95 % CI"].strip("[]").split(", ")
    assert f"good leads random by {shown['difference to reference']} AUUC" in text
    assert f"95 % CI {low} to {high}" in text
    assert ("good is better" in text) == (row["ci_low"] > 0)
    assert text.endswith(definition_sentence(ranks))


@pytest.mark.parametrize("kwargs, match", [
    ({"reference": "Z"}, r"paired compares against \['B'\], not against the reference 'Z'"),
    ({"cutoff": 0.5}, r"paired has no rows at cutoff 0.5; it holds the cut-offs \[0.3\]"),
    ({"cutoff": 0}, "cutoff must be"),
])
def test_bad_input_is_refused(kwargs, match):
    paired = paired_frame([("A", 0.3, 0.01, 0.0, 0.02, 0.1, "v")])
    with pytest.raises(ValueError, match=match):
        takeaway(paired, None, **{"cutoff": 0.3, "reference": "B", **kwargs})
    with pytest.raises(ValueError, match="paired must be a BootstrapResult.paired"):
        takeaway(paired.drop(columns="verdict"), None, cutoff=0.3, reference="B")


# --------------------------------------------------------------------- against random targeting
#: Report 2 of the stakeholder review at 30 %: both runs' AUUC and intervals, and the Random
#: targeting row of the same AUUC table.
R2_AUUC = {"LambdaMART-PCG": 0.0030, "Flipped label": 0.0002}
R2_CI = {"LambdaMART-PCG": (-0.0007, 0.0071), "Flipped label": (-0.0039, 0.0043)}
R2_RANDOM = 0.0021
NO_MODEL = "No model beats random targeting at 30 % here: do not target by these scores."


def test_no_run_above_random_leads_with_do_not_target():
    paired = paired_frame([("LambdaMART-PCG", 0.3, 0.0028, -0.0010, 0.0072, 0.16,
                            "not distinguishable")], reference="Flipped label")
    text = takeaway(paired, None, cutoff=0.3, reference="Flipped label", auuc=R2_AUUC,
                    random_auuc=R2_RANDOM, intervals=R2_CI)
    assert text.startswith(NO_MODEL)
    # the comparison between the runs comes after, never first
    assert text.index(NO_MODEL) < text.index("LambdaMART-PCG leads Flipped label")
    assert f"AUUC of {R2_RANDOM:.4f} at 30 %" in text
    # above random by point estimate, but the interval reaches down to it: not a win
    assert "LambdaMART-PCG reaches 0.0030 (95 % CI -0.0007 to 0.0071, which includes" in text
    assert "Flipped label 0.0002 (95 % CI -0.0039 to 0.0043; below random targeting)" in text


def test_without_random_the_takeaway_is_unchanged():
    paired = paired_frame([("A", 0.3, 0.0041, 0.0012, 0.0070, 0.004, "v")])
    plain = takeaway(paired, None, cutoff=0.3, reference="B")
    assert takeaway(paired, None, cutoff=0.3, reference="B", auuc={"A": 0.01, "B": 0.006}) \
        == plain
    assert "random" not in plain


@pytest.mark.parametrize("values, intervals, start", [
    # A above with its whole interval; B's interval reaches the random AUUC (0.0018 < 0.0021)
    ({"A": 0.0035, "B": 0.0025}, {"A": (0.0028, 0.0042), "B": (0.0018, 0.0032)},
     "At 30 %, only A beats random targeting; B does not: do not target by its scores."),
    ({"A": 0.0035, "B": 0.0025}, {"A": (0.0028, 0.0042), "B": (0.0022, 0.0032)},
     "Both runs beat random targeting at 30 %."),
    # no intervals: the point estimates decide
    ({"A": 0.0035, "B": 0.0021, "C": 0.0019}, None,
     "At 30 %, only A beats random targeting; B and C do not: do not target by their "
     "scores."),
    ({"A": 0.0015, "B": 0.0021}, None, NO_MODEL),
])
def test_each_run_is_placed_against_random(values, intervals, start):
    text = takeaway(None, None, cutoff=0.3, reference="A", auuc=values, random_auuc=R2_RANDOM,
                    intervals=intervals)
    assert text.startswith(start)


def test_real_bootstrap_against_random_from_a_constant_score():
    """Scores that rank with and against the uplift (and a coin) on a world where only x > 0
    responds to the treatment; random targeting's AUUC is that of a score tying every row."""
    from core.evaluation.curves import auuc

    rng = np.random.default_rng(3)
    n = 3000
    x = rng.normal(size=n)
    t = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.1 + 0.2 * t * (x > 0)).astype(int)
    scores = {"forwards": x, "backwards": -x, "coin": rng.random(n)}
    res = bootstrap_auuc(y, t, scores, definition="uplift_sep_rel", cutoffs=(0.3,),
                         n_boot=200, random_state=0, reference="coin")
    table = res.table().set_index("ranker")
    random_auuc = auuc(y, t, np.zeros(n), definition="uplift_sep_rel", cutoff=0.3)
    assert table.at["backwards", "auuc"] < random_auuc  # the world is built that way
    beats = [r for r in scores if table.at[r, "auuc"] > random_auuc
             and table.at[r, "ci_low"] > random_auuc]
    text = takeaway(res.paired(), None, cutoff=0.3, reference="coin",
                    auuc=table["auuc"].to_dict(), random_auuc=random_auuc,
                    intervals={r: (table.at[r, "ci_low"], table.at[r, "ci_high"])
                               for r in scores})
    assert f"{random_auuc:.4f}" in text
    assert beats == ["forwards"]  # ranks by the effect: clearly above random, the others not
    assert text.startswith("At 30 %, only forwards beats random targeting; backwards and "
                           "coin do not")
    assert "backwards " in text and "below random targeting" in text


def test_random_and_an_interval_bound_read_apart_when_they_differ():
    """The browser walk's case: random 0.00210, the interval's low end 0.00212 — at 4
    decimals both read 0.0021, and 'CI 0.0021 to 0.0045, above random targeting' looked
    like a contradiction. The sentence then takes as many decimals as it needs."""
    from core.runs.takeaway import random_sentence

    close = random_sentence({"A": 0.0033}, 0.00210, cutoff=0.3,
                            intervals={"A": (0.00212, 0.0045)})
    assert "AUUC of 0.00210 at 30 %" in close and "CI 0.00212 to 0.00450" in close
    apart = random_sentence({"A": 0.0033}, 0.00210, cutoff=0.3,
                            intervals={"A": (0.0025, 0.0045)})
    assert "AUUC of 0.0021 at 30 %" in apart and "CI 0.0025 to 0.0045" in apart


def test_a_small_difference_keeps_two_significant_digits_in_the_sentence():
    # the Hillstrom pair of the page's paired table: 0.00064, bound -0.000005 (written out,
    # not through the rule the sentence uses)
    paired = paired_frame([("A", 0.3, 0.00064, -0.000005, 0.0022, 0.052, "v")])
    text = takeaway(paired, None, cutoff=0.3, reference="B")
    assert "A leads B by 0.00064 AUUC (95 % CI -0.000005 to 0.00220, p = 0.052)" in text
