"""Two reading failures found on realfig-dev2 (issue 27): an axis drawn here with matplotlib,
and the colours of a palette:

- pgfplots labels a log axis spanning less than a decade or so at half decades: "10^0.5",
  "10^0" (cockpit-exp11's CPU panel). The reader took the fraction for a misread integer
  exponent and refused the axis; the labels' values are 3.16 and 1.
- The Okabe-Ito palette (gnuplot's and many papers' colour-blind-safe colours) has a sky blue,
  #56B4E9, of the same hue as its blue, #0072B2, and less chroma (jove-performance's H2O line
  beside its porphyrin line). The reader took the sky blue for a paler blend of the blue (an
  anti-aliased edge) and lost that series. A blend of the blue with a grey as pale as the sky
  blue would need a grey brighter than white: it is a colour of its own.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from judging.signals.chart.colour import same_hue  # noqa: E402
from judging.signals.chart.ocr import parse_number  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402


def test_a_power_of_ten_with_a_fractional_exponent_has_its_value():
    assert parse_number("10^0.5") == 10 ** 0.5
    assert parse_number("10^{-1.5}") == 10 ** -1.5


def test_a_log_axis_labelled_at_half_decades_is_read():
    x = np.linspace(0, 1, 30)
    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=110)
    ax.plot(x, 1.05 + 5.8 * (1 - np.exp(-3 * x)), "--", color="#2ca02c")
    ax.set_yscale("log")
    ax.set_ylim(0.92, 8.3)
    ax.set_yticks([1.0, 10 ** 0.5])
    ax.set_yticklabels(["$10^{0}$", "$10^{0.5}$"], fontsize=13)
    ax.minorticks_off()
    ax.grid(True, linestyle="--")
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    y = reading.panels[0].y
    assert y is not None, reading.panels[0].problems
    assert y.scale == "log"
    low, high = y.data_range
    assert 0.85 <= low <= 1.0 and 7.0 <= high <= 9.5, y.data_range


def test_the_sky_blue_of_a_palette_is_no_blend_of_its_blue():
    blue, sky, white = (np.array(c, np.float32) for c in ((0, 114, 178), (86, 180, 233),
                                                           (255, 255, 255)))
    # The colours gnuplot draws with (its default Okabe-Ito line colours, 1 px, no blending).
    assert not same_hue(sky, blue, white)
    # What anti-aliasing leaves beside a blue stroke: the blue blended with the background,
    # or with a grey gridline, at the weights an edge has.
    for weight in (0.3, 0.5, 0.8):
        for grey in (255.0, 235.0, 128.0):
            edge = weight * blue + (1 - weight) * np.full(3, grey, np.float32)
            assert same_hue(np.round(edge), blue, white), (weight, grey)


def test_a_line_with_open_markers_is_one_curve():
    """gnuplot's default points (open squares and circles on every point: jove-performance) made
    each marker's rim two more runs in its columns, and the line was read as two or three
    curves of one colour. Tracks are now followed with the markers' holes filled."""
    x = np.arange(1, 105)
    rng = np.random.default_rng(3)
    fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
    ax.plot(x, np.where(x < 52, 0.68 * x, 34 + 0.07 * (x - 52) + rng.normal(0, 1.2, x.size)),
            color="#0072B2", marker="o", markersize=4, mfc="none", linewidth=1, label="porphyrin")
    ax.plot(x, np.minimum(x, 55), color="#E69F00", marker="s", markersize=4, mfc="none",
            linewidth=1, label="methanol")
    ax.legend(loc="upper left")
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    series = reading.panels[0].series
    assert sorted(s.name or "" for s in series) == ["methanol", "porphyrin"], [
        (s.name, s.style, len(s.points)) for s in series]


def test_a_log_axis_within_half_a_decade_labelled_every_five_is_read_as_log():
    """Plotly labels a log axis from 25 to 65 every 5 (cascade-python's figure 3): within half a
    decade, the reader never tried a log reading, and a linear one through four of the nine
    labels was taken. A log reading that places clearly more labels is now taken; labels a
    linear axis places as well (years) stay linear."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    x = np.linspace(1000, 100000, 60)
    fig, ax = plt.subplots(figsize=(9, 5), dpi=100)
    ax.plot(x, 24 * (x / 1000) ** 0.22, color="#1f1fff")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(22, 68)
    ax.yaxis.set_major_locator(FixedLocator(list(range(25, 66, 5))))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_locator(NullLocator())
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    y = reading.panels[0].y
    assert y is not None and y.scale == "log", (y and y.scale, reading.panels[0].problems)
    assert len(y.ticks) >= 8, [t.text for t in y.ticks]


def test_a_square_root_axis_is_left_unread_not_read_as_a_bent_linear_one():
    """ggplot2's scale_y_sqrt: neither a linear nor a log reading places most of its labels.
    The linear reading through two of them, with a third 'repaired' ('400' read as '500'), was
    a confident wrong axis; most labels disagreeing with every reading leave the axis unread."""
    x = np.arange(10)
    fig, ax = plt.subplots(figsize=(6, 4.5), dpi=110)
    ax.plot(x, (x * 5.5) ** 2, color="#d62728", marker="o")
    ax.set_yscale("function", functions=(np.sqrt, np.square))
    ax.set_ylim(0, 2600)
    ax.set_yticks([0, 100, 400, 900, 1600, 2500])
    reading = read_chart(figure_image(fig))
    panel = reading.panels[0]
    assert panel.y is None, [t.text for t in panel.y.ticks]
    assert any("agree with any one reading" in p for p in panel.problems), panel.problems


def test_minor_labels_repeated_in_every_decade_leave_the_axis_unread():
    """Plotly's log axis labels its minor ticks "2" .. "9" in every decade (cascade-python's
    figure 3, its decades "1000" and "10k" set on another row). Read as values, one decade's
    digits made a log axis from 1 to 98 where the data run from 1000 to 100000: values that
    come back along an axis are no values."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    x = np.geomspace(1000, 99000, 60)
    ticks = [m * 10 ** e for e in (3, 4) for m in range(2, 10)]
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=100)
    ax.plot(x, 24 + 8 * np.log10(x / 1000), color="#ff2020")
    ax.set_xscale("log")
    ax.set_xlim(1000, 99000)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FixedFormatter([str(m) for _ in (3, 4) for m in range(2, 10)]))
    ax.xaxis.set_minor_locator(NullLocator())
    reading = read_chart(figure_image(fig))
    panel = reading.panels[0]
    assert panel.x is None, [t.text for t in panel.x.ticks]
    assert any("repeat values" in p for p in panel.problems), panel.problems
