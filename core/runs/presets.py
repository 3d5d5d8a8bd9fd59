"""Model configurations offered by the Train page: full, explicit parameter sets.

Run ids hash the parameters (:meth:`core.runs.store.RunConfig.run_id`), so every run is described
by its *complete* parameter set — never by "defaults of the day" — and a preset change is
visibly a different run.
"""

from __future__ import annotations

from typing import Any

from core._validation import check_choice
from core.evaluation.metrics import LABEL_SETS
from core.models import MODELS, LambdaMARTUplift, UpliftRandomForest
from core.objectives import CUTOFF_METRICS

__all__ = ["BALANCED_SHARES", "LAMBDAMART", "LAMBDAMART_METRICS", "PRESETS", "QUERIES",
           "arm_balance_note", "model_params"]

#: The Train page's label of LambdaMART uplift (its default model).
LAMBDAMART = next(label for label, cls in MODELS.items() if cls is LambdaMARTUplift)
LAMBDAMART_METRICS = ("pcg", "pcg_cutoff", "dcg", "ndcg", "map")
QUERIES = ("separate", "joint")

#: preset -> (boosting rounds, learning rate, forest trees).  "quick" finishes in seconds on
#: Hillstrom's 30k training rows; "paper" is the paper's protocol (500 trees, lr 0.01).
PRESETS: dict[str, tuple[int, float, int]] = {
    "quick": (100, 0.1, 50),
    "paper": (500, 0.01, 100),
}


def model_params(model: str, *, preset: str = "quick", metric: str = "pcg",
                 query: str = "separate", labels: str = "abs1", k: float | None = None,
                 num_threads: int = 1) -> dict[str, Any]:
    """Complete constructor keywords of ``model`` (a :data:`core.models.baselines.MODELS` label).

    ``metric``, ``query``, ``labels`` and ``k`` (a fraction in (0, 1] or ``None`` = whole
    list) apply to LambdaMART only; ``k=1`` is the whole list (``None``) except for
    ``pcg_cutoff``, which always carries its cut-off.  Metrics outside
    :data:`~core.objectives.CUTOFF_METRICS` (MAP) take no ``k``.  ``num_threads`` keeps
    LightGBM polite on a laptop that is also serving the app.
    """
    cls = MODELS[check_choice(model, "model", MODELS)]
    rounds, lr, trees = PRESETS[check_choice(preset, "preset", PRESETS)]
    if cls is UpliftRandomForest:
        return {"n_estimators": trees, "criterion": "ed", "max_depth": 8, "min_samples_arm": 25}
    params: dict[str, Any] = {"n_estimators": rounds, "learning_rate": lr,
                              "num_threads": int(num_threads)}
    if cls is LambdaMARTUplift:
        check_choice(metric, "metric", LAMBDAMART_METRICS)
        check_choice(query, "query", QUERIES)
        check_choice(labels, "labels", LABEL_SETS)
        if metric == "pcg_cutoff" and k is None:
            raise ValueError("metric 'pcg_cutoff' needs a cut-off k in (0, 1]; got None.")
        if k == 1 and metric != "pcg_cutoff":
            k = None  # the whole list: the same run as no cut-off
        if k is not None and metric not in CUTOFF_METRICS:
            raise ValueError(f"metric {metric!r} takes no cut-off k; got k={k!r}.")
        params.update(metric=metric, query=query, labels=labels, k=k)
    return params


#: Treated shares outside this range make the Train page advise the joint query.
BALANCED_SHARES = (0.25, 0.75)


def arm_balance_note(treated_share: float, query: str) -> str:
    """A sentence for the Train page when the arms are unbalanced and LambdaMART would train
    on separate queries, else ``""``.

    ``python -m bench.arm_balance`` (README): with 10 % treated, separate queries ranked worse
    than random targeting on the uplift world (the larger arm's query dominates the
    gradients), the joint query with Rel labels as well as Two-model.
    """
    low, high = BALANCED_SHARES
    if query != "separate" or low <= treated_share <= high:
        return ""
    larger = "control" if treated_share < low else "treated"
    return (f"{treated_share:.0%} of the rows are treated. With unbalanced arms the separate "
            f"queries train mostly on the {larger} query and may learn its response instead "
            "of the uplift: in a simulation with 10 % treated they ranked worse than random "
            "targeting, while the **joint** query with **Rel** labels held up. Consider "
            "Queries = joint, Relevance labels = Rel.")


def run_label(config) -> str:
    """Short human name of a run: model, its key settings, budget, split and seed."""
    p = config.params_dict
    name = config.model.split(" (")[0]
    if "metric" in p:
        k = f"@{p['k']:.0%}" if p.get("k") else ""
        # the label set as the Train page writes it (Abs1, Rel), the split as its option
        # ("one 70/30 split"), not the code names abs1 / holdout
        name = (f"LambdaMART-{p['metric'].upper()}{k} ({p['query']}, "
                f"{str(p['labels']).capitalize()})")
    test = round(100 * float(getattr(config, "test_size", 0.3)))
    split = (f"one {100 - test}/{test} split" if config.scheme == "holdout"
             else f"{config.n_repeats} splits")
    return f"{name} · {p.get('n_estimators', '?')} trees · {split} · seed {config.seed}"


def run_table(runs, *, definition: str = "uplift_sep_rel"):
    """One row per stored run: label, test AUUC under ``definition`` (mean over splits) at
    30 % and 100 %, when it was trained (UTC) and its id."""
    import pandas as pd

    rows = []
    for run in runs:
        auuc = (run.result.get("metrics_mean", {}).get("auuc", {}).get(definition, {}))
        when = pd.Timestamp(run.created) if run.created else None
        rows.append({"run": run_label(run.config),
                     "test AUUC@30%": auuc.get("AUUC@30%"),
                     "test AUUC@100%": auuc.get("AUUC@100%"),
                     "trained": "" if when is None else (
                         when.strftime("%Y-%m-%d %H:%M") + (" UTC" if when.tzinfo else "")),
                     "run id": run.config.run_id()})
    return pd.DataFrame(rows)
