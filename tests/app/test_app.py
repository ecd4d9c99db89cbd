"""The dashboard's data, API and modes: MCP tools over HTTP, the review queue against `review push`
and a real Argilla server, the Space mode against a published dataset served by the fake Hub, the
consensus panel against the consensus stage in both modes (the examples, and the consensus event
of tests/consensus/event.py), and the escaping of participant text."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.app import (
    consensus_rows,
    consensus_view,
    launch,
    load_dataset,
    load_dataset_folder,
    load_run,
)
from judging.app.ui import (
    CLAIM_COLUMNS,
    AppApi,
    claim_html,
    claim_view,
    claims_table,
    consensus_html,
    leaderboard_table,
    queue_html,
    table_widths,
)
from judging.cli import main
from judging.consensus import load_consensus
from judging.models import ConsensusReport
from judging.resolve import consensus_rows as registry_rows
from judging.resolve import decide_run, leaderboard_rows, resolve_run
from judging.resolve.intervals import AI_ONLY
from judging.resolve.leaderboard import INTERVAL_COLUMNS
from judging.review.push import PushOptions, connect, plan_records, push_run
from judging.rubrics import RubricLibrary
from judging.rundir import RunStore, flags_by_claim, read_not_addressed
from tests.app.conftest import OPENED, PLANTED, cli_env
from tests.argilla_server import free_port
from tests.conftest import JUDGING_CLI
from tests.consensus.event import C1, C2, C3, C4, CONTRADICTION, COPY, FALSE_FALSIFICATION, OUTLIER
from tests.fakehub import FakeHub

TOOLS = {"get_verdicts", "get_claim", "get_consensus", "get_leaderboard", "get_review_queue"}


@pytest.fixture(scope="module")
def run_data(offline_run: Path):
    return load_run(offline_run)


def test_run_data_is_what_resolve_decides(offline_run: Path, run_data) -> None:
    _, finals = decide_run(offline_run)
    by_submission, by_paper = leaderboard_rows(finals, read_not_addressed(offline_run))
    # The counts as resolve decides them; beside them the intervals (issue 42), here none yet.
    def counts(rows):
        return [{k: v for k, v in r.items() if k not in INTERVAL_COLUMNS} for r in rows]
    assert counts(run_data.by_submission) == by_submission
    assert counts(run_data.by_paper) == by_paper
    assert {r["pass_rate_95"] for r in run_data.by_submission} == {AI_ONLY}
    assert {key: (c.outcome, c.upheld) for key, c in run_data.claims.items()} == \
        {str(f.claim): (f.outcome, f.upheld) for f in finals}
    # Nothing was written: the dashboard decides live (no test resolves this run in place).
    assert not (offline_run / "final.jsonl").exists()
    assert not (offline_run / "decisions.jsonl").exists()


def test_consensus_rows_of_a_registry_claim(offline_run: Path, run_data) -> None:
    rows = {r.submission: r for r in consensus_rows(run_data, OPENED[1])}
    assert set(rows) == {OPENED[0], "bob/neurips26-4821-check", "dana/neurips26-4821-logbook"}
    bob = rows["bob/neurips26-4821-check"]
    assert not bob.independent and not bob.counted
    assert [f["name"] for f in bob.consensus_flags] == ["not_independent"]
    assert "copy of the published figure" in bob.consensus_flags[0]["detail"]
    assert "not_independent" in bob.flags and "copy" in bob.flags
    assert rows[OPENED[0]].independent and rows[OPENED[0]].figure_match_ai == "pass"
    dana = rows["dana/neurips26-4821-logbook"]
    assert (dana.reported, dana.reproduced) == ("0.25", "0.215")
    # One value: too few to score (a z-score needs 3 reference values).
    assert dana.values == [{"name": "value", "reported": 0.25, "reproduced": 0.215, "z": None,
                            "outlier": False}]
    # The statistics are the consensus stage's: Bob's copy adds no support, so two counted
    # verdicts are too few for a consensus.
    stage = load_consensus(offline_run).claim(OPENED[1])
    view = consensus_view(run_data, OPENED[1])
    assert view.registry and (view.verdict, view.support, view.agreement, view.independent,
                              view.votes, view.reason) == \
        (stage.verdict, stage.support, stage.agreement, stage.independent, stage.votes,
         stage.reason)
    assert view.verdict is None and view.reason.startswith("too few"), view.reason
    assert [r.submission for r in view.rows] == \
        [r.claim.submission_id for r in stage.reproductions]
    assert consensus_rows(run_data, "no/such-claim") == []
    assert consensus_view(run_data, "no/such-claim") is None


def test_the_claims_show_the_ai_outcomes_awaiting_review(run_data) -> None:
    # No calibration trusts the offline judge: every outcome waits for review, and the AI's
    # shows (the report's pass or fail), not "pending" everywhere.
    rows = {(r[0], r[1]): dict(zip(CLAIM_COLUMNS, r)) for r in claims_table(run_data)}
    assert rows[("bob/neurips26-4821-check", OPENED[1])]["outcome"] == \
        "AI fail, awaiting review"
    assert rows[OPENED]["figure_match"] == "AI pass, awaiting review"
    # Natural order of ids: c2 before c10 within a submission.
    carol = [r[1] for r in claims_table(run_data) if r[0].startswith("carol")]
    assert carol == [f"iclr27-0137/c{i}" for i in range(1, 6)]
    bob = next(r for r in run_data.by_submission if r["submission"].startswith("bob"))
    # c1 (a copy) and c2 (a series left out) fail; c6 (judged against the registry's figure, a
    # spike moved on 1.5% of the pixels) is left to review by figure-match 1.4.0 (nothing two
    # readings confirm: the ink still covers), c3 fails on its verdict.
    assert (bob["failed"], bob["ai_failed"]) == (2, 2)


def test_the_claim_view_opens_a_claim_and_survives_an_unreadable_figure(
        run_data, tmp_path: Path) -> None:
    import copy

    # Nothing chosen: the first claim in natural order, never a blank tab.
    panel, figures, judgments, _ = claim_view(run_data, None)
    first = sorted(run_data.claims)[0]
    assert run_data.claims[first].statement.split()[0] in panel and judgments
    # One figure cannot be read: the others are shown, with the reason for the missing one.
    data = copy.deepcopy(run_data)
    record = data.claims["::".join(OPENED)]
    broken = tmp_path / "published.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not an image")
    record.figures["published"] = broken
    panel, figures, _, _ = claim_view(data, "::".join(OPENED))
    assert figures["published"] is None
    assert figures["reproduced"] == record.figures["reproduced"] and figures["diff"]
    assert "published: published.png cannot be read" in panel


def test_columns_are_as_wide_as_their_headers(run_data) -> None:
    # Gradio shares the width evenly otherwise, and a narrow column breaks its header a letter
    # per line (the registry claims' table had 13 columns).
    rows = leaderboard_table(run_data, by="claim")
    from judging.resolve import CONSENSUS_COLUMNS

    for column, width in zip(CONSENSUS_COLUMNS, table_widths(CONSENSUS_COLUMNS, rows)):
        assert int(width.removesuffix("px")) >= len(column) * 8 + 20, (column, width)


def test_participant_text_is_escaped(run_data) -> None:
    record = run_data.claims[f"{OPENED[0]}::{OPENED[1]}"]
    for page in (claim_html(record), consensus_html(run_data, record), queue_html(run_data)):
        assert "<img src=\"x\"" not in page and "<script>" not in page and 'id="planted"' not in page
    escaped = "&lt;img src=&quot;x&quot; onerror=&quot;window.__planted = 1&quot;&gt;"
    assert escaped in claim_html(record)
    assert escaped in consensus_html(run_data, record)  # the scale note, in the reproductions
    assert PLANTED in record.justification and PLANTED in record.scale_note


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
    assert consensus == [consensus_view(run_data, OPENED[1]).as_dict()]
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
    # The consensus panel is the same in both modes: the Space reads the published consensus
    # table, the local app the consensus stage.
    assert served == consensus_view(run_data, OPENED[1]).as_dict()
    assert {"published", "reproduced", "diff"} <= set(shown["figures"]), shown["figures"]
    assert shown["statement"] == run_data.claims[f"{OPENED[0]}::{OPENED[1]}"].statement
    assert space.origin == "hf://datasets/org/verdicts" and space.queue is None
    # The published dataset carries the counts; the intervals are the local run's alone (the
    # dataset does not publish the random sample yet: issue 42).
    def counts(rows):
        return [{k: v for k, v in r.items() if k not in INTERVAL_COLUMNS} for r in rows]
    assert space.by_submission == counts(run_data.by_submission)
    assert space.by_paper == counts(run_data.by_paper)
    assert set(space.claims) == set(run_data.claims)
    for key, local in run_data.claims.items():
        remote = space.claims[key]
        assert (remote.outcome, remote.upheld, remote.verdict, remote.statement) == \
            (local.outcome, local.upheld, local.verdict, local.statement), key
        # The AI's outcomes that rank provisionally are published too.
        assert (remote.ai_outcome, remote.ai_outcomes, remote.outcome_label) == \
            (local.ai_outcome, local.ai_outcomes, local.outcome_label), key
        assert set(remote.figures) == set(local.figures), key
        for kind, path in local.figures.items():
            assert remote.figures[kind].read_bytes() == path.read_bytes(), (key, kind)
        assert [(j.rubric, j.judge, j.outcome, [a.rationale for a in j.answers],
                 {name for name, _ in j.flags}) for j in remote.judgments] == \
            [(j.rubric, j.judge, j.outcome, [a.rationale for a in j.answers],
              {name for name, _ in j.flags}) for j in local.judgments], key
        # The flags found after judging (integrity, consensus) are published merged.
        assert remote.flags == local.flags, key
        assert consensus_html(space, remote) == consensus_html(run_data, local), key
    assert "not_independent" in space.claims["bob/neurips26-4821-check::" + OPENED[1]].flags
    assert consensus_view(space, OPENED[1]) == consensus_view(run_data, OPENED[1])
    assert space.by_registry_claim == run_data.by_registry_claim


def test_consensus_event_in_both_modes(consensus_run: Path, tmp_path: Path) -> None:
    """The consensus event: the panel, the API and the leaderboard's registry claims show the
    consensus stage's verdicts, supports, spreads, z-scores and flags, the same from the run
    directory and from the dataset `publish` writes."""
    from judging.publish import stage

    run = tmp_path / "run"
    shutil.copytree(consensus_run, run)
    resolve_run(run)
    local = load_run(run)
    staged = stage(run, out=tmp_path / "staged", repo_id="org/event").folder
    space = load_dataset_folder(staged)
    report = load_consensus(run)

    assert {c.claim_id: (c.verdict, c.support) for c in report.claims} == \
        {C1: ("verified", 5), C2: ("falsified", 4), C3: ("verified", 4), C4: ("verified", 4)}
    assert local.by_registry_claim == registry_rows(report) == space.by_registry_claim
    for claim in report.claims:
        view = consensus_view(local, claim.claim_id)
        assert view == consensus_view(space, claim.claim_id), claim.claim_id
        assert (view.verdict, view.support, view.agreement, view.independent, view.votes,
                view.reason) == (claim.verdict, claim.support, claim.agreement,
                                 claim.independent, claim.votes, claim.reason)
        assert [(r.submission, r.independent, r.counted, r.values, r.consensus_flags)
                for r in view.rows] == \
            [(r.claim.submission_id, r.independent, r.counted,
              [v.model_dump(mode="json") for v in r.values],
              [f.model_dump(mode="json") for f in r.flags]) for r in claim.reproductions]
        assert [(s.median, s.mad, s.floor, s.n) for s in view.spread] == \
            [(s.median, s.mad, s.floor, s.n) for s in claim.spread]
    flagged = {key: sorted(f.name for f in flags) for key, flags in report.flags().items()}
    assert flagged == {OUTLIER: ["value_outlier"], CONTRADICTION: ["contradicts_consensus"],
                       COPY: ["not_independent"], FALSE_FALSIFICATION: ["contradicts_consensus"]}
    for key, names in flagged.items():
        assert set(names) <= set(local.claims[key].flags), key
    for key, record in local.claims.items():
        assert space.claims[key].flags == record.flags, key
        assert consensus_html(space, space.claims[key]) == consensus_html(local, record), key

    # The panel: the consensus verdict and support, the spread with its tolerance floor, each
    # reproduction's z-score, the outlier and its flag's detail.
    page = consensus_html(local, local.claims[OUTLIER])
    assert "consensus <span class='jd-badge jd-verified'>verified</span> · support 5" in page
    assert "<td>value</td><td>80</td><td>5</td><td>80.1</td><td>0.1</td><td>0.5</td>" \
           "<td>79.9..86</td><td>team5/paper-9::paper-9/c1</td>" in page, page
    assert "+7.96 (outlier)" in page and "-0.27" in page
    assert "reproduced value 86 is far from the other reproductions" in page
    copy = consensus_html(local, local.claims[COPY])
    assert "shares with team1/paper-9::paper-9/c3" in copy and "<b>no</b>" in copy
    # The API and the leaderboard's registry claims.
    api = json.loads(AppApi(space).get_consensus(C2))
    assert (api["verdict"], api["support"], api["independent"]) == ("falsified", 4, 5)
    assert [r["submission"] for r in api["rows"]
            if r["consensus_flags"]] == [CONTRADICTION.split("::")[0]]
    assert "error" in json.loads(AppApi(space).get_consensus("no/such-claim"))
    board = leaderboard_table(space, by="claim")
    assert [row[0] for row in board] == [C1, C2, C3, C4]
    assert [row[7:9] for row in board] == [["verified", 5], ["falsified", 4], ["verified", 4],
                                           ["verified", 4]]
    assert leaderboard_table(space, by="claim", search="c2") == [board[1]]
    assert json.loads(AppApi(local).get_leaderboard("claim")) == local.by_registry_claim

    # A stale consensus.json (a later run changed what it was computed from) is recomputed,
    # and the claims' flags, here and in the published tables, are the recomputed consensus's.
    stale = tmp_path / "stale"
    shutil.copytree(run, stale)
    stored = ConsensusReport.from_file((stale / "consensus.json").read_bytes())
    for claim in stored.claims:
        for reproduction in claim.reproductions:
            reproduction.flags = []
    (stale / "consensus.json").write_text(
        stored.model_copy(update={"inputs_hash": "stale"}).model_dump_json())
    assert not flags_by_claim(stale).get(OUTLIER)
    again = load_run(stale)
    assert "value_outlier" in again.claims[OUTLIER].flags
    assert consensus_view(again, C1) == consensus_view(local, C1)
    restaged = load_dataset_folder(stage(stale, out=tmp_path / "restaged").folder)
    assert restaged.claims[OUTLIER].flags == local.claims[OUTLIER].flags

    # A dataset published before the consensus table: the rows, no statistics, a note; a
    # row that cannot be read costs only its own claim's consensus.
    old = tmp_path / "old"
    shutil.copytree(staged, old)
    (old / "data" / "consensus.jsonl").unlink()
    before = load_dataset_folder(old)
    assert before.consensus is None and any("no consensus table" in n for n in before.notes)
    view = consensus_view(before, C1)
    assert not view.registry and view.verdict is None and len(view.rows) == 5
    assert "no consensus table" in consensus_html(before, before.claims[OUTLIER])
    lines = (staged / "data" / "consensus.jsonl").read_text().splitlines()
    broken = json.loads(lines[0])
    broken["rows"] = json.dumps([{"submission_id": "x"}])
    (old / "data" / "consensus.jsonl").write_text(
        "\n".join([json.dumps(broken), *lines[1:]]) + "\n")
    partial = load_dataset_folder(old)
    assert any(f"row 1 ({C1}) could not be read" in n for n in partial.notes), partial.notes
    assert not consensus_view(partial, C1).registry
    assert consensus_view(partial, C2) == consensus_view(local, C2)


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
