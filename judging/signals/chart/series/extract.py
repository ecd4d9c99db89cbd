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

import numpy as np

from judging.signals.chart.colour import (
    beyond,
    hue_gap,
    luma,
    rgb_tuple,
)
from judging.signals.chart.geometry import Box, Page, gridlines
from judging.signals.chart.series.bars import bar_chart, read_bars
from judging.signals.chart.series.groups import colour_groups, gray_groups, plot_background
from judging.signals.chart.series.marks import markers_without_lines, scattered
from judging.signals.chart.series.masks import components, dilate, drop_edge_ticks, filled_holes
from judging.signals.chart.series.points import line_tracks, marker_points
from judging.signals.chart.series.raw import RawSeries
from judging.signals.chart.series.styles import style_split
from judging.signals.chart.settings import reader_settings

INK_LEVELS = 40
"""A pixel this many levels (largest channel) from the plot background is data ink."""
CHROMATIC = 40
"""Chroma above the background's from which ink is coloured, not grey."""
GREY_CONTRAST = 50
"""Lightness difference from the background from which grey ink is strong (a line, not a
fringe or a pale band)."""
MIN_GROUP_PIXELS, MIN_GROUP_WIDTH = 20, 0.04
"""The fewest pixels a colour group needs to be read: 20, or 4% of the plot's width."""
BAR_EDGE = 3
"""Pixels around bars whose ink is the bars' edges and outlines, not series."""
ON_BAR_EDGES = 0.6
"""A part of a colour group lying this much on bar edges is the bars' outline."""
BAR_CONFIDENCE, SCATTER_CONFIDENCE = 0.9, 0.8
"""How sure a bar series and a scatter series are read (a line's comes from its coverage)."""
MIN_TRACK_WIDTH = 0.12
"""A track narrower than this share of the plot is no curve (text, a marker, a tick)."""
BESIDE_BARS_WIDTH, BESIDE_BARS_COVER = 0.3, 0.6
"""Beside bars, a track narrower than 30% of the plot or covering under 60% of its columns is
what is left of the bars (outlines, hatching, cut tops)."""
FRAGMENT_WIDTH, FRAGMENT_HEIGHT = 0.3, 0.15
"""A series within 30% of the plot's width and 15% of its height is a small cluster (text, a
legend left unread), not a series, when others are read beside it."""
FRAGMENT_SHARE = 0.2
"""A line with under a fifth of the longest line's points is a fragment of it."""


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
    ink = beyond(rgb, plot_bg, INK_LEVELS)
    ink &= ~grid.mask
    m = 2
    ink[:m] = ink[-m:] = False
    ink[:, :m] = ink[:, -m:] = False
    for el, et, er, eb in exclude:
        ink[max(0, et - t):max(0, eb - t + 1), max(0, el - l):max(0, er - l + 1)] = False
    bg_chroma = float(plot_bg.max() - plot_bg.min())
    bg_lum = luma(plot_bg)
    strength = np.abs(lum - bg_lum)
    strong = ink & ((chroma >= CHROMATIC + bg_chroma) | (strength > GREY_CONTRAST))
    ink_points = ink_sample(strong, t, l)
    series: list[RawSeries] = []
    bar_series, bar_region = bar_chart(ink, rgb, lum, plot_bg)
    for colour, chrom, xs, ys, npx in bar_series:
        series.append(RawSeries("bar", rgb_tuple(colour), "bars", xs + l, ys + t, BAR_CONFIDENCE,
                                npx, chrom))
    if bar_region is not None:
        ink &= ~bar_region
    chromatic = ink & (chroma >= CHROMATIC + bg_chroma)
    achromatic = ink & ~chromatic & (strength > GREY_CONTRAST)
    # The pale fringe of a coloured line is not a grey line.
    achromatic &= ~dilate(chromatic, 2)
    drop_edge_ticks(achromatic)
    min_px = max(MIN_GROUP_PIXELS, int(MIN_GROUP_WIDTH * ww))
    groups = [(c, mk, True) for c, mk in colour_groups(rgb, chroma, chromatic, plot_bg, min_px)]
    groups += [(c, mk, False) for c, mk in gray_groups(strength, achromatic, plot_bg, min_px)]
    bar_mask = np.zeros((hh, ww), bool)
    pending = []
    for gi, (colour, mask, chrom) in enumerate(groups):
        # Tick marks pointing inwards and other specks on the edges.
        for name, sub, lw in style_split(mask, ww, min_px):
            pending.append((gi, colour, chrom, name, sub, lw))
    # Bars first (their outlines are not series).
    for _gi, colour, chrom, name, sub, _lw in pending:
        bars = read_bars(sub) if name in ("solid", "markers") else None
        if bars:
            bar_mask |= sub
            xs = np.array([p[0] for p in bars]) + l
            ys = np.array([p[1] for p in bars]) + t
            series.append(RawSeries("bar", rgb_tuple(colour), "bars", xs, ys, BAR_CONFIDENCE,
                                    int(sub.sum()),
                                    chrom))
    edges = dilate(bar_mask, BAR_EDGE) if bar_mask.any() else None
    # Then, per colour (grey level), the line styles together: one colour is one series unless
    # its pixels hold several curves (tracks), each named after the style of most of its pixels.
    for gi, (colour, _, chrom) in enumerate(groups):
        parts = []
        for g2, _c, _ch, name, sub, _lw in pending:
            if g2 != gi:
                continue
            if bar_mask.any() and (sub & bar_mask).any():
                continue
            if edges is not None and (sub & edges).sum() >= ON_BAR_EDGES * sub.sum():
                continue
            parts.append((name, sub))
        if not parts:
            continue
        series += _group_series(parts, colour, chrom, (hh, ww), (t, l),
                                bars_found=bool(bar_series))
    series = _drop_fragments(_join_rims(series), t, l, hh, ww)
    if not series:
        problems.append("no data series found in the plot area")
    return series, problems, ink_points


def _group_series(parts: list[tuple[str, np.ndarray]], colour: np.ndarray, chrom: bool,
                  shape: tuple[int, int], origin: tuple[int, int], *, bars_found: bool
                  ) -> list[RawSeries]:
    """The series of one colour (grey level), its line styles together: scatter markers when
    its pixels are marker-shaped, else its curves (tracks), each named after the style of most
    of its pixels. `origin`: the plot area's top and left on the page."""
    hh, ww = shape
    t, l = origin
    out: list[RawSeries] = []
    union = np.zeros((hh, ww), bool)
    style_of = np.zeros((hh, ww), np.int8)
    px = {}
    for k, (name, sub) in enumerate(parts):
        union |= sub
        style_of[sub] = k + 1
        px[name] = px.get(name, 0) + int(sub.sum())
    total = sum(px.values())
    filled, marker_filled = filled_holes(union, hh, ww)
    parts_of_filled = components(filled)
    markers = filled if scattered(filled, parts_of_filled) else \
        markers_without_lines(filled, parts_of_filled)
    if markers is not None:
        parts_of_markers = parts_of_filled if markers is filled else components(markers)
        pts = marker_points(markers, parts_of_markers)
        if pts:
            xs = np.array([p[0] for p in pts]) + l
            ys = np.array([p[1] for p in pts]) + t
            return [RawSeries("scatter", rgb_tuple(colour), "markers", xs, ys, SCATTER_CONFIDENCE, total,
                              chrom)]
    for xs, ys, cover in line_tracks(marker_filled):
        if xs.max() - xs.min() < MIN_TRACK_WIDTH * ww:
            continue
        if bars_found and (xs.max() - xs.min() < BESIDE_BARS_WIDTH * ww
                           or len(xs) < BESIDE_BARS_COVER * (xs.max() - xs.min() + 1)):
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
        out.append(RawSeries("line", rgb_tuple(colour), line, xs + l, ys + t,
                             float(min(1.0, 0.5 + cover / 2)), total, chrom))
    return out


def _join_rims(series: list[RawSeries]) -> list[RawSeries]:
    """Join to its stroke the rim read as a line of its own: a track of another colour of the
    same hue (a paler or more saturated colour: a JPEG's ringing, a wide anti-aliased edge)
    that follows a longer track over most of the columns both cover. The longer track keeps
    its colour and style (the rim is sometimes the longer: then it is taken for the stroke);
    the shorter one's columns the longer lacks fill its gaps. Tracks of one colour are left
    apart: `line_tracks` told them apart on purpose."""
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
        if s_.kind != "bar" and wide < FRAGMENT_WIDTH * ww and tall < FRAGMENT_HEIGHT * hh:
            continue
        if s_.kind == "line" and len(s_.x) < FRAGMENT_SHARE * longest:
            continue
        keep.append(s_)
    return keep or series
