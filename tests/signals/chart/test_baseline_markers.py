"""Markers lying along a plot's baseline are no bar chart (issue 27, realfig-dev2's
pulsed-PULS0250: a pulse train's step sizes fall from 2 to 0 and stay near 0, the markers at 0
half hidden under the frame). The bar readers took the zero stretches, markers standing on one
row, for bars a marker tall, so the re-plot's first panel read as four bars against the
published dots, and a faithful re-plot scored chart.match_score 0.0003. An axis is scaled to its
data: a bar chart's tallest bar stands well up the plot (SeriesSettings.bar_tallest)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

X = np.linspace(0, 10, 101)
# Falls from 2 to 0 by x = 3.3, then small bumps that often touch 0 (a pulse train's steps).
Y = np.where(X < 3.3, 2 * np.clip(1 - X / 3.3, 0, None) ** 1.2,
             np.clip(0.18 * np.sin(2.6 * X) ** 2 - 0.04, 0, None))


def baseline_markers(*, style: str, colour: str) -> Image.Image:
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=(4.4, 1.9), dpi=100)
        ax.plot(X, Y, "o", color=colour, markersize=4.5)
        ax.set_ylim(0, 2)
        ax.set_xlabel("alpha_rf")
        ax.set_ylabel("step size")
        fig.tight_layout()
        return figure_image(fig, format="jpeg" if style == "classic" else "png")


@pytest.mark.parametrize("style,colour", [("classic", "black"), ("bmh", "#348abd")])
def test_markers_along_the_baseline_are_read_as_points_not_bars(style, colour):
    reading = read_chart(baseline_markers(style=style, colour=colour))
    assert reading.readable, reading.reason
    series = reading.panels[0].series
    assert series, "no series read"
    assert all(s.kind != "bar" for s in series), [(s.kind, len(s.points)) for s in series]
    # The fall from 2 is part of what was read.
    points = np.concatenate([s.points for s in series])
    assert points[:, 1].max() >= 1.5, points[:, 1].max()


def test_a_bar_chart_is_still_read_as_bars():
    fig, ax = plt.subplots(figsize=(4.4, 3), dpi=100)
    ax.bar(["a", "b", "c", "d", "e"], [3.0, 0.4, 0.2, 2.1, 0.3], color="#4c72b0")
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    assert [s.kind for s in reading.panels[0].series] == ["bar"]


def test_low_bars_of_their_own_heights_are_still_bars():
    """Bars that all stay low on their axis (a fixed 0 .. 100 scale) but differ in height are
    bars, not marks along the baseline: only marks of one height, a marker's, are set aside."""
    fig, ax = plt.subplots(figsize=(5, 3.5), dpi=100)
    ax.bar(["a", "b", "c", "d", "e"], [5, 8, 12, 6, 9], color="#4c72b0")
    ax.set_ylim(0, 100)
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    series = reading.panels[0].series
    assert [s.kind for s in series] == ["bar"], [(s.kind, len(s.points)) for s in series]
