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
#: data, fitted by `benchmarks/chart_signals.py --pairs ... --pairs ...` (isotonic regression
#: of the faithful/unfaithful labels on the evidence of 13 real repositories' pairs, each block
#: shrunk towards one half by one pair of each label). Linear between knots.
CALIBRATION = (
    (-1.0, 0.02), (-0.2, 0.1), (0.0, 0.5), (0.2, 0.9), (1.0, 0.98),
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
