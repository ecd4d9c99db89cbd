"""`judging watch` against the fake Hub (tests/fakehub.py, real HTTP): Spaces appear and change
between polls; each poll lists every page, judges the new Spaces and the new revisions and nothing
else, takes no revision made after the deadline, and keeps the decisions and the leaderboard
current. Killed with SIGKILL in the middle of a poll's run and started again, it judges nothing
twice and loses nothing.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from judging.cli import main
from judging.errors import JudgingError
from judging.run import RunRequest
from judging.rundir import RunInfo, RunStore, identity
from judging.watch import WatchOptions, parse_every, read_state, watch
from tests.app.conftest import cli_env
from tests.conftest import JUDGING_CLI, REGISTRY, SUBMISSIONS, module_measure_cache
from tests.fakehub import FakeHub, hub_environ

TAG = "neurips26-hack"
JAN = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
FEB = datetime(2026, 2, 10, 12, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
ALICE, BOB, CAROL = ("space", "alice/repro-neurips26-4821"), \
    ("space", "bob/neurips26-4821-check"), ("space", "carol/iclr27-0137-repro")


def example(name: str, *, prefix: str = "") -> dict[str, bytes]:
    """An example submission's files; with `prefix`, every claim's justification changed (what
    the participant writes: a registry claim's statement is the registry's)."""
    root = SUBMISSIONS / name
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.rglob("*")) if p.is_file()}
    if prefix:
        manifest = yaml.safe_load(files["submission.yaml"])
        for claim in manifest["claims"]:
            claim["justification"] = f"{prefix} {claim.get('justification', '')}"
        files["submission.yaml"] = yaml.safe_dump(manifest, sort_keys=False).encode()
    return files


#: The in-process watches and the reference run read the figures' measurements from the test
#: run's shared cache (tests/conftest.py `measurement_cache`, issue 43): they test what is
#: judged when, not measuring. The watch killed mid-poll measures in its own processes, afresh.
pytestmark = pytest.mark.usefixtures("shared_measurements")


def options(run: Path, *, as_of: datetime | None = None) -> WatchOptions:
    return WatchOptions(tags=[TAG], as_of=as_of, calibration_dir=run.parent / "no-calibration",
                        request=RunRequest(sources=[], out=run, registry=REGISTRY,
                                           measure_workers=0,
                                           measure_cache=module_measure_cache()))


def lines_by_submission(run: Path) -> Counter[str]:
    return Counter(j.claim.submission_id for j in RunStore.open(run, create=False).judgments())


def downloads(hub: FakeHub) -> list[str]:
    return [path for method, path in hub.requests if method == "GET" and "/resolve/" in path]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    with FakeHub() as fake:
        fake.page_size = 1  # a page per Space: the listing is read across pages
        fake.patch(monkeypatch, tmp_path / "hf-home")
        yield fake


def test_each_poll_judges_what_is_new_and_nothing_else(hub: FakeHub, tmp_path: Path) -> None:
    run = tmp_path / "run"
    hub.commit(ALICE, example("alice-neurips26-4821"), date=JAN)
    hub.commit(BOB, example("bob-neurips26-4821"), date=JAN)
    for key in (ALICE, BOB):
        hub.tag(key, TAG)
    hub.add(("space", "zed/untagged"), example("carol-iclr27-0137"))  # never listed

    reports = []
    assert watch(options(run), every=1, polls=1, report=lambda n, r: reports.append(r)) == 1
    first = reports[-1].record
    assert (first.listed, first.new, first.changed, first.judged, first.failed) == (2, 2, 0, 2, 0)
    state = read_state(run)
    assert {k: (s.status, s.sha) for k, s in state.spaces.items()} == {
        ALICE[1]: ("judged", hub.sha(*ALICE)), BOB[1]: ("judged", hub.sha(*BOB))}
    after_first = lines_by_submission(run)
    assert set(after_first) == {ALICE[1], BOB[1]}
    # The decisions and the leaderboard follow each poll that judged something.
    board = {r["submission"]: r for r in csv.DictReader(
        (run / "leaderboard_submissions.csv").open())}
    assert set(board) == {ALICE[1], BOB[1]}
    assert "zed/untagged" not in json.dumps(RunInfo.from_file(
        (run / "run.json").read_bytes()).model_dump(mode="json"))

    # Nothing changed: the listing is read (both pages), nothing is downloaded or run.
    hub.clear()
    invocations = len(RunInfo.from_file((run / "run.json").read_bytes()).invocations)
    watch(options(run), every=1, polls=1, report=lambda n, r: reports.append(r))
    second = reports[-1].record
    assert (second.listed, second.new, second.changed, second.judged, second.written) == \
        (2, 0, 0, 0, 0)
    assert downloads(hub) == []
    listing = [r for r in hub.details if r.method == "GET" and r.path == "/api/spaces"]
    assert len(listing) >= 2  # every page of the listing
    assert len(RunInfo.from_file((run / "run.json").read_bytes()).invocations) == invocations

    # A new Space, and a new revision of Alice's: both judged, Bob's lines untouched.
    hub.commit(CAROL, example("carol-iclr27-0137"), date=FEB)
    hub.tag(CAROL, TAG)
    hub.commit(ALICE, example("alice-neurips26-4821", prefix="REVISED"), date=FEB)
    hub.clear()
    watch(options(run), every=1, polls=1, report=lambda n, r: reports.append(r))
    third = reports[-1].record
    assert (third.listed, third.new, third.changed, third.judged, third.failed) == (3, 1, 1, 2, 0)
    after_third = lines_by_submission(run)
    assert after_third[BOB[1]] == after_first[BOB[1]]  # never judged again
    assert after_third[ALICE[1]] == 2 * after_first[ALICE[1]]  # the new revision's lines
    assert after_third[CAROL[1]] > 0
    assert not [p for p in downloads(hub) if BOB[1] in p]
    latest = [j for j in RunStore.open(run, create=False).latest()
              if j.claim.submission_id == ALICE[1]]
    claims = RunStore.open(run, create=False).claims()
    assert latest and all(claims[str(j.claim)].claim.justification.startswith("REVISED")
                          for j in latest if str(j.claim) in claims)
    board = {r["submission"]: r for r in csv.DictReader(
        (run / "leaderboard_submissions.csv").open())}
    assert set(board) == {ALICE[1], BOB[1], CAROL[1]}
    # Every line's identity is written once per revision: nothing judged twice.
    heads = Counter((identity(j), j.input_hash) for j in
                    RunStore.open(run, create=False).judgments())
    assert max(heads.values()) == 1


def test_no_revision_after_the_deadline(hub: FakeHub, tmp_path: Path) -> None:
    run = tmp_path / "run"
    hub.commit(ALICE, example("alice-neurips26-4821"), date=JAN)
    hub.commit(ALICE, example("alice-neurips26-4821", prefix="LATE"), date=MAR)
    hub.commit(BOB, example("bob-neurips26-4821"), date=MAR)  # nothing before the deadline
    for key in (ALICE, BOB):
        hub.tag(key, TAG)
    first_alice = hub.repos[ALICE].history["main"][0].sha
    reports = []
    watch(options(run, as_of=FEB), every=1, polls=1, report=lambda n, r: reports.append(r))
    state = read_state(run)
    assert (state.spaces[ALICE[1]].sha, state.spaces[ALICE[1]].committed_at) == (first_alice, JAN)
    assert state.spaces[BOB[1]].status == "skipped"
    assert "no commit at or before the deadline" in state.spaces[BOB[1]].reason
    claims = RunStore.open(run, create=False).claims()
    assert claims and not any(c.claim.justification.startswith("LATE")
                              for c in claims.values())
    before = lines_by_submission(run)
    # Another revision after the deadline: not taken, nothing judged.
    hub.commit(ALICE, example("alice-neurips26-4821", prefix="LATER"), date=MAR)
    watch(options(run, as_of=FEB), every=1, polls=1, report=lambda n, r: reports.append(r))
    assert reports[-1].record.judged == 0 and lines_by_submission(run) == before
    assert read_state(run).spaces[ALICE[1]].sha == first_alice


def test_one_watch_per_run_directory_and_the_same_tags(hub: FakeHub, tmp_path: Path) -> None:
    from judging.watch import watch_lock

    run = tmp_path / "run"
    with watch_lock(run):
        with pytest.raises(JudgingError, match="another `judging watch`"):
            watch(options(run), every=1, polls=1)
    hub.tag(ALICE, TAG)
    hub.commit(ALICE, example("alice-neurips26-4821"), date=JAN)
    watch(options(run), every=1, polls=1)
    other = options(run)
    other.tags = ["another-tag"]
    with pytest.raises(JudgingError, match="follows the Spaces tagged"):
        watch(other, every=1, polls=1)


def test_a_first_poll_that_cannot_list_stops_with_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    from tests.fakehub import patch_hub

    waits = patch_hub(monkeypatch, "http://127.0.0.1:1", tmp_path / "hf-home")
    with pytest.raises(JudgingError, match="cannot reach the Hugging Face Hub"):
        watch(options(tmp_path / "run"), every=1, polls=3)
    assert waits  # the listing was retried before the poll gave up


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("5m", 300), ("2h", 7200),
                                                ("90", 90), ("1.5m", 90)])
def test_parse_every(text: str, seconds: float) -> None:
    assert parse_every(text) == seconds


@pytest.mark.parametrize("text", ["", "5 minutes", "0s", "-1m"])
def test_bad_every_is_one_line(text: str) -> None:
    with pytest.raises(JudgingError, match="--every"):
        parse_every(text)


@pytest.mark.timeout(600)
def test_killed_and_restarted_nothing_twice_nothing_lost(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL to the watch's process group as soon as its first poll has written a judgment
    line, then the same command again: every line of a reference run is there, once."""
    with FakeHub() as hub:
        for key, name in ((ALICE, "alice-neurips26-4821"), (BOB, "bob-neurips26-4821"),
                          (CAROL, "carol-iclr27-0137")):
            hub.commit(key, example(name), date=JAN)
            hub.tag(key, TAG)
        env = hub_environ(hub.url, tmp_path / "hf-home", base=cli_env(tmp_path))
        env.pop("JUDGING_MEASURE_CACHE", None)  # the watch measures afresh: it must be killable
        run = tmp_path / "run"
        command = [*JUDGING_CLI, "watch", "--discover", TAG, "--out", str(run), "--every", "1s",
                   "--claims", str(REGISTRY), "--calibration", str(tmp_path / "no-calibration")]
        log = (tmp_path / "watch.log").open("w")
        process = subprocess.Popen([*command, "--polls", "1"], env=env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        judgments = run / "judgments.jsonl"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            if judgments.is_file() and judgments.stat().st_size > 0:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the watch ended before it could be killed"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
        killed_at = len(judgments.read_text().splitlines())
        state = read_state(run)
        assert any(s.status == "pending" for s in state.spaces.values())

        done = subprocess.run([*command, "--polls", "1"], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "poll 1" in done.stdout and "judged 3" in done.stdout, done.stdout
        assert {s.status for s in read_state(run).spaces.values()} == {"judged"}

        # The reference: the same three Spaces judged in one go (in this process: only the
        # watch needs processes of its own, to be killed; its figures measured once a test run).
        reference = tmp_path / "reference"
        sources = [f"hf://spaces/{key[1]}@{hub.sha(*key)}" for key in (ALICE, BOB, CAROL)]
        hub.patch(monkeypatch, tmp_path / "hf-reference")
        ran = CliRunner().invoke(main, ["run", *sources, "--claims", str(REGISTRY),
                                        "--out", str(reference)])
        assert ran.exit_code == 0, ran.output
    watched = [(identity(j), j.input_hash) for j in RunStore.open(run, create=False).judgments()]
    expected = {(identity(j), j.input_hash)
                for j in RunStore.open(reference, create=False).judgments()}
    assert killed_at < len(expected), "the kill came after the poll had finished"
    assert len(watched) == len(set(watched)), "a line was judged twice"
    assert set(watched) == expected, "lines were lost or differ"


@pytest.mark.timeout(600)
def test_the_review_queue_follows_the_polls(argilla, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`--push`: after each poll that judged something, its records are in Argilla (the real
    local server), the next Space's added by the next poll. (`judging watch` in this process:
    nothing here needs a process of its own; the kill test above runs it as one.)"""
    import uuid

    workspace = f"watch-{uuid.uuid4().hex[:8]}"
    with FakeHub() as hub:
        hub.commit(ALICE, example("alice-neurips26-4821"), date=JAN)
        hub.tag(ALICE, TAG)
        hub.patch(monkeypatch, tmp_path / "hf-home")
        command = ["watch", "--discover", TAG, "--out", str(tmp_path / "run"),
                   "--polls", "1", "--claims", str(REGISTRY), "--push", "--workspace", workspace,
                   "--api-url", argilla.url, "--api-key", argilla.api_key,
                   "--calibration", str(tmp_path / "no-calibration")]

        def records() -> dict[str, set[str]]:
            from judging.review.push import connect

            client = connect(argilla.url, argilla.api_key)
            found: dict[str, set[str]] = {}
            for dataset in client.workspaces(workspace).datasets:
                found[dataset.name] = {r.metadata["submission_id"] for r in dataset.records(
                    with_suggestions=False, with_responses=False)}
            return found

        done = CliRunner().invoke(main, command)
        assert done.exit_code == 0, done.output
        assert "pushed" in done.stdout, done.stdout
        first = records()
        assert first and set().union(*first.values()) == {ALICE[1]}
        hub.commit(BOB, example("bob-neurips26-4821"), date=JAN)
        hub.tag(BOB, TAG)
        done = CliRunner().invoke(main, command)
        assert done.exit_code == 0, done.output
        assert set().union(*records().values()) == {ALICE[1], BOB[1]}
