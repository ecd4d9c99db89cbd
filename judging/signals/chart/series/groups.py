"""The plot background, and the plot's ink split into groups: chromatic pixels by colour (a pixel
joins the colour whose blend with the background explains it), achromatic ones by grey level.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from judging.signals.chart.colour import (
    blend,
    common_colour,
    same_hue,
)


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
    for _ in range(30):
        idx = np.nonzero(remaining)[0]
        if idx.size < min_px:
            break
        q = (pix[idx] // 24).astype(np.int32)
        keys = q[:, 0] * 121 + q[:, 1] * 11 + q[:, 2]
        counts = np.bincount(keys)
        top = counts.argmax()
        if counts[top] < max(5, min_px // 4):
            break
        seed = pix[idx[keys == top]].mean(axis=0)
        res, alpha = blend(pix[idx], bg, seed)
        members = (res < 18) & (alpha > 0.3)
        if members.sum() < min_px:
            remaining[idx[keys == top]] = False
            continue
        core = members & (alpha > 0.7)
        colour = pix[idx[core]].mean(axis=0) if core.sum() >= 5 else pix[idx[members]].mean(axis=0)
        remaining[idx[members]] = False
        colours.append(colour)
    if not colours:
        return []
    # Merge near-duplicates and paler blends of another colour (whichever was found first):
    # the most saturated colours first, a colour explained as a blend of a kept one is dropped.
    colours.sort(key=lambda c: -float(np.abs(c - bg).max()))
    merged: list[np.ndarray] = []
    for c in colours:
        if any(np.abs(c - m).max() <= 28 for m in merged):
            continue
        if any(blend(c[None, :], bg, m)[0][0] < 15 and blend(c[None, :], bg, m)[1][0] < 0.9
               for m in merged) or any(same_hue(c, m, bg) for m in merged):
            continue
        merged.append(c)
    res = np.empty((len(merged), len(pix)), np.float32)
    alp = np.empty_like(res)
    for k, c in enumerate(merged):
        res[k], alp[k] = blend(pix, bg, c)
    best = res.argmin(axis=0)
    ok = (res[best, np.arange(len(pix))] < 45) & (alp[best, np.arange(len(pix))] > 0.15)
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
    local = ndimage.maximum_filter(np.where(achromatic, strength, 0), size=3)
    vals = local[achromatic]
    hist = np.bincount(np.clip(vals // 8, 0, 31).astype(int), minlength=32).astype(float)
    smooth = np.convolve(hist, [1, 2, 1], mode="same") / 4
    peaks = [i for i in range(32) if smooth[i] >= min_px / 3
             and smooth[i] >= smooth[max(0, i - 1)] and smooth[i] >= smooth[min(31, i + 1)]]
    centres: list[float] = []
    for p in sorted(peaks, key=lambda i: -smooth[i]):
        v = p * 8 + 4
        if all(abs(v - c) > 20 for c in centres):
            centres.append(v)
    if not centres:
        return []
    centres.sort()
    cs = np.array(centres)
    assign = np.abs(vals[:, None] - cs[None, :]).argmin(axis=1)
    ys, xs = np.nonzero(achromatic)
    sign = -1 if float(bg.mean()) > 127 else 1
    groups = []
    for k, c in enumerate(centres):
        sel = assign == k
        if sel.sum() < min_px:
            continue
        mask = np.zeros(achromatic.shape, bool)
        mask[ys[sel], xs[sel]] = True
        level = float(np.clip(bg.mean() + sign * c, 0, 255))
        groups.append((np.array([level] * 3), mask))
    return groups
