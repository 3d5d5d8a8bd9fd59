"""Data: pick a benchmark or upload an A/B CSV; validation report, SRM test, balance, preview."""

import streamlit as st

from core import data as datasets
from ui import common, data_view
from ui import multiarm_view as arms_view

st.title("Data")
common.select_current_source()  # the boxes show the current dataset (also after a reload)
bench_tab, upload_tab, file_tab = st.tabs(["Benchmark datasets", "Upload an A/B CSV",
                                           "Large file by path (millions of rows)"])
with bench_tab:
    data_view.benchmark_tab()
with upload_tab:
    data_view.upload_tab()
with file_tab:
    data_view.file_tab()

data = common.current_data()
st.divider()
data_view.dataset_summary(data)

if data.multiarm is not None:
    arms_view.data_section(data)
else:
    # one above the other: side by side, a laptop's 1,280 px cut the SRM table's χ² column
    # and the balance table's means
    data_view.srm_section(data)
    data_view.balance_section(data)

st.markdown("**Preview**")
st.dataframe(datasets.as_table(data, rows=200), key="data_head")
