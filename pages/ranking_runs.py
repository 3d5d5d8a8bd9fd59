"""Ranking runs: train learning-to-rank models on the Ranking lab's dataset in the background
(λ-AUC / λ-MAUC / λ-NDCG / λ-MAP LambdaMART, LightGBM's lambdarank, linear pairwise AUC,
pointwise regression) and list the stored runs."""

import pandas as pd
import streamlit as st

from core.constants import DASH
from core.runs import ltr_runs
from core.runs.ltr_runs import RANKING_MODELS, RANKING_PRESETS
from ui import common
from ui import ranking_view as view
from ui.glossary import GLOSSARY

common.keep_dataset_in_url()
st.title("Ranking runs")
runner, sid = common.runner(), common.session_id()
splits = None
with common.guard("Loading the ranking data"):
    splits = view.current_splits()
source = view.current_source()  # an upload lost with the session falls back
view.caption()
if splits is None:  # the data cannot be read: its jobs can still be followed and cancelled
    view.jobs_section("No ranking jobs.")
    st.stop()

common.remember("rk_models", list(view.DEFAULT_MODELS), options=list(RANKING_MODELS))
models = st.multiselect("Models", list(RANKING_MODELS), key="rk_models",
                        help=GLOSSARY["λ-objective"])
c2, c3 = st.columns([3, 1])
common.remember("rk_preset", "quick", options=list(RANKING_PRESETS))
preset = c2.radio("Budget", list(RANKING_PRESETS), key="rk_preset", horizontal=True,
                  help="Boosting rounds and learning rate of every model; the caption below "
                  "gives both.", format_func={"quick": "quick", "paper": "as in the paper"}.get)
common.remember("rk_seed", 0)
seed = c3.number_input("Seed", 0, 10_000, key="rk_seed")
st.caption(f"**{preset}**: {RANKING_PRESETS[preset].description}. Trained on the training "
           f"queries, early stopping on the {view.n_queries(splits['vali'], 'validation')}, "
           f"scored on the {view.n_queries(splits['test'], 'test')}. "
           + GLOSSARY["Early stopping"])

if st.button("Train", type="primary", key="rk_train", disabled=not models):
    with common.guard("Queueing the models"):
        for model in models:
            ltr_runs.submit_ranking_run(runner, source, model, data=view.uploaded_data(),
                                        preset=preset, seed=int(seed), session=sid)

view.jobs_section("No jobs yet: pick models and press Train. Training runs in the "
                  "background; you can leave the page.")

st.subheader("Trained runs on this dataset")
table = view.current_runs()
if table.empty:
    st.caption("None yet. Runs are stored on disk and survive reloads and restarts.")
    st.stop()
shown = table.drop(columns="key").rename(columns={"preset": "budget"})  # as the radio
shown["best round"] = [DASH if pd.isna(v) else f"{int(v):,}" for v in table["best round"]]
st.dataframe(shown.where(shown.notna(), DASH), width="stretch", hide_index=True,
             key="rk_runs_table",
             column_config={"fit (s)": st.column_config.NumberColumn(format="%.1f")})
st.caption("chosen = the learning rate (or α) with the best validation score of the model's "
           "own metric; best round = the round early stopping kept; fit (s) = fitting that "
           "chosen model (the job's 'Trained in' also counts loading the data and every "
           "other candidate of the budget).")
st.page_link("pages/ranking_compare.py", label="Compare these runs query by query",
             icon=":material/compare:")
