"""Several-arms experiments as background tasks: one per-arm uplift model
(:class:`core.models.PerArmUplift`) trained on 70 % of an A/B/n dataset, its predicted uplift
of every arm on the other 30 % stored with the outcomes and arms — from which the Compare
page draws per-arm curves, the policy table, the multi-armed Qini curve and calibration
(``ui.multiarm_view``), and the reports their sections.

``bench.multiarm`` measures the same models on Hillstrom; this module is the app's path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_choice
from core.runs.tasks import TaskSpec

__all__ = ["MULTIARM_MODELS", "PAIR_ROWS", "POLICY_NOTE", "RULE", "VS_RULE", "VS_RULE_SE",
           "arm_pair", "arm_summary", "calibration_caveat", "cost_sentence", "list_multiarm_runs",
           "load_multiarm", "models_for", "multiarm_report", "multiarm_sections", "multiarm_spec",
           "multiarm_task", "policy_table", "policy_takeaway", "score_export",
           "score_scale_caveat", "shares_label", "split_rows"]

TASK = "core.runs.multiarm_runs:multiarm_task"
KIND = "multiarm"

#: Model label → (per-arm class, keywords besides the budget); "(0/1 only)" models need a
#: binary outcome.  The budget keywords of each class: :func:`_budget`.
MULTIARM_MODELS = {
    "Two-model per arm": ("TwoModel", {}),
    "Transformed outcome per arm": ("TransformedOutcome", {}),
    "Flipped label per arm (0/1 only)": ("FlippedLabel", {}),
    "LambdaMART-PCG per arm (0/1 only)": ("LambdaMARTUplift", {"metric": "pcg"}),
    "LambdaMART-PCG, transformed-outcome labels, per arm": (
        "LambdaMARTUplift", {"metric": "pcg", "labels": "transformed"}),
    "Uplift forest per arm (0/1 only)": ("UpliftRandomForest", {}),
}


def models_for(outcome_kind: str) -> list[str]:
    """The :data:`MULTIARM_MODELS` that take an outcome of this kind (binary / continuous)."""
    return [m for m in MULTIARM_MODELS if outcome_kind == "binary" or "0/1 only" not in m]


def _budget(cls: str, trees: int) -> dict:
    """Per-arm keywords of the budget: boosted models get ``trees`` rounds at learning rate
    0.1 on one thread; the forest grows ``min(trees, 100)`` trees."""
    if cls == "UpliftRandomForest":
        return {"n_estimators": min(int(trees), 100)}
    return {"n_estimators": int(trees), "learning_rate": 0.1, "num_threads": 1}


def load_multiarm(dataset: Mapping[str, str]):
    """The dataset a choice's URL parameters name (``{"dataset": key, **options}``,
    ``{"upload": fingerprint}`` or ``{"file": path, …}``), whose ``.multiarm`` holds the
    A/B/n experiment; DataError when it has none."""
    from core.data import DataError, DatasetChoice

    choice = DatasetChoice.from_params(dict(dataset))
    if choice is None:
        raise DataError(f"No dataset is named by {dict(dataset)!r}.")
    data = choice.load()
    if data.multiarm is None:
        raise DataError(f"{data.name} is a two-arm A/B test with a 0/1 outcome; the "
                        "several-arms models need an A/B/n dataset or a continuous outcome.")
    return data


def split_rows(t: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """70 / 30 train / test rows, stratified by arm."""
    from sklearn.model_selection import train_test_split

    return train_test_split(np.arange(t.shape[0]), test_size=0.3, stratify=t,
                            random_state=seed)


def multiarm_spec(dataset: Mapping[str, str], model: str, *, trees: int = 100,
                  seed: int = 0, fingerprint: str | None = None) -> TaskSpec:
    """The background task training ``model`` per arm on ``dataset`` (a dataset choice's
    URL parameters, see :meth:`core.data.DatasetChoice.to_params`).  ``fingerprint`` (of the
    data's two-arm view) files the job under its dataset and is checked by the task."""
    check_choice(model, "model", MULTIARM_MODELS)
    dataset = {str(k): str(v) for k, v in dict(dataset).items()}
    params = {"dataset": dataset, "model": model, "trees": int(trees), "seed": int(seed)}
    if fingerprint is not None:
        params["fingerprint"] = str(fingerprint)
    return TaskSpec.make(TASK, params, label=f"{model} · {trees} trees", trains=True)


def multiarm_task(params: dict, *, inputs: dict, store: Any,
                  progress: Callable[[float, str], None]) -> tuple[dict, dict]:
    """The worker's entry point (see :mod:`core.runs.tasks`)."""
    from core.models import PerArmUplift

    progress(0.0, "loading the data…")
    view = load_multiarm(params["dataset"])
    if params.get("fingerprint") not in (None, view.fingerprint()):
        raise ValueError("The dataset now reads as other data than when the job was queued; "
                         "open it again on the Data page.")
    data = view.multiarm
    cls, extra = MULTIARM_MODELS[params["model"]]
    if params["model"] not in models_for(data.outcome_kind):
        raise ValueError(f"{params['model']} needs a 0/1 outcome; this outcome is "
                         "continuous — pick Two-model or Transformed outcome.")
    tr, te = split_rows(data.t, params["seed"])
    model = PerArmUplift(cls, {**_budget(cls, params["trees"]), **extra},
                         random_state=params["seed"])
    t0 = time.perf_counter()
    model.fit(data.X.iloc[tr], data.y[tr], data.t[tr],
              callback=lambda i, total: progress(i / total, f"round {i}/{total}"))
    tau = model.predict(data.X.iloc[te])
    ids = data.ids[te] if data.ids is not None else te + 1
    frame = pd.DataFrame({data.id_name: ids, "y": data.y[te].astype(np.float64),
                          "t": data.t[te]})
    for k in range(tau.shape[1]):
        frame[f"tau_{k + 1}"] = tau[:, k]
    meta = {"kind": KIND, "dataset": params["dataset"], "fingerprint": view.fingerprint(),
            "name": data.name, "model": params["model"], "trees": params["trees"],
            "seed": params["seed"], "arms": list(data.arms), "id_name": data.id_name,
            "design": [float(v) for v in data.design], "outcome": data.outcome_kind,
            "fit_seconds": time.perf_counter() - t0,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "cost": None if data.cost is None else [float(c) for c in data.cost]}
    return meta, {"test": frame}


def list_multiarm_runs(store: Any, fingerprint: str) -> pd.DataFrame:
    """Stored several-arms runs on the data ``fingerprint``, newest first: key, model,
    trees, seed, fit seconds, created."""
    rows = [{"key": key, "model": meta["model"], "trees": meta["trees"], "seed": meta["seed"],
             "fit (s)": meta["fit_seconds"], "created": meta["created"]}
            for key, meta in store.list_results(kind=KIND, fingerprint=fingerprint)]
    frame = pd.DataFrame(rows, columns=["key", "model", "trees", "seed", "fit (s)", "created"])
    return frame.sort_values("created", ascending=False, kind="stable").reset_index(drop=True)


#: The per-arm table's row count: the arm's test rows and the control's (their sum over the
#: arms exceeds the test rows, which count the control once).
PAIR_ROWS = "test rows (arm + control)"
RULE = "best arm per customer (model)"  #: the model's row of :func:`policy_table`
#: What the policy table's columns mean, under the table on the page and in the report.
POLICY_NOTE = ("Value = mean outcome per customer if every customer got the policy's arm, "
               "estimated from the randomised test rows by inverse propensity (design shares), "
               "± one standard error. Net value subtracts the mean cost. Vs rule = this "
               "policy's net value minus the model rule's, ± the standard error of that "
               "difference on the same customers. The random arm gives each customer each "
               "arm with equal chance (its expected value, not one draw).")
VS_RULE, VS_RULE_SE = "vs rule", "vs rule ± SE"  #: its paired comparison columns


def policy_table(test: pd.DataFrame, arms: list[str], design: list[float],
                 cost: np.ndarray) -> pd.DataFrame:
    """IPW value ± SE of the best-arm rule, every single arm and a random arm, each with its
    mean cost and net value (value − cost) per customer, the share of customers each arm
    gets (``"arm shares"``, the arms in order: :func:`shares_label` names them), and its net
    value minus the rule's with the paired standard error of that difference
    (:data:`VS_RULE`, :data:`VS_RULE_SE`; :func:`core.evaluation.policy_difference` — the
    policies are scored on the same rows, so the two values' errors are correlated); NaN on
    the rule's own row ("—" for people, not "0.0000 ± 0.0000").

    "random arm" gives every customer each arm with probability ``1 / (K + 1)``: its value
    is the exact expectation over the draws (the mean of the single-arm values), not one
    draw's."""
    from core.evaluation import best_arm_policy, mean_se, policy_terms

    y, t = test["y"].to_numpy(), test["t"].to_numpy()
    n, k1 = len(y), len(arms)
    tau = test[[f"tau_{k}" for k in range(1, k1)]].to_numpy()
    prop = np.tile(np.asarray(design), (n, 1))
    full_cost = np.r_[0.0, cost]
    one_hot = np.eye(k1)  # every policy as each row's arm probabilities: one form for all
    policies = {RULE: one_hot[best_arm_policy(tau, cost)],
                **{f"everyone: {a}": np.tile(one_hot[k], (n, 1)) for k, a in enumerate(arms)},
                "random arm": np.full((n, k1), 1.0 / k1)}
    # each policy's per-row terms and costs once: its value, and its paired difference to
    # the rule (policy_difference's d_i), from the same arrays
    terms = {name: policy_terms(pi, y, t, prop) for name, pi in policies.items()}
    costs = {name: pi @ full_cost for name, pi in policies.items()}
    rows = []
    for name, pi in policies.items():
        value, se = mean_se(terms[name])
        spend, shares = float(costs[name].mean()), pi.mean(axis=0)
        diff, diff_se = ((np.nan, np.nan) if name == RULE else mean_se(  # not against itself
            (terms[name] - terms[RULE]) - (costs[name] - costs[RULE])))
        rows.append({"policy": name, "value": value, "± SE": se, "cost": spend,
                     "net value": value - spend, VS_RULE: diff, VS_RULE_SE: diff_se,
                     "arm shares": " / ".join(f"{s:.0%}" for s in shares)})
    return pd.DataFrame(rows).set_index("policy")


def shares_label(arms: list[str]) -> str:
    """The ``arm shares`` column of :func:`policy_table` named by its arms, for people.

    >>> shares_label(["No E-Mail", "Womens", "Mens"])
    'arm shares (No E-Mail / Womens / Mens)'
    """
    return f"arm shares ({' / '.join(map(str, arms))})"


def arm_pair(test: pd.DataFrame, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Treatment arm ``k`` against control on a run's stored test rows: ``(y, t, score)``
    of their rows, ``t`` 0/1 and the score the predicted uplift of arm ``k``."""
    t = test["t"].to_numpy()
    rows = (t == k) | (t == 0)
    return (test["y"].to_numpy()[rows], (t[rows] == k).astype(np.int8),
            test[f"tau_{k}"].to_numpy()[rows])


def arm_summary(test: pd.DataFrame, arms: list[str]) -> pd.DataFrame:
    """Per treatment arm on the test rows (that arm's and the control rows, ranked by that
    arm's predicted uplift): AUUC at 30 % and 100 % (separate, relative uplift curve), mean
    predicted and observed uplift, calibration slope and its standard error."""
    from core.evaluation import auuc, calibration_slope

    rows = []
    for k, arm in enumerate(arms[1:], start=1):
        yk, tk, score = arm_pair(test, k)
        slope, se = calibration_slope(yk, tk, score)
        rows.append({"arm": arm, PAIR_ROWS: int(yk.shape[0]),
                     "AUUC@30 %": auuc(yk, tk, score, definition="uplift_sep_rel", cutoff=0.3),
                     "AUUC@100 %": auuc(yk, tk, score, definition="uplift_sep_rel",
                                        cutoff=1.0),
                     "predicted uplift": float(np.mean(score)),
                     "observed uplift": float(yk[tk == 1].mean() - yk[tk == 0].mean()),
                     "calibration slope": slope, "slope SE": se})
    return pd.DataFrame(rows).set_index("arm")


def policy_takeaway(table: pd.DataFrame, *, markdown: bool = True) -> str:
    """One sentence: the model's best-arm rule against the best single arm, by net value.

    "Better" / "worse" needs the difference to exceed twice its paired standard error (the
    :data:`VS_RULE_SE` column of :func:`policy_table`: both values come from the same test
    rows, so the SE of the difference is that of the per-row differences — not
    √(SE₁² + SE₂²), which is too small when the policies disagree on most rows and too large
    when they mostly agree).  ``markdown=False`` writes plain text (for the HTML report,
    which prints text as it is) instead of the page's emphasis."""
    rule = table.loc[RULE]
    singles = table[table.index.str.startswith("everyone: ")]
    best = singles["net value"].idxmax()
    other = singles.loc[best]
    diff = rule["net value"] - other["net value"]
    noise = 2 * float(other[VS_RULE_SE])
    verdict = ("better than" if diff > noise else "worse than" if diff < -noise
               else "not distinguishable from")
    name, verdict = (f"*{best}*", f"**{verdict}**") if markdown else (f"\"{best}\"", verdict)
    column = f"*{VS_RULE}*" if markdown else f"\"{VS_RULE}\""
    # the difference as the table's vs-rule column writes it (that policy minus the rule),
    # so the sentence and the table carry the same sign
    return (f"The model's best-arm rule is worth {rule['net value']:.4g} ± {rule['± SE']:.2g} "
            f"per customer after costs; the best single policy, {name}, "
            f"{other['net value']:.4g} ± {other['± SE']:.2g}. The rule is {verdict} it "
            f"(its net value minus the rule's: {-diff:+.3g}, the table's {column} column; "
            f"noise level: twice its standard error on the same customers, {noise:.2g}).")


def cost_sentence(arms: list[str], cost) -> str:
    """The cost per arm assumed by the policy values, in one sentence (control costs 0).

    >>> cost_sentence(["No E-Mail", "Womens", "Mens"], [0.5, 0.25])
    ... # doctest: +NORMALIZE_WHITESPACE
    'Costs assumed per customer (outcome units): No E-Mail (control) 0, Womens 0.5, Mens
    0.25; net value = value − cost.'
    """
    from core.runs.takeaway import fmt_significant

    parts = [f"{arms[0]} (control) 0",
             *(f"{a} {fmt_significant(c, 6)}" for a, c in zip(arms[1:], cost))]
    return ("Costs assumed per customer (outcome units): " + ", ".join(parts)
            + "; net value = value − cost.")


def score_scale_caveat(model: str) -> str:
    """A warning for a per-arm model that predicts a ranking score, not an uplift in outcome
    units (the LambdaMART rankers: only their order is fitted), whose "predicted uplift",
    cost rule and calibration therefore read a score as an amount; ``""`` for the others.

    >>> score_scale_caveat("Two-model per arm")
    ''
    >>> score_scale_caveat("LambdaMART-PCG per arm (0/1 only)")[:60]
    'LambdaMART-PCG per arm (0/1 only) ranks customers: its score'
    """
    if MULTIARM_MODELS.get(model, ("",))[0] != "LambdaMARTUplift":
        return ""
    return (f"{model} ranks customers: its scores order them within each arm but are not "
            "uplifts in outcome units. Its curves and AUUC are meaningful; its \"predicted "
            "uplift\", the comparison with the arms' costs and the calibration below read "
            "the scores as amounts, which they are not. For a policy with costs, use a "
            "two-model or transformed-outcome run.")


def calibration_caveat(arms_table: pd.DataFrame, *, z: float = 2.0) -> str:
    """A warning when the calibration slope of an arm is indistinguishable from 0
    (``|slope| < z·SE``): the model then does not tell who benefits from that arm.

    ``arms_table`` is :func:`arm_summary` (columns ``calibration slope``, ``slope SE``);
    ``""`` when every slope is at least ``z`` standard errors from 0.

    >>> t = pd.DataFrame({"calibration slope": [-0.0088, 0.9], "slope SE": [0.058, 0.2]},
    ...                  index=["Womens", "Mens"])
    >>> calibration_caveat(t)  # doctest: +NORMALIZE_WHITESPACE
    'Calibration: the slope of Womens (-0.01 ± 0.06) is within 2 standard errors of 0: the
    model cannot tell who benefits from that arm, so its per-customer choice of arm rests on
    noise there.'
    """
    slope, se = arms_table["calibration slope"], arms_table["slope SE"]
    flat = [str(a) for a in arms_table.index
            if not (np.isfinite(slope[a]) and np.isfinite(se[a])) or abs(slope[a]) < z * se[a]]
    if not flat:
        return ""
    shown = ", ".join(f"{a} ({slope[a]:.2f} ± {se[a]:.2f})" if np.isfinite(slope[a])
                      and np.isfinite(se[a]) else f"{a} (slope undefined)" for a in flat)
    if len(flat) == len(arms_table):
        return (f"Calibration: every arm's slope is within {z:g} standard errors of 0 "
                f"({shown}): the model cannot tell who benefits from which arm, so its "
                "per-customer choice of arm rests on noise; what the rule is worth comes from "
                "the arms' average effects.")
    return (f"Calibration: the slope of {shown} is within {z:g} standard errors of 0: the "
            "model cannot tell who benefits from that arm, so its per-customer choice of arm "
            "rests on noise there.")


def score_export(test: pd.DataFrame, arms: list[str]) -> pd.DataFrame:
    """The stored test rows for download: row identifier, arm name, outcome, and one
    column of predicted uplift per treatment arm (``uplift <arm>``)."""
    t = test["t"].to_numpy()
    out = test.drop(columns=["t"] + [c for c in test.columns if c.startswith("tau_")])
    out.insert(len(out.columns) - 1, "arm", np.asarray(arms, dtype=object)[t])
    out = out.rename(columns={"y": "outcome"})
    for k, arm in enumerate(arms[1:], start=1):
        out[f"uplift {arm}"] = test[f"tau_{k}"].to_numpy()
    return out


def multiarm_sections(meta: Mapping, test: pd.DataFrame, data: Any, *, cost: Any,
                      figures: list) -> list[tuple[str, list]]:
    """The report sections of a per-arm run: takeaway (the policy sentence in plain text, the
    costs assumed and, when a calibration slope is near 0, :func:`calibration_caveat`), the
    experiment's arms and SRM test, per-arm curves and AUUC, the policy table at these
    ``cost`` s, the multi-armed Qini curve and calibration (``figures``: (heading, plotly
    figure) pairs), the run's settings — :func:`core.runs.report.html_report` content blocks,
    tables formatted as the comparison report's (4 decimals, thousands separators, shares in
    per cent)."""
    from core.runs.report import _readable

    arms = list(meta["arms"])
    cost = np.asarray(cost, dtype=np.float64)
    policies = policy_table(test, arms, meta["design"], cost)
    per_arm = arm_summary(test, arms)
    srm = data.srm()
    split = (f"Arm split vs the design: χ² p = {srm['p_value']:.3f} over {len(arms)} arms "
             + ("(no sample ratio mismatch)." if srm["p_value"] >= 0.001
                else "— a sample ratio mismatch: check the randomisation."))
    takeaway = " ".join(t for t in (score_scale_caveat(meta["model"]),
                                    policy_takeaway(policies, markdown=False),
                                    cost_sentence(arms, cost), calibration_caveat(per_arm))
                        if t)
    figs = dict(figures)
    sections = [
        ("Takeaway", [takeaway]),
        ("Experiment", [f"{data.name}: {data.n:,} customers, outcome {data.outcome_kind}.",
                        _readable(data.arm_table(),
                                  percent=("share", "designed share", "assumed share")),
                        split]),
        ("Each arm against control", [figs.get("Uplift curve of each arm vs control"),
                                      _readable(per_arm)]),
        ("Policies", [_readable(policies.rename(columns={"arm shares": shares_label(arms)})),
                      POLICY_NOTE + " " + cost_sentence(arms, cost)]),
        ("Multi-armed Qini curve", [figs.get("Multi-armed Qini curve")
                                    or "Not drawn: every arm is free (cost 0)."]),
        ("Calibration", [figs.get("Calibration by decile")]),
        ("Per-arm run", [{"dataset": data.name, "model": meta["model"],
                          "trees": meta["trees"], "seed": meta["seed"],
                          "test rows": f"{len(test):,}",
                          "fit seconds": round(meta["fit_seconds"], 2)}]),
    ]
    return [(h, [b for b in blocks if b is not None]) for h, blocks in sections]


def multiarm_report(meta: Mapping, test: pd.DataFrame, data: Any, *, cost: Any,
                    figures: list, generated_at: Any = None) -> str:
    """One self-contained HTML report of a per-arm run (:func:`multiarm_sections`)."""
    from core.runs.report import html_report

    return html_report(f"UpRank several arms — {data.name}",
                       sections=multiarm_sections(meta, test, data, cost=cost,
                                                  figures=figures),
                       generated_at=generated_at)
