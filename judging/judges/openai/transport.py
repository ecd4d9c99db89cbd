"""The one LLM call loop: every request to the endpoint goes through `post_chat` (the one place
that sends), and every answer a judge or the extractor asks for goes through `Transport.ask` (the
one place that looks in the answer cache, checks the budget, walks the response formats when the
server rejects one, maps what the endpoint answered to its meaning, charges the cost, stores the
answer and reads what served it).

Retries are the SDK's own (`LLMOptions.max_retries`, with its backoff and Retry-After): `ask`
makes one attempt per response format left in the fallback chain, a bounded loop, never more.

The extractor and the endpoint check are synchronous callers (the extractor runs in the loading
thread, the check before a run's first call, perhaps inside its event loop): they reach the same
async loop through `Portal`, an event loop in a thread of its own (anyio's blocking portal).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio.from_thread
import httpx2
import pydantic_core

from judging.judges.openai.answers import served, served_by, usage_of
from judging.judges.openai.cache import AnswerCache
from judging.judges.openai.cost import Budget, Price, model_price, usage_cost
from judging.judges.openai.endpoint import (
    EndpointClient,
    FormatChain,
    LLMOptions,
    ResponseMode,
    failure_reason,
    format_rejected,
    response_format,
)
from judging.models import SettingValue

if TYPE_CHECKING:
    # Only for annotations: an offline run never imports the SDK (one second of CPU per
    # process); the functions that call it import it where they need it.
    import openai

#: The reason of an answer a dry run (`judging run --estimate`) did not ask for.
NOT_SENT = "estimate: not sent"
#: The reason of an answer the budget stopped (a passing failure: a rerun with more budget asks).
BUDGET = "budget"
ALL_FORMATS_REJECTED = "the endpoint rejected every response format"


@dataclass(frozen=True)
class Request:
    """One request in one response format."""

    body: dict[str, Any]
    """What is sent, besides the response format (which `post_chat` adds for `mode`)."""
    answer_model: type
    mode: ResponseMode
    request_hash: str
    """The cache key (each caller hashes what makes its answer)."""


R = TypeVar("R", bound=Request)


@dataclass
class Exchange(Generic[R]):
    """What asking came to: the answer body and what served it, or why there is none."""

    request: R
    """The request last sent (or looked up): its format may differ from the first one's."""
    body: dict[str, Any] | None = None
    provider: str | None = None
    """The provider the response's headers named (`answers.served_by`)."""
    latency_s: float | None = None
    cost_usd: float | None = None
    """What this call cost (None for a cached answer: nothing was spent)."""
    cached: bool = False
    error: str | None = None
    sent: int = 0
    """Requests sent (one per response format tried)."""

    @property
    def served(self) -> dict[str, SettingValue]:
        """What the endpoint says served the answer: model, fingerprint, provider."""
        return served(self.body, self.provider) if self.body is not None else {}


async def post_chat(client: openai.AsyncOpenAI, url: str, body: dict[str, Any]
                    ) -> tuple[dict[str, Any], str | None]:
    """POST a chat-completions body; the answer body and the provider its headers name.

    The one place a request leaves for the endpoint (tests/test_structure.py counts them). The
    body is what `chat.completions.parse(response_format=AnswerModel)` sends (the same strict
    json_schema, built once per model by `structured_output_format`), posted with the SDK's
    client, so its retries, timeouts, auth and typed errors all apply. The typed `parse`/`create`
    methods were measured slower: they re-walk every message part and the whole schema on each
    call (2-3 ms of CPU), which made 1,500 concurrent calls CPU-bound (benchmarks/judging.py:
    1.11x against 1.09x of the concurrency bound); the answer is validated by the caller,
    criterion by criterion, so that one malformed criterion does not discard the others."""
    # Serialised here, in Rust (pydantic-core), to the bytes the SDK sends as they are: its own
    # encoder (json.dumps with a Python default hook) and its copy of the options cost more on a
    # body that carries two base64 figures.
    response = await client.post(url, content=pydantic_core.to_json(body),
                                 cast_to=httpx2.Response)
    return pydantic_core.from_json(response.content), served_by(response.headers)


class Transport:
    """Asking one model of an endpoint for answers: the cache, the budget, the response formats
    (shared by every call: once the server rejects a format, later calls start from the next),
    the error map and the record of what served each answer."""

    def __init__(self, spec: str, model: str, options: LLMOptions, *, endpoint: EndpointClient,
                 cache: AnswerCache | None, budget: Budget | None, prices: dict[str, Price],
                 purpose: str | None = None):
        self.spec, self.model, self.options = spec, model, options
        self.endpoint = endpoint
        self.cache = cache if options.use_cache else None
        self.budget = budget
        self.price = model_price(model, prices, budget=budget)
        """What the calls are charged at (None: no price known, no cost recorded); a budget
        without a price is refused here, for every caller."""
        self.purpose = purpose
        """Recorded in the cache entries of answers not a judge's ("structured")."""
        self.formats = FormatChain(options.response_format)

    @property
    def mode(self) -> ResponseMode:
        return self.formats.mode

    def cached(self, request: R) -> Exchange[R] | None:
        entry = self.cache.get(request.request_hash) if self.cache is not None else None
        if entry is None:
            return None
        return Exchange(request, entry["body"], entry.get("served_by"),
                        latency_s=entry.get("latency_s"), cached=True)

    async def ask(self, request: R, rebuild: Callable[[ResponseMode], R], *,
                  limiter: asyncio.Semaphore | None = None, send: bool = True) -> Exchange[R]:
        """The answer to `request` (the cache first), or why there is none; `rebuild` makes the
        same request in another response format. `send=False` (a dry run) only looks in the
        cache. Raises `JudgeConfigError` when no call can succeed (`failure_reason`)."""
        hit = self.cached(request)
        if hit is not None:
            return hit
        if not send:
            return Exchange(request, error=NOT_SENT)
        # Only the call itself holds one of the run's slots: building the prompt and reading
        # the answer happen outside, so that the slots stay busy with calls.
        async with limiter or contextlib.nullcontext():
            if self.budget is not None and self.budget.exhausted:
                return Exchange(request, error=BUDGET)
            started = time.perf_counter()
            outcome = await self._send(request, rebuild)
            if outcome.error is not None:
                return outcome
            outcome.latency_s = time.perf_counter() - started
            outcome.cost_usd = usage_cost(self.price, usage_of(outcome.body))
            if self.budget is not None:
                self.budget.charge(outcome.cost_usd)
        # The slot is free as soon as the answer is here: the call waiting for it goes out
        # before this answer is cached and processed (the thread hop of the cache write, under
        # a busy thread pool, held slots idle at concurrency 64).
        await asyncio.sleep(0)
        if self.cache is not None:
            # In a thread: the file system's calls (create, write, rename) then cost the event
            # loop nothing. Written before the answer is processed: a crash loses at most the
            # answers in flight or being written.
            await asyncio.to_thread(self.cache.put, outcome.request.request_hash, {
                "model": self.model, "mode": outcome.request.mode,
                **({"purpose": self.purpose} if self.purpose else {}),
                "latency_s": outcome.latency_s, "created": datetime.now(UTC).isoformat(),
                "body": outcome.body, "served_by": outcome.provider})
        return outcome

    async def _send(self, request: R, rebuild: Callable[[ResponseMode], R]) -> Exchange[R]:
        """One attempt per response format left in the fallback chain (the SDK retries each)."""
        import openai  # the SDK costs a second of start-up: loaded when used
        sent = 0
        for _ in range(self.formats.left()):
            if request.mode != self.mode:
                # Made ahead, before another call found the format refused: re-built in the
                # format that works, rather than refused again (and the chain walked too far).
                request = rebuild(self.mode)
            sent += 1
            try:
                async with self.endpoint.lease() as client:
                    body, provider = await post_chat(client, self.endpoint.chat_completions_url, {
                        **request.body,
                        "response_format": response_format(request.mode, request.answer_model)})
            except openai.BadRequestError as exc:
                if format_rejected(exc) and (request.mode != self.mode or
                                             self.formats.fall_back(self.spec, request.mode)):
                    continue  # in the format another call fell back to, or the next one
                return Exchange(request, error=self._reason(exc), sent=sent)
            except openai.APIError as exc:
                return Exchange(request, error=self._reason(exc), sent=sent)
            return Exchange(request, body, provider, sent=sent)
        return Exchange(request, error=ALL_FORMATS_REJECTED, sent=sent)

    def _reason(self, exc: openai.APIError) -> str:
        return failure_reason(exc, spec=self.spec, options=self.options)


class Portal:
    """An event loop in a thread of its own, for the synchronous callers of the async transport
    (anyio's blocking portal: its thread is a daemon, so a caller that is never closed does not
    hold up the interpreter's exit). Started on first use."""

    def __init__(self) -> None:
        self._stack: contextlib.ExitStack | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._lock = threading.Lock()
        """Several loading threads may call at once: one portal is started, not one each."""

    @property
    def started(self) -> bool:
        return self._portal is not None

    def call(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        with self._lock:
            if self._portal is None:
                self._stack = contextlib.ExitStack()
                self._portal = self._stack.enter_context(
                    anyio.from_thread.start_blocking_portal())
            portal = self._portal
        return portal.call(function, *args)

    def close(self) -> None:
        with self._lock:
            stack, self._stack, self._portal = self._stack, None, None
        if stack is not None:
            stack.close()
