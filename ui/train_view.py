"""Streamlit side of the Train page: the list of the runs trained on the current dataset.
Training itself: :mod:`core.runs.jobs`; the runs table: :mod:`core.runs.presets`."""

from __future__ import annotations

import streamlit as st

from core.data import ABData
from core.runs.jobs import JobRunner
from core.runs.presets import run_table
from core.runs.views import auuc_decimals


def runs_section(runner: JobRunner, data: ABData, fingerprint: str) -> None:
    """The "Trained runs on this dataset" section: a table of the stored runs, a link to the
    Compare page, and a warning (with a Delete button) for stored runs that cannot be read.

    Parameters
    ----------
    runner : JobRunner
        The app's job runner; its store holds the runs.
    data : ABData
        The current dataset (its per-arm data decides the "none yet" caption).
    fingerprint : str
        ``data.fingerprint()``: the runs listed are those trained on it.
    """
    st.subheader("Trained runs on this dataset")
    runs, damaged = runner.store.scan(fingerprint=fingerprint)
    if damaged:
        st.warning(f"{len(damaged)} stored run{'s' * (len(damaged) > 1)} cannot be read and "
                   f"{'are' if len(damaged) > 1 else 'is'} not listed (files changed or deleted "
                   "outside the app): " + "; ".join(f"`{rid}`: {why}" for rid, why in damaged)
                   + ". Training the same settings again replaces a damaged run.",
                   icon=":material/broken_image:")
        if st.button("Delete the damaged run" + "s" * (len(damaged) > 1),
                     key="train_drop_broken"):
            for rid, _ in damaged:
                runner.store.delete(rid)
            st.rerun()
    if runs:
        table = run_table(runs)
        cols = ["test AUUC@30%", "test AUUC@100%"]
        # as Compare: 0.0040, not 0.004; 0.000279 (a rare outcome), not 0.0003
        auuc = st.column_config.NumberColumn(
            format=f"%.{auuc_decimals(table[cols].to_numpy(dtype=float).ravel())}f",
            width=110)
        # widths that keep every column in a laptop's 1,280 px (the long run names wrap
        # into their tooltip; the id, last, tells like-named runs apart)
        text = st.column_config.TextColumn
        st.dataframe(table, width="stretch", hide_index=True, key="train_runs",
                     column_config={**dict.fromkeys(cols, auuc), "run": text(width=320),
                                    "trained": text(width=130), "run id": text(width=90)})
        st.caption("Test AUUC under the uplift curve, separate, relative (a share of each arm; "
                   "higher is better), mean over the run's test splits. Every definition and "
                   "the baselines are on the Compare page.")
        st.page_link("pages/compare.py", label="Compare these runs", icon=":material/compare:")
    else:
        st.caption("None yet. Runs are stored on disk and survive reloads and restarts."
                   + (" Per-arm runs (the first panel) are not listed here: they are on the "
                      "Compare page, section *Several arms*." if data.multiarm is not None
                      else ""))
