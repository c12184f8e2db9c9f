"""Read-only analysis of a plan (seed 000 §5): the numbers agents and operators cite."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from shapely.geometry import LineString

from planner.mission import Mission
from planner.model import Solution, drone_label

__all__ = ["analyze_solution_geometry", "compute_solution_metrics"]


@dataclass(frozen=True)
class DroneMetrics:
    """One drone's figures: points, fuel used against its budget, what it visits and what it
    could still visit.
    """

    drone: str
    points: float
    fuel_used: float
    fuel_budget: float
    fuel_margin: float
    visited_targets: list[str]
    unvisited_accessible_targets: list[str]


@dataclass(frozen=True)
class SolutionMetrics:
    """A plan's figures as agents and operators cite them (seed 000 §5)."""

    total_points: float
    total_possible_points: float
    points_coverage: float
    total_fuel: float
    total_budget: float
    visited_count: int
    unvisited_targets: list[str]
    excluded_targets: list[str]
    drones: dict[str, DroneMetrics] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (nested dicts and lists), for JSON and prompts."""
        return asdict(self)


def compute_solution_metrics(mission: Mission, solution: Solution) -> SolutionMetrics:
    """Points, coverage, fuel and per-drone figures of ``solution`` on ``mission``; excluded
    targets count as neither possible nor unvisited.
    """
    visited = {t for r in solution.routes.values() for t in r.visited_targets}
    accessible = [mission.node_ids[n] for n in mission.target_nodes]
    possible = float(sum(mission.scores[n] for n in mission.target_nodes))
    drones = {}
    for spec in mission.drones:
        result = solution.routes.get(spec.id)
        used = result.fuel_used if result else 0.0
        points = result.total_points if result else 0.0
        drones[spec.id] = DroneMetrics(
            drone=drone_label(spec.id),
            points=points,
            fuel_used=used,
            fuel_budget=spec.budget,
            fuel_margin=spec.budget - used,
            visited_targets=list(result.visited_targets) if result else [],
            unvisited_accessible_targets=[
                mission.node_ids[n] for n in spec.eligible if mission.node_ids[n] not in visited
            ],
        )
    total = float(sum(d.points for d in drones.values()))
    return SolutionMetrics(
        total_points=total,
        total_possible_points=possible,
        points_coverage=total / possible if possible > 0 else 1.0,
        total_fuel=float(sum(d.fuel_used for d in drones.values())),
        total_budget=float(sum(spec.budget for spec in mission.drones)),
        visited_count=len(visited),
        unvisited_targets=[t for t in accessible if t not in visited],
        excluded_targets=list(mission.excluded_targets),
        drones=drones,
    )


@dataclass(frozen=True)
class Crossing:
    """Two route segments (of two drones, or of one) that cross at ``point``."""

    drone_a: str
    segment_a: tuple[str, str]
    drone_b: str
    segment_b: tuple[str, str]
    point: tuple[float, float]


@dataclass(frozen=True)
class AcuteAngle:
    """A turn sharper than the threshold at waypoint ``at``."""

    drone: str
    at: str
    angle_deg: float


@dataclass(frozen=True)
class GeometryReport:
    """What :func:`analyze_solution_geometry` finds."""

    crossings: list[Crossing]
    acute_angles: list[AcuteAngle]
    frozen_segments: dict[str, list[tuple[str, str]]]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (nested dicts and lists), for JSON and prompts."""
        return asdict(self)


def analyze_solution_geometry(
    mission: Mission, solution: Solution, acute_threshold_deg: float = 45.0
) -> GeometryReport:
    """Crossings between non-frozen route segments (between drones and within one), sharp
    turns at targets, and each drone's frozen segments. Segments are waypoint to waypoint."""
    env = mission.environment
    segments = []  # (drone, (from, to), LineString)
    frozen = {}
    for drone_id, result in solution.routes.items():
        spec = next((s for s in mission.drones if s.id == drone_id), None)
        chain = [(s.from_, s.to) for s in spec.config.frozen_segments] if spec else []
        frozen[drone_id] = chain
        frozen_pairs = set(chain)
        for a, b in zip(result.route, result.route[1:]):
            if (a, b) in frozen_pairs or a == b:
                continue
            pa, pb = env.position(a), env.position(b)
            if pa and pb and pa != pb:
                segments.append((drone_id, (a, b), LineString([pa, pb])))
    crossings = []
    for i, (da, sa, la) in enumerate(segments):
        for db, sb, lb in segments[i + 1 :]:
            if set(sa) & set(sb):
                continue  # legs sharing a waypoint touch there; that is not a crossing
            if la.crosses(lb) or la.intersects(lb):
                p = la.intersection(lb)
                point = (p.x, p.y) if p.geom_type == "Point" else p.coords[0]
                crossings.append(Crossing(da, sa, db, sb, (float(point[0]), float(point[1]))))
    acute = []
    for drone_id, result in solution.routes.items():
        route = result.route
        for prev, at, nxt in zip(route, route[1:], route[2:]):
            p0, p1, p2 = env.position(prev), env.position(at), env.position(nxt)
            angle = _interior_angle(p0, p1, p2)
            if angle is not None and angle < acute_threshold_deg:
                acute.append(AcuteAngle(drone_id, at, angle))
    return GeometryReport(crossings, acute, frozen)


def _interior_angle(
    p0: tuple[float, float] | None, p1: tuple[float, float] | None, p2: tuple[float, float] | None
) -> float | None:
    if p0 is None or p1 is None or p2 is None:
        return None
    v1 = (p0[0] - p1[0], p0[1] - p1[1])
    v2 = (p2[0] - p1[0], p2[1] - p1[1])
    n1, n2 = math.hypot(*v1), math.hypot(*v2)
    if n1 == 0 or n2 == 0:
        return None
    cos = max(-1.0, min(1.0, (v1[0] * v2[0] + v1[1] * v2[1]) / (n1 * n2)))
    return math.degrees(math.acos(cos))
