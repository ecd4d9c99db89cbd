"""Claims from a logbook's pages, materialized into the claim model every later stage reads.

A claim is found from structure (docs/explanation/real-submissions.md):
1. a claim page: a page whose slug names a claim (`claim-3-...`, `claim-c1-...`,
   `current-claim-1`, `claim-drive-full-model-...`) or whose title does ("Claim 3: ...",
   "C3 — ..."); two pages carrying one claim number: the one that is not historical, then the
   one the followed order lists (an orphan newer than every listed page of that number wins),
   then the first; the others are noted;
2. an index row linking a claim page that is not there: a claim with the warning "page absent"
   (unless a present page carries its number);
3. else each row of a claims table (a Markdown table with a verdict column: Assessment,
   Verdict, Status, Evidence status, Result, Outcome), each item of a numbered list under a
   "Claims" heading or on a claims / overview page, each `## Claim N` section, on any page or
   on the index of a single-page report.
Claim numbers come from the text ("Claim 3", "C3", a `3.` list item, a `C3` row) when it gives
them: the id is `<paper_id>/c<N>`; else the id names the place and its order:
`<paper_id>/<page slug>` for a claim page, `...-r<k>` for a table row, `...-i<k>` for a list item,
`...-s<k>` for a section (provenance `claim_id`: how "declared" with the quote, or "order").

Each claim's verdict and values come from its declared places (`extract`); other pages' claims
tables and machine output keyed by the claim's number (`[PASS] c1_...`, `{"C1": {"status":
...}}`) are lower tiers of its verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from judging.errors import UnsafePathError
from judging.hashing import file_sha256
from judging.intake.extract import (
    VALUE_PLACES,
    VERDICT_PLACES,
    Extraction,
    Label,
    Value,
    cell_label,
    choose_values,
    decide_verdict,
    heading_label,
    map_verdict,
    output_fences,
    output_values,
    place_kind,
    printout_labels,
    sentence_values,
    table_values,
    text_labels,
    toy_scale,
)
from judging.intake.logbook.figures import DECODED, Figure, PageMaterializer, RunLog
from judging.intake.logbook.reader import Logbook, Page, parse_cells
from judging.intake.paths import MAX_TEXT_FILE_BYTES, read_confined
from judging.models import MAX_NOTE_CHARS, MAX_STATEMENT_CHARS, FieldProvenance

_CLAIM_SLUG = re.compile(r"(?i)(?:^|[-_])claim(?:[-_]|$)")
#: Slugs that hold the word claim but are about all claims, not one.
_NOT_ONE_CLAIM = re.compile(r"(?i)scorecard|summary|index|ledger|overview|catalog|mapping|"
                            r"(?:^|[-_])(?:list|table|status|plan)(?:$|[-_])")
_NUMBER_IN_TITLE = re.compile(r"(?i)^\s*(?:current\s+)?(?:claim\s*C?(?P<n>\d+)|C(?P<c>\d+))"
                              r"(?![\w.])")
_NUMBER_IN_SLUG = re.compile(r"(?i)(?:^|[-_])claim[-_]?c?(?P<n>\d+)(?:$|[-_])")
_ROW_NUMBER = re.compile(r"^\s*(?:\*\*)?(?:c|claim\s*)?(?P<n>\d+)\b", re.IGNORECASE)
_CLAIM_COLUMN = re.compile(r"(?i)claim|statement|^#$|^id$|^no\.?$")
_SECTION = re.compile(r"(?im)^#{2,4}[ \t]+(?:claim[ \t]+C?(?P<n>\d+)|C(?P<c>\d+))\b[^\n]*$")
#: A claim's section opened by a bold lead instead of a heading ("**Claim 2 (Theorem 1).** ...").
_BOLD_SECTION = re.compile(r"(?im)^(?:\*\*|__)(?:claim[ \t]+C?(?P<n>\d+)|C(?P<c>\d+))\b"
                           r"[^\n]*$")
#: Possessive: a heading of 100 KB of tabs was split between the two runs every way (quadratic).
_CLAIMS_HEADING = re.compile(r"(?im)^#{1,4}[ \t]++[^\n]*\bclaims?\b[^\n]*$")
_LIST_ITEM = re.compile(r"(?m)^[ \t]{0,3}(?P<n>\d{1,3})[.)][ \t]+(?P<first>\S[^\n]*)$")
_THEOREM = re.compile(r"\b(?:theorem|proposition|lemma|corollary|conjecture|bound)\b",
                      re.IGNORECASE)
_PAPER_TAG = re.compile(r"^paper-(?P<id>[A-Za-z0-9][\w-]{3,})$")
#: A claim key in machine output: `c1_bounded_tv`, `C3`, `claim_2`, `Claim 2`.
_CLAIM_KEY = re.compile(r"(?i)(?<![A-Za-z0-9])(?:claim[ _-]?|c)(?P<n>\d{1,3})(?=_|\b)")
_MACHINE_WORD = re.compile(r"\[(?:PASS|FAIL|OK)\]|\b(?:PASS|FAIL|VERIFIED|FALSIFIED|"
                           r"INCONCLUSIVE)\b|\bnot[-_ ]verified\b")


@dataclass
class FoundClaim:
    page: Page
    number: int | None
    """The participant's claim number (None: the text gives none)."""
    row: int | None
    """Order of the claim at its place: table row, list item or section (1-based)."""
    prose: str
    title: str
    extraction: Extraction
    figures: list[Figure] = field(default_factory=list)
    logs: list[RunLog] = field(default_factory=list)
    place: str = "page"
    """page | table row | list item | section | absent page | prose (read by the LLM)"""
    number_quote: str | None = None
    """The text the claim number was read from."""
    warnings: list[str] = field(default_factory=list)

    @property
    def local_id(self) -> str:
        if self.number is not None:
            return f"c{self.number}"
        suffix = {"table row": "r", "list item": "i", "section": "s", "prose": "p"}.get(
            self.place)
        return f"{self.page.slug}-{suffix}{self.row}" if suffix else self.page.slug

    @property
    def id_provenance(self) -> FieldProvenance:
        if self.number is not None and self.number_quote:
            return FieldProvenance(how="declared", quote=self.number_quote[:MAX_NOTE_CHARS],
                                   place=f"claim number in the {self.place}")
        return FieldProvenance(how="order", quote=(self.title or self.page.slug)[:MAX_NOTE_CHARS],
                               place=f"{self.place} order")


def paper_id(logbook: Logbook) -> tuple[str | None, str]:
    """(paper id, where it came from): the `paper-<id>` tag (README front matter, metadata.json,
    logbook.json tags), else metadata's paper fields, else logbook.json's."""
    tags: list[str] = []
    front = re.match(r"\A---\n(?P<y>.*?)\n---", logbook.readme, re.DOTALL)
    if front:
        tags += re.findall(r"(?m)^\s*-\s*['\"]?(paper-[\w-]+)", front.group("y"))
    for source in (logbook.metadata, logbook.manifest):
        value = source.get("tags")
        if isinstance(value, list):
            tags += [t for t in value if isinstance(t, str)]
    ids = list(dict.fromkeys(m.group("id") for t in tags if (m := _PAPER_TAG.match(t))))
    if ids:
        return ids[0], "tag paper-" + ids[0] + (f" (also tagged: {', '.join(ids[1:])})"
                                               if len(ids) > 1 else "")
    for name, source in (("metadata.json", logbook.metadata), ("logbook.json", logbook.manifest)):
        paper = source.get("paper")
        candidates = [source.get("paper_orid"), source.get("openreview_id")]
        if isinstance(paper, dict):
            candidates += [paper.get("openreview_id"), paper.get("openreview"),
                           paper.get("id"), paper.get("arxiv_id")]
        elif isinstance(paper, str):
            candidates.append(paper)
        for value in candidates:
            if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9][\w.-]{2,100}", value):
                return value, name
    return None, "no paper-<id> tag and no paper id in metadata.json or logbook.json"


def submission_id(logbook: Logbook) -> str:
    for source in (logbook.manifest, logbook.metadata):
        value = source.get("space_id")
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", value):
            return value
    name = re.sub(r"[^A-Za-z0-9._+-]+", "-", logbook.folder.resolve().name).strip("-.")
    return name or "logbook"


def agent(logbook: Logbook) -> tuple[str, str | None] | None:
    """(provider or name, model) from the first trace's index.json."""
    traces = logbook.root / "traces"
    if not traces.is_dir():
        return None
    for index in sorted(traces.glob("*/index.json")):
        try:  # confined: a link leaving the logbook, a FIFO or a huge file is not read
            raw = read_confined(logbook.root, index.relative_to(logbook.root).as_posix(),
                                limit=MAX_TEXT_FILE_BYTES, links=True)
            data = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, RecursionError, UnsafePathError):
            continue
        if not isinstance(data, dict):
            continue
        name = data.get("agent") or data.get("provider") or data.get("source") or "agent"
        model = data.get("model")
        if isinstance(model, dict):
            model = model.get("id") or model.get("name")
        models = data.get("models")
        if not model and isinstance(models, list) and models:
            model = models[0] if isinstance(models[0], str) else None
        return str(name)[:200], (str(model)[:200] if model else None)
    return None


def page_prose(page: Page) -> str:
    """The page's readable text: markdown cells (titles included), data URIs cut short."""
    parts = []
    for cell in page.cells:
        if cell.type in ("markdown", "preamble"):
            if cell.title:
                parts.append(cell.title)
            parts.append(cell.body)
    text = "\n".join(parts)
    return re.sub(r"data:image/[\w+.-]+;base64,[A-Za-z0-9+/=\s]{100,}", "data:image/...", text)


def _tables(text: str) -> list[tuple[list[str], list[list[str]], list[str]]]:
    """(header, rows, raw row lines) of each Markdown table."""
    tables = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].strip().startswith("|") and re.match(r"^\s*\|?\s*:?-{3,}", lines[i + 1]):
            header = _cells(lines[i])
            rows, raws = [], []
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append(_cells(lines[j]))
                raws.append(lines[j])
                j += 1
            tables.append((header, rows, raws))
            i = j
        else:
            i += 1
    return tables


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


# --- finding the claims ---------------------------------------------------------------------

def title_number(title: str) -> tuple[int, str] | None:
    m = _NUMBER_IN_TITLE.match(title)
    if m is None:
        return None
    return int(m.group("n") or m.group("c")), m.group(0).strip()


def is_claim_page(page: Page) -> bool:
    if title_number(page.title) or title_number(page.manifest_title):
        return True
    return bool(_CLAIM_SLUG.search(page.slug)) and not _NOT_ONE_CLAIM.search(page.slug)


def _page_number(page: Page) -> tuple[int | None, str | None, list[str]]:
    """(number, the text it was read from, warnings): the page title's, else logbook.json's or
    the index's title's, else the slug's."""
    warnings = []
    found = title_number(page.title) or title_number(page.manifest_title)
    slug = _NUMBER_IN_SLUG.search(page.slug)
    if found is not None:
        if slug is not None and int(slug.group("n")) != found[0]:
            warnings.append(f"pages/{page.slug}/page.md: the title says claim {found[0]}, the "
                            f"slug claim {slug.group('n')}; the title is followed")
        return found[0], found[1], warnings
    if slug is not None:
        return int(slug.group("n")), page.slug, warnings
    return None, None, warnings


def index_page(logbook: Logbook) -> Page | None:
    """The index as a page of its own (a single-page report's text; claims tables before
    `## Pages`)."""
    if not logbook.index_text.strip():
        return None
    page = Page(slug="index", path=logbook.root / "pages" / "index.md", text=logbook.index_text,
                origin=logbook.index_origin)
    try:
        page.title, page.cells, page.has_markers = parse_cells(logbook.index_text, page.warnings)
    except ValueError as exc:
        page.error = f"the page does not parse: {exc}"
    return page


@dataclass
class _Context:
    """What every claim of a logbook may read besides its own text: other pages' claims-table
    rows and machine output, by claim number."""

    table_labels: dict[int, list[tuple[str, Label]]] = field(default_factory=dict)
    machine_labels: dict[int, list[Label]] = field(default_factory=dict)
    verdict_places: frozenset[str] = VERDICT_PLACES
    value_places: frozenset[str] = VALUE_PLACES


def find_claims(logbook: Logbook, *, verdict_places: frozenset[str] = VERDICT_PLACES,
                value_places: frozenset[str] = VALUE_PLACES) -> list[FoundClaim]:
    """The claims of a logbook by the rules of the module docstring; a warning for every page
    set aside goes to `logbook.warnings`. Verdicts and values are read only from the kinds of
    place given (`extract.VERDICT_PLACES`, `extract.VALUE_PLACES`)."""
    pages = [p for p in logbook.pages if p.error is None]
    index = index_page(logbook)
    scan = pages + ([index] if index is not None and index.error is None else [])
    context = _context(scan)
    context.verdict_places, context.value_places = verdict_places, value_places
    found = _page_claims(logbook, context)
    if found:
        return found
    for page in scan:
        found += _table_claims(page, context)
    if not found:
        for page in scan:
            found += _list_claims(page, context)
    if not found:
        for page in scan:
            found += _section_claims(page, context)
    return found


def _page_claims(logbook: Logbook, context: _Context) -> list[FoundClaim]:
    candidates = [p for p in logbook.pages if is_claim_page(p)]
    numbered: dict[int, list[Page]] = {}
    numbers: dict[str, tuple[int | None, str | None]] = {}
    for page in candidates:
        number, quote, warnings = _page_number(page)
        logbook.warnings += warnings
        numbers[page.slug] = (number, quote)
        if number is not None:
            numbered.setdefault(number, []).append(page)
    judged: set[str] = {p.slug for p in candidates}
    for number, group in numbered.items():
        if len(group) < 2:
            continue
        winner = _current(group)
        for page in group:
            if page is not winner:
                judged.discard(page.slug)
                why = ("historical" if page.historical else "not listed" if not page.listed
                       else "listed later")
                logbook.warnings.append(
                    f"pages/{page.slug}/page.md also carries claim {number} ({why}): not "
                    f"judged; pages/{winner.slug}/page.md is")
    found: list[FoundClaim] = []
    for page in candidates:
        if page.slug not in judged:
            continue
        sections = _section_claims(page, context) if page.error is None else []
        if len({c.number for c in sections}) >= 2:
            found += sections  # two claims on one page: each of its `## Claim N` sections
            continue
        number, quote = numbers[page.slug]
        title = page.title or page.manifest_title or page.slug
        claim = FoundClaim(page, number, None, page_prose(page) if page.error is None else "",
                           title, Extraction(), number_quote=quote)
        if page.error is None:
            _extract_page(claim, context)
        found.append(claim)
    have = {c.number for c in found if c.number is not None}
    if len(have) < len([c for c in found if c.number is not None]):
        seen: set[int] = set()
        for claim in list(found):
            if claim.number is None:
                continue
            if claim.number in seen:  # a section numbered like another page's claim
                found.remove(claim)
                logbook.warnings.append(
                    f"{claim.page.slug}: a second claim numbered {claim.number} (section "
                    f"{claim.row}): not judged")
            seen.add(claim.number)
    for text, slug in logbook.index_links:
        if slug not in logbook.absent:
            continue
        number = title_number(text)
        slug_number = _NUMBER_IN_SLUG.search(slug)
        n = number[0] if number else int(slug_number.group("n")) if slug_number else None
        if n is None and not (_CLAIM_SLUG.search(slug) and not _NOT_ONE_CLAIM.search(slug)):
            continue
        if n is not None and n in have:
            continue
        path = logbook.root / "pages" / slug / "page.md"
        stub = Page(slug=slug, path=path, title=text)
        reason = (f"page absent: the {logbook.order_from} links pages/{slug}/page.md, which is "
                  f"not in the logbook")
        claim = FoundClaim(stub, n, None, "", text or slug, Extraction(), place="absent page",
                           number_quote=number[1] if number else slug,
                           warnings=[f"page absent: pages/{slug}/page.md"])
        # only what other pages declare of it (a claims table, keyed machine output)
        _decide(claim, [], [], "", context)
        ex = claim.extraction
        for name in ("reported_value", "reproduced_value"):
            ex.absent[name] = reason
        if ex.verdict is None:
            ex.absent["verdict"] = reason
        found.append(claim)
        if n is not None:
            have.add(n)
    return found


def _current(group: list[Page]) -> Page:
    """The page judged among pages carrying one claim number (module docstring, rule 1)."""
    live = [p for p in group if not p.historical] or group
    listed = [p for p in live if p.listed]
    orphans = [p for p in live if not p.listed]
    if listed and orphans:
        newest_listed = [p.newest for p in listed]
        newer = [p for p in orphans if p.newest and all(t and p.newest > t
                                                         for t in newest_listed)]
        if newer:
            return max(newer, key=lambda p: p.newest or "")
    return (listed or live)[0]


def _claims_table(header: list[str], rows: list[list[str]]) -> int | None:
    """The verdict column of a claims table, else None."""
    verdict_col = verdict_column(header)
    if verdict_col is None or not rows:
        return None
    numbered = sum(1 for row in rows if row and _ROW_NUMBER.match(row[0]))
    if len(rows) < 2 and not numbered:
        return None
    if not (_CLAIM_COLUMN.search(header[0]) or numbered >= max(1, len(rows) // 2)):
        return None
    return verdict_col


#: Column names of a verdict, strongest first ("| # | Self-verdict | Result |": Self-verdict).
_VERDICT_NAMES = ("verdict", "assessment", "status", "outcome", "conclusion", "result")


def verdict_column(header: list[str]) -> int | None:
    """The verdict column of a table header (never the first column): the one whose name is the
    strongest verdict word, the rightmost of equals."""
    for name in _VERDICT_NAMES:
        for j in range(len(header) - 1, 0, -1):
            if re.search(rf"(?i)\b{name}", header[j]):
                return j
    return None


def _statement_column(header: list[str], verdict_col: int) -> int:
    for j, name in enumerate(header):
        if j != verdict_col and re.search(r"(?i)statement|claim|description", name) and j != 0:
            return j
    return 0


def _table_claims(page: Page, context: _Context) -> list[FoundClaim]:
    found = []
    for header, rows, raws in _tables(page_prose(page)):
        verdict_col = _claims_table(header, rows)
        if verdict_col is None:
            continue
        text_col = _statement_column(header, verdict_col)
        for r, (row, raw) in enumerate(zip(rows, raws, strict=False), start=1):
            if len(row) <= verdict_col or not any(c.strip() for c in row):
                continue
            m = _ROW_NUMBER.match(row[0])
            label = cell_label(row[verdict_col])
            labels = [Label(label, raw.strip(), "claims table cell", 1, r)] if label else []
            title = (row[text_col] if text_col < len(row) else row[0]).strip("* ")
            claim = FoundClaim(page, int(m.group("n")) if m else None, r, raw, title,
                               Extraction(), place="table row",
                               number_quote=row[0] if m else None)
            _decide(claim, labels, table_values(header, row, raw), raw, context)
            found.append(claim)
    return found


def _list_claims(page: Page, context: _Context) -> list[FoundClaim]:
    """Items of a numbered list under a heading naming claims, or on a claims / overview page."""
    text = page_prose(page)
    claims_page = bool(re.match(r"(?i)(?:claims?|overview)\b", page.slug) or
                       re.match(r"(?i)\s*claims?\b", page.title))
    found = []
    headings = list(re.finditer(r"(?m)^#{1,4}[ \t]+[^\n]*$", text))
    for k, heading in enumerate(headings + [None]):
        start = heading.end() if heading is not None else 0
        if heading is None:
            if not claims_page or headings:
                continue
            end = len(text)
        else:
            end = headings[k + 1].start() if k + 1 < len(headings) else len(text)
            if not (_CLAIMS_HEADING.match(heading.group(0)) or claims_page):
                continue
        section = text[start:end]
        items = list(_LIST_ITEM.finditer(section))
        if len(items) < 2:
            continue
        for i, item in enumerate(items):
            stop = items[i + 1].start() if i + 1 < len(items) else len(section)
            body = section[item.start():stop]
            body = re.split(r"\n[ \t]*\n(?![ \t]{2,})", body)[0]
            number = int(item.group("n"))
            claim = FoundClaim(page, number, i + 1, body, item.group("first")[:300],
                               Extraction(), place="list item",
                               number_quote=item.group(0)[:200])
            _decide(claim, text_labels(body, tier_bold=2), sentence_values(body), body,
                    context)
            found.append(claim)
        if found:
            break
    return found


def _section_claims(page: Page, context: _Context) -> list[FoundClaim]:
    """Each `## Claim N` section of a page, else each paragraph run opened by a bold
    "**Claim N ...**" lead (two at least: one bold mention is not a structure)."""
    prose = page_prose(page)
    sections = list(_SECTION.finditer(prose))
    if not sections:
        sections = list(_BOLD_SECTION.finditer(prose))
        if len({m.group("n") or m.group("c") for m in sections}) < 2:
            sections = []
    found = []
    for k, m in enumerate(sections):
        end = sections[k + 1].start() if k + 1 < len(sections) else len(prose)
        text = prose[m.start():end]
        number = int(m.group("n") or m.group("c"))
        claim = FoundClaim(page, number, k + 1, text, m.group(0).strip("# "), Extraction(),
                           place="section", number_quote=m.group(0).strip())
        _decide(claim, text_labels(text), sentence_values(text), text, context)
        found.append(claim)
    return found


def readme_labels(readme: str) -> dict[int, Label]:
    """The verdict labels a repository README gives per claim number (its claims tables), to
    compare with the logbook's (a README written later may disagree)."""
    text = re.sub(r"\A---\n.*?\n---\n", "", readme, flags=re.DOTALL)
    out: dict[int, Label] = {}
    for number, label, raw in numbered_rows(text):
        out.setdefault(number, Label(label, raw, "README", 3, elsewhere=True))
    return out


def numbered_rows(text: str) -> list[tuple[int, str, str]]:
    """(claim number, verdict label, the verbatim row) of the numbered rows of the claims
    tables of `text`."""
    out = []
    for header, rows, raws in _tables(text):
        verdict_col = _claims_table(header, rows)
        if verdict_col is None:
            continue
        for row, raw in zip(rows, raws, strict=False):
            m = _ROW_NUMBER.match(row[0]) if row else None
            label = cell_label(row[verdict_col]) if len(row) > verdict_col else None
            if m is not None and label is not None:
                out.append((int(m.group("n")), label, raw.strip()))
    return out


# --- each claim's labels and values ---------------------------------------------------------

def _context(pages: list[Page]) -> _Context:
    context = _Context()
    for page in pages:
        for number, label, raw in numbered_rows(page_prose(page)):
            context.table_labels.setdefault(number, []).append(
                (page.slug, Label(label, raw, f"claims table on {page.slug}", 3,
                                  elsewhere=True)))
        for i, cell in enumerate(page.cells):
            if not cell.is_run:
                continue
            for output in output_fences(cell.body):
                for number, label in machine_labels(output, cell=i, time=cell.created_at,
                                                    where=page.slug):
                    context.machine_labels.setdefault(number, []).append(label)
    return context


def machine_labels(output: str, *, cell: int | None = None, time: str | None = None,
                   where: str = "") -> list[tuple[int, Label]]:
    """(claim number, label) of run output keyed by a claim: a line naming one claim and a
    machine verdict (`[PASS] c1_bounded_tv`, `C3 ...: 0.53 -> VERIFIED`), or a JSON object
    whose key names a claim (`{"C1": {"status": "verified"}}`, `{"claim_2": "not-verified"}`)."""
    out: list[tuple[int, Label]] = []
    for line in output.splitlines():
        keys = {int(m.group("n")) for m in _CLAIM_KEY.finditer(line)}
        words = _MACHINE_WORD.findall(line)
        if len(keys) == 1 and words and len({map_verdict(w).verdict for w in words}) == 1 \
                and not line.strip().startswith(("{", "\"")):
            out.append((keys.pop(), Label(words[-1], line.strip(), f"run printout on {where}", 4,
                                          0, time, cell, elsewhere=True)))
    text = output.strip()
    datas = []
    if text[:1] in "{[":
        try:
            datas.append((json.loads(text), text))
        except ValueError:
            pass
    for data, raw in datas:
        lines = raw.splitlines()
        for number, key, label in _json_claim_statuses(data):
            # the quote: from the key's line to the line of its status (verbatim lines)
            start = next((i for i, ln in enumerate(lines) if f'"{key}"' in ln), None)
            if start is None:
                continue
            stop = next((i for i in range(start, min(start + 12, len(lines)))
                         if f'"{label}"' in lines[i] or label in lines[i]), start)
            quote = "\n".join(lines[start:stop + 1]).strip()
            out.append((number, Label(label, quote, f"run output JSON on {where}", 4, 0,
                                      time, cell, elsewhere=True)))
    return out


def _json_claim_statuses(data: object, depth: int = 0) -> list[tuple[int, str, str]]:
    out: list[tuple[int, str, str]] = []
    if depth > 4 or not isinstance(data, dict):
        return out
    for key, value in data.items():
        m = re.fullmatch(r"(?i)(?:claim[ _-]?|c)(?P<n>\d{1,3})(?:_\w*)?", str(key))
        if m is not None:
            status = value
            if isinstance(value, dict):
                status = next((value[k] for k in ("status", "verdict", "outcome", "result")
                               if isinstance(value.get(k), str)), None)
                if status is None and isinstance(value.get("passed"), bool):
                    status = "PASS" if value["passed"] else "FAIL"
            if isinstance(status, str) and map_verdict(status).verdict is not None:
                out.append((int(m.group("n")), str(key), status))
        elif isinstance(value, dict):
            out += _json_claim_statuses(value, depth + 1)
    return out


def extract_page(claim: FoundClaim, *, verdict_places: frozenset[str] = VERDICT_PLACES,
                 value_places: frozenset[str] = VALUE_PLACES) -> None:
    """A claim page's verdict and values from its own declared places (no other page's)."""
    _extract_page(claim, _Context(verdict_places=verdict_places, value_places=value_places))


def _extract_page(claim: FoundClaim, context: _Context) -> None:
    page = claim.page
    labels: list[Label] = []
    for title, place in ((page.title, "page title"),
                         (page.manifest_title, "page title in logbook.json")):
        label = heading_label(title) if title else None
        if label is not None and title_number(title) is not None:
            labels.append(Label(label, title, place, 1, -1, elsewhere=title not in page.text))
    values: list[Value] = []
    sentences: list[Value] = []
    for i, cell in enumerate(page.cells):
        if cell.type in ("markdown", "preamble"):
            if cell.title:
                label = heading_label(cell.title)
                if label is not None:
                    labels.append(Label(label, cell.title, "cell title", 1, cell.start, 
                                        cell.created_at, i))
            labels += text_labels(cell.body, cell=i, time=cell.created_at, offset=cell.start)
            for header, rows, raws in _tables(cell.body):
                with_values = [(row, raw) for row, raw in zip(rows, raws, strict=False)
                               if len({v.side for v in table_values(header, row, raw)}) == 2]
                if len(rows) == 1 and with_values:
                    values += table_values(header, with_values[0][0], with_values[0][1],
                                           "results table")
            sentences += sentence_values(cell.body)
        elif cell.is_run:
            for output in output_fences(cell.body):
                labels += printout_labels(output, cell=i, time=cell.created_at)
                values += output_values(output)
    _decide(claim, labels, values + sentences, claim.prose, context)


def _decide(claim: FoundClaim, labels: list[Label], values: list[Value], prose: str,
            context: _Context) -> None:
    """Verdict and values of one claim from its own labels and values and the context's."""
    if claim.number is not None:
        labels = labels + [lb for slug, lb in context.table_labels.get(claim.number, [])
                           if slug != claim.page.slug or claim.place != "table row"]
        labels = labels + context.machine_labels.get(claim.number, [])
    labels = [lb for lb in labels if place_kind(lb.place) in context.verdict_places]
    values = [v for v in values if place_kind(v.place) in context.value_places]
    ex = claim.extraction
    page_text = claim.page.text or prose
    decide_verdict(ex, labels, page_text)
    choose_values(ex, values, page_text, prose)
    toy_scale(ex, prose)


def materialize(logbook: Logbook, claims: list[FoundClaim], out_dir: Path) -> list[Figure]:
    """Write every page's figures and run logs under `out_dir`; attach them to the claims.
    Returns the figures of pages that hold no claim (summaries), shared by every claim."""
    writer = PageMaterializer(out_dir, logbook.root)
    per_page: dict[str, tuple[list[Figure], list[RunLog]]] = {}
    for page in logbook.pages:
        if page.error is None:
            per_page[page.slug] = (writer.figures(page), writer.run_logs(page))
    claim_slugs = {c.page.slug for c in claims}
    shared = [f for slug, (figs, _) in per_page.items() if slug not in claim_slugs
              for f in figs if not f.poster]
    for claim in claims:
        figs, logs = per_page.get(claim.page.slug, ([], []))
        claim.figures, claim.logs = [f for f in figs if not f.poster], logs
    _reused_figures(per_page, claims, out_dir)
    return shared


def _reused_figures(per_page: dict[str, tuple[list[Figure], list[RunLog]]],
                    claims: list[FoundClaim], out_dir: Path) -> None:
    """A decoded image that several pages show (a composite summary figure pasted on every
    claim page) is not specific to any of them: each claim showing it gets a warning."""
    pages_of: dict[str, set[str]] = {}
    digest_of: dict[str, str] = {}
    for slug, (figs, _) in per_page.items():
        for fig in figs:
            if fig.status == DECODED and fig.path and not fig.poster:
                digest = file_sha256(out_dir / fig.path) or fig.path
                digest_of[fig.path] = digest
                pages_of.setdefault(digest, set()).add(slug)
    for claim in claims:
        chart = decoded_chart(claim)
        if chart is None or chart.path is None:
            continue
        pages = pages_of.get(digest_of.get(chart.path, ""), set())
        if len(pages) > 1:
            others = ", ".join(sorted(pages - {claim.page.slug}))
            claim.warnings.append(f"figure reused: the same image is on pages {others} too; it "
                                  f"is not specific to this claim")


def decoded_chart(claim: FoundClaim) -> Figure | None:
    return next((f for f in claim.figures if f.status == DECODED and f.path), None)


def kind_of(claim: FoundClaim) -> str:
    if decoded_chart(claim) is not None:
        return "figure"
    if _THEOREM.search(claim.title) or _THEOREM.search(claim.prose[:1500]):
        return "theorem"
    if claim.extraction.reproduced is not None or claim.extraction.reported is not None:
        return "number"
    return "theorem"


def statement(claim: FoundClaim) -> str:
    text = claim.prose
    m = re.search(r"(?ims)^#{1,4}[ \t]*(?:target|literal|anchored|the)?[ \t]*claim[^\n]*\n+"
                  r"(?P<s>.+?)(?:\n\s*\n|\n#)", text)
    if m and len(m.group("s").strip()) > 20:
        body = m.group("s").strip()
    else:
        quote = re.search(r"(?m)^>[ \t]*(?P<s>[^\n]{20,})", text)
        body = quote.group("s").strip() if quote else ""
    title = re.sub(r"^\s*claim\s*\d+\s*[:.\u2014-]*\s*", "", claim.title, flags=re.IGNORECASE)
    out = f"{title}: {body}" if body and title else (body or title or claim.page.slug)
    return out[:MAX_STATEMENT_CHARS]


_SCOPE_HEADING = re.compile(r"(?im)^(?P<h>#{2,4})[ \t]+scope[ \t]*(?:&|and|&amp;)[ \t]*cost\b"
                            r"[^\n]*$")
_NAMED_CLAIMS = re.compile(r"(?i)\b(?:claims?|c)[ \t]*(?P<list>\d+(?:[ \t]*(?:[-\u2013\u2014,&]|"
                           r"and|to)[ \t]*(?:claim[ \t]*|c)?\d+)*)")
_FULL_COLUMN = re.compile(r"(?i)\bfull\b|\bpaper\b|\boriginal\b")


@dataclass
class ScaleNotes:
    """The Executive summary's "Scope & cost" table: rows naming claims, and the others."""

    page: str
    general: list[tuple[str, str]] = field(default_factory=list)
    """(note text, verbatim row) of rows that name no claim: they apply to every claim."""
    per_claim: dict[int, list[tuple[str, str]]] = field(default_factory=dict)

    def for_claim(self, number: int | None) -> tuple[str, str] | None:
        """(note, quote) for claim `number`: its own rows after the general ones."""
        rows = self.general + (self.per_claim.get(number, []) if number is not None else [])
        if not rows:
            return None
        return "; ".join(text for text, _ in rows), "\n".join(raw for _, raw in rows)


def _named_numbers(label: str) -> list[int]:
    numbers: list[int] = []
    for m in _NAMED_CLAIMS.finditer(label):
        parts = re.findall(r"\d+|[-\u2013\u2014]|to", m.group("list"))
        prev: int | None = None
        span = False
        for part in parts:
            if part.isdigit():
                n = int(part)
                if span and prev is not None and prev < n <= prev + 100:
                    numbers += list(range(prev + 1, n + 1))
                else:
                    numbers.append(n)
                prev, span = n, False
            else:
                span = True
    return list(dict.fromkeys(numbers))


def scale_notes(logbook: Logbook) -> ScaleNotes | None:
    """The scale note of each claim from the Executive summary page's "Scope & cost" section:
    each table row is `<label>: <this reproduction's cells>` (columns naming the full or the
    paper's replication are left out); a row whose label names claims ("Claim 4", "Claims
    1-3", "C2") goes to those claims, any other row to every claim. Rows with no value are
    skipped. The quote is the verbatim rows."""
    page = next((p for p in logbook.pages if p.error is None and (
        "executive" in p.slug.lower() or "executive summary" in p.title.lower())), None)
    if page is None:
        return None
    text = page_prose(page)
    heading = _SCOPE_HEADING.search(text)
    if heading is None:
        return None
    level = len(heading.group("h"))
    nxt = re.compile(r"(?m)^#{1," + str(level) + r"}[ \t]").search(text, heading.end())
    section = text[heading.end():nxt.start() if nxt else len(text)]
    notes = ScaleNotes(page=page.slug)
    for header, rows, raws in _tables(section):
        keep = [j for j in range(1, len(header)) if not _FULL_COLUMN.search(header[j])] or \
            list(range(1, len(header)))
        for row, raw in zip(rows, raws, strict=False):
            label = row[0].strip("* ") if row else ""
            values = [row[j] for j in keep if j < len(row) and row[j].strip()]
            if not values or not label:
                continue
            names = [header[j] for j in keep if j < len(row) and row[j].strip()]
            if len(keep) > 1:
                body = "; ".join(f"{n}: {v}" if n else v for n, v in zip(names, values,
                                                                          strict=False))
            else:
                body = values[0]
            entry = (f"{label}: {body}", raw.strip())
            numbers = _named_numbers(label)
            if numbers:
                for n in numbers:
                    notes.per_claim.setdefault(n, []).append(entry)
            else:
                notes.general.append(entry)
    if not notes.general and not notes.per_claim:
        return None
    return notes
