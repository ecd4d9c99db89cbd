"""What a run judges, submission by submission: the sources given and the Spaces discovered
(pinned to --as-of), each loaded into claims and the error lines of claims that could not be
loaded, the registry claims a submission leaves unanswered, only the claims of this run's shard;
or, for the second pass, the claims this run recorded."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from judging.errors import JudgingError, SourceError
from judging.intake import (
    HUB_PREFIX,
    LoadedSubmission,
    Registry,
    expand_source,
    find_manifest,
    load_folder,
    load_submission,
    parse_hub_source,
    plan_sources,
)
from judging.models import ClaimInput, Judgment, NotAddressed, SubmissionSource
from judging.run.lines import problem_judgment
from judging.run.request import RunRequest, RunResult
from judging.rundir import RunPaths, RunStore

log = logging.getLogger(__name__)

Batch = tuple[list[ClaimInput], list[Judgment]]
"""One submission's claims to judge and the error lines of its claims that failed to load."""


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


def stored_claims(store: RunStore, request: RunRequest, batch: int = 200) -> Iterator[Batch]:
    """The claims this run recorded (of its shard), in batches (a second pass over the run)."""
    claims: list[ClaimInput] = []
    for claim in store.iter_claims():
        if request.shard is None or request.shard.holds(claim.key):
            claims.append(claim)
        if len(claims) >= batch:
            yield claims, []
            claims = []
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

    def submissions(self, registry: Registry | None, result: RunResult) -> Iterator[Batch]:
        """(claims, error lines) per submission, in source order."""
        request = self.request
        seen: dict[str, Path] = {}
        plan = plan_sources(request.sources, discover=request.discover, as_of=request.as_of,
                            token=request.hf_token)
        result.source_errors += plan.errors
        result.skipped_sources += plan.skipped
        result.notes += plan.notes
        for planned in plan.sources:
            try:
                folders = expand_source(planned.spec, download_root=self.store.paths.sources,
                                        token=request.hf_token)
            except JudgingError as exc:
                result.source_errors.append(str(exc))
                continue
            for folder in folders:
                loaded = self._load(folder, registry, result)
                if loaded is None or not self._owned(loaded, planned.provenance, result) \
                        or not self._first(loaded, folder, seen, result):
                    continue
                yield self._batch(loaded, registry, planned.provenance, result)

    def _load(self, folder: Path, registry: Registry | None, result: RunResult
              ) -> LoadedSubmission | None:
        try:
            return load_folder(folder, registry=registry, logbooks_dir=self.store.paths.logbooks,
                               extractor=self.extractor)
        except JudgingError as exc:
            result.source_errors.append(str(exc))
        except Exception as exc:  # a loader bug must not end the batch: report it
            log.debug("loading %s failed", folder, exc_info=True)
            result.source_errors.append(f"{folder}: internal error while loading: "
                                        f"{type(exc).__name__}: {exc}")
        return None

    @staticmethod
    def _owned(loaded: LoadedSubmission, source: SubmissionSource | None, result: RunResult
               ) -> bool:
        """Whether a Space from the Hub names itself as a Space of its owner: its manifest's
        `submission_id` or its logbook's `space_id` is the participant's to write, and one
        naming another user's Space took that submission's place (the first loaded is judged,
        the other skipped) with its own claims under the other's name."""
        if source is None or source.repo_type != "space":
            return True
        sid, owner = loaded.header.submission_id, source.repo_id.split("/")[0]
        if "/" not in sid or sid.split("/")[0] == owner:  # no owner named (a subfolder's name)
            return True
        result.source_errors.append(f"{source.source}: names itself {sid!r}, not a Space of "
                                    f"its owner {owner!r}: skipped")
        return False

    @staticmethod
    def _first(loaded: LoadedSubmission, folder: Path, seen: dict[str, Path],
               result: RunResult) -> bool:
        """Whether this is the first time the submission is met (a submission id used by two
        folders is an error; the same folder twice is judged once)."""
        sid = loaded.header.submission_id
        if sid in seen and seen[sid] != loaded.folder:
            result.source_errors.append(f"{folder}: submission_id {sid!r} is also used by "
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
        return claims, [problem_judgment(p, run_id=self.store.info.run_id,
                                         paper_id=loaded.header.paper_id) for p in problems]


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
