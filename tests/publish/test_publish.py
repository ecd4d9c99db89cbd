"""`judging publish`: staging, scrubbing, the dataset card, and the upload's failure modes.

The run is the bundled examples, judged offline, calibrated on their construction labels and
resolved, with personal data planted in a copy of the submissions. Nothing leaves loopback: the
dry run contacts nothing, and the upload tests talk to a small Hub stand-in on 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from judging.cli import main
from judging.errors import PublishError
from judging.models import ClaimKey, Label, RubricRef
from judging.publish.scrub import SCRUB_PATTERNS, pseudonym, scrub
from judging.publish.stage import stage
from judging.resolve import run_leaderboard
from judging.resolve.decide import RubricDecision
from judging.resolve.leaderboard import INTERVAL_COLUMNS, rank_text
from judging.rundir.store import RunStore, read_jsonl
from tests.conftest import REGISTRY, ROOT, SUBMISSIONS, module_measure_cache
from tests.fakehub import patch_hub

pytestmark = pytest.mark.usefixtures("shared_measurements")

CONSTRUCTION_LABELS = ROOT / "calibration" / "sets" / "examples" / "labels.jsonl"
EMAIL = "alice.liddell@wonder.example.org"
HF_TOKEN = "hf_" + "Zq7" * 11 + "x"
SK_KEY = "sk-proj-" + "Ab3De5Gh7Jk9" * 3
HOME_PATH = "/home/alice/experiments/warmup/run3.log"
BEARER = "Bearer abc123DEF456ghi789jkl"
REVIEWERS = ("ada.reviewer@uni.example.edu", "grace_h")
PLANTED = [EMAIL, HF_TOKEN, SK_KEY, "/home/alice", "abc123DEF456ghi789jkl", *REVIEWERS]
REPO = "judging-org/demo-verdicts"
TABLES = ("claims", "decisions", "judgments", "not_addressed", "consensus", "leaderboard")


def _plant(submissions: Path) -> None:
    """Personal data in a participant's justification and scale note, and in another's."""
    manifest = submissions / "alice-neurips26-4821" / "submission.yaml"
    data = yaml.safe_load(manifest.read_text())
    claim = next(c for c in data["claims"] if c["claim_id"] == "neurips26-4821/c3")
    claim["justification"] += (f" Contact me at {EMAIL}. Logs were pushed with {HF_TOKEN}; the "
                               f"judge ran with OPENAI_API_KEY={SK_KEY}. Raw log: {HOME_PATH}.")
    claim["scale_note"] += f" (questions: {EMAIL})"
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    manifest = submissions / "carol-iclr27-0137" / "submission.yaml"
    data = yaml.safe_load(manifest.read_text())
    data["claims"][0]["justification"] += f" The eval server wants `Authorization: {BEARER}`."
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


def _human_labels(run: Path, path: Path) -> None:
    """The construction labels plus two reviewers who agree on one criterion."""
    judgments = RunStore.open(run, create=False).latest()
    ref = next(j.rubric for j in judgments if j.rubric and j.rubric.id == "verdict-justification")
    lines = CONSTRUCTION_LABELS.read_text().splitlines()
    for name in REVIEWERS:
        label = Label(claim=ClaimKey(submission_id="alice/repro-neurips26-4821",
                                     claim_id="neurips26-4821/c3"),
                      rubric=RubricRef(id=ref.id, version=ref.version, hash=ref.hash),
                      criterion="justification_quality", value=4, annotator=name,
                      annotator_id=f"id-{name}", updated_at=datetime.now(UTC), blind=False,
                      dataset="verdict-justification-1.0.0", record_id="r1")
        lines.append(label.model_dump_json())
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from judging.calibrate.artifacts import TrustOptions
    from judging.calibrate.run import calibrate_run
    from judging.resolve.decide import resolve_run
    from judging.run.runner import RunRequest, run_judging

    base = tmp_path_factory.mktemp("publish")
    submissions = base / "submissions"
    shutil.copytree(SUBMISSIONS, submissions)
    _plant(submissions)
    run = base / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGING_CACHE_DIR", str(base / "cache"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        for name in ("JUDGING_JUDGE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGING_RUBRICS_DIR"):
            mp.delenv(name, raising=False)
        run_judging(RunRequest(sources=[str(submissions)], out=run, registry=REGISTRY,
                               measure_cache=module_measure_cache()))
        calibration = base / "calibration"
        # min_support 3 and low floors so that the card has trusted criteria to show (the
        # defaults need 50 labels; the Wilson lower bound of 1 of 1 is 0.21, and perfect
        # agreement on 7 claims has an F1 lower bound of about 0.76, not 1)
        calibrate_run(run, labels_path=CONSTRUCTION_LABELS, out=calibration,
                      options=TrustOptions(min_support=3, bootstrap=200, tpr_floor=0.2,
                                           tnr_floor=0.2, floor=0.7))
        labels = base / "labels.jsonl"
        _human_labels(run, labels)
        resolve_run(run, labels_path=labels, calibration_dir=calibration)
    return {"base": base, "run": run, "calibration": calibration, "submissions": submissions}


def _dry_run(resolved: dict[str, Path], *extra: str):
    return CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", REPO,
                                     "--dry-run", "--calibration", str(resolved["calibration"]),
                                     *extra])


@pytest.fixture(scope="module")
def staged(resolved: dict[str, Path]) -> Path:
    result = _dry_run(resolved)
    assert result.exit_code == 0, result.output
    return resolved["run"] / "publish"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- the dry run ----------------------------------------------------------------------------


def test_dry_run_lists_files_and_contacts_nothing(resolved, monkeypatch) -> None:
    import huggingface_hub

    calls = []
    for method in ("create_repo", "upload_folder", "create_commit", "repo_info"):
        monkeypatch.setattr(huggingface_hub.HfApi, method,
                            lambda *a, _m=method, **k: calls.append(_m))
    result = _dry_run(resolved, "--private")
    assert result.exit_code == 0, result.output
    assert calls == []
    out = " ".join(result.output.split())
    assert f"datasets/{REPO}" in out and "(private dataset)" in out
    assert "nothing was uploaded" in out
    for name in ("README.md", "data/claims.parquet", "data/claims.jsonl",
                 "data/decisions.parquet", "data/decisions.jsonl", "data/judgments.parquet",
                 "data/judgments.jsonl"):
        assert name in out
    assert "14 row(s)" in out
    counts = dict((kind, int(n)) for n, kind in
                  re.findall(r"(\d+) (email|token|home|local_path)", out.split("scrubbed:")[1]))
    # 2 emails (justification, scale note), 3 tokens (hf_, sk-, bearer), 1 home path
    assert counts == {"email": 2, "token": 3, "home": 1, "local_path": 0}, out


def test_staged_tables_have_the_expected_rows(resolved, staged) -> None:
    run = resolved["run"]
    finals = _rows(run / "final.jsonl")
    decisions = read_jsonl(run / "decisions.jsonl", RubricDecision)
    latest = RunStore.open(run, create=False).latest()
    expected = {"claims": len(finals), "decisions": sum(len(d.answers) for d in decisions),
                "judgments": len(latest)}
    assert expected["claims"] == 14
    for name, count in expected.items():
        table = pq.read_table(staged / "data" / f"{name}.parquet")
        assert table.num_rows == count, name
        assert table.to_pylist() == _rows(staged / "data" / f"{name}.jsonl"), name
    claims = _rows(staged / "data" / "claims.jsonl")
    assert {(r["submission_id"], r["claim_id"]) for r in claims} == \
        {(f["claim"]["submission_id"], f["claim"]["claim_id"]) for f in finals}
    row = next(r for r in claims if r["claim_id"] == "neurips26-4821/c3"
               and r["submission_id"].startswith("alice"))
    assert "[email]" in row["justification"] and "[token]" in row["justification"]
    assert "[home]/experiments/warmup/run3.log" in row["justification"]
    assert "[email]" in row["scale_note"]
    assert row["statement"] and row["verdict"] == "verified"
    assert set(json.loads(row["outcomes"])) == {"verdict-justification@1.2.0"}
    for key in ("root", "published_path", "reproduced_path", "evidence_paths"):
        assert key not in row
    judgments = _rows(staged / "data" / "judgments.jsonl")
    assert {r["judge"] for r in judgments} == {"offline"}
    assert all(json.loads(r["settings"]) == {"version": "offline-judge/1"} for r in judgments)
    assert all(isinstance(json.loads(r["answers"]), list) for r in judgments)


def test_figures_are_staged_and_named_in_the_claims_table(resolved, staged) -> None:
    """The Space mode of `judging app` shows these: each figure claim's normalised published and
    reproduced figures and its diff, byte for byte the run's, named in the claims' `figures`."""
    run = resolved["run"]
    latest = RunStore.open(run, create=False).latest()
    expected = {str(j.claim): j.artifacts for j in latest if j.artifacts.diff}
    assert expected, "the examples have figure claims"
    claims = {f"{r['submission_id']}::{r['claim_id']}": r
              for r in _rows(staged / "data" / "claims.jsonl")}
    for key, artifacts in expected.items():
        figures = json.loads(claims[key]["figures"])
        assert set(figures) >= {"published", "reproduced", "diff"}, (key, figures)
        for kind, path in figures.items():
            assert (staged / path).read_bytes() == \
                (run / getattr(artifacts, kind)).read_bytes(), (key, kind)
    assert all(r["figures"] is None for k, r in claims.items() if k not in expected)
    not_addressed = _rows(staged / "data" / "not_addressed.jsonl")
    assert len(not_addressed) == len(_rows(run / "not_addressed.jsonl")) > 0
    assert set(not_addressed[0]) == {"submission_id", "paper_id", "claim_id", "statement",
                                     "source"}


def test_nothing_personal_or_local_in_any_staged_file(resolved, staged) -> None:
    files = [p for p in staged.rglob("*") if p.is_file()]
    names = {p.relative_to(staged).as_posix() for p in files}
    assert {n for n in names if not n.startswith("figures/")} == {
        "README.md", *(f"data/{n}.{e}" for n in TABLES for e in ("parquet", "jsonl"))}
    assert all(re.fullmatch(r"figures/[a-z0-9.-]+/(published|reproduced|diff|overlay)\.png", n)
               for n in names if n.startswith("figures/")), names
    files = [p for p in files if p.suffix != ".png"]
    local = {str(resolved["base"]), str(resolved["base"].resolve()), str(ROOT),
             str(Path.cwd()), str(Path.home())}
    texts = {p.name: p.read_bytes() for p in files}
    for name in TABLES:  # parquet pages may be compressed
        table = pq.read_table(staged / "data" / f"{name}.parquet")
        texts[f"{name}.parquet (decoded)"] = json.dumps(table.to_pylist()).encode()
    for name, data in texts.items():
        for secret in PLANTED:
            assert secret.encode() not in data, (name, secret)
        for path in local:
            if len(path) > 1:
                assert path.encode() not in data, (name, path)
        assert not re.search(rb"/home/(?!<user>)", data), name
        # No JSON string is an absolute path: asked of text (a parquet file's raw bytes are
        # binary, where `"/` turns up by chance; its decoded rows are asked instead).
        if not name.endswith(".parquet"):
            assert b'"/' not in data, name


def test_reviewers_pseudonymised_and_hashes_survive(resolved, staged) -> None:
    decisions = _rows(staged / "data" / "decisions.jsonl")
    human = [r for r in decisions if r["decided_by"] in ("humans", "construction")]
    people = [r for r in human if r["criterion"] == "justification_quality"]
    assert len(people) == 1
    assert len(people[0]["who"]) == 2
    assert all(re.fullmatch(r"reviewer-[0-9a-f]{6}", w) for w in people[0]["who"])
    # construction labels are no one's: they keep the generator's name
    assert any(w == "construction:examples/generate.py" for r in human for w in r["who"])
    ai = [r for r in decisions if r["decided_by"] == "ai"]
    assert all(r["who"] == ["offline"] for r in ai)
    # stable across publishes of the run (the salt is kept beside the run, never uploaded)
    again = stage(resolved["run"], out=resolved["base"] / "again",
                  calibration_dir=resolved["calibration"])
    rows = _rows(again.folder / "data" / "decisions.jsonl")
    assert [r["who"] for r in rows] == [r["who"] for r in decisions]
    assert (resolved["run"] / ".publish-salt").is_file()
    assert not list(staged.rglob(".publish-salt"))
    hashes = {r["rubric_hash"] for r in decisions}
    assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes)
    judgments = _rows(staged / "data" / "judgments.jsonl")
    assert all(r["template_hash"].startswith("sha256:") and len(r["template_hash"]) == 71
               for r in judgments)
    assert all(r["input_hash"].startswith("sha256:") for r in judgments)


def test_the_card(resolved, staged) -> None:
    text = (staged / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["license"] == "cc-by-4.0" and front["pretty_name"] and front["tags"]
    configs = {c["config_name"]: c["data_files"] for c in front["configs"]}
    assert set(configs) == set(TABLES)
    for files in configs.values():
        for entry in files:
            assert (staged / entry["path"]).is_file() and entry["path"].endswith(".parquet")
    body = text.split("---\n", 2)[2]
    for line in RunStore.open(resolved["run"], create=False).latest():
        if line.rubric is not None:
            assert line.rubric.hash in body and line.rubric.id in body
    assert "`offline`" in body
    claims = _rows(staged / "data" / "claims.jsonl")
    for verdict in ("verified", "falsified", "inconclusive"):
        n = sum(1 for r in claims if r["verdict"] == verdict)
        assert f"| {verdict} | {n} |" in body
    for outcome in {r["outcome"] for r in claims}:
        n = sum(1 for r in claims if r["outcome"] == outcome)
        assert f"| {outcome} | {n} |" in body
    flat = " ".join(body.split())
    assert "construction labels" in flat and "not human labels" in flat
    assert "figure-match@1.4.0, judge `offline`" in flat
    assert "Trusted criteria (" in flat and \
        re.search(r"`independent_reproduction` \(F1 1\.00 \[0\.[7-9]\d, 1\.00\]", flat)
    assert "[1.00, 1.00]" not in flat  # a point is never shown as an interval
    decisions = _rows(staged / "data" / "decisions.jsonl")
    humans = sum(1 for r in decisions if r["decided_by"] == "humans")
    pending = sum(1 for r in decisions if r["status"] == "pending")
    assert f"| humans | {humans} |" in body and f"| pending review | {pending} |" in body
    assert "reviewer-<6 hex>" in body and "[email]" in body
    # The leaderboard's intervals, as `judging leaderboard` gives them (issue 42): the event
    # line, the top places, and a row per submission with its four interval columns.
    board = run_leaderboard(resolved["run"])
    assert "### Leaderboard intervals" in body and f"- {board.uncertainty[0]}" in body
    assert f"- {board.uncertainty[1]}" in body
    assert "| rank | submission | pass_rate_95 | human_only_95 | rank_95 | rank_settled |" in body
    for row in board.submissions:
        cells = [rank_text(row), row["submission"],
                 *(row.get(c) or "-" for c in INTERVAL_COLUMNS)]
        assert "| " + " | ".join(cells) + " |" in body, cells


def test_card_without_calibration_says_not_calibrated(resolved, tmp_path) -> None:
    result = stage(resolved["run"], out=tmp_path / "out", calibration_dir=tmp_path / "none",
                   license="mit")
    assert "**Not calibrated**" in result.card
    assert yaml.safe_load(result.card.split("---\n")[1])["license"] == "mit"


def test_needs_resolve_first(tmp_path) -> None:
    from judging.rundir.store import RunStore as Store

    run = tmp_path / "run"
    store = Store.open(run)
    store.write_info()
    result = CliRunner().invoke(main, ["publish", str(run), "--repo", REPO, "--dry-run"])
    assert result.exit_code == 1
    assert "judging resolve" in result.output and "Traceback" not in result.output


def test_refuses_to_wipe_a_foreign_out_folder(resolved, tmp_path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(PublishError, match="holds other files"):
        stage(resolved["run"], out=foreign, calibration_dir=resolved["calibration"])
    assert (foreign / "thesis.tex").read_text() == "precious"


# --- uploading ------------------------------------------------------------------------------


def test_no_token_is_one_clear_line(resolved, monkeypatch, tmp_path) -> None:
    from huggingface_hub import constants

    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "stored_tokens"))
    result = CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", REPO,
                                       "--calibration", str(resolved["calibration"])])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: publishing needs a Hugging Face token: set HF_TOKEN or run "
                     "`hf auth login`"], result.output


def test_unreachable_hub_is_one_clear_line(resolved, monkeypatch, tmp_path) -> None:
    patch_hub(monkeypatch, "http://127.0.0.1:1", tmp_path / "hf", token=HF_TOKEN)
    result = CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", REPO,
                                       "--calibration", str(resolved["calibration"]),
                                       "--out", str(tmp_path / "stage")])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach the Hugging Face Hub at http://127.0.0.1:1" \
        in lines[0], result.output
    assert HF_TOKEN not in result.output


def test_offline_mode_is_one_clear_line(resolved, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)  # HF_HUB_OFFLINE=1 from conftest
    result = CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", REPO,
                                       "--out", str(tmp_path / "stage")])
    assert result.exit_code == 1 and "offline mode" in result.output, result.output


class MiniHub:
    """Just enough of the Hub for create_repo + upload_folder (regular, non-LFS files)."""

    def __init__(self, create_status: int = 200):
        self.create_status = create_status
        self.requests: list[tuple[str, str, str | None]] = []
        self.files: dict[str, bytes] = {}
        self.created: dict | None = None
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                hub.requests.append(("GET", self.path, self.headers.get("Authorization")))
                self._send(404, {"error": "Repository not found"},
                           {"X-Error-Code": "RepoNotFound"})

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                hub.requests.append(("POST", path, self.headers.get("Authorization")))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if path == "/api/repos/create":
                    if hub.create_status != 200:
                        message = {401: "Invalid credentials in Authorization header",
                                   403: "You don't have the rights to create a dataset under "
                                        "the namespace"}.get(hub.create_status, "server error")
                        return self._send(hub.create_status, {"error": message},
                                          {"X-Error-Message": message})
                    hub.created = json.loads(body)
                    return self._send(200, {"url": f"{hub.url}/datasets/{REPO}"})
                if path == "/api/validate-yaml":
                    yaml.safe_load(json.loads(body)["content"].split("---\n")[1])
                    return self._send(200, {"errors": [], "warnings": []})
                if path.endswith("/preupload/main"):
                    files = json.loads(body)["files"]
                    return self._send(200, {"files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                        for f in files]})
                if path.endswith("/commit/main"):
                    for line in body.splitlines():
                        item = json.loads(line)
                        if item["key"] == "file":
                            value = item["value"]
                            hub.files[value["path"]] = base64.b64decode(value["content"])
                    return self._send(200, {"commitUrl": f"{hub.url}/datasets/{REPO}/commit/"
                                                         + "0" * 40,
                                            "commitOid": "0" * 40, "pullRequestUrl": None})
                self._send(404, {"error": f"not implemented: {path}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> MiniHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_upload_sends_the_staged_folder(resolved, monkeypatch, tmp_path) -> None:
    with MiniHub() as hub:
        patch_hub(monkeypatch, hub.url, tmp_path / "hf", token=HF_TOKEN)
        out = tmp_path / "stage"
        result = CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", REPO,
                                           "--private", "--calibration",
                                           str(resolved["calibration"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{hub.url}/datasets/{REPO}" in " ".join(result.output.split())
    assert hub.created == {"name": REPO.split("/")[1], "organization": REPO.split("/")[0],
                           "visibility": "private", "type": "dataset"}
    staged = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
              if p.is_file()}
    assert hub.files == staged
    assert all(auth == f"Bearer {HF_TOKEN}" for _, _, auth in hub.requests)


@pytest.mark.parametrize(("status", "expected"), [
    (401, "refused the token (401 Unauthorized)"),
    (403, "may not create or write judging-org/demo-verdicts (403 Forbidden)"),
    (500, "refused the upload to judging-org/demo-verdicts (500)"),
])
def test_hub_errors_are_one_clear_line(resolved, monkeypatch, tmp_path, status, expected
                                       ) -> None:
    with MiniHub(create_status=status) as hub:
        patch_hub(monkeypatch, hub.url, tmp_path / "hf", token=HF_TOKEN)
        result = CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", REPO,
                                           "--out", str(tmp_path / "stage")])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and expected in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output and not hub.files


def test_llm_provenance_keeps_what_is_public(tmp_path) -> None:
    from judging.models import (
        CriterionAnswer,
        Judgment,
        LineStatus,
        Provenance,
        TokenUsage,
    )
    from judging.publish.rows import judgment_rows
    from judging.publish.scrub import Scrubber

    def line(endpoint: str) -> Judgment:
        return Judgment(
            run_id="r", claim=ClaimKey(submission_id="s", claim_id="c"), judge="openai:m",
            rubric=RubricRef(id="x", version="1.0.0", hash="sha256:" + "a" * 64),
            input_hash="sha256:" + "b" * 64, status=LineStatus.scored,
            answers=[CriterionAnswer(criterion_id="q", status="scored", value=True,
                                     rationale=f"the log at {HOME_PATH} says so ({EMAIL})")],
            provenance=Provenance(
                judge="openai:m", model="m", settings={"endpoint": endpoint, "temperature": 0.0},
                template_hash="sha256:" + "c" * 64, request_hash="sha256:" + "d" * 64,
                raw_answer=f'{{"rationale": "key {SK_KEY}"}}', usage=TokenUsage(
                    prompt_tokens=10, completion_tokens=5, total_tokens=15), cost_usd=0.001,
                cached=True, timestamp=datetime.now(UTC), code_version="judging 0.1.0"))

    scrubber = Scrubber()
    rows = judgment_rows([line("http://localhost:8011/v1"), line("http://10.1.2.3:8000/v1"),
                          line("https://router.huggingface.co/v1")], scrubber)
    endpoints = [json.loads(r["settings"])["endpoint"] for r in rows]
    assert endpoints == ["[local endpoint]", "[local endpoint]",
                         "https://router.huggingface.co/v1"]
    row = rows[0]
    assert row["raw_answer"] == '{"rationale": "key [token]"}'
    answer = json.loads(row["answers"])[0]
    assert answer["rationale"] == "the log at [home]/experiments/warmup/run3.log says so ([email])"
    assert (row["model"], row["prompt_tokens"], row["total_tokens"], row["cost_usd"]) == \
        ("m", 10, 15, 0.001)
    assert row["request_hash"] == "sha256:" + "d" * 64 and "cached" not in row
    assert scrubber.counts == {"token": 3, "home": 3, "email": 3}


def test_bad_repo_id(resolved) -> None:
    result = CliRunner().invoke(main, ["publish", str(resolved["run"]), "--repo", "no-slash",
                                       "--dry-run"])
    assert result.exit_code == 1 and "ORG/NAME" in result.output


# --- scrub ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected", "kind"), [
    ("write to bob.smith+repro@lab.example.co.uk today", "write to [email] today", "email"),
    ("token " + "hf_" + "a1B2c3D4e5" * 3 + "xyzw", "token [token]", "token"),
    ("key=sk-" + "Zx9" * 12, "key=[token]", "token"),
    ("sk-proj-" + "Q1w2E3r4T5y6" * 4, "[token]", "token"),
    ("ghp_" + "A" * 36, "[token]", "token"),
    ("gho_" + "b9" * 18, "[token]", "token"),
    ("github_pat_11ABCDEFG0" + "x" * 50, "[token]", "token"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "aws [token] here", "token"),
    ("slack xoxb-123456789012-abcdefABCDEF", "slack [token]", "token"),
    ("Authorization: Bearer 9f8e7d6c5b4a39281706", "Authorization: Bearer [token]", "token"),
    ("api_key=abcd1234efgh5678", "api_key=[token]", "token"),
    ('{"password": "hunter2hunter2"}', '{"password": "[token]"}', "token"),
    ("token: 'Zz99Zz99Zz99Zz99'", "token: '[token]'", "token"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "AWS_SECRET_ACCESS_KEY=[token]",
     "token"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlF",
     "jwt [token]", "token"),
    ("see /home/alice/data/train.csv", "see [home]/data/train.csv", "home"),
    ("open /Users/bob/Desktop/fig.png", "open [home]/Desktop/fig.png", "home"),
    (r"C:\Users\carol\runs\log.txt", r"[home]\runs\log.txt", "home"),
    ("cd /root/work && run", "cd [home]/work && run", "home"),
    ("file:///home/dave/x", "file://[home]/x", "home"),
])
def test_scrub_each_kind(text: str, expected: str, kind: str) -> None:
    cleaned, counts = scrub(text)
    assert cleaned == expected
    assert counts == {kind: 1}


def test_scrub_counts_and_local_paths() -> None:
    text = (f"mail {EMAIL} or a@b.io; {HF_TOKEN} and {SK_KEY}; {HOME_PATH} and /home/bob; "
            "/srv/judge/runs/x/diffs/a.png")
    cleaned, counts = scrub(text, local_paths=["/srv/judge/runs"])
    assert counts == {"email": 2, "token": 2, "home": 2, "local_path": 1}
    assert cleaned == ("mail [email] or [email]; [token] and [token]; "
                       "[home]/experiments/warmup/run3.log and [home]; [local]/x/diffs/a.png")
    # idempotent: a scrubbed text has nothing left to scrub
    assert scrub(cleaned, local_paths=["/srv/judge/runs"]) == (cleaned, {})
    # a local path only matches whole: /srv/judge/runsheet is another folder
    assert scrub("/srv/judge/runsheet", local_paths=["/srv/judge/runs"])[1] == {}


@pytest.mark.parametrize("text", [
    "sha256:" + "e2993075f8c55295b3ffab539af02c972e45183f1891067d60602321610c8c60",
    "template_hash: sha256:" + "ab" * 32,
    "token: sha256:" + "cd" * 32,
    "figure-match@1.0.0 and verdict-justification@1.0.0",
    "max_tokens=2000, prompt_tokens: 1234",
    "hf_hub_download and sk-learn are fine",
    "/homework/x and https://example.com/home/page and /rooted",
    "Bearer authentication is what the server uses",
    "password: required for every reviewer",
    "val_loss 0.229 at step 10000 (logs/train_vit_sparse.txt)",
    "git commit 151668942676 and request id 7d3f2c1b9a8e",
    "",
])
def test_scrub_keeps_what_is_not_personal(text: str) -> None:
    assert scrub(text) == (text, {})


def test_scrub_table_is_compiled_and_fast() -> None:
    import time

    assert all(hasattr(pattern, "subn") for _, _, pattern, _ in SCRUB_PATTERNS)
    assert {kind for kind, *_ in SCRUB_PATTERNS} == {"email", "token", "home"}
    text = ("lorem ipsum a-b_c.d/e " * 2000) + ("x" * 20_000) + ("a_" * 10_000)
    started = time.perf_counter()
    scrub(text)
    assert time.perf_counter() - started < 1.0


def test_pseudonym() -> None:
    a = pseudonym("ada", "salt-1")
    assert re.fullmatch(r"reviewer-[0-9a-f]{6}", a)
    assert pseudonym("ada", "salt-1") == a != pseudonym("ada", "salt-2")
    assert pseudonym("grace", "salt-1") != a
    assert pseudonym("construction:examples/generate.py", "s") == \
        "construction:examples/generate.py"
