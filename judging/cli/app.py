"""`judging app RUN_DIR | --dataset OWNER/NAME`, `judging app stop`, `judging app status`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from judging.cli.options import (
    SectionedCommand,
    calibration_dir_option,
    choose_port,
    console,
    event_option,
    exit_not_running,
    free_port_option,
    friendly_errors,
    option_section,
    rubrics_dir_option,
    say_stopped,
    server_options,
)
from judging.errors import JudgingError
from judging.services import APP_HOME

APP_HOME_HELP = "Folder of the background dashboard's pid file and log [env JUDGING_APP_HOME]."


class _ServeByDefault(click.Group):
    """`judging app RUN_DIR` serves; `judging app stop | status` manage a background dashboard.
    click has no default subcommand (the click-default-group package adds one): anything that is
    not a subcommand's name goes to `serve`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["serve", *args]
        elif not args:
            args = ["serve"]
        return super().parse_args(ctx, args)


def app_home_option(func):
    return click.option("--app-home", type=click.Path(path_type=Path, file_okay=False),
                        envvar="JUDGING_APP_HOME", default=APP_HOME, show_default=True,
                        help=APP_HOME_HELP)(func)


@click.group(cls=_ServeByDefault)
def app() -> None:
    """The organizers' dashboard (Gradio): leaderboard, claims, review queue, MCP tools.

    `judging app RUN_DIR` serves a run directory; `judging app --dataset OWNER/NAME` a dataset
    written by `judging publish` (as a Hugging Face Space does); `--background` detaches it and
    `judging app stop` ends it.
    """


def _argilla(api_url: str | None, api_key: str | None, home: Path) -> tuple[str | None,
                                                                          str | None]:
    """The Argilla server the queue links into: --api-url/--api-key, else the local server of
    --home when one runs, else none."""
    if api_url:
        return api_url, api_key
    from judging.review import server

    info = server.status(home)
    return (info.url, api_key or info.api_key) if info is not None else (None, None)


@app.command(cls=SectionedCommand)
@click.argument("run_dir", required=False,
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--dataset", metavar="OWNER/NAME", default=None,
              help="Serve a dataset published by `judging publish`, downloaded from the Hub "
                   "(HF_ENDPOINT, HF_TOKEN) instead of a run directory.")
@click.option("--revision", default=None, help="The dataset's revision [default: main].")
@event_option
@calibration_dir_option
@rubrics_dir_option
@option_section("Serving",
    click.option("--host", default="127.0.0.1", show_default=True,
                  help="Address to listen on."),
    click.option("--port", type=click.IntRange(1, 65535), default=7860, show_default=True,
                  help="Port to listen on."),
    free_port_option,
    click.option("--mcp/--no-mcp", default=True, show_default=True,
                  help="Also serve the API functions as MCP tools (Gradio's MCP server)."),
    click.option("--background", is_flag=True,
                  help="Start detached, wait until it answers, print its URL and return."),
    app_home_option,
)
@option_section("Review queue links",
    click.option("--workspace", default=None,
                  help="Argilla workspace of the review queue's links [default: judging]."),
    server_options,
)
@friendly_errors
def serve(run_dir: Path | None, dataset: str | None, revision: str | None, host: str,
          port: int, free_port: bool, mcp: bool, background: bool, workspace: str | None, app_home: Path,
          event_path: Path | None, calibration_dir: Path | None, rubrics_dir: Path | None,
          api_url: str | None, api_key: str | None, home: Path) -> None:
    """Serve the dashboard of RUN_DIR (or of --dataset)."""
    from judging.app import Source, launch, load, start_background

    for module, what in (("gradio", "Gradio"), *((("mcp", "the MCP server"),) if mcp else ())):
        if importlib.util.find_spec(module) is None:
            raise JudgingError(f"the dashboard needs {what} ({module} is not installed): "
                               f"pip install 'judging[app]'" + (" or give --no-mcp"
                                                               if module == "mcp" else ""))
    if (run_dir is None) == (dataset is None):
        raise JudgingError("give a run directory or --dataset OWNER/NAME (one of them)")
    if dataset is not None:
        from judging.publish import check_repo_id

        check_repo_id(dataset)
    source = Source(run_dir=run_dir, dataset=dataset, revision=revision,
                    calibration_dir=calibration_dir, rubrics_dir=rubrics_dir,
                    workspace=workspace, event=event_path,
                    # A dataset is downloaded as real files under the app's home, so that the
                    # figures Gradio serves are plain files (the Hub cache holds links).
                    download_dir=Path(app_home) / "datasets" / dataset.replace("/", "__")
                    if dataset else None)
    argilla_url, argilla_key = _argilla(api_url, api_key, home)
    port = choose_port(host, port, free_port)
    if background:
        info = start_background(source, home=app_home, host=host, port=port, mcp=mcp,
                                argilla_url=argilla_url, argilla_api_key=argilla_key)
        click.echo(f"dashboard: {info.url}")
        if mcp:
            click.echo(f"MCP server: {info.mcp_url}")
        click.echo(f"Stop it with: judging app stop --app-home {info.home}")
        return
    data = load(source, argilla_url=argilla_url, argilla_api_key=argilla_key)
    from judging.app.live import LiveData
    from judging.app.process import app_url

    claims = len((data.current() if isinstance(data, LiveData) else data).claims)
    console.print(f"dashboard at {app_url(host, port)} ({claims} claims; Ctrl+C "
                  f"stops it)", highlight=False, soft_wrap=True)
    if mcp:
        console.print(f"MCP server at {app_url(host, port)}/gradio_api/mcp/", highlight=False,
                      soft_wrap=True)
    launch(data, host=host, port=port, mcp=mcp, block=True)


@app.command()
@app_home_option
@friendly_errors
def stop(app_home: Path) -> None:
    """Stop the background dashboard started from this home."""
    from judging.app import stop as stop_app

    say_stopped("dashboard", stop_app(app_home), app_home)


@app.command()
@app_home_option
@friendly_errors
def status(app_home: Path) -> None:
    """Tell whether a background dashboard runs from this home (exit code 1 if not)."""
    from judging.app import status as app_status

    info = app_status(app_home)
    if info is None:
        exit_not_running("dashboard", app_home)
    click.echo(f"dashboard at {info.url} (pid {info.pid})")
