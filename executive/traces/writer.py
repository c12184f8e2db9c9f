"""The trace writer: ``emit`` queues a record and returns at once; a thread writes batches.

Contract: ``TraceWriter(url)``; ``start()`` / ``close()`` (or ``with``). ``emit(record)``
never blocks: when the bounded queue is full the record is dropped and counted
(``dropped``), never silently. ``flush(timeout)`` waits until everything emitted before it
is committed. Each batch is one transaction, so a killed process leaves every batch
committed before it. Plan versions are upserted by ``plan_id`` (status changes re-emit).
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections import defaultdict

from sqlalchemy import update

from executive import contracts as C
from executive.traces import schema as S
from executive.traces.engine import open_store

__all__ = ["TraceWriter"]

log = logging.getLogger(__name__)

_TABLE = {C.InputRecord: S.inputs, C.TelemetryRecord: S.telemetry, C.EventRecord: S.events,
          C.StateHashRecord: S.state_hashes, C.AgentRunRecord: S.agent_runs}


class TraceWriter:
    def __init__(self, url: str, *, max_queue: int = 200_000, flush_interval: float = 0.2,
                 batch: int = 2000) -> None:
        self.url = url
        self._engine = open_store(url)
        self._queue: queue.Queue = queue.Queue(maxsize=max_queue)
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

    def __enter__(self) -> TraceWriter:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="trace-writer", daemon=True)
            self._thread.start()

    def emit(self, record) -> None:
        try:
            self._seq += 1
            self._queue.put_nowait((self._seq, record))
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 10_000 == 0:
                log.warning("trace queue full: %d record(s) dropped", self.dropped)

    def flush(self, timeout: float = 10.0) -> bool:
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
        if self._thread is not None:
            self.flush()
            self._stop.set()
            self._thread.join(timeout=10)
            self._thread = None
        self._engine.dispose()

    # ----- the writer thread ---------------------------------------------------------

    def _loop(self) -> None:
        while not (self._stop.is_set() and self._queue.empty()):
            items = []
            try:
                items.append(self._queue.get(timeout=self._interval))
                while len(items) < self._batch:
                    items.append(self._queue.get_nowait())
            except queue.Empty:
                pass
            if not items:
                continue
            try:
                self._write([record for _, record in items])
                self.written += len(items)
            except Exception:  # noqa: BLE001 - a bad batch is logged and counted, never fatal
                self.errors += 1
                log.exception("trace batch of %d record(s) failed", len(items))
            with self._cond:
                self._done_seq = items[-1][0]
                self._cond.notify_all()

    def _write(self, records: list) -> None:
        rows = defaultdict(list)
        with self._engine.begin() as conn:
            for record in records:
                if isinstance(record, C.RunRecord):
                    conn.execute(S.runs.insert().values(
                        run_id=record.run_id, parent_run_id=record.parent_run_id,
                        scenario=record.scenario, seed=record.seed, config=record.config,
                        started_at=record.started_at, status="running"))
                elif isinstance(record, C.RunEndRecord):
                    conn.execute(update(S.runs).where(S.runs.c.run_id == record.run_id).values(
                        ended_at=record.ended_at, status=record.status, outcome=record.outcome))
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
    def _upsert_plan(conn, record) -> None:
        exists = conn.execute(S.plan_versions.select().where(
            S.plan_versions.c.plan_id == record.plan_id)).first()
        if exists is None:
            conn.execute(S.plan_versions.insert().values(**dataclasses.asdict(record)))
            return
        changes = {"status": record.status}
        if record.solution:
            changes.update(solution=record.solution, trigger=record.trigger or exists.trigger)
        conn.execute(update(S.plan_versions)
                     .where(S.plan_versions.c.plan_id == record.plan_id).values(**changes))
