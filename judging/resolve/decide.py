"""Final decisions and the leaderboard.

Per claim key and criterion: the human majority where people reviewed it (a tie is pending), else
the AI's answer where a current calibration trusts that judge on that criterion, else pending.
Then each claim's outcome under each rubric (pass | fail | incomplete | pending), whether the
participant's verdict is upheld, and who decided.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from judging.atomic import atomic_lines
from judging.calibrate import (
    calibration_root,
    check_label_hashes,
    latest_responses,
    majority,
    read_labels,
    trusted_criteria,
)
from judging.models import (
    OVERALL_VERDICT,
    OWN_VERDICT,
    AnswerStatus,
    ClaimKey,
    ClaimKind,
    CriterionAnswer,
    Judgment,
    Label,
    RubricRef,
    StrictModel,
    Verdict,
    VersionedModel,
)
from judging.rubrics import Criterion, Rubric, RubricLibrary, Scale, aggregate
from judging.rundir import RunPaths, RunStore, drift_report, judged_claims, write_drift

FinalOutcome = Literal["pass", "fail", "incomplete", "pending"]
#: The flag of a reproduced figure that copies the published one (signals/measure.py).
COPY_FLAG = "copy"
FinalVerdict = Literal["verified", "falsified", "toy", "inconclusive", "pending"]


class FinalAnswer(StrictModel):
    criterion: str
    status: Literal["decided", "pending", "not_applicable"]
    value: bool | int | str | None = None
    passed: bool | None = None
    decided_by: Literal["humans", "construction", "ai"] | None = None
    """construction: labels derived from how an example was built, never called human."""
    who: list[str] = Field(default_factory=list)
    """The reviewers in the majority, or the judge."""
    quote: str | None = None
    """The AI's quote from the evidence, for a category it decided (its own verdict)."""
    reason: str | None = None
    """Why it is pending (a tie, an untrusted criterion, no answer)."""
    ai_value: bool | int | str | None = None
    """A pending criterion's answer from the AI, which no calibration trusts yet: it stands in
    provisionally (`ai_outcome`) until a human decides."""


class RubricDecision(VersionedModel):
    """A claim's final answers under one rubric version (a line of decisions.jsonl)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.decision/1"] = Field(default="judging.decision/1", alias="schema")
    claim: ClaimKey
    paper_id: str | None
    kind: ClaimKind | None
    verdict: Verdict | None
    rubric: RubricRef
    applies_to: Literal["figure", "verdict"]
    outcome: FinalOutcome
    score: float | None
    coverage: float
    answers: list[FinalAnswer]
    ai_outcome: FinalOutcome | None = None
    """While `outcome` is pending: the outcome with the AI's own answers standing in for the
    criteria nobody decided (pass | fail | incomplete), shown as "AI pass, awaiting review" and
    ranked provisionally; None once decided."""
    ai_judge: str | None
    ai_calibration: str | None
    """Why the AI's answers could not be used (no or stale calibration), if so."""
    human_overall: str | None = None
    """The reviewers' majority overall verdict (pass / fail / cannot_tell; None on an even
    split): it decides `outcome` with the reviewers' criteria (`review_outcome`)."""
    overall_by: list[str] = Field(default_factory=list)
    """The reviewers whose overall answer decided `outcome` (empty: the criteria decided)."""
    reviewers: int = 0
    """How many reviewers answered the overall question of this record."""
    reviewer_agreement: float | None = None
    """The share of those reviewers who gave the most common overall answer (None: nobody)."""
    conflict: str | None = None
    """A reviewer conflict, in words: the overall answer against the reviewers' own criteria,
    or reviewers split evenly on it. `outcome` is then the more cautious (fail: never a human
    pass over a human fail) until a further reviewer or an adjudicator settles it."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.decision/1 is the first version; lines written before versions were recorded
        # carry no "schema" and are read as /1 (same shape).
        return data


class ClaimDecision(VersionedModel):
    """A claim's final verdict across rubrics (a line of final.jsonl)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.final/1"] = Field(default="judging.final/1", alias="schema")
    claim: ClaimKey
    paper_id: str | None
    kind: ClaimKind | None
    verdict: Verdict | None
    outcomes: dict[str, FinalOutcome]
    """By rubric `id@version`."""
    outcome: FinalOutcome
    upheld: Literal["yes", "no", "pending"]
    """Whether the participant's verdict stands."""
    decided_by: list[str]
    ai_outcome: FinalOutcome | None = None
    """While `outcome` is pending or incomplete: the outcome across rubrics with the AI's own
    answers standing in for the criteria nobody decided (pass | fail | incomplete). The
    leaderboard ranks a claim by it provisionally ("AI pass, awaiting review") until a human
    decides; None once the outcome is decided."""
    ai_outcomes: dict[str, FinalOutcome] = Field(default_factory=dict)
    """By rubric `id@version`, for the rubrics whose outcome is pending or incomplete: the AI's
    outcome standing in (RubricDecision.ai_outcome)."""
    final_verdict: FinalVerdict | None = None
    """The claim's own verdict from the evidence (the verdict rubric's `own_verdict`): the
    reviewers' majority, else the AI's where a calibration trusts it, else pending. None when no
    rubric the claim was judged with asks for one (verdict-justification before 1.2.0)."""
    final_verdict_by: Literal["humans", "construction", "ai"] | None = None
    final_verdict_note: str | None = None
    """Why the final verdict is pending, or the quote the AI's verdict rests on."""
    conflicts: dict[str, str] = Field(default_factory=dict)
    """By rubric `id@version`: the reviewer conflicts (RubricDecision.conflict) that made an
    outcome fail until they are settled."""
    copied_figure: bool = False
    """The reproduced figure is flagged a copy of the published one (`copy`): the ranking
    counts the claim as a fail unless people decided it passes."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.final/1 is the first version; lines written before versions were recorded
        # carry no "schema" and are read as /1 (same shape).
        return data


def _label_index(labels: list[Label]) -> dict[tuple[str, str, str], dict[str, bool | int | str]]:
    index: dict[tuple[str, str, str], dict[str, bool | int | str]] = defaultdict(dict)
    for label in latest_responses(labels):
        key = (str(label.claim), str(label.rubric), label.criterion)
        index[key][label.annotator] = label.value
    return index


def _construction_annotators(labels: list[Label]) -> set[str]:
    return {label.annotator for label in labels if label.source == "construction"}


def decide(rubric: Rubric, judgment: Judgment | None, claim: ClaimKey, *,
           labels: dict[tuple[str, str, str], dict[str, bool | int | str]],
           trusted: set[str], ai_problem: str | None,
           construction: set[str] = frozenset()) -> list[FinalAnswer]:
    answers = []
    for criterion in rubric.criteria:
        ai = judgment.answer(criterion.id) if judgment is not None else None
        applicable = judgment is None or \
            criterion.applies(verdict=judgment.verdict, kind=judgment.kind)
        if not applicable or (ai is not None and ai.status is AnswerStatus.not_applicable):
            answers.append(FinalAnswer(criterion=criterion.id, status="not_applicable",
                                       reason=ai.reason if ai is not None else None))
            continue
        people = labels.get((str(claim), rubric.ref_name, criterion.id), {})
        if people:
            value = majority(list(people.values()))
            if value is None:
                counts = Counter(map(str, people.values()))
                answers.append(FinalAnswer(
                    criterion=criterion.id, status="pending",
                    reason="the reviewers split evenly ("
                           + ", ".join(f"{v}: {n}" for v, n in sorted(counts.items())) + ")"))
                continue
            who = sorted(name for name, v in people.items() if v == value)
            answers.append(FinalAnswer(
                criterion=criterion.id, status="decided", value=value,
                passed=criterion.passes(value),
                decided_by="construction" if set(who) <= construction else "humans", who=who))
            continue
        if ai is not None and ai.status is AnswerStatus.scored and ai.value is not None:
            unstable = samples_disagree(criterion, ai)
            if unstable is not None:
                answers.append(FinalAnswer(criterion=criterion.id, status="pending",
                                           ai_value=ai.value,
                                           reason=f"pending review: {unstable}"))
                continue
            if criterion.id in trusted:
                answers.append(FinalAnswer(
                    criterion=criterion.id, status="decided", value=ai.value,
                    passed=criterion.passes(ai.value), decided_by="ai", quote=ai.quote,
                    who=[judgment.judge]))  # type: ignore[union-attr]
                continue
            answers.append(FinalAnswer(
                criterion=criterion.id, status="pending", ai_value=ai.value,
                reason="pending review: the AI's answer is not trusted "
                       f"({ai_problem or 'calibration says so'})"))
            continue
        reason = "no answer: " + (ai.reason if ai is not None and ai.reason else
                                  "the AI could not answer")
        answers.append(FinalAnswer(criterion=criterion.id, status="pending",
                                   reason=f"pending review: {reason}"))
    return answers


def samples_disagree(criterion: Criterion, answer: CriterionAnswer) -> str | None:
    """Why an answer aggregated from samples (`run --samples K`) goes to a person: its samples
    agree less than the rubric's `reliability.samples_agree_at_least` (None: they agree enough,
    or the answer is no sample set, or the rubric sets no limit)."""
    limit = criterion.reliability.samples_agree_at_least if criterion.reliability else None
    if limit is None or answer.agreement is None or (answer.members or 0) < 2:
        return None
    if answer.agreement >= limit - 1e-9:
        return None
    return (f"the judge's {answer.members} samples disagree: {answer.agreement:.0%} gave the "
            f"answer, below the rubric's {limit:.0%}")


def final_verdict(decisions: list[RubricDecision]
                  ) -> tuple[FinalVerdict | None, str | None, str | None]:
    """The claim's own verdict from its verdict rubric's `own_verdict` answer: (verdict, who
    decided, note). Humans, else a trusted AI, else pending; None when no decision asks."""
    for decision in decisions:
        answer = next((a for a in decision.answers if a.criterion == OWN_VERDICT), None)
        if answer is None or answer.status == "not_applicable":
            continue
        if answer.status == "decided" and isinstance(answer.value, str):
            note = f"decided by {', '.join(answer.who)}" + \
                (f": “{answer.quote[:300]}”" if answer.quote else "")
            return answer.value, answer.decided_by, note  # type: ignore[return-value]
        return "pending", None, answer.reason
    return None, None, None


def write_served_drift(store: RunStore) -> int:
    """Write the run's drift.json (`rundir.drift_report` over its newest lines); the number of
    lines flagged."""
    report = drift_report(store)
    write_drift(store.root, report)
    return len(report.changes)


def rubric_outcome(rubric: Rubric, answers: list[FinalAnswer]) -> tuple[FinalOutcome, float | None,
                                                                         float]:
    as_answers = []
    for answer in answers:
        status = {"decided": AnswerStatus.scored, "pending": AnswerStatus.unscored,
                  "not_applicable": AnswerStatus.not_applicable}[answer.status]
        as_answers.append(CriterionAnswer(criterion_id=answer.criterion, status=status,
                                          value=answer.value))
    result = aggregate(rubric, as_answers)
    outcome: FinalOutcome = result.outcome.value  # type: ignore[assignment]
    if outcome == "incomplete" and any(a.status == "pending" for a in answers):
        outcome = "pending"
    return outcome, result.score, result.coverage


def provisional_outcome(rubric: Rubric, answers: list[FinalAnswer]) -> FinalOutcome:
    """The rubric's outcome with the AI's untrusted answers standing in for the pending criteria
    that have one (a criterion nobody answered stays unanswered: incomplete)."""
    standing_in = [a.model_copy(update={"status": "decided", "value": a.ai_value})
                   if a.status == "pending" and a.ai_value is not None else a for a in answers]
    outcome, _, _ = rubric_outcome(rubric, standing_in)
    return "incomplete" if outcome == "pending" else outcome


#: Who counts as a reviewer for the overall answer and the criteria it is checked against.
PEOPLE = ("humans", "construction")


@dataclass(frozen=True)
class ReviewOutcome:
    """What the reviewers' overall answers make of a rubric (`review_outcome`)."""

    outcome: FinalOutcome | None
    """pass | fail when the overall answer decides (or a conflict makes it fail); None: the
    criteria decide as they stand (no overall answer, or only "cannot tell")."""
    majority: str | None
    by: list[str]
    reviewers: int
    agreement: float | None
    conflict: str | None = None


def _extreme(criterion: Criterion, best: bool) -> bool | int:
    if criterion.scale is Scale.binary:
        return best
    return criterion.n_levels if best else 1


def criteria_outcome(rubric: Rubric, answers: list[FinalAnswer]) -> FinalOutcome | None:
    """What the reviewers' own criteria answers settle, whatever the others turn out to be:
    fail when even the best answers to the rest fail (a failed gate, a score that cannot reach
    the threshold), pass when even the worst pass; None when they settle nothing."""
    if not any(a.status == "decided" and a.decided_by in PEOPLE for a in answers):
        return None
    bounds = []
    for best in (True, False):
        filled = []
        for answer in answers:
            criterion = rubric.criterion(answer.criterion)
            if answer.status == "not_applicable" or not criterion.scored:
                status, value = AnswerStatus.not_applicable, None
            elif answer.status == "decided" and answer.decided_by in PEOPLE:
                status, value = AnswerStatus.scored, answer.value
            else:
                status, value = AnswerStatus.scored, _extreme(criterion, best)
            filled.append(CriterionAnswer(criterion_id=answer.criterion, status=status,
                                          value=value))
        bounds.append(aggregate(rubric, filled).outcome.value)
    if bounds[0] == "fail":
        return "fail"
    if bounds[1] == "pass":
        return "pass"
    return None


def review_outcome(rubric: Rubric, answers: list[FinalAnswer],
                   overall: dict[str, bool | int | str]) -> ReviewOutcome:
    """The reviewers' overall answers ("Overall, does the claim pass this rubric?") as a
    decision. The majority decides the rubric when the reviewers' criteria agree with it or
    settle nothing (an overall-only review decides); against their criteria, or with the
    reviewers split evenly between pass and fail, it is a conflict, decided fail (the more
    cautious: never a human pass over a human fail) until a further reviewer or an
    adjudicator makes a majority that the criteria do not contradict."""
    given = {who: str(value) for who, value in overall.items()}
    counts = Counter(given.values())
    agreement = round(max(counts.values()) / len(given), 3) if given else None
    votes = {who: v for who, v in given.items() if v in ("pass", "fail")}
    if not votes:
        majority_text = next(iter(counts)) if len(counts) == 1 else None
        return ReviewOutcome(outcome=None, majority=majority_text, by=[], reviewers=len(given),
                             agreement=agreement)
    tally_ = Counter(votes.values())
    names = lambda v: ", ".join(sorted(w for w, x in votes.items() if x == v))  # noqa: E731
    if tally_["pass"] == tally_["fail"]:
        return ReviewOutcome(
            outcome="fail", majority=None, by=sorted(votes), reviewers=len(given),
            agreement=agreement,
            conflict=f"the reviewers split on the overall verdict (pass: {names('pass')}; "
                     f"fail: {names('fail')})")
    majority_value = "pass" if tally_["pass"] > tally_["fail"] else "fail"
    by = sorted(w for w, v in votes.items() if v == majority_value)
    settled = criteria_outcome(rubric, answers)
    if settled is not None and settled != majority_value:
        said_no = [a.criterion for a in answers
                   if a.status == "decided" and a.decided_by in PEOPLE and a.passed is False]
        return ReviewOutcome(
            outcome="fail", majority=majority_value, by=by, reviewers=len(given),
            agreement=agreement,
            conflict=f"overall {majority_value} ({', '.join(by)}) but the reviewers' criteria "
                     f"make it {settled}" + (f" ({', '.join(said_no)}: no)" if said_no and
                                             settled == "fail" else ""))
    return ReviewOutcome(outcome=majority_value, majority=majority_value, by=by,  # type: ignore[arg-type]
                         reviewers=len(given), agreement=agreement)


def upheld(verdict: Verdict | None, decisions: list[RubricDecision]) -> Literal["yes", "no",
                                                                               "pending"]:
    """A verdict stands when its justification passes and, for figure claims, the figure
    rubrics agree with it (verified: the figure matches; falsified: it does not)."""
    if verdict is None or not decisions:
        return "pending"
    if any(d.outcome in ("pending", "incomplete") for d in decisions):
        return "pending"
    for decision in decisions:
        if decision.applies_to == "verdict" and decision.outcome != "pass":
            return "no"
        if decision.applies_to == "figure":
            if verdict is Verdict.verified and decision.outcome != "pass":
                return "no"
            if verdict is Verdict.falsified and decision.outcome != "fail":
                return "no"
    return "yes"


def combined(outcomes: list[FinalOutcome]) -> FinalOutcome:
    for worst in ("fail", "pending", "incomplete"):
        if worst in outcomes:
            return worst  # type: ignore[return-value]
    return "pass" if outcomes else "pending"


def resolve_run(run_dir: Path, *, labels_path: Path | None = None,
                calibration_dir: Path | None = None, rubrics_dir: Path | None = None
                ) -> tuple[list[RubricDecision], list[ClaimDecision]]:
    """`write_resolution`, with every decision also returned (small runs and tests)."""
    decisions: list[RubricDecision] = []
    finals: list[ClaimDecision] = []

    def keep(claim_decisions: list[RubricDecision], final: ClaimDecision) -> None:
        decisions.extend(claim_decisions)
        finals.append(final)

    write_resolution(run_dir, labels_path=labels_path, calibration_dir=calibration_dir,
                     rubrics_dir=rubrics_dir, on_claim=keep)
    return decisions, finals


def decide_run(run_dir: Path, *, labels_path: Path | None = None,
               calibration_dir: Path | None = None, rubrics_dir: Path | None = None
               ) -> tuple[list[RubricDecision], list[ClaimDecision]]:
    """The final decisions of a run, computed from its judgments, labels and calibrations and
    written nowhere (`write_resolution` writes them; the app shows them live)."""
    decisions: list[RubricDecision] = []
    finals: list[ClaimDecision] = []
    for claim_decisions, final in iter_decisions(run_dir, labels_path=labels_path,
                                                 calibration_dir=calibration_dir,
                                                 rubrics_dir=rubrics_dir):
        decisions.extend(claim_decisions)
        finals.append(final)
    return decisions, finals


@dataclass
class Resolution:
    """What `write_resolution` decided, counted."""

    claims: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    upheld: Counter[str] = field(default_factory=Counter)
    deciders: Counter[str] = field(default_factory=Counter)
    """Criteria (not n/a) by who decided them (`pending` when nobody did)."""
    final_verdicts: Counter[str] = field(default_factory=Counter)
    """Claims by final verdict (those whose rubrics ask for one)."""
    drift: int = 0
    """Lines served by another model or build than their judge's first calls."""
    conflicts: int = 0
    """Claims with a reviewer conflict (decided fail until it is settled)."""


def write_resolution(run_dir: Path, *, labels_path: Path | None = None,
                     calibration_dir: Path | None = None, rubrics_dir: Path | None = None,
                     on_claim: Callable[[list[RubricDecision], ClaimDecision], None] | None = None
                     ) -> Resolution:
    """Decide every claim of a run (one claim's lines in memory at a time, in claim key order)
    and write decisions.jsonl and final.jsonl, each replaced whole when all is decided; and
    drift.json, the lines served by another model or build than their judge's first calls
    (which no calibration made on the first trusts)."""
    store = RunStore.open(run_dir, create=False)
    summary = Resolution()
    summary.drift = write_served_drift(store)
    with atomic_lines(store.paths.decisions) as write_decision, \
            atomic_lines(store.paths.final) as write_final:
        for items, final in iter_decisions(run_dir, labels_path=labels_path,
                                           calibration_dir=calibration_dir,
                                           rubrics_dir=rubrics_dir):
            for decision in items:
                write_decision(decision)
            write_final(final)
            summary.claims += 1
            summary.outcomes[final.outcome] += 1
            summary.upheld[final.upheld] += 1
            if final.final_verdict is not None:
                summary.final_verdicts[final.final_verdict] += 1
            summary.conflicts += bool(final.conflicts)
            summary.deciders.update(a.decided_by or "pending" for d in items for a in d.answers
                                    if a.status != "not_applicable")
            if on_claim is not None:
                on_claim(items, final)
    store.close()
    return summary


def stale_decisions(run_dir: Path) -> str | None:
    """Why the run's final decisions (final.jsonl) no longer follow its inputs, with the command
    that brings them up to date; None when they are current. Every view read from final.jsonl
    (`judging leaderboard`, the report) says it rather than show old decisions as current."""
    paths = RunPaths(Path(run_dir))
    command = f"`judging resolve {run_dir}` (or `judging review pull {run_dir}`, which resolves)"
    if not paths.final.is_file():
        return f"no final decisions yet: run {command}"
    decided = paths.final.stat().st_mtime_ns
    for path, what in ((paths.labels, "reviewers' labels were pulled"),
                       (paths.judgments, "claims were judged again")):
        if path.is_file() and path.stat().st_mtime_ns > decided:
            return f"stale: the {what} after the last resolve; run {command}"
    return None


def iter_decisions(run_dir: Path, *, labels_path: Path | None = None,
                   calibration_dir: Path | None = None, rubrics_dir: Path | None = None
                   ) -> Iterator[tuple[list[RubricDecision], ClaimDecision]]:
    """Each claim's rubric decisions and final decision, one claim's lines in memory at a time,
    in claim key order; nothing written."""
    store = RunStore.open(run_dir, create=False)
    calibration_dir = calibration_root(calibration_dir)
    path = labels_path or store.paths.labels
    labels = read_labels(path) if path.is_file() else []
    refs = {}
    for ident in store.identities():
        if ident[1] is not None and ident[1] not in refs:
            line = store.latest_line(ident)
            if line is not None and line.rubric is not None:
                refs[str(line.rubric)] = line.rubric
    check_label_hashes(labels, refs)
    index = _label_index(labels)
    construction = _construction_annotators(labels)
    library = RubricLibrary(rubrics_dir)
    rubrics: dict[str, Rubric] = {}
    artifacts: dict = {}
    try:
        for claim_key, claim_lines, speaking in judged_claims(store):
            items: list[RubricDecision] = []
            for chosen, _ in speaking:
                assert chosen.rubric is not None
                ref_name = str(chosen.rubric)
                if ref_name not in rubrics:
                    rubrics[ref_name] = library.judged(chosen.rubric)
                rubric = rubrics[ref_name]
                trusted, problem = trusted_criteria(calibration_dir, chosen, artifacts=artifacts)
                answers = decide(rubric, chosen, chosen.claim, labels=index, trusted=trusted,
                                 ai_problem=problem, construction=construction)
                outcome, score, coverage = rubric_outcome(rubric, answers)
                review = review_outcome(rubric, answers,
                                        index.get((claim_key, ref_name, OVERALL_VERDICT), {}))
                outcome = review.outcome or outcome
                items.append(RubricDecision(
                    claim=chosen.claim, paper_id=chosen.paper_id, kind=chosen.kind,
                    verdict=chosen.verdict, rubric=chosen.rubric, applies_to=rubric.applies_to,
                    outcome=outcome, score=score, coverage=coverage, answers=answers,
                    ai_outcome=provisional_outcome(rubric, answers)
                    if outcome in ("pending", "incomplete") else None,
                    ai_judge=chosen.judge, ai_calibration=problem,
                    human_overall=review.majority, overall_by=review.by,
                    reviewers=review.reviewers, reviewer_agreement=review.agreement,
                    conflict=review.conflict))
            if not items:
                continue
            first = items[0]
            outcome = combined([d.outcome for d in items])
            deciders = sorted({(a.decided_by if a.decided_by != "ai" else a.who[0])
                               for d in items for a in d.answers if a.status == "decided"}
                              | {"construction" if set(d.overall_by) <= construction
                                 else "humans" for d in items if d.overall_by})
            own, own_by, own_note = final_verdict(items)
            yield items, ClaimDecision(
                claim=first.claim, paper_id=first.paper_id, kind=first.kind,
                verdict=first.verdict, outcomes={str(d.rubric): d.outcome for d in items},
                outcome=outcome, upheld=upheld(first.verdict, items), decided_by=deciders,
                ai_outcome=combined([d.ai_outcome or d.outcome for d in items])
                if outcome in ("pending", "incomplete") else None,
                ai_outcomes={str(d.rubric): d.ai_outcome for d in items
                             if d.ai_outcome is not None},
                final_verdict=own, final_verdict_by=own_by,  # type: ignore[arg-type]
                final_verdict_note=own_note,
                conflicts={str(d.rubric): d.conflict for d in items if d.conflict},
                copied_figure=any(f.name == COPY_FLAG for j in claim_lines for f in j.flags))
    finally:
        store.close()
