"""``/ws/live``: the live run streamed to each browser, bounded per client.

Contract
--------
Options
    ``LiveStreams(bus, view, *, maxsize=256, stats_every_s=2.0, hello_events=500,
    hello_agents=500)``.
Consumes
    One bus subscription PER CLIENT (``bus.subscribe(STREAM_TOPICS, maxsize)``): telemetry
    and scene are latest-value slots, events / agents / plan / answers / status a bounded
    queue that drops its oldest message and counts it. The ``LiveView`` for the hello frame.
    What a client sends is read only to notice that it left.
Produces (websocket text frames, JSON)
    First ``{"type": "hello", "run_id", "status", "scene", "telemetry", "events", "agents",
    "client"}`` (the last ``hello_events`` events, the last ``hello_agents`` agent runs), then
    one ``{"type": <topic>, "data": <payload>}`` per bus message, up to the tick rate, and
    every ``stats_every_s`` a ``{"type": "stats", "client", "sent", "dropped": {topic: n},
    "dropped_total", "pending"}`` frame.
Lifecycle
    ``await serve(websocket)`` for one connection (returns when it closes; the subscription
    is closed and the client forgotten); ``clients()`` describes the connected ones,
    ``departed()`` the last 50 that left, with their final counts;
    ``await close()`` ends them all.

Why it cannot slow the tick: the publisher only puts a message into each subscription
(never blocks, never grows it past its bound); each client's sender task awaits its own
socket, so a stalled browser stalls only its own task while its subscription drops. Each
message is encoded to JSON once and the text shared by every client (``FrameCache``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from dashboard.live_view import LiveView
from executive.bus import Bus, Message, Subscription

__all__ = ["STREAM_TOPICS", "FrameCache", "LiveStreams", "frame_text"]

log = logging.getLogger(__name__)

STREAM_TOPICS = ("telemetry", "scene", "events", "agents", "plan", "answers", "status")


def frame_text(kind: str, data: Any) -> str:
    return json.dumps({"type": kind, "data": data}, separators=(",", ":"), default=str)


class FrameCache:
    """Message -> its frame text, encoded once. Keyed by the Message object's identity (the
    bus hands the same object to every subscription); the entry keeps the message alive so
    an id is never reused while it is cached."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: OrderedDict[int, tuple[Message, str]] = OrderedDict()
        self.encoded = 0
        self.hits = 0

    def text(self, message: Message) -> str:
        key = id(message)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is message:
            self.hits += 1
            return entry[1]
        text = frame_text(message.topic, message.payload)
        self.encoded += 1
        self._entries[key] = (message, text)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return text


@dataclass
class _Client:
    id: int
    subscription: Subscription
    remote: str
    connected_at: float = field(default_factory=time.monotonic)
    sent: int = 0
    sent_bytes: int = 0
    stats_sent_at: float = field(default_factory=time.monotonic)

    def stats(self) -> dict[str, Any]:
        sub = self.subscription
        return {"client": self.id, "sent": self.sent, "dropped": dict(sub.dropped),
                "dropped_total": sub.dropped_total, "pending": sub.pending()}

    def info(self) -> dict[str, Any]:
        return {**self.stats(), "id": self.id, "remote": self.remote,
                "sent_bytes": self.sent_bytes,
                "connected_s": round(time.monotonic() - self.connected_at, 3)}


async def _next(sub: Subscription) -> Message | None:
    try:
        return await sub.get()
    except StopAsyncIteration:
        return None


class LiveStreams:
    def __init__(self, bus: Bus, view: LiveView, *, maxsize: int = 256,
                 stats_every_s: float = 2.0, hello_events: int = 500,
                 hello_agents: int = 500) -> None:
        self.bus = bus
        self.view = view
        self.maxsize = maxsize
        self.stats_every_s = stats_every_s
        self.hello_events = hello_events
        self.hello_agents = hello_agents
        self.cache = FrameCache()
        self._ids = itertools.count(1)
        self._clients: dict[int, _Client] = {}
        self._sockets: dict[int, WebSocket] = {}
        # The last clients that left, with their final counts (a stalled browser is
        # disconnected by the server's pings; its drops still deserve to be seen).
        self._departed: deque[dict[str, Any]] = deque(maxlen=50)

    def clients(self) -> list[dict[str, Any]]:
        return [c.info() for c in self._clients.values()]

    def departed(self) -> list[dict[str, Any]]:
        return list(self._departed)

    def hello(self, client_id: int) -> str:
        view = self.view
        return json.dumps({
            "type": "hello", "client": client_id, "run_id": view.run_id, "status": view.status,
            "scene": view.scene, "telemetry": view.telemetry,
            "events": view.events_since(0, self.hello_events), "last_seq": view.last_seq,
            "agents": view.agent_runs(self.hello_agents),
        }, separators=(",", ":"), default=str)

    async def serve(self, websocket: WebSocket) -> None:
        client_id = next(self._ids)
        remote = f"{websocket.client.host}:{websocket.client.port}" if websocket.client else "?"
        # Subscribe before the hello so nothing published in between is missed.
        sub = self.bus.subscribe(STREAM_TOPICS, maxsize=self.maxsize)
        client = _Client(client_id, sub, remote)
        self._clients[client_id] = client
        self._sockets[client_id] = websocket
        log.info("websocket client %d connected from %s", client_id, remote)
        hello_scene = self.view.scene
        tasks: list[asyncio.Task] = []
        try:
            await websocket.accept()
            await websocket.send_text(self.hello(client_id))
            loop = asyncio.get_running_loop()
            tasks = [loop.create_task(self._send(websocket, client, hello_scene),
                                      name=f"ws-send-{client_id}"),
                     loop.create_task(self._receive(websocket), name=f"ws-recv-{client_id}")]
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                exc = task.exception()
                if exc is not None and not isinstance(exc, (WebSocketDisconnect, OSError,
                                                            RuntimeError)):
                    log.warning("websocket client %d: %s", client_id, exc)
        except (WebSocketDisconnect, OSError, RuntimeError):
            pass  # the client left during the hello
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            sub.close()
            self._departed.append({**client.info(), "left": True})
            self._clients.pop(client_id, None)
            self._sockets.pop(client_id, None)
            if websocket.application_state == WebSocketState.CONNECTED \
                    and websocket.client_state == WebSocketState.CONNECTED:
                try:
                    await asyncio.wait_for(websocket.close(), timeout=1.0)
                except (asyncio.TimeoutError, RuntimeError, OSError, WebSocketDisconnect):
                    pass
            log.info("websocket client %d gone (sent %d, dropped %s)", client_id, client.sent,
                     dict(sub.dropped))

    async def _send(self, websocket: WebSocket, client: _Client, hello_scene) -> None:
        sub = client.subscription
        getter: asyncio.Task | None = None
        try:
            while True:
                if getter is None:
                    getter = asyncio.get_running_loop().create_task(_next(sub))
                # Wake up now and then even when nothing comes, to send the stats frame.
                done, _ = await asyncio.wait({getter}, timeout=self.stats_every_s)
                if getter in done:
                    message = getter.result()
                    getter = None
                    if message is None:  # the subscription was closed (the bus stopped)
                        return
                    if not (message.retained and message.topic == "scene"
                            and message.payload is hello_scene):  # already in the hello
                        text = self.cache.text(message)
                        await websocket.send_text(text)
                        client.sent += 1
                        client.sent_bytes += len(text)
                now = time.monotonic()
                if now - client.stats_sent_at >= self.stats_every_s:
                    client.stats_sent_at = now
                    await websocket.send_text(json.dumps({"type": "stats", **client.stats()}))
        finally:
            if getter is not None:
                getter.cancel()

    async def _receive(self, websocket: WebSocket) -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return

    async def close(self) -> None:
        for websocket in list(self._sockets.values()):
            try:
                await asyncio.wait_for(websocket.close(code=1001), timeout=1.0)
            except (asyncio.TimeoutError, RuntimeError, OSError, WebSocketDisconnect):
                pass
