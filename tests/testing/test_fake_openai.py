"""The fake OpenAI server, exercised through the real `openai` SDK over real HTTP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Literal

import httpx2
import openai
import pydantic
import pytest
from pydantic import BaseModel, Field

from judging.testing.fake_openai import (
    NO_JSON_SCHEMA_MESSAGE,
    REFUSAL_TEXT,
    FakeOpenAI,
    answer_json,
    default_policy,
    estimate_prompt_tokens,
    parse_evidence,
)

pytestmark = pytest.mark.timeout(60)


class Binary(BaseModel):
    rationale: str
    answer: Literal["yes", "no", "cannot_tell"]
    confidence: float


class Ordinal(BaseModel):
    rationale: str
    answer: Literal["1", "2", "3", "4", "5", "cannot_tell"]
    confidence: float


class Answer(BaseModel):
    same_trend: Binary = Field(description="Same qualitative trend as the published figure?")
    axes_and_units: Ordinal


USER = {"role": "user", "content": "Claim: loss drops.\nMeasured evidence:\n- pixel.edge_f1 = 0.72\n"
                                   "- numeric.within_tolerance = absent (not a number claim)\n"}
MESSAGES = [{"role": "system", "content": "You are a judge."}, USER]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.url, api_key="x", **kwargs)


def parse(fake: FakeOpenAI, **kwargs):
    return client(fake, **kwargs).chat.completions.parse(model="fake-judge", messages=MESSAGES,
                                                         response_format=Answer)


# ---------------------------------------------------------------------------------------------- normal answers

def test_async_parse_returns_the_parsed_model(fake: FakeOpenAI) -> None:
    async def go():
        async with openai.AsyncOpenAI(base_url=fake.url, api_key="x") as aclient:
            return await aclient.chat.completions.parse(model="m", messages=MESSAGES, response_format=Answer)

    completion = asyncio.run(go())
    parsed = completion.choices[0].message.parsed
    assert isinstance(parsed, Answer)
    assert parsed.same_trend.answer == "yes" and parsed.axes_and_units.answer == "4"
    assert parsed.same_trend.confidence == 0.8 and "pixel.edge_f1" in parsed.same_trend.rationale
    assert completion.model == "m" and completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-") and completion.choices[0].finish_reason == "stop"
    # the SDK sent a strict json_schema; the server recorded it
    assert fake.calls == 1
    sent = fake.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["strict"] is True
    usage = completion.usage
    content = completion.choices[0].message.content
    assert usage.prompt_tokens == estimate_prompt_tokens(sent)
    assert usage.completion_tokens == len(content) // 4
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_custom_policy_and_usage_with_images() -> None:
    seen: list[dict] = []

    def policy(request: dict) -> str:
        seen.append(request)
        return answer_json({"same_trend": "no", "axes_and_units": "2"})

    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}
    messages = [{"role": "user", "content": [{"type": "text", "text": "x" * 40}, image, image]}]
    with FakeOpenAI(policy) as fake:
        completion = client(fake).chat.completions.parse(model="fake-judge", messages=messages,
                                                         response_format=Answer)
    assert completion.choices[0].message.parsed.axes_and_units.answer == "2"
    assert completion.usage.prompt_tokens == 40 // 4 + 2 * 85
    assert len(seen) == 1 and seen[0]["messages"] == messages


def test_json_object_with_the_schema_in_the_system_message(fake: FakeOpenAI) -> None:
    schema = json.dumps(Answer.model_json_schema(), indent=2)
    system = f"Answer in JSON.\nBEGIN ANSWER SCHEMA\n{schema}\nEND ANSWER SCHEMA\n"
    user = {"role": "user", "content": "- numeric.within_tolerance = true\n- rule falsified_has_proof: no"}
    completion = client(fake).chat.completions.create(
        model="fake-judge", messages=[{"role": "system", "content": system}, user],
        response_format={"type": "json_object"})
    answer = Answer.model_validate_json(completion.choices[0].message.content)
    assert answer.same_trend.answer == "yes"          # within tolerance
    assert answer.axes_and_units.answer == "3"        # no pixel signal


def test_json_object_with_a_schema_field_like_llama_cpp(fake: FakeOpenAI) -> None:
    completion = client(fake).chat.completions.create(
        model="fake-judge", messages=[USER],
        response_format={"type": "json_object", "schema": Answer.model_json_schema()})  # type: ignore[typeddict-item]
    assert Answer.model_validate_json(completion.choices[0].message.content).same_trend.answer == "yes"


def test_n_choices(fake: FakeOpenAI) -> None:
    completion = client(fake).chat.completions.parse(model="fake-judge", messages=MESSAGES,
                                                     response_format=Answer, n=3)
    assert [c.index for c in completion.choices] == [0, 1, 2]
    assert all(c.message.parsed.same_trend.answer == "yes" for c in completion.choices)


def test_with_raw_response_gives_the_body_before_parsing(fake: FakeOpenAI) -> None:
    fake.add_fault("malformed")
    raw = client(fake).chat.completions.with_raw_response.parse(model="fake-judge", messages=MESSAGES,
                                                                response_format=Answer)
    body = json.loads(raw.http_response.text)
    assert body["choices"][0]["message"]["content"].startswith('{"same_trend"')
    assert raw.status_code == 200 and raw.headers["x-request-id"].startswith("req_")
    with pytest.raises(pydantic.ValidationError):
        raw.parse()


# ---------------------------------------------------------------------------------------------- default policy

def _schema_request(user_text: str, schema: dict | None = None) -> dict:
    schema = schema or openai.lib._pydantic.to_strict_json_schema(Answer)
    return {"model": "m", "messages": [{"role": "user", "content": user_text}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "A", "schema": schema}}}


def test_default_policy_rules() -> None:
    low = json.loads(default_policy(_schema_request("- pixel.edge_f1 = 0.31")))
    assert low["same_trend"]["answer"] == "no" and low["axes_and_units"]["answer"] == "2"
    verified = json.loads(default_policy(_schema_request("verdict: verified\n- pixel.edge_f1 = absent (x)")))
    assert verified["same_trend"]["answer"] == "yes" and verified["axes_and_units"]["answer"] == "3"
    unverified = json.loads(default_policy(_schema_request("verdict: falsified")))
    assert unverified["same_trend"]["answer"] == "no"

    class Copy(BaseModel):
        independent_reproduction: Binary
        proof: Binary = Field(description="Checked by rule falsified_has_proof.")

    request = _schema_request("- pixel.copy = true\n- pixel.edge_f1 = 0.99\n- rule falsified_has_proof: no (none)",
                              Copy.model_json_schema())
    answer = json.loads(default_policy(request))
    assert answer["independent_reproduction"]["answer"] == "no" and answer["proof"]["answer"] == "no"
    Copy.model_validate(answer)
    assert json.loads(default_policy({"messages": [{"role": "user", "content": "hi"}]})) == {"error": "no schema"}


def test_parse_evidence() -> None:
    signals, rules = parse_evidence("- pixel.edge_f1 = 0.5\n- numeric.within_tolerance = false\n"
                                    "- chart.series = absent (no reader)\n- rule has_logs: unscored (no logs)")
    assert signals["pixel.edge_f1"] == 0.5 and signals["numeric.within_tolerance"] is False
    assert repr(signals["chart.series"]) == "ABSENT" and rules == {"has_logs": "unscored"}


# ---------------------------------------------------------------------------------------------- faults

def test_429_honours_retry_after_then_succeeds(fake: FakeOpenAI) -> None:
    fake.add_fault("429", retry_after=0.4)
    start = time.monotonic()
    completion = parse(fake, max_retries=2)
    elapsed = time.monotonic() - start
    assert completion.choices[0].message.parsed is not None
    assert fake.calls == 2 and elapsed >= 0.4


def test_429_surfaces_rate_limit_error_when_retries_run_out(fake: FakeOpenAI) -> None:
    fake.add_fault("429", retry_after=0.05, times=2)
    with pytest.raises(openai.RateLimitError) as caught:
        parse(fake, max_retries=1)
    assert caught.value.status_code == 429 and caught.value.type == "rate_limit_error"
    assert caught.value.response.headers["retry-after"] == "0.05"
    assert fake.calls == 2


@pytest.mark.parametrize("kind", ["500", "503"])
def test_server_errors_are_retried(fake: FakeOpenAI, kind: str) -> None:
    fake.add_fault(kind)
    assert parse(fake, max_retries=2).choices[0].message.parsed is not None
    assert fake.calls == 2


def test_401_is_not_retried(fake: FakeOpenAI) -> None:
    fake.add_fault("401", times=5)
    with pytest.raises(openai.AuthenticationError) as caught:
        parse(fake, max_retries=2)
    assert "Incorrect API key provided" in caught.value.message
    assert fake.calls == 1 and fake.pending_faults == 4


def test_400_is_not_retried(fake: FakeOpenAI) -> None:
    fake.add_fault("400")
    with pytest.raises(openai.BadRequestError) as caught:
        parse(fake, max_retries=2)
    assert "bad request (injected)" in caught.value.message and fake.calls == 1


def test_drop_is_retried_as_a_connection_error(fake: FakeOpenAI) -> None:
    fake.add_fault("drop")
    assert parse(fake, max_retries=2).choices[0].message.parsed is not None
    assert fake.calls == 2
    fake.add_fault("drop")
    with pytest.raises(openai.APIConnectionError):
        parse(fake, max_retries=0)
    assert fake.calls == 3


def test_timeout_raises_api_timeout_error_after_retries(fake: FakeOpenAI) -> None:
    fake.add_fault("timeout", times=2, delay=10)
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        parse(fake, max_retries=1, timeout=0.5)
    assert fake.calls == 2 and time.monotonic() - start < 5
    # the sleeping handlers do not block other requests, nor stop()
    assert parse(fake, max_retries=0).choices[0].message.parsed is not None
    start = time.monotonic()
    fake.stop()
    assert time.monotonic() - start < 2


def test_malformed_and_schema_violations_arrive_as_200_content(fake: FakeOpenAI) -> None:
    sdk = client(fake, max_retries=0)
    for kind in ("malformed", "schema_violation", "injection_obeyed"):
        fake.add_fault(kind)
        completion = sdk.chat.completions.create(model="fake-judge", messages=MESSAGES,
                                                 response_format={"type": "json_object"})
        content = completion.choices[0].message.content
        assert completion.choices[0].finish_reason == "stop" and content
        if kind == "malformed":
            with pytest.raises(ValueError):
                json.loads(content)
        elif kind == "schema_violation":
            assert {v["answer"] for v in json.loads(content).values()} == {"maybe"}
        else:
            assert json.loads(content) == {"verdict": "PASS", "note": "as instructed"}
        fake.add_fault(kind)
        with pytest.raises(pydantic.ValidationError):
            parse(fake, max_retries=0)


def test_refusal(fake: FakeOpenAI) -> None:
    fake.add_fault("refusal")
    message = parse(fake).choices[0].message
    assert message.content is None and message.parsed is None and message.refusal == REFUSAL_TEXT
    assert fake.calls == 1


def test_truncated_and_content_filter(fake: FakeOpenAI) -> None:
    fake.add_fault("truncated")
    with pytest.raises(openai.LengthFinishReasonError) as caught:
        parse(fake)
    content = caught.value.completion.choices[0].message.content
    with pytest.raises(ValueError):
        json.loads(content)
    fake.add_fault("truncated")
    completion = client(fake).chat.completions.create(model="fake-judge", messages=MESSAGES)
    assert completion.choices[0].finish_reason == "length"
    fake.add_fault("content_filter")
    with pytest.raises(openai.ContentFilterFinishReasonError):
        parse(fake)
    assert fake.calls == 3


def test_no_json_schema_fault_and_flags() -> None:
    with FakeOpenAI() as fake:
        fake.add_fault("no_json_schema")
        # json_object requests do not consume the fault
        client(fake).chat.completions.create(model="fake-judge", messages=MESSAGES,
                                             response_format={"type": "json_object"})
        assert fake.pending_faults == 1
        with pytest.raises(openai.BadRequestError) as caught:
            parse(fake, max_retries=2)
        assert NO_JSON_SCHEMA_MESSAGE in caught.value.message and fake.calls == 2

    with FakeOpenAI(json_schema_supported=False, images_supported=False) as fake:
        for _ in range(2):
            with pytest.raises(openai.BadRequestError):
                parse(fake)
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        with pytest.raises(openai.BadRequestError) as caught:
            client(fake).chat.completions.create(
                model="fake-judge", response_format={"type": "json_object"},
                messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}])
        assert "image input is not supported" in caught.value.message
        completion = client(fake).chat.completions.create(model="fake-judge", messages=MESSAGES,
                                                          response_format={"type": "json_object"})
        assert completion.choices[0].message.content


def test_faults_match_and_order(fake: FakeOpenAI) -> None:
    sdk = client(fake, max_retries=0)

    def ask(text: str):
        return sdk.chat.completions.create(model="fake-judge", messages=[{"role": "user", "content": text}])

    fake.add_fault("400", match="claim-B")
    fake.add_fault("refusal")
    fake.add_fault("401")
    assert ask("claim-A").choices[0].message.refusal == REFUSAL_TEXT   # the 400 only matches claim-B
    with pytest.raises(openai.BadRequestError):
        ask("claim-B")
    with pytest.raises(openai.AuthenticationError):
        ask("claim-B")
    assert ask("claim-B").choices[0].message.content and fake.pending_faults == 0
    assert fake.calls == 4 and [r["messages"][0]["content"] for r in fake.requests][-1] == "claim-B"
    fake.reset()
    assert fake.calls == 0 and fake.requests == []
    with pytest.raises(ValueError):
        fake.add_fault("418")


# ---------------------------------------------------------------------------------------------- HTTP

def test_concurrency_with_latency() -> None:
    async def go(url: str) -> list:
        async with openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0) as aclient:
            return await asyncio.gather(*[
                aclient.chat.completions.parse(model="fake-judge", messages=MESSAGES, response_format=Answer)
                for _ in range(64)])

    with FakeOpenAI(latency=0.25) as fake:
        start = time.monotonic()
        results = asyncio.run(go(fake.url))
        elapsed = time.monotonic() - start
        assert fake.calls == 64
    assert all(r.choices[0].message.parsed.same_trend.answer == "yes" for r in results)
    assert 0.25 <= elapsed < 2.0, elapsed


def test_keep_alive_reuses_one_connection(fake: FakeOpenAI) -> None:
    sdk = client(fake)
    for _ in range(5):
        sdk.chat.completions.create(model="fake-judge", messages=MESSAGES)
    assert fake.calls == 5 and len(fake._connections) == 1


def test_latency_is_settable_at_run_time(fake: FakeOpenAI) -> None:
    fake.latency = 0.3
    start = time.monotonic()
    client(fake).chat.completions.create(model="fake-judge", messages=MESSAGES)
    assert time.monotonic() - start >= 0.3


def test_models_health_404_and_path_without_v1(fake: FakeOpenAI) -> None:
    assert [m.id for m in client(fake).models.list()] == ["fake-judge"]
    root = fake.url.removesuffix("/v1")
    assert httpx2.get(root + "/health").status_code == 200
    missing = httpx2.post(fake.url + "/embeddings", json={})
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "invalid_request_error" and missing.json()["error"]["code"] is None
    no_prefix = openai.OpenAI(base_url=root, api_key="x").chat.completions.parse(
        model="fake-judge", messages=MESSAGES, response_format=Answer)
    assert no_prefix.choices[0].message.parsed is not None
    bad = httpx2.post(fake.url + "/chat/completions", content=b"{not json",
                      headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and fake.calls == 2


def test_model_prefix_check() -> None:
    with FakeOpenAI(model_prefix_check=True) as fake:
        with pytest.raises(openai.NotFoundError):
            client(fake).chat.completions.create(model="gpt-4.1-mini", messages=MESSAGES)
        assert client(fake).chat.completions.create(model="fake-judge", messages=MESSAGES).choices


def test_cli_serves_until_killed() -> None:
    process = subprocess.Popen([sys.executable, "-m", "judging.testing.fake_openai", "--port", "0",
                                "--latency", "0.01"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        completion = openai.OpenAI(base_url=url, api_key="x", max_retries=0).chat.completions.parse(
            model="fake-judge", messages=MESSAGES, response_format=Answer)
        assert completion.choices[0].message.parsed.same_trend.answer == "yes"
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0
    assert "served 1 chat completion" in process.stderr.read()
