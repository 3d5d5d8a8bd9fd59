r"""Benchmark: reproduce the AUUC tables of Devriendt et al. (2020) beside the paper's numbers.

Run::

    nice -n 10 .venv/bin/python -m bench.paper_tables --quick            # a few minutes
    .venv/bin/python -m bench.paper_tables                                # full protocol (hours)
    .venv/bin/python -m bench.paper_tables --tables 10 --datasets information --reps 5

Protocol (paper §4.1, SPEC §3): R repetitions (default 10) of a 70/30 train/test split
stratified by (t, y); within a repetition **every model sees the same split** so results are
paired; 500 trees with learning rate 0.01 for every boosted model, 100 trees for the uplift
random forest (``--forest-trees``).  Reported: test AUUC, mean ± sd over repetitions, under the
paper's *relative separate* uplift curve (``uplift_sep_rel``) and, beside it, the *relative
joint* one (``uplift_joint_rel``); a paired t-test (``scipy.stats.ttest_rel`` over the
per-repetition values) against the table's LambdaMART-PCG reference; the paper's value in
the next column; and mean seconds per fit + predict.  A model used by several tables is fitted
once per repetition (in memory; nothing is cached on disk).

Tables
------
* **6** — pointwise flipped label vs LambdaMART-MAP / DCG / NDCG / PCG, separate queries,
  Abs1 labels (the paper's "(*)" marks significance against the flipped label).
* **8** — separate queries: label sets Abs1/Abs2/Abs3/Rel × DCG/NDCG/PCG (joint-curve values
  from the paper's appendix Table 12).
* **9** — joint query: the same grid (separate-curve values from appendix Table 13).
* **10** — PCG trained at k = 10/30/50/100 % (Rel labels) × AUUC at those cut-offs; left half
  separate queries + separate curve, right half joint query + joint curve (as in the paper).
* **11** — LambdaMART-PCG (separate queries, Rel labels, §4.6) vs flipped label, two-model,
  dummy treatment and uplift random forest.

Datasets: Hillstrom (Womens E-Mail vs No E-Mail, visit; 42,693 rows) and Information.  For
Information we use the package's ``train`` data only (10,000 rows): the paper's Table 5 lists
10,000 rows with 4,972 treated and 5,028 control, which is exactly that file; ``valid`` is a
second, disjoint 10k sample the paper did not use.  Criteo is not reproduced (only a
1,000-row head of it is available).

Read the caveat the script prints: on Hillstrom the seed-to-seed sd of a model's AUUC
(~0.0015) is as large as most gaps between models, and the paper's own table-to-table
numbers differ by as much (Information PCG-Rel: 0.01829 in Table 8 vs 0.02178 in Table 10).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from bench._report import md_table, publish, report_parser, run_timed
from core.constants import CUTOFFS
from core.data import ABData, load_hillstrom, load_information
from core.evaluation.curves import UpliftCurves
from core.models import (
    DummyTreatment,
    FlippedLabel,
    LambdaMARTUplift,
    TwoModel,
    UpliftRandomForest,
)

ROOT = Path(__file__).resolve().parents[1]

DATASETS = ("hillstrom", "information")
TABLES = ("6", "8", "9", "10", "11")
CAVEAT = ("**Caveat:** seed-to-seed sd (~0.0015 on Hillstrom) is as large as most gaps "
          "between models; differences with p > 0.05 are not evidence.")
QUICK_NOTE = ("Quick mode: few repetitions and trees at learning rate 0.01 leave every boosted "
              "model under-fitted; use these numbers to check the pipeline, not to rank models.")


# =============================================================================== models
@dataclass(frozen=True)
class Spec:
    """One model configuration; ``key`` identifies it across tables (fitted once per split)."""

    kind: str  # "lambdamart", "flipped", "two_model", "dummy", "urf"
    metric: str | None = None
    query: str = "separate"
    labels: str = "abs1"
    k: float | None = None

    @property
    def key(self) -> str:
        if self.kind != "lambdamart":
            return self.kind
        return f"lm-{self.metric}-{self.query}-{self.labels}-k{self.k}"

    @property
    def label(self) -> str:
        if self.kind != "lambdamart":
            return _BASELINE_LABELS[self.kind]
        at = "" if self.k is None else f"@{self.k:.0%}"
        return f"LambdaMART-{self.metric.upper()}{at} ({self.query}, {self.labels})"


_BASELINE_LABELS = {"flipped": "Flipped label (Lai)", "two_model": "Two-model",
                    "dummy": "Dummy treatment (Lo)", "urf": "Uplift random forest"}


def lm(metric: str, query: str = "separate", labels: str = "abs1",
       k: float | None = None) -> Spec:
    """A LambdaMARTUplift spec."""
    return Spec("lambdamart", metric, query, labels, k)


FLIPPED, TWO_MODEL, DUMMY, URF = (Spec(k) for k in ("flipped", "two_model", "dummy", "urf"))


@dataclass(frozen=True)
class Config:
    """Everything that changes the numbers (printed with the tables).

    The defaults are those of the command line (:func:`parse_args`), the one place they live.
    """

    reps: int
    trees: int
    learning_rate: float
    forest_trees: int
    threads: int
    seed: int
    max_rows: int | None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """The options of :func:`parse_args` that bear on the numbers."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


def make_model(spec: Spec, cfg: Config, seed: int) -> Any:
    """A fresh, unfitted model for ``spec`` (all boosted models share trees / rate / threads)."""
    boost = dict(n_estimators=cfg.trees, learning_rate=cfg.learning_rate,
                 num_threads=cfg.threads, random_state=seed)
    if spec.kind == "lambdamart":
        return LambdaMARTUplift(spec.metric, query=spec.query, labels=spec.labels, k=spec.k,
                                **boost)
    if spec.kind == "flipped":
        return FlippedLabel(**boost)
    if spec.kind == "two_model":
        return TwoModel(**boost)
    if spec.kind == "dummy":
        return DummyTreatment(**boost)
    if spec.kind == "urf":
        return UpliftRandomForest(n_estimators=cfg.forest_trees, random_state=seed)
    raise ValueError(f"spec.kind must be one of lambdamart, flipped, two_model, dummy, urf; "
                     f"got {spec.kind!r}.")


# =============================================================================== data
def load(name: str, data_dir: str | None = None) -> ABData:
    """``hillstrom`` (womens vs no e-mail, visit) or ``information`` (the 10k train file)."""
    if name == "hillstrom":
        return load_hillstrom("womens", "visit", data_dir=data_dir)
    if name == "information":
        return load_information("train", data_dir=data_dir)
    raise ValueError(f"dataset must be one of {', '.join(DATASETS)}; got {name!r}.")


def paired_splits(y: np.ndarray, t: np.ndarray, reps: int, seed: int,
                  test_size: float = 0.3) -> list[tuple[np.ndarray, np.ndarray]]:
    """``reps`` train/test index pairs, each stratified by the four (t, y) cells."""
    from sklearn.model_selection import train_test_split

    idx, strata = np.arange(y.shape[0]), 2 * t.astype(np.int64) + y
    return [tuple(np.sort(a) for a in train_test_split(idx, test_size=test_size,
                                                       stratify=strata,
                                                       random_state=seed + r))
            for r in range(reps)]


def subsample(data: ABData, max_rows: int | None, seed: int) -> ABData:
    """A stratified subsample of ``max_rows`` rows (smoke tests), else ``data`` itself."""
    if max_rows is None or max_rows >= data.n:
        return data
    from sklearn.model_selection import train_test_split

    rows, _ = train_test_split(np.arange(data.n), train_size=max_rows,
                               stratify=2 * data.t.astype(np.int64) + data.y,
                               random_state=seed)
    rows = np.sort(rows)
    return ABData(data.X.iloc[rows].reset_index(drop=True), data.y[rows], data.t[rows],
                  name=f"{data.name} (subsample of {max_rows})")


# =============================================================================== running
@dataclass
class Result:
    """Per-repetition test AUUC at :data:`CUTOFFS` (rows = repetitions) and seconds."""

    sep: np.ndarray
    joint: np.ndarray
    seconds: np.ndarray


@dataclass
class Run:
    """Everything one dataset produced."""

    dataset: str
    data: ABData
    results: dict[str, Result]
    warnings: dict[str, set[str]] = field(default_factory=dict)
    seconds: float = 0.0


def evaluate(y: np.ndarray, t: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relative separate and relative joint AUUC at every cut-off, from one sort."""
    curves = UpliftCurves(y, t, score)
    return (np.array([curves.auuc("uplift_sep_rel", cutoff=c) for c in CUTOFFS]),
            np.array([curves.auuc("uplift_joint_rel", cutoff=c) for c in CUTOFFS]))


def run_dataset(name: str, data: ABData, specs: Sequence[Spec], cfg: Config, *,
                log: Callable[[str], None] = lambda s: None) -> Run:
    """Fit every spec on every paired split; return test AUUCs, timings and warnings."""
    start = time.perf_counter()
    specs = list(dict.fromkeys(specs))  # unique, order kept
    splits = paired_splits(data.y, data.t, cfg.reps, cfg.seed)
    res = {s.key: Result(np.empty((cfg.reps, len(CUTOFFS))), np.empty((cfg.reps, len(CUTOFFS))),
                         np.empty(cfg.reps)) for s in specs}
    seen: dict[str, set[str]] = {}
    X, y, t = data.X, data.y, data.t
    for r, (train, test) in enumerate(splits):
        x_tr, x_te = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
        for spec in specs:
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = make_model(spec, cfg, cfg.seed + r)
                model.fit(x_tr, y[train], t[train])
                score = model.predict(x_te)
            sec = time.perf_counter() - t0
            for w in caught:
                seen.setdefault(f"{w.category.__name__}: {w.message}", set()).add(spec.label)
            out = res[spec.key]
            out.sep[r], out.joint[r] = evaluate(y[test], t[test], score)
            out.seconds[r] = sec
            log(f"[{name} rep {r + 1}/{cfg.reps}] {spec.label}: {sec:.1f} s, "
                f"sep AUUC {out.sep[r, -1]:.5f}")
    return Run(name, data, res, seen, time.perf_counter() - start)


# =============================================================================== paper values
# Devriendt, Van Belle, Guns & Verbeke (2020), "Learning to rank for uplift modeling",
# arXiv:2002.05897 (../shared/papers/learning-to-rank-for-uplift-modeling.txt).  Values are
# (number, mark) as printed; marks: "*" significantly different from the flipped label
# (Table 6), "+"/"-" significantly better/worse than LambdaMART-PCG (Tables 10, 11).
Paper = tuple[float, str]
P = dict[str, dict[str, tuple[Paper | None, Paper | None]]]  # dataset -> row -> (sep, joint)

# Table 6: separate queries, absolute relevance (Abs1); relative separate / relative joint AUUC.
PAPER_T6: P = {
    "information": {"flipped": ((0.02052, ""), (0.02050, "")),
                    "map": ((0.01237, "*"), (0.01185, "*")),
                    "dcg": ((0.01520, "*"), (0.01612, "")),
                    "ndcg": ((0.00935, "*"), (0.00844, "*")),
                    "pcg": ((0.01938, ""), (0.01894, ""))},
    "hillstrom": {"flipped": ((0.02858, ""), (0.02865, "")),
                  "map": ((0.03038, ""), (0.03039, "")),
                  "dcg": ((0.02960, ""), (0.02955, "")),
                  "ndcg": ((0.03032, ""), (0.03051, "")),
                  "pcg": ((0.03077, ""), (0.03067, ""))},
}


def _grid(sep: dict[str, tuple[float, float, float]],
          joint: dict[str, tuple[float, float, float]]) -> dict:
    """{labels-metric: (sep, joint)} from rows "abs1": (DCG, NDCG, PCG)."""
    out = {}
    for labels in sep:
        for i, metric in enumerate(("dcg", "ndcg", "pcg")):
            out[f"{labels}-{metric}"] = ((sep[labels][i], ""), (joint[labels][i], ""))
    return out


# Table 8 (separate queries, relative separate AUUC) with appendix Table 12 "Joint AUUC
# Evaluation" (the same models on the relative joint curve).  Columns DCG, NDCG, PCG.
PAPER_T8 = {
    "information": _grid(
        {"abs1": (0.01520, 0.00935, 0.01938), "abs2": (0.01520, 0.00678, 0.01938),
         "abs3": (0.01520, 0.01524, 0.01938), "rel": (0.01382, 0.00677, 0.01829)},
        {"abs1": (0.01612, 0.00844, 0.01894), "abs2": (0.01612, 0.00649, 0.01894),
         "abs3": (0.01612, 0.01661, 0.01894), "rel": (0.01459, 0.00651, 0.01791)}),
    "hillstrom": _grid(
        {"abs1": (0.02960, 0.03032, 0.03077), "abs2": (0.02960, 0.02893, 0.03077),
         "abs3": (0.0296, 0.02953, 0.03077), "rel": (0.02961, 0.02893, 0.03055)},
        {"abs1": (0.02955, 0.03051, 0.03067), "abs2": (0.02955, 0.02887, 0.03067),
         "abs3": (0.02955, 0.02948, 0.03067), "rel": (0.0296, 0.02887, 0.03057)}),
}
# Table 9 (joint query, relative joint AUUC).  Appendix Table 13 prints the very same numbers
# under "Separate AUUC Evaluation", so they are shown in both columns.
_T9 = {
    "information": {"abs1": (0.01396, 0.01452, 0.01940), "abs2": (0.01101, 0.01116, 0.01536),
                    "abs3": (0.01563, 0.01473, 0.02300), "rel": (0.01052, 0.01031, 0.01573)},
    "hillstrom": {"abs1": (0.02957, 0.02957, 0.03002), "abs2": (0.02935, 0.02935, 0.03051),
                  "abs3": (0.02968, 0.02968, 0.03063), "rel": (0.02954, 0.02954, 0.03027)},
}
PAPER_T9 = {d: _grid(v, v) for d, v in _T9.items()}

# Table 10 (Rel labels; = appendix Tables 14-15): rows PCG trained at k, columns AUUC at
# 10/30/50/100 %.  "separate": separate queries + relative separate curve; "joint": joint
# query + relative joint curve.  "-" = significantly worse than PCG@100 %.
PAPER_T10: dict[str, dict[str, dict[float | None, tuple[Paper, ...]]]] = {
    "separate": {
        "information": {
            None: ((0.00037, ""), (0.00384, ""), (0.0090, ""), (0.02178, "")),
            0.1: ((0.00026, ""), (0.00159, "-"), (0.00368, "-"), (0.0115, "-")),
            0.3: ((0.00030, ""), (0.00299, ""), (0.00731, ""), (0.01819, "")),
            0.5: ((0.00049, ""), (0.00419, ""), (0.00942, ""), (0.02143, ""))},
        "hillstrom": {
            None: ((0.00037, ""), (0.00332, ""), (0.00947, ""), (0.0306, "")),
            0.1: ((0.00032, ""), (0.00318, ""), (0.00901, ""), (0.0298, "")),
            0.3: ((0.00037, ""), (0.00323, ""), (0.00934, ""), (0.03045, "")),
            0.5: ((0.00038, ""), (0.00321, ""), (0.00935, ""), (0.03043, ""))}},
    "joint": {
        "information": {
            None: ((0.00034, ""), (0.00271, ""), (0.00616, ""), (0.01573, "")),
            0.1: ((0.00040, ""), (0.00232, ""), (0.00495, ""), (0.01264, "")),
            0.3: ((0.00030, ""), (0.00246, ""), (0.00611, ""), (0.01608, "")),
            0.5: ((0.00021, ""), (0.00257, ""), (0.00646, ""), (0.0169, ""))},
        "hillstrom": {
            None: ((0.00037, ""), (0.00319, ""), (0.00905, ""), (0.03027, "")),
            0.1: ((0.00029, ""), (0.00296, ""), (0.00853, ""), (0.0292, "")),
            0.3: ((0.00035, ""), (0.00313, ""), (0.00887, ""), (0.03001, "")),
            0.5: ((0.00043, ""), (0.00347, ""), (0.0095, ""), (0.03073, ""))}},
}

# Table 11: LambdaMART-PCG with Rel labels in the separate setting (§4.6; the caption says
# "absolute relevance values" but the text says relative, and the PCG numbers equal Table 8's
# Rel row).
PAPER_T11: P = {
    "information": {"pcg": ((0.01829, ""), (0.01791, "")),
                    "dummy": ((0.02392, "+"), (0.02283, "")),
                    "two_model": ((0.02610, "+"), (0.02578, "+")),
                    "flipped": ((0.02052, ""), (0.02050, "")),
                    "urf": ((0.0221, ""), (0.02163, ""))},
    "hillstrom": {"pcg": ((0.03055, ""), (0.03057, "")),
                  "dummy": ((0.02935, ""), (0.0295, "")),
                  "two_model": ((0.02820, "-"), (0.02840, "")),
                  "flipped": ((0.02858, ""), (0.02865, "")),
                  "urf": ((0.02744, "-"), (0.02746, "-"))},
}


# =============================================================================== tables
@dataclass(frozen=True)
class Row:
    """A table row: the model, its paired-test reference (None: it is the reference) and
    the key of its paper values."""

    label: str
    spec: Spec
    ref: Spec | None
    paper_key: str


@dataclass(frozen=True)
class RowTable:
    number: str
    title: str
    rows: tuple[Row, ...]
    paper: dict
    note: str = ""


def table6(quick: bool = False) -> RowTable:
    pcg = lm("pcg")
    rows = [Row("Flipped label (pointwise)", FLIPPED, pcg, "flipped")]
    metrics = ("dcg", "ndcg", "pcg") if quick else ("map", "dcg", "ndcg", "pcg")
    for m in metrics:
        spec = lm(m)
        rows.append(Row(f"LambdaMART-{m.upper()}", spec, None if spec == pcg else pcg, m))
    note = ("Separate queries, Abs1 labels. Paper marks: (*) = significantly different from "
            "the flipped label." + (" Quick mode: MAP (the slowest λ) left out." if quick else ""))
    return RowTable("6", "pointwise flipped label vs listwise LambdaMART", tuple(rows),
                    PAPER_T6, note)


def _label_grid(number: str, query: str, paper: dict, note: str) -> RowTable:
    rows = []
    for labels in ("abs1", "abs2", "abs3", "rel"):
        ref = lm("pcg", query, labels)
        for m in ("dcg", "ndcg", "pcg"):
            spec = lm(m, query, labels)
            rows.append(Row(f"{labels.capitalize()} · {m.upper()}", spec,
                            None if spec == ref else ref, f"{labels}-{m}"))
    return RowTable(number, f"label sets × metrics, {query} queries", tuple(rows), paper, note)


def table8() -> RowTable:
    return _label_grid("8", "separate", PAPER_T8,
                       "p: paired t-test against PCG with the same labels. Paper joint "
                       "values: appendix Table 12. With separate queries Abs1/2/3 give each "
                       "query the same label differences up to a constant factor, so DCG and "
                       "PCG should be identical across them (the paper's are).")


def table9() -> RowTable:
    return _label_grid("9", "joint", PAPER_T9,
                       "p: paired t-test against PCG with the same labels. The paper's "
                       "Table 13 lists Table 9's numbers for both curves.")


def table11() -> RowTable:
    pcg = lm("pcg", labels="rel")
    rows = (Row("LambdaMART-PCG (separate, Rel)", pcg, None, "pcg"),
            Row("Dummy treatment (Lo)", DUMMY, pcg, "dummy"),
            Row("Two-model", TWO_MODEL, pcg, "two_model"),
            Row("Flipped label (Lai)", FLIPPED, pcg, "flipped"),
            Row("Uplift random forest", URF, pcg, "urf"))
    return RowTable("11", "LambdaMART-PCG vs uplift baselines", rows, PAPER_T11,
                    "Paper marks: (+)/(-) = significantly better/worse than LambdaMART-PCG.")


TABLE10_K = (0.1, 0.3, 0.5, None)


def table10_specs() -> list[Spec]:
    return [lm("pcg", q, "rel", k) for q in ("separate", "joint") for k in TABLE10_K]


def specs_for(tables: Sequence[str], quick: bool) -> list[Spec]:
    """Every model the chosen tables need, each once."""
    out: list[Spec] = []
    for n in tables:
        if n == "10":
            out += table10_specs()
        else:
            out += [r.spec for r in row_table(n, quick).rows]
    return list(dict.fromkeys(out))


def row_table(number: str, quick: bool = False) -> RowTable:
    return {"6": lambda: table6(quick), "8": table8, "9": table9, "11": table11}[number]()


# ------------------------------------------------------------------------------- formatting
def fmt_mean_sd(values: np.ndarray) -> str:
    sd = values.std(ddof=1) if values.size > 1 else float("nan")
    return f"{values.mean():.5f} ± {sd:.5f}" if np.isfinite(sd) else f"{values.mean():.5f}"


def paired_p(a: np.ndarray, b: np.ndarray) -> str:
    """Two-sided paired t-test p of ``a`` vs ``b`` as text ("n/a" below 2 repetitions)."""
    from scipy.stats import ttest_rel

    if a.size < 2:
        return "n/a"
    if np.allclose(a, b, rtol=0, atol=1e-12):
        return "identical"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(ttest_rel(a, b).pvalue)
    if not np.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_paper(value: Paper | None) -> str:
    if value is None:
        return "—"
    v, mark = value
    return f"{v:.5f}" + (f" ({mark})" if mark else "")


def render_row_table(table: RowTable, run: Run) -> str:
    """Markdown of a Table 6 / 8 / 9 / 11 for one dataset."""
    paper = table.paper.get(run.dataset, {})
    rows = []
    for row in table.rows:
        res = run.results[row.spec.key]
        sep, joint = res.sep[:, -1], res.joint[:, -1]
        if row.ref is None:
            p_sep = p_joint = "ref"
        else:
            ref = run.results[row.ref.key]
            p_sep, p_joint = paired_p(sep, ref.sep[:, -1]), paired_p(joint, ref.joint[:, -1])
        pap_sep, pap_joint = paper.get(row.paper_key, (None, None))
        rows.append([row.label, fmt_mean_sd(sep), p_sep, fmt_paper(pap_sep),
                     fmt_mean_sd(joint), p_joint, fmt_paper(pap_joint),
                     f"{res.seconds.mean():.1f}"])
    header = ["model", "sep-rel AUUC (ours)", "p vs PCG", "paper", "joint-rel AUUC (ours)",
              "p vs PCG", "paper", "s / fit"]
    title = f"### Table {table.number} — {table.title} — {run.dataset}"
    return "\n\n".join(s for s in (title, md_table(header, rows), table.note) if s)


def render_table10(run: Run) -> str:
    """Markdown of Table 10 (both halves) for one dataset."""
    parts = [f"### Table 10 — PCG trained at k × AUUC at cut-off (Rel labels) — {run.dataset}"]
    for query, curve in (("separate", "sep"), ("joint", "joint")):
        paper = PAPER_T10[query].get(run.dataset, {})
        ref = run.results[lm("pcg", query, "rel", None).key]
        header = ["trained at"]
        for c in CUTOFFS:
            header += [f"AUUC@{c:.0%}", "p vs @100%", "paper"]
        header.append("s / fit")
        rows = []
        for k in TABLE10_K:
            res = run.results[lm("pcg", query, "rel", k).key]
            vals, ref_vals = getattr(res, curve), getattr(ref, curve)
            row = [f"PCG@{1.0 if k is None else k:.0%}"]
            for j in range(len(CUTOFFS)):
                p = "ref" if k is None else paired_p(vals[:, j], ref_vals[:, j])
                pap = paper.get(k)
                row += [fmt_mean_sd(vals[:, j]), p, fmt_paper(pap[j] if pap else None)]
            row.append(f"{res.seconds.mean():.1f}")
            rows.append(row)
        parts.append(f"**{query} queries, relative {query} uplift curve** "
                     f"(paper: (-) = significantly worse than PCG@100%)")
        parts.append(md_table(header, rows))
    return "\n\n".join(parts)


def render(runs: Sequence[Run], tables: Sequence[str], cfg: Config, *, quick: bool,
           argv: Sequence[str]) -> str:
    """The whole markdown report."""
    out = ["## UpRank — Devriendt et al. (2020) tables, reproduced",
           f"`python -m bench.paper_tables {' '.join(argv)}`",
           f"Config: {cfg.reps} repetitions of a 70/30 split stratified by (t, y), paired "
           f"across models; {cfg.trees} trees, learning rate {cfg.learning_rate} "
           f"(paper: 500, 0.01); uplift forest {cfg.forest_trees} trees; LightGBM threads "
           f"{cfg.threads}; seed {cfg.seed}. AUUC: mean convention, ties averaged, "
           "`uplift_sep_rel` (paper's relative separate curve) and `uplift_joint_rel`. "
           "p: two-sided paired t-test (`scipy.stats.ttest_rel`) over repetitions.",
           CAVEAT]
    for run in runs:
        out.append(f"## {run.data.name}: {run.data.n:,} rows ({run.data.n_treated:,} treated, "
                   f"{run.data.n_control:,} control) — {run.seconds:.0f} s")
        ref = lm("pcg", labels="rel").key
        if ref in run.results and cfg.reps > 1:
            sd = run.results[ref].sep[:, -1].std(ddof=1)
            out.append(f"Observed seed-to-seed sd of LambdaMART-PCG (Rel) sep AUUC here: "
                       f"{sd:.5f}.")
        for n in tables:
            out.append(render_table10(run) if n == "10" else
                       render_row_table(row_table(n, quick), run))
        if run.warnings:
            lines = [f"- {msg} — {', '.join(sorted(who))}" for msg, who in run.warnings.items()]
            out.append("Warnings raised while fitting:\n\n" + "\n".join(lines))
    out.append(CAVEAT)
    if quick:
        out.append(QUICK_NOTE)
    return "\n\n".join(out) + "\n"


# =============================================================================== CLI
def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = report_parser(__doc__, data_dir="folder holding the data files",
                       quick="3 repetitions, 100 trees, Hillstrom, Tables 11 and 6 (no MAP)")
    ap.add_argument("--tables", help="comma list of 6,8,9,10,11 (default all; quick 11,6)")
    ap.add_argument("--datasets", help="comma list of hillstrom,information "
                    "(default both; quick hillstrom)")
    ap.add_argument("--reps", type=int, help="repetitions (default 10; quick 3)")
    ap.add_argument("--trees", type=int, help="boosting rounds (default 500; quick 100)")
    ap.add_argument("--learning-rate", type=float, default=0.01)
    ap.add_argument("--forest-trees", type=int, default=100,
                    help="trees of the uplift random forest (default 100)")
    ap.add_argument("--max-rows", type=int, default=None,
                    help="stratified subsample of each dataset (smoke tests)")
    ap.add_argument("--verbose", action="store_true", help="log every fit to stderr")
    args = ap.parse_args(argv)
    args.tables = _csv(args.tables, ("11", "6") if args.quick else TABLES, TABLES, "--tables")
    args.datasets = _csv(args.datasets, ("hillstrom",) if args.quick else DATASETS, DATASETS,
                         "--datasets")
    args.reps = args.reps or (3 if args.quick else 10)
    args.trees = args.trees or (100 if args.quick else 500)
    return args


def _csv(value: str | None, default: Sequence[str], allowed: Sequence[str],
         name: str) -> tuple[str, ...]:
    if value is None:
        return tuple(default)
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    bad = [v for v in items if v not in allowed]
    if bad or not items:
        raise SystemExit(f"{name} must be a comma list of {', '.join(allowed)}; got {value!r}.")
    return items


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark, print the markdown (and write ``--out``); returns the markdown."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    cfg = Config.from_args(args)
    specs = specs_for(args.tables, args.quick)
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if args.verbose else (lambda s: None)
    runs = []
    for name in args.datasets:
        data = subsample(load(name, args.data_dir), cfg.max_rows, cfg.seed)
        runs.append(run_dataset(name, data, specs, cfg, log=log))
    return publish(render(runs, args.tables, cfg, quick=args.quick, argv=argv), args.out)


if __name__ == "__main__":
    run_timed(main)
