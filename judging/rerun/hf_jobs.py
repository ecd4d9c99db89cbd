"""`judging rerun --engine hf-jobs`: each claim's re-run as a Hugging Face Job (huggingface_hub's
Jobs API: `run_job`, `wait_for_job`, `fetch_job_logs`, `list_jobs_hardware`).

The job mounts the submission's Hub repository read-only at /submission, at the revision that
was judged (a `Volume`; only submissions read from the Hub can run here), copies it into a
scratch folder, installs the declared environment with uv (the job has the registry), runs the
script under `timeout`, and prints marker lines (with a nonce per job) around the script's
output, which are read back from the job's logs. The script can read the job's command (and so
its nonce), and a daemon it leaves can outlive it: so every process but the job's own shell is
killed after the install and after the run, and only the job's last marked line, printed after
that kill, is trusted for the exit code and the results file (base64); any marked line the
submission printed before it counts for nothing.
A Dockerfile runs where the Hub builds it: a Space's own image (`hf.co/spaces/<id>`). The
flavor is the claim's `evidence.rerun.flavor` (cpu-basic by default) when the organizer's
`--hf-flavors` allows it (a claim chooses no hardware the namespace pays for: another flavor is
"not run", not final, until the organizer allows it), the cost its running time at the flavor's
price (`list_jobs_hardware`). Nothing of ours goes into the job: no token, no
secret, no environment variable; the token only authenticates the API calls.

`run_uv_job` is not used: it ships local files through a bucket and runs a single script from
the job's own folder; the submission's repository as a volume keeps every file of it at the
judged revision, and `run_job` with uv's image runs the same install as the local engine.
"""

from __future__ import annotations

import base64
import secrets as random_tokens
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from judging.engines import BudgetDriver
from judging.errors import JudgingError
from judging.models import RerunEnvironment, RerunRecord, RerunStatus
from judging.rerun.cgroup import MIB
from judging.rerun.sandbox import ProcessOutcome
from judging.rerun.stage import (
    RerunRequest,
    admitted,
    flavor_refused,
    fresh_logs,
    logs_bytes,
    write_result,
)
from judging.rerun.task import (
    STDERR_TAIL_CHARS,
    RerunTask,
    classify,
    not_run_record,
    record_for,
)
from judging.rundir import RERUN_LOG_FILES, utc_now

#: uv's image with the Python asked for (3.12 when none is pinned).
UV_IMAGE = "ghcr.io/astral-sh/uv:python{python}-bookworm"
DEFAULT_IMAGE_PYTHON = "3.12"
#: Time a job gets on top of the run's wall time, for the copy and the install.
INSTALL_MARGIN_S = 1800
POLL_S = 2.0
#: The exit code of our job script when the environment does not install.
ENV_FAILED = 97
#: Every process of the job but its own shell (and the container's init), killed after the
#: install and after the run: nothing the submission started prints after the job's last line.
KILL_THE_REST = "kill -KILL -1 2>/dev/null; sleep 0.2"


class HfJobsError(JudgingError):
    """The Hub's Jobs API cannot be used (no token, no such namespace...)."""


def _hub_errors() -> tuple[type[BaseException], ...]:
    """What a call to the Hub raises when it is refused or unreachable (huggingface_hub's own
    error, its transport's, the socket's)."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError
    return (HfHubHTTPError, httpx2.HTTPError, OSError)


def _api(request: RerunRequest):
    from huggingface_hub import HfApi
    return HfApi(token=request.hf_token)


def hardware_prices(request: RerunRequest) -> dict[str, float]:
    """US dollars per minute of each flavor, from the Hub's hardware list."""
    try:
        hardware = _api(request).list_jobs_hardware()
    except _hub_errors() as exc:
        raise HfJobsError(f"cannot read the Jobs hardware list from the Hub: {exc}") from exc
    return {h.name: h.unit_cost_usd * (60 if h.unit_label == "second" else 1)
            for h in hardware if h.unit_label in ("minute", "second")}


def job_script(task: RerunTask, nonce: str) -> str:
    """The job's shell script (bash, in the job's container)."""
    env = task.environment
    assert env is not None and task.script is not None
    mark = f"judging-{nonce}"
    # Declared names are quoted whole: a folder or file named `$(...)` is a name, not a command.
    folder = _quote(f"./{env.folder}") if env.folder else "."
    python_pin = f" --python {env.python}" if env.python and _plain(env.python) else ""
    if env.kind == "Dockerfile":
        install, python = "true", "python3"
    elif env.kind == "uv.lock":
        install = (f"UV_PROJECT_ENVIRONMENT=/tmp/env uv sync --frozen --no-install-project"
                   f"{python_pin} --project {folder}")
        python = "/tmp/env/bin/python"
    else:
        install = (f'uv venv --quiet{python_pin} /tmp/env && uv pip install --python '
                   f'/tmp/env/bin/python -r {_quote("./" + env.file)}')
        python = "/tmp/env/bin/python"
    runner = python if task.script.endswith(".py") else "bash"
    args = " ".join(_quote(a) for a in [task.script, *task.args])
    results_file = _quote(task.results_file) if task.results_file else None
    # A results file the submission already holds is not this run's: removed before the run.
    clear = f"rm -rf -- {results_file}" if results_file else "true"
    results = (f'if [ -f {results_file} ] && [ ! -L {results_file} ]; then results=$(head -c '
               f'1048576 {results_file} | base64 -w0); fi' if results_file else "true")
    return "\n".join([
        "set -u",
        "mkdir -p /tmp/work && cp -R /submission/. /tmp/work/ && cd /tmp/work || exit 96",
        f'echo "{mark} install"',
        f"{{ {install}; }} 2>&1",
        "built=$?",
        KILL_THE_REST,
        f'if [ $built -ne 0 ]; then echo; echo "{mark} end env-failed"; exit {ENV_FAILED}; fi',
        clear,
        f'echo "{mark} run"',
        f"timeout {int(task.limits.wall_s)} {runner} {args} 2>&1",
        "code=$?",
        KILL_THE_REST,
        "results=-",
        results,
        # a newline first: a line the submission left unfinished cannot swallow the mark
        f'echo; echo "{mark} end exit $code results $results"',
        "exit $code"])


def _plain(version: str) -> bool:
    return all(part.isdigit() for part in version.split("."))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _image(task: RerunTask) -> str | None:
    env, source = task.environment, task.claim.source
    assert env is not None and source is not None
    if env.kind == "Dockerfile":
        # The Hub builds a Docker Space's image from its Dockerfile; nothing else builds one.
        return f"hf.co/spaces/{source.repo_id}" if source.repo_type == "space" else None
    python = env.python if env.python and _plain(env.python) else DEFAULT_IMAGE_PYTHON
    return UV_IMAGE.format(python=".".join(python.split(".")[:2]))


def _parse(lines: list[str], nonce: str) -> tuple[list[str], list[str], int | None, bytes | None,
                                                  bool]:
    """(install lines, output lines, exit code, results, environment failed) from job logs.
    Only the last marked line (the job's own, printed after every other process was killed)
    says how the job ended; the "install" and "run" marks only split the log."""
    mark = f"judging-{nonce} "
    marked = [i for i, line in enumerate(lines) if line.startswith(mark)]
    runs = [i for i in marked if lines[i][len(mark):].strip() == "run"]
    end = marked[-1] if marked and lines[marked[-1]][len(mark):].startswith("end ") else None
    stop = end if end is not None else len(lines)
    split = runs[-1] if runs and runs[-1] < stop else stop
    install = [line for line in lines[:split] if not line.startswith(mark)]
    output = [line for line in lines[split + 1:stop] if not line.startswith(mark)]
    if end is not None and output and not output[-1].strip():
        output.pop()  # the newline printed before the end mark
    code: int | None = None
    results: bytes | None = None
    words = lines[end][len(mark):].split() if end is not None else []
    if words[:2] == ["end", "env-failed"]:
        return install, output, None, None, True
    if len(words) == 5 and words[1] == "exit" and words[3] == "results":
        if words[2].lstrip("-").isdigit():
            code = int(words[2])
        if words[4] != "-":
            try:
                results = base64.b64decode(words[4], validate=True)
            except ValueError:
                results = None
    return install, output, code, results, False


def run_hf_jobs(request: RerunRequest, tasks: list[RerunTask],
                on_result: Callable[[RerunRecord], None]) -> None:
    from huggingface_hub import Volume

    api = _api(request)
    prices = hardware_prices(request)
    try:
        namespace = request.hf_namespace or api.whoami()["name"]
    except _hub_errors() as exc:
        raise HfJobsError(f"cannot tell whose jobs these are (give --hf-namespace): {exc}"
                          ) from exc
    driver = BudgetDriver(request.budget, usd=True)

    def cannot_run(task: RerunTask) -> str | None:
        if task.not_run is not None:
            return task.not_run
        if task.claim.source is None:
            return ("not on the Hub: --engine hf-jobs runs submissions read from the Hub "
                    "(hf://...); use --engine local or ray for a local folder")
        if _image(task) is None:
            return ("needs a container engine that builds its Dockerfile: the Hub builds only "
                    "a Docker Space's")
        if task.flavor not in prices:
            return f"flavor {task.flavor!r} is not in the Hub's hardware list"
        return None

    def limit(task: RerunTask) -> float:  # dollars: every job at its timeout
        return prices[task.flavor] * (task.limits.wall_s + INSTALL_MARGIN_S) / 60

    started: list[tuple[RerunTask, str, str]] = []
    for task in admitted(request, _allowed_flavors(request, tasks, on_result), on_result,
                         engine="hf-jobs", start=lambda task: driver.admit(limit(task)),
                         cannot_run=cannot_run):
        source, image = task.claim.source, _image(task)
        assert source is not None and image is not None
        nonce = random_tokens.token_hex(8)
        try:
            job = api.run_job(
                image=image, command=["bash", "-c", job_script(task, nonce)], env={},
                flavor=task.flavor, timeout=int(task.limits.wall_s + INSTALL_MARGIN_S),
                labels={"judging": "rerun"}, namespace=namespace,
                volumes=[Volume(type=source.repo_type, source=source.repo_id,
                                revision=source.revision, mount_path="/submission")])
        except _hub_errors() as exc:
            on_result(write_result(request.run_dir, not_run_record(
                task, engine="hf-jobs", sandbox=None, final=False,
                reason=f"the Hub did not start the job: {exc}"), logs=None))
            continue
        started.append((task, job.id, nonce))
    for task, job_id, nonce in started:
        try:
            record = _finish(request, api, namespace, task, job_id, nonce, prices)
        except (*_hub_errors(), TimeoutError) as exc:  # one lost job does not sink the rest
            record = write_result(request.run_dir, not_run_record(
                task, engine="hf-jobs", sandbox=None, final=False,
                reason=f"job {job_id} could not be followed to its end: {exc}"), logs=None)
        on_result(record)


def _read_logs(stream: Iterable[str], limit: int) -> tuple[list[str], bool]:
    """A job's log lines, read up to `limit` bytes; whether there was more (the rest is not
    read: a script that prints without end does not fill this machine's memory)."""
    lines: list[str] = []
    size = 0
    for line in stream:
        size += len(line.encode("utf-8", errors="replace")) + 1
        if size > limit:
            return lines, True
        lines.append(line.rstrip("\n"))
    return lines, False


def _allowed_flavors(request: RerunRequest, tasks: list[RerunTask],
                     on_result: Callable[[RerunRecord], None]) -> Iterator[RerunTask]:
    """The tasks whose flavor the organizer's --hf-flavors allows; the others are recorded "not
    run", not final (allowed later, the claim runs)."""
    for task in tasks:
        refused = flavor_refused(request, task) if task.not_run is None else None
        if refused is not None:
            on_result(write_result(request.run_dir, not_run_record(
                task, engine="hf-jobs", sandbox=None, final=False, reason=refused), logs=None))
            continue
        yield task


def _finish(request: RerunRequest, api, namespace: str, task: RerunTask, job_id: str,
            nonce: str, prices: dict[str, float]) -> RerunRecord:
    begun = utc_now()
    job = api.wait_for_job(job_id, namespace=namespace, poll_interval=POLL_S,
                           timeout=task.limits.wall_s + INSTALL_MARGIN_S + 600)
    limit = logs_bytes(task, request)
    lines, over = _read_logs(api.fetch_job_logs(job_id=job_id, namespace=namespace), limit)
    install, output, code, results, env_failed = _parse(lines, nonce)
    stage = str(job.status.stage.value if hasattr(job.status.stage, "value")
                else job.status.stage)
    timed_out = "timeout" in (job.status.message or "").lower()
    if timed_out or stage == "CANCELED":  # ended from outside: no last line of ours to trust
        code, results = None, None
    logs = fresh_logs(request.run_dir, task.key)
    logs.mkdir(parents=True, exist_ok=True)
    (logs / RERUN_LOG_FILES["build"]).write_text("\n".join(install) + "\n")
    (logs / RERUN_LOG_FILES["stdout"]).write_text("\n".join(output) + "\n")
    running = job.durations.running_secs if job.durations else None
    common = {"engine": "hf-jobs", "sandbox": f"HF Jobs container ({task.flavor})",
              "node": job.id, "job_url": getattr(job, "url", None),
              "cost_usd": round(prices[task.flavor] * running / 60, 6)
              if running is not None else None}
    assert task.environment is not None
    environment = RerunEnvironment(kind=task.environment.kind, file=task.environment.file,
                                   key="hf-jobs", python=task.environment.python)
    tail = "\n".join([line for line in (install if env_failed or code is None else output)
                      if line.strip()]
                     [-20:])[-STDERR_TAIL_CHARS:] or None
    if over:  # as the local engine stops a run at its output limit: no number is read
        record = record_for(task, status=RerunStatus.failed, attempted=True, started=begun,
                            reason=f"printed more than {limit / MIB:.3g} MiB (the job's logs, "
                                   f"at the output limits): the rest was not read",
                            stderr_tail=tail, environment=environment, **common)
    elif env_failed:
        record = record_for(task, status=RerunStatus.not_run, attempted=True, started=begun,
                            reason="environment failed (in the job)", stderr_tail=tail,
                            environment=environment, **common)
    elif code is None:
        record = record_for(task, status=RerunStatus.timeout if timed_out
                            else RerunStatus.failed, attempted=True, started=begun,
                            reason=f"the job ended {stage} before the script did"
                                   + (f": {job.status.message}" if job.status.message else ""),
                            stderr_tail=tail, environment=environment, **common)
    else:
        outcome = ProcessOutcome(exit_code=None if code == 124 else code,
                                 stopped="wall time" if code == 124 else None,
                                 duration_s=float(running or 0), results=results)
        status, reason, values = classify(task, outcome, stdout="\n".join(output),
                                          stderr_tail=tail)
        record = record_for(task, status=status, reason=reason, attempted=True, started=begun,
                            values=values, exit_code=code, duration_s=running,
                            stderr_tail=tail if status is not RerunStatus.reproduced else None,
                            environment=environment, **common)
    return write_result(request.run_dir, record, logs=Path(logs))
