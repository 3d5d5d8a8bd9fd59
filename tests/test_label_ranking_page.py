"""The Label ranking page and its background experiment (core.runs.label_runs).

The page's Table 1 cell for Central-Mal is checked against a cross validation recomputed here:
the same folds, the consensus by mean positions (unranked labels at the mean of the remaining
positions) and the disagreement error counted pair by pair.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pytest
from _apptest import assert_clean, assert_only_error
from sklearn.model_selection import KFold
from streamlit.testing.v1 import AppTest

from core.data import DataError
from core.runs.label_runs import LabelExperiment, make_data, run_experiment

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/label_ranking.py"


def _pairs_wrong(y, p):
    """Brute force: share of the row's known pairs that ``p`` orders wrongly."""
    L = len(y)
    rank = np.where(y > 0, y, L + 1)  # unranked below every ranked label, tied
    known = wrong = 0
    for i, j in itertools.combinations(range(L), 2):
        if rank[i] == rank[j]:
            continue
        known += 1
        wrong += (rank[i] < rank[j]) != (p[i] < p[j])
    return wrong / known if known else np.nan


def _central_cv(Y, folds, seed):
    errs = []
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(Y):
        T = Y[train]
        L = Y.shape[1]
        lt = (T > 0).sum(axis=1, keepdims=True)
        pos = np.where(T > 0, T, (lt + 1 + L) / 2)  # unranked: mean of remaining positions
        order = np.argsort(pos.mean(axis=0), kind="stable")
        p = np.empty(L, dtype=int)
        p[order] = np.arange(1, L + 1)
        errs.append(np.nanmean([_pairs_wrong(y, p) for y in Y[test]]))
    return np.mean(errs), np.std(errs, ddof=1)


def test_experiment_through_the_page_matches_a_recomputed_cross_validation():
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    at.select_slider(key="lr_n").set_value(2_000)
    at.select_slider(key="lr_L").set_value(10)
    at.multiselect(key="lr_methods").set_value(["AMM-rank", "Central-Mal", "LR"])
    at.number_input(key="lr_folds").set_value(2)
    assert_clean(at.run())
    assert_clean(at.button(key="lr_run").click().run())
    deadline = time.time() + 240
    while "lr_last" not in at.session_state and time.time() < deadline:
        time.sleep(1)
        assert_clean(at.run())
    assert "lr_last" in at.session_state, "the experiment did not finish"
    table = next(d.value for d in at.dataframe if "Central-Mal" in d.value.index)
    data = make_data("ad_clicks", {"n_users": 2_000, "n_labels": 10, "nonlinearity": 0.5,
                                   "random_state": 0})
    mean, sd = _central_cv(np.asarray(data.Y), 2, 0)
    assert table.loc["Central-Mal", "with ad views"] == f"{mean:.4f} ± {sd:.4f}"
    assert {"AMM-rank", "LR"} <= set(table.index)
    assert {"paper (Yahoo), without ad views", "paper (Yahoo), with ad views"} <= set(
        table.columns)  # the paper's numbers beside ours, and the caption says not to match
    assert any("3.3M users (not public)" in str(c.value) for c in at.caption)
    # λ and C were tuned per fold on held-out training users, and the page says which
    used = next(d.value for d in at.dataframe if "fold 1" in d.value.columns)
    assert used.loc[("AMM-rank", "with ad views"), "fold 2"].startswith("λ = ")
    assert used.loc[("LR", "without ad views"), "fold 1"].startswith("C = ")
    assert any("test users never choose" in str(c.value) for c in at.caption)
    config = at.session_state["lr_last"][1]
    assert len(config.lam_grid) > 1 and len(config.c_grid) > 1
    # "fixed" is another experiment: one value per grid
    at.radio(key="lr_tune").set_value(False)
    assert_clean(at.run())
    assert any("settings have changed" in str(c.value) for c in at.caption)


def test_run_experiment_tables_are_consistent():
    config = LabelExperiment("mallows", (("n", 600), ("n_labels", 5), ("random_state", 0),
                                         ("top_k", 3)),
                             methods=("AMM-rank", "Central-Mal"), n_folds=2, seed=1,
                             lam_grid=(1e-3, 1.0))
    data = make_data("mallows", dict(config.generator_args))
    meta, frames = run_experiment(config, data)
    t1 = frames["table1"].set_index("method")
    mean, sd = _central_cv(np.asarray(data.Y), 2, 1)
    assert np.isclose(t1.loc["Central-Mal", "eps_dis"], mean)
    assert np.isclose(t1.loc["Central-Mal", "sd"], sd)
    paired = frames["paired"]
    assert len(paired) == 1 and 0 <= paired["p_value"].iloc[0] <= 1
    prf = frames["prf"]
    assert set(prf["k"]) == set(range(1, 6))
    assert (prf["f1"] <= np.maximum(prf["precision"], prf["recall"]) + 1e-12).all()
    assert meta["n_rows"] == 600 and "sweep" not in frames
    tuning = frames["tuning"]  # AMM-rank: two λ in each of the two folds, one chosen
    assert len(tuning) == 4 and tuning.groupby("fold")["chosen"].sum().tolist() == [1, 1]
    assert set(frames["chosen"]["method"]) == {"AMM-rank"}


def test_too_few_users_for_the_folds_is_a_plain_message():
    # scikit-learn's KFold would say "n_splits=5 greater than ... n_samples=3"
    config = LabelExperiment("mallows", (("n", 9), ("n_labels", 4), ("random_state", 0),
                                         ("top_k", 3)),
                             methods=("Central-Mal",), n_folds=5)
    data = make_data("mallows", dict(config.generator_args))
    with pytest.raises(DataError, match="5-fold cross-validation needs at least 10 users "
                                        r"\(two per fold\); this data has 9"):
        run_experiment(config, data)


def test_small_uploads_run_or_say_plainly_why_not():
    """10 users in 5 folds: IB-Mal takes every training user as a neighbour (8 < its 10) and
    matches the consensus of all training users, Central-Mal; a fold whose test users rank
    nothing is a plain message, not "Y_true: every ranking is empty"."""
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    Y = np.array([rng.permutation(4) + 1 for _ in range(10)])
    data = SimpleNamespace(X=rng.normal(size=(10, 2)), Y=Y, groups=None, feature_blocks={},
                           labels=["a", "b", "c", "d"])
    config = LabelExperiment(None, (), methods=("IB-Mal", "Central-Mal"), n_folds=5,
                             data_digest="x")
    t1 = run_experiment(config, data)[1]["table1"].set_index("method")
    assert t1.loc["IB-Mal", "eps_dis"] == pytest.approx(t1.loc["Central-Mal", "eps_dis"])
    Y[:6] = 0  # 6 users rank nothing: some fold's two test users are among them
    with pytest.raises(ValueError, match=r"In fold \d of 5 no test user ranks any label"):
        run_experiment(config, data)


def test_upload_mode_waits_for_a_file_with_instructions():
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run())
    assert_clean(at.switch_page(PAGE).run())
    assert_clean(at.radio(key="lr_source").set_value("upload").run())
    assert any("Upload a CSV" in str(i.value) for i in at.info)


def test_bench_table_reports_every_method_with_the_papers_value():
    from bench import label_ranking as bench

    config = LabelExperiment("ad_clicks", (("n_labels", 5), ("n_users", 400),
                                           ("random_state", 0)),
                             methods=("AMM-rank", "Central-Mal"), n_folds=2,
                             lam_grid=(1e-2, 1.0))
    text = bench._table(config, make_data("ad_clicks", dict(config.generator_args)), "tiny")
    rows = [line for line in text.splitlines() if line.startswith("| AMM-rank")
            or line.startswith("| Central-Mal")]
    assert len(rows) == 4  # two methods × with / without ad views
    assert "| 0.1996 |" in text and "| 0.2957 |" in text  # the paper's Table 1 beside


def test_a_running_experiment_stays_in_view_when_the_settings_change():
    """Changing a setting while an experiment runs keeps its progress and Cancel on the page
    (said to be the earlier settings'); once cancelled, its notice goes with its settings."""
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    at.select_slider(key="lr_n").set_value(20_000)  # all methods, tuned: minutes of work
    assert_clean(at.run())
    assert_clean(at.button(key="lr_run").click().run())
    job = at.session_state["lr_job"][0]
    earlier = "Experiment with earlier settings, still running:"
    assert not any(earlier in str(c.value) for c in at.caption)
    assert at.button(key="lr_cancel")  # its Cancel, beside its own settings
    at.number_input(key="lr_seed").set_value(1)  # another experiment's settings
    assert_clean(at.run())
    assert any(earlier in str(c.value) for c in at.caption)
    assert_clean(at.button(key="lr_cancel").click().run())
    from ui import common

    deadline = time.time() + 120
    while not common.runner().status(job).is_final and time.time() < deadline:
        time.sleep(0.5)
    assert common.runner().status(job).state == "cancelled"
    assert_clean(at.run())
    assert not any(earlier in str(c.value) for c in at.caption)
    assert not any("cancelled" in str(i.value) for i in at.info)  # not beside other settings
    assert any("press **Run experiment**" in str(i.value) for i in at.info)  # what to do
    at.number_input(key="lr_seed").set_value(0)  # back to its settings: how it ended
    assert_clean(at.run())
    assert "Experiment cancelled; nothing was stored." in [str(i.value) for i in at.info]


def _mallows_page(**widgets) -> AppTest:
    """A new session of the page on a small Mallows mixture (Central-Mal, 2 folds, fixed)."""
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    assert_clean(at.radio(key="lr_source").set_value("mallows").run())
    at.select_slider(key="lr_mn").set_value(1_000)
    at.multiselect(key="lr_methods").set_value(["Central-Mal"])
    at.radio(key="lr_tune").set_value(False)
    at.number_input(key="lr_folds").set_value(2)
    for key, value in widgets.items():
        at.number_input(key=key).set_value(value)
    return assert_clean(at.run())


def test_a_new_session_shows_the_stored_result_of_its_settings_without_a_run():
    """A reload (a new session) loses nothing: settings that ran before show their result at
    once, the same table; settings never run still wait for Run experiment."""
    from ui import common

    at = _run(_mallows_page(), ["Central-Mal"])
    assert "lr_last" in at.session_state and not at.error
    table = next(d.value for d in at.dataframe if "Central-Mal" in d.value.index)
    again = _mallows_page()  # nothing clicked
    assert "lr_last" in again.session_state
    assert common.runner().status(again.session_state["lr_job"][0]).state == "cached"
    assert next(d.value for d in again.dataframe if "Central-Mal" in d.value.index).equals(table)
    assert not any("settings have changed" in str(c.value) for c in again.caption)
    other = _mallows_page(lr_seed=1)  # never run
    assert "lr_job" not in other.session_state
    assert any("press **Run experiment**" in str(i.value) for i in other.info)


# ------------------------------------------------------------------ uploads (QA findings)
def _upload_page(content: bytes, **text) -> AppTest:
    """The page in upload mode with ``content`` uploaded and text fields set (key: value)."""
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    assert_clean(at.radio(key="lr_source").set_value("upload").run())
    for key, value in text.items():
        at.text_input(key=key).set_value(value)
    at.file_uploader(key="lr_upload").set_value(("u.csv", content, "text/csv"))
    return at.run()


def _run(at: AppTest, methods, folds=2) -> AppTest:
    """Press Run with ``methods`` and wait until the job has ended (results or failure)."""
    at.multiselect(key="lr_methods").set_value(list(methods))
    at.number_input(key="lr_folds").set_value(folds)
    assert_clean(at.run())
    at.button(key="lr_run").click().run()
    job = at.session_state["lr_job"][0]
    deadline = time.time() + 240
    while time.time() < deadline:
        last = at.session_state["lr_last"] if "lr_last" in at.session_state else None
        if (last is not None and last[0] == job) or at.error:
            return at
        time.sleep(0.5)
        at.run()
    raise AssertionError("the experiment did not end")


def _grouped_csv(n=60, seed=0) -> tuple[bytes, list[str], list[str]]:
    """A CSV with a numeric feature, a group column and rankings of three labels."""
    rng = np.random.default_rng(seed)
    labels = ["autos", "news", "sports"]
    groups, rankings, lines = [], [], ["age,grp,ranking"]
    for i in range(n):
        g = "AB"[i % 2]
        order = rng.permutation(3)[: 1 + i % 3]
        ranking = ">".join(labels[j] for j in order)
        groups.append(g)
        rankings.append(ranking)
        lines.append(f"{20 + i % 40},{g},{ranking}")
    return ("\n".join(lines) + "\n").encode(), groups, rankings


def test_group_column_changes_are_new_experiments_with_the_label_names():
    content, _, rankings = _grouped_csv()
    at = _upload_page(content)  # no group column: 'grp' is text, so it must be named
    assert_only_error(at, "Feature column 'grp' is not numeric")
    at.text_input(key="lr_group_col").set_value("grp")
    assert_clean(at.run())
    at = assert_clean(_run(at, ["Central-Mal", "AG-Mal", "AMM-rank"]))
    info = " ".join(str(i.value) for i in at.info)
    assert "AG-Mal was left out" not in info
    table = at.session_state["lr_last"][3]["table1"]
    assert "AG-Mal" in set(table["method"])
    # label names (the job carries them), not the numbers 1 … L: observed = the CSV's cells
    frames = at.session_state["lr_last"][3]
    assert frames["predictions"]["observed"].tolist() == [r.replace(">", " > ")
                                                         for r in rankings]
    assert frames["hyperplanes"]["label"].tolist() == ["autos", "news", "sports"]
    first = at.session_state["lr_last"][0]
    # the same rows grouped otherwise: a new experiment, not the stored one
    regrouped = content.replace(b",A,", b",C,")
    at.file_uploader(key="lr_upload").set_value(("u.csv", regrouped, "text/csv"))
    at = assert_clean(_run(at, ["Central-Mal", "AG-Mal", "AMM-rank"]))
    assert at.session_state["lr_last"][0] != first
    consensus = next(d.value for d in at.table if d.value.index.name == "group")
    assert set(consensus.index) == {"B", "C"}


def test_a_group_column_set_after_a_run_is_used():
    # the reverse: a run without groups, then a group column -> AG-Mal must run
    content, _, _ = _grouped_csv()
    numeric = content.replace(b",A,", b",1,").replace(b",B,", b",2,")  # grp is a feature
    at = assert_clean(_upload_page(numeric))
    at = assert_clean(_run(at, ["Central-Mal", "AG-Mal"]))
    assert any("AG-Mal was left out" in str(i.value) for i in at.info)
    at.text_input(key="lr_group_col").set_value("grp")
    at = assert_clean(_run(at, ["Central-Mal", "AG-Mal"]))
    assert not any("AG-Mal was left out" in str(i.value) for i in at.info)
    assert "AG-Mal" in set(at.session_state["lr_last"][3]["table1"]["method"])


def test_group_column_equal_to_the_ranking_column_is_refused():
    content, _, _ = _grouped_csv()
    at = _upload_page(content, lr_group_col="ranking")
    assert_only_error(at, "The group column cannot be the ranking column")


def test_position_columns_work_with_the_default_settings_and_warnings_show():
    text = "age,pos_a,pos_b,pos_c\n" + "".join(
        f"{i},{1 + i % 3},{1 + (i + 1) % 3},{1 + (i + 2) % 3}\n" for i in range(20))
    at = assert_clean(_upload_page(text.encode()))
    assert at.metric[1].value == "3"  # labels a, b, c
    latin = "x,ranking\n1,café>news\n2,news\n3,\n4,news>café\n".encode("latin-1")
    at.file_uploader(key="lr_upload").set_value(("l.csv", latin, "text/csv"))
    assert_clean(at.run())
    info = [str(i.value) for i in at.info]
    assert any("read as Latin-1" in m for m in info)
    assert any("1 row(s) rank no label" in m for m in info)


def test_too_few_users_said_on_upload_and_old_failures_go_with_their_data():
    at = _upload_page(b"age,ranking\n31,news>sports\n")
    assert_clean(at)
    assert [str(w.value) for w in at.warning] == [
        "5-fold cross-validation needs at least 10 users (two per fold); this data has 1. "
        "Upload more users (at least 4, for 2 folds)."]
    assert at.button(key="lr_run").disabled
    # six users, one ranking anything: two folds pass the count but the run fails
    at.file_uploader(key="lr_upload").set_value(
        ("b.csv", b"age,ranking\n1,a>b\n2,\n3,\n4,\n5,\n6,\n", "text/csv"))
    at = _run(at.run(), ["Central-Mal"])
    assert at.error, "expected the run to fail"
    content, _, _ = _grouped_csv()
    at.file_uploader(key="lr_upload").set_value(("c.csv", content, "text/csv"))
    at.text_input(key="lr_group_col").set_value("grp")
    assert_clean(at.run())  # the earlier failure is not shown beside other data


def test_sklearn_results_without_the_papers_column_and_with_notes():
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    assert_clean(at.radio(key="lr_source").set_value("sklearn").run())
    at = assert_clean(_run(at, ["Central-Mal", "LR"]))
    table = next(d.value for d in at.dataframe if "Central-Mal" in d.value.index)
    assert not any("Yahoo" in str(c) for c in table.columns)
    captions = " ".join(str(c.value) for c in at.caption)
    assert "Yahoo" not in captions
    assert "Every user ranks all labels here" in captions  # iris: complete rankings
    assert "the lines coincide" in captions
    raw = at.session_state["lr_last"][3]["paired"]
    shown = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    for p, text, verdict in zip(raw["p_value"], shown["p_value"], shown["verdict"]):
        expected = "< 0.001" if p < 0.001 else f"{p:.3f}"
        assert text == expected
        if p < 0.05:
            assert ("(p < 0.001)" if p < 0.001 else f"(p = {expected})") in verdict


# ------------------------------------------------------------------ the page's figures, tables
def test_frequency_chart_shows_whole_names_on_top_most_frequent_first():
    from ui.label_ranking_view import frequency_figure

    data = make_data("ad_clicks", {"n_users": 2_000, "n_labels": 50, "random_state": 0})
    fig = frequency_figure(data)
    bars = list(fig.data[0].y)
    assert fig.data[0].orientation == "h" and sorted(bars) == sorted(data.labels)
    # every name whole, "Telecommunications/Cellular and Wireless" (40 characters) too: the
    # slanted x axis cut it to "Telecommunicatio…"
    assert list(fig.layout.yaxis.ticktext) == bars == list(fig.layout.yaxis.tickvals)
    assert "Telecommunications/Cellular and Wireless" in bars
    freq = (np.asarray(data.Y) > 0).mean(axis=0)
    assert np.allclose(fig.data[0].x, [freq[data.labels.index(b)] for b in bars])
    assert list(fig.data[0].x) == sorted(fig.data[0].x, reverse=True)
    assert fig.layout.yaxis.autorange == "reversed"  # the first bar, the most frequent, on top
    assert fig.layout.height >= 20 * 50  # a row per label


def test_frequency_chart_keeps_one_bar_and_one_tick_per_label_when_long_names_start_alike():
    from core.label_ranking import data as lrdata
    from ui.label_ranking_view import frequency_figure

    stem = "Consumer Goods/Beauty and Personal Care — the"  # 45 characters
    labels = [f"{stem} first", f"{stem} second", "short"]
    Y = np.array([[1, 2, 0], [2, 0, 1], [1, 0, 0]])  # ranked by 3, 1 and 1 of 3 users
    data = lrdata.LabelRankingData(X=np.zeros((3, 1)), Y=Y, labels=labels)
    fig = frequency_figure(data)
    assert list(fig.data[0].y) == labels  # three bars under their full names
    shown = list(fig.layout.yaxis.ticktext)
    # cut as the legends' run names are: within 44 characters, and the two cut names kept
    # apart by their ends (they read alike when only their starts were kept)
    assert shown[2] == "short" and shown[0] != shown[1]
    assert all(len(n) <= 44 and "…" in n and n.startswith("Consumer Goods/") for n in shown[:2])
    assert shown[0].endswith("the first") and shown[1].endswith("the second")
    np.testing.assert_allclose(fig.data[0].x, [1, 1 / 3, 1 / 3])


def test_the_data_charts_are_built_once_per_data_and_follow_a_change_of_data(monkeypatch):
    """A rerun that does not change the data (another fold count) reuses Figure 1; another
    label count draws the new data's bars, and the frequencies are those of that data."""
    import base64
    import json

    import streamlit as st

    from ui import label_ranking_view as view

    st.cache_resource.clear()
    built = []
    original = view.frequency_figure
    monkeypatch.setattr(view, "frequency_figure", lambda d: built.append(1) or original(d))
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    assert len(built) == 1
    at.number_input(key="lr_folds").set_value(3)
    assert_clean(at.run())
    assert len(built) == 1  # the same data: the same figure
    at.select_slider(key="lr_L").set_value(10)
    assert_clean(at.run())
    assert len(built) == 2
    chart = next(c for c in at.get("plotly_chart") if "How often" in c.proto.spec)
    bars = json.loads(chart.proto.spec)["data"][0]  # x as plotly's typed array (base64)
    x = np.frombuffer(base64.b64decode(bars["x"]["bdata"]), dtype=bars["x"]["dtype"])
    data = make_data("ad_clicks", {"n_users": 2_000, "n_labels": 10, "nonlinearity": 0.5,
                                   "random_state": 0})
    freq = (np.asarray(data.Y) > 0).mean(axis=0)
    assert len(bars["y"]) == 10
    assert np.allclose(x, [freq[data.labels.index(b)] for b in bars["y"]])


def test_hyperplanes_chart_keeps_the_label_order_and_lengths_have_whole_ticks():
    import pandas as pd

    from ui.label_ranking_view import hyperplanes_figure, length_figure

    labels = [str(j) for j in range(1, 200)]  # '10' must not come before '2'
    fig = hyperplanes_figure(pd.DataFrame({"label": labels, "hyperplanes": [1] * 199}))
    assert fig.layout.yaxis.type == "category" and fig.data[0].orientation == "h"
    assert list(fig.layout.yaxis.categoryarray) == labels
    top1 = make_data("mallows", {"n": 50, "n_labels": 4, "top_k": 1, "random_state": 0})
    axis = length_figure(top1).layout
    for ax in (axis.xaxis, axis.yaxis):  # every user ranks one label: ticks 0, 1 only
        assert ax.tickformat == ",d" and float(ax.dtick).is_integer() and ax.dtick >= 1
    # 2,000 users, most of them ranking 3 labels: a round step (1, 2 or 5 × 10^k), the
    # smallest such that at most 12 ticks follow 0
    clicks = make_data("ad_clicks", {"n_users": 2_000, "n_labels": 20, "nonlinearity": 0.5,
                                     "random_state": 0})
    largest = np.bincount((np.asarray(clicks.Y) > 0).sum(axis=1)).max()
    round_steps = sorted(m * 10 ** e for e in range(6) for m in (1, 2, 5))
    expected = min(x for x in round_steps if largest / x <= 12)
    assert length_figure(clicks).layout.yaxis.dtick == expected
    assert largest / round_steps[round_steps.index(expected) - 1] > 12


def test_timing_in_the_pages_method_order_and_one_p_value_format():
    import pandas as pd

    from ui.label_ranking_view import paired_display, timing_table

    timing = pd.DataFrame({"method": ["PW-LR", "AG-Mal", "AMM-rank", "AG-Mal"],
                           "features": ["all features"] * 4, "fit_s": [1.0, 2.0, 3.0, 4.0],
                           "predict_s": [0.5, 0.5, 0.5, 1.5]})
    t = timing_table(timing)
    assert [m for m, _ in t.index] == ["AMM-rank", "AG-Mal", "PW-LR"]  # METHODS' order
    assert t["fit (ms)"].tolist() == [3000.0, 3000.0, 1000.0]  # AG-Mal: (2 + 4) / 2 s
    from core.runs.label_runs import _paired

    # verdicts and table write p alike: "p < 0.001" / "p = 0.012", never "p = 0"
    rng = np.random.default_rng(0)
    base = rng.random(200)
    per_row = {("A", "all"): base, ("B", "all"): base + 0.3 + rng.normal(0, 0.01, 200),
               ("C", "all"): base + rng.normal(0.02, 0.1, 200)}
    paired = _paired(per_row)
    p_ab = paired.loc[(paired["method A"] == "A") & (paired["method B"] == "B"), "p_value"]
    assert float(p_ab.iloc[0]) < 1e-100  # a t statistic of ~400: scipy's p is 0
    shown = paired_display(paired)
    assert shown["p_value"].tolist()[0] == "< 0.001"
    assert shown["verdict"].tolist()[0] == "A has the lower error (p < 0.001)"
    for p, verdict in zip(paired["p_value"], paired["verdict"]):
        assert verdict == "not distinguishable at 5 %" if p >= 0.05 else verdict.endswith(
            "(p < 0.001)" if p < 0.001 else f"(p = {p:.3f})")


def test_a_run_with_pw_lr_on_many_labels_is_announced_as_slow():
    from ui.label_ranking_view import slow_methods_note

    note = slow_methods_note(["AMM-rank", "PW-LR"], 200, 5)
    assert "19,900 per fold" in note and "99,500 for the 5 folds" in note  # 200·199/2
    assert slow_methods_note(["AMM-rank", "PW-LR"], 50, 5) is None  # 1,225: the simulator's
    assert slow_methods_note(["AMM-rank", "LR"], 200, 5) is None


def test_the_last_good_upload_survives_a_source_switch_and_a_bad_file():
    content, _, _ = _grouped_csv(n=40)
    at = _upload_page(content.replace(b",A,", b",1,").replace(b",B,", b",2,"))
    assert at.metric[0].value == "40"
    # another source and back: in a browser the uploader forgets its file (here: cleared),
    # the page does not
    assert_clean(at.radio(key="lr_source").set_value("sklearn").run())
    assert_clean(at.radio(key="lr_source").set_value("upload").run())
    assert_clean(at.file_uploader(key="lr_upload").set_value(None).run())
    assert at.metric[0].value == "40"
    assert any("Using the earlier upload **u.csv**" in str(c.value) for c in at.caption)
    # a file that cannot be read: its message, and the earlier data stay in use
    at.file_uploader(key="lr_upload").set_value(("bad.csv", b"age,ranking\n1,a|b|c\n2,b|a\n",
                                                 "text/csv"))
    assert_only_error(at.run(), "seems to join labels with '|'")
    assert at.metric[0].value == "40"
    assert any("Still using the earlier upload **u.csv**" in str(c.value) for c in at.caption)


def test_a_fixed_experiment_says_lambda_and_c_were_fixed_not_tuned():
    """With one-value grids (the page's "fixed" choice) the caption names the fixed values —
    it said "chosen in each fold … held out" — and no empty tuning table is offered."""
    from core.runs.label_runs import FIXED
    from ui.label_ranking_view import tuning_note

    config = LabelExperiment("mallows", (("n", 300), ("n_labels", 4), ("random_state", 0),
                                         ("top_k", 3)),
                             methods=("AMM-rank", "LR"), n_folds=2, seed=0, **FIXED)
    meta, frames = run_experiment(config, make_data("mallows", dict(config.generator_args)))
    note = tuning_note(meta)
    assert "fixed at λ = 0.0001 and C = 1" in note and "held out" not in note.split("(")[0]
    assert len(frames["tuning"]) == 0  # nothing searched, so the page offers no download


def test_each_groups_consensus_is_its_top_five_by_mean_position_in_a_wrapping_table():
    # Figure 2: recomputed by mean positions (unranked labels at the mean of the positions
    # left over), the labels with the lowest mean first, ties in label order.
    at = assert_clean(AppTest.from_file(APP, default_timeout=120).run())
    assert_clean(at.switch_page(PAGE).run())
    at.select_slider(key="lr_n").set_value(2_000)
    at.select_slider(key="lr_L").set_value(10)
    assert_clean(at.run())
    data = make_data("ad_clicks", {"n_users": 2_000, "n_labels": 10, "nonlinearity": 0.5,
                                   "random_state": 0})
    Y, groups, L = np.asarray(data.Y), np.asarray(data.groups), 10
    expected = {}
    for g in sorted(set(groups)):
        rows = Y[groups == g]
        lt = (rows > 0).sum(axis=1, keepdims=True)
        mean_pos = np.where(rows > 0, rows, (lt + 1 + L) / 2).mean(axis=0)
        top = np.argsort(mean_pos, kind="stable")[:5]
        expected[g] = [f"{len(rows):,}", " › ".join(data.labels[j] for j in top)]
    table = at.table[0].value  # a static table: its cells wrap
    assert list(table.columns) == ["users", "top 5 labels, most preferred first"]
    assert {g: list(row) for g, row in table.iterrows()} == expected
    assert len(expected) > 1
