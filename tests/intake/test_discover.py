"""Discovery of Spaces by tag (`--discover`) and the deadline (`--as-of`), against the fake Hub.

The listing with more than 1,000 results is tested on `discover_spaces` itself (the Spaces are
metadata only, so it stays fast); `judging run --discover ... --as-of ...` runs end to end on the
three example submissions published as Spaces with several commits each.
"""

from __future__ import annotations

import json
import logging
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from judging.cli import main
from judging.errors import SourceError
from judging.intake import (
    HubSource,
    commit_as_of,
    discover_spaces,
    parse_as_of,
    plan_sources,
)
from judging.models import ClaimInput
from judging.rundir import RunInfo
from tests.conftest import SUBMISSIONS
from tests.fakehub import GOOD_TOKEN, FakeHub, hub_environ
from tests.intake.test_sources import _judging as judging_cli

pytestmark = pytest.mark.usefixtures("shared_measurements")

TAG = "icml2026-repro"
JAN = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
FEB = datetime(2026, 2, 10, 12, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def _listing_requests(hub: FakeHub) -> list[str]:
    return [r.query for r in hub.details if r.method == "GET" and r.path == "/api/spaces"]


# --- parse_as_of -----------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("2026-05-01T23:59:59Z", datetime(2026, 5, 1, 23, 59, 59, tzinfo=UTC)),
    ("2026-05-01T23:59:59", datetime(2026, 5, 1, 23, 59, 59, tzinfo=UTC)),  # no zone: UTC
    ("2026-05-01T23:59:59+02:00", datetime(2026, 5, 1, 21, 59, 59, tzinfo=UTC)),
    ("2026-05-01", datetime(2026, 5, 1, tzinfo=UTC)),
    (" 2026-05-01T10:00:00.5-05:00 ", datetime(2026, 5, 1, 15, 0, 0, 500000, tzinfo=UTC)),
])
def test_parse_as_of(text: str, expected: datetime) -> None:
    parsed = parse_as_of(text)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "2026-05-01T25:00", "", "05/01/2026"])
def test_bad_as_of_is_a_one_line_source_error(text: str) -> None:
    with pytest.raises(SourceError) as info:
        parse_as_of(text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"--as-of {text!r} is not an ISO 8601 date-time")


# --- the listing -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crowd():
    """2,345 Spaces tagged TAG (metadata only), a few with a second tag, and others."""
    hub = FakeHub()
    for i in range(2345):
        key = ("space", f"user{i:04d}/logbook")
        hub.add(key, {})
        hub.tag(key, TAG, *(["paper-abc"] if i % 500 == 7 else []))
    for i in range(5):
        key = ("space", f"other{i}/logbook")
        hub.add(key, {})
        hub.tag(key, "paper-abc")
    with hub:
        yield hub


@pytest.fixture
def fake_crowd(crowd: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    crowd.clear()
    crowd.filter_mode = "all"
    crowd.patch(monkeypatch, tmp_path / "hf-home")
    yield crowd
    crowd.filter_mode = "all"


def test_discovery_pages_past_1000_results(fake_crowd: FakeHub) -> None:
    found = discover_spaces([TAG])
    assert len(found) == 2345
    assert [s.repo_id for s in found] == sorted(f"user{i:04d}/logbook" for i in range(2345))
    # every page was read: the Hub pages at 1,000 and names the next page in a Link header
    queries = _listing_requests(fake_crowd)
    assert len(queries) == 3
    assert "cursor" not in queries[0] and "cursor=1000" in queries[1] and \
        "cursor=2000" in queries[2]
    assert all(f"filter={TAG}" in q for q in queries)
    # each Space is pinned to the head the listing saw
    first = found[0]
    assert first.sha == fake_crowd.sha("space", first.repo_id)
    assert first.source.spec == f"hf://spaces/{first.repo_id}@{first.sha}"
    assert TAG in first.tags
    assert fake_crowd.unexpected == []


def test_discovery_keeps_only_spaces_with_all_the_tags(fake_crowd: FakeHub) -> None:
    expected = [f"user{i:04d}/logbook" for i in range(2345) if i % 500 == 7]
    assert [s.repo_id for s in discover_spaces([TAG, "paper-abc"])] == expected
    assert "filter=icml2026-repro&filter=paper-abc" in _listing_requests(fake_crowd)[0]
    # a server that matches any of the tags: the client's own check keeps "all"
    fake_crowd.filter_mode = "any"
    fake_crowd.clear()
    assert [s.repo_id for s in discover_spaces([TAG, "paper-abc"])] == expected
    assert len(_listing_requests(fake_crowd)) == 3  # it did see (and page through) more


def test_discovery_of_no_space_is_an_error_in_the_plan(fake_crowd: FakeHub) -> None:
    plan = plan_sources([], discover=["no-such-tag"])
    assert plan.sources == []
    assert plan.errors == ["no Space carries all the tags no-such-tag"]


def test_unreachable_hub_is_a_source_error(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    from tests.fakehub import patch_hub

    waits = patch_hub(monkeypatch, "http://127.0.0.1:1", tmp_path / "hf-home")
    with pytest.raises(SourceError, match="cannot reach the Hugging Face Hub") as info:
        discover_spaces([TAG])
    assert "\n" not in str(info.value)
    assert waits  # retried before giving up (a blip is no failure)


# --- the deadline ----------------------------------------------------------------------------


def _example(name: str, *, statement_suffix: str = "") -> dict[str, bytes]:
    """An example submission's files, optionally with every claim statement changed."""
    root = SUBMISSIONS / name
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.rglob("*")) if p.is_file()}
    if statement_suffix:
        text = files["submission.yaml"].decode()
        text = text.replace("  statement: ", f"  statement: {statement_suffix} ")
        files["submission.yaml"] = text.encode()
    return files


LATER = "LATER-COMMIT"
"""Prefix of every claim statement in commits made after the deadline."""


@pytest.fixture(scope="module")
def history_hub():
    """The three example submissions as Spaces tagged hack26 + judge-me:

    alice: commits on Jan 10 (judged at a Feb deadline) and Mar 10 (statements changed);
    bob:   one commit on Jan 10, history paged (many small commits before it);
    carol: only a Mar 10 commit (skipped at a Feb deadline);
    dave:  tagged hack26 only (never discovered with both tags).
    """
    hub = FakeHub()
    hub.commits_page_size = 3
    alice = ("space", "alice/repro-neurips26-4821")
    hub.commit(alice, _example("alice-neurips26-4821"), date=JAN, title="first upload")
    hub.commit(alice, _example("alice-neurips26-4821", statement_suffix=LATER), date=MAR,
               title="after the deadline")
    bob = ("space", "bob/neurips26-4821-check")
    for day in range(1, 8):
        hub.commit(bob, {"notes.md": f"day {day}\n"}, date=datetime(2025, 12, day, tzinfo=UTC))
    hub.commit(bob, _example("bob-neurips26-4821"), date=JAN, title="submission")
    carol = ("space", "carol/iclr27-0137-repro")
    hub.commit(carol, _example("carol-iclr27-0137"), date=MAR, title="late")
    dave = ("space", "dave/other")
    hub.commit(dave, _example("alice-neurips26-4821"), date=JAN)
    for key in (alice, bob, carol):
        hub.tag(key, "hack26", "judge-me")
    hub.tag(dave, "hack26")
    with hub:
        yield hub


@pytest.fixture
def fake_history(history_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    history_hub.clear()
    history_hub.patch(monkeypatch, tmp_path / "hf-home")
    return history_hub


def _shas(hub: FakeHub, repo_id: str) -> list[str]:
    return [snap.sha for snap in hub.repos[("space", repo_id)].history["main"]]


def test_commit_as_of_picks_the_last_commit_at_or_before_the_deadline(
        fake_history: FakeHub) -> None:
    source = HubSource("space", "alice/repro-neurips26-4821", None, None)
    first, later = _shas(fake_history, source.repo_id)
    assert commit_as_of(source, FEB).sha == first
    assert commit_as_of(source, JAN).sha == first  # "at": a commit at the deadline counts
    assert commit_as_of(source, JAN - timedelta(seconds=1)) is None
    pinned = commit_as_of(source, MAR + timedelta(days=1))
    assert pinned.sha == later and pinned.created_at == MAR
    assert ("GET", "/api/spaces/alice/repro-neurips26-4821/commits/main") in \
        fake_history.requests


def test_commit_history_is_read_across_pages(fake_history: FakeHub) -> None:
    source = HubSource("space", "bob/neurips26-4821-check", None, None)
    shas = _shas(fake_history, source.repo_id)
    assert commit_as_of(source, datetime(2025, 12, 2, 1, tzinfo=UTC)).sha == shas[1]
    pages = [r for r in fake_history.details if r.path.endswith("/commits/main")]
    assert len(pages) == 3  # 8 commits, 3 a page


def test_plan_pins_discovered_spaces_and_skips_one_without_a_commit_in_time(
        fake_history: FakeHub) -> None:
    plan = plan_sources([], discover=["hack26", "judge-me"], as_of=FEB)
    assert plan.errors == []
    assert plan.notes == ["discovered 3 Space(s) tagged hack26 + judge-me"]
    alice_first = _shas(fake_history, "alice/repro-neurips26-4821")[0]
    bob_last = _shas(fake_history, "bob/neurips26-4821-check")[-1]
    assert [p.spec for p in plan.sources] == [
        f"hf://spaces/alice/repro-neurips26-4821@{alice_first}",
        f"hf://spaces/bob/neurips26-4821-check@{bob_last}"]
    alice = plan.sources[0].provenance
    assert (alice.revision, alice.committed_at, alice.as_of) == (alice_first, JAN, FEB)
    assert alice.discovered_by == ["hack26", "judge-me"]
    assert plan.skipped == [f"hf://spaces/carol/iclr27-0137-repro: skipped, no commit at or "
                            f"before the deadline {FEB.isoformat()}"]


def test_plan_applies_the_deadline_to_named_spaces_once(fake_history: FakeHub) -> None:
    plan = plan_sources(["hf://spaces/alice/repro-neurips26-4821", "some/folder"],
                        discover=["judge-me"], as_of=FEB)
    specs = [p.spec for p in plan.sources]
    # named first (the local folder as it is), then the discovered ones not already named
    assert specs[0] == "some/folder" and plan.sources[0].provenance is None
    assert [s.split("@")[0] for s in specs[1:]] == ["hf://spaces/alice/repro-neurips26-4821",
                                                    "hf://spaces/bob/neurips26-4821-check"]
    assert plan.sources[1].provenance.discovered_by == []  # named, not discovered
    assert any("some/folder" in note and "--as-of" in note for note in plan.notes)


# --- the CLI, end to end ---------------------------------------------------------------------


def _judging(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return judging_cli(args, env, cwd, timeout=180)


def _judging_here(args: list[str], monkeypatch: pytest.MonkeyPatch, cwd: Path) -> Result:
    """`judging ARGS` in this process, in the environment `_judging` gives its process (the
    Hub, when a test points this process at one, is patched in by the test): for the tests
    that need no process of their own (the end-to-end test above runs one)."""
    monkeypatch.setenv("JUDGING_JUDGE", "offline")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(main, args)


def test_cli_discover_as_of_end_to_end(history_hub: FakeHub, tmp_path: Path) -> None:
    history_hub.clear()
    out = tmp_path / "run"
    env = hub_environ(history_hub.url, tmp_path / "hf-home")
    result = _judging(["run", "--discover", "hack26", "--discover", "judge-me",
                       "--as-of", "2026-02-01T00:00:00", "--out", str(out)], env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    deadline = datetime(2026, 2, 1, tzinfo=UTC)
    alice_first = _shas(history_hub, "alice/repro-neurips26-4821")[0]
    bob_last = _shas(history_hub, "bob/neurips26-4821-check")[-1]

    # the claims judged are those of the commit before the deadline, not the later one
    claims = [ClaimInput.from_file(line) for line in
              (out / "claims.jsonl").read_text().splitlines() if line.strip()]
    assert {c.key.submission_id for c in claims} == {"alice/repro-neurips26-4821",
                                                     "bob/neurips26-4821-check"}
    assert not any(LATER in c.claim.statement for c in claims)
    by_sub = {c.key.submission_id: c.source for c in claims}
    assert by_sub["alice/repro-neurips26-4821"].revision == alice_first
    assert by_sub["alice/repro-neurips26-4821"].source == \
        f"hf://spaces/alice/repro-neurips26-4821@{alice_first}"
    assert by_sub["bob/neurips26-4821-check"].revision == bob_last
    assert by_sub["bob/neurips26-4821-check"].committed_at == JAN
    lines = [json.loads(line) for line in
             (out / "judgments.jsonl").read_text().splitlines() if line.strip()]
    assert {line["claim"]["submission_id"] for line in lines} == set(by_sub)
    assert all(line["status"] != "error" for line in lines), \
        [line["reason"] for line in lines if line["status"] == "error"]
    # only the revisions judged were downloaded (never the later commit, never dave)
    assert not any(f"/resolve/{_shas(history_hub, 'alice/repro-neurips26-4821')[1]}/" in path
                   for _, path in history_hub.requests)
    assert not any(path.startswith("/spaces/dave/") for _, path in history_hub.requests)
    assert not any(path.startswith("/spaces/carol/") for _, path in history_hub.requests)

    # run.json: the options, the revision per submission and the skip with its reason
    info = RunInfo.from_file((out / "run.json").read_text())
    invocation = info.invocations[-1]
    assert invocation.status == "finished"
    assert invocation.options["discover"] == "hack26 + judge-me"
    assert invocation.options["as_of"] == deadline.isoformat()
    assert {sid: s.revision for sid, s in invocation.submissions.items()} == {
        "alice/repro-neurips26-4821": alice_first, "bob/neurips26-4821-check": bob_last}
    skip = (f"hf://spaces/carol/iclr27-0137-repro: skipped, no commit at or before the "
            f"deadline {deadline.isoformat()}")
    assert invocation.skipped == [skip]
    assert invocation.errors == []

    # and printed
    assert "discovered 3 Space(s) tagged hack26 + judge-me" in result.stdout
    assert f"alice/repro-neurips26-4821: judged hf://spaces/alice/repro-neurips26-4821@" \
           f"{alice_first}" in result.stdout
    assert f"skipped: {skip}" in result.stderr
    assert history_hub.unexpected == []


def test_cli_named_space_as_of(history_hub: FakeHub, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    history_hub.clear()
    out = tmp_path / "run"
    history_hub.patch(monkeypatch, tmp_path / "hf-home", token=GOOD_TOKEN)
    result = _judging_here(["run", "hf://spaces/carol/iclr27-0137-repro", "--as-of",
                            "2026-02-01", "--out", str(out)], monkeypatch, cwd=tmp_path)
    # nothing judged, the skip said so, and it is not a failure
    assert result.exit_code == 0, result.output
    assert "skipped: hf://spaces/carol/iclr27-0137-repro: skipped, no commit at or before" in \
        result.stderr
    info = RunInfo.from_file((out / "run.json").read_text())
    assert info.invocations[-1].skipped and info.invocations[-1].submissions == {}
    # the CLI passed HF_TOKEN down to the history call, and never recorded it
    history = [r for r in history_hub.details if r.path.endswith("/commits/main")]
    assert history and {r.authorization for r in history} == {f"Bearer {GOOD_TOKEN}"}
    assert GOOD_TOKEN not in (out / "run.json").read_text()


def test_cli_bad_as_of_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   caplog: pytest.LogCaptureFixture) -> None:
    result = _judging_here(["run", "--discover", "x", "--as-of", "next tuesday", "--out",
                            str(tmp_path / "run")], monkeypatch, cwd=tmp_path)
    assert result.exit_code == 1
    # no warning or error logged beside it (what the process would print on stderr)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert result.stderr.strip().splitlines() == [
        "error: --as-of 'next tuesday' is not an ISO 8601 date-time: use e.g. "
        "2026-05-01T23:59:59Z, 2026-05-01T23:59:59+02:00 or 2026-05-01 (UTC when no zone is "
        "given)"]
    assert not (tmp_path / "run").exists()


def test_cli_needs_a_source_or_discover(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _judging_here(["run", "--out", str(tmp_path / "run")], monkeypatch, cwd=tmp_path)
    assert result.exit_code == 2
    assert "give at least one SOURCE or --discover TAG" in result.stderr


def test_cli_discovery_without_results_fails(history_hub: FakeHub, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    history_hub.patch(monkeypatch, tmp_path / "hf-home")
    result = _judging_here(["run", "--discover", "nobody-uses-this", "--out",
                            str(tmp_path / "run")], monkeypatch, cwd=tmp_path)
    assert result.exit_code == 1
    assert "no Space carries all the tags nobody-uses-this" in result.stderr
