"""Attacks of the issue 38 review on `judging run` (hostile submissions built by the test, the
CLI run as the organizer runs it: a process of its own, its stderr as the terminal gets it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE_LOGBOOK = (Path(__file__).resolve().parents[2] / "examples" / "logbooks"
                   / "dana-neurips26-4821")
#: An OSC (window title), an erase of the screen, an OSC 8 hyperlink and a bidi override (no
#: slash: a folder name).
ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b]8;;https:evil.example\x07link\x1b]8;;\x07\u202e"


def test_a_log_warning_quoting_a_submissions_folder_name_is_inert(tmp_path: Path) -> None:
    """A logbook page folder named with escape sequences is an orphan page: its warning goes
    through the log handler (rich builds that Text itself, past the console's own filter), and
    used to print the escapes raw on the organizer's terminal."""
    subs = tmp_path / "subs"
    logbook = subs / "dana"
    shutil.copytree(EXAMPLE_LOGBOOK, logbook)
    orphan = logbook / "pages" / f"old{ESCAPES}page"
    orphan.mkdir()
    (orphan / "page.md").write_text("# Old\n", encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", "from judging.cli import main; main()", "run", str(subs),
         "--out", str(tmp_path / "run"), "--judge", "offline"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "300"})
    assert result.returncode == 0, result.stderr
    assert "orphan page: pages/oldlinkpage/page.md" in result.stderr.replace("\n", "")
    for shown in (result.stdout, result.stderr):
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
