"""People decide, all of their answers: the overall answer ("Overall, does the claim pass this
rubric?") is a decision, checked against the reviewers' own criteria answers; a disagreement is
a reviewer conflict, decided fail until settled. Answers go in as a reviewer gives them in the
UI: an annotator's response over the real local Argilla server's REST API, then `review pull`
and `resolve`, as a user runs them.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.resolve import resolve_run
from judging.review.dataset import record_id
from judging.review.pull import pull_run
from judging.review.push import PushOptions, connect, push_run
from judging.run.runner import RunRequest, run_judging
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

FIG = "figure-match-1.4.0"
FM = "figure-match@1.4.0"
ALICE, BOB, CAROL = ("alice/repro-neurips26-4821", "bob/neurips26-4821-check",
                     "carol/iclr27-0137-repro")
#: figure-match 1.4.0's top answers (every criterion passes).
TOP = {"same_trend": "yes", "axes_and_scales": 5, "same_series": "yes",
       "values_within_tolerance": "yes", "no_misleading_cropping": "yes",
       "independent_reproduction": "yes", "overall_match": 5}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("decides") / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
                           measure_cache=module_measure_cache()))
    return out


def _records(argilla, workspace: str) -> dict[tuple[str, str], str]:
    """(submission, claim) -> the record's server id, in the review dataset."""
    client = connect(argilla.url, argilla.api_key)
    dataset = client.datasets(name=FIG, workspace=workspace)
    return {(r.metadata["submission_id"], r.metadata["claim_id"]): str(r._server_id)
            for r in dataset.records(with_suggestions=False)}


def _suggested(argilla, workspace: str, key: tuple[str, str]) -> dict:
    client = connect(argilla.url, argilla.api_key)
    dataset = client.datasets(name=FIG, workspace=workspace)
    wanted = record_id(f"{key[0]}::{key[1]}", "figure-match", "1.4.0")
    record = next(r for r in dataset.records(with_suggestions=True) if str(r.id) == wanted)
    return {s.question_name: s.value for s in record.suggestions}


def _respond(argilla, user, record: str, values: dict, status: str = "submitted"):
    """What the annotation page sends when a reviewer presses Submit (or saves a draft)."""
    with argilla.http(user.api_key) as http:
        return http.post(f"/api/v1/records/{record}/responses",
                         json={"values": {k: {"value": v} for k, v in values.items()},
                               "status": status})


def _decision(decisions, submission: str, claim: str, rubric: str = FM):
    return next(d for d in decisions if d.claim.submission_id == submission
                and d.claim.claim_id == claim and str(d.rubric) == rubric)


def test_every_human_answer_decides(argilla, judged: Path, tmp_path: Path) -> None:
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(judged, client=client, options=PushOptions(workspace=workspace, blind_share=0.0))
    ids = _records(argilla, workspace)
    ann, second, third = (argilla.create_user(workspaces=[workspace]) for _ in range(3))

    # Overall only: the required question, nothing else.
    assert _respond(argilla, ann, ids[ALICE, "neurips26-4821/c1"],
                    {"overall_verdict": "fail"}).status_code in (200, 201)
    # Agrees with every criterion the AI answered, fails it overall (the 32 of 45).
    agreed = {k: v for k, v in _suggested(argilla, workspace, (ALICE, "neurips26-4821/c2")).items()
              if k != "overall_verdict"}
    assert _respond(argilla, ann, ids[ALICE, "neurips26-4821/c2"],
                    {**agreed, "overall_verdict": "fail"}).status_code in (200, 201)
    # One criterion no, overall fail: they agree.
    assert _respond(argilla, ann, ids[BOB, "neurips26-4821/c6"],
                    {"same_trend": "no", "overall_verdict": "fail"}).status_code in (200, 201)
    # Every criterion at its best, overall fail: a reviewer conflict.
    assert _respond(argilla, ann, ids[CAROL, "iclr27-0137/c5"],
                    {**TOP, "overall_verdict": "fail"}).status_code in (200, 201)
    # A failed gate, overall pass: a conflict, never a human pass over a human fail.
    assert _respond(argilla, ann, ids[BOB, "neurips26-4821/c2"],
                    {"independent_reproduction": "no", "overall_verdict": "pass"}
                    ).status_code in (200, 201)
    # Two reviewers split on one record.
    for user, verdict in ((ann, "pass"), (second, "fail")):
        assert _respond(argilla, user, ids[BOB, "neurips26-4821/c1"],
                        {"overall_verdict": verdict}).status_code in (200, 201)
    # Criteria only: the page cannot submit it (the overall question is required); a draft is
    # kept in Argilla and decides nothing.
    criteria_only = {"same_trend": "no"}
    assert _respond(argilla, ann, ids[CAROL, "iclr27-0137/c1"],
                    criteria_only).status_code == 422
    assert _respond(argilla, ann, ids[CAROL, "iclr27-0137/c1"], criteria_only,
                    status="draft").status_code in (200, 201)

    labels = tmp_path / "labels.jsonl"
    pulled = pull_run(judged, client=client, workspace=workspace, out=labels)
    assert pulled.responses == {"submitted": 7, "draft": 1}
    decisions, finals = resolve_run(judged, labels_path=labels,
                                    calibration_dir=tmp_path / "no-calibration")
    by_claim = {(f.claim.submission_id, f.claim.claim_id): f for f in finals}

    overall_only = _decision(decisions, ALICE, "neurips26-4821/c1")
    assert (overall_only.outcome, overall_only.conflict) == ("fail", None)
    assert overall_only.overall_by == [ann.username] and overall_only.human_overall == "fail"
    assert by_claim[ALICE, "neurips26-4821/c1"].outcome == "fail"
    assert "humans" in by_claim[ALICE, "neurips26-4821/c1"].decided_by

    agreeing = _decision(decisions, ALICE, "neurips26-4821/c2")
    assert agreeing.outcome == "fail" and agreeing.human_overall == "fail"

    consistent = _decision(decisions, BOB, "neurips26-4821/c6")
    assert (consistent.outcome, consistent.conflict) == ("fail", None)

    against_criteria = _decision(decisions, CAROL, "iclr27-0137/c5")
    assert against_criteria.outcome == "fail"
    assert against_criteria.conflict == (f"overall fail ({ann.username}) but the reviewers' "
                                         f"criteria make it pass")
    assert by_claim[CAROL, "iclr27-0137/c5"].conflicts == {FM: against_criteria.conflict}

    gate = _decision(decisions, BOB, "neurips26-4821/c2")
    assert gate.outcome == "fail"
    assert gate.conflict is not None and "independent_reproduction: no" in gate.conflict

    split = _decision(decisions, BOB, "neurips26-4821/c1")
    assert split.outcome == "fail" and split.reviewers == 2
    assert split.reviewer_agreement == 0.5
    assert split.conflict is not None and "split" in split.conflict
    assert by_claim[BOB, "neurips26-4821/c1"].copied_figure  # the byte copy, flagged on the claim

    drafted = _decision(decisions, CAROL, "iclr27-0137/c1")
    assert drafted.reviewers == 0 and drafted.conflict is None

    # A third reviewer settles the split: a majority the criteria do not contradict.
    assert _respond(argilla, third, ids[BOB, "neurips26-4821/c1"],
                    {"overall_verdict": "pass"}).status_code in (200, 201)
    pull_run(judged, client=client, workspace=workspace, out=labels)
    decisions, _ = resolve_run(judged, labels_path=labels,
                               calibration_dir=tmp_path / "no-calibration")
    settled = _decision(decisions, BOB, "neurips26-4821/c1")
    assert (settled.outcome, settled.conflict, settled.reviewers) == ("pass", None, 3)
    assert settled.reviewer_agreement == pytest.approx(0.667)
    assert sorted(settled.overall_by) == sorted([ann.username, third.username])


def test_the_cli_says_how_many_conflicts(argilla, judged: Path, tmp_path: Path) -> None:
    """`review pull` then `resolve`, as a user types them: the conflict is counted on the
    console and written on the decision line."""
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(judged, client=client, options=PushOptions(workspace=workspace, blind_share=0.0))
    ids = _records(argilla, workspace)
    ann = argilla.create_user(workspaces=[workspace])
    assert _respond(argilla, ann, ids[CAROL, "iclr27-0137/c5"],
                    {**TOP, "overall_verdict": "fail"}).status_code in (200, 201)
    run = tmp_path / "run"
    import shutil

    shutil.copytree(judged, run)
    server = ["--api-url", argilla.url, "--api-key", argilla.api_key]
    result = CliRunner().invoke(main, ["review", "pull", str(run), "--workspace", workspace,
                                       *server])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["resolve", str(run), "--calibration",
                                       str(tmp_path / "none")])
    assert result.exit_code == 0, result.output
    assert "1 reviewer conflict" in result.output
    lines = [json.loads(line) for line in (run / "decisions.jsonl").read_text().splitlines()]
    (conflict,) = [line for line in lines if line.get("conflict")]
    assert conflict["claim"]["claim_id"] == "iclr27-0137/c5" and conflict["outcome"] == "fail"


def test_a_reviewer_s_latest_answer_decides_across_datasets(argilla, judged: Path,
                                                          tmp_path: Path) -> None:
    """A claim can have two records in a workspace (the whole run pushed beside the AI's
    answers, then a plan's random sample pushed blind). A reviewer who answered both, the
    blind one first (pass) and then the one beside the AI's answers (fail), has changed
    their answer: the latest decides, whichever dataset it came from, and their fail is never
    turned into a pass by the earlier answer."""
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(judged, client=client, options=PushOptions(workspace=workspace, blind_share=0.0))
    push_run(judged, client=client, options=PushOptions(workspace=workspace, blind_share=1.0))
    key = (ALICE, "neurips26-4821/c1")
    blind = client.datasets(name=f"{FIG}-calibration", workspace=workspace)
    blind_ids = {(r.metadata["submission_id"], r.metadata["claim_id"]): str(r._server_id)
                 for r in blind.records(with_suggestions=False)}
    ann = argilla.create_user(workspaces=[workspace])
    assert _respond(argilla, ann, blind_ids[key], {"overall_verdict": "pass"}
                    ).status_code in (200, 201)
    assert _respond(argilla, ann, _records(argilla, workspace)[key], {"overall_verdict": "fail"}
                    ).status_code in (200, 201)
    labels = tmp_path / "labels.jsonl"
    pull_run(judged, client=client, workspace=workspace, out=labels)
    decisions, finals = resolve_run(judged, labels_path=labels,
                                    calibration_dir=tmp_path / "no-calibration")
    decision = _decision(decisions, *key)
    assert (decision.outcome, decision.human_overall, decision.reviewers) == ("fail", "fail", 1)
    final = next(f for f in finals if (f.claim.submission_id, f.claim.claim_id) == key)
    assert final.outcome == "fail" and "humans" in final.decided_by
