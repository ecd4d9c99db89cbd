"""LLM judges over any OpenAI-compatible endpoint (OpenAI, HF Inference Providers, vLLM, llama.cpp,
Ollama) through the `openai` SDK: structured outputs with the JSON-mode fallback (`endpoint`), the
answer cache (`cache`), the budget and prices (`cost`), and answers read criterion by criterion
(`answers`).

A failure of the endpoint (after the SDK's own retries) leaves the line unscored and *not final*,
so that a rerun tries again; a configuration no call can succeed with stops the run.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2
import openai
import pydantic_core

import judging.judges.prompt as prompt
from judging.hashing import content_hash
from judging.judges.base import CallEstimate, JudgeResult, JudgeTask
from judging.judges.openai.answers import (
    check_quotes,
    interpret_answer,
    raw_answer,
    served,
    served_by,
    unscored,
    usage_of,
)
from judging.judges.openai.cache import AnswerCache, answer_cache
from judging.judges.openai.cost import (
    COMPLETION_TOKENS_PER_CRITERION,
    Budget,
    Price,
    load_prices,
    model_price,
    prompt_tokens,
    tokens_cost,
    usage_cost,
)
from judging.judges.openai.endpoint import (
    EndpointClient,
    FormatChain,
    JudgeConfigError,
    LLMOptions,
    ResponseMode,
    endpoint_label,
    failure_reason,
    format_digest,
    format_rejected,
    response_format,
)
from judging.models import SettingValue, TokenUsage
from judging.rubrics import Criterion, Rubric


@dataclass(frozen=True)
class PreparedRequest:
    kwargs: dict[str, Any]
    """What is sent (besides the response format, which depends on the mode)."""
    answer_model: type
    criteria: list[Criterion]
    mode: ResponseMode
    request_hash: str
    cut: str | None = None
    """The participant's text the prompt shows only in part (`prompt.Cut`), described; the
    criteria that read it are unscored, never answered on a silently cut text."""
    reads_cut_text: bool = False
    """The rubric judges the participant's text (a verdict rubric): its criteria need the cut
    part. A figure rubric's criteria judge the figures and measures, the text is context."""


class OpenAIJudge:
    """`openai:MODEL`: one chat-completions call per (claim, rubric, sample, figure order)."""

    def __init__(self, model: str, options: LLMOptions, *, cache: AnswerCache | None,
                 budget: Budget | None, prices: dict[str, Price],
                 limiter: asyncio.Semaphore | None = None,
                 endpoint: EndpointClient | None = None):
        if not model:
            raise JudgeConfigError("an openai judge needs a model: openai:MODEL")
        self.model = model
        self.spec = f"openai:{model}"
        self.options = options
        self.limiter = limiter or asyncio.Semaphore(8)
        """Bounds the calls in flight; a run shares one between its judges (--concurrency)."""
        self.cache = cache
        self.budget = budget
        self.price = model_price(model, prices, budget=budget)
        fixed = options.response_format
        self.formats = FormatChain(fixed)
        self.answer_settings: dict[str, SettingValue] = {
            "temperature": options.temperature, "max_tokens": options.max_tokens,
            "seed": options.seed, "images": options.images, "image_detail": options.image_detail,
            "response_format": fixed, "evidence_budget": options.evidence_budget}
        self.settings: dict[str, SettingValue] = {
            "endpoint": endpoint_label(options.base_url), **self.answer_settings,
            "timeout": options.timeout, "max_retries": options.max_retries}
        self._template_hashes: dict[str, str] = {}
        # A run shares one endpoint client between its judges; a judge made alone owns one.
        self._owns_endpoint = endpoint is None
        self.endpoint = endpoint or EndpointClient(options, connections=None)

    @property
    def client(self) -> openai.AsyncOpenAI:
        return self.endpoint.client

    def template_hash(self, rubric: Rubric) -> str:
        # Asked for every work item of a run (its input hash): made once per rubric content.
        key = rubric.content_hash()
        found = self._template_hashes.get(key)
        if found is None:
            found = self._template_hashes[key] = prompt.template_hash(rubric)
        return found

    async def aclose(self) -> None:
        """Close the HTTP connections (before the event loop ends), if this judge owns them."""
        if self._owns_endpoint:
            await self.endpoint.aclose()

    @property
    def mode(self) -> ResponseMode:
        return self.formats.mode

    def prepare(self, task: JudgeTask, *, mode: ResponseMode | None = None
                ) -> PreparedRequest | None:
        """The exact request for a task (None when no criterion applies to the claim)."""
        criteria = prompt.applicable_criteria(task.rubric, task.claim, task.signals)
        if not criteria:
            return None
        mode = mode or self.mode
        options = prompt.PromptOptions(images=self.options.images,
                                       image_detail=self.options.image_detail, swapped=task.swapped,
                                       schema_in_prompt=mode != "json_schema",
                                       evidence_budget=self.options.evidence_budget)
        messages, cuts = prompt.build_prompt(task, criteria, options)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.options.temperature,
                                  "max_tokens": self.options.max_tokens}
        if self.options.seed is not None:
            kwargs["seed"] = self.options.seed + task.sample
        model = prompt.answer_model(task.rubric, criteria)
        request_hash = content_hash({
            "request": {**kwargs, "messages": prompt.hashable_messages(messages)},
            "mode": mode, "format": format_digest(model), "sample": task.sample})
        return PreparedRequest(kwargs, model, criteria, mode, request_hash,
                               cut="; ".join(c.describe() for c in cuts) or None,
                               reads_cut_text=task.rubric.applies_to == "verdict")

    def cost_of(self, usage: TokenUsage | None) -> float | None:
        return usage_cost(self.price, usage)

    def estimate(self, task: JudgeTask) -> CallEstimate | None:
        """What the task's call would cost, sending nothing: cached when its answer is in the
        cache; None when no criterion applies (no call)."""
        request = self.prepare(task)
        if request is None:
            return None
        if self.cache is not None and self.options.use_cache and \
                self.cache.get(request.request_hash) is not None:
            return CallEstimate(cached=True)
        prompt, completion = estimate_tokens(request, detail=self.options.image_detail)
        return CallEstimate(prompt_tokens=prompt, completion_tokens=completion,
                            cost_usd=tokens_cost(self.price, prompt, completion))

    async def _send(self, request: PreparedRequest) -> tuple[dict[str, Any], str | None]:
        """POST the chat-completions body; return the raw answer body and the provider the
        response's headers name (`served_by`).

        The body is what `chat.completions.parse(response_format=AnswerModel)` sends (the same
        strict json_schema, built once per model by `structured_output_format`), posted with the
        same client, so the SDK's retries, timeouts, auth and typed errors all apply. The typed
        `parse`/`create` methods were measured slower: they re-walk every message part and the
        whole schema on each call (2-3 ms of CPU), which made 1,500 concurrent calls CPU-bound
        (benchmarks/judging.py: 1.11x against 1.09x of the concurrency bound). The answer is
        validated into the same pydantic model by `interpret_answer`, criterion by criterion, so
        that one malformed criterion does not discard the others (parse raises on the whole)."""
        body = {**request.kwargs,
                "response_format": response_format(request.mode, request.answer_model)}
        # Serialised here, in Rust (pydantic-core), to the bytes the SDK sends as they are: its
        # own encoder (json.dumps with a Python default hook) and its copy of the options cost
        # more on a body that carries two base64 figures.
        content = pydantic_core.to_json(body)
        async with self.endpoint.lease() as client:
            response = await client.post(self.endpoint.chat_completions_url, content=content,
                                         cast_to=httpx2.Response)
        return pydantic_core.from_json(response.content), served_by(response.headers)

    async def __call__(self, task: JudgeTask) -> JudgeResult:
        request = self.prepare(task)
        if request is None:
            return JudgeResult(answers=[], error="no criterion applies to this claim")
        cached = self.cache.get(request.request_hash) if self.cache is not None and \
            self.options.use_cache else None
        if cached is not None:
            return self._result(request, cached["body"], latency=cached.get("latency_s"),
                                cached=True, provider=cached.get("served_by"))
        # Only the call itself holds one of the run's slots: building the prompt and reading
        # the answer happen outside, so that the slots stay busy with calls.
        async with self.limiter:
            if self.budget is not None and self.budget.exhausted:
                return JudgeResult(answers=unscored(request.criteria, "budget"),
                                   request_hash=request.request_hash, error="budget",
                                   final=False, settings_used={"response_mode": request.mode})
            started = time.perf_counter()
            outcome = await self._call(task, request)
            if isinstance(outcome, JudgeResult):
                return outcome
            request, (body, provider) = outcome
            latency = time.perf_counter() - started
            cost = self.cost_of(usage_of(body))
            if self.budget is not None:
                self.budget.charge(cost)
        # The slot is free as soon as the answer is here: the call waiting for it goes out
        # before this answer is cached and processed (the thread hop of the cache write, under
        # a busy thread pool, held slots idle at concurrency 64).
        await asyncio.sleep(0)
        # In a thread: the file system's calls (create, write, rename) then cost the event loop
        # nothing (they release the GIL), where they were a tenth of its time. Written before
        # the answer is processed: a crash loses at most the answers in flight or being written.
        if self.cache is not None:
            await asyncio.to_thread(self.cache.put, request.request_hash, {
                "model": self.model, "mode": request.mode, "latency_s": latency,
                "created": datetime.now(UTC).isoformat(), "body": body, "served_by": provider})
        return self._result(request, body, latency=latency, cached=False, provider=provider)

    async def _call(self, task: JudgeTask, request: PreparedRequest
                    ) -> tuple[PreparedRequest, tuple[dict[str, Any], str | None]] | JudgeResult:
        """The answer body, or an unscored result saying why there is none."""
        # One attempt per response format left in the fallback chain (the SDK retries each).
        for _ in range(self.formats.left()):
            if request.mode != self.mode:
                # Prepared ahead, before another call found the format refused: re-built in the
                # format that works, rather than refused again (and the chain walked too far).
                request = self.prepare(task)  # type: ignore[assignment]
            try:
                return request, await self._send(request)
            except openai.BadRequestError as exc:
                if format_rejected(exc) and request.mode != self.mode:
                    continue  # another call fell back meanwhile: retry in its format
                if format_rejected(exc) and self.formats.fall_back(self.spec, request.mode):
                    request = self.prepare(task)  # type: ignore[assignment]
                    continue
                return self._failure(request, failure_reason(exc, spec=self.spec,
                                                             options=self.options))
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                return self._failure(request, failure_reason(exc, spec=self.spec,
                                                             options=self.options))
        return self._failure(request, "the endpoint rejected every response format")

    def _failure(self, request: PreparedRequest, reason: str) -> JudgeResult:
        return JudgeResult(answers=unscored(request.criteria, reason),
                           request_hash=request.request_hash, error=reason, final=False,
                           settings_used={"response_mode": request.mode})

    def _result(self, request: PreparedRequest, body: dict[str, Any], *,
                latency: float | None, cached: bool, provider: str | None = None
                ) -> JudgeResult:
        answers, reason = interpret_answer(body, request.criteria)
        answers = check_quotes(answers, request.kwargs["messages"])
        usage = usage_of(body)
        settings: dict[str, SettingValue] = {"response_mode": request.mode,
                                             **served(body, provider)}
        if request.cut is not None:
            settings["evidence_cut"] = request.cut
            if request.reads_cut_text:
                # What the model answered on a cut text is kept in the raw answer, never used.
                answers = unscored(request.criteria, f"evidence truncated: {request.cut}")
                reason = reason or f"evidence truncated: {request.cut}"
        return JudgeResult(answers=answers, request_hash=request.request_hash,
                           raw_answer=raw_answer(body),
                           usage=usage, latency_s=latency, cost_usd=self.cost_of(usage),
                           error=reason, cached=cached, settings_used=settings)


def estimate_tokens(request: PreparedRequest, *, detail: str) -> tuple[int, int]:
    """(prompt, completion) tokens expected for a request: about 4 characters a token."""
    return (prompt_tokens(request.kwargs["messages"], detail=detail),
            COMPLETION_TOKENS_PER_CRITERION * len(request.criteria))


def openai_judge(model: str, options: LLMOptions, *, budget: Budget | None = None,
                 prices: dict[str, Price] | None = None,
                 limiter: asyncio.Semaphore | None = None,
                 endpoint: EndpointClient | None = None) -> OpenAIJudge:
    return OpenAIJudge(model, options, cache=answer_cache(options), budget=budget,
                       prices=prices if prices is not None else load_prices(
                           options.prices, prices_file=options.prices_file),
                       limiter=limiter, endpoint=endpoint)
