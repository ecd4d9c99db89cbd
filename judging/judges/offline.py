"""The offline judge: answers the criteria that declare an offline rule, from signals and rule checks.

It is honest about its reach: a criterion without an offline rule, or whose rule cannot decide, is
left unscored with the reason (a human or an LLM is needed), never given a default answer.
"""

from __future__ import annotations

import hashlib

from judging.judges.base import CallEstimate, JudgeResult, JudgeTask
from judging.models import (
    AnswerStatus,
    ConfidenceSource,
    CriterionAnswer,
    SettingValue,
    SignalStatus,
)
from judging.rubrics import (
    Criterion,
    OfflineRule,
    Rubric,
    Scale,
    not_applicable,
    rule_not_applicable,
)
from judging.rules import RULES

#: Bump when the way rules are applied changes: it is part of the template hash, so calibrations
#: made with an older offline judge go stale.
OFFLINE_JUDGE_VERSION = "offline-judge/1"
NEEDS_JUDGEMENT = "needs an LLM or a human: the rubric gives no offline rule for this criterion"


def _confidence(distance: float, margin: float) -> float:
    """0.5 on the threshold, rising linearly to 1 at `margin` away from it."""
    return round(0.5 + 0.5 * min(1.0, abs(distance) / margin), 4)


def answer_with_signal(criterion: Criterion, rule: OfflineRule, task: JudgeTask) -> CriterionAnswer:
    assert rule.signal is not None and rule.better is not None
    signal = task.signals.get(rule.signal)
    if signal is None or signal.status is SignalStatus.absent or isinstance(signal.value, bool):
        reason = signal.reason if signal is not None and signal.reason else "not measured"
        return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                               reason=f"signal {rule.signal} is absent: {reason}",
                               evidence=[rule.signal])
    value = float(signal.value)
    sign = 1.0 if rule.better == "higher" else -1.0
    comparison = "≥" if rule.better == "higher" else "≤"
    if criterion.scale is Scale.binary:
        assert rule.pass_at is not None
        distance = sign * (value - rule.pass_at)
        answer: bool | int = distance >= 0
        rationale = (f"{rule.signal} = {value:.3f} {comparison if answer else 'fails'} "
                     f"{rule.pass_at:g} (pass threshold)")
    else:
        assert rule.levels_at is not None
        level = 1
        for candidate, threshold in sorted(rule.levels_at.items()):
            if sign * (value - threshold) >= 0:
                level = candidate
        thresholds = list(rule.levels_at.values())
        distance = min(abs(value - t) for t in thresholds)
        answer = level
        rationale = f"{rule.signal} = {value:.3f} → level {level} (thresholds {rule.levels_at})"
    return CriterionAnswer(
        criterion_id=criterion.id, status=AnswerStatus.scored, value=answer,
        passed=criterion.passes(answer), rationale=rationale,
        confidence=_confidence(distance, rule.margin), confidence_source=ConfidenceSource.signal,
        evidence=[rule.signal])


def answer_with_rule(criterion: Criterion, rule: OfflineRule, task: JudgeTask) -> CriterionAnswer:
    assert rule.rule is not None
    result = RULES[rule.rule](task.claim, task.signals)
    if result.value is None:
        return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                               reason=result.rationale, evidence=[rule.rule])
    if not criterion.valid_value(result.value):
        # A yes/no rule on an ordinal scale (or a level on a yes/no one) would need a made-up
        # answer: refuse to guess.
        return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                               reason=f"rule {rule.rule} does not answer on this criterion's "
                                      f"scale", evidence=[rule.rule])
    return CriterionAnswer(
        criterion_id=criterion.id, status=AnswerStatus.scored, value=result.value,
        passed=criterion.passes(result.value), rationale=result.rationale,
        quote=result.quote, confidence=result.confidence,
        confidence_source=ConfidenceSource.rule, evidence=[rule.rule])


def _answer_text(value: bool | int | str | None) -> str:
    """An answer as the reviewer's question offers it: yes / no, a level, a category."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"level {value}" if isinstance(value, int) else repr(value)


def _format(value: float | bool | None) -> str:
    return "absent" if value is None else f"{float(value):.2f}"


def trusted(answer: CriterionAnswer, rule: OfflineRule, task: JudgeTask) -> CriterionAnswer:
    """An answer stands only when the rule's trust condition for its direction holds
    (`fails_only_when` since figure-match 1.3.0, `passes_only_when` since 1.4.0: the chart
    reading is sure enough of a difference, or of an agreement); otherwise the criterion is
    unscored with the doubts, since a wrong answer is worse than none. A trusted answer's
    confidence is the trust measure's when that measure is a probability of the answer's
    direction (`chart.same_data`)."""
    if answer.status is not AnswerStatus.scored:
        return answer
    condition = rule.passes_only_when if answer.passed else rule.fails_only_when
    if condition is None:
        return answer
    signal = task.signals.get(condition.signal)
    value = None if signal is None or signal.status is SignalStatus.absent else signal.value
    number = None if value is None else float(value)
    if condition.holds(number):
        if number is not None and condition.signal in PROBABILITY_SIGNALS:
            sure = number if answer.passed else 1.0 - number
            return answer.model_copy(update={"confidence": round(sure, 4),
                                             "confidence_source": ConfidenceSource.signal,
                                             "evidence": [*answer.evidence, condition.signal]})
        return answer
    doubts = signal.reason if signal is not None and signal.reason else "not measured"
    direction = "pass" if answer.passed else "fail"
    return CriterionAnswer(
        criterion_id=answer.criterion_id, status=AnswerStatus.unscored,
        reason=(f"would answer {_answer_text(answer.value)} ({answer.rationale}), but the reading "
                f"is not sure "
                f"enough to {direction} on: {condition.signal} = {_format(value)} "
                f"{condition.unmet()} ({doubts}); needs an LLM or a human"),
        evidence=[*answer.evidence, condition.signal])


#: Trust measures that are the probability that a figure matches: a trusted answer's confidence
#: is that probability (or its complement for a "no").
PROBABILITY_SIGNALS = frozenset({"chart.same_data"})


class OfflineJudge:
    """Signals and rule checks only; no model, no network."""

    spec = "offline"
    model: str | None = None

    def __init__(self) -> None:
        self.settings: dict[str, SettingValue] = {"version": OFFLINE_JUDGE_VERSION}
        self.answer_settings = self.settings

    def template_hash(self, rubric: Rubric) -> str:
        digest = hashlib.sha256(f"{rubric.content_hash()}|{OFFLINE_JUDGE_VERSION}".encode())
        return "sha256:" + digest.hexdigest()

    def estimate(self, task: JudgeTask) -> CallEstimate | None:
        return None  # no endpoint, nothing to pay

    def preflight(self) -> None:
        """Nothing to check: no endpoint."""

    async def close(self) -> None:
        """Nothing to close: no connection."""

    async def __call__(self, task: JudgeTask) -> JudgeResult:
        answers = []
        claim = task.claim.claim
        for criterion in task.rubric.criteria:
            if not criterion.applies_to(claim):
                answers.append(not_applicable(criterion))
            elif (unfit := rule_not_applicable(criterion, task.claim, task.signals)) is not None:
                answers.append(unfit)
            elif criterion.offline is None:
                answers.append(CriterionAnswer(criterion_id=criterion.id,
                                               status=AnswerStatus.unscored,
                                               reason=NEEDS_JUDGEMENT))
            elif criterion.offline.signal is not None:
                answers.append(trusted(answer_with_signal(criterion, criterion.offline, task),
                                       criterion.offline, task))
            else:
                answers.append(trusted(answer_with_rule(criterion, criterion.offline, task),
                                       criterion.offline, task))
        return JudgeResult(answers=answers)


def offline_judge() -> OfflineJudge:
    return OfflineJudge()
