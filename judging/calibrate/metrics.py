"""Agreement metrics for calibration: how well a judge agrees with human gold, and humans with each other.

Pure functions, no I/O, in the style of ``skimage.metrics``: keyword-only options, References and a
runnable example per metric (tests/test_doctests.py runs them), and a ``ValueError``
with a message that names the problem for any ambiguous input (mismatched lengths, a label outside the
declared ``labels``, duplicate labels, empty input). Labels may be any hashable values (strings, booleans,
ints); they are mapped to their index in the declared ``labels`` (or ``values``) before scikit-learn or
``krippendorff`` sees them, so the declared order is the class order of the confusion matrix and the
order of the ordinal scale. A metric that is undefined on its input (Cohen's kappa with one class, F1
with no positive case) is reported as ``None``, never ``nan``.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence, Set
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

# scikit-learn and krippendorff are imported where a metric needs them: `majority` is imported on
# every resolve, push and publish, and scikit-learn alone costs about a second to load.

__all__ = [
    "ClassificationMetrics",
    "ReliabilityBin",
    "ThresholdResult",
    "bootstrap_interval",
    "classification_metrics",
    "confidence_threshold",
    "f1_interval",
    "krippendorff_alpha",
    "majority",
    "pairwise_kappa",
    "reliability_bins",
]


# --------------------------------------------------------------------------------------------------
# Input checks


def _as_list(values: Any, name: str) -> list:
    """`values` as a list, refusing the things that are iterable but are not a sequence of labels."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of labels, not a single string {values!r}")
    if isinstance(values, (Set, Mapping)):
        raise ValueError(f"{name} must be an ordered sequence, not a {type(values).__name__}")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        return values.tolist()
    if not isinstance(values, Iterable):
        raise ValueError(f"{name} must be a sequence, not {type(values).__name__}")
    return list(values)


def _is_nan(value: object) -> bool:
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _label_index(labels: Any, name: str = "labels") -> tuple[list, dict[Hashable, int]]:
    """The declared label list and its value -> index map; at least two distinct labels."""
    labels = _as_list(labels, name)
    if not labels:
        raise ValueError(f"{name} is empty: declare the possible labels")
    if any(label is None or _is_nan(label) for label in labels):
        raise ValueError(f"{name} must not contain None or NaN (None means 'not rated'): {labels!r}")
    index: dict[Hashable, int] = {}
    for i, label in enumerate(labels):
        if label in index:  # note: True == 1 and 1.0 == 1, so those count as duplicates too
            raise ValueError(f"{name} has a duplicate: {label!r} (in {labels!r})")
        index[label] = i
    if len(labels) < 2:
        raise ValueError(f"{name} must have at least two values, got {labels!r}")
    return labels, index


def _encode(values: list, index: dict[Hashable, int], *, name: str, labels_name: str = "labels",
            allow_none: bool = False) -> np.ndarray:
    """Each value's index in the declared labels (-1 for None when allowed); unknown values are an error."""
    out = np.empty(len(values), dtype=np.int64)
    for i, value in enumerate(values):
        if value is None and allow_none:
            out[i] = -1
            continue
        if _is_nan(value):
            hint = " (use None for 'not rated')" if allow_none else ""
            raise ValueError(f"{name}[{i}] is NaN{hint}")
        try:
            out[i] = index[value]
        except KeyError:
            raise ValueError(f"{name}[{i}] = {value!r} is not one of {labels_name} "
                             f"{list(index)!r}") from None
    return out


def _paired(gold: Any, predicted: Any, labels: Any) -> tuple[list, np.ndarray, np.ndarray]:
    labels, index = _label_index(labels)
    gold = _as_list(gold, "gold")
    predicted = _as_list(predicted, "predicted")
    if len(gold) != len(predicted):
        raise ValueError(f"gold and predicted differ in length: {len(gold)} != {len(predicted)}")
    if not gold:
        raise ValueError("gold and predicted are empty: no item to score")
    return labels, _encode(gold, index, name="gold"), _encode(predicted, index, name="predicted")


def _ratings_matrix(ratings: Any, index: dict[Hashable, int], *, labels_name: str) -> np.ndarray:
    """Raters x items matrix of label indices, -1 where not rated."""
    rows = _as_list(ratings, "ratings")
    if not rows:
        raise ValueError("ratings is empty: expected one row per rater")
    rows = [_as_list(row, f"ratings[{r}]") for r, row in enumerate(rows)]
    n_items = len(rows[0])
    for r, row in enumerate(rows):
        if len(row) != n_items:
            raise ValueError(f"ratings rows differ in length: row 0 has {n_items} items, "
                             f"row {r} has {len(row)} (one row per rater, one column per item)")
    if n_items == 0:
        raise ValueError("ratings has no items (its rows are empty)")
    return np.stack([_encode(row, index, name=f"ratings[{r}]", labels_name=labels_name,
                             allow_none=True) for r, row in enumerate(rows)])


def _defined(value: float | None) -> float | None:
    """A float, or None for an undefined (None / NaN) value."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _kappa(y1: np.ndarray, y2: np.ndarray, n_labels: int, weights: str | None) -> float | None:
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        # sklearn warns when kappa is undefined (one class only); we report None instead.
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        value = cohen_kappa_score(y1, y2, labels=list(range(n_labels)), weights=weights,
                                  replace_undefined_by=np.nan)
    return _defined(value)


def _bool_array(values: Any, name: str) -> np.ndarray:
    values = _as_list(values, name)
    for i, value in enumerate(values):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name}[{i}] = {value!r} is not a boolean (True = agrees with gold)")
    return np.asarray(values, dtype=bool)


def _confidence_array(values: Any, name: str = "confidences") -> np.ndarray:
    values = _as_list(values, name)
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers") from None
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {values[bad[0]]!r} is not a finite number")
    return array


def _confidences_and_correct(confidences: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    conf = _confidence_array(confidences)
    ok = _bool_array(correct, "correct")
    if len(conf) != len(ok):
        raise ValueError(f"confidences and correct differ in length: {len(conf)} != {len(ok)}")
    if len(conf) == 0:
        raise ValueError("confidences and correct are empty: no item to score")
    return conf, ok


# --------------------------------------------------------------------------------------------------
# Majority


def majority(labels: Sequence[Hashable]) -> Hashable | None:
    """The most frequent label; ``None`` on a tie between the top labels or when there is no label.

    A tie is not a guess: it is left for someone to decide. ``None`` is not accepted as a label, since
    it would be indistinguishable from a tie (leave unrated votes out).

    Examples
    --------
    >>> majority(["pass", "fail", "pass"])
    'pass'
    >>> majority(["pass", "fail"]) is None
    True
    """
    # Counter.most_common breaks ties by insertion order; a tie must be reported, so it is done by hand.
    votes = _as_list(labels, "labels")
    for i, label in enumerate(votes):
        if label is None or _is_nan(label):
            raise ValueError(f"labels[{i}] is {label!r}: leave unrated votes out "
                             "(majority returns None for a tie)")
    counts = Counter(votes).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


# --------------------------------------------------------------------------------------------------
# Judge vs gold


@dataclass(frozen=True)
class ClassificationMetrics:
    """Agreement of predicted labels with gold labels (see `classification_metrics`)."""

    n: int
    labels: list
    """Class order used for the confusion matrix (and the ordinal scale)."""
    accuracy: float
    precision: float | None
    """Of the positive class; None when no positive class was given or when undefined (no positive
    prediction)."""
    recall: float | None
    """Of the positive class; None when no positive class was given or no gold positive."""
    f1: float | None
    """Of the positive class, 2TP / (2TP + FP + FN); None when no positive class was given or when
    there is neither a gold nor a predicted positive."""
    macro_precision: float
    """Unweighted mean over all `labels`, a class never predicted counting 0 (as PandaLM's script)."""
    macro_recall: float
    macro_f1: float
    kappa: float | None
    """Cohen's kappa, unweighted; None when undefined (e.g. a single class in both)."""
    weighted_kappa: float | None
    """Quadratic-weighted Cohen's kappa over the order of `labels`; only when ordinal=True."""
    confusion: list[list[int]]
    """Rows gold, columns predicted, both in `labels` order."""

    def as_dict(self) -> dict:
        return asdict(self)


def classification_metrics(gold: Sequence, predicted: Sequence, *, labels: Sequence,
                           positive: Hashable | None = None,
                           ordinal: bool = False) -> ClassificationMetrics:
    """Accuracy, precision/recall/F1, Cohen's kappa and the confusion matrix of predicted vs gold.

    Parameters
    ----------
    gold, predicted : sequence of hashable
        One label per item, same length, every label one of `labels`.
    labels : sequence of hashable
        All possible labels, in order: the class order of the confusion matrix, the classes of the
        macro averages and, when `ordinal`, the scale of the weighted kappa.
    positive : hashable, optional
        The positive class (e.g. "pass") for precision, recall and F1. Without it those are None.
    ordinal : bool, optional
        Also compute the quadratic-weighted kappa (distance = difference of positions in `labels`).

    Returns
    -------
    metrics : ClassificationMetrics

    Notes
    -----
    Cohen's kappa is (p_o - p_e) / (1 - p_e): the observed agreement corrected for the agreement
    expected by chance from the two marginal distributions [1]_. The weighted kappa gives partial
    credit to near misses on an ordinal scale, with quadratic weights here [2]_. Both are
    scikit-learn's ``cohen_kappa_score``.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
       Psychological Measurement, 20(1), 37-46. :DOI:`10.1177/001316446002000104`
    .. [2] Cohen, J. (1968). Weighted kappa: nominal scale agreement provision for scaled
       disagreement or partial credit. Psychological Bulletin, 70(4), 213-220.
       :DOI:`10.1037/h0026256`

    Examples
    --------
    >>> m = classification_metrics(["pass", "pass", "fail", "fail"],
    ...                            ["pass", "fail", "fail", "fail"],
    ...                            labels=["pass", "fail"], positive="pass")
    >>> m.accuracy, m.precision, m.recall, round(m.f1, 3), m.kappa
    (0.75, 1.0, 0.5, 0.667, 0.5)
    >>> m.confusion
    [[1, 1], [0, 2]]
    >>> m = classification_metrics([1, 2, 3, 3], [1, 3, 3, 2], labels=[1, 2, 3], ordinal=True)
    >>> round(m.kappa, 3), round(m.weighted_kappa, 3)
    (0.2, 0.636)
    """
    from sklearn.metrics import (
        accuracy_score,
        confusion_matrix,
        precision_recall_fscore_support,
    )

    labels, g, p = _paired(gold, predicted, labels)
    k = len(labels)
    classes = list(range(k))
    precision = recall = f1 = None
    if positive is not None:
        try:
            pos = labels.index(positive)
        except ValueError:
            raise ValueError(f"positive = {positive!r} is not one of labels {labels!r}") from None
        # zero_division=nan, then None: an undefined precision/recall is not a zero.
        pr, rc, f, _ = precision_recall_fscore_support(g, p, labels=[pos], average=None,
                                                       zero_division=np.nan)
        precision, recall, f1 = _defined(pr[0]), _defined(rc[0]), _defined(f[0])
    macro_p, macro_r, macro_f, _ = precision_recall_fscore_support(
        g, p, labels=classes, average="macro", zero_division=0)
    return ClassificationMetrics(
        n=len(g),
        labels=labels,
        accuracy=float(accuracy_score(g, p)),
        precision=precision,
        recall=recall,
        f1=f1,
        macro_precision=float(macro_p),
        macro_recall=float(macro_r),
        macro_f1=float(macro_f),
        kappa=_kappa(g, p, k, None),
        weighted_kappa=_kappa(g, p, k, "quadratic") if ordinal else None,
        confusion=confusion_matrix(g, p, labels=classes).astype(int).tolist(),
    )


# --------------------------------------------------------------------------------------------------
# Bootstrap


def bootstrap_interval(n_items: int, statistic: Callable[[np.ndarray], float | None], *,
                       n_resamples: int = 1000, seed: int = 0,
                       confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic(indices)`` over resamples of the items.

    Each resample draws `n_items` item indices with replacement (a seeded ``numpy`` Generator, so the
    same seed gives the same interval) and passes them to `statistic`, which computes the statistic on
    those items. Resamples where the statistic is None or NaN (undefined) are skipped.

    Returns
    -------
    interval : (low, high) or None
        None when the statistic is defined on fewer than half of the resamples.

    Notes
    -----
    The percentile interval takes the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of
    the statistic over the resamples [1]_ (Efron and Tibshirani, ch. 13).

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman &
       Hall/CRC. :DOI:`10.1201/9780429246593`

    Examples
    --------
    The share of passes among eight items, 5/8, with its 95% interval:

    >>> import numpy as np
    >>> passed = np.array([1, 0, 1, 1, 0, 1, 0, 1])
    >>> bootstrap_interval(8, lambda idx: float(passed[idx].mean()), n_resamples=200, seed=0)
    (0.25, 0.875)
    """
    # Hand-written: scikit-learn has no bootstrap, and scipy.stats.bootstrap cannot skip resamples on
    # which the statistic is undefined (it would return nan for the whole interval).
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValueError(f"n_items must be a positive integer, got {n_items!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) \
            or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if not callable(statistic):
        raise ValueError("statistic must be a callable taking an array of item indices")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        value = _defined(statistic(rng.integers(0, n_items, size=n_items)))
        if value is not None:
            values.append(value)
    if 2 * len(values) < n_resamples:
        return None
    tail = (1 - confidence) / 2
    low, high = np.quantile(np.asarray(values), [tail, 1 - tail])
    return float(low), float(high)


def _f1_counts(g: np.ndarray, p: np.ndarray, pos: int) -> float | None:
    # Hand-written for speed inside the bootstrap (sklearn's f1_score costs ~1.4 ms a call, x1000
    # resamples); same definition as f1_score(zero_division=nan): 2TP / (2TP + FP + FN).
    gold_pos, pred_pos = g == pos, p == pos
    tp = np.count_nonzero(gold_pos & pred_pos)
    denominator = 2 * tp + np.count_nonzero(pred_pos & ~gold_pos) + np.count_nonzero(gold_pos & ~pred_pos)
    return None if denominator == 0 else 2 * tp / denominator


def f1_interval(gold: Sequence, predicted: Sequence, *, positive: Hashable, labels: Sequence,
                n_resamples: int = 1000, seed: int = 0,
                confidence: float = 0.95) -> tuple[float, float] | None:
    """Bootstrap interval of the positive-class F1 of predicted vs gold, resampling items (claims).

    Same checks as `classification_metrics`; None when F1 is undefined on most resamples (e.g. no
    positive item at all). The interval is `bootstrap_interval`'s percentile interval [1]_.

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman &
       Hall/CRC. :DOI:`10.1201/9780429246593`

    Examples
    --------
    >>> f1_interval(["pass", "pass", "fail", "fail", "pass", "fail"],
    ...             ["pass", "fail", "fail", "fail", "pass", "pass"],
    ...             positive="pass", labels=["pass", "fail"], n_resamples=200)
    (0.0, 1.0)
    """
    labels, g, p = _paired(gold, predicted, labels)
    try:
        pos = labels.index(positive)
    except ValueError:
        raise ValueError(f"positive = {positive!r} is not one of labels {labels!r}") from None
    return bootstrap_interval(len(g), lambda idx: _f1_counts(g[idx], p[idx], pos),
                              n_resamples=n_resamples, seed=seed, confidence=confidence)


# --------------------------------------------------------------------------------------------------
# Between raters


def krippendorff_alpha(ratings: Sequence[Sequence[Hashable | None]], *,
                       level: Literal["nominal", "ordinal"],
                       values: Sequence[Hashable]) -> float | None:
    """Krippendorff's alpha of several raters over the same items, missing ratings allowed.

    Parameters
    ----------
    ratings : sequence of sequences
        One row per rater, one column per item; None where the rater did not rate the item.
    level : {"nominal", "ordinal"}
        Level of measurement; "ordinal" follows the order of `values`.
    values : sequence of hashable
        The value domain, in order. Ratings are replaced by their index in `values` before calling
        ``krippendorff.alpha``, so strings and booleans work and the ordinal order is the given one.

    Returns
    -------
    alpha : float or None
        None when no item has two ratings, or when alpha is undefined (e.g. every rating is the same
        value, so there is no expected disagreement).

    Notes
    -----
    Alpha is 1 - D_o / D_e, the observed disagreement over the disagreement expected by chance,
    over the pairable values of every item (items with fewer than two ratings are left out)
    [1]_ [2]_. Computed by the ``krippendorff`` package.

    References
    ----------
    .. [1] Krippendorff, K. (2004). Content Analysis: An Introduction to Its Methodology (2nd
       ed.), ch. 11. Sage.
    .. [2] Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability
       measure for coding data. Communication Methods and Measures, 1(1), 77-89.
       :DOI:`10.1080/19312450709336664`

    Examples
    --------
    Two raters, four items, the first rater missed the last one:

    >>> round(krippendorff_alpha([["yes", "yes", "no", None], ["yes", "no", "no", "no"]],
    ...                          level="nominal", values=["yes", "no"]), 3)
    0.444
    """
    if level not in ("nominal", "ordinal"):
        raise ValueError(f"level must be 'nominal' or 'ordinal', got {level!r}")
    values, index = _label_index(values, "values")
    matrix = _ratings_matrix(ratings, index, labels_name="values")
    if not ((matrix >= 0).sum(axis=0) >= 2).any():
        return None
    data = np.where(matrix >= 0, matrix, np.nan).astype(float)
    import krippendorff

    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = krippendorff.alpha(reliability_data=data, value_domain=np.arange(len(values)),
                                   level_of_measurement=level)
    return _defined(alpha)


def pairwise_kappa(ratings: Sequence[Sequence[Hashable | None]], *, labels: Sequence,
                   weights: Literal["quadratic"] | None = None) -> dict[tuple[int, int], float | None]:
    """Cohen's kappa for each pair of raters (row indices ``i < j``) on the items both rated.

    `ratings` is as for `krippendorff_alpha` (None = not rated). A pair's kappa is None when the two
    raters share no item or when kappa is undefined on their shared items. `weights="quadratic"`
    weights disagreements by the squared distance of positions in `labels`. One rater gives ``{}``.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
       Psychological Measurement, 20(1), 37-46. :DOI:`10.1177/001316446002000104`
    .. [2] Cohen, J. (1968). Weighted kappa: nominal scale agreement provision for scaled
       disagreement or partial credit. Psychological Bulletin, 70(4), 213-220.
       :DOI:`10.1037/h0026256`

    Examples
    --------
    >>> kappas = pairwise_kappa([["yes", "yes", "no", "no"], ["yes", "no", "no", "no"],
    ...                          ["yes", "yes", "no", None]], labels=["yes", "no"])
    >>> {pair: round(kappa, 3) for pair, kappa in kappas.items()}
    {(0, 1): 0.5, (0, 2): 1.0, (1, 2): 0.4}
    """
    if weights not in (None, "quadratic"):
        raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")
    labels, index = _label_index(labels)
    matrix = _ratings_matrix(ratings, index, labels_name="labels")
    result: dict[tuple[int, int], float | None] = {}
    for i in range(len(matrix)):
        for j in range(i + 1, len(matrix)):
            both = (matrix[i] >= 0) & (matrix[j] >= 0)
            result[(i, j)] = (_kappa(matrix[i][both], matrix[j][both], len(labels), weights)
                              if both.any() else None)
    return result


# --------------------------------------------------------------------------------------------------
# Confidence


@dataclass(frozen=True)
class ThresholdResult:
    threshold: float | None
    """Lowest confidence t such that answers with confidence >= t agree with gold at >= floor."""
    agreement: float | None
    """Agreement rate of the answers at or above the threshold."""
    n_above: int
    share_above: float
    """Share of all items whose confidence >= t: the human work that could be saved."""


def confidence_threshold(confidences: Sequence[float], correct: Sequence[bool], *, floor: float,
                         min_items: int = 10) -> ThresholdResult:
    """The lowest confidence above which a judge's answers agree with gold often enough to trust.

    Candidate thresholds are the distinct confidence values; a candidate qualifies when at least
    `min_items` answers have confidence >= t and their agreement rate (share of `correct`) is >=
    `floor`. The lowest qualifying candidate is chosen (most human work saved). Agreement need not
    rise with the threshold, so every candidate is tried.

    Returns
    -------
    result : ThresholdResult
        With threshold None, agreement None, n_above 0 and share_above 0.0 when no candidate qualifies.

    References
    ----------
    .. [1] Geifman, Y., & El-Yaniv, R. (2017). Selective classification for deep neural networks.
       Advances in Neural Information Processing Systems 30. (The coverage of the answers kept at
       a required accuracy, the risk-coverage trade-off this threshold picks a point of.)

    Examples
    --------
    >>> confidence_threshold([0.2, 0.4, 0.6, 0.8, 0.9], [False, True, True, True, True],
    ...                      floor=0.9, min_items=2)
    ThresholdResult(threshold=0.4, agreement=1.0, n_above=4, share_above=0.8)
    """
    # Hand-written: neither scikit-learn nor krippendorff has a "coverage at an agreement floor" search.
    conf, ok = _confidences_and_correct(confidences, correct)
    if not 0 <= floor <= 1:
        raise ValueError(f"floor must be an agreement rate in [0, 1], got {floor!r}")
    if isinstance(min_items, bool) or not isinstance(min_items, (int, np.integer)) or min_items < 1:
        raise ValueError(f"min_items must be a positive integer, got {min_items!r}")
    n = len(conf)
    for t in np.unique(conf):  # ascending
        above = conf >= t
        n_above = int(np.count_nonzero(above))
        if n_above < min_items:
            break  # fewer items above every higher candidate too
        agreement = np.count_nonzero(ok & above) / n_above
        if agreement >= floor - 1e-12:  # tolerance: 9/10 vs a floor written as 0.9
            return ThresholdResult(threshold=float(t), agreement=float(agreement),
                                   n_above=n_above, share_above=n_above / n)
    return ThresholdResult(threshold=None, agreement=None, n_above=0, share_above=0.0)


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    n: int
    mean_confidence: float | None
    """None for an empty bin."""
    accuracy: float | None
    """Share of correct answers in the bin; None for an empty bin."""


def reliability_bins(confidences: Sequence[float], correct: Sequence[bool], *,
                     bins: int = 10) -> list[ReliabilityBin]:
    """Reliability diagram data: accuracy vs mean confidence in equal-width bins on [0, 1].

    Bin i covers ``[i/bins, (i+1)/bins)``; the last bin also includes 1.0. Confidences must lie in
    [0, 1]. Every bin is returned, empty ones with n = 0 and None for the means.

    References
    ----------
    .. [1] DeGroot, M. H., & Fienberg, S. E. (1983). The comparison and evaluation of forecasters.
       Journal of the Royal Statistical Society, Series D (The Statistician), 32(1/2), 12-22.
       :DOI:`10.2307/2987588`
    .. [2] Niculescu-Mizil, A., & Caruana, R. (2005). Predicting good probabilities with
       supervised learning. Proceedings of ICML 2005, 625-632. :DOI:`10.1145/1102351.1102430`

    Examples
    --------
    >>> low, high = reliability_bins([0.1, 0.15, 0.9], [False, True, True], bins=2)
    >>> low.n, low.mean_confidence, low.accuracy, high.n, high.accuracy
    (2, 0.125, 0.5, 1, 1.0)
    """
    # Hand-written: sklearn.calibration.calibration_curve drops empty bins and does not report counts.
    conf, ok = _confidences_and_correct(confidences, correct)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    outside = np.flatnonzero((conf < 0) | (conf > 1))
    if outside.size:
        raise ValueError(f"confidences[{outside[0]}] = {conf[outside[0]]!r} is outside [0, 1]")
    # Edges as i/bins (not linspace, whose 0.30000000000000004 would put 0.3 in the bin below).
    edges = np.arange(bins + 1) / bins
    which = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, bins - 1)
    result = []
    for i in range(bins):
        members = which == i
        count = int(np.count_nonzero(members))
        result.append(ReliabilityBin(
            low=float(edges[i]), high=float(edges[i + 1]), n=count,
            mean_confidence=float(conf[members].mean()) if count else None,
            accuracy=float(ok[members].mean()) if count else None))
    return result
