"""Points from a mask: marker centres (scatter) or per-column centres of strokes (lines, K tracks).
"""

from __future__ import annotations

import numpy as np

from judging.signals.chart.series.masks import Comps, mask_extent
from judging.signals.chart.settings import reader_settings

MARKER_FILL, MARKER_ASPECT, MIN_MARKER = 0.4, 2.5, 3
"""A marker fills 40% of its box, is at most 2.5 times as long as wide and 3 pixels across."""
MERGED_BLOB, MAX_SPLIT = 1.6, 8
"""A blob over 1.6 typical markers is several merged ones, split into at most 8 by k-means."""
SPECK = 0.3
"""A blob under 0.3 of a typical marker is a speck, not a marker."""
TRACKS_SHARE = 0.35
"""Several tracks are followed when that many runs stand in 35% of the columns with ink."""
REACH, REACH_STROKE = 4, 0.6
"""A track reaches 4 pixels plus 0.6 of the two strokes' lengths from where it predicts."""
DRIFT = 0.02
"""... and 2% of the plot's height more for every column it skipped."""
LOST_AFTER, LOST_REACH = 0.08, 0.25
"""A track lost for 8% of the plot's width reaches a quarter of its height (or, alone, any)."""
STEADY_GAP = 3
"""Runs at most 3 columns apart update a track's slope; after a longer gap it is flat again."""
SLOPE_KEPT, SLOPE_NEW = 0.7, 0.3
"""A track's slope keeps 70% of what it was and takes 30% of the latest step."""
STEEPEST = 0.5
"""A step's slope is clipped to half the plot's height per column (a spike, not a jump)."""
MIN_TRACK_POINTS = 3
"""A track needs three points to be a curve."""
SHADOW_SHARE, SHADOW_ROWS = 0.7, 1.5
"""A track within 1.5 rows of an earlier one over 70% of its columns shadowed it."""


def marker_shaped(c: Comps) -> tuple[np.ndarray, np.ndarray]:
    """(span, compact): each component's larger side, and whether it is marker-shaped."""
    span = np.maximum(c.w, c.h)
    small = np.minimum(c.w, c.h)
    return span, (c.area >= MARKER_FILL * c.w * c.h) & (span <= MARKER_ASPECT * small) & \
        (small >= MIN_MARKER)


def _centres(c: Comps) -> list[tuple[float, float]]:
    """Each component's centre (row, column): `ndimage.center_of_mass(mask, c.labels, 1..n)`
    on the components' extent (sums of whole pixel coordinates, exact either way)."""
    box = mask_extent(c.labels)
    if box is None:
        return []
    t, b, l, r = box
    labels = c.labels[t:b, l:r].ravel()
    rows, cols = np.indices((b - t, r - l))
    count = np.bincount(labels, minlength=c.n + 1)[1:]
    cy = np.bincount(labels, weights=(rows + t).ravel(), minlength=c.n + 1)[1:] / count
    cx = np.bincount(labels, weights=(cols + l).ravel(), minlength=c.n + 1)[1:] / count
    return list(zip(cy.tolist(), cx.tolist()))


def marker_points(mask: np.ndarray, c: Comps) -> list[tuple[float, float]]:
    """Marker centres of a mask that `scattered` accepted (`c`: its components)."""
    _, compact = marker_shaped(c)
    typical = float(np.median(c.area[compact]))
    centres = _centres(c)
    points = []
    big_blobs = 0
    for k in range(c.n):
        cy, cx = centres[k]
        n = int(round(c.area[k] / typical))
        if n >= 2 and not compact[k] or n >= 2 and c.area[k] > MERGED_BLOB * typical:
            if big_blobs >= reader_settings().series.max_blobs:
                points.append((float(cx), float(cy)))
                continue
            big_blobs += 1
            oy, ox = int(c.y0[k]), int(c.x0[k])
            sub = c.labels[oy:oy + int(c.h[k]), ox:ox + int(c.w[k])] == k + 1
            ys, xs = np.nonzero(sub)
            ys, xs = ys + oy, xs + ox
            from scipy.cluster.vq import kmeans2
            data = np.column_stack([xs, ys]).astype(float)
            try:
                cents, _ = kmeans2(data, min(n, MAX_SPLIT), minit="++", seed=1)
            except Exception:  # pragma: no cover - degenerate blobs
                cents = np.array([[cx, cy]])
            points += [(float(px), float(py)) for px, py in cents]
        elif c.area[k] >= SPECK * typical:
            points.append((float(cx), float(cy)))
    return sorted(points)


def column_runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertical runs of a mask: (column, centre row, length), ordered by column then row."""
    box = mask_extent(mask)
    if box is None:
        empty = np.zeros(0, np.intp)
        return empty, empty.astype(float), empty.astype(float)
    t, b, l, r = box
    padded = np.zeros((r - l, b - t + 2), np.int8)
    padded[:, 1:-1] = mask[t:b, l:r].T
    d = np.diff(padded, axis=1)
    cs, rs = np.nonzero(d == 1)
    _, re = np.nonzero(d == -1)
    return cs + l, (rs + re - 1 + 2 * t) / 2.0, (re - rs).astype(float)


def line_tracks(mask: np.ndarray, max_tracks: int = 4) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Curves through a line group: [(x, y, coverage)] per track."""
    hh, ww = mask.shape
    cols, centres, lengths = column_runs(mask)
    if cols.size == 0:
        return []
    counts = np.bincount(cols, minlength=ww)
    present = counts > 0
    k_mode = np.bincount(counts[present]).argmax()
    K = int(min(max_tracks, max(1, k_mode)))
    if K > 1 and (counts[present] == K).mean() < TRACKS_SHARE:
        K = 1
    starts = np.concatenate([[0], np.cumsum(counts)])
    # Start where K runs appear in the longest stretch of columns.
    good = counts == K
    best_len, best_mid, run_start = 0, None, None
    for x in range(ww + 1):
        if x < ww and good[x]:
            if run_start is None:
                run_start = x
        elif run_start is not None:
            if x - run_start > best_len:
                best_len, best_mid = x - run_start, (run_start + x - 1) // 2
            run_start = None
    if best_mid is None:
        best_mid = int(np.nonzero(present)[0][0])
        K = 1
    ys = np.full((K, ww), np.nan)
    first = centres[starts[best_mid]:starts[best_mid + 1]]
    first_len = lengths[starts[best_mid]:starts[best_mid + 1]]
    order = np.argsort(first)[:K]
    for k, j in enumerate(order):
        ys[k, best_mid] = first[j]
    lens0 = np.full(K, 1.0)
    for k, j in enumerate(order):
        lens0[k] = first_len[j]
    if K == 1:
        ys[0] = _follow_one(centres, lengths, starts, counts, best_mid, ys[0, best_mid],
                            lens0[0], hh, ww)
    if K > 1:
        _follow_many(ys, (centres, lengths, starts, counts), best_mid, lens0, (hh, ww))
    return _distinct_tracks(ys, present)


def _follow_many(ys: np.ndarray, runs: tuple[np.ndarray, ...], best_mid: int,
                 lens0: np.ndarray, shape: tuple[int, int]) -> None:
    """Follow the K tracks started at column `best_mid` both ways, column by column, each to
    the nearest run its slope predicts (into `ys`). `runs`: (centres, lengths, first run of each
    column, runs per column). The nearest pairs are taken in numpy's order of the distances
    (`argsort`, which decides between equally near runs); the rest is the same arithmetic in
    Python floats, as in `_follow_one`: numpy's per-call cost on K x (a few runs) arrays was
    most of this function's time (issue 43)."""
    centre, length = runs[0].tolist(), runs[1].tolist()
    first, count = runs[2].tolist(), runs[3].tolist()
    hh, ww = shape
    K = len(ys)
    lost_after, drift = LOST_AFTER * ww, DRIFT * hh
    lost_reach, steepest = LOST_REACH * hh, STEEPEST * hh
    for step in (1, -1):
        last = ys[:, best_mid].tolist()
        last_x = [best_mid] * K
        last_len = lens0.tolist()
        slope = [0.0] * K
        x = best_mid + step
        while 0 <= x < ww:
            n = count[x]
            if n:
                cs = centre[first[x]:first[x] + n]
                ls = length[first[x]:first[x] + n]
                pred = [last[t] + slope[t] * (x - last_x[t]) for t in range(K)]
                dist = np.abs(np.array(pred)[:, None] - np.array(cs)[None, :])
                near = dist.ravel().tolist()
                used_t: set[int] = set()
                used_r: set[int] = set()
                for flat in np.argsort(dist, axis=None).tolist():
                    t, r = divmod(flat, n)
                    if t in used_t or (r in used_r and n >= K):
                        continue
                    gap = abs(x - last_x[t])
                    lost = gap > lost_after
                    allowed = REACH + REACH_STROKE * (last_len[t] + ls[r]) + drift * (gap - 1)
                    if lost:
                        allowed = max(allowed, lost_reach)
                    if near[flat] > allowed:
                        continue
                    used_t.add(t)
                    used_r.add(r)
                    y = cs[r]
                    if not lost and gap <= STEADY_GAP:
                        slope[t] = SLOPE_KEPT * slope[t] + SLOPE_NEW * min(
                            max((y - last[t]) / (x - last_x[t]), -steepest), steepest)
                    else:
                        slope[t] = 0.0
                    ys[t, x] = y
                    last[t], last_x[t], last_len[t] = y, x, ls[r]
                    if len(used_t) == K:
                        break
            x += step


def _distinct_tracks(ys: np.ndarray, present: np.ndarray
                     ) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """[(x, y, coverage)] of the tracks of at least three points that do not shadow another."""
    K, ww = ys.shape
    out = []
    xs = np.arange(ww, dtype=float)
    for k in range(K):
        ok = ~np.isnan(ys[k])
        if ok.sum() < MIN_TRACK_POINTS:
            continue
        # A track that only shadowed another one (they shared its runs) is not a curve.
        dup = False
        for j in range(k):
            both = ok & ~np.isnan(ys[j])
            if both.sum() >= SHADOW_SHARE * ok.sum() and \
                    np.median(np.abs(ys[k, both] - ys[j, both])) < SHADOW_ROWS:
                dup = True
        if dup:
            continue
        cover = ok.sum() / max(1, present.sum())
        out.append((xs[ok], ys[k, ok], float(cover)))
    return out


def _follow_one(centres: np.ndarray, lengths: np.ndarray, starts: np.ndarray,
                counts: np.ndarray, start_x: int, y0: float, len0: float, hh: int, ww: int
                ) -> np.ndarray:
    """`line_tracks`' tracking when there is one track (most colour groups): from `start_x` both
    ways, the nearest run within reach of the predicted height in each column, and once lost
    (no run within reach for 8% of the width) the nearest run at any height: the colour was
    read as one curve (`line_tracks` chose one track for it; a second curve of the colour in few
    columns, or a label in its colour, could then be taken). Otherwise the same arithmetic and
    choices as the general pass (the first of equally near runs), in Python floats: numpy's
    per-call cost on arrays of one or two runs was most of a chart reading's line tracing."""
    ys = np.full(ww, np.nan)
    ys[start_x] = y0
    centre, length = centres.tolist(), lengths.tolist()
    first, count = starts.tolist(), counts.tolist()
    lost_after, drift, steepest = LOST_AFTER * ww, DRIFT * hh, STEEPEST * hh
    for step in (1, -1):
        last, last_x, last_len, slope = float(y0), start_x, float(len0), 0.0
        x = start_x + step
        while 0 <= x < ww:
            if count[x]:
                gap = abs(x - last_x)
                lost = gap > lost_after
                pred = last + slope * (x - last_x)
                best, best_dist = -1, 0.0
                for i in range(first[x], first[x + 1]):
                    dist = abs(pred - centre[i])
                    reach = REACH + REACH_STROKE * (last_len + length[i]) + drift * (gap - 1)
                    if lost:
                        # Lost for a while (a spike's far side, a gap): a colour that holds one
                        # curve has no other ink to take for it, so its next run is the curve.
                        reach = float("inf")
                    if dist <= reach and (best < 0 or dist < best_dist):
                        best, best_dist = i, dist
                if best >= 0:
                    y = centre[best]
                    if not lost and gap <= STEADY_GAP:
                        slope = SLOPE_KEPT * slope + SLOPE_NEW * min(max((y - last) / (x - last_x),
                                                            -steepest), steepest)
                    else:
                        slope = 0.0
                    ys[x] = y
                    last, last_x, last_len = y, x, length[best]
            x += step
    return ys
