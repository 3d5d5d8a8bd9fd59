"""Streamlit pages and the Streamlit-aware helpers they share (never imported by core/)."""
