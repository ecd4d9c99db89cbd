"""`judging run --estimate` builds each judge's request with the run's own task builder (issue
43): for an LLM judge on the falsification-audit rubric, whose prompt carries the consensus of
the run's other lines, the request the estimate prices is the request the run sent.

The answer cache is keyed by the request hash (the model, settings and every message, images
included): an estimate that finds every audit request in the cache a run filled has built, byte
for byte, the prompts that run sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judging.judges import LLMOptions
from judging.run.runner import Runner, RunRequest, run_judging
from judging.testing.fake_openai import FakeOpenAI
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

JUDGE = "openai:fake-judge"
VERDICT, AUDIT = "verdict-justification", "falsification-audit"


def _request(out: Path, fake: FakeOpenAI, cache: Path, rubrics: list[str]) -> RunRequest:
    return RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY, rubrics=rubrics,
                      judges=[JUDGE], measure_cache=module_measure_cache(),
                      llm=LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret",
                                     max_retries=0, timeout=10.0, cache_dir=cache))


def test_the_estimated_audit_prompt_is_the_one_the_run_sends(tmp_path: Path) -> None:
    cache = tmp_path / "answers"
    with FakeOpenAI() as fake:
        # A run of both rubrics: the audits are judged on the consensus of the verdict lines.
        sent = run_judging(_request(tmp_path / "full", fake, cache, [VERDICT, AUDIT]))
        assert not sent.failed
        audits = [r for r in fake.requests if "proof_shows_problem" in json.dumps(r)]
        assert len(audits) == 3
        assert any("consensus" in json.dumps(r) for r in audits)  # the fact is in the prompt
        # The same first pass in a second directory (every answer from the cache), then the
        # estimate of adding the audit: it sees the consensus a run's second pass would see.
        out = tmp_path / "first-pass"
        assert not run_judging(_request(out, fake, cache, [VERDICT])).failed
        calls = fake.calls
        rows = asyncio.run(Runner(_request(out, fake, cache, [VERDICT, AUDIT])).estimate())
        assert fake.calls == calls  # the estimate sends nothing
    row = next(r for r in rows if r.judge == JUDGE)
    # Every audit request the estimate built is one the run sent (found in the cache by its
    # hash); a prompt built without the consensus fact would be priced as a new call.
    assert (row.calls, row.cached) == (0, 3)
