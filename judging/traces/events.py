"""Agent traces in the Claude-Code event format (one JSON event per line), the format the Hub's
trace viewer reads and ML Intern uploads (`<user>/ml-intern-sessions`, `sessions/YYYY-MM-DD/
<id>.jsonl`): intake recognizes a submission's trace, `judging check` counts it and the signals
read the output of its tool calls. Shared vocabulary: intake and signals both read it.

An event: `{"type": "user" | "assistant" | "system" | "summary", "message": {"role", "model",
"content": [{"type": "text", "text"}, {"type": "tool_use", "id", "name", "input"},
{"type": "tool_result", "tool_use_id", "content", "is_error"}]}, "uuid", "parentUuid",
"sessionId", "timestamp"}`. A tool call's output is its `tool_result` content (a string or
text blocks) and, where Claude Code records it, the event's `toolUseResult` (`stdout`,
`stderr`).

Hand-written: no maintained library reads this format (the Hub's viewer is JavaScript); the
reading is bounded (`MAX_TRACE_BYTES`, `MAX_LINE_BYTES`) since a trace is participant data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

#: A trace is read up to this size (a long session is a few MB; beyond, the rest is not read).
MAX_TRACE_BYTES = 50 * 1024 * 1024
#: A line longer than this is skipped (one event is small; a huge line is not one).
MAX_LINE_BYTES = 5 * 1024 * 1024
#: Lines read to recognize the format.
SNIFF_LINES = 20
_EVENT_TYPES = {"user", "assistant", "system", "summary", "tool", "result"}


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a trace and what it returned."""

    id: str
    name: str
    command: str
    """The call's input, shortened (a Bash call's command)."""
    output: str
    is_error: bool = False
    session: str | None = None


def _event(line: bytes) -> dict[str, Any] | None:
    if len(line) > MAX_LINE_BYTES or not line.strip():
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):  # nested past the parser's depth: no event either
        return None
    return data if isinstance(data, dict) else None


def is_event(data: dict[str, Any]) -> bool:
    """One line of a Claude-Code trace: a known event type with a message or a session id."""
    return data.get("type") in _EVENT_TYPES and (
        isinstance(data.get("message"), dict) or "sessionId" in data or "uuid" in data)


def is_trace(path: Path) -> bool:
    """The file is a Claude-Code event trace: its first lines that hold JSON are events."""
    try:
        with Path(path).open("rb") as handle:
            lines = [handle.readline(MAX_LINE_BYTES + 1) for _ in range(SNIFF_LINES)]
    except OSError:
        return False
    events = [e for e in (_event(line) for line in lines) if e is not None]
    return bool(events) and sum(is_event(e) for e in events) >= max(1, len(events) // 2) and \
        any(isinstance(e.get("message"), dict) for e in events)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(block.get("text") if isinstance(block, dict)
                               and block.get("type") in (None, "text") else block
                               if isinstance(block, str) else "")
                         for block in content)
    return ""


def _command(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        for key in ("command", "cmd", "script", "code", "file_path", "path", "query"):
            if isinstance(tool_input.get(key), str):
                return tool_input[key][:500]
        return json.dumps(tool_input, ensure_ascii=False)[:500]
    return str(tool_input)[:500]


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The lines of a trace up to `MAX_TRACE_BYTES` in all, each read at most `MAX_LINE_BYTES`
    at a time: a longer line is skipped piece by piece (iterating the file read a line whole, so
    one line of 800 MB without a newline took 1.8 GB)."""
    read, skipping = 0, False
    for piece in iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""):
        read += len(piece)
        if read > MAX_TRACE_BYTES:
            return
        if not skipping and len(piece) <= MAX_LINE_BYTES:
            yield piece
        skipping = not piece.endswith(b"\n") and (skipping or len(piece) > MAX_LINE_BYTES)


def tool_calls(path: Path) -> list[ToolCall]:
    """The tool calls of a trace with their outputs, in order (calls without a result have an
    empty output). Unreadable lines are skipped."""
    uses: dict[str, tuple[str, str, str | None]] = {}
    order: list[str] = []
    outputs: dict[str, tuple[list[str], bool]] = {}
    with Path(path).open("rb") as handle:
        for line in _lines(handle):
            event = _event(line)
            if event is None or not is_event(event):
                continue
            session = event.get("sessionId") if isinstance(event.get("sessionId"), str) \
                else None
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    uses[block["id"]] = (str(block.get("name") or "tool"),
                                         _command(block.get("input")), session)
                    order.append(block["id"])
                elif block.get("type") == "tool_result" and \
                        isinstance(block.get("tool_use_id"), str):
                    texts, error = outputs.get(block["tool_use_id"], ([], False))
                    texts.append(_text(block.get("content")))
                    extra = event.get("toolUseResult")
                    if isinstance(extra, dict):
                        texts += [str(extra.get(k)) for k in ("stdout", "stderr")
                                  if extra.get(k)]
                    elif isinstance(extra, str):
                        texts.append(extra)
                    outputs[block["tool_use_id"]] = (texts, error or bool(block.get("is_error")))
    calls = []
    for call_id in order:
        name, command, session = uses[call_id]
        texts, error = outputs.get(call_id, ([], False))
        calls.append(ToolCall(id=call_id, name=name, command=command,
                              output="\n".join(t for t in texts if t), is_error=error,
                              session=session))
    return calls
