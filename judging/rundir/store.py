"""The run directory: run.json, append-only judgments.jsonl, diffs/, report.html.

Every line is flushed and fsynced as it is written, so an interrupted run loses at most the
in-flight work; a torn last line (a crash mid-write) is cut off when the run is reopened.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import sys
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from judging.atomic import write_text_atomic
from judging.errors import RunStoreError
from judging.models import (
    FROM_FILE,
    ClaimInput,
    Fingerprint,
    Judgment,
    Outcome,
    SettingValue,
    StrictModel,
    SubmissionSource,
    VersionedModel,
)
from judging.rundir.layout import (
    DIFFS,
    MEASUREMENTS,
    RUN_JSON,
    SHARDS,
    WATCH,
    WATCH_LOCK,
    RunPaths,
)
from judging.rundir.shards import Shard

log = logging.getLogger(__name__)


RUN_SCHEMA = "judging.run/1"


FSYNC_INTERVAL = 1.0


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_run_id() -> str:
    return utc_now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class UnreadableSource(StrictModel):
    """A submission folder (or a whole Hub source) that an invocation could not read."""

    name: str
    """What the leaderboard calls it: a Hub repo's id (its owner is the participant), else the
    folder's name."""
    reason: str


class Invocation(StrictModel):
    """One `judging run` over this directory (a resumed run adds one)."""

    started_at: datetime
    ended_at: datetime | None = None
    status: str = "running"
    """running | finished | failed | interrupted"""
    code_version: str
    sources: list[str]
    registry: str | None = None
    rubrics: list[str] = Field(default_factory=list)
    """`id@version#hash` of every rubric used."""
    judges: list[str] = Field(default_factory=list)
    options: dict[str, SettingValue] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    """Run-level problems (a source that could not be loaded)."""
    skipped: list[str] = Field(default_factory=list)
    """Sources left out on purpose, each with its reason (e.g. no commit before `--as-of`)."""
    unreadable: dict[str, UnreadableSource] = Field(default_factory=dict)
    """The submission folders (and Hub sources) it could not read, by
    `judging.intake.source_label`: the leaderboard lists them, unranked, until a later
    invocation reads them."""
    read: list[str] = Field(default_factory=list)
    """The submission folders it read, named the same way (a read supersedes an earlier
    failure: a Space fixed by a new commit is no longer listed as unreadable)."""
    submissions: dict[str, SubmissionSource] = Field(default_factory=dict)
    """Per submission id read from the Hub: the revision judged."""
    run_id: str | None = None
    """Set by `judging merge`: the run directory (its run id) this invocation ran in."""
    shard: str | None = None
    """Set by `judging merge`: the shard ("I/N") that directory judged, if it was one."""


class MergeInput(StrictModel):
    """One run directory read by a `judging merge`."""

    path: str
    run_id: str
    shard: str | None = None
    lines: int = 0
    """Judgment lines it holds."""


class Merge(StrictModel):
    """One `judging merge` into this directory (a merge into an existing one adds one)."""

    started_at: datetime
    ended_at: datetime | None = None
    code_version: str
    inputs: list[MergeInput] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    """added / already present lines, conflicts, claims, fingerprints, diff files..."""
    warnings: list[str] = Field(default_factory=list)


class RunInfo(VersionedModel):
    """run.json."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.run/1"] = Field(default=RUN_SCHEMA, alias="schema")
    run_id: str
    created_at: datetime
    invocations: list[Invocation] = Field(default_factory=list)
    shard: Shard | None = None
    """`judging run --shard I/N`: this directory judges only the claims of that shard."""
    merges: list[Merge] = Field(default_factory=list)
    """`judging merge` into this directory: what each merge read and found."""
    roots: list[str] = Field(default_factory=list)
    """Every absolute path this directory was written at: claims.jsonl names files under it
    (logbook figures, Hub downloads), which `judging merge` rebases onto the merged directory
    even when the directory was moved (a shard run elsewhere, then downloaded)."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.run/1 is the first version: every run.json has always carried it (`shard`,
        # `merges` and an invocation's `unreadable` and `read` are optional fields added
        # later, not a shape change).
        return data

    def unreadable_sources(self) -> list[UnreadableSource]:
        """The submission folders whose latest attempt to read them failed, in the order they
        failed (an invocation that read one since supersedes its failures)."""
        latest: dict[str, UnreadableSource | None] = {}
        for invocation in self.invocations:
            for label, failure in invocation.unreadable.items():
                latest.pop(label, None)
                latest[label] = failure
            for label in invocation.read:
                latest[label] = None
        return [failure for failure in latest.values() if failure is not None]


#: The path fields of a claim (besides its evidence files, by role).
CLAIM_PATH_FIELDS = ("root", "published_path", "reproduced_path", "published_data_path",
                     "reproduced_data_path", "participant_reference_path")


def _map_claim_paths(claim: ClaimInput, move: Callable[[Path], Path]) -> ClaimInput:
    update: dict[str, Any] = {name: None if (path := getattr(claim, name)) is None else move(path)
                              for name in CLAIM_PATH_FIELDS}
    update["evidence_paths"] = {role: move(path) for role, path in claim.evidence_paths.items()}
    return claim.model_copy(update=update)


class LineKey(NamedTuple):
    """What makes two judgment lines "the same work": a rerun skips a line with this key."""

    claim: str
    rubric: str | None
    judge: str
    sample: int
    swapped: bool
    input_hash: str


def line_key(judgment: Judgment) -> LineKey:
    rubric = f"{judgment.rubric}#{judgment.rubric.hash}" if judgment.rubric else None
    return LineKey(str(judgment.claim), rubric, judgment.judge, judgment.sample,
                   judgment.swapped, judgment.input_hash)


M = TypeVar("M", bound=BaseModel)


def judgment_head(name: str, doc: str, *fields: str, **replaced: Any) -> type[BaseModel]:
    """A model that reads only `fields` of a judgment line, each as `Judgment` declares it (a
    `replaced` one as given, `(annotation, default)`), and skips the rest of the line: a tenth of
    the CPU of a whole `Judgment`, whose signals and answers are validated one by one, for
    passes over every line of a run that need no more (`RunStore.iter_latest_as`). A head reads
    the lines of every judgment version so far (judging.judgment/1) without migrating them: a
    Judgment version that migrates one of its fields must give the heads a migration too."""
    declared = {field: (Judgment.model_fields[field].annotation, Judgment.model_fields[field])
                for field in fields}
    return create_model(name, __config__=ConfigDict(extra="ignore", populate_by_name=True),
                        __doc__=doc, __module__=__name__, **declared, **replaced)


class _AggregateHead(BaseModel):
    model_config = ConfigDict(extra="ignore")
    outcome: Outcome


LineHead = judgment_head(
    "LineHead", "What summaries and input hashes read of a judgment line: its identity, input "
    "hash, status and outcome (`RunStore.iter_latest_heads`).",
    "schema_", "claim", "rubric", "judge", "sample", "swapped", "input_hash", "final", "status",
    aggregate=(_AggregateHead | None, None))


def iter_jsonl_offsets(path: Path, model: type[M]) -> Iterator[tuple[int, M]]:
    """(byte offset, record) of every line of an append-only file, read one line at a time (a
    run's judgments.jsonl of 36k claims is hundreds of MB), each upgraded from any earlier version
    (see `VersionedModel`). A torn last line (a crash mid-write) is ignored; a bad line elsewhere
    means the file was edited or damaged, and is an error."""
    if not path.exists():
        return
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                record = model.model_validate_json(raw, context=FROM_FILE)
            except ValidationError as exc:
                if not raw.endswith(b"\n"):  # the last line, cut mid-write
                    log.warning("%s: ignoring a torn last line (%d bytes)", path, len(raw))
                    continue
                raise RunStoreError(f"{path}:{number}: not a valid {model.__name__} line "
                                    f"({exc.errors()[0]['msg']}); the file was edited or damaged"
                                    ) from exc
            yield start, record


def iter_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Every line of an append-only file as `model` (see `iter_jsonl_offsets`)."""
    for _, record in iter_jsonl_offsets(path, model):
        yield record


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    """Every line of an append-only file as `model` (see `iter_jsonl_offsets`)."""
    return list(iter_jsonl(path, model))


def append_jsonl(path: Path, records: Iterable[StrictModel]) -> int:
    """Append `records` as lines (as the store writes them), then fsync; the number written (no
    file is created for none)."""
    lines = [record.model_dump_json(by_alias=True) + "\n" for record in records]
    if lines:
        with path.open("a", encoding="utf-8") as handle:
            handle.writelines(lines)
            handle.flush()
            os.fsync(handle.fileno())
    return len(lines)


def read_judgments(path: Path) -> list[Judgment]:
    return read_jsonl(path, Judgment)


Identity = tuple[str, str | None, str, int, bool]
"""(claim key, rubric id@version, judge, sample, swapped): lines of one identity replace each
other, the newest counts."""


def identity(judgment: Judgment) -> Identity:
    rubric = str(judgment.rubric) if judgment.rubric else None
    return (str(judgment.claim), rubric, judgment.judge, judgment.sample, judgment.swapped)


class _LineReader:
    """Reads single lines of an append-only file by byte offset (one open handle, reopened when
    the file was replaced)."""

    def __init__(self, path: Path):
        self.path = path
        self._handle: Any = None

    def read(self, offset: int) -> bytes:
        if self._handle is None:
            self._handle = self.path.open("rb")
        self._handle.seek(offset)
        return self._handle.readline()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class RunStore:
    """Append-only access to one run directory.

    Nothing grows with the run but small indexes: the newest line of each identity and each
    claim's content are remembered by their byte offset in the file and read back when asked for,
    so that a run of 36k claims holds keys and offsets in memory, not judgments."""

    def __init__(self, root: Path, info: RunInfo):
        self.root = root
        self.paths = RunPaths(root)
        self.info = info
        self._handle: Any = None
        self._synced_at = 0.0
        self._claims: dict[str, tuple[int, bytes]] | None = None
        """Claim key -> (offset of its newest line in claims.jsonl, digest of that line)."""
        # The file is read once: the offset of the newest line per identity is kept, and lines
        # that are not final (budget, transport failures) do not count as done.
        self._latest: dict[Identity, int] = {}
        self._withdrawn: set[Identity] = set()
        """Identities whose newest line withdraws them (`Judgment.withdrawn`): no line counts."""
        self.keys: set[LineKey] = set()
        self._size = 0
        for offset, judgment in iter_jsonl_offsets(self.paths.judgments, Judgment):
            self._remember(judgment, offset)
        if self.paths.judgments.exists():
            self._size = self.paths.judgments.stat().st_size
        self._lines = _LineReader(self.paths.judgments)
        self._claim_lines = _LineReader(self.paths.claims)

    @classmethod
    def open(cls, root: Path | str, *, create: bool = True) -> RunStore:
        root = Path(root)
        run_json = RunPaths(root).run_json
        if run_json.exists():
            try:
                info = RunInfo.from_file(run_json.read_bytes())
            except ValidationError as exc:
                raise RunStoreError(f"{run_json}: not a judging run file ({exc.errors()[0]['msg']})"
                                    ) from exc
        elif not create:
            if root.is_dir() and any(root.iterdir()):
                # Files but no run.json: a submission folder, most often. A run is never written
                # into one: suggest a folder of its own.
                raise RunStoreError(
                    f"{root}: not a run directory (no {RUN_JSON}; it holds other files: a "
                    f"submission?); judge it into a folder of its own with `judging run {root} "
                    f"--out runs/{root.resolve().name or 'run'}`, then give that folder")
            raise RunStoreError(f"{root}: not a run directory (no {RUN_JSON}); make it with "
                                f"`judging run SOURCE... --out {root}` first")
        else:
            # diffs/ may come first; shards/ holds the shard runs of `judging run --engine`,
            # which are merged into this directory; `--estimate` measures (images, the
            # measurement cache) before any run.json.
            # `judging watch` keeps its state and lock beside the run it starts.
            if root.exists() and any(p.name not in (DIFFS, SHARDS, MEASUREMENTS, WATCH,
                                                    WATCH_LOCK) for p in root.iterdir()):
                raise RunStoreError(f"{root}: exists and is not a run directory; choose another "
                                    f"--out")
            root.mkdir(parents=True, exist_ok=True)
            info = RunInfo(run_id=new_run_id(), created_at=utc_now())
        if create:
            # Before the store reads the files: a cut line must not be remembered as done.
            paths = RunPaths(root)
            for path in (paths.judgments, paths.claims, paths.fingerprints):
                cut_torn_tail(path)
            where = str(root.resolve())
            if where not in info.roots:
                info.roots.append(where)  # written with run.json by the next write_info
        return cls(root, info)

    def set_shard(self, shard: Shard | None) -> None:
        """Record the shard this directory judges, or refuse a rerun with another one: a
        directory holds one shard (or the whole run), so that a merge of the shards of one run
        never meets a claim twice."""
        info = self.info
        if info.shard == shard:
            return
        if info.invocations or info.merges:
            held = f"shard {info.shard}" if info.shard else "every claim (no --shard)"
            asked = f"--shard {shard}" if shard else "no --shard"
            raise RunStoreError(f"{self.root}: this run directory judges {held}; it cannot be "
                                f"resumed with {asked} (use another --out)")
        info.shard = shard

    def write_info(self) -> None:
        write_text_atomic(self.paths.run_json, self.info.model_dump_json(indent=2, by_alias=True))

    def has(self, key: LineKey) -> bool:
        """Whether a final line of this key was written and its identity is not withdrawn since
        (a withdrawn line that holds again is written again)."""
        if key not in self.keys:
            return False
        return not self._withdrawn or (key.claim, key.rubric.rsplit("#", 1)[0] if key.rubric
                                       else None, key.judge, key.sample, key.swapped
                                       ) not in self._withdrawn

    def append(self, judgment: Judgment) -> None:
        """Write one line. It is flushed at once (a killed process loses nothing written) and
        fsynced at least every FSYNC_INTERVAL seconds and on close (a power cut loses at most
        that much): an fsync per line would cost more than a judge call's own client work."""
        if self._handle is None:
            self._handle = self.paths.judgments.open("ab")
            self._size = self._handle.tell()
        line = judgment.model_dump_json(by_alias=True, exclude_none=False).encode() + b"\n"
        self._handle.write(line)
        self._handle.flush()
        now = time.monotonic()
        if now - self._synced_at >= FSYNC_INTERVAL:
            os.fsync(self._handle.fileno())
            self._synced_at = now
        self._remember(judgment, self._size)
        self._size += len(line)

    def _remember(self, judgment: Judgment, offset: int) -> None:
        # The index's strings are interned: a claim key, a rubric and a judge are one string
        # each, not one per line and index (the index is what grows with a run).
        claim, rubric, judge, sample, swapped = identity(judgment)
        ident = (sys.intern(claim), sys.intern(rubric) if rubric else None, sys.intern(judge),
                 sample, swapped)
        self._latest.pop(ident, None)  # keep dict order = order of the newest lines
        if judgment.withdrawn is not None:
            self._withdrawn.add(ident)
            return
        self._withdrawn.discard(ident)
        self._latest[ident] = offset
        if judgment.final:
            key = line_key(judgment)
            self.keys.add(key._replace(claim=ident[0], judge=ident[2],
                                       rubric=sys.intern(key.rubric) if key.rubric else None))

    def close(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None
        self._lines.close()
        self._claim_lines.close()

    # --- claims ---

    def _claim_index(self) -> dict[str, tuple[int, bytes]]:
        if self._claims is None:
            self._claims = {}
            for offset, claim in iter_jsonl_offsets(self.paths.claims, ClaimInput):
                # the digest of the stored (relative) form, so that a line written at another
                # place of the directory (absolute paths, before they were kept relative) is
                # the same content, not a change to record again
                self._claims[sys.intern(str(claim.key))] = (
                    offset, _digest(self._stored(claim).model_dump_json()))
        return self._claims

    def _stored(self, claim: ClaimInput) -> ClaimInput:
        """The claim as claims.jsonl keeps it: a path inside the run directory (a logbook's
        figures, a Hub download), under any place the directory was written at, relative to
        it, so that a directory copied or moved elsewhere still names its own files."""
        roots = [self.root.resolve(), *(Path(r) for r in self.info.roots)]

        def inside(path: Path) -> Path:
            if path.is_absolute():
                for root in roots:
                    if path.is_relative_to(root):
                        return path.relative_to(root)
            return path

        return _map_claim_paths(claim, inside)

    def _read_claim(self, claim: ClaimInput) -> ClaimInput:
        """A stored claim with its paths inside the run directory made absolute again, under
        where the directory is now (old lines with absolute paths migrate on the way)."""
        here = self.root.resolve()
        stored = self._stored(claim)
        return _map_claim_paths(stored, lambda path: path if path.is_absolute() else here / path)

    def record_claims(self, claims: Iterable[ClaimInput]) -> None:
        """Keep each judged claim's content (later stages read it from here, not the sources)."""
        known = self._claim_index()
        changed = []
        for claim in claims:
            line = self._stored(claim).model_dump_json()
            digest = _digest(line)
            held = known.get(str(claim.key))
            if held is None or held[1] != digest:
                changed.append((sys.intern(str(claim.key)), line, digest))
        if not changed:
            return
        with self.paths.claims.open("ab") as handle:
            offset = handle.tell()
            for key, line, digest in changed:
                data = line.encode() + b"\n"
                handle.write(data)
                known[key] = (offset, digest)
                offset += len(data)
            handle.flush()
            os.fsync(handle.fileno())
        self._claim_lines.close()  # the reader's buffer may end before the new lines

    def claim(self, key: str) -> ClaimInput | None:
        """The newest stored content of one claim (read from the file by its offset)."""
        held = self._claim_index().get(key)
        if held is None:
            return None
        return self._read_claim(ClaimInput.model_validate_json(self._claim_lines.read(held[0]),
                                                               context=FROM_FILE))

    def _gone(self) -> set[str]:
        """The claims withdrawn from their submission: a line of theirs was withdrawn and no line
        judged under a rubric holds (a claim that now fails to load keeps only its error)."""
        if not self._withdrawn:
            return set()
        judged = {ident[0] for ident in self._latest if ident[1] is not None}
        return {ident[0] for ident in self._withdrawn} - judged

    def claim_keys(self) -> list[str]:
        gone = self._gone()
        return [key for key in self._claim_index() if key not in gone]

    def iter_claims(self) -> Iterator[ClaimInput]:
        """The newest stored content of every claim its submission still has (not `_gone`), in
        the order of their newest lines, read one line at a time."""
        gone = self._gone()
        newest = {offset for key, (offset, _) in self._claim_index().items() if key not in gone}
        for offset, claim in iter_jsonl_offsets(self.paths.claims, ClaimInput):
            if offset in newest:
                yield self._read_claim(claim)

    def claims(self) -> dict[str, ClaimInput]:
        """The newest stored content of every claim, by claim key, all in memory (small runs;
        a large one reads `iter_claims` or `claim`)."""
        return {str(c.key): c for c in self.iter_claims()}

    # --- fingerprints ---

    def record_fingerprint(self, fingerprint: Fingerprint) -> None:
        with (self.paths.fingerprints).open("a", encoding="utf-8") as handle:
            handle.write(fingerprint.model_dump_json() + "\n")

    def iter_fingerprints(self) -> Iterator[Fingerprint]:
        """Every recorded perceptual hash, oldest first, read one line at a time (a claim
        measured again has several: the last is its newest)."""
        return iter_jsonl(self.paths.fingerprints, Fingerprint)

    def fingerprints(self) -> dict[str, Fingerprint]:
        """The newest perceptual hash of every measured figure claim, by claim key."""
        return {str(f.claim): f for f in self.iter_fingerprints()}

    # --- judgments ---

    def judgments(self) -> list[Judgment]:
        return read_judgments(self.paths.judgments)

    def _line(self, offset: int) -> Judgment:
        if self._handle is not None:
            self._handle.flush()
        return Judgment.model_validate_json(self._lines.read(offset), context=FROM_FILE)

    def latest_line(self, ident: Identity) -> Judgment | None:
        """The newest line of one identity (see `identity`), or None."""
        offset = self._latest.get(ident)
        return None if offset is None else self._line(offset)

    def newest_lines(self, idents: Iterable[Identity]) -> list[Judgment | None]:
        """The newest line of each identity, None where there is none (the members of a panel
        that an earlier invocation finished)."""
        return [self.latest_line(ident) for ident in idents]

    def iter_latest(self) -> Iterator[Judgment]:
        """The newest line per (claim, rubric id@version, judge, sample, order), in the order of
        the newest lines, read from the file one line at a time."""
        return self.iter_latest_as(Judgment)

    def iter_latest_heads(self) -> Iterator[LineHead]:
        """`iter_latest` as line heads (see `LineHead`)."""
        return self.iter_latest_as(LineHead)

    def iter_latest_as(self, model: type[M]) -> Iterator[M]:
        """`iter_latest` read as `model`: a head of the line that ignores the fields it does not
        name (like `LineHead`), for a pass over every line that needs only those."""
        if self._handle is not None:
            self._handle.flush()
        newest = set(self._latest.values())
        for offset, head in iter_jsonl_offsets(self.paths.judgments, model):
            if offset in newest:
                yield head

    def latest(self) -> list[Judgment]:
        """`iter_latest`, all in memory (small runs and tests)."""
        return list(self.iter_latest())

    def latest_count(self) -> int:
        """How many identities have a line."""
        return len(self._latest)

    def identities(self) -> list[Identity]:
        return list(self._latest)

    def identities_by_submission(self) -> dict[str, list[Identity]]:
        """The identities that have a line, by submission id (a claim key is
        `submission::claim`, and a submission id holds no colon)."""
        out: dict[str, list[Identity]] = {}
        for ident in self._latest:
            out.setdefault(ident[0].split("::", 1)[0], []).append(ident)
        return out

    def claim_count(self) -> int:
        """How many claims have a line."""
        return len({ident[0] for ident in self._latest})

    def latest_by_claim(self, keys: Collection[str] | None = None
                        ) -> Iterator[tuple[str, list[Judgment]]]:
        """(claim key, its newest lines in file order) per claim (of `keys` only, when given),
        sorted by claim key: one claim's lines in memory at a time."""
        offsets: dict[str, list[int]] = {}
        for ident, offset in self._latest.items():
            if keys is not None and ident[0] not in keys:
                continue
            offsets.setdefault(ident[0], []).append(offset)
        for key in sorted(offsets):
            yield key, [self._line(offset) for offset in sorted(offsets[key])]


def _digest(line: str) -> bytes:
    return hashlib.blake2b(line.encode(), digest_size=16).digest()


def cut_torn_tail(path: Path) -> None:
    """Cut a partial last line left by a crash, so that appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        data = path.read_bytes()
        cut = data.rfind(b"\n") + 1
        log.warning("%s: removing a torn last line (%d bytes) left by an interrupted run",
                    path, len(data) - cut)
        handle.truncate(cut)
