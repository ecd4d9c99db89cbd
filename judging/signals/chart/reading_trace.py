"""The reading trace of a figure pair (`judging.models.ChartTrace`): what the reader read of each
chart (panels, axes and their tick labels, legend, series, problems), with which confidence, and
what the evidence behind `chart.same_data` confirmed or doubted, so that a reviewer sees why the
AI answered or abstained. Built from the readings and the comparison after the fact: it changes
no signal. Cut to the model's bounds (MAX_TRACE_*), with what was cut counted."""

from __future__ import annotations

import math
from typing import Literal

from judging.models import (
    MAX_TRACE_LABEL,
    MAX_TRACE_NAMES,
    MAX_TRACE_NOTES,
    MAX_TRACE_PANEL_NOTES,
    MAX_TRACE_PANELS,
    MAX_TRACE_SERIES,
    MAX_TRACE_TEXT,
    MAX_TRACE_TICKS,
    AxisTrace,
    ChartTrace,
    FigureTrace,
    PanelPairTrace,
    PanelTrace,
    SeriesTrace,
)
from judging.signals.chart.compare.charts import data_panels
from judging.signals.chart.evidence import DIGITS, PanelEvidence
from judging.signals.chart.types import Axis, ChartComparison, ChartReading, Panel, Series

RANGE_DIGITS = 6
"""Significant digits of an axis's data range in the trace (tick values are read to fewer)."""
ELLIPSIS = "..."
"""What ends a text cut to its bound."""


def _cut(text: str, limit: int = MAX_TRACE_TEXT) -> str:
    return text if len(text) <= limit else text[:limit - len(ELLIPSIS)] + ELLIPSIS


def _share(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), DIGITS)


def _pair(values: tuple[float, float] | None) -> tuple[float, float] | None:
    if values is None or not all(math.isfinite(v) for v in values):
        return None
    return round(float(values[0]), DIGITS), round(float(values[1]), DIGITS)


def _axis(axis: Axis | None) -> AxisTrace | None:
    if axis is None:
        return None
    lo, hi = axis.data_range
    finite = math.isfinite(lo) and math.isfinite(hi)
    return AxisTrace(scale=axis.scale,
                     data_range=(float(f"{lo:.{RANGE_DIGITS}g}"), float(f"{hi:.{RANGE_DIGITS}g}"))
                     if finite else None,
                     ticks=[_cut(t.text, MAX_TRACE_LABEL) for t in axis.ticks[:MAX_TRACE_TICKS]],
                     tick_count=len(axis.ticks), confidence=round(float(axis.confidence), DIGITS),
                     borrowed=axis.borrowed)


def _units(series: Series) -> Literal["data", "x normalised", "y normalised", "normalised"]:
    if series.x_units == series.y_units:
        return "data" if series.x_units == "data" else "normalised"
    return "x normalised" if series.x_units == "normalised" else "y normalised"


def _series(series: Series) -> SeriesTrace:
    return SeriesTrace(name=_cut(series.name, MAX_TRACE_LABEL) if series.name else None,
                       name_sure=series.name_sure, style=_cut(series.style, MAX_TRACE_LABEL),
                       kind=series.kind, points=len(series.points),
                       confidence=round(float(series.confidence), DIGITS), units=_units(series))


def _panel(panel: Panel) -> PanelTrace:
    return PanelTrace(bbox=tuple(int(v) for v in panel.bbox), x=_axis(panel.x), y=_axis(panel.y),
                      legend=[_cut(n, MAX_TRACE_LABEL) for n in panel.legend[:MAX_TRACE_NAMES]],
                      legend_count=len(panel.legend),
                      series=[_series(s) for s in panel.series[:MAX_TRACE_SERIES]],
                      series_count=len(panel.series),
                      problems=[_cut(p) for p in panel.problems[:MAX_TRACE_PANEL_NOTES]],
                      problem_count=len(panel.problems))


def figure_trace(reading: ChartReading, *, source: Literal["image", "data"]) -> FigureTrace:
    """One figure's reading: the panels with series first, in the order the comparison pairs
    them (panel pair k is panel k of both), then the plot areas where no series was found."""
    panels = data_panels(reading) + [p for p in reading.panels if not p.series]
    return FigureTrace(source=source, readable=reading.readable,
                       reason=_cut(reading.reason) if reading.reason else None,
                       size=(int(reading.size[0]), int(reading.size[1])),
                       panels=[_panel(p) for p in panels[:MAX_TRACE_PANELS]],
                       panel_count=len(panels))


def _pair_trace(p: PanelEvidence) -> PanelPairTrace:
    return PanelPairTrace(index=p.index, series=_share(p.series), crossed=_share(p.crossed),
                          ink=_pair(p.ink), series_on_ink=_pair(p.series_on_ink),
                          x_ticks=_share(p.x_ticks), x_data=_share(p.x_data),
                          y_in_data=p.y_in_data, x_axes_confirmed=p.x_axes_confirmed,
                          axes_doubt=_cut(p.axes_doubt) if p.axes_doubt else None,
                          series_doubt=_cut(p.series_doubt) if p.series_doubt else None,
                          unmatched=p.unmatched, scales_differ=p.scales_differ, names=p.names)


def chart_trace(published: ChartReading, reproduced: ChartReading,
                comparison: ChartComparison, *, published_source: Literal["image", "data"],
                reproduced_source: Literal["image", "data"]) -> ChartTrace:
    """The reading trace of a pair (see the module)."""
    evidence = comparison.evidence
    weighed = {} if evidence is None else {
        "same_data": evidence.same_data, "agreement": evidence.agreement,
        "difference": evidence.difference,
        "confirmed": [_cut(c) for c in evidence.confirmed[:MAX_TRACE_NOTES]],
        "confirmed_count": len(evidence.confirmed),
        "doubts": [_cut(d) for d in evidence.doubts[:MAX_TRACE_NOTES]],
        "doubt_count": len(evidence.doubts)}
    absent = None if evidence is not None else _cut(
        comparison.reasons.get("chart.same_data") or "nothing was weighed")
    return ChartTrace(
        published=figure_trace(published, source=published_source),
        reproduced=figure_trace(reproduced, source=reproduced_source),
        panels=[_pair_trace(p) for p in comparison.panel_evidence[:MAX_TRACE_PANELS]],
        reading_confidence=_share(comparison.signals.get("chart.reading_confidence")),
        absent=absent, **weighed)
