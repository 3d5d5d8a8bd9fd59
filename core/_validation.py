"""Validation helpers shared by every public function of :mod:`core`.

Public functions validate their input **once**, here, at the boundary; private kernels
trust what they receive.  Every error names the parameter, what was expected and what
was received, so tests can pin it with ``pytest.raises(..., match=...)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from core.constants import auuc_column

__all__ = [
    "UndefinedMetricWarning",
    "as_generator",
    "check_binary",
    "check_choice",
    "check_cutoff",
    "check_cutoffs",
    "check_fraction",
    "check_group_ids",
    "check_int_at_least",
    "check_level",
    "check_positive_int",
    "check_positive_number",
    "check_probabilities",
    "check_progress",
    "check_real",
    "check_same_length",
    "check_seed",
    "check_scores",
    "check_outcome",
    "check_uplift_inputs",
    "distinct_and_nonfinite",
    "is_integer",
    "reason_from_counts",
    "undefined_reason",
]


class UndefinedMetricWarning(UserWarning):
    """Valid but degenerate input: the metric is undefined and ``nan`` is returned."""


def distinct_and_nonfinite(values: Any) -> np.ndarray:
    """The values of one part of a column that decide a check's message for the whole column:
    its distinct finite values and every non-finite one (their count is reported).  The
    Dask paths run a refused column's check on these, gathered from every partition, so the
    message lists and counts the column's values, not one partition's."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        return np.concatenate([np.unique(arr[finite]), arr[~finite]])
    try:
        return np.unique(arr)
    except TypeError:  # values that do not sort (mixed objects): all of them
        return arr


def _describe(values: np.ndarray, limit: int = 5) -> str:
    """The distinct values, the first ``limit`` listed; NaN counted apart (it is what is wrong
    when every listed value is legal)."""
    nan = _isnan(values)
    uniq = np.unique(values[~nan])
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in uniq[:limit])
    more = "" if len(uniq) <= limit else f", ... ({len(uniq)} distinct)"
    missing = f" and {int(nan.sum()):,} NaN (missing)" if nan.any() else ""
    return f"[{shown}{more}]{missing}"


def _isnan(values: np.ndarray) -> np.ndarray:
    return np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)


def check_choice(value: Any, name: str, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise ``ValueError``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}.")
    return value


def check_fraction(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float in (0, 1] (or [0, 1] with ``allow_zero``).

    Booleans and text (``True``, ``"0.3"``) are refused: a number was meant
    (:func:`check_real`).
    """
    interval = "[0, 1]" if allow_zero else "(0, 1]"
    return check_real(value, name, f"a number in {interval}", low=0.0, high=1.0,
                      low_open=not allow_zero)


def is_integer(value: Any) -> bool:
    """True for Python and NumPy integers; False for booleans, floats (even ``5.0``), the rest."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_positive_int(value: Any, name: str) -> int:
    """Return ``value`` as an ``int`` >= 1 (a count: replicates, bins, grid points), else raise.

    Booleans and floats (even ``5.0``) are refused, as in :func:`check_cutoff`.
    """
    if not is_integer(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def check_int_at_least(value: Any, name: str, low: int) -> int:
    """Return ``value`` as an ``int`` >= ``low`` (a seed, a size with a floor), else raise.

    Booleans and floats (even ``5.0``) are refused, as in :func:`check_positive_int`.
    """
    if not is_integer(value) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def check_level(value: Any, name: str = "level") -> float:
    """Return a confidence level as a float strictly between 0 and 1 (e.g. 0.95), else raise."""
    message = f"{name} must be a number strictly between 0 and 1; got {value!r}."
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if isinstance(value, (bool, np.bool_)) or not (0 < v < 1):
        raise ValueError(message)
    return v


def check_binary(values: Any, name: str) -> np.ndarray:
    """Return a 1-d ``int8`` array of 0/1 values or raise ``ValueError``.

    Booleans and numbers equal to 0 or 1 are accepted; anything else (other codes,
    NaN, strings) is refused with the offending values listed.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array; got an array of shape {arr.shape}.")
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must hold 0/1 values; got dtype {arr.dtype} with values {_describe(arr)}."
        )
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        raise ValueError(f"{name} must hold only 0 and 1; got values {_describe(arr)}.")
    return arr.astype(np.int8)


def check_scores(values: Any, name: str = "score", *, n: int | None = None,
                 keep_float32: bool = False) -> np.ndarray:
    """Return a 1-d finite ``float64`` array (of length ``n`` if given) or raise.
    ``keep_float32`` returns float32 input as it is (no upcast: the curve kernel sorts
    float32 scores faster, and the conversion to float64 is exact anyway)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array; got an array of shape {arr.shape}.")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}.")
    if not (keep_float32 and arr.dtype == np.float32):
        arr = arr.astype(np.float64, copy=False)
    # a finite sum means every value is finite (NaN and ±inf propagate); only a sum that is
    # not needs the element-wise check, which allocates a mask of the array's size
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if not np.isfinite(total) and not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise ValueError(f"{name} must be finite; got {bad} NaN or infinite value(s).")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n}; got length {arr.shape[0]}.")
    return arr


def check_outcome(values: Any, name: str = "y") -> np.ndarray:
    """A 0/1 outcome as ``int8`` (as :func:`check_binary`), any other finite real outcome
    (spend, revenue) as ``float64``; NaN, infinity and text are refused."""
    arr = np.asarray(values)
    if arr.ndim == 1 and arr.dtype.kind in "iuf" and arr.size and \
            not ((arr == 0) | (arr == 1)).all():
        if not np.isfinite(arr).all():
            bad = int((~np.isfinite(arr)).sum())
            raise ValueError(f"{name} must be finite (0/1 or a continuous outcome); got {bad} "
                             "NaN or infinite value(s).")
        return arr.astype(np.float64)
    return check_binary(arr, name)


def undefined_reason(y: np.ndarray, t: np.ndarray) -> str | None:
    """Why no uplift can be read off these rows — "there are no treated rows (t == 1)", "…
    no control rows (t == 0)", "… no responders (y is all 0)" — or ``None``: one wording for
    every curve, bootstrap, calibration and PCG that returns ``nan`` with an
    :class:`UndefinedMetricWarning`."""
    return reason_from_counts(int(np.count_nonzero(t)), int(t.shape[0] - np.count_nonzero(t)),
                              bool(np.any(y)))


def reason_from_counts(n_treated: int, n_control: int, responders: bool) -> str | None:
    """:func:`undefined_reason` from the arm sizes and whether any row responded."""
    if n_treated == 0:
        return "there are no treated rows (t == 1)"
    if n_control == 0:
        return "there are no control rows (t == 0)"
    if not responders:
        return "there are no responders (y is all 0)"
    return None


def check_progress(value: Any, name: str = "progress") -> Any:
    """``value`` when it is ``None`` or callable as ``(done, total)``, else ``ValueError``
    "``{name}`` must be None or a callable (done, total); got …" — one wording for the
    progress callbacks of the bootstraps, the label rankers and the models."""
    if value is not None and not callable(value):
        raise ValueError(f"{name} must be None or a callable (done, total); got {value!r}.")
    return value


def check_same_length(y: np.ndarray, t: np.ndarray) -> None:
    """``ValueError`` "t must have the same length as y (n); got m." unless they match —
    one wording for a treatment that does not fit its outcome, wherever it is checked."""
    if t.shape[0] != y.shape[0]:
        raise ValueError(f"t must have the same length as y ({y.shape[0]}); got {t.shape[0]}.")


def check_uplift_inputs(
    y: Any, t: Any, score: Any, *, keep_float32: bool = False, score_name: str = "score"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate the ``(y, t, score)`` triple used by every uplift curve and metric;
    ``score_name`` is the caller's name for the third argument (``tau_hat``), in messages.

    Returns
    -------
    y : ndarray, int8 for a 0/1 outcome, float64 for a continuous one (SPEC §8: the curves
        read as sums of ``y``)
    t : ndarray of int8, 0/1
    score : ndarray of float64 (float32 kept as it is with ``keep_float32``), finite
    """
    y = check_outcome(y, "y")
    t = check_binary(t, "t")
    if y.shape[0] == 0:
        raise ValueError("y must contain at least one row; got an empty array.")
    check_same_length(y, t)
    score = check_scores(score, score_name, n=y.shape[0], keep_float32=keep_float32)
    return y, t, score


def check_cutoff(value: Any, name: str = "k") -> int | None:
    """Return ``None`` or a positive ``int`` (a number of rows), else raise ``ValueError``.

    Booleans and floats (even ``5.0``) are refused: a float usually means a fraction was
    meant, which the caller must say explicitly.
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be None or a positive integer; got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be None or a positive integer; got {value!r}.")
    return int(value)


def check_cutoffs(values: Any, name: str = "cutoffs") -> tuple[float, ...]:
    """Return a non-empty tuple of fractions in (0, 1] (cut-offs of a ranked list), else raise.

    Two cut-offs whose columns would read alike (:func:`core.constants.auuc_column`: 0.3 and
    0.3, or 0.123451 and 0.123452) are refused, so no column silently replaces another.
    """
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of numbers in (0, 1]; got {values!r}.")
    try:
        out = tuple(values)
    except TypeError:
        raise ValueError(
            f"{name} must be a sequence of numbers in (0, 1]; got {values!r}.") from None
    if not out:
        raise ValueError(f"{name} must hold at least one number in (0, 1]; got none.")
    out = tuple(check_fraction(c, name) for c in out)
    labels = [auuc_column(c) for c in out]
    if len(set(labels)) < len(labels):
        twice = sorted({lab for lab in labels if labels.count(lab) > 1})
        raise ValueError(f"{name} must be distinct; more than one reads {', '.join(twice)}.")
    return out


def check_group_ids(values: Any, name: str = "group", *, n: int) -> np.ndarray:
    """Return ``int64`` query codes ``0..Q-1`` for per-row query ids of length ``n``, or raise.

    Ids may be numbers or strings, in any order (rows of one query need not be contiguous).
    Codes follow the sorted order of the distinct ids.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of query ids; got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one id per row); got {arr.shape[0]}.")
    missing = (np.isnan(arr) if arr.dtype.kind == "f"
               else pd_isna(arr) if arr.dtype.kind == "O" else None)
    if missing is not None and missing.any():  # an object column of ids may hold NaN / None
        raise ValueError(f"{name} must not contain NaN (or None); got {int(missing.sum())} "
                         "missing id(s).")
    if arr.dtype.kind not in "biufUSO":
        raise ValueError(f"{name} must hold numbers or strings; got dtype {arr.dtype}.")
    try:  # object arrays (e.g. a pandas column of strings) must hold comparable ids
        codes = np.unique(arr, return_inverse=True)[1]
    except TypeError:
        raise ValueError(
            f"{name} must hold numbers or strings of one kind (no None or mixed types)."
        ) from None
    return codes.astype(np.int64, copy=False).reshape(-1)


def pd_isna(arr: np.ndarray) -> np.ndarray:
    """``pandas.isna`` of an object array (NaN, None, pd.NA, NaT), imported when needed."""
    import pandas as pd

    return np.asarray(pd.isna(arr), dtype=bool)


def as_generator(random_state: Any) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from ``None``, an int, a SeedSequence or a Generator.

    ``np.random.RandomState`` instances are accepted too (a generator is seeded from them),
    so scikit-learn style callers keep working.  No global seed is ever touched.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    return np.random.default_rng(check_seed(random_state))


def check_seed(random_state: Any) -> int:
    """An integer seed in ``0 … 2**32 − 1`` as an ``int``, else ``ValueError`` naming
    ``random_state`` (booleans, floats, negative and larger numbers are refused: numpy's own
    message for ``-1``, "expected non-negative integer", names no parameter, scikit-learn's
    for ``2**32`` neither, and ``True`` reading as 1 would hide a slip)."""
    if not is_integer(random_state):
        raise ValueError(
            "random_state must be None, an integer >= 0, a SeedSequence or a numpy Generator; "
            f"got {random_state!r} ({type(random_state).__name__}).")
    if not 0 <= random_state < 2**32:  # scikit-learn's bound, and numpy's RandomState's
        raise ValueError(f"random_state must be an integer in 0 … 2**32 − 1; got "
                         f"{random_state}.")
    return int(random_state)


def check_positive_number(value: Any, name: str, what: str) -> float:
    """``value`` as a finite float > 0, else ``ValueError`` naming ``what`` it is (booleans
    refused).

    >>> check_positive_number(0.5, "C", "inverse L2 strength")
    0.5
    """
    return check_real(value, name, f"a positive number ({what})", low=0.0, low_open=True)


def check_real(value: Any, name: str, what: str, *, low: float = -np.inf,
                high: float = np.inf, low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a finite float in the interval from ``low`` to ``high`` (ends excluded
    when ``*_open``), else ``ValueError`` "``{name} must be {what}; got …``".

    Text (``"0.1"``) and booleans are refused like any other non-number: a number was meant,
    and ``True`` reading as 1 would hide a slip.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be {what}; got {value!r} "
                         f"({type(value).__name__}, not a number).")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {what}; got {value!r} "
                         f"({type(value).__name__}, not a number).") from None
    above = v > low if low_open else v >= low
    below = v < high if high_open else v <= high
    if not (np.isfinite(v) and above and below):
        raise ValueError(f"{name} must be {what}; got {value!r}.")
    return v


def check_probabilities(values: Any, name: str, *, n: int, why: str = "") -> np.ndarray:
    """``values`` as ``n`` finite float64 numbers in [0, 1], else ``ValueError`` naming the
    range found (``why`` is added after the name, e.g. " with discount='probability'")."""
    p = check_scores(values, name, n=n)
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"{name} must hold probabilities in [0, 1]{why}; got values in "
                         f"[{p.min():g}, {p.max():g}].")
    return p
