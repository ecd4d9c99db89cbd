"""Series extraction inside one plot area: bars, colour clusters, grey levels, then points.

Pixels that differ from the plot background (gridlines and excluded regions such as the legend
removed) are first read as bars when filled columns stand on a common baseline; the bars are
grouped into series by their look (fill colour, hatching). The other pixels are split into
groups: chromatic pixels by colour (a pixel is assigned to the colour whose blend with the
background explains it, so anti-aliased edges join their line; a paler blend or the same hue of a
colour found is not a new colour), achromatic ones by grey level (the darkest value in a 3x3
neighbourhood, so a black line's grey fringe stays black). A group is one series unless it holds
several curves: read as scatter (marker centres) when it is made of marker-sized blobs, else as
lines (per-column centre of the stroke, K tracks), each named after the line style (long
strokes, dashes, dots) of most of its pixels. Short fragments and small clusters (text, an unread
legend) next to real series are dropped, and a track of the same hue that follows a longer one
(the paler or more saturated rim a JPEG leaves beside a stroke) is joined to it. Coordinates are
work pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from judging.signals.chart.colour import (
    blend,
    common_colour,
    hue_gap,
    luma,
    luma_of,
    maxabs,
    rgb_tuple,
    same_hue,
)
from judging.signals.chart.geometry import Box, Page, gridlines
from judging.signals.chart.settings import reader_settings


@dataclass
class RawSeries:
    kind: str
    """"line", "scatter" or "bar"."""
    colour: tuple[int, int, int]
    line: str
    """"solid", "dashed", "dotted", "markers" or "bars"."""
    x: np.ndarray
    y: np.ndarray
    """Work-pixel coordinates (page), x increasing."""
    confidence: float
    pixels: int
    chromatic: bool

    @property
    def style(self) -> str:
        hexa = "#{:02x}{:02x}{:02x}".format(*self.colour)
        return hexa if self.line in ("solid", "bars", "markers") and self.chromatic \
            else f"{hexa} {self.line}"


def plot_background(rgb: np.ndarray) -> np.ndarray:
    """The plot area's background colour: the commonest colour of its margins (a band under the
    top edge and one inside each side), where plotting libraries leave room around the data.
    The commonest colour of the whole area would be the bars' when wide bars cover most of it."""
    h, w = rgb.shape[:2]
    top = rgb[max(1, h // 100):max(2, h // 20), ::2]
    sides = [rgb[: int(h * 0.9):2, max(1, w // 100):max(2, w // 30)],
             rgb[: int(h * 0.9):2, w - max(2, w // 30):w - max(1, w // 100)]]
    ring = np.concatenate([part.reshape(-1, 3) for part in (top, *sides)])
    if len(ring) < 50:  # a tiny plot: every third pixel of it
        ring = rgb[::3, ::3].reshape(-1, 3)
    return common_colour(ring.astype(np.int32), step=4)[0]


def _colour_groups(rgb: np.ndarray, chroma: np.ndarray, chromatic: np.ndarray,
                   bg: np.ndarray, min_px: int) -> list[tuple[np.ndarray, np.ndarray]]:
    ys, xs = np.nonzero(chromatic)
    if ys.size < min_px:
        return []
    pix = rgb[ys, xs].astype(np.float32)
    remaining = np.ones(len(pix), bool)
    colours = []
    for _ in range(30):
        idx = np.nonzero(remaining)[0]
        if idx.size < min_px:
            break
        q = (pix[idx] // 24).astype(np.int32)
        keys = q[:, 0] * 121 + q[:, 1] * 11 + q[:, 2]
        counts = np.bincount(keys)
        top = counts.argmax()
        if counts[top] < max(5, min_px // 4):
            break
        seed = pix[idx[keys == top]].mean(axis=0)
        res, alpha = blend(pix[idx], bg, seed)
        members = (res < 18) & (alpha > 0.3)
        if members.sum() < min_px:
            remaining[idx[keys == top]] = False
            continue
        core = members & (alpha > 0.7)
        colour = pix[idx[core]].mean(axis=0) if core.sum() >= 5 else pix[idx[members]].mean(axis=0)
        remaining[idx[members]] = False
        colours.append(colour)
    if not colours:
        return []
    # Merge near-duplicates and paler blends of another colour (whichever was found first):
    # the most saturated colours first, a colour explained as a blend of a kept one is dropped.
    colours.sort(key=lambda c: -float(np.abs(c - bg).max()))
    merged: list[np.ndarray] = []
    for c in colours:
        if any(np.abs(c - m).max() <= 28 for m in merged):
            continue
        if any(blend(c[None, :], bg, m)[0][0] < 15 and blend(c[None, :], bg, m)[1][0] < 0.9
               for m in merged) or any(same_hue(c, m, bg) for m in merged):
            continue
        merged.append(c)
    res = np.empty((len(merged), len(pix)), np.float32)
    alp = np.empty_like(res)
    for k, c in enumerate(merged):
        res[k], alp[k] = blend(pix, bg, c)
    best = res.argmin(axis=0)
    ok = (res[best, np.arange(len(pix))] < 45) & (alp[best, np.arange(len(pix))] > 0.15)
    groups = []
    for k, c in enumerate(merged):
        sel = ok & (best == k)
        if sel.sum() < min_px:
            continue
        mask = np.zeros(chromatic.shape, bool)
        mask[ys[sel], xs[sel]] = True
        groups.append((c, mask))
    return groups


def _gray_groups(strength: np.ndarray, achromatic: np.ndarray, bg: np.ndarray,
                 min_px: int) -> list[tuple[np.ndarray, np.ndarray]]:
    if achromatic.sum() < min_px:
        return []
    local = ndimage.maximum_filter(np.where(achromatic, strength, 0), size=3)
    vals = local[achromatic]
    hist = np.bincount(np.clip(vals // 8, 0, 31).astype(int), minlength=32).astype(float)
    smooth = np.convolve(hist, [1, 2, 1], mode="same") / 4
    peaks = [i for i in range(32) if smooth[i] >= min_px / 3
             and smooth[i] >= smooth[max(0, i - 1)] and smooth[i] >= smooth[min(31, i + 1)]]
    centres: list[float] = []
    for p in sorted(peaks, key=lambda i: -smooth[i]):
        v = p * 8 + 4
        if all(abs(v - c) > 20 for c in centres):
            centres.append(v)
    if not centres:
        return []
    centres.sort()
    cs = np.array(centres)
    assign = np.abs(vals[:, None] - cs[None, :]).argmin(axis=1)
    ys, xs = np.nonzero(achromatic)
    sign = -1 if float(bg.mean()) > 127 else 1
    groups = []
    for k, c in enumerate(centres):
        sel = assign == k
        if sel.sum() < min_px:
            continue
        mask = np.zeros(achromatic.shape, bool)
        mask[ys[sel], xs[sel]] = True
        level = float(np.clip(bg.mean() + sign * c, 0, 255))
        groups.append((np.array([level] * 3), mask))
    return groups


# --------------------------------------------------------------------------- styles


@dataclass
class _Comps:
    labels: np.ndarray
    n: int
    w: np.ndarray
    h: np.ndarray
    area: np.ndarray
    x0: np.ndarray
    y0: np.ndarray


def _extent(mask: np.ndarray, margin: int = 0) -> tuple[int, int, int, int] | None:
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


def _components(mask: np.ndarray) -> _Comps:
    """8-connected components, labelled on the mask's extent (raster order within it is the
    whole array's, so the labels are the same)."""
    labels = np.zeros(mask.shape, np.int32)
    box = _extent(mask)
    if box is None:
        empty = np.zeros(0)
        return _Comps(labels, 0, empty, empty, empty, empty, empty)
    t, b, l, r = box
    sub, n = ndimage.label(mask[t:b, l:r], structure=np.ones((3, 3), bool))
    labels[t:b, l:r] = sub
    objs = ndimage.find_objects(sub)
    w = np.array([sl[1].stop - sl[1].start for sl in objs], dtype=float)
    h = np.array([sl[0].stop - sl[0].start for sl in objs], dtype=float)
    x0 = np.array([sl[1].start + l for sl in objs], dtype=float)
    y0 = np.array([sl[0].start + t for sl in objs], dtype=float)
    area = np.bincount(sub.ravel(), minlength=n + 1)[1:].astype(float)
    return _Comps(labels, n, w, h, area, x0, y0)


def _style_split(mask: np.ndarray, plot_w: int, min_px: int) -> list[tuple[str, np.ndarray,
                                                                         float]]:
    """Split a group's pixels by line style: [(style, mask, line width)]."""
    c = _components(mask)
    if c.n == 0:
        return []
    span = np.maximum(c.w, c.h)
    thick = c.area / span
    order = np.argsort(thick)
    cum = np.cumsum(c.area[order])
    lw = max(1.0, float(thick[order][np.searchsorted(cum, cum[-1] / 2)]))
    # A stroke many line widths long is a piece of a solid line (cut where others cross it),
    # longer than any dash.
    long_ = (span >= 0.15 * plot_w) | ((span >= max(12.0, 9 * lw)) & (thick <= 2.5 * lw))
    small = np.minimum(c.w, c.h)
    marker = (~long_ & (small >= max(4, 2.2 * lw)) & (c.area >= 0.45 * c.w * c.h)
              & (span <= 2.2 * small))
    dot = ~long_ & ~marker & (span <= 2.5 * lw + 1)
    dash = ~long_ & ~marker & ~dot
    classes = {"solid": long_, "dashed": dash, "dotted": dot, "markers": marker}
    total = c.area.sum()
    # Fragments next to a stroke of another class belong to it (a solid line cut where another
    # line crosses it; the dots of a dash-dot line).
    def near(target: np.ndarray, gap: float) -> np.ndarray:
        if not target.any():
            return np.zeros(c.n, bool)
        tmask = np.concatenate([[False], target])[c.labels]
        grown = _dilate(tmask, max(1, int(round(gap))))
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
            if sel.any() and c.area[sel].sum() < 0.3 * total:
                hit = near(long_, lw + 2) & sel
                classes["solid"] = classes["solid"] | hit
                classes[name] = sel & ~hit
    out = []
    for name, sel in classes.items():
        px = c.area[sel].sum()
        if px < min_px or px < 0.1 * total:
            continue
        m = np.concatenate([[False], sel])[c.labels]
        out.append((name, m, lw))
    return out


# --------------------------------------------------------------------------- reading points


def _bars(mask: np.ndarray) -> list[tuple[float, float]] | None:
    """Bars: filled columns sharing a baseline -> [(centre x, value end y)], else None."""
    hh, ww = mask.shape
    any_ = mask.any(axis=0)
    cols = np.nonzero(any_)[0]
    if cols.size < 3:
        return None
    top = mask.argmax(axis=0)
    bottom = hh - 1 - mask[::-1].argmax(axis=0)
    extent = bottom - top + 1
    count = mask.sum(axis=0)
    filled = any_ & (count >= 0.9 * extent) & (extent >= 3)
    if filled[cols].mean() < 0.8 or extent[cols].max() < 8:
        return None
    ends = np.concatenate([top[filled], bottom[filled]])
    base = np.bincount(ends).argmax()
    on_base = filled & ((np.abs(bottom - base) <= 1) | (np.abs(top - base) <= 1))
    if on_base[cols].mean() < 0.7:
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
    if not bars or max(b - a + 1 for a, b in bars) > 0.45 * ww:
        return None
    out = []
    for a, b in bars:
        t = float(np.median(top[a:b + 1]))
        bt = float(np.median(bottom[a:b + 1]))
        value = t if abs(bt - base) <= 1.5 else bt
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


def _bar_chart(ink: np.ndarray, rgb: np.ndarray, lum: np.ndarray, bg: np.ndarray):
    """Bars of any fill (colours, greys, hatches, outlines) standing on a common baseline,
    grouped into series by their look: ([(colour, chromatic, x, y, pixels)], bar region)."""
    hh, ww = ink.shape
    cols, centres, lengths = _runs(ink)
    if cols.size == 0:
        return [], None
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
    tall = c_len >= max(4, 0.02 * hh)
    if tall.sum() < max(6, 0.08 * ww):
        return [], None
    # The baseline: the row most of the tall runs end on (bottom, or top for negative bars).
    ends_all = np.concatenate([c_bot[tall], c_top[tall]])
    hist = np.bincount(ends_all, minlength=hh).astype(float)
    hist3 = np.convolve(hist, [1, 1, 1], mode="same")
    base = int(hist3.argmax())
    if hist3[base] < 0.5 * tall.sum():
        return [], None
    on = tall & ((np.abs(c_bot - base) <= 2) | (np.abs(c_top - base) <= 2))
    if on.sum() < 0.3 * np.count_nonzero(ink.any(axis=0)):
        return [], None
    col_ok = np.zeros(ww, bool)
    col_ok[c_col[on]] = True
    top = np.zeros(ww, int)
    bot = np.zeros(ww, int)
    top[c_col[on]] = c_top[on]
    bot[c_col[on]] = c_bot[on]
    # Per column the fill colour: median over the run's interior.
    colcol = np.zeros((ww, 3), np.float32)
    for x in np.nonzero(col_ok)[0]:
        a, b = top[x], bot[x]
        inner = rgb[a + 1:b, x] if b - a > 3 else rgb[a:b + 1, x]
        colcol[x] = np.median(inner, axis=0)
    # Bars: runs of ok columns, cut where the value end or the fill changes.
    bars = []
    start = None
    for x in range(ww + 1):
        ok = x < ww and col_ok[x]
        if ok and start is not None:
            value_prev = top[x - 1] if abs(bot[x - 1] - base) <= 2 else bot[x - 1]
            value = top[x] if abs(bot[x] - base) <= 2 else bot[x]
            if abs(value - value_prev) > 2 or np.abs(colcol[x] - colcol[x - 1]).max() > 60:
                bars.append((start, x - 1))
                start = x
        elif ok:
            start = x
        elif start is not None:
            bars.append((start, x - 1))
            start = None
    bars = [(a, b) for a, b in bars if b - a + 1 >= 3]
    if len(bars) < 2:
        return [], None
    widths = np.array([b - a + 1 for a, b in bars], float)
    wmed = float(np.median(widths))
    if wmed > 0.45 * ww:
        return [], None
    bars = [(a, b) for (a, b), w_ in zip(bars, widths) if w_ >= 0.4 * wmed]
    reach = [max(abs(int(np.median(top[a:b + 1])) - base),
                 abs(int(np.median(bot[a:b + 1])) - base)) for a, b in bars]
    if _marker_tall(reach, [b - a + 1 for a, b in bars], hh):
        return [], None
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
        hatch = float((np.abs(blum - float(np.median(blum))) > 60).mean())
        rect = (slice(max(0, y0 - 2), y1 + 3), slice(max(0, a - 2), b + 3))
        region[rect] = True
        if hatch < 0.05 and y1 - y0 > 6 and b - a > 6:
            # A line drawn over a solid bar or a shaded span (Vega's period bands) is not the
            # bar: inside the rectangle (its outline aside), ink far from the fill stays ink.
            inner = (slice(y0 + 3, y1 - 2), slice(a + 3, b - 2))
            region[inner] = maxabs(rgb[inner], colour) <= 60
        looks.append((colour, hatch))
        infos.append(((a + b) / 2.0, value, int((b - a + 1) * (y1 - y0 + 1))))
    # Group the bars by look, in order of appearance.
    clusters: list[list[int]] = []
    reps: list[tuple[np.ndarray, float]] = []
    for i, (colour, hatch) in enumerate(looks):
        best, best_d = None, None
        for k, (rc, rh) in enumerate(reps):
            d = float(np.abs(colour - rc).max()) + 100 * abs(hatch - rh)
            if d <= 30 and (best_d is None or d < best_d):
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
        chrom = float(colour.max() - colour.min()) >= 40
        out.append((colour, chrom, xs, ys, npx))
    return out, region


def _compact(c: _Comps) -> tuple[np.ndarray, np.ndarray]:
    """(span, compact): each component's larger side, and whether it is marker-shaped."""
    span = np.maximum(c.w, c.h)
    small = np.minimum(c.w, c.h)
    return span, (c.area >= 0.4 * c.w * c.h) & (span <= 2.5 * small) & (small >= 3)


def _centres(c: _Comps) -> list[tuple[float, float]]:
    """Each component's centre (row, column): `ndimage.center_of_mass(mask, c.labels, 1..n)`
    on the components' extent (sums of whole pixel coordinates, exact either way)."""
    box = _extent(c.labels)
    if box is None:
        return []
    t, b, l, r = box
    labels = c.labels[t:b, l:r].ravel()
    rows, cols = np.indices((b - t, r - l))
    count = np.bincount(labels, minlength=c.n + 1)[1:]
    cy = np.bincount(labels, weights=(rows + t).ravel(), minlength=c.n + 1)[1:] / count
    cx = np.bincount(labels, weights=(cols + l).ravel(), minlength=c.n + 1)[1:] / count
    return list(zip(cy.tolist(), cx.tolist()))


def _markers(mask: np.ndarray, c: _Comps) -> list[tuple[float, float]]:
    """Marker centres of a mask that `_scattered` accepted (`c`: its components)."""
    _, compact = _compact(c)
    typical = float(np.median(c.area[compact]))
    centres = _centres(c)
    points = []
    big_blobs = 0
    for k in range(c.n):
        cy, cx = centres[k]
        n = int(round(c.area[k] / typical))
        if n >= 2 and not compact[k] or n >= 2 and c.area[k] > 1.6 * typical:
            if big_blobs >= reader_settings().series.max_blobs:
                points.append((float(cx), float(cy)))
                continue
            big_blobs += 1
            oy, ox = int(c.y0[k]), int(c.x0[k])
            sub = c.labels[oy:oy + int(c.h[k]), ox:ox + int(c.w[k])] == k + 1
            ys, xs = np.nonzero(sub)
            ys, xs = ys + oy, xs + ox
            from scipy.cluster.vq import kmeans2
            data = np.column_stack([xs, ys]).astype(float)
            try:
                cents, _ = kmeans2(data, min(n, 8), minit="++", seed=1)
            except Exception:  # pragma: no cover - degenerate blobs
                cents = np.array([[cx, cy]])
            points += [(float(px), float(py)) for px, py in cents]
        elif c.area[k] >= 0.3 * typical:
            points.append((float(cx), float(cy)))
    return sorted(points)


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertical runs of a mask: (column, centre row, length), ordered by column then row."""
    box = _extent(mask)
    if box is None:
        empty = np.zeros(0, np.intp)
        return empty, empty.astype(float), empty.astype(float)
    t, b, l, r = box
    padded = np.zeros((r - l, b - t + 2), np.int8)
    padded[:, 1:-1] = mask[t:b, l:r].T
    d = np.diff(padded, axis=1)
    cs, rs = np.nonzero(d == 1)
    _, re = np.nonzero(d == -1)
    return cs + l, (rs + re - 1 + 2 * t) / 2.0, (re - rs).astype(float)


def _lines(mask: np.ndarray, max_tracks: int = 4) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Curves through a line group: [(x, y, coverage)] per track."""
    hh, ww = mask.shape
    cols, centres, lengths = _runs(mask)
    if cols.size == 0:
        return []
    counts = np.bincount(cols, minlength=ww)
    present = counts > 0
    k_mode = np.bincount(counts[present]).argmax()
    K = int(min(max_tracks, max(1, k_mode)))
    if K > 1 and (counts[present] == K).mean() < 0.35:
        K = 1
    starts = np.concatenate([[0], np.cumsum(counts)])
    # Start where K runs appear in the longest stretch of columns.
    good = counts == K
    best_len, best_mid, run_start = 0, None, None
    for x in range(ww + 1):
        if x < ww and good[x]:
            if run_start is None:
                run_start = x
        elif run_start is not None:
            if x - run_start > best_len:
                best_len, best_mid = x - run_start, (run_start + x - 1) // 2
            run_start = None
    if best_mid is None:
        best_mid = int(np.nonzero(present)[0][0])
        K = 1
    ys = np.full((K, ww), np.nan)
    first = centres[starts[best_mid]:starts[best_mid + 1]]
    first_len = lengths[starts[best_mid]:starts[best_mid + 1]]
    order = np.argsort(first)[:K]
    for k, j in enumerate(order):
        ys[k, best_mid] = first[j]
    lens0 = np.full(K, 1.0)
    for k, j in enumerate(order):
        lens0[k] = first_len[j]
    if K == 1:
        ys[0] = _follow_one(centres, lengths, starts, counts, best_mid, ys[0, best_mid],
                            lens0[0], hh, ww)
    for step in ((1, -1) if K > 1 else ()):
        last = ys[:, best_mid].copy()
        last_x = np.full(K, best_mid)
        last_len = lens0.copy()
        slope = np.zeros(K)
        x = best_mid + step
        while 0 <= x < ww:
            n = counts[x]
            if n:
                cs = centres[starts[x]:starts[x + 1]]
                ls = lengths[starts[x]:starts[x + 1]]
                gap = np.abs(x - last_x)
                pred = last + slope * (x - last_x)
                allowed = 4 + 0.6 * (last_len[:, None] + ls[None, :]) + 0.02 * hh * (gap[:, None] - 1)
                lost = gap > 0.08 * ww
                allowed[lost] = np.maximum(allowed[lost], 0.25 * hh)
                dist = np.abs(pred[:, None] - cs[None, :])
                used_t, used_r = set(), set()
                for flat in np.argsort(dist, axis=None):
                    t, r = divmod(int(flat), n)
                    if t in used_t or (r in used_r and n >= K):
                        continue
                    if dist[t, r] > allowed[t, r]:
                        continue
                    used_t.add(t)
                    used_r.add(r)
                    y = cs[r]
                    if not lost[t] and gap[t] <= 3:
                        slope[t] = 0.7 * slope[t] + 0.3 * np.clip(
                            (y - last[t]) / (x - last_x[t]), -0.5 * hh, 0.5 * hh)
                    else:
                        slope[t] = 0.0
                    ys[t, x] = y
                    last[t], last_x[t], last_len[t] = y, x, ls[r]
                    if len(used_t) == K:
                        break
            x += step
    out = []
    xs = np.arange(ww, dtype=float)
    for k in range(K):
        ok = ~np.isnan(ys[k])
        if ok.sum() < 3:
            continue
        # A track that only shadowed another one (they shared its runs) is not a curve.
        dup = False
        for j in range(k):
            both = ok & ~np.isnan(ys[j])
            if both.sum() >= 0.7 * ok.sum() and np.median(np.abs(ys[k, both] - ys[j, both])) < 1.5:
                dup = True
        if dup:
            continue
        cover = ok.sum() / max(1, present.sum())
        out.append((xs[ok], ys[k, ok], float(cover)))
    return out


def _follow_one(centres: np.ndarray, lengths: np.ndarray, starts: np.ndarray,
                counts: np.ndarray, start_x: int, y0: float, len0: float, hh: int, ww: int
                ) -> np.ndarray:
    """`_lines`' tracking when there is one track (most colour groups): from `start_x` both
    ways, the nearest run within reach of the predicted height in each column, and once lost
    (no run within reach for 8% of the width) the nearest run at any height: the colour was
    read as one curve (`_lines` chose one track for it; a second curve of the colour in few
    columns, or a label in its colour, could then be taken). Otherwise the same arithmetic and
    choices as the general pass (the first of equally near runs), in Python floats: numpy's
    per-call cost on arrays of one or two runs was most of a chart reading's line tracing."""
    ys = np.full(ww, np.nan)
    ys[start_x] = y0
    centre, length = centres.tolist(), lengths.tolist()
    first, count = starts.tolist(), counts.tolist()
    lost_after, drift, steepest = 0.08 * ww, 0.02 * hh, 0.5 * hh
    for step in (1, -1):
        last, last_x, last_len, slope = float(y0), start_x, float(len0), 0.0
        x = start_x + step
        while 0 <= x < ww:
            if count[x]:
                gap = abs(x - last_x)
                lost = gap > lost_after
                pred = last + slope * (x - last_x)
                best, best_dist = -1, 0.0
                for i in range(first[x], first[x + 1]):
                    dist = abs(pred - centre[i])
                    reach = 4 + 0.6 * (last_len + length[i]) + drift * (gap - 1)
                    if lost:
                        # Lost for a while (a spike's far side, a gap): a colour that holds one
                        # curve has no other ink to take for it, so its next run is the curve.
                        reach = float("inf")
                    if dist <= reach and (best < 0 or dist < best_dist):
                        best, best_dist = i, dist
                if best >= 0:
                    y = centre[best]
                    if not lost and gap <= 3:
                        slope = 0.7 * slope + 0.3 * min(max((y - last) / (x - last_x),
                                                            -steepest), steepest)
                    else:
                        slope = 0.0
                    ys[x] = y
                    last, last_x, last_len = y, x, length[best]
            x += step
    return ys


# --------------------------------------------------------------------------- entry point


def ink_sample(mask: np.ndarray, top: int, left: int) -> np.ndarray:
    """(N, 2) work-pixel (x, y) of at most SeriesSettings.ink_points pixels of `mask`, evenly drawn with a
    fixed seed: the chart's data ink as it is, before any series is traced through it."""
    ys, xs = np.nonzero(mask)
    most = reader_settings().series.ink_points
    if len(xs) > most:
        keep = np.random.default_rng(0).choice(len(xs), most, replace=False)
        keep.sort()
        xs, ys = xs[keep], ys[keep]
    return np.column_stack([xs + left, ys + top]).astype(np.float64)


def extract_series(page: Page, box: Box, exclude: list[tuple[int, int, int, int]], *,
                   grid=None, plot_bg: np.ndarray | None = None
                   ) -> tuple[list[RawSeries], list[str], np.ndarray]:
    """The series of one plot area, the problems met, and the area's data ink (`ink_sample`:
    pixels that differ strongly from the plot background, gridlines and the legend left out),
    which the comparison reads without the series split."""
    t, b, l, r = box.top, box.bottom, box.left, box.right
    rgb = page.rgb[t:b + 1, l:r + 1].astype(np.float32)
    lum = page.lum[t:b + 1, l:r + 1]
    chroma = page.chroma[t:b + 1, l:r + 1]
    hh, ww = lum.shape
    problems: list[str] = []
    if plot_bg is None:
        plot_bg = plot_background(rgb)
    if grid is None:
        grid = gridlines(page, box, plot_bg)
    ink = maxabs(rgb, plot_bg) > 40
    ink &= ~grid.mask
    m = 2
    ink[:m] = ink[-m:] = False
    ink[:, :m] = ink[:, -m:] = False
    for el, et, er, eb in exclude:
        ink[max(0, et - t):max(0, eb - t + 1), max(0, el - l):max(0, er - l + 1)] = False
    bg_chroma = float(plot_bg.max() - plot_bg.min())
    bg_lum = luma(plot_bg)
    strength = np.abs(lum - bg_lum)
    strong = ink & ((chroma >= 40 + bg_chroma) | (strength > 50))
    ink_points = ink_sample(strong, t, l)
    series: list[RawSeries] = []
    bar_series, bar_region = _bar_chart(ink, rgb, lum, plot_bg)
    for colour, chrom, xs, ys, npx in bar_series:
        series.append(RawSeries("bar", rgb_tuple(colour), "bars", xs + l, ys + t, 0.9, npx, chrom))
    if bar_region is not None:
        ink &= ~bar_region
    chromatic = ink & (chroma >= 40 + bg_chroma)
    achromatic = ink & ~chromatic & (strength > 50)
    # The pale fringe of a coloured line is not a grey line.
    achromatic &= ~_dilate(chromatic, 2)
    _drop_edge_ticks(achromatic)
    min_px = max(20, int(0.04 * ww))
    groups = [(c, mk, True) for c, mk in _colour_groups(rgb, chroma, chromatic, plot_bg, min_px)]
    groups += [(c, mk, False) for c, mk in _gray_groups(strength, achromatic, plot_bg, min_px)]
    bar_mask = np.zeros((hh, ww), bool)
    pending = []
    for gi, (colour, mask, chrom) in enumerate(groups):
        # Tick marks pointing inwards and other specks on the edges.
        for name, sub, lw in _style_split(mask, ww, min_px):
            pending.append((gi, colour, chrom, name, sub, lw))
    # Bars first (their outlines are not series).
    for _gi, colour, chrom, name, sub, _lw in pending:
        bars = _bars(sub) if name in ("solid", "markers") else None
        if bars:
            bar_mask |= sub
            xs = np.array([p[0] for p in bars]) + l
            ys = np.array([p[1] for p in bars]) + t
            series.append(RawSeries("bar", rgb_tuple(colour), "bars", xs, ys, 0.9, int(sub.sum()),
                                    chrom))
    edges = _dilate(bar_mask, 3) if bar_mask.any() else None
    # Then, per colour (grey level), the line styles together: one colour is one series unless
    # its pixels hold several curves (tracks), each named after the style of most of its pixels.
    for gi, (colour, _, chrom) in enumerate(groups):
        parts = []
        for g2, _c, _ch, name, sub, _lw in pending:
            if g2 != gi:
                continue
            if bar_mask.any() and (sub & bar_mask).any():
                continue
            if edges is not None and (sub & edges).sum() >= 0.6 * sub.sum():
                continue
            parts.append((name, sub))
        if not parts:
            continue
        union = np.zeros((hh, ww), bool)
        style_of = np.zeros((hh, ww), np.int8)
        px = {}
        for k, (name, sub) in enumerate(parts):
            union |= sub
            style_of[sub] = k + 1
            px[name] = px.get(name, 0) + int(sub.sum())
        total = sum(px.values())
        filled, marker_filled = _filled_holes(union, hh, ww)
        parts_of_filled = _components(filled)
        markers = filled if _scattered(filled, parts_of_filled) else \
            _markers_without_lines(filled, parts_of_filled)
        if markers is not None:
            parts_of_markers = parts_of_filled if markers is filled else _components(markers)
            pts = _markers(markers, parts_of_markers)
            if pts:
                xs = np.array([p[0] for p in pts]) + l
                ys = np.array([p[1] for p in pts]) + t
                series.append(RawSeries("scatter", rgb_tuple(colour), "markers", xs, ys, 0.8,
                                        total, chrom))
                continue
        for xs, ys, cover in _lines(marker_filled):
            if xs.max() - xs.min() < 0.12 * ww:
                continue
            if bar_series and (xs.max() - xs.min() < 0.3 * ww
                               or len(xs) < 0.6 * (xs.max() - xs.min() + 1)):
                continue  # remnants of bars (outlines, hatching, cut tops)
            yi = np.clip(np.round(ys).astype(int), 0, hh - 1)
            xi = xs.astype(int)
            # The style under the track (a pixel or two off the centre on thick lines).
            votes = np.bincount(style_of[yi, xi], minlength=len(parts) + 1)[1:].astype(float)
            by_name: dict[str, float] = {}
            for k, (name, _sub) in enumerate(parts):
                by_name[name] = by_name.get(name, 0.0) + votes[k]
            if not any(by_name.values()):
                by_name = {n: float(v) for n, v in px.items()}
            line = max(by_name, key=by_name.get)
            if line == "markers":
                line = "solid"
            series.append(RawSeries("line", rgb_tuple(colour), line, xs + l, ys + t,
                                    float(min(1.0, 0.5 + cover / 2)), total, chrom))
    series = _drop_fragments(_join_rims(series), t, l, hh, ww)
    if not series:
        problems.append("no data series found in the plot area")
    return series, problems, ink_points


def _join_rims(series: list[RawSeries]) -> list[RawSeries]:
    """Join to its stroke the rim read as a line of its own: a track of another colour of the
    same hue (a paler or more saturated colour: a JPEG's ringing, a wide anti-aliased edge)
    that follows a longer track over most of the columns both cover. The longer track keeps
    its colour and style (the rim is sometimes the longer: then it is taken for the stroke);
    the shorter one's columns the longer lacks fill its gaps. Tracks of one colour are left
    apart: `_lines` told them apart on purpose."""
    cfg = reader_settings().series
    order = sorted(range(len(series)), key=lambda k: -len(series[k].x))
    kept: list[RawSeries] = []
    for k in order:
        rim = series[k]
        host = None
        if rim.kind == "line" and rim.chromatic:
            host = next((h for h in kept if h.kind == "line" and h.chromatic
                         and h.colour != rim.colour
                         and hue_gap(h.colour, rim.colour) <= cfg.rim_hue
                         and _follows(rim, h, reach=cfg.rim_reach, share=cfg.rim_share,
                                      common=cfg.rim_common)), None)
        if host is None:
            kept.append(rim)
            continue
        cols_host = np.round(host.x).astype(int)
        extra = ~np.isin(np.round(rim.x).astype(int), cols_host)
        x = np.concatenate([host.x, rim.x[extra]])
        y = np.concatenate([host.y, rim.y[extra]])
        order_x = np.argsort(x, kind="stable")
        host.x, host.y = x[order_x], y[order_x]
        host.pixels += rim.pixels
    joined = {id(h) for h in kept}
    return [s_ for s_ in series if id(s_) in joined]


def _follows(rim: RawSeries, host: RawSeries, *, reach: float, share: float,
             common: float) -> bool:
    """`rim` lies within `reach` pixels of `host`'s stroke (its centre in the column or its
    neighbours: a steep stroke spans many rows) in `share` of the columns both cover, and
    those are `common` of the rim's columns."""
    cols_rim = np.round(rim.x).astype(int)
    cols_host = np.round(host.x).astype(int)
    lo = int(min(cols_rim.min(), cols_host.min())) - 1
    width = int(max(cols_rim.max(), cols_host.max())) - lo + 2
    low = np.full(width, np.inf)
    high = np.full(width, -np.inf)
    np.minimum.at(low, cols_host - lo, host.y)
    np.maximum.at(high, cols_host - lo, host.y)
    covered = np.isfinite(low)
    on_host = covered[cols_rim - lo]
    if on_host.sum() < common * len(np.unique(cols_rim)):
        return False
    near = np.stack([cols_rim - lo - 1, cols_rim - lo, cols_rim - lo + 1])
    near_low = low[near].min(axis=0)
    near_high = high[near].max(axis=0)
    close = (rim.y >= near_low - reach) & (rim.y <= near_high + reach)
    return float(close[on_host].mean()) >= share


def _drop_fragments(series: list[RawSeries], t: int, l: int, hh: int, ww: int
                    ) -> list[RawSeries]:
    """Drop what is not a series of its own: a short piece of line next to long ones (a
    crossing's blended colour, a leftover), a small cluster (text, a legend left unread)."""
    if len(series) <= 1:
        return series
    lines = [s_ for s_ in series if s_.kind == "line"]
    longest = max((len(s_.x) for s_ in lines), default=0)
    keep = []
    for s_ in series:
        wide = float(s_.x.max() - s_.x.min())
        tall = float(s_.y.max() - s_.y.min())
        if s_.kind != "bar" and wide < 0.3 * ww and tall < 0.15 * hh:
            continue
        if s_.kind == "line" and len(s_.x) < 0.2 * longest:
            continue
        keep.append(s_)
    return keep or series


def _chained(c: _Comps) -> bool:
    """Pieces (`c`, a mask's components) that follow each other along x, one at a time (a dashed
    or dotted line with markers), rather than points scattered over the plot."""
    if c.n < 3:
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
    if c.w.sum() > 1.3 * union:
        return False
    if union < 0.6 * (hi - lo) and not _dashes(c):
        return False
    # Consecutive pieces meet (their boxes overlap or nearly touch vertically).
    order = np.argsort(c.x0, kind="stable")
    top = c.y0[order]
    bottom = top + c.h[order]
    gap = np.maximum(top[1:] - bottom[:-1], top[:-1] - bottom[1:])
    near = gap <= max(3.0, 0.5 * float(np.median(c.h)))
    return float(near.mean()) >= 0.7


def _dashes(c: _Comps) -> bool:
    """Pieces (`c`) that are a dashed line's dashes: most are elongated (SeriesSettings.
    dash_elongation) along the way to the next piece (dash_alignment) and the steps between
    them repeat (dash_spacing). pgfplots' dashes are as long as their gaps, so they cover half
    the columns, where `_chained` asks for more; markers along a curve are not elongated, error
    bars are elongated across it."""
    cfg = reader_settings().series
    box = _extent(c.labels)
    if box is None or c.n < 3:
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
    sxx = mean(cols ** 2) - cx ** 2 + 1 / 12  # a pixel's own extent
    syy = mean(rows ** 2) - cy ** 2 + 1 / 12
    sxy = mean(cols * rows) - cx * cy
    spread = np.sqrt(((sxx - syy) / 2) ** 2 + sxy ** 2)
    major, minor = (sxx + syy) / 2 + spread, np.maximum((sxx + syy) / 2 - spread, 1e-9)
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
    return bool(regular.mean() >= 0.7 and (long_ & (turn <= cfg.dash_alignment)).mean() >= 0.7)


def _scattered(mask: np.ndarray, c: _Comps) -> bool:
    """Marker-sized compact blobs (bigger than the dots of a dotted line) hold most pixels
    (`c`: the mask's components)."""
    if c.n < 3 or c.n > reader_settings().series.max_components:
        return False
    span, compact = _compact(c)
    if compact.sum() < 3 or c.area[compact].sum() < 0.6 * c.area.sum():
        return False
    size = float(np.median(span[compact]))
    if size < 5:
        # Dots smaller than markers are a dotted line's, unless they lie over each other, not
        # one after the other (a cloud of small dots).
        cfg = reader_settings().series
        return c.n >= cfg.cloud_markers and not _chained(c) and _stacked(mask) >= cfg.cloud_stacked
    # Markers survive an opening by a disk a third of their size, lines between them do not.
    r = max(2, int(round(0.3 * size)))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    opened = _open(mask, (xx ** 2 + yy ** 2) <= r * r + 0.5)
    return float(opened.sum()) >= 0.75 * float(mask.sum()) or not _chained(c)


def _markers_without_lines(mask: np.ndarray, c: _Comps) -> np.ndarray | None:
    """The markers of a cloud drawn with a line of its colour through it (a fit line, a
    smoother: ggplot2's geom_smooth, seaborn's regplot), or None when the mask is no such cloud.
    The line joins the markers it crosses into one large component, so `_scattered` sees no
    markers; the markers that stand apart give their size, and an opening by a disk a fifth of
    that size keeps the markers (merged ones as blobs) and removes the thinner line. Reading
    such a group as a line would trace one wandering track through the cloud."""
    if c.n < reader_settings().series.cloud_markers or c.n > reader_settings().series.max_components:
        return None
    span, compact = _compact(c)
    if compact.sum() < reader_settings().series.cloud_markers:
        return None
    size = float(np.median(span[compact]))
    if size < 5:
        return None
    # A fifth of their size: a triangle's inscribed circle is 0.29 of its side, so a larger disk
    # would erase triangle markers with the line.
    r = max(2, int(round(0.2 * size)))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    opened = _open(mask, (xx ** 2 + yy ** 2) <= r * r + 0.5)
    if float(opened.sum()) < reader_settings().series.cloud_ink * float(mask.sum()):
        return None
    # Markers, not a thick line: the opened ink is many pieces, not one or two strokes.
    parts = _components(opened)
    if parts.n < reader_settings().series.cloud_markers or _chained(parts):
        return None  # a few strokes, or the markers of one line, one after the other along x
    # A cloud stacks markers above each other: many columns cross two of them or more, where
    # a line's markers (touching where the line is flat) meet a column once.
    if _stacked(opened) < reader_settings().series.cloud_stacked:
        return None
    return opened


def _stacked(mask: np.ndarray) -> float:
    """The share of the columns a mask covers that cross it twice or more."""
    cols, _, _ = _runs(mask)
    per_column = np.bincount(cols)
    per_column = per_column[per_column > 0]
    return float(np.mean(per_column >= 2)) if per_column.size else 0.0


#: The inside of an open marker, halved by the line through it, is at most about twice as
#: wide as tall (a half-disc, half a square); the gap between two close curves is a sliver.
MARKER_HOLE_ASPECT = 3.0
#: ... and fills most of its box (a half-disc three quarters); a sliver along a sloping curve
#: fills a fifth of its square box.
MARKER_HOLE_FILL = 0.4


def _filled_holes(mask: np.ndarray, hh: int, ww: int) -> tuple[np.ndarray, np.ndarray]:
    """The mask with its small holes filled (no bigger than a marker: hollow markers, for
    telling markers apart), and with only the holes shaped like a marker's inside filled (for
    tracking a line through open markers; not the slivers between two close curves that touch
    here and there): both from one labelling of the background.

    A hole is a piece of background (4-connected, as `binary_fill_holes` has it) that does not
    reach the edge: one labelling of the background finds them all, where `binary_fill_holes`
    grows the outside by one pixel per pass (a fifth of a chart reading on real figures)."""
    # On the ink's extent: background on its edge touches the background around the ink, so
    # what reaches the extent's edge reaches the outside, as on the whole area.
    box = _extent(mask)
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
    limit = (0.05 * min(hh, ww)) ** 2
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


def _open(mask: np.ndarray, structure: np.ndarray) -> np.ndarray:
    """`ndimage.binary_opening(mask, structure=...)` on the mask's extent: an opening keeps a
    subset of the mask, and erosion sees background beyond the extent either way."""
    out = np.zeros(mask.shape, bool)
    box = _extent(mask)
    if box is None:
        return out
    t, b, l, r = box
    out[t:b, l:r] = ndimage.binary_opening(mask[t:b, l:r], structure=structure)
    return out


def _dilate(mask: np.ndarray, iterations: int) -> np.ndarray:
    """`ndimage.binary_dilation(mask, iterations=...)`, computed on the mask's bounding box grown
    by `iterations` (nothing outside it can be reached): the same pixels, at the cost of the
    ink's extent rather than the whole plot area's."""
    out = np.zeros(mask.shape, bool)
    box = _extent(mask, iterations)
    if box is None:
        return out
    t, b, l, r = box
    out[t:b, l:r] = ndimage.binary_dilation(mask[t:b, l:r], iterations=iterations)
    return out


def _drop_edge_ticks(mask: np.ndarray) -> None:
    """Remove tick marks drawn inwards (short strokes starting at the frame), in place."""
    hh, ww = mask.shape
    c = _components(mask)
    if c.n == 0:
        return
    x1 = c.x0 + c.w - 1
    y1 = c.y0 + c.h - 1
    edge = (c.x0 <= 4) | (c.y0 <= 4) | (x1 >= ww - 5) | (y1 >= hh - 5)
    short = np.maximum(c.w, c.h) <= max(12, 0.035 * max(hh, ww))
    drop = edge & short
    if drop.any():
        mask[np.concatenate([[False], drop])[c.labels]] = False
