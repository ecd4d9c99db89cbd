"""Every signal's name, kind and meaning: the one list of signal names.

Signal names are stable: rubrics refer to them (and are validated against this list), judgments
store them, the LLM prompt and the report explain them with these descriptions, and the signals
stage produces exactly these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SignalSpec:
    name: str
    kind: Literal["score", "distance", "flag", "number"]
    better: Literal["higher", "lower"] | None
    description: str


CATALOGUE: dict[str, SignalSpec] = {spec.name: spec for spec in [
    SignalSpec("pixel.ssim", "score", "higher",
               "grayscale SSIM of the trimmed, resized, lightly blurred pair (1 = identical)"),
    SignalSpec("pixel.edge_f1", "score", "higher",
               "F1 of the two figures' strokes matched within 3 px (1 = same strokes)"),
    SignalSpec("pixel.palette_distance", "distance", "lower",
               "hue-histogram distance of the coloured pixels (0 = same series colours)"),
    SignalSpec("pixel.phash_distance", "distance", "lower",
               "perceptual-hash distance as a share of bits (0 = same coarse shape)"),
    SignalSpec("pixel.mean_abs_diff", "distance", "lower",
               "mean absolute gray-level difference in [0, 1]"),
    SignalSpec("pixel.copy", "flag", None,
               "the reproduced figure is the published one copied: pixel-identical, or "
               "re-encoded, re-framed (border, small crop), resized or turned gray, not a "
               "re-render (false for an identical re-render, see pixel.identical_rerender)"),
    SignalSpec("pixel.identical_rerender", "flag", None,
               "the reproduced figure is pixel-identical to the published one and a cited log "
               "shows its plotting script re-run: possibly a bit-exact re-run, for a human to "
               "confirm"),
    SignalSpec("pixel.near_identical", "flag", None,
               "the reproduced figure is pixel-identical to the published one but for a few "
               "small clusters of pixels (text placed a pixel otherwise): the same plotting "
               "code run again elsewhere, or a copy with a label edited; nothing in the pixels "
               "tells them apart, so it is left to a human (not flagged as a copy)"),
    SignalSpec("consensus.agrees", "flag", None,
               "the consensus verdict of the registry claim (judging consensus: the majority "
               "direction among its independent, non-toy reproductions) is this claim's "
               "verdict; false when it is the opposite one; absent when there is no consensus"),
    SignalSpec("rerun.attempted", "flag", None,
               "judging rerun tried to re-run the claim's script (its environment was built, or "
               "failed to build, and the script started); false when it left the claim alone "
               "(no script, no environment, needs a container, over budget); absent when there "
               "is no re-run"),
    SignalSpec("rerun.agrees", "flag", None,
               "the re-run of the claim's script gave the participant's number(s) within the "
               "claim's tolerance (the paper's when the participant gave none); false when it "
               "gave another; absent when it did not run to a number"),
    SignalSpec("numeric.abs_diff", "number", "lower", "|reproduced - reported|"),
    SignalSpec("numeric.rel_diff", "number", "lower", "|reproduced - reported| / |reported|"),
    SignalSpec("numeric.within_tolerance", "flag", None,
               "every reproduced value is within the claim's tolerance"),
    SignalSpec("numeric.cells_within", "score", "higher",
               "table claims: share of cells within tolerance"),
    SignalSpec("chart.match_score", "score", "higher",
               "data-aware agreement of the two charts in [0, 1]: series matched, "
               "shapes, values in data units, axis scales and ranges"),
    SignalSpec("chart.series_published", "number", None,
               "series read from the published chart, and reproduced series that lie on its "
               "data ink (drawn on both: a faint reference line its reader did not take)"),
    SignalSpec("chart.series_reproduced", "number", None,
               "series read from the reproduced chart"),
    SignalSpec("chart.series_matched", "score", "higher",
               "share of the published series matched in the reproduction"),
    SignalSpec("chart.shape_agreement", "score", "higher",
               "worst shape agreement of the matched series (1 = same shape)"),
    SignalSpec("chart.value_agreement", "score", "higher",
               "share of points within tolerance, in data units, for the worst " "matched series"),
    SignalSpec("chart.max_value_error", "number", "lower",
               "largest value difference of matched series, as a share of the " "published y range"),
    SignalSpec("chart.axis_scale_match", "flag", None,
               "both axes have the same scale type (linear/log)"),
    SignalSpec("chart.range_overlap", "score", "higher",
               "overlap of the two charts' x and y data ranges (intersection over " "union, the smaller of the two)"),
    SignalSpec("chart.trend_agreement", "score", "higher",
               "share of matched series whose overall direction agrees"),
    SignalSpec("chart.named_series", "number", None,
               "matched published series that the published legend names"),
    SignalSpec("chart.legend_agreement", "score", "higher",
               "share of the named published series whose matched reproduced series has the "
               "same legend name (a swapped legend lowers it; absent when unverifiable)"),
    SignalSpec("chart.data_coverage", "score", "higher",
               "series-free agreement: the smaller of the share of published data points with a "
               "reproduced point nearby and the converse (3% of the axis spans)"),
    SignalSpec("chart.ink_coverage", "score", "higher",
               "series-free agreement of the data ink itself (every strongly drawn pixel of the "
               "plot areas, gridlines and legends left out, mapped through the axes): the "
               "smaller of the two shares of ink with ink of the other chart nearby"),
    SignalSpec("chart.same_data", "score", "higher",
               "calibrated probability that the reproduction plots the same data, from what two "
               "independent readings (the series, the ink, the tick labels, the legend names) "
               "confirm after the alternative readings; near one half when nothing is "
               "confirmed; its reason names the evidence and the doubts"),
    SignalSpec("chart.reading_confidence", "score", "higher",
               "how far the chart reading can be trusted to fail a figure (axes read, panels "
               "paired, series separable, series split consistent with the data coverage); "
               "its reason lists the doubts"),
    SignalSpec("chart.published_from_data", "flag", None,
               "the published chart's series were taken from its data file (the registry's "
               "published_data), in data units, not read from the image"),
    SignalSpec("trace.value_in_tool_output", "flag", None,
               "every reproduced value appears in the output of a tool call of the claim's agent "
               "trace (the run that produced it, as the value_in_logs rule checks the logs); "
               "absent when the claim has no trace or no reproduced value"),
    SignalSpec("chart.reproduced_from_data", "flag", None,
               "the reproduced chart's series were taken from its data file (the claim's "
               "reproduced_data or a logbook figure's raw data), not read from the image"),
]}


def signal_names(group: str) -> tuple[str, ...]:
    """The names of one group of signals (`pixel`, `numeric`, `chart`), in catalogue order."""
    return tuple(name for name in CATALOGUE if name.startswith(group + "."))
