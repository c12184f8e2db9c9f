"""The simulation driver: simpy owns simulated time, one fixed tick per ``step()``.

Contract (the executive's view)
-------------------------------
Options
    ``Sim(scenario, plan=None, *, mission=None, hash_every=0)``. ``plan`` is a
    ``planner.model.Solution`` or ``{drone id: [node ids]}``; its drones take off at tick 0
    along the planned geometry (``mission.route_path``); drones without a route stay parked.
    Tick rate, speeds, sensor range, capture radius, hold radius: the scenario's ``sim``.
Consumes (inputs)
    ``submit(item)``: a ``planner.edits`` edit or a ``sim.commands`` command, stamped with
    the tick it takes effect at (``tick``; edits may give ``t`` in seconds; unstamped
    means the next tick). Returns the stamped copy: record that to replay. An input
    stamped for a tick already run is rejected (``EditRejected`` / ``CommandRejected``
    in the next tick's events). The scenario's ``timeline`` is submitted by a simpy process.
Produces (per tick)
    ``step() -> TickResult``: the tick number, the simulated time at its end, the
    observable events (typed, ``sim.events``), the truth-only events (edits to hidden SAMs,
    for the trace store, never for the executive), a light ``FleetView`` (arrays; its
    ``snapshot()`` builds the pydantic ``Snapshot`` on request) and, every ``hash_every``
    ticks, the state hash.
Lifecycle
    Build, then ``step()`` as often as wanted (pure with respect to wall time), or
    ``run(until=...)`` as fast as possible, or ``run_paced(sim, speed)`` for real time x k.
    Nothing to stop or close; no threads, no asyncio.

Within a tick: inputs stamped for it are applied first, in submission order (timeline
first at tick boundaries, then the rest), then the world moves (``World.advance``).

Time is exact: the simpy clock counts ticks (integers), and seconds are ``tick / tick_hz``,
so there is no drift over a long mission. simpy processes: the clock (one per simulation:
it runs the fleet's vectorised tick, so a thousand drones cost one process, not a thousand)
and the timeline (it sleeps until each scripted edit's tick and delivers it). At each tick
the clock yields once more before running the tick, so every process woken at that tick has
delivered its inputs first, whatever simpy's same-time order.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence

import simpy

from planner.edits import Edit
from planner.mission import Mission
from planner.model import Scenario, Solution
from sim.commands import Command
from sim.errors import SimError
from sim.events import CommandRejected, EditRejected
from sim.snapshot import FleetView, Snapshot
from sim.world import World

__all__ = ["Clock", "PaceReport", "Sim", "TickResult", "WallClock", "run_paced"]


@dataclass(frozen=True, slots=True)
class TickResult:
    tick: int  # the tick just run
    time: float  # simulated seconds at its end
    events: tuple  # observable events, in order
    truth_events: tuple  # events that name hidden things: traces only
    fleet: FleetView
    state_hash: str | None = None  # every ``hash_every`` ticks

    def snapshot(self) -> Snapshot:
        return self.fleet.snapshot()


class Sim:
    def __init__(
        self,
        scenario: Scenario,
        plan: Solution | Mapping[str, Sequence[str]] | None = None,
        *,
        mission: Mission | None = None,
        hash_every: int = 0,
    ) -> None:
        routes = _routes(plan)
        self.scenario = scenario
        self.world = World(scenario, routes, mission=mission)
        self.tick_hz = self.world.tick_hz
        self.hash_every = int(hash_every)
        self.env = simpy.Environment(initial_time=0)
        # (tick, lane, sequence, input): at one tick the timeline (lane 0) goes first.
        self._inbox: list[tuple[int, int, int, object]] = []
        self._seq = 0
        self._late: list = []
        self._last: TickResult | None = None
        timeline = sorted(
            ((edit.tick_at(self.tick_hz), i, edit) for i, edit in enumerate(scenario.timeline)),
            key=lambda item: (item[0] if item[0] is not None else -1, item[1]),
        )
        for tick, _, edit in timeline:
            if tick is None:
                raise SimError(f"timeline edit {edit.describe()!r} has no time")
        # The timeline process first: at a shared instant it runs before the clock.
        self.env.process(self._timeline([(t, e) for t, _, e in timeline]))
        self.env.process(self._clock())

    # ----- inputs --------------------------------------------------------------------

    def submit(self, item: Edit | Command):
        """Queue an edit or command for its stamped tick; returns the stamped copy."""
        tick = item.tick_at(self.tick_hz) if hasattr(item, "tick_at") else item.tick
        if tick is None:
            tick = self.tick
        stamped = item.stamped(tick)
        if tick < self.tick:
            reason = f"stamped for tick {tick}, but tick {self.tick} is next"
            if hasattr(item, "op"):
                self._late.append(EditRejected(tick=self.tick, edit=stamped, reason=reason))
            else:
                self._late.append(CommandRejected(tick=self.tick, drone=item.drone,
                                                  command=item.kind, reason=reason))
            return stamped
        heapq.heappush(self._inbox, (tick, 1, self._seq, stamped))
        self._seq += 1
        return stamped

    def pending(self) -> list:
        """Inputs queued for future ticks, in the order they will apply."""
        return [entry[-1] for entry in sorted(self._inbox, key=lambda e: e[:3])]

    # ----- time ----------------------------------------------------------------------

    @property
    def tick(self) -> int:
        """The next tick to run (= ticks run so far)."""
        return self.world.tick

    @property
    def time(self) -> float:
        return self.world.time

    def step(self) -> TickResult:
        """Run exactly one tick."""
        self.env.run(until=self.world.tick + 1)
        assert self._last is not None and self._last.tick == self.world.tick - 1
        return self._last

    def run(
        self,
        until: int | None = None,
        *,
        on_tick: Callable[[TickResult], None] | None = None,
    ) -> TickResult | None:
        """Step as fast as possible until tick ``until`` (exclusive) or, by default, until
        the mission is over (``done``); returns the last tick's result."""
        last = None
        while (self.tick < until) if until is not None else not self.done:
            last = self.step()
            if on_tick is not None:
                on_tick(last)
        return last

    @property
    def done(self) -> bool:
        """Over: no drone airborne and no command waiting (after at least one tick), or
        the scenario's ``max_duration`` reached."""
        limit = self.scenario.sim.max_duration
        if limit is not None and self.time >= limit - 1e-12:
            return True
        if self.tick == 0 or self.world.active():
            return False
        return not any(not hasattr(entry[-1], "op") for entry in self._inbox)

    def state_hash(self) -> str:
        return self.world.state_hash()

    def snapshot(self) -> Snapshot:
        return self.world.fleet_view(self.tick - 1).snapshot()

    # ----- simpy processes -----------------------------------------------------------

    def _timeline(self, items: list[tuple[int, Edit]]):
        for tick, edit in items:
            if tick > self.env.now:
                yield self.env.timeout(tick - self.env.now)
            heapq.heappush(self._inbox, (tick, 0, self._seq, edit.stamped(tick)))
            self._seq += 1

    def _clock(self):
        while True:
            yield self.env.timeout(0)  # let every process woken at this instant deliver
            self._last = self._run_tick()
            yield self.env.timeout(1)

    def _run_tick(self) -> TickResult:
        world = self.world
        k = world.tick
        events: list = list(self._late)
        truth: list = []
        self._late.clear()
        inbox = self._inbox
        while inbox and inbox[0][0] <= k:
            item = heapq.heappop(inbox)[-1]
            if hasattr(item, "op"):
                seen, hidden = world.apply_edit(item)
                events.extend(seen)
                truth.extend(hidden)
            else:
                events.extend(world.apply_command(item))
        events.extend(world.advance())
        digest = None
        if self.hash_every and (k + 1) % self.hash_every == 0:
            digest = world.state_hash()
        return TickResult(k, (k + 1) / self.tick_hz, tuple(events), tuple(truth),
                          world.fleet_view(k), digest)


def _routes(plan) -> dict[str, list[str]]:
    if plan is None:
        return {}
    if isinstance(plan, Solution):
        return {d: list(r.route) for d, r in plan.routes.items()}
    return {d: list(r) for d, r in plan.items()}


# --------------------------------------------------------------------------------------
# Pacing
# --------------------------------------------------------------------------------------


class Clock(Protocol):
    """Wall time for the paced runner; tests pass a fake."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class WallClock:
    def now(self) -> float:
        return time.perf_counter()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass
class PaceReport:
    ticks: int = 0
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0
    overruns: int = 0  # ticks that finished after their deadline
    worst_overrun: float = 0.0  # seconds
    tick_seconds: list[float] = field(default_factory=list, repr=False)  # cost of each step

    @property
    def ticks_per_second(self) -> float:
        return self.ticks / self.wall_seconds if self.wall_seconds > 0 else math.inf


def run_paced(
    sim: Sim,
    speed: float | None = 1.0,
    *,
    until: int | None = None,
    on_tick: Callable[[TickResult], None] | None = None,
    clock: Clock | None = None,
    keep_tick_costs: bool = False,
) -> PaceReport:
    """Step ``sim`` at ``speed`` x real time (None: as fast as possible), sleeping the rest
    of each period, until tick ``until`` or the end of the mission.

    Deadlines are absolute (tick k is due ``(k + 1) / (tick_hz * speed)`` after the start)
    so sleeping does not drift. A tick that finishes late is an overrun: counted, its lateness
    kept, and if it is more than a period late the schedule restarts from now instead of
    bursting to catch up. Pacing only decides when ``step()`` is called, never what it does.
    """
    if speed is not None and not (speed > 0 and math.isfinite(speed)):
        raise SimError(f"speed must be a positive number or None, got {speed!r}")
    clock = clock or WallClock()
    period = None if speed is None else 1.0 / (sim.tick_hz * speed)
    report = PaceReport()
    start_tick, start_time = sim.tick, sim.time
    began = base = clock.now()
    base_tick = sim.tick
    while (sim.tick < until) if until is not None else not sim.done:
        t0 = clock.now()
        result = sim.step()
        t1 = clock.now()
        if keep_tick_costs:
            report.tick_seconds.append(t1 - t0)
        if on_tick is not None:
            on_tick(result)
        if period is None:
            continue
        due = base + (sim.tick - base_tick) * period
        now = clock.now()
        if now <= due:
            clock.sleep(due - now)
        else:
            late = now - due
            report.overruns += 1
            report.worst_overrun = max(report.worst_overrun, late)
            if late > period:
                base, base_tick = now, sim.tick
    report.ticks = sim.tick - start_tick
    report.sim_seconds = sim.time - start_time
    report.wall_seconds = clock.now() - began
    return report
