"""Two series' points compared: as curves, as point clouds (by conditional medians), as bars
(bar by bar) or as point sets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from judging.signals.chart.compare.ink import InkIndex, mutual_coverage
from judging.signals.chart.settings import compare_settings as _s
from judging.signals.chart.types import Series

GRID_MARGIN = 0.05
"""How far past the published axes (unit frame) a cloud's density grid reaches: points just
outside the axes still count."""
SPREAD_BINS = 12
"""Bins along x in which a scatter's spread in y tells a cloud from a curve of markers."""
EPSILON = 1e-9
"""Added to the last bin edge so that the rightmost point falls in the last bin."""
MIN_BINS = 3
"""Fewest bins (or bars) whose medians can show a shape: two define any line."""
MEDIAN_SE = 1.25
"""The standard error of a median is 1.25 sigma / sqrt(n) (normal data)."""
MAD_SIGMA = 1.4826
"""Sigma of normal data from its median absolute deviation."""
SAME_X = 1e-6
"""Bars closer than this along x (unit frame) stand at the same place."""
BAR_REACH_SHARE = 3.0
"""A bar may stand a third of the smallest gap between bars from its counterpart: never its
neighbour's place in a group."""
REACH_DIGITS = 4
"""Decimals a pair's reach is kept with."""


@dataclass(frozen=True)
class SeriesPair:
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


def _shape(a: np.ndarray, b: np.ndarray, *, flat: float) -> float:
    """How alike two curves sampled at the same x run: their correlation (0 when negative or
    undefined); two flat curves (spread under `flat`) are alike, a flat and a moving one not."""
    flat_a, flat_b = np.ptp(a) < flat, np.ptp(b) < flat
    if flat_a and flat_b:
        return 1.0
    if flat_a or flat_b:
        return 0.0
    r = float(np.corrcoef(a, b)[0, 1])
    return max(0.0, r) if np.isfinite(r) else 0.0


def compare_curves(pub: np.ndarray, rep: np.ndarray, *, span: float, tol_abs: float | None,
             tol_rel: float | None) -> SeriesPair | None:
    if len(pub) < 2 or len(rep) < 2:
        return None
    lo, hi = max(pub[0, 0], rep[0, 0]), min(pub[-1, 0], rep[-1, 0])
    union = max(pub[-1, 0], rep[-1, 0]) - min(pub[0, 0], rep[0, 0])
    overlap = (hi - lo) / union if union > 0 else 1.0
    if hi <= lo or overlap < _s().min_x_overlap:
        return SeriesPair(shape=0.0, values=0.0, max_error=float("inf"), trend_same=False,
                     x_overlap=max(0.0, float(overlap)))
    xs = np.linspace(lo, hi, _s().samples)
    a, b = _resample(pub, xs), _resample(rep, xs)
    shape = _shape(a, b, flat=_s().flat * span)
    diff = np.abs(b - a)
    allowed = np.full_like(a, _s().default_value_tolerance * span)
    if tol_abs is not None:
        allowed[:] = tol_abs
    elif tol_rel is not None:
        allowed = tol_rel * np.abs(a)
    allowed = np.maximum(allowed, _s().reading_precision * span)
    return SeriesPair(shape=shape, values=float(np.mean(diff <= allowed)),
                 max_error=float(diff.max() / span),
                 trend_same=_direction(a, span) == _direction(b, span),
                 x_overlap=float(overlap))


def _histogram_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Histogram intersection of two point clouds on a square grid of CompareSettings.cloud_grid
    cells a side over the
    published axes (1 = the same density). Markers of a cloud overlap and are read as blobs
    whose centres move with the marker size, so marker-to-marker distances say little; where
    the cloud lies does (a shifted or reversed cloud moves its mass to other cells)."""
    edges = np.linspace(-GRID_MARGIN, 1 + GRID_MARGIN, _s().cloud_grid + 1)
    lo, hi = -GRID_MARGIN, 1 + GRID_MARGIN
    ha, _, _ = np.histogram2d(np.clip(a[:, 0], lo, hi), np.clip(a[:, 1], lo, hi),
                              bins=[edges, edges])
    hb, _, _ = np.histogram2d(np.clip(b[:, 0], lo, hi), np.clip(b[:, 1], lo, hi),
                              bins=[edges, edges])
    return float(np.minimum(ha / ha.sum(), hb / hb.sum()).sum())


def cloud_like(unit: np.ndarray) -> bool:
    """More than a handful of points (unit frame) that spread in y within narrow x bins."""
    if len(unit) <= _s().small_scatter:
        return False
    edges = np.linspace(unit[:, 0].min(), unit[:, 0].max() + EPSILON, SPREAD_BINS + 1)
    which = np.digitize(unit[:, 0], edges) - 1
    spreads = [float(np.std(unit[which == k, 1])) for k in range(SPREAD_BINS)
               if np.sum(which == k) >= _s().cloud_bin_points]
    return len(spreads) >= MIN_BINS and float(np.median(spreads)) >= _s().cloud_spread


def compare_clouds(a: np.ndarray, b: np.ndarray) -> SeriesPair | None:
    """Two point clouds (unit frame) compared by their conditional medians: the median y in
    CompareSettings.cloud_bins bins of their common x range, a curve that a restyle keeps
    (whatever the marker size, however markers merge into blobs) and that a shifted or reversed
    cloud moves."""
    if len(a) < 2 or len(b) < 2:
        return None
    lo, hi = max(a[:, 0].min(), b[:, 0].min()), min(a[:, 0].max(), b[:, 0].max())
    overlap = x_overlap(a, b)
    if hi <= lo or overlap < _s().min_x_overlap:
        return SeriesPair(shape=0.0, values=0.0, max_error=float("inf"), trend_same=False,
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
        se = [MEDIAN_SE * MAD_SIGMA * float(np.median(np.abs(v - np.median(v)))) / np.sqrt(len(v))
              for v in inside]
        allowed.append(max(_s().default_value_tolerance, 2.0 * float(np.hypot(*se))))
    if len(medians) < MIN_BINS:
        return _compare_points_unit(a, b, overlap)
    ma, mb = np.array(medians).T
    shape = _shape(ma, mb, flat=_s().flat)
    diff = np.abs(mb - ma)
    values = float(np.mean(diff <= np.array(allowed)))
    # Medians that all agree within their noise are the same cloud: a weak trend's medians
    # correlate poorly by chance alone.
    shape = max(shape, values)
    return SeriesPair(shape=shape, values=values, max_error=float(diff.max()),
                 trend_same=_direction(ma, 1.0) == _direction(mb, 1.0), x_overlap=overlap,
                 cloud=True)


def bar_match_reach(unit_pub: list[np.ndarray], series: list[Series]) -> float | None:
    """How far (unit frame, along x) a reproduced bar may stand from a published one and still
    be the same bar: a third of the smallest gap between neighbouring published bars, so that a
    bar is never taken for its neighbour in a group; None without two bars to measure it."""
    xs = np.sort(np.concatenate([p[:, 0] for p, s in zip(unit_pub, series) if s.kind == "bar"]
                                or [np.zeros(0)]))
    gaps = np.diff(xs)
    gaps = gaps[gaps > SAME_X]
    return float(gaps.min()) / BAR_REACH_SHARE if len(gaps) else None


def compare_bars(a: np.ndarray, b: np.ndarray, *, reach: float) -> SeriesPair:
    """Two bar series (unit frame) compared bar by bar: a bar has its counterpart at the same
    place along x (within `reach`), else none. Interpolating heights between bar positions, as
    curves are compared, would make neighbouring groups of grouped bars look alike (a group
    a third of a category off is its neighbour's shape, shifted)."""
    overlap = x_overlap(a, b)
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
        return SeriesPair(shape=0.0, values=0.0, max_error=float("inf"), trend_same=False,
                     x_overlap=overlap)
    ya, yb = np.array(paired).T
    close = np.abs(yb - ya) <= _s().default_value_tolerance
    # Published bars paired with a bar of the same height; a reproduced bar standing where no
    # published bar stands is one more that disagrees (one next to a published bar is the
    # reader's split of it: an edge, a hatch).
    step = float(np.median(np.diff(a[:, 0]))) if len(a) >= 2 else reach
    far = int(sum(np.min(np.abs(a[:, 0] - x)) > max(reach, 0.5 * step) for x in b[:, 0]))
    values = float(np.sum(close)) / (len(a) + far)
    if len(ya) >= MIN_BINS and np.ptp(ya) > 0 and np.ptp(yb) > 0:
        r = float(np.corrcoef(ya, yb)[0, 1])
        shape = max(0.0, r) if np.isfinite(r) else 0.0
    else:
        shape = values
    shape *= float(found.mean())
    return SeriesPair(shape=shape, values=values, max_error=float(np.abs(yb - ya).max()),
                 trend_same=_direction(ya, 1.0) == _direction(yb, 1.0), x_overlap=overlap)


def _compare_points_unit(a: np.ndarray, b: np.ndarray, overlap: float) -> SeriesPair:
    """Two clouds too thin to bin (unit frame): by where their mass lies."""
    covered = _histogram_overlap(a, b)
    near = np.abs(np.median(b[:, 1]) - np.median(a[:, 1]))
    return SeriesPair(shape=covered, values=covered, max_error=float(near),
                 trend_same=covered >= 0.5, x_overlap=overlap)


def compare_points(pub: np.ndarray, rep: np.ndarray, *, origin: np.ndarray,
                    scale: np.ndarray) -> SeriesPair | None:
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
        return _compare_points_unit(a, b, x_overlap(a, b))
    covered = max(mutual_coverage(a, b))
    near = np.abs(np.median(b[:, 1]) - np.median(a[:, 1]))
    return SeriesPair(shape=covered, values=covered, max_error=float(near),
                 trend_same=covered >= 0.5, x_overlap=x_overlap(a, b))


def x_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """The share of the two point sets' joint x extent that both cover."""
    lo, hi = max(a[:, 0].min(), b[:, 0].min()), min(a[:, 0].max(), b[:, 0].max())
    union = max(a[:, 0].max(), b[:, 0].max()) - min(a[:, 0].min(), b[:, 0].min())
    return float(max(0.0, hi - lo) / union) if union > 0 else 1.0


def with_reach(pair: SeriesPair, pub: np.ndarray, rep: np.ndarray, pub_ink: InkIndex,
                rep_ink: InkIndex) -> SeriesPair:
    """The pair with its reach (see SeriesPair.reach): the points outside the x range both series
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
    return replace(pair, reach=round(min(shares), REACH_DIGITS))
