"""Streamlit side of the Interleaving page: submit a simulation to the app's job runner, draw
its progress, and read its stored result.  Settings, computation and storage live in
:mod:`core.runs.simulations`; the background work is the shared :class:`~core.runs.jobs.JobRunner`
(same worker processes, queue, progress, cancel and caching as training).  It also draws the
result tables with one set of number formats (:func:`show_table`) and the "users needed"
section (:func:`show_users_needed`); the pure pieces (:func:`styled`, :func:`need_table`,
:func:`ratio_text`, :func:`users_text`, :func:`misses`, :func:`biased_text`,
:func:`bias_display`) are tested without Streamlit."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from core.constants import DASH
from core.data.abdata import ABData
from core.interleaving import biased_methods, users_needed
from core.runs.export import safe_csv_bytes
from core.runs.simulations import (
    TABLE2_USERS,
    SimConfig,
    SimResult,
    load_simulation,
    paper_target,
    simulation_key,
    submit_simulation,
)
from core.runs.store import RunStore
from ui import common
from ui.glossary import GLOSSARY
from ui.interleaving_charts import BIASED_SUFFIX, bias_figure, false_judgment_figure
from ui.jobs import show_task

NA = DASH
"""Shown for a number that does not exist (not reached, undefined)."""
REFERENCE, HEADLINE = "CBI-IPS", "AB-total"
"""The paper's comparison: AB-total needs ~30× the users of CBI-IPS (Sato 2021, §4.2.2)."""

BIAS_COLUMNS = ["mean", "bias", "truth_in_ci", "ci_low", "ci_high", "sd", "se", "n_reps",
                "n_nan"]
"""Columns of the bias table on screen (the truth is a metric and a line in the chart)."""
_FORMATS = {"users_needed": "{:,.0f}", "ratio": "{:.1f}×", "share_tau_pos": "{:.2%}",
            "share_tau_neg": "{:.2%}"}
_LABELS = {  # column -> (label, help) on screen; the frames and CSV files keep the names
    "users": ("users", "Users in the world."),
    "n": ("items per list", "List length n: items each ranker shows a user."),
    "mean_y_treated": ("mean Yᵀ", "Average outcome of an item when it is recommended."),
    "mean_y_control": ("mean Yᶜ", "Average outcome of an item when it is not recommended."),
    "mean_tau": ("mean τ", "Average causal effect of recommending an item, τ = Yᵀ − Yᶜ."),
    "share_tau_pos": ("τ > 0", "Share of (user, item) pairs a recommendation helps."),
    "share_tau_neg": ("τ < 0", "Share of (user, item) pairs a recommendation hurts."),
    "mean": ("mean estimate", "Mean of the simulated estimates of τA − τB."),
    "sd": ("sd", "Standard deviation of one experiment's estimate."),
    "se": ("se", "Standard error of the mean estimate (sd ÷ √repetitions)."),
    "ci_low": ("95 % CI low", "Lower end of the 95 % confidence interval of the mean."),
    "ci_high": ("95 % CI high", "Upper end of the 95 % confidence interval of the mean."),
    "truth": ("true τA − τB", "The true difference of the two rankers' causal effects."),
    "bias": ("bias", "Mean estimate − true τA − τB."),
    "truth_in_ci": ("truth in 95 % CI", "Ticked: no bias detected (bold in the paper's Table 2). "
                    + GLOSSARY["Biased method"]),
    "n_reps": ("repetitions", "Simulated experiments at this user count."),
    "n_nan": ("undefined", "Repetitions whose estimate is undefined (left out of the mean)."),
    "users_needed": ("users needed", GLOSSARY["False judgment"]),
    "biased": ("biased", GLOSSARY["Biased method"]),
    "note": ("note", None),
}


def submit(config: SimConfig, data: ABData | None = None, scores: tuple | None = None) -> str:
    """Queue ``config`` for this session; returns the job id (a stored result: at once)."""
    return submit_simulation(common.runner(), config, data, scores,
                             session=common.session_id())


def is_stored(config: SimConfig, data: ABData | None = None) -> bool:
    """Whether ``config`` has run before on this server: its result is on disk."""
    return common.runner().store.has_result(simulation_key(config, data))


@st.cache_data(show_spinner=False, max_entries=16)
def result(root: str, key: str) -> SimResult | None:
    """A stored result, read once per (runs directory, key)."""
    return load_simulation(RunStore(root), key)


def show_job(job_id: str, *, current: bool = True) -> SimResult | None:
    """Progress and Cancel of a running job, or how it ended; its result once done
    (``current``: the job has the page's settings; :func:`ui.jobs.show_task`)."""
    root = str(common.runner().store.root)
    return show_task(common.runner(), job_id, common.session_id(), key="il_cancel",
                     what="Simulation", load=lambda key: result(root, key), current=current)


# ------------------------------------------------------------------------------ result tables
def formats(frame: pd.DataFrame) -> dict[str, str]:
    """Number format per column: counts with thousands separators, estimates with 4 decimals,
    shares as %, users needed as whole users, ratios with 1 decimal and ×."""
    out = {}
    for c in frame.columns:
        kind = frame[c].dtype.kind
        if c in _FORMATS:
            out[c] = _FORMATS[c]
        elif kind in "iu":
            out[c] = "{:,}"
        elif kind == "f":
            out[c] = "{:.4f}"
    return out


def styled(frame: pd.DataFrame) -> Styler:
    """``frame`` with :func:`formats` and ``—`` for every missing value."""
    return frame.style.format(na_rep=NA).format(formats(frame), na_rep=NA)


def show_table(frame: pd.DataFrame, key: str, labels: dict | None = None) -> None:
    """A result table with :func:`styled` numbers, readable column labels and tooltips."""
    names = {**_LABELS, **(labels or {})}
    config = {c: st.column_config.Column(names[c][0], help=names[c][1])
              for c in frame.columns if c in names}
    st.dataframe(styled(frame), width="stretch", key=key, placeholder=NA, column_config=config)


def users_text(need: pd.DataFrame, method: str, most: int) -> str:
    """Users ``method`` needs, as whole users; ``> most`` when the grid never reaches it."""
    row = need.loc[method]
    return f"{row['users_needed']:,.0f}" if row["reached"] else f"> {most:,}"


def ratio_text(need: pd.DataFrame, method: str, reference: str, most: int) -> str:
    """How many times the users of ``reference`` that ``method`` needs, e.g. ``"34.8×"``.

    ``need`` is ``core.interleaving.users_needed`` of a grid whose largest user count is
    ``most``.  When only ``reference`` reaches the target, ``method`` needs more than ``most``
    users: the answer is the bound ``"> most / need(reference)×"``.  A need that is already met
    at the smallest count is an upper bound, so the ratio gets ``≥`` or ``≤``; ``—`` when no
    ratio or bound exists.  A bound is rounded outwards (down for ``>`` and ``≥``, up for
    ``≤``), so the shown bound still holds: 2,000 / 379 = 5.28 reads "> 5.2×".
    """
    m, r = need.loc[method], need.loc[reference]
    if not r["reached"]:
        return NA
    if not m["reached"]:  # a lower bound, rounded down so that it stays one: > 5.2×, not 5.3×
        return f"> {math.floor(most / r['users_needed'] * 10) / 10:.1f}×"
    if m["at_grid_start"] and r["at_grid_start"]:
        return NA
    ratio = m["users_needed"] / r["users_needed"]
    if r["at_grid_start"]:  # the reference may need fewer: a lower bound, rounded down
        return f"≥ {math.floor(ratio * 10) / 10:.1f}×"
    if m["at_grid_start"]:  # an upper bound, rounded up
        return f"≤ {math.ceil(ratio * 10) / 10:.1f}×"
    return f"{ratio:.1f}×"


def misses(bias: pd.DataFrame, biased: Iterable[str], n_users: int) -> dict[str, float]:
    """How far each biased method's mean estimate is off the truth at ``n_users`` users, as a
    share of the truth: (mean − truth) / |truth| (``nan`` for a truth of 0); in the order of
    ``bias``."""
    rows = bias[(bias["n_users"] == n_users) & bias["method"].isin(set(biased))]
    return {str(m): (x - t) / abs(t) if t != 0 else float("nan")
            for m, x, t in zip(rows["method"], rows["mean"], rows["truth"])}


def _off(miss: float) -> str:
    return "misses the truth" if math.isnan(miss) else f"off by {miss:+.0%}"


def need_table(need: pd.DataFrame, biased: Mapping[str, float], *, least: int,
               most: int) -> pd.DataFrame:
    """The users-needed table as shown: ``users_needed``, ``ratio`` (if any), ``biased`` and
    a ``note`` in words (not reached within ``most`` users, reached at the smallest count
    ``least``, biased with its :func:`misses` share)."""
    out = need[[c for c in ("users_needed", "ratio") if c in need.columns]].copy()
    out["biased"] = [m in biased for m in need.index]
    notes = []
    for method, row in need.iterrows():
        parts = []
        if not row["reached"]:
            parts.append(f"not reached within {most:,} users")
        elif row["at_grid_start"]:
            parts.append(f"reached at the smallest count ({least:,} users): may need fewer")
        if method in biased:
            parts.append(f"biased: mean estimate {_off(biased[method])}")
        notes.append("; ".join(parts))
    out["note"] = notes
    return out


def biased_text(bias: pd.DataFrame, biased: Iterable[str], n_users: int) -> str:
    """The warning naming the biased methods, with their mean estimate against the truth;
    misses under 5 % of the truth are named as possibly chance."""
    rows = bias[bias["n_users"] == n_users].set_index("method")
    off = misses(bias, biased, n_users)
    truth = float(rows["truth"].iloc[0])
    names = "; ".join(f"**{m}** (mean {rows.loc[m, 'mean']:+.4f}, {_off(x)})"
                      for m, x in off.items())
    small = [m for m, x in off.items() if abs(x) < 0.05]
    chance = (f" A miss of a few per cent, as for {', '.join(small)}, is small: more "
              "repetitions would show whether it is real." if small else "")
    return (f"Biased in this world: {names}. Their mean estimates differ significantly from "
            f"the true τA − τB ({truth:+.4f}) at {n_users:,} users (t-test, Bonferroni-corrected "
            "over the methods). A biased method can look fast in the chart "
            f"while its estimate heads for a wrong answer: do not pick it for its speed.{chance}")


def bias_display(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The columns of :data:`BIAS_COLUMNS` that ``table`` (one user count's rows of the bias
    table) has, without the counts every method shares, and those counts said in words.

    The repetitions per method (``n_reps``) are the same for every method unless estimates
    were undefined, and undefined estimates (``n_nan``) are usually none: two columns of one
    repeated number cut the table at a laptop's width.  When every method has the same
    ``n_reps`` it is said instead (" (2,000 each)"); when no estimate is undefined, so is that
    (", every estimate defined").  A count that differs between methods stays a column.
    """
    shown = [c for c in BIAS_COLUMNS if c in table.columns]
    note, drop = "", []
    if "n_reps" in shown and len(table) and table["n_reps"].nunique() == 1:
        drop.append("n_reps")
        note += f" ({int(table['n_reps'].iloc[0]):,} each)"
    if "n_nan" in shown and len(table) and (table["n_nan"] == 0).all():
        drop.append("n_nan")
        note += ", every estimate defined"
    return table[[c for c in shown if c not in drop]], note


def show_bias(res: SimResult) -> None:
    """Table 2 at a chosen user count (default the paper's 1000, else the largest) and the
    chart of mean estimates with their 95 % intervals."""
    st.subheader("Bias (Table 2)", help=GLOSSARY["Biased method"])
    counts = sorted(res.bias["n_users"].unique())
    at = st.selectbox("Users per experiment", counts, counts.index(TABLE2_USERS)
                      if TABLE2_USERS in counts else len(counts) - 1, key="il_bias_n",
                      format_func="{:,}".format, help="Users per experiment of the table below.")
    table, counts_note = bias_display(res.bias[res.bias["n_users"] == at].set_index("method"))
    st.caption(f"At {at:,} users per experiment (the warning under *False judgments* reads "
               "the largest count): mean and 95 % CI of the estimates of τA − τB over the "
               f"repetitions{counts_note}. *truth in "
               "95 % CI* unticked (red in the chart): the truth is outside this method's own "
               "interval — which happens by chance to one unbiased method in twenty. The "
               "*(biased)* mark of the false-judgment chart uses a test corrected for the "
               "number of methods (Bonferroni). The paper's Table 2 sets the unbiased methods in "
               "bold; here they are the ones ticked in *truth in 95 % CI*.")
    show_table(table, "il_bias")
    st.plotly_chart(bias_figure(table.reset_index(), truth=res.truth,
                                title=f"Mean estimate and 95 % CI at {at:,} users"),
                    width="stretch",
                    config=common.plot_config("uprank_interleaving_bias"), key="il_bias_chart")


def show_users_needed(curve: pd.DataFrame, target: float,
                      biased: Mapping[str, float]) -> pd.DataFrame:
    """Headline ratio AB-total ÷ CBI-IPS, a caption and the table of users needed per method
    for a false-judgment rate of ``target``; returns ``users_needed`` of ``curve``.
    ``biased``: method -> :func:`misses` share."""
    methods = set(curve["method"])
    ref = REFERENCE if REFERENCE in methods else None
    need = users_needed(curve, target=target, relative_to=ref)
    least, most = int(curve["n_users"].min()), int(curve["n_users"].max())
    beyond = ""
    if ref is not None and HEADLINE in methods:
        ratio = ratio_text(need, HEADLINE, ref, most)
        c1, c2, c3 = st.columns([2, 1, 1])
        c1.metric(f"Users needed, {HEADLINE} ÷ {ref}", ratio,
                  help=f"How many times as many users {HEADLINE} needs as {ref} to bring its "
                       f"false-judgment rate down to {target:.1%}. The paper (Sato 2021) "
                       "reports about 30×. " + GLOSSARY["CBI-IPS"])
        for col, m in ((c2, HEADLINE), (c3, ref)):
            col.metric(f"{m}{BIASED_SUFFIX if m in biased else ''}", users_text(need, m, most),
                       help=f"Users {m} needs for a false-judgment rate of {target:.1%}.")
        if ratio.startswith(">"):
            beyond = (f" {HEADLINE} does not get there within {most:,} users, hence “{ratio}”: "
                      "add larger user counts or use AB-total's rate as the target.")
    times = (f" × {ref}: how many times the users of {ref} a method needs (the paper: ~30× "
             f"for AB-total)." if ref else f" Add {REFERENCE} to the methods to see how many "
             "times its users each method needs.")
    st.caption(f"Users each method needs for a false-judgment rate of {target:.1%}, "
               f"interpolated (log scale) between the simulated counts {least:,} … {most:,}; "
               f"— = not reached.{times}{beyond}")
    labels = {"ratio": (f"× {ref}", f"Users needed ÷ users {ref} needs. "
                        + GLOSSARY["CBI-IPS"])} if ref else {}
    show_table(need_table(need, biased, least=least, most=most), "il_need", labels)
    return need


def show_false_judgments(res: SimResult) -> pd.DataFrame:
    """Figure 1 and the users needed: the biased methods' warning, the target rate (chosen, or
    AB-total's rate at the largest user count as the paper reads it), the false-judgment
    chart with its downloads, and :func:`show_users_needed` at that target.

    Parameters
    ----------
    res : SimResult
        A finished simulation.

    Returns
    -------
    DataFrame
        ``core.interleaving.users_needed`` of ``res.curve`` at the target rate.
    """
    st.subheader("False judgments (Figure 1)", help=GLOSSARY["False judgment"])
    largest = int(res.bias["n_users"].max())
    biased = misses(res.bias, biased_methods(res.bias), largest)  # method -> share off
    if biased:
        st.warning(biased_text(res.bias, biased, largest), icon=":material/warning:")
    if res.truth == 0:
        st.warning("The two rankers have the same true effect: there is no wrong sign to judge.")
    t1, t2 = st.columns(2)
    target = t1.slider("Target false-judgment rate", 1, 25, 5, format="%d%%", key="il_target",
                       help=GLOSSARY["False judgment"]) / 100
    if (paper := paper_target(res.curve)) and t2.toggle(
            f"Use AB-total's rate at {paper[0]:,} users ({paper[1]:.1%})", key="il_paper_target",
            help="The paper's reading: the target is AB-total's rate at the largest user count, "
                 "where AB-total just gets there ('AB-total needs ~30× the users of CBI-IPS')."):
        target = paper[1]
    fig = false_judgment_figure(res.curve, target=target, biased=set(biased))
    st.caption("Share of simulated experiments that pick the worse ranker, ± 1.96 se. Dashed, "
               f"'(biased)': the mean estimate differs from the true τA − τB at {largest:,} users "
               "(the largest count simulated; t-test, Bonferroni-corrected over the methods).")
    st.plotly_chart(fig, width="stretch", key="il_curve_chart",
                    config=common.plot_config("uprank_interleaving_false_judgments"))
    st.subheader("Users needed", help=GLOSSARY["Interleaving"])
    need = show_users_needed(res.curve, target, biased)
    common.download_row(fig, res.curve, "uprank_interleaving_false_judgments", key="il_dl")
    return need


def download_tables(res: SimResult, need: pd.DataFrame) -> None:
    """CSV buttons for the bias table (every user count), users needed and the world."""
    row = st.container(horizontal=True)  # side by side, wrapped when the page is narrow
    for frame, stem, index in zip((res.bias, need, res.table1), ("bias", "users_needed", "world"),
                                  (False, True, True)):
        row.download_button(f"Download {stem.replace('_', ' ')} (CSV)",
                            safe_csv_bytes(frame, index=index), f"uprank_interleaving_{stem}.csv",
                            "text/csv", key=f"il_{stem}_csv", icon=":material/download:")
