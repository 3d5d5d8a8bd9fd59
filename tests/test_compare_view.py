"""ui.compare_view's store of the bootstraps: one computation per key at a time, shared by
sessions, least recently used out, a cancelled computation leaves nothing behind."""

from __future__ import annotations

import threading
import time

import pytest

from ui import compare_view
from ui.compare_view import KEPT, _Results


def test_concurrent_callers_of_one_key_wait_for_one_computation():
    store, calls, results = _Results(), [], []

    def compute():
        calls.append(1)
        time.sleep(0.2)  # long enough for the other threads to arrive while it runs
        return "value"

    threads = [threading.Thread(target=lambda: results.append(store.get(("k",), compute)))
               for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1 and results == ["value"] * 3


def test_the_least_recently_used_results_go_first_and_at_most_kept_stay():
    store = _Results()
    for i in range(KEPT):
        store.get((i,), lambda i=i: i)
    assert store.get((0,), lambda: "recomputed") == 0  # used again: now the most recent
    store.get(("new",), lambda: "new")  # one over: the least recently used (1) goes
    assert len(store.results) == KEPT and (1,) not in store.results and (0,) in store.results
    assert set(store.locks) == set(store.results)
    assert store.get((1,), lambda: "again") == "again"


def test_a_cancelled_computation_stores_nothing_and_runs_again():
    store = _Results()

    def cancel():
        raise KeyboardInterrupt  # what a rerun does to the script thread, roughly

    with pytest.raises(KeyboardInterrupt):
        store.get(("k",), cancel)
    assert not store.results and not store.locks
    assert store.get(("k",), lambda: 5) == 5


def test_without_a_bar_the_same_store_and_bound(monkeypatch):
    store = _Results()
    monkeypatch.setattr(compare_view, "_store", lambda: store)
    for i in range(KEPT + 8):
        compare_view._with_progress(("report", i), lambda progress: progress, None)
    assert len(store.results) == KEPT  # the report's computations are bounded too
    assert compare_view._with_progress(("report", KEPT + 7), lambda p: "other", None) is None


def test_the_points_file_holds_the_random_line_the_chart_draws():
    """Compare's points CSV had the runs' curves but not random targeting, which the chart
    draws (Curves' file has its baselines): its two end points are added, 0 and V(1)."""
    import numpy as np

    from core.evaluation.curve_tables import RANDOM
    from ui.charts import band_figure
    from ui.compare_view import points_frame

    x = np.linspace(0, 1, 5)
    bands = {"A": (x, x * 0.01, x * 0.02, x * 0.03)}
    with_line = band_figure(bands, definition="uplift_sep_rel", random_end=0.0125)
    points = points_frame(bands, with_line)
    random = points[points["run"] == RANDOM]
    assert random[["fraction", "low", "mean", "high"]].to_numpy().tolist() == [
        [0.0, 0.0, 0.0, 0.0], [1.0, 0.0125, 0.0125, 0.0125]]
    np.testing.assert_array_equal(points.loc[points["run"] == "A", "mean"], x * 0.02)
    without = band_figure(bands, definition="uplift_sep_rel")  # V(1) undefined: no line
    assert RANDOM not in set(points_frame(bands, without)["run"])
