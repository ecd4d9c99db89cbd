"""`judging run ... --engine ray --shards N`: the N shards of a run as tasks on a Ray cluster
(the engine layer's one Ray lifecycle, `judging.engines.ray`), then their merge.

Where each shard writes: on a **shared filesystem** (`--shard-output shared`, the default), each
task runs `judging run --shard I/N` into OUT/shards/I-of-N/, a path every node sees (NFS, a
cluster volume); the driver then merges those directories into OUT. Without one
(`--shard-output driver`), each task runs into a temporary directory on its node and returns
that directory (a tar archive, through Ray's object store); the driver unpacks it at
OUT/shards/I-of-N/ (a rerun ships the unpacked shard back, so it resumes) and merges; the paths
claims.jsonl recorded on the node are rebased by the merge (`RunInfo.roots`).

Either way the sources must be readable from every node: hf:// sources always are, a local
folder only on a shared filesystem (at the same absolute path: the driver makes every path of
the request absolute). Every node needs this package installed (the same image or venv), since
Ray runs the task by importing `judging.merge.engine`.

A task that dies with its node is retried by Ray (`max_retries`); a retry resumes the shard's
run directory, so finished lines are not judged twice. A shard that fails (a bad judge spec, a
source error) is reported; the others are merged, and a rerun picks up the rest.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from judging.engines import EngineError, RemoteJob, RemoteResult, run_on_ray
from judging.errors import JudgingError
from judging.merge.union import MergeResult, merge_runs
from judging.run import RunRequest, run_judging
from judging.rundir import RunPaths, all_shards

ShardOutput = Literal["shared", "driver"]
#: Where a returned shard runs in its task's folder (`--shard-output driver`).
RETURNED = "run"

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


def run_shard_shared(scratch: Path, request: RunRequest) -> ShardOutcome:
    """A task: one shard into its directory on the shared filesystem."""
    return _outcome(request, request.out)


def run_shard_returned(scratch: Path, request: RunRequest) -> ShardOutcome:
    """A task: one shard into scratch/run on its node (seeded with the shard's previous output,
    to resume), which the engine sends back."""
    return _outcome(request, scratch / RETURNED)


def run_sharded(request: RunRequest, *, shards: int, address: str | None = None,
                output: ShardOutput = "shared", cpus_per_shard: float = 1,
                on_shard: Callable[[ShardOutcome], None] | None = None) -> EngineResult:
    """Run the `shards` shards of `request` as Ray tasks (on the cluster at `address`, or on a
    Ray started on this machine when None), then merge them into `request.out`."""
    requests = shard_requests(request, shards)
    outcomes: dict[str, ShardOutcome] = {}

    def done(result: RemoteResult) -> None:
        shard: RunRequest = result.job.tag
        if result.failure is not None:  # the task itself failed (after Ray's retries)
            outcome = ShardOutcome(shard=str(shard.shard), out=str(shard.out), errors=[
                f"task failed: {type(result.failure).__name__}: {result.failure}"])
        else:
            outcome = result.value
            if output == "driver":
                _take_back(result, shard, outcome)
        outcomes[outcome.shard] = outcome
        if on_shard is not None:
            on_shard(outcome)

    run_on_ray((_job(r, output=output, cpus=cpus_per_shard) for r in requests), done,
               address=address)
    ordered = [outcomes[str(r.shard)] for r in requests]
    finished = [Path(o.out) for o in ordered if RunPaths(Path(o.out)).run_json.exists()]
    if not finished:
        raise EngineError("no shard wrote a run directory: " + "; ".join(
            f"{o.shard}: {', '.join(o.errors)}" for o in ordered))
    return EngineResult(shards=ordered, merge=merge_runs(finished, request.out))


def _take_back(result: RemoteResult, shard: RunRequest, outcome: ShardOutcome) -> None:
    """The shard's directory sent back, unpacked at its place under OUT/shards/ (through a
    fresh folder beside it, moved there once whole); an archive the driver refuses is that
    shard's error, as a failed task is, and the shard's previous directory stays as it was."""
    outcome.out = str(shard.out)
    shard.out.parent.mkdir(parents=True, exist_ok=True)
    incoming = Path(tempfile.mkdtemp(prefix=f".{shard.out.name}-", dir=shard.out.parent))
    try:
        if result.unpack_into(incoming / RETURNED):
            shutil.rmtree(shard.out, ignore_errors=True)
            (incoming / RETURNED).rename(shard.out)
    except EngineError as exc:
        outcome.errors.append(f"its directory sent back was refused: {exc}")
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def _job(request: RunRequest, *, output: ShardOutput, cpus: float) -> RemoteJob:
    assert request.shard is not None  # (shard_requests sets it)
    if output == "shared":
        return RemoteJob(run_shard_shared, (request,), cpus=cpus, tag=request)
    # the shard's previous output goes with it, so that it resumes
    previous = request.out if RunPaths(request.out).run_json.exists() else None
    return RemoteJob(run_shard_returned, (request,), ship=previous, ship_as=RETURNED,
                     send_back=RETURNED, cpus=cpus, tag=request,
                     prefix=f"judging-shard-{request.shard.dir_name}-")
