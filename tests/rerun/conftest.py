"""Re-run fixtures: submissions with small scripts and a tiny pure-Python requirement, and an
environment cache built from the package registry once per test session (real uv, real
bubblewrap)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from tests.conftest import SubmissionBuilder

#: A tiny pure-Python package from the registry: the environments the tests build install it.
REQUIREMENT = "iniconfig==2.0.0\n"


def need_sandbox() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: apt-get install -y bubblewrap (make test "
                    "installs it)")


@pytest.fixture(scope="session")
def env_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment cache for the session: each lock file is built once, then reused."""
    return tmp_path_factory.mktemp("rerun-env-cache")


def script_claim(builder: SubmissionBuilder, claim_id: str, script: str, body: str, *,
                 reproduced: float = 93.8, reported: float = 94.1, verdict: str = "verified",
                 tolerance: dict | None = None, rerun: dict | None = None) -> dict:
    """A number claim whose evidence.script is `script` with `body`."""
    builder.file(script, body)
    evidence: dict = {"script": script, "logs": [builder.file("logs/run.txt",
                                                              "final top1 93.80\n")]}
    if rerun is not None:
        evidence["rerun"] = rerun
    claim = {"claim_id": claim_id, "kind": "number", "source": "Table 2",
             "statement": "Top-1 accuracy is 94.1%", "reported_value": reported,
             "reproduced_value": reproduced,
             "tolerance": tolerance if tolerance is not None else {"absolute": 0.5},
             "verdict": verdict, "justification": "See logs/run.txt.", "evidence": evidence}
    builder.claims.append(claim)
    return claim


def judging(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def judged_run(sources: Path, out: Path) -> Path:
    judging("run", str(sources), "--out", str(out), "--judge", "offline")
    return out


@pytest.fixture
def make_submission(tmp_path: Path) -> Callable[..., SubmissionBuilder]:
    def make(name: str = "sub", submission_id: str = "tester/sub-1", *,
             requirements: str | None = REQUIREMENT) -> SubmissionBuilder:
        builder = SubmissionBuilder(tmp_path / "subs" / name, submission_id, "paper-1")
        if requirements is not None:
            builder.file("requirements.txt", requirements)
        return builder
    return make
