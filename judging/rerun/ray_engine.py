"""`judging rerun --engine ray`: each claim's re-run as a Ray task on the engine layer's one Ray
lifecycle (`judging.engines.ray`, the one sharded runs use): the submission's folder is shipped
to the node (a tar archive, put in the object store once per submission), the claim re-runs in
the same sandbox on its node (`task.execute`), and its logs come back with its record; the driver
writes them into the run directory.

Every node builds environments in its own cache (`--env-cache`, the same path on each node) once
per lock hash. Every node needs this package, bubblewrap and uv (the same image or venv). A task
whose worker or node dies is retried by Ray; a node whose sandbox cannot start records the claim
"not run" (not final: a rerun retries it). The budget holds the limits of the tasks in flight
(the cluster runs them at once) and, for an environment the cache does not hold yet, the
install's time: each install is cut at what the budget left for it when its task started (a
hostile build that sleeps cannot spend past it); an environment the cache holds reserves none,
and a node that has to build it anyway (a cache of its own) stops its install at once: "over
budget", not final.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from judging.engines import BudgetDriver, EngineError, RemoteJob, RemoteResult, run_on_ray
from judging.models import RerunLimits, RerunRecord
from judging.rerun.environment import (
    BUILD_LIMITS,
    EnvCache,
    EnvironmentError_,
    environment_key,
    find_interpreter,
)
from judging.rerun.sandbox import Sandbox, SandboxUnavailable
from judging.rerun.stage import (
    RerunRequest,
    admitted,
    cut_by_budget,
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
    cache_dir = str(request.cache.root.resolve())
    driver = BudgetDriver(request.budget)
    cuts: dict[str, float | None] = {}  # by claim: the install's wall time left by the budget

    def need(task: RerunTask) -> float:
        reserve = _install_reserve(request, driver, task)
        cuts[task.key] = (None if reserve is None or reserve >= request.build_limits.wall_s
                          else max(1.0, reserve))
        return task.limits.wall_s + (reserve or 0.0)

    def job(task: RerunTask) -> RemoteJob:
        cut = cuts.get(task.key)
        build = request.cache if cut is None else request.cache.with_build_wall(cut)
        return RemoteJob(rerun_on_node, (task,), {"cache_dir": cache_dir,
                                                  "sandboxed": request.sandbox,
                                                  "build_limits": build.build_limits},
                         ship=task.root, ship_as=SUBMISSION, send_back=LOGS, tag=task,
                         prefix="judging-rerun-", back_bytes=logs_bytes(task, request))

    jobs = (job(task) for task in admitted(request, tasks, on_result, engine="ray",
                                           driver=driver, need=need))

    def done(result: RemoteResult) -> None:
        task: RerunTask = result.job.tag
        logs = fresh_logs(request.run_dir, task.key)
        if result.failure is not None:  # the task failed after Ray's retries: not final
            exc = result.failure
            record = not_run_record(task, engine="ray", sandbox=None, final=False,
                                    reason=f"the Ray task failed: {type(exc).__name__}: "
                                           f"{str(exc).splitlines()[0] if str(exc) else ''}")
        else:
            record = _returned(request.run_dir, task, result, logs)
            cut = cuts.get(task.key)
            record = record if cut is None else cut_by_budget(record, cut)
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


def _install_reserve(request: RerunRequest, driver: BudgetDriver, task: RerunTask
                     ) -> float | None:
    """Seconds of install a task reserves beside its run (None: no budget, the install's own
    limit binds): what the budget leaves, up to the install's limit, for an environment the
    cache does not hold; none for one it holds (or a claim with nothing to install)."""
    left = driver.left_beside(task.limits.wall_s)
    if left is None:
        return None
    env = task.environment
    if env is None or env.kind == "Dockerfile":
        return 0.0
    try:
        built = request.cache.is_built(environment_key(task.root, env,
                                                       find_interpreter(env.python)))
    except (EnvironmentError_, OSError):  # the node meets it again and records it
        built = False
    return 0.0 if built else max(0.0, min(request.build_limits.wall_s, left))
