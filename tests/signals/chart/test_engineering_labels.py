"""Tick labels in engineering notation with the unit set apart by a space ("200 k", "1 M":
matplotlib's EngFormatter, seaborn's throughput plots; issue 41, realfig-dev3's envpool figures).
The OCR of a y axis keeps the labels that end right-aligned against the axis; the suffix alone
("k") stood there and its number ("200") was left out, so the axis read as words and every
value went unread. The suffix now joins the number on its baseline a space to its left:

- a y axis labelled "0", "200 k" .. "1 M" reads in data units;
- a pair drawn from the same data, one with "200 k" labels and one with plain ones, agrees in
  data units, and the same pair with one series shifted by a fifth of the range does not pass.

Every figure is drawn here with matplotlib."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402

from judging.signals.chart import compare_charts, read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_png, png_image  # noqa: E402

WORKERS = np.array([1, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256])
FPS = {"For-loop": np.full(11, 5e3),
       "sync": np.array([10, 80, 150, 250, 300, 360, 380, 400, 420, 430, 430]) * 1e3,
       "async": np.array([12, 100, 200, 330, 480, 680, 820, 840, 880, 890, 880]) * 1e3,
       "numa": np.array([15, 110, 230, 360, 560, 760, 930, 950, 1000, 1030, 1070]) * 1e3}


def _png(*, engineering: bool, shift: str | None = None, style: str = "default",
         dpi: int = 100) -> bytes:
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=dpi)
        for name, values in FPS.items():
            values = values + 2.2e5 if name == shift else values
            ax.plot(WORKERS, values, marker="o", label=name)
        ax.legend(loc="upper left")
        if engineering:
            ax.yaxis.set_major_formatter(EngFormatter())  # "200 k", a space before the unit
            # in 11-point type the space is wider than the gap that joins glyphs into a label
            ax.tick_params(labelsize=11)
        else:
            ax.ticklabel_format(axis="y", style="plain")
        return figure_png(fig)


@pytest.mark.parametrize("dpi", [100, 80])
def test_a_y_axis_in_engineering_notation_reads_in_data_units(dpi):
    """At 80 dpi some labels keep their suffix and some lose it: '800', '400' and '200' read
    alone fit an axis a thousand times too short unless each joins its 'k'."""
    reading = read_chart(png_image(_png(engineering=True, dpi=dpi)))
    assert reading.readable, reading.reason
    y = reading.panels[0].y
    assert y is not None, reading.panels[0].problems
    lo, hi = y.data_range
    assert -1e5 < lo < 0 and 1.05e6 < hi < 1.25e6, y.data_range
    assert any(t.text.replace(" ", "").endswith("k") for t in y.ticks)


def test_engineering_labels_against_plain_ones_compare_in_data_units():
    published = read_chart(png_image(_png(engineering=True)))
    same = compare_charts(published, read_chart(png_image(_png(engineering=False, style="ggplot"))))
    shifted = compare_charts(published, read_chart(png_image(_png(engineering=False, style="ggplot",
                                                               shift="For-loop"))))
    assert same.signals["chart.same_data"] > 0.5, same.reasons["chart.same_data"]
    assert shifted.signals["chart.same_data"] < 0.5, shifted.reasons["chart.same_data"]
