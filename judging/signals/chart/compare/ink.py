"""How much of one chart's points lie on the other chart's data ink (series-free agreement).
"""

from __future__ import annotations

import numpy as np

from judging.signals.chart.compare.frame import Frame, unit_frame
from judging.signals.chart.settings import compare_settings as _s
from judging.signals.chart.types import Panel

BOUND_SLACK = 1.000001
"""The KD-tree's search bound a hair past the tolerance: a point exactly at the tolerance is
near (`<=`), and the tree's bound is strict."""


class InkIndex:
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
        near, _ = self._tree.query(points, p=np.inf, distance_upper_bound=tolerance * BOUND_SLACK)
        return float(np.mean(near <= tolerance))


def drawn_over(j: int, rep_pts: list[np.ndarray], origin: np.ndarray, scale: np.ndarray, *,
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
    covered, _ = mutual_coverage((own - origin) / scale, (np.concatenate(others) - origin) / scale)
    return covered >= _s().drawn_over


def mutual_coverage(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
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


def data_coverage(panel: Panel, frame: Frame, pub_pts: list[np.ndarray],
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
    origin, scale = unit_frame(panel, frame, pub_pts)
    return mutual_coverage((a - origin) / scale, (b - origin) / scale)
