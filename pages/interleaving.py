"""Interleaving: A/B tests against causal interleaving in simulated experiments (Sato 2021)."""

import streamlit as st

from core.interleaving import METHODS, PRESETS, RANKERS, users_needed
from core.runs import simulations as sim
from core.runs.export import safe_csv_bytes
from ui import common
from ui import interleaving_view as view
from ui.interleaving_charts import bias_figure, false_judgment_figure

st.title("Interleaving: online evaluation of causal effects")
st.markdown("Sato (2021): two rankers A and B are compared by τA − τB, the difference of their "
            "average causal effects. Simulated experiments estimate it with an A/B test (AB-total, "
            "AB-list) or an interleaved list (EPI-RCT, CBI-RCT, CBI-IPS): the paper's Table 2 "
            "(bias) and Figure 1 (false judgments against the number of users).")
source = st.radio("World", [sim.PRESET, sim.DATASET], horizontal=True, key="il_source",
                  format_func={sim.PRESET: "Preset world",
                               sim.DATASET: "Built from the current dataset"}.get)
c1, c2, c3, c4 = st.columns(4)
n = c4.number_input("List length n", 1, 500, 10, key="il_n")
seed = c4.number_input("Random seed", 0, 2**31 - 1, 0, key="il_seed")
data = scores = None
if source == sim.PRESET:
    name = c1.selectbox("Preset", list(PRESETS), key="il_preset")
    p, rankers = PRESETS[name], list(RANKERS)
    a = c2.selectbox("Ranker A", rankers, rankers.index(p.ranker_a), key=f"il_a_{name}")
    b = c3.selectbox("Ranker B", rankers, rankers.index(p.ranker_b), key=f"il_b_{name}")
    noise_a = c2.number_input("Noise of A (sd)", 0.0, 10.0, p.noise_a, 0.1, key=f"il_na_{name}")
    noise_b = c3.number_input("Noise of B (sd)", 0.0, 10.0, p.noise_b, 0.1, key=f"il_nb_{name}")
    c1.caption(f"{p.n_users:,} users × {p.n_items:,} items. {p.description}")
    spec = sim.WorldSpec(sim.PRESET, name, a, b, int(n), float(noise_a), float(noise_b),
                          seed=int(seed))
else:
    data = common.current_data()
    runs = common.trained_runs(data)
    names = [*common.score_names(data), *runs]
    a = c1.selectbox("Ranker A (score column)", names, 0, key="il_ds_a")
    b = c2.selectbox("Ranker B (score column)", names, len(names) - 1, key="il_ds_b")
    pool = c3.number_input("Customers per pool", 2, 100_000, 20, key="il_pool")
    common.dataset_caption(data)
    st.caption("Outcome models fitted on the treated and on the control rows give every customer "
               "both potential outcomes; customers are dealt into pools (the *users*) and each "
               "ranker contacts the top n of a pool. Any score column works as a ranker: the "
               "data's scores, numeric columns, a random ranker, or a model trained on the "
               "Train page (then the world is built from that run's test rows).")
    scores = None
    with common.guard("Choosing the rankers"):
        data, scores = common.rankers_on_rows(data, (a, b), runs)
    if scores is None:
        st.stop()
    spec = sim.WorldSpec(sim.DATASET, data.fingerprint(), a, b, int(n), pool_size=int(pool),
                          scores_digest=sim.scores_digest(*scores), seed=int(seed))

d1, d2, d3 = st.columns([2, 2, 1])
methods = d1.multiselect("Methods", METHODS, sim.DEFAULT_METHODS, format_func=sim.NAMES.get,
                         key="il_methods")
counts_text = d2.text_input("User counts (users per experiment)", sim.PAPER_COUNTS_TEXT,
                            key="il_counts", help="Default: the paper's grid, 10 … 2000.")
reps = d3.number_input("Repetitions", 10, 100_000, 2_000, 1_000, key="il_reps",
                       help="2,000 gives a first answer in seconds; the paper uses 10,000.")
config = None
with common.guard("Checking the settings"):
    config, dropped = sim.make_config(spec, methods, counts_text, reps, seed, data)
    if dropped:
        st.info(f"The world has {spec.max_users(data):,} users: user counts "
                f"{', '.join(map(str, dropped))} are left out.")

job = st.session_state.get("il_job")  # (job id, its config)
if st.button("Run simulation", type="primary", key="il_run", disabled=config is None):
    with common.guard("Starting the simulation"):
        if job is not None and job[1] != config:
            common.runner().cancel(job[0], session=common.session_id())
        job = st.session_state["il_job"] = (view.submit(config, data, scores), config)
if job is not None and (done := view.show_job(job[0])):
    st.session_state["il_last"] = (job[1], done)
if "il_last" not in st.session_state:
    st.info("Choose the settings and press **Run simulation**.")
    st.stop()
cfg, res = st.session_state["il_last"]
if cfg != config:
    st.caption(":material/history: Results of the last run; the settings have changed since.")
for col, (label, value) in zip(st.columns(4), [
        ("True τA − τB", f"{res.truth:+.4f}"), ("Users in the world", f"{res.users:,}"),
        ("Repetitions", f"{cfg.n_reps:,}"), ("Run time", f"{res.seconds:.1f} s")]):
    col.metric(label, value)

st.subheader("World (Table 1)")
st.caption("Realised outcomes: all items, and the items on each ranker's lists (mean τ of a "
           "list is its causal effect; mean Yᵀ is what accuracy metrics and AB-list see).")
st.dataframe(res.table1.style.format(precision=4), width="stretch", key="il_table1")

st.subheader("Bias (Table 2)")
counts = sorted(res.bias["n_users"].unique())
at = st.selectbox("At users", counts, counts.index(sim.TABLE2_USERS)
                  if sim.TABLE2_USERS in counts else len(counts) - 1, key="il_bias_n")
table = res.bias[res.bias["n_users"] == at].drop(columns="n_users").set_index("method")
st.caption("Mean, sd and 95 % CI of the estimates of τA − τB; `truth_in_ci`: the paper's bold.")
st.dataframe(table.style.format(precision=4), width="stretch", key="il_bias")
st.plotly_chart(bias_figure(table.reset_index(), truth=res.truth), width="stretch",
                config=common.plot_config("uprank_interleaving_bias"), key="il_bias_chart")

st.subheader("False judgments (Figure 1)")
if res.truth == 0:
    st.warning("The two rankers have the same true effect: there is no wrong sign to judge.")
t1, t2 = st.columns([3, 2])
target = t1.slider("Target false-judgment rate", 1, 25, 5, format="%d%%", key="il_target") / 100
if (paper := sim.paper_target(res.curve)) and t2.toggle(
        f"Paper's reading: AB-total's rate at {paper[0]:,} users ({paper[1]:.1%})",
        key="il_paper_target"):
    target = paper[1]
fig = false_judgment_figure(res.curve, target=target)
st.plotly_chart(fig, width="stretch", key="il_curve_chart",
                config=common.plot_config("uprank_interleaving_false_judgments"))
st.subheader("Users needed")
ref = "CBI-IPS" if "CBI-IPS" in set(res.curve["method"]) else None
need = users_needed(res.curve, target=target, relative_to=ref)
ratio = f"; ratio to {ref} (the paper: ~30× for AB-total)" if ref else ""
st.caption(f"Users for a false-judgment rate of {target:.1%}, log-interpolated in the grid "
           f"(— = not reached){ratio}.")
st.dataframe(need.style.format(precision=2, na_rep="—"), width="stretch", key="il_need")
common.download_row(fig, res.curve, "uprank_interleaving_false_judgments", key="il_dl")
e1, e2, e3 = st.columns(3)
for col, frame, stem, index in ((e1, res.bias, "bias", False), (e2, need, "users_needed", True),
                                (e3, res.table1, "world", True)):
    col.download_button(f"Download {stem.replace('_', ' ')} (CSV)",
                        safe_csv_bytes(frame, index=index), f"uprank_interleaving_{stem}.csv",
                        "text/csv", key=f"il_{stem}_csv", icon=":material/download:")
