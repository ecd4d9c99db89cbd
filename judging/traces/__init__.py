"""Agent traces: the shapes of a submission's trace file that intake (recognizing a trace),
`judging check` (counting it) and the signals (reading its tool calls' output) share, below all
of them. Two formats: `events`, the Claude-Code event format (one JSON event per line, the Hub's
trace viewer's), and `chat`, HuggingChat conversation exports (one JSON document). Reads files;
writes nothing.
"""

from __future__ import annotations

import functools
from pathlib import Path

from judging.traces import chat, events
from judging.traces.events import MAX_LINE_BYTES, MAX_TRACE_BYTES, ToolCall, is_event

__all__ = ["MAX_LINE_BYTES", "MAX_TRACE_BYTES", "ToolCall", "is_event", "is_trace", "tool_calls"]


def is_trace(path: Path) -> bool:
    """The file is an agent trace of either format."""
    return chat.is_chat_export(path) or events.is_trace(path)


#: Traces whose tool calls a process keeps (the last read): every claim of a Space carries all
#: of the Space's traces, and each claim's measurement read each again (a 45 MB trace takes
#: 3.6 s: a Space of 500 claims and ten such traces held the run for about five hours).
TRACES_KEPT = 4


def tool_calls(path: Path) -> list[ToolCall]:
    """The tool calls of a trace of either format, with their outputs, in order; a trace read
    already by this process, unchanged since (same size and modification time), is not read
    again."""
    stat = Path(path).stat()
    return list(_tool_calls(str(path), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=TRACES_KEPT)
def _tool_calls(path: str, size: int, mtime_ns: int) -> tuple[ToolCall, ...]:
    del size, mtime_ns  # the cache key: a file changed since is read again
    return tuple(chat.tool_calls(Path(path)) if chat.is_chat_export(Path(path))
                 else events.tool_calls(Path(path)))
