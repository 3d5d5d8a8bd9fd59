"""Label ranking (Djuric et al. 2014, AMM-rank; SPEC §7): for each user, rank L labels (e.g.
ad categories) from incomplete observed rankings — AMM-rank, its baselines, the paper's metrics
and seeded data generators.

Rankings are ``(n, L)`` integer position arrays (1 = most preferred, 0 = not ranked;
:mod:`core.label_ranking._rankings`); every estimator has ``fit(X, Y, *, groups=None)`` and
``predict(X)`` returning complete positions ``1 … L``.

>>> import numpy as np
>>> from core.label_ranking import CentralMallows, disagreement_error
>>> Y = np.array([[1, 2, 0], [1, 0, 2], [2, 1, 0]])
>>> pred = CentralMallows(random_state=0).fit(np.zeros((3, 1)), Y).predict(np.zeros((3, 1)))
>>> pred[0].tolist(), round(disagreement_error(Y, pred), 4)  # rows 2 and 3: 1 of 3 pairs wrong
([1, 2, 3], 0.2222)
"""

from core.label_ranking import _rankings, amm, baselines, data, metrics
from core.label_ranking._rankings import *  # noqa: F403 - each module's __all__ is its API
from core.label_ranking.amm import *  # noqa: F403
from core.label_ranking.baselines import *  # noqa: F403
from core.label_ranking.data import *  # noqa: F403
from core.label_ranking.metrics import *  # noqa: F403

__all__ = [
    *_rankings.__all__,
    *amm.__all__,
    *baselines.__all__,
    *data.__all__,
    *metrics.__all__,
]
