"""Files are created with the process umask: 0644 under umask 022 (a colleague or a web server can
read a run), 0640 under 027, never the 0600 of a bare temporary file.

Once through the atomic writers (judging/atomic.py) under both masks, and once end to end: the
command line (`judging run`, `consensus`, `report`, `resolve`, `leaderboard`) in a process started
with umask 022 (each command a process of its own, forked from a server that imported the package
once: tests/forked_cli.py), then every file of the run directory is checked.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from judging.atomic import (
    atomic_lines,
    default_file_mode,
    write_bytes_atomic,
    write_json_atomic,
    write_jsonl_atomic,
    write_png_atomic,
    write_text_atomic,
)
from judging.models import ClaimKey
from tests.app.conftest import cli_env
from tests.conftest import EXAMPLES, JUDGING_SCRIPT, REGISTRY, SUBMISSIONS
from tests.forked_cli import ForkedCli


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o027, 0o640),
                                                 (0o077, 0o600)])
def test_atomic_writes_follow_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    previous = os.umask(umask)
    try:
        assert default_file_mode() == expected
        write_bytes_atomic(tmp_path / "a.bin", b"x")
        write_text_atomic(tmp_path / "a.txt", "x")
        write_json_atomic(tmp_path / "a.json", {"a": 1})
        write_jsonl_atomic(tmp_path / "a.jsonl", [ClaimKey(submission_id="s", claim_id="c")])
        write_png_atomic(Image.new("RGB", (2, 2)), tmp_path / "a.png")
        with atomic_lines(tmp_path / "b.jsonl") as write:
            write(ClaimKey(submission_id="s", claim_id="c"))
        # An explicit mode (a secret's 0600) is kept whatever the mask.
        write_text_atomic(tmp_path / "secret", "k", mode=0o600)
    finally:
        os.umask(previous)
    modes = {p.name: oct(mode(p)) for p in tmp_path.iterdir()}
    assert modes == {**{name: oct(expected) for name in ("a.bin", "a.txt", "a.json", "a.jsonl",
                                                         "a.png", "b.jsonl")},
                     "secret": oct(0o600)}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCli]:
    base = tmp_path_factory.mktemp("cli")
    # Imported under another mask than the commands run under: a mode read when a module is
    # imported (rather than when a file is written) would show here as 0600.
    server = ForkedCli.start(base, env=cli_env(base), argv0=str(JUDGING_SCRIPT), umask=0o077)
    yield server
    server.stop()


@pytest.mark.timeout(600)
def test_a_run_directory_is_readable_under_umask_022(tmp_path: Path, forked: ForkedCli) -> None:
    run = tmp_path / "run"
    env = cli_env(tmp_path)

    def cli(*args: str) -> None:
        done = forked.run(list(args), env=env, timeout=300, umask=0o022)
        assert done.returncode == 0, done.stdout + done.stderr

    cli("run", str(SUBMISSIONS / "alice-neurips26-4821"), str(EXAMPLES / "logbooks"),
        "--claims", str(REGISTRY), "--judge", "offline", "--out", str(run))
    cli("consensus", str(run))
    cli("report", str(run))
    cli("resolve", str(run), "--calibration", str(tmp_path / "no-calibration"))
    cli("leaderboard", str(run))
    files = [p for p in run.rglob("*") if p.is_file()]
    named = {p.name for p in files}
    assert {"report.html", "run.json", "final.jsonl", "decisions.jsonl", "consensus.json",
            "judgments.jsonl", "leaderboard.html", "not_addressed.jsonl"} <= named, named
    wrong = {str(p.relative_to(run)): oct(mode(p)) for p in files if mode(p) != 0o644}
    assert not wrong, f"not 0644 under umask 022: {wrong}"
    folders = {str(p.relative_to(run)): oct(mode(p)) for p in run.rglob("*")
               if p.is_dir() and mode(p) != 0o755}
    assert not folders, f"folders not 0755 under umask 022: {folders}"
