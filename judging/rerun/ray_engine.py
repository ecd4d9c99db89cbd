"""`judging rerun --engine ray`: each claim's re-run as a Ray task on the engine layer's one Ray
lifecycle (`judging.engines.ray`, the one sharded runs use): the submission's folder is shipped
to the node (a tar archive, put in the object store once per submission), the claim re-runs in
the same sandbox on its node (`task.execute`), and its logs come back with its record; the driver
writes them into the run directory.

Every node builds environments in its own cache (`--env-cache`, the same path on each node) once
per lock hash. Every node needs this package, bubblewrap and uv (the same image or venv). A task
whose worker or node dies is retried by Ray; a node whose sandbox cannot start records the claim
"not run" (not final: a rerun retries it). `--budget` is accounted by the local engine's rule
(`stage.RunTimeBudget`): the tasks in flight hold their runs' limits and, for an environment not
built yet, its install's time once per environment (each install is cut at what it held: a
hostile build that sleeps cannot spend past it); what a task did not spend comes back when it
ends, and a task that does not fit yet waits for one to end. An environment the cache holds
holds no install, and a node that has to build it anyway (a cache of its own) stops its install
at once: "over budget", not final.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from judging.engines import EngineError, RemoteJob, RemoteResult, run_on_ray
from judging.models import RerunLimits, RerunRecord
from judging.rerun.environment import BUILD_LIMITS, EnvCache
from judging.rerun.sandbox import Sandbox, SandboxUnavailable
from judging.rerun.stage import (
    RerunRequest,
    RunTimeBudget,
    admitted,
    fresh_logs,
    logs_bytes,
    write_result,
)
from judging.rerun.task import RerunTask, execute, not_run_record

#: Where a task's folder holds the submission and the logs it sends back.
SUBMISSION, LOGS = "submission", "logs"


def rerun_on_node(scratch: Path, task: RerunTask, *, cache_dir: str, sandboxed: bool,
                  build_limits: RerunLimits = BUILD_LIMITS) -> RerunRecord:
    """A Ray task: re-run the claim (its submission shipped to scratch/submission) in this
    node's sandbox, logs into scratch/logs (sent back by the engine)."""
    node = socket.gethostname()
    local = replace(task, claim=task.claim.model_copy(update={"root": scratch / SUBMISSION}))
    sandbox = Sandbox(enabled=sandboxed)
    try:
        record = execute(local, cache=EnvCache(Path(cache_dir), build_limits), sandbox=sandbox,
                         logs=scratch / LOGS, engine="ray", node=node)
    except SandboxUnavailable as exc:
        record = not_run_record(local, engine="ray", sandbox=None, final=False,
                                reason=f"the sandbox cannot start on node {node}: {exc}")
    return record.model_copy(update={"node": node})


def run_ray(request: RerunRequest, tasks: list[RerunTask],
            on_result: Callable[[RerunRecord], None]) -> None:
    """The tasks on the cluster, within the budget by the local engine's rule (`RunTimeBudget`:
    what a claim may spend is held while it runs and what it did not spend comes back when it
    ends; a claim that does not fit yet waits for one in flight to end)."""
    cache_dir = str(request.cache.root.resolve())
    budget = RunTimeBudget(request)

    def job(task: RerunTask | None) -> RemoteJob | None:
        if task is None:
            return None  # wait for a task in flight to end, then ask again
        cut = budget.cut(task)
        build = request.cache if cut is None else request.cache.with_build_wall(cut)
        return RemoteJob(rerun_on_node, (task,), {"cache_dir": cache_dir,
                                                  "sandboxed": request.sandbox,
                                                  "build_limits": build.build_limits},
                         ship=task.root, ship_as=SUBMISSION, send_back=LOGS, tag=task,
                         prefix="judging-rerun-", back_bytes=logs_bytes(task, request))

    jobs = (job(task) for task in admitted(request, tasks, on_result, engine="ray",
                                           start=budget.start))

    def done(result: RemoteResult) -> None:
        task: RerunTask = result.job.tag
        logs = fresh_logs(request.run_dir, task.key)
        if result.failure is not None:  # the task failed after Ray's retries: not final
            budget.end(task, None)  # what it spent is unknown: all it held counts
            exc = result.failure
            record = not_run_record(task, engine="ray", sandbox=None, final=False,
                                    reason=f"the Ray task failed: {type(exc).__name__}: "
                                           f"{str(exc).splitlines()[0] if str(exc) else ''}")
        else:
            record = budget.end(task, _returned(request.run_dir, task, result, logs))
            assert record is not None
        on_result(write_result(request.run_dir, record, logs=logs))

    run_on_ray(jobs, done, address=request.address)


def _returned(run_dir: Path, task: RerunTask, result: RemoteResult, logs: Path
              ) -> RerunRecord:
    """The node's record, with its logs unpacked into `logs`; a record of another claim or of
    other inputs, or logs that are not files within their bound, are not taken (not final: a
    rerun runs the claim again)."""
    record = result.value
    if not (isinstance(record, RerunRecord) and record.claim == task.claim.key
            and record.input_hash == task.input_hash):
        return not_run_record(task, engine="ray", sandbox=None, final=False,
                              reason="the node returned a record of another claim or other "
                                     "inputs: not taken")
    try:
        result.unpack_into(logs)
    except EngineError as exc:
        fresh_logs(run_dir, task.key)  # what was unpacked before the refusal goes
        return not_run_record(task, engine="ray", sandbox=None, final=False,
                              reason=f"the node's logs were refused ({exc}): not taken")
    return record
