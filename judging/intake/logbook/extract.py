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
#: A verifier's printout line: `[PASS] ...`, `[FAIL] ...`, `PASS: ...` (run output only).
_PRINTOUT = re.compile(r"(?m)^[ \t]*(?P<label>\[(?:PASS|FAIL|OK)\]|(?:PASS|FAIL|VERIFIED|FALSIFIED)"
                       r"(?=[:\s]))[^\n]{0,200}")
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


def printout_candidates(run_output: str) -> list[tuple[str, str, str]]:
    """(label, quote, how) of a verifier's printout lines (`[PASS] ...`), in order."""
    return [(m.group(0).strip(), m.group(0).strip(), "pattern")
            for m in _PRINTOUT.finditer(run_output)
            if map_verdict(m.group("label")).verdict is not None]


def _looks_like_label(label: str) -> bool:
    """A bold lead is a verdict label when it is short or starts with an upper-case verdict word
    ("**Reproduced.**", "**PARTIAL / BLOCKED.**", "**VERIFIED for ...**")."""
    words = label.split()
    return len(words) <= 6 or bool(re.match(r"[A-Z][A-Z_/ -]{3,}\b", label))


def extract(prose: str, *, page_text: str, cell_titles: list[str],
            row_label: str | None = None, row_reported: str | None = None,
            row_reproduced: str | None = None, statement_text: str | None = None,
            run_output: str = "") -> Extraction:
    """Verdict and values of one claim. `prose` is the claim's text (a page's markdown, or one
    section); a claims-table row passes its cells (declared). `run_output` (the run cells'
    bodies) gives values, and a verdict only when the prose states none: a verifier's printout
    must not overrule the participant's own final label (they are compared for contradictions)."""
    ex = Extraction()

    def prov(name: str, how: str, quote: str) -> None:
        if quote and quote in page_text:
            ex.provenance[name] = FieldProvenance(how=how, quote=quote[:4000])

    if row_label is not None:
        candidates = [(_clean_label(row_label), row_label.strip(), "declared")]
    else:
        candidates = verdict_candidates(prose, cell_titles) or \
            verdict_candidates(run_output, []) or printout_candidates(run_output)
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
        toy = _TOY_SCALE.search(prose + run_output)
        if toy:
            ex.toy, ex.toy_quote = True, toy.group(0).strip()
    _values(ex, prose + run_output, row_reported, row_reproduced, prov, statement_text)
    return ex


def _values(ex: Extraction, prose: str, row_reported: str | None, row_reproduced: str | None,
            prov, statement_text: str | None = None) -> None:
    for name, cell in (("reported_value", row_reported), ("reproduced_value", row_reproduced)):
        if cell is not None:
            hit = first_number(_drop_ignored(cell))
            if hit is not None:
                setattr(ex, name.split("_")[0], hit[0])
                prov(name, "declared", cell.strip())
    in_row = row_reported is not None or row_reproduced is not None
    if not in_row:
        _run_output_values(ex, prose, prov)
    text = strip_fences(prose)
    if ex.reported is None and not in_row:
        hit = statement_number(statement_text) if statement_text else None
        if hit is not None:
            ex.reported = hit[0]
            prov("reported_value", "pattern", hit[1])
    if ex.reproduced is None and not in_row:
        hit = result_number(prose)
        if hit is not None:
            ex.reproduced = hit[0]
            prov("reproduced_value", "pattern", hit[1])
    if ex.reported is None and not in_row:
        hit = _pattern_number(_REPORTED, text)
        if hit is not None:
            ex.reported = hit[0]
            prov("reported_value", "pattern", hit[1])
    if ex.reproduced is None and not in_row:
        hit = _pattern_number(_REPRODUCED, text)
        if hit is not None:
            ex.reproduced = hit[0]
            prov("reproduced_value", "pattern", hit[1])
    if ex.reported is None:
        ex.absent["reported_value"] = "no reported value found: no claims-table cell, no " \
            "paper/reported key in run output, no number in the claim statement, no " \
            "'paper reports X' pattern"
    if ex.reproduced is None:
        ex.absent["reproduced_value"] = "no reproduced value found: no claims-table cell, no " \
            "measured/observed key in run output, no bold, equation or code number in a " \
            "Result/Verdict/Assessment section, no 'we measure Y' pattern"


# Numbers a reader skips: arXiv ids, dates, sample sizes and parameter settings (N=4000, L=3),
# O(...) expressions, references to sections/figures/tables/equations/theorems, version strings,
# commit hashes, and numbers inside links or words (x86, GPT-5).
_IGNORED = re.compile(
    r"\barxiv[:\s]*\d{4}\.\d{4,5}(?:v\d+)?|\b\d{4}\.\d{4,5}(?:v\d+)?\b|"
    r"\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?|"
    r"\b[A-Za-z]{1,2}\s*=\s*[\d,.]+(?:[eE][-+]?\d+)?|\bO\([^)\n]*\)|"
    r"(?:(?i:\b(?:section|sec\.|§|figure|fig\.|table|tab\.|equation|eq\.|eqn\.|theorem|thm\.|"
    r"proposition|prop\.|lemma|corollary|remark|definition|assumption|appendix|app\.|"
    r"algorithm|alg\.|step|line|page|claim|row|case|v|version|python|cuda|torch)\s*"
    r"\(?[A-Z]?\d+(?:\.\d+)*\)?(?:\s*(?:[-\u2013,]|and|or)\s*[A-Z]?\d+(?:\.\d+)*)*)|"
    r"\bv?\d+\.\d+\.\d+\b|\b[0-9a-f]{7,40}\b|\]\([^)\n]*\)|https?://\S+|"
    r"(?<![\d.])[A-Za-z_][\w-]*\d[\w.-]*|"
    r"(?i:\b\d[\d,]*\s+(?:[a-z-]+\s+)?(?:replicates|samples|seeds|runs|trials|draws|"
    r"trajectories|items|examples|configurations|plans|cases|"
    r"datasets|models|prompts|questions|problems|episodes)\b))")


def _drop_ignored(text: str) -> str:
    """`text` with the numbers a reader skips blanked out (same length, so quotes still map)."""
    return _IGNORED.sub(lambda m: " " * len(m.group(0)), text)


_SIGNED = r"[+]?" + NUMBER
_NUMBER_SIGNED = re.compile(_SIGNED)


def _number_in(text: str) -> tuple[float, str] | None:
    """The first number of `text` that is not an ignored one, with its verbatim text."""
    clean = _drop_ignored(text)
    for m in _NUMBER_SIGNED.finditer(clean):
        value = parse_number(m.group(0).lstrip("+"))
        if value is not None:
            return value, text[m.start():m.end()]
    return None


def _pattern_number(pattern: re.Pattern[str], text: str) -> tuple[float, str] | None:
    clean = _drop_ignored(text)
    for m in pattern.finditer(text):
        start, end = m.span("num")
        if clean[start:end] != text[start:end]:
            continue  # the number is part of an arXiv id, a date, a reference, a setting ...
        value = parse_number(m.group("num"))
        if value is not None:
            return value, m.group(0)
    return None


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def statement_number(statement_text: str) -> tuple[float, str] | None:
    """The reported value as the claim statement gives it: its first number that is not a
    reference, a date, a sample size or a parameter setting. Code spans holding formulas
    (letters) are skipped: their numbers are arguments, not values."""
    # a parenthesized aside ("(the anchor cites this as Theorem 4.1; v2 numbers it 4.5)") is
    # not the claim; a parenthesis of bare values ("(`0.623` versus `0.851`)") is kept
    statement_text = re.sub(r"\((?=[^()]*[A-Za-z]{3})(?![^()]*`)[^()\n]*\)",
                            lambda m: " " * len(m.group(0)), statement_text)
    text = _CODE_SPAN.sub(lambda m: m.group(0) if not re.search(r"[A-Za-z\u0370-\u03ff]",
                                                                 m.group(1))
                          else " " * len(m.group(0)), statement_text)
    hit = _number_in(text)
    if hit is None:
        return None
    return hit[0], hit[1]


_RESULT_HEADING = re.compile(
    r"(?im)^(?P<h>#{2,4})[ \t]+(?:final[ \t]+)?(?:results?|verdict|assessment|outcome|"
    r"findings?|conclusion|summary)\b[^\n]*$")
_RESULT_LEAD = re.compile(
    r"(?im)^[ \t>]*(?:\*\*|__)(?:final[ \t]+)?(?:verdict|assessment|result|outcome)\b")
_BOLD_VALUE = re.compile(r"\*\*(?P<num>[+]?" + NUMBER + r")(?:\s*(?:pp|x|×|points?))?\*\*")
_EQUATION = re.compile(r"=\s*(?P<num>[+]?" + NUMBER + r")(?![\w.(/*^])")


def result_sections(prose: str) -> list[str]:
    """The page's Result / Results / Verdict / Assessment sections, in page order: a heading's
    section up to the next heading of its level or higher; a bold "**Verdict: ...**" or
    "**Assessment: ...**" lead up to the next heading."""
    out = []
    for m in _RESULT_HEADING.finditer(prose):
        level = len(m.group("h"))
        nxt = re.compile(r"(?m)^#{1," + str(level) + r"}[ \t]").search(prose, m.end())
        out.append(prose[m.start():nxt.start() if nxt else len(prose)])
    for m in _RESULT_LEAD.finditer(prose):
        nxt = re.compile(r"(?m)^#{1,4}[ \t]").search(prose, m.end())
        out.append(prose[m.start():nxt.start() if nxt else len(prose)])
    return out


def result_number(prose: str) -> tuple[float, str] | None:
    """The reproduced value as a Result / Verdict / Assessment section states it: its first bold
    number (`**17.37%**`), else the result of its first computation (`... = 26.79%`, fences
    included), else its first number in a code span (`0.01197`)."""
    for section in result_sections(prose):
        flat = strip_fences(section)
        for pattern, text in ((_BOLD_VALUE, flat), (_EQUATION, _OUTPUT_FENCE.sub("", section))):
            clean = _drop_ignored(text)
            for m in pattern.finditer(text):
                start, end = m.span("num")
                if clean[start:end] != text[start:end]:
                    continue  # a setting (k=1, N=4000), a reference, an id ...
                line = text[text.rfind("\n", 0, m.start()) + 1:m.end()]
                if pattern is _BOLD_VALUE and line.lstrip().startswith("|"):
                    continue  # bold in a table marks a cell, not the section's result
                hit = _number_in(m.group("num"))
                if hit is not None and not re.search(r"[<>≤≥]\s*$", line[:-len(m.group(0))]):
                    return hit[0], line.strip() if len(line) < 300 else m.group(0)
        for m in _CODE_SPAN.finditer(flat):
            body = m.group(1).strip()
            if re.fullmatch(_SIGNED, body):
                hit = _number_in(body)
                if hit is not None:
                    return hit[0], m.group(0)
    return None


_OUTPUT_FENCE = re.compile(r"(?ms)^(`{3,}|~{3,})output[^\n]*\n(?P<body>.*?)^\1[ \t]*$")
_KV_LINE = re.compile(r"(?m)^[ \t]*(?P<key>[A-Za-z][\w.\- ]{0,80}?)[ \t]*[=:][ \t]*"
                      r"(?P<num>" + NUMBER + r")[ \t]*$")
_KEY_REPORTED = re.compile(r"(?i)(?:^|[_\W])(?:paper|reported|claimed|expected|target|"
                           r"published)(?:[_\W]|$)")
_KEY_REPRODUCED = re.compile(r"(?i)(?:^|[_\W])(?:observed|measured|reproduced|ours|obtained)"
                             r"(?:[_\W]|$)")


def _run_output_values(ex: Extraction, prose: str, prov) -> None:
    """`key=value` / `key: value` lines of run output fences: a key naming the paper
    (paper/reported/claimed/expected/target/published) gives the reported value, one naming the
    measurement (observed/measured/reproduced/ours/obtained) the reproduced value. When the
    prose states the same number rounded, the prose's figure is taken (what the page says)."""
    for fence in _OUTPUT_FENCE.finditer(prose):
        for m in _KV_LINE.finditer(fence.group("body")):
            key = m.group("key")
            rep, ours = _KEY_REPORTED.search(key), _KEY_REPRODUCED.search(key)
            if bool(rep) == bool(ours):
                continue
            name = "reported" if rep else "reproduced"
            if getattr(ex, name) is not None:
                continue
            value = parse_number(m.group("num"))
            if value is None:
                continue
            shown = _rounded_in_prose(value, strip_fences(prose))
            if shown is not None:
                setattr(ex, name, shown[0])
                prov(f"{name}_value", "pattern", shown[1])
            else:
                setattr(ex, name, value)
                prov(f"{name}_value", "pattern", m.group(0).strip())


def _rounded_in_prose(value: float, text: str) -> tuple[float, str] | None:
    for m in _NUMBER.finditer(_drop_ignored(text)):
        raw = text[m.start():m.end()]
        shown = parse_number(raw)
        if shown is None or shown == 0 or "." not in raw:
            continue
        digits = len(raw.rstrip("%").split(".")[1].split("e")[0].split("E")[0])
        if digits >= 2 and round(value, digits) == shown:
            return shown, raw
    return None


def strip_fences(text: str) -> str:
    return re.sub(r"(?ms)^(`{3,}|~{3,}).*?^\1[ \t]*$", "", text)
