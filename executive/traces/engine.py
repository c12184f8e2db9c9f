"""Opening a trace store: any SQLAlchemy URL, a SQLite file under ``runs/`` by default."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry

from executive.errors import ExecutiveError
from executive.traces.pieces import dumps
from executive.traces.schema import METADATA

__all__ = ["database_errors", "default_url", "open_store"]


def default_url() -> str:
    """The trace store used when none is given: ``runs/isr.db`` under the current folder."""
    return "sqlite:///runs/isr.db"


@contextmanager
def database_errors(doing: str) -> Iterator[None]:
    """A database failure inside the block as ``ExecutiveError`` saying what was being done
    ("cannot store the memory in URL") and why: one line for the user, no traceback."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise ExecutiveError(f"{doing}: {exc}") from exc


def open_store(url: str) -> Engine:
    """An engine with every table created; SQLite in WAL mode, so a killed writer leaves a
    database that opens and holds every committed batch.

    A SQLite file's folder is created if missing. Raises ``ExecutiveError`` (one line: the
    URL and why) for a bad URL, a missing driver or a database that cannot be opened.
    """
    try:
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # JSON in pieces: one long json.dumps call would hold the GIL from a ticking run
        engine = create_engine(parsed, json_serializer=dumps)
        if parsed.get_backend_name() == "sqlite":

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.close()

        _create_tables(engine)
        return engine
    except (ArgumentError, SQLAlchemyError, ImportError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "unable to open database file" in reason or "readonly database" in reason:
            # SQLite in WAL mode writes -wal and -shm files beside the store, even to read
            reason += " (is the store's folder writable? SQLite needs to write beside it)"
        raise ExecutiveError(f"cannot open trace store {url!r}: {reason}") from exc


def _create_tables(engine: Engine, attempts: int = 8) -> None:
    """Create the missing tables and columns. Processes opening a new store at once (a
    batch's workers, a reader polling it) race between "is it there" and CREATE or ALTER,
    and on SQLite for the lock that switches the file to WAL: the loser waits a moment and
    looks again."""
    for attempt in range(attempts):
        try:
            METADATA.create_all(engine)
            _add_missing_columns(engine)
            return
        except SQLAlchemyError as exc:
            why = str(exc)
            raced = any(
                sign in why for sign in ("already exists", "duplicate column", "database is locked")
            )
            if not raced or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _add_missing_columns(engine: Engine) -> None:
    """A store made by an older version lacks the nullable columns added since (such as
    ``plan_versions.provenance``): add them, so old runs stay readable and new ones fit."""
    present = inspect(engine)
    with engine.begin() as conn:
        for table in METADATA.sorted_tables:
            if not present.has_table(table.name):
                continue
            have = {c["name"] for c in present.get_columns(table.name)}
            for column in table.columns:
                if column.name in have or not column.nullable:
                    continue
                kind = column.type.compile(dialect=engine.dialect)
                conn.execute(text(f'ALTER TABLE "{table.name}" ADD COLUMN "{column.name}" {kind}'))
            indexed = {i["name"] for i in present.get_indexes(table.name)}
            for index in table.indexes:  # such as the unique batch key's
                if index.name not in indexed:
                    index.create(conn, checkfirst=True)
