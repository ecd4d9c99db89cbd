"""Every benchmark script starts: its imports resolve against the package as it is now (a moved
name fails here, not in the middle of `make bench`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_benchmark_script_starts(script):
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
