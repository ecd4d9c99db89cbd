"""What the dashboard shows, read once from a run directory or from a published Hub dataset.

Both sources become the same plain records (`AppData`): the leaderboard rows as `judging
leaderboard` computes them (`judging.resolve.leaderboard_rows`), one `ClaimRecord` per claim key
with its figures and every judgment line (answers with rationales, signals, flags), and, for a run
directory, the review queue (`queue.review_queue`). The UI and the API functions read only these.

A run directory is decided live (`judging.resolve.decide_run`: human labels, trusted AI answers,
else pending), so the dashboard agrees with `judging resolve` without writing anything. A Hub
dataset is read as `judging publish` wrote it: its claims table carries the final decisions, its
judgments table the answers and signals, `figures/` the normalised figures.

The consensus per registry claim is the consensus stage's: `judging.consensus.load_consensus` on
a run directory (the claims' flags then carry that very consensus's flags), the `consensus`
table of a dataset (whose claims and judgments tables carry the same flags: `publish` merges the
side files' flags into them).
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.app.queue import QueueRow, review_queue
from judging.errors import JudgingError
from judging.models import (
    ClaimConsensus,
    ClaimInput,
    ClaimKey,
    ClaimKind,
    ConsensusReport,
    CriterionAnswer,
    Flag,
    Judgment,
    LineStatus,
    NotAddressed,
    ReproducedValue,
    Reproduction,
    Signal,
    ValueSpread,
    Verdict,
    answer_value_text,
    natural_key,
    rerun_text,
)
from judging.resolve import EventRules

FIGURE_KINDS = ("published", "reproduced", "diff", "overlay")


@dataclass
class AnswerView:
    criterion: str
    status: str
    """scored | unscored | not_applicable"""
    value: str | None
    """yes / no, or a level; None when not scored."""
    passed: bool | None
    rationale: str
    reason: str | None
    confidence: float | None


@dataclass
class SignalView:
    name: str
    value: str | None
    status: str
    reason: str | None


@dataclass
class JudgmentView:
    """One judgment line (a rubric, a judge, a sample)."""

    rubric: str
    """`id@version`, or "-" for a claim that could not be judged."""
    judge: str
    sample: int
    status: str
    reason: str | None
    outcome: str | None
    score: float | None
    coverage: float | None
    answers: list[AnswerView] = field(default_factory=list)
    signals: list[SignalView] = field(default_factory=list)
    flags: list[tuple[str, str]] = field(default_factory=list)
    speaks: bool = False
    """The line that speaks for the AI on its rubric version, as resolve chose it
    (`rundir.speaking`; a dataset's decisions table names its judge)."""


@dataclass
class ClaimRecord:
    """One claim key: the participant's claim, our final decision, its figures and judgments."""

    key: str
    submission_id: str
    claim_id: str
    paper_id: str | None
    paper_title: str | None = None
    kind: str | None = None
    verdict: str | None = None
    source_verdict: str | None = None
    toy: bool = False
    statement: str = ""
    justification: str = ""
    scale_note: str | None = None
    reported_value: float | None = None
    reproduced_value: float | None = None
    rerun: str | None = None
    """What the organizers' re-run of the script gave (`judging rerun`), in words."""
    values: list[dict[str, Any]] | None = None
    tolerance: str | None = None
    problem_kind: str | None = None
    agent: str | None = None
    reference: str | None = None
    outcome: str = "pending"
    """The final outcome across rubrics (pass | fail | incomplete | pending)."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """By rubric `id@version`."""
    ai_outcome: str | None = None
    """While the outcome waits for review: the AI's (pass | fail | incomplete), which ranks
    provisionally ("AI pass, awaiting review")."""
    ai_outcomes: dict[str, str] = field(default_factory=dict)
    """The AI's outcome by rubric, for the rubrics that wait for review."""
    upheld: str = "pending"
    final_verdict: str | None = None
    """The claim's own final verdict (verified, falsified, toy, inconclusive, pending; None when
    no rubric asks for one)."""
    decided_by: list[str] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)
    """By rubric: reviewer conflicts (the outcome is fail until they are settled)."""
    copied_figure: bool = False
    flags: list[str] = field(default_factory=list)
    """Flag names of the claim and of its judgments (side files merged)."""
    figures: dict[str, Path] = field(default_factory=dict)
    """published / reproduced / diff / overlay: files that exist."""
    judgments: list[JudgmentView] = field(default_factory=list)

    @property
    def outcome_label(self) -> str:
        """The outcome as a person reads it: "AI pass, awaiting review" while it waits, "fail
        (reviewer conflict)" while reviewers disagree."""
        from judging.resolve import outcome_label

        if self.conflicts:
            return f"{self.outcome} (reviewer conflict)"
        return outcome_label(self.outcome, self.ai_outcome)

    def rubric_label(self, ref: str) -> str:
        """One rubric's outcome as a person reads it."""
        from judging.resolve import outcome_label

        return outcome_label(self.outcomes[ref], self.ai_outcomes.get(ref))

    def figure_match_ref(self) -> str | None:
        """The newest figure-match version decided on this claim."""
        found = sorted((ref for ref in self.outcomes if ref.startswith("figure-match@")),
                       key=_version_key)
        return found[-1] if found else None

    def figure_match_outcome(self) -> str | None:
        """The final outcome of the newest figure-match version judged on this claim."""
        ref = self.figure_match_ref()
        return self.outcomes[ref] if ref else None

    def figure_match_label(self) -> str | None:
        """That outcome as a person reads it ("AI pass, awaiting review" while it waits)."""
        ref = self.figure_match_ref()
        return self.rubric_label(ref) if ref else None

    def figure_match_ai_outcome(self) -> str | None:
        """The AI's outcome on the newest figure-match version: that of the judgment line that
        speaks for the AI, as `resolve` chose it (None when no line is known to speak)."""
        ref = max((j.rubric for j in self.judgments if j.rubric.startswith("figure-match@")),
                  key=_version_key, default=None)
        chosen = next((j for j in self.judgments if j.rubric == ref and j.speaks), None)
        return chosen.outcome if chosen is not None else None


@dataclass
class AppData:
    origin: str
    """The run directory, or `hf://datasets/OWNER/NAME`."""
    run_dir: Path | None
    """None for a Hub dataset."""
    claims: dict[str, ClaimRecord]
    by_submission: list[dict[str, Any]]
    by_paper: list[dict[str, Any]]
    by_participant: list[dict[str, Any]] = field(default_factory=list)
    """Per participant, under the event's rules (`judging leaderboard --event`)."""
    queue: list[QueueRow] | None = None
    """None where there is no queue to show (`queue_note` says why)."""
    queue_note: str = ""
    notes: list[str] = field(default_factory=list)
    """What the reader should know about where the figures come from."""
    consensus: ConsensusReport | None = None
    """Per registry claim, its reproductions side by side (`judging consensus`); None for a
    dataset published without a consensus table."""
    by_registry_claim: list[dict[str, Any]] = field(default_factory=list)
    """The consensus per registry claim as `judging leaderboard` tabulates it
    (`judging.resolve.consensus_rows`: verdict, support, agreement, counts, spread)."""
    uncertainty: list[str] = field(default_factory=list)
    """How sure the leaderboard is (the event's pass rate with its interval, whether the top
    places are settled) and what more review would buy (`judging review plan --explain`)."""

    def claim_ids(self) -> list[str]:
        return sorted({c.claim_id for c in self.claims.values()}, key=natural_key)


def _version_key(ref: str) -> tuple[int, ...]:
    version = ref.rsplit("@", 1)[-1]
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _signal_text(value: float | bool | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _answer_view(answer: CriterionAnswer) -> AnswerView:
    return AnswerView(criterion=answer.criterion_id, status=answer.status.value,
                      value=answer_value_text(answer.value), passed=answer.passed,
                      rationale=answer.rationale, reason=answer.reason,
                      confidence=answer.confidence)


def _signal_views(signals: dict[str, Signal]) -> list[SignalView]:
    return [SignalView(name=name, value=_signal_text(s.value), status=s.status.value,
                       reason=s.reason) for name, s in sorted(signals.items())]


def judgment_view(judgment: Judgment, *, speaks: bool = False) -> JudgmentView:
    aggregate = judgment.aggregate
    return JudgmentView(
        speaks=speaks,
        rubric=str(judgment.rubric) if judgment.rubric is not None else "-",
        judge=judgment.judge, sample=judgment.sample, status=judgment.status.value,
        reason=judgment.reason,
        outcome=("error" if judgment.status is LineStatus.error else
                 aggregate.outcome.value if aggregate else None),
        score=aggregate.score if aggregate else None,
        coverage=aggregate.coverage if aggregate else None,
        answers=[_answer_view(a) for a in judgment.answers],
        signals=_signal_views(judgment.signals),
        flags=sorted({(f.name, f.detail) for f in judgment.flags}))


def _tolerance_text(tolerance: dict[str, Any] | None) -> str | None:
    if not tolerance:
        return None
    return ", ".join(f"{k} {v}" for k, v in tolerance.items() if v is not None) or None


# --- a run directory ---------------------------------------------------------------------------


def _claim_from_input(key: str, content: ClaimInput | None, first: Judgment) -> ClaimRecord:
    record = ClaimRecord(key=key, submission_id=first.claim.submission_id,
                         claim_id=first.claim.claim_id, paper_id=first.paper_id,
                         kind=first.kind.value if first.kind else None,
                         verdict=first.verdict.value if first.verdict else None,
                         reference=first.reference.value if first.reference else None)
    if content is None:
        return record
    claim, header = content.claim, content.submission
    record.paper_title = header.paper_title
    record.source_verdict = claim.source_verdict
    record.toy = claim.toy
    record.statement = claim.statement
    record.justification = claim.justification
    record.scale_note = claim.scale_note
    record.reported_value = claim.reported_value
    record.reproduced_value = claim.reproduced_value
    record.values = [v.model_dump(mode="json") for v in claim.values] if claim.values else None
    record.tolerance = _tolerance_text(claim.tolerance.model_dump(mode="json", exclude_none=True)
                                       if claim.tolerance else None)
    record.problem_kind = claim.evidence.problem_kind.value if claim.evidence.problem_kind \
        else None
    record.agent = " · ".join(x for x in (header.agent.name, header.agent.model) if x) \
        if header.agent else None
    record.reference = content.reference.value
    return record


def _run_figures(root: Path, lines: list[Judgment], content: ClaimInput | None
                 ) -> dict[str, Path]:
    artifacts = next((j.artifacts for j in lines if j.artifacts.diff), None)
    found: dict[str, Path] = {}
    if artifacts is not None:
        for kind in FIGURE_KINDS:
            relative = getattr(artifacts, kind)
            if relative and (root / relative).is_file():
                found[kind] = (root / relative).resolve()
    elif content is not None and content.reproduced_path is not None:
        # A logbook's figure, decoded into the run directory by intake, when no figure-match
        # drew the pair (the report shows it the same way).
        own = content.reproduced_path
        try:
            own.resolve().relative_to(root.resolve())
        except ValueError:
            own = None
        if own is not None and own.is_file():
            found["reproduced"] = own.resolve()
    return found


def load_run(run_dir: Path, *, calibration_dir: Path | None = None,
             rubrics_dir: Path | None = None, argilla_url: str | None = None,
             argilla_api_key: str | None = None, workspace: str | None = None,
             rules: EventRules | None = None) -> AppData:
    """Everything the dashboard shows about a run directory (nothing is written)."""
    from judging.consensus import load_consensus
    from judging.resolve import (
        add_intervals,
        build_leaderboard,
        consensus_rows,
        decide_run,
        run_claim_rows,
        submission_times,
        unjudged_submissions,
    )
    from judging.rundir import RunStore, judgments_with_flags, read_not_addressed, speaking_lines

    run_dir = Path(run_dir)
    store = RunStore.open(run_dir, create=False)
    latest = store.latest()
    if not latest:
        raise JudgingError(f"{run_dir}: no judgments yet; run `judging run ... --out {run_dir}`")
    # Recomputed when consensus.json is stale (and not written); the claims' flags are that
    # consensus's, so the panel and the flags agree.
    consensus = load_consensus(run_dir)
    judgments = judgments_with_flags(store.root, latest, consensus=consensus)
    contents = store.claims()
    _, finals = decide_run(run_dir, calibration_dir=calibration_dir, rubrics_dir=rubrics_dir)
    lines_by_claim: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        lines_by_claim[str(judgment.claim)].append(judgment)
    finals_by_claim = {str(f.claim): f for f in finals}
    claims: dict[str, ClaimRecord] = {}
    for key, lines in sorted(lines_by_claim.items()):
        # Chosen in file order, as resolve chooses (a tie goes to the first line), then sorted.
        speaking = {id(spoken.line) for spoken in speaking_lines(lines)}
        lines.sort(key=lambda j: (str(j.rubric), j.judge, j.sample, j.swapped))
        content = contents.get(key)
        record = _claim_from_input(key, content, lines[0])
        record.rerun = rerun_text(lines)
        final = finals_by_claim.get(key)
        if final is not None:
            record.outcome, record.upheld = final.outcome, final.upheld
            record.final_verdict = final.final_verdict
            record.outcomes, record.decided_by = dict(final.outcomes), list(final.decided_by)
            record.ai_outcome, record.ai_outcomes = final.ai_outcome, dict(final.ai_outcomes)
            record.conflicts, record.copied_figure = dict(final.conflicts), final.copied_figure
        elif any(j.status is LineStatus.error for j in lines):
            record.outcome = "error"
        record.flags = sorted({f.name for j in lines for f in j.flags}
                              | {f.name for f in (content.flags if content else [])})
        record.figures = _run_figures(store.root, lines, content)
        record.judgments = [judgment_view(j, speaks=id(j) in speaking) for j in lines]
        claims[key] = record
    unjudged, load_problems = unjudged_submissions(store.root)
    board = build_leaderboard(finals, read_not_addressed(store.root), rules=rules,
                              submitted=submission_times(store.root), unjudged=unjudged,
                              load_problems=load_problems)
    # The intervals of the decisions made live, as `judging leaderboard` shows them.
    rows = run_claim_rows(store.root, finals=finals)
    board = add_intervals(board, rows)
    data = AppData(origin=str(run_dir), run_dir=run_dir, claims=claims,
                   by_submission=board.submissions, by_paper=board.papers,
                   by_participant=board.participants, consensus=consensus,
                   by_registry_claim=consensus_rows(consensus),
                   uncertainty=[*board.uncertainty, _what_review_buys(board, rows)])
    data.queue, data.queue_note = review_queue(
        run_dir, rubrics_dir=rubrics_dir, calibration_dir=calibration_dir,
        argilla_url=argilla_url, argilla_api_key=argilla_api_key, workspace=workspace,
        conflicts={(str(f.claim), ref): text for f in finals
                   for ref, text in f.conflicts.items()})
    return data


def _what_review_buys(board: Any, rows: list[Any]) -> str:
    """How many more labels would settle the top places: `judging review plan --explain`'s
    line, for the places `add_intervals` reports on."""
    from judging.resolve import SETTLE_TOP
    from judging.review.plan import settle_explanation

    ranked = {r["submission"] for r in board.submissions if r.get("rank") is not None}
    top = max(1, min(SETTLE_TOP, len(ranked) - 1))
    return "What more review would buy: " + settle_explanation(
        [r for r in rows if r.submission in ranked], k=top)


# --- a published Hub dataset -------------------------------------------------------------------


def _read_rows(folder: Path, name: str, *, required: bool = True) -> list[dict[str, Any]]:
    """A table of the dataset, from its JSON lines (`judging publish` writes both forms)."""
    path = folder / "data" / f"{name}.jsonl"
    if not path.is_file():
        if required:
            raise JudgingError(f"{folder}: no data/{name}.jsonl: not a dataset written by "
                               f"`judging publish`")
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise JudgingError(f"data/{name}.jsonl line {number}: not JSON ({exc.msg})") from None
    return rows


def _json_field(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def _inside(folder: Path, relative: str) -> Path | None:
    """`folder/relative` if it names a file inside `folder` (a dataset's paths are data: no
    `..` or absolute path may leave it). Compared without resolving links: a Hub cache's
    snapshot folder holds links into its blob store."""
    root = Path(os.path.normpath(folder.absolute()))
    path = Path(os.path.normpath(root / relative))
    if root in path.parents and path.is_file():
        return path
    return None


def _hub_judgment(row: dict[str, Any]) -> JudgmentView:
    answers = []
    for raw in _json_field(row.get("answers")) or []:
        try:
            answers.append(_answer_view(CriterionAnswer.model_validate(raw)))
        except ValueError:
            continue  # a row from another version of the schema: shown without that answer
    signals: dict[str, Signal] = {}
    for name, raw in (_json_field(row.get("signals")) or {}).items():
        try:
            signals[name] = Signal.model_validate(raw)
        except ValueError:
            continue
    details = _json_field(row.get("flag_details")) or {}
    rubric = f"{row['rubric_id']}@{row['rubric_version']}" if row.get("rubric_id") else "-"
    status = row.get("status") or "?"
    return JudgmentView(
        rubric=rubric, judge=row.get("judge") or "?", sample=int(row.get("sample") or 0),
        status=status, reason=row.get("reason"),
        outcome="error" if status == "error" else row.get("outcome"),
        score=row.get("score"), coverage=row.get("coverage"), answers=answers,
        signals=_signal_views(signals),
        flags=sorted((name, str(details.get(name, ""))) for name in row.get("flags") or []))


def _claim_key(text: str) -> ClaimKey:
    submission_id, _, claim_id = text.partition("::")
    return ClaimKey(submission_id=submission_id, claim_id=claim_id)


def _hub_consensus(row: dict[str, Any]) -> ClaimConsensus:
    """One row of the consensus table (`publish.rows.consensus_rows`) as the consensus stage's
    model (without what the table leaves to the claims table: scale notes, human help)."""
    reproductions = [Reproduction(
        claim=ClaimKey(submission_id=raw["submission_id"], claim_id=raw["claim_id"]),
        agent=raw.get("agent"), verdict=raw.get("verdict"),
        source_verdict=raw.get("source_verdict"), toy=bool(raw.get("toy")),
        values=[ReproducedValue.model_validate(v) for v in raw.get("values") or []],
        outcomes=dict(raw.get("outcomes") or {}), independent=bool(raw.get("independent", True)),
        copy_of=[_claim_key(k) for k in raw.get("copy_of") or []],
        counted=bool(raw.get("counted")), final_verdict=raw.get("final_verdict"),
        counted_verdict=raw.get("counted_verdict"), counted_from=raw.get("counted_from"),
        flags=[Flag.model_validate(f) for f in raw.get("flags") or []])
        for raw in _json_field(row.get("rows")) or []]
    votes = {v: int(row[v]) for v in ("falsified", "inconclusive", "verified") if row.get(v)}
    return ClaimConsensus(
        claim_id=row["claim_id"], paper_id=row.get("paper_id"), kind=row.get("kind"),
        statement=row.get("statement"), reproductions=reproductions,
        independent=int(row.get("independent") or 0), votes=votes, verdict=row.get("consensus"),
        support=int(row.get("support") or 0), agreement=row.get("agreement"),
        reason=row.get("reason") or "",
        counted_from=dict(_json_field(row.get("counted_from")) or {}),
        spread=[ValueSpread.model_validate(s) for s in _json_field(row.get("spread")) or []])


def _hub_consensus_report(folder: Path, notes: list[str]) -> ConsensusReport | None:
    """The dataset's consensus table; None when it has none (published before it existed). A
    row that cannot be read is left out with a note (the other claims keep theirs)."""
    if not (folder / "data" / "consensus.jsonl").is_file():
        notes.append("this dataset has no consensus table (published before it existed): the "
                     "claim view shows the reproductions without a consensus")
        return None
    claims = []
    for number, row in enumerate(_read_rows(folder, "consensus"), start=1):
        try:
            claims.append(_hub_consensus(row))
        except (KeyError, TypeError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            notes.append(f"data/consensus.jsonl row {number} "
                         f"({row.get('claim_id', '?') if isinstance(row, dict) else '?'}) "
                         f"could not be read ({first[:200]}): shown without its consensus")
    return ConsensusReport(claims=claims)


def _mark_speaking(lines: dict[str, list[JudgmentView]], decision_rows: list[dict[str, Any]]
                   ) -> None:
    """Mark the line that spoke for the AI on each (claim, rubric version): the decisions table
    names its judge (`ai_judge`, resolve's choice). Where that judge has several lines (samples,
    figure orders), none is marked: the table does not say which one spoke."""
    spoke = {(str(ClaimKey(submission_id=r["submission_id"], claim_id=r["claim_id"])),
              f"{r['rubric_id']}@{r['rubric_version']}"): r["ai_judge"]
             for r in decision_rows if r.get("ai_judge") and r.get("rubric_id")}
    for key, views in lines.items():
        by_judge: dict[tuple[str, str], list[JudgmentView]] = defaultdict(list)
        for view in views:
            by_judge[(view.rubric, view.judge)].append(view)
        for rubric in {view.rubric for view in views}:
            chosen = by_judge.get((rubric, spoke.get((key, rubric), "")), [])
            if len(chosen) == 1:
                chosen[0].speaks = True


def load_dataset_folder(folder: Path, *, origin: str | None = None,
                        rules: EventRules | None = None) -> AppData:
    """A dataset folder as `judging publish` stages it (downloaded from the Hub, or local)."""
    from judging.resolve import ClaimDecision, build_leaderboard, consensus_rows

    folder = Path(folder)
    claim_rows = _read_rows(folder, "claims")
    judgment_rows = _read_rows(folder, "judgments")
    not_addressed_rows = _read_rows(folder, "not_addressed", required=False)
    decision_rows = _read_rows(folder, "decisions", required=False)
    lines: dict[str, list[JudgmentView]] = defaultdict(list)
    flags: dict[str, set[str]] = defaultdict(set)
    for row in judgment_rows:
        key = str(ClaimKey(submission_id=row["submission_id"], claim_id=row["claim_id"]))
        view = _hub_judgment(row)
        lines[key].append(view)
        flags[key] |= {name for name, _ in view.flags}
    _mark_speaking(lines, decision_rows)
    claims: dict[str, ClaimRecord] = {}
    finals: list[ClaimDecision] = []
    for row in claim_rows:
        claim_key = ClaimKey(submission_id=row["submission_id"], claim_id=row["claim_id"])
        key = str(claim_key)
        outcomes = _json_field(row.get("outcomes")) or {}
        figures = {kind: path for kind, relative in (_json_field(row.get("figures")) or {}).items()
                   if kind in FIGURE_KINDS and isinstance(relative, str)
                   and (path := _inside(folder, relative)) is not None}
        agent = " · ".join(x for x in (row.get("agent_name"), row.get("agent_model")) if x)
        record = ClaimRecord(
            key=key, submission_id=claim_key.submission_id, claim_id=claim_key.claim_id,
            paper_id=row.get("paper_id"), paper_title=row.get("paper_title"),
            kind=row.get("kind"), verdict=row.get("verdict"),
            statement=row.get("statement") or "", justification=row.get("justification") or "",
            scale_note=row.get("scale_note"), reported_value=row.get("reported_value"),
            reproduced_value=row.get("reproduced_value"),
            values=_json_field(row.get("values")),
            tolerance=_tolerance_text(_json_field(row.get("tolerance"))),
            problem_kind=row.get("problem_kind"), agent=agent or None,
            reference=row.get("reference"), outcome=row.get("outcome") or "pending",
            outcomes=dict(outcomes), ai_outcome=row.get("ai_outcome"),
            ai_outcomes=dict(_json_field(row.get("ai_outcomes")) or {}),
            upheld=row.get("upheld") or "pending",
            decided_by=list(row.get("decided_by") or []),
            conflicts=dict(_json_field(row.get("conflicts")) or {}),
            copied_figure=bool(row.get("copied_figure")),
            flags=sorted(set(row.get("flags") or []) | flags.get(key, set())),
            figures=figures,
            judgments=sorted(lines.get(key, []), key=lambda j: (j.rubric, j.judge, j.sample)))
        record.source_verdict = row.get("source_verdict")
        record.final_verdict = row.get("final_verdict")
        # Datasets published before the `toy` column: the intake flag says the same.
        record.toy = bool(row["toy"]) if row.get("toy") is not None else "toy" in record.flags
        claims[key] = record
        try:
            finals.append(ClaimDecision(
                claim=claim_key, paper_id=record.paper_id,
                kind=ClaimKind(record.kind) if record.kind else None,
                verdict=Verdict(record.verdict) if record.verdict else None,
                outcomes=outcomes, outcome=record.outcome, upheld=record.upheld,
                decided_by=record.decided_by, ai_outcome=record.ai_outcome,
                ai_outcomes=record.ai_outcomes, final_verdict=record.final_verdict,
                final_verdict_by=row.get("final_verdict_by"), conflicts=record.conflicts,
                copied_figure=record.copied_figure))
        except ValueError as exc:
            raise JudgingError(f"data/claims.jsonl: claim {key}: {exc}") from None
    not_addressed = [NotAddressed.model_validate(r) for r in not_addressed_rows]
    board = build_leaderboard(finals, not_addressed, rules=rules)
    notes = [] if not_addressed_rows or not claim_rows else [
        "this dataset has no not_addressed table (published before it existed): the "
        "leaderboard counts only the claims judged"]
    if claim_rows and not decision_rows:
        notes.append("this dataset has no decisions table: which judgment line spoke for the AI "
                     "is not known, so the AI's figure-match outcome is not shown")
    consensus = _hub_consensus_report(folder, notes)
    return AppData(origin=origin or str(folder), run_dir=None, claims=dict(sorted(claims.items())),
                   by_submission=board.submissions, by_paper=board.papers,
                   by_participant=board.participants, queue=None,
                   queue_note="The review queue is read from a run directory "
                              "(`judging app RUN_DIR`); a published dataset has none.",
                   notes=notes, consensus=consensus,
                   by_registry_claim=consensus_rows(consensus))


def load_dataset(repo_id: str, *, revision: str | None = None, local_dir: Path | None = None,
                 token: str | None = None, rules: EventRules | None = None) -> AppData:
    """A published dataset, downloaded from the Hub (HF_ENDPOINT) with `snapshot_download`."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    target = Path(local_dir) if local_dir is not None else None
    try:
        folder = snapshot_download(repo_id, repo_type="dataset", revision=revision,
                                   local_dir=target, token=token,
                                   allow_patterns=["data/*.jsonl", "figures/**", "README.md"])
    except OfflineModeIsEnabled:
        raise JudgingError("the Hugging Face Hub is in offline mode (HF_HUB_OFFLINE is set): "
                           f"cannot download {repo_id}") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "error"
        raise JudgingError(f"cannot download the dataset {repo_id} from the Hub ({status}): "
                           f"{str(exc).splitlines()[0]}") from None
    except (OSError, ValueError) as exc:  # no connection: huggingface_hub's own OSErrors
        from huggingface_hub import constants

        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise JudgingError(f"cannot download the dataset {repo_id} from {constants.ENDPOINT}: "
                           f"{first[:300]}") from None
    return load_dataset_folder(Path(folder), origin=f"hf://datasets/{repo_id}", rules=rules)
