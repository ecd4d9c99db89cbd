"""`judging awards RUN`: the event's award shortlists, each place with the evidence behind it,
and the final pick recorded as a human decision with who made it.

- **Best reproduction** ("careful, complete and easy to re-run"): submissions by their claims
  the participant says *verified* that pass (more first), then by their re-runs that reproduced
  (more first: easy to re-run), re-runs that differ (fewer), items missing from the submission
  checklist (fewer: complete), then people's passes before the AI's provisional ones, fewer
  fails, fewer pending. A submission with no passing verified claim is not shortlisted.
- **Best falsification** ("a script that proves it, and a clear explanation of the problem"):
  submissions by their falsified claims whose falsification audit passes *and* whose final
  verdict is falsified (more first), then by those proofs whose re-run reproduced the
  participant's number (more first), re-runs that differ (fewer), checklist items missing
  (fewer), people's before the AI's, audits passed, fewer fails. A submission with no such
  claim is not shortlisted.

Re-runs are RUN/reruns.jsonl (`judging rerun`, the newest line of a claim). The checklist is
`judging check SOURCE --json`'s output, given with `--checklists FILE`; without it, or for a
submission it does not cover, the evidence says so rather than guessing. The shortlist
proposes; a person picks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from judging.atomic import write_jsonl_atomic
from judging.check import Checklist, CheckOutput
from judging.errors import JudgingError
from judging.models import RerunRecord, StrictModel, VersionedModel, natural_key
from judging.resolve.decide import ClaimDecision
from judging.rundir import RunPaths, read_jsonl, read_reruns

Award = Literal["best_reproduction", "best_falsification"]
AWARDS: dict[str, str] = {
    "best_reproduction": "careful, complete and easy to re-run",
    "best_falsification": "a script that proves it, and a clear explanation of the problem"}
#: Places per shortlist: enough for a jury to compare, few enough to review first.
SHORTLIST = 3
#: Items missing counted for a submission without a checklist: after every checked one.
UNCHECKED = 10**6
NO_CHECKLIST = ("checklist: not given (`judging check SOURCE --json > FILE`, then "
                "`judging awards RUN --checklists FILE`)")


def read_checklists(path: Path) -> dict[str, Checklist]:
    """The checklists of `judging check --json`, by submission id."""
    try:
        output = CheckOutput.model_validate_json(Path(path).read_bytes())
    except OSError as exc:
        raise JudgingError(f"{path}: cannot read the checklists ({exc.strerror})") from None
    except ValueError:
        raise JudgingError(f"{path}: not the output of `judging check SOURCE --json`") from None
    return {c.submission_id: c for c in output.submissions if c.submission_id is not None}


class Evidence(StrictModel):
    """What a submission's places rest on beyond the final decisions."""

    reruns: dict[str, RerunRecord] = Field(default_factory=dict)
    """The newest re-run per claim key."""
    checklists: dict[str, Checklist] | None = None
    """By submission id; None: no checklist was given."""

    def rerun_counts(self, claims: list[ClaimDecision]) -> tuple[int, int, str]:
        """(reproduced, differs, the evidence line) over these claims' re-runs."""
        statuses = [self.reruns[str(f.claim)].status.value for f in claims
                    if str(f.claim) in self.reruns]
        counts = _count(statuses)
        line = ("re-runs of these claims: " + ", ".join(
            f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
            + f" (of {len(claims)})" if statuses else
            f"re-runs of these claims: none recorded (of {len(claims)}; `judging rerun`)")
        return counts.get("reproduced", 0), counts.get("differs", 0), line

    def checklist(self, submission: str) -> tuple[int, str]:
        """(items missing, the evidence line); a submission without a checklist counts last."""
        if self.checklists is None:
            return UNCHECKED, NO_CHECKLIST
        found = self.checklists.get(submission)
        if found is None:
            return UNCHECKED, "checklist: the given checklists do not cover this submission"
        return found.counts.get("missing", 0), _checklist_text(found)


def _checklist_text(checklist: Checklist) -> str:
    missing = sorted({i.item for i in checklist.items if i.status == "missing"})
    counts = checklist.counts
    return ("checklist: complete" if checklist.ok else "checklist: incomplete, missing "
            + ", ".join(missing)) + (f" ({counts['ok']} ok, {counts['missing']} missing, "
                                     f"{counts['warning']} warnings)")


class AwardPlace(StrictModel):
    award: Award
    place: int
    submission: str
    evidence: list[str]
    claims: list[str] = Field(default_factory=list)
    """The claims the place rests on (review them first)."""


class AwardPick(VersionedModel):
    """A person's final pick for one award (a line of RUN/awards.jsonl)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.award_pick/1"] = Field(default="judging.award_pick/1",
                                                      alias="schema")
    award: Award
    submission: str
    by: str
    at: datetime
    shortlisted_place: int | None
    """Its place on the shortlist when picked (None: picked from outside it)."""

    @classmethod
    def migrate(cls, data: dict) -> dict:
        return data  # judging.award_pick/1 is the first version


def _people(final: ClaimDecision) -> bool:
    return "humans" in final.decided_by


def _reproduction(submission: str, claims: list[ClaimDecision],
                  evidence: Evidence) -> tuple[tuple, list[str]]:
    verified = [f for f in claims if f.verdict is not None and f.verdict.value == "verified"]
    passed = [f for f in verified if f.outcome == "pass"]
    provisional = [f for f in verified if f.outcome != "pass" and f.ai_outcome == "pass"]
    failed = [f for f in verified if f.outcome == "fail"]
    pending = len(verified) - len(passed) - len(provisional) - len(failed)
    people = sum(map(_people, passed))
    reproduced, differs, reruns = evidence.rerun_counts(verified)
    missing, checklist = evidence.checklist(submission)
    key = (-(len(passed) + len(provisional)), -reproduced, differs, missing, -people,
           len(failed), pending)
    lines = [f"{len(passed) + len(provisional)} of {len(verified)} verified claims pass "
             f"({people} decided by people, {len(passed) - people} by a trusted AI, "
             f"{len(provisional)} AI provisional), {len(failed)} fail, {pending} pending",
             reruns, checklist,
             "final verdicts: " + (", ".join(
                 f"{v} {n}" for v, n in sorted(_count(f.final_verdict for f in verified)
                                               .items())) or "none asked")]
    return key, lines


def _falsification(submission: str, claims: list[ClaimDecision],
                   evidence: Evidence) -> tuple[tuple, list[str]]:
    falsified = [f for f in claims if f.verdict is not None and f.verdict.value == "falsified"]

    def audit(f: ClaimDecision) -> str | None:
        return next((o for r, o in f.outcomes.items() if r.startswith("falsification-audit@")),
                    None) or next((o for r, o in f.ai_outcomes.items()
                                   if r.startswith("falsification-audit@")), None)
    audited = [f for f in falsified if audit(f) == "pass"]
    proven = [f for f in audited if f.final_verdict == "falsified"]
    people = sum(1 for f in proven if f.final_verdict_by == "humans")
    failed = [f for f in falsified if f.outcome == "fail"]
    # A proof whose re-run reproduced the participant's number is a script that proves it.
    reproduced, differs, reruns = evidence.rerun_counts(proven)
    missing, checklist = evidence.checklist(submission)
    key = (-len(proven), -reproduced, differs, missing, -people, -len(audited), len(failed))
    lines = [f"{len(proven)} of {len(falsified)} falsified claims proven: the audit passes "
             f"and the final verdict is falsified ({people} by people)",
             reruns.replace("re-runs of these claims", "re-runs of the proven claims"),
             checklist, f"{len(audited)} audits pass, {len(failed)} claims fail"]
    return key, lines


def _count(values: Iterable[str | None]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for value in values:
        if value is not None:
            counts[value] += 1
    return counts


def shortlists(finals: Iterable[ClaimDecision], *, size: int = SHORTLIST,
               evidence: Evidence | None = None) -> dict[str, list[AwardPlace]]:
    """Per award its shortlist, best first (ties in natural order of the submission ids)."""
    evidence = evidence or Evidence()
    by_submission: dict[str, list[ClaimDecision]] = defaultdict(list)
    for final in finals:
        by_submission[final.claim.submission_id].append(final)
    result: dict[str, list[AwardPlace]] = {}
    for award, score in (("best_reproduction", _reproduction),
                         ("best_falsification", _falsification)):
        scored = [(score(s, claims, evidence), s, claims)
                  for s, claims in by_submission.items()]
        eligible = [(key, evidence, s, claims) for (key, evidence), s, claims in scored
                    if key[0] < 0]  # at least one passing / proven claim
        eligible.sort(key=lambda t: (t[0], natural_key(t[2])))
        result[award] = [AwardPlace(award=award, place=i + 1, submission=s, evidence=evidence,
                                    claims=[str(f.claim) for f in claims])
                         for i, (_, evidence, s, claims) in enumerate(eligible[:size])]
    return result


def run_shortlists(run_dir: Path, *, size: int = SHORTLIST,
                   checklists: Path | None = None) -> dict[str, list[AwardPlace]]:
    """The shortlists of a resolved run, with its re-runs and, given, the checklists."""
    path = RunPaths(Path(run_dir)).final
    if not path.is_file():
        raise JudgingError(f"{path}: no final decisions yet; run `judging resolve {run_dir}` "
                           f"first")
    evidence = Evidence(reruns=read_reruns(run_dir), checklists=read_checklists(checklists)
                        if checklists is not None else None)
    return shortlists(read_jsonl(path, ClaimDecision), size=size, evidence=evidence)


def read_picks(run_dir: Path) -> list[AwardPick]:
    path = RunPaths(Path(run_dir)).awards
    return read_jsonl(path, AwardPick) if path.is_file() else []


def record_pick(run_dir: Path, award: str, submission: str, *, by: str, at: datetime,
                lists: dict[str, list[AwardPlace]]) -> AwardPick:
    """Append a person's pick (the latest pick per award stands); the submission must be one
    of the run's."""
    if award not in AWARDS:
        raise JudgingError(f"no award {award!r}: one of {', '.join(AWARDS)}")
    if not by.strip():
        raise JudgingError("a pick needs who made it (--by NAME)")
    finals = read_jsonl(RunPaths(Path(run_dir)).final, ClaimDecision)
    if submission not in {f.claim.submission_id for f in finals}:
        raise JudgingError(f"{submission!r} is not a submission of {run_dir}")
    place = next((p.place for p in lists[award] if p.submission == submission), None)
    pick = AwardPick(award=award, submission=submission, by=by.strip(), at=at,
                     shortlisted_place=place)
    write_jsonl_atomic(RunPaths(Path(run_dir)).awards, [*read_picks(run_dir), pick])
    return pick
