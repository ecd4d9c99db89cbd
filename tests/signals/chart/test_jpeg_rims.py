"""Lines saved as JPEG (issue 27, realfig-dev2's ggplot2 charts falx-041 and falx-042): the
compression leaves a rim beside each stroke, paler or more saturated than its core, that the
reader took for a line of its own. Each series was read twice, and a faithful re-plot was left
unanswered for "published series without a counterpart".

And a legend that gives one name twice (jove-performance's key names two series "H3COH"):
that name pairs neither of its series, so it never confirms a swapped legend.

The charts are drawn here with matplotlib in ggplot2's look (grey panel, white grid, its two
default colours) and saved as JPEG at a web page's quality."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import compare_charts, read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

MONTHS = 2002 + np.arange(100) / 12
rng = np.random.default_rng(42)
VAR0 = 150 + 70 * np.sin(2 * np.pi * (MONTHS - 2002) / 4.2 - 2.0) + rng.normal(0, 9, 100)
VAR1 = 165 + 22 * np.sin(2 * np.pi * (MONTHS - 2002) / 4.2 - 1.0) + rng.normal(0, 5, 100)


def ggplot_jpeg(*, quality: int, dpi: int = 100) -> Image.Image:
    fig, ax = plt.subplots(figsize=(4.4, 4.4), dpi=dpi)
    ax.set_facecolor("#ebebeb")
    ax.grid(color="white", linewidth=1.0)
    ax.set_axisbelow(True)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.plot(MONTHS, VAR0, color="#f8766d", linewidth=1.0, label="var0")
    ax.plot(MONTHS, VAR1, color="#00bfc4", linewidth=1.0, label="var1")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False, title="variable")
    ax.set_xlabel("date")
    ax.set_ylabel("value")
    ax.tick_params(colors="#4d4d4d", length=3)
    fig.tight_layout()
    return figure_image(fig, format="jpeg", pil_kwargs={"quality": quality})


@pytest.mark.parametrize("quality", [60, 75])
def test_a_jpeg_line_and_its_rim_are_one_series(quality):
    reading = read_chart(ggplot_jpeg(quality=quality))
    assert reading.readable, reading.reason
    series = reading.panels[0].series
    assert len(series) == 2, [(s.name, s.style, len(s.points)) for s in series]
    assert len({s.name for s in series if s.name}) == sum(bool(s.name) for s in series)
    # The rim filled the gaps of its stroke's core: each line spans the dates drawn.
    for s in series:
        assert np.ptp(s.points[:, 0]) >= 0.95 * np.ptp(MONTHS), (s.style, np.ptp(s.points[:, 0]))


def test_two_series_of_one_hue_that_only_cross_stay_two():
    """A light and a dark blue (matplotlib's "Paired") crossing each other are two series."""
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    x = np.linspace(0, 10, 200)
    ax.plot(x, np.sin(x), color="#a6cee3", linewidth=2)
    ax.plot(x, np.cos(x), color="#1f78b4", linewidth=2)
    reading = read_chart(figure_image(fig))
    assert len(reading.panels[0].series) == 2


def close_curves(colours: tuple[str, str]) -> Image.Image:
    """Two curves a few pixels apart all along (1.2% of the y range)."""
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    x = np.linspace(0, 10, 200)
    for offset, colour in zip((0.0, 0.012), colours):
        ax.plot(x, 0.5 + 0.3 * np.sin(x / 2) + offset, color=colour, linewidth=1)
    ax.set_ylim(0, 1)
    return figure_image(fig)


def test_two_close_lines_of_other_hues_stay_two():
    """A red and a blue curve a few pixels apart all along (two methods that nearly agree) are
    two series: only a track of the same hue is a rim."""
    reading = read_chart(close_curves(("#d62728", "#1f77b4")))
    assert len(reading.panels[0].series) == 2, [s.style for s in reading.panels[0].series]


def test_two_close_curves_of_one_colour_stay_two():
    """Two curves in one colour a few pixels apart (the tracker told them apart) are not a
    stroke and its rim."""
    reading = read_chart(close_curves(("#1f77b4", "#1f77b4")))
    assert len(reading.panels[0].series) == 2, [s.style for s in reading.panels[0].series]


def repeated_name_chart(names: tuple[str, str, str], colours: tuple[str, str, str]
                        ) -> Image.Image:
    fig, ax = plt.subplots(figsize=(7, 5), dpi=100)
    x = np.arange(1, 41)
    curves = (x * 0.95, 12 + 8 * np.log(x), 5 + 0.2 * x)
    for y, name, colour in zip(curves, names, colours):
        ax.plot(x, y, color=colour, label=name, linewidth=1.5)
    ax.legend(loc="upper left")
    return figure_image(fig)


def test_a_name_given_twice_never_confirms_a_swap():
    """The published key names the second and third series alike; the re-plot tells them
    apart ("H3COH", "H3COH (2)") in the other order. The data pair them; the names cannot."""
    published = repeated_name_chart(("H2O", "H3COH", "H3COH"), ("#009e73", "#e69f00", "#56b4e9"))
    reproduced = repeated_name_chart(("H2O", "H3COH (2)", "H3COH"),
                                     ("#7cae00", "#00bfc4", "#c77cff"))
    comparison = compare_charts(read_chart(published), read_chart(reproduced))
    reason = comparison.reasons["chart.same_data"]
    assert "one way" not in reason, reason
    assert comparison.signals["chart.same_data"] > 0.2, reason  # never failed on those names
