"""Trace sinks that need no database: a list (tests, ``--db none``) and a fan-out.

Besides ``emit``, a sink may count what it did not store (``dropped``, and ``loss``: a
``TraceLoss`` saying which tables and ticks), offer ``drain()`` (wait until it has room
again: back-pressure for a run that may wait) and ``flush(timeout)`` (wait until what was
emitted is stored or counted); ``dropped_by``, ``lost_by``, ``drain`` and ``settle`` read
them from any sink, and the fan-out passes them through.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from executive.contracts import TraceRecord, TraceSink

__all__ = [
    "ListSink",
    "NullSink",
    "TeeSink",
    "backlog",
    "drain",
    "dropped_by",
    "lost_by",
    "settle",
]

_R = TypeVar("_R")


def dropped_by(sink: TraceSink) -> int:
    """How many records ``sink`` has dropped so far (0 for a sink that never drops)."""
    return int(getattr(sink, "dropped", 0))


def lost_by(sink: TraceSink) -> dict[str, dict[str, Any]]:
    """What ``sink`` did not store, per table: {"rows": n, "ticks": [[first, last], ...]}."""
    merged = getattr(sink, "lost", None)
    if callable(merged):
        return dict(merged())
    loss = getattr(sink, "loss", None)
    return dict(loss.summary()) if loss is not None else {}


async def settle(sink: TraceSink, timeout: float) -> bool:
    """Wait (in a thread, up to ``timeout`` s) until what ``sink`` was given is stored or
    counted as lost, if it can say so; False if time ran out."""
    flush = getattr(sink, "flush", None)
    if flush is None:
        return True
    return bool(await asyncio.to_thread(flush, timeout))


def backlog(sink: TraceSink) -> float:
    """How full ``sink``'s queue is, 0 to 1 (0 for a sink without one)."""
    return float(getattr(sink, "backlog", 0.0))


async def drain(sink: TraceSink) -> None:
    """Wait until ``sink`` has room again, if it can say so."""
    wait = getattr(sink, "drain", None)
    if wait is not None:
        await wait()


class ListSink:
    """Keeps every record in memory, in order (tests, runs without a store)."""

    def __init__(self) -> None:
        self.records: list[TraceRecord] = []

    def emit(self, record: TraceRecord) -> None:
        """Append ``record``; never blocks."""
        self.records.append(record)

    def of(self, kind: type[_R]) -> list[_R]:
        """The records of one type (e.g. ``EventRecord``), in order."""
        return [r for r in self.records if isinstance(r, kind)]


class NullSink:
    """Throws every record away."""

    def emit(self, record: TraceRecord) -> None:
        """Do nothing."""
        pass


class TeeSink:
    """Hands every record to each of ``sinks``, in the order given."""

    def __init__(self, *sinks: TraceSink) -> None:
        self.sinks = sinks

    def emit(self, record: TraceRecord) -> None:
        """Emit to every sink in turn; blocks only if one of them does."""
        for sink in self.sinks:
            sink.emit(record)

    @property
    def backlog(self) -> float:
        """The fullest of the sinks' queues, 0 to 1."""
        return max((backlog(sink) for sink in self.sinks), default=0.0)

    @property
    def dropped(self) -> int:
        """What the sinks have dropped, together."""
        return sum(dropped_by(sink) for sink in self.sinks)

    def lost(self) -> dict[str, dict[str, Any]]:
        """What the sinks did not store, per table, together."""
        out: dict[str, dict[str, Any]] = {}
        for sink in self.sinks:
            for table, lost in lost_by(sink).items():
                mine = out.setdefault(table, {"rows": 0, "ticks": []})
                mine["rows"] += lost["rows"]
                mine["ticks"] = sorted(mine["ticks"] + lost["ticks"])
        return out

    def flush(self, timeout: float) -> bool:
        """Flush every sink that can, each within ``timeout``."""
        done = True
        for sink in self.sinks:
            flush = getattr(sink, "flush", None)
            if flush is not None:
                done = bool(flush(timeout)) and done
        return done

    async def drain(self) -> None:
        """Wait until every sink has room again."""
        for sink in self.sinks:
            await drain(sink)
