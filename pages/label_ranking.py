"""Label ranking: rank L labels (ad categories) per user from incomplete click rankings —
AMM-rank and its baselines under the paper's Table 1 protocol (Djuric et al. 2014)."""

import streamlit as st

from core.runs import label_runs
from ui import common
from ui import label_ranking_view as view
from ui.glossary import GLOSSARY
from ui.jobs import interrupted_tasks

common.keep_dataset_in_url()
st.title("Label ranking: which ad categories for whom")
st.markdown(
    "For each user, rank L labels (ad categories) by preference, learning from users whose "
    "observed rankings are incomplete: only the categories they clicked, in order; every "
    "unclicked category ranks below every clicked one. **AMM-rank** (adaptive multi-hyperplane "
    "machines with a pairwise ranking loss) against Mallows-based and logistic baselines, "
    "scored by the disagreement error ε_dis (share of known label pairs in the wrong order; "
    "lower is better) and precision / recall / F1 at the top K.")
interrupted_tasks(common.runner(), label_runs.TASK, key="lr_dismiss_")  # lost in a restart

source = st.radio("Data", ["ad_clicks", "sklearn", "mallows", "upload"], horizontal=True,
                  key="lr_source", format_func={
                      "ad_clicks": "Simulated ad clicks (the paper's features)",
                      "sklearn": "From scikit-learn (iris, wine, digits)",
                      "mallows": "Mallows mixture", "upload": "Upload a CSV"}.get)
data = args = upload = None
with common.guard("Preparing the data"):
    c1, c2, c3, c4 = st.columns(4)
    if source == "ad_clicks":
        args = (("n_users", int(c1.select_slider("Users", [2_000, 5_000, 20_000, 50_000],
                                                  2_000, key="lr_n"))),
                ("n_labels", int(c2.select_slider("Labels (categories)", [10, 20, 50], 20,
                                                  key="lr_L"))),
                ("nonlinearity", float(c3.slider("Non-linearity of interests", 0.0, 1.0, 0.5,
                                                 0.1, key="lr_nl"))),
                ("random_state", int(c4.number_input("Seed", 0, 10_000, 0, key="lr_seed_d"))))
    elif source == "sklearn":
        args = (("name", c1.selectbox("Dataset", ["iris", "wine", "digits"], key="lr_skl")),
                ("random_state", 0))
    elif source == "mallows":
        args = (("n", int(c1.select_slider("Rows", [1_000, 5_000, 20_000], 5_000,
                                            key="lr_mn"))),
                ("n_labels", int(c2.slider("Labels", 3, 20, 8, key="lr_mL"))),
                ("theta", float(c3.slider("Concentration θ", 0.1, 3.0, 1.0, 0.1,
                                          key="lr_theta"))),
                ("top_k", int(c4.slider("Top-k kept (0 = complete)", 0, 10, 3,
                                        key="lr_topk")) or None),
                ("random_state", 0))
    if source != "upload":
        data = view.generated(source, args)
    else:
        data, upload = view.upload_section()
if data is None:
    if upload is None and "lr_kept" not in st.session_state:  # (else a message is above)
        st.info("Upload a CSV (or pick a generator) to start.")
    st.stop()

n, L = data.Y.shape
digest = data.fingerprint() if source == "upload" else ""  # what an upload's results go by
view.show_data(data, ("upload", digest) if source == "upload" else (source, args))

st.subheader("Experiment (paper Table 1 protocol)")
methods = st.multiselect("Methods", list(label_runs.METHODS), list(label_runs.METHODS),
                         key="lr_methods", help=GLOSSARY["Label ranking methods"])
tuned = st.radio("λ and C", [True, False], key="lr_tune", help=view.TUNE_HELP,
                 horizontal=True, format_func={True: "tuned in each fold (paper)",
                                               False: "fixed: λ = 0.0001, C = 1"}.get)
e2, e4 = st.columns(2)
folds = e2.number_input("Folds", 2, 10, 5, key="lr_folds")
seed = e4.number_input("Seed", 0, 10_000, 0, key="lr_seed")
config = None
if (short := label_runs.too_few_users(n, int(folds))) is not None:
    st.warning(short, icon=":material/group_off:")
elif methods:
    if (slow := view.slow_methods_note(methods, L, int(folds))) is not None:
        st.warning(slow, icon=":material/hourglass_top:")
    config = label_runs.LabelExperiment(
        generator=None if source == "upload" else source,
        generator_args=() if args is None else tuple(sorted(args, key=lambda p: p[0])),
        methods=tuple(methods), n_folds=int(folds), seed=int(seed),
        **({} if tuned else view.FIXED_PARAMETERS),
        data_digest=digest)
job = st.session_state.get("lr_job")  # (job id, settings, context of its data)
# Run, or a new session (a reload, a link) whose settings ran before: their stored result
if st.button("Run experiment", type="primary", key="lr_run", disabled=config is None) or (
        job is None and config is not None and view.is_stored(config)):
    with common.guard("Starting the experiment"):
        job = st.session_state["lr_job"] = (view.submit(config, data), config,
                                             view.context(data))
current = job is not None and job[1] == config  # the job has the page's settings
if job is not None:  # (a job of earlier settings: its progress and result, not its failure)
    if (done := view.show_job(job[0], current=current)) is not None and (
            st.session_state.get("lr_last", (None,))[0] != job[0]):
        meta, frames = done
        st.session_state["lr_last"] = (job[0], job[1], meta, frames, job[2])
if "lr_last" not in st.session_state:
    if not current:
        st.info("Pick methods and press **Run experiment** (runs in the background; you can "
                "leave the page).")
    st.stop()
view.show_results(*st.session_state["lr_last"][1:], current=config)
