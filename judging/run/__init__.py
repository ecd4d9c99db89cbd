"""`judging run`: load, plan, measure, judge, append.

Reads submissions (through `judging.intake`) and rubrics; measures each claim's signals
(`measure`), judges it with every judge (`judging.judges`), and appends one judgment line per
(claim, rubric, judge, sample) plus panel lines to the run directory (`judging.rundir`), with the
claims, figure fingerprints and diff images; then finds copies across submissions (`integrity`)
and writes that side file. A rerun on the same directory resumes: finished lines are skipped.
"""

from __future__ import annotations

from judging.run.integrity import find_pairs
from judging.run.measure import Measurement, MeasureOptions, measure_claim
from judging.run.runner import (
           Estimate,
           Runner,
           RunRequest,
           RunResult,
           run_judging,
           summarize,
)

__all__ = ["Estimate", "find_pairs", "MeasureOptions", "Measurement", "RunRequest", "RunResult", "Runner",
           "measure_claim", "run_judging", "summarize"]
