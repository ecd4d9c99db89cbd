"""`judging rerun`'s engines behind one call: the local engine (in `stage`), Ray (`ray_engine`) and
Hugging Face Jobs (`hf_jobs`). A module of its own because the engines import the stage's
plan and writers: the choice between them sits above all three, so no import goes in a circle.
"""

from __future__ import annotations

from collections.abc import Callable

from judging.models import RerunRecord
from judging.rerun.stage import RerunPlan, RerunRequest, RerunSummary, run_local


def run_rerun(request: RerunRequest, plan: RerunPlan,
              on_result: Callable[[RerunRecord], None] | None = None) -> RerunSummary:
    """Run the plan's tasks on the request's engine; each result is appended as it comes."""
    summary = RerunSummary()

    def collect(record: RerunRecord) -> None:
        summary.records.append(record)
        if on_result is not None:
            on_result(record)

    if request.engine == "local":
        run_local(request, plan.tasks, collect)
    elif request.engine == "ray":
        # Imported when chosen: Ray and the Hub client are heavy and optional here.
        from judging.rerun.ray_engine import run_ray
        run_ray(request, plan.tasks, collect)
    else:
        from judging.rerun.hf_jobs import run_hf_jobs
        run_hf_jobs(request, plan.tasks, collect)
    return summary
