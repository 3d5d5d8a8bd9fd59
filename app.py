"""UpRank — compare rankers for uplift modelling.  Entry point: page config and navigation."""

import streamlit as st

from ui import common

st.set_page_config(page_title="UpRank", page_icon=":material/leaderboard:", layout="wide")

navigation = st.navigation(
    {
        "Data": [
            st.Page("pages/data.py", title="Data", icon=":material/table:", default=True),
        ],
        "Models": [
            st.Page("pages/train.py", title="Train", icon=":material/model_training:"),
            st.Page("pages/compare.py", title="Compare", icon=":material/leaderboard:"),
        ],
        "Evaluate": [
            st.Page("pages/curves.py", title="Curves", icon=":material/show_chart:"),
            st.Page("pages/definitions.py", title="Definitions", icon=":material/compare:"),
            st.Page("pages/interleaving.py", title="Interleaving", icon=":material/shuffle:"),
            st.Page("pages/label_ranking.py", title="Label ranking",
                    icon=":material/format_list_numbered:"),
        ],
        "Ranking lab": [
            st.Page("pages/ranking_data.py", title="Ranking data", icon=":material/dataset:"),
            st.Page("pages/ranking_runs.py", title="Ranking runs",
                    icon=":material/model_training:"),
            st.Page("pages/ranking_compare.py", title="Ranking compare",
                    icon=":material/query_stats:"),
            st.Page("pages/p_ndcg.py", title="P-nDCG explorer", icon=":material/functions:"),
        ],
        "Help": [
            st.Page("pages/glossary.py", title="Glossary", icon=":material/menu_book:"),
        ],
    }
)
common.start_app()  # every page keeps the chosen dataset in the URL
navigation.run()
