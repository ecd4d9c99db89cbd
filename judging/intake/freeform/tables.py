"""Claims tables read by what their headers mean (issue 40): paper / ours / "ours / paper" /
verdict / claim / id / notes columns in any order and any language of emphasis; each body row
one claim, its values only when a cell holds one number of one scale; and the paper's own rows
of a results table."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from judging.intake.extract import (
    OURS_COLUMN,
    PAPER_COLUMN,
    Extraction,
    place_kind,
    plain_text,
)
from judging.intake.freeform.tree import (
    Block,
    Heading,
)
from judging.intake.freeform.vocabulary import (
    BLANK,
    MARKS,
    NUMBER_OPENING,
    ONE_NUMBER,
    TAIL_LABEL_WORDS,
    VERDICT_QUESTION,
    answer_verdict,
    cell_verdict,
    declared_claim,
    one_number,
    read_number,
    set_verdict,
)
from judging.intake.logbook import FoundClaim, Page
from judging.models import MAX_NOTE_CHARS, FieldProvenance

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


#: Two short names around a slash in a header: "本/论文", "repro / paper".
_PAIR_HEAD = re.compile(r"(?P<a>[^\s/（(，,]{1,12})\s*/\s*(?P<b>[^\s/）)，,]{1,12})")


def _pair_head(text: str) -> re.Match[str] | None:
    """The "a / b" of a header where exactly one side names the paper."""
    return next((m for m in _PAIR_HEAD.finditer(text)
                 if bool(PAPER_COLUMN.search(m.group("a"))) != bool(PAPER_COLUMN.search(
                     m.group("b")))), None)


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
        if (is_paper or is_ours) and (_AGAINST_SIDE.search(text) or _TEXT_HEAD.search(text)
                                      or _SPREAD_HEAD.search(text)):
            # "Δ vs paper", "Gap to paper", "Paper section", "Reproduced?", "Paper std",
            # "Ours (seed)", "Not ours": a difference, a text, a yes/no, a spread or a setting
            # about a side, or another side, not the side's value
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


#: A header naming a side's spread, its seed, or what is not that side ("Paper std", "Ours
#: (seed)", "Ours SEM", "Not in paper"): read as the side, a spread or a seed was the paper's or
#: our value. A mean beside its spread ("Ours (mean ± std)") is still the side's value.
_SPREAD_HEAD = re.compile(r"(?i)^(?!.*\b(?:mean|avg|average|median)\b).*(?:\b(?:std|stdev|sd|"
                          r"sem|stderr|variance|seeds?|not|non)\b)")


#: A column derived from the two sides (a difference, a ratio) or naming a setting or a count.
_DERIVED_HEAD = re.compile(r"(?i)Δ|\b(?:diff(?:erence)?|delta|gap|change|ratio|improvement|gain|"
                           r"drop|vs\.?|steps?|epochs?|seeds?|samples?|params?|n|size|time|"
                           r"hours?|count|runs?|std|stdev|sd|sem|stderr|variance)\b|差|提升|"
                           r"改善|增益")


def _mostly_numbers(cells: list[str]) -> bool:
    numbers = [c for c in cells if NUMBER_OPENING.match(plain_text(c).strip())]
    return bool(cells) and len(numbers) * 2 > len(cells)


def _question_column(header: list[str], body: list[list[str]]) -> int | None:
    """A column (not the first) whose header asks whether the claim was reproduced and whose
    cells mostly answer it."""
    for j in range(1, len(header)):
        if not VERDICT_QUESTION.search(plain_text(header[j])):
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
        marked = [c for c in cells if MARKS.match(c.strip())]
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
        no_paper = bool(cols.paper) and all(BLANK.match(plain_text(cells[j]))
                                            for j in cols.paper) \
            and not (cols.ours and all(BLANK.match(plain_text(cells[j])) for j in cols.ours))
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
                if VERDICT_QUESTION.search(plain_text(header[cols.verdict])) \
                else cell_verdict(cells[cols.verdict])
            if found is not None:
                set_verdict(ex, found, cells[cols.verdict], raw.strip(), "claims table cell")
            else:
                ex.absent["verdict"] = "the verdict cell maps to no verdict"
        else:
            ex.absent["verdict"] = "the claims table has no verdict column"
        number, number_cell = _row_number(cells, cols)
        if number is not None and number_cell != cols.ident:
            statement = _NAMED_ID.sub("", statement, count=1).strip() or statement
        out.append(declared_claim(page, r, raw.strip(), statement, ex, place="table row",
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
    others = [j for j in cols.other if NUMBER_OPENING.match(plain_text(cells[j]).strip())]
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
    m = ONE_NUMBER.match(plain_text(cell).replace("**", "").strip())
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
                                   and not NUMBER_OPENING.match(p) and not BLANK.match(p))
            ex = Extraction()
            ex.absent["verdict"] = "the paper's row of a results table: no verdict on it"
            out.append(declared_claim(page, len(out) + 1, line, statement, ex, place="table row",
                                 quote=line.strip(), quoted_at="claims table row",
                                 values="not declared as this claim's value"))
    return out
