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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

import uvicorn

from dashboard.app import create_app
from executive.bus import Bus
from executive.errors import ExecutiveError

__all__ = ["DashboardError", "DashboardServer", "start_dashboard"]

log = logging.getLogger(__name__)


class DashboardError(ExecutiveError):
    """The dashboard could not be started (port in use, bad host, failed start-up)."""


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers, and with an event set once it has started."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self):  # uvicorn >= 0.29: the hook that installs the handlers
        yield

    def install_signal_handlers(self) -> None:  # older uvicorn's hook
        pass

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.ready.set()


def _bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise DashboardError(f"--host {host!r}: cannot resolve it ({exc})") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        reason = "already in use" if getattr(exc, "errno", None) == 98 else exc.strerror or exc
        raise DashboardError(f"cannot serve the dashboard on {host}:{port}: {reason} "
                             "(choose another --port, or 0 for any free port)") from None
    return sock


def _display_host(host: str, family: int) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if family == socket.AF_INET6 and ":" in host else host


class DashboardServer:
    def __init__(self, server: _Server, task: asyncio.Task, sock: socket.socket, host: str,
                 token: str, app) -> None:
        self.app = app
        self.token = token
        self._server = server
        self._task = task
        self._sock = sock
        self.host = host
        self.port = sock.getsockname()[1]
        self.url = f"http://{_display_host(host, sock.family)}:{self.port}"

    @property
    def page_url(self) -> str:
        return f"{self.url}/?token={self.token}"

    @property
    def running(self) -> bool:
        return not self._task.done()

    async def stop(self, timeout: float = 5.0) -> None:
        if self._task.done():
            self._sock.close()
            return
        self._server.should_exit = True
        done, _ = await asyncio.wait({self._task}, timeout=timeout)
        if not done:  # a connection that will not close: stop waiting for it
            self._server.force_exit = True
            done, _ = await asyncio.wait({self._task}, timeout=timeout)
            if not done:
                self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._sock.close()


async def start_dashboard(bus: Bus, *, host: str = "127.0.0.1", port: int = 8000, token: str,
                          trace_url: str | None = None, **app_options: Any) -> DashboardServer:
    app = create_app(bus, token=token, trace_url=trace_url, **app_options)
    sock = _bind(host, port)
    config = uvicorn.Config(app, host=host, port=sock.getsockname()[1], log_level="warning",
                            access_log=False, lifespan="on", ws_max_size=64 * 1024,
                            timeout_graceful_shutdown=2)
    server = _Server(config)

    async def serve() -> None:
        try:
            await server.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn's way of saying that start-up failed
            raise DashboardError(f"the dashboard failed to start on {host}:{port} "
                                 f"(exit {exc.code}); see the log above") from None

    task = asyncio.get_running_loop().create_task(serve(), name="dashboard")
    ready = asyncio.get_running_loop().create_task(server.ready.wait())
    await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        ready.cancel()
        sock.close()
        exc = task.exception() if not task.cancelled() else None
        raise exc if isinstance(exc, DashboardError) else DashboardError(
            f"the dashboard stopped while starting: {exc}")
    log.info("dashboard serving on %s", f"{host}:{sock.getsockname()[1]}")
    return DashboardServer(server, task, sock, host, token, app)
