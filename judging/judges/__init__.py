"""Judges: async callables that answer a rubric's criteria for one claim.

Reads a `JudgeTask` (the claim, its measured signals and images, the rubric); gives a
`JudgeResult` (one answer per criterion, each scored or unscored with its reason, plus
provenance). The offline judge answers from signals and rule checks only; LLM judges talk to any
OpenAI-compatible endpoint through the one call loop of `openai/transport.py` (structured
outputs, cached, budgeted; the logbook extractor's calls and the endpoint check too); `registry`
is the table from a spec's backend to its factories, through which the run, the retest and the
endpoint check reach any judge; `panel` aggregates several judges' lines on one claim (which
line speaks for the AI is `rundir.speaking`'s to say).
"""

from __future__ import annotations

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
from judging.judges.registry import (
    BACKENDS,
    Backend,
    JudgeContext,
    UnknownJudgeSpec,
    extracts,
    make_extractor,
    make_judge,
)

__all__ = ["AGGREGATION", "AnswerCache", "BACKENDS", "Backend", "Budget", "CallEstimate",
           "EndpointClient", "Judge", "JudgeConfigError", "JudgeContext", "JudgeResult",
           "JudgeTask", "LLMOptions", "OfflineJudge", "OpenAIJudge", "UnknownJudgeSpec",
           "aggregate_panel", "check_endpoint", "extracts", "hold_images",
           "make_extractor", "make_judge", "offline_judge", "openai_judge", "order_consistency",
           "panel_name", "read_images", "release_images",
           "StructuredAnswer", "StructuredCaller", "structured_caller"]
