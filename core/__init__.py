"""UpRank's numerical core, one subpackage per concern (pure numpy / pandas / scikit-learn /
LightGBM / numba — never Streamlit, so a notebook imports it without the web stack).

==================  ========================================================================
``core.data``        A/B data: readers, validation, benchmark loaders, synthetic worlds,
                     hygiene checks (SRM, balance), train/test splits
``core.evaluation``  the curve kernel, six uplift/Qini definitions, AUUC tables, ranking
                     metrics, paired comparisons, targeting (profit, deciles)
``core.objectives``  the λ-gradient engine and LightGBM custom objectives
``core.models``      uplift and ranking estimators with one API
``core.interleaving`` online experiments: worlds, CBI propensities, estimators, simulation
``core.runs``        background jobs, the run store, presets, reports and exports
==================  ========================================================================

Import arrows run one way: ``runs → models → objectives / evaluation / interleaving / data →
_validation``.  Each subpackage's ``__init__`` names its public API, e.g.
``from core.evaluation import uplift_curve, auuc``.
"""
