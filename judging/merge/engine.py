"""`judging run ... --engine ray --shards N`: the N shards of a run as tasks on a Ray cluster,
then their merge (no scheduler of our own: Ray places, runs and retries the tasks).

Where each shard writes: on a **shared filesystem** (`--shard-output shared`, the default), each
task runs `judging run --shard I/N` into OUT/shards/I-of-N/, a path every node sees (NFS, a
cluster volume); the driver then merges those directories into OUT. Without one
(`--shard-output driver`), each task runs into a temporary directory on its node and returns
that directory as a tar archive (bytes, through Ray's object store); the driver unpacks it at
OUT/shards/I-of-N/ (a rerun sends the unpacked shard back, so it resumes) and merges; the
paths claims.jsonl recorded on the node are rebased by the merge (`RunInfo.roots`).

Either way the sources must be readable from every node: hf:// sources always are, a local
folder only on a shared filesystem (at the same absolute path: the driver makes every path of
the request absolute). Every node needs this package installed (the same image or venv), since
Ray runs the task by importing `judging.merge.engine`.

A task that dies with its node is retried by Ray (`max_retries`); a retry resumes the shard's
run directory, so finished lines are not judged twice. A shard that fails (a bad judge spec, a
source error) is reported; the others are merged, and a rerun picks up the rest.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from judging.errors import JudgingError
from judging.merge.union import MergeResult, merge_runs
from judging.run import RunRequest, run_judging
from judging.rundir import RunPaths, all_shards

ShardOutput = Literal["shared", "driver"]

#: Ray retries a task whose worker or node died this many times (a retry resumes the shard).
MAX_RETRIES = 2


class EngineError(JudgingError):
    """The engine is not installed or the cluster cannot be reached."""


@dataclass
class ShardOutcome:
    shard: str
    out: str
    run_id: str | None = None
    written: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    """Source errors of the shard run, or the error that stopped it."""
    node: str | None = None
    """The host the task ran on."""

    @property
    def failed(self) -> bool:
        return bool(self.errors)


@dataclass
class EngineResult:
    shards: list[ShardOutcome]
    merge: MergeResult

    @property
    def failed(self) -> bool:
        return self.merge.failed or any(s.failed for s in self.shards)


def _absolute(request: RunRequest) -> RunRequest:
    """Every local path of the request made absolute: tasks run in other working directories
    (and on other machines, where only a shared filesystem's absolute paths mean the same)."""

    def local(spec: str) -> str:
        return str(Path(spec).resolve()) if "://" not in spec and Path(spec).exists() else spec

    llm = replace(request.llm,
                  cache_dir=request.llm.cache_dir.resolve() if request.llm.cache_dir else None,
                  prices_file=request.llm.prices_file.resolve()
                  if request.llm.prices_file else None)
    return replace(request, sources=[local(s) for s in request.sources],
                   out=request.out.resolve(),
                   registry=request.registry.resolve() if request.registry else None,
                   rubrics_dir=request.rubrics_dir.resolve() if request.rubrics_dir else None,
                   llm=llm)


def shard_requests(request: RunRequest, count: int) -> list[RunRequest]:
    """The request of each shard: its own run directory under OUT/shards/, an equal share of
    the --max-cost budget."""
    request = _absolute(request)
    llm = request.llm
    if llm.max_cost is not None:
        llm = replace(llm, max_cost=llm.max_cost / count)
    return [replace(request, shard=shard, llm=llm,
                    out=request.out / "shards" / shard.dir_name)
            for shard in all_shards(count)]


def _outcome(request: RunRequest, out: Path) -> ShardOutcome:
    import socket

    outcome = ShardOutcome(shard=str(request.shard), out=str(out), node=socket.gethostname())
    try:
        result = run_judging(replace(request, out=out))
    except JudgingError as exc:  # a judge that cannot work, a bad run directory: reported
        outcome.errors.append(f"{type(exc).__name__}: {exc}")
        return outcome
    outcome.run_id = result.run_id
    outcome.written, outcome.skipped = result.written, result.skipped
    outcome.errors += result.source_errors
    return outcome


def run_shard_shared(request: RunRequest) -> ShardOutcome:
    """A task: one shard into its directory on the shared filesystem."""
    return _outcome(request, request.out)


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


def run_shard_returned(request: RunRequest, previous: bytes | None) -> tuple[ShardOutcome, bytes]:
    """A task: one shard into a temporary directory of its node (seeded with the shard's
    previous output, to resume), returned as a tar archive."""
    with tempfile.TemporaryDirectory(prefix=f"judging-shard-{request.shard.dir_name}-") as tmp:
        out = Path(tmp) / "run"
        if previous is not None:
            _unpack(previous, out)
        outcome = _outcome(request, out)
        return outcome, _pack(out) if RunPaths(out).run_json.exists() else b""


def run_sharded(request: RunRequest, *, shards: int, address: str | None = None,
                output: ShardOutput = "shared", cpus_per_shard: float = 1,
                on_shard: Callable[[ShardOutcome], None] | None = None) -> EngineResult:
    """Run the `shards` shards of `request` as Ray tasks (on the cluster at `address`, or on a
    Ray started on this machine when None), then merge them into `request.out`."""
    try:
        import ray
    except ImportError:
        raise EngineError("the Ray engine is an optional extra: pip install 'judging[cluster]' "
                          "(on the driver and on every node)") from None
    requests = shard_requests(request, shards)
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address, log_to_driver=False,
                     **({} if address else {"include_dashboard": False}))
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise EngineError(f"cannot reach the Ray cluster at {address}: {exc}") from exc
    try:
        outcomes = _run_tasks(ray, requests, output=output, cpus=cpus_per_shard,
                              on_shard=on_shard)
    finally:
        if started_here:
            ray.shutdown()
    done = [Path(o.out) for o in outcomes if RunPaths(Path(o.out)).run_json.exists()]
    if not done:
        raise EngineError("no shard wrote a run directory: " + "; ".join(
            f"{o.shard}: {', '.join(o.errors)}" for o in outcomes))
    return EngineResult(shards=outcomes, merge=merge_runs(done, request.out))


def _run_tasks(ray, requests: list[RunRequest], *, output: ShardOutput, cpus: float,
               on_shard: Callable[[ShardOutcome], None] | None) -> list[ShardOutcome]:
    task = ray.remote(num_cpus=cpus, max_retries=MAX_RETRIES)(
        run_shard_shared if output == "shared" else run_shard_returned)
    pending = {}
    for request in requests:
        if output == "shared":
            ref = task.remote(request)
        else:
            target = request.out
            previous = _pack(target) if RunPaths(target).run_json.exists() else None
            ref = task.remote(request, previous)
        pending[ref] = request
    outcomes: dict[str, ShardOutcome] = {}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        request = pending.pop(ref)
        try:
            value = ray.get(ref)
        except Exception as exc:  # the task itself failed (after Ray's retries): reported
            outcome = ShardOutcome(shard=str(request.shard), out=str(request.out),
                                   errors=[f"task failed: {type(exc).__name__}: {exc}"])
        else:
            if output == "shared":
                outcome = value
            else:
                outcome, archive = value
                if archive:
                    _unpack(archive, request.out)
                outcome.out = str(request.out)
        outcomes[outcome.shard] = outcome
        if on_shard is not None:
            on_shard(outcome)
    return [outcomes[str(r.shard)] for r in requests]

