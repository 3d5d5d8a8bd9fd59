"""Runs: the background job runner (worker processes with progress, cancel and a queue), the
on-disk run store keyed by dataset fingerprint and frozen config, model presets, views of
stored runs, the one-file HTML report and safe CSV exports.

Importing this package loads neither LightGBM nor scikit-learn (the app starts fast); model
presets are in :mod:`core.runs.presets`."""

from core.runs.export import neutralise, safe_csv_bytes
from core.runs.jobs import (
    CANCEL_GRACE_S,
    FINAL_STATES,
    STATES,
    JobRunner,
    JobStatus,
    RunsDirError,
)
from core.runs.report import html_report
from core.runs.store import (
    RUN_FORMAT_VERSION,
    Run,
    RunConfig,
    RunStore,
    SplitScores,
    default_runs_dir,
)

__all__ = ["CANCEL_GRACE_S", "FINAL_STATES", "RUN_FORMAT_VERSION", "STATES", "JobRunner",
           "JobStatus", "Run", "RunConfig", "RunStore", "RunsDirError", "SplitScores",
           "default_runs_dir", "html_report", "neutralise", "safe_csv_bytes"]
