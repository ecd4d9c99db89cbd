"""A confidence ribbon on a plot without a frame or a tinted background (issue 27,
realfig-dev2's falx-008__faithful2: ggplot2's theme_minimal with geom_ribbon): the reader took
the ribbon's pale fill for a tinted plot background, read a plot area the ribbon's height, and
found its tick labels "running the wrong way". A plot background is a rectangle; a ribbon's
edges slope. The real plot area, found from the grid, is read instead."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

YEARS = np.arange(1, 6)
SCORES = np.array([0.52, 0.57, 0.60, 0.63, 0.63])
LOW = np.array([0.39, 0.44, 0.47, 0.50, 0.51])
HIGH = np.array([0.66, 0.70, 0.73, 0.75, 0.75])


def minimal_ribbon() -> Image.Image:
    """theme_minimal's look: white page, light grid, no frame, the ribbon a pale red."""
    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    ax.fill_between(YEARS, LOW, HIGH, color="#fde0dd", linewidth=0)
    ax.plot(YEARS, SCORES, color="#f8766d", marker="o", markersize=4, linewidth=2)
    ax.set_ylim(-0.02, 0.82)
    ax.set_xticks(YEARS, [f"Y{k}" for k in YEARS])
    ax.grid(color="#ebebeb")
    ax.tick_params(length=0, colors="#4d4d4d")
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title("Reading scores", loc="left")
    return figure_image(fig)


def test_a_ribbon_is_no_tinted_plot_background():
    reading = read_chart(minimal_ribbon())
    assert reading.readable, reading.reason
    assert len(reading.panels) == 1
    panel = reading.panels[0]
    assert panel.y is not None, panel.problems
    lo, hi = panel.y.data_range
    assert lo < 0.05 and hi > 0.75, panel.y.data_range  # the whole axis, not the ribbon's
    line = max(panel.series, key=lambda s: len(s.points))
    assert abs(float(np.median(line.points[:, 1])) - float(np.median(SCORES))) < 0.05
