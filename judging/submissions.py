"""Loading submissions: local folders, Hugging Face Spaces/datasets, and the organizers' registry.

One bad claim never sinks a submission: each claim is validated on its own and a bad one becomes a
`ClaimProblem` with the reason (and the manifest line), while the others load.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ._yaml import describe_validation_error, one_line, raise_validation_error, read_document
from .errors import ManifestError, RegistryError, SourceError, UnsafePathError
from .models import (Claim, ClaimInput, ClaimKey, ClaimKind, ClaimProblem, Flag, ReferenceOrigin,
                     RelativePath, StrictModel, SubmissionHeader, TableValue, Tolerance, Verdict)

log = logging.getLogger(__name__)

MANIFEST_NAMES = ("submission.yaml", "submission.yml", "submission.json")
MAX_CLAIMS_PER_SUBMISSION = 500


# --- paths -----------------------------------------------------------------------------------


def confine(root: Path, relative: str) -> Path:
    """`root / relative`, refusing anything that resolves outside `root` (.., absolute, symlinks).

    The file need not exist (a missing file is reported where it is used); the check follows every
    symlink on the way, so a link inside the folder that points outside is refused.
    """
    root_resolved = root.resolve()
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in re.split(r"[\\/]", relative):
        raise UnsafePathError(f"{relative!r} is not a relative path inside the submission folder")
    try:
        resolved = (root_resolved / candidate).resolve()
    except RuntimeError as exc:  # Python < 3.13: "Symlink loop from ...", even when not strict
        raise UnsafePathError(f"{relative!r} is a symlink loop (a link that points back to "
                              f"itself)") from exc
    except (OSError, ValueError) as exc:
        raise UnsafePathError(f"{relative!r} cannot be resolved ({exc})") from exc
    if resolved.is_symlink():  # Python >= 3.13: a loop resolves to a link that leads nowhere
        raise UnsafePathError(f"{relative!r} is a symlink loop (a link that points back to "
                              f"itself)")
    if not resolved.is_relative_to(root_resolved):
        raise UnsafePathError(f"{relative!r} resolves outside the submission folder "
                              f"(a symlink to {resolved})")
    return resolved


def confine_file(root: Path, relative: str) -> Path:
    """`confine`, also refusing special files (FIFOs, sockets, devices): hashing or reading one
    could block forever or never end. A missing file or a folder is reported where it is used."""
    path = confine(root, relative)
    try:
        mode = path.stat().st_mode
    except OSError:
        return path
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UnsafePathError(f"{relative!r} is not a regular file (a FIFO, socket or device)")
    return path


# --- the claim registry ----------------------------------------------------------------------


class RegistryClaim(StrictModel):
    """One claim the organizers judge; its reference fields are authoritative."""

    claim_id: str
    paper_id: str | None = None
    kind: ClaimKind | None = None
    source: str | None = None
    statement: str | None = None
    published_figure: RelativePath | None = None
    """Relative to the registry file."""
    reported_value: float | None = None
    values: list[TableValue] | None = None
    """Table claims: the reported value of each cell (by name)."""
    tolerance: Tolerance | None = None


class RegistryFile(StrictModel):
    event: str | None = None
    claims: list[RegistryClaim]


@dataclass(frozen=True)
class Registry:
    path: Path
    claims: dict[str, RegistryClaim]

    def figure_path(self, entry: RegistryClaim) -> Path | None:
        if entry.published_figure is None:
            return None
        try:
            return confine(self.path.parent, entry.published_figure)
        except UnsafePathError as exc:
            raise RegistryError(f"claim {entry.claim_id}: {exc}", path=str(self.path)) from exc


def load_registry(path: Path | str) -> Registry:
    """Read a registry from YAML/JSON (`claims: [...]`) or JSONL (one claim per line)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        entries = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise RegistryError(f"cannot read registry: {exc}", path=str(path)) from exc
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entries.append(RegistryClaim.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                raise RegistryError(first["msg"], path=str(path), line=number,
                                    field=".".join(map(str, first["loc"])) or None) from exc
        registry_file = RegistryFile(claims=entries)
    else:
        doc = read_document(path, error_class=RegistryError)
        try:
            registry_file = RegistryFile.model_validate(doc.data)
        except ValidationError as exc:
            raise_validation_error(exc, doc, error_class=RegistryError)
            raise
    claims: dict[str, RegistryClaim] = {}
    for entry in registry_file.claims:
        if entry.claim_id in claims:
            raise RegistryError(f"duplicate claim_id {entry.claim_id!r}", path=str(path))
        claims[entry.claim_id] = entry
    registry = Registry(path=path.resolve(), claims=claims)
    for entry in claims.values():
        figure = registry.figure_path(entry)
        if figure is not None and not figure.is_file():
            raise RegistryError(f"claim {entry.claim_id}: published_figure "
                                f"{entry.published_figure} not found", path=str(path))
    return registry


def _differs(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) > 1e-12 * max(1.0, abs(a), abs(b))


def apply_registry(claim: Claim, entry: RegistryClaim) -> tuple[Claim, list[Flag]]:
    """The effective claim with the registry's references, and flags for every doctored field."""
    flags: list[Flag] = []
    updates: dict[str, object] = {}
    if entry.kind is not None and entry.kind is not claim.kind:
        flags.append(Flag(name="kind_mismatch",
                          detail=f"the registry lists this claim as {entry.kind}, the submission "
                                 f"as {claim.kind}"))
    if entry.statement:
        updates["statement"] = entry.statement
    if entry.source:
        updates["source"] = entry.source
    if entry.reported_value is not None and claim.kind is ClaimKind.number:
        if _differs(claim.reported_value, entry.reported_value):
            flags.append(Flag(name="reference_mismatch",
                              detail=f"reported_value {claim.reported_value:g} differs from the "
                                     f"registry's {entry.reported_value:g}"))
        updates["reported_value"] = entry.reported_value
    if entry.tolerance is not None:
        if claim.tolerance is not None and claim.tolerance != entry.tolerance:
            flags.append(Flag(name="reference_mismatch",
                              detail=f"tolerance {claim.tolerance.describe()} differs from the "
                                     f"registry's {entry.tolerance.describe()}"))
        updates["tolerance"] = entry.tolerance
    if entry.values is not None and claim.kind is ClaimKind.table and claim.values is not None:
        reference = {v.name: v for v in entry.values}
        merged = []
        for cell in claim.values:
            ref = reference.get(cell.name)
            if ref is None:
                flags.append(Flag(name="reference_mismatch",
                                  detail=f"table cell {cell.name!r} is not in the registry"))
                merged.append(cell)
                continue
            if _differs(cell.reported, ref.reported):
                flags.append(Flag(name="reference_mismatch",
                                  detail=f"table cell {cell.name!r}: reported {cell.reported:g} "
                                         f"differs from the registry's {ref.reported:g}"))
            merged.append(cell.model_copy(update={"reported": ref.reported,
                                                  "tolerance": ref.tolerance or cell.tolerance}))
        updates["values"] = merged
    return claim.model_copy(update=updates), flags


# --- submission folders ----------------------------------------------------------------------


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
            loaded.claims.append(_claim_input(claim, header, loaded.folder, registry, line))
        except UnsafePathError as exc:
            loaded.problems.append(problem(str(exc)))
    return loaded


def _claim_input(claim: Claim, header: SubmissionHeader, folder: Path, registry: Registry | None,
                 line: int | None) -> ClaimInput:
    evidence: dict[str, Path] = {}
    if claim.evidence.script:
        evidence["script"] = confine_file(folder, claim.evidence.script)
    if claim.evidence.proof_script:
        evidence["proof_script"] = confine_file(folder, claim.evidence.proof_script)
    for i, log in enumerate(claim.evidence.logs):
        evidence[f"logs[{i}]"] = confine_file(folder, log)
    own_published = (confine_file(folder, claim.published_figure) if claim.published_figure
                     else None)
    reproduced = (confine_file(folder, claim.reproduced_figure) if claim.reproduced_figure
                  else None)
    flags: list[Flag] = []
    entry = registry.claims.get(claim.claim_id) if registry is not None else None
    participant_reference: Path | None = None
    if entry is not None:
        effective, flags = apply_registry(claim, entry)
        if entry.paper_id and entry.paper_id != header.paper_id:
            flags.append(Flag(name="paper_mismatch",
                              detail=f"the registry lists this claim under paper {entry.paper_id}, "
                                     f"the submission under {header.paper_id}"))
        registry_figure = registry.figure_path(entry)  # type: ignore[union-attr]
        if registry_figure is not None and claim.kind is ClaimKind.figure:
            published = registry_figure
            participant_reference = own_published
        else:
            published = own_published
        origin = ReferenceOrigin.registry
    else:
        effective, published, origin = claim, own_published, ReferenceOrigin.participant
    return ClaimInput(
        key=ClaimKey(submission_id=header.submission_id, claim_id=claim.claim_id),
        submission=header, claim=effective, root=folder, published_path=published,
        reproduced_path=reproduced, participant_reference_path=participant_reference,
        evidence_paths=evidence, reference=origin, flags=flags, manifest_line=line)


# --- sources: folders and the Hugging Face Hub -----------------------------------------------

HUB_PREFIX = "hf://"
_HUB_SOURCE = re.compile(
    r"^hf://(?P<type>spaces|datasets)/(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)"
    r"(?:@(?P<revision>[\w./-]+?))?(?:/(?P<subdir>[^@]+))?$")


@dataclass(frozen=True)
class HubSource:
    repo_type: str
    """"space" or "dataset"."""
    repo_id: str
    revision: str | None
    subdir: str | None

    @property
    def spec(self) -> str:
        rev = f"@{self.revision}" if self.revision else ""
        sub = f"/{self.subdir}" if self.subdir else ""
        return f"hf://{self.repo_type}s/{self.repo_id}{rev}{sub}"


def parse_hub_source(spec: str) -> HubSource:
    match = _HUB_SOURCE.match(spec)
    if not match:
        raise SourceError(f"{spec!r} is not a Hub source: use hf://spaces/OWNER/NAME or "
                          f"hf://datasets/OWNER/NAME, optionally @REVISION and /SUBFOLDER")
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(match.group("repo"))
    except HFValidationError as exc:
        raise SourceError(f"{spec!r}: not a valid repo id: {exc}") from exc
    subdir = match.group("subdir")
    if subdir is not None:
        parts = subdir.split("/")
        if ".." in parts:
            raise SourceError(f"{spec!r}: the subfolder must not contain '..'")
        if "\\" in subdir or any(part in ("", ".") for part in parts[:-1]) or parts[0] == "":
            raise SourceError(f"{spec!r}: the subfolder must be a relative path like "
                              f"'team/alice' (no leading '/', '//' or '.')")
        subdir = subdir.rstrip("/") or None
    return HubSource(repo_type=match.group("type")[:-1], repo_id=match.group("repo"),
                     revision=match.group("revision"), subdir=subdir)


def fetch_hub_source(source: HubSource, *, download_root: Path, token: str | None = None
                     ) -> Path:
    """Download a Space or dataset repo into a folder of real files; return the submission folder."""
    import httpx2
    from huggingface_hub import constants as hub_constants
    from huggingface_hub import snapshot_download
    from huggingface_hub import errors as hub_errors

    # one folder per revision: revisions must not overwrite each other's files ("@" keeps a
    # revision such as ".." from being read as a path step)
    local_dir = (download_root / f"{source.repo_type}s" / source.repo_id
                 / f"@{source.revision or 'main'}")
    token = token or os.environ.get("HF_TOKEN") or None
    allow = [f"{source.subdir}/**"] if source.subdir else None
    try:
        snapshot_download(source.repo_id, repo_type=source.repo_type, revision=source.revision,
                          local_dir=local_dir, token=token, allow_patterns=allow)
    except hub_errors.GatedRepoError as exc:
        raise SourceError(f"{source.spec}: the repo is gated; accept its conditions on the Hub and "
                          f"set HF_TOKEN") from exc
    except hub_errors.RepositoryNotFoundError as exc:
        raise SourceError(f"{source.spec}: repo not found, or private and HF_TOKEN is missing or "
                          f"has no access") from exc
    except hub_errors.RevisionNotFoundError as exc:
        raise SourceError(f"{source.spec}: revision {source.revision!r} not found") from exc
    except hub_errors.LocalEntryNotFoundError as exc:
        if hub_constants.is_offline_mode():
            raise SourceError(f"{source.spec}: HF_HUB_OFFLINE is set and the repo is not "
                              f"downloaded yet") from exc
        cause = exc.__cause__
        why = f" ({one_line(cause)})" if isinstance(cause, hub_errors.HfHubHTTPError) else ""
        raise SourceError(f"{source.spec}: cannot reach the Hugging Face Hub{why} (offline, "
                          f"blocked network or Hub down) and no local copy exists; download it "
                          f"elsewhere and pass the folder instead") from exc
    except hub_errors.HfHubHTTPError as exc:
        raise SourceError(f"{source.spec}: the Hub answered with an error: "
                          f"{one_line(exc)}") from exc
    except (httpx2.HTTPError, OSError) as exc:
        raise SourceError(f"{source.spec}: download failed: {type(exc).__name__}: "
                          f"{one_line(exc)}") from exc
    folder = confine(local_dir, source.subdir) if source.subdir else local_dir
    if not folder.is_dir():
        raise SourceError(f"{source.spec}: the subfolder {source.subdir!r} is not in the repo")
    return folder


def expand_source(source: str, *, download_root: Path) -> list[Path]:
    """Submission folders named by a SOURCE argument.

    A folder with a manifest is one submission; a folder without one stands for its immediate
    subfolders that have one (e.g. `examples/submissions`); `hf://...` is downloaded first.
    """
    if source.startswith(HUB_PREFIX):
        folder = fetch_hub_source(parse_hub_source(source), download_root=download_root)
    else:
        folder = Path(source)
        if not folder.exists():
            raise SourceError(f"{source}: no such folder")
        if not folder.is_dir():
            raise SourceError(f"{source}: not a folder (give the submission's folder, not its "
                              f"manifest)")
    if find_manifest(folder) is not None:
        return [folder]
    subfolders = sorted(child for child in folder.iterdir()
                        if child.is_dir() and not child.is_symlink())
    children = [child for child in subfolders if find_manifest(child)]
    skipped = [child.name for child in subfolders
               if child not in children and not child.name.startswith(".")]
    if children and skipped:
        log.warning("%s: %d subfolder(s) without a %s skipped: %s", source, len(skipped),
                    MANIFEST_NAMES[0], ", ".join(skipped[:10]))
    if not children:
        raise SourceError(f"{source}: no submission manifest ({MANIFEST_NAMES[0]}) in it or in "
                          f"its subfolders")
    return children


def manifest_json_schema() -> str:
    """The manifest's JSON schema (for participants' tooling)."""
    from .models import Submission
    return json.dumps(Submission.model_json_schema(), indent=2)
