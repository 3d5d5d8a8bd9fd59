"""Glossary: every term shown on UpRank's screens in plain words (ui/glossary.py)."""

import streamlit as st

from ui import common
from ui.glossary import GLOSSARY

common.keep_dataset_in_url()  # also when this page's URL is the first a fresh server sees
st.title("Glossary")
st.caption("The same sentences appear as the (?) tooltips next to these terms on the other "
           "pages.")
query = st.text_input("Search", key="glossary_search", placeholder="e.g. AUUC, cut-off, random",
                      help="Shows the terms whose name or explanation contains the text.")
needle = query.strip().lower()
terms = [term for term in sorted(GLOSSARY, key=str.lower)
         if needle in term.lower() or needle in GLOSSARY[term].lower()]
if not terms:
    st.info(f"No term matches “{query.strip()}”.")
for term in terms:
    st.markdown(f"**{term}**  \n{GLOSSARY[term]}")
st.caption(f"{len(terms)} of {len(GLOSSARY)} terms shown.")
