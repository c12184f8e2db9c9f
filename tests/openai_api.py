"""A local HTTP server that speaks the OpenAI chat-completions API with tool calls, as Ollama,
vLLM, llama.cpp's server and LiteLLM do, for tests of the real ``openai`` SDK path.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1 (an OS-chosen
port) from a daemon thread; any other path is a 404 in the API's error shape. Replies are
scripted per request, in order (the models list too)::

    with ChatAPIServer(models=["llama3.1:latest"]) as api:
        api.script(ToolCall({"ok": True}), Status(429), Text("no tool"), RawBody("{not json"))
        engine = OpenAIEngine(model="llama3.1", base_url=api.url)
        ...
        api.requests[0]["tool_choice"]   # the JSON bodies received, in order

With the script empty, ``api.responder(request_json) -> reply`` answers (default: a
``ToolCall`` with ``{}`` for the forced function). A reply's ``delay`` is slept in its own
handler thread and is cut short by ``close()``, so a slow reply blocks neither other
requests nor shutdown. ``api.model_requests`` counts ``GET /v1/models``.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.local_api import LocalAPIServer, ServerState

__all__ = ["ChatAPIServer", "RawBody", "Reply", "Status", "Text", "ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """An assistant message with one tool call; ``name`` None: the function the request
    forced. ``arguments``: a JSON value (sent as its JSON text, as the API does) or a
    ``str`` sent as it is (e.g. text that is not JSON)."""

    arguments: Any
    name: str | None = None
    delay: float = 0
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens)
    content: str | None = None  # text next to the call (some models think aloud)


@dataclass(frozen=True)
class Text:
    """A text-only answer (``finish_reason`` stop): malformed for a forced tool call."""

    text: str
    delay: float = 0
    usage: tuple[int, int] | None = None


@dataclass(frozen=True)
class Status:
    """An API error: ``{"error": {"message": message, "type": error_type, "code": ...}}``."""

    code: int
    error_type: str = "server_error"
    message: str = "scripted error"
    delay: float = 0


@dataclass(frozen=True)
class RawBody:
    """Any body at all, e.g. invalid JSON."""

    text: str
    status: int = 200
    delay: float = 0
    content_type: str = "application/json"


Reply = ToolCall | Text | Status | RawBody
Responder = Callable[[dict[str, Any]], Reply]


def default_responder(request: dict[str, Any]) -> Reply:
    return ToolCall({})


@dataclass
class _State(ServerState):
    model_script: deque[Status | RawBody] = field(default_factory=deque)
    model_requests: int = 0


class ChatAPIServer(LocalAPIServer):
    """See the module docstring. ``url`` is the SDK's ``base_url`` (ends in ``/v1``)."""

    path = "/v1"
    thread_name = "chat-api"
    _state: _State

    def __init__(
        self, responder: Responder = default_responder, *, models: Sequence[str] = ("local",)
    ) -> None:
        super().__init__(responder)
        self.responder: Responder = responder
        self.models = list(models)

    def _new_state(self) -> _State:
        return _State()

    @property
    def model_requests(self) -> int:
        """How many times ``GET /v1/models`` was asked."""
        with self._state.lock:
            return self._state.model_requests

    def script_models(self, *replies: Status | RawBody) -> ChatAPIServer:
        """Queue failures for the next ``GET /v1/models`` (then the model list is served)."""
        with self._state.lock:
            self._state.model_script.extend(replies)
        return self

    def next_models_reply(self) -> Status | RawBody | None:
        """The scripted reply to a /v1/models request (None: the default list)."""
        with self._state.lock:
            self._state.model_requests += 1
            return self._state.model_script.popleft() if self._state.model_script else None


def _forced_function(request: dict[str, Any]) -> str:
    choice = request.get("tool_choice")
    if isinstance(choice, dict) and (choice.get("function") or {}).get("name"):
        return choice["function"]["name"]
    tools = request.get("tools") or []
    return tools[0].get("function", {}).get("name", "tool") if tools else "tool"


def _completion(
    request: dict[str, Any],
    n: int,
    message: dict[str, Any],
    finish_reason: str,
    usage: tuple[int, int] | None,
) -> dict[str, Any]:
    if usage is None:  # a deterministic stand-in for token counts
        asked = json.dumps(request.get("messages"))
        usage = (max(1, len(asked) // 4), max(1, len(json.dumps(message)) // 4))
    return {
        "id": f"chatcmpl-local-{n:06d}",
        "object": "chat.completion",
        "created": 1_800_000_000 + n,
        "model": request.get("model", "unknown"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


def _error_body(code: int, error_type: str, message: str) -> str:
    return json.dumps(
        {"error": {"message": message, "type": error_type, "param": None, "code": str(code)}}
    )


def _render(
    reply: Reply | Status | RawBody, request: dict[str, Any], n: int
) -> tuple[int, str, str]:
    """(status, content type, body) for a reply."""
    if isinstance(reply, ToolCall):
        arguments = reply.arguments
        message = {
            "role": "assistant",
            "content": reply.content,
            "tool_calls": [
                {
                    "id": f"call_local_{n:06d}",
                    "type": "function",
                    "function": {
                        "name": reply.name or _forced_function(request),
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments),
                    },
                }
            ],
        }
        body = _completion(request, n, message, "tool_calls", reply.usage)
        return 200, "application/json", json.dumps(body)
    if isinstance(reply, Text):
        message = {"role": "assistant", "content": reply.text}
        body = _completion(request, n, message, "stop", reply.usage)
        return 200, "application/json", json.dumps(body)
    if isinstance(reply, Status):
        return (
            reply.code,
            "application/json",
            _error_body(reply.code, reply.error_type, reply.message),
        )
    if isinstance(reply, RawBody):
        return reply.status, reply.content_type, reply.text
    raise TypeError(f"not a scripted reply: {reply!r}")


class _Handler(BaseHTTPRequestHandler):
    api: ChatAPIServer  # bound per server in start()
    protocol_version = "HTTP/1.1"  # keep-alive, as the real servers
    timeout = 30  # an idle keep-alive connection's thread ends after this

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read .requests instead

    def do_GET(self) -> None:
        self._drain()
        if self.path.split("?", 1)[0] != "/v1/models":
            self._send(
                404, "application/json", _error_body(404, "not_found", f"no route {self.path}")
            )
            return
        scripted = self.api.next_models_reply()
        if scripted is not None:
            if scripted.delay > 0 and self.api.closing_within(scripted.delay):
                self.close_connection = True
                return
            status, content_type, text = _render(scripted, {}, 0)
            self._send(status, content_type, text)
            return
        data = [
            {"id": name, "object": "model", "created": 1_800_000_000, "owned_by": "local"}
            for name in self.api.models
        ]
        self._send(200, "application/json", json.dumps({"object": "list", "data": data}))

    def do_POST(self) -> None:
        body = self._drain()
        if self.path.split("?", 1)[0] != "/v1/chat/completions":
            self._send(
                404, "application/json", _error_body(404, "not_found", f"no route {self.path}")
            )
            return
        try:
            request = json.loads(body or b"null")
        except ValueError:
            request = None
        if not isinstance(request, dict):
            self._send(
                400,
                "application/json",
                _error_body(400, "invalid_request_error", "request body is not a JSON object"),
            )
            return
        api = self.api
        scripted, n = api.next_reply(request)
        reply = scripted if scripted is not None else api.responder(request)
        if reply.delay > 0 and api.closing_within(reply.delay):
            self.close_connection = True
            return  # shutting down: drop the request unanswered
        status, content_type, text = _render(reply, request, n)
        api.record_reply(status, text)
        self._send(status, content_type, text)

    def _drain(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, content_type: str, text: str) -> None:
        data = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", "req_local")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. it timed out)


ChatAPIServer.handler = _Handler
