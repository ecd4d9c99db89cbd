"""A line with a narrow spike (issue 27, realfig-dev2's falx-060: ggplot2's trial1 against
trial2): the tracker, following the line leftwards, lost it on the spike's far side, more than
a quarter of the plot away, and the published series was read from the spike on only (56% of
its x range), so its re-plot could not be answered. A colour that holds one curve has no other
ink to take for it: once lost, its next run is the curve."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402

X = [1.2, 1.72, 2.13, 2.55, 2.61, 2.64, 2.85, 3.21, 4.31, 4.43]
Y = [3.08, 1.03, 0.91, 1.68, 1.50, 3.25, 1.01, 1.84, 2.18, 1.35]


def spike_chart(*, look: str) -> Image.Image:
    fig, ax = plt.subplots(figsize=(5.75, 4.24), dpi=100)
    if look == "ggplot":
        ax.set_facecolor("#ebebeb")
        ax.grid(color="white")
        for side in ax.spines.values():
            side.set_visible(False)
    ax.set_axisbelow(True)
    ax.plot(X, Y, color="black", linewidth=1.2)
    ax.set_xlabel("trial2")
    ax.set_ylabel("trial1")
    return figure_image(fig, format="jpeg" if look == "ggplot" else "png")


@pytest.mark.parametrize("look", ["ggplot", "plain"])
def test_a_line_is_read_on_both_sides_of_a_narrow_spike(look):
    reading = read_chart(spike_chart(look=look))
    assert reading.readable, reading.reason
    series = reading.panels[0].series
    assert len(series) == 1, [s.style for s in series]
    xs = series[0].points[:, 0]
    assert xs.min() <= X[0] + 0.05 * (X[-1] - X[0]), (xs.min(), xs.max())
    assert xs.max() >= X[-1] - 0.05 * (X[-1] - X[0]), (xs.min(), xs.max())
