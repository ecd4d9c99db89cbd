"""A log axis labelled on its minor ticks ('3x10^0', '2x10^0', '10^0', '6x10^-1': matplotlib
labels them on an axis under two decades long) whose exponents OCR misread so that they happen
to line up (issue 27, the synthetic set drawn with --seed 7: '316^9', '210^4', '1G^0', '610^-1'
were fitted as 10^9, 2x10^-4, 10^-25, 6x10^-42, an axis 51 decades long, and a faithful
re-plot failed on the misread axis). Minor labels stand less than a decade from the next label
read: further apart, the axis is left unread."""

from __future__ import annotations

from judging.signals.chart.axes import TickLabel, fit_axis

POSITIONS = [148.0, 366.0, 738.0, 1014.0]


def _labels(texts: list[str]) -> list[TickLabel]:
    return [TickLabel(left=40, top=int(p) - 8, right=90, bottom=int(p) + 8, comps=[], height=16.0,
                      text=t) for p, t in zip(POSITIONS, texts)]


def test_minor_labels_read_right_give_the_axis():
    fit, why = fit_axis(POSITIONS, _labels(["310^0", "210^0", "10^0", "610^-1"]), (0, 1100), "y")
    assert why is None and fit is not None and fit.scale == "log"
    assert [round(value, 6) for _, value, _ in fit.ticks] == [3.0, 2.0, 1.0, 0.6]


def test_minor_labels_misread_into_a_line_leave_the_axis_unread():
    fit, why = fit_axis(POSITIONS, _labels(["316^9", "210^4", "1G^0", "610^-1"]), (0, 1100), "y")
    assert fit is None
    assert "powers of ten whose exponents could not be read consistently" in why
