"""The Data page's sections: the three ways to pick a dataset (benchmark, uploaded CSV, large
file by path) and the report on the current one (counts and rates, SRM test, covariate
balance).  Readers and checks: :mod:`core.data`, :mod:`core.data.hygiene`; several arms:
:func:`ui.multiarm_view.data_section`."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import data as datasets
from core.data import ABData, hygiene
from core.runs.takeaway import resolving_digits
from core.runs.views import fmt_number
from ui import common
from ui.glossary import GLOSSARY


def benchmark_tab() -> None:
    """Pick a benchmark dataset and its options; the button loads it as the current dataset."""
    key = st.selectbox("Dataset", list(datasets.DATASETS), key="data_key",
                       format_func=lambda k: datasets.DATASETS[k].label)
    spec = datasets.DATASETS[key]
    st.caption(spec.description)
    cols = st.columns(max(1, len(spec.options)))
    options = tuple(
        (name, col.selectbox(datasets.OPTION_NAMES.get(name, name.replace("_", " ")), values,
                             key=f"data_{key}_{name}", format_func=lambda v: (
                                 datasets.OPTION_LABELS.get(v, common.thousands(v)))))
        for col, (name, values) in zip(cols, spec.options.items()))
    if st.button("Use this dataset", type="primary", key="data_load"):
        with common.guard("Loading the dataset"):
            common.set_data(common.load_benchmark(key, options), source=(key, options))


def upload_tab() -> None:
    """A sample CSV to download, the uploader with the column mapping of an uploaded file
    (:func:`upload_mapping`), and the earlier uploads kept on this computer to reopen."""
    st.download_button("Download a sample CSV (the uplift world)", key="data_sample",
                       data=common.sample_csv(),
                       file_name="uprank_sample_ab_test.csv", mime="text/csv")
    upload = st.file_uploader("A/B test as CSV (comma, semicolon or tab separated)",
                              type=["csv", "txt", "tsv"], key="data_upload")
    if upload is not None:
        with common.guard("Reading the CSV"):
            upload_mapping(common.Upload(upload.file_id, upload.name, upload.getvalue()))
    if stored := {u.fingerprint: u for u in datasets.list_uploads()}:
        c5, c6 = st.columns([3, 1], vertical_alignment="bottom")
        earlier = c5.selectbox("Earlier uploads (kept on this computer)", list(stored),
                               key="data_stored", format_func=lambda fp: (
                                   f"{stored[fp].name} · {stored[fp].size:,} bytes · {fp[:8]}"))
        if c6.button("Reopen", key="data_reopen"):
            with common.guard("Reopening the upload"):
                common.set_data(common.load_stored_upload(earlier))


def upload_mapping(upload: common.Upload) -> None:
    """Ask how to read an uploaded CSV (treatment and outcome columns, outcome kind and
    response value, the arms to keep and which is control), show its first rows, and use it
    once every question is answered; raises ``DataError`` for a file or a column that cannot
    be read as one."""
    head = common.upload_head(upload)
    columns = list(head.columns)
    t_at, y_at = common.default_columns(columns)
    c1, c2 = st.columns(2)
    treatment = c1.selectbox("Treatment column", columns, key="data_treatment",
                             index=t_at, placeholder="Pick the treatment column")
    outcome = c2.selectbox("Outcome column", columns, key="data_outcome", index=y_at,
                           placeholder="Pick the outcome column")
    if note := common.unpicked_columns_note(treatment, outcome):
        st.info(note, icon=":material/touch_app:")
        return
    codes, strays = common.treatment_facts(upload, treatment)  # DataError: not one
    mapping = {"treatment": treatment, "outcome": outcome}
    guessed, words, odd_outcome = common.outcome_facts(upload, outcome)
    c3, c4 = st.columns(2)
    kind = c3.radio("The outcome is", datasets.OUTCOME_KINDS, horizontal=True,
                    index=datasets.OUTCOME_KINDS.index(guessed),
                    key=f"data_kind_{outcome}", help=GLOSSARY["Outcome kind"],
                    format_func={"binary": "binary (0/1: visit, conversion)",
                                 "continuous": "an amount (spend, minutes)"}.get)
    c4.caption(f"Detected: **{guessed}** from the values of '{outcome}'. Change it if "
               "that is wrong; a continuous outcome keeps its amounts for the "
               "several-arms models.")
    if odd_outcome and kind == "continuous":  # 0/1 but for 2 in 5 rows: said, not read
        st.warning(odd_outcome, icon=":material/help:")  # silently as an amount
    labels = words if kind == "binary" else None
    if labels:  # bought / none: which one is a response?
        mapping["outcome_value"] = st.selectbox(
            f"Which value of '{outcome}' is a response (counted as 1)?", labels,
            index=None, key=f"data_yv_{outcome}", placeholder="Pick the response")
    if strays:
        st.warning(datasets.stray_note(treatment, codes, strays),
                   icon=":material/help:")
    all_arms = len(codes) > 2 and st.radio(
        f"'{treatment}' has {len(codes)} arms", ["all", "two"], horizontal=True,
        key=f"data_arms_{treatment}", index=1 if strays else 0, format_func={
            "all": "keep all arms (which arm for whom)",
            "two": "compare two arms (other rows are dropped)"}.get) == "all"
    if kind == "continuous" or all_arms:  # (a two-arm binary outcome is read as 0/1 anyway)
        mapping["outcome_kind"] = kind
    if all_arms or (kind == "continuous" and len(codes) == 2):
        mapping["all_arms"] = True
        # two codes as in the two-arm case (0 / 1, A / B); of several the one that reads as
        # control — none, or several: ask
        at = datasets.two_arm_defaults(codes)[1] if len(codes) == 2 else None
        control = codes[at] if at is not None else datasets.guess_control(codes)
        mapping["control_value"] = st.selectbox(
            "Control arm", codes, key="data_cv_all",
            index=None if control is None else codes.index(control),
            placeholder="Which code is the control arm?")
    elif len(codes) > 2:  # two of several arms
        treated, control = datasets.two_arm_defaults(codes)
        c5, c6 = st.columns(2)
        mapping["treatment_value"] = c5.selectbox("Treated arm", codes, key="data_tv",
                                                  index=treated)
        mapping["control_value"] = c6.selectbox("Control arm", codes, key="data_cv",
                                                index=control,
                                                placeholder="Which code is the control arm?")
    elif not datasets.arms_readable(codes):  # two codes that say nothing: A / B, red / blue
        _, control = datasets.two_arm_defaults(codes)
        c5, c6 = st.columns(2)
        mapping["control_value"] = c5.selectbox(
            "Control arm", codes, key="data_cv", index=control,
            placeholder="Which code is the control arm?",
            help="The arm without the change being tested. 'A' beside 'B' is preselected "
                 "(the A/B convention); check it, as it sets the effect's sign.")
        if mapping["control_value"] is not None:
            mapping["treatment_value"] = next(c for c in codes
                                              if c != mapping["control_value"])
            c6.markdown(f"Treated arm: **{mapping['treatment_value']}** (the other code)")
    # numbered as the messages number them ("data row 1" = the first under the header)
    st.dataframe(head.set_axis(range(1, len(head) + 1)).rename_axis("data row"),
                 height=180, key="data_peek")
    asked = [what for key, what in (("control_value", "the control arm"),
                                    ("outcome_value", "the outcome's response"))
             if key in mapping and mapping[key] is None]
    unset = bool(asked)
    if unset:
        st.info(f"Pick {' and '.join(asked)} above to use this file.")
    if st.button("Use this CSV", type="primary", key="data_use_csv", disabled=unset):
        common.use_upload(upload, tuple(sorted(mapping.items())))


def file_tab() -> None:
    """A Parquet or CSV file on this computer, read in place: its path (or a demo file made
    on request), its treatment and outcome columns, a summary from a Parquet file's metadata,
    and the button that uses it."""
    st.caption("For millions of rows (Criteo has 14 million): give the path of a Parquet or CSV "
               "file on this computer or a mounted drive. Nothing is uploaded or copied; only "
               "the columns needed are read, in batches, with features as float32. Treatment "
               "and outcome must be coded 0/1.")
    if st.button("Create a 1M-row Criteo-like Parquet file to try this", key="data_file_demo"):
        with common.guard("Writing the test file"):
            st.session_state["data_file_path"] = str(common.demo_parquet())
    opened = common.current_choice().file  # the file in use (also after a reload): shown
    common.remember("data_file_path", opened[0] if opened else "")
    path = datasets.typed_path(st.text_input(  # pasted quotes and ~ taken off
        "Path of a Parquet or CSV file", key="data_file_path",
        placeholder="/data/criteo-uplift-v2.1.parquet"))
    if path:
        with common.guard("Reading the file"):
            columns = common.file_columns(path)
            t_at, y_at = common.default_columns(columns)
            if opened and opened[0] == path and {opened[1], opened[2]} <= set(columns):
                t_at, y_at = columns.index(opened[1]), columns.index(opened[2])
            c1, c2 = st.columns(2)
            treatment = c1.selectbox("Treatment column (0/1)", columns, key="data_file_t",
                                     index=t_at, placeholder="Pick the treatment column")
            outcome = c2.selectbox("Outcome column (0/1)", columns, key="data_file_y",
                                   index=y_at, placeholder="Pick the outcome column")
            if note := common.unpicked_columns_note(treatment, outcome):
                st.info(note, icon=":material/touch_app:")
                return
            if path.lower().endswith((".parquet", ".pq")):
                info = common.file_summary(path, treatment, outcome)
                m = [*st.columns(3), *st.columns(2)]  # wide enough for 14,000,000
                common.count_metric(m[0], "Rows", info["rows"])
                m[1].metric("Columns", f"{len(info['columns']):,}")
                m[2].metric("Size on disk", common.size_text(info["bytes"]))
                m[3].metric("Treated share", f"{info['treated share']:.1%}")
                m[4].metric("Effect (ATE)", common.points_text(
                    info["outcome treated"] - info["outcome control"]),
                    help="Outcome rate of the treated minus that of the control rows, in "
                         "percentage points.")
                st.caption("Read from the file's metadata and its two arm / outcome columns "
                           "only; the features are read when you use the file.")
            else:
                st.caption("A CSV is summarised once it is used (its rows must be parsed "
                           "first); a Parquet file is summarised from its metadata at once.")
            if st.button("Use this file", type="primary", key="data_file_use"):
                common.set_data(common.load_file(path, treatment, outcome),
                                file=(path, treatment, outcome))


def dataset_summary(data: ABData) -> None:
    """The current dataset's name, its row counts, response rates and average effect, its
    description, and the warnings of its loader and of small cells."""
    st.subheader(f"Current dataset: {data.name}")
    rate_t, rate_c, few = common.arm_summary(data)
    m = [*st.columns(3), *st.columns(3)]  # two rows: six in one cut "1,000,000" to "1,000…"
    common.count_metric(m[0], "Rows", data.n)
    common.count_metric(m[1], "Treated", data.n_treated)
    common.count_metric(m[2], "Control", data.n_control)
    name = data.amount_name()
    amount = name is not None
    response = f"{name} > 0" if amount else "Response"
    m[3].metric(f"{response}, treated", f"{rate_t:.2%}")
    m[4].metric(f"{response}, control", f"{rate_c:.2%}")
    m[5].metric(f"Average effect on {name} > 0" if amount else "Average effect (ATE)",
                common.points_text(rate_t - rate_c),
                help="Outcome rate of the treated minus that of the control rows, in percentage "
                     "points.")
    if amount:  # the amount itself, in its own units (dollars for Hillstrom's spend)
        y = data.value_columns()[name]
        mean_t, mean_c = float(y[data.t == 1].mean()), float(y[data.t == 0].mean())
        diff = mean_t - mean_c
        # one number of decimals for the three (they add up as shown): three significant
        # digits of the smallest, 1.250 − 0.653 = +0.597
        digits = resolving_digits(np.abs([mean_t, mean_c, diff]), least=0, most=6,
                                  significant=3)
        a = st.columns(3)
        a[0].metric(f"Mean {name}, treated", fmt_number(mean_t, digits))
        a[1].metric(f"Mean {name}, control", fmt_number(mean_c, digits))
        a[2].metric(f"Average effect on {name}", f"{diff:+,.{digits}f}",
                    help=f"Mean {name} of the treated (any treatment arm) minus that of the "
                         "control rows, in the outcome's own units.")
    if data.description:
        st.caption(data.description)
    for note in data.warnings:
        st.warning(note, icon=":material/info:")
    if few is not None:
        st.warning(few, icon=":material/grid_view:")


def srm_section(data: ABData) -> None:
    """Sample ratio mismatch of a two-arm dataset: the designed treated share (kept per
    dataset, defaulting to its design), the χ² test's verdict and its table
    (:func:`core.data.hygiene.srm_test`)."""
    default, note, _ = common.planned_share(data)
    st.markdown("**Sample ratio mismatch**", help=GLOSSARY["SRM"])
    common.remember("data_share", round(default, 4), shared=common.share_key())
    box, why = st.columns([1, 2], vertical_alignment="bottom")
    box.number_input("Designed treated share", 0.01, 0.99, step=0.01, key="data_share",
                     help=GLOSSARY["SRM"])
    why.caption(note)
    # what the box holds, as planned_share reads it for every page: the design itself (2/3)
    # while the box shows it to 4 decimals, and whether it is still the data's own share
    share, _, assumed = common.planned_share(data)
    with common.guard("The SRM test"):
        srm = hygiene.srm_test(data.t, expected_treated_share=share, assumed=assumed)
        if srm.attrs["srm"]:
            st.warning(f"The arms are not split as designed: {data.n_treated / data.n:.1%} "
                       f"of the rows are treated where {hygiene.share_text(share)} was "
                       f"planned. {srm.attrs['verdict']}", icon=":material/warning:")
        elif assumed:
            st.info(srm.attrs["verdict"] + " Type the share the test was designed with "
                    "to check it.", icon=":material/help:")
        else:
            st.success(srm.attrs["verdict"])
        st.dataframe(srm, key="data_srm", column_config={
            "_index": st.column_config.TextColumn("Arm"),
            "observed": st.column_config.NumberColumn("Rows", format="localized"),
            "expected": st.column_config.NumberColumn("Rows expected", format="localized"),
            "observed_share": st.column_config.NumberColumn("Share", format="percent"),
            "expected_share": st.column_config.NumberColumn("Share planned",
                                                            format="percent"),
            "contribution": st.column_config.NumberColumn(
                "χ² part", format="%.2f", help="(observed − expected)² / expected: the "
                "arm's share of the χ² statistic")})


def balance_section(data: ABData) -> None:
    """Covariate balance of a two-arm dataset: each feature's standardised mean difference
    between the arms, |SMD| > 0.1 flagged, and a warning when features are imbalanced."""
    st.markdown("**Covariate balance** (standardised mean differences; |SMD| > 0.1 "
                "flagged)", help=GLOSSARY["SMD"])
    with common.guard("The balance table"):
        balance = common.covariate_balance(data, data.fingerprint())
        # what a reader looks for first (the SMD and its flag) before the means; the missing
        # shares only when some value is missing; |SMD| (the SMD's size) is not shown; a
        # text feature's level in the feature's cell ("channel = Phone"), as on the several
        # arms' table: a Level column of its own pushed the means out of a half-page column
        order = ["feature", "smd", "imbalanced", "mean_treated", "mean_control"]
        if (balance[["missing_treated", "missing_control"]].fillna(0).to_numpy() > 0).any():
            order += ["missing_treated", "missing_control"]
        st.dataframe(balance.assign(feature=hygiene.balance_labels(balance)), height=260,
                     key="data_balance", hide_index=True, column_order=order, column_config={
                         "feature": st.column_config.TextColumn(
                             "Feature", help="A text feature is compared level by level "
                             "(\"channel = Phone\": the share of rows with that level).",
                             width=140),
                         # 4 significant digits: numbers (they sort), never "-0"
                         "mean_treated": st.column_config.NumberColumn(
                             "Mean, treated", format="%.4g", width=90),
                         "mean_control": st.column_config.NumberColumn(
                             "Mean, control", format="%.4g", width=90),
                         "smd": st.column_config.NumberColumn("SMD", help=GLOSSARY["SMD"],
                                                              format="%.3f", width=58),
                         "missing_treated": st.column_config.NumberColumn(
                             "Missing, treated", format="percent"),
                         "missing_control": st.column_config.NumberColumn(
                             "Missing, control", format="percent"),
                         "imbalanced": st.column_config.CheckboxColumn("|SMD| > 0.1",
                                                                       width=80)})
        if (note := hygiene.imbalance_note(balance)) is not None:
            st.warning(note, icon=":material/balance:")
