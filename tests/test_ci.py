"""`.ci/run`: it runs `make test`, then fails when the work tree is not clean (a test that rewrote
a tracked file, or left a file behind), naming the files. Checked on a throwaway git checkout
holding the script, with a `make` on PATH that plays a test run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT


def checkout(tmp_path: Path, make_body: str) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy2(ROOT / ".ci" / "run", repo / ".ci" / "run")
    (repo / "tracked.md").write_text("as committed\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    make = bin_dir / "make"
    make.write_text(f"#!/usr/bin/env bash\n{make_body}\n")
    make.chmod(0o755)
    return repo, {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def ci(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(repo / ".ci" / "run")], env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_clean_test_run_passes(tmp_path: Path) -> None:
    repo, env = checkout(tmp_path, 'test "$1" = test && echo "tests passed"')
    done = ci(repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests passed" in done.stdout


def test_tests_that_rewrite_a_tracked_file_fail_ci(tmp_path: Path) -> None:
    repo, env = checkout(tmp_path, 'echo "rewritten by a test" > tracked.md; touch stray.json')
    done = ci(repo, env)
    assert done.returncode == 1
    assert "left the work tree changed" in done.stderr
    assert " M tracked.md" in done.stderr and "?? stray.json" in done.stderr


def test_failing_tests_fail_ci(tmp_path: Path) -> None:
    repo, env = checkout(tmp_path, "exit 2")
    assert ci(repo, env).returncode == 2


def test_the_licence_is_an_spdx_expression_with_its_file() -> None:
    """PEP 639: `project.license` as a table made every install print setuptools' deprecation
    warning (three times); an SPDX string and `license-files` need setuptools >= 77."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    files = project["project"]["license-files"]
    assert files and all((root / name).is_file() for name in files)
    assert "Apache License" in (root / files[0]).read_text()
    assert "setuptools>=77" in project["build-system"]["requires"]
