"""Series extraction inside one plot area, in rooms with one job each: `groups` (the background
and the ink split by colour and grey level), `masks` (components and morphology), `styles` (line
styles), `points` (marker centres and line tracks), `marks` (what a group is made of), `bars`,
`raw` (the extracted series) and `extract` (the entry point, which says how they fit)."""

from judging.signals.chart.series.extract import extract_series, ink_sample
from judging.signals.chart.series.groups import plot_background
from judging.signals.chart.series.raw import RawSeries

__all__ = ["RawSeries", "extract_series", "ink_sample", "plot_background"]
