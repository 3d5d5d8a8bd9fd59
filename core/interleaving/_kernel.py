r"""Private kernels behind :mod:`core.interleaving.estimators`; inputs are trusted (validated
there).

The simulators rest on one observation.  For a user, the union :math:`L^A_u \cup L^B_u` splits
into three *classes*: common items (in both lists), A-only and B-only items.  Both designs
(EPI and CBI, Algorithm 1 of Sato 2021) treat the items of one class exchangeably, so an
interleaved list is, in distribution, (i) a draw of the *counts* :math:`(c, a, b)` of common,
A-only and B-only items shown (:math:`c + a + b = n`), then (ii) a uniformly random subset of
that size inside each class, independently across classes.  Every estimator needs, per class,
only :math:`T` (sum of :math:`Y^T` over the shown items) and :math:`C` (sum of :math:`Y^C` over
the items not shown).  Given a class's composition (how many items have
:math:`(Y^T, Y^C) = (1,1), (1,0), (0,1), (0,0)`) and its count :math:`k`, the pair
:math:`(T, C)` follows a multivariate-hypergeometric law that is tabulated exactly here.
The tables engine therefore draws, per (repetition, user) and design, three small discrete
variables with Walker's alias method -- O(1) each -- instead of building lists item by item:
the joint (c, a, T, C) of the counts and the common class, then (T, C) of the A-only and of
the B-only class.  The lists engine builds the lists slot by slot (used for long lists and as
a cross-check).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import comb

try:  # the tables engine's fused loop; the NumPy version below draws the same numbers
    from core.interleaving import _compiled
except ImportError:  # pragma: no cover - numba is a listed dependency
    _compiled = None

FAST_MAX_N = 12  # alias tables grow like n**4 (joint count/common law); longer lists: "lists"
BITS = 5  # codes pack small counts in 5-bit fields (values <= FAST_MAX_N < 32)
MASK = (1 << BITS) - 1


# --------------------------------------------------------------------------- count laws
@lru_cache(maxsize=16)
def cbi_counts(n: int) -> np.ndarray:
    """``F[ov, c, a]`` = P(CBI shows c common, a A-only, b = n-c-a B-only items | overlap ov).

    Exact dynamic programme over Algorithm 1 (both starting lists, probability 1/2 each):
    at A's turn, with c common and a A-only items already shown, A's list has
    ``n - c - a > 0`` unshown items, ``ov - c`` of them common; B's turn likewise with b.
    """
    n1 = n + 1
    ov = np.arange(n1, dtype=float)[:, None, None]
    so = n - ov
    out = np.zeros((n1, n1, n1))
    for a_first in (True, False):
        prob = np.zeros((n1, n1, n1))
        prob[:, 0, 0] = 1.0
        for t in range(n):
            m = t + 1  # after t picks, only c, a <= t carry mass
            cur = prob[:, :m, :m]
            c = np.arange(m, dtype=float)[None, :, None]
            a = np.arange(m, dtype=float)[None, None, :]
            nxt = np.zeros((n1, n1, n1))
            a_turn = (t % 2 == 0) == a_first
            own = a if a_turn else t - c - a  # items already shown from the picker's own class
            rem = n - c - own
            safe = np.where(rem > 0, rem, 1.0)
            p_com = np.where(rem > 0, np.clip(ov - c, 0, None) / safe, 0.0)
            p_own = np.where(rem > 0, np.clip(so - own, 0, None) / safe, 0.0)
            nxt[:, 1 : m + 1, :m] += cur * p_com
            if a_turn:
                nxt[:, :m, 1 : m + 1] += cur * p_own
            else:
                nxt[:, :m, :m] += cur * p_own  # b grows implicitly with t
            prob = nxt
        out += 0.5 * prob
    out.setflags(write=False)
    return out


@lru_cache(maxsize=16)
def epi_counts(n: int) -> np.ndarray:
    """``F[ov, c, a]`` for EPI: multivariate hypergeometric, n of 2n-ov union items."""
    n1 = n + 1
    ov = np.arange(n1)[:, None, None]
    c = np.arange(n1)[None, :, None]
    a = np.arange(n1)[None, None, :]
    b = n - c - a
    so = n - ov
    num = comb(ov, c) * comb(so, a) * np.where(b >= 0, comb(so, np.clip(b, 0, None)), 0.0)
    out = num / comb(2 * n - ov, n)
    out.setflags(write=False)
    return out


def design_counts(design: str, n: int) -> np.ndarray:
    return cbi_counts(n) if design == "cbi" else epi_counts(n)


@lru_cache(maxsize=32)
def design_summary(design: str, n: int) -> dict[str, np.ndarray]:
    """Per overlap: inclusion probabilities and the probability that eq. 7 is defined.

    ``p_common[ov]`` (nan at ov = 0), ``p_other[ov]`` (nan at ov = n) and ``q[ov]`` =
    P(1 <= b <= n-1) = P(list A has shown and unshown items); by the A/B symmetry of both
    designs it is also P(1 <= a <= n-1).
    """
    f = design_counts(design, n)
    n1 = n + 1
    c = np.arange(n1)[None, :, None]
    a = np.arange(n1)[None, None, :]
    ov = np.arange(n1)
    e_c = (f * c).sum((1, 2))
    e_a = (f * a).sum((1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_common = np.where(ov > 0, e_c / np.maximum(ov, 1), np.nan)
        p_other = np.where(ov < n, e_a / np.maximum(n - ov, 1), np.nan)
    b = n - c - a
    q = (f * ((b >= 1) & (b <= n - 1))).sum((1, 2))
    return {"p_common": p_common, "p_other": p_other, "q": q}


# --------------------------------------------------------------------------- alias tables
def _alias(prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias tables for every row of ``prob`` (rows sum to 1), vectorised.

    Each pass pairs, in every row, the smallest unfinished cell (scaled mass < 1) with the
    largest one, which donates the missing mass (the largest is >= 1 whenever the smallest
    is < 1, because unfinished cells average 1).
    """
    t, k = prob.shape
    q = prob * k
    keep = np.ones((t, k))
    alias = np.broadcast_to(np.arange(k), (t, k)).copy()
    done = np.zeros((t, k), bool)
    rows = np.arange(t)
    for _ in range(k - 1):
        qs = np.where(done, np.inf, q)
        i = qs.argmin(1)
        small = qs[rows, i]
        ql = np.where(done, -np.inf, q)
        ql[rows, i] = -np.inf
        j = ql.argmax(1)
        active = small < 1.0
        keep[rows, i] = np.where(active, np.clip(small, 0.0, 1.0), 1.0)
        alias[rows, i] = np.where(active, j, i)
        q[rows, j] -= np.where(active, 1.0 - small, 0.0)
        done[rows, i] = True
    return keep, alias


@dataclass(frozen=True)
class AliasSet:
    """Many small discrete laws over integer *codes*, sampled in O(1) per draw.

    Cell ``j`` of a table keeps its own code with probability ``keep[j]`` and otherwise
    returns its alias's code; ``codes[2j]`` / ``codes[2j + 1]`` hold the two, so a draw is one
    uniform, two gathers and no branch.
    """

    width: int
    keep: np.ndarray  # (tables * width,)
    codes: np.ndarray  # (2 * tables * width,) own code, alias code, interleaved

    @classmethod
    def from_probabilities(cls, prob: np.ndarray, codes: np.ndarray | None = None) -> AliasSet:
        """``prob[table, cell]``; each row's support is compacted before building.  A drawn
        cell ``i`` is returned as ``codes[i]`` (default ``i``)."""
        nz = prob > 0
        width = max(1, int(nz.sum(1).max()))
        order = np.argsort(~nz, axis=1, kind="stable")[:, :width]
        compact = np.take_along_axis(prob, order, 1)
        compact = compact / compact.sum(1, keepdims=True)
        keep, alias = _alias(compact)
        own = order if codes is None else codes[order]
        other = np.take_along_axis(own, alias, 1)
        pair = np.stack([own.ravel(), other.ravel()], 1).ravel().astype(np.int32)
        return cls(width, keep.ravel(), pair)

    def draw(self, rng: np.random.Generator, offset: np.ndarray) -> np.ndarray:
        """One code per element; ``offset`` = table index times :attr:`width`."""
        x = rng.random(offset.shape)
        x *= self.width
        j = x.astype(np.intp)  # < width: u < 1 and u * width rounds below width
        x -= j
        j += offset
        alias = x >= self.keep.take(j)
        j <<= 1
        j |= alias
        return self.codes.take(j)


def class_law(comps: np.ndarray, n: int) -> np.ndarray:
    """``P[m, k, T + C * (n+1)]`` for class compositions ``comps[m] = (n11, n10, n01, n00)``.

    Showing a uniform k-subset of the class, T = shown items with Y^T = 1 and C = unshown
    items with Y^C = 1.  Counts k larger than the class get a dummy law (never drawn).
    """
    n1 = n + 1
    m = len(comps)
    n11, n10, n01, n00 = (comps[:, j] for j in range(4))
    size = comps.sum(1)
    k = np.arange(n1)[None, :]
    out = np.zeros((m, n1, n1 * n1))
    rows = np.arange(m)[:, None]
    for x11 in range(int(n11.max(initial=0)) + 1):
        for x10 in range(int(n10.max(initial=0)) + 1):
            for x01 in range(int(n01.max(initial=0)) + 1):
                w = comb(n11, x11) * comb(n10, x10) * comb(n01, x01)
                x00 = k - (x11 + x10 + x01)
                w = w[:, None] * np.where(x00 >= 0, comb(n00[:, None], np.clip(x00, 0, None)), 0)
                if not w.any():
                    continue
                code = (x11 + x10) + n1 * np.clip(n11 - x11 + n01 - x01, 0, n)
                out[rows, k, code[:, None]] += w
    total = comb(size[:, None], k)
    out /= np.where(total > 0, total, 1.0)[..., None]
    out[:, :, 0] += k > size[:, None]
    return out


# --------------------------------------------------------------------------- prepared world
@dataclass
class Prepared:
    """Per-user quantities of one (world, lists_a, lists_b), computed once per call."""

    n: int
    n_users: int
    ov: np.ndarray  # (U,) overlap |L^A ∩ L^B|
    tot_a: np.ndarray  # (U,) AB-total term of eq. 4 when shown L^A: sum_i Y_ui / n
    tot_b: np.ndarray
    lst_a: np.ndarray  # (U,) AB-list term of eq. 5: sum_{L^A} Y^T / n
    lst_b: np.ndarray
    diff: np.ndarray  # (U,) tau_{L^A_u} - tau_{L^B_u}
    pos_b: np.ndarray  # (U, n) union slot of each B position
    valid: np.ndarray  # (U, 2n) union slots: A's n items, then B's items not in A
    items: np.ndarray  # (U, 2n) item id per slot (-1 on invalid slots)
    y_t: np.ndarray  # (U, 2n) int8 Y^T on slots (0 on invalid)
    y_c: np.ndarray
    tables: dict | None = None  # tables engine: alias sets and per-user table offsets


def union_slots(lists_a: np.ndarray, lists_b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Union slots of rows of lists: ``(items, valid, pos_b, common_a)``."""
    n = lists_a.shape[1]
    match = lists_a[:, :, None] == lists_b[:, None, :]
    common_a = match.any(2)
    common_b = match.any(1)
    pos_b = np.where(common_b, match.argmax(1), n + np.arange(n)[None, :])
    items = np.concatenate([lists_a, np.where(common_b, -1, lists_b)], axis=1)
    valid = items >= 0
    return items, valid, pos_b.astype(np.intp), common_a


def common_slots(pos_b: np.ndarray) -> np.ndarray:
    """``(rows, 2n)`` flags of the union slots holding an item of both lists."""
    n = pos_b.shape[1]
    out = np.zeros((pos_b.shape[0], 2 * n), bool)
    np.put_along_axis(out, pos_b, pos_b < n, 1)
    return out


def prepare(y_t: np.ndarray, y_c: np.ndarray, lists_a: np.ndarray, lists_b: np.ndarray) -> Prepared:
    n_users, n = lists_a.shape
    items, valid, pos_b, common_a = union_slots(lists_a, lists_b)
    safe = np.where(valid, items, 0)
    st = np.take_along_axis(y_t, safe, 1).astype(np.int8) * valid
    sc = np.take_along_axis(y_c, safe, 1).astype(np.int8) * valid
    tau = st.astype(np.int16) - sc
    tau_a = tau[:, :n].sum(1)
    tau_b = np.take_along_axis(tau, pos_b, 1).sum(1)
    base = y_c.sum(1, dtype=np.int64)
    return Prepared(
        n=n, n_users=n_users, ov=common_a.sum(1).astype(np.intp),
        tot_a=(base + tau_a) / n, tot_b=(base + tau_b) / n,
        lst_a=st[:, :n].sum(1) / n, lst_b=np.take_along_axis(st, pos_b, 1).sum(1) / n,
        diff=(tau_a - tau_b) / n, pos_b=pos_b, valid=valid, items=items,
        y_t=st.astype(np.int8), y_c=sc.astype(np.int8),
    )


def ensure_tables(prep: Prepared) -> dict:
    """Alias tables of the tables engine, built once per prepared world.

    * ``classes``: for every composition of an A-only / B-only class and every count k, the
      law of (T, C), packed as ``T | C << BITS``;
    * ``joint[design]``: for every composition of the common class, the joint law of the
      design's counts and the common class's sums, (c, a, T_c, C_c), packed in four fields.
    Per user: table offsets (already multiplied by the table width).
    """
    if prep.tables is not None:
        return prep.tables
    n = prep.n
    n1 = n + 1
    kind = 2 * prep.y_t + prep.y_c  # 3: (1,1), 2: (1,0), 1: (0,1), 0: (0,0)
    is_common = common_slots(prep.pos_b)
    slots = np.arange(2 * n)[None, :]
    masks = (is_common, (slots < n) & ~is_common, (slots >= n) & prep.valid)
    comps = []
    for mask in masks:
        cnt = [((kind == v) & mask).sum(1) for v in (3, 2, 1)]
        comps.append(np.stack(cnt + [mask.sum(1) - cnt[0] - cnt[1] - cnt[2]], 1))
    tc = np.arange(n1 * n1)
    tc_code = (tc % n1) | ((tc // n1) << BITS)
    # A-only and B-only classes share one set of tables
    uniq, inv = np.unique(np.concatenate(comps[1:], 0), axis=0, return_inverse=True)
    classes = AliasSet.from_probabilities(class_law(uniq, n).reshape(-1, n1 * n1), tc_code)
    inv = inv.reshape(2, prep.n_users)
    out = {"classes": classes, "off_a": inv[0] * n1 * classes.width,
           "off_b": inv[1] * n1 * classes.width}
    # joint (counts, common class) per design
    uc, inv_c = np.unique(comps[0], axis=0, return_inverse=True)
    law_c = class_law(uc, n)  # (M, c, T/C cell)
    cells = np.arange(n1 * n1 * n1 * n1)
    c_, rest = np.divmod(cells, n1 * n1 * n1)
    a_, cell = np.divmod(rest, n1 * n1)
    codes = c_ | (a_ << BITS) | (tc_code[cell] << (2 * BITS))
    for design in ("epi", "cbi"):
        f = design_counts(design, n)[uc.sum(1)]  # (M, c, a)
        joint = f[:, :, :, None] * law_c[:, :, None, :]
        alias = AliasSet.from_probabilities(joint.reshape(len(uc), -1), codes)
        out[f"joint_{design}"] = alias
        out[f"off_{design}"] = inv_c.ravel() * alias.width
        out[f"w_{design}"] = rct_weights(prep, design)
        out[f"ips_{design}"] = ips_coefficients(prep, design)
    prep.tables = out
    return out


# --------------------------------------------------------------------------- user draws
def sample_users(rng: np.random.Generator, n_total: int, n_users: int, n_reps: int) -> np.ndarray:
    """``(n_reps, n_users)`` uniform draws without replacement, in uniformly random order.

    Few users: a partial Fisher-Yates shuffle vectorised across repetitions (one step per
    drawn user); many users: a full shuffle of every row (``Generator.permuted``).
    """
    if 4 * n_users > n_total:
        base = np.broadcast_to(np.arange(n_total, dtype=np.int32), (n_reps, n_total))
        return rng.permuted(base, axis=1)[:, :n_users].astype(np.intp)
    dtype = np.int16 if n_total < 2**15 else np.int32
    state = np.broadcast_to(np.arange(n_total, dtype=dtype)[:, None], (n_total, n_reps)).copy()
    cols = np.arange(n_reps)
    for j in range(n_users):
        r = rng.integers(j, n_total, size=n_reps)
        tmp = state[j].copy()
        state[j] = state[r, cols]
        state[r, cols] = tmp
    return np.ascontiguousarray(state[:n_users].T).astype(np.intp)


# --------------------------------------------------------------------------- estimator pieces
@lru_cache(maxsize=64)
def rct_lookups(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For k shown items of a list: 1/k, 1/(n-k) and eq. 7's definedness (0 < k < n)."""
    k = np.arange(n + 1)
    ok = (k >= 1) & (k <= n - 1)
    inv_t = np.where(ok, 1.0 / np.maximum(k, 1), 0.0)
    inv_c = np.where(ok, 1.0 / np.maximum(n - k, 1), 0.0)
    return inv_t, inv_c, ok


def rct_weights(prep: Prepared, design: str) -> np.ndarray:
    """Horvitz-Thompson weight 1/q of a user's eq. 7 terms; 0 for identical lists, nan when
    eq. 7 can never be defined (n = 1)."""
    q = design_summary(design, prep.n)["q"][prep.ov]
    w = np.where(q > 0, 1.0 / np.where(q > 0, q, 1.0), np.nan)
    return np.where(prep.ov == prep.n, 0.0, w)


def ips_coefficients(prep: Prepared, design: str) -> tuple[np.ndarray, np.ndarray]:
    """Per user: 1/(n p) and 1/(n (1-p)) for the items in only one list (0 if none)."""
    p = design_summary(design, prep.n)["p_other"][prep.ov]
    ident = prep.ov == prep.n
    p = np.where(ident, 0.5, p)
    k_t = np.where(ident, 0.0, 1.0 / (prep.n * p))
    k_c = np.where(ident, 0.0, 1.0 / (prep.n * (1 - p)))
    return k_t, k_c


def pool(contrib: np.ndarray, defined: np.ndarray | None) -> np.ndarray:
    """Mean over users (axis 1); with ``defined``, over defined users only (nan if none)."""
    if defined is None:
        return contrib.mean(1)
    cnt = defined.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.where(defined, contrib, 0.0).sum(1)
        return np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan)


def tables_chunk(prep: Prepared, designs: list[str], methods: set[str], users: np.ndarray,
                 streams: dict[str, np.random.Generator], rct_undefined: str) -> dict:
    """Tables engine for one chunk of ``(reps, users)``: per design, one joint draw of
    (c, a, T_c, C_c) and one (T, C) draw for each of the A-only and B-only classes.

    With numba, one fused loop per design (:func:`core.interleaving._compiled.design_chunk`;
    the Figure-1 grid 1.14–1.25× faster); without, whole-array NumPy passes
    (:func:`_tables_chunk_numpy`).  Both take the same uniforms from the same streams, so
    they draw the same experiments.
    """
    if _compiled is None:
        return _tables_chunk_numpy(prep, designs, methods, users, streams, rct_undefined)
    n = prep.n
    tab = prep.tables
    flat = users.ravel()
    n_reps, n_users = users.shape
    law = tab["classes"]
    inv_t, inv_c, ok = rct_lookups(n)
    reweight = rct_undefined == "reweight"
    out: dict[str, np.ndarray] = {}
    for d in designs:
        want_rct, want_ips = f"{d}_rct" in methods, f"{d}_ips" in methods
        joint = tab[f"joint_{d}"]
        u_joint, u_a, u_b = (streams[f"{d}_{s}"].random(flat.shape) for s in ("counts", "a", "b"))
        rct, ips = np.empty(n_reps), np.empty(n_reps)
        _compiled.design_chunk(
            flat, n_users, n, BITS, u_joint, u_a, u_b,
            joint.width, joint.keep, joint.codes, tab[f"off_{d}"],
            law.width, law.keep, law.codes, tab["off_a"], tab["off_b"],
            inv_t, inv_c, ok, tab[f"w_{d}"], *tab[f"ips_{d}"],
            want_rct, reweight, want_ips, rct, ips)
        if want_rct:
            out[f"{d}_rct"] = rct
        if want_ips:
            out[f"{d}_ips"] = ips
    return out


def _tables_chunk_numpy(prep: Prepared, designs: list[str], methods: set[str],
                        users: np.ndarray, streams: dict[str, np.random.Generator],
                        rct_undefined: str) -> dict:
    """:func:`tables_chunk` in whole-array NumPy passes (no numba)."""
    n = prep.n
    tab = prep.tables
    shape = users.shape
    flat = users.ravel()
    law = tab["classes"]
    off_a = tab["off_a"].take(flat)
    off_b = tab["off_b"].take(flat)
    inv_t, inv_c, ok = rct_lookups(n)
    out: dict[str, np.ndarray] = {}
    for d in designs:
        j = tab[f"joint_{d}"].draw(streams[f"{d}_counts"], tab[f"off_{d}"].take(flat))
        c = j & MASK
        a = (j >> BITS) & MASK
        t_c = (j >> 2 * BITS) & MASK
        c_c = j >> 3 * BITS
        b = n - c - a
        ka = law.draw(streams[f"{d}_a"], off_a + a * law.width)
        kb = law.draw(streams[f"{d}_b"], off_b + b * law.width)
        t_a, c_a = ka & MASK, ka >> BITS
        t_b, c_b = kb & MASK, kb >> BITS
        if f"{d}_rct" in methods:
            na, nb = c + a, n - a
            s = (t_c + t_a) * inv_t.take(na) - (c_c + c_a) * inv_c.take(na)
            s -= (t_c + t_b) * inv_t.take(nb) - (c_c + c_b) * inv_c.take(nb)
            if rct_undefined == "reweight":
                s *= tab[f"w_{d}"].take(flat)
                out[f"{d}_rct"] = s.reshape(shape).mean(1)
            else:
                out[f"{d}_rct"] = pool(s.reshape(shape), (ok.take(na) & ok.take(nb)).reshape(shape))
        if f"{d}_ips" in methods:
            k_t, k_c = tab[f"ips_{d}"]
            e = (t_a - t_b) * k_t.take(flat) - (c_a - c_b) * k_c.take(flat)
            out[f"{d}_ips"] = e.reshape(shape).mean(1)
    return out


def slot_epi(rng: np.random.Generator, valid: np.ndarray, n: int) -> np.ndarray:
    """EPI on union slots: n of the valid slots, uniformly, in uniformly random order."""
    keys = rng.random(valid.shape)
    keys[~valid] = 2.0
    sel = np.argpartition(keys, n - 1, axis=1)[:, :n]
    order = np.argsort(np.take_along_axis(keys, sel, 1), axis=1)
    return np.take_along_axis(sel, order, 1)


def slot_cbi(rng: np.random.Generator, pos_b: np.ndarray) -> np.ndarray:
    """Algorithm 1 on union slots, vectorised over rows; returns the slots in pick order.

    A list is never exhausted: before the t-th pick (t < n) a list of n items has at most t
    shown items, so at least n - t >= 1 candidates remain.
    """
    rows_n, n = pos_b.shape
    rows = np.arange(rows_n)
    shown = np.zeros((rows_n, 2 * n), bool)
    a_first = rng.random(rows_n) < 0.5
    own_a = np.broadcast_to(np.arange(n), (rows_n, n))
    picks = np.empty((rows_n, n), np.intp)
    for t in range(n):
        a_turn = a_first if t % 2 == 0 else ~a_first
        cand = np.where(a_turn[:, None], own_a, pos_b)
        keys = np.where(np.take_along_axis(shown, cand, 1), -1.0, rng.random((rows_n, n)))
        slot = cand[rows, keys.argmax(1)]
        shown[rows, slot] = True
        picks[:, t] = slot
    return picks


def slot_estimates(z: np.ndarray, y: np.ndarray, pos_b: np.ndarray, ov: np.ndarray, n: int,
                   design: str) -> dict[str, np.ndarray]:
    """Per-row eq. 7 and eq. 8 pieces from shown flags ``z`` and observed ``y`` on slots."""
    z_a, y_a = z[:, :n], y[:, :n]
    z_b, y_b = np.take_along_axis(z, pos_b, 1), np.take_along_axis(y, pos_b, 1)
    inv_t, inv_c, ok = rct_lookups(n)
    out = {}
    for name, zz, yy in (("a", z_a, y_a), ("b", z_b, y_b)):
        k = zz.sum(1)
        out[f"rct_{name}"] = (zz * yy).sum(1) * inv_t[k] - (~zz * yy).sum(1) * inv_c[k]
        out[f"ok_{name}"] = ok[k]
    info = design_summary(design, n)
    common = common_slots(pos_b)
    p = np.where(common, info["p_common"][ov][:, None], info["p_other"][ov][:, None])
    p = np.where(np.isnan(p), 1.0, p)  # only slots that cannot occur
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(z, 1.0 / p, np.where(p < 1, -1.0 / (1.0 - p), 0.0))
    wy = w * y
    out["ips_a"] = wy[:, :n].sum(1) / n
    out["ips_b"] = np.take_along_axis(wy, pos_b, 1).sum(1) / n
    return out


def lists_design(prep: Prepared, design: str, methods: set[str], users: np.ndarray,
                 streams: dict[str, np.random.Generator], rct_undefined: str) -> dict:
    """Lists engine: build every interleaved list on union slots, then estimate."""
    flat = users.ravel()
    pos_b = prep.pos_b[flat]
    rng = streams[f"{design}_counts"]
    picks = slot_epi(rng, prep.valid[flat], prep.n) if design == "epi" else slot_cbi(rng, pos_b)
    z = np.zeros((flat.size, 2 * prep.n), bool)
    np.put_along_axis(z, picks, True, 1)
    y = np.where(z, prep.y_t[flat], prep.y_c[flat])
    est = slot_estimates(z, y, pos_b, prep.ov[flat], prep.n, design)
    out = {}
    if f"{design}_rct" in methods:
        d = (est["rct_a"] - est["rct_b"]).reshape(users.shape)  # undefined terms are 0 here
        if rct_undefined == "reweight":
            out[f"{design}_rct"] = (d * rct_weights(prep, design)[users]).mean(1)
        else:
            out[f"{design}_rct"] = pool(d, (est["ok_a"] & est["ok_b"]).reshape(users.shape))
    if f"{design}_ips" in methods:
        out[f"{design}_ips"] = (est["ips_a"] - est["ips_b"]).reshape(users.shape).mean(1)
    return out


STREAMS = ("users", "epi_counts", "epi_a", "epi_b", "cbi_counts", "cbi_a", "cbi_b")


def make_streams(rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """One independent generator per purpose, so that the draws of one method do not depend
    on which other methods are simulated alongside (common random numbers)."""
    seeds = rng.integers(0, 2**63 - 1, size=len(STREAMS))
    return {name: np.random.default_rng(int(s)) for name, s in zip(STREAMS, seeds)}
