"""The consensus rules, as pure functions: the majority direction among counted verdicts, and the
modified z-score of reproduced values (Iglewicz and Hoaglin)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from judging.models import Direction

#: The constant of the modified z-score: the 0.75 quantile of the standard normal, so that the
#: MAD of normal data scales to its standard deviation.
MODIFIED_Z_CONSTANT = 0.6745


def consensus_verdict(votes: Mapping[str, int], *, min_support: int = 3
                      ) -> tuple[Direction | None, int, str]:
    """The consensus verdict of one registry claim from its counted verdicts.

    Parameters
    ----------
    votes : mapping
        Counted reproductions (independent, not toy) by verdict: ``verified``, ``falsified``,
        ``inconclusive``.
    min_support : int, optional
        Counted reproductions the majority direction needs.

    Returns
    -------
    verdict : "verified", "falsified" or None
        The direction (verified or falsified) with the most votes, when at least `min_support`
        counted reproductions give it and it holds more than half of all counted ones; None for
        a tie, too few, or mostly inconclusive (or split) reproductions.
    support : int
        The votes for that verdict (0 when there is none).
    reason : str
        Why, in words.

    Examples
    --------
    >>> consensus_verdict({"verified": 3, "falsified": 1})
    ('verified', 3, '3 of 4 counted reproductions: verified')
    >>> consensus_verdict({"verified": 3, "inconclusive": 3})[0] is None
    True
    """
    verified, falsified = votes.get("verified", 0), votes.get("falsified", 0)
    inconclusive = votes.get("inconclusive", 0)
    counted = verified + falsified + inconclusive
    if counted == 0:
        return None, 0, "no independent, full-scale reproduction with a verdict"
    if verified == falsified:
        if verified == 0:
            return None, 0, f"all {counted} counted reproduction(s) are inconclusive"
        return None, 0, f"a tie: {verified} verified, {falsified} falsified"
    top: Direction = "verified" if verified > falsified else "falsified"
    support = max(verified, falsified)
    if support < min_support:
        return None, 0, (f"too few: {support} {top} of the {min_support} independent, "
                         f"full-scale reproductions needed")
    if 2 * support <= counted:
        return None, 0, (f"no majority: {support} {top} of {counted} counted reproductions "
                         f"({verified} verified, {falsified} falsified, {inconclusive} "
                         f"inconclusive)")
    return top, support, f"{support} of {counted} counted reproductions: {top}"


def value_scale(reference: Sequence[float], *, floor: float | None) -> tuple[float, float, float]:
    """(median, MAD, the deviation used) of the reference values: the MAD, floored at `floor`
    (the claim's tolerance in the value's units) so that a few equal values do not make every
    other value an outlier."""
    # Imported on use: scipy.stats costs about 0.6 s of CPU to import, which every `judging
    # run` paid at start whether or not a registry claim had reproduced values to compare.
    from scipy.stats import median_abs_deviation

    values = np.asarray(reference, dtype=float)
    median = float(np.median(values))
    mad = float(median_abs_deviation(values))
    return median, mad, max(mad, floor or 0.0)


def modified_z(value: float, *, median: float, scale: float) -> float | None:
    """The modified z-score of `value`: ``0.6745 * (value - median) / scale``, where `scale` is
    the median absolute deviation of the reference values (floored at the claim's tolerance).

    None when `scale` is 0 (equal reference values and no tolerance: no unit to measure by).

    References
    ----------
    B. Iglewicz and D. C. Hoaglin, *How to Detect and Handle Outliers*, ASQC Basic References in
    Quality Control, vol. 16, 1993: values with a modified z-score above 3.5 in absolute value
    are labelled potential outliers.

    Examples
    --------
    >>> round(modified_z(12.0, median=10.0, scale=0.5), 3)
    2.698
    >>> modified_z(12.0, median=10.0, scale=0.0) is None
    True
    """
    if scale <= 0:
        return None
    return MODIFIED_Z_CONSTANT * (value - median) / scale
