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
    ``run(until=...)`` as fast as possible, or ``run_paced(sim, speed)`` for real time x k
    (its schedule is a ``sim.pacing.Pacer``). Nothing to stop or close; no threads, no
    asyncio.

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
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from planner.edits import Edit
from planner.mission import Mission
from planner.model import Scenario, Solution
from sim.commands import COMMAND_TYPES, Command, FlyPath
from sim.errors import SimError
from sim.events import CommandRejected, EditRejected, Event
from sim.pacing import Clock, Pacer, SleepingClock, WallClock
from sim.snapshot import FleetView, Snapshot
from sim.world import World

__all__ = ["Clock", "PaceReport", "Sim", "TickResult", "WallClock", "run_paced", "warmup"]


@dataclass(frozen=True, slots=True)
class TickResult:
    """What one tick produced; see the module's contract."""

    tick: int  # the tick just run
    time: float  # simulated seconds at its end
    events: tuple[Event, ...]  # observable events, in order
    truth_events: tuple[Event, ...]  # events that name hidden things: traces only
    fleet: FleetView
    state_hash: str | None = None  # every ``hash_every`` ticks

    def snapshot(self) -> Snapshot:
        """The pydantic snapshot of the fleet after this tick (built on request)."""
        return self.fleet.snapshot()


class Sim:
    """The simulation driver; see the module's contract."""

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
        self._inbox: list[tuple[int, int, int, Edit | Command]] = []
        self._seq = 0
        self._late: list[Event] = []
        self._last: TickResult | None = None
        timeline = sorted(
            ((edit.tick_at(self.tick_hz), i, edit) for i, edit in enumerate(scenario.timeline)),
            key=lambda item: (item[0] if item[0] is not None else -1, item[1]),
        )
        scripted: list[tuple[int, Edit]] = []
        for tick, _, edit in timeline:
            if tick is None:
                raise SimError(f"timeline edit {edit.describe()!r} has no time")
            scripted.append((tick, edit))
        # Timeline edits not yet delivered: the mission is not over while the world's
        # script still has something to happen (a landed drone may take off for it).
        self._scripted_left = len(scripted)
        # The timeline process first: at a shared instant it runs before the clock.
        self.env.process(self._timeline(scripted))
        self.env.process(self._clock())

    # ----- inputs --------------------------------------------------------------------

    def submit(self, item: Edit | Command) -> Edit | Command:
        """Queue an edit or command for its stamped tick; returns the stamped copy."""
        if isinstance(item, COMMAND_TYPES):
            tick = item.tick
        else:
            tick = item.tick_at(self.tick_hz)
        if tick is None:
            tick = self.tick
        stamped: Edit | Command = item.stamped(tick)
        if tick < self.tick:
            reason = f"stamped for tick {tick}, but tick {self.tick} is next"
            if isinstance(item, COMMAND_TYPES):
                self._late.append(
                    CommandRejected(
                        tick=self.tick, drone=item.drone, command=item.kind, reason=reason
                    )
                )
            else:
                self._late.append(EditRejected(tick=self.tick, edit=stamped, reason=reason))
            return stamped
        heapq.heappush(self._inbox, (tick, 1, self._seq, stamped))
        self._seq += 1
        return stamped

    def pending(self) -> list[Edit | Command]:
        """Inputs queued for future ticks, in the order they will apply."""
        return [entry[-1] for entry in sorted(self._inbox, key=lambda e: e[:3])]

    # ----- time ----------------------------------------------------------------------

    @property
    def tick(self) -> int:
        """The next tick to run (= ticks run so far)."""
        return self.world.tick

    @property
    def time(self) -> float:
        """Simulated seconds elapsed: the start of the next tick."""
        return self.world.time

    def step(self) -> TickResult:
        """Run exactly one tick: simpy's events in their order up to the clock's tick (the
        timeline's deliveries at this instant first). Stepped event by event: ``env.run(
        until=...)`` adds a stop event and an exception per call, which cost as much as the
        physics of a small fleet's tick."""
        world, step = self.world, self.env.step
        target = world.tick + 1
        while world.tick < target:
            step()
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
        """Over: no drone airborne, no command waiting and nothing left to happen on the
        timeline (after at least one tick), or the scenario's ``max_duration`` reached. A
        target that appears after every drone has landed can still be collected: the
        mission goes on to it, and a drone on the ground may take off for it."""
        limit = self.scenario.sim.max_duration
        if limit is not None and self.time >= limit - 1e-12:
            return True
        if self.tick == 0 or self.world.active() or self._scripted_left:
            return False
        return not self._inbox

    def state_hash(self) -> str:
        """The world's state hash now (``World.state_hash``)."""
        return self.world.state_hash()

    def snapshot(self) -> Snapshot:
        """The pydantic snapshot of the fleet after the last tick run."""
        return self.world.fleet_view(self.tick - 1).snapshot()

    # ----- simpy processes -----------------------------------------------------------

    def _timeline(self, items: list[tuple[int, Edit]]) -> Generator[Any, Any, None]:
        for tick, edit in items:
            if tick > self.env.now:
                yield self.env.timeout(tick - self.env.now)
            heapq.heappush(self._inbox, (tick, 0, self._seq, edit.stamped(tick)))
            self._seq += 1
            self._scripted_left -= 1

    def _clock(self) -> Generator[Any, Any, None]:
        while True:
            yield self.env.timeout(0)  # let every process woken at this instant deliver
            self._last = self._run_tick()
            yield self.env.timeout(1)

    def _run_tick(self) -> TickResult:
        world = self.world
        k = world.tick
        events: list[Event] = list(self._late)
        truth: list[Event] = []
        self._late.clear()
        inbox = self._inbox
        while inbox and inbox[0][0] <= k:
            item = heapq.heappop(inbox)[-1]
            if isinstance(item, FlyPath):  # a run of them begins its flights at once
                run = [item]
                while inbox and inbox[0][0] <= k and isinstance(nxt := inbox[0][-1], FlyPath):
                    heapq.heappop(inbox)
                    run.append(nxt)
                events.extend(world.apply_fly_paths(run))
            elif isinstance(item, COMMAND_TYPES):
                events.extend(world.apply_command(item))
            else:
                seen, hidden = world.apply_edit(item)
                events.extend(seen)
                truth.extend(hidden)
        events.extend(world.advance())
        digest = None
        if self.hash_every and (k + 1) % self.hash_every == 0:
            digest = world.state_hash()
        return TickResult(
            k, (k + 1) / self.tick_hz, tuple(events), tuple(truth), world.fleet_view(k), digest
        )


def _routes(plan: Solution | Mapping[str, Sequence[str]] | None) -> dict[str, list[str]]:
    if plan is None:
        return {}
    if isinstance(plan, Solution):
        return {d: list(r.route) for d, r in plan.routes.items()}
    return {d: list(r) for d, r in plan.items()}


# --------------------------------------------------------------------------------------
# Pacing
# --------------------------------------------------------------------------------------


@dataclass
class PaceReport:
    """How a ``run_paced`` kept time."""

    ticks: int = 0
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0
    overruns: int = 0  # ticks that finished after their deadline
    worst_overrun: float = 0.0  # seconds
    tick_seconds: list[float] = field(default_factory=list, repr=False)  # cost of each step

    @property
    def ticks_per_second(self) -> float:
        """Ticks run per second of wall time."""
        return self.ticks / self.wall_seconds if self.wall_seconds > 0 else math.inf


def run_paced(
    sim: Sim,
    speed: float | None = 1.0,
    *,
    until: int | None = None,
    on_tick: Callable[[TickResult], None] | None = None,
    clock: SleepingClock | None = None,
    keep_tick_costs: bool = False,
) -> PaceReport:
    """Step ``sim`` at ``speed`` x real time (None: as fast as possible), sleeping the rest
    of each period, until tick ``until`` or the end of the mission.

    The schedule is a ``sim.pacing.Pacer`` (``speed`` within its range, or SimError):
    deadlines are absolute (tick k is due ``(k + 1) / (tick_hz * speed)`` after the start)
    so sleeping does not drift. A tick that finishes late (the next tick's deadline has
    passed when it is done) is an overrun here: counted, its lateness kept; if it is more
    than a period late the schedule restarts from now instead of bursting to catch up.
    Pacing only decides when ``step()`` is called, never what it does.
    """
    clock = clock if clock is not None else WallClock()
    pacer = Pacer(sim.tick_hz, speed, clock=clock)
    report = PaceReport()
    start_tick, start_time = sim.tick, sim.time
    began = clock.now()
    pacer.start(sim.tick)
    while (sim.tick < until) if until is not None else not sim.done:
        pacer.started(sim.tick)
        t0 = clock.now()
        result = sim.step()
        t1 = clock.now()
        if keep_tick_costs:
            report.tick_seconds.append(t1 - t0)
        if on_tick is not None:
            on_tick(result)
        if pacer.period is None:
            continue
        slack = pacer.slack(sim.tick)
        if slack >= 0.0:
            clock.sleep(slack)
        else:
            report.overruns += 1
            report.worst_overrun = max(report.worst_overrun, -slack)
    report.ticks = sim.tick - start_tick
    report.sim_seconds = sim.time - start_time
    report.wall_seconds = clock.now() - began
    return report


def warmup() -> None:
    """Load (or compile) the flight kernels on a tiny world before time matters: on a fresh
    numba cache the first tick compiles ``tick_kernel`` while it holds the GIL (5.7 s at
    1,000 drones, measured on a fresh clone); loading it from numba's cache holds the GIL
    too."""
    from planner.scenario import parse_scenario

    scenario = parse_scenario(
        {
            "environment": {
                "airports": [{"id": "A1", "x": 0, "y": 0}],
                "targets": [{"id": "T1", "x": 0.01, "y": 0, "priority": 1, "type": "a"}],
                "sams": [{"id": "S1", "x": 5, "y": 5, "range": 1}],
            },
            "drone_configs": {
                "1": {"fuelBudget": 10.0, "home_airport": "A1", "accessibleTargets": "ALL"}
            },
        }
    )
    from sim import _kernels as K

    known = np.array([[5.0, 5.0, 1.0]])
    known.flags.writeable = False  # as the environment hands it over
    K.hold_clearances(0.0, 1.0, 0.0, -1.0, known)
    fleet = K.NOGIL_FLEET
    try:
        for K.NOGIL_FLEET in (fleet, 0):  # the kernel a small fleet holds the GIL in, a swarm's
            sim = Sim(scenario, {"1": ["A1", "T1", "A1"]})
            sim.run(until=4)
            sim.world.active()
    finally:
        K.NOGIL_FLEET = fleet
