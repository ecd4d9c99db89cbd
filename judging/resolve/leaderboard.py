"""`judging leaderboard`: the ranking of submissions, papers and participants, from each claim's
final outcome (CSV, HTML and the console; the dashboard and a Space reading the published dataset
rank with these same functions).

The rule (docs/explanation/ranking.md), a pure function of each claim's outcome:

- A claim **stands** as `pass` or `fail` when people (or a calibrated, trusted AI) decided it.
  While it waits for review, the AI's own outcome stands in provisionally ("AI pass, awaiting
  review": `ClaimDecision.ai_outcome`), so an offline or LLM-only event still has a leaderboard;
  a claim with neither is `undecided`. A reproduced figure flagged a copy of the published one
  stands as `fail` unless people decided it passes. A reviewer conflict stands as `fail` (resolve
  decides it so) until it is settled. A registry claim the submission does not address
  (not_addressed.jsonl) stands as not passed.
- Submissions rank by **passes** (more first), then by **fails** (fewer first), then by
  **registry claims not addressed** (fewer first). Monotone by construction: turning a pass into
  a fail, or adding a failed claim, never improves a rank; adding a passed claim never worsens
  one. A wrong claim weighs more than a claim not made, so a failed claim never lifts a
  submission above one without it. Nothing else counts: not how many claims wait for review.
- Equal keys are ties: they share a rank (shown `=2`), listed in natural order of their ids.

Per participant (`EventRules`): the totals of their submissions, at most one per paper (the best)
and at most `max_papers_per_participant` papers (the earliest submitted); a submission beyond the
limit is listed, flagged and unranked, never silently counted.

A submission nothing of which could be judged (a folder that could not be read at its latest
attempt; one whose every claim failed to load) is listed unranked with its reason, never left
out (`unjudged_submissions`).

When the run reproduces registry claims, a further table lists each registry claim's consensus
(`judging consensus`; computed afresh when its side file is missing or stale): its verdict,
support, agreement and the spread of reproduced values. It ranks nobody.
"""

from __future__ import annotations

import csv
import html
import io
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from judging.atomic import write_text_atomic
from judging.calibrate import CorrectedRow, calibration_root, corrected_rates
from judging.consensus import load_consensus
from judging.errors import JudgingError
from judging.models import ClaimConsensus, ConsensusReport, NotAddressed, natural_key
from judging.resolve.decide import ClaimDecision, stale_decisions
from judging.resolve.event import EventRules
from judging.resolve.intervals import (
    AI_ONLY,
    ClaimRow,
    Estimate,
    RankInterval,
    grouped,
    pass_rate,
    run_claim_rows,
    simulate_ranks,
)
from judging.rundir import Identity, RunPaths, RunStore, read_jsonl, read_not_addressed

Standing = Literal["pass", "fail", "undecided", "not_addressed"]

#: The counts of a row, in the order the tables show them.
COLUMNS = ["claims", "addressed", "passed", "ai_passed", "failed", "ai_failed", "undecided",
           "not_addressed", "conflicts", "upheld", "pass_rate"]
#: What the columns mean, for the page and the dashboard.
COLUMN_HELP = {
    "claims": "claims counted: those addressed and the registry claims not addressed",
    "addressed": "claims the submission made (judged)",
    "passed": "claims that pass, decided or AI-provisional",
    "ai_passed": "of which an AI pass awaiting review",
    "failed": "claims that fail, decided or AI-provisional (a flagged copy of the published "
              "figure and a reviewer conflict count here)",
    "ai_failed": "of which an AI fail awaiting review",
    "undecided": "neither pass nor fail yet (no human decision, no AI outcome)",
    "not_addressed": "registry claims of the paper the submission did not address (not passed)",
    "conflicts": "of the failed, claims in reviewer conflict (decided fail until settled)",
    "upheld": "claims whose participant's verdict stands",
    "pass_rate": "passed / (passed + failed + not_addressed)",
}
#: How sure each row is (judging.resolve.intervals), beside the counts; filled when the run's
#: claims are at hand (`run_leaderboard`).
INTERVAL_COLUMNS = ["pass_rate_95", "human_only_95", "rank_95", "rank_settled"]
COLUMN_HELP.update({
    "pass_rate_95": "the pass rate estimated from the AI's outcomes and a random sample of human "
                    "answers (prediction-powered, PPI++), with its 95% interval; 'AI-only, "
                    "uncalibrated' when nobody has reviewed a random sample",
    "human_only_95": "the 95% interval from the random human answers alone, for comparison",
    "rank_95": "the rank's 95% interval, simulated from each unreviewed claim's uncertainty",
    "rank_settled": "yes when the rank's interval is that one place",
})
SUBMISSION_COLUMNS = ["rank", "submission", "paper", "participant", *COLUMNS, *INTERVAL_COLUMNS,
                      "note"]
PAPER_COLUMNS = ["rank", "paper", "submissions", *COLUMNS, "pass_rate_95", "human_only_95"]
PARTICIPANT_COLUMNS = ["rank", "participant", "papers", "submissions", "counted", *COLUMNS,
                       "note"]

#: The claims' final verdicts (the verdict rubric's own_verdict as resolve decided it: human,
#: else trusted AI; a claim still pending is in none), beside the ranking, which they do not
#: change. Only when some claim was judged with a rubric that asks for one.
FINAL_VERDICT_COLUMNS = ["final_verified", "final_falsified", "final_toy", "final_inconclusive"]
FINAL_VERDICT_HELP = "claims by final verdict (own_verdict: humans, else a trusted AI)"

CONSENSUS_COLUMNS = ["registry_claim", "paper", "reproductions", "independent", "verified",
                     "falsified", "inconclusive", "consensus", "support", "agreement",
                     "contradicting", "value_outliers", "spread", "counted_from"]

RULE_TEXT = ("Ranked by passes (more first), then fails (fewer first), then registry claims "
             "not addressed (fewer first); equal keys are ties (=N). A failed claim never lifts "
             "a submission: a wrong claim weighs more than a claim not made. A claim nobody has "
             "reviewed yet counts with the AI's outcome, provisionally (\"AI pass, awaiting "
             "review\"); a flagged copy of the published figure and a reviewer conflict count "
             "as fails.")
#: The line every leaderboard view adds when no claim passes (offline, nothing reviewed).
NO_PASS_TEXT = ("No claim passes yet: every pass column is 0 (offline judging leaves the "
                "verdict rubric to an LLM or a person, and nobody has passed a claim), so this "
                "order counts only fails, then registry claims not addressed.")


def no_claim_passes(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a ranking has claims and not one pass (its order then rests on fails alone)."""
    return bool(rows) and any(r.get("claims") for r in rows) and \
        not any(r.get("passed") for r in rows)


def rule_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a leaderboard view says about its order: the rule, and when no claim passes, so."""
    return [RULE_TEXT, *([NO_PASS_TEXT] if no_claim_passes(rows) else [])]


@dataclass(frozen=True)
class ClaimResult:
    """One claim as the ranking sees it: its final outcome, and the AI's while it is pending."""

    submission: str
    paper: str | None
    claim_id: str
    outcome: str
    """pass | fail | incomplete | pending (ClaimDecision.outcome), or not_addressed."""
    ai_outcome: str | None = None
    """The AI's outcome while `outcome` is pending or incomplete (pass | fail | incomplete)."""
    upheld: bool = False
    final_verdict: str | None = None
    """The claim's final verdict (verified, falsified, toy, inconclusive, pending), if asked."""
    copied_figure: bool = False
    """Its reproduced figure is flagged a copy of the published one."""
    people_decided: bool = False
    """People (not only an AI) decided some of its answers."""
    conflict: bool = False
    """A reviewer conflict on one of its rubrics (its outcome is then fail)."""

    @property
    def standing(self) -> Standing:
        if self.copied_figure and not (self.outcome == "pass" and self.people_decided):
            return "fail"
        if self.outcome in ("pass", "fail", "not_addressed"):
            return self.outcome  # type: ignore[return-value]
        if self.ai_outcome in ("pass", "fail"):
            return self.ai_outcome  # type: ignore[return-value]
        return "undecided"

    @property
    def provisional(self) -> bool:
        """The standing is the AI's, awaiting review."""
        return self.outcome not in ("pass", "fail", "not_addressed") and \
            self.ai_outcome in ("pass", "fail") and self.standing == self.ai_outcome


def outcome_label(outcome: str, ai_outcome: str | None) -> str:
    """How an outcome reads to a person: `pass` or `fail` once decided; while it waits for
    review, the AI's (`AI pass, awaiting review`, `AI fail, ...`, `AI incomplete, ...`); else
    the outcome itself (`pending`, `incomplete`, `error`)."""
    if outcome in ("pending", "incomplete") and ai_outcome in ("pass", "fail", "incomplete"):
        return f"AI {ai_outcome}, awaiting review"
    return outcome


def claim_results(finals: Iterable[ClaimDecision],
                  not_addressed: Iterable[NotAddressed] = ()) -> list[ClaimResult]:
    """Every claim the ranking counts. A registry claim with a final decision is never also
    counted as not addressed (a run resumed after a submission dropped a claim keeps its
    judgments)."""
    results = [ClaimResult(submission=f.claim.submission_id, paper=f.paper_id,
                           claim_id=f.claim.claim_id, outcome=f.outcome,
                           ai_outcome=f.ai_outcome, upheld=f.upheld == "yes",
                           final_verdict=f.final_verdict, copied_figure=f.copied_figure,
                           people_decided=bool({"humans", "construction"} & set(f.decided_by)),
                           conflict=bool(f.conflicts)) for f in finals]
    judged = {(r.submission, r.claim_id) for r in results}
    results += [ClaimResult(submission=r.submission_id, paper=r.paper_id, claim_id=r.claim_id,
                            outcome="not_addressed") for r in not_addressed
                if (r.submission_id, r.claim_id) not in judged]
    return results


def tally(results: Iterable[ClaimResult]) -> dict[str, Any]:
    """The counts of COLUMNS over some claims."""
    counts = dict.fromkeys(COLUMNS[:-1], 0)
    for result in results:
        standing = result.standing
        counts["claims"] += 1
        counts["addressed"] += standing != "not_addressed"
        counts["passed"] += standing == "pass"
        counts["failed"] += standing == "fail"
        counts["ai_passed"] += result.provisional and standing == "pass"
        counts["ai_failed"] += result.provisional and standing == "fail"
        counts["undecided"] += standing == "undecided"
        counts["not_addressed"] += standing == "not_addressed"
        counts["conflicts"] += result.conflict
        counts["upheld"] += result.upheld
    return _with_rate(counts)


def final_verdict_counts(results: Iterable[ClaimResult], asks: bool = True) -> dict[str, int]:
    """The FINAL_VERDICT_COLUMNS of some claims (nothing when no claim's rubric asks for a final
    verdict: `asks` False)."""
    if not asks:
        return {}
    found = Counter(r.final_verdict for r in results)
    return {column: found[column.removeprefix("final_")] for column in FINAL_VERDICT_COLUMNS}


def _with_rate(counts: dict[str, Any]) -> dict[str, Any]:
    decided = counts["passed"] + counts["failed"] + counts["not_addressed"]
    counts["pass_rate"] = round(counts["passed"] / decided, 3) if decided else None
    return counts


def rank_key(row: Mapping[str, Any]) -> tuple[int, int, int]:
    """The ranking: more passes, then fewer fails, then fewer registry claims not addressed."""
    return -row["passed"], row["failed"], row["not_addressed"]


def ranked(rows: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """`rows` best first, each with `rank` (shared by ties: competition ranking, 1, 2, 2, 4) and
    `tie`; ties in natural order of `name`. A row with `ranked` False (a submission beyond its
    participant's paper limit) is unranked (rank None) and listed last."""
    counted = sorted((r for r in rows if r.get("ranked", True)),
                     key=lambda r: (rank_key(r), natural_key(str(r[name]))))
    rest = sorted((r for r in rows if not r.get("ranked", True)),
                  key=lambda r: (rank_key(r), natural_key(str(r[name]))))
    keys = [rank_key(r) for r in counted]
    for position, row in enumerate(counted):
        first = keys.index(keys[position])
        row["rank"] = first + 1
        row["tie"] = keys.count(keys[position]) > 1
    for row in rest:
        row["rank"], row["tie"] = None, False
    return [*counted, *rest]


def rank_text(row: Mapping[str, Any]) -> str:
    """`3`, `=2` for a tie, `-` for an unranked row."""
    if row.get("rank") is None:
        return "-"
    return f"={row['rank']}" if row.get("tie") else str(row["rank"])


@dataclass
class Leaderboard:
    """The three rankings, best first."""

    submissions: list[dict[str, Any]]
    papers: list[dict[str, Any]]
    participants: list[dict[str, Any]]
    rules: EventRules = field(default_factory=EventRules)
    uncertainty: list[str] = field(default_factory=list)
    """What the interval columns rest on and whether the top places are settled."""
    estimates: dict[str, Estimate] = field(default_factory=dict)
    """The numbers behind pass_rate_95 / human_only_95, by submission (the published tables
    carry them as numbers)."""
    rank_intervals: dict[str, RankInterval] = field(default_factory=dict)
    """The numbers behind rank_95, by submission (only when a random sample calibrates them)."""
    event: Estimate | None = None
    """The event's pass rate with its interval."""


#: The top places whose settling the leaderboard reports (as `judging review plan` does).
SETTLE_TOP = 10


def add_intervals(board: Leaderboard, rows: Sequence[ClaimRow], *, k: int = SETTLE_TOP,
                  seed: int = 0) -> Leaderboard:
    """Fill INTERVAL_COLUMNS of the submissions and papers from the run's claims, and say what
    they rest on (`uncertainty`). Ranks are simulated over the ranked submissions only."""
    ranked_ids = {r["submission"] for r in board.submissions if r.get("rank") is not None}
    by_submission = grouped(rows, lambda r: r.submission)
    papers = {r["submission"]: str(r["paper"] or "?") for r in board.submissions}
    by_paper = grouped(rows, lambda r: papers.get(r.submission, "?"))
    simulation = simulate_ranks([r for r in rows if r.submission in ranked_ids], seed=seed)
    board.estimates = by_submission
    for row in board.submissions:
        if row["claims"] == 0 and not row.get("ranked", True):
            continue  # unjudged: nothing to estimate (its note says why)
        _fill(row, by_submission.get(row["submission"]))
        interval = simulation.intervals.get(row["submission"])
        if interval is not None and simulation.calibrated:
            board.rank_intervals[row["submission"]] = interval
            row["rank_95"] = interval.text()
            row["rank_settled"] = "yes" if interval.low == interval.high else "no"
    for row in board.papers:
        _fill(row, by_paper.get(str(row["paper"])))
    event = board.event = pass_rate(rows)
    top = max(1, min(k, len(ranked_ids) - 1))  # the top k of k submissions settles nothing
    board.uncertainty = [
        f"Event pass rate: {event.text()}"
        + (f" (human-only {_interval(event.classical)})" if event.classical else "")
        + f"; {event.random_labels} random human labels.",
        (f"Top {top}: {'settled' if simulation.settled(top) else 'not settled'} (rank "
         f"intervals simulated from the claims' uncertainty; `judging review plan --explain` "
         f"says how many more reviews would settle them)." if simulation.calibrated else
         f"Ranks: {AI_ONLY} (`judging review plan RUN --budget N` draws one).")]
    return board


def _interval(pair: tuple[float, float] | None) -> str:
    return "" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _fill(row: dict[str, Any], estimate: Estimate | None) -> None:
    if estimate is not None:
        row["pass_rate_95"] = estimate.text()
        row["human_only_95"] = _interval(estimate.classical)


@dataclass(frozen=True)
class Unjudged:
    """A submission listed without a rank: nothing of it could be judged (its folder could not
    be read at the latest attempt, or not one of its claims could be loaded). Never silently
    missing from the leaderboard, never counted as if it had been judged."""

    submission: str
    """Its submission id, or what the folder that could not be read is called (a Hub repo's
    id, else the folder's name)."""
    reason: str


#: How much of an unjudged submission's reason a leaderboard row shows (the run's report and
#: `judging run`'s output have it whole).
UNJUDGED_REASON_CHARS = 300


def unjudged_submissions(run_dir: Path) -> tuple[list[Unjudged], dict[str, int]]:
    """What of a run could not be judged: the submissions of which nothing could (the folders
    whose latest read failed, run.json; the submissions whose every line is a loader's error
    line) and, per other submission, how many of its claims or files failed to load."""
    store = RunStore.open(run_dir, create=False)
    try:
        unjudged = [Unjudged(failure.name, failure.reason)
                    for failure in store.info.unreadable_sources()]
        judged: set[str] = set()
        failed: dict[str, set[str]] = defaultdict(set)
        first_failure: dict[str, Identity] = {}
        for ident in store.identities():
            submission = ident[0].split("::")[0]
            if ident[1] is not None:
                judged.add(submission)
            else:
                failed[submission].add(ident[0])
                first_failure.setdefault(submission, ident)
        for submission in sorted(set(failed) - judged, key=natural_key):
            line = store.latest_line(first_failure[submission])
            reason = (line.reason if line is not None and line.reason else "its claims could "
                      "not be loaded")
            unjudged.append(Unjudged(submission, reason.removeprefix("claim could not be "
                                                                     "loaded: ")))
        return unjudged, {s: len(keys) for s, keys in failed.items() if s in judged}
    finally:
        store.close()


def build_leaderboard(finals: Iterable[ClaimDecision],
                      not_addressed: Iterable[NotAddressed] = (), *,
                      rules: EventRules | None = None,
                      submitted: Mapping[str, datetime | None] | None = None,
                      unjudged: Iterable[Unjudged] = (),
                      load_problems: Mapping[str, int] | None = None) -> Leaderboard:
    """Rank the submissions, papers and participants of these final decisions. `submitted`:
    when each submission was submitted (its commit), to count a participant's earliest papers
    first; unknown ones after, in natural order of paper id. `unjudged` submissions are listed
    unranked with their reason; `load_problems`: per ranked submission, its claims or files
    that could not be loaded (said in its note)."""
    rules = rules or EventRules()
    submitted = submitted or {}
    results = claim_results(finals, not_addressed)
    by_submission: dict[str, list[ClaimResult]] = defaultdict(list)
    by_paper: dict[str, list[ClaimResult]] = defaultdict(list)
    for result in results:
        by_submission[result.submission].append(result)
        by_paper[result.paper or "?"].append(result)
    asks = any(r.final_verdict is not None for r in results)
    submissions = [{"submission": s, "paper": next((r.paper for r in group if r.paper), None),
                    "participant": rules.participant(s), **tally(group), "note": "",
                    **final_verdict_counts(group, asks)}
                   for s, group in by_submission.items()]
    participants = _participants(submissions, rules, submitted)
    papers = [{"paper": p, "submissions": len({r.submission for r in group}), **tally(group),
               **final_verdict_counts(group, asks)}
              for p, group in by_paper.items()]
    for row in submissions:
        if problems := (load_problems or {}).get(row["submission"]):
            row["note"] = "; ".join(filter(None, [row["note"], (
                f"{problems} of its claims or files could not be loaded (see the report)")]))
    _add_unjudged(submissions, participants, unjudged, rules)
    return Leaderboard(submissions=ranked(submissions, "submission"),
                       papers=ranked(papers, "paper"),
                       participants=ranked(participants, "participant"), rules=rules)


def _participants(submissions: list[dict[str, Any]], rules: EventRules,
                  submitted: Mapping[str, datetime | None]) -> list[dict[str, Any]]:
    """Per participant: their best submission per paper, on at most the limit's earliest
    papers; marks the submissions beyond the limit (`ranked` False, a note) in place."""
    limit = rules.max_papers_per_participant
    by_participant: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in submissions:
        by_participant[row["participant"]].append(row)
    rows = []
    for participant, group in by_participant.items():
        papers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in group:
            papers[str(row["paper"])].append(row)

        first: dict[str, tuple] = {}
        for paper, rows_of_paper in papers.items():
            times = [t.timestamp() for r in rows_of_paper
                     if (t := submitted.get(r["submission"])) is not None]
            first[paper] = ((0, min(times)) if times else (1, 0.0), natural_key(paper))
        order = sorted(papers, key=first.__getitem__)
        kept = order if limit is None else order[:limit]
        counted = []
        for paper in order:
            best, *others = sorted(papers[paper], key=lambda r: (rank_key(r),
                                                                 natural_key(r["submission"])))
            if paper not in kept:
                for row in papers[paper]:
                    row["ranked"] = False
                    row["note"] = (f"beyond the {limit}-paper limit of {participant}: not "
                                   f"counted")
                continue
            counted.append(best)
            for row in others:
                row["note"] = (f"{participant}'s other submission on {paper} "
                               f"({best['submission']}) counts for the participant")
        totals = _with_rate({c: sum(r[c] for r in counted) for c in COLUMNS[:-1]})
        over = len(order) - len(kept)
        rows.append({"participant": participant, "papers": len(order),
                     "submissions": len(group), "counted": len(counted), **totals,
                     "note": f"{len(order)} papers: {over} beyond the limit of {limit}, "
                             f"flagged and not counted" if over else ""})
    return rows


def _add_unjudged(submissions: list[dict[str, Any]], participants: list[dict[str, Any]],
                  unjudged: Iterable[Unjudged], rules: EventRules) -> None:
    """The unjudged submissions as unranked rows (zero counts, the reason in the note), and
    their participants: one with nothing judged is listed unranked, one with judged
    submissions keeps its rank and its note says what could not be judged."""
    unjudged_of: Counter[str] = Counter()
    for item in unjudged:
        participant = rules.participant(item.submission)
        reason = item.reason if len(item.reason) <= UNJUDGED_REASON_CHARS else \
            item.reason[:UNJUDGED_REASON_CHARS - 1] + "…"
        submissions.append({"submission": item.submission, "paper": None,
                            "participant": participant, **tally([]), "ranked": False,
                            "note": f"not ranked: nothing could be judged: {reason}"})
        unjudged_of[participant] += 1
    by_participant = {row["participant"]: row for row in participants}
    for participant, count in unjudged_of.items():
        row = by_participant.get(participant)
        if row is None:
            participants.append({"participant": participant, "papers": 0, "submissions": count,
                                 "counted": 0, **tally([]), "ranked": False,
                                 "note": f"not ranked: nothing could be judged of its {count} "
                                         f"submission(s)"})
            continue
        row["submissions"] += count
        row["note"] = "; ".join(filter(None, [row["note"], f"nothing could be judged of {count} "
                                                           f"more submission(s)"]))


def leaderboard_rows(finals: Iterable[ClaimDecision],
                     not_addressed: Iterable[NotAddressed] = (), *,
                     rules: EventRules | None = None) -> tuple[list[dict], list[dict]]:
    """(per submission, per paper) rows, best first (`build_leaderboard`)."""
    board = build_leaderboard(finals, not_addressed, rules=rules)
    return board.submissions, board.papers


def consensus_row(claim: ClaimConsensus) -> dict:
    """One registry claim's consensus as a leaderboard row (CONSENSUS_COLUMNS)."""
    flagged = lambda name: sum(1 for r in claim.reproductions  # noqa: E731
                               if any(f.name == name for f in r.flags))
    return {"registry_claim": claim.claim_id, "paper": claim.paper_id,
            "reproductions": len(claim.reproductions), "independent": claim.independent,
            **{v: claim.votes.get(v, 0) for v in ("verified", "falsified", "inconclusive")},
            "consensus": claim.verdict or "none", "support": claim.support,
            "agreement": claim.agreement, "contradicting": flagged("contradicts_consensus"),
            "value_outliers": flagged("value_outlier"),
            "spread": "; ".join(s.describe() for s in claim.spread),
            "counted_from": ", ".join(f"{n} {what}" for what, n in claim.counted_from.items())}


def consensus_rows(report: ConsensusReport | None) -> list[dict]:
    return [consensus_row(c) for c in report.claims] if report is not None else []


def submission_times(run_dir: Path) -> dict[str, datetime | None]:
    """When each submission of a run was submitted: the date of the commit judged (Hub sources
    pinned by `--as-of`), else the start of the first invocation that judged it from the Hub
    (`judging watch` judges a Space in the poll after it appears), else unknown."""
    store = RunStore.open(run_dir, create=False)
    try:
        times: dict[str, datetime | None] = {}
        for content in store.claims().values():
            when = content.source.committed_at if content.source is not None else None
            times[content.key.submission_id] = when or times.get(content.key.submission_id)
        for invocation in store.info.invocations:
            for submission in invocation.submissions:
                if times.get(submission) is None:
                    times[submission] = invocation.started_at
        return times
    finally:
        store.close()


def run_leaderboard(run_dir: Path, *, rules: EventRules | None = None) -> Leaderboard:
    """The leaderboard of a resolved run (final.jsonl and not_addressed.jsonl)."""
    path = RunPaths(Path(run_dir)).final
    if not path.is_file():
        raise JudgingError(f"{path}: no final decisions yet; run `judging resolve {run_dir}` "
                           f"first")
    unjudged, load_problems = unjudged_submissions(Path(run_dir))
    board = build_leaderboard(read_jsonl(path, ClaimDecision),
                              read_not_addressed(Path(run_dir)), rules=rules,
                              submitted=submission_times(Path(run_dir)), unjudged=unjudged,
                              load_problems=load_problems)
    return add_intervals(board, run_claim_rows(run_dir))


def _cell(column: str, row: Mapping[str, Any]) -> str:
    if column == "rank":
        return rank_text(row)
    value = row.get(column)
    return "" if value is None else str(value)


def write_leaderboard(run_dir: Path, *, rules: EventRules | None = None,
                      board: Leaderboard | None = None, calibration_dir: Path | None = None,
                      rubrics_dir: Path | None = None) -> list[Path]:
    """leaderboard_{submissions,papers,participants}.csv, leaderboard.html and, when the run
    reproduces registry claims, leaderboard_consensus.csv; each file replaced whole. The page
    also shows the AI's pass rates corrected for its measured errors (`calibration_dir`)."""
    board = board or run_leaderboard(run_dir, rules=rules)
    paths = RunPaths(Path(run_dir))
    consensus = consensus_rows(load_consensus(run_dir))
    submissions_csv, papers_csv, page = paths.leaderboards
    finals = FINAL_VERDICT_COLUMNS if any(FINAL_VERDICT_COLUMNS[0] in row
                                          for row in board.submissions) else []
    tables: list[tuple[list[dict], Path, list[str]]] = [
        (board.submissions, submissions_csv, [*SUBMISSION_COLUMNS, *finals, "tie"]),
        (board.papers, papers_csv, [*PAPER_COLUMNS, *finals, "tie"]),
        (board.participants, paths.leaderboard_participants, [*PARTICIPANT_COLUMNS, "tie"])]
    if consensus:
        tables.append((consensus, paths.leaderboard_consensus, CONSENSUS_COLUMNS))
    for rows, target, columns in tables:
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        write_text_atomic(target, text.getvalue())
    corrected = corrected_html(corrected_rates(run_dir, calibration_dir=calibration_root(
        calibration_dir), rubrics_dir=rubrics_dir))
    stale = stale_decisions(run_dir)
    write_text_atomic(page, leaderboard_html(board, consensus, extra=corrected, stale=stale))
    write_text_atomic(paths.leaderboard_rule, "\n".join(
        [*([stale] if stale else []), *rule_lines(board.submissions), *board.uncertainty, "",
         "Columns:",
         *(f"  {c}: {h}" for c, h in COLUMN_HELP.items())]) + "\n")
    written = [submissions_csv, papers_csv, page, paths.leaderboard_participants,
               paths.leaderboard_rule]
    return [*written, paths.leaderboard_consensus] if consensus else written


def _html_table(title: str, rows: Sequence[Mapping[str, Any]], columns: list[str]) -> str:
    if not rows:
        return f"<h2>{html.escape(title)}</h2><p>none</p>"
    # a column name breaks after its underscores (final_<wbr>verified), never inside a word:
    # unbroken, the names alone made the table wider than a 1400-px window
    head = "".join(f"<th title='{html.escape(COLUMN_HELP.get(c, ''), quote=True)}'>"
                   f"{html.escape(c).replace('_', '_<wbr>')}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_page_cell(c, row))}</td>"
                                    for c in columns) + "</tr>" for row in rows)
    return f"<h2>{html.escape(title)}</h2><table><tr>{head}</tr>{body}</table>"


def _page_cell(column: str, row: Mapping[str, Any]) -> str:
    """A cell of the page: "AI-only" where every row would repeat the reason the page's rule
    lines give once (the CSV keeps the words whole)."""
    shown = _cell(column, row)
    return "AI-only" if shown == AI_ONLY else shown


def corrected_html(rows: list[CorrectedRow]) -> str:
    """The page's section of pass rates corrected for the judges' measured errors."""
    title = "<h2>Pass rates corrected for the judges' errors</h2>"
    if not rows:
        return (title + "<p>No calibration of this run's judges: no rate can be corrected "
                        "(<code>judging calibrate</code>).</p>")
    body = []
    for row in rows:
        r = row.rate
        corrected = "–" if r.corrected is None or row.stale else \
            f"{r.corrected:.3f}" + (f" [{r.interval[0]:.3f}, {r.interval[1]:.3f}]"
                                    if r.interval else "") + (" (clipped)" if r.clipped else "")
        status = f"stale: {row.stale}" if row.stale else row.decision.replace("_", " ")
        body.append("<tr>" + "".join(f"<td>{html.escape('–' if v is None else str(v))}</td>"
                                     for v in (
            row.rubric, row.judge, row.criterion, r.n, f"{r.observed:.3f}",
            None if r.sensitivity is None else f"{r.sensitivity:.3f}",
            None if r.specificity is None else f"{r.specificity:.3f}", corrected, status))
            + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (
        "rubric", "judge", "criterion", "judged", "observed pass rate", "sensitivity",
        "specificity", "corrected [95%]", "calibration"))
    return (title + "<table><tr>" + head + "</tr>" + "".join(body) + "</table><p>The AI's pass "
            "rate on this run's claims, corrected for the sensitivity and specificity its "
            "calibration measured against people (Rogan–Gladen); the interval carries the "
            "calibration's uncertainty. A stale calibration corrects nothing.</p>")


def leaderboard_html(board: Leaderboard, consensus: list[dict], *, extra: str = "",
                     stale: str | None = None) -> str:
    limit = board.rules.max_papers_per_participant
    consensus_html = (_html_table("Consensus per registry claim", consensus, CONSENSUS_COLUMNS)
                      + "<p>The majority direction among independent, full-scale reproductions "
                        "when at least 3 give it and it holds more than half of them "
                        "(judging consensus). It raises review priority and informs; it "
                        "changes no outcome.</p>") if consensus else ""
    finals = FINAL_VERDICT_COLUMNS if any(FINAL_VERDICT_COLUMNS[0] in row
                                          for row in board.submissions) else []
    legend = "".join(f"<li><b>{html.escape(c)}</b>: {html.escape(h)}</li>"
                     for c, h in [*COLUMN_HELP.items(),
                                  *([("final_*", FINAL_VERDICT_HELP)] if finals else [])])
    participants_note = (f"At most {limit} papers count per participant (the earliest "
                         f"submitted); submissions beyond it are flagged and unranked."
                         if limit else "No limit on papers per participant.")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>judging leaderboard</title>"
            "<style>body{font:14px system-ui,sans-serif;margin:1rem}table{border-collapse:"
            "collapse}td,th{border:1px solid #ccc;padding:3px 4px}th{background:#eee;"
            "font-size:11px;vertical-align:bottom;text-align:left}"
            "td{overflow-wrap:anywhere;font-size:13px}</style>"
            "</head><body><h1>Leaderboard"
            + (f": {html.escape(board.rules.name)}" if board.rules.name else "") + "</h1>"
            + (f"<p class='stale'><b>{html.escape(stale)}</b></p>" if stale else "")
            + "".join(f"<p class='rule'>{html.escape(line)}</p>"
                      for line in [*rule_lines(board.submissions), *board.uncertainty])
            + f"<ul>{legend}</ul>"
            + _html_table("Submissions", board.submissions, [*SUBMISSION_COLUMNS, *finals])
            + _html_table("Participants", board.participants, PARTICIPANT_COLUMNS)
            + f"<p>{html.escape(participants_note)}</p>"
            + _html_table("Papers", board.papers, [*PAPER_COLUMNS, *finals]) + consensus_html
            + extra + "</body></html>")
