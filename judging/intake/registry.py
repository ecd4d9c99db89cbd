"""The organizers' claim registry: its references (published figure, reported values, tolerance)
are authoritative for the claims it lists."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from judging._yaml import (
    raise_validation_error,
    read_document,
)
from judging.errors import RegistryError, UnsafePathError
from judging.intake.paths import confine
from judging.models import (
    Claim,
    ClaimKind,
    Flag,
    RelativePath,
    StrictModel,
    TableValue,
    Tolerance,
)


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
