"""The bus interface: publish never blocks, every subscriber is bounded.

``Bus`` is the plug point between the executive and whoever watches or commands it (the
dashboard, another process through MQTT, a test). ``publish`` returns at once; each
``Subscription`` holds a bounded queue with a stated drop policy — for ``latest_only``
topics (telemetry, scene) a latest-value slot, for the others the oldest message is dropped
when the queue is full — and counts what it dropped. A slow or stalled subscriber therefore
never slows the publisher nor grows memory without bound.

A bus also says how it is linked (``link``: a ``LinkState``, what a dashboard shows and
whether a command can reach the mission now), counts what it could not send (``stats()``)
and closes a run that stops without ending (``close_run``: the final status).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from executive.bus.topics import TOPICS

__all__ = [
    "LIVE_STATES",
    "TERMINAL_STATES",
    "Bus",
    "Fanout",
    "LinkState",
    "Message",
    "Subscription",
]

# The run's ``status`` states: still going, or over (one of these is always the last one
# a run publishes, or its broker publishes for it: the MQTT last will says ``crashed``).
LIVE_STATES = ("starting", "running")
TERMINAL_STATES = ("ended", "failed", "crashed", "interrupted")


@dataclass(frozen=True)
class LinkState:
    """How a bus is linked to the run it carries, for a view to show and obey.

    ``state``: ``local`` (in process: always there), ``up``, ``connecting`` (before the
    first connection) or ``down`` (lost, reconnecting). ``commands``: whether a command
    published now reaches the mission (a dashboard answers 503 when it does not). ``stale``:
    the run says it is running but has sent nothing for ``stale_after_s``. ``since`` is the
    Unix time of the last change of ``state``; ``reason`` why it is down, or stale.
    """

    state: Literal["local", "up", "connecting", "down"]
    commands: bool
    stale: bool = False
    reason: str | None = None
    since: float | None = None
    broker: str | None = None  # the broker's address, never with a password
    role: str | None = None  # MQTT: executive or watcher
    reconnects: int = 0  # connections made again after a loss
    last_message_age_s: float | None = None  # watcher: since the run was last heard from
    stale_after_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (``/api/state``'s ``link``)."""
        return asdict(self)


@dataclass(frozen=True)
class Message:
    """One message as a subscriber receives it."""

    topic: str  # a bare topic name: telemetry, events, ..., cmd
    payload: dict[str, Any]  # as published (a ``cmd`` from MQTT may be text: see mqtt.py)
    retained: bool = False  # delivered from the retained store on subscribe
    # The payload's compact JSON when the bus received it as text (``executive.bus.pipe``):
    # whoever sends it on as JSON reuses it instead of encoding the payload again.
    encoded: str | None = field(default=None, compare=False, repr=False)


class Subscription:
    """A bounded inbox for one subscriber.

    ``maxsize`` bounds the queued messages of the ordinary topics (drop oldest); each
    ``latest_only`` topic keeps one slot that a newer message overwrites. ``dropped`` counts
    messages thrown away, per topic. Iterate with ``async for message in subscription`` or
    ``await subscription.get()``; ``close()`` ends the iteration.
    """

    def __init__(self, topics: Iterable[str], *, maxsize: int = 256) -> None:
        self.topics = frozenset(topics)
        self.maxsize = maxsize
        self._queue: deque[Message] = deque()
        self._latest: OrderedDict[str, Message] = OrderedDict()
        self._wakeup = asyncio.Event()
        self._closed = False
        self.dropped: dict[str, int] = {}
        self.delivered = 0
        # Set by the bus: unregisters the subscription.
        self.on_close: Callable[[Subscription], None] | None = None

    def wants(self, topic: str) -> bool:
        """Whether this subscription was made for ``topic``."""
        return topic in self.topics

    def put(self, message: Message) -> None:
        """Queue ``message`` by its topic's drop policy; never blocks (called from the
        publisher's side of the event loop). Ignored once the subscription is closed."""
        if self._closed:
            return
        spec = TOPICS.get(message.topic)
        if spec is not None and spec.latest_only:
            if message.topic in self._latest:
                self._count_drop(message.topic)
                del self._latest[message.topic]
            self._latest[message.topic] = message
        else:
            if len(self._queue) >= self.maxsize:
                self._count_drop(self._queue.popleft().topic)
            self._queue.append(message)
        self._wakeup.set()

    def _count_drop(self, topic: str) -> None:
        self.dropped[topic] = self.dropped.get(topic, 0) + 1

    @property
    def dropped_total(self) -> int:
        """Messages thrown away so far, all topics together."""
        return sum(self.dropped.values())

    def pending(self) -> int:
        """Messages waiting to be read: queued ones plus filled latest-value slots."""
        return len(self._queue) + len(self._latest)

    def get_nowait(self) -> Message | None:
        """The next message, or None when there is none; never waits."""
        # Ordinary messages first, in order; then the latest values.
        if self._queue:
            self.delivered += 1
            return self._queue.popleft()
        if self._latest:
            self.delivered += 1
            return self._latest.popitem(last=False)[1]
        return None

    async def get(self) -> Message:
        """Wait for the next message. Once closed, what is still queued is handed out, then
        ``StopAsyncIteration`` is raised (which ends an ``async for``)."""
        while True:
            message = self.get_nowait()
            if message is not None:
                return message
            if self._closed:
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()

    def __aiter__(self) -> AsyncIterator[Message]:
        return self

    async def __anext__(self) -> Message:
        return await self.get()

    def close(self) -> None:
        """Stop receiving, wake a waiting reader and unregister from the bus; idempotent."""
        if not self._closed:
            self._closed = True
            self._wakeup.set()
            if self.on_close is not None:
                self.on_close(self)


@runtime_checkable
class Bus(Protocol):
    """Where the executive's messages go and commands come from.

    ``run_id`` names the run the bus carries (MQTT topics live under ``isr/<run_id>/``).
    Lifecycle: ``await start()`` / ``await stop()``, or ``async with``.
    """

    run_id: str | None

    async def start(self) -> None:
        """Connect (where there is anything to connect to); publishing may begin."""
        ...

    async def stop(self) -> None:
        """Close every subscription and disconnect; must not hang."""
        ...

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Send a message; returns at once (a full outgoing queue drops and counts)."""
        ...

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        """A new bounded subscription; retained messages of those topics arrive first."""
        ...

    @property
    def link(self) -> LinkState:
        """How the bus is linked now; never blocks."""
        ...

    def stats(self) -> dict[str, Any]:
        """Counts as plain JSON data: at least ``published``, ``lost`` (messages that could
        not be sent, per topic) and ``lost_total``."""
        ...

    def close_run(self, state: str, **fields: Any) -> bool:
        """Publish the final ``status`` ``state`` (``interrupted``, ``crashed``) with
        ``fields``, unless the run's last status is already over; whether it did. Never
        blocks (it is sent by ``stop()``'s flush)."""
        ...


class Fanout:
    """The local side every bus shares: its subscriptions and its retained messages.

    ``deliver(topic, payload, retained=False)`` keeps the newest message of each retained
    topic (so a later subscription starts with it) and puts the message into every
    subscription that wants it; ``subscribe`` hands the retained ones out first.
    """

    def __init__(self) -> None:
        self.subscriptions: list[Subscription] = []
        self.retained: dict[str, Message] = {}

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        """A new subscription to ``topics``, holding the retained message of each first.

        Raises ``ExecutiveError`` for a topic that is not in ``TOPICS``.
        """
        from executive.errors import ExecutiveError

        topics = list(topics)
        unknown = [t for t in topics if t not in TOPICS]
        if unknown:
            raise ExecutiveError(f"unknown bus topic(s): {', '.join(unknown)}")
        sub = Subscription(topics, maxsize=maxsize)
        for topic in topics:
            if topic in self.retained:
                sub.put(self.retained[topic])
        sub.on_close = self.subscriptions.remove
        self.subscriptions.append(sub)
        return sub

    def deliver(
        self, topic: str, payload: Any, *, retained: bool = False, encoded: str | None = None
    ) -> None:
        """Hand a message to every subscription that wants it; never blocks.

        ``retained`` marks the delivered copy (MQTT's retain flag on arrival); the copy kept
        for later subscriptions depends on the topic's spec alone. ``topic`` must be known.
        ``encoded``: the payload's compact JSON, when the bus has it (``Message.encoded``).
        """
        if TOPICS[topic].retained:
            self.retained[topic] = Message(topic, payload, retained=True, encoded=encoded)
        message = Message(topic, payload, retained=retained, encoded=encoded)
        for sub in list(self.subscriptions):
            if sub.wants(topic):
                sub.put(message)

    def close_all(self) -> None:
        """Close every subscription (their readers stop); retained messages are kept."""
        for sub in list(self.subscriptions):
            sub.close()
