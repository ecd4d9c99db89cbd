"""One structured answer per call through the judges' transport, for any pydantic answer model: the
same strict json_schema the SDK's `chat.completions.parse(response_format=...)` sends (with the
same JSON-mode fallback chain for servers such as llama.cpp's, `endpoint.FormatChain`), the same
map of endpoint errors (`endpoint.failure_reason`), the same `AnswerCache` on disk by request
hash, the same USD `Budget`, the SDK's own retries, and every piece of participant text wrapped by
`prompt.untrusted`.

It is what `judging run --extract openai:MODEL` hands to the logbook importer. Layering: intake
sits below judges and must not import it, so the importer (judging.intake.llm) owns the
extraction's instructions, answer model and quote checks, and receives this caller as a plain
callable (the `StructuredAsk` protocol there); the run stage builds it here and injects it. This
module knows nothing of logbooks, and the one wrapping of untrusted text stays in prompt.py.

The call is synchronous: the runner loads sources in a worker thread (`asyncio.to_thread`), and
each call runs the one async call loop (`transport.Transport.ask`) in the caller's own event-loop
thread (`transport.Portal`), so extraction calls do not hold up the judges' event loop.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

import judging.judges.prompt as prompt
from judging.hashing import content_hash
from judging.judges.openai.answers import strip_fences
from judging.judges.openai.cache import AnswerCache, answer_cache
from judging.judges.openai.check import check_endpoint
from judging.judges.openai.cost import (
    Budget,
    Price,
    load_prices,
    prompt_tokens,
    tokens_cost,
)
from judging.judges.openai.endpoint import (
    EndpointClient,
    JudgeConfigError,
    LLMOptions,
    ResponseMode,
    response_format,
)
from judging.judges.openai.transport import (
    ALL_FORMATS_REJECTED,
    BUDGET,
    NOT_SENT,
    Exchange,
    Portal,
    Request,
    Transport,
)


@dataclass
class StructuredAnswer:
    """The parsed answer (a dict that validated into the answer model), or why there is none."""

    model: str
    parsed: dict[str, Any] | None = None
    request_hash: str | None = None
    cached: bool = False
    error: str | None = None
    cost_usd: float | None = None


@dataclass
class CallStats:
    calls: int = 0
    cached: int = 0
    errors: int = 0
    budget: int = 0
    dry: int = 0
    """Requests a dry run (`--estimate`) did not send, and their expected tokens."""
    dry_prompt_tokens: int = 0
    dry_completion_tokens: int = 0

    def dry_cost(self, price: Price | None) -> float | None:
        return tokens_cost(price, self.dry_prompt_tokens, self.dry_completion_tokens)


#: Expected answer length of one structured extraction (five quoted fields), for estimates only.
EXTRACT_COMPLETION_TOKENS = 300


@dataclass
class StructuredCaller:
    """`openai:MODEL` for one structured answer per call (the extractor's `StructuredAsk`)."""

    model: str
    options: LLMOptions
    cache: AnswerCache | None = None
    budget: Budget | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    stats: CallStats = field(default_factory=CallStats)
    dry_run: bool = False
    """Answer from the cache only and count what would be sent (`judging run --estimate`)."""

    def __post_init__(self) -> None:
        if not self.model:
            raise JudgeConfigError("an openai extractor needs a model: openai:MODEL")
        self.endpoint = EndpointClient(self.options, connections=None)
        """Its own connections, in the portal's event loop (the extractor runs in the loading
        thread, not in the judges' loop)."""
        self.transport = Transport(self.spec, self.model, self.options, endpoint=self.endpoint,
                                   cache=self.cache, budget=self.budget, prices=self.prices,
                                   purpose="structured")
        self.price = self.transport.price
        self.portal = Portal()

    @property
    def spec(self) -> str:
        return f"openai:{self.model}"

    def dry_cost(self) -> float | None:
        """What the requests a dry run did not send would cost (None: the model has no price)."""
        return self.stats.dry_cost(self.price)

    def preflight(self) -> None:
        """The endpoint answers and knows the model (`check_endpoint`), else `JudgeConfigError`."""
        check_endpoint(self.options, self.model, spec=self.spec)

    def close(self) -> None:
        if self.portal.started:
            self.portal.call(self.endpoint.aclose)
        self.portal.close()

    def _request(self, system: str, instructions: str, documents: list[tuple[str, str]],
                 answer_model: type[BaseModel], mode: ResponseMode) -> Request:
        user = instructions + "\n\n" + "\n\n".join(prompt.untrusted(name, text)
                                                     for name, text in documents)
        if mode != "json_schema":
            user += ("\n\nAnswer with one JSON object following this schema:\n"
                     + prompt.schema_text(answer_model))
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": self.options.temperature, "max_tokens": self.options.max_tokens}
        if self.options.seed is not None:
            body["seed"] = self.options.seed
        request_hash = content_hash({
            "request": {**body, "response_format": response_format(mode, answer_model)},
            "mode": mode, "purpose": "structured"})
        return Request(body, answer_model, mode, request_hash)

    def __call__(self, *, system: str, instructions: str, documents: list[tuple[str, str]],
                 answer_model: type[BaseModel]) -> StructuredAnswer:
        """Ask once (the cache first); `documents` are (name, participant text) pairs, each sent
        inside an <untrusted-data> block."""
        def build(mode: ResponseMode) -> Request:
            return self._request(system, instructions, documents, answer_model, mode)

        exchange = self.portal.call(functools.partial(
            self.transport.ask, build(self.transport.mode), build, send=not self.dry_run))
        return self._answer(exchange, answer_model)

    def _answer(self, exchange: Exchange[Request], answer_model: type[BaseModel]
                ) -> StructuredAnswer:
        request_hash = exchange.request.request_hash
        self.stats.calls += exchange.sent
        if exchange.cached:
            self.stats.cached += 1
        elif exchange.error == NOT_SENT:
            self.stats.dry += 1
            self.stats.dry_prompt_tokens += prompt_tokens(exchange.request.body["messages"],
                                                          detail="low")
            self.stats.dry_completion_tokens += EXTRACT_COMPLETION_TOKENS
            return StructuredAnswer(self.model, request_hash=request_hash, error=NOT_SENT)
        elif exchange.error == BUDGET:
            self.stats.budget += 1
            return StructuredAnswer(self.model, request_hash=request_hash, error=BUDGET)
        elif exchange.error == ALL_FORMATS_REJECTED:
            return StructuredAnswer(self.model, error=ALL_FORMATS_REJECTED)
        elif exchange.error is not None:
            return self._failed(request_hash, exchange.error)
        assert exchange.body is not None
        result = self._read(exchange.body, answer_model, request_hash, cached=exchange.cached)
        result.cost_usd = exchange.cost_usd
        return result

    def _failed(self, request_hash: str, reason: str) -> StructuredAnswer:
        self.stats.errors += 1
        return StructuredAnswer(self.model, request_hash=request_hash, error=reason)

    def _read(self, body: dict[str, Any], answer_model: type[BaseModel], request_hash: str, *,
              cached: bool) -> StructuredAnswer:
        def failed(reason: str) -> StructuredAnswer:
            return StructuredAnswer(self.model, request_hash=request_hash, cached=cached,
                                    error=reason)

        choices = body.get("choices") if isinstance(body, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            return failed("malformed response from the endpoint (no choices)")
        message = choices[0].get("message") or {}
        if message.get("refusal"):
            return failed(f"the model refused: {str(message['refusal'])[:300]}")
        if choices[0].get("finish_reason") in ("length", "content_filter"):
            return failed(f"the answer was cut (finish_reason={choices[0]['finish_reason']})")
        content = message.get("content")
        if not isinstance(content, str) or not content:
            return failed("empty answer")
        try:
            parsed = answer_model.model_validate(json.loads(strip_fences(content)))
        except ValueError as exc:  # JSONDecodeError and ValidationError are ValueErrors
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            return failed(f"the answer does not fit the schema: {detail[:300]}")
        return StructuredAnswer(self.model, parsed=parsed.model_dump(), request_hash=request_hash,
                                cached=cached)


def structured_caller(spec: str, options: LLMOptions, *, budget: Budget | None = None
                      ) -> StructuredCaller:
    """`openai:MODEL` as a structured caller (the cache and prices as the judges use them)."""
    kind, _, model = spec.partition(":")
    if kind != "openai" or not model:
        raise JudgeConfigError(f"unknown extractor {spec!r}: use 'openai:MODEL'")
    return StructuredCaller(model, options, cache=answer_cache(options), budget=budget,
                            prices=load_prices(options.prices, prices_file=options.prices_file))
