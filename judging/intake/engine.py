"""The page engine's last step (issue 40): the claims found on a submission's pages, of any shape
(a logbook's pages, a Space's reports), become the claim inputs every run reads, once, here.

A shape finds its claims (`FoundClaim`: a page, a place on it, the extraction of its verdict and
values with their quotes) and says what it holds beside them for each claim (`Material`: its
kind, figure, logs, scripts, traces, justification, further flags); `add_claims` numbers them,
refuses a second claim of one number and turns each into a `ClaimInput` through the manifest's
`make_claim_input` (the registry applied), with the extraction's flags, or into one problem line
in our own words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from judging.errors import ManifestError, UnsafePathError
from judging.intake.extract import Extraction
from judging.intake.manifest import (
    MAX_CLAIMS_PER_SUBMISSION,
    LoadedSubmission,
    make_claim_input,
)
from judging.intake.registry import Registry
from judging.models import (
    FIGURE_MATCH_NOT_APPLICABLE,
    MAX_JUSTIFICATION_CHARS,
    MAX_NOTE_CHARS,
    MAX_STATEMENT_CHARS,
    Claim,
    ClaimInput,
    ClaimKey,
    ClaimProblem,
    Evidence,
    FieldProvenance,
    Flag,
    SubmissionHeader,
)


class OnPage(Protocol):
    """What the engine reads of a claim's page (`logbook.reader.Page`)."""

    slug: str
    path: Path
    origin: str | None
    error: str | None


class FoundClaim(Protocol):
    """What the engine reads of a claim found on a page (`logbook.claims.FoundClaim`): the
    engine sits below the shapes and imports none of them; the extraction is the one
    `extract` makes for every shape."""

    page: OnPage
    number: int | None
    row: int | None
    place: str
    prose: str
    extraction: Extraction

    @property
    def local_id(self) -> str: ...

    @property
    def id_provenance(self) -> FieldProvenance: ...


@dataclass
class Material:
    """What a shape holds for one claim beside the claim's extraction."""

    kind: str
    statement: str
    justification: str
    figure: str | None = None
    figure_data: str | None = None
    scale_note: str | None = None
    logs: list[str] = field(default_factory=list)
    script: str | None = None
    scripts: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    absent: dict[str, str] = field(default_factory=dict)
    """Reasons of absent fields the shape knows (a figure it could not decode)."""
    provenance: dict[str, FieldProvenance] = field(default_factory=dict)
    """Provenance the shape adds (or overrides: the claim id of a report read as one claim)."""
    flags: list[Flag] = field(default_factory=list)
    carrier: str = "page"
    """What the claim was read from, in the flags' words ("page", "Space")."""
    no_figure: str = "the submission carries no published figure"
    """Why figure-match does not apply when no registry claim gives a published figure."""


def claim_origin(claim: FoundClaim, default: str | None = None) -> str:
    """Where a claim was read: the page (its file, else `default`, else the logbook's page),
    and its place on it."""
    where = "pages/index.md" if claim.page.slug == "index" and claim.place != "page" \
        else f"pages/{claim.page.slug}/page.md"
    where = claim.page.origin or default or where
    if claim.place == "table row":
        return f"{where} row {claim.row}"
    if claim.place == "list item":
        return f"{where} item {claim.number if claim.number is not None else claim.row}"
    if claim.place == "section":
        return f"{where} section {claim.row}"
    if claim.place == "absent page":
        return f"{where} (page absent)"
    return where


def add_claims(loaded: LoadedSubmission, found: list[FoundClaim], *, pid: str,
               material: Callable[[FoundClaim], Material], base: Path,
               registry: Registry | None, local_id: Callable[[FoundClaim], str] | None = None,
               default_origin: str | None = None, manifest: Callable[[FoundClaim], Path],
               ) -> list[tuple[FoundClaim, ClaimInput]]:
    """Each claim found as the input a run reads (appended to `loaded.claims`), or one problem
    line in our words: a page that could not be read, a second claim of one number, a claim
    that does not fit the claim model. `base` is the folder the claims' paths are relative to;
    `local_id` names a claim (default: its number or place); `manifest` is the file a problem
    points at. Returns the (claim, input) pairs made, for the shape's own checks."""
    header = loaded.header
    seen: set[str] = set()
    made: list[tuple[FoundClaim, ClaimInput]] = []
    if len(found) > MAX_CLAIMS_PER_SUBMISSION:
        # a page of 10,000 numbered items is no report of claims (and was 10,000 lines of the
        # run): the manifest's limit, the first ones judged, the rest one line
        loaded.problems.append(ClaimProblem(
            submission_id=header.submission_id, claim_id=None, index=len(loaded.problems),
            manifest=str(manifest(found[MAX_CLAIMS_PER_SUBMISSION])), line=None,
            reason=f"{len(found):,} claims found, over the limit of {MAX_CLAIMS_PER_SUBMISSION} "
                   f"per submission: the first {MAX_CLAIMS_PER_SUBMISSION} are read, the rest "
                   f"are not judged"))
        found = found[:MAX_CLAIMS_PER_SUBMISSION]
    first = len(loaded.problems)  # a shape's problems with its files come first
    ids = [f"{pid}/{local_id(claim) if local_id is not None else claim.local_id}"
           for claim in found]
    named = registry_named(found, ids, pid, registry)
    ids = [named[i].claim_id or own if i in named else own for i, own in enumerate(ids)]
    for index, (claim, claim_id) in enumerate(zip(found, ids, strict=True), start=first):
        origin = claim_origin(claim, default_origin)
        if claim.page.error is not None or claim_id in seen:
            reason = (f"{origin}: {claim.page.error}" if claim.page.error
                      else f"{origin}: a second claim numbered {claim.local_id}; only the first "
                           f"is judged")
            loaded.problems.append(ClaimProblem(
                submission_id=header.submission_id, claim_id=claim_id, index=index,
                manifest=str(manifest(claim)), line=None, reason=reason))
            continue
        seen.add(claim_id)
        held = material(claim)
        if (match := named.get(index - first)) is not None:
            held.flags += match.flags
            if match.provenance is not None:
                held.provenance["claim_id"] = match.provenance
        try:
            claim_input = claim_input_of(claim, claim_id, origin, header, base, registry, held)
        except (ValidationError, UnsafePathError, ValueError) as exc:
            loaded.problems.append(ClaimProblem(
                submission_id=header.submission_id, claim_id=claim_id, index=index,
                manifest=str(manifest(claim)), line=None,
                reason=f"{origin}: {in_our_words(exc)}"))
            continue
        loaded.claims.append(claim_input)
        made.append((claim, claim_input))
    return made


@dataclass
class RegistryMatch:
    """What a claim without a number of its own gets from the registry claim its row names."""

    claim_id: str | None = None
    """The registry's claim id it is matched to (None: it keeps its own, see `flags`)."""
    provenance: FieldProvenance | None = None
    flags: list[Flag] = field(default_factory=list)


def registry_named(found: list[FoundClaim], ids: list[str], pid: str,
                   registry: Registry | None) -> dict[int, RegistryMatch]:
    """By position in `found`: the table rows with no claim number of their own (`ids` holds
    each claim's own id) that name a registry claim of the paper in a cell ("c1", "claim 1",
    the full id). Matched only when the row names exactly one, and no other claim of the
    submission is, or names, that one; else the row keeps its own id and a flag says why
    (precision first: an unmatched claim is judged on its own, a wrong match would take the
    registry's reference)."""
    if registry is None or registry.canonical(pid) is None:
        return {}
    out: dict[int, RegistryMatch] = {}
    wanted: dict[int, tuple[str, str]] = {}
    for i, claim in enumerate(found):
        if claim.number is not None or claim.place != "table row":
            continue
        cells = [c for c in re.split(r"(?<!\\)\|", claim.prose.strip().strip("|"))
                 if c.strip()]
        names = registry.named_in(pid, cells)
        if len(names) == 1:
            wanted[i] = next(iter(names.items()))
        elif names:
            out[i] = RegistryMatch(flags=[Flag(
                name="registry_claim_unmatched",
                detail=f"the row names several registry claims ({', '.join(names)[:300]}): "
                       f"matched to none")])
    for i, (target, cell) in wanted.items():
        others = [j for j, (t, _) in wanted.items() if t == target and j != i]
        if target in ids or others:
            why = "another claim of the submission is that claim" if target in ids \
                else "another row names it too"
            out[i] = RegistryMatch(flags=[Flag(
                name="registry_claim_unmatched",
                detail=f"the row names registry claim {target}, but {why}: matched to none")])
            continue
        out[i] = RegistryMatch(claim_id=target, provenance=FieldProvenance(
            how="declared", quote=cell[:MAX_NOTE_CHARS],
            place="registry claim named in the table row"))
    return out


def file_problems(loaded: LoadedSubmission, errors: list[tuple[str, str]], pid: str,
                   folder: Path) -> None:
    """One problem line per (file, what is wrong) of a submission in `folder`."""
    sid = loaded.header.submission_id
    taken = {p.claim_id for p in loaded.problems}
    for where, what in errors:
        # a file's id keeps the characters an id may hold; names that differ only in the others
        # ("a b.json", "a#b.json") are numbered apart (one claim key, one error line each)
        base = f"{pid}/file/{re.sub(r'[^A-Za-z0-9._/+@-]', '-', where)}"[:190]
        claim_id = next(c for n in range(len(taken) + 2)
                        if (c := base if n == 0 else f"{base}-{n + 1}") not in taken)
        taken.add(claim_id)
        loaded.problems.append(ClaimProblem(
            submission_id=sid, claim_id=claim_id, index=len(loaded.problems),
            manifest=str(folder / where), line=None, reason=f"{where}: {what}"))


def claim_input_of(found: FoundClaim, claim_id: str, origin: str, header: SubmissionHeader,
                   base: Path, registry: Registry | None, material: Material) -> ClaimInput:
    """One claim found, with what its shape holds for it, as a claim input."""
    ex = found.extraction
    kind = material.kind
    provenance = dict(ex.provenance)
    provenance.update({k: v for k, v in material.provenance.items() if k != "claim_id"})
    provenance["claim_id"] = material.provenance.get("claim_id", found.id_provenance)
    values: dict[str, object] = {}
    if kind in ("number", "figure", "theorem"):
        values = {"reported_value": ex.reported, "reproduced_value": ex.reproduced}
    figure = kind == "figure"
    claim = Claim(
        claim_id=claim_id, kind=kind,
        statement=(material.statement or claim_id)[:MAX_STATEMENT_CHARS],
        reproduced_figure=material.figure if figure else None,
        reproduced_data=material.figure_data if figure else None,
        verdict=ex.verdict, justification=material.justification[:MAX_JUSTIFICATION_CHARS],
        scale_note=material.scale_note,
        evidence=Evidence(logs=material.logs[:50], script=material.script,
                          scripts=material.scripts[:50], traces=material.traces[:50]),
        source_verdict=ex.source_verdict, toy=ex.toy, provenance=provenance,
        absent={**ex.absent, **material.absent},
        theorem_values=kind == "theorem" and any(v is not None for v in values.values()),
        **{k: v for k, v in values.items() if v is not None})
    claim_input = make_claim_input(claim, header, base.resolve(), registry, None)
    flags = list(claim_input.flags)
    if figure and claim_input.published_path is None:
        flags.append(Flag(name=FIGURE_MATCH_NOT_APPLICABLE,
                          detail=f"{material.no_figure} and no registry claim gives one: "
                                 f"figure-match is not applicable; the verdict rubric judges "
                                 f"the claim"))
    flags += extraction_flags(ex, material.carrier) + material.flags
    return claim_input.model_copy(update={"flags": flags, "origin": origin,
                                          "key": ClaimKey(submission_id=header.submission_id,
                                                          claim_id=claim_id)})


def extraction_flags(ex: Extraction, where: str) -> list[Flag]:
    """The flags of what the extractor read: labels that contradict each other, a verdict that
    changed down the `where` (page, report), a toy scale."""
    flags = []
    if ex.contradiction is not None:
        flags.append(Flag(name="self_contradiction",
                          detail=f"the {where} contradicts itself: {ex.contradiction[0]!r} vs "
                                 f"{ex.contradiction[1]!r}"[:MAX_NOTE_CHARS]))
    if ex.changed is not None:
        flags.append(Flag(name="verdict_changed",
                          detail=f"the verdict changes down the {where}: {ex.changed[0]!r}, "
                                 f"later {ex.changed[1]!r}; the last is taken"[:MAX_NOTE_CHARS]))
    if ex.toy:
        scale = ex.toy_note()
        flags.append(Flag(name="toy", detail=scale or "toy"))
    return flags


def submission_header(folder: Path, **fields: object) -> SubmissionHeader:
    """The header of a logbook or Space, or a ManifestError in our own words when an id the
    participant chose cannot be one (a paper tag of 300 characters, a name of symbols)."""
    try:
        return SubmissionHeader.model_validate(fields)
    except ValidationError as exc:
        raise ManifestError(f"the submission cannot be read: {in_our_words(exc)}",
                            path=str(folder)) from None


#: The claim model's checks in our words, by the validation library's error type.
_OUR_WORDS = {
    "missing": "missing",
    "string_too_long": "longer than {max_length} characters",
    "too_long": "more than {max_length} entries",
    "string_pattern_mismatch": "not an id (letters, digits and ._/+@-, starting with a letter or "
                               "digit)",
    "float_parsing": "not a number",
    "float_type": "not a number",
    "int_parsing": "not a whole number",
    "finite_number": "not a finite number",
    "extra_forbidden": "not a field of a claim",
    "enum": "not one of {expected}",
    "literal_error": "not one of {expected}",
    "bool_parsing": "not true or false",
    "string_type": "not text",
}


def in_our_words(exc: Exception) -> str:
    """One line for a claim that does not fit the claim model: the field and why, without the
    validation library's wording, input dump or link."""
    if isinstance(exc, ValidationError):
        parts = []
        for error in exc.errors()[:3]:
            where = ".".join(str(p) for p in error.get("loc", ()) if p != "__root__")
            message = _OUR_WORDS.get(str(error.get("type")))
            if message is not None:
                message = message.format(**{k: v for k, v in (error.get("ctx") or {}).items()
                                            if isinstance(v, str | int | float)})
            else:
                message = str(error.get("msg", "")).removeprefix("Value error, ")
                message = re.sub(r"\s*\[type=.*$", "", message).strip()
            parts.append(f"{where}: {message}" if where else message)
        more = len(exc.errors()) - 3
        return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
    return re.sub(r"\s+", " ", str(exc)).strip()[:1000]
