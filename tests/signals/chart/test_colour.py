"""`beyond` answers what the distance it stands for answers, pixel for pixel: on every kind of
colour the reader passes (integer, half-level medians, float64 and float32 means) and on the two
dtypes of its pixels (int16 `Page.rgb`, float32 plot areas), at thresholds that fall on levels
and between them."""

from __future__ import annotations

import numpy as np
import pytest

from judging.signals.chart.colour import beyond, maxabs


def _colours(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.integers(0, 256, 3).astype(float), rng.integers(0, 511, 3) / 2,
            rng.uniform(0, 255, 3), rng.uniform(0, 255, 3).astype(np.float32),
            np.median(rng.integers(0, 256, (7, 3)), axis=0), np.array([0.0, 255.0, 127.5])]


@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.uint8])
def test_beyond_is_the_thresholded_distance(dtype) -> None:
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, (41, 57, 3)).astype(dtype)
    checked = 0
    for colour in _colours(rng):
        for threshold in (0, 1, 12, 30.5, 48, 64, 254.6, 300):
            fast = beyond(rgb, colour, threshold)
            assert (fast == (maxabs(rgb, colour) > threshold)).all()
            precise = np.abs(rgb - np.asarray(colour)).max(axis=2) > threshold
            assert (beyond(rgb, colour, threshold, precise=True) == precise).all()
            checked += int(fast.any()) + int((~fast).any())
    assert checked > 40  # both answers met, not a mask that is all one way
