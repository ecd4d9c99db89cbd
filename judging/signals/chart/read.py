"""read_chart's pipeline: plot areas -> tick labels (one OCR call) -> axis fits -> legend ->
series -> data units."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image

from judging.signals.chart.axes import (
    AxisLabels,
    TickLabel,
    assign_text,
    find_offset_label,
    find_tick_labels,
    fit_axis,
    label_crops,
    offset_like,
    parse_offset,
    plain_crop,
    snap,
    text_mask,
)
from judging.signals.chart.geometry import (
    Box,
    Grid,
    Page,
    find_plot_areas,
    gridlines,
    prepare,
)
from judging.signals.chart.legend import find_legend
from judging.signals.chart.ocr import TICK_WHITELIST, OcrUnavailable, read_crops
from judging.signals.chart.series import RawSeries, extract_series, plot_background
from judging.signals.chart.settings import (
    DEFAULT_READER,
    AxisSettings,
    LegendSettings,
    ReaderSettings,
    reading_with,
)
from judging.signals.chart.types import Axis, ChartReading, Panel, Series, Tick

DEFAULT_GLYPH = 8
"""A glyph's height (work pixels) when no tick label gave one: a small font at work resolution."""
HEX = 16
"""The base of a colour's hexadecimal style ("#rrggbb")."""


@dataclass
class _PanelDraft:
    """One plot area on its way to a Panel: what the reading steps have found so far."""

    box: Box
    plot_bg: np.ndarray
    """The plot area's background colour."""
    grid: Grid
    x_labels: AxisLabels
    y_labels: AxisLabels
    axes: dict[str, Axis | None] = field(default_factory=dict)
    """"x" and "y": the fitted axes (None: unreadable)."""
    offsets: dict[str, TickLabel] = field(default_factory=dict)
    """"x" and "y": the text that scales or shifts the axis's tick labels ("1e7"), if any."""
    strips: dict[str, object] = field(default_factory=dict)
    """"x" and "y": the strip the axis's tick labels were found in."""
    problems: list[str] = field(default_factory=list)


def read(image: Image.Image, *, ocr=None, settings: ReaderSettings = DEFAULT_READER
         ) -> ChartReading:
    # The series extraction still reads its settings from the context (reader_settings); the
    # other stages are given theirs.
    with reading_with(settings):
        return _read(image, ocr=ocr, settings=settings)


def _read(image: Image.Image, *, ocr=None, settings: ReaderSettings) -> ChartReading:
    start = time.perf_counter()
    size = image.size
    if min(size) < settings.read.min_side:
        return ChartReading([], False, f"image too small to read ({size[0]}x{size[1]})",
                            size=size)
    page = prepare(image, settings=settings.geometry)
    boxes = find_plot_areas(page, settings=settings.geometry)
    if not boxes:
        return ChartReading([], False, "no plot area found (no axes frame, tinted plot "
                            "background or grid)", size=size,
                            seconds=time.perf_counter() - start)
    mask = text_mask(page, settings=settings.axes)
    prepared, crops, owners = _drafts(page, boxes, mask, settings=settings)
    ocr_problem = None
    try:
        texts = read_crops(crops, whitelist=TICK_WHITELIST, ocr=ocr)
    except OcrUnavailable as exc:
        texts = [("", 0.0)] * len(crops)
        ocr_problem = f"OCR unavailable: {exc}"
    for (_, lab, index, count) in owners:
        assign_text(lab, texts[index:index + count])
    if not ocr_problem:
        _read_again_as_numbers(page, [(strip, lab) for strip, lab, _, _ in owners], ocr,
                               settings=settings.axes)
    panels_in = _with_axes(page, boxes, prepared, ocr_problem, ocr, settings=settings.axes)
    if not panels_in:
        return ChartReading([], False, "no plot area found", size=size,
                            seconds=time.perf_counter() - start)
    _share_axes(panels_in)
    # Legends (second OCR call, all panels at once).
    boxes_in = [p.box for p in panels_in]
    glyph = float(np.median([g for p in panels_in for g in (p.x_labels.glyph, p.y_labels.glyph)
                             if g] or [DEFAULT_GLYPH]))
    try:
        legends = find_legend(page, boxes_in, mask, glyph, ocr=ocr if not ocr_problem else False,
                              settings=settings.legend, geometry=settings.geometry)
    except OcrUnavailable:
        legends = [None] * len(boxes_in)
    panels = [_panel(page, draft, legend, settings=settings.legend)
              for draft, legend in zip(panels_in, legends)]
    panels = _share_legend_names(panels, same_colour=settings.read.same_colour)
    readable = any(p.series for p in panels)
    reason = None
    if not readable:
        reason = "no data series found in the plot area" + ("s" if len(panels) > 1 else "")
    else:
        issues = [q for p in panels if p.series for q in p.problems if "unreadable" in q]
        if issues:
            reason = "; ".join(dict.fromkeys(issues))
    return ChartReading(panels, readable, reason, size=size,
                        seconds=time.perf_counter() - start)


def _drafts(page: Page, boxes: list[Box], mask: np.ndarray, *, settings: ReaderSettings
            ) -> tuple[list[_PanelDraft], list, list]:
    """A draft per plot area (background, gridlines, tick labels found) and the crops of all
    their tick labels, to read in one OCR call, with which label owns which crops."""
    prepared: list[_PanelDraft] = []
    crops, owners = [], []
    for box in boxes:
        others = [o for o in boxes if o is not box]
        rgb = page.rgb[box.top:box.bottom + 1, box.left:box.right + 1].astype(np.float32)
        plot_bg = plot_background(rgb)
        grid = gridlines(page, box, plot_bg, settings=settings.geometry)
        xl, yl, strips = find_tick_labels(page, box, others, mask, grid.xs, grid.ys,
                                          settings=settings.axes)
        by_orient = {s_.orient: s_ for s_ in strips}
        draft = _PanelDraft(box=box, plot_bg=plot_bg, grid=grid, x_labels=xl, y_labels=yl)
        for axis_labels in (xl, yl):
            strip = by_orient.get(axis_labels.orientation)
            draft.strips[axis_labels.orientation] = strip
            to_read = [(strip, lab) for lab in axis_labels.labels]
            offset = find_offset_label(page, box, others, mask, axis_labels,
                                       settings=settings.axes)
            if offset is not None:
                draft.offsets[axis_labels.orientation] = offset[1]
                to_read.append(offset)
            for strip_, lab in to_read:
                pieces = label_crops(page, strip_, lab, settings=settings.axes)
                owners.append((strip_, lab, len(crops), len(pieces)))
                crops += pieces
        prepared.append(draft)
    return prepared, crops, owners


def _with_axes(page: Page, boxes: list[Box], prepared: list[_PanelDraft],
               ocr_problem: str | None, ocr, *, settings: AxisSettings) -> list[_PanelDraft]:
    """The drafts with their axes fitted to the tick labels read, without the plot areas that
    are no panels (a framed legend, an inset box)."""
    panels_in: list[_PanelDraft] = []
    for draft in prepared:
        box, xl, yl = draft.box, draft.x_labels, draft.y_labels
        axes, problems = draft.axes, draft.problems
        for axis_labels in (xl, yl):
            o = axis_labels.orientation
            if ocr_problem:
                axes[o], why = None, f"{o} axis unreadable: {ocr_problem}"
            elif not axis_labels.labels:
                axes[o], why = None, f"{o} axis unreadable: " + (
                    axis_labels.problem or "no tick labels found").split(": ")[-1]
            else:
                axes[o], why = _axis(page, box, axis_labels, draft.offsets.get(o),
                                     settings=settings)
                if axes[o] is None:
                    axes[o], why = _axis_read_alone(page, draft, axis_labels, ocr, why,
                                                    settings=settings)
            if why:
                problems.append(why)
        parsed = sum(lab.value is not None for lab in xl.labels + yl.labels)
        if len(boxes) > 1 and not any(_aligned(box, o) for o in boxes if o is not box):
            # A plot area has tick labels outside it (a framed legend or inset box has not),
            # unless it shares them with an aligned panel (sharex / sharey subplots).
            if (box.source != "frame" and parsed == 0) or not (xl.labels or yl.labels):
                continue
        panels_in.append(draft)
    return panels_in


def _panel(page: Page, draft: _PanelDraft, legend, *, settings: LegendSettings) -> Panel:
    """One panel read: its series extracted and named after the legend, in data units."""
    box, axes, problems = draft.box, draft.axes, draft.problems
    exclude = legend.covers() if legend is not None else []
    raw, more, ink = extract_series(page, box, exclude, grid=draft.grid,
                                    plot_bg=draft.plot_bg)
    problems = problems + more
    names = legend.assign_sure(raw, settings=settings) if legend is not None \
        else [(None, True)] * len(raw)
    series = [_to_series(page, box, r, name, axes.get("x"), axes.get("y"), name_sure=sure)
              for r, (name, sure) in zip(raw, names)]
    series = [s_ for s_ in series if s_ is not None]
    f = page.factor
    bbox = (box.left * f, box.top * f, (box.right + 1) * f, (box.bottom + 1) * f)
    legend_bbox = None
    if legend is not None:
        lb = legend.bbox
        legend_bbox = (lb[0] * f, lb[1] * f, (lb[2] + 1) * f, (lb[3] + 1) * f)
    ink_data, ink_normalised = _to_units(page, box, ink, axes.get("x"), axes.get("y"))
    return Panel(bbox=bbox, x=axes.get("x"), y=axes.get("y"), series=series,
                 legend=list(legend.names) if legend is not None else [],
                 problems=problems, legend_bbox=legend_bbox, ink=ink_data,
                 ink_normalised=ink_normalised)


def _share_legend_names(panels: list[Panel], *, same_colour: float) -> list[Panel]:
    """Facets (ggplot2's facet_wrap, subplots with one legend) name their series once: a panel
    without a legend of its own takes the names of the legend-named series of the other panels,
    matched by colour and style, when the match is one to one. Unnamed, a facet's series could
    only be paired by their data, and a swap inside it would go unseen."""
    named: dict[str, list[tuple[tuple[int, int, int], str, str]]] = {}
    for panel in panels:
        for s_ in panel.series:
            colour = _colour(s_.style)
            if s_.name and colour is not None:
                named.setdefault(s_.name, []).append((colour, s_.style.partition(" ")[2],
                                                      s_.kind))
    if not named:
        return panels
    out = []
    for panel in panels:
        if panel.legend or not panel.series:
            out.append(panel)
            continue
        guesses = []
        for s_ in panel.series:
            colour = _colour(s_.style)
            hits = {name for name, looks in named.items() for c, line, kind in looks
                    if colour is not None and kind == s_.kind and
                    line == s_.style.partition(" ")[2] and
                    max(abs(a - b) for a, b in zip(c, colour)) <= same_colour}
            guesses.append(next(iter(hits)) if len(hits) == 1 and not s_.name else s_.name)
        given = [g for g in guesses if g]
        if len(given) != len(set(given)):  # two series for one name: not one to one
            out.append(panel)
            continue
        out.append(replace(panel, series=[replace(s_, name=g)
                                          for s_, g in zip(panel.series, guesses)]))
    return out


def _colour(style: str) -> tuple[int, int, int] | None:
    head = style.partition(" ")[0]
    if len(head) != len("#rrggbb") or not head.startswith("#"):
        return None
    try:
        return int(head[1:3], HEX), int(head[3:5], HEX), int(head[5:7], HEX)
    except ValueError:
        return None


def _read_again_as_numbers(page: Page, labels: list[tuple[object, TickLabel]], ocr, *,
                           settings: AxisSettings) -> None:
    """A label in e-notation ("7.5e+07") whose sign, set above the baseline, was taken for a
    raised exponent, read again whole: its base then reads as a number with an "e" in it."""
    again = [(strip, lab) for strip, lab in labels
             if lab.power and re.match(r"[+-]?\d+(\.\d*)?[eE]", lab.text)]
    if not again:
        return
    texts = read_crops([plain_crop(page, strip, lab, settings=settings) for strip, lab in again],
                       whitelist=TICK_WHITELIST, ocr=ocr)
    for (_, lab), text in zip(again, texts):
        lab.power = False
        assign_text(lab, [text])


def _axis_read_alone(page: Page, draft: _PanelDraft, labels: AxisLabels, ocr,
                     why: str | None, *, settings: AxisSettings) -> tuple[Axis | None, str | None]:
    """An axis whose tick labels, read on one sheet with every other label of the chart, do
    not fit, read again label by label. Tesseract lays a sheet out as one block: a wide or taller
    crop beside small labels (an axis name taken for a label, a 512-px figure's 6-px digits)
    changes how it segments the others ("25 000" read "250G", "15 000" "145000"), which a label
    read alone escapes. A second reading is a second chance for misread digits to line up by
    luck, so it must do better than a first: its fit is kept only when it rests on all the
    labels but `reread_slack` and on at least `reread_labels`; else the first reading and its
    reason stand."""
    strip = draft.strips.get(labels.orientation)
    # Only labels the first reading saw digits in: words (categories) and rotated text read as
    # letters read no better alone, and each label read alone costs a tesseract call.
    numeric = sum(bool(re.search(r"\d", lab.text)) for lab in labels.labels)
    if strip is None or numeric < settings.reread_labels:
        return None, why
    before = [(lab.text, lab.value, lab.conf, lab.power) for lab in labels.labels]
    for lab in labels.labels:
        assign_text(lab, read_crops(label_crops(page, strip, lab, settings=settings),
                                    whitelist=TICK_WHITELIST, ocr=ocr))
    axis, _ = _axis(page, draft.box, labels, draft.offsets.get(labels.orientation),
                            settings=settings)
    enough = max(settings.reread_labels, len(labels.labels) - settings.reread_slack)
    if axis is not None and len(axis.ticks) >= enough:
        return axis, None
    for lab, (text, value, conf, power) in zip(labels.labels, before):
        lab.text, lab.value, lab.conf, lab.power = text, value, conf, power
    return None, why


def _axis(page: Page, box: Box, labels, offset: TickLabel | None = None, *,
          settings: AxisSettings) -> tuple[Axis | None, str | None]:
    o = labels.orientation
    positions = snap(labels.labels, o, labels.ticks, labels.glyph, settings=settings)
    positions = [float(v) for v in page.to_full(positions)]
    if o == "x":
        span = tuple(float(v) for v in page.to_full([box.left - 0.5, box.right + 0.5]))
    else:
        span = tuple(float(v) for v in page.to_full([box.bottom + 0.5, box.top - 0.5]))
    fit, why = fit_axis(positions, labels.labels, span, o, settings=settings)
    if fit is None:
        return None, why
    if offset is not None and fit.scale == "linear":
        scaled = parse_offset(offset.text)
        if scaled is None and offset_like(offset.text):
            return None, (f"{o} axis unreadable: its tick labels are scaled or shifted by a text "
                          f"beside them that was not read ({offset.text!r})")
        if scaled is not None:
            fit = fit.scaled(*scaled, note=offset.text)
    axis = Axis(orientation=o, scale=fit.scale, pixel_range=span, data_range=(0.0, 0.0),
                ticks=[Tick(p, v, t) for p, v, t in fit.ticks], confidence=fit.confidence,
                intercept=fit.intercept, slope=fit.slope)
    lo, hi = axis.to_data(np.array(span))
    return Axis(orientation=o, scale=fit.scale, pixel_range=span,
                data_range=(float(lo), float(hi)), ticks=axis.ticks,
                confidence=fit.confidence, intercept=fit.intercept, slope=fit.slope), None


def _aligned(a: Box, b: Box, slack: int = 3) -> bool:
    """Panels in one column (same left and right) or one row (same top and bottom)."""
    return ((abs(a.left - b.left) <= slack and abs(a.right - b.right) <= slack)
            or (abs(a.top - b.top) <= slack and abs(a.bottom - b.bottom) <= slack))


def _share_axes(panels: list[_PanelDraft]) -> None:
    """A panel without tick labels on its x (y) axis borrows the axis of an aligned panel that
    shares it (subplots with sharex/sharey label only the outer axes). A panel whose own tick
    labels were found but not read has an axis of its own: borrowing its neighbour's would
    put its data on another scale (side-by-side panels with their own y ranges)."""
    for p in panels:
        box, axes = p.box, p.axes
        for o in ("x", "y"):
            own = p.x_labels if o == "x" else p.y_labels
            if axes.get(o) is not None or own.labels:
                continue
            for q in panels:
                lent = q.axes.get(o)
                if q is p or lent is None:
                    continue
                b2 = q.box
                aligned = (abs(b2.left - box.left) <= 2 and abs(b2.right - box.right) <= 2) \
                    if o == "x" else (abs(b2.top - box.top) <= 2 and abs(b2.bottom - box.bottom) <= 2)
                if aligned:
                    axes[o] = replace(lent, borrowed=True)
                    p.problems = [m for m in p.problems if not m.startswith(f"{o} axis")]
                    break


def _to_units(page: Page, box: Box, work: np.ndarray, x_axis: Axis | None,
              y_axis: Axis | None) -> tuple[np.ndarray, np.ndarray]:
    """Work-pixel (x, y) rows in data units (plot-area units on an unread axis) and in plot-area
    units, finite rows only."""
    x, y = work[:, 0], work[:, 1]
    nx = (x - (box.left - 0.5)) / box.width
    ny = ((box.bottom + 0.5) - y) / box.height
    normalised = np.column_stack([nx, ny])
    with np.errstate(invalid="ignore", over="ignore"):
        xs = x_axis.to_data(page.to_full(x)) if x_axis is not None else nx
        ys = y_axis.to_data(page.to_full(y)) if y_axis is not None else ny
    pts = np.column_stack([xs, ys])
    ok = np.isfinite(pts).all(axis=1)
    return pts[ok], normalised[ok]


def _to_series(page: Page, box: Box, raw: RawSeries, name: str | None,
               x_axis: Axis | None, y_axis: Axis | None, *, name_sure: bool = True
               ) -> Series | None:
    pts, normalised = _to_units(page, box, np.column_stack([raw.x, raw.y]), x_axis, y_axis)
    if len(pts) == 0:
        return None
    order = np.argsort(pts[:, 0], kind="stable")
    conf = raw.confidence
    if x_axis is not None and y_axis is not None:
        conf *= min(1.0, 0.5 + 0.5 * min(x_axis.confidence, y_axis.confidence))
    else:
        conf *= 0.5
    return Series(name=name, style=raw.style, kind=raw.kind, points=pts[order],
                  confidence=round(float(conf), 3),
                  x_units="data" if x_axis is not None else "normalised",
                  y_units="data" if y_axis is not None else "normalised",
                  normalised=normalised[order], name_sure=name_sure or name is None)
