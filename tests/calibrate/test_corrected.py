"""Pass rates corrected for the judge's measured errors (Rogan–Gladen) on a run, from its
calibration: equal to the hand computation, shown in the calibration report."""

from __future__ import annotations

from pathlib import Path

import pytest

from judging.calibrate import corrected_rates
from judging.calibrate.run import calibrate_run
from tests.conftest import RUBRICS
from tests.constructed import _claims, _judgment, _label, _run


def test_the_run_pass_rate_is_corrected_as_by_hand(tmp_path: Path, verdict_rubric) -> None:
    # Calibration: 40 true passes of which the judge passes 36, 20 true fails of which it
    # fails 18: sensitivity 0.9, specificity 0.9.
    judgments, labels = [], []
    for i, claim in enumerate(_claims(60)):
        gold = i < 40
        judged = (i >= 4) if gold else (i >= 58)
        judgments.append(_judgment(verdict_rubric, claim, {"verdict_consistent": (judged, 0.9)}))
        labels.append(_label(verdict_rubric, claim, "verdict_consistent", gold))
    calibration = tmp_path / "calibration"
    (result,) = calibrate_run(_run(tmp_path / "cal", judgments, labels), out=calibration,
                              rubrics_dir=RUBRICS)
    c = next(c for c in result.artifact.criteria if c.criterion == "verdict_consistent")
    assert c.counts == {"true_positives": 36, "false_negatives": 4, "true_negatives": 18,
                        "false_positives": 2}
    assert (c.true_positive_rate, c.true_negative_rate) == (0.9, 0.9)
    # The calibrating run's own pass rate: 38 of 60 passed by the judge.
    assert c.corrected.observed == pytest.approx(38 / 60)
    assert c.corrected.corrected == pytest.approx((38 / 60 + 0.9 - 1) / 0.8)
    report = (result.report_dir / "report.md").read_text()
    assert "## Pass rates corrected for the judge's errors" in report
    assert "↳ chance: answers at the base rate" in report
    # Another run: the judge passes 55 of 100 claims. By hand: (0.55 + 0.9 - 1) / (0.9 + 0.9 - 1).
    other = [_judgment(verdict_rubric, claim, {"verdict_consistent": (i < 55, 0.9)})
             for i, claim in enumerate(_claims(100))]
    rows = corrected_rates(_run(tmp_path / "other", other, []), calibration_dir=calibration,
                           rubrics_dir=RUBRICS)
    (row,) = [r for r in rows if r.criterion == "verdict_consistent"]
    assert (row.rate.n, row.rate.passed) == (100, 55) and row.stale is None
    assert row.rate.corrected == pytest.approx(0.45 / 0.8)
    low, high = row.rate.interval
    assert low < 0.5625 < high
    # Another prompt template: the calibration is stale for those lines.
    stale = [_judgment(verdict_rubric, claim, {"verdict_consistent": (True, 0.9)},
                       template="sha256:" + "u" * 64) for claim in _claims(3)]
    (row,) = [r for r in corrected_rates(_run(tmp_path / "stale", stale, []),
                                         calibration_dir=calibration, rubrics_dir=RUBRICS)
              if r.criterion == "verdict_consistent"]
    assert "prompt template changed" in row.stale
