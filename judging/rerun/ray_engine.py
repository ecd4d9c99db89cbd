"""`judging rerun --engine ray`: each claim's re-run as a Ray task, in the same sandbox on its
node (`task.execute`), its result returned as sharded runs return theirs (judging/merge/engine.py
`--shard-output driver`): the task sends back its record and its logs as a tar archive through
Ray's object store, and the driver writes them into the run directory.

The submission goes to the node the same way: a tar archive of its folder, put in the object
store once per submission. Every node builds environments in its own cache (`--env-cache`, the
same path on each node) once per lock hash. Every node needs this package, bubblewrap and uv
(the same image or venv). A task whose worker or node dies is retried by Ray (MAX_RETRIES); a
node whose sandbox cannot start records the claim "not run" (not final: a rerun retries it).
"""

from __future__ import annotations

import io
import socket
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from judging.errors import JudgingError
from judging.models import RerunLimits, RerunRecord
from judging.rerun.environment import BUILD_LIMITS, EnvCache
from judging.rerun.sandbox import Sandbox, SandboxUnavailable
from judging.rerun.stage import RerunRequest, fresh_logs, write_result
from judging.rerun.task import RerunTask, execute, not_run_record

MAX_RETRIES = 2


class RayEngineError(JudgingError):
    """Ray is not installed or the cluster cannot be reached."""


def _pack(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(root, arcname=".")
    return buffer.getvalue()


def _unpack(data: bytes, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        # The "data" filter refuses absolute names, .. and links that leave the target.
        archive.extractall(target, filter="data")


def rerun_on_node(task: RerunTask, submission: bytes, *, cache_dir: str, sandboxed: bool,
                  build_limits: RerunLimits = BUILD_LIMITS) -> tuple[RerunRecord, bytes]:
    """A Ray task: unpack the submission, re-run the claim in this node's sandbox, and return
    the record with its logs (a tar archive)."""
    node = socket.gethostname()
    with tempfile.TemporaryDirectory(prefix="judging-rerun-") as tmp:
        root = Path(tmp) / "submission"
        _unpack(submission, root)
        claim = task.claim.model_copy(update={"root": root})
        local = replace(task, claim=claim)
        logs = Path(tmp) / "logs"
        sandbox = Sandbox(enabled=sandboxed)
        try:
            record = execute(local, cache=EnvCache(Path(cache_dir), build_limits), sandbox=sandbox,
                             logs=logs, engine="ray", node=node)
        except SandboxUnavailable as exc:
            record = not_run_record(local, engine="ray", sandbox=None, final=False,
                                    reason=f"the sandbox cannot start on node {node}: {exc}")
        record = record.model_copy(update={"node": node})
        return record, _pack(logs) if logs.is_dir() else b""


def run_ray(request: RerunRequest, tasks: list[RerunTask],
            on_result: Callable[[RerunRecord], None]) -> None:
    try:
        import ray
    except ImportError:
        raise RayEngineError("the Ray engine is an optional extra: pip install "
                             "'judging[cluster]' (on the driver and on every node)") from None
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=request.address, log_to_driver=False,
                     **({} if request.address else {"include_dashboard": False}))
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayEngineError(f"cannot reach the Ray cluster at {request.address}: "
                                 f"{exc}") from exc
    try:
        _run_tasks(ray, request, tasks, on_result)
    finally:
        if started_here:
            ray.shutdown()


def _run_tasks(ray, request: RerunRequest, tasks: list[RerunTask],
               on_result: Callable[[RerunRecord], None]) -> None:
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(rerun_on_node)
    cache_dir = str(request.cache.root.resolve())
    archives: dict[Path, object] = {}
    pending: dict[object, RerunTask] = {}
    committed = 0.0
    for task in tasks:
        if task.not_run is not None:  # nothing to ship: recorded here
            on_result(write_result(request.run_dir, not_run_record(
                task, engine="ray", sandbox=None, reason=task.not_run), logs=None))
            continue
        # The budget holds the limits of the tasks in flight (the cluster runs them at once);
        # a task it refuses is recorded and the next one is tried.
        refused = (request.budget.refuses(committed, task.limits.wall_s)
                   if request.budget is not None else None)
        if refused is not None:
            on_result(write_result(request.run_dir, not_run_record(
                task, engine="ray", sandbox=None, final=False, reason=refused), logs=None))
            continue
        committed += task.limits.wall_s
        if task.root not in archives:
            archives[task.root] = ray.put(_pack(task.root))
        ref = remote.remote(task, archives[task.root], cache_dir=cache_dir,
                            sandboxed=request.sandbox, build_limits=request.build_limits)
        pending[ref] = task
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        task = pending.pop(ready[0])
        logs = fresh_logs(request.run_dir, task.key)
        try:
            record, archive = ray.get(ready[0])
        except Exception as exc:  # the task failed after Ray's retries: recorded, not final
            record = not_run_record(task, engine="ray", sandbox=None, final=False,
                                    reason=f"the Ray task failed: {type(exc).__name__}: "
                                           f"{str(exc).splitlines()[0] if str(exc) else ''}")
            archive = b""
        if archive:
            _unpack(archive, logs)
        on_result(write_result(request.run_dir, record, logs=logs))
