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

__all__ = ["BLOCK_ROWS", "CRITEO_FEATURES", "CRITEO_ROWS", "iter_criteo_like",
           "make_criteo_like", "parquet_summary", "read_parquet_columns", "write_criteo_like"]

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
    rng = np.random.default_rng(seed)
    away = rng.random((rows, 12)) >= _MODE_SHARE
    rest = _REST_MEAN + _REST_SD * rng.standard_normal((rows, 12))
    X = np.where(away, rest, _MODE).astype(np.float32)
    u = np.clip((X - _MODE) / _SCALE, -3, 3) @ _WEIGHT
    h = np.tanh((X[:, 2] - 8.4) / 0.3) + 0.5 * np.tanh((X[:, 9] - 20.0) / 8.0)
    logit0 = _BASE + _SLOPE * u
    p0 = 1 / (1 + np.exp(-logit0))
    p1 = 1 / (1 + np.exp(-(logit0 + _LIFT + _HETERO * h)))
    t = (rng.random(rows) < 0.85).astype(np.int8)
    visit = (rng.random(rows) < np.where(t == 1, p1, p0)).astype(np.int8)
    conversion = (visit.astype(bool) & (rng.random(rows) < np.where(t == 1, *_CONVERT[::-1])))
    exposure = (t == 1) & (rng.random(rows) < _EXPOSED)
    out = {name: X[:, j] for j, name in enumerate(CRITEO_FEATURES)}
    out.update(treatment=t, conversion=conversion.astype(np.int8), visit=visit,
               exposure=exposure.astype(np.int8), tau=(p1 - p0).astype(np.float32))
    return out


def iter_criteo_like(n_rows: int = CRITEO_ROWS, *, random_state: int | None = 0
                     ) -> Iterator[dict[str, np.ndarray]]:
    """The rows of :func:`make_criteo_like` as blocks of at most :data:`BLOCK_ROWS` rows:
    dicts of column → array (``f0…f11`` float32, ``treatment / conversion / visit /
    exposure`` int8, ``tau`` = the true effect on visits, float32)."""
    from core._validation import check_positive_int

    n_rows = check_positive_int(n_rows, "n_rows")
    n_blocks = -(-n_rows // BLOCK_ROWS)
    seeds = np.random.SeedSequence(random_state).spawn(n_blocks)
    for i, seed in enumerate(seeds):
        yield _block(min(BLOCK_ROWS, n_rows - i * BLOCK_ROWS), seed)


def make_criteo_like(n_rows: int = CRITEO_ROWS, *, random_state: int | None = 0) -> ABData:
    """A seeded experiment with Criteo Uplift v2.1's schema, treatment share and outcome rates
    and a known effect on visits (see the module docstring).

    Parameters
    ----------
    n_rows : int, default 13,979,592 (Criteo's size)
    random_state : int or None, default 0
        Seed; the first ``n`` rows do not depend on ``n_rows``.

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
                  name=f"Criteo-like stand-in ({n_rows:,} rows, seed {random_state})",
                  description="Simulated with Criteo Uplift v2.1's schema, treatment share and "
                              "visit / conversion rates and a known effect on visits "
                              "(core.data.large.make_criteo_like).")


def write_criteo_like(path: str | Path, n_rows: int = CRITEO_ROWS, *,
                      random_state: int | None = 0, scores: dict | None = None) -> Path:
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
                         batch_rows: int = 1 << 20) -> dict[str, np.ndarray]:
    """Read some columns of a Parquet file into numpy arrays, in record batches.

    Only the named columns are read; each array is allocated once at its final size (the
    row count comes from the file's metadata) and filled batch by batch, so the peak memory
    is the arrays plus one batch.  Floating columns become float32 unless ``dtypes`` says
    otherwise; other columns keep their type (0/1 integers stay int8 when stored so).

    Raises
    ------
    DataError
        The file is missing or not Parquet, a column is missing (the message lists the
        file's columns), or a column holds missing values.
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
        want = (dtypes or {}).get(c) or (np.float32 if pa.types.is_floating(kind)
                                         else kind.to_pandas_dtype())
        out[c] = np.empty(n, dtype=want)
    at = 0
    for batch in pf.iter_batches(batch_size=batch_rows, columns=list(columns)):
        m = batch.num_rows
        for c in columns:
            col = batch.column(c)
            if col.null_count:
                raise DataError(f"Column {c!r} of {Path(path).name} has missing values "
                                f"(rows {at + 1:,}…{at + m:,}); fill or drop them first.")
            out[c][at:at + m] = col.to_numpy(zero_copy_only=False)
        at += m
    return out


def parquet_summary(path: str | Path, *, treatment: str, outcome: str) -> dict[str, Any]:
    """What the Data page shows of a large file without loading its features: rows, columns
    and their types (from the metadata), size on disk, treated share and outcome rate per arm
    (reading only the two columns)."""
    import pyarrow.parquet as pq

    cols = read_parquet_columns(path, [treatment, outcome], dtypes={outcome: np.float64})
    t, y = cols[treatment], cols[outcome]
    if not np.isin(t, (0, 1)).all():
        raise DataError(f"Column {treatment!r} must be coded 0/1 in a large file.")
    pf = pq.ParquetFile(path)
    treated = t == 1
    return {"rows": int(pf.metadata.num_rows), "row groups": pf.metadata.num_row_groups,
            "bytes": Path(path).stat().st_size,
            "columns": {f.name: str(f.type) for f in pf.schema_arrow},
            "treated share": float(treated.mean()),
            "outcome treated": float(y[treated].mean()),
            "outcome control": float(y[~treated].mean())}
