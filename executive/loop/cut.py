"""Cut and freeze: the remainder of a mission as a planning problem from checkpoints.

Each drone's checkpoint is where it will be at the cut tick if nothing changes (the sim's
``World.checkpoint``); the path up to it is frozen (it keeps flying it) and the planned
targets on that frozen part count as collected. The remainder is a ``planner`` scenario:
the *known* environment only (belief, never truth), a synthetic start ``D1_START`` at each
airborne drone's checkpoint, the fuel left there (minus the reserve) as its budget,
collected targets removed. Parked and landed drones start from their airport with the fuel
they have, so they can take over the targets of a lost drone. Lost drones, and drones the
executive sent home, are not planned.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from executive.loop.policy import leak_plan_extra
from planner.geodesy import planning_disks
from planner.geometry import SamField
from planner.model import Environment, Point, Scenario, synthetic_start_id
from planner.way_home import HomeCheck, nearest_home
from sim.world import World

__all__ = [
    "Checkpoint",
    "ReplanProblem",
    "build_replan",
    "fuel_at_start",
    "start_reach",
    "with_reserve",
]

_AT_AIRPORT = 1e-6  # km


@dataclass(frozen=True)
class Checkpoint:
    """Where one drone will be at the cut tick if nothing changes, and what it has then."""

    drone: str
    tick: int  # the cut tick
    x: float  # km
    y: float  # km
    heading: float
    s: float  # km of arc length along the current flight at the checkpoint (0 on the ground)
    fuel: float  # km of fuel left there
    airborne: bool  # False on the ground, or when the flight will have landed by the cut
    start_id: str  # the node the remainder starts from: D1_START or an airport id
    frozen_targets: tuple[str, ...]  # planned waypoints reached before the checkpoint


@dataclass(frozen=True)
class ReplanProblem:
    """The remainder of the mission at a cut, ready for the planner."""

    tick: int  # the cut: commands of the new plan are stamped for this tick
    scenario: Scenario  # the remainder, for the planner
    checkpoints: dict[str, Checkpoint]  # per planned drone (none for lost, disabled, left out)
    left_out: dict[str, str] = field(default_factory=dict)  # drone -> why it is not planned
    # the way-home check (planner.way_home) every plan made for this remainder passes
    home_check: HomeCheck | None = None
    # drone -> km its budget keeps on top of the reserve since its fuel leaked
    # (policy.leak_plan_extra): what the safety layer holds it to while this plan flies
    leak_extra: dict[str, float] = field(default_factory=dict)

    @property
    def frozen_targets(self) -> set[str]:
        """Targets reached on the frozen paths: they count as collected in the remainder."""
        return {t for c in self.checkpoints.values() for t in c.frozen_targets}

    def gone(self, world: World) -> dict[str, str]:
        """The targets a plan rebased onto this cut can no longer visit, with why: those
        ``world`` (the one it was cut from) has collected, and those reached before the cut."""
        gone = {t: "collected" for t in world.collected()}
        gone.update({t: "reached before the cut" for t in self.frozen_targets})
        return gone


def with_reserve(scenario: Scenario, reserve: float) -> Scenario:
    """``scenario`` with ``reserve`` (km) off each drone's fuel budget: the first plan keeps
    the reserve every later plan keeps (``build_replan``), so the plan in force, rebased
    onto a cut, fits the budget a fresh search gets there. Planned on the full budget, it
    loses what it planned within the last ``reserve`` km at the first replan and flying
    on would beat replanning."""
    if reserve <= 0.0:
        return scenario
    configs = {
        drone_id: config.model_copy(update={"fuel_budget": max(0.0, config.fuel_budget - reserve)})
        for drone_id, config in scenario.drone_configs.items()
    }
    return scenario.model_copy(update={"drone_configs": configs})


def build_replan(
    world: World,
    tick: int,
    *,
    reserve: float = 0.0,
    leaked: Collection[str] = (),
    leak_share: float = 0.0,
    not_planned: dict[str, str] | None = None,
    home_check: HomeCheck | None = None,
) -> ReplanProblem:
    """The remainder of the mission as it will be at ``tick`` (>= the next tick to run).

    ``tick`` is raised to ``world.tick`` if it is earlier. ``reserve`` (km) comes off each
    drone's fuel to make its budget, and from the ``leaked`` drones (their fuel leaked)
    what ``leak_share`` asks of a plan from their checkpoint (``policy.leak_plan_extra``,
    with their SAM-avoiding way to the nearest known airport from there); ``not_planned``
    (drone -> why) names drones to leave out (sent home), on top of the lost ones;
    ``home_check`` goes with the problem, for the way-home check of its plans
    (``fuel_at_start``). Reads ``world``, never changes it.
    """
    tick = max(int(tick), world.tick)
    scenario = world.scenario
    known = world.known_environment
    collected = set(world.collected())
    left_out = dict(not_planned or {})
    checkpoints: dict[str, Checkpoint] = {}
    starts: dict[str, dict[str, float]] = {}
    configs = {}
    airports = _Airports(known, world)
    for drone_id, config in scenario.drone_configs.items():
        status = world.status(drone_id)
        if status == "lost":
            left_out.setdefault(drone_id, "lost")
        if not config.enabled or drone_id in left_out:
            configs[drone_id] = config.model_copy(update={"enabled": False})
            continue
        cp = _checkpoint(world, drone_id, status, tick, airports)
        checkpoints[drone_id] = cp
        if cp.airborne:
            starts[cp.start_id] = {"x": cp.x, "y": cp.y}
        configs[drone_id] = config.model_copy(
            update={
                "start_airport": cp.start_id,
                "fuel_budget": max(0.0, cp.fuel - reserve),
                "frozen_segments": [],
                # A drone that started elsewhere still returns to its home airport.
                "home_airport": config.home,
            }
        )
    leak_extra = _leak_extra(scenario, known, checkpoints, leaked, leak_share, reserve)
    for drone_id, extra in leak_extra.items():
        budget = max(0.0, checkpoints[drone_id].fuel - reserve - extra)
        configs[drone_id] = configs[drone_id].model_copy(update={"fuel_budget": budget})
    gone = collected | {t for c in checkpoints.values() for t in c.frozen_targets}
    # Built from the known world's own (frozen, validated) parts, not dumped and validated
    # again: at 5,000 targets a dump and a validation cost tens of ms on the tick. The
    # lists are copied: the remainder never shares one with the world.
    environment = known.model_copy(
        update={
            "airports": list(known.airports),
            "targets": [t for t in known.targets if t.id not in gone],
            "sams": list(known.sams),
            "synthetic_starts": {k: Point.model_validate(v) for k, v in starts.items()},
        }
    )
    # a geographic mission stays one (its ``geo`` kept): its replans plan around the SAMs'
    # geodesic covers (planner.geodesy), as its first plan did
    remainder = scenario.model_copy(
        update={"environment": environment, "drone_configs": configs, "timeline": []}
    )
    return ReplanProblem(tick, remainder, checkpoints, left_out, home_check, leak_extra)


def _leak_extra(
    scenario: Scenario,
    known: Environment,
    checkpoints: dict[str, Checkpoint],
    leaked: Collection[str],
    share: float,
    reserve: float,
) -> dict[str, float]:
    """Per planned drone of ``leaked``, the km its plan keeps on top of ``reserve`` from its
    checkpoint (``policy.leak_plan_extra``)."""
    drones = [d for d in leaked if d in checkpoints]
    if not drones or share <= 0.0:
        return {}
    field = SamField(planning_disks(known.sams, scenario.geo))
    points = np.array([(checkpoints[d].x, checkpoints[d].y) for d in drones], dtype=float)
    airports = np.array([(a.x, a.y) for a in known.airports], dtype=float).reshape(-1, 2)
    homes = nearest_home(field, points, airports)
    return {
        d: leak_plan_extra(share, checkpoints[d].fuel, float(h), reserve)
        for d, h in zip(drones, homes, strict=True)
    }


def fuel_at_start(problem: ReplanProblem) -> dict[str, float]:
    """Km of fuel each planned drone has at its checkpoint (its budget plus the reserves
    taken off it): what the way-home check (planner.way_home) counts down along a route."""
    return {d: c.fuel for d, c in problem.checkpoints.items()}


def start_reach(problem: ReplanProblem) -> dict[str, float]:
    """The compile's ``reach`` for ``problem``: each airborne drone's synthetic start and
    the km of fuel it has there. Nothing reads a start's distances beyond that: the plan's
    budget is less, and the way-home check counts down from that fuel (``fuel_at_start``)."""
    return {c.start_id: c.fuel for c in problem.checkpoints.values() if c.airborne}


def _checkpoint(
    world: World, drone_id: str, status: str, tick: int, airports: _Airports
) -> Checkpoint:
    fuel_now = world.fuel(drone_id)
    if status in ("flying", "holding"):
        s_now = world.progress(drone_id)
        x, y, heading, s = world.checkpoint(drone_id, tick)
        flight = world.flight(drone_id)
        ahead = max(0, tick - world.tick) * world.config.speed_of(drone_id) * world.dt
        reached: tuple[str, ...] = ()
        if flight is not None and not flight.holding:
            reached = tuple(t for t, w in flight.waypoints if s_now < w <= s + 1e-9)
            ahead = min(ahead, max(0.0, flight.length - s_now))
        fuel = max(0.0, fuel_now - ahead)
        if flight is not None and not flight.holding and s >= flight.length - 1e-12:
            at = airports.at(x, y)
            if at:
                # It will have landed by the cut: it starts again from that airport.
                return Checkpoint(drone_id, tick, x, y, heading, s, fuel, False, at, reached)
        return Checkpoint(
            drone_id, tick, x, y, heading, s, fuel, True, synthetic_start_id(drone_id), reached
        )
    x, y, heading = world.position(drone_id)
    at = airports.here(drone_id) or world.scenario.drone_configs[drone_id].start or ""
    return Checkpoint(drone_id, tick, x, y, heading, 0.0, fuel_now, False, at, ())


class _Airports:
    """The airport a point is at (within ``_AT_AIRPORT``): the first in the environment's
    order whose box and then distance hold. Asked for every parked drone at every cut
    (1,000 drones x 50 airports at the door's size), so the box test for where every
    drone is now runs once over all drones and airports (numpy: the same subtractions,
    exact), and the distance only for the pairs in the box."""

    def __init__(self, environment: Environment, world: World) -> None:
        self.ids = [a.id for a in environment.airports]
        self.ax = np.array([a.x for a in environment.airports], dtype=float)
        self.ay = np.array([a.y for a in environment.airports], dtype=float)
        view = world.fleet_view(world.tick)
        self.index = {d: i for i, d in enumerate(view.ids)}
        positions = view.positions
        dx = self.ax[None, :] - positions[:, 0:1]
        dy = self.ay[None, :] - positions[:, 1:2]
        box = (np.abs(dx) <= _AT_AIRPORT) & (np.abs(dy) <= _AT_AIRPORT)
        self.now: dict[int, str] = {}  # drone index -> the airport it is at now
        rows, cols = np.nonzero(box)  # by drone, then airport order
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            if i not in self.now and math.hypot(dx[i, j], dy[i, j]) <= _AT_AIRPORT:
                self.now[i] = self.ids[j]

    def here(self, drone_id: str) -> str | None:
        """The airport ``drone_id`` is at now."""
        return self.now.get(self.index[drone_id])

    def at(self, x: float, y: float) -> str | None:
        dx, dy = self.ax - x, self.ay - y
        for j in np.flatnonzero((np.abs(dx) <= _AT_AIRPORT) & (np.abs(dy) <= _AT_AIRPORT)):
            if math.hypot(dx[j], dy[j]) <= _AT_AIRPORT:
                return self.ids[j]
        return None
