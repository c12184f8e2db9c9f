"""A bus carried over a local stream (a socket pair) to a process of its own: the run's
viewers served by another process, so that what they cost never lands on the mission's.

Contract
--------
Two ends of one stream. ``PipeBridge(bus, reader, writer)`` sits beside the mission's bus:
``start()`` subscribes to every out topic and sends each message on, encoded to compact JSON
once; a ``cmd`` that comes back is published on the mission's bus. ``PipeBus(run_id,
reader, writer)`` is the ``Bus`` the other process sees: out-topic messages arrive as the
mission published them (each ``Message`` with its ``encoded`` text, so a websocket sends it
on without encoding it again) and ``publish(CMD, ...)`` goes back to the mission.

Wire: frames of a 4-byte big-endian length, then ``name`` (ASCII), a newline and the body:
a bus topic with its payload's JSON, or a control word (``CONTROL``) starting with ``!``
whose body the two ends agree on (``!ready``, ``!stop``, ``!error``).

Why it cannot slow the tick: the bridge reads its own bounded subscription (telemetry and
scene latest-value slots, the others drop oldest and count) in a task that waits on the
stream's buffer when the other process lags; nothing here ever blocks ``publish``.
Lifecycle: both ends ``await start()`` / ``await stop()``; ``PipeBus.closed`` is set when
the stream ends (the mission's process is gone), and its ``link`` then says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import struct
import time
from collections.abc import Callable, Iterable
from typing import Any

from executive.bus.base import Bus, Fanout, LinkState, Subscription
from executive.bus.topics import CMD, OUT_TOPICS, TOPICS
from executive.errors import ExecutiveError

__all__ = ["MAX_FRAME", "PipeBridge", "PipeBus", "encode", "read_frame", "write_frame"]

log = logging.getLogger(__name__)

MAX_FRAME = 256 * 1024 * 1024  # a swarm's scene is megabytes; anything bigger is a fault
_HEADER = struct.Struct("!I")


def encode(payload: Any) -> str:
    """The compact JSON of a payload, as every JSON frame of the run carries it."""
    return json.dumps(payload, separators=(",", ":"), default=str)


def write_frame(writer: asyncio.StreamWriter, name: str, body: str | bytes = b"") -> None:
    """Queue one frame on ``writer`` (never blocks: the caller drains when it may wait)."""
    data = body.encode() if isinstance(body, str) else body
    head = name.encode("ascii") + b"\n"
    writer.write(_HEADER.pack(len(head) + len(data)) + head + data)


async def read_frame(reader: asyncio.StreamReader) -> tuple[str, bytes] | None:
    """The next frame's name and body, or None at the end of the stream."""
    try:
        (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
        if size > MAX_FRAME:
            raise ExecutiveError(f"a frame of {size:,} bytes on the viewers' link")
        data = await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    name, _, body = data.partition(b"\n")
    return name.decode("ascii"), body


class PipeBridge:
    """The mission's end: its bus's out topics to the stream, ``cmd`` back onto its bus.

    ``maxsize`` bounds the queued messages of the ordinary topics while the other process
    lags (``Subscription``'s policy); ``on_control(word, body)`` hears the control frames.
    """

    def __init__(
        self,
        bus: Bus,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        maxsize: int = 4096,
        on_control: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self.bus = bus
        self.reader = reader
        self.writer = writer
        self.maxsize = maxsize
        self.on_control = on_control
        self.sent = 0  # messages sent on
        self.commands = 0  # cmd messages published on the mission's bus
        self._sub: Subscription | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Subscribe (the retained messages first) and start sending and receiving."""
        self._sub = self.bus.subscribe(OUT_TOPICS, maxsize=self.maxsize)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._forward(self._sub), name="viewers-out"),
            loop.create_task(self._receive(), name="viewers-in"),
        ]

    async def _forward(self, sub: Subscription) -> None:
        with contextlib.suppress(ConnectionError):
            async for message in sub:
                write_frame(self.writer, message.topic, encode(message.payload))
                self.sent += 1
                await self.writer.drain()  # waits only when the other process lags

    async def _receive(self) -> None:
        while (frame := await read_frame(self.reader)) is not None:
            name, body = frame
            if name.startswith("!"):
                if self.on_control is not None:
                    self.on_control(name, body)
                continue
            if name != CMD:  # the viewers' process only ever commands
                log.warning("viewers' link: a %r message ignored (only cmd comes back)", name)
                continue
            try:
                payload = json.loads(body)
            except (ValueError, RecursionError) as exc:
                log.warning("viewers' link: a cmd that is not JSON ignored: %s", exc)
                continue
            self.commands += 1
            self.bus.publish(CMD, payload)
        if self.on_control is not None:
            self.on_control("!closed", b"")

    @property
    def subscription(self) -> Subscription | None:
        """The bridge's own subscription (its drops counted there), once started."""
        return self._sub

    def pending(self) -> int:
        """Messages not yet sent on: the subscription's plus those in the stream's buffer
        (counted as one while any byte waits)."""
        sub = self._sub.pending() if self._sub is not None else 0
        transport = self.writer.transport
        buffered = 0 if transport.is_closing() else transport.get_write_buffer_size()
        return sub + (1 if buffered else 0)

    async def flush(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) until everything published so far was sent on."""
        deadline = time.monotonic() + timeout_s
        while self.pending() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def control(self, word: str, body: str | bytes = b"") -> None:
        """Send a control frame (after every message already sent on)."""
        if not self.writer.transport.is_closing():
            write_frame(self.writer, word, body)

    async def stop(self) -> None:
        """Stop both directions and close the stream."""
        if self._sub is not None:
            self._sub.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.writer.close()
        try:  # a far end that reads nothing more would hold a flushing close forever
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
        except TimeoutError:
            self.writer.transport.abort()
        except (ConnectionError, OSError):
            pass


class PipeBus:
    """The viewers' end: a ``Bus`` whose out topics come from the mission's process and
    whose ``cmd`` goes back to it (see the module's contract). ``on_control(word, body)``
    hears the control frames; ``closed`` is set when the stream ends."""

    def __init__(
        self,
        run_id: str | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_control: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.reader = reader
        self.writer = writer
        self.on_control = on_control
        self.published = 0  # commands sent to the mission
        self.received = 0
        self.closed = asyncio.Event()
        self._local = Fanout()
        self._task: asyncio.Task[None] | None = None
        self._since = time.time()

    async def start(self) -> None:
        """Start reading the mission's messages (idempotent)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._read(), name="pipe-bus")

    async def _read(self) -> None:
        try:
            while (frame := await read_frame(self.reader)) is not None:
                name, body = frame
                if name.startswith("!"):
                    if self.on_control is not None:
                        self.on_control(name, body)
                    continue
                if name not in TOPICS or name == CMD:
                    log.warning("viewers' link: a message on %r ignored", name)
                    continue
                text = body.decode()
                self.received += 1
                self._local.deliver(name, json.loads(text), encoded=text)
        finally:
            self._since = time.time()
            self.closed.set()

    async def stop(self) -> None:
        """Stop reading and close every subscription."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._local.close_all()

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Send a ``cmd`` to the mission (never blocks); the viewers publish nothing else."""
        if topic != CMD:
            raise ExecutiveError(f"the viewers' bus only sends cmd, not {topic!r}")
        if self.closed.is_set():
            return
        self.published += 1
        write_frame(self.writer, CMD, encode(payload))

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        """A bounded subscription; retained messages of those topics arrive first."""
        return self._local.subscribe(topics, maxsize=maxsize)

    @property
    def link(self) -> LinkState:
        """``local`` (the mission is a process of this machine) while the stream is open;
        ``down`` once it ended."""
        if self.closed.is_set():
            return LinkState(
                "down", False, reason="the mission's process is gone", since=self._since
            )
        return LinkState("local", True)

    def stats(self) -> dict[str, Any]:
        """``published`` (commands sent), ``received``; nothing lost on the stream; what
        the subscribers dropped, per topic."""
        dropped: dict[str, int] = {}
        for sub in self._local.subscriptions:
            for topic, n in sub.dropped.items():
                dropped[topic] = dropped.get(topic, 0) + n
        return {
            "transport": "process",
            "published": self.published,
            "received": self.received,
            "lost": {},
            "lost_total": 0,
            "subscribers_dropped": dropped,
        }

    def close_run(self, state: str, **fields: Any) -> bool:
        """The mission's process closes its run, never its viewers: always False."""
        return False
