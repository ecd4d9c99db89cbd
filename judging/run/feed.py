"""What a run judges, submission by submission: the sources given and the Spaces discovered
(pinned to --as-of), each loaded into claims and the error lines of claims that could not be
loaded, the registry claims a submission leaves unanswered, only the claims of this run's shard;
and, after the first pass, the claims this run recorded, read once (`StoredClaims`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

from judging.consensus import note_reproduction
from judging.errors import JudgingError, SourceError
from judging.intake import (
    HUB_PREFIX,
    LoadedSubmission,
    Registry,
    expand_source,
    find_manifest,
    label_name,
    load_folder,
    load_submission,
    parse_hub_source,
    plan_sources,
    source_label,
)
from judging.models import ClaimInput, ClaimKey, Judgment, NotAddressed, SubmissionSource
from judging.rubrics import Rubric
from judging.run.lines import LOADER, problem_judgment, withdrawal
from judging.run.request import RunRequest, RunResult
from judging.rundir import Identity, RunPaths, RunStore, UnreadableSource

log = logging.getLogger(__name__)

Batch = tuple[list[ClaimInput], list[Judgment]]
"""One submission's claims to judge, and the lines to write as they are: the error lines of its
claims that failed to load, and the withdrawals of what its latest load no longer holds."""


def not_addressed(loaded: LoadedSubmission, registry: Registry | None) -> list[NotAddressed]:
    """The registry claims of the submission's paper that it has no claim for. A claim that
    failed to load still addresses its registry claim (its error line is its judgment)."""
    if registry is None:
        return []
    answered = {c.claim.claim_id for c in loaded.claims}
    answered |= {p.claim_id for p in loaded.problems if p.claim_id is not None}
    header = loaded.header
    return [NotAddressed(submission_id=header.submission_id, paper_id=header.paper_id,
                         claim_id=entry.claim_id, statement=entry.statement, source=entry.source)
            for entry in registry.not_addressed(header.paper_id, answered)]


class StoredClaims:
    """The one read of claims.jsonl a run makes after its first pass: `claims()` streams the
    claims to the integrity check (`write_run_integrity`) and notes on the way, keeping keys
    only, the registry claims' reproductions (`reproductions`, for the consensus) and the claims
    of this run's shard a second-pass rubric applies to (`batches()`, read back by key). The
    claims file does not change after the first pass (the second records no claim)."""

    def __init__(self, store: RunStore, request: RunRequest, later: list[Rubric]):
        self.store = store
        self.request = request
        self.later = later
        self.reproductions: dict[str, list[str]] = {}
        """Registry claim id -> keys of the claims that reproduce it (`note_reproduction`)."""
        self._second: list[str] = []
        self.read = False

    def claims(self) -> Iterator[ClaimInput]:
        """Every stored claim, as `RunStore.iter_claims` gives them, one at a time."""
        shard = self.request.shard
        for claim in self.store.iter_claims():
            note_reproduction(self.reproductions, claim)
            if (shard is None or shard.holds(claim.key)) and any(
                    rubric.applies_to_input(claim) for rubric in self.later):
                self._second.append(sys.intern(str(claim.key)))
            yield claim
        self.read = True

    def batches(self, batch: int = 200) -> Iterator[Batch]:
        """The second pass's claims in batches, in the file's order (after `claims()`)."""
        assert self.read, "StoredClaims.claims() is read first"
        for start in range(0, len(self._second), batch):
            claims = [claim for claim in map(self.store.claim, self._second[start:start + batch])
                      if claim is not None]
            if claims:
                yield claims, []


class Feed:
    """The submissions of a run's sources, loaded one at a time (`submissions`); source errors,
    notes, the revisions judged and the registry claims not addressed go to the result."""

    def __init__(self, request: RunRequest, store: RunStore, *, extractor: object | None):
        self.request = request
        self.store = store
        self.extractor = extractor
        """The LLM extractor injected into the logbook importer (`--extract`), or None."""
        self._before: dict[str, list[Identity]] | None = None
        """The identities with a line when the run began, by submission (`_withdrawn`)."""

    def submissions(self, registry: Registry | None, result: RunResult) -> Iterator[Batch]:
        """(claims, error lines) per submission, in source order."""
        request = self.request
        seen: dict[str, Path] = {}
        plan = plan_sources(request.sources, discover=request.discover, as_of=request.as_of,
                            token=request.hf_token)
        result.source_errors += plan.errors
        result.skipped_sources += plan.skipped
        result.notes += plan.notes
        root = self.store.paths.sources
        for planned in plan.sources:
            try:
                folders = expand_source(planned.spec, download_root=root,
                                        token=request.hf_token,
                                        limits=request.download_limits)
            except JudgingError as exc:
                _unreadable(result, source_label(planned.spec, download_root=root), str(exc))
                continue
            for folder in folders:
                label = source_label(planned.spec, folder, download_root=root)
                loaded = self._load(folder, registry, result, label)
                if loaded is None or not self._owned(loaded, planned.provenance, result, label) \
                        or not self._first(loaded, folder, seen, result, label):
                    continue
                result.read_sources.append(label)
                yield self._batch(loaded, registry, planned.provenance, result)

    def _load(self, folder: Path, registry: Registry | None, result: RunResult, label: str
              ) -> LoadedSubmission | None:
        try:
            return load_folder(folder, registry=registry, logbooks_dir=self.store.paths.logbooks,
                               extractor=self.extractor)
        except JudgingError as exc:
            _unreadable(result, label, str(exc))
        except Exception as exc:  # a loader bug must not end the batch: report it
            log.debug("loading %s failed", folder, exc_info=True)
            _unreadable(result, label, f"{folder}: internal error while loading: "
                                       f"{type(exc).__name__}: {exc}")
        return None

    @staticmethod
    def _owned(loaded: LoadedSubmission, source: SubmissionSource | None, result: RunResult,
               label: str) -> bool:
        """Whether a Space from the Hub names itself as a Space of its owner: its manifest's
        `submission_id` or its logbook's `space_id` is the participant's to write, and one
        naming another user's Space took that submission's place (the first loaded is judged,
        the other skipped) with its own claims under the other's name."""
        if source is None or source.repo_type != "space":
            return True
        sid, owner = loaded.header.submission_id, source.repo_id.split("/")[0]
        if "/" not in sid or sid.split("/")[0] == owner:  # no owner named (a subfolder's name)
            return True
        _unreadable(result, label, f"{source.source}: names itself {sid!r}, not a Space of "
                                   f"its owner {owner!r}: skipped")
        return False

    @staticmethod
    def _first(loaded: LoadedSubmission, folder: Path, seen: dict[str, Path],
               result: RunResult, label: str) -> bool:
        """Whether this is the first time the submission is met (a submission id used by two
        folders is an error; the same folder twice is judged once)."""
        sid = loaded.header.submission_id
        if sid in seen and seen[sid] != loaded.folder:
            _unreadable(result, label, f"{folder}: submission_id {sid!r} is also used by "
                                       f"{seen[sid]}; skipped")
            return False
        if sid in seen:
            return False
        seen[sid] = loaded.folder
        return True

    def _batch(self, loaded: LoadedSubmission, registry: Registry | None,
               source: SubmissionSource | None,
               result: RunResult) -> Batch:
        shard = self.request.shard
        sid = loaded.header.submission_id
        result.loaded.add(sid)
        result.not_addressed += [r for r in not_addressed(loaded, registry)
                                 if shard is None or shard.holds(r.key)]
        claims = [c for c in loaded.claims if shard is None or shard.holds(c.key)]
        problems = [p for p in loaded.problems if shard is None or shard.holds(p.key)]
        if source is not None:  # a Hub source: the revision judged
            result.submissions[sid] = source
            claims = [claim.model_copy(update={"source": source}) for claim in claims]
        return claims, [*self._withdrawn(loaded), *(
            problem_judgment(p, run_id=self.store.info.run_id, paper_id=loaded.header.paper_id)
            for p in problems)]

    def _withdrawn(self, loaded: LoadedSubmission) -> list[Judgment]:
        """Lines withdrawing what the submission's latest load (this one) no longer holds: a
        claim it no longer has, the error line of a claim that now loads (a Space fixed since
        it could not be loaded), the judged lines of a claim that now fails to load. The
        append-only file keeps the earlier lines; the run's reader honours the withdrawal."""
        if self._before is None:
            self._before = self.store.identities_by_submission()
        shard = self.request.shard
        sid = loaded.header.submission_id
        claims = {str(c.key) for c in loaded.claims}
        problems = {str(p.key) for p in loaded.problems}
        wanted: list[tuple[Identity, str]] = []
        for ident in self._before.get(sid, []):
            claim, _, judge = ident[:3]
            if shard is not None and not shard.holds(ClaimKey(
                    submission_id=sid, claim_id=claim.split("::", 1)[1])):
                continue
            if judge == LOADER and claim not in problems:
                why = f"{sid} loads now without this problem: the error no longer holds"
            elif judge != LOADER and claim in problems and claim not in claims:
                # (a key both loaded and refused is a duplicate id: the first is judged)
                why = "the claim no longer loads: see its error line"
            elif judge != LOADER and claim not in claims:
                why = f"{sid} no longer has this claim (its latest load does not)"
            else:
                continue
            wanted.append((ident, why))
        lines = self.store.newest_lines(ident for ident, _ in wanted)
        return [withdrawal(line, why, run_id=self.store.info.run_id)
                for line, (_, why) in zip(lines, wanted, strict=True) if line is not None]


def _unreadable(result: RunResult, label: str, reason: str) -> None:
    """A submission folder (or a whole source) that could not be read: a source error of the
    run, and recorded by its label for the leaderboard."""
    result.source_errors.append(reason)
    result.unreadable[label] = UnreadableSource(name=label_name(label), reason=reason)


def check_sources(request: RunRequest, registry: Registry | None) -> None:
    """The sources before anything is written: a typo'd one is an error (a Hub source is only
    parsed, it is downloaded when its turn comes); and when every source is a local folder with
    a manifest and none of them can be read (not YAML, not a manifest), the run cannot judge
    anything: a SourceError before a run folder is made. One readable submission among them
    and the run goes ahead (the others are its source errors)."""
    folders: list[Path] = []
    for spec in request.sources:
        if spec.startswith(HUB_PREFIX):
            parse_hub_source(spec)
        else:
            folders += expand_source(spec, download_root=RunPaths(request.out).sources,
                                     warn_skipped=False)
    if not folders or request.discover or \
            any(spec.startswith(HUB_PREFIX) for spec in request.sources):
        return
    errors = []
    for folder in folders:
        if find_manifest(folder) is None:
            return
        try:
            load_submission(folder, registry=registry)
            return
        except JudgingError as exc:
            errors.append(str(exc))
    raise SourceError("; ".join(errors))
