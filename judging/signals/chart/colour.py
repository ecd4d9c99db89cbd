"""Colour arithmetic of the chart reader, in one place: lightness (the luma weights are spelled
only here), channel distances, the commonest colour of a set of pixels, blends with a
background, hues."""

from __future__ import annotations

import numpy as np

LUMA_WEIGHTS = (0.299, 0.587, 0.114)
"""ITU-R BT.601 weights: the ones Pillow's `convert("L")` uses, so that `luma` of a colour and
`Page.lum` (made with Pillow) agree."""

BLEND_LUMA_SLACK = 20.0
"""How far (luma levels) a paler colour may lie from the best blend of the darker one with a
grey: a JPEG's or an anti-aliasing's error on a pixel's lightness. Okabe-Ito's sky blue lies 42
levels above any blend of its blue."""

SAME_HUE_DEGREES = 8
"""Hue gap (degrees) within which a paler colour can be a blend of a darker one: anti-aliasing
and JPEG shift a stroke's hue by a few degrees, a palette's neighbours differ by tens."""

PALER_CHROMA = 0.85
"""A blend of a colour with a grey keeps at most this share of its chroma to count as paler:
the same colour re-rendered keeps nearly all of it."""

NO_COLOUR = 1
"""Squared distance (levels²) below which a colour is the background itself: no blend weight."""

FAR = 1e9
"""The residual of a pixel that no blend explains (the colour is the background)."""

CHANNEL_MAX = 255
"""The largest value of an 8-bit channel."""
#: Channels of an RGB pixel (the last axis of `Page.rgb`).
RGB_CHANNELS = 3

HUE_SECTOR = 60.0
"""Degrees of one of the six sectors of the HSV hue circle."""

FULL_CIRCLE = 360
"""Degrees round the hue circle."""

GREEN_SECTOR, BLUE_SECTOR = 2, 4
"""Where the green and the blue thirds of the hue circle start, in sectors."""

INT16_EXACT = 4096
"""Integer colours below this fit int16 arithmetic on an 8-bit image with room to spare."""


def luma(colour) -> float:
    """A colour's lightness (the BT.601 weights of `LUMA_WEIGHTS`)."""
    return float(np.asarray(colour, dtype=np.float64) @ np.array(LUMA_WEIGHTS))


def luma_of(pixels: np.ndarray, dtype=np.float64) -> np.ndarray:
    """The lightness of every pixel of an (..., 3) array, in `dtype` (float32 keeps a large
    array small)."""
    return pixels @ np.array(LUMA_WEIGHTS, dtype)


def maxabs(rgb: np.ndarray, colour) -> np.ndarray:
    """Largest channel difference of every pixel from `colour` (fast on (H, W, 3) arrays)."""
    c = np.asarray(colour, dtype=np.float32)
    if rgb.dtype == np.int16 and np.all(c == np.round(c)) and np.all(np.abs(c) < INT16_EXACT):
        # Integer colour on an int16 image: the same values, without the float copies.
        ci = c.astype(np.int16)
        d = np.abs(rgb[..., 0] - ci[0])
        np.maximum(d, np.abs(rgb[..., 1] - ci[1]), out=d)
        np.maximum(d, np.abs(rgb[..., 2] - ci[2]), out=d)
        return d
    d = np.abs(rgb[..., 0] - c[0])
    np.maximum(d, np.abs(rgb[..., 1] - c[1]), out=d)
    np.maximum(d, np.abs(rgb[..., 2] - c[2]), out=d)
    return d


def _level_distances(dtype: np.dtype, colour, *, precise: bool) -> np.ndarray:
    """(3, 256): the distance from each channel of `colour` of every 8-bit level held in
    `dtype`, by the arithmetic of `maxabs` on such pixels, or (precise) of
    `np.abs(rgb - colour)` in the colour's own precision."""
    levels = np.arange(CHANNEL_MAX + 1).astype(dtype)
    if precise:
        colour = np.asarray(colour)
        return np.stack([np.abs(levels - colour[k]) for k in range(RGB_CHANNELS)])
    c = np.asarray(colour, dtype=np.float32)
    if levels.dtype == np.int16 and np.all(c == np.round(c)) and np.all(np.abs(c) < INT16_EXACT):
        ci = c.astype(np.int16)
        return np.stack([np.abs(levels - ci[k]) for k in range(RGB_CHANNELS)])
    return np.stack([np.abs(levels - c[k]) for k in range(RGB_CHANNELS)])


def beyond(rgb: np.ndarray, colour, threshold: float, *, precise: bool = False) -> np.ndarray:
    """`maxabs(rgb, colour) > threshold` (with `precise`: `np.abs(rgb - colour).max(axis=2) >
    threshold`, in the colour's precision), the same booleans, for the pixels of an 8-bit image
    (levels 0-255 in any dtype: `Page.rgb` and its slices). The distance grows away from the
    colour, so each channel's levels within the threshold are a range, found by the same
    arithmetic on the 256 levels: two comparisons a channel instead of the distance arrays
    (float64 ones for a precise colour: a tenth of a chart reading on the scale benchmark)."""
    far = _level_distances(rgb.dtype, colour, precise=precise) > threshold
    out = np.zeros(rgb.shape[:-1], bool)
    for k in range(RGB_CHANNELS):
        near = np.flatnonzero(~far[k])
        channel = rgb[..., k]
        if near.size == 0:
            out[...] = True
            return out
        low, high = int(near[0]), int(near[-1])
        if near.size != high - low + 1:  # not a range (it always is): the table, pixel by pixel
            out |= far[k][channel.astype(np.intp)]
            continue
        if low > 0:
            out |= channel < low
        if high < CHANNEL_MAX:
            out |= channel > high
    return out


def common_colour(pix: np.ndarray, *, step: int) -> tuple[np.ndarray, int]:
    """The commonest colour of (N, 3) integer pixels, quantised in steps of `step` levels: the
    mean of its pixels, and how many they are."""
    levels = (CHANNEL_MAX + 1) // step
    keys = (pix[:, 0] // step) * levels * levels + (pix[:, 1] // step) * levels + pix[:, 2] // step
    counts = np.bincount(keys)
    top = int(np.argmax(counts))
    return pix[keys == top].mean(axis=0), int(counts[top])


def blend(pix: np.ndarray, bg: np.ndarray, colour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Residual and mixing weight of pixels explained as alpha * colour + (1 - alpha) * bg."""
    d = colour - bg
    norm = float(d @ d)
    if norm < NO_COLOUR:
        return np.full(len(pix), FAR), np.zeros(len(pix))
    rel = pix - bg
    alpha = np.clip(rel @ d / norm, 0, 1)
    res = np.sqrt(((rel - alpha[:, None] * d) ** 2).sum(axis=1))
    return res, alpha


def hue(c: np.ndarray) -> tuple[float, float]:
    """HSV hue in degrees and chroma: blending with any grey keeps the hue."""
    r, g, b = (float(v) for v in c)
    mx, mn = max(r, g, b), min(r, g, b)
    d = mx - mn
    if d < 1:
        return 0.0, 0.0
    sectors = FULL_CIRCLE / HUE_SECTOR
    if mx == r:
        h = ((g - b) / d) % sectors
    elif mx == g:
        h = (b - r) / d + GREEN_SECTOR
    else:
        h = (r - g) / d + BLUE_SECTOR
    return HUE_SECTOR * h, d


def hue_gap(a, b) -> float:
    """Degrees between two colours' hues, either way round the circle."""
    gap = abs(hue(np.asarray(a, float))[0] - hue(np.asarray(b, float))[0]) % FULL_CIRCLE
    return min(gap, FULL_CIRCLE - gap)


def same_hue(c: np.ndarray, m: np.ndarray, bg: np.ndarray) -> bool:
    """`c` is a paler blend of `m` with a grey (a white gridline, the background)? Blending
    `m` with a grey at weight a scales its chroma by a and mixes its lightness with the grey's:
    the grey that explains `c` must be one (a palette's sky blue is as pale as a blend of its
    blue with a grey brighter than white: a colour of its own)."""
    dc, dm = hue(c)[1], hue(m)[1]
    if not (hue_gap(c, m) <= SAME_HUE_DEGREES and dc < PALER_CHROMA * dm
            and float(np.abs(c - bg).max()) < float(np.abs(m - bg).max())):
        return False
    weight = dc / dm
    grey = float(np.clip((luma(c) - weight * luma(m)) / (1.0 - weight), 0.0, float(CHANNEL_MAX)))
    return abs(luma(c) - (weight * luma(m) + (1.0 - weight) * grey)) <= BLEND_LUMA_SLACK


def rgb_tuple(colour: np.ndarray) -> tuple[int, int, int]:
    """A colour as three 8-bit integers."""
    c = np.clip(np.round(colour), 0, CHANNEL_MAX).astype(int)
    return int(c[0]), int(c[1]), int(c[2])
