"""The claim's final verdict (verdict-justification 1.2.0's own_verdict): human majority, else
the AI where a calibration trusts it, else pending; samples that disagree go to a person; the
categorical criterion is calibrated with a confusion matrix and kappa."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judging.calibrate.run import calibrate_run
from judging.models import OWN_VERDICT, AnswerStatus, CriterionAnswer
from judging.resolve import write_leaderboard
from judging.resolve.decide import resolve_run
from judging.rubrics import RubricLibrary
from tests.conftest import RUBRICS
from tests.constructed import JUDGE, _claims, _judgment, _label, _run

VERDICTS = ["verified", "falsified", "toy", "inconclusive"]


@pytest.fixture(scope="module")
def own_rubric():
    return RubricLibrary(RUBRICS).load("verdict-justification@1.2.0")


def _calibrated(tmp_path: Path, rubric) -> Path:
    """A calibration where the judge's own verdict agrees with people on 60 claims."""
    judgments, labels = [], []
    for i, claim in enumerate(_claims(60)):
        verdict = VERDICTS[i % 4]
        judgments.append(_judgment(rubric, claim, {OWN_VERDICT: (verdict, 0.9)}))
        labels.append(_label(rubric, claim, OWN_VERDICT, verdict))
    out = tmp_path / "calibration"
    (result,) = calibrate_run(_run(tmp_path / "cal", judgments, labels), out=out,
                              rubrics_dir=RUBRICS)
    own = next(c for c in result.artifact.criteria if c.criterion == OWN_VERDICT)
    assert own.scale == "categorical" and own.decision == "trusted", own.reasons
    assert own.confusion_labels == VERDICTS and own.kappa == 1.0
    assert own.confusion == [[15, 0, 0, 0], [0, 15, 0, 0], [0, 0, 15, 0], [0, 0, 0, 15]]
    assert own.baseline.accuracy == pytest.approx(0.25) and own.f1 is None
    report = (result.report_dir / "report.md").read_text()
    assert "### own_verdict (categorical)" in report and "| gold \\ judge | verified |" in report
    return out


def test_final_verdict_is_human_else_trusted_ai_else_pending(tmp_path: Path, own_rubric) -> None:
    calibration = _calibrated(tmp_path, own_rubric)
    a, b, c, d = _claims(4)
    judgments = [_judgment(own_rubric, claim, {OWN_VERDICT: (value, 0.8)})
                 for claim, value in ((a, "verified"), (b, "toy"), (c, None), (d, "verified"))]
    judgments[1].answer(OWN_VERDICT).quote = "a 2k-step run of the paper's 20k"
    # d's answer aggregates four samples, two of which said otherwise: below the rubric's 0.67.
    judgments[3].answers = [CriterionAnswer(
        criterion_id=OWN_VERDICT, status=AnswerStatus.scored, value="verified", members=4,
        agreement=0.5, spread=0.5) if x.criterion_id == OWN_VERDICT else x
        for x in judgments[3].answers]
    labels = [_label(own_rubric, a, OWN_VERDICT, "falsified", annotator="h1"),
              _label(own_rubric, a, OWN_VERDICT, "falsified", annotator="h2")]
    run = _run(tmp_path / "run", judgments, labels)
    _, finals = resolve_run(run, calibration_dir=calibration, rubrics_dir=RUBRICS)
    final = {str(f.claim): f for f in finals}
    # people first
    assert (final[str(a)].final_verdict, final[str(a)].final_verdict_by) == ("falsified",
                                                                             "humans")
    # else the trusted AI, with the quote its verdict rests on
    assert (final[str(b)].final_verdict, final[str(b)].final_verdict_by) == ("toy", "ai")
    assert JUDGE in final[str(b)].final_verdict_note
    assert "2k-step run" in final[str(b)].final_verdict_note
    # else pending, with the reason
    assert final[str(c)].final_verdict == "pending" and final[str(c)].final_verdict_by is None
    assert "no answer" in final[str(c)].final_verdict_note
    assert final[str(d)].final_verdict == "pending"
    assert "4 samples disagree" in final[str(d)].final_verdict_note
    # beside it, whether the participant's verdict stands (here: nothing else decided)
    assert {f.upheld for f in finals} == {"pending"}
    # the leaderboard counts final verdicts beside the outcomes
    paths = write_leaderboard(run, calibration_dir=calibration, rubrics_dir=RUBRICS)
    rows = {row["submission"]: row for row in csv.DictReader(paths[0].open())}
    assert (rows["s0"]["final_falsified"], rows["s1"]["final_toy"]) == ("1", "1")
    assert rows["s2"]["final_verified"] == rows["s2"]["final_toy"] == "0"
    assert "Pass rates corrected for the judges' errors" in paths[2].read_text()
    # Without a calibration the AI decides nothing.
    _, finals = resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    final = {str(f.claim): f for f in finals}
    assert final[str(b)].final_verdict == "pending"
    assert "not trusted" in final[str(b)].final_verdict_note
    assert final[str(a)].final_verdict == "falsified"


def test_a_rubric_without_own_verdict_has_no_final_verdict(tmp_path: Path,
                                                           verdict_rubric) -> None:
    (claim,) = _claims(1)
    run = _run(tmp_path, [_judgment(verdict_rubric, claim, {"verdict_consistent": (True, 0.9)})],
               [])
    _, (final,) = resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    assert final.final_verdict is None and final.final_verdict_by is None


def test_categorical_answers_outside_the_categories_are_refused(own_rubric) -> None:
    own = own_rubric.criterion(OWN_VERDICT)
    assert own.valid_value("toy") and not own.valid_value("partial") and not own.valid_value(True)
    assert own.passes("verified") is None and not own.scored
