"""The in-process bus: the embedded default, one event loop, no broker.

Contract: ``InProcessBus(run_id)``; ``publish(topic, payload)`` stores retained topics
(``plan``, ``scene``, ``status``) and puts the message into every matching subscription
(never blocks: each subscription drops by its own policy). ``subscribe(topics)`` delivers
the retained messages first. Must be used from the event loop's thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from executive.bus.base import Message, Subscription
from executive.bus.topics import RETAINED, TOPICS
from executive.errors import ExecutiveError

__all__ = ["InProcessBus"]


class InProcessBus:
    def __init__(self, run_id: str | None = None) -> None:
        self.run_id = run_id
        self._subscriptions: list[Subscription] = []
        self._retained: dict[str, Message] = {}
        self.published = 0

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        for sub in list(self._subscriptions):
            sub.close()

    async def __aenter__(self) -> InProcessBus:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        message = Message(topic, payload)
        self.published += 1
        if topic in RETAINED:
            self._retained[topic] = Message(topic, payload, retained=True)
        for sub in self._subscriptions:
            if sub.wants(topic):
                sub.put(message)

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        topics = list(topics)
        unknown = [t for t in topics if t not in TOPICS]
        if unknown:
            raise ExecutiveError(f"unknown bus topic(s): {', '.join(unknown)}")
        sub = Subscription(topics, maxsize=maxsize)
        for topic in topics:
            if topic in self._retained:
                sub.put(self._retained[topic])
        sub.on_close = self._subscriptions.remove
        self._subscriptions.append(sub)
        return sub

    def subscribers(self) -> list[Subscription]:
        return list(self._subscriptions)
