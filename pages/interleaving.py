"""Interleaving: A/B tests against causal interleaving in simulated experiments (Sato 2021)."""

import streamlit as st

from core.interleaving import METHODS, PRESETS, RANKERS
from core.runs import simulations as sim
from ui import common
from ui import interleaving_view as view
from ui.glossary import GLOSSARY
from ui.jobs import interrupted_tasks

common.keep_dataset_in_url()  # also when this page's URL is the first a fresh server sees
st.title("Interleaving: online evaluation of causal effects")
st.markdown("Sato (2021): two rankers A and B are compared by τA − τB, the difference of their "
            "average causal effects. Simulated experiments estimate it with an A/B test (AB-total, "
            "AB-list) or an interleaved list (EPI-RCT, CBI-RCT, CBI-IPS): the paper's Table 2 "
            "(bias) and Figure 1 (false judgments against the number of users).")
interrupted_tasks(common.runner(), sim.TASK, key="il_dismiss_")  # lost in a restart
source = st.radio("World", [sim.PRESET, sim.DATASET], horizontal=True, key="il_source",
                  format_func={sim.PRESET: "Preset world",
                               sim.DATASET: "Built from the current dataset"}.get)
c1, c2, c3, c4 = st.columns(4)
n = c4.number_input("List length n", 1, 500, 10, key="il_n")
seed = c4.number_input("Seed", 0, 2**31 - 1, 0, key="il_seed")
data = scores = None
if source == sim.PRESET:
    name = c1.selectbox("Preset", list(PRESETS), key="il_preset")
    p, rankers = PRESETS[name], list(RANKERS)
    a = c2.selectbox("Ranker A", rankers, rankers.index(p.ranker_a), key=f"il_a_{name}")
    b = c3.selectbox("Ranker B", rankers, rankers.index(p.ranker_b), key=f"il_b_{name}")
    noise_a = c2.number_input("Noise of A (sd)", 0.0, 10.0, p.noise_a, 0.1, key=f"il_na_{name}")
    noise_b = c3.number_input("Noise of B (sd)", 0.0, 10.0, p.noise_b, 0.1, key=f"il_nb_{name}")
    st.caption(f"{p.n_users:,} users × {p.n_items:,} items. {p.description}")
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

methods = st.multiselect("Methods", METHODS, sim.DEFAULT_METHODS, format_func=sim.NAMES.get,
                         key="il_methods", help=" ".join(GLOSSARY[k] for k in (
                             "AB-total / AB-list", "Interleaving", "CBI-IPS")))
counts_text = st.text_input("User counts (users per experiment)", sim.PAPER_COUNTS_TEXT,
                            key="il_counts", help="Users in one simulated experiment; each "
                            "count is a point of the false-judgment curve. Default: the "
                            "paper's grid, 10 … 2,000.")
reps = st.columns(4)[0].number_input(
    "Repetitions", 10, 100_000, 2_000, 1_000, key="il_reps",
    help="Simulated experiments per user count: more repetitions, narrower intervals. 2,000 "
         "gives a first answer in seconds; the paper uses 10,000.")
config = None
with common.guard("Checking the settings"):
    config, dropped = sim.make_config(spec, methods, counts_text, reps, seed, data)
    if dropped:
        many = len(dropped) > 1
        st.info(f"The world has {spec.max_users(data):,} users: user count{'s' * many} "
                f"{', '.join(f'{c:,}' for c in dropped)} {'are' if many else 'is'} left out.")

job = st.session_state.get("il_job")  # (job id, its config)
# Run, or a new session (a reload, a link) whose settings ran before: their stored result
if st.button("Run simulation", type="primary", key="il_run", disabled=config is None) or (
        job is None and config is not None and view.is_stored(config, data)):
    with common.guard("Starting the simulation"):
        if job is not None and job[1] != config:
            common.runner().cancel(job[0], session=common.session_id())
        job = st.session_state["il_job"] = (view.submit(config, data, scores), config)
if job is not None and (done := view.show_job(job[0], current=job[1] == config)):
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
view.show_table(res.table1, "il_table1")

view.show_bias(res)

need = view.show_false_judgments(res)
view.download_tables(res, need)
