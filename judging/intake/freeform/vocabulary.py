"""The free-form reader's vocabulary (issue 40): the verdict a short cell, heading or label
declares (through `extract.map_verdict`, the one table of words, marks and phrases, with the
reports' own "Not reproduced", status codes and yes / no answers) and how a claim read by
structure is declared with its quote; the one number a cell holds is `numbers`'."""

from __future__ import annotations

import re

from judging.intake.extract import (
    Extraction,
    map_verdict,
    plain_text,
)
from judging.intake.logbook import FoundClaim, Page
from judging.models import MAX_NOTE_CHARS, MAX_STATEMENT_CHARS, FieldProvenance, Verdict

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
