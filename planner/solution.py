"""Turning solver routes (node indices) into the seed's Solution (B.3) with flown geometry."""

from __future__ import annotations

from collections.abc import Sequence

from planner.mission import Mission
from planner.model import RouteResult, Solution

__all__ = ["FEASIBILITY_TOLERANCE", "build_solution", "route_points", "solution_routes"]

# Fuel comparisons allow this much rounding slack (km), no more.
FEASIBILITY_TOLERANCE = 1e-9


def build_solution(mission: Mission, routes: dict[str, list[int]]) -> Solution:
    """The Solution for ``routes`` (drone id -> node route), with distances recomputed."""
    route_results: dict[str, RouteResult] = {}
    allocation: dict[str, list[str]] = {}
    visited: set[int] = set()
    for spec in mission.drones:
        route = routes.get(spec.id)
        if route is None:
            continue
        targets = route[1:-1]
        visited.update(targets)
        length = mission.route_length(route)
        path = mission.route_path(route).sample() if len(route) > 1 else None
        route_results[spec.id] = RouteResult(
            route=mission.ids(route),
            distance=length,
            total_points=route_points(mission, route),
            visited_targets=mission.ids(targets),
            fuel_used=length,
            fuel_budget=spec.budget,
            feasible=length <= spec.budget + FEASIBILITY_TOLERANCE,
            # pydantic makes the pairs tuples: 3 ms for a swarm's 1,000 routes, 20 in Python
            path=None if path is None else path.tolist(),
        )
        allocation[spec.id] = mission.ids(targets)
    unassigned = [mission.node_ids[n] for n in mission.target_nodes if n not in visited]
    return Solution(
        routes=route_results,
        allocation=allocation,
        sequences={d: ",".join(r.route) for d, r in route_results.items()},
        unassigned_targets=unassigned,
        excluded_targets=list(mission.excluded_targets),
        total_points=float(sum(r.total_points for r in route_results.values())),
        total_fuel=float(sum(r.fuel_used for r in route_results.values())),
    )


def route_points(mission: Mission, route: Sequence[int]) -> float:
    """The points a node route (start, targets, end) collects."""
    return float(sum(mission.scores[n] for n in route[1:-1]))


def solution_routes(mission: Mission, solution: Solution) -> dict[str, list[int]]:
    """Back from ids to node routes (ids must be known to the mission)."""
    return {d: mission.nodes(r.route) for d, r in solution.routes.items()}
