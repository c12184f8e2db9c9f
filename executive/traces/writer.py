"""The trace writer: ``emit`` queues a record and returns at once; a thread writes batches.

Contract: ``TraceWriter(url)``; ``start()`` / ``close()`` (or ``with``). ``emit(record)``
never blocks: when the bounded queue is full the record is dropped and counted
(``dropped``), never silently. A caller that may wait (a run as fast as possible) awaits
``drain()`` now and then: it returns once the queue is back under half full, so nothing is
dropped. ``flush(timeout)`` waits until everything emitted before it has been written (a
batch that failed counts as done: it is logged and counted in ``errors``). Each batch is one
transaction, so a killed process leaves every batch committed before it. Plan versions are
upserted by ``plan_id`` (status changes re-emit). While a run is open (its start written,
not its end) the writer stamps its row with a heartbeat (``last_seen``, every
``heartbeat_s``) and the last tick stored (``last_tick``): a run still "running" whose
heartbeat stopped is a crashed run (``TraceReader``). ``emit`` is meant to be called from
one thread (the event loop's).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import queue
import threading
import time
from collections import defaultdict
from typing import Any

from sqlalchemy import Connection, Table, update

from executive import contracts as C
from executive.traces import schema as S
from executive.traces.engine import open_store

__all__ = ["TraceWriter"]

log = logging.getLogger(__name__)

_TABLE = {
    C.InputRecord: S.inputs,
    C.TelemetryRecord: S.telemetry,
    C.EventRecord: S.events,
    C.StateHashRecord: S.state_hashes,
    C.AgentRunRecord: S.agent_runs,
    C.SnapshotRecord: S.snapshots,
}


class TraceWriter:
    """The buffered trace sink over a database; see the module docstring for the contract.

    ``max_queue`` bounds the records waiting (then they are dropped); the thread wakes at
    least every ``flush_interval`` seconds and writes at most ``batch`` records per
    transaction. Counters: ``written``, ``dropped``, ``errors`` (failed batches).
    """

    def __init__(
        self,
        url: str,
        *,
        max_queue: int = 200_000,
        flush_interval: float = 0.2,
        batch: int = 2000,
        heartbeat_s: float = 5.0,
    ) -> None:
        self.url = url
        self._engine = open_store(url)
        # (sequence number, record): flush() waits for a sequence number to be written
        self._queue: queue.Queue[tuple[int, C.TraceRecord]] = queue.Queue(maxsize=max_queue)
        self._interval = flush_interval
        self._batch = batch
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._done_seq = 0
        self._cond = threading.Condition()
        self._seq = 0
        self.dropped = 0
        self.written = 0
        self.errors = 0
        self.heartbeat_s = heartbeat_s
        self._open: dict[str, int] = {}  # runs started and not ended -> last tick written
        self._beat = 0.0  # monotonic time of the last heartbeat

    def __enter__(self) -> TraceWriter:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the writer thread (a daemon); idempotent. Records emitted before it wait
        in the queue."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="trace-writer", daemon=True)
            self._thread.start()

    def emit(self, record: C.TraceRecord) -> None:
        """Queue ``record`` for the writer thread; never blocks (a full queue drops it)."""
        try:
            self._queue.put_nowait((self._seq + 1, record))
            self._seq += 1  # only what is queued: flush() waits for nothing that was dropped
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 10_000 == 0:
                log.warning("trace queue full: %d record(s) dropped", self.dropped)

    @property
    def backlog(self) -> float:
        """How full the queue is, 0 to 1."""
        return self._queue.qsize() / max(1, self._queue.maxsize)

    async def drain(self, below: float = 0.5) -> None:
        """Wait (asynchronously) until the queue is under ``below`` full: back-pressure for
        a caller that may wait, so that nothing it emits is dropped."""
        while self.backlog >= below:
            await asyncio.sleep(self._interval / 4)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait up to ``timeout`` seconds for everything emitted so far to be written;
        False if time ran out. Blocks the caller: off the event loop, or at the end."""
        target = self._seq
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._done_seq < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        """Flush (up to 10 s), stop the thread (up to 10 s more) and release the database.

        Blocking: an async caller runs it in a thread. Records emitted afterwards stay
        queued, unwritten.
        """
        if self._thread is not None:
            self.flush()
            self._stop.set()
            self._thread.join(timeout=10)
            self._thread = None
        self._engine.dispose()

    # ----- the writer thread ---------------------------------------------------------

    def _loop(self) -> None:
        while not (self._stop.is_set() and self._queue.empty()):
            items: list[tuple[int, C.TraceRecord]] = []
            try:
                items.append(self._queue.get(timeout=self._interval))
                while len(items) < self._batch:
                    items.append(self._queue.get_nowait())
            except queue.Empty:
                pass
            if not items:
                self._heartbeat()
                continue
            records = [record for _, record in items]
            ended = self._note(records)
            try:
                self._write(records)
                self.written += len(items)
            except Exception:
                self.errors += 1
                log.exception("trace batch of %d record(s) failed", len(items))
            for run_id in ended:
                self._open.pop(run_id, None)
            self._heartbeat()
            with self._cond:
                self._done_seq = items[-1][0]
                self._cond.notify_all()

    def _note(self, records: list[C.TraceRecord]) -> list[str]:
        """Note the runs opened by ``records`` and the last tick of each; the runs they end."""
        ended = []
        for record in records:
            if isinstance(record, C.RunRecord):
                self._open[record.run_id] = 0
            elif isinstance(record, C.RunEndRecord):
                ended.append(record.run_id)
            else:
                tick = getattr(record, "tick", None)
                run = getattr(record, "run_id", None)
                if isinstance(tick, int) and run in self._open:
                    self._open[run] = max(self._open[run], tick)
        return ended

    def _heartbeat(self) -> None:
        """Every ``heartbeat_s``, stamp the open runs' rows: alive, and their last tick."""
        now = time.monotonic()
        if not self._open or now - self._beat < self.heartbeat_s:
            return
        self._beat = now
        try:
            with self._engine.begin() as conn:
                for run_id, tick in self._open.items():
                    conn.execute(
                        update(S.runs)
                        .where(S.runs.c.run_id == run_id)
                        .values(last_seen=time.time(), last_tick=tick)
                    )
        except Exception:
            self.errors += 1
            log.exception("trace heartbeat failed")

    def _write(self, records: list[C.TraceRecord]) -> None:
        rows: defaultdict[Table, list[dict[str, Any]]] = defaultdict(list)
        with self._engine.begin() as conn:
            for record in records:
                if isinstance(record, C.RunRecord):
                    conn.execute(
                        S.runs.insert().values(
                            run_id=record.run_id,
                            parent_run_id=record.parent_run_id,
                            scenario=record.scenario,
                            seed=record.seed,
                            config=record.config,
                            started_at=record.started_at,
                            status="running",
                        )
                    )
                elif isinstance(record, C.RunEndRecord):
                    conn.execute(
                        update(S.runs)
                        .where(S.runs.c.run_id == record.run_id)
                        .values(
                            ended_at=record.ended_at,
                            status=record.status,
                            outcome=record.outcome,
                            last_seen=record.ended_at,
                            last_tick=self._open.get(record.run_id),
                        )
                    )
                elif isinstance(record, C.PlanVersionRecord):
                    self._upsert_plan(conn, record)
                else:
                    row = dataclasses.asdict(record)
                    if isinstance(record, C.StateHashRecord):
                        row["hash"] = row.pop("state_hash")
                    if isinstance(record, C.AgentRunRecord):
                        row["clamp_actions"] = list(row["clamp_actions"])
                    rows[_TABLE[type(record)]].append(row)
            for table, batch in rows.items():
                conn.execute(table.insert(), batch)

    @staticmethod
    def _upsert_plan(conn: Connection, record: C.PlanVersionRecord) -> None:
        exists = conn.execute(
            S.plan_versions.select().where(S.plan_versions.c.plan_id == record.plan_id)
        ).first()
        if exists is None:
            conn.execute(S.plan_versions.insert().values(**dataclasses.asdict(record)))
            return
        changes: dict[str, Any] = {"status": record.status}
        if record.provenance:
            changes["provenance"] = record.provenance
        if record.solution:
            changes.update(solution=record.solution, trigger=record.trigger or exists.trigger)
        conn.execute(
            update(S.plan_versions)
            .where(S.plan_versions.c.plan_id == record.plan_id)
            .values(**changes)
        )
