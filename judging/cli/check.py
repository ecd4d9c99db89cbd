"""`judging check SOURCE... [--profile icml2026] [--json]`."""

from __future__ import annotations

import sys

import click
from rich.markup import escape
from rich.table import Table

from judging.cli.options import console, friendly_errors

_STYLE = {"ok": "green", "missing": "bold red", "warning": "yellow"}


@click.command()
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option("--profile", type=click.Choice(["icml2026"]), default=None,
              help="Add an event's structure checks for logbooks (icml2026: the index title, "
                   "page order, pinned summary and poster, tags; code = the scripts in run "
                   "cells; a missing environment file is only a warning).")
@click.option("--json", "as_json", is_flag=True, help="Print the checklists as JSON.")
@friendly_errors
def check(sources: tuple[str, ...], profile: str | None, as_json: bool) -> None:
    """Check submissions before they are judged: the submission form's checklist.

    SOURCE is a submission folder (submission.yaml, or a Trackio logbook), a folder of them, or
    hf://spaces/OWNER/NAME[@REV]. Lists per submission: code, environment, results, logs,
    verdict and reason, agent trace, scale note, a falsified claim's proof script and kind of
    problem, and personal data left in the files (with file and line). Writes nothing. Exits 1
    when something required is missing (warnings do not fail).
    """
    from judging.check import CheckOutput, check_source

    checklists = [c for source in sources for c in check_source(source, profile=profile)]
    output = CheckOutput(profile=profile, submissions=checklists)
    ok = output.ok
    if as_json:
        click.echo(output.model_dump_json(indent=2))
    else:
        for checklist in checklists:
            counts = checklist.counts
            table = Table(title=f"{escape(checklist.submission_id or checklist.source)} "
                                f"({checklist.format}"
                                + (f", profile {checklist.profile}" if checklist.profile else "")
                                + ")", title_justify="left", show_lines=False)
            table.add_column("item", no_wrap=True)
            table.add_column("claim", overflow="fold")
            table.add_column("status", no_wrap=True)
            table.add_column("detail", overflow="fold")
            for item in checklist.items:
                detail = item.detail + (f"  [{item.where}]" if item.where else "")
                table.add_row(escape(item.item), escape(item.claim or ""),
                              f"[{_STYLE[item.status]}]{item.status}[/]", escape(detail))
            console.print(table)
            verdict = "[green]complete[/]" if checklist.ok else "[bold red]incomplete[/]"
            console.print(f"{escape(checklist.folder)}: {verdict} ({counts['missing']} "
                          f"missing, {counts['warning']} warning(s), {counts['ok']} ok)",
                          highlight=False, soft_wrap=True)
    if not ok:
        sys.exit(1)
