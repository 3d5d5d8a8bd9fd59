"""P-nDCG explorer: DCG / nDCG of a list under each discount (log2, Zipf, Zipf-β, the
predicted probability) with the post's worked examples, and how nDCG and P-nDCG react to the
number of relevant documents across the queries of a run (the imbalance P-nDCG is about)."""

import streamlit as st

from ui import common
from ui import ranking_view as view
from ui.glossary import GLOSSARY

common.keep_dataset_in_url()
st.title("P-nDCG explorer")
st.markdown("nDCG discounts a relevant document by its **position**; P-nDCG discounts it by the "
            "**predicted probability** the model gave it (Wong 2019). Two models that put the "
            "relevant documents at the same positions get the same nDCG, but not the same "
            "P-nDCG when one of them was confident about the wrong documents.")

st.subheader("Build a list")
examples = view.PNDCG_EXAMPLES
row = st.container(horizontal=True)  # wrapped when narrow: in columns the labels were cut
for i, (label, rows) in enumerate(examples.items()):
    if row.button(label, key=f"pn_ex_{i}"):
        view.set_editor_list(rows)
if row.button("Clear", key="pn_clear"):
    view.set_editor_list([(0, 0.5)])
runs = view.current_runs()
if not runs.empty:
    with st.expander("Or take a test query of a trained run (Ranking data's dataset)"):
        names = view.run_names(runs)
        q1, q2, q3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        run = q1.selectbox("Run", list(names), key="pn_qrun", format_func=names.get)
        root = str(view.store().root)
        qids = view.per_query(root, run, 10).query("n_relevant > 0").index
        qid = q2.selectbox("Query (with a relevant document)", list(qids), key="pn_qid")
        if q3.button("Use this query", key="pn_use_query"):
            view.set_editor_list(view.query_rows(root, run, qid))
edited = st.data_editor(view.editor_list(), num_rows="dynamic", width="stretch",
                        key=view.editor_key(), column_config={
                            "grade": st.column_config.NumberColumn(
                                "grade (0 = not relevant)", min_value=0, max_value=10, step=1),
                            "probability": st.column_config.NumberColumn(
                                "predicted probability", min_value=0.0, max_value=1.0,
                                step=0.001, format="%.3f")})
beta = st.slider("β of the Zipf-β discount 1/iᵝ", 0.1, 3.0, 1.5, 0.1, key="pn_beta")
with common.guard("Scoring the list"):
    table = view.discounts(edited, float(beta))
    if table is not None:
        # one above the other: beside the chart the table's last column (nDCG) was cut off
        st.plotly_chart(view.discount_figure(table), width="stretch", key="pn_fig")
        st.dataframe(table, width="content", key="pn_table",
                     column_config={c: st.column_config.NumberColumn(format="%.3f")
                                    for c in ("DCG", "ideal DCG", "nDCG")})
        st.caption("The list is ranked by the predicted probability (highest first). DCG sums "
                   "grade × discount; the ideal DCG puts the highest grades first (for the "
                   "probability discount: the highest grades on the highest probabilities); "
                   "nDCG = DCG / ideal DCG. " + GLOSSARY["P-nDCG"] + " With equal "
                   "probabilities (*Flat*) P-nDCG is 1 whatever the order: it measures "
                   "confidence relative to the list's own probabilities. For grades above 1 the "
                   "last row counts every grade > 0 as relevant: the paper's (binary) P-nDCG, "
                   "the value Ranking compare reports.")

st.subheader("Imbalance: nDCG and P-nDCG against the number of relevant documents")
view.caption()
names = view.runs_or_stop("see this on its test queries")
r1, r2 = st.columns([3, 1])
key = r1.selectbox("Run", list(names), key="pn_run", format_func=names.get)
k = r2.number_input("nDCG cut-off k", 1, 100, 10, key="pn_k")
with common.guard("Scoring the queries"):
    per_query = view.per_query(str(view.store().root), key, int(k))
    shown = {f"ndcg@{int(k)}": f"nDCG@{int(k)}", "p_ndcg": "P-nDCG"}
    st.plotly_chart(view.imbalance_figure(per_query, shown), width="stretch", key="pn_imb")
    st.dataframe(view.binned(per_query, shown), width="stretch",
                 key="pn_binned")
    st.caption("One point per test query (jittered sideways); lines = the mean per bin of "
               "relevant documents with its 95 % interval. Queries without a relevant "
               "document have neither metric (the first row of the table). "
               "nDCG only asks where the relevant documents are; P-nDCG also asks how sure the "
               "model was, so it falls where confident scores go to irrelevant documents.")
    st.download_button("Per-query values (CSV)", lambda: view.per_query_csv(per_query),
                       "uprank_p_ndcg_per_query.csv", "text/csv", key="pn_dl",
                       on_click="ignore")
