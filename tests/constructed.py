"""Judgments, labels and run directories built in code, for the calibration and resolve tests.

The names keep their leading underscore from when these helpers lived inside the test module.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from judging.hashing import content_hash
from judging.models import (
    AnswerStatus,
    ClaimKey,
    ConfidenceSource,
    CriterionAnswer,
    Judgment,
    Label,
    LineStatus,
    Provenance,
    RubricRef,
)
from judging.rubrics import aggregate
from judging.rundir.store import RunStore

JUDGE = "openai:test-judge"
TEMPLATE = "sha256:" + "t" * 64


def _judgment(rubric, claim: ClaimKey, answers: dict[str, tuple[bool | int | None, float]], *,
              judge: str = JUDGE, template: str = TEMPLATE, verdict: str = "verified") -> Judgment:
    items = []
    for criterion in rubric.criteria:
        if criterion.id not in answers:
            items.append(CriterionAnswer(criterion_id=criterion.id,
                                         status=AnswerStatus.unscored, reason="not asked"))
            continue
        value, confidence = answers[criterion.id]
        if value is None:
            items.append(CriterionAnswer(criterion_id=criterion.id,
                                         status=AnswerStatus.unscored, reason="unparseable"))
        else:
            items.append(CriterionAnswer(
                criterion_id=criterion.id, status=AnswerStatus.scored, value=value,
                passed=criterion.passes(value), rationale="r", confidence=confidence,
                confidence_source=ConfidenceSource.self_reported))
    return Judgment(
        run_id="r", claim=claim, paper_id="p", kind="number", verdict=verdict,
        rubric=rubric.ref(), judge=judge, input_hash=content_hash([str(claim), judge]),
        status=LineStatus.scored, answers=items, aggregate=aggregate(rubric, items),
        provenance=Provenance(judge=judge, model=judge.split(":")[-1], template_hash=template,
                              timestamp=datetime.now(UTC), code_version="t"))


def _label(rubric, claim: ClaimKey, criterion: str, value, *, annotator: str = "ann",
           blind: bool = True, rubric_hash: str | None = None) -> Label:
    ref = rubric.ref()
    if rubric_hash:
        ref = RubricRef(id=ref.id, version=ref.version, hash=rubric_hash)
    return Label(claim=claim, rubric=ref, criterion=criterion, value=value, annotator=annotator,
                 annotator_id=annotator, updated_at=datetime.now(UTC), blind=blind,
                 dataset="d", record_id="x")


def _run(tmp_path: Path, judgments: list[Judgment], labels: list[Label]) -> Path:
    store = RunStore.open(tmp_path / "run")
    store.write_info()
    for judgment in judgments:
        store.append(judgment)
    store.close()
    with (store.root / "labels.jsonl").open("w") as handle:
        for label in labels:
            handle.write(label.model_dump_json() + "\n")
    return store.root


def _claims(n: int) -> list[ClaimKey]:
    return [ClaimKey(submission_id=f"s{i % 7}", claim_id=f"p/c{i}") for i in range(n)]
