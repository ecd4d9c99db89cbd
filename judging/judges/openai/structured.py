"""One structured-output call through the judges' OpenAI-compatible machinery, for any pydantic
answer model: the same strict json_schema the SDK's `chat.completions.parse(response_format=...)`
sends (with the same JSON-mode fallback chain for servers such as llama.cpp's), the same
`AnswerCache` on disk by request hash, the same USD `Budget`, the SDK's own retries, and every
piece of participant text wrapped by `prompt.untrusted`.

It is what `judging run --extract openai:MODEL` hands to the logbook importer. Layering: intake
sits below judges and must not import it, so the importer (judging.intake.logbook.llm) owns the
extraction's instructions, answer model and quote checks, and receives this caller as a plain
callable (the `StructuredAsk` protocol there); the run stage builds it here and injects it. This
module knows nothing of logbooks, and the one wrapping of untrusted text stays in prompt.py.

The call is synchronous (the sync `openai.OpenAI` client): the runner loads sources in a worker
thread (`asyncio.to_thread`), so extraction calls do not hold up the judges' event loop.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx2
import openai
from pydantic import BaseModel, ValidationError

from judging.hashing import content_hash
from judging.judges import prompt
from judging.judges.llm import (
    FALLBACK_CHAIN,
    AnswerCache,
    Budget,
    JudgeConfigError,
    LLMOptions,
    ResponseMode,
    client_key,
    default_cache_dir,
    error_message,
    load_prices,
    strip_fences,
    structured_output_format,
    usage_of,
)

log = logging.getLogger(__name__)


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

    def dry_cost(self, price: tuple[float, float] | None) -> float | None:
        if price is None:
            return None
        return (self.dry_prompt_tokens * price[0]
                + self.dry_completion_tokens * price[1]) / 1_000_000


#: Expected answer length of one structured extraction (five quoted fields), for estimates only.
EXTRACT_COMPLETION_TOKENS = 300


@dataclass
class StructuredCaller:
    """`openai:MODEL` for one structured answer per call (the extractor's `StructuredAsk`)."""

    model: str
    options: LLMOptions
    cache: AnswerCache | None = None
    budget: Budget | None = None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    stats: CallStats = field(default_factory=CallStats)
    dry_run: bool = False
    """Answer from the cache only and count what would be sent (`judging run --estimate`)."""

    def __post_init__(self) -> None:
        if not self.model:
            raise JudgeConfigError("an openai extractor needs a model: openai:MODEL")
        self.price = self.prices.get(self.model)
        if self.budget is not None and self.price is None:
            raise JudgeConfigError(f"--max-cost needs a price for {self.model}: give --price "
                                   f"{self.model}=INPUT:OUTPUT (USD per million tokens)")
        fixed = self.options.response_format
        self._modes: tuple[ResponseMode, ...] = FALLBACK_CHAIN if fixed == "auto" else (fixed,)
        self._mode_index = 0
        self._client: openai.OpenAI | None = None

    @property
    def spec(self) -> str:
        return f"openai:{self.model}"

    @property
    def client(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai.OpenAI(base_url=self.options.base_url,
                                         api_key=client_key(self.options),
                                         timeout=self.options.timeout,
                                         max_retries=self.options.max_retries)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _messages(self, system: str, instructions: str, documents: list[tuple[str, str]],
                  answer_model: type[BaseModel], mode: ResponseMode) -> list[dict[str, Any]]:
        user = instructions + "\n\n" + "\n\n".join(prompt.untrusted(name, text)
                                                     for name, text in documents)
        if mode != "json_schema":
            user += ("\n\nAnswer with one JSON object following this schema:\n"
                     + prompt.schema_text(answer_model))
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _body(self, messages: list[dict[str, Any]], answer_model: type[BaseModel],
              mode: ResponseMode) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "temperature": self.options.temperature,
                                "max_tokens": self.options.max_tokens}
        if self.options.seed is not None:
            body["seed"] = self.options.seed
        strict = structured_output_format(answer_model)
        if mode == "json_schema":
            body["response_format"] = strict
        else:
            body["response_format"] = {"type": "json_object"}
            if mode == "json_object_schema":
                body["response_format"]["schema"] = strict["json_schema"]["schema"]
        return body

    def __call__(self, *, system: str, instructions: str, documents: list[tuple[str, str]],
                 answer_model: type[BaseModel]) -> StructuredAnswer:
        """Ask once (the cache first); `documents` are (name, participant text) pairs, each sent
        inside an <untrusted-data> block."""
        for _ in range(len(self._modes) - self._mode_index):
            mode = self._modes[self._mode_index]
            body = self._body(self._messages(system, instructions, documents, answer_model,
                                             mode), answer_model, mode)
            request_hash = content_hash({"request": body, "mode": mode,
                                         "purpose": "structured"})
            cached = self.cache.get(request_hash) if self.cache is not None \
                and self.options.use_cache else None
            if cached is not None:
                self.stats.cached += 1
                return self._read(cached["body"], answer_model, request_hash, cached=True)
            if self.dry_run:
                self.stats.dry += 1
                self.stats.dry_prompt_tokens += sum(len(m["content"]) for m in body["messages"]) // 4
                self.stats.dry_completion_tokens += EXTRACT_COMPLETION_TOKENS
                return StructuredAnswer(self.model, request_hash=request_hash,
                                        error="estimate: not sent")
            if self.budget is not None and self.budget.exhausted:
                self.stats.budget += 1
                return StructuredAnswer(self.model, request_hash=request_hash, error="budget")
            started = time.perf_counter()
            try:
                self.stats.calls += 1
                answer = self.client.post("/chat/completions", body=body,
                                          cast_to=httpx2.Response).json()
            except openai.BadRequestError as exc:
                text = error_message(exc).lower()
                if any(w in text for w in ("response_format", "json_schema", "json schema",
                                           "structured output", "schema")) \
                        and self._mode_index + 1 < len(self._modes):
                    self._mode_index += 1
                    log.warning("%s: the endpoint rejected response format %s; falling back "
                                "to %s", self.spec, mode, self._modes[self._mode_index])
                    continue
                return self._failed(request_hash, f"the endpoint rejected the request (400): "
                                                  f"{error_message(exc)}")
            except (openai.AuthenticationError, openai.PermissionDeniedError,
                    openai.NotFoundError) as exc:
                raise JudgeConfigError(f"{self.spec}: the endpoint refused the request "
                                       f"({exc.status_code}): {error_message(exc)}") from exc
            except openai.APIStatusError as exc:
                return self._failed(request_hash, f"the endpoint failed ({exc.status_code}) "
                                                  f"after {self.options.max_retries} retries")
            except openai.APIError as exc:
                return self._failed(request_hash, f"could not reach the endpoint after "
                                                  f"{self.options.max_retries} retries: {exc}")
            usage = usage_of(answer)
            cost = None if usage is None or self.price is None else (
                usage.prompt_tokens * self.price[0]
                + usage.completion_tokens * self.price[1]) / 1_000_000
            if self.budget is not None:
                self.budget.charge(cost)
            if self.cache is not None:
                self.cache.put(request_hash, {
                    "model": self.model, "mode": mode, "purpose": "structured",
                    "latency_s": time.perf_counter() - started,
                    "created": datetime.now(UTC).isoformat(), "body": answer})
            result = self._read(answer, answer_model, request_hash, cached=False)
            result.cost_usd = cost
            return result
        return StructuredAnswer(self.model, error="the endpoint rejected every response format")

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
    cache = AnswerCache(options.cache_dir or default_cache_dir()) if options.use_cache else None
    return StructuredCaller(model, options, cache=cache, budget=budget,
                            prices=load_prices(options.prices, prices_file=options.prices_file))
