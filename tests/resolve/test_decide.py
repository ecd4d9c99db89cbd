"""Final decisions (judging.resolve.decide): people outvote the AI, ties wait for review, only
trusted criteria are decided by the AI, criteria that do not apply say so."""

from __future__ import annotations

from pathlib import Path

from judging.calibrate.run import calibrate_run
from judging.resolve.decide import resolve_run
from tests.conftest import RUBRICS
from tests.constructed import JUDGE, _claims, _judgment, _label, _run


def test_resolve_rules(tmp_path: Path, verdict_rubric) -> None:
    a, b, c, d = _claims(4)
    answers = {"verdict_consistent": (True, 0.9), "scale_disclosed": (True, 0.9),
               "cites_evidence": (False, 0.9), "value_in_logs": (True, 0.9),
               "justification_quality": (4, 0.9)}
    judgments = [_judgment(verdict_rubric, claim, answers) for claim in (a, b, c, d)]
    labels = [
        # a: people outvote the AI on cites_evidence (2 yes to 1 no)
        _label(verdict_rubric, a, "cites_evidence", True, annotator="h1"),
        _label(verdict_rubric, a, "cites_evidence", True, annotator="h2"),
        _label(verdict_rubric, a, "cites_evidence", False, annotator="h3"),
        # b: people split evenly on cites_evidence
        _label(verdict_rubric, b, "cites_evidence", True, annotator="h1"),
        _label(verdict_rubric, b, "cites_evidence", False, annotator="h2"),
    ]
    run = _run(tmp_path, judgments, labels)
    # Calibrate so that some criteria are trusted: write an artifact by hand from a run where the
    # judge is perfect on verdict_consistent, scale_disclosed, cites_evidence, value_in_logs.
    perfect, perfect_labels = [], []
    for i, claim in enumerate(_claims(60)):
        values = {cid: (i % 2 == 0, 0.9) for cid in ("verdict_consistent", "scale_disclosed",
                                                     "value_in_logs", "cites_evidence")}
        perfect.append(_judgment(verdict_rubric, claim, values))
        perfect_labels += [_label(verdict_rubric, claim, cid, i % 2 == 0) for cid in values]
    calibration = tmp_path / "calibration"
    calibrate_run(_run(tmp_path / "cal", perfect, perfect_labels), out=calibration,
                  rubrics_dir=RUBRICS)
    decisions, finals = resolve_run(run, calibration_dir=calibration, rubrics_dir=RUBRICS)
    by_claim = {str(dec.claim): {x.criterion: x for x in dec.answers} for dec in decisions}
    # human majority wins over the AI
    cites_a = by_claim[str(a)]["cites_evidence"]
    assert cites_a.value is True and cites_a.decided_by == "humans"
    assert cites_a.who == ["h1", "h2"]
    # a tie is pending review
    cites_b = by_claim[str(b)]["cites_evidence"]
    assert cites_b.status == "pending" and "split evenly" in cites_b.reason
    # a trusted criterion is decided by the AI
    trusted = by_claim[str(c)]["verdict_consistent"]
    assert trusted.decided_by == "ai" and trusted.who == [JUDGE] and trusted.value is True
    # an untrusted one (justification_quality: never calibrated) stays pending
    quality = by_claim[str(c)]["justification_quality"]
    assert quality.status == "pending" and "not trusted" in quality.reason
    # criteria that do not apply
    assert by_claim[str(c)]["proof_for_falsified"].status == "not_applicable"
    outcomes = {str(f.claim): f for f in finals}
    assert outcomes[str(c)].outcome == "pending" and outcomes[str(c)].upheld == "pending"
    assert (run / "decisions.jsonl").is_file() and (run / "final.jsonl").is_file()
    # Without any calibration nothing is decided by the AI.
    decisions, _ = resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    assert not [x for dec in decisions for x in dec.answers if x.decided_by == "ai"]
