"""ui.jobs: what a job box says after Cancel — "Cancelling…" with the button disabled until the
job has stopped, and, in a tab that shared the job with another open tab, that it stopped
following a job that keeps running there."""

from __future__ import annotations

from pathlib import Path

from _apptest import assert_clean
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LAMBDAMART = "LambdaMART uplift (Devriendt et al. 2020)"


def _cancelling_box():
    from core.runs.jobs import JobStatus
    from ui.jobs import draw_job

    job = JobStatus(job_id="j", run_id="r", state="running", label="L", message="Cancelling…",
                    split=2, n_splits=10, round=40, total=100, elapsed=4.0, sessions=("A",),
                    cancelling=True)
    draw_job(job, None, "A", key="cancel_j")


def _status(job_id, state):
    from core.runs.jobs import JobStatus

    return JobStatus(job_id=job_id, run_id="r", state=state, label="L", message="",
                     split=0, n_splits=1, round=0, total=1, elapsed=0.0, sessions=("B",))


def test_the_busy_note_counts_unlisted_unfinished_jobs_only():
    from ui.jobs import busy_elsewhere_note

    every = [_status("a", "running"), _status("b", "queued"), _status("c", "done"),
             _status("d", "queued")]
    assert busy_elsewhere_note(every, {"d"}) == (
        ":material/hourglass_top: The app is busy with 2 jobs not listed here, started in "
        "another tab or on another page (1 running, 1 queued); it works one job at a time, "
        "so a job started here waits for them.")
    assert busy_elsewhere_note(every[:1], set()).endswith(
        "with 1 job not listed here, started in another tab or on another page (1 running); "
        "it works one job at a time, so a job started here waits for it.")
    assert "(2 queued)" in busy_elsewhere_note([every[1], every[3]], set())
    assert busy_elsewhere_note(every, {"a", "b", "d"}) is None  # only a done job left
    assert busy_elsewhere_note([], set()) is None


def test_a_cancelling_job_says_so_and_its_button_is_disabled():
    at = assert_clean(AppTest.from_function(_cancelling_box).run())
    assert [p.proto.text for p in at.get("progress")] == ["Cancelling…, 4 s"]
    assert at.button(key="cancel_j").disabled


def _tab_on_the_train_page() -> AppTest:
    at = assert_clean(AppTest.from_file(APP, default_timeout=60).run())
    at.selectbox(key="data_world_n").set_value(100_000)
    assert_clean(at.button(key="data_load").click().run())
    assert_clean(at.switch_page("pages/train.py").run())
    at.multiselect(key="train_models").set_value([LAMBDAMART])
    # ~47 s here (20 splits of ~2.3 s): it runs for the whole test; 5,000 rows and 10 splits
    # took ~7 s, which a fast machine could end before the test's reruns
    at.radio(key="train_preset").set_value("paper")
    assert_clean(at.radio(key="train_scheme").set_value("repeated").run())
    return assert_clean(at.number_input(key="train_repeats").set_value(20).run())


FOLLOWED_ELSEWHERE = "Stopped following this job; it keeps running for another open tab."


def test_cancel_in_one_of_two_tabs_says_the_job_keeps_running_for_the_other(monkeypatch):
    from ui import common

    a, b = _tab_on_the_train_page(), _tab_on_the_train_page()
    assert_clean(a.button(key="train_go").click().run())
    assert_clean(b.button(key="train_go").click().run())  # the same config: the same job
    sid_a, sid_b = a.session_state["session_id"], b.session_state["session_id"]
    runner = common.runner()
    (job,) = [s.job_id for s in runner.jobs() if not s.is_final]
    try:
        assert runner.status(job).sessions == (sid_a, sid_b)
        monkeypatch.setattr(common, "session_is_open", lambda sid: sid == sid_b)  # B is open
        assert_clean(a.run())
        assert_clean(a.button(key=f"cancel_{job}").click().run())
        for _ in range(2):  # and it stays said on the next reruns, with no Cancel
            assert [i.value for i in a.info if i.value == FOLLOWED_ELSEWHERE] == [
                FOLLOWED_ELSEWHERE]
            assert [x for x in a.button if str(x.key).startswith("cancel_")] == []
            assert_clean(a.run())
        s = runner.status(job)
        assert not s.is_final and s.sessions == (sid_b,) and not s.cancelling
        assert_clean(b.run())  # B still follows it, with its Cancel
        assert FOLLOWED_ELSEWHERE not in [i.value for i in b.info]
        assert not b.button(key=f"cancel_{job}").disabled
        # a third tab does not list B's job, but says the app is busy with it (it read only
        # "No jobs on this dataset yet" while its own Train would have queued)
        c = _tab_on_the_train_page()
        assert not [x for x in c.button if str(x.key) == f"cancel_{job}"]
        captions = " ".join(x.value for x in c.caption)
        assert "No jobs on this dataset yet" in captions
        assert "busy with 1 job not listed here" in captions and "(1 running)" in captions
        assert "busy with" not in " ".join(x.value for x in b.caption)  # B lists its own
    finally:
        runner.cancel(job)
        runner.wait(job, 60)
