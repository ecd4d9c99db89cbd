"""`judging watch` over a Space that could not be loaded, then fixed (issue 40): after the poll
that judges the fixed revision, the run's current state, its decisions and its leaderboard say
the Space loaded; the "could not be loaded" line is kept in the append-only file, withdrawn."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judging.run import RunRequest
from judging.rundir import RunStore
from judging.watch import WatchOptions, read_state, watch
from tests.fakehub import FakeHub

TAG = "neurips26-hack"
SPACE = ("space", "dave/slopes-repro")
FRONT = "---\ntitle: Slopes\nsdk: static\n---\n\n# Slopes\n\n"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    with FakeHub() as fake:
        fake.patch(monkeypatch, tmp_path / "hf-home")
        yield fake


def test_a_fixed_space_shows_that_it_loaded(hub: FakeHub, tmp_path: Path) -> None:
    run = tmp_path / "run"
    options = WatchOptions(tags=[TAG], calibration_dir=tmp_path / "no-calibration",
                           request=RunRequest(sources=[], out=run, measure_workers=0))
    hub.commit(SPACE, {"README.md": FRONT + "We tried a few things.\n"},
               date=datetime(2026, 1, 10, tzinfo=UTC))
    hub.tag(SPACE, TAG)
    watch(options, every=1, polls=1)
    [error] = RunStore.open(run, create=False).latest()
    assert "could not be loaded" in error.reason

    hub.commit(SPACE, {"README.md": FRONT + (
        "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
        "| C1 The slope is minus one | -1.00 | -0.998 | VERIFIED |\n")},
        date=datetime(2026, 1, 11, tzinfo=UTC))
    reports = []
    watch(options, every=1, polls=1, report=lambda n, r: reports.append(r))
    assert (reports[-1].record.changed, reports[-1].record.judged) == (1, 1)
    assert read_state(run).spaces[SPACE[1]].status == "judged"
    store = RunStore.open(run, create=False)
    latest = store.latest()
    assert latest and not any("could not be loaded" in (j.reason or "") for j in latest)
    assert {j.claim.claim_id for j in latest} == {"slopes-repro/c1"}
    # the decisions and the leaderboard the poll wrote follow the fixed state
    finals = [json.loads(x) for x in (run / "final.jsonl").read_text().splitlines()]
    assert {f["claim"]["claim_id"] for f in finals} == {"slopes-repro/c1"}
    [row] = list(csv.DictReader((run / "leaderboard_submissions.csv").open()))
    assert row["submission"] == SPACE[1]
    assert error in store.judgments()  # history kept
