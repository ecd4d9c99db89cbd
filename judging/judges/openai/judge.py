"""LLM judges over any OpenAI-compatible endpoint (OpenAI, HF Inference Providers, vLLM, llama.cpp,
Ollama) through the `openai` SDK: structured outputs with the JSON-mode fallback (`endpoint`), the
answer cache (`cache`), the budget and prices (`cost`), and answers read criterion by criterion
(`answers`).

A failure of the endpoint (after the SDK's own retries) leaves the line unscored and *not final*,
so that a rerun tries again; a configuration no call can succeed with stops the run.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import judging.judges.prompt as prompt
from judging.hashing import content_hash
from judging.judges.base import CallEstimate, JudgeResult, JudgeTask
from judging.judges.openai.answers import (
    check_quotes,
    interpret_answer,
    raw_answer,
    unscored,
    usage_of,
)
from judging.judges.openai.cache import AnswerCache, answer_cache
from judging.judges.openai.check import check_endpoint
from judging.judges.openai.cost import (
    COMPLETION_TOKENS_PER_CRITERION,
    Budget,
    Price,
    load_prices,
    prompt_tokens,
    tokens_cost,
    usage_cost,
)
from judging.judges.openai.endpoint import (
    EndpointClient,
    JudgeConfigError,
    LLMOptions,
    ResponseMode,
    endpoint_label,
    format_digest,
)
from judging.judges.openai.transport import ALL_FORMATS_REJECTED, Exchange, Request, Transport
from judging.models import SettingValue, TokenUsage
from judging.rubrics import Criterion, Rubric

if TYPE_CHECKING:
    # Only for annotations: an offline run never imports the SDK (one second of CPU per
    # process); the functions that call it import it where they need it.
    import openai


@dataclass(frozen=True)
class PreparedRequest(Request):
    """A judge's request: what is sent, and what reading its answer needs."""

    criteria: list[Criterion]
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
        fixed = options.response_format
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
        self.transport = Transport(self.spec, model, options, endpoint=self.endpoint,
                                   cache=cache, budget=budget, prices=prices)
        self.price = self.transport.price

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

    def preflight(self) -> None:
        """The endpoint answers and knows the model (`check_endpoint`), else `JudgeConfigError`."""
        check_endpoint(self.options, self.model, spec=self.spec)

    async def close(self) -> None:
        """Close the HTTP connections (before the event loop ends), if this judge owns them."""
        if self._owns_endpoint:
            await self.endpoint.aclose()

    @property
    def mode(self) -> ResponseMode:
        return self.transport.mode

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
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "temperature": self.options.temperature,
                                "max_tokens": self.options.max_tokens}
        if self.options.seed is not None:
            body["seed"] = self.options.seed + task.sample
        model = prompt.answer_model(task.rubric, criteria)
        request_hash = content_hash({
            "request": {**body, "messages": prompt.hashable_messages(messages)},
            "mode": mode, "format": format_digest(model), "sample": task.sample})
        return PreparedRequest(body, model, mode, request_hash, criteria,
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
        if self.transport.cached(request) is not None:
            return CallEstimate(cached=True)
        prompt, completion = estimate_tokens(request, detail=self.options.image_detail)
        return CallEstimate(prompt_tokens=prompt, completion_tokens=completion,
                            cost_usd=tokens_cost(self.price, prompt, completion))

    async def __call__(self, task: JudgeTask) -> JudgeResult:
        request = self.prepare(task)
        if request is None:
            return JudgeResult(answers=[], error="no criterion applies to this claim")
        exchange = await self.transport.ask(
            request, lambda mode: self.prepare(task, mode=mode),  # type: ignore[arg-type,return-value]
            limiter=self.limiter)
        request = exchange.request
        if exchange.body is None:
            reason = exchange.error or ALL_FORMATS_REJECTED
            return JudgeResult(answers=unscored(request.criteria, reason),
                               request_hash=request.request_hash, error=reason, final=False,
                               settings_used={"response_mode": request.mode})
        return self._result(exchange)

    def _result(self, exchange: Exchange[PreparedRequest]) -> JudgeResult:
        request, body = exchange.request, exchange.body
        assert body is not None
        answers, reason = interpret_answer(body, request.criteria)
        answers = check_quotes(answers, request.body["messages"])
        usage = usage_of(body)
        settings: dict[str, SettingValue] = {"response_mode": request.mode, **exchange.served}
        if request.cut is not None:
            settings["evidence_cut"] = request.cut
            if request.reads_cut_text:
                # What the model answered on a cut text is kept in the raw answer, never used.
                answers = unscored(request.criteria, f"evidence truncated: {request.cut}")
                reason = reason or f"evidence truncated: {request.cut}"
        return JudgeResult(answers=answers, request_hash=request.request_hash,
                           raw_answer=raw_answer(body),
                           usage=usage, latency_s=exchange.latency_s, cost_usd=self.cost_of(usage),
                           error=reason, cached=exchange.cached, settings_used=settings)


def estimate_tokens(request: PreparedRequest, *, detail: str) -> tuple[int, int]:
    """(prompt, completion) tokens expected for a request: about 4 characters a token."""
    return (prompt_tokens(request.body["messages"], detail=detail),
            COMPLETION_TOKENS_PER_CRITERION * len(request.criteria))


def openai_judge(model: str, options: LLMOptions, *, budget: Budget | None = None,
                 prices: dict[str, Price] | None = None,
                 limiter: asyncio.Semaphore | None = None,
                 endpoint: EndpointClient | None = None) -> OpenAIJudge:
    return OpenAIJudge(model, options, cache=answer_cache(options), budget=budget,
                       prices=prices if prices is not None else load_prices(
                           options.prices, prices_file=options.prices_file),
                       limiter=limiter, endpoint=endpoint)
