"""``/ws/live``: the live run streamed to each browser, bounded per client.

Contract
--------
Options
    ``LiveStreams(bus, view, *, maxsize=256, stats_every_s=2.0, hello_events=500,
    hello_agents=500, stall_timeout_s=15.0, max_fps=30.0, live=True, back_url=None,
    max_anonymous=None, anonymous_fps=10.0)``: at most ``max_anonymous`` clients without
    the token at once, one more refused with close code 1013 ("try again later";
    ``errors.TooManyViewers``);
    ``unwatched_s()`` says how long no client has been connected.
Consumes
    One bus subscription PER CLIENT (``bus.subscribe(STREAM_TOPICS, maxsize)``): telemetry
    and scene are latest-value slots, events / agents / plan / answers / status a bounded
    queue that drops its oldest message and counts it. The ``LiveView`` for the hello frame.
    What a client sends is read only to notice that it left.
Produces (websocket text frames, JSON)
    First ``{"type": "hello", "run_id", "status", "scene", "telemetry", "events", "agents",
    "client", "truth", "live", "back_url"}`` (the last ``hello_events`` events, the last
    ``hello_agents`` agent runs; ``truth``: whether this stream carries the ground truth;
    ``live``: whether the dashboard serves a live run at all, else only stored runs;
    ``back_url``: the dashboard that started this run, a fork), then one ``{"type":
    <topic>, "data": <payload>}`` per bus message, telemetry and scene at most ``max_fps``
    frames a second each (the latest one; the ones it replaced are counted as
    ``coalesced``; ``anonymous_fps`` for clients without the token), and every
    ``stats_every_s`` a ``{"type": "stats", "client", "sent",
    "dropped": {topic: n}, "dropped_total", "coalesced", "superseded", "lost", "pending"}``
    frame: ``superseded`` the telemetry and scene messages a newer one replaced before they
    were sent (the subscription's latest-value slot and the cap: by design, the newest is
    sent), ``lost`` the queued messages (events, agents...) thrown away: a real loss. A client without the truth gets every frame through
    ``dashboard.truth`` (hidden SAMs, truth-only events and fields left out).
Lifecycle
    ``await serve(websocket, access)`` for one connection (``security.LiveAccess``: a refused
    one is closed at once with its code and reason; returns when it closes; the subscription
    is closed and the client forgotten); ``clients()`` describes the connected ones,
    ``departed()`` the last 50 that left, with their final counts; ``await flush()`` waits a
    little for every client to be sent what is queued for it; ``await close()`` ends them
    all.

A client that stops reading is dropped without a close frame (it would not read one). On
Linux its socket is reset ``stall_timeout_s`` after its receive window shut (``dashboard.server``
sets ``TCP_USER_TIMEOUT``): about that long after it stopped reading, since a live run fills
a small window at once; it leaves as "lost". Everywhere, a send that has waited
``stall_timeout_s`` gives up on it ("stalled"): a later backstop, as the buffers between us
(megabytes) fill first. ``departed()`` says which, with the client's final counts.

Why it cannot slow the tick: the publisher only puts a message into each subscription
(never blocks, never grows it past its bound); each client's sender task awaits its own
socket, so a stalled browser stalls only its own task while its subscription drops. Each
message is encoded to JSON once per audience (with the truth, public) and the text shared by
every client of that audience (``FrameCache``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from dashboard.errors import WS_GOING_AWAY, TooManyViewers
from dashboard.live_view import LiveView
from dashboard.security import LiveAccess
from dashboard.truth import (
    TRUTH_TOPICS,
    public_events,
    public_payload,
    public_scene,
    public_status,
)
from executive.bus import Bus, Message, Subscription

__all__ = [
    "STREAM_TOPICS",
    "ClientStalled",
    "FrameCache",
    "LiveStreams",
    "frame_text",
    "message_text",
]

log = logging.getLogger(__name__)

STREAM_TOPICS = ("telemetry", "scene", "events", "agents", "plan", "answers", "status")
# Latest-value topics sent at most max_fps a second per client: a page draws once per
# animation frame, so at "max" speed a frame per tick would be thousands it never draws.
CAPPED_TOPICS = frozenset({"telemetry", "scene"})


def frame_text(kind: str, data: Any) -> str:
    """The compact JSON text of a ``{"type": kind, "data": data}`` frame."""
    return json.dumps({"type": kind, "data": data}, separators=(",", ":"), default=str)


def message_text(message: Message) -> str:
    """The frame text of a bus message as published: its payload's JSON reused when the bus
    already has it (``Message.encoded``: the viewers' own process), else encoded now."""
    if message.encoded is not None:
        return f'{{"type":{json.dumps(message.topic)},"data":{message.encoded}}}'
    return frame_text(message.topic, message.payload)


class FrameCache:
    """Message -> its frame text, encoded once per audience: with the truth (the payload as
    published) and public (``truth.public_payload``; None when the message is truth itself,
    then not sent). Only the topics that can carry truth are encoded twice; the others share
    one text. Keyed by the Message object's identity (the bus hands the same object to every
    subscription); the entry keeps the message alive so an id is never reused while it is
    cached."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        # id -> [message, text with the truth, public text (None: not sent), public known]
        self._entries: OrderedDict[int, list[Any]] = OrderedDict()
        self.encoded = 0
        self.hits = 0

    def text(self, message: Message, *, truth: bool = True) -> str | None:
        """The frame text of ``message`` for a client with the truth or without it (None:
        nothing to send), encoded on its first request, then shared."""
        key = id(message)
        entry = self._entries.get(key)
        if entry is None or entry[0] is not message:
            entry = [message, None, None, False]
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        public = not truth and message.topic in TRUTH_TOPICS
        if not public:
            if entry[1] is None:
                entry[1] = message_text(message)
                self.encoded += 1
            else:
                self.hits += 1
            text: str = entry[1]
            return text
        if entry[3]:
            self.hits += 1
            shown: str | None = entry[2]
            return shown
        payload = public_payload(message.topic, message.payload)
        if payload is message.payload:  # nothing to take out: the same text
            entry[2] = self.text(message)
        elif payload is not None:
            entry[2] = frame_text(message.topic, payload)
            self.encoded += 1
        entry[3] = True
        shown = entry[2]
        return shown


class ClientStalled(Exception):
    """A websocket client whose socket accepted nothing for ``stall_timeout_s``."""


@dataclass
class _Client:
    """One connected websocket client: its subscription and what it was sent."""

    id: int
    subscription: Subscription
    remote: str
    truth: bool = False
    anonymous: bool = False  # no token: counted against the cap on such viewers
    connected_at: float = field(default_factory=time.monotonic)
    sent: int = 0
    sent_bytes: int = 0
    coalesced: int = 0  # capped frames replaced by a newer one before their turn
    stats_sent_at: float = field(default_factory=time.monotonic)
    # Why it left: "closed" (its close frame), "lost" (the connection ended without one:
    # the client vanished, or the kernel reset a socket that accepted nothing for
    # stall_timeout_s), "stalled" (a send waited stall_timeout_s), "server" (shut down).
    reason: str | None = None

    def leave(self, reason: str) -> None:
        """Note why the client left (the first reason seen stands)."""
        if self.reason is None:
            self.reason = reason

    def stats(self) -> dict[str, Any]:
        """The counts of the client's ``stats`` frame."""
        sub = self.subscription
        return {
            "client": self.id,
            "sent": self.sent,
            "dropped": dict(sub.dropped),
            "dropped_total": sub.dropped_total,
            "coalesced": self.coalesced,
            "superseded": self.coalesced + sum(sub.dropped.get(t, 0) for t in CAPPED_TOPICS),
            "lost": sum(n for t, n in sub.dropped.items() if t not in CAPPED_TOPICS),
            "pending": sub.pending(),
        }

    def info(self) -> dict[str, Any]:
        """The counts plus the client's address, bytes and age (``/api/clients``)."""
        return {
            **self.stats(),
            "id": self.id,
            "remote": self.remote,
            "truth": self.truth,
            "sent_bytes": self.sent_bytes,
            "connected_s": round(time.monotonic() - self.connected_at, 3),
        }


async def _next(sub: Subscription) -> Message | None:
    try:
        return await sub.get()
    except StopAsyncIteration:
        return None


class LiveStreams:
    """Every ``/ws/live`` client: its bounded subscription, its sender, its counts (see the
    module's contract)."""

    def __init__(
        self,
        bus: Bus,
        view: LiveView,
        *,
        maxsize: int = 256,
        stats_every_s: float = 2.0,
        hello_events: int = 500,
        hello_agents: int = 500,
        stall_timeout_s: float = 15.0,
        max_fps: float = 30.0,
        live: bool = True,
        back_url: str | None = None,
        max_anonymous: int | None = None,
        anonymous_fps: float = 10.0,
    ) -> None:
        self.bus = bus
        self.max_anonymous = max_anonymous  # None: no cap
        self.live = live
        self.back_url = back_url
        # when the last client left (or the streams began): how long nobody has watched
        self._unwatched_since: float | None = time.monotonic()
        self.frame_interval_s = 1.0 / max_fps if max_fps > 0 else 0.0
        # Viewers without the token get fewer scene and telemetry frames: what hundreds of
        # them cost is the frames sent, on the mission's own event loop.
        self.anonymous_interval_s = 1.0 / anonymous_fps if anonymous_fps > 0 else 0.0
        self.view = view
        self.maxsize = maxsize
        self.stats_every_s = stats_every_s
        self.hello_events = hello_events
        self.hello_agents = hello_agents
        self.stall_timeout_s = stall_timeout_s
        self.cache = FrameCache()
        self._ids = itertools.count(1)
        self._clients: dict[int, _Client] = {}
        self._sockets: dict[int, WebSocket] = {}
        # The last clients that left, with their final counts (a stalled browser is
        # dropped after stall_timeout_s; its drops still deserve to be seen).
        self._departed: deque[dict[str, Any]] = deque(maxlen=50)

    def clients(self) -> list[dict[str, Any]]:
        """The connected clients: id, remote address, sent, dropped per topic, pending."""
        return [c.info() for c in self._clients.values()]

    def departed(self) -> list[dict[str, Any]]:
        """The last clients that left, with their final counts."""
        return list(self._departed)

    def unwatched_s(self) -> float:
        """Seconds since the last client left (or since these streams began when none ever
        came); 0 while a client is connected."""
        if self._clients or self._unwatched_since is None:
            return 0.0
        return time.monotonic() - self._unwatched_since

    def hello(self, client_id: int, truth: bool = True) -> str:
        """The first frame a client gets: the mirror's state, recent events and agent runs
        (without the truth, the public view of each)."""
        view = self.view
        events = view.events_since(0, self.hello_events)
        return json.dumps(
            {
                "type": "hello",
                "client": client_id,
                "truth": truth,
                "live": self.live,
                "back_url": self.back_url,
                "run_id": view.run_id,
                "status": view.status if truth else public_status(view.status),
                "scene": view.scene if truth else public_scene(view.scene),
                "telemetry": view.telemetry,
                "events": events if truth else public_events(events),
                "last_seq": view.last_seq,
                "agents": view.agent_runs(self.hello_agents),
            },
            separators=(",", ":"),
            default=str,
        )

    async def serve(self, websocket: WebSocket, access: LiveAccess) -> None:
        """Stream the live run to one websocket until it leaves, stalls (or the bus stops);
        a refused one is closed at once with its code and reason."""
        remote = f"{websocket.client.host}:{websocket.client.port}" if websocket.client else "?"
        cap = self.max_anonymous
        if (
            access.refusal is None
            and access.anonymous
            and cap is not None
            and sum(1 for c in self._clients.values() if c.anonymous) >= cap
        ):
            access = LiveAccess(access.truth, access.subprotocol, TooManyViewers(cap))
        if access.refusal is not None:
            log.warning("websocket from %s refused: %s", remote, access.refusal.reason)
            with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
                # Accepted to be closed with a code a browser can read (a refused handshake
                # is only "1006" to it); nothing is sent before the close frame.
                await websocket.accept(subprotocol=access.subprotocol)
                await websocket.close(code=access.refusal.code, reason=access.refusal.reason)
            return
        client_id = next(self._ids)
        # Subscribe before the hello so nothing published in between is missed.
        sub = self.bus.subscribe(STREAM_TOPICS, maxsize=self.maxsize)
        client = _Client(client_id, sub, remote, truth=access.truth, anonymous=access.anonymous)
        self._clients[client_id] = client
        self._sockets[client_id] = websocket
        log.info("websocket client %d connected from %s", client_id, remote)
        hello_scene = self.view.scene
        tasks: list[asyncio.Task[None]] = []
        try:
            await websocket.accept(subprotocol=access.subprotocol)
            await self._deliver(websocket, client, self.hello(client_id, access.truth))
            loop = asyncio.get_running_loop()
            tasks = [
                loop.create_task(
                    self._send(websocket, client, hello_scene), name=f"ws-send-{client_id}"
                ),
                loop.create_task(self._receive(websocket, client), name=f"ws-recv-{client_id}"),
            ]
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                exc = task.exception()
                if exc is not None and not isinstance(
                    exc, (WebSocketDisconnect, OSError, RuntimeError, ClientStalled)
                ):
                    log.warning("websocket client %d: %s", client_id, exc)
        except (WebSocketDisconnect, OSError, RuntimeError, ClientStalled):
            pass  # the client left (or stalled) during the hello
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            sub.close()
            client.leave("server")
            self._departed.append({**client.info(), "left": True, "reason": client.reason})
            self._clients.pop(client_id, None)
            self._sockets.pop(client_id, None)
            if not self._clients:
                self._unwatched_since = time.monotonic()
            if client.reason == "stalled":
                log.warning(
                    "websocket client %d stalled: its socket accepted nothing for %g s; dropped",
                    client_id,
                    self.stall_timeout_s,
                )
            elif (
                websocket.application_state == WebSocketState.CONNECTED
                and websocket.client_state == WebSocketState.CONNECTED
            ):
                with contextlib.suppress(TimeoutError, RuntimeError, OSError, WebSocketDisconnect):
                    await asyncio.wait_for(websocket.close(), timeout=1.0)
            log.info(
                "websocket client %d gone, %s (sent %d, dropped %s)",
                client_id,
                client.reason,
                client.sent,
                dict(sub.dropped),
            )

    async def _deliver(self, websocket: WebSocket, client: _Client, text: str) -> None:
        """Send one frame, or raise ``ClientStalled`` if it waits ``stall_timeout_s``."""
        try:
            await asyncio.wait_for(websocket.send_text(text), self.stall_timeout_s)
        except (WebSocketDisconnect, OSError, RuntimeError):
            client.leave("lost")
            raise
        except TimeoutError:
            client.leave("stalled")
            raise ClientStalled(
                f"client {client.id}: no data accepted for {self.stall_timeout_s:g} s"
            ) from None

    async def _send(
        self, websocket: WebSocket, client: _Client, hello_scene: dict[str, Any] | None
    ) -> None:
        sub = client.subscription
        getter: asyncio.Task[Message | None] | None = None
        held: dict[str, Message] = {}  # capped topic -> the latest message, not yet sent
        next_at: dict[str, float] = {}  # capped topic -> when its next frame may go
        interval = self.anonymous_interval_s if client.anonymous else self.frame_interval_s

        async def send(message: Message) -> None:
            text = self.cache.text(message, truth=client.truth)
            if text is not None:  # None: truth, and this client has none
                await self._deliver(websocket, client, text)
                client.sent += 1
                client.sent_bytes += len(text)
                if message.topic in CAPPED_TOPICS:
                    next_at[message.topic] = time.monotonic() + interval

        try:
            while True:
                if getter is None:
                    getter = asyncio.get_running_loop().create_task(_next(sub))
                # Wake up now and then even when nothing comes, to send the stats frame,
                # and when a held frame's turn comes.
                now = time.monotonic()
                timeout = self.stats_every_s - (now - client.stats_sent_at)
                if held:
                    timeout = min(timeout, min(next_at[t] for t in held) - now)
                done, _ = await asyncio.wait({getter}, timeout=max(0.0, timeout))
                if getter in done:
                    message = getter.result()
                    getter = None
                    if message is None:  # the subscription was closed (the bus stopped)
                        return
                    if (
                        message.retained
                        and message.topic == "scene"
                        and message.payload is hello_scene
                    ):
                        pass  # already in the hello
                    elif message.topic in CAPPED_TOPICS and time.monotonic() < next_at.get(
                        message.topic, 0.0
                    ):
                        if message.topic in held:
                            client.coalesced += 1
                        held[message.topic] = message
                    else:
                        if held.pop(message.topic, None) is not None:
                            client.coalesced += 1  # a newer one goes in its place
                        await send(message)
                now = time.monotonic()
                for topic in [t for t in held if next_at[t] <= now]:
                    await send(held.pop(topic))
                if now - client.stats_sent_at >= self.stats_every_s:
                    client.stats_sent_at = now
                    stats = json.dumps({"type": "stats", **client.stats()})
                    await self._deliver(websocket, client, stats)
        finally:
            if getter is not None:
                getter.cancel()

    async def _receive(self, websocket: WebSocket, client: _Client) -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                # 1005 / 1006: no close frame (uvicorn's code for a connection lost)
                client.leave("lost" if message.get("code") in (1005, 1006) else "closed")
                return

    async def flush(self, timeout_s: float = 2.0) -> None:
        """Wait (at most ``timeout_s``) until every client has been sent what its
        subscription holds: a run's last status and scene reach its pages before the server
        stops (a fork that ends with its mission)."""
        if not self._clients:
            return
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and any(
            c.subscription.pending() for c in self._clients.values()
        ):
            await asyncio.sleep(0.02)
        # a scene or telemetry frame held back by the frame cap goes within one interval
        await asyncio.sleep(
            min(self.frame_interval_s + 0.02, max(0.0, deadline - time.monotonic()))
        )

    async def close(self) -> None:
        """Close every client's websocket (going away); each ``serve`` then cleans up."""
        for client in self._clients.values():
            client.leave("server")
        for websocket in list(self._sockets.values()):
            with contextlib.suppress(TimeoutError, RuntimeError, OSError, WebSocketDisconnect):
                await asyncio.wait_for(websocket.close(code=WS_GOING_AWAY), timeout=1.0)
