"""Runs are keyed by run id; labels are only for people (core.runs.views)."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import make_uplift_world
from core.runs.presets import run_label
from core.runs.store import Run, RunConfig, RunStore
from core.runs import views
from core.runs.views import display_labels


def _store_run(store: RunStore, config: RunConfig, data, score_shift: float) -> Run:
    """Write a run with given scores on the holdout test rows (no training needed)."""
    from core.data import make_splits

    train, test = make_splits(data.y, data.t, scheme="holdout", test_size=config.test_size,
                              random_state=config.seed)[0]

    class _NoModel:
        def save_model(self, path):
            path.write_text("{}", encoding="utf-8")

    with store.writer(config) as writer:
        score = data.scores["true effect τ(x)"][test] + score_shift
        writer.add_split(0, test, data.y[test], data.t[test], score, _NoModel())
        writer.commit({"metrics": [], "metrics_mean": {}})
    return store.get(config.run_id())


@pytest.fixture
def two_runs_with_one_label(tmp_path):
    data = make_uplift_world(n=2_000, random_state=0)
    # Same model, trees, split and seed: only the learning rate differs (not in the label).
    configs = [RunConfig.for_data(data, "TwoModel", {"n_estimators": 100, "learning_rate": lr})
               for lr in (0.1, 0.05)]
    assert run_label(configs[0]) == run_label(configs[1])
    assert configs[0].run_id() != configs[1].run_id()
    store = RunStore(tmp_path)
    return [_store_run(store, c, data, shift) for c, shift in zip(configs, (0.0, 1.0))]


def test_equal_labels_are_made_unique_with_the_run_id(two_runs_with_one_label):
    runs = two_runs_with_one_label
    labels = display_labels(runs)
    assert set(labels) == {r.run_id for r in runs}
    assert len(set(labels.values())) == 2
    for run in runs:
        assert labels[run.run_id] == f"{run_label(run.config)} · #{run.run_id[:6]}"


def test_unique_labels_are_left_alone(two_runs_with_one_label):
    run = two_runs_with_one_label[0]
    assert display_labels([run]) == {run.run_id: run_label(run.config)}


def test_two_runs_with_one_label_keep_their_own_scores(two_runs_with_one_label):
    runs = two_runs_with_one_label
    _, _, _, scores = views.test_scores(runs)
    assert len(scores) == 2  # neither overwrote the other
    a, b = (scores[display_labels(runs)[r.run_id]] for r in runs)
    np.testing.assert_allclose(b - a, 1.0)


def test_paired_display_states_the_bootstrap_resolution_of_a_zero_p_value():
    import pandas as pd

    paired = pd.DataFrame({"ranker": ["A", "B"], "reference": "R", "cutoff": [0.3, 0.3],
                           "difference": [0.0012, float("nan")], "ci_low": [0.0004, float("nan")],
                           "ci_high": [0.002, float("nan")], "p_value": [0.0, float("nan")],
                           "verdict": ["better than R at 95 %", "undefined"]})
    shown = views.paired_display(paired, cutoff=0.3, n_boot=500)
    assert shown.loc["A", "p-value"] == f"p < {2 / 500:.3g}"  # resolution 2/B, not "< 0.001"
    assert shown.loc["A", "verdict"] == "better than the reference at 95 %"
    assert shown.loc["B", "p-value"] == "—" and shown.loc["B", "95 % CI"] == "—"


def test_narrow_intervals_get_the_decimals_that_show_them():
    # at millions of test rows a paired interval is ~1e-4 wide: four decimals would print
    # "-0.0000" and "[-0.0001, 0.0000]"; two significant digits of the width need five
    import pandas as pd

    paired = pd.DataFrame({"ranker": ["A"], "reference": "R", "cutoff": [0.3],
                           "difference": [-0.000012], "ci_low": [-0.000071],
                           "ci_high": [0.000043], "p_value": [0.64],
                           "verdict": ["not distinguishable from R at 95 %"]})
    shown = views.paired_display(paired, cutoff=0.3, n_boot=500)
    # two significant digits of the difference itself (six decimals, the most for shares)
    assert shown.loc["A", "difference to reference"] == "-0.000012"
    assert shown.loc["A", "95 % CI"] == "[-0.000071, 0.000043]"
    # a bound that the table's decimals would print as -0.0000 keeps two significant digits
    # (Hillstrom: "[-0.0000, 0.0022]" beside p = 0.052)
    near = paired.assign(difference=0.00064, ci_low=-0.000005, ci_high=0.0022, p_value=0.052)
    shown = views.paired_display(near, cutoff=0.3, n_boot=500)
    assert shown.loc["A", "difference to reference"] == "0.00064"
    assert shown.loc["A", "95 % CI"] == "[-0.000005, 0.00220]"
    wide = paired.assign(difference=0.0123, ci_low=0.004, ci_high=0.02)
    assert views.paired_display(wide, cutoff=0.3).loc["A", "95 % CI"] == "[0.0040, 0.0200]"


def test_counts_of_responders_are_not_shown_to_four_decimals():
    # an absolute definition's AUUC counts responders (189.26...): least=1 shows one
    # decimal, unless the spread needs more; shares of an arm keep four
    import pandas as pd

    summary = pd.DataFrame({"AUUC@30%": [189.26201, 144.73659], "sd@30%": [np.nan, np.nan]},
                           index=pd.Index(["A", "Random targeting"], name="ranker"))
    summary.attrs["n_splits"] = 1
    assert views.auuc_display(summary, least=1).loc["A", "AUUC@30%"] == "189.3"
    assert views.auuc_display(summary).loc["A", "AUUC@30%"] == "189.2620"
    boot = pd.DataFrame({"ranker": ["A"], "cutoff": [0.3], "ci_low": [189.251],
                         "ci_high": [189.262]})  # 0.011 wide: three decimals show it
    shown = views.auuc_display(summary, boot, least=1)
    assert shown.loc["A", "95 % CI @30%"] == "[189.251, 189.262]"
    paired = pd.DataFrame({"ranker": ["A"], "reference": "R", "cutoff": [0.3],
                           "difference": [44.5254], "ci_low": [30.11], "ci_high": [58.9],
                           "p_value": [0.001], "verdict": ["better than R at 95 %"]})
    assert views.paired_display(paired, cutoff=0.3, least=1).loc[
        "A", "difference to reference"] == "44.5"
    # a small count keeps two significant digits (0.042 responders is not "0.0")
    small = summary.assign(**{"AUUC@30%": [0.0421, 189.26201]})
    assert views.auuc_display(small, least=1).loc["A", "AUUC@30%"] == "0.042"
    assert views.paired_display(paired.assign(difference=0.0042, ci_low=-0.3, ci_high=0.3),
                                cutoff=0.3, least=1).loc["A", "difference to reference"] \
        == "0.0042"


def test_runs_of_different_split_counts_are_said_to_be_compared_on_the_shared_ones():
    from types import SimpleNamespace

    from core.runs.views import mixed_splits_note

    three, one = SimpleNamespace(n_splits=3), SimpleNamespace(n_splits=1)
    assert mixed_splits_note([three, three]) is None
    note = mixed_splits_note([three, one, three])
    assert note.startswith("The runs were trained on different numbers of splits (1 and 3)")
    assert "the chart and every table compare them on the 1 test split they share (the " \
        "first 1); a run's other splits are left out." in note
    assert "on the 2 test splits they share" in mixed_splits_note(
        [three, SimpleNamespace(n_splits=2)])


def test_rankers_that_score_every_row_alike_are_found():
    from core.evaluation.across_splits import TestSplit
    from core.runs.views import constant_rankers

    y, t = np.array([0, 1, 1, 0]), np.array([1, 1, 0, 0])
    splits = [TestSplit(y, t, {"flat": np.zeros(4), "real": np.array([.1, .2, .3, .4]),
                               "flat in one split": np.ones(4)}),
              TestSplit(y, t, {"flat": np.full(4, 2.0), "real": np.array([.4, .3, .2, .1]),
                               "flat in one split": np.array([0., 1., 0., 1.])})]
    assert constant_rankers(splits) == ["flat"]


def test_the_auuc_download_numbers_splits_from_1_and_names_the_definition():
    import io

    import pandas as pd

    from core.runs.views import auuc_csv

    per_split = pd.DataFrame({"split": [0, 0, 1, 1], "ranker": ["A", "B", "A", "B"],
                              "AUUC@30%": [0.1, 0.2, 0.3, 0.4]})
    back = pd.read_csv(io.BytesIO(auuc_csv(per_split, "qini_sep_abs")))
    assert back["split"].tolist() == [1, 1, 2, 2]
    assert set(back["definition"]) == {"qini_sep_abs"}
    assert back["AUUC@30%"].tolist() == [0.1, 0.2, 0.3, 0.4]


def test_a_value_the_same_on_every_split_shows_without_plus_minus_zero():
    # stratified splits give every test split the same arm and response counts, so the
    # baselines' AUUC is the same on each: "0.0198", not "0.0198 ± 0.0000"; an sd that is
    # zero up to rounding neither shows nor asks for 8 decimals
    import pandas as pd

    summary = pd.DataFrame(
        {"AUUC@30%": [0.02912, 0.0198, 0.1294], "sd@30%": [0.0012, 0.0, 1e-19]},
        index=pd.Index(["A", "Random targeting", "Perfect (oracle)"], name="ranker"))
    summary.attrs["n_splits"] = 10
    shown = views.auuc_display(summary)["AUUC@30%"]
    assert shown.tolist() == ["0.0291 ± 0.0012", "0.0198", "0.1294"]
    summary.attrs["n_splits"] = 1  # one split: no sd is shown at all
    assert views.auuc_display(summary)["AUUC@30%"].tolist() == ["0.0291", "0.0198", "0.1294"]


def test_auuc_of_a_rare_outcome_keeps_two_significant_digits():
    # Hillstrom's conversion (0.6 % of customers): AUUC@10 % under a relative definition is
    # ~5e-5 of an arm, which four decimals print as "0.0000"; two significant digits of the
    # smallest value need six decimals, and no more than six (least + 2)
    import pandas as pd

    values = {"AUUC@10%": [0.0000483, 0.0000152], "AUUC@100%": [0.0015851, 0.0007520]}
    summary = pd.DataFrame(values, index=pd.Index(["A", "Random targeting"], name="ranker"))
    summary.attrs["n_splits"] = 1
    shown = views.auuc_display(summary)
    assert shown.loc["A", "AUUC@10%"] == "0.000048"
    assert shown.loc["Random targeting", "AUUC@10%"] == "0.000015"
    assert shown.loc["A", "AUUC@100%"] == "0.001585"
    tiny = summary.assign(**{"AUUC@10%": [3e-9, 0.0000152]})  # 0 up to rounding: capped
    assert views.auuc_display(tiny).loc["A", "AUUC@10%"] == "0.000000"
    # a common outcome keeps Compare's four decimals
    common = summary.assign(**{"AUUC@10%": [0.0123, 0.0048], "AUUC@100%": [0.0452, 0.0452]})
    assert views.auuc_display(common).loc["A", "AUUC@10%"] == "0.0123"


def test_ranks_table_shows_enough_decimals_to_tell_ranked_values_apart():
    # Qini joint absolute: 12.105 and 12.099 responders were "12.1 (rank 1)" and "12.1 (rank
    # 2)"; two decimals separate them; a row whose values differ at its usual decimals keeps
    # them
    import pandas as pd

    ranks = pd.DataFrame({"AUUC A": [12.105, 0.00412], "rank A": [1, 1],
                          "AUUC B": [12.099, 0.00321], "rank B": [2, 2],
                          "winner": ["A", "A"], "winner changes?": [False, False]},
                         index=["qini_joint_abs", "uplift_sep_rel"])
    shown = views.ranks_display(ranks)
    qini, rel = (views.DEFINITIONS[d].label for d in ranks.index)
    assert shown.loc[qini, "A"] == "12.11 (rank 1)" and shown.loc[qini, "B"] == "12.10 (rank 2)"
    assert shown.loc[rel, "A"] == "0.0041 (rank 1)" and shown.loc[rel, "B"] == "0.0032 (rank 2)"


def test_the_chart_of_runs_with_different_split_counts_reads_the_shared_splits():
    """A run of 3 splits beside one of 1: the tables read the first split only, and the chart
    drew the 3-split mean (report: the table said 0.00379 at 30 %, the line 0.00404)."""
    from types import SimpleNamespace

    from core.evaluation import uplift_curve
    from ui import compare_view as view

    rng = np.random.default_rng(7)

    def split(seed):
        r = np.random.default_rng(seed)
        return SimpleNamespace(y=r.integers(0, 2, 300), t=r.integers(0, 2, 300),
                               score=r.random(300))

    three = SimpleNamespace(n_splits=3, scores=lambda i, s=[split(i) for i in range(3)]: s[i])
    one = SimpleNamespace(n_splits=1, scores=lambda i, s=[split(10)]: s[i])
    ids = (f"three-{rng.integers(1 << 30)}", "one")  # a cache key of this test's own
    drawn = view.bands(ids, [three, one], "uplift_sep_rel", "minmax")
    first = three.scores(0)
    x, v = uplift_curve(first.y, first.t, first.score, definition="uplift_sep_rel")
    grid, low, mid, high = drawn[0]
    np.testing.assert_allclose(mid, np.interp(grid, x, v))  # the first split alone
    np.testing.assert_array_equal(low, high)
