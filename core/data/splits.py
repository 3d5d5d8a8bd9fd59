"""Train/test splits of an A/B test, stratified on treatment and outcome jointly.

Devriendt et al. (2020, §4.1) evaluate every model on 10 random 70/30 splits; keeping the
shares of the four (treatment, outcome) cells equal in both parts keeps the test curves
comparable from split to split.

References
----------
Devriendt, F., Van Belle, J., Guns, T. & Verbeke, W. (2020). Learning to rank for uplift
modeling. *IEEE TKDE*. arXiv:2002.05897.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from core._validation import (
    as_generator,
    check_binary,
    check_choice,
    check_fraction,
    check_int_at_least,
    check_same_length,
    check_seed,
    is_integer,
)

__all__ = ["SCHEMES", "make_splits",
           "split_problem"]

#: Split schemes: one stratified holdout, or ``n_repeats`` stratified random holdouts.
SCHEMES = ("holdout", "repeated")
#: The (treatment, outcome) cells by their stratum 2·t + y.
_CELLS = ("control non-responders", "control responders", "treated non-responders",
          "treated responders")


def split_problem(y: Any, t: Any, *, test_size: float = 0.3) -> str | None:
    """Why :func:`make_splits` would refuse these data (a sentence), or ``None``: a
    (treatment, outcome) cell of a single row, or too few rows for a test share of
    ``test_size`` to hold a row of every cell.  What the Train page checks before queueing
    jobs that would all fail the same way.

    >>> split_problem([1, 0, 0, 1, 0], [1, 1, 0, 0, 0])
    'Splitting the rows into training and test rows needs at least 2 rows in every \
(treatment, outcome) cell, one for each part; got control responders: 1; treated non-responders: \
1; treated responders: 1.'
    """
    y = check_binary(y, "y")
    t = check_binary(t, "t")
    check_same_length(y, t)
    test_size = check_fraction(test_size, "test_size")
    return _unsplittable(np.bincount(2 * t.astype(np.int64) + y, minlength=4), test_size)


def _unsplittable(counts: np.ndarray, test_size: float) -> str | None:
    small = [f"{_CELLS[c]}: {counts[c]}" for c in range(4) if 0 < counts[c] < 2]
    if small:
        return ("Splitting the rows into training and test rows needs at least 2 rows in "
                "every (treatment, outcome) cell, one for each part; got "
                f"{'; '.join(small)}.")
    n, n_cells = int(counts.sum()), int((counts > 0).sum())
    n_test = math.ceil(test_size * n)
    if n_test < n_cells or n - n_test < n_cells:
        return (f"A test share of {test_size:.0%} of {n} rows gives {n_test} test and "
                f"{n - n_test} training rows; each part needs at least one row of each of the "
                f"{n_cells} (treatment, outcome) cells: the data has too few rows to train "
                "and test a model.")
    return None


def make_splits(y: Any, t: Any, *, scheme: str = "holdout", test_size: float = 0.3,
                n_repeats: int = 10, random_state: Any = 0
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified train/test splits of an A/B test, stratified on ``(t, y)`` jointly.

    The four cells (treated/control × responder/non-responder) keep their shares in the
    train and the test part: :class:`sklearn.model_selection.StratifiedShuffleSplit` on the
    label ``2·t + y``.  Devriendt et al. (2020, §4.1) use 10 repetitions of a 70/30 split.

    Parameters
    ----------
    y, t : array-like of 0/1, shape (n,)
    scheme : {"holdout", "repeated"}
        One split, or ``n_repeats`` independent ones.
    test_size : float in (0, 1), default 0.3
    n_repeats : int, default 10
        Ignored for ``"holdout"``.
    random_state : int, Generator or None, default 0

    Returns
    -------
    list of (train, test)
        Sorted ``int64`` row positions; disjoint, together every row.

    Raises
    ------
    ValueError
        A non-empty cell with fewer than 2 rows, or a test or train part too small to hold
        one row of every cell.
    """
    y = check_binary(y, "y")
    t = check_binary(t, "t")
    check_same_length(y, t)
    check_choice(scheme, "scheme", SCHEMES)
    test_size = check_fraction(test_size, "test_size")
    if test_size >= 1:
        raise ValueError(f"test_size must be a number in (0, 1); got {test_size!r}.")
    n_splits = 1 if scheme == "holdout" else check_int_at_least(n_repeats, "n_repeats", 1)
    if is_integer(random_state):
        seed = check_seed(random_state)
    else:
        seed = int(as_generator(random_state).integers(0, 2**31 - 1))
    strata = 2 * t.astype(np.int64) + y
    reason = _unsplittable(np.bincount(strata, minlength=4), test_size)
    if reason is not None:
        raise ValueError(reason)
    n = y.shape[0]
    from sklearn.model_selection import StratifiedShuffleSplit

    sss = StratifiedShuffleSplit(n_splits=n_splits, test_size=test_size, random_state=seed)
    return [(np.sort(tr).astype(np.int64), np.sort(te).astype(np.int64))
            for tr, te in sss.split(np.zeros((n, 1)), strata)]


