"""Streamlit-side helpers shared by the pages: cached loaders, the session's dataset,
settings kept across pages, score columns, error display and downloads.  Numerical work
stays in ``core``.

The current dataset
-------------------
:func:`current_data` is the dataset every page works on.  It lives in ``st.session_state``
and, so that a reload, a new tab or a shared link reopens it, in the URL:
``?dataset=hillstrom&arm=womens&outcome=visit`` for a listed dataset,
``?upload=<fingerprint>`` for an uploaded CSV (stored on disk by :func:`use_upload`, see
:mod:`core.data.uploads`); :class:`core.data.DatasetChoice` reads and writes these.  A new
session opens the dataset of the URL (a bad link shows a warning and the default dataset);
:func:`set_data` writes the URL, and every :func:`current_data` call writes it back when a
page switch dropped it.

Settings kept across pages
--------------------------
Streamlit forgets the value of a widget that a run does not draw, so after a visit to
another page a widget is back at its default.  :func:`remember` keeps the value in a plain
session-state key (not a widget key, so never deleted) and seeds the widget from it::

    common.remember("curves_definition", "uplift_sep_rel", shared=common.SHARED_DEFINITION,
                    options=list(DEFINITIONS))
    definition = st.selectbox("Definition", list(DEFINITIONS), key="curves_definition")

Call it right before the widget, and give the widget no default of its own (no ``value=``,
``index=`` or ``default=``: the session state sets it).  Widgets on different pages that
pass the same ``shared`` key show one value: change the definition on Curves and Compare
opens with it.  The shared keys of the app are :data:`SHARED_DEFINITION`,
:data:`SHARED_CUTOFF` and :data:`SHARED_RUNS` (the chosen runs / rankers).
"""

from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core import data as datasets
from core.data import DATASET_PARAMS, ABData, DataError, DatasetChoice, hygiene
from core.runs.export import safe_csv_bytes
from core.runs.jobs import JobRunner
from core.runs.store import RunStore, default_runs_dir

log = logging.getLogger("uprank")

DEFAULT_DATASET = ("world", ())
RANDOM_RANKER = "Random ranker (seed 0)"
#: Shared session-state keys of :func:`remember`: one value for the widgets of every page.
SHARED_DEFINITION = "shared_definition"
SHARED_CUTOFF = "shared_cutoff"
SHARED_RUNS = "shared_runs"


@st.cache_resource(show_spinner="Loading dataset…", max_entries=4)
def load_benchmark(key: str, options: tuple) -> ABData:
    """A benchmark dataset by registry key; ``options`` is a hashable tuple of items.

    One object shared by every session and rerun, never a copy: the 14M-row Criteo stand-in
    is 0.8 GB, which ``cache_data`` pickled into its cache and unpickled again for every new
    session.  Its arrays are made read-only, so that code writing into them fails loudly
    instead of changing the data of other sessions; ``X``, a DataFrame, cannot be frozen:
    nothing in ``ui/`` writes into it (pandas' copy-on-write keeps derived frames apart).
    """
    return _read_only(datasets.load_dataset(key, **dict(options)))


def _read_only(data: ABData) -> ABData:
    """``data`` with the write flag of its arrays cleared (those of its A/B/n view too)."""
    for value in (data.y, data.t, data.tau, data.ids, *data.scores.values(),
                  *data.extra.values(),
                  *(() if data.multiarm is None else vars(data.multiarm).values())):
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return data


@dataclass(frozen=True)
class Upload:
    """An uploaded file as the Data page's mapping step holds it.

    ``key`` names it in the caches below (Streamlit's id of the uploaded file): a cache keyed
    by the ``content`` itself hashes it on every call — 0.4 s for 220 MB, four calls per
    rerun of the mapping step."""

    key: str
    name: str
    content: bytes = field(repr=False)


def read_uploaded(upload: Upload, mapping: tuple) -> ABData:
    """An uploaded CSV with a column mapping (tuple of items): the table the mapping step
    parsed (:func:`_upload_frame`) mapped by :func:`core.data.map_ab_frame` — the same
    result as :func:`core.data.read_ab_csv` without parsing the file again.  Not cached: it
    runs once per *Use this CSV* click, and the session keeps the result (a ``cache_data``
    entry pickled a copy of the whole dataset per mapping)."""
    frame, warnings = _upload_frame(upload.key, upload.content)
    with st.spinner("Mapping the columns…"):
        return datasets.map_ab_frame(frame, warnings=warnings, name=upload.name,
                                     **dict(mapping))


@st.cache_data(show_spinner=False)
def sample_csv() -> bytes:
    """The embedded uplift world as a CSV, for trying the upload."""
    return datasets.to_csv_bytes(load_benchmark(*DEFAULT_DATASET))


@st.cache_resource(show_spinner="Reading the whole file (a large one takes a while)…",
                   max_entries=2)
def _upload_frame(key: str, _content: bytes) -> tuple:
    """The upload ``key`` parsed once (:func:`core.data.read_frame`): ``(frame, warnings)``
    for the mapping step's preview and checks below and for *Use this CSV* — it was parsed
    once per check, again per column chosen and again on use (39 s each for 220 MB). A
    resource, not a copy per call: never modified."""
    frame, warnings = datasets.read_frame(_content)
    return frame, tuple(warnings)


def upload_head(upload: Upload, rows: int = 20):
    """The first ``rows`` rows of the parsed upload, for the mapping step's preview."""
    return _upload_frame(upload.key, upload.content)[0].head(rows)


@st.cache_data(show_spinner=False, max_entries=32)
def _treatment_facts(key: str, column: str, _content: bytes) -> tuple[list, list]:
    col = _upload_frame(key, _content)[0][column]
    datasets.check_arm_count(col, column)
    return datasets.arm_codes(col), datasets.stray_arm_codes(col)


@st.cache_data(show_spinner=False, max_entries=32)
def _outcome_facts(key: str, column: str, _content: bytes
                   ) -> tuple[str, list | None, str | None]:
    col = _upload_frame(key, _content)[0][column]
    return (datasets.guess_outcome_kind(col), datasets.outcome_labels(col),
            datasets.stray_outcome_note(col, column))


def treatment_facts(upload: Upload, column: str) -> tuple[list, list]:
    """``(codes, strays)`` of the column picked as the treatment: its distinct values (the
    arms offered) and the stray markers among them (:func:`core.data.stray_arm_codes`);
    :class:`~core.data.DataError` when it has too many values for a treatment.  Counted once
    per upload and column, not on every rerun of the mapping step (1.5 s at 2M rows)."""
    return _treatment_facts(upload.key, column, upload.content)


def outcome_facts(upload: Upload, column: str) -> tuple[str, list | None, str | None]:
    """``(kind, labels, strays)`` of the column picked as the outcome: ``"binary"`` or
    ``"continuous"``, how the mapping step proposes to read it, the two words that do not
    say which is a response (:func:`core.data.outcome_labels`) or None, and the sentence on
    a 0/1 column with a few other values (:func:`core.data.stray_outcome_note`) or None;
    once per upload and column (2.9 s per rerun at 2M text rows before)."""
    return _outcome_facts(upload.key, column, upload.content)


def default_columns(columns: list) -> tuple[int | None, int | None]:
    """Positions of the guessed treatment and outcome columns among ``columns``
    (:func:`core.data.guess_columns`), for the mapping steps' select boxes; ``None`` where no
    name says which column it is, so that the box starts empty and asks (a first column
    preselected as the treatment, ``f0``, read "Column 'f0' has 34,992 distinct values …")."""
    guess = datasets.guess_columns(columns)
    return tuple(columns.index(guess[role]) if guess[role] in columns else None
                 for role in ("treatment", "outcome"))


def unpicked_columns_note(treatment: str | None, outcome: str | None) -> str | None:
    """What to pick when a mapping step's treatment or outcome box is still empty (no column
    name was recognised), else ``None``."""
    missing = [role for role, value in (("treatment", treatment), ("outcome", outcome))
               if value is None]
    if not missing:
        return None
    said = {"treatment": "the **treatment** (which arm each row was assigned to)",
            "outcome": "the **outcome** (what was measured after it)"}
    return (f"No column's name says it is the {' or the '.join(missing)}: pick "
            f"{' and '.join(said[m] for m in missing)} above.")


@st.cache_data(show_spinner="Reopening the uploaded CSV…", max_entries=8)
def load_stored_upload(fingerprint: str) -> ABData:
    """An upload stored by :func:`use_upload`, by its fingerprint (``DataError`` if gone)."""
    return datasets.load_upload(fingerprint)


def _stamp(path: str) -> tuple[int, int] | None:
    """``(modification time in ns, size)`` of the file at ``path`` (``None`` when it cannot
    be read): part of every cache key of a file read by path, so a file rewritten in place
    (a daily export) is read again instead of served from the cache."""
    try:
        info = datasets.file_path(path).stat()
    except (DataError, OSError):
        return None
    return info.st_mtime_ns, info.st_size


def load_file(path: str, treatment: str, outcome: str) -> ABData:
    """A large Parquet / CSV file read by path (:func:`core.data.load_ab_file`); kept as a
    resource (one at a time, not copied per session: it may hold millions of rows) until the
    file changes on disk.  Its fingerprint is taken here, under the spinner (2 s at 14M
    rows), and kept on the object."""
    return _load_file(path, treatment, outcome, _stamp(path))


@st.cache_resource(show_spinner="Reading the file in column batches…", max_entries=1)
def _load_file(path: str, treatment: str, outcome: str, stamp) -> ABData:
    data = datasets.load_ab_file(path, treatment=treatment, outcome=outcome)
    data.fingerprint()
    return data


@st.cache_data(show_spinner="Comparing the arms' feature means…", max_entries=8)
def covariate_balance(_data: ABData, fingerprint: str):
    """:func:`core.data.hygiene.covariate_balance` of the dataset, once per dataset (2.9 s at
    14M rows; the Data page reruns on every widget change)."""
    return datasets.hygiene.covariate_balance(_data.X, _data.t)


def file_columns(path: str) -> list[str]:
    """The file's column names (cached until the file changes)."""
    return _file_columns(path, _stamp(path))


@st.cache_data(show_spinner=False, max_entries=16)
def _file_columns(path: str, stamp) -> list[str]:
    return datasets.file_columns(path)


def file_summary(path: str, treatment: str, outcome: str) -> dict:
    """:func:`core.data.parquet_summary` (cached until the file changes)."""
    return _file_summary(path, treatment, outcome, _stamp(path))


@st.cache_data(show_spinner="Reading the arm and outcome columns…", max_entries=8)
def _file_summary(path: str, treatment: str, outcome: str, stamp) -> dict:
    return datasets.parquet_summary(path, treatment=treatment, outcome=outcome)


def demo_parquet():
    """A 1M-row Criteo-like Parquet file in the cache (written once), to try the large-file
    path without one of your own."""
    path = datasets.cache_dir() / "demo" / "criteo_like_1000000.parquet"
    if not path.exists():
        with st.spinner("Writing 1,000,000 rows…"):
            datasets.write_criteo_like(path, 1_000_000, random_state=0)
    return path


def current_data() -> ABData:
    """The dataset chosen on the Data page; in a new session the one the URL names, else the
    embedded default world.  Also puts the choice back into the URL if a page switch
    dropped it."""
    leave_legacy_pages_mode()
    if "data" not in st.session_state:
        _open_from_url()
    _write_url()
    return st.session_state["data"]


def current_source() -> tuple[str, tuple] | None:
    """``(dataset key, options)`` of a listed dataset, ``None`` for an uploaded CSV."""
    current_data()
    return st.session_state.get("data_source")


def current_choice() -> DatasetChoice:
    """The current dataset as a :class:`~core.data.DatasetChoice` (what the URL says)."""
    current_data()
    return _choice()


def file_stem(*parts: str) -> str:
    """A download's file name stem from readable parts: ``("uprank_scores", "LambdaMART-PCG
    (separate) · 100 trees", "a1b2c3d4")`` → ``"uprank_scores_LambdaMART-PCG_separate_100_
    trees_a1b2c3d4"`` (letters, digits, ``-`` and ``_`` only, at most 80 characters), so two
    runs' downloads do not share a name: a long name is shortened in its middle parts, never
    in the first (the kind of file) or the last (the run id)."""
    import re

    words = [re.sub(r"_+", "_", re.sub(r"[^0-9A-Za-z-]+", "_", str(p)).strip("_"))
             for p in parts if p]
    words = [w for w in words if w]
    text = "_".join(words)
    if len(text) <= 80 or len(words) < 3:
        return text[:80].rstrip("_")
    head, tail, middle = words[0], words[-1][:40], words[1:-1]
    # the room left shared fairly among the middle parts (a short part keeps all of its
    # own, the rest share what it leaves): cut from the end, a long dataset name took it
    # all and two runs' reports differed only by their ids
    room = max(0, 80 - len(head) - len(tail) - 2 - (len(middle) - 1))
    keep = {}
    for left, i in enumerate(sorted(range(len(middle)), key=lambda j: len(middle[j]))):
        keep[i] = min(len(middle[i]), room // (len(middle) - left))
        room -= keep[i]
    cut = [middle[i][:keep[i]].strip("_") for i in range(len(middle))]
    return "_".join(w for w in (head, *cut, tail) if w)


def size_text(n_bytes: int) -> str:
    """A file size as people read it: ``"148 KB"``, ``"12.3 MB"``, ``"1.2 GB"``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n_bytes >= scale:
            value = n_bytes / scale
            return f"{value:,.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{n_bytes:,} bytes"


def points_text(difference: float) -> str:
    """A difference of two rates in percentage points: ``0.0103`` → ``"+1.03 pp"``."""
    return f"{100 * difference:+.2f} pp"


def share_key() -> str:
    """Session key of the treated share the analyst planned for the current dataset."""
    return f"data_share {current_choice().to_params()}"


def arm_summary(data: ABData) -> tuple[float, float, str | None]:
    """``(outcome rate treated, control, small-cells note)`` of the current dataset, cached
    by its fingerprint (at 14M rows these took 0.2 s on every click of the Data page)."""
    return _arm_summary(data.fingerprint(), data)


@st.cache_data(show_spinner=False, max_entries=8)
def _arm_summary(fingerprint: str, _data: ABData) -> tuple[float, float, str | None]:
    treated = _data.t == 1
    return (float(_data.y[treated].mean()), float(_data.y[~treated].mean()),
            hygiene.small_cells_note(_data.y, _data.t))


def split_problem(data: ABData) -> str | None:
    """Why a model cannot be trained on ``data`` (:func:`core.data.splits.split_problem` at
    the Train page's 70/30 split), cached by its fingerprint; ``None`` when it can."""
    return _split_problem(data.fingerprint(), data)


@st.cache_data(show_spinner=False, max_entries=8)
def _split_problem(fingerprint: str, _data: ABData) -> str | None:
    from core.data.splits import split_problem as problem
    from core.runs.store import RunConfig

    return problem(_data.y, _data.t, test_size=RunConfig.test_size)


def planned_share(data: ABData) -> tuple[float, str, bool]:
    """``(planned treated share, where the default comes from, assumed?)`` for the SRM test:
    the share typed on the Data page for this dataset, else its design
    (:func:`core.data.srm_design`).  ``assumed`` is True while the share is the data's own
    rounded share (an upload without a known design), not one the analyst gave."""
    source = current_source()
    design, note, assumed = datasets.srm_design(data.t, *(source or (None, ())))
    typed = st.session_state.get(share_key())
    if typed is None or abs(float(typed) - round(design, 4)) < 1e-9:
        # the box holds the design to 4 decimals: test the design itself (2/3, not 0.6667)
        return design, note, assumed
    return float(typed), note, False


def _choice() -> DatasetChoice:
    """The session's choice; derived once when the data was put in the session state
    directly (as tests do)."""
    state = st.session_state
    if "data_choice" not in state:
        source = state.get("data_source")
        state["data_choice"] = (DatasetChoice.listed(*source) if source is not None
                                else DatasetChoice(upload=state["data"].fingerprint()))
    return state["data_choice"]


def set_data(data: ABData, *, source: tuple[str, tuple] | None = None,
             file: tuple[str, str, str] | None = None) -> None:
    """Make ``data`` the current dataset: ``source`` = ``(key, options)`` of a listed dataset,
    ``file`` = ``(path, treatment, outcome)`` of a large file, neither for an upload (named
    in the URL by its fingerprint)."""
    if source is not None:
        choice = DatasetChoice.listed(source[0], source[1])
    elif file is not None:
        choice = DatasetChoice(file=tuple(file))
    else:
        choice = DatasetChoice(upload=data.fingerprint())
    st.session_state["data"] = data
    st.session_state["data_source"] = None if source is None else (choice.key, choice.options)
    st.session_state["data_choice"] = choice
    _write_url()


def use_upload(upload: Upload, mapping: tuple) -> ABData:
    """Read an uploaded CSV with its column mapping, store it on disk (so a reload reopens it)
    and make it the current dataset.  A failed store is a warning: the data is still used."""
    data = read_uploaded(upload, mapping)
    try:
        datasets.save_upload(data, upload.content, name=upload.name, mapping=dict(mapping))
    except DataError as exc:
        st.warning(f"{exc} The data is used in this tab only: a reload will not reopen it.",
                   icon=":material/warning:")
    set_data(data)
    return data


def _open_from_url() -> None:
    """Open the dataset the URL names (a new session); the default one, with a warning, when
    the link names nothing valid."""
    try:
        choice = DatasetChoice.from_params(st.query_params.to_dict())
        if choice is not None and choice.upload is not None:
            set_data(load_stored_upload(choice.upload))
            return
        if choice is not None and choice.file is not None:
            set_data(load_file(*choice.file), file=choice.file)
            return
        if choice is not None:
            set_data(load_benchmark(choice.key, choice.options),
                     source=(choice.key, choice.options))
            return
    except (DataError, ValueError) as exc:
        st.warning(f"The dataset named in the link could not be opened. {exc} The default "
                   "dataset is shown instead.", icon=":material/link_off:")
    except Exception as exc:  # noqa: BLE001 - a bad link must never break the app
        log.exception("Opening the dataset of the URL failed")
        st.warning(f"The dataset named in the link could not be opened ({type(exc).__name__}: "
                   f"{exc}). The default dataset is shown instead.", icon=":material/link_off:")
    set_data(load_benchmark(*DEFAULT_DATASET), source=DEFAULT_DATASET)


def leave_legacy_pages_mode() -> None:
    """Run ``app.py``'s navigation even when a page's URL is the first one a fresh server sees.

    Because the project has a ``pages/`` folder, Streamlit starts in its legacy multipage
    mode and, until some session has run ``app.py`` (whose ``st.navigation`` switches the
    mode off), serves ``/compare`` by running ``pages/compare.py`` alone: file-name sidebar,
    no page config.  A page that finds itself in that mode switches it off and reruns, so
    ``app.py`` runs and navigates to the same page.  (Streamlit keeps the mode in a class
    attribute, ``PagesManager.uses_pages_directory``; ``st.navigation`` clears it the same
    way.)  Only a session in which ``app.py`` never ran does this: the rerun would drop a
    widget event, and the mode cannot come back in a live server (Streamlit's ``AppTest``
    resets it before every run, yet its sessions always start with ``app.py``).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory and not st.session_state.get(_APP_RAN):
        PagesManager.uses_pages_directory = False
        st.rerun()


_APP_RAN = "_uprank_app_ran"


def start_app() -> None:
    """Called by ``app.py`` after ``st.navigation``: marks the session as navigated by the
    app (see :func:`leave_legacy_pages_mode`) and keeps the dataset in the URL."""
    st.session_state[_APP_RAN] = True
    keep_dataset_in_url()


def keep_dataset_in_url() -> None:
    """Put the session's dataset back into the URL if a page switch dropped it (Streamlit's
    navigation does); cheap, and nothing happens before a page has read the dataset.  Pages
    that call :func:`current_data` do this already; ``app.py`` can call it before
    ``navigation.run()`` so that every page keeps the URL."""
    leave_legacy_pages_mode()
    if "data" in st.session_state:
        _write_url()


def _write_url() -> None:
    """Make the URL's dataset parameters those of the session's choice (only when they
    differ: every write updates the browser's address)."""
    want = _choice().to_params()
    have = {k: v for k, v in st.query_params.to_dict().items() if k in DATASET_PARAMS}
    if have == want:
        return
    for key in have.keys() - want.keys():
        del st.query_params[key]
    st.query_params.update(want)


def select_current_source(prefix: str = "data") -> None:
    """Preselect the Data page's dataset boxes (``{prefix}_key``, ``{prefix}_{key}_{option}``)
    on the current listed dataset, where they hold no value of their own."""
    source = current_source()
    if source is None:
        return
    key, options = source
    st.session_state.setdefault(f"{prefix}_key", key)
    for name, value in options:
        st.session_state.setdefault(f"{prefix}_{key}_{name}", value)


def remember(key: str, default=None, *, shared: str | None = None, options=None,
             persist: bool = False) -> None:
    """Keep the value of widget ``key`` across pages; call right before drawing the widget.

    The value is copied to a plain session-state key (``shared``, default ``"kept_" + key``)
    on every run and the widget is seeded from it when Streamlit has dropped the widget's own
    state (after a run of another page).  Draw the widget with ``key=key`` and without a
    default of its own.  See the module docstring.

    Parameters
    ----------
    key : str
        The widget's key.
    default
        The value before anything was chosen.
    shared : str, optional
        A key several widgets share (:data:`SHARED_DEFINITION`, :data:`SHARED_CUTOFF`,
        :data:`SHARED_RUNS`), so one choice shows on every page.  When it changes between
        runs (a key per dataset, say), the widget is seeded from the new key: each dataset
        keeps its own value.
    options : sequence, optional
        The widget's options: a kept value that is not among them (other data, other runs)
        gives way to ``default``; a kept list keeps its items that are among them (the
        default's, when none is).
    persist : bool, default False
        Also keep the value across reloads and restarts: a new session starts from the
        value last used in any session (saved in the runs directory,
        :meth:`core.runs.store.RunStore.save_settings`; a value no longer among
        ``options`` gives way to ``default``).  For settings such as the Train page's, not
        for choices tied to a dataset.
    """
    state = st.session_state
    store, owner = shared or f"kept_{key}", f"kept_store_{key}"
    fresh = key not in state or state.get(owner, store) != store
    fallback = default  # what a value no longer offered gives way to
    if persist and fresh and store not in state:
        default = _saved_settings().get(key, default)
    value = state.get(store, default) if fresh else state[key]
    if options is not None:
        allowed = list(options)
        if isinstance(value, (list, tuple)):
            kept = [v for v in value if v in allowed]
            value = kept if kept or not value else [v for v in fallback or () if v in allowed]
        elif value not in allowed:
            value = fallback
    if key not in state or state[key] != value:
        state[key] = value
    state[store], state[owner] = value, store
    if persist and _saved_settings().get(key) != _as_json(value):
        _saved_settings()[key] = _as_json(value)
        runner().store.save_settings({key: _as_json(value)})


def _saved_settings() -> dict:
    """The saved settings, read once per session (:func:`remember` keeps them current)."""
    if "saved_settings" not in st.session_state:
        st.session_state["saved_settings"] = runner().store.settings()
    return st.session_state["saved_settings"]


def _as_json(value):
    """A widget value as JSON gives it back (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


@st.cache_resource(show_spinner=False)
def job_runner(root: str) -> JobRunner:
    """One background job runner per runs directory, shared by every browser session."""
    runner = JobRunner(max_workers=1, store=RunStore(root))
    runner.warm_up()
    return runner


def runner() -> JobRunner:
    return job_runner(str(default_runs_dir()))


def session_id() -> str:
    """A stable id of this browser session (its jobs are listed as "yours")."""
    if "session_id" not in st.session_state:
        st.session_state["session_id"] = uuid.uuid4().hex
    sid = st.session_state["session_id"]
    ctx = get_script_run_ctx()
    if ctx is not None:
        _browser_sessions()[sid] = ctx.session_id
    return sid


@st.cache_resource
def _browser_sessions() -> dict[str, str]:
    """Our session ids → Streamlit's session ids (to ask Streamlit whether a tab is open)."""
    return {}


def session_is_open(sid: str) -> bool:
    """Whether the browser tab of session ``sid`` is still connected.  A reload or a closed
    tab ends Streamlit's session; outside a running server (tests) no tab counts as open."""
    from streamlit.runtime import Runtime

    streamlit_id = _browser_sessions().get(sid)
    return (streamlit_id is not None and Runtime.exists()
            and Runtime.instance().is_active_session(streamlit_id) is True)  # (a test's mock)


def thousands(value) -> str:
    """An integer with thousands separators (``20000`` → ``"20,000"``); anything else as is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def short_count(n: int) -> str:
    """A count short enough for a metric tile: exact below ten million (``"2,097,244"``),
    else in millions (``13979592`` → ``"13.98M"``), so a six-tile row never cuts it off."""
    return f"{n:,}" if n < 10_000_000 else f"{n / 1e6:,.2f}M"


def count_metric(container, label: str, n: int) -> None:
    """``st.metric`` of a count; when shortened, the exact count is in its tooltip."""
    n = int(n)
    short = short_count(n)
    container.metric(label, short, help=None if short == f"{n:,}" else f"{n:,} exactly")


def dataset_caption(data: ABData) -> None:
    """The dataset in one line above a page's content; for an amount outcome (Hillstrom's
    spend) it says that curves and models of one treatment read it as "amount > 0"."""
    multi, name = data.multiarm, data.amount_name()
    if name is not None:
        outcome = (f"mean {name} {multi.y.mean():,.4g} (> 0 for {data.y.mean():.2%} of the "
                   f"rows) · curves and models of one treatment read the outcome as "
                   f"**{name} > 0** (the several-arms results use the amount)")
    else:
        outcome = f"response rate {data.y.mean():.2%}"
    arms = "" if multi is None else f" in {len(multi.arms) - 1} treatment arms"
    st.caption(f"Dataset: **{data.name}** · {data.n:,} rows · {data.n_treated:,} treated"
               f"{arms} / {data.n_control:,} control · {outcome}")


def score_names(data: ABData) -> list[str]:
    """Rankers a page can evaluate: scores carried by the data, numeric columns, random."""
    return [*data.scores, *data.numeric_columns(), RANDOM_RANKER]


def score_values(data: ABData, name: str) -> np.ndarray:
    """The ranker ``name``'s scores: float32 kept as float32 (the curve kernel's fast path
    and half the memory at 14M rows), anything else as float64; a feature's missing values
    rank last."""
    if name in data.scores:
        return _floats(np.asarray(data.scores[name]))
    if name == RANDOM_RANKER:
        return np.random.default_rng(0).random(data.n)
    column = data.X[name]
    col = (column.to_numpy() if column.dtype in (np.float32, np.float64)
           else column.to_numpy(dtype=float, na_value=np.nan))
    # Missing values rank last: an analyst's score column may have gaps.
    return np.where(np.isnan(col), -np.inf, col) if np.isnan(col).any() else col


def _floats(values: np.ndarray) -> np.ndarray:
    return values if values.dtype in (np.float32, np.float64) else values.astype(np.float64)


def trained_runs(data: ABData) -> dict:
    """Runs trained on ``data`` (Train page), labelled for selection as rankers."""
    from core.runs.views import display_labels

    runs = runner().store.list(fingerprint=data.fingerprint())
    labels = display_labels(runs)
    return {f"Trained: {labels[run.run_id]}": run for run in runs}


def rankers_on_rows(data: ABData, names, runs: dict):
    """The rows every chosen ranker scores, and each ranker's scores there.

    Score columns cover every row; a trained run only its test rows (split 0), so with a run
    among the rankers the data is restricted to those rows.  Two runs must share them.
    """
    index = None
    for name in names:
        if name in runs:
            idx = runs[name].scores(0).index
            if index is not None and not np.array_equal(idx, index):
                raise ValueError("The two trained runs were tested on different rows (other "
                                 "split seed or scheme): pick runs with the same evaluation.")
            index = idx
    if index is None:
        return data, tuple(score_values(data, name) for name in names)
    return data.subset(index), tuple(
        runs[name].scores(0).score if name in runs else score_values(data, name)[index]
        for name in names)


@contextmanager
def guard(what: str = "This step"):
    """Show bad input as a message and any other failure as a short notice, never a traceback."""
    try:
        yield
    except (DataError, ValueError) as exc:
        st.error(str(exc), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - the UI must survive anything
        log.exception("%s failed", what)
        st.error(f"{what} failed: {type(exc).__name__}: {exc}", icon=":material/error:")


def download_row(fig: go.Figure, table, stem: str, key: str, container=None) -> None:
    """CSV of the table and a self-contained interactive HTML of the figure, side by side in
    ``container`` (default: a new horizontal container; buttons wrap when the page is narrow).

    Both files are built only when clicked (deferred ``data``), so reruns stay fast; the
    HTML embeds plotly.js and opens offline.  PNG: the camera icon of the chart's toolbar
    saves the figure as shown (see :func:`plot_config`).
    """
    c1 = c2 = container if container is not None else st.container(horizontal=True)
    c1.download_button("Download points (CSV)", lambda: safe_csv_bytes(table), f"{stem}.csv",
                       "text/csv", key=f"{key}_csv", icon=":material/download:",
                       on_click="ignore")
    figure_html_button(fig, stem, f"{key}_html", container=c2)


def figure_html_button(fig: go.Figure, stem: str, key: str, container=st,
                       label: str = "Figure (HTML)") -> None:
    """Download button for one figure as a self-contained interactive HTML (built on click);
    ``label`` names the figure where a page has several."""
    container.download_button(label, lambda: fig.to_html(
        include_plotlyjs=True, full_html=True).encode(), f"{stem}.html", "text/html", key=key,
        icon=":material/download:", on_click="ignore")


def plot_config(stem: str) -> dict:
    """Plotly toolbar config: the camera button downloads a 2× PNG named after the view."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": stem, "scale": 2}}
