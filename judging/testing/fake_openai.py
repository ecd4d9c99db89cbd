"""A local OpenAI-compatible chat-completions server for tests and benchmarks.

It speaks real HTTP/1.1 (keep-alive, Content-Length on every answer), so the real `openai` SDK talks to it
exactly as it talks to OpenAI, vLLM or llama.cpp: retries, timeouts, connection reuse and structured-output
parsing are all exercised for real. The server side uses the standard library only.

    with FakeOpenAI(latency=0.05) as fake:
        client = openai.OpenAI(base_url=fake.url, api_key="x")
        fake.add_fault("429", retry_after=0.2)      # the next request is rate limited
        client.chat.completions.parse(model="fake-judge", messages=[...], response_format=Answer)
        assert fake.calls == 2

Normal answers come from a *policy*: a function of the parsed request body that returns the message content
(`default_policy` is a small scripted judge that reads the answer schema and the measured evidence from the
prompt). Faults (`FakeOpenAI.add_fault`) make chosen requests fail the way real servers fail.

Run it in its own process for benchmarks (so it does not share the GIL with the client):

    python -m judging.testing.fake_openai --port 8011 --latency 0.25     # first stdout line: the base URL
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import signal
import socket
import socketserver
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FAULTS",
    "FakeOpenAI",
    "MODEL_ID",
    "Policy",
    "answer_json",
    "default_policy",
    "estimate_prompt_tokens",
    "find_answer_schema",
    "main",
    "parse_evidence",
]

Policy = Callable[[dict], str]
"""Takes the parsed request body, returns the assistant message content (a dict/list is JSON-encoded)."""

MODEL_ID = "fake-judge"
FAULTS = frozenset({
    "429", "500", "503", "400", "401", "timeout", "drop", "malformed", "schema_violation", "refusal",
    "truncated", "content_filter", "no_json_schema", "injection_obeyed",
})
REFUSAL_TEXT = "I'm sorry, I can't help with that."
NO_JSON_SCHEMA_MESSAGE = "response_format type json_schema is not supported, use json_object"
NO_IMAGES_MESSAGE = "image input is not supported"
MAX_BODY_BYTES = 256 * 1024 * 1024
DEFAULT_TIMEOUT_DELAY = 30.0

_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MODELS_PATHS = ("/v1/models", "/models")
_HEALTH_PATHS = ("/health", "/v1/health", "/healthz")


# --------------------------------------------------------------------------------------------------------
# Reading a request
# --------------------------------------------------------------------------------------------------------

def _parts(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [part for part in content if isinstance(part, dict)]
    return []


def _message_text(message: dict) -> str:
    return "\n".join(str(part.get("text", "")) for part in _parts(message)
                     if part.get("type") in ("text", "input_text"))


def _messages(request: dict) -> list[dict]:
    messages = request.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _text_of(request: dict, roles: tuple[str, ...] | None = None) -> str:
    return "\n".join(_message_text(m) for m in _messages(request) if roles is None or m.get("role") in roles)


def _image_count(request: dict) -> int:
    return sum(1 for m in _messages(request) for part in _parts(m)
               if part.get("type") in ("image_url", "input_image"))


def _response_format_type(request: dict) -> str | None:
    rf = request.get("response_format")
    return rf.get("type") if isinstance(rf, dict) else None


def estimate_prompt_tokens(request: dict) -> int:
    """Characters of all text parts / 4, plus 85 per image part (OpenAI's low-detail image cost); at least 1."""
    chars = sum(len(_message_text(m)) for m in _messages(request))
    return max(1, chars // 4 + 85 * _image_count(request))


def _completion_tokens(text: str | None) -> int:
    return max(1, len(text or "") // 4)


# --------------------------------------------------------------------------------------------------------
# The answer schema and the evidence in the prompt
# --------------------------------------------------------------------------------------------------------

_SCHEMA_BLOCK = re.compile(r"BEGIN ANSWER SCHEMA[^\n]*\n(.*?)\n[ \t]*END ANSWER SCHEMA", re.DOTALL)


def _schema_from_text(text: str) -> dict | None:
    match = _SCHEMA_BLOCK.search(text)
    if not match:
        return None
    body = match.group(1).strip()
    body = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", body)  # tolerate a fenced block
    try:
        schema = json.loads(body)
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


def find_answer_schema(request: dict) -> dict | None:
    """The JSON schema the request asks the answer to follow, or None.

    `json_schema` response format: its `json_schema.schema`. `json_object`: its `schema` (llama.cpp style), else
    a schema embedded in the system message between the lines `BEGIN ANSWER SCHEMA` and `END ANSWER SCHEMA`.
    """
    rf = request.get("response_format")
    rf = rf if isinstance(rf, dict) else {}
    schema = None
    if rf.get("type") == "json_schema":
        schema = (rf.get("json_schema") or {}).get("schema")
    elif rf.get("type") == "json_object":
        schema = rf.get("schema") or (rf.get("json_schema") or {}).get("schema")
    if isinstance(schema, dict):
        return schema
    return _schema_from_text(_text_of(request, ("system", "developer"))) or _schema_from_text(_text_of(request))


def _resolve(schema: Any, root: dict, depth: int = 0) -> dict:
    """Follow `$ref` (a local JSON pointer such as `#/$defs/Binary`), keeping sibling keys such as description."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#") or depth > 32:
        return schema
    target: Any = root
    for token in ref[1:].split("/"):
        if not token:
            continue
        token = token.replace("~1", "/").replace("~0", "~")
        target = target.get(token) if isinstance(target, dict) else None
    resolved = _resolve(target, root, depth + 1)
    siblings = {k: v for k, v in schema.items() if k != "$ref"}
    return {**resolved, **siblings}


def _default_for(schema: Any, root: dict, depth: int = 0) -> Any:
    """A value of the right type for a schema (used for fields the scripted judge has no opinion on)."""
    schema = _resolve(schema, root)
    if depth > 16:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        options = [_resolve(o, root) for o in schema.get(key) or []]
        options = [o for o in options if o.get("type") != "null"] or options
        if options:
            return _default_for(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        return ""
    if kind == "number":
        return 0.5
    if kind == "integer":
        return 0
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object" or "properties" in schema:
        return {name: _default_for(prop, root, depth + 1) for name, prop in (schema.get("properties") or {}).items()}
    return None


# The value is the rest of the line up to its last non-space character (greedy: a lazy `.+?\s*$`
# tried the end of the line after every character, the server's largest cost per request).
_SIGNAL_LINE = re.compile(r"^\s*[-*]\s*([A-Za-z_][\w.\-]*)\s*=\s*(.*\S)\s*$", re.MULTILINE)
_RULE_LINE = re.compile(r"^\s*[-*]\s*rule\s+([\w.\-]+)\s*:\s*(yes|no|unscored)\b", re.MULTILINE | re.IGNORECASE)


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


def _parse_value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if lowered.startswith("absent"):
        return ABSENT
    try:
        return float(lowered)
    except ValueError:
        return text.strip()


def parse_evidence(text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Measured signals (`- NAME = VALUE`) and rule results (`- rule NAME: yes|no|unscored ...`) in a prompt.

    Values: floats, booleans, `ABSENT` for `absent (...)`, else the raw string. The signal's
    meaning that the judging prompt appends after " — " is not part of its value.
    """
    signals = {name: _parse_value(value.split(" — ", 1)[0])
               for name, value in _SIGNAL_LINE.findall(text)}
    rules = {name: verdict.lower() for name, verdict in _RULE_LINE.findall(text)}
    return signals, rules


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _binary_answer(criterion_id: str, description: str, signals: dict, rules: dict, text: str) -> tuple[str, str]:
    if criterion_id == "independent_reproduction" and signals.get("pixel.copy") is True:
        return "no", "pixel.copy = true: the reproduced figure is a copy of the published one"
    for name, verdict in rules.items():
        if verdict in ("yes", "no") and (name == criterion_id or name in description):
            return verdict, f"rule {name}: {verdict}"
    within = signals.get("numeric.within_tolerance", ABSENT)
    f1 = _number(signals.get("pixel.edge_f1"))
    if within is True:
        return "yes", "numeric.within_tolerance = true"
    if f1 is not None and f1 >= 0.5:
        return "yes", f"pixel.edge_f1 = {f1:g} (>= 0.5)"
    if within is ABSENT and f1 is None:
        verified = "verdict: verified" in text.lower()  # the caller may give it lowered
        return ("yes" if verified else "no"), ("no measured signal; the participant's verdict is "
                                               + ("verified" if verified else "not verified"))
    evidence = [f"numeric.within_tolerance = {str(within).lower()}"] if within is not ABSENT else []
    if f1 is not None:
        evidence.append(f"pixel.edge_f1 = {f1:g} (< 0.5)")
    return "no", ", ".join(evidence) or "the measured signals do not support it"


def _ordinal_answer(levels: list[str], signals: dict) -> tuple[str, str]:
    f1 = _number(signals.get("pixel.edge_f1"))
    if f1 is None:
        wanted, why = 3, "no pixel signal"
    elif f1 >= 0.5:
        wanted, why = 4, f"pixel.edge_f1 = {f1:g} (>= 0.5)"
    else:
        wanted, why = 2, f"pixel.edge_f1 = {f1:g} (< 0.5)"
    best = min(levels, key=lambda level: (abs(int(level) - wanted), int(level)))
    return best, why


#: The four verdict labels (a categorical criterion: the judge's own verdict).
VERDICTS = ("verified", "falsified", "toy", "inconclusive")


def _categorical_answer(values: list[str], signals: dict, text: str) -> tuple[str, str]:
    """The own verdict from the evidence: toy when the participant calls the run reduced-scale,
    else verified / falsified by numeric.within_tolerance, else inconclusive."""
    within = signals.get("numeric.within_tolerance", ABSENT)
    if "toy" in values and "participant calls the evidence toy" in text:
        return "toy", "the participant calls the evidence toy / reduced scale"
    if within is True and "verified" in values:
        return "verified", "numeric.within_tolerance = true"
    if within is False and "falsified" in values:
        return "falsified", "numeric.within_tolerance = false"
    return ("inconclusive" if "inconclusive" in values else values[0]), \
        "the measured signals do not settle it"


_STATEMENT = re.compile(r'<untrusted-data name="statement"[^>]*>\n(.*?)\n</untrusted-data', re.DOTALL)


def _quote_from(text: str) -> str:
    """A verbatim passage of the prompt for an answer to rest on: the claim's statement (its
    first line, up to 120 characters)."""
    match = _STATEMENT.search(text)
    found = (match.group(1) if match else text).strip().splitlines()
    return found[0][:120] if found else ""


def _choose(criterion_id: str, description: str, enum: list, signals: dict, rules: dict,
            text: str) -> tuple[Any, str]:
    values = [str(v) for v in enum]
    if "yes" in values and "no" in values:
        return _binary_answer(criterion_id, description, signals, rules, text)
    levels = [v for v in values if v.isdigit()]
    if levels:
        return _ordinal_answer(levels, signals)
    if set(values) & set(VERDICTS):
        return _categorical_answer([v for v in values if v in VERDICTS], signals, text)
    return enum[0], "scripted default"


def default_policy(request: dict) -> str:
    """A plausible scripted judge: answers the requested schema from the evidence lines of the user message.

    Binary criteria: "yes" when `numeric.within_tolerance = true` or `pixel.edge_f1 >= 0.5`, or, with neither
    signal present, when the prompt says `verdict: verified`; a `- rule NAME: yes|no` line decides a criterion
    whose id is NAME or whose description names it; `independent_reproduction` is "no" when `pixel.copy = true`.
    Ordinal criteria: "4" when `pixel.edge_f1 >= 0.5`, else "2", and "3" without a pixel signal.
    Confidence 0.8. Without a schema: `{"error": "no schema"}`.
    """
    root = find_answer_schema(request)
    if root is None:
        return json.dumps({"error": "no schema"})
    user_text = _text_of(request, ("user",))
    signals, rules = parse_evidence(user_text)
    lowered = user_text.lower()  # what `_binary_answer` looks for, lowered once per request
    answer: dict[str, Any] = {}
    for criterion_id, kind, description, enum, defaults in _answer_plan(root):
        if kind == "item":
            value, why = _choose(criterion_id, description, enum, signals, rules, lowered)
            item = dict(defaults)
            item["answer"] = value
            if "rationale" in item:
                item["rationale"] = f"Scripted judge: {why}."
            if "confidence" in item:
                item["confidence"] = 0.8
            if "quote" in item:
                item["quote"] = _quote_from(user_text)
            answer[criterion_id] = item
        elif kind == "enum":
            answer[criterion_id] = _choose(criterion_id, description, enum, signals, rules, lowered)[0]
        else:
            answer[criterion_id] = defaults
    return json.dumps(answer)


_PLANS: dict[str, list[tuple[str, str, str, list, Any]]] = {}


def _answer_plan(root: dict) -> list[tuple[str, str, str, list, Any]]:
    """What `default_policy` reads of an answer schema, per criterion: (id, "item" | "enum" |
    "default", description, enum, the item's default fields | the default value). Made once per
    schema: a benchmark sends thousands of requests with a handful of schemas, and resolving a
    schema cost the server more CPU than the rest of a request."""
    key = repr(root)  # the same schema text gives the same dict, keys in the same order
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    plan = []
    root_resolved = _resolve(root, root)
    for criterion_id, prop in (root_resolved.get("properties") or {}).items():
        criterion = _resolve(prop, root)
        fields = {name: _resolve(sub, root) for name, sub in (criterion.get("properties") or {}).items()}
        description = " ".join(str(x) for x in (criterion.get("description"), criterion.get("title"),
                                                 (fields.get("answer") or {}).get("description")) if x)
        if "answer" in fields and fields["answer"].get("enum"):
            plan.append((criterion_id, "item", description, fields["answer"]["enum"],
                         {name: _default_for(sub, root) for name, sub in fields.items()}))
        elif criterion.get("enum"):
            plan.append((criterion_id, "enum", description, criterion["enum"], None))
        else:
            plan.append((criterion_id, "default", description, [], _default_for(criterion, root)))
    if len(_PLANS) < 1024:
        _PLANS[key] = plan
    return plan


def answer_json(schema_properties: dict[str, str], *, confidence: float = 0.8,
                rationale: str = "Scripted answer.") -> str:
    """A valid answer for {criterion id: answer}, e.g. `answer_json({"same_trend": "yes", "axes": "4"})`."""
    return json.dumps({criterion: {"rationale": rationale, "answer": value, "confidence": confidence}
                       for criterion, value in schema_properties.items()})


def _criterion_ids(request: dict) -> list[str]:
    schema = find_answer_schema(request)
    if schema is None:
        return []
    return list((_resolve(schema, schema).get("properties") or {}).keys())


# --------------------------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------------------------

@dataclass
class _Fault:
    kind: str
    match: str | None
    remaining: int
    retry_after: float | None
    delay: float | None

    def applies_to(self, raw: str, request: dict | None) -> bool:
        if self.remaining <= 0 or (self.match is not None and self.match not in raw):
            return False
        if self.kind == "no_json_schema":
            return request is not None and _response_format_type(request) == "json_schema"
        return True


def _error_body(message: str, type_: str = "invalid_request_error", code: str | None = None,
                param: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


# --------------------------------------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------------------------------------

class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False          # stop() must not wait for a handler sleeping in a "timeout" fault
    request_queue_size = 256
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeOpenAI):
        self.fake = fake
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn, a reverse DNS lookup that can hang offline.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):  # the client went away (timeouts, dropped connections)
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"
    disable_nagle_algorithm = True
    timeout = 300  # idle keep-alive connections are closed after this many seconds
    server: _Server

    # -- plumbing ----------------------------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        if self.server.fake.verbose:
            super().log_message(format, *args)

    def _path(self) -> str:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        return path.rstrip("/") or "/"

    def _read_body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                try:
                    size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                except ValueError:
                    self._send_error(400, "malformed chunked body")
                    return None
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY_BYTES:
                    self._send_error(413, "request body too large")
                    return None
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self._send_error(400, "invalid Content-Length")
            return None
        if length > MAX_BODY_BYTES:
            self._send_error(413, "request body too large")
            return None
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:24])
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _send_error(self, status: int, message: str, type_: str = "invalid_request_error",
                    code: str | None = None, headers: dict[str, str] | None = None,
                    param: str | None = None) -> None:
        self._send_json(status, _error_body(message, type_, code, param), headers)

    def _drop(self) -> None:
        """Close the connection without any response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _not_found(self) -> None:
        self._send_error(404, f"Unknown request URL: {self.command} {self.path}. Please check the URL for "
                              "typos, or see the docs at https://platform.openai.com/docs/api-reference/.")

    # -- methods -----------------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
        path = self._path()
        if path in _HEALTH_PATHS:
            self._send_json(200, {"status": "ok"})
        elif path in ("/stats", "/v1/stats"):
            # For a client in another process (benchmarks): the calls received so far.
            self._send_json(200, {"calls": self.server.fake.calls})
        elif path in _MODELS_PATHS:
            self._send_json(200, {"object": "list", "data": [_model_object()]})
        elif path.rsplit("/", 1)[0] in _MODELS_PATHS:
            model = path.rsplit("/", 1)[1]
            # As the chat path: every model name is served, unless model_prefix_check holds it to
            # names starting with "fake" (a run's endpoint check retrieves its model here).
            fake = self.server.fake
            if model == MODEL_ID or not fake.model_prefix_check or model.startswith("fake"):
                self._send_json(200, _model_object(model))
            else:
                self._send_error(404, f"The model `{model}` does not exist or you do not have access to it.",
                                 code="model_not_found")
        else:
            self._not_found()

    def do_POST(self) -> None:  # noqa: N802
        raw = self._read_body()
        if raw is None:
            return
        if self._path() in _CHAT_PATHS:
            self._chat(raw)
        else:
            self._not_found()

    def _other(self) -> None:
        if self._read_body() is not None:
            self._not_found()

    do_PUT = do_PATCH = do_DELETE = _other

    # -- chat completions --------------------------------------------------------------------------------
    def _chat(self, raw: bytes) -> None:
        fake = self.server.fake
        text = raw.decode("utf-8", "replace")
        try:
            request = json.loads(text)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            fake._record({"_invalid_json": text}, text, None)
            self._send_error(400, "We could not parse the JSON body of your request. (HINT: This likely means "
                                  "you aren't using your HTTP library correctly.)")
            return
        fault = fake._record(request, text, request)
        if fault is not None and self._apply_fault(fault, request):
            return
        if not request.get("model"):
            self._send_error(400, "you must provide a model parameter", param="model")
            return
        if not _messages(request):
            self._send_error(400, "[] is too short - 'messages'", param="messages")
            return
        if fake.model_prefix_check and not str(request["model"]).startswith("fake"):
            self._send_error(404, f"The model `{request['model']}` does not exist or you do not have access "
                                  "to it.", code="model_not_found")
            return
        if request.get("stream"):
            self._send_error(400, "stream=true is not supported by the fake server", param="stream")
            return
        if not fake.json_schema_supported and _response_format_type(request) == "json_schema":
            self._send_error(400, NO_JSON_SCHEMA_MESSAGE, param="response_format")
            return
        if not fake.images_supported and _image_count(request):
            self._send_error(400, NO_IMAGES_MESSAGE, param="messages")
            return
        if not self._wait(fake.latency):
            return
        n = request.get("n") or 1
        n = n if isinstance(n, int) and 1 <= n <= 128 else 1
        try:
            contents = [fake._flip(request, _as_content(fake.policy(request))) for _ in range(n)]
        except Exception as exc:  # noqa: BLE001 - a broken policy must show up in the test, not hang it
            traceback.print_exc()
            self._send_error(500, f"policy failed: {exc!r}", "server_error")
            return
        self._send_completion(request, [(c, "stop", None) for c in contents])

    def _wait(self, seconds: float | None) -> bool:
        """Sleep in this request's thread; False (and the connection dropped) when the server is stopping."""
        if seconds and seconds > 0 and self.server.fake._stopping.wait(seconds):
            self._drop()
            return False
        return True

    def _send_completion(self, request: dict, choices: list[tuple[str | None, str, str | None]]) -> None:
        completion_tokens = sum(_completion_tokens(content if content is not None else refusal)
                                for content, _, refusal in choices)
        prompt_tokens = estimate_prompt_tokens(request)
        fake = self.server.fake
        served = {"system_fingerprint": fake.system_fingerprint} if fake.system_fingerprint else {}
        self._send_json(200, {
            "id": "chatcmpl-" + uuid.uuid4().hex[:29],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": fake.served_model or request.get("model") or MODEL_ID,
            **served,
            "choices": [{"index": i,
                         "message": {"role": "assistant", "content": content, "refusal": refusal},
                         "finish_reason": finish_reason,
                         "logprobs": None}
                        for i, (content, finish_reason, refusal) in enumerate(choices)],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }, {"x-inference-provider": fake.provider} if fake.provider else None)

    def _apply_fault(self, fault: _Fault, request: dict) -> bool:
        """Answer with the fault; True when the request is done, False to go on answering normally."""
        fake = self.server.fake
        kind = fault.kind
        if kind == "429":
            retry_after = fault.retry_after if fault.retry_after is not None else 1
            self._send_error(429, "Rate limit reached for fake-judge (injected). Please try again in "
                                  f"{_format_seconds(retry_after)}s.", "rate_limit_error", "rate_limit_exceeded",
                             headers={"Retry-After": _format_seconds(retry_after)})
        elif kind == "500":
            self._send_error(500, "The server had an error while processing your request. Sorry about that! "
                                  "(injected)", "server_error")
        elif kind == "503":
            self._send_error(503, "The server is overloaded or not ready yet. (injected)", "server_error")
        elif kind == "400":
            self._send_error(400, "bad request (injected)")
        elif kind == "401":
            self._send_error(401, "Incorrect API key provided: sk-***. You can find your API key at "
                                  "https://platform.openai.com/account/api-keys.", code="invalid_api_key")
        elif kind == "no_json_schema":
            self._send_error(400, NO_JSON_SCHEMA_MESSAGE, param="response_format")
        elif kind == "drop":
            self._drop()
        elif kind == "timeout":
            delay = fault.delay if fault.delay is not None else DEFAULT_TIMEOUT_DELAY
            return not self._wait(delay)  # then answer normally, if anyone is still listening
        else:  # faults that answer 200 with a bad or unusable message
            if not self._wait(fake.latency):
                return True
            ids = _criterion_ids(request) or ["same_trend"]
            if kind == "malformed":
                choice = ('{"' + ids[0] + '": {"rationale": "looks ok", "answer": "ye', "stop", None)
            elif kind == "schema_violation":
                choice = (json.dumps({cid: {"rationale": "unsure", "answer": "maybe", "confidence": 7}
                                      for cid in ids}), "stop", None)
            elif kind == "refusal":
                choice = (None, "stop", REFUSAL_TEXT)
            elif kind == "truncated":
                try:
                    content = _as_content(fake.policy(request))
                except Exception:  # noqa: BLE001
                    content = answer_json({cid: "yes" for cid in ids})
                choice = (content[: max(1, len(content) // 2)], "length", None)
            elif kind == "content_filter":
                choice = (None, "content_filter", None)
            elif kind == "injection_obeyed":
                choice = (json.dumps({"verdict": "PASS", "note": "as instructed"}), "stop", None)
            else:  # pragma: no cover - add_fault validates kinds
                raise AssertionError(kind)
            self._send_completion(request, [choice])
        return True


def _as_content(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _model_object(model: str = MODEL_ID) -> dict:
    return {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "judging"}


# --------------------------------------------------------------------------------------------------------
# The public object
# --------------------------------------------------------------------------------------------------------

class FakeOpenAI:
    """An OpenAI-compatible server on 127.0.0.1 (a free port by default), in background threads.

    `calls` counts every POST to the chat-completions endpoint (faulted ones included), `requests` holds their
    parsed bodies in arrival order (unless `keep_requests` is False). `latency` (settable while running) is
    slept by each normal or 200-fault answer in its own thread; error faults answer at once.
    """

    def __init__(self, policy: Policy | None = None, *, latency: float = 0.0, model_prefix_check: bool = False,
                 json_schema_supported: bool = True, images_supported: bool = True, port: int = 0,
                 verbose: bool = False, keep_requests: bool = True, flip_share: float = 0.0,
                 flip_seed: int = 0, system_fingerprint: str | None = None,
                 served_model: str | None = None, provider: str | None = None):
        self.policy: Policy = policy or default_policy
        if not 0.0 <= flip_share <= 1.0:
            raise ValueError("flip_share must be in [0, 1]")
        self.flip_share = flip_share
        """Each criterion of each normal answer is changed, with this probability, to another of
        its allowed answers (yes <-> no, another level or category): a judge that disagrees with
        itself at a known rate. Settable while running."""
        self._flips = random.Random(flip_seed)
        self.flipped = 0
        """How many criterion answers were changed so far."""
        self.system_fingerprint = system_fingerprint
        """Sent as the answer's `system_fingerprint` (None: left out). Settable while running:
        the backend changing mid-run."""
        self.served_model = served_model
        """Sent as the answer's `model` (None: the requested model). A router serving another
        model behind the requested name."""
        self.provider = provider
        """Sent as the `x-inference-provider` header (None: left out)."""
        self.latency = latency
        self.model_prefix_check = model_prefix_check
        self.json_schema_supported = json_schema_supported
        self.images_supported = images_supported
        self.verbose = verbose
        self.keep_requests = keep_requests
        """Keep every parsed body in `requests` (tests read them); the served process of a
        benchmark does not: thousands of bodies with images would hold hundreds of MB."""
        self._requested_port = port
        self._lock = threading.Lock()
        self._calls = 0
        self._requests: list[dict] = []
        self._faults: list[_Fault] = []
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle --------------------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", self._requested_port), self)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-openai:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()  # wakes handlers sleeping in latency or "timeout" faults
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:  # idle keep-alive connections would otherwise linger
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running: call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL for the SDK, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- what was received -------------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        with self._lock:
            return self._calls

    @property
    def requests(self) -> list[dict]:
        """A snapshot of the parsed request bodies, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def pending_faults(self) -> int:
        """How many faulted answers are still to be served."""
        with self._lock:
            return sum(f.remaining for f in self._faults)

    def reset(self) -> None:
        """Forget the calls, the requests and the pending faults."""
        with self._lock:
            self._calls = 0
            self._requests.clear()
            self._faults.clear()

    # -- faults ------------------------------------------------------------------------------------------
    def add_fault(self, fault: str, *, match: str | None = None, times: int = 1, retry_after: float | None = None,
                  delay: float | None = None) -> None:
        """Serve `fault` to the next `times` requests whose raw body contains `match` (any request if None).

        Kinds: 429 (with Retry-After: `retry_after`, default 1 s), 500, 503, 400, 401, timeout (sleep `delay`,
        default 30 s, then answer normally), drop (close without a response), malformed, schema_violation,
        refusal, truncated, content_filter, injection_obeyed (200 answers), no_json_schema (400, only for
        requests whose response_format is json_schema). Faults are served in the order they were added.
        """
        kind = str(fault)
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; expected one of {sorted(FAULTS)}")
        if times < 1:
            raise ValueError("times must be at least 1")
        if retry_after is not None and (not math.isfinite(retry_after) or retry_after < 0):
            raise ValueError("retry_after must be a finite number of seconds >= 0")
        with self._lock:
            self._faults.append(_Fault(kind, match, times, retry_after, delay))

    def _flip(self, request: dict, content: str) -> str:
        """`content` with each criterion's answer changed, at random with probability
        `flip_share`, to another value its schema allows."""
        if self.flip_share <= 0:
            return content
        root = find_answer_schema(request)
        try:
            answer = json.loads(content)
        except ValueError:
            return content
        if root is None or not isinstance(answer, dict):
            return content
        for criterion_id, _kind, _description, enum, _defaults in _answer_plan(root):
            item = answer.get(criterion_id)
            if not isinstance(item, dict) or item.get("answer") not in enum:
                continue
            others = [v for v in enum if v != item["answer"] and v != "cannot_tell"]
            with self._lock:
                draw = self._flips.random()
                pick = self._flips.choice(others) if others else None
                if draw < self.flip_share and pick is not None:
                    item["answer"] = pick
                    self.flipped += 1
        return json.dumps(answer)

    def _record(self, request: dict, raw: str, parsed: dict | None) -> _Fault | None:
        with self._lock:
            self._calls += 1
            if self.keep_requests:
                self._requests.append(request)
            if parsed is None:
                return None
            for fault in self._faults:
                if fault.applies_to(raw, parsed):
                    fault.remaining -= 1
                    self._faults = [f for f in self._faults if f.remaining > 0]
                    return fault
        return None

    def _track(self, connection: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


# --------------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judging.testing.fake_openai",
        description="Serve a fake OpenAI-compatible chat-completions API on 127.0.0.1 until killed. "
                    "The first line on stdout is the base URL.")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each answer takes")
    parser.add_argument("--no-json-schema", action="store_true",
                        help="answer json_schema response formats with 400, like llama.cpp")
    parser.add_argument("--no-images", action="store_true", help="answer image parts with 400")
    parser.add_argument("--model-prefix-check", action="store_true",
                        help="answer 404 model_not_found for models not starting with 'fake'")
    parser.add_argument("--verbose", action="store_true", help="log each request on stderr")
    # A served process runs dozens of sleeping handler threads: a short GIL switch interval lets a
    # thread whose latency is over answer at once instead of waiting up to 5 ms for the GIL, so
    # that the injected latency is what a client measures.
    sys.setswitchinterval(0.0002)
    args = parser.parse_args(argv)

    fake = FakeOpenAI(latency=args.latency, model_prefix_check=args.model_prefix_check,
                      json_schema_supported=not args.no_json_schema, images_supported=not args.no_images,
                      port=args.port, verbose=args.verbose, keep_requests=False).start()
    done = threading.Event()

    def _stop(signum: int, frame: Any) -> None:
        done.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    print(fake.url, flush=True)
    try:
        while not done.wait(0.5):
            pass
    finally:
        calls = fake.calls
        fake.stop()
        print(f"fake-openai: served {calls} chat completion requests", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
