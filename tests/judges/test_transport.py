"""The one LLM transport (judging/judges/openai/): the judge and the logbook extractor read an
endpoint's failures through the same map, over the real `openai` client and the local fake
server. A timeout, a 5xx after the retries, a 404 and refused credentials mean the same for both.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from judging.intake import load_submission
from judging.judges import JudgeConfigError, JudgeTask, LLMOptions, StructuredCaller, openai_judge
from judging.rubrics import RubricLibrary
from judging.testing.fake_openai import FakeOpenAI
from tests.conftest import EXAMPLES

MODEL = "fake-judge"


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    note: str


def _options(fake: FakeOpenAI, tmp_path: Path, **kw) -> LLMOptions:
    return LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret", cache_dir=tmp_path / "c",
                      **{"timeout": 10.0, "max_retries": 0, **kw})


def _extract(fake: FakeOpenAI, tmp_path: Path, model: str = MODEL, **kw):
    caller = StructuredCaller(model, _options(fake, tmp_path, **kw))
    try:
        return caller(system="Answer.", instructions="Say something.",
                      documents=[("page", "text")], answer_model=Note)
    finally:
        caller.close()


def _judge(fake: FakeOpenAI, tmp_path: Path, model: str = MODEL, **kw):
    loaded = load_submission(EXAMPLES / "submissions" / "alice-neurips26-4821")
    claim = next(c for c in loaded.claims if c.claim.kind.value == "number")
    rubric = next(r for r in RubricLibrary().defaults() if r.applies_to_claim(claim.claim)
                  and r.applies_to != "figure")
    judge = openai_judge(model, _options(fake, tmp_path, **kw))

    async def ask():
        try:
            return await judge(JudgeTask(claim=claim, rubric=rubric, signals={}))
        finally:
            await judge.close()

    return asyncio.run(ask())


def test_a_timeout_reads_the_same_for_the_judge_and_the_extractor(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.add_fault("timeout", delay=3, times=2)
        judged = _judge(fake, tmp_path, timeout=0.5)
        extracted = _extract(fake, tmp_path, timeout=0.5)
    assert judged.error == "timed out after 0.5 s (0 retries)" and not judged.final
    assert extracted.error == judged.error and extracted.parsed is None


def test_a_server_error_keeps_the_endpoints_message_for_both(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.add_fault("500", times=2)
        judged = _judge(fake, tmp_path)
        extracted = _extract(fake, tmp_path)
    assert judged.error.startswith("the endpoint failed (500) after 0 retries: ")
    assert extracted.error == judged.error


@pytest.mark.parametrize("fault, message", [
    ("404", r"openai:nothing: not found at http://127\.0\.0\.1:\d+/v1 \(404\)"),
    ("401", r"openai:fake-judge: the endpoint refused the credentials \(401\)")])
def test_a_model_not_found_or_refused_credentials_stop_both(tmp_path: Path, fault: str,
                                                             message: str) -> None:
    with FakeOpenAI(model_prefix_check=True) as fake:
        model = "nothing" if fault == "404" else MODEL
        for ask in (_judge, _extract):
            if fault == "401":
                fake.add_fault("401")
            with pytest.raises(JudgeConfigError, match=message):
                ask(fake, tmp_path, model=model)
