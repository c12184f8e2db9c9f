"""The read-only tools: they answer from the frozen mission state (the known world) and never
plan. Each handler returns the result's ``data`` or raises ``ToolError``."""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from agents.tools.contract import NoArgs, Tool, ToolArgs, ToolContext, ToolError
from agents.words.whatif import current_figures
from planner.model import drone_label

__all__ = ["READ_TOOLS"]


def _round(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), 3)


def mission_overview(ctx: ToolContext, _: NoArgs) -> dict[str, Any]:
    """The mission at the state's tick: drones, targets, known SAMs, the plan's totals."""
    s = ctx.state
    env = s.environment
    return {
        "run_id": s.run_id,
        "tick": s.tick,
        "time_s": s.time,
        "mode": s.mode,
        "drones": {d.label: d.status for d in s.drones.values()},
        "airports": [a.id for a in env.airports],
        "targets": [
            {"id": t.id, "priority": t.priority, "type": t.type, "collected_by": _by(s, t.id)}
            for t in env.targets
        ],
        "known_sams": [{"id": m.id, "x": m.x, "y": m.y, "range_km": m.range} for m in env.sams],
        "excluded_targets": list(s.excluded),
        "plan": None
        if s.plan is None
        else {
            "plan_id": s.plan_id,
            "collected_points": s.collected_points,
            "planned_points": s.planned_points,
            "unassigned_targets": s.unassigned,
        },
        "constraints": dict(s.constraints),
        "fuel_reserve_km": s.fuel_reserve,
    }


def _by(state: Any, target: str) -> str | None:
    drone = state.collected.get(target)
    return drone_label(drone) if drone is not None else None


class DroneArgs(ToolArgs):
    """One drone."""

    drone: str = Field(description="the drone's label (D1) or id (1)")


def drone_state(ctx: ToolContext, args: DroneArgs) -> dict[str, Any]:
    """One drone: status, position, fuel left, budget, points, route, margin."""
    d = ctx.state.drones[ctx.drone_id(args.drone)]
    return {
        "drone": d.label,
        "status": d.status,
        "x": d.x,
        "y": d.y,
        "fuel_left_km": d.fuel,
        "fuel_budget_km": d.budget,
        "points_collected": d.points,
        "sensors": d.sensors,
        "route": list(d.route),
        "planned_targets": list(d.planned_targets),
        "remaining_km": d.remaining_km,
        "margin_km": d.margin_km,
        "collected": ctx.state.collected_by(d.id),
        "lost_reason": d.lost_reason,
    }


class DistanceArgs(ToolArgs):
    """Two places: airport or target ids, or a drone's label for where it plans from."""

    origin: str = Field(description="an airport or target id (A1, T3), or a drone label (D1)")
    destination: str = Field(description="an airport or target id, or a drone label")


def distance(ctx: ToolContext, args: DistanceArgs) -> dict[str, Any]:
    """The SAM-avoiding path length and the straight line between two places (km)."""
    mission = ctx.mission
    a, b = _node(ctx, args.origin), _node(ctx, args.destination)
    pa, pb = mission.positions[mission.index[a]], mission.positions[mission.index[b]]
    return {
        "origin": a,
        "destination": b,
        "path_km": _round(float(mission.dist[mission.index[a], mission.index[b]])),
        "straight_km": _round(math.hypot(float(pa[0] - pb[0]), float(pa[1] - pb[1]))),
    }


def _node(ctx: ToolContext, written: str) -> str:
    """The problem's node for ``written``: a drone stands for where it plans from (its
    checkpoint in a remainder, where it is now in the air, else its start airport)."""
    mission = ctx.mission
    text = written.strip().upper()
    if text in mission.index:
        return text
    if ctx.state.drone(text) is not None:
        drone_id = ctx.drone_id(text)
        lost = ctx.state.drones[drone_id]
        if lost.status == "lost":  # not from its home airport: it flies nowhere now
            why = f" ({lost.lost_reason})" if lost.lost_reason else ""
            raise ToolError(f"{drone_label(drone_id)} was lost{why}: it is no place to fly from")
        here = f"{drone_label(drone_id)}_START"  # where it is now, or its checkpoint
        if here in mission.index:
            return here
        spec = next((s for s in mission.drones if s.id == drone_id), None)
        if spec is None:
            raise ToolError(f"{drone_label(drone_id)} is not planned (lost or sent home)")
        return mission.node_ids[spec.start]
    if text in ctx.state.collected:
        raise ToolError(f"{text} is already collected: it is no longer a place to fly to")
    if text in ctx.state.excluded:
        raise ToolError(f"{text} is inside a known SAM zone: no path reaches it")
    raise ToolError(f"unknown place {written!r}: give an airport, a target or a drone")


def plan_metrics(ctx: ToolContext, _: NoArgs) -> dict[str, Any]:
    """The committed plan from now: per drone its targets, points, km to fly, margin."""
    s = ctx.state
    if s.plan is None:
        raise ToolError("no plan yet: solve or allocate first")
    figures = current_figures(s)
    return {
        "plan_id": s.plan_id,
        "points_collected": s.collected_points,
        "points_to_collect": figures.points,
        "km_to_fly": _round(figures.fuel),
        "unassigned_targets": s.unassigned,
        "drones": {
            drone_label(d): {
                "targets": f.targets,
                "end": f.end,
                "points": f.points,
                "km_to_fly": _round(f.fuel),
                "margin_km": _round(s.drones[d].margin_km),
                "planned": f.planned,
            }
            for d, f in figures.drones.items()
        },
    }


READ_TOOLS = (
    Tool(
        "mission_overview",
        "The mission now: drones and their status, targets (priority, type, who collected"
        " them), the known SAMs, the committed plan's points, the operator's constraints.",
        NoArgs,
        "read",
        mission_overview,
    ),
    Tool(
        "drone_state",
        "One drone now: status, position, fuel left, fuel budget, points, its route,"
        " the km still to fly and its fuel margin.",
        DroneArgs,
        "read",
        drone_state,
    ),
    Tool(
        "distance",
        "The SAM-avoiding path length and the straight-line distance (km) between two"
        " places (airports, targets, or a drone's planning start).",
        DistanceArgs,
        "read",
        distance,
        blocking=True,  # compiling the distances takes a moment the first time
    ),
    Tool(
        "plan_metrics",
        "The committed plan from now: per drone its targets, points, km to fly and fuel"
        " margin; the targets no drone collects.",
        NoArgs,
        "read",
        plan_metrics,
    ),
)
