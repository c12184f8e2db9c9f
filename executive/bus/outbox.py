"""An MQTT link's outgoing queue: bounded, conflating, never blocking the publisher.

``put(topic, payload)`` never blocks: a full queue (``max_outgoing``) drops its oldest
message; a ``latest_only`` topic (telemetry, scene) keeps at most one message waiting, whose
payload a newer one replaces. The link's sender takes batches (``take``), marks them in
flight, and after a lost link hands them back (``requeue_inflight``): QoS 1 messages not
confirmed go back to the front, QoS 0 ones are lost. ``dropped`` counts what was thrown
away, per topic, split into ``superseded`` (a newer latest-only value took its place) and
``lost`` (could not be sent).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from typing import Any

from executive.bus.topics import TOPICS

__all__ = ["Entry", "Outbox"]


class Entry:
    """One message waiting to be sent; ``payload`` may be replaced while it waits.

    ``extra`` holds what the link adds on the wire, fixed when the message was published
    (the executive's envelope; a command's nothing: it is signed afresh at each send)."""

    __slots__ = ("extra", "payload", "sent", "topic")

    def __init__(
        self, topic: str, payload: dict[str, Any], extra: dict[str, Any] | None = None
    ) -> None:
        self.topic = topic
        self.payload = payload
        self.extra = extra
        self.sent = False


class Outbox:
    """The queue of messages to send; see the module docstring."""

    def __init__(self, max_outgoing: int) -> None:
        self.max_outgoing = max_outgoing
        self._out: deque[Entry] = deque()
        self._waiting_latest: dict[str, Entry] = {}
        self.inflight: list[Entry] = []
        self._wakeup = asyncio.Event()
        self.idle = asyncio.Event()  # set when nothing waits
        self.idle.set()
        # set when no batch is on the wire: all taken was confirmed or handed back
        self.settled = asyncio.Event()
        self.settled.set()
        self.closed = False  # after stop(): a message put is counted lost, none is taken
        self.dropped: dict[str, int] = {}  # thrown away, per topic: superseded + lost
        self.superseded: dict[str, int] = {}  # a newer latest-only value took the place
        self.lost: dict[str, int] = {}  # could not be sent
        self.sent = 0  # messages the broker confirmed (QoS 1) or took (QoS 0)
        self.resent = 0  # QoS 1 messages queued again after a lost link

    def __len__(self) -> int:
        return len(self._out)

    def waiting(self) -> list[Entry]:
        """The messages waiting, in order (a copy)."""
        return list(self._out)

    def put(self, topic: str, payload: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """Queue a message (conflating a latest-only topic); never blocks."""
        if self.closed:
            self.count_lost(topic)
            return
        if TOPICS[topic].latest_only:
            waiting = self._waiting_latest.get(topic)
            if waiting is not None:  # conflate: the newer value takes the older one's place
                waiting.payload, waiting.extra = payload, extra
                self.count_superseded(topic)
                return
        if len(self._out) >= self.max_outgoing:
            old = self._out.popleft()
            if self._waiting_latest.get(old.topic) is old:
                del self._waiting_latest[old.topic]
            self.count_lost(old.topic)
        entry = Entry(topic, payload, extra)
        self._out.append(entry)
        if TOPICS[topic].latest_only:
            self._waiting_latest[topic] = entry
        self._wake()

    def put_first(self, entries: Iterable[Entry]) -> None:
        """Queue ``entries`` ahead of everything, in their order."""
        entries = list(entries)
        for entry in reversed(entries):
            self._out.appendleft(entry)
            if TOPICS[entry.topic].latest_only:
                self._waiting_latest[entry.topic] = entry
        if self._out:
            self._wake()

    def newest_first(self, topic: str) -> None:
        """Keep only the newest waiting message of ``topic`` and move it to the front (the
        older ones are counted superseded): a final word goes out first and alone."""
        same = [e for e in self._out if e.topic == topic]
        for entry in same:
            self._out.remove(entry)
        for _ in same[:-1]:
            self.count_superseded(topic)
        if same:
            self._out.appendleft(same[-1])

    def _wake(self) -> None:
        self.idle.clear()
        self._wakeup.set()

    def count_lost(self, topic: str) -> None:
        """One message of ``topic`` that could not be sent."""
        self.lost[topic] = self.lost.get(topic, 0) + 1
        self.dropped[topic] = self.dropped.get(topic, 0) + 1

    def count_superseded(self, topic: str) -> None:
        """One message of ``topic`` replaced by a newer value before it went out."""
        self.superseded[topic] = self.superseded.get(topic, 0) + 1
        self.dropped[topic] = self.dropped.get(topic, 0) + 1

    def unlose(self, topic: str) -> None:
        """A message counted lost that went out after all (the final status)."""
        self.lost[topic] -= 1
        self.dropped[topic] -= 1

    def pending(self) -> int:
        """Messages waiting to be sent (and sent but not yet confirmed)."""
        return len(self._out) + sum(1 for e in self.inflight if not e.sent)

    async def take(self, most: int) -> list[Entry]:
        """The next batch (at most ``most``), waiting for one; set ``idle`` meanwhile (and
        ``settled``: the sender asks for more once the last batch is done). Once ``closed``,
        it hands out nothing more."""
        self.settled.set()
        while not self._out or self.closed:
            if not self._out:
                self.idle.set()
            self._wakeup.clear()
            await self._wakeup.wait()
        self.settled.clear()
        batch: list[Entry] = []
        while self._out and len(batch) < most:
            entry = self._out.popleft()
            if self._waiting_latest.get(entry.topic) is entry:
                del self._waiting_latest[entry.topic]
            batch.append(entry)
        return batch

    def requeue_inflight(self) -> None:
        """After a lost link: QoS 1 messages not confirmed go back to the front of the queue
        (a newer latest-only value waiting supersedes them); QoS 0 ones are lost."""
        inflight, self.inflight = self.inflight, []
        self.settled.set()  # the sender was cancelled: nothing of its batch is on the wire
        back: list[Entry] = []
        for entry in inflight:
            if entry.sent:
                continue
            if TOPICS[entry.topic].qos == 0:
                self.count_lost(entry.topic)
            elif TOPICS[entry.topic].latest_only and entry.topic in self._waiting_latest:
                self.count_superseded(entry.topic)
            else:
                back.append(entry)
        self.resent += len(back)
        self.put_first(back)

    def close(self) -> list[Entry]:
        """Empty the queue for good (``stop()``): what was still to send, counted lost."""
        left = [e for e in self.inflight if not e.sent] + list(self._out)
        self.inflight, self._waiting_latest = [], {}
        self._out.clear()
        self.closed = True
        for entry in left:
            self.count_lost(entry.topic)
        self.idle.set()
        return left
