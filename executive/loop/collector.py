"""Python's cyclic garbage collector under a paced run: run between ticks, never in one.

CPython's collector runs on whichever thread allocates when a count passes its threshold
and holds the GIL for the whole pass. At 1,000 drones x 5,000 targets x 500 SAMs
(``bench/executive_ticks.py``) its full passes took 50-90 ms of CPU every ~4 s, walking
what the run keeps (plans, flights, a round's tables), half of them on the tick's thread,
the rest holding the GIL from a worker while a tick was due; and they reclaimed nothing:
0 objects in a minute's run, 64 when it ended (the executive makes no long-lived cycles).
Full passes every 30 s, between ticks, still cost 90-130 ms each (what a round in flight
holds), more than a tick's slack. So, while a run is paced:

* before the first tick, one full pass and ``gc.freeze()``: what exists then (modules,
  kernels, the compiled mission, the first plan) lives for the run and is never walked;
* the automatic collector is off; the loop calls ``after_tick`` once a tick's work is
  done, which collects the youngest generation (what was allocated since the last tick:
  p50 0.04 ms; up to ~50 ms of CPU after a planning worker's burst at 1,000 drones) every
  tick, and the middle one (what survived the last second) every ``middle_every_s``;
* a full pass only every ``full_every_s`` (10 min), its survivors frozen after it: a
  safety valve for cycles that outlive the young passes, at the price of one pass over
  what those minutes kept (a late tick at 1,000 drones). None: never during the run.

* a young generation a planning worker filled past ``burst`` objects since the last
  tick (a round's mission, routes and commands at swarm size), or a middle one past
  ``burst_middle``, is frozen instead of walked:
  ``gc.freeze()`` costs microseconds, a pass about 30-55 ns an object (2.6-4.5 ms for
  80,000 in isolation; young passes up to 25 ms and a middle one 47 ms of CPU in
  1,000-drone runs, more than a tick's slack); the runs measured reclaimed nothing from
  such passes. What a burst holds in cycles waits for the run's end.

(Leaving the young passes automatic, with only full passes stopped, measured the same
at 1,000 drones; here no pass ever interrupts a tick.) The middle and full passes wait
for a tick with ``margin_s`` of slack before the next is due (for at most that period
again: a starved run still collects). What a run keeps is
freed by reference counting as before; only cycles that outlive the young passes wait for
the valve or the run's end, when everything is unfrozen and the automatic collector is
back. Paced runs in one process share the collector (it is the process's): the first sets
it up, the last to end puts it back as it found it (enabled or not, nothing frozen).
"""

from __future__ import annotations

import gc
import threading
import time
from dataclasses import dataclass, field

__all__ = ["Collector", "CollectorStats"]

_MIDDLE_EVERY_S = 1.0
_FULL_EVERY_S = 600.0
_MARGIN_S = 0.025  # slack before the next tick that a middle or full pass waits for
# young objects (allocated less freed since the last pass) above which they are frozen, not
# walked: a pass costs ~30-55 ns an object, ~1 ms at this many
_BURST = 20_000
# the same for the middle generation, estimated as what the young passes since the last
# middle one walked (counting it exactly costs a third of the pass): a middle pass measured
# 47 ms of CPU at 1,000 drones, with nothing reclaimed
_BURST_MIDDLE = 50_000

# The process's collector is shared by the paced runs in it: how many are running, and
# whether it was enabled before the first.
_lock = threading.Lock()
_running = 0
_was_enabled = True


@dataclass
class CollectorStats:
    """Passes made by ``Collector.after_tick`` per generation, the longest (ms of wall
    time, and of the tick thread's CPU: a pass the OS preempted is long in wall time only)."""

    passes: list[int] = field(default_factory=lambda: [0, 0, 0])
    longest_ms: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    longest_cpu_ms: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    collected: int = 0
    bursts: int = 0  # young generations frozen instead of walked
    burst_objects: int = 0  # how many objects they held (as counted by gc.get_count)

    def to_dict(self) -> dict[str, object]:
        return {
            "passes": list(self.passes),
            "longest_ms": [round(ms, 3) for ms in self.longest_ms],
            "longest_cpu_ms": [round(ms, 3) for ms in self.longest_cpu_ms],
            "collected": self.collected,
            "bursts": self.bursts,
            "burst_objects": self.burst_objects,
        }


class Collector:
    """The collector for one paced run: ``start()`` before the first tick, ``after_tick``
    after each, ``stop()`` at the end (also after a failure). See the module's docstring."""

    def __init__(
        self,
        tick_hz: float,
        *,
        middle_every_s: float = _MIDDLE_EVERY_S,
        full_every_s: float | None = _FULL_EVERY_S,
        margin_s: float = _MARGIN_S,
        burst: int = _BURST,
        burst_middle: int = _BURST_MIDDLE,
    ) -> None:
        self.burst, self.burst_middle = burst, burst_middle
        self._kept = 0  # young objects the young passes since the last middle one walked
        # counted in ticks (mission time): at 5x the passes come five times as often
        middle_every = max(1, round(middle_every_s * tick_hz))
        full_every = None if full_every_s is None else max(1, round(full_every_s * tick_hz))
        self.middle_every = middle_every
        self.full_every = full_every
        self.margin_s = margin_s
        self.stats = CollectorStats()
        self._ticks = 0
        self._middle_due = middle_every
        self._full_due = full_every if full_every is not None else -1
        self._started = False

    def start(self) -> None:
        """One full pass, freeze what survives it, and turn the automatic collector off."""
        global _running, _was_enabled
        if self._started:
            return
        with _lock:
            if _running == 0:
                _was_enabled = gc.isenabled()
                gc.disable()
                gc.collect()
            gc.freeze()
            _running += 1
        self._started = True

    def after_tick(self, slack_s: float) -> None:
        """A tick's work is done and the next is due in ``slack_s`` seconds: collect what
        is due (see the module's docstring)."""
        if not self._started:
            return
        self._ticks += 1
        ticks = self._ticks
        roomy = slack_s >= self.margin_s
        full, middle = self.full_every, self.middle_every
        if (
            full is not None
            and ticks >= self._full_due
            and (roomy or ticks >= self._full_due + full)
        ):
            self._collect(2)
            gc.freeze()  # the survivors live on: the next full pass does not walk them
            self._full_due = ticks + full
            self._middle_due = ticks + middle
        elif ticks >= self._middle_due and (roomy or ticks >= self._middle_due + middle):
            # a middle pass walks the young generation and what the young passes since the
            # last middle one kept
            if (walk := self._kept + gc.get_count()[0]) > self.burst_middle:
                self._freeze(walk)
            else:
                self._collect(1)
            self._kept = 0
            self._middle_due = ticks + middle
        elif (young := gc.get_count()[0]) > self.burst:
            self._freeze(young)
        else:
            self._kept += young
            self._collect(0)

    def _freeze(self, objects: int) -> None:
        gc.freeze()
        self._kept = 0
        self.stats.bursts += 1
        self.stats.burst_objects += objects

    def _collect(self, generation: int) -> None:
        stats = self.stats
        started, cpu = time.perf_counter(), time.thread_time()
        stats.collected += gc.collect(generation)
        ms = (time.perf_counter() - started) * 1000.0
        cpu_ms = (time.thread_time() - cpu) * 1000.0
        stats.passes[generation] += 1
        stats.longest_ms[generation] = max(stats.longest_ms[generation], ms)
        stats.longest_cpu_ms[generation] = max(stats.longest_cpu_ms[generation], cpu_ms)

    def stop(self) -> None:
        """The run is over: the last paced run to end unfreezes everything and puts the
        automatic collector back as the first found it (its next pass collects what the
        run left)."""
        global _running
        if not self._started:
            return
        self._started = False
        with _lock:
            _running -= 1
            if _running == 0:
                gc.unfreeze()
                if _was_enabled:
                    gc.enable()
