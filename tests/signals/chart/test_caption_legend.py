"""Words of a caption under the plot are no legend (issue 27, realfig-dev2's cascade-demystifying-fig8: a
paper's figure cut out with its caption, "(1) the modified protocol proposed in [10] (blue),
(2) ..."). The legend finder looks under the x axis for a legend too, and there it took "(" for
a sample and "1" for its name, four times: the published chart's series were "named" by words
of the caption, so the names could never be checked against the reproduction's."""

from __future__ import annotations

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from judging.signals.chart.settings import DEFAULT_READER  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

CAPTION = ("Figure 8: Average efficiency of the original protocol (black) and three modified\n"
           "versions: (1) the modified protocol proposed in [10] (blue), (2) the version using\n"
           "the optimized parameters suggested in [19] (red), and (3) the version proposed\n"
           "here using 16 passes (green). More details are given in the text.")


def _figure_under(*, caption: bool):
    """Two named lines, their key under the plot; with a caption's paragraph beside the key in
    the same band (a key made of the caption's own words is what the real figure gave)."""
    x = np.linspace(0.001, 0.11, 200)
    fig = plt.figure(figsize=(8.0, 5.6), dpi=100)
    ax = fig.add_axes((0.12, 0.42, 0.84, 0.54))
    ax.plot(x, 1.08 + x, color="#1f77b4", label="orig")
    ax.plot(x, 1.10 + 0.2 * x, color="#d62728", label="mod")
    ax.set_xlabel("Quantum bit error rate Q")
    fig.legend(loc="lower left", bbox_to_anchor=(0.01, 0.02), frameon=False)
    if caption:
        fig.text(0.2, 0.02, CAPTION, fontsize=10, family="serif", va="bottom")
    return figure_image(fig)


def test_entries_among_a_paragraph_are_no_legend():
    image = _figure_under(caption=True)
    reading = read_chart(image)
    assert reading.readable, reading.reason
    panel = reading.panels[0]
    assert panel.legend == [], panel.legend
    assert all(s.name is None for s in panel.series), [s.name for s in panel.series]
    # The same entries are found without the rule: the paragraph around them decides.
    lax = replace(DEFAULT_READER, legend=replace(DEFAULT_READER.legend, names_share=0.0))
    assert read_chart(image, settings=lax).panels[0].legend == ["orig", "mod"]


def test_the_same_key_without_the_paragraph_is_read():
    reading = read_chart(_figure_under(caption=False))
    assert reading.readable, reading.reason
    assert reading.panels[0].legend == ["orig", "mod"], reading.panels[0].legend


def test_a_legend_under_the_plot_with_its_axis_title_is_read():
    x = np.linspace(0, 1, 50)
    fig = plt.figure(figsize=(6.4, 4.8), dpi=100)
    ax = fig.add_axes((0.12, 0.3, 0.84, 0.65))
    for name, colour, k in (("baseline", "#1f77b4", 0), ("ours", "#ff7f0e", 1)):
        ax.plot(x, x ** (1 + k), color=colour, label=name)
    ax.set_xlabel("training steps (thousands)")
    fig.legend(loc="lower center", ncol=2, frameon=False)
    reading = read_chart(figure_image(fig))
    assert reading.readable, reading.reason
    assert reading.panels[0].legend == ["baseline", "ours"], reading.panels[0].legend


def test_a_key_inside_the_plot_among_annotations_is_read():
    """Inside the plot area text is a few annotations, not prose: a key of one-letter names
    among them stays a key, however strict the share asked of keys outside the plot."""
    x = np.linspace(0, 1, 50)
    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
    ax.plot(x, x ** 2, color="#1f77b4", label="a")
    ax.plot(x, 0.2 + 0.5 * x, color="#ff7f0e", label="b")
    for k, note in enumerate(("onset of saturation", "threshold crossing", "measured drift")):
        ax.text(0.35 + 0.2 * k, 0.9 - 0.25 * k, note, fontsize=10)
    ax.legend(loc="upper left")
    image = figure_image(fig)
    strict = replace(DEFAULT_READER, legend=replace(DEFAULT_READER.legend, names_share=0.99))
    for settings in (DEFAULT_READER, strict):
        reading = read_chart(image, settings=settings)
        assert reading.readable, reading.reason
        assert reading.panels[0].legend == ["a", "b"], reading.panels[0].legend


def test_short_names_under_a_long_axis_title_or_a_figure_title_are_read():
    """Text on other lines than the key's (the x axis title above a key under the plot, the
    figure's title above a key over it) is no paragraph around the key."""
    x = np.linspace(0, 1, 50)
    for where, names in (("lower center", ["A", "B"]), ("upper center", ["SGD", "Adam"])):
        fig = plt.figure(figsize=(6.4, 4.8), dpi=100)
        ax = fig.add_axes((0.12, 0.25, 0.84, 0.58))
        ax.plot(x, x ** 2, color="#1f77b4", label=names[0])
        ax.plot(x, 0.2 + 0.5 * x, color="#ff7f0e", label=names[1])
        ax.set_xlabel("number of gradient steps taken before the evaluation (thousands)")
        fig.suptitle("Validation loss of the two optimisers on the held-out split", y=0.99)
        fig.legend(loc=where, ncol=2, frameon=False,
                   bbox_to_anchor=(0.5, 0.0 if where == "lower center" else 0.93))
        reading = read_chart(figure_image(fig))
        assert reading.readable, reading.reason
        assert reading.panels[0].legend == names, (where, reading.panels[0].legend)
