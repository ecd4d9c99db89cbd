"""Free-form reports read by their structure, as a careful reviewer reads them (issue 40).

A free-form report (a Space's README and the Markdown reports beside it) states its claims in
tables, headings and lists, in any column order and any language of emphasis. This reader parses
each report with markdown-it (a well-kept CommonMark parser: tables, headings and list items with
their source lines, so every quote is a verbatim line of the file) and reads:

- **claims tables** by what their headers mean: a table with a paper column and an ours column,
  or a verdict column (named so, or whose cells open with verdict marks), is a claims table; each
  body row is one claim. The statement is the claim / statement column, else the row's label
  cells (never an id or a number); the paper and ours cells give the values only when a cell is
  one number (`read_number`: a range, a list, two sizes "256/128", a parenthesis holding another
  number or prose is absent with its reason); "ours / paper" in one column is split in the
  header's order; a column measured against the paper ("Δ vs paper"), a side's text ("Paper
  section") or question ("Reproduced?") is no side's value; several paper (or ours) columns,
  another column of numbers in the row, two sides on different scales (a count against a
  percent, a percent against a fraction) or a row saying its numbers are not comparable leave
  the value absent; a row whose paper cell is empty gets no verdict and no reproduced value;
- **verdict headings**: a heading that carries a verdict ("### Claim 1: ... ✅", "## What
  matches", "### Agreements ✅") over numbered sub-headings, list items or bold-lead paragraphs:
  each child is a claim with the heading's verdict unless it carries its own; a marked heading
  with no children is one claim. Scope headings ("What we replicated"), checklist sections and
  plan files state no verdict;
- **bold claims and lists**: `**Claim N: ...**` paragraphs (the verdict the next paragraph opens
  with), a list under a lead line naming claims and a verdict, list items opening with a bold
  verdict, items carrying a mark or a closing label (`marked_items`), a bold claim followed by
  its verdict (`bold_statement_items`); a claim heading's verdict is a mark or a label after its
  statement, else its section's label lines (`claim_verdict`).

- **the paper's own claims** (`Reading.stated`, read only where no report assesses the same
  claim): paragraphs, items and rows under a heading naming them ("The original finding"), a
  results table's row labelled as the paper's, the items of a list under a heading or lead
  line naming claims (`claim_list_items`); no verdict, no value. Items listed as not covered
  ("Not yet covered:", 未复现项) are claims of the report with no verdict.

`read_reports` reads every report of a submission: one claim stated in several reports is read
once, from the report stating more claims, and their disagreements are noted on it; paragraphs
that state a verdict on the paper in prose only are counted for the LLM extractor and, offline,
are claims of their own with no verdict or value (`prose_statements`).

Verdicts come from `extract.map_verdict`, the one table of words, marks and phrases. A verdict or
number the reader is unsure of is absent with its reason; each value and verdict keeps its
verbatim quote.
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from judging.intake.extract import (
    IN_PROSE,
    NUMBER,
    OURS_COLUMN,
    PAPER_COLUMN,
    Extraction,
    drop_ignored,
    map_verdict,
    parse_number,
    place_kind,
    plain_text,
    text_labels,
)
from judging.intake.logbook import Cell, FoundClaim, Page
from judging.intake.manifest import MAX_CLAIMS_PER_SUBMISSION
from judging.models import MAX_NOTE_CHARS, MAX_STATEMENT_CHARS, FieldProvenance, Verdict

#: Block structure only: the reader takes each block's raw text (an inline token's `content`),
#: never its inline children, and markdown-it's inline pass read a line of "![" to its end from
#: every bracket (a 100 KB line: minutes).
_MD = MarkdownIt("commonmark").enable("table").disable("inline")

_VERDICT_HEAD = re.compile(r"(?i)\b(?:verdict|status|assessment|outcome|conclusion|agreement|"
                           r"match(?:es)?|flag|judg(?:e)?ment|progress)\b|结论|結論|判定|状态|狀態|"
                           r"(?:复现|復現|重现|重現|完成)(?:情况|情況|程度|度)|进度|進度")
_CLAIM_HEAD = re.compile(r"(?i)\b(?:claim|statement|finding|what it establishes|hypothesis)\b"
                         r"|主张|主張")
_ID_HEAD = re.compile(r"(?i)^\s*(?:#|id|no\.?|claim ?id|ref)\s*$")
#: A claim's number ("C2", "Claim 2", "2"); "C2.1" and "C2a" are parts of claim 2, each a claim
#: of its own, not a second claim 2.
_ID_CELL = re.compile(r"(?i)^\s*\**(?:claim\s*)?c?(?P<n>\d{1,3})\b(?![.,]\d|[a-z])")
_NOTE_HEAD = re.compile(r"(?i)\b(?:notes?|evidence|source|comment|explanation|reason|where)\b|"
                        r"备注|說明|说明|解释|解釋")
#: A cell that is one number: an optional approximation sign, the number with a unit of a few
#: letters, a ± spread, a count's denominator ("54/300", no spaces: "96.5 / 96.3" is a pair) and
#: a parenthetical ("54/300（18.00%）"); `one_number` checks the count and the parenthetical.
_ONE_NUMBER = re.compile(r"^[~≈]?\s*(?P<n>" + NUMBER + r")(?:/(?P<of>\d[\d,]*))?\s*"
                         r"(?:[A-Za-z%]{1,4}\.?)?\s*(?:±\s*" + NUMBER + r"\s*[A-Za-z%]{0,4})?\s*"
                         r"(?:[(（](?P<aside>[^)）]*)[)）])?\s*$")
_SPREAD = re.compile(r"±\s*" + NUMBER)
#: A parenthetical that states a difference ("(+0.11)", "(Δ -0.2)", "(0.3 pp)"), not a second value.
_ASIDE_DIFFERENCE = re.compile(r"(?i)^\s*\+|Δ|\bpp\b|\bdiff|\bdelta\b")
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
                 if bool(PAPER_COLUMN.search(m.group("a"))) != bool(PAPER_COLUMN.search(
                     m.group("b")))), None)


_BLANK = re.compile(r"^\s*(?:[-—–]+|n/?a|none|)\s*$", re.IGNORECASE)
_MARKS = re.compile(r"[✅✔✓☑🟢⚠🟡⬜🟠❌✗✘🔴]")
#: A heading that groups claims under one verdict, or claims as such (numbered children).
_GROUP_WORDS = re.compile(r"(?i)\b(?:claims?|matches|match|agreements?|confirmed|reproduced|"
                          r"replicated|validated|divergences?|discrepanc(?:y|ies)|mismatch(?:es)?|"
                          r"gaps?|findings|doesn't|didn't|does\s+not|did\s+not|replicates?|"
                          r"reproduces?|holds?|fails?|failed)\b")
_NUMBERED_TITLE = re.compile(r"(?i)^\s*(?:(?:claim\s+|(?:主张|主張)\s*)(?P<c>\d{1,3})\b[:：.\s—–-]*|"
                             r"(?P<d>[A-Z]?\d{1,3})[.)]\s+)")
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
    """The verdict a short cell or heading declares (the one mapping table), else None. A
    report's own "Not reproduced" label is a failed reproduction (the free-form reports' data
    card maps it so), unless the rest of the label is inconclusive ("⚠️ not reproduced", "not
    reproduced yet"); a logbook's "NOT REPRODUCED" stays inconclusive (`map_verdict`)."""
    clean = plain_text(cell).strip().strip("`")
    if not clean or len(clean) > LABEL_CHARS:
        return None
    if _STATUS_CODE.match(clean) and not _TOLERANCE_CODE.search(clean):
        clean = clean.replace("_", " ")  # "BLOCKED_EXACT_RERUN": its words, each a word
    mapped = map_verdict(clean)
    if mapped.verdict == Verdict.inconclusive and _NOT_REPRODUCED.search(clean):
        rest = _NOT_REPRODUCED.sub(" ", clean)
        if not _NOT_YET.search(rest) and map_verdict(rest).verdict in (None, Verdict.falsified):
            return Verdict.falsified.value
    return mapped.verdict.value if mapped.verdict is not None else None


#: A status code in capitals joined by underscores ("NOT_REPRODUCED", "BLOCKED_EXACT_RERUN"),
#: read by its words; the tolerance codes are words of the mapping table as they are.
_STATUS_CODE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_TOLERANCE_CODE = re.compile(r"(?:OUT_OF|WITHIN|IN)_TOL")
_NOT_REPRODUCED = re.compile(r"(?i)\bnot[\s_-]+(?:reproduced|replicated)\b")
#: Words saying the check is still to come: not reproduced *yet* is no failure.
_NOT_YET = re.compile(r"(?i)\byet\b|\bpending\b|\btodo\b|\bplanned\b|尚|待")


def one_number(cell: str) -> float | None:
    """The number of a cell that holds one number, else None (`read_number` says why)."""
    return read_number(cell)[0]


def read_number(cell: str) -> tuple[float | None, str | None]:
    """(the number of a cell that holds one number, else None with the reason when the cell
    holds numbers). "a/b" is a count of a total only when a and b are whole and a <= b
    ("256/128" is two sizes, "4046/68" a split); a parenthetical holding another number is a
    second value ("2.39 s (paper: 2.02 s)", "90.64 (90.63 on the other pack)") unless it
    restates this one (the count's percentage, the same number) or states a difference: which
    of two numbers is the claim's is not declared."""
    clean = plain_text(cell).replace("**", "").strip()
    m = _ONE_NUMBER.match(clean)
    value = parse_number(m.group("n")) if m else None
    if m is None or value is None:
        return None, None
    restated = [value]
    if m.group("of"):
        total = parse_number(m.group("of"))
        if total is None or not value.is_integer() or not 0 <= value <= total or not total:
            return None, f"{clean[:40]!r} is two numbers, not a count of a total"
        restated.append(100 * value / total)
    aside = m.group("aside") or ""
    if aside and not _ASIDE_DIFFERENCE.search(aside):
        for hit in re.finditer(NUMBER, drop_ignored(_SPREAD.sub(" ", aside))):
            said = parse_number(hit.group(0))
            if said is None or not any(_rounds_to(r, hit.group(0), said) for r in restated):
                return None, f"{clean[:40]!r} holds a second number in its parenthesis"
    return value, None


def _rounds_to(exact: float, text: str, said: float) -> bool:
    """`said`, written as `text`, is `exact` rounded to the digits it is written with."""
    digits = len(text.rstrip("%").split(".")[1]) if "." in text else 0
    return abs(exact - said) <= 0.5 * 10 ** -digits + 1e-9


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
    against: list[int] = []
    for j, name in enumerate(header):
        text = plain_text(name)
        is_paper, is_ours = bool(PAPER_COLUMN.search(text)), bool(OURS_COLUMN.search(text))
        if is_paper and _AGAINST_SIDE.search(text):
            against.append(j)
        if (is_paper or is_ours) and (_AGAINST_SIDE.search(text) or _TEXT_HEAD.search(text)):
            # "Δ vs paper", "Gap to paper", "Paper section", "Reproduced?": a difference, a
            # text or a yes/no about a side, not the side's value
            is_paper = is_ours = False
        if _VERDICT_HEAD.search(text) and verdict is None and not is_paper:
            # "Status", "Reproduction status" ("Paper conclusion" is the paper's text); a
            # first column only names a verdict when another column states the claim
            if j or any(_CLAIM_HEAD.search(plain_text(h)) for h in header[1:]):
                verdict = j
        elif _ID_HEAD.match(text):
            ident = j
        elif _CLAIM_HEAD.search(text) and claim is None and not is_ours:
            # "Claim (paper)" holds the paper's claim: text, not the paper's number
            claim = j
        elif is_paper and is_ours:
            p, o = PAPER_COLUMN.search(text), OURS_COLUMN.search(text)
            if p and o and "/" in text:
                pair.append((j, o.start() < p.start()))
        elif is_paper and (m := _pair_head(text)) is not None:
            # "本/论文", "repro / paper": the side that is not the paper's is ours
            pair.append((j, not PAPER_COLUMN.search(m.group("a"))))
        elif is_paper:
            paper.append(j)
        elif is_ours:
            ours.append(j)
    if verdict is None:
        verdict = _question_column(header, body)
    if verdict is None:
        verdict = _marked_column(header, body)
        # a column of verdict marks holds verdicts, whatever its header names ("Reproduced?")
        paper, ours = [j for j in paper if j != verdict], [j for j in ours if j != verdict]
    if not ((paper or against) and ours or pair or verdict is not None):
        return None  # ours against the paper ("Ours | Δ vs paper") compares with the paper too
    used = {*paper, *ours, *(j for j, _ in pair), *against, verdict, ident}
    numeric = {j for j in range(len(header)) if j not in used and j != claim
               and _mostly_numbers([r[j] for r in body if j < len(r) and r[j].strip()])}
    labels = [j for j, name in enumerate(header) if j not in used and j != claim
              and j not in numeric and not _NOTE_HEAD.search(plain_text(name))]
    other = [j for j in sorted(numeric) if not _DERIVED_HEAD.search(plain_text(header[j]))]
    return Columns(paper, ours, pair, verdict, claim, ident, labels, other)


#: A header naming a side it is measured against ("Δ vs paper", "Gap to paper", "% of paper",
#: "與論文差距"): a difference or a ratio, not that side's value.
_AGAINST_SIDE = re.compile(
    r"(?i)(?:\b(?:vs\.?|versus|to|from|against|relative\s+to|compared\s+(?:to|with)|of)|[%Δ]"
    r"|与|與|和|相对|相對|对比|對比)\s*(?:the\s+)?(?:" + PAPER_COLUMN.pattern.replace("(?i)", "")
    + r")|(?:" + PAPER_COLUMN.pattern.replace("(?i)", "") + r")\S*\s*(?:差距|差值|之差)")
#: A header naming a side's text, not its number ("Paper section", "Reproduction notes",
#: "Original setting"), or asking a yes/no question about it ("Reproduced?").
_TEXT_HEAD = re.compile(r"(?i)\b(?:statement|description|source|reference|section|setting|"
                        r"config(?:uration)?|notes?|comments?|link|command|script|file|path|"
                        r"setup|details?)\b|\?\s*$|[？]\s*$")


#: A column derived from the two sides (a difference, a ratio) or naming a setting or a count.
_DERIVED_HEAD = re.compile(r"(?i)Δ|\b(?:diff(?:erence)?|delta|gap|change|ratio|improvement|gain|"
                           r"drop|vs\.?|steps?|epochs?|seeds?|samples?|params?|n|size|time|"
                           r"hours?|count|runs?)\b|差|提升|改善|增益")
_NUMBER_OPENING = re.compile(r"^\W{0,3}[~≈]?\s*" + NUMBER)


def _mostly_numbers(cells: list[str]) -> bool:
    numbers = [c for c in cells if _NUMBER_OPENING.match(plain_text(c).strip())]
    return bool(cells) and len(numbers) * 2 > len(cells)


#: A header asking whether the claim was reproduced ("Reproduced?", "Match?", "Holds?", "是否复现"):
#: its yes / no cells are verdicts.
_VERDICT_QUESTION = re.compile(r"(?i)\b(?:reproduc\w*|replicat\w*|match\w*|holds?|confirmed|"
                               r"verified|consistent)\s*[?？]\s*$|^\s*是否")
_ANSWERS = {"yes": Verdict.verified.value, "是": Verdict.verified.value,
            "no": Verdict.falsified.value, "否": Verdict.falsified.value,
            "partial": Verdict.inconclusive.value, "partially": Verdict.inconclusive.value}


def answer_verdict(cell: str) -> str | None:
    """The verdict of a cell answering a "Reproduced?" column: its label when it has one ("No
    (not run)" is not run), else its opening yes / no / partially ("Yes, within 0.1", "No — 3
    points lower"; "N/A" and "Not run" are no answer)."""
    m = re.match(r"^\W*(?P<a>[a-z]+|[是否])(?![a-z/])", plain_text(cell), re.IGNORECASE)
    return cell_verdict(cell) or (_ANSWERS.get(m.group("a").lower()) if m else None)


def _question_column(header: list[str], body: list[list[str]]) -> int | None:
    """A column (not the first) whose header asks whether the claim was reproduced and whose
    cells mostly answer it."""
    for j in range(1, len(header)):
        if not _VERDICT_QUESTION.search(plain_text(header[j])):
            continue
        cells = [r[j] for r in body if j < len(r) and r[j].strip()]
        if cells and sum(answer_verdict(c) is not None for c in cells) * 2 > len(cells):
            return j
    return None


def _marked_column(header: list[str], body: list[list[str]]) -> int | None:
    """A column (not the first) whose cells mostly open with a verdict mark, else one (not
    naming a side, a claim or notes) whose cells are mostly short verdict labels: "| Claim |
    Result |" over "Reproduced" / "Not reproduced" / "Partially"."""
    for j in range(1, len(header)):
        cells = [r[j] for r in body if j < len(r) and r[j].strip()]
        marked = [c for c in cells if _MARKS.match(c.strip())]
        if cells and len(marked) * 2 >= len(cells) and len(marked) >= 1:
            return j
    for j in range(1, len(header)):
        name = plain_text(header[j])
        if PAPER_COLUMN.search(name) or OURS_COLUMN.search(name) and not _TEXT_HEAD.search(name) \
                or _CLAIM_HEAD.search(name) or _NOTE_HEAD.search(name):
            continue
        cells = [plain_text(r[j]).strip() for r in body if j < len(r) and r[j].strip()]
        labels = [c for c in cells if len(c.split()) <= TAIL_LABEL_WORDS and cell_verdict(c)]
        if cells and len(labels) >= min(2, len(cells)) and len(labels) * 2 > len(cells):
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
        if _NOT_COMPARABLE.search(plain_text(raw)):
            for name in ("reported_value", "reproduced_value"):
                if ex.provenance.pop(name, None) is not None:
                    setattr(ex, name.split("_")[0], None)
                ex.absent[name] = "the row says its numbers are not comparable with the paper's"
        # a row the paper's cells leave empty while ours hold something (a row with neither
        # side's number states no number: its values may be in a results file)
        no_paper = bool(cols.paper) and all(_BLANK.match(plain_text(cells[j]))
                                            for j in cols.paper) \
            and not (cols.ours and all(_BLANK.match(plain_text(cells[j])) for j in cols.ours))
        if no_paper:
            # a row the paper states nothing for is the reproducer's own finding: no verdict
            # on the paper's claim, and its number reproduces none of the paper's
            ex.absent["verdict"] = "the paper's cell of the row is empty: no claim of the paper"
            if ex.provenance.pop("reproduced_value", None) is not None:
                ex.reproduced = None
            ex.absent["reproduced_value"] = "the paper's cell of the row is empty: the " \
                                            "reproducer's own number, not a reproduction"
        elif cols.verdict is not None:
            found = answer_verdict(cells[cols.verdict]) \
                if _VERDICT_QUESTION.search(plain_text(header[cols.verdict])) \
                else cell_verdict(cells[cols.verdict])
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


_NAMED_ID = re.compile(r"(?i)^\s*\**(?:claim\s*c?|c)(?P<n>\d{1,3})\b(?![.,]\d|[a-z])\**"
                       r"[:.\s—–-]*")


#: A row saying its numbers are not to be compared with the paper's ("not directly comparable",
#: "不可比", "不能直接比较"): the author's numbers, not a pair.
_NOT_COMPARABLE = re.compile(r"(?i)\bnot\s+(?:directly\s+)?comparable\b|\bcannot\s+be\s+"
                             r"(?:directly\s+)?compared\b|\bincomparable\b|不可比|无法直接比|"
                             r"無法直接比|不能直接(?:比|对比|對比)")


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
    if cols.claim is not None and _cell_text(cells[cols.claim]):
        return _cell_text(cells[cols.claim])
    parts = [_cell_text(cells[j]) for j in cols.labels if j < len(cells)]
    parts = [p for p in parts if p and p not in ("-", "—")]
    text = " · ".join(parts)
    return text if re.search(r"[^\W\d_]", text) else ""


def _cell_text(cell: str) -> str:
    """A cell as a statement: its HTML entities read ("&nbsp;"), a sub-row's mark dropped ("↳")."""
    return _SUB_ROW.sub("", html.unescape(plain_text(cell))).strip()


_SUB_ROW = re.compile(r"^[\s\u00a0↳└├→⤷]+")


def _row_values(ex: Extraction, header: list[str], cells: list[str], cols: Columns,
                raw: str) -> None:
    got: dict[str, list[float]] = {"reported": [], "reproduced": []}
    percent: dict[str, list[str]] = {"reported": [], "reproduced": []}
    why = {side: f"no column of the table holds the {side} value"
           for side, where in (("reported", cols.paper), ("reproduced", cols.ours))
           if not where and not cols.pair}
    for side, where in (("reported", cols.paper), ("reproduced", cols.ours)):
        for j in where:
            v, reason = read_number(cells[j])
            if v is not None:
                got[side].append(v)
                percent[side].append(_form(cells[j], header[j]))
            elif reason is not None:
                why.setdefault(side, reason)
    for j, ours_first in cols.pair:
        halves = re.split(r"\s+/\s+", plain_text(cells[j]))
        if len(halves) == 2:
            a, b = one_number(halves[0]), one_number(halves[1])
            if a is not None and b is not None:
                first, second = ("reproduced", "reported") if ours_first else \
                    ("reported", "reproduced")
                got[first].append(a)
                got[second].append(b)
                percent[first].append(_form(halves[0], header[j]))
                percent[second].append(_form(halves[1], header[j]))
    others = [j for j in cols.other if _NUMBER_OPENING.match(plain_text(cells[j]).strip())]
    if others and got["reproduced"]:
        got["reproduced"] = []
        ex.absent["reproduced_value"] = (
            f"another column ({plain_text(header[others[0]])[:60]}) holds a number too: which "
            f"one is ours is not declared")
    if _scales_differ(got, percent):
        got["reproduced"] = []
        ex.absent["reproduced_value"] = ("a count against a percent or a percent against a "
                                         "fraction: the two sides are on different scales")
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
            ex.absent[name] = why.get(side, "no cell of this side holds one number")


def _form(cell: str, header: str) -> str:
    """How a cell writes its number: "count" (of a total, "54/300"), "percent", or "plain"."""
    m = _ONE_NUMBER.match(plain_text(cell).replace("**", "").strip())
    if m is not None and m.group("of"):
        return "count"
    return "percent" if "%" in cell + header else "plain"


def keep_single_numbers(ex: Extraction) -> None:
    """A value read from a table row by a looser reader (the logbook rules over a report: the
    first number of a cell) is kept only when one cell of its row holds that one number (this
    reader's rule, `read_number`); else it is absent with the reason."""
    for side in ("reported", "reproduced"):
        name, value = f"{side}_value", getattr(ex, side)
        held = ex.provenance.get(name)
        if value is None or held is None or not (held.quote or "").lstrip().startswith("|") \
                or place_kind(held.place or "") not in ("table cell", "results table"):
            continue
        cells = [c.strip() for c in held.quote.strip().strip("|").split("|")]
        if not any(read_number(c)[0] == value for c in cells):
            setattr(ex, side, None)
            ex.provenance.pop(name)
            ex.absent[name] = "the cell holding it holds more than one number: which is the " \
                              "claim's is not declared"


def _scales_differ(got: dict[str, list[float]], forms: dict[str, list[str]]) -> bool:
    """The two sides are not on one scale: a count against a percent ("54/300" against "18%"),
    or a percent above 1 against a bare fraction (the paper's 91.2% against 0.30)."""
    if len(got["reported"]) != 1 or len(got["reproduced"]) != 1:
        return False
    (rep,), (ours,) = got["reported"], got["reproduced"]
    pair = {forms["reported"][0], forms["reproduced"][0]}
    if pair == {"count", "percent"}:
        return True
    if pair != {"percent", "plain"}:
        return False
    return rep > 1 >= abs(ours) if forms["reported"][0] == "percent" else ours > 1 >= abs(rep)


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


@functools.lru_cache(maxsize=4096)
def _strip_title(title: str, *, tail: bool = True) -> str:
    """A heading's statement: its marks, its number and (`tail`) a verdict label after it
    dropped."""
    title = _MARKS.sub("", plain_text(title)).replace("\ufe0f", "").strip(" :—–-")
    m = _NUMBERED_TITLE.match(title)
    title = title[m.end():].strip() if m else title
    label = _title_label(title) if tail else None
    return label[0].strip() if label else title


def section_claims(page: Page, heading: Heading) -> list[FoundClaim]:
    """Claims under a verdict heading (its children), numbered sections that declare their
    verdicts, or a heading that is one claim with its verdict."""
    out: list[FoundClaim] = []
    verdict = _heading_verdict(heading.title)
    group = verdict is not None and bool(_GROUP_WORDS.search(plain_text(heading.title))
                                         or _MARKS.search(heading.title))
    numbered = [h for h in heading.children if _NUMBERED_TITLE.match(_MARKS.sub("", h.title))]
    if group or (_GROUP_WORDS.search(heading.title) and numbered):
        kids = heading.children if group else numbered
        for r, child in enumerate(kids, start=1):
            own = claim_verdict(child)
            claim = _heading_claim(page, child, r, own or (
                None if verdict is None else (verdict, heading.raw, "verdict heading")))
            if claim is not None:
                out.append(claim)
        if not kids and verdict is not None:
            out += _item_claims(page, heading, verdict)
        if out or not group:
            return out
    judged = [(h, claim_verdict(h)) for h in numbered]
    if judged and sum(v is not None for _, v in judged) * 2 >= len(judged):
        # numbered sections most of which declare a verdict, under any heading ("## Results"):
        # those that do, and those named as claims ("### Claim 3"), not "### 4. Method"
        return [c for r, (child, own) in enumerate(judged, start=1)
                if (own is not None or _named_claim(child))
                and (c := _heading_claim(page, child, r, own)) is not None]
    if len(_section_statement(heading)[0].split()) < 3:
        return out
    if verdict is not None and _MARKS.search(heading.title):
        claim = _heading_claim(page, heading, 1, (verdict, heading.raw, "verdict heading"))
        return [claim] if claim is not None else []
    own = claim_verdict(heading)  # a numbered title's words are its statement, not a label
    if own is not None and (_title_label(heading.title) or
                            _NUMBERED_TITLE.match(_MARKS.sub("", heading.title))):
        # "## 1. The loss falls — reproduced", "## Claim 2: ..." over "**Status:** ..."
        claim = _heading_claim(page, heading, 1, own)
        return [claim] if claim is not None else []
    return out


def _named_claim(heading: Heading) -> bool:
    """A heading named as a claim ("### Claim 3: ..."), not only numbered ("### 4. Method")."""
    m = _NUMBERED_TITLE.match(_MARKS.sub("", heading.title))
    return bool(m and m.group("c"))


#: A claim heading's label after its statement ("1. The loss falls — reproduced", "The large
#: model wins: not reproduced"): a short verdict after a dash, a colon or a bar.
_TAIL_LABEL = re.compile(r"^(?P<s>.*?\S)\s*(?:[—–|:：]|\s-\s)\s*(?P<l>[^—–|:：]{2,40}?)\s*[.!]?$")
#: A heading's tail is a verdict label in at most this many words.
TAIL_LABEL_WORDS = 4


def _title_label(title: str) -> tuple[str, str] | None:
    """(statement, label) of a claim heading whose title ends with a short verdict label; the
    statement has two words or more (a "Method: consistent hashing" heading is no claim)."""
    m = _TAIL_LABEL.match(_strip_title(title, tail=False))
    if m is None or len(m.group("l").split()) > TAIL_LABEL_WORDS \
            or len(m.group("s").split()) < 2 or cell_verdict(m.group("l")) is None:
        return None
    return m.group("s"), m.group("l")


_LINE_KEY = r"(?:verdict|status|result|outcome|assessment|结论|結論|判定|状态|狀態|结果|結果)"
#: A label line naming its verdict by a mark only ("**Status:** ✅").
_MARK_LINE = re.compile(r"(?im)^[\s>*_-]*(?:\*\*|__)?" + _LINE_KEY + r"(?:\*\*|__)?\s*[:：]\s*"
                        r"(?:\*\*|__)?\s*(?P<m>" + _MARKS.pattern + r")")
#: A label line whose whole label is a short verdict in the mapping table's words, codes or
#: phrases ("Status: OUT_OF_TOL", "结论：复现成功"), which the logbook's label lines do not read.
_SHORT_LABEL_LINE = re.compile(r"(?im)^[\s>*_-]*(?:\*\*|__)?" + _LINE_KEY + r"(?:\*\*|__)?\s*"
                               r"[:：]\s*(?:\*\*|__)?\s*(?P<l>[^\n]{1,40}?)\s*(?:\*\*|__)?[.。]?\s*$")


def claim_verdict(heading: Heading) -> tuple[str, str, str] | None:
    """(verdict, quote, place) a claim's heading declares: one kind of mark or a label after
    its statement in its title, else the label lines of its own section ("**Status:**
    Reproduced", "Verdict: ❌") when they agree. A short title's words are its statement, not
    a verdict ("Claim 3: Scaling holds")."""
    marks = {cell_verdict(m.group(0)) for m in _MARKS.finditer(heading.title)}
    if marks:
        return (marks.pop(), heading.raw, "verdict heading") if len(marks) == 1 \
            and None not in marks else None
    tail = _title_label(heading.title)
    if tail is not None:
        return cell_verdict(tail[1]), heading.raw, "verdict heading"  # type: ignore[return-value]
    text = "\n\n".join(b.text for b in heading.blocks if b.kind != "table")
    labels = [(cell_verdict(lb.text) or lb.mapped.verdict.value, lb.quote, lb.place)
              for lb in text_labels(text)
              if lb.mapped.verdict is not None and lb.place in ("Verdict line", "bold label")]
    if not labels:
        labels = [(v, m.group(0).strip(), "Verdict line") for m in _MARK_LINE.finditer(text)
                  if (v := cell_verdict(m.group("m"))) is not None]
    if not labels:
        labels = [(v, m.group(0).strip(), "Verdict line") for m in _SHORT_LABEL_LINE.finditer(text)
                  if len(m.group("l").split()) <= TAIL_LABEL_WORDS
                  and (v := cell_verdict(m.group("l"))) is not None]
    if not labels or len({v for v, _, _ in labels}) > 1:
        return None  # none, or labels that disagree: absent, for the judge
    return labels[0]


def _section_statement(heading: Heading) -> tuple[str, str]:
    """(statement, its verbatim line) of a claim's section: its title's statement, else, for a
    heading that only names the claim ("### Claim 2"), the first sentence of its first paragraph
    that is not a label line."""
    statement = _strip_title(heading.title)
    if re.search(r"[^\W\d_]", statement) or not _named_claim(heading):
        return statement, heading.raw
    for block in heading.blocks:
        text = plain_text(block.text).replace("\n", " ").strip()
        if block.kind == "paragraph" and text and not text_labels(block.text):
            return _SENTENCE_END.split(text, maxsplit=1)[0].strip(), block.raw
    return "", heading.raw


def _heading_claim(page: Page, heading: Heading, row: int,
                   declared: tuple[str, str, str] | None) -> FoundClaim | None:
    statement, line = _section_statement(heading)
    if not re.search(r"[^\W\d_]", statement):
        return None
    if any(_CHECKLIST.search(b.text) for b in heading.blocks):
        return None  # a checklist's section: its marks say "done"
    ex = Extraction()
    if declared is not None:
        verdict, quote, place = declared
        _set_verdict(ex, verdict, quote, quote, place)
    else:
        ex.absent["verdict"] = "the heading and its section declare no verdict"
    m = _NUMBERED_TITLE.match(_MARKS.sub("", plain_text(heading.title)))
    m = m if m is not None and m.group("c") else None
    body = "\n\n".join(b.text for b in heading.blocks)
    return _declared(page, row, f"{heading.raw}\n{body}", statement, ex, place="section",
                     quote=line, quoted_at="heading" if line == heading.raw else "paragraph",
                     values=IN_PROSE,
                     number=int(m.group("c")) if m else None,
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
                value_places: frozenset[str] | None = None,
                root: Heading | None = None) -> list[FoundClaim]:
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
        # a heading without blocks (a run of "#" lines) states claims only by its title, read
        # above: the item rules are not asked (a 200 KB heading run read in seconds)
        if heading.blocks and not claims:
            listed = not_covered_items(page, heading) + lead_list_claims(page, heading) + \
                bold_verdict_items(page, heading)
            out.extend(listed)
            seen = {c.prose for c in listed}
            for claim in marked_items(page, heading) + bold_statement_items(page, heading):
                if claim.prose not in seen:
                    seen.add(claim.prose)
                    out.append(claim)
        for child in heading.children:
            if id(child) not in taken:
                walk(child)
            else:
                for block in child.blocks:
                    if block.kind == "table":
                        out.extend(table_claims(page, block))

    walk(parse(text) if root is None else root)
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


#: A heading over the report's results ("## Results", "## Key findings", "## Summary", "结论"):
#: a mark opening or closing an item there is a verdict, not a feature's tick.
_RESULT_HEAD = re.compile(r"(?i)\b(?:claims?|results?|findings?|verdicts?|conclusions?|summary|"
                          r"outcomes?|tl;?dr)\b|结论|結論|结果|結果|总结|總結")
_OPENING_MARK = re.compile(r"^\s*(?P<m>" + _MARKS.pattern + r")\ufe0f?\s*(?P<rest>\S.*)$")
_CLOSING_MARK = re.compile(r"^(?P<rest>.*?\S)\s*(?:[(:—–]|\s-)?\s*(?P<m>" + _MARKS.pattern +
                           r")\ufe0f?\s*\)?\s*\.?$")
#: A label closing an item after a dash ("X —— 已复现", "X — reproduced").
_CLOSING_DASH = re.compile(r"^(?P<rest>.*?\S)\s*(?:—+|–+|\s-{1,2})\s*(?P<l>[^—–\n]{1,30}?)\s*[.。]?$")
#: A label closing an item after its last colon ("X: reproduced", "X：复现成功").
_CLOSING_COLON = re.compile(r"^(?P<rest>.*?\S)\s*[:：]\s*(?P<l>[^:：\n]{1,30}?)\s*[.。]?$")
_CLOSING_BOLD = re.compile(r"^(?P<rest>.*?\S)\s*(?:[—–:|]|\s-)\s*\(?\*\*(?P<l>[^*\n]{2,40})\*\*"
                           r"\)?\.?\s*$")


def marked_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """List items carrying their verdict: a bold label closing the item ("- X — **reproduced**")
    anywhere, a mark opening or closing it ("- ✅ X", "- X (❌)") under a heading over the
    results (under "## Features" a tick is no verdict). Items of a checklist are tasks."""
    results = bool(_RESULT_HEAD.search(plain_text(heading.title)))
    out = []
    for block in heading.blocks:
        if block.kind != "list" or _CHECKLIST.search(block.text):
            continue
        for (text, *_), line in block.rows:
            first = text.split("\n", 1)[0].strip()
            found = None
            if (m := _CLOSING_BOLD.match(first)) and len(m.group("l").split()) <= \
                    TAIL_LABEL_WORDS and (v := cell_verdict(m.group("l"))):
                found = (m.group("rest"), v, "bold label")
            elif results and ((m := _OPENING_MARK.match(first)) or
                              (m := _CLOSING_MARK.match(first))) and \
                    (v := cell_verdict(m.group("m"))):
                found = (m.group("rest"), v, "list item mark")
            elif results and ((m := _CLOSING_DASH.match(plain_text(first))) or
                              (m := _CLOSING_COLON.match(plain_text(first)))) and \
                    len(m.group("l").split()) <= TAIL_LABEL_WORDS and \
                    (v := cell_verdict(m.group("l"))):
                found = (m.group("rest"), v, "bold label")
            if found is None:
                continue
            statement = plain_text(found[0]).strip(" :—–-")
            if len(statement.split()) < 3 and len(statement) < 8:
                continue
            ex = Extraction()
            _set_verdict(ex, found[1], line.strip(), line.strip(), found[2])
            out.append(_declared(page, len(out) + 1, line, statement, ex, place="list item",
                                 quote=line.strip(), quoted_at="list item", values=IN_PROSE))
    return out


#: A bold lead stating a claim, and the label opening the text after it ("- **Loss falls below
#: a fifth:** reproduced; we measured 0.19", "**Large model wins.** Not reproduced.").
_BOLD_STATEMENT = re.compile(r"^\s*\*\*(?P<s>[^*\n]{8,200}?)[:.：]?\*\*[:.：]?\s*(?P<l>[^.,;:!—–(\n]{2,40})")


def bold_statement_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """List items and paragraphs opening with a claim in bold and then its verdict: the bold
    lead the statement (three words or more, not itself a verdict nor "Claim N"), the label
    after it (at most `TAIL_LABEL_WORDS` words) the verdict."""
    out = []
    units = [(t, line) for b in heading.blocks if b.kind == "list" for (t, *_), line in b.rows]
    units += [(b.rows[0][0][0], b.raw) for b in heading.blocks if b.kind == "paragraph"]
    for text, line in units:
        m = _BOLD_STATEMENT.match(text)
        if m is None or _BOLD_CLAIM.match(text) or cell_verdict(m.group("s")) is not None:
            continue
        label, statement = m.group("l").strip(), plain_text(m.group("s")).strip()
        verdict = cell_verdict(label) if len(label.split()) <= TAIL_LABEL_WORDS else None
        if verdict is None or len(statement.split()) < 3:
            continue
        ex = Extraction()
        _set_verdict(ex, verdict, label, line.strip(), "bold label")
        out.append(_declared(page, len(out) + 1, line, statement, ex, place="list item",
                             quote=line.strip(), quoted_at="list item", values=IN_PROSE))
    return out


#: A heading or lead line naming the claims listed below it ("## Claims tested", "We test three
#: claims of the paper:"), with no verdict: each item a claim.
_CLAIM_LIST = re.compile(r"(?i)\bclaims\b|\bhypothes[ie]s\b|主张|主張")


def claim_list_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """The items of a list under a heading or a lead line naming claims: each a claim, with no
    verdict (the heading declares none; an item carrying its own is read by `marked_items`)."""
    lists: list[Block] = []
    title = plain_text(_strip_title(heading.title))
    if heading.level and len(title.split()) <= LEAD_WORDS and _CLAIM_LIST.search(title) \
            and cell_verdict(title) is None:
        lists += [b for b in heading.blocks[:1] if b.kind == "list"]
    for lead, block in zip(heading.blocks, heading.blocks[1:], strict=False):
        text = plain_text(lead.text).strip()
        if lead.kind == "paragraph" and block.kind == "list" and "\n" not in text \
                and text.endswith((":", "：")) and len(text.split()) <= LEAD_WORDS \
                and _CLAIM_LIST.search(text) and cell_verdict(text.rstrip(":：")) is None:
            lists.append(block)
    out = []
    for block in lists:
        if _CHECKLIST.search(block.text):
            continue
        for (item, *_), line in block.rows:
            statement = plain_text(item.split("\n", 1)[0]).strip()
            if len(statement.split()) < 3 and len(statement) < 8:
                continue
            ex = Extraction()
            ex.absent["verdict"] = "listed as a claim: the list declares no verdict on it"
            out.append(_declared(page, len(out) + 1, line, statement, ex, place="list item",
                                 quote=line.strip(), quoted_at="list item", values=IN_PROSE))
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
                      "paragraph")] + _paper_sentences(block)
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


def _paper_sentences(block: Block) -> list[tuple[str, str, str]]:
    """The sentences after the first of a paragraph of the paper's claims that name the paper
    ("In the paper's sharpest result, ..."): a finding of their own, each with the verbatim line
    it opens on."""
    text = plain_text(block.text).replace("\n", " ")
    out = []
    for sentence in _SENTENCE_END.split(text)[1:]:
        sentence = sentence.strip()
        head = sentence[:30]
        line = next((ln for ln in block.text.splitlines() if plain_text(ln).find(head) >= 0),
                    None)
        if line is not None and _PAPER_SIDE.search(sentence):
            out.append((sentence, line, "paragraph"))
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
#: Two claims of two reports are one claim when this share of the words of both is common.
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
    # each report parsed once (markdown-it is most of the time a long report takes): every
    # rule below reads the same tree
    trees = {rel: parse(text) for rel, text in texts}
    per = {rel: read_report(rel, text, verdict_places=verdict_places, value_places=value_places,
                            root=trees[rel]) for rel, text in texts}
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
                _withhold_disputed(twin, claim, rel)
    order = {id(c): i for i, c in enumerate(c for rel, _ in texts for c in per[rel])}
    kept.sort(key=lambda c: order[id(c)])
    units = {rel: prose_units(text, per[rel], trees[rel]) for rel, text in texts}
    prose = {rel: len(units[rel]) for rel, _ in texts if units[rel]}
    stated: list[FoundClaim] = []
    for rel, text in texts:
        page = report_page(rel, text)
        root = trees[rel]
        headings = [root, *_descendants(root)]
        with_blocks = [h for h in headings if h.blocks]  # the rows and items are in blocks
        papers = [c for h in headings[1:] for c in paper_claims(page, h)]
        # by sets of their texts, not a scan of the list per claim (a 200 KB list: minutes)
        known = {k.prose for k in papers}
        papers += [c for h in with_blocks for c in paper_rows(page, h) if c.prose not in known]
        # a list naming claims: each item read unless the reports assess it (as the paper's)
        known = {k.prose.strip() for k in papers + per[rel]}
        papers += [c for h in with_blocks for c in claim_list_items(page, h)
                   if c.prose.strip() not in known]
        these = papers + (prose_statements(rel, text, per[rel] + papers, trees[rel])
                          if prose.get(rel) else [])
        for n, claim in enumerate(these, start=len(per[rel]) + 1):
            claim.row = n  # after the report's other claims: ids stay unique in the report
        stated += these
    return Reading(kept, prose, warnings, _not_assessed(stated, kept))


def _not_assessed(stated: list[FoundClaim], kept: list[FoundClaim]) -> list[FoundClaim]:
    """The paper's claims and prose claims (`Reading.stated`) that no claim of the reports
    assesses: a claim the reports assess (in a table, a heading, a list) is read there, with its
    verdict, and the paper's statement of it or a sentence about it is not read again. Each is
    compared with every assessed claim only up to the claim limit: past it none is judged (the
    engine counts them in its one line), and comparing a 200 KB list of them took minutes."""
    room = max(0, MAX_CLAIMS_PER_SUBMISSION - len(kept))
    out: list[FoundClaim] = []
    for claim in stated:
        if len(out) >= room or not any(_same(k, claim) for k in kept):
            out.append(claim)
    return out


def _same(a: FoundClaim, b: FoundClaim) -> bool:
    """One claim: the same number in both reports ("C5"), or the same words."""
    if a.number is not None and b.number is not None:
        return a.number == b.number
    wa, wb = set(_words(a.title)), set(_words(b.title))
    if not wa or not wb or {w for w in wa ^ wb if w.isdigit()}:
        return False  # "TREC DL 2019" and "TREC DL 2020" are two claims
    # the words either has that the other lacks: at most one, or the share the threshold
    # leaves ("GCN-DQN restored load" and "MLP-DQN restored load" are two claims)
    return len(wa ^ wb) <= max(1.0, (1 - SAME_CLAIM_AT) * len(wa | wb))


@functools.lru_cache(maxsize=4096)  # each claim's title is compared with every other's
def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[^\W_]+", plain_text(text).lower()))


def _withhold_disputed(kept: FoundClaim, other: FoundClaim, rel: str) -> None:
    """A value two reports give differently for one claim is absent, both quoted in its reason:
    which report is the later one is not declared (the fuller one's verdict is read, flagged)."""
    ex, ox = kept.extraction, other.extraction
    for side in ("reported", "reproduced"):
        mine, theirs = getattr(ex, side), getattr(ox, side)
        if mine is None or theirs is None or mine == theirs:
            continue
        name = f"{side}_value"
        setattr(ex, side, None)
        ex.provenance.pop(name, None)
        ex.absent[name] = (f"the reports disagree: {mine:g} in {kept.page.origin}, {theirs:g} "
                           f"in {rel}")[:MAX_NOTE_CHARS]


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


def prose_units(text: str, claims: list[FoundClaim],
                root: Heading | None = None) -> list[tuple[str, str, str]]:
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

    visit(parse(text) if root is None else root)
    return out


def prose_count(text: str, claims: list[FoundClaim]) -> int:
    """How many claims a report states in prose only (`prose_units`), which only the LLM
    extractor reads in full."""
    return len(prose_units(text, claims))


def prose_statements(rel: str, text: str, claims: list[FoundClaim],
                     root: Heading | None = None) -> list[FoundClaim]:
    """Offline, each claim stated in prose (`prose_units`) as a claim of its own: its statement
    the sentence naming the paper and a verdict, verbatim, and no verdict or value (a sentence's
    verdict words may be about something else: which claim a word judges is the LLM's to read,
    with `--extract`). Counted, never dropped: the judge sees the claim and its paragraph."""
    page = report_page(rel, text)
    out = []
    for r, (unit, line, said) in enumerate(prose_units(text, claims, root), start=1):
        ex = Extraction()
        ex.absent["verdict"] = IN_PROSE
        out.append(_declared(page, r, unit, said, ex, place="prose", quote=line.strip(),
                             quoted_at="prose sentence", values=IN_PROSE))
    return out
