"""Train: queue uplift models in the background, watch progress, cancel, keep runs."""

import streamlit as st

from core.evaluation.metrics import LABEL_SETS
from core.models import MODELS
from core.runs.presets import (
    LAMBDAMART,
    LAMBDAMART_METRICS,
    PRESETS,
    QUERIES,
    model_params,
    run_label,
    run_table,
)
from core.runs.store import RunConfig
from ui import common

st.title("Train models")
data = common.current_data()
common.dataset_caption(data)
runner, sid = common.runner(), common.session_id()

left, right = st.columns([3, 2])
chosen = left.multiselect("Models", list(MODELS), default=[LAMBDAMART, list(MODELS)[1]],
                          key="train_models")
preset = right.radio("Budget", list(PRESETS), horizontal=True, key="train_preset",
                     format_func={"quick": "quick (100 rounds, lr 0.1)",
                                  "paper": "as in the paper (500 trees, lr 0.01)"}.get)
with st.expander("LambdaMART settings", expanded=LAMBDAMART in chosen):
    c1, c2, c3, c4 = st.columns(4)
    metric = c1.selectbox("λ-objective", LAMBDAMART_METRICS, key="train_metric")
    query = c2.radio("Queries", QUERIES, key="train_query")
    labels = c3.selectbox("Relevance labels", LABEL_SETS, key="train_labels")
    k_pct = c4.slider("PCG@k (% of each query)", 5, 100, 100, step=5, key="train_k")
c1, c2, c3 = st.columns(3)
scheme = c1.radio("Evaluation", ["holdout", "repeated"], horizontal=True, key="train_scheme",
                  format_func={"holdout": "one 70/30 split", "repeated": "repeated splits"}.get)
repeats = c2.number_input("Repetitions", 2, 20, 10, key="train_repeats",
                          disabled=scheme == "holdout")
seed = c3.number_input("Split seed", 0, 10_000, 0, key="train_seed")

if st.button("Train", type="primary", key="train_go", disabled=not chosen):
    with common.guard("Queueing the models"):
        source = common.current_source()
        for model in chosen:
            params = model_params(model, preset=preset, metric=metric, query=query,
                                  labels=labels, k=None if k_pct == 100 else k_pct / 100)
            config = RunConfig.for_data(
                data, model, params, dataset=source[0] if source else None,
                options=dict(source[1]) if source else None, scheme=scheme,
                n_repeats=int(repeats) if scheme == "repeated" else None, seed=int(seed))
            runner.submit(config, data=None if source else data, session=sid,
                          label=run_label(config))


@st.fragment(run_every=1.0)
def job_panel():
    jobs = runner.jobs(session=sid)
    if not jobs:
        st.caption("No jobs yet: pick models and press Train.")
        return
    for job in jobs:
        box = st.container(border=True)
        head, button = box.columns([5, 1])
        head.markdown(f"**{job.label}** — {job.state}")
        if job.state in ("queued", "running"):
            eta = f", about {job.eta:.0f} s left" if job.eta is not None else ""
            split = f"split {job.split}/{job.n_splits}, " if job.n_splits > 1 else ""
            text = (f"queued, position {job.position}" if job.state == "queued" else
                    f"{split}round {job.round}/{job.total}, {job.elapsed:.0f} s{eta}")
            box.progress(job.fraction, text=text)
            if button.button("Cancel", key=f"cancel_{job.job_id}"):
                runner.cancel(job.job_id, session=sid)
        elif job.state == "failed":
            box.error(job.message, icon=":material/error:")
        elif job.state == "cancelled":
            box.warning("Cancelled — nothing was stored.", icon=":material/cancel:")
        else:
            box.success(f"Done in {job.elapsed:.1f} s" if job.state == "done" else
                        "Already trained: loaded from the run store.", icon=":material/check:")


st.subheader("Jobs")
job_panel()

st.subheader("Trained runs on this dataset")
runs = runner.store.list(fingerprint=data.fingerprint())
if runs:
    st.dataframe(run_table(runs), width="stretch", hide_index=True, key="train_runs")
    st.page_link("pages/compare.py", label="Compare these runs", icon=":material/compare:")
else:
    st.caption("None yet. Runs are stored on disk and survive reloads and restarts.")
