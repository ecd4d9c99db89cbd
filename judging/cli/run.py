"""`judging run SOURCE...`: the options of a run, then the runner with a progress bar."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from judging.cli.options import (
    SectionedCommand,
    console,
    download_limit_options,
    endpoint_options,
    err_console,
    friendly_errors,
    option_group,
    option_section,
    rubrics_dir_option,
    say_integrity,
)
from judging.engines import engine_names
from judging.figures.formats import DEFAULT_MAX_PIXELS, DEFAULT_SIZE


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


def _parse_shard(ctx: click.Context, param: click.Parameter, value: str | None):
    from judging.rundir import Shard

    if value is None:
        return None
    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _llm(*, extract: str | None, max_cost: float | None, prices: dict[str, tuple[float, float]],
         prices_file: Path | None, base_url: str | None, api_key: str | None,
         temperature: float, max_tokens: int, evidence_budget: int, timeout: float,
         max_retries: int, image_detail: str, no_images: bool, response_format: str,
         cache_dir: Path | None, no_cache: bool) -> LLMChoice:
    from judging.judges import LLMOptions

    return LLMChoice(extract=extract, options=LLMOptions(
        base_url=base_url or None, api_key=api_key or None, temperature=temperature,
        max_tokens=max_tokens, timeout=timeout, max_retries=max_retries,
        evidence_budget=evidence_budget, images=not no_images, image_detail=image_detail,  # type: ignore[arg-type]
        response_format=response_format,  # type: ignore[arg-type]
        cache_dir=cache_dir, use_cache=not no_cache, max_cost=max_cost, prices=prices,
        prices_file=prices_file))


@dataclass(frozen=True)
class LLMChoice:
    """The LLM options of a run: how LLM judges and the extractor call their endpoint."""

    options: Any
    """`judging.judges.LLMOptions` (imported when the command runs)."""
    extract: str | None


llm_options = option_group("llm", _llm,
    click.option("--extract", "extract", default=None, metavar="openai:MODEL|none",
                  help="Logbooks and Spaces: after the deterministic extractor, an LLM fills the "
                       "values, verdict, toy flag and scale note stated in prose, each kept only "
                       "when its verbatim quote is on the page and holds it (same endpoint, cache "
                       "and budget as the judges: --base-url/--api-key). Default: the first "
                       "openai:MODEL judge (none with the offline judge); 'none' turns it off."),
    click.option("--max-cost", type=click.FloatRange(min=0), default=None,
                  help="USD budget: no new LLM call starts once it is spent; the rest is recorded "
                       "as unscored (reason: budget) and a rerun picks it up."),
    click.option("--price", "prices", multiple=True, callback=_parse_price,
                  help="MODEL=INPUT:OUTPUT, USD per million tokens (adds to the built-in OpenAI "
                       "prices and JUDGING_PRICES); repeatable."),
    click.option("--prices-file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                  envvar="JUDGING_PRICES", default=None, show_envvar=True,
                  help="YAML prices per model ({model: {input: X, output: Y}}, USD per million "
                       "tokens)."),
    *endpoint_options("OpenAI-compatible endpoint (OpenAI, HF Inference Providers, vLLM, "
                      "llama.cpp, Ollama).", "API key for the endpoint (never recorded)."),
    click.option("--temperature", type=click.FloatRange(0, 2), default=0.0, show_default=True),
    click.option("--max-tokens", type=click.IntRange(16, 100_000), default=2000, show_default=True,
                  help="Answer length limit per call."),
    click.option("--evidence-budget", type=click.IntRange(2000), default=60_000,
                  show_default=True,
                  help="Characters of the participant's text one prompt carries at most; a "
                       "justification that does not fit is cut with a notice, the cut recorded, "
                       "and the verdict criteria that read it left unscored."),
    click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
                  help="Seconds per call attempt."),
    click.option("--max-retries", type=click.IntRange(0, 20), default=4, show_default=True,
                  help="Retries of transient failures (429 with Retry-After, 5xx, timeouts, "
                       "dropped connections); other 4xx are not retried."),
    click.option("--image-detail", type=click.Choice(["low", "high", "auto"]), default="low",
                  show_default=True, help="Detail level of the figures sent to LLM judges."),
    click.option("--no-images", is_flag=True,
                  help="Send no images (servers without vision: the judge sees the signals only)."),
    click.option("--response-format",
                  type=click.Choice(["auto", "json_schema", "json_object_schema", "json_object"]),
                  default="auto", show_default=True,
                  help="Structured outputs; 'auto' falls back to JSON mode when a server refuses."),
    click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
                  envvar="JUDGING_CACHE_DIR", default=None, show_envvar=True,
                  help="LLM answer cache [default ~/.cache/judging/answers]."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM answer cache."),
    title="LLM judges and extractor",
)


@dataclass(frozen=True)
class Measuring:
    """How figures are measured: the comparison's options, the measurement cache and the
    measuring processes."""

    image_size: int
    max_pixels: int
    measure_cache: Path | None
    measure_workers: int | None
    measure_timeout: float


measuring_options = option_group("measuring", Measuring,
    click.option("--image-size", type=click.IntRange(64, 4096), default=DEFAULT_SIZE,
                  show_default=True, help="Long side, in pixels, figures are compared at."),
    click.option("--max-pixels", type=click.IntRange(1), default=DEFAULT_MAX_PIXELS,
                  show_default=True, help="Larger images are refused before decoding."),
    click.option("--measure-cache", type=click.Path(path_type=Path, file_okay=False),
                  envvar="JUDGING_MEASURE_CACHE", default=None, show_envvar=True,
                  help="Measurement cache, shared by runs that name it "
                       "[default RUN_DIR/measurements]."),
    click.option("--measure-workers", type=click.IntRange(0, 256), default=None,
                  help="Processes measuring figures [default: one per core; 0: in this process]."),
    click.option("--measure-timeout", type=click.FloatRange(min=0, min_open=True), default=300.0,
                  show_default=True,
                  help="Seconds one figure claim's measurement may take; a claim that outlasts "
                       "it has its process stopped and gets an error line (a rerun measures it "
                       "again)."),
    title="Measuring figures",
)


@dataclass(frozen=True)
class Engine:
    """Where a run's claims are judged: here (one shard with --shard, or all), or as shards on
    a Ray cluster."""

    shard: Any
    """`--shard I/N`: a `judging.rundir.Shard`, or None."""
    engine: str
    address: str | None
    shard_count: int | None
    shard_output: str
    cpus_per_shard: float


engine_options = option_group("engine", Engine,
    click.option("--shard", "shard", default=None, metavar="I/N", callback=_parse_shard,
                  help="Judge only shard I of N (1..N): the claims whose key hashes to it "
                       "(SHA-256 of the claim key, the same on every machine); recorded in "
                       "run.json. Merge the shards' run directories with `judging merge`."),
    click.option("--engine", type=click.Choice(engine_names("run")), default="local",
                  show_default=True,
                  help="ray: run --shards N shards as tasks on a Ray cluster (the optional "
                       "'cluster' extra), each into OUT/shards/I-of-N, then merge them into OUT."),
    click.option("--address", default=None, metavar="ADDR",
                  help="--engine ray: the cluster (host:port of the head, or ray://host:10001) "
                       "[default: RAY_ADDRESS, else a Ray started on this machine]."),
    click.option("--shards", "shard_count", type=click.IntRange(1, 100_000), default=None,
                  help="--engine ray: how many shards (tasks) to run."),
    click.option("--shard-output", type=click.Choice(["shared", "driver"]), default="shared",
                  show_default=True,
                  help="--engine ray: 'shared': tasks write OUT/shards/I-of-N on a filesystem "
                       "every node sees; 'driver': tasks write a temporary directory on their "
                       "node and return it (a tar archive) to this machine."),
    click.option("--cpus-per-shard", type=click.FloatRange(min=0.01), default=1.0,
                  show_default=True, help="--engine ray: CPUs Ray reserves for each shard task."),
    title="Shards and engine",
)


def extract_spec(extract: str | None, judges: list[str]) -> str | None:
    """The LLM extractor of a run: as given, none for "none", else the first LLM judge's model
    (a run with an LLM judge reads prose values too; the offline judge's run stays offline): the
    first judge whose backend has an extractor (`judging.judges.BACKENDS`)."""
    if extract is not None:
        return None if extract.strip().lower() == "none" else extract
    from judging.judges import extracts  # (imported when the command runs)
    return next((spec for spec in judges if extracts(spec)), None)


@click.command(cls=SectionedCommand)
@click.argument("sources", nargs=-1, required=False)
@option_section("Sources",
    click.option("--discover", "discover", multiple=True, metavar="TAG",
                  help="Also judge every Hugging Face Space carrying this tag; repeatable: a "
                       "Space must carry all the tags (every page of the Hub's listing is read)."),
    click.option("--as-of", "as_of", default=None, metavar="DATETIME",
                  help="Judge each Hub source as it was at its last commit at or before this "
                       "ISO 8601 date-time (UTC when no zone is given; a date alone is 00:00 "
                       "that day); a Space with no commit by then is skipped with that reason."),
    click.option("--claims", "registry",
                  type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
                  help="The organizers' claim registry (YAML, JSON or JSONL)."),
)
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Run directory (default runs/<run-id>); an existing one is resumed.")
@click.option("--rubric", "rubrics", multiple=True,
              help="ID@VERSION, ID (newest published) or a YAML file; repeatable. Default: the "
                   "newest published version of every rubric.")
@click.option("--judge", "judges", multiple=True,
              help="Judge spec, repeatable: 'offline' or 'openai:MODEL' [env JUDGING_JUDGE; "
                   "default offline]. Several judges form a panel.")
@click.option("--samples", type=click.IntRange(1, 50), default=1, show_default=True,
              help="Answers per LLM judge and claim (aggregated: majority / median).")
@click.option("--swap/--no-swap", default=True, show_default=True,
              help="LLM judges see figure claims in both figure orders; an answer that changes "
                   "with the order is left unscored as a doubt (--no-swap: published first "
                   "only, half the calls).")
@click.option("--concurrency", type=click.IntRange(1, 512), default=8, show_default=True,
              help="Judge calls in flight at once.")
@click.option("--estimate", is_flag=True,
              help="Print the calls, tokens and cost the run would need, send nothing, exit.")
@download_limit_options
@llm_options
@measuring_options
@engine_options
@rubrics_dir_option
@friendly_errors
def run(sources: tuple[str, ...], discover: tuple[str, ...], as_of: str | None,
        out: Path | None, registry: Path | None, rubrics: tuple[str, ...],
        judges: tuple[str, ...], samples: int, swap: bool, concurrency: int, estimate: bool,
        download_limits: Any, llm: LLMChoice, measuring: Measuring, engine: Engine,
        rubrics_dir: Path | None) -> None:
    """Judge the claims of one or more submissions.

    SOURCE is a submission folder (submission.yaml, a Trackio logbook, or a free-form Space: a
    README.md with front matter and its reports), a folder of such folders, or a Hugging Face
    repo: hf://spaces/OWNER/NAME or hf://datasets/OWNER/NAME[@REV][/SUBFOLDER]. With
    --discover TAG, SOURCE may be left out. HF_TOKEN, when set, is sent to the Hub.

    An LLM judge's endpoint is checked before the first call; a run whose calls all fail, or
    that stops because they keep failing the same way, is `failed` (exit code 1).
    """
    import asyncio
    import os

    from judging.intake import parse_as_of
    from judging.run import MeasureOptions, Runner, RunRequest
    from judging.rundir import new_run_id

    if not sources and not discover:
        raise click.UsageError("give at least one SOURCE or --discover TAG")
    if engine.engine == "local" and (engine.shard_count is not None or
                                     engine.address is not None):
        raise click.UsageError("--shards and --address go with --engine ray")
    if engine.engine == "ray" and (engine.shard is not None or engine.shard_count is None
                                   or estimate):
        raise click.UsageError("--engine ray needs --shards N (it runs every shard itself: no "
                               "--shard), and --estimate runs locally (no --engine)")
    deadline = parse_as_of(as_of) if as_of is not None else None

    judge_specs = list(judges) or [os.environ.get("JUDGING_JUDGE") or "offline"]
    extract = extract_spec(llm.extract, judge_specs)
    out = out or Path("runs") / new_run_id()
    request = RunRequest(sources=list(sources), out=out, registry=registry, rubrics=list(rubrics),
                         judges=judge_specs, samples=samples, swap=swap, concurrency=concurrency,
                         measure=MeasureOptions(image_size=measuring.image_size,
                                                max_pixels=measuring.max_pixels),
                         rubrics_dir=rubrics_dir, llm=llm.options, discover=list(discover),
                         as_of=deadline, hf_token=os.environ.get("HF_TOKEN") or None,
                         download_limits=download_limits, extract=extract, shard=engine.shard,
                         measure_cache=measuring.measure_cache,
                         measure_workers=measuring.measure_workers,
                         measure_timeout=measuring.measure_timeout)
    if engine.engine == "ray":
        _run_on_engine(request, shards=engine.shard_count,  # type: ignore[arg-type]
                       address=engine.address, output=engine.shard_output,
                       cpus=engine.cpus_per_shard)
        return
    if estimate:
        _print_estimate(asyncio.run(Runner(request).estimate()))
        return
    # Sources, registry, rubrics, judges and their endpoint, before anything is drawn or
    # written: a configuration error is one line, no progress bar, no run folder.
    runner = Runner(request)
    runner.prepare()
    with Progress(TextColumn("[bold]judging"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err_console,
                  transient=False) as progress:
        task = progress.add_task("judging", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        runner.on_progress = on_progress
        result = asyncio.run(runner.run())
    from judging.report import summary_rows

    _print_sources(result)
    if runner.store.latest_count() <= SUMMARY_MAX_LINES:
        _print_summary(summary_rows(runner.store.latest()))
    else:  # a table of every claim of a large run is no summary: counts, and the report
        console.print("judgments: " + ", ".join(f"{name} {n}" for name, n in
                                                sorted(result.counts.items()))
                      + f" (per claim: `judging report {escape(str(result.root))}`)",
                      soft_wrap=True)
    resumed = f", {result.skipped} already done (resumed)" if result.skipped else ""
    console.print(f"run [bold]{result.run_id}[/] in {escape(str(result.root))}: {result.written} "
                  f"new judgment line(s){resumed}", soft_wrap=True)
    if runner.budget is not None:
        console.print(f"spent ${runner.budget.spent:.4f} of the ${runner.budget.limit:.4f} "
                      f"budget", soft_wrap=True)
    say_integrity(result.integrity_pairs,
                  f"flagged on both sides; see {escape(str(result.root / 'integrity.json'))}")
    if result.drift is not None and result.drift.changes:
        changed = {c.served for c in result.drift.changes}
        console.print(f"[bold yellow]drift:[/] {len(result.drift.changes)} line(s) were served by "
                      f"another model or build than their judge's first calls "
                      f"({', '.join(sorted(changed))}): flagged served_changed; calibrations "
                      f"made on the first do not trust them (see "
                      f"{escape(str(result.root / 'drift.json'))})", soft_wrap=True)
    if result.not_addressed:
        from judging.rundir import RunPaths

        submissions = len({r.submission_id for r in result.not_addressed})
        console.print(f"[bold yellow]registry:[/] {len(result.not_addressed)} registry claim(s) "
                      f"not addressed by {submissions} submission(s), counted as not passed "
                      f"(see {escape(str(RunPaths(result.root).not_addressed))})", soft_wrap=True)
    for error in result.source_errors:
        err_console.print(f"[bold red]source error:[/] {escape(error)}", highlight=False,
                          soft_wrap=True)
    if _nothing_judged(runner.store):
        sys.exit(1)
    if result.failed:
        sys.exit(1)


def _nothing_judged(store) -> bool:
    """Whether every line of the run is an error (no claim loaded, or none could be judged):
    said in one line with the first reasons, so that the run fails (exit 1) rather than end
    as a success that judged nothing."""
    from judging.models import LineStatus

    # The lines' heads, one at a time, up to the first that is not an error (the first line, in
    # a run that judged anything); the reasons are read only when every line is an error.
    if store.latest_count() == 0 or any(head.status is not LineStatus.error
                                        for head in store.iter_latest_heads()):
        return False
    reasons = list(dict.fromkeys(f"{line.claim}: {line.reason}" for line in store.iter_latest()))
    err_console.print(f"[bold red]nothing judged:[/] every one of the run's "
                      f"{store.latest_count()} line(s) is an error: " + escape("; ".join(reasons[:3]))
                      + (f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else ""),
                      highlight=False, soft_wrap=True)
    return True


def _run_on_engine(request, *, shards: int, address: str | None, output: str, cpus: float
                   ) -> None:
    from judging.merge import run_sharded

    def on_shard(outcome) -> None:
        if outcome.failed:
            err_console.print(f"[bold red]shard {outcome.shard} failed[/] ({escape(outcome.out)}): "
                              + escape("; ".join(outcome.errors)), highlight=False,
                              soft_wrap=True)
        else:
            console.print(f"shard {outcome.shard} on {escape(outcome.node or '?')}: "
                          f"{outcome.written} new line(s), {outcome.skipped} already done, in "
                          f"{escape(outcome.out)}", soft_wrap=True, highlight=False)

    result = run_sharded(request, shards=shards, address=address,
                         output=output,  # type: ignore[arg-type]
                         cpus_per_shard=cpus, on_shard=on_shard)
    from judging.cli.merge import print_merge

    print_merge(result.merge)
    if result.failed:
        sys.exit(1)


#: Up to this many judgment lines, the run ends with a table of every claim.
SUMMARY_MAX_LINES = 400


def _print_sources(result) -> None:
    """What discovery and --as-of did: notes, the revision judged per Hub submission, skips."""
    for note in result.notes:
        console.print(escape(note), soft_wrap=True, highlight=False)
    for sid, source in sorted(result.submissions.items()):
        if source.as_of is None and not source.discovered_by:
            continue
        when = (f" (committed {source.committed_at.isoformat()}, last at or before "
                f"{source.as_of.isoformat()})" if source.as_of and source.committed_at else "")
        console.print(f"{escape(sid)}: judged {escape(source.source)}{when}", soft_wrap=True,
                      highlight=False)
    for skip in result.skipped_sources:
        err_console.print(f"[bold yellow]skipped:[/] {escape(skip)}", highlight=False,
                          soft_wrap=True)


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
    table = Table(title="judgments per rubric (outcome, score and coverage; incomplete: the "
                        "criteria answered)", show_lines=False)
    for column in rows[0]:
        table.add_column(column, overflow="fold")
    colours = {"pass": "green", "fail": "red", "incomplete": "yellow", "error": "bold red"}
    for row in rows:
        cells = []
        for value in row.values():
            colour = colours.get(value.split(" ")[0].rstrip(":"))
            cells.append(f"[{colour}]{escape(value)}[/]" if colour else escape(value))
        table.add_row(*cells)
    console.print(table)
