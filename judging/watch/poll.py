"""One poll of `judging watch`: list the tagged Spaces (every page), decide which have a revision
not judged yet, judge them, and bring the decisions, the leaderboard and (with `--push`) the
review queue up to date.

- A Space whose listed head is the one last seen is left alone: never downloaded or judged again.
- A new head is judged at that head; with a deadline (`--as-of`), at its last commit at or before
  the deadline, so a revision made after the deadline is never taken (a Space with no commit by
  then is `skipped`, with that reason, until its head changes).
- The run of a poll is one `judging run` over every Space the watch judges, each pinned to its
  revision: unchanged ones resume (their lines are skipped by input hash), and the files derived
  from all submissions (not addressed registry claims, integrity pairs, consensus) are computed
  from all of them. A poll that finds nothing new runs nothing.
- A Space whose revision could not be judged (download or loading failed) is tried again by the
  next polls, up to `max_attempts` times per revision, then left `failed` with the reason until
  its head changes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from judging.errors import JudgingError
from judging.intake import HubSource, commit_as_of, discover_spaces
from judging.resolve import load_event_rules, write_leaderboard, write_resolution
from judging.run import RunRequest, RunResult, run_judging
from judging.watch.state import PollRecord, WatchedSpace, WatchState, read_state, write_state

log = logging.getLogger(__name__)

#: Tries of one revision of one Space before it is left `failed` until its head changes.
MAX_ATTEMPTS = 3


@dataclass
class WatchOptions:
    tags: list[str]
    request: RunRequest
    """What each poll's run looks like (`out`, registry, judges, rubrics...); its sources are
    the watched Spaces, each pinned to its revision."""
    as_of: datetime | None = None
    calibration_dir: Path | None = None
    event: Path | None = None
    max_attempts: int = MAX_ATTEMPTS
    push: Callable[[Path], str] | None = None
    """Pushes the run's new records to Argilla after a poll that judged something; returns a
    line for the report (`judging watch --push`)."""

    @property
    def out(self) -> Path:
        return self.request.out


@dataclass
class PollReport:
    """What one poll did, for the console (`line`) and watch.json (`record`)."""

    record: PollRecord
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        r = self.record
        if r.error:
            return f"poll failed: {r.error}"
        head = (f"{r.listed} Space(s) listed: {r.new} new, {r.changed} with a new revision; "
                f"judged {r.judged}, failed {r.failed}, {r.written} new judgment line(s)")
        return "; ".join([head, *self.notes])


def _now() -> datetime:
    return datetime.now(UTC)


def start_state(options: WatchOptions) -> WatchState:
    """The watch state of the run directory, checked against this invocation's tags and
    deadline (a run directory follows one set of tags)."""
    state = read_state(options.out)
    tags = sorted(dict.fromkeys(t.strip() for t in options.tags if t.strip()))
    if not tags:
        raise JudgingError("--discover needs at least one non-empty tag")
    if state is None:
        return WatchState(tags=tags, as_of=options.as_of)
    if sorted(state.tags) != tags:
        raise JudgingError(f"{options.out} follows the Spaces tagged {' + '.join(state.tags)}; "
                           f"watch them with the same --discover, or give another --out")
    if state.as_of != options.as_of:
        # A deadline moved (or given now): revisions are chosen afresh from the new one.
        for space in state.spaces.values():
            space.head = None
        state.as_of = options.as_of
    return state


def _target(options: WatchOptions, repo_id: str, head: str | None
            ) -> tuple[str | None, datetime | None, str | None]:
    """(revision to judge, its date, why none): the head, or with a deadline the last commit at
    or before it."""
    token = options.request.hf_token
    if options.as_of is None and head is not None:
        return head, None, None
    deadline = options.as_of or _now()
    pinned = commit_as_of(HubSource("space", repo_id, None, None), deadline, token=token)
    if pinned is None:
        return None, None, f"no commit at or before the deadline {deadline.isoformat()}"
    return pinned.sha, pinned.created_at, None


def plan_poll(options: WatchOptions, state: WatchState, record: PollRecord) -> list[str]:
    """List the Spaces and mark in `state` what this poll judges; the repo ids to judge."""
    now = _now()
    listed = discover_spaces(state.tags, token=options.request.hf_token)
    record.listed = len(listed)
    seen = {space.repo_id for space in listed}
    for repo_id, known in state.spaces.items():
        known.listed = repo_id in seen
    due = []
    for space in listed:
        known = state.spaces.get(space.repo_id)
        if known is not None and known.head is not None and known.head == space.sha:
            retry = known.status == "pending" or (known.status == "failed"
                                                  and known.attempts < options.max_attempts)
            if retry:
                due.append(space.repo_id)
            continue
        sha, committed_at, why = _target(options, space.repo_id, space.sha)
        if known is None:
            known = state.spaces[space.repo_id] = WatchedSpace(first_seen=now)
            record.new += 1
        known.head = space.sha
        if sha is None:
            known.status, known.reason = "skipped", why
            continue
        if sha == known.sha and known.status == "judged":
            continue  # a new head after the deadline: the judged revision stands
        if known.sha is not None and sha != known.sha:
            record.changed += 1
        known.sha, known.committed_at = sha, committed_at
        known.status, known.attempts, known.reason = "pending", 0, None
        due.append(space.repo_id)
    return due


def _sources(state: WatchState) -> list[str]:
    """Every Space judged or to judge, pinned to its revision."""
    return [f"hf://spaces/{repo_id}@{space.sha}" for repo_id, space in sorted(state.spaces.items())
            if space.sha is not None and space.status in ("judged", "pending", "failed")]


def _settle(state: WatchState, due: list[str], result: RunResult, record: PollRecord) -> None:
    """Mark what the run judged; a due Space it did not judge failed, with the run's errors that
    name it."""
    judged = {(s.repo_id, s.revision) for s in result.submissions.values()
              if s.repo_type == "space"}
    now = _now()
    for repo_id in due:
        space = state.spaces[repo_id]
        if (repo_id, space.sha) in judged:
            space.status, space.judged_at, space.reason, space.attempts = "judged", now, None, 0
            record.judged += 1
            continue
        named = [e for e in result.source_errors + result.skipped_sources
                 if re.search(rf"\b{re.escape(repo_id)}\b", e)]
        space.status, space.attempts = "failed", space.attempts + 1
        space.reason = "; ".join(named)[:500] or "not judged (see run.json's invocation)"
        record.failed += 1


def poll(options: WatchOptions, state: WatchState, *,
         on_progress: Callable[[int, int], None] | None = None) -> PollReport:
    """One poll; the state is written after the plan and after the run."""
    record = PollRecord(started_at=_now())
    report = PollReport(record=record)
    state.polls.append(record)
    try:
        due = plan_poll(options, state, record)
    except JudgingError as exc:
        record.error, record.ended_at = str(exc), _now()
        write_state(options.out, state)
        return report
    write_state(options.out, state)
    if due:
        request = replace(options.request, sources=_sources(state), discover=[], as_of=None)
        try:
            result = run_judging(request, on_progress=on_progress)
        except JudgingError as exc:  # the judge or the measuring cannot go on: the next poll
            record.error, record.ended_at = str(exc), _now()  # tries again (due stays pending)
            write_state(options.out, state)
            return report
        record.written = result.written
        _settle(state, due, result, record)
        write_state(options.out, state)
        report.notes += after_judging(options)
    record.ended_at = _now()
    write_state(options.out, state)
    return report


def after_judging(options: WatchOptions) -> list[str]:
    """Decisions and the leaderboard from what is judged now (and the review queue in Argilla,
    with `--push`); one note each. A step that fails says why; the watch goes on."""
    notes = []
    try:
        resolution = write_resolution(options.out, calibration_dir=options.calibration_dir,
                                      rubrics_dir=options.request.rubrics_dir)
        notes.append(f"decided {resolution.claims} claim(s)")
        write_leaderboard(options.out, rules=load_event_rules(options.event),
                          calibration_dir=options.calibration_dir,
                          rubrics_dir=options.request.rubrics_dir)
        notes.append("leaderboard written")
    except JudgingError as exc:
        notes.append(f"decisions and leaderboard not written: {exc}")
    if options.push is not None:
        try:
            notes.append(options.push(options.out))
        except JudgingError as exc:
            notes.append(f"review queue not pushed: {exc}")
    return notes
