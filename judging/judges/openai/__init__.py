"""The one LLM transport: any OpenAI-compatible endpoint through the `openai` SDK, for the judges
(`judge`: `openai:MODEL`, one call per claim, rubric, sample and figure order) and the logbook
extractor (`structured`: one structured answer per call, injected into intake by the run).

`transport` (the one call loop: the one place a request is sent, with the cache, the budget,
the format fallback and what served each answer), `endpoint` (options, connections, response
formats and their fallback, the one map of endpoint errors), `check` (the endpoint check before a
run), `cache` (answers on disk by request hash), `cost` (prices, budget, token estimates),
`answers` (reading an answer body criterion by criterion).
"""

from __future__ import annotations

from judging.judges.openai.answers import interpret_answer
from judging.judges.openai.cache import AnswerCache
from judging.judges.openai.check import check_endpoint
from judging.judges.openai.cost import Budget, load_prices
from judging.judges.openai.endpoint import (
    EndpointClient,
    JudgeConfigError,
    LLMOptions,
)
from judging.judges.openai.judge import OpenAIJudge, estimate_tokens, openai_judge
from judging.judges.openai.structured import StructuredAnswer, StructuredCaller, structured_caller

__all__ = ["AnswerCache", "Budget", "EndpointClient", "JudgeConfigError", "LLMOptions",
           "check_endpoint",
           "OpenAIJudge", "StructuredAnswer", "StructuredCaller", "estimate_tokens",
           "interpret_answer", "load_prices", "openai_judge", "structured_caller"]
