"""Is the reproduced figure a copy of the published one? Alignment, then a resampling-tolerant
comparison.

A copy is the published figure passed through operations that change no plotted mark: a JPEG
re-encode (quality 60-95, chroma subsampling), a uniform border added (any colour) or a few
percent cropped, a resize (0.5x-2x, any resampling filter, nearest-neighbour included), a
grayscale conversion, or several of these. A re-render is not a copy, even of the same data in
the same style: its marks sit where the plotting library put them this time (a seed change, 2%
noise, a curve half a percent higher, a moved legend, other colours or transparency).

How (`check_copy`):

1. Pixel identity up to a uniform border (`pixel_identical`): what a bit-exact re-run of the
   paper's own plotting code also produces, so it is reported as such (`CopyCheck.identical`;
   the measure stage reads the claim's logs to tell the two apart). Identity but for a few
   small clusters of pixels (`near_identical`: the same code run where fonts are placed a pixel
   otherwise, or a copy with a label edited) is neither called a copy nor a re-render: it is
   left to a human (`CopyCheck.near_identical`).
2. Alignment (`align`): uniform borders are peeled off both figures (`peel_borders`). Scale
   hypotheses come from the content boxes, the image sizes, "no resize", and a per-axis search
   matching the two figures' ink profiles (column and row sums), which small crops do not
   mislead the way they move the boxes. Each is tried as it is and translated by the highest
   peaks of a phase correlation at 128 px (evenly spaced bars give a peak per bar), and scored
   by the correlation of the two figures' marks; the best is refined by phase correlation on
   3x3 tiles, whose shifts give a scale and an offset per axis, at 256 px and again on the
   comparison grid.
3. Comparison on the reproduction's grid (no finer than either figure, at most
   COMPARE_MAX_SIDE): a pixel is *redrawn* when the reproduction leaves, in some channel, by
   more than REDRAWN_TOLERANCE, the range that the published figure takes within half a pixel
   in any of its versions (resampled smoothly; with its chroma subsampled as JPEG does; point-
   sampled when shrunk), and, for the few such pixels, the range of the published pixels under
   its footprint at their own resolution, where any resampling filter puts its output; or when
   every version of the published figure leaves the reproduction's range likewise (marks it
   lacks). A 2x2 opening drops isolated pixels. A copy has (almost) no redrawn pixel
   (COPY_MAX_REDRAWN_SHARE), few pixels whose smoothed luma differs (COPY_MAX_TONE_SHARE:
   the same marks drawn with another transparency stay inside the ranges, not in the shade),
   and marks that correlate with the published ones (COPY_MIN_CORRELATION: a figure of thin
   strokes only, which the opening removes, is not a copy for having nothing left redrawn).
   Pairs plainly redrawn stop early: no alignment correlates (SEARCH_MIN_CORRELATION), or too
   much is redrawn at 256 px or at half the comparison grid.
   A gray reproduction of a colour figure is compared in gray, the published figure's gray made
   with the least-squares channel weights that best explain the reproduction (whoever converted
   it used a luma formula of their own).

What it cannot tell: a re-render in the same style at another resolution, or with lines a
fraction of a pixel wider, reads as a resized copy (its marks are where a copy's would be).

Hand-written parts say why: no maintained library asks "is B a resampled, re-encoded or
re-framed A" of a chart (image-forensics tools model camera photos); scikit-image's
`phase_cross_correlation` refines sub-pixel peaks by an upsampled DFT that costs 10-25 ms per
tile here, where the closed-form peak estimate of `phase_shift` costs nothing.

Thresholds are measured by benchmarks/copy_check.py (copies of the chart dev set and of the real
figures of realfig-dev, against re-renders and the real faithful/unfaithful pairs); see the
constants.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageChops
from scipy import ndimage

#: Channel difference above which a pixel counts as content rather than border: high enough that
#: JPEG ringing around the outermost text does not move the crop.
BORDER_TOLERANCE = 48
#: Uniform borders peeled off one after the other (a coloured pad around a white margin).
PEEL_ROUNDS = 3
#: Pixel-identical: every channel of the two content boxes within this many levels (colour
#: management and PNG encoders round differently; a JPEG re-encode moves far more pixels).
IDENTICAL_MAX_LEVELS = 2
#: Long side of the coarse alignment grid (the search works at SEARCH_SIZE), and the largest
#: comparison grid.
ALIGN_SIZE = 256
COMPARE_MAX_SIDE = 1200
#: Both figures are integer-reduced to at most this long side before anything else (the
#: footprint ranges are computed at this resolution).
WORK_MAX_SIDE = 2400
#: How far (in 8-bit levels, any RGB channel) a reproduced value may fall outside the range of
#: what resampling the published figure can give: JPEG ringing at q40 stays within it on the dev
#: sets; a moved or recoloured mark does not.
REDRAWN_TOLERANCE = 64
#: Share of redrawn pixels up to which a pair is a copy. benchmarks/copy_check.py: the 1,783
#: synthetic copies (dev-set and real figures through 24 transformations, JPEG q40 and
#: nearest-neighbour halving included) reach at most 3.7e-5; the closest re-render of the dev
#: set (its legend moved) 1.1e-3, the closest real re-plot 5.6e-3.
COPY_MAX_REDRAWN_SHARE = 4e-4
#: Smoothed-luma differences: a pixel whose Gaussian-blurred (sigma TONE_BLUR) luma differs by
#: more than TONE_LEVELS; copies have at most 0.025 of them (nearest-neighbour halving of thin
#: pgfplots lines), a scatter redrawn with another transparency 0.13.
TONE_BLUR = 1.5
TONE_LEVELS = 26
COPY_MAX_TONE_SHARE = 0.1
#: The correlation of the aligned, lightly blurred marks (`_ink_correlation`) below which a pair
#: is no copy: copies correlate at least 0.82 (nearest-neighbour halving), a sparse scatter
#: re-plotted elsewhere 0.12 and 0.40 while its thin marks, opened away, left nothing redrawn.
COPY_MIN_CORRELATION = 0.7
#: The coarse alignment's verdict above which the fine stages are skipped (not a copy): the share
#: of redrawn pixels at the 256-px grid. Copies stay far below it; most re-renders far above.
COARSE_MAX_REDRAWN_SHARE = 0.05
#: The same at half the comparison grid: a pair above it is not compared at full size.
MIDDLE_MAX_REDRAWN_SHARE = 10 * COPY_MAX_REDRAWN_SHARE


@dataclass(frozen=True)
class CopyCheck:
    """The copy verdict of one figure pair and what it rests on."""

    copy: bool
    identical: bool
    """Pixel-identical up to a uniform border (byte-identical files included): what a bit-exact
    re-run of the plotting code also produces."""
    redrawn_share: float | None = None
    """Share of the compared pixels redrawn once aligned (None: decided before comparing)."""
    tone_share: float | None = None
    """Share of the compared pixels whose smoothed luma differs (None: not compared)."""
    correlation: float | None = None
    """Correlation of the two figures' aligned, lightly blurred marks at 256 px."""
    scale: tuple[float, float] | None = None
    """Published pixels per reproduced pixel (x, y) of the alignment used."""
    how: str = ""
    """How the verdict was reached, in a few words (shown in the copy flag)."""
    near_identical: bool = False
    """Pixel-identical but for a few small clusters (NEAR_IDENTICAL_SHARE, NEAR_IDENTICAL_SPAN):
    the same plotting code run again where the fonts are placed a pixel otherwise, or a copy
    with a label edited. Nothing in the pixels tells the two apart (no copy is flagged: a
    human, or the logs, must say), and no re-encode, resize or re-frame looks like it (those
    move pixels everywhere)."""


def content_box(image: Image.Image, *, tolerance: int = BORDER_TOLERANCE,
                background: tuple[int, ...] | int | None = None
                ) -> tuple[int, int, int, int] | None:
    """Bounding box of what differs from `background` (default: the top-left pixel's colour) by
    more than `tolerance` gray levels; None for an image that is all border."""
    colour = image.getpixel((0, 0)) if background is None else background
    difference = ImageChops.difference(image, Image.new(image.mode, image.size, colour))
    return difference.convert("L").point(_above(tolerance)).getbbox()


@functools.cache
def _above(tolerance: int) -> list[int]:
    """The table `Image.point` makes of `lambda v: 255 if v > tolerance else 0`, made once
    (Pillow calls a function 256 times per image)."""
    return [255 if v > tolerance else 0 for v in range(256)]


@functools.cache
def _hann(shape: tuple[int, int]) -> np.ndarray:
    """scikit-image's Hann window of `shape` in float32, made once per shape (it costs a few
    milliseconds, and the alignment asks for the same tile shapes again and again); read-only,
    as it is shared."""
    # Imported here: skimage.filters.window imports scipy.signal (about 1.3 s of CPU), which
    # the process that schedules a run never needs; the measuring workers import it once, in
    # their forkserver (`judging.run.worker_start`).
    from skimage.filters import window

    taper = window("hann", shape).astype(np.float32)
    taper.flags.writeable = False
    return taper


def _uniform_edge(image: Image.Image, *, tolerance: int) -> bool:
    """Whether some outermost row or column is all of the top-left pixel's colour (else there
    is no border of that colour to peel)."""
    colour = image.getpixel((0, 0))
    width, height = image.size
    return any(content_box(image.crop(edge), tolerance=tolerance, background=colour) is None
               for edge in ((0, 0, width, 1), (0, height - 1, width, height), (0, 0, 1, height),
                            (width - 1, 0, width, height)))


def peel_borders(image: Image.Image, *, tolerance: int = BORDER_TOLERANCE,
                 rounds: int = PEEL_ROUNDS) -> tuple[int, int, int, int]:
    """The box left once uniform borders are peeled off, one colour at a time (a grey pad
    around the figure's own white margin takes two rounds). The whole image when it has none or
    is all border."""
    box = (0, 0, *image.size)
    for _ in range(rounds):
        crop = image.crop(box)
        if not _uniform_edge(crop, tolerance=tolerance):
            break  # content touches an edge: no border to peel (and no full pass to pay for)
        inner = content_box(crop, tolerance=tolerance)
        if inner is None or inner == (0, 0, *crop.size):
            break
        box = (box[0] + inner[0], box[1] + inner[1], box[0] + inner[2], box[1] + inner[3])
    return box


#: Nearly pixel-identical (see CopyCheck.near_identical): at most this share of the pixels
#: differs (a few words re-rasterised)...
NEAR_IDENTICAL_SHARE = 0.002
#: ... in clusters each no wider or taller than this share of the figure's longer side (a word,
#: a tick label), the rest within IDENTICAL_MAX_LEVELS.
NEAR_IDENTICAL_SPAN = 0.1


def near_identical(a: Image.Image, b: Image.Image,
                   boxes: tuple[tuple[int, int, int, int], tuple[int, int, int, int]]
                   ) -> tuple[int, int] | None:
    """(differing pixels, their clusters) when two same-sized content boxes differ in a few
    small clusters only (CopyCheck.near_identical), else None."""
    (a0, a1, a2, a3), (b0, b1, b2, b3) = boxes
    if (a2 - a0, a3 - a1) != (b2 - b0, b3 - b1):
        return None
    difference = np.asarray(ImageChops.difference(a.crop(boxes[0]), b.crop(boxes[1])))
    differs = _any_channel(difference > IDENTICAL_MAX_LEVELS)
    count = int(differs.sum())
    if count == 0 or count > NEAR_IDENTICAL_SHARE * differs.size:
        return None
    labels, clusters = ndimage.label(ndimage.binary_dilation(differs, iterations=2))
    span = NEAR_IDENTICAL_SPAN * max(differs.shape)
    for rows, cols in ndimage.find_objects(labels):
        if rows.stop - rows.start > span or cols.stop - cols.start > span:
            return None
    return count, clusters


def pixel_identical(published: Image.Image, reproduced: Image.Image, *,
                    max_levels: int = IDENTICAL_MAX_LEVELS) -> bool:
    """Same pixels once uniform borders are peeled off: every channel within `max_levels`."""
    a, b = published.convert("RGB"), reproduced.convert("RGB")
    return _same_pixels(a, b, (peel_borders(a), peel_borders(b)), max_levels=max_levels)


def _same_pixels(a: Image.Image, b: Image.Image,
                 boxes: tuple[tuple[int, int, int, int], tuple[int, int, int, int]], *,
                 max_levels: int = IDENTICAL_MAX_LEVELS) -> bool:
    (a0, a1, a2, a3), (b0, b1, b2, b3) = boxes
    if (a2 - a0, a3 - a1) != (b2 - b0, b3 - b1):
        return False
    difference = ImageChops.difference(a.crop(boxes[0]), b.crop(boxes[1]))
    return max(high for _, high in difference.getextrema()) <= max_levels


@dataclass(frozen=True)
class Alignment:
    """Where each reproduced pixel lies in the published figure: u = scale * r + offset per axis,
    in the continuous pixel coordinates of the two (work-size) images."""

    scale: tuple[float, float]
    offset: tuple[float, float]

    def plausible(self) -> bool:
        """A scale a copy can have (MAX_RESIZE either way, MAX_STRETCH between the axes)."""
        sx, sy = self.scale
        return (all(math.isfinite(v) for v in (*self.scale, *self.offset))
                and all(1 / MAX_RESIZE <= v <= MAX_RESIZE for v in (sx, sy))
                and max(sx, sy) <= MAX_STRETCH * min(sx, sy))

    def grid_map(self, box: tuple[int, int, int, int], grid: tuple[int, int]
                 ) -> tuple[tuple[float, float], tuple[float, float]]:
        """(step, origin) in published pixels of the grid that resamples `box` of the
        reproduction at `grid` pixels."""
        step = (self.scale[0] * (box[2] - box[0]) / grid[0],
                self.scale[1] * (box[3] - box[1]) / grid[1])
        origin = (self.scale[0] * box[0] + self.offset[0],
                  self.scale[1] * box[1] + self.offset[1])
        return step, origin

    def corrected(self, box: tuple[int, int, int, int], grid: tuple[int, int],
                  shift: tuple[float, float], slope: tuple[float, float]) -> Alignment:
        """The alignment once the published grid is found displaced by shift + slope * g (grid
        pixels) from the reproduction: reproduced(g) ~ published(g - d(g))."""
        step, origin = self.grid_map(box, grid)
        scale, offset = [], []
        for axis in (0, 1):
            new_step = step[axis] * (1 - slope[axis])
            new_origin = origin[axis] - step[axis] * shift[axis]
            size = (box[2] - box[0]) if axis == 0 else (box[3] - box[1])
            scale.append(new_step * grid[axis] / size)
            offset.append(new_origin - scale[axis] * box[axis])
        return Alignment((scale[0], scale[1]), (offset[0], offset[1]))


#: Pillow's two-step resize (`Image.resize(reducing_gap=...)`): "indistinguishable from fair
#: resampling in most cases" at 2.0 (Pillow's documentation), and several times faster here.
REDUCING_GAP = 2.0


def resample(image: Image.Image, step: tuple[float, float], origin: tuple[float, float],
             size: tuple[int, int], *, fill: tuple[int, ...] | int,
             method: Image.Resampling = Image.Resampling.BICUBIC) -> Image.Image:
    """`image` at u = origin + step * g for the pixels g of a `size` grid (continuous
    coordinates); what falls outside the image is `fill`. Pillow's resize with a source box
    filters properly when shrinking (first by an integer box reduction, `reducing_gap`, which
    costs a fraction of filtering the whole figure at each call); the pad keeps the box inside
    the image, as it requires."""
    x0, y0 = origin
    x1, y1 = x0 + step[0] * size[0], y0 + step[1] * size[1]
    left, top = max(0, math.ceil(-x0) + 2), max(0, math.ceil(-y0) + 2)
    right = max(0, math.ceil(x1 - image.width) + 2)
    bottom = max(0, math.ceil(y1 - image.height) + 2)
    if left or top or right or bottom:
        canvas = Image.new(image.mode, (image.width + left + right, image.height + top + bottom),
                           fill)
        canvas.paste(image, (left, top))
        image = canvas
    gap = None if method is Image.Resampling.NEAREST else REDUCING_GAP
    return image.resize(size, method, box=(x0 + left, y0 + top, x1 + left, y1 + top),
                        reducing_gap=gap)


def _gray(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L"), np.float32) / np.float32(255.0)


def _background(gray: np.ndarray) -> float:
    """The most common gray level (in [0, 1], in bins of 4 levels, which JPEG noise does not
    split): the background of a figure."""
    counts = np.bincount((np.round(gray * 255).astype(np.int64) // 4).ravel(), minlength=64)
    return (4 * float(counts.argmax()) + 1.5) / 255.0


def figure_background(image: Image.Image) -> float:
    """The background level of a gray figure (mode L), read from a copy of at most 256 px."""
    return _background(_gray(image.reduce(max(1, max(image.size) // 256))))


def _ink(gray: np.ndarray, background: float | None = None) -> np.ndarray:
    """Distance from the background: zero where nothing is drawn, so that the taper of a phase
    correlation weighs the marks and never correlates with itself (a mean-subtracted white
    background under the same taper pulls every shift towards 0)."""
    level = _background(gray) if background is None else background
    return np.abs(gray - np.float32(level))


def _correlation_surface(reference: np.ndarray, moving: np.ndarray) -> np.ndarray:
    return _surface(np.fft.rfft2(reference), moving, reference.shape)


def _surface(spectrum: np.ndarray, moving: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The phase-correlation surface of a reference given by its spectrum (`rfft2`: a tile
    refined against several alignments is transformed once) and `moving`."""
    cross = spectrum * np.conj(np.fft.rfft2(moving))
    cross /= np.maximum(np.abs(cross), 1e-12)
    return np.fft.irfft2(cross, s=shape)


def _peak(surface: np.ndarray, iy: int, ix: int) -> tuple[float, float, float, bool, bool]:
    """The sub-pixel shift of the peak at (iy, ix) of a phase-correlation surface: see
    `phase_shift`."""
    peak = float(surface[iy, ix])
    h, w = surface.shape

    def offset(before: float, after: float) -> float:
        if after > before:
            return after / (after + peak) if after + peak > 0 else 0.0
        return -before / (before + peak) if before + peak > 0 else 0.0

    dy = iy + offset(surface[(iy - 1) % h, ix], surface[(iy + 1) % h, ix])
    dx = ix + offset(surface[iy, (ix - 1) % w], surface[iy, (ix + 1) % w])
    dy, dx = (dy - h if dy > h / 2 else dy), (dx - w if dx > w / 2 else dx)
    along_y = max(surface[(iy + k) % h, ix] for k in (-3, -2, 2, 3))
    along_x = max(surface[iy, (ix + k) % w] for k in (-3, -2, 2, 3))
    return float(dy), float(dx), peak, along_y < 0.5 * peak, along_x < 0.5 * peak


def phase_shift(reference: np.ndarray, moving: np.ndarray
                ) -> tuple[float, float, float, bool, bool]:
    """(dy, dx, peak, y located, x located): reference(x) ~ moving(x - d), by phase correlation
    (inputs windowed, zero where nothing is drawn). The sub-pixel offset is Foroosh, Zerubia &
    Berthod's closed form for the phase-correlation peak (IEEE Trans. Image Process. 11(3),
    2002, doi:10.1109/83.988953), which is unbiased where a parabola fit is pulled to whole
    pixels. An axis is not located when the peak is a ridge along it (an edge seen along its
    length)."""
    return _surface_shift(_correlation_surface(reference, moving))


def _surface_shift(surface: np.ndarray) -> tuple[float, float, float, bool, bool]:
    iy, ix = np.unravel_index(int(np.argmax(surface)), surface.shape)
    return _peak(surface, int(iy), int(ix))


def phase_peaks(reference: np.ndarray, moving: np.ndarray, count: int
                ) -> list[tuple[float, float]]:
    """The (dy, dx) of the `count` highest peaks of the phase correlation, at least 4 px apart:
    repeated marks (evenly spaced bars, grid lines) give a peak per period, and the highest is
    not always the right one."""
    surface = _correlation_surface(reference, moving)
    found = []
    work = surface.copy()
    for _ in range(count):
        iy, ix = (int(v) for v in np.unravel_index(int(np.argmax(work)), work.shape))
        dy, dx, *_ = _peak(surface, iy, ix)
        found.append((dy, dx))
        rows = np.arange(iy - 4, iy + 5) % work.shape[0]
        cols = np.arange(ix - 4, ix + 5) % work.shape[1]
        work[np.ix_(rows, cols)] = -np.inf
    return found


#: The largest resize, and the largest ratio of the two axes' scales, an alignment may find:
#: beyond them the figures are not copies of each other (nor is the search converging).
MAX_RESIZE = 8.0
MAX_STRETCH = 1.5
#: Content boxes narrower than this (work-size pixels) are not compared (not a copy).
MIN_CONTENT = 8
#: The alignment search works at this size (long side), and gives up (not a copy) when no
#: candidate's marks correlate better than SEARCH_MIN_CORRELATION with the reproduction's.
SEARCH_SIZE = 128
SEARCH_MIN_CORRELATION = 0.4
#: Translations tried per scale hypothesis (the highest peaks of the phase correlation), besides
#: the one that centres the content boxes.
TRANSLATION_PEAKS = 3
#: Tiles whose correlation peak is below this say nothing (no shared structure).
MIN_PEAK = 0.05
#: A tile shift beyond this (grid pixels) is a wrong peak, not a residual.
MAX_TILE_SHIFT = 6.0


@dataclass(frozen=True)
class _Tile:
    """One of the 3x3 tiles of the reference ink image, with the spectrum of its tapered ink
    (the same in every refinement pass: transformed once)."""

    x0: int
    y0: int
    width: int
    height: int
    spectrum: np.ndarray


def _reference_tiles(reference: np.ndarray, tile: tuple[int, int]
                     ) -> tuple[list[_Tile], np.ndarray]:
    """The 3x3 tiles of the ink image `reference` that hold ink, and their taper."""
    h, w = reference.shape
    th, tw = min(tile[1], h), min(tile[0], w)
    taper = _hann((th, tw))
    tiles = []
    for y0 in sorted({round(i * (h - th) / 2) for i in range(3)}):
        for x0 in sorted({round(j * (w - tw) / 2) for j in range(3)}):
            a = reference[y0:y0 + th, x0:x0 + tw]
            if a.max() < 0.1:
                continue
            tiles.append(_Tile(x0, y0, tw, th, np.fft.rfft2(a * taper)))
    return tiles, taper


def _tile_shifts(tiles: list[_Tile], taper: np.ndarray,
                 moving: Callable[[int, int, int, int], np.ndarray]
                 ) -> list[tuple[float, float, float, float, bool, bool]]:
    """(centre x, centre y, dx, dy, y located, x located) of the reference's tiles
    (`_reference_tiles`); `moving(x0, y0, width, height)` gives the other figure's ink at a
    tile."""
    found = []
    for t in tiles:
        b = moving(t.x0, t.y0, t.width, t.height)
        if b.max() < 0.1:
            continue
        dy, dx, peak, y_ok, x_ok = _surface_shift(_surface(t.spectrum, b * taper, taper.shape))
        if peak >= MIN_PEAK:
            found.append((t.x0 + t.width / 2, t.y0 + t.height / 2, dx, dy,
                          y_ok and abs(dy) < MAX_TILE_SHIFT, x_ok and abs(dx) < MAX_TILE_SHIFT))
    return found


def _line_fit(centres: list[float], shifts: list[float]) -> tuple[float, float]:
    """shift ~ p + q * centre, refitted without the tiles it explains worst (a wrong peak)."""
    if not centres:
        return 0.0, 0.0
    c, d = np.asarray(centres), np.asarray(shifts)
    keep = np.ones(len(c), bool)
    for _ in range(3):
        if len(np.unique(np.round(c[keep]))) >= 2:
            q, p = np.polyfit(c[keep], d[keep], 1)
        else:
            q, p = 0.0, float(np.median(d[keep]))
        residual = np.abs(d - (p + q * c))
        fits = residual <= max(0.75, 2.5 * float(np.median(residual)))
        if fits.sum() < 2 or (fits == keep).all():
            break
        keep = fits
    return float(p), float(q)


def _refine(alignment: Alignment, published: Image.Image, reference: np.ndarray,
            box: tuple[int, int, int, int], *, tile: tuple[int, int], fill: int,
            backgrounds: tuple[float, float], iterations: int) -> Alignment:
    """Phase-correlation refinement of `alignment` on the reproduction's grid `reference`
    (gray, the box resampled at its shape); the published figure is resampled tile by tile.
    `backgrounds`: the two figures' background levels (`_background`)."""
    grid = (reference.shape[1], reference.shape[0])
    tiles, taper = _reference_tiles(_ink(reference, backgrounds[1]), tile)
    for _ in range(iterations):
        step, origin = alignment.grid_map(box, grid)

        def moving(x0: int, y0: int, width: int, height: int,
                   step: tuple[float, float] = step, origin: tuple[float, float] = origin
                   ) -> np.ndarray:
            corner = (origin[0] + step[0] * x0, origin[1] + step[1] * y0)
            return _ink(_gray(resample(published, step, corner, (width, height), fill=fill)),
                        backgrounds[0])

        shifts = _tile_shifts(tiles, taper, moving)
        along_x = [t for t in shifts if t[5]]
        along_y = [t for t in shifts if t[4]]
        if not along_x and not along_y:
            break
        px, qx = _line_fit([t[0] for t in along_x], [t[2] for t in along_x])
        py, qy = _line_fit([t[1] for t in along_y], [t[3] for t in along_y])
        corrected = alignment.corrected(box, grid, (px, py), (qx, qy))
        if not corrected.plausible():
            break
        alignment = corrected
        if max(abs(px), abs(py), abs(qx) * grid[0], abs(qy) * grid[1]) < 0.05:
            break
    return alignment


#: Long side of the ink profiles the per-axis scale search works on.
PROFILE_SIZE = 512
PROFILE_BLUR = 1.5
#: The scale search: relative steps around each hypothesis, then a finer pass around the best.
_COARSE_STEPS = np.exp(np.linspace(-0.08, 0.08, 33))
_FINE_STEPS = np.exp(np.linspace(-0.01, 0.01, 11))


def _ink_profiles(image: Image.Image) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Column and row sums of the ink (difference from the top-left pixel), zero-mean, of
    `image` reduced to PROFILE_SIZE at most, and the reduction per axis (samples per pixel)."""
    k = min(1.0, PROFILE_SIZE / max(image.size))
    size = (max(4, round(image.width * k)), max(4, round(image.height * k)))
    gray = np.asarray(image.resize(size, Image.Resampling.BOX), np.float32)
    ink = np.abs(gray - gray[0, 0])
    # The square root tames the spikes of long frame and grid lines (text and marks count too);
    # the blur lets a scale a fraction of a percent off still line the far ends up.
    columns, rows = (ndimage.gaussian_filter1d(np.sqrt(ink.sum(axis=a)), PROFILE_BLUR)
                     for a in (0, 1))
    return (columns - columns.mean(), rows - rows.mean(), size[0] / image.width,
            size[1] / image.height)


def _profile_fits(published: np.ndarray, reproduced: np.ndarray, scales: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For each scale (published samples per reproduced sample): the normalised correlation of
    the published profile sampled at that scale with the reproduced profile at the best whole
    shift, and the offset (published samples) it gives. One batch of FFTs for all scales."""
    n = max(4, math.ceil(len(published) / float(scales.min())))
    positions = scales[:, None] * (np.arange(n) + 0.5)[None, :] - 0.5
    inside = positions <= len(published) - 1
    sampled = np.where(inside, np.interp(positions, np.arange(len(published)), published), 0.0)
    counts = np.maximum(inside.sum(axis=1, keepdims=True), 1)
    sampled = np.where(inside, sampled - sampled.sum(axis=1, keepdims=True) / counts, 0.0)
    size = 1 << (n + len(reproduced)).bit_length()
    corr = np.fft.irfft(np.fft.rfft(sampled, size, axis=1)
                        * np.conj(np.fft.rfft(reproduced, size))[None, :], size, axis=1)
    shifts = corr.argmax(axis=1)
    norms = np.linalg.norm(sampled, axis=1) * np.linalg.norm(reproduced)
    best = corr[np.arange(len(scales)), shifts] / np.where(norms > 0, norms, 1.0)
    shifts = np.where(shifts > size // 2, shifts - size, shifts)
    return best, scales * shifts


def _profile_scale(published: np.ndarray, reproduced: np.ndarray, guesses: list[float]
                   ) -> tuple[float, float]:
    """The scale (and offset) that best matches two ink profiles, searched around `guesses`."""
    scales = np.concatenate([g * _COARSE_STEPS for g in guesses if g > 0])
    scores, _ = _profile_fits(published, reproduced, scales)
    scales = scales[int(scores.argmax())] * _FINE_STEPS
    scores, offsets = _profile_fits(published, reproduced, scales)
    best = int(scores.argmax())
    return float(scales[best]), float(offsets[best])


def _hypotheses(published: Image.Image, reproduced: Image.Image,
                boxes: tuple[tuple[int, int, int, int], tuple[int, int, int, int]],
                native: float) -> list[Alignment]:
    """Candidate alignments: scales (published pixels per reproduced pixel) from the content
    boxes per axis and uniformly (a crop moves one box side), the image sizes, no resize at all
    (`native`: the ratio of the two work-size reductions), each centring the boxes; and the
    per-axis scale and offset that best match the two figures' ink profiles (column and row
    sums), searched around those, which a crop does not mislead."""
    (p0, p1, p2, p3), (r0, r1, r2, r3) = boxes
    bx, by = (p2 - p0) / max(1, r2 - r0), (p3 - p1) / max(1, r3 - r1)
    ix, iy = published.width / reproduced.width, published.height / reproduced.height
    scales = [(bx, by), (bx, bx), (by, by), ((bx * by) ** 0.5,) * 2, (ix, iy), (native, native)]
    found = [Alignment((sx, sy), ((p0 + p2) / 2 - sx * (r0 + r2) / 2,
                                  (p1 + p3) / 2 - sy * (r1 + r3) / 2)) for sx, sy in scales]
    pub_x, pub_y, kpx, kpy = _ink_profiles(published)
    rep_x, rep_y, krx, kry = _ink_profiles(reproduced)
    # In profile samples (continuous, from 0): published = s * reproduced + o; in pixels
    # u = c / k, so the pixel scale is s * kr / kp and the pixel offset o / kp.
    sx, ox = _profile_scale(pub_x, rep_x, [g * kpx / krx for g in (bx, by, ix, native)])
    sy, oy = _profile_scale(pub_y, rep_y, [g * kpy / kry for g in (by, bx, iy, native)])
    found.append(Alignment((sx * krx / kpx, sy * kry / kpy), (ox / kpx, oy / kpy)))
    # Either axis's profile scale for both (copies keep their aspect; evenly spaced bars or grid
    # lines can mislead one axis), the offsets fitted again at that scale.
    for scale in (sx * krx / kpx, sy * kry / kpy):
        _, (ux,) = _profile_fits(pub_x, rep_x, np.array([scale * kpx / krx]))
        _, (uy,) = _profile_fits(pub_y, rep_y, np.array([scale * kpy / kry]))
        found.append(Alignment((scale, scale), (float(ux) / kpx, float(uy) / kpy)))
    return [a for a in found if a.plausible()]


def align(published: Image.Image, reproduced: Image.Image, *, native: float = 1.0,
          boxes: tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None = None,
          fill: int = 255, backgrounds: tuple[float, float] | None = None,
          size: int = ALIGN_SIZE, min_score: float = -1.0
          ) -> tuple[Alignment, float] | None:
    """The alignment of two gray figures (mode L) and how well it explains the reproduction
    (the correlation of the lightly blurred marks, before refinement); None when no hypothesis
    is plausible.

    Each hypothesis (`_hypotheses`) is tried as it is and translated by each of the highest
    peaks of the phase correlation of the whole reproduction at SEARCH_SIZE px; every candidate
    is scored by the correlation of the two figures' lightly blurred marks there, and the best
    is refined on 3x3 tiles of half the `size` grid, unless it scores below `min_score`.
    """
    pbox, rbox = boxes or (peel_borders(published), peel_borders(reproduced))
    backgrounds = backgrounds or (figure_background(published),) * 2
    width, height = rbox[2] - rbox[0], rbox[3] - rbox[1]
    k = min(1.0, SEARCH_SIZE / max(width, height))
    small = (max(16, round(width * k)), max(16, round(height * k)))
    ink = _ink(_gray(reproduced.resize(small, Image.Resampling.BOX, box=rbox)), backgrounds[1])
    taper = _hann(ink.shape)
    smooth = ndimage.gaussian_filter(ink, 1.0)
    smooth = (smooth - smooth.mean()) / (smooth.std() or 1.0)

    def marks(candidate: Alignment) -> np.ndarray:
        step, origin = candidate.grid_map(rbox, small)
        return _ink(_gray(resample(published, step, origin, small, fill=fill)), backgrounds[0])

    best: tuple[float, Alignment] | None = None
    # Hypotheses often coincide (figures of one size and layout: every scale is 1), and an
    # equal candidate scores the same and cannot win over the first (strictly better wins):
    # each distinct one is tried once.
    for guess in dict.fromkeys(_hypotheses(published, reproduced, (pbox, rbox), native)):
        guess_marks = marks(guess)
        candidates = [guess] + [guess.corrected(rbox, small, (dx, dy), (0.0, 0.0)) for dy, dx in
                                phase_peaks(ink * taper, guess_marks * taper, TRANSLATION_PEAKS)]
        for candidate in candidates:
            if not candidate.plausible():
                continue
            moved = ndimage.gaussian_filter(
                guess_marks if candidate is guess else marks(candidate), 1.0)
            score = float((smooth * (moved - moved.mean())).mean() / (moved.std() or 1.0))
            if best is None or score > best[0]:
                best = (score, candidate)
    if best is None:
        return None
    if best[0] < min_score:
        return best[1], best[0]
    k = min(1.0, size / max(width, height))
    grid = (max(16, round(width * k)), max(16, round(height * k)))
    reference = _gray(reproduced.resize(grid, Image.Resampling.BOX, box=rbox))
    return _refine(best[1], published, reference, rbox, tile=(grid[0] // 2, grid[1] // 2),
                   fill=fill, backgrounds=backgrounds, iterations=4), best[0]


def _is_gray(image: Image.Image) -> bool:
    """Whether an RGB figure has (almost) no colour: at most 0.1% of its pixels, at 256 px."""
    small = np.asarray(image.reduce(max(1, max(image.size) // 256)).convert("RGB"), np.int16)
    r, g, b = small[..., 0], small[..., 1], small[..., 2]
    spread = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)
    return bool((spread <= 12).mean() > 0.999)


def _work_size(image: Image.Image) -> tuple[Image.Image, int]:
    factor = math.ceil(max(image.size) / WORK_MAX_SIDE)
    return (image.reduce(factor) if factor > 1 else image), factor


def _ranges(versions: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel and channel, the lowest and highest value any version takes within half a pixel
    (linear interpolation towards each of the four neighbours): what resampling with an
    alignment error below half a pixel can give."""
    low = high = None
    for v in versions:
        if low is None or high is None:
            low, high = v.copy(), v.copy()
        else:
            np.minimum(low, v, out=low)
            np.maximum(high, v, out=high)
        # The halfway value between two neighbours counts for both of them; past the edge the
        # neighbour is the pixel itself, whose halfway value is its own (already in the range).
        for axis in (0, 1):
            first = (slice(None),) * axis + (slice(None, -1),)
            rest = (slice(None),) * axis + (slice(1, None),)
            half = (v[rest] + v[first]) // 2
            for part in (rest, first):
                np.minimum(low[part], half, out=low[part])
                np.maximum(high[part], half, out=high[part])
    assert low is not None and high is not None
    return low, high


def _any_channel(flags: np.ndarray) -> np.ndarray:
    """`flags.any(axis=-1)` of an (H, W, C) boolean array, a channel at a time: numpy reduces
    over a last axis of three several times slower than it ORs three planes."""
    out = flags[..., 0].copy()
    for k in range(1, flags.shape[-1]):
        out |= flags[..., k]
    return out


def _outside(values: np.ndarray, low: np.ndarray, high: np.ndarray, tolerance: int
             ) -> np.ndarray:
    """Where some channel of `values` leaves [low - tolerance, high + tolerance]."""
    return _any_channel((values < low - tolerance) | (values > high + tolerance))


def _chroma_subsampled(rgb: np.ndarray) -> np.ndarray:
    """What JPEG's 4:2:0 chroma subsampling makes of an RGB image: one chroma sample per 2x2
    block, interpolated back (a thin saturated line loses much of its colour, not its luma)."""
    ycc = Image.fromarray(rgb.astype(np.uint8), "RGB").convert("YCbCr")
    y, cb, cr = ycc.split()
    half = (max(1, ycc.width // 2), max(1, ycc.height // 2))
    cb, cr = (c.resize(half, Image.Resampling.BOX).resize(ycc.size, Image.Resampling.BILINEAR)
              for c in (cb, cr))
    return np.asarray(Image.merge("YCbCr", (y, cb, cr)).convert("RGB"), np.int16)


#: The footprint test runs on the pixels the neighbourhood test flags, when there are few: many
#: flagged pixels mean a re-render whatever the footprint says.
FOOTPRINT_MAX_SHARE = 0.1


def _footprint_clears(flagged: np.ndarray, reproduced: np.ndarray, published: np.ndarray,
                      step: tuple[float, float], origin: tuple[float, float], fill: np.ndarray
                      ) -> np.ndarray:
    """Which flagged pixels lie within the range of the published pixels under their footprint
    (half a grid pixel around it, at the published figure's own resolution): any resampling filter,
    nearest-neighbour included, puts its output there, and JPEG ringing stays within
    REDRAWN_TOLERANCE of it."""
    ys, xs = np.nonzero(flagged)
    half_x = max(1, math.ceil(step[0] / 2))
    half_y = max(1, math.ceil(step[1] / 2))
    pad = max(half_x, half_y) + 2
    padded = np.pad(published, ((pad, pad), (pad, pad), (0, 0)), mode="constant")
    if fill.size:
        padded[:pad], padded[-pad:], padded[:, :pad], padded[:, -pad:] = fill, fill, fill, fill
    cx = np.floor(origin[0] + step[0] * (xs + 0.5)).astype(np.int64) + pad
    cy = np.floor(origin[1] + step[1] * (ys + 0.5)).astype(np.int64) + pad
    cx = np.clip(cx, half_x, padded.shape[1] - half_x - 1)
    cy = np.clip(cy, half_y, padded.shape[0] - half_y - 1)
    low = np.full((len(xs), published.shape[2]), 255, np.int16)
    high = np.zeros((len(xs), published.shape[2]), np.int16)
    for dy in range(-half_y, half_y + 1):
        for dx in range(-half_x, half_x + 1):
            values = padded[cy + dy, cx + dx]
            np.minimum(low, values, out=low)
            np.maximum(high, values, out=high)
    values = reproduced[ys, xs]
    inside = ~((values < low - REDRAWN_TOLERANCE) | (values > high + REDRAWN_TOLERANCE)).any(axis=-1)
    cleared = np.zeros_like(flagged)
    cleared[ys[inside], xs[inside]] = True
    return cleared


def _gray_like(published: Image.Image, reproduced_gray: np.ndarray, step: tuple[float, float],
               origin: tuple[float, float], grid: tuple[int, int]) -> Image.Image:
    """The published colour figure in gray, with the channel weights (and offset) that best
    explain the gray reproduction (least squares on every 7th aligned pixel), when they are
    weights a gray conversion can have (non-negative, summing to about 1)."""
    sampled = np.asarray(resample(published, step, origin, grid,
                                  fill=published.getpixel((0, 0))), np.float32)
    rgb = sampled.reshape(-1, 3)[::7]
    design = np.c_[rgb, np.ones(len(rgb), np.float32)]
    weights, *_ = np.linalg.lstsq(design, reproduced_gray.reshape(-1)[::7].astype(np.float32),
                                  rcond=None)
    if weights[:3].min() < -0.05 or not 0.75 <= weights[:3].sum() <= 1.25 or \
            abs(weights[3]) > 32:
        # No gray conversion does that (it would be fitting a figure it is not): Pillow's luma.
        return published.convert("L")
    gray = np.asarray(published, np.float32) @ weights[:3] + weights[3]
    return Image.fromarray(np.clip(gray.round(), 0, 255).astype(np.uint8))


_LUMA = np.array([0.299, 0.587, 0.114], np.float32)


def _redrawn(published: Image.Image, reproduced: Image.Image, alignment: Alignment,
             box: tuple[int, int, int, int], grid: tuple[int, int], *,
             gray: tuple[bool, bool], footprint: bool = True) -> tuple[float, float]:
    """(redrawn share, tone share) of the reproduction's `box` resampled at `grid`; `gray`:
    whether each figure is gray (they are compared in gray when either is)."""
    step, origin = alignment.grid_map(box, grid)
    rep = reproduced.resize(grid, Image.Resampling.BOX, box=box)
    if any(gray):
        b = np.asarray(rep.convert("L"), np.int16)
        pub = (published.convert("L") if gray[0]
               else _gray_like(published, b, step, origin, grid))
        b = b[..., None]
    else:
        b = np.asarray(rep, np.int16)
        pub = published
    fill = pub.getpixel((0, 0))
    a = np.atleast_3d(np.asarray(resample(pub, step, origin, grid, fill=fill), np.int16))
    # What the published figure can become: resampled with a smooth filter, its chroma
    # subsampled (JPEG), or point-sampled when shrunk (nearest-neighbour: thin lines kept whole
    # or dropped, not faded).
    versions = [a] if any(gray) else [a, _chroma_subsampled(a)]
    if min(step) >= 1.5:
        versions.append(np.atleast_3d(np.asarray(resample(
            pub, step, origin, grid, fill=fill, method=Image.Resampling.NEAREST), np.int16)))
    low, high = _ranges(versions)
    forward = _outside(b, low, high, REDRAWN_TOLERANCE)
    if footprint and 0 < forward.mean() <= FOOTPRINT_MAX_SHARE:
        native = np.atleast_3d(np.asarray(pub))
        forward &= ~_footprint_clears(forward, b, native, step, origin,
                                      np.atleast_1d(np.asarray(fill, np.uint8)))
    rep_low, rep_high = _ranges([b])
    converse = np.logical_and.reduce([_outside(v, rep_low, rep_high, REDRAWN_TOLERANCE)
                                      for v in versions])
    opened = ndimage.binary_opening(forward | converse, structure=np.ones((2, 2), bool))
    luma_a = a[..., 0] if any(gray) else a @ _LUMA
    luma_b = b[..., 0] if any(gray) else b @ _LUMA
    smooth = np.abs(ndimage.gaussian_filter(np.asarray(luma_a, np.float32), TONE_BLUR)
                    - ndimage.gaussian_filter(np.asarray(luma_b, np.float32), TONE_BLUR))
    return float(opened.mean()), float((smooth > TONE_LEVELS).mean())


def _ink_correlation(published: Image.Image, reproduced: Image.Image, alignment: Alignment,
                     box: tuple[int, int, int, int], grid: tuple[int, int], background: float
                     ) -> float:
    """Correlation of the two gray figures' marks (ink, lightly blurred) once aligned: near 1
    for a copy whatever was done to it, lower for a figure whose thin marks alone differ (what
    the 2x2 opening of the redrawn pixels cannot see)."""
    step, origin = alignment.grid_map(box, grid)
    a = _ink(_gray(resample(published, step, origin, grid, fill=published.getpixel((0, 0)))),
             background)
    b = _ink(_gray(reproduced.resize(grid, Image.Resampling.BOX, box=box)), background)
    a, b = ndimage.gaussian_filter(a, 1.0), ndimage.gaussian_filter(b, 1.0)
    a, b = a - a.mean(), b - b.mean()
    norm = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum()) / norm if norm > 0 else 0.0


def _native_scale(alignment: Alignment, pub_factor: int, rep_factor: int
                  ) -> tuple[float, float]:
    """The alignment's scale in the figures' own pixels (before the work-size reductions)."""
    return (alignment.scale[0] * pub_factor / rep_factor,
            alignment.scale[1] * pub_factor / rep_factor)


def check_copy(published: Image.Image, reproduced: Image.Image, *, same_bytes: bool = False,
               explain: bool = True) -> CopyCheck:
    """Whether `reproduced` is a copy of `published` (see the module docstring for what a copy
    is and how it is told from a re-render). `explain=False`: a pair whose marks correlate too
    little for a copy is answered without measuring its redrawn share at ALIGN_SIZE, which only
    its `how` would show (a caller that shows `how` of copies alone, like the pixel signals,
    saves that comparison on most re-renders); the verdict is the same."""
    if same_bytes:
        return CopyCheck(copy=True, identical=True, redrawn_share=0.0, scale=(1.0, 1.0),
                         how="byte-identical files")
    pub_full, rep_full = published.convert("RGB"), reproduced.convert("RGB")
    full_boxes = (peel_borders(pub_full), peel_borders(rep_full))
    if _same_pixels(pub_full, rep_full, full_boxes):
        return CopyCheck(copy=True, identical=True, redrawn_share=0.0, scale=(1.0, 1.0),
                         how="pixel-identical once uniform borders are trimmed")
    near = near_identical(pub_full, rep_full, full_boxes)
    if near is not None:
        return CopyCheck(copy=False, identical=False, near_identical=True, scale=(1.0, 1.0),
                         how=f"pixel-identical but for {near[0]} pixels in {near[1]} small "
                             f"cluster(s) (text placed a pixel otherwise, or edited)")
    pub, pub_factor = _work_size(pub_full)
    rep, rep_factor = _work_size(rep_full)
    gray = (_is_gray(pub), _is_gray(rep))
    boxes = (full_boxes[0] if pub_factor == 1 else peel_borders(pub),
             full_boxes[1] if rep_factor == 1 else peel_borders(rep))
    if min(b[2] - b[0] for b in boxes) < MIN_CONTENT or \
            min(b[3] - b[1] for b in boxes) < MIN_CONTENT:
        return CopyCheck(copy=False, identical=False, how="too little content to compare")
    pub_gray, rep_gray = pub.convert("L"), rep.convert("L")
    # One background level for both: a copy's is the published one's (whose largest flat area,
    # bars say, can outnumber a re-encoded background's split gray levels).
    level = figure_background(pub_gray)
    backgrounds = (level, level)
    found = align(pub_gray, rep_gray, native=rep_factor / pub_factor, boxes=boxes,
                  fill=pub_gray.getpixel((0, 0)), backgrounds=backgrounds,
                  min_score=SEARCH_MIN_CORRELATION)
    if found is None:
        return CopyCheck(copy=False, identical=False, how="sizes no copy can have")
    alignment, score = found
    if score < SEARCH_MIN_CORRELATION:
        return CopyCheck(copy=False, identical=False, correlation=score,
                         scale=_native_scale(alignment, pub_factor, rep_factor),
                         how=f"no alignment found: the marks correlate {score:.2f} at best")
    rbox = boxes[1]
    width, height = rbox[2] - rbox[0], rbox[3] - rbox[1]
    k = min(1.0, ALIGN_SIZE / max(width, height))
    coarse_grid = (max(16, round(width * k)), max(16, round(height * k)))
    correlation = _ink_correlation(pub_gray, rep_gray, alignment, rbox, coarse_grid, level)
    scale = _native_scale(alignment, pub_factor, rep_factor)
    if correlation < COPY_MIN_CORRELATION and not explain:
        return CopyCheck(copy=False, identical=False, scale=scale, correlation=correlation,
                         how=f"the marks correlate {correlation:.2f} at {ALIGN_SIZE} px")
    coarse, _ = _redrawn(pub, rep, alignment, rbox, coarse_grid, gray=gray, footprint=False)
    if coarse > COARSE_MAX_REDRAWN_SHARE or correlation < COPY_MIN_CORRELATION:
        return CopyCheck(copy=False, identical=False, scale=scale, correlation=correlation,
                         how=f"{coarse:.1%} of the pixels redrawn at {ALIGN_SIZE} px, the marks "
                             f"correlate {correlation:.2f}")
    # The comparison grid: the reproduction's box, no finer than either figure, at most
    # COMPARE_MAX_SIDE; a pair plainly redrawn at half that size is not compared again.
    k = min(1.0, COMPARE_MAX_SIDE / max(width, height), max(alignment.scale))
    grid = (max(16, round(width * k)), max(16, round(height * k)))
    if grid != coarse_grid:
        reference = _gray(rep_gray.resize(grid, Image.Resampling.BOX, box=rbox))
        alignment = _refine(alignment, pub_gray, reference, rbox,
                            tile=(min(128, grid[0] // 2), min(128, grid[1] // 2)),
                            fill=pub_gray.getpixel((0, 0)), backgrounds=backgrounds,
                            iterations=2)
    middle = (max(16, grid[0] // 2), max(16, grid[1] // 2))
    if min(grid) >= 2 * min(coarse_grid) and middle != coarse_grid:
        redrawn, tone = _redrawn(pub, rep, alignment, rbox, middle, gray=gray)
        if redrawn > MIDDLE_MAX_REDRAWN_SHARE:
            return CopyCheck(copy=False, identical=False, redrawn_share=redrawn,
                             tone_share=tone, correlation=correlation,
                             scale=_native_scale(alignment, pub_factor, rep_factor),
                             how=f"{redrawn:.1e} of its pixels redrawn at half resolution")
    redrawn, tone = _redrawn(pub, rep, alignment, rbox, grid, gray=gray)
    copy = redrawn <= COPY_MAX_REDRAWN_SHARE and tone <= COPY_MAX_TONE_SHARE
    scale = _native_scale(alignment, pub_factor, rep_factor)
    how = (f"{redrawn:.1e} of its pixels redrawn and {tone:.1e} shaded otherwise once aligned "
           f"(scale {1 / scale[0]:.3f} x {1 / scale[1]:.3f}{', gray' if any(gray) else ''})")
    return CopyCheck(copy=copy, identical=False, redrawn_share=redrawn, tone_share=tone,
                     correlation=correlation, scale=scale, how=how)
