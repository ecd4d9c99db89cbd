"""Every benchmark script starts: its imports resolve against the package as it is now (a moved
name fails here, not in the middle of `make bench`). A module whose name starts with `_` is a
library of the scripts (loaded by them), not a script.

Each script runs `--help` as `python SCRIPT --help` would, in a process of its own, but the
processes are forked from one interpreter that has already imported what the scripts share
(the package, numpy, Pillow): one interpreter start for all of them, not one each (issue 43: each
start re-imported the same modules, about 3 s a script on this machine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))

#: Run in a fresh interpreter (argv: the results file, then the scripts): import the modules the
#: scripts share, then for each script fork a child that runs it as `__main__` with `--help`,
#: its output and exit status caught; a JSON line per script into the results file.
STARTER = r"""
import io, json, os, runpy, sys, traceback
from pathlib import Path

import numpy, PIL.Image, yaml  # noqa: F401  (what the scripts share: imported once, here)
import judging.cli, judging.run.measure, judging.signals, judging.intake  # noqa: F401

results, scripts = sys.argv[1], sys.argv[2:]
path0 = list(sys.path)
for script in scripts:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        out, err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = out, err
        sys.argv = [script, "--help"]
        sys.path[:] = [str(Path(script).parent), *path0[1:]]  # as `python SCRIPT` sets it
        code = 0
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                err.write(str(exc.code))
        except BaseException:
            err.write(traceback.format_exc())
            code = 1
        with os.fdopen(write, "w") as pipe:
            pipe.write(json.dumps({"script": script, "returncode": code,
                                   "stdout": out.getvalue(), "stderr": err.getvalue()}))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        line = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not line:
        line = json.dumps({"script": script, "returncode": -1, "stdout": "",
                           "stderr": f"the child ended without a result (status {status})"})
    with open(results, "a") as handle:
        handle.write(line + "\n")
"""


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each benchmark script's `--help`: exit code and output, by script path."""
    results = tmp_path_factory.mktemp("benchmarks") / "started.jsonl"
    done = subprocess.run([sys.executable, "-c", STARTER, str(results),
                           *map(str, BENCHMARKS)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    found = [json.loads(line) for line in results.read_text().splitlines()]
    return {item["script"]: item for item in found}


@pytest.mark.parametrize("script", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_benchmark_script_starts(script: Path, started: dict[str, dict]) -> None:
    done = started[str(script)]
    assert done["returncode"] == 0, done["stderr"][-2000:]
    assert "usage" in done["stdout"].lower()
