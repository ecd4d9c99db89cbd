"""`judging compare`: the run's own verdicts beside another judge's on the same claims."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from judging.cli.options import console, friendly_errors


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--reference", "reference", required=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="Another judge's verdicts: a table (CSV/JSONL: submission, claim index or "
                   "text, verdict) or the ICML verdicts.json shape.")
@click.option("--submission-column", default=None,
              help="Table: the submission column [default: space_id, submission_id, ...].")
@click.option("--index-column", default=None,
              help="Table: the claim index column [default: claim_idx, claim_index, index].")
@click.option("--text-column", default=None,
              help="Table: the claim text column [default: claim, claim_text, text, statement].")
@click.option("--verdict-column", default=None,
              help="Table: the verdict column [default: verdict, archived, label].")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              envvar="JUDGING_CALIBRATION_DIR", default=Path("calibration"), show_default=True,
              help="Where reports/ go [env JUDGING_CALIBRATION_DIR].")
@friendly_errors
def compare(run_dir: Path, reference: Path, submission_column: str | None,
            index_column: str | None, text_column: str | None, verdict_column: str | None,
            out: Path) -> None:
    """Agreement of the run's own verdicts (final, else the AI's) with another judge's.

    Matches reference claims to the run's by submission and claim index, else by text; reports
    agreement, Cohen's kappa, Krippendorff's alpha and the confusion over verified, falsified,
    toy and inconclusive, beside a chance row.
    """
    from judging.calibrate.reference import compare_reference, write_compare_report
    from judging.rundir import CalibrationPaths

    result = compare_reference(run_dir, reference, submission_column=submission_column,
                               index_column=index_column, text_column=text_column,
                               verdict_column=verdict_column)
    m = result.metrics
    table = Table(title=f"ours vs {reference.name}: {len(result.matched)} matched of "
                        f"{result.reference_claims} reference verdicts")
    for column in ("n", "agreement [95%]", "kappa [95%]", "alpha", "chance agreement",
                   "ours from"):
        table.add_column(column)
    if m is not None and result.intervals is not None:
        table.add_row(str(m.n), result.intervals.show(m.accuracy, "accuracy"),
                      result.intervals.show(m.kappa, "kappa"),
                      "-" if result.alpha is None else f"{result.alpha:.3f}",
                      f"{result.baseline.accuracy:.3f}" if result.baseline else "-",
                      ", ".join(f"{n} {s}" for s, n in sorted(result.sources.items())))
    console.print(table)
    if result.unmatched_reference:
        console.print(f"{len(result.unmatched_reference)} reference verdict(s) left out (listed "
                      f"in the report), e.g. {result.unmatched_reference[0]}", soft_wrap=True)
    folder = write_compare_report(result, CalibrationPaths(out).table_report_dir(
        f"compare-{reference.stem}"))
    console.print(f"report: {folder / 'report.md'} (report.json)", soft_wrap=True)
