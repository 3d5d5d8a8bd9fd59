r"""Experiments of Criteo size (14M rows): a seeded stand-in with Criteo's schema, Parquet
files written and read in column batches, and a summary that reads only what it shows.

The Criteo Uplift Prediction dataset v2.1 (Diemert et al. 2018) has 13,979,592 rows, twelve
anonymised float features ``f0 … f11``, ``treatment`` (85 % treated), ``visit`` (4.70 %),
``conversion`` (0.29 %) and ``exposure``.  This machine is offline, so
:func:`make_criteo_like` simulates an experiment with that schema, the published treatment
share and outcome rates, and a **known** individual effect on visits:

* features: each ``f_j`` takes its most frequent value with the share seen in the first
  1,000 rows of the real file (``../shared/data/criteo_uplift_head1000.csv``), else a normal
  draw with the mean and sd of that column's other values (float32, as Criteo ships them);
* ``treatment`` ~ Bernoulli(0.85);
* visit: :math:`p_0(x) = \sigma(-3.92 + 0.8\,u(x))` with :math:`u` a clipped, weighted sum of
  the features' standardised distances from their modes, and
  :math:`p_1(x) = \sigma(-3.92 + 0.8\,u(x) + 0.26 + 0.25\,h(x))`,
  :math:`h(x) = \tanh((f_2 - 8.4)/0.3) + \tanh((f_9 - 20)/8)/2`; so the rates come out at about
  3.83 % (control) and 4.85 % (treated), 4.70 % overall, as published, and
  :math:`\tau(x) = p_1(x) - p_0(x)` varies with ``f2`` and ``f9``;
* conversion: among visits, 5.0 % (control) / 6.4 % (treated) — 0.19 % / 0.31 % of rows;
  exposure: 3.6 % of the treated rows, none of the control rows.

Rows come in blocks of :data:`BLOCK_ROWS`, block ``i`` drawn from child ``i`` of
``SeedSequence(random_state)``: the first ``n`` rows are the same whatever ``n`` is, and a
Parquet file written block by block (:func:`write_criteo_like`) holds exactly the rows of
:func:`make_criteo_like` without ever holding them all.

References
----------
Diemert, E., Betlei, A., Renaudin, C., Amini, M.-R. (2018). A Large Scale Benchmark for
Uplift Modeling. AdKDD.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.data.abdata import ABData, DataError
from core.data.abmapping import (
    _ID_NAME,
    MAX_ARMS,
    check_arms_and_outcome,
    check_distinct_roles,
)

__all__ = ["BLOCK_ROWS", "CRITEO_FEATURES", "CRITEO_FILE", "CRITEO_ROWS", "check_ab_codes",
           "criteo_parquet", "file_columns", "file_path", "iter_criteo_like", "load_ab_file",
           "load_criteo", "make_criteo_like", "parquet_summary", "read_parquet_columns",
           "typed_path", "write_criteo_like"]

#: Rows of Criteo Uplift v2.1.
CRITEO_ROWS = 13_979_592
CRITEO_FEATURES = [f"f{j}" for j in range(12)]
#: Rows per seeded block of the generator.
BLOCK_ROWS = 1_000_000

# Per-feature mode, share of rows at the mode, mean and sd of the other values: read off the
# first 1,000 rows of the real file (../shared/data/criteo_uplift_head1000.csv).
_MODE = np.array([12.6164, 10.0597, 8.2144, 4.6799, 10.2805, 4.1155, 0.2944, 4.8338, 3.9719,
                  13.1901, 5.3004, -0.1687])
_MODE_SHARE = np.array([.295, .992, .531, .859, .953, .961, .295, .961, .531, .804, .953, .992])
_REST_MEAN = np.array([22.585, 10.944, 8.705, 2.1, 11.813, 2.469, -5.49, 10.098, 3.893, 26.21,
                       6.128, -0.423])
_REST_SD = np.array([3.737, .592, .244, 1.655, 1.27, .868, 4.138, 1.766, .056, 8.509, .287, .137])
_WEIGHT = np.array([.5, .2, .3, -.2, .2, -.2, -.3, .2, .2, .5, .2, -.1])
_SCALE = np.maximum(np.abs(_REST_MEAN - _MODE), _REST_SD)
_BASE, _SLOPE, _LIFT, _HETERO = -3.92, 0.8, 0.26, 0.25
_CONVERT = (0.050, 0.064)   # P(conversion | visit), control / treated
_EXPOSED = 0.036            # P(exposure | treated)


def _block(rows: int, seed: np.random.SeedSequence) -> dict[str, np.ndarray]:
    # one stream per draw, each read row by row: the first k rows of a block are the same
    # whatever the block's length (a generator reads its stream in order)
    s_away, s_rest, s_t, s_visit, s_conv, s_exp = (
        np.random.default_rng(child) for child in seed.spawn(6))
    away = s_away.random((rows, 12)) >= _MODE_SHARE
    rest = _REST_MEAN + _REST_SD * s_rest.standard_normal((rows, 12))
    X = np.where(away, rest, _MODE).astype(np.float32)
    u = np.clip((X - _MODE) / _SCALE, -3, 3) @ _WEIGHT
    h = np.tanh((X[:, 2] - 8.4) / 0.3) + 0.5 * np.tanh((X[:, 9] - 20.0) / 8.0)
    logit0 = _BASE + _SLOPE * u
    p0 = 1 / (1 + np.exp(-logit0))
    p1 = 1 / (1 + np.exp(-(logit0 + _LIFT + _HETERO * h)))
    t = (s_t.random(rows) < 0.85).astype(np.int8)
    visit = (s_visit.random(rows) < np.where(t == 1, p1, p0)).astype(np.int8)
    conversion = (visit.astype(bool) & (s_conv.random(rows) < np.where(t == 1, *_CONVERT[::-1])))
    exposure = (t == 1) & (s_exp.random(rows) < _EXPOSED)
    out = {name: X[:, j] for j, name in enumerate(CRITEO_FEATURES)}
    out.update(treatment=t, conversion=conversion.astype(np.int8), visit=visit,
               exposure=exposure.astype(np.int8), tau=(p1 - p0).astype(np.float32))
    return out


def _seed_sequence(random_state: Any) -> np.random.SeedSequence:
    """``random_state`` (None, an int, a SeedSequence or a Generator) as a SeedSequence; a
    Generator gives one seed drawn from it (so it advances, as any use of it does)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    if random_state is None or (isinstance(random_state, (int, np.integer))
                                and not isinstance(random_state, bool) and random_state >= 0):
        return np.random.SeedSequence(None if random_state is None else int(random_state))
    raise ValueError("random_state must be None, a non-negative int, a SeedSequence or a "
                     f"numpy Generator; got {random_state!r}.")


def iter_criteo_like(n_rows: int = CRITEO_ROWS, *, random_state: Any = 0
                     ) -> Iterator[dict[str, np.ndarray]]:
    """The rows of :func:`make_criteo_like` as blocks of at most :data:`BLOCK_ROWS` rows:
    dicts of column → array (``f0…f11`` float32, ``treatment / conversion / visit /
    exposure`` int8, ``tau`` = the true effect on visits, float32)."""
    from core._validation import check_positive_int

    n_rows = check_positive_int(n_rows, "n_rows")
    n_blocks = -(-n_rows // BLOCK_ROWS)
    seeds = _seed_sequence(random_state).spawn(n_blocks)
    for i, seed in enumerate(seeds):
        yield _block(min(BLOCK_ROWS, n_rows - i * BLOCK_ROWS), seed)


def make_criteo_like(n_rows: int = CRITEO_ROWS, *, random_state: Any = 0) -> ABData:
    """A seeded experiment with Criteo Uplift v2.1's schema, treatment share and outcome rates
    and a known effect on visits (see the module docstring).

    Parameters
    ----------
    n_rows : int, default 13,979,592 (Criteo's size)
    random_state : int, SeedSequence, Generator or None, default 0
        Seed; the first ``n`` rows do not depend on ``n_rows`` (same seed).

    Returns
    -------
    ABData
        ``X`` = ``f0 … f11`` (float32), ``t`` = treatment, ``y`` = visit, ``tau`` = the true
        τ(x) on visits, ``extra`` = ``conversion`` and ``exposure``.  At 14M rows it takes
        about 1 GB.

    Examples
    --------
    >>> d = make_criteo_like(10_000, random_state=0)
    >>> d.n, list(d.X.columns[:3]), str(d.X.dtypes.iloc[0])
    (10000, ['f0', 'f1', 'f2'], 'float32')
    """
    from core._validation import check_positive_int

    n_rows = check_positive_int(n_rows, "n_rows")
    X = np.empty((n_rows, 12), dtype=np.float32)
    cols = {name: np.empty(n_rows, dtype=np.int8)
            for name in ("treatment", "conversion", "visit", "exposure")}
    tau = np.empty(n_rows, dtype=np.float32)
    seed = (f"seed {random_state}" if isinstance(random_state, (int, np.integer))
            else "unseeded" if random_state is None
            else f"seeded by a {type(random_state).__name__}")
    at = 0
    for block in iter_criteo_like(n_rows, random_state=random_state):
        m = block["visit"].shape[0]
        for j, name in enumerate(CRITEO_FEATURES):
            X[at:at + m, j] = block[name]
        for name, arr in cols.items():
            arr[at:at + m] = block[name]
        tau[at:at + m] = block["tau"]
        at += m
    return ABData(X=pd.DataFrame(X, columns=CRITEO_FEATURES, copy=False), y=cols["visit"],
                  t=cols["treatment"], tau=tau,
                  extra={"conversion": cols["conversion"], "exposure": cols["exposure"]},
                  name=f"Criteo-like stand-in ({n_rows:,} rows, {seed})",
                  description="Simulated with Criteo Uplift v2.1's schema, treatment share and "
                              "visit / conversion rates and a known effect on visits "
                              "(core.data.large.make_criteo_like).")


def write_criteo_like(path: str | Path, n_rows: int = CRITEO_ROWS, *,
                      random_state: Any = 0, scores: dict | None = None) -> Path:
    """Write :func:`make_criteo_like`'s rows to one Parquet file, block by block (one row
    group per block; memory stays at one block).

    ``scores`` maps extra column names to functions ``block → array`` (e.g. a noisy copy of
    ``tau`` as a model score), written as float32 columns.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    writer = None
    try:
        for block in iter_criteo_like(n_rows, random_state=random_state):
            for name, fn in (scores or {}).items():
                block[name] = np.asarray(fn(block), dtype=np.float32)
            table = pa.table(block)
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema, compression="snappy")
            writer.write_table(table)
        writer.close()
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def read_parquet_columns(path: str | Path, columns: Sequence[str], *,
                         dtypes: dict[str, Any] | None = None,
                         batch_rows: int = 1 << 20,
                         gaps_as_nan: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """Read some columns of a Parquet file into numpy arrays, in record batches.

    Only the named columns are read; each array is allocated once at its final size (the
    row count comes from the file's metadata) and filled batch by batch, so the peak memory
    is the arrays plus one batch.  Floating columns become float32 unless ``dtypes`` says
    otherwise; other columns keep their type (0/1 integers stay int8 when stored so).
    The columns named in ``gaps_as_nan`` (features: LightGBM handles their gaps; ranking
    scores) are read as float32, whole numbers too, unless ``dtypes`` says otherwise, and
    their missing values become NaN.

    Raises
    ------
    DataError
        The file is missing or not Parquet, a column is missing (the message lists the
        file's columns), or another column holds missing values (the first rows named).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise DataError(f"{path} cannot be read as Parquet: {exc}") from None
    names = pf.schema_arrow.names
    missing = [c for c in columns if c not in names]
    if missing:
        raise DataError(f"Column(s) {', '.join(map(repr, missing))} not in {Path(path).name}; "
                        f"its columns are {', '.join(names)}.")
    n = pf.metadata.num_rows
    out: dict[str, np.ndarray] = {}
    for c in columns:
        kind = pf.schema_arrow.field(c).type
        # a column whose gaps become NaN is read as float32, whole numbers too (an Int64
        # feature or score with one gap refused the whole file)
        want = (dtypes or {}).get(c) or (np.float32 if pa.types.is_floating(kind)
                                         or c in gaps_as_nan else kind.to_pandas_dtype())
        out[c] = np.empty(n, dtype=want)
    at = 0
    for batch in pf.iter_batches(batch_size=batch_rows, columns=list(columns)):
        m = batch.num_rows
        for c in columns:
            col = batch.column(c)
            if col.null_count:
                if c in gaps_as_nan and out[c].dtype.kind == "f":
                    col = col.cast(pa.float64()).fill_null(float("nan"))
                else:
                    _refuse_gaps(c, Path(path).name, col, at, _null_count(pf.metadata, c))
            out[c][at:at + m] = col.to_numpy(zero_copy_only=False)
        at += m
    return out


def _refuse_gaps(column: str, file: str, col: Any, first_row: int,
                 total: int | None = None) -> None:
    """DataError naming the first data rows (1-based, counted over the whole file) where
    ``col``, the batch of the file starting at data row ``first_row + 1``, is missing, and
    the number of missing values in the whole column when it is known (``total``: a
    Parquet file's statistics) — the first batch with a gap is where reading stops."""
    rows = np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))
    shown = ", ".join(f"{first_row + r + 1:,}" for r in rows[:5])
    many = len(rows) > 1  # "the first at data row 121" of 4 in all
    count = f"{total:,} in all, " if total else ""
    raise DataError(f"Column {column!r} of {file} has missing values ({count}the first at "
                    f"data row{'s' * many} {shown}{', …' if len(rows) > 5 else ''}); fill or "
                    "drop them first.")


def _null_count(meta: Any, column: str) -> int | None:
    """Missing values of ``column`` (a top-level, non-nested column) in the whole Parquet
    file, from its row groups' statistics (``None`` when a row group has none).  Statistics
    are kept per leaf column: its leaf is found by its path, since a nested column before it
    (a struct's two fields) shifts the leaves' positions."""
    leaves = [meta.schema.column(k).path for k in range(meta.num_columns)]
    if column not in leaves:
        return None
    j = leaves.index(column)
    total = 0
    for i in range(meta.num_row_groups):
        stats = meta.row_group(i).column(j).statistics
        if stats is None or not stats.has_null_count:
            return None
        total += stats.null_count
    return total


def _check_columns(path: Path, names: Sequence[str], schema: Any, treatment: str,
                   outcome: str) -> None:
    """Refuse a treatment / outcome column that is missing, the same column twice, or of a
    stored type that cannot hold 0/1 codes (text, dates…; numbers, decimals and booleans
    can), from the file's schema, before anything is read."""
    import pyarrow as pa

    for col, what in ((treatment, "treatment"), (outcome, "outcome")):
        if col not in names:
            raise DataError(f"Column {col!r} ({what}) is not in {path.name}; its columns are "
                            f"{', '.join(names)}.")
    check_distinct_roles(treatment, outcome)
    for col, what in ((treatment, "treatment"), (outcome, "outcome")):
        kind = schema.field(col).type
        if pa.types.is_dictionary(kind):  # pandas' categories
            kind = kind.value_type
        if (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                or pa.types.is_boolean(kind) or pa.types.is_decimal(kind)):
            continue
        if pa.types.is_null(kind):
            raise DataError(f"Column {col!r} ({what}) of {path.name} is empty: every value is "
                            "missing.")
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        raise DataError(
            f"Column {col!r} ({what}) of {path.name} holds {'text' if text else kind} values, "
            "not 0/1 codes. A large file is read as it is: code it 0/1 first (treated / "
            "responded = 1), or, if it fits in memory, use 'Upload an A/B CSV', which maps "
            "text codes.")


def check_ab_codes(t: np.ndarray, y: np.ndarray, treatment: str, outcome: str) -> None:
    """The checks an uploaded CSV's arm and outcome get, for the arrays of a large file: no
    missing value, only 0/1 codes, then :func:`core.data.abmapping.check_arms_and_outcome`
    (both arms with at least 2 rows, an outcome that is not constant) — the upload's own.

    Raises
    ------
    DataError
        With the column's name and what it holds.
    """
    for values, col, what in ((t, treatment, "treatment"), (y, outcome, "outcome")):
        if values.dtype.kind == "f":
            missing = int(np.count_nonzero(np.isnan(values)))
            if missing:
                raise DataError(f"Column {col!r} ({what}) has {missing:,} missing value(s) "
                                "(NaN); fill or drop those rows first.")
        codes = np.isin(values, (0, 1))
        if codes.all():
            continue
        other = np.unique(values[~codes])
        shown = ", ".join(f"{v:.10g}" for v in other[:5]) + (" and more" if other.size > 5
                                                             else "")
        distinct = other.size + int(np.isin((0, 1), values).sum())
        if what == "treatment" and distinct > MAX_ARMS:
            raise DataError(
                f"Column {col!r} has {distinct:,} distinct values (other than 0/1: {shown}): "
                "it does not look like a treatment column. The "
                "treatment column says which arm each row was assigned to; in a large file, "
                "1 = treated and 0 = control. Pick that column as the treatment.")
        hint = (" To compare two of several arms, keep their rows and code them 0/1."
                if what == "treatment" else
                " A continuous outcome (spend, revenue) is read from an uploaded CSV; a large "
                "file needs a 0/1 outcome.")
        raise DataError(f"Column {col!r} ({what}) must be coded 0/1 in a large file; it "
                        f"holds other values: {shown}.{hint}")
    check_arms_and_outcome(t, y, treatment, outcome)


def _float_dtypes(schema: Any, columns: Sequence[str]) -> dict[str, Any]:
    """float64 for the floating columns among ``columns`` (their codes checked unrounded);
    the others keep their stored type."""
    import pyarrow as pa

    return {c: np.float64 for c in columns if pa.types.is_floating(schema.field(c).type)
            or pa.types.is_decimal(schema.field(c).type)}


def parquet_summary(path: str | Path, *, treatment: str, outcome: str) -> dict[str, Any]:
    """What the Data page shows of a large file without loading its features: rows, columns
    and their types (from the metadata), size on disk, treated share and outcome rate per arm
    (reading only the two columns).

    Raises
    ------
    DataError
        As :func:`load_ab_file` for the two columns: missing, not 0/1 (text included), one
        arm only, a constant outcome — so the page says so before the file is used.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = file_path(path)
    names = file_columns(path)
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise DataError(f"{path.name} cannot be read as Parquet: {exc}") from None
    _check_columns(path, names, pf.schema_arrow, treatment, outcome)
    cols = read_parquet_columns(path, [treatment, outcome],
                                dtypes=_float_dtypes(pf.schema_arrow, [treatment, outcome]))
    t, y = cols[treatment], cols[outcome].astype(np.float64, copy=False)
    check_ab_codes(t, y, treatment, outcome)
    treated = t == 1
    return {"rows": int(pf.metadata.num_rows), "row groups": pf.metadata.num_row_groups,
            "bytes": Path(path).stat().st_size,
            "columns": {f.name: str(f.type) for f in pf.schema_arrow},
            "treated share": float(treated.mean()),
            "outcome treated": float(y[treated].mean()),
            "outcome control": float(y[~treated].mean())}


#: The publisher's file (Criteo AI Lab, https://ailab.criteo.com/criteo-uplift-prediction-dataset/).
CRITEO_FILE = "criteo-research-uplift-v2.1.csv.gz"
CRITEO_URL = "http://go.criteo.net/criteo-research-uplift-v2.1.csv.gz"


def criteo_parquet(*, path: str | Path | None = None, data_dir: str | Path | None = None,
                   allow_download: bool = False) -> Path:
    """The real Criteo Uplift v2.1 data as a Parquet file in the cache, converted once from
    the publisher's CSV (``criteo-research-uplift-v2.1.csv.gz``, 13,979,592 rows).

    The CSV is looked for at ``path``, else in ``data_dir`` / the data directories; with
    ``allow_download`` it is downloaded from :data:`CRITEO_URL` (about 300 MB).  Criteo
    publishes no checksum, so the first copy's SHA-256 is recorded beside the Parquet file
    (``.sha256``) and a later copy with another checksum is refused; the conversion streams
    the CSV with pyarrow (features float32, arms and outcomes int8) and checks the column
    names and the row count.

    Raises
    ------
    DataError
        No copy found (the message says where to get it and names the offline stand-in
        :func:`make_criteo_like`), another copy than the recorded one, wrong columns.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from core.data.datafiles import cache_dir, data_dir_candidates, sha256_file

    candidates = ([Path(path)] if path is not None else
                  [Path(d) / CRITEO_FILE for d in ([Path(data_dir)] if data_dir is not None
                                                    else data_dir_candidates())])
    source = next((p for p in candidates if p.is_file()), None)
    target = cache_dir() / "criteo" / "criteo-uplift-v2.1.parquet"
    if source is None and target.is_file():
        return target
    if source is None and allow_download:
        import urllib.request

        source = cache_dir() / "criteo" / CRITEO_FILE
        source.parent.mkdir(parents=True, exist_ok=True)
        tmp = source.with_name(source.name + ".part")
        try:
            urllib.request.urlretrieve(CRITEO_URL, tmp)  # noqa: S310 - the publisher's URL
        except OSError as exc:
            raise DataError(f"Downloading Criteo's file from {CRITEO_URL} failed ({exc}).") \
                from None
        tmp.replace(source)
    if source is None:
        raise DataError(
            f"The Criteo Uplift v2.1 file {CRITEO_FILE!r} is not on this machine (looked in "
            f"{', '.join(str(c.parent) for c in candidates)}). Download it from Criteo AI Lab "
            f"({CRITEO_URL}, CC BY-NC-SA 4.0) into one of those folders — or use the seeded "
            "stand-in with its schema and rates (make_criteo_like / 'Criteo-size stand-in').")
    digest = sha256_file(source)
    recorded = target.with_suffix(".sha256")
    if recorded.is_file() and recorded.read_text().strip() != digest:
        raise DataError(f"{source} (SHA-256 {digest[:12]}…) is not the copy converted before "
                        f"(SHA-256 {recorded.read_text().strip()[:12]}…); remove {target.parent} "
                        "to convert this one.")
    if target.is_file() and recorded.is_file():
        return target
    types = {**{f: pa.float32() for f in CRITEO_FEATURES},
             **{c: pa.int8() for c in ("treatment", "conversion", "visit", "exposure")}}
    try:
        reader = pcsv.open_csv(source, convert_options=pcsv.ConvertOptions(column_types=types))
    except (OSError, pa.ArrowInvalid) as exc:
        raise DataError(f"{source} cannot be read as Criteo's CSV: {exc}") from None
    missing = sorted(set(types) - set(reader.schema.names))
    if missing:
        raise DataError(f"{source} lacks Criteo's column(s) {', '.join(missing)}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    with pq.ParquetWriter(tmp, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
    tmp.replace(target)
    recorded.write_text(digest + "\n")
    return target


def load_criteo(outcome: str = "visit", *, path: str | Path | None = None,
                data_dir: str | Path | None = None, allow_download: bool = False) -> ABData:
    """Criteo Uplift v2.1 (13,979,592 rows) as :class:`ABData`: features ``f0 … f11``
    (float32), ``t`` = treatment, ``y`` = ``outcome`` (``visit`` or ``conversion``), the other
    outcome and ``exposure`` in ``extra`` — read from the Parquet copy of
    :func:`criteo_parquet` in column batches."""
    from core._validation import check_choice

    check_choice(outcome, "outcome", ("visit", "conversion"))
    file = criteo_parquet(path=path, data_dir=data_dir, allow_download=allow_download)
    other = "conversion" if outcome == "visit" else "visit"
    cols = read_parquet_columns(file, [*CRITEO_FEATURES, "treatment", outcome, other,
                                       "exposure"])
    X = pd.DataFrame({f: cols.pop(f) for f in CRITEO_FEATURES}, copy=False)
    n = len(X)
    note = [] if n == CRITEO_ROWS else [
        f"This copy has {n:,} rows; Criteo Uplift v2.1 has {CRITEO_ROWS:,}."]
    return ABData(X=X, y=cols[outcome], t=cols["treatment"], warnings=note,
                  extra={other: cols[other], "exposure": cols["exposure"]},
                  name=f"Criteo Uplift v2.1 — {outcome}",
                  description="Diemert, Betlei, Renaudin & Amini (2018), Criteo AI Lab; "
                              "CC BY-NC-SA 4.0 (non-commercial).")


#: Names of a known effect or a model's uplift score: not features (an oracle would leak)
#: but a ranking score (``ABData.scores``, offered as a ranker on Curves), named as in the file.
EFFECT_COLUMNS = frozenset({"tau", "ite", "cate", "uplift", "true_effect"})
#: Column names never taken as features by default: outcomes (those :func:`guess_columns`
#: knows), exposure and the known effects (post-treatment or oracle columns would leak).
NOT_FEATURES = frozenset({"visit", "visited", "conversion", "converted", "exposure",
                          "exposed", "outcome", "y", "target", "label", "response",
                          "responded", "purchase", "purchased", "click", "clicked", "spend",
                          "revenue"}) | EFFECT_COLUMNS


def typed_path(text: str | Path) -> str:
    """A typed or pasted path as a plain one: surrounding spaces and quotes removed, ``~``
    expanded (``" '~/ab.csv' "`` → ``"/home/me/ab.csv"``); nothing is checked."""
    text = str(text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    return str(Path(text).expanduser()) if text else ""


def file_path(path: str | Path) -> Path:
    """The file a typed or pasted path names: surrounding spaces and quotes (a "copy as path"
    gives ``'/data/x.parquet'``) removed, ``~`` expanded.

    Raises
    ------
    DataError
        Nothing there, or a folder.
    """
    out = Path(typed_path(path))
    if out.is_dir():
        parts = [p for p in out.rglob("*") if p.suffix.lower() in (".parquet", ".pq")]
        if len(parts) > 1:  # a partitioned dataset: one file of it would be part of the data
            raise DataError(
                f"{out} is a folder of {len(parts):,} Parquet files (a partitioned dataset): "
                "one of them holds only part of the rows, and a partition column in the "
                "folder names would be lost. Write it to one file first (pyarrow: "
                "pyarrow.dataset.write_dataset, or pandas.read_parquet(folder).to_parquet("
                "'one.parquet')), or evaluate it on Dask (README: Criteo size … Dask).")
        raise DataError(f"{out} is a folder: give the path of a Parquet or CSV file in it.")
    if not out.is_file():
        raise DataError(f"No file at {out}. Give the full path of a Parquet or CSV file.")
    return out


def file_columns(path: str | Path) -> list[str]:
    """Column names of a Parquet or CSV file, read from its metadata / header only.

    A CSV whose header reads as one column holding ``;`` or a tab is refused: large files
    are read comma-separated (the upload reads ``;`` and tabs too)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    path = file_path(path)
    parquet = path.suffix.lower() in (".parquet", ".pq")
    _check_file_kind(path, parquet)
    try:
        if parquet:
            names = list(pq.ParquetFile(path).schema_arrow.names)
        else:
            names = list(pcsv.open_csv(path).schema.names)
    except UnicodeDecodeError:
        raise DataError(f"{path.name} is not UTF-8 text (a Windows / Latin-1 export?): save it "
                        "as CSV UTF-8, or upload it on the Upload tab, which reads Latin-1 "
                        "too.") from None
    except (OSError, pa.ArrowInvalid) as exc:
        what = ("is not a readable Parquet file (damaged, cut short, or another format under "
                "a .parquet name)" if parquet else "cannot be read as CSV")
        raise DataError(f"{path.name} {what}. pyarrow says: {exc}") from None
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise DataError(f"{path.name} has duplicate column names: "
                        + ", ".join(f"{n!r} ({names.count(n)}×)" for n in dup)
                        + ". Give every column its own name.")
    if parquet:
        return names
    if len(names) == 1:
        sep = next((f"'{c}'" if c == ";" else "tab" for c in (";", "\t") if c in names[0]), "")
        raise DataError(
            f"{path.name} reads as one column ({names[0][:60]!r}"
            f"{'…' if len(names[0]) > 60 else ''}): a file given by path must be "
            "comma-separated (CSV) or Parquet"
            + (f"; this one seems {sep}-separated — save it with commas, or upload it on the "
               "Upload tab, which reads ';' and tabs" if sep else "")
            + ". An A/B test needs at least a treatment and an outcome column.")
    return names


def _check_file_kind(path: Path, parquet: bool) -> None:
    """A plain sentence, before pyarrow's, for a file this user cannot read, a Parquet file
    under a CSV name or the other way round, and UTF-16 text (pyarrow reads UTF-8)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
    except PermissionError:
        raise DataError(f"{path.name} cannot be opened: permission denied (this user may not "
                        "read it).") from None
    except OSError as exc:
        raise DataError(f"{path.name} cannot be opened: {exc.strerror or exc}.") from None
    if head == b"PAR1" and not parquet:
        raise DataError(f"{path.name} is a Parquet file under another name: rename it to end "
                        "in .parquet.")
    if parquet and head != b"PAR1":
        raise DataError(f"{path.name} is not a Parquet file (those start with 'PAR1'; a CSV "
                        "under a .parquet name? then rename it to end in .csv).")
    if not parquet and head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise DataError(f"{path.name} is UTF-16 text: save it as CSV UTF-8, or upload it on "
                        "the Upload tab, which reads UTF-16.")


def load_ab_file(path: str | Path, *, treatment: str, outcome: str,
                 features: Sequence[str] | None = None) -> ABData:
    """An A/B test from a large Parquet or CSV file given by path, read with pyarrow in
    column batches: the numeric feature columns as float32 (default: every numeric column
    but treatment and outcome), ``t`` and ``y`` coded 0/1.  A CSV is streamed (never parsed
    into one pandas frame).

    Raises
    ------
    DataError
        No such file, not Parquet / CSV, a missing column, a treatment or outcome that is not
        0/1 (text included), one arm only or fewer than 2 rows in an arm, a constant outcome
        (:func:`check_ab_codes`), missing values, no numeric feature.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    path = file_path(path)
    names = file_columns(path)
    parquet = path.suffix.lower() in (".parquet", ".pq")
    if parquet:
        schema = pq.ParquetFile(path).schema_arrow
    else:
        reader = pcsv.open_csv(path)
        schema = reader.schema
        if all(pa.types.is_null(f.type) for f in schema) and next(iter(reader), None) is None:
            # a header line alone: say so, as for a Parquet file of no rows (its columns'
            # type, null, read "every value is missing")
            raise DataError(f"No rows with {treatment!r} and {outcome!r}: the data is empty "
                            f"({path.name} holds a header line only).")
    _check_columns(path, names, schema, treatment, outcome)
    notes = []
    id_column = None
    effects: list[str] = []
    if features is None:
        others = [f for f in schema if f.name not in (treatment, outcome)]
        numeric = [f.name for f in others
                   if pa.types.is_floating(f.type) or pa.types.is_integer(f.type)]
        ids = [f.name for f in others if pa.types.is_integer(f.type) and _ID_NAME.search(f.name)]
        features = [c for c in numeric if c.lower() not in NOT_FEATURES and c not in ids]
        left_out = [c for c in numeric if c not in features and c not in ids]
        text = [f.name for f in others if f.name not in numeric]
        if ids:
            id_column = ids[0]
            notes.append(f"Not used as features (ID-like: {', '.join(ids)}); exports name the "
                         f"rows by {id_column!r}.")
        effects = [c for c in left_out if c.lower() in EFFECT_COLUMNS]
        if left_out:
            notes.append(f"Not used as features (other outcomes, exposure or a known effect): "
                         f"{', '.join(left_out)}.")
        if text:
            notes.append(f"Not used as features (not numbers; a large file's features are read "
                         f"as numbers): {', '.join(text)}.")
    if not features:
        raise DataError(f"{path.name} has no numeric feature column besides {treatment!r} and "
                        f"{outcome!r}.")
    floats = [*features, *effects]  # float32, a gap kept as NaN
    wanted = [*floats, treatment, outcome, *([id_column] if id_column else [])]
    if parquet:
        cols = read_parquet_columns(path, wanted,
                                    dtypes=_float_dtypes(schema, [treatment, outcome]),
                                    gaps_as_nan=floats)
    else:
        parts: dict[str, list] = {c: [] for c in wanted}
        # arm and outcome as float64 (codes checked unrounded), or bool when they hold
        # true/false (which pyarrow does not convert to a number)
        coded = {c: pa.bool_() if pa.types.is_boolean(schema.field(c).type) else pa.float64()
                 for c in (treatment, outcome)}
        try:
            reader = pcsv.open_csv(path, convert_options=pcsv.ConvertOptions(
                include_columns=wanted,
                column_types={**{f: pa.float32() for f in floats}, **coded}))
            at = 0
            for batch in reader:
                for c in wanted:
                    col = batch.column(c)
                    if col.null_count:
                        if c not in floats:
                            _refuse_gaps(c, path.name, col, at)
                        col = col.fill_null(float("nan"))
                    parts[c].append(col.to_numpy(zero_copy_only=False))
                at += batch.num_rows
        except pa.ArrowInvalid as exc:  # a value pyarrow cannot convert, a ragged row
            raise DataError(
                f"{path.name} could not be read to the end: a value that is not a number in "
                "a numeric column, or a row with a different number of fields (pyarrow: "
                f"{exc})") from None
        cols = {c: np.concatenate(v) if v else np.empty(0) for c, v in parts.items()}
    check_ab_codes(cols[treatment], cols[outcome], treatment, outcome)
    X = pd.DataFrame({f: cols[f].astype(np.float32, copy=False) for f in features},
                     copy=False)
    if gaps := {f: int(n) for f, n in X.isna().sum().items() if n}:
        notes.append("Missing feature values are kept (LightGBM handles them): "
                     + ", ".join(f"{f!r} {n:,}" for f, n in gaps.items()) + ".")
    ids = {} if id_column is None else {"ids": cols[id_column], "id_name": id_column}
    scores = {}
    for c in effects:  # a ranker must score every row
        score = cols[c].astype(np.float32, copy=False)
        if np.isfinite(score).all():
            scores[c] = score
        else:
            bad = int((~np.isfinite(score)).sum())
            notes.append(f"{c!r} is not offered as a ranker: {bad:,} of its values "
                         f"{'is' if bad == 1 else 'are'} missing or infinite.")
    if scores:
        notes.append(f"{', '.join(map(repr, scores))} {'is' if len(scores) == 1 else 'are'} "
                     "offered as a ranker on Curves (a known effect or a model's uplift "
                     "score).")
    return ABData(X=X, y=cols[outcome].astype(np.int8), t=cols[treatment].astype(np.int8),
                  name=path.name, warnings=notes, scores=scores, **ids,
                  description=f"Read from {path} ({path.stat().st_size:,} bytes) in column "
                              "batches.",
                  source_columns={"treatment": treatment, "outcome": outcome})
