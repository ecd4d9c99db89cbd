"""Which Hub repos a run judges, and at which commit: Spaces found by their tags (`--discover`)
and each Hub source as it was at a deadline (`--as-of`).

`discover_spaces` lists every Space carrying all the given tags (`HfApi.list_spaces`, following
the Hub's pages of 1,000 to the end; the tags go to the API's filter and are checked again on each
result, so that "all the tags" holds whatever the server does with several filters).
`commit_as_of` picks, from `HfApi.list_repo_commits`, the last commit at or before a deadline.
`plan_sources` turns the command line's sources, tags and deadline into the list of sources to
download, each pinned to a commit where one was resolved, plus the sources skipped with their
reason. Nothing here reads the environment: the token is an argument.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from judging.errors import SourceError
from judging.intake.sources import HUB_PREFIX, HubSource, hub_errors, parse_hub_source
from judging.models import SubmissionSource

log = logging.getLogger(__name__)


def parse_as_of(text: str) -> datetime:
    """An ISO 8601 date or date-time as an aware UTC datetime: UTC when no zone is given; a date
    alone is that day at 00:00. Raises SourceError, one line, for anything else."""
    value = text.strip()
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise SourceError(f"--as-of {text!r} is not an ISO 8601 date-time: use e.g. "
                          f"2026-05-01T23:59:59Z, 2026-05-01T23:59:59+02:00 or 2026-05-01 "
                          f"(UTC when no zone is given)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


@dataclass(frozen=True)
class DiscoveredSpace:
    repo_id: str
    sha: str | None
    """The head commit when the listing gave it."""
    tags: tuple[str, ...] = ()

    @property
    def source(self) -> HubSource:
        return HubSource("space", self.repo_id, self.sha, None)


@dataclass(frozen=True)
class PinnedCommit:
    sha: str
    created_at: datetime
    title: str = ""


def _api(token: str | None, endpoint: str | None):
    from huggingface_hub import HfApi

    return HfApi(endpoint=endpoint, token=token)


def discover_spaces(tags: Sequence[str], *, token: str | None = None,
                    endpoint: str | None = None) -> list[DiscoveredSpace]:
    """Every Space carrying all of `tags`, sorted by repo id (all pages of the listing)."""
    wanted = [tag.strip() for tag in tags if tag.strip()]
    if not wanted:
        raise SourceError("--discover needs at least one non-empty tag")
    folded = {tag.casefold() for tag in wanted}
    found: dict[str, DiscoveredSpace] = {}
    with hub_errors(f"listing the Spaces tagged {' + '.join(wanted)}"):
        for info in _api(token, endpoint).list_spaces(filter=wanted,
                                                      expand=["sha", "tags"]):
            space_tags = tuple(info.tags or ())
            if not folded <= {tag.casefold() for tag in space_tags}:
                continue  # the server matched fewer tags than asked: "all the tags" holds here
            found.setdefault(info.id, DiscoveredSpace(info.id, info.sha, space_tags))
    return [found[repo_id] for repo_id in sorted(found)]


def commit_as_of(source: HubSource, deadline: datetime, *, token: str | None = None,
                 endpoint: str | None = None) -> PinnedCommit | None:
    """The last commit of the source's branch (or history from its revision) made at or before
    `deadline`; None when every commit is later. Commits are read newest first; the latest date
    at or before the deadline wins, the first listed among equal dates."""
    if deadline.tzinfo is None:
        raise ValueError("the deadline must be timezone-aware")
    with hub_errors(f"{source.spec}: reading its commit history"):
        commits = _api(token, endpoint).list_repo_commits(
            source.repo_id, repo_type=source.repo_type, revision=source.revision)
    before = [c for c in commits if c.created_at <= deadline]
    if not before:
        return None
    best = max(before, key=lambda c: c.created_at)  # max keeps the first of equal dates
    return PinnedCommit(sha=best.commit_id, created_at=best.created_at, title=best.title)


@dataclass
class PlannedSource:
    spec: str
    """What `expand_source` receives."""
    provenance: SubmissionSource | None = None
    """For a Hub source: the revision judged."""


@dataclass
class SourcePlan:
    sources: list[PlannedSource] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Sources left out, each with its reason."""
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What was done, for the user (e.g. how many Spaces discovery found)."""


def _provenance(source: HubSource, *, tags: Sequence[str] = (),
                pinned: PinnedCommit | None = None,
                as_of: datetime | None = None) -> SubmissionSource:
    return SubmissionSource(source=source.spec, repo_type=source.repo_type,
                            repo_id=source.repo_id, revision=source.revision,
                            committed_at=pinned.created_at if pinned else None, as_of=as_of,
                            discovered_by=list(tags))


def plan_sources(sources: Sequence[str], *, discover: Sequence[str] = (),
                 as_of: datetime | None = None, token: str | None = None,
                 endpoint: str | None = None) -> SourcePlan:
    """The sources a run downloads, in order: those given, then the Spaces discovered by tag
    (a Space both given and discovered is judged once, as given). With `as_of`, every Hub
    source is pinned to its last commit at or before the deadline, or skipped with that reason
    when it has none; a discovered Space without `as_of` is pinned to the head the listing saw.
    Failures become `errors` (the other sources go on)."""
    plan = SourcePlan()
    hub: list[tuple[HubSource, list[str]]] = []
    given_spaces: set[str] = set()
    for spec in sources:
        if not spec.startswith(HUB_PREFIX):
            if as_of is not None:
                plan.notes.append(f"{spec}: a local folder, read as it is (--as-of applies to "
                                  f"Hub sources)")
            plan.sources.append(PlannedSource(spec))
            continue
        try:
            source = parse_hub_source(spec)
        except SourceError as exc:
            plan.errors.append(str(exc))
            continue
        if source.repo_type == "space":
            given_spaces.add(source.repo_id)
        hub.append((source, []))
    if discover:
        tags = [tag.strip() for tag in discover if tag.strip()]
        try:
            found = discover_spaces(tags, token=token, endpoint=endpoint)
        except SourceError as exc:
            plan.errors.append(str(exc))
            found = []
        else:
            plan.notes.append(f"discovered {len(found)} Space(s) tagged {' + '.join(tags)}")
            if not found:
                plan.errors.append(f"no Space carries all the tags {', '.join(tags)}")
        for space in found:
            if space.repo_id not in given_spaces:
                # with a deadline, the history is read from the default branch
                hub.append((space.source if as_of is None
                            else HubSource("space", space.repo_id, None, None), tags))
    for source, tags in hub:
        if as_of is None:
            plan.sources.append(PlannedSource(source.spec, _provenance(source, tags=tags)))
            continue
        try:
            pinned = commit_as_of(source, as_of, token=token, endpoint=endpoint)
        except SourceError as exc:
            plan.errors.append(str(exc))
            continue
        if pinned is None:
            plan.skipped.append(f"{source.spec}: skipped, no commit at or before the deadline "
                                f"{as_of.isoformat()}")
            continue
        at = HubSource(source.repo_type, source.repo_id, pinned.sha, source.subdir)
        plan.sources.append(PlannedSource(at.spec, _provenance(at, tags=tags, pinned=pinned,
                                                               as_of=as_of)))
    return plan
