"""Claims stated by headings (issue 40): verdict headings over their children, numbered and
`Claim N` sections that declare their verdicts in the title or a label line, a marked heading
that is one claim, and `**Claim N: ...**` paragraphs."""

from __future__ import annotations

import functools
import re

from judging.intake.extract import (
    IN_PROSE,
    Extraction,
    negated_at,
    plain_text,
    text_labels,
)
from judging.intake.freeform.numbers import title_pair
from judging.intake.freeform.tree import (
    Heading,
)
from judging.intake.freeform.vocabulary import (
    MARKS,
    SENTENCE_END,
    TAIL_LABEL_WORDS,
    cell_verdict,
    declared_claim,
    set_verdict,
)
from judging.intake.logbook import FoundClaim, Page
from judging.models import MAX_NOTE_CHARS, FieldProvenance

#: A heading of at most this many words may be a verdict by its words ("What doesn't match");
#: a longer one is a statement that happens to hold a verdict word.
HEADING_LABEL_WORDS = 5


#: A heading that groups claims under one verdict, or claims as such (numbered children).
_GROUP_WORDS = re.compile(r"(?i)\b(?:claims?|matches|match|agreements?|confirmed|reproduced|"
                          r"replicated|validated|divergences?|discrepanc(?:y|ies)|mismatch(?:es)?|"
                          r"gaps?|findings|doesn't|didn't|does\s+not|did\s+not|replicates?|"
                          r"reproduces?|holds?|fails?|failed)\b")


_NUMBERED_TITLE = re.compile(r"(?i)^\s*(?:(?:claim\s+|(?:主张|主張)\s*)(?P<c>\d{1,3})\b[:：.\s—–-]*|"
                             r"(?P<d>[A-Z]?\d{1,3})[.)]\s+)")


_BOLD_LEAD = re.compile(r"^\s*\*\*(?P<lead>[^*\n]{3,200}?)\*\*")


def _heading_verdict(title: str) -> str | None:
    """A heading's verdict: a mark, or a short heading naming one ("What doesn't match")."""
    if MARKS.search(title):
        return cell_verdict(MARKS.search(title).group(0)) if \
            len({cell_verdict(m.group(0)) for m in MARKS.finditer(title)}) == 1 \
            and not _negated_mark(title) else None
    words = re.sub(r"^\s*\d+(?:\.\d+)*[.)]?\s*", "", plain_text(title))
    if len(words.split()) <= HEADING_LABEL_WORDS and not _SCOPE.search(words):
        return cell_verdict(words)
    return None


#: "What we replicated", "What I reproduced": what was done (the scope), not a verdict on it.
_SCOPE = re.compile(r"(?i)\b(?:we|I)\s+(?:have\s+)?(?:replicated|reproduced|verified|ran|did)\b")


#: A task checklist item: a mark over a checklist says "done", not "reproduced".
CHECKLIST = re.compile(r"(?m)^\s*[-*+]\s+\[[ xX]\]\s")


#: Reports that plan or track work state no result (`replication_plan.md`, `TODO.md`).
PLAN_FILE = re.compile(r"(?i)(?:^|[/_-])(?:plan|todo|roadmap|checklist)s?\.md$")


@functools.lru_cache(maxsize=4096)
def strip_title(title: str, *, tail: bool = True) -> str:
    """A heading's statement: its marks, its number and (`tail`) a verdict label after it
    dropped."""
    title = MARKS.sub("", plain_text(title)).replace("\ufe0f", "")
    title = _EMPTY_BRACKETS.sub("", title).strip(" :—–-")  # "[✅]" without its mark
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
                                         or MARKS.search(heading.title))
    numbered = [h for h in heading.children if _NUMBERED_TITLE.match(MARKS.sub("", h.title))]
    if group or (_GROUP_WORDS.search(heading.title) and numbered):
        kids = heading.children if group else numbered
        for r, child in enumerate(kids, start=1):
            own = claim_verdict(child)
            claim = _heading_claim(page, child, r, own or (
                None if verdict is None else (verdict, heading.raw, "verdict heading")))
            if claim is not None:
                out.append(claim)
        if not kids and verdict is not None:
            out += item_claims(page, heading, verdict)
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
    if verdict is not None and MARKS.search(heading.title):
        claim = _heading_claim(page, heading, 1, (verdict, heading.raw, "verdict heading"))
        return [claim] if claim is not None else []
    own = claim_verdict(heading)  # a numbered title's words are its statement, not a label
    if own is not None and (_title_label(heading.title) or
                            _NUMBERED_TITLE.match(MARKS.sub("", heading.title))):
        # "## 1. The loss falls — reproduced", "## Claim 2: ..." over "**Status:** ..."
        claim = _heading_claim(page, heading, 1, own)
        return [claim] if claim is not None else []
    return out


def _named_claim(heading: Heading) -> bool:
    """A heading named as a claim ("### Claim 3: ..."), not only numbered ("### 4. Method")."""
    m = _NUMBERED_TITLE.match(MARKS.sub("", heading.title))
    return bool(m and m.group("c"))


#: A claim heading's label after its statement ("1. The loss falls — reproduced", "The large
#: model wins: not reproduced"): a short verdict after a dash, a colon or a bar.
_TAIL_LABEL = re.compile(r"^(?P<s>.*?\S)\s*(?:[—–|:：]|\s-\s)\s*(?P<l>[^—–|:：]{2,40}?)\s*[.!]?$")
#: ... or in brackets closing the title ("The loss falls (reproduced)", "准确率更高（复现成功）").
_TAIL_BRACKETS = re.compile(r"^(?P<s>.*?\S)\s*[(（\[](?P<l>[^()（）\[\]]{2,40})[)）\]]\s*[.!]?$")
_EMPTY_BRACKETS = re.compile(r"[(（\[]\s*[)）\]]")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _words_in(text: str) -> int:
    """The words of a statement; Chinese, written without spaces, as one word per two characters."""
    return max(len(text.split()), len(_CJK.findall(text)) // 2)


def _title_label(title: str) -> tuple[str, str] | None:
    """(statement, label) of a claim heading whose title ends with a short verdict label; the
    statement has two words or more (a "Method: consistent hashing" heading is no claim)."""
    title = strip_title(title, tail=False)
    for pattern in (_TAIL_LABEL, _TAIL_BRACKETS):
        m = pattern.match(title)
        if m is not None and len(m.group("l").split()) <= TAIL_LABEL_WORDS \
                and _words_in(m.group("s")) >= 2 and cell_verdict(m.group("l")) is not None:
            return m.group("s"), m.group("l")
    return None


_LINE_KEY = r"(?:verdict|status|result|outcome|assessment|结论|結論|判定|状态|狀態|结果|結果)"


#: A label line naming its verdict by a mark only ("**Status:** ✅").
_MARK_LINE = re.compile(r"(?im)^[\s>*_-]*(?:\*\*|__)?" + _LINE_KEY + r"(?:\*\*|__)?\s*[:：]\s*"
                        r"(?:\*\*|__)?\s*(?P<m>" + MARKS.pattern + r")")


#: A label line whose whole label is a short verdict in the mapping table's words, codes or
#: phrases ("Status: OUT_OF_TOL", "结论：复现成功"), which the logbook's label lines do not read.
_SHORT_LABEL_LINE = re.compile(r"(?im)^[\s>*_-]*(?:\*\*|__)?" + _LINE_KEY + r"(?:\*\*|__)?\s*"
                               r"[:：]\s*(?:\*\*|__)?\s*(?P<l>[^\n]{1,40}?)\s*(?:\*\*|__)?[.。]?\s*$")


def _negated_mark(title: str) -> bool:
    """A mark of the title negated or doubted beside it ("(not ✅)", "✅?")."""
    return any(negated_at(title, m.start(), m.end()) for m in MARKS.finditer(title))


def claim_verdict(heading: Heading) -> tuple[str, str, str] | None:
    """(verdict, quote, place) a claim's heading declares: one kind of mark or a label after
    its statement in its title, else the label lines of its own section ("**Status:**
    Reproduced", "Verdict: ❌") when they agree. A short title's words are its statement, not
    a verdict ("Claim 3: Scaling holds")."""
    marks = {cell_verdict(m.group(0)) for m in MARKS.finditer(heading.title)}
    if marks:
        return (marks.pop(), heading.raw, "verdict heading") if len(marks) == 1 \
            and None not in marks and not _negated_mark(heading.title) else None
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
    statement = strip_title(heading.title)
    if re.search(r"[^\W\d_]", statement) or not _named_claim(heading):
        return statement, heading.raw
    for block in heading.blocks:
        text = plain_text(block.text).replace("\n", " ").strip()
        if block.kind == "paragraph" and text and not text_labels(block.text):
            return SENTENCE_END.split(text, maxsplit=1)[0].strip(), block.raw
    return "", heading.raw


def _heading_claim(page: Page, heading: Heading, row: int,
                   declared: tuple[str, str, str] | None) -> FoundClaim | None:
    statement, line = _section_statement(heading)
    if not re.search(r"[^\W\d_]", statement):
        return None
    if any(CHECKLIST.search(b.text) for b in heading.blocks):
        return None  # a checklist's section: its marks say "done"
    ex = Extraction()
    if declared is not None:
        verdict, quote, place = declared
        set_verdict(ex, verdict, quote, quote, place)
    else:
        ex.absent["verdict"] = "the heading and its section declare no verdict"
    m = _NUMBERED_TITLE.match(MARKS.sub("", plain_text(heading.title)))
    m = m if m is not None and m.group("c") else None
    body = "\n\n".join(b.text for b in heading.blocks)
    claim = declared_claim(page, row, f"{heading.raw}\n{body}", statement, ex, place="section",
                           quote=line, quoted_at="heading" if line == heading.raw else "paragraph",
                           values=IN_PROSE,
                           number=int(m.group("c")) if m else None,
                           number_quote=heading.raw if m else None)
    pair = title_pair(strip_title(heading.title, tail=False))
    if pair is not None:  # "### Claim 2: ... (paper 0.82, ours 0.79)": the title's own pair
        for side, value in zip(("reported", "reproduced"), pair, strict=True):
            setattr(ex, side, value)
            ex.absent.pop(f"{side}_value", None)
            # a title pairing both sides is read as a sentence pairing both is (the kind of
            # place the benchmarks weigh), with the stricter rule of `title_pair`
            ex.provenance[f"{side}_value"] = FieldProvenance(
                how="declared", quote=heading.raw[:MAX_NOTE_CHARS], place="sentence pairing both")
    return claim


def item_claims(page: Page, heading: Heading, verdict: str) -> list[FoundClaim]:
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
        set_verdict(ex, verdict, heading.raw, heading.raw, "verdict heading")
        out.append(declared_claim(page, r, line, statement, ex, place="list item", quote=line.strip(),
                             quoted_at="list item", values=IN_PROSE))
    return out


BOLD_CLAIM = re.compile(r"^\s*\*\*claim\s+(?P<n>\d{1,3})\s*[:.\u2014\u2013-]\s*(?P<s>[^*\n]{8,}?)"
                         r"\**\s*$", re.IGNORECASE | re.MULTILINE)


#: The opening words of a paragraph that are its verdict ("Validated. Our results show ...").
_OPENING_LABEL = re.compile(r"^\s*(?:\*\*)?(?P<l>[^\W\d_][^.:!\n*]{0,40}?)(?:\*\*)?[.:!]")


def bold_claims(page: Page, heading: Heading) -> list[FoundClaim]:
    """`**Claim N: statement**` paragraphs, each with the verdict the next paragraph opens with
    ("Validated. ...") when it opens with one."""
    out = []
    blocks = heading.blocks
    for k, block in enumerate(blocks):
        m = BOLD_CLAIM.match(block.text) if block.kind == "paragraph" else None
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
            set_verdict(ex, verdict, opening.group("l"), after.split("\n", 1)[0].strip(),
                         "bold label")
        else:
            ex.absent["verdict"] = "the paragraph after the claim opens with no verdict"
        quote = block.text.splitlines()[0].strip()
        out.append(declared_claim(page, 1, f"{block.text}\n\n{after}", plain_text(m.group("s")).strip(),
                             ex, place="section", quote=quote, quoted_at="bold claim line",
                             values=IN_PROSE, number=int(m.group("n")), number_quote=quote))
    return out
