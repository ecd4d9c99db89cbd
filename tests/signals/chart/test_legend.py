"""Legend reading (judging/signals/chart/legend.py): legends below the plot area, samples right of
their texts, grids of entries, and no legend made of tick labels or body text.

Every figure is drawn here with matplotlib's defaults (Agg, bundled DejaVu fonts), the looks
imitated from the tools that make them: `fig.legend(loc="lower center")` (ggplot2's
`legend.position="bottom"` reads the same), gnuplot's key (right-aligned names, their samples on
the right, outside the plot area) drawn with `legend(markerfirst=False)`."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from tests.signals.chart import figures_wild as wild  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

X = np.linspace(0, 10, 40)
#: name -> (y, colour): three curves that cross, in matplotlib's first three colours.
CURVES = {
    "baseline": (np.sin(X) + 2.0, "#1f77b4"),
    "dropout": (0.5 * X, "#d62728"),
    "warmup": (1.5 * np.sqrt(X), "#2ca02c"),
}
#: Six curves for a legend of two rows.
SIX = {
    "adam": (0.3 * X, "#1f77b4"),
    "sgd": (0.3 * X + 1.0, "#ff7f0e"),
    "lion": (0.3 * X + 2.0, "#2ca02c"),
    "lamb": (0.3 * X + 3.0, "#d62728"),
    "lars": (0.3 * X + 4.0, "#9467bd"),
    "muon": (0.3 * X + 5.0, "#8c564b"),
}


def _image(fig, *, dpi: int = 100) -> Image.Image:
    return figure_image(fig, dpi=dpi, metadata={"Software": None})


def _plot(curves, *, size=(7, 5)):
    plt.rcdefaults()
    fig, ax = plt.subplots(figsize=size)
    for name, (y, colour) in curves.items():
        ax.plot(X, y, color=colour, linewidth=2, label=name)
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    return fig, ax


def legend_below(curves=CURVES, *, ncol: int = 3) -> Image.Image:
    """A figure legend centred under the axes, below the tick labels and the axis title."""
    fig, _ax = _plot(curves)
    fig.subplots_adjust(bottom=0.25)
    fig.legend(loc="lower center", ncol=ncol, frameon=False)
    return _image(fig)


def legend_right_aligned() -> Image.Image:
    """gnuplot's key: names right-aligned, their samples right of them, outside the plot area at
    its top right."""
    fig, ax = _plot(CURVES, size=(8, 5))
    fig.subplots_adjust(right=0.75)
    ax.legend(markerfirst=False, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return _image(fig)


#: Names whose descenders ("g") sit right above the next name's capitals ("H", "C").
TIGHT = {"scaling": (0.4 * X + 0.5, "#009e73"), "H2O": (0.3 * X, "#d62728"),
         "spring": (0.2 * X + 1.0, "#e69f00"), "COH": (0.1 * X + 2, "#0072b2")}


def legend_set_tightly() -> Image.Image:
    """gnuplot's key as jove-performance draws it (realfig-dev2): names right-aligned, samples
    on their right, lines so close that a "g" touches the "O" under it."""
    fig, ax = _plot(TIGHT, size=(8, 6))
    ax.legend(markerfirst=False, loc="upper left", frameon=False, labelspacing=0.0,
              handlelength=3)
    return _image(fig)


def rotated_labels() -> Image.Image:
    """Bars with long x tick labels rotated 45 degrees and no legend: a row of glyphs below the
    axes, each beside the next, that is not one."""
    plt.rcdefaults()
    fig, ax = plt.subplots(figsize=(7, 5))
    years = [f"gdp_{y}" for y in range(1952, 2008, 5)]
    ax.bar(range(len(years)), np.linspace(1, 4, len(years)), color="#555555")
    ax.set_xticks(range(len(years)), years, rotation=45, ha="right")
    ax.set_ylabel("GDP")
    fig.subplots_adjust(bottom=0.3)
    return _image(fig)


def _hex(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], float)


def assert_named(image: Image.Image, curves) -> None:
    """The legend's names are read and every curve's series carries its own name (told by the
    series' colour)."""
    reading = read_chart(image)
    assert reading.readable, reading.reason
    panel = reading.panels[0]
    assert sorted(n.lower() for n in panel.legend) == sorted(curves), panel.legend
    named = {}
    for series in panel.series:
        if series.name is None or not series.style.startswith("#"):
            continue
        name = series.name.lower()
        assert name in curves, (series.name, panel.legend)
        difference = np.abs(_hex(series.style) - _hex(curves[name][1])).max()
        assert difference <= 60, (series.name, series.style, curves[name][1])
        named[name] = series
    assert sorted(named) == sorted(curves), [(s.name, s.style) for s in panel.series]


def test_a_legend_below_the_axes_names_the_series():
    # Tick labels, then the axis title "epoch", then the legend: the two text rows above it have
    # no samples and are no entries.
    assert_named(legend_below(), CURVES)


def test_a_legend_below_the_axes_in_two_rows_names_every_series():
    assert_named(legend_below(SIX, ncol=3), SIX)


def test_a_right_aligned_legend_with_samples_right_of_the_names_names_the_series():
    # gnuplot's key, outside the plot area on the right: "baseline ——", right-aligned.
    assert_named(legend_right_aligned(), CURVES)


def test_a_legend_set_so_tightly_that_its_lines_touch_names_every_series():
    reading = read_chart(legend_set_tightly())
    panel = reading.panels[0]
    # "H2O" may read "H20": the comparison folds that OCR slip (test_issue27_kinds).
    read = [name.replace("0", "O") for name in panel.legend]
    assert sorted(read) == sorted(TIGHT), panel.legend
    named = {s.name.replace("0", "O"): s for s in panel.series if s.name}
    assert sorted(named) == sorted(TIGHT), [(s.name, s.style) for s in panel.series]
    for name, series in named.items():
        assert np.abs(_hex(series.style) - _hex(TIGHT[name][1])).max() <= 60, (name, series.style)


def test_rotated_tick_labels_below_the_axes_are_no_legend():
    reading = read_chart(rotated_labels())
    assert reading.readable, reading.reason
    assert reading.panels[0].legend == [], reading.panels[0].legend


def test_a_paper_page_crop_has_no_legend_from_its_body_text_or_caption():
    # Three lines of body text above the chart, a two-line caption below it (the legend below a
    # chart is searched where a caption is), and the chart's own framed legend.
    reading = read_chart(Image.open(io.BytesIO(wild.paper_page_crop())).convert("RGB"))
    assert reading.readable, reading.reason
    words = {w.strip(".,:;()").lower() for w in (wild.BODY + " " + wild.CAPTION).split()}
    for panel in reading.panels:
        for name in panel.legend:
            assert name.lower() == "sparse warmup", (name, panel.legend)
            assert name.lower() not in words
    assert [n.lower() for p in reading.panels for n in p.legend] == ["sparse warmup"]


@pytest.mark.parametrize("layout", ["below", "right-aligned"])
def test_entries_are_found_with_their_samples_on_the_side_drawn(layout):
    # Without OCR (ocr=False) the entries are found all the same, each with its sample beside
    # its text: left of it below the axes, right of it in the gnuplot-like key.
    from judging.signals.chart.axes import text_mask
    from judging.signals.chart.geometry import find_plot_areas, prepare
    from judging.signals.chart.legend import find_legend

    image = legend_below() if layout == "below" else legend_right_aligned()
    page = prepare(image)
    boxes = find_plot_areas(page)
    (legend,) = find_legend(page, boxes[:1], text_mask(page), 8.0, ocr=False)
    assert legend is not None and len(legend.entries) == 3
    sides = {"left" if e.handle_box[0] < e.text_box[0] else "right" for e in legend.entries}
    assert sides == ({"left"} if layout == "below" else {"right"})


def _classic_markers_legend() -> Image.Image:
    """matplotlib's classic style: a framed legend in the upper left corner whose samples are
    drawn o--o (a line with a round marker at each end), serif text."""
    from matplotlib.lines import Line2D

    years = np.linspace(1967, 2015, 200)
    with plt.style.context("classic"):
        fig, ax = plt.subplots(figsize=(5.5, 5.5), dpi=100)
        colours = ("black", "#c22324")
        ax.plot(years, 9 - 0.12 * (years - 1967) + np.sin(years / 3), color=colours[0])
        ax.plot(years, 5 + 0.1 * (years - 1967) + np.cos(years / 3), color=colours[1])
        handles = [Line2D([], [], color=c, marker="o", markersize=4) for c in colours]
        ax.legend(handles, ["psavert", "uempmed"], loc="upper left",
                  prop={"family": "serif", "size": 8})
        ax.set_ylim(0, 16)
        ax.ticklabel_format(useOffset=False)
        return _image(fig)


def test_a_legend_of_line_and_marker_samples_names_every_series():
    """falx-046__faithful2: a sample's second marker, apart from the first, was taken for an
    entry's text, and the real entry beside it dropped for a sample "over another's text"."""
    reading = read_chart(_classic_markers_legend())
    panel = reading.panels[0]
    assert len(panel.legend) == 2, panel.legend
    assert sorted(s.name or "" for s in panel.series) == ["psavert", "uempmed"], \
        [(s.name, s.style) for s in panel.series]
