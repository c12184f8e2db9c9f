"""The trace store: every run's inputs, events, plans and state hashes in a database
(SQLAlchemy 2.0; a SQLite file by default, any URL such as PostgreSQL for teams)."""

from executive.traces.engine import default_url, open_store
from executive.traces.reader import TraceReader
from executive.traces.writer import TraceWriter

__all__ = ["TraceReader", "TraceWriter", "default_url", "open_store"]
