"""`judging publish RUN_DIR --repo ORG/NAME`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from judging.cli.options import (
    calibration_dir_option,
    console,
    friendly_errors,
)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--repo", "repo_id", required=True, metavar="ORG/NAME",
              help="The Hugging Face dataset repo to create or update.")
@click.option("--private", is_flag=True, help="Create the dataset private (an existing repo "
              "keeps its visibility).")
@click.option("--dry-run", is_flag=True, help="Stage the dataset and list what would be "
              "uploaded; send nothing.")
@calibration_dir_option
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Staging folder, rebuilt each time [default RUN_DIR/publish/].")
@click.option("--license", "license_", default="cc-by-4.0", show_default=True,
              help="License in the dataset card (a Hub license id).")
@click.option("--salt", envvar="JUDGING_PUBLISH_SALT", default=None, show_envvar=True,
              help="Salt of the reviewers' pseudonyms [default: a random one kept in "
                   "RUN_DIR/.publish-salt].")
@friendly_errors
def publish(run_dir: Path, repo_id: str, private: bool, dry_run: bool,
            calibration_dir: Path | None, out: Path | None, license_: str,
            salt: str | None) -> None:
    """Publish a resolved run's final decisions as a Hugging Face dataset.

    Stages data/claims, data/decisions and data/judgments (Parquet and JSON lines) and a dataset
    card, with emails, tokens and home paths scrubbed, local paths dropped and reviewers
    pseudonymised; then uploads them (HF_TOKEN or `hf auth login`). Needs `judging resolve`.
    """
    from judging.publish import describe
    from judging.publish import publish as publish_run

    result = publish_run(run_dir, repo_id, private=private, dry_run=dry_run,
                         calibration_dir=calibration_dir, out=out, license=license_,
                         salt=salt)
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
