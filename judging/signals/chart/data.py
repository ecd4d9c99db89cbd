"""A chart reading built from a figure's data (`judging.figures.data`) instead of its image.

The series are the file's, in data units, exactly; the axes are the panel's stated scales and
limits. What a data file does not state (a CSV says nothing of scales) is taken from the other
side of the comparison, so that data compared with an image read off a log axis is compared on
that log axis too; with nothing to take it from, an axis is linear. The result is an ordinary
`ChartReading`: `compare_charts` and `render_overlay` treat it like one read from pixels.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from judging.figures.data import DataPanel, FigureData
from judging.signals.chart.compare.charts import data_panels
from judging.signals.chart.settings import DEFAULT_COMPARE
from judging.signals.chart.types import Axis, ChartReading, Panel, Series, Tick

TEN = 10.0
"""The base of a log axis."""

#: The margin matplotlib (and most plotting tools) leave around the data when no limits are set:
#: the published axis range sets the value tolerance, so data and image readings should agree.
MARGIN = 0.05
# (`data_panels`: the panels compare_charts pairs, in the order it pairs them.)
#: Positions at which a data axis states its (exact) mapping, as tick labels would.
TICKS = 5
#: A nominal plot area per panel, stacked top to bottom: the reading order is the file's.
_SIDE = 1000


def _other_scales(other: ChartReading | None) -> list[tuple[str | None, str | None]]:
    """The (x, y) scale of each panel of `other` that holds series, in reading order."""
    if other is None or not other.readable:
        return []
    return [(p.x.scale if p.x is not None else None, p.y.scale if p.y is not None else None)
            for p in data_panels(other)]


def _axis(orientation: str, scale: str, values: np.ndarray,
          limits: tuple[float, float] | None) -> Axis:
    if limits is not None and scale == "log" and min(limits) <= 0:
        limits = None  # limits stated for a linear axis, the log scale taken from the other side
    if limits is not None:
        lo, hi = (float(v) for v in limits)
        t_lo, t_hi = (np.log10([lo, hi]) if scale == "log" else (lo, hi))
    else:
        t = np.log10(values) if scale == "log" else values
        t_lo, t_hi = (float(t.min()), float(t.max())) if len(t) else (0.0, 1.0)
        pad = MARGIN * (t_hi - t_lo) or max(0.5 * MARGIN * abs(t_lo), 0.5)
        t_lo, t_hi = t_lo - pad, t_hi + pad
        lo, hi = (TEN ** t_lo, TEN ** t_hi) if scale == "log" else (t_lo, t_hi)
    # A data axis is known exactly: its "ticks" are that mapping at five positions (what tick
    # labels would say there), so that whatever checks a fit against its ticks finds it exact.
    ticks = []
    for p in np.linspace(0.0, 1.0, TICKS):
        t = t_lo + (t_hi - t_lo) * p
        value = TEN ** t if scale == "log" else t
        ticks.append(Tick(pixel=float(p), value=float(value), text=f"{value:.4g}"))
    return Axis(orientation=orientation, scale=scale, pixel_range=(0.0, 1.0),  # type: ignore[arg-type]
                data_range=(float(lo), float(hi)), ticks=ticks, confidence=1.0,
                intercept=float(t_lo), slope=float(t_hi - t_lo))


def _normalised(values: np.ndarray, axis: Axis) -> np.ndarray:
    lo, hi = axis.data_range
    if axis.scale == "log":
        values, lo, hi = np.log10(values), np.log10(lo), np.log10(hi)
    return (values - lo) / ((hi - lo) or 1.0)


def _panel(index: int, panel: DataPanel, scales: tuple[str | None, str | None]) -> Panel:
    xscale = panel.xscale or scales[0] or "linear"
    yscale = panel.yscale or scales[1] or "linear"
    problems: list[str] = []
    raw = []
    for series in panel.series:
        pts = np.column_stack([np.asarray(series.xs(), dtype=float),
                               np.asarray(series.y, dtype=float)])
        keep = np.ones(len(pts), dtype=bool)
        for column, scale in ((0, xscale), (1, yscale)):
            if scale == "log":
                keep &= pts[:, column] > 0
        if not keep.all():
            problems.append(f"series {series.name!r}: {int((~keep).sum())} non-positive "
                            f"value(s) left out on the log axis taken from the other chart")
        raw.append((series, pts[keep]))
    everything = np.concatenate([p for _, p in raw if len(p)] or [np.zeros((0, 2))])
    x_axis = _axis("x", xscale, everything[:, 0], panel.xlim)
    y_axis = _axis("y", yscale, everything[:, 1], panel.ylim)
    out = []
    for k, (series, pts) in enumerate(raw):
        if not len(pts):
            continue
        pts = pts[np.argsort(pts[:, 0], kind="stable")]
        norm = np.column_stack([_normalised(pts[:, 0], x_axis), _normalised(pts[:, 1], y_axis)])
        out.append(Series(name=series.name, style=f"data:{index}.{k}",
                          kind=series.kind or panel.kind or "line", points=pts,
                          confidence=1.0, normalised=norm))
    top = index * _SIDE
    return Panel(bbox=(0, top, _SIDE, top + _SIDE * 4 // 5), x=x_axis, y=y_axis, series=out,
                 legend=[s.name for s in panel.series], problems=problems)


def reading_from_data(data: FigureData, *, other: ChartReading | None = None) -> ChartReading:
    """The reading of a figure whose data is known: the file's series in data units, its panels
    in the file's order; scales the file leaves unstated come from `other` (the reading of the
    other side, panel by panel in reading order), else linear."""
    start = time.perf_counter()
    scales = _other_scales(other)
    panels = [_panel(i, panel, scales[i] if i < len(scales) else (None, None))
              for i, panel in enumerate(data.panels)]
    readable = any(p.series for p in panels)
    return ChartReading(panels=panels, readable=readable,
                        reason=None if readable else "the figure data holds no point that "
                                                     "can be drawn on its axes",
                        seconds=time.perf_counter() - start)


def _reference_line(series: Series) -> bool:
    """An unnamed horizontal line across the plot: a threshold or baseline the figure draws,
    which a data file does not list as a series."""
    norm = series.normalised
    if series.name or series.kind != "line" or norm is None or len(norm) < 2:
        return False
    return bool(np.ptp(norm[:, 0]) >= DEFAULT_COMPARE.min_series_width
                and np.ptp(norm[:, 1]) < DEFAULT_COMPARE.flat)


def without_reference_lines(image: ChartReading, data: ChartReading
                            ) -> tuple[ChartReading, int]:
    """The image reading without the reference lines the data side has no series for: per
    panel (in reading order), unnamed flat lines beyond the data panel's count of series. A
    data file lists the series, not the threshold a figure draws across them; read from both
    images the line would be on both sides, compared with data it would count as missing.
    (Grey and black ones are also chart furniture to compare_charts; this covers coloured
    ones, a red target line, which only the data side lacks.) Returns the reading and how many
    lines were left out."""
    if not image.readable or not data.readable:
        return image, 0
    from_data = data_panels(data)
    kept: dict[int, Panel] = {}
    dropped = 0
    for panel, other in zip(data_panels(image), from_data):
        spare = len(panel.series) - len(other.series)
        lines = [s for s in panel.series if _reference_line(s)][:max(0, spare)]
        if lines:
            series = [s for s in panel.series if all(s is not line for line in lines)]
            note = (f"{len(lines)} unnamed horizontal line(s) left out as reference lines: the "
                    f"data compared with this chart has no such series")
            kept[id(panel)] = dataclasses.replace(panel, series=series,
                                                  problems=[*panel.problems, note])
            dropped += len(lines)
    if not dropped:
        return image, 0
    return dataclasses.replace(image, panels=[kept.get(id(p), p) for p in image.panels]), dropped
