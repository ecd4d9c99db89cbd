"""A `judging rerun` that runs nothing says so: it printed "0 claim(s) re-run: none; wrote
RUN/reruns.jsonl. Judge with the results: run `judging run` ... again", when no file was written
and nothing was to be judged again."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main

pytestmark = pytest.mark.slow  # a run, then a rerun, through the CLI


def test_a_rerun_that_selects_nothing_writes_nothing_and_says_so(tmp_path: Path) -> None:
    space = tmp_path / "alice--repro-2508.18741"
    space.mkdir()
    (space / "README.md").write_text("---\nsdk: static\n---\n# R\n\n| Claim | Paper | Ours | "
                                     "Verdict |\n|---|---|---|---|\n| Top-1 | 94.1 | 93.8 | ✅ |\n")
    run = tmp_path / "run"
    judged = CliRunner().invoke(main, ["run", str(space), "--out", str(run), "--judge",
                                       "offline"])
    assert judged.exit_code == 0, judged.output
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    result = CliRunner().invoke(main, ["rerun", str(run), "--select", "falsified"],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "nothing re-run: no claim selected; no run file changed." in result.output
    assert "wrote" not in result.output and "Judge with the results" not in result.output
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
