"""Persistent memories (seed 001): what the operator wants every agent to keep in mind.

A memory is one of ``instruction`` ("Always use efficient allocation"), ``note`` (a fact to
remember), ``preference`` (how the operator likes it) or ``warning`` (something to avoid).
They live in the trace store's database (table ``memories``, same SQLAlchemy URL as the
traces), survive runs, and every active one is appended to every agent's system prompt
(``agents.context.format_memories``). Removing a memory deactivates it: the row
stays, so a trace that used it can still be explained.

Contract
--------
Options
    ``MemoryStore(url)``: any SQLAlchemy URL the trace store accepts (the table is created
    if missing).
Methods
    ``add(kind, text) -> Memory``; ``list(include_removed=False) -> list[Memory]``;
    ``remove(id) -> Memory``; ``active() -> list[Memory]`` (what prompts receive: objects
    with ``category`` and ``text``, i.e. ``MemoryLike``). Bad kinds, empty or too long
    texts (``MAX_TEXT``), ids that are not an active memory and database failures raise
    ``ExecutiveError`` with one clear line. Calls are synchronous and short
    (one indexed query); ``close()`` disposes of the connection pool.
    ``active()`` is called for every agent prompt, on the event loop: it is served from a
    copy at most ``cache_s`` old (default 1 s; this store's own add / remove refresh it at
    once), so a planning round does not query the database once per agent call.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterable
from dataclasses import dataclass

from agents.context import MemoryLike
from executive.errors import ExecutiveError

# SQLAlchemy and the store's schema are imported where a store is opened or read: a run
# without a store (`isr run --db none`) never loads them (0.3 CPU s of its start).
__all__ = ["MAX_TEXT", "MEMORY_KINDS", "Memory", "MemoryStore", "WithLessons"]

MEMORY_KINDS = ("instruction", "note", "preference", "warning")
MAX_TEXT = 2000  # characters: a memory is a line in every prompt, not a document


@dataclass(frozen=True)
class Memory:
    """One stored memory, as read from (or just written to) the ``memories`` table."""

    id: int  # the row id: what ``isr memory rm`` takes
    kind: str  # one of MEMORY_KINDS
    text: str  # one line, whitespace collapsed
    created_at: float  # Unix seconds
    active: bool = True  # False once removed (the row is kept)

    @property
    def category(self) -> str:  # agents.context.MemoryLike
        """The kind, under the name prompts read (``MemoryLike``)."""
        return self.kind

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field (``isr memory list --json``, answers)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "created_at": self.created_at,
            "active": self.active,
        }


def check_kind(kind: str) -> str:
    """``kind`` trimmed and lower-cased; ``ExecutiveError`` unless one of MEMORY_KINDS."""
    kind = (kind or "").strip().lower()
    if kind not in MEMORY_KINDS:
        raise ExecutiveError(f"memory kind {kind!r}: choose one of {', '.join(MEMORY_KINDS)}")
    return kind


class MemoryStore:
    """The memories in one database; see the module docstring for the contract."""

    def __init__(self, url: str, *, cache_s: float = 1.0) -> None:
        from executive.traces.engine import open_store

        self.url = url
        self.cache_s = cache_s
        self._engine = open_store(url)
        self._cached: tuple[float, builtins.list[Memory]] | None = None

    def add(self, kind: str, text: str) -> Memory:
        """Store a new active memory and return it (its id given by the database).

        The text is collapsed to one line. Raises ``ExecutiveError`` for a bad kind, an
        empty text, more than ``MAX_TEXT`` characters, or a database failure.
        """
        from executive.traces import schema as S
        from executive.traces.engine import database_errors

        kind = check_kind(kind)
        text = " ".join((text or "").split())  # one line in a prompt
        if not text:
            raise ExecutiveError("memory text: must not be empty")
        if len(text) > MAX_TEXT:
            raise ExecutiveError(f"memory text: {len(text)} characters, at most {MAX_TEXT}")
        created = time.time()
        storing = f"cannot store the memory in {self.url}"
        with database_errors(storing), self._engine.begin() as conn:
            result = conn.execute(
                S.memories.insert().values(kind=kind, text=text, created_at=created, active=True)
            )
            key = result.inserted_primary_key
            if key is None:
                raise ExecutiveError(f"{storing}: no id given")
            memory_id = int(key[0])
        self._cached = None
        return Memory(memory_id, kind, text, created, True)

    def list(self, include_removed: bool = False) -> builtins.list[Memory]:
        """The memories in the order they were added; active ones only unless
        ``include_removed``. Always reads the database (no cache)."""
        from sqlalchemy import select

        from executive.traces import schema as S

        query = select(S.memories).order_by(S.memories.c.id)
        if not include_removed:
            query = query.where(S.memories.c.active.is_(True))
        return self._read(query)

    def active(self) -> builtins.list[Memory]:
        """The active memories, from a copy at most ``cache_s`` seconds old (another
        process's changes may show that late). Returns a new list each call."""
        now = time.monotonic()
        if self._cached is None or now - self._cached[0] > self.cache_s:
            self._cached = (now, self.list())
        return list(self._cached[1])

    def remove(self, memory_id: int | str) -> Memory:
        """Deactivate a memory (the row stays) and return it as it is now.

        ``memory_id`` may be text ("3"). Raises ``ExecutiveError`` for an id that is not a
        whole number or not an active memory (already removed ones included), or a
        database failure.
        """
        from sqlalchemy import select, update

        from executive.traces import schema as S
        from executive.traces.engine import database_errors

        try:
            key = int(memory_id)
        except (TypeError, ValueError):
            raise ExecutiveError(f"memory id {memory_id!r}: expected a whole number") from None
        found = self._read(select(S.memories).where(S.memories.c.id == key))
        if not found or not found[0].active:
            raise ExecutiveError(f"no active memory with id {key} in {self.url}")
        with (
            database_errors(f"cannot remove memory {key} in {self.url}"),
            self._engine.begin() as conn,
        ):
            conn.execute(update(S.memories).where(S.memories.c.id == key).values(active=False))
        self._cached = None
        old = found[0]
        return Memory(old.id, old.kind, old.text, old.created_at, False)

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()

    def _read(self, query) -> builtins.list[Memory]:
        from executive.traces.engine import database_errors

        with (
            database_errors(f"cannot read memories from {self.url}"),
            self._engine.connect() as conn,
        ):
            rows = conn.execute(query).all()
        return [
            Memory(int(r.id), r.kind, r.text, float(r.created_at), bool(r.active)) for r in rows
        ]


class WithLessons:
    """What a run's prompts receive: the store's active memories, then the run's lesson
    lines (``agents.words.lessons``, fixed at its start). A memory request still adds to
    the store."""

    def __init__(self, store: MemoryStore, lessons: Iterable[MemoryLike]) -> None:
        self.store = store
        self.lessons = tuple(lessons)

    def active(self) -> builtins.list[MemoryLike]:
        """The active memories and the lessons, as prompts read them."""
        return [*self.store.active(), *self.lessons]

    def add(self, kind: str, text: str) -> Memory:
        """Store a memory (``MemoryStore.add``)."""
        return self.store.add(kind, text)
