"""Trackio logbooks as submissions: a published logbook folder (pages/index.md), a workspace or
mirror holding `.trackio/logbook/` (up to 3 folders deep), or a Space downloaded from the Hub.

`load_logbook(folder, out_dir=...)` reads the pages (reader), finds the claims from structure
(claims: claim pages, index rows whose page is absent, claims-table rows, numbered claims lists,
`## Claim N` sections), extracts the verdict and values from their declared places with their
quotes (`judging.intake.extract`, every shape's), writes figures, their raw data as figure-data
files, and run logs under `out_dir` (figures; never into the source folder) and says what it
holds per claim; the page engine (`judging.intake.engine`) makes the `ClaimInput`s. A logbook
with pages and no claim found is an error naming its pages. A claim that does not fit the claim
model is a `ClaimProblem` in our own words (the field and why), never a validation library's
message.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from judging.errors import ManifestError
from judging.hashing import file_sha256
from judging.intake.engine import Material, add_claims, submission_header
from judging.intake.extract import (
    VALUE_PLACES,
    VERDICT_PLACES,
    VERDICT_TABLE,
    map_verdict,
)
from judging.intake.llm import LLMOutcome, StructuredAsk, llm_fill
from judging.intake.logbook.claims import (
    FoundClaim,
    ScaleNotes,
    agent,
    decoded_chart,
    extract_page,
    find_claims,
    kind_of,
    materialize,
    paper_id,
    readme_labels,
    scale_notes,
    statement,
    submission_id,
)
from judging.intake.logbook.figures import Figure
from judging.intake.logbook.reader import Cell, Logbook, Page, find_logbook_root, read_logbook
from judging.intake.manifest import LoadedSubmission
from judging.intake.registry import Registry
from judging.models import MAX_NOTE_CHARS, Agent, ClaimProblem, FieldProvenance, Flag

log = logging.getLogger(__name__)

#: The page vocabulary the other shapes read their reports with (a report is a logbook page
#: without cells' headers): pages, claims found on them, the logbook's claim rules.
__all__ = ["LOGBOOK", "VALUE_PLACES", "VERDICT_PLACES", "VERDICT_TABLE", "Cell", "FoundClaim",
           "LLMOutcome", "Logbook", "Page", "StructuredAsk", "extract_page", "fill_with_llm",
           "find_claims", "find_logbook_root", "is_logbook", "kind_of", "load_logbook",
           "map_verdict", "read_logbook", "statement"]


def is_logbook(folder: Path) -> bool:
    return find_logbook_root(Path(folder)) is not None


class _LogbookShape:
    """A Trackio logbook as a submission shape (`shapes.SHAPES`)."""

    name = "logbook"

    def detect(self, folder: Path) -> bool:
        return is_logbook(folder)

    def one_submission(self, folder: Path, **_: object) -> bool:
        """The folder is one logbook (a published one, a workspace, a mirror holding at most
        one), not a folder of several."""
        if (folder / "pages").is_dir() and is_logbook(folder) or \
                (folder / ".trackio" / "logbook").is_dir():
            return True
        if not is_logbook(folder):
            return False
        inner = [c for c in folder.iterdir() if c.is_dir() and not c.name.startswith(".")
                 and is_logbook(c)]
        return len(inner) <= 1

    def load(self, folder: Path, *, out_dir: Path | None, registry: Registry | None,
             extractor: StructuredAsk | None, **places: frozenset[str]) -> LoadedSubmission:
        if out_dir is None:
            raise ValueError("a logbook needs an output folder for its figures and logs")
        return load_logbook(folder, out_dir=out_dir, registry=registry, extractor=extractor,
                            **places)


LOGBOOK = _LogbookShape()


def _figure_note(figures: list[Figure]) -> str:
    lines = []
    for f in figures:
        where = f.path or f.data_path or f.url or ""
        lines.append(f"- figure {f.page}#{f.index} ({f.how}): {f.status} {where} {f.detail}")
    return "\n".join(lines)


def fill_with_llm(found: list[FoundClaim], ask: StructuredAsk, *, paper: str
                  ) -> list[LLMOutcome]:
    """The LLM extractor over every claim found (in place): fills what the deterministic
    extractor missed, each field's quote checked against its page (see `llm.llm_fill`)."""
    return [llm_fill(claim.extraction, ask, page_text=claim.page.text,
                     prose=llm_text(claim), statement=statement(claim) or claim.title,
                     claim_ref=f"{paper}/{claim.local_id}")
            for claim in found if claim.page.error is None and claim.place != "absent page"]


#: A `raw` fence (a figure's plotted data) is shown to the LLM up to this many lines.
RAW_LINES = 40


def llm_text(claim: FoundClaim) -> str:
    """What the LLM extractor reads of a claim: a claim page whole (its run cells' commands and
    outputs too), a row, item or section as found; data URIs cut short and a figure's raw data
    fence to its first lines (the numbers a claim states are not in a 5,000-row CSV)."""
    text = claim.page.text if claim.place == "page" and claim.page.text else claim.prose
    text = re.sub(r"data:image/[\w+.-]+;base64,[A-Za-z0-9+/=\s]{100,}", "data:image/...", text)

    def head(match: re.Match[str]) -> str:
        lines = match.group("body").splitlines()
        if len(lines) <= RAW_LINES:
            return match.group(0)
        return (f"{match.group('open')}{chr(10).join(lines[:RAW_LINES])}\n[... {len(lines) - RAW_LINES} "
                f"more lines of raw data ...]\n{match.group('close')}")

    return re.sub(r"(?ms)(?P<open>^(?P<f>`{3,}|~{3,})raw[^\n]*\n)(?P<body>.*?)(?P<close>^(?P=f)"
                  r"[ \t]*$)", head, text)


def load_logbook(folder: Path | str, *, out_dir: Path, registry: Registry | None = None,
                 extractor: StructuredAsk | None = None,
                 verdict_places: frozenset[str] = VERDICT_PLACES,
                 value_places: frozenset[str] = VALUE_PLACES) -> LoadedSubmission:
    """One logbook as a submission. Figures and logs go under `out_dir` (in the run directory);
    a page that does not parse is an error on that page's claim, the others load. With an
    `extractor` (`--extract openai:MODEL`), an LLM fills the fields the patterns missed."""
    folder = Path(folder)
    try:
        logbook = read_logbook(folder)
    except FileNotFoundError as exc:
        raise ManifestError(str(exc), path=str(folder)) from exc
    sid = submission_id(logbook)
    pid, pid_from = paper_id(logbook)
    warnings = list(logbook.warnings)
    if pid is not None and "also tagged" in pid_from:
        warnings.append(f"paper id: several paper-<id> tags, the first is used: {pid_from}")
    if pid is None:
        warnings.append(f"paper id: {pid_from}; the submission id stands in")
        pid = re.sub(r"[^A-Za-z0-9._-]+", "-", sid.split("/")[-1]) or "unknown-paper"
    canonical = registry.canonical(pid) if registry is not None else None
    if canonical is not None and canonical != pid:
        warnings.append(f"paper id: {pid} ({pid_from}) is {canonical} in the registry")
        pid = canonical
    who = agent(logbook)
    header = submission_header(
        folder, submission_id=sid, paper_id=pid, paper_title=(logbook.title[:500] or None),
        agent=Agent(name=who[0], model=who[1]) if who else None,
        warnings=[w[:MAX_NOTE_CHARS] for w in warnings][:200])
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    loaded = LoadedSubmission(header=header, folder=out_dir.resolve(),
                              manifest=logbook.root / "pages" / "index.md")
    found = find_claims(logbook, verdict_places=verdict_places, value_places=value_places)
    warnings = list(dict.fromkeys(warnings + logbook.warnings))
    header = header.model_copy(update={"warnings": [w[:MAX_NOTE_CHARS] for w in warnings][:200]})
    loaded.header = header
    if not found:
        loaded.problems.append(no_claim_problem(logbook, sid))
        return loaded
    if extractor is not None:
        fill_with_llm(found, extractor, paper=pid)
    shared = materialize(logbook, found, out_dir)
    scope = scale_notes(logbook)
    readme = readme_labels(logbook.readme) if logbook.readme_outside else {}
    for warning in warnings:
        log.warning("%s: %s", sid, warning)
    made = add_claims(loaded, found, pid=pid, base=out_dir, registry=registry,
                      manifest=lambda claim: claim.page.path,
                      material=lambda claim: _material(claim, out_dir, shared, warnings, scope))
    for claim, claim_input in made:
        other = readme.get(claim.number) if claim.number is not None else None
        if other is not None and claim_input.claim.verdict is not None and \
                other.mapped.verdict not in (None, claim_input.claim.verdict):
            claim_input.flags.append(Flag(
                name="readme_disagrees",
                detail=(f"the repository README gives claim {claim.number} the label "
                        f"{other.text!r} ({other.quote}); the logbook's verdict "
                        f"{claim_input.claim.verdict.value} stands")[:MAX_NOTE_CHARS]))
    return loaded


def no_claim_problem(logbook: Logbook, sid: str) -> ClaimProblem:
    """The error of a submission whose pages hold no claim (never an empty success)."""
    slugs = [p.slug for p in logbook.pages] + (["index"] if logbook.index_text.strip() else [])
    shown = ", ".join(slugs[:20]) + (f" and {len(slugs) - 20} more" if len(slugs) > 20 else "")
    return ClaimProblem(
        submission_id=sid, claim_id=None, index=0, manifest=str(logbook.root / "pages"),
        line=None,
        reason=(f"no claim found on its {len(slugs)} page(s) ({shown or 'none'}): no claim page "
                f"(a claim-... slug or a 'Claim N' title), no claims table, no numbered claims "
                f"list and no '## Claim N' section")[:MAX_NOTE_CHARS])


def _material(found: FoundClaim, out_dir: Path, shared: list[Figure], warnings: list[str],
              scope: ScaleNotes | None) -> Material:
    """What the logbook holds for one claim beside its page's extraction: its decoded figure,
    run logs and scripts (written under `out_dir`), the Scope & cost note, its warnings."""
    ex = found.extraction
    kind = kind_of(found)
    chart = decoded_chart(found)
    material = Material(kind=kind, statement=statement(found), justification=found.prose,
                        carrier="page",
                        no_figure="a logbook carries no published figure")
    # an LLM-extracted scale note (`--extract`) when the page has no toy quote
    material.scale_note = ex.toy_note()
    note = scope.for_claim(found.number) if scope is not None else None
    if note is not None:
        # the toy quote stays first: the verdict rubric's scale_disclosed reads "toy: ..."
        text = f"Scope & cost ({scope.page}): {note[0]}"  # type: ignore[union-attr]
        scale = material.scale_note
        material.scale_note = (f"{scale}\n{text}" if scale else text)[:MAX_NOTE_CHARS]
        material.provenance["scale_note"] = FieldProvenance(how="declared",
                                                            quote=note[1][:MAX_NOTE_CHARS])
    scripts = _scripts(found, out_dir) if found.place != "absent page" else []
    material.script, material.scripts = (scripts[0] if scripts else None), scripts[1:51]
    material.logs = [log_.path for log_ in found.logs]
    if chart is not None:
        material.figure, material.figure_data = chart.path, chart.figure_data_path
    elif kind == "figure":
        material.absent["reproduced_figure"] = "no figure of the claim could be decoded"
    fig_note = _figure_note(found.figures or shared)
    if fig_note:
        material.justification += f"\n\nFigures (judging's reading):\n{fig_note}"
    missing = sorted({m for log_ in found.logs for m in log_.missing_scripts})
    if missing:
        material.absent["scripts"] = ("the run cells name scripts whose body neither the cell "
                                      "nor the workspace holds: "
                                      + ", ".join(missing))[:MAX_NOTE_CHARS]
    for warning in found.warnings:
        name = ("page_absent" if warning.startswith("page absent") else "figure_reused"
                if warning.startswith("figure reused") else "logbook_warning")
        material.flags.append(Flag(name=name, detail=warning[:MAX_NOTE_CHARS]))
    slug = found.page.slug
    page_warnings = [w for w in warnings if f"pages/{slug}/" in w or f"page {slug}:" in w
                     or f"page {slug!r}" in w]
    if page_warnings:
        material.flags.append(Flag(name="logbook_warning",
                                   detail="; ".join(page_warnings)[:MAX_NOTE_CHARS]))
    return material


def _scripts(found: FoundClaim, out_dir: Path) -> list[str]:
    """The scripts of the claim's run cells (written under `out_dir`), the same bytes once."""
    seen: set[str] = set()
    out: list[str] = []
    for run in found.logs:
        for path in run.scripts:
            digest = file_sha256(out_dir / path) or path
            if digest not in seen:
                seen.add(digest)
                out.append(path)
    return out
