"""Building judgment lines: the work items of a run (claim x rubric x judge x sample), their input
fingerprints, complete answers per rubric, provenance, the lines of claims that could not be
loaded, and a panel's line from its members' lines (`Panels`: built from the lines in hand, the
store read only for members an earlier invocation finished)."""

from __future__ import annotations

from dataclasses import dataclass, field

from judging.hashing import content_hash, file_sha256, hash_view
from judging.judges import AGGREGATION, Judge, aggregate_panel, panel_name
from judging.models import (
    Agent,
    Aggregate,
    AnswerStatus,
    Artifacts,
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
from judging.rundir import Identity, LineKey, RunStore, line_key, utc_now
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

    @property
    def identity(self) -> Identity:
        """The store identity of the item's line (see `judging.rundir.identity`)."""
        return (str(self.claim.key), str(self.rubric.ref()), self.judge.spec, self.sample,
                self.swapped)


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


def withdrawal(line: Judgment, reason: str, *, run_id: str) -> Judgment:
    """A line that withdraws `line`'s identity (`Judgment.withdrawn`): the run's reader drops
    it; `line` stays in the file."""
    return line.model_copy(update={
        "run_id": run_id, "input_hash": content_hash({"withdrawn": line.input_hash,
                                                      "reason": reason}),
        "final": True, "status": LineStatus.unscored, "reason": reason, "withdrawn": reason,
        "answers": [], "aggregate": None, "signals": {}, "flags": [], "chart_trace": None,
        "artifacts": Artifacts(), "provenance": line_provenance(None, None)})


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


def _line(claim: ClaimInput, rubric: Rubric, *, run_id: str, judge: str, sample: int,
          swapped: bool, input_hash: str, answers: list[CriterionAnswer], status: LineStatus,
          reason: str | None, final: bool, measurement: Measurement, flags: list[Flag],
          provenance: Provenance) -> Judgment:
    answers = complete_answers(rubric, claim, answers, measurement.signals)
    agg: Aggregate = aggregate(rubric, answers)
    return Judgment(
        run_id=run_id, claim=claim.key, paper_id=claim.submission.paper_id, kind=claim.claim.kind,
        verdict=claim.claim.verdict, reference=claim.reference, rubric=rubric.ref(),
        judge=judge, sample=sample, swapped=swapped, input_hash=input_hash, final=final,
        status=status, reason=reason, answers=answers, aggregate=agg,
        signals=measurement.signals, flags=[*claim.flags, *measurement.flags, *flags],
        artifacts=measurement.artifacts,
        # The trace explains the chart signals: on the figure rubric's lines only, not copied
        # onto every line of the claim (readers take it from there: `claim_chart_trace`).
        chart_trace=measurement.chart_trace if rubric.reads_chart else None,
        provenance=provenance)


def build_judgment(item: WorkItem, *, run_id: str, measurement: Measurement,
                   answers: list[CriterionAnswer], status: LineStatus, reason: str | None,
                   final: bool = True, settings_used: dict | None = None,
                   **provenance: object) -> Judgment:
    record = line_provenance(item.judge, item.rubric, **provenance)
    if settings_used:
        record.settings.update(settings_used)
    return _line(item.claim, item.rubric, run_id=run_id, judge=item.judge.spec,
                 sample=item.sample, swapped=item.swapped, input_hash=item.input_hash,
                 answers=answers, status=status, reason=reason, final=final,
                 measurement=measurement, flags=[], provenance=record)


def panel_judgment(first: WorkItem, members: list[Judgment], *, run_id: str) -> Judgment:
    """The panel's line of a (claim, rubric) from its members' lines: one answer per criterion
    (`aggregate_panel`), named after its members, its input hash made of theirs."""
    answers, flags = aggregate_panel(first.rubric, members)
    name = panel_name(members)
    templates = {m.provenance.template_hash for m in members}
    scored = any(a.status is AnswerStatus.scored for a in answers)
    record = Provenance(
        judge=name, model=None,
        settings={"members": ", ".join(sorted(f"{m.judge}#{m.sample}"
                                              f"{'/swapped' if m.swapped else ''}"
                                              for m in members)),
                  "aggregation": AGGREGATION},
        template_hash=templates.pop() if len(templates) == 1 else None,
        timestamp=utc_now(), code_version=code_version())
    return _line(first.claim, first.rubric, run_id=run_id, judge=name, sample=0, swapped=False,
                 input_hash=content_hash(sorted(m.input_hash + m.status.value for m in members)),
                 answers=answers, status=LineStatus.scored if scored else LineStatus.unscored,
                 reason=None if scored else "no criterion was answered by the members",
                 final=all(m.final for m in members),
                 measurement=Measurement(signals=members[0].signals,
                                         artifacts=members[0].artifacts,
                                         chart_trace=members[0].chart_trace),
                 flags=flags, provenance=record)


@dataclass
class _Group:
    """The members of one panel (a claim and rubric judged by two or more), the lines of those
    judged in this invocation as they are written, and how many are still to come."""

    items: list[WorkItem]
    waiting: int
    lines: dict[int, Judgment] = field(default_factory=dict)


class Panels:
    """The panels of the work items in flight: once the last member of a (claim, rubric) judged
    by two or more is written, its panel line is built from the member lines in hand; the store
    is read only for members an earlier invocation finished."""

    def __init__(self, store: RunStore):
        self.store = store
        self._groups: dict[tuple[str, str], _Group] = {}
        self._item_group: dict[int, tuple[str, str]] = {}

    def add(self, items: list[WorkItem], pending: list[WorkItem]) -> list[Judgment]:
        """Register a batch's items, of which `pending` are to be judged now; gives the panel
        lines of groups that every member finished before (a resumed run)."""
        by_group: dict[tuple[str, str], list[WorkItem]] = {}
        for item in items:
            by_group.setdefault((str(item.claim.key), item.rubric.ref_name), []).append(item)
        waiting = {id(item) for item in pending}
        lines = []
        for name, group in by_group.items():
            if len(group) < 2:
                continue
            count = sum(1 for item in group if id(item) in waiting)
            if count == 0:
                lines += self._lines(_Group(group, 0))
                continue
            self._groups[name] = _Group(group, count)
            for item in group:
                if id(item) in waiting:
                    self._item_group[id(item)] = name
        return lines

    def written(self, item: WorkItem, line: Judgment) -> list[Judgment]:
        """A member's line was written: the panel line when it was the group's last."""
        name = self._item_group.pop(id(item), None)
        if name is None:
            return []
        group = self._groups[name]
        group.lines[id(item)] = line
        group.waiting -= 1
        if group.waiting:
            return []
        del self._groups[name]
        return self._lines(group)

    def _lines(self, group: _Group) -> list[Judgment]:
        earlier = [item for item in group.items if id(item) not in group.lines]
        stored = dict(zip(map(id, earlier),
                          self.store.newest_lines([item.identity for item in earlier])))
        members = [group.lines.get(id(item)) or stored[id(item)] for item in group.items]
        hashes = {item.input_hash for item in group.items}
        present = [m for m in members if m is not None and m.input_hash in hashes]
        if len(present) < 2:
            return []
        first = group.items[0]
        line = panel_judgment(first, present, run_id=self.store.info.run_id)
        return [] if self.store.has(line_key(line)) else [line]
