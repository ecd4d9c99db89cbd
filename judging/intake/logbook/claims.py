"""Claims from a logbook's pages, materialized into the claim model every later stage reads.

The rule for pages (README, "Real submissions"):
1. every page whose slug is `claim-N...` is one claim, numbered N;
2. else, every row of a claims table (a Markdown table with a verdict column: Assessment,
   Verdict, Status, Evidence status, Result, Outcome) on any page is one claim, numbered by a
   `C1` / `Claim 1` / `1` in its first cell, else by its row;
3. else, every `## Claim N` section of a page is one claim, numbered N.
Claim ids: `<paper_id>/c<N>` from the participant's numbering, else `<paper_id>/<slug>-r<row>`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from judging.intake.logbook.extract import Extraction, extract
from judging.intake.logbook.figures import DECODED, Figure, PageMaterializer, RunLog
from judging.intake.logbook.reader import Logbook, Page

_CLAIM_SLUG = re.compile(r"^claim[-_]?(?P<n>\d+)(?:\b|[-_])", re.IGNORECASE)
_VERDICT_COLUMN = re.compile(r"assessment|verdict|status|result|outcome|conclusion",
                             re.IGNORECASE)
_REPORTED_COLUMN = re.compile(r"paper|prediction|reported|claimed|expected|target|theory",
                              re.IGNORECASE)
_REPRODUCED_COLUMN = re.compile(r"observed|reproduced|measured|ours|evidence|obtained|got",
                                re.IGNORECASE)
_ROW_NUMBER = re.compile(r"^\s*(?:\*\*)?(?:c|claim\s*)?(?P<n>\d+)\b", re.IGNORECASE)
_SECTION = re.compile(r"(?im)^#{2,4}[ \t]+claim[ \t]+(?P<n>\d+)\b[^\n]*$")
_THEOREM = re.compile(r"\b(?:theorem|proposition|lemma|corollary|conjecture|bound)\b",
                      re.IGNORECASE)
_PAPER_TAG = re.compile(r"^paper-(?P<id>[A-Za-z0-9][\w-]{3,})$")


@dataclass
class FoundClaim:
    page: Page
    number: int | None
    row: int | None
    """Row order within the page's claims table (1-based), or section order."""
    prose: str
    title: str
    extraction: Extraction
    figures: list[Figure] = field(default_factory=list)
    logs: list[RunLog] = field(default_factory=list)

    @property
    def local_id(self) -> str:
        if self.number is not None:
            return f"c{self.number}"
        return f"{self.page.slug}-r{self.row}"


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
        try:
            index.resolve().relative_to(logbook.root.resolve())
        except (OSError, ValueError):
            continue  # a link leaving the logbook: not read
        try:
            data = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, ValueError):
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


def _column(header: list[str], pattern: re.Pattern[str], skip: set[int]) -> int | None:
    for j, name in enumerate(header):
        if j not in skip and pattern.search(name):
            return j
    return None


def find_claims(logbook: Logbook) -> list[FoundClaim]:
    pages = [p for p in logbook.pages if p.error is None]
    claim_pages = [(int(m.group("n")), p) for p in logbook.pages
                   if (m := _CLAIM_SLUG.match(p.slug))]
    found: list[FoundClaim] = []
    if claim_pages:
        for number, page in claim_pages:
            prose = page_prose(page)
            found.append(FoundClaim(page, number, None, prose, page.title or page.slug,
                                    _extract(page, prose)))
        return found
    for page in pages:
        prose = page_prose(page)
        for header, rows, raws in _tables(prose):
            verdict_col = None
            for j in range(len(header) - 1, 0, -1):
                if _VERDICT_COLUMN.search(header[j]):
                    verdict_col = j
                    break
            if verdict_col is None or len(rows) < 2:
                continue
            rep = _column(header, _REPORTED_COLUMN, {0, verdict_col})
            ours = _column(header, _REPRODUCED_COLUMN, {0, verdict_col, rep or -1})
            for r, (row, raw) in enumerate(zip(rows, raws), start=1):
                if len(row) <= verdict_col:
                    continue
                m = _ROW_NUMBER.match(row[0])
                ex = extract(raw, page_text=page.text, cell_titles=[], row_label=row[verdict_col],
                             row_reported=row[rep] if rep is not None and rep < len(row) else "",
                             row_reproduced=row[ours] if ours is not None and ours < len(row)
                             else "")
                found.append(FoundClaim(page, int(m.group("n")) if m else None, r, raw,
                                        row[0].strip("* "), ex))
    if found:
        return found
    for page in pages:
        prose = page_prose(page)
        sections = list(_SECTION.finditer(prose))
        for k, m in enumerate(sections):
            end = sections[k + 1].start() if k + 1 < len(sections) else len(prose)
            text = prose[m.start():end]
            found.append(FoundClaim(page, int(m.group("n")), k + 1, text,
                                    m.group(0).strip("# "), _extract(page, text)))
    return found


_STATEMENT_HEADING = re.compile(
    r"(?ims)^#{1,4}[ \t]*(?:target|literal|anchored|judged|original|the|paper)?[ \t]*claim\b"
    r"[^\n]*\n+(?P<s>.+?)(?:\n[ \t]*\n|\n#|\Z)")
_STATEMENT_LEAD = re.compile(
    r"(?im)^[ \t>]*(?:\*\*|__)(?:target|literal|anchored|judged|original|paper(?:'s)?)[ \t]+"
    r"claim\b[^\n]*(?:\n(?![ \t]*\n)[^\n]*)*")
_BLOCKQUOTE = re.compile(r"(?m)^>[ \t]*(?P<s>[^\n]{20,})")


def statement_text(title: str, prose: str) -> str:
    """Where the participant states the claim: a `## Literal claim` (Claim, Target claim, ...)
    section's first paragraph, else a `**Judged claim:**` / `**Anchored claim.**` paragraph,
    else the first blockquote; then the claim's title (its "Claim N:" prefix removed)."""
    body = ""
    m = _STATEMENT_HEADING.search(prose)
    if m and len(m.group("s").strip()) > 20:
        body = m.group("s")
    elif (lead := _STATEMENT_LEAD.search(prose)) is not None:
        body = lead.group(0)
    elif (quote := _BLOCKQUOTE.search(prose)) is not None:
        body = quote.group("s")
    title = re.sub(r"^\s*claim\s*\d+\s*[:.\u2014-]*\s*", "", title, flags=re.IGNORECASE)
    return f"{body}\n{title}" if body else title


def _extract(page: Page, prose: str) -> Extraction:
    titles = [c.title for c in page.cells if c.title and c.type in ("markdown", "preamble")]
    title = page.title or page.slug
    section = re.match(r"(?i)#{2,4}[ \t]+(?P<t>claim[^\n]*)", prose)
    ex = extract(prose, run_output=_run_outputs(page), page_text=page.text, cell_titles=titles,
                 statement_text=statement_text(section.group("t") if section else title, prose))
    outputs = "\n".join(c.body for c in page.cells if c.is_run)
    if ex.verdict is not None and ex.verdict.value == "verified" and re.search(
            r"not[\s_-]+verified|\bFAIL(?:ED)?\b|\"passed\":\s*false", outputs):
        quote = re.search(r"[^\n]*(?:not[\s_-]+verified|\bFAIL(?:ED)?\b|\"passed\":\s*false)"
                          r"[^\n]*", outputs)
        if quote and ex.contradiction is None:
            ex.contradiction = (ex.provenance["verdict"].quote if "verdict" in ex.provenance
                                else ex.source_verdict or "", quote.group(0).strip())
    return ex


def _run_outputs(page: Page) -> str:
    """The run cells' bodies (their `output` fences give `key=value` values)."""
    bodies = [c.body for c in page.cells if c.is_run]
    return "\n" + "\n".join(bodies) if bodies else ""


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
    return shared


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
    return out[:4000]


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
