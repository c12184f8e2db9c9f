"""The tick gate: a paced tick in progress, for the threads that share the GIL with it.

A worker thread running Python beside a tick takes the GIL from it every switch interval
(0.2 ms while paced), and each GIL-releasing call of the tick (a lock, a numpy or SQLite
call) waits about that long to take it back. A 1,000-drone commit's tick, which records
~780 inputs, ran at a half or a third of its speed while the trace writer, woken by the
first of them, wrote them a few at a time beside it.

So a paced loop closes the gate for each tick (``GATE.ticking()``), and work that can wait
a few milliseconds (the trace writer's batches) waits for it to open (``GATE.wait``)
before each piece. The wait is bounded: a tick that never ends, or ticks back to back,
delay the work, never stop it. Runs as fast as possible never close it (the writer keeps
pace with them instead). The gate is the process's, like the GIL: paced runs in one
process close it together (it is open when none of them is in a tick).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["GATE", "TickGate"]


class TickGate:
    """Open unless a paced tick is running somewhere in the process."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._open.set()
        self._lock = threading.Lock()
        self._ticking = 0

    @contextmanager
    def ticking(self) -> Iterator[None]:
        """Closed for the body (a tick); nested or concurrent ticks keep it closed until
        the last one ends."""
        with self._lock:
            self._ticking += 1
            self._open.clear()
        try:
            yield
        finally:
            with self._lock:
                self._ticking -= 1
                if self._ticking == 0:
                    self._open.set()

    @property
    def is_open(self) -> bool:
        return self._open.is_set()

    def wait(self, timeout: float) -> bool:
        """Wait until no tick runs, at most ``timeout`` seconds; False if one still does."""
        return self._open.wait(timeout)


GATE = TickGate()
