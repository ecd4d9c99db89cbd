"""After people answer, one command brings every view up to date, and every view that is not says
so; one review priority, computed by the push after calibration, is what Argilla holds and
what the dashboard's queue shows; reviewed records leave the queue; Argilla opens the highest
priority first. Through the real local Argilla server, the CLI as a user types it, and a real
headless Chromium for the annotation page's order.
"""

from __future__ import annotations

import csv
import html
import json
import shutil
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.app.queue import REVIEWER_CONFLICT, review_queue
from judging.calibrate.artifacts import TrustOptions
from judging.calibrate.run import calibrate_run
from judging.cli import main
from judging.review.push import PushOptions, connect, push_run, review_url
from judging.run.runner import RunRequest, run_judging
from tests.browser import Browser, PageError, chromium, normalize
from tests.conftest import REGISTRY, ROOT, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

FIG = "figure-match-1.4.0"
CONSTRUCTION = ROOT / "calibration" / "sets" / "examples" / "labels.jsonl"
CAROL_C5 = ("carol/iclr27-0137-repro", "iclr27-0137/c5")


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The examples judged offline and calibrated on their construction labels (as `make
    demo` does): the run and its calibration folder."""
    root = tmp_path_factory.mktemp("refresh")
    run = root / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=run, registry=REGISTRY,
                           measure_cache=module_measure_cache()))
    calibrate_run(run, labels_path=CONSTRUCTION, out=root / "calibration",
                  options=TrustOptions(bootstrap=100))
    return run, root / "calibration"


def _fresh(calibrated: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "run"
    shutil.copytree(calibrated[0], run)
    return run, calibrated[1]


def _record_ids(argilla, workspace: str) -> dict[tuple[str, str], tuple[str, str, float]]:
    """(submission, claim) -> (server id, record id, priority) in the review dataset."""
    client = connect(argilla.url, argilla.api_key)
    dataset = client.datasets(name=FIG, workspace=workspace)
    return {(r.metadata["submission_id"], r.metadata["claim_id"]):
            (str(r._server_id), str(r.id), r.metadata["priority"])
            for r in dataset.records(with_suggestions=False)}


def _respond(argilla, user, record: str, values: dict) -> None:
    with argilla.http(user.api_key) as http:
        response = http.post(f"/api/v1/records/{record}/responses",
                             json={"values": {k: {"value": v} for k, v in values.items()},
                                   "status": "submitted"})
        assert response.status_code in (200, 201), response.text


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_one_pull_refreshes_every_view_or_each_says_it_is_stale(argilla, calibrated,
                                                                tmp_path: Path) -> None:
    run, calibration = _fresh(calibrated, tmp_path)
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    server = ["--api-url", argilla.url, "--api-key", argilla.api_key]
    _cli("resolve", str(run), "--calibration", str(calibration))
    _cli("leaderboard", str(run))
    _cli("report", str(run))
    said = _cli("review", "push", str(run), "--workspace", workspace, "--blind-share", "0",
                "--calibration", str(calibration), *server)
    # Each dataset's review page, highest priority first (checked in Chromium below).
    assert f"review {FIG}, highest priority first: {argilla.url}/dataset/" in said
    assert "annotation-mode?sort=metadata.priority.desc" in said
    ids = _record_ids(argilla, workspace)
    reviewer = argilla.create_user(workspaces=[workspace])
    # Carol's faithful, participant-supplied figure: the AI passes its figure-match; the
    # reviewer fails it overall.
    _respond(argilla, reviewer, ids[CAROL_C5][0], {"overall_verdict": "fail"})

    # Pulled without the refresh: the leaderboard and the report say they are stale, and how
    # to refresh them, rather than show the old decisions as current.
    _cli("review", "pull", str(run), "--workspace", workspace, "--no-refresh", *server)
    said = _cli("leaderboard", str(run))
    assert "stale: the reviewers' labels were pulled after the last resolve" in said
    assert f"judging resolve {run}" in said
    assert "stale: the reviewers' labels were pulled" in \
        html.unescape((run / "leaderboard.html").read_text())
    assert "stale: the reviewers' labels were pulled" in \
        (run / "leaderboard_rule.txt").read_text()
    _cli("report", str(run))
    assert "stale: the reviewers' labels were pulled" in \
        html.unescape((run / "report.html").read_text())

    # One pull: decisions, consensus, leaderboard files and report follow the reviewer.
    said = _cli("review", "pull", str(run), "--workspace", workspace, "--calibration",
                str(calibration), *server)
    assert "resolved" in said and "refreshed" in said
    finals = {(f["claim"]["submission_id"], f["claim"]["claim_id"]): f for f in
              map(json.loads, (run / "final.jsonl").read_text().splitlines())}
    assert finals[CAROL_C5]["outcomes"]["figure-match@1.4.0"] == "fail"
    assert finals[CAROL_C5]["outcome"] == "fail" and "humans" in finals[CAROL_C5]["decided_by"]
    rows = {r["submission"]: r for r in
            csv.DictReader((run / "leaderboard_submissions.csv").open())}
    assert rows[CAROL_C5[0]]["failed"] == str(sum(
        1 for key, f in finals.items() if key[0] == CAROL_C5[0] and f["outcome"] == "fail"
        or key[0] == CAROL_C5[0] and f.get("ai_outcome") == "fail"))
    page = (run / "report.html").read_text()
    assert "stale:" not in page and "Final decisions and leaderboard" in page
    # The report's leaderboard carries the intervals' columns and what they rest on (issue 42).
    assert "<th>pass_rate_95</th>" in page and "Event pass rate:" in page
    carol_row = page[page.index("<td>iclr27-0137/c5</td>"):][:400]
    assert "fail" in carol_row and "humans" in carol_row
    assert (run / "consensus.json").stat().st_mtime_ns >= (run / "final.jsonl").stat().st_mtime_ns
    assert "stale" not in _cli("leaderboard", str(run))


def test_one_priority_from_push_to_queue_and_reviewed_records_leave(argilla, calibrated,
                                                                    tmp_path: Path) -> None:
    run, calibration = _fresh(calibrated, tmp_path)
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    queue, note = review_queue(run, calibration_dir=calibration, workspace=workspace)
    assert "Not pushed yet" in note and not any(row.pushed for row in queue)
    push_run(run, client=client, options=PushOptions(workspace=workspace, blind_share=0.0,
                                                     calibration_dir=calibration))
    ids = _record_ids(argilla, workspace)
    queue, note = review_queue(run, calibration_dir=calibration, workspace=workspace)
    shown = {row.record_id: row for row in queue}
    # Every record: the priority Argilla holds is the one the dashboard's queue shows, and the
    # calibration made a difference (an untrusted criterion raises a record above 0.1).
    for key, (_, record, priority) in ids.items():
        assert shown[record].pushed and shown[record].priority == priority, key
    assert any("untrusted_criteria" in row.reasons for row in queue)
    assert "older priority" not in note

    # Two records answered: one agrees with itself (it leaves), one is a conflict (it stays,
    # first, for a further reviewer).
    reviewer = argilla.create_user(workspaces=[workspace])
    _respond(argilla, reviewer, ids[CAROL_C5][0], {"overall_verdict": "fail"})
    conflict = ("alice/repro-neurips26-4821", "neurips26-4821/c1")
    _respond(argilla, reviewer, ids[conflict][0],
             {"independent_reproduction": "no", "overall_verdict": "pass"})
    _cli("review", "pull", str(run), "--workspace", workspace, "--calibration",
         str(calibration), "--api-url", argilla.url, "--api-key", argilla.api_key)
    from judging.app.data import load_run

    data = load_run(run, calibration_dir=calibration, workspace=workspace)
    records = [row.record_id for row in data.queue]
    assert ids[CAROL_C5][1] not in records
    assert "1 record(s) reviewed" in data.queue_note
    first = data.queue[0]
    assert (first.record_id, first.reasons[0]) == (ids[conflict][1], REVIEWER_CONFLICT)
    assert data.claims["::".join(conflict)].conflicts


@pytest.fixture
def browser(tmp_path: Path):
    chromium()
    opened = Browser(tmp_path / "chromium")
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.timeout(240)
def test_argilla_opens_the_highest_priority_first(argilla, calibrated, browser: Browser,
                                                  tmp_path: Path) -> None:
    """The page `review push` prints (and the dashboard links to) shows the record of the
    highest priority first, not the first one logged."""
    run, calibration = _fresh(calibrated, tmp_path)
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    result = push_run(run, client=client, options=PushOptions(
        workspace=workspace, blind_share=0.0, calibration_dir=calibration))
    ids = _record_ids(argilla, workspace)
    top = max(priority for _, _, priority in ids.values())
    first_logged = min(ids)  # claim keys in order: the order records were logged
    assert ids[first_logged][2] < top, "the test needs a first-logged record below the top"
    annotator = argilla.create_user(workspaces=[workspace])
    try:
        browser.navigate(f"{argilla.url}/sign-in")
        browser.wait_for("!!document.querySelector('input[name=Password]')", "the login form")
        browser.type_into("input[name=Username]", annotator.username)
        browser.type_into("input[name=Password]", annotator.password)
        browser.wait_for("!document.querySelector('form button[type=submit]').disabled",
                         "the enabled Sign in button")
        browser.evaluate("document.querySelector('form button[type=submit]').click()")
        browser.wait_for("!location.pathname.startsWith('/sign-in')", "the login to finish")
        browser.navigate(review_url(argilla.url, result.dataset_ids[FIG]))
        browser.wait_for("!!document.querySelector('.text_field_component .markdown-render')",
                         "a record on the annotation page")
        text = normalize(browser.evaluate("document.body.innerText"))
    except PageError as exc:
        pytest.fail(f"{exc}\n{browser.describe()}", pytrace=False)
    shown = [key for key in ids if normalize(f"{key[1]} · submission {key[0]}") in text]
    assert len(shown) == 1, (shown, text[:2000])
    assert ids[shown[0]][2] == top, (shown[0], ids[shown[0]][2], top)
