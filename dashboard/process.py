"""The dashboard served by a process of its own, so that the mission never waits on its
viewers (issue 24: N websocket clients cost the tick nothing measurable).

Contract
--------
Options
    ``await start_dashboard_process(bus, *, host="127.0.0.1", port=8000, token,
    trace_url=None, nice=5, start_timeout_s=60.0, **app_options)``: the same arguments as
    ``dashboard.server.start_dashboard`` (``app_options`` go to ``create_app`` in the other
    process, so they must pickle), ``nice`` the priority the viewers' process gives up.
Consumes / produces
    The bus's out topics, each encoded to JSON once in this process and sent over a socket
    pair (``executive.bus.pipe.PipeBridge``); the ``cmd`` messages the app accepts come
    back and are published on ``bus``. The app in the other process is the whole dashboard
    (``dashboard.app``: page, REST API, SSE, ``/ws/live``, token and the cap on anonymous
    viewers) on a ``PipeBus``.
Lifecycle
    Returns a ``DashboardProcess`` once the other process serves (the port is bound here
    first, so a port in use raises ``DashboardError`` at once; a failed start raises it with
    the reason); ``.url``, ``.page_url``, ``await stop()`` (what was published is sent first,
    then the pages are flushed and the process ends, killed if it will not). The process
    ignores SIGINT (Ctrl-C belongs to the run) and ends by itself when this one is gone.

Why a process. Serving hundreds of websockets is Python work per frame per client (the
tasks, the websocket framing, the socket writes): on the mission's event loop it made the
ticks late (0.82 of the commanded pace with 300 anonymous viewers at 5x). A thread with its
own event loop takes it off the loop but not off the GIL: the mission's thread would still
wait for the interpreter behind the viewers' thousands of sends a second. In a process of its
own the viewers cost this process one JSON encoding and one write per message, however many
they are; the operating system schedules the rest on the other core, and ``nice`` tells it
that the mission comes first when both want the same one. Each message is encoded once here
and reused as is for every client with the ground truth (``Message.encoded``); the public
view is encoded once more over there. The per-client thinning (``anonymous_fps``), the slow
clients dropped and the cap on anonymous viewers stay where they were (``dashboard.streams``).
The local MQTT bus could carry the same, but a run needs no broker: a socket pair does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import socket
from dataclasses import dataclass
from typing import Any

from dashboard.server import DashboardError, bind, display_host, start_dashboard
from dashboard.settings import DashboardSettings
from executive.bus import Bus
from executive.bus.pipe import PipeBridge, PipeBus, write_frame

__all__ = ["DashboardProcess", "start_dashboard_process"]

log = logging.getLogger(__name__)

_READY, _STOP, _ERROR, _CLOSED = "!ready", "!stop", "!error", "!closed"


class DashboardProcess:
    """A dashboard served by another process: its address, and how to stop it."""

    def __init__(
        self, process: Any, bridge: PipeBridge, host: str, port: int, family: int, token: str
    ) -> None:
        self.process = process  # multiprocessing's Process
        self.bridge = bridge
        self.token = token
        self.host = host
        self.port = port
        self.url = f"http://{display_host(host, family)}:{port}"
        self.lost = False  # the process ended by itself while the run went on
        self._stopping = False
        bridge.on_control = self._heard

    def _heard(self, word: str, _: bytes) -> None:
        """The link closed and we did not ask: the viewers' process died (never silently:
        the run flies on without its dashboard)."""
        if word == _CLOSED and not self._stopping and not self.lost:
            self.lost = True
            log.error(
                "the dashboard's process ended (exit code %s): %s is no longer served; "
                "the run flies on",
                self.process.exitcode,
                self.url,
            )

    @property
    def page_url(self) -> str:
        """The page's address with the control token (the page stores it and hides it)."""
        return f"{self.url}/?token={self.token}"

    @property
    def running(self) -> bool:
        """Whether the viewers' process is still serving."""
        return bool(self.process.is_alive())

    async def stop(self, timeout: float = 5.0) -> None:
        """Send what was published (up to 2 s), ask the process to flush its pages and end
        (``timeout``), then kill it if it has not."""
        self._stopping = True
        if self.process.is_alive():
            await self.bridge.flush(min(2.0, timeout))
            self.bridge.control(_STOP)
            with contextlib.suppress(ConnectionError):
                await self.bridge.writer.drain()
            await asyncio.to_thread(self.process.join, timeout)
            if self.process.is_alive():
                log.warning("the dashboard's process did not stop in %g s: killed", timeout)
                self.process.kill()
                await asyncio.to_thread(self.process.join, timeout)
        await self.bridge.stop()


async def start_dashboard_process(
    bus: Bus,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str,
    trace_url: str | None = None,
    nice: int = 5,
    start_timeout_s: float = 60.0,
    **app_options: Any,
) -> DashboardProcess:
    """Serve the dashboard of ``bus``'s run from a process of its own; see the module's
    contract."""
    stall = app_options.get(
        "stall_timeout_s", DashboardSettings.model_fields["stall_timeout_s"].default
    )
    listener = bind(host, port, stall)
    ours, theirs = socket.socketpair()
    family, bound = listener.family, listener.getsockname()[1]
    process = multiprocessing.get_context("spawn").Process(
        target=_child_main,
        args=(_Child(listener, theirs, bus.run_id, host, token, trace_url, nice, app_options),),
        name="isr-dashboard",
    )
    try:
        process.start()
    finally:  # the other process holds its own copies now
        listener.close()
        theirs.close()
    loop = asyncio.get_running_loop()
    started: asyncio.Future[None] = loop.create_future()

    def heard(word: str, body: bytes) -> None:
        if started.done():
            return
        if word == _READY:
            started.set_result(None)
        elif word in (_ERROR, _CLOSED):
            why = body.decode(errors="replace") or "it stopped while starting"
            started.set_exception(DashboardError(f"the dashboard did not start: {why}"))

    reader, writer = await asyncio.open_connection(sock=ours)
    bridge = PipeBridge(bus, reader, writer, on_control=heard)
    await bridge.start()
    try:
        await asyncio.wait_for(started, start_timeout_s)
    except BaseException as exc:
        process.kill()
        await asyncio.to_thread(process.join, 5.0)
        await bridge.stop()
        if isinstance(exc, TimeoutError):
            raise DashboardError(f"the dashboard did not start in {start_timeout_s:g} s") from None
        raise
    log.info("dashboard serving on %s:%d (process %s)", host, bound, process.pid)
    return DashboardProcess(process, bridge, host, bound, family, token)


# ----- the viewers' process ----------------------------------------------------------------


@dataclass(frozen=True)
class _Child:
    """What the viewers' process is started with (pickled to it, the sockets included)."""

    listener: socket.socket  # bound here: a port in use fails in the mission's process
    link: socket.socket  # its end of the socket pair
    run_id: str | None
    host: str
    token: str
    trace_url: str | None
    nice: int
    app_options: dict[str, Any]


def _child_main(child: _Child) -> None:
    """The viewers' process: serve until the mission's process says stop, or is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the run, which stops us
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(_serve(child))


async def _serve(child: _Child) -> None:
    reader, writer = await asyncio.open_connection(sock=child.link)
    stop = asyncio.Event()

    def heard(word: str, _: bytes) -> None:
        if word == _STOP:
            stop.set()

    bus = PipeBus(child.run_id, reader, writer, on_control=heard)
    try:
        server = await start_dashboard(
            bus,
            host=child.host,
            token=child.token,
            trace_url=child.trace_url,
            sock=child.listener,
            **child.app_options,
        )
    except Exception as exc:
        write_frame(writer, _ERROR, str(exc))
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        return
    await bus.start()  # after the mirror subscribed: it misses nothing sent meanwhile
    write_frame(writer, _READY)
    await writer.drain()
    if child.nice:  # once started: the run waits for the start, never for the serving
        with contextlib.suppress(OSError):
            os.nice(child.nice)
    gone = asyncio.create_task(bus.closed.wait())
    asked = asyncio.create_task(stop.wait())
    await asyncio.wait({gone, asked}, return_when=asyncio.FIRST_COMPLETED)
    for task in (gone, asked):
        task.cancel()
    if asked.done() and not bus.closed.is_set():  # let the last messages reach the mirror
        await asyncio.sleep(0)
    await server.stop()
    await bus.stop()
    writer.close()
