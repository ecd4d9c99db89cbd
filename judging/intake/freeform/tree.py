"""A report as a tree of headings holding its tables, lists and paragraphs (issue 40), parsed
once with markdown-it (a well-kept CommonMark parser: every block keeps its source lines, so
every quote is a verbatim line of the file)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from judging.intake.logbook import Cell, Page

#: Block structure only: the reader takes each block's raw text (an inline token's `content`),
#: never its inline children, and markdown-it's inline pass read a line of "![" to its end from
#: every bracket (a 100 KB line: minutes).
MARKDOWN = MarkdownIt("commonmark").enable("table").disable("inline")


@dataclass
class Heading:
    level: int
    title: str
    line: int
    raw: str
    children: list[Heading] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Block:
    kind: str
    """table | list | paragraph"""
    line: int
    raw: str
    """The block's first line, verbatim."""
    text: str = ""
    """The block's lines, verbatim."""
    rows: list[tuple[list[str], str]] = field(default_factory=list)
    """Table: (cells, verbatim line) per row, the header first. List: (item text, line)."""


def parse(text: str) -> Heading:
    """The report as a tree of headings, each holding its tables, lists and paragraphs."""
    lines = text.splitlines()
    root = Heading(0, "", 0, "")
    stack = [root]
    tokens = MARKDOWN.parse(text)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.map is None:
            i += 1
            continue
        start = tok.map[0]
        raw = lines[start] if start < len(lines) else ""
        whole = "\n".join(lines[start:tok.map[1]])
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            heading = Heading(level, tokens[i + 1].content.strip(), start, raw.strip())
            while stack[-1].level >= level:
                stack.pop()
            stack[-1].children.append(heading)
            stack.append(heading)
        elif tok.type == "table_open":
            block = Block("table", start, raw, whole)
            j = i + 1
            while tokens[j].type != "table_close":
                if tokens[j].type == "tr_open":
                    row_line = lines[tokens[j].map[0]] if tokens[j].map else ""
                    cells: list[str] = []
                    j += 1
                    while tokens[j].type != "tr_close":
                        if tokens[j].type == "inline":
                            cells.append(tokens[j].content.strip())
                        j += 1
                    block.rows.append((cells, row_line))
                j += 1
            stack[-1].blocks.append(block)
            i = j
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            block = Block("list", start, raw, whole)
            j = i + 1
            depth = 0
            while not (tokens[j].type == tok.type.replace("open", "close") and depth == 0):
                if tokens[j].type == "list_item_open" and tokens[j].level == 1 and \
                        tokens[j].map is not None:
                    item_line = lines[tokens[j].map[0]]
                    # by index, not tokens[j:]: a copy of the rest for each item of a long
                    # list was quadratic (10,000 items: 20 s)
                    content = next((tokens[k].content for k in range(j, len(tokens))
                                    if tokens[k].type == "inline"), "")
                    block.rows.append(([content.strip()], item_line))
                if tokens[j].type.endswith("list_open"):
                    depth += 1
                elif tokens[j].type.endswith("list_close"):
                    depth -= 1
                j += 1
            stack[-1].blocks.append(block)
            i = j
        elif tok.type == "paragraph_open":
            stack[-1].blocks.append(Block("paragraph", start, raw, whole,
                                          [([tokens[i + 1].content], raw)]))
        i += 1
    return root


def report_page(rel: str, text: str) -> Page:
    slug = re.sub(r"[^\w.-]+", "--", rel[:-3] if rel.lower().endswith(".md") else rel)
    title = re.search(r"(?m)^#[ \t]+(.+)$", text)
    page = Page(slug=slug, path=Path(rel), title=title.group(1).strip() if title else "",
                text=text, has_markers=False, origin=rel)
    page.cells = [Cell(type="markdown", meta={}, body=text, start=0)]
    return page


def descendants(heading: Heading) -> list[Heading]:
    out = []
    for child in heading.children:
        out += [child, *descendants(child)]
    return out
