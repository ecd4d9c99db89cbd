"""A failing invocation changes nothing of an existing run: for each kind (a typo'd source, a bad
registry, an unknown rubric, an unknown judge, a dead endpoint) the command line exits 1 with one
line naming the cause, draws no progress bar, and every file of the run directory is
byte-identical afterwards, except run.json, which gains the refused invocation (failed, with its
reason). On a new --out the same invocations make no folder at all.

Also what a run writes from incomplete inputs: not_addressed.jsonl keeps the records of the
submissions a later invocation did not load (a source that failed) and is left alone by an
invocation without a registry.

Each invocation is a process of its own (its exit code and what it prints are the point), forked
from a server that imported the package once (tests/forked_cli.py: issue 43).
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.models import NotAddressed
from judging.rundir import RunInfo, read_not_addressed
from tests.app.conftest import cli_env, invoke_as_a_process_would
from tests.conftest import EXAMPLES, JUDGING_SCRIPT, REGISTRY, SUBMISSIONS
from tests.forked_cli import ForkedCli


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCli]:
    base = tmp_path_factory.mktemp("cli")
    server = ForkedCli.start(base, env=cli_env(base), argv0=str(JUDGING_SCRIPT))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, measurement_cache: Path) -> Path:
    """The bundled examples judged by the offline judge, with the registry (their figures
    measured once a test run: what is tried here is the invocations, not measuring)."""
    base = tmp_path_factory.mktemp("judged")
    run = base / "run"
    # In this process (a module fixture comes before the tests' own _hermetic): the run the
    # invocations below are tried on (they run as processes).
    done = invoke_as_a_process_would(["run", str(SUBMISSIONS), str(EXAMPLES / "logbooks"),
                                      "--claims", str(REGISTRY), "--out", str(run),
                                      "--measure-cache", str(measurement_cache)], base)
    assert done.exit_code == 0, done.output
    assert read_not_addressed(run), "the examples leave registry claims unanswered"
    return run


def snapshot(run: Path) -> dict[str, bytes]:
    """Every file of the run directory (but run.json) by its relative path."""
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*"))
            if p.is_file() and p.name != "run.json"}


def bad_registry(tmp: Path) -> Path:
    path = tmp / "registry.yaml"
    path.write_text("papers:\n  - paper_id: neurips26-4821\n    claims: [unclosed\n")
    return path


CASES = {
    "typo'd source": (lambda tmp: ["run", str(EXAMPLES / "submisions"), "--claims",
                                   str(REGISTRY)], {}, "examples/submisions: no such folder"),
    "bad registry": (lambda tmp: ["run", str(SUBMISSIONS), "--claims", str(bad_registry(tmp))],
                     {}, "registry.yaml"),
    "unknown rubric": (lambda tmp: ["run", str(SUBMISSIONS), "--claims", str(REGISTRY),
                                    "--rubric", "figure-mach"], {}, "did you mean 'figure-match'"),
    "unknown judge": (lambda tmp: ["run", str(SUBMISSIONS), "--claims", str(REGISTRY),
                                   "--judge", "opnai:gpt-4.1-mini"], {}, "unknown judge"),
    "dead endpoint": (lambda tmp: ["run", str(SUBMISSIONS), "--claims", str(REGISTRY),
                                   "--judge", "openai:gpt-4.1-mini"],
                      {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1",
                       "OPENAI_API_KEY": "sk-test-not-a-secret"}, "connection refused"),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_a_failing_invocation_changes_nothing(judged: Path, tmp_path: Path, kind: str,
                                              cli: ForkedCli) -> None:
    run = tmp_path / "run"
    shutil.copytree(judged, run)
    before, info = snapshot(run), RunInfo.from_file((run / "run.json").read_bytes())
    args, env, cause = CASES[kind]
    done = cli.run([*args(tmp_path), "--out", str(run)], env={**cli_env(tmp_path), **env},
                   timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert cause in output, output
    assert "Traceback" not in output and "judging ━" not in output, output
    assert len([line for line in output.splitlines() if line.strip()]) == 1, output
    after = snapshot(run)
    assert after.keys() == before.keys()
    changed = [name for name in before if after[name] != before[name]]
    assert not changed, f"{kind} changed {changed}"
    now = RunInfo.from_file((run / "run.json").read_bytes())
    assert now.invocations[:-1] == info.invocations
    refused = now.invocations[-1]
    assert refused.status == "failed" and cause in refused.errors[0], refused
    assert refused.ended_at is not None

    # On a folder that does not exist yet: nothing is made.
    fresh = tmp_path / "fresh"
    done = cli.run([*args(tmp_path), "--out", str(fresh)], env={**cli_env(tmp_path), **env},
                   timeout=120)
    assert done.returncode == 1 and cause in done.stdout + done.stderr
    assert not fresh.exists(), f"{kind} left {sorted(p.name for p in fresh.iterdir())}"


def test_not_addressed_is_rewritten_only_from_what_was_loaded(judged: Path,
                                                              tmp_path: Path) -> None:
    """A rerun that loads one submission replaces that submission's records only; a rerun
    without a registry leaves the file as it is."""
    run = tmp_path / "run"
    shutil.copytree(judged, run)
    before = read_not_addressed(run)
    alice = [r for r in before if r.submission_id.startswith("alice/")]
    assert alice and len(alice) < len(before)
    # In this process: what is checked is the files the runs leave (issue 43).
    done = CliRunner().invoke(main, ["run", str(SUBMISSIONS / "alice-neurips26-4821"),
                                     "--claims", str(REGISTRY), "--out", str(run)])
    assert done.exit_code == 0, done.output
    key = lambda r: (r.submission_id, r.claim_id)  # noqa: E731
    assert sorted(map(key, read_not_addressed(run))) == sorted(map(key, before))
    frozen = (run / "not_addressed.jsonl").read_bytes()
    done = CliRunner().invoke(main, ["run", str(SUBMISSIONS / "alice-neurips26-4821"),
                                     "--out", str(run)])
    assert done.exit_code == 0, done.output
    assert (run / "not_addressed.jsonl").read_bytes() == frozen
    assert all(isinstance(r, NotAddressed) for r in read_not_addressed(run))


def test_a_fresh_run_does_not_say_resumed(tmp_path: Path, cli: ForkedCli,
                                          measurement_cache: Path) -> None:
    # the figures measured once a test run: what a run says of resuming is the point here
    env = {**cli_env(tmp_path), "JUDGING_MEASURE_CACHE": str(measurement_cache)}
    done = cli.run(["run", str(SUBMISSIONS / "carol-iclr27-0137"), "--out",
                    str(tmp_path / "run")], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "new judgment line(s)" in done.stdout and "resumed" not in done.stdout
    again = cli.run(["run", str(SUBMISSIONS / "carol-iclr27-0137"), "--out",
                     str(tmp_path / "run")], env=env)
    assert "0 new judgment line(s)" in again.stdout and "already done (resumed)" in again.stdout
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [i["status"] for i in info["invocations"]] == ["finished", "finished"]
