"""Judges: the offline judge (signals and rule checks) and LLM judges over any OpenAI-compatible
endpoint, built from their spec."""

from __future__ import annotations

import asyncio

from ..errors import JudgingError
from .base import Judge, JudgeResult, JudgeTask
from .llm import Budget, JudgeConfigError, LLMOptions, OpenAIJudge, openai_judge
from .offline import OfflineJudge, offline_judge

__all__ = ["Budget", "Judge", "JudgeConfigError", "JudgeResult", "JudgeTask", "LLMOptions",
           "OfflineJudge", "OpenAIJudge", "UnknownJudgeSpec", "make_judge", "offline_judge",
           "openai_judge"]


class UnknownJudgeSpec(JudgingError):
    """A --judge value that names no known judge."""


def make_judge(spec: str, *, llm: LLMOptions | None = None, budget: Budget | None = None,
               limiter: asyncio.Semaphore | None = None) -> Judge:
    """Build a judge from its spec: `offline`, or `openai:MODEL` (any OpenAI-compatible
    endpoint: OPENAI_BASE_URL / OPENAI_API_KEY or the options given)."""
    if spec == "offline":
        return offline_judge()
    kind, _, model = spec.partition(":")
    if kind == "openai":
        return openai_judge(model, llm or LLMOptions.from_env(), budget=budget, limiter=limiter)
    raise UnknownJudgeSpec(f"unknown judge {spec!r}: use 'offline' or 'openai:MODEL'")
