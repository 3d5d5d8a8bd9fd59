"""Streamlit side of the Ranking lab pages (Ranking data, Ranking runs, Ranking compare,
P-nDCG): the session's ranking dataset, cached loaders of its splits and of stored runs,
per-query tables and the figures.  Numerics: :mod:`core.data.letor`,
:mod:`core.evaluation.per_query`, :mod:`core.evaluation.significance`; runs:
:mod:`core.runs.ltr_runs`."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.constants import DASH
from core.data import DataError, letor, ranking_uploads
from core.evaluation import (
    RELEVANT_BINS,
    by_relevant_count,
    compare_runs,
    discount_table,
    per_query_metrics,
    score_to_probability,
    verdict,
)
from core.runs import ltr_runs
from core.runs.export import safe_csv_bytes
from core.runs.ltr_runs import RankingSource
from core.runs.store import RunStore
from ui import common
from ui.charts import run_colors
from ui.jobs import job_panel

SOURCE_KEY = "rk_source"  # the session's RankingSource
UPLOAD_KEY = "rk_upload"  # the session's uploaded LTRData (kind "upload")
SPLIT_LABELS = {"train": "Training", "vali": "Validation", "test": "Test"}


def default_source() -> RankingSource:
    """MQ2008 fold 1 when its files are found, else the synthetic world."""
    if 1 in folds_available():
        return RankingSource.make("mq2008", fold=1)
    return RankingSource.make("world", **WORLD_DEFAULTS)


WORLD_DEFAULTS = {"n_queries": 300, "no_relevant_share": 0.3, "random_state": 0}


@st.cache_data(show_spinner=False, ttl=60)
def folds_available() -> list[int]:
    return letor.mq2008_folds_available()


def current_source() -> RankingSource:
    return st.session_state.get(SOURCE_KEY) or default_source()


def set_source(source: RankingSource, data=None) -> None:
    st.session_state[SOURCE_KEY] = source
    if data is not None:
        st.session_state[UPLOAD_KEY] = data


def uploaded_data():
    return st.session_state.get(UPLOAD_KEY)


@st.cache_data(show_spinner="Loading the ranking data…", max_entries=8)
def _benchmark_splits(source: RankingSource) -> dict:
    return ltr_runs.load_splits(source)


def jobs_section(empty: str) -> None:
    """Ranking runs' job list (ranking runs only, newest first; :func:`ui.jobs.job_panel`)
    under its heading; ``empty`` is said when there is none."""
    st.subheader("Jobs")
    job_panel(common.runner(), common.session_id(), (ltr_runs.TASK,), done_key="rk_done",
              cancel_key="rk_cancel_", newest_first=True, empty=empty)


def current_splits() -> dict:
    """Train / vali / test of the session's ranking dataset."""
    source = current_source()
    if source.kind == "upload":
        try:
            data = uploaded_data()
            if data is None:  # the session lost it: reopen the stored copy
                data = stored_upload(source.args_dict["fingerprint"])
                st.session_state[UPLOAD_KEY] = data
            ranking_uploads.check_ranking_upload(data)  # too few queries to split
        except DataError as exc:
            st.warning(f"{exc} Showing the default dataset.", icon=":material/warning:")
            st.session_state.pop(SOURCE_KEY, None)
            st.session_state.pop(UPLOAD_KEY, None)
            return _benchmark_splits(current_source())
        return _upload_splits(source, data)
    return _benchmark_splits(source)


@st.cache_data(show_spinner="Splitting the uploaded data…", max_entries=4,
               hash_funcs={letor.LTRData: lambda d: d.fingerprint()})
def _upload_splits(source: RankingSource, data) -> dict:
    return ltr_runs.load_splits(source, data)


@st.cache_data(show_spinner="Reading the ranking file…", max_entries=4)
def read_upload(content: bytes, name: str, options: tuple):
    """An uploaded LETOR / SVMlight file, or a CSV / Parquet table with ``options``; stored
    on disk (:mod:`core.data.ranking_uploads`) so it can be reopened after a reload."""
    data = ranking_uploads.read_ranking_upload(content, name=name, options=dict(options))
    try:
        ranking_uploads.save_ranking_upload(content, name=name, options=dict(options))
    except DataError as exc:
        st.warning(f"{exc} The file is used in this tab only.", icon=":material/warning:")
    return data


@st.cache_data(show_spinner="Reopening the upload…", max_entries=4)
def stored_upload(fingerprint: str):
    return ranking_uploads.load_ranking_upload(fingerprint)


def default_format(upload) -> None:
    """When a new file is chosen, preset the *Format* radio (key ``rk_fmt``) from its name
    (:func:`core.data.guess_ranking_format`); call before the radio is drawn.  The user's
    choice then stands until another file is chosen."""
    if upload is None:
        return
    seen = (upload.name, upload.size)
    if st.session_state.get("rk_fmt_file") != seen:
        st.session_state["rk_fmt_file"] = seen
        st.session_state["rk_fmt"] = ranking_uploads.guess_ranking_format(upload.name)


def grade_warnings(splits: dict) -> list[str]:
    """:func:`core.data.grade_warnings` of every document of the dataset."""
    return letor.grade_warnings(np.concatenate([d.relevance for d in splits.values()]))


def training_queries(splits: dict) -> pd.DataFrame:
    """The training split's query table with readable headers."""
    return splits["train"].query_table().rename(columns={
        "qid": "query", "n_docs": "documents", "n_relevant": "relevant documents",
        "max_grade": "highest grade"})


def earlier_uploads() -> dict[str, str]:
    """Fingerprint → "name (saved …)" of the stored ranking uploads, newest first."""
    return {u["fingerprint"]: f"{u['name']} (uploaded {u['saved']})"
            for u in ranking_uploads.list_ranking_uploads()}


def caption() -> None:
    """The dataset line under a Ranking page's title."""
    source = current_source()
    st.caption(f":material/dataset: Ranking data: **{source.label()}** — change it on "
               "*Ranking data*.")


# ----------------------------------------------------------------------------- runs
def store() -> RunStore:
    return common.runner().store


@st.cache_data(show_spinner=False, max_entries=32)
def runs_table(root: str, fingerprint: str, stamp: int) -> pd.DataFrame:
    """Stored runs; ``stamp`` (the results folder's mtime) changes when a run is stored."""
    return ltr_runs.list_ranking_runs(RunStore(root), fingerprint)


@st.cache_data(show_spinner=False, max_entries=64)
def load_run(root: str, key: str):
    return ltr_runs.load_ranking_run(RunStore(root), key)


#: The models Ranking runs proposes and Ranking compare preselects: the paper's comparison
#: (Welleck 2016: λ-MAUC LambdaMART against the linear pairwise AUC ranker).
DEFAULT_MODELS = ("LambdaMART λ-MAUC", "Linear pairwise AUC")


def preselected_runs(table: pd.DataFrame, limit: int = 4) -> list[str]:
    """Run keys Ranking compare starts with: the newest run of each :data:`DEFAULT_MODELS`
    model, then the newest others, ``limit`` in all (``table`` newest first)."""
    first = [table.loc[table["model"] == m, "key"].iloc[0] for m in DEFAULT_MODELS
             if (table["model"] == m).any()]
    return (first + [k for k in table["key"] if k not in first])[:limit]


def current_runs() -> pd.DataFrame:
    results = store().root / "_results"
    stamp = results.stat().st_mtime_ns if results.is_dir() else 0
    return runs_table(str(store().root), ltr_runs.data_fingerprint(current_source()), stamp)


@st.cache_data(show_spinner="Scoring every test query…", max_entries=64)
def per_query(root: str, key: str, k: int) -> pd.DataFrame:
    """Per-query metrics of a stored run's test scores at cut-off ``k``."""
    _, frames = load_run(root, key)
    s = frames["scores"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined queries are nan, said on the page
        return per_query_metrics(s["relevance"].to_numpy(), s["score"].to_numpy(),
                                 s["qid"].to_numpy(), k=k)


def runs_or_stop(what: str) -> dict[str, str]:
    """Run key → display name of the stored runs on the session's ranking data; without any,
    a notice with a link to the Ranking runs page, and the page stops."""
    table = current_runs()
    if table.empty:
        st.info(f"No trained ranking runs on this dataset yet: train one to {what}.")
        st.page_link("pages/ranking_runs.py", label="Train rankers",
                     icon=":material/model_training:")
        st.stop()
    return run_names(table)


def run_names(table: pd.DataFrame) -> dict[str, str]:
    """Run key → a unique display name (model; preset and seed when needed)."""
    names = {}
    for _, row in table.iterrows():
        name = ltr_runs.run_name({"model": row["model"], "preset": row["preset"],
                                  "seed": row["seed"]})
        names[row["key"]] = name if name not in names.values() else f"{name} [{row['key'][:6]}]"
    return names


# ----------------------------------------------------------------------------- figures
def query_size_figure(splits: dict) -> go.Figure:
    """Histogram of documents per query, one trace per split."""
    fig = go.Figure()
    for split, data in splits.items():
        sizes = data.query_table()["n_docs"]
        fig.add_histogram(x=sizes, name=SPLIT_LABELS.get(split, split),
                          xbins=dict(start=0, size=5),
                          hovertemplate="%{x} documents: %{y} queries<extra>%{fullData.name}"
                                        "</extra>")
    fig.update_layout(barmode="group", title="Documents per query",
                      xaxis_title="documents in the query", yaxis_title="queries",
                      height=320, margin=dict(t=50, b=40, l=50, r=10), legend_title="split")
    return fig


def grade_figure(splits: dict) -> go.Figure:
    """Share of documents per relevance grade, one bar group per split."""
    fig = go.Figure()
    for split, data in splits.items():
        counts = data.grade_counts()
        fig.add_bar(x=[f"{g:g}" for g in counts.index], y=counts.to_numpy() / counts.sum(),
                    name=SPLIT_LABELS.get(split, split),
                    hovertemplate="grade %{x}: %{y:.1%}<extra>%{fullData.name}</extra>")
    fig.update_layout(title="Relevance grades", xaxis_title="grade (0 = not relevant)",
                      yaxis_title="share of documents", yaxis_tickformat=".0%", height=320,
                      margin=dict(t=50, b=40, l=50, r=10), legend_title="split")
    return fig


def split_table(splits: dict) -> pd.DataFrame:
    rows = []
    for split, data in splits.items():
        q = data.query_table()
        none = int((q["n_relevant"] == 0).sum())
        rows.append({"split": SPLIT_LABELS.get(split, split), "queries": len(q),
                     "documents": int(q["n_docs"].sum()),
                     "docs per query (median)": float(q["n_docs"].median()),
                     "queries without a relevant doc": none,
                     "share without": none / max(len(q), 1)})
    return pd.DataFrame(rows).set_index("split")


def distribution_figure(frames: dict[str, pd.DataFrame], metric: str, label: str) -> go.Figure:
    """Box plot with every query as a point: the per-query distribution of ``metric``."""
    colors = run_colors(list(frames))
    fig = go.Figure()
    for name, frame in frames.items():
        vals = frame[metric].dropna()
        fig.add_box(y=vals, name=name, boxpoints="all", jitter=0.4, pointpos=0,
                    marker=dict(size=4, opacity=0.5), line=dict(color=colors[name]),
                    boxmean=True, text=[f"query {q}" for q in vals.index],
                    hovertemplate="%{text}: %{y:.3f}<extra>%{fullData.name}</extra>")
    fig.update_layout(title=f"{label} per test query (box = quartiles, dashed = mean)",
                      yaxis_title=label, xaxis_title="run", showlegend=False, height=420,
                      margin=dict(t=50, b=40, l=60, r=10))
    return fig


def imbalance_figure(table: pd.DataFrame, metrics: dict[str, str]) -> go.Figure:
    """Per query: each metric against the number of relevant documents (jittered points),
    and the mean per bin of :func:`core.evaluation.by_relevant_count` with its 95 % interval
    (drawn at the bin's mean number of relevant documents)."""
    fig = go.Figure()
    rng = np.random.default_rng(0)
    colors = run_colors(list(metrics))
    bins = by_relevant_count(table, tuple(metrics))
    centres = [table.loc[table["n_relevant"].between(lo, hi), "n_relevant"].mean()
               for label, lo, hi in RELEVANT_BINS if label in bins.index]
    for metric, label in metrics.items():
        ok = table[metric].notna()
        x = table.loc[ok, "n_relevant"].to_numpy(dtype=float)
        fig.add_scatter(x=x + rng.uniform(-0.2, 0.2, x.size), y=table.loc[ok, metric],
                        mode="markers", name=f"{label}, one query", opacity=0.4,
                        marker=dict(size=5, color=colors[metric]),
                        text=[f"query {q}" for q in table.index[ok]],
                        hovertemplate="%{text}: %{y:.3f}<extra></extra>")
        fig.add_scatter(x=centres, y=bins[metric], mode="lines+markers",
                        name=f"{label}, mean per bin (95 % CI)",
                        error_y=dict(type="data", array=bins[f"± {metric}"]),
                        line=dict(color=colors[metric], width=3), marker=dict(size=9))
    ticks = [1, 2, 3, 5, 10, 20, 50, 100]
    fig.update_xaxes(type="log", title="relevant documents in the query (log scale)",
                     tickvals=ticks, ticktext=[str(t) for t in ticks])
    fig.update_layout(yaxis_title="metric value (per query)", height=440,
                      margin=dict(t=30, b=40, l=60, r=10), legend=dict(orientation="h", y=-0.2))
    return fig


def binned(table: pd.DataFrame, metrics: dict[str, str]) -> pd.DataFrame:
    """The bins of the imbalance view with readable column names."""
    out = by_relevant_count(table, tuple(metrics))
    names = {"queries": "queries"}
    for metric, label in metrics.items():
        names[metric] = f"{label} (mean)"
        names[f"± {metric}"] = f"{label} ± 95 %"
    out = out.rename(columns=names)
    for col in out.columns[1:]:  # text cells: a number to 4 decimals, or "—"
        out[col] = [DASH if pd.isna(v) else f"{v:.4f}" for v in out[col]]
    return out


# ----------------------------------------------------------------------------- compare
#: Metric family → label (``{k}``: the cut-off), in the order of the tables.  A family with
#: a cut-off is the per-query column ``family@k``.
METRIC_FAMILIES = {"auc": "AUC", "mauc": "MAUC", "ap": "MAP",
                   "ap_letor": "MAP (LETOR: no-rel = 0)", "ndcg": "NDCG@{k}", "p": "P@{k}",
                   "p_micro": "micro P@{k}", "p_macro": "macro P@{k}", "p_ndcg": "P-nDCG"}
#: Averages over queries only: a query's term of micro / macro P@k is not a precision (the
#: macro term divides by the mean cut-off, so it exceeds 1 on a short query).
MEAN_ONLY = ("p_micro", "p_macro")
#: Per-query download: the micro / macro columns named as what they hold.
TERM_COLUMNS = {"p_micro": "term of micro p", "p_macro": "term of macro p"}


def metric_column(family: str, k: int) -> str:
    """The per-query column of a metric family at cut-off ``k`` (``ndcg`` → ``ndcg@10``)."""
    return f"{family}@{k}" if "{k}" in METRIC_FAMILIES[family] else family


def metric_families(k: int, *, per_query: bool = True) -> dict[str, str]:
    """Family → label at cut-off ``k``; ``per_query`` leaves out :data:`MEAN_ONLY`.  The
    keys do not change with ``k``, so a select box keyed on them keeps its metric."""
    return {f: label.format(k=k) for f, label in METRIC_FAMILIES.items()
            if not (per_query and f in MEAN_ONLY)}


def metric_labels(k: int, *, per_query: bool = False) -> dict[str, str]:
    """Per-query column → label shown (the order of the tables); ``per_query`` leaves out
    micro and macro P@k, which only their means make meaningful."""
    return {metric_column(f, k): label
            for f, label in metric_families(k, per_query=per_query).items()}


def means_table(frames: dict[str, pd.DataFrame], metrics: dict[str, str]) -> pd.DataFrame:
    """Runs × metrics: the mean over the queries where the metric is defined."""
    rows = {name: {label: frame[col].mean() for col, label in metrics.items()}
            for name, frame in frames.items()}
    return pd.DataFrame.from_dict(rows, orient="index").round(4)


@st.cache_data(show_spinner="Testing every pair of runs…", max_entries=64)
def paired(ids: tuple, _frames: dict, metric: str, test: str, correction: str) -> pd.DataFrame:
    return compare_runs(_frames, metrics=(metric,), test=test, correction=correction,
                        n_permutations=10_000, random_state=0)


#: Fewer paired queries than this: a "significant" verdict gets a caution.
FEW_QUERIES = 10


def verdicts(tests: pd.DataFrame, label: str) -> list[tuple[str, bool]]:
    """The plain sentence of every pair, significant ones first; a significant verdict from
    fewer than :data:`FEW_QUERIES` paired queries says it is fragile."""
    rows = tests.sort_values("p_adjusted", kind="stable")
    out = []
    for _, row in rows.iterrows():
        text = verdict(row, metric_label=label)
        if row["significant"] and row["n_queries"] < FEW_QUERIES:
            text += (f" Careful: only {int(row['n_queries'])} paired "
                     f"quer{'y' if row['n_queries'] == 1 else 'ies'}; with so few, one query "
                     "can make or unmake the verdict. Treat it as a hint, not a finding.")
        out.append((text, bool(row["significant"])))
    return out


def paired_note(frames: dict[str, pd.DataFrame], tests: pd.DataFrame, label: str) -> str:
    """Which test queries the paired tests use: all, or those where the metric is defined
    in both runs (queries without a relevant document are left out)."""
    n_total = len(next(iter(frames.values())))
    used = int(tests["n_queries"].max()) if len(tests) else 0
    if used >= n_total:
        return f"The paired tests use all {n_total:,} test {plural(n_total, 'query', 'queries')}."
    # AUC and MAUC need a relevant and an irrelevant document; the others only a relevant one
    why = ("no relevant document, or only relevant ones" if label in ("AUC", "MAUC")
           else "no relevant document")
    return (f"The paired tests use {used:,} of the {n_total:,} test "
            f"{plural(n_total, 'query', 'queries')}: "
            f"{label} is undefined on the others ({why}), so they are left out.")


def plural(n: int, one: str, many: str) -> str:
    """``one`` for n = 1, else ``many``."""
    return one if n == 1 else many


def n_queries(data, what: str) -> str:
    """"1 test query", "20 test queries": the number of queries of a split, in words."""
    n = data.n_queries
    return f"{n:,} {what} {plural(n, 'query', 'queries')}"


def tests_display(tests: pd.DataFrame) -> pd.DataFrame:
    cols = {"run_a": "run A", "run_b": "run B", "mean_a": "mean A", "mean_b": "mean B",
            "difference": "A − B", "n_queries": "queries", "p_value": "p",
            "p_adjusted": "p (corrected)", "winner": "significantly better"}
    out = tests[list(cols)].rename(columns=cols)
    out["significantly better"] = out["significantly better"].replace("", "—")
    return out.round({"mean A": 4, "mean B": 4, "A − B": 4})


def query_metrics(frames: dict[str, pd.DataFrame], qid, metrics: dict[str, str]) -> pd.DataFrame:
    """How each metric scores query ``qid`` in every run (runs × metrics), as text with 3
    decimals; a metric undefined on the query (no relevant document) reads "—", not "None"."""
    def text(value) -> str:
        return f"{value:.3f}" if pd.notna(value) else DASH

    return pd.DataFrame({name: {label: text(frame.loc[qid, col]) for col, label in
                                metrics.items()} for name, frame in frames.items()}).T


@st.cache_data(show_spinner=False, max_entries=256)
def query_list(root: str, key: str, qid, top: int) -> pd.DataFrame:
    """The documents of ``qid`` in the run's order: position, document, grade, score."""
    _, frames = load_run(root, key)
    s = frames["scores"]
    rows = s[s["qid"].astype(str) == str(qid)].sort_values("score", ascending=False,
                                                           kind="stable")
    out = pd.DataFrame({"position": np.arange(1, len(rows) + 1), "document": rows["doc"],
                        "grade": rows["relevance"], "score": rows["score"].round(4)})
    return out.head(top)


def query_list_columns(top_grade: float) -> dict:
    """Column layout of a :func:`query_list` table: narrow position, grade bar and score,
    so the score stays visible beside the document id in a half-width column (pixel
    widths, 350 in all: Streamlit's "small" / "medium" widths cut the score off at a
    laptop's 1,280 px)."""
    return {"position": st.column_config.NumberColumn("#", width=36),
            "document": st.column_config.TextColumn("document", width=164),
            "grade": st.column_config.ProgressColumn(
                "grade", format="%.0f", min_value=0, max_value=max(1.0, float(top_grade)),
                width=70),
            "score": st.column_config.NumberColumn("score", format="%.4f", width=80)}


@st.cache_data(show_spinner=False, max_entries=64)
def max_grade(root: str, key: str) -> float:
    return float(load_run(root, key)[1]["scores"]["relevance"].max())


def long_frame(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every run's per-query table stacked, for download: columns ``run``, ``qid``, then the
    metrics (micro / macro P@k named as the query's term of the average they are)."""
    out = pd.concat([f.assign(run=name) for name, f in frames.items()])
    out = out.rename_axis("qid").reset_index()
    out = out[["run", "qid", *[c for c in out.columns if c not in ("run", "qid")]]]
    return out.rename(columns=_term_name)


def _term_name(column: str) -> str:
    family, at, k = column.partition("@")
    return f"{TERM_COLUMNS[family]}@{k}" if at and family in TERM_COLUMNS else column


def per_query_csv(per_query: pd.DataFrame) -> bytes:
    """The P-nDCG explorer's per-query table as a spreadsheet-safe CSV (``qid`` a column)."""
    return safe_csv_bytes(per_query.rename_axis("qid").reset_index()
                          .rename(columns=_term_name))


# ----------------------------------------------------------------------------- P-nDCG
#: The post's worked examples (Wong 2019): nDCG 0.920 for both, P-nDCG 0.588 vs 0.941.
PNDCG_EXAMPLES = {
    "Post example A: p = 0.9, 0.8, 0.1": [(1, 0.9), (0, 0.8), (1, 0.1)],
    "Post example B: p = 0.9, 0.8, 0.7": [(1, 0.9), (0, 0.8), (1, 0.7)],
    "Flat: p = 0.5, 0.5, 0.5": [(1, 0.5), (0, 0.5), (1, 0.5)],
}


@st.cache_data(show_spinner=False, max_entries=64)
def run_probabilities(root: str, key: str) -> pd.DataFrame:
    """A run's test documents with the probability P-nDCG uses (Platt on the test set)."""
    s = load_run(root, key)[1]["scores"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = score_to_probability(s["score"].to_numpy(), s["relevance"].to_numpy() > 0)
    return s.assign(probability=p)


def query_rows(root: str, key: str, qid) -> list[tuple[float, float]]:
    """(grade, probability) of query ``qid``'s documents in the run's order."""
    s = run_probabilities(root, key)
    part = s[s["qid"].astype(str) == str(qid)].sort_values("probability", ascending=False,
                                                          kind="stable")
    return list(zip(part["relevance"].astype(float), part["probability"].round(4)))


def set_editor_list(rows) -> None:
    st.session_state["pn_rows"] = pd.DataFrame(rows, columns=["grade", "probability"])
    st.session_state["pn_version"] = st.session_state.get("pn_version", 0) + 1


def editor_list() -> pd.DataFrame:
    if "pn_rows" not in st.session_state:
        set_editor_list(next(iter(PNDCG_EXAMPLES.values())))
    return st.session_state["pn_rows"]


def editor_key() -> str:
    """A new key whenever a button replaces the list (the editor then shows the new rows)."""
    return f"pn_editor_{st.session_state.get('pn_version', 0)}"


#: Discount of :func:`core.evaluation.discount_table` → name shown in its table and chart.
DISCOUNT_NAMES = {"log2": "log2 (standard nDCG)", "zipf": "Zipf 1/i", "zipf_beta": "Zipf-β 1/iᵝ",
                  "probability": "probability (P-nDCG)",
                  "probability_binary": "probability, grade > 0 = 1"}


def discounts(edited: pd.DataFrame, beta: float) -> pd.DataFrame | None:
    """The discount table of the edited list, rows named by :data:`DISCOUNT_NAMES`; ``None``
    (with a notice) when it cannot be scored yet."""
    rows = edited.dropna()
    if len(rows) < len(edited):
        st.info("Rows with an empty cell are left out.")
    if rows.empty or not (rows["grade"] > 0).any():
        st.info("Give at least one document a grade above 0: without a relevant document "
                "every nDCG is undefined.")
        return None
    table = discount_table(rows["grade"].to_numpy(float), rows["probability"].to_numpy(float),
                           beta=beta).round(4)
    return table.rename(index=DISCOUNT_NAMES)


def discount_figure(table: pd.DataFrame) -> go.Figure:
    col = next(c for c in table.columns if c.lower().startswith("ndcg"))
    fig = go.Figure(go.Bar(x=[DISCOUNT_NAMES.get(i, i) for i in table.index], y=table[col],
                           text=table[col].round(3),
                           textposition="outside", marker_color="#4477AA"))
    fig.update_layout(title="nDCG of the list under each discount", yaxis_title="nDCG",
                      xaxis_title="discount", yaxis_range=[0, 1.1], height=340,
                      margin=dict(t=50, b=40, l=50, r=10))
    return fig

