"""The chart reader's vocabulary: what a reading and a comparison are made of, and the names of
the `chart.*` signals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from judging.signal_catalogue import signal_names

if TYPE_CHECKING:
    from judging.signals.chart.evidence import Evidence, PanelEvidence

TEN = 10.0
"""The base of a log axis."""

CHART_SOURCE_SIGNALS = ("chart.published_from_data", "chart.reproduced_from_data")
"""Which path each side of a comparison took (its data file, else its image): set by the measure
stage, which chooses the path, not by the comparison."""
CHART_SIGNALS = tuple(name for name in signal_names("chart") if name not in CHART_SOURCE_SIGNALS)
"""The `chart.*` signals a comparison produces (their meanings are in the catalogue)."""


@dataclass(frozen=True)
class Tick:
    pixel: float
    value: float
    text: str


@dataclass(frozen=True)
class Axis:
    orientation: Literal["x", "y"]
    scale: Literal["linear", "log"]
    pixel_range: tuple[float, float]
    """Pixel positions of the plot area's edges along this axis."""
    data_range: tuple[float, float]
    """Data values at those edges."""
    ticks: list[Tick]
    confidence: float
    intercept: float = 0.0
    slope: float = 0.0
    """value (log10 value on a log axis) = intercept + slope * pixel (original image pixels)."""
    borrowed: bool = False
    """Taken from an aligned panel whose tick labels were read (shared axes), not read here."""

    def to_data(self, pixels: np.ndarray) -> np.ndarray:
        t = self.intercept + self.slope * np.asarray(pixels, dtype=float)
        return np.power(TEN, t) if self.scale == "log" else t


@dataclass(frozen=True)
class Series:
    name: str | None
    """Legend label when the legend could be read."""
    style: str
    """How it was told apart: a colour "#rrggbb", or a grayscale style ("dashed", ...)."""
    kind: Literal["line", "scatter", "bar"]
    points: np.ndarray
    """(N, 2) in data units, sorted by x (a coordinate whose axis could not be read is in
    normalised plot units instead, see `x_units` / `y_units`)."""
    confidence: float
    x_units: Literal["data", "normalised"] = "data"
    y_units: Literal["data", "normalised"] = "data"
    normalised: np.ndarray | None = None
    """(N, 2) the same points in plot-area units: x 0 (left) .. 1 (right), y 0 (bottom) .. 1
    (top); shape comparisons fall back on these when an axis is unreadable."""
    name_sure: bool = True
    """The legend entry named this series and no other fits it (or it another series) nearly as
    well (legend.Legend.assign_sure); False: the name may belong to a similar-looking series."""


@dataclass(frozen=True)
class Panel:
    bbox: tuple[int, int, int, int]
    """Plot area in image pixels (left, top, right, bottom)."""
    x: Axis | None
    y: Axis | None
    series: list[Series]
    legend: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    legend_bbox: tuple[int, int, int, int] | None = None
    """The legend's box in image pixels, when one was found."""
    ink: np.ndarray | None = None
    """(N, 2) data units of a sample of the plot area's data ink (every strongly drawn pixel,
    gridlines and the legend left out), before any series is traced through it; a coordinate
    whose axis is unread is in plot-area units (0..1). None when the panel has none (a panel
    built from a data file)."""
    ink_normalised: np.ndarray | None = None
    """The same pixels in plot-area units (x 0..1 left to right, y 0..1 bottom to top)."""


@dataclass(frozen=True)
class ChartReading:
    panels: list[Panel]
    readable: bool
    reason: str | None = None
    """Why the chart (or its data) could not be read."""
    size: tuple[int, int] = (0, 0)
    """The image's (width, height)."""
    seconds: float = 0.0
    """Time the reading took."""


@dataclass(frozen=True)
class ChartComparison:
    signals: dict[str, float | bool | None]
    """Every name of CHART_SIGNALS; None when absent (see `reasons`)."""
    reasons: dict[str, str]
    """Why each absent signal is absent."""
    matches: list[tuple[Series, Series, float, float]] = field(default_factory=list)
    """(published series, reproduced series, shape agreement, value agreement)."""
    evidence: Evidence | None = None
    """What chart.same_data rests on: what two independent readings confirmed, the doubts
    (None: a chart was unreadable, nothing was weighed)."""
    panel_evidence: list[PanelEvidence] = field(default_factory=list)
    """The readings of each pair of panels that the evidence weighed."""
