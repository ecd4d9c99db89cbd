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
    "BaselineMetrics",
    "ClassificationMetrics",
    "CorrectedRate",
    "ReliabilityBin",
    "RetestAgreement",
    "ThresholdResult",
    "bootstrap_interval",
    "classification_metrics",
    "cluster_bootstrap_interval",
    "confidence_threshold",
    "corrected_rate",
    "f1_interval",
    "kappa_interval",
    "AgreementIntervals",
    "agreement_intervals",
    "krippendorff_alpha",
    "majority",
    "pairwise_kappa",
    "random_baseline",
    "agreement_ceiling",
    "rate_interval",
    "MIN_ITEMS_FOR_INTERVAL",
    "proportion_interval",
    "too_few",
    "reliability_bins",
    "retest_agreement",
    "rogan_gladen",
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
# How few items are too few

#: Fewest items an interval is computed from; below it a figure is shown as "too few to say (n=…)"
#: and no interval is given. A percentile bootstrap over 4 items draws from only 35 distinct
#: resamples (too few for its 2.5% and 97.5% quantiles to mean anything), and one over a single
#: item always returns the point itself, a certainty the data do not have.
MIN_ITEMS_FOR_INTERVAL = 5


def too_few(n: int | None) -> str | None:
    """``"too few to say (n=N)"`` when `n` is below `MIN_ITEMS_FOR_INTERVAL`, else None.

    Examples
    --------
    >>> too_few(2)
    'too few to say (n=2)'
    >>> too_few(12) is None
    True
    """
    if n is None or n >= MIN_ITEMS_FOR_INTERVAL:
        return None
    return f"too few to say (n={n})"


def _degenerate(interval: tuple[float, float] | None) -> bool:
    """A bootstrap interval of width 0: every resample gave the same value (e.g. a judge that
    agreed on every item), which says nothing about how far the true value may lie."""
    return interval is not None and interval[1] - interval[0] < 1e-12


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
        None when the statistic is defined on fewer than half of the resamples, or when there are
        fewer than `MIN_ITEMS_FOR_INTERVAL` items.

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
    if n_items < MIN_ITEMS_FOR_INTERVAL:
        return None
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
    positive item at all) or there are fewer than `MIN_ITEMS_FOR_INTERVAL` items. The interval is
    `bootstrap_interval`'s percentile interval (Efron and Tibshirani 1993, referenced there). Where
    the bootstrap degenerates to a point (every resample gives the same F1, as when the judge
    agreed on every item), the interval is instead the Wilson interval of the share of items
    positive on either side that are positive on both (the Jaccard index J = TP / (TP + FP +
    FN), a proportion), carried to F1 = 2J / (1 + J), which rises with J.

    Examples
    --------
    >>> f1_interval(["pass", "pass", "fail", "fail", "pass", "fail"],
    ...             ["pass", "fail", "fail", "fail", "pass", "pass"],
    ...             positive="pass", labels=["pass", "fail"], n_resamples=200)
    (0.0, 1.0)

    Perfect agreement on six items is not certainty:

    >>> low, high = f1_interval(["pass"] * 3 + ["fail"] * 3, ["pass"] * 3 + ["fail"] * 3,
    ...                         positive="pass", labels=["pass", "fail"], n_resamples=200)
    >>> round(low, 2), high
    (0.61, 1.0)
    """
    labels, g, p = _paired(gold, predicted, labels)
    try:
        pos = labels.index(positive)
    except ValueError:
        raise ValueError(f"positive = {positive!r} is not one of labels {labels!r}") from None
    found = bootstrap_interval(len(g), lambda idx: _f1_counts(g[idx], p[idx], pos),
                               n_resamples=n_resamples, seed=seed, confidence=confidence)
    if not _degenerate(found):
        return found
    gold_pos, pred_pos = g == pos, p == pos
    union = int(np.count_nonzero(gold_pos | pred_pos))
    jaccard = rate_interval(int(np.count_nonzero(gold_pos & pred_pos)), union,
                            confidence=confidence)
    if jaccard is None:
        return None
    low, high = jaccard
    return 2 * low / (1 + low), 2 * high / (1 + high)


def kappa_interval(gold: Sequence, predicted: Sequence, *, labels: Sequence,
                   weights: Literal["linear", "quadratic"] | None = None,
                   n_resamples: int = 1000, seed: int = 0,
                   confidence: float = 0.95) -> tuple[float, float] | None:
    """Bootstrap interval of Cohen's kappa of predicted vs gold, resampling items.

    None below `MIN_ITEMS_FOR_INTERVAL` items, where kappa is undefined on most resamples (one
    class only), or where the bootstrap degenerates to a point (kappa has no count-based interval
    to fall back on: read the agreement's Wilson interval instead). Same checks as
    `classification_metrics`; the interval is `bootstrap_interval`'s (Efron and Tibshirani 1993).

    Examples
    --------
    >>> low, high = kappa_interval(list("aabbaabbab"), list("aabbabbbab"), labels=["a", "b"],
    ...                            n_resamples=200)
    >>> -1 <= low < 0.8 < high <= 1
    True
    """
    labels, g, p = _paired(gold, predicted, labels)
    k = len(labels)
    found = bootstrap_interval(len(g), lambda idx: _kappa(g[idx], p[idx], k, weights),
                               n_resamples=n_resamples, seed=seed, confidence=confidence)
    return None if _degenerate(found) else found


@dataclass(frozen=True)
class AgreementIntervals:
    """95% intervals of an agreement (Wilson) and its kappa (bootstrap) on `n` items; both None
    below `MIN_ITEMS_FOR_INTERVAL` items (`too_few` says so)."""

    n: int
    accuracy: tuple[float, float] | None
    kappa: tuple[float, float] | None

    def as_dict(self) -> dict:
        return asdict(self)

    def show(self, value: float | None, which: Literal["accuracy", "kappa"],
             digits: int = 3) -> str:
        """The figure with its interval, or "too few to say (n=…)"."""
        if few := too_few(self.n):
            return few
        if value is None:
            return "-"
        interval = getattr(self, which)
        return f"{value:.{digits}f}" + (
            "" if interval is None else f" [{interval[0]:.2f}, {interval[1]:.2f}]")


def agreement_intervals(gold: Sequence, predicted: Sequence, *, labels: Sequence,
                        weights: Literal["linear", "quadratic"] | None = None,
                        n_resamples: int = 1000, seed: int = 0) -> AgreementIntervals:
    """The intervals shown beside an agreement and a kappa (`proportion_interval`,
    `kappa_interval`).

    Examples
    --------
    >>> agreement_intervals(["a", "b"], ["a", "b"], labels=["a", "b"]).show(1.0, "accuracy")
    'too few to say (n=2)'
    """
    labels, g, p = _paired(gold, predicted, labels)
    return AgreementIntervals(
        n=len(g), accuracy=proportion_interval(int(np.count_nonzero(g == p)), len(g)),
        kappa=kappa_interval(gold, predicted, labels=labels, weights=weights,
                             n_resamples=n_resamples, seed=seed))


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
    Kappa and weighted kappa as in `classification_metrics` (Cohen 1960 and 1968, referenced
    there).

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


# --------------------------------------------------------------------------------------------------
# Intervals of a rate


def rate_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion ``successes / n`` (e.g. a judge's true-positive rate).

    Parameters
    ----------
    successes, n : int
        Counts, ``0 <= successes <= n``.
    confidence : float, optional
        Coverage of the interval.

    Returns
    -------
    interval : (low, high) or None
        None when ``n == 0`` (no case to measure the rate on).

    Notes
    -----
    The Wilson interval keeps a sensible width at 0/n and n/n, where the Wald interval collapses to
    a point; computed by ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
           inference. Journal of the American Statistical Association 22(158), 209-212.
           :doi:`10.1080/01621459.1927.10502953`

    Examples
    --------
    >>> low, high = rate_interval(9, 10)
    >>> round(low, 4), round(high, 4)
    (0.5958, 0.9821)
    >>> rate_interval(0, 0) is None
    True
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if successes > n:
        raise ValueError(f"successes ({successes}) exceed n ({n})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if n == 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence,
                                                         method="wilson")
    return float(ci.low), float(ci.high)


def proportion_interval(successes: int, n: int, *, confidence: float = 0.95
                        ) -> tuple[float, float] | None:
    """`rate_interval` (Wilson) of ``successes / n``, or None below `MIN_ITEMS_FOR_INTERVAL` items:
    the interval shown beside an agreement rate.

    Examples
    --------
    >>> proportion_interval(2, 2) is None
    True
    >>> low, high = proportion_interval(5, 5)
    >>> round(low, 2), round(high, 2)
    (0.57, 1.0)
    """
    if n < MIN_ITEMS_FOR_INTERVAL:
        return None
    return rate_interval(successes, n, confidence=confidence)


# --------------------------------------------------------------------------------------------------
# Test-retest agreement of a judge with itself


def cluster_bootstrap_interval(clusters: Sequence[Hashable],
                               statistic: Callable[[np.ndarray], float | None], *,
                               n_resamples: int = 1000, seed: int = 0,
                               confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic(item_indices)`` resampling whole clusters.

    Items of one cluster (the claims of one logbook) are not independent: the same page, the same
    model call. Each resample draws as many clusters as there are, with replacement, in the order
    the clusters first appear in `clusters`, and passes the indices of all their items (a cluster
    drawn twice contributes its items twice) to `statistic`. The draws are those of
    `bootstrap_interval` over the clusters (the same seed gives the same clusters).

    Parameters
    ----------
    clusters : sequence of hashable
        The cluster of each item (e.g. its logbook's space id).
    statistic : callable
        Takes an array of item indices; returns a float, or None / NaN where undefined (skipped).

    Returns
    -------
    interval : (low, high) or None
        None when the statistic is defined on fewer than half of the resamples, or when there are
        fewer than `MIN_ITEMS_FOR_INTERVAL` clusters.

    References
    ----------
    .. [1] Field, C. A. and Welsh, A. H. (2007). Bootstrapping clustered data. Journal of the
           Royal Statistical Society B 69(3), 369-390. :doi:`10.1111/j.1467-9868.2007.00593.x`

    Examples
    --------
    >>> import numpy as np
    >>> values = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    >>> low, high = cluster_bootstrap_interval(list("aabbccddee"),
    ...                                        lambda idx: values[idx].mean(), n_resamples=200)
    >>> 0.0 <= low <= 0.5 <= high <= 1.0
    True
    """
    keys = _as_list(clusters, "clusters")
    if not keys:
        raise ValueError("clusters is empty: no item to resample")
    members: dict[Hashable, list[int]] = {}
    for index, key in enumerate(keys):
        if key is None or _is_nan(key):
            raise ValueError(f"clusters[{index}] is {key!r}: every item needs a cluster")
        members.setdefault(key, []).append(index)
    groups = [np.asarray(items, dtype=np.int64) for items in members.values()]
    return bootstrap_interval(
        len(groups), lambda picked: statistic(np.concatenate([groups[i] for i in picked])),
        n_resamples=n_resamples, seed=seed, confidence=confidence)


@dataclass(frozen=True)
class RetestAgreement:
    """How far a judge agrees with itself on the same items (see `retest_agreement`)."""

    n: int
    """Items with both verdicts."""
    missing: int
    """Items left out because one of the two verdicts is missing."""
    disagreements: int
    disagreement: float
    """Share of items whose two verdicts differ."""
    disagreement_interval: tuple[float, float] | None
    agreement: float
    """1 - disagreement (percent agreement of the two verdicts)."""
    ceiling: float
    """`agreement_ceiling(agreement)`: the most often this judge can agree with any fixed
    reference (people)."""
    ceiling_interval: tuple[float, float] | None
    alpha: float | None
    """Krippendorff's alpha with the two verdicts as two coders (None: undefined)."""
    alpha_interval: tuple[float, float] | None
    flips: dict[str, int]
    """Disagreements by direction, ``"first -> second"``, most frequent first."""
    clusters: int | None
    """Clusters (e.g. logbooks) when the bootstrap resampled clusters, else None."""
    cluster_disagreements: dict[str, tuple[int, int]]
    """Per cluster that carries a disagreement: (items, disagreements), most first; empty
    without clusters."""

    def as_dict(self) -> dict:
        return asdict(self)


def agreement_ceiling(retest: float) -> float:
    """The most often a judge can agree with any fixed reference, given how often it agrees with
    itself on a retest: ``(1 + retest) / 2``.

    Parameters
    ----------
    retest : float
        The judge's test-retest percent agreement (two independent answers to the same input).

    Returns
    -------
    ceiling : float

    Notes
    -----
    On one item, let ``a_k`` be the probability that the judge answers label k, and t the
    reference's label. Two independent answers agree with probability ``sum(a_k^2) >= a_t^2``,
    and ``a_t <= (1 + a_t^2) / 2`` since ``(1 - a_t)^2 >= 0``; so the judge agrees with the
    reference at most ``(1 + P(retest agreement)) / 2`` on each item, hence on average. The
    percent agreement itself is no ceiling: a judge that flips a yes/no answer with probability
    p agrees with a correct reference ``1 - p`` of the time and with itself ``1 - 2p(1 - p)``,
    less. (For correlation-like coefficients the classical form is validity <= sqrt(reliability).)

    References
    ----------
    .. [1] Lord, F. M. and Novick, M. R. (1968). Statistical Theories of Mental Test Scores.
           Addison-Wesley (the reliability bound on validity).

    Examples
    --------
    >>> agreement_ceiling(0.8)
    0.9
    >>> p = 0.1; round(agreement_ceiling(1 - 2 * p * (1 - p)), 4) >= 1 - p
    True
    """
    if isinstance(retest, bool) or not isinstance(retest, (int, float, np.floating)) \
            or not 0 <= retest <= 1:
        raise ValueError(f"retest must be an agreement rate in [0, 1], got {retest!r}")
    return (1 + float(retest)) / 2


def retest_agreement(first: Sequence[Hashable | None], second: Sequence[Hashable | None], *,
                     labels: Sequence[Hashable], clusters: Sequence[Hashable] | None = None,
                     level: Literal["nominal", "ordinal"] = "nominal", n_resamples: int = 1000,
                     seed: int = 0, confidence: float = 0.95) -> RetestAgreement:
    """Test-retest agreement of two verdicts per item by the same judge on the same input.

    Parameters
    ----------
    first, second : sequence of hashable or None
        The two verdicts of each item (None: missing; the item is left out, never counted as an
        agreement).
    labels : sequence of hashable
        Every possible verdict, in order (the ordinal scale when ``level="ordinal"``).
    clusters : sequence of hashable, optional
        The cluster of each item (e.g. the logbook): the intervals then resample clusters
        (`cluster_bootstrap_interval`), since items of one cluster are judged together, and the
        result says which clusters carry the disagreements. Without it, items are resampled.
    level : {"nominal", "ordinal"}
        Krippendorff's alpha's level of measurement.
    n_resamples, seed, confidence : optional
        Of the percentile bootstrap (both intervals use the same draws).

    Returns
    -------
    agreement : RetestAgreement

    Notes
    -----
    The disagreement share is the complement of percent agreement; alpha corrects it for the
    agreement the label frequencies give by chance. The judge's agreement with people is bounded
    by its agreement with itself: ``ceiling`` is `agreement_ceiling` of it.

    References
    ----------
    .. [1] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School
           for Communication, University of Pennsylvania. https://repository.upenn.edu/asc_papers/43
    .. [2] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman &
           Hall. :doi:`10.1201/9780429246593`

    Examples
    --------
    >>> r = retest_agreement(["yes", "yes", "no", "no"], ["yes", "no", "no", "no"],
    ...                      labels=["yes", "no"], n_resamples=200)
    >>> r.disagreements, r.disagreement, r.flips
    (1, 0.25, {'yes -> no': 1})
    """
    labels, index = _label_index(labels)
    a = _as_list(first, "first")
    b = _as_list(second, "second")
    if len(a) != len(b):
        raise ValueError(f"first and second differ in length: {len(a)} != {len(b)}")
    keys = _as_list(clusters, "clusters") if clusters is not None else None
    if keys is not None and len(keys) != len(a):
        raise ValueError(f"clusters has {len(keys)} entries for {len(a)} items")
    x = _encode(a, index, name="first", allow_none=True)
    y = _encode(b, index, name="second", allow_none=True)
    both = (x >= 0) & (y >= 0)
    if not both.any():
        raise ValueError("no item has both verdicts: nothing to compare")
    x, y = x[both], y[both]
    kept_keys = [k for k, keep in zip(keys, both) if keep] if keys is not None else None
    differ = x != y
    import krippendorff

    domain = np.arange(len(labels))

    def alpha_of(idx: np.ndarray) -> float | None:
        data = np.vstack([x[idx], y[idx]]).astype(float)
        if len(np.unique(data)) < 2:
            return None  # one value only: no expected disagreement, alpha is 0/0
        with np.errstate(divide="ignore", invalid="ignore"):
            return _defined(krippendorff.alpha(reliability_data=data, value_domain=domain,
                                               level_of_measurement=level))

    def rate_of(idx: np.ndarray) -> float:
        return float(differ[idx].mean())

    options = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    if kept_keys is not None:
        alpha_interval = cluster_bootstrap_interval(kept_keys, alpha_of, **options)
        rate_interval_ = cluster_bootstrap_interval(kept_keys, rate_of, **options)
    else:
        alpha_interval = bootstrap_interval(len(x), alpha_of, **options)
        rate_interval_ = bootstrap_interval(len(x), rate_of, **options)
    n = int(len(x))
    disagreements = int(differ.sum())
    if _degenerate(rate_interval_):
        # Every resample gave the same share (no disagreement, or nothing but): a point is not
        # an interval; the Wilson interval of the share says how far it may be off.
        rate_interval_ = proportion_interval(disagreements, n, confidence=confidence)
    flips = Counter(f"{labels[i]} -> {labels[j]}" for i, j in zip(x[differ], y[differ]))
    per_cluster: dict[str, tuple[int, int]] = {}
    if kept_keys is not None:
        items = Counter(map(str, kept_keys))
        carried = Counter(str(k) for k, d in zip(kept_keys, differ) if d)
        per_cluster = {k: (items[k], n) for k, n in
                       sorted(carried.items(), key=lambda kv: (-kv[1], kv[0]))}
    return RetestAgreement(
        n=n, missing=int(len(a) - n), disagreements=disagreements,
        disagreement=disagreements / n, disagreement_interval=rate_interval_,
        agreement=1 - disagreements / n, ceiling=agreement_ceiling(1 - disagreements / n),
        ceiling_interval=None if rate_interval_ is None else (
            agreement_ceiling(1 - rate_interval_[1]), agreement_ceiling(1 - rate_interval_[0])),
        alpha=alpha_of(np.arange(n)),
        alpha_interval=alpha_interval,
        flips=dict(sorted(flips.items(), key=lambda kv: (-kv[1], kv[0]))),
        clusters=len(set(map(str, kept_keys))) if kept_keys is not None else None,
        cluster_disagreements=per_cluster)


# --------------------------------------------------------------------------------------------------
# Rates corrected for the judge's errors


def rogan_gladen(observed: float, *, sensitivity: float, specificity: float) -> float | None:
    """The true pass rate behind an observed one, given the judge's sensitivity and specificity.

    ``(observed + specificity - 1) / (sensitivity + specificity - 1)``, clipped to [0, 1].

    Parameters
    ----------
    observed : float
        Share of items the judge passes.
    sensitivity, specificity : float
        The judge's true-positive rate (passes a true pass) and true-negative rate (fails a true
        fail), measured against people.

    Returns
    -------
    rate : float or None
        None when ``sensitivity + specificity <= 1``: a judge no better than chance says nothing
        about the true rate.

    References
    ----------
    .. [1] Rogan, W. J. and Gladen, B. (1978). Estimating prevalence from the results of a
           screening test. American Journal of Epidemiology 107(1), 71-76.
           :doi:`10.1093/oxfordjournals.aje.a112510`

    Examples
    --------
    >>> round(rogan_gladen(0.3, sensitivity=0.8, specificity=0.9), 6)
    0.285714
    >>> rogan_gladen(0.5, sensitivity=0.5, specificity=0.5) is None
    True
    """
    for name, value in (("observed", observed), ("sensitivity", sensitivity),
                        ("specificity", specificity)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) \
                or not 0 <= value <= 1:
            raise ValueError(f"{name} must be a rate in [0, 1], got {value!r}")
    denominator = sensitivity + specificity - 1
    if denominator <= 0:
        return None
    return float(min(1.0, max(0.0, (observed + specificity - 1) / denominator)))


@dataclass(frozen=True)
class CorrectedRate:
    """An observed pass rate and the rate corrected for the judge's errors (`corrected_rate`);
    a calibration artifact keeps it as it is (`CriterionCalibration.corrected`)."""

    n: int
    """Items judged (in a run: the judge's scored answers)."""
    passed: int
    observed: float
    sensitivity: float | None
    specificity: float | None
    corrected: float | None
    """Rogan-Gladen; None when the judge is no better than chance or a rate is unmeasured."""
    interval: tuple[float, float] | None
    """Carries the uncertainty of the observed rate and of both calibration rates."""
    clipped: bool
    """The point estimate fell outside [0, 1] and was clipped (the judge's measured rates and the
    observed rate disagree: read the interval, not the point)."""

    def as_dict(self) -> dict:
        return asdict(self)


def corrected_rate(passed: int, n: int, *, true_positives: int, false_negatives: int,
                   true_negatives: int, false_positives: int, n_resamples: int = 4000,
                   seed: int = 0, confidence: float = 0.95) -> CorrectedRate:
    """A judge's pass rate on `n` items corrected for its sensitivity and specificity, with an
    interval that carries the calibration's uncertainty.

    Parameters
    ----------
    passed, n : int
        Items the judge passed, of the items it judged (the rate to correct).
    true_positives, false_negatives, true_negatives, false_positives : int
        The judge against people on the calibration set (rows gold, columns judge).
    n_resamples, seed, confidence : optional
        Of the Monte Carlo interval.

    Returns
    -------
    rate : CorrectedRate

    Notes
    -----
    The point estimate is `rogan_gladen`. The interval is the percentile interval of the
    Rogan-Gladen estimate over draws of the three rates from their Jeffreys posteriors,
    ``Beta(k + 1/2, n - k + 1/2)``, independently (the run's items and the calibration's are
    different items); draws where the judge is no better than chance are skipped. A small
    calibration set widens the interval even when it measured no error at all, which a
    resampling of its counts would not.

    References
    ----------
    .. [1] Rogan, W. J. and Gladen, B. (1978). Estimating prevalence from the results of a
           screening test. American Journal of Epidemiology 107(1), 71-76.
           :doi:`10.1093/oxfordjournals.aje.a112510`
    .. [2] Lang, Z. and Reiczigel, J. (2014). Confidence limits for prevalence of disease
           adjusted for estimated sensitivity and specificity. Preventive Veterinary Medicine
           113(1), 13-22. :doi:`10.1016/j.prevetmed.2013.09.015`
    .. [3] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation for a binomial
           proportion. Statistical Science 16(2), 101-133. :doi:`10.1214/ss/1009213286`

    Examples
    --------
    >>> r = corrected_rate(30, 100, true_positives=8, false_negatives=2, true_negatives=18,
    ...                    false_positives=2)
    >>> round(r.observed, 3), r.sensitivity, r.specificity, round(r.corrected, 6)
    (0.3, 0.8, 0.9, 0.285714)
    >>> r.interval[0] < r.corrected < r.interval[1]
    True
    """
    counts = {"passed": passed, "n": n, "true_positives": true_positives,
              "false_negatives": false_negatives, "true_negatives": true_negatives,
              "false_positives": false_positives}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if n == 0:
        raise ValueError("n is 0: no judged item to correct a rate on")
    if passed > n:
        raise ValueError(f"passed ({passed}) exceeds n ({n})")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) \
            or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    gold_pass = true_positives + false_negatives
    gold_fail = true_negatives + false_positives
    observed = passed / n
    sensitivity = true_positives / gold_pass if gold_pass else None
    specificity = true_negatives / gold_fail if gold_fail else None
    if sensitivity is None or specificity is None:
        return CorrectedRate(n=n, passed=passed, observed=observed, sensitivity=sensitivity,
                             specificity=specificity, corrected=None, interval=None,
                             clipped=False)
    raw = (observed + specificity - 1) / (sensitivity + specificity - 1) \
        if sensitivity + specificity > 1 else None
    corrected = rogan_gladen(observed, sensitivity=sensitivity, specificity=specificity)
    # Hand-written: no maintained library gives a Rogan-Gladen interval that carries the
    # uncertainty of the sensitivity and specificity (statsmodels' proportion_confint covers the
    # observed rate only).
    rng = np.random.default_rng(seed)
    p = rng.beta(passed + 0.5, n - passed + 0.5, size=n_resamples)
    se = rng.beta(true_positives + 0.5, false_negatives + 0.5, size=n_resamples)
    sp = rng.beta(true_negatives + 0.5, false_positives + 0.5, size=n_resamples)
    useful = se + sp > 1
    interval = None
    if 2 * int(useful.sum()) >= n_resamples:
        draws = np.clip((p[useful] + sp[useful] - 1) / (se[useful] + sp[useful] - 1), 0, 1)
        tail = (1 - confidence) / 2
        low, high = np.quantile(draws, [tail, 1 - tail])
        interval = (float(low), float(high))
    return CorrectedRate(n=n, passed=passed, observed=observed, sensitivity=sensitivity,
                         specificity=specificity, corrected=corrected, interval=interval,
                         clipped=raw is not None and not 0 <= raw <= 1)


# --------------------------------------------------------------------------------------------------
# Chance


@dataclass(frozen=True)
class BaselineMetrics:
    """What a judge answering at random at the gold labels' base rates scores, in expectation."""

    n: int
    base_rates: dict[str, float]
    """Share of each gold label (by its str)."""
    accuracy: float
    macro_f1: float
    kappa: float
    precision: float | None
    recall: float | None
    f1: float | None
    true_negative_rate: float | None
    """Of the positive class; None without one."""

    def as_dict(self) -> dict:
        return asdict(self)


def random_baseline(gold: Sequence[Hashable], *, labels: Sequence[Hashable],
                    positive: Hashable | None = None) -> BaselineMetrics:
    """The expected agreement of a judge that draws each answer at random with the gold labels'
    own frequencies: the row a calibration's figures are read against.

    Parameters
    ----------
    gold : sequence of hashable
        The gold labels.
    labels : sequence of hashable
        All possible labels.
    positive : hashable, optional
        The positive class for precision, recall (true-positive rate), F1 and the true-negative
        rate.

    Returns
    -------
    baseline : BaselineMetrics
        With base rates ``p_k``: accuracy ``sum(p_k^2)``; precision, recall and F1 of the positive
        class ``p_pos``; true-negative rate ``1 - p_pos``; macro F1 the mean of ``p_k`` over the
        labels; Cohen's kappa 0.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
           Psychological Measurement 20(1), 37-46. :doi:`10.1177/001316446002000104`

    Examples
    --------
    >>> b = random_baseline([True, True, True, False], labels=[True, False], positive=True)
    >>> b.accuracy, b.f1, b.true_negative_rate, b.kappa
    (0.625, 0.75, 0.25, 0.0)
    """
    labels, index = _label_index(labels)
    values = _as_list(gold, "gold")
    if not values:
        raise ValueError("gold is empty: no base rate")
    codes = _encode(values, index, name="gold")
    rates = np.bincount(codes, minlength=len(labels)) / len(codes)
    precision = recall = f1 = tnr = None
    if positive is not None:
        try:
            pos = labels.index(positive)
        except ValueError:
            raise ValueError(f"positive = {positive!r} is not one of labels {labels!r}") from None
        precision = recall = f1 = float(rates[pos])
        tnr = float(1 - rates[pos])
    return BaselineMetrics(
        n=len(codes), base_rates={str(label): float(r) for label, r in zip(labels, rates)},
        accuracy=float((rates ** 2).sum()), macro_f1=float(rates.mean()), kappa=0.0,
        precision=precision, recall=recall, f1=f1, true_negative_rate=tnr)
