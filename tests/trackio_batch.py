"""Several `trackio logbook ...` commands in one trackio interpreter (issue 43).

The tests' logbooks are made with the real trackio CLI, from its own environment (JUDGING_TRACKIO;
it wants pillow<13, so it is never imported here). Each command as a process of its own started
an interpreter that imports trackio (about 0.6 s of CPU; a logbook takes a dozen commands): here
one interpreter runs the commands one after the other through trackio's own `trackio.cli.main`,
with the arguments a shell would give it, in the workspace as its working directory. What is
written is what the commands write one by one: the same entry point, the same files; a `run`
cell still runs its command as a process of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from tests.conftest import trackio_cli

#: Runs in the trackio environment's interpreter: each command's arguments as `sys.argv`, its exit
#: status (trackio's `sys.exit`, or `main`'s return as the console script passes it on) and what
#: it printed, as one JSON list on the last line of stdout.
_DRIVER = r"""
import contextlib, io, json, sys
from trackio.cli import main

results = []
for argv in json.loads(sys.argv[1]):
    sys.argv = ["trackio", "logbook", *argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main() or 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    results.append({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(results))
"""


@dataclass(frozen=True)
class TrackioResult:
    """One command's exit status and output (the fields of a CompletedProcess the tests read)."""

    returncode: int
    stdout: str
    stderr: str


def _interpreter(cli: str) -> str:
    """The interpreter of the trackio console script: the `python` of its environment beside it
    (a venv's bin/), else its `#!` line."""
    beside = Path(cli).with_name("python")
    if beside.is_file():
        return str(beside)
    first = Path(cli).read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("#!") and "python" in first, f"{cli}: no Python interpreter found"
    return first[2:].strip()


def tk_batch(workspace: Path, *commands: list[str]) -> list[TrackioResult]:
    """`trackio logbook COMMAND...` for each command, in order, in `workspace`; one result each
    (a command that fails does not stop the next: the caller asserts on each)."""
    cli = trackio_cli()
    assert cli is not None, "no trackio CLI"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRACKIO_NO_TELEMETRY": "1"}
    done = subprocess.run([_interpreter(cli), "-c", _DRIVER, json.dumps(list(commands))],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = [TrackioResult(**r) for r in json.loads(done.stdout.splitlines()[-1])]
    assert len(results) == len(commands)
    return results


def built_once(tmp_path_factory: pytest.TempPathFactory, key: str,
               build: Callable[[Path], None], name: str = "workspace") -> Path:
    """A workspace `build` makes, made once a test run for every module that asks for `key`
    (modules that read the same logbook; under xdist `--dist loadfile` they run in different
    processes, which share the parent of their temporary folders, as the measurement cache
    does): the first to ask builds it under a file lock, the others wait and read it. Readers
    must not change it (copy it to change it)."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "logbooks"
    shared.mkdir(exist_ok=True)
    workspace = shared / key / name
    done = shared / f"{key}.built"
    with FileLock(shared / f"{key}.lock"):
        if not done.is_file():
            shutil.rmtree(shared / key, ignore_errors=True)  # a build that failed half-way
            workspace.mkdir(parents=True)
            build(workspace)
            done.touch()
    return workspace
