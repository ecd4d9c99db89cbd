"""The OpenAI-compatible endpoint: how to reach it (`LLMOptions`), its HTTP connections
(`EndpointClient`, for the judges' concurrent calls and the extractor's), the response formats a
server may accept and the fallback between them (`FormatChain`), and the one map from what the
endpoint answered to what it means (`failure_reason`), with the cause of a connection that failed
read from the exception chain (`connection_cause`: refused, DNS, TLS; the
SDK's aiohttp transport reports every one of them as a timeout). The calls themselves are made
in `transport`, the check a run makes before its first call in `check`.

Retries are the SDK's: 408/409/429/5xx, timeouts and dropped connections, with exponential
backoff capped at 8 s, honouring Retry-After up to 60 s; other 4xx are not retried. What is left
after them is either a passing failure (a reason: the answer stays unscored and not final, so a
rerun tries again) or a configuration that no call can succeed with (`JudgeConfigError`: the run
stops rather than record the same failure on every claim).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import socket
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import httpx2

from judging.errors import RunStopped
from judging.hashing import content_hash
from judging.judges.prompt import DEFAULT_EVIDENCE_BUDGET

if TYPE_CHECKING:
    # Only for annotations: an offline run never imports the SDK (one second of CPU per
    # process); the functions that call it import it where they need it.
    import openai

log = logging.getLogger(__name__)

ResponseMode = Literal["json_schema", "json_object_schema", "json_object"]
#: `auto` walks this chain when a server rejects a response format (llama.cpp's server accepts
#: only json_object, with a schema; some servers accept only a plain json_object).
FALLBACK_CHAIN: tuple[ResponseMode, ...] = ("json_schema", "json_object_schema", "json_object")


class JudgeConfigError(RunStopped):
    """The judge cannot work at all (bad key, unknown model, no price for a budget): stop the run
    rather than record the same failure on every claim."""


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
    evidence_budget: int | None = DEFAULT_EVIDENCE_BUDGET
    """Characters of the participant's text (statement, justification, notes, logs, proof) one
    prompt carries at most; a justification that does not fit is cut with a notice, the cut is
    recorded and the criteria that read it are unscored (None: no limit)."""


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


# --- what the endpoint answered ---------------------------------------------------------------


def error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(exc.message)[:300]


def format_rejected(exc: openai.BadRequestError) -> bool:
    """Whether a 400 says the server does not take the response format (then the next format of
    the chain is tried), rather than rejecting the request itself."""
    text = error_message(exc).lower()
    return any(word in text for word in ("response_format", "json_schema", "json schema",
                                         "structured output", "schema"))


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it: `__cause__`, `__context__` and aiohttp's `os_error`."""
    found: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or any(item is seen for seen in found):
            continue
        found.append(item)
        todo += [item.__cause__, item.__context__, getattr(item, "os_error", None)]
    return found


def connection_cause(exc: BaseException, *, base_url: str | None) -> str | None:
    """What made a connection to the endpoint fail, in words, from the root of the exception
    chain: refused, DNS, TLS, a timeout; None when the chain does not say."""
    host = urlsplit(base_url or "https://api.openai.com/v1")
    where = f"{host.hostname}:{host.port or (443 if host.scheme == 'https' else 80)}"
    chain = _chain(exc)
    for item in chain:
        if isinstance(item, ConnectionRefusedError):
            return f"connection refused by {where} (nothing listens there)"
        if isinstance(item, socket.gaierror):
            return f"DNS: the host name {host.hostname!r} cannot be resolved"
        if isinstance(item, ssl.SSLCertVerificationError):
            return f"TLS: the certificate of {where} is not trusted ({item.verify_message})"
        if isinstance(item, ssl.SSLError):
            return f"TLS: the handshake with {where} failed ({item.reason or item})"
        if isinstance(item, ConnectionResetError):
            return f"the connection to {where} was reset"
    texts = " ".join(str(item) for item in chain).lower()
    if "certificate verify failed" in texts:
        return f"TLS: the certificate of {where} is not trusted"
    if "name or service not known" in texts or "nodename nor servname" in texts:
        return f"DNS: the host name {host.hostname!r} cannot be resolved"
    return None


def failure_reason(exc: openai.APIError, *, spec: str, options: LLMOptions) -> str:
    """The one map from an endpoint error (after the SDK's retries) to its meaning: the reason of
    a passing failure, or `JudgeConfigError` when no call can succeed (credentials refused, the
    model or the endpoint not found)."""
    import openai  # the SDK costs a second of start-up: loaded when used
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        raise JudgeConfigError(f"{spec}: the endpoint refused the credentials "
                               f"({exc.status_code}): {error_message(exc)}") from exc
    if isinstance(exc, openai.NotFoundError):
        raise JudgeConfigError(f"{spec}: not found at {endpoint_label(options.base_url)} (404): "
                               f"{error_message(exc)}") from exc
    if isinstance(exc, openai.BadRequestError):
        return f"the endpoint rejected the request (400): {error_message(exc)}"
    cause = connection_cause(exc, base_url=options.base_url) \
        if isinstance(exc, openai.APIConnectionError) else None
    if cause is not None:
        return f"could not reach the endpoint: {cause} ({options.max_retries} retries)"
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {options.timeout:g} s ({options.max_retries} retries)"
    if isinstance(exc, openai.APIStatusError):
        return (f"the endpoint failed ({exc.status_code}) after {options.max_retries} retries: "
                f"{error_message(exc)}")
    return f"could not reach the endpoint after {options.max_retries} retries: {exc}"


# --- response formats -------------------------------------------------------------------------


@functools.cache
def structured_output_format(model: type) -> dict[str, Any]:
    """The `response_format` that `chat.completions.parse(response_format=model)` sends, built once
    per answer model with the SDK's own strict-schema conversion (re-deriving it per call costs
    3+ ms of CPU)."""
    import openai  # the SDK costs a second of start-up: loaded when used
    schema = openai.pydantic_function_tool(model)["function"]["parameters"]
    return {"type": "json_schema",
            "json_schema": {"name": model.__name__, "strict": True, "schema": schema}}


@functools.cache
def format_digest(model: type) -> str:
    return content_hash(structured_output_format(model))


def response_format(mode: ResponseMode, model: type) -> dict[str, Any]:
    """The `response_format` of a request in `mode` for the answer model: the strict json_schema,
    or a json_object with (json_object_schema) or without the schema."""
    strict = structured_output_format(model)
    if mode == "json_schema":
        return strict
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": strict["json_schema"]["schema"]}
    return {"type": "json_object"}


class FormatChain:
    """The response formats to try, in order (one when --response-format fixes it), shared by
    every call of a judge or extractor: once the server rejects a format, later calls start
    from the next one."""

    def __init__(self, fixed: str):
        self.modes: tuple[ResponseMode, ...] = \
            FALLBACK_CHAIN if fixed == "auto" else (fixed,)  # type: ignore[assignment]
        self.index = 0

    @property
    def mode(self) -> ResponseMode:
        return self.modes[self.index]

    def left(self) -> int:
        """Formats not given up on yet (one attempt each)."""
        return len(self.modes) - self.index

    def fall_back(self, spec: str, rejected: ResponseMode) -> bool:
        """Move to the next format after the server rejected `rejected`; False at the end."""
        if self.index + 1 >= len(self.modes):
            return False
        self.index += 1
        log.warning("%s: the endpoint rejected response format %s; falling back to %s", spec,
                    rejected, self.mode)
        return True


# --- connections ------------------------------------------------------------------------------


@functools.cache
def _has_aiohttp() -> bool:
    try:
        import aiohttp  # noqa: F401 - the SDK's optional transport (openai[aiohttp])
    except ImportError:
        return False
    return True


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
        import openai  # the SDK costs a second of start-up: loaded when used
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
