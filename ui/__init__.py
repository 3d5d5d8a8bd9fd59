"""Streamlit helpers shared by the pages: session state, cached loaders, charts, job panels.
Only pages import this package; ``core`` never does."""
