"""Legend reading: entries (a handle sample left of a text), their names (OCR) and styles.

Text is found as rows of glyph-sized dark components inside a plot area or beside it (right,
above); an entry is a text row with a sample (a short line, dashes, a marker or a patch) just left
of it. Entries that line up (a column, or a row for a horizontal legend) form the legend; the
texts are read in one OCR call and kept when they read as words. Each entry remembers its
sample's colour and line style so series can be named after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from judging.signals.chart.geometry import Box, Page, common_colour, maxabs
from judging.signals.chart.ocr import Crop, read_crops
from judging.signals.chart.series import RawSeries, blend

_MAX_ENTRIES = 12


@dataclass
class Entry:
    text_box: tuple[int, int, int, int]
    handle_box: tuple[int, int, int, int]
    comps: list[int]
    colour: np.ndarray
    chromatic: bool
    style: str
    name: str = ""
    conf: float = 0.0


@dataclass
class Legend:
    entries: list[Entry]
    bbox: tuple[int, int, int, int]
    """Work pixels, inclusive."""
    names: list[str] = field(default_factory=list)
    face: np.ndarray = field(default_factory=lambda: np.array([255.0, 255.0, 255.0]))

    def assign(self, series: list[RawSeries]) -> list[str | None]:
        """The legend name of each series (by its sample's colour and line style), or None."""
        costs = []
        for i, s in enumerate(series):
            for j, e in enumerate(self.entries):
                if s.chromatic != e.chromatic:
                    continue
                colour = np.asarray(s.colour, float)
                if s.chromatic:
                    # The sample may be paler (thin, anti-aliased): compare along the blend.
                    d = float(blend(e.colour[None, :], self.face, colour)[0][0])
                    d = min(d, float(np.abs(colour - e.colour).max()))
                    limit = 45
                else:
                    d = float(np.abs(colour - e.colour).max())
                    limit = 50
                if d > limit:
                    continue
                style_cost = 0.0 if _style_ok(s.line, e.style) else 30.0
                costs.append((d + style_cost, i, j))
        names: list[str | None] = [None] * len(series)
        used_s, used_e = set(), set()
        for _, i, j in sorted(costs):
            if i in used_s or j in used_e:
                continue
            used_s.add(i)
            used_e.add(j)
            names[i] = self.entries[j].name or None
        return names


def _style_ok(line: str, handle: str) -> bool:
    if handle == "patch":
        return line == "bars"
    if handle == "marker":
        return line in ("markers", "solid")
    return line == handle


def find_legend(page: Page, boxes: list[Box], mask: np.ndarray, glyph: float, *,
                ocr=None) -> list[Legend | None]:
    """One legend (or None) per plot area. `ocr=False` skips reading the names."""
    h, w = page.shape
    labels, n = ndimage.label(mask, structure=np.ones((3, 3), bool))
    if n == 0:
        return [None] * len(boxes)
    objs = ndimage.find_objects(labels)
    bb = np.array([(sl[1].start, sl[0].start, sl[1].stop - 1, sl[0].stop - 1) for sl in objs])
    cw = bb[:, 2] - bb[:, 0] + 1
    ch = bb[:, 3] - bb[:, 1] + 1
    glyph = max(glyph, 5.0)
    glyphlike = (ch >= 0.4 * glyph) & (ch <= 1.8 * glyph) & (cw <= 2.2 * glyph)
    # dots of i/j, periods, the bars of "=" and "-"
    small = (ch < 0.4 * glyph) & (cw < 1.6 * glyph)
    results: list[Legend | None] = []
    all_entries: list[tuple[int, Entry]] = []
    for bi, box in enumerate(boxes):
        regions = [(box.left + 2, box.top + 2, box.right - 2, box.bottom - 2)]
        right_edge = min([o.left - 2 for o in boxes if o.left > box.right
                          and o.top < box.bottom and o.bottom > box.top] + [w - 1])
        if right_edge - box.right > 3 * glyph:
            regions.append((box.right + 2, box.top - int(2 * glyph), right_edge,
                            box.bottom))
        top_edge = max([o.bottom + 2 for o in boxes if o.bottom < box.top
                        and o.left < box.right and o.right > box.left] + [0])
        if box.top - top_edge > 2 * glyph:
            regions.append((box.left, top_edge, box.right, box.top - 2))
        best: list[Entry] = []
        for region in regions:
            entries = _entries(page, region, bb, glyphlike, small, labels, glyph)
            if len(entries) > len(best):
                best = entries
        all_entries += [(bi, e) for e in best[:_MAX_ENTRIES]]
    if all_entries and ocr is not False:
        crops = [_crop(page, labels, e, glyph) for _, e in all_entries]
        texts = read_crops(crops, whitelist=None, ocr=ocr)
        for (_, e), (text, conf) in zip(all_entries, texts):
            e.name, e.conf = _clean(text), conf
    for bi, _box in enumerate(boxes):
        entries = [e for b, e in all_entries if b == bi]
        if ocr is not False:
            entries = [e for e in entries if e.name and e.conf >= 35]
        if not entries:
            results.append(None)
            continue
        xs0 = [min(e.handle_box[0], e.text_box[0]) for e in entries]
        ys0 = [min(e.handle_box[1], e.text_box[1]) for e in entries]
        xs1 = [max(e.handle_box[2], e.text_box[2]) for e in entries]
        ys1 = [max(e.handle_box[3], e.text_box[3]) for e in entries]
        face = _face(page, entries[0].text_box, glyph)
        bbox = _frame(page, (min(xs0), min(ys0), max(xs1), max(ys1)), face, glyph)
        results.append(Legend(entries, bbox, [e.name for e in entries], face))
    return results


def _frame(page: Page, content, face, glyph) -> tuple[int, int, int, int]:
    """The legend's box: out to its frame when one is drawn within ~2 glyphs, else padded."""
    h, w = page.shape
    x0, y0, x1, y1 = content
    reach = int(round(2.2 * glyph))
    pad = int(round(0.9 * glyph))
    out = []
    for side in ("left", "top", "right", "bottom"):
        found = None
        for k in range(1, reach + 1):
            if side == "left":
                x = x0 - k
                line = page.rgb[y0:y1 + 1, x] if x >= 0 else None
            elif side == "right":
                x = x1 + k
                line = page.rgb[y0:y1 + 1, x] if x < w else None
            elif side == "top":
                y = y0 - k
                line = page.rgb[y, x0:x1 + 1] if y >= 0 else None
            else:
                y = y1 + k
                line = page.rgb[y, x0:x1 + 1] if y < h else None
            if line is None or len(line) == 0:
                break
            if (maxabs(line.astype(np.float32), face) > 25).mean() >= 0.7:
                found = k
                break
        out.append((found + 2) if found is not None else pad)
    return (max(0, x0 - out[0]), max(0, y0 - out[1]), min(w - 1, x1 + out[2]),
            min(h - 1, y1 + out[3]))


def _clean(text: str) -> str:
    return " ".join(text.replace("|", "").split()).strip(" .,:;'\"-_")


def _entries(page: Page, region, bb, glyphlike, small, labels, glyph) -> list[Entry]:
    x0, y0, x1, y1 = region
    inside = (bb[:, 0] >= x0) & (bb[:, 2] <= x1) & (bb[:, 1] >= y0) & (bb[:, 3] <= y1)
    ids = np.nonzero(inside & (glyphlike | small))[0]
    if ids.size == 0:
        return []
    rows = _text_rows(bb, ids, glyphlike, glyph)
    entries = []
    for comps in rows:
        tb = (int(bb[comps, 0].min()), int(bb[comps, 1].min()), int(bb[comps, 2].max()),
              int(bb[comps, 3].max()))
        own = float(max(0.6 * glyph, min(1.6 * glyph, 0.85 * (tb[3] - tb[1] + 1))))
        handle = _handle(page, labels, tb, own, x0)
        if handle is None:
            continue
        hb, colour, chromatic, style = handle
        entries.append(Entry(tb, hb, [int(c) + 1 for c in comps], colour, chromatic, style))
    return _aligned(entries, glyph)


def _text_rows(bb, ids, glyphlike, glyph) -> list[list[int]]:
    """Group glyphs into text rows (words of one entry): vertical overlap, small gaps."""
    order = ids[np.argsort(bb[ids, 0])]
    parent = {int(i): int(i) for i in order}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    heights = bb[:, 3] - bb[:, 1] + 1
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1:]:
            gap = 0.8 * max(heights[a], heights[b], 0.6 * glyph)
            if bb[b, 0] - bb[a, 2] > 1.6 * glyph:
                break
            if bb[b, 0] - bb[a, 2] > gap:
                continue
            vover = min(bb[a, 3], bb[b, 3]) - max(bb[a, 1], bb[b, 1])
            if vover >= -0.2 * glyph:
                parent[find(int(a))] = find(int(b))
    groups: dict[int, list[int]] = {}
    for i in order:
        groups.setdefault(find(int(i)), []).append(int(i))
    out = []
    for members in groups.values():
        big = [m for m in members if glyphlike[m]]
        if not big:
            continue
        height = bb[members, 3].max() - bb[members, 1].min() + 1
        if height > 2.2 * glyph:
            continue
        out.append(members)
    return out


def _handle(page: Page, labels, tb, glyph, region_left):
    """The sample left of a text row: (box, colour, chromatic, style) or None."""
    left, top, right, bottom = tb
    cy = (top + bottom) / 2
    hx0 = max(region_left, int(left - 4.5 * glyph))
    hx1 = int(left - 0.25 * glyph)
    hy0 = int(cy - 0.75 * glyph)
    hy1 = int(cy + 0.75 * glyph) + 1
    if hx1 - hx0 < 0.6 * glyph or hy0 < 0:
        return None
    rgb = page.rgb[hy0:hy1, hx0:hx1].astype(np.float32)
    if rgb.size == 0:
        return None
    # The legend's face: the colour of most pixels just around the text.
    face = _face(page, tb, glyph)
    ink = maxabs(rgb, face) > 45
    # Gridlines showing through the legend cross the whole sample region.
    ink[:, ink.mean(axis=0) >= 0.9] = False
    if ink.sum() < 3:
        return None
    cols = np.nonzero(ink.any(axis=0))[0]
    # The sample ends close to the text (a scatter marker sits mid-handle, up to ~2.5 glyphs
    # away); keep only the ink columns that reach it without a gap wider than a dash gap (not
    # the end of a previous entry's text).
    if hx0 + cols[-1] < left - 2.6 * glyph:
        return None
    gaps = np.nonzero(np.diff(cols) > 0.7 * glyph)[0]
    if gaps.size:
        cols = cols[gaps[-1] + 1:]
    ink[:, :cols[0]] = False
    rows_ = np.nonzero(ink.any(axis=1))[0]
    width = cols[-1] - cols[0] + 1
    height = rows_[-1] - rows_[0] + 1
    if width < 0.5 * glyph or height > 1.6 * glyph:
        return None
    hb = (int(hx0 + cols[0]), int(hy0 + rows_[0]), int(hx0 + cols[-1]), int(hy0 + rows_[-1]))
    pix = rgb[ink]
    chroma = pix.max(axis=1) - pix.min(axis=1)
    chromatic = bool(np.percentile(chroma, 80) >= 40)
    if chromatic:
        strong = pix[chroma >= np.percentile(chroma, 80)]
        colour = strong.mean(axis=0)
    else:
        lum = pix @ np.array([0.299, 0.587, 0.114])
        dark = float(np.percentile(lum, 10)) if face.mean() > 127 else float(
            np.percentile(lum, 90))
        colour = np.array([dark] * 3)
    sub = ink[rows_[0]:rows_[-1] + 1, cols[0]:cols[-1] + 1]
    lab, n = ndimage.label(sub, structure=np.ones((3, 3), bool))
    fill = sub.mean()
    if height >= 0.45 * glyph and fill > 0.8 and width >= 1.2 * glyph:
        style = "patch"
    elif n == 1 and width <= 1.4 * height + 2:
        style = "marker"
    elif n == 1:
        style = "solid"
    else:
        sizes = np.bincount(lab.ravel())[1:]
        style = "dotted" if np.median(sizes) <= 2 * max(1, height) ** 2 and n >= 4 else "dashed"
        if n == 2 and max(sizes) > 3 * min(sizes):
            style = "solid"
    return hb, colour, chromatic, style


def _face(page: Page, tb, glyph) -> np.ndarray:
    left, top, right, bottom = tb
    pad = int(glyph)
    region = page.rgb[max(0, top - pad):bottom + pad, max(0, left - pad):right + pad]
    return common_colour(region.reshape(-1, 3).astype(np.int32), step=8)[0].astype(np.float32)


def _aligned(entries: list[Entry], glyph: float) -> list[Entry]:
    """The largest set of entries laid out as a legend: texts left-aligned in a column with
    regular spacing, or in one row."""
    if len(entries) <= 1:
        return entries
    best: list[Entry] = []
    for e in entries:
        column = [f for f in entries if abs(f.text_box[0] - e.text_box[0]) <= 0.6 * glyph]
        column.sort(key=lambda f: f.text_box[1])
        # Consecutive entries no more than ~3 glyphs apart.
        chain = [column[0]]
        for f in column[1:]:
            if f.text_box[1] - chain[-1].text_box[1] <= 3.2 * glyph:
                chain.append(f)
            elif e in chain:
                break
            else:
                chain = [f]
        if e in chain and _weight(chain) > _weight(best):
            best = chain
        row = [f for f in entries if abs((f.text_box[1] + f.text_box[3]) / 2
                                         - (e.text_box[1] + e.text_box[3]) / 2) <= 0.4 * glyph]
        if _weight(row) > _weight(best):
            best = sorted(row, key=lambda f: f.text_box[0])
    return best


def _weight(entries: list[Entry]) -> tuple[int, int]:
    """More entries first; among as many, more glyphs: names are words, while two scatter
    points side by side look like a one-glyph entry with its marker."""
    return len(entries), sum(len(e.comps) for e in entries)


def _crop(page: Page, labels, entry: Entry, glyph: float) -> Crop:
    f = page.factor
    left, top, right, bottom = entry.text_box
    sub = np.isin(labels[top:bottom + 1, left:right + 1], entry.comps)
    if f > 1:
        sub = np.kron(sub, np.ones((f, f), bool))
    sub = ndimage.binary_dilation(sub, iterations=max(1, f // 2 + 1))
    gray = page.full_gray[top * f:top * f + sub.shape[0], left * f:left * f + sub.shape[1]]
    sub = sub[:gray.shape[0], :gray.shape[1]]
    if page.dark_bg:
        gray = 255 - gray
    gray = np.where(sub, gray, 255).astype(np.uint8)
    pad = max(3, int(0.4 * glyph * f))
    out = np.full((gray.shape[0] + 2 * pad, gray.shape[1] + 2 * pad), 255, np.uint8)
    out[pad:pad + gray.shape[0], pad:pad + gray.shape[1]] = gray
    # The crop's cap height: the tallest glyph without descenders is close to the row height.
    return Crop(out, 0.8 * (bottom - top + 1) * f)
