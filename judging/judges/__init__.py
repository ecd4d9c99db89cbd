"""Judges: the offline judge (signals and rule checks) and, by spec, LLM judges."""

from __future__ import annotations

from ..errors import JudgingError
from .base import Judge, JudgeResult, JudgeTask
from .offline import OfflineJudge, offline_judge

__all__ = ["Judge", "JudgeResult", "JudgeTask", "OfflineJudge", "make_judge", "offline_judge"]


class UnknownJudgeSpec(JudgingError):
    """A --judge value that names no known judge."""


def make_judge(spec: str) -> Judge:
    """Build a judge from its spec: `offline` (LLM judges come with `openai:MODEL`)."""
    if spec == "offline":
        return offline_judge()
    raise UnknownJudgeSpec(f"unknown judge {spec!r}: use 'offline'")
