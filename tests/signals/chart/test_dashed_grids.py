"""A dashed grid beside a legend (issue 27, realfig-dev2's cockpit-exp11: tikzplotlib's pgfplots
panels with a dashed major grid). The dashes of a vertical gridline stand one above the other,
each a one-pixel-wide mark that the legend finder took for a one-glyph name, with the dash
above as its sample: those "entries" outnumbered the real ones, and the legend was lost."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

NAMES = ["PyTorch (Cockpit)", "PyTorch (third party)", "NumPy (single thread)"]


def test_a_legend_beside_a_dashed_grid_names_its_series():
    x = np.linspace(0.01, 1, 30)
    fig, ax = plt.subplots(figsize=(5.2, 3.37), dpi=100)
    ax.plot(x, 1.0 + 0.02 * x, "--", color="#1f77b4", lw=2, label=NAMES[0])
    ax.plot(x, 0.97 + 0.01 * x, "--", color="#ff7f0e", lw=2, label=NAMES[1])
    ax.plot(x, 3.3 + 3.5 * (1 - np.exp(-4 * x)), "--", color="#2ca02c", lw=2, label=NAMES[2])
    ax.set_yscale("log")
    # pgfplots' dashed grid: thin, not blended, dashes shorter than their gaps.
    for v in np.arange(0, 1.01, 0.2):
        ax.axvline(v, ls=(0, (5, 8)), lw=0.7, color="0.45", antialiased=False, zorder=0)
    for v in (1.0, 10 ** 0.5):
        ax.axhline(v, ls=(0, (5, 8)), lw=0.7, color="0.45", antialiased=False, zorder=0)
    ax.legend(loc="center right", fancybox=False, edgecolor="0.6", framealpha=1)
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    panel = reading.panels[0]
    assert panel.legend == NAMES, panel.legend
    named = {s.name for s in panel.series if s.name}
    assert named == set(NAMES), [(s.name, s.style) for s in panel.series]
