"""Tick labels read again one by one when the chart's shared OCR sheet misreads them (issue 41:
tick labels at small sizes). The reader reads every tick label of a chart in one tesseract call,
the crops stacked on one sheet; rotated category labels and an axis name taken for a label change
how tesseract lays that sheet out, and small labels beside them come back garbled ("25 000" read
"250G", "15 000" "145000": realfig-dev3's pgfplots figure of 512 px; "35000" read "00e 35 0"
beside gnuplot's rotated years). An axis refused on such a reading has its labels read again, each
alone, and the new reading is kept only when it fits nearly all of them:

- a 512-px chart in Computer Modern with rotated years and an axis name above its y labels reads
  its y axis in data units (refused without the second reading);
- labels too small to read (5.5-point Computer Modern at 100 dpi) stay unread: read twice, misread
  digits lined up by luck once (an axis from -4407 to 35680 for one from 0 to 27000) before the
  second reading had to fit all the labels but one.

Every figure is drawn here with matplotlib (its bundled cmr10 font)."""

from __future__ import annotations

import dataclasses
import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from PIL import Image  # noqa: E402

from judging.signals.chart import read_chart  # noqa: E402
from judging.signals.chart.settings import DEFAULT_READER  # noqa: E402

YEARS = np.arange(1987, 2015)
TOP = 27000
#: The first reading alone (no label read twice).
ONCE = dataclasses.replace(DEFAULT_READER,
                           axes=dataclasses.replace(DEFAULT_READER.axes, reread_labels=10 ** 6))


def _chart(*, label_size: float, name_size: float, rotate: int | None) -> Image.Image:
    """`rotate`: the years every other one, turned by so many degrees, in a tight layout
    (None: matplotlib's own x ticks and layout)."""
    rc = {"font.family": "cmr10"}
    with plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=(5.12, 2.34), dpi=100)
        students = 18000 + 3500 * np.sin((YEARS - YEARS[0]) / 4.0) + 250 * (YEARS - YEARS[0])
        ax.plot(YEARS, students, color="blue", marker="x", markersize=3)
        ax.plot(YEARS, students * 0.2, color="red", marker="x", markersize=3)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}"))
        if rotate is not None:
            ax.set_xticks(YEARS[1::2], [str(y) for y in YEARS[1::2]], rotation=rotate,
                          ha="right")
        ax.tick_params(labelsize=label_size)
        ax.set_ylim(0, TOP)
        # pgfplots' axis name, set above the y tick labels and right-aligned with them
        ax.text(-0.01, 1.0, "Anzahl", transform=ax.transAxes, ha="right", va="bottom",
                fontsize=name_size)
        if rotate is not None:
            fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        plt.close(fig)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def test_small_labels_garbled_on_the_shared_sheet_are_read_alone():
    image = _chart(label_size=8, name_size=8, rotate=45)
    once = read_chart(image, settings=ONCE).panels[0]
    assert once.y is None, ("the drawing no longer garbles the shared sheet: "
                            f"{[t.text for t in once.y.ticks]}")
    panel = read_chart(image).panels[0]
    assert panel.y is not None, panel.problems
    lo, hi = panel.y.data_range
    assert abs(lo) < 0.02 * TOP and abs(hi - TOP) < 0.02 * TOP, panel.y.data_range
    assert len(panel.y.ticks) >= 5, [t.text for t in panel.y.ticks]


def test_labels_too_small_to_read_stay_unread_when_read_twice():
    panel = read_chart(_chart(label_size=5.5, name_size=11, rotate=None)).panels[0]
    if panel.y is not None:
        lo, hi = panel.y.data_range
        assert abs(lo) < 0.05 * TOP and abs(hi - TOP) < 0.05 * TOP, (
            f"a wrong axis from misread labels: {[t.text for t in panel.y.ticks]} "
            f"-> {panel.y.data_range}")
