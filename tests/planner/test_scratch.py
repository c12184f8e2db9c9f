"""Scratch arrays: used again once nothing holds them, never while something does."""

from __future__ import annotations

import threading
import weakref

import numpy as np

from planner.scratch import HEADROOM, ScratchPool


def test_a_buffer_is_used_again_only_once_nothing_holds_it():
    pool = ScratchPool()
    a = pool.take((3, 4), np.float64)
    a[:] = 7.0
    view = a[1:]
    del a
    b = pool.take((3, 4), np.float64)  # the first is still held through ``view``
    assert not np.shares_memory(b, view)
    at = b.__array_interface__["data"][0]  # where it is, without holding it
    del b
    c = pool.take((2, 5), np.float64)  # free again, and large enough: the same memory
    assert c.__array_interface__["data"][0] == at
    assert c.shape == (2, 5)
    assert pool.take((3, 4), np.int64).dtype == np.int64  # another dtype: its own buffer


def test_free_buffers_beyond_the_spare_ones_are_let_go():
    pool = ScratchPool(spare=1)
    held = [pool.take((100,), np.float64) for _ in range(4)]
    del held
    pool.take((10,), np.float64)
    assert len(pool._pool) <= 2  # noqa: SLF001  # the one taken and one spare


def test_threads_never_share_a_buffer_while_they_hold_it():
    pool = ScratchPool()
    seen: list[np.ndarray] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def work() -> None:
        start.wait()
        for _ in range(200):
            buf = pool.take((64,), np.int64)
            with lock:
                assert not any(np.shares_memory(buf, other) for other in seen)
                seen.append(buf)
            with lock:  # by identity: ``list.remove`` compares arrays with ``==`` (ambiguous)
                seen[:] = [other for other in seen if other is not buf]

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not seen


def test_a_buffer_made_for_one_ask_serves_a_slightly_larger_one_next():
    """A replan's arrays are a few nodes larger than the plan's before: the same memory."""
    pool = ScratchPool()
    first = pool.take((1000, 40), np.float64)
    at = first.__array_interface__["data"][0]
    del first
    grown = pool.take((1000, 40 + 40 // HEADROOM), np.float64)
    assert grown.__array_interface__["data"][0] == at
    assert grown.shape == (1000, 45)
    del grown
    larger = pool.take((1000, 50), np.float64)  # beyond the room: its own
    assert larger.__array_interface__["data"][0] != at


def _root(array: np.ndarray) -> np.ndarray:
    """The buffer a view was made from (its address may be reused once it is freed)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def test_the_largest_free_buffers_are_the_ones_kept():
    """A round's large arrays outlive the small ones its windows take between rounds."""
    pool = ScratchPool(spare=2)
    large = pool.take((1000, 50), np.float64)
    buffer = weakref.ref(_root(large))
    small = [pool.take((4, 4), np.float64) for _ in range(3)]  # made while it is held
    del large, small  # all four free, the large one the oldest
    kept = pool.take((4, 4), np.float64)  # one small one used, one more let go
    assert buffer() is not None
    again = pool.take((1000, 50), np.float64)
    assert _root(again) is buffer()
    del kept
