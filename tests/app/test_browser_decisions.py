"""The dashboard in a real headless Chromium follows what people decide: offline, its leaderboard
says in one line that no claim can pass and ranks the examples as they were built (Alice, Dana,
Carol, Bob); once reviewers' answers arrive (labels.jsonl, as `judging review pull` writes it)
the next page load ranks with them, drops that line, and shows a reviewer conflict as such.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judging.models import Label
from judging.resolve import NO_PASS_TEXT
from judging.rundir import RunStore
from tests.app.conftest import cli_env
from tests.app.test_browser import LOADED, TAB, wait_rows
from tests.argilla_server import free_port
from tests.browser import Browser, PageError, chromium, normalize
from tests.conftest import JUDGING_CLI

DANA = ("dana/neurips26-4821-logbook", "neurips26-4821/c1")
CAROL = ("carol/iclr27-0137-repro", "iclr27-0137/c5")
TOP = {"same_trend": True, "axes_and_scales": 5, "same_series": True,
       "values_within_tolerance": True, "no_misleading_cropping": True,
       "independent_reproduction": True, "overall_match": 5}
RULE = "document.querySelector('#board-rule').innerText"


def _labels(run: Path) -> list[Label]:
    """A reviewer passes Dana's c1 overall on both rubrics; another answers every figure
    criterion of Carol's c5 at its best and fails it overall (a conflict)."""
    refs = {(str(j.claim), j.rubric.id): j.rubric for j in RunStore.open(run, create=False).latest()
            if j.rubric is not None}
    now = datetime(2026, 12, 7, tzinfo=UTC)

    def label(claim, rubric_id, criterion, value, who):
        ref = refs[("::".join(claim), rubric_id)]
        return Label(claim={"submission_id": claim[0], "claim_id": claim[1]}, rubric=ref,
                     criterion=criterion, value=value, annotator=who, annotator_id=who,
                     updated_at=now, blind=False, dataset=f"{ref.id}-{ref.version}",
                     record_id=f"{claim[1]}-{ref.id}")

    found = [label(DANA, rubric, "overall_verdict", "pass", "rev-a")
             for rubric in ("figure-match", "verdict-justification")]
    found += [label(CAROL, "figure-match", c, v, "rev-b") for c, v in TOP.items()]
    found.append(label(CAROL, "figure-match", "overall_verdict", "fail", "rev-b"))
    return found


@pytest.fixture
def browser(tmp_path: Path):
    chromium()
    opened = Browser(tmp_path / "chromium", viewport=(1400, 2600))
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.timeout(300)
def test_the_dashboard_ranks_with_the_people(offline_run: Path, browser: Browser,
                                             tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(offline_run, run)
    home, port, env = tmp_path / "app-home", free_port(), cli_env(tmp_path)
    started = subprocess.run([*JUDGING_CLI, "app", str(run), "--background", "--port", str(port),
                              "--app-home", str(home), "--home", str(tmp_path / "no-argilla"),
                              "--calibration", str(tmp_path / "no-calibration")],
                             env=env, capture_output=True, text=True, timeout=150)
    assert started.returncode == 0, started.stdout + started.stderr
    url = f"http://127.0.0.1:{port}"
    try:
        browser.navigate(url)
        browser.wait_for(LOADED, "the dashboard's page-load refresh", timeout=60)
        board = wait_rows(browser, "#board", lambda r: len(r) == 4, "the leaderboard",
                          timeout=30)
        assert [r[1].split("/")[0] for r in board] == ["alice", "dana", "carol", "bob"], board
        # Nobody reviewed a random sample: each row says its rate has no interval (issue 42).
        assert all(any("AI-only, uncalibrated" in str(cell) for cell in r) for r in board), board
        rule = normalize(browser.evaluate(RULE))
        assert normalize(NO_PASS_TEXT) in rule and "fails (fewer first)" in rule
        # How sure the order is and what more review would buy, as `review plan --explain`
        # says it: with no random human sample, that it cannot say yet (issue 42).
        assert "Ranks: AI-only, uncalibrated" in rule, rule
        assert "What more review would buy: top 3: cannot say yet: no random human sample" \
            in rule, rule

        (run / "labels.jsonl").write_text("".join(
            label.model_dump_json(by_alias=True) + "\n" for label in _labels(run)))
        browser.navigate(url)
        browser.wait_for(LOADED, "the page-load refresh after the labels", timeout=60)
        board = wait_rows(browser, "#board", lambda r: r and r[0][1] == "::".join(DANA).split(
            "::")[0], "Dana first, on her passed claim", timeout=60)
        rule = normalize(browser.evaluate(RULE))
        assert "fails (fewer first)" in rule and "No claim passes yet" not in rule
        browser.navigate(f"{url}/?claim={'::'.join(CAROL)}")
        browser.wait_for(LOADED, "the claim page", timeout=60)
        browser.click(TAB.format(name=json.dumps("Claim")))
        browser.wait_for("(document.querySelector('#claim-panel') || {innerText: ''})"
                         ".innerText.includes('reviewer conflict')", "the conflict on the claim")
        panel = normalize(browser.evaluate("document.querySelector('#claim-panel').innerText"))
    except PageError as exc:
        pytest.fail(f"{exc}\n{browser.describe()}", pytrace=False)
    finally:
        subprocess.run([*JUDGING_CLI, "app", "stop", "--app-home", str(home)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert "fail (reviewer conflict)" in panel
    assert "overall fail (rev-b) but the reviewers' criteria make it pass" in panel


def test_the_demo_leaderboard_ranks_the_examples_as_built(offline_run: Path,
                                                          tmp_path: Path) -> None:
    """`make demo`'s leaderboard, offline (the CLI as the demo runs it): Alice (no fail), Dana
    (no fail, three registry claims not addressed), Carol (two fails), Bob (a copied figure and a
    missing series: two fails, two not addressed), with the rule and the no-pass line."""
    from click.testing import CliRunner

    from judging.cli import main

    run = tmp_path / "run"
    shutil.copytree(offline_run, run)
    calibration = ["--calibration", str(tmp_path / "no-calibration")]
    assert CliRunner().invoke(main, ["resolve", str(run), *calibration]).exit_code == 0
    said = CliRunner().invoke(main, ["leaderboard", str(run), *calibration])
    assert said.exit_code == 0, said.output
    import csv

    order = [r["submission"].split("/")[0] for r in
             csv.DictReader((run / "leaderboard_submissions.csv").open())]
    assert order == ["alice", "dana", "carol", "bob"]
    text = normalize(said.output)
    assert normalize(NO_PASS_TEXT) in text and "then fails (fewer first)" in text
    rule = (run / "leaderboard_rule.txt").read_text()
    assert NO_PASS_TEXT in rule and "failed:" in rule
