"""The chart reader's settings chosen from data, one named record per stage.

A value here was chosen by looking at figures; benchmarks/chart_signals.py chooses it again on
all real repositories but one and scores the one left out (leave-one-repository-out), so each
record can be replaced whole (`compare_charts(..., settings=...)`) without touching the code
around it. Structural constants (what a chart is made of, the precision of a drawing) stay
beside the code that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Evidence value (agreement - difference) -> probability that the reproduction plots the same
#: data, fitted by `benchmarks/chart_signals.py --pairs realfig-dev --pairs realfig-dev2` on
#: the labelled pairs of all 13 real repositories (isotonic regression of the labels on the
#: evidence in bins a tenth wide, each block of bins given (faithful + 1) / (pairs + 2)); its
#: leave-one-repository-out reliability is the benchmark's. Linear between knots.
CALIBRATION = (
    (-0.9500, 0.0256),
    (-0.2500, 0.0256),
    (-0.1500, 0.1429),
    (-0.0500, 0.1429),
    (0.0500, 0.5158),
    (0.3500, 0.5158),
    (0.4500, 0.6667),
    (0.5500, 0.9796),
    (0.9500, 0.9796),
)


@dataclass(frozen=True)
class EvidenceSettings:
    """How the comparison weighs what its readings confirm (judging.signals.chart.evidence)."""

    calibration: tuple[tuple[float, float], ...] = CALIBRATION
    """Knots (evidence, probability of the same data), evidence increasing."""
    same_x_range: float = 0.85
    """Overlap (IoU) of two x ranges that a faithful re-plot keeps: below it (on the tick
    labels and the data both) the range was cut or extended."""
    some_x_overlap: float = 0.2
    """Below this overlap (IoU) two x ranges share too little for one to be a crop of the
    other: one of the x axes was misread."""
    unverified_names_agreement: float = 0.0
    """The most agreement a pair can show when the published legend names its series and the
    reproduction's names were not read (a swap cannot be ruled out)."""
    confirm_at: float = 0.1
    """An agreement or a difference weaker than this is not confirmed (0): about the precision
    with which two readings of one chart agree (not chosen from the figures)."""
    report_at: float = 0.3
    """Agreements and differences from this strength on are named in the reason."""

    def __post_init__(self) -> None:
        xs = [x for x, _ in self.calibration]
        if len(xs) < 2 or xs != sorted(xs):
            raise ValueError("calibration knots must be at least two, evidence increasing")


@dataclass(frozen=True)
class CompareSettings:
    """The comparison stage (judging.signals.chart.compare)."""

    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)


DEFAULT_COMPARE = CompareSettings()
