"""Agent traces (`events`: the Claude-Code event format, one JSON event per line): the shape of a
submission's trace file that intake (recognizing a trace), `judging check` (counting it) and the
signals (reading its tool calls' output) share, below all of them. Reads files; writes nothing.
"""

from __future__ import annotations

from judging.traces.events import (
    MAX_LINE_BYTES,
    MAX_TRACE_BYTES,
    ToolCall,
    is_event,
    is_trace,
    tool_calls,
)

__all__ = ["MAX_LINE_BYTES", "MAX_TRACE_BYTES", "ToolCall", "is_event", "is_trace", "tool_calls"]
