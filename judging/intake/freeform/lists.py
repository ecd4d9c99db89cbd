"""Claims stated by lists and bold leads (issue 40): items opening with a bold verdict, items
carrying a mark or a closing label, bold claims followed by their verdict, lists under a lead
line naming claims and a verdict, lists naming claims or what was not covered, and the paper's
own claims under a heading naming them."""

from __future__ import annotations

import re

from judging.intake.extract import (
    IN_PROSE,
    Extraction,
    negated_at,
    plain_text,
)
from judging.intake.freeform.numbers import NUMBER_OPENING
from judging.intake.freeform.sections import (
    BOLD_CLAIM,
    CHECKLIST,
    item_claims,
    strip_title,
)
from judging.intake.freeform.tables import (
    columns,
)
from judging.intake.freeform.tree import (
    Block,
    Heading,
    descendants,
)
from judging.intake.freeform.vocabulary import (
    LABEL_CHARS,
    MARKS,
    PAPER_SIDE,
    SENTENCE_END,
    TAIL_LABEL_WORDS,
    cell_verdict,
    declared_claim,
    set_verdict,
)
from judging.intake.logbook import FoundClaim, Page

#: A lead line over a list names claims and a verdict in at most this many words.
LEAD_WORDS = 12


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
            set_verdict(ex, verdict, m.group("lead"), line.strip(), "bold label")
            out.append(declared_claim(page, 1, line, rest, ex, place="list item", quote=line.strip(),
                                 quoted_at="list item", values=IN_PROSE))
    return out


#: A heading over the report's results ("## Results", "## Key findings", "## Summary", "结论"):
#: a mark opening or closing an item there is a verdict, not a feature's tick.
_RESULT_HEAD = re.compile(r"(?i)\b(?:claims?|results?|findings?|verdicts?|conclusions?|summary|"
                          r"outcomes?|tl;?dr)\b|结论|結論|结果|結果|总结|總結")


_OPENING_MARK = re.compile(r"^\s*(?P<m>" + MARKS.pattern + r")\ufe0f?\s*(?P<rest>\S.*)$")


_CLOSING_MARK = re.compile(r"^(?P<rest>.*?\S)\s*(?:[(:—–]|\s-)?\s*(?P<m>" + MARKS.pattern +
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
        if block.kind != "list" or CHECKLIST.search(block.text):
            continue
        for (text, *_), line in block.rows:
            first = text.split("\n", 1)[0].strip()
            found = None
            if (m := _CLOSING_BOLD.match(first)) and len(m.group("l").split()) <= \
                    TAIL_LABEL_WORDS and (v := cell_verdict(m.group("l"))):
                found = (m.group("rest"), v, "bold label")
            elif results and ((m := _OPENING_MARK.match(first)) or
                              (m := _CLOSING_MARK.match(first))) and \
                    not negated_at(first, m.start("m"), m.end("m")) and \
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
            set_verdict(ex, found[1], line.strip(), line.strip(), found[2])
            out.append(declared_claim(page, len(out) + 1, line, statement, ex, place="list item",
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
        if m is None or BOLD_CLAIM.match(text) or cell_verdict(m.group("s")) is not None:
            continue
        label, statement = m.group("l").strip(), plain_text(m.group("s")).strip()
        verdict = cell_verdict(label) if len(label.split()) <= TAIL_LABEL_WORDS else None
        if verdict is None or len(statement.split()) < 3:
            continue
        ex = Extraction()
        set_verdict(ex, verdict, label, line.strip(), "bold label")
        out.append(declared_claim(page, len(out) + 1, line, statement, ex, place="list item",
                             quote=line.strip(), quoted_at="list item", values=IN_PROSE))
    return out


#: A heading or lead line naming the claims listed below it ("## Claims tested", "We test three
#: claims of the paper:"), with no verdict: each item a claim.
_CLAIM_LIST = re.compile(r"(?i)\bclaims\b|\bhypothes[ie]s\b|主张|主張")


def claim_list_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """The items of a list under a heading or a lead line naming claims: each a claim, with no
    verdict (the heading declares none; an item carrying its own is read by `marked_items`)."""
    lists: list[Block] = []
    title = plain_text(strip_title(heading.title))
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
        if CHECKLIST.search(block.text):
            continue
        for (item, *_), line in block.rows:
            statement = plain_text(item.split("\n", 1)[0]).strip()
            if len(statement.split()) < 3 and len(statement) < 8:
                continue
            ex = Extraction()
            ex.absent["verdict"] = "listed as a claim: the list declares no verdict on it"
            out.append(declared_claim(page, len(out) + 1, line, statement, ex, place="list item",
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
        out += item_claims(page, lead_heading, verdict)
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
    title = strip_title(heading.title)
    if len(title.split()) > PAPER_HEAD_WORDS or not _PAPER_CLAIMS_HEAD.search(title):
        return []
    out = []
    for block in [b for h in (heading, *descendants(heading)) for b in h.blocks]:
        if block.kind == "table":
            header = block.rows[0][0] if block.rows else []
            if columns(header, [c for c, _ in block.rows[1:]]) is not None:
                continue  # a claims table: `table_claims` reads it
            units = [(" · ".join(p for c in cells if (p := plain_text(c).strip())
                                 and not NUMBER_OPENING.match(p)), line, "table row")
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
            out.append(declared_claim(page, len(out) + 1, block.text if place == "paragraph" else line,
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
    for sentence in SENTENCE_END.split(text)[1:]:
        sentence = sentence.strip()
        head = sentence[:30]
        line = next((ln for ln in block.text.splitlines() if plain_text(ln).find(head) >= 0),
                    None)
        if line is not None and PAPER_SIDE.search(sentence):
            out.append((sentence, line, "paragraph"))
    return out


#: A heading or lead line naming what the reproduction did not cover ("Not reproduced",
#: "尚未涵蓋：", "未复现项"): the items below are the paper's claims, not run.
_NOT_COVERED = re.compile(r"(?i)\bnot\s+(?:yet\s+)?(?:covered|reproduced|replicated|run|done|"
                          r"attempted|tested|implemented)\b|\bout\s+of\s+scope\b|"
                          r"未涵[蓋盖]|未覆[盖蓋]|未(?:复现|復現|重現|重现)|未做")


def not_covered_items(page: Page, heading: Heading) -> list[FoundClaim]:
    """The items listed under a heading or a lead line naming what was not reproduced: each
    the paper's claim, with no verdict (not run is no evidence either way; which word of the
    heading judges which item is not declared) and no value."""
    title = plain_text(strip_title(heading.title))
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
            out.append(declared_claim(page, len(out) + 1, line, statement, ex, place="list item",
                                 quote=line.strip(), quoted_at="list item", values="not run"))
    return out
