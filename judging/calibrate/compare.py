"""`judging calibrate --compare A,B`: two judges, or two rubric versions, side by side on the same
claims."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import judging.calibrate.metrics as agreement
from judging.calibrate.run import CalibrationResult, finite_or_none
from judging.errors import CalibrationError
from judging.models import AnswerStatus, Judgment
from judging.rundir import RunStore


@dataclass
class ComparisonRow:
    group: str
    """The rubric version (two judges compared) or the judge (two rubric versions)."""
    criterion: str
    both: int
    """Claims both sides answered (scored)."""
    agreement: float | None
    kappa: float | None
    left_f1: float | None
    right_f1: float | None
    """Each side's pass-class F1 against the human gold (None without labels)."""
    intervals: agreement.AgreementIntervals | None = None
    """Of `agreement` and `kappa` (none from fewer claims than an interval needs)."""


def _sides_are_rubric_versions(judgments: Sequence[Judgment], left: str, right: str) -> bool:
    """Whether `left` and `right` name rubric versions of the run (else judges of it). Told by
    what the run holds, not by the spelling of a spec: a judge of any backend (or a panel) and a
    rubric version are both named as the run records them."""
    judges = {j.judge for j in judgments}
    versions = {str(j.rubric) for j in judgments}
    kinds = []
    for spec in (left, right):
        if spec in versions:
            kinds.append(True)
        elif spec in judges:
            kinds.append(False)
        else:
            raise CalibrationError(f"--compare: {spec!r} is neither a judge nor a rubric "
                                   "version (id@version) of this run")
    if kinds[0] != kinds[1]:
        raise CalibrationError("--compare takes two judges or two rubric versions, not a mix")
    return kinds[0]


def compare_run(results: Sequence[CalibrationResult], run_dir: Path, left: str, right: str
                ) -> list[ComparisonRow]:
    """Side by side on the same claims, criterion by criterion: two judges on each rubric
    version they share, or two rubric versions (`id@version`) for each judge they share."""
    judged = [j for j in RunStore.open(run_dir, create=False).latest() if j.rubric is not None]
    by_rubric = _sides_are_rubric_versions(judged, left, right)
    lines: dict[tuple[str, str], dict[str, Judgment]] = defaultdict(dict)
    for judgment in judged:
        ref = str(judgment.rubric)
        side, group = (ref, judgment.judge) if by_rubric else (judgment.judge, ref)
        lines[(side, group)][str(judgment.claim)] = judgment
    artifacts = {((str(r.artifact.rubric), r.artifact.judge)
                  if by_rubric else (r.artifact.judge, f"{r.artifact.rubric.id}@"
                                                        f"{r.artifact.rubric.version}")):
                 r.artifact for r in results}
    groups = sorted({g for s, g in lines if s == left} & {g for s, g in lines if s == right})
    if not groups:
        raise CalibrationError(f"--compare: {left!r} and {right!r} share no "
                               f"{'judge' if by_rubric else 'rubric version'} in this run")

    def f1(key: tuple[str, str], cid: str) -> float | None:
        artifact = artifacts.get(key)
        return next((c.f1 for c in artifact.criteria if c.criterion == cid), None) \
            if artifact else None

    rows = []
    for group in groups:
        a_lines, b_lines = lines[(left, group)], lines[(right, group)]
        criteria = sorted({a.criterion_id for j in a_lines.values() for a in j.answers}
                          & {a.criterion_id for j in b_lines.values() for a in j.answers})
        for cid in criteria:
            pairs = []
            for claim in sorted(a_lines.keys() & b_lines.keys()):
                a, b = a_lines[claim].answer(cid), b_lines[claim].answer(cid)
                if a and b and a.status is AnswerStatus.scored and \
                        b.status is AnswerStatus.scored:
                    pairs.append((bool(a.passed), bool(b.passed)))
            metrics = agreement.classification_metrics(
                [x for x, _ in pairs], [y for _, y in pairs], labels=[True, False]) \
                if pairs else None
            rows.append(ComparisonRow(
                group=group, criterion=cid, both=len(pairs),
                agreement=metrics.accuracy if metrics else None,
                kappa=finite_or_none(metrics.kappa) if metrics else None,
                left_f1=f1((left, group), cid), right_f1=f1((right, group), cid),
                intervals=agreement.agreement_intervals(
                    [x for x, _ in pairs], [y for _, y in pairs], labels=[True, False])
                if pairs else None))
    return rows
