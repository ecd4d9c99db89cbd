"""Axis reading: tick labels beside a plot area, their OCR crops, and the pixel -> data fit."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from .chart_geometry import Box, Page
from .chart_ocr import Crop, parse_number


@dataclass
class Label:
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
    areas: np.ndarray
    touching: set[int]
    """Components touching the plot-area side (tick marks)."""
    orient: str = "x"


def text_mask(page: Page) -> np.ndarray:
    bg_lum = float(page.bg @ np.array([0.299, 0.587, 0.114]))
    return (np.abs(page.lum - bg_lum) > 60) & (page.chroma < 90)


def _strip(mask: np.ndarray, x0: int, y0: int, x1: int, y1: int, side: str) -> Strip | None:
    h, w = mask.shape
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    sub = mask[y0:y1, x0:x1]
    labels, n = ndimage.label(sub, structure=np.ones((3, 3), bool))
    if n == 0:
        return None
    edge = labels[0] if side == "top" else labels[:, -1]
    touching = set(np.unique(edge[edge > 0]).tolist())
    return Strip(x0, y0, labels, ndimage.find_objects(labels),
                 np.bincount(labels.ravel()), touching, "x" if side == "top" else "y")


def _boxes(strip: Strip, ids: list[int]) -> np.ndarray:
    """(n, 4) left, top, right, bottom (work pixels, inclusive) of components."""
    out = np.empty((len(ids), 4), dtype=np.int32)
    for k, i in enumerate(ids):
        sl = strip.slices[i - 1]
        out[k] = (sl[1].start + strip.x0, sl[0].start + strip.y0,
                  sl[1].stop - 1 + strip.x0, sl[0].stop - 1 + strip.y0)
    return out


def _group(strip: Strip, ids: list[int], glyph: float) -> list[Label]:
    """Glyphs into labels: vertically overlapping components less than ~half a glyph apart."""
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
            if boxes[b, 0] - boxes[a, 2] > gap + glyph * 3:
                break
            hgap = max(boxes[b, 0] - boxes[a, 2], boxes[a, 0] - boxes[b, 2]) - 1
            vover = min(boxes[a, 3], boxes[b, 3]) - max(boxes[a, 1], boxes[b, 1])
            if hgap <= gap and vover >= -1:
                parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    labels = []
    for members in groups.values():
        b = boxes[members]
        heights = b[:, 3] - b[:, 1] + 1
        main_h = float(heights.max())
        big = heights >= 0.7 * main_h
        baseline = b[big, 3].max()
        base_mid = (b[big, 0].min() + b[big, 2].max()) / 2
        sup = [ids[m] for m, bb in zip(members, b)
               if bb[3] < baseline - 0.35 * main_h and bb[0] > base_mid
               and (bb[3] - bb[1] + 1) <= 0.85 * main_h]
        # A true exponent sits right of full-height glyphs and is smaller than them.
        main = [ids[m] for m in members if ids[m] not in sup]
        if sup:
            mb = _boxes(strip, main)
            sb = _boxes(strip, sup)
            if sb[:, 0].min() < mb[:, 2].max() - 1:
                sup, main = [], [ids[m] for m in members]
        mb = _boxes(strip, main)
        main_h = float((mb[:, 3] - mb[:, 1] + 1).max())
        labels.append(Label(int(b[:, 0].min()), int(b[:, 1].min()), int(b[:, 2].max()),
                            int(b[:, 3].max()), main + sup, main_h, sup))
    return labels


def _crop(page: Page, strip: Strip, comps: list[int], height: float) -> Crop:
    """The original-resolution pixels of these components (everything else whitened)."""
    f = page.factor
    b = _boxes(strip, comps)
    left, top, right, bottom = b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()
    sub = np.isin(strip.labels_img[top - strip.y0:bottom - strip.y0 + 1,
                                   left - strip.x0:right - strip.x0 + 1], comps)
    if f > 1:
        sub = np.kron(sub, np.ones((f, f), bool))
    sub = ndimage.binary_dilation(sub, iterations=max(1, f // 2 + 1))
    pad = max(2, int(0.35 * height * f))
    fy0, fx0 = top * f, left * f
    gray = page.full_gray[fy0:fy0 + sub.shape[0], fx0:fx0 + sub.shape[1]].astype(np.uint8)
    sub = sub[:gray.shape[0], :gray.shape[1]]
    if page.dark_bg:
        gray = 255 - gray
    gray = np.where(sub, gray, 255).astype(np.uint8)
    if page.noisy:
        gray = ndimage.median_filter(gray, size=3)
    out = np.full((gray.shape[0] + 2 * pad, gray.shape[1] + 2 * pad), 255, np.uint8)
    out[pad:pad + gray.shape[0], pad:pad + gray.shape[1]] = gray
    return Crop(out, height * f)


@dataclass
class AxisLabels:
    orientation: str
    labels: list[Label]
    ticks: list[float]
    """Tick mark / gridline positions (work pixels) labels may snap to."""
    glyph: float
    problem: str | None = None


def find_tick_labels(page: Page, box: Box, others: list[Box], mask: np.ndarray,
                     grid_xs: list[float], grid_ys: list[float]) -> tuple[AxisLabels, AxisLabels,
                                                                        list[Strip]]:
    """Tick labels below (x) and left of (y) a plot area."""
    h, w = page.shape
    spine_b = box.spines.get("bottom")
    spine_l = box.spines.get("left")
    below = (spine_b.pos1 + 1) if spine_b else box.bottom + 1
    leftof = (spine_l.pos0 - 1) if spine_l else box.left - 1
    # x strip: below the plot area, not into a panel below.
    y1 = below + max(12, int(0.14 * h))
    for o in others:
        if o.top > box.bottom and o.left < box.right and o.right > box.left:
            y1 = min(y1, o.top - 2)
    x0 = box.left - int(0.06 * w)
    x1 = box.right + int(0.06 * w)
    for o in others:
        if o.bottom >= below and o.top <= y1:
            if o.right < box.left:
                x0 = max(x0, o.right + 2)
            if o.left > box.right:
                x1 = min(x1, o.left - 2)
    strips = []
    xs = _strip(mask, x0, below, x1, y1, "top")
    xlab = AxisLabels("x", [], [], 0.0)
    if xs is not None:
        strips.append(xs)
        xlab = _x_labels(xs, box, w)
    # y strip: left of the plot area, not into a panel on the left.
    x0 = leftof - max(12, int(0.2 * w))
    for o in others:
        if o.right < box.left and o.bottom > box.top and o.top < box.bottom:
            x0 = max(x0, o.right + 2)
    y0 = box.top - int(0.03 * h)
    y1 = box.bottom + int(0.03 * h)
    ys = _strip(mask, x0, y0, leftof + 1, y1, "right")
    ylab = AxisLabels("y", [], [], 0.0)
    if ys is not None:
        strips.append(ys)
        ylab = _y_labels(ys, box)
    xlab.ticks = sorted(set(xlab.ticks) | set(grid_xs))
    ylab.ticks = sorted(set(ylab.ticks) | set(grid_ys))
    return xlab, ylab, strips


def _glyph_height(strip: Strip, ids: list[int]) -> float:
    hs = [strip.slices[i - 1][0].stop - strip.slices[i - 1][0].start for i in ids]
    hs = [v for v in hs if v >= 4]
    return float(np.median(hs)) if hs else 0.0


def _x_labels(strip: Strip, box: Box, width: int) -> AxisLabels:
    n = len(strip.slices)
    ids = [i for i in range(1, n + 1) if i not in strip.touching and strip.slices[i - 1]]
    ticks = []
    for i in strip.touching:
        sl = strip.slices[i - 1]
        if sl[1].stop - sl[1].start <= 4 and sl[0].stop - sl[0].start <= 20:
            ticks.append((sl[1].start + sl[1].stop - 1) / 2 + strip.x0)
    glyph = _glyph_height(strip, ids)
    if glyph == 0:
        return AxisLabels("x", [], ticks, 0.0, "no tick labels below the plot area")
    labels = [lab for lab in _group(strip, ids, glyph) if lab.height >= 0.6 * glyph]
    if not labels:
        return AxisLabels("x", [], ticks, glyph, "no tick labels below the plot area")
    # The band nearest the axis with at least two labels.
    labels.sort(key=lambda lab: lab.cy)
    bands: list[list[Label]] = []
    for lab in labels:
        if bands and abs(lab.cy - np.mean([l.cy for l in bands[-1]])) <= 0.6 * glyph:
            bands[-1].append(lab)
        else:
            bands.append([lab])
    band = next((b for b in bands if len(b) >= 2), bands[0])
    lo, hi = box.left - 0.03 * width, box.right + 0.03 * width
    band = [lab for lab in band if lo <= lab.cx <= hi]
    return AxisLabels("x", sorted(band, key=lambda lab: lab.cx), ticks, glyph)


def _y_labels(strip: Strip, box: Box) -> AxisLabels:
    n = len(strip.slices)
    ids = [i for i in range(1, n + 1) if i not in strip.touching and strip.slices[i - 1]]
    ticks = []
    for i in strip.touching:
        sl = strip.slices[i - 1]
        if sl[0].stop - sl[0].start <= 4 and sl[1].stop - sl[1].start <= 20:
            ticks.append((sl[0].start + sl[0].stop - 1) / 2 + strip.y0)
    glyph = _glyph_height(strip, ids)
    if glyph == 0:
        return AxisLabels("y", [], ticks, 0.0, "no tick labels left of the plot area")
    labels = [lab for lab in _group(strip, ids, glyph)
              if lab.height >= 0.6 * glyph and lab.height <= 1.8 * glyph]
    if not labels:
        return AxisLabels("y", [], ticks, glyph, "no tick labels left of the plot area")
    right = max(lab.right for lab in labels)
    labels = [lab for lab in labels if lab.right >= right - 1.2 * glyph
              and box.top - glyph <= lab.cy <= box.bottom + glyph]
    return AxisLabels("y", sorted(labels, key=lambda lab: lab.cy), ticks, glyph)


def label_crops(page: Page, strip: Strip, label: Label) -> list[Crop]:
    """One crop (plain label) or two (base and exponent of a power)."""
    if not label.sup:
        return [_crop(page, strip, label.comps, label.height)]
    main = [c for c in label.comps if c not in label.sup]
    sb = _boxes(strip, label.sup)
    sup_h = float((sb[:, 3] - sb[:, 1] + 1).max())
    return [_crop(page, strip, main, label.height), _crop(page, strip, label.sup, sup_h)]


def assign_text(label: Label, texts: list[tuple[str, float]]) -> None:
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


def snap(labels: list[Label], orientation: str, ticks: list[float], glyph: float) -> list[float]:
    """Each label's tick position: the nearest tick mark / gridline, else the label's centre."""
    out = []
    arr = np.asarray(ticks, dtype=float)
    for lab in labels:
        c = lab.cx if orientation == "x" else lab.cy
        if arr.size:
            k = int(np.argmin(np.abs(arr - c)))
            if abs(arr[k] - c) <= 0.6 * max(glyph, 3):
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


def fit_axis(positions: list[float], labels: list[Label], span: tuple[float, float],
             orientation: str) -> tuple[AxisFit | None, str | None]:
    """Fit value = a + b * pixel (linear) or log10(value) = a + b * pixel (log) to the ticks,
    ignoring misread labels (RANSAC over pairs) and repairing those that a plausible misreading
    explains."""
    items = [(p, lab.value, lab.text) for p, lab in zip(positions, labels)
             if lab.value is not None]
    # Duplicate positions (a label split in two) and identical values make no sense.
    if len(items) < 2:
        return None, (f"{orientation} axis unreadable: fewer than 2 tick labels read"
                      f" ({len(items)} of {len(labels)})")
    length = abs(span[1] - span[0])
    tol = max(2.0, 0.012 * length)
    best = None
    for scale in ("linear", "log"):
        pts = [(p, (v if scale == "linear" else math.log10(v)), t) for p, v, t in items
               if scale == "linear" or v > 0]
        if len(pts) < 2:
            continue
        P = np.array([q[0] for q in pts])
        V = np.array([q[1] for q in pts])
        for i, j in itertools.combinations(range(len(pts)), 2):
            if abs(P[j] - P[i]) < 3 or V[j] == V[i]:
                continue
            b = (V[j] - V[i]) / (P[j] - P[i])
            a = V[i] - b * P[i]
            pred = (V - a) / b
            res = np.abs(pred - P)
            inl = res <= tol
            score = (int(inl.sum()), -float(res[inl].sum()))
            if best is None or score > best[0]:
                best = (score, scale, inl, pts)
    if best is None:
        return None, f"{orientation} axis unreadable: tick labels have no usable spacing"
    (count, _), scale, inl, pts = best
    # With only two ticks, a linear reading of 10 and 100 is as good as a log one: powers of
    # ten a decade apart are the log axis' labels.
    if count == 2 and scale == "linear":
        vals = [v for (_, v, _), k in zip(pts, inl) if k]
        if all(v > 0 for v in vals):
            logs = sorted(math.log10(v) for v in vals)
            if all(abs(l - round(l)) < 1e-6 for l in logs) and logs[1] - logs[0] >= 1:
                scale = "log"
                pts = [(p, math.log10(v), t) for p, v, t in items if v > 0]
                inl = np.array([abs(math.log10(v) - round(math.log10(v))) < 1e-6
                                for _, v, _ in items if v > 0])
    P = np.array([q[0] for q in pts])
    V = np.array([q[1] for q in pts])
    use = np.asarray(inl, bool)
    if use.sum() < 2:
        return None, f"{orientation} axis unreadable: tick labels do not agree with each other"
    b, a = np.polyfit(P[use], V[use], 1)
    # Repair outliers a plausible misreading explains.
    texts = [q[2] for q in pts]
    repaired = {}
    for k in np.nonzero(~use)[0]:
        predicted = a + b * P[k]
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
    if (orientation == "x" and b <= 0) or (orientation == "y" and b >= 0):
        # Inverted axes exist but are rare; a reversed fit is far more often a misreading.
        if use.sum() < 3:
            return None, f"{orientation} axis unreadable: tick values run the wrong way"
    if scale == "linear":
        # Evenly spaced values: a linear axis' ticks are an arithmetic sequence.
        pass
    res = np.abs((V[use] - a) / b - P[use])
    rms = float(np.sqrt(np.mean(res ** 2)))
    n_used = int(use.sum())
    confidence = (min(1.0, (n_used - 1) / 4) * (n_used / len(items)) * max(0.2, 1 - rms / tol))
    ticks = []
    for k in np.nonzero(use)[0]:
        value = float(V[k]) if scale == "linear" else float(10 ** V[k])
        ticks.append((float(P[k]), value, texts[k]))
    return AxisFit(scale, float(a), float(b), ticks, rms, float(confidence)), None
