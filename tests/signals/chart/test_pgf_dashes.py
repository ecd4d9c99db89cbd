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
from PIL import Image, ImageDraw  # noqa: E402
from scipy import ndimage  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from judging.signals.chart.geometry import prepare  # noqa: E402
from judging.signals.chart.legend import _faint  # noqa: E402
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


def test_crosses_along_a_curve_stay_markers():
    """Thin markers (an opening erases them, so `_chained` is asked) one after another along a
    curve are markers: a cross is not elongated, unlike a dash."""
    x = np.linspace(0.05, 1, 14)
    fig, ax = plt.subplots(figsize=(4.2, 2.8), dpi=100)
    ax.plot(x, 1 + 0.3 * x, "x", ms=7, mew=1.2, color="#d62728")
    ax.set_ylim(0, 2)
    image = figure_image(fig)
    reading = read_chart(image)
    assert reading.readable, reading.reason
    assert [s.kind for s in reading.panels[0].series] == ["scatter"]
    # Taken for dashes (any elongation), the same crosses chain into a line.
    lax = replace(DEFAULT_READER, series=replace(DEFAULT_READER.series, dash_elongation=0.0,
                                                 dash_alignment=90.0))
    assert [s.kind for s in read_chart(image, settings=lax).panels[0].series] != ["scatter"]


def _gpu_panel(ax, *, points: int, decay: tuple[float, float], floor: tuple[float, float]):
    """cockpit-exp11's GPU panel redrawn: two dashed run-time curves falling on a log y axis."""
    x = np.linspace(0.01, 1, points)
    ax.plot(x, 4.5 * np.exp(-decay[0] * x) + floor[0], "--", color="#1f77b4", lw=2,
            label="Cockpit")
    ax.plot(x, 230 * np.exp(-decay[1] * x) + floor[1], "--", color="#ff7f0e", lw=2,
            label="third party")
    ax.set_yscale("log")


def _legend_over_a_pale_dashed_grid():
    fig, ax = plt.subplots(figsize=(4.6, 2.9), dpi=100)
    _gpu_panel(ax, points=40, decay=(8, 12), floor=(0.2, 0.1))
    # A pale grid, dashed both ways and not blended: its crossings are light grey marks in rows.
    for v in np.arange(0, 1.01, 0.1):
        ax.axvline(v, ls=(0, (4, 4)), lw=0.8, color="0.75", antialiased=False, zorder=0)
    for v in (0.1, 0.3, 1, 3, 10, 30, 100):
        ax.axhline(v, ls=(0, (4, 4)), lw=0.8, color="0.75", antialiased=False, zorder=0)
    ax.legend(loc="upper right", fancybox=False, edgecolor="0.8", framealpha=0.9)
    return figure_image(fig)


def test_a_legend_over_a_pale_dashed_grid_is_read():
    reading = read_chart(_legend_over_a_pale_dashed_grid())
    assert reading.readable, reading.reason
    assert reading.panels[0].legend == ["Cockpit", "third party"], reading.panels[0].legend


def _rows(image: Image.Image):
    page = prepare(image)
    labels, n = ndimage.label(page.lum < 235, structure=np.ones((3, 3), bool))
    boxes = [(sl[1].start, sl[0].start, sl[1].stop - 1, sl[0].stop - 1)
             for sl in ndimage.find_objects(labels)]
    return page, labels, [[k] for k in range(n)], boxes


def test_rows_much_fainter_than_the_names_are_no_text():
    """The grid's crossings that were read as five entries (pale crosses, light grey where
    the names are black) are set aside; names in dark grey beside black ones are not."""
    image = Image.new("RGB", (240, 90), "white")
    draw = ImageDraw.Draw(image)
    draw.line((20, 20, 90, 20), fill=(0, 0, 0), width=3)  # a name's strokes, black
    draw.line((120, 20, 190, 20), fill=(70, 70, 70), width=3)  # another, dark grey
    draw.line((20, 60, 36, 60), fill=(191, 191, 191), width=1)  # a crossing, pale grey
    draw.line((28, 52, 28, 68), fill=(191, 191, 191), width=1)
    page, labels, rows, boxes = _rows(image)
    pale = {k for k, box in enumerate(boxes) if box[1] > 40}
    assert len(rows) == 3 and len(pale) == 1
    assert _faint(page, (0, 0, 239, 89), rows, boxes, labels,
                  settings=DEFAULT_READER.legend) == pale
    # Asked for rows nearly as strong as the strongest, the dark grey name goes too: the rule
    # measures each row's strength against the strongest's.
    strict = replace(DEFAULT_READER, legend=replace(DEFAULT_READER.legend, faint_text=0.9))
    assert _faint(page, (0, 0, 239, 89), rows, boxes, labels, settings=strict.legend) == pale | {
        k for k, box in enumerate(boxes) if box[0] > 100}


def _frameless_legend_under_a_line():
    fig, ax = plt.subplots(figsize=(4.2, 4.6), dpi=100)
    _gpu_panel(ax, points=60, decay=(12, 9), floor=(0.21, 0.12))
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
