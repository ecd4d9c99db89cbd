"""Data-aware chart signals: read the plotted data back from a chart image and compare two charts.

Pure functions on PIL images (OCR through tesserocr's persistent API, one engine per thread).
Anything unreadable says so: a signal that could not be computed is absent with a reason, never 0.

API (stable; the measure stage, the offline judge's rubrics figure-match 1.1.0 and later, the LLM
prompt and the benchmarks rely on these names):

    read_chart(image, *, ocr=None) -> ChartReading
    compare_charts(published, reproduced, *, tolerance=None) -> ChartComparison
    render_overlay(published, reproduced, comparison, *, size=512) -> PIL.Image | None
    reading_from_data(data, *, other=None) -> ChartReading   (a figure's data file, no image)
    without_reference_lines(image, data) -> (ChartReading, int)   (for image-to-data comparisons)
    chart_trace(published, reproduced, comparison, *, published_source, reproduced_source)
        -> judging.models.ChartTrace   (what was read, how sure, why same_data is what it is)

Signal group "chart.*" (see CHART_SIGNALS): the named data-aware signal is `chart.match_score`;
CHART_SOURCE_SIGNALS say whether each side was taken from its data file or read from its image.
"""

from __future__ import annotations

import math

from PIL import Image

from judging.models import Signal, Tolerance
from judging.signals.chart.compare import compare, overlay
from judging.signals.chart.data import reading_from_data, without_reference_lines
from judging.signals.chart.read import read
from judging.signals.chart.reading_trace import chart_trace, figure_trace
from judging.signals.chart.settings import (
    DEFAULT_COMPARE,
    DEFAULT_READER,
    CompareSettings,
    EvidenceSettings,
    ReaderSettings,
)
from judging.signals.chart.types import (
    CHART_SIGNALS,
    CHART_SOURCE_SIGNALS,
    Axis,
    ChartComparison,
    ChartReading,
    Panel,
    Series,
    Tick,
)


def read_chart(image: Image.Image, *, ocr: object | None = None,
               settings: ReaderSettings = DEFAULT_READER) -> ChartReading:
    """Read a chart image: plot areas, axes (OCR of the tick labels), legend and series.

    `ocr` is a `tesserocr.PyTessBaseAPI` to use instead of this thread's own engine; `settings`
    replaces the stages' values chosen from data (judging.signals.chart.settings). Never
    raises on odd images: an unreadable chart is `readable=False` with a `reason`.
    """
    return read(image, ocr=ocr, settings=settings)


def compare_charts(published: ChartReading, reproduced: ChartReading, *,
                   tolerance: Tolerance | None = None,
                   settings: CompareSettings = DEFAULT_COMPARE) -> ChartComparison:
    """Pair the panels and series of two readings and measure what they agree on (see
    CHART_SIGNALS). A signal that cannot be computed is None with a reason in `reasons`.
    `settings` replaces the values chosen from data (judging.signals.chart.settings)."""
    return compare(published, reproduced, tolerance=tolerance, settings=settings)


def render_overlay(published: ChartReading, reproduced: ChartReading,
                   comparison: ChartComparison, *, size: int = 512) -> Image.Image | None:
    """The series read from both charts drawn on one set of axes per panel, for reviewers."""
    return overlay(published, reproduced, comparison, size=size)


def comparison_signals(comparison: ChartComparison) -> dict[str, Signal]:
    """The comparison as `chart.*` signals: an absent one with its reason, a present one with
    the reason that says why it is what it is (the reading confidence's doubts)."""
    signals = {}
    for name in CHART_SIGNALS:
        value = comparison.signals.get(name)
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            signals[name] = Signal.absent(comparison.reasons.get(name) or "could not be computed")
        elif isinstance(value, bool):
            signals[name] = Signal(value=value)
        else:
            signals[name] = Signal(value=round(float(value), 6),
                                   reason=comparison.reasons.get(name))
    return signals


__all__ = ["CHART_SIGNALS", "CHART_SOURCE_SIGNALS", "DEFAULT_COMPARE", "Axis",
           "ChartComparison", "ChartReading", "CompareSettings", "DEFAULT_READER", "EvidenceSettings",
           "Panel", "ReaderSettings",
           "Series", "Tick", "chart_trace", "figure_trace", "compare_charts", "comparison_signals", "read_chart",
           "reading_from_data", "render_overlay", "without_reference_lines"]
