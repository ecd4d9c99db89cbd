"""A review plan pushed to the real local Argilla server in its order, answered, pulled and
read back as the random sample (issue 42)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from judging.app.queue import review_queue
from judging.cli import main
from judging.errors import ReviewError
from judging.resolve import PlannedClaim, read_plan, resolve_run, run_claim_rows
from judging.review.dataset import record_id
from judging.review.plan import write_plan
from judging.review.pull import (
    DROPPED_FROM_PLAN,
    DROPPED_PRIORITY,
    NOT_IN_PLAN,
    REPRIORITIZED,
    pull_run,
    read_labels,
    sync_plan_priorities,
)
from judging.review.push import PushedRecord, PushOptions, connect, plan_priority, push_run
from judging.run.runner import RunRequest, run_judging
from judging.rundir import RunPaths, iter_jsonl
from judging.rundir.store import RunStore
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache
from tests.review.test_push_pull import _answer

pytestmark = pytest.mark.usefixtures("shared_measurements")


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples judged once for the module (issue 43: one run, not four); a test that plans,
    pushes or pulls works on its own copy (`_copy`)."""
    out = tmp_path_factory.mktemp("judged") / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
                           measure_cache=module_measure_cache()))
    return out


def _copy(run: Path, target: Path) -> Path:
    shutil.copytree(run, target)
    return target


@pytest.fixture(scope="module")
def planned_run(judged_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = _copy(judged_run, tmp_path_factory.mktemp("plan") / "run")
    result = CliRunner().invoke(main, ["review", "plan", str(out), "--budget", "6",
                                       "--top", "2"])
    assert result.exit_code == 0, result.output
    return out


def test_planned_push_in_order_and_pull(argilla, planned_run: Path, tmp_path: Path) -> None:
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    plan = read_plan(planned_run)
    assert {p.part for p in plan} == {"random", "targeted"}
    push_run(planned_run, client=client, options=PushOptions(workspace=workspace, plan=plan))
    store = RunStore.open(planned_run, create=False)
    rubrics = {str(j.claim): [] for j in store.latest()}
    for judgment in store.latest():
        if judgment.rubric is not None:
            rubrics[str(judgment.claim)].append(judgment.rubric)
    store.close()
    seen: dict[str, tuple[float, list[str], str]] = {}
    for dataset in client.datasets.list():
        if dataset.workspace.name != workspace:
            continue
        for record in dataset.records:
            key = f"{record.metadata['submission_id']}::{record.metadata['claim_id']}"
            seen[key] = (record.metadata["priority"], record.metadata["priority_reasons"],
                         dataset.name)
    # Only the planned claims, the random sample blind (no AI answers), the rest beside them.
    assert set(seen) == {p.claim_key for p in plan}
    for entry in plan:
        priority, reasons, name = seen[entry.claim_key]
        assert name.endswith("-calibration") == (entry.part == "random")
        assert entry.reasons[0] in reasons
    # The plan's order: a priority never above the one before it within a part.
    for part in ("random", "targeted"):
        values = [seen[p.claim_key][0] for p in plan if p.part == part]
        assert values == sorted(values, reverse=True) and len(set(values)) == len(values)

    # Two reviewers answer one record of the random sample; the pull brings it back blind and
    # the estimates count it as random (never a targeted one).
    first = next(p for p in plan if p.part == "random")
    rubric = rubrics[first.claim_key][0]
    name = f"{rubric.id}-{rubric.version}-calibration"
    dataset = client.datasets(name=name, workspace=workspace)
    wanted = record_id(first.claim_key, rubric.id, rubric.version)
    (server_id,) = [str(r._server_id) for r in dataset.records if str(r.id) == wanted]
    questions = {q.name for q in dataset.settings.questions}
    assert "overall_verdict" in questions
    for _ in range(2):
        reviewer = argilla.create_user(workspaces=[workspace])
        _answer(argilla, reviewer, server_id, {"overall_verdict": "fail"})
    out = tmp_path / "labels.jsonl"
    pull_run(planned_run, client=client, workspace=workspace, out=out)
    labels = read_labels(out)
    assert {str(label.claim) for label in labels} == {first.claim_key}
    assert all(label.blind for label in labels)
    resolve_run(planned_run, labels_path=out)
    rows = {r.key: r for r in run_claim_rows(planned_run)}
    assert rows[first.claim_key].random and rows[first.claim_key].human == "fail"
    assert not any(r.random for k, r in rows.items()
                   if k in {p.claim_key for p in plan if p.part == "targeted"})


def test_pull_replans_as_answers_come_back(argilla, judged_run: Path, tmp_path: Path) -> None:
    run = _copy(judged_run, tmp_path / "run")
    runner = CliRunner()
    result = runner.invoke(main, ["review", "plan", str(run), "--budget", "6", "--top", "2"])
    assert result.exit_code == 0, result.output
    # An earlier plan targeted one more claim, for a reason that no longer holds (nothing in the
    # run targets it now: the AI answered it with confidence, uncontested): the re-plan drops it.
    rows = run_claim_rows(run)
    stale = next(r for r in rows if r.key not in {p.claim_key for p in read_plan(run)}
                 and r.ai is not None and not r.low_confidence and not r.contested
                 and not r.not_addressed)
    write_plan(run, [*read_plan(run), PlannedClaim(
        claim_key=stale.key, submission=stale.submission, order=len(read_plan(run)),
        part="targeted", reasons=["low_confidence"], priority=0.8, stratum=stale.stratum,
        ai_outcome=stale.ai, top_k=2)])
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    server = ["--api-url", argilla.url, "--api-key", argilla.api_key]
    result = runner.invoke(main, ["review", "push", str(run), "--plan", "--workspace", workspace,
                                  *server])
    assert result.exit_code == 0, result.output
    plan = read_plan(run)
    assert _priorities(argilla, workspace)[stale.key][0] == plan_priority(plan[-1], len(plan))
    first_random = next(p for p in plan if p.part == "random")
    first_targeted = next(p for p in plan if p.part == "targeted")
    answered = {first_random.claim_key, first_targeted.claim_key}
    # A reviewer fails both claims on every rubric they are judged by.
    client = connect(argilla.url, argilla.api_key)
    reviewer = argilla.create_user(workspaces=[workspace])
    store = RunStore.open(run, create=False)
    refs = {(str(j.claim), j.rubric.id, j.rubric.version) for j in store.latest()
            if j.rubric is not None and str(j.claim) in answered}
    store.close()
    for key, rubric, version in refs:
        part = next(p.part for p in plan if p.claim_key == key)
        name = f"{rubric}-{version}" + ("-calibration" if part == "random" else "")
        wanted = record_id(key, rubric, version)
        (server_id,) = [str(r._server_id) for r in client.datasets(name=name, workspace=workspace)
                        .records if str(r.id) == wanted]
        _answer(argilla, reviewer, server_id, {"overall_verdict": "fail"})

    result = runner.invoke(main, ["review", "pull", str(run), "--workspace", workspace, *server])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"re-planned: 2 of {len(plan)} planned claims answered; {len(plan) - 2} left: " in said
    new = read_plan(run)
    # The random sample is kept whole (the answered claim too: its label calibrates), the
    # answered targeted claim is not planned again, and the budget left is what was not answered.
    assert {p.claim_key for p in new if p.part == "random"} == \
        {p.claim_key for p in plan if p.part == "random"}
    assert first_targeted.claim_key not in {p.claim_key for p in new}
    assert len([p for p in new if p.claim_key not in answered]) == len(plan) - 2
    assert all(p.top_k == 2 for p in new)
    rows = {r.key: r for r in run_claim_rows(run)}
    assert rows[first_random.claim_key].random and rows[first_random.claim_key].human == "fail"
    assert rows[first_targeted.claim_key].human == "fail"
    assert not rows[first_targeted.claim_key].random
    # Argilla's queue follows the re-plan: a claim it dropped goes last with the reason (it kept
    # its old priority before), the claims still planned carry the new plan's priorities.
    assert stale.key not in {p.claim_key for p in new}
    priorities = _priorities(argilla, workspace)
    dropped = {p.claim_key for p in plan} - {p.claim_key for p in new} - answered
    assert stale.key in dropped
    for key in dropped:
        assert priorities[key][0] == DROPPED_PRIORITY
        assert priorities[key][1][0] == DROPPED_FROM_PLAN
    for entry in new:
        if entry.claim_key in priorities:
            assert priorities[entry.claim_key][0] == plan_priority(entry, len(new))
            assert priorities[entry.claim_key][1][0] == entry.reasons[0]
    assert "review priorities updated in Argilla" in said
    # Without new answers a second pull re-plans to the same claims.
    result = runner.invoke(main, ["review", "pull", str(run), "--workspace", workspace, *server])
    assert [p.claim_key for p in read_plan(run)] == [p.claim_key for p in new]
    assert ", 0 added" in " ".join(result.output.split())


def _priorities(argilla, workspace: str) -> dict[str, tuple[float, list[str]]]:
    """Claim key -> (priority, reasons) of its records in `workspace`, read back from the server
    (one value per claim: the test's claims are judged by one rubric each or agree across)."""
    client = connect(argilla.url, argilla.api_key)
    found: dict[str, tuple[float, list[str]]] = {}
    for dataset in client.datasets.list():
        if dataset.workspace.name == workspace:
            for record in dataset.records:
                key = f"{record.metadata['submission_id']}::{record.metadata['claim_id']}"
                found[key] = (record.metadata["priority"], list(record.metadata["priority_reasons"]))
    return found


def _queue(argilla, workspace: str) -> dict[tuple[str, str], tuple[float, list[str]]]:
    """(dataset, claim key) -> (priority, reasons) of every record in `workspace`, as Argilla's
    annotation page sorts them."""
    client = connect(argilla.url, argilla.api_key)
    return {(dataset.name, f"{r.metadata['submission_id']}::{r.metadata['claim_id']}"):
            (r.metadata["priority"], list(r.metadata["priority_reasons"]))
            for dataset in client.datasets.list() if dataset.workspace.name == workspace
            for r in dataset.records}


def test_a_planned_push_after_a_full_push_leads_the_queue(argilla, judged_run: Path,
                                                          tmp_path: Path) -> None:
    """The organizer pushed the whole run (as `make demo` and the reviewer's tutorial do), then
    plans a budget and pushes the plan: Argilla's queues must follow the plan. Every record the
    plan does not ask for (a claim it did not choose, or a random-sample claim's record beside
    the AI's answers) goes last with the reason, so that the plan's claims lead each queue and
    the random sample is answered blind, never from the record that shows the AI's answers."""
    run = _copy(judged_run, tmp_path / "run")
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    server = ["--api-url", argilla.url, "--api-key", argilla.api_key, "--workspace", workspace]
    runner = CliRunner()
    result = runner.invoke(main, ["review", "push", str(run), *server])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["review", "plan", str(run), "--budget", "6", "--top", "2"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["review", "push", str(run), "--plan", *server])
    assert result.exit_code == 0, result.output
    plan = {p.claim_key: p for p in read_plan(run)}
    queue = _queue(argilla, workspace)
    assert {k for _, k in queue} > set(plan), "the full push sent more claims than the plan"
    for (name, key), (priority, reasons) in sorted(queue.items()):
        entry = plan.get(key)
        if entry is not None and name.endswith("-calibration") == (entry.part == "random"):
            assert priority == plan_priority(entry, len(plan)), (name, key, priority)
        else:
            assert (priority, reasons[0]) == (DROPPED_PRIORITY, NOT_IN_PLAN), \
                (name, key, priority, reasons, entry and entry.part)
    # The dashboard's review queue shows what Argilla holds: each planned claim's record in the
    # dataset the plan sent it to, with its priority, the plan's claims first; and it does not
    # ask for a push that would put the earlier priorities back.
    rows, note = review_queue(run, argilla_url=argilla.url, argilla_api_key=argilla.api_key,
                              workspace=workspace)
    assert rows is not None
    for row in rows:
        assert queue[(row.dataset, row.claim_key)][0] == row.priority, row
    planned_rows = [row for row in rows if row.claim_key in plan]
    assert {(r.claim_key, r.blind) for r in planned_rows} == \
        {(k, p.part == "random") for k, p in plan.items()}
    assert rows[:len(planned_rows)] == planned_rows
    assert "older priority" not in note, note
    # After a pull (nothing answered yet) the queue still follows the plan.
    result = runner.invoke(main, ["review", "pull", str(run), *server])
    assert result.exit_code == 0, result.output
    assert _queue(argilla, workspace) == queue


def test_a_priority_update_that_fails_midway_keeps_what_it_changed(argilla, judged_run: Path,
                                                                   tmp_path: Path) -> None:
    """The server stops answering after two priority updates: the command fails in our words,
    the two records Argilla already changed are recorded (the dashboard's queue reads that
    file), and the next sync changes only the rest, ending where an unbroken one would."""
    run = _copy(judged_run, tmp_path / "run")
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    server = ["--api-url", argilla.url, "--api-key", argilla.api_key, "--workspace", workspace]
    runner = CliRunner()
    assert runner.invoke(main, ["review", "push", str(run), *server]).exit_code == 0
    result = runner.invoke(main, ["review", "plan", str(run), "--budget", "6", "--top", "2"])
    assert result.exit_code == 0, result.output
    client = connect(argilla.url, argilla.api_key)
    patches: list[str] = []

    def drop_the_third_patch(request: httpx.Request) -> None:
        if request.method == "PATCH":
            patches.append(str(request.url))
            if len(patches) == 3:
                raise httpx.ConnectError("injected: the server went away", request=request)

    client.api.http_client.event_hooks["request"].append(drop_the_third_patch)
    with pytest.raises(ReviewError, match="did not answer"):
        sync_plan_priorities(run, client=client, previous=[], workspace=workspace)
    pushed = RunPaths(run).pushed
    recorded = [line for line in iter_jsonl(pushed, PushedRecord) if line.digest == REPRIORITIZED]
    assert len(recorded) == 2
    queue = _queue(argilla, workspace)
    names = {str(d.id): d.name for d in client.datasets.list() if d.workspace.name == workspace}
    for line in recorded:
        assert queue[(names[line.dataset_id], line.claim_key)] == (line.priority, line.reasons)
    client.api.http_client.event_hooks["request"].clear()
    moved = sync_plan_priorities(run, client=client, previous=[], workspace=workspace)
    changed = moved.planned + moved.dropped + moved.not_in_plan
    assert changed >= 1
    again = [line for line in iter_jsonl(pushed, PushedRecord) if line.digest == REPRIORITIZED]
    assert len(again) == 2 + changed
    # Nothing left to change: a third sync changes nothing.
    assert not sync_plan_priorities(run, client=client, previous=[], workspace=workspace).text()
