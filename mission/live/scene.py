"""The whole picture of a live run, as a view needs it: airports, targets with their
status, SAMs (known, and hidden ones for a truth toggle), each drone's flown trail, frozen
and planned path, fuel and margin, and the draft under review with what it changes."""

from __future__ import annotations

import itertools
import math
from typing import Any

from executive.loop import Executive
from executive.loop.safety import Safety
from planner.geometry import Path
from planner.model import Solution, drone_label
from sim.flight import slice_path

__all__ = ["scene"]

_SAGITTA = 0.05  # km: how finely arcs are drawn on the map
_PNR_STEP = 0.5  # km: how finely a path is walked for its point of no return


def _why(executive: Executive, draft: dict[str, Any]) -> dict[str, Any]:
    """Why the draft waits, first: the hazards of the plan in force it answers (a known SAM
    ahead, fuel that no longer covers the plan) and the change that started its round; and
    the drones it changes (their targets, or a hazard routed around): the only routes
    drawn."""
    safety = executive.safety
    hazards = {
        d: text
        for d in executive.scenario.drone_configs
        if (text := _warning(safety, d)) is not None
    }
    trigger = next((r.trigger for r in reversed(executive.replans) if r.status == "review"), None)
    why = [f"{drone_label(d)}: {text}" for d, text in sorted(hazards.items())]
    if trigger is not None:
        why.append(f"asked for by {trigger}")
    changed = sorted(set(draft["diff"].get("routes") or {}) | set(hazards))
    return {"why": why, "changed": changed}


def _warning(safety: Safety, drone_id: str) -> str | None:
    """What is wrong with the drone's plan in force, in words (None: nothing known)."""
    w = safety.warnings.get(drone_id)
    if w is not None:
        return (
            f"its plan enters {w['sam']} in {w['in_s']:.0f} s; the safety layer will"
            f" {w['action']} in {w['acts_in_s']:.0f} s unless a plan takes over"
        )
    margin = safety.infeasible.get(drone_id)
    if margin is not None:
        return f"its plan needs {-margin:.1f} km more than its fuel: a replan is on its way"
    return None


def _polyline(path: Path | None) -> list[list[float]]:
    if path is None or path.length <= 0.0:
        return []
    return [[round(float(x), 4), round(float(y), 4)] for x, y in path.sample(_SAGITTA)]


def _cut(path: Path, s0: float, s1: float) -> Path | None:
    """The part of ``path`` between arc lengths ``s0`` and ``s1``."""
    tail = slice_path(path, s0)
    if tail is None or s1 <= s0:
        return None
    rest = slice_path(tail.reversed(), max(0.0, tail.length - (s1 - s0)))
    return None if rest is None else rest.reversed()


def scene(
    executive: Executive, trails: dict[str, list[list[float]]] | None = None
) -> dict[str, Any]:
    """The whole picture a view needs, from what the executive holds now, as the
    ``scene`` topic's payload (the executive must have started; read it between ticks).

    Targets carry a status (collected, excluded, planned, pending); SAMs say whether they
    are known (a hidden SAM is shown only on a view's truth toggle); each drone has its
    flown trail (``trails``: drone -> [x, y] points, kept by the host), the frozen part of
    its path (up to the checkpoint of a round in flight), the rest of its planned path as
    polylines, its route, fuel and ``margin_km``: the fuel left once the frozen and planned
    path is flown (airborne drones only, else None). Distances are km. ``draft`` is the
    plan under review, with what it changes against the committed plan, or None.
    """
    sim = executive.sim
    world = sim.world
    known = world.known_environment
    truth = world.truth_environment
    known_sams = {s.id for s in known.sams}
    collected = world.collected()
    plan = executive.plan
    planned: dict[str, str] = {}
    if plan is not None:
        for drone_id, result in plan.routes.items():
            for target in result.visited_targets:
                planned[target] = drone_id
    excluded = set(plan.excluded_targets) if plan is not None else set()
    targets = []
    for t in known.targets:
        inside = any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in known.sams)
        status = (
            "collected"
            if t.id in collected
            else "excluded"
            if inside or t.id in excluded
            else "planned"
            if t.id in planned
            else "pending"
        )
        targets.append(
            {
                "id": t.id,
                "x": t.x,
                "y": t.y,
                "priority": t.priority,
                "type": t.type,
                "status": status,
                "drone": collected.get(t.id) or planned.get(t.id),
            }
        )
    sams = [
        {"id": s.id, "x": s.x, "y": s.y, "range": s.range, "known": s.id in known_sams}
        for s in truth.sams
    ]
    checkpoints = executive.checkpoints
    reserve = executive.policy.fuel_reserve
    airports = {a.id: (a.x, a.y) for a in known.airports}
    ends = {
        d: [airports[a] for a in c.end_options(list(airports)) if a in airports]
        for d, c in executive.scenario.drone_configs.items()
    }
    target_ids = {t.id for t in known.targets}
    returning, held = executive.returning, executive.operator_holds
    drones: dict[str, Any] = {}
    for drone_id, config in executive.scenario.drone_configs.items():
        flight = world.flight(drone_id)
        status = world.status(drone_id)
        x, y, heading = world.position(drone_id)
        s = world.progress(drone_id)
        frozen = ahead = None
        kept = world.kept_path(drone_id) if status == "holding" else None
        if kept is not None:  # paused: the path RESUME flies again stays on the map
            ahead = kept
        elif flight is not None and status in ("flying", "holding") and not flight.holding:
            c = checkpoints.get(drone_id)
            if c is not None and c.airborne and c.s > s:
                frozen = _cut(flight.path, s, c.s)
                ahead = slice_path(flight.path, c.s)
            else:
                ahead = slice_path(flight.path, s)
        planned_route = plan.routes.get(drone_id) if plan is not None else None
        route = planned_route.route if planned_route is not None else []
        remaining = ahead.length if ahead is not None else 0.0
        remaining += frozen.length if frozen is not None else 0.0
        fuel = world.fuel(drone_id)
        airborne = status in ("flying", "holding")
        turn = _turn_home(
            (x, y), fuel, [p for p in (frozen, ahead) if p is not None], ends[drone_id], reserve
        )
        drones[drone_id] = {
            "x": x,
            "y": y,
            "heading": heading,
            "status": status,
            "fuel": fuel,
            "budget": config.fuel_budget,
            "speed": world.config.speed_of(drone_id),
            "sensors": config.accessible_targets,
            "enabled": config.enabled,
            "route": route,
            "remaining_km": remaining,
            # fuel left over once the planned path is flown: the margin ring on the map
            "margin_km": fuel - remaining if airborne else None,
            "next_target": next((t for t in route if t in target_ids and t not in collected), None),
            # the fleet table's point of no return (airborne drones only, else None)
            **(turn if airborne else dict.fromkeys(turn)),
            "flown": list((trails or {}).get(drone_id, [])),
            "frozen": _polyline(frozen),
            "planned": _polyline(ahead),
            "holding": bool(flight is not None and flight.holding),
            # why the safety layer (or the operator) sent it home / holds it: words for a view
            "returning": returning.get(drone_id),
            "held": "operator: hold" if drone_id in held else executive.safety.held.get(drone_id),
            # the plan in force meets a known SAM ahead (safety acts later), or no longer
            # fits the fuel: words for the fleet row and the map
            "warning": _warning(executive.safety, drone_id),
        }
    draft = _draft(executive.review())
    if draft is not None:
        draft |= _why(executive, draft)
    return {
        "run_id": executive.run_id,
        "tick": sim.tick,
        "time": sim.time,
        "tick_hz": sim.tick_hz,
        "mode": executive.mode,
        "speed": executive.speed,
        "plan_id": executive.plan_id,
        "planned_points": plan.total_points if plan is not None else 0.0,
        # a fork's parent run and tick ({"parent", "tick"}), else None
        "fork": executive.forked_from,
        # the geographic origin, if any: a view shows lat/lon next to km
        "geo": geo.model_dump() if (geo := executive.scenario.geo) is not None else None,
        "airports": [{"id": a.id, "x": a.x, "y": a.y} for a in known.airports],
        "targets": targets,
        "sams": sams,
        "drones": drones,
        "draft": draft,
        "constraints": executive.constraints.model_dump(mode="json"),
        "collected_points": float(sum(t.priority for t in known.targets if t.id in collected)),
    }


def _turn_home(
    here: tuple[float, float],
    fuel: float,
    paths: list[Path],
    ends: list[tuple[float, float]],
    reserve: float,
) -> dict[str, float | None]:
    """When the drone must turn home: ``home_km`` the straight line from here to its nearest
    allowed end airport (SAMs not counted: a lower bound), ``bingo_km`` that plus the
    policy's reserve (the fuel at which it must turn home now), ``spare_km`` the fuel above
    it, and ``pnr_km`` how far along its frozen and planned path it can fly before the fuel
    left no longer covers the straight way home and the reserve (None: never on this path,
    e.g. a plan that ends at an airport within its fuel)."""
    if not ends:
        return dict.fromkeys(("home_km", "bingo_km", "spare_km", "pnr_km"))

    def home(p: tuple[float, float]) -> float:
        return min(math.hypot(p[0] - ex, p[1] - ey) for ex, ey in ends)

    home_km = home(here)
    # fuel - walked - home - reserve never grows along a path (home shrinks at most as fast
    # as the drone flies): walk it only when it is short at the path's end.
    points = [here] + [(float(x), float(y)) for path in paths for x, y in path.sample()]
    total = sum(math.dist(a, b) for a, b in itertools.pairwise(points))
    pnr: float | None = None
    if fuel - total < home(points[-1]) + reserve:
        walked = 0.0
        for a, b in itertools.pairwise(points):
            length = math.dist(a, b)
            steps = max(1, math.ceil(length / _PNR_STEP))
            for k in range(1, steps + 1):
                f = k / steps
                p = (a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]))
                if fuel - (walked + f * length) < home(p) + reserve:
                    pnr = walked + (k - 1) / steps * length
                    break
            if pnr is not None:
                break
            walked += length
    if fuel < home_km + reserve:
        pnr = 0.0
    return {
        "home_km": home_km,
        "bingo_km": home_km + reserve,
        "spare_km": fuel - home_km - reserve,
        "pnr_km": pnr,
    }


def _draft(review: dict[str, Any] | None) -> dict[str, Any] | None:
    """The review panel's picture of the draft waiting for the operator: what it was when
    made, how long it has waited, what it changes over the remainder, and (when the
    drones have flown past its cut) the same intent rebased onto a recent state, which is
    what ACCEPT would fly: its routes are the ones drawn."""
    if review is None:
        return None
    rebased = review["rebased"]
    shown: Solution = rebased["solution"] if rebased is not None else review["solution"]
    return {
        "plan_id": review["plan_id"],
        "origin": review["origin"],
        "ready_tick": review["ready_tick"],
        "cut_tick": review["cut_tick"],
        "waited_s": review["waited_s"],
        "timeout_s": review["timeout_s"],
        "points": review["points"],
        "fuel": review["fuel"],
        "dropped": review["dropped"],
        "diff": review["diff"],
        "rebased": None
        if rebased is None
        else {k: rebased[k] for k in ("cut_tick", "points", "fuel", "dropped")},
        "routes": {
            d: {
                "route": r.route,
                "points": r.total_points,
                "fuel": r.fuel_used,
                "path": [list(p) for p in (r.path or [])],
            }
            for d, r in shown.routes.items()
        },
    }
