"""The way home, with one more SAM on it: a commit-time check and the repair of a plan.

A plan keeps its promise on fuel only if every drone can still reach an airport when the way
home is blocked by one more threat of the size seen so far. :class:`WayHome` says, per node
of a compiled mission, how much fuel a drone there needs for that: the SAM-avoiding way to
the nearest airport with a new SAM of the largest known range on it, at the worst of a few
placements, plus the way flown towards it before the drone sees it.

The placements (centres on the way home to the nearest airport, the disk clear of both ends:
one over the drone would have killed it already, one over the airport closes the airport,
another threat):

* where the way passes within the new disk's reach of a known SAM (its point nearest that
  SAM): there the new disk merges with the known one into one obstacle, and that is how one
  more SAM closes a corridor and makes the way home long, or impossible: what no fuel
  budget can price;
* with ``HomeCheck.ends``, next to each end of the way too. In the open, a disk across a
  straight way costs most when an end touches it (about 0.9 r round it, against nothing
  when both ends are far away): a bounded detour, which a budget (``Policy.detour_factor``)
  can price instead.

The drone is taken to fly its way home until it sees the new SAM (``sim.sensor_range`` from
its edge, the hidden SAM's case; an announced one is seen at once, which costs no more):
the fuel needed is the way flown until then plus the way to any airport from there.

Along a route the plain margin (fuel minus the way home) never grows, so the waypoints are
where it is lowest; :func:`guard_routes` checks a route at its start and at each target, and
ends the route before the first that fails (the targets from there on are dropped, the way
to its end airport kept): dropping targets at the end of a route until it passes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from planner.geometry import SamField, planning_radius
from planner.mission import Mission
from planner.model import Solution, drone_label
from planner.solution import FEASIBILITY_TOLERANCE, build_solution, solution_routes

__all__ = ["Cut", "HomeCheck", "WayHome", "guard_routes", "guard_solution", "nearest_home"]

_CLEAR = 1e-3  # km between the new disk's planning circle and an end of the way
_STEP = 0.5  # km between the points of the way home the placements are read from


@dataclass(frozen=True)
class HomeCheck:
    """What the check asks of a plan."""

    reserve: float  # km kept on top of the way home with one more SAM on it
    # the new SAM also next to each end of the way (open ground: a detour of at most about
    # 0.9 r, which a fuel budget can price); else only where it merges with a known SAM
    ends: bool = False


@dataclass(frozen=True)
class Cut:
    """Where a route stopped passing the check, and why."""

    drone: str
    at: str  # the node id (start or target) where the fuel no longer covers the way home
    fuel: float  # km left there as planned
    needed: float  # km to an airport from there with one more SAM on the way (inf: none)
    dropped: tuple[str, ...]  # the targets dropped from the route

    @property
    def reason(self) -> str:
        """Said in the draft's reasons and the dropped targets'."""
        need = "no airport" if not math.isfinite(self.needed) else f"{self.needed:.1f} km"
        return (
            f"way home: {drone_label(self.drone)} at {self.at} would have {self.fuel:.1f} km "
            f"of fuel and need {need} with one more SAM on its way home; "
            f"dropped {', '.join(self.dropped)}"
        )


@dataclass
class WayHome:
    """The fuel a drone needs at a node of ``mission`` to reach an airport with one more
    SAM on its way home (see the module docstring); each node's figure found once."""

    mission: Mission
    ends: bool = False  # the new SAM also next to each end of the way (HomeCheck.ends)
    _needed: dict[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        sams = self.mission.sams
        self.known = [
            (float(c[0]), float(c[1]), float(r))
            for c, r in zip(sams.centers, sams.true_radii, strict=True)
        ]
        self.radius = max((r for *_, r in self.known), default=0.0)
        self.sensor = float(self.mission.scenario.sim.sensor_range)
        self.airports = np.array(
            [self.mission.positions[a] for a in self.mission.airport_nodes], dtype=float
        ).reshape(-1, 2)

    def needed(self, node: int) -> float:
        """Km of fuel a drone at ``node`` needs to reach an airport if one more SAM of the
        largest known range blocks its way home (``inf`` when no airport would be left)."""
        if node not in self._needed:
            self._needed[node] = self._worst(node)
        return self._needed[node]

    def _worst(self, node: int) -> float:
        mission = self.mission
        homes = list(mission.airport_nodes)
        row = np.array([mission.dist[node, a] for a in homes], dtype=float)
        if not homes or not np.isfinite(row).any():
            return math.inf
        plain = float(row.min())
        if self.radius <= 0.0 or plain <= 0.0:
            return plain  # no SAM seen yet, or already at an airport
        way = mission.paths.path(node, homes[int(row.argmin())])
        reach = planning_radius(self.radius)
        lo, hi = reach + _CLEAR, way.length - reach - _CLEAR
        if hi < lo:
            return plain  # no disk of that size fits on the way without covering an end
        s = np.linspace(0.0, way.length, max(2, int(way.length / _STEP) + 1))
        pts = np.array([way.locate(float(t))[:2] for t in s], dtype=float)
        spots = {lo, hi} if self.ends else set()
        sams = mission.sams
        for c, r in zip(sams.centers, sams.radii, strict=True):
            gap = np.hypot(pts[:, 0] - c[0], pts[:, 1] - c[1]) - r
            i = int(gap.argmin())
            if gap[i] < reach:  # a new disk there merges with this SAM
                spots.add(min(hi, max(lo, float(s[i]))))
        return max([plain, *(self._placed(s, pts, way.locate(spot)) for spot in sorted(spots))])

    def _placed(self, s: np.ndarray, pts: np.ndarray, at: tuple[float, float, float]) -> float:
        """The fuel needed with the new SAM centred at ``at`` on the way home (``pts`` at
        ``s`` km along it)."""
        cx, cy = at[0], at[1]
        seen = np.hypot(pts[:, 0] - cx, pts[:, 1] - cy) <= self.radius + self.sensor
        j = int(seen.argmax())  # the first point of the way it is seen from
        flown = float(s[j])
        field = SamField([*self.known, (cx, cy, self.radius)])
        queries = field.queries(np.vstack([pts[j : j + 1], self.airports]))
        row = field.rows(queries, np.array([0], dtype=np.int64))[0, 1:]
        return flown + float(row.min()) if np.isfinite(row).any() else math.inf


def nearest_home(field: SamField, points: np.ndarray, airports: np.ndarray) -> np.ndarray:
    """Km of the SAM-avoiding way from each of ``points`` (n, 2) to its nearest airport of
    ``airports`` (m, 2), as a compiled mission's distances give it (``inf``: none)."""
    n = points.shape[0]
    if n == 0 or airports.shape[0] == 0:
        return np.full(n, math.inf)
    queries = field.queries(np.vstack([points, airports]))
    rows = field.rows(queries, np.arange(n, dtype=np.int64))[:, n:]
    return np.asarray(rows.min(axis=1), dtype=float)


def guard_routes(
    mission: Mission,
    routes: Mapping[str, list[int]],
    fuel: Mapping[str, float],
    check: HomeCheck,
    way_home: WayHome | None = None,
) -> tuple[dict[str, list[int]], list[Cut]]:
    """``routes`` (drone -> node route) with each route ended before the first node (its
    start, then each target) where its fuel, ``fuel[drone]`` km at the start less the way
    flown, falls short of ``WayHome.needed`` plus ``check.reserve`` km; the route keeps its
    end airport, and the frozen targets it must begin with. Drones ``fuel`` does not name
    keep their route. ``way_home``: the figures of ``mission`` found so far, for ``check``."""
    way_home = way_home or WayHome(mission, check.ends)
    reserve = check.reserve
    out: dict[str, list[int]] = {}
    cuts: list[Cut] = []
    dist = mission.dist
    for drone_id, route in routes.items():
        out[drone_id] = route
        if drone_id not in fuel or len(route) < 3:
            continue
        keep = 1 + len(mission.drone(drone_id).prefix)
        left = float(fuel[drone_id])
        for k, node in enumerate(route[:-1]):
            if k:
                left -= float(dist[route[k - 1], node])
            need = way_home.needed(node)
            if left + FEASIBILITY_TOLERANCE >= need + reserve:
                continue
            k = max(k, keep)
            if k >= len(route) - 1:
                break  # only frozen targets fail: nothing to drop
            out[drone_id] = [*route[:k], route[-1]]
            dropped = tuple(mission.ids(route[k:-1]))
            cuts.append(Cut(drone_id, mission.node_ids[node], left, need, dropped))
            break
    return out, cuts


def guard_solution(
    mission: Mission,
    solution: Solution,
    fuel: Mapping[str, float],
    check: HomeCheck,
    way_home: WayHome | None = None,
) -> tuple[Solution, list[Cut]]:
    """``solution`` repaired by :func:`guard_routes` (the same object when nothing failed)."""
    routes = solution_routes(mission, solution)
    routes, cuts = guard_routes(mission, routes, fuel, check, way_home)
    if not cuts:
        return solution, []
    return build_solution(mission, routes), cuts
