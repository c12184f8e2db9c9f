"""Trace sinks that need no database: a list (tests, ``--db none``) and a fan-out."""

from __future__ import annotations

from executive.contracts import TraceRecord

__all__ = ["ListSink", "NullSink", "TeeSink"]


class ListSink:
    def __init__(self) -> None:
        self.records: list[TraceRecord] = []

    def emit(self, record: TraceRecord) -> None:
        self.records.append(record)

    def of(self, kind: type) -> list:
        return [r for r in self.records if isinstance(r, kind)]


class NullSink:
    def emit(self, record: TraceRecord) -> None:
        pass


class TeeSink:
    def __init__(self, *sinks) -> None:
        self.sinks = sinks

    def emit(self, record: TraceRecord) -> None:
        for sink in self.sinks:
            sink.emit(record)
