"""`judging review ...`: run, stop and inspect the local Argilla review server."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from judging.cli.options import (
    SectionedCommand,
    calibration_dir_option,
    choose_port,
    console,
    err_console,
    event_option,
    exit_not_running,
    free_port_option,
    friendly_errors,
    home_option,
    option_section,
    rubrics_dir_option,
    say_stopped,
    server_options,
)
from judging.review import server


@click.group()
def review() -> None:
    """Human review in Argilla: a local server for demos and tests.

    For production, point ARGILLA_API_URL / ARGILLA_API_KEY at any Argilla deployment instead.
    """


@review.command()
@click.option("--host", default=server.DEFAULT_HOST, show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=server.DEFAULT_PORT, show_default=True,
              help="Port to listen on.")
@free_port_option
@home_option
@click.option("--background", is_flag=True,
              help="Start detached, wait until it answers, print the URL and login, and return.")
@click.option("--server-python", type=click.Path(path_type=Path, dir_okay=False),
              envvar="JUDGING_ARGILLA_PYTHON", default=None, show_envvar=True,
              help="Python of the server's own environment (argilla-server 2.8.0) "
                   f"[default: {server.DEFAULT_SERVER_PYTHON} if it exists; `make argilla-env` "
                   "builds it].")
@friendly_errors
def serve(host: str, port: int, free_port: bool, home: Path, background: bool,
          server_python: Path | None) -> None:
    """Run a local Argilla server (SQLite, no Elasticsearch or Redis needed).

    The server runs in an environment of its own (argilla-server's pins stay out of this one):
    --server-python, else JUDGING_ARGILLA_PYTHON, else .venv-argilla/bin/python.

    The owner's login is argilla / 12345678 with API key argilla.apikey unless
    JUDGING_ARGILLA_USERNAME / JUDGING_ARGILLA_PASSWORD / JUDGING_ARGILLA_API_KEY say otherwise
    when the home is first used. Data persists in the home folder across restarts.
    """
    port = choose_port(host, port, free_port)
    if not background:
        # prints the URL and login once it listens
        code = server.serve_foreground(home, host, port, python=server_python)
        if code:
            sys.exit(code)
        return
    info = server.start_background(home, host, port, python=server_python)
    for line in info.login_lines():
        click.echo(line)
    click.echo(f"Stop it with: judging review stop --home {info.home}")


@review.command()
@home_option
@friendly_errors
def stop(home: Path) -> None:
    """Stop the review server started from this home."""
    say_stopped("review server", server.stop(home), home)


@review.command()
@home_option
@friendly_errors
def status(home: Path) -> None:
    """Tell whether a review server runs from this home (exit code 1 if not)."""
    info = server.status(home)
    if info is None:
        exit_not_running("review server", home)
    for line in info.login_lines():
        click.echo(line)
    click.echo(f"  pid:     {info.pid} ({'answering' if server.is_responding(info) else 'not answering yet'})")


# --- push, pull, reviewers ------------------------------------------------------------------------


def argilla_client(api_url: str | None, api_key: str | None, home: Path):
    """A client for the given server, else for the local server of `home` (if it runs)."""
    from judging.review.push import connect

    if api_url is None:
        info = server.status(home)
        if info is None:
            raise server.ReviewServerError(
                "no Argilla server: start one with `judging review serve --background` or give "
                "--api-url/--api-key (ARGILLA_API_URL/ARGILLA_API_KEY)")
        api_url, api_key = info.url, api_key or info.api_key
    return connect(api_url, api_key)


@review.command(cls=SectionedCommand)
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--workspace", default="judging", show_default=True)
@option_section("Calibration draw",
    click.option("--blind-share", type=click.FloatRange(0, 1), default=0.2, show_default=True,
                  help="Share of claims (a stable, seeded draw) sent to the blind calibration "
                       "dataset instead: no AI answers shown, several reviewers each."),
    click.option("--overlap", type=click.IntRange(1, 20), default=2, show_default=True,
                  help="Reviewers per calibration record."),
    click.option("--seed", type=int, default=0, show_default=True,
                  help="Seed of the calibration draw."),
)
@click.option("--batch-size", type=click.IntRange(1, 1000), default=64, show_default=True)
@click.option("--full", is_flag=True,
              help="Send every record, also those a previous push already sent as they are "
                   "(by default a rerun sends only what is missing or changed).")
@click.option("--plan", "use_plan", is_flag=True,
              help="Send only the claims of RUN_DIR/review_plan.jsonl (`judging review plan`), "
                   "in its order and with its priorities: its random sample to the blind "
                   "calibration dataset, its targeted claims beside the AI's answers.")
@calibration_dir_option
@rubrics_dir_option
@option_section("Server", server_options)
@friendly_errors
def push(run_dir: Path, workspace: str, blind_share: float, overlap: int, seed: int,
         batch_size: int, full: bool, use_plan: bool, calibration_dir: Path | None,
         rubrics_dir: Path | None, api_url: str | None, api_key: str | None,
         home: Path) -> None:
    """Push a run's judgments as records with AI suggestions (idempotent, resumable).

    One dataset per rubric version; a re-push updates records in place and keeps every
    human response. Each batch the server acknowledges is recorded in RUN_DIR/pushed.jsonl:
    after an interruption, the same command sends only the records still missing.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from judging.errors import JudgingError
    from judging.resolve import read_plan
    from judging.review.push import PushOptions, push_run, review_url

    plan = read_plan(run_dir) if use_plan else None
    if use_plan and not plan:
        raise JudgingError(f"{run_dir}: no review plan; make one with `judging review plan "
                           f"{run_dir} --budget N` first")
    client = argilla_client(api_url, api_key, home)
    options = PushOptions(workspace=workspace, blind_share=blind_share, overlap=overlap,
                          seed=seed, batch_size=batch_size, full=full,
                          calibration_dir=calibration_dir, plan=plan)
    with Progress(TextColumn("[bold]pushing"), BarColumn(), MofNCompleteColumn(),
                  console=err_console) as progress:
        task = progress.add_task("push", total=None)
        result = push_run(run_dir, client=client, options=options, rubrics_dir=rubrics_dir,
                          on_progress=lambda done, total: progress.update(
                              task, completed=done, total=total))
    for name, count in sorted(result.records.items()):
        console.print(f"{name}: {count} record(s)", highlight=False)
    for name, dataset_id in sorted(result.dataset_ids.items()):
        console.print(f"review {name}, highest priority first: "
                      f"{review_url(str(client.api_url), dataset_id)}", highlight=False,
                      soft_wrap=True)
    if result.skipped:
        console.print(f"not pushed ({len(result.skipped)} claims that failed to load):",
                      highlight=False)
        for line in result.skipped:
            console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    resumed = (f"; {result.resumed} already there from an earlier push (--full sends them "
               f"again)" if result.resumed else "")
    console.print(f"pushed {result.total} record(s) to workspace {workspace!r} at "
                  f"{client.api_url}{resumed}", highlight=False, soft_wrap=True)
    if plan:
        from judging.review.pull import sync_plan_priorities

        # Records an earlier push sent (the whole run, an older plan) keep their priorities:
        # the plan's records must lead each queue, the others go last.
        moved = sync_plan_priorities(run_dir, client=client, previous=plan, workspace=workspace)
        if moved.text():
            console.print(moved.text(), soft_wrap=True, highlight=False)


@review.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the labels (default RUN_DIR/labels.jsonl).")
@click.option("--workspace", default="judging", show_default=True)
@click.option("--refresh/--no-refresh", default=True, show_default=True,
              help="Then bring every view up to date with the answers: resolve, consensus, "
                   "the leaderboard files and the report (the dashboard decides live).")
@calibration_dir_option
@event_option
@rubrics_dir_option
@server_options
@friendly_errors
def pull(run_dir: Path, out: Path | None, workspace: str, refresh: bool,
         calibration_dir: Path | None, event_path: Path | None, rubrics_dir: Path | None,
         api_url: str | None, api_key: str | None, home: Path) -> None:
    """Pull every submitted human response as label lines (drafts and discards are counted),
    then refresh what follows from them: final decisions, consensus, leaderboard, report."""
    from judging.review.pull import pull_run

    client = argilla_client(api_url, api_key, home)
    result = pull_run(run_dir, client=client, workspace=workspace, out=out,
                      rubrics_dir=rubrics_dir)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(result.responses.items()))
    console.print(f"responses: {counts or 'none yet'}", highlight=False)
    console.print(f"wrote {result.labels} label(s) from {len(result.datasets)} dataset(s) to "
                  f"{result.path}", highlight=False, soft_wrap=True)
    if refresh:
        from judging.resolve import read_plan
        from judging.review.pull import sync_plan_priorities

        previous = read_plan(run_dir)
        refresh_views(run_dir, labels_path=result.path, calibration_dir=calibration_dir,
                      event_path=event_path, rubrics_dir=rubrics_dir)
        if previous:
            # The re-plan moved claims: Argilla's queue follows it now, not at the next push.
            moved = sync_plan_priorities(run_dir, client=client, previous=previous,
                                         workspace=workspace)
            if moved.text():
                console.print(moved.text(), soft_wrap=True, highlight=False)
    else:
        console.print(f"not refreshed (--no-refresh): the leaderboard and the report say they "
                      f"are stale until `judging resolve {run_dir}`, and a review plan is not "
                      f"re-planned", soft_wrap=True,
                      highlight=False)


def refresh_views(run_dir: Path, *, labels_path: Path, calibration_dir: Path | None,
                  event_path: Path | None, rubrics_dir: Path | None) -> None:
    """One refresh after people answer, in the order each step reads the one before: final
    decisions, the consensus (it counts final verdicts), the leaderboard files (they show the
    consensus), the report. The dashboard decides live from the same files."""
    from judging.consensus import run_consensus
    from judging.report import write_html_report
    from judging.resolve import load_event_rules, write_leaderboard, write_resolution
    from judging.review.plan import replan_run

    done = write_resolution(run_dir, labels_path=labels_path, calibration_dir=calibration_dir,
                            rubrics_dir=rubrics_dir)
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(done.outcomes.items()))
    conflicts = f"; {done.conflicts} reviewer conflict(s), decided fail until settled" \
        if done.conflicts else ""
    console.print(f"resolved {done.claims} claim(s): {outcomes}{conflicts}", soft_wrap=True,
                  highlight=False)
    run_consensus(run_dir)
    written = write_leaderboard(run_dir, rules=load_event_rules(event_path),
                                calibration_dir=calibration_dir, rubrics_dir=rubrics_dir)
    report = write_html_report(run_dir, rubrics_dir=rubrics_dir)
    console.print(f"refreshed {run_dir / 'consensus.json'}, {written[2]} (and its CSVs), "
                  f"{report}", soft_wrap=True, highlight=False)
    # A review plan follows the answers: what is left of its budget goes where it matters now.
    replanned = replan_run(run_dir)
    if replanned is not None:
        console.print(replanned, soft_wrap=True, highlight=False, markup=False)


@review.group()
def users() -> None:
    """Reviewers of a workspace."""


@users.command("add")
@click.argument("username")
@click.option("--role", type=click.Choice(["annotator", "admin", "owner"]), default="annotator",
              show_default=True)
@click.option("--workspace", default="judging", show_default=True)
@click.option("--password", default=None, help="Default: a new random one (printed).")
@server_options
@friendly_errors
def users_add(username: str, role: str, workspace: str, password: str | None,
              api_url: str | None, api_key: str | None, home: Path) -> None:
    """Create a reviewer (if needed) in a workspace and print its login and API key."""
    from judging.review.users import add_reviewer

    client = argilla_client(api_url, api_key, home)
    reviewer = add_reviewer(client, username, role=role, workspace=workspace, password=password)
    console.print(f"{reviewer.role} {reviewer.username} in workspace {reviewer.workspace}",
                  highlight=False)
    console.print(f"  password: {reviewer.password}", highlight=False, soft_wrap=True)
    console.print(f"  API key:  {reviewer.api_key}", highlight=False, soft_wrap=True)
    console.print(f"  log in at {client.api_url}", highlight=False)


@review.command("plan")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--budget", type=click.IntRange(1, None), required=True,
              help="How many claims people can review now.")
@click.option("--random-share", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Share of the budget for the random calibration sample (it makes the "
                   "intervals valid; 0 leaves every estimate AI-only until one exists).")
@click.option("--top", "top_k", type=click.IntRange(1, None), default=10, show_default=True,
              help="The top places the plan tries to settle.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--explain", is_flag=True,
              help="Also say how many more reviews would settle the top places.")
@friendly_errors
def plan_command(run_dir: Path, budget: int, random_share: float, top_k: int, seed: int,
                 explain: bool) -> None:
    """Choose the claims people should review, and why: a random calibration sample (stratified
    by rubric and AI outcome) and targeted reviews where an answer can change an outcome.
    Writes RUN_DIR/review_plan.jsonl; a re-plan keeps the random sample already drawn."""
    from judging.resolve import run_claim_rows
    from judging.review.plan import make_plan, plan_summary, shortlisted_claims, write_plan

    rows = run_claim_rows(run_dir)
    plan = make_plan(rows, budget, random_share=random_share, k=top_k, seed=seed,
                     shortlisted=shortlisted_claims(run_dir))
    path = write_plan(run_dir, plan)
    for line in plan_summary(rows, plan, k=top_k, explain=explain, seed=seed):
        console.print(escape(line))
    console.print(f"Plan written to {escape(str(path))}")
