"""The run directory: run.json, append-only judgments.jsonl, diffs/, report.html.

Every line is flushed and fsynced as it is written, so an interrupted run loses at most the
in-flight work; a torn last line (a crash mid-write) is cut off when the run is reopened.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import Field, ValidationError

from judging.atomic import write_text_atomic
from judging.errors import RunStoreError
from judging.models import (
    FROM_FILE,
    ClaimInput,
    Fingerprint,
    Judgment,
    SettingValue,
    StrictModel,
    SubmissionSource,
    VersionedModel,
)
from judging.rundir.layout import DIFFS, MEASUREMENTS, RUN_JSON, RunPaths

log = logging.getLogger(__name__)


RUN_SCHEMA = "judging.run/1"


FSYNC_INTERVAL = 1.0


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_run_id() -> str:
    return utc_now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


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
    submissions: dict[str, SubmissionSource] = Field(default_factory=dict)
    """Per submission id read from the Hub: the revision judged."""


class RunInfo(VersionedModel):
    """run.json."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.run/1"] = Field(default=RUN_SCHEMA, alias="schema")
    run_id: str
    created_at: datetime
    invocations: list[Invocation] = Field(default_factory=list)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.run/1 is the first version: every run.json has always carried it.
        return data


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


M = TypeVar("M", bound=StrictModel)


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    """Every line of an append-only file as `model`, upgraded from any earlier version (see
    `VersionedModel`). A torn last line (a crash mid-write) is ignored; a bad line elsewhere
    means the file was edited or damaged, and is an error."""
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    records = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            records.append(model.model_validate_json(raw, context=FROM_FILE))
        except ValidationError as exc:
            if number == len(lines):
                log.warning("%s: ignoring a torn last line (%d bytes)", path, len(raw))
                continue
            raise RunStoreError(f"{path}:{number}: not a valid {model.__name__} line "
                                f"({exc.errors()[0]['msg']}); the file was edited or damaged"
                                ) from exc
    return records


def read_judgments(path: Path) -> list[Judgment]:
    return read_jsonl(path, Judgment)


class RunStore:
    """Append-only access to one run directory."""

    def __init__(self, root: Path, info: RunInfo):
        self.root = root
        self.paths = RunPaths(root)
        self.info = info
        self._handle = None
        self._synced_at = 0.0
        self._claims: dict[str, ClaimInput] | None = None
        # The file is read once: the newest line per identity is kept in memory, and lines that
        # are not final (budget, transport failures) do not count as done.
        self._latest: dict[tuple[Any, ...], Judgment] = {}
        self.keys: set[LineKey] = set()
        for judgment in read_judgments(self.judgments_path):
            self._remember(judgment)

    @property
    def judgments_path(self) -> Path:
        return self.paths.judgments

    @property
    def claims_path(self) -> Path:
        return self.paths.claims

    @property
    def run_json_path(self) -> Path:
        return self.paths.run_json

    @property
    def diffs_dir(self) -> Path:
        return self.paths.diffs

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
            raise RunStoreError(f"{root}: not a run directory (no {RUN_JSON}); run `judging run "
                                f"... --out {root}` first")
        else:
            # `--estimate` measures (images, the measurement cache) before any run.json
            if root.exists() and any(p.name not in (DIFFS, MEASUREMENTS)
                                     for p in root.iterdir()):
                raise RunStoreError(f"{root}: exists and is not a run directory; choose another "
                                    f"--out")
            root.mkdir(parents=True, exist_ok=True)
            info = RunInfo(run_id=new_run_id(), created_at=utc_now())
        if create:
            # Before the store reads the files: a cut line must not be remembered as done.
            paths = RunPaths(root)
            for path in (paths.judgments, paths.claims, paths.fingerprints):
                _cut_torn_tail(path)
        return cls(root, info)

    def write_info(self) -> None:
        write_text_atomic(self.run_json_path, self.info.model_dump_json(indent=2, by_alias=True))

    def has(self, key: LineKey) -> bool:
        return key in self.keys

    def append(self, judgment: Judgment) -> None:
        """Write one line. It is flushed at once (a killed process loses nothing written) and
        fsynced at least every FSYNC_INTERVAL seconds and on close (a power cut loses at most
        that much): an fsync per line would cost more than a judge call's own client work."""
        if self._handle is None:
            self._handle = self.judgments_path.open("a", encoding="utf-8")
        line = judgment.model_dump_json(by_alias=True, exclude_none=False)
        self._handle.write(line + "\n")
        self._handle.flush()
        now = time.monotonic()
        if now - self._synced_at >= FSYNC_INTERVAL:
            os.fsync(self._handle.fileno())
            self._synced_at = now
        self._remember(judgment)

    def _remember(self, judgment: Judgment) -> None:
        rubric = str(judgment.rubric) if judgment.rubric else None
        identity = (str(judgment.claim), rubric, judgment.judge, judgment.sample, judgment.swapped)
        self._latest.pop(identity, None)  # keep dict order = order of the newest lines
        self._latest[identity] = judgment
        if judgment.final:
            self.keys.add(line_key(judgment))

    def close(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None

    def record_claims(self, claims: list[ClaimInput]) -> None:
        """Keep each judged claim's content (later stages read it from here, not the sources)."""
        known = self.claims()
        changed = [c for c in claims if known.get(str(c.key)) != c]
        if not changed:
            return
        with self.claims_path.open("a", encoding="utf-8") as handle:
            for claim in changed:
                handle.write(claim.model_dump_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        known.update((str(c.key), c) for c in changed)

    def claims(self) -> dict[str, ClaimInput]:
        """The newest stored content of every claim, by claim key (read once, then kept)."""
        if self._claims is None:
            self._claims = {str(c.key): c for c in read_jsonl(self.claims_path, ClaimInput)}
        return self._claims

    def record_fingerprint(self, fingerprint: Fingerprint) -> None:
        with (self.paths.fingerprints).open("a", encoding="utf-8") as handle:
            handle.write(fingerprint.model_dump_json() + "\n")

    def fingerprints(self) -> dict[str, Fingerprint]:
        """The newest perceptual hash of every measured figure claim, by claim key."""
        return {str(f.claim): f for f in read_jsonl(self.paths.fingerprints, Fingerprint)}

    def judgments(self) -> list[Judgment]:
        return read_judgments(self.judgments_path)

    def latest(self) -> list[Judgment]:
        """The newest line per (claim, rubric id@version, judge, sample, order)."""
        return list(self._latest.values())


def _cut_torn_tail(path: Path) -> None:
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
