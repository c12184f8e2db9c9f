"""A local HTTP server that speaks the Anthropic Messages API, for tests of the real SDK path.

Serves ``POST /v1/messages`` on 127.0.0.1 (an OS-chosen port) from a daemon thread; any other
path is a 404 in the API's error shape. Replies are scripted per request, in order::

    with MessagesAPIServer() as api:
        api.script(ToolUse({"ok": True}), Status(429), Text("no tool"), RawBody("{not json"))
        engine = AnthropicEngine(api_key="test", base_url=api.url)
        ...
        api.requests[0]["tool_choice"]   # the JSON bodies received, in order

With the script empty, ``api.responder(request_json) -> reply`` answers (default: a
``ToolUse`` with ``{}`` for the forced tool). A reply's ``delay`` is slept in its own handler
thread and is cut short by ``close()``, so a slow reply blocks neither other requests nor
shutdown.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.local_api import LocalAPIServer

__all__ = ["MessagesAPIServer", "RawBody", "Reply", "Status", "Text", "ToolUse"]


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` message; ``name`` None means the tool the request forced."""

    input: Any  # normally a dict; anything else makes a malformed tool call
    name: str | None = None
    delay: float = 0
    usage: tuple[int, int] | None = None  # (input_tokens, output_tokens); None: estimated


@dataclass(frozen=True)
class Text:
    """A text-only message (``stop_reason`` end_turn): malformed for a forced tool call."""

    text: str
    delay: float = 0
    usage: tuple[int, int] | None = None


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Status:
    """An API error: ``{"type": "error", "error": {"type": error_type, "message": message}}``."""

    code: int
    error_type: str | None = None  # None: the API's type for the code (429 rate_limit_error...)
    message: str = "scripted error"
    delay: float = 0


@dataclass(frozen=True)
class RawBody:
    """Any body at all, e.g. invalid JSON."""

    text: str
    status: int = 200
    delay: float = 0
    content_type: str = "application/json"


Reply = ToolUse | Text | Status | RawBody
Responder = Callable[[dict[str, Any]], Reply]


def default_responder(request: dict[str, Any]) -> Reply:
    return ToolUse({})


class MessagesAPIServer(LocalAPIServer):
    """See the module docstring. ``url`` is the SDK's ``base_url``."""

    thread_name = "messages-api"

    def __init__(self, responder: Responder = default_responder) -> None:
        super().__init__(responder)
        self.responder: Responder = responder


def _message(
    request: dict[str, Any],
    n: int,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: tuple[int, int] | None,
) -> dict[str, Any]:
    if usage is None:  # a deterministic stand-in for token counts
        asked = json.dumps([request.get("system"), request.get("messages")])
        usage = (max(1, len(asked) // 4), max(1, len(json.dumps(content)) // 4))
    return {
        "id": f"msg_local_{n:06d}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "unknown"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def _forced_tool(request: dict[str, Any]) -> str:
    choice = request.get("tool_choice") or {}
    if choice.get("type") == "tool" and choice.get("name"):
        return choice["name"]
    tools = request.get("tools") or []
    return tools[0].get("name", "tool") if tools else "tool"


def _error_body(code: int, error_type: str | None, message: str) -> str:
    return json.dumps(
        {
            "type": "error",
            "error": {
                "type": error_type or _ERROR_TYPES.get(code, "api_error"),
                "message": message,
            },
        }
    )


def _render(reply: Reply, request: dict[str, Any], n: int) -> tuple[int, str, str]:
    """(status, content type, body) for a reply."""
    if isinstance(reply, ToolUse):
        block = {
            "type": "tool_use",
            "id": f"toolu_local_{n:06d}",
            "name": reply.name or _forced_tool(request),
            "input": reply.input,
        }
        body = _message(request, n, [block], "tool_use", reply.usage)
        return 200, "application/json", json.dumps(body)
    if isinstance(reply, Text):
        body = _message(request, n, [{"type": "text", "text": reply.text}], "end_turn", reply.usage)
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
    api: MessagesAPIServer  # bound per server in start()
    protocol_version = "HTTP/1.1"  # keep-alive, as the real API
    timeout = 30  # an idle keep-alive connection's thread ends after this

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read .requests instead

    def do_GET(self) -> None:
        self._drain()
        self._send(404, "application/json", _error_body(404, None, f"no route {self.path}"))

    def do_POST(self) -> None:
        body = self._drain()
        if self.path.split("?", 1)[0] != "/v1/messages":
            self._send(404, "application/json", _error_body(404, None, f"no route {self.path}"))
            return
        try:
            request = json.loads(body or b"null")
        except ValueError:
            request = None
        if not isinstance(request, dict):
            self._send(
                400, "application/json", _error_body(400, None, "request body is not a JSON object")
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
            self.send_header("request-id", "req_local")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. it timed out)


MessagesAPIServer.handler = _Handler
