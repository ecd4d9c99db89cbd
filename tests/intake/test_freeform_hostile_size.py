"""A long report of one repeated shape is read in time linear in its size (issue 40): a run of
headings and a long blank-separated numbered list, 200 KB each, are parsed once and each line
costs the rules a bounded number of reads; a quadratic rule would take minutes at this size, so
the generous timeout fails it too (the count, not a clock, is the assertion)."""

from __future__ import annotations

import pytest

import judging.intake.freeform as reader
from judging.intake.freeform import lists, read_reports, sections, tables, tree, vocabulary

#: The reader's rooms: each reads lines through its own `plain_text`.
ROOMS = (reader, lists, sections, tables, tree, vocabulary)

SIZE = 200_000
#: Reads of a line's text (`plain_text`) the rules may spend per line of the report: about two
#: are spent today; a rule that rereads every earlier line would spend thousands.
READS_PER_LINE = 6

SHAPES = {
    "heading run": lambda i: f"## Claim {i}\n",
    "empty heading run": lambda i: "#\n",
    "numbered list": lambda i: f"{i}. The loss falls below a fifth on split {i}.\n\n",
    "marked numbered list under claims": lambda i: f"{i}. Recall rises on split {i} ✅\n\n",
}


def _text(shape: str) -> str:
    unit, parts, size, i = SHAPES[shape], ["## Claims\n\n"], 0, 0
    while size < SIZE:
        i += 1
        parts.append(unit(i))
        size += len(parts[-1])
    return "".join(parts)


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_long_run_of_one_shape_is_parsed_once_and_read_in_linear_work(
        shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _text(shape)
    counts = {"parse": 0, "reads": 0}
    parse, plain_text = tree.MARKDOWN.parse, vocabulary.plain_text

    def counted_parse(*args, **kwargs):
        counts["parse"] += 1
        return parse(*args, **kwargs)

    def counted_plain_text(*args, **kwargs):
        counts["reads"] += 1
        return plain_text(*args, **kwargs)

    monkeypatch.setattr(tree.MARKDOWN, "parse", counted_parse)
    for room in ROOMS:
        if hasattr(room, "plain_text"):
            monkeypatch.setattr(room, "plain_text", counted_plain_text)
    sections.strip_title.cache_clear()  # every title read afresh: no help from earlier tests
    reading = read_reports([("README.md", text)])
    assert counts["parse"] == 1  # one report, one parse: every rule reads the same tree
    lines = text.count("\n")
    assert counts["reads"] <= READS_PER_LINE * lines, (counts, lines)
    if shape.startswith("marked"):
        # the claims are read, and the claim limit holds
        assert len(reading.claims) == reader.MAX_CLAIMS_PER_SUBMISSION
        assert any("over the limit" in w for w in reading.warnings)
