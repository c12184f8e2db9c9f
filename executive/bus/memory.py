"""The in-process bus: the embedded default, one event loop, no broker.

Contract: ``InProcessBus(run_id)``; ``publish(topic, payload)`` stores retained topics
(``plan``, ``scene``, ``status``) and puts the message into every matching subscription
(never blocks: each subscription drops by its own policy). ``subscribe(topics)`` delivers
the retained messages first. ``link`` is always ``local`` (commands always reach the
host); ``close_run(state)`` publishes a final status unless the run's last one is over.
Must be used from the event loop's thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from executive.bus.base import LIVE_STATES, Fanout, LinkState, Subscription
from executive.bus.topics import TOPICS
from executive.errors import ExecutiveError

__all__ = ["InProcessBus"]


class InProcessBus:
    """The ``Bus`` within one process; see the module docstring for the contract."""

    def __init__(self, run_id: str | None = None) -> None:
        self.run_id = run_id
        self._local = Fanout()
        self.published = 0  # messages accepted by publish(), all topics
        self._last_status: dict[str, Any] | None = None

    async def start(self) -> None:
        """Nothing to connect: present so the bus fits the ``Bus`` lifecycle."""
        pass

    async def stop(self) -> None:
        """Close every subscription, so their readers stop."""
        self._local.close_all()

    async def __aenter__(self) -> InProcessBus:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        """Deliver to every matching subscription now; never blocks.

        Raises ``ExecutiveError`` for a topic that is not in ``TOPICS``. A ``cmd`` published
        here reaches the local ``cmd`` subscribers (the host).
        """
        if topic not in TOPICS:
            raise ExecutiveError(f"unknown bus topic {topic!r}")
        self.published += 1
        if topic == "status":
            self._last_status = payload
        self._local.deliver(topic, payload)

    def close_run(self, state: str, **fields: Any) -> bool:
        """Publish the final status ``state`` unless the last one says the run is over."""
        last = self._last_status
        if last is None or last.get("state") not in LIVE_STATES:
            return False
        self.publish(
            "status", {"run_id": last.get("run_id", self.run_id), "state": state, **fields}
        )
        return True

    @property
    def link(self) -> LinkState:
        """Always ``local``: in one process, a command always reaches the host."""
        return LinkState("local", True)

    def stats(self) -> dict[str, Any]:
        """``published``; nothing is ever lost on the way (``lost`` is empty); what the
        subscribers dropped, per topic, summed over the open ones."""
        dropped: dict[str, int] = {}
        for sub in self._local.subscriptions:
            for topic, n in sub.dropped.items():
                dropped[topic] = dropped.get(topic, 0) + n
        return {
            "transport": "local",
            "published": self.published,
            "lost": {},
            "lost_total": 0,
            "subscribers_dropped": dropped,
        }

    def subscribe(self, topics: Iterable[str], *, maxsize: int = 256) -> Subscription:
        """A bounded subscription; retained messages of those topics arrive first."""
        return self._local.subscribe(topics, maxsize=maxsize)

    def subscribers(self) -> list[Subscription]:
        """The open subscriptions (a copy), e.g. to read their drop counts."""
        return list(self._local.subscriptions)
