"""A submission nothing of which could be judged is on the leaderboard, unranked, with its reason
(never silently missing), and leaves it once a later run reads it (judging.resolve.leaderboard
`unjudged_submissions`, run.json's `unreadable` and `read`)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType

import pyarrow.parquet as pq
from click.testing import CliRunner

from judging.app import load_run
from judging.cli import main
from judging.intake import label_name, source_label
from judging.publish import stage
from judging.rundir import Invocation, RunInfo, UnreadableSource
from tests.conftest import SubmissionBuilder

SPACE_WITHOUT_CLAIMS = "---\ntitle: A reproduction\nsdk: static\n---\n# Notes\n\nWe tried.\n"


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.output


def _board(run: Path, name: str = "leaderboard_submissions.csv") -> dict[str, dict[str, str]]:
    _cli("resolve", str(run))
    _cli("leaderboard", str(run))
    return {row.get("submission") or row["participant"]: row
            for row in csv.DictReader((run / name).open(encoding="utf-8"))}


def _event(root: Path) -> Path:
    """Three folders: alice's readable submission, alice's Space with no claim in it, and
    bob's folder whose manifest is not YAML."""
    good = SubmissionBuilder(root / "alice-good", submission_id="alice/good")
    good.number_claim()
    good.write()
    (root / "alice--notes").mkdir()
    (root / "alice--notes" / "README.md").write_text(SPACE_WITHOUT_CLAIMS, encoding="utf-8")
    broken = SubmissionBuilder(root / "bob-broken", submission_id="bob/broken")
    broken.number_claim()
    broken.write(raw="submission_id: [\n")
    return root


def test_unreadable_and_claimless_submissions_are_listed_unranked(tmp_path: Path) -> None:
    run = tmp_path / "run"
    output = _cli("run", str(_event(tmp_path / "event")), "--judge", "offline", "--out", str(run))
    assert "bob-broken/submission.yaml" in output  # the run says it as it happens
    rows = _board(run)
    assert rows["alice/good"]["rank"] == "1" and rows["alice/good"]["note"] == ""
    for name, why in (("bob-broken", "not valid YAML"), ("alice/notes", "no claim found")):
        row = rows[name]
        assert row["rank"] == "" and row["claims"] == "0" and row["pass_rate_95"] == ""
        assert row["note"].startswith("not ranked: nothing could be judged: ") and why in \
            row["note"], row
    # listed after every ranked row, whatever their counts
    assert list(rows)[0] == "alice/good"
    people = _board(run, "leaderboard_participants.csv")
    assert people["alice"]["rank"] == "1" and people["alice"]["submissions"] == "2"
    assert "nothing could be judged of 1 more submission(s)" in people["alice"]["note"]
    # whose an unreadable local folder is cannot be read either: its name stands for them
    assert people["bob-broken"]["rank"] == ""
    assert people["bob-broken"]["note"].startswith("not ranked")
    assert "bob-broken" in (run / "leaderboard.html").read_text(encoding="utf-8")
    # the dashboard ranks with the same rows
    shown = {r["submission"]: r for r in load_run(run).by_submission}
    assert shown["bob-broken"]["rank"] is None and "not valid YAML" in shown["bob-broken"]["note"]
    # the published dataset's leaderboard table carries the rows and why they are unranked
    staged = stage(run, out=tmp_path / "publish", calibration_dir=tmp_path / "none")
    published = {r["submission_id"]: r for r in pq.read_table(
        staged.folder / "data" / "leaderboard.parquet").to_pylist()}
    assert published["bob-broken"]["rank"] is None
    assert "not valid YAML" in published["bob-broken"]["note"]


def test_a_folder_read_by_a_later_run_leaves_the_list(tmp_path: Path) -> None:
    event, run = _event(tmp_path / "event"), tmp_path / "run"
    _cli("run", str(event), "--judge", "offline", "--out", str(run))
    assert "bob-broken" in _board(run)
    fixed = SubmissionBuilder(event / "bob-broken", submission_id="bob/broken")
    fixed.number_claim()
    fixed.write()
    _cli("run", str(event), "--judge", "offline", "--out", str(run))
    rows = _board(run)
    assert "bob-broken" not in rows and rows["bob/broken"]["rank"] == "1"


def test_a_submission_with_some_claims_unloaded_keeps_its_rank_and_says_so(
        tmp_path: Path) -> None:
    builder = SubmissionBuilder(tmp_path / "event" / "carol", submission_id="carol/mixed")
    builder.number_claim("paper-1/c1")
    builder.number_claim("paper-1/c2", reported="ninety-four")  # not a number: not loaded
    builder.write()
    run = tmp_path / "run"
    _cli("run", str(tmp_path / "event"), "--judge", "offline", "--out", str(run))
    row = _board(run)["carol/mixed"]
    assert row["rank"] == "1" and row["claims"] == "1"
    assert row["note"] == "1 of its claims or files could not be loaded (see the report)"


def _invocation(unreadable: Mapping[str, str] = MappingProxyType({}),
                read: tuple[str, ...] = ()) -> Invocation:
    return Invocation(started_at=datetime(2026, 12, 1, tzinfo=UTC), code_version="test",
                      sources=["x"], read=list(read),
                      unreadable={k: UnreadableSource(name=k, reason=v)
                                  for k, v in unreadable.items()})


def test_the_latest_attempt_decides() -> None:
    info = RunInfo(run_id="r", created_at=datetime(2026, 12, 1, tzinfo=UTC), invocations=[
        _invocation({"a": "first failure", "b": "broken"}),
        _invocation({"a": "second failure"}, read=("b",)),
        _invocation(read=("c",))])
    assert [(u.name, u.reason) for u in info.unreadable_sources()] == [("a", "second failure")]
    info.invocations.append(_invocation(read=("a",)))
    assert info.unreadable_sources() == []


def test_hub_folders_are_named_without_their_revision(tmp_path: Path) -> None:
    root = tmp_path / "sources"
    first = root / "spaces" / "alice" / "repro" / "@main"
    later = root / "spaces" / "alice" / "repro" / "@0123abcd"
    assert source_label("hf://spaces/alice/repro", first, download_root=root) == \
        source_label("hf://spaces/alice/repro@0123abcd", later, download_root=root) == \
        "hf://spaces/alice/repro"
    inner = root / "datasets" / "org" / "event" / "@main" / "team" / "bob"
    label = source_label("hf://datasets/org/event", inner, download_root=root)
    assert label == "hf://datasets/org/event/team/bob" and label_name(label) == "org/event/team/bob"
    assert source_label("hf://spaces/alice/repro@v2", download_root=root) == \
        "hf://spaces/alice/repro"
    assert label_name("hf://spaces/alice/repro") == "alice/repro"
    assert label_name(str(tmp_path / "event" / "bob-broken")) == "bob-broken"
