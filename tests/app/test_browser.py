"""The dashboard in a real headless Chromium: `judging app RUN_DIR --background` on a run made by
`judging run --judge offline` on the bundled examples; the leaderboard is switched to the registry
claims' consensus and back, filtered, and a claim is opened from the claims table (a mouse click
on its row).

The page must show the leaderboard ranked as `judging resolve` + `leaderboard_rows` rank it, only
the filtered row after filtering, and for the opened claim: its statement, the participant's
justification with the planted markup as text (no element, no script run), the very figure files
of the run (published, reproduced, diff), the judgment lines with their rationales, and the
consensus of the registry claim (its verdict or why there is none, and three reproductions; Bob's
copy is not independent, flagged by the consensus stage). The screenshot of the claim view is
copied to SCREENSHOT_COPY.

Chromium is driven over the DevTools protocol (tests/browser.py); Gradio pages need JavaScript.
Never skipped: without Chromium the test fails with the command that installs it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from judging.app.ui import REPRODUCTION_COLUMNS, board_columns
from judging.consensus import load_consensus
from judging.resolve import consensus_rows as registry_rows
from judging.resolve import decide_run, leaderboard_rows, rank_text
from judging.rundir import RunStore, read_not_addressed
from tests.app.conftest import OPENED, PLANTED, cli_env
from tests.argilla_server import free_port
from tests.browser import Browser, PageError, chromium
from tests.conftest import JUDGING_CLI

SCREENSHOT_COPY = Path(os.environ.get("JUDGING_APP_SCREENSHOT",
                                      "/tmp/judging-app-claim-view.png"))
VIEWPORT = (1400, 2600)

# The rows of a Gradio dataframe, as the cells' text (Gradio 6 draws a virtual grid of divs).
ROWS = """(sel => [...document.querySelectorAll(sel + ' [role=row]')]
  .filter(r => r.querySelector('[role=gridcell]'))
  .map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.textContent.trim())))"""

RADIO = """[...document.querySelectorAll('#board-by label')].find(
  l => l.innerText.trim() === {name})"""

TAB = """[...document.querySelectorAll('button[role=tab]')].find(b => b.innerText.trim() === {name})"""

FIGURES = """Promise.all(['published', 'reproduced', 'diff'].map(async kind => {
  const img = document.querySelector('#fig-' + kind + ' img');
  if (!img || !img.complete || !img.naturalWidth) return [kind, null];
  const blob = await (await fetch(img.currentSrc)).blob();
  const data = await new Promise(done => { const reader = new FileReader();
    reader.onload = () => done(reader.result); reader.readAsDataURL(blob); });
  return [kind, data.split(',')[1]];
}))"""


#: The page-load refresh has filled the page with the run as it is now (judging/app/ui.py).
LOADED = "!!document.querySelector('#loaded [data-loaded]')"


def open_dashboard(browser: Browser, url: str) -> None:
    """Open the dashboard and wait until its page-load refresh has run (before that, a click
    on a control can be overwritten by the refresh's answer)."""
    browser.navigate(url)
    browser.wait_for(LOADED, "the dashboard's page-load refresh", timeout=60)


def rows(browser: Browser, selector: str) -> list[list[str]]:
    return browser.evaluate(f"{ROWS}({json.dumps(selector)})")


def wait_rows(browser: Browser, selector: str, check, what: str, timeout: float = 20
              ) -> list[list[str]]:
    deadline = time.monotonic() + timeout
    found: list[list[str]] = []
    while time.monotonic() < deadline:
        found = rows(browser, selector)
        if found and check(found):
            return found
        time.sleep(0.1)
    raise PageError(f"timed out waiting for {what}; the table shows {found}")


def pixels(data: bytes) -> np.ndarray:
    import io

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


@pytest.fixture
def dashboard(offline_run: Path, tmp_path: Path):
    home, port = tmp_path / "app-home", free_port()
    env = cli_env(tmp_path)
    started = subprocess.run([*JUDGING_CLI, "app", str(offline_run), "--background", "--port",
                              str(port), "--app-home", str(home), "--home",
                              str(tmp_path / "no-argilla")],
                             env=env, capture_output=True, text=True, timeout=150)
    assert started.returncode == 0, started.stdout + started.stderr
    url = f"http://127.0.0.1:{port}"
    assert f"dashboard: {url}" in started.stdout, started.stdout
    assert f"judging app stop --app-home {home.resolve()}" in started.stdout
    try:
        yield url
    finally:
        stopped = subprocess.run([*JUDGING_CLI, "app", "stop", "--app-home", str(home)],
                                 env=env, capture_output=True, text=True, timeout=60)
        assert stopped.returncode == 0 and "Stopped the dashboard" in stopped.stdout, \
            stopped.stdout + stopped.stderr + (home / "app.log").read_text()
        assert not (home / "app.pid").exists()


@pytest.fixture
def browser(tmp_path: Path):
    chromium()
    opened = Browser(tmp_path / "chromium", viewport=VIEWPORT)
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.timeout(240)
def test_filter_the_leaderboard_and_open_a_claim(offline_run: Path, dashboard: str,
                                                 browser: Browser, tmp_path: Path) -> None:
    _, finals = decide_run(offline_run)
    by_submission, _ = leaderboard_rows(finals, read_not_addressed(offline_run))
    store = RunStore.open(offline_run, create=False)
    key = f"{OPENED[0]}::{OPENED[1]}"
    claim = store.claims()[key]
    lines = [j for j in store.latest() if str(j.claim) == key]
    figure_line = next(j for j in lines if j.rubric and j.rubric.id == "figure-match")
    rationale = next(a.rationale for a in figure_line.answers if a.rationale)
    screenshot = tmp_path / "claim-view.png"
    try:
        open_dashboard(browser, dashboard)
        board = wait_rows(browser, "#board", lambda r: len(r) == len(by_submission),
                          "the leaderboard", timeout=30)
        # Ranked as `judging leaderboard` ranks the same decisions: rank, submission, paper, ...
        columns = board_columns("submission")
        assert [r[1] for r in board] == [row["submission"] for row in by_submission], board
        assert [int(r[columns.index("claims")]) for r in board] == [
            row["claims"] for row in by_submission], board
        assert [r[0] for r in board] == [rank_text(row) for row in by_submission], board

        # The registry claims' consensus (unranked), as `judging leaderboard` tabulates it.
        registry = registry_rows(load_consensus(offline_run))
        browser.click(RADIO.format(name=json.dumps("registry claims")))
        board = wait_rows(browser, "#board", lambda r: [c[0] for c in r] == [
            row["registry_claim"] for row in registry], "the registry claims")
        assert [r[7:9] for r in board] == [[row["consensus"], str(row["support"])]
                                           for row in registry], board
        browser.click(RADIO.format(name=json.dumps("submissions")))
        wait_rows(browser, "#board", lambda r: [c[1] for c in r] == [
            row["submission"] for row in by_submission], "the leaderboard again")

        browser.type_into("#board-search textarea, #board-search input", "carol")
        board = wait_rows(browser, "#board", lambda r: len(r) == 1, "the filtered leaderboard")
        carol = next(row for row in by_submission if row["submission"].startswith("carol"))
        assert board[0][:3] == [rank_text(carol), carol["submission"], carol["paper"]], board

        browser.click(TAB.format(name=json.dumps("Claims")))
        browser.wait_for("!!document.querySelector('#claim-search textarea, #claim-search input')"
                         " && document.querySelector('#claims').getClientRects().length > 0",
                         "the Claims tab")
        browser.type_into("#claim-search textarea, #claim-search input", OPENED[1])
        claims = wait_rows(browser, "#claims", lambda r: len(r) == 3 and all(
            c[1] == OPENED[1] for c in r), f"the three reproductions of {OPENED[1]}")
        row = [c[0] for c in claims].index(OPENED[0])
        browser.click(f"document.querySelectorAll('#claims [role=row] [role=gridcell]')"
                      f"[{row * len(claims[0]) + 1}]")
        browser.wait_for(f"""(() => {{
            const panel = document.querySelector('#claim-panel');
            const figures = ['published', 'reproduced', 'diff'].map(
              k => document.querySelector('#fig-' + k + ' img'));
            return panel && panel.getClientRects().length > 0
              && panel.textContent.includes({json.dumps(OPENED[0])})
              && figures.every(i => i && i.complete && i.naturalWidth > 0)
              && document.querySelectorAll('#consensus-panel .jd-reproductions tbody tr')
                   .length === 3; }})()""",
                         "the claim view with its figures and consensus", timeout=30)
        state = browser.evaluate("""(() => ({
            panel: document.querySelector('#claim-panel').textContent,
            justification: document.querySelector('#claim-panel .jd-justification').textContent,
            consensus: [...document.querySelectorAll(
              '#consensus-panel .jd-reproductions tbody tr')].map(
              tr => [...tr.querySelectorAll('td')].map(td => td.textContent.trim())),
            columns: [...document.querySelectorAll('#consensus-panel .jd-reproductions th')]
              .map(th => th.textContent.trim()),
            summary: document.querySelector('#consensus-panel .jd-consensus-summary')
              .textContent,
            consensusFlags: document.querySelector('#consensus-panel .jd-consensus-flags')
              ?.textContent ?? '',
            judgments: document.querySelector('#judgments-panel').textContent,
            planted: [document.getElementById('planted') !== null,
                      !!document.querySelector('img[src="x"]'), window.__planted ?? null],
            text: document.body.innerText}))()""")
        figures = dict(browser.evaluate(FIGURES))
        browser.screenshot(screenshot)
    except PageError as exc:
        failed = tmp_path / "failure.png"
        try:
            browser.screenshot(failed)
            shutil.copyfile(failed, SCREENSHOT_COPY)
        except Exception as shot_error:
            failed = f"(none: {shot_error})"
        pytest.fail(f"{exc}\nscreenshot: {failed}\n{browser.describe()}", pytrace=False)
    shutil.copyfile(screenshot, SCREENSHOT_COPY)
    print("screenshot:", screenshot, "copied to", SCREENSHOT_COPY)
    context = f"\nscreenshot: {screenshot}\n{browser.describe()}"

    # The claim: statement and the participant's justification, markup shown as text only.
    flat = " ".join(state["panel"].split())
    assert " ".join(claim.claim.statement.split()) in flat, context
    assert PLANTED in state["justification"], context
    assert state["planted"] == [False, False, None], context

    # The figures are the run's own files (trimmed and resized by `judging run`).
    for kind in ("published", "reproduced", "diff"):
        assert figures.get(kind), f"no {kind} figure on the page" + context
        expected = (offline_run / getattr(figure_line.artifacts, kind)).read_bytes()
        assert np.array_equal(pixels(base64.b64decode(figures[kind])), pixels(expected)), kind

    # The judgments with their rationales, and the consensus of the registry claim.
    assert "figure-match@1.3.0" in state["judgments"], context
    assert " ".join(rationale.split()) in " ".join(state["judgments"].split()), context
    assert state["columns"] == REPRODUCTION_COLUMNS, state["columns"]
    consensus = {r[0].replace("(this one)", "").strip(): dict(zip(state["columns"], r))
                 for r in state["consensus"]}
    assert set(consensus) == {OPENED[0], "bob/neurips26-4821-check",
                              "dana/neurips26-4821-logbook"}, state["consensus"]
    assert "(this one)" in next(r[0] for r in state["consensus"] if OPENED[0] in r[0])
    bob, alice = consensus["bob/neurips26-4821-check"], consensus[OPENED[0]]
    # A copy is not independent support: the consensus stage flags it, and says why.
    assert bob["independent"] == "no" and bob["counted"] == "no", bob
    assert "copy" in bob["flags"] and "not_independent" in bob["flags"], bob
    assert "not_independent" in state["consensusFlags"] and \
        "copy of the published figure" in state["consensusFlags"], state["consensusFlags"]
    assert alice["independent"] == "yes" and alice["counted"] == "yes", alice
    assert PLANTED in alice["scale note"], alice  # participant text, shown as text
    # Final figure-match outcomes are pending (no calibration trusts the offline judge); the
    # AI's own outcome is shown beside them: Bob's copy fails, Alice's and Dana's pass.
    assert bob["figure match"] == "pending · AI fail", bob
    assert alice["figure match"] == "pending · AI pass", alice
    # The consensus verdict of the registry claim, and why there is none: with Bob's copy out,
    # two counted verdicts are too few.
    reason = load_consensus(offline_run).claim(OPENED[1]).reason
    summary = " ".join(state["summary"].split())
    assert "consensus none" in summary and f"no consensus: {reason}" in summary, summary
    assert "2 of 3 reproduction(s) independent" in summary, summary
    assert consensus["dana/neurips26-4821-logbook"]["z-score"] == "n/a"  # one value: no spread

    # The screenshot shows the figures (matplotlib's default blue is in their thin curves).
    shot = np.asarray(Image.open(screenshot).convert("RGB")).reshape(-1, 3).astype(int)
    blue = int((np.abs(shot - [31, 119, 180]).sum(axis=1) < 40).sum())
    print(f"screenshot: {blue} figure-blue pixels")
    assert blue > 100, f"only {blue} figure-blue pixels: the figures are not painted{context}"
