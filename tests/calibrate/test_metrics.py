"""judging.calibrate.metrics: checked against scikit-learn and krippendorff, hand-worked cases,
and the published PandaLM agreement figures (tests/data/pandalm-agreement, Apache-2.0, see its
README)."""

from __future__ import annotations

import csv
import math
import warnings
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
)

from judging.calibrate.metrics import (
    ClassificationMetrics,
    ReliabilityBin,
    ThresholdResult,
    bootstrap_interval,
    classification_metrics,
    confidence_threshold,
    f1_interval,
    krippendorff_alpha,
    majority,
    pairwise_kappa,
    reliability_bins,
)
from tests.conftest import DATA

PANDALM = DATA / "pandalm-agreement" / "labels.csv"


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _sk_kappa(y1, y2, labels, weights=None) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _none_if_nan(cohen_kappa_score(y1, y2, labels=labels, weights=weights))


def _approx(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# --------------------------------------------------------------------------------------------------
# classification_metrics against scikit-learn on random inputs


def _check_against_sklearn(gold, predicted, labels, positive=None, ordinal=False):
    m = classification_metrics(gold, predicted, labels=labels, positive=positive, ordinal=ordinal)
    assert m.n == len(gold)
    assert m.labels == list(labels)
    assert _approx(m.accuracy, accuracy_score(gold, predicted))
    mp, mr, mf, _ = precision_recall_fscore_support(gold, predicted, labels=labels, average="macro",
                                                    zero_division=0)
    assert _approx(m.macro_precision, mp) and _approx(m.macro_recall, mr) and _approx(m.macro_f1, mf)
    if positive is not None:
        p, r, f, _ = precision_recall_fscore_support(gold, predicted, labels=[positive],
                                                     average=None, zero_division=np.nan)
        assert _approx(m.precision, _none_if_nan(p[0]))
        assert _approx(m.recall, _none_if_nan(r[0]))
        assert _approx(m.f1, _none_if_nan(f[0]))
        if len(labels) == 2:
            f_binary = f1_score(gold, predicted, labels=labels, pos_label=positive,
                                zero_division=np.nan)
            assert _approx(m.f1, _none_if_nan(f_binary))
    else:
        assert m.precision is None and m.recall is None and m.f1 is None
    assert _approx(m.kappa, _sk_kappa(gold, predicted, labels))
    if ordinal:
        assert _approx(m.weighted_kappa, _sk_kappa(gold, predicted, labels, "quadratic"))
    else:
        assert m.weighted_kappa is None
    assert m.confusion == confusion_matrix(gold, predicted, labels=labels).tolist()
    assert all(type(c) is int for row in m.confusion for c in row)
    return m


def test_binary_with_positive_class_matches_sklearn():
    rng = np.random.default_rng(1)
    labels = ["fail", "pass"]
    for _ in range(40):
        n = int(rng.integers(1, 60))
        share_pass = rng.uniform(0.05, 0.95)
        gold = rng.choice(labels, size=n, p=[1 - share_pass, share_pass]).tolist()
        flip = rng.random(n) < rng.uniform(0, 0.6)
        predicted = [("pass" if g == "fail" else "fail") if f else g for g, f in zip(gold, flip)]
        _check_against_sklearn(gold, predicted, labels, positive="pass")


def test_binary_degenerate_cases_match_sklearn():
    labels = [False, True]
    # one class only: kappa undefined; no positive anywhere: precision, recall, F1 undefined
    m = _check_against_sklearn([False] * 5, [False] * 5, labels, positive=True)
    assert m.kappa is None and m.precision is None and m.recall is None and m.f1 is None
    assert m.accuracy == 1.0
    # gold positives, none predicted: precision undefined, recall and F1 are 0
    m = _check_against_sklearn([True, True, False], [False, False, False], labels, positive=True)
    assert m.precision is None and m.recall == 0.0 and m.f1 == 0.0


def test_three_class_nominal_matches_sklearn():
    rng = np.random.default_rng(2)
    labels = ["a", "b", "c"]
    for _ in range(40):
        n = int(rng.integers(1, 80))
        gold = rng.choice(labels, size=n).tolist()
        predicted = [g if rng.random() < 0.6 else str(rng.choice(labels)) for g in gold]
        _check_against_sklearn(gold, predicted, labels, positive="a")
        _check_against_sklearn(gold, predicted, labels)


def test_five_level_ordinal_quadratic_kappa_matches_sklearn():
    rng = np.random.default_rng(3)
    # declared order is the scale, not alphabetical order
    labels = ["poor", "fair", "good", "very good", "excellent"]
    for _ in range(40):
        n = int(rng.integers(2, 80))
        gold_i = rng.integers(0, 5, size=n)
        pred_i = np.clip(gold_i + rng.integers(-2, 3, size=n) * (rng.random(n) < 0.5), 0, 4)
        gold = [labels[i] for i in gold_i]
        predicted = [labels[i] for i in pred_i]
        _check_against_sklearn(gold, predicted, labels, ordinal=True)


def test_hand_worked_two_by_two():
    # gold pass/fail, positive = pass. Confusion (rows gold, columns predicted), worked by hand:
    #              pred fail  pred pass
    #   gold fail      11          1        TN = 11, FP = 1
    #   gold pass       2          6        FN = 2,  TP = 6        n = 20
    # accuracy  = (11 + 6) / 20 = 0.85
    # precision = 6 / (6 + 1) = 6/7;  recall = 6 / (6 + 2) = 0.75;  F1 = 2*6 / (2*6 + 1 + 2) = 0.8
    # kappa: po = 0.85; gold 12 fail / 8 pass, predicted 13 fail / 7 pass;
    #        pe = (12*13 + 8*7) / 20^2 = 212/400 = 0.53; kappa = (0.85 - 0.53) / (1 - 0.53) = 0.32/0.47
    # fail class: precision 11/13, recall 11/12, F1 = 22/25 = 0.88
    # macro precision = (6/7 + 11/13)/2, macro recall = (0.75 + 11/12)/2, macro F1 = (0.8 + 0.88)/2 = 0.84
    gold = ["fail"] * 12 + ["pass"] * 8
    predicted = ["fail"] * 11 + ["pass"] + ["fail"] * 2 + ["pass"] * 6
    m = classification_metrics(gold, predicted, labels=["fail", "pass"], positive="pass")
    assert m.n == 20
    assert m.confusion == [[11, 1], [2, 6]]
    assert m.accuracy == pytest.approx(0.85)
    assert m.precision == pytest.approx(6 / 7)
    assert m.recall == pytest.approx(0.75)
    assert m.f1 == pytest.approx(0.8)
    assert m.kappa == pytest.approx(0.32 / 0.47)
    assert m.macro_precision == pytest.approx((6 / 7 + 11 / 13) / 2)
    assert m.macro_recall == pytest.approx((0.75 + 11 / 12) / 2)
    assert m.macro_f1 == pytest.approx(0.84)
    assert m.weighted_kappa is None
    d = m.as_dict()
    assert d["confusion"] == [[11, 1], [2, 6]] and d["labels"] == ["fail", "pass"]
    assert set(d) == {f for f in ClassificationMetrics.__dataclass_fields__}


def test_hand_worked_quadratic_kappa():
    # 3-level scale 0 < 1 < 2; gold [0, 1, 2], predicted [0, 2, 2]. Worked by hand:
    # observed: one disagreement (1 -> 2), weight (1-2)^2 = 1, so sum w*O = 1.
    # expected E_ij = rowsum_i * colsum_j / n with rowsums (1, 1, 1), colsums (1, 0, 2):
    #   sum w*E = (1/3) * [1*(0+1+4) + 0*(1+0+1) + 2*(4+1+0)] = (1/3) * 15 = 5
    # weighted kappa = 1 - 1/5 = 0.8
    m = classification_metrics([0, 1, 2], [0, 2, 2], labels=[0, 1, 2], ordinal=True)
    assert m.weighted_kappa == pytest.approx(0.8)


# --------------------------------------------------------------------------------------------------
# Krippendorff's alpha and pairwise kappa


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example with 4
# observers (A-D), 12 units and missing values: nominal alpha = 0.743, ordinal alpha = 0.815 (the
# paper's published values; also the krippendorff package's doctests).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_krippendorff_alpha_paper_example():
    values = [1, 2, 3, 4, 5]
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level="nominal", values=values), 3) == 0.743
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level="ordinal", values=values), 3) == 0.815
    # same with string values: the ordinal order is the order given, not alphabetical order
    names = ["very low", "low", "mid", "high", "very high"]
    as_names = [[None if v is None else names[v - 1] for v in row] for row in KRIPPENDORFF_2011]
    assert round(krippendorff_alpha(as_names, level="ordinal", values=names), 3) == 0.815
    assert round(krippendorff_alpha(as_names, level="nominal", values=names), 3) == 0.743


def test_krippendorff_alpha_hand_worked():
    # 2 raters, 4 items, values a/b; rater 1: a a b b; rater 2: a a b a. Worked by hand:
    # coincidences (each 2-rating unit adds its ordered pairs with weight 1/(2-1)):
    #   o_aa = 2 + 2 = 4, o_bb = 2, o_ab = o_ba = 1;  n_a = 5, n_b = 3, n = 8
    # nominal alpha = 1 - (n - 1) * (o_ab + o_ba) / (n_a*n_b + n_b*n_a) = 1 - 7*2/30 = 8/15
    ratings = [["a", "a", "b", "b"], ["a", "a", "b", "a"]]
    assert krippendorff_alpha(ratings, level="nominal", values=["a", "b"]) == pytest.approx(8 / 15)
    # booleans work as values
    as_bool = [[v == "b" for v in row] for row in ratings]
    assert krippendorff_alpha(as_bool, level="nominal", values=[False, True]) == pytest.approx(8 / 15)


def test_krippendorff_alpha_matches_package_on_random_input():
    rng = np.random.default_rng(4)
    for level, k in (("nominal", 3), ("ordinal", 5)):
        values = list(range(1, k + 1))
        for _ in range(25):
            n_raters, n_items = int(rng.integers(2, 5)), int(rng.integers(3, 40))
            truth = rng.integers(1, k + 1, size=n_items)
            data = np.where(rng.random((n_raters, n_items)) < 0.7, truth,
                            rng.integers(1, k + 1, size=(n_raters, n_items))).astype(float)
            data[rng.random(data.shape) < 0.2] = np.nan
            ratings = [[None if math.isnan(v) else int(v) for v in row] for row in data]
            ours = krippendorff_alpha(ratings, level=level, values=values)
            if not ((~np.isnan(data)).sum(axis=0) >= 2).any():
                assert ours is None
                continue
            with np.errstate(all="ignore"):
                theirs = krippendorff.alpha(reliability_data=data, value_domain=values,
                                            level_of_measurement=level)
            assert _approx(ours, _none_if_nan(theirs))


def test_krippendorff_alpha_undefined():
    # no item with two ratings
    assert krippendorff_alpha([[1, None], [None, 2]], level="nominal", values=[1, 2]) is None
    assert krippendorff_alpha([[1, 2, 1]], level="nominal", values=[1, 2]) is None
    # everyone gives the same value: no expected disagreement, alpha is 0/0
    assert krippendorff_alpha([[1, 1, 1], [1, 1, None]], level="nominal", values=[1, 2]) is None


def test_pairwise_kappa_matches_sklearn():
    rng = np.random.default_rng(5)
    labels = [0, 1, 2, 3, 4]
    for weights in (None, "quadratic"):
        for _ in range(20):
            n_items = int(rng.integers(3, 50))
            truth = rng.integers(0, 5, size=n_items)
            rows = []
            for _ in range(3):
                row = np.where(rng.random(n_items) < 0.7, truth, rng.integers(0, 5, size=n_items))
                rows.append([None if rng.random() < 0.2 else int(v) for v in row])
            result = pairwise_kappa(rows, labels=labels, weights=weights)
            assert set(result) == {(0, 1), (0, 2), (1, 2)}
            for (i, j), value in result.items():
                both = [(a, b) for a, b in zip(rows[i], rows[j]) if a is not None and b is not None]
                expected = (_sk_kappa([a for a, _ in both], [b for _, b in both], labels, weights)
                            if both else None)
                assert _approx(value, expected)


def test_pairwise_kappa_no_shared_items_and_one_rater():
    assert pairwise_kappa([[1, None], [None, 2]], labels=[1, 2]) == {(0, 1): None}
    assert pairwise_kappa([[1, 2]], labels=[1, 2]) == {}


# --------------------------------------------------------------------------------------------------
# majority


def test_majority():
    assert majority(["pass", "fail", "pass"]) == "pass"
    assert majority(["pass", "fail"]) is None  # a tie is not a guess
    assert majority(["a", "a", "b", "b", "c"]) is None
    assert majority(["a", "a", "b", "b", "a"]) == "a"
    assert majority(["fail"]) == "fail"
    assert majority([]) is None
    assert majority([False, False, True]) is False
    assert majority(np.array([2, 1, 2])) == 2
    with pytest.raises(ValueError, match="unrated"):
        majority(["a", None, "a"])


# --------------------------------------------------------------------------------------------------
# bootstrap


def _noisy_binary(n: int, rng: np.random.Generator) -> tuple[list[str], list[str]]:
    gold = np.where(rng.random(n) < 0.5, "pass", "fail")
    flip = rng.random(n) < 0.2
    predicted = np.where(flip, np.where(gold == "pass", "fail", "pass"), gold)
    return gold.tolist(), predicted.tolist()


def test_bootstrap_is_seeded():
    gold, predicted = _noisy_binary(200, np.random.default_rng(6))
    kw = dict(positive="pass", labels=["fail", "pass"], n_resamples=300)
    a = f1_interval(gold, predicted, seed=1, **kw)
    assert a == f1_interval(gold, predicted, seed=1, **kw)
    assert a != f1_interval(gold, predicted, seed=2, **kw)


def test_bootstrap_interval_contains_point_estimate_and_narrows_with_more_data():
    rng = np.random.default_rng(7)
    widths = {}
    for n in (40, 400):
        gold, predicted = _noisy_binary(n, rng)
        point = classification_metrics(gold, predicted, labels=["fail", "pass"], positive="pass").f1
        low, high = f1_interval(gold, predicted, positive="pass", labels=["fail", "pass"])
        assert low <= point <= high
        assert 0 <= low < high <= 1
        widths[n] = high - low
    assert widths[40] > 2 * widths[400]


def test_f1_interval_statistic_is_sklearn_f1():
    # f1_interval's per-resample F1 (counted by hand for speed) equals sklearn's f1_score
    gold, predicted = _noisy_binary(30, np.random.default_rng(8))
    seen = []

    def statistic(idx):
        g, p = [gold[i] for i in idx], [predicted[i] for i in idx]
        value = _none_if_nan(f1_score(g, p, labels=["fail", "pass"], pos_label="pass",
                                      zero_division=np.nan))
        seen.append(value)
        return value

    assert bootstrap_interval(30, statistic, n_resamples=200, seed=3) == \
        f1_interval(gold, predicted, positive="pass", labels=["fail", "pass"], n_resamples=200, seed=3)
    assert len(seen) == 200


def test_bootstrap_none_when_undefined():
    # no positive anywhere: F1 undefined on every resample
    assert f1_interval(["fail"] * 20, ["fail"] * 20, positive="pass", labels=["fail", "pass"]) is None
    assert bootstrap_interval(10, lambda idx: None) is None
    assert bootstrap_interval(10, lambda idx: float("nan")) is None

    def defined_every(k):
        calls = iter(range(10**6))
        return lambda idx: 1.0 if next(calls) % k == 0 else None

    # defined on exactly half the resamples: enough; on a third: not enough
    assert bootstrap_interval(10, defined_every(2), n_resamples=100) == (1.0, 1.0)
    assert bootstrap_interval(10, defined_every(3), n_resamples=100) is None


def test_bootstrap_percentiles():
    # statistic = mean of the resampled values of 0..99: interval around 49.5, of the usual width
    data = np.arange(100.0)
    low, high = bootstrap_interval(100, lambda idx: data[idx].mean(), n_resamples=2000, seed=0)
    se = data.std() / math.sqrt(100)
    assert low == pytest.approx(49.5 - 1.96 * se, abs=0.6)
    assert high == pytest.approx(49.5 + 1.96 * se, abs=0.6)
    narrow = bootstrap_interval(100, lambda idx: data[idx].mean(), n_resamples=2000, seed=0,
                                confidence=0.5)
    assert low < narrow[0] < narrow[1] < high


# --------------------------------------------------------------------------------------------------
# confidence threshold and reliability bins


def test_confidence_threshold_known_by_construction():
    # 40 answers at confidence 0.8 .. 1.0, all correct; 60 below 0.8, mostly wrong, including 6 wrong
    # answers at 0.75 so that t = 0.75 gives 40/46 < 0.9. With floor 0.9: t = 0.8, agreement 1.0,
    # 40 above, share 0.4.
    confidences, correct = [], []
    for c in (0.8, 0.85, 0.9, 0.95, 1.0):
        confidences += [c] * 8
        correct += [True] * 8
    confidences += [0.75] * 6
    correct += [False] * 6
    for i, c in enumerate(np.repeat([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], 8)[:54]):
        confidences.append(float(c))
        correct.append(i % 5 == 0)
    assert len(confidences) == 100
    result = confidence_threshold(confidences, correct, floor=0.9)
    assert result == ThresholdResult(threshold=0.8, agreement=1.0, n_above=40, share_above=0.4)
    # a floor nobody reaches below 0.8 but everything reaches above: same answer at floor 1.0
    assert confidence_threshold(confidences, correct, floor=1.0).threshold == 0.8
    # floor 0 is met by everything: the lowest confidence, all items
    low = confidence_threshold(confidences, correct, floor=0.0)
    assert low.threshold == 0.1 and low.share_above == 1.0 and low.n_above == 100


def test_confidence_threshold_min_items_and_no_threshold():
    # 5 correct answers at 1.0, the rest half right: floor 0.9 only reachable with the 5 at 1.0
    confidences = [1.0] * 5 + [0.5] * 20
    correct = [True] * 5 + [True, False] * 10
    assert confidence_threshold(confidences, correct, floor=0.9, min_items=10) == \
        ThresholdResult(threshold=None, agreement=None, n_above=0, share_above=0.0)
    assert confidence_threshold(confidences, correct, floor=0.9, min_items=5) == \
        ThresholdResult(threshold=1.0, agreement=1.0, n_above=5, share_above=0.2)


def test_confidence_threshold_lowest_qualifying_and_exact_floor():
    # agreement is not monotone in t: above 0.5 it is 9/10 (exactly the floor), above 0.7 it is 8/9
    # (below), above 0.9 it is 5/5. The lowest qualifying threshold, 0.5, is chosen.
    confidences = [0.5] + [0.7] * 4 + [0.9] * 5
    correct = [True] + [True, True, True, False] + [True] * 5
    result = confidence_threshold(confidences, correct, floor=0.9, min_items=1)
    assert result.threshold == 0.5 and result.agreement == pytest.approx(0.9) and result.n_above == 10


def test_reliability_bins_known_by_construction():
    confidences = [0.1, 0.1, 0.25, 0.3, 0.6, 0.9, 1.0, 1.0]
    correct = [True, False, True, True, False, True, True, False]
    result = reliability_bins(confidences, correct, bins=4)
    assert [(b.low, b.high) for b in result] == [(0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0)]
    assert [b.n for b in result] == [2, 2, 1, 3]  # 0.25 opens the second bin; 1.0 is in the last
    assert result[0] == ReliabilityBin(low=0.0, high=0.25, n=2, mean_confidence=pytest.approx(0.1),
                                       accuracy=0.5)
    assert result[1].mean_confidence == pytest.approx(0.275) and result[1].accuracy == 1.0
    assert result[2].accuracy == 0.0
    assert result[3].mean_confidence == pytest.approx(2.9 / 3)
    assert result[3].accuracy == pytest.approx(2 / 3)


def test_reliability_bins_edges_and_empty_bins():
    result = reliability_bins([0.3, 0.7, 0.0], [True, True, False], bins=10)
    assert len(result) == 10
    assert [b.n for b in result] == [1, 0, 0, 1, 0, 0, 0, 1, 0, 0]  # 0.3 in [0.3, 0.4), 0.7 in [0.7, 0.8)
    assert result[1].mean_confidence is None and result[1].accuracy is None
    assert result[9].high == 1.0
    assert sum(b.n for b in reliability_bins(np.linspace(0, 1, 101).tolist(), [True] * 101)) == 101


# --------------------------------------------------------------------------------------------------
# PandaLM: reproduce the published figures through this module


def _pandalm() -> dict[str, list]:
    with PANDALM.open(newline="") as f:
        rows = list(csv.DictReader(f))
    columns = ("annotator1", "annotator2", "annotator3", "gpt35", "pandalm7b")
    return {c: [int(r[c]) for r in rows] for c in columns}


def test_pandalm_published_figures():
    data = _pandalm()
    annotators = [data["annotator1"], data["annotator2"], data["annotator3"]]
    gold = [majority(votes) for votes in zip(*annotators)]
    assert None not in gold  # no item has three different labels
    assert Counter(gold) == {0: 105, 1: 422, 2: 472}

    gpt = classification_metrics(gold, data["gpt35"], labels=[0, 1, 2])
    assert gpt.n == 999
    assert round(gpt.accuracy, 4) == 0.7107
    assert round(gpt.macro_precision, 4) == 0.5879
    assert round(gpt.macro_recall, 4) == 0.5736
    assert round(gpt.macro_f1, 4) == 0.5755

    kappas = pairwise_kappa(annotators, labels=[0, 1, 2])
    assert {pair: round(k, 3) for pair, k in kappas.items()} == \
        {(0, 1): 0.852, (0, 2): 0.879, (1, 2): 0.862}

    alpha = krippendorff_alpha(annotators, level="nominal", values=[0, 1, 2])
    assert min(kappas.values()) - 0.05 <= alpha <= max(kappas.values()) + 0.05

    pandalm = classification_metrics(gold, data["pandalm7b"], labels=[0, 1, 2])
    assert 0.5 <= pandalm.accuracy <= 1
    print(f"\nPandaLM: gpt-3.5 accuracy {gpt.accuracy:.4f}, macro P/R/F1 {gpt.macro_precision:.4f}/"
          f"{gpt.macro_recall:.4f}/{gpt.macro_f1:.4f}; kappas "
          f"{[round(k, 3) for k in kappas.values()]}; alpha {alpha:.3f}; "
          f"PandaLM-7B accuracy {pandalm.accuracy:.4f}, macro F1 {pandalm.macro_f1:.4f}")


# --------------------------------------------------------------------------------------------------
# loud errors


@pytest.mark.parametrize("call, message", [
    (lambda: classification_metrics(["a", "b"], ["a"], labels=["a", "b"]), "differ in length"),
    (lambda: classification_metrics(["a"], ["c"], labels=["a", "b"]), r"predicted\[0\] = 'c'"),
    (lambda: classification_metrics(["x"], ["a"], labels=["a", "b"]), r"gold\[0\] = 'x'"),
    (lambda: classification_metrics([1], ["1"], labels=[1, 2]), r"predicted\[0\] = '1'"),
    (lambda: classification_metrics([], [], labels=["a", "b"]), "empty"),
    (lambda: classification_metrics(["a"], ["a"], labels=[]), "labels is empty"),
    (lambda: classification_metrics(["a"], ["a"], labels=["a"]), "at least two"),
    (lambda: classification_metrics(["a"], ["a"], labels=["a", "b", "a"]), "duplicate"),
    (lambda: classification_metrics(["a"], ["a"], labels="ab"), "single string"),
    (lambda: classification_metrics(["a"], ["a"], labels={"a", "b"}), "ordered"),
    (lambda: classification_metrics(["a"], ["a"], labels=["a", "b"], positive="c"), "positive"),
    (lambda: classification_metrics([0.0, float("nan")], [0.0, 1.0], labels=[0.0, 1.0]), "NaN"),
    (lambda: f1_interval(["a"], ["a", "b"], positive="a", labels=["a", "b"]), "differ in length"),
    (lambda: f1_interval([], [], positive="a", labels=["a", "b"]), "empty"),
    (lambda: f1_interval(["a"], ["z"], positive="a", labels=["a", "b"]), "not one of labels"),
    (lambda: bootstrap_interval(0, lambda idx: 1.0), "n_items"),
    (lambda: bootstrap_interval(5, lambda idx: 1.0, n_resamples=0), "n_resamples"),
    (lambda: bootstrap_interval(5, lambda idx: 1.0, confidence=1.5), "confidence"),
    (lambda: krippendorff_alpha([[1, 2], [1]], level="nominal", values=[1, 2]), "differ in length"),
    (lambda: krippendorff_alpha([], level="nominal", values=[1, 2]), "empty"),
    (lambda: krippendorff_alpha([[], []], level="nominal", values=[1, 2]), "no items"),
    (lambda: krippendorff_alpha([[1, 3], [1, 2]], level="nominal", values=[1, 2]), "not one of values"),
    (lambda: krippendorff_alpha([[1, float("nan")], [1, 2]], level="nominal", values=[1, 2]),
     "use None"),
    (lambda: krippendorff_alpha([[1, 2], [1, 2]], level="interval", values=[1, 2]), "level"),
    (lambda: pairwise_kappa([[1, 2], [1, 2, 1]], labels=[1, 2]), "differ in length"),
    (lambda: pairwise_kappa([[1, 2], [1, 5]], labels=[1, 2]), r"ratings\[1\]\[1\] = 5"),
    (lambda: pairwise_kappa([[1, 2], [1, 2]], labels=[1, 2], weights="linear"), "weights"),
    (lambda: confidence_threshold([0.5, 0.6], [True], floor=0.9), "differ in length"),
    (lambda: confidence_threshold([], [], floor=0.9), "empty"),
    (lambda: confidence_threshold([0.5], [1], floor=0.9), "not a boolean"),
    (lambda: confidence_threshold([0.5], [True], floor=90), "floor"),
    (lambda: confidence_threshold([float("nan")], [True], floor=0.9), "finite"),
    (lambda: confidence_threshold([0.5], [True], floor=0.9, min_items=0), "min_items"),
    (lambda: reliability_bins([0.5, 0.6], [True], bins=10), "differ in length"),
    (lambda: reliability_bins([], []), "empty"),
    (lambda: reliability_bins([1.2], [True]), r"outside \[0, 1\]"),
    (lambda: reliability_bins([0.5], [True], bins=0), "bins"),
])
def test_loud_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
