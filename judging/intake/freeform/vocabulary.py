"""The free-form reader's vocabulary (issue 40): the verdict a short cell, heading or label
declares (through `extract.map_verdict`, the one table of words, marks and phrases, with the
reports' own "Not reproduced", status codes and yes / no answers), the one number a cell holds
(else none, with the reason), and how a claim read by structure is declared with its quote."""

from __future__ import annotations

import re

from judging.intake.extract import (
    NUMBER,
    Extraction,
    drop_ignored,
    map_verdict,
    parse_number,
    plain_text,
)
from judging.intake.logbook import FoundClaim, Page
from judging.models import MAX_NOTE_CHARS, MAX_STATEMENT_CHARS, FieldProvenance, Verdict

#: A cell that is one number: an optional approximation sign, the number with a unit of a few
#: letters, a ± spread, a count's denominator ("54/300", no spaces: "96.5 / 96.3" is a pair) and
#: a parenthetical ("54/300（18.00%）"); `one_number` checks the count and the parenthetical.
ONE_NUMBER = re.compile(r"^[~≈]?\s*(?P<n>" + NUMBER + r")(?:/(?P<of>\d[\d,]*))?\s*"
                         r"(?:[A-Za-z%]{1,4}\.?)?\s*(?:±\s*" + NUMBER + r"\s*[A-Za-z%]{0,4})?\s*"
                         r"(?:[(（](?P<aside>[^)）]*)[)）])?\s*$")


_SPREAD = re.compile(r"±\s*" + NUMBER)


#: A parenthetical that states a difference ("(+0.11)", "(Δ -0.2)", "(0.3 pp)"), not a second value.
_ASIDE_DIFFERENCE = re.compile(r"(?i)^\s*\+|Δ|\bpp\b|\bdiff|\bdelta\b")


#: A cell or heading longer than this is prose, not a label: its verdict words are not read.
LABEL_CHARS = 120


BLANK = re.compile(r"^\s*(?:[-—–]+|n/?a|none|)\s*$", re.IGNORECASE)


MARKS = re.compile(r"[✅✔✓☑🟢⚠🟡⬜🟠❌✗✘🔴]")


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
    m = ONE_NUMBER.match(clean)
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


NUMBER_OPENING = re.compile(r"^\W{0,3}[~≈]?\s*" + NUMBER)


#: A header asking whether the claim was reproduced ("Reproduced?", "Match?", "Holds?", "是否复现"):
#: its yes / no cells are verdicts.
VERDICT_QUESTION = re.compile(r"(?i)\b(?:reproduc\w*|replicat\w*|match\w*|holds?|confirmed|"
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


def declared_claim(page: Page, row: int, prose: str, statement: str, ex: Extraction, *, place: str,
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


def set_verdict(ex: Extraction, verdict: str, label: str, quote: str, place: str) -> None:
    ex.verdict = Verdict(verdict)
    ex.source_verdict = plain_text(label).strip()[:MAX_NOTE_CHARS] or verdict
    ex.absent.pop("verdict", None)
    ex.provenance["verdict"] = FieldProvenance(how="declared", quote=quote[:MAX_NOTE_CHARS],
                                               place=place)


#: A heading's tail is a verdict label in at most this many words.
TAIL_LABEL_WORDS = 4


#: A sentence that names the paper's side: with a verdict word, a claim stated in prose.
PAPER_SIDE = re.compile(r"(?i)\b(?:paper(?:'s)?|original|authors?'?|published|reported)\b|论文|"
                         r"論文|原文")


SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
