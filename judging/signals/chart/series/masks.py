"""Masks of ink and their connected components: morphology, marker-sized blobs, the holes of open
markers, tick marks at the edges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

HOLE_SIDE = 0.05
"""An open marker's hole is at most 5% of the plot's smaller side across."""
EDGE = 4
"""Pixels from the plot's edge within which a mark touches it (a tick mark pointing inwards)."""
TICK_PIXELS, TICK_SHARE = 12, 0.035
"""A tick mark is at most 12 pixels or 3.5% of the plot's larger side long."""


@dataclass
class Comps:
    labels: np.ndarray
    n: int
    w: np.ndarray
    h: np.ndarray
    area: np.ndarray
    x0: np.ndarray
    y0: np.ndarray


def mask_extent(mask: np.ndarray, margin: int = 0) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right), half-open, of a mask's pixels grown by `margin` within the
    array, or None for an empty mask. A colour's ink covers a part of the plot area: labelling,
    hole filling and dilation on that part give the same pixels as on the whole area."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    hh, ww = mask.shape
    return (max(0, int(rows[0]) - margin), min(hh, int(rows[-1]) + margin + 1),
            max(0, int(cols[0]) - margin), min(ww, int(cols[-1]) + margin + 1))


def components(mask: np.ndarray) -> Comps:
    """8-connected components, labelled on the mask's extent (raster order within it is the
    whole array's, so the labels are the same)."""
    labels = np.zeros(mask.shape, np.int32)
    box = mask_extent(mask)
    if box is None:
        empty = np.zeros(0)
        return Comps(labels, 0, empty, empty, empty, empty, empty)
    t, b, l, r = box
    sub, n = ndimage.label(mask[t:b, l:r], structure=np.ones((3, 3), bool))
    labels[t:b, l:r] = sub
    objs = ndimage.find_objects(sub)
    w = np.array([sl[1].stop - sl[1].start for sl in objs], dtype=float)
    h = np.array([sl[0].stop - sl[0].start for sl in objs], dtype=float)
    x0 = np.array([sl[1].start + l for sl in objs], dtype=float)
    y0 = np.array([sl[0].start + t for sl in objs], dtype=float)
    area = np.bincount(sub.ravel(), minlength=n + 1)[1:].astype(float)
    return Comps(labels, n, w, h, area, x0, y0)


#: The inside of an open marker, halved by the line through it, is at most about twice as
#: wide as tall (a half-disc, half a square); the gap between two close curves is a sliver.
MARKER_HOLE_ASPECT = 3.0


#: ... and fills most of its box (a half-disc three quarters); a sliver along a sloping curve
#: fills a fifth of its square box.
MARKER_HOLE_FILL = 0.4


def filled_holes(mask: np.ndarray, hh: int, ww: int) -> tuple[np.ndarray, np.ndarray]:
    """The mask with its small holes filled (no bigger than a marker: hollow markers, for
    telling markers apart), and with only the holes shaped like a marker's inside filled (for
    tracking a line through open markers; not the slivers between two close curves that touch
    here and there): both from one labelling of the background.

    A hole is a piece of background (4-connected, as `binary_fill_holes` has it) that does not
    reach the edge: one labelling of the background finds them all, where `binary_fill_holes`
    grows the outside by one pixel per pass (a fifth of a chart reading on real figures)."""
    # On the ink's extent: background on its edge touches the background around the ink, so
    # what reaches the extent's edge reaches the outside, as on the whole area.
    box = mask_extent(mask)
    if box is None:
        return mask, mask
    t, b, l, r = box
    background, n = ndimage.label(~mask[t:b, l:r])
    if n == 0:
        return mask, mask
    outside = np.zeros(n + 1, bool)
    for edge in (background[0], background[-1], background[:, 0], background[:, -1]):
        outside[edge] = True
    sizes = np.bincount(background.ravel(), minlength=n + 1)
    limit = (HOLE_SIDE * min(hh, ww)) ** 2
    keep = ~outside & (sizes <= limit)
    keep[0] = False
    if not keep.any():
        return mask, mask
    objs = ndimage.find_objects(background)
    tall = np.array([0] + [sl[0].stop - sl[0].start if sl else 0 for sl in objs])
    wide = np.array([0] + [sl[1].stop - sl[1].start if sl else 0 for sl in objs])
    shaped = keep & (np.maximum(tall, wide) <= MARKER_HOLE_ASPECT * np.minimum(tall, wide)) \
        & (sizes >= MARKER_HOLE_FILL * tall * wide)
    filled = mask.copy()
    filled[t:b, l:r] |= keep[background]
    marker_filled = mask.copy()
    marker_filled[t:b, l:r] |= shaped[background]
    return filled, marker_filled


def binary_open(mask: np.ndarray, structure: np.ndarray) -> np.ndarray:
    """`ndimage.binary_opening(mask, structure=...)` on the mask's extent: an opening keeps a
    subset of the mask, and erosion sees background beyond the extent either way."""
    out = np.zeros(mask.shape, bool)
    box = mask_extent(mask)
    if box is None:
        return out
    t, b, l, r = box
    out[t:b, l:r] = ndimage.binary_opening(mask[t:b, l:r], structure=structure)
    return out


def dilate(mask: np.ndarray, iterations: int) -> np.ndarray:
    """`ndimage.binary_dilation(mask, iterations=...)`, computed on the mask's bounding box grown
    by `iterations` (nothing outside it can be reached): the same pixels, at the cost of the
    ink's extent rather than the whole plot area's."""
    out = np.zeros(mask.shape, bool)
    box = mask_extent(mask, iterations)
    if box is None:
        return out
    t, b, l, r = box
    out[t:b, l:r] = ndimage.binary_dilation(mask[t:b, l:r], iterations=iterations)
    return out


def drop_edge_ticks(mask: np.ndarray) -> None:
    """Remove tick marks drawn inwards (short strokes starting at the frame), in place."""
    hh, ww = mask.shape
    c = components(mask)
    if c.n == 0:
        return
    x1 = c.x0 + c.w - 1
    y1 = c.y0 + c.h - 1
    edge = (c.x0 <= EDGE) | (c.y0 <= EDGE) | (x1 >= ww - EDGE - 1) | (y1 >= hh - EDGE - 1)
    short = np.maximum(c.w, c.h) <= max(TICK_PIXELS, TICK_SHARE * max(hh, ww))
    drop = edge & short
    if drop.any():
        mask[np.concatenate([[False], drop])[c.labels]] = False
