"""`judging merge RUN_DIR... --out DIR`: the append-only union of run directories."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click
from rich.markup import escape

from judging.cli.options import console, err_console, friendly_errors


@click.command()
@click.argument("run_dirs", nargs=-1, required=True,
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="The merged run directory: created, or appended to when it exists.")
@friendly_errors
def merge(run_dirs: tuple[Path, ...], out: Path) -> None:
    """Merge run directories (the shards of a run) into one.

    Appends to DIR every judgment line, claim, fingerprint, label and file (diffs/, sources/,
    logbooks/) it lacks, adds the inputs' run.json invocations, and recomputes the integrity
    flags over the union. Two final lines of one claim, rubric, judge and sample with different
    answers are a conflict: printed, kept in DIR/conflicts.json, flagged on the claim, and the
    exit status is 1. Runs judged with different rubric sets are refused. Rebuild the report
    (`judging report DIR`) afterwards.
    """
    from judging.merge import merge_runs

    result = merge_runs(list(run_dirs), out)
    print_merge(result)
    if result.failed:
        sys.exit(1)


def print_merge(result) -> None:
    from judging.rundir import RunPaths

    shards = [i.shard for i in result.inputs if i.shard]
    dirs = "directory" if len(result.inputs) == 1 else "directories"
    console.print(f"merged {len(result.inputs)} run {dirs}"
                  + (f" (shards {', '.join(shards)})" if shards else "")
                  + f" into {escape(str(result.out))} (run {result.run_id}): {result.added} "
                  f"judgment line(s) added, {result.already} already there, "
                  f"{result.counts.get('claims_added', 0)} claim(s), "
                  f"{result.counts.get('fingerprints_added', 0)} fingerprint(s), "
                  f"{result.counts.get('files_copied', 0)} file(s) copied", soft_wrap=True,
                  highlight=False)
    if result.integrity_pairs:
        kinds = Counter({kind.replace("_", " "): n for kind, n in result.integrity_pairs.items()})
        console.print("[bold yellow]integrity:[/] " + ", ".join(
            f"{n} {kind} pair(s) across submissions" for kind, n in sorted(kinds.items()))
            + " (recomputed over the merged run)", soft_wrap=True)
    for warning in result.warnings:
        err_console.print(f"[bold yellow]warning:[/] {escape(warning)}", highlight=False,
                          soft_wrap=True)
    if result.conflicts:
        err_console.print(f"[bold red]{len(result.conflicts)} conflict(s)[/]: final lines that "
                          f"disagree (see {escape(str(RunPaths(result.out).conflicts))}):",
                          highlight=False, soft_wrap=True)
        for conflict in result.conflicts:
            err_console.print(f"  conflict: {escape(conflict.describe())}", highlight=False,
                              soft_wrap=True)
