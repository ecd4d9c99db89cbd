"""render_overlay: the series read from both charts drawn on one set of axes per panel.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from judging.signals.chart.compare.charts import data_panels
from judging.signals.chart.compare.frame import Frame, coords, panel_frame
from judging.signals.chart.types import (
    ChartComparison,
    ChartReading,
    Panel,
)

#: The reviewers' picture: its proportions, margins (pixels) and inks.
ASPECT = (3, 4)
"""The smallest picture is 3/4 as tall as wide."""
ROWS_PER_SIZE = 3
"""Rows of panels a picture's width holds before it grows taller."""
KEY_INSET, KEY_LINE, KEY_ROOM = 6, 14, 16
"""Where the key line is written (from the left and the bottom) and the room it takes."""
MARGIN_LEFT, MARGIN, MARGIN_BOTTOM = 34, 8, 22
"""A panel's margins: room for the y labels on the left, for the x labels at the bottom."""
TEXT_HEIGHT, TEXT_GAP, LABEL_WIDTH = 10, 4, 40
"""Pillow's default font: a line's height, the gap under an axis, the width of a label."""
Y_PAD = 0.05
"""Room above and below the data, as a share of its range."""
KEY_INK, LABEL_INK, FRAME_INK = (60, 60, 60), (80, 80, 80), (120, 120, 120)
"""Greys of the key, the labels and the frame."""
UNMATCHED = (150, 150, 150)
"""The grey of a series with no counterpart."""
CHANNEL_MAX = 255
"""The lightest an 8-bit channel goes."""
PALE, DARK = 0.55, 0.7
"""The published series blended 55% towards white, the reproduced ones darkened to 70%."""
WIDE = 6
"""Line width of the published series (the reproduction's are 2: drawn over them)."""
PUBLISHED_COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189),
                     (255, 127, 14), (140, 86, 75)]


def overlay(published: ChartReading, reproduced: ChartReading, comparison: ChartComparison, *,
            size: int = 512) -> Image.Image | None:
    """The matched series of both charts on one set of axes per published panel: published as
    wide pale lines, the reproduction as thin dark ones of the same hue; unmatched series in
    grey. None when neither chart was readable."""
    pub_panels, rep_panels = data_panels(published), data_panels(reproduced)
    if not pub_panels and not rep_panels:
        return None
    pairs = list(zip(pub_panels, rep_panels))
    pairs += [(p, None) for p in pub_panels[len(pairs):]]
    pairs += [(None, p) for p in rep_panels[len(pairs):]]
    cols = 1 if len(pairs) == 1 else 2
    rows = (len(pairs) + cols - 1) // cols
    width, height = size, max(size * ASPECT[0] // ASPECT[1], rows * size // ROWS_PER_SIZE)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((KEY_INSET, height - KEY_LINE), "published: wide pale · reproduced: thin dark · "
              "grey: unmatched", fill=KEY_INK)
    cell_w, cell_h = width // cols, (height - KEY_ROOM) // rows
    pub_colour = {id(a): k for k, (a, _, _, _) in enumerate(comparison.matches)}
    rep_colour = {id(b): k for k, (_, b, _, _) in enumerate(comparison.matches)}
    for index, (pub, rep) in enumerate(pairs):
        left, top = (index % cols) * cell_w, (index // cols) * cell_h
        box = (left + MARGIN_LEFT, top + MARGIN, left + cell_w - MARGIN,
               top + cell_h - MARGIN_BOTTOM)
        _draw_panel(draw, box, pub, rep, pub_colour, rep_colour)
    return image


def _draw_panel(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], pub: Panel | None,
                rep: Panel | None, pub_colour: dict, rep_colour: dict) -> None:
    frame = panel_frame(pub, rep) if pub is not None and rep is not None else Frame(
        x_log=False, y_log=False, x_data=False, y_data=False)
    series = [(s, "pub") for s in (pub.series if pub else [])] + \
        [(s, "rep") for s in (rep.series if rep else [])]
    pts = [(s, who, coords(s, frame)) for s, who in series]
    allp = np.concatenate([p for _, _, p in pts if len(p)] or [np.zeros((1, 2))])
    x0, x1 = float(allp[:, 0].min()), float(allp[:, 0].max())
    y0, y1 = float(allp[:, 1].min()), float(allp[:, 1].max())
    if x1 <= x0:
        x1 = x0 + 1
    if y1 <= y0:
        y1 = y0 + 1
    pad = Y_PAD * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad
    left, top, right, bottom = box
    draw.rectangle(box, outline=FRAME_INK)

    def label(v: float, log: bool, data: bool) -> str:
        if not data:
            return f"{v:.2f}"
        return f"1e{v:.1f}" if log else f"{v:.3g}"

    label_x = 2 + left - MARGIN_LEFT
    draw.text((label_x, top), label(y1, frame.y_log, frame.y_data), fill=LABEL_INK)
    draw.text((label_x, bottom - TEXT_HEIGHT), label(y0, frame.y_log, frame.y_data),
              fill=LABEL_INK)
    draw.text((left, bottom + TEXT_GAP), label(x0, frame.x_log, frame.x_data), fill=LABEL_INK)
    draw.text((right - LABEL_WIDTH, bottom + TEXT_GAP), label(x1, frame.x_log, frame.x_data),
              fill=LABEL_INK)
    for s, who, p in sorted(pts, key=lambda t: t[1] != "pub"):
        if len(p) == 0:
            continue
        px = left + (p[:, 0] - x0) / (x1 - x0) * (right - left)
        py = bottom - (p[:, 1] - y0) / (y1 - y0) * (bottom - top)
        k = (pub_colour if who == "pub" else rep_colour).get(id(s))
        base = PUBLISHED_COLOURS[k % len(PUBLISHED_COLOURS)] if k is not None else UNMATCHED
        if who == "pub":
            colour = tuple(int(c + (CHANNEL_MAX - c) * PALE) for c in base)
            width = WIDE
        else:
            colour = tuple(int(c * DARK) for c in base)
            width = 2
        xy = list(zip(px.tolist(), py.tolist()))
        if s.kind == "line" and len(xy) > 1:
            draw.line(xy, fill=colour, width=width)
        else:
            r = width / 2 + 1
            for x, y in xy:
                draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
