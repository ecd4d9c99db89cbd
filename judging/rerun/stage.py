"""`judging rerun RUN_DIR`: plan (select, resume, estimate), then run the claims' scripts on an
engine and append each result to reruns.jsonl as it comes, its logs under reruns/<claim>/.

A claim whose newest line has the same input hash and is final is not run again (reruns
resume); a `--budget` is never exceeded: a claim starts only when what was spent plus its own
limit fits; one that does not (or whose limit alone exceeds the budget) is recorded "not run:
over budget" (not final: a later rerun with more budget runs it) and the next claim is tried.
"""

from __future__ import annotations

import shutil
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from judging.engines import Budget, BudgetDriver
from judging.errors import JudgingError
from judging.hashing import content_hash
from judging.models import RerunLimits, RerunRecord, RerunStatus
from judging.rerun.cgroup import MIB
from judging.rerun.environment import (
    BUILD_LIMITS,
    INSTALL_STOPPED,
    EnvCache,
    EnvironmentError_,
    EnvRequest,
    describe_build_limits,
    environment_key,
    find_interpreter,
)
from judging.rerun.sandbox import DEFAULT_LIMITS, Sandbox
from judging.rerun.select import select_claims
from judging.rerun.task import RerunTask, execute, not_run_record, plan_task, unplanned_task
from judging.rundir import RunPaths, RunStore, append_rerun, read_reruns

Engine = Literal["local", "ray", "hf-jobs"]
#: The words a claim the budget kept from running (or from finishing its install) begins with.
OVER_BUDGET = "over budget"


def default_cache_dir() -> Path:
    """Where built environments are kept between runs: JUDGING_RERUN_CACHE, else
    ~/.cache/judging/rerun."""
    import os
    given = os.environ.get("JUDGING_RERUN_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judging" / "rerun"


@dataclass(frozen=True)
class RerunRequest:
    run_dir: Path
    select: str = "all"
    engine: Engine = "local"
    budget: Budget | None = None
    limits: RerunLimits = field(default_factory=lambda: DEFAULT_LIMITS)
    build_limits: RerunLimits = field(default_factory=lambda: BUILD_LIMITS)
    """The install step's limits (`--build-memory`, `--build-disk`, `--build-timeout`)."""
    sandbox: bool = True
    """False only with an explicit --no-sandbox (recorded on every result)."""
    cache_dir: Path | None = None
    seed: int = 0
    force: bool = False
    """Re-run the selected claims even when a final result with the same inputs exists."""
    address: str | None = None
    """Ray: the cluster's address (None: a Ray started on this machine)."""
    hf_namespace: str | None = None
    hf_token: str | None = None
    hf_flavors: tuple[str, ...] = ("cpu-basic",)
    """HF Jobs: the hardware a claim's `evidence.rerun.flavor` may ask for (the organizer's
    `--hf-flavors`; the namespace pays for it)."""

    @property
    def cache(self) -> EnvCache:
        return EnvCache(self.cache_dir or default_cache_dir(), build_limits=self.build_limits)


@dataclass
class Estimate:
    selected: int = 0
    """Number and table claims the selection chose."""
    resumed: int = 0
    """Already re-run with the same inputs (skipped)."""
    to_run: int = 0
    not_runnable: int = 0
    """Of `to_run`, claims that will be recorded "not run" without running anything."""
    environments: int = 0
    """Distinct environments the claims to run need."""
    to_build: int = 0
    """Of those, not in the cache yet."""
    max_cpu_hours: float = 0.0
    """Upper bound: every claim to run at its wall-time limit, on one core."""
    max_usd: float | None = None
    """HF Jobs: every job at its timeout at its flavor's price."""
    problems: list[str] = field(default_factory=list)
    build_limits: RerunLimits | None = None
    """The limits the environments to build are installed under (None: none built here)."""

    def describe(self) -> str:
        cost = (f", at most ${self.max_usd:.2f} on HF Jobs" if self.max_usd is not None else "")
        builds = (f" ({describe_build_limits(self.build_limits)})"
                  if self.build_limits is not None else "")
        return (f"{self.selected} claim(s) selected, {self.resumed} already re-run with the "
                f"same inputs, {self.to_run} to run ({self.not_runnable} of them cannot run); "
                f"{self.environments} environment(s), {self.to_build} to build{builds}; at most "
                f"{self.max_cpu_hours:.2f} CPU-hours{cost}")


@dataclass
class RerunPlan:
    tasks: list[RerunTask]
    estimate: Estimate


@dataclass
class RerunSummary:
    records: list[RerunRecord] = field(default_factory=list)

    def count(self, status: RerunStatus) -> int:
        return sum(1 for r in self.records if r.status is status)

    def describe(self) -> str:
        counts = ", ".join(f"{self.count(s)} {s.value}" for s in RerunStatus if self.count(s))
        return f"{len(self.records)} claim(s) re-run: {counts or 'none'}"


def plan_rerun(request: RerunRequest, *, prices: dict[str, float] | None = None) -> RerunPlan:
    """Select the claims, drop those already re-run with the same inputs, and estimate the
    rest (`prices`: HF Jobs dollars per minute by flavor)."""
    paths = RunPaths(request.run_dir)
    store = RunStore.open(request.run_dir, create=False)
    try:
        claims = list(store.iter_claims())
    finally:
        store.close()
    if not paths.claims.is_file():
        raise JudgingError(f"{request.run_dir}: no claims.jsonl; run `judging run ... --out "
                           f"{request.run_dir}` first")
    BudgetDriver(request.budget, usd=request.engine == "hf-jobs")  # refuses a budget's unit
    chosen = select_claims(request.run_dir, claims, request.select, seed=request.seed)
    done = read_reruns(request.run_dir)
    memo: dict[Path, str | None] = {}
    estimate = Estimate(selected=len(chosen),
                        build_limits=None if request.engine == "hf-jobs" else request.build_limits)
    tasks = []
    keys: set[str] = set()
    env_keys: dict[tuple[Path, EnvRequest], str] = {}
    for claim in chosen:
        try:
            task = plan_task(claim, limits=request.limits, sandboxed=request.sandbox, memo=memo)
        except Exception as exc:  # this claim is recorded "not run" with the cause's type
            task = unplanned_task(claim, limits=request.limits, error=exc)
        if (task.environment is not None and request.engine != "hf-jobs"
                and request.build_limits != BUILD_LIMITS):
            # an install stopped at the organizer's build limits runs again under others (the
            # defaults leave the hash as it was)
            task.input_hash = content_hash({"task": task.input_hash, "build_limits":
                                            request.build_limits.model_dump(mode="json")})
        previous = done.get(task.key)
        if (not request.force and previous is not None and previous.final
                and previous.input_hash == task.input_hash):
            estimate.resumed += 1
            continue
        tasks.append(task)
        if task.not_run is not None or flavor_refused(request, task) is not None:
            estimate.not_runnable += 1
            continue
        estimate.max_cpu_hours += task.limits.wall_s / 3600
        if prices is not None:
            estimate.max_usd = (estimate.max_usd or 0.0) + prices.get(task.flavor, 0.0) * \
                task.limits.wall_s / 60
        request_env = task.environment
        if request_env is None or request_env.kind == "Dockerfile" or request.engine == "hf-jobs":
            continue
        try:
            if (task.root, request_env) not in env_keys:  # claims of one environment: one hash
                env_keys[task.root, request_env] = environment_key(
                    task.root, request_env, find_interpreter(request_env.python))
            key = env_keys[task.root, request_env]
        except (EnvironmentError_, OSError) as exc:  # recorded per claim; the estimate notes it
            estimate.problems.append(f"{task.key}: {exc}")
            continue
        task.env_key = key  # the budget's rule reads it (`RunTimeBudget`): hashed once
        if key not in keys:
            keys.add(key)
            estimate.to_build += not request.cache.is_built(key)
    estimate.to_run = len(tasks)
    estimate.environments = len(keys)
    return RerunPlan(tasks=tasks, estimate=estimate)


def flavor_refused(request: RerunRequest, task: RerunTask) -> str | None:
    """Why HF Jobs does not run `task` on the hardware its claim asks for (None: the organizer's
    --hf-flavors allows it, or another engine runs it): the plan's estimate and the engine
    decide with this one rule."""
    if request.engine != "hf-jobs" or task.flavor in request.hf_flavors:
        return None
    return (f"flavor {task.flavor!r} is not one --hf-flavors allows "
            f"({','.join(request.hf_flavors)})")


def write_result(run_dir: Path, record: RerunRecord, *, logs: Path | None) -> RerunRecord:
    """Append a record (with its logs folder, relative to the run directory, when it has one)."""
    if logs is not None and logs.is_dir() and any(logs.iterdir()):
        record = record.model_copy(update={"logs": logs.relative_to(run_dir).as_posix()})
    append_rerun(run_dir, record)
    return record


#: Bytes a claim's logs may hold beyond its output limits (error.txt, the route's refusals).
LOGS_SLACK = MIB


def logs_bytes(task: RerunTask, request: RerunRequest) -> int:
    """The most a claim's logs can hold, whatever engine ran it: its stdout and stderr at the
    run's output limit, the install's at the build's (what a node or a job sends back beyond it
    is not taken)."""
    return int((2 * task.limits.output_mb + request.build_limits.output_mb) * MIB) + LOGS_SLACK


def fresh_logs(run_dir: Path, key: str) -> Path:
    """A claim's empty logs folder (a previous re-run's logs are replaced)."""
    logs = RunPaths(run_dir).rerun_logs(key)
    shutil.rmtree(logs, ignore_errors=True)
    return logs


class Wait:
    """What `admitted` yields when the next task must wait for one in flight to end (what it did
    not spend comes back to the budget; the environment it was building is then built)."""


WAIT = Wait()


class RunTimeBudget:
    """`--budget` of run time, the one rule of the local and Ray engines. A claim starts when its
    run's wall-time limit fits beside what ended claims spent and what claims in flight hold; it
    holds that limit and, for an environment not built yet, its install's time: what the budget
    leaves, up to the install's limit (`cut`: the install is stopped there, so a hostile build
    that sleeps cannot spend past it). When it ends, what it spent (its run and its install)
    replaces what it held: the rest is back in the budget. Claims sharing an environment hold
    its install once: the next waits for the claim building it to end, then reuses it (or, if
    that install failed, installs again and holds for it, as the local engine does).

    With nothing in flight (the local engine, one claim at a time) a claim never waits: it
    starts with what is left for its install, or is "over budget" when its run alone does not
    fit. With claims in flight (Ray) a claim that does not fit yet, or whose install would get
    less than its limit, waits for one to end; it is "over budget" only when nothing in flight
    could give anything back. An environment the cache holds holds no install (a node that has
    to build it anyway, a cache of its own, stops its install at once: "over budget", not
    final). Without a budget nothing is held and nothing waits."""

    def __init__(self, request: RerunRequest):
        self.driver = BudgetDriver(request.budget)
        self.cache = request.cache
        self.build_wall = request.build_limits.wall_s
        self.holds: dict[str, float] = {}
        """What each claim in flight holds, by claim key."""
        self.cuts: dict[str, float] = {}
        """The install's wall time of a claim the budget cuts, by claim key."""
        self.building: dict[str, str] = {}
        """The claim in flight building each environment, by the plan's environment key."""

    def _to_build(self, task: RerunTask) -> str | None:
        """The key of the environment the task's install builds (None: none to build, or one
        the plan could not hash: the node meets that again and records it)."""
        env = task.environment
        if env is None or env.kind == "Dockerfile" or task.env_key is None:
            return None
        return None if self.cache.is_built(task.env_key) else task.env_key

    def start(self, task: RerunTask) -> str | None | Wait:
        """None: the task starts (what it may spend is held); WAIT: it waits for a claim in
        flight to end; else why it is over budget."""
        if self.driver.cap is None:
            return None
        run = task.limits.wall_s
        key = self._to_build(task)
        if key is not None and key in self.building:
            return WAIT
        refused = self.driver.refuses(run)
        if refused is not None:
            return WAIT if self.holds and self.driver.fits_alone(run) else refused
        left = self.driver.left_beside(run) or 0.0
        install = 0.0 if key is None else min(self.build_wall, max(0.0, left))
        if key is not None and install < self.build_wall and self.holds:
            return WAIT  # what the claims in flight give back may let it install in full
        if install < self.build_wall:
            self.cuts[task.key] = max(1.0, install)
        if key is not None:
            self.building[key] = task.key
        self.holds[task.key] = run + install
        self.driver.hold(run + install)
        return None

    def cut(self, task: RerunTask) -> float | None:
        """The wall time the budget left the task's install (None: its own limit binds)."""
        return self.cuts.get(task.key)

    def end(self, task: RerunTask, record: RerunRecord | None) -> RerunRecord | None:
        """The task ended: what it spent (its record's run and install; all it held when there
        is no record) replaces what it held. Returns the record, "over budget" when the budget
        stopped its install (`cut_by_budget`)."""
        held = self.holds.pop(task.key, 0.0)
        if task.env_key is not None and self.building.get(task.env_key) == task.key:
            del self.building[task.env_key]
        if record is None:
            self.driver.settle(held, held)
            return None
        self.driver.settle(held, (record.duration_s or 0.0) + (
            (record.environment.build_s or 0.0) if record.environment else 0.0))
        cut = self.cuts.pop(task.key, None)
        return record if cut is None else cut_by_budget(record, cut)


def admitted(request: RerunRequest, tasks: Iterable[RerunTask],
             on_result: Callable[[RerunRecord], None], *, engine: str,
             start: Callable[[RerunTask], str | None | Wait],
             cannot_run: Callable[[RerunTask], str | None] = lambda task: task.not_run,
             sandbox: str | None = None) -> Iterator[RerunTask | None]:
    """The tasks an engine may start, in order, every engine's budget loop: a task that
    `cannot_run` says cannot run is recorded "not run" (final); one the budget refuses
    (`start`: alone over it, or no longer fitting what is left) is recorded "over budget" (not
    final: a rerun with more budget runs it) and the next one is tried; None (`start` said
    WAIT) while it waits for a task in flight to end (the engine collects one, then asks
    again)."""
    queue = deque(tasks)
    while queue:
        task = queue[0]
        reason = cannot_run(task)
        if reason is not None:
            queue.popleft()
            on_result(write_result(request.run_dir, not_run_record(
                task, engine=engine, sandbox=sandbox, reason=reason), logs=None))
            continue
        if task.not_run is not None:  # planned "not run" (`execute` records it): costs nothing
            yield queue.popleft()
            continue
        verdict = start(task)
        if isinstance(verdict, Wait):
            yield None
            continue
        queue.popleft()
        if verdict is not None:
            on_result(write_result(request.run_dir, not_run_record(
                task, engine=engine, sandbox=sandbox, final=False, reason=verdict), logs=None))
            continue
        yield task


def run_local(request: RerunRequest, tasks: list[RerunTask],
              on_result: Callable[[RerunRecord], None]) -> None:
    """Each task in turn, within the budget (`RunTimeBudget`: what each spent is counted as it
    ends, and its install is cut at what the budget has left beside its run)."""
    sandbox = Sandbox(enabled=request.sandbox)
    description = sandbox.check() or None
    cache = request.cache
    budget = RunTimeBudget(request)
    # a task planned "not run" is recorded by `execute`, with this machine's sandbox
    for task in admitted(request, tasks, on_result, engine="local", start=budget.start,
                         cannot_run=lambda task: None, sandbox=description):
        assert task is not None  # one task at a time: nothing is in flight to wait for
        logs = fresh_logs(request.run_dir, task.key)
        cut = budget.cut(task)
        record = execute(task, cache=cache if cut is None else cache.with_build_wall(cut),
                         sandbox=sandbox, logs=logs)
        record = budget.end(task, record)
        assert record is not None
        on_result(write_result(request.run_dir, record, logs=logs))


def cut_by_budget(record: RerunRecord, allowance: float) -> RerunRecord:
    """A record whose install the budget's allowance stopped: not run, over budget, not final (a
    rerun with more budget installs it again)."""
    stopped = INSTALL_STOPPED.format(limit="wall time")
    if not (record.status is RerunStatus.not_run and record.environment is not None
            and record.environment.key == "unresolved" and stopped in record.reason):
        return record
    return record.model_copy(update={
        "final": False, "reason": f"{OVER_BUDGET}: its install was stopped at what --budget had "
                                  f"left for it ({allowance:.0f} s)"})
