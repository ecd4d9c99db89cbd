"""The one number a cell of a claims table holds (issue 40), read precision-first: a cell gives
a value only when it holds one number whose meaning its cell and table declare, else none with
the reason.

What a cell may carry around its number and still be one number: emphasis (`**93.1**`,
`_93.1_`, `<b>93.1</b>`), a verdict mark ("93.1 ✅"), a footnote mark ("93.1*", "93.1†",
"93.1^a", "93.1<sup>a</sup>", "93.1 [1]"), an approximation sign ("~93"), a unit of a few
letters, a spread ("± 0.3", "(std 0.3)", "(n=3)"), a difference ("(-0.9)"), a count's total
("54/300") and a parenthesis restating it ("(18.00%)"), or naming the other side's number
("93.1 (paper 94.0)", given as `CellNumber.beside`). What it may not: a bound ("> 90"), a range
("0.91–0.93"), two numbers ("93.1 / 92.7", "93.1, 92.8"), a superscript digit (an exponent or
a footnote: not declared), or a comma the table does not declare as thousands or decimal
(`comma_style`). Hand-written: the cell grammar of reports is ours to decide (no library reads
"93.1 (paper 94.0)" as a number and the other side's)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from judging.intake.extract import (
    NUMBER,
    OURS_COLUMN,
    PAPER_COLUMN,
    drop_ignored,
    parse_number,
    plain_text,
)
from judging.intake.freeform.vocabulary import MARKS

#: A cell that is one number: an optional approximation sign, a plus ("+1.2": a gain), the
#: number with a unit of a few letters, a ± spread, a count's denominator ("54/300", no spaces:
#: "96.5 / 96.3" is a pair) and a parenthetical ("54/300（18.00%）"); `cell_number` checks the
#: count and the parenthetical.
ONE_NUMBER = re.compile(r"^[~≈]?\s*\+?(?P<n>" + NUMBER + r")(?:/(?P<of>\d[\d,]*))?\s*"
                         r"(?P<unit>[A-Za-z%]{1,4}\.?)?\s*(?:±\s*" + NUMBER +
                         r"\s*[A-Za-z%]{0,4})?\s*(?:[(（](?P<aside>[^)）]*)[)）])?\s*$")


NUMBER_OPENING = re.compile(r"^\W{0,3}[~≈]?\s*" + NUMBER)


_SPREAD = re.compile(r"±\s*" + NUMBER)


#: A parenthetical that states a difference ("(+0.11)", "(-0.9)", "(Δ -0.2)", "(0.3 pp)"), not a
#: second value.
_ASIDE_DIFFERENCE = re.compile(r"(?i)^\s*[+\-−–]\s*\d|Δ|\bpp\b|\bdiff|\bdelta\b")


#: A parenthetical that states the number's spread or how many runs it is over ("(std 0.3)",
#: "(s.d. 0.3)", "(σ = 0.3)", "(95% CI 92.8–93.4)", "(n=3)", "(mean of 3)"): not a second value.
_ASIDE_SPREAD = re.compile(r"(?i)^\s*(?:±|\+/-|std\b|stdev\b|std\.?\s*dev\b|s\.\s?d\.|sd\b|σ|"
                           r"sem?\b|s\.\s?e\.|stderr\b|(?:\d+\s*%\s*)?ci\b|iqr\b|n\s*=|"
                           r"(?:mean|median|avg\.?|average)\s+(?:of|over)\b)")


#: A parenthetical naming one side and its one number ("(paper 94.0)", "(paper: 94.0)",
#: "(ours = 93.1)").
_ASIDE_SIDE = re.compile(r"(?i)^\s*(?P<side>[^\W\d_][^\d:=]{0,30}?)\s*[:=]?\s*(?P<n>" + NUMBER +
                         r")\s*[A-Za-z%]{0,4}\s*$")


#: The words of a parenthesis naming the paper's number: the paper itself ("(paper 94.0)",
#: "(reported by the authors: 94.0)"), not a header's looser "original" or "target" ("(original
#: code 93.6)" is the released code's number, "(target 90)" a bar).
_ASIDE_PAPER = re.compile(r"(?i)\b(?:paper(?:'s)?|published|reported|authors?'?)(?!\w)|论文|論文|原文")


#: A parenthesis names a side's number in at most this many words ("reported by the authors").
ASIDE_SIDE_WORDS = 4


#: A bound, not a value ("> 90", "≥ 90%", "at least 90", "up to 2x").
_BOUND = re.compile(r"(?i)^\s*(?:[<>≤≥⩽⩾]|at\s+(?:least|most)\b|above\b|below\b|over\b|"
                    r"under\b|up\s+to\b|more\s+than\b|less\s+than\b|fewer\s+than\b)")


#: A range, not one value ("0.91–0.93", "91 to 93").
_RANGE = re.compile(NUMBER + r"\s*(?:[-–—~]|to)\s*" + NUMBER)


#: Markup around a number that is not part of it: HTML emphasis tags, a footnote in `<sup>`
#: without a digit (a digit there may be an exponent).
_BREAK = re.compile(r"(?i)<br\s*/?>")
_TAGS = re.compile(r"(?i)</?(?:b|strong|em|i|u|mark|span|code)\b[^>]*>|<sup>[^<\d]{1,3}</sup>")
#: A footnote mark closing the cell ("*", "†", "^a", "[1]", "[a]").
_FOOTNOTE = re.compile(r"\s*(?:[*†‡§¶]+|\^[A-Za-z*†]{1,2}|\[(?:\d{1,2}|[a-z])\])\s*$")
_EMPHASIS_EDGE = re.compile(r"^[*_]+(?=[\d~≈<>≤≥+\-−–])|(?<=[\d%)a-zA-Z])[*_]+$")


#: Units that scale the number ("15k", "1.2M", "7B"): against a number without one, two scales.
MAGNITUDES = frozenset({"k", "K", "M", "B", "G", "T", "bn", "mn"})


@dataclass(frozen=True)
class CellNumber:
    """What a cell's number is: its value (None with the reason when the cell holds numbers
    but not one this reader stakes), how it is written, and the other side's number the cell
    names beside it."""

    value: float | None
    reason: str | None = None
    form: str = "plain"
    """count (of a total, "54/300"), percent, or plain."""
    unit: str = ""
    """The letters after the number ("ms", "k"), "" when none; a percent is its form."""
    beside: tuple[str, float, str] | None = None
    """(side, value, form) of a parenthesis naming the other side ("93.1 (paper 94.0)")."""


def bare_cell(cell: str) -> str:
    """A cell without what is not its number's: emphasis, tags, verdict marks, footnotes."""
    clean = _TAGS.sub("", _BREAK.sub(" ", html.unescape(cell)))
    clean = plain_text(clean).replace("**", "").replace("__", "")
    clean = MARKS.sub("", clean).replace("\ufe0f", "").strip()
    for _ in range(3):  # "93.1*†": a mark after a mark
        clean = _FOOTNOTE.sub("", _EMPHASIS_EDGE.sub("", clean)).strip()
    return clean


def comma_style(cells: list[str]) -> str:
    """How a table's numbers use commas: "decimal" (commas only as decimal points: "93,1",
    "0,941"), "thousands" (else), or "unsure" (decimal commas and decimal points both: which a
    comma between digits is, is not declared). Only cells opening with a number count: a
    claim's words ("layers 1,2 and 3") are not the table's numbers."""
    text = " ".join(c for cell in cells if NUMBER_OPENING.match(c := bare_cell(cell)))
    decimal = any(_decimal_comma(tok) for tok in re.findall(r"\d[\d,]*\d", text))
    if not decimal:
        return "thousands"
    return "unsure" if re.search(r"\d\.\d", text) else "decimal"


def _thousands(token: str) -> bool:
    return bool(re.fullmatch(r"[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?", token))


def _decimal_comma(token: str) -> bool:
    return bool(re.fullmatch(r"\d+,\d+", token)) and not _thousands(token)


def _commas(clean: str, style: str) -> tuple[str | None, str | None]:
    """(the cell with its commas read by the table's style, else None with the reason)."""
    tokens = [t for t in re.findall(r"\d[\d,.]*\d", clean) if "," in t]
    if not tokens:
        return clean, None
    if style == "unsure":
        return None, f"{clean[:40]!r}: the table writes decimal commas and points, so a " \
                     f"comma between digits is not declared"
    if style == "decimal":
        if any(_thousands(t) and not _decimal_comma(t) for t in tokens):
            return None, f"{clean[:40]!r}: a comma in a table of decimal commas (a thousands " \
                         f"separator or a decimal comma, not declared)"
        return re.sub(r"(?<=\d),(?=\d)", ".", clean), None
    if any(not _thousands(t) for t in tokens):
        return None, f"{clean[:40]!r}: a comma that separates no thousands (a decimal comma " \
                     f"or a list, not declared)"
    return clean, None


def cell_number(cell: str, *, side: str | None = None, header: str = "",
                commas: str = "thousands") -> CellNumber:
    """The one number of a cell (the module docstring) of `side` ("reported" / "reproduced",
    None: unknown) under `header`, in a table of `comma_style` `commas`."""
    clean = bare_cell(cell)
    if "/" in plain_text(header) and "/" in clean:
        return CellNumber(None, f"{clean[:40]!r}: its header names two measures around a slash, "
                                f"so the cell holds two numbers")
    clean, why = _commas(clean, commas)
    if clean is None:
        return CellNumber(None, why)
    m = ONE_NUMBER.match(clean)
    value = parse_number(m.group("n")) if m else None
    if m is None or value is None:
        return CellNumber(None, _why_not(clean))
    unit = (m.group("unit") or "").rstrip(".")
    form = "percent" if "%" in m.group("n") + unit + plain_text(header) else "plain"
    restated = [value]
    if m.group("of"):
        total = parse_number(m.group("of"))
        if total is None or not value.is_integer() or not 0 <= value <= total or not total:
            return CellNumber(None, f"{clean[:40]!r} is two numbers, not a count of a total")
        restated.append(100 * value / total)
        form = "count"
    aside = m.group("aside") or ""
    beside = None
    if aside and not _ASIDE_DIFFERENCE.search(aside) and not _ASIDE_SPREAD.search(aside):
        beside = _beside(aside, side)
        if beside is None and not _restates(aside, restated):
            return CellNumber(None, f"{clean[:40]!r} holds a second number in its parenthesis")
    return CellNumber(value, None, form, "" if unit == "%" else unit, beside)


def _why_not(clean: str) -> str | None:
    """Why a cell that is not one number gives none: a bound, a range, several numbers; None
    for a cell with no number (a blank, "N/A", "not run")."""
    if not re.search(r"\d", clean):
        return None
    if _BOUND.match(clean):
        return f"{clean[:40]!r} is a bound, not a value"
    if _RANGE.search(clean):
        return f"{clean[:40]!r} is a range, not one value"
    return f"{clean[:40]!r} is not one number"


def _beside(aside: str, side: str | None) -> tuple[str, float, str] | None:
    """(side, value, form) of a parenthesis naming the other side of `side` and its one
    number."""
    m = _ASIDE_SIDE.match(aside)
    if m is None or side is None:
        return None
    words = m.group("side")
    if len(words.split()) > ASIDE_SIDE_WORDS:
        return None
    named = "reported" if _ASIDE_PAPER.search(words) and not OURS_COLUMN.search(words) else \
        "reproduced" if OURS_COLUMN.search(words) and not PAPER_COLUMN.search(words) else None
    value = parse_number(m.group("n"))
    if named is None or named == side or value is None:
        return None
    return named, value, "percent" if "%" in aside else "plain"


def _restates(aside: str, restated: list[float]) -> bool:
    """The parenthesis's numbers restate the cell's (its count's percentage, the same number)."""
    for hit in re.finditer(NUMBER, drop_ignored(_SPREAD.sub(" ", aside))):
        said = parse_number(hit.group(0))
        if said is None or not any(_rounds_to(r, hit.group(0), said) for r in restated):
            return False
    return True


def _rounds_to(exact: float, text: str, said: float) -> bool:
    """`said`, written as `text`, is `exact` rounded to the digits it is written with."""
    digits = len(text.rstrip("%").split(".")[1]) if "." in text else 0
    return abs(exact - said) <= 0.5 * 10 ** -digits + 1e-9


#: A side's word right before its number ("paper 0.82", "ours: 0.79", "reported = 94.1%").
_SIDE_NUMBER = re.compile(r"(?P<w>\b[^\W\d_]+(?:'s)?)\s*[:=]?\s*(?P<n>" + NUMBER + ")")


def title_pair(title: str) -> tuple[float, float] | None:
    """(paper, ours) of a claim's title that states both sides' numbers and no other ("Top-1
    holds (paper 0.82, ours 0.79)", "— ours 0.79 vs paper 0.82 —"): each number right after
    its side's word (the paper named as in a parenthesis, `_ASIDE_PAPER`), one unit; else None.
    Stricter than a sentence pairing both (`extract.sentence_values`, up to six words between a
    side and its number): a title is a label, and one with a third number ("the paper's
    baseline 0.70") says more than a pair."""
    text = drop_ignored(plain_text(title))
    if len(re.findall(NUMBER, text)) != 2:
        return None
    said: dict[str, list[tuple[str, str]]] = {"reported": [], "reproduced": []}
    for m in _SIDE_NUMBER.finditer(text):
        paper, ours = _ASIDE_PAPER.search(m.group("w")), OURS_COLUMN.search(m.group("w"))
        if bool(paper) != bool(ours):
            unit = _UNIT_AFTER.match(text, m.end())
            said["reported" if paper else "reproduced"].append(
                (m.group("n"), unit.group("u") if unit and unit.group("u").lower() not in
                 _NOT_UNITS else ""))
    if len(said["reported"]) != 1 or len(said["reproduced"]) != 1:
        return None
    ((rep, rep_unit),), ((our, our_unit),) = said["reported"], said["reproduced"]
    a, b = parse_number(rep), parse_number(our)
    if a is None or b is None or rep.endswith("%") != our.endswith("%") or rep_unit != our_unit:
        return None  # "paper 82%, ours 0.79", "paper 1.5 h, ours 95 min": two scales
    return a, b


#: The letters right after a number, its unit ("95 min", "15k"), unless a joining word.
_UNIT_AFTER = re.compile(r" ?(?P<u>[A-Za-z]{1,4})\b")
_NOT_UNITS = frozenset({"on", "in", "at", "vs", "and", "or", "for", "with", "of", "to", "the",
                        "from", "over", "by", "a", "an", "is", "are", "was", "but", "when"})


def read_number(cell: str) -> tuple[float | None, str | None]:
    """(the number of a cell that holds one number, else None with the reason when the cell
    holds numbers): `cell_number` with no side or header known."""
    got = cell_number(cell)
    return got.value, got.reason


def one_number(cell: str) -> float | None:
    """The number of a cell that holds one number, else None (`read_number` says why)."""
    return read_number(cell)[0]
