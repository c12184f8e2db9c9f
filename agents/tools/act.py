"""The acting tools: they plan on a copy of the problem and answer with a proposal.

None of them writes to a run: the routes they return are what a planning round could
commit, and only the planning round (its validator, the lifecycle's review) commits. The
planner runs in the session's worker thread (``Tool.blocking``), never on the event loop.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from agents.tools.contract import Tool, ToolArgs, ToolContext, ToolError
from agents.words.whatif import WhatIfError, plan_narrowed, what_if
from planner.allocation import allocate as allocate_targets
from planner.constraints import (
    OperatorConstraints,
    constrain_mission,
    constraint_violations,
    merge_constraints,
    parse_constraints,
)
from planner.errors import PlannerError
from planner.mission import Mission
from planner.model import Solution, drone_label
from planner.postopt import post_optimise
from planner.solution import build_solution
from planner.validation import validate_solution

__all__ = ["ACT_TOOLS", "ConstraintArgs"]

Strategy = Literal["efficient", "greedy", "balanced", "geographic", "exclusive"]


class MoveArgs(ToolArgs):
    """A target the operator gives to another drone."""

    target: str
    to_drone: str = Field(description="the drone that must visit it (D1)")


class ConstraintArgs(ToolArgs):
    """Constraints to plan under, on top of the operator's constraints in force."""

    moves: list[MoveArgs] = Field(default_factory=list)
    forbidden: dict[str, list[str]] = Field(
        default_factory=dict, description="drone label -> targets it may not visit"
    )
    required_targets: list[str] = Field(default_factory=list)


def _constraints(ctx: ToolContext, extra: ConstraintArgs | None) -> OperatorConstraints:
    """The operator's constraints in force, merged with ``extra`` (drone labels as ids)."""
    keys = ("moves", "forbidden", "required_targets", "fuel_reserve")
    base = {k: v for k, v in (ctx.state.constraints or {}).items() if k in keys and v}
    try:
        merged = parse_constraints(base)
        if extra is not None:
            more = {
                "moves": [
                    {"target": m.target.upper(), "to_drone": ctx.drone_id(m.to_drone)}
                    for m in extra.moves
                ],
                "forbidden": {
                    ctx.drone_id(d): [t.upper() for t in ts] for d, ts in extra.forbidden.items()
                },
                "required_targets": [t.upper() for t in extra.required_targets],
            }
            merged = merge_constraints(merged, parse_constraints(more))
    except ValidationError as exc:
        raise ToolError(f"malformed constraints: {exc.errors()[0]['msg']}") from None
    return merged


def _plan(mission: Mission, solution: Solution) -> dict[str, Any]:
    """A solution as the model reads it: per drone label its route, points and km."""
    return {
        "routes": {drone_label(d): r.route for d, r in solution.routes.items()},
        "points": {drone_label(d): r.total_points for d, r in solution.routes.items()},
        "km": {drone_label(d): round(r.distance, 3) for d, r in solution.routes.items()},
        "total_points": solution.total_points,
        "total_km": round(solution.total_fuel, 3),
        "unassigned_targets": list(solution.unassigned_targets),
    }


def _routes(ctx: ToolContext, written: Mapping[str, list[str]]) -> dict[str, list[int]]:
    """Routes given by the model (label -> node ids) as node routes on the problem."""
    mission = ctx.mission
    routes: dict[str, list[int]] = {}
    for label, ids in written.items():
        drone = ctx.drone_id(label)
        unknown = [i for i in ids if i.upper() not in mission.index]
        if unknown:
            raise ToolError(f"{drone_label(drone)}: unknown places {', '.join(unknown)}")
        routes[drone] = mission.nodes([i.upper() for i in ids])
    return routes


# ----------------------------------------------------------------------------- allocate


class AllocateArgs(ToolArgs):
    """Which allocation rule to run."""

    strategy: Strategy = "efficient"
    max_per_drone: int = Field(default=12, ge=0, le=12)


def allocate(ctx: ToolContext, args: AllocateArgs) -> dict[str, Any]:
    """Which open targets each drone would take (a proposal: nothing is committed)."""
    ctx.plannable()
    mission = constrain_mission(ctx.mission, _constraints(ctx, None))
    found = allocate_targets(mission, args.strategy, args.max_per_drone)
    return {
        "proposal": True,
        "strategy": args.strategy,
        "assignments": {drone_label(d): mission.ids(list(ts)) for d, ts in found.items()},
        "points": {
            drone_label(d): float(sum(mission.scores[t] for t in ts)) for d, ts in found.items()
        },
    }


# ----------------------------------------------------------------------------- solve


class SolveArgs(ToolArgs):
    """Plan the problem on a copy, optionally under more constraints."""

    constraints: ConstraintArgs | None = None


def solve(ctx: ToolContext, args: SolveArgs) -> dict[str, Any]:
    """The algorithmic planner on a copy: routes, points, km (a proposal)."""
    ctx.plannable()
    constraints = _constraints(ctx, args.constraints)
    try:
        solution, left_out, rerouted = plan_narrowed(
            ctx.problem, constraints, iterations=ctx.iterations, seed=ctx.seed
        )
    except WhatIfError as exc:
        raise ToolError(str(exc).removeprefix("what if: ")) from None
    return {
        "proposal": True,
        **_plan(ctx.mission, solution),
        "not_planned": {drone_label(d): why for d, why in left_out.items()},
        "rerouted": {drone_label(d): why for d, why in rerouted.items()},
        "constraint_violations": constraint_violations(solution, constraints, ctx.mission),
    }


# ----------------------------------------------------------------------------- validate


class RoutesArgs(ToolArgs):
    """Routes to check: per drone, its whole route (start, targets, end airport)."""

    routes: dict[str, list[str]] = Field(
        description='drone label -> route ids, e.g. {"D1": ["A1", "T3", "T7", "A1"]}'
    )


def validate(ctx: ToolContext, args: RoutesArgs) -> dict[str, Any]:
    """The hard-constraint validator and the operator's constraints on the given routes."""
    ctx.plannable()
    routes = _routes(ctx, args.routes)
    try:
        solution = build_solution(ctx.mission, routes)
    except (PlannerError, ValueError) as exc:
        raise ToolError(f"not a plan: {exc}") from None
    violations = validate_solution(ctx.mission, solution)
    return {
        "valid": not violations,
        "violations": [str(v) for v in violations],
        "constraint_violations": constraint_violations(
            solution, _constraints(ctx, None), ctx.mission
        ),
        **_plan(ctx.mission, solution),
    }


# ----------------------------------------------------------------------------- optimise


def optimise(ctx: ToolContext, args: RoutesArgs) -> dict[str, Any]:
    """Post-optimise the given routes (uncross, swap, insert missed targets): a proposal."""
    ctx.plannable()
    routes = _routes(ctx, args.routes)
    mission = constrain_mission(ctx.mission, _constraints(ctx, None))
    try:
        done = post_optimise(mission, routes)
        solution = build_solution(ctx.mission, done.routes)
    except (PlannerError, ValueError) as exc:
        raise ToolError(f"cannot optimise these routes: {exc}") from None
    violations = validate_solution(ctx.mission, solution)
    return {
        "proposal": True,
        **_plan(ctx.mission, solution),
        "changes": [c.description for c in done.changes],
        "points_delta": done.points_delta,
        "km_delta": round(done.fuel_delta, 3) if math.isfinite(done.fuel_delta) else None,
        "valid": not violations,
        "violations": [str(v) for v in violations],
    }


# ----------------------------------------------------------------------------- what-if


class ChangeArgs(ToolArgs):
    """One change to the copy (the what-if's vocabulary, ``agents.words.whatif``)."""

    kind: Literal[
        "set_fuel", "set_budget", "lose_drone", "set_priority", "remove_sam", "remove_target"
    ]
    drone: str | None = None
    target: str | None = None
    sam: str | None = None
    fuel: float | None = Field(default=None, ge=0)
    budget: float | None = Field(default=None, ge=0)
    delta: float | None = None
    priority: float | None = None


class WhatIfArgs(ToolArgs):
    """The changes to plan on a copy of the remainder."""

    changes: list[ChangeArgs] = Field(min_length=1, max_length=8)


async def what_if_tool(ctx: ToolContext, args: WhatIfArgs) -> dict[str, Any]:
    """The remainder replanned on a copy with the changes, against the current plan."""
    changes = []
    for c in args.changes:
        change: dict[str, Any] = c.model_dump(exclude_none=True)
        if "drone" in change:
            change["drone"] = ctx.drone_id(change["drone"])
        if "target" in change:
            change["target"] = ctx.known_id("target", str(change["target"]))
        if "sam" in change:
            change["sam"] = ctx.known_id("sam", str(change["sam"]))
        changes.append(change)
    try:
        result = await what_if(
            changes,
            ctx.state,
            world=ctx.world,
            not_planned=ctx.not_planned,
            iterations=ctx.iterations,
            seed=ctx.seed,
        )
    except WhatIfError as exc:
        raise ToolError(str(exc)) from None
    return {"proposal": True, **result.model_dump(mode="json")}


ACT_TOOLS = (
    Tool(
        "allocate",
        "Propose which open targets each drone takes under one allocation strategy (nothing"
        " is committed).",
        AllocateArgs,
        "act",
        allocate,
        blocking=True,
    ),
    Tool(
        "solve",
        "Plan the mission (the remainder, for a mission under way) on a copy with the"
        " algorithmic planner, optionally under more constraints; a proposal, never committed.",
        SolveArgs,
        "act",
        solve,
        blocking=True,
    ),
    Tool(
        "validate",
        "Check routes against the hard constraints (fuel, sensors, SAMs, airports) and the"
        " operator's constraints; gives their points and km.",
        RoutesArgs,
        "act",
        validate,
        blocking=True,
    ),
    Tool(
        "optimise",
        "Improve routes on a copy (uncross, swap targets, insert missed ones); a proposal.",
        RoutesArgs,
        "act",
        optimise,
        blocking=True,
    ),
    Tool(
        "what_if",
        "Replan a copy of the remainder with changes (fuel, a lost drone, a priority, a SAM"
        " or a target removed) and compare with the current plan; the live plan is unchanged.",
        WhatIfArgs,
        "act",
        what_if_tool,
    ),
)
