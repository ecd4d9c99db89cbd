"""`judging watch` with no network (issue 39): each retry of the Hub client is printed once, as
a plain line (no padding to a thousand columns), and a watch whose first poll fails leaves no
run folder behind."""

from __future__ import annotations

import os
import socket
import subprocess
from collections import Counter
from pathlib import Path

from tests.conftest import JUDGING_CLI


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_watch_without_the_hub_says_each_retry_once_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
           "HF_HUB_OFFLINE": "0"}
    done = subprocess.run([*JUDGING_CLI, "watch", "--discover", "some-tag", "--out", str(out),
                           "--polls", "1", "--every", "1s"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    retries = [line for line in lines if "Retry" in line]
    assert retries, done.stderr
    repeated = {line: n for line, n in Counter(lines).items() if n > 1 and "Retry" in line}
    assert repeated == {}, repeated
    assert max(len(line) for line in lines) < 400
    assert all(line == line.rstrip() for line in lines)
    assert "cannot reach the Hugging Face Hub" in done.stderr
    assert not out.exists()
