"""`judging calibrate`: run mode, --table mode and --compare."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from judging.cli.options import (
    SectionedCommand,
    console,
    endpoint_options,
    friendly_errors,
    option_section,
    rubrics_dir_option,
)


@click.command(cls=SectionedCommand)
@click.argument("run_dir", required=False,
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Labels file (default RUN_DIR/labels.jsonl from review pull).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              envvar="JUDGING_CALIBRATION_DIR", default=Path("calibration"), show_default=True,
              help="Where artifacts/ and reports/ go [env JUDGING_CALIBRATION_DIR].")
@click.option("--judge", "judges", multiple=True, help="Only these judges (repeatable).")
@click.option("--compare", default=None,
              help="--table: a second judge column beside the first. RUN_DIR: 'A,B', two judge "
                   "specs or two rubric versions (id@version) side by side on the same claims.")
@option_section("Trust decisions",
    click.option("--include-anchored", is_flag=True,
                  help="Also count labels from reviewers who saw the AI's answers (anchored)."),
    click.option("--min-support", type=click.IntRange(1), default=50, show_default=True),
    click.option("--min-coverage", type=click.FloatRange(0, 1), default=0.9, show_default=True),
    click.option("--floor", type=click.FloatRange(0, 1), default=0.8, show_default=True,
                  help="Lowest acceptable lower bound of the pass-class F1 interval."),
    click.option("--bootstrap", type=click.IntRange(100), default=1000, show_default=True),
    click.option("--seed", type=int, default=0, show_default=True),
)
@option_section("Label tables (--table)",
    click.option("--table", "table", type=click.Path(path_type=Path, dir_okay=False),
                  default=None, help="Calibrate on a label table (CSV/JSONL) instead of a run."),
    click.option("--judge-column", default=None, help="--table: the judge's column."),
    click.option("--human-columns", default=None,
                  help="--table: comma-separated human columns."),
    click.option("--ordinal", is_flag=True, help="--table: labels are ordered (weighted kappa)."),
    click.option("--order", default=None, help="--table: the label order, comma-separated."),
)
@option_section("Test-retest (--retest)",
    click.option("--retest", default=None,
                  help="--table: 'A,B', two columns of verdicts by the same judge on the same "
                       "input (test-retest agreement). RUN_DIR: N, re-judge a random sample of "
                       "N lines with the answer cache bypassed and measure the agreement with "
                       "the originals."),
    click.option("--cluster", default=None,
                  help="--table --retest: the column that groups items judged together (e.g. "
                       "space_id): the intervals resample those groups."),
    click.option("--against", default=None,
                  help="--table --retest: comma-separated columns to set against A (e.g. an "
                       "archived verdict)."),
    *endpoint_options("RUN_DIR --retest: the endpoint to re-judge with [default: the one "
                      "each line recorded].",
                      "RUN_DIR --retest: the endpoint's API key (used, never recorded)."),
    click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True,
                  help="RUN_DIR --retest: calls in flight."),
)
@rubrics_dir_option
@friendly_errors
def calibrate(run_dir: Path | None, labels_path: Path | None, out: Path, judges: tuple[str, ...],
              include_anchored: bool, min_support: int, min_coverage: float, floor: float,
              bootstrap: int, seed: int, table: Path | None, judge_column: str | None,
              human_columns: str | None, compare: str | None, ordinal: bool,
              order: str | None, retest: str | None, cluster: str | None,
              against: str | None, base_url: str | None, api_key: str | None,
              concurrency: int, rubrics_dir: Path | None) -> None:
    """How far each AI judge agrees with people, per criterion: metrics, trust decisions, reports.

    With RUN_DIR: joins the run's judgments with its labels (blind ones by default) and writes
    calibration/artifacts/RUBRIC@VERSION/JUDGE.json and calibration/reports/... . With --table:
    agreement on any table of per-item labels (gold = the human majority).
    """
    from judging.calibrate import (
        TrustOptions,
        calibrate_run,
        calibrate_table,
        write_table_report,
    )
    from judging.rundir import CalibrationPaths, RunPaths

    if table is not None and retest is not None:
        _table_retest(table, retest, cluster=cluster, against=against, order=order,
                      ordinal=ordinal, bootstrap=bootstrap, seed=seed, out=out)
        return
    if table is not None:
        if not judge_column or not human_columns:
            raise click.UsageError("--table needs --judge-column and --human-columns")
        report = calibrate_table(table, judge_column=judge_column,
                                 human_columns=[c.strip() for c in human_columns.split(",")],
                                 compare=compare, ordinal=ordinal,
                                 order=order.split(",") if order else None)
        folder = write_table_report(report, CalibrationPaths(out).table_report_dir(judge_column))
        _print_table_report(report)
        console.print(f"report: {folder / 'report.md'} (report.json, f1.png, confusion.png)",
                      soft_wrap=True)
        return
    if run_dir is None:
        raise click.UsageError("give RUN_DIR, or --table FILE")
    options = TrustOptions(min_support=min_support, min_coverage=min_coverage, floor=floor,
                           bootstrap=bootstrap, seed=seed, include_anchored=include_anchored)
    if retest is not None:
        if not retest.isdigit() or int(retest) < 1:
            raise click.UsageError("--retest with RUN_DIR takes a number of lines: N")
        labels_file = labels_path or RunPaths(run_dir).labels
        if not _run_retest(run_dir, int(retest), base_url=base_url, api_key=api_key,
                           concurrency=concurrency, judges=list(judges), seed=seed,
                           options=options, rubrics_dir=rubrics_dir, out=out,
                           labelled=labels_file.is_file()):
            return
    results = calibrate_run(run_dir, labels_path=labels_path, out=out, options=options,
                            judges=list(judges) or None, rubrics_dir=rubrics_dir)
    for result in results:
        _print_calibration(result)
    for skipped in results.skipped:
        console.print(f"not calibrated: {skipped.judge} on {skipped.rubric}: {skipped.reason} "
                      f"(its answers go to people)", soft_wrap=True)
    if compare:
        from judging.calibrate import compare_run

        left, _, right = compare.partition(",")
        if not right:
            raise click.UsageError("--compare with RUN_DIR takes two specs: A,B")
        table = Table(title=f"A = {left} vs B = {right} (pass/fail, same claims)")
        for column in ("on", "criterion", "both", "agree [95%]", "kappa [95%]", "F1 A", "F1 B"):
            table.add_column(column)
        for row in compare_run(results, run_dir, left.strip(), right.strip()):
            shown = row.intervals
            table.add_row(row.group, row.criterion, str(row.both),
                          shown.show(row.agreement, "accuracy", 2) if shown else "-",
                          shown.show(row.kappa, "kappa", 2) if shown else "-",
                          _num(row.left_f1, 2), _num(row.right_f1, 2))
        console.print(table)


def _run_retest(run_dir: Path, n: int, *, base_url: str | None, api_key: str | None,
                concurrency: int, judges: list[str], seed: int, options, rubrics_dir: Path | None,
                out: Path, labelled: bool) -> bool:
    """Re-judge n random lines, print the judge's agreement with itself per criterion and write
    it under reports/; True when the run has labels to calibrate on as well."""
    from judging.calibrate.retest import retest_run, retest_summary, write_retest_summary
    from judging.judges import LLMOptions

    done = retest_run(run_dir, n, llm=LLMOptions(base_url=base_url, api_key=api_key),
                      seed=seed, judges=judges or None, concurrency=concurrency,
                      rubrics_dir=rubrics_dir)
    console.print(f"re-judged {done.written} of {done.eligible} line(s) drawn at random (seed "
                  f"{seed}), the answer cache bypassed; appended to "
                  f"{run_dir / 'retests.jsonl'}"
                  + (f"; {done.different_request} sent another request than the original "
                     f"(the prompt or settings changed since) and are not compared"
                     if done.different_request else "")
                  + (f"; {done.failed} could not be answered" if done.failed else ""),
                  soft_wrap=True)
    summary = retest_summary(run_dir, n_resamples=options.bootstrap, seed=seed,
                             rubrics_dir=rubrics_dir)
    for (rubric, judge), rows in summary.items():
        table = Table(title=f"{judge} on {rubric} against itself")
        for column in ("criterion", "pairs", "changed", "agreement [95%]", "ceiling",
                       "alpha [95%]", "flips"):
            table.add_column(column)
        for criterion, r in rows.items():
            table.add_row(criterion, str(r.n), str(r.disagreements),
                          _figure(r.agreement, r.agreement_interval, r.n, 3),
                          _figure(r.ceiling, None, r.n, 3),
                          _figure(r.alpha, r.alpha_interval, r.n, 3),
                          ", ".join(f"{k}: {v}" for k, v in r.flips.items()) or "none")
        console.print(table)
    folder = write_retest_summary(summary, out)
    console.print(f"retest report: {folder}", soft_wrap=True)
    if not labelled:
        console.print("no labels: the retest is reported alone (calibrate with labels to set it "
                      "beside the agreement with people)", soft_wrap=True)
    return labelled


def _span(interval) -> str:
    return "" if not interval else f" [{interval[0]:.2f}, {interval[1]:.2f}]"


def _figure(value: float | None, interval, n: int | None, digits: int = 2) -> str:
    """A figure with its 95% interval, or "too few to say (n=…)" below the minimum of items an
    interval needs (a point from one or two items would claim a certainty they do not give)."""
    from judging.calibrate.metrics import too_few

    return too_few(n) or (_num(value, digits) + _span(interval))


def _table_retest(table: Path, retest: str, *, cluster: str | None, against: str | None,
                  order: str | None, ordinal: bool, bootstrap: int, seed: int, out: Path) -> None:
    from judging.calibrate.metrics import too_few
    from judging.calibrate.retest import retest_table, write_retest_report
    from judging.rundir import CalibrationPaths

    first, _, second = retest.partition(",")
    if not first.strip() or not second.strip() or "," in second:
        raise click.UsageError("--retest with --table takes two columns: A,B")
    report = retest_table(table, first=first.strip(), second=second.strip(), cluster=cluster,
                          against=[c.strip() for c in against.split(",") if c.strip()]
                          if against else [],
                          order=order.split(",") if order else None, ordinal=ordinal,
                          n_resamples=bootstrap, seed=seed)
    r = report.retest
    title = (f"{table.name}: {r.n} items" + (f" in {r.clusters} {cluster}" if cluster else "")
             + f", {bootstrap} bootstrap resamples of {cluster or 'items'}")
    rich_table = Table(title=title)
    for column in ("pair", "n", "disagree", "disagreement [95%]", "alpha [95%]", "ratio [95%]"):
        rich_table.add_column(column)

    def span(value, interval, percent=False, n=None):
        show = (lambda v: f"{100 * v:.2f}%") if percent else (lambda v: f"{v:.4f}")
        if n is not None and (few := too_few(n)):
            return few
        if value is None:
            return "-"
        return show(value) + (f" [{show(interval[0])}, {show(interval[1])}]" if interval else "")

    rich_table.add_row(f"{report.first} vs {report.second}", str(r.n), str(r.disagreements),
                       span(r.disagreement, r.disagreement_interval, True, r.n),
                       span(r.alpha, r.alpha_interval, n=r.n), "1")
    for other in report.against:
        o = other.result
        rich_table.add_row(f"{report.first} vs {other.column}", str(o.n), str(o.disagreements),
                           span(o.disagreement, o.disagreement_interval, True, o.n),
                           span(o.alpha, o.alpha_interval, n=o.n),
                           span(other.ratio, other.ratio_interval))
    console.print(rich_table)
    console.print("flips " + ", ".join(f"{flip}: {n}" for flip, n in r.flips.items()),
                  soft_wrap=True)
    if cluster:
        stable = (r.clusters or 0) - len(r.cluster_disagreements)
        console.print(f"{stable} of {r.clusters} {cluster} fully stable; "
                      f"{len(r.cluster_disagreements)} carry the {r.disagreements} "
                      f"disagreements (listed in the report)", soft_wrap=True)
    folder = write_retest_report(report, CalibrationPaths(out).table_report_dir(
        f"retest-{report.first}-{report.second}"))
    console.print(f"report: {folder / 'report.md'} (report.json)", soft_wrap=True)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _print_calibration(result) -> None:
    from judging.calibrate.metrics import too_few

    artifact = result.artifact
    source = artifact.labels.source
    table = Table(title=f"{artifact.judge} on {artifact.rubric} — {artifact.labels.used} "
                        f"{source} label(s) of this rubric version"
                        f"{'' if artifact.labels.blind_only else ', anchored included'}")
    for column in ("criterion", "decision", "n", "coverage", "F1 (accuracy*) [95%]",
                   "TPR / TNR low", "kappa", "retest α", "humans α", "threshold", "saved"):
        table.add_column(column)
    for c in [*artifact.criteria, *([artifact.pooled] if artifact.pooled else [])]:
        categorical = c.scale == "categorical"
        value, found = (c.accuracy, c.accuracy_interval) if categorical else (c.f1, c.f1_interval)
        few = too_few(c.support) if c.support else None
        lows = "-" if categorical else \
            f"{_num(c.tpr_interval[0] if c.tpr_interval else None, 2)} / " \
            f"{_num(c.tnr_interval[0] if c.tnr_interval else None, 2)}"
        table.add_row(c.criterion,
                      "[green]trusted[/]" if c.decision == "trusted" else "[yellow]needs humans[/]",
                      str(c.support), _num(c.coverage, 2),
                      few or (("*" if categorical and value is not None else "")
                              + _num(value, 2) + _span(found)), lows,
                      "-" if few else _num(c.kappa, 2),
                      _num(c.retest.alpha if c.retest else None, 2),
                      _num(c.humans.alpha if c.humans else None, 2),
                      "-" if few else _num(c.confidence_threshold, 2),
                      "too few" if few and c.support else _num(c.work_saved, 2))
    console.print(table)
    if source == "construction":
        console.print("labels are construction labels (how the examples were built), not human "
                      "labels", soft_wrap=True)
    if result.stale:
        console.print(f"replaced a stale calibration: {result.stale}", soft_wrap=True)
    console.print(f"artifact: {result.artifact_path}\nreport:   {result.report_dir / 'report.md'}",
                  soft_wrap=True)


def _print_table_report(report) -> None:
    table = Table(title=f"{report.path.name}: {report.items} items, gold = human majority on "
                        f"{report.gold_items} ({report.ties} ties left out)")
    for column in ("judge", "n", "accuracy [95%]", "macro P", "macro R", "macro F1",
                   "kappa [95%]", "mean κ with each human"):
        table.add_column(column)
    for column, m in report.judges.items():
        shown = report.intervals[column]
        table.add_row(column, str(m.n), shown.show(m.accuracy, "accuracy", 4),
                      _num(m.macro_precision, 4), _num(m.macro_recall, 4), _num(m.macro_f1, 4),
                      shown.show(m.weighted_kappa if m.weighted_kappa is not None else m.kappa,
                                 "kappa"),
                      _num(report.judge_human_kappa.get(column), 3))
    console.print(table)
    pairs = ", ".join(f"{pair} {_num(k, 3)}" for pair, k in report.human_kappa.items())
    console.print(f"human vs human: kappa {pairs}; Krippendorff's alpha {_num(report.alpha, 3)}",
                  soft_wrap=True)
    if report.between_judges:
        console.print(f"between the two judges: accuracy "
                      f"{_num(report.between_judges['accuracy'], 4)}, kappa "
                      f"{_num(report.between_judges['kappa'], 3)}", soft_wrap=True)
