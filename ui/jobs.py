"""Drawing background jobs (training runs and tasks alike) from the one job runner of
:mod:`core.runs.jobs`: a status box with progress, ETA and Cancel, and a page's job list.
The pages only draw; the runner does the work."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from core.runs.jobs import JobRunner, JobStatus


def progress_text(job: JobStatus) -> str:
    """One line of progress: queue position, or split/round (training) or the task's step.

    Rounds count the budget the user asked for: a two-model run of 100 rounds reads
    "round 95/100 of the treated-arm model", then "… of the control-arm model" (never
    "95/200"); before the model reports its first round the line says "starting…" (never
    "0/0").
    """
    if job.state == "queued":
        return f"queued, position {job.position}"
    eta = f", about {job.eta:.0f} s left" if job.eta is not None else ""
    if job.kind == "task":
        return f"{job.message} {job.fraction:.0%}, {job.elapsed:.0f} s{eta}"
    split = f"split {max(job.split, 1)}/{job.n_splits}, " if job.n_splits > 1 else ""
    if not job.total:
        return f"{split}starting…, {job.elapsed:.0f} s"
    of = ""
    if job.n_parts > 1:
        of = f" of the {job.part_name}" if job.part_name else f" of model {job.part}/{job.n_parts}"
    return f"{split}round {job.round}/{job.total}{of}, {job.elapsed:.0f} s{eta}"


def newly_done(jobs: list[JobStatus], seen: set[str]) -> set[str]:
    """Ids of the jobs in ``jobs`` that are "done" but not in ``seen`` (the done jobs the page
    last drew): a training run finished since, so the page's list of runs is out of date."""
    return {job.job_id for job in jobs if job.state == "done"} - set(seen)


def listed_jobs(runner: JobRunner, session: str, *,
                is_open: Callable[[str], bool] = lambda sid: False
                ) -> tuple[list[JobStatus], set[str]]:
    """The training jobs a page lists: ``session``'s, and the orphans — jobs whose every
    tab was reloaded or closed (``is_open(session id)`` false for all of them), still
    running or ended since this session first asked — so they can be followed and
    cancelled.  A job another open tab is following is not listed (nor cancellable) here.
    Returns ``(jobs, ids of session's own)``."""
    jobs = runner.jobs(session=session)
    mine = {job.job_id for job in jobs}
    since = st.session_state.setdefault("jobs_listed_since", time.time())
    return jobs + [job for job in runner.jobs() if job.job_id not in mine
                   and job.kind == "train"
                   and not any(is_open(s) for s in job.sessions)
                   and (not job.is_final or (job.finished or 0) >= since)], mine


def draw_job(job: JobStatus, runner: JobRunner, session: str | None, *, key: str,
             container=None, title: bool = True) -> None:
    """A bordered box: title and state, progress bar and Cancel while it runs, how it ended.

    Cancel detaches ``session`` from the job (it stops when no other session wants it);
    ``session=None`` stops it for every session (a job whose tab was reloaded or closed)."""
    box = (container or st).container(border=True)
    head, button = box.columns([5, 1])
    if title:
        head.markdown(f"**{job.label}** — {job.state}")
    if job.state in ("queued", "running"):
        box.progress(job.fraction, text=progress_text(job))
        if button.button("Cancel", key=key, icon=":material/cancel:"):
            runner.cancel(job.job_id, session=session)
    elif job.state == "failed":
        box.error(job.message, icon=":material/error:")
    elif job.state == "cancelled":
        box.warning("Cancelled — nothing was stored.", icon=":material/cancel:")
    else:
        done = "Trained" if job.kind == "train" else "Done"
        box.success(f"{done} in {job.elapsed:.1f} s" if job.state == "done" else job.message,
                    icon=":material/check:")


def task_status(runner: JobRunner, job_id: str) -> JobStatus | None:
    """The job's status, or ``None`` when the runner no longer knows it (app restarted)."""
    try:
        return runner.status(job_id)
    except KeyError:
        return None


@st.fragment(run_every=0.5)
def watch_task(runner: JobRunner, job_id: str, session: str, key: str) -> None:
    """Progress of a running task, redrawn every half second; reruns the page when it ends."""
    job = task_status(runner, job_id)
    if job is None or job.is_final:
        st.rerun()
    draw_job(job, runner, session, key=key, title=False)


def show_task(runner: JobRunner, job_id: str, session: str, *, key: str, what: str,
              load: Callable[[str], object]):
    """Progress and Cancel of a running task, or how it ended; ``load(result key)`` once done.

    ``what`` names the task in the "cancelled" notice ("Simulation", "Experiment").
    """
    job = task_status(runner, job_id)
    if job is None:
        return None
    if not job.is_final:
        watch_task(runner, job_id, session, key)
    elif job.state == "failed":
        st.error(job.message, icon=":material/error:")
    elif job.state == "cancelled":
        st.info(f"{what} cancelled; nothing was stored.")
    else:
        return load(job.run_id)
    return None
