"""The public API of ``core``: every name an ``__all__`` lists imports, no ``__all__`` repeats a
name, every subpackage's ``__init__`` names its API, and the imports the issue promised work."""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from pathlib import Path

import pytest

import core

CORE = Path(core.__file__).resolve().parent
SUBPACKAGES = ("core.data", "core.evaluation", "core.interleaving", "core.models",
               "core.objectives", "core.runs")


def _raise(name: str) -> None:
    raise  # noqa: PLE0704 - called by walk_packages inside its except: a broken package fails


def _walk() -> list[str]:
    return ["core", *(m.name for m in pkgutil.walk_packages(core.__path__, prefix="core.",
                                                            onerror=_raise))]


MODULES = _walk()
WITH_ALL = [name for name in MODULES if hasattr(importlib.import_module(name), "__all__")]


def test_walk_finds_every_module_file():
    on_disk = {".".join(p.relative_to(CORE.parent).with_suffix("").parts).removesuffix(".__init__")
               for p in CORE.rglob("*.py")}
    assert sorted(MODULES) == sorted(on_disk)
    assert set(SUBPACKAGES) <= set(MODULES)
    assert set(SUBPACKAGES) <= set(WITH_ALL)


@pytest.mark.parametrize("name", WITH_ALL)
def test_all_lists_importable_names_once(name):
    module = importlib.import_module(name)
    names = module.__all__
    assert isinstance(names, (list, tuple)), f"{name}.__all__ is a {type(names).__name__}"
    assert all(isinstance(n, str) for n in names), names
    assert [n for n, c in Counter(names).items() if c > 1] == [], f"{name}.__all__ repeats"
    missing = [n for n in names if not hasattr(module, n)]
    assert missing == [], f"{name}.__all__ lists names it does not define: {missing}"
    namespace: dict = {}
    exec(f"from {name} import *", namespace)  # noqa: S102 - the star import uses __all__
    assert set(names) <= set(namespace)


@pytest.mark.parametrize("name", WITH_ALL)
def test_docstrings_have_no_unfilled_template_fields(name):
    # TransformedOutcome's read "{_LGB_PARAMS_DOC}" in place of its 11 parameters (an
    # f-string's doubled braces)
    import inspect
    import re

    module = importlib.import_module(name)
    unfilled = [f"{n}: {m[0]}" for n in module.__all__
                if (m := re.findall(r"\{_?[A-Z][A-Z0-9]*_[A-Z0-9_]+\}", inspect.getdoc(
                    getattr(module, n)) or ""))]
    assert unfilled == [], unfilled


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_subpackage_names_its_api(name):
    assert len(importlib.import_module(name).__all__) > 0


def test_issue_contract_imports():
    import core.evaluation.curves
    from core.data import (
        DataError,
        load_dataset,
        load_hillstrom,
        load_information,
        make_uplift_world,
        read_ab_csv,
    )
    from core.evaluation import (
        DEFINITIONS,
        auc,
        auuc,
        auuc_table,
        mauc,
        ndcg,
        p_ndcg,
        pcg,
        uplift_curve,
    )
    from core.interleaving import (
        PRESETS,
        make_recommendation_world,
        simulate,
        simulate_grid,
        true_difference,
    )
    from core.models import (
        DummyTreatment,
        FlippedLabel,
        LambdaMARTRanker,
        LambdaMARTUplift,
        LinearPairwiseAUC,
        TwoModel,
        UpliftRandomForest,
    )
    from core.objectives import lambda_gradients, lightgbm_objective

    assert core.evaluation.curves.uplift_curve is uplift_curve
    assert issubclass(DataError, Exception)
    assert all(callable(f) for f in (read_ab_csv, load_dataset, load_hillstrom,
                                     load_information, make_uplift_world, auuc, auuc_table,
                                     auc, mauc, ndcg, pcg, p_ndcg, lambda_gradients,
                                     lightgbm_objective, simulate, simulate_grid,
                                     true_difference, make_recommendation_world))
    assert all(isinstance(c, type) for c in (DummyTreatment, FlippedLabel, LambdaMARTRanker,
                                             LambdaMARTUplift, LinearPairwiseAUC, TwoModel,
                                             UpliftRandomForest))
    assert len(DEFINITIONS) == 6 and len(PRESETS) > 0


def test_the_warning_of_an_undefined_metric_can_be_filtered_by_its_public_name():
    import warnings

    import numpy as np

    from core.evaluation import UndefinedMetricWarning, auc

    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        try:
            auc(np.zeros(4), np.arange(4.0))  # no relevant document: undefined
        except UndefinedMetricWarning:
            pass
        else:
            raise AssertionError("an all-zero relevance list should warn")
