"""The dashboard's optional access to the trace store, for ``/api/runs``.

Contract
--------
Options
    ``TraceStore(url)``: a SQLAlchemy URL, or None for a dashboard without traces.
Consumes / produces
    Rows of ``executive.traces.TraceReader`` (read in worker threads by the routes).
Lifecycle
    ``await open()`` in the app's lifespan (a store that cannot be opened is logged and
    remembered: the live view still works without it); ``close()`` on shutdown.
    ``reader`` is the open reader, or raises ``errors.NoTraceStore`` saying why there is none.
    ``for_reader(truth)`` is the store as one reader may see it: itself for a reader of the
    ground truth, else a view whose ``reader`` answers public rows
    (``dashboard.truth.PublicTraceReader``).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import TYPE_CHECKING, cast

from dashboard.errors import NoTraceStore
from dashboard.truth import PublicTraceReader
from executive.errors import ExecutiveError

if TYPE_CHECKING:
    from executive.traces import TraceReader

__all__ = ["TraceStore"]

log = logging.getLogger(__name__)


class TraceStore:
    """The trace reader, if this dashboard has a trace store and it opened."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.error: str | None = None
        self.truth = True  # whether ``reader`` answers the ground truth too
        self._reader: TraceReader | None = None

    async def open(self) -> None:
        """Open the reader off the event loop; a failure is kept as ``error``, not raised."""
        if not self.url:
            return
        try:
            from executive.traces import TraceReader  # SQLAlchemy only for a dashboard with traces

            self._reader = await asyncio.to_thread(TraceReader, self.url)
        except ExecutiveError as exc:
            self.error = str(exc)
            log.warning("dashboard: %s", exc)

    @property
    def available(self) -> bool:
        """Whether the reader is open."""
        return self._reader is not None

    @property
    def reader(self) -> TraceReader:
        """The open reader; ``NoTraceStore`` (404) when there is none."""
        if self._reader is None:
            raise NoTraceStore(self.error)
        if not self.truth:  # the same queries, public answers
            return cast("TraceReader", PublicTraceReader(self._reader))
        return self._reader

    def for_reader(self, truth: bool) -> TraceStore:
        """This store for a reader who sees the ground truth (itself) or not (a view
        sharing its reader, answering public rows)."""
        if truth:
            return self
        view = copy.copy(self)
        view.truth = False
        return view

    def close(self) -> None:
        """Close the reader, if open."""
        if self._reader is not None:
            self._reader.close()
