"""The flight each drone of a plan flies, as waypoints in km: take-off, the SAM-avoiding
path's points (targets marked), landing. Every export format is written from this.

Straight legs longer than ``planner.geodesy.MAX_LEG_KM`` are cut into equal legs: an
autopilot flies the geodesic between two waypoints, which parts from the planned straight
leg of the km frame by up to a few km on a 1,000 km leg far from the origin, and by under
5 m on a 25 km one (the validator measures the same legs, ``planner.validation``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from planner.errors import PlannerError
from planner.geo import GeoOrigin, GeoPlan, LocalFrame, local_frame
from planner.geodesy import densify
from planner.model import Scenario, Solution, drone_label

__all__ = ["Flight", "Waypoint", "flights", "geo_solution", "mission_frame"]

# Two path points closer than this (km) are one waypoint: legs join end to start.
_SAME_POINT_KM = 1e-6

WaypointKind = Literal["takeoff", "target", "path", "land"]


@dataclass(frozen=True)
class Waypoint:
    """One point of a flight: ``target`` points are where a target is collected, ``path``
    points the corners and arc samples of the way around the SAMs."""

    x: float
    y: float
    kind: WaypointKind
    node: str | None = None  # the airport or target id, for take-off, land and targets


@dataclass(frozen=True)
class Flight:
    """One drone's planned flight."""

    drone: str
    speed: float  # km/s
    route: list[str]
    waypoints: list[Waypoint]

    @property
    def label(self) -> str:
        """``D1`` for drone ``1``."""
        return drone_label(self.drone)


def mission_frame(scenario: Scenario, origin: GeoOrigin | None = None) -> LocalFrame:
    """The frame to export in: the scenario's own origin, else ``origin``; PlannerError if
    there is none, or both disagree."""
    if scenario.geo is not None and origin is not None and origin != scenario.geo:
        raise PlannerError(
            f"the mission has its own geo origin ({scenario.geo.lat0:g}, {scenario.geo.lon0:g});"
            " an --origin would place it elsewhere"
        )
    chosen = scenario.geo or origin
    if chosen is None:
        raise PlannerError(
            'the mission has no geographic origin: add "geo": {"lat0": ..., "lon0": ...} to it'
            " or give --origin LAT,LON"
        )
    return local_frame(chosen)


def flights(scenario: Scenario, solution: Solution) -> list[Flight]:
    """Each routed drone's flight, in the order of the plan's routes."""
    env = scenario.environment
    out = []
    for drone_id, result in solution.routes.items():
        if len(result.route) < 2:
            continue
        start = env.position(result.route[0])
        end = env.position(result.route[-1])
        if start is None or end is None:
            raise PlannerError(f"drone {drone_label(drone_id)}: route ends are not in the mission")
        path = result.path or [p for p in map(env.position, result.route) if p is not None]
        path = [(float(x), float(y)) for x, y in densify(path)] if len(path) > 1 else path
        targets = [(t, env.position(t)) for t in result.visited_targets]
        points = [Waypoint(start[0], start[1], "takeoff", result.route[0])]
        for x, y in path[1:-1]:
            if _near(points[-1].x, points[-1].y, x, y):
                continue
            hit = next((t for t, p in targets if p is not None and _near(p[0], p[1], x, y)), None)
            points.append(Waypoint(x, y, "path" if hit is None else "target", hit))
        if (
            len(points) > 1
            and _near(points[-1].x, points[-1].y, *end)
            and points[-1].kind == "path"
        ):
            points.pop()  # the last arc sample is the airport itself
        points.append(Waypoint(end[0], end[1], "land", result.route[-1]))
        out.append(Flight(drone_id, scenario.sim.speed_of(drone_id), list(result.route), points))
    return out


def _near(x0: float, y0: float, x1: float, y1: float) -> bool:
    return abs(x0 - x1) <= _SAME_POINT_KM and abs(y0 - y1) <= _SAME_POINT_KM


def geo_solution(scenario: Scenario, solution: Solution, frame: LocalFrame) -> Solution:
    """``solution`` with its routes' nodes and paths in lat/lon as well (``Solution.geo``)."""
    env = scenario.environment
    nodes: dict[str, tuple[float, float]] = {}
    paths: dict[str, list[tuple[float, float]]] = {}
    for drone_id, result in solution.routes.items():
        for node_id in result.route:
            where = env.position(node_id)
            if where is not None:
                nodes[node_id] = frame.to_geo(*where)
        if result.path is not None:
            paths[drone_id] = [frame.to_geo(x, y) for x, y in result.path]
    geo = GeoPlan(origin=frame.origin, nodes=nodes, paths=paths)
    return solution.model_copy(update={"geo": geo})
