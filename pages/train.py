"""Train: queue uplift models in the background, watch progress, cancel, keep runs."""

import streamlit as st

from core.evaluation.metrics import LABEL_SETS
from core.models import MODELS
from core.objectives import CUTOFF_METRICS
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
from ui.jobs import draw_job

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
    uses_k = metric in CUTOFF_METRICS  # MAP has none
    k_pct = c4.slider("PCG@k (% of each query)", 5, 100, 100, step=5, key="train_k",
                      disabled=not uses_k)
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
                                  labels=labels, k=k_pct / 100 if uses_k else None)
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
        draw_job(job, runner, sid, key=f"cancel_{job.job_id}")


st.subheader("Jobs")
job_panel()

st.subheader("Trained runs on this dataset")
runs = runner.store.list(fingerprint=data.fingerprint())
if runs:
    st.dataframe(run_table(runs), width="stretch", hide_index=True, key="train_runs")
    st.page_link("pages/compare.py", label="Compare these runs", icon=":material/compare:")
else:
    st.caption("None yet. Runs are stored on disk and survive reloads and restarts.")
