"""The bus interface: publish never blocks, every subscriber is bounded.

``Bus`` is the plug point between the executive and whoever watches or commands it (the
dashboard, another process through MQTT, a test). ``publish`` returns at once; each
``Subscription`` holds a bounded queue with a stated drop policy — for ``latest_only``
topics (telemetry, scene) a latest-value slot, for the others the oldest message is dropped
when the queue is full — and counts what it dropped. A slow or stalled subscriber therefore
never slows the publisher nor grows memory without bound.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from executive.bus.topics import TOPICS

__all__ = ["Bus", "Fanout", "Message", "Subscription"]


@dataclass(frozen=True)
class Message:
    topic: str  # a bare topic name: telemetry, events, ..., cmd
    payload: dict[str, Any]
    retained: bool = False  # delivered from the retained store on subscribe


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
        self.on_close = None  # set by the bus: unregisters the subscription

    def wants(self, topic: str) -> bool:
        return topic in self.topics

    def put(self, message: Message) -> None:
        """Never blocks (called from the publisher's side of the event loop)."""
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
        return sum(self.dropped.values())

    def pending(self) -> int:
        return len(self._queue) + len(self._latest)

    def get_nowait(self) -> Message | None:
        # Ordinary messages first, in order; then the latest values.
        if self._queue:
            self.delivered += 1
            return self._queue.popleft()
        if self._latest:
            self.delivered += 1
            return self._latest.popitem(last=False)[1]
        return None

    async def get(self) -> Message:
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

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Send a message; returns at once (a full outgoing queue drops and counts)."""
        ...

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        """A new bounded subscription; retained messages of those topics arrive first."""
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

    def deliver(self, topic: str, payload: Any, *, retained: bool = False) -> None:
        if TOPICS[topic].retained:
            self.retained[topic] = Message(topic, payload, retained=True)
        message = Message(topic, payload, retained=retained)
        for sub in list(self.subscriptions):
            if sub.wants(topic):
                sub.put(message)

    def close_all(self) -> None:
        for sub in list(self.subscriptions):
            sub.close()
