"""Every benchmark script starts: its imports resolve against the package as it is now (a moved
name fails here, not in the middle of `make bench`). A module whose name starts with `_` is a
library of the scripts (loaded by them), not a script."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_benchmark_script_starts(script):
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
