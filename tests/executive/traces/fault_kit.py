"""Real faults for a trace store, shared by the fault tests and ``bench/trace_faults.py``:
a SQLite file held ``BEGIN EXCLUSIVE`` by another process, a tiny tmpfs that fills, a store
made read-only (a tmpfs remounted read-only, an immutable file), and a PostgreSQL database
whose connections are refused and killed for a while (that database only: the shared
server is never stopped)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from executive.contracts import EventRecord, InputRecord, RunRecord, TelemetryRecord
from executive.traces import TraceWriter

__all__ = [
    "can_mount",
    "emit_run",
    "held_exclusive",
    "immutable",
    "pg_refused",
    "stored_rows",
    "tiny_tmpfs",
]


def emit_run(writer: TraceWriter, run_id: str, ticks: int, *, pause: float = 0.0) -> int:
    """A run's records, as a paced run emits them (a row of telemetry and an event per tick,
    an input every 10); the number of records emitted."""
    writer.emit(RunRecord(run_id, {}, 0, {"policy": {"telemetry_every": 1}}))
    n = 1
    for tick in range(ticks):
        writer.emit(TelemetryRecord(run_id, tick, {"D1": {"x": tick, "pad": "x" * 200}}))
        writer.emit(EventRecord(run_id, tick, "tick", {"i": tick}))
        n += 2
        if tick % 10 == 0:
            writer.emit(InputRecord(run_id, tick, "command", {"c": tick}, "operator"))
            n += 1
        if pause:
            time.sleep(pause)
    return n


def stored_rows(url: str, run_id: str) -> int:
    """The records of ``run_id`` the store holds (its run row included)."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            total = 0
            for table in ("runs", "telemetry", "events", "inputs"):
                total += conn.execute(
                    sa.text(f"select count(*) from {table} where run_id = :r"), {"r": run_id}
                ).scalar_one()
            return int(total)
    finally:
        engine.dispose()


@contextlib.contextmanager
def held_exclusive(path: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another process holds the SQLite file ``BEGIN EXCLUSIVE`` for ``seconds`` (from when
    the block is entered): no other writer gets in meanwhile."""
    code = (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(float(sys.argv[2]))\n"
        "c.execute('COMMIT')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    try:
        yield proc
    finally:
        proc.wait(timeout=seconds + 30)


def can_mount() -> bool:
    """Whether this process may mount a tmpfs (root in a container that allows it)."""
    probe = Path(f"/tmp/isr-mount-probe-{time.time_ns()}")
    probe.mkdir()
    try:
        ok = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
        )
        if ok.returncode != 0:
            return False
        subprocess.run(["umount", str(probe)], check=True)
        return True
    except OSError:
        return False
    finally:
        probe.rmdir()


@contextlib.contextmanager
def tiny_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (e.g. "600k") mounted at ``where``: a disk that fills."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount_read_only(where: Path) -> None:
    """Make the tmpfs at ``where`` read-only (the files stay, nothing may be written)."""
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """``chattr +i`` on ``path`` for the block (even root may not write it)."""
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


@contextlib.contextmanager
def pg_refused(admin_dsn: str, database: str, seconds: float) -> Iterator[threading.Thread]:
    """PostgreSQL down for ``database`` for ``seconds``: new connections refused
    (``ALLOW_CONNECTIONS false``) and the open ones killed (``pg_terminate_backend``) now and
    again meanwhile; then connections are allowed again. Only that database is touched."""
    import psycopg
    from psycopg import sql

    done = threading.Event()

    def kill() -> None:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(
                    sql.Identifier(database)
                )
            )
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                admin.execute(
                    "select pg_terminate_backend(pid) from pg_stat_activity"
                    " where datname = %s and pid <> pg_backend_pid()",
                    (database,),
                )
                time.sleep(0.2)
            admin.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(database))
            )
        done.set()

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        thread.join(seconds + 30)
