"""One panel pair: its series paired (by legend name, else by the Hungarian assignment on data
similarity) and what the pairs agree on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from judging.models import Tolerance
from judging.signals.chart.compare.curves import (
    SeriesPair,
    bar_match_reach,
    cloud_like,
    compare_bars,
    compare_clouds,
    compare_curves,
    compare_points,
    with_reach,
)
from judging.signals.chart.compare.frame import (
    Frame,
    align_x_extent,
    axis_iou,
    claim_tolerance,
    coords,
    extent,
    ink_coords,
    iou,
    panel_frame,
    power_of_ten_shift,
    unit_frame,
    y_span,
)
from judging.signals.chart.compare.ink import InkIndex, data_coverage, drawn_over
from judging.signals.chart.compare.names import (
    linear_sum_assignment,
    name_pairs,
    name_similarity,
)
from judging.signals.chart.settings import compare_settings as _s
from judging.signals.chart.types import (
    Panel,
    Series,
)

VALUES_FLOOR, VALUES_WEIGHT = 0.3, 0.7
"""A pair's value agreement weighs 70% of the agreement product: values none of which agree
leave 30% (the shape and the trend may still tell the same story)."""
TREND_FLOOR, TREND_WEIGHT = 0.75, 0.25
"""Opposite trends take a quarter off the series agreement (the shape already counts them)."""
OTHER_KIND = 0.4
"""Bars against lines (or the reverse) keep 40% of a pair's agreement: another chart of the
same numbers."""
MIN_MARKS = 3
"""Bars or markers fewer than this are no data series of their own (a legend handle, a span)."""
GREY_CHANNEL_SPREAD = 24
"""Channels within this many levels of each other: an achromatic (grey or black) colour."""
HEX = 16
"""The base of a colour's hexadecimal style ("#rrggbb")."""
FLAT_LEVELS = 200
"""A line's heights rounded to 1/200 of the plot: one level is one horizontal run."""
FRAME_RUNS, GRID_RUNS = 3, 8
"""Horizontal runs that make an axis line, a frame or a reference line (three at most), and
gridlines the tracer joined into one series (a few more)."""
FLAT_SHARE = 0.9
"""The share of a line's points on those runs for it to be chart furniture."""
LIGHT_GREY = 0xB0
"""Channels all at least this light: a light grey line (gridlines), not a data curve."""
RETRACED = 0.9
"""A series whose values agree this far with a longer one of the same colour retraces it."""
TWIN = 0.8
"""An unmatched series that agrees this far (shape and values) with a matched one is a
fragment of it (a line the reader split in two), not an extra series."""
TEN = 10.0
"""The base of the powers of ten an unread axis multiplier shifts values by."""


def _data_similarity(pair: SeriesPair | None) -> float:
    """Shape and values alike, and, a little, how much of the x range the two share: a
    fragment of a line (a colour blend where two lines converge, a piece cut off) agrees with
    the line as well as the whole line does on the part it covers, and must not be preferred."""
    if pair is None:
        return 0.0
    return (1.0 - _s().x_overlap_weight) * (0.5 * pair.shape + 0.5 * pair.values) + \
        _s().x_overlap_weight * pair.x_overlap


@dataclass(frozen=True)
class PanelResult:
    published_series: list[Series]
    reproduced_series: list[Series]
    """The series that carry each panel's data (`data_series`), kept for reading_confidence."""
    matches: list[tuple[Series, Series, SeriesPair]]
    extra: int
    x_iou: float | None
    y_iou: float | None
    scale_match: bool | None
    coverage: tuple[float, float] | None = None
    """(share of the published points near a reproduced point, and the converse)."""
    decades: tuple[int, int] = (0, 0)
    """Powers of ten the reproduced x and y values were multiplied by (unread axis multipliers)."""
    read_counts: tuple[int, int] = (0, 0)
    """Series read on each side before colour blends were set aside: how many colours the
    reader had to tell apart (reading_confidence's "too many series")."""
    categorical_x: bool = False
    """Neither chart has a numeric x axis: x compared as a share of the data's extent."""
    x_axis_iou: float | None = None
    """Overlap of the two x axes' ranges read from their tick labels."""
    ink_coverage: tuple[float, float] | None = None
    """As `coverage`, on the panels' data ink (`Panel.ink`) instead of their series: a reading
    of the data that does not rest on the series extraction at all."""
    series_on_ink: tuple[float, float] | None = None
    """(share of the published series' points on the reproduced data ink, the converse): each
    chart's data as read against the other's ink as drawn, so that neither a series missed on
    one side nor furniture drawn on one side only (a band, a span, a label) counts."""
    drawn_on_both: int = 0
    """Extra reproduced series (counted in `extra`) whose points lie on the published data ink:
    the published chart draws them too, its reader did not take them for series."""
    crossed: float | None = None
    """When the legend names pair some series otherwise than their data do: the agreement of
    the series paired by their data alone (`_series_agreement`)."""

    @property
    def series_agreement(self) -> float | None:
        """Agreement of this panel's paired series (see `_series_agreement`)."""
        if not self.published_series:
            return None
        return _series_agreement(self.matches, published=self.published,
                                 extra=self.extra - self.drawn_on_both,
                                 reproduced=self.reproduced - self.drawn_on_both)

    @property
    def published(self) -> int:
        return len(self.published_series)

    @property
    def reproduced(self) -> int:
        return len(self.reproduced_series)


def data_series(series: list[Series]) -> list[Series]:
    """The series that carry the panel's data: lines spanning a fair share of the plot width,
    bars and scatters with a few points. Fragments (a line cut where others cross it, a stray
    legend handle) would otherwise count as series that are missing or extra."""
    series = _bars_by_category(series)
    out = []
    for s in series:
        norm = s.normalised if s.normalised is not None else s.points
        width = float(np.ptp(norm[:, 0])) if len(norm) else 0.0
        if s.kind == "line" and _frame_line(s, norm):
            continue
        if (s.kind == "line" and width >= _s().min_series_width) or \
                (s.kind != "line" and len(norm) >= MIN_MARKS):
            out.append(s)
    out = out or list(series)
    return _without_duplicates(out)


def _bars_by_category(series: list[Series]) -> list[Series]:
    """Bars coloured one colour per category (a bar a "series" of one point) are one series:
    compared bar by bar in category order, as a reader of the chart does."""
    singles = [s for s in series if s.kind == "bar" and len(s.points) < MIN_MARKS]
    if len(singles) < 2:
        return series
    points = np.concatenate([s.points for s in singles])
    order = np.argsort(points[:, 0], kind="stable")
    normalised = None
    if all(s.normalised is not None for s in singles):
        normalised = np.concatenate([s.normalised for s in singles])[order]
    merged = Series(name=None, style="bars by category", kind="bar", points=points[order],
                    confidence=min(s.confidence for s in singles),
                    x_units=singles[0].x_units, y_units=singles[0].y_units,
                    normalised=normalised)
    return [s for s in series if not any(s is t for t in singles)] + [merged]


def _frame_line(series: Series, norm: np.ndarray) -> bool:
    """A grey or black, perfectly flat line: an axis line or the frame of a plot area drawn
    without a box (Vega, ggplot2 themes), a reference line across the plot (chance level, a
    baseline, y = 0), the edge of a legend box, a gridline fragment. Chart furniture, not data: a
    reproduction that leaves out a reference line still shows the published series (a flat
    data series drawn in grey is left out of both charts alike)."""
    match = re.match(r"#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})", series.style)
    if match is None or len(norm) < 2:
        return False
    channels = [int(c, HEX) for c in match.groups()]
    if max(channels) - min(channels) >= GREY_CHANNEL_SPREAD:
        return False
    # An achromatic line made of (at most three) horizontal runs: at the edge or across the plot
    # it is an axis line, a frame or a reference line; shorter, the edges of a legend box or
    # gridline fragments the tracer joined. A grey data curve takes many levels.
    _, counts = np.unique(np.round(norm[:, 1] * FLAT_LEVELS), return_counts=True)
    if float(np.sort(counts)[-FRAME_RUNS:].sum()) >= FLAT_SHARE * len(norm):
        return True
    # A light grey line on a few levels is gridlines the tracer joined into one "series".
    light = min(channels) >= LIGHT_GREY
    return light and float(np.sort(counts)[-GRID_RUNS:].sum()) >= FLAT_SHARE * len(norm)


def _without_duplicates(series: list[Series]) -> list[Series]:
    """Drop a series that retraces a longer one of the same colour (a line the reader split
    into two styles where other lines cross it)."""
    frame = Frame(x_log=False, y_log=False, x_data=False, y_data=False)
    points = [coords(s, frame) for s in series]
    keep = []
    for k in sorted(range(len(series)), key=lambda k: -len(points[k])):
        colour = series[k].style.split()[0]
        duplicate = any(
            series[m].style.split()[0] == colour and (pair := compare_curves(
                points[m], points[k], span=1.0, tol_abs=None, tol_rel=None)) is not None
            and pair.values >= RETRACED and pair.x_overlap >= _s().min_x_overlap for m in keep)
        if not duplicate:
            keep.append(k)
    return [series[k] for k in sorted(keep)]


@dataclass
class _Sides:
    """One panel pair's series and points in the frame they are compared in: the frame's units
    (`*_pts`, the reproduction shifted by an unread multiplier and aligned on categories) and
    the published axes' unit frame (`unit_*`, and the data ink's index there)."""

    frame: Frame
    pub_series: list[Series]
    rep_series: list[Series]
    pub_pts: list[np.ndarray]
    rep_pts: list[np.ndarray]
    decades: tuple[int, int]
    categorical_x: bool
    origin: np.ndarray
    scale: np.ndarray
    pub_index: InkIndex
    rep_index: InkIndex
    unit_pub: list[np.ndarray]
    unit_rep: list[np.ndarray]
    ink_coverage: tuple[float, float] | None
    series_on_ink: tuple[float, float] | None


def _sides(pub: Panel, rep: Panel, frame: Frame) -> _Sides:
    pub_series, rep_series = data_series(pub.series), data_series(rep.series)
    pub_pts = [coords(s, frame) for s in pub_series]
    rep_pts = [coords(s, frame) for s in rep_series]
    decades = (power_of_ten_shift(pub.x, rep.x, frame.x_data and not frame.x_log),
               power_of_ten_shift(pub.y, rep.y, frame.y_data and not frame.y_log))
    if decades != (0, 0):
        factor = np.array([TEN ** decades[0], TEN ** decades[1]])
        rep_pts = [p * factor for p in rep_pts]
    categorical_x = pub.x is None and rep.x is None
    pub_ink, rep_ink = ink_coords(pub, frame, pub_pts), ink_coords(rep, frame, rep_pts)
    if decades != (0, 0):
        rep_ink = rep_ink * factor
    if categorical_x:
        rep_pts, rep_ink = align_x_extent(pub_pts, rep_pts, rep_ink)
    origin, scale = unit_frame(pub, frame, pub_pts)
    pub_ink_u, rep_ink_u = (pub_ink - origin) / scale, (rep_ink - origin) / scale
    pub_index, rep_index = InkIndex(pub_ink_u), InkIndex(rep_ink_u)
    ink_coverage = (rep_index.share_near(pub_ink_u), pub_index.share_near(rep_ink_u)) \
        if len(pub_ink) >= 2 and len(rep_ink) >= 2 else None
    series_on_ink = None
    pub_all = np.concatenate([p for p in pub_pts if len(p)] or [np.zeros((0, 2))])
    rep_all = np.concatenate([p for p in rep_pts if len(p)] or [np.zeros((0, 2))])
    if min(len(pub_all), len(rep_all), len(pub_ink), len(rep_ink)) >= 2:
        series_on_ink = (rep_index.share_near((pub_all - origin) / scale),
                         pub_index.share_near((rep_all - origin) / scale))
    return _Sides(frame=frame, pub_series=pub_series, rep_series=rep_series, pub_pts=pub_pts,
                  rep_pts=rep_pts, decades=decades, categorical_x=categorical_x, origin=origin,
                  scale=scale, pub_index=pub_index, rep_index=rep_index,
                  unit_pub=[(p - origin) / scale for p in pub_pts],
                  unit_rep=[(p - origin) / scale for p in rep_pts],
                  ink_coverage=ink_coverage, series_on_ink=series_on_ink)


def _pair_every(sides: _Sides, cloud_pub: list[bool], cloud_rep: list[bool], *, span: float,
                tol_abs: float | None, tol_rel: float | None
                ) -> dict[tuple[int, int], SeriesPair | None]:
    """Every published series compared with every reproduced one, each pair the way its marks
    are compared (clouds, bars, point sets, curves)."""
    s = sides
    bar_reach = bar_match_reach(s.unit_pub, s.pub_series)
    pairs = {}
    for i, a in enumerate(s.pub_pts):
        for j, b in enumerate(s.rep_pts):
            if cloud_pub[i] or cloud_rep[j]:
                pair = compare_clouds(s.unit_pub[i], s.unit_rep[j])
            elif s.pub_series[i].kind == s.rep_series[j].kind == "bar" and bar_reach is not None:
                pair = compare_bars(s.unit_pub[i], s.unit_rep[j], reach=bar_reach)
            elif "scatter" in (s.pub_series[i].kind, s.rep_series[j].kind):
                pair = compare_points(a, b, origin=s.origin, scale=s.scale)
            else:
                pair = compare_curves(a, b, span=span, tol_abs=tol_abs, tol_rel=tol_rel)
            pairs[i, j] = pair
    return pairs


def _assign(sides: _Sides, pairs: dict) -> tuple[dict[int, int], float | None]:
    """Published index -> reproduced index, one to one, and the agreement of the series paired
    by their data alone when the legends pair some otherwise (None when they do not)."""
    pub_series, rep_series = sides.pub_series, sides.rep_series
    data = np.array([[_data_similarity(pairs[i, j]) for j in range(len(sides.rep_pts))]
                     for i in range(len(sides.pub_pts))]).reshape(len(sides.pub_pts),
                                                                  len(sides.rep_pts))
    by_name = name_pairs(pub_series, rep_series)
    by_data = data_pairs(data) if by_name else {}
    crossed = None
    crossing = [(i, j) for i, j in by_name.items() if by_data.get(i) not in (None, j)]
    # A swap is proof only from names read alike, letter for letter (OCR slips folded): a near
    # name ("EnvPool (sync)" for "EnvPool (async)") may be another entry of the same legend
    # whose own series went unnamed.
    if crossing and all(name_similarity(pub_series[i].name, rep_series[j].name) == 1.0
                        for i, j in crossing):
        # The legends pair some series otherwise than their data do: how well the data agree
        # paired the data's way (a swapped legend: the data match the other way round).
        crossed = _series_agreement([(pub_series[i], rep_series[j], pairs[i, j])
                                     for i, j in by_data.items() if pairs[i, j] is not None],
                                    published=len(pub_series), extra=0, reproduced=len(rep_series))
    # One to one: a published series is matched by its legend name when both legends name it
    # alike (a reproduction whose labels were swapped must not be matched by shape), else by
    # the Hungarian assignment on data similarity.
    assigned = dict(by_name)
    free_pub = [i for i in range(len(pub_series)) if i not in assigned]
    free_rep = [j for j in range(len(rep_series)) if j not in assigned.values()]
    if free_pub and free_rep:
        sub = data[np.ix_(free_pub, free_rep)]
        for a, b in zip(*linear_sum_assignment(-sub)):
            if sub[a, b] >= _s().min_match:
                assigned[free_pub[a]] = free_rep[b]
    return assigned, crossed


def _left_over(sides: _Sides, pairs: dict, assigned: dict[int, int]
               ) -> tuple[int, set[int], int]:
    """(extra reproduced series, reproduced series set aside as blends, extra ones drawn on
    both charts)."""
    s = sides
    # A reproduced series left over is extra, unless it repeats the values of a series it
    # could stand for (a fragment of a line the reader split in two).
    extra = 0
    blends = set()
    for j in range(len(s.rep_series)):
        if j in assigned.values():
            continue
        twins = [pairs[i, j] for i in assigned if pairs[i, j] is not None]
        if any(p.values >= TWIN and p.shape >= TWIN for p in twins) or \
                drawn_over(j, s.rep_pts, s.origin, s.scale):
            blends.add(j)
            continue
        extra += 1
    # Unmatched series that repeat a matched one (a fragment of a line the reader split in two)
    # or lie on their chart's other series (a colour blend where lines converge) are neither
    # missing nor extra, on either side, and are not counted among the chart's series.
    # A published series the reproduction lacks is missing even when a reproduced series
    # resembles it (a left-out curve among close ones): only a colour blend is set aside there,
    # and one the legend names must be short to be one (a named curve is a curve, however close
    # to the others).
    # An extra reproduced series whose points lie on the published chart's data ink is drawn on
    # both charts: the published reader missed it (a faint reference line), it is not extra.
    drawn_on_both = sum(1 for j in range(len(s.rep_series))
                        if j not in assigned.values() and j not in blends
                        and s.pub_index.share_near(s.unit_rep[j]) >= _s().drawn_on_both)
    return extra, blends, drawn_on_both


def _ranges(pub: Panel, rep: Panel, sides: _Sides, clouds: bool
            ) -> tuple[float | None, float | None, bool | None]:
    """(x overlap, y overlap of the data read, whether the axes' scale types match)."""
    x_iou = y_iou = None
    ext = [(extent(sides.pub_pts, c), extent(sides.rep_pts, c)) for c in (0, 1)]
    if ext[0][0] and ext[0][1]:
        x_iou = iou(*ext[0])
    # A cloud's y extent is its outliers', which a reader keeps or loses with the marker style
    # (and a fit line drawn in the cloud's colour may be all that is read of it): clouds are
    # compared by their medians, and only x says whether the range was cut.
    if ext[1][0] and ext[1][1] and not clouds:
        y_iou = iou(*ext[1])
    scale_match = None
    compared = [(a.scale, b.scale) for a, b in ((pub.x, rep.x), (pub.y, rep.y))
                if a is not None and b is not None]
    if compared:
        scale_match = all(a == b for a, b in compared)
    return x_iou, y_iou, scale_match


def compare_panels(pub: Panel, rep: Panel, tolerance: Tolerance | None) -> PanelResult:
    frame = panel_frame(pub, rep)
    span = y_span(pub, frame)
    tol_abs, tol_rel = claim_tolerance(tolerance, frame)
    s = _sides(pub, rep, frame)
    cloud_pub = [x.kind == "scatter" and cloud_like(p) for x, p in zip(s.pub_series, s.unit_pub)]
    cloud_rep = [x.kind == "scatter" and cloud_like(p) for x, p in zip(s.rep_series, s.unit_rep)]
    pairs = _pair_every(s, cloud_pub, cloud_rep, span=span, tol_abs=tol_abs, tol_rel=tol_rel)
    assigned, crossed = _assign(s, pairs)
    matches = [(s.pub_series[i], s.rep_series[j],
                with_reach(pairs[i, j], s.unit_pub[i], s.unit_rep[j], s.pub_index, s.rep_index))
               for i, j in sorted(assigned.items()) if pairs[i, j] is not None]
    extra, blends, drawn_on_both = _left_over(s, pairs, assigned)
    rep_kept = [x for j, x in enumerate(s.rep_series) if j not in blends]
    pub_kept = [x for i, x in enumerate(s.pub_series)
                if i in assigned or not drawn_over(i, s.pub_pts, s.origin, s.scale,
                                                   short=bool(x.name))]
    x_iou, y_iou, scale_match = _ranges(pub, rep, s, any(cloud_pub) or any(cloud_rep))
    return PanelResult(published_series=pub_kept, reproduced_series=rep_kept, matches=matches,
                       extra=extra, x_iou=x_iou, y_iou=y_iou, scale_match=scale_match,
                       coverage=data_coverage(pub, frame, s.pub_pts, s.rep_pts),
                       decades=s.decades, ink_coverage=s.ink_coverage,
                       series_on_ink=s.series_on_ink, drawn_on_both=drawn_on_both,
                       read_counts=(len(s.pub_series), len(s.rep_series)),
                       categorical_x=s.categorical_x, x_axis_iou=axis_iou(pub.x, rep.x),
                       crossed=crossed)


def data_pairs(data: np.ndarray) -> dict[int, int]:
    """Published index -> reproduced index by data similarity alone (one to one)."""
    if data.size == 0:
        return {}
    return {int(i): int(j) for i, j in zip(*linear_sum_assignment(-data))
            if data[i, j] >= _s().min_match}


def _series_agreement(matches: list[tuple[Series, Series, SeriesPair]], *, published: int,
                      extra: int, reproduced: int) -> float:
    """How far the paired series of one panel show the same data, in [0, 1]: every published
    series matched, none extra, and each pair alike in shape, values and trend over the x range
    both span, drawn as the same kind of mark (bars as bars). A product, so that one wrong
    aspect pulls it down; the axis scales are left to their own readings. A pair compared on
    part of its range only (a curve matched to a shorter line) agrees on that part only."""
    if not published:
        return 0.0
    matched = len(matches) / published
    extra_share = extra / max(1, reproduced)
    worst = min((((0.5 + 0.5 * p.shape) * (VALUES_FLOOR + VALUES_WEIGHT * p.values) *
                  (TREND_FLOOR + TREND_WEIGHT * p.trend_same) * p.reach_factor() *
                  (1.0 if (a.kind == "bar") == (b.kind == "bar") else OTHER_KIND))
                 for a, b, p in matches), default=0.0)
    return float(np.clip((1.0 - extra_share) ** 2 * matched ** 2 * worst, 0.0, 1.0))
