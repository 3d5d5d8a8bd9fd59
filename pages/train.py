"""Train: queue uplift models in the background, watch progress, cancel, keep runs."""

import streamlit as st

from core.evaluation.metrics import LABEL_SETS
from core.models import MODELS
from core.objectives import CUTOFF_METRICS
from core.runs import multiarm_runs
from core.runs.presets import (
    LAMBDAMART,
    LAMBDAMART_METRICS,
    PRESETS,
    QUERIES,
    arm_balance_note,
    model_params,
    run_label,
)
from core.runs.store import RunConfig
from ui import common
from ui.glossary import GLOSSARY, models_help
from ui.jobs import job_panel
from ui.multiarm_view import train_section
from ui.train_view import runs_section

BUDGET_HELP = ("Boosting rounds (trees) and learning rate of every LightGBM model; the forest "
               "grows 50 or 100 trees. Quick gives a first look in seconds; the paper's budget "
               "gives the numbers to report.")

st.title("Train models")
data = common.current_data()
common.dataset_caption(data)
runner, sid, fingerprint = common.runner(), common.session_id(), data.fingerprint()
if data.multiarm is not None:
    with st.container(border=True):
        train_section(data)
    st.subheader("One treatment: any treatment arm vs control")

# One widget per row where the labels are long: in side-by-side columns of a laptop-wide page
# the model tags and the λ-objective and label names were cut off.
common.remember("train_models", [LAMBDAMART, list(MODELS)[1]], options=list(MODELS),
                persist=True)
chosen = st.multiselect("Models", list(MODELS), key="train_models",
                        help=models_help(MODELS))
common.remember("train_preset", next(iter(PRESETS)), options=list(PRESETS),
                persist=True)
preset = st.radio("Budget", list(PRESETS), horizontal=True, key="train_preset",
                  help=BUDGET_HELP,
                  format_func={"quick": "quick (100 rounds, lr 0.1)",
                               "paper": "as in the paper (500 trees, lr 0.01)"}.get)
with st.expander("LambdaMART settings", expanded=LAMBDAMART in chosen):
    c1, c2 = st.columns(2)
    common.remember("train_metric", LAMBDAMART_METRICS[0], options=LAMBDAMART_METRICS,
                    persist=True)
    metric = c1.selectbox("λ-objective", LAMBDAMART_METRICS, key="train_metric",
                          help=GLOSSARY["λ-objective"], format_func={
                              "pcg": "PCG (uplift-curve gain)", "pcg_cutoff": "PCG@k (top k)",
                              "dcg": "DCG", "ndcg": "NDCG", "map": "MAP"}.get)
    common.remember("train_labels", next(iter(LABEL_SETS)), options=list(LABEL_SETS),
                    persist=True)
    labels = c2.selectbox("Relevance labels", LABEL_SETS, key="train_labels",
                          help=GLOSSARY["Relevance labels"], format_func={
                              "abs1": "Abs1 (TR, CN relevant)", "abs2": "Abs2 (TR +1, CR −1)",
                              "abs3": "Abs3 (graded 3/2/1/0)", "rel": "Rel (1/|T|, −1/|C|)"}.get)
    c1, c2 = st.columns(2)
    common.remember("train_query", QUERIES[0], options=QUERIES, persist=True)
    query = c1.radio("Queries", QUERIES, key="train_query", horizontal=True)
    uses_k = metric in CUTOFF_METRICS  # MAP has none
    common.remember("train_k", 100, persist=True)
    k_pct = c2.slider("PCG@k (% of each query)", 5, 100, step=5, key="train_k",
                      disabled=not uses_k, help=GLOSSARY["PCG"])
    note = arm_balance_note(float(data.t.mean()), query)
    if note and LAMBDAMART in chosen:
        st.info(note, icon=":material/balance:")
c1, c2, c3 = st.columns(3)
common.remember("train_scheme", "holdout", options=("holdout", "repeated"), persist=True)
scheme = c1.radio("Evaluation", ["holdout", "repeated"], horizontal=True, key="train_scheme",
                  help=GLOSSARY["Repeated splits"],
                  format_func={"holdout": "one 70/30 split", "repeated": "repeated splits"}.get)
common.remember("train_repeats", 10, persist=True)
repeats = c2.number_input("Repetitions", 2, 20, key="train_repeats",
                          disabled=scheme == "holdout", help=GLOSSARY["Repeated splits"])
common.remember("train_seed", 0, persist=True)
seed = c3.number_input("Split seed", 0, 10_000, key="train_seed")

blocked = common.split_problem(data)  # every job would fail the same way: said once
if blocked:
    st.error(f"Models cannot be trained on these data. {blocked} Pick or upload other data "
             "on the Data page.", icon=":material/block:")
if st.button("Train", type="primary", key="train_go", disabled=not chosen or bool(blocked)):
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
                          label=run_label(config), data_name=data.name)

head, toggle = st.columns([3, 2], vertical_alignment="bottom")
head.subheader("Jobs")
common.remember("train_all_jobs", False)
show_all = toggle.toggle("Show jobs of all datasets", key="train_all_jobs")
job_panel(runner, sid, (None, multiarm_runs.TASK),  # + per arm
          done_key="train_done", cancel_key="cancel_", fingerprint=fingerprint,
          show_all=show_all, empty="No jobs on this dataset yet: pick models and press Train.")

runs_section(runner, data, fingerprint)
