"""Streamlit side of the Label ranking page: cached data, the experiment's background job and
its stored result, and the page's figures.  Numerics: :mod:`core.label_ranking`; the
experiment: :mod:`core.runs.label_runs`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core.label_ranking import data as lrdata
from core.label_ranking.baselines import borda_consensus
from core.runs import label_runs
from core.runs.export import safe_csv_bytes
from core.runs.store import RunStore
from core.runs.takeaway import fmt_p
from core.runs.views import fmt_number
from ui import common
from ui.charts import short_names
from ui.jobs import show_task


@st.cache_resource(show_spinner="Generating the data…", max_entries=2)
def generated(generator: str, args: tuple):
    """The data of a listed generator, one shared object per settings (the page never
    modifies it): no copy on every rerun — at 50,000 users × 50 labels its features alone
    take 204 MB."""
    return label_runs.make_data(generator, dict(args))


@st.cache_data(show_spinner="Reading the CSV…", max_entries=4)
def uploaded(content: bytes, options: tuple):
    return lrdata.read_rankings_csv(content, **dict(options))


@st.cache_data(show_spinner=False, max_entries=16)
def result(root: str, key: str):
    return label_runs.load_experiment(RunStore(root), key)


def is_stored(config: label_runs.LabelExperiment) -> bool:
    """Whether ``config`` has run before on this server: its result is on disk."""
    return common.runner().store.has_result(config.task().key())


def submit(config, data) -> str:
    return label_runs.submit_experiment(common.runner(), config, data,
                                        session=common.session_id())


def show_job(job_id: str, *, current: bool = True):
    """The stored ``(meta, frames)`` once the job is done; progress or how it ended before
    (``current``: the job has the page's settings; :func:`ui.jobs.show_task`)."""
    root = str(common.runner().store.root)
    return show_task(common.runner(), job_id, common.session_id(), key="lr_cancel",
                     what="Experiment", load=lambda key: result(root, key), current=current)


def upload_section() -> tuple[lrdata.LabelRankingData | None, UploadedFile | None]:
    """The "Upload a CSV" source: the file, its column options, and the data read from it.

    The last file read stays in use when the uploader has none (after a switch of source) or
    holds one that cannot be read; a caption then names it.

    Returns
    -------
    data : LabelRankingData or None
        The rankings read from the file (or from the earlier upload); ``None`` before any.
    upload : UploadedFile or None
        The uploader's current file.
    """
    data = None
    st.caption("A CSV of numeric features plus either one ranking column "
               "(e.g. `sports>news>autos`, most preferred first) or one position column "
               "per label named `pos_<label>` (1 = most preferred, 0 or blank = not "
               "ranked). Rankings use `>` between labels. With the ranking column left "
               "empty, a column named `ranking` is used, else the `pos_` columns.")
    upload = st.file_uploader("Label-ranking CSV", type=["csv", "txt"], key="lr_upload")
    u1, u2 = st.columns(2)
    ranking_col = u1.text_input("Ranking column (empty: 'ranking', else the pos_ columns)",
                                "", key="lr_rank_col")
    group_col = u2.text_input("Group column (optional, e.g. age × gender)", "",
                              key="lr_group_col")
    options = (("ranking_column", ranking_col.strip() or None),
               ("group_column", group_col.strip() or None))
    if upload is not None:
        with common.guard("Reading the CSV"):
            data = uploaded(upload.getvalue(), options)
            st.session_state["lr_kept"] = (upload.name, upload.getvalue())
    # the last file read stays in use: after a source switch (the uploader forgets its
    # file) or a file that cannot be read, nothing is lost
    kept = st.session_state.get("lr_kept")
    if data is None and kept is not None and (upload is None
                                              or upload.getvalue() != kept[1]):
        st.caption(f":material/history: {'Still using' if upload else 'Using'} the earlier "
                   f"upload **{kept[0]}** (upload another file to replace it).")
        data = uploaded(kept[1], options)
    return data, upload


@st.cache_resource(show_spinner=False, max_entries=4)
def data_figures(key: tuple, _data: lrdata.LabelRankingData) -> tuple:
    """Figure 1's two charts and Figure 2's table of the data ``key`` names, built once, not
    on every rerun (65 ms at 50,000 users × 50 labels); the page never modifies them."""
    return frequency_figure(_data), length_figure(_data), consensus_table(_data)


def show_data(data: lrdata.LabelRankingData, key: tuple) -> None:
    """The data's description and warnings, its size, Figure 1 and (with groups) Figure 2.

    Parameters
    ----------
    data : LabelRankingData
        The rankings in use: ``Y`` (users × labels, rank positions, 0 = not ranked), ``X``
        (features), ``labels``, optional ``groups``.
    key : tuple
        What identifies ``data`` (a generator and its settings, or an upload's fingerprint):
        the key of its cached figures.
    """
    n, L = data.Y.shape
    st.caption(data.description)
    for warning in data.warnings:
        st.info(warning, icon=":material/info:")
    m = st.columns(4)
    m[0].metric("Users (rows)", f"{n:,}")
    m[1].metric("Labels", f"{L:,}")
    m[2].metric("Features", f"{data.X.shape[1]:,}")
    m[3].metric("Ranked per user", f"{(data.Y > 0).sum(axis=1).mean():.1f}",
                help="Labels (categories) a user ranks, on average; the others are unranked.")
    frequency, lengths, consensus = data_figures(key, data)
    f1, f2 = st.columns(2)
    f1.plotly_chart(frequency, width="stretch", key="lr_freq")
    f2.plotly_chart(lengths, width="stretch", key="lr_len")
    if consensus is not None:
        with st.expander("Consensus ranking of each group (paper Figure 2)"):
            st.caption("The labels each group ranks highest on average (Borda count: a "
                       "label's mean position, unranked labels sharing the last places).")
            # one wrapping cell per group: a column per rank scrolled sideways at a
            # laptop's 1,280 px (#4 and #5 out of sight)
            st.table(consensus)


NAME_WIDTH = 44
"""Characters of a label's name shown on a chart's axis (the simulator's longest is 40,
"Telecommunications/Cellular and Wireless"); a longer uploaded name is cut with "…" and
shown whole on hover."""


def _category_axis(fig: go.Figure, names: list[str]) -> None:
    """Labels down the y axis, one horizontal bar each, the first on top: names of 40
    characters stay whole, where a slanted x axis cut them to 17 ("Technology/Intern…").
    Full names are the categories, so two names alike in their first letters stay two bars;
    a longer name is cut as the run names of the legends are (:func:`ui.charts.short_names`,
    which keeps the cut names apart); the chart grows with the number of labels."""
    short = short_names(names, NAME_WIDTH)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=names,
                     tickmode="array", tickvals=names, ticktext=[short[n] for n in names],
                     autorange="reversed")
    fig.update_layout(height=max(320, 110 + 20 * len(names)))


def _integer_ticks(largest: int) -> dict:
    """Axis settings for counts: whole-number ticks (no 0.5 user), at most 12 after 0, a step
    of 1, 2 or 5 times a power of ten (100, not 66)."""
    steps = (m * 10 ** e for e in range(19) for m in (1, 2, 5))
    step = next(x for x in steps if largest <= 12 * x)
    return dict(tickformat=",d", dtick=int(step), rangemode="tozero")


def show_results(config, meta: dict, frames: dict, ctx: dict, *, current) -> None:
    """Table 1, P/R/F1@K, paired tests, timings, the λ / C tuning, hyperplanes and downloads of
    one experiment; ``ctx`` (:func:`context`) is its data's, ``current`` the page's settings."""
    if config != current:
        st.caption(":material/history: Results of the last experiment; the settings have "
                   "changed since.")
    for method, why in meta.get("skipped", {}).items():
        st.info(f"{method} was left out: {why}.")
    ad_clicks = config.generator == "ad_clicks"  # the only data the paper's values fit
    st.markdown("**Disagreement error ε_dis** (lower is better)")
    st.dataframe(table1_display(frames["table1"], paper=ad_clicks), width="stretch",
                 key="lr_table1")
    st.caption(f"Mean ± sd over {meta['n_folds']} folds of {meta['n_rows']:,} users."
               + (" The paper's numbers are on Yahoo's 3.3M users (not public): shown for the "
                  "ranking of methods, not to be matched." if ad_clicks else ""))
    st.caption(tuning_note(meta))
    methods = set(frames["table1"]["method"])
    if ctx["complete"] and "LR" in methods:
        st.caption(":material/info: Every user ranks all labels here. LR models only "
                   "whether a label is ranked, so on complete rankings it has nothing to learn "
                   "and its ε_dis can be worse than random (0.5).")
    sets = list(dict.fromkeys(frames["prf"]["features"]))
    r1, r2 = st.columns(2)
    which = r1.radio("Feature set", sets, horizontal=True, key="lr_set")
    metric = r2.radio("Metric", ["f1", "precision", "recall"], horizontal=True,
                      key="lr_metric", format_func={"f1": "F1@K", "precision": "precision P@K",
                                                    "recall": "recall R@K"}.get)
    st.plotly_chart(prf_figure(frames["prf"], which, metric), width="stretch", key="lr_prf")
    if ctx["complete"]:
        st.caption(":material/info: P/R/F1@K count the ranked labels among the top K. Every "
                   "label is ranked here, so every method scores the same (P@K = 1, R@K = K/L) "
                   "and the lines coincide: compare the methods by ε_dis instead.")
    st.markdown("**Paired per-user tests** (t-test on per-user ε_dis, same held-out users; "
                "p-values Holm-corrected over the pairs of each feature set)")
    st.dataframe(paired_display(frames["paired"]), width="stretch", hide_index=True,
                 key="lr_paired",
                 column_config={"p_value": st.column_config.TextColumn("p (Holm)"),
                                "mean difference (A − B)": st.column_config.NumberColumn(
                                    format="%.4f")})
    chosen = frames.get("chosen")
    used = chosen_table(chosen) if chosen is not None and len(chosen) else None
    # side by side when the λ / C table is narrow (fixed, or two folds); else one under the
    # other, so that no fold's column is cut off at a laptop's width
    beside = used is not None and used.shape[1] <= 2
    t1, t2 = st.columns(2) if beside else (st, st)
    t1.markdown("**Milliseconds per fold** (tuning fits, final fit, predict)")
    t1.dataframe(timing_table(frames["timing"]), width="stretch" if beside else "content",
                 key="lr_timing",
                 column_config={c: st.column_config.NumberColumn(format="%.1f")
                                for c in ("tuning (ms)", "fit (ms)", "predict (ms)")})
    if used is not None:
        t2.markdown("**λ / C used in each fold**")
        t2.dataframe(used, width="stretch", key="lr_chosen")
    tuning = frames.get("tuning")
    if tuning is not None and len(tuning):
        params = list(dict.fromkeys(tuning["parameter"]))
        for col, param in zip(st.columns(len(params)), params):
            col.plotly_chart(tuning_figure(tuning, param), width="stretch",
                             key=f"lr_tuning_{'lam' if param == 'λ' else param}")
    if "hyperplanes" in frames:
        st.plotly_chart(hyperplanes_figure(frames["hyperplanes"]), width="stretch",
                        key="lr_hyper")
    names = {"table1": "Table 1 (ε_dis)", "prf": "P/R/F1@K", "paired": "paired tests",
             "tuning": "λ / C tuning", "predictions": "predictions"}
    names = {k: v for k, v in names.items() if k in frames and len(frames[k])}
    row = st.container(horizontal=True)  # side by side, wrapped: in columns they were cut
    for name in names:
        row.download_button(f"Download {names[name]} (CSV)",
                            lambda f=frames[name]: safe_csv_bytes(f),
                            f"uprank_label_ranking_{name}.csv", "text/csv", key=f"lr_dl_{name}",
                            on_click="ignore")


def frequency_figure(data) -> go.Figure:
    """Figure 1 (left): how often each label is ranked, most frequent first."""
    freq = (np.asarray(data.Y) > 0).mean(axis=0)
    order = np.argsort(-freq, kind="stable")
    labels = [str(data.labels[j]) for j in order]
    fig = go.Figure(go.Bar(y=labels, x=freq[order], orientation="h",
                           hovertemplate="%{y}: ranked by %{x:.1%} of users<extra></extra>"))
    fig.update_layout(title="How often each label is ranked (most frequent on top)",
                      margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title="share of users ranking it")
    _category_axis(fig, labels)
    fig.update_xaxes(tickformat=".0%")
    return fig


def length_figure(data) -> go.Figure:
    """Figure 1 (right): how many labels each user ranks (L_t)."""
    lt = (np.asarray(data.Y) > 0).sum(axis=1)
    counts = np.bincount(lt)
    fig = go.Figure(go.Bar(x=np.arange(counts.shape[0]), y=counts,
                           hovertemplate="%{y:,} users rank %{x} labels<extra></extra>"))
    fig.update_layout(title="Labels ranked per user", height=420,
                      margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title="labels ranked by the user (count)",
                      yaxis_title="users (count)")
    fig.update_xaxes(**_integer_ticks(counts.shape[0] - 1))
    fig.update_yaxes(**_integer_ticks(int(counts.max(initial=1))))
    return fig


def hyperplanes_figure(hyperplanes: pd.DataFrame) -> go.Figure:
    """AMM-rank's hyperplanes per label, in the data's label order (not sorted as text)."""
    names = [str(x) for x in hyperplanes["label"]]
    fig = go.Figure(go.Bar(y=names, x=hyperplanes["hyperplanes"], orientation="h",
                           hovertemplate="%{y}: %{x} hyperplanes<extra></extra>"))
    fig.update_layout(title="AMM-rank hyperplanes per label (learned, capped by the budget)",
                      margin=dict(l=10, r=10, t=50, b=10), xaxis_title="hyperplanes (count)")
    _category_axis(fig, names)
    fig.update_xaxes(**_integer_ticks(int(hyperplanes["hyperplanes"].max())))
    return fig


def context(data) -> dict:
    """What the results of an experiment on ``data`` are read with: whether every user ranks
    every label (complete rankings)."""
    lt = (np.asarray(data.Y) > 0).sum(axis=1)
    ranked = lt[lt > 0]
    L = np.asarray(data.Y).shape[1]
    return {"complete": bool(ranked.size and (ranked == L).all())}


#: The experiment's settings for "λ and C fixed": BudgetedSVM's λ and scikit-learn's C.
FIXED_PARAMETERS = label_runs.FIXED
TUNE_HELP = ("Tuned (the paper's protocol): in each fold, λ of AMM-rank and AMM and C of LR and "
             "PW-LR are picked from a grid by the error on 20 % of the fold's training users "
             "held out, then refitted on all of them; several times slower. Fixed: "
             "BudgetedSVM's λ = 0.0001 and scikit-learn's C = 1 everywhere, for a quick look.")

#: PW-LR pair models per fold above which the page warns before a run (50 labels: 1,225,
#: the ad-click simulator's largest setting, about a second per fold).
PW_LR_PAIRS_WARN = 1_225


def slow_methods_note(methods: list[str], n_labels: int, folds: int) -> str | None:
    """A warning before a run when PW-LR (one logistic model per pair of labels) would fit
    many models, else None."""
    pairs = n_labels * (n_labels - 1) // 2
    if "PW-LR" not in methods or pairs <= PW_LR_PAIRS_WARN:
        return None
    return (f"PW-LR fits one logistic regression per pair of labels: {pairs:,} per fold here "
            f"({n_labels} labels), {pairs * folds:,} for the {folds} folds — this can take "
            "many minutes (about 1 minute per fold for 200 labels and 300 users). Leave PW-LR "
            "out for a quick look.")


#: Between the labels of a consensus ranking, most preferred first.
RANKED = " › "


def consensus_table(data, top: int = 5) -> pd.DataFrame | None:
    """Figure 2: each group's consensus (Borda) ranking, its ``top`` labels in one cell,
    joined by :data:`RANKED` (a cell that wraps: one column per rank ran 1,360 px wide)."""
    if getattr(data, "groups", None) is None:
        return None
    groups = np.asarray(data.groups)
    Y = np.asarray(data.Y)
    top = min(top, Y.shape[1])  # three labels: "top 3"
    rows = {}
    for g in sorted(set(groups.tolist()), key=str):
        scores = borda_consensus(Y[groups == g])
        order = np.argsort(-scores, kind="stable")[:top]
        rows[str(g)] = {"users": f"{int((groups == g).sum()):,}",
                        f"top {top} labels, most preferred first":
                            RANKED.join(str(data.labels[j]) for j in order)}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out


def table1_display(table1: pd.DataFrame, *, paper: bool = True) -> pd.DataFrame:
    """The paper's Table 1 layout: method × feature set, "ε mean ± sd", and (``paper``: the
    simulated ad clicks, the only data it compares with) the paper's value."""
    t = table1.copy()
    t["ε_dis (mean ± sd over folds)"] = [
        f"{m:.4f} ± {s:.4f}" if np.isfinite(s) else f"{m:.4f}"
        for m, s in zip(t["eps_dis"], t["sd"])]
    wide = t.pivot(index="method", columns="features", values="ε_dis (mean ± sd over folds)")
    order = [m for m in label_runs.METHODS if m in wide.index]
    sets = [c for c in (label_runs.WITHOUT, label_runs.WITH, "all features") if c in wide]
    if not paper:
        return wide.loc[order, sets]
    values = t.pivot(index="method", columns="features", values="paper (Yahoo)")
    for col in values.columns:  # (the caption says why they are not to be matched)
        wide[f"paper (Yahoo), {col}"] = [fmt_number(v, 4) for v in values[col]]
    cols = sets + [f"paper (Yahoo), {c}" for c in sets]
    return wide.loc[order, cols]


def p_text(p: float) -> str:
    """The verdicts' p-value (:func:`core.runs.takeaway.fmt_p`) without its "p": "< 0.001"
    or "0.012", for the table's p column."""
    return fmt_p(p).removeprefix("p = ").removeprefix("p ")


def paired_display(paired: pd.DataFrame) -> pd.DataFrame:
    """The paired tests with p-values written as :func:`p_text` writes them (the verdicts
    write them the same way: core.runs.label_runs)."""
    return paired.assign(p_value=[p_text(p) for p in paired["p_value"]])


def timing_table(timing: pd.DataFrame) -> pd.DataFrame:
    """Milliseconds per fold (the held-out tuning fits, the final fit, predict), methods in the
    page's order, not alphabetical."""
    timing = timing if "tune_s" in timing else timing.assign(tune_s=0.0)
    cols = ["tune_s", "fit_s", "predict_s"]
    ms = (1000 * timing.groupby(["method", "features"], sort=False)[cols].mean()).rename(
        columns={"tune_s": "tuning (ms)", "fit_s": "fit (ms)", "predict_s": "predict (ms)"})
    rank = {m: i for i, m in enumerate(label_runs.METHODS)}
    sets = {s: i for i, s in enumerate((label_runs.WITHOUT, label_runs.WITH))}
    keys = sorted(ms.index, key=lambda k: (rank.get(k[0], len(rank)), sets.get(k[1], 2)))
    return ms.loc[keys]


def prf_figure(prf: pd.DataFrame, features: str, metric: str = "f1") -> go.Figure:
    """Figure 3: precision, recall or F1 at K = 1 … 10, one line per method."""
    names = {"precision": "precision P@K", "recall": "recall R@K", "f1": "F1@K"}
    fig = go.Figure()
    part = prf[prf["features"] == features]
    palette = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677"]
    for i, (method, m) in enumerate(part.groupby("method", sort=False)):
        fig.add_trace(go.Scatter(
            x=m["k"], y=m[metric], mode="lines+markers", name=method,
            line=dict(color=palette[i % len(palette)]),
            hovertemplate=f"{method}: {names[metric]} at K = %{{x}}: %{{y:.1%}}<extra></extra>"))
    fig.update_layout(title=f"{names[metric]} of the top K labels ({features})", height=420,
                      margin=dict(l=10, r=10, t=50, b=10), xaxis_title="K (top labels)",
                      yaxis_title=f"{names[metric]} (share)",
                      legend=dict(orientation="h", y=-0.2))
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(dtick=1)
    return fig


def tuning_note(meta: dict) -> str:
    """How λ and C were set (the paper's protocol: on held-out training users of each fold)."""
    tuning = meta.get("tuning", {})
    lam, c = tuning.get("lam_grid", [None, None]), tuning.get("c_grid", [None, None])
    if len(lam) == 1 and len(c) == 1:  # one-value grids: nothing was tuned
        return (f"λ (AMM-rank, AMM) and C (LR, PW-LR) fixed at λ = {lam[0]:g} and C = "
                f"{c[0]:g} (not tuned; the paper tuned them on held-out training users).")
    share = f"{tuning.get('fraction', 0.2):.0%}"
    note = (f"λ (AMM-rank, AMM) and C (LR, PW-LR) are chosen in each fold: every value of the "
            f"grid is fitted on the fold's other training users and scored on {share} of them "
            "held out; the best is refitted on all its training users. The test users never "
            "choose a value (the paper: \"configured through cross-validation on a small "
            "held-out set\").")
    if tuning.get("folds_without_held_out"):
        folds = ", ".join(str(f) for f in tuning["folds_without_held_out"])
        note += (f" Fold(s) {folds}: too few users ranking labels to hold some out, so λ = "
                 "0.0001 and C = 1 (the defaults) were used there.")
    return note


def chosen_table(chosen: pd.DataFrame) -> pd.DataFrame:
    """The λ or C each tuned method used, one column per fold ("λ = 3"), methods in the page's
    order; "(fixed)" for a one-value grid, "(default)" where no users could be held out.  When
    every method used one value in all folds (λ and C fixed), one column "every fold"."""
    mark = {"held-out": "", "fixed": " (fixed)", "default": " (default)"}
    c = chosen.assign(text=[f"{p} = {v:g}{mark.get(h, '')}" for p, v, h in
                            zip(chosen["parameter"], chosen["value"], chosen["how"])],
                      fold=[f"fold {f}" for f in chosen["fold"]])
    wide = c.pivot(index=["method", "features"], columns="fold", values="text")
    wide = wide[sorted(wide.columns, key=lambda f: int(f.split()[1]))]
    if wide.nunique(axis=1).eq(1).all():  # fixed values: one column, not n_folds copies
        wide = wide.iloc[:, :1].set_axis(["every fold"], axis=1)
    rank = {m: i for i, m in enumerate(label_runs.METHODS)}
    sets = {s: i for i, s in enumerate((label_runs.WITHOUT, label_runs.WITH))}
    keys = sorted(wide.index, key=lambda k: (rank.get(k[0], len(rank)), sets.get(k[1], 2)))
    return wide.loc[keys]


def tuning_figure(tuning: pd.DataFrame, parameter: str) -> go.Figure:
    """Held-out ε_dis against λ (or C), mean over folds, one line per method and feature set:
    the curves the values were chosen from (training users only, never the test users)."""
    part = tuning[tuning["parameter"] == parameter]
    mean = part.groupby(["method", "features", "value"], sort=False)["eps_dis"].mean()
    fig = go.Figure()
    for (method, features), m in mean.groupby(level=[0, 1], sort=False):
        fig.add_trace(go.Scatter(
            x=m.index.get_level_values("value"), y=m.to_numpy(), mode="lines+markers",
            name=f"{method}, {features}",
            hovertemplate=f"{method}, {features}: {parameter} = %{{x:g}}, held-out ε_dis "
                          "%{y:.4f}<extra></extra>"))
    what = "regularisation λ" if parameter == "λ" else "C (inverse L2 strength)"
    fig.update_xaxes(type="log", title=f"{what} (log scale)", exponentformat="power", dtick=1)
    fig.update_layout(title=dict(text=f"Choosing {parameter}<br><sup>ε_dis on held-out "
                                      "training users, mean over folds</sup>"), height=360,
                      margin=dict(l=10, r=10, t=50, b=10), yaxis_title="disagreement error ε_dis",
                      legend=dict(orientation="h", y=-0.3))
    return fig
