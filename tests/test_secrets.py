"""Known keys go through every stage; none may appear in any output, file, log or Argilla record."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.testing.fake_openai import FakeOpenAI

from .conftest import REGISTRY, SUBMISSIONS

pytestmark = pytest.mark.usefixtures("shared_measurements")

OPENAI_KEY = "sk-proj-SECRETopenaiKEY" + uuid.uuid4().hex
HF_TOKEN = "hf_SECRETtoken" + uuid.uuid4().hex


def _scan(root: Path, secrets: list[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {s[:12]}..." for s in secrets if s.encode() in data]
    return found


def test_no_secret_in_any_output(argilla, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                 ) -> None:
    workspace = f"secrets-{uuid.uuid4().hex[:6]}"
    annotator = argilla.create_user(workspaces=[])
    secrets = [OPENAI_KEY, HF_TOKEN, argilla.api_key, annotator.api_key, annotator.password]
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    monkeypatch.setenv("ARGILLA_API_URL", argilla.url)
    monkeypatch.setenv("ARGILLA_API_KEY", argilla.api_key)
    cache = tmp_path / "cache"
    monkeypatch.setenv("JUDGING_CACHE_DIR", str(cache))
    run, calibration = tmp_path / "run", tmp_path / "calibration"
    outputs = []
    runner = CliRunner()

    def cli(*args: str) -> None:
        result = runner.invoke(main, ["--verbose", *args])
        outputs.append(result.output)
        assert result.exit_code == 0, result.output

    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        cli("run", str(SUBMISSIONS), "--claims", str(REGISTRY), "--out", str(run),
            "--judge", "openai:fake-judge", "--judge", "offline", "--samples", "2")
        assert fake.calls > 0
    cli("report", str(run))
    cli("review", "push", str(run), "--workspace", workspace, "--blind-share", "0.3")
    # `users add` exists to hand a reviewer their login: its output is the one place a key is
    # shown on purpose (to the organizer's terminal, never to a file); it is not scanned.
    added = runner.invoke(main, ["review", "users", "add", annotator.username, "--workspace",
                                 workspace, "--password", annotator.password])
    assert added.exit_code == 0 and annotator.api_key in added.output
    client = argilla.client()
    dataset = client.datasets(name="verdict-justification-1.2.0", workspace=workspace)
    record = next(iter(dataset.records(with_suggestions=False)))
    with argilla.http(annotator.api_key) as http:
        http.post(f"/api/v1/records/{record._server_id}/responses",
                  json={"values": {"overall_verdict": {"value": "pass"}},
                        "status": "submitted"}).raise_for_status()
    cli("review", "pull", str(run), "--workspace", workspace)
    labels = Path(__file__).resolve().parent.parent / "calibration/sets/examples/labels.jsonl"
    cli("calibrate", str(run), "--labels", str(labels), "--out", str(calibration))
    cli("resolve", str(run), "--calibration", str(calibration))
    cli("leaderboard", str(run))
    # Everything Argilla holds for these datasets (fields, metadata, suggestions).
    records_dump = []
    for name in ("figure-match-1.0.0", "verdict-justification-1.2.0",
                 "figure-match-1.0.0-calibration", "verdict-justification-1.2.0-calibration"):
        found = client.datasets(name=name, workspace=workspace)
        if found is not None:
            with argilla.http() as http:
                page = http.get(f"/api/v1/datasets/{found.id}/records",
                                params={"include": ["responses", "suggestions"], "limit": 500})
                records_dump.append(page.text)
    leaks = _scan(run, secrets) + _scan(calibration, secrets) + _scan(cache, secrets)
    leaks += [f"CLI output: {s[:12]}..." for s in secrets if any(s in o for o in outputs)]
    leaks += [f"Argilla records: {s[:12]}..." for s in secrets
              if any(s in dump for dump in records_dump)]
    log = (argilla.home / "server.log").read_text(errors="replace")
    leaks += [f"server log: {s[:12]}..." for s in secrets if s in log]
    scanned = sum(1 for p in [*run.rglob("*"), *calibration.rglob("*"), *cache.rglob("*")]
                  if p.is_file())
    print(f"\nsecrets: {len(secrets)} known keys scanned for in {scanned} files, "
          f"{len(outputs)} command outputs, {len(records_dump)} Argilla datasets and the server "
          f"log: {len(leaks)} found")
    assert leaks == []
    # The run recorded what it needs without the key: the endpoint, the model, the settings.
    line = json.loads((run / "judgments.jsonl").read_text().splitlines()[-1])
    assert "api_key" not in json.dumps(line["provenance"]["settings"])
