"""LLM judges over any OpenAI-compatible endpoint (OpenAI, HF Inference Providers, vLLM, llama.cpp,
Ollama) through the `openai` SDK: structured outputs, a JSON-mode fallback, an answer cache, a budget.

Honesty rules: an answer that does not parse or validate, a refusal, a content-filter block or a
truncated answer leaves the criteria unscored with the reason, and the raw answer is kept. A failure
of the endpoint (after the SDK's own retries) leaves the line unscored and *not final*, so that a
rerun tries again. Retries are the SDK's: 408/409/429/5xx, timeouts and dropped connections, with
exponential backoff capped at 8 s, honouring Retry-After up to 60 s; other 4xx are not retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx2
import openai
import pydantic_core
from pydantic import ValidationError

from judging.atomic import write_text_atomic
from judging.errors import RunStopped
from judging.hashing import content_hash
from judging.judges import prompt
from judging.judges.base import JudgeResult, JudgeTask
from judging.models import (
    AnswerStatus,
    ConfidenceSource,
    CriterionAnswer,
    SettingValue,
    TokenUsage,
)
from judging.rubrics import Criterion, Rubric, Scale

log = logging.getLogger(__name__)

ResponseMode = Literal["json_schema", "json_object_schema", "json_object"]
#: `auto` walks this chain when a server rejects a response format (llama.cpp's server accepts
#: only json_object, with a schema; some servers accept only a plain json_object).
FALLBACK_CHAIN: tuple[ResponseMode, ...] = ("json_schema", "json_object_schema", "json_object")

#: USD per million tokens (input, output): OpenAI list prices, 2025. Extend with --price or the
#: JUDGING_PRICES file; a model without an entry has no cost recorded (and --max-cost refuses it).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
}


class JudgeConfigError(RunStopped):
    """The judge cannot work at all (bad key, unknown model, no price for a budget): stop the run
    rather than record the same failure on every claim."""


def load_prices(extra: dict[str, tuple[float, float]] | None = None, *,
                prices_file: Path | None = None) -> dict[str, tuple[float, float]]:
    """Default prices, then `prices_file` (YAML {model: {input: X, output: Y}}; the CLI's
    --prices-file, env JUDGING_PRICES), then `extra` (from --price)."""
    prices = dict(DEFAULT_PRICES)
    path = prices_file
    if path:
        from judging._yaml import read_document
        data = read_document(Path(path), error_class=JudgeConfigError).data or {}
        try:
            for model, entry in data.items():
                prices[str(model)] = (float(entry["input"]), float(entry["output"]))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise JudgeConfigError(f"{path}: prices must map a model to {{input: USD per 1M "
                                   f"tokens, output: USD per 1M tokens}}") from exc
    prices.update(extra or {})
    return prices


def default_cache_dir() -> Path:
    env = os.environ.get("JUDGING_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judging" / "answers"


class AnswerCache:
    """LLM answers on disk, one JSON file per request hash (the full request: messages with
    images, model, settings, sample index). Only answers the endpoint actually gave are stored."""

    def __init__(self, root: Path):
        self.root = root

    def _path(self, request_hash: str) -> Path:
        digest = request_hash.split(":", 1)[-1]
        return self.root / digest[:2] / f"{digest}.json"

    def get(self, request_hash: str) -> dict[str, Any] | None:
        path = self._path(request_hash)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring an unreadable cache entry %s (%s)", path, exc)
            return None
        return entry if isinstance(entry, dict) and entry.get("request_hash") == request_hash \
            else None

    def put(self, request_hash: str, entry: dict[str, Any]) -> None:
        path = self._path(request_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({"request_hash": request_hash, **entry}))


class Budget:
    """Stops new calls once `limit` USD is spent (calls already in flight still finish)."""

    def __init__(self, limit: float):
        self.limit = limit
        self.spent = 0.0

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.limit

    def charge(self, cost: float | None) -> None:
        self.spent += cost or 0.0


@dataclass
class LLMOptions:
    """How LLM judges call their endpoint. The API key is used, never recorded."""

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 2000
    timeout: float = 60.0
    max_retries: int = 4
    seed: int | None = 0
    """Sent as seed + sample index, so that samples are distinct requests."""
    images: bool = True
    image_detail: Literal["low", "high", "auto"] = "low"
    response_format: Literal["auto", "json_schema", "json_object_schema", "json_object"] = "auto"
    cache_dir: Path | None = None
    use_cache: bool = True
    max_cost: float | None = None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    prices_file: Path | None = None
    """A YAML file of prices per model (USD per million tokens)."""


def client_key(options: LLMOptions) -> str:
    """The API key to give the SDK: the one configured, else a placeholder for a local server
    (vLLM, llama.cpp, Ollama often need no key); no key and no base URL is a config error."""
    if options.api_key:
        return options.api_key
    if not options.base_url:
        raise JudgeConfigError("no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local "
                               "server that needs none)")
    return "not-needed"


def endpoint_label(base_url: str | None) -> str:
    """The endpoint without credentials, query or fragment (safe to record)."""
    if not base_url:
        return "https://api.openai.com/v1"
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


# --- reading answers -------------------------------------------------------------------------


def strip_fences(content: str) -> str:
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text


def _unscored(criteria: Sequence[Criterion], reason: str) -> list[CriterionAnswer]:
    return [CriterionAnswer(criterion_id=c.id, status=AnswerStatus.unscored, reason=reason)
            for c in criteria]


def interpret_answer(body: dict[str, Any], criteria: Sequence[Criterion]
                     ) -> tuple[list[CriterionAnswer], str | None]:
    """Turn a chat-completion body into per-criterion answers; (answers, line-level reason).

    Each criterion is validated on its own: one malformed criterion is unscored, the others keep
    their answers. Nothing is ever defaulted.
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        reason = "malformed response from the endpoint (no choices)"
        return _unscored(criteria, reason), reason
    choice = choices[0]
    message = choice.get("message") or {}
    finish = choice.get("finish_reason")
    refusal = message.get("refusal")
    content = message.get("content")
    reason: str | None = None
    if refusal:
        reason = f"the judge refused: {str(refusal)[:300]}"
    elif finish == "content_filter":
        reason = "the answer was blocked by the provider's content filter"
    elif finish == "length":
        reason = "truncated answer (finish_reason=length): raise --max-tokens"
    elif not content or not isinstance(content, str):
        reason = "empty answer"
    if reason:
        return _unscored(criteria, reason), reason
    try:
        data = json.loads(strip_fences(content))
    except ValueError as exc:
        reason = f"the answer is not valid JSON ({exc.msg} at char {exc.pos})"
        return _unscored(criteria, reason), reason
    if not isinstance(data, dict):
        reason = "the answer is not a JSON object"
        return _unscored(criteria, reason), reason
    known = {c.id for c in criteria}
    if not known & set(data):
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        reason = f"the answer does not follow the schema (keys: {keys})"
        return _unscored(criteria, reason), reason
    answers = [_criterion_answer(c, data.get(c.id)) for c in criteria]
    if not any(a.status is AnswerStatus.scored for a in answers):
        example = next(a for a in answers)
        reason = (f"no criterion in the answer could be used ({example.criterion_id}: "
                  f"{example.reason})")
    return answers, reason


def _criterion_answer(criterion: Criterion, raw: object) -> CriterionAnswer:
    def unscored(reason: str) -> CriterionAnswer:
        return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                               reason=reason)

    if raw is None:
        return unscored("missing from the answer")
    try:
        parsed = prompt.criterion_model(criterion).model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "answer"
        return unscored(f"does not fit the schema ({where}: {first['msg']})")
    rationale = parsed.rationale.strip()  # type: ignore[attr-defined]
    answer = parsed.answer  # type: ignore[attr-defined]
    confidence = parsed.confidence  # type: ignore[attr-defined]
    if answer == prompt.CANNOT_TELL:
        return unscored(f"the judge could not tell: {rationale[:300]}")
    if not 0.0 <= confidence <= 1.0:
        return unscored(f"confidence {confidence} is outside [0, 1]")
    value: bool | int = (answer == "yes") if criterion.scale is Scale.binary else int(answer)
    return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.scored, value=value,
                           passed=criterion.passes(value), rationale=rationale,
                           confidence=confidence,
                           confidence_source=ConfidenceSource.self_reported)


def usage_of(body: dict[str, Any]) -> TokenUsage | None:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    try:
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
    except (TypeError, ValueError):
        return None
    return TokenUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                      total_tokens=int(usage.get("total_tokens") or
                                       prompt_tokens + completion_tokens))


# --- the judge -------------------------------------------------------------------------------


@functools.cache
def structured_output_format(model: type) -> dict[str, Any]:
    """The `response_format` that `chat.completions.parse(response_format=model)` sends, built once
    per answer model with the SDK's own strict-schema conversion (re-deriving it per call costs
    3+ ms of CPU)."""
    schema = openai.pydantic_function_tool(model)["function"]["parameters"]
    return {"type": "json_schema",
            "json_schema": {"name": model.__name__, "strict": True, "schema": schema}}


@functools.cache
def _has_aiohttp() -> bool:
    try:
        import aiohttp  # noqa: F401 - the SDK's optional transport (openai[aiohttp])
    except ImportError:
        return False
    return True


@functools.cache
def _format_digest(model: type) -> str:
    return content_hash(structured_output_format(model))


@dataclass(frozen=True)
class PreparedRequest:
    kwargs: dict[str, Any]
    """What is sent (besides the response format, which depends on the mode)."""
    answer_model: type
    criteria: list[Criterion]
    mode: ResponseMode
    request_hash: str


#: Connections per HTTP pool of an endpoint client without aiohttp (see EndpointClient).
CONNECTIONS_PER_POOL = 8


class EndpointClient:
    """The HTTP connections to the endpoint for every LLM judge of a run: `connections` in all
    (the run's --concurrency, the calls in flight), kept alive between calls and set up once,
    not per call or per judge. Built on first use (inside the event loop), closed by `aclose`.

    One `AsyncOpenAI` client over the SDK's aiohttp transport (`openai[aiohttp]`, which the SDK
    recommends for concurrency): its C HTTP parser and connection pool cost a call about 0.8 ms
    of CPU less than the default httpx2/httpcore transport (benchmarks/judging.py at
    concurrency 64, where the run's event loop is the bound). Without aiohttp, clients of at
    most CONNECTIONS_PER_POOL httpx2 connections each: httpcore probes every idle connection of
    a pool's socket on each request and each response (`has_expired`), so one pool of 64
    connections cost 3 ms of CPU a call where pools of 8 cost a few tenths. A call takes the
    least busy client, which always has a free connection: the calls in flight never exceed
    the connections in all (the run's limiter), so some pool is below its size."""

    def __init__(self, options: LLMOptions, *, connections: int | None):
        self.options = options
        self.connections = max(1, connections) if connections is not None else None
        """None: one client with the SDK's default pool (a judge made alone, whose limiter is
        not known)."""
        self._clients: list[openai.AsyncOpenAI] = []
        self._busy: list[int] = []
        self.chat_completions_url = "/chat/completions"
        """Where calls are posted (absolute once the clients are built)."""

    def _make(self, size: int | None, ssl_context: Any = None, *,
              aiohttp: bool = False) -> openai.AsyncOpenAI:
        http_client = None
        if size is not None:
            limits = httpx2.Limits(max_connections=size, max_keepalive_connections=size)
            make = openai.DefaultAioHttpClient if aiohttp else openai.DefaultAsyncHttpxClient
            http_client = make(limits=limits, timeout=self.options.timeout,
                               **({} if aiohttp else {"verify": ssl_context}))
        return openai.AsyncOpenAI(base_url=self.options.base_url,
                                  api_key=client_key(self.options),
                                  timeout=self.options.timeout,
                                  max_retries=self.options.max_retries, http_client=http_client)

    def _build(self) -> None:
        if self.connections is None:
            self._clients = [self._make(None)]
        elif _has_aiohttp():
            self._clients = [self._make(self.connections, aiohttp=True)]
        else:
            pools = -(-self.connections // CONNECTIONS_PER_POOL)
            sizes = [self.connections // pools + (i < self.connections % pools)
                     for i in range(pools)]
            # One TLS context for every pool (as each would make it): loading the CA bundle
            # costs 40 ms of CPU a pool.
            context = httpx2.create_ssl_context()
            self._clients = [self._make(size, context) for size in sizes]
        self._busy = [0] * len(self._clients)
        # Absolute, made once: the SDK merges a relative path into its base URL on every call
        # (two URL parses, 0.4 ms of CPU a call at concurrency 64); an absolute one it parses once.
        base = self._clients[0].base_url
        if not base.query:  # (a base URL with a query string is left to the SDK to merge)
            self.chat_completions_url = f"{base}chat/completions"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The first client (for calls outside `lease`)."""
        if not self._clients:
            self._build()
        return self._clients[0]

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[openai.AsyncOpenAI]:
        """The least busy client, for one call."""
        if not self._clients:
            self._build()
        index = min(range(len(self._busy)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            yield self._clients[index]
        finally:
            self._busy[index] -= 1

    async def aclose(self) -> None:
        clients, self._clients, self._busy = self._clients, [], []
        for client in clients:
            await client.close()


class OpenAIJudge:
    """`openai:MODEL`: one chat-completions call per (claim, rubric, sample, figure order)."""

    def __init__(self, model: str, options: LLMOptions, *, cache: AnswerCache | None,
                 budget: Budget | None, prices: dict[str, tuple[float, float]],
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
        self.price = prices.get(model)
        if budget is not None and self.price is None:
            raise JudgeConfigError(f"--max-cost needs a price for {model}: give --price "
                                   f"{model}=INPUT:OUTPUT (USD per million tokens)")
        fixed = options.response_format
        self._modes: tuple[ResponseMode, ...] = FALLBACK_CHAIN if fixed == "auto" else (fixed,)
        self._mode_index = 0
        self.answer_settings: dict[str, SettingValue] = {
            "temperature": options.temperature, "max_tokens": options.max_tokens,
            "seed": options.seed, "images": options.images, "image_detail": options.image_detail,
            "response_format": fixed}
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
        return self._modes[self._mode_index]

    def prepare(self, task: JudgeTask, *, mode: ResponseMode | None = None
                ) -> PreparedRequest | None:
        """The exact request for a task (None when no criterion applies to the claim)."""
        criteria = prompt.applicable_criteria(task.rubric, task.claim, task.signals)
        if not criteria:
            return None
        mode = mode or self.mode
        options = prompt.PromptOptions(images=self.options.images,
                                       image_detail=self.options.image_detail, swapped=task.swapped,
                                       schema_in_prompt=mode != "json_schema")
        messages = prompt.build_messages(task, criteria, options)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.options.temperature,
                                  "max_tokens": self.options.max_tokens}
        if self.options.seed is not None:
            kwargs["seed"] = self.options.seed + task.sample
        model = prompt.answer_model(task.rubric, criteria)
        request_hash = content_hash({
            "request": {**kwargs, "messages": prompt.hashable_messages(messages)},
            "mode": mode, "format": _format_digest(model), "sample": task.sample})
        return PreparedRequest(kwargs, model, criteria, mode, request_hash)

    def cost_of(self, usage: TokenUsage | None) -> float | None:
        if usage is None or self.price is None:
            return None
        return (usage.prompt_tokens * self.price[0]
                + usage.completion_tokens * self.price[1]) / 1_000_000

    async def _send(self, request: PreparedRequest) -> dict[str, Any]:
        """POST the chat-completions body and return the raw answer body.

        The body is what `chat.completions.parse(response_format=AnswerModel)` sends (the same
        strict json_schema, built once per model by `structured_output_format`), posted with the
        same client, so the SDK's retries, timeouts, auth and typed errors all apply. The typed
        `parse`/`create` methods were measured slower: they re-walk every message part and the
        whole schema on each call (2-3 ms of CPU), which made 1,500 concurrent calls CPU-bound
        (benchmarks/judging.py: 1.11x against 1.09x of the concurrency bound). The answer is
        validated into the same pydantic model by `interpret_answer`, criterion by criterion, so
        that one malformed criterion does not discard the others (parse raises on the whole)."""
        body = dict(request.kwargs)
        if request.mode == "json_schema":
            body["response_format"] = structured_output_format(request.answer_model)
        else:
            response_format: dict[str, Any] = {"type": "json_object"}
            if request.mode == "json_object_schema":
                response_format["schema"] = \
                    structured_output_format(request.answer_model)["json_schema"]["schema"]
            body["response_format"] = response_format
        # Serialised here, in Rust (pydantic-core), to the bytes the SDK sends as they are: its
        # own encoder (json.dumps with a Python default hook) and its copy of the options cost
        # more on a body that carries two base64 figures.
        content = pydantic_core.to_json(body)
        async with self.endpoint.lease() as client:
            response = await client.post(self.endpoint.chat_completions_url, content=content,
                                         cast_to=httpx2.Response)
        return pydantic_core.from_json(response.content)

    async def __call__(self, task: JudgeTask) -> JudgeResult:
        request = self.prepare(task)
        if request is None:
            return JudgeResult(answers=[], error="no criterion applies to this claim")
        cached = self.cache.get(request.request_hash) if self.cache is not None and \
            self.options.use_cache else None
        if cached is not None:
            return self._result(request, cached["body"], latency=cached.get("latency_s"),
                                cached=True)
        # Only the call itself holds one of the run's slots: building the prompt and reading
        # the answer happen outside, so that the slots stay busy with calls.
        async with self.limiter:
            if self.budget is not None and self.budget.exhausted:
                return JudgeResult(answers=_unscored(request.criteria, "budget"),
                                   request_hash=request.request_hash, error="budget",
                                   final=False, settings_used={"response_mode": request.mode})
            started = time.perf_counter()
            outcome = await self._call(task, request)
            if isinstance(outcome, JudgeResult):
                return outcome
            request, body = outcome
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
                "created": datetime.now(UTC).isoformat(), "body": body})
        return self._result(request, body, latency=latency, cached=False)

    async def _call(self, task: JudgeTask, request: PreparedRequest
                    ) -> tuple[PreparedRequest, dict[str, Any]] | JudgeResult:
        """The answer body, or an unscored result saying why there is none."""
        # One attempt per response format left in the fallback chain (the SDK retries each).
        for _ in range(len(self._modes) - self._mode_index):
            if request.mode != self.mode:
                # Prepared ahead, before another call found the format refused: re-built in the
                # format that works, rather than refused again (and the chain walked too far).
                request = self.prepare(task)  # type: ignore[assignment]
            try:
                return request, await self._send(request)
            except openai.BadRequestError as exc:
                if self._format_rejected(exc) and request.mode != self.mode:
                    continue  # another call fell back meanwhile: retry in its format
                if self._format_rejected(exc) and self._mode_index + 1 < len(self._modes):
                    self._mode_index += 1
                    log.warning("%s: the endpoint rejected response format %s; falling back to "
                                "%s", self.spec, request.mode, self.mode)
                    request = self.prepare(task)  # type: ignore[assignment]
                    continue
                return self._failure(request, f"the endpoint rejected the request (400): "
                                              f"{error_message(exc)}")
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise JudgeConfigError(f"{self.spec}: the endpoint refused the credentials "
                                       f"({exc.status_code}): {error_message(exc)}") from exc
            except openai.NotFoundError as exc:
                raise JudgeConfigError(f"{self.spec}: not found at "
                                       f"{endpoint_label(self.options.base_url)} (404): "
                                       f"{error_message(exc)}") from exc
            except openai.APITimeoutError:
                return self._failure(request, f"timed out after {self.options.timeout:g} s "
                                              f"({self.options.max_retries} retries)")
            except openai.APIConnectionError as exc:
                return self._failure(request, f"could not reach the endpoint after "
                                              f"{self.options.max_retries} retries: {exc}")
            except openai.APIStatusError as exc:
                return self._failure(request, f"the endpoint failed ({exc.status_code}) after "
                                              f"{self.options.max_retries} retries: "
                                              f"{error_message(exc)}")
        return self._failure(request, "the endpoint rejected every response format")

    @staticmethod
    def _format_rejected(exc: openai.BadRequestError) -> bool:
        text = error_message(exc).lower()
        return any(word in text for word in ("response_format", "json_schema", "json schema",
                                             "structured output", "schema"))

    def _failure(self, request: PreparedRequest, reason: str) -> JudgeResult:
        return JudgeResult(answers=_unscored(request.criteria, reason),
                           request_hash=request.request_hash, error=reason, final=False,
                           settings_used={"response_mode": request.mode})

    def _result(self, request: PreparedRequest, body: dict[str, Any], *,
                latency: float | None, cached: bool) -> JudgeResult:
        answers, reason = interpret_answer(body, request.criteria)
        usage = usage_of(body)
        message = ((body.get("choices") or [{}])[0] or {}).get("message") or {} \
            if isinstance(body, dict) else {}
        raw = message.get("content") if isinstance(message, dict) else None
        if raw is None and isinstance(message, dict) and message.get("refusal"):
            raw = json.dumps({"refusal": message["refusal"]})
        return JudgeResult(answers=answers, request_hash=request.request_hash,
                           raw_answer=raw if raw is not None else json.dumps(body)[:20000],
                           usage=usage, latency_s=latency, cost_usd=self.cost_of(usage),
                           error=reason, cached=cached,
                           settings_used={"response_mode": request.mode})


#: Expected answer length per criterion (a rationale of two or three sentences plus the JSON
#: around it), for estimates only.
COMPLETION_TOKENS_PER_CRITERION = 150


def image_tokens(detail: str, width: int = 512, height: int = 512) -> int:
    """OpenAI's documented image cost: 85 tokens at low detail, else 85 + 170 per 512-px tile."""
    if detail == "low":
        return 85
    tiles = -(-width // 512) * -(-height // 512)
    return 85 + 170 * tiles


def estimate_tokens(request: PreparedRequest, *, detail: str) -> tuple[int, int]:
    """(prompt, completion) tokens expected for a request: about 4 characters a token."""
    chars = 0
    images = 0
    for message in request.kwargs["messages"]:
        content = message["content"]
        if isinstance(content, str):
            chars += len(content)
            continue
        for part in content:
            if part["type"] == "text":
                chars += len(part["text"])
            else:
                images += 1
    prompt_tokens = chars // 4 + images * image_tokens(detail)
    return prompt_tokens, COMPLETION_TOKENS_PER_CRITERION * len(request.criteria)


def error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(exc.message)[:300]


def openai_judge(model: str, options: LLMOptions, *, budget: Budget | None = None,
                 prices: dict[str, tuple[float, float]] | None = None,
                 limiter: asyncio.Semaphore | None = None,
                 endpoint: EndpointClient | None = None) -> OpenAIJudge:
    cache = AnswerCache(options.cache_dir or default_cache_dir()) if options.use_cache else None
    return OpenAIJudge(model, options, cache=cache, budget=budget,
                       prices=prices if prices is not None else load_prices(
                           options.prices, prices_file=options.prices_file),
                       limiter=limiter, endpoint=endpoint)
