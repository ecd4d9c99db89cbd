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
from judging.intake.freeform.numbers import (
    MAGNITUDES,
    NUMBER_OPENING,
    cell_number,
    comma_style,
    read_number,
)
from judging.intake.freeform.tree import (
    Block,
    Heading,
)
from judging.intake.freeform.vocabulary import (
    BLANK,
    MARKS,
    TAIL_LABEL_WORDS,
    VERDICT_QUESTION,
    answer_verdict,
    cell_verdict,
    declared_claim,
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


#: A header naming both sides around an arrow or "vs" ("Paper → Ours", "Ours vs paper").
_TWO_SIDED = re.compile(r"(?i)^(?P<a>.*?\S)\s*(?:→|->|⟶|=>|\s(?:vs\.?|versus)\s)\s*(?P<b>\S.*)$")


def _two_sided(text: str) -> bool | None:
    """Whether ours comes first in a header naming each side on one side of an arrow or "vs",
    else None."""
    m = _TWO_SIDED.match(text)
    if m is None:
        return None
    a, b = m.group("a"), m.group("b")
    if PAPER_COLUMN.search(a) and OURS_COLUMN.search(b) and not OURS_COLUMN.search(a) \
            and not PAPER_COLUMN.search(b):
        return False
    if OURS_COLUMN.search(a) and PAPER_COLUMN.search(b) and not PAPER_COLUMN.search(a) \
            and not OURS_COLUMN.search(b):
        return True
    return None


@dataclass
class Columns:
    paper: list[int]
    ours: list[int]
    pair: list[tuple[int, bool]]
    """Columns holding "a / b" ("a → b", "a vs b"): (column, ours first)."""
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
        if (ours_first := _two_sided(text)) is not None:
            pair.append((j, ours_first))  # "Paper → Ours", "Ours vs paper": both in a cell
            continue
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
    # a side's spread or difference ("Ours (std)", "Δ ours") names the side, not its value
    spread = [j for j in paper + ours if _SIDE_SPREAD.search(plain_text(header[j]))
              and not _MEAN_HEAD.search(plain_text(header[j]))]
    paper = _spanned([j for j in paper if j not in spread], header, body)
    ours = _spanned([j for j in ours if j not in spread], header, body)
    used = {*paper, *ours, *(j for j, _ in pair), *against, *spread, verdict, ident}
    numeric = {j for j in range(len(header)) if j not in used and j != claim
               and _mostly_numbers([r[j] for r in body if j < len(r) and r[j].strip()])}
    labels = [j for j, name in enumerate(header) if j not in used and j != claim
              and j not in numeric and not _NOTE_HEAD.search(plain_text(name))]
    other = [j for j in sorted(numeric) if not _DERIVED_HEAD.search(plain_text(header[j]))]
    return Columns(paper, ours, pair, verdict, claim, ident, labels, other)


#: A side's header naming its mean beside the spread ("Ours (mean ± std)"): the cell's first
#: number is the side's value (the numbers room reads the spread past it).
_MEAN_HEAD = re.compile(r"(?i)\b(?:mean|avg|average|median)\b")

#: A side's header naming its spread or a difference, not its value ("Ours (std)", "Δ ours",
#: "Reproduced (diff)", "Paper ± CI"); a gain or a drop may be the claim's own quantity.
_SIDE_SPREAD = re.compile(r"(?i)Δ|±|\b(?:diff(?:erence)?|delta|gap|ratio|std|stdev|sd|σ|stderr|"
                          r"sem|ci|variance|relative|rel)\b|error\s*%|%\s*error|误差|誤差")


def _spanned(side: list[int], header: list[str], body: list[list[str]]) -> list[int]:
    """A side's columns with the columns of numbers its header spans: those with an empty header
    right after it ("| Paper | | Ours | |" over "Acc | F1 | Acc | F1"): each one more number of
    the side, so which one is the claim's is not declared."""
    out = list(side)
    for j in side:
        k = j + 1
        while k < len(header) and not plain_text(header[k]).strip() and any(
                NUMBER_OPENING.match(plain_text(r[k]).strip()) for r in body if k < len(r)):
            out.append(k)
            k += 1
    return out


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


#: A column derived from the two sides (a difference, a ratio, an error, a speed-up), a spread
#: of one side, or naming a setting or a count.
_DERIVED_HEAD = re.compile(r"(?i)Δ|\b(?:diff(?:erence)?|delta|gap|change|ratio|improvement|gain|"
                           r"drop|vs\.?|steps?|epochs?|seeds?|samples?|params?|n|size|time|"
                           r"hours?|count|runs?|errors?|err|rel|relative|speed-?ups?|faster|"
                           r"slower|pp|std|stdev|sd|σ|variance|var|ci|sem?|stderr)\b|差|提升|改善|"
                           r"增益|误差|誤差")


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
    commas = comma_style([c for cells in body for c in cells])
    out = []
    for r, (cells, raw) in enumerate(block.rows[1:], start=1):
        cells = cells + [""] * (len(header) - len(cells))
        statement = _row_statement(cells, cols)
        if not statement:
            continue
        ex = Extraction()
        _row_values(ex, header, cells, cols, raw.strip(), commas)
        if (doubt := _row_doubt(raw, len(header))) is not None:
            for name in ("reported_value", "reproduced_value"):
                if ex.provenance.pop(name, None) is not None:
                    setattr(ex, name.split("_")[0], None)
                ex.absent[name] = doubt
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


def _row_doubt(raw: str, width: int) -> str | None:
    """Why neither of a row's numbers is staked: the row says they are not comparable with the
    paper's, or it has more or fewer cells than its header (a cell missing or split: which
    number stands under which header is not declared; the parser pads or cuts it silently)."""
    if _NOT_COMPARABLE.search(plain_text(raw)):
        return "the row says its numbers are not comparable with the paper's"
    cells = len(re.split(r"(?<!\\)\|", raw.strip().removeprefix("|").removesuffix("|")))
    if cells != width:
        return f"the row has {cells} cells under a header of {width}: which number stands " \
               f"under which header is not declared"
    return None


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


#: Both sides in one cell of a column naming both ("93.1 / 94.0", "94.1 → 93.8", "93.1 vs
#: 94.0"); a slash only between spaces ("54/300" is a count of a total).
_PAIR_SPLIT = re.compile(r"(?i)\s+/\s+|\s*(?:→|->|⟶|=>)\s*|\s+(?:vs\.?|versus)\s+")


#: Two plain numbers, one at most 1 and the other this close to a hundredfold of it (as a
#: ratio of the hundredfold), are a fraction against a percent ("0.938" against "94.1"), not
#: one scale: a reproduction a hundredfold off would be stated so, not left for us to guess.
HUNDREDFOLD_BAND = (0.5, 2.0)


@dataclass(frozen=True)
class _Read:
    """One side's number as a cell writes it."""

    side: str
    value: float
    form: str
    unit: str


def _row_values(ex: Extraction, header: list[str], cells: list[str], cols: Columns,
                raw: str, commas: str = "thousands") -> None:
    """The paper's and our number of a row (`table_claims`): each side's when exactly one cell
    (or one half of a two-sided cell, or one parenthesis naming the side) gives it, on the
    other side's scale; else absent with the reason."""
    reads, why = _side_reads(header, cells, cols, commas)
    others = [j for j in cols.other if NUMBER_OPENING.match(plain_text(cells[j]).strip())]
    if others and any(r.side == "reproduced" for r in reads):
        reads = [r for r in reads if r.side != "reproduced"]
        ex.absent["reproduced_value"] = (
            f"another column ({plain_text(header[others[0]])[:60]}) holds a number too: which "
            f"one is ours is not declared")
    if (differ := _scales_differ(reads)) is not None:
        reads = [r for r in reads if r.side != "reproduced"]
        ex.absent["reproduced_value"] = differ
    for side in ("reported", "reproduced"):
        name = f"{side}_value"
        if name in ex.absent:
            continue
        values = {r.value for r in reads if r.side == side}
        if len(values) == 1:
            setattr(ex, side, values.pop())
            ex.provenance[name] = FieldProvenance(how="declared", quote=raw[:MAX_NOTE_CHARS],
                                                  place="table cell")
        elif len(values) > 1:
            ex.absent[name] = f"several {side} cells hold numbers: which one is the claim's " \
                              f"is not declared"
        else:
            ex.absent[name] = why.get(side, "no cell of this side holds one number")


def _side_reads(header: list[str], cells: list[str], cols: Columns, commas: str
                ) -> tuple[list[_Read], dict[str, str]]:
    """(each number a side's cells give, the reason a side's cell gave none)."""
    reads: list[_Read] = []
    beside: list[_Read] = []
    why = {side: f"no column of the table holds the {side} value"
           for side, where in (("reported", cols.paper), ("reproduced", cols.ours))
           if not where and not cols.pair}
    for side, where in (("reported", cols.paper), ("reproduced", cols.ours)):
        for j in where:
            got = cell_number(cells[j], side=side, header=header[j], commas=commas)
            if got.value is not None:
                reads.append(_Read(side, got.value, got.form, got.unit))
                if got.beside is not None:
                    beside.append(_Read(got.beside[0], got.beside[1], got.beside[2], ""))
            elif got.reason is not None:
                why.setdefault(side, got.reason)
    for j, ours_first in cols.pair:
        halves = _PAIR_SPLIT.split(plain_text(cells[j]).strip())
        if len(halves) != 2:
            continue
        sides = ("reproduced", "reported") if ours_first else ("reported", "reproduced")
        got = [cell_number(h, side=side, commas=commas) for h, side in zip(halves, sides,
                                                                             strict=True)]
        if all(g.value is not None and g.beside is None for g in got):
            percent = "%" in plain_text(header[j])
            reads += [_Read(side, g.value, "percent" if percent and g.form == "plain" else
                            g.form, g.unit) for side, g in zip(sides, got, strict=True)
                      if g.value is not None]
    for extra in beside:  # "93.1 (paper 94.0)": the paper's number (another one: two numbers)
        if not any(r.side == extra.side and r.value == extra.value for r in reads):
            reads.append(extra)
    return reads, why


def keep_single_numbers(ex: Extraction) -> None:
    """A value read from a table row by a looser reader (the logbook rules over a report: the
    first number of a cell) is kept only when one cell of its row holds that one number (this
    reader's rule, `read_number`); else it is absent with the reason. This reader's own rows
    (their statement read from a claims table row) were read by its rule already."""
    said = ex.provenance.get("statement")
    if said is not None and said.place == "claims table row":
        return
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


def _scales_differ(reads: list[_Read]) -> str | None:
    """Why the two sides are not on one scale, else None: a count against a percent ("54/300"
    against "18%"), a percent above 1 against a bare fraction (the paper's 91.2% against 0.30),
    two plain numbers a hundredfold apart (`HUNDREDFOLD_BAND`), two units ("1.5 h" against
    "95 min"), or a magnitude against none ("15k" against "14,800")."""
    reps = [r for r in reads if r.side == "reported"]
    ours = [r for r in reads if r.side == "reproduced"]
    if len({r.value for r in reps}) != 1 or len({r.value for r in ours}) != 1:
        return None
    rep, our = reps[0], ours[0]
    if rep.unit != our.unit and ((rep.unit and our.unit) or
                                 (rep.unit or our.unit) in MAGNITUDES):
        return f"{rep.unit or 'no unit'} against {our.unit or 'no unit'}: the two sides are " \
               f"in different units"
    forms = {rep.form, our.form}
    if forms == {"count", "percent"} or forms == {"percent", "plain"} and (
            rep.value > 1 >= abs(our.value) if rep.form == "percent"
            else our.value > 1 >= abs(rep.value)):
        return "a count against a percent or a percent against a fraction: the two sides " \
               "are on different scales"
    small, big = sorted((abs(rep.value), abs(our.value)))
    if forms == {"plain"} and small <= 1 < big and \
            HUNDREDFOLD_BAND[0] <= 100 * small / big <= HUNDREDFOLD_BAND[1]:
        return "two plain numbers a hundredfold apart, one at most 1: a fraction against a " \
               "percent, not declared"
    return None


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
