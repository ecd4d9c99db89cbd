"""The prompt-template hash binds calibrations to what shapes the prompt, not to the bytes of the
module that builds it (issue: an import line made every calibration stale)."""

from __future__ import annotations

from pathlib import Path

from judging.judges import prompt
from judging.rubrics import RubricLibrary
from tests.conftest import ROOT

SOURCE = Path(prompt.__file__).read_text(encoding="utf-8")


def test_import_lines_comments_and_docstrings_do_not_change_the_template_digest():
    edited = SOURCE.replace("import base64\n", "import base64\nimport textwrap  # unused\n", 1)
    edited = edited.replace('def build_messages(', '# a comment\ndef build_messages(', 1)
    edited = edited.replace('"""The schema of one criterion\'s answer', '"""Reworded docstring. The schema', 1)
    assert edited != SOURCE
    assert prompt.template_digest(edited) == prompt.template_digest(SOURCE)


def test_a_change_of_the_prompt_text_changes_the_template_digest():
    edited = SOURCE.replace("You are a careful, impartial judge.", "You are a judge.", 1)
    assert edited != SOURCE
    assert prompt.template_digest(edited) != prompt.template_digest(SOURCE)
    rules = SOURCE.replace("- Answer every criterion listed", "- Answer each criterion listed", 1)
    assert prompt.template_digest(rules) != prompt.template_digest(SOURCE)


def test_template_hash_depends_on_rubric_and_template_version(monkeypatch):
    library = RubricLibrary(ROOT / "rubrics")
    a, b = library.load("figure-match@1.2.0"), library.load("verdict-justification@1.0.0")
    assert prompt.template_hash(a) != prompt.template_hash(b)
    before = prompt.template_hash(a)
    monkeypatch.setattr(prompt, "TEMPLATE_VERSION", "prompt-template/2")
    assert prompt.template_hash(a) != before
