"""Whether a claim's reproduced values appear in the output of a tool call of its agent trace
(`trace.value_in_tool_output`): the run that produced a number, seen where the agent ran it, as
the `value_in_logs` rule looks for it in the cited logs. Pure: the tool calls are read by the
caller (`judging.traces.tool_calls`)."""

from __future__ import annotations

from judging.models import MAX_RATIONALE_CHARS, ClaimInput, ClaimKind, Signal
from judging.rules import number_in_text, quote
from judging.traces import ToolCall

SIGNAL = "trace.value_in_tool_output"


def reproduced_values(claim: ClaimInput) -> list[tuple[str, float]]:
    """(name, value) of the reproduced numbers a claim reports."""
    c = claim.claim
    if c.kind is ClaimKind.table:
        return [(v.name, v.reproduced) for v in c.values or [] if v.reproduced is not None]
    return [("reproduced_value", c.reproduced_value)] if c.reproduced_value is not None else []


def value_in_tool_output(values: list[tuple[str, float]],
                         traces: dict[str, list[ToolCall]]) -> Signal:
    """True when every value appears (at the precision it is written) in some tool call's output
    of the traces; False when one does not; absent without a value or a readable trace. The
    reason names where each value was found, or which was not."""
    if not traces:
        return Signal.absent("the claim has no agent trace")
    if not values:
        return Signal.absent("no reproduced value to look for")
    calls = [(name, call) for name, trace in traces.items() for call in trace if call.output]
    if not calls:
        return Signal.absent("no tool call of the trace has an output ("
                             + ", ".join(quote(n) for n in traces) + ")")
    found, missing = [], []
    for label, value in values:
        hit = next(((name, call) for name, call in calls
                    if number_in_text(value, call.output)), None)
        if hit is None:
            missing.append(f"{quote(label)} = {value:g}")
        else:
            found.append(f"{quote(label)} = {value:g} in the output of {hit[1].name} "
                         f"{quote(hit[1].command[:120])} ({quote(hit[0])})")
    if missing:
        return Signal(value=False, reason="not in any tool call's output of "
                      + ", ".join(quote(n) for n in traces) + ": " + "; ".join(missing))
    return Signal(value=True, reason="; ".join(found)[:MAX_RATIONALE_CHARS])
