"""The paced loop's worker threads, scheduled below the tick.

On this 2-core machine a 1,000-drone planning round keeps both cores busy (its compile's
two threads, then its Python beside the search), and a tick that wakes from its sleep
waited for a core. With the workers one step down (nice +5, the calling thread's own
priority plus ``STEP``), the OS runs the tick as soon as it wakes: alternated with the code
before, three 40 s runs each at 1,000 x 5,000 x 500 with a replan every 5 s, tick start
lateness p99 4.7-5.4 -> 3.4-4.4 ms (``bench/executive_ticks.py``; the figures in
``bench/results/executive_ticks_swarm.txt``). The GIL is untouched: this decides who gets a
core, not who gets the interpreter (``sys.setswitchinterval`` and ``executive.gate`` do
that).

A paced run's loop gets a default executor whose threads lower themselves when they
start; the threads they start (a compile's pool, a spare matrix's prefault) inherit their
priority (Linux threads do). Elsewhere (no per-thread priority) the threads run as
before; where the OS refuses, the log says so once. An unprivileged process can lower a
thread's priority but never raise it back, so these threads stay low for their lives: they
only ever serve the loop's background work. Nor can it raise the tick's instead, which is
why the workers step down: on a machine shared with other busy programs, the rounds now
yield to those too, not only to the tick.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

__all__ = ["STEP", "install_workers", "lower_this_thread"]

log = logging.getLogger(__name__)

STEP = 5  # nice steps below the thread that made the pool (the loop's)
_refused = False  # whether the OS refused a thread its lower priority (said once)

# the loops given their workers: one pool per loop, whatever number of runs it hosts
_given: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ThreadPoolExecutor] = (
    weakref.WeakKeyDictionary()
)


def lower_this_thread(step: int = STEP) -> bool:
    """Lower the calling thread's scheduling priority ``step`` nice steps below what it is
    (at most 19); False where a thread's own priority cannot be set (not Linux, or the
    OS refused). Only this thread changes: the process's other threads keep theirs."""
    if sys.platform != "linux" or not hasattr(os, "setpriority"):
        return False
    tid = threading.get_native_id()  # Linux: a thread id is a "process" to setpriority
    try:
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + step))
    except OSError as exc:
        global _refused
        if not _refused:  # the same for every worker: said once
            _refused = True
            log.warning("worker threads keep the tick's priority (the OS refused: %s)", exc)
        return False
    return True


def install_workers(loop: asyncio.AbstractEventLoop) -> ThreadPoolExecutor:
    """Make ``loop``'s default executor (``asyncio.to_thread``, ``run_in_executor(None,
    ...)``) a pool whose threads run ``STEP`` below the loop's thread; once per loop."""
    pool = _given.get(loop)
    if pool is None:
        pool = ThreadPoolExecutor(
            thread_name_prefix="executive-worker", initializer=lower_this_thread
        )
        loop.set_default_executor(pool)
        _given[loop] = pool
    return pool
