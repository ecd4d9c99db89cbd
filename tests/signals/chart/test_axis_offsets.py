"""Tick labels that a text beside the axis scales or shifts, and tick labels in e-notation
(issue 27, found on falx-041 of realfig-dev2: matplotlib wrote "1e7" above the y axis of a
re-plot whose ticks read 0 .. 9, and ggplot2 wrote "7.5e+07" whose "+" was taken for a raised
exponent).

- matplotlib's offset text ("1e7" above the y axis, "1e-5" below the right end of the x axis,
  "+1e3" for an added offset) is read and applied: values are in data units;
- e-notation tick labels are read as numbers, not as powers of ten with an exponent;
- a title at the top left of the plot area is no offset (it has words beside it);
- a pair drawn from the same data, one with an offset text and one with e-notation labels,
  agrees in data units, and the same pair with one series shifted does not pass.

Every figure is drawn here with matplotlib."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.ticker import FormatStrFormatter  # noqa: E402

from judging.signals.chart import compare_charts, read_chart  # noqa: E402
from judging.signals.chart.axes import parse_offset  # noqa: E402
from tests.signals.chart.helpers import figure_png, judge_figure_pair, png_image  # noqa: E402

YEARS = np.arange(1950, 1956)
CATCH = {"cod": np.array([0.3, 0.4, 0.45, 0.4, 0.45, 0.5]) * 1e7,
         "herring": np.array([8.7, 5.1, 1.4, 1.3, 2.5, 1.9]) * 1e7,
         "tuna": np.array([6.9, 3.5, 3.1, 2.3, 2.1, 1.4]) * 1e7}


def _png(draw, *, size=(6, 4.5), dpi=110, style="default") -> bytes:
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=size, dpi=dpi)
        draw(ax)
        return figure_png(fig)


def _lines(data, *, ax, shift: str | None = None):
    for name, values in data.items():
        values = values + 2e7 if name == shift else values
        ax.plot(YEARS, values, label=name, linewidth=2, marker="o")
    ax.legend(loc="upper right")


def offset_text(shift: str | None = None) -> bytes:
    """matplotlib's default: ticks 0 .. 8 and "1e7" above the y axis."""
    return _png(lambda ax: _lines(CATCH, ax=ax, shift=shift))


def e_notation(shift: str | None = None, *, small: bool = False) -> bytes:
    """Ticks written out in e-notation ("2.5e+07"), in another style and size; `small`: in
    7-point type at 72 dpi, where the "+" sits high enough to pass for an exponent's sign."""
    def draw(ax):
        _lines(CATCH, ax=ax, shift=shift)
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.1e"))
        if small:
            ax.tick_params(labelsize=7)
    if small:
        return _png(draw, size=(4.3, 4.4), dpi=72)
    return _png(draw, size=(7, 5), style="seaborn-v0_8-whitegrid")


def _panel(png: bytes):
    reading = read_chart(png_image(png))
    assert reading.readable, reading.reason
    assert len(reading.panels) == 1
    return reading.panels[0]


def test_parse_offset_reads_multipliers_and_shifts_and_nothing_else():
    assert parse_offset("1e7") == (1e7, 0.0)
    assert parse_offset("1e-5") == (1e-5, 0.0)
    assert parse_offset("10^4") == (1e4, 0.0)
    assert parse_offset("+1e3") == (1.0, 1000.0)
    assert parse_offset("1e-3+2") == (1e-3, 2.0)
    for text in ("", "2", "-2", "e", "loss", "1e7x"):
        assert parse_offset(text) is None, text


def test_a_y_offset_text_scales_the_tick_labels():
    y = _panel(offset_text()).y
    assert y is not None and y.scale == "linear"
    lo, hi = y.data_range
    # the plot reaches 8.7e7 with matplotlib's margins: read without "1e7" it would be ~9
    assert 8.5e7 < hi < 9.5e7, y.data_range
    assert any("1e7" in t.text for t in y.ticks)


def test_an_added_offset_shifts_the_tick_labels():
    x = np.linspace(0, 1, 50)

    def draw(ax):
        ax.plot(x, 1000.0 + 0.4 * x, linewidth=2)  # ticks 0.0 .. 0.4 and "+1e3"
    y = _panel(_png(draw)).y
    assert y is not None
    lo, hi = y.data_range
    assert 999.9 < lo < 1000.05 and 1000.35 < hi < 1000.5, y.data_range


def test_an_x_offset_text_below_the_axis_scales_its_tick_labels():
    x = np.linspace(0, 5e-5, 40)

    def draw(ax):
        ax.plot(x, np.sin(x * 1e5), linewidth=2)  # ticks 0 .. 5 and "1e-5" at the right
    axis = _panel(_png(draw)).x
    assert axis is not None
    lo, hi = axis.data_range
    assert -1e-5 < lo < 1e-6 and 4.8e-5 < hi < 5.5e-5, axis.data_range


@pytest.mark.parametrize("small", [False, True])
def test_e_notation_tick_labels_are_numbers_not_powers(small):
    panel = _panel(e_notation(small=small))
    y = panel.y
    assert y is not None and y.scale == "linear", panel.problems
    lo, hi = y.data_range
    assert 8.5e7 < hi < 9.5e7, y.data_range


def test_a_title_at_the_top_left_is_no_offset():
    def draw(ax):
        ax.plot(YEARS, CATCH["cod"] / 1e7, linewidth=2)  # values 0.3 .. 0.5, no offset
        ax.set_title("1e7 fish caught", loc="left")
    y = _panel(_png(draw)).y
    assert y is not None
    lo, hi = y.data_range
    assert 0.2 < lo and hi < 0.6, y.data_range


def test_an_offset_and_e_notation_of_the_same_data_agree_in_data_units():
    comparison = compare_charts(read_chart(png_image(offset_text())),
                                read_chart(png_image(e_notation())))
    assert comparison.signals["chart.same_data"] >= 0.9, comparison.reasons["chart.same_data"]


@pytest.mark.parametrize("published, reproduced", [
    (offset_text, e_notation), (e_notation, offset_text)])
def test_a_shifted_series_between_the_two_notations_is_never_passed(published, reproduced,
                                                                   tmp_path):
    judged = judge_figure_pair(published(), reproduced(shift="cod"), "figure-match@1.4.0",
                               folder=tmp_path / "pair")
    assert judged.outcome != "pass", judged.signals.get("chart.same_data")
    same = judged.value("chart.same_data")
    assert same is None or same < 0.9
