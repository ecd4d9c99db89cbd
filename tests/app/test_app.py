"""The dashboard's data, API and modes: MCP tools over HTTP, the review queue against `review push`
and a real Argilla server, the Space mode against a published dataset served by the fake Hub, and
the escaping of participant text."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.app import consensus_rows, launch, load_dataset, load_run
from judging.app.ui import claim_html, consensus_html, queue_html
from judging.cli import main
from judging.resolve import decide_run, leaderboard_rows, resolve_run
from judging.review.push import PushOptions, connect, plan_records, push_run
from judging.rubrics import RubricLibrary
from judging.rundir import RunStore, read_not_addressed
from tests.app.conftest import OPENED, PLANTED, cli_env
from tests.argilla_server import free_port
from tests.conftest import JUDGING_CLI
from tests.fakehub import FakeHub

TOOLS = {"get_verdicts", "get_claim", "get_consensus", "get_leaderboard", "get_review_queue"}


@pytest.fixture(scope="module")
def run_data(offline_run: Path):
    return load_run(offline_run)


def test_run_data_is_what_resolve_decides(offline_run: Path, run_data) -> None:
    _, finals = decide_run(offline_run)
    by_submission, by_paper = leaderboard_rows(finals, read_not_addressed(offline_run))
    assert run_data.by_submission == by_submission and run_data.by_paper == by_paper
    assert {key: (c.outcome, c.upheld) for key, c in run_data.claims.items()} == \
        {str(f.claim): (f.outcome, f.upheld) for f in finals}
    # Nothing was written: the dashboard decides live (no test resolves this run in place).
    assert not (offline_run / "final.jsonl").exists()
    assert not (offline_run / "decisions.jsonl").exists()


def test_consensus_rows_of_a_registry_claim(run_data) -> None:
    rows = {r.submission: r for r in consensus_rows(run_data, OPENED[1])}
    assert set(rows) == {OPENED[0], "bob/neurips26-4821-check", "dana/neurips26-4821-logbook"}
    assert not rows["bob/neurips26-4821-check"].independent
    assert rows[OPENED[0]].independent and rows[OPENED[0]].figure_match_ai == "pass"
    dana = rows["dana/neurips26-4821-logbook"]
    assert (dana.reported, dana.reproduced) == ("0.25", "0.215")
    assert consensus_rows(run_data, "no/such-claim") == []


def test_participant_text_is_escaped(run_data) -> None:
    record = run_data.claims[f"{OPENED[0]}::{OPENED[1]}"]
    for page in (claim_html(record), consensus_html(run_data, record), queue_html(run_data)):
        assert "<img src=\"x\"" not in page and "<script>" not in page and 'id="planted"' not in page
    assert "&lt;img src=&quot;x&quot; onerror=&quot;window.__planted = 1&quot;&gt;" in \
        claim_html(record)
    assert PLANTED in record.justification


def test_review_queue_ranks_as_review_push(offline_run: Path, run_data) -> None:
    _, records, _ = plan_records(RunStore.open(offline_run, create=False), RubricLibrary(),
                                 PushOptions())
    pushed = {(r.dataset, str(r.record.id)): r.priority.value for r in records}
    queued = {(q.dataset, q.record_id): q.priority for q in run_data.queue}
    assert queued == pushed
    assert [q.priority for q in run_data.queue] == sorted(pushed.values(), reverse=True)
    assert all(q.url is None for q in run_data.queue) and "No Argilla server" in \
        run_data.queue_note


def test_queue_links_open_the_pushed_records(offline_run: Path, argilla) -> None:
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(offline_run, client=client, options=PushOptions(workspace=workspace))
    data = load_run(offline_run, argilla_url=argilla.url, argilla_api_key=argilla.api_key,
                    workspace=workspace)
    assert data.queue and all(q.url for q in data.queue), data.queue_note
    for item in data.queue:
        dataset = client.datasets(name=item.dataset, workspace=workspace)
        assert item.url.startswith(f"{argilla.url}/dataset/{dataset.id}/annotation-mode?")
        record = next(r for r in dataset.records() if str(r.id) == item.record_id)
        submission, claim_id = item.claim_key.split("::")
        assert record.metadata["submission_id"] == submission and \
            record.metadata["claim_id"] == claim_id
        assert f"submission_id.{submission}".replace("/", "%2F") in item.url
    with argilla.http() as http:  # the web UI serves the linked page
        page = http.get(data.queue[0].url.removeprefix(argilla.url))
        assert page.status_code == 200 and "<html" in page.text.lower()


def test_mcp_tools_answer_over_http(run_data) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    app = launch(run_data, port=port, mcp=True, block=False)

    async def ask() -> tuple[set[str], list[dict], list[dict]]:
        async with streamable_http_client(f"http://127.0.0.1:{port}/gradio_api/mcp/") as \
                (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {tool.name for tool in (await session.list_tools()).tools}
                consensus = await session.call_tool("get_consensus",
                                                    {"claim_id": OPENED[1]})
                verdicts = await session.call_tool("get_verdicts",
                                                   {"submission": OPENED[0]})
                return tools, _payload(consensus), _payload(verdicts)

    try:
        tools, consensus, verdicts = asyncio.run(asyncio.wait_for(ask(), 60))
    finally:
        app.close()
    assert TOOLS <= tools, tools
    assert {row["submission"] for row in consensus} == \
        {r.submission for r in consensus_rows(run_data, OPENED[1])}
    assert {row["claim_key"] for row in verdicts} == \
        {k for k, c in run_data.claims.items() if c.submission_id == OPENED[0]}


def _payload(result) -> list[dict]:
    assert not result.isError, result
    text = "".join(part.text for part in result.content if getattr(part, "text", None))
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def test_space_mode_reads_the_published_dataset(offline_run: Path, run_data, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from judging.publish import stage

    run = tmp_path / "run"
    shutil.copytree(offline_run, run)
    resolve_run(run)
    staged = stage(run, out=tmp_path / "staged", repo_id="org/verdicts").folder
    with FakeHub({("dataset", "org/verdicts"): staged}) as hub:
        # As a Space runs it: `judging app --dataset` in its own process, over HTTP to the Hub,
        # asked through Gradio's own client.
        env = hub.environ(tmp_path / "hf-cli", base=cli_env(tmp_path))
        home, port = tmp_path / "app-home", free_port()
        started = subprocess.run([*JUDGING_CLI, "app", "--dataset", "org/verdicts",
                                  "--background", "--no-mcp", "--port", str(port),
                                  "--app-home", str(home)], env=env, capture_output=True,
                                 text=True, timeout=150)
        try:
            assert started.returncode == 0, started.stdout + started.stderr
            from gradio_client import Client

            client = Client(f"http://127.0.0.1:{port}/", verbose=False)
            served = json.loads(client.predict(OPENED[1], api_name="/get_consensus"))
            shown = json.loads(client.predict(f"{OPENED[0]}::{OPENED[1]}",
                                              api_name="/get_claim"))
        finally:
            subprocess.run([*JUDGING_CLI, "app", "stop", "--app-home", str(home)], env=env,
                           capture_output=True, timeout=60)
        assert any(path.endswith("data/claims.jsonl") for _, path in hub.requests)
        hub.patch(monkeypatch, tmp_path / "hf")
        space = load_dataset("org/verdicts", local_dir=tmp_path / "download")
    assert served == [r.as_dict() for r in consensus_rows(run_data, OPENED[1])]
    assert {"published", "reproduced", "diff"} <= set(shown["figures"]), shown["figures"]
    assert shown["statement"] == run_data.claims[f"{OPENED[0]}::{OPENED[1]}"].statement
    assert space.origin == "hf://datasets/org/verdicts" and space.queue is None
    assert space.by_submission == run_data.by_submission
    assert space.by_paper == run_data.by_paper
    assert set(space.claims) == set(run_data.claims)
    for key, local in run_data.claims.items():
        remote = space.claims[key]
        assert (remote.outcome, remote.upheld, remote.verdict, remote.statement) == \
            (local.outcome, local.upheld, local.verdict, local.statement), key
        assert set(remote.figures) == set(local.figures), key
        for kind, path in local.figures.items():
            assert remote.figures[kind].read_bytes() == path.read_bytes(), (key, kind)
        assert [(j.rubric, j.judge, j.outcome, [a.rationale for a in j.answers])
                for j in remote.judgments] == \
            [(j.rubric, j.judge, j.outcome, [a.rationale for a in j.answers])
             for j in local.judgments], key
    assert [r.as_dict() for r in consensus_rows(space, OPENED[1])] == \
        [r.as_dict() for r in consensus_rows(run_data, OPENED[1])]


@pytest.mark.parametrize(("args", "expected"), [
    ([], "give a run directory or --dataset OWNER/NAME"),
    (["--dataset", "not a repo"], "use ORG/NAME"),
])
def test_cli_errors_are_one_line(args: list[str], expected: str) -> None:
    result = CliRunner().invoke(main, ["app", *args])
    assert result.exit_code != 0 and expected in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output


def test_stop_without_a_dashboard(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["app", "stop", "--app-home", str(tmp_path)])
    assert result.exit_code == 0 and "No dashboard is running" in result.output
    result = CliRunner().invoke(main, ["app", "status", "--app-home", str(tmp_path)])
    assert result.exit_code == 1


def test_unreachable_hub_is_one_clear_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path
                                           ) -> None:
    from tests.fakehub import patch_hub

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    patch_hub(monkeypatch, url, tmp_path / "hf")
    result = CliRunner().invoke(main, ["app", "--dataset", "org/verdicts", "--no-mcp",
                                       "--app-home", str(tmp_path / "home")])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert f"cannot download the dataset org/verdicts from {url}" in result.output
