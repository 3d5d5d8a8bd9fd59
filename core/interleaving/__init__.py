"""Online evaluation of recommendations' causal effects (Sato 2021): worlds with both potential
outcomes, A/B and interleaving designs (EPI, CBI with exact propensities), the estimators of
eqs. 4–8, simulated experiments and their summaries (Table 2, Figure 1, users needed).

Modules: :mod:`~core.interleaving.comparison` (method names, :class:`Comparison`, the truth),
:mod:`~core.interleaving.estimators`, :mod:`~core.interleaving.simulation`,
:mod:`~core.interleaving.worlds`.
"""

from core.interleaving.comparison import (
    METHODS,
    PAPER_METHODS,
    PAPER_USER_COUNTS,
    Comparison,
    Progress,
    true_difference,
    user_effects,
)
from core.interleaving.estimators import (
    cbi_lists,
    cbi_propensities,
    cbi_propensities_mc,
    cbi_propensity_table,
    epi_lists,
    estimate_ab_list,
    estimate_ab_total,
    estimate_ips,
    estimate_rct,
    observe,
)
from core.interleaving.simulation import (
    bias_table,
    false_judgment_curve,
    false_judgment_rates,
    simulate,
    simulate_grid,
    simulate_many,
    users_needed,
)
from core.interleaving.worlds import (
    PRESETS,
    RANKERS,
    Preset,
    RecWorld,
    WorldParams,
    make_comparison,
    make_recommendation_world,
    preset_comparison,
    rank_lists,
    ranker_scores,
    targeting_world_from_ab,
)

__all__ = [
    "METHODS", "PAPER_METHODS", "PAPER_USER_COUNTS", "PRESETS", "RANKERS", "Comparison",
    "Preset", "Progress", "RecWorld", "WorldParams", "bias_table", "cbi_lists",
    "cbi_propensities", "cbi_propensities_mc", "cbi_propensity_table", "epi_lists",
    "estimate_ab_list", "estimate_ab_total", "estimate_ips", "estimate_rct",
    "false_judgment_curve", "false_judgment_rates", "make_comparison",
    "make_recommendation_world", "observe", "preset_comparison", "rank_lists", "ranker_scores",
    "simulate", "simulate_grid", "simulate_many", "targeting_world_from_ab", "true_difference",
    "user_effects", "users_needed",
]
