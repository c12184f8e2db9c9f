"""The in-process bus: the embedded default, one event loop, no broker.

Contract: ``InProcessBus(run_id)``; ``publish(topic, payload)`` stores retained topics
(``plan``, ``scene``, ``status``) and puts the message into every matching subscription
(never blocks: each subscription drops by its own policy). ``subscribe(topics)`` delivers
the retained messages first. Must be used from the event loop's thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from executive.bus.base import Fanout, Subscription
from executive.bus.topics import TOPICS
from executive.errors import ExecutiveError

__all__ = ["InProcessBus"]


class InProcessBus:
    def __init__(self, run_id: str | None = None) -> None:
        self.run_id = run_id
        self._local = Fanout()
        self.published = 0

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        self._local.close_all()

    async def __aenter__(self) -> InProcessBus:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        self.published += 1
        self._local.deliver(topic, payload)

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        return self._local.subscribe(topics, maxsize=maxsize)

    def subscribers(self) -> list[Subscription]:
        return list(self._local.subscriptions)
