r"""Label-ranking data: the :class:`LabelRankingData` container, generators and a CSV reader.

Rankings are position arrays ``(n, L)`` (1 = most preferred, 0 = not ranked; see
:mod:`core.label_ranking._rankings`).  Every generator takes ``random_state`` (None, an int, a
SeedSequence or a Generator), touches no global seed and downloads nothing:

* :func:`make_ad_clicks` — users' ad-click rankings of ad categories from simulated browsing
  histories, with the features of Djuric et al. (2014) (age / gender one-hots, intensity and
  recency per category of page views, searches, search clicks, sponsored clicks and, optionally,
  ad views);
* :func:`from_sklearn` — iris, wine, digits with complete rankings from a naive-Bayes model,
  as Cheng, Hühn and Hüllermeier (2009) built the standard label-ranking benchmarks;
* :func:`make_mallows_mixture` — a feature-dependent mixture of Mallows models, optionally
  truncated to the top k;
* :func:`read_rankings_csv` — an analyst's CSV of numeric features plus rankings.

:func:`label_frequencies` and :func:`ranking_lengths` summarise the rankings (the paper's
Figure 1).

References
----------
Djuric, N., Grbovic, M., Radosavljevic, V., Bhamidipati, N., Vucetic, S. (2014). Non-linear
label ranking for large-scale prediction of long-term user interests. AAAI (section
"Dataset", eqs. 13–14, Figure 1).
Cheng, W., Hühn, J., Hüllermeier, E. (2009). Decision tree and instance-based learning for
label ranking. ICML, 161–168.
Doignon, J.-P., Pekeč, A., Regenwetter, M. (2004). The repeated insertion model for rankings:
missing link between two subset choice models. Psychometrika 69(1), 33–54.
Fligner, M. A., Verducci, J. S. (1986). Distance based ranking models. JRSS B 48(3), 359–369.
Gupta, N., Das, A., Pandey, S., Narayanan, V. K. (2012). Factoring past exposure in display
advertising targeting. KDD, 1204–1212.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from core._validation import (
    as_generator,
    check_choice,
    check_fraction,
    check_int_at_least,
    is_integer,
)
from core.data.abdata import DataError
from core.data.csvio import read_frame
from core.label_ranking._rankings import (
    check_features,
    check_rankings,
    n_ranked,
    positions_from_scores,
)

__all__ = [
    "AD_CATEGORIES",
    "AGE_BUCKETS",
    "LabelRankingData",
    "from_sklearn",
    "label_frequencies",
    "make_ad_clicks",
    "make_mallows_mixture",
    "ranking_lengths",
    "read_rankings_csv",
]


# ------------------------------------------------------------------ the container
@dataclass
class LabelRankingData:
    """Features and (possibly incomplete) label rankings of ``n`` rows.

    Parameters
    ----------
    X : DataFrame or array of shape (n, d)
        Numeric, finite features.  An array becomes a DataFrame with columns ``x1 … xd``.
    Y : array of int, shape (n, L)
        Positions: 1 = most preferred, 0 = not ranked (validated by ``check_rankings``).
    labels : list of str
        The ``L`` label names, in the column order of ``Y``.
    groups : array of str, shape (n,), or None
        A group per row (e.g. ``"F 21-24"``, age × gender) for the per-group baselines.
    name : str
        Short human label.
    description : str
        How the data were made or read, with the source.
    feature_blocks : dict of str to list of str
        Named sets of feature columns (e.g. ``"adv"`` = the ad-view block) so a model can be
        trained with and without a block (:meth:`without`).
    truth : dict
        What the generator knows and a learner must not see (true centres, components,
        expected clicks …); empty for real data.
    warnings : list of str
        How the data were read, for the reader to see (encoding guessed, rows that rank no
        label …); empty for generated data.
    """

    X: pd.DataFrame
    Y: np.ndarray
    labels: list[str]
    groups: np.ndarray | None = None
    name: str = "label-ranking data"
    description: str = ""
    feature_blocks: dict[str, list[str]] = field(default_factory=dict)
    truth: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.X, pd.DataFrame):
            arr = check_features(self.X)
            self.X = pd.DataFrame(arr, columns=[f"x{j + 1}" for j in range(arr.shape[1])])
        else:
            check_features(self.X)
            self.X = self.X.reset_index(drop=True)
            self.X.columns = [str(c) for c in self.X.columns]
        self.Y = check_rankings(self.Y)
        n, L = self.Y.shape
        if self.X.shape[0] != n:
            raise ValueError(f"Y must have one row per row of X ({self.X.shape[0]}); got {n}.")
        self.labels = [str(lab) for lab in self.labels]
        if len(self.labels) != L or len(set(self.labels)) != L:
            raise ValueError(f"labels must be {L} distinct names (one per column of Y); got "
                             f"{len(self.labels)} ({len(set(self.labels))} distinct).")
        if self.groups is not None:
            self.groups = np.asarray(self.groups).astype(str)
            if self.groups.shape != (n,):
                raise ValueError(f"groups must have one value per row ({n}); got shape "
                                 f"{self.groups.shape}.")
        columns = set(self.X.columns)
        for block, cols in self.feature_blocks.items():
            missing = [c for c in cols if c not in columns]
            if missing:
                raise ValueError(f"feature block {block!r} names columns that X does not have: "
                                 f"{missing[:5]}.")

    def fingerprint(self) -> str:
        """16 hex digits of SHA-256 over everything a result depends on.

        Features (names and values), rankings, label names, groups (or their absence) and
        feature blocks: two data sets with the same fingerprint give the same experiment, and
        changing or clearing the group column, or renaming a label, changes it.

        Examples
        --------
        >>> a = LabelRankingData(X=[[0.0], [1.0]], Y=[[1, 2], [2, 1]], labels=["a", "b"])
        >>> b = replace(a, groups=["F", "M"])
        >>> len(a.fingerprint()), a.fingerprint() == b.fingerprint()
        (16, False)
        >>> a.fingerprint() == replace(a, labels=["b", "a"]).fingerprint()
        False
        """
        h = hashlib.sha256()

        def part(tag: str, payload: bytes) -> None:
            h.update(tag.encode() + len(payload).to_bytes(8, "little") + payload)

        part("X", np.ascontiguousarray(self.X.to_numpy(dtype=np.float64)).tobytes())
        part("Y", np.ascontiguousarray(self.Y, dtype=np.int64).tobytes())
        part("shape", json.dumps([list(self.X.shape), list(self.Y.shape)]).encode())
        part("columns", json.dumps(list(self.X.columns)).encode())
        part("labels", json.dumps(self.labels).encode())
        part("groups", b"none" if self.groups is None
             else json.dumps(self.groups.tolist()).encode())
        part("blocks", json.dumps(self.feature_blocks, sort_keys=True).encode())
        return h.hexdigest()[:16]

    @property
    def feature_names(self) -> list[str]:
        """The column names of ``X``."""
        return list(self.X.columns)

    def without(self, *blocks: str) -> LabelRankingData:
        """A copy without the columns of the named feature blocks (e.g. ``without("adv")``)."""
        for b in blocks:
            check_choice(b, "block", self.feature_blocks)
        drop = {c for b in blocks for c in self.feature_blocks[b]}
        keep = [c for c in self.X.columns if c not in drop]
        return replace(self, X=self.X[keep].copy(),
                       feature_blocks={k: v for k, v in self.feature_blocks.items()
                                       if k not in blocks})


def label_frequencies(Y) -> np.ndarray:
    """How many rows rank each label: ``(L,)`` counts (the paper's Figure 1, per category).

    >>> label_frequencies([[1, 2, 0], [0, 1, 0]]).tolist()
    [1, 2, 0]
    """
    Y = check_rankings(Y)
    return (Y > 0).sum(axis=0)


def ranking_lengths(Y) -> np.ndarray:
    """How many rows rank ``0, 1, …, L`` labels: ``counts[m]`` = rows with ``L_t = m``.

    >>> ranking_lengths([[1, 2, 0], [0, 1, 0]]).tolist()
    [0, 1, 1, 0]
    """
    Y = check_rankings(Y)
    return np.bincount(n_ranked(Y), minlength=Y.shape[1] + 1)


# ------------------------------------------------------------------ ad clicks
#: The paper's nine age buckets (Djuric et al. 2014, "Results", c).
AGE_BUCKETS = ("13-17", "18-20", "21-24", "25-29", "30-34", "35-44", "45-54", "55-64", "65+")
#: Share of users in each age bucket (an assumed internet population; the paper gives none).
_AGE_SHARES = np.array([0.05, 0.07, 0.10, 0.12, 0.12, 0.19, 0.16, 0.11, 0.08])

#: Second-level ad categories, most popular first: (name, gender lean, age peak).  Lean > 0
#: leans female, < 0 male; the peak indexes AGE_BUCKETS (None: no age profile).  Names follow
#: the paper's Figure 2; leans and peaks are assumptions that make Figure 2 look plausible.
_CATEGORY_TABLE = (
    ("Retail/Apparel", 0.4, 3), ("Technology/Internet Services", -0.1, 3),
    ("Telecommunications/Cellular and Wireless", 0.0, 2), ("Travel/Destinations", 0.0, 5),
    ("Consumer Goods/Beauty and Personal Care", 0.9, None),
    ("Technology/Consumer Electronics", -0.5, 2),
    ("Consumer Goods/Contests and Sweepstakes", 0.2, 6), ("Travel/Vacations", 0.0, 6),
    ("Finance/Loans", -0.2, 7), ("Finance/Insurance", 0.0, 7), ("Retail/Home", 0.4, 5),
    ("Life Stages/Education", 0.0, 1), ("Finance/Investment", -0.6, 8),
    ("Travel/Non US", 0.0, 3), ("Entertainment/Television", 0.0, 7),
    ("Entertainment/Games", -0.7, 0), ("Technology/Computer Software", -0.5, 4),
    ("Automotive/Vehicles", -0.7, 5), ("Finance/Credit Cards", 0.0, 4),
    ("Entertainment/Movies", 0.0, 1), ("Retail/Department Stores", 0.5, 6),
    ("Health/Fitness", 0.0, 3), ("Consumer Goods/Food and Beverages", 0.2, 5),
    ("Entertainment/Music", 0.0, 0), ("Travel/Air", -0.2, 5), ("Travel/Hotels", 0.0, 5),
    ("Finance/Banking", 0.0, 6), ("Health/Pharmaceuticals", 0.0, 8),
    ("Retail/Jewelry", 0.6, 4), ("Entertainment/Sports", -0.8, 3),
    ("Technology/Computer Hardware", -0.6, 3), ("Automotive/Parts and Services", -0.6, 6),
    ("Consumer Goods/Household Products", 0.5, 5), ("Finance/Real Estate", 0.0, 5),
    ("Retail/Sporting Goods", -0.5, 2), ("Health/Weight Loss", 0.6, 5),
    ("Life Stages/Parenting", 0.6, 4), ("Consumer Goods/Baby Products", 0.7, 4),
    ("Entertainment/Dating", -0.3, 2), ("Technology/Mobile Apps", 0.0, 1),
    ("Business/Jobs and Careers", 0.0, 2), ("Retail/Toys", 0.3, 5),
    ("Home/Home Improvement", -0.3, 6), ("Home/Garden", 0.3, 7),
    ("Telecommunications/Home Internet", 0.0, 6), ("Life Stages/Weddings", 0.6, 3),
    ("Life Stages/Retirement", 0.0, 8), ("Travel/Cruises", 0.0, 8),
    ("Business/Small Business", -0.3, 6), ("Health/Insurance", 0.0, 7),
)
#: The 50 category names of :func:`make_ad_clicks`, most popular first.
AD_CATEGORIES = tuple(row[0] for row in _CATEGORY_TABLE)

#: Activity groups: (log weekly rate at interest 0, slope on interest).  Page views are
#: frequent and weakly tied to interest; sponsored-link clicks rare and strongly tied.
_ACTIVITY = {"pv": (np.log(0.5), 0.8), "sq": (np.log(0.15), 1.0),
             "slc": (np.log(0.10), 1.0), "olc": (np.log(0.04), 1.2)}
_WINDOW = 13.0  # weeks of history behind the features (a quarter)
_MONTH = 4.0  # weeks between T_features and T_labels
_ALPHA = 0.8  # weekly decay of eq. (13)
_BATCH = 4096  # users simulated per batch (the data for n users is a prefix of that for more)


def _event_features(rng: np.random.Generator, weekly_rate: np.ndarray, window: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Intensity (eq. 13) and recency (eq. 14) of Poisson events over ``window`` weeks.

    Events of cell ``(u, c)`` arrive at rate ``weekly_rate[u, c]``; their ages are uniform on
    ``[0, window]``.  Intensity ``Σ α^age``; recency ``min age``, or ``window`` when the cell
    has no event.
    """
    counts = rng.poisson(weekly_rate * window).ravel()
    ages = rng.uniform(0.0, window, size=int(counts.sum()))
    cell = np.repeat(np.arange(counts.size), counts)
    intensity = np.bincount(cell, weights=_ALPHA ** ages, minlength=counts.size)
    recency = np.full(counts.size, window)
    busy = np.flatnonzero(counts)
    if busy.size:
        starts = np.concatenate([[0], np.cumsum(counts[busy])[:-1]])
        recency[busy] = np.minimum.reduceat(ages, starts)
    return intensity.reshape(weekly_rate.shape), recency.reshape(weekly_rate.shape)


def _fresh(recency: np.ndarray) -> np.ndarray:
    """``max(0, 1 − recency / 4)``: 1 for an event this moment, 0 for none in 4 weeks."""
    return np.maximum(0.0, 1.0 - recency / 4.0)


class _AdWorld:
    """The fixed parameters of one ad-click world (label effects, calibration constants)."""

    def __init__(self, rng: np.random.Generator, n_labels: int, nonlinearity: float):
        L = n_labels
        table = _CATEGORY_TABLE[:L]
        self.L, self.nonlinearity = L, nonlinearity
        self.labels = [row[0] for row in table]
        self.popularity = -0.8 * np.log(np.arange(1, L + 1))  # Zipf-like (Figure 1's skew)
        lean = np.array([row[1] for row in table])
        ages = np.arange(len(AGE_BUCKETS))
        peaks = np.array([rng.integers(0, len(AGE_BUCKETS)) if row[2] is None else row[2]
                          for row in table])
        profile = np.array([1.0 if row[2] is not None else 0.3 for row in table])
        age_curve = profile[:, None] * np.exp(-(ages[None, :] - peaks[:, None]) ** 2 / 4.5)
        age_curve -= age_curve.mean(axis=1, keepdims=True)
        # demographic effect D[c, age, gender] (gender 0 = F, 1 = M) with idiosyncratic jitter
        sign = np.array([1.0, -1.0])
        self.demo = (0.6 * lean[:, None, None] * sign[None, None, :]
                     + age_curve[:, :, None]
                     + rng.normal(0.0, 0.15, size=(L, len(AGE_BUCKETS), 2)))
        self.taste_loadings = rng.normal(0.0, 0.5, size=(L, 4))
        self.flip = rng.choice([-1.0, 1.0], size=L)  # which gender gets +f_pv (the other −f_pv)
        self.age_gate = np.abs(ages[None, :] - peaks[:, None]) <= 1  # (L, 9)
        self.scale_h = 0.0
        self.theta0 = 0.0

    def users(self, rng: np.random.Generator, B: int) -> dict[str, np.ndarray]:
        """Simulate ``B`` users: demographics, histories, interests and next month's clicks."""
        L = self.L
        age = rng.choice(len(AGE_BUCKETS), size=B, p=_AGE_SHARES)
        male = (rng.random(B) < 0.5).astype(np.int64)
        taste = rng.normal(size=(B, self.taste_loadings.shape[1]))
        interest = (self.popularity[None, :] + self.demo[:, age, male].T
                    + taste @ self.taste_loadings.T)
        activity = rng.normal(0.0, 0.5, size=(B, 1))
        hist = {}
        for g, (base, slope) in _ACTIVITY.items():
            rate = np.exp(base + slope * interest + activity
                          + rng.normal(0.0, 0.5, size=(B, L)))
            hist[g] = _event_features(rng, rate, _WINDOW)
        exposure = rng.normal(0.0, 1.0, size=(B, L))  # campaign / inventory luck, persistent
        adv_rate = np.exp(np.log(1.0) + 0.5 * interest + exposure + activity)
        hist["adv"] = _event_features(rng, adv_rate, _WINDOW)
        # interactions of the observed history, piecewise linear in the features: convex, but
        # for the page-view term, which is concave (−f_pv) for one gender of each category
        fresh = {g: _fresh(hist[g][1]) for g in ("pv", "sq", "slc")}
        female = (1 - male)[:, None]
        h = (np.maximum(0.0, fresh["sq"] + fresh["slc"] - 1.0)
             + self.flip[None, :] * (2 * female - 1) * fresh["pv"]
             + self.age_gate[:, age].T * fresh["slc"])
        if self.scale_h == 0.0:  # first batch: give h the spread of the linear part
            self.scale_h = float(interest.std() / max(h.std(), 1e-12))
            self.h_mean = float(h.mean())
        log_rate = (interest + self.nonlinearity * self.scale_h * (h - self.h_mean)
                    + 1.0 * exposure + rng.normal(0.0, 0.4, size=(B, 1))
                    + rng.normal(0.0, 0.3, size=(B, L)))
        return {"age": age, "male": male, "hist": hist, "log_rate": log_rate}

    def calibrate(self, log_rate: np.ndarray, target: float) -> None:
        """``theta0`` so that a user clicks ``target`` distinct categories a month on average."""
        lo, hi = -20.0, 20.0
        for _ in range(60):
            mid = (lo + hi) / 2
            expected = (-np.expm1(-_MONTH * np.exp(mid + log_rate))).sum(axis=1).mean()
            lo, hi = (mid, hi) if expected < target else (lo, mid)
        self.theta0 = (lo + hi) / 2

    def clicks(self, rng: np.random.Generator, log_rate: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Next month's ad clicks → positions by click intensity (eq. 13 at ``T_labels``)."""
        expected = _MONTH * np.exp(self.theta0 + log_rate)
        intensity, _ = _event_features(rng, expected / _MONTH, _MONTH)
        Y = positions_from_scores(intensity)
        Y[intensity == 0] = 0
        return Y, expected


def make_ad_clicks(n_users: int = 20_000, n_labels: int = 50, *, with_ad_views: bool = True,
                   nonlinearity: float = 0.5, random_state: Any = 0) -> LabelRankingData:
    r"""Simulated users ranking ad categories by their clicks, with the paper's features.

    Mirrors the data of Djuric et al. (2014): for each user, features at ``T_features`` from
    13 weeks of history, and the categories the user clicks on display ads in the following
    4 weeks, ranked by click intensity (an incomplete ranking).  Only users who click more
    than 2 categories are kept (more users are simulated until ``n_users`` are kept).

    **The model.**  User ``u`` has an age bucket ``a_u`` (the paper's 9 buckets), a gender
    ``s_u`` (F/M, half each), a latent taste ``v_u ~ N(0, I_4)`` and an online activity level
    ``r_u ~ N(0, 0.5²)``.  Their long-term interest in category ``c`` is

    .. math::

        \eta_{uc} = b_c + D_c(a_u, s_u) + v_u^\top V_c,

    with a Zipf-like popularity ``b_c = −0.8 \log(\mathrm{rank}_c)``, a demographic effect
    ``D_c`` (a gender lean and an age profile per category, plus N(0, 0.15²) jitter per
    age × gender cell) and taste loadings ``V_c ~ N(0, 0.5² I)``.

    *History* (the features).  Events of activity group ``g`` ∈ {pv (page views),
    sq (searches), slc (search-link clicks), olc (sponsored-link clicks)} arrive as a Poisson
    process with weekly rate ``exp(β⁰_g + β_g η_uc + r_u + ε_ugc)``, ``ε ~ N(0, 0.5²)``; ad
    views (adv) with rate ``exp(0.5 η_uc + ξ_uc + r_u)``, where ``ξ_uc ~ N(0, 1)`` is how much
    the ad server happens to show category ``c`` to ``u`` (campaigns, inventory) — it persists
    into the next month.  Each group gives, per category, the intensity (eq. 13,
    ``Σ α^{t−t_i}``, α = 0.8 per week) and the recency (eq. 14, weeks since the last event;
    13 = none in the window).

    *Clicks* (the rankings).  Next month's clicks on category ``c`` arrive at weekly rate

    .. math::

        \lambda_{uc} = \exp\big(\theta_0 + \eta_{uc}
                       + \text{nonlinearity} \cdot \kappa\,(h_{uc} - \bar h)
                       + \xi_{uc} + k_u + \zeta_{uc}\big),

    ``k_u ~ N(0, 0.4²)`` (clickiness), ``ζ ~ N(0, 0.3²)``.  Exposure ``ξ`` raises clicks
    (Gupta et al. 2012), so the ad-view features carry information the others lack — the
    paper's "with adv" gain.  The interaction term reads the observed history, with
    ``f_g = max(0, 1 − recency_g / 4)`` (1 = an event just now, 0 = none in 4 weeks):

    .. math::

        h_{uc} = \max(0, f_{sq} + f_{slc} - 1)
               + \sigma_c\,(1[\text{female}] - 1[\text{male}])\, f_{pv}
               + 1[|a_u - \text{peak}_c| \le 1]\, f_{slc}

    (recent search *and* search click; a recent page view that signals interest for one gender
    and the opposite for the other, ``σ_c = ±1``; search clicks that count only in the
    category's age range).  In the features (recencies ``r_g`` and 0/1 one-hots) the first and
    third terms are convex and piecewise linear — maxima of a few hyperplanes, e.g.
    ``1[gate] f_slc = max(0, 1[gate] − r_slc / 4)`` — so one label's multi-hyperplane score
    can represent them and one linear function per label cannot.  The page-view term is not
    convex: it is ``+f_pv`` for one gender and ``−f_pv = −max(0, 1 − r_pv / 4)``, a concave
    minimum of two hyperplanes, for the other — for every category, whichever the sign
    ``σ_c`` — so a label's score, itself a maximum of hyperplanes, can only approximate that
    half (a linear score follows the kink of neither half).  ``κ`` gives ``h`` the spread of
    ``η`` (measured on the first batch), so ``nonlinearity = 1`` weighs both alike; 0 leaves
    the interest linear.
    ``θ_0`` is set on the first batch so that a simulated user clicks ``min(3, 0.4 L)``
    categories on average before filtering; kept users mostly rank 3–10 categories.

    Parameters
    ----------
    n_users : int
        Users kept (each ranks at least 3 categories).
    n_labels : int
        Categories ``L``, 5 … 50: the ``L`` most popular of :data:`AD_CATEGORIES`.
    with_ad_views : bool
        Append the ad-view block (``2 L`` columns, feature block ``"adv"``).  The same seed
        gives the same users and rankings either way: only the columns differ.
    nonlinearity : float in [0, 1]
        Weight of the interaction term ``h``.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    LabelRankingData
        ``X``: ``age_<bucket>`` (9) and ``gender_F``, ``gender_M`` one-hots, then for each
        group ``<g>_intensity[<category>]`` and ``<g>_recency[<category>]`` (``d = 11 + 8 L``,
        plus ``2 L`` with ad views: 411 / 511 at ``L = 50`` as in the paper).  ``groups``:
        ``"F 21-24"`` etc. (18 age × gender buckets).  ``feature_blocks``: ``demographics``,
        ``pv``, ``sq``, ``slc``, ``olc`` and, with ad views, ``adv``.  ``truth``:
        ``expected_clicks`` (n, L), the mean clicks of the month.

    Examples
    --------
    >>> data = make_ad_clicks(500, 20, random_state=0)
    >>> data.Y.shape, data.X.shape[1], bool((data.Y > 0).sum(axis=1).min() >= 3)
    ((500, 20), 211, True)
    """
    n_users = check_int_at_least(n_users, "n_users", 1)
    if not is_integer(n_labels) or not 5 <= n_labels <= len(AD_CATEGORIES):
        raise ValueError(f"n_labels must be an integer in 5 … {len(AD_CATEGORIES)}; "
                         f"got {n_labels!r}.")
    is_flag = isinstance(with_ad_views, (bool, np.bool_))
    if not is_flag:
        raise ValueError(f"with_ad_views must be True or False; got {with_ad_views!r}.")
    nonlinearity = check_fraction(nonlinearity, "nonlinearity", allow_zero=True)
    rng = as_generator(random_state)
    world = _AdWorld(rng, int(n_labels), nonlinearity)
    parts: list[dict] = []
    kept = 0
    for attempt in range(1000):
        sim = world.users(rng, _BATCH)
        if attempt == 0:
            world.calibrate(sim["log_rate"], min(3.0, 0.4 * n_labels))
        Y, expected = world.clicks(rng, sim["log_rate"])
        keep = n_ranked(Y) > 2
        parts.append({"sim": sim, "Y": Y, "expected": expected, "keep": keep})
        kept += int(keep.sum())
        if kept >= n_users:
            break
    else:  # pragma: no cover - the calibration keeps a large share of users
        raise RuntimeError("make_ad_clicks could not keep enough users.")
    return _assemble_ad_clicks(world, parts, n_users, with_ad_views, random_state)


def _assemble_ad_clicks(world: _AdWorld, parts: list[dict], n_users: int,
                        with_ad_views: bool, random_state: Any) -> LabelRankingData:
    L, labels = world.L, world.labels

    def take(get) -> np.ndarray:
        return np.concatenate([get(p)[p["keep"]] for p in parts])[:n_users]

    age = take(lambda p: p["sim"]["age"])
    male = take(lambda p: p["sim"]["male"])
    cols: dict[str, np.ndarray] = {}
    blocks: dict[str, list[str]] = {"demographics": []}
    for a, bucket in enumerate(AGE_BUCKETS):
        cols[f"age_{bucket}"] = (age == a).astype(np.float64)
    cols["gender_F"] = (male == 0).astype(np.float64)
    cols["gender_M"] = (male == 1).astype(np.float64)
    blocks["demographics"] = list(cols)
    groups_used = ["pv", "sq", "slc", "olc"] + (["adv"] if with_ad_views else [])
    for g in groups_used:
        intensity = take(lambda p, g=g: p["sim"]["hist"][g][0])
        recency = take(lambda p, g=g: p["sim"]["hist"][g][1])
        names = []
        for what, values in (("intensity", intensity), ("recency", recency)):
            for j, lab in enumerate(labels):
                name = f"{g}_{what}[{lab}]"
                cols[name] = values[:, j]
                names.append(name)
        blocks[g] = names
    X = pd.DataFrame(cols)
    Y = take(lambda p: p["Y"])
    groups = np.array([f"{'M' if m else 'F'} {AGE_BUCKETS[a]}" for a, m in zip(age, male)])
    seed = random_state if isinstance(random_state, (int, np.integer)) else "given"
    description = (
        f"Simulated ad clicks: {n_users:,} users who clicked more than 2 of {L} ad categories "
        "in a month, ranked by click intensity; features are age and gender one-hots and the "
        "intensity and recency of each category in page views, searches, search clicks and "
        f"sponsored clicks{' and ad views' if with_ad_views else ''} over the 13 weeks before "
        f"(Djuric et al. 2014, 'Dataset'). Non-linearity of interests {world.nonlinearity:g}; "
        f"seed {seed}.")
    return LabelRankingData(
        X=X, Y=Y, labels=labels, groups=groups,
        name=f"Simulated ad clicks ({n_users:,} users, {L} categories"
             f"{', with ad views' if with_ad_views else ''})",
        description=description, feature_blocks=blocks,
        truth={"expected_clicks": take(lambda p: p["expected"]),
               "theta0": world.theta0, "interaction_scale": world.scale_h})


# ------------------------------------------------------------------ scikit-learn datasets
_SKLEARN = {"iris": "load_iris", "wine": "load_wine", "digits": "load_digits"}


def from_sklearn(name: str, *, random_state: Any = 0) -> LabelRankingData:
    """A classification set shipped with scikit-learn turned into complete label rankings.

    Following Cheng, Hühn and Hüllermeier (2009), who built the standard label-ranking
    benchmarks this way: a Gaussian naive-Bayes model is fitted to the whole data set and each
    row's classes are ranked by the model's posterior (most probable first).  The joint
    log-likelihood is used, which orders classes like the posterior without underflowing to
    tied zeros (digits); remaining ties go to the lower class index.

    Parameters
    ----------
    name : {"iris", "wine", "digits"}
        3, 3 and 10 labels (the class names).
    random_state : None, int, SeedSequence or Generator
        Shuffles the rows (the files are sorted by class); the rankings do not depend on it.

    Returns
    -------
    LabelRankingData
        Complete rankings; ``groups`` is None.

    Examples
    --------
    >>> data = from_sklearn("iris")
    >>> data.Y.shape, data.labels
    ((150, 3), ['setosa', 'versicolor', 'virginica'])
    """
    from sklearn import datasets
    from sklearn.naive_bayes import GaussianNB

    check_choice(name, "name", _SKLEARN)
    rng = as_generator(random_state)
    bunch = getattr(datasets, _SKLEARN[name])()
    X, y = np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target)
    scores = GaussianNB().fit(X, y).predict_joint_log_proba(X)
    Y = positions_from_scores(scores)
    order = rng.permutation(X.shape[0])
    columns = [str(c) for c in bunch.feature_names]
    return LabelRankingData(
        X=pd.DataFrame(X[order], columns=columns), Y=Y[order],
        labels=[str(c) for c in bunch.target_names],
        name=f"{name} (naive-Bayes rankings)",
        description=(f"scikit-learn's {name} data ({X.shape[0]} rows, {X.shape[1]} features); "
                     "each row's classes ranked by a Gaussian naive-Bayes model fitted to "
                     "all rows (Cheng, Hühn and Hüllermeier 2009)."))


# ------------------------------------------------------------------ Mallows mixture
def _mallows_positions(rng: np.random.Generator, n: int, L: int, theta: float) -> np.ndarray:
    """Rankings around the identity by repeated insertion (Doignon et al. 2004).

    Item ``i`` (0-based, the ``(i+1)``-th of the centre) is inserted at slot ``j ∈ 1 … i+1``
    with probability ``∝ φ^{i+1−j}``, ``φ = e^{−θ}``: it then sits above ``i+1−j`` items that
    precede it in the centre, each one discordant pair.  Returns ``pos[r, i]``, the 1-based
    position of centre item ``i`` in row ``r``.
    """
    phi = np.exp(-theta)
    pos = np.zeros((n, L), dtype=np.int64)
    for i in range(L):
        weights = phi ** (i - np.arange(i + 1, dtype=np.float64))  # slots 1 … i+1
        cdf = np.cumsum(weights / weights.sum())
        slot = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), i) + 1
        pos[:, :i] += pos[:, :i] >= slot[:, None]
        pos[:, i] = slot
    return pos


def make_mallows_mixture(n: int = 5000, n_labels: int = 10, *, n_components: int = 3,
                         theta: float = 1.0, top_k: int | None = None, n_features: int = 5,
                         random_state: Any = 0) -> LabelRankingData:
    r"""Rankings from a mixture of Mallows models whose component depends on the features.

    Features ``x ~ N(0, I_d)``; component ``z ∈ {1 … K}`` with probabilities
    ``softmax(Bᵀx)``, ``B ~ N(0, 1)`` (so ``x`` tells the component); component ``k`` has a
    random centre ``σ_k`` and the ranking is drawn from the Mallows model

    .. math::

        P(\pi \mid \sigma_k) = \frac{e^{-\theta\, d_K(\pi, \sigma_k)}}{\psi(\theta)}

    (``d_K`` = Kendall distance: discordant pairs) by repeated insertion.  With ``top_k`` only
    the first ``top_k`` labels of each ranking are kept (the rest are unranked).  The mean
    distance to the centre is ``L φ/(1−φ) − Σ_{j=1}^{L} j φ^j/(1−φ^j)``, ``φ = e^{−θ}``
    (Fligner and Verducci 1986).

    Parameters
    ----------
    n : int
        Rows.
    n_labels : int
        Labels ``L`` (≥ 2), named ``L1 … LL``.
    n_components : int
        Mixture components ``K`` (≥ 1).
    theta : float
        Concentration ``θ ≥ 0``: 0 = uniformly random rankings, large = every ranking near its
        centre.
    top_k : int or None
        Keep the top ``k`` labels (``k ≥ 1``; ``k ≥ L`` keeps complete rankings); None =
        complete.
    n_features : int
        Feature dimension ``d`` (≥ 1).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    LabelRankingData
        ``truth``: ``component`` (n,), ``centres`` (K, L) positions, ``theta``.

    Examples
    --------
    >>> data = make_mallows_mixture(100, 4, top_k=2, random_state=0)
    >>> data.Y.shape, sorted(set((data.Y > 0).sum(axis=1).tolist()))
    ((100, 4), [2])
    """
    n = check_int_at_least(n, "n", 1)
    L = check_int_at_least(n_labels, "n_labels", 2)
    K = check_int_at_least(n_components, "n_components", 1)
    d = check_int_at_least(n_features, "n_features", 1)
    try:
        theta = float(theta)
    except (TypeError, ValueError):
        raise ValueError(f"theta must be a number >= 0; got {theta!r}.") from None
    if not (np.isfinite(theta) and theta >= 0):
        raise ValueError(f"theta must be a number >= 0; got {theta!r}.")
    if top_k is not None:
        top_k = check_int_at_least(top_k, "top_k", 1)
    rng = as_generator(random_state)
    X = rng.normal(size=(n, d))
    B = rng.normal(size=(d, K))
    logits = X @ B
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    component = np.minimum((prob.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1), K - 1)
    orders = np.array([rng.permutation(L) for _ in range(K)])  # centre k: labels, best first
    pos = _mallows_positions(rng, n, L, theta)  # positions of the centre's items
    Y = np.empty((n, L), dtype=np.int64)
    np.put_along_axis(Y, orders[component], pos, axis=1)
    if top_k is not None:
        Y[Y > top_k] = 0
    centres = np.empty((K, L), dtype=np.int64)
    np.put_along_axis(centres, orders, np.arange(1, L + 1)[None, :].repeat(K, 0), axis=1)
    kept = "complete rankings" if top_k is None or top_k >= L else f"the top {top_k} labels"
    return LabelRankingData(
        X=pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)]), Y=Y,
        labels=[f"L{j + 1}" for j in range(L)],
        name=f"Mallows mixture ({K} components, θ = {theta:g})",
        description=(f"{n:,} rankings of {L} labels from a mixture of {K} Mallows models "
                     f"(θ = {theta:g}) whose component is a softmax of {d} Gaussian features; "
                     f"{kept} kept."),
        truth={"component": component, "centres": centres, "theta": theta})


# ------------------------------------------------------------------ CSV
def _fail(message: str) -> None:
    raise DataError(message)


def _as_text(value: Any) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def _features(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    if not columns:
        _fail("The CSV has no feature columns: besides the ranking (and group) column(s) it "
              "needs at least one numeric feature column.")
    out = {}
    for c in columns:
        col = frame[c]
        num = pd.to_numeric(col, errors="coerce")
        bad = num.isna() & col.notna()
        if bad.any():
            r = int(np.flatnonzero(bad.to_numpy())[0])
            _fail(f"Feature column {c!r} is not numeric: data row {r + 1} holds {col.iloc[r]!r} "
                  "(features must be numbers; drop or encode the column).")
        if num.isna().any():
            r = int(np.flatnonzero(num.isna().to_numpy())[0])
            _fail(f"Feature column {c!r} has no value in data row {r + 1} (features must not "
                  "be missing; fill or drop them).")
        if not np.isfinite(num.to_numpy(dtype=np.float64)).all():
            r = int(np.flatnonzero(~np.isfinite(num.to_numpy(dtype=np.float64)))[0])
            _fail(f"Feature column {c!r} holds {num.iloc[r]} in data row {r + 1} (features "
                  "must be finite).")
        out[c] = num.to_numpy(dtype=np.float64)
    return pd.DataFrame(out)


#: Separators an analyst may have used instead of the reader's, most likely first.
_OTHER_SEPARATORS = ("|", ",", ";", "/", "\t", "<", "»", "→")


def _other_separator(texts: list[str], labels: set[str], separator: str, *,
                     strict: bool = True) -> tuple[str, str] | None:
    """``(separator found, an example text)`` when the one-label ``texts`` look like rankings
    joined by another separator, else None.

    ``strict``: the pieces must also recur as rankings do — a piece is a label on its own or
    stands at two different positions ("autos|sports" and "sports|autos") — so a label that
    merely contains the character ("Retail/Apparel") is not taken for a ranking.
    """
    for sep in _OTHER_SEPARATORS:
        if sep in separator:
            continue
        hits = [t for t in texts if sep in t]
        if not hits:
            continue
        if not strict:
            return sep, hits[0]
        where: dict[str, set[int]] = {}
        for t in hits:
            for i, piece in enumerate(p.strip() for p in t.split(sep)):
                where.setdefault(piece, set()).add(i)
        if any(piece in labels or len(pos) > 1 for piece, pos in where.items() if piece):
            return sep, hits[0]
    return None


def _natural_key(text: str) -> list:
    """Sort key reading runs of digits as numbers: ``L2 < L10``, ``"9" < "10"``."""
    return [(0, int(part), "") if part.isdecimal() else (1, 0, part)
            for part in re.split(r"(\d+)", text) if part]


def _separator_message(found: tuple[str, str], column: str, separator: str) -> str:
    sep, example = found
    return (f"Column {column!r} seems to join labels with {sep!r} (e.g. {example!r}), which "
            f"the reader takes as one label. Write each ranking with {separator!r} between "
            f"labels, most preferred first (e.g. 'sports{separator}news{separator}autos').")


def _parse_ranking_column(col: pd.Series, column: str, separator: str,
                          labels: list[str] | None) -> tuple[np.ndarray, list[str]]:
    rankings: list[list[str]] = []
    for r, value in enumerate(col.tolist()):
        if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
            rankings.append([])
            continue
        text = _as_text(value)
        tokens = [t.strip() for t in text.split(separator)] if text else []
        if any(t == "" for t in tokens):
            _fail(f"Data row {r + 1}: the ranking {text!r} in column {column!r} has an empty "
                  f"label (two {separator!r} in a row, or one at an end).")
        seen = set()
        for t in tokens:
            if t in seen:
                _fail(f"Data row {r + 1}: label {t!r} appears twice in the ranking {text!r} "
                      "(each label may be ranked once).")
            seen.add(t)
        rankings.append(tokens)
    if labels is None:  # natural order: L2 before L10
        labels = sorted({t for ranking in rankings for t in ranking}, key=_natural_key)
    else:
        labels = [str(lab) for lab in labels]
        if len(set(labels)) != len(labels):
            _fail("labels must be distinct names.")
        known = set(labels)
        for r, ranking in enumerate(rankings):
            unknown = [t for t in ranking if t not in known]
            if unknown:
                shown = ", ".join(labels[:10]) + (", …" if len(labels) > 10 else "")
                _fail(f"Data row {r + 1}: unknown label {unknown[0]!r} (labels: {shown}).")
    if not labels:
        _fail(f"Every ranking is empty: no row of column {column!r} ranks any label.")
    ranked = [ranking for ranking in rankings if ranking]
    singles = [ranking[0] for ranking in ranked if len(ranking) == 1]
    if len(labels) < 2:
        found = _other_separator(singles, set(labels), separator, strict=False)
        _fail(f"The rankings name only one label ({labels[0]!r}); label ranking needs at "
              "least 2 labels." + ("" if found is None
                                   else " " + _separator_message(found, column, separator)))
    if len(singles) >= 0.9 * len(ranked):  # (nearly) every row ranks one label: which sep?
        found = _other_separator(singles, set(labels), separator)
        if found is not None:
            _fail(_separator_message(found, column, separator))
    index = {lab: j for j, lab in enumerate(labels)}
    Y = np.zeros((len(rankings), len(labels)), dtype=np.int64)
    for r, ranking in enumerate(rankings):
        for p, t in enumerate(ranking, start=1):
            Y[r, index[t]] = p
    return Y, labels


def _parse_position_columns(frame: pd.DataFrame, columns: list[str], labels: list[str]
                            ) -> np.ndarray:
    L = len(columns)
    if L < 2:
        _fail(f"Position columns must be at least 2 (one per label); got {columns}.")
    Y = np.zeros((len(frame), L), dtype=np.int64)
    for j, c in enumerate(columns):
        col = frame[c]
        num = pd.to_numeric(col, errors="coerce")
        bad = num.isna() & col.notna()
        if bad.any():
            r = int(np.flatnonzero(bad.to_numpy())[0])
            _fail(f"Data row {r + 1}, column {c!r}: {col.iloc[r]!r} is not a position "
                  "(1 = most preferred, 0 or blank = not ranked).")
        values = num.fillna(0).to_numpy(dtype=np.float64)
        frac = values != np.round(values)
        if frac.any():
            r = int(np.flatnonzero(frac)[0])
            _fail(f"Data row {r + 1}, column {c!r}: {values[r]:g} is not a whole-number "
                  "position.")
        out = (values < 0) | (values > L)
        if out.any():
            r = int(np.flatnonzero(out)[0])
            _fail(f"Data row {r + 1}: position {values[r]:g} of label {labels[j]!r} is out of "
                  f"range 0 … {L} (1 = most preferred, 0 or blank = not ranked).")
        Y[:, j] = values.astype(np.int64)
    lt = (Y > 0).sum(axis=1)
    srt = -np.sort(-Y, axis=1)
    expect = lt[:, None] - np.arange(L)[None, :]
    ok = np.where(np.arange(L)[None, :] < lt[:, None], srt == expect, True).all(axis=1)
    if not ok.all():
        r = int(np.flatnonzero(~ok)[0])
        pos = Y[r][Y[r] > 0]
        dup = [int(p) for p in np.unique(pos) if (pos == p).sum() > 1]
        if dup:
            names = [labels[j] for j in np.flatnonzero(Y[r] == dup[0])]
            _fail(f"Data row {r + 1}: position {dup[0]} is given to two labels ({names[0]!r} "
                  f"and {names[1]!r}); each position may be used once.")
        missing = sorted(set(range(1, lt[r] + 1)) - set(pos.tolist()))
        _fail(f"Data row {r + 1}: positions {sorted(pos.tolist())} skip {missing[0]} (the "
              f"{lt[r]} ranked labels must take positions 1 … {lt[r]}).")
    if lt.max(initial=0) == 0:
        _fail("Every ranking is empty: no row gives any label a position.")
    return Y


def read_rankings_csv(content: bytes, *, ranking_column: str | None = None,
                      position_columns: Sequence[str] | None = None,
                      labels: Sequence[str] | None = None, group_column: str | None = None,
                      separator: str = ">") -> LabelRankingData:
    """Read a CSV of numeric features plus rankings into :class:`LabelRankingData`.

    Rankings come in one of two layouts:

    * one **ranking column** holding each row's ranked labels, most preferred first, joined
      by ``separator`` (``sports>news>autos``); a blank cell ranks nothing;
    * one **position column** per label holding the label's position (1 = most preferred,
      0 or blank = not ranked); positions of a row must be ``1 … L_t``.

    Without ``ranking_column`` and ``position_columns``: a column named ``ranking`` is the
    ranking column, else the columns named ``pos_<label>`` are the position columns.  Every
    other column except ``group_column`` is a feature and must be numeric.  The file is read
    by :func:`core.data.csvio.read_frame` (pandas; encoding and delimiter detected).

    Parameters
    ----------
    content : bytes
        The CSV file.
    ranking_column : str, optional
        Name of the ranking column.
    position_columns : sequence of str, optional
        Names of the position columns, one per label.
    labels : sequence of str, optional
        Label names.  With a ranking column: the allowed labels, in column order of ``Y``
        (default: the labels found, sorted, digits by number: ``L2`` before ``L10``); with
        position columns: the names of the labels (default: the column names, without a
        ``pos_`` prefix).
    group_column : str, optional
        A column of row groups (e.g. age × gender), kept as ``groups``, not a feature.
    separator : str
        Separator of the ranking column.

    Returns
    -------
    LabelRankingData

    Raises
    ------
    DataError (a ValueError)
        With the 1-based data row (the header is not counted): a label repeated in a ranking,
        an unknown label (when ``labels`` is given), a position out of range, repeated or
        leaving a gap; a non-numeric or missing feature (naming the column); a missing ranking,
        position or group column (with a hint when ``pos_`` columns exist); a group column
        that is the ranking column or a position column (it would leak the answer); rankings
        that (nearly) all hold one label containing another separator (``autos|sports``,
        ``"news,sports"``: the separator found is named); every ranking empty; unreadable CSV.

    Notes
    -----
    How the file was read (encoding guessed, rows ranking no label) is in ``warnings`` of
    the result, for the reader to see.

    Examples
    --------
    >>> csv = b"age,ranking\\n31,sports>news\\n45,news\\n"
    >>> data = read_rankings_csv(csv, ranking_column="ranking")
    >>> data.labels, data.Y.tolist()
    (['news', 'sports'], [[2, 1], [1, 0]])
    """
    if not isinstance(separator, str) or not separator:
        raise ValueError(f"separator must be a non-empty string; got {separator!r}.")
    if ranking_column is not None and position_columns is not None:
        raise ValueError("Give either ranking_column or position_columns, not both.")
    frame, warnings = read_frame(content, needs="A label-ranking file needs feature columns "
                                 "and a ranking column (or one position column per label).")
    columns = list(frame.columns)
    shown = ", ".join(repr(c) for c in columns[:12]) + (", …" if len(columns) > 12 else "")

    if ranking_column is None and position_columns is None:
        if "ranking" in columns:
            ranking_column = "ranking"
        else:
            position_columns = [c for c in columns if c.startswith("pos_")]
            if not position_columns:
                _fail("No rankings found: the file needs a column named 'ranking' (values "
                      "like 'sports>news>autos') or one 'pos_<label>' column per label; a "
                      "ranking column of another name can be named as the ranking column "
                      f"(ranking_column=). The columns are: {shown}.")
            if labels is None:
                labels = [c[len("pos_"):] for c in position_columns]
    if group_column is not None and group_column not in columns:
        _fail(f"Group column {group_column!r} not found; the columns are: {shown}.")
    if group_column is not None and group_column in (
            [ranking_column] if ranking_column is not None else position_columns):
        what = "ranking column" if ranking_column is not None else "a position column"
        _fail(f"The group column cannot be the {what} ({group_column!r}): groups read from "
              "the rankings leak the answer into the per-group baseline (AG-Mal). Choose a "
              "column that describes the users (e.g. age × gender), or none.")
    if ranking_column is not None:
        if ranking_column not in columns:
            pos = [c for c in columns if c.startswith("pos_")]
            hint = ("" if not pos else f" The file has position columns ({', '.join(pos[:5])}"
                    f"{', …' if len(pos) > 5 else ''}): leave the ranking column empty to use "
                    "them.")
            _fail(f"Ranking column {ranking_column!r} not found; the columns are: {shown}."
                  + hint)
        Y, labels = _parse_ranking_column(frame[ranking_column], ranking_column, separator,
                                          None if labels is None else list(labels))
        used = {ranking_column}
    else:
        position_columns = [str(c) for c in position_columns]
        missing = [c for c in position_columns if c not in columns]
        if missing:
            _fail(f"Position column(s) {missing} not found; the columns are: {shown}.")
        labels = list(position_columns) if labels is None else [str(x) for x in labels]
        if len(labels) != len(position_columns) or len(set(labels)) != len(labels):
            _fail(f"labels must be {len(position_columns)} distinct names, one per position "
                  f"column; got {labels}.")
        Y = _parse_position_columns(frame, position_columns, labels)
        used = set(position_columns)
    groups = None
    if group_column is not None:
        used.add(group_column)
        g = frame[group_column]
        if g.isna().any():
            r = int(np.flatnonzero(g.isna().to_numpy())[0])
            _fail(f"Group column {group_column!r} is empty in data row {r + 1}.")
        groups = np.array([_as_text(v) for v in g.tolist()])
    X = _features(frame, [c for c in columns if c not in used])
    lt = n_ranked(Y)
    if (lt == 0).any():
        warnings.append(f"{int((lt == 0).sum())} row(s) rank no label (left out of the "
                        "metrics).")
    alike: dict[str, list[str]] = {}
    for name in labels:
        alike.setdefault(name.casefold(), []).append(name)
    if clash := [names for names in alike.values() if len(names) > 1]:
        shown_clash = "; ".join(" and ".join(map(repr, names)) for names in clash[:3])
        warnings.append(f"Labels that differ only in upper / lower case are read as different "
                        f"labels: {shown_clash}. Write them alike if they are one label.")
    layout = (f"ranking column {ranking_column!r}" if ranking_column is not None
              else f"{len(labels)} position columns")
    grouped = "" if group_column is None else f", groups from column {group_column!r}"
    rows, feats = len(frame), X.shape[1]
    description = (f"Uploaded CSV: {rows:,} row{'s' * (rows != 1)}, {feats} "
                   f"feature{'s' * (feats != 1)}, {len(labels)} labels from the "
                   f"{layout}{grouped}.")
    return LabelRankingData(X=X, Y=Y, labels=labels, groups=groups, name="uploaded CSV",
                            description=description, warnings=list(warnings))
