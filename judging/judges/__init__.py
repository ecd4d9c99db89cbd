"""Judges: async callables that answer a rubric's criteria for one claim.

Reads a `JudgeTask` (the claim, its measured signals and images, the rubric); gives a
`JudgeResult` (one answer per criterion, each scored or unscored with its reason, plus
provenance). The offline judge answers from signals and rule checks only; LLM judges talk to any
OpenAI-compatible endpoint through the one transport of `openai/` (structured outputs, cached,
budgeted; the logbook extractor's calls too); `panel` aggregates several
judges' lines on one claim (which line speaks for the AI is `rundir.speaking`'s to say).
"""

from __future__ import annotations

import asyncio

from judging.errors import JudgingError
from judging.judges.base import CallEstimate, Judge, JudgeResult, JudgeTask
from judging.judges.offline import OfflineJudge, offline_judge
from judging.judges.openai import (
    AnswerCache,
    Budget,
    EndpointClient,
    JudgeConfigError,
    LLMOptions,
    OpenAIJudge,
    StructuredAnswer,
    StructuredCaller,
    check_endpoint,
    openai_judge,
    structured_caller,
)
from judging.judges.panel import (
    AGGREGATION,
    aggregate_panel,
    order_consistency,
    panel_name,
)
from judging.judges.prompt import hold_images, read_images, release_images

__all__ = ["AGGREGATION", "AnswerCache", "Budget", "CallEstimate", "EndpointClient", "Judge",
           "JudgeConfigError", "JudgeResult", "JudgeTask",
           "LLMOptions", "OfflineJudge", "OpenAIJudge", "UnknownJudgeSpec", "aggregate_panel",
           "check_endpoint", "hold_images", "make_judge", "offline_judge",
           "openai_judge", "order_consistency", "panel_name", "read_images", "release_images",
           "StructuredAnswer", "StructuredCaller", "structured_caller"]


class UnknownJudgeSpec(JudgingError):
    """A --judge value that names no known judge."""


def make_judge(spec: str, *, llm: LLMOptions | None = None, budget: Budget | None = None,
               limiter: asyncio.Semaphore | None = None,
               endpoint: EndpointClient | None = None) -> Judge:
    """Build a judge from its spec: `offline`, or `openai:MODEL` (any OpenAI-compatible
    endpoint, as `llm` says; the CLI fills it from OPENAI_BASE_URL / OPENAI_API_KEY)."""
    if spec == "offline":
        return offline_judge()
    kind, _, model = spec.partition(":")
    if kind == "openai":
        return openai_judge(model, llm or LLMOptions(), budget=budget, limiter=limiter,
                            endpoint=endpoint)
    raise UnknownJudgeSpec(f"unknown judge {spec!r}: use 'offline' or 'openai:MODEL'")
