"""The `judging` command line, assembled: each command group lives in its own module, named after
its stage, and is added here (the inspect_ai `_cli/main.py` pattern). Commands are thin: they read
the environment and the options, call one stage, and print; every stage re-runs from stored output.
"""

from __future__ import annotations

import logging

import click
from rich.logging import RichHandler

from judging.cli.app import app
from judging.cli.calibrate import calibrate
from judging.cli.check import check
from judging.cli.compare import compare
from judging.cli.consensus import consensus
from judging.cli.merge import merge
from judging.cli.options import err_console
from judging.cli.publish import publish
from judging.cli.report import report
from judging.cli.rerun import rerun
from judging.cli.resolve import awards, leaderboard, resolve
from judging.cli.review import review
from judging.cli.rubric import rubric
from judging.cli.run import run
from judging.cli.signals import chart, similarity
from judging.cli.watch import watch


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-v", "--verbose", is_flag=True, help="Log more (warnings are always shown).")
@click.version_option(package_name="judging")
def main(verbose: bool) -> None:
    """Rubric-based, AI-then-human judging of claims reproduced from ML papers."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s",
                        handlers=[RichHandler(console=err_console, show_path=False,
                                              show_time=False)])


# In the order `judging --help` lists them (click sorts by name) and the README tells them.
for command in (check, run, rerun, watch, merge, report, review, calibrate, compare, resolve,
                consensus, leaderboard, awards, publish, app, similarity, chart, rubric):
    main.add_command(command)


if __name__ == "__main__":  # pragma: no cover
    main()
