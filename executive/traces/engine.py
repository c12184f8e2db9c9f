"""Opening a trace store: any SQLAlchemy URL, a SQLite file under ``runs/`` by default."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from executive.errors import ExecutiveError
from executive.traces.schema import METADATA

__all__ = ["default_url", "open_store"]


def default_url() -> str:
    return "sqlite:///runs/isr.db"


def open_store(url: str) -> Engine:
    """An engine with every table created; SQLite in WAL mode, so a killed writer leaves a
    database that opens and holds every committed batch."""
    try:
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed)
        if parsed.get_backend_name() == "sqlite":
            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_connection, _record):
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.close()
        METADATA.create_all(engine)
        return engine
    except (ArgumentError, SQLAlchemyError, ImportError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ExecutiveError(f"cannot open trace store {url!r}: {reason}") from exc
