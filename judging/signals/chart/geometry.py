"""Chart geometry: the working copy of the page, its background, plot areas and gridlines.

Everything here works on a downscaled copy (long side about `GeometrySettings.work_size`) in
"work" pixels;
`Page.to_full` maps back to the original image's pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image, ImageFilter
from scipy import ndimage

from judging.signals.chart.colour import beyond, common_colour, luma, maxabs
from judging.signals.chart.settings import GeometrySettings, reader_settings


@dataclass
class Page:
    full_gray: np.ndarray
    """Original-resolution luminance (uint8), for OCR crops."""
    rgb: np.ndarray
    """Work-resolution RGB as int16 (H, W, 3)."""
    lum: np.ndarray
    """Work-resolution luminance (float32)."""
    chroma: np.ndarray
    """Work-resolution max - min channel (int16)."""
    factor: int
    bg: np.ndarray
    """Page background colour (3,)."""
    dark_bg: bool
    noisy: bool

    @property
    def shape(self) -> tuple[int, int]:
        return self.lum.shape

    def to_full(self, value):
        return (np.asarray(value, dtype=float) + 0.5) * self.factor - 0.5


def prepare(image: Image.Image, *, settings: GeometrySettings | None = None) -> Page:
    settings = settings or reader_settings().geometry
    image = image.convert("RGB")
    width, height = image.size
    factor = max(1, round(max(width, height) / settings.work_size))
    work = image.reduce(factor) if factor > 1 else image
    full_gray = np.asarray(image.convert("L"))
    rgb = np.asarray(work).astype(np.int16)
    noisy = _noise_level(rgb) > settings.noisy_level
    if noisy:
        work = work.filter(ImageFilter.MedianFilter(settings.denoise_size))
        rgb = np.asarray(work).astype(np.int16)
    lum = np.asarray(work.convert("L"), dtype=np.float32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    chroma = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)
    channels = rgb.shape[-1]
    border = np.concatenate([rgb[:3].reshape(-1, channels), rgb[-3:].reshape(-1, channels),
                             rgb[:, :3].reshape(-1, channels), rgb[:, -3:].reshape(-1, channels)])
    bg = np.median(border, axis=0)
    dark_bg = luma(bg) < settings.dark_page
    return Page(full_gray=full_gray, rgb=rgb, lum=lum, chroma=chroma, factor=factor, bg=bg,
                dark_bg=dark_bg, noisy=noisy)


def _noise_level(rgb: np.ndarray) -> float:
    """Median absolute horizontal difference of the green channel (0 on clean renders)."""
    g = rgb[::2, :, 1]
    return float(np.median(np.abs(np.diff(g, axis=1))))


# --------------------------------------------------------------------------- long lines


@dataclass
class Line:
    pos0: int
    pos1: int
    """Rows (horizontal line) or columns (vertical line) it occupies, inclusive."""
    start: int
    end: int
    """Its extent along its direction, inclusive."""

    @property
    def thickness(self) -> int:
        return self.pos1 - self.pos0 + 1

    @property
    def centre(self) -> float:
        return (self.pos0 + self.pos1) / 2


def long_lines(mask: np.ndarray, min_len: int, *, settings: GeometrySettings, max_gap: int = 2,
               bridge: np.ndarray | None = None, own_share: float | None = None) -> list[Line]:
    """Horizontal runs of `mask` at least `min_len` long, merged over adjacent rows into lines.

    Gaps up to `max_gap` pixels are bridged, and so are `bridge` pixels (coloured data drawn over
    a gridline) as long as `own_share` (default `settings.line_own_share`) of the run is
    `mask`. Transpose the masks for vertical lines."""
    own_share = settings.line_own_share if own_share is None else own_share
    mask = np.ascontiguousarray(mask)
    h, w = mask.shape
    closed = mask.copy()
    for gap in range(1, max_gap + 1):
        both = mask[:, :w - gap - 1] & mask[:, gap + 1:]
        for k in range(1, gap + 1):
            closed[:, k:w - gap - 1 + k] |= both
    if bridge is not None:
        closed |= bridge
    padded = np.zeros((h, w + 2), np.int8)
    padded[:, 1:-1] = closed
    d = np.diff(padded, axis=1)
    # Runs start (+1) and end (-1) alternately along each row.
    flat = np.flatnonzero(d)
    rs, cs = np.divmod(flat[0::2], w + 1)
    ce = flat[1::2] % (w + 1)
    keep = (ce - cs) >= min_len
    rows, starts, ends = rs[keep], cs[keep], ce[keep] - 1
    if bridge is not None and rows.size:
        urows, which = np.unique(rows, return_inverse=True)
        cum = np.zeros((urows.size, w + 1), np.int32)
        np.cumsum(mask[urows], axis=1, out=cum[:, 1:])
        own = cum[which, ends + 1] - cum[which, starts]
        ok = own >= own_share * (ends - starts + 1)
        rows, starts, ends = rows[ok], starts[ok], ends[ok]
    lines: list[Line] = []
    open_lines: list[Line] = []
    for row, start, end in zip(rows.tolist(), starts.tolist(), ends.tolist()):
        match = None
        for line in open_lines:
            if (line.pos1 >= row - 1 and abs(line.start - start) <= settings.line_wobble
                    and abs(line.end - end) <= settings.line_wobble):
                match = line
                break
        if match is None:
            match = Line(row, row, start, end)
            lines.append(match)
            open_lines.append(match)
        else:
            match.pos1 = row
            match.start = min(match.start, start)
            match.end = max(match.end, end)
        open_lines = [line for line in open_lines if line.pos1 >= row - 1]
    return [line for line in lines if line.thickness <= settings.line_thickness]


# --------------------------------------------------------------------------- plot areas


@dataclass
class Box:
    left: int
    top: int
    right: int
    bottom: int
    """Interior of the plot area, inclusive, work pixels."""
    source: str = "frame"
    spines: dict = field(default_factory=dict)

    @property
    def width(self) -> int:
        return self.right - self.left + 1

    @property
    def height(self) -> int:
        return self.bottom - self.top + 1

    @property
    def area(self) -> int:
        return max(0, self.width) * max(0, self.height)

    def iou(self, other: Box) -> float:
        left, top = max(self.left, other.left), max(self.top, other.top)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        inter = max(0, right - left + 1) * max(0, bottom - top + 1)
        return inter / max(1, self.area + other.area - inter)

    def contains(self, other: Box, slack: int = GeometrySettings.box_slack) -> bool:
        return (other.left >= self.left - slack and other.right <= self.right + slack
                and other.top >= self.top - slack and other.bottom <= self.bottom + slack)


#: Work pixels inward from each edge of the page's ink in which a border around it is drawn.
PAGE_EDGE = 3


def find_plot_areas(page: Page, *, settings: GeometrySettings | None = None) -> list[Box]:
    """Plot areas: frames (two spines meeting at the bottom-left corner), tinted rectangles
    (ggplot, seaborn darkgrid) and grids without a frame (fivethirtyeight).

    A rectangle drawn around all the ink of the page (at least three of its sides lined
    along nearly their whole length, nothing drawn outside it: a spreadsheet's chart-area
    border) frames the chart, title, tick labels and legend, not the data: the plot areas are
    sought inside it, and the border is taken for one only when nothing is found there."""
    settings = settings or reader_settings().geometry
    border = _page_border(page, settings=settings)
    if border is not None:
        inside = _find_plot_areas(_without_border(page, border), settings=settings)
        if inside:
            return inside
    return _find_plot_areas(page, settings=settings)


def _page_border(page: Page, *, settings: GeometrySettings
                 ) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right) of the page's ink when at least three of those edges are
    drawn (a line along 90% of each or more), else None."""
    bg_lum = luma(page.bg)
    mask = (np.abs(page.lum - bg_lum) > settings.spine_contrast) & \
        (page.chroma < settings.grey_chroma)
    inked = beyond(page.rgb, page.bg, settings.ink_diff)
    rows = np.flatnonzero(inked.any(axis=1))
    cols = np.flatnonzero(inked.any(axis=0))
    if rows.size < 2 * PAGE_EDGE or cols.size < 2 * PAGE_EDGE:
        return None
    top, bottom, left, right = int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])
    e = PAGE_EDGE
    inner = mask[top:bottom + 1, left:right + 1]
    sides = (inner[:e].any(axis=0), inner[-e:].any(axis=0), inner[:, :e].any(axis=1),
             inner[:, -e:].any(axis=1))
    if sum(float(side.mean()) >= settings.border_cover for side in sides) < \
            settings.border_sides:
        return None
    return top, bottom, left, right


def _without_border(page: Page, border: tuple[int, int, int, int]) -> Page:
    """The page with the `PAGE_EDGE` work pixels inward from each side of `border` painted in
    the background."""
    top, bottom, left, right = border
    e = PAGE_EDGE
    rgb, lum, chroma = page.rgb.copy(), page.lum.copy(), page.chroma.copy()
    bg = np.round(page.bg).astype(np.int16)
    fills = (bg, luma(bg), int(bg.max() - bg.min()))
    for a, fill in zip((rgb, lum, chroma), fills):
        a[top:top + e], a[bottom - e + 1:bottom + 1] = fill, fill
        a[:, left:left + e], a[:, right - e + 1:right + 1] = fill, fill
    return replace(page, rgb=rgb, lum=lum, chroma=chroma)


def _find_plot_areas(page: Page, *, settings: GeometrySettings) -> list[Box]:
    h, w = page.shape
    bg_lum = luma(page.bg)
    diff = np.abs(page.lum - bg_lum)
    line_mask = (diff > settings.spine_contrast) & (page.chroma < settings.grey_chroma)
    coloured = page.chroma >= settings.grey_chroma
    min_w = max(settings.min_panel, int(settings.min_panel_share * w))
    min_h = max(settings.min_panel, int(settings.min_panel_share * h))
    # A frame's sides are as long as the smallest plot area kept (five panels stacked in a
    # page, gnuplot's multiplot, are each under a tenth of its height).
    hlines = long_lines(line_mask, max(settings.min_spine, min_w), bridge=coloured,
                        settings=settings)
    vlines = long_lines(line_mask.T, max(settings.min_spine, min_h), bridge=coloured.T,
                        settings=settings)
    # Spines run on past a corner by a tick mark (and a tick label glued to it by gap closing).
    tick_reach = settings.tick_reach
    reach_x = max(tick_reach, int(settings.tick_share * w))
    reach_y = max(tick_reach, int(settings.tick_share * h))
    bg_diff = maxabs(page.rgb, page.bg)
    inked = bg_diff > settings.ink_diff
    boxes: list[Box] = []
    for v in vlines:
        for hl in hlines:
            box = _frame_box(v, hl, (hlines, vlines), inked, (reach_x, reach_y), (min_w, min_h),
                             settings=settings)
            if box is not None:
                boxes.append(box)
    tinted = _tinted_areas(page, bg_diff, settings=settings)
    boxes += tinted
    boxes += _side_frames(inked, boxes, hlines, vlines, min_w, min_h, reach_x,
                          settings=settings)
    # (A grid is sought only on a page that has a background: noise makes "lines" everywhere.)
    if not tinted and (bg_diff <= settings.background_diff).mean() >= settings.background_share:
        boxes += _grid_boxes(page, bg_diff, boxes, (min_w, min_h), settings=settings)
    return _in_reading_order(boxes, settings=settings)


def _frame_box(v: Line, hl: Line, lines: tuple[list[Line], list[Line]], inked: np.ndarray,
               reach: tuple[int, int], min_size: tuple[int, int], *,
               settings: GeometrySettings) -> Box | None:
    """The plot area whose left spine is `v` and bottom spine `hl` (with a right and a top
    spine when the page has them), or None when the two make no frame's corner."""
    hlines, vlines = lines
    reach_x, reach_y = reach
    min_w, min_h = min_size
    slack, align, tick = settings.corner_slack, settings.spine_align, settings.tick_reach
    # The bottom spine starts at the left spine, or up to a tick length left of it (a
    # tick at y = 0 outside the frame); likewise the left spine may run on below it.
    if not (v.pos0 - reach_x <= hl.start <= v.pos0 + slack
            and hl.pos1 - slack <= v.end <= hl.pos1 + reach_y
            and hl.end > v.pos1 + min_w and v.start < hl.pos0 - min_h):
        return None
    if hl.start < v.pos0 - slack:
        # What runs on left of `v` must be a tick, not the bottom of a frame whose
        # (faint) left edge lies further out: `v` is then a bar's edge or a gridline.
        column = inked[v.start:hl.pos0, hl.start:hl.start + settings.tick_mark].any(axis=1)
        if column.size and column.mean() >= 0.5:
            return None
        # Nor a grid without a frame, whose other lines run on as far.
        if any(h2 is not hl and abs(h2.start - hl.start) <= settings.line_wobble
               and v.start <= h2.centre < hl.pos0 - slack for h2 in hlines):
            return None
    if v.end > hl.pos1 + slack and any(
            v2 is not v and abs(v2.end - v.end) <= settings.line_wobble
            and v.pos1 + slack < v2.centre <= hl.end for v2 in vlines):
        return None
    left, bottom = v.pos1 + 1, hl.pos0 - 1
    right, top = hl.end, v.start
    spines = {"left": v, "bottom": hl}
    for v2 in vlines:
        if (v2 is not v and hl.end - tick <= v2.pos1 <= hl.end + slack
                and abs(v2.start - v.start) <= align
                and hl.pos1 - align <= v2.end <= hl.pos1 + reach_y):
            right = v2.pos0 - 1
            spines["right"] = v2
            break
    for h2 in hlines:
        if (h2 is not hl and v.start - tick <= h2.pos0 <= v.start + slack
                and v.pos0 - reach_x <= h2.start <= v.pos0 + align
                and abs(h2.end - hl.end) <= align):
            top = h2.pos1 + 1
            spines["top"] = h2
            break
    box = Box(left, top, right, bottom, "frame", spines)
    return box if box.width >= min_w and box.height >= min_h else None


def _grid_boxes(page: Page, bg_diff: np.ndarray, boxes: list[Box],
                min_size: tuple[int, int], *, settings: GeometrySettings) -> list[Box]:
    """Plot areas drawn by gridlines alone, beside `boxes` (the frames found)."""
    h, w = page.shape
    min_w, min_h = min_size
    bg_lum = luma(page.bg)
    # Gridlines without a frame (fivethirtyeight), or of panels whose spines are too faint.
    # They may be faint themselves (thin light grey on light grey): a lower contrast, but
    # on the far side of the background from paper (darker on light pages). Data, bar
    # edges and legends drawn over a gridline are bridged as long as some of it shows.
    signed = (bg_lum - page.lum) if not page.dark_bg else (page.lum - bg_lum)
    grid_mask = (signed > settings.grid_contrast) & (page.chroma < settings.grid_chroma)
    nonbg = bg_diff > settings.background_diff
    shortest = settings.min_spine, settings.grid_min_share
    hgrid = long_lines(grid_mask, max(shortest[0], int(shortest[1] * w)), bridge=nonbg,
                       own_share=settings.grid_own_share, settings=settings)
    vgrid = long_lines(grid_mask.T, max(shortest[0], int(shortest[1] * h)), bridge=nonbg.T,
                       own_share=settings.grid_own_share, settings=settings)
    grid = _grid_areas(_trimmed(hgrid, grid_mask, nonbg, settings=settings),
                       _trimmed(vgrid, grid_mask.T, nonbg.T, settings=settings), min_w, min_h,
                       settings=settings)
    # Next to frames (side frames too), only panels the frames missed (a spine too faint
    # to find).
    return [g for g in grid if not any(_overlap(g, k) > settings.overlap_share
                                       and not g.contains(k) for k in boxes)]


def _in_reading_order(boxes: list[Box], *, settings: GeometrySettings) -> list[Box]:
    """The boxes without duplicates and boxes inside others, in reading order."""
    # Drop duplicates and boxes inside others (legend frames, insets).
    boxes.sort(key=lambda b: -b.area)
    kept: list[Box] = []
    for box in boxes:
        if any(k.contains(box) and box.iou(k) <= 0.5 for k in kept):
            continue
        twins = [i for i, k in enumerate(kept) if box.iou(k) > 0.5]
        if twins:
            if box.source == "frame" and kept[twins[0]].source != "frame":
                kept[twins[0]] = box
            continue
        kept.append(box)
    # Reading order: rows of panels top to bottom, then left to right.
    kept.sort(key=lambda b: (b.top, b.left))
    rows: list[list[Box]] = []
    for box in kept:
        if rows and abs(rows[-1][0].top - box.top) < settings.same_row * box.height:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [box for row in rows for box in sorted(row, key=lambda b: b.left)]


def _side_frames(inked: np.ndarray, boxes: list[Box], hlines: list[Line], vlines: list[Line],
                 min_w: int, min_h: int, reach_x: int, *, settings: GeometrySettings
                 ) -> list[Box]:
    """Frames whose bottom-left corner was not found (the bottom spine hidden by bars or data):
    two vertical spines of the same extent, joined along the top or the bottom by a row that is
    drawn all the way across (a spine, or a spine under bars)."""
    h = inked.shape[0]
    slack, tick = settings.corner_slack, settings.tick_reach
    cands = []
    for v in vlines:
        for v2 in vlines:
            if (v2.pos0 - v.pos1 <= min_w or abs(v.start - v2.start) > slack
                    or abs(v.end - v2.end) > slack
                    or min(v.end, v2.end) - max(v.start, v2.start) < min_h):
                continue
            a, b = v.pos1 + 1, v2.pos0
            top, bottom = max(v.start, v2.start), min(v.end, v2.end)
            joined = False
            for row in (top, top + 1, bottom - 1, bottom):
                if 0 <= row < h and _longest_false_run(inked[row, a:b]) <= settings.tick_mark:
                    # A spine ends at the corner (but for a tick mark); a gridline or a spine
                    # further out runs on.
                    out_l = inked[row, max(0, v.pos0 - tick):v.pos0]
                    out_r = inked[row, v2.pos1 + 1:v2.pos1 + 1 + tick]
                    if out_l.all() and out_l.size or out_r.all() and out_r.size:
                        continue
                    joined = True
                    break
            if joined:
                cands.append((v, v2, top, bottom))
    out: list[Box] = []
    for v, v2, top, bottom in sorted(cands, key=lambda c: -(c[1].pos0 - c[0].pos1)):
        spines = {"left": v, "right": v2}
        for hl in hlines:
            if (v.pos0 - reach_x <= hl.start <= v.pos0 + slack
                    and v2.pos1 - slack <= hl.end <= v2.pos1 + reach_x):
                if abs(hl.pos0 - top) <= slack and "top" not in spines:
                    spines["top"] = hl
                elif abs(hl.pos1 - bottom) <= slack and "bottom" not in spines:
                    spines["bottom"] = hl
        box = Box(v.pos1 + 1, spines["top"].pos1 + 1 if "top" in spines else top,
                  v2.pos0 - 1, spines["bottom"].pos0 - 1 if "bottom" in spines else bottom,
                  "frame", spines)
        # Boxes found inside it (bars standing on the hidden spine) give way to it later.
        if any(_overlap(box, k) > settings.overlap_share and not box.contains(k)
               for k in boxes + out):
            continue
        out.append(box)
    return out


def _longest_false_run(values: np.ndarray) -> int:
    padded = np.concatenate([[True], values, [True]])
    idx = np.nonzero(padded)[0]
    return int(np.diff(idx).max()) - 1 if idx.size > 1 else values.size


def _overlap(a: Box, b: Box) -> float:
    """Intersection over the smaller area."""
    left, top = max(a.left, b.left), max(a.top, b.top)
    right, bottom = min(a.right, b.right), min(a.bottom, b.bottom)
    inter = max(0, right - left + 1) * max(0, bottom - top + 1)
    return inter / max(1, min(a.area, b.area))


def _tinted_areas(page: Page, bg_diff: np.ndarray, *, settings: GeometrySettings) -> list[Box]:
    """Rectangles filled with a uniform colour other than the page background (`bg_diff`: each
    pixel's difference from it)."""
    h, w = page.shape
    small = page.rgb[::2, ::2]
    diff = bg_diff[::2, ::2]
    near, pad, floor = settings.tint_near, settings.tint_pad, settings.tint_floor
    cand = (diff >= settings.tint_min) & (diff <= settings.tint_max)
    if cand.mean() < settings.tint_share:
        return []
    tint, count = common_colour(small[cand].astype(np.int32), step=settings.tint_step)
    if count < settings.tint_count_share * small.shape[0] * small.shape[1]:
        return []
    square = np.ones((settings.tint_closing, settings.tint_closing), bool)
    coarse = ndimage.binary_closing(maxabs(small, tint) <= near, structure=square,
                                    border_value=0)
    labels, n = ndimage.label(coarse)
    if n == 0:
        return []
    areas = np.bincount(labels.ravel())
    fine = ~beyond(page.rgb, tint, near)
    rgb = page.rgb
    boxes = []
    for index, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None or areas[index] < settings.tint_area_share * coarse.size:
            continue
        y0, y1 = max(0, sl[0].start * 2 - pad), min(h, sl[0].stop * 2 + pad)
        x0, x1 = max(0, sl[1].start * 2 - pad), min(w, sl[1].stop * 2 + pad)
        region = fine[y0:y1, x0:x1]
        row_cover, col_cover = region.mean(axis=1), region.mean(axis=0)
        rows = np.nonzero(row_cover >= 0.5)[0]
        cols = np.nonzero(col_cover >= 0.5)[0]
        if rows.size == 0 or cols.size == 0:
            continue
        # Data drawn over the tint (bars standing on the x axis) can cover most of the rows at
        # an edge: run on from the core while some tint still shows.
        r0, r1 = _extend(row_cover, rows[0], rows[-1], floor, gap=settings.corner_slack)
        c0, c1 = _extend(col_cover, cols[0], cols[-1], floor, gap=settings.corner_slack)
        top_, bottom = y0 + r0, y0 + r1
        left, right = x0 + c0, x0 + c1
        if (right - left) < settings.min_panel_share * w or \
                (bottom - top_) < settings.min_panel_share * h:
            continue
        if (fine[y0 + rows[0]:y0 + rows[-1] + 1, left:right + 1].mean() < settings.tint_core
                or fine[top_:bottom + 1, left:right + 1].mean() < settings.tint_fill):
            continue
        if not _straight_edged(fine[top_:bottom + 1, left:right + 1], settings=settings):
            continue
        # Sharp edges: just outside the rectangle the colour is not the tint.
        ring = []
        if top_ > 2:
            ring.append(rgb[top_ - 2, left:right + 1])
        if bottom + 2 < h:
            ring.append(rgb[bottom + 2, left:right + 1])
        if left > 2:
            ring.append(rgb[top_:bottom + 1, left - 2])
        if right + 2 < w:
            ring.append(rgb[top_:bottom + 1, right + 2])
        if len(ring) < settings.ring_sides:
            continue
        outside = np.concatenate(ring)
        if (maxabs(outside, tint) > near).mean() < settings.ring_differs:
            continue
        boxes.append(Box(int(left), int(top_), int(right), int(bottom), "tint"))
    return boxes


def _straight_edged(tinted: np.ndarray, *, settings: GeometrySettings) -> bool:
    """Whether the tint of a candidate box ends on a straight row at its top or its bottom
    (GeometrySettings.straight_edge): a rectangle does, a band with sloped edges does not.
    Data drawn over an edge (bars on the bottom, a line crossing the top) moves few columns'
    ends."""
    columns = tinted.any(axis=0)
    reach = settings.edge_reach
    if columns.sum() < reach:
        return False
    tops = tinted[:, columns].argmax(axis=0)
    bottoms = tinted.shape[0] - 1 - tinted[::-1, columns].argmax(axis=0)
    share = settings.straight_edge
    return any(float((np.abs(ends - np.median(ends)) <= reach).mean()) >= share
               for ends in (tops, bottoms))


def _extend(cover: np.ndarray, lo: int, hi: int, floor: float, *, gap: int) -> tuple[int, int]:
    """Grow [lo, hi] outwards while `cover` stays at or above `floor` (a gridline across the
    tint may interrupt it for up to `gap` rows)."""
    ok = np.nonzero(cover >= floor)[0]
    below, above = ok[ok < lo][::-1], ok[ok > hi]
    for k in below:
        if lo - k > gap + 1:
            break
        lo = int(k)
    for k in above:
        if k - hi > gap + 1:
            break
        hi = int(k)
    return int(lo), int(hi)


def _trimmed(lines: list[Line], mask: np.ndarray, bridge: np.ndarray | None = None, *,
             settings: GeometrySettings) -> list[Line]:
    """Lines with the ends that run into text (ink just beside the line) cut off. With `bridge`,
    a line may also end under data drawn over it (a gridline behind a bar)."""
    out = []
    for line in lines:
        reach = settings.tick_mark  # text beside a line's end: as near as a tick mark
        lo, hi = max(0, line.pos0 - reach), min(mask.shape[0], line.pos1 + reach + 1)
        thick = mask[lo:hi, line.start:line.end + 1].sum(axis=0)
        present = mask[line.pos0:line.pos1 + 1, line.start:line.end + 1].any(axis=0)
        clean = present & (thick <= line.thickness + 1)
        if bridge is not None:
            under = bridge[line.pos0:line.pos1 + 1, line.start:line.end + 1] & ~mask[
                line.pos0:line.pos1 + 1, line.start:line.end + 1]
            clean |= under.all(axis=0)
        ok = clean[:-2] & clean[1:-1] & clean[2:]
        idx = np.nonzero(ok)[0]
        if idx.size == 0:
            continue
        out.append(Line(line.pos0, line.pos1, line.start + int(idx[0]),
                        line.start + int(idx[-1]) + 2))
    return out


def _grid_areas(hlines: list[Line], vlines: list[Line], min_w: int, min_h: int, *,
                settings: GeometrySettings) -> list[Box]:
    """Areas spanned by a grid without a frame: horizontal gridlines give the left and right
    edges, vertical ones the top and bottom (data or a legend over a line's end only shortens
    it, so the longest lines of a group count). Panels in a row share the vertical extent and
    panels in a column the horizontal one, so each pair of extents is a panel if gridlines of
    both kinds lie inside it."""
    slack = settings.corner_slack

    def extents(lines: list[Line]) -> list[tuple[int, int]]:
        groups: list[list[Line]] = []
        for line in sorted(lines, key=lambda l: (l.start, l.end)):
            for group in groups:
                if abs(group[0].start - line.start) <= slack and \
                        abs(group[0].end - line.end) <= slack:
                    group.append(line)
                    break
            else:
                groups.append([line])
        return [(min(l.start for l in g), max(l.end for l in g)) for g in groups]

    # A chart has tens of gridlines; a noisy photo may give hundreds of "lines".
    hlines = sorted(hlines, key=lambda l: l.start - l.end)[:settings.max_grid_lines]
    vlines = sorted(vlines, key=lambda l: l.start - l.end)[:settings.max_grid_lines]
    xs = [e for e in extents(hlines) if e[1] - e[0] >= min_w]
    ys = [e for e in extents(vlines) if e[1] - e[0] >= min_h]
    if not xs or not ys:
        return []

    def counts(lines: list[Line], across: list[tuple[int, int]], along: list[tuple[int, int]],
               margin: int) -> np.ndarray:
        """[i, j]: lines with their centre in across[i] (shrunk by `margin`) lying within
        along[j]."""
        c = np.array([l.centre for l in lines])
        s0 = np.array([l.start for l in lines])
        s1 = np.array([l.end for l in lines])
        a = np.array(across)
        b = np.array(along)
        at = ((c[None, :] >= a[:, :1] + margin) & (c[None, :] <= a[:, 1:] - margin)).astype(int)
        within = ((s0[None, :] >= b[:, :1] - slack) & (s1[None, :] <= b[:, 1:] + slack)
                  ).astype(int)
        return at @ within.T

    edge = -settings.line_wobble  # lines on a border count, a wobble outside it
    h_in = counts(hlines, ys, xs, edge)          # [y extent, x extent]
    v_in = counts(vlines, xs, ys, edge).T        # [y extent, x extent]
    # Lines only along the border make a box (a legend), not a grid.
    interior = counts(hlines, ys, xs, slack) + counts(vlines, xs, ys, slack).T
    ok = (h_in >= 1) & (v_in >= 1) & (h_in + v_in >= settings.grid_lines) & (interior >= 2)
    boxes = [_grown(Box(xs[i][0], ys[j][0], xs[i][1], ys[j][1], "grid"), hlines,
                    settings=settings)
             for j, i in zip(*np.nonzero(ok))]
    boxes = [b for k, b in enumerate(boxes) if b not in boxes[:k]]  # grown alike: one box
    boxes = sorted(boxes, key=lambda b: -b.area)[:settings.max_grid_boxes]
    # Partial extents (a legend over the ends of some gridlines) of one panel: their union.
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                same_x = abs(a.left - b.left) <= slack and abs(a.right - b.right) <= slack
                same_y = abs(a.top - b.top) <= slack and abs(a.bottom - b.bottom) <= slack
                if (same_x and a.top <= b.bottom and b.top <= a.bottom) or (
                        same_y and a.left <= b.right and b.left <= a.right):
                    boxes.remove(b)
                    boxes[i] = Box(min(a.left, b.left), min(a.top, b.top),
                                   max(a.right, b.right), max(a.bottom, b.bottom), "grid")
                    merged = True
                    break
            if merged:
                break
    return boxes


def _grown(box: Box, hlines: list[Line], *, settings: GeometrySettings) -> Box:
    """A grid box whose height came from short vertical lines (bar edges, where a chart has no
    vertical gridlines) grown over the horizontal gridlines of its width that go on above or
    below it at the grid's own spacing (gridlines are evenly spaced: a panel stacked under
    another starts after a gap of another size)."""
    slack, wobble, spacing = settings.corner_slack, settings.line_wobble, settings.grid_spacing
    rows = sorted(l.centre for l in hlines
                  if abs(l.start - box.left) <= slack and abs(l.end - box.right) <= slack)
    inside = [r for r in rows if box.top - wobble <= r <= box.bottom + wobble]
    if len(inside) < 2:
        return box
    step = float(np.median(np.diff(inside)))
    if step < wobble:
        return box
    top, bottom = min(inside), max(inside)
    for r in reversed([r for r in rows if r < top]):
        if abs((top - r) - step) > spacing * step:
            break
        top = r
    for r in [r for r in rows if r > bottom]:
        if abs((r - bottom) - step) > spacing * step:
            break
        bottom = r
    return Box(box.left, min(box.top, int(top)), box.right, max(box.bottom, int(round(bottom))),
               box.source)


# --------------------------------------------------------------------------- gridlines


@dataclass
class Grid:
    xs: list[float]
    ys: list[float]
    mask: np.ndarray
    """Gridline pixels inside the box (box-local coordinates)."""


def gridlines(page: Page, box: Box, plot_bg: np.ndarray, *,
              settings: GeometrySettings | None = None) -> Grid:
    """Gridlines inside a plot area: rows/columns mostly covered by one low-chroma colour."""
    settings = settings or reader_settings().geometry
    rgb = page.rgb[box.top:box.bottom + 1, box.left:box.right + 1]
    chroma = page.chroma[box.top:box.bottom + 1, box.left:box.right + 1]
    differs = beyond(rgb, plot_bg, settings.ink_diff, precise=True) & \
        (chroma < settings.grid_chroma)
    hh, ww = differs.shape
    mask = np.zeros_like(differs)
    found: dict[str, list[float]] = {"x": [], "y": []}
    colours = []
    for axis, name in ((1, "y"), (0, "x")):
        cover = differs.mean(axis=axis)
        rows = np.nonzero(cover > settings.grid_cover)[0]
        if rows.size == 0:
            continue
        groups = np.split(rows, np.nonzero(np.diff(rows) > 1)[0] + 1)
        for g in groups:
            if g.size > settings.grid_thickness:
                continue
            sel = differs[g] if axis == 1 else differs[:, g].T
            pix = (rgb[g] if axis == 1 else rgb[:, g].transpose(1, 0, 2))[sel]
            colours.append(np.median(pix, axis=0))
            found[name].append(float(g.mean()))
    if len(found["x"]) + len(found["y"]) < 2:
        return Grid([], [], mask)
    colour = np.median(np.array(colours), axis=0)
    near = ~beyond(rgb, colour, settings.grid_colour, precise=True)
    half = settings.grid_halfwidth
    for y in found["y"]:
        lo, hi = max(0, int(y) - half), min(hh, int(y) + half + 1)
        mask[lo:hi] |= near[lo:hi]
    for x in found["x"]:
        lo, hi = max(0, int(x) - half), min(ww, int(x) + half + 1)
        mask[:, lo:hi] |= near[:, lo:hi]
    return Grid([x + box.left for x in found["x"]], [y + box.top for y in found["y"]], mask)
