"""`judging rerun` as a user who is not root (issue 38): a test user made for the test runs
`judging run`, `judging rerun --estimate` and `judging rerun` on a small submission. bubblewrap
makes a user namespace; no cgroup can be made (nothing delegated), so the estimate, the run and
every record say that memory is bounded per process only. Where user namespaces are disabled,
the rerun refuses with the reason instead. Skipped (with why) where no user can be made."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from pathlib import Path

import pytest

import judging
from judging.rerun.environment import NETWORK_SETTINGS
from tests.conftest import SubmissionBuilder
from tests.rerun.conftest import need_sandbox, script_claim

CHECKOUT = Path(judging.__file__).resolve().parents[1]
PER_PROCESS = "memory is bounded per process only"


def _as_user(user: str, home: Path, python: list[str], *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.pathsep.join([str(Path(shutil.which("uv") or
                                                                "/usr/bin/uv").parent),
                                                      "/usr/local/bin", "/usr/bin", "/bin"]),
           "LANG": "C.UTF-8", "COLUMNS": "200",
           # the organizer's settings that reach the package registry (its CA, its proxy)
           **{name: os.environ[name] for name in NETWORK_SETTINGS if name in os.environ}}
    return subprocess.run(["runuser", "-u", user, "--", "env", "-i",
                           *(f"{k}={v}" for k, v in env.items()), *python, *args],
                          capture_output=True, text=True, timeout=600, cwd=home)


def _python_for(user: str, home: Path) -> list[str]:
    """How the user starts this package: this interpreter when the user may run it, else the
    system's interpreter of the same version with this environment's packages on its path (a
    venv under root's 0700 home is out of an ordinary user's reach)."""
    paths = [str(CHECKOUT)]
    candidates = [sys.executable]
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if system.is_file():
        candidates.append(str(system))
    for candidate in candidates:
        if candidate != sys.executable:
            paths += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
        python = ["env", f"PYTHONPATH={os.pathsep.join(paths)}", candidate]
        probe = _as_user(user, home, python, "-c", "import judging.cli")
        if probe.returncode == 0:
            return python
    pytest.skip(f"the test user cannot import this package with {candidates}")


@pytest.fixture
def test_user():
    if os.geteuid() != 0:
        pytest.skip("making a test user needs root")
    if not shutil.which("useradd") or not shutil.which("runuser"):
        pytest.skip("useradd and runuser are not installed here")
    name = f"jt{uuid.uuid4().hex[:10]}"
    made = subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"this machine does not allow a test user: {made.stderr.strip()}")
    home = Path(tempfile.mkdtemp(prefix="judging-nonroot-"))
    try:
        yield name, home
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        if not os.environ.get("R38C_KEEP"):
            shutil.rmtree(home, ignore_errors=True)


def test_rerun_as_a_user_works_or_refuses_and_says_memory_is_per_process(test_user) -> None:
    need_sandbox()
    user, home = test_user
    builder = SubmissionBuilder(home / "subs" / "sub", "tester/sub-1", "paper-1")
    builder.file("requirements.txt", "iniconfig==2.0.0\n")
    script_claim(builder, "paper-1/c1", "eval.py",
                 "import json, iniconfig\nprint(json.dumps({'top1': 93.8}))\n")
    builder.write()
    subprocess.run(["chown", "-R", user, str(home)], check=True)
    python = _python_for(user, home)
    cli = [*python, "-c", "from judging.cli import main; main(prog_name='judging')"]
    run, cache = home / "run", home / "cache"
    judged = _as_user(user, home, cli, "run", str(home / "subs"), "--out", str(run), "--judge",
                      "offline")
    assert judged.returncode == 0, judged.stdout + judged.stderr
    estimate = _as_user(user, home, cli, "rerun", str(run), "--env-cache", str(cache),
                        "--estimate")
    rerun = _as_user(user, home, cli, "rerun", str(run), "--env-cache", str(cache),
                     "--timeout", "120")
    if rerun.returncode != 0:  # refused before anything ran: with the reason, in one line
        assert "bubblewrap cannot start here" in rerun.stderr, rerun.stdout + rerun.stderr
        assert "Traceback" not in rerun.stderr
        return
    assert PER_PROCESS in estimate.stdout, estimate.stdout + estimate.stderr
    assert PER_PROCESS in rerun.stdout, rerun.stdout
    lines = [json.loads(line) for line in (run / "reruns.jsonl").read_text().splitlines()]
    assert len(lines) == 1
    record = lines[0]
    assert record["status"] == "reproduced", record
    assert record["memory_limit"] == "per process"
    assert "uid own" in record["sandbox"] and "memory per process only" in record["sandbox"]
