"""The local Argilla review server: the in-memory search engine's answers through the real
argilla-server API and SDK, jobs, workspaces, restarts, and the `judging review` commands.

One server for the whole session (`argilla` fixture from tests/argilla_server.py); one dataset for
this module with known records and responses from two annotators.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import argilla as rg
import httpx
import pytest
from PIL import Image

from judging.review.server import process as review_server
from tests.argilla_server import ArgillaServer, UserLogin, free_port, start_server
from tests.conftest import JUDGING_CLI

WORKSPACE = "event-review"
OTHER_WORKSPACE = "event-other"
N = 10
ALL = {f"claim-{i:02d}" for i in range(N)}


def ids(*numbers: int) -> set[str]:
    return {f"claim-{i:02d}" for i in numbers}


def record_fields(i: int) -> dict:
    topic = "ResNet" if i < 5 else "Transformer"
    verdict = "matches" if i % 2 == 0 else "deviates"
    return {"claim": f"Figure {i}: **{topic}** accuracy improves with depth",
            "justification": f"The reproduced curve {verdict} the published one",
            "figure": Image.new("RGB", (16, 16), (25 * i, 100, 200))}


def record_metadata(i: int) -> dict:
    paper = "paper-a" if i < 4 else ("paper-b" if i < 7 else "paper-c")
    return {"paper": paper, "priority": i * 10, "similarity": round(0.05 + i / 10, 2)}


# alice: submitted 0-3 (yes, 4), draft 4 (no, 3), discarded 5 (yes)
# bob:   submitted 0, 1 (no, 2), submitted 6 (yes, 5), draft 7 (no, 3)
# With min_submitted=2 only claim-00 and claim-01 are completed.
ALICE = {0: ("submitted", "yes", 4), 1: ("submitted", "yes", 4), 2: ("submitted", "yes", 4),
         3: ("submitted", "yes", 4), 4: ("draft", "no", 3), 5: ("discarded", "yes", None)}
BOB = {0: ("submitted", "no", 2), 1: ("submitted", "no", 2), 6: ("submitted", "yes", 5),
       7: ("draft", "no", 3)}


class Review:
    """The module's dataset on the session server, with its annotators."""

    def __init__(self, server: ArgillaServer, dataset: Any, alice: UserLogin, bob: UserLogin,
                 carol: UserLogin, record_ids: dict[str, str]):
        self.server = server
        self.dataset = dataset
        self.alice, self.bob, self.carol = alice, bob, carol
        self.record_ids = record_ids  # external id -> server id

    @property
    def id(self) -> str:
        return str(self.dataset.id)

    def search(self, body: dict, api_key: str | None = None, me: bool = False, **params: Any) -> dict:
        path = f"/api/v1/{'me/' if me else ''}datasets/{self.id}/records/search"
        with self.server.http(api_key) as http:
            answer = http.post(path, json=body, params={"limit": 100, **params})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def found(self, body: dict, api_key: str | None = None, me: bool = False) -> set[str]:
        result = self.search(body, api_key, me)
        found = [item["record"]["external_id"] for item in result["items"]]
        assert result["total"] == len(found)
        return set(found)

    def ordered(self, body: dict, api_key: str | None = None, me: bool = False) -> list[str]:
        return [item["record"]["external_id"] for item in self.search(body, api_key, me)["items"]]

    def sdk_found(self, query: str | None = None, conditions: Any = None) -> set[str]:
        records = self.dataset.records(query=rg.Query(query=query, filter=conditions), with_responses=False)
        return {record.id for record in records}


def terms(scope: dict, *values: Any) -> dict:
    return {"filters": {"and": [{"type": "terms", "scope": scope, "values": list(values)}]}}


def range_(scope: dict, ge: float | None = None, le: float | None = None) -> dict:
    condition: dict = {"type": "range", "scope": scope}
    if ge is not None:
        condition["ge"] = ge
    if le is not None:
        condition["le"] = le
    return {"filters": {"and": [condition]}}


def metadata(name: str) -> dict:
    return {"entity": "metadata", "metadata_property": name}


def respond(server: ArgillaServer, user: UserLogin, record_id: str, status: str, label: str | None,
            rating: int | None) -> None:
    values = {}
    if label is not None:
        values["match"] = {"value": label}
    if rating is not None:
        values["quality"] = {"value": rating}
    with server.http(user.api_key) as http:
        answer = http.post(f"/api/v1/records/{record_id}/responses", json={"values": values, "status": status})
    assert answer.status_code == 201, answer.text


@pytest.fixture(scope="module")
def review(argilla: ArgillaServer) -> Review:
    client = argilla.client()
    rg.Workspace(name=WORKSPACE, client=client).create()
    rg.Workspace(name=OTHER_WORKSPACE, client=client).create()
    alice = argilla.create_user("alice", "alice-password", workspaces=[WORKSPACE])
    bob = argilla.create_user("bob", "bob-password", workspaces=[WORKSPACE])
    carol = argilla.create_user("carol", "carol-password", workspaces=[OTHER_WORKSPACE])

    settings = rg.Settings(
        fields=[rg.TextField(name="claim", use_markdown=True), rg.TextField(name="justification"),
                rg.ImageField(name="figure")],
        questions=[rg.LabelQuestion(name="match", labels=["yes", "no"]),
                   rg.RatingQuestion(name="quality", values=[1, 2, 3, 4, 5], required=False)],
        metadata=[rg.TermsMetadataProperty(name="paper"), rg.IntegerMetadataProperty(name="priority"),
                  rg.FloatMetadataProperty(name="similarity")],
        distribution=rg.TaskDistribution(min_submitted=2),
    )
    dataset = rg.Dataset(name="figure-match-1.0.0", workspace=WORKSPACE, settings=settings,
                         client=client).create()
    dataset.records.log([
        rg.Record(id=f"claim-{i:02d}", fields=record_fields(i), metadata=record_metadata(i),
                  suggestions=[rg.Suggestion(question_name="match", value="no" if i % 3 == 0 else "yes",
                                             agent="judge-a" if i < 5 else "judge-b", score=i / 10),
                               rg.Suggestion(question_name="quality", value=i % 5 + 1, agent="judge-a",
                                             score=0.5)])
        for i in range(N)])
    record_ids = {record.id: str(record._server_id) for record in dataset.records(with_suggestions=False)}
    assert set(record_ids) == ALL
    for user, answers in ((alice, ALICE), (bob, BOB)):
        for i, (status, label, rating) in answers.items():
            respond(argilla, user, record_ids[f"claim-{i:02d}"], status, label, rating)
    return Review(argilla, dataset, alice, bob, carol, record_ids)


# --- text queries ----------------------------------------------------------------------------


def test_text_query_over_all_fields_and_one_field(review: Review) -> None:
    assert review.sdk_found("transformer") == ids(5, 6, 7, 8, 9)
    assert review.sdk_found("TRANSFORMER deviates") == ids(5, 7, 9)  # terms are ANDed, any case
    assert review.sdk_found('"curve deviates"') == ids(1, 3, 5, 7, 9)  # a phrase
    assert review.sdk_found("resnet | transformer") == ALL
    assert review.sdk_found("transf*") == ids(5, 6, 7, 8, 9)
    assert review.sdk_found("nowhere-to-be-found") == set()
    body = {"query": {"text": {"q": "deviates", "field": "justification"}}}
    assert review.found(body) == ids(1, 3, 5, 7, 9)
    assert review.found({"query": {"text": {"q": "deviates", "field": "claim"}}}) == set()
    result = review.search({"query": {"text": {"q": "figure 3"}}})
    assert [item["record"]["external_id"] for item in result["items"]][0] == "claim-03"  # best first
    assert all(item["query_score"] > 0 for item in result["items"])


# --- metadata --------------------------------------------------------------------------------


def test_metadata_terms_and_range_filters(review: Review) -> None:
    assert review.sdk_found(conditions=("metadata.paper", "==", "paper-b")) == ids(4, 5, 6)
    assert review.sdk_found(conditions=("metadata.paper", "in", ["paper-a", "paper-c"])) == ids(0, 1, 2, 3, 7, 8, 9)
    assert review.sdk_found(conditions=[("metadata.priority", ">=", 30),
                                        ("metadata.priority", "<=", 50)]) == ids(3, 4, 5)
    assert review.found(range_(metadata("similarity"), ge=0.5, le=0.75)) == ids(5, 6, 7)
    assert review.sdk_found("transformer", ("metadata.paper", "==", "paper-b")) == ids(5, 6)


def test_sort_by_metadata_both_ways_and_record_properties(review: Review) -> None:
    def sort(scope: dict, order: str) -> dict:
        return {"sort": [{"scope": scope, "order": order}]}

    ascending = [f"claim-{i:02d}" for i in range(N)]
    assert review.ordered(sort(metadata("priority"), "asc")) == ascending
    assert review.ordered(sort(metadata("priority"), "desc")) == ascending[::-1]
    assert review.ordered(sort(metadata("similarity"), "desc")) == ascending[::-1]
    assert review.ordered(sort({"entity": "record", "property": "inserted_at"}, "asc")) == ascending
    by_score = review.ordered(sort({"entity": "suggestion", "question": "match", "property": "score"}, "desc"))
    assert by_score == ascending[::-1]
    # several keys: paper ascending, then priority descending
    body = {"sort": [{"scope": metadata("paper"), "order": "asc"},
                     {"scope": metadata("priority"), "order": "desc"}]}
    assert review.ordered(body) == [f"claim-{i:02d}" for i in (3, 2, 1, 0, 6, 5, 4, 9, 8, 7)]
    # completed records first
    status_first = review.ordered(sort({"entity": "record", "property": "status"}, "asc"))
    assert set(status_first[:2]) == ids(0, 1)
    # offset/limit page through the sorted hits; total counts them all
    page = review.search(sort(metadata("priority"), "asc"), offset=3, limit=4)
    assert [item["record"]["external_id"] for item in page["items"]] == ascending[3:7]
    assert page["total"] == N


def test_metadata_metrics(review: Review) -> None:
    with review.server.http() as http:
        listed = http.get(f"/api/v1/me/datasets/{review.id}/metadata-properties").json()["items"]
        metrics = {item["name"]: http.get(f"/api/v1/metadata-properties/{item['id']}/metrics").json()
                   for item in listed}
    assert metrics["paper"] == {"type": "terms", "total": N,
                                "values": [{"term": "paper-a", "count": 4}, {"term": "paper-b", "count": 3},
                                           {"term": "paper-c", "count": 3}]}
    assert metrics["priority"] == {"type": "integer", "min": 0, "max": 90}
    assert metrics["similarity"] == {"type": "float", "min": 0.05, "max": 0.95}


# --- suggestions and responses ---------------------------------------------------------------


def test_suggestion_filters(review: Review) -> None:
    assert review.sdk_found(conditions=("match", "==", "no")) == ids(0, 3, 6, 9)
    assert review.sdk_found(conditions=("match.suggestion", "==", "yes")) == ids(1, 2, 4, 5, 7, 8)
    assert review.sdk_found(conditions=("match.score", ">=", 0.7)) == ids(7, 8, 9)
    assert review.sdk_found(conditions=[("match.score", ">=", 0.2), ("match.score", "<=", 0.4)]) == ids(2, 3, 4)
    assert review.sdk_found(conditions=("match.agent", "==", "judge-b")) == ids(5, 6, 7, 8, 9)
    assert review.sdk_found(conditions=("quality.suggestion", "==", 5)) == ids(4, 9)
    assert review.found(range_({"entity": "suggestion", "question": "quality", "property": "value"},
                               ge=4)) == ids(3, 4, 8, 9)


def test_response_value_filters_overall_and_per_user(review: Review) -> None:
    # The owner's search: anyone's response
    assert review.sdk_found(conditions=("match.response", "==", "no")) == ids(0, 1, 4, 7)
    assert review.found(range_({"entity": "response", "question": "quality"}, ge=4)) == ids(0, 1, 2, 3, 6)
    # An annotator's search (/me): their own responses only
    scope = {"entity": "response", "question": "match"}
    assert review.found(terms(scope, "yes"), review.alice.api_key, me=True) == ids(0, 1, 2, 3, 5)
    assert review.found(terms(scope, "yes"), review.bob.api_key, me=True) == ids(6)
    assert review.found(range_({"entity": "response", "question": "quality"}, ge=4),
                        review.bob.api_key, me=True) == ids(6)


def test_response_status_filters_overall_and_per_user(review: Review) -> None:
    status = {"entity": "response", "property": "status"}
    assert review.sdk_found(conditions=("response.status", "==", "submitted")) == ids(0, 1, 2, 3, 6)
    assert review.sdk_found(conditions=("response.status", "==", "pending")) == ids(8, 9)  # nobody answered
    assert review.sdk_found(conditions=("status", "==", "completed")) == ids(0, 1)

    def mine(user: UserLogin, *statuses: str) -> set[str]:
        return review.found(terms(status, *statuses), user.api_key, me=True)

    assert mine(review.alice, "submitted") == ids(0, 1, 2, 3)
    assert mine(review.alice, "draft") == ids(4)
    assert mine(review.alice, "discarded") == ids(5)
    assert mine(review.alice, "pending") == ids(6, 7, 8, 9)
    assert mine(review.alice, "pending", "draft") == ids(4, 6, 7, 8, 9)
    assert mine(review.bob, "submitted") == ids(0, 1, 6)
    assert mine(review.bob, "pending") == ids(2, 3, 4, 5, 8, 9)
    # the annotation view: the user's pending records, in an order of their own, paged
    body = terms(status, "pending")
    first = review.search(body, review.bob.api_key, me=True, limit=2)
    assert first["total"] == 6 and len(first["items"]) == 2
    assert review.ordered(body, review.bob.api_key, me=True) == review.ordered(body, review.bob.api_key, me=True)


def test_dataset_and_user_progress(review: Review) -> None:
    assert review.dataset.progress() == {"total": N, "completed": 2, "pending": N - 2}
    users = review.dataset.progress(with_users_distribution=True)["users"]
    assert users["alice"]["completed"]["submitted"] == 2 and users["alice"]["pending"]["submitted"] == 2
    expected = {review.alice.api_key: {"total": N, "submitted": 4, "draft": 1, "discarded": 1, "pending": 4},
                review.bob.api_key: {"total": N, "submitted": 3, "draft": 1, "discarded": 0, "pending": 6}}
    for api_key, counts in expected.items():
        with review.server.http(api_key) as http:
            answer = http.get(f"/api/v1/me/datasets/{review.id}/metrics")
        assert answer.status_code == 200, answer.text
        assert answer.json()["responses"] == counts


def test_annotator_sees_only_their_workspace(review: Review) -> None:
    with review.server.http(review.carol.api_key) as http:
        assert [w["name"] for w in http.get("/api/v1/me/workspaces").json()["items"]] == [OTHER_WORKSPACE]
        assert http.get("/api/v1/me/datasets").json()["items"] == []
        denied = http.post(f"/api/v1/me/datasets/{review.id}/records/search", json={})
        assert denied.status_code == 403
    with review.server.http(review.alice.api_key) as http:
        assert [d["name"] for d in http.get("/api/v1/me/datasets").json()["items"]] == ["figure-match-1.0.0"]
        assert review.found({}, review.alice.api_key, me=True) == ALL


def test_distribution_change_runs_the_status_job(review: Review) -> None:
    def set_min_submitted(n: int) -> None:
        with review.server.http() as http:
            answer = http.patch(f"/api/v1/datasets/{review.id}",
                                json={"distribution": {"strategy": "overlap", "min_submitted": n}})
        assert answer.status_code == 200, answer.text

    def completed_within(expected: set[str], seconds: float = 15) -> set[str]:
        deadline = time.monotonic() + seconds
        while True:
            found = review.sdk_found(conditions=("status", "==", "completed"))
            if found == expected or time.monotonic() > deadline:
                return found
            time.sleep(0.2)

    set_min_submitted(1)
    try:
        assert completed_within(ids(0, 1, 2, 3, 6)) == ids(0, 1, 2, 3, 6)
        assert review.dataset.progress()["completed"] == 5
        records = {r.id: r.status for r in review.dataset.records(with_responses=False)}
        assert {key for key, value in records.items() if value == "completed"} == ids(0, 1, 2, 3, 6)
    finally:
        set_min_submitted(2)
    assert completed_within(ids(0, 1)) == ids(0, 1)


def test_relogging_a_record_updates_it_and_keeps_its_responses(review: Review) -> None:
    fields = {**record_fields(0), "justification": "The reproduced curve matches the published one (revisited)"}
    review.dataset.records.log([rg.Record(
        id="claim-00", fields=fields, metadata=record_metadata(0),
        suggestions=[rg.Suggestion(question_name="match", value="no", agent="judge-c", score=0.0)])])
    assert len(list(review.dataset.records(with_responses=False))) == N  # updated, not duplicated
    assert review.sdk_found("revisited") == ids(0)
    assert review.sdk_found(conditions=("match.agent", "==", "judge-c")) == ids(0)
    status = {"entity": "response", "property": "status"}
    assert review.found(terms(status, "submitted"), review.alice.api_key, me=True) == ids(0, 1, 2, 3)
    assert review.sdk_found(conditions=("status", "==", "completed")) == ids(0, 1)


def test_vector_search_is_refused_clearly(review: Review) -> None:
    with review.server.http() as http:
        created = http.post(f"/api/v1/datasets/{review.id}/vectors-settings",
                            json={"name": "embedding", "title": "Embedding", "dimensions": 2})
        assert created.status_code == 201, created.text
        body = {"query": {"vector": {"name": "embedding", "value": [0.1, 0.2]}}}
        answer = http.post(f"/api/v1/datasets/{review.id}/records/search", json=body)
    assert answer.status_code == 422
    assert "not supported" in answer.text


# --- the CLI ---------------------------------------------------------------------------------


def test_cli_serve_background_status_and_stop(tmp_path: Path) -> None:
    home, port = tmp_path / "cli-home", free_port()
    env = {**os.environ, "JUDGING_ARGILLA_PASSWORD": "cli-password-1"}
    started = subprocess.run([*JUDGING_CLI, "review", "serve", "--background", "--port", str(port),
                              "--home", str(home)], capture_output=True, text=True, timeout=120, env=env)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"http://127.0.0.1:{port}" in started.stdout
        assert "argilla / cli-password-1" in started.stdout and "argilla.apikey" in started.stdout
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/me",
                         headers={"X-Argilla-Api-Key": "argilla.apikey"}).json()["username"] == "argilla"
        again = subprocess.run([*JUDGING_CLI, "review", "serve", "--background", "--port", str(free_port()),
                                "--home", str(home)], capture_output=True, text=True, timeout=60)
        assert again.returncode == 1 and "already running" in again.stderr
        assert len(again.stderr.strip().splitlines()) == 1
        status = subprocess.run([*JUDGING_CLI, "review", "status", "--home", str(home)],
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0 and f":{port}" in status.stdout and "answering" in status.stdout
    finally:
        stopped = subprocess.run([*JUDGING_CLI, "review", "stop", "--home", str(home)],
                                 capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0 and "Stopped" in stopped.stdout
    assert not (home / review_server.PID_FILE).exists()
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/api/v1/status", timeout=2)
    status = subprocess.run([*JUDGING_CLI, "review", "status", "--home", str(home)],
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 1 and "No review server" in status.stdout


def test_stale_pid_file_is_cleaned_and_busy_port_refused(tmp_path: Path, argilla: ArgillaServer) -> None:
    home = tmp_path / "stale"
    home.mkdir()
    (home / review_server.PID_FILE).write_text('{"pid": 999999999, "url": "http://127.0.0.1:1"}')
    assert review_server.status(home) is None
    assert not (home / review_server.PID_FILE).exists()
    port = int(argilla.url.rsplit(":", 1)[1])
    with pytest.raises(review_server.ReviewServerError, match="already in use"):
        review_server.start_background(home, port=port)


# --- restart (last: it restarts the session's server) ----------------------------------------


def test_restart_keeps_users_records_responses_and_search(review: Review) -> None:
    server = review.server
    with httpx.Client(base_url=server.url) as http:
        token = http.post("/api/v1/token", data={"username": "alice", "password": "alice-password"})
        bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
    before_progress = review.dataset.progress()
    before = {r.id: (r.status, sorted((resp.user_id, resp.status.value if hasattr(resp.status, "value")
                                      else resp.status) for resp in r.responses))
              for r in review.dataset.records(with_responses=True)}

    port = int(server.url.rsplit(":", 1)[1])
    assert review_server.stop(server.home)
    restarted = start_server(server.home, port)
    assert restarted.url == server.url and restarted.api_key == server.api_key

    client = restarted.client()
    dataset = client.datasets(name="figure-match-1.0.0", workspace=WORKSPACE)
    after = {r.id: (r.status, sorted((resp.user_id, resp.status.value if hasattr(resp.status, "value")
                                     else resp.status) for resp in r.responses))
             for r in dataset.records(with_responses=True)}
    assert after == before and len(after) == N
    assert dataset.progress() == before_progress
    # the index was rebuilt: text, metadata, suggestion and per-user response searches still answer
    assert review.sdk_found("transformer deviates") == ids(5, 7, 9)
    assert review.sdk_found(conditions=("metadata.paper", "==", "paper-b")) == ids(4, 5, 6)
    assert review.sdk_found(conditions=("match.score", ">=", 0.7)) == ids(7, 8, 9)
    status = {"entity": "response", "property": "status"}
    assert review.found(terms(status, "pending"), review.alice.api_key, me=True) == ids(6, 7, 8, 9)
    assert review.found(terms({"entity": "response", "question": "match"}, "yes"), review.bob.api_key,
                        me=True) == ids(6)
    # users, API keys and session tokens (the secret key persists) survive
    with httpx.Client(base_url=server.url) as http:
        assert http.get("/api/v1/me", headers=bearer).json()["username"] == "alice"
        assert http.get("/api/v1/me", headers={"X-Argilla-Api-Key": review.bob.api_key}).json()["username"] == "bob"
    assert uuid.UUID(review.id)
