"""What the coordinator knows of each drone, to refuse an impossible command at once.

``DroneFacts``: sensors, fuel left, where it is, where it may end, whether it can fly at all.
``fleet_from_scenario(scenario)`` reads them before take-off (fuel left = budget, at its start
airport); ``fleet_from_state(state)`` from a ``MissionState`` (duck-typed: its drones' status,
position, fuel and sensors, its scenario's ends).

``check_orders(decision, fleet, environment, collected)`` refuses, before anything is
acknowledged, a move whose drone cannot sense the target's type, is lost or disabled, or
cannot even fly to the target and on to an end with the fuel it has left (the SAM-avoiding
distance, a lower bound: a refused move is surely impossible); a move or a requirement of a
target strictly inside a known SAM (excluded), or already collected; a requirement no drone
can sense. Each refusal is an error naming the target, the drone and the reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agents.coordinator.decision import Decision
from agents.coordinator.schema import DroneContract, Refusal
from planner.geometry import SamField, planning_radius
from planner.model import Environment, Scenario, drone_label

__all__ = ["DroneFacts", "check_orders", "contracts", "fleet_from_scenario", "fleet_from_state"]

Point = tuple[float, float]


@dataclass(frozen=True)
class DroneFacts:
    """One drone as the coordinator checks commands against it."""

    id: str
    sensors: list[str] | Literal["ALL"]
    fuel: float  # km of flight left now
    budget: float  # km: its fuel budget as configured
    position: Point | None  # where it is now (its start airport before take-off)
    ends: tuple[str, ...]  # airports it may end at
    start_id: str | None = None
    home: str | None = None
    available: bool = True  # False: disabled or lost
    why_unavailable: str = ""
    synthetic_start: bool = False  # mid-mission: it starts again from a checkpoint
    reserve: float = 0.0  # km the policy keeps in reserve: a plan may not spend it

    def can_sense(self, target_type: str) -> bool:
        """Whether a sensor of this drone sees targets of ``target_type``."""
        return self.sensors == "ALL" or target_type in self.sensors


def fleet_from_scenario(scenario: Scenario) -> dict[str, DroneFacts]:
    """Each drone before take-off: full budget, at its start airport."""
    airports = {a.id: (a.x, a.y) for a in scenario.environment.airports}
    ids = list(airports)
    # a remainder's drones start at a checkpoint ("D1_START"), a start like an airport
    starts = {k: (p.x, p.y) for k, p in scenario.environment.synthetic_starts.items()}
    out = {}
    for drone_id, cfg in scenario.drone_configs.items():
        out[drone_id] = DroneFacts(
            id=drone_id,
            sensors=cfg.accessible_targets,
            fuel=float(cfg.fuel_budget),
            budget=float(cfg.fuel_budget),
            position=airports.get(cfg.start or "") or starts.get(cfg.start or ""),
            ends=tuple(cfg.end_options(ids)),
            start_id=cfg.start,
            home=cfg.home,
            available=bool(cfg.enabled),
            why_unavailable="" if cfg.enabled else "disabled",
            # "D1_START": a checkpoint, not an airport (seed B.5's synthetic start)
            synthetic_start=cfg.start in starts
            or (cfg.start is not None and cfg.start not in airports),
        )
    return out


def fleet_from_state(state: Any) -> dict[str, DroneFacts]:
    """Each drone as a ``MissionState`` holds it (now: fuel left, position, status)."""
    scenario: Scenario = state.scenario
    ids = [a.id for a in state.environment.airports]
    out = {}
    for drone_id, d in state.drones.items():
        cfg = scenario.drone_configs.get(drone_id)
        ends = tuple(cfg.end_options(ids)) if cfg is not None else ()
        lost = d.status == "lost"
        enabled = cfg.enabled if cfg is not None else True
        airborne = d.status in ("flying", "holding")
        out[drone_id] = DroneFacts(
            id=drone_id,
            sensors=d.sensors,
            fuel=float(d.fuel),
            budget=float(d.budget),
            position=(float(d.x), float(d.y)),
            ends=ends,
            start_id=f"{drone_label(drone_id)}_START" if airborne else (cfg.start if cfg else None),
            home=d.home,
            available=enabled and not lost and d.status != "landed",
            why_unavailable=(
                f"lost ({d.lost_reason})"
                if lost
                else "disabled"
                if not enabled
                else "landed"
                if d.status == "landed"
                else ""
            ),
            synthetic_start=airborne
            or (cfg is not None and cfg.start is not None and cfg.start not in ids),
            reserve=float(getattr(state, "fuel_reserve", 0.0) or 0.0),
        )
    return out


def contracts(fleet: Mapping[str, DroneFacts]) -> dict[str, DroneContract]:
    """Seed B.5's ``drone_contracts`` from the facts."""
    return {
        d.id: DroneContract(
            enabled=d.available,
            start_id=d.start_id,
            home_airport=d.home,
            end_airport=d.ends[0] if len(d.ends) == 1 else None,
            is_synthetic_start=d.synthetic_start,
            flexible_endpoint=len(d.ends) > 1,
            sensors=d.sensors,
            fuel_budget=d.budget,
            fuel_left=d.fuel,
        )
        for d in fleet.values()
    }


class _Distances:
    """SAM-avoiding distances over the known SAMs (the planner's buffered radii)."""

    def __init__(self, environment: Environment) -> None:
        sams = [(s.x, s.y, planning_radius(s.range)) for s in environment.sams]
        self.field = SamField(sams) if sams else None
        self.airports = {a.id: (a.x, a.y) for a in environment.airports}

    def between(self, p: Point, q: Point) -> float:
        if self.field is None:
            return math.hypot(p[0] - q[0], p[1] - q[1])
        path = self.field.shortest_path(p, q)
        return math.inf if path is None else float(path.length)


def _inside_sam(environment: Environment, x: float, y: float) -> str | None:
    for sam in environment.sams:
        if math.hypot(x - sam.x, y - sam.y) < sam.range:
            return sam.id
    return None


def check_orders(
    d: Decision,
    fleet: Mapping[str, DroneFacts],
    environment: Environment,
    collected: Mapping[str, str] | Iterable[str] = (),
) -> list[Refusal]:
    """Refuse the impossible moves and requirements of ``d``: they are removed from it and
    returned, each with its reason (see the module docstring)."""
    done = dict(collected) if isinstance(collected, Mapping) else dict.fromkeys(collected, "")
    targets = {t.id: t for t in environment.targets}
    refused: list[Refusal] = []
    distances: _Distances | None = None
    keep = []
    for move in d.moves:
        t, drone = move["target"], move["to_drone"]
        what = f"move {t} to {drone_label(drone)}"
        target = targets.get(t)
        facts = fleet.get(drone)
        reason, why = "", ""
        if target is None or facts is None:
            keep.append(move)  # unknown ids are the ids module's errors
            continue
        sam = _inside_sam(environment, target.x, target.y)
        if t in done:
            by = f" by {drone_label(done[t])}" if done[t] else ""
            reason, why = "collected", f"{t} is already collected{by}"
        elif not facts.available:
            reason, why = "unavailable", f"{drone_label(drone)} is {facts.why_unavailable}"
        elif not facts.can_sense(target.type):
            sensors = "ALL" if facts.sensors == "ALL" else ", ".join(facts.sensors) or "none"
            able = [drone_label(f.id) for f in fleet.values() if f.can_sense(target.type)]
            reason = "sensor"
            why = (
                f"{drone_label(drone)}'s sensors ({sensors}) cannot see {t}"
                f" (type {target.type}); "
                + (f"it can be sensed by {', '.join(able)}" if able else "no drone can sense it")
            )
        elif sam is not None:
            reason, why = "excluded", f"{t} is inside {sam} (excluded)"
        elif facts.position is not None and facts.ends:
            distances = distances or _Distances(environment)
            there = distances.between(facts.position, (target.x, target.y))
            back = min(
                (
                    distances.between((target.x, target.y), distances.airports[e])
                    for e in facts.ends
                    if e in distances.airports
                ),
                default=math.inf,
            )
            need = there + back
            reserve = facts.reserve + d.fuel_reserve.get(drone, 0.0)  # the policy's, the words'
            if need > facts.fuel - reserve + 1e-6:
                kept = f" ({reserve:.1f} km kept in reserve)" if reserve else ""
                reason = "fuel"
                why = (
                    f"{drone_label(drone)} has {facts.fuel:.1f} km of fuel left{kept};"
                    f" flying to {t} and on to an end airport takes at least {need:.1f} km"
                )
        if reason:
            refused.append(Refusal(command=what, target=t, drone=drone, reason=reason, detail=why))
        else:
            keep.append(move)
    d.moves = keep
    required: list[str] = []
    for t in d.required:
        target = targets.get(t)
        if target is None:
            continue
        sam = _inside_sam(environment, target.x, target.y)
        sensing = [f for f in fleet.values() if f.available and f.can_sense(target.type)]
        if sam is not None:
            refused.append(
                Refusal(
                    command=f"require {t}",
                    target=t,
                    reason="excluded",
                    detail=f"{t} is inside {sam} (excluded)",
                )
            )
        elif not sensing:
            refused.append(
                Refusal(
                    command=f"require {t}",
                    target=t,
                    reason="no_sensor",
                    detail=f"no available drone can sense {t} (type {target.type})",
                )
            )
        else:
            required.append(t)
    d.required = required
    for drone, km in list(d.fuel_reserve.items()):
        facts = fleet.get(drone)
        if facts is None or not facts.available:
            continue  # an unknown drone is the ids' error; a lost one flies no plan
        if km < 0 or km >= facts.fuel - facts.reserve:
            what = f"keep {km:g} km in reserve for {drone_label(drone)}"
            refused.append(
                Refusal(
                    command=what,
                    target="",
                    drone=drone,
                    reason="fuel",
                    detail=f"{drone_label(drone)} has {facts.fuel:.1f} km of fuel left:"
                    f" a reserve of {km:g} km leaves nothing to fly",
                )
            )
            del d.fuel_reserve[drone]
    return refused
