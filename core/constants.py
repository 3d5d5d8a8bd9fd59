"""Constants shared across UpRank's wings (one definition each)."""

from __future__ import annotations

__all__ = ["CUTOFFS", "DASH", "auuc_column"]

#: Default AUUC cut-offs, as fractions of the ranked list: the paper's Tables 6-11 report
#: AUUC at 10 %, 30 %, 50 % and 100 % of the targeted population (Devriendt et al. 2020).
CUTOFFS: tuple[float, ...] = (0.1, 0.3, 0.5, 1.0)

#: Shown wherever a number does not exist (undefined metric, baseline without an interval).
DASH = "—"


def auuc_column(cutoff: float) -> str:
    """Column label of the AUUC at ``cutoff`` (a fraction): ``"AUUC@30%"``, ``"AUUC@12.5%"``.

    Whole percents read as before (``0.3`` → ``"AUUC@30%"``); others keep up to four
    significant digits (more when four would round a cut-off below 1 up to 100 %), so
    distinct cut-offs such as 0.12 and 0.125 get distinct columns
    (:func:`core._validation.check_cutoffs` refuses two that would still read alike).  The
    separate definitions read their area on a grid of whole percents, so there such columns
    may hold the same number.

    >>> auuc_column(0.3), auuc_column(0.125), auuc_column(0.001), auuc_column(0.99999)
    ('AUUC@30%', 'AUUC@12.5%', 'AUUC@0.1%', 'AUUC@99.999%')
    """
    cutoff = float(cutoff)
    text = f"{100 * cutoff:.4g}"
    if cutoff < 1 and float(text) >= 100:
        text = f"{100 * cutoff:.10g}"
    return f"AUUC@{text}%"
