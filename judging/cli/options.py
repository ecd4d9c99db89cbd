"""What the command-line modules share: consoles, one-line errors and the options that several
commands take, each defined once (the inspect_ai `_cli/common.py` pattern)."""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console, ConsoleDimensions, ConsoleRenderable
from rich.logging import RichHandler
from rich.markup import escape
from rich.text import Text

from judging.errors import JudgingError
from judging.models import MAX_SOURCE_BYTES, MAX_SOURCE_FILES, for_terminal

#: The width of console output that goes to a file or a pipe (no terminal to fit): tables keep
#: their natural width up to this, instead of rich's 80 columns, which cut every cell into slivers.
PIPE_WIDTH = 1000


class PipeWideConsole(Console):
    """Rich's console, except that output to a file or a pipe is not fitted to 80 columns
    (`COLUMNS` still sets the width when given), and that every string it prints is made
    inert for the terminal first (`judging.models.for_terminal`): a claim, a reason or a
    script's stderr line carries no escape sequence or control character to the organizer's
    terminal, wherever a command prints it (lines, table cells, errors)."""

    def __init__(self, *, width: int | None = None, height: int | None = None,
                 **options: Any) -> None:
        super().__init__(width=width, height=height, **options)
        # rich reads COLUMNS and LINES here, once: for the console of this module, when the CLI
        # is first imported. The environment's width is read when printing instead (`size`
        # reads them then), so that a command prints to the width of the environment it runs
        # in, not of the one its module was imported in (a test process imported it under an
        # xdist worker's COLUMNS=80 and printed every later command's tables at 80 columns).
        self._width, self._height = width, height

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(for_terminal(text), **options)

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if (self._width is None and not self.is_terminal
                and not self._environ.get("COLUMNS", "").isdigit()):
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


class InertLogHandler(RichHandler):
    """rich's log handler, with every message made inert for the terminal first: a warning
    quoting a submission's file or folder name (a logbook's orphan page folder named with
    escape sequences) reaches the organizer's terminal as text. RichHandler builds its Text
    itself, past the console's `render_str`, so the console alone does not cover it."""

    def render_message(self, record: logging.LogRecord, message: str) -> ConsoleRenderable:
        return super().render_message(record, for_terminal(message))


class InertFormatter(logging.Formatter):
    """The plain log line (a pipe, a file) with its message made inert, as InertLogHandler's."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = for_terminal(record.message)
        return super().formatMessage(record)


# No emoji codes: a judge named `openai:m` or a claim's ":smile:" is printed as written.
console = PipeWideConsole(emoji=False)
err_console = PipeWideConsole(stderr=True, emoji=False)
F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_REVIEW_HOME = Path(".judging") / "argilla"


def friendly_errors(func: F) -> F:
    """Turn the package's own errors into one clear line and exit code 1 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except JudgingError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                              soft_wrap=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


#: How many ports above a taken one `--free-port` tries.
FREE_PORT_TRIES = 100


def free_port_option(func: F) -> F:
    """`--free-port`: when --port is taken, listen on the next free port above it and say which
    (`make demo` passes it, so that a busy 6900 or 7860 does not stop the demo)."""
    return click.option("--free-port", is_flag=True,
                        help="If --port is in use, take the next free port above it (printed)."
                        )(func)


def choose_port(host: str, port: int, free_port: bool) -> int:
    """`port`, or with `free_port` the first free port from it on (said on stderr when it is
    another); a port that stays taken is left to the service, which refuses it in one line."""
    from judging.services.pidfile import port_free

    if not free_port or port_free(host, port):
        return port
    for other in range(port + 1, min(port + FREE_PORT_TRIES, 65535) + 1):
        if port_free(host, other):
            err_console.print(f"port {port} on {host} is in use: listening on {other} instead",
                              highlight=False, soft_wrap=True)
            return other
    return port


def say_integrity(kinds: Mapping[str, int], where: str) -> None:
    """The integrity pairs a run or a merge wrote, by kind (`where`: what to read next)."""
    if kinds:
        console.print("[bold yellow]integrity:[/] " + ", ".join(
            f"{n} {kind.replace('_', ' ')} pair(s) across submissions"
            for kind, n in sorted(kinds.items())) + f" ({where})", soft_wrap=True)


def _not_running(service: str, home: Path) -> str:
    return f"No {service} is running from {Path(home).resolve()}."


def say_stopped(service: str, stopped: bool, home: Path) -> None:
    """What `stop` says of a background service (the review server, the dashboard) of `home`."""
    click.echo(f"Stopped the {service} of {Path(home).resolve()}." if stopped
               else _not_running(service, home))


def exit_not_running(service: str, home: Path) -> NoReturn:
    """What `status` says of a background service that does not run from `home`: exit code 1."""
    click.echo(_not_running(service, home))
    sys.exit(1)


def rubrics_dir_option(func: F) -> F:
    """`--rubrics-dir`: the folder of versioned rubrics (every command that reads rubrics)."""
    return click.option("--rubrics-dir", type=click.Path(path_type=Path, file_okay=False),
                        envvar="JUDGING_RUBRICS_DIR", default=None,
                        help="Folder of versioned rubrics [env JUDGING_RUBRICS_DIR; default: the "
                             "checkout's rubrics/].")(func)


def _calibration_given(ctx: click.Context, param: click.Parameter, value: Path | None
                       ) -> Path | None:
    """A calibration folder that is not there is said (a typo read as "no calibration" trusted
    no judge without a word); not refused: a watch or the dashboard may start before it is."""
    if value is not None and not value.exists():
        err_console.print(f"[bold yellow]warning:[/] --calibration {escape(str(value))}: no such "
                          f"folder: no judge is trusted (every AI answer waits for people)",
                          highlight=False, soft_wrap=True)
    return value


def calibration_dir_option(func: F) -> F:
    """`--calibration`: the folder of calibration artifacts (resolve, publish)."""
    return click.option("--calibration", "calibration_dir",
                        type=click.Path(path_type=Path, file_okay=False),
                        envvar="JUDGING_CALIBRATION_DIR", default=None,
                        callback=_calibration_given,
                        help="Folder of calibration artifacts [env JUDGING_CALIBRATION_DIR; "
                             "default calibration/].")(func)


def home_option(func: F) -> F:
    """`--home`: the local Argilla server's folder (every `review` command)."""
    return click.option("--home", type=click.Path(path_type=Path, file_okay=False),
                        envvar="JUDGING_REVIEW_HOME", default=DEFAULT_REVIEW_HOME,
                        show_default=True,
                        help="Folder of the server's database, secret key, pid file and log "
                             "[env JUDGING_REVIEW_HOME].")(func)


def server_options(func: F) -> F:
    """`--api-url`, `--api-key` and `--home`: which Argilla server a review command talks to."""
    func = click.option("--api-key", envvar="ARGILLA_API_KEY", default=None, show_envvar=True,
                        help="Argilla API key [default: the local server's owner].")(func)
    func = click.option("--api-url", envvar="ARGILLA_API_URL", default=None, show_envvar=True,
                        help="Argilla server [default: the local server of --home].")(func)
    return home_option(func)


#: More options than this on one command are shown in titled sections of --help (a list of
#: twenty is read as a wall; ten is about what one screen of help shows with their text).
MAX_UNGROUPED_OPTIONS = 10


class SectionedCommand(click.Command):
    """A command whose --help shows its options in the titled sections `option_section` and
    `option_group(title=...)` give them, the untitled ones first under "Options". click has
    no option sections (cloup adds them, but as its own command and decorator classes that
    every command would change to): this is the one formatting method that needs them."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {"Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                sections.setdefault(getattr(param, "help_section", "Options"), []).append(record)
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def option_section(title: str, *options: Callable[[F], F]) -> Callable[[F], F]:
    """Options shown together under `title` in --help (with `SectionedCommand`), in the order
    given, where the decorator stands; the command receives them as before."""
    def decorate(command: F) -> F:
        before = len(getattr(command, "__click_params__", ()))
        for option in reversed(options):
            command = option(command)
        for param in command.__click_params__[before:]:  # type: ignore[attr-defined]
            param.help_section = title
        return command
    return decorate


def option_group(name: str, build: Callable[..., Any], *options: Callable[[F], F],
                 title: str | None = None) -> Callable[[F], F]:
    """Options that reach the command as one value: the parameter `name`, `build(**values of
    these options)`, so that a command with many options takes a few (the inspect_ai pattern
    of common options as one decorator and one typed value). The options show in --help in the
    order given, where the decorator stands, under `title` when given (`option_section`)."""
    def probe() -> None: ...
    for option in options:
        probe = option(probe)
    names = [param.name for param in probe.__click_params__]  # type: ignore[attr-defined]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def grouped(*args: Any, **kwargs: Any) -> Any:
            kwargs[name] = build(**{key: kwargs.pop(key) for key in names})
            return command(*args, **kwargs)

        if title is not None:
            return option_section(title, *options)(grouped)  # type: ignore[arg-type]
        for option in reversed(options):
            grouped = option(grouped)
        return grouped  # type: ignore[return-value]
    return decorate


def endpoint_options(url_help: str, key_help: str) -> tuple[Callable[[F], F], ...]:
    """`--base-url` and `--api-key`: the OpenAI-compatible endpoint a command calls, from
    OPENAI_BASE_URL / OPENAI_API_KEY by default (run, calibrate --retest), with the command's
    own help."""
    return (click.option("--base-url", envvar="OPENAI_BASE_URL", default=None, show_envvar=True,
                         help=url_help),
            click.option("--api-key", envvar="OPENAI_API_KEY", default=None, show_envvar=True,
                         help=key_help))


def event_option(func: F) -> F:
    """`--event FILE`: the event's rules the leaderboard applies (leaderboard, app)."""
    return click.option("--event", "event_path", type=click.Path(path_type=Path, dir_okay=False,
                                                                 exists=True),
                        envvar="JUDGING_EVENT", default=None,
                        help="The event's rules (YAML: name, max_papers_per_participant, "
                             "participants) [env JUDGING_EVENT; default: no limit, a "
                             "submission's participant is its Hub namespace].")(func)


def _download_limits(max_download_files: int, max_download_mb: int) -> Any:
    from judging.intake import DownloadLimits  # (imported when the command runs)

    return DownloadLimits(files=max_download_files, bytes=max_download_mb * 2**20)


#: What one Hub submission may hold to be downloaded (`judging run`, `judging watch`): the
#: organizer's, from the command line or the environment, never from the submission.
download_limit_options = option_group(
    "download_limits", _download_limits,
    click.option("--max-download-files", type=click.IntRange(1), default=MAX_SOURCE_FILES,
                 envvar="JUDGING_MAX_DOWNLOAD_FILES", show_default=True, show_envvar=True,
                 help="A Hub submission listing more files is refused before anything of it "
                      "is downloaded."),
    click.option("--max-download-mb", type=click.IntRange(1),
                 default=MAX_SOURCE_BYTES // 2**20, envvar="JUDGING_MAX_DOWNLOAD_MB",
                 show_default=True, show_envvar=True,
                 help="A Hub submission listing more MiB is refused before anything of it is "
                      "downloaded (and one whose downloaded files hold more is removed)."),
    title="Hub downloads")
