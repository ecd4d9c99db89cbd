"""A legend sample drawn as a line through a big marker, in black or grey (issue 27, the synthetic
dev set's pair-0042: a grey-scale re-plot with `marker="o"` / `"s"` lines). The sample is as
tall as the text and sparse, so it passed for a letter: it joined the name beside it into one
text row, the row had no sample left of it, and the legend was lost ("2 of the 2 named series
have no name read in the reproduction")."""

from __future__ import annotations

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from judging.signals.chart.settings import DEFAULT_READER  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402


def _grey_key(*, markersize: float = 12.0):
    x = np.linspace(0, 100, 300)
    fig, ax = plt.subplots(figsize=(8, 6), dpi=200)
    with plt.rc_context({"font.family": "serif"}):
        ax.plot(x, 0.3 + 2.6 * np.exp(-x / 6), color="black", lw=3, marker="o",
                markevery=25, markersize=markersize, label="no aug.")
        ax.plot(x, 0.55 + 1.7 * np.exp(-x / 9), color="0.45", lw=3, ls="--", marker="s",
                markevery=25, markersize=markersize, label="RandAug")
        ax.legend(loc="upper right", fontsize=14)
    return figure_image(fig)


def test_line_and_marker_samples_in_black_and_grey_keep_their_names():
    image = _grey_key()
    reading = read_chart(image)
    assert reading.readable, reading.reason
    assert reading.panels[0].legend == ["no aug", "RandAug"], reading.panels[0].legend
    named = sorted(s.name for s in reading.panels[0].series if s.name)
    assert named == ["RandAug", "no aug"], named
    # Without the rule the black sample joins "no aug." and the key is lost.
    off = replace(DEFAULT_READER, legend=replace(DEFAULT_READER.legend, struck_width=1e9))
    assert read_chart(image, settings=off).panels[0].legend != ["no aug", "RandAug"]


def _component(rows: list[str]):
    """One component drawn in text ('#' ink) as `_struck` sees it: boxes, labels, a glyph."""
    mask = np.array([[c == "#" for c in row] for row in rows])
    labels = mask.astype(int)  # component 0 is label 1
    ys, xs = np.nonzero(mask)
    bb = np.array([(xs.min(), ys.min(), xs.max(), ys.max())])
    return bb, np.array([0]), np.array([True]), labels


def test_a_line_through_a_marker_is_struck_and_letters_are_not():
    from judging.signals.chart.legend import _struck

    legend = DEFAULT_READER.legend

    sample = ["......####......",
              ".....######.....",
              "################",
              "################",
              ".....######.....",
              "......####......"]
    assert _struck(*_component(sample), 6.0, settings=legend) == {0}
    # Letters run together at a small scale ('Ade'): their ends fill the height.
    letters = ["..##.....##......",
               ".#..#....##..##..",
               ".####..####.#..#.",
               "#....#.#..#.####.",
               "#....#.####.#....",
               "#....#.####..###."]
    assert _struck(*_component(letters), 6.0, settings=legend) == frozenset()
    # A line whose one end is a tall stroke (a word's first letter glued to a dash) is not
    # a sample either: both ends must be thin strokes on the same rows.
    glued = ["#...............",
             "#...............",
             "################",
             "#...............",
             "#...............",
             "#..............."]
    assert _struck(*_component(glued), 6.0, settings=legend) == frozenset()
    # Ends thin but on other rows (a stroke rising across the box) are no line through it.
    rising = ["...........#####",
              "........###.....",
              ".....###........",
              "..###...........",
              "##..............",
              "................"]
    assert _struck(*_component(rising[:5]), 5.0, settings=legend) == frozenset()


def test_coloured_keys_read_alike_with_and_without_the_rule():
    fig, ax = plt.subplots(figsize=(5, 3.5), dpi=100)
    for k, name in enumerate(["Adelie", "Chinstrap", "Gentoo"]):
        ax.plot([0, 1], [k, k + 1], marker="o", label=name)
    ax.legend(loc="upper left", fontsize=11)
    image = figure_image(fig)
    off = replace(DEFAULT_READER, legend=replace(DEFAULT_READER.legend, struck_width=1e9))
    assert read_chart(image).panels[0].legend == ["Adelie", "Chinstrap", "Gentoo"]
    assert read_chart(image, settings=off).panels[0].legend == ["Adelie", "Chinstrap", "Gentoo"]
