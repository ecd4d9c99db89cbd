"""compare_charts: what two chart readings agree on, the chart.* signals.

Panels are paired in reading order (top to bottom, left to right). Series are paired per panel
with the Hungarian assignment (scipy) on a cost that weighs legend names when both charts have
them and the data otherwise: the issue asks for "by legend name when both have one, else by
shape", and a name read by OCR can be partial ("no" for "no aug"), so names weigh, not decide.
"""

from __future__ import annotations

import numpy as np

from judging.models import Tolerance
from judging.signals.chart.compare.legends import legend_agreement
from judging.signals.chart.compare.panels import (
    VALUES_FLOOR,
    VALUES_WEIGHT,
    PanelResult,
    compare_panels,
    data_series,
)
from judging.signals.chart.compare.trust import panel_evidence, reading_confidence
from judging.signals.chart.evidence import weigh
from judging.signals.chart.settings import DEFAULT_COMPARE, CompareSettings, comparing_with
from judging.signals.chart.types import (
    CHART_SIGNALS,
    ChartComparison,
    ChartReading,
    Panel,
)

OTHER_SCALE = 0.4
"""Axes of another scale type (linear against log) keep 40% of the match score: the same
numbers drawn otherwise."""
FULL_OVERLAP = 0.9
"""A range overlap from this on counts in full: libraries pad an axis by a few percent."""
KIND_FLOOR, KIND_WEIGHT = 0.4, 0.6
"""Pairs of another mark kind (bars against lines) weigh 60% of the match score."""


def _reading_order(panels: list[Panel]) -> list[Panel]:
    if not panels:
        return []
    heights = [p.bbox[3] - p.bbox[1] for p in panels]
    row = max(1.0, 0.5 * min(heights))
    return sorted(panels, key=lambda p: (round(p.bbox[1] / row), p.bbox[0]))


def data_panels(reading: ChartReading) -> list[Panel]:
    """The panels that hold series, in reading order: how both compare and overlay pair them."""
    return [p for p in _reading_order(reading.panels) if p.series]


def _absent(reason: str) -> ChartComparison:
    return ChartComparison(signals={name: None for name in CHART_SIGNALS},
                           reasons={name: reason for name in CHART_SIGNALS})


def compare(published: ChartReading, reproduced: ChartReading, *,
            tolerance: Tolerance | None = None,
            settings: CompareSettings = DEFAULT_COMPARE) -> ChartComparison:
    with comparing_with(settings):
        return _compare_readings(published, reproduced, tolerance=tolerance, settings=settings)


def _compare_readings(published: ChartReading, reproduced: ChartReading, *,
                      tolerance: Tolerance | None,
                      settings: CompareSettings) -> ChartComparison:
    if not published.readable:
        return _absent(f"published chart unreadable: {published.reason}")
    if not reproduced.readable:
        return _absent(f"reproduced chart unreadable: {reproduced.reason}")
    pub_panels, rep_panels = data_panels(published), data_panels(reproduced)
    results = [compare_panels(a, b, tolerance) for a, b in zip(pub_panels, rep_panels)]
    # Series of panels without a counterpart are missing (or extra) as a whole.
    unpaired_pub = sum(len(data_series(p.series)) for p in pub_panels[len(results):])
    unpaired_rep = sum(len(data_series(p.series)) for p in rep_panels[len(results):])
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
    _agreement_signals(results, matches, signals, reasons,
                       counts=(n_pub, n_rep, on_both))
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
    _coverage_signals(results, max(len(pub_panels), len(rep_panels)), signals, reasons)
    panels = [panel_evidence(k, len(results), a, b, r) for k, (a, b, r) in
              enumerate(zip(pub_panels, rep_panels, results), 1)]
    evidence = weigh(panels, panel_counts=(len(pub_panels), len(rep_panels)),
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
                           matches=[(a, b, p.shape, p.values) for a, b, p in matches],
                           evidence=evidence, panel_evidence=panels)


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
    scale = 1.0 if signals["chart.axis_scale_match"] in (True, None) else OTHER_SCALE
    overlap = signals["chart.range_overlap"]
    overlap = 1.0 if overlap is None else min(1.0, overlap / FULL_OVERLAP) ** 2
    score = count * matched ** 2 * (0.5 + 0.5 * shape) * \
        (VALUES_FLOOR + VALUES_WEIGHT * values) * (0.5 + 0.5 * trend) * scale * overlap * \
        (KIND_FLOOR + KIND_WEIGHT * same_kind) * (0.5 + 0.5 * reach)
    return float(np.clip(score, 0.0, 1.0))


def _agreement_signals(results: list[PanelResult], matches: list, signals: dict,
                       reasons: dict, *, counts: tuple[int, int, int]) -> None:
    """The series counts and what the matched series agree on (shape, values, trend, scales,
    ranges), into `signals` or, absent, their reason into `reasons`. `counts`: the published
    and reproduced series and those drawn on both charts."""
    n_pub, n_rep, on_both = counts
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


def _coverage_signals(results: list[PanelResult], n_panels: int, signals: dict,
                      reasons: dict) -> None:
    """The series-free coverages (data points, data ink) over `n_panels` panels."""
    # A panel without a counterpart covers nothing.
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
