"""The judges a spec can name: one table (`BACKENDS`) from a backend's name, the part of a spec
before ":", to the factories of its judge and, where it has one, its extractor (the structured
caller `--extract` hands to the logbook importer). `judging run`, `judging calibrate --retest`
and the endpoint check reach every backend through this table and the `Judge` protocol
(`preflight`, `close`): a new backend is one entry here and its own module under `judges/`.

What the judges of one run share (the LLM options, the budget, the bound on calls in flight and
the connections a backend keeps for all its judges) travels in a `JudgeContext`, which closes
what it made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from judging.errors import JudgingError
from judging.judges.base import Judge
from judging.judges.offline import offline_judge
from judging.judges.openai import (
    Budget,
    EndpointClient,
    JudgeConfigError,
    LLMOptions,
    StructuredCaller,
    openai_judge,
    structured_caller,
)


class UnknownJudgeSpec(JudgingError):
    """A --judge value that names no known judge."""


class Shared(Protocol):
    """Something a backend keeps for all its judges of a run (e.g. HTTP connections)."""

    def aclose(self) -> Awaitable[None]: ...


S = TypeVar("S", bound=Shared)


@dataclass
class JudgeContext:
    """What the judges of one run (or of one retest) share."""

    llm: LLMOptions = field(default_factory=LLMOptions)
    budget: Budget | None = None
    limiter: asyncio.Semaphore | None = None
    """The bound on calls in flight shared by the judges (--concurrency); None: each its own."""
    connections: int | None = None
    """The size of the connections a backend shares between its judges (the calls in flight);
    None: the client library's default."""
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)

    def shared(self, name: str, make: Callable[[], S]) -> S:
        """The backend's shared resource `name`, made on first use; closed by `close`."""
        if name not in self._shared:
            self._shared[name] = make()
        return self._shared[name]

    async def close(self) -> None:
        shared, self._shared = self._shared, {}
        for resource in shared.values():
            await resource.aclose()


@dataclass(frozen=True)
class Backend:
    usage: str
    """How a spec names it, for messages: "offline", "openai:MODEL"."""
    judge: Callable[[str, JudgeContext], Judge]
    """Makes a judge from the spec's part after ":" ("" when there is none)."""
    extractor: Callable[[str, JudgeContext], StructuredCaller] | None = None
    """Makes the run's LLM extractor from the same part, for a backend that has one."""


def _offline(argument: str, context: JudgeContext) -> Judge:
    if argument:
        raise UnknownJudgeSpec(f"unknown judge 'offline:{argument}': {_usage()}")
    return offline_judge()


def _openai(model: str, context: JudgeContext) -> Judge:
    # One HTTP connection pool for every openai judge of the run, sized to its call bound.
    endpoint = context.shared("openai", lambda: EndpointClient(
        context.llm, connections=context.connections))
    return openai_judge(model, context.llm, budget=context.budget, limiter=context.limiter,
                        endpoint=endpoint)


def _openai_extractor(model: str, context: JudgeContext) -> StructuredCaller:
    return structured_caller(f"openai:{model}", context.llm, budget=context.budget)


BACKENDS: dict[str, Backend] = {
    "offline": Backend("offline", _offline),
    "openai": Backend("openai:MODEL", _openai, _openai_extractor),
}


def _usage(*, extractors: bool = False) -> str:
    return "use " + " or ".join(repr(b.usage) for b in BACKENDS.values()
                                if b.extractor is not None or not extractors)


def make_judge(spec: str, context: JudgeContext | None = None) -> Judge:
    """Build a judge from its spec: `offline`, or `openai:MODEL` (any OpenAI-compatible
    endpoint, as the context's `llm` says; the CLI fills it from OPENAI_BASE_URL /
    OPENAI_API_KEY)."""
    name, _, argument = spec.partition(":")
    backend = BACKENDS.get(name)
    if backend is None:
        raise UnknownJudgeSpec(f"unknown judge {spec!r}: {_usage()}")
    return backend.judge(argument, context or JudgeContext())


def extracts(spec: str) -> bool:
    """Whether a judge spec's backend can also extract (`--extract` defaults to it)."""
    backend = BACKENDS.get(spec.partition(":")[0])
    return backend is not None and backend.extractor is not None


def make_extractor(spec: str, context: JudgeContext | None = None) -> StructuredCaller:
    """The run's LLM extractor (`--extract SPEC`), from a backend that has one."""
    name, _, argument = spec.partition(":")
    backend = BACKENDS.get(name)
    if backend is None or backend.extractor is None:
        raise JudgeConfigError(f"unknown extractor {spec!r}: {_usage(extractors=True)}")
    return backend.extractor(argument, context or JudgeContext())
