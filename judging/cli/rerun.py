"""`judging rerun RUN_DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from judging.cli.options import (
    SectionedCommand,
    console,
    friendly_errors,
    option_group,
    option_section,
)
from judging.engines import engine_names


def _limits(*, wall_s: float | None, cpu_s: int | None, memory_mb: int | None,
            processes: int | None, output_mb: float | None, disk_mb: int | None) -> Any:
    """The limits of one claim's run: the defaults, with the ones given in their place."""
    from judging.rerun import DEFAULT_LIMITS

    given = {"wall_s": wall_s, "cpu_s": cpu_s, "memory_mb": memory_mb, "processes": processes,
             "output_mb": output_mb, "disk_mb": disk_mb}
    return DEFAULT_LIMITS.model_copy(update={k: v for k, v in given.items() if v is not None})


def _build_limits(*, build_memory_mb: int | None, build_disk_mb: int | None,
                  build_wall_s: float | None) -> Any:
    from judging.rerun.environment import build_limits

    return build_limits(memory_mb=build_memory_mb, disk_mb=build_disk_mb, wall_s=build_wall_s)


limit_options = option_group("limits", _limits,
    click.option("--timeout", "wall_s", type=click.FloatRange(min=1), default=None,
                  help="Wall-time limit per claim, seconds [default 600; a claim's "
                       "evidence.rerun.timeout_s may lower it, never raise it]."),
    click.option("--cpu", "cpu_s", type=click.IntRange(min=1), default=None,
                  help="CPU-time limit per process, seconds [default 600]."),
    click.option("--memory", "memory_mb", type=click.IntRange(min=64), default=None,
                  help="Memory limit, MiB [default 4096]: of the whole process tree where a "
                       "cgroup can be made (as root, or delegated; tmpfs files, shared memory "
                       "and memfd count), and of each process's address space always."),
    click.option("--processes", type=click.IntRange(min=4), default=None,
                  help="Process (and thread) limit [default 64]."),
    click.option("--output", "output_mb", type=click.FloatRange(min=0.01), default=None,
                  help="Output kept per stream, MiB; more stops the run [default 8]."),
    click.option("--disk", "disk_mb", type=click.IntRange(min=16), default=None,
                  help="Size of the scratch copy, /tmp and home, MiB each [default 1024]."),
    title="Limits per claim",
)

build_options = option_group("build", _build_limits,
    click.option("--build-memory", "build_memory_mb", type=click.IntRange(min=256), default=None,
                  help="The environment install's address-space limit per process, MiB "
                       "[default 8192]."),
    click.option("--build-disk", "build_disk_mb", type=click.IntRange(min=64), default=None,
                  help="The environment install's scratch copy, /tmp, home and the "
                       "environment it writes (with uv's cache), MiB each (tmpfs: memory where "
                       "a cgroup counts it), and its largest file [default 8192]."),
    click.option("--build-timeout", "build_wall_s", type=click.FloatRange(min=1), default=None,
                  help="The environment install's wall-time limit, seconds (its CPU time per "
                       "process: twice that) [default 1800]."),
    title="Environment install",
)


@click.command(cls=SectionedCommand)
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--select", "selector", default="all", show_default=True,
              help="Which number and table claims: falsified, contested (flagged by consensus or "
                   "doubted by the judge), top:N (the N best submissions' claims), sample:N, "
                   "all.")
@click.option("--budget", default=None,
              help="Stop cleanly before spending more: re-run time (2h, 30m, 90s) or HF Jobs "
                   "dollars ($5). A claim starts only when its limit fits; one that does not "
                   "is recorded 'not run: over budget' (a later rerun runs it) and the next "
                   "is tried.")
@click.option("--no-sandbox", is_flag=True,
              help="Run without bubblewrap (untrusted code on this machine, no namespace, no "
                   "scratch tmpfs): only where the sandbox cannot start and the code is trusted. "
                   "Recorded on every result.")
@click.option("--seed", type=int, default=0, show_default=True, help="For --select sample:N.")
@click.option("--force", is_flag=True,
              help="Re-run the selected claims even when they have a result with the same "
                   "inputs.")
@click.option("--estimate", "estimate_only", is_flag=True,
              help="Print what would run and its cost, and stop.")
@limit_options
@build_options
@click.option("--env-cache", type=click.Path(path_type=Path, file_okay=False),
              envvar="JUDGING_RERUN_CACHE", default=None,
              help="Built environments, reused across runs [env JUDGING_RERUN_CACHE; default "
                   "~/.cache/judging/rerun].")
@option_section("Engine",
    click.option("--engine", type=click.Choice(engine_names("rerun")), default="local",
                  show_default=True,
                  help="local: this machine, in the sandbox; ray: tasks on a Ray cluster (the "
                       "same sandbox on each node); hf-jobs: Hugging Face Jobs (submissions read "
                       "from the Hub)."),
    click.option("--address", default=None, envvar="RAY_ADDRESS",
                  help="--engine ray: the cluster [env RAY_ADDRESS; default: Ray on this "
                       "machine]."),
    click.option("--hf-namespace", default=None,
                  help="--engine hf-jobs: the namespace the jobs run (and are billed) in "
                       "[default: the token's user]."),
    click.option("--hf-flavors", default="cpu-basic", show_default=True,
                  help="--engine hf-jobs: the hardware a claim's evidence.rerun.flavor may ask "
                       "for, comma-separated (the namespace pays for it); a claim asking for "
                       "another is not run until it is allowed."),
)
@friendly_errors
def rerun(run_dir: Path, selector: str, budget: str | None, no_sandbox: bool, seed: int,
          force: bool, estimate_only: bool, limits: Any, build: Any, env_cache: Path | None,
          engine: str, address: str | None, hf_namespace: str | None, hf_flavors: str) -> None:
    """Re-run the submitted scripts of RUN_DIR's number claims and compare their numbers.

    Each selected claim's evidence.script runs in the environment its submission declares
    (uv.lock, pyproject.toml or requirements.txt, installed with uv from the package registry,
    built once per file and reused; a Dockerfile only on --engine hf-jobs), in a bubblewrap
    sandbox: no network, a read-only system, a scratch copy of the submission, an empty home, a
    clean environment and limits. Its number (the registry's pattern, the claim's
    evidence.rerun.read, or its last line of JSON) is compared with the participant's and the
    paper's: reproduced, differs, failed, timeout or not_run, appended to RUN_DIR/reruns.jsonl
    with the logs under RUN_DIR/reruns/<claim>/. Reruns resume. Run `judging run` on RUN_DIR
    again to judge with the results (verdict-justification 1.1.0 reads them).
    """
    from judging.rerun import RerunRequest, parse_budget, plan_rerun, run_rerun

    request = RerunRequest(run_dir=run_dir, select=selector, engine=engine,  # type: ignore[arg-type]
                           budget=parse_budget(budget), limits=limits, build_limits=build,
                           sandbox=not no_sandbox,
                           cache_dir=env_cache, seed=seed, force=force, address=address,
                           hf_namespace=hf_namespace, hf_flavors=tuple(
                               f.strip() for f in hf_flavors.split(",") if f.strip()))
    prices = None
    memory_note = None
    if engine == "hf-jobs":
        from judging.rerun.hf_jobs import hardware_prices
        prices = hardware_prices(request)
    else:
        from judging.rerun import Sandbox
        sandbox = Sandbox(enabled=not no_sandbox)
        sandbox.check()  # refuses with the reason before anything runs
        memory_note = sandbox.memory_note()
        if sandbox.tree_limits_missing is not None:
            memory_note = f"[bold yellow]note[/]: {escape(memory_note)}"
        if engine == "ray":
            memory_note = f"{memory_note} (on this machine; each Ray node records its own)"
    plan = plan_rerun(request, prices=prices)
    console.print("estimate: " + escape(plan.estimate.describe()), soft_wrap=True,
                  highlight=False)
    if memory_note is not None:
        console.print(f"  limits: {memory_note}", soft_wrap=True, highlight=False)
    for problem in plan.estimate.problems:
        console.print(f"  [yellow]{escape(problem)}[/]", soft_wrap=True, highlight=False)
    if no_sandbox:
        console.print("[bold yellow]--no-sandbox[/]: the scripts run unconfined on this machine; "
                      "every result records it", highlight=False)
    if estimate_only:
        return

    def show(record) -> None:
        console.print(f"{escape(str(record.claim))}: [bold]{record.status.value}[/]: "
                      f"{escape(record.reason.splitlines()[0] if record.reason else '')}",
                      soft_wrap=True, highlight=False)

    summary = run_rerun(request, plan, on_result=show)
    if not summary.records:  # nothing ran: no file was written, nothing is to be judged again
        already = plan.estimate.resumed
        console.print("nothing re-run: " + (
            f"the {already} claim(s) selected were re-run already with the same inputs "
            f"(--force re-runs them)" if already else "no claim selected")
            + "; no run file changed.", soft_wrap=True, highlight=False)
        return
    console.print(f"{escape(summary.describe())}; wrote "
                  f"{escape(str(run_dir / 'reruns.jsonl'))}. Judge with the results: run "
                  f"`judging run` on {escape(str(run_dir))} again (only changed claims are "
                  f"re-judged).", soft_wrap=True, highlight=False)
