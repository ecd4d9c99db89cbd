"""The `judging` command line: thin commands, one per stage, each re-runnable from stored artifacts."""

from __future__ import annotations

import json
from collections import Counter
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.logging import RichHandler
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table

from .clitools import console, err_console, friendly_errors
from .measure import MeasureOptions
from .signals import DEFAULT_MAX_PIXELS, DEFAULT_SIZE

F = TypeVar("F", bound=Callable[..., Any])


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-v", "--verbose", is_flag=True, help="Log more (warnings are always shown).")
@click.version_option(package_name="judging")
def main(verbose: bool) -> None:
    """Rubric-based, AI-then-human judging of claims reproduced from ML papers."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s",
                        handlers=[RichHandler(console=err_console, show_path=False,
                                              show_time=False)])


def _rubrics_dir_option(func: F) -> F:
    return click.option("--rubrics-dir", type=click.Path(path_type=Path, file_okay=False),
                        envvar="JUDGING_RUBRICS_DIR", default=None,
                        help="Folder of versioned rubrics [env JUDGING_RUBRICS_DIR; default: the "
                             "checkout's rubrics/].")(func)


# --- run -------------------------------------------------------------------------------------


def _parse_price(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
                 ) -> dict[str, tuple[float, float]]:
    prices = {}
    for value in values:
        model, _, amounts = value.partition("=")
        try:
            input_price, output_price = (float(x) for x in amounts.split(":"))
        except ValueError:
            raise click.BadParameter(f"{value!r}: use MODEL=INPUT:OUTPUT (USD per million "
                                     f"tokens), e.g. gpt-4.1-mini=0.4:1.6") from None
        prices[model] = (input_price, output_price)
    return prices


@main.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Run directory (default runs/<run-id>); an existing one is resumed.")
@click.option("--claims", "registry", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              default=None, help="The organizers' claim registry (YAML, JSON or JSONL).")
@click.option("--rubric", "rubrics", multiple=True,
              help="ID@VERSION, ID (newest published) or a YAML file; repeatable. Default: the "
                   "newest published version of every rubric.")
@click.option("--judge", "judges", multiple=True,
              help="Judge spec, repeatable: 'offline' or 'openai:MODEL' [env JUDGING_JUDGE; "
                   "default offline]. Several judges form a panel.")
@click.option("--samples", type=click.IntRange(1, 50), default=1, show_default=True,
              help="Answers per LLM judge and claim (aggregated: majority / median).")
@click.option("--swap", is_flag=True,
              help="LLM judges also see the figures in swapped order (position-bias check).")
@click.option("--concurrency", type=click.IntRange(1, 512), default=8, show_default=True,
              help="Judge calls in flight at once.")
@click.option("--estimate", is_flag=True,
              help="Print the calls, tokens and cost the run would need, send nothing, exit.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None,
              help="USD budget: no new LLM call starts once it is spent; the rest is recorded "
                   "as unscored (reason: budget) and a rerun picks it up.")
@click.option("--price", "prices", multiple=True, callback=_parse_price,
              help="MODEL=INPUT:OUTPUT, USD per million tokens (adds to the built-in OpenAI "
                   "prices and JUDGING_PRICES); repeatable.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", default=None, show_envvar=True,
              help="OpenAI-compatible endpoint (OpenAI, HF Inference Providers, vLLM, llama.cpp, "
                   "Ollama).")
@click.option("--api-key", envvar="OPENAI_API_KEY", default=None, show_envvar=True,
              help="API key for the endpoint (never recorded).")
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(16, 100_000), default=2000, show_default=True,
              help="Answer length limit per call.")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds per call attempt.")
@click.option("--max-retries", type=click.IntRange(0, 20), default=4, show_default=True,
              help="Retries of transient failures (429 with Retry-After, 5xx, timeouts, dropped "
                   "connections); other 4xx are not retried.")
@click.option("--image-detail", type=click.Choice(["low", "high", "auto"]), default="low",
              show_default=True, help="Detail level of the figures sent to LLM judges.")
@click.option("--no-images", is_flag=True,
              help="Send no images (servers without vision: the judge sees the signals only).")
@click.option("--response-format",
              type=click.Choice(["auto", "json_schema", "json_object_schema", "json_object"]),
              default="auto", show_default=True,
              help="Structured outputs; 'auto' falls back to JSON mode when a server refuses.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
              envvar="JUDGING_CACHE_DIR", default=None, show_envvar=True,
              help="LLM answer cache [default ~/.cache/judging/answers].")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM answer cache.")
@click.option("--image-size", type=click.IntRange(64, 4096), default=DEFAULT_SIZE,
              show_default=True, help="Long side, in pixels, figures are compared at.")
@click.option("--max-pixels", type=click.IntRange(1), default=DEFAULT_MAX_PIXELS,
              show_default=True, help="Larger images are refused before decoding.")
@_rubrics_dir_option
@friendly_errors
def run(sources: tuple[str, ...], out: Path | None, registry: Path | None,
        rubrics: tuple[str, ...], judges: tuple[str, ...], samples: int, swap: bool,
        concurrency: int, estimate: bool, max_cost: float | None,
        prices: dict[str, tuple[float, float]], base_url: str | None, api_key: str | None,
        temperature: float, max_tokens: int, timeout: float, max_retries: int, image_detail: str,
        no_images: bool, response_format: str, cache_dir: Path | None, no_cache: bool,
        image_size: int, max_pixels: int, rubrics_dir: Path | None) -> None:
    """Judge the claims of one or more submissions.

    SOURCE is a submission folder (with submission.yaml), a folder of such folders, or a Hugging
    Face repo: hf://spaces/OWNER/NAME or hf://datasets/OWNER/NAME[@REV][/SUBFOLDER].
    """
    import asyncio
    import os

    from .judges.llm import LLMOptions
    from .pipeline import RunRequest, Runner
    from .store import new_run_id

    judge_specs = list(judges) or [os.environ.get("JUDGING_JUDGE") or "offline"]
    out = out or Path("runs") / new_run_id()
    llm = LLMOptions(base_url=base_url or None, api_key=api_key or None, temperature=temperature,
                     max_tokens=max_tokens, timeout=timeout, max_retries=max_retries,
                     images=not no_images, image_detail=image_detail,  # type: ignore[arg-type]
                     response_format=response_format,  # type: ignore[arg-type]
                     cache_dir=cache_dir, use_cache=not no_cache, max_cost=max_cost,
                     prices=prices)
    request = RunRequest(sources=list(sources), out=out, registry=registry, rubrics=list(rubrics),
                         judges=judge_specs, samples=samples, swap=swap, concurrency=concurrency,
                         measure=MeasureOptions(image_size=image_size, max_pixels=max_pixels),
                         rubrics_dir=rubrics_dir, llm=llm)
    if estimate:
        _print_estimate(asyncio.run(Runner(request).estimate()))
        return
    with Progress(TextColumn("[bold]judging"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err_console,
                  transient=False) as progress:
        task = progress.add_task("judging", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        runner = Runner(request, on_progress=on_progress)
        result = asyncio.run(runner.run())
    from .report import summary_rows

    _print_summary(summary_rows(runner.store.latest()))
    console.print(f"run [bold]{result.run_id}[/] in {escape(str(result.root))}: {result.written} "
                  f"new judgment line(s), {result.skipped} already done (resumed)", soft_wrap=True)
    if runner.budget is not None:
        console.print(f"spent ${runner.budget.spent:.4f} of the ${runner.budget.limit:.4f} "
                      f"budget", soft_wrap=True)
    if result.integrity is not None and result.integrity.pairs:
        kinds = Counter(pair.kind.replace("_", " ") for pair in result.integrity.pairs)
        console.print("[bold yellow]integrity:[/] " + ", ".join(
            f"{n} {kind} pair(s) across submissions" for kind, n in sorted(kinds.items()))
            + f" (flagged on both sides; see {result.root / 'integrity.json'})",
            soft_wrap=True)
    for error in result.source_errors:
        err_console.print(f"[bold red]source error:[/] {escape(error)}", highlight=False,
                          soft_wrap=True)
    if result.failed:
        sys.exit(1)


def _print_estimate(rows: list) -> None:
    table = Table(title="estimate (nothing was sent)")
    table.add_column("judge", no_wrap=True)
    for column in ("calls", "cached", "local", "prompt tokens", "completion tokens",
                   "cost (USD)"):
        table.add_column(column, justify="right")
    for row in rows:
        cost = f"{row.cost_usd:.4f}" if row.priced else "unknown (no price)"
        table.add_row(row.judge, str(row.calls), str(row.cached), str(row.local),
                      f"{row.prompt_tokens:,}", f"{row.completion_tokens:,}", cost)
    console.print(table)
    console.print("tokens: about 4 characters a token, images at OpenAI's published rate, "
                  "150 answer tokens per criterion", soft_wrap=True)


def _print_summary(rows: list[dict[str, str]]) -> None:
    if not rows:
        console.print("no judgments")
        return
    table = Table(title="judgments (outcome score (coverage) per rubric)", show_lines=False)
    for column in rows[0]:
        table.add_column(column, overflow="fold")
    colours = {"pass": "green", "fail": "red", "incomplete": "yellow", "error": "bold red"}
    for row in rows:
        cells = []
        for value in row.values():
            colour = colours.get(value.split(" ")[0])
            cells.append(f"[{colour}]{escape(value)}[/]" if colour else escape(value))
        table.add_row(*cells)
    console.print(table)


# --- report ----------------------------------------------------------------------------------


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the HTML (default RUN_DIR/report.html).")
@_rubrics_dir_option
@friendly_errors
def report(run_dir: Path, out: Path | None, rubrics_dir: Path | None) -> None:
    """Write report.html: per claim the figures side by side, the signals and every answer."""
    from .report import write_report

    path = write_report(run_dir, out=out, rubrics_dir=rubrics_dir)
    console.print(f"report: {path}")


# --- calibrate, resolve, leaderboard ------------------------------------------------------


@main.command()
@click.argument("run_dir", required=False,
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Labels file (default RUN_DIR/labels.jsonl from review pull).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              envvar="JUDGING_CALIBRATION_DIR", default=Path("calibration"), show_default=True,
              help="Where artifacts/ and reports/ go [env JUDGING_CALIBRATION_DIR].")
@click.option("--judge", "judges", multiple=True, help="Only these judges (repeatable).")
@click.option("--include-anchored", is_flag=True,
              help="Also count labels from reviewers who saw the AI's answers (anchored).")
@click.option("--min-support", type=click.IntRange(1), default=50, show_default=True)
@click.option("--min-coverage", type=click.FloatRange(0, 1), default=0.9, show_default=True)
@click.option("--floor", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Lowest acceptable lower bound of the pass-class F1 interval.")
@click.option("--bootstrap", type=click.IntRange(100), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--table", "table", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Calibrate on a label table (CSV/JSONL) instead of a run.")
@click.option("--judge-column", default=None, help="--table: the judge's column.")
@click.option("--human-columns", default=None, help="--table: comma-separated human columns.")
@click.option("--compare", default=None,
              help="--table: a second judge column beside the first. RUN_DIR: 'A,B', two judge "
                   "specs or two rubric versions (id@version) side by side on the same claims.")
@click.option("--ordinal", is_flag=True, help="--table: labels are ordered (weighted kappa).")
@click.option("--order", default=None, help="--table: the label order, comma-separated.")
@_rubrics_dir_option
@friendly_errors
def calibrate(run_dir: Path | None, labels_path: Path | None, out: Path, judges: tuple[str, ...],
              include_anchored: bool, min_support: int, min_coverage: float, floor: float,
              bootstrap: int, seed: int, table: Path | None, judge_column: str | None,
              human_columns: str | None, compare: str | None, ordinal: bool,
              order: str | None, rubrics_dir: Path | None) -> None:
    """How far each AI judge agrees with people, per criterion: metrics, trust decisions, reports.

    With RUN_DIR: joins the run's judgments with its labels (blind ones by default) and writes
    calibration/artifacts/RUBRIC@VERSION/JUDGE.json and calibration/reports/... . With --table:
    agreement on any table of per-item labels (gold = the human majority).
    """
    from .calibrate import TrustOptions, calibrate_run, calibrate_table

    if table is not None:
        if not judge_column or not human_columns:
            raise click.UsageError("--table needs --judge-column and --human-columns")
        report = calibrate_table(table, judge_column=judge_column,
                                 human_columns=[c.strip() for c in human_columns.split(",")],
                                 compare=compare, ordinal=ordinal,
                                 order=order.split(",") if order else None)
        _print_table_report(report)
        return
    if run_dir is None:
        raise click.UsageError("give RUN_DIR, or --table FILE")
    options = TrustOptions(min_support=min_support, min_coverage=min_coverage, floor=floor,
                           bootstrap=bootstrap, seed=seed, include_anchored=include_anchored)
    results = calibrate_run(run_dir, labels_path=labels_path, out=out, options=options,
                            judges=list(judges) or None, rubrics_dir=rubrics_dir)
    for result in results:
        _print_calibration(result)
    if compare:
        from .calibrate import compare_run

        left, _, right = compare.partition(",")
        if not right:
            raise click.UsageError("--compare with RUN_DIR takes two specs: A,B")
        table = Table(title=f"A = {left} vs B = {right} (pass/fail, same claims)")
        for column in ("on", "criterion", "both", "agree", "kappa", "F1 A", "F1 B"):
            table.add_column(column)
        for row in compare_run(results, run_dir, left.strip(), right.strip()):
            table.add_row(row.group, row.criterion, str(row.both), _num(row.agreement, 2),
                          _num(row.kappa, 2), _num(row.left_f1, 2), _num(row.right_f1, 2))
        console.print(table)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _print_calibration(result) -> None:
    artifact = result.artifact
    source = artifact.labels.source
    table = Table(title=f"{artifact.judge} on {artifact.rubric} — {artifact.labels.used} "
                        f"{source} label(s)"
                        f"{'' if artifact.labels.blind_only else ', anchored included'}")
    for column in ("criterion", "decision", "n", "coverage", "F1 [95%]", "kappa", "humans α",
                   "threshold", "saved"):
        table.add_column(column)
    for c in [*artifact.criteria, *([artifact.pooled] if artifact.pooled else [])]:
        interval = "" if not c.f1_interval else \
            f" [{c.f1_interval[0]:.2f}, {c.f1_interval[1]:.2f}]"
        table.add_row(c.criterion,
                      "[green]trusted[/]" if c.decision == "trusted" else "[yellow]needs humans[/]",
                      str(c.support), _num(c.coverage, 2), _num(c.f1, 2) + interval,
                      _num(c.kappa, 2), _num(c.humans.alpha if c.humans else None, 2),
                      _num(c.confidence_threshold, 2), _num(c.work_saved, 2))
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
    for column in ("judge", "n", "accuracy", "macro P", "macro R", "macro F1", "kappa",
                   "mean κ with each human"):
        table.add_column(column)
    for column, m in report.judges.items():
        table.add_row(column, str(m.n), _num(m.accuracy, 4), _num(m.macro_precision, 4),
                      _num(m.macro_recall, 4), _num(m.macro_f1, 4),
                      _num(m.weighted_kappa if m.weighted_kappa is not None else m.kappa, 3),
                      _num(report.judge_human_kappa.get(column), 3))
    console.print(table)
    pairs = ", ".join(f"{pair} {_num(k, 3)}" for pair, k in report.human_kappa.items())
    console.print(f"human vs human: kappa {pairs}; Krippendorff's alpha {_num(report.alpha, 3)}",
                  soft_wrap=True)
    if report.between_judges:
        console.print(f"between the two judges: accuracy "
                      f"{_num(report.between_judges['accuracy'], 4)}, kappa "
                      f"{_num(report.between_judges['kappa'], 3)}", soft_wrap=True)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Labels file (default RUN_DIR/labels.jsonl).")
@click.option("--calibration", "calibration_dir", type=click.Path(path_type=Path,
              file_okay=False), envvar="JUDGING_CALIBRATION_DIR", default=None,
              help="Folder of calibration artifacts [default calibration/].")
@_rubrics_dir_option
@friendly_errors
def resolve(run_dir: Path, labels_path: Path | None, calibration_dir: Path | None,
            rubrics_dir: Path | None) -> None:
    """Final decisions: human majority, else trusted AI, else pending review.

    Writes RUN_DIR/decisions.jsonl (per claim and rubric, per criterion, who decided) and
    RUN_DIR/final.jsonl (per claim: outcome and whether the participant's verdict is upheld).
    """
    from collections import Counter

    from .resolve import resolve_run

    decisions, finals = resolve_run(run_dir, labels_path=labels_path,
                                    calibration_dir=calibration_dir, rubrics_dir=rubrics_dir)
    outcomes = Counter(f.outcome for f in finals)
    upheld = Counter(f.upheld for f in finals)
    deciders = Counter(a.decided_by or "pending" for d in decisions for a in d.answers
                       if a.status != "not_applicable")
    console.print(f"{len(finals)} claim(s): " + ", ".join(f"{n} {k}" for k, n in
                                                         sorted(outcomes.items())),
                  soft_wrap=True)
    console.print("verdict upheld: " + ", ".join(f"{n} {k}" for k, n in sorted(upheld.items())),
                  soft_wrap=True)
    console.print("criteria decided by: " + ", ".join(f"{n} {k}" for k, n in
                                                      sorted(deciders.items())), soft_wrap=True)
    console.print(f"wrote {run_dir / 'decisions.jsonl'} and {run_dir / 'final.jsonl'}",
                  soft_wrap=True)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@friendly_errors
def leaderboard(run_dir: Path) -> None:
    """Per submission and per paper: claims judged, passed, failed, pending (CSV and HTML)."""
    from .resolve import write_leaderboard

    for path in write_leaderboard(run_dir):
        console.print(f"wrote {path}", soft_wrap=True)


# --- similarity ------------------------------------------------------------------------------


@main.command()
@click.argument("published", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.argument("reproduced", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the signals as JSON.")
@click.option("--size", type=click.IntRange(64, 4096), default=DEFAULT_SIZE, show_default=True)
@click.option("--diff", "diff_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Also write the diff image here (PNG).")
@click.option("--max-pixels", type=click.IntRange(1), default=DEFAULT_MAX_PIXELS, show_default=True)
@friendly_errors
def similarity(published: Path, reproduced: Path, as_json: bool, size: int,
               diff_path: Path | None, max_pixels: int) -> None:
    """Pixel signals of a published vs a reproduced figure."""
    from dataclasses import asdict

    from .hashing import file_sha256
    from .signals import CATALOGUE, compare_figures, load_image

    comparison = compare_figures(load_image(published, max_pixels=max_pixels),
                                 load_image(reproduced, max_pixels=max_pixels), size=size,
                                 same_bytes=file_sha256(published) == file_sha256(reproduced))
    # Catalogued signals only (the measures behind the copy flag are not signals of their own).
    values = {name: value for name, value in asdict(comparison.signals).items()
              if f"pixel.{name}" in CATALOGUE}
    if diff_path is not None:
        comparison.diff.save(diff_path, format="PNG")
    if as_json:
        click.echo(json.dumps({f"pixel.{k}": v for k, v in values.items()}, indent=2))
        return
    table = Table(title=f"{published.name} vs {reproduced.name}")
    table.add_column("signal")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    for name, value in values.items():
        shown = "absent" if value is None else (str(value) if isinstance(value, bool)
                                               else f"{value:.4f}")
        table.add_row(f"pixel.{name}", shown, CATALOGUE[f"pixel.{name}"].description)
    console.print(table)
    if diff_path is not None:
        console.print(f"diff image: {diff_path}")


@main.command()
@click.argument("figure", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.argument("reproduced", required=False,
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the reading (and signals) as JSON.")
@click.option("--overlay", "overlay_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="With two figures: write the overlay of both readings (PNG).")
@click.option("--max-pixels", type=click.IntRange(1), default=DEFAULT_MAX_PIXELS, show_default=True)
@friendly_errors
def chart(figure: Path, reproduced: Path | None, as_json: bool, overlay_path: Path | None,
          max_pixels: int) -> None:
    """Read the plotted data back from a chart; with a second chart, the chart.* signals."""
    from .signals import CATALOGUE, load_image
    from .signals.chart import compare_charts, read_chart, render_overlay

    readings = [read_chart(load_image(path, max_pixels=max_pixels))
                for path in [figure] + ([reproduced] if reproduced is not None else [])]
    comparison = compare_charts(*readings) if len(readings) == 2 else None
    if overlay_path is not None:
        if comparison is None:
            raise click.UsageError("--overlay needs two figures")
        image = render_overlay(*readings, comparison)
        if image is None:
            raise click.ClickException("neither chart could be read: no overlay written")
        image.save(overlay_path, format="PNG")
    described = [_describe_reading(r) for r in readings]
    if as_json:
        out: dict = {"published" if comparison else "chart": described[0]}
        if comparison is not None:
            out["reproduced"] = described[1]
            out["signals"] = comparison.signals
            out["absent"] = comparison.reasons
        click.echo(json.dumps(out, indent=2))
        return
    for path, reading in zip([figure, reproduced], described):
        console.print(f"[bold]{path.name}[/]: " + ("readable" if reading["readable"] else
                                                   f"unreadable ({reading['reason']})"))
        for n, panel in enumerate(reading["panels"], 1):
            for name in ("x", "y"):
                axis = panel[name]
                console.print(f"  panel {n} {name}: " + (
                    "unreadable" if axis is None else
                    f"{axis['scale']} {axis['from']:.4g} .. {axis['to']:.4g} "
                    f"(ticks {', '.join(axis['ticks'])})"))
            for series in panel["series"]:
                console.print(f"  panel {n} series {series['name'] or '(no legend)'}: "
                              f"{series['kind']} {series['style']}, {series['points']} points, "
                              f"confidence {series['confidence']:.2f}")
            for problem in panel["problems"]:
                console.print(f"  panel {n}: {problem}")
    if comparison is not None:
        table = Table(title=f"{figure.name} vs {reproduced.name}")
        for column in ("signal", "value", "meaning"):
            table.add_column(column, justify="right" if column == "value" else "left")
        for name, value in comparison.signals.items():
            shown = (f"absent ({comparison.reasons.get(name, '')})" if value is None
                     else str(value).lower() if isinstance(value, bool) else f"{value:.4f}")
            table.add_row(name, shown, CATALOGUE[name].description)
        console.print(table)
    if overlay_path is not None:
        console.print(f"overlay image: {overlay_path}")


def _describe_reading(reading) -> dict:
    def axis(a):
        return None if a is None else {"scale": a.scale, "from": a.data_range[0],
                                       "to": a.data_range[1], "confidence": a.confidence,
                                       "ticks": [t.text for t in a.ticks]}

    return {"readable": reading.readable, "reason": reading.reason, "panels": [
        {"bbox": list(p.bbox), "x": axis(p.x), "y": axis(p.y), "legend": p.legend,
         "problems": p.problems,
         "series": [{"name": s.name, "style": s.style, "kind": s.kind, "points": len(s.points),
                     "confidence": s.confidence, "x_units": s.x_units, "y_units": s.y_units,
                     "data": [[round(float(x), 6), round(float(y), 6)]
                              for x, y in s.points[:: max(1, len(s.points) // 50)]]}
                    for s in p.series]} for p in reading.panels]}


# --- rubrics ---------------------------------------------------------------------------------


@main.group()
def rubric() -> None:
    """List, validate, show, diff and lock versioned rubrics."""


def _library(rubrics_dir: Path | None):
    from .rubrics import RubricLibrary
    return RubricLibrary(rubrics_dir)


@rubric.command("list")
@_rubrics_dir_option
@friendly_errors
def rubric_list(rubrics_dir: Path | None) -> None:
    """Every rubric version, published or draft, with its hash."""
    from .rubrics import RubricError

    library = _library(rubrics_dir)
    table = Table(title=f"rubrics in {library.root}")
    for column in ("rubric", "status", "applies to", "criteria", "hash"):
        table.add_column(column)
    for entry in library.entries():
        try:
            loaded = library.load(entry.ref_name)
            table.add_row(entry.ref_name, entry.status.value, loaded.applies_to,
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
    from .rubrics import RubricError, load_rubric_file

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
@_rubrics_dir_option
@friendly_errors
def rubric_show(ref: str, as_json: bool, rubrics_dir: Path | None) -> None:
    """Show ID@VERSION (or the newest published ID)."""
    from .rubrics import resolve_rubric

    loaded = resolve_rubric(ref, _library(rubrics_dir))
    if as_json:
        click.echo(json.dumps(loaded.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]{loaded.ref_name}[/] — {loaded.title}  ({loaded.content_hash()[:19]})")
    console.print(f"applies to: {loaded.applies_to} claims; pass at {loaded.pass_threshold:g} "
                  f"(weighted mean)\n")
    console.print(loaded.instructions.strip() + "\n", highlight=False)
    for criterion in loaded.criteria:
        tags = [criterion.scale.value, f"weight {criterion.weight:g}"]
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
@_rubrics_dir_option
@friendly_errors
def rubric_diff(old: str, new: str, rubrics_dir: Path | None) -> None:
    """What changed between two rubric versions."""
    from .rubrics import diff_rubrics, resolve_rubric

    library = _library(rubrics_dir)
    for line in diff_rubrics(resolve_rubric(old, library), resolve_rubric(new, library)):
        click.echo(line)


@rubric.command("lock")
@click.argument("refs", nargs=-1)
@_rubrics_dir_option
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


from .review.cli import review  # noqa: E402

main.add_command(review)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--repo", "repo_id", required=True, metavar="ORG/NAME",
              help="The Hugging Face dataset repo to create or update.")
@click.option("--private", is_flag=True, help="Create the dataset private (an existing repo "
              "keeps its visibility).")
@click.option("--dry-run", is_flag=True, help="Stage the dataset and list what would be "
              "uploaded; send nothing.")
@click.option("--calibration", "calibration_dir", type=click.Path(path_type=Path,
              file_okay=False), envvar="JUDGING_CALIBRATION_DIR", default=None,
              help="Folder of calibration artifacts, summarised in the card [default "
                   "calibration/].")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Staging folder, rebuilt each time [default RUN_DIR/publish/].")
@click.option("--license", "license_", default="cc-by-4.0", show_default=True,
              help="License in the dataset card (a Hub license id).")
@friendly_errors
def publish(run_dir: Path, repo_id: str, private: bool, dry_run: bool,
            calibration_dir: Path | None, out: Path | None, license_: str) -> None:
    """Publish a resolved run's final decisions as a Hugging Face dataset.

    Stages data/claims, data/decisions and data/judgments (Parquet and JSON lines) and a dataset
    card, with emails, tokens and home paths scrubbed, local paths dropped and reviewers
    pseudonymised; then uploads them (HF_TOKEN or `hf auth login`). Needs `judging resolve`.
    """
    from .publish import describe, publish as publish_run

    result = publish_run(run_dir, repo_id, private=private, dry_run=dry_run,
                         calibration_dir=calibration_dir, out=out, license=license_)
    lines = describe(result.staged, repo_id, private=private)
    if dry_run:
        for line in lines:
            console.print(escape(line), highlight=False, soft_wrap=True)
        console.print("dry run: nothing was uploaded", highlight=False)
        return
    for line in lines[-2:]:
        console.print(escape(line.strip()), highlight=False, soft_wrap=True)
    console.print(f"published {len(result.staged.files)} file(s) to {escape(str(result.url))}",
                  highlight=False, soft_wrap=True)


if __name__ == "__main__":  # pragma: no cover
    main()
