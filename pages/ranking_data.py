"""Ranking data: pick the learning-to-rank dataset of the Ranking lab (LETOR MQ2008, the
synthetic LTR world, or an upload) and see its queries, documents and grades."""

import streamlit as st

from core.runs.export import safe_csv_bytes
from core.runs.ltr_runs import RankingSource
from ui import common
from ui import ranking_view as view
from ui.glossary import GLOSSARY

common.keep_dataset_in_url()
st.title("Ranking data")
st.markdown("Ordinary learning-to-rank data: **queries**, each with a list of **documents** "
            "and a graded **relevance** (0 = not relevant). Rankers learn to put the relevant "
            "documents of every query first; the Ranking lab trains them and compares them "
            "query by query.")
current = view.current_source()
kinds = {"mq2008": "LETOR 4.0 MQ2008 (web search, 46 features)",
         "world": "Synthetic LTR world (known relevance)", "upload": "Upload a file"}
kind = st.radio("Dataset", list(kinds), format_func=kinds.get, horizontal=True,
                index=list(kinds).index(current.kind), key="rk_kind")
upload = None
with common.guard("Reading the ranking data"):
    if kind == "mq2008":
        folds = view.folds_available()
        if not folds:
            st.warning("MQ2008 was not found in the data folders and could not be downloaded. "
                       "Put `mq2008_fold1/{train,vali,test}.txt.gz` in the folder named by "
                       "UPRANK_DATA_DIR, or pick the synthetic world.")
            st.stop()
        fold = st.selectbox("Fold", folds, key="rk_fold", help=GLOSSARY["MQ2008"])
        view.set_source(RankingSource.make("mq2008", fold=int(fold)))
    elif kind == "world":
        c1, c2, c3 = st.columns(3)
        n_queries = c1.select_slider("Queries", [100, 300, 1000, 3000], 300, key="rk_wq")
        share = c2.slider("Share of queries with no relevant document", 0.0, 0.9, 0.3, 0.05,
                          key="rk_wshare", help=GLOSSARY["Queries without a relevant document"])
        seed = c3.number_input("Seed", 0, 10_000, 0, key="rk_wseed")
        view.set_source(RankingSource.make("world", n_queries=int(n_queries),
                                           no_relevant_share=float(share),
                                           random_state=int(seed)))
    else:
        st.caption("A LETOR / SVMlight file (`2 qid:10 1:0.5 2:0.1 … # docid = D1`, gzip "
                   "allowed) or a CSV / Parquet table with a query column, a relevance column "
                   "and numeric feature columns. It is split by whole queries into 60 % "
                   "training, 20 % validation and 20 % test.")
        upload = st.file_uploader("Ranking file", type=["txt", "gz", "svm", "libsvm", "csv",
                                                        "tsv", "parquet"], key="rk_file")
        view.default_format(upload)  # a new file: the format its extension suggests
        u1, u2, u3 = st.columns(3)
        fmt = u1.radio("Format", ["letor", "table"], horizontal=True, key="rk_fmt",
                       format_func={"letor": "LETOR / SVMlight", "table": "CSV / Parquet"}.get)
        query = u2.text_input("Query column", "qid", key="rk_qcol", disabled=fmt == "letor")
        relevance = u3.text_input("Relevance column", "relevance", key="rk_rcol",
                                  disabled=fmt == "letor")
        earlier = view.earlier_uploads()
        if upload is None and earlier:
            e1, e2 = st.columns([4, 1], vertical_alignment="bottom")
            fp = e1.selectbox("Or reopen an earlier upload", list(earlier),
                              format_func=earlier.get, key="rk_earlier")
            if e2.button("Reopen", key="rk_reopen"):
                data = view.stored_upload(fp)
                view.set_source(RankingSource.make("upload", fingerprint=fp, name=data.name),
                                data)
        if upload is not None:
            options = (("format", "letor"),) if fmt == "letor" else (
                ("format", "table"), ("query", query.strip()), ("relevance", relevance.strip()))
            data = view.read_upload(upload.getvalue(), upload.name, options)
            view.set_source(RankingSource.make("upload", fingerprint=data.fingerprint(),
                                               name=upload.name), data)
        elif view.current_source().kind != "upload":
            st.info("Upload a file to use it; the Ranking lab keeps the previous dataset until "
                    "then.")
            st.stop()
splits = None
with common.guard("Loading the ranking data"):
    splits = view.current_splits()
if splits is None:
    st.stop()

source = view.current_source()
refused = upload is not None and source.label() != f"Upload: {upload.name}"
if source.kind != kind or refused:  # a failed upload: nothing lost, the previous data stay
    st.caption(f":material/history: The Ranking lab still uses **{source.label()}**.")
st.subheader(source.label())
for warning in view.grade_warnings(splits):
    st.warning(warning, icon=":material/warning:")
table = view.split_table(splits)
total = table.sum(numeric_only=True)
m = st.columns(4)
m[0].metric("Queries", f"{int(total['queries']):,}")
m[1].metric("Documents", f"{int(total['documents']):,}")
m[2].metric("Features", f"{splits['train'].n_features:,}")
none = int(total["queries without a relevant doc"])
m[3].metric("No relevant doc", f"{none:,}",  # the share below: "220 (28%)" was
            f"{none / total['queries']:.0%} of the queries",  # cut at a laptop's width
            delta_color="off", delta_arrow="off",
            help=GLOSSARY["Queries without a relevant document"])
st.dataframe(table, width="stretch", key="rk_split_table",
             column_config={"share without": st.column_config.NumberColumn(format="percent"),
                            "documents": st.column_config.NumberColumn(format="localized"),
                            "docs per query (median)": st.column_config.NumberColumn(
                                format="localized"),  # 14.5 (an even count), not 15
                            # short labels: the long ones cut the last column at 1,100 px
                            "queries without a relevant doc": st.column_config.NumberColumn(
                                "no relevant doc", help="Queries without a relevant document: "
                                + GLOSSARY["Queries without a relevant document"])})
f1, f2 = st.columns(2)
f1.plotly_chart(view.query_size_figure(splits), width="stretch", key="rk_sizes")
f2.plotly_chart(view.grade_figure(splits), width="stretch", key="rk_grades")
with st.expander("Queries of the training split"):
    st.dataframe(view.training_queries(splits), width="stretch", hide_index=True,
                 key="rk_queries")
st.download_button("Download the test split (CSV)",
                   lambda: safe_csv_bytes(splits["test"].to_frame()),
                   "uprank_ranking_test.csv", "text/csv", key="rk_dl_test", on_click="ignore")
st.page_link("pages/ranking_runs.py", label="Next: train rankers",
             icon=":material/model_training:")
