"""Tick labels rendered with ClearType (issue 27, realfig-dev2's Excel charts falx-008 and
falx-034): Windows draws a glyph's edges as coloured fringes, one colour per subpixel, and a
filter that keeps grey text only broke such labels into specks ("80%" read as ".").

The labels are drawn here with matplotlib at three times the resolution and folded into
subpixels (each pixel's red, green and blue from three neighbouring columns), as ClearType
does; the plot area keeps plain rendering (ClearType is for text)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402

SCORES = [0.52, 0.57, 0.60, 0.63, 0.63]


def cleartype_chart(*, points: float, dpi: int = 100) -> Image.Image:
    """Excel's look: grey percentage tick labels, no tick marks, grey gridlines; the labels
    left of the plot area rendered in subpixels."""
    fig, ax = plt.subplots(figsize=(4.8, 3.6), dpi=3 * dpi)
    ax.plot(np.arange(1, 6), SCORES, color="black", marker="o", linewidth=2)
    ax.set_ylim(0, 0.8)
    ax.set_yticks(np.arange(0, 0.81, 0.1), [f"{v}%" for v in range(0, 81, 10)])
    ax.tick_params(labelsize=points, colors="#595959", length=0)
    ax.grid(axis="y", color="#d9d9d9")
    fine, plain = io.BytesIO(), io.BytesIO()
    fig.savefig(fine, format="png")
    fig.savefig(plain, format="png", dpi=dpi)
    left = int(ax.get_window_extent().x0 / 3) - 3
    plt.close(fig)
    gray = np.asarray(Image.open(fine).convert("L"), float)
    h, w = gray.shape[0] // 3 * 3, gray.shape[1] // 3 * 3
    rows = gray[:h, :w].reshape(h // 3, 3, w).mean(axis=1)
    subpixels = rows.reshape(h // 3, w // 3, 3)  # red, green, blue from three columns
    out = np.asarray(Image.open(plain).convert("RGB")).copy()
    hh = min(out.shape[0], subpixels.shape[0])
    out[:hh, :left] = subpixels[:hh, :left].astype(np.uint8)
    return Image.fromarray(out, "RGB")


def test_the_drawing_has_coloured_fringes():
    pixels = np.asarray(cleartype_chart(points=7)).astype(int)
    chroma = pixels.max(axis=2) - pixels.min(axis=2)
    assert (chroma > 150).sum() > 50  # else this file tests grey text


@pytest.mark.parametrize("points", [6, 7, 8])
def test_cleartype_tick_labels_are_read(points):
    reading = read_chart(cleartype_chart(points=points))
    assert reading.readable, reading.reason
    y = reading.panels[0].y
    assert y is not None, reading.panels[0].problems
    lo, hi = y.data_range
    assert abs(lo) < 0.02 and abs(hi - 0.8) < 0.02, (y.data_range, [t.text for t in y.ticks])
