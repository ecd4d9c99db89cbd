"""What a group of ink is made of: markers scattered over the plot, markers threaded on a line,
strokes stacked in one column.
"""

from __future__ import annotations

import numpy as np

from judging.signals.chart.series.masks import Comps, binary_open, components
from judging.signals.chart.series.points import column_runs, marker_shaped
from judging.signals.chart.series.styles import chained
from judging.signals.chart.settings import reader_settings

MIN_MARKERS = 3
"""The fewest marker-shaped blobs a scatter is made of."""
MARKER_INK = 0.6
"""Marker-shaped blobs hold 60% of a scatter's ink."""
MARKER_SIZE = 5
"""Pixels across from which a blob is a marker (smaller: a dotted line's dot)."""
OPENING, SURVIVES = 0.3, 0.75
"""Markers survive (75% of the ink) an opening by a disk of 0.3 their size; lines between them
do not."""
THREADED_OPENING = 0.2
"""A fifth of the markers' size: a triangle's inscribed circle is 0.29 of its side, so a larger
disk would erase triangle markers with the line they are threaded on."""


def scattered(mask: np.ndarray, c: Comps) -> bool:
    """Marker-sized compact blobs (bigger than the dots of a dotted line) hold most pixels
    (`c`: the mask's components)."""
    if c.n < MIN_MARKERS or c.n > reader_settings().series.max_components:
        return False
    span, compact = marker_shaped(c)
    if compact.sum() < MIN_MARKERS or c.area[compact].sum() < MARKER_INK * c.area.sum():
        return False
    size = float(np.median(span[compact]))
    if size < MARKER_SIZE:
        # Dots smaller than markers are a dotted line's, unless they lie over each other, not
        # one after the other (a cloud of small dots).
        cfg = reader_settings().series
        return c.n >= cfg.cloud_markers and not chained(c) and stacked(mask) >= cfg.cloud_stacked
    # Markers survive an opening by a disk a third of their size, lines between them do not.
    r = max(2, int(round(OPENING * size)))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    opened = binary_open(mask, (xx ** 2 + yy ** 2) <= r * r + 0.5)
    return float(opened.sum()) >= SURVIVES * float(mask.sum()) or not chained(c)


def markers_without_lines(mask: np.ndarray, c: Comps) -> np.ndarray | None:
    """The markers of a cloud drawn with a line of its colour through it (a fit line, a
    smoother: ggplot2's geom_smooth, seaborn's regplot), or None when the mask is no such cloud.
    The line joins the markers it crosses into one large component, so `scattered` sees no
    markers; the markers that stand apart give their size, and an opening by a disk a fifth of
    that size keeps the markers (merged ones as blobs) and removes the thinner line. Reading
    such a group as a line would trace one wandering track through the cloud."""
    if c.n < reader_settings().series.cloud_markers or c.n > reader_settings().series.max_components:
        return None
    span, compact = marker_shaped(c)
    if compact.sum() < reader_settings().series.cloud_markers:
        return None
    size = float(np.median(span[compact]))
    if size < MARKER_SIZE:
        return None
    # A fifth of their size: a triangle's inscribed circle is 0.29 of its side, so a larger disk
    # would erase triangle markers with the line.
    r = max(2, int(round(THREADED_OPENING * size)))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    opened = binary_open(mask, (xx ** 2 + yy ** 2) <= r * r + 0.5)
    if float(opened.sum()) < reader_settings().series.cloud_ink * float(mask.sum()):
        return None
    # Markers, not a thick line: the opened ink is many pieces, not one or two strokes.
    parts = components(opened)
    if parts.n < reader_settings().series.cloud_markers or chained(parts):
        return None  # a few strokes, or the markers of one line, one after the other along x
    # A cloud stacks markers above each other: many columns cross two of them or more, where
    # a line's markers (touching where the line is flat) meet a column once.
    if stacked(opened) < reader_settings().series.cloud_stacked:
        return None
    return opened


def stacked(mask: np.ndarray) -> float:
    """The share of the columns a mask covers that cross it twice or more."""
    cols, _, _ = column_runs(mask)
    per_column = np.bincount(cols)
    per_column = per_column[per_column > 0]
    return float(np.mean(per_column >= 2)) if per_column.size else 0.0
