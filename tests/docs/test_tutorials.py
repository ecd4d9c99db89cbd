"""Every command shown in a tutorial runs, in order, and does what the page says.

Each page of docs/tutorials/ is read as its reader reads it: its ```bash blocks, top to bottom,
run by bash in a fresh folder holding a copy of the bundled examples (the pages run from the
checkout, which these stand for), with `judging` and `python` on PATH as the page's reader has
them. A block preceded by `<!-- expect-exit: N -->` must exit N (the page says so); every other
block must succeed. A `<!-- test: NAME -->` line is a step the reader does by hand (a reviewer's
answers in Argilla's web page): the test does it through the API that page uses, between the
blocks before and after it. Then each page's own checks hold what the page promises (the
ranking it names, the files it says are written). A tutorial without checks here fails: a new
page cannot go untested.

The tutorials drive the real CLI, a real Argilla server and the fake OpenAI server over HTTP.
Each `judging` a page runs is a process of its own, with the page's folder, environment and
streams, forked from a server that imported the package once (tests/forked_cli.py): a page's
commands cost their work, not an interpreter start and the package's import each (issue 43).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, JUDGING_CLI, ROOT
from tests.forked_cli import PRELOAD, ForkedCli

# The pages' runs measure the examples' figures once (JUDGING_MEASURE_CACHE, in the reader's
# environment): what a page shows and promises does not depend on where measurements are kept.
pytestmark = pytest.mark.usefixtures("shared_measurements")

TUTORIALS = ROOT / "docs" / "tutorials"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXPECT_EXIT = re.compile(r"<!-- expect-exit: (\d+) -->\s*$")
ACTION = re.compile(r"^<!-- test: ([a-z ]+) -->$", re.MULTILINE)
#: Fence languages a reader would run in a shell: every such block must be a ```bash block,
#: which the runner runs (none may slip past it under another name).
SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh", "shell-session"}
#: A page's commands, with the CLI starting once per command on a shared 2-core machine
#: (a page took 1 to 5 minutes there while other work ran).
PAGE_TIMEOUT_S = 1500


@dataclass(frozen=True)
class Block:
    code: str
    exit_code: int = 0


@dataclass(frozen=True)
class Action:
    name: str


def steps(page: str) -> list[Block | Action]:
    """The page's bash blocks and hand steps, in page order."""
    found: list[tuple[int, Block | Action]] = []
    for match in FENCE.finditer(page):
        language = match.group(1).strip().split()[0] if match.group(1).strip() else ""
        if language in SHELL_LANGUAGES - {"bash"}:
            raise ValueError(f"a ```{language} block: tutorials show shell commands as ```bash, "
                             f"which the test runs")
        if language != "bash":
            continue
        before = page[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        expected = EXPECT_EXIT.search(before)
        found.append((match.start(), Block(match.group(2),
                                           int(expected.group(1)) if expected else 0)))
    found += [(m.start(), Action(m.group(1))) for m in ACTION.finditer(page)]
    return [step for _, step in sorted(found, key=lambda pair: pair[0])]


def script(blocks: list[Block]) -> str:
    """One bash script of consecutive blocks: variables carry from block to block, as in the
    reader's shell; background jobs a block starts are stopped when the script ends."""
    lines = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for block in blocks:
        if block.exit_code == 0:
            lines.append(block.code)
        else:
            lines += ["set +e", f"( {block.code.strip()}\n)", "status=$?", "set -e",
                      f'[ "$status" -eq {block.exit_code} ] || {{ echo "a block exited '
                      f'$status, the page says {block.exit_code}" >&2; exit 97; }}']
    return "\n".join(lines) + "\n"


def reader_environment() -> dict[str, str]:
    """What the page's reader has set, wherever the page runs."""
    env = dict(os.environ)
    # The checkout's package, wherever the page runs (an editable install needs nothing more).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    return env


#: What the pages' commands import beyond `judging run`'s (the ranking's stage alone costs a
#: second of CPU each time a command imports it).
PAGE_PRELOAD = (*PRELOAD, "judging.resolve", "judging.review.push", "judging.calibrate",
                "judging.check", "judging.consensus", "judging.publish", "judging.rerun")


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCli]:
    """The pages' `judging`: a server importing the package in the reader's environment."""
    base = tmp_path_factory.mktemp("cli")
    # the pages' other stages too (resolve, review, calibrate): each command imports them
    server = ForkedCli.start(base, env=reader_environment(), preload=PAGE_PRELOAD)
    yield server
    server.stop()


def reader_path(folder: Path, cli: ForkedCli) -> dict[str, str]:
    """The environment of the page's reader: `judging` and `python` as the checkout's
    environment gives them (with `source .venv/bin/activate`); `judging` forked from `cli`."""
    bin_dir = folder / ".bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "judging").write_text(f'#!/bin/sh\nexec {cli.shell_command()} "$@"\n')
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec \'{sys.executable}\' "$@"\n')
    for name in ("judging", "python"):
        (bin_dir / name).chmod(0o755)
    env = reader_environment()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_page(page: str, folder: Path, actions: dict[str, Callable[[Path], None]],
             cli: ForkedCli) -> str:
    """Run the page's steps in `folder`; return everything the blocks printed. A block that
    fails (or exits otherwise than the page says) fails the test with its output."""
    env = reader_path(folder, cli)
    printed = []
    pending: list[Block] = []

    def flush() -> None:
        if not pending:
            return
        done = subprocess.run(["bash", "-c", script(pending)], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=PAGE_TIMEOUT_S)
        printed.append(done.stdout + done.stderr)
        if done.returncode != 0:
            shown = "\n".join(block.code for block in pending)
            pytest.fail(f"a tutorial block failed (exit {done.returncode}):\n{shown}\n--- output "
                        f"(tail):\n{(done.stdout + done.stderr)[-4000:]}", pytrace=False)
        pending.clear()

    for step in steps(page):
        if isinstance(step, Block):
            pending.append(step)
            continue
        flush()
        if step.name not in actions:
            pytest.fail(f"the page has a hand step {step.name!r} the test does not do",
                        pytrace=False)
        actions[step.name](folder)
    flush()
    return "".join(printed)


def reader_folder(tmp_path: Path) -> Path:
    """What the pages use of the checkout: the examples and the examples' calibration labels."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    shutil.copytree(EXAMPLES, folder / "examples")
    labels = ROOT / "calibration" / "sets" / "examples"
    shutil.copytree(labels, folder / "calibration" / "sets" / "examples")
    return folder


# --- the runner itself can fail -----------------------------------------------------------------

def test_the_runner_fails_on_a_failing_block_and_on_a_wrong_exit_code(tmp_path: Path,
                                                                      cli: ForkedCli) -> None:
    page = "# p\n\n```bash\necho one\n```\n\n```bash\nfalse\necho never\n```\n"
    with pytest.raises(pytest.fail.Exception, match="a tutorial block failed"):
        run_page(page, reader_folder(tmp_path), {}, cli)
    said_one = "<!-- expect-exit: 1 -->\n```bash\ntrue\n```\n"
    with pytest.raises(pytest.fail.Exception, match="the page says 1"):
        run_page(said_one, tmp_path / "checkout", {}, cli)
    # the page's exit code, when it is the one said, is no failure; variables carry over
    fine = ("<!-- expect-exit: 3 -->\n```bash\nexit 3\n```\n```bash\nX=1\n```\n"
            "```bash\n[ \"$X\" = 1 ] && judging --version\n```\n")
    assert "judging" in run_page(fine, tmp_path / "checkout", {}, cli).lower()


def test_steps_read_every_bash_block_and_refuse_other_shell_fences() -> None:
    page = "```bash\na\n```\ntext\n<!-- test: hand step -->\n```python\nx\n```\n```bash\nb\n```\n"
    assert steps(page) == [Block("a\n"), Action("hand step"), Block("b\n")]
    with pytest.raises(ValueError, match="```console"):
        steps("```console\n$ judging run\n```\n")


def test_every_tutorial_has_commands_and_checks() -> None:
    pages = sorted(TUTORIALS.glob("*.md"))
    assert {p.stem for p in pages} == set(CHECKS), "a tutorial without checks (or checks without a page)"
    for page in pages:
        text = page.read_text()
        blocks = [s for s in steps(text) if isinstance(s, Block)]
        assert len(blocks) == text.count("```bash\n") >= 3, page.name


# --- the pages ----------------------------------------------------------------------------------

def _organizer(folder: Path, printed: str) -> None:
    run = folder / "runs" / "event"
    # "Alice, Dana, Carol, Bob, as the examples were built"
    with (run / "leaderboard_submissions.csv").open() as handle:
        order = [row["submission"].split("/")[0] for row in csv.DictReader(handle)]
    assert order == ["alice", "dana", "carol", "bob"]
    assert "91.2" in printed and "93.8" in printed  # the consensus's outlier, as the page says
    # step 1: "no agent trace (its environment file, eval/requirements.txt, is found)"
    check = " ".join(printed.split())
    assert "│ trace │ │ missing │" in check and "│ environment │ │ ok │ eval/requirements.txt" \
        in check, check[:3000]
    for name in ("judgments.jsonl", "claims.jsonl", "not_addressed.jsonl", "consensus.json",
                 "decisions.jsonl", "final.jsonl", "leaderboard.html", "report.html"):
        assert (run / name).is_file(), name
    assert any((run / "diffs").iterdir())
    assert list((run / "calibration" / "artifacts").glob("*/*.json"))
    assert (run / "publish" / "README.md").is_file()  # the staged dataset and its card
    assert "nothing was uploaded" in printed
    # the second `judging run` resumed: it judged nothing again
    assert "in runs/event: 0 new judgment line(s)" in printed
    assert re.search(r"estimate: \d+ claim\(s\) selected", printed)
    # step 3: the Space's row answers the registry's c3 through the paper's arXiv alias; the
    # sentence is a claim stated in prose; the registry's c2 is not addressed
    spaces = folder / "runs" / "spaces"
    claims = {json.loads(line)["key"]["claim_id"]: json.loads(line)["claim"]
              for line in (spaces / "claims.jsonl").read_text().splitlines()}
    assert len(claims) == 2, sorted(claims)
    c3 = claims["neurips26-4821/c3"]
    assert (c3["reported_value"], c3["reproduced_value"], c3["verdict"]) == (94.1, 93.8,
                                                                            "verified")
    flat = " ".join(printed.split())
    assert "1 claims stated in prose" in flat and "is neurips26-4821 in the registry" in flat
    assert "neurips26-4821/c2" in (spaces / "not_addressed.jsonl").read_text()


def _answer_as_reviewer(folder: Path) -> None:
    """Ada answers every record of the figure-match dataset: overall, the claim passes (what the
    annotation page sends when she presses Submit)."""
    import httpx

    from judging.review import server as review_server
    from judging.review.users import api_key_for

    info = review_server.status(folder / ".judging" / "argilla")
    assert info is not None, "the page's server is not running"
    key = api_key_for(info.url, "ada", "ada-review-1")
    ada = {"X-Argilla-Api-Key": key}
    with httpx.Client(base_url=info.url, headers=ada, timeout=60) as http:
        datasets = http.get("/api/v1/me/datasets").json()["items"]
        dataset = next(d for d in datasets if d["name"].startswith("figure-match-")
                       and not d["name"].endswith("-calibration"))
        found = http.post(f"/api/v1/me/datasets/{dataset['id']}/records/search", json={},
                          params={"limit": 100})
        assert found.status_code == 200, found.text
        records = [item["record"] for item in found.json()["items"]]
        assert records
        for record in records:
            answered = http.post(f"/api/v1/records/{record['id']}/responses",
                                 json={"values": {"overall_verdict": {"value": "pass"}},
                                       "status": "submitted"})
            assert answered.status_code in (200, 201), answered.text
    (folder / ".answered").write_text(json.dumps(len(records)))


def _reviewer(folder: Path, printed: str) -> None:
    run = folder / "runs" / "review"
    labels = [json.loads(line) for line in (run / "labels.jsonl").read_text().splitlines()]
    answered = json.loads((folder / ".answered").read_text())
    assert len(labels) == answered and {label["annotator"] for label in labels} == {"ada"}
    decided = {(label["claim"]["submission_id"], label["claim"]["claim_id"]) for label in labels}
    finals = [json.loads(line) for line in (run / "final.jsonl").read_text().splitlines()]
    by_people = {(f["claim"]["submission_id"], f["claim"]["claim_id"]) for f in finals
                 if "humans" in f["decided_by"]}
    assert decided and decided <= by_people  # "Ada's claims are now decided by the reviewers"
    # her overall answer alone decides the figure rubric: pass, by her, whatever the AI said
    figure = [json.loads(line) for line in (run / "decisions.jsonl").read_text().splitlines()
              if json.loads(line)["applies_to"] == "figure"]
    answered_lines = [d for d in figure if (d["claim"]["submission_id"], d["claim"]["claim_id"])
                      in decided]
    assert len(answered_lines) == len(decided)
    assert all(d["outcome"] == "pass" and d["human_overall"] == "pass"
               and d["overall_by"] == ["ada"] for d in answered_lines), answered_lines
    assert (run / "leaderboard_submissions.csv").is_file()
    from judging.review import server as review_server
    assert review_server.status(folder / ".judging" / "argilla") is None  # stopped, as step 7 says


def _analyst(folder: Path, printed: str) -> None:
    run = folder / "runs" / "audit"
    retests = (run / "retests.jsonl").read_text().splitlines()
    assert retests and all(json.loads(line)["schema"] == "judging.retest/1" for line in retests)
    reports = run / "calibration" / "reports"
    assert list(reports.glob("*/*/report.md")) and list(reports.glob("*/*/retest.md"))
    assert (reports / "table" / "compare-other-judge" / "report.md").is_file()
    assert "3 matched of 3 reference verdicts" in " ".join(printed.split())
    judges = {json.loads(line)["judge"] for line in
              (run / "judgments.jsonl").read_text().splitlines()}
    assert {"offline", "openai:fake-judge"} <= judges


CHECKS: dict[str, Callable[[Path, str], None]] = {
    "organizer": _organizer, "reviewer": _reviewer, "analyst": _analyst}
ACTIONS: dict[str, Callable[[Path], None]] = {"the reviewer answers": _answer_as_reviewer}


@pytest.mark.timeout(PAGE_TIMEOUT_S + 120)  # a page, not one call: over the suite's 300 s
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_a_tutorial_runs_as_written(name: str, tmp_path: Path, cli: ForkedCli) -> None:
    folder = reader_folder(tmp_path)
    page = (TUTORIALS / f"{name}.md").read_text()
    try:
        printed = run_page(page, folder, ACTIONS, cli)
    finally:
        home = folder / ".judging" / "argilla"
        if home.exists():  # a page that failed before its own `review stop`
            subprocess.run([*JUDGING_CLI, "review", "stop", "--home", str(home)],
                           capture_output=True, timeout=120)
    CHECKS[name](folder, printed)
