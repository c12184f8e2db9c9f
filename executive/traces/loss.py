"""The ledger of trace records that were not stored: per table, how many and on which ticks.

One ledger per writer, shared by the thread that emits (a full queue drops) and the writer
thread (a batch given up after its retries), so it takes a lock. ``summary()`` is what a
``TRACE_DROPPED`` event, a run's outcome (``trace_lost``) and ``isr run`` report:
``{"telemetry": {"rows": 1020, "ticks": [[585, 1605]]}, ...}``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from executive import contracts as C

__all__ = ["MAX_RANGES", "TraceLoss", "describe", "table_of"]

MAX_RANGES = 20  # tick ranges kept per table; past that the last one stretches

_TABLES: dict[type, str] = {
    C.RunRecord: "runs",
    C.RunEndRecord: "runs",
    C.InputRecord: "inputs",
    C.TelemetryRecord: "telemetry",
    C.EventRecord: "events",
    C.StateHashRecord: "state_hashes",
    C.AgentRunRecord: "agent_runs",
    C.SnapshotRecord: "snapshots",
    C.PlanVersionRecord: "plan_versions",
}


def table_of(record: C.TraceRecord) -> str:
    """The table ``record`` is stored in."""
    return _TABLES.get(type(record), type(record).__name__)


class TraceLoss:
    """Counts the records not stored, per table, with the tick ranges they covered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, int] = {}
        self._ticks: dict[str, list[list[int]]] = {}
        self.total = 0

    def add(self, records: Iterable[C.TraceRecord]) -> int:
        """Count ``records`` as lost; returns how many."""
        n = 0
        with self._lock:
            for record in records:
                n += 1
                table = table_of(record)
                self._rows[table] = self._rows.get(table, 0) + 1
                tick = getattr(record, "tick", None)
                if isinstance(tick, int):
                    self._note_tick(self._ticks.setdefault(table, []), tick)
            self.total += n
        return n

    @staticmethod
    def _note_tick(ranges: list[list[int]], tick: int) -> None:
        """Widen the range ``tick`` falls in or next to (rows come every few ticks, so a
        gap under ~50 ticks is the same outage), or start a new one."""
        for r in ranges:
            if r[0] - 50 <= tick <= r[1] + 50:
                r[0], r[1] = min(r[0], tick), max(r[1], tick)
                return
        if len(ranges) >= MAX_RANGES:
            last = ranges[-1]
            last[0], last[1] = min(last[0], tick), max(last[1], tick)
        else:
            ranges.append([tick, tick])
            ranges.sort()

    def summary(self) -> dict[str, dict[str, Any]]:
        """Table -> {"rows": n, "ticks": [[first, last], ...]} (JSON-safe copy)."""
        with self._lock:
            return {
                table: {"rows": rows, "ticks": [list(r) for r in self._ticks.get(table, [])]}
                for table, rows in sorted(self._rows.items())
            }


def describe(summary: dict[str, dict[str, Any]]) -> str:
    """One line a person reads: "telemetry 1,020 rows (ticks 585-1605), events 12 rows"."""
    parts = []
    for table, lost in summary.items():
        ticks = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in lost.get("ticks") or [])
        parts.append(f"{table} {lost['rows']:,} rows" + (f" (ticks {ticks})" if ticks else ""))
    return ", ".join(parts)
