"""Agent traces: the shapes of a submission's trace file that intake (recognizing a trace),
`judging check` (counting it) and the signals (reading its tool calls' output) share, below all
of them. Two formats: `events`, the Claude-Code event format (one JSON event per line, the Hub's
trace viewer's), and `chat`, HuggingChat conversation exports (one JSON document). Reads files;
writes nothing.
"""

from __future__ import annotations

from pathlib import Path

from judging.traces import chat, events
from judging.traces.events import MAX_LINE_BYTES, MAX_TRACE_BYTES, ToolCall, is_event

__all__ = ["MAX_LINE_BYTES", "MAX_TRACE_BYTES", "ToolCall", "is_event", "is_trace", "tool_calls"]


def is_trace(path: Path) -> bool:
    """The file is an agent trace of either format."""
    return chat.is_chat_export(path) or events.is_trace(path)


def tool_calls(path: Path) -> list[ToolCall]:
    """The tool calls of a trace of either format, with their outputs, in order."""
    return chat.tool_calls(path) if chat.is_chat_export(path) else events.tool_calls(path)
