"""Test-retest agreement: the metrics (hand-worked and against the study's own formula) and
`judging calibrate --table FILE --retest A,B` on the real ICML retest table (tests/data/
icml-judge-retest, MIT, see its README), which must give the study's published figures."""

from __future__ import annotations

import csv
import doctest
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from judging.calibrate import metrics
from judging.calibrate.metrics import (
    cluster_bootstrap_interval,
    corrected_rate,
    random_baseline,
    rate_interval,
    retest_agreement,
    rogan_gladen,
)
from judging.calibrate.retest import retest_table
from judging.cli import main
from judging.errors import CalibrationError
from tests.conftest import DATA

ICML = DATA / "icml-judge-retest" / "arm_per_claim_verdicts.csv"
LABELS = ["verified", "falsified", "toy", "inconclusive"]


def test_the_metrics_doctests_hold() -> None:
    failures, tried = doctest.testmod(metrics, raise_on_error=False)
    assert tried >= 8 and failures == 0


def _alpha_by_hand(pairs: list[tuple[str, str]]) -> float:
    # Krippendorff's nominal alpha for two coders and no missing value, written out (the study's
    # analysis/analyze_arm.py computes it the same way).
    n = len(pairs)
    observed = sum(a != b for a, b in pairs) / n
    counts: dict[str, int] = {}
    for pair in pairs:
        for value in pair:
            counts[value] = counts.get(value, 0) + 1
    total = 2 * n
    expected = total / (total - 1) * (1 - sum((c / total) ** 2 for c in counts.values()))
    return 1 - observed / expected


def test_retest_agreement_hand_worked() -> None:
    first = ["yes", "yes", "no", "no", "yes", None]
    second = ["yes", "no", "no", "yes", "yes", "no"]
    r = retest_agreement(first, second, labels=["yes", "no"], n_resamples=300)
    assert (r.n, r.missing, r.disagreements) == (5, 1, 2)
    assert r.disagreement == pytest.approx(0.4) and r.agreement == pytest.approx(0.6)
    assert r.flips == {"no -> yes": 1, "yes -> no": 1}
    pairs = [("yes", "yes"), ("yes", "no"), ("no", "no"), ("no", "yes"), ("yes", "yes")]
    assert r.alpha == pytest.approx(_alpha_by_hand(pairs))
    assert r.clusters is None and r.cluster_disagreements == {}


def test_retest_agreement_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        retest_agreement(["yes"], ["yes", "no"], labels=["yes", "no"])
    with pytest.raises(ValueError, match="not one of"):
        retest_agreement(["maybe"], ["yes"], labels=["yes", "no"])
    with pytest.raises(ValueError, match="no item has both"):
        retest_agreement([None], ["yes"], labels=["yes", "no"])
    with pytest.raises(ValueError, match="clusters"):
        retest_agreement(["yes"], ["yes"], labels=["yes", "no"], clusters=["a", "b"])


def test_cluster_bootstrap_draws_whole_clusters() -> None:
    # Five clusters of two items, each all ones or all zeros: every resample's mean is k/5.
    values = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    seen = set()

    def mean(idx: np.ndarray) -> float:
        seen.add(round(float(values[idx].mean()), 6))
        return float(values[idx].mean())

    low, high = cluster_bootstrap_interval(list("aabbccddee"), mean, n_resamples=400)
    assert seen <= {0.0, 0.2, 0.4, 0.6, 0.8, 1.0} and low < 0.6 < high
    # two clusters are too few for an interval, however many items they hold
    assert cluster_bootstrap_interval(["a", "a", "a", "b", "b", "b"], mean) is None
    with pytest.raises(ValueError, match="every item needs a cluster"):
        cluster_bootstrap_interval(["a", None], mean)


def test_rogan_gladen_and_the_corrected_rate_match_a_hand_computation() -> None:
    # 30 of 100 judged claims pass; against people the judge passed 8 of 10 true passes and
    # failed 18 of 20 true fails: Se 0.8, Sp 0.9, true rate (0.3 + 0.9 - 1) / (0.8 + 0.9 - 1).
    assert rogan_gladen(0.3, sensitivity=0.8, specificity=0.9) == pytest.approx(0.2 / 0.7)
    r = corrected_rate(30, 100, true_positives=8, false_negatives=2, true_negatives=18,
                       false_positives=2, n_resamples=4000)
    assert (r.sensitivity, r.specificity) == (0.8, 0.9)
    assert r.corrected == pytest.approx(2 / 7) and not r.clipped
    low, high = r.interval
    assert low < 2 / 7 < high
    # The interval carries the calibration's uncertainty: wider than the observed rate's alone.
    obs_low, obs_high = rate_interval(30, 100)
    assert high - low > obs_high - obs_low
    # A bigger calibration set with the same rates narrows it.
    big = corrected_rate(30, 100, true_positives=80, false_negatives=20, true_negatives=180,
                         false_positives=20, n_resamples=4000)
    assert big.corrected == pytest.approx(2 / 7)
    assert big.interval[1] - big.interval[0] < high - low
    # Clipped at 0 and said so; no estimate from a judge no better than chance.
    clipped = corrected_rate(2, 100, true_positives=8, false_negatives=2, true_negatives=18,
                             false_positives=2)
    assert clipped.corrected == 0.0 and clipped.clipped
    assert rogan_gladen(0.4, sensitivity=0.5, specificity=0.4) is None
    assert corrected_rate(3, 10, true_positives=0, false_negatives=0, true_negatives=5,
                          false_positives=0).corrected is None


def test_random_baseline_and_rate_interval() -> None:
    b = random_baseline(["pass"] * 3 + ["fail"] * 7, labels=["pass", "fail"], positive="pass")
    assert b.accuracy == pytest.approx(0.3 ** 2 + 0.7 ** 2)
    assert (b.precision, b.recall, b.f1) == (pytest.approx(0.3),) * 3
    assert b.true_negative_rate == pytest.approx(0.7) and b.kappa == 0.0
    assert b.macro_f1 == pytest.approx(0.5)
    four = random_baseline(["verified", "toy", "toy", "inconclusive"], labels=LABELS)
    assert four.accuracy == pytest.approx(0.25 ** 2 * 2 + 0.5 ** 2) and four.f1 is None
    assert rate_interval(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    with pytest.raises(ValueError, match="exceed"):
        rate_interval(3, 2)


def test_the_real_retest_table_gives_the_published_figures() -> None:
    report = retest_table(ICML, first="rep1", second="rep2", cluster="space_id",
                          against=["archived"], n_resamples=4000, seed=20260912)
    r = report.retest
    assert (r.n, r.disagreements) == (1225, 103)
    assert round(100 * r.disagreement, 2) == 8.41
    assert round(r.alpha, 4) == 0.8737
    # The study's cluster bootstrap: 4,000 resamples of logbooks, seed 20260912, file order.
    assert [round(v, 4) for v in r.alpha_interval] == [0.8336, 0.9086]
    assert [round(100 * v, 2) for v in r.disagreement_interval] == [6.08, 11.03]
    assert r.clusters == 236 and len(r.cluster_disagreements) == 53
    assert sum(n for _, n in r.cluster_disagreements.values()) == 103
    rows = list(csv.DictReader(ICML.open()))
    carriers = {row["space_id"] for row in rows if row["rep1"] != row["rep2"]}
    assert set(r.cluster_disagreements) == carriers
    archive = report.against[0]
    assert archive.result.disagreements == 200
    assert round(100 * archive.result.disagreement, 2) == 16.33
    assert round(archive.ratio, 3) == 1.942
    low, high = archive.ratio_interval
    assert 1.3 < low < 1.6 and 2.5 < high < 2.9  # the study: [1.435, 2.688]


def test_default_bootstrap_is_close_to_the_published_interval() -> None:
    report = retest_table(ICML, first="rep1", second="rep2", cluster="space_id")
    low, high = report.retest.alpha_interval
    assert abs(low - 0.8336) < 0.01 and abs(high - 0.9086) < 0.01
    # Items resampled as if independent: a narrower interval than the logbooks warrant.
    unclustered = retest_table(ICML, first="rep1", second="rep2").retest.alpha_interval
    assert unclustered[1] - unclustered[0] < high - low


def test_cli_table_retest_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "cal"
    result = CliRunner().invoke(main, [
        "calibrate", "--table", str(ICML), "--retest", "rep1,rep2", "--cluster", "space_id",
        "--against", "archived", "--bootstrap", "4000", "--seed", "20260912", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "8.41%" in result.output and "0.8737" in result.output
    assert "16.33%" in result.output and "183 of 236 space_id fully stable" in result.output
    folder = out / "reports" / "table" / "retest-rep1-rep2"
    payload = json.loads((folder / "report.json").read_text())
    assert payload["retest"]["disagreements"] == 103
    assert payload["retest"]["alpha_interval"][0] == pytest.approx(0.8336, abs=5e-5)
    text = (folder / "report.md").read_text()
    assert "Which space_id carry the disagreements" in text
    assert "| toy -> verified | 35 |" in text


def test_table_retest_errors_are_one_line(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("item,a,b,logbook\n1,yes,yes,x\n2,no,yes,\n")
    with pytest.raises(CalibrationError, match="no column c"):
        retest_table(table, first="a", second="c")
    with pytest.raises(CalibrationError, match="no logbook"):
        retest_table(table, first="a", second="b", cluster="logbook")
    result = CliRunner().invoke(main, ["calibrate", "--table", str(table), "--retest", "a",
                                       "--out", str(tmp_path / "c")])
    assert result.exit_code != 0 and "two columns" in result.output
