"""`judging rubric list | validate | show | diff | lock`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from judging.cli.options import (
    console,
    err_console,
    friendly_errors,
    rubrics_dir_option,
)


@click.group()
def rubric() -> None:
    """List, validate, show, diff and lock versioned rubrics."""


def _library(rubrics_dir: Path | None):
    from judging.rubrics import RubricLibrary
    return RubricLibrary(rubrics_dir)


@rubric.command("list")
@rubrics_dir_option
@friendly_errors
def rubric_list(rubrics_dir: Path | None) -> None:
    """Every rubric version, published or draft, with its hash."""
    from judging.rubrics import RubricError

    library = _library(rubrics_dir)
    table = Table(title=f"rubrics in {library.root}")
    table.add_column("rubric", no_wrap=True)
    for column in ("status", "applies to", "criteria", "hash"):
        table.add_column(column)
    for entry in library.entries():
        try:
            loaded = library.load(entry.ref_name)
            table.add_row(entry.ref_name, entry.status.value, loaded.describe_scope(),
                          str(len(loaded.criteria)), loaded.content_hash()[:19])
        except RubricError as exc:
            table.add_row(entry.ref_name, "[red]invalid[/]", "", "", str(exc))
    console.print(table)


@rubric.command("validate")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@friendly_errors
def rubric_validate(paths: tuple[Path, ...]) -> None:
    """Check rubric files against the schema; errors name the file, the line and the field."""
    from judging.rubrics import RubricError, load_rubric_file

    failed = False
    for path in paths:
        try:
            loaded = load_rubric_file(path)
        except RubricError as exc:
            err_console.print(f"[red]invalid[/] {escape(str(exc))}", highlight=False,
                              soft_wrap=True)
            failed = True
            continue
        console.print(f"[green]valid[/] {path}: {loaded.ref_name}, {len(loaded.criteria)} "
                      f"criteria, {loaded.content_hash()[:19]}", highlight=False)
    if failed:
        sys.exit(1)


@rubric.command("show")
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the validated rubric as JSON.")
@rubrics_dir_option
@friendly_errors
def rubric_show(ref: str, as_json: bool, rubrics_dir: Path | None) -> None:
    """Show ID@VERSION (or the newest published ID)."""
    from judging.rubrics import resolve_rubric

    loaded = resolve_rubric(ref, _library(rubrics_dir))
    if as_json:
        click.echo(json.dumps(loaded.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]{loaded.ref_name}[/] — {loaded.title}  ({loaded.content_hash()[:19]})")
    console.print(f"applies to: {loaded.describe_scope()}; pass at {loaded.pass_threshold:g} "
                  f"(weighted mean)\n")
    console.print(loaded.instructions.strip() + "\n", highlight=False)
    for criterion in loaded.criteria:
        tags = [criterion.scale.value, f"weight {criterion.weight:g}" if criterion.scored else
                "no weight: " + " | ".join(criterion.categories or [])]
        if criterion.gate:
            tags.append("gate")
        if criterion.applies_if:
            tags.append(f"only {criterion.applies_if.describe()}")
        if criterion.offline is not None:
            tags.append("offline: " + json.dumps(criterion.offline.model_dump(exclude_none=True)))
        console.print(f"[bold]{criterion.id}[/] ({', '.join(tags)})", highlight=False)
        console.print(f"  {criterion.question}", highlight=False)
        for level, text in (criterion.levels or {}).items():
            mark = " (pass)" if criterion.pass_at and level >= criterion.pass_at else ""
            console.print(f"    {level}{mark}: {text}", highlight=False)


@rubric.command("diff")
@click.argument("old")
@click.argument("new")
@rubrics_dir_option
@friendly_errors
def rubric_diff(old: str, new: str, rubrics_dir: Path | None) -> None:
    """What changed between two rubric versions."""
    from judging.rubrics import diff_rubrics, resolve_rubric

    library = _library(rubrics_dir)
    for line in diff_rubrics(resolve_rubric(old, library), resolve_rubric(new, library)):
        click.echo(line)


@rubric.command("lock")
@click.argument("refs", nargs=-1)
@rubrics_dir_option
@friendly_errors
def rubric_lock(refs: tuple[str, ...], rubrics_dir: Path | None) -> None:
    """Publish draft versions (all, or the ID@VERSION given): record their hashes in rubrics/LOCK.

    A published version can never be re-locked with other content.
    """
    library = _library(rubrics_dir)
    added = library.lock_drafts(list(refs) or None)
    if not added:
        console.print("nothing to lock: every rubric version is already published")
    for ref in added:
        console.print(f"published {ref}")
