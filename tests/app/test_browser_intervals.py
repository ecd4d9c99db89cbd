"""The dashboard in a real headless Chromium shows the intervals `judging leaderboard` shows once
people reviewed a plan's random sample (issue 42): the event's pass rate with its 95% interval
and the human-only one, each submission's rank interval, and whether the top places are
settled."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judging.models import Label
from judging.resolve import read_plan, resolve_run, run_leaderboard
from judging.rundir import RunStore
from tests.app.conftest import cli_env
from tests.app.test_browser import LOADED, wait_rows
from tests.app.test_browser_decisions import RULE, browser  # noqa: F401 - the fixture
from tests.argilla_server import free_port
from tests.browser import Browser, PageError, normalize
from tests.conftest import JUDGING_CLI

SAMPLE = 12  # of the 17 addressed claims: an event interval needs 10 random labels


def _random_labels(run: Path) -> list[Label]:
    """A reviewer answers every claim of the plan's random sample overall, on each of its
    rubrics: one claim in three fails, the others pass (not unanimous: an interval exists)."""
    sample = [p.claim_key for p in read_plan(run) if p.part == "random"]
    store = RunStore.open(run, create=False)
    refs = [(str(j.claim), j.rubric) for j in store.latest()
            if j.rubric is not None and str(j.claim) in sample]
    store.close()
    now = datetime(2026, 12, 7, tzinfo=UTC)
    labels = []
    for key, ref in refs:
        submission, claim = key.split("::")
        labels.append(Label(
            claim={"submission_id": submission, "claim_id": claim}, rubric=ref,
            criterion="overall_verdict", value="fail" if sample.index(key) % 3 == 0 else "pass",
            annotator="rev-r", annotator_id="rev-r", updated_at=now, blind=True,
            dataset=f"{ref.id}-{ref.version}-calibration", record_id=f"{claim}-{ref.id}"))
    return labels


@pytest.mark.timeout(300)
def test_the_dashboard_shows_the_leaderboards_intervals(offline_run: Path,
                                                        browser: Browser,  # noqa: F811
                                                        tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(offline_run, run)
    env = cli_env(tmp_path)
    planned = subprocess.run([*JUDGING_CLI, "review", "plan", str(run), "--budget", str(SAMPLE),
                              "--random-share", "1", "--top", "2"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    (run / "labels.jsonl").write_text("".join(label.model_dump_json(by_alias=True) + "\n"
                                              for label in _random_labels(run)))
    # What `judging leaderboard` says of the same files: the dashboard must say the same.
    resolve_run(run, calibration_dir=tmp_path / "no-calibration")
    board = run_leaderboard(run)
    event_line, top_line = board.uncertainty
    assert board.event.interval is not None and f"{SAMPLE} random human labels" in event_line
    ranks = {row["submission"]: row["rank_95"] for row in board.submissions}
    rates = {row["submission"]: row["pass_rate_95"] for row in board.submissions}
    assert all(ranks.values()) and "–" in "".join(ranks.values())

    home, port = tmp_path / "app-home", free_port()
    started = subprocess.run([*JUDGING_CLI, "app", str(run), "--background", "--port", str(port),
                              "--app-home", str(home), "--home", str(tmp_path / "no-argilla"),
                              "--calibration", str(tmp_path / "no-calibration")],
                             env=env, capture_output=True, text=True, timeout=150)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        browser.navigate(f"http://127.0.0.1:{port}")
        browser.wait_for(LOADED, "the dashboard's page-load refresh", timeout=60)
        shown = wait_rows(browser, "#board", lambda r: len(r) == len(ranks), "the leaderboard",
                          timeout=30)
        rule = normalize(browser.evaluate(RULE))
    except PageError as exc:
        pytest.fail(f"{exc}\n{browser.describe()}", pytrace=False)
    finally:
        subprocess.run([*JUDGING_CLI, "app", "stop", "--app-home", str(home)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert normalize(event_line) in rule, rule
    # (Markdown shows a command in backticks as code, without them)
    assert normalize(top_line.replace("`", "")) in rule, rule
    assert "What more review would buy: top 3: " in rule and "cannot say" not in rule, rule
    for row in shown:
        submission = next(s for s in ranks if any(s in str(c) for c in row))
        # Each row carries its rank interval, and its rate's (none here: too few random labels
        # per submission, and it says so) as the leaderboard's CSV has them.
        assert ranks[submission] in row, row
        assert rates[submission] in row, " | ".join(map(str, row))
