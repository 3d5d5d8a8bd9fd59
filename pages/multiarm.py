"""Several arms: an A/B/n test with one control and several treatments — which arm for whom,
what the rule is worth, the multi-armed Qini curve and calibration of the predicted uplift."""

import numpy as np
import streamlit as st

from core.evaluation import calibration_slope
from core.runs import multiarm_runs
from core.runs.export import safe_csv_bytes
from ui import common
from ui import multiarm_view as view

common.keep_dataset_in_url()
st.title("Several arms: which treatment for whom")
st.markdown("An experiment with a control arm and several treatments (e-mails, offers). One "
            "uplift model per treatment arm against control predicts what each arm adds for "
            "each customer; the **best-arm rule** gives each customer the arm with the "
            "largest predicted uplift above its cost, or nothing.")
c1, c2, c3 = st.columns([3, 3, 1])
source = c1.selectbox("Data", list(multiarm_runs.SOURCES), key="ma_source",
                      format_func=lambda s: multiarm_runs.SOURCES[s][0])
with common.guard("Loading the experiment"):
    data = view.data(source)
    model = c2.selectbox("Model", [m for m in multiarm_runs.MULTIARM_MODELS
                                   if data.outcome_kind == "binary" or "0/1" not in m],
                         key="ma_model")
    trees = c3.select_slider("Trees", [50, 100, 300], 100, key="ma_trees")
    arms = data.arm_table()
    srm = data.srm()
    st.dataframe(arms, width="stretch", key="ma_arms",
                 column_config={"share": st.column_config.NumberColumn(format="percent"),
                                "designed share": st.column_config.NumberColumn(
                                    format="percent"),
                                "rows": st.column_config.NumberColumn(format="localized")})
    (st.success if srm["p_value"] >= 0.001 else st.warning)(
        f"Arm split vs the design: χ² p = {srm['p_value']:.3f} over {len(data.arms)} arms "
        + ("(no sample ratio mismatch)." if srm["p_value"] >= 0.001 else
           "— a sample ratio mismatch: check the randomisation before trusting uplift."))
    st.caption(f"{data.n:,} customers; outcome {data.outcome_kind}. Models train on 70 % of "
               "the rows (stratified by arm) and are evaluated on the other 30 %.")

if st.button("Train", type="primary", key="ma_train"):
    with common.guard("Starting the training"):
        spec = multiarm_runs.multiarm_spec(source, model, trees=int(trees))
        st.session_state["ma_job"] = common.runner().submit_task(
            spec, session=common.session_id())
job = st.session_state.get("ma_job")
done = view.show_job(job) if job else None
if done is None:
    if job is None:
        st.info("Pick a model and press **Train** (runs in the background).")
    st.stop()
meta, frames = done
test = frames["test"]
names = meta["arms"]
st.subheader(f"{meta['model']} — test rows ({len(test):,}), fitted in "
             f"{meta['fit_seconds']:.1f} s")
st.plotly_chart(view.arm_curves(test, names), width="stretch", key="ma_curves")

st.subheader("Policies: value per customer on the test rows")
unit_cost = 0.02 if meta["outcome"] == "binary" else 0.5  # outcome units (visit / $)
default = meta["cost"] or [unit_cost] * (len(names) - 1)
cols = st.columns(len(names) - 1)
cost = np.array([cols[k].number_input(f"Cost of {arm} (outcome units)", 0.0, 1e6,
                                      float(default[k]),
                                      format="%.3f", key=f"ma_cost_{k}")
                 for k, arm in enumerate(names[1:])])
table = multiarm_runs.policy_table(test, names, meta["design"], cost)
st.dataframe(table.round(4), width="stretch", key="ma_policies")
st.caption("Value = mean outcome per customer if every customer got the policy's arm, "
           "estimated from the randomised test rows by inverse propensity (design shares), "
           "± one standard error. Net value subtracts the mean cost.")

if not cost.any():
    st.info("Set a cost for at least one arm to see the multi-armed Qini curve (gain against "
            "budget): with free arms the whole budget is 0.")
else:
    predicted, band, singles = view.qini(str(job), test, tuple(meta["design"]), tuple(cost))
    st.plotly_chart(view.qini_figure(predicted, band, singles, names), width="stretch",
                    key="ma_qini")
st.caption("Each customer may get one arm; customers and arms are added in order of predicted "
           "gain per unit of cost (Sverdrup et al. 2023). The blue line is that path scored "
           "on the test rows; the dotted lines give one arm to everyone.")

st.subheader("Calibration of the predicted uplift")
st.plotly_chart(view.calibration_figure(test, names), width="stretch", key="ma_calib")
y, t = test["y"].to_numpy(), test["t"].to_numpy()
slopes = []
for k, arm in enumerate(names[1:], start=1):
    rows = (t == k) | (t == 0)
    b, se = calibration_slope(y[rows], (t[rows] == k).astype(int), test[f"tau_{k}"][rows])
    slopes.append(f"{arm}: {b:.2f} ± {se:.2f}")
st.caption("Calibration slope (1 = predicted uplift matches the observed uplift; 0 = no "
           "signal): " + "; ".join(slopes) + ".")
st.download_button("Test rows with one score column per arm (CSV)",
                   lambda: safe_csv_bytes(test), "uprank_several_arms_scores.csv", "text/csv",
                   key="ma_dl", on_click="ignore")
