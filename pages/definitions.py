"""Definitions: which curve definitions swing with the treatment/control split (paper §4.2)."""

import pandas as pd
import streamlit as st

from core.data.datasets import make_paper_simulation
from core.evaluation.curve_tables import compare_scenarios
from core.evaluation.curves import DEFINITIONS
from core.runs.export import safe_csv_bytes
from ui import common
from ui.charts import definitions_grid
from ui.glossary import GLOSSARY

SCENARIOS = {"balanced": "|T| = |C|", "more_treated": "|T| = 9|C|", "more_control": "|C| = 9|T|"}


@st.cache_data(show_spinner="Simulating the three scenarios…", max_entries=16)
def simulate(n: int, seed: int, ties: str):
    cases = {}
    for scenario, label in SCENARIOS.items():
        sim = make_paper_simulation(n, scenario=scenario, random_state=seed)
        cases[label] = (sim.y, sim.t, sim.scores["simulated score"])
    return compare_scenarios(cases, ties=ties)


common.keep_dataset_in_url()  # also when this page's URL is the first a fresh server sees
st.title("Curve definitions under different arm splits")
st.markdown(
    "The simulation of Devriendt et al. (2020, §4.2): treated response rate 7 %, control 5 %; "
    "TR and CNR rows get a uniform score in [0.2, 1.0], TNR and CR in [0.0, 0.8] — the same "
    "kind of ranking in three worlds that differ **only** in how many rows are treated. "
    "A definition whose curve and AUUC move between the panels' lines measures the split, "
    "not the ranking."
)
c1, c2, c3 = st.columns(3)
n = c1.number_input("Rows per scenario", 1_000, 500_000, 20_000, step=1_000, key="defs_n",
                    help="Customers simulated in each of the three worlds.")
seed = c2.number_input("Random seed", 0, 2**31 - 1, 0, key="defs_seed",
                       help="Fixes the simulated customers; another seed draws new ones.")
ties = c3.radio("Tied scores", ["average", "stable"], horizontal=True, key="defs_ties",
                help="Rows with the same score. average: the expected curve over every order "
                     "of tied rows (default). stable: tied rows keep their row order.")

with common.guard("The simulation"):
    frames, table = simulate(int(n), int(seed), ties)
    fig = definitions_grid(frames)
    st.plotly_chart(fig, width="stretch", config=common.plot_config("uprank_definitions"),
                    key="defs_chart")
    st.caption(f"{int(n):,} rows per scenario. |T| = 9|C|: nine treated rows per control row "
               "(|C| = 9|T| the reverse). Dashed lines: random targeting in the same world. "
               "Each panel's y-axis is in its definition's unit; the joint absolute uplift "
               "curve multiplies the top's rate difference by the rows targeted, so where one "
               "arm is small it can exceed the responders there are (its early spike).")
    st.subheader("AUUC@100 % per scenario", help=GLOSSARY["AUUC"])
    st.caption("swing = (max − min) / mean |AUUC| across the three scenarios. Absolute "
               "definitions scale with the arm sizes; the separate relative one moves least "
               "(the joint one ranks both arms together, so the split changes who is in the "
               "top) — paper Figs. 2–3.",
               help=GLOSSARY["Absolute / relative"])
    rel = [d.label for d in map(DEFINITIONS.get, table.index) if d.units == "relative"]
    cases = list(SCENARIOS.values())
    shown = table.rename(index=lambda name: DEFINITIONS[name].label).assign(
        unit=[DEFINITIONS[name].unit for name in table.index])
    st.dataframe(shown.style.format(precision=1, thousands=",", na_rep="—", subset=cases)
                 .format(precision=5, na_rep="—", subset=(rel, cases))
                 .format("{:.1%}", na_rep="—", subset=["swing"]),
                 width="stretch", key="defs_table", placeholder="—")
    points = pd.concat(frames, names=["definition"]).reset_index(0)
    common.download_row(fig, points, "uprank_definitions", key="defs_dl")
    st.download_button("Download AUUC table (CSV)", safe_csv_bytes(table, index=True),
                       "uprank_definitions_auuc.csv", "text/csv", key="defs_auuc_csv")
