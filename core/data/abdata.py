"""The one dataset object every part of UpRank works on: :class:`ABData`.

An :class:`ABData` holds a randomised A/B test as features ``X``, a binary outcome ``y`` and a
binary treatment flag ``t`` (both ``int8`` 0/1), plus what the analyst should know about how the
data were read (``warnings``), ready-made ranking scores carried with the data (``scores``), the
true individual effect when it is known (``tau``, synthetic data only) and side columns that are
neither features nor outcome (``extra``, e.g. Hillstrom's ``spend``).

Loaders and the CSV reader live in :mod:`core.data.datasets`; this module only defines the
container, the :class:`DataError` raised for unusable input and :func:`to_csv_bytes`.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_binary

__all__ = ["ABData", "DataError", "as_table", "to_csv_bytes"]


class DataError(ValueError):
    """An input file or table that cannot be used as an A/B test.

    The message is written for an analyst: it names the column (or line) and says what is
    wrong and how to fix it.  Subclass of ``ValueError`` so generic handlers still catch it.
    """


def _float(values) -> np.ndarray:
    """``values`` as a float array: float32 kept as it is, anything else as float64."""
    arr = np.asarray(values)
    return arr if arr.dtype == np.float32 else arr.astype(np.float64, copy=False)


@dataclass
class ABData:
    """A randomised A/B test ready for uplift modelling.

    Parameters
    ----------
    X : DataFrame
        Features, one row per unit.  Numeric columns stay numeric; low-cardinality text
        columns are pandas ``category`` columns (LightGBM uses them as categorical features
        directly).  The index is reset to ``0..n-1``.
    y : array of int8, 0/1
        Outcome (1 = responded).
    t : array of int8, 0/1
        Treatment flag (1 = treated).
    name : str
        Short human label ("Hillstrom — Womens E-Mail vs No E-Mail, visit").
    warnings : list of str
        Plain sentences about what happened while reading: rows or columns dropped,
        missing values kept, encoding fallbacks.
    scores : dict of str to array of float
        Ready-made ranking scores carried with the data (e.g. ``{"true effect τ(x)": tau}``);
        float32 kept, other dtypes stored as float64.
    tau : array of float or None
        True individual treatment effect, when known (synthetic data); float32 kept.
    description : str
        Longer text with the source and citation.
    source_columns : dict
        Which original columns (and codes) became ``t`` and ``y``.
    extra : dict of str to array
        Side columns aligned with the rows, neither features nor outcome (``spend``, ``p0``...).
    ids : array or None
        Row identifiers for exports: the values of the file's ID column (``customer_id``...)
        when it had one, else the 1-based data-row number in the file; ``None`` for data
        not read from a file (exports then number the rows 1..n).
    id_name : str
        Header of the identifier column in exports (the ID column's name, or ``"row"``).
    multiarm : MultiArmData or None
        The whole A/B/n experiment when this object is its two-arm view (any treatment arm
        vs control, see :meth:`core.data.MultiArmData.binary_view`): every arm, and a
        continuous outcome in its own units.  ``None`` for a plain A/B test.
    """

    X: pd.DataFrame
    y: np.ndarray
    t: np.ndarray
    name: str = "data"
    warnings: list[str] = field(default_factory=list)
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    tau: np.ndarray | None = None
    description: str = ""
    source_columns: dict = field(default_factory=dict)
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    ids: np.ndarray | None = None
    id_name: str = "row"
    multiarm: Any = None
    #: (X, y, t, multiarm, digest) of the last fingerprint; see :meth:`fingerprint`
    _fingerprint: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _scores_fingerprint: tuple | None = field(default=None, init=False, repr=False,
                                              compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.X, pd.DataFrame):
            raise TypeError(f"X must be a pandas DataFrame; got {type(self.X).__name__}.")
        self.y = check_binary(self.y, "y")
        self.t = check_binary(self.t, "t")
        n = len(self.X)
        for label, arr in (("y", self.y), ("t", self.t)):
            if arr.shape[0] != n:
                raise ValueError(
                    f"{label} must have one value per row of X ({n}); got {arr.shape[0]}."
                )
        if not self.X.index.equals(pd.RangeIndex(n)):
            self.X = self.X.reset_index(drop=True)
        # float32 stays float32 (a 14M-row τ or score is 56 MB, not 112), the rest float64
        self.scores = {k: _float(v) for k, v in self.scores.items()}
        self.extra = {k: np.asarray(v) for k, v in self.extra.items()}
        if self.tau is not None:
            self.tau = _float(self.tau)
        if self.ids is not None:
            self.ids = np.asarray(self.ids)
        for label, arr in [*([("ids", self.ids)] if self.ids is not None else []),
                           *((f"scores[{k!r}]", v) for k, v in self.scores.items()),
                           *((f"extra[{k!r}]", v) for k, v in self.extra.items()),
                           *([("tau", self.tau)] if self.tau is not None else [])]:
            if arr.shape[:1] != (n,):
                raise ValueError(f"{label} must have length {n}; got shape {arr.shape}.")

    # ------------------------------------------------------------------ sizes
    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.y.shape[0])

    @property
    def n_treated(self) -> int:
        """Number of treated rows (``t == 1``)."""
        return int(self.t.sum())

    @property
    def n_control(self) -> int:
        """Number of control rows (``t == 0``)."""
        return self.n - self.n_treated

    # ------------------------------------------------------------------ helpers
    def fingerprint(self) -> str:
        """SHA-256 hex digest of the data content: column names, dtypes, X values, y and t.

        Stable across processes and machines (pandas' row hash uses a fixed key), so it can
        key caches of trained runs.  ``name``, ``warnings`` and ``scores`` do not enter it.
        The two-arm view of an A/B/n experiment also hashes its arm codes, arm names and
        outcome (so a continuous outcome, or another arm split, is other data).

        The digest is kept on the object (2 s at 14M rows; pages ask for it on every rerun)
        and recomputed when ``X``, ``y``, ``t`` or ``multiarm`` is replaced by another object.
        Arrays changed in place are not noticed: treat an ABData's data as read-only.
        """
        parts = (self.X, self.y, self.t, self.multiarm)
        kept = self._fingerprint
        if kept is not None and all(a is b for a, b in zip(kept, parts)):
            return kept[4]
        digest = self._digest()
        self._fingerprint = (*parts, digest)
        return digest

    def scores_fingerprint(self) -> str:
        """SHA-256 hex digest of the carried ``scores`` (names, dtypes, values).

        The scores stay out of :meth:`fingerprint` (stored runs keep their identity), so a
        cache of results computed from a score keys on both: two files with the same rows
        and an ``uplift`` column scored again by a new model are the same data with other
        scores.  Kept on the object like :meth:`fingerprint` (0.05 s for a 14M-row float32
        score), recomputed when a score is replaced by another array."""
        parts = tuple(self.scores.items())
        kept = self._scores_fingerprint
        if kept is not None and len(kept[0]) == len(parts) and all(
                a[0] == b[0] and a[1] is b[1] for a, b in zip(kept[0], parts)):
            return kept[1]
        h = hashlib.sha256()
        for name, values in parts:
            h.update(json.dumps([name, values.dtype.str]).encode()
                     + np.ascontiguousarray(values).tobytes() + b"|")
        self._scores_fingerprint = (parts, h.hexdigest())
        return self._scores_fingerprint[1]

    def _digest(self) -> str:
        h = hashlib.sha256()
        dtypes = ["category" if isinstance(d, pd.CategoricalDtype) else d.kind
                  for d in self.X.dtypes]
        h.update(json.dumps([list(map(str, self.X.columns)), dtypes]).encode())
        if self.X.shape[1]:
            rows = pd.util.hash_pandas_object(self.X, index=False).to_numpy()
            h.update(np.ascontiguousarray(rows, dtype="<u8").tobytes())
        h.update(b"|y|" + self.y.astype("<i1").tobytes() + b"|t|" + self.t.astype("<i1").tobytes())
        if self.multiarm is not None:
            m = self.multiarm
            h.update(b"|arms|" + json.dumps(m.arms).encode() + m.t.astype("<i8").tobytes()
                     + b"|y|" + m.y.astype("<f8").tobytes())
        return h.hexdigest()

    def numeric_columns(self) -> list[str]:
        """Columns of ``X`` that can serve as ranking scores: numeric and all finite."""
        out = []
        for col in self.X.columns:
            s = self.X[col]
            if (s.dtype.kind in "biuf"
                    and np.isfinite(s.to_numpy(dtype=np.float64, na_value=np.nan)).all()):
                out.append(col)
        return out

    def amount_name(self) -> str | None:
        """The name of the outcome when this is the two-arm view of an amount outcome (the
        first of :meth:`value_columns`: Hillstrom's ``"spend"``), else ``None`` (a 0/1
        outcome: the pages' ``y`` is the outcome itself).

        >>> import pandas as pd
        >>> from core.data.multiarm import MultiArmData
        >>> X = pd.DataFrame({"x": [1.0, 2, 3, 4]})
        >>> spend = MultiArmData(X, y=[0.0, 5, 0, 2.5], t=[0, 1, 2, 0], arms=["no", "a", "b"])
        >>> visit = MultiArmData(X, y=[0, 1, 0, 1], t=[0, 1, 2, 0], arms=["no", "a", "b"])
        >>> spend.binary_view().amount_name(), visit.binary_view().amount_name()
        ('outcome amount', None)
        """
        multi = self.multiarm
        if multi is None or multi.outcome_kind != "continuous":
            return None
        return next(iter(self.value_columns()))

    def value_columns(self) -> dict[str, np.ndarray]:
        """Per-row amounts a profit can be counted in (Compare's "Value per row from"): the
        outcome itself first when this is the two-arm view of an amount outcome — named as
        the side column of :attr:`extra` that holds the same values (Hillstrom's
        ``"spend"``), else as the file's outcome column (:attr:`source_columns`: an upload's
        ``"revenue"``), else ``"outcome amount"`` — then the other side columns.

        >>> import pandas as pd
        >>> from core.data.multiarm import MultiArmData
        >>> arms = MultiArmData(pd.DataFrame({"x": [1.0, 2, 3, 4]}), y=[0.0, 5, 0, 2.5],
        ...                     t=[0, 1, 2, 0], arms=["none", "a", "b"])
        >>> list(arms.binary_view().value_columns()), list(ABData(
        ...     pd.DataFrame({"x": [1.0, 2]}), [0, 1], [1, 0]).value_columns())
        (['outcome amount'], [])
        """
        amount = self.multiarm
        if amount is None or amount.outcome_kind != "continuous":
            return dict(self.extra)
        same = [k for k, v in self.extra.items() if np.array_equal(v, amount.y)]
        column = self.source_columns.get("outcome")  # an upload's: its own name
        first = (same[0] if same else column if isinstance(column, str) and column
                 and column not in self.extra else "outcome amount")
        return {first: amount.y, **{k: v for k, v in self.extra.items() if k != first}}

    def subset(self, idx: Any) -> ABData:
        """Rows ``idx`` (positions, a slice or a boolean mask of length ``n``) as a new object."""
        pos = np.arange(self.n)[idx]
        pos = np.atleast_1d(pos)
        return ABData(
            X=self.X.iloc[pos].reset_index(drop=True),
            y=self.y[pos],
            t=self.t[pos],
            name=self.name,
            warnings=list(self.warnings),
            scores={k: v[pos] for k, v in self.scores.items()},
            tau=None if self.tau is None else self.tau[pos],
            description=self.description,
            source_columns=dict(self.source_columns),
            extra={k: v[pos] for k, v in self.extra.items()},
            ids=self.row_ids()[pos],
            id_name=self.id_name,
            multiarm=None if self.multiarm is None else self.multiarm.subset(pos),
        )

    def row_ids(self, idx: Any = slice(None)) -> np.ndarray:
        """Identifiers of rows ``idx`` (positions) for exports: :attr:`ids`, or 1..n."""
        ids = self.ids if self.ids is not None else np.arange(1, self.n + 1)
        return ids[idx]

    def __repr__(self) -> str:
        return (f"ABData(name={self.name!r}, n={self.n}, treated={self.n_treated}, "
                f"control={self.n_control}, features={list(self.X.columns)!r})")


def to_csv_bytes(data: ABData, *, treatment: str | None = None,
                 outcome: str | None = None) -> bytes:
    """The features plus treatment and outcome columns as UTF-8 CSV bytes.

    Used for the "download sample CSV" button; :func:`core.data.datasets.read_ab_csv` reads the
    result back to the same features, ``y`` and ``t`` (floats are written at full precision).

    Parameters
    ----------
    data : ABData
    treatment, outcome : str, optional
        Column names; default to the original names in ``data.source_columns`` or
        ``"treatment"`` / ``"outcome"``.  A name already used by a feature gets a ``_ab`` suffix.
    """
    buf = io.StringIO()
    as_table(data, treatment=treatment, outcome=outcome, arms=False).to_csv(
        buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")


def as_table(data: ABData, *, rows: int | None = None, treatment: str | None = None,
             outcome: str | None = None, arms: bool = True) -> pd.DataFrame:
    """The features of the first ``rows`` rows (all by default) with the treatment and the
    outcome as two more columns — for an A/B/n experiment, with ``arms``, the arm names and
    its outcome (an amount stays an amount); with ``arms``, a treatment read from text codes
    shows them (Hillstrom's "Womens E-Mail" / "No E-Mail"); else the 0/1 codes of ``t`` and
    ``y``.  Names as
    in :func:`to_csv_bytes`: a name a feature already has gets ``_ab`` (the Data page's
    preview overwrote a feature named ``treatment``)."""
    if not isinstance(data, ABData):
        raise TypeError(f"data must be an ABData; got {type(data).__name__}.")
    names = []
    for given, key in ((treatment, "treatment"), (outcome, "outcome")):
        col = given or str(data.source_columns.get(key) or key)
        while col in data.X.columns or col in names:
            col += "_ab"
        names.append(col)
    end = data.n if rows is None else min(int(rows), data.n)
    frame = data.X.iloc[:end].copy()
    multi = data.multiarm
    treated, control = (data.source_columns.get(f"{k}_value") for k in ("treatment", "control"))
    if isinstance(treated, (list, tuple)):
        treated = " or ".join(map(str, treated))
    if arms and multi is not None and multi.n == data.n:  # the two-arm view: every row
        frame[names[0]] = np.asarray(multi.arms, dtype=object)[multi.t[:end]]
        frame[names[1]] = multi.y[:end]
    elif arms and isinstance(treated, str) and isinstance(control, str):
        # the file's text codes, not the 0/1 it was read as ("segment" holding 1 for
        # "Womens E-Mail" read as a recoded column)
        frame[names[0]] = np.where(data.t[:end] == 1, treated, control)
        frame[names[1]] = data.y[:end]
    else:
        frame[names[0]] = data.t[:end]
        frame[names[1]] = data.y[:end]
    return frame
