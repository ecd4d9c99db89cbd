"""The frame two panels are compared in: log10 on log axes, data units where both axes were
read, else plot-area units; ranges, their overlaps, and the shift of an unread multiplier.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judging.models import Tolerance
from judging.signals.chart.types import (
    Panel,
    Series,
)

DECADE_SLACK = 1.3
"""Two axis spans that differ by a power of ten within 30% differ by an unread multiplier (an
axis's padding varies by library)."""


@dataclass(frozen=True)
class Frame:
    """How one panel's points are compared: log10 on log axes, data units where both charts'
    axes were read, else plot-area units (0..1)."""

    x_log: bool
    y_log: bool
    x_data: bool
    y_data: bool


def panel_frame(pub: Panel, rep: Panel) -> Frame:
    def both(attr: str) -> tuple[bool, bool]:
        a, b = getattr(pub, attr), getattr(rep, attr)
        data = a is not None and b is not None
        return data, data and a.scale == "log" and b.scale == "log"

    x_data, x_log = both("x")
    y_data, y_log = both("y")
    return Frame(x_log=x_log, y_log=y_log, x_data=x_data, y_data=y_data)


def coords(series: Series, frame: Frame) -> np.ndarray:
    """The series' points in the frame's units (finite rows only)."""
    norm = series.normalised if series.normalised is not None else series.points
    x = series.points[:, 0] if frame.x_data and series.x_units == "data" else norm[:, 0]
    y = series.points[:, 1] if frame.y_data and series.y_units == "data" else norm[:, 1]
    pts = _in_frame(x, y, frame)
    return pts[np.argsort(pts[:, 0], kind="stable")]


def _in_frame(x: np.ndarray, y: np.ndarray, frame: Frame) -> np.ndarray:
    """Points (x, y) on the frame's scales (log10 of a log data axis), finite rows only."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if frame.x_log and frame.x_data:
            x = np.log10(x)
        if frame.y_log and frame.y_data:
            y = np.log10(y)
    pts = np.column_stack([x, y])
    return pts[np.isfinite(pts).all(axis=1)]


def y_span(panel: Panel, frame: Frame) -> float:
    """The published panel's y extent in the frame's units (axis range, else data extent)."""
    if frame.y_data and panel.y is not None:
        lo, hi = panel.y.data_range
        if frame.y_log:
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = np.log10(lo), np.log10(hi)
        span = abs(float(hi) - float(lo))
        if np.isfinite(span) and span > 0:
            return span
    if not frame.y_data:
        return 1.0
    ys = np.concatenate([coords(s, frame)[:, 1] for s in panel.series] or [np.zeros(1)])
    return float(np.ptp(ys)) or 1.0


def claim_tolerance(tolerance: Tolerance | None, frame: Frame) -> tuple[float | None, float | None]:
    # A claim tolerance is in data units: it applies only where y is in data units on a linear
    # axis (on a log axis a relative tolerance is an absolute one in log10 units).
    if tolerance is None or not frame.y_data:
        return None, None
    if frame.y_log:
        if tolerance.relative is not None:
            return float(np.log10(1 + tolerance.relative)), None
        return None, None
    return tolerance.absolute, tolerance.relative


def iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    union = max(a[1], b[1]) - min(a[0], b[0])
    if union <= 0:
        return 1.0
    return max(0.0, hi - lo) / union


def extent(points: list[np.ndarray], column: int) -> tuple[float, float] | None:
    values = [p[:, column] for p in points if len(p)]
    if not values:
        return None
    allv = np.concatenate(values)
    return float(allv.min()), float(allv.max())


def ink_coords(panel: Panel, frame: Frame, series_pts: list[np.ndarray]) -> np.ndarray:
    """The panel's data ink in the frame's units; a panel without ink (taken from a data file)
    is its series' points, which are its data exactly."""
    if panel.ink is None or panel.ink_normalised is None:
        return np.concatenate([p for p in series_pts if len(p)] or [np.zeros((0, 2))])
    x = panel.ink[:, 0] if frame.x_data and panel.x is not None else panel.ink_normalised[:, 0]
    y = panel.ink[:, 1] if frame.y_data and panel.y is not None else panel.ink_normalised[:, 1]
    return _in_frame(x, y, frame)


def align_x_extent(pub_pts: list[np.ndarray], rep_pts: list[np.ndarray],
                    rep_ink: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The reproduced points with x mapped so that their extent is the published one.

    With no numeric x axis on either chart (categories, month names, dates the OCR does not
    read) x is a share of the plot width, and plotting libraries pad categories differently
    (matplotlib puts the first category on the frame, ggplot2 and Excel half a category in):
    the same data would sit a few percent apart. The first and last categories are where the
    data starts and ends on both charts, so the extents are aligned."""
    a, b = extent(pub_pts, 0), extent(rep_pts, 0)
    if a is None or b is None or not (a[1] > a[0] and b[1] > b[0]):
        return rep_pts, rep_ink
    factor = (a[1] - a[0]) / (b[1] - b[0])

    def moved(p: np.ndarray) -> np.ndarray:
        q = p.copy()
        q[:, 0] = a[0] + (p[:, 0] - b[0]) * factor
        return q

    return [moved(p) for p in rep_pts], moved(rep_ink)


def axis_iou(pub_axis, rep_axis) -> float | None:
    """Overlap (IoU) of two axes' ranges as their tick labels give them (log10 on log axes)."""
    if pub_axis is None or rep_axis is None or pub_axis.scale != rep_axis.scale:
        return None
    ranges = []
    for axis in (pub_axis, rep_axis):
        lo, hi = axis.data_range
        if axis.scale == "log":
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = np.log10(lo), np.log10(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return None
        ranges.append((float(min(lo, hi)), float(max(lo, hi))))
    return iou(*ranges)


def power_of_ten_shift(pub_axis, rep_axis, linear_data: bool) -> int:
    """The power of ten k such that the reproduced axis span times 10**k is the published one,
    when the two linear axes differ by a whole power of ten (within 30%): tick labels read
    without their multiplier ("x10^-4" above a pgfplots axis, matplotlib's "1e-4" offset text,
    percent against fraction). 0 otherwise. The rubric's guidance counts equivalent units as the
    same, so the values are compared after the shift and the reading confidence says so."""
    if not linear_data or pub_axis is None or rep_axis is None:
        return 0
    span_pub = abs(pub_axis.data_range[1] - pub_axis.data_range[0])
    span_rep = abs(rep_axis.data_range[1] - rep_axis.data_range[0])
    if not (span_pub > 0 and span_rep > 0):
        return 0
    ratio = float(np.log10(span_pub / span_rep))
    k = round(ratio)
    if k == 0 or abs(ratio - k) > float(np.log10(DECADE_SLACK)):
        return 0
    return int(k)


def unit_frame(panel: Panel, frame: Frame, pub_pts: list[np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray]:
    """(origin, scale) that map the frame's units onto the published panel's axes as 0..1."""
    a = np.concatenate([p for p in pub_pts if len(p)] or [np.zeros((1, 2))])
    spans = []
    for column, data, log, axis in ((0, frame.x_data, frame.x_log, panel.x),
                                    (1, frame.y_data, frame.y_log, panel.y)):
        if not data:
            spans.append((0.0, 1.0))
            continue
        lo, hi = axis.data_range
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = np.log10(lo), np.log10(hi)
        if not (np.isfinite(lo) and np.isfinite(hi) and hi != lo):
            lo, hi = float(a[:, column].min()), float(a[:, column].max())
        spans.append((min(lo, hi), max(lo, hi)))
    origin = np.array([spans[0][0], spans[1][0]])
    scale = np.array([(spans[0][1] - spans[0][0]) or 1.0, (spans[1][1] - spans[1][0]) or 1.0])
    return origin, scale
