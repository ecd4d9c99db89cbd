"""One claim's re-run: what to run (`plan_task`, from the claim as the run recorded it) and running
it on this machine in the sandbox (`execute`), to a `RerunRecord`. The Ray engine runs `execute`
on its nodes; the HF Jobs engine runs the same plan as a Hub job.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from judging.hashing import content_hash
from judging.models import (
    ClaimInput,
    ClaimKind,
    RerunEnvironment,
    RerunLimits,
    RerunRecord,
    RerunStatus,
    RerunValue,
)
from judging.rerun.cgroup import MIB
from judging.rerun.environment import (
    ENV_MOUNT,
    EnvCache,
    EnvironmentError_,
    EnvRequest,
    PythonRequestError,
    find_environment,
    pinned_python,
    submission_hash,
)
from judging.rerun.number import compare, describe_values, read_values
from judging.rerun.sandbox import ProcessOutcome, Sandbox, SandboxUnavailable, disk_files
from judging.rundir import RERUN_LOG_FILES, utc_now

#: Bump when what a re-run does changes (its input hash changes: every claim is re-run again).
RERUN_VERSION = "rerun/2"  # 2: declared results removed first, Python requests validated
#: The tail of stderr kept on a result.
STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 2000
#: The traceback of an error judging did not plan for, in a claim's logs folder.
ERROR_LOG = "error.txt"
#: How a script is started, by its suffix (inside the environment).
RUNNERS = {".py": ["python"], ".sh": ["/bin/bash"]}
#: What a failure's stderr says about the limit it met (words for the one-line report).
LIMIT_HINTS = (
    (re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc"), "memory limit reached"),
    (re.compile(r"No space left on device|Disk quota exceeded"), "disk limit reached"),
    (re.compile(r"Resource temporarily unavailable|can't start new thread|fork"),
     "process limit reached"),
    (re.compile(r"Network is unreachable|Temporary failure in name resolution|"
                r"Name or service not known|Connection refused|nodename nor servname"),
     "no network in the sandbox"),
)


@dataclass
class RerunTask:
    """What one claim's re-run needs (picklable: Ray ships it to a node)."""

    claim: ClaimInput
    limits: RerunLimits
    input_hash: str
    script: str | None = None
    """The script, relative to the submission folder."""
    args: list[str] = field(default_factory=list)
    environment: EnvRequest | None = None
    not_run: str | None = None
    """Why it is not run, decided before anything runs (no script, no environment...)."""
    results_file: str | None = None
    flavor: str = "cpu-basic"
    env_key: str | None = None
    """The environment's key, hashed once by the plan (None: nothing to build here, or a key
    the plan could not compute: the install meets that again and records it)."""

    @property
    def key(self) -> str:
        return str(self.claim.key)

    @property
    def root(self) -> Path:
        return self.claim.root


def _tree_hash(root: Path, memo: dict[Path, str | None], limits: RerunLimits) -> str | None:
    """`submission_hash` of a submission folder, once per folder of a plan (None: its files
    add up to more than the sandbox's disk, in bytes or in files: `disk_files`)."""
    if root not in memo:
        memo[root] = submission_hash(root, limit=limits.disk_mb * MIB,
                                     max_entries=disk_files(limits))
    return memo[root]


def plan_task(claim: ClaimInput, *, limits: RerunLimits, sandboxed: bool,
              memo: dict[Path, str | None] | None = None) -> RerunTask:
    """The re-run of a claim: its script, arguments, environment and limits, or why not."""
    spec = claim.claim.evidence.rerun
    if spec is not None and spec.timeout_s is not None:
        # the organizer's --timeout caps the claim's own: a claim may ask for less, never more
        limits = limits.model_copy(update={"wall_s": min(float(spec.timeout_s),
                                                          limits.wall_s)})
    root = claim.root
    script = claim.evidence_paths.get("script")
    relevant = {"key": str(claim.key), "claim": claim.claim.model_dump(
        mode="json", include={"kind", "reported_value", "reproduced_value", "values", "tolerance",
                              "evidence"}), "pattern": claim.rerun_pattern,
                "limits": limits.model_dump(mode="json"), "sandbox": sandboxed,
                "version": RERUN_VERSION}
    task = RerunTask(claim=claim, limits=limits, input_hash="",
                     args=list(spec.args) if spec else [],
                     results_file=spec.read.file if spec and spec.read else None,
                     flavor=(spec.flavor if spec and spec.flavor else "cpu-basic"))
    if claim.claim.kind not in (ClaimKind.number, ClaimKind.table):
        task.not_run = f"a {claim.claim.kind} claim has no number to re-run"
    elif script is None or not script.is_file():
        task.not_run = ("no script: the claim names no evidence.script in the submission"
                        if script is None else "no script: evidence.script is not in the "
                                               "submission")
    elif script.suffix not in RUNNERS:
        task.not_run = f"no script: no way to run a {script.suffix or 'suffix-less'} file " \
                       f"(.py or .sh)"
    else:
        task.script = script.resolve().relative_to(root.resolve()).as_posix()
        task.environment, task.not_run = _environment(claim, script)
        if task.environment is not None:
            files = _tree_hash(root, memo if memo is not None else {}, limits)
            if files is None:
                task.environment = None
                task.not_run = (f"the submission's files add up to more than the sandbox's disk "
                                f"({limits.disk_mb} MiB, --disk, or {disk_files(limits):,} files "
                                f"and folders), where it is copied: not run")
            else:
                relevant["files"] = files
                relevant["environment"] = [task.environment.kind, task.environment.file,
                                           task.environment.python]
    relevant["not_run"] = task.not_run
    task.input_hash = content_hash(relevant)
    return task


def unplanned_task(claim: ClaimInput, *, limits: RerunLimits, error: Exception) -> RerunTask:
    """A claim whose plan met an error nobody planned for: not run, naming the error's type (one
    claim never stops the plan of the others)."""
    reason = f"judging could not plan this claim's re-run: {type(error).__name__}"
    return RerunTask(claim=claim, limits=limits, not_run=reason, input_hash=content_hash(
        {"key": str(claim.key), "not_run": reason, "version": RERUN_VERSION}))


def _environment(claim: ClaimInput, script: Path) -> tuple[EnvRequest | None, str | None]:
    """The environment a claim's script runs in, with its validated Python request, or why it
    is not run (no environment file; a file refused before it is read; a Python request that is
    not a version)."""
    spec = claim.claim.evidence.rerun
    try:
        request = find_environment(claim.root, script,
                                   claim.evidence_paths.get("rerun.environment"))
    except EnvironmentError_ as exc:
        return None, str(exc)
    if request is None:
        return None, ("no environment: no uv.lock, pyproject.toml, requirements.txt or "
                      "Dockerfile beside the script or above it in the submission")
    try:
        python = pinned_python(claim.root, request, spec.python if spec else None)
    except PythonRequestError as exc:
        return replace(request, python=None), str(exc)
    return replace(request, python=python), None


def _tail(path: Path | None) -> str | None:
    if path is None or not path.is_file():
        return None
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 64 * 1024))
        text = handle.read().decode("utf-8", errors="replace")
    lines = [line for line in text.splitlines() if line.strip()][-STDERR_TAIL_LINES:]
    return "\n".join(lines)[-STDERR_TAIL_CHARS:] or None


def record_for(task: RerunTask, *, status: RerunStatus, reason: str, attempted: bool,
               engine: str, sandbox: str | None, started, final: bool = True,
               **fields) -> RerunRecord:
    return RerunRecord(claim=task.claim.key, status=status, reason=reason, attempted=attempted,
                       input_hash=task.input_hash, final=final, engine=engine,
                       sandbox=sandbox, limits=task.limits, started_at=started,
                       finished_at=utc_now(), **fields)


def classify(task: RerunTask, outcome: ProcessOutcome, *, stdout: str, stderr_tail: str | None
             ) -> tuple[RerunStatus, str, list[RerunValue]]:
    """The status, the one-line reason and the numbers of a finished run."""
    limits = task.limits
    if outcome.stopped == "wall time":
        return RerunStatus.timeout, f"stopped at the wall-time limit ({limits.wall_s:g} s)", []
    if outcome.stopped == "output":
        return (RerunStatus.failed, f"printed more than {limits.output_mb:g} MiB: stopped at "
                                    f"the output limit", [])
    signal = outcome.signal_name
    if signal == "SIGXCPU" or (signal == "SIGKILL" and outcome.cpu_s >= limits.cpu_s):
        return RerunStatus.timeout, f"stopped at the CPU-time limit ({limits.cpu_s} s)", []
    if outcome.oom_kills and outcome.exit_code != 0:
        return (RerunStatus.failed, f"memory limit reached (cgroup): the process tree used its "
                                    f"{limits.memory_mb} MiB and the kernel killed it "
                                    f"(exit code {outcome.exit_code})", [])
    if signal == "SIGXFSZ":
        return (RerunStatus.failed, f"wrote a file over the file-size limit "
                                    f"({limits.disk_mb} MiB): stopped", [])
    if outcome.exit_code != 0:
        hint = next((words for pattern, words in LIMIT_HINTS
                     if stderr_tail and pattern.search(stderr_tail)), None)
        killed = f", killed by {signal}" if signal else ""
        last = (stderr_tail or "").strip().splitlines()[-1:] or [""]
        said = f": {last[0][:200]}" if last[0] else ""
        return (RerunStatus.failed, f"exit code {outcome.exit_code}{killed}"
                                    + (f" ({hint})" if hint else "") + said, [])
    status, reason, values = _compared(task, outcome, stdout=stdout)
    if outcome.oom_kills:  # it exited 0, but not every process of it ran to its end
        reason += (f" ({outcome.oom_kills} of its processes killed at the memory limit "
                   f"(cgroup, {limits.memory_mb} MiB))")
    return status, reason, values


def _compared(task: RerunTask, outcome: ProcessOutcome, *, stdout: str
              ) -> tuple[RerunStatus, str, list[RerunValue]]:
    """The status, reason and numbers of a run that exited 0: its numbers against the claim's."""
    values = compare(task.claim, read_values(task.claim, stdout=stdout,
                                             results=outcome.results))
    if any(v.rerun is None for v in values):
        return (RerunStatus.failed, "exit code 0 but no number: " + describe_values(values),
                values)
    target = [v.matches_participant if v.reproduced is not None else v.matches_paper
              for v in values]
    if any(t is None for t in target):
        return (RerunStatus.failed, "ran, but there is no value to compare with: "
                + describe_values(values), values)
    status = RerunStatus.reproduced if all(target) else RerunStatus.differs
    return status, describe_values(values), values


def not_run_record(task: RerunTask, *, engine: str, sandbox: str | None, reason: str,
                   final: bool = True) -> RerunRecord:
    return record_for(task, status=RerunStatus.not_run, reason=reason, attempted=False,
                      engine=engine, sandbox=sandbox, started=utc_now(), final=final)


def execute(task: RerunTask, *, cache: EnvCache, sandbox: Sandbox, logs: Path,
            engine: str = "local", node: str | None = None) -> RerunRecord:
    """Build (or reuse) the task's environment and run its script in the sandbox; logs (build,
    stdout, stderr) into `logs`.

    One claim never stops a rerun: an error nobody planned for while this claim is processed
    (a parser's RecursionError on hostile output, a file that vanished) is this claim's
    `failed` record, naming the error's type, with its traceback in `logs/error.txt`; the next
    claim runs, and a resumed rerun goes past it (the record is final for these inputs). Only a
    sandbox that cannot start at all stops the rerun (every claim would meet it)."""
    started = utc_now()
    try:
        return _execute(task, cache=cache, sandbox=sandbox, logs=logs, engine=engine, node=node)
    except SandboxUnavailable:
        raise
    except Exception as exc:  # recorded as this claim's failure with its cause, never an answer
        logs.mkdir(parents=True, exist_ok=True)
        (logs / ERROR_LOG).write_text("".join(traceback.format_exception(exc)),
                                      encoding="utf-8", errors="replace")
        return record_for(task, status=RerunStatus.failed, attempted=True, engine=engine,
                          sandbox=sandbox.check() or None,
                          started=started, node=node,
                          reason=f"judging could not process this claim's re-run: "
                                 f"{type(exc).__name__} (see {ERROR_LOG} in its logs)")


def _execute(task: RerunTask, *, cache: EnvCache, sandbox: Sandbox, logs: Path,
             engine: str, node: str | None) -> RerunRecord:
    description = sandbox.check() or None
    if task.not_run is not None:
        return not_run_record(task, engine=engine, sandbox=description, reason=task.not_run)
    assert task.environment is not None and task.script is not None
    if task.environment.kind == "Dockerfile":
        return not_run_record(task, engine=engine, sandbox=description,
                              reason="needs a container engine: the environment is a "
                                     "Dockerfile (re-run it with --engine hf-jobs)")
    started = utc_now()
    logs.mkdir(parents=True, exist_ok=True)
    common = {"engine": engine, "sandbox": description, "node": node}
    try:
        built = cache.ensure(task.root, task.environment, sandbox=sandbox,
                             log=logs / RERUN_LOG_FILES["build"])
    except EnvironmentError_ as exc:
        lines = str(exc).split("\n", 1)
        return record_for(task, status=RerunStatus.not_run, reason=lines[0].rstrip(":"),
                          attempted=True, started=started, stderr_tail=(
                              lines[1][-STDERR_TAIL_CHARS:] if len(lines) > 1 else None),
                          environment=RerunEnvironment(kind=task.environment.kind,
                                                       file=task.environment.file,
                                                       key="unresolved", build_s=exc.build_s),
                          logs=None, **common)
    env_root = ENV_MOUNT if sandbox.enabled else str(built.path)
    runner = RUNNERS[Path(task.script).suffix]
    executable = f"{env_root}/bin/python" if runner == ["python"] else runner[0]
    command = [executable, task.script, *task.args]
    env = {"PATH": f"{env_root}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": env_root,
           "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    stdout_path, stderr_path = logs / RERUN_LOG_FILES["stdout"], logs / RERUN_LOG_FILES["stderr"]
    outcome = sandbox.run(command, submission=task.root, limits=task.limits,
                          mounts=cache.run_mounts(built) if sandbox.enabled else [], env=env,
                          stdout=stdout_path, stderr=stderr_path, results=task.results_file)
    stderr_tail = _tail(stderr_path)
    stdout = stdout_path.read_text(encoding="utf-8", errors="replace")
    status, reason, values = classify(task, outcome, stdout=stdout, stderr_tail=stderr_tail)
    return record_for(task, status=status, reason=reason, attempted=True, started=started,
                      values=values, exit_code=outcome.exit_code,
                      stderr_tail=stderr_tail if status is not RerunStatus.reproduced else None,
                      duration_s=outcome.duration_s, cpu_s=outcome.cpu_s,
                      environment=built.record, memory_limit=outcome.memory_limit,
                      memory_peak_mb=outcome.memory_peak_mb, **common)
