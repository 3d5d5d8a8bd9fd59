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
    arm_balance_note,
    model_params,
    run_label,
    run_table,
)
from core.runs.store import RunConfig
from ui import common
from ui.glossary import GLOSSARY
from ui.jobs import draw_job, listed_jobs, newly_done
from ui.multiarm_view import train_section

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
chosen = st.multiselect("Models", list(MODELS), key="train_models")
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
                              "dcg": "DCG", "ndcg": "nDCG", "map": "MAP"}.get)
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
                          label=run_label(config), data_name=data.name)

# The done jobs the runs table below includes; the panel reruns the page when one more is done.
listed = listed_jobs(runner, sid, is_open=common.session_is_open)[0]
st.session_state["train_done"] = newly_done(listed, set())
head, toggle = st.columns([3, 2], vertical_alignment="bottom")
head.subheader("Jobs")
common.remember("train_all_jobs", False)
show_all = toggle.toggle("Show jobs of all datasets", key="train_all_jobs")


@st.fragment(run_every=1.0)
def job_panel():
    jobs, mine = listed_jobs(runner, sid, is_open=common.session_is_open)
    if newly_done(jobs, st.session_state.get("train_done", set())):
        st.rerun(scope="app")  # a run finished: refresh "Trained runs"
    shown = jobs if show_all else [job for job in jobs if job.fingerprint == fingerprint]
    hidden = len(jobs) - len(shown)
    if not shown:
        st.caption("No jobs on this dataset yet: pick models and press Train.")
    if hidden:
        st.caption(f"{hidden:,} job{'s' * (hidden > 1)} on other datasets "
                   f"{'are' if hidden > 1 else 'is'} hidden: switch on *Show jobs of all "
                   "datasets* to see them.")
    for job in shown:
        if job.fingerprint != fingerprint:  # shown with all datasets: say it is not this one
            st.caption(":material/swap_horiz: On another dataset than the current one: "
                       f"**{job.data_name or 'not named'}**")
        if job.job_id not in mine:
            st.caption(":material/tab: Started in another tab or before a reload; Cancel "
                       "stops it for every tab.")
        draw_job(job, runner, sid if job.job_id in mine else None, key=f"cancel_{job.job_id}")


job_panel()

st.subheader("Trained runs on this dataset")
runs, damaged = runner.store.scan(fingerprint=fingerprint)
if damaged:
    st.warning(f"{len(damaged)} stored run{'s' * (len(damaged) > 1)} cannot be read and "
               f"{'are' if len(damaged) > 1 else 'is'} not listed (files changed or deleted "
               "outside the app): " + "; ".join(f"`{rid}`: {why}" for rid, why in damaged)
               + ". Training the same settings again replaces a damaged run.",
               icon=":material/broken_image:")
    if st.button("Delete the damaged run" + "s" * (len(damaged) > 1), key="train_drop_broken"):
        for rid, _ in damaged:
            runner.store.delete(rid)
        st.rerun()
if runs:
    st.dataframe(run_table(runs), width="stretch", hide_index=True, key="train_runs")
    st.caption("Test AUUC under the uplift curve, separate, relative (a share of each arm; "
               "higher is better), mean over the run's test splits. Every definition and the "
               "baselines are on the Compare page.")
    st.page_link("pages/compare.py", label="Compare these runs", icon=":material/compare:")
else:
    st.caption("None yet. Runs are stored on disk and survive reloads and restarts."
               + (" Per-arm runs (the first panel) are not listed here: they are on the "
                  "Compare page, section *Several arms*." if data.multiarm is not None
                  else ""))
