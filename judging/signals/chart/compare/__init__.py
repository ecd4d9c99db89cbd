"""The comparison of two chart readings (compare_charts, render_overlay), in rooms with one job
each: `frame` (the units two panels are compared in), `curves` (two series' points compared),
`ink` (points against the other chart's data ink), `names` (legend names), `panels` (one panel
pair's series paired), `trust` (how far the readings can be trusted), `charts` (the chart.*
signals) and `overlay` (the reviewers' picture)."""

from judging.signals.chart.compare.charts import compare
from judging.signals.chart.compare.overlay import overlay

__all__ = ["compare", "overlay"]
