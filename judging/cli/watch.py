"""`judging watch --discover TAG... --out RUN_DIR [--every 5m] [--as-of DEADLINE]`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from judging.cli.options import (
    SectionedCommand,
    calibration_dir_option,
    console,
    download_limit_options,
    err_console,
    event_option,
    friendly_errors,
    option_section,
    rubrics_dir_option,
    server_options,
)


@click.command(cls=SectionedCommand)
@click.option("--discover", "tags", multiple=True, required=True, metavar="TAG",
              help="Watch every Hugging Face Space carrying this tag; repeatable: a Space must "
                   "carry all the tags (every page of the listing is read at each poll).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="The event's run directory (made at the first poll; a restart goes on in "
                   "it).")
@click.option("--every", default="5m", show_default=True, metavar="DURATION",
              help="Time between polls: 30s, 5m, 2h...")
@click.option("--as-of", "as_of", default=None, metavar="DEADLINE",
              help="The deadline (ISO 8601, UTC when no zone is given): each Space is judged at "
                   "its last commit at or before it; a revision made after it is never taken.")
@click.option("--polls", type=click.IntRange(1), default=None,
              help="Stop after this many polls [default: run until stopped].")
@calibration_dir_option
@event_option
@rubrics_dir_option
@option_section("Judging",
    click.option("--claims", "registry",
                  type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
                  help="The organizers' claim registry (YAML, JSON or JSONL)."),
    click.option("--rubric", "rubrics", multiple=True,
                  help="ID@VERSION, ID or a YAML file; repeatable [default: the newest "
                       "published version of every rubric]."),
    click.option("--judge", "judges", multiple=True,
                  help="Judge spec, repeatable: 'offline' or 'openai:MODEL' [env "
                       "JUDGING_JUDGE; default offline]. The endpoint: OPENAI_BASE_URL, "
                       "OPENAI_API_KEY."),
)
@download_limit_options
@option_section("Review queue (--push)",
    click.option("--push", is_flag=True,
                  help="After each poll that judged something, push the new records to "
                       "Argilla (the review queue; --api-url/--api-key or the local server of "
                       "--home)."),
    click.option("--workspace", default="judging", show_default=True,
                  help="--push: the Argilla workspace."),
    server_options,
)
@friendly_errors
def watch(tags: tuple[str, ...], out: Path, every: str, as_of: str | None, polls: int | None,
          registry: Path | None, rubrics: tuple[str, ...], judges: tuple[str, ...], push: bool,
          workspace: str, calibration_dir: Path | None, event_path: Path | None, rubrics_dir: Path | None,
          api_url: str | None, api_key: str | None, home: Path, download_limits: Any) -> None:
    """Keep an event live: judge new Spaces and new revisions as they appear.

    Each poll lists the tagged Spaces, judges those with a revision not judged yet (a Space
    whose head is unchanged is never judged again; with --as-of, no revision made after the
    deadline), then writes the decisions and the leaderboard (`judging resolve`, `judging
    leaderboard`). RUN_DIR/watch.json records every Space and the revision judged; stopped or
    killed, the same command goes on where it was. HF_TOKEN, when set, is sent to the Hub.
    """
    from judging.intake import parse_as_of
    from judging.judges import LLMOptions
    from judging.run import RunRequest
    from judging.watch import WatchOptions, parse_every
    from judging.watch import watch as run_watch

    seconds = parse_every(every)
    deadline = parse_as_of(as_of) if as_of is not None else None
    request = RunRequest(sources=[], out=out, registry=registry, rubrics=list(rubrics),
                         judges=list(judges) or [os.environ.get("JUDGING_JUDGE") or "offline"],
                         swap=True, rubrics_dir=rubrics_dir,
                         llm=LLMOptions(base_url=os.environ.get("OPENAI_BASE_URL") or None,
                                        api_key=os.environ.get("OPENAI_API_KEY") or None),
                         hf_token=os.environ.get("HF_TOKEN") or None,
                         download_limits=download_limits)
    pusher = None
    if push:
        from judging.cli.review import argilla_client

        client = argilla_client(api_url, api_key, home)

        def pusher(run_dir: Path) -> str:
            from judging.review.push import PushOptions, push_run

            result = push_run(run_dir, client=client, rubrics_dir=rubrics_dir,
                              options=PushOptions(workspace=workspace,
                                                  calibration_dir=calibration_dir))
            return (f"pushed {result.total} record(s) to Argilla ({result.resumed} already "
                    f"there)")

    options = WatchOptions(tags=list(tags), request=request, as_of=deadline,
                           calibration_dir=calibration_dir, event=event_path, push=pusher)
    console.print(f"watching the Spaces tagged {escape(' + '.join(tags))} every {every} into "
                  f"{escape(str(out))}" + (f" (deadline {deadline.isoformat()})" if deadline
                                           else "") + "; Ctrl+C stops", soft_wrap=True,
                  highlight=False)

    def report(number: int, result) -> None:
        shown = console if result.record.error is None else err_console
        shown.print(f"poll {number} at {result.record.started_at:%H:%M:%S}: "
                    f"{escape(result.line())}", soft_wrap=True, highlight=False)

    try:
        run_watch(options, every=seconds, polls=polls, report=report)
    except KeyboardInterrupt:
        console.print("stopped; the same command goes on where it was", highlight=False)
