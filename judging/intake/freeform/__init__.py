"""Free-form reports read by their structure, as a careful reviewer reads them (issue 40).

A free-form report (a Space's README and the Markdown reports beside it) states its claims in
tables, headings and lists, in any column order and any language of emphasis. This reader parses
each report with markdown-it (a well-kept CommonMark parser: tables, headings and list items with
their source lines, so every quote is a verbatim line of the file) and reads:

- **claims tables** by what their headers mean: a table with a paper column and an ours column,
  or a verdict column (named so, or whose cells open with verdict marks), is a claims table; each
  body row is one claim. The statement is the claim / statement column, else the row's label
  cells (never an id or a number); the paper and ours cells give the values only when a cell is
  one number (`numbers.cell_number`: emphasis, marks, footnotes, a spread or a difference around
  it are read past; a bound, a range, a list, two sizes "256/128", a parenthesis holding another
  number, a comma the table does not declare is absent with its reason; "93.1 (paper 94.0)"
  gives the other side too); "ours / paper" (or "paper → ours", "ours vs paper") in one column
  is split in the header's order; a column measured against the paper ("Δ vs paper"), a side's
  spread or difference ("Ours (std)"), text ("Paper section") or question ("Reproduced?") is no
  side's value; several paper (or ours) columns, another column of numbers in the row, two sides
  on different scales (a count against a percent, a percent against a fraction, two units, a
  hundredfold apart), a row with more or fewer cells than its header or a row saying its
  numbers are not comparable leave the value absent; a row whose paper cell is empty gets no
  verdict and no reproduced value; a claim heading stating both sides' numbers and no other
  ("### Claim 2: ... (paper 0.82, ours 0.79)") gives the pair;
- **verdict headings**: a heading that carries a verdict ("### Claim 1: ... ✅", "## What
  matches", "### Agreements ✅") over numbered sub-headings, list items or bold-lead paragraphs:
  each child is a claim with the heading's verdict unless it carries its own; a marked heading
  with no children is one claim. Scope headings ("What we replicated"), checklist sections and
  plan files state no verdict;
- **bold claims and lists**: `**Claim N: ...**` paragraphs (the verdict the next paragraph opens
  with), a list under a lead line naming claims and a verdict, list items opening with a bold
  verdict, items carrying a mark or a closing label (`marked_items`), a bold claim followed by
  its verdict (`bold_statement_items`); a claim heading's verdict is a mark or a label after its
  statement, else its section's label lines (`claim_verdict`).

- **the paper's own claims** (`Reading.stated`, read only where no report assesses the same
  claim): paragraphs, items and rows under a heading naming them ("The original finding"), a
  results table's row labelled as the paper's, the items of a list under a heading or lead
  line naming claims (`claim_list_items`); no verdict, no value. Items listed as not covered
  ("Not yet covered:", 未复现项) are claims of the report with no verdict.

`read_reports` reads every report of a submission: one claim stated in several reports is read
once, from the report stating more claims, and their disagreements are noted on it; paragraphs
that state a verdict on the paper in prose only are counted for the LLM extractor and, offline,
are claims of their own with no verdict or value (`prose_statements`).

Verdicts come from `extract.map_verdict`, the one table of words, marks and phrases. A verdict or
number the reader is unsure of is absent with its reason; each value and verdict keeps its
verbatim quote.

The rooms, one job each: `tree` (a report parsed once into headings and blocks), `vocabulary`
(the verdict of a label, how a claim is declared), `numbers` (the one number of a cell or a
claim's title), `tables`, `sections` (headings), `lists` (items and bold leads). This module
conducts: `read_report` asks each rule over the tree, `read_reports` merges the reports and adds
the paper's own claims and the claims stated in prose.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field

from judging.intake.extract import IN_PROSE, Extraction, map_verdict, plain_text
from judging.intake.freeform.lists import (
    bold_statement_items,
    bold_verdict_items,
    claim_list_items,
    lead_list_claims,
    marked_items,
    not_covered_items,
    paper_claims,
)
from judging.intake.freeform.sections import PLAN_FILE, bold_claims, section_claims
from judging.intake.freeform.tables import (
    HUNDREDFOLD_BAND,
    keep_single_numbers,
    paper_rows,
    table_claims,
)
from judging.intake.freeform.tree import Heading, descendants, parse, report_page
from judging.intake.freeform.vocabulary import PAPER_SIDE, SENTENCE_END, declared_claim
from judging.intake.logbook import FoundClaim
from judging.intake.manifest import MAX_CLAIMS_PER_SUBMISSION
from judging.models import MAX_NOTE_CHARS, FieldProvenance

#: What the rest of intake reads of the reader (the rooms' names the conductor does not call).
__all__ = ["HUNDREDFOLD_BAND", "Reading", "keep_single_numbers", "prose_statements", "read_already", "read_report",
           "read_reports", "report_page"]


def read_report(rel: str, text: str, *, verdict_places: frozenset[str] | None = None,
                value_places: frozenset[str] | None = None,
                root: Heading | None = None) -> list[FoundClaim]:
    """Every claim one report states by its structure, in the report's order; `verdict_places`
    and `value_places` (kinds of place, `extract.VERDICT_PLACES`) narrow what is read."""
    page = report_page(rel, text)
    out: list[FoundClaim] = []
    if PLAN_FILE.search(rel):
        return out
    taken: set[int] = set()

    def walk(heading: Heading) -> None:
        claims = section_claims(page, heading) if heading.level else []
        if claims:
            taken.update(id(h) for h in descendants(heading))
            out.extend(claims)
        for block in heading.blocks:
            if block.kind == "table":
                out.extend(table_claims(page, block))
        out.extend(bold_claims(page, heading))
        # a heading without blocks (a run of "#" lines) states claims only by its title, read
        # above: the item rules are not asked (a 200 KB heading run read in seconds)
        if heading.blocks and not claims:
            listed = not_covered_items(page, heading) + lead_list_claims(page, heading) + \
                bold_verdict_items(page, heading)
            out.extend(listed)
            seen = {c.prose for c in listed}
            for claim in marked_items(page, heading) + bold_statement_items(page, heading):
                if claim.prose not in seen:
                    seen.add(claim.prose)
                    out.append(claim)
        for child in heading.children:
            if id(child) not in taken:
                walk(child)
            else:
                for block in child.blocks:
                    if block.kind == "table":
                        out.extend(table_claims(page, block))

    walk(parse(text) if root is None else root)
    for n, claim in enumerate(out, start=1):
        claim.row = n if claim.number is None else claim.row
        _narrow(claim.extraction, verdict_places, value_places)
    return out


def _narrow(ex: Extraction, verdict_places: frozenset[str] | None,
            value_places: frozenset[str] | None) -> None:
    """Drop what was read from a kind of place the caller does not trust."""
    held = ex.provenance.get("verdict")
    if verdict_places is not None and held is not None and held.place not in verdict_places:
        ex.verdict = ex.source_verdict = None
        ex.provenance.pop("verdict")
        ex.absent["verdict"] = f"{held.place}: a kind of place not read here"
    for side in ("reported", "reproduced"):
        held = ex.provenance.get(f"{side}_value")
        if value_places is not None and held is not None and held.place not in value_places:
            setattr(ex, side, None)
            ex.provenance.pop(f"{side}_value")
            ex.absent[f"{side}_value"] = f"{held.place}: a kind of place not read here"


def read_already(claim: FoundClaim, found: list[FoundClaim]) -> bool:
    """Whether a claim of `Reading.stated` is read already by `found`: a row, when it is one of
    theirs (a section's table is evidence, its rows are claims of their own); a paragraph,
    when it is in their text."""
    line = claim.prose.strip().split("\n", 1)[0]
    if claim.place == "table row":
        return any(k.prose.strip() == line for k in found)
    return any(line in k.prose for k in found)


#: Two claims of two reports are one claim when this share of the words of both is common.
SAME_CLAIM_AT = 0.8


@dataclass
class Reading:
    """What the structure reader found in a submission's reports."""

    claims: list[FoundClaim]
    prose: dict[str, int]
    """Per report: paragraphs or items that state a verdict on the paper in prose only."""
    warnings: list[str]
    stated: list[FoundClaim] = field(default_factory=list)
    """Those paragraphs and items as claims with no verdict or value (`prose_statements`):
    what an offline run reads of them."""


def read_reports(texts: list[tuple[str, str]], *,
                 verdict_places: frozenset[str] | None = None,
                 value_places: frozenset[str] | None = None) -> Reading:
    """Every report's claims, one claim stated in several reports read once (from the report
    that states more claims: the fuller one) and their disagreements flagged on it."""
    # each report parsed once (markdown-it is most of the time a long report takes): every
    # rule below reads the same tree
    trees = {rel: parse(text) for rel, text in texts}
    per = {rel: read_report(rel, text, verdict_places=verdict_places, value_places=value_places,
                            root=trees[rel]) for rel, text in texts}
    warnings: list[str] = []
    total = sum(len(claims) for claims in per.values())
    if total > MAX_CLAIMS_PER_SUBMISSION:
        # a table of thousands of rows is no report of claims: judge the first ones, say so
        warnings.append(f"{total:,} claims read by structure, over the limit of "
                        f"{MAX_CLAIMS_PER_SUBMISSION} per submission: the first "
                        f"{MAX_CLAIMS_PER_SUBMISSION} in the reports' order are judged")
        left = MAX_CLAIMS_PER_SUBMISSION
        for rel in per:
            per[rel], left = per[rel][:left], max(0, left - len(per[rel]))
    size = Counter({rel: len(claims) for rel, claims in per.items()})
    kept: list[FoundClaim] = []
    for rel in sorted(per, key=lambda r: -size[r]):
        for claim in per[rel]:
            twin = next((k for k in kept if k.page.origin != rel and _same(k, claim)), None)
            if twin is None:
                kept.append(claim)
                continue
            also = claim.extraction.provenance.get("statement")
            if also is not None and "also_stated" not in twin.extraction.provenance:
                twin.extraction.provenance["also_stated"] = FieldProvenance(
                    how="declared", quote=also.quote, place=f"also stated in {rel}"[:200])
            differ = _differences(twin, claim)
            if differ:
                note = (f"{twin.page.origin} and {rel} disagree on {twin.title[:80]!r} "
                        f"({differ}): {twin.page.origin}, the fuller report, is read")
                twin.warnings.append(note)
                warnings.append(note)
                _withhold_disputed(twin, claim, rel)
    order = {id(c): i for i, c in enumerate(c for rel, _ in texts for c in per[rel])}
    kept.sort(key=lambda c: order[id(c)])
    units = {rel: prose_units(text, per[rel], trees[rel]) for rel, text in texts}
    prose = {rel: len(units[rel]) for rel, _ in texts if units[rel]}
    stated: list[FoundClaim] = []
    for rel, text in texts:
        page = report_page(rel, text)
        root = trees[rel]
        headings = [root, *descendants(root)]
        with_blocks = [h for h in headings if h.blocks]  # the rows and items are in blocks
        papers = [c for h in headings[1:] for c in paper_claims(page, h)]
        # by sets of their texts, not a scan of the list per claim (a 200 KB list: minutes)
        known = {k.prose for k in papers}
        papers += [c for h in with_blocks for c in paper_rows(page, h) if c.prose not in known]
        # a list naming claims: each item read unless the reports assess it (as the paper's)
        known = {k.prose.strip() for k in papers + per[rel]}
        papers += [c for h in with_blocks for c in claim_list_items(page, h)
                   if c.prose.strip() not in known]
        these = papers + (prose_statements(rel, text, per[rel] + papers, trees[rel])
                          if prose.get(rel) else [])
        for n, claim in enumerate(these, start=len(per[rel]) + 1):
            claim.row = n  # after the report's other claims: ids stay unique in the report
        stated += these
    return Reading(kept, prose, warnings, _not_assessed(stated, kept))


def _not_assessed(stated: list[FoundClaim], kept: list[FoundClaim]) -> list[FoundClaim]:
    """The paper's claims and prose claims (`Reading.stated`) that no claim of the reports
    assesses: a claim the reports assess (in a table, a heading, a list) is read there, with its
    verdict, and the paper's statement of it or a sentence about it is not read again. Each is
    compared with every assessed claim only up to the claim limit: past it none is judged (the
    engine counts them in its one line), and comparing a 200 KB list of them took minutes."""
    room = max(0, MAX_CLAIMS_PER_SUBMISSION - len(kept))
    out: list[FoundClaim] = []
    for claim in stated:
        if len(out) >= room or not any(_same(k, claim) for k in kept):
            out.append(claim)
    return out


def _same(a: FoundClaim, b: FoundClaim) -> bool:
    """One claim: the same number in both reports ("C5"), or the same words."""
    if a.number is not None and b.number is not None:
        return a.number == b.number
    wa, wb = set(_words(a.title)), set(_words(b.title))
    if not wa or not wb or {w for w in wa ^ wb if w.isdigit()}:
        return False  # "TREC DL 2019" and "TREC DL 2020" are two claims
    # the words either has that the other lacks: at most one, or the share the threshold
    # leaves ("GCN-DQN restored load" and "MLP-DQN restored load" are two claims)
    return len(wa ^ wb) <= max(1.0, (1 - SAME_CLAIM_AT) * len(wa | wb))


@functools.lru_cache(maxsize=4096)  # each claim's title is compared with every other's
def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[^\W_]+", plain_text(text).lower()))


def _withhold_disputed(kept: FoundClaim, other: FoundClaim, rel: str) -> None:
    """A value two reports give differently for one claim is absent, both quoted in its reason:
    which report is the later one is not declared (the fuller one's verdict is read, flagged)."""
    ex, ox = kept.extraction, other.extraction
    for side in ("reported", "reproduced"):
        mine, theirs = getattr(ex, side), getattr(ox, side)
        if mine is None or theirs is None or mine == theirs:
            continue
        name = f"{side}_value"
        setattr(ex, side, None)
        ex.provenance.pop(name, None)
        ex.absent[name] = (f"the reports disagree: {mine:g} in {kept.page.origin}, {theirs:g} "
                           f"in {rel}")[:MAX_NOTE_CHARS]


def _differences(a: FoundClaim, b: FoundClaim) -> str:
    out = []
    ea, eb = a.extraction, b.extraction
    if ea.verdict and eb.verdict and ea.verdict != eb.verdict:
        out.append(f"verdict {ea.verdict.value} / {eb.verdict.value}")
    for side in ("reported", "reproduced"):
        va, vb = getattr(ea, side), getattr(eb, side)
        if va is not None and vb is not None and va != vb:
            out.append(f"{side} {va:g} / {vb:g}")
    return "; ".join(out)


def states_on_paper(sentence: str) -> bool:
    """A sentence that names the paper's side and a verdict (or two: "the phenomenon
    replicates, the procedure does not")."""
    if not PAPER_SIDE.search(sentence):
        return False
    mapped = map_verdict(sentence, doubt=False)  # whether it speaks of one, not which
    return mapped.verdict is not None or mapped.split or bool(
        _PAPER_REPORTS.search(sentence) and _NUMBER_IN.search(sentence))


#: A sentence stating what the paper reports ("Paper reports SDFT 40.2% vs SFT 35.5%", "论文报告
#: 87%"): with a number, the paper's claim in the reproducer's words.
_PAPER_REPORTS = re.compile(r"(?i)\b(?:paper|authors?)(?:'s?)?\s+(?:reports?|reported|claims?|"
                            r"states?|finds|found|shows?|showed|(?:\w+\s+)?results?)\b|"
                            r"(?:论文|論文|原文)(?:报告|報告|声称|聲稱|称|稱|给出|給出|结果|結果)")


_NUMBER_IN = re.compile(r"\d")


def prose_units(text: str, claims: list[FoundClaim],
                root: Heading | None = None) -> list[tuple[str, str, str]]:
    """Paragraphs and list items outside the claims read by structure with a sentence that
    names the paper and a verdict: claims stated in prose. Each as (its text, its first line
    verbatim, that sentence)."""
    covered = "\n".join(c.prose for c in claims)
    out: list[tuple[str, str, str]] = []

    def visit(heading: Heading) -> None:
        for block in heading.blocks:
            if block.kind == "table" or block.raw.strip() in covered:
                continue
            units = [(t, line) for (t, *_), line in block.rows] if block.kind == "list" \
                else [(block.text, block.raw)]
            for unit, line in units:
                said = next((s for s in SENTENCE_END.split(plain_text(unit))
                             if states_on_paper(s)), None)
                if said is not None:
                    out.append((unit, line, said.strip()))
        for child in heading.children:
            visit(child)

    visit(parse(text) if root is None else root)
    return out


def prose_count(text: str, claims: list[FoundClaim]) -> int:
    """How many claims a report states in prose only (`prose_units`), which only the LLM
    extractor reads in full."""
    return len(prose_units(text, claims))


def prose_statements(rel: str, text: str, claims: list[FoundClaim],
                     root: Heading | None = None) -> list[FoundClaim]:
    """Offline, each claim stated in prose (`prose_units`) as a claim of its own: its statement
    the sentence naming the paper and a verdict, verbatim, and no verdict or value (a sentence's
    verdict words may be about something else: which claim a word judges is the LLM's to read,
    with `--extract`). Counted, never dropped: the judge sees the claim and its paragraph."""
    page = report_page(rel, text)
    out = []
    for r, (unit, line, said) in enumerate(prose_units(text, claims, root), start=1):
        ex = Extraction()
        ex.absent["verdict"] = IN_PROSE
        out.append(declared_claim(page, r, unit, said, ex, place="prose", quote=line.strip(),
                             quoted_at="prose sentence", values=IN_PROSE))
    return out
