"""HuggingChat conversation exports as agent traces (issue 40: ML Intern is a HuggingChat mode
now, so a hackathon trace is often a conversation exported from HuggingChat, in a Space or in a
freely named dataset).

The shape assumed (no published schema was found; it follows chat-ui's stored conversation, whose
messages carry the tool calls as `updates`, and the OpenAI-style tool messages its newer tool
path keeps): one JSON document, `.json`, that is a conversation, `{"conversation": {...}}`, or a
list of conversations. A conversation is `{"_id" | "id", "title", "model", "messages": [...]}`;
a message is `{"from" | "role": "user" | "assistant" | "system" | "tool", "content": str, ...}`
with either

- chat-ui tool updates: `"updates": [{"type": "tool", "subtype": "call", "uuid": U, "call":
  {"name", "parameters"}}, {"type": "tool", "subtype": "result", "uuid": U, "result":
  {"status": "success" | "error", "outputs": [...]}}, {"type": "tool", "subtype": "error",
  "uuid": U, "message"}]`, or
- OpenAI-style calls: `"tool_calls": [{"id": U, "function": {"name", "arguments"}}]` on an
  assistant message, answered by a `{"role": "tool", "tool_call_id": U, "content"}` message.

Hand-written: no maintained Python library reads chat-ui's exports. Bounded like the event
reader (`MAX_TRACE_BYTES`): a larger export is not read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judging.traces.events import MAX_TRACE_BYTES, ToolCall

#: Bytes read to recognize an export without parsing it whole.
SNIFF_BYTES = 64 * 1024
_MESSAGES = re.compile(rb'"messages"\s*:\s*\[')
_SPEAKER = re.compile(rb'"(?:from|role)"\s*:\s*"(?:user|assistant)"')


def is_chat_export(path: Path) -> bool:
    """A `.json` file whose head holds a `messages` list of user and assistant messages."""
    path = Path(path)
    if path.suffix.lower() != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    return bool(_MESSAGES.search(head) and _SPEAKER.search(head))


def conversations(data: Any) -> list[dict[str, Any]]:
    """The conversations of an export document (the shapes of the module docstring)."""
    if isinstance(data, dict) and isinstance(data.get("conversation"), dict):
        data = data["conversation"]
    items = data if isinstance(data, list) else [data]
    return [c for c in items if isinstance(c, dict) and isinstance(c.get("messages"), list)]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "content", "stdout", "output", "result"):
            if isinstance(value.get(key), str | list):
                return _text(value[key])
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _command(parameters: Any) -> str:
    if isinstance(parameters, str):
        try:
            parameters = json.loads(parameters)
        except (ValueError, RecursionError):
            return parameters[:500]
    if isinstance(parameters, dict):
        for key in ("command", "cmd", "script", "code", "file_path", "path", "query"):
            if isinstance(parameters.get(key), str):
                return parameters[key][:500]
    return json.dumps(parameters, ensure_ascii=False)[:500]


class _Calls:
    """Tool calls in order of their call, each with what came back."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[str, str, str | None]] = {}
        self.outputs: dict[str, tuple[list[str], bool]] = {}

    def call(self, key: Any, name: Any, parameters: Any, session: str | None) -> None:
        if isinstance(key, str) and key not in self.calls:
            self.calls[key] = (str(name or "tool"), _command(parameters), session)

    def result(self, key: Any, output: Any, error: bool) -> None:
        if isinstance(key, str):
            texts, was = self.outputs.get(key, ([], False))
            texts.append(_text(output))
            self.outputs[key] = (texts, was or error)

    def done(self) -> list[ToolCall]:
        return [ToolCall(id=key, name=name, command=command,
                         output="\n".join(t for t in self.outputs.get(key, ([], False))[0] if t),
                         is_error=self.outputs.get(key, ([], False))[1], session=session)
                for key, (name, command, session) in self.calls.items()]


def _message(calls: _Calls, message: dict[str, Any], session: str | None) -> None:
    for update in message.get("updates") or []:
        if not isinstance(update, dict) or update.get("type") != "tool":
            continue
        key, sub = update.get("uuid"), update.get("subtype")
        if sub == "call" and isinstance(update.get("call"), dict):
            calls.call(key, update["call"].get("name"), update["call"].get("parameters"),
                       session)
        elif sub == "result" and isinstance(update.get("result"), dict):
            result = update["result"]
            calls.result(key, result.get("outputs", result.get("message")),
                         result.get("status") == "error")
        elif sub == "error":
            calls.result(key, update.get("message"), True)
    for tool_call in message.get("tool_calls") or []:
        function = tool_call.get("function") if isinstance(tool_call, dict) else None
        if isinstance(function, dict):
            calls.call(tool_call.get("id"), function.get("name"), function.get("arguments"),
                       session)
    if (message.get("role") or message.get("from")) == "tool":
        calls.result(message.get("tool_call_id"), message.get("content"), False)


def tool_calls(path: Path) -> list[ToolCall]:
    """The tool calls of a HuggingChat export with their outputs, in order; an export that
    is too large or not JSON has none."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_TRACE_BYTES:
            return []
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # nested past the parser's depth: not read
        return []
    calls = _Calls()
    for conversation in conversations(data):
        session = conversation.get("_id") or conversation.get("id")
        session = session if isinstance(session, str) else None
        for message in conversation["messages"]:
            if isinstance(message, dict):
                _message(calls, message, session)
    return calls.done()
