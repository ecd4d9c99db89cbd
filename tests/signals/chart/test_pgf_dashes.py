"""pgfplots' dashed lines and their legends (issue 27, realfig-dev2's cockpit-exp11:
tikzplotlib's panels with a pale dashed grid and a re-plot whose frameless legend sits just
under a line's tail).

- A dash as long as its gap covers half the columns of its line: the pieces were taken for a
  scatter's markers (30 "points" a panel), where they are a line's dashes.
- A pale dashed grid's crossings, one row of "glyphs" along a gridline, outnumbered the two
  names of a legend and were taken for it (all alike, so no legend at all).
- A frameless legend's padded box hid the line running just above its first entry: the line
  was read over a third of its width and no longer counted as a series.
The tests read their figures with a rule turned off (or made strict) too, so that they show
what the rule does.
"""

from __future__ import annotations

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from judging.signals.chart.settings import DEFAULT_READER  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402


def _dashed_panel():
    x = np.linspace(0.01, 1, 40)
    fig, ax = plt.subplots(figsize=(4.2, 2.8), dpi=100)
    # Dashes as long as their gaps, drawn thick and not blended: pgfplots' "dashed".
    ax.plot(x, 1.06 + 0.01 * np.sin(9 * x), ls=(0, (2, 2)), lw=2.2, color="#1f77b4",
            antialiased=False)
    ax.plot(x, 3.3 + 3.5 * (1 - np.exp(-4 * x)), ls=(0, (2, 2)), lw=2.2, color="#2ca02c",
            antialiased=False)
    ax.set_ylim(0.9, 8.5)
    return figure_image(fig)


def test_dashes_as_long_as_their_gaps_are_a_line():
    image = _dashed_panel()
    reading = read_chart(image)
    assert reading.readable, reading.reason
    kinds = sorted(s.kind for s in reading.panels[0].series)
    assert kinds == ["line", "line"], [(s.style, s.kind, len(s.points))
                                       for s in reading.panels[0].series]
    # Without the dash test, the dashes are a scatter's markers.
    stiff = replace(DEFAULT_READER, series=replace(DEFAULT_READER.series,
                                                   dash_elongation=99.0))
    before = read_chart(image, settings=stiff)
    assert "scatter" in {s.kind for s in before.panels[0].series}


def test_round_markers_along_a_curve_stay_markers():
    x = np.linspace(0.05, 1, 14)
    fig, ax = plt.subplots(figsize=(4.2, 2.8), dpi=100)
    ax.plot(x, np.exp(2 * x), "o", ms=6, color="#d62728")
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    assert [s.kind for s in reading.panels[0].series] == ["scatter"]


def _legend_over_a_pale_dashed_grid():
    x = np.linspace(0.01, 1, 40)
    fig, ax = plt.subplots(figsize=(4.6, 2.9), dpi=100)
    ax.plot(x, 4.5 * np.exp(-8 * x) + 0.2, "--", color="#1f77b4", lw=2, label="Cockpit")
    ax.plot(x, 230 * np.exp(-12 * x) + 0.1, "--", color="#ff7f0e", lw=2, label="third party")
    ax.set_yscale("log")
    # A pale grid, dashed both ways and not blended: its crossings are light grey marks in rows.
    for v in np.arange(0, 1.01, 0.1):
        ax.axvline(v, ls=(0, (4, 4)), lw=0.8, color="0.75", antialiased=False, zorder=0)
    for v in (0.1, 0.3, 1, 3, 10, 30, 100):
        ax.axhline(v, ls=(0, (4, 4)), lw=0.8, color="0.75", antialiased=False, zorder=0)
    # Where a dashed gridline crosses the dashed upright ones: pale marks in a row, each with
    # a pale dash before it, as the grid's crossings were read (realfig-dev2's cockpit-exp11).
    for v in np.arange(0.1, 0.95, 0.2):
        ax.plot([v - 0.075, v - 0.045], [0.3, 0.3], color="0.75", lw=0.8, antialiased=False)
        ax.text(v, 0.3, "+", color="0.75", fontsize=9, ha="center", va="center")
    ax.legend(loc="upper right", fancybox=False, edgecolor="0.8", framealpha=0.9)
    return figure_image(fig)


def test_a_pale_grids_crossings_are_no_legend():
    image = _legend_over_a_pale_dashed_grid()
    reading = read_chart(image)
    assert reading.readable, reading.reason
    panel = reading.panels[0]
    assert panel.legend == ["Cockpit", "third party"], panel.legend
    # The rule measures these rows: asking names to be as strong as the strongest row leaves
    # one row at most, and so no legend of two names.
    strict = replace(DEFAULT_READER, legend=replace(DEFAULT_READER.legend, faint_text=1.01))
    assert read_chart(image, settings=strict).panels[0].legend != panel.legend


def _frameless_legend_under_a_line():
    x = np.linspace(0.01, 1, 60)
    fig, ax = plt.subplots(figsize=(4.2, 4.6), dpi=100)
    ax.plot(x, 4.5 * np.exp(-12 * x) + 0.21, "--", color="#1f77b4", lw=2, label="Cockpit")
    ax.plot(x, 230 * np.exp(-9 * x) + 0.12, "--", color="#ff7f0e", lw=2, label="third party")
    ax.set_yscale("log")
    ax.set_ylim(0.07, 400)
    # No frame, its first entry just under the blue line's flat tail.
    ax.legend(loc="lower right", frameon=False, bbox_to_anchor=(1.0, 0.0))
    return figure_image(fig)


def test_a_frameless_legend_leaves_the_line_above_it():
    image = _frameless_legend_under_a_line()
    reading = read_chart(image)
    assert reading.readable, reading.reason
    panel = reading.panels[0]
    blue = [s for s in panel.series if s.name == "Cockpit"]
    assert blue, [(s.name, s.style) for s in panel.series]
    width = float(np.ptp(blue[0].points[:, 0]))
    assert width >= 0.8, width
