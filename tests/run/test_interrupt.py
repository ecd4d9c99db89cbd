"""Ctrl-C on `judging run` says that the work is kept and how to resume (issue 39: it said only
"Aborted!"), exits 130, and the same command then resumes."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import EXAMPLES, JUDGING_CLI, REGISTRY


def _ctrl_c_as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_says_the_work_is_kept_and_the_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [*JUDGING_CLI, "run", str(EXAMPLES / "submissions"), str(EXAMPLES / "logbooks"),
               "--claims", str(REGISTRY), "--out", str(out), "--judge", "offline"]
    # As from a terminal: Ctrl-C's signal not ignored. Tests started as a background job of a
    # shell (as a CI runner may) ignore SIGINT, a child inherits that, and Python then never
    # raises KeyboardInterrupt: the run ends 0 (seen on a clean clone).
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=_ctrl_c_as_from_a_terminal)
    deadline = time.monotonic() + 120
    while not (out / "run.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
    flat = " ".join(err.split())
    assert "interrupted: the judgments finished so far are kept in the run directory; run the " \
           "same command again to resume" in flat
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "new judgment line(s)" in resumed.stdout
