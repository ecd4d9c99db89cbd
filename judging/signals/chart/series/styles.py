"""Line styles: a group's pixels split into long strokes, dashes and dots.
"""

from __future__ import annotations

import numpy as np

from judging.signals.chart.series.masks import Comps, components, dilate, mask_extent
from judging.signals.chart.settings import reader_settings

LONG_STROKE = 0.15
"""A stroke spanning 15% of the plot is a piece of a solid line, whatever its width."""
LONG_PIXELS, LONG_WIDTHS, STROKE_WIDTHS = 12.0, 9, 2.5
"""... as is one at least 12 pixels and 9 line widths long, at most 2.5 line widths thick:
longer than any dash (a solid line cut where others cross it)."""
MARKER_PIXELS, MARKER_WIDTHS = 4, 2.2
"""A marker is at least 4 pixels and 2.2 line widths across ..."""
MARKER_FILL, MARKER_ASPECT = 0.45, 2.2
"""... fills 45% of its box and is at most 2.2 times as long as wide."""
DOT_WIDTHS = 2.5
"""A dot spans at most 2.5 line widths (and a pixel)."""
STRAY_STYLE = 0.3
"""Dashes or dots under 30% of a group's ink next to solid strokes are the strokes' pieces."""
MINOR_STYLE = 0.1
"""A style with under 10% of a group's ink is not one of its series' styles."""
MIN_PIECES = 3
"""Pieces that can form a chain (or a dashed line): at least three."""
SIDE_BY_SIDE = 1.3
"""Pieces whose widths add up to 1.3 times the columns they cover stand side by side, not one
after another."""
CHAIN_COVER = 0.6
"""A chain covers 60% of the columns between its ends (dashes, which cover half, are told
apart by `_dashes`)."""
MEET_PIXELS = 3.0
"""Consecutive pieces meet within 3 pixels (or half a piece's height)."""
MOSTLY = 0.7
"""The share of pieces (steps, dashes) that must agree for the whole to be a chain or dashes."""
PIXEL_VARIANCE = 1 / 12
"""A pixel's own extent: the variance of a uniform unit square's side."""
TINY = 1e-9
"""Keeps a piece's minor axis above zero (a one-pixel-thick dash)."""


def style_split(mask: np.ndarray, plot_w: int, min_px: int) -> list[tuple[str, np.ndarray,
                                                                         float]]:
    """Split a group's pixels by line style: [(style, mask, line width)]."""
    c = components(mask)
    if c.n == 0:
        return []
    span = np.maximum(c.w, c.h)
    thick = c.area / span
    order = np.argsort(thick)
    cum = np.cumsum(c.area[order])
    lw = max(1.0, float(thick[order][np.searchsorted(cum, cum[-1] / 2)]))
    # A stroke many line widths long is a piece of a solid line (cut where others cross it),
    # longer than any dash.
    long_ = (span >= LONG_STROKE * plot_w) | \
        ((span >= max(LONG_PIXELS, LONG_WIDTHS * lw)) & (thick <= STROKE_WIDTHS * lw))
    small = np.minimum(c.w, c.h)
    marker = (~long_ & (small >= max(MARKER_PIXELS, MARKER_WIDTHS * lw))
              & (c.area >= MARKER_FILL * c.w * c.h) & (span <= MARKER_ASPECT * small))
    dot = ~long_ & ~marker & (span <= DOT_WIDTHS * lw + 1)
    dash = ~long_ & ~marker & ~dot
    classes = {"solid": long_, "dashed": dash, "dotted": dot, "markers": marker}
    total = c.area.sum()
    # Fragments next to a stroke of another class belong to it (a solid line cut where another
    # line crosses it; the dots of a dash-dot line).
    def near(target: np.ndarray, gap: float) -> np.ndarray:
        if not target.any():
            return np.zeros(c.n, bool)
        tmask = np.concatenate([[False], target])[c.labels]
        grown = dilate(tmask, max(1, int(round(gap))))
        touched = np.unique(c.labels[grown & (c.labels > 0)]) - 1
        out = np.zeros(c.n, bool)
        out[touched] = True
        return out
    if dot.any() and dash.any():
        hit = near(dash, lw + 2) & dot
        classes["dashed"] = dash | hit
        classes["dotted"] = dot & ~hit
    if long_.any():
        for name in ("dashed", "dotted"):
            sel = classes[name]
            if sel.any() and c.area[sel].sum() < STRAY_STYLE * total:
                hit = near(long_, lw + 2) & sel
                classes["solid"] = classes["solid"] | hit
                classes[name] = sel & ~hit
    out = []
    for name, sel in classes.items():
        px = c.area[sel].sum()
        if px < min_px or px < MINOR_STYLE * total:
            continue
        m = np.concatenate([[False], sel])[c.labels]
        out.append((name, m, lw))
    return out


def chained(c: Comps) -> bool:
    """Pieces (`c`, a mask's components) that follow each other along x, one at a time (a dashed
    or dotted line with markers), rather than points scattered over the plot."""
    if c.n < MIN_PIECES:
        return False
    x0 = c.x0.astype(int)
    x1 = (c.x0 + c.w).astype(int)
    lo, hi = int(x0.min()), int(x1.max())
    cover = np.zeros(hi - lo + 1, np.int32)
    np.add.at(cover, np.r_[x0 - lo], 1)
    np.add.at(cover, np.r_[x1 - lo], -1)
    depth = np.cumsum(cover)[:-1]
    union = int((depth > 0).sum())
    if union == 0:
        return False
    if c.w.sum() > SIDE_BY_SIDE * union:
        return False
    if union < CHAIN_COVER * (hi - lo) and not _dashes(c):
        return False
    # Consecutive pieces meet (their boxes overlap or nearly touch vertically).
    order = np.argsort(c.x0, kind="stable")
    top = c.y0[order]
    bottom = top + c.h[order]
    gap = np.maximum(top[1:] - bottom[:-1], top[:-1] - bottom[1:])
    near = gap <= max(MEET_PIXELS, 0.5 * float(np.median(c.h)))
    return float(near.mean()) >= MOSTLY


def _dashes(c: Comps) -> bool:
    """Pieces (`c`) that are a dashed line's dashes: most are elongated (SeriesSettings.
    dash_elongation) along the way to the next piece (dash_alignment) and the steps between
    them repeat (dash_spacing). pgfplots' dashes are as long as their gaps, so they cover half
    the columns, where `chained` asks for more; markers along a curve are not elongated, error
    bars are elongated across it."""
    cfg = reader_settings().series
    box = mask_extent(c.labels)
    if box is None or c.n < MIN_PIECES:
        return False
    # The pieces' pixels only (not every pixel of their extent: a few dashes across a plot).
    t, _, l, _ = box
    sub = c.labels[box[0]:box[1], box[2]:box[3]]
    rows, cols = np.nonzero(sub)
    labels = sub[rows, cols]
    rows, cols = rows.astype(float) + t, cols.astype(float) + l
    n = c.n + 1
    area = np.maximum(np.bincount(labels, minlength=n), 1).astype(float)

    def mean(values: np.ndarray) -> np.ndarray:
        return (np.bincount(labels, weights=values, minlength=n) / area)[1:]

    cx, cy = mean(cols), mean(rows)
    sxx = mean(cols ** 2) - cx ** 2 + PIXEL_VARIANCE
    syy = mean(rows ** 2) - cy ** 2 + PIXEL_VARIANCE
    sxy = mean(cols * rows) - cx * cy
    spread = np.sqrt(((sxx - syy) / 2) ** 2 + sxy ** 2)
    major, minor = (sxx + syy) / 2 + spread, np.maximum((sxx + syy) / 2 - spread, TINY)
    axis = 0.5 * np.arctan2(2 * sxy, sxx - syy)  # the long axis' angle, rows downwards
    order = np.argsort(cx, kind="stable")
    step_x, step_y = np.diff(cx[order]), np.diff(cy[order])
    steps = np.hypot(step_x, step_y)
    if np.median(steps) <= 0:
        return False
    regular = np.abs(steps - np.median(steps)) <= cfg.dash_spacing * np.median(steps)
    way = np.arctan2(step_y, step_x)
    turn = np.degrees(np.abs((axis[order][:-1] - way + np.pi / 2) % np.pi - np.pi / 2))
    long_ = np.sqrt(major / minor)[order][:-1] >= cfg.dash_elongation
    return bool(regular.mean() >= MOSTLY and
                (long_ & (turn <= cfg.dash_alignment)).mean() >= MOSTLY)
