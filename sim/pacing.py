"""Pacing: when each tick is due on the wall clock, as plain schedule arithmetic.

A ``Pacer`` never sleeps, blocks or awaits: it reads an injected ``Clock`` and answers how
long to wait, so the same schedule serves the synchronous ``run_paced`` (which sleeps) and
the asyncio executive (which awaits an interruptible sleep), and tests drive it with a fake
clock.

Contract
--------
Options
    ``Pacer(tick_hz, speed=1.0, *, clock=None)``. ``speed`` is K times real time, a number
    within [``MIN_SPEED``, ``MAX_SPEED``] = [1e-4, 1e4], or None for as fast as possible;
    anything else raises ``SimError`` (a number that is not positive and finite: "speed must
    be a positive number or None"). At 20 Hz, 1e4 is a 5 µs period, finer than any tick
    takes (ask for None instead), and 1e-4 is one tick every 500 s; the dashboard bounds its
    speed control by the same 1e4. ``clock`` has ``now() -> float`` (seconds on a clock
    that never goes back); ``WallClock`` (``time.perf_counter``) by default, which serves
    an asyncio caller as well (only differences of its own readings matter); a test passes
    a fake whose ``now()`` it moves by hand.
Consumes
    ``start(tick)`` once: ``tick`` is due now. Then, per tick ``k``: ``delay(k)`` (or
    ``slack(k)``) before it, and ``started(k)`` as it starts. ``set_speed(speed)`` at any
    time.
Produces
    ``delay(k)``: seconds to wait before tick ``k`` is due (0.0 when it is due or late, and
    always 0.0 as fast as possible). ``slack(k)``: the same, signed: negative when tick ``k``
    is already that late. ``due(k)``: the clock time at which it is due (None as fast as
    possible). ``started(k)`` returns and records tick ``k``'s start lateness (seconds,
    >= 0); read ``lateness`` (one entry per paced tick start, in order), ``worst`` (the
    largest lateness and its tick; ``(0.0, -1)`` before any) and ``overruns`` (ticks that
    started more than one period late).
Lifecycle
    Build, ``start(first tick)``, then loop: ``wait delay(k)``, ``started(k)``, run tick
    ``k``. Nothing to stop. ``delay``/``slack``/``due``/``started`` before ``start`` raise
    ``SimError``.

The schedule
------------
Deadlines are absolute: tick ``k`` is due ``(k - base_tick) * period`` after ``base``, with
``period = 1 / (tick_hz * speed)``, so sleeping never drifts. ``start(k)`` sets the base to
(now, ``k``). An overrun (``started(k)`` more than one period late) is counted and moves the
base to (now, ``k``): the schedule restarts from now instead of bursting to catch up.
``set_speed`` takes effect at once, from the next tick to start (the one after the last
``started``, or the ``start`` tick if none started yet): that tick is due now and the ones
after it one new period apart, so a change from 0.0001 to 10 does not keep waiting for the
old due time; the caller interrupts its sleep and asks ``delay`` again. Setting the speed it
already has changes nothing. Ticks started while running as fast as possible are not
recorded. Pacing decides when a tick runs, never what it does.

Usage, asyncio (the executive)::

    pacer = Pacer(sim.tick_hz, speed, clock=WallClock())
    pacer.start(sim.tick)
    while running:
        while (delay := pacer.delay(sim.tick)) > 0:
            woken.clear()  # set by whoever calls pacer.set_speed(...)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), delay)
        pacer.started(sim.tick)
        tick_once()
    pacer.lateness, pacer.worst, pacer.overruns  # for the run's report
"""

from __future__ import annotations

import math
import time
from typing import Protocol

from sim.errors import SimError

__all__ = [
    "MAX_SPEED",
    "MIN_SPEED",
    "Clock",
    "Pacer",
    "SleepingClock",
    "WallClock",
    "check_speed",
]

MIN_SPEED = 1e-4  # times real time: one tick every 500 s at 20 Hz
MAX_SPEED = 1e4  # times real time: a 5 µs period at 20 Hz; beyond it, ask for None


class Clock(Protocol):
    """Wall time for pacing: seconds from any fixed origin, never going back."""

    def now(self) -> float:
        """The current time in seconds."""
        ...


class SleepingClock(Clock, Protocol):
    """A clock that can also block for a while: what the synchronous ``run_paced`` uses."""

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` (>= 0)."""
        ...


class WallClock:
    """The process's monotonic high-resolution clock (``time.perf_counter``)."""

    def now(self) -> float:
        """``time.perf_counter()``."""
        return time.perf_counter()

    def sleep(self, seconds: float) -> None:
        """``time.sleep(seconds)``."""
        time.sleep(seconds)


def check_speed(speed: float | None) -> float | None:
    """``speed`` if it is None or within [MIN_SPEED, MAX_SPEED]; SimError otherwise."""
    if speed is None:
        return None
    if not (speed > 0 and math.isfinite(speed)):
        raise SimError(f"speed must be a positive number or None, got {speed!r}")
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise SimError(
            f"speed must be within [{MIN_SPEED:g}, {MAX_SPEED:g}] times real time, or None"
            f" for as fast as possible, got {speed!r}"
        )
    return speed


class Pacer:
    """When each tick is due at ``speed`` x real time; see the module's contract."""

    def __init__(
        self, tick_hz: float, speed: float | None = 1.0, *, clock: Clock | None = None
    ) -> None:
        if not (tick_hz > 0 and math.isfinite(tick_hz)):
            raise SimError(f"tick_hz must be a positive number, got {tick_hz!r}")
        self.tick_hz = float(tick_hz)
        self.clock: Clock = clock if clock is not None else WallClock()
        self._speed = check_speed(speed)
        self._base: float | None = None  # clock time at which ``_base_tick`` is due
        self._base_tick = 0
        self._next = 0  # the next tick to start
        self.lateness: list[float] = []
        self.worst: tuple[float, int] = (0.0, -1)
        self.overruns = 0

    @property
    def speed(self) -> float | None:
        """Times real time; None: as fast as possible."""
        return self._speed

    @property
    def period(self) -> float | None:
        """Seconds of wall time per tick; None: as fast as possible."""
        return None if self._speed is None else 1.0 / (self.tick_hz * self._speed)

    def start(self, tick: int) -> None:
        """Begin the schedule: ``tick`` is due now."""
        self._base, self._base_tick, self._next = self.clock.now(), tick, tick

    def due(self, tick: int) -> float | None:
        """The clock time at which ``tick`` is due; None as fast as possible."""
        base = self._anchor()
        period = self.period
        return None if period is None else base + (tick - self._base_tick) * period

    def slack(self, tick: int) -> float:
        """Seconds until ``tick`` is due: negative when it is already that late; 0.0 as fast
        as possible."""
        due = self.due(tick)
        return 0.0 if due is None else due - self.clock.now()

    def within(self, tick: int, seconds: float, margin: float = 0.0) -> float:
        """Seconds from now to the start of the last tick after ``tick`` that is due at most
        ``seconds - margin`` from now (the next tick's, if none is): what a result ready by
        then is taken at. Ticks start only on the schedule, so ``seconds`` itself is kept
        only by a result ready one tick's quantum before it. ``seconds`` as fast as
        possible."""
        period = self.period
        if period is None:
            return seconds
        due = self.due(tick + 1)
        assert due is not None
        first = due - self.clock.now()
        if first >= seconds - margin:
            return max(0.0, first)
        return max(0.0, first + math.floor((seconds - margin - first) / period) * period)

    def delay(self, tick: int) -> float:
        """Seconds to wait before ``tick`` is due (>= 0; 0.0 as fast as possible)."""
        return max(0.0, self.slack(tick))

    def started(self, tick: int) -> float:
        """Tick ``tick`` starts now: record how late it is (seconds, >= 0, returned). More
        than one period late is an overrun: counted, and the schedule restarts from now."""
        base = self._anchor()
        self._next = tick + 1
        period = self.period
        if period is None:
            return 0.0
        now = self.clock.now()
        late = now - (base + (tick - self._base_tick) * period)
        self.lateness.append(max(0.0, late))
        if late > self.worst[0]:
            self.worst = (late, tick)
        if late > period:
            self.overruns += 1
            self._base, self._base_tick = now, tick  # do not burst to catch up
        return max(0.0, late)

    def set_speed(self, speed: float | None) -> None:
        """Change the pace at once, from the next tick to start (due now); SimError for a
        speed out of range. The same speed again changes nothing."""
        speed = check_speed(speed)
        if speed == self._speed:
            return
        self._speed = speed
        if self._base is not None:
            self._base, self._base_tick = self.clock.now(), self._next

    def _anchor(self) -> float:
        if self._base is None:
            raise SimError("the pacer has not started: call start(tick) first")
        return self._base
