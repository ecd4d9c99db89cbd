"""The judge protocol: a judge is a small factory's product, an async callable over one task."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from judging.models import ClaimInput, CriterionAnswer, SettingValue, Signal, TokenUsage
from judging.rubrics import Rubric


@dataclass(frozen=True)
class JudgeTask:
    """Everything a judge may look at for one (claim, rubric, sample)."""

    claim: ClaimInput
    rubric: Rubric
    signals: dict[str, Signal]
    images: dict[str, Path] = field(default_factory=dict)
    """Normalised images written by the run: "published", "reproduced", "diff"."""
    sample: int = 0
    swapped: bool = False
    """Show the reproduced figure first (a position-bias check for LLM judges)."""


@dataclass
class JudgeResult:
    """A judge's answers for one task, with what is needed to audit them."""

    answers: list[CriterionAnswer]
    request_hash: str | None = None
    raw_answer: str | None = None
    usage: TokenUsage | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    error: str | None = None
    """Set when the judge could not answer at all (every criterion then stays unscored)."""
    final: bool = True
    """False for passing failures (budget, endpoint down): a rerun tries again."""
    cached: bool = False
    """The answer came from the answer cache (no call was made)."""
    settings_used: dict[str, SettingValue] = field(default_factory=dict)
    """Per-call settings to record beside the judge's own (e.g. the response format used)."""

    def call_record(self) -> dict[str, object]:
        """What a judgment line's provenance records of the call, by the provenance's field
        names: the run's line and the retest's line are made from this one list."""
        return {"request_hash": self.request_hash, "raw_answer": self.raw_answer,
                "usage": self.usage, "latency_s": self.latency_s, "cost_usd": self.cost_usd,
                "cached": self.cached}


@dataclass(frozen=True)
class CallEstimate:
    """What one task would cost a judge that calls an endpoint (`judging run --estimate`)."""

    cached: bool = False
    """The answer is in the cache: no call."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    """None when the model has no price (the cost is then unknown)."""


@runtime_checkable
class Judge(Protocol):
    spec: str
    """How the user names this judge, e.g. "offline" or "openai:gpt-4.1-mini"."""
    model: str | None
    settings: dict[str, SettingValue]
    """Everything recorded in provenance."""
    answer_settings: dict[str, SettingValue]
    """The settings that can change an answer (part of each judgment's input hash); not, e.g.,
    the endpoint's address or the timeout, so that a rerun after changing those resumes."""

    def template_hash(self, rubric: Rubric) -> str:
        """Rubric content hash + the version of the code that turns it into questions."""
        ...

    def estimate(self, task: JudgeTask) -> CallEstimate | None:
        """What answering the task would cost, without answering it; None when it makes no call
        (the offline judge; no criterion applies)."""
        ...

    def preflight(self) -> None:
        """Before the first call: check that the judge can work at all (its endpoint answers and
        knows the model), else raise `RunStopped` with the cause in one line."""
        ...

    async def close(self) -> None:
        """Release what the judge holds (connections), inside the event loop that used it."""
        ...

    async def __call__(self, task: JudgeTask) -> JudgeResult:
        ...
