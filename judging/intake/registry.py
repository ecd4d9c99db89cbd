"""The organizers' claim registry: its references (published figure and its data, reported values,
tolerance) are authoritative for the claims it lists.

Two shapes are read. Ours: `claims: [{claim_id, paper_id, ...}]` (YAML/JSON), or one claim per
line (JSONL); every key is checked. The ICML 2026 shape: `{paper_id: [{text: ...}, ...]}` (YAML or
JSON), a mapping whose every value is a list and that has no `claims` key; claim N (from 1, in
list order) of paper P is `P/cN` and its statement is `text`. That shape is organizers' data
exported from elsewhere, so it is read leniently: the keys that map onto `RegistryClaim` (kind,
source, published_figure, published_data, reported_value, values, tolerance) are taken and
checked, `claim_id` and `paper_id` are accepted only when they equal the position's id, and any
other key (a figure or table reference we have no field for) is ignored, with a warning naming
it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from judging._yaml import (
    LocatedDocument,
    describe_validation_error,
    raise_validation_error,
    read_document,
)
from judging.errors import RegistryError, UnsafePathError
from judging.intake.paths import confine
from judging.models import (
    MAX_STATEMENT_CHARS,
    Claim,
    ClaimKind,
    Flag,
    Identifier,
    RelativePath,
    StrictModel,
    TableValue,
    Tolerance,
)

log = logging.getLogger(__name__)


class RegistryClaim(StrictModel):
    """One claim the organizers judge; its reference fields are authoritative."""

    claim_id: str
    paper_id: str | None = None
    kind: ClaimKind | None = None
    source: str | None = None
    statement: str | None = Field(default=None, max_length=MAX_STATEMENT_CHARS)
    """Replaces the participant's statement, so it has the same limit."""
    published_figure: RelativePath | None = None
    """Relative to the registry file."""
    published_data: RelativePath | None = None
    """The published figure's data (CSV or JSON, `judging.figures.data`; e.g. series digitized
    once by the organizers), relative to the registry file: the chart signals then compare the
    published side from its data, not its image."""
    reported_value: float | None = None
    values: list[TableValue] | None = None
    """Table claims: the reported value of each cell (by name)."""
    tolerance: Tolerance | None = None
    rerun_pattern: str | dict[str, str] | None = None
    """How `judging rerun` reads the claim's number from a re-run's output: a regular expression
    whose first group is the number (the last match counts); a table claim's, one per cell name.
    Authoritative: it replaces what the participant declares."""

    @field_validator("rerun_pattern")
    @classmethod
    def _one_group(cls, value: str | dict[str, str] | None) -> str | dict[str, str] | None:
        for pattern in ([value] if isinstance(value, str) else list((value or {}).values())):
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"rerun_pattern {pattern!r} is not a regular expression: "
                                 f"{exc}") from None
            if compiled.groups < 1:
                raise ValueError(f"rerun_pattern {pattern!r} has no group: put the number in "
                                 f"(...)")
        return value


class RegistryPaper(StrictModel):
    """A paper's other names, so that a submission keyed by any of them meets the registry's
    claims: an arXiv-keyed Space (`neurips26-repro-2508.18741`) and `neurips26-4821/c2`."""

    paper_id: str
    """The registry's id of the paper (its claims' prefix)."""
    arxiv: str | None = None
    """arXiv id, e.g. 2508.18741 (a version suffix and an `arXiv:` prefix are ignored)."""
    neurips: str | int | None = None
    """The event's paper number, e.g. 4821."""
    openreview: str | None = None
    title: str | None = Field(default=None, max_length=500)
    aliases: list[str] = Field(default_factory=list, max_length=50)
    """Any other id the paper goes by."""

    def names(self) -> list[str]:
        out = [self.paper_id, *self.aliases]
        for value in (self.arxiv, self.openreview):
            if value:
                out.append(str(value))
        if self.neurips is not None:
            out += [str(self.neurips), f"neurips-{self.neurips}"]
        return out


def paper_key(name: str) -> str:
    """An alias as compared: case folded, without an `arXiv:` prefix, an arxiv.org or
    openreview.net address, or an arXiv version suffix (2508.18741v2 is 2508.18741)."""
    text = name.strip().casefold()
    text = re.sub(r"^(?:https?://)?(?:www\.)?(?:arxiv\.org/(?:abs|pdf)/|openreview\.net/"
                  r"(?:forum|pdf)\?id=)", "", text)
    text = re.sub(r"^arxiv:\s*", "", text)
    return re.sub(r"^(\d{4}\.\d{4,5})v\d+$", r"\1", text)


class RegistryFile(StrictModel):
    event: str | None = None
    papers: list[RegistryPaper] = Field(default_factory=list)
    claims: list[RegistryClaim]


@dataclass(frozen=True)
class Registry:
    path: Path
    claims: dict[str, RegistryClaim]
    """By claim id, in file order."""
    shape: Literal["claims", "icml"] = "claims"
    ignored_keys: tuple[str, ...] = ()
    """ICML shape: the keys of its claims that map onto no registry field (ignored)."""
    aliases: dict[str, str] = field(default_factory=dict)
    """`paper_key(alias)` -> the registry's paper id (from `papers:`; each paper id is its
    own alias)."""

    def canonical(self, paper_id: str) -> str | None:
        """The registry's id of a paper known by `paper_id` (itself, or an alias), else None."""
        if any(entry.paper_id == paper_id for entry in self.claims.values()):
            return paper_id
        return self.aliases.get(paper_key(paper_id))

    def for_paper(self, paper_id: str) -> list[RegistryClaim]:
        """The registry claims of one paper (by its id or an alias), in file order (a claim
        without paper_id is none's)."""
        paper_id = self.canonical(paper_id) or paper_id
        return [entry for entry in self.claims.values() if entry.paper_id == paper_id]

    def named_in(self, paper_id: str, cells: list[str]) -> dict[str, str]:
        """The claims of `paper_id` that a table row of cells names, by claim id -> the cell
        naming it: a cell that is the claim's id or the part after the paper's ("c2", "Claim 2",
        "neurips26-4821/c2"), or, within a cell's text, its whole id or "claim 2". A bare "C4"
        within text is not read as naming claim 4: it is as often a name (the C4 corpus)."""
        named: dict[str, str] = {}
        for entry in self.for_paper(paper_id):
            whole, within = _naming_patterns(entry.claim_id, entry.paper_id)
            for cell in cells:
                if any(whole.fullmatch(part) for part in _id_parts(cell)) \
                        or within.search(cell):
                    named.setdefault(entry.claim_id, cell.strip())
        return named

    def not_addressed(self, paper_id: str, claim_ids: set[str]) -> list[RegistryClaim]:
        """The claims of `paper_id` that a submission with claims `claim_ids` has no claim for."""
        return [entry for entry in self.for_paper(paper_id) if entry.claim_id not in claim_ids]

    def figure_path(self, entry: RegistryClaim) -> Path | None:
        return self._path(entry, entry.published_figure)

    def data_path(self, entry: RegistryClaim) -> Path | None:
        """The published figure's data file, when the registry gives one."""
        return self._path(entry, entry.published_data)

    def _path(self, entry: RegistryClaim, relative: str | None) -> Path | None:
        if relative is None:
            return None
        try:
            return confine(self.path.parent, relative)
        except UnsafePathError as exc:
            raise RegistryError(f"claim {entry.claim_id}: {exc}", path=str(self.path)) from exc


def _bare(text: str) -> str:
    return text.strip().strip("*`_[]() \t").strip()


#: One claim's name in a cell listing claims ("c1, c2", "Claim 1 & Claim 3", "p/c1; p/c2").
_ID_LIKE = re.compile(r"(?i)(?:claim\s*#?\s*c?\s*|c)\d+|\S+/\S+")


def _id_parts(cell: str) -> list[str]:
    """The cell as one name, and, when it is a list of names and nothing else, each of them."""
    bare = _bare(cell)
    parts = [_bare(p) for p in re.split(r"\s*(?:[,;&+]|\band\b|\s/\s)\s*", bare)]
    parts = [p for p in parts if p]
    listed = len(parts) > 1 and all(_ID_LIKE.fullmatch(p) for p in parts)
    return [bare, *parts] if listed else [bare]


def _naming_patterns(claim_id: str, paper_id: str | None) -> tuple[re.Pattern[str],
                                                                    re.Pattern[str]]:
    """(what a whole cell naming the claim is, what names it within a cell's text). "C2.1" and
    "claim 2a" are parts of claim 2, each a claim of its own: they do not name claim 2."""
    local = claim_id[len(paper_id) + 1:] if paper_id and claim_id.startswith(paper_id + "/") \
        else claim_id.rsplit("/", 1)[-1]
    full = re.escape(claim_id)
    after = r"(?![\w-]|[.,]\d)"
    numbered = re.fullmatch(r"(?i)c(\d+)", local)
    if numbered is None:
        return (re.compile(f"(?i)(?:{full}|{re.escape(local)})"),
                re.compile(rf"(?i)(?<![\w/.-]){full}{after}"))
    n = int(numbered.group(1))
    return (re.compile(rf"(?i){full}|(?:claim\s*#?\s*c?\s*|c)0*{n}"),
            re.compile(rf"(?i)(?<![\w/.-]){full}{after}|\bclaim\s*#?\s*c?\s*0*{n}{after}"))


#: ICML shape: the keys of a claim taken onto `RegistryClaim` (besides `text`, the statement).
ICML_FIELDS = ("kind", "source", "published_figure", "published_data", "reported_value",
               "values", "tolerance", "rerun_pattern")

_CLAIM_ID = TypeAdapter(Identifier)

_SHAPES = ("a registry is either ours, `claims: [{claim_id, ...}]`, or the ICML shape, "
           "`{paper_id: [{text: ...}, ...]}`")


def _is_icml(data: object) -> bool:
    """A mapping without a `claims` key whose every value is a list (and at least one)."""
    return (isinstance(data, dict) and "claims" not in data and bool(data)
            and all(isinstance(value, list) for value in data.values()))


def _shape_error(doc: LocatedDocument, path: Path) -> RegistryError:
    data = doc.data
    if isinstance(data, dict) and not data:
        return RegistryError(f"the registry is empty: {_SHAPES}", path=str(path))
    if isinstance(data, dict):
        key = next(k for k, v in data.items() if not isinstance(v, list))
        return RegistryError(f"{key!r} does not hold a list of claims (found "
                             f"{type(data[key]).__name__}; with no 'claims' key this would be "
                             f"the ICML shape): {_SHAPES}",
                             path=str(path), line=doc.line_of((key,)))
    return RegistryError(f"the registry is not a mapping (found {type(data).__name__}): "
                         f"{_SHAPES}", path=str(path), line=1)


def _icml_claims(doc: LocatedDocument, path: Path) -> tuple[list[RegistryClaim], set[str]]:
    """The claims of an ICML-shaped registry, `<paper_id>/c<N>`; and the keys ignored."""
    claims: list[RegistryClaim] = []
    ignored: set[str] = set()
    shown = str(path)
    for key, items in doc.data.items():
        if isinstance(key, bool) or not isinstance(key, str | int):
            raise RegistryError(f"paper id {key!r} must be text", path=shown,
                                line=doc.line_of((key,)))
        paper_id = str(key)
        try:
            _CLAIM_ID.validate_python(f"{paper_id}/c{max(1, len(items))}")
        except ValidationError as exc:
            raise RegistryError(f"paper id {paper_id!r} cannot name claims: an id is letters, "
                                f"digits and ._/+@- (starting with a letter or digit), "
                                f"<paper_id>/c<N> at most 200 characters", path=shown,
                                line=doc.line_of((key,))) from exc
        for index, item in enumerate(items):
            number = index + 1
            claim_id = f"{paper_id}/c{number}"
            line = doc.line_of((key, index))
            where = f"{paper_id}[{index}]"
            if not isinstance(item, dict):
                raise RegistryError(f"claim {number} of paper {paper_id} is not a mapping with a "
                                    f"'text' (found {type(item).__name__})",
                                    path=shown, line=line, field=where)
            text = item.get("text")
            if not isinstance(text, str) or not text.strip():
                raise RegistryError(f"claim {number} of paper {paper_id} has no 'text' (each "
                                    f"claim needs its statement as text)", path=shown, line=line,
                                    field=where)
            for name, expected in (("claim_id", claim_id), ("paper_id", paper_id)):
                if name in item and item[name] != expected:
                    raise RegistryError(f"{name} {item[name]!r} disagrees with where the claim "
                                        f"is listed: the ICML shape names claims by paper and "
                                        f"list order, so this is {expected!r}", path=shown,
                                        line=doc.line_of((key, index, name)),
                                        field=f"{where}.{name}")
            ignored |= {str(k) for k in item if k not in (*ICML_FIELDS, "text", "claim_id",
                                                          "paper_id")}
            data: dict[str, Any] = {k: item[k] for k in ICML_FIELDS if k in item}
            try:
                claims.append(RegistryClaim(claim_id=claim_id, paper_id=paper_id,
                                            statement=text, **data))
            except ValidationError as exc:
                message, at, field_name = describe_validation_error(exc, doc.sub((key, index)))
                if field_name == "statement":
                    field_name = "text"  # the statement is the claim's text in this shape
                raise RegistryError(f"claim {number} of paper {paper_id}: {message}",
                                    path=shown, line=at or line,
                                    field=f"{where}.{field_name}" if field_name else where
                                    ) from exc
    return claims, ignored


def load_registry(path: Path | str) -> Registry:
    """Read a registry from YAML/JSON (`claims: [...]` or the ICML shape `{paper_id: [{text}]}`)
    or JSONL (one claim per line)."""
    path = Path(path)
    shape: Literal["claims", "icml"] = "claims"
    ignored: set[str] = set()
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
        if _is_icml(doc.data):
            shape = "icml"
            entries, ignored = _icml_claims(doc, path)
            registry_file = RegistryFile(claims=entries)
        elif isinstance(doc.data, dict) and "claims" in doc.data:
            try:
                registry_file = RegistryFile.model_validate(doc.data)
            except ValidationError as exc:
                raise_validation_error(exc, doc, error_class=RegistryError)
                raise
        else:
            raise _shape_error(doc, path)
        if ignored:
            log.warning("%s: keys ignored in the ICML-shaped registry (no registry field): %s",
                        path, ", ".join(sorted(ignored)))
    claims: dict[str, RegistryClaim] = {}
    for entry in registry_file.claims:
        if entry.claim_id in claims:
            raise RegistryError(f"duplicate claim_id {entry.claim_id!r}", path=str(path))
        claims[entry.claim_id] = entry
    aliases: dict[str, str] = {}
    for paper in registry_file.papers:
        for name in paper.names():
            key = paper_key(name)
            if aliases.get(key, paper.paper_id) != paper.paper_id:
                raise RegistryError(f"paper alias {name!r} names both {aliases[key]!r} and "
                                    f"{paper.paper_id!r}", path=str(path))
            aliases[key] = paper.paper_id
    registry = Registry(path=path.resolve(), claims=claims, shape=shape,
                        ignored_keys=tuple(sorted(ignored)), aliases=aliases)
    for entry in claims.values():
        figure = registry.figure_path(entry)
        if figure is not None and not figure.is_file():
            raise RegistryError(f"claim {entry.claim_id}: published_figure "
                                f"{entry.published_figure} not found", path=str(path))
        # found here, read when the claim is measured: a data file that does not parse leaves
        # that claim's figure read from its image (with a flag), the run goes on
        data = registry.data_path(entry)
        if data is not None and not data.is_file():
            raise RegistryError(f"claim {entry.claim_id}: published_data "
                                f"{entry.published_data} not found", path=str(path))
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
