"""The reading trace of a figure pair (issue 41, "the reader as a product"): what the chart
reader read of each figure (axes, tick labels, legend, series, panels), how sure it was, and why
the AI abstained, recorded with the chart signals on the judgment lines, kept by the measurement
cache, shown in the HTML report, and bounded in size."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from judging.models import (
    MAX_TRACE_BYTES,
    MAX_TRACE_LABEL,
    MAX_TRACE_NAMES,
    MAX_TRACE_NOTES,
    MAX_TRACE_PANEL_NOTES,
    MAX_TRACE_PANELS,
    MAX_TRACE_SERIES,
    MAX_TRACE_TEXT,
    MAX_TRACE_TICKS,
    AnswerStatus,
    AxisTrace,
    ChartTrace,
    FigureTrace,
    Judgment,
    PanelPairTrace,
    PanelTrace,
    SeriesTrace,
)
from judging.report.html import write_html_report
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore
from judging.signals.chart import ChartReading, Panel, Series, chart_trace
from judging.signals.chart.types import ChartComparison
from tests.conftest import SubmissionBuilder
from tests.signals.chart.drawn import NAMES, two_losses

SWAP_DOUBT = "a swapped legend cannot be ruled out"


def _figure_line(run: Path) -> Judgment:
    (line,) = [j for j in RunStore.open(run, create=False).latest()
               if j.rubric is not None and j.rubric.id == "figure-match"]
    return line


@pytest.fixture(scope="module")
def unnamed_reproduction(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run of one drawn pair whose reproduction lost its legend: the data agree, but a swap of
    the two named curves cannot be ruled out, so the offline judge abstains. (run, cache)"""
    root = tmp_path_factory.mktemp("trace")
    submission = SubmissionBuilder(root / "sub")
    submission.figure_claim(published=two_losses(), reproduced=two_losses(legend=False))
    run, cache = root / "run", root / "cache"
    run_judging(RunRequest(sources=[str(submission.write())], out=run, measure_cache=cache))
    return run, cache


def test_the_trace_says_what_was_read_and_why_the_ai_abstained(unnamed_reproduction) -> None:
    run, _ = unnamed_reproduction
    line = _figure_line(run)
    trace = line.chart_trace
    assert trace is not None
    published, reproduced = trace.published, trace.reproduced
    assert published.source == reproduced.source == "image"
    assert published.readable and published.panel_count == 1
    (panel,) = published.panels
    assert panel.legend == list(NAMES)
    assert sorted(s.name for s in panel.series) == sorted(NAMES)
    for axis in (panel.x, panel.y):
        assert axis is not None and axis.scale == "linear" and axis.tick_count >= 5
        assert 0 < axis.confidence <= 1
    assert {"0", "2", "4", "6", "8", "10"} <= set(panel.x.ticks)
    (rep_panel,) = reproduced.panels
    assert rep_panel.legend == [] and all(s.name is None for s in rep_panel.series)
    # The evidence: the data agree, yet nothing is confirmed, and the doubt says why.
    (pair,) = trace.panels
    assert pair.series is not None and pair.series > 0.9 and pair.names == "unread"
    assert trace.confirmed == [] and trace.agreement == 0.0
    assert any(SWAP_DOUBT in d for d in trace.doubts)
    assert trace.same_data == line.signals["chart.same_data"].value
    # ... and the offline judge did not answer the chart criteria.
    assert any(a.status is AnswerStatus.unscored for a in line.answers)
    # The judgments file holds it, and reads back as it was written.
    raw = (run / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    stored = [json.loads(r)["chart_trace"] for r in raw if '"figure-match"' in r]
    assert stored and ChartTrace.model_validate(stored[-1]) == trace
    assert len(json.dumps(stored[-1])) < MAX_TRACE_BYTES


def test_the_report_shows_the_trace_beside_the_figures(unnamed_reproduction) -> None:
    run, _ = unnamed_reproduction
    page = write_html_report(run).read_text(encoding="utf-8")
    section = page.split('<details class="reading" open>', 1)[1].split("</details>", 1)[0]
    text = html.unescape(section)
    assert "Evidence: why the AI answered or abstained" in text
    assert "nothing confirmed by two independent readings" in text
    assert SWAP_DOUBT in text
    assert "legend (2): train loss, val loss" in text
    assert "no legend read" in text
    assert "x axis: linear" in text and "tick labels (0, 2, 4, 6, 8, 10)" in text


def test_the_measurement_cache_keeps_the_trace(unnamed_reproduction, tmp_path: Path) -> None:
    run, cache = unnamed_reproduction
    submission = SubmissionBuilder(tmp_path / "sub")
    submission.figure_claim(published=two_losses(), reproduced=two_losses(legend=False))
    again = tmp_path / "again"
    run_judging(RunRequest(sources=[str(submission.write())], out=again, measure_cache=cache))
    # measured once, in the first run: this one read it from the cache
    assert '"measure_cache_hits": 1' in (again / "run.json").read_text(encoding="utf-8")
    assert _figure_line(again).chart_trace == _figure_line(run).chart_trace


def test_an_unreadable_figure_says_why_there_is_no_evidence() -> None:
    readable = ChartReading([Panel(bbox=(0, 0, 10, 10), x=None, y=None, series=[
        Series(name=None, style="#000000", kind="line", points=np.zeros((3, 2)),
               confidence=0.5, x_units="normalised", y_units="normalised")],
        problems=["x axis unreadable: no tick labels found"])], True, size=(10, 10))
    unreadable = ChartReading([], False, "no plot area found", size=(10, 10))
    comparison = ChartComparison(signals={}, reasons={
        "chart.same_data": "reproduced chart unreadable: no plot area found"})
    trace = chart_trace(readable, unreadable, comparison, published_source="image",
                        reproduced_source="image")
    assert trace.same_data is None and "no plot area found" in trace.absent
    assert trace.reproduced.readable is False
    assert trace.published.panels[0].series[0].units == "normalised"
    markdown = trace.markdown()
    assert "no evidence: reproduced chart unreadable" in markdown
    assert "x axis: not read" in markdown and "no tick labels found" in markdown


def test_the_trace_is_bounded() -> None:
    """Every list and text at its bound still fits MAX_TRACE_BYTES; past a bound the model
    refuses the trace (a file cannot smuggle in more); the builder cuts and counts."""
    label, text = "8" * MAX_TRACE_LABEL, "t" * MAX_TRACE_TEXT
    axis = AxisTrace(scale="log", data_range=(-1.5e300, 1.5e300), ticks=[label] * MAX_TRACE_TICKS,
                     tick_count=10 ** 6, confidence=0.123456)
    panel = PanelTrace(bbox=(10 ** 5,) * 4, x=axis, y=axis, legend=[label] * MAX_TRACE_NAMES,
                       legend_count=10 ** 6, series=[SeriesTrace(
                           name=label, style=label, kind="scatter", points=10 ** 9,
                           confidence=0.123456, units="x normalised")] * MAX_TRACE_SERIES,
                       series_count=10 ** 6, problems=[text] * MAX_TRACE_PANEL_NOTES,
                       problem_count=10 ** 6)
    figure = FigureTrace(source="image", readable=True, reason=text, size=(10 ** 5, 10 ** 5),
                         panels=[panel] * MAX_TRACE_PANELS, panel_count=10 ** 6)
    pair = PanelPairTrace(index=1, series=0.1234, crossed=0.1234, ink=(0.1234, 0.1234),
                          series_on_ink=(0.1234, 0.1234), x_ticks=0.1234, x_data=0.1234,
                          axes_doubt=text, series_doubt=text, unmatched=10 ** 6, names="disagree")
    full = ChartTrace(published=figure, reproduced=figure, panels=[pair] * MAX_TRACE_PANELS,
                      same_data=0.1234, agreement=0.1234, difference=0.1234,
                      confirmed=[text] * MAX_TRACE_NOTES, doubts=[text] * MAX_TRACE_NOTES,
                      doubt_count=10 ** 6, reading_confidence=0.1234, absent=text)
    size = len(full.model_dump_json())
    print("largest trace:", size, "bytes")
    assert size < MAX_TRACE_BYTES
    with pytest.raises(ValidationError):
        ChartTrace.model_validate({**full.model_dump(), "doubts": [text] * (MAX_TRACE_NOTES + 1)})
    with pytest.raises(ValidationError):
        ChartTrace.model_validate({**full.model_dump(), "absent": text + "!"})
    with pytest.raises(ValidationError):
        ChartTrace.model_validate({**full.model_dump(), "unknown": 1})
    many = ChartReading([Panel(bbox=(0, 0, 10, 10), x=None, y=None, legend=["n" * 500] * 40,
                               series=[Series(name="s", style="#000000", kind="bar",
                                              points=np.zeros((2, 2)), confidence=0.9)] * 40,
                               problems=["p" * 900] * 9)] * 20, True, size=(10, 10))
    built = chart_trace(many, many, ChartComparison(signals={}, reasons={}),
                        published_source="image", reproduced_source="data").published
    assert built.panel_count == 20 and len(built.panels) == MAX_TRACE_PANELS
    assert built.panels[0].series_count == 40 and len(built.panels[0].series) == MAX_TRACE_SERIES
    assert len(built.panels[0].legend[0]) == MAX_TRACE_LABEL
    assert built.panels[0].problem_count == 9
    assert all(len(p) == MAX_TRACE_TEXT for p in built.panels[0].problems)


def test_judging_chart_shows_the_evidence_of_two_figures(tmp_path: Path) -> None:
    """`judging chart A B` prints what the evidence confirmed or doubted; `--json` carries the
    whole trace."""
    from click.testing import CliRunner

    from judging.cli import main

    published, reproduced = tmp_path / "a.png", tmp_path / "b.png"
    published.write_bytes(two_losses())
    reproduced.write_bytes(two_losses(legend=False))
    shown = CliRunner().invoke(main, ["chart", str(published), str(reproduced)],
                               terminal_width=400)
    assert shown.exit_code == 0, shown.output
    assert "Evidence: why the AI answered or abstained" in shown.output
    assert SWAP_DOUBT in shown.output
    as_json = CliRunner().invoke(main, ["chart", str(published), str(reproduced), "--json"])
    assert as_json.exit_code == 0, as_json.output
    trace = ChartTrace.model_validate(json.loads(as_json.output)["trace"])
    assert trace.published.panels[0].legend == list(NAMES)
    assert any(SWAP_DOUBT in d for d in trace.doubts)


def test_what_was_not_read_is_said_so_not_shown_as_a_number() -> None:
    """An axis whose data range is not finite (recorded as None) read "nan to nan", and a
    weighing without its agreement or difference (None) read "agreement 0.00": a number
    nobody measured, beside the ones that were."""
    axis = AxisTrace(scale="log", data_range=None, ticks=["1", "10"], tick_count=2,
                     confidence=0.5)
    figure = FigureTrace(source="image", readable=True, size=(10, 10), panel_count=1,
                         panels=[PanelTrace(bbox=(0, 0, 10, 10), x=axis, y=axis)])
    trace = ChartTrace(published=figure, reproduced=figure, same_data=0.25)
    text = trace.markdown()
    assert "nan" not in text, text
    assert "agreement 0.00" not in text and "difference 0.00" not in text, text
    assert "x axis: log, data range not finite, confidence 0.50" in text, text
    assert "chart.same_data 0.25 (agreement unread, difference unread)" in text, text


def test_confirmations_past_the_bound_are_counted() -> None:
    """The doubts past MAX_TRACE_NOTES were counted, the confirmations cut silently: a
    reviewer read twelve and could not tell there were more."""
    from judging.signals.chart.evidence import Evidence

    empty = ChartReading([], True, size=(10, 10))
    confirmed = [f"panel {n}: series agree" for n in range(MAX_TRACE_NOTES + 5)]
    comparison = ChartComparison(signals={}, reasons={}, evidence=Evidence(
        agreement=0.9, difference=0.0, same_data=0.95, confirmed=confirmed))
    trace = chart_trace(empty, empty, comparison, published_source="image",
                        reproduced_source="image")
    assert len(trace.confirmed) == MAX_TRACE_NOTES and trace.confirmed_count == len(confirmed)
    assert "... 5 more confirmed" in trace.markdown()


def test_a_trace_that_fails_to_build_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace that cannot be built leaves the chart signals standing and a flag with the reason
    (it left nothing: the line looked like a pair never compared). Injected: no real figure pair
    is known to break the trace builder."""
    import io

    from PIL import Image

    import judging.signals.measure as measure

    published, reproduced = (Image.open(io.BytesIO(two_losses(legend=legend))).convert("RGB")
                             for legend in (True, False))
    fine = measure.compare_pair(published, reproduced, tolerance=None)
    assert fine.trace is not None and fine.flags == []

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ValueError("a panel with no axes")

    monkeypatch.setattr(measure, "chart_trace", broken)
    pair = measure.compare_pair(published, reproduced, tolerance=None)
    assert pair.trace is None
    assert pair.signals == fine.signals  # the signals stand
    assert [f.name for f in pair.flags] == [measure.TRACE_FAILED]
    assert "ValueError: a panel with no axes" in pair.flags[0].detail
