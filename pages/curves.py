"""Curves: Qini / uplift curves of any score column under each definition, with AUUC."""

import streamlit as st

from core.constants import CUTOFFS
from core.evaluation.curve_tables import (
    BASELINES,
    PERFECT,
    RANDOM,
    auuc_summary,
    curves_frame,
    thin_frame,
)
from core.evaluation.curves import DEFINITIONS
from core.runs.export import safe_csv_bytes
from ui import common
from ui.charts import curve_figure


@st.cache_data(show_spinner="Computing curves…", max_entries=64)
def compute(_data, fingerprint: str, rankers: tuple, definition: str, ties: str,
            baselines: tuple, cutoff: float):
    scores = {name: common.score_values(_data, name) for name in rankers}
    frame = curves_frame(_data.y, _data.t, scores, definition=definition, ties=ties,
                         baselines=baselines)
    cuts = tuple(sorted(set(CUTOFFS) | {cutoff}))
    table = auuc_summary(_data.y, _data.t, scores, definition=definition, cutoffs=cuts,
                         ties=ties, baselines=baselines)
    return frame, table


st.title("Uplift curves")
data = common.current_data()
common.dataset_caption(data)

options = common.score_names(data)
left, right = st.columns([2, 1])
rankers = left.multiselect("Rankers (score columns, higher = target first)", options,
                           default=options[:1], key="curves_rankers")
definition = right.selectbox("Curve definition", list(DEFINITIONS), key="curves_definition",
                             help="The six definitions of Devriendt et al. (2020), Table 2.")
d = DEFINITIONS[definition]
right.latex(d.formula)
right.caption(f"{d.setting.capitalize()} ranking · {d.units} units — {d.summary}")

c1, c2, c3, c4 = st.columns(4)
show_random = c1.toggle("Random targeting", value=True, key="curves_random")
show_perfect = c1.toggle("Perfect (oracle)", value=False, key="curves_perfect")
x_axis = c2.radio("x-axis", ["fraction", "targeted"], key="curves_x",
                  format_func={"fraction": "fraction targeted", "targeted": "rows targeted"}.get)
ties = c3.radio("Tied scores", ["average", "stable"], key="curves_ties",
                help="average: expected curve over every order of tied rows (default). "
                     "stable: tied rows keep their row order.")
cutoff = c4.slider("Top-k cut-off", 1, 100, 30, format="%d%%", key="curves_cutoff") / 100

baselines = tuple(b for b, on in zip(BASELINES, (show_random, show_perfect)) if on)
if not rankers and not baselines:
    st.info("Pick at least one ranker or baseline to draw.")
    st.stop()

with common.guard("Computing the curves"):
    frame, table = compute(data, data.fingerprint(), tuple(rankers), definition, ties,
                           baselines, cutoff)
    fig = curve_figure(thin_frame(frame, 2000), definition=definition, x=x_axis, cutoff=cutoff)
    st.plotly_chart(fig, width="stretch", config=common.plot_config(f"uprank_{definition}"),
                    key="curves_chart")

    st.subheader("Area under the curve")
    st.caption("Mean convention of the paper: separate = (1/100)·Σ V(p), joint = (1/n)·Σ V(k), "
               "summed up to the cut-off with the same divisor. "
               f"Random = straight line to V(1); {PERFECT} ranks TR first and CR last.")
    shown = table.copy()
    if RANDOM in shown.index and len(shown) > 1:
        above = shown[f"AUUC@{cutoff:.0%}"] - shown.loc[RANDOM, f"AUUC@{cutoff:.0%}"]
        shown[f"above random @{cutoff:.0%}"] = above
    st.dataframe(shown.style.format("{:.5f}"), width="stretch", key="curves_table")
    common.download_row(fig, frame, f"uprank_curves_{definition}", key="curves_dl")
    st.download_button("Download AUUC table (CSV)", safe_csv_bytes(table, index=True),
                       f"uprank_auuc_{definition}.csv", "text/csv", key="curves_auuc_csv")
