"""Signals: pure measures, facts about a claim that judges (and reviewers) rest on.

Reads images and numbers, never the run directory; gives signals by the names of
`judging.signal_catalogue` (`measure_pair` for a loaded figure pair, `measure_numbers` for
reported against reproduced values, in `measure`): pixel similarity and copy checks of a figure pair (`pixel`), numeric
agreement of reported and reproduced values (`numeric`), and the data-aware chart reader and
comparison (`chart`), which takes a side's series from its data file (`judging.figures.data`)
instead of its image when there is one (`reading_from_data`). Images are loaded with
decompression-bomb and format checks (`images`).
"""

from __future__ import annotations

from judging.signals.chart import (
                                   CHART_SIGNALS,
                                   CHART_SOURCE_SIGNALS,
                                   ChartComparison,
                                   ChartReading,
                                   compare_charts,
                                   comparison_signals,
                                   read_chart,
                                   reading_from_data,
                                   render_overlay,
                                   without_reference_lines,
)
from judging.signals.copies import CopyCheck, check_copy, pixel_identical
from judging.signals.images import DEFAULT_MAX_PIXELS, SUPPORTED_FORMATS, load_image
from judging.signals.measure import (
                                   FIGURE_SIGNALS,
                                   ChartPair,
                                   PairSignals,
                                   chart_readings,
                                   compare_pair,
                                   measure_chart,
                                   measure_numbers,
                                   measure_pair,
                                   read_chart_once,
)
from judging.signals.numeric import (
                                   Agreement,
                                   TableAgreement,
                                   agreement,
                                   table_agreement,
)
from judging.signals.pixel import (
                                   DEFAULT_SIZE,
                                   PairComparison,
                                   PixelSignals,
                                   blurred_gray,
                                   compare_figures,
                                   diff_image,
                                   edge_f1,
                                   edge_map,
                                   mean_abs_difference,
                                   normalize_pair,
                                   palette_distance,
                                   phash_distance,
                                   reduce_towards,
                                   ssim,
                                   to_gray,
                                   trim_border,
)
from judging.signals.trace import SIGNAL as TRACE_SIGNAL
from judging.signals.trace import reproduced_values, value_in_tool_output

__all__ = [
    "CHART_SIGNALS", "CHART_SOURCE_SIGNALS", "DEFAULT_MAX_PIXELS", "DEFAULT_SIZE",
    "FIGURE_SIGNALS", "SUPPORTED_FORMATS", "TRACE_SIGNAL", "Agreement", "ChartComparison",
    "ChartPair", "ChartReading", "CopyCheck", "PairComparison", "PairSignals", "PixelSignals",
    "TableAgreement", "agreement", "blurred_gray", "chart_readings", "check_copy",
    "compare_charts", "compare_figures", "compare_pair", "comparison_signals", "diff_image",
    "edge_f1", "edge_map", "load_image", "mean_abs_difference", "measure_chart",
    "measure_numbers", "measure_pair", "normalize_pair", "palette_distance", "phash_distance",
    "pixel_identical", "read_chart", "read_chart_once", "reading_from_data", "reduce_towards",
    "render_overlay", "reproduced_values", "ssim", "table_agreement", "to_gray", "trim_border",
    "value_in_tool_output", "without_reference_lines",
]
