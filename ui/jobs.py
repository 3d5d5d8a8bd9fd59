"""Drawing background jobs (training runs and tasks alike) from the one job runner of
:mod:`core.runs.jobs`: a status box with progress, ETA and Cancel, and a page's job list.
The pages only draw; the runner does the work."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

import streamlit as st

from core.runs.jobs import JobRunner, JobStatus

#: Shown in a tab whose Cancel only detached it from a job another open tab also follows.
FOLLOWED_ELSEWHERE = "Stopped following this job; it keeps running for another open tab."
_DETACHED = "jobs_detached"  # session state: ids of the jobs this session stopped following


def progress_text(job: JobStatus) -> str:
    """One line of progress: queue position, or split/round (training) or the task's step.

    Rounds count the budget the user asked for: a two-model run of 100 rounds reads
    "round 95/100 of the treated-arm model", then "… of the control-arm model" (never
    "95/200"); while the data is loaded and split the line says so ("Loading the data…, 5 s"),
    then "starting…" until the model reports its first round (never "0/0").  After a cancel
    request it reads "Cancelling…" until the job has stopped.  An uplift forest counts trees
    ("tree 42/100"), a boosted model rounds.
    """
    if job.state == "queued":
        return f"queued, position {job.position}"
    if job.cancelling:
        return f"Cancelling…, {job.elapsed:.0f} s"
    eta = f", about {job.eta:.0f} s left" if job.eta is not None else ""
    if job.kind == "task":
        # a dash between the step and the share done: "fold 5/5: C = 1 — 49%", not "C = 1 49%"
        return f"{job.message} — {job.fraction:.0%}, {job.elapsed:.0f} s{eta}"
    split = f"split {max(job.split, 1)}/{job.n_splits}, " if job.n_splits > 1 else ""
    if not job.total:
        if not job.split and job.message:  # setup: the status says which step
            return f"{job.message}, {job.elapsed:.0f} s"
        return f"{split}starting…, {job.elapsed:.0f} s"
    of = ""
    if job.n_parts > 1:
        of = f" of the {job.part_name}" if job.part_name else f" of model {job.part}/{job.n_parts}"
    return f"{split}{job.unit} {job.round}/{job.total}{of}, {job.elapsed:.0f} s{eta}"


def newly_done(jobs: list[JobStatus], seen: set[str]) -> set[str]:
    """Ids of the jobs in ``jobs`` that are "done" but not in ``seen`` (the done jobs the page
    last drew): a training run finished since, so the page's list of runs is out of date."""
    return {job.job_id for job in jobs if job.state == "done"} - set(seen)


def listed_jobs(runner: JobRunner, session: str, *,
                is_open: Callable[[str], bool] = lambda sid: False,
                targets: tuple[str | None, ...] = (None,)
                ) -> tuple[list[JobStatus], set[str]]:
    """The jobs a page lists, of the kinds it starts — ``targets``: a task's
    ``"module:function"`` (:attr:`JobStatus.target`), ``None`` for training jobs.

    ``session``'s, and the orphans — jobs whose every tab was reloaded or closed
    (``is_open(session id)`` false for all of them), still running or ended since this
    session first asked — so they can be followed and cancelled.  A job another open tab is
    following is not listed (nor cancellable) here, except one this session stopped
    following while it runs (:func:`draw_job` says so).  Jobs ``interrupted`` by a restart
    of the app are listed for every session until one dismisses them, and count as its own.
    Returns ``(jobs, ids of session's own)``."""
    every = runner.jobs(targets=targets)  # one status per job of these kinds, once
    out = [job for job in every if session in job.sessions]
    mine = {job.job_id for job in out}
    since = st.session_state.setdefault("jobs_listed_since", time.time())
    detached = st.session_state.setdefault(_DETACHED, set())
    for job in every:
        if job.job_id in mine:
            continue
        followed = any(is_open(s) for s in job.sessions)
        if job.state == "interrupted" or (job.job_id in detached and followed
                                          and not job.is_final):
            out.append(job)
            mine.add(job.job_id)
        elif not followed and (not job.is_final or (job.finished or 0) >= since):
            out.append(job)
    return out, mine


def job_panel(runner: JobRunner, session: str, targets: tuple[str | None, ...], *,
              done_key: str, cancel_key: str, empty: str, fingerprint: str | None = None,
              show_all: bool = True, newest_first: bool = False) -> None:
    """A page's job list, redrawn every second; reruns the whole page when a job is done.

    Parameters
    ----------
    runner : JobRunner
        The app's job runner.
    session : str
        This browser session's id: Cancel on one of its own jobs only detaches it
        (:func:`draw_job`); on any other listed job it stops it for every tab.
    targets : tuple of str or None
        The kinds of job the page starts, as :func:`listed_jobs` takes them (``None``:
        training jobs); the panel lists them with :func:`listed_jobs`, asking
        :func:`ui.common.session_is_open` which tabs are open.
    done_key : str
        Session-state key of the done jobs the page's runs table includes.
    cancel_key : str
        Start of each job's Cancel (or Dismiss) button key; the job id follows.
    empty : str
        The caption shown when no job is listed.
    fingerprint : str, optional
        The current dataset's fingerprint: jobs on another dataset are hidden (with a count
        of them) unless ``show_all``, and marked when shown.  ``None``: no dataset filter.
    show_all : bool, default True
        List the jobs of every dataset (only with ``fingerprint``).
    newest_first : bool, default False
        List the jobs in the reverse of :func:`listed_jobs`' order.
    """
    # The done jobs the page's runs table (drawn below the panel) includes; the panel reruns
    # the page when one more is done.
    st.session_state[done_key] = newly_done(_listed(runner, session, targets)[0], set())
    _job_list(runner, session, targets, done_key, cancel_key, empty, fingerprint, show_all,
              newest_first)


def _listed(runner: JobRunner, session: str, targets: tuple[str | None, ...]
            ) -> tuple[list[JobStatus], set[str]]:
    from ui import common  # looked up at each call (tests replace session_is_open)

    return listed_jobs(runner, session, is_open=common.session_is_open, targets=targets)


@st.fragment(run_every=1.0)
def _job_list(runner: JobRunner, session: str, targets: tuple[str | None, ...], done_key: str,
              cancel_key: str, empty: str, fingerprint: str | None, show_all: bool,
              newest_first: bool) -> None:
    """The body of :func:`job_panel` (same parameters), the part redrawn every second."""
    jobs, mine = _listed(runner, session, targets)
    if newly_done(jobs, st.session_state.get(done_key, set())):
        st.rerun(scope="app")  # a run finished: refresh the page's runs table
    shown = jobs if show_all or fingerprint is None else [
        job for job in jobs if job.fingerprint == fingerprint]
    hidden = len(jobs) - len(shown)
    if not shown:
        st.caption(empty)
    if hidden:
        st.caption(f"{hidden:,} job{'s' * (hidden > 1)} on other datasets "
                   f"{'are' if hidden > 1 else 'is'} hidden: switch on *Show jobs of all "
                   "datasets* to see them.")
    if note := busy_elsewhere_note(runner.jobs(), {job.job_id for job in jobs}):
        st.caption(note)
    for job in reversed(shown) if newest_first else shown:
        # shown with all datasets: say it is not this one
        if fingerprint is not None and job.fingerprint != fingerprint:
            st.caption(":material/swap_horiz: On another dataset than the current one: "
                       f"**{job.data_name or 'not named'}**")
        if job.job_id not in mine:
            st.caption(":material/tab: Started in another tab or before a reload; Cancel "
                       "stops it for every tab.")
        draw_job(job, runner, session if job.job_id in mine else None,
                 key=f"{cancel_key}{job.job_id}")


def busy_elsewhere_note(every: Sequence[JobStatus], listed: Collection[str]) -> str | None:
    """What the job runner is busy with that the page does not list — jobs other open tabs
    follow, and jobs of other kinds (a simulation, for the Train page) — or ``None``
    (``every``: all the runner's statuses; ``listed``: the ids the page lists).  The runner
    works one job at a time, so a job started here waits for them: a second tab read "No
    jobs on this dataset yet" while its Train queued behind another tab's training."""
    busy = [job for job in every if not job.is_final and job.job_id not in listed]
    if not busy:
        return None
    running = sum(job.state == "running" for job in busy)
    what = (f"{running:,} running" if running == len(busy) else
            f"{len(busy) - running:,} queued" if not running else
            f"{running:,} running, {len(busy) - running:,} queued")
    return (f":material/hourglass_top: The app is busy with {len(busy):,} job"
            f"{'s' * (len(busy) > 1)} not listed here, started in another tab or on another "
            f"page ({what}); it works one job at a time, so a job started here waits for "
            f"{'them' if len(busy) > 1 else 'it'}.")


def draw_job(job: JobStatus, runner: JobRunner, session: str | None, *, key: str,
             container=None, title: bool = True) -> None:
    """A bordered box: title and state, progress bar and Cancel while it runs, how it ended.

    Cancel detaches ``session`` from the job (it stops when no other session wants it: the
    box then says "Cancelling…" and the button is disabled until it has stopped; a job
    another session still follows keeps running, and the box says so);
    ``session=None`` stops it for every session (a job whose tab was reloaded or closed).
    A job interrupted by a restart of the app has a Dismiss button instead."""
    box = (container or st).container(border=True)
    head, button = box.columns([3, 1])  # wide enough for "Dismiss" at 1,100 px
    if title:
        head.markdown(f"**{job.label}** — {job.state}")
    if job.state in ("queued", "running"):
        if session is not None and job.sessions and session not in job.sessions:
            box.info(FOLLOWED_ELSEWHERE, icon=":material/tab:")
            return
        box.progress(job.fraction, text=progress_text(job))
        button.button("Cancel", key=key, icon=":material/cancel:", disabled=job.cancelling,
                      on_click=_cancel, args=(runner, job.job_id, session))
    elif job.state == "interrupted":
        box.warning(job.message, icon=":material/restart_alt:")
        button.button("Dismiss", key=key, icon=":material/close:", on_click=runner.dismiss,
                      args=(job.job_id,))
    elif job.state == "failed":
        box.error(job.message, icon=":material/error:")
    elif job.state == "cancelled":
        box.warning("Cancelled — nothing was stored.", icon=":material/cancel:")
    else:
        box.success(f"{job.verb} in {job.elapsed:.1f} s" if job.state == "done" else job.message,
                    icon=":material/check:")


def _cancel(runner: JobRunner, job_id: str, session: str | None) -> None:
    """Cancel's callback (it runs before the rerun, which then shows the new state)."""
    runner.cancel(job_id, session=session)
    after = task_status(runner, job_id)
    if session is not None and after is not None and not after.is_final \
            and session not in after.sessions:  # another session still follows it
        st.session_state.setdefault(_DETACHED, set()).add(job_id)


def task_status(runner: JobRunner, job_id: str) -> JobStatus | None:
    """The job's status, or ``None`` when the runner no longer knows it (app restarted)."""
    try:
        return runner.status(job_id)
    except KeyError:
        return None


def interrupted_tasks(runner: JobRunner, target: str, *, key: str) -> None:
    """The tasks of ``target`` (``"module:function"``, e.g. :data:`core.runs.simulations.
    TASK`) that a restart of the app interrupted, each with its notice and a Dismiss button
    (:func:`draw_job`): the page that starts that kind of task says they were lost, when it
    has no job panel (:func:`listed_jobs` lists them there); ``key`` starts each button's
    key, the job id follows."""
    for job in runner.jobs(targets=(target,)):
        if job.state == "interrupted":
            draw_job(job, runner, None, key=f"{key}{job.job_id}")


@st.fragment(run_every=0.5)
def watch_task(runner: JobRunner, job_id: str, session: str, key: str) -> None:
    """Progress of a running task, redrawn every half second; reruns the page when it ends."""
    job = task_status(runner, job_id)
    if job is None or job.is_final:
        st.rerun()
    draw_job(job, runner, session, key=key, title=False)


def show_task(runner: JobRunner, job_id: str, session: str, *, key: str, what: str,
              load: Callable[[str], object], current: bool = True):
    """Progress and Cancel of a running task, or how it ended; ``load(result key)`` once done.

    ``what`` names the task in the notices ("Simulation", "Experiment").  ``current``: the
    task has the page's present settings.  A task of earlier settings still shows while it
    runs (marked so) and gives its result when done, but its failure or cancellation shows
    only beside its own settings.
    """
    job = task_status(runner, job_id)
    if job is None:
        return None
    if not job.is_final:
        if not current:
            st.caption(f":material/history: {what} with earlier settings, still running:")
        watch_task(runner, job_id, session, key)
    elif job.state in ("done", "cached"):
        return load(job.run_id)
    elif current and job.state == "failed":
        st.error(job.message, icon=":material/error:")
    elif current and job.state == "cancelled":
        st.info(f"{what} cancelled; nothing was stored.")
    return None
