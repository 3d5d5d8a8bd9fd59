r"""A/B/n experiments: one control arm and K ≥ 1 treatment arms, binary or continuous outcome.

:class:`MultiArmData` keeps every arm (``t`` = integer codes, 0 = control) and the designed
randomisation shares, from which the propensities of a policy evaluation come
(:func:`core.evaluation.policy_value`).  :meth:`MultiArmData.pair` gives one arm against
control as the two-arm arrays every curve and model already takes.

>>> import numpy as np, pandas as pd
>>> d = MultiArmData(X=pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4]}), y=np.array([0, 1, 1, 0]),
...                  t=np.array([0, 1, 2, 0]), arms=["none", "A", "B"])
>>> d.n_arms, d.outcome_kind, d.propensity()[0].tolist()
(2, 'binary', [0.3333333333333333, 0.3333333333333333, 0.3333333333333333])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core._validation import check_outcome
from core.data.abdata import ABData, DataError

__all__ = ["MultiArmData", "detect_outcome_kind", "make_multiarm_world"]


def detect_outcome_kind(y: Any) -> str:
    """``"binary"`` when every value is 0 or 1, else ``"continuous"``."""
    return "binary" if np.isin(np.asarray(y), (0, 1)).all() else "continuous"


@dataclass(eq=False)
class MultiArmData:
    """A randomised experiment with a control arm and K treatment arms.

    Parameters
    ----------
    X : DataFrame
    y : array of shape (n,)
        Outcome: 0/1 or any finite real (spend).
    t : array of int, shape (n,)
        Arm codes 0…K, 0 = control.
    arms : list of str
        Arm names, control first (``arms[t[i]]`` is row i's arm).
    design : array of shape (K+1,), optional
        Designed randomisation shares (default equal); they sum to 1.  The propensities of
        the policy values.
    design_assumed : bool, default False
        True when no design was given with the data and ``design`` was taken from the data
        (equal shares, or the observed ones when the arms differ clearly): the sample ratio
        test (:meth:`srm`) then compares with the observed shares rounded (to 5 % or a
        third, sixth or eighth: :func:`core.data.hygiene.rounded_share`), as the
        one-treatment test does (:func:`core.data.selection.assumed_treated_share`), instead
        of with shares read off the very counts it tests.
    name, description : str
    tau : array of shape (n, K), optional
        True effect of each treatment arm vs control (synthetic data).
    cost : array of shape (K,), optional
        Cost of each treatment arm (≥ 0).
    extra : dict of str to array
        Side columns aligned with the rows.
    warnings : list of str
        What the analyst should know about how the data were read.
    ids : array, optional
        Row identifiers for exports (the file's ID column or 1-based row numbers).
    id_name : str
        Header of the identifier column in exports.
    """

    X: pd.DataFrame
    y: np.ndarray
    t: np.ndarray
    arms: list[str]
    design: np.ndarray | None = None
    name: str = "A/B/n data"
    description: str = ""
    tau: np.ndarray | None = None
    cost: np.ndarray | None = None
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    ids: np.ndarray | None = None
    id_name: str = "row"
    design_assumed: bool = False

    def __post_init__(self) -> None:
        n = len(self.X)
        self.X = self.X.reset_index(drop=True)
        try:
            self.y = check_outcome(self.y, "y")
        except ValueError as exc:
            raise DataError(f"The outcome column cannot be used: {exc}") from None
        t = np.asarray(self.t)
        if t.shape != (n,) or t.dtype.kind not in "iub":
            raise DataError(f"t must hold one integer arm code per row ({n}); got dtype "
                            f"{t.dtype} with shape {t.shape}.")
        self.t = t.astype(np.int64)
        self.arms = [str(a) for a in self.arms]
        k1 = len(self.arms)
        if k1 < 2:
            raise DataError(f"An experiment needs a control arm and at least one treatment "
                            f"arm; got arms {self.arms}.")
        if self.y.shape[0] != n:
            raise DataError(f"y must have one value per row ({n}); got {self.y.shape[0]}.")
        if self.t.min() < 0 or self.t.max() >= k1:
            raise DataError(f"t must hold arm codes 0…{k1 - 1} for the arms {self.arms}.")
        counts = np.bincount(self.t, minlength=k1)
        empty = [self.arms[k] for k in range(k1) if counts[k] == 0]
        if empty:
            raise DataError(f"Every arm needs rows; arm(s) {empty} have none.")
        self.design = _check_design(self.design, k1)
        if self.cost is not None:
            cost = np.asarray(self.cost, dtype=np.float64)
            if cost.shape != (k1 - 1,) or not np.isfinite(cost).all() or (cost < 0).any():
                raise DataError(f"cost must be one finite number ≥ 0 per treatment arm "
                                f"({k1 - 1}); got {self.cost!r}.")
            self.cost = cost

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_arms(self) -> int:
        """K, the number of treatment arms."""
        return len(self.arms) - 1

    @property
    def outcome_kind(self) -> str:
        return detect_outcome_kind(self.y)

    def propensity(self) -> np.ndarray:
        """(n, K+1): the designed share of every arm, for every row."""
        return np.tile(self.design, (self.n, 1))

    def pair(self, k: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """Arm ``k`` (1…K) against control: ``(X, y, t)`` of their rows, ``t`` 0/1."""
        from core._validation import is_integer

        if not is_integer(k) or not 1 <= k <= self.n_arms:
            raise ValueError(f"k must be a treatment arm 1…{self.n_arms} (an integer); "
                             f"got {k!r}.")
        rows = np.flatnonzero((self.t == k) | (self.t == 0))
        return (self.X.iloc[rows].reset_index(drop=True), self.y[rows],
                (self.t[rows] == k).astype(np.int8))

    def subset(self, rows: Any) -> MultiArmData:
        """The rows ``rows`` (indices), same arms and design."""
        rows = np.asarray(rows)
        return MultiArmData(
            X=self.X.iloc[rows], y=self.y[rows], t=self.t[rows], arms=self.arms,
            design=self.design, name=self.name, description=self.description,
            tau=None if self.tau is None else self.tau[rows], cost=self.cost,
            extra={k: v[rows] for k, v in self.extra.items()}, warnings=list(self.warnings),
            ids=None if self.ids is None else self.ids[rows], id_name=self.id_name,
            design_assumed=self.design_assumed)

    def srm_shares(self) -> np.ndarray:
        """The arm shares the sample ratio test expects: the design, or, when it was assumed
        (:attr:`design_assumed`), each arm's observed share rounded to the nearest 5 %, third,
        sixth or eighth (:func:`core.data.hygiene.rounded_share`), the rounded shares scaled
        to sum to 1."""
        if not self.design_assumed:
            return self.design
        from core.data.hygiene import rounded_share

        shares = rounded_share(np.bincount(self.t, minlength=len(self.arms)) / self.n)
        return shares / shares.sum()

    def srm(self) -> dict:
        """χ² test of the arm counts against :meth:`srm_shares` (sample ratio mismatch):
        ``counts``, ``expected`` (counts), ``expected_share``, ``assumed`` (the shares are
        assumed from the data, not a known design), ``statistic`` and ``p_value``."""
        from scipy import stats

        counts = np.bincount(self.t, minlength=len(self.arms))
        shares = self.srm_shares()
        res = stats.chisquare(counts, shares * self.n)
        return {"counts": counts, "expected": shares * self.n, "expected_share": shares,
                "assumed": self.design_assumed,
                "statistic": float(res.statistic), "p_value": float(res.pvalue)}

    def balance(self) -> pd.DataFrame:
        """Covariate balance of every treatment arm against control: one column of
        standardised mean differences per arm (:func:`core.data.hygiene.covariate_balance`
        on that arm's and the control rows), one row per feature or categorical level."""
        from core.data.hygiene import covariate_balance

        columns = {}
        for k, arm in enumerate(self.arms[1:], start=1):
            rows = np.flatnonzero((self.t == k) | (self.t == 0))
            table = covariate_balance(self.X.iloc[rows], (self.t[rows] == k).astype(np.int8))
            label = table["feature"].astype(str) + np.where(
                table["level"].isna(), "", " = " + table["level"].astype(str))
            columns[f"SMD {arm}"] = pd.Series(table["smd"].to_numpy(), index=label)
        frame = pd.DataFrame(columns)
        frame.index.name = "feature"
        return frame

    def binary_view(self) -> ABData:
        """The two-arm view every single-treatment page and model takes: any treatment arm
        (t = 1) vs control (t = 0), all rows.  A continuous outcome becomes ``outcome > 0``
        there (said in the warnings); the known pooled effect is the design-weighted mean of
        the arms' effects (binary outcome only).  The view keeps ``self`` as
        :attr:`ABData.multiarm`, so the several-arms results use every arm and the amount."""
        warnings = list(self.warnings)
        if self.outcome_kind == "binary":
            y, tau = self.y.astype(np.int8), None
            if self.tau is not None:
                weight = self.design[1:] / self.design[1:].sum()
                tau = self.tau @ weight
        else:
            y, tau = (self.y > 0).astype(np.int8), None
            warnings.append(
                "The outcome is continuous (an amount). Pages and models for one treatment "
                "use 'outcome > 0' (any treatment vs control); the several-arms results on "
                "Train and Compare use the amount itself.")
        return ABData(X=self.X, y=y, t=(self.t > 0).astype(np.int8), name=self.name,
                      warnings=warnings, tau=tau, description=self.description,
                      extra=dict(self.extra), ids=self.ids, id_name=self.id_name,
                      multiarm=self)

    def arm_table(self) -> pd.DataFrame:
        """Per arm: rows, share (observed and designed — or, without a known design, the
        share assumed by the sample ratio test, :meth:`srm_shares`), mean outcome, difference
        vs control (NaN on the control's own row: no comparison, "—" for people)."""
        counts = np.bincount(self.t, minlength=len(self.arms))
        means = np.array([self.y[self.t == k].mean() for k in range(len(self.arms))])
        design = "assumed share" if self.design_assumed else "designed share"
        return pd.DataFrame({"rows": counts, "share": counts / self.n,
                             design: self.srm_shares(), "mean outcome": means,
                             "vs control": np.r_[np.nan, means[1:] - means[0]]},
                            index=pd.Index(self.arms, name="arm"))


def _check_design(design: Any, k1: int) -> np.ndarray:
    """The design as ``k1`` float64 shares > 0 summing to 1 (equal shares for ``None``)."""
    if design is None:
        return np.full(k1, 1.0 / k1)
    try:
        out = np.asarray(design, dtype=np.float64)
    except (TypeError, ValueError):
        out = np.empty(0)
    if out.shape != (k1,) or not np.isfinite(out).all() or (out <= 0).any() \
            or abs(out.sum() - 1) > 1e-6:
        raise DataError(f"design must give each of the {k1} arms a share > 0, summing to 1; "
                        f"got {design!r}.")
    return out


def make_multiarm_world(n: int = 20_000, *, n_arms: int = 2, costs: Any = None,
                        design: Any = None, outcome: str = "binary",
                        random_state: Any = 0) -> MultiArmData:
    r"""A seeded A/B/n world with a known effect :math:`\tau_k(x)` of every arm.

    Five standard-normal features.  Control response :math:`p_0(x) = \sigma(-1.5 + 0.5x_2)`;
    arm k's effect :math:`\tau_k(x) = a_k\,\sigma(3\,(x_1\cos\theta_k + x_3\sin\theta_k))`
    with :math:`\theta_k = 2\pi (k-1)/K` and :math:`a_k = 0.05 + 0.03(k-1)`, so different arms
    are best in different regions of x (a best-arm rule beats every single arm).  Binary:
    :math:`y \sim \text{Bernoulli}(p_0 + \tau_{t})`.  Continuous (``outcome="spend"``): a
    purchase with that probability times a Gamma(2, 30) amount (mean 60), so
    :math:`\tau^{spend}_k = 60\,\tau_k`.  Default costs per arm: ``0.01·k`` (binary) or
    ``0.5·k`` (spend); default design: equal shares.  ``random_state`` (default 0, as the
    other worlds) seeds the features, the arms and the outcomes.
    """
    from core._validation import as_generator, check_choice, check_positive_int

    n = check_positive_int(n, "n")
    n_arms = check_positive_int(n_arms, "n_arms")
    check_choice(outcome, "outcome", ("binary", "spend"))
    rng = as_generator(random_state)
    X = rng.normal(size=(n, 5))
    k = np.arange(1, n_arms + 1)
    theta = 2 * np.pi * (k - 1) / n_arms
    amp = 0.05 + 0.03 * (k - 1)
    tau = amp / (1 + np.exp(-3 * (np.outer(X[:, 0], np.cos(theta))
                                  + np.outer(X[:, 2], np.sin(theta)))))
    p0 = 1 / (1 + np.exp(1.5 - 0.5 * X[:, 1]))
    design = _check_design(design, n_arms + 1)
    t = rng.choice(n_arms + 1, size=n, p=design)
    p = p0 + np.where(t > 0, tau[np.arange(n), np.maximum(t - 1, 0)], 0.0)
    buy = rng.random(n) < p
    if outcome == "binary":
        y = buy.astype(np.int64)
        true = tau
        default_cost = 0.01 * k
    else:
        y = np.where(buy, rng.gamma(2.0, 30.0, n), 0.0)
        true = 60.0 * tau
        default_cost = 0.5 * k
    arms = ["control", *(f"arm {j}" for j in k)]
    return MultiArmData(
        X=pd.DataFrame(X, columns=[f"x{j}" for j in range(1, 6)]), y=y, t=t, arms=arms,
        design=design, tau=true, cost=default_cost if costs is None else costs,
        name=f"Multi-arm world (control + {n_arms} offers, {outcome}, seed {random_state})",
        description="Synthetic A/B/n experiment: a control arm and "
                    f"{n_arms} offer{'s' * (n_arms > 1)}, each with a known effect per "
                    "customer.")
