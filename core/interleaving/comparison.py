r"""What every interleaving experiment shares: the method names, :class:`Comparison` (a world
and two rankers' lists), the truth :math:`\tau_A - \tau_B` (Sato 2021, eqs. 2 and 6) and the
argument checks of :mod:`core.interleaving.estimators` and :mod:`core.interleaving.simulation`
(both import from here; neither imports the other's internals).

References
----------
Sato, M. (2021). Online Evaluation Methods for the Causal Effect of Recommendations.
*RecSys '21*. doi:10.1145/3460231.3474235.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core._validation import check_choice, is_integer

__all__ = ["METHODS", "PAPER_METHODS", "PAPER_USER_COUNTS", "Comparison", "Progress",
           "true_difference", "user_effects"]

PAPER_METHODS: tuple[str, ...] = ("ab_total", "ab_list", "epi_rct", "cbi_rct", "cbi_ips")
METHODS: tuple[str, ...] = PAPER_METHODS + ("epi_ips",)
PAPER_USER_COUNTS: tuple[int, ...] = (
    10, 14, 20, 30, 50, 70, 100, 140, 200, 300, 500, 700, 1000, 1400, 2000,
)
_AB = ("ab_total", "ab_list")
Progress = Callable[[float], Any]


@dataclass(frozen=True, eq=False)  # arrays inside: compare fields explicitly
class Comparison:
    """A world and two rankers' lists: everything a simulated experiment needs.

    Attributes
    ----------
    y_treated, y_control : ndarray of uint8, shape (users, items)
        Potential outcomes with and without recommendation.
    lists_a, lists_b : ndarray of int, shape (users, n)
        The two rankers' lists (item ids, best first).
    label_a, label_b : str
        Display names of the rankers.
    """

    y_treated: np.ndarray
    y_control: np.ndarray
    lists_a: np.ndarray
    lists_b: np.ndarray
    label_a: str = "A"
    label_b: str = "B"

    @property
    def truth(self) -> float:
        """:math:`\\tau_A - \\tau_B` (see :func:`true_difference`)."""
        return true_difference(self.y_treated, self.y_control, self.lists_a, self.lists_b)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.y_treated, self.y_control, self.lists_a, self.lists_b


# ------------------------------------------------------------------------------ validation
def _binary_matrix(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d (users, items) array; got shape {arr.shape}.")
    if arr.dtype == bool:
        return arr.view(np.uint8)
    if arr.dtype.kind not in "iuf" or not ((arr == 0) | (arr == 1)).all():
        raise ValueError(f"{name} must hold only 0 and 1 (or booleans); got dtype {arr.dtype}.")
    return arr.astype(np.uint8, copy=False)


def _lists(values: Any, name: str, *, n_items: int | None = None,
           ndim: int | None = 2) -> np.ndarray:
    arr = np.asarray(values)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(
            f"{name} must be a 2-d (users, n) array of item ids; got shape {arr.shape}."
        )
    if arr.ndim < 1 or arr.shape[-1] < 1:
        raise ValueError(f"{name} must have at least one item per list; got shape {arr.shape}.")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer item ids; got dtype {arr.dtype}.")
    arr = arr.astype(np.int64, copy=False)
    n = arr.shape[-1]
    if n_items is not None and n > n_items:
        raise ValueError(
            f"{name} has lists of n={n} items, more than the {n_items} items of the world."
        )
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} holds item ids out of range: minimum {arr.min()} < 0.")
    if n_items is not None and arr.size and arr.max() >= n_items:
        raise ValueError(
            f"{name} holds item ids out of range: maximum {arr.max()} >= number of items {n_items}."
        )
    srt = np.sort(arr, axis=-1)
    dup = (srt[..., 1:] == srt[..., :-1]).any(-1)
    if dup.any():
        where = np.argwhere(dup)[0]
        raise ValueError(f"{name} has duplicate items in a list (row {tuple(where.tolist())}).")
    return arr


def _pair(lists_a: Any, lists_b: Any, *, n_items: int | None = None, ndim: int | None = 2):
    a = _lists(lists_a, "lists_a", n_items=n_items, ndim=ndim)
    b = _lists(lists_b, "lists_b", n_items=n_items, ndim=ndim)
    if a.shape != b.shape:
        raise ValueError(f"lists_b must have the same shape as lists_a {a.shape}; got {b.shape}.")
    return a, b


def _world(y_treated: Any, y_control: Any, lists_a: Any, lists_b: Any):
    yt = _binary_matrix(y_treated, "y_treated")
    yc = _binary_matrix(y_control, "y_control")
    if yc.shape != yt.shape:
        raise ValueError(
            f"y_control must have the same shape as y_treated {yt.shape}; got {yc.shape}."
        )
    a, b = _pair(lists_a, lists_b, n_items=yt.shape[1])
    if a.shape[0] != yt.shape[0]:
        raise ValueError(
            f"lists_a must have one row per user ({yt.shape[0]} users in y_treated); "
            f"got {a.shape[0]}."
        )
    return yt, yc, a, b


def _unpack(world: Any) -> tuple:
    if isinstance(world, Comparison):
        return world.arrays
    if all(hasattr(world, k) for k in ("y_treated", "y_control", "lists_a", "lists_b")):
        return world.y_treated, world.y_control, world.lists_a, world.lists_b
    if isinstance(world, Sequence) and len(world) == 4:
        return tuple(world)
    raise ValueError(
        "world must be a Comparison, an object with y_treated, y_control, lists_a and lists_b, "
        f"or a 4-tuple of those arrays; got {type(world).__name__}."
    )


def _check_n_users(n_users: Any, n_total: int, methods: Iterable[str],
                   name: str = "n_users") -> int:
    ok = is_integer(n_users)
    if not ok:
        raise ValueError(f"{name} must be a positive integer; got {n_users!r}.")
    ab = [m for m in methods if m in _AB]
    low = 2 if ab else 1
    if n_users < low:  # the reason only when an A/B method sets the minimum
        why = f" (A/B methods split users in two: {', '.join(ab)})" if ab else ""
        raise ValueError(f"{name} must be at least {low}{why}; got {n_users}.")
    if n_users > n_total:
        raise ValueError(
            f"{name} must be at most the number of users in the world ({n_total}); got {n_users}."
        )
    return int(n_users)


def _check_methods(methods: Any) -> tuple[str, ...]:
    if isinstance(methods, str):
        methods = (methods,)
    out = tuple(methods)
    if not out:
        raise ValueError("methods must name at least one method; got an empty sequence.")
    for m in out:
        check_choice(m, "method", METHODS)
    return tuple(dict.fromkeys(out))


# ------------------------------------------------------------------------------ the truth
def user_effects(y_treated: Any, y_control: Any, lists: Any) -> np.ndarray:
    r"""Per-user average effect of a list, eq. 6:
    :math:`\tau_{L_u} = \frac1n\sum_{i\in L_u}\tau_{ui}`.

    Returns
    -------
    ndarray of float64, shape (users,)
    """
    yt, yc, a, _ = _world(y_treated, y_control, lists, lists)
    tau = yt.astype(np.int16) - yc
    return np.take_along_axis(tau, a, 1).mean(1)


def true_difference(y_treated: Any, y_control: Any, lists_a: Any, lists_b: Any) -> float:
    r"""True difference of average causal effects :math:`\tau_A - \tau_B` (eq. 2).

    :math:`\tau_A = \frac{1}{|U|}\sum_u \frac1n \sum_{i\in L^A_u} (Y^T_{ui} - Y^C_{ui})`.

    Parameters
    ----------
    y_treated, y_control : array-like of 0/1, shape (users, items)
    lists_a, lists_b : array-like of int, shape (users, n)

    Returns
    -------
    float
    """
    yt, yc, a, b = _world(y_treated, y_control, lists_a, lists_b)
    tau = yt.astype(np.int16) - yc
    return float(np.take_along_axis(tau, a, 1).mean() - np.take_along_axis(tau, b, 1).mean())
