"""AppTest flows of the Train and Compare pages with real background jobs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from _apptest import assert_clean, assert_only_error
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


def job_lines(at) -> list[str]:
    return [m.value for m in at.markdown if str(m.value).startswith("**")]


def wait_for(at, states, timeout=120.0, cancel_when_running=False, clean=True):
    """Rerun the page until every job line ends in one of ``states``.

    Every run must show no exception and, with ``clean``, no ``st.error`` either (a test of a
    failing job passes ``clean=False`` and pins the message itself).
    """
    start = time.time()
    while time.time() - start < timeout:
        at.run()
        if clean:
            assert_clean(at)
        else:
            assert not at.exception, [e.value for e in at.exception]
        lines = job_lines(at)
        if cancel_when_running and any(line.endswith("running") for line in lines):
            cancel = [b for b in at.button if str(b.key).startswith("cancel_")]
            if cancel:
                assert_clean(cancel[0].click().run())
                cancel_when_running = False
                continue
        if lines and all(any(line.endswith(s) for s in states) for line in lines):
            return lines
        time.sleep(0.5)
    raise AssertionError(f"jobs did not reach {states}: {job_lines(at)}")


def small_world(at: AppTest, n: int = 5000) -> AppTest:
    at.selectbox(key="data_world_n").set_value(n)
    return assert_clean(at.button(key="data_load").click().run())


def long_lambdamart(at: AppTest) -> AppTest:
    """The Train page set for a job that outlasts the test: LambdaMART with the paper's
    budget on 20 repeated splits of the 100k-row world (~2.3 s a split here, ~47 s in all;
    5,000 rows and 10 splits took ~7 s, which a fast machine could finish before a test's
    few reruns reach its Cancel)."""
    small_world(at, 100_000)
    assert_clean(at.switch_page("pages/train.py").run())
    at.multiselect(key="train_models").set_value(["LambdaMART uplift (Devriendt et al. 2020)"])
    at.radio(key="train_preset").set_value("paper")
    assert_clean(at.radio(key="train_scheme").set_value("repeated").run())
    return assert_clean(at.number_input(key="train_repeats").set_value(20).run())


def test_train_two_models_then_compare_with_intervals():
    at = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(at.switch_page("pages/train.py").run())
    at.multiselect(key="train_models").set_value(
        ["LambdaMART uplift (Devriendt et al. 2020)", "Flipped label (Lai 2006)"])
    assert_clean(at.button(key="train_go").click().run())
    lines = wait_for(at, ("done",))
    assert len(lines) == 2
    # the runs table lists both runs, and a second click trains nothing (cached)
    assert_clean(at.button(key="train_go").click().run())
    assert all(line.endswith(("done", "cached")) for line in job_lines(at))

    assert_clean(at.switch_page("pages/compare.py").run())
    table = at.dataframe[0].value
    assert {"AUUC@30%", "AUUC@100%"} <= set(table.columns)
    assert_clean(at.toggle(key="cmp_boot").set_value(True).run())
    assert_clean(at.select_slider(key="cmp_nboot").set_value(200).run())
    table = next(d.value for d in at.dataframe if "AUUC@30%" in d.value.columns)
    paired = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert list(paired.columns)[:2] == ["verdict", "difference to reference"]
    for run in table.index[:2]:  # the two runs: AUUC inside its interval (one split)
        low, high = (float(v) for v in table.loc[run, "95 % CI @30%"].strip("[]").split(", "))
        assert low <= float(table.loc[run, "AUUC@30%"]) <= high
    assert any("One split" in str(c.value) for c in at.caption)


def test_cancel_a_long_job():
    at = long_lambdamart(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(at.button(key="train_go").click().run())
    lines = wait_for(at, ("cancelled",), cancel_when_running=True)
    assert "Cancelled" in texts(at.warning)
    assert len(lines) == 1


def test_a_job_of_a_reloaded_tab_is_shown_and_can_be_cancelled():
    # a reload starts a new session: the running job was listed by the old session only
    first = long_lambdamart(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(first.button(key="train_go").click().run())
    again = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()), 100_000)
    assert_clean(again.switch_page("pages/train.py").run())
    lines = wait_for(again, ("cancelled",), cancel_when_running=True)
    assert len(lines) == 1 and lines[0].startswith("**LambdaMART")
    assert "Started in another tab or before a reload" in texts(again.caption)
    assert "Cancelled" in texts(again.warning)
    assert [s.state for s in _runner().jobs() if s.state in ("queued", "running")] == []


def test_a_job_of_another_tab_that_finishes_is_shown_done_once():
    # the page compared the done jobs it lists with this session's only: a finished job of
    # another (reloaded) tab made the page rerun itself every second, for ever
    watcher = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(watcher.switch_page("pages/train.py").run())
    other = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(other.switch_page("pages/train.py").run())
    other.multiselect(key="train_models").set_value(["Flipped label (Lai 2006)"])
    other.number_input(key="train_seed").set_value(7)
    assert_clean(other.button(key="train_go").click().run())
    lines = wait_for(watcher, ("done",))
    assert lines == [job_lines(watcher)[0]] and "Started in another tab" in texts(
        watcher.caption)
    assert len(watcher.dataframe[0].value) == 1  # the run is in Trained runs
    import json

    # as on Compare: at least 4 decimals, and two significant digits of the smallest value
    # (at most 6)
    config = json.loads(watcher.dataframe[0].proto.columns)
    cols = ["test AUUC@30%", "test AUUC@100%"]
    values = np.abs(watcher.dataframe[0].value[cols].to_numpy(dtype=float))
    smallest = values[values > 0].min()
    decimals = min(6, max(4, 1 - int(np.floor(np.log10(smallest)))))
    assert {config[c]["type_config"]["format"] for c in cols} == {f"%.{decimals}f"}
    assert float(f"{smallest:.{decimals}f}") != 0  # never "0.0000"
    assert_clean(watcher.run())  # and the page stays still


def test_failing_job_shows_a_message_not_an_exception(rng):
    n = 60
    t = [i % 2 for i in range(n)]
    y = [1 if i in (0, 1) else 0 for i in range(n)]  # one responder per arm
    body = "\n".join(f"{a},{b},{c:.3f}" for a, b, c in zip(t, y, rng.normal(size=n)))
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run())
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("tiny.csv", ("treatment,outcome,x\n" + body + "\n").encode(), "text/csv")).run())
    assert_clean(at.button(key="data_use_csv").click().run())
    at.switch_page("pages/train.py").run()
    assert at.button(key="train_go").disabled  # said on the page, so queued here by hand:
    from core.runs.presets import model_params, run_label
    from core.runs.store import RunConfig
    from ui import common

    data = at.session_state["data"]
    model = "Flipped label (Lai 2006)"
    config = RunConfig.for_data(data, model, model_params(model, preset="quick"))
    common.runner().submit(config, data=data, session=at.session_state["session_id"],
                           label=run_label(config), data_name=data.name)
    wait_for(at.run(), ("failed",), clean=False)
    assert_only_error(at, "needs at least 2 rows in every (treatment, outcome) cell")
    assert len(at.error) == 2  # the page's note, and the job's own message


def test_train_cutoff_follows_the_metric():
    """MAP takes no cut-off (the slider is disabled and ignored); ``pcg_cutoff`` always needs
    one, 100 % meaning the whole list.  Both used to fail on the Train page."""
    at = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(at.switch_page("pages/train.py").run())
    at.multiselect(key="train_models").set_value(["LambdaMART uplift (Devriendt et al. 2020)"])
    at.slider(key="train_k").set_value(30)
    assert_clean(at.selectbox(key="train_metric").set_value("map").run())
    assert at.slider(key="train_k").disabled
    assert_clean(at.button(key="train_go").click().run())
    assert_clean(at.selectbox(key="train_metric").set_value("pcg_cutoff").run())
    assert not at.slider(key="train_k").disabled
    assert_clean(at.slider(key="train_k").set_value(100).run())
    assert_clean(at.button(key="train_go").click().run())
    lines = wait_for(at, ("done",))
    assert [line.split(" (")[0] for line in lines] == ["**LambdaMART-MAP",
                                                       "**LambdaMART-PCG_CUTOFF@100%"]


def test_runs_table_lists_a_run_once_its_job_is_done_and_jobs_follow_the_dataset():
    at = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(at.switch_page("pages/train.py").run())
    assert "Dataset: **Uplift world" in texts(at.caption)
    at.multiselect(key="train_models").set_value(["Flipped label (Lai 2006)"])
    assert_clean(at.button(key="train_go").click().run())
    assert not at.dataframe  # still training: no runs table yet
    assert wait_for(at, ("done",)) == [job_lines(at)[0]]
    table = at.dataframe[0].value  # the runs table, without pressing anything
    assert len(table) == 1 and "Flipped label" in table.iloc[0, 0]
    assert at.session_state["train_done"] == {
        s.job_id for s in _runner().jobs() if s.state == "done"}

    # another dataset: its job list hides the world's job unless asked to show all
    assert_clean(at.switch_page("pages/data.py").run())
    at.selectbox(key="data_key").set_value("paper_simulation").run()
    assert_clean(at.button(key="data_load").click().run())
    assert_clean(at.switch_page("pages/train.py").run())
    captions = texts(at.caption)
    assert job_lines(at) == [] and "1 job on other datasets is hidden" in captions
    assert "No jobs on this dataset yet" in captions  # not "No jobs yet" beside a hidden one
    assert not at.dataframe  # no run on this dataset
    assert_clean(at.toggle(key="train_all_jobs").set_value(True).run())
    assert len(job_lines(at)) == 1 and job_lines(at)[0].endswith("done")
    # and named: the world the job was trained on, not only "another dataset"
    assert "On another dataset than the current one: **Uplift world" in texts(at.caption)


def _runner():
    from ui import common

    return common.runner()


def test_a_job_another_open_tab_follows_is_not_listed_nor_cancellable_here():
    from types import SimpleNamespace

    from ui.jobs import listed_jobs

    def job(job_id, sessions, state="running", target=None):
        return SimpleNamespace(job_id=job_id, sessions=sessions, target=target, state=state,
                               is_final=state not in ("queued", "running"), finished=None)

    jobs = [job("mine", ("A",)), job("live tab", ("B",)), job("orphan", ("C",)),
            job("shared", ("B", "C")), job("my simulation", ("A",), target="sim:task"),
            job("orphan per arm", ("C",), target="arms:task"),
            job("lost per arm", (), state="interrupted", target="arms:task")]

    class Runner:  # JobRunner.jobs' filters (tested on the real runner in test_jobs_restart)
        def jobs(self, session=None, *, targets=None):
            return [j for j in jobs if (session is None or session in j.sessions)
                    and (targets is None or j.target in targets)]

    listed, mine = listed_jobs(Runner(), "A", is_open=lambda sid: sid == "B")
    # tab B is open: its jobs are its own business (they stop only from B); C's tab is gone;
    # tasks are another page's (the simulation's even when this tab started it)
    assert [j.job_id for j in listed] == ["mine", "orphan"] and mine == {"mine"}
    # a page that starts the per-arm tasks too lists them alike; a lost one is everybody's
    listed, mine = listed_jobs(Runner(), "A", is_open=lambda sid: sid == "B",
                               targets=(None, "arms:task"))
    assert [j.job_id for j in listed] == ["mine", "orphan", "orphan per arm", "lost per arm"]
    assert mine == {"mine", "lost per arm"}


def test_unbalanced_arms_bring_the_joint_query_advice():
    """|C| = 9|T| (the paper's 'more control' scenario): the Train page advises the joint
    query with Rel labels while LambdaMART would train on separate queries, not after."""
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run())
    at.selectbox(key="data_key").set_value("paper_simulation").run()
    at.selectbox(key="data_paper_simulation_scenario").set_value("more_control")
    assert_clean(at.button(key="data_load").click().run())
    assert_clean(at.switch_page("pages/train.py").run())
    advice = [i.value for i in at.info if "joint" in str(i.value)]
    assert advice and advice[0].startswith("10% of the rows are treated")
    assert_clean(at.radio(key="train_query").set_value("joint").run())
    assert not [i for i in at.info if "joint" in str(i.value)]


def test_train_settings_survive_a_reload_and_a_new_session():
    """A reload is a new session: the Train page starts from the settings last used (saved
    in the runs directory), a value no longer offered gives way to the default."""
    from core.runs.store import RunStore

    at = small_world(assert_clean(AppTest.from_file(APP, default_timeout=60).run()))
    assert_clean(at.switch_page("pages/train.py").run())
    at.multiselect(key="train_models").set_value(["Two-model (Hansotia & Rukstales 2002)"])
    at.radio(key="train_preset").set_value("paper")
    at.selectbox(key="train_labels").set_value("rel")
    assert_clean(at.number_input(key="train_seed").set_value(7).run())
    again = AppTest.from_file(APP, default_timeout=60)
    again.query_params.update(at.query_params)
    assert_clean(again.run())
    assert_clean(again.switch_page("pages/train.py").run())
    assert again.multiselect(key="train_models").value == [
        "Two-model (Hansotia & Rukstales 2002)"]
    assert (again.radio(key="train_preset").value, again.selectbox(key="train_labels").value,
            again.number_input(key="train_seed").value) == ("paper", "rel", 7)
    store = RunStore(os.environ["UPRANK_RUNS_DIR"])
    assert store.settings()["train_seed"] == 7
    store.save_settings({"train_labels": "no longer offered", "train_models": ["gone"]})
    third = AppTest.from_file(APP, default_timeout=60)
    assert_clean(third.run())
    assert_clean(third.switch_page("pages/train.py").run())
    assert third.selectbox(key="train_labels").value == "abs1"
    # the default two models, not an empty choice (the stale value was put back, and saved)
    assert third.multiselect(key="train_models").value == [
        "LambdaMART uplift (Devriendt et al. 2020)", "Flipped label (Lai 2006)"]
    assert store.settings()["train_models"] == third.multiselect(key="train_models").value


def test_data_a_model_cannot_be_trained_on_is_said_once_and_train_is_greyed_out(tmp_path,
                                                                               monkeypatch):
    # One treated responder among 23 rows: every job failed at its split, one red box each.
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path))
    rows = ["1,1,5"] + [f"1,0,{i}" for i in range(9)] + [f"0,{i % 3 == 0:d},{i}"
                                                         for i in range(13)]
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run())
    assert_clean(at.file_uploader(key="data_upload").set_value(
        ("tiny.csv", ("treatment,converted,age\n" + "\n".join(rows) + "\n").encode(),
         "text/csv")).run())
    assert_clean(at.button(key="data_use_csv").click().run())
    at.switch_page("pages/train.py").run()
    assert_only_error(at, "needs at least 2 rows in every (treatment, outcome) cell, one for "
                          "each part; got treated responders: 1.")
    assert len(at.error) == 1 and at.button(key="train_go").disabled
