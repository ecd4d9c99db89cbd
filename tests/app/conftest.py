"""The runs the dashboard tests serve: the bundled examples (submissions and logbook) judged by
`judging run --judge offline`, with markup planted in one participant's justification and scale
note (it must reach the page as text, never as HTML); and the consensus event of
tests/consensus/event.py (4 registry claims x 5 submissions: a value outlier, a contradiction, a
copied figure, a false falsification), judged offline."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from judging.cli import main
from tests.conftest import EXAMPLES, REGISTRY, SUBMISSIONS

#: The claim the browser opens: Alice's figure claim, reproduced also by Bob (a copy of the
#: published figure) and by Dana's logbook.
OPENED = ("alice/repro-neurips26-4821", "neurips26-4821/c1")
PLANTED = ('<img src="x" onerror="window.__planted = 1"> <script>window.__planted = 2'
           '</script> <b id="planted">bold?</b>')


def plant(submissions: Path) -> None:
    manifest = submissions / "alice-neurips26-4821" / "submission.yaml"
    data = yaml.safe_load(manifest.read_text())
    claim = next(c for c in data["claims"] if c["claim_id"] == OPENED[1])
    claim["justification"] += " " + PLANTED
    # The scale note is shown in the consensus panel too (every reproduction's).
    claim["scale_note"] += " " + PLANTED
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


def cli_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGING_JUDGE"))}
    env.update({"JUDGING_CACHE_DIR": str(tmp / "cache"), "HF_HUB_OFFLINE": "1",
                "GRADIO_TEMP_DIR": str(tmp / "gradio"), "GRADIO_ANALYTICS_ENABLED": "False",
                "NO_PROXY": "127.0.0.1,localhost"})
    return env


def invoke_as_a_process_would(arguments: list[str], tmp: Path):
    """`judging ARGUMENTS` in this process, in the environment `cli_env` gives a process (no
    judge, endpoint or rubrics from the caller's environment; the cache under `tmp`; the Hub
    offline): for a run that tests read and that needs no process of its own (issue 43: an
    interpreter start less). Returns click's result."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ("JUDGING_JUDGE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGING_RUBRICS_DIR"):
            mp.delenv(name, raising=False)
        mp.setenv("JUDGING_CACHE_DIR", str(tmp / "cache"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        return CliRunner().invoke(main, arguments)


@pytest.fixture(scope="session")
def offline_run(tmp_path_factory: pytest.TempPathFactory, measurement_cache: Path) -> Path:
    """`judging run --judge offline` on a copy of the examples (with the planted markup; the
    figures measured once a test run: tests/conftest.py `measurement_cache`)."""
    base = tmp_path_factory.mktemp("app-run")
    submissions = base / "submissions"
    shutil.copytree(SUBMISSIONS, submissions)
    plant(submissions)
    run = base / "run"
    # In this process: the tests serve and read this run; none needs the process that wrote it.
    done = invoke_as_a_process_would(["run", str(submissions), str(EXAMPLES / "logbooks"),
                                      "--claims", str(REGISTRY), "--judge", "offline",
                                      "--out", str(run), "--measure-cache",
                                      str(measurement_cache)], base)
    assert done.exit_code == 0, done.output
    return run


@pytest.fixture(scope="session")
def consensus_run(tmp_path_factory: pytest.TempPathFactory, measurement_cache: Path) -> Path:
    """The consensus event judged offline (`judging run` writes consensus.json at its end)."""
    from judging.run.runner import RunRequest, run_judging
    from tests.consensus.event import write_event

    base = tmp_path_factory.mktemp("app-consensus")
    registry, folders = write_event(base)
    run = base / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGING_CACHE_DIR", str(base / "cache"))
        for name in ("JUDGING_JUDGE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGING_RUBRICS_DIR"):
            mp.delenv(name, raising=False)
        run_judging(RunRequest(sources=[str(f) for f in folders], out=run, registry=registry,
                               measure_cache=measurement_cache))
    return run
