r"""The one representation of (possibly incomplete) label rankings, validated once.

A ranking of ``L`` labels for ``n`` rows is an ``(n, L)`` integer array of *positions*:
``Y[r, j] = 1`` for row ``r``'s most preferred label, ``2`` for the next, …, and ``0`` for a
label that is not in row ``r``'s ranking (unranked labels rank below every ranked one and
are tied among themselves).  Row ``r`` ranks ``L_t = (Y[r] > 0).sum()`` labels, which must
hold exactly the positions ``1 … L_t``.  A complete ranking has no zeros.

Predictions are always complete: :func:`positions_from_scores` turns label scores into
positions ``1 … L`` (highest score first, ties broken by the lower label index).

Known pairs of a row (SPEC §7): the ``C(L_t, 2)`` pairs among ranked labels plus the
``L_t (L − L_t)`` ranked-vs-unranked pairs, ``L_t (L − (L_t + 1)/2)`` in all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "check_features",
    "check_rankings",
    "lists_to_positions",
    "n_ranked",
    "positions_from_scores",
]


def check_features(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 ``(n, d)`` array, or ``ValueError`` naming the problem."""
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers only (features are numeric); "
                         "found a value that is not a number.") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (rows × features); got {arr.ndim} dims.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one row; got none.")
    if not np.isfinite(arr).all():
        r, c = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} must be finite; row {r}, feature {c} is {arr[r, c]}.")
    return arr


def check_rankings(Y, *, n_labels: int | None = None, name: str = "Y",
                   allow_empty_rows: bool = True) -> np.ndarray:
    """Validate a position array (module docstring); returns it as int64 ``(n, L)``.

    Raises ``ValueError`` naming the first bad row: a position out of ``0 … L``, a position
    used twice in a row (a label repeated), positions that are not ``1 … L_t`` (a gap), every
    row empty, or a row with no ranked label when ``allow_empty_rows`` is false.
    """
    arr = np.asarray(Y)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array of positions (rows × labels); "
                         f"got {arr.ndim} dims.")
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must rank at least 2 labels; got {arr.shape[1]}.")
    if n_labels is not None and arr.shape[1] != n_labels:
        raise ValueError(f"{name} must have one column per label ({n_labels}); "
                         f"got {arr.shape[1]}.")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold whole-number positions (0 = not ranked).")
    elif arr.dtype.kind not in "iub":
        raise ValueError(f"{name} must hold integer positions; got dtype {arr.dtype}.")
    arr = arr.astype(np.int64)
    n, L = arr.shape
    bad = (arr < 0) | (arr > L)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name} row {r}: position {arr[r, c]} of label {c} is out of range "
                         f"0 … {L} (0 = not ranked).")
    lt = (arr > 0).sum(axis=1)
    # Positions 1..L_t each exactly once <=> sorted nonzero positions equal 1..L_t.
    srt = np.sort(arr, axis=1)[:, ::-1]  # descending: ranked positions first
    expect = lt[:, None] - np.arange(L)[None, :]
    ok = np.where(np.arange(L)[None, :] < lt[:, None], srt == expect, True)
    if not ok.all():
        r = int(np.flatnonzero(~ok.all(axis=1))[0])
        pos = arr[r][arr[r] > 0]
        dup = [int(p) for p in np.unique(pos) if (pos == p).sum() > 1]
        what = (f"position {dup[0]} is given to two labels (a label repeated or two labels "
                "tied)" if dup else f"positions {sorted(map(int, pos))} are not 1 … {lt[r]}")
        raise ValueError(f"{name} row {r}: {what}.")
    if n and lt.max(initial=0) == 0:
        raise ValueError(f"{name}: every ranking is empty (no row ranks any label).")
    if not allow_empty_rows and (lt == 0).any():
        r = int(np.flatnonzero(lt == 0)[0])
        raise ValueError(f"{name} row {r} ranks no label.")
    return arr


def n_ranked(Y: np.ndarray) -> np.ndarray:
    """``L_t`` of every row: how many labels it ranks."""
    return (np.asarray(Y) > 0).sum(axis=1)


def positions_from_scores(scores) -> np.ndarray:
    """Complete positions ``1 … L`` from label scores ``(n, L)``: highest score first, ties
    broken by the lower label index (stable).

    Scores must be finite: a NaN has no place in an order (sorting would silently put it
    last), so NaN or ±inf raises ``ValueError`` with their count.

    >>> positions_from_scores([[0.1, 0.9, 0.5]]).tolist()
    [[3, 1, 2]]
    """
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("scores must hold numbers only (a score per label); found a value "
                         "that is not a number.") from None
    if s.ndim != 2:
        raise ValueError(f"scores must be a 2-d array (rows × labels); got {s.ndim} dims.")
    finite = np.isfinite(s)
    if not finite.all():
        r, c = np.argwhere(~finite)[0]
        raise ValueError(f"scores must be finite; got {int((~finite).sum())} NaN or infinite "
                         f"value(s) (the first: row {r}, label {c} is {s[r, c]}).")
    order = np.argsort(-s, axis=1, kind="stable")
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.arange(1, s.shape[1] + 1)[None, :].repeat(s.shape[0], 0),
                      axis=1)
    return pos.astype(np.int64)


def lists_to_positions(rankings: Sequence[Sequence[str]], labels: Sequence[str]) -> np.ndarray:
    """Ordered lists of label names (most preferred first) → position array over ``labels``.

    >>> lists_to_positions([["b", "a"], ["c"]], ["a", "b", "c"]).tolist()
    [[2, 1, 0], [0, 0, 1]]
    """
    labels = [str(x) for x in labels]
    index = {lab: j for j, lab in enumerate(labels)}
    if len(index) != len(labels):
        raise ValueError("labels must be distinct.")
    out = np.zeros((len(rankings), len(labels)), dtype=np.int64)
    for r, ranking in enumerate(rankings):
        for p, lab in enumerate(ranking, start=1):
            lab = str(lab).strip()
            if lab not in index:
                raise ValueError(f"ranking {r}: unknown label {lab!r} (labels: "
                                 f"{', '.join(labels[:10])}{', …' if len(labels) > 10 else ''}).")
            if out[r, index[lab]]:
                raise ValueError(f"ranking {r}: label {lab!r} appears twice.")
            out[r, index[lab]] = p
    return out
