"""A claim's signals by their catalogue names (`judging.signal_catalogue`), from what is already
loaded: a figure pair (`measure_pair`: pixel similarity, the copy check, the chart comparison read
from the images or built from the figures' data) and reported against reproduced values
(`measure_numbers`). Pure: no files are read or written here; `judging.run.measure` loads the
figures and data files, caches the measurement and writes the reviewer images.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from PIL import Image

from judging.figures.data import FigureDataFile
from judging.models import (
    MAX_NOTE_CHARS,
    ChartTrace,
    ClaimInput,
    ClaimKind,
    Flag,
    Signal,
    Tolerance,
)
from judging.signal_catalogue import signal_names
from judging.signals.chart import (
    CHART_SIGNALS,
    CHART_SOURCE_SIGNALS,
    ChartReading,
    chart_trace,
    compare_charts,
    comparison_signals,
    read_chart,
    reading_from_data,
    render_overlay,
    without_reference_lines,
)
from judging.signals.copies import CopyCheck
from judging.signals.numeric import agreement, table_agreement
from judging.signals.pixel import DEFAULT_SIZE, PairComparison, compare_figures

log = logging.getLogger(__name__)

#: Every signal of a figure pair (absent together, with the reason, when the pair is unusable).
FIGURE_SIGNALS = (*signal_names("pixel"), *CHART_SIGNALS, *CHART_SOURCE_SIGNALS)


#: The flag of a figure pair whose chart reading trace failed to build (its detail says why).
TRACE_FAILED = "chart_trace_failed"

#: Chart readings of this process by pixel content (oldest dropped first past READINGS_KEPT).
_READINGS: dict[str, ChartReading] = {}
READINGS_KEPT = 128


def read_chart_once(image: Image.Image) -> ChartReading:
    """read_chart, remembered by pixel content for this process: reading a chart costs about
    0.3 s, and one process (a rerun with other rubrics, the test suite) meets a figure again."""
    digest = hashlib.sha256(image.mode.encode() + repr(image.size).encode()
                            + image.tobytes()).hexdigest()
    reading = _READINGS.get(digest)
    if reading is None:
        reading = read_chart(image)
        if len(_READINGS) >= READINGS_KEPT:
            _READINGS.pop(next(iter(_READINGS)))
        _READINGS[digest] = reading
    return reading


@dataclass
class ChartPair:
    """The chart comparison of a figure pair, and how each side was read."""

    signals: dict[str, Signal]
    overlay: Image.Image | None = None
    reference_lines: int = 0
    """Unnamed flat lines of an image side left out because the data side has no such series."""
    trace: ChartTrace | None = None
    """What was read of each figure and what the evidence confirmed (None: no comparison, or
    no trace could be built: then `flags` says why)."""
    flags: list[Flag] = field(default_factory=list)
    """Why the comparison has no trace (`TRACE_FAILED`), when building it failed."""


def chart_readings(published: Image.Image, reproduced: Image.Image, *,
                   published_data: FigureDataFile | None = None,
                   reproduced_data: FigureDataFile | None = None
                   ) -> tuple[ChartReading, ChartReading, int]:
    """The readings of a figure pair: a side with data is built from it, the other read from
    its image; a scale a data file leaves unstated comes from the other side. When one side is
    data and the other an image, the image's reference lines that the data has no series for
    are left out (their count is the third value)."""
    published_reading = read_chart_once(published) if published_data is None else None
    reproduced_reading = read_chart_once(reproduced) if reproduced_data is None else None
    if published_data is not None:
        # both from data: the reproduced data lends the scales it states
        other = (reading_from_data(reproduced_data.data) if reproduced_data is not None
                 else reproduced_reading)
        published_reading = reading_from_data(published_data.data, other=other)
    if reproduced_data is not None:
        reproduced_reading = reading_from_data(reproduced_data.data, other=published_reading)
    assert published_reading is not None and reproduced_reading is not None
    left_out = 0
    if published_data is None and reproduced_data is not None:
        published_reading, left_out = without_reference_lines(published_reading,
                                                              reproduced_reading)
    elif published_data is not None and reproduced_data is None:
        reproduced_reading, left_out = without_reference_lines(reproduced_reading,
                                                               published_reading)
    return published_reading, reproduced_reading, left_out


def compare_pair(published: Image.Image, reproduced: Image.Image, *,
                 tolerance: Tolerance | None, published_data: FigureDataFile | None = None,
                 reproduced_data: FigureDataFile | None = None) -> ChartPair:
    """The chart.* signals of a figure pair and the overlay of the data of both (from a side's
    data file instead of its image where one is given)."""
    try:
        published_reading, reproduced_reading, left_out = chart_readings(
            published, reproduced, published_data=published_data,
            reproduced_data=reproduced_data)
        comparison = compare_charts(published_reading, reproduced_reading, tolerance=tolerance)
        overlay = render_overlay(published_reading, reproduced_reading, comparison)
    except Exception as exc:  # heuristics over untrusted images: a failure is an absent signal
        log.exception("reading the charts failed")
        reason = f"chart reading failed ({type(exc).__name__}: {str(exc)[:120]})"
        return ChartPair(signals={name: Signal.absent(reason) for name in CHART_SIGNALS})
    try:
        trace = chart_trace(published_reading, reproduced_reading, comparison,
                            published_source="image" if published_data is None else "data",
                            reproduced_source="image" if reproduced_data is None else "data")
    except Exception as exc:  # the trace explains the signals: without it they still stand
        log.exception("tracing the chart reading failed")
        # The line says why it has no trace (it said nothing: an absent trace looked like a
        # pair never compared).
        return ChartPair(signals=comparison_signals(comparison), overlay=overlay,
                         reference_lines=left_out, flags=[Flag(name=TRACE_FAILED, detail=(
                             f"the chart reading trace could not be built "
                             f"({type(exc).__name__}: {str(exc)[:120]}); the chart signals "
                             f"stand without it")[:MAX_NOTE_CHARS])])
    return ChartPair(signals=comparison_signals(comparison), overlay=overlay,
                     reference_lines=left_out, trace=trace)


def measure_chart(published: Image.Image, reproduced: Image.Image, *,
                  tolerance: Tolerance | None, published_data: FigureDataFile | None = None,
                  reproduced_data: FigureDataFile | None = None
                  ) -> tuple[dict[str, Signal], Image.Image | None]:
    """The chart.* signals of a figure pair and the overlay (see `compare_pair`)."""
    pair = compare_pair(published, reproduced, tolerance=tolerance,
                        published_data=published_data, reproduced_data=reproduced_data)
    return pair.signals, pair.overlay


def copy_signals(check: CopyCheck, rerun: Callable[[], str | None]
                 ) -> tuple[dict[str, Signal], list[Flag]]:
    """`pixel.copy` and `pixel.identical_rerender`, and their flag: a pixel-identical figure
    whose cited logs show its plotting script re-run (`rerun()`, asked only then: its
    description, or None) is an identical re-render for a human to confirm (a bit-exact re-run
    of deterministic plotting code is possible), not a copy."""
    shown = rerun() if check.identical else None
    signals = {"pixel.copy": Signal(value=check.copy and shown is None),
               "pixel.identical_rerender": Signal(value=shown is not None),
               "pixel.near_identical": Signal(value=check.near_identical)}
    if check.near_identical:
        return signals, [Flag(name="near_identical", detail=(
            f"the reproduced figure is {check.how}: the same plotting code run again "
            f"elsewhere, or a copy with a label edited; a human should tell which"
        )[:MAX_NOTE_CHARS])]
    if shown is not None:
        return signals, [Flag(name="identical_rerender", detail=(
            f"the reproduced figure is pixel-identical to the published figure ({check.how}), "
            f"and {shown}: a human should confirm a bit-exact re-run of the plotting code"
        )[:MAX_NOTE_CHARS])]
    if check.copy:
        return signals, [Flag(name="copy", detail=f"the reproduced figure is a copy of the "
                                                  f"published figure ({check.how})")]
    return signals, []


@dataclass
class PairSignals:
    """What a figure pair measures: its signals (catalogue names, in catalogue order), the copy
    flags, the normalised images and diff, and the chart overlay for reviewers."""

    signals: dict[str, Signal]
    comparison: PairComparison
    flags: list[Flag] = field(default_factory=list)
    overlay: Image.Image | None = None
    reference_lines: int = 0
    """Reference lines of an image side left out against the other side's data (see ChartPair)."""
    chart_trace: ChartTrace | None = None
    """The reading trace of the chart comparison (see ChartPair)."""


def measure_pair(published: Image.Image, reproduced: Image.Image, *, size: int = DEFAULT_SIZE,
                 same_bytes: bool = False, tolerance: Tolerance | None = None, chart: bool = True,
                 published_data: FigureDataFile | None = None,
                 reproduced_data: FigureDataFile | None = None,
                 rerun: Callable[[], str | None] = lambda: None) -> PairSignals:
    """Every signal of a figure pair: pixel.* (compared at `size`), the copy check, and with
    `chart` the chart.* signals, each side's series taken from its data file where one is given
    (chart.published_from_data / chart.reproduced_from_data say which)."""
    comparison = compare_figures(published, reproduced, size=size, same_bytes=same_bytes)
    pixel = comparison.signals
    signals = {
        "pixel.ssim": Signal(value=round(pixel.ssim, 6)),
        "pixel.edge_f1": (Signal(value=round(pixel.edge_f1, 6)) if pixel.edge_f1 is not None
                          else Signal.absent("neither figure has any visible stroke")),
        "pixel.palette_distance": Signal(value=round(pixel.palette_distance, 6)),
        "pixel.phash_distance": Signal(value=round(pixel.phash_distance, 6)),
        "pixel.mean_abs_diff": Signal(value=round(pixel.mean_abs_diff, 6)),
    }
    copied, flags = copy_signals(comparison.copy_check, rerun)
    signals.update(copied)
    result = PairSignals(signals=signals, comparison=comparison, flags=flags)
    if chart:
        pair = compare_pair(published, reproduced, tolerance=tolerance,
                            published_data=published_data, reproduced_data=reproduced_data)
        signals.update(pair.signals)
        signals["chart.published_from_data"] = Signal(value=published_data is not None)
        signals["chart.reproduced_from_data"] = Signal(value=reproduced_data is not None)
        result.overlay, result.reference_lines = pair.overlay, pair.reference_lines
        result.chart_trace = pair.trace
        result.flags.extend(pair.flags)
    return result


#: The difference of two finite floats can overflow (1e308 - -1e308), and a relative difference
#: can too (1e300 / 1e-300): such a value cannot be stored in JSON (it would be written as null and
#: make the run directory unreadable), so the signal is recorded as absent with the reason.
_OVERFLOW = "too large to represent as a 64-bit float (the computation overflows)"


def _number(value: float) -> Signal:
    return Signal(value=value) if math.isfinite(value) else Signal.absent(_OVERFLOW)


def measure_numbers(claim: ClaimInput) -> dict[str, Signal]:
    """The numeric.* signals of a number or table claim (none for a figure claim)."""
    c = claim.claim
    if c.kind is ClaimKind.number:
        if c.reported_value is None:
            reason = "no reported value (neither in the submission nor the registry)"
        elif c.reproduced_value is None:
            reason = "no reproduced value"
        else:
            found = agreement(reported=c.reported_value, reproduced=c.reproduced_value,
                              tolerance=c.tolerance)
            return {
                "numeric.abs_diff": _number(found.abs_diff),
                "numeric.rel_diff": (_number(found.rel_diff) if found.rel_diff is not None
                                     else Signal.absent("the reported value is 0")),
                "numeric.within_tolerance": (Signal(value=found.within) if found.within is not None
                                             else Signal.absent("the claim gives no tolerance")),
            }
        return {name: Signal.absent(reason) for name in
                ("numeric.abs_diff", "numeric.rel_diff", "numeric.within_tolerance")}
    if c.kind is ClaimKind.table:
        if not c.values:
            reason = "no table values"
            return {name: Signal.absent(reason) for name in
                    ("numeric.within_tolerance", "numeric.cells_within", "numeric.rel_diff")}
        table = table_agreement(c.values, tolerance=c.tolerance)
        within = table.all_within
        fraction = table.within_fraction
        max_rel = table.max_rel_diff
        return {
            "numeric.within_tolerance": (
                Signal(value=within) if within is not None else
                Signal.absent("some cells lack a value or a tolerance")),
            "numeric.cells_within": (Signal(value=fraction) if fraction is not None else
                                     Signal.absent("no cell could be compared")),
            "numeric.rel_diff": (_number(max_rel) if max_rel is not None else
                                 Signal.absent("no cell has a non-zero reported value")),
        }
    return {}
