"""Supporting signals: measured facts about a claim that judges (and reviewers) rest on.

Signal names are stable: rubrics refer to them, judgments store them, reports show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .chart import CHART_SIGNALS
from .images import DEFAULT_MAX_PIXELS, SUPPORTED_FORMATS, load_image
from .numeric import Agreement, TableAgreement, agreement, table_agreement
from .pixel import (DEFAULT_SIZE, PairComparison, PixelSignals, compare_figures, copy_verdict,
                    diff_image, edge_f1, edge_map, is_copy, normalize_pair, palette_distance,
                    phash_distance, redrawn_share, ssim, trim_border)


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
               "the reproduced figure is (nearly) pixel-identical to the published one: a "
               "re-encoded or resized copy, not a re-render"),
    SignalSpec("numeric.abs_diff", "number", "lower", "|reproduced - reported|"),
    SignalSpec("numeric.rel_diff", "number", "lower", "|reproduced - reported| / |reported|"),
    SignalSpec("numeric.within_tolerance", "flag", None,
               "every reproduced value is within the claim's tolerance"),
    SignalSpec("numeric.cells_within", "score", "higher",
               "table claims: share of cells within tolerance"),
    *(SignalSpec(name, kind, better, description)  # type: ignore[arg-type]
      for name, (kind, better, description) in CHART_SIGNALS.items()),
]}

__all__ = [
    "CATALOGUE", "SignalSpec", "DEFAULT_MAX_PIXELS", "DEFAULT_SIZE", "SUPPORTED_FORMATS",
    "Agreement", "TableAgreement", "PairComparison", "PixelSignals", "agreement",
    "compare_figures", "copy_verdict", "diff_image", "edge_f1", "edge_map", "is_copy",
    "load_image", "normalize_pair", "palette_distance", "phash_distance", "redrawn_share", "ssim",
    "table_agreement", "trim_border",
]
