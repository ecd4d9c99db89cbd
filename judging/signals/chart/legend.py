"""Legend reading: entries (a handle sample beside a text), their names (OCR) and styles.

Text is found as rows of glyph-sized dark components inside a plot area or beside it (right,
above, below); an entry is a text row with a sample (a short line, dashes, a marker or a patch)
just left of it, or just right of it (gnuplot's key, matplotlib's `markerfirst=False`). Entries
that line up form the legend: a column, its texts left-aligned when the samples are on the left
and right-aligned when they are on the right, or a row, with the further columns or rows of the
same grid (legends of several columns, a row wrapped below the plot). The texts are read in one
OCR call and kept when they read as words. Each entry remembers its sample's colour and line
style so series can be named after it.

Below a plot area the x tick labels come first (skipped to the first blank band under them),
then the axis title, a text row without a sample; a legend there (ggplot2's
`legend.position="bottom"`, matplotlib's `fig.legend(loc="lower center")`) needs two entries,
and so does one above the plot area, where titles are. What is not a legend:
  - a sample never takes ink from another word (a row of two or more glyphs), so the end of a
    tick label, of a title or of a line of body text does not make the next one an entry, and
    a sample is never another entry's text (rotated labels, glyph after glyph);
  - a text drawn in colour is a scatter's points, not a name;
  - entries whose samples all look alike name nothing (tick marks beside tick labels), nor does
    a lone entry whose sample is one black glyph-sized blob (a letter, as likely).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from judging.signals.chart.axes import BOX_SIDES, EIGHT_CONNECTED, WHITE
from judging.signals.chart.colour import blend, common_colour, luma, luma_of, maxabs
from judging.signals.chart.geometry import Box, Page
from judging.signals.chart.ocr import Crop, read_crops
from judging.signals.chart.series import RawSeries
from judging.signals.chart.settings import GeometrySettings, LegendSettings, reader_settings


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

    @property
    def box(self) -> tuple[int, int, int, int]:
        """Sample and name together (work pixels, inclusive)."""
        hb, tb = self.handle_box, self.text_box
        return (min(hb[0], tb[0]), min(hb[1], tb[1]), max(hb[2], tb[2]), max(hb[3], tb[3]))


@dataclass
class Legend:
    entries: list[Entry]
    bbox: tuple[int, int, int, int]
    """Work pixels, inclusive."""
    names: list[str] = field(default_factory=list)
    face: np.ndarray = field(default_factory=lambda: np.array([255.0, 255.0, 255.0]))
    framed: bool = True
    """A frame was found (on three sides at least): the legend's box hides what lies behind
    it."""
    margin: int = 2
    """Work pixels around an entry that still belong to it (anti-aliasing, a sample's ends)."""
    title: tuple[int, int, int, int] | None = None
    """The box of the legend's title (`_title`), work pixels, inclusive."""

    def covers(self) -> list[tuple[int, int, int, int]]:
        """What the legend covers of the plot (work pixels, inclusive): its box when framed,
        else each entry (sample and name) with `margin`: without a frame the data show
        between and around the entries (matplotlib's frameless legend over a line's tail),
        and the box, padded to where a frame would be, would hide them."""
        if self.framed:
            return [self.bbox]
        m = self.margin
        parts = ([self.title] if self.title is not None else []) + [e.box for e in self.entries]
        return [(x0 - m, y0 - m, x1 + m, y1 + m) for x0, y0, x1, y1 in parts]

    def assign(self, series: list[RawSeries], *, settings: LegendSettings | None = None
               ) -> list[str | None]:
        """The legend name of each series (by its sample's colour and line style), or None."""
        settings = settings or reader_settings().legend
        return [name for name, _ in self.assign_sure(series, settings=settings)]

    def assign_sure(self, series: list[RawSeries], *, settings: LegendSettings | None = None
                    ) -> list[tuple[str | None, bool]]:
        """The legend name of each series and whether it is sure: a name is unsure when another
        entry would fit its series, or another series its entry, within LegendSettings.assign_margin of the
        fit that was taken (greys a few levels apart, two blues): the names of such series may
        as well be the other way round."""
        settings = settings or reader_settings().legend
        lg = settings
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
                    limit = lg.blend_match
                else:
                    d = float(np.abs(colour - e.colour).max())
                    limit = lg.grey_match
                if d > limit:
                    continue
                style_cost = 0.0 if _style_ok(s.line, e.style) else lg.style_cost
                costs.append((d + style_cost, i, j))
        names: list[tuple[str | None, bool]] = [(None, True)] * len(series)
        used_s, used_e = set(), set()
        for cost, i, j in sorted(costs):
            if i in used_s or j in used_e:
                continue
            used_s.add(i)
            used_e.add(j)
            rivals = [c for c, i2, j2 in costs if (i2 == i) != (j2 == j)]
            sure = all(c > cost + settings.assign_margin for c in rivals)
            names[i] = (self.entries[j].name or None, sure)
        return names


def _style_ok(line: str, handle: str) -> bool:
    if handle == "patch":
        return line == "bars"
    if handle == "marker":
        return line in ("markers", "solid")
    return line == handle


def find_legend(page: Page, boxes: list[Box], mask: np.ndarray, glyph: float, *,
                ocr=None, settings: LegendSettings | None = None,
                geometry: GeometrySettings | None = None) -> list[Legend | None]:
    """One legend (or None) per plot area. `ocr=False` skips reading the names. `settings` and
    `geometry` default to the reading's (judging.signals.chart.settings.reader_settings)."""
    settings = settings or reader_settings().legend
    geometry = geometry or reader_settings().geometry
    lg = settings
    h, w = page.shape
    labels, n = ndimage.label(mask, structure=EIGHT_CONNECTED)
    if n == 0:
        return [None] * len(boxes)
    labels, n, apart = _unstack(labels, n, max(glyph, lg.min_glyph), settings=settings)
    objs = ndimage.find_objects(labels)
    bb = np.array([(sl[1].start, sl[0].start, sl[1].stop - 1, sl[0].stop - 1) for sl in objs])
    cw = bb[:, 2] - bb[:, 0] + 1
    ch = bb[:, 3] - bb[:, 1] + 1
    glyph = max(glyph, lg.min_glyph)
    # Letters that touch (small text, a tight font) make one wider component: sparse, unlike a
    # patch or a line.
    fill = np.bincount(labels.ravel(), minlength=n + 1)[1:] / (cw * ch)
    glyphlike = (ch >= lg.glyph_low * glyph) & (ch <= lg.glyph_high * glyph) & (
        (cw <= lg.glyph_wide * glyph) | ((cw <= lg.word_wide * glyph) & (fill < lg.word_fill)))
    # dots of i/j, periods, the bars of "=" and "-"
    small = (ch < lg.glyph_low * glyph) & (cw < lg.small_wide * glyph)
    # line-and-marker samples among the glyph-sized components: no letters (`_struck`)
    wide = glyphlike & (cw >= settings.struck_width * glyph) & (cw >= 2 * ch)
    struck = _struck(bb, np.flatnonzero(wide), glyphlike, labels, glyph, settings=settings)
    results: list[Legend | None] = []
    all_entries: list[tuple[int, Entry]] = []
    for bi, box in enumerate(boxes):
        best: list[Entry] = []
        for k, (region, least) in enumerate(_regions(box, boxes, mask, glyph, settings=settings,
                                                     tick_reach=geometry.tick_reach)):
            # Outside the plot area (beside, above, below it: `_regions` gives the inside
            # first) text may be prose, a caption.
            for entries in _entries(page, region, bb, glyphlike, small, labels, glyph,
                                    apart=apart, struck=struck, prose_around=k > 0,
                                    settings=settings):
                if len(entries) >= least and len(entries) > len(best):
                    best = entries
        all_entries += [(bi, e) for e in best[:settings.max_entries]]
    if all_entries and ocr is not False:
        # A legend shared by several panels (below a row of facets) is read once.
        unique: dict[tuple[int, ...], Entry] = {}
        for _, e in all_entries:
            unique.setdefault(e.text_box, e)
        crops = [_crop(page, labels, e, glyph, settings=settings) for e in unique.values()]
        texts = dict(zip(unique, read_crops(crops, whitelist=None, ocr=ocr)))
        for _, e in all_entries:
            text, conf = texts[e.text_box]
            e.name, e.conf = _clean(text), conf
    for bi, _box in enumerate(boxes):
        entries = [e for b, e in all_entries if b == bi]
        if ocr is not False:
            entries = [e for e in entries if e.name and e.conf >= lg.min_conf]
        if not entries:
            results.append(None)
            continue
        xs0, ys0, xs1, ys1 = zip(*(e.box for e in entries))
        face = _face(page, entries[0].text_box, glyph, settings=settings)
        bbox, framed = _frame(page, (min(xs0), min(ys0), max(xs1), max(ys1)), face, glyph,
                              settings=settings)
        title = _title(bb, glyphlike, entries, glyph, settings=settings)
        results.append(Legend(entries, bbox, [e.name for e in entries], face, framed=framed,
                              margin=max(2, int(round(settings.entry_margin
                                                      * glyph))), title=title))
    return results


def _title(bb, glyphlike, entries: list[Entry], glyph: float, *, settings: LegendSettings
           ) -> tuple[int, int, int, int] | None:
    """The box of a legend's title: two glyphs or more on the line of text just above its
    first entry (within 2.5 glyphs), as tall as the names' glyphs, over the entries' width (a
    glyph either side); None without one. Marks above a frameless key (data markers, steep
    dashes) are seldom as tall as its names and on one line; what lies further out along the
    line is left to the data."""
    lg = settings
    x0 = min(e.box[0] for e in entries)
    x1 = max(e.box[2] for e in entries)
    y0 = min(e.box[1] for e in entries)
    tall = float(np.median([e.text_box[3] - e.text_box[1] + 1 for e in entries]))
    height = bb[:, 3] - bb[:, 1] + 1
    near = glyphlike & (height >= lg.row_low * tall) & (height <= lg.row_high * tall) \
        & (bb[:, 0] >= x0 - glyph) & (bb[:, 2] <= x1 + glyph) & (bb[:, 3] < y0) \
        & (bb[:, 1] >= y0 - lg.title_reach * glyph)
    if not near.any():
        return None
    # The line nearest the entries.
    low = int(bb[near, 3].max())
    line = near & (bb[:, 1] <= low) & (bb[:, 3] >= low - 0.5 * tall)
    if line.sum() < 2:
        return None
    return (int(bb[line, 0].min()), int(bb[line, 1].min()), int(bb[line, 2].max()),
            int(bb[line, 3].max()))


def _unstack(labels: np.ndarray, n: int, glyph: float, *, settings: LegendSettings
             ) -> tuple[np.ndarray, int, frozenset[tuple[int, int]]]:
    """Glyphs of two text lines that touch, cut apart: in a tightly set legend (gnuplot's key)
    a descender ("g") meets the letter under it ("O"), and the pair, two lines tall, is no
    glyph of either entry. A component one glyph wide and two to three lines tall, with
    glyph-sized neighbours beside it on a line at its top and on a line starting in its lower
    half, is cut where that lower line starts: the part below gets a label of its own. Returns
    the labels, their count and the (upper, lower) component indices of each cut."""
    lg = settings
    objs = ndimage.find_objects(labels)
    bb = np.array([(sl[1].start, sl[0].start, sl[1].stop - 1, sl[0].stop - 1) for sl in objs])
    cw, ch = bb[:, 2] - bb[:, 0] + 1, bb[:, 3] - bb[:, 1] + 1
    small = (ch >= lg.glyph_low * glyph) & (ch <= lg.row_high * glyph) & \
        (cw <= lg.glyph_wide * glyph)
    # As wide as a letter (a stroke, a rule or a dash drawn upright is not two letters).
    tall = np.nonzero((ch > lg.glyph_high * glyph) & (ch <= lg.stacked_high * glyph) & (cw >= 0.5 * glyph)
                      & (cw <= lg.glyph_wide * glyph))[0]
    cuts: list[tuple[int, int]] = []
    for k in tall:
        left, top, right, bottom = bb[k]
        beside = small & (bb[:, 2] >= left - lg.beside_reach * glyph) & \
            (bb[:, 0] <= right + lg.beside_reach * glyph) \
            & (bb[:, 1] <= bottom) & (bb[:, 3] >= top)
        tops = bb[beside, 1]
        upper = tops[tops <= top + lg.stacked_upper * ch[k]]
        lower = tops[tops >= top + lg.stacked_lower * ch[k]]
        if not upper.size or not lower.size:
            continue
        cut = int(lower.min())
        sl = objs[k]
        part = labels[cut:sl[0].stop, sl[1]]
        n += 1
        part[part == k + 1] = n
        cuts.append((int(k), n - 1))
    return labels, n, frozenset(cuts)


def _regions(box: Box, boxes: list[Box], mask: np.ndarray, glyph: float, *,
             settings: LegendSettings, tick_reach: int
             ) -> list[tuple[tuple[int, int, int, int], int]]:
    """Where a plot area's legend may be, in order of preference, each with the number of
    entries a legend there needs: inside it, right of it, above it, below it (under the x tick
    labels, up to the image bottom or the next panel down). `tick_reach`: how far below a plot
    area its tick marks reach (GeometrySettings.tick_reach)."""
    lg = settings
    h, w = mask.shape
    regions = [((box.left + 2, box.top + 2, box.right - 2, box.bottom - 2), 1)]
    right_edge = min([o.left - 2 for o in boxes if o.left > box.right
                      and o.top < box.bottom and o.bottom > box.top] + [w - 1])
    if right_edge - box.right > lg.beside_reach * glyph:
        regions.append(((box.right + 2, box.top - int(2 * glyph), right_edge, box.bottom), 1))
    top_edge = max([o.bottom + 2 for o in boxes if o.bottom < box.top
                    and o.left < box.right and o.right > box.left] + [0])
    if box.top - top_edge > 2 * glyph:
        # Titles live there: a legend above needs two entries.
        regions.append(((box.left, top_edge, box.right, box.top - 2), 2))
    bottom_edge = min([o.top - 2 for o in boxes if o.top > box.bottom
                       and o.left < box.right and o.right > box.left] + [h - 1])
    # Below: past the tick marks and the x tick labels, which end at the first blank band
    # (rotated labels are cut by the region's top edge into glyph-sized pieces in a row).
    y0, y1 = _below_labels(mask, box, box.bottom + tick_reach,
                           bottom_edge, glyph), bottom_edge
    if y1 - y0 > 2 * glyph:
        # A legend below may be wider than its plot area (centred under the figure): the band
        # spans the image, short of panels beside it.
        beside = [o for o in boxes if o is not box and o.top < y1 and o.bottom > y0]
        x0 = max([o.right + 2 for o in beside if o.right < box.left] + [0])
        x1 = min([o.left - 2 for o in beside if o.left > box.right] + [w - 1])
        regions.append(((x0, y0, x1, y1), 2))
    return regions


def _below_labels(mask: np.ndarray, box: Box, y0: int, y1: int, glyph: float) -> int:
    """The first row under the band of text that starts below a plot area (its x tick labels,
    however tall or rotated): the end of the first blank band of at least half a glyph after
    some text; `y1` when there is none."""
    inked = mask[y0:y1, box.left:box.right + 1].any(axis=1)
    rows = np.nonzero(inked)[0]
    if rows.size == 0:
        return y1
    gap = max(2, int(round(0.5 * glyph)))
    blank = np.diff(rows) > gap
    if not blank.any():
        return y1
    return y0 + int(rows[int(np.argmax(blank))]) + 1


def _frame(page: Page, content, face, glyph, *, settings: LegendSettings
           ) -> tuple[tuple[int, int, int, int], bool]:
    """The legend's box: out to its frame when one is drawn within ~2 glyphs, else padded;
    and whether a frame was found."""
    lg = settings
    h, w = page.shape
    x0, y0, x1, y1 = content
    reach = int(round(lg.frame_reach * glyph))
    pad = int(round(lg.frame_pad * glyph))
    out, sides_found = [], 0
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
            if (maxabs(line.astype(np.float32), face) > lg.frame_contrast).mean() >= lg.frame_cover:
                found = k
                break
        out.append((found + 2) if found is not None else pad)
        sides_found += found is not None
    # A frame drawn round the legend, seen on three sides at least: the fourth may lie past
    # the names read (a fraction's pieces left out of its row), while a gridline or the plot's
    # frame beside a frameless legend passes one side or two.
    framed = sides_found >= lg.frame_sides
    return (max(0, x0 - out[0]), max(0, y0 - out[1]), min(w - 1, x1 + out[2]),
            min(h - 1, y1 + out[3])), framed


def _clean(text: str) -> str:
    return " ".join(text.replace("|", "").split()).strip(" .,:;'\"-_")


def _entries(page: Page, region, bb, glyphlike, small, labels, glyph, *,
             apart: frozenset[tuple[int, int]] = frozenset(),
             struck: frozenset[int] = frozenset(), prose_around: bool = False,
             settings: LegendSettings
             ) -> list[list[Entry]]:
    """The legends a region holds: the best-aligned entries with their samples on the left, and
    those with their samples on the right. `prose_around`: the region (outside the plot area)
    may hold a paragraph, whose words are no legend (LegendSettings.names_share)."""
    lg = settings
    x0, y0, x1, y1 = region
    inside = (bb[:, 0] >= x0) & (bb[:, 2] <= x1) & (bb[:, 1] >= y0) & (bb[:, 3] <= y1)
    ids = np.nonzero(inside & (glyphlike | small))[0]
    if ids.size == 0:
        return []
    rows = _text_rows(bb, ids, glyphlike, glyph, apart=apart, alone=struck, settings=settings)
    boxes = [(int(bb[comps, 0].min()), int(bb[comps, 1].min()), int(bb[comps, 2].max()),
              int(bb[comps, 3].max())) for comps in rows]
    # Words: rows of two glyphs or more, and whether their glyphs are alike marks (a sample of
    # two or three scatter markers: no text). A sample takes no ink from any other word.
    big = [[c for c in comps if glyphlike[c]] for comps in rows]
    marks = [len(g) >= 2 and _marks(bb, g, labels, settings=settings) for g in big]
    words = np.array([b + (int(m),) for b, g, m in zip(boxes, big, marks) if len(g) >= 2]
                     or [(0, 0, -1, -1, 0)])
    # The dashes of a dashed vertical line (pgfplots' dashed grid) stand one above the other,
    # each a "glyph" at most two pixels wide (its box's ends inclusive) whose neighbour dash
    # looks like its sample: no text. (Left-aligned one-letter names "I", "l" would go too:
    # a legend of such names is rarer than a dashed grid beside a legend.)
    thin = [len(comps) == 1 and tb[2] - tb[0] <= 1 for comps, tb in zip(rows, boxes)]
    not_text = {k for k, tb in enumerate(boxes) if thin[k] and any(
        thin[j] and j != k and abs(boxes[j][0] - tb[0]) <= 1 for j in range(len(boxes)))}
    not_text |= _faint(page, region, rows, boxes, labels, settings=settings)
    coloured: dict[int, bool] = {}
    found = []
    for side in ("left", "right"):
        entries = []
        for k, (comps, tb) in enumerate(zip(rows, boxes)):
            if marks[k] or k in not_text:
                continue
            own = float(max(lg.own_low * glyph, min(lg.own_high * glyph, lg.own_share * (tb[3] - tb[1] + 1))))
            handle = _handle(page, tb, own, x0 if side == "left" else x1, side, settings=settings)
            if handle is None:
                continue
            hb, colour, chromatic, style = handle
            if _overlaps(hb, words, tb, chromatic):
                continue
            if k not in coloured:
                coloured[k] = _coloured(page, labels, tb, comps, settings=settings)
            if coloured[k]:
                continue
            entries.append(Entry(tb, hb, [int(c) + 1 for c in comps], colour, chromatic,
                                 style))
        # A marker on another entry's coloured sample (a line-and-marker handle, o--o) is that
        # sample's, not an entry's text. (Letters taken for a sample are black: a word's first
        # letter beside the rest is text.)
        entries = [e for e in entries
                   if not (len(e.comps) == 1 and any(
                       o is not e and o.chromatic and _inside(e.text_box, o.handle_box)
                       for o in entries))]
        # Glyphs in a line (rotated tick labels, the letters of a word spaced out) would each
        # be the next one's sample: a sample is never another entry's text.
        texts = np.array([e.text_box + (0,) for e in entries]).reshape(-1, BOX_SIDES + 1)
        entries = [e for e in entries if not _overlaps(e.handle_box, texts, e.text_box, False)]
        entries = _aligned(entries, glyph, side, settings=settings)
        # A legend's names are most of the text around them; "entries" read from a paragraph
        # (a figure's caption under the plot, its "(1)" taken for a name beside a "(" sample)
        # are a few words of it. (Inside the plot area, text is a few annotations, and a key
        # of one-letter names among them is still a key.)
        prose = prose_around and _among_prose(entries, rows, boxes, big, not_text | {
            k for k, m in enumerate(marks) if m}, settings=settings)
        found.append(entries if _distinct(entries, settings=settings) and not prose else [])
    return found


def _among_prose(entries: list[Entry], rows: list[list[int]], boxes, big: list[list[int]],
                 skip: set[int], *, settings: LegendSettings) -> bool:
    """Whether the entries' names are a few words of a paragraph: less than LegendSettings.
    names_share of the glyphs on their own lines and the lines next to them (within one and a
    half names' height: a caption's lines are set close). `rows`/`boxes`/`big`: the region's
    text rows, their boxes and glyph-sized components; `skip`: rows that are no text. Text
    further away (an axis title above a key under the plot, a figure title) does not count."""
    lg = settings
    if not entries:
        return False
    own = {tuple(e.text_box) for e in entries}
    tall = float(np.median([e.text_box[3] - e.text_box[1] + 1 for e in entries]))
    named = sum(len(g) for tb, g in zip(boxes, big) if tuple(tb) in own)
    near = sum(len(g) for k, (tb, g) in enumerate(zip(boxes, big))
               if k not in skip and any(max(tb[1] - e.text_box[3], e.text_box[1] - tb[3])
                                        <= lg.prose_reach * tall for e in entries))
    return named < settings.names_share * near


def _faint(page: Page, region, rows: list[list[int]], boxes, labels, *,
           settings: LegendSettings) -> set[int]:
    """The rows (indices into `rows`, lists of component indices, and `boxes`, their boxes)
    drawn much fainter than the region's strongest (LegendSettings.faint_text): each row's
    strength is its strongest pixel's distance in lightness from the region's commonest colour
    (taken on every fourth pixel each way: a hot path)."""
    lg = settings
    if len(rows) < 2:
        return set()
    x0, y0, x1, y1 = (max(0, int(v)) for v in region)
    sample = page.rgb[y0:y1 + 1:4, x0:x1 + 1:4].reshape(-1, page.rgb.shape[-1]).astype(np.int32)
    face = common_colour(sample, step=lg.face_step)[0]
    face_lum = luma(face)
    strength = []
    for comps, (left, top, right, bottom) in zip(rows, boxes):
        own = np.isin(labels[top:bottom + 1, left:right + 1], np.asarray(comps) + 1)
        lum = page.lum[top:bottom + 1, left:right + 1][own].astype(np.float32)
        strength.append(float(np.abs(lum - face_lum).max()) if lum.size else 0.0)
    strongest = max(strength)
    return {k for k, v in enumerate(strength)
            if v < settings.faint_text * strongest}


def _inside(box, outer) -> bool:
    return outer[0] <= box[0] and box[2] <= outer[2] and outer[1] <= box[1] and box[3] <= outer[3]


def _coloured(page: Page, labels, tb, comps, *, settings: LegendSettings) -> bool:
    """Whether a text row is drawn in colour: scatter points beside each other, not a name
    (legend texts are black or grey)."""
    lg = settings
    left, top, right, bottom = tb
    sub = np.isin(labels[top:bottom + 1, left:right + 1], np.asarray(comps) + 1)
    return bool(np.median(page.chroma[top:bottom + 1, left:right + 1][sub]) >= lg.coloured_chroma)


def _distinct(entries: list[Entry], *, settings: LegendSettings) -> bool:
    """Whether the samples of the entries tell series apart (a legend of samples that all look
    alike names nothing: tick marks beside tick labels, the points of one scatter)."""
    lg = settings
    if len(entries) < 2:
        # One glyph-sized black blob beside a text is as likely a letter (of a rotated axis
        # title, a word cut by the layout) as a sample.
        return not entries or entries[0].chromatic or entries[0].style != "marker"
    first = entries[0]
    return any(e.style != first.style or e.chromatic != first.chromatic
               or float(np.abs(e.colour - first.colour).max()) > lg.same_colour for e in entries[1:])


def _marks(bb, comps: list[int], labels, *, settings: LegendSettings) -> bool:
    """Whether the glyphs of a row are alike marks spaced apart: the markers of a sample, of
    one size and shape (letters of a word differ, or stand closer than half their width)."""
    lg = settings
    order = sorted(comps, key=lambda c: bb[c, 0])
    boxes = bb[order]
    w = boxes[:, 2] - boxes[:, 0] + 1
    h = boxes[:, 3] - boxes[:, 1] + 1
    if np.ptp(w) > max(1, lg.marks_size * w.max()) or \
            np.ptp(h) > max(1, lg.marks_size * h.max()):
        return False
    if not (boxes[1:, 0] - boxes[:-1, 2] - 1 >= 0.5 * w.max()).all() or (w > lg.mark_aspect * h + 2).any():
        return False
    cw, ch = int(w.min()), int(h.min())
    shapes = [labels[b[1]:b[1] + ch, b[0]:b[0] + cw] == c + 1 for b, c in zip(boxes, order)]
    return all((a & shapes[0]).sum() >= lg.mark_overlap * (a | shapes[0]).sum() for a in shapes[1:])


def _overlaps(hb, words: np.ndarray, own, chromatic: bool) -> bool:
    """Whether a sample takes ink from a word other than its entry's own text: from a word that
    reaches out of the sample's box (the end of a tick label or of a line of text), or from one
    within it, unless the sample is coloured or the word a row of alike marks (a sample of
    markers drawn with dark edges is a row of glyph-sized rings). `words`: (n, 5) boxes and
    their marks flags."""
    meet = ((words[:, 0] <= hb[2]) & (words[:, 2] >= hb[0]) & (words[:, 1] <= hb[3])
            & (words[:, 3] >= hb[1]))
    mine = ((words[:, 0] == own[0]) & (words[:, 1] == own[1]) & (words[:, 2] == own[2])
            & (words[:, 3] == own[3]))
    meet &= ~mine
    within = ((words[:, 0] >= hb[0]) & (words[:, 2] <= hb[2]) & (words[:, 1] >= hb[1])
              & (words[:, 3] <= hb[3]))
    sample = within & (chromatic | (words[:, 4] == 1))
    return bool((meet & ~sample).any())


def _struck(bb, ids, glyphlike, labels, glyph, *, settings: LegendSettings) -> frozenset[int]:
    """The components among `ids` that are a line-and-marker sample, not letters: at least
    LegendSettings.struck_width glyphs wide and twice as wide as tall, whose two end quarters
    are each a thin stroke (inked over at most LegendSettings.struck_stroke of its height) on
    the same rows: a line drawn through a marker. (Letters run together at a small scale fill
    their ends from top to bottom.) Taken as a letter, such a sample, taller than the text,
    joined the name beside it into one row, and the entry was lost."""
    lg = settings
    cfg = settings
    out = set()
    for c in ids.tolist():
        x0, y0, x1, y1 = (int(v) for v in bb[c])
        width, height = x1 - x0 + 1, y1 - y0 + 1
        if not glyphlike[c] or width < cfg.struck_width * glyph or width < 2 * height:
            continue
        own = labels[y0:y1 + 1, x0:x1 + 1] == c + 1
        quarter = max(1, width // lg.struck_ends)
        rows = [np.flatnonzero(part.any(axis=1)) for part in (own[:, :quarter],
                                                               own[:, -quarter:])]
        thin = max(2, cfg.struck_stroke * height)
        if all(len(r) and r[-1] - r[0] + 1 <= thin for r in rows) and \
                min(rows[0][-1], rows[1][-1]) >= max(rows[0][0], rows[1][0]):
            out.add(c)
    return frozenset(out)


def _text_rows(bb, ids, glyphlike, glyph, *, apart: frozenset[tuple[int, int]] = frozenset(),
               alone: frozenset[int] = frozenset(), settings: LegendSettings) -> list[list[int]]:
    """Group glyphs into text rows (words of one entry): vertical overlap, small gaps; the
    parts of a glyph cut in two by `_unstack` (`apart`, component indices) never join, nor do
    line-and-marker samples (`alone`, see `_struck`) join anything."""
    lg = settings
    order = ids[np.argsort(bb[ids, 0])]
    parent = {int(i): int(i) for i in order}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # The pair loop runs over Python numbers (the boxes' int64 columns as lists): indexing numpy
    # scalars one at a time made this loop a third of reading a chart; the arithmetic and so the
    # rows are the same.
    left, top, right, bottom = (bb[:, k].tolist() for k in range(BOX_SIDES))
    heights = (bb[:, 3] - bb[:, 1] + 1).tolist()
    ordered = order.tolist()
    far, low, touch = lg.word_gap * glyph, lg.own_low * glyph, -lg.touch * glyph
    for a_pos, a in enumerate(ordered):
        a_right, a_top, a_bottom, a_height = right[a], top[a], bottom[a], heights[a]
        for b in ordered[a_pos + 1:]:
            dx = left[b] - a_right
            if dx > far:
                break
            if dx > lg.letter_gap * max(a_height, heights[b], low):
                continue
            vover = min(a_bottom, bottom[b]) - max(a_top, top[b])
            if vover >= touch and (a, b) not in apart and (b, a) not in apart and \
                    a not in alone and b not in alone:
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
        if height > lg.line_high * glyph:
            out += _lines(bb, members, glyphlike, glyph, settings=settings)
            continue
        out.append(members)
    return out


def _lines(bb, members: list[int], glyphlike, glyph, *, settings: LegendSettings
           ) -> list[list[int]]:
    """A row two text lines tall (a legend set so tightly that a line's descenders come
    within a pixel of the next line's capitals) split at the band no glyph crosses: each line
    kept when it is two glyphs or more and one line tall; anything else (a dashed upright line,
    glyphs stacked at random) is no text row."""
    lg = settings
    top, bottom = int(bb[members, 1].min()), int(bb[members, 3].max())
    crossing = np.zeros(bottom - top + 2, int)
    for m in members:
        crossing[bb[m, 1] - top + 1:bb[m, 3] - top + 1] += 1  # a box crosses between its rows
    cuts = [top + k for k in range(1, len(crossing) - 1) if crossing[k] == 0]
    parts, start = [], top
    for cut in cuts + [bottom + 1]:
        part = [m for m in members if start <= bb[m, 1] and bb[m, 3] < cut]
        if part:
            parts.append(part)
        start = cut
    lines = [part for part in parts
             if sum(bool(glyphlike[m]) for m in part) >= 2
             and bb[part, 3].max() - bb[part, 1].min() + 1 <= lg.line_high * glyph]
    return lines if len(lines) >= 2 else []


def _handle(page: Page, tb, glyph, bound, side: str = "left", *, settings: LegendSettings):
    """The sample beside a text row, on its `side` and not past `bound` (the region's edge):
    (box, colour, chromatic, style) or None."""
    lg = settings
    left, top, right, bottom = tb
    cy = (top + bottom) / 2
    if side == "left":
        hx0 = max(bound, int(left - lg.handle_reach * glyph))
        hx1 = int(left - lg.handle_gap * glyph)
    else:
        hx0 = int(right + lg.handle_gap * glyph) + 1
        hx1 = min(bound + 1, int(right + lg.handle_reach * glyph) + 1)
    hy0 = int(cy - lg.handle_half * glyph)
    hy1 = int(cy + lg.handle_half * glyph) + 1
    if hx1 - hx0 < lg.handle_min * glyph or hy0 < 0:
        return None
    rgb = page.rgb[hy0:hy1, hx0:hx1].astype(np.float32)
    if rgb.size == 0:
        return None
    # The legend's face: the colour of most pixels just around the text.
    face = _face(page, tb, glyph, settings=settings)
    ink = maxabs(rgb, face) > lg.handle_ink
    # Gridlines showing through the legend cross the whole sample region. So does a patch
    # taller than the region (ggplot2's keys are two text lines tall), in many columns side by
    # side, and its colour ends within 2.5 glyphs above and below, unlike a bar beside a bar
    # label.
    keys = _without_crossings(page, ink, rgb, (hx0, hx1), cy, glyph, settings=settings)
    if ink.sum() < lg.handle_pixels:
        return None
    cols = np.nonzero(ink.any(axis=0))[0]
    # The sample ends close to the text (a scatter marker sits mid-handle, up to ~2.5 glyphs
    # away, ~4 in gnuplot's key); keep only the ink columns that reach it without a gap wider
    # than a dash gap (not the end of a previous entry's text, nor the start of the next one's).
    gaps = np.nonzero(np.diff(cols) > lg.handle_split * glyph)[0]
    if side == "left":
        if gaps.size:
            cols = cols[gaps[-1] + 1:]
        ink[:, :cols[0]] = False
        away = left - (hx0 + cols[-1])
    else:
        if gaps.size:
            cols = cols[:gaps[0] + 1]
        ink[:, cols[-1] + 1:] = False
        away = hx0 + cols[0] - right
    # Ink cut by the region's edge may go on past it (a word of a title wider than the plot).
    if (side == "left" and hx0 == bound and cols[0] == 0) or (
            side == "right" and hx1 == bound + 1 and cols[-1] == hx1 - hx0 - 1):
        return None
    rows_ = np.nonzero(ink.any(axis=1))[0]
    width = cols[-1] - cols[0] + 1
    height = rows_[-1] - rows_[0] + 1
    # A marker: a compact blob (gnuplot draws small points, a quarter of a glyph and up).
    marker = width <= lg.mark_aspect * height + 2 and width <= lg.marker_wide * glyph
    if away > (lg.marker_away if marker else lg.line_away) * glyph:
        return None
    # (A patch filling the region is as tall as the region.)
    if width < (lg.marker_min if marker else 0.5) * glyph or width < 2 or height > lg.own_high * glyph + keys:
        return None
    hb = (int(hx0 + cols[0]), int(hy0 + rows_[0]), int(hx0 + cols[-1]), int(hy0 + rows_[-1]))
    colour, chromatic = _sample_colour(rgb[ink], face, settings=settings)
    style = _sample_style(ink[rows_[0]:rows_[-1] + 1, cols[0]:cols[-1] + 1], glyph, width,
                          height, settings=settings)
    return hb, colour, chromatic, style


def _sample_colour(pix: np.ndarray, face: np.ndarray, *, settings: LegendSettings
                   ) -> tuple[np.ndarray, bool]:
    """A legend sample's colour (its most saturated pixels', or its darkest grey on a light
    face) and whether it is chromatic."""
    lg = settings
    chroma = pix.max(axis=1) - pix.min(axis=1)
    chromatic = bool(np.percentile(chroma, lg.chroma_percentile) >= lg.coloured_chroma)
    if chromatic:
        strong = pix[chroma >= np.percentile(chroma, lg.chroma_percentile)]
        colour = strong.mean(axis=0)
    else:
        lum = luma_of(pix)
        dark = float(np.percentile(lum, lg.dark_percentile)) if face.mean() > lg.light_face else float(
            np.percentile(lum, lg.light_percentile))
        colour = np.array([dark] * len(face))
    return colour, chromatic


def _sample_style(sub: np.ndarray, glyph: float, width: int, height: int, *,
                  settings: LegendSettings) -> str:
    """A legend sample's style from its ink (`sub`, cut to its extent): patch, marker, solid,
    dotted or dashed."""
    lg = settings
    lab, n = ndimage.label(sub, structure=EIGHT_CONNECTED)
    fill = sub.mean()
    if height >= lg.patch_high * glyph and fill > lg.patch_fill \
            and width >= lg.marker_wide * glyph:
        style = "patch"
    elif n == 1 and width <= lg.mark_aspect * height + 2:
        style = "marker"
    elif n == 1:
        style = "solid"
    else:
        sizes = np.bincount(lab.ravel())[1:]
        style = "dotted" if np.median(sizes) <= 2 * max(1, height) ** 2 and n >= lg.dotted_pieces else "dashed"
        if n == 2 and max(sizes) > lg.dash_ratio * min(sizes):
            style = "solid"
    return style


def _without_crossings(page: Page, ink: np.ndarray, rgb: np.ndarray, span: tuple[int, int],
                       cy: float, glyph: float, *, settings: LegendSettings) -> int:
    """Clear from `ink` the columns that cross the whole sample region (gridlines showing
    through the legend), unless they are a key patch taller than the region; 1 when such a
    patch was found, else 0."""
    lg = settings
    hx0, hx1 = span
    full = ink.mean(axis=0) >= lg.crossing_cover
    keys = 0
    if full.any():
        patch = _wide_runs(full, max(2, int(lg.crossing_width * glyph)))
        if patch.any():
            ty0, ty1 = max(0, int(cy - lg.crossing_reach * glyph)), int(cy + lg.crossing_reach * glyph) + 1
            tone = np.median(rgb[:, patch].reshape(-1, rgb.shape[-1]), axis=0)
            tall = maxabs(page.rgb[ty0:ty1, hx0:hx1][:, patch].astype(np.float32), tone) <= lg.crossing_tone
            inked = tall.any(axis=1)
            if tall.shape[0] < ty1 - ty0 or inked[0] or inked[-1]:
                patch[:] = False
            keys = int(patch.any())
        ink[:, full & ~patch] = False
    return keys


def _wide_runs(flags: np.ndarray, width: int) -> np.ndarray:
    """The True runs of a 1-d boolean array longer than `width`."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    out = np.zeros_like(flags)
    for start, stop in zip(edges[0::2], edges[1::2]):
        if stop - start > width:
            out[start:stop] = True
    return out


def _face(page: Page, tb, glyph, *, settings: LegendSettings) -> np.ndarray:
    lg = settings
    left, top, right, bottom = tb
    pad = int(glyph)
    region = page.rgb[max(0, top - pad):bottom + pad, max(0, left - pad):right + pad]
    return common_colour(region.reshape(-1, region.shape[-1]).astype(np.int32), step=lg.face_step)[0].astype(np.float32)


def _aligned(entries: list[Entry], glyph: float, side: str = "left", *,
             settings: LegendSettings) -> list[Entry]:
    """The largest set of entries laid out as a legend: texts in a column with regular spacing,
    aligned on the side of their samples (left-aligned with samples on the left, right-aligned
    with samples on the right), or in one row; then the other columns or rows of the same grid
    (a legend of several columns, a wrapped row below the plot)."""
    lg = settings
    if len(entries) <= 1:
        return entries
    edge = 0 if side == "left" else 2
    best: list[Entry] = []
    is_row = False
    for e in entries:
        column = [f for f in entries if abs(f.text_box[edge] - e.text_box[edge]) <= lg.align_slack * glyph]
        column.sort(key=lambda f: f.text_box[1])
        # Consecutive entries no more than ~3 glyphs apart.
        chain = [column[0]]
        for f in column[1:]:
            if f.text_box[1] - chain[-1].text_box[1] <= lg.entry_step * glyph:
                chain.append(f)
            elif e in chain:
                break
            else:
                chain = [f]
        if e in chain and _weight(chain) > _weight(best):
            best, is_row = chain, False
        row = [f for f in entries if abs(_middle(f) - _middle(e)) <= lg.row_slack * glyph]
        if _weight(row) > _weight(best):
            best, is_row = sorted(row, key=lambda f: f.text_box[0]), True
    if len(best) < 2:
        return best
    return _grid(best, [e for e in entries if e not in best], glyph, edge, is_row,
                 settings=settings)


def _middle(e: Entry) -> float:
    return (e.text_box[1] + e.text_box[3]) / 2


def _grid(best: list[Entry], others: list[Entry], glyph: float, edge: int,
          is_row: bool, *, settings: LegendSettings) -> list[Entry]:
    """`best` (a column or a row of entries) with the other columns (rows) of its grid: groups
    of entries aligned like it whose every entry sits on one of its rows (columns)."""
    lg = settings
    rows = [_middle(e) for e in best]
    cols = [e.text_box[edge] for e in best]
    span = (min(min(e.text_box[0], e.handle_box[0]) for e in best),
            max(max(e.text_box[2], e.handle_box[2]) for e in best))
    top = min(e.text_box[1] for e in best)
    bottom = max(e.text_box[3] for e in best)
    groups: list[list[Entry]] = []
    for e in sorted(others, key=lambda f: (f.text_box[edge], _middle(f))):
        key = _middle(e) if is_row else e.text_box[edge]
        for g in groups:
            ref = _middle(g[0]) if is_row else g[0].text_box[edge]
            if abs(key - ref) <= (lg.row_slack if is_row else lg.align_slack) * glyph:
                g.append(e)
                break
        else:
            groups.append([e])
    grid = list(best)
    coloured = all(e.chromatic for e in best)
    for g in groups:
        if coloured and not any(e.chromatic for e in g):
            continue  # coloured samples, then black ones: words of long names, not entries
        if is_row:
            # A further row: under or over the others (~3 glyphs apart), its entries in the
            # columns of the first.
            near = (min(e.text_box[1] for e in g) - bottom <= lg.entry_step * glyph
                    and top - max(e.text_box[3] for e in g) <= lg.entry_step * glyph)
            ok = near and all(any(abs(e.text_box[edge] - c) <= lg.align_slack * glyph for c in cols)
                              for e in g)
            if ok:
                grid += g
                top = min(top, min(e.text_box[1] for e in g))
                bottom = max(bottom, max(e.text_box[3] for e in g))
        else:
            # A further column: beside the others, its entries on their rows.
            left = min(min(e.text_box[0], e.handle_box[0]) for e in g)
            right = max(max(e.text_box[2], e.handle_box[2]) for e in g)
            # (Columns stand apart: more than a word space.)
            beside = right < span[0] - glyph or left > span[1] + glyph
            ok = beside and len(g) >= min(2, len(best)) and all(
                any(abs(_middle(e) - r) <= lg.row_slack * glyph for r in rows) for e in g)
            if ok:
                grid += g
                span = (min(span[0], left), max(span[1], right))
    if is_row:
        return sorted(grid, key=lambda f: (round(_middle(f) / glyph), f.text_box[0]))
    return sorted(grid, key=lambda f: (round(f.text_box[edge] / glyph), f.text_box[1]))


def _weight(entries: list[Entry]) -> tuple[int, int, int]:
    """More entries first; among as many, samples of one kind (all coloured or all black: the
    words of long names beside each other are "samples" of the other kind), then more glyphs:
    names are words, while two scatter points side by side look like a one-glyph entry with its
    marker."""
    kinds = {e.chromatic for e in entries}
    return len(entries), int(len(kinds) <= 1), sum(len(e.comps) for e in entries)


def _crop(page: Page, labels, entry: Entry, glyph: float, *, settings: LegendSettings) -> Crop:
    lg = settings
    f = page.factor
    left, top, right, bottom = entry.text_box
    sub = np.isin(labels[top:bottom + 1, left:right + 1], entry.comps)
    if f > 1:
        sub = np.kron(sub, np.ones((f, f), bool))
    sub = ndimage.binary_dilation(sub, iterations=max(1, f // 2 + 1))
    gray = page.full_gray[top * f:top * f + sub.shape[0], left * f:left * f + sub.shape[1]]
    sub = sub[:gray.shape[0], :gray.shape[1]]
    if page.dark_bg:
        gray = WHITE - gray
    gray = np.where(sub, gray, WHITE).astype(np.uint8)
    pad = max(lg.crop_pad_min, int(lg.crop_pad * glyph * f))
    out = np.full((gray.shape[0] + 2 * pad, gray.shape[1] + 2 * pad), WHITE, np.uint8)
    out[pad:pad + gray.shape[0], pad:pad + gray.shape[1]] = gray
    # The crop's cap height: the tallest glyph without descenders is close to the row height.
    return Crop(out, lg.text_height * (bottom - top + 1) * f)
