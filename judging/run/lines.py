"""Building judgment lines: the work items of a run (claim x rubric x judge x sample), their input
fingerprints, complete answers per rubric, provenance, and the lines of claims that could not be
loaded."""

from __future__ import annotations

from dataclasses import dataclass

from judging.hashing import content_hash, file_sha256, hash_view
from judging.judges import Judge
from judging.models import (
    Agent,
    Aggregate,
    AnswerStatus,
    Claim,
    ClaimInput,
    ClaimProblem,
    CriterionAnswer,
    Evidence,
    Flag,
    Judgment,
    LineStatus,
    Provenance,
    Signal,
    SubmissionHeader,
    TableValue,
    Tolerance,
)
from judging.rubrics import Rubric, aggregate, not_applicable, rule_not_applicable
from judging.run.measure import Measurement
from judging.rundir import LineKey, utc_now
from judging.version import code_version

LOADER = "loader"


@dataclass
class WorkItem:
    claim: ClaimInput
    rubric: Rubric
    judge: Judge
    sample: int
    swapped: bool
    input_hash: str

    @property
    def key(self) -> LineKey:
        rubric = self.rubric.ref()
        return LineKey(str(self.claim.key), f"{rubric}#{rubric.hash}", self.judge.spec,
                       self.sample, self.swapped, self.input_hash)


#: The fields of each hashed model when input hashes were first recorded: they enter input hashes
#: as they are, defaults included. Never add to these lists: a field added to a model later is
#: hashed only once it is set (`hash_view`), so a resume does not re-judge finished work.
HASHED_ALWAYS: dict[type, frozenset[str]] = {
    SubmissionHeader: frozenset({"submission_id", "paper_id", "paper_title", "agent",
                                 "human_help"}),
    Agent: frozenset({"name", "model"}),
    Claim: frozenset({"claim_id", "kind", "source", "statement", "published_figure",
                      "reproduced_figure", "reported_value", "reproduced_value", "values",
                      "tolerance", "verdict", "justification", "scale_note", "evidence"}),
    Tolerance: frozenset({"absolute", "relative"}),
    TableValue: frozenset({"name", "reported", "reproduced", "tolerance"}),
    Evidence: frozenset({"script", "logs", "proof_script", "problem_kind", "problem_note"}),
    Flag: frozenset({"name", "detail"}),
    ClaimProblem: frozenset({"submission_id", "claim_id", "index", "manifest", "line", "reason",
                             "kind", "verdict"}),
}


def claim_fingerprint(claim: ClaimInput) -> dict[str, object]:
    """Everything about a claim that a judgment depends on, file contents included. ClaimInput
    fields enter by name (not its schema version); a field added later to the submission, the
    claim or a flag is left out while unset (`HASHED_ALWAYS`)."""
    files = {"published": claim.published_path, "reproduced": claim.reproduced_path,
             "participant_reference": claim.participant_reference_path, **claim.evidence_paths}
    # figure data files were added later: they enter only when the claim has them
    files |= {role: path for role, path in (("published_data", claim.published_data_path),
                                            ("reproduced_data", claim.reproduced_data_path))
              if path is not None}
    return {
        "key": str(claim.key),
        "submission": hash_view(claim.submission, HASHED_ALWAYS),
        "claim": hash_view(claim.claim, HASHED_ALWAYS),
        "reference": claim.reference.value,
        "flags": [hash_view(f, HASHED_ALWAYS) for f in claim.flags],
        "files": {role: (file_sha256(path) if path is not None else None)
                  for role, path in sorted(files.items())},
    }


def samples_for(judge: Judge, requested: int) -> int:
    # The offline judge is deterministic: more samples would only repeat the same answers.
    return 1 if judge.model is None else requested


def line_provenance(judge: Judge | None, rubric: Rubric | None, **extra: object) -> Provenance:
    return Provenance(
        judge=judge.spec if judge is not None else LOADER,
        model=judge.model if judge is not None else None,
        settings=dict(judge.settings) if judge is not None else {},
        template_hash=judge.template_hash(rubric) if judge is not None and rubric else None,
        timestamp=utc_now(), code_version=code_version(), **extra)  # type: ignore[arg-type]


def problem_judgment(problem: ClaimProblem, *, run_id: str, paper_id: str | None) -> Judgment:
    return Judgment(
        run_id=run_id, claim=problem.key, paper_id=paper_id, kind=problem.kind,
        verdict=problem.verdict, rubric=None, judge=LOADER, sample=0,
        input_hash=content_hash({"problem": hash_view(problem, HASHED_ALWAYS,
                                                       exclude={"manifest"})}),
        status=LineStatus.error,
        reason=f"claim could not be loaded: {problem.reason}"
               + (f" ({problem.manifest}:{problem.line})" if problem.line else ""),
        provenance=line_provenance(None, None))


def unscored_all(rubric: Rubric, reason: str) -> list[CriterionAnswer]:
    return [CriterionAnswer(criterion_id=c.id, status=AnswerStatus.unscored, reason=reason)
            for c in rubric.criteria]


def complete_answers(rubric: Rubric, claim: ClaimInput, answers: list[CriterionAnswer],
                     signals: dict[str, Signal] | None = None) -> list[CriterionAnswer]:
    """One answer per rubric criterion, in rubric order: criteria that do not apply to the claim
    (by its kind and verdict, or by their rule on `signals`: no re-run to read) are not
    applicable, criteria a judge left out are unscored (never silently dropped)."""
    given = {a.criterion_id: a for a in answers}
    complete = []
    no_verdict = claim.claim.verdict is None
    for criterion in rubric.criteria:
        if no_verdict and criterion.applies_if is not None \
                and criterion.applies_if.verdict is not None:
            # Which verdict-dependent criteria apply is unknown without a verdict: unscored.
            complete.append(CriterionAnswer(
                criterion_id=criterion.id, status=AnswerStatus.unscored,
                reason="the participant's verdict was not found: "
                       + claim.claim.absent.get("verdict", "none given")))
        elif not criterion.applies_to(claim.claim):
            complete.append(not_applicable(criterion))
        elif signals is not None and (
                unfit := rule_not_applicable(criterion, claim, signals)) is not None:
            complete.append(unfit)
        elif criterion.id in given:
            complete.append(given[criterion.id])
        else:
            complete.append(CriterionAnswer(criterion_id=criterion.id,
                                            status=AnswerStatus.unscored,
                                            reason="the judge gave no answer"))
    return complete


def build_judgment(item: WorkItem, *, run_id: str, measurement: Measurement,
                   answers: list[CriterionAnswer], status: LineStatus, reason: str | None,
                   final: bool = True, settings_used: dict | None = None,
                   **provenance: object) -> Judgment:
    claim = item.claim
    answers = complete_answers(item.rubric, claim, answers, measurement.signals)
    agg: Aggregate = aggregate(item.rubric, answers)
    record = line_provenance(item.judge, item.rubric, **provenance)
    if settings_used:
        record.settings.update(settings_used)
    return Judgment(
        run_id=run_id, claim=claim.key, paper_id=claim.submission.paper_id, kind=claim.claim.kind,
        verdict=claim.claim.verdict, reference=claim.reference, rubric=item.rubric.ref(),
        judge=item.judge.spec, sample=item.sample, swapped=item.swapped,
        input_hash=item.input_hash, final=final, status=status, reason=reason, answers=answers,
        aggregate=agg, signals=measurement.signals, flags=[*claim.flags, *measurement.flags],
        artifacts=measurement.artifacts, provenance=record)
