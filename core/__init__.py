"""UpRank's numerical core: datasets, uplift curves, ranking metrics, λ-objectives, models and
interleaving simulators.  Pure numpy / pandas / scikit-learn / LightGBM — never Streamlit, so a
notebook can ``from core import curves`` without the web stack."""
