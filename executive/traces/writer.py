"""The trace writer: ``emit`` queues a record and returns at once; a thread writes batches.

Contract: ``TraceWriter(url)``; ``start()`` / ``close()`` (or ``with``). The constructor
proves the store takes writes (it commits a row to ``writers``) and raises
``ExecutiveError`` when it does not (read-only file or folder, full disk, no permission),
so a run is refused before its first tick. ``emit(record)`` never blocks: when the bounded
queue is full the record is dropped and counted. A caller that may wait (a run as fast as
possible) awaits ``drain()`` now and then: it returns once the queue is back under half
full, so nothing is dropped.

Nothing is lost silently. A batch the store refuses is retried with back-off (50 ms
doubling to 2 s) for as long as the store has been failing less than ``retry_s``; after
that the store is tried once every 2 s, and the batches it refuses (or that come between
two tries) are given up. Whatever is not stored (dropped from
a full queue, given up, or still queued when ``close`` stops waiting) is counted in
``loss`` per table with its tick ranges (``executive.traces.loss``); ``dropped`` is the
total. No local spool file: the bounded queue is the buffer while the store is down. A
spool would be a second store that fails the same ways (a full disk fills it too), whose
own losses would need the same accounting, and whose catch-up reorders writes; a store
down longer than the queue and ``retry_s`` hold is reported instead, never hidden.

``flush(timeout)`` waits until everything emitted before it has been written or given up.
Each batch is one transaction, so a killed process leaves every batch committed before it.
Plan versions are upserted by ``plan_id`` (status changes re-emit). While a run is open
(its start written, not its end) the writer stamps its row with a heartbeat
(``last_seen``, every ``heartbeat_s``) and the last tick stored (``last_tick``): a run
still "running" whose heartbeat stopped is a crashed run (``TraceReader``). ``emit`` is
meant to be called from one thread (the event loop's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import socket
import threading
import time
from collections import defaultdict
from typing import Any

from sqlalchemy import Connection, Engine, Table, update
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as SATimeoutError

from executive import contracts as C
from executive.errors import ExecutiveError
from executive.gate import GATE
from executive.traces import schema as S
from executive.traces.engine import open_store
from executive.traces.loss import TraceLoss
from executive.traces.packing import pack_frame, pack_json
from executive.traces.pieces import row_of

__all__ = ["TraceWriter"]

# The writer's Python waits for a paced tick to end (``executive.gate``) before each piece
# of this many rows, at most this long: pieces of a few ms each beside the next tick.
_GATE_EVERY = 128
_GATE_WAIT_S = 0.1

log = logging.getLogger(__name__)

_PROBE_S = 2.0  # past its retries, a store that refuses is tried once every 2 s

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
    transaction; a refused batch is retried while the store has failed for less than
    ``retry_s``. Counters: ``written``, ``dropped`` (every record not stored), ``errors``
    (failed attempts); ``loss`` says which tables and ticks.
    """

    def __init__(
        self,
        url: str,
        *,
        max_queue: int = 200_000,
        flush_interval: float = 0.2,
        batch: int = 2000,
        heartbeat_s: float = 5.0,
        retry_s: float = 60.0,
    ) -> None:
        self.url = url
        self._engine = open_store(url)
        try:
            _prove_writable(self._engine, url)
        except BaseException:
            self._engine.dispose()
            raise
        # (sequence number, record): flush() waits for a sequence number to be written
        # (sequence number, record), or (0, None): close() waking the thread at once
        self._queue: queue.Queue[tuple[int, C.TraceRecord | None]] = queue.Queue(maxsize=max_queue)
        self._interval = flush_interval
        self._batch = batch
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._give_up = threading.Event()  # close() stopped waiting: no more retries
        self._done_seq = 0
        self._cond = threading.Condition()
        self._seq = 0
        self.loss = TraceLoss()
        self.full = 0  # records a full queue dropped (also in ``loss``)
        self.written = 0
        self.errors = 0
        self.retry_s = retry_s
        self._failing_since: float | None = None  # monotonic: the store's first refusal
        self._said = -1e9  # monotonic: when losses were last logged
        self._next_try = 0.0  # monotonic: past its retries, when the store is tried again
        self._inflight: list[C.TraceRecord] = []  # the batch being written
        self._closed_out = False  # close() counted what was left: the thread counts nothing
        self.heartbeat_s = heartbeat_s
        self._open: dict[str, int] = {}  # runs started and not ended -> last tick written
        self._inputs: dict[str, int] = {}  # run -> inputs emitted (numbered) so far
        self._beat = 0.0  # monotonic time of the last heartbeat
        # drain()'s waiters (their loop and event), woken when the thread takes a batch
        self._room_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._room_lock = threading.Lock()

    def __enter__(self) -> TraceWriter:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def dropped(self) -> int:
        """Every record not stored so far: dropped from a full queue or given up."""
        return self.loss.total

    def start(self) -> None:
        """Start the writer thread (a daemon); idempotent. Records emitted before it wait
        in the queue."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="trace-writer", daemon=True)
            self._thread.start()

    def emit(self, record: C.TraceRecord) -> None:
        """Queue ``record`` for the writer thread; never blocks (a full queue drops it).
        An input is numbered first (``seq``), so one dropped leaves a gap a replay sees."""
        if isinstance(record, C.InputRecord) and record.seq is None:
            n = self._inputs[record.run_id] = self._inputs.get(record.run_id, 0) + 1
            # its fields by hand: dataclasses.replace costs ~25 us (a commit emits ~780)
            record = C.InputRecord(
                record.run_id, record.tick, record.kind, record.payload, record.source, n
            )
        try:
            self._queue.put_nowait((self._seq + 1, record))
            self._seq += 1  # only what is queued: flush() waits for nothing that was dropped
        except queue.Full:
            self.full += 1
            self.loss.add((record,))
            if self.full == 1 or self.full % 10_000 == 0:
                log.warning("trace queue full: %d record(s) dropped", self.full)

    @property
    def backlog(self) -> float:
        """How full the queue is, 0 to 1."""
        return self._queue.qsize() / max(1, self._queue.maxsize)

    async def drain(self, below: float = 0.5) -> None:
        """Wait (asynchronously) until the queue is under ``below`` full: back-pressure for
        a caller that may wait, so that nothing it emits is dropped.

        The writer thread wakes the waiter as soon as it takes a batch off the queue (at the
        latest every ``flush_interval``): a run as fast as possible resumes as soon as there
        is room, not at the next poll (polling every ``flush_interval / 4`` left both the run
        and the writer idle, each waiting for the other)."""
        if self.backlog < below:
            return
        room = asyncio.Event()
        waiter = (asyncio.get_running_loop(), room)
        with self._room_lock:
            self._room_waiters.append(waiter)
        try:
            while self.backlog >= below:
                room.clear()
                if self.backlog < below:  # taken between the check and the clear
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(room.wait(), self._interval)
        finally:
            with self._room_lock:
                self._room_waiters.remove(waiter)

    def _made_room(self) -> None:
        """Wake every ``drain`` waiting (the writer thread took records off the queue)."""
        with self._room_lock:
            waiters = list(self._room_waiters)
        for loop, room in waiters:
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile
                loop.call_soon_threadsafe(room.set)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait up to ``timeout`` seconds for everything emitted so far to be written (or
        given up, and counted); False if time ran out. Blocks the caller: off the event
        loop, or at the end."""
        target = self._seq
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._done_seq < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float | None = None) -> None:
        """Flush (up to ``timeout``, by default ``retry_s`` + 10 s: a store down a while
        gets its retries), stop the thread (up to 10 s more) and release the database.
        What is still unwritten then is counted in ``loss``.

        Blocking: an async caller runs it in a thread. Records emitted afterwards stay
        queued, unwritten (and uncounted).
        """
        if self._thread is not None:
            self.flush(self.retry_s + 10.0 if timeout is None else timeout)
            self._give_up.set()
            self._stop.set()
            # wake the thread now: waiting on an empty queue, it would otherwise see the
            # stop at its next wake, up to flush_interval later (every run's end paid it)
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait((0, None))
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                with self._cond:
                    self._closed_out = True  # count the batch in flight and the queue here
                    left = list(self._inflight)
                    while True:
                        try:
                            record = self._queue.get_nowait()[1]
                        except queue.Empty:
                            break
                        if record is not None:
                            left.append(record)
                if left:
                    self.loss.add(left)
                    log.error("trace writer stopped with %d record(s) unwritten", len(left))
            self._thread = None
        self._engine.dispose()

    # ----- the writer thread ---------------------------------------------------------

    def _loop(self) -> None:
        while not (self._stop.is_set() and self._queue.empty()):
            items: list[tuple[int, C.TraceRecord | None]] = []
            try:
                items.append(self._queue.get(timeout=self._interval))
                # a paced tick that emits (a commit's ~780 inputs) is let finish first: its
                # records are then taken in one batch, none of them written beside it
                GATE.wait(_GATE_WAIT_S)
                while len(items) < self._batch:
                    items.append(self._queue.get_nowait())
            except queue.Empty:
                pass
            if items and self._room_waiters:
                self._made_room()
            records = [record for _, record in items if record is not None]
            if not records:  # nothing queued, or only close()'s wake-up
                self._heartbeat()
                continue
            ended = self._note(records)
            with self._cond:
                self._inflight = records
            self._commit(records)
            for run_id in ended:
                self._open.pop(run_id, None)
            self._heartbeat()
            with self._cond:
                self._inflight = []
                self._done_seq = max(seq for seq, record in items if record is not None)
                self._cond.notify_all()

    def _commit(self, records: list[C.TraceRecord]) -> None:
        """Write one batch, retrying with back-off while the store has been refusing for
        less than ``retry_s``; a batch refused for another reason than the store's state (a
        row it rejects) is written row by row, so one bad row costs only itself."""
        delay = 0.05
        while True:
            if self._given_up_on_store():
                self._lose(records, None)  # down past its retries: no wait per batch
                return
            try:
                self._write(records)
            except Exception as exc:
                self.errors += 1
                if not _transient(exc):
                    self._row_by_row(records, exc)
                    return
                now = time.monotonic()
                if self._failing_since is None:
                    self._failing_since = now
                    log.warning("trace store refused a batch, retrying: %s", _reason(exc))
                if self._give_up.is_set() or now - self._failing_since >= self.retry_s:
                    self._next_try = now + _PROBE_S
                    self._lose(records, exc)
                    return
                self._give_up.wait(delay)
                delay = min(2.0, delay * 2)
                continue
            if self._failing_since is not None:
                log.warning("trace store back after %.1f s", time.monotonic() - self._failing_since)
                self._failing_since = None
            self.written += len(records)
            return

    def _given_up_on_store(self) -> bool:
        """Past its retries the store is tried again once every ``_PROBE_S`` seconds; the
        batches between are counted as lost at once, so a store that stays down (each try
        may wait out a lock) never holds the run's end for minutes."""
        if self._failing_since is None:
            return False
        return time.monotonic() < self._next_try

    def _row_by_row(self, records: list[C.TraceRecord], exc: Exception) -> None:
        log.warning("trace batch refused (%s): writing it row by row", _reason(exc))
        for record in records:
            try:
                self._write([record])
                self.written += 1
            except Exception as one:
                self.errors += 1
                self._lose([record], one)

    def _lose(self, records: list[C.TraceRecord], exc: Exception | None) -> None:
        with self._cond:
            if self._closed_out:
                return  # close() has counted them already
            self.loss.add(records)
        now = time.monotonic()
        if now - self._said < 10.0:  # a store down for long: a line every 10 s, not a flood
            return
        self._said = now
        log.error(
            "trace store: %d record(s) not stored (%s); %d lost so far",
            len(records),
            _reason(exc) if exc is not None else "the store is down",
            self.loss.total,
        )

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
        if not self._open or now - self._beat < self.heartbeat_s or self._failing_since is not None:
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
        except Exception as exc:
            self.errors += 1  # a missed beat loses no record: the next one stamps it
            log.warning("trace heartbeat failed: %s", _reason(exc))

    def _write(self, records: list[C.TraceRecord]) -> None:
        rows: defaultdict[Table, list[dict[str, Any]]] = defaultdict(list)
        with self._engine.begin() as conn:
            for i, record in enumerate(records):
                if i % _GATE_EVERY == 0:
                    GATE.wait(_GATE_WAIT_S)
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
                            batch_key=record.config.get("batch_key"),
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
                            inputs_emitted=self._inputs.get(record.run_id, 0),
                        )
                    )
                elif isinstance(record, C.PlanVersionRecord):
                    self._upsert_plan(conn, record)
                elif isinstance(record, C.TelemetryRecord):
                    rows[S.telemetry].append(_telemetry_row(record))
                elif isinstance(record, C.SnapshotRecord):
                    rows[S.snapshots].append(
                        {
                            "run_id": record.run_id,
                            "tick": record.tick,
                            "scene": {},
                            "packed": pack_json(record.scene),
                        }
                    )
                else:
                    row = row_of(record)
                    if isinstance(record, C.StateHashRecord):
                        row["hash"] = row.pop("state_hash")
                    if isinstance(record, C.AgentRunRecord):
                        row["clamp_actions"] = list(row["clamp_actions"])
                    rows[_TABLE[type(record)]].append(row)
            for table, batch in rows.items():
                for at in range(0, len(batch), _GATE_EVERY):
                    GATE.wait(_GATE_WAIT_S)
                    conn.execute(table.insert(), batch[at : at + _GATE_EVERY])

    @staticmethod
    def _upsert_plan(conn: Connection, record: C.PlanVersionRecord) -> None:
        exists = conn.execute(
            S.plan_versions.select().where(S.plan_versions.c.plan_id == record.plan_id)
        ).first()
        if exists is None:
            row = row_of(record)
            row.update(solution={}, packed=pack_json(record.solution))
            conn.execute(S.plan_versions.insert().values(**row))
            return
        changes: dict[str, Any] = {"status": record.status}
        if record.provenance:
            changes["provenance"] = record.provenance
        if record.solution:
            changes.update(
                solution={},
                packed=pack_json(record.solution),
                trigger=record.trigger or exists.trigger,
            )
        conn.execute(
            update(S.plan_versions)
            .where(S.plan_versions.c.plan_id == record.plan_id)
            .values(**changes)
        )


def _transient(exc: BaseException) -> bool:
    """Whether ``exc`` is the store's state (locked, full, down, unreachable: worth a retry)
    rather than a row it rejects."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, OperationalError | InterfaceError | SATimeoutError | OSError)


def _reason(exc: BaseException) -> str:
    """The first line of what the database said."""
    text = str(getattr(exc, "orig", None) or exc)
    return text.splitlines()[0] if text else type(exc).__name__


def _telemetry_row(record: C.TelemetryRecord) -> dict[str, Any]:
    """A telemetry row: the frame packed when it has the sim's shape, else as JSON."""
    packed = pack_frame(record.drones)
    drones = {} if packed is not None else record.drones
    return {"run_id": record.run_id, "tick": record.tick, "drones": drones, "packed": packed}


def _prove_writable(engine: Engine, url: str) -> None:
    """Commit one row to ``writers``: a store that cannot take it (read-only file, folder
    or mount, full disk, no write permission) is refused now, before a run's first tick,
    rather than found out by the trace thread after the run has flown."""
    try:
        with engine.begin() as conn:
            conn.execute(
                S.writers.insert().values(
                    opened_at=time.time(), host=socket.gethostname()[:64], pid=os.getpid()
                )
            )
    except (SQLAlchemyError, OSError) as exc:
        raise ExecutiveError(
            f"trace store {url!r} does not take writes: {_reason(exc)}"
            " (a read-only file or folder, a full disk, or no permission);"
            " give a writable --db, or --db none to fly without traces"
        ) from exc
