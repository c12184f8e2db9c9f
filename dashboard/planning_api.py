"""The work behind the seed's stateless planning endpoints (seed 000, Appendix F).

The routes are in ``dashboard.routes.planning``: ``POST /api/agent_solve``,
``/api/insert_missed_optimize``, ``/api/trajectory_swap_optimize``,
``/api/crossing_removal_optimize``. Each takes the seed's ``environment`` and
``drone_configs`` (Appendix B, parsed by ``planner.scenario.io``) and answers the seed's
Solution JSON (B.3) plus what was done. They never touch the live mission, so they are open,
but bounded: the request body is capped by the app, the mission by ``Limits``, and at most
one planning job runs at a time, in a worker thread (``dashboard.planning_jobs``: the event
loop, and so the live tick, is never blocked by it).

``agent_solve`` (``dashboard.agent_solve``) reads ``user_message`` with the coordinator and
answers it with the agent chain on the posted mission: a plan or a reallocation is planned
(under the words' constraints, post-optimised as the preferences say), a question is
answered without replanning, a what-if is planned on a copy; an ``existing_solution`` is
checked, answered about and compared with a new plan. ``distance_matrix`` is accepted for
the seed's shape but not trusted: distances are recomputed SAM-aware.
The three optimisers improve a posted ``solution`` (the seed's Solution JSON, or just
``{"routes": {"1": {"route": ["A1", "T1", "A1"]}}}``; an enabled drone it leaves out stays
at its start) that must pass the validator first.
A drone that cannot fly as posted (no airport within its fuel, frozen legs beyond it) is left
out of every plan, its posted route ignored, and the answer names it with the reason
(``warnings``, ``left_out``; ``rerouted`` for one planned to end at another airport).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from dashboard.errors import ApiError
from planner.errors import PlannerError
from planner.model import Scenario, Solution
from planner.scenario import json_path, parse_scenario
from planner.strategies import DEFAULT_STRATEGY, STRATEGIES

# The work's modules (the planner's kernels, scipy, the dialogue stack) are imported by the
# functions that do it: the forms above are all a server needs to start (dashboard.process).
if TYPE_CHECKING:
    from planner.feasibility import Plannable
    from planner.mission import Mission
    from planner.postopt import Change, PostOptResult

__all__ = [
    "Limits",
    "OptimizeRequest",
    "PostOptTool",
    "Preferences",
    "RouteIn",
    "SolutionIn",
    "SolveRequest",
    "checked",
    "left_out_words",
    "mission_scenario",
    "optimize",
    "posted_routes",
    "summary",
    "without_left_out",
]

PostOptTool = Callable[["Mission", dict[str, list[int]]], "PostOptResult"]
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
    responder_tools: bool = Field(
        False, description="the responder may call its read-only tools (agents.tools)"
    )

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

    user_message: str | None = Field(
        None,
        max_length=4000,
        description="the operator's words for the coordinator (a plan, a reallocation, a"
        " question, a what-if); empty: plan the mission",
    )
    existing_solution: SolutionIn | None = None
    preferences: Preferences = Field(default_factory=Preferences)


class OptimizeRequest(_Mission):
    """A mission and the `solution` (or `existing_solution`) to improve."""

    solution: SolutionIn = Field(validation_alias=AliasChoices("solution", "existing_solution"))


# ----- the work (worker thread) --------------------------------------------------------


def mission_scenario(body: _Mission, limits: Limits) -> Scenario:
    """The posted mission as a scenario, within ``limits`` (413 when too large, 422 when
    no drone is enabled; a bad field is a ``ScenarioError`` naming its JSON path)."""
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
    return scenario


def _mission(body: _Mission, limits: Limits) -> Mission:
    from planner.mission import compile_mission

    return compile_mission(mission_scenario(body, limits))


def left_out_words(fleet: Plannable) -> list[str]:
    """The warnings of a plan made around the drones that cannot fly, one per drone (the
    reasons begin with the drone: ``D1: its frozen legs alone need ...``)."""
    return [f"left out of the plan: {why}" for why in fleet.left_out.values()] + [
        f"rerouted: {why}" for why in fleet.rerouted.values()
    ]


def without_left_out(
    solution: SolutionIn, fleet: Plannable, field: str
) -> tuple[SolutionIn, list[str]]:
    """The posted ``solution`` without the routes of drones that cannot fly (each dropped
    route a warning naming its JSON path and why): the plan is of the rest of the fleet."""
    dropped = [d for d in solution.routes if d in fleet.left_out]
    if not dropped:
        return solution, []
    kept = {d: r for d, r in solution.routes.items() if d not in fleet.left_out}
    words = [f"{json_path([field, 'routes', d])} ignored: {fleet.left_out[d]}" for d in dropped]
    return solution.model_copy(update={"routes": kept}), words


def posted_routes(mission: Mission, solution: SolutionIn, field: str) -> dict[str, list[int]]:
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


def checked(mission: Mission, routes: dict[str, list[int]], field: str) -> Solution:
    """The posted routes as a Solution that passed the validator (422 naming each problem)."""
    from planner.solution import build_solution
    from planner.validation import validate_solution

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


def summary(solution: Solution) -> str:
    """The plan in the seed's words (``agents.words.posted.plan_summary``)."""
    from agents.words.posted import plan_summary

    return plan_summary(solution)


def optimize(tool: PostOptTool, body: OptimizeRequest, limits: Limits) -> dict[str, Any]:
    """Improve the posted solution with one post-optimisation ``tool`` and answer the new
    Solution JSON with the changes made (runs in a worker thread)."""
    from planner.feasibility import plannable

    fleet = plannable(_mission(body, limits))  # a drone that cannot fly is left out, said
    mission = fleet.mission
    posted, dropped = without_left_out(body.solution, fleet, "solution")
    routes = posted_routes(mission, posted, "solution")
    before = checked(mission, routes, "solution")
    done = tool(mission, routes)
    after = checked(mission, done.routes, "plan")
    return {
        "success": True,
        "response": "\n".join(
            [summary(after), *(f"Not planned: {w}" for w in fleet.left_out.values())]
        ),
        **_solution_json(after),
        "changes": [_change(c) for c in done.changes],
        "points_delta": after.total_points - before.total_points,
        "fuel_delta": after.total_fuel - before.total_fuel,
        "warnings": left_out_words(fleet) + dropped,
        "left_out": dict(fleet.left_out),
        "rerouted": dict(fleet.rerouted),
    }
