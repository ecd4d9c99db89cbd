"""Honest small numbers (issue 39): no interval from fewer items than it needs ("too few to say
(n=…)"), no point dressed as an interval where the bootstrap degenerates, the rubrics calibration
skipped named with the reason, and each rubric's title counting only the labels that apply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.calibrate.metrics import (
    MIN_ITEMS_FOR_INTERVAL,
    f1_interval,
    retest_agreement,
    too_few,
)
from judging.cli import main
from tests.conftest import EXAMPLES, REGISTRY, ROOT

pytestmark = pytest.mark.usefixtures("shared_measurements")

LABELS = ROOT / "calibration" / "sets" / "examples" / "labels.jsonl"


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    """The demo's run: the examples' submissions and logbook, offline, as `make demo` judges."""
    run = tmp_path_factory.mktemp("small") / "run"
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "submissions"),
                                       str(EXAMPLES / "logbooks"), "--claims", str(REGISTRY),
                                       "--out", str(run), "--judge", "offline"])
    assert result.exit_code == 0, result.output
    return run


def _per_rubric(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in path.read_text().splitlines():
        rubric = json.loads(line)["rubric"]
        ref = f"{rubric['id']}@{rubric['version']}"
        counts[ref] = counts.get(ref, 0) + 1
    return counts


def test_the_demo_calibration_is_honest_about_its_few_labels(demo_run: Path,
                                                              tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["calibrate", str(demo_run), "--labels", str(LABELS),
                                       "--out", str(tmp_path / "cal")], terminal_width=200)
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    # a point is never printed as an interval, and a criterion of 2 or 3 labels gets no figure
    assert "[1.00, 1.00]" not in out
    assert re.search(r"too few to say \(n=[1-4]\)", out)
    # each title counts the labels of its own rubric version, not the file's total
    counts = _per_rubric(LABELS)
    assert sum(counts.values()) == 223
    for ref in ("figure-match@1.4.0", "falsification-audit@1.0.0",
                "verdict-justification@1.2.0"):
        assert f"offline on {ref} — {counts[ref]} construction label(s) of this rubric version" \
            in out, ref
    # the default verdict rubric now has construction labels: nothing skipped
    assert "not calibrated" not in out
    artifact = json.loads(next((tmp_path / "cal" / "artifacts" / "verdict-justification@1.2.0")
                               .glob("*.json")).read_text())
    assert artifact["labels"]["used"] == counts["verdict-justification@1.2.0"] == 24
    few = [c for c in artifact["criteria"] if 0 < c["support"] < MIN_ITEMS_FOR_INTERVAL]
    assert few and all(c["f1_interval"] is None and c["work_saved"] is None for c in few)
    report = next((tmp_path / "cal" / "reports").rglob("report.md")).read_text()
    assert "too few to say (n=" in report


def test_a_rubric_without_labels_is_named_with_the_reason(demo_run: Path,
                                                          tmp_path: Path) -> None:
    older = tmp_path / "labels.jsonl"
    older.write_text("".join(line + "\n" for line in LABELS.read_text().splitlines()
                             if '"version": "1.2.0", "id": "verdict-justification"' not in line
                             and not ('"verdict-justification"' in line and '"1.2.0"' in line)))
    assert "verdict-justification@1.2.0" not in _per_rubric(older)
    result = CliRunner().invoke(main, ["calibrate", str(demo_run), "--labels", str(older),
                                       "--out", str(tmp_path / "cal")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert ("not calibrated: offline on verdict-justification@1.2.0: no label for this "
            "version; the labels are for version(s) 1.0.0, 1.1.0") in _flat(result.output)


def test_one_label_and_two_retest_pairs_are_too_few(tmp_path: Path) -> None:
    # the bootstrap of one or two items returns the point itself: no interval at all
    assert f1_interval([True], [True], positive=True, labels=[True, False]) is None
    two = retest_agreement(["yes", "no"], ["yes", "no"], labels=["yes", "no"])
    assert two.disagreement_interval is None and two.ceiling_interval is None
    assert too_few(two.n) == "too few to say (n=2)"
    # perfect agreement on enough items: an interval that is not a point (Wilson)
    many = retest_agreement(["yes", "no"] * 5, ["yes", "no"] * 5, labels=["yes", "no"])
    low, high = many.disagreement_interval
    assert low == 0 and 0.2 < high < 0.4
    f1 = f1_interval([True] * 5 + [False] * 5, [True] * 5 + [False] * 5, positive=True,
                     labels=[True, False])
    assert f1[1] == 1 and 0.5 < f1[0] < 0.9
    # the CLI's table retest on two items says so
    table = tmp_path / "retest.csv"
    table.write_text("item,first,second\n1,verified,verified\n2,falsified,falsified\n")
    result = CliRunner().invoke(main, ["calibrate", "--table", str(table), "--retest",
                                       "first,second", "--out", str(tmp_path / "cal")],
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "too few to say (n=2)" in result.output and "[0.00%, 0.00%]" not in result.output


def test_calibrate_table_prints_intervals(tmp_path: Path) -> None:
    rows = ["item,judge,h1,h2"] + [f"{i},{'pass' if i % 3 else 'fail'},"
                                   f"{'pass' if i % 4 else 'fail'},{'pass' if i % 4 else 'fail'}"
                                   for i in range(40)]
    table = tmp_path / "labels.csv"
    table.write_text("\n".join(rows) + "\n")
    result = CliRunner().invoke(main, ["calibrate", "--table", str(table), "--judge-column",
                                       "judge", "--human-columns", "h1,h2", "--out",
                                       str(tmp_path / "cal")], terminal_width=200)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cal" / "reports" / "table" / "judge" / "report.json")
                        .read_text())
    accuracy = report["judges"]["judge"]["accuracy"]
    low, high = report["intervals"]["judge"]["accuracy"]
    assert low < accuracy < high
    assert f"{accuracy:.4f} [{low:.2f}, {high:.2f}]" in result.output
    tiny = tmp_path / "tiny.csv"
    tiny.write_text("\n".join(rows[:4]) + "\n")
    result = CliRunner().invoke(main, ["calibrate", "--table", str(tiny), "--judge-column",
                                       "judge", "--human-columns", "h1,h2", "--out",
                                       str(tmp_path / "cal2")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "too few to say (n=3)" in result.output


def test_a_retest_of_the_offline_judge_on_two_lines_is_too_few(demo_run: Path,
                                                                tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(demo_run, run)
    result = CliRunner().invoke(main, ["calibrate", str(run), "--retest", "2", "--out",
                                       str(tmp_path / "cal")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "re-judged 2 of" in result.output
    assert "too few to say (n=1)" in result.output or "too few to say (n=2)" in result.output
    assert "[1.00, 1.00]" not in result.output and "1.000 [" not in result.output
