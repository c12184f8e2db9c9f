"""The whole picture of a live run, as a view needs it: airports, targets with their
status, SAMs (known, and hidden ones for a truth toggle), each drone's flown trail, frozen
and planned path, fuel and margin, and the draft under review with what it changes."""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from executive.loop import Executive
from executive.loop.safety import Safety
from planner.geometry import Path
from planner.model import DroneConfig, Sam, Solution, Target, drone_label
from sim.flight import Flight, slice_path

__all__ = ["capture_scene", "scene"]

_SAGITTA = 0.05  # km: how finely arcs are drawn on the map
_PNR_STEP = 0.5  # km: how finely a path is walked for its point of no return


def _why(executive: Executive, draft: dict[str, Any]) -> dict[str, Any]:
    """Why the draft waits, first: the hazards of the plan in force it answers and the
    change that started its round; and the drones it changes (their targets, or a hazard
    routed around): the only routes drawn. ``hazards`` are the known SAMs ahead (the
    safety layer's warnings: a view words them, counting down to their ticks), ``why`` the
    rest in words (fuel that no longer covers a plan, then the trigger). ``urgent``: the plan
    in force is unsafe or short of fuel, so the draft is a fix waiting, not an improvement."""
    safety = executive.safety
    drones = executive.scenario.drone_configs
    hazards = [h for d in sorted(drones) if (h := _hazard(safety, d)) is not None]
    short = {d: text for d in drones if (text := _warning(safety, d)) is not None}
    trigger = next((r.trigger for r in reversed(executive.replans) if r.status == "review"), None)
    why = [f"{drone_label(d)}: {text}" for d, text in sorted(short.items())]
    if trigger is not None:
        why.append(f"asked for by {trigger}")
    changed = sorted(
        set(draft["diff"].get("routes") or {}) | set(short) | {h["drone"] for h in hazards}
    )
    urgent = bool(hazards or short)
    return {"hazards": hazards, "why": why, "changed": changed, "urgent": urgent}


def _hazard(safety: Safety, drone_id: str) -> dict[str, Any] | None:
    """The known SAM the drone's plan in force enters beyond where the safety layer acts:
    ``{drone, sam, enters_tick, acts_tick, action}`` (mission ticks: a view counts down to
    them from the tick it shows), None when there is none."""
    w = safety.warnings.get(drone_id)
    if w is None:
        return None
    return {k: w[k] for k in ("drone", "sam", "enters_tick", "acts_tick", "action")}


def _warning(safety: Safety, drone_id: str) -> str | None:
    """A plan in force that no longer fits the drone's fuel, in words (None: it fits, or
    it flies none). A SAM ahead is a ``_hazard``: its words count down in the view."""
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


@dataclass(frozen=True)
class _Drone:
    """One drone as the tick left it: plain values and immutable paths, nothing that a
    later tick changes."""

    id: str
    status: str
    x: float
    y: float
    heading: float
    s: float
    fuel: float
    speed: float
    flight: Flight | None
    kept: Path | None
    checkpoint: tuple[bool, float] | None  # (airborne, arc length) of the round in flight
    returning: str | None
    held: str | None
    warning: str | None
    hazard: dict[str, Any] | None
    flown: list[list[float]]


def scene(
    executive: Executive, trails: dict[str, list[list[float]]] | None = None
) -> dict[str, Any]:
    """The whole picture a view needs, from what the executive holds now, as the
    ``scene`` topic's payload (the executive must have started; read it between ticks):
    ``capture_scene(executive, trails)()``.

    Targets carry a status (collected, excluded, planned, pending); SAMs say whether they
    are known (a hidden SAM is shown only on a view's truth toggle); each drone has its
    flown trail (``trails``: drone -> [x, y] points, kept by the host), the frozen part of
    its path (up to the checkpoint of a round in flight), the rest of its planned path as
    polylines, its route, fuel and ``margin_km``: the fuel left once the frozen and planned
    path is flown (airborne drones only, else None). Distances are km. ``draft`` is the
    plan under review, with what it changes against the committed plan, or None.
    """
    return capture_scene(executive, trails)()


def capture_scene(
    executive: Executive, trails: dict[str, list[list[float]]] | None = None
) -> Callable[[], dict[str, Any]]:
    """What ``scene`` reads, taken now (between ticks: copies of the world's arrays and of
    a few dicts), and a function that draws the picture from it later, in any thread: the
    drones read, the paths cut and sampled, the points of no return walked. The tick pays
    for the copies only; at 1,000 drones the drawing is what costs (tens of ms of Python),
    so a host renders it off the tick."""
    sim = executive.sim
    # The tick copies (``World.frozen``, the few dicts below); every drone is read from the
    # copies in ``render``: reading 1,000 drones one by one took 5-50 ms on the tick.
    world = sim.world.frozen()
    plan = executive.plan
    checkpoints = executive.checkpoints
    returning, held = dict(executive.returning), set(executive.operator_holds)
    safety = executive.safety
    safety_held = dict(safety.held)
    warnings = {d: w for d in safety.infeasible if (w := _warning(safety, d)) is not None}
    hazards = {d: h for d in safety.warnings if (h := _hazard(safety, d)) is not None}
    flown = {d: list(points) for d, points in (trails or {}).items()}

    def drones() -> list[_Drone]:
        out = []
        for drone_id in world.drone_ids:
            status = world.status(drone_id)
            x, y, heading = world.position(drone_id)
            c = checkpoints.get(drone_id)
            out.append(
                _Drone(
                    drone_id,
                    status,
                    x,
                    y,
                    heading,
                    world.progress(drone_id),
                    world.fuel(drone_id),
                    world.config.speed_of(drone_id),
                    world.flight(drone_id),
                    world.kept_path(drone_id) if status == "holding" else None,
                    None if c is None else (c.airborne, c.s),
                    returning.get(drone_id),
                    "operator: hold" if drone_id in held else safety_held.get(drone_id),
                    warnings.get(drone_id),
                    hazards.get(drone_id),
                    flown.get(drone_id, []),
                )
            )
        return out

    draft = _draft(executive.review())
    if draft is not None:
        draft |= _why(executive, draft)
    geo = executive.scenario.geo
    head = {
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
        "geo": geo.model_dump() if geo is not None else None,
    }
    constraints = executive.constraints.model_dump(mode="json")
    configs = executive.scenario.drone_configs
    # each drone's reserve now: the fleet's and, after a leak, its own share (on the tick)
    reserve_km, leak_reserve = executive.reserve_km, dict(executive.leak_reserve)

    def render() -> dict[str, Any]:
        known, truth, collected = (
            world.known_environment,
            world.truth_environment,
            world.collected(),
        )
        airports = {a.id: (a.x, a.y) for a in known.airports}
        known_targets, known_sams = list(known.targets), list(known.sams)
        known_ids = {k.id for k in known_sams}
        target_ids = {t.id for t in known_targets}
        return {
            **head,
            "airports": [{"id": a, "x": x, "y": y} for a, (x, y) in airports.items()],
            "targets": _targets(known_targets, known_sams, collected, plan),
            "sams": [
                {
                    "id": s.id,
                    "x": s.x,
                    "y": s.y,
                    "range": s.range,
                    "known": s.id in known_ids,
                }
                for s in truth.sams
            ],
            "drones": {
                d.id: _drone(
                    d,
                    configs[d.id],
                    plan,
                    airports,
                    target_ids,
                    collected,
                    reserve_km + leak_reserve.get(d.id, 0.0),
                )
                for d in drones()
            },
            "draft": draft,
            "constraints": constraints,
            "collected_points": float(sum(t.priority for t in known_targets if t.id in collected)),
        }

    return render


# (the targets' and SAMs' positions, which targets lie inside a SAM): the snapshots come
# every few seconds and the world seldom changes between two; 500 SAMs x 5,000 targets was
# 10-20 ms of Python beside the ticks each time
_LAST_INSIDE: tuple[bytes, bytes, np.ndarray] | None = None
_INSIDE_LOCK = threading.Lock()


def _inside(targets: list[Target], sams: list[Sam]) -> np.ndarray:
    """Per target, whether it lies inside a known SAM (one SAM at a time: memory
    O(targets), not targets x SAMs); the last answer again for the same positions."""
    global _LAST_INSIDE
    if not (targets and sams):
        return np.zeros(len(targets), dtype=bool)
    xy = np.array([(t.x, t.y) for t in targets])
    disks = np.array([(s.x, s.y, s.range) for s in sams])
    key = (xy.tobytes(), disks.tobytes())
    with _INSIDE_LOCK:
        last = _LAST_INSIDE
    if last is not None and last[0] == key[0] and last[1] == key[1]:
        return last[2]
    inside = np.zeros(len(targets), dtype=bool)
    for x, y, r in disks:
        inside |= np.hypot(xy[:, 0] - x, xy[:, 1] - y) < r
    inside.setflags(write=False)  # handed out again
    with _INSIDE_LOCK:
        _LAST_INSIDE = (*key, inside)
    return inside


def _targets(
    targets: list[Target], sams: list[Sam], collected: dict[str, str], plan: Solution | None
) -> list[dict[str, Any]]:
    """Each known target with its status; inside a known SAM is one numpy test for all."""
    planned: dict[str, str] = {}
    if plan is not None:
        for drone_id, result in plan.routes.items():
            for target in result.visited_targets:
                planned[target] = drone_id
    excluded = set(plan.excluded_targets) if plan is not None else set()
    inside = _inside(targets, sams)
    out = []
    for t, within in zip(targets, inside.tolist(), strict=True):
        status = (
            "collected"
            if t.id in collected
            else "excluded"
            if within or t.id in excluded
            else "planned"
            if t.id in planned
            else "pending"
        )
        out.append(
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
    return out


def _drone(
    d: _Drone,
    config: DroneConfig,
    plan: Solution | None,
    airports: dict[str, tuple[float, float]],
    target_ids: set[str],
    collected: dict[str, str],
    reserve: float,
) -> dict[str, Any]:
    """One drone's entry in the scene, drawn from what was captured."""
    flight = d.flight
    frozen = ahead = None
    if d.kept is not None:  # paused: the path RESUME flies again stays on the map
        ahead = d.kept
    elif flight is not None and d.status in ("flying", "holding") and not flight.holding:
        c = d.checkpoint
        if c is not None and c[0] and c[1] > d.s:
            frozen = _cut(flight.path, d.s, c[1])
            ahead = slice_path(flight.path, c[1])
        else:
            ahead = slice_path(flight.path, d.s)
    planned_route = plan.routes.get(d.id) if plan is not None else None
    route = planned_route.route if planned_route is not None else []
    remaining = ahead.length if ahead is not None else 0.0
    remaining += frozen.length if frozen is not None else 0.0
    airborne = d.status in ("flying", "holding")
    ends = [airports[a] for a in config.end_options(list(airports)) if a in airports]
    turn = _turn_home(
        (d.x, d.y), d.fuel, [p for p in (frozen, ahead) if p is not None], ends, reserve
    )
    return {
        "x": d.x,
        "y": d.y,
        "heading": d.heading,
        "status": d.status,
        "fuel": d.fuel,
        "budget": config.fuel_budget,
        "speed": d.speed,
        "sensors": config.accessible_targets,
        "enabled": config.enabled,
        "route": route,
        "remaining_km": remaining,
        # fuel left over once the planned path is flown: the margin ring on the map
        "margin_km": d.fuel - remaining if airborne else None,
        "next_target": next((t for t in route if t in target_ids and t not in collected), None),
        # the fleet table's point of no return (airborne drones only, else None)
        **(turn if airborne else dict.fromkeys(turn)),
        "flown": d.flown,
        "frozen": _polyline(frozen),
        "planned": _polyline(ahead),
        "holding": bool(flight is not None and flight.holding),
        # why the safety layer (or the operator) sent it home / holds it: words for a view
        "returning": d.returning,
        "held": d.held,
        # the plan in force no longer fits the fuel: words for the fleet row
        "warning": d.warning,
        # the plan in force meets a known SAM ahead, where the safety layer acts later:
        # {drone, sam, enters_tick, acts_tick, action}, counted down on the fleet row
        "hazard": d.hazard,
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
