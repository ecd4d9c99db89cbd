"""`judging report RUN_DIR`."""

from __future__ import annotations

from pathlib import Path

import click

from judging.cli.options import (
    console,
    friendly_errors,
    rubrics_dir_option,
)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the HTML (default RUN_DIR/report.html).")
@click.option("--paged/--single-page", default=None,
              help="An index and pages of 50 claims, or one page (default: paged above 500 "
                   "claims).")
@rubrics_dir_option
@friendly_errors
def report(run_dir: Path, out: Path | None, paged: bool | None, rubrics_dir: Path | None
           ) -> None:
    """Write report.html: per claim the figures side by side, the signals and every answer.

    A large run gets a paged report: report.html is an index (filters, claim search) and
    report_pages/ holds its data and the claim pages.
    """
    from judging.report import write_html_report

    path = write_html_report(run_dir, out=out, rubrics_dir=rubrics_dir, paged=paged)
    console.print(f"report: {path}")
