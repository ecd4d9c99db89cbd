"""How far two readings can be trusted: an axis's tick labels, the reading confidence of a
comparison, a crop both readings confirm, and each panel's readings for the evidence.
"""

from __future__ import annotations

import numpy as np

from judging.signals.chart.compare.frame import iou
from judging.signals.chart.compare.legends import named_alike, names_status
from judging.signals.chart.compare.panels import PanelResult
from judging.signals.chart.evidence import PanelEvidence
from judging.signals.chart.settings import compare_settings as _s
from judging.signals.chart.types import Panel, Series

DOUBT_UNREAD = 0.2
"""Trust in a comparison when an axis or the data series of a chart were not read: little."""
DOUBT_STRONG = 0.3
"""Trust when the readings may be mispaired or misread outright (panel counts differ, the
series split disagrees with the ink, an axis with under two tick labels)."""
DOUBT_MANY = 0.4
"""Trust when more series are drawn than colours can tell apart."""
DOUBT_TWO_TICKS = 0.6
"""The most an axis fitted to two tick labels can be trusted: nothing confirms the fit."""
DOUBT_MULTIPLIER = 0.7
"""Trust when a power-of-ten multiplier read on one chart only is assumed."""
SAME_RANGE = 0.9
"""Two x axes whose ranges overlap this far span the same range."""
TRUST_DIGITS = 3
"""Decimals the reading confidence is given with."""


def panel_evidence(index: int, count: int, pub: Panel, rep: Panel,
                    result: PanelResult) -> PanelEvidence:
    """One panel pair's readings for the evidence (judging.signals.chart.evidence)."""
    names, names_why = names_status(result, (pub.legend, rep.legend))
    # A swap rests on names read on every named pair, each attached to its series without a
    # rival of a similar look (a grey a few levels off, another blue).
    names_read = names == "agree" and all(
        b.name and a.name_sure and b.name_sure for a, b, _ in result.matches if a.name)
    where = f" (panel {index})" if count > 1 else ""
    bars = all(s.kind == "bar" for s in result.published_series + result.reproduced_series) \
        and bool(result.published_series)
    doubt = None
    for who, panel in (("published", pub), ("reproduced", rep)):
        for name in ("x", "y"):
            axis = getattr(panel, name)
            if axis is None:
                if name == "x" and (result.categorical_x or bars):
                    continue  # categories on both charts: compared over the data's extent
                doubt = doubt or f"the {name} axis of the {who} chart is unread"
                continue
            trust, why = axis_trust(axis)
            if trust < 1.0:
                doubt = doubt or f"the {name} axis of the {who} chart: {why}"
    if any(result.decades):
        doubt = doubt or "the axes differ by a power of ten (an unread axis multiplier?)"
    unmatched = result.published - len(result.matches)
    split = abs(result.published - result.reproduced)
    if split >= _s().split_doubt:
        # A reproduction that leaves out or adds a series changes the count by one; more is the
        # reader's split of the ink (legend text read as lines, a band read as two edges).
        series_doubt = (f"{result.published} series read in the published panel, "
                        f"{result.reproduced} in the reproduction: the reader's series split "
                        f"is in doubt")
    else:
        series_doubt = None
    if result.scale_match is False:
        doubt = doubt or "the axes' scale types differ (linear and log)"
    x_confirmed = pub.x is not None and rep.x is not None and \
        axis_trust(pub.x)[0] >= 1.0 and axis_trust(rep.x)[0] >= 1.0
    return PanelEvidence(index=index, where=where, series=result.series_agreement,
                         crossed=result.crossed if names_read else None,
                         ink=result.ink_coverage, x_ticks=result.x_axis_iou,
                         x_data=result.x_iou, y_in_data=pub.y is not None and rep.y is not None,
                         axes_doubt=doubt, series_doubt=series_doubt, unmatched=unmatched,
                         scales_differ=result.scale_match is False,
                         x_axes_confirmed=x_confirmed, names=names,
                         names_why=names_why, series_on_ink=result.series_on_ink)


def _same_x_range(pub: Panel, rep: Panel) -> bool:
    if pub.x is None or rep.x is None or pub.x.scale != rep.x.scale:
        return False
    a, b = pub.x.data_range, rep.x.data_range
    if pub.x.scale == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = tuple(np.log10(a)), tuple(np.log10(b))
    if not all(np.isfinite(v) for v in (*a, *b)):
        return False
    return iou((min(a), max(a)), (min(b), max(b))) >= SAME_RANGE


def axis_trust(axis) -> tuple[float, str]:
    """How far an axis reading can be trusted, and why not fully: the tick labels used must be
    at least three (two define any line; a third confirms it) and lie on the linear or log fit.
    The fit's own confidence (which also counts labels left out) is the floor."""
    ticks = axis.ticks
    log = axis.scale == "log"
    values = np.array([t.value for t in ticks], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        fitted = axis.to_data(np.array([t.pixel for t in ticks], dtype=float))
        if log:
            values, fitted = np.log10(values), np.log10(fitted)
        lo, hi = axis.data_range
        span = abs(float(np.log10(hi) - np.log10(lo)) if log else float(hi - lo))
    if len(ticks) < 2 or not np.isfinite(span) or span <= 0:
        return min(axis.confidence, DOUBT_STRONG), f"{len(ticks)} tick label(s) read"
    residual = float(np.nanmax(np.abs(values - fitted))) / span
    if not np.isfinite(residual) or residual > _s().tick_residual:
        trust = max(axis.confidence, DOUBT_UNREAD)
        return min(trust, 0.5), f"tick labels off the {axis.scale} fit by {residual:.1%} of the span"
    if len(ticks) == 2:
        return max(axis.confidence, DOUBT_TWO_TICKS), "only two tick labels: nothing confirms the fit"
    return 1.0, ""


def _side_doubts(who: str, panel: Panel, significant: list[Series], read: int,
                 result: PanelResult, where: str) -> list[tuple[float, str]]:
    """The doubts about one chart's reading of one panel: its axes, its data series, a scatter
    cloud, too many series to tell apart by colour."""
    scores: list[tuple[float, str]] = []
    bars = bool(significant) and all(s.kind == "bar" for s in significant)
    for name in ("x", "y"):
        axis = getattr(panel, name)
        if axis is None and name == "x" and bars:
            # Bars stand on categories: compared by position, no numeric axis needed.
            continue
        if axis is None and name == "x" and result.categorical_x:
            # Neither chart has numbers on x (categories, months, dates): both are
            # compared over the data's extent, which is the same frame on both sides.
            if who == "published":
                scores.append((_s().categorical_x, f"no numeric x axis on either chart{where} "
                                                   f"(categories or dates): x compared over "
                                                   f"the extent of the data"))
            continue
        if axis is None:
            scores.append((DOUBT_UNREAD, f"{name} axis of the {who} chart unread{where}"))
            continue
        trust, why = axis_trust(axis)
        if trust < 1.0:
            scores.append((trust, f"{name} axis of the {who} chart: {why}{where}"))
    # Bars of one colour per category are one point each: together they are data.
    bar_points = sum(len(s.points) for s in significant if s.kind == "bar")
    if not any(len(s.points) >= _s().min_data_points for s in significant) and \
            not (bars and bar_points >= _s().min_data_points):
        scores.append((DOUBT_UNREAD, f"no substantial data series read in the {who} chart"
                            f"{where} (only marks of a few points: spans, a legend)"))
    if any(s.kind == "scatter" and len(s.points) > _s().small_scatter for s in significant):
        scores.append((_s().cloud_trust if named_alike(result) else 0.5,
                       f"a scatter cloud in the {who} chart{where}: overlapping "
                       f"markers are read as blobs, so markers and series are "
                       f"approximate"))
    many = max(len(significant), read)
    from_data = bool(significant) and all(s.style.startswith("data:") for s in significant)
    if many > _s().max_reliable_series and not from_data:  # data never confuses series
        scores.append((DOUBT_MANY, f"{many} series in the {who} chart{where}: more than "
                            f"{_s().max_reliable_series} cannot be told apart by colour"))
    return scores


def _pair_doubts(pub: Panel, rep: Panel, result: PanelResult, where: str
                 ) -> list[tuple[float, str]]:
    """The doubts about how one panel pair was compared: an assumed multiplier, a line read in
    part, series split otherwise on either side while the data cover each other."""
    scores: list[tuple[float, str]] = []
    if any(result.decades):
        shifts = ", ".join(f"{name} x10^{k}" for name, k in zip("xy", result.decades) if k)
        scores.append((DOUBT_MULTIPLIER, f"axis values differ by a power of ten ({shifts}){where}: an "
                            f"axis multiplier read on one chart only is assumed"))
    for a, b, _ in result.matches:
        if a.kind != "line" or b.kind != "line" or a.normalised is None or \
                b.normalised is None or not _same_x_range(pub, rep):
            continue
        wa, wb = float(np.ptp(a.normalised[:, 0])), float(np.ptp(b.normalised[:, 0]))
        if min(wa, wb) < _s().partial_line * max(wa, wb):
            scores.append((0.5, f"a matched line spans {min(wa, wb):.0%} of its plot width "
                                f"against {max(wa, wb):.0%} under the same x range{where}: "
                                f"read in part, or cut (not sure enough to fail)"))
            break
    coverage = result.coverage
    split_differs = result.published != result.reproduced or \
        len(result.matches) < result.published
    if coverage is not None and min(coverage) >= _s().same_ink and split_differs:
        scores.append((DOUBT_STRONG, f"the plotted data cover each other ({coverage[0]:.2f}/"
                            f"{coverage[1]:.2f}) but the series read differ "
                            f"({result.published} published, {result.reproduced} reproduced, "
                            f"{len(result.matches)} matched){where}: series split unreliable"))
    return scores


def reading_confidence(pub_panels: list[Panel], rep_panels: list[Panel],
                       results: list[PanelResult], signals: dict) -> tuple[float, list[str]]:
    """How far the comparison can be trusted to FAIL a figure, in [0, 1], and why not more.

    The weakest of the checks the issue names: every paired panel has both axes read, with
    tick labels consistent with a linear or log fit (the fit's confidence); the two charts have
    the same number of panels; a panel has few enough series to tell apart by colour; the
    series-free data coverage agrees with the series matching (when the ink covers each other
    but the series do not match, the reader split the series differently, e.g. a band, a fit
    line or translucent points, and a series-based "no" would be the reader's error); axes read
    without a multiplier. A pair that matches needs no such trust: two independent readings
    rarely agree by accident.
    """
    scores: list[tuple[float, str]] = []
    confirmed: list[str] = []
    if len(pub_panels) != len(rep_panels):
        scores.append((DOUBT_STRONG, f"{len(pub_panels)} data panels read in the published chart, "
                            f"{len(rep_panels)} in the reproduction: panels may be mispaired"))
    for index, (pub, rep, result) in enumerate(zip(pub_panels, rep_panels, results), 1):
        where = f" (panel {index})" if len(results) > 1 else ""
        for who, panel, significant, read in (
                ("published", pub, result.published_series, result.read_counts[0]),
                ("reproduced", rep, result.reproduced_series, result.read_counts[1])):
            scores += _side_doubts(who, panel, significant, read, result, where)
    for index, result in enumerate(results, 1):
        where = f" (panel {index})" if len(results) > 1 else ""
        pub, rep = pub_panels[index - 1], rep_panels[index - 1]
        scores += _pair_doubts(pub, rep, result, where)
        crop = _confirmed_crop(pub, rep, result)
        if crop:
            confirmed.append(crop + where)
    if not scores:
        return 1.0, []
    scores.sort(key=lambda item: item[0])
    value = float(scores[0][0])
    doubts = [why for v, why in scores if v < 1.0][:4]
    if confirmed and value < _s().confirmed_difference:
        # A difference that two independent readings show (the tick labels and the ink) does
        # not depend on how the series were split: it is enough to fail, whatever else is
        # uncertain. The doubts stay in the reason for whoever reviews it.
        return _s().confirmed_difference, [f"confirmed: {confirmed[0]}", *doubts][:4]
    return round(value, TRUST_DIGITS), doubts


def _confirmed_crop(pub: Panel, rep: Panel, result: PanelResult) -> str:
    """Why the two panels' x ranges certainly differ, or "" when nothing confirms it.

    A crop shows twice: the x axes' tick labels span other ranges (a plotting library fits
    the axis to the data) and the plotted data, mapped through those axes, spans other ranges
    too. Both readings must agree and both axes must be read with at least three tick labels
    on their fit (axis_trust), so that neither a misread tick nor a line read in part (its ink
    is short, its axis is not) can fake it."""
    if pub.x is None or rep.x is None or result.x_axis_iou is None or result.x_iou is None:
        return ""
    if axis_trust(pub.x)[0] < 1.0 or axis_trust(rep.x)[0] < 1.0:
        return ""
    if result.x_axis_iou >= _s().crop_overlap or result.x_iou >= _s().crop_overlap:
        return ""
    return (f"the x ranges differ on both the tick labels (overlap {result.x_axis_iou:.2f}) and "
            f"the plotted data (overlap {result.x_iou:.2f})")
