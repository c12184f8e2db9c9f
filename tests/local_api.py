"""What the local model servers of the tests share: an HTTP server on 127.0.0.1 (an
OS-chosen port) in a daemon thread, replies scripted per request in order, the requests
and answers kept for the test to read, and ``close()`` cutting short a reply's delay.

``messages_api.MessagesAPIServer`` (the Messages API) and ``openai_api.ChatAPIServer``
(chat completions) subclass ``LocalAPIServer`` with their handler and their URL's path."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["LocalAPIServer", "ServerState"]


@dataclass
class ServerState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    script: deque[Any] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    responses: list[tuple[int, str]] = field(default_factory=list)
    closing: threading.Event = field(default_factory=threading.Event)
    counter: int = 0


class LocalAPIServer:
    """A started server answers with the script, then with ``responder(request_json)``."""

    handler: type[BaseHTTPRequestHandler]  # the subclass's request handler (reads ``api``)
    path = ""  # what ``url`` ends with: the SDK's base_url
    thread_name = "local-api"

    def __init__(self, responder: Callable[[dict[str, Any]], Any]) -> None:
        self.responder = responder
        self._state = self._new_state()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def closing_within(self, delay: float) -> bool:
        """Sleep ``delay`` seconds; True if the server started closing meanwhile."""
        return self._state.closing.wait(delay)

    def _new_state(self) -> ServerState:
        return ServerState()

    # lifecycle -----------------------------------------------------------------------
    def start(self) -> Self:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (self.handler,), {"api": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is None:
            return
        self._state.closing.set()  # wakes handlers sleeping a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # test surface ----------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{self.path}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the API requests received, in order (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def responses(self) -> list[tuple[int, str]]:
        """(status, body text) of each answer sent, in order (a copy)."""
        with self._state.lock:
            return list(self._state.responses)

    def script(self, *replies: Any) -> Self:
        """Queue replies for the next requests (then the responder takes over)."""
        with self._state.lock:
            self._state.script.extend(replies)
        return self

    # the request handler's surface (a companion of this class, in another module) --------
    def next_reply(self, request: dict[str, Any]) -> tuple[Any, int]:
        """Record ``request``; the scripted reply for it (None: ask the responder) and its
        number."""
        with self._state.lock:
            self._state.requests.append(request)
            self._state.counter += 1
            scripted = self._state.script.popleft() if self._state.script else None
            return scripted, self._state.counter

    def record_reply(self, status: int, body: str) -> None:
        """An answer was sent."""
        with self._state.lock:
            self._state.responses.append((status, body))
