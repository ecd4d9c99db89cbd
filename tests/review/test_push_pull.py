"""Push judgments to the real local Argilla server, answer as an annotator over REST, pull labels.

Uses the session's server (tests/argilla_server.py); each test works in its own workspace.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import argilla as rg
import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.errors import ReviewError
from judging.review.dataset import dataset_name, in_calibration, record_id
from judging.review.pull import pull_run, read_labels
from judging.review.push import PushOptions, connect, push_run
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

FIG, VER = "figure-match-1.4.0", "verdict-justification-1.2.0"
AUD = "falsification-audit-1.0.0"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("review") / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
                           measure_cache=module_measure_cache()))
    return out


@pytest.fixture
def workspace() -> str:
    return f"ws-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def unblind_pushed(argilla, example_run: Path) -> str:
    """A workspace the example run was pushed to with no blind share, once for the tests that
    only read it (queries, a pull with nothing answered; issue 43: a push less)."""
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    push_run(example_run, client=_client(argilla), options=PushOptions(workspace=workspace,
                                                                       blind_share=0.0))
    return workspace


def _client(argilla) -> rg.Argilla:
    return connect(argilla.url, argilla.api_key)


def _records(client: rg.Argilla, name: str, workspace: str) -> dict[str, rg.Record]:
    dataset = client.datasets(name=name, workspace=workspace)
    return {str(r.id): r for r in dataset.records(with_suggestions=True, with_responses=False)}


def _expected_split(run: Path, share: float, seed: int = 0) -> dict[str, set[str]]:
    split: dict[str, set[str]] = {}
    for judgment in RunStore.open(run, create=False).latest():
        if judgment.rubric is None:
            continue
        key = str(judgment.claim)
        blind = in_calibration(key, share=share, seed=seed)
        name = dataset_name(judgment.rubric.id, judgment.rubric.version, calibration=blind)
        split.setdefault(name, set()).add(record_id(key, judgment.rubric.id,
                                                    judgment.rubric.version))
    return split


def test_push_creates_one_dataset_per_rubric_version(argilla, example_run: Path,
                                                     workspace: str) -> None:
    client = _client(argilla)
    result = push_run(example_run, client=client,
                      options=PushOptions(workspace=workspace, blind_share=0.3, overlap=2))
    expected = _expected_split(example_run, 0.3)
    assert result.records == {name: len(ids) for name, ids in expected.items()}
    assert result.total == 25  # 22 + the falsification audits of the 3 falsified claims
    assert set(expected) == {FIG, FIG + "-calibration", VER, VER + "-calibration", AUD,
                             AUD + "-calibration"}
    for name, ids in expected.items():
        records = _records(client, name, workspace)
        assert set(records) == ids  # deterministic ids: claim key + rubric version
    review = _records(client, FIG, workspace)
    copy_record = review[record_id("bob/neurips26-4821-check::neurips26-4821/c1", "figure-match",
                                   "1.4.0")] if record_id(
        "bob/neurips26-4821-check::neurips26-4821/c1", "figure-match", "1.4.0") in review else None
    # figure-match 1.1.0 and later datasets show the data read back from both charts.
    fields = [f.name for f in client.datasets(name=FIG, workspace=workspace).settings.fields]
    assert "overlay" in fields
    assert sum(r.fields.get("overlay") is not None for r in review.values()) >= 5
    for record in review.values():
        assert record.metadata["blind"] == "no"
        assert record.metadata["rubric_hash"].startswith("sha256:")
        assert 0 <= record.metadata["priority"] <= 1
        assert record.fields["ai_assessment"]
        suggestions = {s.question_name: s for s in record.suggestions}
        if record.metadata["claim_id"] != "iclr27-0137/c3":  # the corrupt figure has none
            assert suggestions["independent_reproduction"].agent == "offline"
            assert 0.5 <= suggestions["independent_reproduction"].score <= 1
            # New datasets show the three figures side by side (one custom field).
            assert record.fields["figures"]["published"].startswith("data:image/png;base64,")
    if copy_record is not None:
        suggestions = {s.question_name: s.value for s in copy_record.suggestions}
        assert suggestions["independent_reproduction"] == "no"
        assert suggestions["overall_verdict"] == "fail"
        assert "copy" in copy_record.metadata["flags"]
        assert copy_record.metadata["priority"] >= 0.9
    calibration = client.datasets(name=FIG + "-calibration", workspace=workspace)
    assert calibration.settings.distribution.min_submitted == 2
    assert client.datasets(name=FIG, workspace=workspace).settings.distribution.min_submitted == 1
    for record in _records(client, FIG + "-calibration", workspace).values():
        assert record.suggestions == [] or not list(record.suggestions)
        assert record.metadata["blind"] == "yes"
        assert record.metadata["judge"] == "hidden"
        assert not record.fields.get("ai_assessment")
    assert "same_trend" in calibration.settings.guidelines


def _answer(argilla, annotator, record_server_id: str, values: dict, status: str = "submitted"
            ) -> None:
    with argilla.http(annotator.api_key) as http:
        response = http.post(f"/api/v1/records/{record_server_id}/responses",
                             json={"values": {k: {"value": v} for k, v in values.items()},
                                   "status": status})
        assert response.status_code in (200, 201), response.text


def _server_ids(client: rg.Argilla, name: str, workspace: str) -> dict[str, str]:
    dataset = client.datasets(name=name, workspace=workspace)
    return {str(r.id): str(r._server_id) for r in dataset.records(with_suggestions=False)}


def test_responses_are_pulled_label_by_label_and_survive_repushes(argilla, example_run: Path,
                                                                  workspace: str,
                                                                  tmp_path: Path) -> None:
    client = _client(argilla)
    options = PushOptions(workspace=workspace, blind_share=0.3, overlap=2)
    push_run(example_run, client=client, options=options)
    alice = argilla.create_user(workspaces=[workspace])
    bruno = argilla.create_user(workspaces=[workspace])
    review_ids = _server_ids(client, FIG, workspace)
    calibration_ids = _server_ids(client, FIG + "-calibration", workspace)
    review_keys = {str(r.id): (r.metadata["submission_id"], r.metadata["claim_id"])
                   for r in client.datasets(name=FIG, workspace=workspace).records}
    first, second, third = sorted(review_ids)[:3]
    (calibration_record,) = sorted(calibration_ids)[:1]
    _answer(argilla, alice, review_ids[first], {"same_trend": "yes", "overall_match": 4,
                                                "overall_verdict": "pass", "note": "fine"})
    _answer(argilla, bruno, review_ids[first], {"same_trend": "no", "overall_verdict": "fail"})
    _answer(argilla, alice, review_ids[second], {"same_trend": "no",
                                                 "overall_verdict": "fail"}, status="draft")
    _answer(argilla, bruno, review_ids[third], {}, status="discarded")
    _answer(argilla, alice, calibration_ids[calibration_record],
            {"independent_reproduction": "yes", "overall_verdict": "pass"})
    _answer(argilla, bruno, calibration_ids[calibration_record],
            {"independent_reproduction": "yes", "overall_verdict": "cannot_tell"})

    out = tmp_path / "labels.jsonl"
    result = pull_run(example_run, client=client, workspace=workspace, out=out)
    assert result.responses == {"submitted": 4, "draft": 1, "discarded": 1}
    labels = read_labels(out)
    got = sorted((label.annotator, label.record_id, label.criterion, label.value, label.blind)
                 for label in labels)
    expected = sorted([
        (alice.username, first, "same_trend", True, False),
        (alice.username, first, "overall_match", 4, False),
        (alice.username, first, "overall_verdict", "pass", False),
        (alice.username, first, "note", "fine", False),
        (bruno.username, first, "same_trend", False, False),
        (bruno.username, first, "overall_verdict", "fail", False),
        (alice.username, calibration_record, "independent_reproduction", True, True),
        (alice.username, calibration_record, "overall_verdict", "pass", True),
        (bruno.username, calibration_record, "independent_reproduction", True, True),
        (bruno.username, calibration_record, "overall_verdict", "cannot_tell", True),
    ])
    assert got == expected
    first_labels = [label for label in labels if label.record_id == first]
    submission_id, claim_id = review_keys[first]
    assert {(l.claim.submission_id, l.claim.claim_id) for l in first_labels} == {
        (submission_id, claim_id)}
    assert all(l.rubric.id == "figure-match" and l.rubric.version == "1.4.0" and
               l.rubric.hash.startswith("sha256:") for l in labels)

    # Two more pushes: the same records, the responses intact.
    counts = {name: len(_server_ids(client, name, workspace)) for name in (FIG, VER)}
    push_run(example_run, client=client, options=options)
    push_run(example_run, client=client, options=options)
    assert {name: len(_server_ids(client, name, workspace)) for name in (FIG, VER)} == counts
    again = pull_run(example_run, client=client, workspace=workspace, out=tmp_path / "again.jsonl")
    assert again.responses == result.responses
    assert sorted((l.annotator, l.record_id, l.criterion, l.value) for l in
                  read_labels(tmp_path / "again.jsonl")) == [g[:4] for g in got]


def test_filter_queries_through_the_sdk(argilla, unblind_pushed: str) -> None:
    client, workspace = _client(argilla), unblind_pushed
    dataset = client.datasets(name=VER, workspace=workspace)
    # verdict-justification 1.2.0 asks reviewers for their own verdict, as a label question.
    own = next(q for q in dataset.settings.questions if q.name == "own_verdict")
    assert sorted(own.labels) == ["falsified", "inconclusive", "toy", "verified"]
    falsified = dataset.records(query=rg.Query(filter=rg.Filter(("metadata.verdict", "==",
                                                                 "falsified"))))
    claims = {(r.metadata["submission_id"], r.metadata["claim_id"]) for r in falsified}
    assert claims == {("bob/neurips26-4821-check", "neurips26-4821/c3"),
                      ("carol/iclr27-0137-repro", "iclr27-0137/c1"),
                      ("carol/iclr27-0137-repro", "iclr27-0137/c2")}
    figures = client.datasets(name=FIG, workspace=workspace)
    urgent = list(figures.records(query=rg.Query(filter=rg.Filter(("metadata.priority", ">=",
                                                                   0.9)))))
    # bob's copy and doctored reference, and carol's falsified figure claim: a falsification
    # goes to people first unless its audit passes and the consensus supports it
    assert {r.metadata["claim_id"] for r in urgent} == {"neurips26-4821/c1", "neurips26-4821/c6",
                                                       "iclr27-0137/c1"}
    (carol,) = [r for r in urgent if r.metadata["claim_id"] == "iclr27-0137/c1"]
    assert "falsification_unconfirmed" in carol.metadata["priority_reasons"]
    text = figures.records(query=rg.Query(query="doctored OR registry"))
    assert all(r.metadata for r in text)
    said_no = figures.records(query=rg.Query(filter=rg.Filter(
        ("independent_reproduction.suggestion", "==", "no"))))
    assert {r.metadata["submission_id"] for r in said_no} == {"bob/neurips26-4821-check"}


def test_a_dataset_with_another_design_is_refused(argilla, example_run: Path,
                                                  workspace: str) -> None:
    client = _client(argilla)
    rg.Workspace(name=workspace, client=client).create()
    settings = rg.Settings(fields=[rg.TextField(name="text")],
                           questions=[rg.LabelQuestion(name="ok", labels=["yes", "no"])])
    rg.Dataset(name=FIG, workspace=workspace, settings=settings, client=client).create()
    with pytest.raises(ReviewError, match="design cannot change"):
        push_run(example_run, client=client, options=PushOptions(workspace=workspace,
                                                                 blind_share=0.0))


def test_cli_push_pull_and_users(argilla, example_run: Path, workspace: str,
                                 tmp_path: Path) -> None:
    runner = CliRunner()
    server = ["--api-url", argilla.url, "--api-key", argilla.api_key]
    result = runner.invoke(main, ["review", "push", str(example_run), "--workspace", workspace,
                                  "--blind-share", "0", *server])
    assert result.exit_code == 0, result.output
    assert f"{FIG}: 8 record(s)" in result.output and "pushed 25 record(s)" in result.output
    assert f"{AUD}: 3 record(s)" in result.output
    result = runner.invoke(main, ["review", "users", "add", "reviewer-x", "--workspace",
                                  workspace, "--password", "reviewer-pass-1", *server])
    assert result.exit_code == 0, result.output
    api_key = result.output.split("API key:")[1].split()[0]
    with argilla.http(api_key) as http:
        me = http.get("/api/v1/me/workspaces").json()["items"]
    assert [w["name"] for w in me] == [workspace]  # an annotator sees only its workspace
    out = tmp_path / "labels.jsonl"
    result = runner.invoke(main, ["review", "pull", str(example_run), "--workspace", workspace,
                                  "--out", str(out), *server])
    assert result.exit_code == 0, result.output
    assert "wrote 0 label(s)" in result.output and out.exists()


def test_dead_server_is_one_clear_line(example_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK's client retries a refused connection (httpcore: 0, 0.5, 1, 2, 4 s apart): the
    # waits are recorded, not slept (7.5 s a connection otherwise); the retries are still made.
    from httpcore._backends.sync import SyncBackend

    waits: list[float] = []
    monkeypatch.setattr(SyncBackend, "sleep", lambda self, seconds: waits.append(seconds))
    result = CliRunner().invoke(main, ["review", "push", str(example_run), "--api-url",
                                       "http://127.0.0.1:1", "--api-key", "x"])
    assert result.exit_code == 1
    assert "cannot use the Argilla server at http://127.0.0.1:1" in result.output
    assert "Traceback" not in result.output
    assert waits  # retried before giving up
    with pytest.raises(ReviewError):
        connect("http://127.0.0.1:1", "x")


def test_labels_file_is_json_lines(argilla, example_run: Path, unblind_pushed: str) -> None:
    result = pull_run(example_run, client=_client(argilla), workspace=unblind_pushed)
    assert result.path == example_run / "labels.jsonl"
    for line in result.path.read_text().splitlines():
        json.loads(line)


def test_end_to_end_calibration_reproduces_the_known_f1(argilla, example_run: Path,
                                                        workspace: str, tmp_path: Path) -> None:
    """run -> push (all blind) -> two annotators answer known values over REST -> pull ->
    calibrate: the F1 equals the one computed independently from those known answers."""
    from sklearn.metrics import f1_score

    from judging.calibrate.artifacts import TrustOptions
    from judging.calibrate.run import calibrate_run

    client = _client(argilla)
    push_run(example_run, client=client, options=PushOptions(workspace=workspace,
                                                             blind_share=1.0, overlap=2))
    ann1 = argilla.create_user(workspaces=[workspace])
    ann2 = argilla.create_user(workspaces=[workspace])
    dataset = client.datasets(name=FIG + "-calibration", workspace=workspace)
    records = list(dataset.records(with_suggestions=True))
    assert records and all(not list(r.suggestions) for r in records)  # blind: no AI answers
    # Known answers: independent_reproduction is "no" only for the copied figure; annotator 2
    # also says "no" for carol's c5 (a disagreement: no gold for that claim).
    known: dict[str, dict[str, bool]] = {}
    for record in records:
        claim = (record.metadata["submission_id"], record.metadata["claim_id"])
        copy = claim == ("bob/neurips26-4821-check", "neurips26-4821/c1")
        first = not copy
        second = first and claim != ("carol/iclr27-0137-repro", "iclr27-0137/c5")
        known[f"{claim[0]}::{claim[1]}"] = {"a": first, "b": second}
        for annotator, value in ((ann1, first), (ann2, second)):
            _answer(argilla, annotator, str(record._server_id),
                    {"independent_reproduction": "yes" if value else "no",
                     "overall_verdict": "pass"})
    labels = tmp_path / "labels.jsonl"
    pulled = pull_run(example_run, client=client, workspace=workspace, out=labels)
    assert pulled.responses["submitted"] == 2 * len(records)
    results = calibrate_run(example_run, labels_path=labels, out=tmp_path / "calibration",
                            options=TrustOptions(bootstrap=200))
    (figure,) = [r for r in results if r.artifact.rubric.id == "figure-match"]
    criterion = next(c for c in figure.artifact.criteria
                     if c.criterion == "independent_reproduction")
    # Independently: gold where both agree, the judge's answers from the run's judgments.
    judged = {str(j.claim): j.answer("independent_reproduction")
              for j in RunStore.open(example_run, create=False).latest()
              if j.rubric is not None and j.rubric.id == "figure-match"}
    gold, predicted = [], []
    for claim, answers in known.items():
        answer = judged.get(claim)
        if answers["a"] != answers["b"] or answer is None or answer.status != "scored":
            continue
        gold.append(answers["a"])
        predicted.append(answer.value)
    assert criterion.support == len(gold) == 6  # 8 figure claims, 1 corrupt, 1 split
    assert criterion.f1 == pytest.approx(f1_score(gold, predicted, pos_label=True))
    assert criterion.humans.raters == 2 and criterion.humans.ties == 1
    assert figure.artifact.labels.source == "human" and figure.artifact.labels.blind_only


def test_a_dataset_made_before_side_by_side_keeps_its_design(argilla, example_run: Path,
                                                              workspace: str) -> None:
    """A dataset's fields never change: one that exists with the three image fields (made by
    an earlier push) gets its records with those fields; a new one gets the side-by-side row."""
    import argilla as rg

    from judging.review.dataset import SEPARATE, build_settings
    from judging.rubrics import RubricLibrary

    client = _client(argilla)
    rg.Workspace(name=workspace, client=client).create()
    rubric = RubricLibrary().load("figure-match@1.4.0")
    rg.Dataset(name=FIG, workspace=workspace, client=client,
               settings=build_settings(rubric, calibration=False, overlap=2,
                                       design=SEPARATE)).create()
    push_run(example_run, client=client, options=PushOptions(workspace=workspace,
                                                             blind_share=0.3, overlap=2))
    old = _records(client, FIG, workspace)
    assert any(r.fields.get("published_figure") is not None for r in old.values())
    assert all("figures" not in r.fields for r in old.values())
    fresh = client.datasets(name=FIG + "-calibration", workspace=workspace)
    assert "figures" in {f.name for f in fresh.settings.fields}
    assert "published_figure" not in {f.name for f in fresh.settings.fields}


def test_only_datasets_from_figure_match_1_1_0_show_the_overlay() -> None:
    """A published dataset's fields cannot change: 1.0.0 keeps its design, 1.1.0 adds the
    overlay image, and later versions keep it."""
    from judging.review.dataset import build_settings
    from judging.rubrics import RubricLibrary

    library = RubricLibrary()
    names = {version: [f.name for f in build_settings(library.load(f"figure-match@{version}"),
                                                      calibration=False, overlap=1).fields]
             for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0")}
    assert "overlay" not in names["1.0.0"]
    assert "overlay" in names["1.1.0"]
    assert names["1.1.0"][:-1] == names["1.0.0"]
    assert names["1.2.0"] == names["1.1.0"]
    assert names["1.3.0"] == names["1.2.0"]
    assert names["1.4.0"] == names["1.3.0"]
    verdict = library.load("verdict-justification@1.0.0")
    assert "overlay" not in [f.name for f in build_settings(verdict, calibration=False,
                                                            overlap=1).fields]
