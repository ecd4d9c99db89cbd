"""The deterministic extractor: a claim's verdict, reported and reproduced values, read only where
the submission declares them, each with the verbatim quote it came from (checked to be on the
page) and how and where it was found. A field not found is absent with the reason.

**Verdicts** come from declared labels, in tiers (docs/explanation/real-submissions.md):

1. the participant's own label on the claim's text: a `Verdict:` / `Assessment:` / `Status:` /
   `Outcome:` line (also mid-line: "Local outcome: `mixed`."), a `## Verdict` heading's first
   line, a cell title or heading that is a label ("Falsified", "C3 VERIFIED at paper scale",
   "Claim 1 — verified"), a claims-table cell, a Space's `short_description`;
2. a short bold label opening a paragraph ("**Reproduced.**", "**PARTIAL / BLOCKED.**");
3. another page's claims-table row for the same claim number;
4. machine output: a verifier's printout (`[PASS] c1_bound`) or a JSON status in run output,
   the claim page's own or keyed by the claim's number anywhere.

The best tier present decides. Labels of that tier that disagree are either a change down the
page (each in its own cell, the cells' timestamps rising: the last wins, `verdict_changed` is
flagged) or a contradiction (`self_contradiction` is flagged and the verdict is left absent for
the judge: never resolved by position alone). A lower-tier label that disagrees with the
verdict is flagged `self_contradiction` and does not change it.

Labels are mapped by `VERDICT_TABLE` (first match wins, read top to bottom):

| label (case-insensitive)                                             | maps to      |
|----------------------------------------------------------------------|--------------|
| NOT (INDEPENDENTLY) VERIFIED/REPRODUCED/REPLICATED, unverified,       | inconclusive |
| not attempted, not_reproduced, partial(ly), blocked, mixed,          |              |
| inconclusive, undetermined                                           |              |
| toy, TOY-VERIFIED, proxy, finite, conditional, special case          | toy (scale)  |
| FALSIFIED (any qualifier), FAIL, REFUTED, contradicted, not supported| falsified    |
| VERIFIED, REPRODUCED, reproduces, SUPPORTED, CONFIRMED, Aligned,     | verified     |
| consistent, [PASS], PASS, holds                                      |              |

A label that declares no verdict ("Not scored as a result", "not assessed") gives none. A
label naming both verified and falsified is split: `self_contradiction`, verdict absent.
`toy` is a scale, not a direction: the direction is taken from the label when it gives one
(TOY-VERIFIED -> verified), else inconclusive; the scale note then reads "toy: <quote>".

**Values** come only from: a claims-table row's paper / ours cells; a results table of the
claim's text with paper and ours columns and one row; `key=value` or JSON lines of run output
whose key names the paper (paper, reported, claimed, expected, target, published) or the
measurement (measured, observed, reproduced, ours, obtained); a linked results file (JSON or
CSV) with such keys; one sentence that pairs both explicitly ("the paper reports X and we
measured Y"). Several different values for one side from one place are ambiguous and left
absent. A number anywhere else in the prose is left absent with the reason "stated in prose:
needs --extract" (the LLM extractor reads prose, each value checked against its quote).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from judging.models import MAX_NOTE_CHARS, FieldProvenance, Verdict

_INCONCLUSIVE = re.compile(
    r"\bnot[\s_-]+(?:independently[\s_-]+)?(?:verified|reproduced|replicated|confirmed)\b|"
    r"\bunverified\b|\bnot[\s_-]+attempted\b|\bpartial(?:ly)?\b|\bblocked\b|\bmixed\b|"
    r"\binconclusive\b|\bundetermined\b|\bunreproduced\b|\bnot[\s_-]+reproducible\b",
    re.IGNORECASE)
#: A label that declares no verdict ("Not scored as a result", "not assessed"): absent, not
#: inconclusive.
_NO_VERDICT = re.compile(r"(?i)\bnot[\s_-]+(?:scored|assessed|evaluated|judged)\b")
_TOY = re.compile(r"\btoy\b|\bproxy\b|\bfinite[\s_-]|\bconditional(?:\b|_)|\bspecial[\s_-]case\b",
                  re.IGNORECASE)
#: The words a label may open with (a title "Claim 2 — Finite optimum" is not a label).
_LABEL_OPENING = re.compile(
    r"(?i)(?:not[\s_-]+(?:independently[\s_-]+)?)?(?:verified|falsified|reproduced|replicated|"
    r"confirmed|supported|inconclusive|blocked|partial(?:ly)?|refuted|toy(?:-verified)?|pass(?:ed)?|"
    r"fail(?:ed)?|mixed|consistent|aligned|unverified|undetermined|not_reproduced|holds|"
    r"supports|reproduces|contradicted)\b|\[(?:pass|fail)\]")
_FALSIFIED = re.compile(r"\bfalsified\b|\bfail(?:ed|s)?\b|\brefuted\b|\bcontradicted\b|"
                        r"\bnot[\s_-]+supported\b|\bdoes[\s_-]+not[\s_-]+(?:hold|reproduce)\b",
                        re.IGNORECASE)
_VERIFIED = re.compile(r"\bverified\b|\breproduced\b|\breproduces\b|\bsupported\b|"
                       r"\bconfirmed\b|\baligned\b|\bconsistent\b|\[pass\]|\bpass(?:ed|es)?\b|"
                       r"\bholds\b|\breplicated\b|\breplicates\b|\bsupports\b",
                       re.IGNORECASE)

#: The table the module docstring shows, as code: (pattern, direction or "toy").
VERDICT_TABLE: list[tuple[re.Pattern[str], str]] = [
    (_INCONCLUSIVE, Verdict.inconclusive.value), (_TOY, "toy"),
    (_FALSIFIED, Verdict.falsified.value), (_VERIFIED, Verdict.verified.value)]


@dataclass
class MappedVerdict:
    verdict: Verdict | None
    toy: bool
    split: bool
    """The label names both verified and falsified."""


#: Marks, status codes and phrases of other languages, and English phrases that are a verdict
#: only where a label stands (a claims-table cell, a heading), never inside a sentence: read
#: after `VERDICT_TABLE`'s words, the first that matches (longest phrases first, so "不一致" is
#: not "一致"). Free-form reports spell verdicts so (issue 40's data card).
MARK_TABLE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.IGNORECASE), v) for p, v in (
        (r"\bnot[\s_-]+(?:run|implemented|done|evaluated)\b|\bn/a\b|\bgaps?\b|⬜|🟡|🟠|⚠|"
         r"沒有完全重現|没有完全复现|未完全|代理完成|未完成|未做|部分(?:复现|重现|重現|復現|一致|成功)",
         Verdict.inconclusive.value),
        (r"\bOUT_OF_TOL\b|\b(?:doesn't|does\s+not|don't|do\s+not|didn't|did\s+not|not)\s+"
         r"(?:match|replicate|reproduce|see)|^\W*what\s+(?:doesn't|does\s+not|didn't|did\s+not)\W*$|"
         r"\bmismatch|不一致|[未没沒]有?(?:复现|重现|重現|復現)|尚未重現|❌|✗|✘|🔴",
         Verdict.falsified.value),
        (r"\b(?:WITHIN|IN)_TOL\b|\bmatch(?:es|ed)?\b|\bagree(?:s|ment|ments)?\b|\bvalidated\b|"
         r"一致|(?:复现|重现|重現|復現)成功|[已有](?:复现|重现|重現|復現)|"
         r"忠[实實](?:复现|重现|重現|復現)|✅|✔|✓|☑|🟢",
         Verdict.verified.value))]


#: A verdict word or mark turned around or held back by the words just before it ("could not
#: be verified", "never failed", "not yet verified", "no longer reproduces", "would be verified",
#: "NOT ✅") or just after it ("Verified? No.", "Reproduced: no"): the label declares no verdict
#: a reader would stake. Only beside the word: a note further on ("SUPPORTED (no standalone
#: dataset found)") is no negation of it.
_NEGATED_BEFORE = re.compile(r"(?i)(?:\b(?:no|not|never|cannot|hardly|unable|without|yet|"
                             r"longer|if|unless|would)\b|n't)(?:\s+\w+){0,2}\W*$")
_NEGATED_AFTER = re.compile(r"(?i)^\s*(?:\?|[:=\u2014\u2013-]\s*(?:no|not|never|false)\b)")
#: The marks of each side: a label carrying the other side's mark too ("❌ verified", "✅❌")
#: declares both.
_SIDE_MARKS = {Verdict.verified.value: re.compile("[✅✔✓☑🟢]"),
               Verdict.falsified.value: re.compile("[❌✗✘🔴]")}


def _doubted(label: str, pattern: re.Pattern[str], verdict: str) -> bool:
    """Whether a label's verdict (`pattern`'s matches, read as `verdict`) is negated or doubted
    beside it, or the label carries the other side's mark."""
    if any(negated_at(label, m.start(), m.end()) for m in pattern.finditer(label)):
        return True
    other = {Verdict.verified.value: Verdict.falsified.value,
             Verdict.falsified.value: Verdict.verified.value}.get(verdict)
    return bool(other and _SIDE_MARKS[other].search(label))


def negated_at(text: str, start: int, end: int) -> bool:
    """Whether the verdict word or mark at `text[start:end]` is negated or doubted beside it
    ("(not ✅)", "could not be verified", "Verified? No.")."""
    return bool(_NEGATED_BEFORE.search(text[:start]) or _NEGATED_AFTER.match(text[end:]))


def negated_in(label: str, text: str) -> bool:
    """Whether every place `label` stands in `text` (case-insensitively) is negated or doubted
    beside it ("could not be verified", "Verified? No."): a label an LLM quoted from such a
    sentence is the opposite of what the sentence says."""
    found = list(re.finditer(re.escape(label.strip()), text, re.IGNORECASE))
    return bool(found) and all(negated_at(text, m.start(), m.end()) for m in found)


def map_verdict(label: str, *, doubt: bool = True) -> MappedVerdict:
    """The participant's label mapped by `VERDICT_TABLE`, then by `MARK_TABLE`; a label
    declaring no verdict maps to none, and so does one whose verdict is negated, doubted or
    contradicted beside it (`_doubted`: precision first, a reader would not stake it), unless
    `doubt` is off (a sentence asked only whether it speaks of a verdict at all)."""
    toy = bool(_TOY.search(label))
    if _NO_VERDICT.search(label):
        return MappedVerdict(None, False, False)
    if not is_verdict_label(label):
        for pattern, verdict in MARK_TABLE:
            if pattern.search(label):
                if doubt and _doubted(label, pattern, verdict):
                    return MappedVerdict(None, False, False)
                return MappedVerdict(Verdict(verdict), False, False)
        return MappedVerdict(None, False, False)
    if _INCONCLUSIVE.search(label):
        return MappedVerdict(Verdict.inconclusive, toy, False)
    fals, ver = _FALSIFIED.search(label), _VERIFIED.search(label)
    split = bool(fals and ver)
    if split:
        return MappedVerdict(None, toy, True)
    if fals or ver:
        verdict = Verdict.falsified if fals else Verdict.verified
        words = _FALSIFIED if fals else _VERIFIED
        if doubt and _doubted(label, words, verdict.value):
            return MappedVerdict(None, toy, False)
        return MappedVerdict(verdict, toy, False)
    if toy:
        return MappedVerdict(Verdict.inconclusive, True, False)
    return MappedVerdict(None, False, False)


def is_verdict_label(text: str) -> bool:
    return bool(_INCONCLUSIVE.search(text) or _TOY.search(text) or _FALSIFIED.search(text)
                or _VERIFIED.search(text))


# --- numbers --------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
NUMBER = (r"(?<![\w.])[-−–]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
          r"(?:\s*(?:[eE][-+−]?\d+|[×x]\s*10(?:\^\{?[-−]?\d+\}?|[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)))?"
          r"(?:\s*\+\s*\d+(?:\.\d+)?[eE][-−]\d+)?%?")


def parse_number(text: str) -> float | None:
    t = text.strip().translate(_SUPERSCRIPT).replace("−", "-").replace("–", "-")
    t = t.replace(",", "").rstrip("%").strip()
    plus = re.fullmatch(r"(.+?)\s*\+\s*(\d+(?:\.\d+)?[eE]-\d+)", t)
    if plus:
        a, b = parse_number(plus.group(1)), parse_number(plus.group(2))
        return a + b if a is not None and b is not None else None
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*[×x]\s*10\^?\{?([-+]?\d+)\}?", t)
    if m:
        value = float(m.group(1)) * 10.0 ** int(m.group(2))
    else:
        try:
            value = float(t.replace(" ", ""))
        except ValueError:
            return None
    return value if math.isfinite(value) else None


#: Reasons of absent values.
IN_PROSE = "stated in prose: needs --extract"
NO_NUMBER = "no number is stated for it"


@dataclass
class Extraction:
    source_verdict: str | None = None
    verdict: Verdict | None = None
    toy: bool = False
    reported: float | None = None
    reproduced: float | None = None
    provenance: dict[str, FieldProvenance] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    contradiction: tuple[str, str] | None = None
    changed: tuple[str, str] | None = None
    """The verdict changed down the page: (the earlier label's quote, the last one's)."""
    toy_quote: str | None = None
    scale_note: str | None = None
    """A scale note other than toy (the LLM extractor's, with its quote)."""

    def toy_note(self) -> str | None:
        """The claim's scale note when the page calls it toy: "toy: " and the quote as text (its
        provenance keeps the quote verbatim), else the other scale note."""
        if self.toy and self.toy_quote:
            return f"toy: {plain_text(self.toy_quote)}"
        return self.scale_note


#: Markdown emphasis and code spans around text (`**x**`, `__x__`, `*x*`, `` `x` ``). A single
#: underscore is left alone: it is more often part of a name (snake_case) than emphasis. A span
#: holds no marker of its own kind: a line of "**a " read to its end from every marker (minutes).
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)((?:(?!\1).)+?)(?<=\S)\1")


def plain_text(text: str) -> str:
    """A quote as a note shows it: Markdown emphasis markers dropped, the words kept. The
    emphasis and code spans are the only Markdown a label quote carries (a line of a page);
    rendering the page with a Markdown library to read it back would be more than this needs.

    >>> plain_text("Verdict: **TOY-VERIFIED** (`n=64`)")
    'Verdict: TOY-VERIFIED (n=64)'
    >>> plain_text("grad_norm_clip stays")
    'grad_norm_clip stays'
    """
    return _EMPHASIS.sub(r"\2", text)


# --- verdict labels -------------------------------------------------------------------------

@dataclass(frozen=True)
class Label:
    """One verdict label found in a declared place."""

    text: str
    quote: str
    """Verbatim text of the submission holding the label."""
    place: str
    """Where: "Verdict line", "verdict heading", "cell title", "heading", "claims table cell",
    "bold label", "run printout", "run output JSON", "short_description", ..."""
    tier: int
    order: int = 0
    """Position on the page (offset or cell index): only for reporting, never to decide."""
    time: str | None = None
    """The ISO timestamp of the cell holding it, when known."""
    cell: int | None = None
    """The index of the cell holding it (labels of one cell have no order in time)."""
    elsewhere: bool = False
    """The quote is from another file than the claim's page (another page, logbook.json)."""

    @property
    def mapped(self) -> MappedVerdict:
        return map_verdict(self.text)


_LABEL_KEY = (r"(?:(?:final|overall|reviewer|scientific|local|self|claim|participant)[\s-]+)?"
              r"(?:verdict|assessment|status|outcome|result|conclusion)")
_LABEL_LINE = re.compile(
    r"(?im)(?:^[ \t>*_#-]*|(?<=[.!?)`*][ \t])[ \t]*)(?:\*\*|__)?" + _LABEL_KEY +
    r"(?:\s*\([^)\n]{0,60}\))?\s*(?:\*\*|__)?\s*[:\u2014]\s*(?:\*\*|__)?"
    r"(?P<label>[^\n]{1,200})")
_VERDICT_HEADING = re.compile(r"(?im)^#{1,4}[ \t]+(?:final[ \t]+|overall[ \t]+)?verdict[ \t]*$"
                              r"\s*\n(?:[ \t]*\n)*(?P<line>[^\n#|][^\n]{0,200})")
#: A bold paragraph lead (not a list item's: "- **Directly verified:** ..." labels a part).
_BOLD_LEAD = re.compile(r"(?m)^[ \t>]*(?:\*\*|__)(?P<label>[^*_\n]{2,120}?)(?:\*\*|__)")
#: A verifier's printout line: `[PASS] ...`, `[FAIL] ...`, `PASS: ...`.
_PRINTOUT = re.compile(r"(?m)^[ \t]*(?P<label>\[(?:PASS|FAIL|OK)\]|(?:PASS|FAIL|VERIFIED|FALSIFIED)"
                       r"(?=[:\s]))[^\n]{0,200}")
#: An upper-case verdict word: a label in a title or heading ("C3 VERIFIED at paper scale").
_CAPS_LABEL = re.compile(r"(?<![A-Za-z])(?:NOT[ _-]+(?:INDEPENDENTLY[ _-]+)?)?(?:VERIFIED|"
                         r"FALSIFIED|INCONCLUSIVE|REPRODUCED|CONFIRMED|SUPPORTED|BLOCKED|"
                         r"PARTIAL(?:LY)?|REFUTED|TOY-VERIFIED|NOT_REPRODUCED)(?![A-Za-z])")
#: A heading or title naming a claim and then its label: "Claim 1 — verified".
_CLAIM_THEN_LABEL = re.compile(r"(?i)^(?:current\s+)?(?:claim\s*C?\d+|C\d+)\s*[\u2014\u2013:-]"
                               r"\s*(?P<label>[^\n]{1,80})$")
_HEADING = re.compile(r"(?m)^#{1,4}[ \t]+(?P<t>[^\n]+)$")
#: How far into a label its verdict word may stand ("SUPPORTED (paper + audit ...)",
#: "architecture claim (Claim 4) reproduces at the structural level" are labels; "Under this
#: protocol, the three-seed validation ... does not support ..." is a sentence).
_LABEL_REACH = 60


def _clean_label(label: str) -> str:
    label = re.sub(r"^[\s*_`>✅❌⚠️✔✗☑️🟢🔴🟡-]+", "", label.strip())
    # a label in bold ends where the bold does: "**Assessment: verified.** A clean-room ..."
    label = re.split(r"\*\*|__", label)[0] if re.search(r"\w", re.split(r"\*\*|__", label)[0]) \
        else label
    label = label.strip().strip("*_` ").strip()
    label = re.sub(r"[`*_]+(?=[.;:,]?$)", "", label)
    return re.sub(r"\s+", " ", label)


def _labelish(label: str) -> bool:
    """A verdict word within the first `_LABEL_REACH` characters: a label, not a sentence.
    Scale words alone (finite, proxy, conditional) make a label only as one token
    (FINITE_TRACKING_PROXY); "toy" does anywhere in its reach."""
    head = label[:_LABEL_REACH]
    direction = bool(_INCONCLUSIVE.search(head) or _FALSIFIED.search(head)
                     or _VERIFIED.search(head))
    return direction or bool(re.search(r"(?i)\btoy\b", head)) \
        or (" " not in label.strip() and bool(_TOY.search(label)))


def _short_label(label: str) -> bool:
    """A bold lead is a label when it opens with its verdict word(s) and is short ("**Reproduced
    .**", "**Not verified.**") or opens in capitals ("**PARTIAL / BLOCKED, with an exact scope
    qualification.**")."""
    words = label.split()
    if not words or label.rstrip().endswith("?") or _NOUN_AFTER.match(label):
        return False
    if len(words) <= 3 and _LABEL_OPENING.search(label):
        return True  # "**Mechanism reproduced.**"
    if not _LABEL_OPENING.match(label):
        return False
    return len(words) <= 6 or bool(re.match(r"[A-Z][A-Z_/ -]{3,}\b", label))


def text_labels(text: str, *, tier_bold: int = 2, cell: int | None = None,
                time: str | None = None, offset: int = 0) -> list[Label]:
    """Tier-1 and bold labels of a Markdown text (a cell body, a section, a README)."""
    out: list[Label] = []
    for m in _LABEL_LINE.finditer(text):
        label = _clean_label(m.group("label"))
        if label and _labelish(label):
            out.append(Label(label, m.group(0).strip(), "Verdict line", 1, offset + m.start(),
                             time, cell))
    for m in _VERDICT_HEADING.finditer(text):
        label = _clean_label(m.group("line"))
        if label and _labelish(label):
            out.append(Label(label, m.group(0).strip(), "verdict heading", 1,
                             offset + m.start(), time, cell))
    for m in _HEADING.finditer(text):
        label = heading_label(m.group("t"), bare=False)
        if label is not None and not re.match(r"(?i)\s*(?:final\s+|overall\s+)?verdict\b",
                                              m.group("t")):
            out.append(Label(label, m.group(0).strip(), "heading", 1, offset + m.start(),
                             time, cell))
    for m in _BOLD_LEAD.finditer(text):
        label = _clean_label(m.group("label")).rstrip(".:;,")
        if label and _short_label(label) and not re.match(r"(?i)" + _LABEL_KEY, label):
            out.append(Label(label, m.group(0).strip(), "bold label", tier_bold,
                             offset + m.start(), time, cell))
    out.sort(key=lambda lb: lb.order)
    return _dedupe(out)


#: The verdict words a title may open with after a claim's name ("Claim 1 — verified"): not
#: the ones that are also plain English in a statement (consistent, holds, aligned, mixed, pass).
_STRONG_OPENING = re.compile(
    r"(?i)(?:not[\s_-]+(?:independently[\s_-]+)?)?(?:verified|falsified|reproduced|replicated|"
    r"confirmed|supported|inconclusive|blocked|partial(?:ly)?|refuted|toy-verified|unverified|"
    r"not_reproduced)\b|(?-i:[A-Z]{4,}(?:[ _/-]+[A-Z]{2,})*)\b")
#: A verdict word naming what follows it is a caption or a section, not a label:
#: "Reproduced figure", "Verified claims", "Consistent hashing".
_NOUN_AFTER = re.compile(r"(?i)^\W*\w+(?:[\s-]+\w+)?[\s-]+(?:figures?|tables?|plots?|charts?|"
                         r"curves?|images?|diagrams?|results?|numbers|values|setup|runs?|code|"
                         r"claims?|hashing|estimators?|data(?:sets?)?)\b")


def heading_label(title: str, *, bare: bool = True) -> str | None:
    """The label of a title or heading, when it is one: "Verdict: X", "Claim 1 — verified", an
    upper-case verdict word, or (`bare`, cell titles) a bare label of at most three words
    ("Falsified", not "Reproduced figure"); a Markdown heading "## Verified claims" names a
    section, so headings are read with `bare=False`."""
    clean = _clean_label(title)
    m = re.match(r"(?i)" + _LABEL_KEY + r"\s*[:\u2014-]\s*(?P<l>.+)$", clean)
    if m and _labelish(_clean_label(m.group("l"))):
        return _clean_label(m.group("l"))
    if bare and len(clean.split()) <= 3 and map_verdict(clean).verdict is not None \
            and _LABEL_OPENING.match(clean) and not _NOUN_AFTER.match(clean):
        return clean
    m = _CLAIM_THEN_LABEL.match(clean)
    if m:
        label = _clean_label(m.group("label"))
        # "Claim 1 — verified", not "Claim 2 — Consistent estimation of X" (a statement)
        if len(label.split()) <= 4 and _STRONG_OPENING.match(label) \
                and not _NOUN_AFTER.match(label):
            return label
    caps = list(_CAPS_LABEL.finditer(clean))
    if caps and len({map_verdict(c.group(0)).verdict for c in caps}) == 1:
        return clean
    return None


def cell_label(cell: str) -> str | None:
    """The label of a claims-table cell: short (at most eight words) with a verdict word, or
    opening with one; a cell of prose ("Exact 1D SAM gap is 0.5r^2 ...") is not a label."""
    clean = _clean_label(cell).rstrip(".;: ")
    if not clean:
        return None
    if len(clean.split()) <= 8 and _labelish(clean):
        return clean
    return clean if _LABEL_OPENING.match(clean) else None


def _dedupe(labels: list[Label]) -> list[Label]:
    seen: set[tuple[str, int | None, int]] = set()
    out = []
    for label in labels:
        key = (label.quote, label.cell, label.order)
        if key not in seen and not any(o.quote == label.quote and o.cell == label.cell
                                       for o in out):
            seen.add(key)
            out.append(label)
    return out


def printout_labels(output: str, *, cell: int | None = None, time: str | None = None
                    ) -> list[Label]:
    """Tier-4 labels of run output: a verifier's printout lines (`[PASS] ...`) and its label
    lines (`result: not verified`)."""
    out = [Label(m.group(0).strip(), m.group(0).strip(), "run printout", 4, m.start(), time,
                 cell)
           for m in _PRINTOUT.finditer(output) if map_verdict(m.group("label")).verdict]
    for m in _LABEL_LINE.finditer(output):
        label = _clean_label(m.group("label"))
        if label and _labelish(label) and not any(o.order == m.start() for o in out):
            out.append(Label(label, m.group(0).strip(), "run printout", 4, m.start(), time,
                             cell))
    return sorted(out, key=lambda lb: lb.order)


# --- which places are read -----------------------------------------------------------------

#: The kinds of declared place a verdict label is read from (`Label.place` up to " on <page>").
VERDICT_PLACES = frozenset({
    "Verdict line", "verdict heading", "heading", "cell title", "page title",
    "page title in logbook.json", "claims table cell", "bold label", "claims table",
    "run printout", "run output JSON", "short_description", "list item mark"})
#: The kinds of declared place a value is read from (`Value.place`).
VALUE_PLACES = frozenset({"table cell", "results table", "run output key=value",
                          "run output JSON", "results file", "log key=value",
                          "sentence pairing both"})


def place_kind(place: str) -> str:
    """The kind of a place: "claims table on executive-summary" is a "claims table"."""
    return place.split(" on ", 1)[0]


# --- deciding the verdict -------------------------------------------------------------------

def decide_verdict(ex: Extraction, labels: list[Label], page_text: str | None = None) -> None:
    """Set `ex`'s verdict from `labels` by the tier rule of the module docstring."""
    usable = [lb for lb in labels if lb.mapped.verdict is not None or lb.mapped.split
              or lb.mapped.toy]
    if not usable:
        ex.absent["verdict"] = ("no verdict label was found in a declared place (a Verdict:, "
                                "Status: or Outcome: line, a Verdict heading, a cell title, a "
                                "claims-table cell, a short bold label, a verifier printout)")
        return
    best = min(lb.tier for lb in usable)
    top = [lb for lb in usable if lb.tier == best]
    chosen = top[-1]
    directions = {lb.mapped.verdict for lb in top}
    if len(directions) > 1 or any(lb.mapped.split for lb in top):
        if _a_change(top):
            chosen = max(top, key=lambda lb: (lb.time or "", lb.order))
            first = next(lb for lb in top if lb.mapped.verdict != chosen.mapped.verdict)
            ex.changed = (first.quote, chosen.quote)
        else:
            split = next((lb for lb in top if lb.mapped.split), None)
            a, b = (split, split) if split is not None else \
                (top[0], next(lb for lb in top if lb.mapped.verdict != top[0].mapped.verdict))
            ex.contradiction = (a.quote, b.quote)
            ex.absent["verdict"] = (f"conflicting labels ({a.place}: {a.text!r}; {b.place}: "
                                    f"{b.text!r}): left for the judge")[:MAX_NOTE_CHARS]
            ex.source_verdict = chosen.text[:MAX_NOTE_CHARS]
            if any(lb.mapped.toy for lb in top):
                ex.toy, ex.toy_quote = True, next(lb.quote for lb in top if lb.mapped.toy)
            return
    mapped = chosen.mapped
    ex.source_verdict, ex.verdict, ex.toy = chosen.text, mapped.verdict, mapped.toy
    if ex.verdict is None:
        ex.verdict = Verdict.inconclusive
    # a label of another page (a claims table elsewhere, keyed machine output) is quoted from
    # that page: only the claim's own labels are checked against its page
    _prov(ex, "verdict", "declared", chosen.quote, chosen.place,
          None if chosen.elsewhere else page_text)
    if mapped.toy:
        ex.toy_quote = chosen.quote
    lower = [lb for lb in usable if lb.tier > best and lb.mapped.verdict is not None]
    if lower and ex.contradiction is None:
        latest = max(lower, key=lambda lb: (lb.tier == min(x.tier for x in lower),
                                            lb.time or "", lb.order))
        if latest.mapped.verdict not in (ex.verdict, None):
            ex.contradiction = (chosen.quote, latest.quote)


def _a_change(labels: list[Label]) -> bool:
    """Labels that disagree are a change down the page when each stands in its own cell and the
    cells' timestamps rise with the page order (a later cell revises an earlier one)."""
    if any(lb.time is None or lb.cell is None for lb in labels):
        return False
    by_cell: dict[int, set] = {}
    for lb in labels:
        by_cell.setdefault(lb.cell, set()).add(lb.mapped.verdict)  # type: ignore[arg-type]
    if any(len(v) > 1 for v in by_cell.values()) or any(lb.mapped.split for lb in labels):
        return False
    ordered = sorted(labels, key=lambda lb: lb.cell)  # type: ignore[arg-type,return-value]
    times = [lb.time for lb in ordered]
    return all(a <= b for a, b in zip(times, times[1:], strict=False)) and times[0] != times[-1]


def _prov(ex: Extraction, name: str, how: str, quote: str, place: str,
          page_text: str | None) -> None:
    if quote and (page_text is None or quote in page_text):
        ex.provenance[name] = FieldProvenance(how=how, quote=quote[:MAX_NOTE_CHARS],
                                              place=place[:200])


# --- values ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    side: str
    """"reported" or "reproduced"."""
    value: float
    quote: str
    place: str


_KEY_REPORTED = re.compile(r"(?i)(?:^|[_\W])(?:paper|reported|claimed|published|authors?|ref|"
                           r"reference|expected)"
                           r"(?:[_\W]|$)")
_KEY_REPRODUCED = re.compile(r"(?i)(?:^|[_\W])(?:observed|measured|reproduced|ours|obtained|"
                             r"reproduction)(?:[_\W]|$)")
#: Words of a column header (any reader's tables: a logbook's, a report's) that name the paper's
#: side of a comparison, and those that name ours (English, and the Chinese of real reports).
PAPER_COLUMN = re.compile(r"(?i)\b(?:paper|reported|published|original|claimed|target|expected|"
                          r"authors?)\b"
                          r"|论文|論文|原文")
OURS_COLUMN = re.compile(r"(?i)\b(?:ours|our|reproduced|reproduction|measured|observed|obtained|"
                         r"achieved|actual|"
                         r"this (?:run|repo(?:sitory)?|work)|replicated|replication)\b|本次|本复现|"
                         r"复现|復現|我们|我們")


#: A key naming a setting or an identifier, not a result ("paper_batch_size", "paper_id").
_SETTING_KEY = re.compile(r"(?i)(?:^|[_\W])(?:id|ids|seed|seeds|batch|size|steps?|epochs?|lr|"
                          r"learning[_ ]rate|version|year|index|page|n|num|count|arxiv|doi)"
                          r"(?:[_\W]|$)")


#: A key naming a spread, a bound or a comparison of a side, not its value ("paper_std",
#: "ours_ci_low", "diff_vs_paper", "tolerance_paper"); a ratio or a gap may be the measure
#: itself ("observed_final_mae_ratio").
_SPREAD_KEY = re.compile(r"(?i)(?:^|[_\W])(?:std|stdev|sd|sem|se|stderr|ci|ci95|lower|upper|low|"
                         r"high|min|max|tol|tolerance|threshold|margin|diff|difference|delta|vs|"
                         r"versus|minus)(?:[_\W]|$)")


def key_side(key: str) -> str | None:
    """"reported" when a key names the paper, "reproduced" when it names the measurement (not a
    setting or an identifier of either, nor a spread, bound or comparison of it)."""
    if _SETTING_KEY.search(key) or _SPREAD_KEY.search(key):
        return None
    rep, ours = _KEY_REPORTED.search(key), _KEY_REPRODUCED.search(key)
    if bool(rep) == bool(ours):
        return None
    return "reported" if rep else "reproduced"


def column_side(header: str) -> str | None:
    """The side a table column holds values of (a "Paper statement" column holds text)."""
    if re.search(r"(?i)statement|claim|description|source|reference|section|setting|note", header):
        return None
    rep, ours = PAPER_COLUMN.search(header), OURS_COLUMN.search(header)
    if bool(rep) == bool(ours):
        return None
    return "reported" if rep else "reproduced"


_KV_LINE = re.compile(r"(?m)^[ \t]*(?P<key>[A-Za-z][\w.\- ]{0,80}?)[ \t]*[=:][ \t]*"
                      r"(?P<num>" + NUMBER + r")[ \t]*$")


def output_values(output: str) -> list[Value]:
    """Values of run output: `key=value` / `key: value` lines and JSON objects (one per line or
    the whole output) whose key names the paper or the measurement."""
    out: list[Value] = []
    for m in _KV_LINE.finditer(output):
        side = key_side(m.group("key"))
        value = parse_number(m.group("num"))
        if side is not None and value is not None:
            out.append(Value(side, value, m.group(0).strip(), "run output key=value"))
    for data, quote in _json_objects(output):
        out += [Value(side, value, quote_of(key, quote), "run output JSON")
                for side, key, value in json_values(data)]
    return out


def quote_of(key: str, text: str) -> str:
    """The line of `text` holding `key` (a quote on the page), else the text's first line."""
    for line in text.splitlines():
        if f'"{key}"' in line or f"{key}" in line:
            return line.strip()[:MAX_NOTE_CHARS]
    return text.strip().splitlines()[0][:MAX_NOTE_CHARS] if text.strip() else ""


def _json_objects(text: str) -> list[tuple[object, str]]:
    """JSON values in `text`: the whole text, or each line that is one."""
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            return [(json.loads(stripped), stripped)]
        except ValueError:
            pass
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line[:1] == "{" and line[-1:] == "}":
            try:
                out.append((json.loads(line), line))
            except ValueError:
                continue
    return out


def json_values(data: object, *, depth: int = 0) -> list[tuple[str, str, float]]:
    """(side, key, value) of the numeric leaves of a JSON value whose key names a side."""
    out: list[tuple[str, str, float]] = []
    if depth > 6:
        return out
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(key, str):
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                side = key_side(key)
                if side is not None and math.isfinite(float(value)):
                    out.append((side, key, float(value)))
            elif isinstance(value, (dict, list)):
                out += json_values(value, depth=depth + 1)
    elif isinstance(data, list):
        for item in data[:200]:
            out += json_values(item, depth=depth + 1)
    return out


def table_values(header: list[str], row: list[str], raw: str, place: str = "table cell"
                 ) -> list[Value]:
    """The paper / ours cells of one table row (columns named by `column_side`)."""
    out: list[Value] = []
    for j, name in enumerate(header):
        side = column_side(name)
        if side is None or j >= len(row):
            continue
        hit = _number_in(row[j])
        if hit is not None:
            out.append(Value(side, hit[0], raw.strip(), place))
    return out


_PAPER_SIDE = (r"(?:the\s+)?(?:paper(?:'s)?|authors?'?|published|reported|claimed|original)"
               r"(?:\s+(?:reports?|value|gives|states|claims|figure|number|result))?")
_OURS_SIDE = (r"(?:we\s+(?:measure|measured|obtain|obtained|get|got|find|found|observe|observed|"
              r"reproduce|reproduced)|measured|reproduced|observed|obtained|ours|our\s+(?:value|"
              r"run|result|reproduction|measurement|estimate))")
#: Between a side's marker and its number: at most six words without a digit ("the paper
#: reports a validation loss below 0.25").
_SIDE_GAP = r"(?:[ \t\n]+[^\s\d.;:=|]+){0,6}?[ \t\n]*(?:[:=<>≤≥~≈]|of|is)?[ \t]*(?:\*\*|`)?"
_PAIR_REPORTED = re.compile(r"(?i)\b" + _PAPER_SIDE + _SIDE_GAP + r"(?P<num>" + NUMBER + ")")
_PAIR_REPRODUCED = re.compile(r"(?i)\b" + _OURS_SIDE + _SIDE_GAP + r"(?P<num>" + NUMBER + ")")
#: A sentence: up to a full stop after a word, a percent or a closing mark, or to the end of its
#: paragraph (a hard-wrapped paragraph's lines are one text; a table row or list item is one).
_SENTENCE = re.compile(r"(?:[^\n]|\n(?![ \t]*(?:\n|[|>#*+-]|\d+[.)]\s)))+?"
                       r"(?:(?<=[\w%)`*\]])\.(?=\s|$)|(?=\n[ \t]*(?:\n|[|>#*+-]|\d+[.)]\s))|\Z)")


def sentence_values(text: str) -> list[Value]:
    """Values of sentences that pair both sides explicitly ("the paper reports 1.5; we measured
    0.9"): one number right after a paper marker and one right after a measurement marker."""
    out: list[Value] = []
    clean = drop_ignored(text)
    for s in _SENTENCE.finditer(strip_fences(text)):
        sentence = s.group(0).lstrip()
        start = s.start() + len(s.group(0)) - len(sentence)
        reps = [m for m in _PAIR_REPORTED.finditer(sentence) if _kept(m, clean, start)]
        ours = [m for m in _PAIR_REPRODUCED.finditer(sentence) if _kept(m, clean, start)]
        if len(reps) != 1 or len(ours) != 1:
            continue
        rep, our = parse_number(reps[0].group("num")), parse_number(ours[0].group("num"))
        if rep is None or our is None or reps[0].start() == ours[0].start() \
                or not _one_measure(sentence, reps[0], ours[0]):
            continue
        quote = sentence.strip()
        out += [Value("reported", rep, quote, "sentence pairing both"),
                Value("reproduced", our, quote, "sentence pairing both")]
    return out


_UNIT_AFTER = re.compile(r"\s*(?P<u>[A-Za-z]{2,15})\b")


def _one_measure(sentence: str, rep: re.Match[str], ours: re.Match[str]) -> bool:
    """The two numbers of a pairing sentence measure one thing: not a percent against a bare
    number, nor two different words after them ("the paper reports 12 layers; we measured 0.93
    accuracy")."""
    a, b = rep.group("num"), ours.group("num")
    if a.endswith("%") != b.endswith("%"):
        return False
    units = [m.group("u").lower().rstrip("s") if (m := _UNIT_AFTER.match(sentence, x.end("num")))
             and m.group("u").lower() not in _JOINERS else None for x in (rep, ours)]
    return None in units or units[0] == units[1]


#: Words that may follow a number without naming its unit ("0.2 and we measured 0.19").
_JOINERS = frozenset({"and", "but", "while", "whereas", "vs", "versus", "against", "with", "in",
                      "on", "at", "for", "from", "to", "of", "or", "than", "the", "we", "our",
                      "here", "there", "which", "this", "that", "after", "before", "when"})


def _kept(m: re.Match[str], clean: str, offset: int) -> bool:
    """The number of a side match is not an ignored one (a reference, an id, a setting)."""
    a, b = m.span("num")
    return clean[offset + a:offset + b] == m.string[a:b] if offset + b <= len(clean) else True


def choose_values(ex: Extraction, values: list[Value], page_text: str | None,
                  prose: str) -> None:
    """Each side's value from the first place (in `values`' order of places) that gives exactly
    one; a place giving several different values for a side is ambiguous and skipped."""
    for side in ("reported", "reproduced"):
        name = f"{side}_value"
        if getattr(ex, side) is not None:
            continue
        by_place: dict[str, list[Value]] = {}
        for value in values:
            if value.side == side:
                by_place.setdefault(value.place, []).append(value)
        ambiguous = []
        for place, found in by_place.items():
            distinct = {v.value for v in found}
            if len(distinct) == 1:
                setattr(ex, side, found[0].value)
                _prov(ex, name, "declared", found[0].quote, place, page_text)
                if name not in ex.provenance:  # the quote is not on the page: do not keep it
                    setattr(ex, side, None)
                    continue
                break
            ambiguous.append(f"{place} gives {len(distinct)} different values")
        if getattr(ex, side) is None:
            if ambiguous:
                ex.absent[name] = "; ".join(ambiguous) + f": {IN_PROSE}"
            else:
                ex.absent[name] = IN_PROSE if _number_in(strip_fences(prose)) else NO_NUMBER


# Numbers a reader skips: arXiv ids, dates, sample sizes and parameter settings (N=4000, L=3),
# O(...) expressions, references to sections/figures/tables/equations/theorems, version strings,
# commit hashes, and numbers inside links or words (x86, GPT-5).
_IGNORED = re.compile(
    r"\barxiv[:\s]*\d{4}\.\d{4,5}(?:v\d+)?|\b\d{4}\.\d{4,5}(?:v\d+)?\b|"
    r"\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?|"
    r"\b[A-Za-z]{1,2}\s*=\s*[\d,.]+(?:[eE][-+]?\d+)?|\bO\([^)\n]*\)|"
    r"(?:(?i:\b(?:(?:section|figure|table|equation|theorem|proposition|lemma|corollary|remark|"
    r"definition|assumption|appendix|algorithm|step|line|page|claim|row|case)s?|sec\.|§|fig\.|"
    r"tab\.|eq\.|eqn\.|thm\.|prop\.|app\.|alg\.|v|version|python|cuda|torch)\s*"
    r"\(?[A-Z]?\d+(?:\.\d+)*\)?(?:\s*(?:[-\u2013,]|and|or)\s*[A-Z]?\d+(?:\.\d+)*)*)|"
    r"\bv?\d+\.\d+\.\d+\b|\b[0-9a-f]{7,40}\b|\]\([^)\]\n]*\)|https?://\S+|"
    r"(?<![\w.-])[A-Za-z_][\w-]*\d[\w.-]*|"
    r"(?i:\b\d[\d,]*\s+(?:[a-z-]+\s+)?(?:replicates|samples|seeds|runs|trials|draws|"
    r"trajectories|items|examples|configurations|plans|cases|"
    r"datasets|models|prompts|questions|problems|episodes)\b))")


def drop_ignored(text: str) -> str:
    """`text` with the numbers a reader skips blanked out (same length, so quotes still map)."""
    return _IGNORED.sub(lambda m: " " * len(m.group(0)), text)


_SIGNED = r"[+]?" + NUMBER
_NUMBER_SIGNED = re.compile(_SIGNED)


def _number_in(text: str) -> tuple[float, str] | None:
    """The first number of `text` that is not an ignored one, with its verbatim text."""
    clean = drop_ignored(text)
    for m in _NUMBER_SIGNED.finditer(clean):
        value = parse_number(m.group(0).lstrip("+"))
        if value is not None:
            return value, text[m.start():m.end()]
    return None


_FENCE_OPEN = re.compile(r"(?m)^(`{3,}+|~{3,}+)")
_FENCE_CLOSE = re.compile(r"(?m)^(`{3,}+|~{3,}+)[ \t]*$")


def fenced(text: str, info: str = "") -> list[tuple[int, int, int, int]]:
    """(start, body start, body end, end) of each fenced block of `text` whose info string opens
    with `info`: a fence line, then up to the first later line that is the same fence alone.

    Hand-written, one pass: the pattern `^(```+).*?^\1$` looked from every unclosed fence to the
    end of the text, so a report of 40,000 lines of "```a" took minutes. Each fence's closing
    lines are listed once and each opening takes the first one after it (openings come in order,
    so the place in each list only moves on)."""
    closings: dict[str, list[re.Match[str]]] = {}
    for m in _FENCE_CLOSE.finditer(text):
        closings.setdefault(m.group(1), []).append(m)
    next_closing: dict[str, int] = {}
    out: list[tuple[int, int, int, int]] = []
    end = 0
    for m in _FENCE_OPEN.finditer(text):
        line_end = text.find("\n", m.end())
        if m.start() < end or line_end < 0 or not text.startswith(info, m.end()):
            continue
        fence = m.group(1)
        candidates = closings.get(fence, [])
        i = next_closing.get(fence, 0)
        while i < len(candidates) and candidates[i].start() <= line_end:
            i += 1
        next_closing[fence] = i
        if i < len(candidates):
            out.append((m.start(), line_end + 1, candidates[i].start(), candidates[i].end()))
            end = candidates[i].end()
    return out


def strip_fences(text: str) -> str:
    kept, at = [], 0
    for start, _, _, end in fenced(text):
        kept.append(text[at:start])
        at = end
    return "".join(kept) + text[at:]


def output_fences(text: str) -> list[str]:
    """The bodies of the `output` fences of a run cell."""
    return [text[body:body_end] for _, body, body_end, _ in fenced(text, "output")]


#: The sentence (between newlines and full stops) of the first toy phrase: it starts only where a
#: sentence does and reaches the phrase lazily, so a long line without one is read once (a
#: leading greedy `[^\n.]*` retried from every character took minutes on 200 KB).
_TOY_SCALE = re.compile(r"(?<![^\n.])[^\n.]*?\btoy(?:[\s-](?:scale|run|setting|scope|task|model|version|"
                        r"experiment|verified|synthetic|audits?|support)|_train)\b[^\n.]*",
                        re.IGNORECASE)


def toy_scale(ex: Extraction, text: str) -> None:
    """The toy flag from a phrase that says the evidence is at toy scale ("within this toy
    scope", "a toy run"), when no label said so."""
    if ex.toy:
        return
    toy = _TOY_SCALE.search(text)
    if toy:
        ex.toy, ex.toy_quote = True, toy.group(0).strip()
