"""Serving the dashboard inside the caller's event loop (no threads, no second loop).

Contract
--------
Options
    ``await start_dashboard(bus, *, host="127.0.0.1", port=8000, token, trace_url=None,
    **app_options)``; ``port=0`` picks a free port. ``app_options`` go to ``create_app``.
Consumes / produces
    Whatever the app does (``dashboard.app``): the bus's out topics in, ``cmd`` out.
Lifecycle
    Returns a started ``DashboardServer`` once the port is bound and the app's lifespan has
    run (a port already in use, or a failed start, raises ``DashboardError`` naming it);
    ``.url`` is the base address, ``.page_url`` the page with its token; ``await stop()``
    shuts it down (websockets closed, mirror stopped).

uvicorn runs as a task of the current loop with its signal handling switched off: SIGINT
belongs to the CLI that started the mission (Ctrl-C stops the mission, then the server).

Every connection's socket gives up on a peer that has accepted no data for the app's
``stall_timeout_s`` (``TCP_USER_TIMEOUT``, Linux): a websocket client that stopped reading
is dropped by the app after that long (``dashboard.streams``), and this resets its socket
too, which no close frame could (uvicorn would otherwise hold it, unflushed, for as long as
the peer's kernel answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI

from dashboard.app import create_app
from executive.bus import Bus
from executive.errors import ExecutiveError

__all__ = ["DashboardError", "DashboardServer", "bind", "start_dashboard"]

log = logging.getLogger(__name__)


class DashboardError(ExecutiveError):
    """The dashboard could not be started (port in use, bad host, failed start-up)."""


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers, and with an event set once it has started."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # uvicorn >= 0.29: installs the handlers
        yield

    def install_signal_handlers(self) -> None:  # older uvicorn's hook
        pass

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.ready.set()


def bind(host: str, port: int, user_timeout_s: float | None = None) -> socket.socket:
    """A listening socket on ``host:port`` (0: any free port) whose connections give up on
    a peer that accepted nothing for ``user_timeout_s``; ``DashboardError`` naming why not."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise DashboardError(f"--host {host!r}: cannot resolve it ({exc})") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if user_timeout_s is not None and hasattr(socket, "TCP_USER_TIMEOUT"):
            # Inherited by every accepted connection: unacknowledged (or unaccepted, the
            # peer's window shut) data for this long resets it.
            timeout_ms = max(1, round(user_timeout_s * 1000))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, timeout_ms)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        reason = "already in use" if getattr(exc, "errno", None) == 98 else exc.strerror or exc
        raise DashboardError(
            f"cannot serve the dashboard on {host}:{port}: {reason} "
            "(choose another --port, or 0 for any free port)"
        ) from None
    return sock


def display_host(host: str, family: int) -> str:
    """How a page's address names ``host`` (a wildcard as the loopback address)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if family == socket.AF_INET6 and ":" in host else host


class DashboardServer:
    """A dashboard being served: its app, its address, and how to stop it."""

    def __init__(
        self,
        server: _Server,
        task: asyncio.Task[None],
        sock: socket.socket,
        host: str,
        token: str,
        app: FastAPI,
    ) -> None:
        self.app = app
        self.token = token
        self._server = server
        self._task = task
        self._sock = sock
        self.host = host
        self.port = sock.getsockname()[1]
        self.url = f"http://{display_host(host, sock.family)}:{self.port}"

    @property
    def page_url(self) -> str:
        """The page's address with the control token (the page stores it and hides it)."""
        return f"{self.url}/?token={self.token}"

    @property
    def running(self) -> bool:
        """Whether uvicorn is still serving."""
        return not self._task.done()

    async def stop(self, timeout: float = 5.0) -> None:
        """Shut down gracefully (what is queued for each page is sent first, up to 2 s; the
        app's lifespan closes the websockets), forcing it after ``timeout`` seconds, and
        release the socket."""
        if self._task.done():
            self._sock.close()
            return
        await self.app.state.context.streams.flush(min(2.0, timeout))
        self._server.should_exit = True
        done, _ = await asyncio.wait({self._task}, timeout=timeout)
        if not done:  # a connection that will not close: stop waiting for it
            self._server.force_exit = True
            done, _ = await asyncio.wait({self._task}, timeout=timeout)
            if not done:
                self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._sock.close()


async def start_dashboard(
    bus: Bus,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str,
    trace_url: str | None = None,
    sock: socket.socket | None = None,
    **app_options: Any,
) -> DashboardServer:
    """Serve ``create_app(bus, token=..., trace_url=..., **app_options)`` on ``host:port`` as
    a task of the running loop; return once it is listening (see the module's contract).
    ``sock``: a socket already bound and listening (``bind``), served instead of
    ``host:port``."""
    app = create_app(bus, token=token, trace_url=trace_url, **app_options)
    if sock is None:
        sock = bind(host, port, app.state.context.settings.stall_timeout_s)
    config = uvicorn.Config(
        app,
        host=host,
        port=sock.getsockname()[1],
        log_level="warning",
        access_log=False,
        lifespan="on",
        ws_max_size=64 * 1024,
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)

    async def serve() -> None:
        """uvicorn's serve on the bound socket; a failed start-up as a DashboardError."""
        try:
            await server.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn's way of saying that start-up failed
            raise DashboardError(
                f"the dashboard failed to start on {host}:{port} "
                f"(exit {exc.code}); see the log above"
            ) from None

    task = asyncio.get_running_loop().create_task(serve(), name="dashboard")
    ready = asyncio.get_running_loop().create_task(server.ready.wait())
    await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        ready.cancel()
        sock.close()
        exc = task.exception() if not task.cancelled() else None
        raise (
            exc
            if isinstance(exc, DashboardError)
            else DashboardError(f"the dashboard stopped while starting: {exc}")
        )
    log.info("dashboard serving on %s", f"{host}:{sock.getsockname()[1]}")
    return DashboardServer(server, task, sock, host, token, app)
