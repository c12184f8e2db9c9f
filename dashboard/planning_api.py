"""The work behind the seed's stateless planning endpoints (seed 000, Appendix F).

The routes are in ``dashboard.routes.planning``: ``POST /api/agent_solve``,
``/api/insert_missed_optimize``, ``/api/trajectory_swap_optimize``,
``/api/crossing_removal_optimize``. Each takes the seed's ``environment`` and
``drone_configs`` (Appendix B, parsed by ``planner.scenario_io``) and answers the seed's
Solution JSON (B.3) plus what was done. They never touch the live mission, so they are open,
but bounded: the request body is capped by the app, the mission by ``Limits``, and at most
one planning job runs at a time, in a worker thread (``PlanningJobs``: the event loop, and
so the live tick, is never blocked by it).

``agent_solve`` plans from scratch with the algorithmic planner (the team search, or one of
the seed's allocation strategies), then post-optimises as the preferences say; an
``existing_solution`` is checked and compared with the new plan. ``distance_matrix`` is
accepted for the seed's shape but not trusted: distances are recomputed SAM-aware.
The three optimisers improve a posted ``solution`` (the seed's Solution JSON, or just
``{"routes": {"1": {"route": ["A1", "T1", "A1"]}}}``; an enabled drone it leaves out stays
at its start) that must pass the validator first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from dashboard.errors import ApiError
from planner.errors import PlannerError
from planner.mission import Mission, compile_mission
from planner.model import Solution, drone_label
from planner.planning import DEFAULT_STRATEGY, STRATEGIES, plan_mission
from planner.postopt import Change, PostOptResult, post_optimise
from planner.scenario_io import json_path, parse_scenario
from planner.solution import build_solution, solution_routes
from planner.validation import validate_solution

__all__ = [
    "Limits",
    "OptimizeRequest",
    "PlanningJobs",
    "PostOptTool",
    "Preferences",
    "RouteIn",
    "SolutionIn",
    "SolveRequest",
    "optimize",
    "solve",
]

_T = TypeVar("_T")

PostOptTool = Callable[[Mission, dict[str, list[int]]], PostOptResult]
"""A post-optimisation of ``planner.postopt``: mission and node routes in, result out."""


@dataclass(frozen=True)
class Limits:
    """The largest mission and the longest search the planning endpoints accept."""

    max_targets: int = 200
    max_airports: int = 50
    max_sams: int = 50
    max_drones: int = 20
    max_seconds: float = 10.0


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Preferences(_Body):
    """The seed's `preferences`: strategy, post-optimisation switches, search limits."""

    allocation_strategy: str | None = Field(
        None,
        description=f"'{DEFAULT_STRATEGY}' (joint search, the default) or one of the "
        f"seed's allocation strategies: {', '.join(STRATEGIES[1:])}",
    )
    solver_mode: str | None = Field(None, description="accepted for the seed's shape; unused")
    crossing_removal: bool = True
    trajectory_swap: bool = True
    insert_unvisited: bool = True
    seconds: float = Field(1.0, gt=0, description="time limit of the team search")
    iterations: int | None = Field(
        None, ge=1, le=1_000_000, description="iteration limit instead (reproducible)"
    )
    seed: int = 0

    @field_validator("allocation_strategy")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        if value is not None and value not in STRATEGIES:
            raise ValueError(f"must be one of {', '.join(STRATEGIES)}")
        return value


class RouteIn(_Body):
    """One drone's route in a posted solution; only `route` is read."""

    route: list[str] = Field(min_length=2, description="node ids: start, targets..., end")
    distance: float | None = None
    total_points: float | None = None
    visited_targets: list[str] | None = None
    fuel_used: float | None = None
    fuel_budget: float | None = None
    feasible: bool | None = None
    path: list[tuple[float, float]] | None = None


class SolutionIn(_Body):
    """The seed's Solution JSON; only the routes are read, every figure is recomputed."""

    routes: dict[str, RouteIn]
    allocation: dict[str, list[str]] | None = None
    sequences: dict[str, str] | None = None
    unassigned_targets: list[str] | None = None
    excluded_targets: list[str] | None = None
    total_points: float | None = None
    total_fuel: float | None = None


class _Mission(_Body):
    """The seed's posted mission: environment and drone configurations."""

    environment: dict[str, Any] = Field(description="seed B.1: airports, targets, sams")
    drone_configs: dict[str, Any] = Field(description="seed B.2: drone id -> configuration")
    distance_matrix: dict[str, Any] | None = Field(
        None, description="accepted for the seed's shape; distances are recomputed SAM-aware"
    )


class SolveRequest(_Mission):
    """A mission to plan, with preferences, and maybe an existing solution to compare with."""

    user_message: str | None = Field(None, max_length=4000)
    existing_solution: SolutionIn | None = None
    preferences: Preferences = Field(default_factory=Preferences)


class OptimizeRequest(_Mission):
    """A mission and the `solution` (or `existing_solution`) to improve."""

    solution: SolutionIn = Field(validation_alias=AliasChoices("solution", "existing_solution"))


# ----- the work (worker thread) --------------------------------------------------------


def _mission(body: _Mission, limits: Limits) -> Mission:
    env = body.environment
    too_big = []
    for key, limit in (
        ("targets", limits.max_targets),
        ("airports", limits.max_airports),
        ("sams", limits.max_sams),
    ):
        items = env.get(key)
        if isinstance(items, list) and len(items) > limit:
            too_big.append((f"$.environment.{key}", f"at most {limit} here, got {len(items)}"))
    if len(body.drone_configs) > limits.max_drones:
        too_big.append(
            (
                "$.drone_configs",
                f"at most {limits.max_drones} drones here, got {len(body.drone_configs)}",
            )
        )
    if too_big:
        raise ApiError(413, "mission too large for this endpoint", too_big)
    scenario = parse_scenario(
        {"environment": env, "drone_configs": body.drone_configs}, source="request"
    )
    if not scenario.enabled_drones():
        raise ApiError(
            422, "no enabled drone to plan for", [("$.drone_configs", "every drone is disabled")]
        )
    return compile_mission(scenario)


def _routes(mission: Mission, solution: SolutionIn, field: str) -> dict[str, list[int]]:
    """The posted routes as node routes, every unknown id named."""
    enabled = {spec.id for spec in mission.drones}
    problems = []
    routes: dict[str, list[int]] = {}
    for drone_id, route in solution.routes.items():
        at = json_path([field, "routes", drone_id, "route"])
        if drone_id not in enabled:
            problems.append(
                (
                    json_path([field, "routes", drone_id]),
                    "no enabled drone with this id in drone_configs",
                )
            )
            continue
        bad = [(i, n) for i, n in enumerate(route.route) if n not in mission.index]
        for i, node in bad:
            why = (
                "inside a SAM (excluded)"
                if node in mission.excluded_targets
                else "not an airport or target of the environment"
            )
            problems.append((f"{at}[{i}]", f"{node!r} is {why}"))
        if not bad:
            routes[drone_id] = mission.nodes(route.route)
    if problems:
        raise ApiError(422, f"the posted {field} does not fit the mission", problems)
    for spec in mission.drones:  # a drone the plan leaves out stays at its start
        if spec.id not in routes:
            routes[spec.id] = [spec.start, *spec.prefix, spec.ends[0]]
    return routes


def _checked(mission: Mission, routes: dict[str, list[int]], field: str) -> Solution:
    try:
        solution = build_solution(mission, routes)
    except (PlannerError, IndexError, KeyError) as exc:
        raise ApiError(
            422,
            f"the posted {field} cannot be used: {exc}",
            [(json_path([field, "routes"]), str(exc))],
        ) from None
    violations = validate_solution(mission, solution)
    if violations:
        raise ApiError(
            422,
            f"the posted {field} breaks hard constraints",
            [
                (json_path([field, "routes", v.drone]) if v.drone else json_path([field]), str(v))
                for v in violations
            ],
        )
    return solution


def _change(change: Change) -> dict[str, Any]:
    return {
        "tool": change.tool,
        "drone": change.drone,
        "description": change.description,
        "points_delta": change.points_delta,
        "fuel_delta": change.fuel_delta,
    }


def _solution_json(solution: Solution) -> dict[str, Any]:
    return solution.model_dump(mode="json", by_alias=True)


def _summary(solution: Solution) -> str:
    lines = [
        "MISSION PLAN COMPUTED",
        f"Total points: {solution.total_points:g}   total fuel: {solution.total_fuel:.1f} km",
    ]
    for drone_id, route in solution.routes.items():
        budget = route.fuel_budget if route.fuel_budget is not None else float("nan")
        lines.append(
            f"{drone_label(drone_id)}: {' -> '.join(route.route)}  "
            f"({route.total_points:g} points, {route.fuel_used:.1f} / {budget:g} km)"
        )
    if solution.unassigned_targets:
        lines.append(f"Not visited: {', '.join(solution.unassigned_targets)}")
    if solution.excluded_targets:
        lines.append(f"Excluded (inside a SAM): {', '.join(solution.excluded_targets)}")
    return "\n".join(lines)


def solve(body: SolveRequest, limits: Limits) -> dict[str, Any]:
    """Plan the posted mission from scratch, post-optimise it, and answer the seed's
    Solution JSON with the trace and the coordinator's decision (runs in a worker thread)."""
    prefs = body.preferences
    if prefs.seconds > limits.max_seconds:
        raise ApiError(
            422,
            "search too long for this endpoint",
            [("$.preferences.seconds", f"at most {limits.max_seconds:g} s")],
        )
    mission = _mission(body, limits)
    existing = None
    if body.existing_solution is not None:
        existing = _checked(
            mission,
            _routes(mission, body.existing_solution, "existing_solution"),
            "existing_solution",
        )
    strategy = prefs.allocation_strategy or DEFAULT_STRATEGY
    result = plan_mission(
        mission,
        strategy,
        seconds=prefs.seconds,
        iterations=prefs.iterations,
        seed=prefs.seed,
        post_opt=False,
    )
    improved = post_optimise(
        mission,
        solution_routes(mission, result.solution),
        insert=prefs.insert_unvisited,
        swap=prefs.trajectory_swap,
        no_cross=prefs.crossing_removal,
    )
    solution = _checked(mission, improved.routes, "plan")
    warnings = []
    if body.distance_matrix is not None:
        warnings.append("distance_matrix ignored: distances are recomputed SAM-aware")
    if prefs.solver_mode is not None:
        warnings.append(f"solver_mode {prefs.solver_mode!r} ignored")
    post_opt = {
        "crossing_removal": prefs.crossing_removal,
        "trajectory_swap": prefs.trajectory_swap,
        "insert_unvisited": prefs.insert_unvisited,
    }
    text = _summary(solution)
    comparison = None
    if existing is not None:
        comparison = {
            "points_delta": solution.total_points - existing.total_points,
            "fuel_delta": solution.total_fuel - existing.total_fuel,
        }
        text += (
            f"\nAgainst the existing solution: {comparison['points_delta']:+g} points, "
            f"{comparison['fuel_delta']:+.1f} km"
        )
    return {
        "success": True,
        "response": text,
        **_solution_json(solution),
        "trace": {
            "strategy": strategy,
            "seconds": result.seconds,
            "post_opt": [_change(c) for c in improved.changes],
            "against_existing": comparison,
        },
        "coordinator_decision": {
            "intent": "plan",
            "confidence": 1.0,
            "rules_hit": ["stateless_endpoint"],
            "policy": {
                "allow_solver": True,
                "allocation_strategy": strategy,
                "post_opt": post_opt,
                "solver_mode": prefs.solver_mode,
            },
            "explanation_only": False,
            "warnings": warnings,
            "errors": [],
        },
    }


def optimize(tool: PostOptTool, body: OptimizeRequest, limits: Limits) -> dict[str, Any]:
    """Improve the posted solution with one post-optimisation ``tool`` and answer the new
    Solution JSON with the changes made (runs in a worker thread)."""
    mission = _mission(body, limits)
    routes = _routes(mission, body.solution, "solution")
    before = _checked(mission, routes, "solution")
    done = tool(mission, routes)
    after = _checked(mission, done.routes, "plan")
    return {
        "success": True,
        "response": _summary(after),
        **_solution_json(after),
        "changes": [_change(c) for c in done.changes],
        "points_delta": after.total_points - before.total_points,
        "fuel_delta": after.total_fuel - before.total_fuel,
    }


# ----- the jobs (event loop) -----------------------------------------------------------


class PlanningJobs:
    """The planning endpoints' worker: one job at a time (two cores, and a live tick), in a
    worker thread, within ``limits``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._gate = asyncio.Semaphore(1)

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        async with self._gate:
            return await asyncio.to_thread(fn, *args)

    async def solve(self, body: SolveRequest) -> dict[str, Any]:
        """``solve(body)`` when the worker is free."""
        return await self._run(solve, body, self.limits)

    async def optimize(self, tool: PostOptTool, body: OptimizeRequest) -> dict[str, Any]:
        """``optimize(tool, body)`` when the worker is free."""
        return await self._run(optimize, tool, body, self.limits)
