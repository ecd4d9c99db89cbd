"""The dashboard follows its run directory: a running `judging app RUN_DIR --background` is left
running while the run changes under it (human labels arrive as `review pull` writes them, a new
submission's judgments are appended as `judging run` or `judging watch` append them), and a
reload of the page in a real Chromium shows the change, with no restart. Also `LiveData` itself:
it reads the run again only when a file changed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judging.app import load_run
from judging.app.live import LiveData, run_roots
from judging.app.ui import board_columns
from judging.models import Judgment, Label
from judging.rubrics import RubricLibrary, load_rubric_file
from judging.rundir import RunStore
from tests.app.conftest import cli_env
from tests.app.test_browser import TAB, open_dashboard, wait_rows
from tests.argilla_server import free_port
from tests.browser import Browser, PageError, chromium
from tests.conftest import JUDGING_CLI, RUBRICS

#: Alice's figure claim: no calibration trusts the offline judge, so it waits for review.
DECIDED = ("alice/repro-neurips26-4821", "neurips26-4821/c1")
NEWCOMER = "erin/neurips26-4821-late"


def labels_passing(run: Path, submission: str, claim_id: str) -> list[Label]:
    """A reviewer's labels that pass every applicable criterion of one claim, as `review pull`
    writes them (the rubric versions and hashes of the claim's judgment lines)."""
    library = RubricLibrary(RUBRICS)
    labels = []
    for line in RunStore.open(run, create=False).latest():
        if (line.claim.submission_id, line.claim.claim_id) != (submission, claim_id) or \
                line.rubric is None or line.judge != "offline":
            continue
        rubric = load_rubric_file(library.entry(str(line.rubric)).path)
        for criterion in rubric.criteria:
            if not criterion.applies(verdict=line.verdict, kind=line.kind):
                continue
            answer = line.answer(criterion.id)
            if answer is not None and answer.status.value == "not_applicable":
                continue
            # a category (verdict-justification 1.2.0's own verdict) neither passes nor fails
            value = True if criterion.scale.value == "binary" else \
                criterion.categories[0] if criterion.categories else max(criterion.levels)
            labels.append(Label(claim=line.claim, rubric=line.rubric, criterion=criterion.id,
                                value=value, annotator="reviewer-1", annotator_id="u1",
                                updated_at=datetime.now(UTC), blind=False, dataset="d",
                                record_id=f"r-{criterion.id}"))
    assert labels
    return labels


def newcomer_lines(run: Path) -> list[Judgment]:
    """A new submission's judgment lines (Carol's, under another id), as a run appends them."""
    lines = [j for j in RunStore.open(run, create=False).latest()
             if j.claim.submission_id == "carol/iclr27-0137-repro"]
    return [j.model_copy(update={"claim": j.claim.model_copy(update={
        "submission_id": NEWCOMER}), "input_hash": j.input_hash + "-late"}) for j in lines]


def append_lines(path: Path, items) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.model_dump_json() + "\n")


def test_live_data_reads_again_only_when_the_run_changed(offline_run: Path,
                                                          tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(offline_run, run)
    reads = []

    def load():
        reads.append(time.monotonic())
        return load_run(run, calibration_dir=tmp_path / "no-calibration")

    live = LiveData(load, roots=run_roots(run, tmp_path / "no-calibration"))
    first = live.current()
    assert live.current() is first and len(reads) == 1  # nothing changed: no second read
    key = "::".join(DECIDED)
    assert first.claims[key].outcome_label.startswith("AI ")
    append_lines(run / "labels.jsonl", labels_passing(run, *DECIDED))
    second = live.current()
    assert len(reads) == 2 and second.claims[key].outcome == "pass"
    # A read that fails keeps the data shown, and says why.
    (run / "judgments.jsonl").write_text("{not json\n")
    third = live.current()
    assert third is second and live.problem and "could not re-read" in live.problem


@pytest.mark.timeout(300)
def test_a_reload_shows_the_run_as_it_is_now(offline_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(offline_run, run)
    home, port, env = tmp_path / "app-home", free_port(), cli_env(tmp_path)
    started = subprocess.run([*JUDGING_CLI, "app", str(run), "--background", "--port", str(port),
                              "--app-home", str(home), "--home", str(tmp_path / "no-argilla"),
                              "--calibration", str(tmp_path / "no-calibration")],
                             env=env, capture_output=True, text=True, timeout=150)
    assert started.returncode == 0, started.stdout + started.stderr
    url = f"http://127.0.0.1:{port}"
    chromium()
    browser = Browser(tmp_path / "chromium", viewport=(1400, 1600))
    submission_column = 1
    try:
        open_dashboard(browser, url)
        board = wait_rows(browser, "#board", lambda r: len(r) == 4, "the leaderboard")
        alice = next(r for r in board if r[submission_column] == DECIDED[0])
        columns = board_columns("submission")
        passed = columns.index("passed")
        assert alice[passed] == "0", (columns, alice)
        assert NEWCOMER not in {r[submission_column] for r in board}

        # The run changes under the running app: a reviewer's labels, a new submission.
        append_lines(run / "labels.jsonl", labels_passing(run, *DECIDED))
        append_lines(run / "judgments.jsonl", newcomer_lines(run))

        open_dashboard(browser, url)  # a reload
        board = wait_rows(browser, "#board", lambda r: len(r) == 5,
                          "the leaderboard with the new submission")
        alice = next(r for r in board if r[submission_column] == DECIDED[0])
        assert alice[passed] == "1", (columns, alice)
        assert alice[0] == "1", alice  # the only submission with a pass ranks first
        assert NEWCOMER in {r[submission_column] for r in board}
        browser.click(TAB.format(name=json.dumps("Claims")))
        browser.wait_for("document.querySelector('#claims').getClientRects().length > 0",
                         "the Claims tab")
        wait_rows(browser, "#claims", lambda r: any(
            c[0] == DECIDED[0] and c[1] == DECIDED[1] and c[5] == "pass" for c in r),
            "Alice's claim decided by the reviewer")
        browser.type_into("#claim-search textarea, #claim-search input", "erin")
        claims = wait_rows(browser, "#claims", lambda r: len(r) == 5 and all(
            c[0] == NEWCOMER for c in r), "the new submission's claims")
        assert {c[1] for c in claims} == {f"iclr27-0137/c{i}" for i in range(1, 6)}
    except PageError as exc:
        shot = browser.screenshot(tmp_path / "failure.png")
        pytest.fail(f"{exc}\nscreenshot: {shot}\n{browser.describe()}", pytrace=False)
    finally:
        browser.close()
        stopped = subprocess.run([*JUDGING_CLI, "app", "stop", "--app-home", str(home)],
                                 env=env, capture_output=True, text=True, timeout=60)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
