"""compare_charts and render_overlay: what two chart readings agree on, in data units.

Panels are paired in reading order (top to bottom, left to right). Series are paired per panel
with the Hungarian assignment (scipy) on a cost that weighs legend names when both charts have
them and the data otherwise: the issue asks for "by legend name when both have one, else by
shape", and a name read by OCR can be partial ("no" for "no aug"), so names weigh, not decide.
"""

from __future__ import annotations

import difflib
import re
from contextvars import ContextVar
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image, ImageDraw

from judging.models import Tolerance
from judging.signals.chart.evidence import PanelEvidence, weigh
from judging.signals.chart.settings import DEFAULT_COMPARE, CompareSettings
from judging.signals.chart.types import (
    CHART_SIGNALS,
    ChartComparison,
    ChartReading,
    Panel,
    Series,
)

#: The settings of the comparison under way: `compare` makes its record the active one for the
#: helpers of this module while it runs (a context variable, so concurrent comparisons in
#: threads each see their own), instead of handing it down through every helper.
_ACTIVE: ContextVar[CompareSettings] = ContextVar("chart_compare_settings",
                                                  default=DEFAULT_COMPARE)


def _s() -> CompareSettings:
    return _ACTIVE.get()


def linear_sum_assignment(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scipy's Hungarian assignment, imported on first use: scipy.optimize costs a quarter of a
    second to import, and every `judging` command imports the signals package."""
    from scipy.optimize import linear_sum_assignment as assign

    return assign(cost)


# --- coordinates -----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Frame:
    """How one panel's points are compared: log10 on log axes, data units where both charts'
    axes were read, else plot-area units (0..1)."""

    x_log: bool
    y_log: bool
    x_data: bool
    y_data: bool


def _frame(pub: Panel, rep: Panel) -> _Frame:
    def both(attr: str) -> tuple[bool, bool]:
        a, b = getattr(pub, attr), getattr(rep, attr)
        data = a is not None and b is not None
        return data, data and a.scale == "log" and b.scale == "log"

    x_data, x_log = both("x")
    y_data, y_log = both("y")
    return _Frame(x_log=x_log, y_log=y_log, x_data=x_data, y_data=y_data)


def _coords(series: Series, frame: _Frame) -> np.ndarray:
    """The series' points in the frame's units (finite rows only)."""
    norm = series.normalised if series.normalised is not None else series.points
    x = series.points[:, 0] if frame.x_data and series.x_units == "data" else norm[:, 0]
    y = series.points[:, 1] if frame.y_data and series.y_units == "data" else norm[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if frame.x_log and frame.x_data:
            x = np.log10(x)
        if frame.y_log and frame.y_data:
            y = np.log10(y)
    pts = np.column_stack([x, y])
    pts = pts[np.isfinite(pts).all(axis=1)]
    return pts[np.argsort(pts[:, 0], kind="stable")]


def _y_span(panel: Panel, frame: _Frame) -> float:
    """The published panel's y extent in the frame's units (axis range, else data extent)."""
    if frame.y_data and panel.y is not None:
        lo, hi = panel.y.data_range
        if frame.y_log:
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = np.log10(lo), np.log10(hi)
        span = abs(float(hi) - float(lo))
        if np.isfinite(span) and span > 0:
            return span
    if not frame.y_data:
        return 1.0
    ys = np.concatenate([_coords(s, frame)[:, 1] for s in panel.series] or [np.zeros(1)])
    return float(np.ptp(ys)) or 1.0


# --- curves ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Pair:
    shape: float
    """1 = same shape (z-normalised curves correlate), 0 = opposite or unrelated."""
    values: float
    """Share of compared points within the value tolerance."""
    max_error: float
    """Largest |difference| as a share of the published y span."""
    trend_same: bool
    x_overlap: float
    cloud: bool = False
    """Compared as point clouds (by conditional medians), not as curves."""
    reach: float | None = None
    """The share of both series' points that were compared (inside the x range both span) or,
    outside it, lie on the other chart's data ink (a line read in part on one chart); None:
    not measured (the x overlap stands for it)."""

    def reach_factor(self) -> float:
        if self.reach is not None:
            return self.reach
        return min(1.0, self.x_overlap / _s().full_x_overlap)


def _resample(pts: np.ndarray, xs: np.ndarray) -> np.ndarray:
    # Collapse repeated x (a vertical stroke, scatter points in one column) to their mean first:
    # np.interp needs increasing x.
    ux, inverse = np.unique(pts[:, 0], return_inverse=True)
    uy = np.bincount(inverse, weights=pts[:, 1]) / np.bincount(inverse)
    return np.interp(xs, ux, uy)


def _direction(y: np.ndarray, span: float) -> int:
    """-1 falling, 0 flat, +1 rising: the least-squares slope over the whole curve."""
    if len(y) < 2:
        return 0
    slope = np.polyfit(np.linspace(0, 1, len(y)), y, 1)[0]
    return 0 if abs(slope) < _s().flat * span else int(np.sign(slope))


def _compare(pub: np.ndarray, rep: np.ndarray, *, span: float, tol_abs: float | None,
             tol_rel: float | None) -> _Pair | None:
    if len(pub) < 2 or len(rep) < 2:
        return None
    lo, hi = max(pub[0, 0], rep[0, 0]), min(pub[-1, 0], rep[-1, 0])
    union = max(pub[-1, 0], rep[-1, 0]) - min(pub[0, 0], rep[0, 0])
    overlap = (hi - lo) / union if union > 0 else 1.0
    if hi <= lo or overlap < _s().min_x_overlap:
        return _Pair(shape=0.0, values=0.0, max_error=float("inf"), trend_same=False,
                     x_overlap=max(0.0, float(overlap)))
    xs = np.linspace(lo, hi, _s().samples)
    a, b = _resample(pub, xs), _resample(rep, xs)
    spread_a, spread_b = np.ptp(a), np.ptp(b)
    flat_a, flat_b = spread_a < _s().flat * span, spread_b < _s().flat * span
    if flat_a and flat_b:
        shape = 1.0
    elif flat_a or flat_b:
        shape = 0.0
    else:
        r = float(np.corrcoef(a, b)[0, 1])
        shape = max(0.0, r) if np.isfinite(r) else 0.0
    diff = np.abs(b - a)
    allowed = np.full_like(a, _s().default_value_tolerance * span)
    if tol_abs is not None:
        allowed[:] = tol_abs
    elif tol_rel is not None:
        allowed = tol_rel * np.abs(a)
    allowed = np.maximum(allowed, _s().reading_precision * span)
    return _Pair(shape=shape, values=float(np.mean(diff <= allowed)),
                 max_error=float(diff.max() / span),
                 trend_same=_direction(a, span) == _direction(b, span),
                 x_overlap=float(overlap))


#: Letters OCR confuses with digits (and the reverse): folded alike on both sides before names
#: are compared, so "H2O" read as "H20" or "var1" as "varl" is the same name.
_OCR_FOLD = str.maketrans({"l": "1", "i": "1", "o": "0"})


def _name_key(name: str) -> str:
    """A legend name as names are compared: lower case, letters and digits, OCR slips folded."""
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip().translate(_OCR_FOLD)


def _name_similarity(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    a, b = _name_key(a), _name_key(b)
    if not a or not b:
        return None
    if a == b:
        return 1.0
    ratio = difflib.SequenceMatcher(None, a, b).ratio()
    # OCR often keeps only the first word of a label ("no" of "no aug"), or loses its start to
    # a legend handle drawn over it ("t. (3)" of "opt. (3)").
    if a.startswith(b) or b.startswith(a):
        ratio = max(ratio, 0.8)
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) >= 3 and longer.endswith(shorter):
        ratio = max(ratio, 0.8)
    return ratio


def _data_similarity(pair: _Pair | None) -> float:
    """Shape and values alike, and, a little, how much of the x range the two share: a
    fragment of a line (a colour blend where two lines converge, a piece cut off) agrees with
    the line as well as the whole line does on the part it covers, and must not be preferred."""
    if pair is None:
        return 0.0
    return (1.0 - _s().x_overlap_weight) * (0.5 * pair.shape + 0.5 * pair.values) + \
        _s().x_overlap_weight * pair.x_overlap


@dataclass(frozen=True)
class _PanelResult:
    published_series: list[Series]
    reproduced_series: list[Series]
    """The series that carry each panel's data (`_significant`), kept for reading_confidence."""
    matches: list[tuple[Series, Series, _Pair]]
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


def _tolerance(tolerance: Tolerance | None, frame: _Frame) -> tuple[float | None, float | None]:
    # A claim tolerance is in data units: it applies only where y is in data units on a linear
    # axis (on a log axis a relative tolerance is an absolute one in log10 units).
    if tolerance is None or not frame.y_data:
        return None, None
    if frame.y_log:
        if tolerance.relative is not None:
            return float(np.log10(1 + tolerance.relative)), None
        return None, None
    return tolerance.absolute, tolerance.relative


def _iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    union = max(a[1], b[1]) - min(a[0], b[0])
    if union <= 0:
        return 1.0
    return max(0.0, hi - lo) / union


def _extent(points: list[np.ndarray], column: int) -> tuple[float, float] | None:
    values = [p[:, column] for p in points if len(p)]
    if not values:
        return None
    allv = np.concatenate(values)
    return float(allv.min()), float(allv.max())


def _significant(series: list[Series]) -> list[Series]:
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
                (s.kind != "line" and len(norm) >= 3):
            out.append(s)
    out = out or list(series)
    return _without_duplicates(out)


def _bars_by_category(series: list[Series]) -> list[Series]:
    """Bars coloured one colour per category (a bar a "series" of one point) are one series:
    compared bar by bar in category order, as a reader of the chart does."""
    singles = [s for s in series if s.kind == "bar" and len(s.points) < 3]
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
    channels = [int(c, 16) for c in match.groups()]
    if max(channels) - min(channels) >= 24:
        return False
    # An achromatic line made of (at most three) horizontal runs: at the edge or across the plot
    # it is an axis line, a frame or a reference line; shorter, the edges of a legend box or
    # gridline fragments the tracer joined. A grey data curve takes many levels.
    _, counts = np.unique(np.round(norm[:, 1] * 200), return_counts=True)
    if float(np.sort(counts)[-3:].sum()) >= 0.9 * len(norm):
        return True
    # A light grey line on a few levels is gridlines the tracer joined into one "series".
    light = min(channels) >= 0xB0
    return light and float(np.sort(counts)[-8:].sum()) >= 0.9 * len(norm)


def _without_duplicates(series: list[Series]) -> list[Series]:
    """Drop a series that retraces a longer one of the same colour (a line the reader split
    into two styles where other lines cross it)."""
    frame = _Frame(x_log=False, y_log=False, x_data=False, y_data=False)
    points = [_coords(s, frame) for s in series]
    keep = []
    for k in sorted(range(len(series)), key=lambda k: -len(points[k])):
        colour = series[k].style.split()[0]
        duplicate = any(
            series[m].style.split()[0] == colour and (pair := _compare(
                points[m], points[k], span=1.0, tol_abs=None, tol_rel=None)) is not None
            and pair.values >= 0.9 and pair.x_overlap >= _s().min_x_overlap for m in keep)
        if not duplicate:
            keep.append(k)
    return [series[k] for k in sorted(keep)]


def _compare_panels(pub: Panel, rep: Panel, tolerance: Tolerance | None) -> _PanelResult:
    frame = _frame(pub, rep)
    span = _y_span(pub, frame)
    tol_abs, tol_rel = _tolerance(tolerance, frame)
    pub_series, rep_series = _significant(pub.series), _significant(rep.series)
    pub_pts = [_coords(s, frame) for s in pub_series]
    rep_pts = [_coords(s, frame) for s in rep_series]
    decades = (_decades(pub.x, rep.x, frame.x_data and not frame.x_log),
                _decades(pub.y, rep.y, frame.y_data and not frame.y_log))
    if decades != (0, 0):
        factor = np.array([10.0 ** decades[0], 10.0 ** decades[1]])
        rep_pts = [p * factor for p in rep_pts]
    categorical_x = pub.x is None and rep.x is None
    pub_ink, rep_ink = _ink_coords(pub, frame, pub_pts), _ink_coords(rep, frame, rep_pts)
    if decades != (0, 0):
        rep_ink = rep_ink * factor
    if categorical_x:
        rep_pts, rep_ink = _align_x_extent(pub_pts, rep_pts, rep_ink)
    origin, scale = _unit_frame(pub, frame, pub_pts)
    pub_ink_u, rep_ink_u = (pub_ink - origin) / scale, (rep_ink - origin) / scale
    pub_index, rep_index = _InkIndex(pub_ink_u), _InkIndex(rep_ink_u)
    ink_coverage = (rep_index.share_near(pub_ink_u), pub_index.share_near(rep_ink_u)) \
        if len(pub_ink) >= 2 and len(rep_ink) >= 2 else None
    series_on_ink = None
    pub_all = np.concatenate([p for p in pub_pts if len(p)] or [np.zeros((0, 2))])
    rep_all = np.concatenate([p for p in rep_pts if len(p)] or [np.zeros((0, 2))])
    if min(len(pub_all), len(rep_all), len(pub_ink), len(rep_ink)) >= 2:
        series_on_ink = (rep_index.share_near((pub_all - origin) / scale),
                         pub_index.share_near((rep_all - origin) / scale))
    unit_pub = [(p - origin) / scale for p in pub_pts]
    unit_rep = [(p - origin) / scale for p in rep_pts]
    cloud_pub = [s.kind == "scatter" and _cloud_like(p) for s, p in zip(pub_series, unit_pub)]
    cloud_rep = [s.kind == "scatter" and _cloud_like(p) for s, p in zip(rep_series, unit_rep)]
    bar_reach = _bar_reach(unit_pub, pub_series)
    pairs = {}
    for i, a in enumerate(pub_pts):
        for j, b in enumerate(rep_pts):
            if cloud_pub[i] or cloud_rep[j]:
                pair = _compare_clouds(unit_pub[i], unit_rep[j])
            elif pub_series[i].kind == rep_series[j].kind == "bar" and bar_reach is not None:
                pair = _compare_bars(unit_pub[i], unit_rep[j], reach=bar_reach)
            elif "scatter" in (pub_series[i].kind, rep_series[j].kind):
                pair = _compare_points(a, b, origin=origin, scale=scale)
            else:
                pair = _compare(a, b, span=span, tol_abs=tol_abs, tol_rel=tol_rel)
            pairs[i, j] = pair
    data = np.array([[_data_similarity(pairs[i, j]) for j in range(len(rep_pts))]
                     for i in range(len(pub_pts))]).reshape(len(pub_pts), len(rep_pts))
    by_name = _name_pairs(pub_series, rep_series)
    by_data = _data_pairs(data) if by_name else {}
    crossed = None
    if any(by_data.get(i) not in (None, j) for i, j in by_name.items()):
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
    matches = [(pub_series[i], rep_series[j],
                _with_reach(pairs[i, j], unit_pub[i], unit_rep[j], pub_index, rep_index))
               for i, j in sorted(assigned.items()) if pairs[i, j] is not None]
    # A reproduced series left over is extra, unless it repeats the values of a series it
    # could stand for (a fragment of a line the reader split in two).
    extra = 0
    blends = set()
    for j in range(len(rep_series)):
        if j in assigned.values():
            continue
        twins = [pairs[i, j] for i in assigned if pairs[i, j] is not None]
        if any(p.values >= 0.8 and p.shape >= 0.8 for p in twins) or \
                _drawn_over(j, rep_pts, origin, scale):
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
    drawn_on_both = sum(1 for j in range(len(rep_series))
                        if j not in assigned.values() and j not in blends
                        and pub_index.share_near(unit_rep[j]) >= _s().drawn_on_both)
    rep_kept = [s for j, s in enumerate(rep_series) if j not in blends]
    pub_kept = [s for i, s in enumerate(pub_series)
                if i in assigned or not _drawn_over(i, pub_pts, origin, scale,
                                                    short=bool(s.name))]
    x_iou = y_iou = None
    ext = [(_extent(pub_pts, c), _extent(rep_pts, c)) for c in (0, 1)]
    if ext[0][0] and ext[0][1]:
        x_iou = _iou(*ext[0])
    # A cloud's y extent is its outliers', which a reader keeps or loses with the marker style
    # (and a fit line drawn in the cloud's colour may be all that is read of it): clouds are
    # compared by their medians, and only x says whether the range was cut.
    if ext[1][0] and ext[1][1] and not (any(cloud_pub) or any(cloud_rep)):
        y_iou = _iou(*ext[1])
    scale_match = None
    compared = [(a.scale, b.scale) for a, b in ((pub.x, rep.x), (pub.y, rep.y))
                if a is not None and b is not None]
    if compared:
        scale_match = all(a == b for a, b in compared)
    return _PanelResult(published_series=pub_kept, reproduced_series=rep_kept, matches=matches,
                        extra=extra, x_iou=x_iou, y_iou=y_iou, scale_match=scale_match,
                        coverage=_coverage(pub, frame, pub_pts, rep_pts), decades=decades,
                        ink_coverage=ink_coverage, series_on_ink=series_on_ink,
                        drawn_on_both=drawn_on_both,
                        read_counts=(len(pub_series), len(rep_series)),
                        categorical_x=categorical_x, x_axis_iou=_axis_iou(pub.x, rep.x),
                        crossed=crossed)


class _InkIndex:
    """A panel's data ink (unit frame, at most CompareSettings.coverage_points of it, a seeded
    subsample) and its KD-tree, built on first use and asked many times: how much of a set of
    points lies on the ink (within CompareSettings.coverage_tolerance)."""

    def __init__(self, ink: np.ndarray) -> None:
        most = _s().coverage_points
        if len(ink) > most:
            ink = ink[np.random.default_rng(0).choice(len(ink), most, replace=False)]
        self.ink = ink
        self._tree = None

    def __len__(self) -> int:
        return len(self.ink)

    def share_near(self, points: np.ndarray) -> float:
        """The share of `points` within the tolerance of the ink; 0 without ink or points."""
        from scipy.spatial import cKDTree  # imported on use, like scipy.optimize

        if len(points) == 0 or len(self.ink) < 2:
            return 0.0
        most, tolerance = _s().coverage_points, _s().coverage_tolerance
        if len(points) > most:
            points = points[np.random.default_rng(0).choice(len(points), most, replace=False)]
        if self._tree is None:
            self._tree = cKDTree(self.ink)
        near, _ = self._tree.query(points, p=np.inf, distance_upper_bound=tolerance * 1.000001)
        return float(np.mean(near <= tolerance))


def _with_reach(pair: _Pair, pub: np.ndarray, rep: np.ndarray, pub_ink: _InkIndex,
                rep_ink: _InkIndex) -> _Pair:
    """The pair with its reach (see _Pair.reach): the points outside the x range both series
    span count when they lie on the other chart's data ink."""
    if len(pub) < 2 or len(rep) < 2 or len(pub_ink) < 2 or len(rep_ink) < 2:
        return pair
    lo, hi = max(pub[:, 0].min(), rep[:, 0].min()), min(pub[:, 0].max(), rep[:, 0].max())
    shares = []
    for own, other_ink in ((pub, rep_ink), (rep, pub_ink)):
        outside = (own[:, 0] < lo) | (own[:, 0] > hi)
        if not outside.any():
            shares.append(1.0)
            continue
        covered = other_ink.share_near(own[outside]) * int(outside.sum())
        shares.append(float((int((~outside).sum()) + covered) / len(own)))
    return replace(pair, reach=round(min(shares), 4))


def _drawn_over(j: int, rep_pts: list[np.ndarray], origin: np.ndarray, scale: np.ndarray, *,
                short: bool = False) -> bool:
    """Whether reproduced series j lies on the other series' ink: where two lines converge,
    anti-aliasing blends their colours into a third that the reader takes for a series (a red
    and a purple line meeting make a crimson run). A reader of the chart sees no extra series
    there either, so it is not counted as one."""
    own = rep_pts[j]
    others = [p for k, p in enumerate(rep_pts) if k != j and len(p)]
    if len(own) < 2 or not others:
        return False
    # short: only a blend where lines meet, a part of the chart's width, and not a series
    # spanning as much as the others, however close (one left out among close curves).
    widest = max(float(np.ptp(p[:, 0])) for p in others)
    if short and float(np.ptp(own[:, 0])) > _s().blend_width * widest:
        return False
    covered, _ = _covered((own - origin) / scale, (np.concatenate(others) - origin) / scale)
    return covered >= _s().drawn_over


def _ink_coords(panel: Panel, frame: _Frame, series_pts: list[np.ndarray]) -> np.ndarray:
    """The panel's data ink in the frame's units; a panel without ink (taken from a data file)
    is its series' points, which are its data exactly."""
    if panel.ink is None or panel.ink_normalised is None:
        return np.concatenate([p for p in series_pts if len(p)] or [np.zeros((0, 2))])
    x = panel.ink[:, 0] if frame.x_data and panel.x is not None else panel.ink_normalised[:, 0]
    y = panel.ink[:, 1] if frame.y_data and panel.y is not None else panel.ink_normalised[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if frame.x_log and frame.x_data:
            x = np.log10(x)
        if frame.y_log and frame.y_data:
            y = np.log10(y)
    pts = np.column_stack([x, y])
    return pts[np.isfinite(pts).all(axis=1)]


def _align_x_extent(pub_pts: list[np.ndarray], rep_pts: list[np.ndarray],
                    rep_ink: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The reproduced points with x mapped so that their extent is the published one.

    With no numeric x axis on either chart (categories, month names, dates the OCR does not
    read) x is a share of the plot width, and plotting libraries pad categories differently
    (matplotlib puts the first category on the frame, ggplot2 and Excel half a category in):
    the same data would sit a few percent apart. The first and last categories are where the
    data starts and ends on both charts, so the extents are aligned."""
    a, b = _extent(pub_pts, 0), _extent(rep_pts, 0)
    if a is None or b is None or not (a[1] > a[0] and b[1] > b[0]):
        return rep_pts, rep_ink
    factor = (a[1] - a[0]) / (b[1] - b[0])

    def moved(p: np.ndarray) -> np.ndarray:
        q = p.copy()
        q[:, 0] = a[0] + (p[:, 0] - b[0]) * factor
        return q

    return [moved(p) for p in rep_pts], moved(rep_ink)


def _axis_iou(pub_axis, rep_axis) -> float | None:
    """Overlap (IoU) of two axes' ranges as their tick labels give them (log10 on log axes)."""
    if pub_axis is None or rep_axis is None or pub_axis.scale != rep_axis.scale:
        return None
    ranges = []
    for axis in (pub_axis, rep_axis):
        lo, hi = axis.data_range
        if axis.scale == "log":
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = np.log10(lo), np.log10(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return None
        ranges.append((float(min(lo, hi)), float(max(lo, hi))))
    return _iou(*ranges)


def _decades(pub_axis, rep_axis, linear_data: bool) -> int:
    """The power of ten k such that the reproduced axis span times 10**k is the published one,
    when the two linear axes differ by a whole power of ten (within 30%): tick labels read
    without their multiplier ("x10^-4" above a pgfplots axis, matplotlib's "1e-4" offset text,
    percent against fraction). 0 otherwise. The rubric's guidance counts equivalent units as the
    same, so the values are compared after the shift and the reading confidence says so."""
    if not linear_data or pub_axis is None or rep_axis is None:
        return 0
    span_pub = abs(pub_axis.data_range[1] - pub_axis.data_range[0])
    span_rep = abs(rep_axis.data_range[1] - rep_axis.data_range[0])
    if not (span_pub > 0 and span_rep > 0):
        return 0
    ratio = float(np.log10(span_pub / span_rep))
    k = round(ratio)
    if k == 0 or abs(ratio - k) > float(np.log10(1.3)):
        return 0
    return int(k)


def _unit_frame(panel: Panel, frame: _Frame, pub_pts: list[np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray]:
    """(origin, scale) that map the frame's units onto the published panel's axes as 0..1."""
    a = np.concatenate([p for p in pub_pts if len(p)] or [np.zeros((1, 2))])
    spans = []
    for column, data, log, axis in ((0, frame.x_data, frame.x_log, panel.x),
                                    (1, frame.y_data, frame.y_log, panel.y)):
        if not data:
            spans.append((0.0, 1.0))
            continue
        lo, hi = axis.data_range
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = np.log10(lo), np.log10(hi)
        if not (np.isfinite(lo) and np.isfinite(hi) and hi != lo):
            lo, hi = float(a[:, column].min()), float(a[:, column].max())
        spans.append((min(lo, hi), max(lo, hi)))
    origin = np.array([spans[0][0], spans[1][0]])
    scale = np.array([(spans[0][1] - spans[0][0]) or 1.0, (spans[1][1] - spans[1][0]) or 1.0])
    return origin, scale


def _covered(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(share of a's points within CompareSettings.coverage_tolerance of a point of b, the
    converse), both in unit-frame coordinates; at most CompareSettings.coverage_points of each
    (a seeded subsample)."""
    from scipy.spatial import cKDTree  # scipy.spatial, like scipy.optimize, imported on use

    rng = np.random.default_rng(0)
    if len(a) > _s().coverage_points:
        a = a[rng.choice(len(a), _s().coverage_points, replace=False)]
    if len(b) > _s().coverage_points:
        b = b[rng.choice(len(b), _s().coverage_points, replace=False)]
    near_a, _ = cKDTree(b).query(a, p=np.inf)
    near_b, _ = cKDTree(a).query(b, p=np.inf)
    return (float(np.mean(near_a <= _s().coverage_tolerance)),
            float(np.mean(near_b <= _s().coverage_tolerance)))


def _coverage(panel: Panel, frame: _Frame, pub_pts: list[np.ndarray],
              rep_pts: list[np.ndarray]) -> tuple[float, float] | None:
    """Series-free agreement of two panels: the share of the published data points with a
    reproduced point within CompareSettings.coverage_tolerance, and the converse. It does not
    depend on how the reader split the ink into series (colours, fragments, bands), so it tells
    a misread series split (the data cover each other, the series do not match) from a changed
    chart."""
    a = np.concatenate([p for p in pub_pts if len(p)] or [np.zeros((0, 2))])
    b = np.concatenate([p for p in rep_pts if len(p)] or [np.zeros((0, 2))])
    if len(a) < 2 or len(b) < 2:
        return None
    origin, scale = _unit_frame(panel, frame, pub_pts)
    return _covered((a - origin) / scale, (b - origin) / scale)


def _histogram_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Histogram intersection of two point clouds on a square grid of CompareSettings.cloud_grid
    cells a side over the
    published axes (1 = the same density). Markers of a cloud overlap and are read as blobs
    whose centres move with the marker size, so marker-to-marker distances say little; where
    the cloud lies does (a shifted or reversed cloud moves its mass to other cells)."""
    edges = np.linspace(-0.05, 1.05, _s().cloud_grid + 1)
    ha, _, _ = np.histogram2d(np.clip(a[:, 0], -0.05, 1.05), np.clip(a[:, 1], -0.05, 1.05),
                              bins=[edges, edges])
    hb, _, _ = np.histogram2d(np.clip(b[:, 0], -0.05, 1.05), np.clip(b[:, 1], -0.05, 1.05),
                              bins=[edges, edges])
    return float(np.minimum(ha / ha.sum(), hb / hb.sum()).sum())


def _cloud_like(unit: np.ndarray) -> bool:
    """More than a handful of points (unit frame) that spread in y within narrow x bins."""
    if len(unit) <= _s().small_scatter:
        return False
    edges = np.linspace(unit[:, 0].min(), unit[:, 0].max() + 1e-9, 13)
    which = np.digitize(unit[:, 0], edges) - 1
    spreads = [float(np.std(unit[which == k, 1])) for k in range(12)
               if np.sum(which == k) >= _s().cloud_bin_points]
    return len(spreads) >= 3 and float(np.median(spreads)) >= _s().cloud_spread


def _compare_clouds(a: np.ndarray, b: np.ndarray) -> _Pair | None:
    """Two point clouds (unit frame) compared by their conditional medians: the median y in
    CompareSettings.cloud_bins bins of their common x range, a curve that a restyle keeps
    (whatever the marker size, however markers merge into blobs) and that a shifted or reversed
    cloud moves."""
    if len(a) < 2 or len(b) < 2:
        return None
    lo, hi = max(a[:, 0].min(), b[:, 0].min()), min(a[:, 0].max(), b[:, 0].max())
    overlap = _x_overlap(a, b)
    if hi <= lo or overlap < _s().min_x_overlap:
        return _Pair(shape=0.0, values=0.0, max_error=float("inf"), trend_same=False,
                     x_overlap=overlap)
    inner = [p[(p[:, 0] >= lo) & (p[:, 0] <= hi)] for p in (a, b)]
    if min(len(p) for p in inner) < _s().cloud_bins * _s().cloud_bin_points:
        return _compare_points_unit(a, b, overlap)
    # Bins of equal counts of the published cloud: each median stands on as many points.
    edges = np.quantile(inner[0][:, 0], np.linspace(0, 1, _s().cloud_bins + 1))
    edges[0], edges[-1] = lo, hi
    medians, allowed = [], []
    for k in range(_s().cloud_bins):
        inside = [p[(p[:, 0] >= edges[k]) & (p[:, 0] <= edges[k + 1]), 1] for p in inner]
        if any(len(v) < _s().cloud_bin_points for v in inside):
            continue
        medians.append((float(np.median(inside[0])), float(np.median(inside[1]))))
        # The standard error of a median (1.25 sigma / sqrt(n), sigma from the MAD) of both
        # clouds: a bin of a few markers cannot place its median better than that.
        se = [1.25 * 1.4826 * float(np.median(np.abs(v - np.median(v)))) / np.sqrt(len(v))
              for v in inside]
        allowed.append(max(_s().default_value_tolerance, 2.0 * float(np.hypot(*se))))
    if len(medians) < 3:
        return _compare_points_unit(a, b, overlap)
    ma, mb = np.array(medians).T
    flat_a, flat_b = np.ptp(ma) < _s().flat, np.ptp(mb) < _s().flat
    if flat_a and flat_b:
        shape = 1.0
    elif flat_a or flat_b:
        shape = 0.0
    else:
        r = float(np.corrcoef(ma, mb)[0, 1])
        shape = max(0.0, r) if np.isfinite(r) else 0.0
    diff = np.abs(mb - ma)
    values = float(np.mean(diff <= np.array(allowed)))
    # Medians that all agree within their noise are the same cloud: a weak trend's medians
    # correlate poorly by chance alone.
    shape = max(shape, values)
    return _Pair(shape=shape, values=values, max_error=float(diff.max()),
                 trend_same=_direction(ma, 1.0) == _direction(mb, 1.0), x_overlap=overlap,
                 cloud=True)


def _bar_reach(unit_pub: list[np.ndarray], series: list[Series]) -> float | None:
    """How far (unit frame, along x) a reproduced bar may stand from a published one and still
    be the same bar: a third of the smallest gap between neighbouring published bars, so that a
    bar is never taken for its neighbour in a group; None without two bars to measure it."""
    xs = np.sort(np.concatenate([p[:, 0] for p, s in zip(unit_pub, series) if s.kind == "bar"]
                                or [np.zeros(0)]))
    gaps = np.diff(xs)
    gaps = gaps[gaps > 1e-6]
    return float(gaps.min()) / 3.0 if len(gaps) else None


def _compare_bars(a: np.ndarray, b: np.ndarray, *, reach: float) -> _Pair:
    """Two bar series (unit frame) compared bar by bar: a bar has its counterpart at the same
    place along x (within `reach`), else none. Interpolating heights between bar positions, as
    curves are compared, would make neighbouring groups of grouped bars look alike (a group
    a third of a category off is its neighbour's shape, shifted)."""
    overlap = _x_overlap(a, b)
    a, b = a[np.argsort(a[:, 0], kind="stable")], b[np.argsort(b[:, 0], kind="stable")]
    if len(a) == len(b) and len(a) >= 2:
        # As many bars: the k-th with the k-th, if it stands within half a step of the series'
        # own bars (a restyle with other bar widths moves a group's bars within their category).
        step = float(np.median(np.diff(a[:, 0])))
        found = np.abs(b[:, 0] - a[:, 0]) <= max(reach, 0.5 * step)
        paired = [(ya, yb) for ya, yb, ok in zip(a[:, 1], b[:, 1], found) if ok]
    else:
        found = np.array([np.min(np.abs(b[:, 0] - x)) <= reach for x in a[:, 0]]) if len(b) \
            else np.zeros(len(a), bool)
        paired = [(y, b[int(np.argmin(np.abs(b[:, 0] - x))), 1])
                  for (x, y), ok in zip(a, found) if ok]
    if not paired:
        return _Pair(shape=0.0, values=0.0, max_error=float("inf"), trend_same=False,
                     x_overlap=overlap)
    ya, yb = np.array(paired).T
    close = np.abs(yb - ya) <= _s().default_value_tolerance
    # Published bars paired with a bar of the same height; a reproduced bar standing where no
    # published bar stands is one more that disagrees (one next to a published bar is the
    # reader's split of it: an edge, a hatch).
    step = float(np.median(np.diff(a[:, 0]))) if len(a) >= 2 else reach
    far = int(sum(np.min(np.abs(a[:, 0] - x)) > max(reach, 0.5 * step) for x in b[:, 0]))
    values = float(np.sum(close)) / (len(a) + far)
    if len(ya) >= 3 and np.ptp(ya) > 0 and np.ptp(yb) > 0:
        r = float(np.corrcoef(ya, yb)[0, 1])
        shape = max(0.0, r) if np.isfinite(r) else 0.0
    else:
        shape = values
    shape *= float(found.mean())
    return _Pair(shape=shape, values=values, max_error=float(np.abs(yb - ya).max()),
                 trend_same=_direction(ya, 1.0) == _direction(yb, 1.0), x_overlap=overlap)


def _compare_points_unit(a: np.ndarray, b: np.ndarray, overlap: float) -> _Pair:
    """Two clouds too thin to bin (unit frame): by where their mass lies."""
    covered = _histogram_overlap(a, b)
    near = np.abs(np.median(b[:, 1]) - np.median(a[:, 1]))
    return _Pair(shape=covered, values=covered, max_error=float(near),
                 trend_same=covered >= 0.5, x_overlap=overlap)


def _compare_points(pub: np.ndarray, rep: np.ndarray, *, origin: np.ndarray,
                    scale: np.ndarray) -> _Pair | None:
    """Two scatter series compared as point sets, not as curves: a cloud is no function of x,
    so resampling it along x says little. Shape and values are both the smaller coverage (the
    share of one set's markers with a marker of the other nearby, each way): a shifted,
    reversed or cut cloud leaves markers uncovered, a restyled one does not."""
    if len(pub) < 2 or len(rep) < 2:
        return None
    a, b = (pub - origin) / scale, (rep - origin) / scale
    # A handful of markers: one the reader missed (hidden under another, on the frame) is no
    # disagreement, while a moved one is uncovered both ways; so the better of the two shares.
    # Missing markers are the range and series criteria's business. Clouds: the worse, since a
    # dense cloud covers much of the plot whatever it shows.
    if max(len(a), len(b)) > _s().small_scatter:
        return _compare_points_unit(a, b, _x_overlap(a, b))
    covered = max(_covered(a, b))
    near = np.abs(np.median(b[:, 1]) - np.median(a[:, 1]))
    return _Pair(shape=covered, values=covered, max_error=float(near),
                 trend_same=covered >= 0.5, x_overlap=_x_overlap(a, b))


def _x_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """The share of the two point sets' joint x extent that both cover."""
    lo, hi = max(a[:, 0].min(), b[:, 0].min()), min(a[:, 0].max(), b[:, 0].max())
    union = max(a[:, 0].max(), b[:, 0].max()) - min(a[:, 0].min(), b[:, 0].min())
    return float(max(0.0, hi - lo) / union) if union > 0 else 1.0


def _name_matrix(pub: list[Series], rep: list[Series]) -> np.ndarray:
    """Likeness of every published name to every reproduced one; a partial match (a prefix, a
    suffix) that fits several names of the other side ("GPT" of "GPT-small" and "GPT-large")
    says nothing of which: it drops to CompareSettings.name_floor."""
    sims = np.array([[(_name_similarity(a.name, b.name) or 0.0) for b in rep] for a in pub],
                    dtype=float).reshape(len(pub), len(rep))
    close = sims >= 0.8
    ambiguous = (close & (close.sum(axis=1, keepdims=True) > 1)) | \
        (close & (close.sum(axis=0, keepdims=True) > 1))
    # A name a legend gives twice (jove-performance's key names two series "H3COH") tells
    # neither of its series from the other, however exactly the other legend repeats it.
    repeated = _repeated_names(pub)[:, None] | _repeated_names(rep)[None, :]
    return np.where((ambiguous & (sims < 1.0)) | repeated,
                    np.minimum(sims, _s().name_floor), sims)


def _naming(series: list[Series]) -> set[int]:
    """The series (by id) whose legend name tells them apart: a name the legend gives twice
    names neither of its series."""
    return {id(s_) for s_, twice in zip(series, _repeated_names(series)) if s_.name and not twice}


def _repeated_names(series: list[Series]) -> np.ndarray:
    """Which series carry a name that another series of the same chart carries too (the same
    name as `_name_similarity` compares them)."""
    keys = [_name_key(s.name) if s.name else "" for s in series]
    return np.array([bool(k) and keys.count(k) > 1 for k in keys], dtype=bool)


def _name_pairs(pub: list[Series], rep: list[Series]) -> dict[int, int]:
    """Published index -> reproduced index for series both legends name alike (one to one)."""
    if len(pub) < 2 or len(rep) < 2:
        return {}
    sims = _name_matrix(pub, rep)
    out = {}
    for i, j in zip(*linear_sum_assignment(-sims)):
        if sims[i, j] >= 0.8:
            out[int(i)] = int(j)
    return out


def _data_pairs(data: np.ndarray) -> dict[int, int]:
    """Published index -> reproduced index by data similarity alone (one to one)."""
    if data.size == 0:
        return {}
    return {int(i): int(j) for i, j in zip(*linear_sum_assignment(-data))
            if data[i, j] >= _s().min_match}


def _series_agreement(matches: list[tuple[Series, Series, _Pair]], *, published: int,
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
    worst = min((((0.5 + 0.5 * p.shape) * (0.3 + 0.7 * p.values) *
                  (0.75 + 0.25 * p.trend_same) * p.reach_factor() *
                  (1.0 if (a.kind == "bar") == (b.kind == "bar") else 0.4))
                 for a, b, p in matches), default=0.0)
    return float(np.clip((1.0 - extra_share) ** 2 * matched ** 2 * worst, 0.0, 1.0))


def _reading_order(panels: list[Panel]) -> list[Panel]:
    if not panels:
        return []
    heights = [p.bbox[3] - p.bbox[1] for p in panels]
    row = max(1.0, 0.5 * min(heights))
    return sorted(panels, key=lambda p: (round(p.bbox[1] / row), p.bbox[0]))


def _data_panels(reading: ChartReading) -> list[Panel]:
    """The panels that hold series, in reading order: how both compare and overlay pair them."""
    return [p for p in _reading_order(reading.panels) if p.series]


def _absent(reason: str) -> ChartComparison:
    return ChartComparison(signals={name: None for name in CHART_SIGNALS},
                           reasons={name: reason for name in CHART_SIGNALS})


def compare(published: ChartReading, reproduced: ChartReading, *,
            tolerance: Tolerance | None = None,
            settings: CompareSettings = DEFAULT_COMPARE) -> ChartComparison:
    token = _ACTIVE.set(settings)
    try:
        return _compare_readings(published, reproduced, tolerance=tolerance, settings=settings)
    finally:
        _ACTIVE.reset(token)


def _compare_readings(published: ChartReading, reproduced: ChartReading, *,
                      tolerance: Tolerance | None,
                      settings: CompareSettings) -> ChartComparison:
    if not published.readable:
        return _absent(f"published chart unreadable: {published.reason}")
    if not reproduced.readable:
        return _absent(f"reproduced chart unreadable: {reproduced.reason}")
    pub_panels, rep_panels = _data_panels(published), _data_panels(reproduced)
    results = [_compare_panels(a, b, tolerance) for a, b in zip(pub_panels, rep_panels)]
    # Series of panels without a counterpart are missing (or extra) as a whole.
    unpaired_pub = sum(len(_significant(p.series)) for p in pub_panels[len(results):])
    unpaired_rep = sum(len(_significant(p.series)) for p in rep_panels[len(results):])
    # A reproduced series that lies on the published chart's data ink is drawn on both charts
    # (the published reader did not take it for a series: a faint reference line): it counts
    # as a published series, matched, and not as extra. (The evidence's series agreement sets
    # it aside instead, from the reproduced count: the same when every other series pairs.)
    on_both = sum(r.drawn_on_both for r in results)
    n_pub = sum(r.published for r in results) + unpaired_pub + on_both
    n_rep = sum(r.reproduced for r in results) + unpaired_rep
    extra = sum(r.extra for r in results) + unpaired_rep - on_both
    matches = [m for r in results for m in r.matches]
    signals: dict[str, float | bool | None] = {name: None for name in CHART_SIGNALS}
    reasons: dict[str, str] = {}
    signals["chart.series_published"] = float(n_pub)
    signals["chart.series_reproduced"] = float(n_rep)
    signals["chart.series_matched"] = (len(matches) + on_both) / n_pub
    if matches:
        signals["chart.shape_agreement"] = min(p.shape for _, _, p in matches)
        signals["chart.value_agreement"] = min(p.values for _, _, p in matches)
        signals["chart.max_value_error"] = max(p.max_error for _, _, p in matches)
        signals["chart.trend_agreement"] = float(np.mean([p.trend_same for _, _, p in matches]))
    else:
        for name in ("chart.shape_agreement", "chart.value_agreement", "chart.max_value_error",
                     "chart.trend_agreement"):
            reasons[name] = "no series of the reproduction matches a published series"
    scales = [r.scale_match for r in results if r.scale_match is not None]
    if scales:
        signals["chart.axis_scale_match"] = all(scales)
    else:
        reasons["chart.axis_scale_match"] = "no axis could be read on both charts"
    ious = [v for r in results for v in (r.x_iou, r.y_iou) if v is not None]
    if ious:
        signals["chart.range_overlap"] = min(ious)
    else:
        reasons["chart.range_overlap"] = "no data range on both charts"
    # Bars drawn as lines (or lines as bars) is another chart, whatever the values.
    same_kind = float(np.mean([(a.kind == "bar") == (b.kind == "bar") for a, b, _ in matches])) \
        if matches else 1.0
    # The share of the worst pair compared (or lying on the other chart's ink: the reach the
    # evidence's series agreement weighs in full, pair by pair): a line matched over part of
    # its counterpart's range agrees on that part only. Weighed at half here (_match_score).
    reach = min((p.reach_factor() for _, _, p in matches), default=1.0)
    signals["chart.match_score"] = _match_score(signals, extra=extra / max(1, n_rep),
                                                same_kind=same_kind, reach=reach)
    named, agreement, why_not = legend_agreement(results)
    signals["chart.named_series"] = float(named)
    if agreement is None:
        reasons["chart.legend_agreement"] = why_not
    else:
        signals["chart.legend_agreement"] = agreement
    # A panel without a counterpart covers nothing.
    n_panels = max(len(pub_panels), len(rep_panels))
    for name, coverages, missing in (
            ("chart.data_coverage", [r.coverage for r in results],
             "no data points on both charts to compare"),
            ("chart.ink_coverage", [r.ink_coverage for r in results],
             "no data ink on both charts to compare")):
        if results and all(c is not None for c in coverages):
            signals[name] = min(sum(c[0] for c in coverages) / n_panels,
                                sum(c[1] for c in coverages) / n_panels)
        else:
            reasons[name] = missing
    evidence = weigh([_panel_evidence(k, len(results), a, b, r) for k, (a, b, r) in
                      enumerate(zip(pub_panels, rep_panels, results), 1)],
                     panel_counts=(len(pub_panels), len(rep_panels)),
                     settings=settings.evidence)
    signals["chart.same_data"] = evidence.same_data
    reasons["chart.same_data"] = evidence.reason()
    confidence, doubts = reading_confidence(pub_panels, rep_panels, results, signals)
    signals["chart.reading_confidence"] = confidence
    reasons["chart.reading_confidence"] = "; ".join(doubts) if doubts else \
        "both charts read with axes, panels and series that agree with each other"
    if signals["chart.max_value_error"] is not None and \
            not np.isfinite(signals["chart.max_value_error"]):
        signals["chart.max_value_error"] = None
        reasons["chart.max_value_error"] = "the matched series do not share an x range"
    return ChartComparison(signals=signals, reasons=reasons,
                           matches=[(a, b, p.shape, p.values) for a, b, p in matches])


def _panel_evidence(index: int, count: int, pub: Panel, rep: Panel,
                    result: _PanelResult) -> PanelEvidence:
    """One panel pair's readings for the evidence (judging.signals.chart.evidence)."""
    names, names_why = _names_status(result, (pub.legend, rep.legend))
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


def _names_status(result: _PanelResult, legend_sizes: tuple[list[str], ...] = ()
                  ) -> tuple[str, str]:
    """Whether the legends' names confirm the pairing of the series: "unnamed" (the published
    legend names fewer than two matched series, a name it gives twice naming neither: nothing
    to swap), "agree" (every named series is paired with the reproduced series whose name is
    most like its own, among all pairings of the names, and at most one counterpart of a
    published name, repeated or not, is unread: paired by elimination), "unread"
    (more names unread: a swap cannot be ruled out) or "disagree" (the names would pair the
    series otherwise: misread, renamed or swapped); and why."""
    naming = _naming(result.published_series)
    named = [(a, b) for a, b, _ in result.matches if id(a) in naming]
    if len(named) < 2:
        legends = [len(panel_legend) for panel_legend in legend_sizes if panel_legend]
        if len(result.matches) >= 2 and any(n >= 2 for n in legends):
            # A legend names the series but its names are not on the paired series: which
            # series is which is unverified.
            repeated = sum(1 for a, _, _ in result.matches if a.name and id(a) not in naming)
            return "unread", (f"a legend of {max(legends)} entries, but fewer than two of the "
                              f"{len(result.matches)} paired series carry names of their own"
                              + (f" ({repeated} carry a name the legend gives twice)"
                                 if repeated else ""))
        return "unnamed", ""
    unread = sum(1 for _, b in named if not b.name)
    unread_all, published_names = _unread_counterparts(result)
    pub_named = [s for s in result.published_series if id(s) in naming]
    rep_named = [s for s in result.reproduced_series if s.name]
    if len(named) - unread >= 1 and rep_named:
        sims = _name_matrix(pub_named, rep_named)
        best = {id(pub_named[i]): (rep_named[j], float(sims[i, j]))
                for i, j in zip(*linear_sum_assignment(-sims))}
        for a, b in named:
            if not b.name:
                continue
            paired, likeness = best.get(id(a), (None, 0.0))
            if paired is not b or likeness < _s().name_floor:
                return "disagree", (f"the legends would pair {a.name!r} with another series "
                                    f"than the data do ({b.name!r} by data)")
    if unread_all > 1:
        return "unread", (f"{unread_all} of the {published_names} named series have no name "
                          f"read in the reproduction")
    return "agree", f"the {len(named)} named series pair by their names as by their data"


def legend_agreement(results: list[_PanelResult]) -> tuple[int, float | None, str]:
    """(published series named by the legend among the matched ones, the share of those whose
    reproduced counterpart carries their name, why that share is absent).

    Series are paired by their data when the legend names do not pair them, so a reproduction
    whose legend swaps two names matches by data, and only the names tell. A name "carried" is
    the reproduced name that the best one-to-one pairing of the panel's names gives it (OCR
    slips and names read in part allowed, `_consistent_names`); one name left unread in a panel
    pairs by elimination. With fewer than two named series there is nothing to swap; when the
    reproduction's names could not be read, the identities are unverified (absent). A name
    the published legend gives twice names neither of its series (`_naming`)."""
    named = [(a, b) for r in results for naming in [_naming(r.published_series)]
             for a, b, _ in r.matches if id(a) in naming]
    if len(named) < 2:
        return len(named), None, "fewer than two matched series are named by the published legend"
    if not any(b.name for _, b in named):
        return len(named), None, ("the reproduction's legend names could not be read: which "
                                  "series is which is unverified")
    carried = [c for r in results for c in _consistent_names(r)]
    return len(named), float(np.mean(carried)), ""


def _unread_counterparts(result: _PanelResult) -> tuple[int, int]:
    """(matched series the published legend names whose counterpart has no name read, matched
    series the published legend names). Counted over every published name, repeated or not:
    a name read on the wrong one of two entries would otherwise pass for a name read, and only
    a single unread one pairs by elimination."""
    named = [b for a, b, _ in result.matches if a.name]
    return sum(1 for b in named if not b.name), len(named)


def _consistent_names(result: _PanelResult) -> list[bool]:
    """For each matched series of the panel that the published legend names (a name it gives
    twice names neither series): whether its counterpart carries the name (the best pairing of
    the names pairs them, at least NAME_FLOOR alike; a single unread name, among all the
    published names, counts as carried, by elimination)."""
    naming = _naming(result.published_series)
    named = [(a, b) for a, b, _ in result.matches if id(a) in naming]
    if not named:
        return []
    pub_named = [s for s in result.published_series if id(s) in naming]
    rep_named = [s for s in result.reproduced_series if s.name]
    best: dict[int, tuple[Series, float]] = {}
    if rep_named and pub_named:
        sims = _name_matrix(pub_named, rep_named)
        best = {id(pub_named[i]): (rep_named[j], float(sims[i, j]))
                for i, j in zip(*linear_sum_assignment(-sims))}
    unread, _ = _unread_counterparts(result)
    out = []
    for a, b in named:
        if not b.name:
            out.append(unread == 1)
            continue
        paired, likeness = best.get(id(a), (None, 0.0))
        out.append(paired is b and likeness >= _s().name_floor)
    return out


def _same_x_range(pub: Panel, rep: Panel) -> bool:
    if pub.x is None or rep.x is None or pub.x.scale != rep.x.scale:
        return False
    a, b = pub.x.data_range, rep.x.data_range
    if pub.x.scale == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = tuple(np.log10(a)), tuple(np.log10(b))
    if not all(np.isfinite(v) for v in (*a, *b)):
        return False
    return _iou((min(a), max(a)), (min(b), max(b))) >= 0.9


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
        return min(axis.confidence, 0.3), f"{len(ticks)} tick label(s) read"
    residual = float(np.nanmax(np.abs(values - fitted))) / span
    if not np.isfinite(residual) or residual > _s().tick_residual:
        trust = max(axis.confidence, 0.2)
        return min(trust, 0.5), f"tick labels off the {axis.scale} fit by {residual:.1%} of the span"
    if len(ticks) == 2:
        return max(axis.confidence, 0.6), "only two tick labels: nothing confirms the fit"
    return 1.0, ""


def reading_confidence(pub_panels: list[Panel], rep_panels: list[Panel],
                       results: list[_PanelResult], signals: dict) -> tuple[float, list[str]]:
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
        scores.append((0.3, f"{len(pub_panels)} data panels read in the published chart, "
                            f"{len(rep_panels)} in the reproduction: panels may be mispaired"))
    for index, (pub, rep, result) in enumerate(zip(pub_panels, rep_panels, results), 1):
        where = f" (panel {index})" if len(results) > 1 else ""
        for who, panel, significant, read in (
                ("published", pub, result.published_series, result.read_counts[0]),
                ("reproduced", rep, result.reproduced_series, result.read_counts[1])):
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
                    scores.append((0.2, f"{name} axis of the {who} chart unread{where}"))
                    continue
                trust, why = axis_trust(axis)
                if trust < 1.0:
                    scores.append((trust, f"{name} axis of the {who} chart: {why}{where}"))
            # Bars of one colour per category are one point each: together they are data.
            bar_points = sum(len(s.points) for s in significant if s.kind == "bar")
            if not any(len(s.points) >= _s().min_data_points for s in significant) and \
                    not (bars and bar_points >= _s().min_data_points):
                scores.append((0.2, f"no substantial data series read in the {who} chart"
                                    f"{where} (only marks of a few points: spans, a legend)"))
            if any(s.kind == "scatter" and len(s.points) > _s().small_scatter for s in significant):
                scores.append((_s().cloud_trust if _named_alike(result) else 0.5,
                               f"a scatter cloud in the {who} chart{where}: overlapping "
                                    f"markers are read as blobs, so markers and series are "
                                    f"approximate"))
            many = max(len(significant), read)
            from_data = bool(significant) and all(s.style.startswith("data:")
                                                  for s in significant)
            if many > _s().max_reliable_series and not from_data:  # data never confuses series
                scores.append((0.4, f"{many} series in the {who} chart{where}: more than "
                                    f"{_s().max_reliable_series} cannot be told apart by colour"))
    for index, result in enumerate(results, 1):
        where = f" (panel {index})" if len(results) > 1 else ""
        if any(result.decades):
            shifts = ", ".join(f"{name} x10^{k}" for name, k in zip("xy", result.decades) if k)
            scores.append((0.7, f"axis values differ by a power of ten ({shifts}){where}: an "
                                f"axis multiplier read on one chart only is assumed"))
        for a, b, _ in result.matches:
            if a.kind != "line" or b.kind != "line" or a.normalised is None or \
                    b.normalised is None or not _same_x_range(pub_panels[index - 1],
                                                              rep_panels[index - 1]):
                continue
            wa, wb = float(np.ptp(a.normalised[:, 0])), float(np.ptp(b.normalised[:, 0]))
            if min(wa, wb) < _s().partial_line * max(wa, wb):
                scores.append((0.5, f"a matched line spans {min(wa, wb):.0%} of its plot width "
                                    f"against {max(wa, wb):.0%} under the same x range{where}: "
                                    f"read in part, or cut (not sure enough to fail)"))
                break
        crop = _confirmed_crop(pub_panels[index - 1], rep_panels[index - 1], result)
        if crop:
            confirmed.append(crop + where)
        coverage = result.coverage
        split_differs = result.published != result.reproduced or \
            len(result.matches) < result.published
        if coverage is not None and min(coverage) >= _s().same_ink and split_differs:
            scores.append((0.3, f"the plotted data cover each other ({coverage[0]:.2f}/"
                                f"{coverage[1]:.2f}) but the series read differ "
                                f"({result.published} published, {result.reproduced} reproduced, "
                                f"{len(result.matches)} matched){where}: series split unreliable"))
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
    return round(value, 3), doubts


def _named_alike(result: _PanelResult) -> bool:
    """Every series of the panel matched one to one, on both charts, to a series of the same
    legend name and read as the same kind (markers as markers): the reader's split of the ink
    into series agrees with both legends, so series compared by their medians are the same
    groups of points (a cloud's colours are otherwise easily split or merged, hollow markers
    most of all, and a cloud read as a line on one side is one track through it)."""
    if not result.matches or not (len(result.matches) == result.published == result.reproduced):
        return False
    if any(a.kind != b.kind for a, b, _ in result.matches):
        return False
    similar = [_name_similarity(a.name, b.name) for a, b, _ in result.matches]
    # One legend entry left unread (OCR misses a label) leaves one series to pair by
    # elimination, once the others are paired by name: still the legends' split. A name that
    # disagrees is another matter.
    unread = sum(1 for v in similar if v is None)
    named = sum(1 for v in similar if v is not None and v >= 0.8)
    return named == len(similar) or (unread == 1 and named == len(similar) - 1 and named >= 2)


def _confirmed_crop(pub: Panel, rep: Panel, result: _PanelResult) -> str:
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


def _match_score(signals: dict, *, extra: float, same_kind: float, reach: float = 1.0) -> float:
    """One agreement in [0, 1]: every part must agree (a product), so that one wrong aspect (a
    reversed curve, a missing series, scaled values, another scale, a series matched over part
    of its counterpart's range: `reach`) is enough to pull it down. Reach weighs half, as shape
    and trend do: a line read in part on one chart (a reader's miss) must not sink a faithful
    pair's score."""
    count = (1.0 - extra) ** 2
    matched = signals["chart.series_matched"]
    if signals["chart.shape_agreement"] is None:
        return 0.0
    shape = signals["chart.shape_agreement"]
    values = signals["chart.value_agreement"]
    trend = signals["chart.trend_agreement"]
    scale = 1.0 if signals["chart.axis_scale_match"] in (True, None) else 0.4
    overlap = signals["chart.range_overlap"]
    overlap = 1.0 if overlap is None else min(1.0, overlap / 0.9) ** 2
    score = count * matched ** 2 * (0.5 + 0.5 * shape) * (0.3 + 0.7 * values) * \
        (0.5 + 0.5 * trend) * scale * overlap * \
        (0.4 + 0.6 * same_kind) * (0.5 + 0.5 * reach)
    return float(np.clip(score, 0.0, 1.0))


# --- overlay ---------------------------------------------------------------------------------

PUBLISHED_COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189),
                     (255, 127, 14), (140, 86, 75)]


def overlay(published: ChartReading, reproduced: ChartReading, comparison: ChartComparison, *,
            size: int = 512) -> Image.Image | None:
    """The matched series of both charts on one set of axes per published panel: published as
    wide pale lines, the reproduction as thin dark ones of the same hue; unmatched series in
    grey. None when neither chart was readable."""
    pub_panels, rep_panels = _data_panels(published), _data_panels(reproduced)
    if not pub_panels and not rep_panels:
        return None
    pairs = list(zip(pub_panels, rep_panels))
    pairs += [(p, None) for p in pub_panels[len(pairs):]]
    pairs += [(None, p) for p in rep_panels[len(pairs):]]
    cols = 1 if len(pairs) == 1 else 2
    rows = (len(pairs) + cols - 1) // cols
    width, height = size, max(size * 3 // 4, rows * size // 3)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((6, height - 14), "published: wide pale · reproduced: thin dark · grey: unmatched",
              fill=(60, 60, 60))
    cell_w, cell_h = width // cols, (height - 16) // rows
    pub_colour = {id(a): k for k, (a, _, _, _) in enumerate(comparison.matches)}
    rep_colour = {id(b): k for k, (_, b, _, _) in enumerate(comparison.matches)}
    for index, (pub, rep) in enumerate(pairs):
        left, top = (index % cols) * cell_w, (index // cols) * cell_h
        box = (left + 34, top + 8, left + cell_w - 8, top + cell_h - 22)
        _draw_panel(draw, box, pub, rep, pub_colour, rep_colour)
    return image


def _draw_panel(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], pub: Panel | None,
                rep: Panel | None, pub_colour: dict, rep_colour: dict) -> None:
    frame = _frame(pub, rep) if pub is not None and rep is not None else _Frame(
        x_log=False, y_log=False, x_data=False, y_data=False)
    series = [(s, "pub") for s in (pub.series if pub else [])] + \
        [(s, "rep") for s in (rep.series if rep else [])]
    pts = [(s, who, _coords(s, frame)) for s, who in series]
    allp = np.concatenate([p for _, _, p in pts if len(p)] or [np.zeros((1, 2))])
    x0, x1 = float(allp[:, 0].min()), float(allp[:, 0].max())
    y0, y1 = float(allp[:, 1].min()), float(allp[:, 1].max())
    if x1 <= x0:
        x1 = x0 + 1
    if y1 <= y0:
        y1 = y0 + 1
    pad = 0.05 * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad
    left, top, right, bottom = box
    draw.rectangle(box, outline=(120, 120, 120))

    def label(v: float, log: bool, data: bool) -> str:
        if not data:
            return f"{v:.2f}"
        return f"1e{v:.1f}" if log else f"{v:.3g}"

    draw.text((2 + left - 34, top), label(y1, frame.y_log, frame.y_data), fill=(80, 80, 80))
    draw.text((2 + left - 34, bottom - 10), label(y0, frame.y_log, frame.y_data),
              fill=(80, 80, 80))
    draw.text((left, bottom + 4), label(x0, frame.x_log, frame.x_data), fill=(80, 80, 80))
    draw.text((right - 40, bottom + 4), label(x1, frame.x_log, frame.x_data), fill=(80, 80, 80))
    for s, who, p in sorted(pts, key=lambda t: t[1] != "pub"):
        if len(p) == 0:
            continue
        px = left + (p[:, 0] - x0) / (x1 - x0) * (right - left)
        py = bottom - (p[:, 1] - y0) / (y1 - y0) * (bottom - top)
        k = (pub_colour if who == "pub" else rep_colour).get(id(s))
        base = PUBLISHED_COLOURS[k % len(PUBLISHED_COLOURS)] if k is not None else (150, 150, 150)
        if who == "pub":
            colour = tuple(int(c + (255 - c) * 0.55) for c in base)
            width = 6
        else:
            colour = tuple(int(c * 0.7) for c in base)
            width = 2
        xy = list(zip(px.tolist(), py.tolist()))
        if s.kind == "line" and len(xy) > 1:
            draw.line(xy, fill=colour, width=width)
        else:
            r = width / 2 + 1
            for x, y in xy:
                draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
