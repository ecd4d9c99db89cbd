"""The `judging` command line, assembled: each command group lives in its own module, named after
its stage, and is added here (the inspect_ai `_cli/main.py` pattern). Commands are thin: they read
the environment and the options, call one stage, and print; every stage re-runs from stored output.
"""

from __future__ import annotations

import logging
import sys

import click

from judging.cli.app import app
from judging.cli.calibrate import calibrate
from judging.cli.check import check
from judging.cli.compare import compare
from judging.cli.consensus import consensus
from judging.cli.merge import merge
from judging.cli.options import InertFormatter, InertLogHandler, err_console
from judging.cli.publish import publish
from judging.cli.report import report
from judging.cli.rerun import rerun
from judging.cli.resolve import awards, leaderboard, resolve
from judging.cli.review import review
from judging.cli.rubric import rubric
from judging.cli.run import run
from judging.cli.signals import chart, similarity
from judging.cli.watch import watch

#: What Ctrl-C leaves, by command: the commands that write a run directory line by line keep
#: what they finished and resume from it when run again.
INTERRUPTED = {
    "run": "the judgments finished so far are kept in the run directory; run the same command "
           "again to resume (finished work is skipped, at most the calls in flight are lost)",
    "rerun": "the re-runs finished so far are kept in the run directory; run the same command "
             "again to resume",
    "watch": "the polls finished so far are kept; run the same command again to go on",
}
#: The exit code of a process ended by SIGINT (128 + 2), as shells report it.
EXIT_INTERRUPTED = 130


class _Main(click.Group):
    """click's group, except that Ctrl-C says what was kept and how to go on, not "Aborted!"."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            command = ctx.invoked_subcommand or ""
            err_console.print("\n[bold]interrupted:[/] " + INTERRUPTED.get(
                command, "nothing half-written is kept (files are replaced whole); run the "
                         "command again"), highlight=False, soft_wrap=True)
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=_Main,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-v", "--verbose", is_flag=True, help="Log more (warnings are always shown).")
@click.version_option(package_name="judging")
def main(verbose: bool) -> None:
    """Rubric-based, AI-then-human judging of claims reproduced from ML papers."""
    # Rich's log lines are padded to the console's width: fine on a terminal, hundreds of
    # spaces in a pipe or a file, where a plain line is what a reader (or grep) wants.
    # Either way a message is made inert first: a warning may quote a submission's names.
    handler: logging.Handler = InertLogHandler(console=err_console, show_path=False,
                                               show_time=False) \
        if err_console.is_terminal else logging.StreamHandler(sys.stderr)
    if not err_console.is_terminal:
        handler.setFormatter(InertFormatter("%(levelname)s %(message)s"))
    handler.addFilter(_not_printed_elsewhere)
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s",
                        handlers=[handler])


def _not_printed_elsewhere(record: logging.LogRecord) -> bool:
    """Whether a record still needs printing: a library that gives its logger a handler of its
    own (huggingface_hub does) has printed it already, and its retries showed twice."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None and logger is not logging.root:
        if logger.handlers:
            return False
        if not logger.propagate:
            break
        logger = logger.parent
    return True


# In the order `judging --help` lists them (click sorts by name) and the docs tell them.
for command in (check, run, rerun, watch, merge, report, review, calibrate, compare, resolve,
                consensus, leaderboard, awards, publish, app, similarity, chart, rubric):
    main.add_command(command)


if __name__ == "__main__":  # pragma: no cover
    main()
