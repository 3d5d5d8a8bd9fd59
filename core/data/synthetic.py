"""Synthetic A/B tests: the paper's ranking simulation and a marketing "uplift world".

Both generators take ``random_state`` (None, an int, a SeedSequence or a Generator) and touch
no global seed; the same seed gives the same data.

References
----------
Devriendt, F., Van Belle, J., Guns, T., Verbeke, W. (2020). Learning to rank for uplift
modeling. arXiv:2002.05897, §4.2 (the simulation).
Hillstrom, K. (2008). The MineThatData E-Mail Analytics And Data Mining Challenge (the
marketing features the uplift world imitates).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from core._validation import as_generator, check_choice, check_int_at_least
from core.data.abdata import ABData

__all__ = ["PAPER_SCENARIOS", "make_paper_simulation", "make_uplift_world"]

#: scenario -> share of treated rows.
PAPER_SCENARIOS = {"balanced": 0.5, "more_treated": 0.9, "more_control": 0.1}


def make_paper_simulation(n: int = 10_000, *, scenario: str = "balanced",
                          treated_rate: float = 0.07, control_rate: float = 0.05,
                          random_state: Any = 0) -> ABData:
    """The simulated ranking of Devriendt et al. (2020), §4.2.

    Treated rows respond with rate ``treated_rate`` (7 %), control rows with ``control_rate``
    (5 %).  Every row gets a uniform score: TR (treated responders) and CNR (control
    non-responders) from [0.2, 1.0], TNR and CR from [0.0, 0.8], so TR and CNR tend to rank
    higher.  The scenario fixes the arm sizes: ``balanced`` |T| = |C|, ``more_treated``
    |T| = 9|C|, ``more_control`` |C| = 9|T|.

    Choices the paper leaves open
    -----------------------------
    * ``n`` = 10,000 rows by default (the paper gives no size); |T| = round(share · n).
    * Responder counts are exact, not Bernoulli: round(rate · |arm|) responders per arm, so
      the response rates are those of the paper up to rounding and only the scores vary.
    * Rows are shuffled so that nothing depends on row order.
    * The score is ``scores["simulated score"]``.  ``X`` holds one column,
      ``"random ranking"``, uniform on [0, 1] and independent of everything: a feature with no
      information, which the Curves page also offers as the random-targeting ranker.
    * ``tau`` is None: the simulation has scores, not individual effects.

    Returns
    -------
    ABData
    """
    n = check_int_at_least(n, "n", 4)
    check_choice(scenario, "scenario", PAPER_SCENARIOS)
    for value, label in ((treated_rate, "treated_rate"), (control_rate, "control_rate")):
        if not 0 < float(value) < 1:
            raise ValueError(f"{label} must be a number in (0, 1); got {value!r}.")
    rng = as_generator(random_state)
    n_t = min(max(round(PAPER_SCENARIOS[scenario] * n), 2), n - 2)
    t = np.r_[np.ones(n_t, np.int8), np.zeros(n - n_t, np.int8)]
    y = np.zeros(n, np.int8)
    for arm_rows, rate in ((np.flatnonzero(t == 1), treated_rate),
                           (np.flatnonzero(t == 0), control_rate)):
        k = round(rate * arm_rows.size)
        y[rng.choice(arm_rows, size=k, replace=False)] = 1
    high = (t == y)  # TR (1, 1) and CNR (0, 0)
    score = np.where(high, rng.uniform(0.2, 1.0, n), rng.uniform(0.0, 0.8, n))
    order = rng.permutation(n)
    t, y, score = t[order], y[order], score[order]
    X = pd.DataFrame({"random ranking": rng.uniform(0.0, 1.0, n)})
    sizes = {"balanced": "|T| = |C|", "more_treated": "|T| = 9|C|", "more_control": "|C| = 9|T|"}
    return ABData(
        X=X, y=y, t=t,
        name=f"Paper simulation ({sizes[scenario]})",
        scores={"simulated score": score},
        description=(
            "Simulated ranking of Devriendt et al. (2020, §4.2): treated response rate "
            f"{treated_rate:.0%}, control {control_rate:.0%}; TR and CNR scores uniform on "
            f"[0.2, 1.0], TNR and CR on [0.0, 0.8]; scenario {sizes[scenario]}, n = {n:,}."
        ),
        source_columns={"scenario": scenario},
    )


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def make_uplift_world(n: int = 20_000, *, random_state: Any = 0,
                      treated_share: float = 0.5) -> ABData:
    """A semi-synthetic e-mail campaign with a known individual effect τ(x).

    Features imitate a retailer's customer file (after Hillstrom, 2008):

    ========== ======== ====================================================
    recency    int      months since the last purchase, 1..12
    history    float    dollars spent last year, log-normal (median ≈ $150)
    channel    category Web / Phone / Multichannel
    newbie     int      1 if a new customer in the last 12 months
    zip_type   category Urban / Suburban / Rural
    age        int      18..85
    opens_90d  int      e-mails opened in the last 90 days
    ========== ======== ====================================================

    Response model (logistic).  Baseline ``logit p0 = -2.75 + 0.16·opens_90d
    - 0.09·(recency - 6) + 0.35·log(history / 150) + 0.35·[Multichannel] + 0.15·[Urban]
    - 0.2·newbie``.  The e-mail adds δ(x) on the logit scale, ``p1 = sigmoid(logit p0 + δ)``:

    * persuadables: δ = 0.05 + 0.45·[Web] + 0.4·newbie·[recency ≤ 4] + 0.25·[age < 35];
    * sure things (Multichannel with ≥ 6 opens, about 2 %): δ = 0 — they buy anyway;
    * sleeping dogs (at most one open and history above $300, about 5 %: loyal buyers who
      dislike e-mails): δ = -0.6, a negative effect.

    Treatment is Bernoulli(``treated_share``), independent of x (a randomised test), and
    ``y ~ Bernoulli(p_t(x))``.  ``tau = p1 - p0`` is the true individual effect; it is also
    ``scores["true effect τ(x)"]``, the best possible ranking (known because the data are
    simulated; not the "Perfect" baseline, which sorts by the observed outcomes).  ``extra``
    holds ``p0`` and ``p1``.
    The average control response is about 11 % and the average effect about +4 points,
    close to Hillstrom's women's e-mail on visits (10.6 % → 15.1 %).  20,000 rows take a few
    milliseconds.

    Returns
    -------
    ABData
    """
    n = check_int_at_least(n, "n", 4)
    if not 0 < float(treated_share) < 1:
        raise ValueError(f"treated_share must be a number in (0, 1); got {treated_share!r}.")
    rng = as_generator(random_state)
    recency = rng.integers(1, 13, n)
    history = np.round(np.exp(rng.normal(np.log(150.0), 0.8, n)), 2)
    channel = rng.choice(np.array(["Web", "Phone", "Multichannel"]), n, p=[0.45, 0.43, 0.12])
    newbie = rng.binomial(1, 0.5, n)
    zip_type = rng.choice(np.array(["Urban", "Suburban", "Rural"]), n, p=[0.40, 0.45, 0.15])
    age = np.clip(np.round(rng.normal(45.0, 14.0, n)), 18, 85).astype(np.int64)
    engagement = rng.beta(2.0, 4.0, n)
    opens = rng.poisson(0.2 + 8.0 * engagement * (1.3 - 0.5 * (age > 60)))

    web, multi = channel == "Web", channel == "Multichannel"
    logit0 = (-2.75 + 0.16 * opens - 0.09 * (recency - 6) + 0.35 * np.log(history / 150.0)
              + 0.35 * multi + 0.15 * (zip_type == "Urban") - 0.2 * newbie)
    delta = 0.05 + 0.45 * web + 0.4 * newbie * (recency <= 4) + 0.25 * (age < 35)
    delta = np.where(multi & (opens >= 6), 0.0, delta)
    delta = np.where((opens <= 1) & (history > 300), -0.6, delta)
    p0, p1 = _sigmoid(logit0), _sigmoid(logit0 + delta)
    t = (rng.random(n) < treated_share).astype(np.int8)
    y = (rng.random(n) < np.where(t == 1, p1, p0)).astype(np.int8)
    tau = p1 - p0

    X = pd.DataFrame({
        "recency": recency.astype(np.int64),
        "history": history,
        "channel": pd.Categorical(channel, categories=["Multichannel", "Phone", "Web"]),
        "newbie": newbie.astype(np.int64),
        "zip_type": pd.Categorical(zip_type, categories=["Rural", "Suburban", "Urban"]),
        "age": age,
        "opens_90d": opens.astype(np.int64),
    })
    return ABData(
        X=X, y=y, t=t,
        name="Uplift world (synthetic e-mail campaign)",
        scores={"true effect τ(x)": tau},
        tau=tau,
        description=(
            "Semi-synthetic e-mail campaign with a known individual effect τ(x) = p1(x) − p0(x): "
            "persuadables, sure things and sleeping dogs; randomised treatment "
            f"(share {treated_share:.0%}), n = {n:,}. Works offline; the same seed gives the "
            "same data."
        ),
        source_columns={"treatment": "treatment", "outcome": "outcome"},
        extra={"p0": p0, "p1": p1},
    )
