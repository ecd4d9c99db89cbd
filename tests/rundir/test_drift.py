"""The drift report (`rundir.drift_report`) reads the run's lines in two streamed passes, never as
one list (issue 43): it gives what sorting every line by the time of its call gives, with lines
written out of call order, two judges, cached answers and a line with nothing served."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from judging.models import ClaimKey, DriftReport, Judgment, ServedChange
from judging.rundir import RunStore, drift_report
from tests.constructed import _judgment

BASE = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def _line(verdict_rubric, i: int, judge: str, served: str | None, minutes: int, *,
          cached: bool = False) -> Judgment:
    line = _judgment(verdict_rubric, ClaimKey(submission_id="team/s", claim_id=f"c{i}"),
                     {}, judge=judge)
    provenance = line.provenance.model_copy(update={
        "timestamp": BASE + timedelta(minutes=minutes), "cached": cached,
        "settings": {} if served is None else {"served_model": served}})
    return line.model_copy(update={"provenance": provenance})


def _sorted_report(lines: list[Judgment]) -> DriftReport:
    """The report as it was made before it streamed: every line sorted by its call's time."""
    report = DriftReport()
    for line in sorted(lines, key=lambda j: j.provenance.timestamp):
        served = line.provenance.served()
        if served is None or line.provenance.cached:
            continue
        seen = report.served.setdefault(line.judge, [])
        if served not in seen:
            seen.append(served)
        if served != seen[0]:
            report.changes.append(ServedChange(
                judge=line.judge, claim=line.claim, rubric=str(line.rubric), served=served,
                first=seen[0], at=line.provenance.timestamp))
    return report


def test_drift_streams_what_sorting_every_line_gives(tmp_path: Path, verdict_rubric) -> None:
    a, b = "openai:model-a", "openai:model-b"
    # File order is not call order: the judge's first call (minute 1) is written third, and the
    # second judge's lines come before the first's.
    written = [_line(verdict_rubric, 0, b, "b-2", 5), _line(verdict_rubric, 1, a, "a-2", 3),
               _line(verdict_rubric, 2, a, "a-1", 1), _line(verdict_rubric, 3, b, "b-1", 0),
               _line(verdict_rubric, 4, a, "a-3", 0, cached=True),  # a replay: not a call
               _line(verdict_rubric, 5, a, None, 2),  # the endpoint said nothing
               _line(verdict_rubric, 6, a, "a-2", 3), _line(verdict_rubric, 7, a, "a-1", 4)]
    store = RunStore.open(tmp_path / "run")
    for line in written:
        store.append(line)
    report = drift_report(store)
    assert report == _sorted_report(written)
    assert list(report.served) == [b, a] and report.served[a] == ["a-1", "a-2"]
    assert [(c.claim.claim_id, c.served, c.first) for c in report.changes] == [
        ("c1", "a-2", "a-1"), ("c6", "a-2", "a-1"), ("c0", "b-2", "b-1")]
    store.close()
