"""`judging resolve` and `judging leaderboard`."""

from __future__ import annotations

from pathlib import Path

import click

from judging.cli.options import (
    calibration_dir_option,
    console,
    friendly_errors,
    rubrics_dir_option,
)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Labels file (default RUN_DIR/labels.jsonl).")
@calibration_dir_option
@rubrics_dir_option
@friendly_errors
def resolve(run_dir: Path, labels_path: Path | None, calibration_dir: Path | None,
            rubrics_dir: Path | None) -> None:
    """Final decisions: human majority, else trusted AI, else pending review.

    Writes RUN_DIR/decisions.jsonl (per claim and rubric, per criterion, who decided) and
    RUN_DIR/final.jsonl (per claim: outcome, whether the participant's verdict is upheld, and
    the claim's final verdict: verified, falsified, toy, inconclusive or pending).
    """

    from judging.resolve import write_resolution

    done = write_resolution(run_dir, labels_path=labels_path, calibration_dir=calibration_dir,
                            rubrics_dir=rubrics_dir)
    console.print(f"{done.claims} claim(s): " + ", ".join(f"{n} {k}" for k, n in
                                                          sorted(done.outcomes.items())),
                  soft_wrap=True)
    console.print("participant's verdict upheld: " + ", ".join(
        f"{n} {k}" for k, n in sorted(done.upheld.items())), soft_wrap=True)
    if done.final_verdicts:
        console.print("final verdict (human, else trusted AI, else pending): " + ", ".join(
            f"{n} {k}" for k, n in sorted(done.final_verdicts.items())), soft_wrap=True)
    console.print("criteria decided by: " + ", ".join(f"{n} {k}" for k, n in
                                                      sorted(done.deciders.items())),
                  soft_wrap=True)
    console.print(f"wrote {run_dir / 'decisions.jsonl'} and {run_dir / 'final.jsonl'}",
                  soft_wrap=True)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@calibration_dir_option
@rubrics_dir_option
@friendly_errors
def leaderboard(run_dir: Path, calibration_dir: Path | None, rubrics_dir: Path | None) -> None:
    """Per submission and per paper: claims judged, passed, failed, pending, final verdicts (CSV
    and HTML, with the pass rates corrected for the judges' measured errors)."""
    from judging.resolve import write_leaderboard

    for path in write_leaderboard(run_dir, calibration_dir=calibration_dir,
                                  rubrics_dir=rubrics_dir):
        console.print(f"wrote {path}", soft_wrap=True)
