"""The latest load of a submission is its current state (issue 40): a Space that could not be
loaded, fixed and judged again into the same run directory, no longer shows its "could not be
loaded" line; broken again, the error is back and the claim is gone; a claim the submission no
longer has leaves the current state. The append-only file keeps every earlier line: each change
is a line that withdraws an identity (`Judgment.withdrawn`), which the run's reader honours."""

from __future__ import annotations

from pathlib import Path

from judging.models import LineStatus
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore, read_judgments

FRONT = "---\ntitle: Slopes\nsdk: static\n---\n\n# Slopes\n\n"
NO_CLAIM = FRONT + "We tried a few things and wrote about them.\n"
TABLE = "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
ONE_CLAIM = FRONT + TABLE + "| C1 The slope is minus one | -1.00 | -0.998 | VERIFIED |\n"


def judge(space: Path, readme: str, out: Path) -> RunStore:
    (space / "README.md").write_text(readme)
    result = run_judging(RunRequest(sources=[str(space)], out=out, measure_workers=0))
    assert not result.source_errors
    return RunStore.open(out, create=False)


def current(store: RunStore) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in store.latest():
        out.setdefault(line.claim.claim_id, set()).add(line.status.value)
    return out


def test_a_fixed_space_no_longer_shows_that_it_could_not_be_loaded(tmp_path: Path) -> None:
    space, out = tmp_path / "space", tmp_path / "run"
    space.mkdir()
    broken = judge(space, NO_CLAIM, out)
    [error] = broken.latest()
    assert error.status is LineStatus.error and "could not be loaded" in error.reason
    assert current(broken) == {"#claim-0": {"error"}}

    fixed = judge(space, ONE_CLAIM, out)
    assert set(current(fixed)) == {"space/c1"}  # the error line no longer counts
    assert "error" not in current(fixed)["space/c1"]
    assert fixed.claim_keys() == ["space::space/c1"] and fixed.claim_count() == 1
    lines = read_judgments(out / "judgments.jsonl")
    assert lines[0] == error  # the append-only file keeps it, and says why it stopped counting
    [withdrawn] = [line for line in lines if line.withdrawn is not None]
    assert str(withdrawn.claim) == str(error.claim) and "loads now" in withdrawn.withdrawn

    # broken again: the error is the current state again, the claim is gone
    again = judge(space, NO_CLAIM, out)
    assert current(again) == {"#claim-0": {"error"}}
    assert again.claim_keys() == [] and list(again.iter_claims()) == []
    # and fixed once more: the claim counts again (judged again: its lines were withdrawn)
    last = judge(space, ONE_CLAIM, out)
    assert set(current(last)) == {"space/c1"}
    assert [c.claim.claim_id for c in last.iter_claims()] == ["space/c1"]


def test_a_claim_the_submission_no_longer_has_leaves_the_current_state(tmp_path: Path) -> None:
    space, out = tmp_path / "space", tmp_path / "run"
    space.mkdir()
    two = judge(space, ONE_CLAIM + "| C2 The intercept is half | 0.50 | 0.71 | FAILED |\n", out)
    assert set(current(two)) == {"space/c1", "space/c2"}
    written = len(read_judgments(out / "judgments.jsonl"))
    one = judge(space, ONE_CLAIM, out)
    assert set(current(one)) == {"space/c1"}
    assert [c.claim.claim_id for c in one.iter_claims()] == ["space/c1"]
    # c1 is not judged again (same input); c2's lines are withdrawn, not rewritten
    new = read_judgments(out / "judgments.jsonl")[written:]
    assert new and all(line.withdrawn and line.claim.claim_id == "space/c2" for line in new)
    # a resume with nothing changed writes nothing
    judge(space, ONE_CLAIM, out)
    assert len(read_judgments(out / "judgments.jsonl")) == written + len(new)
