"""Curves: Qini / uplift curves of any score column under each definition, with AUUC."""

import streamlit as st

from core.constants import CUTOFFS, auuc_column
from core.evaluation.curve_tables import (
    BASELINES,
    PERFECT,
    RANDOM,
    RankerCurves,
    thin_frame,
)
from core.evaluation.curves import DEFINITIONS
from core.runs.export import safe_csv_bytes
from core.runs.views import auuc_decimals
from ui import common
from ui.charts import curve_figure, label_width
from ui.glossary import GLOSSARY

#: curve points kept per ranker for the download (every point up to this many rows; evenly
#: spaced beyond, so a 14M-row joint curve is a 100,000-line file, not 14 million)
KEPT_POINTS = 100_000


@st.cache_data(show_spinner="Computing curves…", max_entries=64)
def compute(_data, fingerprint: tuple, rankers: tuple, definition: str, ties: str,
            baselines: tuple, cutoff: float):
    scores = {name: common.score_values(_data, name) for name in rankers}
    curves = RankerCurves(_data.y, _data.t, scores, ties=ties, baselines=baselines)
    cuts = tuple(sorted(set(CUTOFFS) | {cutoff}))
    return (curves.frame(definition, max_points=KEPT_POINTS),
            curves.auuc(definition, cutoffs=cuts))


st.title("Uplift curves")
data = common.current_data()
common.dataset_caption(data)

options = common.score_names(data)
common.remember("curves_rankers", options[:1], options=options)
rankers = st.multiselect("Rankers (score columns, higher = target first)", options,
                         key="curves_rankers", help=GLOSSARY["Ranker"])
st.caption("Columns of the dataset (a feature such as recency, or a score column in your "
           "file) ranked over every row. Trained models are scored on their test rows: "
           "compare them on the Compare page.")
common.remember("curves_definition", "uplift_sep_rel", shared=common.SHARED_DEFINITION,
                options=list(DEFINITIONS))
definition = st.selectbox("Curve definition", list(DEFINITIONS), key="curves_definition",
                          format_func=lambda name: DEFINITIONS[name].label,
                          help=GLOSSARY["Definition"])
d = DEFINITIONS[definition]
# a row of its own: the widest formula (Qini, joint) does not fit a third of the page
formula, words = st.columns([3, 2], vertical_alignment="center")
formula.latex(d.formula)
unit = ("share of each arm (0.01 = one percentage point of extra response)"
        if d.units == "relative" else d.unit)
words.caption(f"{d.setting.capitalize()} ranking · {d.units} units (curve in {unit}) — "
              f"{d.summary}")

c1, c2, c3, c4 = st.columns(4)
show_random = c1.toggle("Random targeting", value=True, key="curves_random",
                        help=GLOSSARY["Random / Perfect"])
show_perfect = c1.toggle("Perfect (oracle)", value=False, key="curves_perfect",
                         help=GLOSSARY["Random / Perfect"])
x_axis = c2.radio("x-axis", ["fraction", "targeted"], key="curves_x",
                  format_func={"fraction": "share targeted (%)",
                               "targeted": "rows targeted (count)"}.get)
ties = c3.radio("Tied scores", ["average", "stable"], key="curves_ties",
                help="Rows with the same score. average: the expected curve over every order "
                     "of tied rows (default). stable: tied rows keep their row order.")
common.remember("curves_cutoff", 30, shared=common.SHARED_CUTOFF)
cutoff = c4.slider("Cut-off (share targeted)", 1, 100, format="%d%%", key="curves_cutoff",
                   help=GLOSSARY["Cut-off"]) / 100

baselines = tuple(b for b, on in zip(BASELINES, (show_random, show_perfect)) if on)
if not rankers and not baselines:
    st.info("Pick at least one ranker or baseline to draw.")
    st.stop()

with common.guard("Computing the curves"):
    # the carried scores are not in the data's fingerprint: a file whose score column was
    # rescored (same rows) showed the old file's curve from the cache
    frame, table = compute(data, (data.fingerprint(), data.scores_fingerprint()),
                           tuple(rankers), definition, ties, baselines, cutoff)
    fig = curve_figure(thin_frame(frame, 2000), definition=definition, x=x_axis, cutoff=cutoff)
    st.plotly_chart(fig, width="stretch", config=common.plot_config(f"uprank_{definition}"),
                    key="curves_chart")

    st.subheader("Area under the curve", help=GLOSSARY["AUUC"])
    st.caption(f"AUUC@x % = the area under the curve from 0 to x % targeted (its average "
               f"height there times x), in {unit}; "
               "higher is better, compare it with Random targeting. The mean convention of "
               "Devriendt et al. (2020): "
               "separate = (1/100)·Σ V(p), joint = (1/n)·Σ V(k), summed up to the cut-off. "
               f"{PERFECT} ranks treated responders first and control responders last. "
               "Where the top holds no treated or no control row, that arm's part of the "
               "curve is 0 (as in the paper); — = undefined for the whole data (no treated "
               "rows, no control rows or no responders).")
    shown = table.copy()
    if RANDOM in shown.index and len(shown) > 1:
        column = auuc_column(cutoff)
        above = shown[column] - shown.loc[RANDOM, column]
        shown[f"above random @{cutoff:.0%}"] = above.drop(RANDOM)  # "—" on Random's own row
    # shares of an arm (≈ 0.01: 5 decimals) or responders (≈ 1,000: 1), and two significant
    # digits of the smallest value (a rare outcome's AUUC@10 % is ~1e-5)
    digits = auuc_decimals(shown.to_numpy(dtype=float).ravel(),
                           least=5 if d.units == "relative" else 1)
    st.dataframe(shown.style.format(precision=digits, thousands=",", na_rep="—"),
                 width="stretch", key="curves_table", placeholder="—",
                 column_config={"_index": st.column_config.Column(
                     width=label_width(shown.index))})
    common.download_row(fig, frame, f"uprank_curves_{definition}", key="curves_dl")
    if d.setting == "joint" and data.n + 1 > KEPT_POINTS:
        st.caption(f"The points file keeps {KEPT_POINTS:,} evenly spaced points of each "
                   f"curve's {data.n + 1:,}; the AUUCs above use every point.")
    st.download_button("Download AUUC table (CSV)", safe_csv_bytes(shown, index=True),
                       f"uprank_auuc_{definition}.csv", "text/csv", key="curves_auuc_csv")
