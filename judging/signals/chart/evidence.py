"""What two independent readings of a chart pair confirm: agreement, difference, or neither.

A comparison (the compare folder) reads the data of two charts in ways that fail independently:

- **series**: the ink split into series (by colour and line style), lines tracked, markers
  found, and the series paired by legend names or by their data (`PanelEvidence.series`);
- **ink**: every strongly drawn pixel of the plot area mapped through the axes, with no series
  split at all (`PanelEvidence.ink`): what a series reading misses, splits or merges is there;
- **ticks**: the axes' ranges as their tick labels give them (`PanelEvidence.x_ticks`);
- **names**: the legend text read by OCR (`NamesEvidence`).

A difference is *confirmed* only when two of these show it, and it survives the reader's
alternative readings: a series mismatch that the ink does not show is a series split or merge
of the reader's, not of the data; a value difference needs axes read with tick labels that
confirm their fit (an axis misread moves everything); a crop needs the tick labels and the data
to agree; a swapped legend needs the names read on both charts and the data paired the other
way. Agreement needs the same standard: the series and the ink agree in data units (a y axis
read on both charts, else a shifted series would look the same), the x ranges agree, and when
the published legend names the series, the reproduction's names were read and agree (else a
swap cannot be ruled out). Anything less leaves both at 0 and says why (the doubts).

The two strengths make one evidence value e = agreement - difference in [-1, 1], which the
settings' calibration table turns into the probability that the reproduction plots the same
data (`chart.same_data`). The table is fitted by benchmarks/chart_signals.py on real figures,
one repository left out at a time; nothing here is tuned on a figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from judging.signals.chart.settings import EvidenceSettings

DIGITS = 4
"""Decimals the evidence and the calibrated probability are given with."""


@dataclass(frozen=True)
class PanelEvidence:
    """The readings of one pair of panels, each None when it could not be made."""

    index: int
    where: str
    """" (panel 2)" when the charts have several panels, else ""."""
    series: float | None
    """Agreement of the paired series' data in [0, 1]: the share of the published series
    matched, their shapes, values and trends (1 = the same); no crop or scale in it."""
    crossed: float | None
    """When the legend names (read alike on both charts) pair some series otherwise than their
    data do: the agreement of the series paired by their data alone."""
    ink: tuple[float, float] | None
    """(share of the published data ink near the reproduced ink, the converse)."""
    x_ticks: float | None
    """Overlap (IoU) of the two x axes' ranges, from their tick labels."""
    x_data: float | None
    """Overlap (IoU) of the x extents of the two charts' series."""
    y_in_data: bool
    """The y axes of both charts were read: values are compared in data units."""
    axes_doubt: str | None
    """Why the axes cannot carry a difference (None: read with at least three tick labels on
    their fit on both charts, or categories on both)."""
    x_axes_confirmed: bool
    """Both x axes read with at least three tick labels on their fit."""
    series_doubt: str | None = None
    """Why the series split cannot carry a difference (the counts differ by more than one)."""
    unmatched: int = 0
    """Published series the reproduction has no series for."""
    scales_differ: bool = False
    """The two charts' axes were read with other scale types (linear and log)."""
    names: str = "unnamed"
    """What the legend names say of the pairing: "unnamed" (fewer than two named series),
    "agree", "unread" (a swap cannot be ruled out) or "disagree"."""
    names_why: str = ""
    series_on_ink: tuple[float, float] | None = None
    """(share of the published series' points on the reproduced ink, the converse)."""


@dataclass(frozen=True)
class Evidence:
    agreement: float
    difference: float
    same_data: float
    """The calibrated probability that the reproduction plots the same data."""
    confirmed: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)

    @property
    def value(self) -> float:
        return self.agreement - self.difference

    def reason(self) -> str:
        parts = []
        if self.confirmed:
            parts.append("confirmed: " + "; ".join(self.confirmed))
        else:
            parts.append("nothing confirmed by two independent readings")
        if self.doubts:
            parts.append("doubts: " + "; ".join(self.doubts[:4]))
        return f"evidence {self.value:+.2f}; " + "; ".join(parts)


def weigh(panels: list[PanelEvidence], *, panel_counts: tuple[int, int],
          settings: EvidenceSettings) -> Evidence:
    """Agreement and difference that two independent readings confirm (see the module)."""
    confirmed: list[str] = []
    doubts: list[str] = []
    if panel_counts[0] != panel_counts[1] or not panels:
        doubts.append(f"{panel_counts[0]} data panels read in the published chart, "
                      f"{panel_counts[1]} in the reproduction: panels may be mispaired")
        return _finish(0.0, 0.0, confirmed, doubts, settings)
    strengths = [_panel(p, settings, confirmed, doubts) for p in panels]
    # Every panel must agree; one confirmed difference is enough.
    return _finish(min(a for a, _ in strengths), max(d for _, d in strengths), confirmed,
                   doubts, settings)


def _panel(p: PanelEvidence, settings: EvidenceSettings, confirmed: list[str],
           doubts: list[str]) -> tuple[float, float]:
    ink = min(p.ink) if p.ink is not None else None
    on_ink = min(p.series_on_ink) if p.series_on_ink is not None else ink
    axes_doubt = p.axes_doubt
    if p.x_ticks is not None and p.x_ticks < settings.some_x_overlap:
        # Plotted over x ranges that share (almost) nothing: more likely an x axis misread (a
        # crop keeps part of the range), and then every value is compared at the wrong x.
        axes_doubt = axes_doubt or (f"the x axes' ranges do not overlap (tick labels "
                                    f"{p.x_ticks:.2f}): an x axis misread rather than a crop")
    agreement = _agreement(p, settings, on_ink, confirmed, doubts)
    difference = _data_difference(p, settings, (ink, on_ink), axes_doubt, confirmed, doubts)
    agreement, difference = _swap(p, settings, (agreement, difference), confirmed, doubts)
    return _crop(p, settings, (agreement, difference), axes_doubt, confirmed, doubts)


def _agreement(p: PanelEvidence, settings: EvidenceSettings, on_ink: float | None,
               confirmed: list[str], doubts: list[str]) -> float:
    """How far the panel's readings agree (0 when a doubt leaves agreement unconfirmed)."""
    where = p.where
    agreement = 0.0
    # Agreement: each chart's series lie on the other's ink, the series agree with each other,
    # in data units, over the same x range, paired as the legend names pair them.
    if p.series is None or on_ink is None:
        doubts.append(f"no series or no ink to compare{where}")
    elif not p.y_in_data:
        doubts.append(f"a y axis unread{where}: a shifted series would look the same")
    elif p.scales_differ:
        doubts.append(f"the axes' scale types differ (linear and log){where}: the same data "
                      f"drawn on another scale reads otherwise")
    elif p.unmatched:
        doubts.append(f"{p.unmatched} published series without a counterpart in the "
                      f"reproduction{where}: left out, or not read")
    elif p.names in ("unread", "disagree"):
        doubts.append(p.names_why + where + (": a swapped legend cannot be ruled out"
                                             if p.names == "unread" else ""))
        agreement = min(p.series, on_ink) if p.names == "unread" else 0.0
        agreement = min(agreement, settings.unverified_names_agreement)
    else:
        x_range = p.x_ticks if p.x_ticks is not None else p.x_data
        agreement = min(p.series, on_ink, 1.0 if x_range is None else
                        min(1.0, x_range / settings.same_x_range))
        if agreement >= 1.0 - settings.report_at:
            confirmed.append(f"the series agree ({p.series:.2f}) and lie on each other's ink "
                             f"({on_ink:.2f}){where}"
                             + (f"; {p.names_why}" if p.names == "agree" else ""))
        elif agreement >= settings.confirm_at:
            # Counted in the evidence, so named in the reason, for what it is.
            confirmed.append(f"the series agree in part (series {p.series:.2f}, on each "
                             f"other's ink {on_ink:.2f}"
                             + (f", x ranges {x_range:.2f}" if x_range is not None else "")
                             + f"){where}")
    return agreement


def _data_difference(p: PanelEvidence, settings: EvidenceSettings,
                     inks: tuple[float | None, float | None], axes_doubt: str | None,
                     confirmed: list[str], doubts: list[str]) -> float:
    """How far the panel's data differ, when nothing casts doubt on the readings."""
    where = p.where
    ink, on_ink = inks
    difference = 0.0
    # Difference in the data: the series and the ink both show it, read either way (the ink
    # against the ink, and each chart's series against the other's ink), on axes that hold.
    if p.series is not None and ink is not None:
        data = min(1.0 - p.series, 1.0 - max(ink, on_ink if on_ink is not None else ink))
        if data > 0:
            if axes_doubt is not None or p.series_doubt is not None:
                if data >= settings.report_at:
                    doubts.append(f"the series ({p.series:.2f}) and the ink ({ink:.2f}) differ, "
                                  f"but {axes_doubt or p.series_doubt}{where}")
            else:
                difference = data
                if data >= settings.confirm_at:
                    # Named from the strength that counts, not only from the strong ones: a
                    # weak difference can still decide an answer.
                    confirmed.append(f"the series ({p.series:.2f}) and the ink ({ink:.2f}, "
                                     f"series on ink {on_ink:.2f}) differ"
                                     + (" slightly" if data < settings.report_at else "")
                                     + where)
    elif p.series is not None and p.series <= 1.0 - settings.report_at:
        doubts.append(f"the series differ ({p.series:.2f}) but no ink confirms it{where}")
    return difference


def _swap(p: PanelEvidence, settings: EvidenceSettings, so_far: tuple[float, float],
          confirmed: list[str], doubts: list[str]) -> tuple[float, float]:
    """(agreement, difference) after a swapped legend is weighed."""
    where = p.where
    agreement, difference = so_far
    # A swapped legend: the names, read alike on both charts, pair the series one way and
    # their data the other way; how much of the named pairing's shortfall the data's pairing
    # makes up.
    if p.crossed is not None and p.series is not None and \
            p.crossed - p.series >= settings.confirm_at:
        swap = (p.crossed - p.series) / (1.0 - p.series)
        agreement = 0.0
        if p.unmatched:
            # With a published series left without a counterpart, the reader may have merged
            # or lost one: the data's pairing of the rest is no better read than the names'.
            doubts.append(f"the legends pair the series otherwise than their data do (data "
                          f"agreement {p.series:.2f} by name, {p.crossed:.2f} by data), but "
                          f"{p.unmatched} published series without a counterpart may have "
                          f"been merged or lost by the reader{where}")
        else:
            difference = max(difference, float(swap))
            if swap >= settings.confirm_at:
                confirmed.append(f"the legends name the series one way and their data pair "
                                 f"them the other way (data agreement {p.series:.2f} by name, "
                                 f"{p.crossed:.2f} by data){where}")
    return agreement, difference


def _crop(p: PanelEvidence, settings: EvidenceSettings, so_far: tuple[float, float],
          axes_doubt: str | None, confirmed: list[str], doubts: list[str]
          ) -> tuple[float, float]:
    """(agreement, difference) after a crop of the x range is weighed."""
    where = p.where
    agreement, difference = so_far
    # A crop: the x axes' tick labels and the data's x extents both say the ranges differ (a
    # crop keeps part of the range: ranges that do not overlap at all are misread axes).
    if p.x_ticks is not None and p.x_data is not None:
        crop = min(1.0 - p.x_ticks, 1.0 - p.x_data) / (1.0 - settings.same_x_range)
        crop = float(np.clip(crop - 1.0, 0.0, 1.0))  # nothing within a faithful re-plot's range
        if crop > 0 and min(p.x_ticks, p.x_data) < settings.some_x_overlap:
            if axes_doubt is None or "overlap" not in axes_doubt:
                doubts.append(f"the x ranges do not overlap (tick labels {p.x_ticks:.2f}, data "
                              f"{p.x_data:.2f}): an x axis misread rather than a crop{where}")
        elif crop > 0:
            if p.x_axes_confirmed and not p.y_in_data:
                # With a y axis unread the panels' pairing rests on their order alone (stacked
                # panels of their own scales, facets): ranges that differ may be two panels'.
                agreement = 0.0
                doubts.append(f"the x ranges differ (tick labels {p.x_ticks:.2f}, data "
                              f"{p.x_data:.2f}) but a y axis is unread{where}: the panels may "
                              f"be mispaired, no crop is confirmed")
            elif p.x_axes_confirmed:
                difference = max(difference, crop)
                confirmed.append(f"the x ranges differ on both the tick labels (overlap "
                                 f"{p.x_ticks:.2f}) and the data (overlap {p.x_data:.2f}){where}")
            else:
                # A crop that cannot be confirmed cannot be ruled out either: what agrees is
                # only part of the range.
                agreement = 0.0
                doubts.append(f"the x ranges may differ (tick labels {p.x_ticks:.2f}, data "
                              f"{p.x_data:.2f}) but an x axis has fewer than three tick labels "
                              f"on its fit{where}: neither a crop nor agreement is confirmed")
    return agreement, difference


def _finish(agreement: float, difference: float, confirmed: list[str], doubts: list[str],
            settings: EvidenceSettings) -> Evidence:
    # Below the precision of a chart reading nothing is confirmed either way.
    agreement = agreement if agreement >= settings.confirm_at else 0.0
    difference = difference if difference >= settings.confirm_at else 0.0
    agreement, difference = round(float(agreement), DIGITS), round(float(difference), DIGITS)
    same = calibrated(agreement - difference, settings)
    return Evidence(agreement=agreement, difference=difference, same_data=same,
                    confirmed=confirmed, doubts=doubts)


def calibrated(value: float, settings: EvidenceSettings) -> float:
    """The calibration table of the settings at `value` (linear between its knots, flat past
    the ends)."""
    xs, ys = zip(*settings.calibration)
    return round(float(np.interp(value, xs, ys)), DIGITS)
