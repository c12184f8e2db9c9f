"""Scratch arrays used again once nothing holds them any more.

A swarm's round allocates arrays of tens to hundreds of MB (the distance matrix, the team
search's nearest-end table and routes). Fresh memory is paid for in page faults on first
touch, and on a VM memory the guest has not touched before costs far more: the team
search's 42 MB nearest-end table at 1,000 drones took ~100 ms a round to fill, about 10 ms
into memory used before.

A buffer is free when the pool's own reference is the only one left: every array made from
it (a view, a reshape) holds a reference to it, so while one lives the buffer is not handed
out again. Thread-safe.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["HEADROOM", "ScratchPool", "is_free"]

HEADROOM = 8  # a fresh buffer holds 1/HEADROOM more than asked for


def is_free(pool: list[np.ndarray], i: int) -> bool:
    """Whether the pool's reference to ``pool[i]`` is the only one."""
    return sys.getrefcount(pool[i]) == _FREE_REFS


_probe = [np.empty(0)]
_FREE_REFS = sys.getrefcount(_probe[0])  # the same expression on an array only a list holds
del _probe


class ScratchPool:
    """Flat buffers handed out as ``(shape)`` views, their contents left over; at most
    ``spare`` free ones kept besides those in use, the largest (the others' memory back to
    the OS)."""

    def __init__(self, spare: int = 2) -> None:
        self.spare = spare
        self._pool: list[np.ndarray] = []
        self._lock = threading.Lock()

    def take(self, shape: tuple[int, ...], dtype: DTypeLike) -> np.ndarray:
        """An array of ``shape`` and ``dtype`` nothing else holds (contents left over)."""
        kind = np.dtype(dtype)
        need = int(np.prod(shape, dtype=np.int64))
        with self._lock:
            pool = self._pool
            free = [i for i in range(len(pool)) if is_free(pool, i)]
            fits = [i for i in free if pool[i].dtype == kind and pool[i].size >= need]
            if fits:  # the smallest that fits: the large ones stay for large asks
                best = min(fits, key=lambda i: pool[i].size)
                buf = pool.pop(best)
                free = [i if i < best else i - 1 for i in free if i != best]
            else:  # with room for the next ask a little larger (a replan's starts, frozen
                # heads): at 1,000 drones the first replan's search arrays, each a few
                # hundred nodes larger than the first plan's, were made afresh (110 ms)
                buf = np.empty(need + need // HEADROOM, dtype=kind)
            # the largest free ones are kept: a window's small arrays are cheap to make
            # again, a round's 40 MB ones are not (dropping the oldest let go of the plan's
            # routes, and the first replan faulted in new ones: 44 ms at 1,000 drones)
            by_size = sorted(free, key=lambda i: pool[i].size)
            drop = set(by_size[: max(0, len(free) - self.spare)])
            self._pool = [b for i, b in enumerate(pool) if i not in drop]
            self._pool.append(buf)
        return buf[:need].reshape(shape)
