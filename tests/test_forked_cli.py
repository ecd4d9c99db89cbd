"""The forked CLI (tests/forked_cli.py) gives what the console script gives: the same exit code,
stdout and stderr, in the caller's folder, environment and umask, from Python and from a shell."""

from __future__ import annotations

import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.conftest import cli_env
from tests.conftest import HOSTILE, JUDGING_CLI, SubmissionBuilder
from tests.forked_cli import ForkedCli

pytestmark = pytest.mark.slow  # a server importing the package, and the console script


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCli]:
    base = tmp_path_factory.mktemp("forked")
    server = ForkedCli.start(base, env=cli_env(base))
    yield server
    server.stop()


@pytest.mark.parametrize("args", [["--version"], ["run", "no-such-folder"],
                                  ["rubric", "validate", str(HOSTILE / "rubric-billion-laughs.yaml")]],
                         ids=["version", "missing source", "refused rubric"])
def test_an_invocation_prints_and_exits_as_the_console_script(forked: ForkedCli, tmp_path: Path,
                                                              args: list[str]) -> None:
    env = cli_env(tmp_path)
    real = subprocess.run([*JUDGING_CLI, *args], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    fork = forked.run(args, env=env, cwd=tmp_path)
    assert (fork.returncode, fork.stdout, fork.stderr) == \
        (real.returncode, real.stdout, real.stderr)
    assert fork.stdout + fork.stderr  # each says something


def test_the_callers_folder_environment_and_umask_are_the_processs(forked: ForkedCli,
                                                                    tmp_path: Path) -> None:
    builder = SubmissionBuilder(tmp_path / "sub")
    builder.number_claim("paper-1/c1")
    builder.write()
    env = {**cli_env(tmp_path), "JUDGING_JUDGE": "no-such-judge"}
    refused = forked.run(["run", "sub", "--out", "run"], env=env, cwd=tmp_path, umask=0o027)
    assert refused.returncode == 1 and "no-such-judge" in refused.stderr, refused.stderr
    done = forked.run(["run", "sub", "--out", "run"], env=cli_env(tmp_path), cwd=tmp_path,
                      umask=0o027)
    assert done.returncode == 0, done.stderr
    modes = {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "run").rglob("*")
             if p.is_file()}
    assert modes == {0o640}, [oct(m) for m in modes]


def test_a_shell_scripts_judging_is_the_forked_cli(forked: ForkedCli, tmp_path: Path) -> None:
    script = (f"judging() {{ {forked.shell_command()} \"$@\"; }}\n"
              "judging --version; echo \"exit $?\"\n"
              "judging run no-such-folder; echo \"exit $?\"\n")
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.splitlines() == ["judging, version 0.1.0", "exit 0", "exit 1"], done
    assert done.stderr == "error: no-such-folder: no such folder\n"
