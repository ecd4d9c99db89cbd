"""The check a run makes of its endpoint before the first call: it answers and knows the model,
else one line naming the cause. The one-token probe is sent through the one call site
(`transport.post_chat`), from an event loop of its own (`transport.Portal`): the check is
synchronous, and may be made inside the run's loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judging.judges.openai.endpoint import (
    JudgeConfigError,
    LLMOptions,
    client_key,
    connection_cause,
    endpoint_label,
    error_message,
)
from judging.judges.openai.transport import Portal, post_chat

if TYPE_CHECKING:
    # Only for annotations: an offline run never imports the SDK (one second of CPU per
    # process); the functions that call it import it where they need it.
    import openai

#: The run's check of its endpoint: a short timeout and one retry (a dead endpoint is told at
#: once, a busy one gets a second chance).
CHECK_TIMEOUT_S, CHECK_RETRIES = 15.0, 1


def check_endpoint(options: LLMOptions, model: str, *, spec: str) -> None:
    """Before a run's first call: the endpoint answers and knows the model, else
    `JudgeConfigError` with one line naming the cause (connection refused, DNS, TLS, a timeout,
    credentials refused, the model not found, a server error). Asks for the model
    (`GET /models/MODEL`); a server that does not answer that (llama.cpp, vLLM) gets one chat
    call of one token, whose 404 says the model is unknown."""
    portal = Portal()
    try:
        portal.call(_check, options, model, spec)
    finally:
        portal.close()


def _stop(exc: openai.APIError, step: str, *, options: LLMOptions, model: str,
          spec: str) -> JudgeConfigError:
    import openai  # the SDK costs a second of start-up: loaded when used
    label = endpoint_label(options.base_url)
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return JudgeConfigError(f"{spec}: the endpoint {label} refused the credentials "
                                f"({exc.status_code}): {error_message(exc)}")
    if isinstance(exc, openai.NotFoundError):
        return JudgeConfigError(f"{spec}: model {model!r} not found at {label} (404): "
                                f"{error_message(exc)}")
    if isinstance(exc, openai.APIStatusError):
        return JudgeConfigError(f"{spec}: the endpoint {label} answered {step} with "
                                f"{exc.status_code}: {error_message(exc)}")
    cause = connection_cause(exc, base_url=options.base_url)
    if cause is None and isinstance(exc, openai.APITimeoutError):
        cause = f"no answer within {min(options.timeout, CHECK_TIMEOUT_S):g} s"
    return JudgeConfigError(f"{spec}: cannot reach the endpoint {label}: {cause or exc}")


async def _check(options: LLMOptions, model: str, spec: str) -> None:
    import openai  # the SDK costs a second of start-up: loaded when used
    def stop(exc: openai.APIError, step: str) -> JudgeConfigError:
        return _stop(exc, step, options=options, model=model, spec=spec)

    try:
        client = openai.AsyncOpenAI(base_url=options.base_url, api_key=client_key(options),
                                    timeout=min(options.timeout, CHECK_TIMEOUT_S),
                                    max_retries=min(options.max_retries, CHECK_RETRIES))
        async with client:
            try:
                await client.models.retrieve(model)
                return
            except (openai.NotFoundError, openai.BadRequestError,
                    openai.UnprocessableEntityError):
                pass  # no model listing here, or not this model: ask the model itself
            except openai.APIError as exc:
                raise stop(exc, "the model listing") from None
            try:
                await post_chat(client, "/chat/completions", {
                    "model": model, "max_tokens": 1,
                    "messages": [{"role": "user", "content": "Answer with one word: ready?"}]})
            except (openai.BadRequestError, openai.UnprocessableEntityError,
                    openai.RateLimitError):
                return  # it answered: the model is there (a 400 is about this tiny request)
            except ValueError:
                return  # it answered 200 with a body that is not JSON: the model is there
            except openai.APIError as exc:
                raise stop(exc, "a one-token call") from None
    except openai.OpenAIError as exc:  # e.g. the client could not be built
        raise JudgeConfigError(f"{spec}: cannot use the endpoint "
                               f"{endpoint_label(options.base_url)}: {exc}") from None
