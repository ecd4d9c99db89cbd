"""Loading submissions: local folders, Hugging Face Spaces/datasets, and the organizers' registry.

One bad claim never sinks a submission: each claim is validated on its own and a bad one becomes a
`ClaimProblem` with the reason (and the manifest line), while the others load.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from judging._yaml import (
    describe_validation_error,
    raise_validation_error,
    read_document,
)
from judging.errors import ManifestError, UnsafePathError
from judging.hashing import file_sha256
from judging.intake.paths import confine, confine_file
from judging.intake.registry import Registry, apply_registry
from judging.models import (
    Claim,
    ClaimInput,
    ClaimKey,
    ClaimKind,
    ClaimProblem,
    Flag,
    ReferenceOrigin,
    SubmissionHeader,
    Verdict,
)

log = logging.getLogger(__name__)


MANIFEST_NAMES = ("submission.yaml", "submission.yml", "submission.json")


MAX_CLAIMS_PER_SUBMISSION = 500


@dataclass
class LoadedSubmission:
    header: SubmissionHeader
    folder: Path
    manifest: Path
    claims: list[ClaimInput] = field(default_factory=list)
    problems: list[ClaimProblem] = field(default_factory=list)


def find_manifest(folder: Path) -> Path | None:
    for name in MANIFEST_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def _claim_hint(data: object, key: str) -> str | None:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) and len(value) <= 200 else None


#: The claim id of a claim that failed to load becomes its error line's claim key only when it is
#: a valid id (keys name files and records downstream); otherwise the key is `#claim-N`.
_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+@-]{0,199}")


def _claim_id_hint(data: object) -> str | None:
    value = _claim_hint(data, "claim_id")
    return value if value is not None and _IDENTIFIER.fullmatch(value) else None


def _nul_field(data: object) -> str | None:
    """The key path of the first string (or key) holding a NUL character, else None.

    NUL has no place in any manifest text, and many consumers choke on it (PostgreSQL text
    columns, C strings, terminals). Iterative: manifests may nest up to the parser's depth limit.
    """
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return where or "(the value)"
        elif isinstance(value, dict):
            for key, item in value.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and "\x00" in key:
                    return (name.replace("\x00", "\\0"))
                stack.append((name, item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}" if where else str(i), item)
                         for i, item in enumerate(value))
    return None


class _ManifestShape:
    """Our manifest (`submission.yaml`) as a submission shape (`shapes.SHAPES`)."""

    name = "manifest"

    def detect(self, folder: Path) -> bool:
        return find_manifest(folder) is not None

    def one_submission(self, folder: Path, **_: object) -> bool:
        return self.detect(folder)

    def load(self, folder: Path, *, registry: Registry | None, **_: object) -> LoadedSubmission:
        return load_submission(folder, registry=registry)


MANIFEST = _ManifestShape()


def load_submission(folder: Path | str, *, registry: Registry | None = None) -> LoadedSubmission:
    """Load one submission folder. Raises ManifestError only when the manifest as a whole is
    unusable; each bad claim becomes a ClaimProblem and the rest load."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ManifestError("not a folder", path=str(folder))
    manifest = find_manifest(folder)
    if manifest is None:
        raise ManifestError(f"no manifest ({' / '.join(MANIFEST_NAMES)}) in this folder",
                            path=str(folder))
    try:
        confine(folder, manifest.name)
    except UnsafePathError as exc:
        raise ManifestError(str(exc), path=str(manifest)) from exc
    doc = read_document(manifest, error_class=ManifestError)
    if not isinstance(doc.data, dict):
        raise ManifestError("the manifest must be a mapping with submission_id, paper_id and "
                            "claims", path=str(manifest), line=1)
    claims_data = doc.data.get("claims")
    header_data = {k: v for k, v in doc.data.items() if k != "claims"}
    nul = _nul_field(header_data)
    if nul is not None:
        raise ManifestError("NUL character (\\0) in the text: not allowed in a manifest",
                            path=str(manifest), line=doc.line_of((nul.split(".")[0],)), field=nul)
    try:
        header = SubmissionHeader.model_validate(header_data)
    except ValidationError as exc:
        raise_validation_error(exc, doc, error_class=ManifestError)
        raise
    if not isinstance(claims_data, list):
        raise ManifestError("'claims' must be a list of claims", path=str(manifest),
                            line=doc.line_of(("claims",)), field="claims")
    if len(claims_data) > MAX_CLAIMS_PER_SUBMISSION:
        raise ManifestError(f"{len(claims_data)} claims, over the limit of "
                            f"{MAX_CLAIMS_PER_SUBMISSION} per submission", path=str(manifest))
    loaded = LoadedSubmission(header=header, folder=folder.resolve(), manifest=manifest)
    first_line: dict[str, int | None] = {}
    for index, raw in enumerate(claims_data):
        line = doc.line_of(("claims", index))
        claim_id = _claim_id_hint(raw)

        def problem(reason: str, *, at: int | None = line, _index: int = index,
                    _raw: object = raw, _claim_id: str | None = claim_id) -> ClaimProblem:
            kind = _claim_hint(_raw, "kind")
            verdict = _claim_hint(_raw, "verdict")
            return ClaimProblem(
                submission_id=header.submission_id, claim_id=_claim_id, index=_index,
                manifest=str(manifest), line=at, reason=reason,
                kind=ClaimKind(kind) if kind in ClaimKind._value2member_map_ else None,
                verdict=Verdict(verdict) if verdict in Verdict._value2member_map_ else None)

        nul = _nul_field(raw)
        if nul is not None:
            loaded.problems.append(problem(f"NUL character (\\0) in the text: not allowed in a "
                                           f"manifest (field: {nul})"))
            continue
        try:
            claim = Claim.model_validate(raw)
        except ValidationError as exc:
            sub = doc.sub(("claims", index))
            message, at, where = describe_validation_error(exc, sub)
            loaded.problems.append(problem(f"{message} (field: {where})" if where else message,
                                           at=at or line))
            continue
        if claim.claim_id in first_line:
            loaded.problems.append(problem(
                f"duplicate claim_id {claim.claim_id!r} (first at line {first_line[claim.claim_id]})"
                "; only the first is judged"))
            continue
        first_line[claim.claim_id] = line
        try:
            loaded.claims.append(make_claim_input(claim, header, loaded.folder, registry, line))
        except UnsafePathError as exc:
            loaded.problems.append(problem(str(exc)))
    return loaded


def make_claim_input(claim: Claim, header: SubmissionHeader, folder: Path,
                     registry: Registry | None, line: int | None) -> ClaimInput:
    """A validated claim as a run reads it: its evidence paths confined to the folder, the
    registry's reference applied (every submission shape builds its claims through this)."""
    evidence: dict[str, Path] = {}
    if claim.evidence.script:
        evidence["script"] = confine_file(folder, claim.evidence.script)
    for i, script in enumerate(claim.evidence.scripts):
        evidence[f"scripts[{i}]"] = confine_file(folder, script)
    if claim.evidence.proof_script:
        evidence["proof_script"] = confine_file(folder, claim.evidence.proof_script)
    for i, log in enumerate(claim.evidence.logs):
        evidence[f"logs[{i}]"] = confine_file(folder, log)
    if claim.evidence.rerun is not None and claim.evidence.rerun.environment:
        evidence["rerun.environment"] = confine_file(folder, claim.evidence.rerun.environment)
    for i, trace in enumerate(claim.evidence.traces):
        evidence[f"traces[{i}]"] = confine_file(folder, trace)
    own_published = (confine_file(folder, claim.published_figure) if claim.published_figure
                     else None)
    reproduced = (confine_file(folder, claim.reproduced_figure) if claim.reproduced_figure
                  else None)
    own_published_data = (confine_file(folder, claim.published_data) if claim.published_data
                          else None)
    reproduced_data = (confine_file(folder, claim.reproduced_data) if claim.reproduced_data
                       else None)
    flags: list[Flag] = []
    entry = registry.claims.get(claim.claim_id) if registry is not None else None
    participant_reference: Path | None = None
    published_data = own_published_data
    if entry is not None:
        assert registry is not None
        effective, flags = apply_registry(claim, entry)
        if entry.paper_id and entry.paper_id != (registry.canonical(header.paper_id)
                                                 or header.paper_id):
            flags.append(Flag(name="paper_mismatch",
                              detail=f"the registry lists this claim under paper {entry.paper_id}, "
                                     f"the submission under {header.paper_id}"))
        registry_figure = registry.figure_path(entry)
        if registry_figure is not None and claim.kind is ClaimKind.figure:
            published = registry_figure
            participant_reference = own_published
        else:
            published = own_published
        if claim.kind is ClaimKind.figure:
            published_data, data_flag = _published_data(claim, registry.data_path(entry),
                                                        own_published_data,
                                                        registry_figure=registry_figure)
            flags += data_flag
        origin = ReferenceOrigin.registry
    else:
        effective, published, origin = claim, own_published, ReferenceOrigin.participant
    return ClaimInput(
        key=ClaimKey(submission_id=header.submission_id, claim_id=claim.claim_id),
        submission=header, claim=effective, root=folder, published_path=published,
        reproduced_path=reproduced, participant_reference_path=participant_reference,
        published_data_path=published_data, reproduced_data_path=reproduced_data,
        evidence_paths=evidence, reference=origin, flags=flags, manifest_line=line,
        rerun_pattern=entry.rerun_pattern if entry is not None else None)


def _published_data(claim: Claim, registry_data: Path | None, own: Path | None, *,
                    registry_figure: Path | None) -> tuple[Path | None, list[Flag]]:
    """The published data of a registry claim, and a flag when the submission's own differs or
    is set aside. The data goes with the reference: the registry's when it gives data; none when
    it gives the figure without data (the participant's data of a figure they did not supply
    is no reference); the submission's own when the registry gives neither."""
    if registry_data is not None:
        if own is not None and file_sha256(own) != file_sha256(registry_data):
            return registry_data, [Flag(
                name="reference_mismatch",
                detail=f"published_data {claim.published_data} differs from the registry's "
                       f"data of this figure; the registry's was used")]
        return registry_data, []
    if registry_figure is not None:
        if own is not None:
            return None, [Flag(
                name="published_data_ignored",
                detail=f"published_data {claim.published_data} is not used: the registry's "
                       f"figure is the reference and the registry gives no data for it")]
        return None, []
    return own, []


def manifest_json_schema() -> str:
    """The manifest's JSON schema (for participants' tooling)."""
    from judging.models import Submission
    return json.dumps(Submission.model_json_schema(), indent=2)
