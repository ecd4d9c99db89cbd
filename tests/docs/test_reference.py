"""The generated reference pages follow the code, and the README stays a front page.

`make test` builds the site with `mkdocs build --strict` (`make docs`), which fails on a broken
link, a page left out of the navigation or a generator that raises. These tests check what the
build cannot: that the generated blocks hold what the code defines (every run-directory file of
`RUN_FILES` with its schema and its model's fields, every field of the rubric models, every
rubric of rubrics/, every signal and rule), that a page asking for an unknown block fails, and
that the README's links point at pages that exist.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
import yaml

from judging import rubrics
from judging.rubrics import RubricLibrary
from judging.rules import RULE_DESCRIPTIONS
from judging.rundir import layout
from judging.signal_catalogue import CATALOGUE
from tests.conftest import ROOT, RUBRICS

README_MAX_LINES = 250  # issue 43: what it is, the two commands and links


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def test_the_run_directory_page_lists_every_versioned_file_with_its_model_fields() -> None:
    page = hooks.render("# Files\n\n<!-- generated: run-files -->\n")
    assert "<!-- generated" not in page
    for run_file in layout.RUN_FILES:
        row = next(line for line in page.splitlines() if line.startswith(f"| `{run_file.name}` |"))
        assert f"`{run_file.schema}`" in row and run_file.written_by in row
        model = hooks._load_model(run_file.model)
        section = page.split(f"### `{model.__name__}`", 1)[1].split("\n### ", 1)[0]
        for name, info in model.model_fields.items():
            assert f"| `{info.alias or name}` |" in section, (model.__name__, name)
    assert "| pushed.jsonl" in page  # layout.py's own table (its docstring) comes first


def test_the_rubric_schema_page_has_every_field_with_its_docstring() -> None:
    page = hooks.render("<!-- generated: rubric-schema -->")
    criterion = page.split("### `Criterion`", 1)[1].split("\n### ", 1)[0]
    for name, info in rubrics.Criterion.model_fields.items():
        row = next(line for line in criterion.splitlines() if line.startswith(f"| `{name}` |"))
        if info.description:
            assert " ".join(info.description.split()).replace("|", "\\|") in row
    assert "| `pass_threshold` | `float` | required | gt `0`, le `1` |" in page
    assert "| `gate` | `bool` | `False` |" in page
    assert "`categorical`" in page


def test_the_rubrics_table_lists_every_rubric_of_the_folder() -> None:
    page = hooks.render("<!-- generated: published-rubrics -->")
    locked = yaml.safe_load((RUBRICS / "LOCK").read_text())
    entries = RubricLibrary(RUBRICS).entries()
    assert len(entries) >= len(locked)
    for entry in entries:
        row = next(line for line in page.splitlines() if f"`{entry.ref_name}`" in line)
        assert ("published" if entry.ref_name in locked else "draft") in row
    assert "**independent_reproduction**" in page  # a gate is shown as one


def test_the_signal_and_rule_tables_follow_the_catalogue_and_the_rules() -> None:
    page = hooks.render("<!-- generated: signal-catalogue -->\n<!-- generated: rule-checks -->")
    assert all(f"| `{name}` |" in page for name in CATALOGUE)
    assert all(f"| `{name}` |" in page for name in RULE_DESCRIPTIONS)


def test_an_unknown_generated_block_fails_the_build() -> None:
    with pytest.raises(KeyError, match="unknown generated block 'run-filez'"):
        hooks.render("<!-- generated: run-filez -->")


def test_every_generated_block_the_pages_ask_for_exists() -> None:
    asked = {m.group(1) for page in (ROOT / "docs").rglob("*.md")
             for m in hooks.MARKER.finditer(page.read_text())}
    assert asked == set(hooks.GENERATORS)  # and every generator is used by a page


def test_the_readme_is_a_front_page_whose_links_exist() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "make demo" in text and "make test" in text
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert len(links) >= 20
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing
    # every page of the site is reachable from the README or the site's own navigation
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        relative = page.relative_to(ROOT / "docs").as_posix()
        assert relative in nav, relative


def test_placeholders_show_as_text_not_as_html_tags() -> None:
    # `<claim>` outside backticks would be an unknown HTML tag, hidden by the browser
    assert hooks._cell("reruns/<claim>/ and `diffs/<claim>/`") == \
        "reruns/&lt;claim&gt;/ and `diffs/<claim>/`"
    page = hooks.render("<!-- generated: run-files -->")
    assert "reruns/&lt;claim&gt;/" in page

    class File:
        src_uri = "reference/cli.md"

    class Page:
        file = File()

    html = "<p>logs under RUN_DIR/reruns/<claim>/, see <code>x</code></p>"
    assert hooks.on_page_content(html, page=Page()) == \
        "<p>logs under RUN_DIR/reruns/&lt;claim&gt;/, see <code>x</code></p>"
