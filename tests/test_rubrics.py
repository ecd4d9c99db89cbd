"""Rubric schema, line-numbered errors, the lock of published versions, aggregation, the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from judging.cli import main
from judging.errors import RubricError
from judging.models import AnswerStatus, ClaimKind, CriterionAnswer, Outcome, Verdict
from judging.rubrics import (
    RubricLibrary,
    aggregate,
    load_rubric_file,
    parse_rubric_text,
)

from .conftest import RUBRICS

PUBLISHED = ["falsification-audit@1.0.0", "figure-match@1.0.0", "figure-match@1.1.0", "figure-match@1.2.0",
             "figure-match@1.3.0", "figure-match@1.4.0",
             "verdict-justification@1.0.0", "verdict-justification@1.1.0",
             "verdict-justification@1.2.0"]


def test_published_rubrics_match_the_lock() -> None:
    library = RubricLibrary(RUBRICS)
    for ref in PUBLISHED:
        rubric = library.load(ref)
        assert library.lock[ref] == rubric.content_hash()
    # the newest published version of each rubric is the default
    assert {r.ref_name for r in library.defaults()} >= {"figure-match@1.4.0",
                                                        "verdict-justification@1.2.0"}


def test_rubric_contents_cover_the_issue() -> None:
    library = RubricLibrary(RUBRICS)
    figure = library.load("figure-match@1.0.0")
    assert {c.id for c in figure.criteria} == {
        "same_trend", "axes_and_scales", "same_series", "values_within_tolerance",
        "no_misleading_cropping", "independent_reproduction", "overall_match"}
    verdict = library.load("verdict-justification@1.0.0")
    offline_rules = {c.offline.rule for c in verdict.criteria if c.offline is not None}
    assert {"falsified_has_proof", "value_in_logs",
            "verdict_consistent_with_tolerance"} <= offline_rules
    for rubric in (figure, verdict):
        for criterion in rubric.criteria:
            assert criterion.guidance.strip(), f"{criterion.id} needs guidance"
            if criterion.scale == "ordinal":
                assert all(text.strip() for text in criterion.levels.values())


MINIMAL = """\
id: demo
version: "1.0.0"
applies_to: verdict
title: A demo rubric
instructions: Judge the thing carefully.
criteria:
  - id: first
    question: Is the first thing right?
    scale: binary
    weight: 2
  - id: second
    question: How good is the second thing?
    scale: ordinal
    levels: {1: bad, 2: weak, 3: fine, 4: good, 5: great}
    pass_at: 4
pass_threshold: 0.7
"""


def _error(text: str) -> RubricError:
    with pytest.raises(RubricError) as caught:
        parse_rubric_text(text, path="demo.yaml")
    return caught.value


def test_minimal_rubric_is_valid() -> None:
    rubric = parse_rubric_text(MINIMAL)
    assert rubric.ref_name == "demo@1.0.0" and rubric.content_hash().startswith("sha256:")


@pytest.mark.parametrize("old, new, line, field, message", [
    ("    weight: 2\n", "    weight: 2\n    colour: red\n", 11, "criteria.0.colour",
     "unknown field"),
    ("    pass_at: 4\n", "", 11, "criteria.1", "pass_at"),
    ('version: "1.0.0"', "version: 1.0", 2, "version", "quoted semantic version"),
    ("    scale: binary\n", "    scale: binary\n    offline: {signal: pixel.ssmi, better: higher,"
     " pass_at: 0.5}\n", 10, "criteria.0.offline.signal", "unknown signal"),
    ("    scale: binary\n", "    scale: binary\n    offline: {rule: magic}\n", 10,
     "criteria.0.offline.rule", "unknown rule"),
    ("levels: {1: bad, 2: weak, 3: fine, 4: good, 5: great}",
     "levels: {1: bad, 2: weak, 4: good}", 11, "criteria.1", "no gaps"),
    ("  - id: second", "  - id: first", 6, "criteria", "duplicate criterion id"),
    ("pass_threshold: 0.7", "pass_threshold: 1.5", 16, "pass_threshold", "less than or equal"),
])
def test_schema_errors_name_line_and_field(old: str, new: str, line: int, field: str,
                                           message: str) -> None:
    assert old in MINIMAL
    error = _error(MINIMAL.replace(old, new, 1))
    assert error.path == "demo.yaml"
    assert error.field == field
    assert message in str(error)
    assert error.line == line, str(error)
    assert str(error).startswith(f"demo.yaml:{line}: ")


def test_yaml_syntax_error_has_a_line() -> None:
    error = _error(MINIMAL.replace("criteria:\n", "criteria:\n  - [\n", 1))
    assert error.line is not None and "not valid YAML" in str(error)


def test_offline_signal_rule_must_fit_the_scale() -> None:
    text = MINIMAL.replace("    pass_at: 4\n", "    pass_at: 4\n    offline: {signal: pixel.ssim, "
                           "better: higher, pass_at: 0.5}\n")
    assert "levels_at" in str(_error(text))
    ok = MINIMAL.replace("    pass_at: 4\n", "    pass_at: 4\n    offline: {signal: pixel.ssim, "
                         "better: higher, levels_at: {2: 0.3, 3: 0.5, 4: 0.7, 5: 0.9}}\n")
    parse_rubric_text(ok)
    wrong_order = ok.replace("{2: 0.3, 3: 0.5", "{2: 0.6, 3: 0.5")
    assert "stricter" in str(_error(wrong_order))


def test_lock_refuses_an_edited_published_rubric(rubrics_copy: Path) -> None:
    path = rubrics_copy / "figure-match" / "1.0.0.yaml"
    path.write_text(path.read_text().replace("pass_threshold: 0.7", "pass_threshold: 0.6"))
    library = RubricLibrary(rubrics_copy)
    with pytest.raises(RubricError, match="edited in place") as caught:
        library.load("figure-match@1.0.0")
    assert "1.0.0.yaml" in str(caught.value)
    # The other rubric is unaffected.
    library.load("verdict-justification@1.0.0")


def test_comments_and_layout_are_not_content(rubrics_copy: Path) -> None:
    path = rubrics_copy / "figure-match" / "1.0.0.yaml"
    path.write_text("# a new comment\n" + path.read_text())
    RubricLibrary(rubrics_copy).load("figure-match@1.0.0")


def test_lock_publishes_drafts_once(rubrics_copy: Path) -> None:
    draft = rubrics_copy / "figure-match" / "1.5.0.yaml"
    content = yaml.safe_load((rubrics_copy / "figure-match" / "1.4.0.yaml").read_text())
    content["version"] = "1.5.0"
    content["pass_threshold"] = 0.75
    draft.write_text(yaml.safe_dump(content, sort_keys=False))
    library = RubricLibrary(rubrics_copy)
    assert library.latest_entry("figure-match").version == "1.4.0"  # drafts are not defaults
    assert library.lock_drafts() == ["figure-match@1.5.0"]
    library = RubricLibrary(rubrics_copy)
    assert library.latest_entry("figure-match").version == "1.5.0"
    assert library.lock_drafts() == []
    draft.write_text(draft.read_text().replace("0.75", "0.8"))
    with pytest.raises(RubricError, match="edited in place"):
        RubricLibrary(rubrics_copy).load("figure-match@1.5.0")


def test_file_must_match_its_path(rubrics_copy: Path) -> None:
    (rubrics_copy / "demo").mkdir()
    (rubrics_copy / "demo" / "2.0.0.yaml").write_text(MINIMAL)
    with pytest.raises(RubricError, match="declares demo@1.0.0 but its path says demo@2.0.0"):
        RubricLibrary(rubrics_copy).load("demo@2.0.0")


def test_unknown_rubric(rubrics_copy: Path) -> None:
    # A typo'd id lists the known ids and the closest one.
    with pytest.raises(RubricError) as typo:
        RubricLibrary(rubrics_copy).load("figure-mach")
    assert "known: falsification-audit, figure-match, verdict-justification" in str(typo.value)
    assert "did you mean 'figure-match'?" in str(typo.value)
    with pytest.raises(RubricError, match="no rubric figure-match@9.9.9"):
        RubricLibrary(rubrics_copy).load("figure-match@9.9.9")
    with pytest.raises(RubricError, match="rubrics folder not found"):
        RubricLibrary(rubrics_copy / "absent")


def test_the_rubric_a_run_judged_with(rubrics_copy: Path) -> None:
    """One loader for the rubric a judgment names (resolve, review, calibrate, the report): the
    very text it was judged with, or one RubricError."""
    library = RubricLibrary(rubrics_copy)
    ref = library.load("figure-match@1.0.0").ref()
    assert library.judged(ref).ref() == ref
    other = ref.model_copy(update={"hash": "sha256:" + "0" * 64})
    with pytest.raises(RubricError, match="is not the text the run judged with"):
        library.judged(other)
    with pytest.raises(RubricError, match="no rubric figure-match@9.9.9"):
        library.judged(ref.model_copy(update={"version": "9.9.9"}))


# --- aggregation -------------------------------------------------------------------------------


def _answers(**values: bool | int | None | str) -> list[CriterionAnswer]:
    answers = []
    for criterion_id, value in values.items():
        if value == "n/a":
            answers.append(CriterionAnswer(criterion_id=criterion_id,
                                           status=AnswerStatus.not_applicable))
        elif value is None:
            answers.append(CriterionAnswer(criterion_id=criterion_id,
                                           status=AnswerStatus.unscored, reason="x"))
        else:
            answers.append(CriterionAnswer(criterion_id=criterion_id, status=AnswerStatus.scored,
                                           value=value))
    return answers


def test_weighted_mean_and_ordinal_normalisation() -> None:
    rubric = parse_rubric_text(MINIMAL)
    # first: yes (weight 2) -> 1; second: level 4 of 5 -> 0.75 (weight 1): (2 + 0.75) / 3
    result = aggregate(rubric, _answers(first=True, second=4))
    assert result.score == pytest.approx(2.75 / 3)
    assert result.coverage == 1 and result.outcome is Outcome.passed
    result = aggregate(rubric, _answers(first=False, second=5))
    assert result.score == pytest.approx(1 / 3) and result.outcome is Outcome.failed


def test_figure_match_1_2_0_fails_a_figure_whose_overall_match_is_below_4() -> None:
    """1.2.0 only made overall_match a gate: the chart with a missing series that 1.1.0 let pass
    on its weighted mean fails there, and a figure that matches still passes."""
    library = RubricLibrary(RUBRICS)
    missing_series = _answers(same_trend=True, axes_and_scales=5, same_series=False,
                              values_within_tolerance=True, no_misleading_cropping=True,
                              independent_reproduction=True, overall_match=3)
    # (2 + 2 + 0 + 2 + 1 + 1 + 3 * 0.5) / 12 = 0.79 >= 0.7
    older = aggregate(library.load("figure-match@1.1.0"), missing_series)
    assert older.score == pytest.approx(9.5 / 12) and older.outcome is Outcome.passed
    newer = aggregate(library.load("figure-match@1.2.0"), missing_series)
    assert newer.score == pytest.approx(9.5 / 12)
    assert newer.outcome is Outcome.failed and newer.failed_gates == ["overall_match"]
    matching = [a if a.criterion_id != "overall_match" else a.model_copy(update={"value": 4})
                for a in missing_series]
    assert aggregate(library.load("figure-match@1.2.0"), matching).outcome is Outcome.passed


def test_partial_coverage_is_incomplete() -> None:
    rubric = parse_rubric_text(MINIMAL)
    result = aggregate(rubric, _answers(first=True, second=None))
    assert result.score == 1.0
    assert result.coverage == pytest.approx(2 / 3)
    assert result.outcome is Outcome.incomplete
    assert aggregate(rubric, []).outcome is Outcome.incomplete


def test_not_applicable_carries_no_weight() -> None:
    rubric = parse_rubric_text(MINIMAL)
    result = aggregate(rubric, _answers(first="n/a", second=5))
    assert result.coverage == 1 and result.score == 1 and result.outcome is Outcome.passed


def test_failed_gate_fails_at_once() -> None:
    rubric = parse_rubric_text(MINIMAL.replace("    weight: 2\n", "    weight: 2\n    gate: true\n"))
    result = aggregate(rubric, _answers(first=False, second=None))
    assert result.outcome is Outcome.failed and result.failed_gates == ["first"]


def test_applies_if() -> None:
    rubric = RubricLibrary(RUBRICS).load("verdict-justification@1.0.0")
    proof = rubric.criterion("proof_for_falsified")
    assert proof.applies(verdict=Verdict.falsified, kind=ClaimKind.number)
    assert not proof.applies(verdict=Verdict.verified, kind=ClaimKind.number)
    logs = rubric.criterion("value_in_logs")
    assert not logs.applies(verdict=Verdict.verified, kind=ClaimKind.figure)


# --- CLI -----------------------------------------------------------------------------------------


def test_cli_list_show_validate_diff(rubrics_copy: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["rubric", "list", "--rubrics-dir", str(rubrics_copy)])
    assert result.exit_code == 0 and "figure-match@1.0.0" in result.output
    assert "published" in result.output
    result = runner.invoke(main, ["rubric", "show", "figure-match@1.0.0",
                                  "--rubrics-dir", str(rubrics_copy)])
    assert result.exit_code == 0 and "same_trend" in result.output and "4 (pass)" in result.output
    result = runner.invoke(main, ["rubric", "validate", str(rubrics_copy / "figure-match" /
                                                           "1.0.0.yaml")])
    assert result.exit_code == 0 and "valid" in result.output
    bad = rubrics_copy / "bad.yaml"
    bad.write_text(MINIMAL.replace("scale: binary", "scale: trinary"))
    result = runner.invoke(main, ["rubric", "validate", str(bad)])
    assert result.exit_code == 1 and "bad.yaml:9" in result.output

    newer = yaml.safe_load((rubrics_copy / "figure-match" / "1.0.0.yaml").read_text())
    newer["version"] = "1.5.0"
    newer["criteria"] = [c for c in newer["criteria"] if c["id"] != "no_misleading_cropping"]
    newer["criteria"][0]["weight"] = 3
    (rubrics_copy / "figure-match" / "1.5.0.yaml").write_text(yaml.safe_dump(newer))
    result = runner.invoke(main, ["rubric", "diff", "figure-match@1.0.0", "figure-match@1.5.0",
                                  "--rubrics-dir", str(rubrics_copy)])
    assert result.exit_code == 0
    assert "removed criterion no_misleading_cropping" in result.output
    assert "changed criterion same_trend: weight" in result.output
    assert "-  weight: 2" in result.output or "-  weight: 2.0" in result.output


def test_cli_lock_error_is_one_line(rubrics_copy: Path) -> None:
    path = rubrics_copy / "verdict-justification" / "1.0.0.yaml"
    path.write_text(path.read_text().replace("weight: 3", "weight: 4"))
    result = CliRunner().invoke(main, ["rubric", "show", "verdict-justification@1.0.0",
                                       "--rubrics-dir", str(rubrics_copy)])
    assert result.exit_code == 1
    assert "edited in place" in result.output and "Traceback" not in result.output


def test_load_rubric_file_reports_path(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(MINIMAL.replace("title: A demo rubric\n", ""))
    with pytest.raises(RubricError, match=r"r\.yaml:1: Field required \(field: title\)"):
        load_rubric_file(path)


def test_a_rubric_level_applies_if_selects_the_claims_judged() -> None:
    from judging.models import Claim

    library = RubricLibrary(RUBRICS)
    audit = library.load("falsification-audit@1.0.0")
    verdict = library.load("verdict-justification@1.0.0")

    def claim(verdict_value: str | None, kind: str = "theorem") -> Claim:
        return Claim(claim_id="p/c1", kind=kind, statement="A claim of the paper.",
                     verdict=verdict_value,
                     absent={} if verdict_value else {"verdict": "no label on the page"})

    assert audit.applies_to_claim(claim("falsified"))
    for other in ("verified", "inconclusive", None):  # no verdict found: not a falsification
        assert not audit.applies_to_claim(claim(other))
        assert verdict.applies_to_claim(claim(other))
    assert audit.describe_scope() == "claims with verdict falsified"
    # published rubrics written before the field existed keep their hashes
    assert verdict.applies_if is None and library.lock[verdict.ref_name] == verdict.content_hash()
