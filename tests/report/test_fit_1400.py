"""The report and the leaderboard fit a 1400-px window (issue 39: both scrolled sideways and
cut the final_* columns), in real Chromium, on the demo's run with its final decisions."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from tests.browser import Browser, chromium
from tests.conftest import EXAMPLES, REGISTRY, ROOT

pytestmark = pytest.mark.usefixtures("shared_measurements")

WIDTH = 1400
LABELS = ROOT / "calibration" / "sets" / "examples" / "labels.jsonl"
#: How far the page and its tables reach, and where the last leaderboard header ends.
MEASURE = """JSON.stringify({page: document.documentElement.scrollWidth,
  tables: [...document.querySelectorAll('table')].map(t => Math.ceil(t.getBoundingClientRect().right)),
  headers: [...document.querySelectorAll('th')].map(th => [th.textContent,
                                                      Math.ceil(th.getBoundingClientRect().right)])})"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("fit") / "run"
    for args in (["run", str(EXAMPLES / "submissions"), str(EXAMPLES / "logbooks"), "--claims",
                  str(REGISTRY), "--out", str(run), "--judge", "offline"],
                 ["calibrate", str(run), "--labels", str(LABELS), "--out",
                  str(run / "calibration")],
                 ["resolve", str(run), "--calibration", str(run / "calibration")],
                 ["leaderboard", str(run), "--event", str(EXAMPLES / "event-neurips2026.yaml"),
                  "--calibration", str(run / "calibration")],
                 ["report", str(run)]):
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 0, (args[0], done.output)
    return run


@pytest.fixture
def browser(tmp_path: Path):
    chromium()
    opened = Browser(tmp_path / "chromium", viewport=(WIDTH, 1600))
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.parametrize("page", ["report.html", "leaderboard.html"])
def test_the_page_fits_1400_px(demo: Path, browser: Browser, page: str) -> None:
    import json

    browser.navigate((demo / page).as_uri())
    browser.wait_for("document.readyState === 'complete'", f"{page} to load")
    time.sleep(0.5)
    shown = json.loads(browser.evaluate(MEASURE))
    assert shown["page"] <= WIDTH, shown["page"]
    assert max(shown["tables"]) <= WIDTH, shown["tables"]
    if page == "leaderboard.html":
        finals = [right for name, right in shown["headers"] if name.startswith("final_")]
        assert finals and max(finals) <= WIDTH, shown["headers"]
