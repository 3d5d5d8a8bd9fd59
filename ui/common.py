"""Streamlit-side helpers shared by the pages: cached loaders, the session's dataset,
score columns, error display and downloads.  Numerical work stays in ``core``."""

from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import data as datasets
from core.data import ABData, DataError
from core.runs.export import safe_csv_bytes
from core.runs.jobs import JobRunner
from core.runs.store import RunStore, default_runs_dir

log = logging.getLogger("uprank")

DEFAULT_DATASET = ("world", ())
RANDOM_RANKER = "Random ranker (seed 0)"


@st.cache_data(show_spinner="Loading dataset…", max_entries=16)
def load_benchmark(key: str, options: tuple) -> ABData:
    """A benchmark dataset by registry key; ``options`` is a hashable tuple of items."""
    return datasets.load_dataset(key, **dict(options))


@st.cache_data(show_spinner="Reading the CSV…", max_entries=8)
def read_uploaded(content: bytes, name: str, mapping: tuple) -> ABData:
    """Parse an uploaded CSV with a column mapping (hashable tuple of items)."""
    return datasets.read_ab_csv(content, name=name, **dict(mapping))


@st.cache_data(show_spinner=False)
def sample_csv() -> bytes:
    """The embedded uplift world as a CSV, for trying the upload."""
    return datasets.to_csv_bytes(load_benchmark(*DEFAULT_DATASET))


@st.cache_data(show_spinner=False, max_entries=8)
def column_codes(content: bytes, column: str) -> list:
    """Distinct values of one column of an uploaded CSV (to offer the arms of a multi-arm test)."""
    frame, _ = datasets.read_frame(content)
    return datasets.arm_codes(frame[column])


def current_data() -> ABData:
    """The dataset chosen on the Data page (the embedded default world until then)."""
    if "data" not in st.session_state:
        set_data(load_benchmark(*DEFAULT_DATASET), source=DEFAULT_DATASET)
    return st.session_state["data"]


def current_source() -> tuple[str, tuple] | None:
    """``(dataset key, options)`` of a listed dataset, ``None`` for an uploaded CSV."""
    current_data()
    return st.session_state.get("data_source")


def set_data(data: ABData, *, source: tuple[str, tuple] | None = None) -> None:
    st.session_state["data"] = data
    st.session_state["data_source"] = source


@st.cache_resource(show_spinner=False)
def job_runner(root: str) -> JobRunner:
    """One background job runner per runs directory, shared by every browser session."""
    runner = JobRunner(max_workers=1, store=RunStore(root))
    runner.warm_up()
    return runner


def runner() -> JobRunner:
    return job_runner(str(default_runs_dir()))


def session_id() -> str:
    """A stable id of this browser session (its jobs are listed as "yours")."""
    if "session_id" not in st.session_state:
        st.session_state["session_id"] = uuid.uuid4().hex
    return st.session_state["session_id"]


def dataset_caption(data: ABData) -> None:
    st.caption(
        f"Dataset: **{data.name}** · {data.n:,} rows · {data.n_treated:,} treated / "
        f"{data.n_control:,} control · response rate {data.y.mean():.2%}"
    )


def score_names(data: ABData) -> list[str]:
    """Rankers a page can evaluate: scores carried by the data, numeric columns, random."""
    return [*data.scores, *data.numeric_columns(), RANDOM_RANKER]


def score_values(data: ABData, name: str) -> np.ndarray:
    if name in data.scores:
        return np.asarray(data.scores[name], dtype=float)
    if name == RANDOM_RANKER:
        return np.random.default_rng(0).random(data.n)
    col = data.X[name].to_numpy(dtype=float, na_value=np.nan)
    # Missing values rank last: an analyst's score column may have gaps.
    return np.where(np.isnan(col), -np.inf, col) if np.isnan(col).any() else col


def trained_runs(data: ABData) -> dict:
    """Runs trained on ``data`` (Train page), labelled for selection as rankers."""
    from core.runs.views import display_labels

    runs = runner().store.list(fingerprint=data.fingerprint())
    labels = display_labels(runs)
    return {f"Trained: {labels[run.run_id]}": run for run in runs}


def rankers_on_rows(data: ABData, names, runs: dict):
    """The rows every chosen ranker scores, and each ranker's scores there.

    Score columns cover every row; a trained run only its test rows (split 0), so with a run
    among the rankers the data is restricted to those rows.  Two runs must share them.
    """
    index = None
    for name in names:
        if name in runs:
            idx = runs[name].scores(0).index
            if index is not None and not np.array_equal(idx, index):
                raise ValueError("The two trained runs were tested on different rows (other "
                                 "split seed or scheme): pick runs with the same evaluation.")
            index = idx
    if index is None:
        return data, tuple(score_values(data, name) for name in names)
    return data.subset(index), tuple(
        runs[name].scores(0).score if name in runs else score_values(data, name)[index]
        for name in names)


@contextmanager
def guard(what: str = "This step"):
    """Show bad input as a message and any other failure as a short notice, never a traceback."""
    try:
        yield
    except (DataError, ValueError) as exc:
        st.error(str(exc), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - the UI must survive anything
        log.exception("%s failed", what)
        st.error(f"{what} failed: {type(exc).__name__}: {exc}", icon=":material/error:")


def download_row(fig: go.Figure, table, stem: str, key: str) -> None:
    """CSV of the table and a self-contained interactive HTML of the figure.

    Both files are built only when clicked (deferred ``data``), so reruns stay fast; the
    HTML embeds plotly.js and opens offline.  PNG: the camera icon of the chart's toolbar
    saves the figure as shown (see :func:`plot_config`).
    """
    c1, c2 = st.columns(2)
    c1.download_button("Download points (CSV)", lambda: safe_csv_bytes(table), f"{stem}.csv",
                       "text/csv", key=f"{key}_csv", icon=":material/download:",
                       on_click="ignore")
    figure_html_button(fig, stem, f"{key}_html", container=c2)


def figure_html_button(fig: go.Figure, stem: str, key: str, container=st) -> None:
    """Download button for one figure as a self-contained interactive HTML (built on click)."""
    container.download_button("Figure (HTML)", lambda: fig.to_html(
        include_plotlyjs=True, full_html=True).encode(), f"{stem}.html", "text/html", key=key,
        icon=":material/download:", on_click="ignore")


def plot_config(stem: str) -> dict:
    """Plotly toolbar config: the camera button downloads a 2× PNG named after the view."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": stem, "scale": 2}}
