"""Pixel signals for a (published, reproduced) figure pair: pure functions on PIL images/arrays,
each with its source (References) and a runnable example (tests/test_doctests.py runs them).

What each measure is for, on charts:
- `ssim`: grayscale structural similarity after a light blur (renderers' anti-aliasing is not
  structure). Sensitive to layout, weak on meaning (a restyled faithful figure can score below a
  re-render with a reversed curve).
- `edge_f1`: agreement of the two figures' strokes (edges) within a few pixels. Tolerant to line
  width, anti-aliasing and small shifts that SSIM punishes; drops when curves take other paths.
- `palette_distance`: how different the hues of the inked pixels are. Catches a missing or extra
  coloured series, which grayscale SSIM cannot see.
- `phash_distance`: perceptual-hash (DCT) distance: the coarse global shape, robust to resolution.
- `copy`: the reproduction is the published figure re-encoded, re-framed, resized or turned gray
  (`judging.signals.copies`), not a re-render.
"""

from __future__ import annotations

from dataclasses import dataclass

import imagehash
import numpy as np
from PIL import Image, ImageFilter
from scipy import ndimage
from skimage.filters import sobel
from skimage.metrics import structural_similarity

from judging.figures.formats import DEFAULT_SIZE
from judging.signals.copies import (
    BORDER_TOLERANCE,
    CopyCheck,
    check_copy,
    content_box,
    peel_borders,
)


def trim_border(image: Image.Image, *, tolerance: int = BORDER_TOLERANCE) -> Image.Image:
    """Crop away a uniform border (the colour of the top-left pixel); an all-border image is kept."""
    box = content_box(image, tolerance=tolerance)
    if box is None or box == (0, 0, *image.size):
        return image
    return image.crop(box)


def _fit(image: Image.Image, box: tuple[int, int]) -> Image.Image:
    """Resize to fit inside `box` keeping the aspect ratio, centred on a white canvas of that size."""
    width, height = image.size
    scale = min(box[0] / width, box[1] / height)
    new_size = (max(1, round(width * scale)), max(1, round(height * scale)))
    if new_size != image.size:
        # BOX is anti-aliased and the fastest good filter for the usual case, downscaling.
        method = Image.Resampling.BOX if scale < 1 else Image.Resampling.BICUBIC
        image = image.resize(new_size, method)
    if new_size == box:
        return image
    canvas = Image.new("RGB", box, (255, 255, 255))
    canvas.paste(image, ((box[0] - new_size[0]) // 2, (box[1] - new_size[1]) // 2))
    return canvas


def reduce_towards(image: Image.Image, size: int) -> Image.Image:
    """Integer box-reduce a large image to between 1.5x and 3x `size` (fast, anti-aliased), so that
    trimming and the final resize work on far fewer pixels."""
    factor = int(max(image.size) // (1.5 * size))
    return image.reduce(factor) if factor >= 2 else image


def normalize_pair(published: Image.Image, reproduced: Image.Image, *, size: int = DEFAULT_SIZE
                   ) -> tuple[Image.Image, Image.Image]:
    """Trim both figures' borders and bring them to one common size.

    The canvas takes the trimmed published figure's aspect ratio with `size` pixels on its long
    side; the reproduced figure is fitted inside it (aspect kept, white padding).
    """
    return _fit_pair(*_trimmed_pair(published, reproduced, size=size), size=size)


def _trimmed_pair(published: Image.Image, reproduced: Image.Image, *, size: int
                  ) -> tuple[Image.Image, Image.Image]:
    """Both figures reduced towards `size` and trimmed (the first step of `normalize_pair`)."""
    if size < 32:
        raise ValueError(f"size must be at least 32 pixels, got {size}")
    return (trim_border(reduce_towards(published.convert("RGB"), size)),
            trim_border(reduce_towards(reproduced.convert("RGB"), size)))


def _fit_pair(published: Image.Image, reproduced: Image.Image, *, size: int
              ) -> tuple[Image.Image, Image.Image]:
    """Trimmed figures brought to one common size (the second step of `normalize_pair`)."""
    width, height = published.size
    scale = size / max(width, height)
    box = (max(1, round(width * scale)), max(1, round(height * scale)))
    # Very thin figures would make SSIM's window larger than the image.
    box = (max(box[0], 32), max(box[1], 32))
    return _fit(published, box), _fit(reproduced, box)


def to_gray(image: Image.Image) -> np.ndarray:
    """Gray levels in [0, 1] as float32 (enough for 8-bit input, and twice as fast as float64)."""
    return np.asarray(image.convert("L"), dtype=np.float32) / np.float32(255.0)


#: Blur applied before SSIM: anti-aliasing and resampling differ between renderers and DPIs, and
#: unblurred SSIM reads them as structure (a DPI change scored like a shifted curve without it).
SSIM_BLUR_RADIUS = 1.5


def blurred_gray(image: Image.Image, *, radius: float = SSIM_BLUR_RADIUS) -> np.ndarray:
    """Gray levels in [0, 1] after a Gaussian blur: the input `ssim` expects for figure pairs."""
    gray = image.convert("L")
    if radius > 0:
        gray = gray.filter(ImageFilter.GaussianBlur(radius))
    return np.asarray(gray, dtype=np.float32) / np.float32(255.0)


def ssim(published: np.ndarray, reproduced: np.ndarray, *, full: bool = False
         ) -> float | tuple[float, np.ndarray]:
    """SSIM of two same-shape gray float images in [0, 1] (scikit-image), optionally its map.

    The structural similarity index compares local means, variances and the covariance of the
    two images in a sliding window and averages the per-window index [1]_ (scikit-image's
    ``structural_similarity``, 7x7 uniform window).

    References
    ----------
    .. [1] Wang, Z., Bovik, A. C., Sheikh, H. R., & Simoncelli, E. P. (2004). Image quality
       assessment: from error visibility to structural similarity. IEEE Transactions on Image
       Processing, 13(4), 600-612. :DOI:`10.1109/TIP.2003.819861`

    Examples
    --------
    >>> square = np.zeros((32, 32), np.float32)
    >>> square[8:24, 8:24] = 1.0
    >>> ssim(square, square)
    1.0
    >>> round(ssim(square, np.roll(square, 2, axis=1)), 3)
    0.652
    """
    if published.shape != reproduced.shape:
        raise ValueError(f"shapes differ: {published.shape} vs {reproduced.shape}; "
                         f"normalize_pair first")
    result = structural_similarity(published, reproduced, data_range=1.0, full=full)
    if full:
        score, ssim_map = result
        return float(score), ssim_map
    return float(result)


def edge_map(gray: np.ndarray, *, threshold: float = 0.1) -> np.ndarray:
    """Boolean map of strokes: Sobel gradient magnitude above `threshold` (gray in [0, 1])."""
    return sobel(gray) > threshold


def edge_f1(published_edges: np.ndarray, reproduced_edges: np.ndarray, *, radius: int = 3
            ) -> float | None:
    """F1 of edge pixels matched within `radius` pixels (a tolerant boundary F-measure).

    Precision: share of the reproduction's edges near a published edge; recall: the converse.
    None when neither image has any edge (nothing to compare). The boundary F-measure with a
    distance tolerance of [1]_, with a square tolerance window instead of a one-to-one matching.

    References
    ----------
    .. [1] Martin, D. R., Fowlkes, C. C., & Malik, J. (2004). Learning to detect natural image
       boundaries using local brightness, color, and texture cues. IEEE Transactions on Pattern
       Analysis and Machine Intelligence, 26(5), 530-549. :DOI:`10.1109/TPAMI.2004.1273918`

    Examples
    --------
    Two horizontal strokes two pixels apart match within the default radius, not within 1:

    >>> first = np.zeros((16, 16), bool)
    >>> first[4, 2:14] = True
    >>> second = np.roll(first, 2, axis=0)
    >>> edge_f1(first, second), edge_f1(first, second, radius=1)
    (1.0, 0.0)
    >>> edge_f1(first, np.zeros_like(first)), edge_f1(~first & False, ~first & False)
    (0.0, None)
    """
    if published_edges.shape != reproduced_edges.shape:
        raise ValueError("edge maps must have the same shape")
    n_published = int(published_edges.sum())
    n_reproduced = int(reproduced_edges.sum())
    if n_published == 0 and n_reproduced == 0:
        return None
    if n_published == 0 or n_reproduced == 0:
        return 0.0
    # A square dilation, done as a (separable, much faster) maximum filter.
    window = 2 * radius + 1
    near_published = ndimage.maximum_filter(published_edges.view(np.uint8), size=window) > 0
    near_reproduced = ndimage.maximum_filter(reproduced_edges.view(np.uint8), size=window) > 0
    precision = float((reproduced_edges & near_published).sum()) / n_reproduced
    recall = float((published_edges & near_reproduced).sum()) / n_published
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


HUE_BINS = 18
#: A pixel is "coloured ink" when its chroma (max - min channel) is high: series colours are, while
#: black/gray text, axes, grid lines and JPEG fringes around them are not.
MIN_CHROMA = 60


def hue_histogram(image: Image.Image, *, bins: int = HUE_BINS) -> tuple[np.ndarray, float]:
    """Normalised hue histogram of the coloured pixels, and the share of pixels that are coloured."""
    hsv = np.asarray(image.convert("HSV"))
    hue = hsv[..., 0]
    # chroma = max - min = saturation * value / 255 in Pillow's 8-bit HSV
    chroma = hsv[..., 1].astype(np.uint16) * hsv[..., 2] // 255
    coloured = chroma >= MIN_CHROMA
    share = float(coloured.mean())
    counts = np.bincount((hue[coloured].astype(np.int32) * bins) // 256, minlength=bins)
    total = counts.sum()
    return (counts / total if total else counts.astype(np.float64)), share


#: Below this share of coloured pixels an image counts as having no colour at all (anti-aliasing
#: fringes and a logo are not a palette).
MIN_COLOURED_SHARE = 0.0005


def palette_distance(published: Image.Image, reproduced: Image.Image, *, bins: int = HUE_BINS
                     ) -> float:
    """Total-variation distance in [0, 1] between the hue histograms of the coloured pixels.

    0 when both have the same mix of series colours (or both are colourless), 1 when they share
    no hue or only one of them is coloured. On normalised histograms this is one minus their
    histogram intersection [1]_.

    References
    ----------
    .. [1] Swain, M. J., & Ballard, D. H. (1991). Color indexing. International Journal of
       Computer Vision, 7(1), 11-32. :DOI:`10.1007/BF00130487`

    Examples
    --------
    >>> red, blue = Image.new("RGB", (8, 8), (255, 0, 0)), Image.new("RGB", (8, 8), (0, 0, 255))
    >>> white = Image.new("RGB", (8, 8), (255, 255, 255))
    >>> palette_distance(red, red), palette_distance(red, blue), palette_distance(white, red)
    (0.0, 1.0, 1.0)
    """
    hist_a, share_a = hue_histogram(published, bins=bins)
    hist_b, share_b = hue_histogram(reproduced, bins=bins)
    colourless_a, colourless_b = share_a < MIN_COLOURED_SHARE, share_b < MIN_COLOURED_SHARE
    if colourless_a and colourless_b:
        return 0.0
    if colourless_a or colourless_b:
        return 1.0
    return float(0.5 * np.abs(hist_a - hist_b).sum())


def phash_distance(published: Image.Image, reproduced: Image.Image, *, hash_size: int = 8
                   ) -> float:
    """Perceptual-hash Hamming distance as a share of the hash bits, in [0, 1] (imagehash).

    The hash keeps the signs of the lowest frequencies of the image's DCT against their median,
    so it survives resizing and re-encoding [1]_.

    References
    ----------
    .. [1] Zauner, C. (2010). Implementation and Benchmarking of Perceptual Image Hash Functions
       (Master's thesis). Upper Austria University of Applied Sciences, Hagenberg.

    Examples
    --------
    >>> from PIL import ImageDraw
    >>> square = Image.new("L", (64, 64), 0)
    >>> ImageDraw.Draw(square).rectangle([16, 16, 47, 47], fill=255)
    >>> float(phash_distance(square, square.resize((128, 128))))
    0.0
    >>> ellipse = Image.new("L", (64, 64), 0)
    >>> ImageDraw.Draw(ellipse).ellipse([4, 4, 30, 60], fill=255)
    >>> float(phash_distance(square, ellipse))
    0.5
    """
    hash_a = imagehash.phash(published, hash_size=hash_size)
    hash_b = imagehash.phash(reproduced, hash_size=hash_size)
    return (hash_a - hash_b) / float(hash_size * hash_size)


def mean_abs_difference(published: np.ndarray, reproduced: np.ndarray) -> float:
    """Mean absolute gray-level difference of two same-shape images in [0, 1].

    Examples
    --------
    >>> mean_abs_difference(np.zeros((2, 2)), np.array([[0.0, 1.0], [0.5, 0.5]]))
    0.5
    """
    return float(np.abs(published - reproduced).mean())


def diff_image(published: np.ndarray, reproduced: np.ndarray) -> Image.Image:
    """An overlay for reviewers: ink only in the published figure shows red, ink only in the
    reproduction shows cyan, ink in both shows dark. Inputs are same-shape gray images in [0, 1].
    """
    if published.shape != reproduced.shape:
        raise ValueError("images must have the same shape")
    red = (reproduced * 255).round().astype(np.uint8)
    cyan = (published * 255).round().astype(np.uint8)
    return Image.fromarray(np.dstack([red, cyan, cyan]), mode="RGB")


@dataclass(frozen=True)
class PixelSignals:
    """The pixel measures of one normalised pair."""

    ssim: float
    edge_f1: float | None
    palette_distance: float
    phash_distance: float
    mean_abs_diff: float
    copy: bool
    identical: bool = False
    """Pixel-identical up to a uniform border (see `judging.signals.copies.CopyCheck`)."""
    redrawn_share: float | None = None
    """Share of the aligned pixels redrawn (None when the copy check stopped earlier)."""


@dataclass(frozen=True)
class PairComparison:
    signals: PixelSignals
    published: Image.Image
    reproduced: Image.Image
    diff: Image.Image
    copy_check: CopyCheck
    trimmed_reproduced: Image.Image | None = None
    """The reproduced figure reduced towards the size and trimmed, before fitting (what the
    integrity fingerprint hashes: made once here)."""


#: A pair goes through the aligned copy check (signals/copies.py) when its normalised images are
#: this close: copies measured by benchmarks/copy_check.py (JPEG q40-95, borders, crops up to 5%,
#: 0.5x-2x resizes, gray) stay within 0.1 of perceptual-hash distance; realfig-dev's closest
#: faithful re-plot is at 0.094 and the rest at 0.125 or more, so only near-copies pay the cost.
COPY_GATE_PHASH = 0.125
COPY_GATE_SSIM = 0.9


def _peeled_phash(published: Image.Image, reproduced: Image.Image) -> float:
    """Perceptual-hash distance once uniform borders of any colour are peeled off both (a copy
    padded with a grey frame is not trimmed by `trim_border`, which takes the figure's own
    background only)."""
    a = published.crop(peel_borders(published))
    b = reproduced.crop(peel_borders(reproduced))
    return phash_distance(a, b)


def compare_figures(published: Image.Image, reproduced: Image.Image, *,
                    size: int = DEFAULT_SIZE, same_bytes: bool = False) -> PairComparison:
    """All pixel signals for one figure pair, plus the normalised images and the diff image."""
    trimmed = _trimmed_pair(published, reproduced, size=size)
    norm_published, norm_reproduced = _fit_pair(*trimmed, size=size)
    gray_published, gray_reproduced = to_gray(norm_published), to_gray(norm_reproduced)
    ssim_score = ssim(blurred_gray(norm_published), blurred_gray(norm_reproduced))
    mad = mean_abs_difference(gray_published, gray_reproduced)
    phash = phash_distance(norm_published, norm_reproduced)
    if same_bytes or phash <= COPY_GATE_PHASH or ssim_score >= COPY_GATE_SSIM or \
            _peeled_phash(norm_published, norm_reproduced) <= COPY_GATE_PHASH:
        # explain=False: the copy flag shows `how` of copies only (signals/measure.py).
        copy = check_copy(published, reproduced, same_bytes=same_bytes, explain=False)
    else:
        # The aligned copy check costs 0.2-0.3 s a pair; a pair this far apart at the normalised
        # size is no copy (re-encoded, padded, cropped or resized copies stay within the gate).
        copy = CopyCheck(copy=False, identical=False,
                         how=f"far from the published figure at {size} px (perceptual-hash "
                             f"distance {phash:.2f}, SSIM {ssim_score:.2f})")
    signals = PixelSignals(
        ssim=ssim_score,
        edge_f1=edge_f1(edge_map(gray_published), edge_map(gray_reproduced)),
        palette_distance=palette_distance(norm_published, norm_reproduced),
        phash_distance=phash,
        mean_abs_diff=mad,
        copy=copy.copy,
        identical=copy.identical,
        redrawn_share=copy.redrawn_share,
    )
    return PairComparison(signals=signals, published=norm_published, reproduced=norm_reproduced,
                          trimmed_reproduced=trimmed[1],
                          diff=diff_image(gray_published, gray_reproduced), copy_check=copy)
