"""The takeaway of a comparison in plain words, written from the numbers.

:func:`takeaway` turns the paired bootstrap table
(:meth:`core.evaluation.compare.BootstrapResult.paired`) at one cut-off and the
definition-sensitivity table (:func:`core.evaluation.compare.definition_ranks`) into one short
paragraph for a stakeholder: which run leads, by how much AUUC, with its interval and p-value,
whether the difference is distinguishable from noise, and whether the winner depends on the
curve definition.  :func:`definition_sentence` is its last sentence on its own.

The verdict is read off the interval, as in :meth:`~core.evaluation.compare.BootstrapResult.paired`:
*better* when the lower end of the interval of (run − reference) is above 0, *worse* when the
upper end is below 0, otherwise *not distinguishable*; a missing difference or interval is
*undefined*.  Numbers are written with :func:`fmt_auuc` (4 decimals) and :func:`fmt_p`
(3 decimals, or "< 0.001").

Before any run is compared with another, each is compared with random targeting
(:func:`random_sentence`): a run *beats random targeting* at the cut-off when its AUUC is
above the random baseline's AUUC there and, when its interval was computed, the lower end of
that interval is above it too.  When no run does, the paragraph opens with "No model beats
random targeting at 30 % here: do not target by these scores." — a winner between two runs
that are both no better than random is no reason to target.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from core._validation import check_fraction, check_level, check_positive_int
from core.constants import DASH

__all__ = ["auuc_decimals", "beats_random", "definition_sentence", "fmt_auuc", "fmt_decimals",
           "fmt_p", "fmt_significant", "random_sentence", "resolving_digits", "takeaway"]

_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
                 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
_PAIRED_COLUMNS = ("ranker", "reference", "cutoff", "difference", "ci_low", "ci_high",
                   "p_value", "verdict")


# ---------------------------------------------------------------------- numbers as text
def _finite(value) -> bool:
    try:
        return value is not None and bool(np.isfinite(float(value)))
    except (TypeError, ValueError):
        return False


def resolving_digits(widths, *, least: int = 4, most: int = 8, significant: int = 2) -> int:
    """Decimals that show the narrowest positive interval width in ``widths`` with
    ``significant`` digits, within ``[least, most]``: at 4M test rows a bootstrap interval is
    ~1e-4 wide and "[0.0002, 0.0002]" would hide it.

    >>> resolving_digits([0.003, 0.01]), resolving_digits([1.2e-4]), resolving_digits([])
    (4, 5, 4)
    """
    w = np.asarray(list(widths), dtype=float)
    w = w[np.isfinite(w) & (w > 0)]
    if not w.size:
        return least
    need = significant - 1 - int(np.floor(np.log10(w.min())))
    return int(min(max(need, least), most))


def auuc_decimals(values, widths=(), *, least: int = 4) -> int:
    """Decimals for a table of AUUCs or of their differences: enough for the narrowest of
    ``widths`` (intervals or sds, :func:`resolving_digits`) and for two significant digits
    of the smallest non-zero value, at least ``least`` (4 for shares of an arm, 1 for counts
    of responders) and at most two more than that (at most 4 for counts).  AUUC@10 % of a
    rare outcome (Hillstrom's 0.6 % conversion) is ~1e-5 of an arm: "0.000048", not
    "0.0000"; a difference of -0.00018 is not "-0.0002".

    >>> auuc_decimals([0.0291, 0.0012]), auuc_decimals([0.000048, 0.0016]), auuc_decimals([])
    (4, 6, 4)
    >>> auuc_decimals([-0.00018], [0.00374]), auuc_decimals([3.2], [9.5], least=1)
    (5, 1)
    """
    size = np.abs(np.asarray(list(values), dtype=float))
    return max(resolving_digits(widths, least=least),
               resolving_digits(size, least=least, most=max(4, least + 2)))


def _apart_from(base: float, others: list) -> Callable:
    """:func:`fmt_auuc`, with the decimals that show each gap between ``base`` (random
    targeting's AUUC) and a value of ``others`` (:func:`resolving_digits`): "random 0.0021 …
    CI 0.0021 to 0.0045, above random" read as a contradiction where the values were
    0.00210 and 0.00212."""
    gaps = [abs(float(x) - base) for x in others if _finite(x) and abs(x) < 10]
    digits = resolving_digits(gaps, significant=1) if _finite(base) and abs(base) < 10 else 4
    if digits == 4:
        return fmt_auuc
    return lambda v: fmt_auuc(v) if not _finite(v) or abs(v) >= 10 else f"{float(v):.{digits}f}"


def fmt_significant(value, digits: int = 4) -> str:
    """A number for people with ``digits`` significant digits, never in e-notation and never
    "-0" (Python's ``g`` writes ``1.25e-05`` and ``1.5e+06``; a fixed number of decimals
    writes ``-0.000123`` as "-0"): the amounts typed into a report's assumptions; thousands
    separated; "—" when missing.

    >>> [fmt_significant(v) for v in (-0.000123456, 242.13, 12345.6, 0.0, -0.5, float("nan"))]
    ['-0.0001235', '242.1', '12,346', '0', '-0.5', '—']
    """
    if value is None:
        return DASH
    v = float(value)
    if not np.isfinite(v):
        return DASH
    if v == 0:
        return "0"
    decimals = max(0, digits - 1 - int(np.floor(np.log10(abs(v)))))
    text = f"{v:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_decimals(value, digits: int) -> str:
    """``value`` with ``digits`` decimals and thousands separators ("—" when missing), except
    that a non-zero value those decimals would write with fewer than two significant digits
    gets two (:func:`fmt_significant`): a bound of -0.000005 is neither "-0.0000" nor
    "-0.00001".

    >>> fmt_decimals(0.00157, 5), fmt_decimals(-0.000005, 5), fmt_decimals(1234.5, 1)
    ('0.00157', '-0.000005', '1,234.5')
    """
    if not _finite(value):
        return DASH
    v = float(value)
    if 0 < abs(v) < 10.0 ** (1 - digits):
        return fmt_significant(v, 2)
    return f"{v:,.{digits}f}"


def fmt_auuc(value) -> str:
    """An AUUC (or an AUUC difference) as text: 4 decimals, "—" when missing.

    Values of 10 or more (absolute definitions count responders) get 2 decimals and thousands
    separators; non-zero values below 0.00005 in size, which 4 decimals would show as 0, are
    written with two significant digits, never in e-notation (a report read "95 % CI -5.0e-06
    to 0.0022").

    >>> fmt_auuc(0.004123), fmt_auuc(-0.0312), fmt_auuc(1234.567), fmt_auuc(float("nan"))
    ('0.0041', '-0.0312', '1,234.57', '—')
    >>> fmt_auuc(0.0000123), fmt_auuc(-0.000005)
    ('0.000012', '-0.000005')
    """
    if not _finite(value):
        return DASH
    v = float(value)
    if abs(v) >= 10:
        return f"{v:,.2f}"
    if v != 0 and abs(v) < 0.00005:
        return fmt_significant(v, 2)
    return f"{v:.4f}"


def fmt_p(value, *, n_boot: int | None = None) -> str:
    """A p-value as ``"p = 0.004"`` or ``"p < 0.001"``; ``""`` when missing.

    A bootstrap p-value of 0 only says "below the resolution 2/B": with ``n_boot`` given it
    is written ``"p < 2/B"`` (e.g. ``"p < 0.004"`` for B = 500) instead of claiming
    ``"p < 0.001"``.

    >>> fmt_p(0.0042), fmt_p(0.0004), fmt_p(0.0, n_boot=500), fmt_p(float("nan"))
    ('p = 0.004', 'p < 0.001', 'p < 0.004', '')
    """
    if not _finite(value):
        return ""
    p = float(value)
    if p == 0 and n_boot is not None:
        return f"p < {max(2 / n_boot, 0.001):.3g}"
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}"


def _percent(fraction: float) -> str:
    return f"{fraction * 100:g} %"


def _count_word(n: int) -> str:
    return _NUMBER_WORDS.get(n, str(n))


def _join(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------------- definitions
def _definition_phrase(names: list[str]) -> str:
    """``"the joint relative uplift and separate absolute Qini curves"`` for known
    definitions; other names are listed as they are."""
    from core.evaluation.curves import DEFINITIONS

    known = [DEFINITIONS[n] for n in names if n in DEFINITIONS]
    if len(known) != len(names):
        return _join([str(n) for n in names])
    words = [f"{d.setting} {d.units} {'Qini' if d.kind == 'qini' else d.kind}" for d in known]
    return f"the {_join(words)} curve{'s' if len(words) > 1 else ''}"


def _ranked_runs(ranks: pd.DataFrame) -> list[str]:
    return [c[len("AUUC "):] for c in ranks.columns if str(c).startswith("AUUC ")]


def definition_sentence(ranks: pd.DataFrame) -> str:
    """Whether the winner depends on the curve definition, in one sentence.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`core.evaluation.compare.definition_ranks` (or its mean over splits): indexed by
        definition, with a ``"winner"`` column (the rank-1 run(s), ``None`` when undefined).

    Returns
    -------
    str
        ``"The winner is the same under all six definitions: A."``, or
        ``"The winner depends on the definition: A under the joint relative uplift curve;
        B under ..."`` (definitions grouped by winner, in order of first appearance),
        followed by the definitions whose AUUC was undefined, if any.

    Examples
    --------
    >>> ranks = pd.DataFrame({"winner": ["A", "B", "A"]},
    ...                      index=["uplift_joint_rel", "qini_sep_abs", "qini_joint_abs"])
    >>> definition_sentence(ranks)
    'The winner depends on the definition: A under the joint relative uplift and joint
    absolute Qini curves; B under the separate absolute Qini curve.'
    """
    if not isinstance(ranks, pd.DataFrame) or "winner" not in ranks.columns:
        raise ValueError("ranks must be a definition_ranks() DataFrame with a 'winner' column; "
                         f"got {type(ranks).__name__}"
                         + (f" with columns {list(ranks.columns)}."
                            if isinstance(ranks, pd.DataFrame) else "."))
    groups: dict[str, list[str]] = {}
    undefined = []
    for definition, winner in zip(ranks.index, ranks["winner"]):
        if winner is None or (isinstance(winner, float) and np.isnan(winner)):
            undefined.append(str(definition))
        else:
            groups.setdefault(str(winner), []).append(str(definition))
    n = len(ranks)
    missing = (f" The AUUC is undefined under {_definition_phrase(undefined)}."
               if undefined and groups else "")
    if not groups:
        return "The winner could not be determined: the AUUC is undefined under every definition."
    if len(groups) == 1:
        (winner,) = groups
        if n == 1:
            return f"Only one definition was checked ({ranks.index[0]}): {winner} wins." + missing
        scope = f"all {_count_word(n)} definitions" if not undefined else \
            f"the {_count_word(len(groups[winner]))} definitions where it is defined"
        return f"The winner is the same under {scope}: {winner}." + missing
    parts = [f"{winner} under {_definition_phrase(defs)}" for winner, defs in groups.items()]
    return "The winner depends on the definition: " + "; ".join(parts) + "." + missing


# ---------------------------------------------------------------------- pairs
def _pair_sentence(row, *, level_text: str, n_boot: int | None) -> str:
    run, ref = str(row["ranker"]), str(row["reference"])
    d, lo, hi = row["difference"], row["ci_low"], row["ci_high"]
    verdict = str(row["verdict"]) if row["verdict"] is not None else "undefined"
    if not (_finite(d) and _finite(lo) and _finite(hi)) or verdict == "undefined":
        return (f"The comparison of {run} with {ref} is undefined (no AUUC difference or "
                "interval could be computed).")
    d, lo, hi = float(d), float(lo), float(hi)
    if lo > 0:
        conclusion = f"{run} is better"
    elif hi < 0:
        conclusion = f"{run} is worse"
    else:
        conclusion = "the two are not distinguishable"
    # The stated difference is leader − other; its interval is flipped with it.
    if d >= 0:
        lead, other, gap, low, high = run, ref, d, lo, hi
    else:
        lead, other, gap, low, high = ref, run, -d, -hi, -lo
    p = fmt_p(row["p_value"], n_boot=n_boot)
    fmt = _gap_format(gap, high - low)
    stats = f"{level_text} CI {fmt(low)} to {fmt(high)}" + (f", {p}" if p else "")
    if d == 0:
        return f"{run} and {ref} have the same AUUC (difference 0, {stats}): {conclusion}."
    return f"{lead} leads {other} by {fmt(gap)} AUUC ({stats}): {conclusion}."


def _gap_format(gap: float, width: float) -> Callable:
    """:func:`fmt_auuc`, with the decimals of the page's paired table for an AUUC difference
    ``gap`` under 10 and its interval's ``width`` (:func:`auuc_decimals`): "leads by 0.00064
    (CI -0.00034 to 0.00157)", not "0.0006 (CI -0.0003 to 0.0016)" (:func:`fmt_decimals`)."""
    if not (_finite(gap) and 0 < abs(gap) < 10):
        return fmt_auuc
    digits = auuc_decimals([gap], [width])
    return lambda v: fmt_auuc(v) if _finite(v) and abs(v) >= 10 else fmt_decimals(v, digits)


def _point_leader(auuc: Mapping | pd.Series) -> str:
    values = {str(k): float(v) for k, v in dict(auuc).items() if _finite(v)}
    if not values:
        return "no run has a defined AUUC."
    order = sorted(values, key=lambda k: -values[k])
    best = order[0]
    text = f"{best} has the highest AUUC ({fmt_auuc(values[best])})"
    if len(order) > 1:
        text += ", ahead of " + _join([f"{k} ({fmt_auuc(values[k])})" for k in order[1:]])
    return text + "."


# ---------------------------------------------------------------------- random targeting
def beats_random(auuc: Mapping[str, float] | pd.Series, random_auuc: float,
                 intervals: Mapping[str, tuple[float, float]] | None = None) -> list[str]:
    """The runs that beat random targeting: AUUC above ``random_auuc`` and, when the run has
    an interval, its lower end above it too (the rule of :func:`random_sentence`).

    >>> beats_random({"A": 0.003, "B": 0.004, "C": 0.001}, 0.002, {"A": (0.0015, 0.0045)})
    ['B']
    """
    if not _finite(random_auuc):
        return []
    base, intervals = float(random_auuc), dict(intervals or {})
    out = []
    for run, value in dict(auuc).items():
        low_high = intervals.get(run)
        low = low_high[0] if low_high is not None and _finite(low_high[0]) else None
        if _finite(value) and float(value) > base and (low is None or float(low) > base):
            out.append(str(run))
    return out


def random_sentence(
    auuc: Mapping[str, float] | pd.Series,
    random_auuc: float,
    *,
    cutoff: float,
    intervals: Mapping[str, tuple[float, float]] | None = None,
    level: float = 0.95,
) -> str:
    """Each run against random targeting at one cut-off, in plain words.

    Parameters
    ----------
    auuc : mapping or Series of run → AUUC
        Each run's AUUC at ``cutoff`` (e.g. ``summary["AUUC@30%"]`` without the baseline
        rows).
    random_auuc : float
        The random-targeting baseline's AUUC at ``cutoff`` (the ``"Random targeting"`` row of
        the same table).
    cutoff : float in (0, 1]
        Targeting depth ("at 30 %").
    intervals : mapping of run → (low, high), optional
        Each run's AUUC interval at ``cutoff`` (:meth:`~core.evaluation.compare.
        BootstrapResult.table`).  A run whose interval reaches down to the random AUUC does
        not beat random targeting, even when its point estimate is above it.
    level : float in (0, 1), default=0.95
        Level of the intervals, for the text.

    Returns
    -------
    str
        ``""`` when the random AUUC or every run's AUUC is missing.  Otherwise, when no run
        beats random targeting: "No model beats random targeting at 30 % here: do not target
        by these scores." followed by each run's AUUC against random's; when some do: which
        do and which do not; when all do: that they all do.  A run beats random targeting
        when ``auuc > random_auuc`` and (with an interval) ``low > random_auuc``.

    Examples
    --------
    >>> random_sentence({"A": 0.0030, "B": 0.0002}, 0.0021, cutoff=0.3,
    ...                 intervals={"A": (-0.0007, 0.0071)})  # doctest: +NORMALIZE_WHITESPACE
    'No model beats random targeting at 30 % here: do not target by these scores. Random
    targeting reaches an AUUC of 0.0021 at 30 %; A reaches 0.0030 (95 % CI -0.0007 to
    0.0071, which includes the random value: not clearly better) and B 0.0002 (below random
    targeting).'
    """
    cutoff = check_fraction(cutoff, "cutoff")
    level = check_level(level)
    values = {str(k): float(v) for k, v in dict(auuc).items() if _finite(v)}
    if not _finite(random_auuc) or not values:
        return ""
    base = float(random_auuc)
    intervals = {str(k): v for k, v in dict(intervals or {}).items()}
    at = _percent(cutoff)
    winners = set(beats_random(values, base, intervals))  # one rule for the page and here
    near = [x for v in intervals.values() if v is not None for x in v if _finite(x)]
    fmt = _apart_from(base, [*values.values(), *near])
    beats, details = [], []
    for i, (run, value) in enumerate(values.items()):
        low_high = intervals.get(run)
        has_ci = (low_high is not None and _finite(low_high[0]) and _finite(low_high[1]))
        ci = (f"{_percent(level)} CI {fmt(low_high[0])} to {fmt(low_high[1])}"
              if has_ci else "")
        reach = "reaches " if i == 0 else ""
        if value <= base:
            details.append(f"{run} {reach}{fmt(value)} ("
                           + (f"{ci}; " if ci else "") + "below random targeting)")
        elif run not in winners:
            details.append(f"{run} {reach}{fmt(value)} ({ci}, which includes the "
                           "random value: not clearly better)")
        else:
            beats.append(run)
            details.append(f"{run} {reach}{fmt(value)}"
                           + (f" ({ci}, above random targeting)" if ci else
                              " (above random targeting by point estimate; no interval)"))
    numbers = (f"Random targeting reaches an AUUC of {fmt(base)} at {at}; "
               + _join(details) + ".")
    if not beats:
        return (f"No model beats random targeting at {at} here: do not target by these "
                f"scores. {numbers}")
    others = [r for r in values if r not in beats]
    if not others:
        who = (f"{beats[0]} beats" if len(beats) == 1
               else "Every run beats" if len(beats) > 2 else "Both runs beat")
        return f"{who} random targeting at {at}. {numbers}"
    verb = "beats" if len(beats) == 1 else "beat"
    neg = "does" if len(others) == 1 else "do"
    return (f"At {at}, only {_join(beats)} {verb} random targeting; {_join(others)} "
            f"{neg} not: do not target by {'its' if len(others) == 1 else 'their'} scores. "
            f"{numbers}")


def takeaway(
    paired: pd.DataFrame | None,
    ranks: pd.DataFrame | None,
    *,
    cutoff: float,
    reference: str,
    level: float = 0.95,
    n_splits: int = 1,
    auuc: Mapping[str, float] | pd.Series | None = None,
    definition: str | None = None,
    n_boot: int | None = None,
    random_auuc: float | None = None,
    intervals: Mapping[str, tuple[float, float]] | None = None,
) -> str:
    """The comparison's conclusion in one short plain-English paragraph.

    Parameters
    ----------
    paired : pandas.DataFrame or None
        :meth:`core.evaluation.compare.BootstrapResult.paired` (columns ``ranker``,
        ``reference``, ``cutoff``, ``difference``, ``ci_low``, ``ci_high``, ``p_value``,
        ``verdict``), possibly pooled over splits and holding several cut-offs; the rows at
        ``cutoff`` (``np.isclose``) are used.  ``None`` when the bootstrap was not run: the
        text then says that intervals were not computed and names the leader by point
        estimate (from ``auuc``).
    ranks : pandas.DataFrame or None
        :func:`core.evaluation.compare.definition_ranks` (or its mean over splits): gives the
        last sentence (:func:`definition_sentence`) and the run names.  ``None`` leaves the
        sentence out.
    cutoff : float in (0, 1]
        Targeting depth the paragraph speaks of (e.g. 0.3 → "At 30 % targeting depth").
    reference : str
        Reference run of the paired tests.  Every row of ``paired`` must have it.
    level : float in (0, 1), default=0.95
        Level of the intervals, for the text ("95 % CI").
    n_splits : int, default=1
        Number of test splits the numbers come from: more than one adds "over N repeated
        splits (mean; intervals from the per-split bootstrap pooled)", one "on one test
        split".
    auuc : mapping or Series of run → AUUC, optional
        Point estimates at ``cutoff`` (e.g. ``summary["AUUC@30%"]`` without its baseline
        rows): the leader when ``paired`` is ``None``, and each run's comparison with random
        targeting when ``random_auuc`` is given.
    definition : str, optional
        Curve definition of the comparison.  When ``paired`` and ``auuc`` are both ``None``,
        the point estimates are read from this row of ``ranks`` (its ``"AUUC <run>"``
        columns, computed at the same cut-off).
    n_boot : int, optional
        Bootstrap replicates; with it a p-value of 0 is written "p < 2/B" (:func:`fmt_p`).
    random_auuc : float, optional
        The random-targeting baseline's AUUC at ``cutoff``.  With it (and ``auuc``) the
        paragraph opens with :func:`random_sentence`: each run against random targeting, and
        "No model beats random targeting at 30 % here: do not target by these scores." when
        none does.
    intervals : mapping of run → (low, high), optional
        Each run's AUUC interval at ``cutoff``, for :func:`random_sentence`.

    Returns
    -------
    str
        One paragraph (no blank lines).  Per compared run:
        "A leads B by 0.0041 AUUC (95 % CI 0.0012 to 0.0070, p = 0.004): A is better." — the
        leader is the run with the larger AUUC, the difference and interval are leader −
        other, and the conclusion is "<run> is better", "<run> is worse" (``<run>`` being
        the compared run, never the reference) or "the two are not distinguishable"; an
        undefined comparison says so.

    Examples
    --------
    >>> paired = pd.DataFrame({"ranker": ["A"], "reference": ["B"], "cutoff": [0.3],
    ...     "difference": [0.0041], "ci_low": [0.0012], "ci_high": [0.0070],
    ...     "p_value": [0.004], "verdict": ["better than B at 95 %"]})
    >>> takeaway(paired, None, cutoff=0.3, reference="B")
    'At 30 % targeting depth, on one test split, A leads B by 0.0041 AUUC (95 % CI 0.0012 to
    0.0070, p = 0.004): A is better.'
    """
    cutoff = check_fraction(cutoff, "cutoff")
    level = check_level(level)
    n_splits = check_positive_int(n_splits, "n_splits")
    if n_boot is not None:
        n_boot = check_positive_int(n_boot, "n_boot")
    if not isinstance(reference, str):
        raise ValueError(f"reference must be a run name (str); got {reference!r}.")
    if ranks is not None and not isinstance(ranks, pd.DataFrame):
        raise ValueError(f"ranks must be a definition_ranks() DataFrame or None; "
                         f"got {type(ranks).__name__}.")
    level_text = _percent(level)
    depth = f"At {_percent(cutoff)} targeting depth"
    runs = _ranked_runs(ranks) if ranks is not None else []
    sentences: list[str] = []
    if random_auuc is not None and auuc is not None:
        against_random = random_sentence(auuc, random_auuc, cutoff=cutoff,
                                         intervals=intervals, level=level)
        if against_random:
            sentences.append(against_random)

    if paired is None:
        scope = (f"over {n_splits} repeated splits (mean)" if n_splits > 1
                 else "on one test split")
        sentences.append("Intervals were not computed (the paired bootstrap was not run), so "
                         "any comparison here is by point estimates only.")
        if auuc is None and ranks is not None and definition in ranks.index and len(runs) > 1:
            auuc = {r: ranks.at[definition, f"AUUC {r}"] for r in runs}
        if auuc is not None:
            sentences.append(f"{depth}, {scope}, {_point_leader(auuc)}")
            if len(auuc) > 1:
                sentences.append("Whether these gaps exceed the noise is not known.")
        elif len(runs) == 1:
            sentences.append(f"Only one run ({runs[0]}) was compared.")
    else:
        if not isinstance(paired, pd.DataFrame) or not set(_PAIRED_COLUMNS) <= set(paired.columns):
            got = (f"columns {list(paired.columns)}" if isinstance(paired, pd.DataFrame)
                   else type(paired).__name__)
            raise ValueError("paired must be a BootstrapResult.paired() DataFrame with columns "
                             f"{list(_PAIRED_COLUMNS)}, or None; got {got}.")
        scope = (f"over {n_splits} repeated splits (mean; intervals from the per-split "
                 "bootstrap pooled)" if n_splits > 1 else "on one test split")
        if len(paired) == 0:
            only = f" ({runs[0]})" if len(runs) == 1 else f" ({reference})"
            sentences.append(f"Only one run{only} was compared, so there is no pair to test.")
        else:
            other_refs = sorted({str(r) for r in paired["reference"]} - {reference})
            if other_refs:
                raise ValueError(f"paired compares against {other_refs}, not against the "
                                 f"reference {reference!r}.")
            cutoffs = paired["cutoff"].to_numpy(dtype=float)
            rows = paired[np.isclose(cutoffs, cutoff)]
            if len(rows) == 0:
                raise ValueError(f"paired has no rows at cutoff {cutoff:g}; it holds the "
                                 f"cut-offs {sorted(set(cutoffs.tolist()))}.")
            for i, (_, row) in enumerate(rows.iterrows()):
                text = _pair_sentence(row, level_text=level_text, n_boot=n_boot)
                if i == 0:  # the first sentence continues the opening clause
                    if text.startswith("The comparison"):
                        text = "t" + text[1:]
                    text = f"{depth}, {scope}, {text}"
                sentences.append(text)
    if ranks is not None and "winner" in ranks.columns and len(ranks) and len(runs) != 1:
        sentences.append(definition_sentence(ranks))
    return " ".join(sentences)
