"""The deterministic extractor: a claim's verdict, reported and reproduced values from its prose,
each with the verbatim quote it came from (checked to be a substring of the page) and how it was
found (`declared`: the participant's own label field, a table cell, a cell title, a "Verdict:" or
"Assessment:" line; `pattern`: a text pattern). A field not found is absent with a reason.

The participant's own label is kept verbatim (`source_verdict`) and mapped by `VERDICT_TABLE`
(first match wins, read top to bottom):

| label (case-insensitive)                                             | maps to      |
|----------------------------------------------------------------------|--------------|
| NOT (INDEPENDENTLY) VERIFIED/REPRODUCED/REPLICATED, unverified,       | inconclusive |
| not attempted, not_reproduced, partial(ly), blocked, mixed,          |              |
| inconclusive, not scored, undetermined                               |              |
| toy, TOY-VERIFIED, proxy, finite, conditional, special case          | toy (scale)  |
| FALSIFIED (any qualifier), FAIL, REFUTED, contradicted, not supported| falsified    |
| VERIFIED, REPRODUCED, reproduces, SUPPORTED, CONFIRMED, Aligned,     | verified     |
| consistent, [PASS], PASS, holds                                      |              |

Within one label the earliest direction word wins ("asymptotically VERIFIED, practical guarantee
FALSIFIED at low noise" is verified); a label naming both verified and falsified, or two labels
on one page that disagree, raise a `self_contradiction` flag with both quotes. `toy` is a scale,
not a direction: the direction is taken from the label when it gives one (TOY-VERIFIED ->
verified), else inconclusive; the scale note then reads "toy: <quote>".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from judging.models import FieldProvenance, Verdict

_INCONCLUSIVE = re.compile(
    r"\bnot[\s_-]+(?:independently[\s_-]+)?(?:verified|reproduced|replicated|confirmed)\b|"
    r"\bunverified\b|\bnot[\s_-]+attempted\b|\bpartial(?:ly)?\b|\bblocked\b|\bmixed\b|"
    r"\binconclusive\b|\bnot[\s_-]+scored\b|\bundetermined\b|\bnot[\s_-]+assessed\b",
    re.IGNORECASE)
_TOY = re.compile(r"\btoy\b|\bproxy\b|\bfinite[\s_-]|\bconditional\b|\bspecial[\s_-]case\b",
                  re.IGNORECASE)
_FALSIFIED = re.compile(r"\bfalsified\b|\bfail(?:ed|s)?\b|\brefuted\b|\bcontradicted\b|"
                        r"\bnot[\s_-]+supported\b|\bdoes[\s_-]+not[\s_-]+(?:hold|reproduce)\b",
                        re.IGNORECASE)
_VERIFIED = re.compile(r"\bverified\b|\breproduced\b|\breproduces\b|\bsupported\b|"
                       r"\bconfirmed\b|\baligned\b|\bconsistent\b|\[pass\]|\bpass(?:ed|es)?\b|"
                       r"\bholds\b|\breplicated\b", re.IGNORECASE)

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


def map_verdict(label: str) -> MappedVerdict:
    """The participant's label mapped by `VERDICT_TABLE`."""
    toy = bool(_TOY.search(label))
    if _INCONCLUSIVE.search(label):
        return MappedVerdict(Verdict.inconclusive, toy, False)
    fals, ver = _FALSIFIED.search(label), _VERIFIED.search(label)
    split = bool(fals and ver)
    if fals and (not ver or fals.start() < ver.start()):
        return MappedVerdict(Verdict.falsified, toy, split)
    if ver:
        return MappedVerdict(Verdict.verified, toy, split)
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
_NUMBER = re.compile(NUMBER)


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


def first_number(text: str) -> tuple[float, str] | None:
    for match in _NUMBER.finditer(text):
        value = parse_number(match.group(0))
        if value is not None:
            return value, match.group(0)
    return None


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
    toy_quote: str | None = None
    scale_note: str | None = None
    """A scale note other than toy (the LLM extractor's, with its quote)."""


_LABEL_LINE = re.compile(
    r"(?im)^[ \t>*_#-]*(?:\*\*|__)?(?:final\s+)?(?:verdict|assessment|status|outcome|result)"
    r"(?:\s*\([^)\n]*\))?\s*(?:\*\*|__)?\s*[:\u2014-]\s*(?:\*\*|__)?(?P<label>[^\n]{1,200})")
_BOLD_LEAD = re.compile(r"(?m)^[ \t>]*(?:\*\*|__)(?P<label>[^*_\n]{2,200}?)(?:\*\*|__)")
_CELL_TITLE_LABEL = re.compile(r"^(?:verdict|assessment|status)\s*[:\u2014-]\s*(?P<label>.+)$",
                               re.IGNORECASE)
_TOY_SCALE = re.compile(r"[^\n.]*\btoy(?:[\s-](?:scale|run|setting|scope|task|model|version|"
                        r"experiment|verified|synthetic)|_train)\b[^\n.]*", re.IGNORECASE)
_REPORTED = re.compile(
    r"(?:paper(?:'s)?|authors?|stated|reports?|reported|table\s+\d+|target|"
    r"predicted|theory|theoretical|expected)\b[^.\n]{0,80}?(?P<num>" + NUMBER + ")",
    re.IGNORECASE)
_REPRODUCED = re.compile(
    r"(?:we\s+(?:measure|obtain|get|find|observe)|measured|reproduced|observed|our|obtained|"
    r"gives|discrepancy|residual|error|fitted)\b[^.\n]{0,80}?(?P<num>" + NUMBER + ")",
    re.IGNORECASE)
_BOLD_NUMBER = re.compile(r"\*\*(?P<num>" + NUMBER + r")\*\*")


def _clean_label(label: str) -> str:
    label = label.strip().strip("*_` ").strip()
    return re.sub(r"\s+", " ", label)


def verdict_candidates(prose: str, cell_titles: list[str]) -> list[tuple[str, str, str]]:
    """(label, quote, how) in page order: cell titles, label lines, bold paragraph leads."""
    found: list[tuple[int, str, str, str]] = []
    for title in cell_titles:
        m = _CELL_TITLE_LABEL.match(title.strip())
        if m and is_verdict_label(m.group("label")):
            pos = prose.find(title)
            found.append((pos if pos >= 0 else 0, _clean_label(m.group("label")), title,
                          "declared"))
    for m in _LABEL_LINE.finditer(prose):
        label = _clean_label(m.group("label"))
        if is_verdict_label(label):
            found.append((m.start(), label, m.group(0).strip(), "declared"))
    for m in _BOLD_LEAD.finditer(prose):
        label = _clean_label(m.group("label"))
        if is_verdict_label(label) and len(label) <= 120 and not re.search(r"\?$", label) \
                and map_verdict(label).verdict is not None and _looks_like_label(label):
            found.append((m.start(), label, m.group(0).strip(), "pattern"))
    found.sort(key=lambda item: item[0])
    out: list[tuple[str, str, str]] = []
    for _, label, quote, how in found:
        if not any(label == o[0] for o in out):
            out.append((label, quote, how))
    return out


def _looks_like_label(label: str) -> bool:
    """A bold lead is a verdict label when it is short or starts with an upper-case verdict word
    ("**Reproduced.**", "**PARTIAL / BLOCKED.**", "**VERIFIED for ...**")."""
    words = label.split()
    return len(words) <= 6 or bool(re.match(r"[A-Z][A-Z_/ -]{3,}\b", label))


def extract(prose: str, *, page_text: str, cell_titles: list[str],
            row_label: str | None = None, row_reported: str | None = None,
            row_reproduced: str | None = None) -> Extraction:
    """Verdict and values of one claim. `prose` is the claim's text (a page's markdown, or one
    section); a claims-table row passes its cells (declared)."""
    ex = Extraction()

    def prov(name: str, how: str, quote: str) -> None:
        if quote and quote in page_text:
            ex.provenance[name] = FieldProvenance(how=how, quote=quote[:4000])

    if row_label is not None:
        candidates = [(_clean_label(row_label), row_label.strip(), "declared")]
    else:
        candidates = verdict_candidates(prose, cell_titles)
    if candidates:
        # the final explicit label on the page wins over earlier text
        label, quote, how = candidates[-1]
        mapped = map_verdict(label)
        ex.source_verdict, ex.verdict, ex.toy = label, mapped.verdict, mapped.toy
        if mapped.toy and mapped.verdict is None:
            ex.verdict = Verdict.inconclusive
        prov("verdict", how, quote)
        if mapped.toy:
            ex.toy_quote = quote
        directions = {map_verdict(c[0]).verdict for c in candidates} - {None,
                                                                         Verdict.inconclusive}
        if mapped.split:
            ex.contradiction = (quote, quote)
        elif len(directions) > 1:
            first = next(c for c in candidates if map_verdict(c[0]).verdict
                         not in (None, Verdict.inconclusive, mapped.verdict))
            ex.contradiction = (first[1], quote)
    else:
        ex.absent["verdict"] = "no verdict label (Verdict:, Assessment:, a bold verdict word, " \
                               "a claims-table cell) was found on the page"
    if not ex.toy:
        toy = _TOY_SCALE.search(prose)
        if toy:
            ex.toy, ex.toy_quote = True, toy.group(0).strip()
    _values(ex, prose, row_reported, row_reproduced, prov)
    return ex


def _values(ex: Extraction, prose: str, row_reported: str | None, row_reproduced: str | None,
            prov) -> None:
    for name, cell in (("reported_value", row_reported), ("reproduced_value", row_reproduced)):
        if cell is not None:
            hit = first_number(cell)
            if hit is not None:
                setattr(ex, name.split("_")[0], hit[0])
                prov(name, "declared", cell.strip())
    text = _strip_fences(prose)
    if ex.reported is None and row_reported is None:
        m = _REPORTED.search(text)
        if m and (value := parse_number(m.group("num"))) is not None:
            ex.reported = value
            prov("reported_value", "pattern", m.group(0))
    if ex.reproduced is None and row_reproduced is None:
        m = _BOLD_NUMBER.search(text) or _REPRODUCED.search(text)
        if m and (value := parse_number(m.group("num"))) is not None:
            ex.reproduced = value
            prov("reproduced_value", "pattern", m.group(0))
    if ex.reported is None:
        ex.absent["reported_value"] = "no reported value found in the prose"
    if ex.reproduced is None:
        ex.absent["reproduced_value"] = "no reproduced value found in the prose"


def _strip_fences(text: str) -> str:
    return re.sub(r"(?ms)^(`{3,}|~{3,}).*?^\1[ \t]*$", "", text)
