"""The Streamlit pages that app.py navigates to (nothing else lives here)."""
