"""`make demo` with port 6900 taken still completes (issue 39): the review server (and the
dashboard) take the next free port above a taken one when told `--free-port`, and say which; the
Makefile tells them to, and its help names the variables that choose the ports."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

import httpx

from judging.review.server import process as review_server
from tests.argilla_server import free_port
from tests.conftest import JUDGING_CLI, ROOT


def test_a_taken_port_gives_way_to_the_next_free_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", free_port()))
        squatter.listen()
        taken = squatter.getsockname()[1]
        refused = subprocess.run([*JUDGING_CLI, "review", "serve", "--background", "--port",
                                  str(taken), "--home", str(home)], capture_output=True,
                                 text=True, timeout=120)
        assert refused.returncode == 1 and "already in use" in refused.stderr
        started = subprocess.run([*JUDGING_CLI, "review", "serve", "--background", "--port",
                                  str(taken), "--free-port", "--home", str(home)],
                                 capture_output=True, text=True, timeout=180)
        try:
            assert started.returncode == 0, started.stdout + started.stderr
            said = re.search(rf"port {taken} on 127\.0\.0\.1 is in use: listening on (\d+) "
                             rf"instead", started.stderr)
            assert said, started.stderr
            port = int(said.group(1))
            assert port > taken and f"http://127.0.0.1:{port}" in started.stdout
            assert httpx.get(f"http://127.0.0.1:{port}/api/v1/me", timeout=10,
                             headers={"X-Argilla-Api-Key": "argilla.apikey"}).status_code == 200
            status = subprocess.run([*JUDGING_CLI, "review", "status", "--home", str(home)],
                                    capture_output=True, text=True, timeout=60)
            assert status.returncode == 0 and f":{port}" in status.stdout
        finally:
            subprocess.run([*JUDGING_CLI, "review", "stop", "--home", str(home)],
                           capture_output=True, text=True, timeout=60)
    assert not (home / review_server.PID_FILE).exists()


def test_the_demo_asks_for_a_free_port_and_says_how_to_choose() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"judging review serve --background .*--port \$\(REVIEW_PORT\) --free-port",
                     makefile)
    assert re.search(r"judging app \$\(DEMO_OUT\) --background --port \$\(APP_PORT\) --free-port",
                     makefile)
    shown = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
    assert "REVIEW_PORT=6900" in shown.stdout and "APP_PORT=7860" in shown.stdout


def test_the_readme_names_the_command_and_the_ports() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "The command is `.venv/bin/judging`." in readme
    assert "source .venv/bin/activate" in readme
    assert "make demo REVIEW_PORT=6910 APP_PORT=7870" in readme


def test_a_rerun_of_the_demo_says_the_pulled_labels_go_and_where_the_answers_stay(
        tmp_path: Path) -> None:
    out = tmp_path / "runs" / "demo"
    out.mkdir(parents=True)
    (out / "labels.jsonl").write_text('{"a": 1}\n{"b": 2}\n{"c": 3}\n')
    # the demo's own recipe line, as make would run it (make -n prints it; nothing installs)
    recipe = subprocess.run(["make", "-n", "demo", "VENV=/nonexistent", f"DEMO_OUT={out}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    block = re.search(r"^if \[ -s .*?^fi$", recipe, re.MULTILINE | re.DOTALL)
    assert block, recipe
    said = subprocess.run(["bash", "-c", block.group(0)], capture_output=True, text=True,
                          timeout=60)
    assert said.returncode == 0
    assert f"removing the previous {out}, with the 3 label(s) pulled into it" in said.stdout
    assert "the answers are kept in Argilla" in said.stdout and "review pull" in said.stdout
