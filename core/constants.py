"""Constants shared across UpRank's wings (one definition each)."""

from __future__ import annotations

__all__ = ["CUTOFFS", "DASH"]

#: Default AUUC cut-offs, as fractions of the ranked list: the paper's Tables 6-11 report
#: AUUC at 10 %, 30 %, 50 % and 100 % of the targeted population (Devriendt et al. 2020).
CUTOFFS: tuple[float, ...] = (0.1, 0.3, 0.5, 1.0)

#: Shown wherever a number does not exist (undefined metric, baseline without an interval).
DASH = "—"
