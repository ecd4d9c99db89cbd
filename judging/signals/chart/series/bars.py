"""Bars: filled columns standing on a common baseline, grouped into series by their look (fill
colour, hatching).
"""

from __future__ import annotations

import numpy as np

from judging.signals.chart.colour import (
    luma_of,
    maxabs,
)
from judging.signals.chart.series.points import column_runs
from judging.signals.chart.settings import reader_settings

MIN_BAR_COLUMNS = 3
"""Columns a bar needs (narrower: a line's or a tick's), and the fewest of a mask to hold bars."""
FILLED, FILLED_COLUMNS = 0.9, 0.8
"""A column is filled when 90% of its extent is ink; a mask of bars has 80% of its columns so."""
MIN_BAR_HEIGHT = 8
"""The tallest column of a mask of bars reaches at least this many pixels."""
ON_BASELINE = 0.7
"""Share of a mask's columns that must stand on (or hang from) the common baseline."""
WIDEST_BAR = 0.45
"""A "bar" wider than this share of the plot is a filled area or a band, not a bar."""
ON_BASE_ROWS = 1.5
"""Rows within which a bar's bottom is on the baseline (else the bar hangs from it)."""
NARROWEST_BAR = 0.4
"""Bars narrower than this share of the median bar are slivers (an edge, a gap's remnant)."""
TALL_RUN_PIXELS, TALL_RUN = 4, 0.02
"""A column's run is tall from 4 pixels and 2% of the plot's height."""
MIN_TALL_COLUMNS, TALL_COLUMNS = 6, 0.08
"""Bars need tall runs in at least 6 columns and 8% of the plot's width."""
INK_ON_BASELINE = 0.3
"""Share of the inked columns whose run stands on the baseline for the plot to hold bars."""
OTHER_FILL = 60
"""Levels (largest channel, or lightness) from which two fills differ: a bar's neighbour, a
hatch line, a line drawn over the bar."""
SOLID, MIN_SOLID_SIDE = 0.05, 6
"""A bar with under 5% hatching and sides over 6 pixels is solid: ink far from its fill
inside it is something drawn over it."""
HATCH_WEIGHT, SAME_LOOK = 100, 30
"""Two bars look alike within 30 levels of colour, a hatching share weighing 100 levels."""
CHROMATIC_FILL = 40
"""A fill whose channels spread this far is coloured, not grey."""


def read_bars(mask: np.ndarray) -> list[tuple[float, float]] | None:
    """Bars: filled columns sharing a baseline -> [(centre x, value end y)], else None."""
    hh, ww = mask.shape
    any_ = mask.any(axis=0)
    cols = np.nonzero(any_)[0]
    if cols.size < MIN_BAR_COLUMNS:
        return None
    top = mask.argmax(axis=0)
    bottom = hh - 1 - mask[::-1].argmax(axis=0)
    extent = bottom - top + 1
    count = mask.sum(axis=0)
    filled = any_ & (count >= FILLED * extent) & (extent >= MIN_BAR_COLUMNS)
    if filled[cols].mean() < FILLED_COLUMNS or extent[cols].max() < MIN_BAR_HEIGHT:
        return None
    ends = np.concatenate([top[filled], bottom[filled]])
    base = np.bincount(ends).argmax()
    on_base = filled & ((np.abs(bottom - base) <= 1) | (np.abs(top - base) <= 1))
    if on_base[cols].mean() < ON_BASELINE:
        return None
    bars = []
    start = None
    for x in range(ww + 1):
        ok = x < ww and on_base[x]
        if ok and start is not None and (abs(int(top[x]) - int(top[x - 1])) > 1
                                         or abs(int(bottom[x]) - int(bottom[x - 1])) > 1):
            bars.append((start, x - 1))
            start = x
        elif ok and start is None:
            start = x
        elif not ok and start is not None:
            bars.append((start, x - 1))
            start = None
    bars = [(a, b) for a, b in bars if b - a + 1 >= 2]
    if not bars or max(b - a + 1 for a, b in bars) > WIDEST_BAR * ww:
        return None
    out = []
    for a, b in bars:
        t = float(np.median(top[a:b + 1]))
        bt = float(np.median(bottom[a:b + 1]))
        value = t if abs(bt - base) <= ON_BASE_ROWS else bt
        out.append(((a + b) / 2, value))
    if _marker_tall([abs(v - base) for _x, v in out], [b - a + 1 for a, b in bars], hh):
        return None
    return out


def _marker_tall(heights: list[float] | list[int], widths: list[int], plot_height: int) -> bool:
    """Are these "bars" marks lying along a baseline (a pulse train's markers at zero, a thick
    line on the frame's edge)? The tallest stays low (SeriesSettings.bar_tallest: an axis is
    scaled to its data) and they are not a bar chart's bars, which share one width (within
    SeriesSettings.bar_widths, and wider than a few pixels); stretches of markers along the
    baseline are as wide as the stretch."""
    cfg = reader_settings().series
    if max(heights) >= cfg.bar_tallest * plot_height:
        return False
    return not (min(widths) >= BAR_MIN_WIDTH and max(widths) <= cfg.bar_widths * min(widths))


#: Narrower than this (work pixels), a run of filled columns is a marker's or a line's, not a
#: bar one can tell apart from them.
BAR_MIN_WIDTH = 5


def bar_chart(ink: np.ndarray, rgb: np.ndarray, lum: np.ndarray, bg: np.ndarray):
    """Bars of any fill (colours, greys, hatches, outlines) standing on a common baseline,
    grouped into series by their look: ([(colour, chromatic, x, y, pixels)], bar region)."""
    hh, ww = ink.shape
    found = _on_baseline(ink)
    if found is None:
        return [], None
    col_ok, top, bot, base = found
    # Per column the fill colour: median over the run's interior.
    colcol = np.zeros((ww, 3), np.float32)
    for x in np.nonzero(col_ok)[0]:
        a, b = top[x], bot[x]
        inner = rgb[a + 1:b, x] if b - a > 3 else rgb[a:b + 1, x]
        colcol[x] = np.median(inner, axis=0)
    bars = _bar_spans(col_ok, top, bot, base, colcol)
    bars = [(a, b) for a, b in bars if b - a + 1 >= MIN_BAR_COLUMNS]
    if len(bars) < 2:
        return [], None
    widths = np.array([b - a + 1 for a, b in bars], float)
    wmed = float(np.median(widths))
    if wmed > WIDEST_BAR * ww:
        return [], None
    bars = [(a, b) for (a, b), w_ in zip(bars, widths) if w_ >= NARROWEST_BAR * wmed]
    reach = [max(abs(int(np.median(top[a:b + 1])) - base),
                 abs(int(np.median(bot[a:b + 1])) - base)) for a, b in bars]
    if _marker_tall(reach, [b - a + 1 for a, b in bars], hh):
        return [], None
    region, looks, infos = _looks(bars, top, bot, base, rgb, ink.shape)
    return _by_look(looks, infos), region


def _on_baseline(ink: np.ndarray):
    """The columns whose longest run of ink stands on the common baseline (the row most tall
    runs end on: the bottom, or the top for negative bars): (columns, run tops, run bottoms,
    baseline), or None when no baseline carries enough of the ink."""
    hh, ww = ink.shape
    cols, centres, lengths = column_runs(ink)
    if cols.size == 0:
        return None
    starts = np.round(centres - (lengths - 1) / 2).astype(int)
    ends = starts + lengths.astype(int) - 1
    # The longest run of each column.
    order = np.lexsort((lengths, cols))
    last = np.r_[cols[order][1:] != cols[order][:-1], True]
    pick = order[last]
    c_col = cols[pick]
    c_len = lengths[pick]
    c_top = starts[pick]
    c_bot = ends[pick]
    tall = c_len >= max(TALL_RUN_PIXELS, TALL_RUN * hh)
    if tall.sum() < max(MIN_TALL_COLUMNS, TALL_COLUMNS * ww):
        return None
    # The baseline: the row most of the tall runs end on (bottom, or top for negative bars).
    ends_all = np.concatenate([c_bot[tall], c_top[tall]])
    hist = np.bincount(ends_all, minlength=hh).astype(float)
    hist3 = np.convolve(hist, [1, 1, 1], mode="same")
    base = int(hist3.argmax())
    if hist3[base] < 0.5 * tall.sum():
        return None
    on = tall & ((np.abs(c_bot - base) <= 2) | (np.abs(c_top - base) <= 2))
    if on.sum() < INK_ON_BASELINE * np.count_nonzero(ink.any(axis=0)):
        return None
    col_ok = np.zeros(ww, bool)
    col_ok[c_col[on]] = True
    top = np.zeros(ww, int)
    bot = np.zeros(ww, int)
    top[c_col[on]] = c_top[on]
    bot[c_col[on]] = c_bot[on]
    return col_ok, top, bot, base


def _bar_spans(col_ok: np.ndarray, top: np.ndarray, bot: np.ndarray, base: int,
               colcol: np.ndarray) -> list[tuple[int, int]]:
    """Bars: runs of columns on the baseline, cut where the value end or the fill changes."""
    ww = len(col_ok)
    bars = []
    start = None
    for x in range(ww + 1):
        ok = x < ww and col_ok[x]
        if ok and start is not None:
            value_prev = top[x - 1] if abs(bot[x - 1] - base) <= 2 else bot[x - 1]
            value = top[x] if abs(bot[x] - base) <= 2 else bot[x]
            if abs(value - value_prev) > 2 or np.abs(colcol[x] - colcol[x - 1]).max() > OTHER_FILL:
                bars.append((start, x - 1))
                start = x
        elif ok:
            start = x
        elif start is not None:
            bars.append((start, x - 1))
            start = None
    return bars


def _looks(bars: list[tuple[int, int]], top: np.ndarray, bot: np.ndarray, base: int,
           rgb: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, list, list]:
    """Each bar's look (fill colour, hatching) and (centre, value, pixels), and the region the
    bars cover (a line drawn over a solid bar stays out of it)."""
    hh, ww = shape
    region = np.zeros((hh, ww), bool)
    looks = []
    infos = []
    for a, b in bars:
        ia, ib = a + (1 if b - a > 4 else 0), b - (1 if b - a > 4 else 0)
        tops = top[a:b + 1]
        bots = bot[a:b + 1]
        below = abs(int(np.median(bots)) - base) <= 2
        value = float(np.median(tops)) if below else float(np.median(bots))
        y0, y1 = int(np.median(tops)), int(np.median(bots))
        ya, yb = (y0 + 1, y1) if y1 - y0 > 3 else (y0, y1 + 1)
        body = rgb[ya:yb, ia:ib + 1].reshape(-1, 3)
        if body.size == 0:
            body = rgb[y0:y1 + 1, a:b + 1].reshape(-1, 3)
        colour = np.median(body, axis=0)
        blum = luma_of(body, np.float32)
        # Hatching: the share of pixels far from the fill's own lightness.
        hatch = float((np.abs(blum - float(np.median(blum))) > OTHER_FILL).mean())
        rect = (slice(max(0, y0 - 2), y1 + 3), slice(max(0, a - 2), b + 3))
        region[rect] = True
        if hatch < SOLID and y1 - y0 > MIN_SOLID_SIDE and b - a > MIN_SOLID_SIDE:
            # A line drawn over a solid bar or a shaded span (Vega's period bands) is not the
            # bar: inside the rectangle (its outline aside), ink far from the fill stays ink.
            inner = (slice(y0 + 3, y1 - 2), slice(a + 3, b - 2))
            region[inner] = maxabs(rgb[inner], colour) <= OTHER_FILL
        looks.append((colour, hatch))
        infos.append(((a + b) / 2.0, value, int((b - a + 1) * (y1 - y0 + 1))))
    return region, looks, infos


def _by_look(looks: list, infos: list) -> list:
    """The bars grouped by look, in order of appearance: [(colour, chromatic, x, y, pixels)]."""
    # Group the bars by look, in order of appearance.
    clusters: list[list[int]] = []
    reps: list[tuple[np.ndarray, float]] = []
    for i, (colour, hatch) in enumerate(looks):
        best, best_d = None, None
        for k, (rc, rh) in enumerate(reps):
            d = float(np.abs(colour - rc).max()) + HATCH_WEIGHT * abs(hatch - rh)
            if d <= SAME_LOOK and (best_d is None or d < best_d):
                best, best_d = k, d
        if best is None:
            clusters.append([i])
            reps.append((colour, hatch))
        else:
            clusters[best].append(i)
    out = []
    for members in clusters:
        colour = np.median(np.array([looks[i][0] for i in members]), axis=0)
        xs = np.array([infos[i][0] for i in members])
        ys = np.array([infos[i][1] for i in members])
        npx = sum(infos[i][2] for i in members)
        chrom = float(colour.max() - colour.min()) >= CHROMATIC_FILL
        out.append((colour, chrom, xs, ys, npx))
    return out
