"""Ranking compare: per-query metrics of stored ranking runs on the test queries, paired
per-query significance tests with a plain verdict, and a query explorer."""

import streamlit as st

from core.runs.export import safe_csv_bytes
from ui import common
from ui import ranking_view as view
from ui.glossary import GLOSSARY, PNDCG_NOTE

common.keep_dataset_in_url()
st.title("Compare rankers query by query")
view.caption()
names = view.runs_or_stop("compare rankers query by query")
root = str(view.store().root)

common.remember("rkc_runs", view.preselected_runs(view.current_runs()), options=list(names))
chosen = st.multiselect("Runs", list(names), key="rkc_runs", format_func=names.get)
common.remember("rkc_k", 10)
k = st.columns(4)[0].number_input("Cut-off k", 1, 100, key="rkc_k",
                                 help=GLOSSARY["NDCG@k"])
if not chosen:
    st.info("Pick at least one run.")
    st.stop()

with common.guard("Comparing the runs"):
    frames = {names[key]: view.per_query(root, key, int(k)) for key in chosen}
    metrics = view.metric_labels(int(k))
    st.subheader("Mean over the test queries")
    st.dataframe(view.means_table(frames, metrics), width="stretch", key="rkc_means")
    n_q = len(next(iter(frames.values())))
    st.caption(f"{n_q:,} test {view.plural(n_q, 'query', 'queries')}. AUC, MAUC, MAP, NDCG "
               "and P-nDCG leave out the queries without a relevant document (nothing to put "
               "first); LETOR's MAP counts them as 0. P@k is the share of relevant documents "
               "(grade > 0) in the top k, over every query (0 for one without a relevant "
               "document); micro and macro P@k (Welleck 2016) divide by the number of "
               "grades C as well, so they are about P@k / C, and are averages over the "
               "queries (not shown per query). P-nDCG turns each run's score into a "
               "probability by Platt calibration on the test documents. "
               + PNDCG_NOTE["platt"].split(". ", 1)[1])

    m1, m2, m3 = st.columns(3)
    families = view.metric_families(int(k))  # keyed by family: k keeps NDCG@k selected
    common.remember("rkc_metric", "mauc", options=list(families))
    family = m1.selectbox("Metric", list(families), key="rkc_metric",
                          format_func=families.get)
    metric, label = view.metric_column(family, int(k)), families[family]
    test = m2.radio("Test", ["t-test", "permutation"], horizontal=True, key="rkc_test",
                    help=GLOSSARY["Paired per-query test"])
    correction = m3.radio("Correction for several pairs", ["holm", "bonferroni", "none"],
                          horizontal=True, key="rkc_corr",
                          format_func={"holm": "Holm", "bonferroni": "Bonferroni",
                                       "none": "none"}.get)
    st.plotly_chart(view.distribution_figure(frames, metric, label),
                    width="stretch", key="rkc_dist")
    if len(frames) >= 2:
        st.subheader("Paired per-query tests", help=GLOSSARY["Paired per-query test"])
        tests = view.paired(tuple(chosen), frames, metric, test, correction)
        for verdict, winner in view.verdicts(tests, label):
            (st.success if winner else st.info)(verdict)
        st.caption(view.paired_note(frames, tests, label))
        st.dataframe(view.tests_display(tests), width="stretch", hide_index=True,
                     key="rkc_tests")
    else:
        st.caption("Pick a second run for paired tests.")

    st.subheader("Query explorer")
    qt = next(iter(frames.values()))
    e1, e2 = st.columns([3, 1])
    qid = e1.selectbox("Query", list(qt.index), key="rkc_query",
                       format_func=lambda q: f"query {q} — {qt.loc[q, 'n_docs']:,} documents, "
                                             f"{qt.loc[q, 'n_relevant']:,} relevant")
    top = e2.number_input("Documents shown", 5, 200, 20, key="rkc_top")
    per_query = view.metric_labels(int(k), per_query=True)
    st.dataframe(view.query_metrics(frames, qid, per_query), width="stretch",
                 key="rkc_qmetrics")
    cols = st.columns(min(len(chosen), 2))
    for i, key in enumerate(chosen):
        col = cols[i % len(cols)]
        col.markdown(f"**{names[key]}**")
        col.dataframe(view.query_list(root, key, qid, int(top)), hide_index=True,
                      width="stretch", key=f"rkc_list_{key}",
                      column_config=view.query_list_columns(view.max_grade(root, key)))
    st.caption("Documents in each run's order, best first; grade = the judged relevance "
               "(0 = not relevant). P-nDCG also weighs how confident each run is (its "
               "Platt-calibrated probabilities), so it can differ between two runs whose "
               "orders every other metric scores alike.")

    d1 = d2 = st.container(horizontal=True)  # side by side, wrapped when the page is narrow
    d1.download_button("Per-query metrics (CSV)", lambda: safe_csv_bytes(
        view.long_frame(frames)), "uprank_ranking_per_query.csv", "text/csv",
        key="rkc_dl_pq", on_click="ignore")
    if len(frames) >= 2:
        d2.download_button("Paired tests (CSV)", lambda: safe_csv_bytes(tests),
                           "uprank_ranking_tests.csv", "text/csv", key="rkc_dl_tests",
                           on_click="ignore")
