"""The chart reader's morphology on the ink's extent gives what scipy gives on the whole plot.

`judging.signals.chart.series` labels, fills holes, dilates, opens, finds runs and centres on the
bounding box of a colour's ink (a fraction of the plot area) instead of the whole area; these
properties hold it to scipy's whole-array results, pixel for pixel, on masks that touch the
edges, hold holes of every size, or are empty.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import ndimage

from judging.signals.chart.series import masks as morphology
from judging.signals.chart.series import points

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def masks(draw) -> np.ndarray:
    """A plot-sized boolean mask: strokes, rings (holes), blobs and specks, anywhere, the edges
    included; sometimes empty."""
    hh = draw(st.integers(8, 90))
    ww = draw(st.integers(8, 120))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = np.zeros((hh, ww), bool)
    for _ in range(draw(st.integers(0, 6))):
        kind = rng.integers(0, 4)
        y, x = int(rng.integers(0, hh)), int(rng.integers(0, ww))
        r = int(rng.integers(1, 9))
        if kind == 0:  # a ring: a hole inside
            yy, xx = np.ogrid[:hh, :ww]
            d = (yy - y) ** 2 + (xx - x) ** 2
            mask |= (d <= r * r) & (d >= max(0, r - 2) ** 2)
        elif kind == 1:  # a stroke across
            ys = np.clip(y + np.cumsum(rng.integers(-1, 2, ww)), 0, hh - 1)
            mask[ys, np.arange(ww)] = True
        elif kind == 2:  # a blob
            mask[max(0, y - r):y + r, max(0, x - r):x + r] = True
        else:  # specks
            mask |= rng.random((hh, ww)) < 0.02
    return mask


def _fill_holes_reference(mask: np.ndarray, hh: int, ww: int) -> np.ndarray:
    """What the reader did before: scipy's hole filling, then the holes no bigger than a marker."""
    filled = ndimage.binary_fill_holes(mask)
    holes = filled & ~mask
    if not holes.any():
        return mask
    lab, n = ndimage.label(holes)
    sizes = np.bincount(lab.ravel(), minlength=n + 1)
    keep = sizes <= (0.05 * min(hh, ww)) ** 2
    keep[0] = False
    return mask | keep[lab]


def _runs_reference(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hh, ww = mask.shape
    padded = np.zeros((ww, hh + 2), np.int8)
    padded[:, 1:-1] = mask.T
    d = np.diff(padded, axis=1)
    cs, rs = np.nonzero(d == 1)
    _, re = np.nonzero(d == -1)
    return cs, (rs + re - 1) / 2.0, (re - rs).astype(float)


@SETTINGS
@given(masks())
def test_components_are_scipys_labels(mask):
    c = morphology.components(mask)
    labels, n = ndimage.label(mask, structure=np.ones((3, 3), bool))
    assert c.n == n
    assert np.array_equal(c.labels, labels)
    objs = ndimage.find_objects(labels)
    assert c.x0.tolist() == [float(sl[1].start) for sl in objs]
    assert c.y0.tolist() == [float(sl[0].start) for sl in objs]
    assert c.w.tolist() == [float(sl[1].stop - sl[1].start) for sl in objs]
    assert c.h.tolist() == [float(sl[0].stop - sl[0].start) for sl in objs]
    assert c.area.tolist() == np.bincount(labels.ravel(), minlength=n + 1)[1:].tolist()


@SETTINGS
@given(masks(), st.integers(20, 400))
def test_small_holes_filled_as_scipy_fills_them(mask, size):
    # `size` stands for the plot's shorter side, which sets the largest hole filled.
    filled, _ = morphology.filled_holes(mask, size, size)
    assert np.array_equal(filled, _fill_holes_reference(mask, size, size))


@SETTINGS
@given(masks(), st.integers(1, 8))
def test_dilation_on_the_extent_is_scipys(mask, iterations):
    assert np.array_equal(morphology.dilate(mask, iterations),
                          ndimage.binary_dilation(mask, iterations=iterations))


@SETTINGS
@given(masks(), st.integers(1, 5))
def test_opening_on_the_extent_is_scipys(mask, r):
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    disk = (xx ** 2 + yy ** 2) <= r * r + 0.5
    assert np.array_equal(morphology.binary_open(mask, disk), ndimage.binary_opening(mask, structure=disk))


@SETTINGS
@given(masks())
def test_runs_and_centres_on_the_extent(mask):
    got, want = points.column_runs(mask), _runs_reference(mask)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)
    c = morphology.components(mask)
    centres = points._centres(c)
    if c.n:
        assert centres == [tuple(map(float, v)) for v in
                           ndimage.center_of_mass(mask, c.labels, np.arange(1, c.n + 1))]
    else:
        assert centres == []
