"""`judging run`: load, plan, measure, judge, append.

Reads submissions (through `judging.intake`: `feed`) and rubrics; plans the work items and their
input hashes (`plan`); measures each claim's signals once while it is in flight (`inflight`,
`measure`, the measuring processes and cache of `pool`), judges it with every judge
(`judging.judges`: `call`), at most so many items at a time (`schedule`), and appends one judgment
line per (claim, rubric, judge, sample) plus panel lines (`lines`) to the run directory
(`judging.rundir`), with the claims, figure fingerprints and diff images; then finds copies
across submissions (`integrity`) and writes that side file, and judges the audit rubrics on the
consensus of the others (`audit`). `runner` wires the parts; `request` is what a run is asked
and gives. A rerun on the same directory resumes: finished lines are skipped.
"""

from __future__ import annotations

from judging.run.integrity import IntegritySearch, find_pairs
from judging.run.measure import Measurement, MeasureOptions, measure_claim
from judging.run.request import Estimate, RunRequest, RunResult, summarize
from judging.run.runner import Runner, run_judging

__all__ = ["Estimate", "IntegritySearch", "find_pairs", "MeasureOptions", "Measurement", "RunRequest",
           "RunResult", "Runner", "measure_claim", "run_judging", "summarize"]
