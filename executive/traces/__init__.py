"""The trace store: every run's inputs, events, plans and state hashes in a database
(SQLAlchemy 2.0; a SQLite file by default, any URL such as PostgreSQL for teams)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from executive.traces.engine import default_url, open_store
    from executive.traces.reader import TraceReader
    from executive.traces.writer import TraceWriter

# Imported when first used, so a command that only names the default store (``isr
# validate``'s options) does not load SQLAlchemy and the writer's contracts.
_HOMES = {
    "default_url": "executive.traces.engine",
    "open_store": "executive.traces.engine",
    "TraceReader": "executive.traces.reader",
    "TraceWriter": "executive.traces.writer",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


__all__ = ["TraceReader", "TraceWriter", "default_url", "open_store"]
