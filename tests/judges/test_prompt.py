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


def _chart(same_data: float | None, reason: str) -> dict:
    from judging.models import Signal

    signals = {"chart.match_score": Signal(value=0.42),
               "chart.shape_agreement": Signal(value=0.9),
               "pixel.ssim": Signal(value=0.7)}
    signals["chart.same_data"] = (Signal.absent(reason) if same_data is None
                                  else Signal(value=same_data, reason=reason))
    return signals


def test_the_chart_readings_are_hints_with_the_readers_confidence():
    sure = "\n".join(prompt.describe_chart_hints(_chart(
        0.98, "evidence +0.95; confirmed: the series agree (0.97) and lie on each other's ink")))
    assert "hints, not facts" in sure
    assert "fairly sure the reproduction plots the same data (98%)" in sure
    assert "Confirmed by two of its readings: the series agree" in sure
    assert "chart.match_score = 0.42" in sure and "pixel.ssim" not in sure


def test_an_unsure_reader_says_so_and_its_doubts_are_shown():
    unsure = "\n".join(prompt.describe_chart_hints(_chart(
        0.52, "evidence +0.00; nothing confirmed by two independent readings; doubts: the "
              "series (0.10) and the ink (0.30) differ, but the y axis of the reproduced "
              "chart: only two tick labels")))
    assert "NOT SURE either way" in unsure and "do not rely on them" in unsure
    assert "disagree with one another or are in doubt: the series (0.10)" in unsure
    assert "each a hint, unsure" in unsure


def test_a_reader_that_abstained_says_so():
    abstained = "\n".join(prompt.describe_chart_hints(_chart(
        None, "published chart unreadable: no plot area found")))
    assert "ABSTAINED" in abstained and "no plot area found" in abstained
    assert "chart.match_score" not in abstained  # no reading shown as if it held
