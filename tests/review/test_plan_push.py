"""A review plan pushed to the real local Argilla server in its order, answered, pulled and
read back as the random sample (issue 42)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.resolve import read_plan, resolve_run, run_claim_rows
from judging.review.dataset import record_id
from judging.review.pull import pull_run, read_labels
from judging.review.push import PushOptions, connect, push_run
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore
from tests.conftest import REGISTRY, SUBMISSIONS
from tests.review.test_push_pull import _answer


@pytest.fixture(scope="module")
def planned_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan") / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY))
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
