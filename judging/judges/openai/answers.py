"""Reading an answer body: per-criterion answers validated one by one against the answer model
(`interpret_answer`), the token usage, the raw answer to keep.

Honesty rules: an answer that does not parse or validate, a refusal, a content-filter block or a
truncated answer leaves the criteria unscored with the reason, and the raw answer is kept;
nothing is ever defaulted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

import judging.judges.prompt as prompt
from judging.models import (
    AnswerStatus,
    ConfidenceSource,
    CriterionAnswer,
    SettingValue,
    TokenUsage,
)
from judging.rubrics import Criterion, Scale


def strip_fences(content: str) -> str:
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text


def unscored(criteria: Sequence[Criterion], reason: str) -> list[CriterionAnswer]:
    return [CriterionAnswer(criterion_id=c.id, status=AnswerStatus.unscored, reason=reason)
            for c in criteria]


def interpret_answer(body: dict[str, Any], criteria: Sequence[Criterion]
                     ) -> tuple[list[CriterionAnswer], str | None]:
    """Turn a chat-completion body into per-criterion answers; (answers, line-level reason).

    Each criterion is validated on its own: one malformed criterion is unscored, the others keep
    their answers. Nothing is ever defaulted.
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        reason = "malformed response from the endpoint (no choices)"
        return unscored(criteria, reason), reason
    choice = choices[0]
    message = choice.get("message") or {}
    finish = choice.get("finish_reason")
    refusal = message.get("refusal")
    content = message.get("content")
    reason: str | None = None
    if refusal:
        reason = f"the judge refused: {str(refusal)[:300]}"
    elif finish == "content_filter":
        reason = "the answer was blocked by the provider's content filter"
    elif finish == "length":
        reason = "truncated answer (finish_reason=length): raise --max-tokens"
    elif not content or not isinstance(content, str):
        reason = "empty answer"
    if reason:
        return unscored(criteria, reason), reason
    try:
        data = json.loads(strip_fences(content))
    except ValueError as exc:
        reason = f"the answer is not valid JSON ({exc.msg} at char {exc.pos})"
        return unscored(criteria, reason), reason
    if not isinstance(data, dict):
        reason = "the answer is not a JSON object"
        return unscored(criteria, reason), reason
    known = {c.id for c in criteria}
    if not known & set(data):
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        reason = f"the answer does not follow the schema (keys: {keys})"
        return unscored(criteria, reason), reason
    answers = [_criterion_answer(c, data.get(c.id)) for c in criteria]
    if not any(a.status is AnswerStatus.scored for a in answers):
        example = next(a for a in answers)
        reason = (f"no criterion in the answer could be used ({example.criterion_id}: "
                  f"{example.reason})")
    return answers, reason


def _criterion_answer(criterion: Criterion, raw: object) -> CriterionAnswer:
    def unscored(reason: str) -> CriterionAnswer:
        return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                               reason=reason)

    if raw is None:
        return unscored("missing from the answer")
    try:
        parsed = prompt.criterion_model(criterion).model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "answer"
        return unscored(f"does not fit the schema ({where}: {first['msg']})")
    rationale = parsed.rationale.strip()  # type: ignore[attr-defined]
    answer = parsed.answer  # type: ignore[attr-defined]
    confidence = parsed.confidence  # type: ignore[attr-defined]
    if answer == prompt.CANNOT_TELL:
        return unscored(f"the judge could not tell: {rationale[:300]}")
    if not 0.0 <= confidence <= 1.0:
        return unscored(f"confidence {confidence} is outside [0, 1]")
    quote = None
    if criterion.scale is Scale.categorical:
        # The own verdict rests on a passage of the material, quoted: without one it is a
        # verdict without evidence, and is not taken.
        quote = (getattr(parsed, "quote", "") or "").strip()
        if not quote:
            return unscored(f"answered {answer!r} without quoting the evidence it rests on")
    value: bool | int | str = (answer == "yes") if criterion.scale is Scale.binary else \
        answer if criterion.scale is Scale.categorical else int(answer)
    return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.scored, value=value,
                           passed=criterion.passes(value), rationale=rationale, quote=quote,
                           confidence=confidence,
                           confidence_source=ConfidenceSource.self_reported)


def usage_of(body: dict[str, Any]) -> TokenUsage | None:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    try:
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
    except (TypeError, ValueError):
        return None
    return TokenUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                      total_tokens=int(usage.get("total_tokens") or
                                       prompt_tokens + completion_tokens))


#: The most of a response body kept as the raw answer when it has no message content (an error
#: or a provider's own shape): enough to see what was served, not a whole page of HTML.
MAX_RAW_BODY_CHARS = 20_000


def raw_answer(body: dict[str, Any]) -> str:
    """What to keep of an answer: the message's content, its refusal, else the body (cut)."""
    message = ((body.get("choices") or [{}])[0] or {}).get("message") or {} \
        if isinstance(body, dict) else {}
    raw = message.get("content") if isinstance(message, dict) else None
    if raw is None and isinstance(message, dict) and message.get("refusal"):
        raw = json.dumps({"refusal": message["refusal"]})
    return raw if raw is not None else json.dumps(body)[:MAX_RAW_BODY_CHARS]


#: Response headers that name who served a call behind a router (Hugging Face's router names
#: the inference provider); recorded when present.
PROVIDER_HEADERS = ("x-inference-provider", "x-provider", "x-served-by")


def served_by(headers: Mapping[str, str]) -> str | None:
    """The provider a response's headers name (`PROVIDER_HEADERS`), as `header=value`; None
    when none is present."""
    found = [f"{name}={headers[name]}" for name in PROVIDER_HEADERS if headers.get(name)]
    return "; ".join(found)[:200] or None


def served(body: dict[str, Any], provider: str | None) -> dict[str, SettingValue]:
    """What the endpoint says served a call (`SERVED_SETTINGS`): the response's `model` and
    `system_fingerprint`, and the provider (its headers', else a router's `provider` field in
    the body). Only what is present: a local server that says nothing records nothing."""
    found: dict[str, SettingValue] = {}
    if not isinstance(body, dict):
        return found
    model, fingerprint = body.get("model"), body.get("system_fingerprint")
    if isinstance(model, str) and model:
        found["served_model"] = model[:200]
    if isinstance(fingerprint, str) and fingerprint:
        found["system_fingerprint"] = fingerprint[:200]
    body_provider = body.get("provider")
    provider = provider or (f"provider={body_provider}"[:200]
                            if isinstance(body_provider, str) and body_provider else None)
    if provider:
        found["served_by"] = provider
    return found


def _squeezed(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_quotes(answers: list[CriterionAnswer], messages: Sequence[dict[str, Any]]
                 ) -> list[CriterionAnswer]:
    """An answer whose quote is not in the material the prompt showed (whitespace and case
    aside) is unscored: a verdict resting on a passage nobody wrote is not taken."""
    shown = _squeezed("\n".join(
        part.get("text", "") for message in messages if message.get("role") == "user"
        for part in (message["content"] if isinstance(message["content"], list)
                     else [{"text": message["content"]}]) if isinstance(part, dict)))
    checked = []
    for answer in answers:
        if answer.status is AnswerStatus.scored and answer.quote and \
                _squeezed(answer.quote) not in shown:
            answer = CriterionAnswer(
                criterion_id=answer.criterion_id, status=AnswerStatus.unscored,
                reason=f"answered {answer.value!r} quoting a passage that is not in the material "
                       f"shown: {answer.quote[:200]!r}")
        checked.append(answer)
    return checked
