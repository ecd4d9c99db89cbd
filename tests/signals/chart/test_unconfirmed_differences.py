"""Two differences a careful reader does not take as proof of another figure (issue 41,
realfig-dev3: faithful re-plots of envpool-throughput and goofys-azure were failed on them):

- a swapped legend read from NEAR names: the reproduction's "fast (sync)" is not the
  published "fast (async)" read with a slip when both are real entries of a legend, so names
  that pair the series otherwise than their data prove a swap only when read alike letter for
  letter;
- a crop read on panels whose y axis is unread (horizontal bars whose categories are words):
  the panels' pairing rests on their order alone, and facets in another order have value axes
  of other ranges, so no crop is confirmed there (a crop on panels read in data units still
  is).

Every figure is drawn here with matplotlib."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import compare_charts, read_chart  # noqa: E402

X = np.arange(1, 11)
RISING, FLAT = 10.0 * X, np.full(10, 20.0)
CATEGORIES = ["read", "write", "list", "create", "delete", "stat"]
SECONDS = np.array([3.1, 5.2, 1.4, 2.2, 0.8, 4.6])


def _save(fig) -> Image.Image:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def _lines(names: tuple[str, str], *, style: str = "default") -> Image.Image:
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=(6, 4.5), dpi=100)
        ax.plot(X, RISING, label=names[0], linewidth=2)
        ax.plot(X, FLAT, label=names[1], linewidth=2)
        ax.legend(loc="upper left")
        return _save(fig)


def _bars(scales: tuple[float, float], *, style: str = "default") -> Image.Image:
    """Two stacked panels of horizontal bars, the values times each of `scales` (the panels of
    a faceted chart, in the order given)."""
    with plt.style.context(style):
        fig, axes = plt.subplots(2, 1, figsize=(6, 6), dpi=100)
        for ax, scale in zip(axes, scales):
            ax.barh(CATEGORIES, SECONDS * scale)
        fig.tight_layout()
        return _save(fig)


def test_near_names_that_pair_the_data_otherwise_confirm_no_swap():
    published = read_chart(_lines(("fast (async)", "slow")))
    # the reproduction's legend names the rising line "slow" and the flat one "fast (sync)"
    near = compare_charts(published, read_chart(_lines(("slow", "fast (sync)"), style="ggplot")))
    assert "legends name the series one way" not in near.reasons["chart.same_data"], \
        near.reasons["chart.same_data"]
    assert near.signals["chart.same_data"] > 0.2, near.reasons["chart.same_data"]


def test_names_read_alike_that_pair_the_data_otherwise_still_confirm_a_swap():
    published = read_chart(_lines(("fast", "slow")))
    swapped = compare_charts(published, read_chart(_lines(("slow", "fast"), style="ggplot")))
    assert "legends name the series one way" in swapped.reasons["chart.same_data"], \
        swapped.reasons["chart.same_data"]


def test_facets_of_horizontal_bars_in_another_order_are_no_confirmed_crop():
    """The same two facets drawn in the other order (ggplot2 orders facets by name): paired by
    order, each panel's value axis spans two thirds of its counterpart's."""
    comparison = compare_charts(read_chart(_bars((1.0, 1.5))),
                                read_chart(_bars((1.5, 1.0), style="ggplot")))
    reason = comparison.reasons["chart.same_data"]
    assert "the x ranges differ on both" not in reason, reason
    assert comparison.signals["chart.same_data"] > 0.2, reason
