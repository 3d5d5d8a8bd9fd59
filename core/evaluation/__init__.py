"""Evaluation of rankers: one sort-and-accumulate kernel feeds the six uplift / Qini curve
definitions, AUUC (with cut-offs), the ranking metrics (AUC, MAUC, P@k, MAP, DCG/NDCG, PCG,
P-nDCG) over whole lists or query by query, paired bootstrap comparisons, paired per-query
significance tests and targeting views (profit by depth, deciles).

The separate relative uplift curve ends, at the whole list, at the average treatment effect
rate(T) − rate(C); here 2/2 − 1/2:

>>> import numpy as np
>>> from core.evaluation import uplift_curve
>>> y = np.array([1, 1, 0, 1]); t = np.array([1, 1, 0, 0]); s = np.array([4., 3., 2., 1.])
>>> x, v = uplift_curve(y, t, s, definition="uplift_sep_rel")
>>> float(x[-1]), float(v[-1])
(1.0, 0.5)
"""

from core._validation import UndefinedMetricWarning
from core.evaluation import (
    across_splits,
    calibration,
    compare,
    curve_tables,
    curves,
    metrics,
    per_query,
    policy,
    significance,
    targeting,
)
from core.evaluation.across_splits import *  # noqa: F403
from core.evaluation.calibration import *  # noqa: F403
from core.evaluation.compare import *  # noqa: F403 - each module's __all__ is its API
from core.evaluation.curve_tables import *  # noqa: F403
from core.evaluation.curves import *  # noqa: F403
from core.evaluation.metrics import *  # noqa: F403
from core.evaluation.per_query import *  # noqa: F403
from core.evaluation.policy import *  # noqa: F403
from core.evaluation.significance import *  # noqa: F403
from core.evaluation.targeting import *  # noqa: F403

__all__ = [
    "UndefinedMetricWarning",  # what an undefined metric warns with (then nan): to filter it
    *across_splits.__all__,
    *calibration.__all__,
    *compare.__all__,
    *curve_tables.__all__,
    *curves.__all__,
    *metrics.__all__,
    *per_query.__all__,
    *policy.__all__,
    *significance.__all__,
    *targeting.__all__,
]
