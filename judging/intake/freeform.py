"""Free-form reports read by their structure, as a careful reviewer reads them (issue 40).

A free-form report (a Space's README and the Markdown reports beside it) states its claims in
tables, headings and lists, in any column order and any language of emphasis. This reader parses
each report with markdown-it (a well-kept CommonMark parser: tables, headings and list items with
their source lines, so every quote is a verbatim line of the file) and reads:

- **claims tables** by what their headers mean: a table with a paper column and an ours column,
  or a verdict column (named so, or whose cells open with verdict marks), is a claims table; each
  body row is one claim. The statement is the claim / statement column, else the row's label
  cells (never an id or a number); the paper and ours cells give the values only when a cell is
  one number (a range, a list or prose is absent with its reason); "ours / paper" in one column
  is split in the header's order; several paper (or ours) columns, or another column of numbers
  in the row, leave the value absent; a row whose paper cell is empty gets no verdict;
- **verdict headings**: a heading that carries a verdict ("### Claim 1: ... ✅", "## What
  matches", "### Agreements ✅") over numbered sub-headings, list items or bold-lead paragraphs:
  each child is a claim with the heading's verdict unless it carries its own; a marked heading
  with no children is one claim. Scope headings ("What we replicated"), checklist sections and
  plan files state no verdict;
- **bold claims and lists**: `**Claim N: ...**` paragraphs (the verdict the next paragraph opens
  with), a list under a lead line naming claims and a verdict, list items opening with a bold
  verdict.

- **the paper's own claims** (`Reading.stated`, read only where no report assesses the same
  claim): paragraphs, items and rows under a heading naming them ("The original finding"), a
  results table's row labelled as the paper's; no verdict, no value. Items listed as not
  covered ("Not yet covered:", 未复现项) are claims of the report with no verdict.

`read_reports` reads every report of a submission: one claim stated in several reports is read
once, from the report stating more claims, and their disagreements are noted on it; paragraphs
that state a verdict on the paper in prose only are counted for the LLM extractor and, offline,
are claims of their own with no verdict or value (`prose_statements`).

Verdicts come from `extract.map_verdict`, the one table of words, marks and phrases. A verdict or
number the reader is unsure of is absent with its reason; each value and verdict keeps its
verbatim quote.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from judging.intake.extract import (
    IN_PROSE,
    NUMBER,
    Extraction,
    map_verdict,
    parse_number,
    plain_text,
)
from judging.intake.logbook import Cell, FoundClaim, Page
from judging.intake.manifest import MAX_CLAIMS_PER_SUBMISSION
from judging.models import MAX_NOTE_CHARS, MAX_STATEMENT_CHARS, FieldProvenance, Verdict

#: Block structure only: the reader takes each block's raw text (an inline token's `content`),
#: never its inline children, and markdown-it's inline pass read a line of "![" to its end from
#: every bracket (a 100 KB line: minutes).
_MD = MarkdownIt("commonmark").enable("table").disable("inline")

_PAPER_HEAD = re.compile(r"(?i)\b(?:paper|reported|published|original|claimed|target)\b|论文|論文"
                         r"|原文")
_OURS_HEAD = re.compile(r"(?i)\b(?:ours|our|reproduced|reproduction|measured|observed|obtained|"
                        r"this (?:run|repo(?:sitory)?|work)|replicated|replication)\b|本次|本复现|"
                        r"复现|復現|我们|我們")
_VERDICT_HEAD = re.compile(r"(?i)\b(?:verdict|status|assessment|outcome|conclusion|agreement|"
                           r"match(?:es)?|flag|judg(?:e)?ment)\b|结论|結論|判定|状态|狀態")
_CLAIM_HEAD = re.compile(r"(?i)\b(?:claim|statement|finding|what it establishes|hypothesis)\b"
                         r"|主张|主張")
_ID_HEAD = re.compile(r"(?i)^\s*(?:#|id|no\.?|claim ?id|ref)\s*$")
_ID_CELL = re.compile(r"(?i)^\s*\**(?:claim\s*)?c?(?P<n>\d{1,3})\b")
_NOTE_HEAD = re.compile(r"(?i)\b(?:notes?|evidence|source|comment|explanation|reason|where)\b|"
                        r"备注|說明|说明|解释|解釋")
#: A cell that is one number: an optional approximation sign, the number with a unit of a few
#: letters, a ± spread, a count's denominator and a parenthetical ("54/300（18.00%）").
_ONE_NUMBER = re.compile(r"^[~≈]?\s*(?P<n>" + NUMBER + r")\s*(?:/\s*[\d,]+)?\s*"
                         r"(?:[A-Za-z%]{1,4}\.?)?\s*(?:±\s*" + NUMBER + r"\s*[A-Za-z%]{0,4})?\s*"
                         r"(?:[(（][^)）]*[)）])?\s*$")
#: A cell or heading longer than this is prose, not a label: its verdict words are not read.
LABEL_CHARS = 120
#: A heading of at most this many words may be a verdict by its words ("What doesn't match");
#: a longer one is a statement that happens to hold a verdict word.
HEADING_LABEL_WORDS = 5
#: A lead line over a list names claims and a verdict in at most this many words.
LEAD_WORDS = 12
#: Two short names around a slash in a header: "本/论文", "repro / paper".
_PAIR_HEAD = re.compile(r"(?P<a>[^\s/（(，,]{1,12})\s*/\s*(?P<b>[^\s/）)，,]{1,12})")


def _pair_head(text: str) -> re.Match[str] | None:
    """The "a / b" of a header where exactly one side names the paper."""
    return next((m for m in _PAIR_HEAD.finditer(text)
                 if bool(_PAPER_HEAD.search(m.group("a"))) != bool(_PAPER_HEAD.search(
                     m.group("b")))), None)


_BLANK = re.compile(r"^\s*(?:[-—–]+|n/?a|none|)\s*$", re.IGNORECASE)
_MARKS = re.compile(r"[✅✔✓☑🟢⚠🟡⬜🟠❌✗✘🔴]")
#: A heading that groups claims under one verdict, or claims as such (numbered children).
_GROUP_WORDS = re.compile(r"(?i)\b(?:claims?|matches|match|agreements?|confirmed|reproduced|"
                          r"replicated|validated|divergences?|discrepanc(?:y|ies)|mismatch(?:es)?|"
                          r"gaps?|findings)\b")
_NUMBERED_TITLE = re.compile(r"(?i)^\s*(?:claim\s+(?P<c>\d{1,3})\b[:.\s—–-]*|(?P<d>[A-Z]?\d{1,3})"
                             r"[.)]\s+)")
_BOLD_LEAD = re.compile(r"^\s*\*\*(?P<lead>[^*\n]{3,200}?)\*\*")


@dataclass
class Heading:
    level: int
    title: str
    line: int
    raw: str
    children: list[Heading] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Block:
    kind: str
    """table | list | paragraph"""
    line: int
    raw: str
    """The block's first line, verbatim."""
    text: str = ""
    """The block's lines, verbatim."""
    rows: list[tuple[list[str], str]] = field(default_factory=list)
    """Table: (cells, verbatim line) per row, the header first. List: (item text, line)."""


def parse(text: str) -> Heading:
    """The report as a tree of headings, each holding its tables, lists and paragraphs."""
    lines = text.splitlines()
    root = Heading(0, "", 0, "")
    stack = [root]
    tokens = _MD.parse(text)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.map is None:
            i += 1
            continue
        start = tok.map[0]
        raw = lines[start] if start < len(lines) else ""
        whole = "\n".join(lines[start:tok.map[1]])
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            heading = Heading(level, tokens[i + 1].content.strip(), start, raw.strip())
            while stack[-1].level >= level:
                stack.pop()
            stack[-1].children.append(heading)
            stack.append(heading)
        elif tok.type == "table_open":
            block = Block("table", start, raw, whole)
            j = i + 1
            while tokens[j].type != "table_close":
                if tokens[j].type == "tr_open":
                    row_line = lines[tokens[j].map[0]] if tokens[j].map else ""
                    cells: list[str] = []
                    j += 1
                    while tokens[j].type != "tr_close":
                        if tokens[j].type == "inline":
                            cells.append(tokens[j].content.strip())
                        j += 1
                    block.rows.append((cells, row_line))
                j += 1
            stack[-1].blocks.append(block)
            i = j
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            block = Block("list", start, raw, whole)
            j = i + 1
            depth = 0
            while not (tokens[j].type == tok.type.replace("open", "close") and depth == 0):
                if tokens[j].type == "list_item_open" and tokens[j].level == 1 and \
                        tokens[j].map is not None:
                    item_line = lines[tokens[j].map[0]]
                    # by index, not tokens[j:]: a copy of the rest for each item of a long
                    # list was quadratic (10,000 items: 20 s)
                    content = next((tokens[k].content for k in range(j, len(tokens))
                                    if tokens[k].type == "inline"), "")
                    block.rows.append(([content.strip()], item_line))
                if tokens[j].type.endswith("list_open"):
                    depth += 1
                elif tokens[j].type.endswith("list_close"):
                    depth -= 1
                j += 1
            stack[-1].blocks.append(block)
            i = j
        elif tok.type == "paragraph_open":
            stack[-1].blocks.append(Block("paragraph", start, raw, whole,
                                          [([tokens[i + 1].content], raw)]))
        i += 1
    return root


# --- verdicts and numbers -------------------------------------------------------------------

def cell_verdict(cell: str) -> str | None:
    """The verdict a short cell or heading declares (the one mapping table), else None."""
    clean = plain_text(cell).strip()
    if not clean or len(clean) > LABEL_CHARS:
        return None
    mapped = map_verdict(clean)
    return mapped.verdict.value if mapped.verdict is not None else None


def one_number(cell: str) -> float | None:
    """The number of a cell that holds one number, else None."""
    clean = plain_text(cell).replace("**", "").strip()
    m = _ONE_NUMBER.match(clean)
    return parse_number(m.group("n")) if m else None


# --- tables ---------------------------------------------------------------------------------

@dataclass
class Columns:
    paper: list[int]
    ours: list[int]
    pair: list[tuple[int, bool]]
    """Columns holding "a / b": (column, ours first)."""
    verdict: int | None
    claim: int | None
    ident: int | None
    labels: list[int]
    other: list[int] = field(default_factory=list)
    """Columns of numbers that are neither the paper's nor ours (nor a difference or a
    setting): a row with one makes "ours" ambiguous."""


def columns(header: list[str], body: list[list[str]]) -> Columns | None:
    """What each column of a table holds, or None when the table is not a claims table."""
    paper, ours, pair = [], [], []
    verdict = claim = ident = None
    for j, name in enumerate(header):
        text = plain_text(name)
        is_paper, is_ours = bool(_PAPER_HEAD.search(text)), bool(_OURS_HEAD.search(text))
        if j and _VERDICT_HEAD.search(text) and verdict is None and not (is_paper or is_ours):
            verdict = j
        elif _ID_HEAD.match(text):
            ident = j
        elif _CLAIM_HEAD.search(text) and claim is None and not is_ours:
            # "Claim (paper)" holds the paper's claim: text, not the paper's number
            claim = j
        elif is_paper and is_ours:
            p, o = _PAPER_HEAD.search(text), _OURS_HEAD.search(text)
            if p and o and "/" in text:
                pair.append((j, o.start() < p.start()))
        elif is_paper and (m := _pair_head(text)) is not None:
            # "本/论文", "repro / paper": the side that is not the paper's is ours
            pair.append((j, not _PAPER_HEAD.search(m.group("a"))))
        elif is_paper:
            paper.append(j)
        elif is_ours:
            ours.append(j)
    if verdict is None:
        verdict = _marked_column(header, body)
    if not ((paper and ours) or pair or verdict is not None):
        return None
    used = {*paper, *ours, *(j for j, _ in pair), verdict, ident}
    numeric = {j for j in range(len(header)) if j not in used and j != claim
               and _mostly_numbers([r[j] for r in body if j < len(r) and r[j].strip()])}
    labels = [j for j, name in enumerate(header) if j not in used and j != claim
              and j not in numeric and not _NOTE_HEAD.search(plain_text(name))]
    other = [j for j in sorted(numeric) if not _DERIVED_HEAD.search(plain_text(header[j]))]
    return Columns(paper, ours, pair, verdict, claim, ident, labels, other)


#: A column derived from the two sides (a difference, a ratio) or naming a setting or a count.
_DERIVED_HEAD = re.compile(r"(?i)Δ|\b(?:diff(?:erence)?|delta|gap|change|ratio|improvement|gain|"
                           r"drop|vs\.?|steps?|epochs?|seeds?|samples?|params?|n|size|time|"
                           r"hours?|count|runs?)\b|差|提升|改善|增益")
_NUMBER_OPENING = re.compile(r"^\W{0,3}[~≈]?\s*" + NUMBER)


def _mostly_numbers(cells: list[str]) -> bool:
    numbers = [c for c in cells if _NUMBER_OPENING.match(plain_text(c).strip())]
    return bool(cells) and len(numbers) * 2 > len(cells)


def _marked_column(header: list[str], body: list[list[str]]) -> int | None:
    """A column (not the first) whose cells mostly open with a verdict mark."""
    for j in range(1, len(header)):
        cells = [r[j] for r in body if j < len(r) and r[j].strip()]
        marked = [c for c in cells if _MARKS.match(c.strip())]
        if cells and len(marked) * 2 >= len(cells) and len(marked) >= 1:
            return j
    return None


def table_claims(page: Page, block: Block) -> list[FoundClaim]:
    header = block.rows[0][0] if block.rows else []
    body = [cells for cells, _ in block.rows[1:]]
    cols = columns(header, body)
    if cols is None:
        return []
    out = []
    for r, (cells, raw) in enumerate(block.rows[1:], start=1):
        cells = cells + [""] * (len(header) - len(cells))
        statement = _row_statement(cells, cols)
        if not statement:
            continue
        ex = Extraction()
        _row_values(ex, header, cells, cols, raw.strip())
        no_paper = bool(cols.paper) and all(_BLANK.match(plain_text(cells[j]))
                                            for j in cols.paper)
        if no_paper:
            # a row the paper states nothing for is the reproducer's own finding: no verdict
            # on the paper's claim
            ex.absent["verdict"] = "the paper's cell of the row is empty: no claim of the paper"
        elif cols.verdict is not None:
            found = cell_verdict(cells[cols.verdict])
            if found is not None:
                _set_verdict(ex, found, cells[cols.verdict], raw.strip(), "claims table cell")
            else:
                ex.absent["verdict"] = "the verdict cell maps to no verdict"
        else:
            ex.absent["verdict"] = "the claims table has no verdict column"
        number, number_cell = _row_number(cells, cols)
        if number is not None and number_cell != cols.ident:
            statement = _NAMED_ID.sub("", statement, count=1).strip() or statement
        out.append(_declared(page, r, raw.strip(), statement, ex, place="table row",
                             quote=raw.strip(), quoted_at="claims table row", number=number,
                             number_quote=cells[number_cell] if number is not None else None))
    return out


_NAMED_ID = re.compile(r"(?i)^\s*\**(?:claim\s*c?|c)(?P<n>\d{1,3})\b\**[:.\s—–-]*")


def _row_number(cells: list[str], cols: Columns) -> tuple[int | None, int | None]:
    """The claim number of a row: its id column, else a "C2" / "Claim 2" opening the claim
    column or the first column (a bare number there is a count, not an id)."""
    if cols.ident is not None and (m := _ID_CELL.match(plain_text(cells[cols.ident]))):
        return int(m.group("n")), cols.ident
    for j in dict.fromkeys(j for j in (cols.claim, 0) if j is not None):
        if j < len(cells) and (m := _NAMED_ID.match(plain_text(cells[j]))):
            return int(m.group("n")), j
    return None, None


def _row_statement(cells: list[str], cols: Columns) -> str:
    if cols.claim is not None and plain_text(cells[cols.claim]).strip():
        return plain_text(cells[cols.claim]).strip()
    parts = [plain_text(cells[j]).strip() for j in cols.labels if j < len(cells)]
    parts = [p for p in parts if p and p not in ("-", "—")]
    text = " · ".join(parts)
    return text if re.search(r"[^\W\d_]", text) else ""


def _row_values(ex: Extraction, header: list[str], cells: list[str], cols: Columns,
                raw: str) -> None:
    got: dict[str, list[float]] = {"reported": [], "reproduced": []}
    for j in cols.paper:
        if (v := one_number(cells[j])) is not None:
            got["reported"].append(v)
    for j in cols.ours:
        if (v := one_number(cells[j])) is not None:
            got["reproduced"].append(v)
    for j, ours_first in cols.pair:
        halves = re.split(r"\s+/\s+", plain_text(cells[j]))
        if len(halves) == 2:
            a, b = one_number(halves[0]), one_number(halves[1])
            if a is not None and b is not None:
                got["reproduced" if ours_first else "reported"].append(a)
                got["reported" if ours_first else "reproduced"].append(b)
    others = [j for j in cols.other if _NUMBER_OPENING.match(plain_text(cells[j]).strip())]
    if others and got["reproduced"]:
        got["reproduced"] = []
        ex.absent["reproduced_value"] = (
            f"another column ({plain_text(header[others[0]])[:60]}) holds a number too: which "
            f"one is ours is not declared")
    for side, values in got.items():
        name = f"{side}_value"
        if name in ex.absent:
            continue
        if len(values) == 1:
            setattr(ex, side, values[0])
            ex.provenance[name] = FieldProvenance(how="declared", quote=raw[:MAX_NOTE_CHARS],
                                                  place="table cell")
        elif len(values) > 1:
            ex.absent[name] = f"several {side} columns hold numbers: which one is the claim's " \
                              f"is not declared"
        else:
            ex.absent[name] = "no cell of this side holds one number"


def _declared(page: Page, row: int, prose: str, statement: str, ex: Extraction, *, place: str,
              quote: str, quoted_at: str, values: str | None = None, number: int | None = None,
              number_quote: str | None = None) -> FoundClaim:
    """A claim the page declares: its statement (cut to the models' limit) read from `quote`
    (`quoted_at` says where it stands), and, with `values`, the reason both its values are left
    absent here."""
    if values is not None:
        for name in ("reported_value", "reproduced_value"):
            ex.absent[name] = values
    ex.provenance["statement"] = FieldProvenance(how="declared", quote=quote[:MAX_NOTE_CHARS],
                                                 place=quoted_at)
    return FoundClaim(page, number, row, prose, statement[:MAX_STATEMENT_CHARS], ex, place=place,
                      number_quote=number_quote)


def _set_verdict(ex: Extraction, verdict: str, label: str, quote: str, place: str) -> None:
    ex.verdict = Verdict(verdict)
    ex.source_verdict = plain_text(label).strip()[:MAX_NOTE_CHARS] or verdict
    ex.absent.pop("verdict", None)
    ex.provenance["verdict"] = FieldProvenance(how="declared", quote=quote[:MAX_NOTE_CHARS],
                                               place=place)


# --- headings and lists ---------------------------------------------------------------------

def _heading_verdict(title: str) -> str | None:
    """A heading's verdict: a mark, or a short heading naming one ("What doesn't match")."""
    if _MARKS.search(title):
        return cell_verdict(_MARKS.search(title).group(0)) if \
            len({cell_verdict(m.group(0)) for m in _MARKS.finditer(title)}) == 1 else None
    words = re.sub(r"^\s*\d+(?:\.\d+)*[.)]?\s*", "", plain_text(title))
    if len(words.split()) <= HEADING_LABEL_WORDS and not _SCOPE.search(words):
        return cell_verdict(words)
    return None


#: "What we replicated", "What I reproduced": what was done (the scope), not a verdict on it.
_SCOPE = re.compile(r"(?i)\b(?:we|I)\s+(?:have\s+)?(?:replicated|reproduced|verified|ran|did)\b")
#: A task checklist item: a mark over a checklist says "done", not "reproduced".
_CHECKLIST = re.compile(r"(?m)^\s*[-*+]\s+\[[ xX]\]\s")
#: Reports that plan or track work state no result (`replication_plan.md`, `TODO.md`).
_PLAN_FILE = re.compile(r"(?i)(?:^|[/_-])(?:plan|todo|roadmap|checklist)s?\.md$")


def _strip_title(title: str) -> str:
    title = _MARKS.sub("", plain_text(title)).replace("\ufe0f", "").strip(" :—–-")
    m = _NUMBERED_TITLE.match(title)
    return title[m.end():].strip() if m else title


def section_claims(page: Page, heading: Heading) -> list[FoundClaim]:
    """Claims under a verdict heading (its children) or a marked heading that is one claim."""
    out: list[FoundClaim] = []
    verdict = _heading_verdict(heading.title)
    group = verdict is not None and bool(_GROUP_WORDS.search(plain_text(heading.title))
                                         or _MARKS.search(heading.title))
    numbered = [h for h in heading.children if _NUMBERED_TITLE.match(_MARKS.sub("", h.title))]
    if group or (_GROUP_WORDS.search(heading.title) and numbered):
        kids = heading.children if group else numbered
        for r, child in enumerate(kids, start=1):
            own = _heading_verdict(child.title)
            claim = _heading_claim(page, child, r, own or verdict,
                                   child.raw if own else heading.raw)
            if claim is not None:
                out.append(claim)
        if not kids and verdict is not None:
            out += _item_claims(page, heading, verdict)
        if out or not group:
            return out
    if verdict is not None and (_MARKS.search(heading.title) or
                                _NUMBERED_TITLE.match(_MARKS.sub("", heading.title))) \
            and len(_strip_title(heading.title).split()) >= 3:
        claim = _heading_claim(page, heading, 1, verdict, heading.raw)
        return [claim] if claim is not None else []
    return out


def _heading_claim(page: Page, heading: Heading, row: int, verdict: str | None,
                   quote: str) -> FoundClaim | None:
    statement = _strip_title(heading.title)
    if not re.search(r"[^\W\d_]", statement):
        return None
    if any(_CHECKLIST.search(b.text) for b in heading.blocks):
        return None  # a checklist's section: its marks say "done"
    ex = Extraction()
    if verdict is not None:
        _set_verdict(ex, verdict, quote, quote, "verdict heading")
    else:
        ex.absent["verdict"] = "the heading and its section declare no verdict"
    m = re.match(r"(?i)^\s*#*\s*claim\s+(\d{1,3})\b", heading.raw)
    body = "\n\n".join(b.text for b in heading.blocks)
    return _declared(page, row, f"{heading.raw}\n{body}", statement, ex, place="section",
                     quote=heading.raw, quoted_at="heading", values=IN_PROSE,
                     number=int(m.group(1)) if m else None,
                     number_quote=heading.raw if m else None)


def _item_claims(page: Page, heading: Heading, verdict: str) -> list[FoundClaim]:
    """The list items (or bold-lead paragraphs) of a verdict heading, one claim each."""
    items: list[tuple[str, str]] = []
    for block in heading.blocks:
        if block.kind == "list":
            items += [(text, line) for (text, *_), line in block.rows]
        elif block.kind == "paragraph" and (m := _BOLD_LEAD.match(block.rows[0][0][0])):
            items.append((m.group("lead"), block.raw))
    out = []
    for r, (text, line) in enumerate(items, start=1):
        statement = plain_text(text.split("\n", 1)[0]).strip()
        if len(statement.split()) < 3 and len(statement) < 8:
            continue
        ex = Extraction()
        _set_verdict(ex, verdict, heading.raw, heading.raw, "verdict heading")
        out.append(_declared(page, r, line, statement, ex, place="list item", quote=line.strip(),
                             quoted_at="list item", values=IN_PROSE))
    return out


# --- a report -------------------------------------------------------------------------------

def report_page(rel: str, text: str) -> Page:
    slug = re.sub(r"[^\w.-]+", "--", rel[:-3] if rel.lower().endswith(".md") else rel)
    title = re.search(r"(?m)^#[ \t]+(.+)$", text)
    page = Page(slug=slug, path=Path(rel), title=title.group(1).strip() if title else "",
                text=text, has_markers=False, origin=rel)
    page.cells = [Cell(type="markdown", meta={}, body=text, start=0)]
    return page


def read_report(rel: str, text: str, *, verdict_places: frozenset[str] | None = None,
                value_places: frozenset[str] | None = None) -> list[FoundClaim]:
    """Every claim one report states by its structure, in the report's order; `verdict_places`
    and `value_places` (kinds of place, `extract.VERDICT_PLACES`) narrow what is read."""
    page = report_page(rel, text)
    out: list[FoundClaim] = []
    if _PLAN_FILE.search(rel):
        return out
    taken: set[int] = set()

    def walk(heading: Heading) -> None:
        claims = section_claims(page, heading) if heading.level else []
        if claims:
            taken.update(id(h) for h in _descendants(heading))
            out.extend(claims)
        for block in heading.blocks:
            if block.kind == "table":
                out.extend(table_claims(page, block))
        out.extend(bold_claims(page, heading))
        if not claims:
            out.extend(not_covered_items(page, heading))
            out.extend(lead_list_claims(page, heading))
            out.extend(bold_verdict_items(page, heading))
        for child in heading.children:
            if id(child) not in taken:
                walk(child)
            else:
                for block in child.blocks:
                    if block.kind == "table":
                        out.extend(table_claims(page, block))

    walk(parse(text))
    for n, claim in enumerate(out, start=1):
        claim.row = n if claim.number is None else claim.row
        _narrow(claim.extraction, verdict_places, value_places)
    return out


def _narrow(ex: Extraction, verdict_places: frozenset[str] | None,
            value_places: frozenset[str] | None) -> None:
    """Drop what was read from a kind of place the caller does not trust."""
    held = ex.provenance.get("verdict")
    if verdict_places is not None and held is not None and held.place not in verdict_places:
        ex.verdict = ex.source_verdict = None
        ex.provenance.pop("verdict")
        ex.absent["verdict"] = f"{held.place}: a kind of place not read here"
    for side in ("reported", "reproduced"):
        held = ex.provenance.get(f"{side}_value")
        if value_places is not None and held is not None and held.place not in value_places:
            setattr(ex, side, None)
            ex.provenance.pop(f"{side}_value")
            ex.absent[f"{side}_value"] = f"{held.place}: a kind of place not read here"


_BOLD_CLAIM = re.compile(r"^\s*\*\*claim\s+(?P<n>\d{1,3})\s*[:.\u2014\u2013-]\s*(?P<s>[^*\n]{8,}?)"
                         r"\**\s*$", re.IGNORECASE | re.MULTILINE)
#: The opening words of a paragraph that are its verdict ("Validated. Our results show ...").
_OPENING_LABEL = re.compile(r"^\s*(?:\*\*)?(?P<l>[^\W\d_][^.:!\n*]{0,40}?)(?:\*\*)?[.:!]")


def bold_claims(page: Page, heading: Heading) -> list[FoundClaim]:
    """`**Claim N: statement**` paragraphs, each with the verdict the next paragraph opens with
    ("Validated. ...") when it opens with one."""
    out = []
    blocks = heading.blocks
    for k, block in enumerate(blocks):
        m = _BOLD_CLAIM.match(block.text) if block.kind == "paragraph" else None
        if m is None:
            continue
        ex = Extraction()
        after = block.text[m.end():].strip() or (
            blocks[k + 1].text if k + 1 < len(blocks) and blocks[k + 1].kind == "paragraph"
            else "")
        opening = _OPENING_LABEL.match(after)
        verdict = cell_verdict(opening.group("l")) if opening and \
            len(opening.group("l").split()) <= 4 else None
        if verdict is not None:
            _set_verdict(ex, verdict, opening.group("l"), after.split("\n", 1)[0].strip(),
                         "bold label")
        else:
            ex.absent["verdict"] = "the paragraph after the claim opens with no verdict"
        quote = block.text.splitlines()[0].strip()
        out.append(_declared(page, 1, f"{block.text}\n\n{after}", plain_text(m.group("s")).strip(),
                             ex, place="section", quote=quote, quoted_at="bold claim line",
                             values=IN_PROSE, number=int(m.group("n")), number_quote=quote))
    return out


#: A list item opening with its verdict in bold ("- **Reproduced:** the loss falls ...").
_BOLD_VERDICT_ITEM = re.compile(r"^\s*\*\*(?P<lead>[^*\n]{1,40}?)[:：]?\*\*[:：]?\s*(?P<rest>\S.*)",
                                re.DOTALL)


def bold_verdict_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """List items that open with a short bold verdict: one claim each, the rest its statement."""
    out = []
    for block in heading.blocks:
        if block.kind != "list":
            continue
        for (text, *_), line in block.rows:
            m = _BOLD_VERDICT_ITEM.match(text)
            verdict = cell_verdict(m.group("lead")) if m else None
            rest = plain_text(m.group("rest").split("\n", 1)[0]).strip() if m else ""
            if verdict is None or len(rest) < 8:
                continue
            ex = Extraction()
            _set_verdict(ex, verdict, m.group("lead"), line.strip(), "bold label")
            out.append(_declared(page, 1, line, rest, ex, place="list item", quote=line.strip(),
                                 quoted_at="list item", values=IN_PROSE))
    return out


_LEAD_NOUNS = re.compile(r"(?i)\b(?:claims?|results?|findings?)\b|结论|結論|主张|主張")


def lead_list_claims(page: Page, heading: Heading) -> list[FoundClaim]:
    """A list under a lead line that names claims and their verdict ("Published claims
    reproduced:"): each item is a claim with that verdict."""
    out: list[FoundClaim] = []
    for lead, block in zip(heading.blocks, heading.blocks[1:], strict=False):
        text = plain_text(lead.text).strip()
        if lead.kind != "paragraph" or block.kind != "list" or "\n" in text \
                or not text.endswith((":", "：")) or len(text.split()) > LEAD_WORDS \
                or not _LEAD_NOUNS.search(text):
            continue
        verdict = cell_verdict(text.rstrip(":："))
        if verdict is None:
            continue
        lead_heading = Heading(heading.level + 1, text, lead.line, lead.raw, blocks=[block])
        out += _item_claims(page, lead_heading, verdict)
    return out


#: A heading over the paper's own claims ("The original finding", "Paper's reported numbers",
#: "What the paper does", "论文结果"), not a comparison with them ("Ours vs paper") nor the
#: reproducer's own findings ("New findings beyond the paper").
_PAPER_CLAIMS_HEAD = re.compile(
    r"(?i)^(?=.*(?:\b(?:paper|original|published)\b|论文|論文|原文))"
    r"(?=.*(?:\b(?:findings?|claims?|results?|benchmarks?|reported|numbers|does|shows|"
    r"summary)\b|结论|結論|结果|結果|主张|主張))"
    r"(?!.*(?:\b(?:vs\.?|versus|compar\w*|with|match\w*|agree\w*|beyond|new|extensions?|"
    r"deviations?|ours?|reproduc\w*|replicat\w*)\b|对比|對比|与|與|偏差|复现|復現|重現))")
#: A heading over the paper's claims has at most this many words: a longer one is a sentence.
PAPER_HEAD_WORDS = 8


def paper_claims(page: Page, heading: Heading) -> list[FoundClaim]:
    """Under a heading naming the paper's claims (`_PAPER_CLAIMS_HEAD`), each paragraph, list
    item and row of a table that is not a claims table is one of the paper's claims: no
    verdict (the paper's statement is not the reproducer's assessment) and no value (which
    number a row's claim is, is not declared)."""
    title = _strip_title(heading.title)
    if len(title.split()) > PAPER_HEAD_WORDS or not _PAPER_CLAIMS_HEAD.search(title):
        return []
    out = []
    for block in [b for h in (heading, *_descendants(heading)) for b in h.blocks]:
        if block.kind == "table":
            header = block.rows[0][0] if block.rows else []
            if columns(header, [c for c, _ in block.rows[1:]]) is not None:
                continue  # a claims table: `table_claims` reads it
            units = [(" · ".join(p for c in cells if (p := plain_text(c).strip())
                                 and not _NUMBER_OPENING.match(p)), line, "table row")
                     for cells, line in block.rows[1:]]
        elif block.kind == "list":
            units = [(plain_text(t.split("\n", 1)[0]).strip(), line, "list item")
                     for (t, *_), line in block.rows]
        else:
            units = [(plain_text(block.text).replace("\n", " ").strip(), block.raw,
                      "paragraph")]
        for statement, line, place in units:
            if len(statement.split()) < 2 and len(statement) < 8:
                continue
            ex = Extraction()
            ex.absent["verdict"] = "the paper's statement of its claim: no verdict on it"
            in_table = place == "table row"
            out.append(_declared(page, len(out) + 1, block.text if place == "paragraph" else line,
                                 statement, ex, place="table row" if in_table else "list item",
                                 quote=line.strip(),
                                 quoted_at="claims table row" if in_table else "paper's claims",
                                 values="not declared as this claim's value"))
    return out


#: A table row labelled as the paper's ("*Paper: NukeLM, 13K steps*", "Paper SFT", "论文").
_PAPER_ROW = re.compile(r"(?i)^\W*(?:(?:the\s+)?paper|original|published|reported)\b|^\W*(?:论文|論文|原文)")


def paper_rows(page: Page, heading: Heading) -> list[FoundClaim]:
    """In a table that is not a claims table, each row whose first cell names the paper is the
    paper's claim: its label cells the statement, no verdict and no value (which of its
    numbers is the claim's is not declared)."""
    out = []
    for block in heading.blocks:
        if block.kind != "table" or len(block.rows) < 2:
            continue
        header = block.rows[0][0]
        if columns(header, [c for c, _ in block.rows[1:]]) is not None:
            continue  # a claims table: `table_claims` reads it
        for cells, line in block.rows[1:]:
            if not cells or not _PAPER_ROW.match(plain_text(cells[0])):
                continue
            statement = " · ".join(p for c in cells if (p := plain_text(c).strip())
                                   and not _NUMBER_OPENING.match(p) and not _BLANK.match(p))
            ex = Extraction()
            ex.absent["verdict"] = "the paper's row of a results table: no verdict on it"
            out.append(_declared(page, len(out) + 1, line, statement, ex, place="table row",
                                 quote=line.strip(), quoted_at="claims table row",
                                 values="not declared as this claim's value"))
    return out


def read_already(claim: FoundClaim, found: list[FoundClaim]) -> bool:
    """Whether a claim of `Reading.stated` is read already by `found`: a row, when it is one of
    theirs (a section's table is evidence, its rows are claims of their own); a paragraph,
    when it is in their text."""
    line = claim.prose.strip().split("\n", 1)[0]
    if claim.place == "table row":
        return any(k.prose.strip() == line for k in found)
    return any(line in k.prose for k in found)


#: A heading or lead line naming what the reproduction did not cover ("Not reproduced",
#: "尚未涵蓋：", "未复现项"): the items below are the paper's claims, not run.
_NOT_COVERED = re.compile(r"(?i)\bnot\s+(?:yet\s+)?(?:covered|reproduced|replicated|run|done|"
                          r"attempted|tested|implemented)\b|\bout\s+of\s+scope\b|"
                          r"未涵[蓋盖]|未覆[盖蓋]|未(?:复现|復現|重現|重现)|未做")


def not_covered_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """The items listed under a heading or a lead line naming what was not reproduced: each
    the paper's claim, with no verdict (not run is no evidence either way; which word of the
    heading judges which item is not declared) and no value."""
    title = plain_text(_strip_title(heading.title))
    lists: list[tuple[Block, str]] = []
    if heading.level and len(title) <= LABEL_CHARS and _NOT_COVERED.search(title):
        lists = [(b, heading.raw) for b in heading.blocks if b.kind == "list"]
    for lead, block in zip(heading.blocks, heading.blocks[1:], strict=False):
        text = plain_text(lead.text).strip()
        if lead.kind == "paragraph" and block.kind == "list" and "\n" not in text \
                and text.endswith((":", "：")) and len(text) <= LABEL_CHARS \
                and _NOT_COVERED.search(text):
            lists.append((block, lead.raw))
    out = []
    for block, lead in lists:
        for (item, *_), line in block.rows:
            statement = plain_text(item.split("\n", 1)[0]).strip()
            if len(statement.split()) < 2 and len(statement) < 8:
                continue
            ex = Extraction()
            ex.absent["verdict"] = f"listed under {lead.strip()[:80]!r}: not run, no verdict"
            out.append(_declared(page, len(out) + 1, line, statement, ex, place="list item",
                                 quote=line.strip(), quoted_at="list item", values="not run"))
    return out


def _descendants(heading: Heading) -> list[Heading]:
    out = []
    for child in heading.children:
        out += [child, *_descendants(child)]
    return out


# --- several reports ------------------------------------------------------------------------

#: A sentence that names the paper's side: with a verdict word, a claim stated in prose.
_PAPER_SIDE = re.compile(r"(?i)\b(?:paper(?:'s)?|original|authors?'?|published|reported)\b|论文|"
                         r"論文|原文")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
#: Two claims of two reports are one claim when this share of the words of each is the other's.
SAME_CLAIM_AT = 0.8


@dataclass
class Reading:
    """What the structure reader found in a submission's reports."""

    claims: list[FoundClaim]
    prose: dict[str, int]
    """Per report: paragraphs or items that state a verdict on the paper in prose only."""
    warnings: list[str]
    stated: list[FoundClaim] = field(default_factory=list)
    """Those paragraphs and items as claims with no verdict or value (`prose_statements`):
    what an offline run reads of them."""


def read_reports(texts: list[tuple[str, str]], *,
                 verdict_places: frozenset[str] | None = None,
                 value_places: frozenset[str] | None = None) -> Reading:
    """Every report's claims, one claim stated in several reports read once (from the report
    that states more claims: the fuller one) and their disagreements flagged on it."""
    per = {rel: read_report(rel, text, verdict_places=verdict_places, value_places=value_places)
           for rel, text in texts}
    warnings: list[str] = []
    total = sum(len(claims) for claims in per.values())
    if total > MAX_CLAIMS_PER_SUBMISSION:
        # a table of thousands of rows is no report of claims: judge the first ones, say so
        warnings.append(f"{total:,} claims read by structure, over the limit of "
                        f"{MAX_CLAIMS_PER_SUBMISSION} per submission: the first "
                        f"{MAX_CLAIMS_PER_SUBMISSION} in the reports' order are judged")
        left = MAX_CLAIMS_PER_SUBMISSION
        for rel in per:
            per[rel], left = per[rel][:left], max(0, left - len(per[rel]))
    size = Counter({rel: len(claims) for rel, claims in per.items()})
    kept: list[FoundClaim] = []
    for rel in sorted(per, key=lambda r: -size[r]):
        for claim in per[rel]:
            twin = next((k for k in kept if k.page.origin != rel and _same(k, claim)), None)
            if twin is None:
                kept.append(claim)
                continue
            also = claim.extraction.provenance.get("statement")
            if also is not None and "also_stated" not in twin.extraction.provenance:
                twin.extraction.provenance["also_stated"] = FieldProvenance(
                    how="declared", quote=also.quote, place=f"also stated in {rel}"[:200])
            differ = _differences(twin, claim)
            if differ:
                note = (f"{twin.page.origin} and {rel} disagree on {twin.title[:80]!r} "
                        f"({differ}): {twin.page.origin}, the fuller report, is read")
                twin.warnings.append(note)
                warnings.append(note)
    order = {id(c): i for i, c in enumerate(c for rel, _ in texts for c in per[rel])}
    kept.sort(key=lambda c: order[id(c)])
    prose = {rel: n for rel, text in texts if (n := prose_count(text, per[rel]))}
    stated: list[FoundClaim] = []
    for rel, text in texts:
        page = report_page(rel, text)
        root = parse(text)
        papers = [c for h in _descendants(root) for c in paper_claims(page, h)]
        papers += [c for h in (root, *_descendants(root)) for c in paper_rows(page, h)
                   if not any(c.prose == k.prose for k in papers)]
        these = papers + (prose_statements(rel, text, per[rel] + papers) if prose.get(rel)
                          else [])
        for n, claim in enumerate(these, start=len(per[rel]) + 1):
            claim.row = n  # after the report's other claims: ids stay unique in the report
        stated += these
    # a claim the reports assess (in a table, a heading, a list) is read there, with its
    # verdict: the paper's statement of it or a sentence about it is not read again
    stated = [c for c in stated if not any(_same(k, c) for k in kept)]
    return Reading(kept, prose, warnings, stated)


def _same(a: FoundClaim, b: FoundClaim) -> bool:
    """One claim: the same number in both reports ("C5"), or the same words."""
    if a.number is not None and b.number is not None:
        return a.number == b.number
    wa, wb = set(_words(a.title)), set(_words(b.title))
    if not wa or not wb:
        return False
    common = len(wa & wb)
    return common / len(wa) >= SAME_CLAIM_AT and common / len(wb) >= SAME_CLAIM_AT


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", plain_text(text).lower())


def _differences(a: FoundClaim, b: FoundClaim) -> str:
    out = []
    ea, eb = a.extraction, b.extraction
    if ea.verdict and eb.verdict and ea.verdict != eb.verdict:
        out.append(f"verdict {ea.verdict.value} / {eb.verdict.value}")
    for side in ("reported", "reproduced"):
        va, vb = getattr(ea, side), getattr(eb, side)
        if va is not None and vb is not None and va != vb:
            out.append(f"{side} {va:g} / {vb:g}")
    return "; ".join(out)


def states_on_paper(sentence: str) -> bool:
    """A sentence that names the paper's side and a verdict (or two: "the phenomenon
    replicates, the procedure does not")."""
    if not _PAPER_SIDE.search(sentence):
        return False
    mapped = map_verdict(sentence)
    return mapped.verdict is not None or mapped.split or bool(
        _PAPER_REPORTS.search(sentence) and _NUMBER_IN.search(sentence))


#: A sentence stating what the paper reports ("Paper reports SDFT 40.2% vs SFT 35.5%", "论文报告
#: 87%"): with a number, the paper's claim in the reproducer's words.
_PAPER_REPORTS = re.compile(r"(?i)\b(?:paper|authors?)(?:'s?)?\s+(?:reports?|reported|claims?|"
                            r"states?|finds|found|shows?|showed|(?:\w+\s+)?results?)\b|"
                            r"(?:论文|論文|原文)(?:报告|報告|声称|聲稱|称|稱|给出|給出|结果|結果)")
_NUMBER_IN = re.compile(r"\d")


def prose_units(text: str, claims: list[FoundClaim]) -> list[tuple[str, str, str]]:
    """Paragraphs and list items outside the claims read by structure with a sentence that
    names the paper and a verdict: claims stated in prose. Each as (its text, its first line
    verbatim, that sentence)."""
    covered = "\n".join(c.prose for c in claims)
    out: list[tuple[str, str, str]] = []

    def visit(heading: Heading) -> None:
        for block in heading.blocks:
            if block.kind == "table" or block.raw.strip() in covered:
                continue
            units = [(t, line) for (t, *_), line in block.rows] if block.kind == "list" \
                else [(block.text, block.raw)]
            for unit, line in units:
                said = next((s for s in _SENTENCE_END.split(plain_text(unit))
                             if states_on_paper(s)), None)
                if said is not None:
                    out.append((unit, line, said.strip()))
        for child in heading.children:
            visit(child)

    visit(parse(text))
    return out


def prose_count(text: str, claims: list[FoundClaim]) -> int:
    """How many claims a report states in prose only (`prose_units`), which only the LLM
    extractor reads in full."""
    return len(prose_units(text, claims))


def prose_statements(rel: str, text: str, claims: list[FoundClaim]) -> list[FoundClaim]:
    """Offline, each claim stated in prose (`prose_units`) as a claim of its own: its statement
    the sentence naming the paper and a verdict, verbatim, and no verdict or value (a sentence's
    verdict words may be about something else: which claim a word judges is the LLM's to read,
    with `--extract`). Counted, never dropped: the judge sees the claim and its paragraph."""
    page = report_page(rel, text)
    out = []
    for r, (unit, line, said) in enumerate(prose_units(text, claims), start=1):
        ex = Extraction()
        ex.absent["verdict"] = IN_PROSE
        out.append(_declared(page, r, unit, said, ex, place="prose", quote=line.strip(),
                             quoted_at="prose sentence", values=IN_PROSE))
    return out
