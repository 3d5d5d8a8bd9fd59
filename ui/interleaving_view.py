"""Streamlit side of the Interleaving page: submit a simulation to the app's job runner, draw
its progress, and read its stored result.  Settings, computation and storage live in
:mod:`core.runs.simulations`; the background work is the shared :class:`~core.runs.jobs.JobRunner`
(same worker processes, queue, progress, cancel and caching as training)."""

from __future__ import annotations

import streamlit as st

from core.data.abdata import ABData
from core.runs.jobs import JobStatus
from core.runs.simulations import SimConfig, SimResult, load_simulation, submit_simulation
from core.runs.store import RunStore
from ui import common
from ui.jobs import draw_job


def submit(config: SimConfig, data: ABData | None = None, scores: tuple | None = None) -> str:
    """Queue ``config`` for this session; returns the job id (a stored result: at once)."""
    return submit_simulation(common.runner(), config, data, scores,
                             session=common.session_id())


def status(job_id: str) -> JobStatus | None:
    """The job's status, or ``None`` when the runner no longer knows it (app restarted)."""
    try:
        return common.runner().status(job_id)
    except KeyError:
        return None


@st.cache_data(show_spinner=False, max_entries=16)
def result(root: str, key: str) -> SimResult | None:
    """A stored result, read once per (runs directory, key)."""
    return load_simulation(RunStore(root), key)


@st.fragment(run_every=0.5)
def watch(job_id: str) -> None:
    """Progress of a running job, redrawn every half second; reruns the page when it ends."""
    job = status(job_id)
    if job is None or job.is_final:
        st.rerun()
    draw_job(job, common.runner(), common.session_id(), key="il_cancel", title=False)


def show_job(job_id: str) -> SimResult | None:
    """Progress and Cancel of a running job, or how it ended; its result once done."""
    job = status(job_id)
    if job is None:
        return None
    if not job.is_final:
        watch(job_id)
    elif job.state == "failed":
        st.error(job.message, icon=":material/error:")
    elif job.state == "cancelled":
        st.info("Simulation cancelled; nothing was stored.")
    else:
        return result(str(common.runner().store.root), job.run_id)
    return None
