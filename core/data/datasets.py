"""Datasets for UpRank: the CSV reader, the public A/B tests and the synthetic worlds.

Everything the Data page and the models need comes through here:

* :class:`ABData` — the one dataset object; :class:`DataError` — every unusable input;
* :func:`read_ab_csv`, :func:`peek_csv`, :func:`guess_columns` — analysts' own files;
* :func:`load_hillstrom`, :func:`load_information`, :func:`load_criteo_head` — public data,
  found locally or downloaded from the publisher (:func:`fetch_data_file`);
* :func:`make_uplift_world` (the default, offline dataset), :func:`make_paper_simulation`;
* :data:`DATASETS` and :func:`load_dataset` — the registry the Data page lists.

The implementation is split over :mod:`core.data.abdata`, :mod:`core.data.csvio`,
:mod:`core.data.abmapping`, :mod:`core.data.datafiles` and :mod:`core.data.synthetic`; import
from the :mod:`core.data` face.

References
----------
Hillstrom, K. (2008). The MineThatData E-Mail Analytics And Data Mining Challenge.
Larsen, K. (2016). Information: Data Exploration with Information Theory. R package 0.0.9.
Devriendt, F., Van Belle, J., Guns, T., Verbeke, W. (2020). Learning to rank for uplift
modeling. arXiv:2002.05897.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_choice
from core.data.abdata import ABData, DataError
from core.data.abmapping import MAX_CATEGORY_LEVELS, frame_to_abdata, frame_to_multiarm
from core.data.csvio import read_frame, source_name
from core.data.datafiles import (
    REGISTRY,
    fetch_data_file,
)
from core.data.large import load_criteo, make_criteo_like
from core.data.multiarm import MultiArmData, make_multiarm_world
from core.data.synthetic import make_paper_simulation, make_uplift_world

__all__ = ["DATASETS", "OPTION_LABELS", "OPTION_NAMES", "DatasetSpec", "load_criteo_head",
           "load_dataset", "load_hillstrom", "load_information", "map_ab_frame", "read_ab_csv"]


def read_ab_csv(source: Any, *, treatment: str, outcome: str,
                features: Sequence[str] | None = None, treatment_value: Any = None,
                control_value: Any = None, name: str | None = None,
                max_levels: int = MAX_CATEGORY_LEVELS, all_arms: bool = False,
                outcome_kind: str | None = None, outcome_value: Any = None) -> ABData:
    """Read an A/B test from a CSV file.

    Parameters
    ----------
    source : str, Path, bytes or file object
        Path, raw bytes, or an open binary/text file (Streamlit's ``UploadedFile``).
        Comma, semicolon or tab delimited (sniffed outside quotes); UTF-8 with or without BOM,
        else Latin-1; gzip content is decompressed; CRLF, quoted newlines and padded values
        are fine.
    treatment, outcome : str
        Column names.  Both are coded 0/1 from ``0/1``, ``0.0/1.0``, ``true/false``,
        ``yes/no`` (any case, padded); a two-code treatment ``control``/``treatment`` works too.
    features : sequence of str, optional
        Feature columns.  Default: every other column that is numeric (ID-like integer columns
        excepted) or text with at most ``max_levels`` distinct values; text features become
        pandas ``category`` columns, which LightGBM uses natively.  Dropped columns are named
        in the warnings.
    treatment_value, control_value : scalar or list, optional
        Codes of the two arms in a multi-arm column (compared as stripped, case-insensitive
        strings, or as numbers: ``2`` matches ``"2"`` and ``2.0``).  Rows of other arms are
        dropped and counted in the warnings.  With only one given, the column must have exactly
        one other code.
    name : str, optional
        Display name; default the file name.
    max_levels : int, default 20
        Most distinct values for a text column to be kept as a categorical feature.
    all_arms : bool, default False
        Keep every arm of the treatment column (an A/B/n test): ``control_value`` names the
        control arm, every other code is a treatment arm (:func:`core.data.abmapping.
        frame_to_multiarm`).  The result is the two-arm view (any treatment vs control) with
        the whole experiment in ``.multiarm``.
    outcome_kind : {"binary", "continuous"}, optional
        ``"continuous"`` reads the outcome as an amount (spend, minutes); it implies the
        A/B/n reading (``.multiarm`` holds the amounts, the two-arm view ``outcome > 0``),
        of every arm, or of the control and the arm(s) ``treatment_value`` names.
        Default: 0/1 codings are binary.
    outcome_value : scalar, optional
        The code of a response in an outcome written as two words (``"bought"`` of
        ``bought`` / ``none``: :func:`core.data.abmapping.outcome_labels`); matched like the
        arm codes.  Default: the outcome must read as 0/1 by itself.

    Returns
    -------
    ABData
        ``warnings`` lists dropped rows and columns and missing feature values (kept as NaN).

    Raises
    ------
    DataError
        Empty file, header only, not a CSV, ragged rows (line number), duplicate column
        names, missing columns, treatment = outcome, one arm only, three or more treatment
        codes without a mapping, non-binary outcome, no (or only) responders, fewer than two
        rows in an arm, no features left.
    """
    frame, warnings = read_frame(source)
    return map_ab_frame(frame, warnings=warnings, treatment=treatment, outcome=outcome,
                        features=features, treatment_value=treatment_value,
                        control_value=control_value,
                        name=name or source_name(source) or "uploaded data",
                        max_levels=max_levels, all_arms=all_arms, outcome_kind=outcome_kind,
                        outcome_value=outcome_value)


def map_ab_frame(frame: pd.DataFrame, *, treatment: str, outcome: str,
                 warnings: Sequence[str] = (), features: Sequence[str] | None = None,
                 treatment_value: Any = None, control_value: Any = None,
                 name: str = "uploaded data", max_levels: int = MAX_CATEGORY_LEVELS,
                 all_arms: bool = False, outcome_kind: str | None = None,
                 outcome_value: Any = None) -> ABData:
    """The mapping half of :func:`read_ab_csv`: a table already parsed by
    :func:`core.data.csvio.read_frame` mapped to an A/B test.

    An app parses an upload once for its mapping step (which columns, which arms) and maps
    the same table when the user confirms, instead of parsing the file again.
    ``read_ab_csv(source, name=name, **mapping)`` is ``map_ab_frame(frame, warnings=warnings,
    name=name, **mapping)`` with ``frame, warnings = read_frame(source)`` (without a name,
    ``read_ab_csv`` names the data after the file; this function cannot see the file).

    Parameters
    ----------
    frame : DataFrame
        What :func:`~core.data.csvio.read_frame` returned; not modified.
    warnings : sequence of str
        Its warnings about how the file was read; they lead the result's ``warnings``.
    treatment, outcome, features, treatment_value, control_value, max_levels, all_arms, \
outcome_kind, outcome_value
        As in :func:`read_ab_csv`.
    name : str
        Display name.

    Returns
    -------
    ABData
    """
    frame, warnings = frame.copy(deep=False), list(warnings)
    if all_arms or outcome_kind == "continuous":
        if all_arms and treatment_value is not None:
            raise DataError("treatment_value= picks two arms; with all arms kept name only "
                            "the control arm (control_value=).")
        multi = frame_to_multiarm(
            frame, treatment=treatment, outcome=outcome, control_value=control_value,
            outcome_kind=outcome_kind, features=features, max_levels=max_levels,
            name=name, warnings=warnings, outcome_value=outcome_value,
            treatment_value=treatment_value)
        data = multi.binary_view()
        data.source_columns = {"treatment": treatment, "outcome": outcome,
                               "control_value": control_value, "all_arms": True}
        if treatment_value is not None:  # two arms of an amount
            data.source_columns.update(treatment_value=treatment_value, all_arms=False)
        return data
    return frame_to_abdata(
        frame, treatment=treatment, outcome=outcome, features=features,
        treatment_value=treatment_value, control_value=control_value, name=name,
        max_levels=max_levels, warnings=warnings, outcome_value=outcome_value,
    )


# --------------------------------------------------------------------------- public files
@functools.lru_cache(maxsize=8)
def _parsed(path: str, mtime_ns: int, size: int) -> tuple[pd.DataFrame, tuple[str, ...]]:
    frame, warnings = read_frame(path)
    return frame, tuple(warnings)


def _frame(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """Parsed file, cached in-process on (path, mtime, size); never handed out for mutation."""
    st = path.stat()
    frame, warnings = _parsed(str(path), st.st_mtime_ns, st.st_size)
    return frame.copy(deep=False), list(warnings)


HILLSTROM_FEATURES = ["recency", "history_segment", "history", "mens", "womens", "zip_code",
                      "newbie", "channel"]
_HILLSTROM_ARMS = {"womens": ["Womens E-Mail"], "mens": ["Mens E-Mail"],
                   "any": ["Womens E-Mail", "Mens E-Mail"]}


def load_hillstrom(arm: str = "womens", outcome: str = "visit", *,
                   data_dir: str | Path | None = None,
                   allow_download: bool = True) -> ABData | MultiArmData:
    """Hillstrom's MineThatData e-mail test (64,000 customers, three arms).

    Parameters
    ----------
    arm : {"womens", "mens", "any", "all"}
        Treatment: the "Womens E-Mail" arm, the "Mens E-Mail" arm, or either e-mail; control
        is always "No E-Mail"; rows of the other arm are dropped.  ``womens`` with ``visit``
        is the paper's setting (42,693 rows: 21,387 treated, 21,306 control).  ``"all"``
        keeps the three arms as a :class:`~core.data.multiarm.MultiArmData`: all 64,000
        rows, ``t`` = 0 (No E-Mail), 1 (Womens E-Mail), 2 (Mens E-Mail), designed shares 1/3.
    outcome : {"visit", "conversion", "spend>0", "spend"}
        ``"spend"`` (dollars, continuous) only with ``arm="all"``; the two-arm data hold
        0/1 outcomes (spend is in ``extra["spend"]``).  ``"spend>0"`` is the same column as
        ``"conversion"`` in this file (578 customers bought, and exactly they spent), so the
        Data page lists only ``"conversion"``; the name stays for notebooks and old links.
    data_dir : path, optional
        Look only there (then in the download cache); default: the candidate directories.
    allow_download : bool, default True

    Returns
    -------
    ABData
        Features ``recency, history_segment, history, mens, womens, zip_code, newbie, channel``
        (the text ones as ``category``); ``extra["spend"]`` holds the dollars spent.

    References
    ----------
    Hillstrom, K. (2008). The MineThatData E-Mail Analytics And Data Mining Challenge.
    """
    check_choice(arm, "arm", (*_HILLSTROM_ARMS, "all"))
    check_choice(outcome, "outcome", ("visit", "conversion", "spend>0", "spend"))
    if outcome == "spend" and arm != "all":
        raise ValueError("outcome='spend' (continuous) needs arm='all'; the two-arm data "
                         "hold 0/1 outcomes (use 'spend>0', or extra['spend']).")
    path = fetch_data_file("hillstrom", allow_download=allow_download, data_dir=data_dir)
    frame, warnings = _frame(path)
    if arm == "all":
        return _hillstrom_all_arms(frame, outcome, warnings)
    if outcome == "spend>0":
        frame["spend>0"] = (frame["spend"] > 0).astype(np.int64)
    data, rows = frame_to_abdata(
        frame, treatment="segment", outcome=outcome, features=HILLSTROM_FEATURES,
        treatment_value=_HILLSTROM_ARMS[arm], control_value="No E-Mail", warnings=warnings,
        name=f"Hillstrom — {' or '.join(_HILLSTROM_ARMS[arm])} vs No E-Mail, {outcome}",
        return_rows=True,
    )
    data.extra = {"spend": frame["spend"].to_numpy(dtype=np.float64)[rows]}
    entry = REGISTRY["hillstrom"]
    data.description = (f"{entry['citation']} Treatment: {' or '.join(_HILLSTROM_ARMS[arm])}; "
                        f"control: No E-Mail; outcome: {outcome}. {entry['licence']}")
    return data


HILLSTROM_ALL_ARMS = ["No E-Mail", "Womens E-Mail", "Mens E-Mail"]


def _hillstrom_all_arms(frame: pd.DataFrame, outcome: str, warnings: list[str]) -> MultiArmData:
    """The three arms of Hillstrom as one A/B/n experiment (features as in the two-arm data)."""
    y_col = "spend" if outcome == "spend" else outcome
    if outcome == "spend>0":
        frame["spend>0"] = (frame["spend"] > 0).astype(np.int64)
    both = frame_to_abdata(
        frame, treatment="segment", outcome=y_col if outcome != "spend" else "visit",
        features=HILLSTROM_FEATURES, treatment_value=HILLSTROM_ALL_ARMS[1:],
        control_value="No E-Mail", warnings=warnings, name="Hillstrom", return_rows=True)
    data, rows = both
    segment = frame["segment"].to_numpy()[rows]
    t = np.select([segment == arm for arm in HILLSTROM_ALL_ARMS], [0, 1, 2], default=-1)
    y = frame[y_col].to_numpy(dtype=np.float64 if outcome == "spend" else np.int64)[rows]
    entry = REGISTRY["hillstrom"]
    return MultiArmData(
        X=data.X, y=y, t=t, arms=list(HILLSTROM_ALL_ARMS), design=np.full(3, 1 / 3),
        name=f"Hillstrom — three arms (No / Womens / Mens E-Mail), {outcome}",
        description=f"{entry['citation']} All three arms; outcome: {outcome}. "
                    f"{entry['licence']}",
        extra={"spend": frame["spend"].to_numpy(dtype=np.float64)[rows]})


def load_information(split: str = "train", *, data_dir: str | Path | None = None,
                     allow_download: bool = True) -> ABData:
    """The insurance uplift data of the R package *Information* (Larsen).

    ``TREATMENT`` (offer sent) and ``PURCHASE`` (offer accepted); ``UNIQUE_ID`` is not a
    feature (it goes to ``extra["UNIQUE_ID"]``); the other 67 columns are features.  Columns
    are selected by name because their order differs between the two files.

    Parameters
    ----------
    split : {"train", "valid", "both"}
        ``both`` stacks train then valid; ``extra["split"]`` says which row came from where.
    data_dir, allow_download : see :func:`load_hillstrom`.

    References
    ----------
    Larsen, K. (2016). Information: Data Exploration with Information Theory. R package
    version 0.0.9 (datasets ``train`` and ``valid``).
    """
    check_choice(split, "split", ("train", "valid", "both"))
    parts, warnings = [], []
    for part in (("train", "valid") if split == "both" else (split,)):
        path = fetch_data_file(f"information_{part}", allow_download=allow_download,
                               data_dir=data_dir)
        frame, w = _frame(path)
        warnings += w
        parts.append(frame.assign(_split=part))
    columns = list(parts[0].columns)
    if len(parts) == 2 and set(parts[1].columns) != set(columns):
        diff = sorted(set(parts[1].columns) ^ set(columns))
        raise DataError(f"The train and valid files do not have the same columns: {diff}.")
    frame = pd.concat([p[columns] for p in parts], ignore_index=True)
    features = [c for c in columns if c not in ("TREATMENT", "PURCHASE", "UNIQUE_ID", "_split")]
    data, rows = frame_to_abdata(frame, treatment="TREATMENT", outcome="PURCHASE",
                                 features=features, warnings=warnings,
                                 name=f"Information (insurance) — {split}", return_rows=True)
    data.extra = {"UNIQUE_ID": frame["UNIQUE_ID"].to_numpy()[rows],
                  "split": frame["_split"].to_numpy(dtype=object)[rows]}
    data.description = (f"{REGISTRY['information_train']['citation']} Treatment: TREATMENT; "
                        f"outcome: PURCHASE; split: {split}. "
                        f"{REGISTRY['information_train']['licence']}")
    return data


def load_criteo_head(outcome: str = "visit", *, data_dir: str | Path | None = None) -> ABData:
    """First 1,000 rows of the Criteo Uplift v2.1 data: a schema and parsing fixture only.

    Features ``f0..f11``; ``exposure`` (a post-treatment variable) is not a feature.  Far too
    small for evaluation (2 conversions).  No automatic download: the full file is 13.9 M rows.

    References
    ----------
    Diemert, E., Betlei, A., Renaudin, C., Amini, M.-R. (2018). A Large Scale Benchmark for
    Uplift Modeling. AdKDD.
    """
    check_choice(outcome, "outcome", ("visit", "conversion"))
    path = fetch_data_file("criteo_head", allow_download=False, data_dir=data_dir)
    frame, warnings = _frame(path)
    data = frame_to_abdata(frame, treatment="treatment", outcome=outcome,
                           features=[f"f{i}" for i in range(12)], warnings=warnings,
                           name=f"Criteo uplift, first 1,000 rows — {outcome}")
    data.description = (f"{REGISTRY['criteo_head']['citation']} "
                        f"{REGISTRY['criteo_head']['licence']}")
    return data


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class DatasetSpec:
    """One entry of :data:`DATASETS`.

    ``options`` maps each option of the loader to its allowed values, the default first
    (for select boxes); ``needs_file`` says whether a data file (local or downloaded) is read;
    ``renamed`` maps ``(option, value of an older listing)`` to the listed value that holds
    the same data, so an old link still opens it.
    """

    key: str
    label: str
    loader: Callable[..., ABData]
    options: dict[str, tuple] = field(default_factory=dict)
    needs_file: bool = False
    description: str = ""
    renamed: dict[tuple[str, str], Any] = field(default_factory=dict)


def _seed(random_state: Any) -> Any:
    """A seed option as the generator takes it: an int from a link's text ("3"); ``None``,
    a SeedSequence or a Generator from a notebook as given."""
    return int(random_state) if isinstance(random_state, (str, float)) else random_state


#: key -> :class:`DatasetSpec`, in the order the Data page lists them ("world" is the default).
DATASETS: dict[str, DatasetSpec] = {
    "world": DatasetSpec(
        "world", "Uplift world (synthetic, known effect)", make_uplift_world,
        {"n": (20_000, 5_000, 50_000, 100_000), "random_state": (0, 1, 2, 3, 4)},
        description="Simulated e-mail campaign with a known individual effect; works offline.",
    ),
    "hillstrom": DatasetSpec(
        "hillstrom", "Hillstrom e-mail test (MineThatData, 2008)", load_hillstrom,
        {"arm": ("womens", "mens", "any"), "outcome": ("visit", "conversion")},
        needs_file=True, renamed={("outcome", "spend>0"): "conversion"},
        description="64,000 customers; the paper's benchmark (womens, visit).",
    ),
    "hillstrom_arms": DatasetSpec(
        "hillstrom_arms", "Hillstrom e-mail test, all three arms (A/B/n)",
        lambda outcome="visit", **kw: load_hillstrom(arm="all", outcome=outcome,
                                                     **kw).binary_view(),
        {"outcome": ("visit", "spend", "conversion")},
        needs_file=True, renamed={("outcome", "spend>0"): "conversion"},
        description="64,000 customers: No E-Mail, Womens E-Mail, Mens E-Mail (⅓ each); which "
                    "e-mail for whom. 'spend' is the amount in dollars.",
    ),
    "multiarm_world": DatasetSpec(
        "multiarm_world", "Multi-arm world (synthetic: control + three offers, known effects)",
        lambda n=30_000, outcome="binary", random_state=0: make_multiarm_world(
            int(n), n_arms=3, outcome=outcome, random_state=_seed(random_state)).binary_view(),
        {"n": (30_000, 10_000, 100_000), "outcome": ("binary", "spend"),
         "random_state": (0, 1, 2, 3, 4)},
        description="Simulated A/B/n campaign: a control and three offers whose effects "
                    "differ by customer, each with a cost; works offline.",
    ),
    "criteo_like": DatasetSpec(
        "criteo_like", "Criteo-size stand-in (synthetic, Criteo Uplift v2.1's schema)",
        lambda n_rows=1_000_000, random_state=0: make_criteo_like(
            int(n_rows), random_state=_seed(random_state)),
        {"n_rows": (1_000_000, 100_000, 13_979_592), "random_state": (0, 1, 2)},
        description="Twelve float32 features, 85 % treated, visit 4.7 %, a known effect on "
                    "visits; 13,979,592 rows is Criteo's full size (about 1 GB in memory).",
    ),
    "criteo": DatasetSpec(
        "criteo", "Criteo Uplift v2.1 (Criteo AI Lab; 13,979,592 rows, file needed)",
        load_criteo, {"outcome": ("visit", "conversion")}, needs_file=True,
        description="The largest public uplift benchmark: put Criteo's "
                    "criteo-research-uplift-v2.1.csv.gz in the data directory (converted to "
                    "Parquet once). CC BY-NC-SA 4.0, non-commercial.",
    ),
    "information": DatasetSpec(
        "information", "Insurance offer (R package Information)", load_information,
        {"split": ("train", "valid", "both")},
        needs_file=True, description="10,000 rows per split; effect close to zero.",
    ),
    "paper_simulation": DatasetSpec(
        "paper_simulation", "Paper simulation (Devriendt et al. 2020, §4.2)",
        make_paper_simulation,
        {"scenario": ("balanced", "more_treated", "more_control"),
         "n": (10_000, 1_000, 100_000), "random_state": (0, 1, 2, 3, 4)},
        description="Simulated scores for comparing curve definitions across arm sizes.",
    ),
}


#: How the Data page names a loader's option (a name not listed shows with spaces for "_").
OPTION_NAMES = {"n": "Rows", "n_rows": "Rows", "random_state": "Seed",
                "arm": "E-mail (treated arm)", "outcome": "Outcome",
                "scenario": "Arm sizes", "split": "Split"}

#: How the Data page shows an option value that is a code name.
OPTION_LABELS = {"balanced": "balanced (|T| = |C|)",
                 "more_treated": "more treated (|T| = 9|C|)",
                 "more_control": "more control (|C| = 9|T|)"}


def load_dataset(key: str = "world", **options: Any) -> ABData:
    """Load dataset ``key`` of :data:`DATASETS` with the loader's ``options``.

    Always returns a fresh :class:`ABData` (callers may modify it).  Besides the listed
    options, file-based loaders accept ``data_dir`` and ``allow_download``.
    """
    check_choice(key, "key", DATASETS)
    spec = DATASETS[key]
    allowed = set(spec.options) | ({"data_dir", "allow_download"} if spec.needs_file else set())
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"load_dataset({key!r}) options must be among "
                         f"{', '.join(sorted(allowed))}; got {', '.join(unknown)}.")
    return spec.loader(**options)
