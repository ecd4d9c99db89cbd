"""Axis reading: tick labels beside a plot area, their OCR crops, and the pixel -> data fit."""

from __future__ import annotations

import collections
import itertools
import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from judging.signals.chart.colour import luma
from judging.signals.chart.geometry import Box, Page
from judging.signals.chart.ocr import Crop, parse_number
from judging.signals.chart.settings import AxisSettings, reader_settings

#: The 8-connected neighbourhood: a glyph's diagonal strokes are one component.
EIGHT_CONNECTED = ndimage.generate_binary_structure(2, 2)
#: Columns of a component's box: left, top, right, bottom.
BOX_SIDES = 4
#: White in 8-bit grey: the paper OCR expects behind the text.
WHITE = 255
#: The base of the powers of ten that log axes and exponents are written in.
DECADE = 10.0


@dataclass
class TickLabel:
    """A group of glyphs read as one piece of text (work pixels, inclusive bounds)."""
    left: int
    top: int
    right: int
    bottom: int
    comps: list[int]
    height: float
    """Cap height of its main glyphs."""
    sup: list[int] = field(default_factory=list)
    """Components raised as a superscript (an exponent)."""
    text: str = ""
    value: float | None = None
    conf: float = 0.0
    power: bool = False
    """Read as a base and a raised exponent."""
    power_pieces: list[Crop] | None = field(default=None, repr=False, compare=False)
    power_checked: bool = field(default=False, repr=False, compare=False)
    """`_safe_power_crops` of this label, once computed (it works at full resolution)."""

    @property
    def cx(self) -> float:
        return (self.left + self.right) / 2

    @property
    def cy(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class Strip:
    """Connected components of the text mask in a rectangle beside a plot area."""
    x0: int
    y0: int
    labels_img: np.ndarray
    slices: list
    touching: set[int]
    """Components touching the plot-area side (tick marks)."""
    orient: str = "x"


def text_mask(page: Page, *, settings: AxisSettings | None = None) -> np.ndarray:
    settings = settings or reader_settings().axes
    st = settings
    bg_lum = luma(page.bg)
    return (np.abs(page.lum - bg_lum) > st.text_contrast) & (page.chroma < st.text_chroma)


def _strip(page: Page, mask: np.ndarray, x0: int, y0: int, x1: int, y1: int,
           side: str, *, settings: AxisSettings) -> Strip | None:
    st = settings
    h, w = mask.shape
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 - x0 < st.min_strip or y1 - y0 < st.min_strip:
        return None
    bg_lum = luma(page.bg)
    s = settings
    contrast = np.abs(page.lum[y0:y1, x0:x1] - bg_lum)
    chroma = page.chroma[y0:y1, x0:x1]
    # Grey text, and text rendered with ClearType, whose strokes' edges are coloured fringes
    # (Excel's charts): strongly contrasted pixels of any colour but a saturated one.
    sub = (((contrast > s.strip_contrast) & (chroma < st.text_chroma))
           | ((contrast > s.fringe_contrast) & (chroma < s.fringe_chroma))
           | mask[y0:y1, x0:x1])
    labels, n = ndimage.label(sub, structure=EIGHT_CONNECTED)
    if n == 0:
        return None
    edge = labels[0] if side == "top" else labels[:, -1]
    touching = set(np.unique(edge[edge > 0]).tolist())
    return Strip(x0, y0, labels, ndimage.find_objects(labels), touching,
                 "x" if side == "top" else "y")


def _boxes(strip: Strip, ids: list[int]) -> np.ndarray:
    """(n, 4) left, top, right, bottom (work pixels, inclusive) of components."""
    out = np.empty((len(ids), BOX_SIDES), dtype=np.int32)
    for k, i in enumerate(ids):
        sl = strip.slices[i - 1]
        out[k] = (sl[1].start + strip.x0, sl[0].start + strip.y0,
                  sl[1].stop - 1 + strip.x0, sl[0].stop - 1 + strip.y0)
    return out


def _group(strip: Strip, ids: list[int], glyph: float, *, settings: AxisSettings
           ) -> list[TickLabel]:
    """Glyphs into labels: vertically overlapping components less than ~half a glyph apart."""
    st = settings
    if not ids:
        return []
    boxes = _boxes(strip, ids)
    n = len(ids)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    gap = max(2.0, 0.5 * glyph)
    order = np.argsort(boxes[:, 0])
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1:]:
            if boxes[b, 0] - boxes[a, 2] > gap + glyph * st.label_reach:
                break
            hgap = max(boxes[b, 0] - boxes[a, 2], boxes[a, 0] - boxes[b, 2]) - 1
            vover = min(boxes[a, 3], boxes[b, 3]) - max(boxes[a, 1], boxes[b, 1])
            if hgap <= gap and vover >= -1:
                parent[find(a)] = find(b)
            elif hgap <= st.exponent_gap * glyph and vover >= -1 and \
                    _raised(boxes[a], boxes[b], glyph, settings=settings):
                # An exponent: its minus sign can be too faint for the text mask, leaving a
                # wider gap between the base and the exponent's digits.
                parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    labels = []
    for members in groups.values():
        b = boxes[members]
        heights = b[:, 3] - b[:, 1] + 1
        main_h = float(heights.max())
        big = heights >= st.full_height * main_h
        baseline = b[big, 3].max()
        base_mid = (b[big, 0].min() + b[big, 2].max()) / 2
        sup = [ids[m] for m, bb in zip(members, b)
               if bb[3] < baseline - st.raised * main_h and bb[0] > base_mid
               and (bb[3] - bb[1] + 1) <= st.sup_height * main_h]
        # A true exponent sits right of full-height glyphs and is smaller than them.
        main = [ids[m] for m in members if ids[m] not in sup]
        if sup:
            mb = _boxes(strip, main)
            sb = _boxes(strip, sup)
            # ... and has a digit (not only a flat mark such as a tick or a dash).
            if (sb[:, 0].min() < mb[:, 2].max() - 1
                    or (sb[:, 3] - sb[:, 1] + 1).max() < st.sup_digit * main_h):
                sup, main = [], [ids[m] for m in members]
        mb = _boxes(strip, main)
        main_h = float((mb[:, 3] - mb[:, 1] + 1).max())
        labels.append(TickLabel(int(b[:, 0].min()), int(b[:, 1].min()), int(b[:, 2].max()),
                            int(b[:, 3].max()), main + sup, main_h, sup))
    return labels


def _raised(a: np.ndarray, b: np.ndarray, glyph: float, *, settings: AxisSettings) -> bool:
    """Box b (right of a) looks like a superscript of the full-height glyph a."""
    st = settings
    ha, hb = a[3] - a[1] + 1, b[3] - b[1] + 1
    return (ha >= st.full_height * glyph and hb <= st.sup_shorter * ha
            and b[3] < a[3] - st.raised_base * ha
            and b[1] <= a[1] + st.sup_top * ha)


def _crop(page: Page, strip: Strip, comps: list[int], height: float, *,
          settings: AxisSettings) -> Crop:
    """The original-resolution pixels of these components (everything else whitened)."""
    st = settings
    f = page.factor
    b = _boxes(strip, comps)
    left, top, right, bottom = b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()
    sub = np.isin(strip.labels_img[top - strip.y0:bottom - strip.y0 + 1,
                                   left - strip.x0:right - strip.x0 + 1], comps)
    if f > 1:
        sub = np.kron(sub, np.ones((f, f), bool))
    sub = ndimage.binary_dilation(sub, iterations=max(1, f // 2 + 1))
    pad = max(2, int(st.crop_pad * height * f))
    fy0, fx0 = top * f, left * f
    gray = page.full_gray[fy0:fy0 + sub.shape[0], fx0:fx0 + sub.shape[1]].astype(np.uint8)
    sub = sub[:gray.shape[0], :gray.shape[1]]
    if page.dark_bg:
        gray = WHITE - gray
    gray = np.where(sub, gray, WHITE).astype(np.uint8)
    if page.noisy:
        gray = ndimage.median_filter(gray, size=st.crop_denoise)
    out = np.full((gray.shape[0] + 2 * pad, gray.shape[1] + 2 * pad), WHITE, np.uint8)
    out[pad:pad + gray.shape[0], pad:pad + gray.shape[1]] = gray
    return Crop(out, height * f)


@dataclass
class AxisLabels:
    orientation: str
    labels: list[TickLabel]
    ticks: list[float]
    """Tick mark / gridline positions (work pixels) labels may snap to."""
    glyph: float
    problem: str | None = None


def find_tick_labels(page: Page, box: Box, others: list[Box], mask: np.ndarray,
                     grid_xs: list[float], grid_ys: list[float], *,
                     settings: AxisSettings | None = None
                     ) -> tuple[AxisLabels, AxisLabels, list[Strip]]:
    """Tick labels below (x) and left of (y) a plot area."""
    settings = settings or reader_settings().axes
    st = settings
    h, w = page.shape
    spine_b = box.spines.get("bottom")
    spine_l = box.spines.get("left")
    below = (spine_b.pos1 + 1) if spine_b else box.bottom + 1
    leftof = (spine_l.pos0 - 1) if spine_l else box.left - 1
    # x strip: below the plot area, not into a panel below.
    y1 = below + max(st.strip_min, int(st.x_strip_share * h))
    for o in others:
        if o.top > box.bottom and o.left < box.right and o.right > box.left:
            y1 = min(y1, o.top - 2)
    x0 = box.left - int(st.x_strip_side * w)
    x1 = box.right + int(st.x_strip_side * w)
    for o in others:
        if o.bottom >= below and o.top <= y1:
            if o.right < box.left:
                x0 = max(x0, o.right + 2)
            if o.left > box.right:
                x1 = min(x1, o.left - 2)
    strips = []
    xs = _strip(page, mask, x0, below, x1, y1, "top", settings=settings)
    xlab = AxisLabels("x", [], [], 0.0)
    if xs is not None:
        strips.append(xs)
        xlab = _x_labels(xs, box, w, settings=settings)
    # y strip: left of the plot area, not into a panel on the left.
    x0 = leftof - max(st.strip_min, int(st.y_strip_share * w))
    for o in others:
        if o.right < box.left and o.bottom > box.top and o.top < box.bottom:
            x0 = max(x0, o.right + 2)
    y0 = box.top - int(st.y_strip_end * h)
    y1 = box.bottom + int(st.y_strip_end * h)
    ys = _strip(page, mask, x0, y0, leftof + 1, y1, "right", settings=settings)
    ylab = AxisLabels("y", [], [], 0.0)
    if ys is not None:
        strips.append(ys)
        ylab = _y_labels(page, ys, box, settings=settings)
    xlab.ticks = sorted(set(xlab.ticks) | set(grid_xs))
    ylab.ticks = sorted(set(ylab.ticks) | set(grid_ys))
    return xlab, ylab, strips


def _glyph_height(strip: Strip, ids: list[int], *, settings: AxisSettings) -> float:
    st = settings
    hs = [strip.slices[i - 1][0].stop - strip.slices[i - 1][0].start for i in ids]
    hs = [v for v in hs if v >= st.min_glyph]
    return float(np.median(hs)) if hs else 0.0


def _marks_and_labels(strip: Strip, along: int, *, settings: AxisSettings
                      ) -> tuple[list[int], list[float]]:
    """The strip's components that may be label glyphs, and the tick marks that touch the plot
    area (short strokes across the axis) at their centre along it: `along` is the axis's array
    dimension (1 for x, 0 for y)."""
    st = settings
    n = len(strip.slices)
    ids = [i for i in range(1, n + 1) if i not in strip.touching and strip.slices[i - 1]]
    offset = strip.x0 if along == 1 else strip.y0
    ticks = []
    for i in strip.touching:
        sl = strip.slices[i - 1]
        if sl[along].stop - sl[along].start <= st.tick_width and \
                sl[1 - along].stop - sl[1 - along].start <= st.tick_length:
            ticks.append((sl[along].start + sl[along].stop - 1) / 2 + offset)
    return ids, ticks


def _x_labels(strip: Strip, box: Box, width: int, *, settings: AxisSettings) -> AxisLabels:
    st = settings
    ids, ticks = _marks_and_labels(strip, 1, settings=settings)
    # Faint tick marks can stop a pixel short of the plot area: thin and right at the top.
    marks = [i for i in ids if strip.slices[i - 1][0].start <= 2
             and strip.slices[i - 1][1].stop - strip.slices[i - 1][1].start <= 2
             and strip.slices[i - 1][0].stop - strip.slices[i - 1][0].start <= st.tick_length]
    if marks:
        ticks += [(strip.slices[i - 1][1].start + strip.slices[i - 1][1].stop - 1) / 2 + strip.x0
                  for i in marks]
        drop = set(marks)
        ids = [i for i in ids if i not in drop]
    glyph = _glyph_height(strip, ids, settings=settings)
    if glyph == 0:
        return AxisLabels("x", [], ticks, 0.0, "no tick labels below the plot area")
    labels = [lab for lab in _group(strip, ids, glyph, settings=settings)
              if lab.height >= st.min_label * glyph]
    if not labels:
        return AxisLabels("x", [], ticks, glyph, "no tick labels below the plot area")
    # The band nearest the axis with at least two labels.
    labels.sort(key=lambda lab: lab.cy)
    bands: list[list[TickLabel]] = []
    for lab in labels:
        if bands and abs(lab.cy - np.mean([l.cy for l in bands[-1]])) <= st.band_spread * glyph:
            bands[-1].append(lab)
        else:
            bands.append([lab])
    band = next((b for b in bands if len(b) >= 2), bands[0])
    lo, hi = box.left - st.x_label_reach * width, box.right + st.x_label_reach * width
    band = [lab for lab in band if lo <= lab.cx <= hi]
    return AxisLabels("x", sorted(band, key=lambda lab: lab.cx), ticks, glyph)


def _y_labels(page: Page, strip: Strip, box: Box, *, settings: AxisSettings) -> AxisLabels:
    st = settings
    ids, ticks = _marks_and_labels(strip, 0, settings=settings)
    glyph = _glyph_height(strip, ids, settings=settings)
    if glyph == 0:
        return AxisLabels("y", [], ticks, 0.0, "no tick labels left of the plot area")
    # A faint tick mark can fall short of the strip's edge: a flat dash right by the plot area.
    edge = strip.labels_img.shape[1]
    flat = []
    for i in ids:
        sl = strip.slices[i - 1]
        hgt, wid = sl[0].stop - sl[0].start, sl[1].stop - sl[1].start
        if (hgt <= max(2, st.flat_tick * glyph) and wid >= 2 * hgt and wid <= 2 * glyph
                and edge - sl[1].stop <= 0.5 * glyph + 2):
            flat.append(i)
            ticks.append((sl[0].start + sl[0].stop - 1) / 2 + strip.y0)
    if flat:
        ids = [i for i in ids if i not in flat]
    groups = _group(strip, ids, glyph, settings=settings)
    labels = [lab for lab in groups if lab.height >= st.min_label * glyph
              and lab.height <= st.max_label * glyph]
    if not labels:
        return AxisLabels("y", [], ticks, glyph, "no tick labels left of the plot area")
    right = max(lab.right for lab in labels)
    kept = [lab for lab in labels if lab.right >= right - st.right_align * glyph
            and box.top - glyph <= lab.cy <= box.bottom + glyph]
    kept = _join_units(strip, kept, groups, glyph, settings=settings)
    # A mantissa ("2 ×" of "2×10⁻¹", a minor tick's label) set apart by the spaced-out times
    # sign: the times sign (small, centred on the label's height) just left of a kept label
    # joins it, then the digits on its baseline just left of that.
    rest = [lab for lab in groups if lab not in kept and lab.height <= st.max_label * glyph]

    def times_sign(lab: TickLabel, box_: np.ndarray) -> bool:
        hh, ww = box_[3] - box_[1] + 1, box_[2] - box_[0] + 1
        mid = lab.bottom - (lab.height - 1) / 2  # the base's middle (not the exponent's)
        return (st.times_low * lab.height <= hh <= max(st.sup_height * lab.height, lab.height - 1)
                and ww <= st.times_wide * hh + 1
                and abs((box_[1] + box_[3]) / 2 - mid) <= st.times_centre * lab.height + 1)

    for k, lab in enumerate(kept):
        if not lab.sup and _safe_power_crops(page, lab, settings=settings) is None:
            continue  # only a power of ten has a mantissa
        lb = _boxes(strip, lab.comps)
        times = times_sign(lab, lb[int(np.argmin(lb[:, 0]))])
        for piece in sorted(rest, key=lambda q: -q.right):
            gap = lab.left - piece.right - 1
            if (not 0 <= gap <= 1.0 * glyph or piece.right - piece.left + 1 > st.mantissa_width * glyph
                    or piece.bottom < lab.top or piece.top > lab.bottom):
                continue
            pb = _boxes(strip, piece.comps)
            last = pb[int(np.argmax(pb[:, 2]))]
            if not times and not times_sign(lab, last):
                break
            if not times_sign(lab, last) and not (
                    st.full_height * lab.height <= piece.height <= st.mantissa_tall * lab.height
                    and abs(piece.bottom - lab.bottom) <= st.baseline_slack * glyph):
                break
            times = True
            rest.remove(piece)
            lab = TickLabel(piece.left, min(piece.top, lab.top), lab.right,
                        max(piece.bottom, lab.bottom), piece.comps + lab.comps,
                        max(piece.height, lab.height), lab.sup)
            kept[k] = lab
    return AxisLabels("y", sorted(kept, key=lambda lab: lab.cy), ticks, glyph)


def _join_units(strip: Strip, kept: list[TickLabel], groups: list[TickLabel], glyph: float, *,
                settings: AxisSettings) -> list[TickLabel]:
    """A one-glyph label ("k", "M") with a number a space to its left on the same baseline is
    that number's unit ("200 k"): the two are one label. Right-aligned labels keep the suffix
    alone otherwise (the axis then reads as words), or keep both apart where some spaces are
    narrower than others, and "800", "400", "200" read alone fit an axis a thousand times too
    short."""
    st = settings
    out = list(kept)
    for lab in kept:
        if len(lab.comps) != 1 or lab.sup or lab not in out:
            continue
        near = [piece for piece in groups if piece is not lab and not piece.sup
                and 0 <= lab.left - piece.right - 1 <= st.unit_gap * glyph
                and abs(piece.bottom - lab.bottom) <= st.baseline_slack * glyph
                and st.full_height * lab.height <= piece.height <= st.mantissa_tall * lab.height]
        if not near:
            continue
        piece = max(near, key=lambda q: q.right)
        joined = TickLabel(piece.left, min(piece.top, lab.top), lab.right,
                           max(piece.bottom, lab.bottom), piece.comps + lab.comps,
                           max(piece.height, lab.height), [])
        out = [joined if q is lab else q for q in out if q is not piece]
    return out


def find_offset_label(page: Page, box: Box, others: list[Box], mask: np.ndarray,
                      labels: AxisLabels, *, settings: AxisSettings | None = None
                      ) -> tuple[Strip, TickLabel] | None:
    """The text that scales or shifts an axis's tick labels, where matplotlib puts it (its
    ScalarFormatter's offset text: "1e7", "×10⁷", "+1.5e3"): above the top-left corner of
    the plot area for y, below the right end of the x tick labels for x. A lone piece of text
    there, alone on its line (a title's word has neighbours), else None. Whether it is a
    multiplier or an offset is for `parse_offset`; the reading is worth nothing without it
    (the tick labels "0 .. 9" of a chart up to 9e7)."""
    settings = settings or reader_settings().axes
    st = settings
    g = labels.glyph
    if g <= 0 or not labels.labels:
        return None
    s = settings
    reach, span = int(s.offset_reach * g), int(s.offset_span * g)
    if labels.orientation == "y":
        spine = box.spines.get("top")
        edge = spine.pos0 if spine else box.top
        x0, y0, x1, y1 = box.left - reach, edge - reach, box.left + span, edge - 1
    else:
        under = max(lab.bottom for lab in labels.labels) + 1
        x0, y0, x1, y1 = box.right - span, under, box.right + reach, under + reach
    for o in others:
        if o.left <= x1 and o.right >= x0 and o.top <= y1 and o.bottom >= y0:
            return None  # another panel there: its text is not this axis's
    strip = _strip(page, mask, x0, y0, x1, y1, "right", settings=settings)
    if strip is None:
        return None
    hh, ww = strip.labels_img.shape
    # Components cut by the region's edges belong to something larger (a title, a spine).
    ids = [i for i in range(1, len(strip.slices) + 1) if strip.slices[i - 1]
           and strip.slices[i - 1][0].start > 0 and strip.slices[i - 1][1].start > 0
           and strip.slices[i - 1][0].stop < hh and strip.slices[i - 1][1].stop < ww]
    groups = [lab for lab in _group(strip, ids, g, settings=settings)
              if st.min_label * g <= lab.height <= st.max_label * g]
    if labels.orientation == "y":
        near = [lab for lab in groups if abs(lab.left - box.left) <= s.offset_align * g]
    else:
        near = [lab for lab in groups if abs(lab.right - box.right) <= s.offset_align * g]
    if len(near) != 1:
        return None
    found = near[0]
    if any(lab is not found and lab.top <= found.bottom and lab.bottom >= found.top
           for lab in groups):
        return None  # words on its line: a title or an axis name, not an offset
    return strip, found


#: matplotlib's offset text as read with the tick whitelist: a multiplier ("1e7", "1e-3",
#: "10^7" read from "×10⁷"), an added offset with an exponent or a plus sign ("+1.5e3"), or both.
_MULTIPLIER = re.compile(r"(?:1[eE]|[xX×]?10\^)([+-]?\d{1,3})")
_SHIFT = re.compile(r"[+-]\d+(?:\.\d*)?(?:[eE][+-]?\d{1,3})?")


def parse_offset(text: str) -> tuple[float, float] | None:
    """(multiplier, offset) of an axis's offset text (tick value -> multiplier * value + offset),
    or None when the text is not one.

    >>> parse_offset("1e7")
    (10000000.0, 0.0)
    >>> parse_offset("+1.5e3")
    (1.0, 1500.0)
    >>> parse_offset("1e-3+2")
    (0.001, 2.0)
    >>> parse_offset("2") is None
    True
    """
    s = text.replace(" ", "").replace("−", "-")
    multiplier, offset = 1.0, 0.0
    head = _MULTIPLIER.match(s)
    if head:
        multiplier = DECADE ** int(head.group(1))
        s = s[head.end():]
    if s:
        shift = _SHIFT.fullmatch(s)
        # A bare "-2" is more likely a stray tick label than an offset: an offset has a sign
        # and, when negative, an exponent or a multiplier before it.
        if shift is None or (s[0] == "-" and not head and "e" not in s.lower()):
            return None
        offset = float(s)
    elif not head:
        return None
    return multiplier, offset


def offset_like(text: str) -> bool:
    """Text where an offset stands that reads as numbers with an exponent or a sign: an offset
    misread (the axis cannot be trusted without it), not a word."""
    s = text.replace(" ", "")
    return bool(re.search(r"\d", s)) and bool(re.search(r"[eE^]|^[+\-x×]", s))


def label_crops(page: Page, strip: Strip, label: TickLabel, *,
                settings: AxisSettings | None = None) -> list[Crop]:
    """One crop (plain label) or two (base and exponent of a power of ten).

    The split is decided at original resolution: at the work resolution a small exponent can
    merge with the base's last digit, and its minus sign can be too faint to be in the text mask.
    """
    settings = settings or reader_settings().axes
    pieces = _safe_power_crops(page, label, settings=settings)
    if pieces is not None:
        label.power = True
        return pieces
    if not label.sup:
        return [_crop(page, strip, label.comps, label.height, settings=settings)]
    label.power = True
    main = [c for c in label.comps if c not in label.sup]
    sb = _boxes(strip, label.sup)
    sup_h = float((sb[:, 3] - sb[:, 1] + 1).max())
    return [_crop(page, strip, main, label.height, settings=settings),
            _crop(page, strip, label.sup, sup_h, settings=settings)]


def plain_crop(page: Page, strip: Strip, label: TickLabel, *,
               settings: AxisSettings | None = None) -> Crop:
    """The label's crop whole, with no base and exponent split."""
    settings = settings or reader_settings().axes
    return _crop(page, strip, label.comps, label.height, settings=settings)


def _safe_power_crops(page: Page, label: TickLabel, *, settings: AxisSettings) -> list[Crop] | None:
    if not label.power_checked:
        try:
            label.power_pieces = _power_crops(page, label, settings=settings)
        except (ValueError, IndexError):  # an odd region: fall back on the work-resolution split
            label.power_pieces = None
        label.power_checked = True
    return label.power_pieces


def _power_crops(page: Page, label: TickLabel, *, settings: AxisSettings) -> list[Crop] | None:
    """Base and exponent crops of a label that is a power (a raised group of glyphs right of
    full-height ones), else None. Looks a little above and right of the label: a small, faint
    exponent may have been too light for the work-resolution text mask."""
    st = settings
    f = page.factor
    hh = label.height * f
    m = max(1, f // 2)
    h, w = page.full_gray.shape
    up, right = int(st.look_up * hh) + m, int(st.look_right * hh) + m
    x0, y0 = max(0, label.left * f - m), max(0, label.top * f - up)
    x1, y1 = min(w, (label.right + 1) * f + right), min(h, (label.bottom + 1) * f + m)
    if x1 - x0 < st.min_glyph or y1 - y0 < st.min_crop_height or hh < st.min_glyph:
        return None
    inner_top, inner_right = label.top * f - y0, (label.right + 1) * f - x0
    gray = page.full_gray[y0:y1, x0:x1].astype(np.int16)
    if page.dark_bg:
        gray = WHITE - gray
    bgv = float(np.percentile(gray, st.paper_percentile))
    ink = gray < bgv - max(st.ink_floor, st.ink_share * (bgv - float(gray.min())))
    comps, n = ndimage.label(ink, structure=EIGHT_CONNECTED)
    if n < 1:
        return None
    sl = ndimage.find_objects(comps)
    area = np.bincount(comps.ravel())[1:]
    bx = np.array([(s_[1].start, s_[0].start, s_[1].stop - 1, s_[0].stop - 1) for s_ in sl])
    hts = bx[:, 3] - bx[:, 1] + 1
    inside = (bx[:, 1] >= inner_top - 1) & (bx[:, 0] < inner_right)
    keep = (area >= 2) & (bx[:, 1] > 0) & (bx[:, 2] < x1 - x0 - 1)
    if not (keep & inside).any():
        return None
    big = keep & inside & (hts >= st.min_label * hts[keep & inside].max())
    base_line = bx[big, 3].max()
    on_base = keep & inside & (bx[:, 3] >= base_line - st.on_base * hts[big].max())
    H = float(hts[on_base].max())
    raised = keep & (bx[:, 3] < base_line - st.raised_base * H) & (hts <= st.sup_shorter * H)
    keep &= inside | raised
    base = keep & ~raised
    base_top = bx[on_base, 1].min()
    out = None
    if raised.any() and base.any():
        split = bx[raised, 0].min()
        digits = raised & (hts >= st.exponent_digit * H)
        if (digits.any() and not (bx[base, 0] >= split).any()
                and bx[base, 2].max() <= split + st.split_slack * H
                and bx[raised, 1].min() <= base_top + st.raised_top * H):
            last = bx[digits, 2].max()
            raised &= bx[:, 0] <= last  # a flat mark after the digits is no part of it
            out = _power_split_crops(gray, comps, keep & ~raised, raised, H,
                                     float(hts[digits].max()), settings=settings)
    if out is None:
        out = _touching_power(gray, ink, comps, keep, base_line, H, settings=settings)
    return out



def _touching_power(gray: np.ndarray, ink: np.ndarray, comps: np.ndarray, keep: np.ndarray,
                    base_line: int, H: float, *, settings: AxisSettings) -> list[Crop] | None:
    """Base and exponent crops of a power whose exponent touches the base's last glyph: split
    where the columns' ink stops reaching the baseline and jumps up to a group that rises above
    the base; None when no such split is found."""
    st = settings
    # The exponent touches the base's last glyph: split where the columns' ink stops
    # reaching the baseline and jumps up to a group that rises above the base.
    cols = ink & np.isin(comps, np.nonzero(keep)[0] + 1)
    has = cols.any(axis=0)
    if has.sum() < st.min_strip:
        return None
    low = np.where(has, cols.shape[0] - 1 - np.argmax(cols[::-1], axis=0), -1)
    top = np.where(has, np.argmax(cols, axis=0), cols.shape[0])
    reach = has & (low >= base_line - st.on_base * H)
    if not reach.any():
        return None
    # The base's height from the columns that reach the baseline (not the exponent's top).
    H = float(base_line - np.percentile(top[reach], st.top_percentile) + 1)
    k = len(low) - 1
    while k >= 0 and (not has[k] or low[k] < base_line - st.base_reach * H):
        k -= 1
    if k < 1 or k == len(low) - 1 or low[k] < base_line - st.raised_top * H:
        return None
    sup_cols = has[k + 1:]
    if sup_cols.sum() < max(2, st.exponent_width * H):
        return None
    sup_top = top[k + 1:][sup_cols].min()
    sup_bottom = low[k + 1:][sup_cols].max()
    base_top = float(np.median(top[:k + 1][has[:k + 1]]))
    if sup_top > base_top - st.exponent_rise * H or \
            not st.sup_digit * H <= sup_bottom - sup_top + 1 <= st.sup_shorter * H:
        return None
    own = np.zeros_like(cols)
    own[:, k + 1:] = cols[:, k + 1:]
    base_px = cols & ~own
    return _power_split_crops(gray, None, base_px, own, H, float(sup_bottom - sup_top + 1),
                              settings=settings)


def _power_split_crops(gray: np.ndarray, comps: np.ndarray | None, base, sup, H: float,
                       sup_h: float, *, settings: AxisSettings) -> list[Crop] | None:
    """Crops of the base and the exponent: `base` / `sup` are component flags (with `comps`)
    or pixel masks."""
    st = settings
    if comps is not None:
        in_base = np.isin(comps, np.nonzero(base)[0] + 1)
        in_sup = np.isin(comps, np.nonzero(sup)[0] + 1)
    else:
        in_base, in_sup = base, sup
    if not in_base.any() or not in_sup.any():
        return None
    out = []
    for own, other, height in ((in_base, in_sup, H), (in_sup, in_base, sup_h)):
        near = ndimage.binary_dilation(own, iterations=2) & ~ndimage.binary_dilation(other)
        img = np.where(near, gray, WHITE)
        rows = np.nonzero(own.any(axis=1))[0]
        cols = np.nonzero(own.any(axis=0))[0]
        img = img[max(0, rows[0] - 1):rows[-1] + 2, max(0, cols[0] - 1):cols[-1] + 2]
        pad = max(2, int(st.crop_pad * height))
        canvas = np.full((img.shape[0] + 2 * pad, img.shape[1] + 2 * pad), WHITE, np.uint8)
        canvas[pad:pad + img.shape[0], pad:pad + img.shape[1]] = np.clip(img, 0, WHITE)
        out.append(Crop(canvas, height))
    return out


def assign_text(label: TickLabel, texts: list[tuple[str, float]]) -> None:
    if len(texts) == 2:
        base, exp = texts
        label.text = f"{base[0]}^{exp[0]}"
        label.conf = min(base[1], exp[1])
        if base[0].strip() in ("", "1"):
            label.text = f"10^{exp[0]}"
    else:
        label.text, label.conf = texts[0]
    label.value = parse_number(label.text)


# --------------------------------------------------------------------------- fitting


@dataclass
class AxisFit:
    scale: str
    intercept: float
    slope: float
    """value (or log10 value) = intercept + slope * full-resolution pixel."""
    ticks: list[tuple[float, float, str]]
    """(pixel, value, text) of the ticks the fit rests on."""
    residual: float
    """RMS pixel residual of those ticks."""
    confidence: float

    def scaled(self, multiplier: float, offset: float, *, note: str) -> AxisFit:
        """The fit of tick labels that an offset text scales and shifts (value = multiplier *
        label + offset), its ticks' texts noting it."""
        return AxisFit(self.scale, multiplier * self.intercept + offset, multiplier * self.slope,
                       [(p, multiplier * v + offset, f"{t} ({note})") for p, v, t in self.ticks],
                       self.residual, self.confidence)


def snap(labels: list[TickLabel], orientation: str, ticks: list[float], glyph: float, *,
         settings: AxisSettings | None = None) -> list[float]:
    """Each label's tick position: the nearest tick mark / gridline, else the label's centre."""
    settings = settings or reader_settings().axes
    st = settings
    out = []
    arr = np.asarray(ticks, dtype=float)
    for lab in labels:
        c = lab.cx if orientation == "x" else lab.cy
        if arr.size:
            k = int(np.argmin(np.abs(arr - c)))
            if abs(arr[k] - c) <= st.snap_reach * max(glyph, st.min_strip):
                c = float(arr[k])
        out.append(c)
    return out


def _variants(text: str) -> list[str]:
    """Plausible readings of a misread tick label ('15' for '1.5', a lost minus, ...)."""
    s = text.replace("−", "-").replace(" ", "")
    out = set()
    digits = s.lstrip("+-")
    sign = s[:len(s) - len(digits)]
    for i in range(1, len(digits)):
        if "." not in digits:
            out.add(sign + digits[:i] + "." + digits[i:])
    out.add("-" + digits)
    out.add(digits)
    for i in range(len(s)):
        out.add(s[:i] + s[i + 1:])
    return [v for v in out if v]


_MINUS = str.maketrans({"−": "-", "–": "-", "—": "-", "⁻": "-", "⁰": "0", "¹": "1", "²": "2",
                        "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8", "⁹": "9"})


def _exponents(label: TickLabel, *, settings: AxisSettings) -> tuple[float, list[tuple[int, int]]]:
    """log10 of a power label's mantissa ("3" of "3×10⁻¹", else 0) and its plausible exponents,
    each with a cost (0 = as read): a lost or invented minus sign, a spurious digit."""
    st = settings
    text = label.text.translate(_MINUS).replace(" ", "")
    if not (label.power or "^" in text):
        out: dict[int, int] = {}
        value = label.value
        if value is not None and value > 0:
            e = math.log10(value)
            # A plain "10" or "100" may be a power whose exponent was lost: a weak reading.
            if abs(e - round(e)) < st.exact_log:
                out[round(e)] = 2
        merged = re.fullmatch(r"10(-?)(\d{1,2})", text)
        if merged:
            # "107" for 10⁷, "1073" for 10⁻³ (the raised minus read as a digit).
            sign, digits = merged.groups()
            v = int(digits)
            for e, c in ((-v if sign else v, 1), (v if sign else -v, 1)):
                out[e] = min(c, out.get(e, math.inf))
            if len(digits) == 2 and not sign:
                out.setdefault(-int(digits[1]), 1)
        return 0.0, sorted(out.items(), key=lambda kv: kv[1])
    base, _, exp = text.partition("^")
    base = re.sub(r"[^0-9]", "", base)
    mant = 0.0
    merged_mantissa = re.fullmatch(r"([2-9])10", base)  # "3" of "3×10" read as "310"
    if merged_mantissa:
        mant = math.log10(int(merged_mantissa.group(1)))
    m = re.search(r"([+-]?)(\d+)", exp)
    if not m:
        return mant, []
    sign, digits = m.group(1), m.group(2)[:3]
    out: dict[int, int] = {}

    def add(e: int, cost: int) -> None:
        if abs(e) <= st.max_exponent and cost < out.get(e, math.inf):
            out[e] = cost

    exact = m.group(0) == exp
    v = int(digits)
    add(-v if sign == "-" else v, 0 if exact else 1)
    add(v if sign == "-" else -v, 1)
    if len(digits) >= 2:
        for i in range(len(digits)):
            d = int(digits[:i] + digits[i + 1:])
            add(-d if sign == "-" else d, 1)
            add(d if sign == "-" else -d, 2)
    return mant, sorted(out.items(), key=lambda kv: kv[1])


def _wordy(label: TickLabel, *, settings: AxisSettings) -> bool:
    """A label that reads as a word: letters the number whitelist let through, or far wider than
    the text read (OCR with a number whitelist drops a word's letters)."""
    st = settings
    if label.power:
        return False
    text = label.text.replace(" ", "")
    if label.value is None and re.search(r"[A-Za-zµ]", re.sub(r"\d[eE]", "", text)):
        return True
    width = label.right - label.left + 1
    return width > (st.char_width * len(text) + st.word_margin) * max(label.height, 1.0)


def _power_kind(label: TickLabel, *, settings: AxisSettings) -> str | None:
    """"power" (read as base and exponent), "powerish" (a power whose exponent merged into the
    base: "107", or a plain power of ten: "10", "0.01"), "plain" (another number) or None."""
    st = settings
    text = label.text.translate(_MINUS).replace(" ", "")
    if label.power or "^" in text:
        return "power"
    if re.fullmatch(r"10-?\d{0,2}", text):
        return "powerish"
    if label.value is None:
        return None
    if label.value > 0 and abs(math.log10(label.value) - round(math.log10(label.value))) < st.exact_log:
        return "powerish"
    return "plain"


def _power_fit(positions: list[float], labels: list[TickLabel], orientation: str,
               tol: float, *, settings: AxisSettings) -> tuple[AxisFit | None, str | None]:
    """A log axis labelled with powers of ten: the exponents are integers and an arithmetic
    sequence over evenly spaced ticks, so two trusted readings fix the rest and a misread
    exponent (a lost minus sign, a wrong digit, an unreadable one) is repaired from the spacing.
    Minor ticks' labels (m×10^e) sit at e + log10(m)."""
    st = settings
    idx = [k for k, lab in enumerate(labels)
           if _power_kind(lab, settings=settings) in ("power", "powerish")]
    parsed = [_exponents(lab, settings=settings) for lab in labels]
    mant = np.array([p_[0] for p_ in parsed])
    cand = {k: p_[1] for k, p_ in enumerate(parsed) if p_[1]}
    P = np.asarray(positions, dtype=float)
    best = None
    keys = sorted(cand)
    want = 1 if orientation == "x" else -1
    for i, j in itertools.combinations(keys, 2):
        if abs(P[j] - P[i]) < st.min_tick_gap:
            continue
        for ei, _ci in cand[i][:4]:
            for ej, _cj in cand[j][:4]:
                li, lj = ei + mant[i], ej + mant[j]
                if abs(li - lj) < st.exact_log:
                    continue
                b = (lj - li) / (P[j] - P[i])
                if np.sign(b) != want:
                    continue
                a = li - b * P[i]
                pred = a + b * P - mant
                near = np.abs(pred - np.round(pred)) <= tol * abs(b)
                inl, cost, exact = 0, 0, 0
                for k in keys:
                    if not near[k]:
                        continue
                    e = int(round(pred[k]))
                    c = next((c for ee, c in cand[k] if ee == e), None)
                    if c is not None:
                        inl += 1
                        cost += c
                        exact += c == 0
                n_near = int(near[idx].sum()) if idx else 0
                score = (inl, n_near, -cost)
                if best is None or score > best[0]:
                    best = (score, a, b, near, exact)
    if best is None:
        return None, None
    (inl, n_near, cost), a, b, near, exact = best
    # Trust needs readings as they were read: one at least, both when there are only two.
    if (inl < 2 or inl < st.power_inliers * len(idx) or n_near < len(idx) - max(1, len(idx) // st.power_misread)
            or exact < 1 or (inl == 2 and exact < 2 and len(idx) <= st.few_powers)):
        return None, None
    # Every power label at a decade position, its exponent from the spacing.
    use = [k for k in range(len(labels)) if near[k] and (k in idx or k in cand)]
    E = np.round(a + b * P[use] - mant[use])
    L = E + mant[use]
    if len(set(np.round(L, st.log_digits).tolist())) < 2:
        return None, None
    b, a = np.polyfit(P[use], L, 1)
    res = np.abs((L - a) / b - P[use])
    rms = float(np.sqrt(np.mean(res ** 2)))
    if rms > tol:
        return None, None
    # Minor ticks are labelled (m×10^e, m > 1) only on an axis a decade or two long, so their
    # labels stand less than a decade from the next label read. Further apart, the exponents
    # were misread and happen to line up ('10^9', '6x10^-1', '4x10^-8' for 10^0, 6x10^-1,
    # 4x10^-1: a fit over 43 decades).
    if np.any(np.round(DECADE ** mant[use]) > 1) and \
            float(np.max(np.abs(np.diff(L[np.argsort(P[use])])))) > 1.0 + st.integer_exponent:
        return None, None
    ticks = []
    for k, e, lv in zip(use, E, L):
        m_ = round(DECADE ** mant[k])
        ticks.append((float(P[k]), float(DECADE ** lv),
                      f"{m_}x10^{int(e)}" if m_ > 1 else f"10^{int(e)}"))
    confidence = (min(1.0, (len(use) - 1) / st.full_confidence) * min(1.0, (inl - cost) / max(1, len(use)))
                  * max(st.residual_floor, 1 - rms / tol))
    return AxisFit("log", float(a), float(b), ticks, rms, float(max(st.min_confidence, confidence))), None


_E_NOTATION = re.compile(r"\d[eE][+-]?\d")


def _one_format(labels: list[TickLabel]) -> list[bool]:
    """Which labels may be used: on an axis written in e-notation ("7.5e+07"), a label read
    without its leading digit (".0e+07") is a misreading, not a value."""
    if not any(_E_NOTATION.search(lab.text) for lab in labels):
        return [True] * len(labels)
    return [not (_E_NOTATION.search(lab.text) and re.match(r"[+-]?[.,]", lab.text))
            for lab in labels]


#: With at least AGREEING_LABELS tick labels read, fewer than AGREEING_SHARE of them agreeing
#: with the best reading leaves the axis unread.
AGREEING_LABELS = 5
AGREEING_SHARE = 0.5
#: Two values or more each read twice or more, on at least half the labels: minor
#: labels without their decades, not misreadings.
REPEATED_SHARE = 0.5


def _fractional_power(label: TickLabel, *, settings: AxisSettings) -> bool:
    """A power of ten read with a fractional exponent ("10^0.5": pgfplots' half decades), its
    mantissa ("2" of "2x10^1", `_exponents`) set aside."""
    st = settings
    if "^" not in label.text or label.value is None or label.value <= 0:
        return False
    exponent = math.log10(label.value) - _exponents(label, settings=settings)[0]
    return abs(exponent - round(exponent)) > st.integer_exponent


#: How many more tick labels a log reading of labels within half a decade must fit than the
#: linear reading, to be taken: to rounding both fit such labels alike, so a log axis needs
#: labels the linear one cannot place.
NARROW_LOG_LEAD = 2


def _repeated_values(items: list[tuple[float, float, str]], orientation: str) -> str | None:
    """Why the labels cannot be fitted when many repeat a value, else None. An axis labels each
    value once. Values that come back along it, many of them (Plotly's log axis labelled
    "2 3 .. 9" in every decade, its decades written on another row), are mantissas read without
    their decades: a fit through one decade's would be a thousandfold wrong. (One or two
    misread labels repeat a value too; repairs handle those.)"""
    seen = collections.Counter(v for _, v, _ in items)
    repeated = sum(n for n in seen.values() if n >= 2)
    if sum(1 for n in seen.values() if n >= 2) >= 2 and repeated >= REPEATED_SHARE * len(items):
        return (f"{orientation} axis unreadable: {repeated} of its {len(items)} tick "
                f"labels repeat values (minor labels without their decades?)")
    return None


def fit_axis(positions: list[float], labels: list[TickLabel], span: tuple[float, float],
             orientation: str, *, settings: AxisSettings | None = None
             ) -> tuple[AxisFit | None, str | None]:
    """Fit value = a + b * pixel (linear) or log10(value) = a + b * pixel (log) to the ticks,
    ignoring misread labels (RANSAC over pairs) and repairing those that a plausible misreading
    explains."""
    st = settings = settings or reader_settings().axes
    tol = max(2.0, st.fit_tolerance * abs(span[1] - span[0]))
    wordy = sum(1 for lab in labels if _wordy(lab, settings=settings))
    if wordy >= 2 and wordy >= st.wordy_share * len(labels):
        return None, (f"{orientation} axis unreadable: its tick labels are words, not numbers "
                      f"(a categorical axis)")
    kinds = [_power_kind(lab, settings=settings) for lab in labels]
    powers, powerish = kinds.count("power"), kinds.count("powerish")
    if powers >= 2 and powers + powerish >= 0.5 * len(labels) and powers > kinds.count("plain"):
        fit, _ = _power_fit(positions, labels, orientation, tol, settings=settings)
        if fit is not None:
            return fit, None
        # A power of ten read with a fractional exponent ("10^0.5" beside "10^0": pgfplots'
        # half decades) is no misread integer: such labels are fitted like any others'.
        if powers >= 0.5 * len(labels) and \
                not any(_fractional_power(lab, settings=settings) for lab in labels):
            return None, (f"{orientation} axis unreadable: powers of ten whose exponents could "
                          f"not be read consistently")
    items = [(p, lab.value, lab.text) for p, lab, usable in
             zip(positions, labels, _one_format(labels)) if lab.value is not None and usable]
    # Duplicate positions (a label split in two) and identical values make no sense.
    if len(items) < 2:
        return None, (f"{orientation} axis unreadable: fewer than 2 tick labels read"
                      f" ({len(items)} of {len(labels)})")
    repeated = _repeated_values(items, orientation)
    if repeated is not None:
        return None, repeated
    best = _best_line(items, tol, settings=settings)
    if best is None:
        return None, f"{orientation} axis unreadable: tick labels have no usable spacing"
    (count, _), scale, inl, pts = best
    if count == 2 and scale == "linear":
        scale, pts, inl = _decades_apart(scale, pts, inl, items, settings=settings)
    P = np.array([q[0] for q in pts])
    V = np.array([q[1] for q in pts])
    use = np.asarray(inl, bool)
    agreeing = int(use.sum())
    if agreeing < 2:
        return None, f"{orientation} axis unreadable: tick labels do not agree with each other"
    b, a = np.polyfit(P[use], V[use], 1)
    texts = [q[2] for q in pts]
    a, b = _repair(P, V, use, texts, scale=scale, line=(a, b), tol=tol)
    if (orientation == "x" and b <= 0) or (orientation == "y" and b >= 0):
        # Inverted axes exist but are rare; a reversed fit is far more often a misreading.
        if use.sum() < st.reversed_ticks:
            return None, f"{orientation} axis unreadable: tick values run the wrong way"
    res = np.abs((V[use] - a) / b - P[use])
    rms = float(np.sqrt(np.mean(res ** 2)))
    n_used = int(use.sum())
    if len(items) >= AGREEING_LABELS and agreeing < AGREEING_SHARE * len(items):
        # Most of the labels, as read, disagree with the best reading (counted over all the
        # labels read, whether or not its scale could place them: a cautious count): not a few
        # misread labels but an axis of another kind (ggplot2's square-root scale), which
        # repairs would only bend into a wrong one.
        return None, (f"{orientation} axis unreadable: only {agreeing} of its {len(items)} tick "
                      f"labels agree with any one reading")
    confidence = _fit_confidence(n_used, len(items), rms / tol, settings=settings)
    ticks = []
    for k in np.nonzero(use)[0]:
        value = float(V[k]) if scale == "linear" else float(DECADE ** V[k])
        ticks.append((float(P[k]), value, texts[k]))
    if (any(_E_NOTATION.search(lab.text) for lab in labels)
            and not any(_E_NOTATION.search(t) for _, _, t in ticks)):
        # Labels written in e-notation whose exponents were lost read as plain numbers that
        # agree with each other ("6.08707", "4.00707" for "6.0e+07", "4.0e+07"): a fit with no
        # e-notation label among its ticks cannot tell them from true plain labels (gnuplot's
        # "%g" mixes both).
        return None, (f"{orientation} axis unreadable: its tick labels are written in "
                      f"e-notation, and none read with its exponent fits the others")
    return AxisFit(scale, float(a), float(b), ticks, rms, float(confidence)), None


def _fit_confidence(n_used: int, n_items: int, residual: float, *, settings: AxisSettings) -> float:
    """A linear fit's confidence from the ticks it rests on (of `n_items` read) and its RMS
    residual as a share of the tolerance."""
    st = settings
    return min(1.0, (n_used - 1) / st.full_confidence) * (n_used / n_items) * \
        max(st.residual_floor, 1 - residual)


def _best_line(items: list[tuple[float, float, str]], tol: float, *, settings: AxisSettings):
    """The line through two labels (RANSAC over pairs, linear then log) that the most labels
    lie on within `tol` pixels: (score, scale, inliers, points), or None."""
    st = settings
    best = None
    linear_count = 0
    for scale in ("linear", "log"):
        if scale == "log" and best is not None:
            linear_count = best[0][0]
        # A power of ten ("10^3") is a log axis' label, never a linear one's.
        pts = [(p, (v if scale == "linear" else math.log10(v)), t) for p, v, t in items
               if (scale == "linear" and "^" not in t) or (scale == "log" and v > 0)]
        if len(pts) < 2:
            continue
        P = np.array([q[0] for q in pts])
        V = np.array([q[1] for q in pts])
        # Labels within half a decade (years 1975..1978) fit a log axis as well as a linear
        # one, to rounding; such an axis is linear (a log axis labels decades or 1-2-5) unless
        # the log reading takes in clearly more of them (Plotly's log axis from 25 to 65,
        # labelled every 5: a linear reading fits four of its nine labels).
        narrow = (scale == "log"
                  and float(V.max() - V.min()) < settings.min_log_span)
        for i, j in itertools.combinations(range(len(pts)), 2):
            if abs(P[j] - P[i]) < st.min_tick_gap or V[j] == V[i]:
                continue
            b = (V[j] - V[i]) / (P[j] - P[i])
            a = V[i] - b * P[i]
            pred = (V - a) / b
            res = np.abs(pred - P)
            inl = res <= tol
            score = (int(inl.sum()), -float(res[inl].sum()))
            if narrow and linear_count and score[0] < linear_count + NARROW_LOG_LEAD:
                continue
            if best is None or score > best[0]:
                best = (score, scale, inl, pts)
    return best


def _decades_apart(scale: str, pts: list, inl, items: list[tuple[float, float, str]], *,
                   settings: AxisSettings):
    """Two ticks: a linear reading of 10 and 100 is as good as a log one, and powers of ten a
    decade apart are the log axis' labels. (scale, points, inliers)."""
    st = settings
    vals = [v for (_, v, _), k in zip(pts, inl) if k]
    if all(v > 0 for v in vals):
        logs = sorted(math.log10(v) for v in vals)
        if all(abs(l - round(l)) < st.integer_exponent for l in logs) and logs[1] - logs[0] >= 1:
            scale = "log"
            pts = [(p, math.log10(v), t) for p, v, t in items if v > 0]
            inl = np.array([abs(math.log10(v) - round(math.log10(v))) < st.integer_exponent
                            for _, v, _ in items if v > 0])
    return scale, pts, inl


def _repair(P: np.ndarray, V: np.ndarray, use: np.ndarray, texts: list[str], *, scale: str,
            line: tuple[float, float], tol: float) -> tuple[float, float]:
    """Repair the outliers a plausible misreading explains (in place: `V`, `use`, `texts`) and
    fit the line again: (a, b)."""
    a, b = line
    repaired = {}
    for k in np.nonzero(~use)[0]:
        for variant in _variants(texts[k]):
            value = parse_number(variant)
            if value is None or (scale == "log" and value <= 0):
                continue
            t = value if scale == "linear" else math.log10(value)
            if abs((t - a) / b - P[k]) <= tol:
                repaired[k] = (t, variant)
                break
    if repaired:
        for k, (t, variant) in repaired.items():
            V[k] = t
            use[k] = True
            texts[k] = variant
        b, a = np.polyfit(P[use], V[use], 1)
    return a, b
