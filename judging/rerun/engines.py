"""`judging rerun`'s engines behind one call: each engine of the engine layer's table
(`judging.engines.ENGINES`) that serves `rerun` has its runner here: the local engine (in
`stage`), Ray (`ray_engine`, on the engine layer's Ray lifecycle) and Hugging Face Jobs
(`hf_jobs`). A module of its own because the engines import the stage's plan and writers: the
choice between them sits above all three, so no import goes in a circle.
"""

from __future__ import annotations

from collections.abc import Callable

from judging.models import RerunRecord
from judging.rerun.stage import RerunPlan, RerunRequest, RerunSummary, run_local
from judging.rerun.task import RerunTask

Runner = Callable[[RerunRequest, list[RerunTask], Callable[[RerunRecord], None]], None]


def _ray(request: RerunRequest, tasks: list[RerunTask],
         on_result: Callable[[RerunRecord], None]) -> None:
    # Imported when chosen: Ray and the Hub client are heavy and optional here.
    from judging.rerun.ray_engine import run_ray
    run_ray(request, tasks, on_result)


def _hf_jobs(request: RerunRequest, tasks: list[RerunTask],
             on_result: Callable[[RerunRecord], None]) -> None:
    from judging.rerun.hf_jobs import run_hf_jobs
    run_hf_jobs(request, tasks, on_result)


#: The runner of each engine `judging rerun` can use, by its name in `judging.engines.ENGINES`.
RUNNERS: dict[str, Runner] = {"local": run_local, "ray": _ray, "hf-jobs": _hf_jobs}


def run_rerun(request: RerunRequest, plan: RerunPlan,
              on_result: Callable[[RerunRecord], None] | None = None) -> RerunSummary:
    """Run the plan's tasks on the request's engine; each result is appended as it comes."""
    summary = RerunSummary()

    def collect(record: RerunRecord) -> None:
        summary.records.append(record)
        if on_result is not None:
            on_result(record)

    RUNNERS[request.engine](request, plan.tasks, collect)
    return summary
