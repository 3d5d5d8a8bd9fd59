"""Online evaluation of recommendations' causal effects (Sato 2021): worlds with both potential
outcomes, A/B and interleaving designs (EPI, CBI with exact propensities), the estimators of
eqs. 4–8, simulated experiments and their summaries (Table 2, Figure 1, users needed).

Modules: :mod:`~core.interleaving.comparison` (method names, :class:`Comparison`, the truth),
:mod:`~core.interleaving.estimators`, :mod:`~core.interleaving.simulation`,
:mod:`~core.interleaving.worlds`.
"""

from core.interleaving import comparison, estimators, simulation, worlds
from core.interleaving.comparison import *  # noqa: F403 - each module's __all__ is its API
from core.interleaving.estimators import *  # noqa: F403
from core.interleaving.simulation import *  # noqa: F403
from core.interleaving.worlds import *  # noqa: F403

__all__ = [*comparison.__all__, *estimators.__all__, *simulation.__all__, *worlds.__all__]
