"""Chart geometry: the working copy of the page, its background, plot areas and gridlines.

Everything here works on a downscaled copy (long side about `WORK_SIZE`) in "work" pixels;
`Page.to_full` maps back to the original image's pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageFilter
from scipy import ndimage

WORK_SIZE = 800
#: How far (work pixels) an outward tick mark may extend a spine past the frame's corner.
TICK_REACH = 12


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


def prepare(image: Image.Image) -> Page:
    image = image.convert("RGB")
    width, height = image.size
    factor = max(1, round(max(width, height) / WORK_SIZE))
    work = image.reduce(factor) if factor > 1 else image
    full_gray = np.asarray(image.convert("L"))
    rgb = np.asarray(work).astype(np.int16)
    noisy = _noise_level(rgb) > 1.5
    if noisy:
        work = work.filter(ImageFilter.MedianFilter(3))
        rgb = np.asarray(work).astype(np.int16)
    lum = np.asarray(work.convert("L"), dtype=np.float32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    chroma = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)
    border = np.concatenate([rgb[:3].reshape(-1, 3), rgb[-3:].reshape(-1, 3),
                             rgb[:, :3].reshape(-1, 3), rgb[:, -3:].reshape(-1, 3)])
    bg = np.median(border, axis=0)
    dark_bg = float(bg @ np.array([0.299, 0.587, 0.114])) < 100
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


def long_lines(mask: np.ndarray, min_len: int, *, max_gap: int = 2, max_thickness: int = 8,
               bridge: np.ndarray | None = None) -> list[Line]:
    """Horizontal runs of `mask` at least `min_len` long, merged over adjacent rows into lines.

    Gaps up to `max_gap` pixels are bridged, and so are `bridge` pixels (coloured data drawn over
    a gridline) as long as most of the run is `mask`. Transpose the masks for vertical lines."""
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
    rs, cs = np.nonzero(d == 1)
    _, ce = np.nonzero(d == -1)
    keep = (ce - cs) >= min_len
    rows, starts, ends = rs[keep], cs[keep], ce[keep] - 1
    if bridge is not None and rows.size:
        cum = np.zeros((h, w + 1), np.int32)
        np.cumsum(mask, axis=1, out=cum[:, 1:])
        own = cum[rows, ends + 1] - cum[rows, starts]
        ok = own >= 0.6 * (ends - starts + 1)
        rows, starts, ends = rows[ok], starts[ok], ends[ok]
    lines: list[Line] = []
    open_lines: list[Line] = []
    for row, start, end in zip(rows.tolist(), starts.tolist(), ends.tolist()):
        match = None
        for line in open_lines:
            if (line.pos1 >= row - 1 and abs(line.start - start) <= 3
                    and abs(line.end - end) <= 3):
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
    return [line for line in lines if line.thickness <= max_thickness]


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

    def iou(self, other: "Box") -> float:
        left, top = max(self.left, other.left), max(self.top, other.top)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        inter = max(0, right - left + 1) * max(0, bottom - top + 1)
        return inter / max(1, self.area + other.area - inter)

    def contains(self, other: "Box", slack: int = 3) -> bool:
        return (other.left >= self.left - slack and other.right <= self.right + slack
                and other.top >= self.top - slack and other.bottom <= self.bottom + slack)


def find_plot_areas(page: Page) -> list[Box]:
    """Plot areas: frames (two spines meeting at the bottom-left corner), tinted rectangles
    (ggplot, seaborn darkgrid) and grids without a frame (fivethirtyeight)."""
    h, w = page.shape
    bg_lum = float(page.bg @ np.array([0.299, 0.587, 0.114]))
    diff = np.abs(page.lum - bg_lum)
    line_mask = (diff > 28) & (page.chroma < 60)
    coloured = page.chroma >= 60
    hlines = long_lines(line_mask, max(20, int(0.1 * w)), bridge=coloured)
    vlines = long_lines(line_mask.T, max(20, int(0.1 * h)), bridge=coloured.T)
    min_w, min_h = max(16, int(0.08 * w)), max(16, int(0.08 * h))
    boxes: list[Box] = []
    for v in vlines:
        for hl in hlines:
            # The bottom spine starts at the left spine, or up to a tick length left of it (a
            # tick at y = 0 outside the frame); likewise the left spine may run on below it.
            if not (v.pos0 - TICK_REACH <= hl.start <= v.pos0 + 4
                    and hl.pos1 - 4 <= v.end <= hl.pos1 + TICK_REACH
                    and hl.end > v.pos1 + min_w and v.start < hl.pos0 - min_h):
                continue
            left, bottom = v.pos1 + 1, hl.pos0 - 1
            right, top = hl.end, v.start
            spines = {"left": v, "bottom": hl}
            for v2 in vlines:
                if (v2 is not v and hl.end - TICK_REACH <= v2.pos1 <= hl.end + 4
                        and abs(v2.start - v.start) <= 6
                        and hl.pos1 - 6 <= v2.end <= hl.pos1 + TICK_REACH):
                    right = v2.pos0 - 1
                    spines["right"] = v2
                    break
            for h2 in hlines:
                if (h2 is not hl and v.start - TICK_REACH <= h2.pos0 <= v.start + 4
                        and v.pos0 - TICK_REACH <= h2.start <= v.pos0 + 6
                        and abs(h2.end - hl.end) <= 6):
                    top = h2.pos1 + 1
                    spines["top"] = h2
                    break
            box = Box(left, top, right, bottom, "frame", spines)
            if box.width >= min_w and box.height >= min_h:
                boxes.append(box)
    boxes += _tinted_areas(page)
    if not boxes:
        boxes += _grid_areas(_trimmed(hlines, line_mask), _trimmed(vlines, line_mask.T),
                             min_w, min_h)
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
        if rows and abs(rows[-1][0].top - box.top) < 0.3 * box.height:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [box for row in rows for box in sorted(row, key=lambda b: b.left)]


def maxabs(rgb: np.ndarray, colour) -> np.ndarray:
    """Largest channel difference of every pixel from `colour` (fast on (H, W, 3) arrays)."""
    c = np.asarray(colour, dtype=np.float32)
    d = np.abs(rgb[..., 0] - c[0])
    np.maximum(d, np.abs(rgb[..., 1] - c[1]), out=d)
    np.maximum(d, np.abs(rgb[..., 2] - c[2]), out=d)
    return d


def _tinted_areas(page: Page) -> list[Box]:
    """Rectangles filled with a uniform colour other than the page background."""
    h, w = page.shape
    small = page.rgb[::2, ::2]
    diff = maxabs(small, page.bg)
    cand = (diff >= 6) & (diff <= 90)
    if cand.mean() < 0.05:
        return []
    pix = small[cand].astype(np.int32)
    keys = (pix[:, 0] // 8) * 1024 + (pix[:, 1] // 8) * 32 + pix[:, 2] // 8
    counts = np.bincount(keys)
    top = int(np.argmax(counts))
    if counts[top] < 0.04 * small.shape[0] * small.shape[1]:
        return []
    tint = pix[keys == top].mean(axis=0)
    coarse = ndimage.binary_closing(maxabs(small, tint) <= 10, structure=np.ones((3, 3), bool),
                                    border_value=0)
    labels, n = ndimage.label(coarse)
    if n == 0:
        return []
    areas = np.bincount(labels.ravel())
    fine = maxabs(page.rgb, tint) <= 10
    rgb = page.rgb
    boxes = []
    for index, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None or areas[index] < 0.03 * coarse.size:
            continue
        y0, y1 = max(0, sl[0].start * 2 - 4), min(h, sl[0].stop * 2 + 4)
        x0, x1 = max(0, sl[1].start * 2 - 4), min(w, sl[1].stop * 2 + 4)
        region = fine[y0:y1, x0:x1]
        rows = np.nonzero(region.mean(axis=1) >= 0.5)[0]
        cols = np.nonzero(region.mean(axis=0) >= 0.5)[0]
        if rows.size == 0 or cols.size == 0:
            continue
        top_, bottom = y0 + rows[0], y0 + rows[-1]
        left, right = x0 + cols[0], x0 + cols[-1]
        if (right - left) < 0.08 * w or (bottom - top_) < 0.08 * h:
            continue
        if fine[top_:bottom + 1, left:right + 1].mean() < 0.4:
            continue
        # Sharp edges: just outside the rectangle the colour is not the tint.
        ring = []
        if top_ >= 3:
            ring.append(rgb[top_ - 2, left:right + 1])
        if bottom + 2 < h:
            ring.append(rgb[bottom + 2, left:right + 1])
        if left >= 3:
            ring.append(rgb[top_:bottom + 1, left - 2])
        if right + 2 < w:
            ring.append(rgb[top_:bottom + 1, right + 2])
        if len(ring) < 3:
            continue
        outside = np.concatenate(ring)
        if (maxabs(outside, tint) > 10).mean() < 0.6:
            continue
        boxes.append(Box(int(left), int(top_), int(right), int(bottom), "tint"))
    return boxes


def _trimmed(lines: list[Line], mask: np.ndarray) -> list[Line]:
    """Lines with the ends that run into text (ink just beside the line) cut off."""
    out = []
    for line in lines:
        lo, hi = max(0, line.pos0 - 3), min(mask.shape[0], line.pos1 + 4)
        thick = mask[lo:hi, line.start:line.end + 1].sum(axis=0)
        present = mask[line.pos0:line.pos1 + 1, line.start:line.end + 1].any(axis=0)
        clean = present & (thick <= line.thickness + 1)
        ok = clean[:-2] & clean[1:-1] & clean[2:]
        idx = np.nonzero(ok)[0]
        if idx.size == 0:
            continue
        out.append(Line(line.pos0, line.pos1, line.start + int(idx[0]),
                        line.start + int(idx[-1]) + 2))
    return out


def _grid_areas(hlines: list[Line], vlines: list[Line], min_w: int, min_h: int) -> list[Box]:
    """Areas spanned by a grid (several long lines of common extent both ways) without a frame."""
    def clusters(lines: list[Line]) -> list[list[Line]]:
        groups: list[list[Line]] = []
        for line in sorted(lines, key=lambda l: (l.start, l.end)):
            for group in groups:
                if abs(group[0].start - line.start) <= 4 and abs(group[0].end - line.end) <= 4:
                    group.append(line)
                    break
            else:
                groups.append([line])
        return [g for g in groups if len(g) >= 2]

    boxes = []
    for hg in clusters(hlines):
        for vg in clusters(vlines):
            x0 = int(np.median([l.start for l in hg]))
            x1 = int(np.median([l.end for l in hg]))
            y0 = int(np.median([l.start for l in vg]))
            y1 = int(np.median([l.end for l in vg]))
            if (all(x0 - 3 <= v.centre <= x1 + 3 for v in vg)
                    and all(y0 - 3 <= l.centre <= y1 + 3 for l in hg)
                    and x1 - x0 >= min_w and y1 - y0 >= min_h):
                boxes.append(Box(x0, y0, x1, y1, "grid"))
    return boxes


# --------------------------------------------------------------------------- gridlines


@dataclass
class Grid:
    xs: list[float]
    ys: list[float]
    mask: np.ndarray
    """Gridline pixels inside the box (box-local coordinates)."""


def gridlines(page: Page, box: Box, plot_bg: np.ndarray) -> Grid:
    """Gridlines inside a plot area: rows/columns mostly covered by one low-chroma colour."""
    rgb = page.rgb[box.top:box.bottom + 1, box.left:box.right + 1]
    chroma = page.chroma[box.top:box.bottom + 1, box.left:box.right + 1]
    differs = (np.abs(rgb - plot_bg).max(axis=2) > 8) & (chroma < 40)
    hh, ww = differs.shape
    mask = np.zeros_like(differs)
    found: dict[str, list[float]] = {"x": [], "y": []}
    colours = []
    for axis, name in ((1, "y"), (0, "x")):
        cover = differs.mean(axis=axis)
        rows = np.nonzero(cover > 0.45)[0]
        if rows.size == 0:
            continue
        groups = np.split(rows, np.nonzero(np.diff(rows) > 1)[0] + 1)
        for g in groups:
            if g.size > 6:
                continue
            sel = differs[g] if axis == 1 else differs[:, g].T
            pix = (rgb[g] if axis == 1 else rgb[:, g].transpose(1, 0, 2))[sel]
            colours.append(np.median(pix, axis=0))
            found[name].append(float(g.mean()))
    if len(found["x"]) + len(found["y"]) < 2:
        return Grid([], [], mask)
    colour = np.median(np.array(colours), axis=0)
    near = np.abs(rgb - colour).max(axis=2) <= 30
    for y in found["y"]:
        lo, hi = max(0, int(y) - 2), min(hh, int(y) + 3)
        mask[lo:hi] |= near[lo:hi]
    for x in found["x"]:
        lo, hi = max(0, int(x) - 2), min(ww, int(x) + 3)
        mask[:, lo:hi] |= near[:, lo:hi]
    return Grid([x + box.left for x in found["x"]], [y + box.top for y in found["y"]], mask)
