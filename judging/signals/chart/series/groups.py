"""The plot background, and the plot's ink split into groups: chromatic pixels by colour (a pixel
joins the colour whose blend with the background explains it), achromatic ones by grey level.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from judging.signals.chart.colour import (
    CHANNEL_MAX,
    blend,
    common_colour,
    same_hue,
)

MAX_COLOURS = 30
"""The most colours sought in a plot area (more than any palette a reader can tell apart)."""
SEED_STEP, SEED_LEVELS = 24, 11
"""A colour's seed is the commonest cell of the pixels quantised in steps of 24 levels (11
cells a channel)."""
MIN_SEED_PIXELS, SEED_SHARE = 5, 4
"""A seed needs 5 pixels and a quarter of a group's least pixels, and a colour's core 5."""
MEMBER_RESIDUAL, MEMBER_ALPHA = 18, 0.3
"""Pixels within 18 levels of a blend of the seed with the background, at least 30% of it,
belong to its colour."""
CORE_ALPHA = 0.7
"""The colour itself is the mean of its members at least 70% opaque (edges are blends)."""
SAME_COLOUR = 28
"""Colours within 28 levels (largest channel) are one."""
BLEND_RESIDUAL, BLEND_ALPHA = 15, 0.9
"""A colour within 15 levels of a blend of another with the background, under 90% of it, is
that colour's paler edge."""
PIXEL_RESIDUAL, PIXEL_ALPHA = 45, 0.15
"""A pixel joins the colour whose blend explains it within 45 levels, at least 15% of it."""
NEIGHBOURHOOD = 3
"""A grey pixel takes the darkest value of its 3x3 neighbourhood: a black line's fringe stays
black."""
GREY_STEP, GREY_BINS = 8, 32
"""Grey levels counted in 32 bins of 8 levels."""
SMOOTHING = (1, 2, 1)
"""The histogram smoothed over neighbouring bins."""
PEAK_SHARE = 3
"""A grey level is a group's when its smoothed bin holds a third of a group's least pixels."""
GREY_SEPARATION = 20
"""Grey groups closer than 20 levels are one."""
MID_GREY = 127
"""A background lighter than this has darker lines (the sign of a grey's contrast)."""


def plot_background(rgb: np.ndarray) -> np.ndarray:
    """The plot area's background colour: the commonest colour of its margins (a band under the
    top edge and one inside each side), where plotting libraries leave room around the data.
    The commonest colour of the whole area would be the bars' when wide bars cover most of it."""
    h, w = rgb.shape[:2]
    top = rgb[max(1, h // 100):max(2, h // 20), ::2]
    sides = [rgb[: int(h * 0.9):2, max(1, w // 100):max(2, w // 30)],
             rgb[: int(h * 0.9):2, w - max(2, w // 30):w - max(1, w // 100)]]
    ring = np.concatenate([part.reshape(-1, 3) for part in (top, *sides)])
    if len(ring) < 50:  # a tiny plot: every third pixel of it
        ring = rgb[::3, ::3].reshape(-1, 3)
    return common_colour(ring.astype(np.int32), step=4)[0]


def colour_groups(rgb: np.ndarray, chroma: np.ndarray, chromatic: np.ndarray,
                   bg: np.ndarray, min_px: int) -> list[tuple[np.ndarray, np.ndarray]]:
    ys, xs = np.nonzero(chromatic)
    if ys.size < min_px:
        return []
    pix = rgb[ys, xs].astype(np.float32)
    remaining = np.ones(len(pix), bool)
    colours = []
    for _ in range(MAX_COLOURS):
        idx = np.nonzero(remaining)[0]
        if idx.size < min_px:
            break
        q = (pix[idx] // SEED_STEP).astype(np.int32)
        keys = q[:, 0] * (SEED_LEVELS * SEED_LEVELS) + q[:, 1] * SEED_LEVELS + q[:, 2]
        counts = np.bincount(keys)
        top = counts.argmax()
        if counts[top] < max(MIN_SEED_PIXELS, min_px // SEED_SHARE):
            break
        seed = pix[idx[keys == top]].mean(axis=0)
        res, alpha = blend(pix[idx], bg, seed)
        members = (res < MEMBER_RESIDUAL) & (alpha > MEMBER_ALPHA)
        if members.sum() < min_px:
            remaining[idx[keys == top]] = False
            continue
        core = members & (alpha > CORE_ALPHA)
        colour = pix[idx[core]].mean(axis=0) if core.sum() >= MIN_SEED_PIXELS else \
            pix[idx[members]].mean(axis=0)
        remaining[idx[members]] = False
        colours.append(colour)
    if not colours:
        return []
    # Merge near-duplicates and paler blends of another colour (whichever was found first):
    # the most saturated colours first, a colour explained as a blend of a kept one is dropped.
    colours.sort(key=lambda c: -float(np.abs(c - bg).max()))
    merged: list[np.ndarray] = []
    for c in colours:
        if any(np.abs(c - m).max() <= SAME_COLOUR for m in merged):
            continue
        if any(blend(c[None, :], bg, m)[0][0] < BLEND_RESIDUAL
               and blend(c[None, :], bg, m)[1][0] < BLEND_ALPHA
               for m in merged) or any(same_hue(c, m, bg) for m in merged):
            continue
        merged.append(c)
    res = np.empty((len(merged), len(pix)), np.float32)
    alp = np.empty_like(res)
    for k, c in enumerate(merged):
        res[k], alp[k] = blend(pix, bg, c)
    best = res.argmin(axis=0)
    ok = (res[best, np.arange(len(pix))] < PIXEL_RESIDUAL) & \
        (alp[best, np.arange(len(pix))] > PIXEL_ALPHA)
    groups = []
    for k, c in enumerate(merged):
        sel = ok & (best == k)
        if sel.sum() < min_px:
            continue
        mask = np.zeros(chromatic.shape, bool)
        mask[ys[sel], xs[sel]] = True
        groups.append((c, mask))
    return groups


def gray_groups(strength: np.ndarray, achromatic: np.ndarray, bg: np.ndarray,
                 min_px: int) -> list[tuple[np.ndarray, np.ndarray]]:
    if achromatic.sum() < min_px:
        return []
    local = ndimage.maximum_filter(np.where(achromatic, strength, 0), size=NEIGHBOURHOOD)
    vals = local[achromatic]
    last = GREY_BINS - 1
    hist = np.bincount(np.clip(vals // GREY_STEP, 0, last).astype(int),
                       minlength=GREY_BINS).astype(float)
    smooth = np.convolve(hist, SMOOTHING, mode="same") / sum(SMOOTHING)
    peaks = [i for i in range(GREY_BINS) if smooth[i] >= min_px / PEAK_SHARE
             and smooth[i] >= smooth[max(0, i - 1)] and smooth[i] >= smooth[min(last, i + 1)]]
    centres: list[float] = []
    for p in sorted(peaks, key=lambda i: -smooth[i]):
        v = p * GREY_STEP + GREY_STEP // 2
        if all(abs(v - c) > GREY_SEPARATION for c in centres):
            centres.append(v)
    if not centres:
        return []
    centres.sort()
    cs = np.array(centres)
    assign = np.abs(vals[:, None] - cs[None, :]).argmin(axis=1)
    ys, xs = np.nonzero(achromatic)
    sign = -1 if float(bg.mean()) > MID_GREY else 1
    groups = []
    for k, c in enumerate(centres):
        sel = assign == k
        if sel.sum() < min_px:
            continue
        mask = np.zeros(achromatic.shape, bool)
        mask[ys[sel], xs[sel]] = True
        level = float(np.clip(bg.mean() + sign * c, 0, CHANNEL_MAX))
        groups.append((np.array([level] * 3), mask))
    return groups
