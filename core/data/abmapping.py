"""Turning a typed table into an :class:`~core.data.abdata.ABData`: the column mapping step.

:func:`frame_to_abdata` codes the treatment and outcome columns to 0/1, reduces a multi-arm
treatment to two arms, chooses the features and refuses unusable data with a
:class:`~core.data.abdata.DataError` that names the column and the problem.  :func:`guess_columns`
proposes a mapping from column names for the Data page.

Feature choice (when ``features`` is not given)
-----------------------------------------------
* numeric columns are kept as numbers, except ID-like ones (integer values, all distinct, and
  an ID-like name such as ``id`` / ``customer_id`` / ``Unnamed: 0`` or values in sorted order);
* text columns with at most ``max_levels`` (default 20) distinct values become pandas
  ``category`` columns, which LightGBM uses as categorical features directly (no one-hot);
* other text columns (free text, IDs) and all-empty columns are dropped, with a warning.
Missing feature values are kept as NaN (LightGBM routes them natively) and counted in the
warnings.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.data.abdata import ABData, DataError

__all__ = ["MAX_ARMS", "MAX_CATEGORY_LEVELS", "OUTCOME_KINDS", "arm_codes", "arms_readable",
           "check_arm_count", "check_arms_and_outcome", "check_distinct_roles",
           "frame_to_abdata", "frame_to_multiarm", "guess_columns", "guess_control",
           "guess_outcome_kind", "outcome_labels", "stray_arm_codes", "stray_note",
           "stray_outcome_note", "two_arm_defaults"]

#: How an outcome column is read: 0/1 (visit, conversion) or an amount (spend, minutes).
OUTCOME_KINDS = ("binary", "continuous")

#: Text columns with at most this many distinct values become categorical features.
MAX_CATEGORY_LEVELS = 20
#: A treatment column with more distinct values is a feature picked by mistake (an age, an
#: amount), not the arm each row was assigned to: refused with a message that says so.
MAX_ARMS = 20
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}
_TREATED_WORDS = {"treatment", "treated", "test", "exposed"}
_CONTROL_WORDS = {"control", "holdout", "ctrl", "untreated", "not treated"}
_ID_NAME = re.compile(r"(^|[_\s])(id|uuid|guid)$|^unnamed: \d+$|^index$|^row(_?num(ber)?)?$",
                      re.IGNORECASE)

_TREATMENT_NAMES = ["treatment", "treat", "treated", "is_treatment", "is_treated", "t", "w",
                    "segment", "group", "arm", "variant", "exposure", "exposed", "assignment",
                    "assigned", "condition", "offer", "promotion", "campaign"]
_OUTCOME_NAMES = ["outcome", "y", "target", "label", "response", "responded", "visit",
                  "visited", "conversion", "converted", "convert", "purchase", "purchased",
                  "call", "callback", "click", "clicked", "buy", "bought",
                  # amounts (a continuous outcome), after every 0/1 name: Hillstrom's
                  # "visit" wins over its "spend"
                  "spend", "spent", "revenue", "sales", "amount", "order_value", "gmv"]


# --------------------------------------------------------------------------- formatting
def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _rows(k: int) -> str:
    return f"{k:,} row{'s' if k != 1 else ''}"


def _list_codes(counts: pd.Series, limit: int = 8) -> str:
    parts = [f"{_fmt(k)!r} ({n:,} row{'s' if n != 1 else ''})"
             for k, n in counts.head(limit).items()]
    more = f", ... ({len(counts)} codes in all)" if len(counts) > limit else ""
    return ", ".join(parts) + more


# --------------------------------------------------------------------------- coding
def _keys(col: pd.Series) -> tuple[pd.Series | None, pd.Series]:
    """String key (stripped, lower case; None for a numeric column) and numeric value of
    every cell (NaN where missing or not a number)."""
    if col.dtype.kind in "biuf":
        return None, col.astype("float64")
    s = col.astype("str").str.strip().str.lower()
    codes, uniques = pd.factorize(s)
    num_u = pd.to_numeric(pd.Series(np.asarray(uniques, dtype=object)), errors="coerce")
    num = np.append(num_u.to_numpy(dtype=np.float64), np.nan)[codes]
    return s, pd.Series(num, index=col.index)


def _or(value: Any) -> str:
    return " or ".join(repr(v) for v in _as_codes(value))


def _as_codes(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return [value]


def _match(col: pd.Series, values: Iterable[Any], param: str, column: str) -> np.ndarray:
    skey, num = _keys(col)
    hit = np.zeros(len(col), dtype=bool)
    for v in values:
        vs = _fmt(v).strip().lower()
        try:
            vn = float(vs)
        except ValueError:
            vn = np.nan
        m = (num == vn).to_numpy(bool)
        if skey is not None:
            m = m | (skey == vs).fillna(False).to_numpy(bool)
        if not m.any():
            counts = col.value_counts()
            raise DataError(f"{param}={v!r} matches no row of column {column!r}. "
                            f"Its codes are: {_list_codes(counts)}.")
        hit |= m
    return hit


def _counts(col: pd.Series) -> pd.Series:
    """Row count per distinct code, most frequent first.  Text codes are stripped and grouped
    case-insensitively (as they are matched), shown in their first spelling."""
    vals = col.dropna()
    if vals.dtype.kind in "biuf":
        return vals.value_counts()
    vals = vals.astype("str").str.strip()
    key = vals.str.lower()
    counts = key.value_counts()
    spelling = dict(zip(key.to_numpy()[::-1], vals.to_numpy()[::-1], strict=True))
    counts.index = [spelling[k] for k in counts.index]
    return counts


def check_arm_count(col: pd.Series, column: str) -> None:
    """Raise :class:`DataError` when ``col`` holds more than :data:`MAX_ARMS` distinct
    values: it is then not a treatment column (the Data page's mapping step and
    :func:`frame_to_multiarm` check it before offering or building the arms)."""
    counts = _counts(col)
    if len(counts) > MAX_ARMS:
        raise DataError(
            f"Column {column!r} has {len(counts):,} distinct values ({_list_codes(counts, 4)}): "
            "it does not look like a treatment column. The treatment column says which arm "
            "each row was assigned to — 0/1, or a few names such as 'control', 'email A', "
            f"'email B' (at most {MAX_ARMS} arms). Pick that column as the treatment."
        )


def arm_codes(col: pd.Series) -> list[Any]:
    """Distinct codes of a treatment column, most frequent first (text stripped, grouped
    case-insensitively as ``treatment_value``/``control_value`` match them) — what the Data page
    offers when a column holds more than two arms."""
    return [v.item() if hasattr(v, "item") else v for v in _counts(col).index]


def _shown(v: Any) -> str:
    return _fmt(v) if isinstance(v, (int, float, np.integer, np.floating)) else repr(_fmt(v))


def _auto_binary(col: pd.Series, column: str, role: str) -> np.ndarray:
    """0/1 as float (NaN where missing) from the common codings, or raise DataError."""
    skey, num = _keys(col)
    present = col.notna().to_numpy()
    out = np.full(len(col), np.nan)
    out[(num == 1).to_numpy(bool)] = 1.0
    out[(num == 0).to_numpy(bool)] = 0.0
    if skey is not None:
        out[skey.isin(_TRUE).to_numpy(bool)] = 1.0
        out[skey.isin(_FALSE).to_numpy(bool)] = 0.0
    if not (present & np.isnan(out)).any():
        return out
    counts = _counts(col)
    if role == "treatment":
        if len(counts) == 2 and skey is not None:
            words = skey.map(lambda s: 1.0 if s in _TREATED_WORDS else
                             (0.0 if s in _CONTROL_WORDS else np.nan), na_action="ignore")
            words = words.to_numpy(dtype=np.float64)
            if not np.isnan(words[present]).any() and len(set(words[present])) == 2:
                return words
            control = guess_control(list(counts.index))  # control / variant, "No E-Mail" / …
            if control is not None:
                is_control = _match(col, [control], "control_value", column)
                return np.where(present, np.where(is_control, 0.0, 1.0), np.nan)
            a, b = map(_fmt, counts.index)
            raise DataError(
                f"Column {column!r} has two codes, {a!r} and {b!r}, and it is not clear which "
                "one is the treatment. Pick the treated and the control arm (in code: "
                f"treatment_value={a!r}, control_value={b!r}, or the other way round)."
            )
        if len(counts) >= 3:
            raise DataError(
                f"Column {column!r} has {len(counts)} codes: {_list_codes(counts)}. Pick the "
                "two arms to compare with treatment_value= and control_value=; the other rows "
                "will be dropped."
            )
        raise DataError(f"Column {column!r} has only one arm: every row is "
                        f"{_shown(counts.index[0])}. An A/B test needs treated and control rows.")
    examples = ", ".join(_fmt(k) for k in list(counts.index)[:6])
    raise DataError(
        f"Column {column!r} is not a binary outcome: it holds values such as {examples} "
        f"({len(counts):,} distinct values). The outcome must be coded 0/1, true/false or "
        "yes/no" + (", or name the value that is a response (outcome_value=)"
                    if len(counts) == 2 else "") + "."
    )


def outcome_labels(col: pd.Series) -> list[Any] | None:
    """The two labels of an outcome written as two words that do not say which one is a
    response (``bought`` / ``none``, ``churned`` / ``stayed``), most frequent first; ``None``
    for any other column (0/1, yes/no … read by themselves, or numbers)."""
    values = col.dropna()
    counts = _counts(values)
    if len(counts) != 2 or values.dtype.kind in "biuf":
        return None
    try:
        _auto_binary(values, "outcome", "outcome")
        return None
    except DataError:
        pass
    if pd.to_numeric(pd.Series(list(counts.index), dtype=object), errors="coerce").notna().any():
        return None  # a number and a word: not two labels
    return [k.item() if hasattr(k, "item") else k for k in counts.index]


def _outcome_by_value(col: pd.Series, column: str, value: Any) -> np.ndarray:
    """1.0 where ``col`` holds ``value`` (stripped, any case), 0.0 where it holds the other
    code, NaN where missing; DataError unless the column has exactly two codes."""
    counts = _counts(col)
    if len(counts) != 2:
        raise DataError(f"outcome_value= reads a column of two codes; {column!r} has "
                        f"{len(counts):,}: {_list_codes(counts)}.")
    hit = _match(col, [value], "outcome_value", column)
    return np.where(col.notna().to_numpy(), hit.astype(np.float64), np.nan)


def _binary_outcome(col: pd.Series, column: str, value: Any) -> np.ndarray:
    return (_auto_binary(col, column, "outcome") if value is None
            else _outcome_by_value(col, column, value))


def _code_treatment(col: pd.Series, column: str, treatment_value: Any, control_value: Any,
                    warnings: list[str]) -> np.ndarray:
    if treatment_value is None and control_value is None:
        return _auto_binary(col, column, "treatment")
    present = col.notna().to_numpy()
    if treatment_value is not None and control_value is not None:
        t_hit = _match(col, _as_codes(treatment_value), "treatment_value", column)
        c_hit = _match(col, _as_codes(control_value), "control_value", column)
        if (t_hit & c_hit).any():
            raise DataError(f"treatment_value={treatment_value!r} and control_value="
                            f"{control_value!r} select the same rows of column {column!r}.")
    else:
        given, param = ((treatment_value, "treatment_value") if treatment_value is not None
                        else (control_value, "control_value"))
        hit = _match(col, _as_codes(given), param, column)
        rest = present & ~hit
        if _counts(col[rest]).size != 1:
            raise DataError(
                f"Column {column!r} has the codes {_list_codes(_counts(col))}. With only "
                f"{param} given the other arm is ambiguous; give both treatment_value= and "
                "control_value=."
            )
        t_hit, c_hit = (hit, rest) if param == "treatment_value" else (rest, hit)
    out = np.full(len(col), np.nan)
    out[t_hit] = 1.0
    out[c_hit] = 0.0
    other = present & ~t_hit & ~c_hit
    if other.any():
        warnings.append(
            f"Dropped {_rows(int(other.sum()))} whose {column!r} is neither the treatment "
            f"({_or(treatment_value)}) nor the control ({_or(control_value)}): "
            f"{_list_codes(_counts(col[other]))}."
        )
    return out


# --------------------------------------------------------------------------- features
def _choose_features(df: pd.DataFrame, candidates: list[str], explicit: bool, max_levels: int,
                     warnings: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The feature table, and the ID-like columns dropped from it (first = the row id)."""
    cols: dict[str, pd.Series] = {}
    dropped_text, dropped_id, dropped_empty = [], [], []
    for c in candidates:
        s = df[c]
        if s.isna().all() and not explicit:
            dropped_empty.append(c)
        elif s.dtype.kind in "biuf":
            if isinstance(s.dtype, pd.api.extensions.ExtensionDtype):  # Int64, boolean...
                s = s.astype("float64") if s.isna().any() else s.astype(s.dtype.numpy_dtype)
            vals = s.dropna()
            integral = s.dtype.kind in "iu" or bool(np.all(np.mod(vals, 1) == 0))
            if (not explicit and len(vals) >= 20 and integral and vals.is_unique
                    and (_ID_NAME.search(str(c)) or vals.is_monotonic_increasing)):
                dropped_id.append(c)
            else:
                cols[c] = s
        elif not explicit and _ID_NAME.search(str(c)) and _integer_text(s):
            dropped_id.append(c)  # integers too long for int64 (read as text): an ID
        elif (num := _mostly_numbers(s)) is not None:
            bad = s[s.notna() & num.isna()]
            shown = ", ".join(repr(str(v)) for v in bad.unique()[:3])
            warnings.append(f"Feature {c!r} holds numbers except {_rows(len(bad))} ({shown}"
                            f"{', …' if bad.nunique() > 3 else ''}): read as missing values.")
            cols[c] = num
        else:
            levels = s.nunique(dropna=True)
            if levels <= max_levels or explicit:
                if levels > max_levels:
                    warnings.append(f"Feature {c!r} has {levels:,} distinct text values; it is "
                                    "used as a categorical feature but may overfit.")
                cols[c] = s.astype(pd.CategoricalDtype(sorted(s.dropna().unique(), key=str)))
            else:
                dropped_text.append(f"{c!r} ({levels:,} distinct values)")
    if dropped_id:
        warnings.append("Dropped ID-like column(s) " + ", ".join(map(repr, dropped_id))
                        + ": every value is a distinct integer, which says nothing about the "
                        "effect (in code, name them in features= to keep them).")
    if dropped_text:
        warnings.append(f"Dropped text column(s) with more than {max_levels} distinct values "
                        f"(IDs, dates or free text): {', '.join(dropped_text)}.")
    if dropped_empty:
        warnings.append("Dropped empty column(s): " + ", ".join(map(repr, dropped_empty)) + ".")
    if not cols:
        raise DataError("No feature columns are left besides treatment and outcome"
                        + (f" ({'; '.join(warnings[-1:])})" if warnings else "")
                        + ". Uplift models need at least one feature.")
    X = pd.DataFrame(cols)
    miss = {c: int(n) for c, n in X.isna().sum().items() if n}
    if miss:
        warnings.append("Missing feature values are kept (LightGBM handles them): "
                        + ", ".join(f"{c!r} {n:,}" for c, n in miss.items()) + ".")
    return X, dropped_id


def _integer_text(col: pd.Series) -> bool:
    """Whether a text column holds at least 20 distinct integers written out (IDs wider than
    int64, which the CSV reader keeps as text so that they keep their digits)."""
    vals = col.dropna().astype("string")
    return (len(vals) >= 20 and vals.is_unique
            and bool(vals.str.fullmatch(r"[+-]?\d+").all()))


#: A text column whose cells read as numbers but for at most this share (and at least
#: :data:`MOSTLY_NUMBERS_ROWS` cells that do) is a numeric feature with a few bad cells.
MOSTLY_NUMBERS_SHARE = 0.01
MOSTLY_NUMBERS_ROWS = 20


def _mostly_numbers(col: pd.Series) -> pd.Series | None:
    """``col`` as float64 when all but a few of its non-missing cells read as numbers (one
    ``abc`` or ``-`` in a column of amounts: it was dropped as "text with more than 20
    distinct values"), else None."""
    present = col.notna()
    num = pd.to_numeric(col.astype("string").str.strip(), errors="coerce").astype("float64")
    good = int((present & num.notna()).sum())
    bad = int(present.sum()) - good
    if good < MOSTLY_NUMBERS_ROWS or bad == 0 or bad > MOSTLY_NUMBERS_SHARE * present.sum():
        return None
    return num


# --------------------------------------------------------------------------- public
def _missing_column(column: str, param: str, columns: Sequence[str]) -> DataError:
    close = difflib.get_close_matches(column, list(columns), n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return DataError(f"Column {column!r} ({param}) is not in the file.{hint} Available "
                     f"columns: {', '.join(map(str, columns))}.")


def _check_mapping(df: pd.DataFrame, treatment: str, outcome: str,
                   features: Sequence[str] | None) -> list[str] | None:
    """Refuse a mapping that names missing, duplicate or overlapping columns; the feature list."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame; got {type(df).__name__}.")
    columns = list(df.columns)
    dups = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
    if dups:
        raise DataError(f"Duplicate column names: {', '.join(map(repr, dups))}. Rename the "
                        "columns so each name is unique.")
    for col, param in ((treatment, "treatment"), (outcome, "outcome")):
        if col not in columns:
            raise _missing_column(col, param, columns)
    check_distinct_roles(treatment, outcome)
    if len(df) == 1:  # said so, rather than "only one arm: every row is 1"
        raise DataError("The file has a single data row: an A/B test needs rows of treated "
                        "and of control customers.")
    if features is None:
        return None
    features = [features] if isinstance(features, str) else list(features)
    unknown = [f for f in features if f not in columns]
    if unknown:
        raise DataError(f"Feature column(s) {', '.join(map(repr, unknown))} not in the file. "
                        f"Available columns: {', '.join(map(str, columns))}.")
    leak = [f for f in features if f in (treatment, outcome)]
    if leak:
        raise DataError(f"features must not include the treatment or outcome column "
                        f"({', '.join(map(repr, leak))}).")
    return features


def _features_and_ids(df: pd.DataFrame, keep: np.ndarray, treatment: str, outcome: str,
                      features: list[str] | None, max_levels: int,
                      warnings: list[str]) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Feature table of the kept rows, and the row identifiers exports use: the file's ID
    column when it has one, else the 1-based data-row number."""
    explicit = features is not None
    candidates = features if explicit else [c for c in df.columns if c not in (treatment,
                                                                                outcome)]
    X, id_columns = _choose_features(df.iloc[keep], candidates, explicit, max_levels, warnings)
    constant = [c for c in X.columns if X[c].nunique(dropna=False) <= 1]
    if constant and len(constant) < X.shape[1]:  # (all constant: the models say so)
        warnings.append("Column(s) " + ", ".join(map(repr, constant)) + " hold one value in "
                        "every row: kept as features, but they cannot help any model.")
    id_name = str(id_columns[0]) if id_columns else "row"
    ids = df[id_columns[0]].iloc[keep].to_numpy() if id_columns else keep + 1
    return X.reset_index(drop=True), ids, id_name


def frame_to_abdata(df: pd.DataFrame, *, treatment: str, outcome: str,
                    features: Sequence[str] | None = None, treatment_value: Any = None,
                    control_value: Any = None, name: str = "data",
                    max_levels: int = MAX_CATEGORY_LEVELS, warnings: list[str] | None = None,
                    return_rows: bool = False,
                    outcome_value: Any = None) -> ABData | tuple[ABData, np.ndarray]:
    """Map the columns of a typed table (see :func:`core.data.csvio.read_frame`) to an ABData.

    Parameters are those of :func:`core.data.datasets.read_ab_csv`.  ``return_rows=True`` also
    returns the positions of the rows kept (for loaders that carry side columns).
    """
    features = _check_mapping(df, treatment, outcome, features)
    warnings = list(warnings or [])
    check_arm_count(df[treatment], treatment)  # two of 25 ages is no A/B test either
    t = _code_treatment(df[treatment], treatment, treatment_value, control_value, warnings)
    arms = ~np.isnan(t) | df[treatment].isna().to_numpy()
    y = np.full(len(df), np.nan)
    y[arms] = _binary_outcome(df[outcome][arms], outcome, outcome_value)
    missing = arms & (np.isnan(t) | np.isnan(y))
    if missing.any():
        first = ", ".join(str(i + 1) for i in np.flatnonzero(missing)[:5])
        more = ", ..." if missing.sum() > 5 else ""
        warnings.append(f"Dropped {_rows(int(missing.sum()))} with a missing value in "
                        f"{treatment!r} or {outcome!r} (data rows {first}{more}).")
    keep = np.flatnonzero(arms & ~missing)
    t, y = t[keep].astype(np.int8), y[keep].astype(np.int8)
    if t.size == 0:
        raise DataError(f"No rows are left with both {treatment!r} and {outcome!r} filled in.")
    check_arms_and_outcome(t, y, treatment, outcome,
                           shown=lambda: _shown(_counts(df[treatment].iloc[keep]).index[0]))
    if np.array_equal(y, t) or np.array_equal(y, 1 - t):  # a copy: no outcome to explain
        warnings.append(
            f"The outcome {outcome!r} equals the treatment {treatment!r} "
            f"{'' if np.array_equal(y, t) else 'reversed '}in every row: every treated row "
            f"{'responded' if y[t == 1][0] else 'did not respond'} and every control row "
            f"{'responded' if y[t == 0][0] else 'did not'}. An outcome measured after the "
            "treatment never does that; check that the right column is the outcome — models "
            "will have nothing to learn.")
    X, ids, id_name = _features_and_ids(df, keep, treatment, outcome, features, max_levels,
                                        warnings)
    source = {"treatment": treatment, "outcome": outcome}
    if treatment_value is not None or control_value is not None:
        source.update(treatment_value=treatment_value, control_value=control_value)
    else:  # text codes found without asking (control / variant): kept for the preview, report
        raw = df[treatment].to_numpy()[keep]
        codes = [pd.unique(raw[t == k]) for k in (1, 0)]
        if all(len(c) == 1 and isinstance(c[0], str) for c in codes):
            source.update(treatment_value=codes[0][0], control_value=codes[1][0])
    data = ABData(X=X.reset_index(drop=True), y=y, t=t, name=name, warnings=warnings,
                  source_columns=source, ids=ids, id_name=id_name)
    return (data, keep) if return_rows else data


def check_distinct_roles(treatment: str, outcome: str) -> None:
    """Refuse the same column as treatment and outcome (uploads and large files)."""
    if treatment == outcome:
        raise DataError(f"The treatment and the outcome are the same column ({treatment!r}); "
                        "pick two different columns.")


def check_arms_and_outcome(t: np.ndarray, y: np.ndarray, treatment: str, outcome: str, *,
                           shown: Callable[[], str] | None = None) -> None:
    """Refuse 0/1-coded rows that are no A/B test: one arm only, fewer than 2 rows in an arm,
    an outcome that is the same in every row.  ``shown()`` names the single arm's code as
    the file holds it (default: the 0/1 code).  Uploads and large files share it."""
    if t.size == 0:
        raise DataError(f"No rows with {treatment!r} and {outcome!r}: the data is empty.")
    treated = int(np.count_nonzero(t == 1))
    if treated in (0, t.size):
        code = shown() if shown is not None else str(1 if treated else 0)
        raise DataError(f"Column {treatment!r} has only one arm: every row is {code}. "
                        "An A/B test needs treated and control rows.")
    for k, arm in ((treated, "treated"), (t.size - treated, "control")):
        if k < 2:
            raise DataError(f"Only {k} {arm} row is left; each arm needs at least 2 rows.")
    for val, what in ((0, "no responders: every row is 0"), (1, "only responders: every row is 1")):
        if np.all(y == val):
            raise DataError(f"Column {outcome!r} has {what}. Uplift needs rows with outcome 1 "
                            "and rows with outcome 0.")


def guess_outcome_kind(col: pd.Series) -> str:
    """``"binary"`` when every filled cell is one of the 0/1 codings (0/1, true/false,
    yes/no) or the column holds two words (:func:`outcome_labels`: which one is the response
    is then asked), else ``"continuous"`` — what the mapping step proposes."""
    try:
        _auto_binary(col.dropna(), "outcome", "outcome")
    except DataError:
        return "binary" if outcome_labels(col) is not None else "continuous"
    return "binary"


def _continuous(col: pd.Series, column: str) -> np.ndarray:
    """Numbers of an amount column (NaN where missing); DataError naming the first text cell
    or infinite value."""
    num = pd.to_numeric(col, errors="coerce") if col.dtype.kind not in "biuf" else col
    num = num.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = col.notna().to_numpy() & ~np.isfinite(num)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"Column {column!r} should hold numbers (a continuous outcome) but data row "
            f"{i + 1:,} holds {_shown(col.iloc[i])}" + (
                f" ({int(bad.sum()):,} such rows)" if bad.sum() > 1 else "")
            + ". Fix those cells, or pick another outcome column.")
    return num


def arms_readable(codes: Sequence[Any]) -> bool:
    """Whether two treatment codes say by themselves which arm is treated (0/1, yes/no,
    treatment/control words, or one code that reads as control: :func:`guess_control`), so
    the mapping step need not ask."""
    try:
        _auto_binary(pd.Series(list(codes), dtype=object), "treatment", "treatment")
    except DataError:
        return False
    return True


#: Share of rows under which codes beside a readable 0/1 pair are taken for stray markers.
STRAY_SHARE = 0.05


def stray_arm_codes(col: pd.Series) -> list[tuple[Any, int]]:
    """Codes of a treatment column that look like stray markers rather than arms: when its
    two most frequent codes are a true / false pair (1 / 0, yes / no, true / false; not a
    control word such as ``none``, which a small ``0`` arm may be the control of) and every
    other code together holds under :data:`STRAY_SHARE`
    of the rows (``none``, ``-``, ``?`` in a 0/1 column) — ``(code, rows)`` each, most
    frequent first; ``[]`` otherwise.  Kept as arms, such rows would count as a treatment
    arm (and ``none`` beside ``0`` made the control arm ambiguous)."""
    counts = _counts(col)
    if len(counts) < 3:
        return []
    top = {_fmt(c).strip().lower() for c in counts.index[:2]}
    if not (top & _TRUE and top & _FALSE):  # 1 / 0, yes / no …: not 1 / "none", whose
        return []  # small third code may be the real control arm
    rest = counts.iloc[2:]
    if rest.sum() >= STRAY_SHARE * counts.sum():
        return []
    return [(k.item() if hasattr(k, "item") else k, int(v)) for k, v in rest.items()]


def stray_outcome_note(col: pd.Series, column: str) -> str | None:
    """A sentence when an outcome read as an amount is a 0/1 column but for a few other
    values (:func:`stray_arm_codes`' rule: ``2`` in 5 of 2,000 rows), naming them and their
    first data rows; ``None`` otherwise.  Read as an amount, such a column counts ``2`` as a
    response on the one-treatment pages without a word.

    >>> stray_outcome_note(pd.Series([0, 2, 1, 0, 1, 0, 2] + [0, 1] * 100), "converted")
    "'converted' is coded 0 / 1 except 2 (2 rows; data rows 2, 7), so it is read as an \
amount. If it is a 0/1 outcome those rows are errors: correct them in the file."
    """
    strays = stray_arm_codes(col)
    if not strays:
        return None
    codes = list(_counts(col).index[:2])
    odd = np.flatnonzero(col.notna().to_numpy() & ~_match(col, codes, "outcome", column))
    rows = ", ".join(str(i + 1) for i in odd[:5]) + (", ..." if odd.size > 5 else "")
    listed = ", ".join(f"{_shown(c)}" for c, _ in strays)
    return (f"'{column}' is coded {_fmt(codes[0])} / {_fmt(codes[1])} except {listed} "
            f"({odd.size:,} row{'s' * (odd.size != 1)}; data row{'s' * (odd.size != 1)} "
            f"{rows}), so it is read as an "
            "amount. If it is a 0/1 outcome those rows are errors: correct them in the file.")


def stray_note(column: str, codes: Sequence[Any], strays: Sequence[tuple[Any, int]]) -> str:
    """The Data page's sentence on :func:`stray_arm_codes`.

    >>> stray_note("treatment", [1, 0, "none"], [("none", 128)])
    "'treatment' is coded 1 / 0 except 'none' (128 rows): stray markers, not arms? \
'compare two arms' (preselected) leaves those rows out; keep all arms only if they are real \
arms."
    """
    listed = ", ".join(f"{_shown(c)} ({n:,} row{'s' * (n != 1)})" for c, n in strays)
    return (f"'{column}' is coded {_fmt(codes[0])} / {_fmt(codes[1])} except {listed}: stray "
            "markers, not arms? 'compare two arms' (preselected) leaves those rows out; keep "
            "all arms only if they are real arms.")


def two_arm_defaults(codes: Sequence[Any]) -> tuple[int, int | None]:
    """Positions of the treated and control arm the Data page preselects among ``codes``
    (most frequent first).

    The two most frequent codes are read as treated / control when they say so by
    themselves (``0`` / ``1`` in either order, yes / no, …).  Otherwise the control is the
    one code that reads as control (:func:`guess_control`), or ``A`` beside ``B`` (the A/B
    convention: A is the current version), and the treated arm the most frequent other
    code.  When no code says which is control, the control is ``None``: the page asks, for
    a guess in frequency order silently flipped the effect's sign of a ``red`` / ``blue``
    test whose control happened to be the larger arm.

    >>> two_arm_defaults([0, 1, "none"]), two_arm_defaults(["B", "A"])
    ((1, 0), (0, 1))
    >>> two_arm_defaults(["A", "B", "C"]), two_arm_defaults(["red", "blue"])
    ((1, 0), (0, None))
    """
    if len(codes) < 2:
        return 0, 0
    top = list(codes[:2])
    if arms_readable(top):
        control = guess_control(top)
        if control is None:  # a treated word without a control word: the other one
            treated = next((c for c in top if _fmt(c).strip().lower() in _TRUE), None)
            if treated is None:
                return 0, 1
            control = top[1 - top.index(treated)]
        at = top.index(control)
        return 1 - at, at
    keys = [_fmt(c).strip().lower() for c in codes]
    control = guess_control(codes)
    at = (list(codes).index(control) if control is not None
          else keys.index("a") if {"a", "b"} <= set(keys) else None)
    if at is None:
        return 0, None
    return (1 if at == 0 else 0), at


def guess_control(codes: Sequence[Any]) -> Any:
    """The one arm code that reads as control — 0, false, no, control, holdout, untreated,
    "No …" / "none" (stripped, any case) — or ``None`` when no code or several do."""
    controls = [c for c in codes if (k := _fmt(c).strip().lower()) in _CONTROL_WORDS | _FALSE
                or k.startswith(("no ", "no_", "none"))]
    return controls[0] if len(controls) == 1 else None


def _control_code(col: pd.Series, column: str, control_value: Any) -> Any:
    """The control arm's code: ``control_value``, else the one code that reads as control
    (0, false, no, control, holdout…); DataError when that is ambiguous."""
    counts = _counts(col)
    if len(counts) < 2:
        raise DataError(f"Column {column!r} has only one arm: every row is "
                        f"{_shown(counts.index[0]) if len(counts) else 'empty'}. An experiment "
                        "needs a control arm and at least one treatment arm.")
    if control_value is not None:
        _match(col, [control_value], "control_value", column)
        return control_value
    control = guess_control(list(counts.index))
    if control is not None:
        return control
    raise DataError(f"Column {column!r} has the arms {_list_codes(counts)}; say which one is "
                    "the control arm (control_value=).")


def frame_to_multiarm(df: pd.DataFrame, *, treatment: str, outcome: str,
                      control_value: Any = None, outcome_kind: str | None = None,
                      features: Sequence[str] | None = None, name: str = "data",
                      max_levels: int = MAX_CATEGORY_LEVELS, design: Any = None,
                      warnings: list[str] | None = None, outcome_value: Any = None,
                      treatment_value: Any = None):
    """Map a typed table to a :class:`~core.data.MultiArmData` that keeps every arm.

    Parameters
    ----------
    df, treatment, outcome, features, name, max_levels
        As in :func:`frame_to_abdata`.
    control_value : scalar, optional
        Code of the control arm; default the one code that reads as control (0, false, no,
        control, holdout, "No …").  Every other code is a treatment arm, most frequent first.
    outcome_kind : {"binary", "continuous"}, optional
        How to read the outcome; default :func:`guess_outcome_kind`.  ``"continuous"`` takes
        any finite number (spend, minutes); a text cell is a DataError naming its row.
    outcome_value : scalar, optional
        The response's code in an outcome written as two words (as in
        :func:`core.data.read_ab_csv`).
    treatment_value : scalar or list, optional
        Keep only this treatment arm (or these) beside the control: the rows of the other
        arms are dropped, said in the warnings (two arms of an amount outcome).  Without
        ``control_value``, a column with exactly one other code has that code as control.
    design : array of shape (K+1,), optional
        Designed arm shares (control first).  Default: equal shares, unless the arm counts
        refute them (χ² p < 0.001), then the observed shares, with a warning.

    Raises
    ------
    DataError
        The cases of :func:`frame_to_abdata`, an arm with fewer than 2 rows, an outcome
        with text or infinite values, a constant outcome.
    """
    from scipy import stats

    from core.data.multiarm import MultiArmData

    features = _check_mapping(df, treatment, outcome, features)
    warnings = list(warnings or [])
    if outcome_kind is not None and outcome_kind not in OUTCOME_KINDS:
        raise ValueError(f"outcome_kind must be one of {OUTCOME_KINDS}; got {outcome_kind!r}.")
    col = df[treatment]
    check_arm_count(col, treatment)
    other = np.zeros(len(df), dtype=bool)  # rows of arms left out
    if treatment_value is not None:  # chosen arms, read as frame_to_abdata reads them (the
        # one other code the control when none is named); the rows of the others go, said so
        coded = _code_treatment(col, treatment, treatment_value, control_value, warnings)
        other = np.isnan(coded) & col.notna().to_numpy()
        control_code = arm_codes(col[coded == 0])[0]
    else:
        control_code = _control_code(col, treatment, control_value)
    control_rows = _match(col, [control_code], "control_value", treatment)
    hits = {code: _match(col, [code], "arm", treatment) for code in arm_codes(col[~other])}
    codes = sorted(hits, key=lambda c: not (hits[c] & control_rows).any())  # control first
    t = np.full(len(df), -1, dtype=np.int64)
    for k, code in enumerate(codes):
        t[hits[code]] = k
    kind = outcome_kind or ("binary" if outcome_value is not None
                            else guess_outcome_kind(df[outcome]))
    if outcome_value is not None and kind == "continuous":
        raise DataError("outcome_value= names the response of a binary outcome; the outcome "
                        "is read as an amount (outcome_kind='continuous').")
    y = (_binary_outcome(df[outcome], outcome, outcome_value) if kind == "binary"
         else _continuous(df[outcome], outcome))
    missing = ((t < 0) | np.isnan(y)) & ~other
    if missing.any():
        first = ", ".join(str(i + 1) for i in np.flatnonzero(missing)[:5])
        more = ", ..." if missing.sum() > 5 else ""
        warnings.append(f"Dropped {_rows(int(missing.sum()))} with a missing value in "
                        f"{treatment!r} or {outcome!r} (data rows {first}{more}).")
    keep = np.flatnonzero(~missing & ~other)
    t, y = t[keep], y[keep]
    counts = np.bincount(t, minlength=len(codes))
    for k, code in enumerate(codes):
        if counts[k] < 2:
            raise DataError(f"Arm {_shown(code)} of column {treatment!r} has {counts[k]} "
                            "row(s) with an outcome; every arm needs at least 2 rows.")
    if np.unique(y).size < 2:
        raise DataError(f"Column {outcome!r} holds one value only ({_fmt(y[0])}) in every "
                        "kept row; uplift needs an outcome that varies.")
    assumed = design is None
    if assumed:
        equal = np.full(len(codes), 1 / len(codes))
        if stats.chisquare(counts, equal * counts.sum()).pvalue < 1e-3:
            design = counts / counts.sum()
            warnings.append("The arms are not of equal size; the designed shares are taken "
                            "as the observed ones (" + " / ".join(
                                f"{s:.1%}" for s in design) + ") for the propensities.")
        else:
            design = equal
    X, ids, id_name = _features_and_ids(df, keep, treatment, outcome, features, max_levels,
                                        warnings)
    return MultiArmData(X=X, y=y if kind == "continuous" else y.astype(np.int64), t=t,
                        arms=[_fmt(c) for c in codes], design=design, name=name,
                        warnings=warnings, ids=ids, id_name=id_name,
                        design_assumed=assumed)


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    return [w for w in re.split(r"[^0-9a-zA-Z]+", spaced.lower()) if w]


def guess_columns(df_or_columns: pd.DataFrame | Iterable[str]) -> dict[str, str | None]:
    """Guess which columns hold the treatment and the outcome, from their names.

    Exact names (case and punctuation ignored) are tried first, in a fixed order of likelihood
    (``treatment, treat, treated, is_treatment, t, w, segment, group, arm, variant,
    exposure...``; ``outcome, y, target, label, response, visit, conversion, converted,
    purchase, call...``, then the amounts ``spend, revenue, sales, amount...``), then names
    containing one of those words (``treatment_flag``, ``total_revenue``).

    Returns
    -------
    dict
        ``{"treatment": name or None, "outcome": name or None}``, two different columns.
    """
    cols = list(df_or_columns.columns if isinstance(df_or_columns, pd.DataFrame)
                else df_or_columns)
    norm = {c: "_".join(_tokens(c)) for c in cols}

    def pick(candidates: list[str], taken: str | None) -> str | None:
        for cand in candidates:
            for c in cols:
                if c != taken and norm[c] == cand:
                    return c
        for cand in (x for x in candidates if len(x) > 1):
            for c in cols:
                if c != taken and cand in _tokens(c):
                    return c
        return None

    treatment = pick(_TREATMENT_NAMES, None)
    return {"treatment": treatment, "outcome": pick(_OUTCOME_NAMES, treatment)}
