"""`judging consensus RUN_DIR`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from judging.cli.options import console, friendly_errors


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--json", "as_json", is_flag=True,
              help="Print the consensus side file's JSON instead of the tables.")
@friendly_errors
def consensus(run_dir: Path, as_json: bool) -> None:
    """Every reproduction of each registry claim side by side, and their consensus.

    Writes RUN_DIR/consensus.json: per registry claim the reproductions (values, verdicts, scale,
    outcomes, agent), the consensus verdict (the majority direction among independent, full-scale
    reproductions, when at least 3 give it and it holds more than half of them), its support and
    the spread of reproduced values; and the flags contradicts_consensus, value_outlier and
    not_independent, which raise review priority (`review push`) and show in the report. No
    outcome changes.
    """
    from judging.consensus import run_consensus
    from judging.rundir import RunPaths

    report = run_consensus(run_dir)
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    if not report.claims:
        console.print("no registry claim in this run (judge with --claims REGISTRY to compare "
                      "reproductions)")
    table = Table(title="Consensus per registry claim", show_lines=False)
    for column in ("registry claim", "reproductions", "independent", "votes", "consensus",
                   "support", "agreement", "spread"):
        table.add_column(column)
    for claim in report.claims:
        votes = ", ".join(f"{n} {v}" for v, n in claim.votes.items()) or "-"
        # no consensus: its support and agreement would read as a verdict's ("none, support 0,
        # agreement 100%"); the reason (too few, split, inconclusive) says what there is
        table.add_row(escape(claim.claim_id), str(len(claim.reproductions)),
                      str(claim.independent), votes,
                      claim.verdict or f"none: {escape(claim.reason.split(' (counted')[0])}",
                      str(claim.support) if claim.verdict else "-",
                      "-" if claim.agreement is None or not claim.verdict
                      else f"{claim.agreement:.0%}",
                      escape("; ".join(s.describe() for s in claim.spread) or "-"))
    console.print(table)
    flagged = [row for claim in report.claims for row in claim.reproductions if row.flags]
    for row in flagged:
        for flag in row.flags:
            console.print(f"[bold]{escape(flag.name)}[/]: {escape(str(row.claim))}: "
                          f"{escape(flag.detail)}", soft_wrap=True, highlight=False)
    no_verdict = sum(1 for c in report.claims if c.verdict is None)
    console.print(f"{len(report.claims)} registry claim(s), {no_verdict} without a consensus; "
                  f"{len(flagged)} reproduction(s) flagged; wrote "
                  f"{escape(str(RunPaths(run_dir).consensus))}", soft_wrap=True, highlight=False)
