"""kill -9 in the middle of `judging run` (LLM judge over HTTP) and of `judging review push`:
the rerun completes with nothing lost, nothing duplicated, and no call repeated for finished work.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

import pytest
import yaml

from judging.rundir.store import RunStore, line_key
from tests.conftest import JUDGING_CLI, ROOT


def _fake_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, "-m", "judging.testing.fake_openai", "--port", "0",
                               "--latency", str(latency)], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    assert url.startswith("http"), url
    return server, url


def _calls(url: str) -> int:
    with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as response:
        return int(json.load(response)["calls"])


def _number_submission(root: Path, n: int) -> Path:
    root.mkdir(parents=True)
    (root / "logs").mkdir()
    claims = []
    for i in range(n):
        (root / "logs" / f"run{i}.txt").write_text(f"final top1 {90 + i % 5}.20\n")
        claims.append({"claim_id": f"p/c{i}", "kind": "number", "statement": f"Accuracy {i}",
                       "reported_value": 90.4 + i % 5, "reproduced_value": 90.2 + i % 5,
                       "tolerance": {"absolute": 0.5}, "verdict": "verified",
                       "justification": f"see logs/run{i}.txt",
                       "evidence": {"logs": [f"logs/run{i}.txt"]}})
    (root / "submission.yaml").write_text(yaml.safe_dump(
        {"submission_id": "crash/sub", "paper_id": "p", "claims": claims}))
    return root


def _wait_for(predicate, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_bytes().split(b"\n") if line.strip()) \
        if path.exists() else 0


def test_kill_during_llm_run_then_rerun(tmp_path: Path) -> None:
    server, url = _fake_server(latency=0.15)
    try:
        source = _number_submission(tmp_path / "sub", 60)
        out, cache = tmp_path / "run", tmp_path / "cache"
        args = [*JUDGING_CLI, "run", str(source), "--out", str(out), "--judge",
                "openai:fake-judge", "--base-url", url, "--api-key", "sk-crash-test",
                "--concurrency", "4", "--cache-dir", str(cache)]
        killed = 0
        finished_before = []
        for _ in range(2):  # two crashes at different points
            process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       start_new_session=True)
            target = 12 + 15 * killed
            _wait_for(lambda t=target: _lines(out / "judgments.jsonl") >= t,
                      what="judgments being written")
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            killed += 1
            finished_before.append(_lines(out / "judgments.jsonl"))
        calls_at_kill = _calls(url)
        # A crash mid-write leaves a torn last line: simulate the worst case too.
        with (out / "judgments.jsonl").open("ab") as handle:
            handle.write(b'{"schema": "judging.judgment/1", "run_id": "torn')
        completed = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr[-2000:]
        assert "Traceback" not in completed.stderr
        calls_rerun = _calls(url) - calls_at_kill
        store = RunStore.open(out, create=False)
        judgments = store.judgments()
        keys = Counter(line_key(j) for j in judgments)
        duplicated = [k for k, n in keys.items() if n > 1]
        latest = store.latest()
        lost = 60 - len({str(j.claim) for j in latest if j.status.value == "scored"})
        print(f"\ncrash safety (run): {killed} kill -9 + 1 torn line injected; lines before the "
              f"kills {finished_before}; calls {calls_at_kill} before, {calls_rerun} in the rerun "
              f"for {60 - finished_before[-1]} unfinished claims; lost {lost}, duplicated "
              f"{len(duplicated)}")
        assert duplicated == []
        assert lost == 0 and len(latest) == 60
        # Finished claims are never asked again; answers that arrived but were not yet written
        # come from the cache: the rerun calls at most the claims that were not finished.
        assert calls_rerun <= 60 - finished_before[-1]
        assert _calls(url) <= 60 + 2 * 4  # at most the in-flight calls were lost per crash
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_kill_during_review_push_then_rerun(argilla, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import importlib

        review_bench = importlib.import_module("review")
    finally:
        sys.path.pop(0)
    run = review_bench.build_run(tmp_path, 240)
    workspace = f"crash-{uuid.uuid4().hex[:6]}"
    args = [*JUDGING_CLI, "review", "push", str(run), "--workspace", workspace,
            "--blind-share", "0", "--batch-size", "16", "--api-url", argilla.url,
            "--api-key", argilla.api_key]
    client = argilla.client()

    def pushed() -> int:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if client.workspaces(workspace) is None:
                return 0
            dataset = client.datasets(name="figure-match-1.0.0", workspace=workspace)
        if dataset is None:
            return 0
        with argilla.http() as http:
            progress = http.get(f"/api/v1/datasets/{dataset.id}/progress").json()
        return int(progress.get("total", 0))

    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    state = run / "pushed.jsonl"  # the push's resume point: records the server acknowledged

    def acknowledged() -> int:
        return len(state.read_text().splitlines()) if state.is_file() else 0

    _wait_for(lambda: acknowledged() >= 32, what="records being pushed")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before, recorded = pushed(), acknowledged()
    completed = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    # The rerun sends only what the killed push had not recorded as acknowledged.
    sent = int(re.search(r"pushed (\d+) record", completed.stdout).group(1))
    resumed = int(re.search(r"(\d+) already there", completed.stdout).group(1))
    assert resumed == recorded >= 32 and sent == 240 - recorded, completed.stdout
    dataset = client.datasets(name="figure-match-1.0.0", workspace=workspace)
    ids = [str(r.id) for r in dataset.records(with_suggestions=False)]
    print(f"\ncrash safety (push): 1 kill -9 after {before} of 240 records ({recorded} "
          f"recorded as acknowledged); the rerun sent {sent}; after it "
          f"{len(ids)} records, {len(ids) - len(set(ids))} duplicated, {240 - len(set(ids))} lost")
    assert 0 < before < 240
    assert len(ids) == len(set(ids)) == 240
