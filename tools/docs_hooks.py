"""mkdocs hooks: the reference pages that are generated from the code when the site is built.

A page asks for a generated block with a marker line, `<!-- generated: NAME -->`, which is
replaced by `GENERATORS[NAME]()`: the run-directory files from `judging/rundir/layout.py`, the
rubric schema from its pydantic models (field names, types, defaults, constraints and their
docstrings), the published rubrics from `rubrics/` and its LOCK, the signal catalogue and the
rule checks. Nothing is written into the tree: the text exists only in the built site, so it
cannot go stale. (mkdocs-gen-files would write virtual files for the same purpose; a marker in a
hand-written page keeps the prose and the generated table on one page, with one hook.)

The CLI reference is mkdocs-click's `::: mkdocs-click` directive (docs/reference/cli.md); its
help texts' placeholders (`reruns/<claim>/`) are escaped after rendering (`on_page_content`).
An unknown marker fails the build: a page never silently shows a placeholder.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


def _text(text: str) -> str:
    """Code prose as Markdown: `<claim>` outside backticks is a placeholder, not an HTML tag
    (a browser would hide it)."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else part.replace("<", "&lt;").replace(">", "&gt;")
                   for part in parts)


def _cell(text: object) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return _text(" ".join(str(text).split()).replace("|", "\\|"))


def _type_name(annotation: Any) -> str:
    """A field's type as a reader writes it: `list[str] | None`, not `typing.Optional[...]`."""
    if annotation is None or annotation is type(None):
        return "None"
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in typing.get_args(annotation))
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(_type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def _constraints(info: FieldInfo) -> str:
    shown = []
    for item in info.metadata:
        for name in ("gt", "ge", "lt", "le", "min_length", "max_length", "pattern"):
            value = getattr(item, name, None)
            if value is not None:
                shown.append(f"{name} `{value}`")
    return ", ".join(shown)


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return "(empty)"
    if info.default is PydanticUndefined:
        return ""
    return f"`{info.default!r}`" if info.default is not None else "`None`"


def model_fields_table(model: type[BaseModel]) -> str:
    """The fields of a pydantic model: name (its alias when it has one), type, default,
    constraints and the field's docstring."""
    lines = ["| field | type | default | constraints | meaning |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        shown = info.alias or name
        lines.append(f"| `{shown}` | `{_cell(_type_name(info.annotation))}` | {_default(info)} | "
                     f"{_cell(_constraints(info))} | {_cell(info.description or '')} |")
    return "\n".join(lines)


def _model_section(model: type[BaseModel], level: str = "###") -> str:
    doc = _text(inspect.cleandoc(model.__doc__ or ""))
    doc = "" if doc.startswith(f"{model.__name__}(") else doc  # pydantic's generated signature
    intro = f"{doc}\n\n" if doc else ""
    return f"{level} `{model.__name__}`\n\n{intro}{model_fields_table(model)}\n"


def rubric_schema() -> str:
    from judging import rubrics

    parts = []
    for model in (rubrics.Rubric, rubrics.Criterion, rubrics.OfflineRule, rubrics.TrustCondition,
                  rubrics.AppliesIf, rubrics.Reliability):
        parts.append(_model_section(model))
    scales = ", ".join(f"`{scale.value}`" for scale in rubrics.Scale)
    parts.append(f"### `Scale`\n\nOne of {scales}.\n")
    return "\n".join(parts)


def published_rubrics() -> str:
    from judging.rubrics import RubricLibrary

    library = RubricLibrary(ROOT / "rubrics")
    lines = ["| rubric | status | applies to | title | criteria (gates in bold) |",
             "|---|---|---|---|---|"]
    for entry in library.entries():
        rubric = library.load(entry.ref_name)
        names = ", ".join(f"**{c.id}**" if c.gate else c.id for c in rubric.criteria)
        applies = rubric.applies_to + (f" ({rubric.applies_if.describe()})"
                                       if rubric.applies_if else "")
        lines.append(f"| `{entry.ref_name}` | {entry.status.value} | {_cell(applies)} | "
                     f"{_cell(rubric.title)} | {_cell(names)} |")
    return "\n".join(lines)


def signal_catalogue() -> str:
    from judging.signal_catalogue import CATALOGUE

    lines = ["| signal | kind | better | meaning |", "|---|---|---|---|"]
    for spec in CATALOGUE.values():
        lines.append(f"| `{spec.name}` | {spec.kind} | {spec.better or ''} | "
                     f"{_cell(spec.description)} |")
    return "\n".join(lines)


def rule_checks() -> str:
    from judging.rules import RULE_DESCRIPTIONS

    lines = ["| rule | what it checks |", "|---|---|"]
    for name in sorted(RULE_DESCRIPTIONS):
        lines.append(f"| `{name}` | {_cell(RULE_DESCRIPTIONS[name])} |")
    return "\n".join(lines)


def _load_model(spec: str) -> type[BaseModel]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def run_files() -> str:
    """rundir/layout.py's own account of the run directory (its docstring), then `RUN_FILES`
    with the fields of each file's model."""
    from judging.rundir import layout

    doc = _text(inspect.cleandoc(layout.__doc__ or ""))
    table = ["| file | schema | model | written by | flags side file |", "|---|---|---|---|---|"]
    sections = []
    for run_file in layout.RUN_FILES:
        model = _load_model(run_file.model)
        anchor = model.__name__.lower()
        table.append(f"| `{run_file.name}` | `{run_file.schema}` | [`{model.__name__}`](#{anchor}) "
                     f"| {run_file.written_by} | {'yes' if run_file.flags_side_file else ''} |")
        sections.append(_model_section(model))
    return "\n".join([doc, "", "## Versioned files (`RUN_FILES`)", "", *table, "",
                      "## Their models", "", *sections])


GENERATORS: dict[str, Callable[[], str]] = {
    "rubric-schema": rubric_schema,
    "published-rubrics": published_rubrics,
    "signal-catalogue": signal_catalogue,
    "rule-checks": rule_checks,
    "run-files": run_files,
}


def render(markdown: str) -> str:
    """Replace every generated-block marker of a page with its block."""
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(f"unknown generated block {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]()
    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return render(markdown)


#: The tags the CLI page's HTML is made of; any other `<name>` there is a placeholder of a
#: command's help text (`reruns/<claim>/`), which mkdocs-click passes through as raw HTML.
HTML_TAGS = frozenset("a abbr b blockquote br code dd div dl dt em h1 h2 h3 h4 h5 h6 hr i li ol p "
                      "pre span strong sub sup table tbody td th thead tr ul".split())
PLACEHOLDER = re.compile(r"<([A-Za-z][A-Za-z0-9_-]*)>")


def on_page_content(html: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "reference/cli.md":
        return html
    return PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1).lower() in HTML_TAGS
                           else f"&lt;{m.group(1)}&gt;", html)
