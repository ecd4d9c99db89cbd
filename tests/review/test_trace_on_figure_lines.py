"""The chart reading trace is written once per figure claim (issue 43): on the judgment lines of
its figure rubric only, not copied onto every line. The review record of the claim's verdict
rubric, and the report, take it from the figure line of the same claim; a run written before,
with the trace on every line, reads the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judging.report.html import write_html_report
from judging.review.dataset import ai_assessment
from judging.review.push import PushOptions, plan_reviews
from judging.rubrics import RubricLibrary
from judging.run.runner import RunRequest, run_judging
from judging.rundir import claim_chart_trace
from judging.rundir.store import RunStore
from tests.conftest import SubmissionBuilder
from tests.signals.chart.drawn import two_losses

pytestmark = pytest.mark.slow  # a whole `judging run` reading two charts


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("trace-lines")
    submission = SubmissionBuilder(base / "sub")
    submission.figure_claim(published=two_losses(), reproduced=two_losses(legend=False))
    out = base / "run"
    run_judging(RunRequest(sources=[str(submission.write())], out=out))
    return out


def _assessments(run: Path) -> dict[str, str]:
    planned, _ = plan_reviews(RunStore.open(run, create=False), RubricLibrary(),
                              PushOptions(workspace="w", blind_share=0.0))
    return {item.rubric.id: ai_assessment(item.judgment) for item in planned}


def _report_readings(run: Path, out: Path) -> int:
    return write_html_report(run, out=out).read_text(encoding="utf-8").count("Chart reading")


def test_only_the_figure_rubric_line_carries_the_trace(run: Path) -> None:
    lines = list(RunStore.open(run, create=False).latest())
    figure = [j for j in lines if j.rubric is not None and j.rubric.id == "figure-match"]
    others = [j for j in lines if j.rubric is not None and j.rubric.id != "figure-match"]
    assert len(figure) == 1 and others
    assert figure[0].chart_trace is not None
    assert all(j.chart_trace is None for j in others)
    assert claim_chart_trace(lines) == figure[0].chart_trace


def test_every_record_of_the_claim_shows_the_figure_lines_trace(run: Path, tmp_path: Path
                                                                ) -> None:
    assessments = _assessments(run)
    assert set(assessments) >= {"figure-match", "verdict-justification"}
    figure = assessments["figure-match"].split("### Chart reading", 1)[1]
    verdict = assessments["verdict-justification"].split("### Chart reading", 1)[1]
    assert figure == verdict and "**Read of the reproduced figure**" in figure
    assert _report_readings(run, tmp_path / "report.html") == 1


def test_a_run_with_the_trace_on_every_line_reads_the_same(run: Path, tmp_path: Path) -> None:
    """Runs written before issue 43 copied the trace onto each line of a figure claim."""
    old = tmp_path / "old"
    old.mkdir()
    for path in run.iterdir():
        if path.is_file():
            (old / path.name).write_bytes(path.read_bytes())
    rows = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    trace = next(row["chart_trace"] for row in rows if row.get("chart_trace"))
    (old / "judgments.jsonl").write_text("".join(
        json.dumps({**row, "chart_trace": trace}) + "\n" for row in rows))
    for name in ("diffs", "measurements"):
        if (run / name).is_dir():
            (old / name).symlink_to(run / name)
    assert _assessments(old) == _assessments(run)
    assert _report_readings(old, tmp_path / "old.html") == 1
