"""`judging resolve` and `judging leaderboard`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from judging.cli.options import (
    calibration_dir_option,
    console,
    event_option,
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
    if done.conflicts:
        console.print(f"[bold yellow]{done.conflicts} reviewer conflict(s):[/] the overall answer "
                      f"disagrees with the reviewer's criteria, or reviewers split; decided fail "
                      f"until a further reviewer or an adjudicator settles it (`conflict` in "
                      f"{run_dir / 'decisions.jsonl'})", soft_wrap=True)
    if done.drift:
        console.print(f"[bold yellow]drift:[/] {done.drift} line(s) were served by another model "
                      f"or build than their judge's first calls (flagged served_changed; "
                      f"calibrations made on the first do not trust them): "
                      f"{run_dir / 'drift.json'}", soft_wrap=True)
    if done.final_verdicts:
        console.print("final verdict (human, else trusted AI, else pending): " + ", ".join(
            f"{n} {k}" for k, n in sorted(done.final_verdicts.items())), soft_wrap=True)
    console.print("criteria decided by: " + ", ".join(f"{n} {k}" for k, n in
                                                      sorted(done.deciders.items())),
                  soft_wrap=True)
    console.print(f"wrote {run_dir / 'decisions.jsonl'} and {run_dir / 'final.jsonl'}",
                  soft_wrap=True)


def leaderboard_console_table(title: str, rows: list[dict], columns: list[str]) -> Table:
    """A leaderboard table for the console, ranks as the page shows them (=2 for a tie)."""
    from judging.resolve import rank_text

    shown = [c for c in columns if c != "note" or any(r.get("note") for r in rows)]
    table = Table(title=title, title_justify="left")
    for column in shown:
        table.add_column(column, justify="right" if column not in (
            "submission", "paper", "participant", "note") else "left")
    for row in rows:
        table.add_row(*(rank_text(row) if c == "rank" else
                        "" if row.get(c) is None else str(row[c]) for c in shown))
    return table


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@event_option
@calibration_dir_option
@rubrics_dir_option
@friendly_errors
def leaderboard(run_dir: Path, event_path: Path | None, calibration_dir: Path | None,
                rubrics_dir: Path | None) -> None:
    """Rank submissions, participants and papers by the final decisions (CSV, HTML, console).

    More passes first, then fewer fails, then fewer registry claims not addressed (a failed
    claim never lifts a submission); a claim waiting for review counts with the AI's outcome,
    provisionally; a flagged copy of the published figure and a reviewer conflict count as
    fails. Run `judging resolve RUN_DIR` first.
    """
    from judging.resolve import (
        PARTICIPANT_COLUMNS,
        SUBMISSION_COLUMNS,
        load_event_rules,
        rule_lines,
        run_leaderboard,
        stale_decisions,
        write_leaderboard,
    )

    board = run_leaderboard(run_dir, rules=load_event_rules(event_path))
    stale = stale_decisions(run_dir)
    if stale:
        console.print(f"[bold yellow]{stale}[/]", soft_wrap=True, highlight=False)
    console.print(leaderboard_console_table("Submissions", board.submissions,
                                            [c for c in SUBMISSION_COLUMNS
                                             if c != "participant"]))
    if any(r["submissions"] > 1 or r["note"] for r in board.participants) or \
            board.rules.max_papers_per_participant:
        console.print(leaderboard_console_table("Participants", board.participants,
                                                PARTICIPANT_COLUMNS))
    for line in [*rule_lines(board.submissions), *board.uncertainty]:
        console.print(line, soft_wrap=True, highlight=False)
    for path in write_leaderboard(run_dir, board=board, calibration_dir=calibration_dir,
                                  rubrics_dir=rubrics_dir):
        console.print(f"wrote {path}", soft_wrap=True)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--size", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Places per shortlist.")
@click.option("--pick", "pick", default=None, metavar="AWARD=SUBMISSION",
              help="Record a person's final pick (best_reproduction or best_falsification).")
@click.option("--by", "by", default=None, help="Who made the pick (required with --pick).")
@click.option("--checklists", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              default=None, help="The submissions' checklists: `judging check SOURCE --json`'s "
                                 "output (completeness is evidence of a place).")
@friendly_errors
def awards(run_dir: Path, size: int, pick: str | None, by: str | None,
           checklists: Path | None) -> None:
    """The award shortlists (best reproduction, best falsification) with the evidence behind
    each place, from the final decisions, the re-runs and the checklists; `--pick
    AWARD=SUBMISSION --by NAME` records the final pick as a human decision (awards.jsonl)."""
    from datetime import UTC, datetime

    from rich.markup import escape

    from judging.errors import JudgingError
    from judging.resolve.awards import AWARDS, read_picks, record_pick, run_shortlists

    lists = run_shortlists(run_dir, size=size, checklists=checklists)
    if pick is not None:
        award, _, submission = pick.partition("=")
        if not submission or by is None:
            raise JudgingError("--pick takes AWARD=SUBMISSION and needs --by NAME")
        record_pick(run_dir, award, submission, by=by, at=datetime.now(UTC), lists=lists)
    picks = {p.award: p for p in read_picks(run_dir)}
    for award, places in lists.items():
        console.print(f"[bold]{award}[/] ({escape(AWARDS[award])})")
        if not places:
            console.print("  no submission qualifies yet", highlight=False)
        for place in places:
            console.print(f"  {place.place}. {escape(place.submission)}", highlight=False)
            for line in place.evidence:
                console.print(f"     {escape(line)}", highlight=False, soft_wrap=True)
        chosen = picks.get(award)
        console.print(f"  picked: {escape(chosen.submission)} by {escape(chosen.by)} "
                      f"({chosen.at:%Y-%m-%d %H:%M} UTC)" if chosen else
                      "  picked: nobody yet (a person picks: --pick)", highlight=False)
