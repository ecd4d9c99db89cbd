"""The chart reading trace reaches the reviewer (issue 41): a drawn figure pair whose reproduction
lost its legend is judged offline, pushed to the real local Argilla server, and its record read
back shows, beside the two figures, what the reader read of each and why the AI abstained."""

from __future__ import annotations

import uuid
from pathlib import Path

from judging.review.dataset import record_id
from judging.review.push import PushOptions, connect, push_run
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore
from tests.conftest import SubmissionBuilder
from tests.signals.chart.drawn import two_losses


def test_a_pushed_record_shows_why_the_ai_did_not_answer(argilla, tmp_path: Path) -> None:
    submission = SubmissionBuilder(tmp_path / "sub")
    submission.figure_claim(published=two_losses(), reproduced=two_losses(legend=False))
    run = tmp_path / "run"
    run_judging(RunRequest(sources=[str(submission.write())], out=run))
    (line,) = [j for j in RunStore.open(run, create=False).latest()
               if j.rubric is not None and j.rubric.id == "figure-match"]
    assert line.chart_trace is not None and not line.chart_trace.confirmed
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(run, client=client, options=PushOptions(workspace=workspace, blind_share=0.0))
    name = f"figure-match-{line.rubric.version}"
    dataset = client.datasets(name=name, workspace=workspace)
    records = {str(r.id): r for r in dataset.records(with_suggestions=True)}
    record = records[record_id(str(line.claim), "figure-match", line.rubric.version)]
    # The figures are there ...
    assert record.fields["figures"]["published"].startswith("data:image/png;base64,")
    assert record.fields["figures"]["reproduced"].startswith("data:image/png;base64,")
    # ... and beside them the reading: what was read of each figure, and why no answer.
    text = record.fields["ai_assessment"]
    reading = text.split("### Chart reading", 1)[1]
    assert "nothing confirmed by two independent readings" in reading
    assert "a swapped legend cannot be ruled out" in reading
    assert "**Read of the published figure**" in reading
    assert "legend (2): train loss, val loss" in reading
    assert "**Read of the reproduced figure**" in reading and "no legend read" in reading
    assert "x axis: linear" in reading
    # What the AI would have answered reads as the question's own answers (yes / no, a level),
    # not as Python's True / False.
    assert "would answer yes" in text or "would answer no" in text
    assert "would answer True" not in text and "would answer False" not in text
    # No chart criterion was suggested: the AI abstained, and the record says why.
    suggested = {s.question_name for s in record.suggestions}
    unscored = {a.criterion_id for a in line.answers if a.status.value == "unscored"}
    assert unscored and not unscored & suggested
