"""Evaluation of rankers: one sort-and-accumulate kernel feeds the six uplift / Qini curve
definitions, AUUC (with cut-offs), the ranking metrics (AUC, MAUC, P@k, MAP, DCG/NDCG, PCG,
P-nDCG), paired bootstrap comparisons and targeting views (profit by depth, deciles).

>>> import numpy as np
>>> from core.evaluation import auuc
>>> y = np.array([1, 0, 1, 0]); t = np.array([1, 1, 0, 0]); s = np.array([4., 3., 2., 1.])
>>> round(float(auuc(y, t, s, definition="uplift_sep_rel")), 6) == round(float(
...     auuc(y, t, s * 10, definition="uplift_sep_rel")), 6)
True
"""

from core.evaluation.compare import (
    BAND_KINDS,
    BootstrapResult,
    band,
    bootstrap_auuc,
    definition_ranks,
)
from core.evaluation.curve_tables import (
    BASELINES,
    PERFECT,
    RANDOM,
    auuc_summary,
    compare_scenarios,
    curves_frame,
    thin,
    thin_frame,
)
from core.evaluation.curves import (
    DEFINITIONS,
    Definition,
    UpliftCurves,
    auuc,
    auuc_above_random,
    auuc_table,
    perfect_auuc,
    perfect_curve,
    perfect_score,
    random_auuc,
    random_curve,
    uplift_curve,
)
from core.evaluation.metrics import (
    DISCOUNTS,
    LABEL_SETS,
    METRICS,
    WHOLE_LIST_METRICS,
    auc,
    average_precision,
    cg,
    dcg,
    dcg_exp,
    mauc,
    mean_average_precision,
    mean_average_precision_letor,
    multiclass_precision_at_k,
    ndcg,
    ndcg_exp,
    p_ndcg,
    pcg,
    pcg_cutoff,
    precision_at_k,
    relevance_labels,
    uplift_pcg,
)
from core.evaluation.targeting import (
    PROFIT_COLUMNS,
    best_depth,
    profit_curve,
    targeting_summary,
    treatment_balance_along_ranking,
    uplift_by_decile,
)

__all__ = [
    "BAND_KINDS", "BASELINES", "DEFINITIONS", "DISCOUNTS", "LABEL_SETS", "METRICS", "PERFECT",
    "PROFIT_COLUMNS", "RANDOM", "WHOLE_LIST_METRICS", "BootstrapResult", "Definition",
    "UpliftCurves", "auc", "auuc", "auuc_above_random", "auuc_summary", "auuc_table",
    "average_precision", "band", "best_depth", "bootstrap_auuc", "cg", "compare_scenarios",
    "curves_frame", "dcg", "dcg_exp", "definition_ranks", "mauc", "mean_average_precision",
    "mean_average_precision_letor", "multiclass_precision_at_k", "ndcg", "ndcg_exp", "p_ndcg",
    "pcg", "pcg_cutoff", "perfect_auuc", "perfect_curve", "perfect_score", "precision_at_k",
    "profit_curve", "random_auuc", "random_curve", "relevance_labels", "targeting_summary",
    "thin", "thin_frame", "treatment_balance_along_ranking", "uplift_by_decile", "uplift_curve",
    "uplift_pcg",
]
