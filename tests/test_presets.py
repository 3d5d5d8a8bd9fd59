"""core.runs.presets: complete, explicit parameter sets that the models accept."""

from __future__ import annotations

import pytest

from core.models import MODELS, make_model
from core.runs.presets import LAMBDAMART, PRESETS, model_params


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_builds_the_model_with_those_params(model, preset):
    params = model_params(model, preset=preset)
    est = make_model(model, **params)
    got = est.get_params()
    assert {k: got[k] for k in params} == params


def test_lambdamart_settings_and_errors():
    p = model_params(LAMBDAMART, metric="pcg_cutoff", query="joint", labels="rel", k=0.3)
    assert (p["metric"], p["query"], p["labels"], p["k"]) == ("pcg_cutoff", "joint", "rel", 0.3)
    assert p["n_estimators"] == PRESETS["quick"][0]
    with pytest.raises(ValueError, match="needs a cut-off k"):
        model_params(LAMBDAMART, metric="pcg_cutoff")
    with pytest.raises(ValueError, match="preset must be one of 'quick', 'paper'; got 'slow'"):
        model_params(LAMBDAMART, preset="slow")


def test_cutoff_k_follows_the_metric():
    """k = 1 is the whole list (the same run as no k) except for pcg_cutoff, which keeps it;
    MAP takes no cut-off; the rule is core's (CUTOFF_METRICS), not the page's."""
    from core.objectives import CUTOFF_METRICS

    assert "map" not in CUTOFF_METRICS and {"pcg", "pcg_cutoff", "ndcg"} <= set(CUTOFF_METRICS)
    assert model_params(LAMBDAMART, metric="pcg", k=1.0) == model_params(LAMBDAMART, metric="pcg")
    assert model_params(LAMBDAMART, metric="pcg_cutoff", k=1.0)["k"] == 1.0
    assert model_params(LAMBDAMART, metric="map")["k"] is None
    with pytest.raises(ValueError, match="metric 'map' takes no cut-off k; got k=0.3"):
        model_params(LAMBDAMART, metric="map", k=0.3)


def test_the_arm_balance_note_advises_the_joint_query_only_for_unbalanced_separate_queries():
    from core.runs.presets import arm_balance_note

    assert arm_balance_note(0.5, "separate") == arm_balance_note(0.25, "separate") == ""
    assert arm_balance_note(0.1, "joint") == ""
    low, high = arm_balance_note(0.1, "separate"), arm_balance_note(0.9, "separate")
    assert low.startswith("10% of the rows are treated") and "on the control query" in low
    assert "on the treated query" in high
    assert "Queries = joint, Relevance labels = Rel" in low
