"""Which drones of a compiled mission can be planned at all, and how the others are helped.

A drone can be planned when, after its frozen prefix, some allowed end airport lies within
its fuel on SAM-avoiding paths. When none does (its home airport fell inside a SAM, or a
detour ate its fuel) but another airport is reachable, it is planned to end at any
reachable airport instead. When no airport is reachable it is left out, with the reason:
the solvers would fail the whole fleet for it ("no feasible route"), and one drone that
cannot be planned must never stop the others from being planned.

:func:`feasibility_warnings` says the same before a plan is asked for (``isr validate``):
per drone, by its id, whether its fuel reaches its end, any airport, any target it may
visit and back; per target, whether any drone can sense it and reach it.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from planner.mission import DroneSpec, Mission
from planner.model import drone_label

__all__ = ["Plannable", "feasibility_warnings", "plannable"]

_TOL = 1e-9  # km of fuel: the solvers' own feasibility tolerance is looser


@dataclasses.dataclass(frozen=True)
class Plannable:
    """A mission narrowed to what can be planned, and what was changed to get there."""

    mission: Mission  # the same mission when nothing had to change
    rerouted: dict[str, str]  # drone -> why it may now end at any reachable airport
    left_out: dict[str, str]  # drone -> why it cannot be planned


def plannable(mission: Mission) -> Plannable:
    """The drones of ``mission`` that can be planned; see the module docstring."""
    dist = mission.dist
    specs: list[DroneSpec] = []
    rerouted: dict[str, str] = {}
    left_out: dict[str, str] = {}
    for spec in mission.drones:
        chain = [spec.start, *spec.prefix]
        used = sum(float(dist[a, b]) for a, b in zip(chain, chain[1:]))
        last = chain[-1]
        label = drone_label(spec.id)
        if not math.isfinite(used) or used > spec.budget + _TOL:
            left_out[spec.id] = f"{label}: its frozen legs alone need {used:.1f} km of fuel"
            continue

        if _reach(dist[last], spec.ends, used, spec.budget):
            specs.append(spec)
            continue
        wanted = ", ".join(mission.node_ids[e] for e in spec.ends)
        blocked = all(not math.isfinite(float(dist[last, e])) for e in spec.ends)
        why = "no path avoids the known SAMs" if blocked else "not within its fuel"
        others = _reach(dist[last], mission.airport_nodes, used, spec.budget)
        if others:
            specs.append(dataclasses.replace(spec, ends=others))
            ids = ", ".join(mission.node_ids[e] for e in others)
            rerouted[spec.id] = (
                f"{label}: cannot reach its end airport {wanted} ({why}); "
                f"planned to end at a reachable airport instead ({ids})"
            )
        else:
            left_out[spec.id] = (
                f"{label}: no airport is reachable with its {spec.budget - used:.1f} km of fuel "
                f"on paths that avoid the known SAMs"
            )
    if not rerouted and not left_out:
        return Plannable(mission, {}, {})
    narrowed = dataclasses.replace(mission, drones=specs)
    return Plannable(narrowed, rerouted, left_out)


def _reach(row: np.ndarray, ends: tuple[int, ...], used: float, budget: float) -> tuple[int, ...]:
    """The ends reachable with ``budget - used`` km of fuel from the node whose distances
    are ``row``."""
    return tuple(e for e in ends if used + float(row[e]) <= budget + _TOL)


def feasibility_warnings(mission: Mission) -> list[str]:
    """What a plan of ``mission`` will have to leave out, one line each, ``<JSON path>:
    drone D1: ...`` or ``<JSON path>: target T9: ...``; empty when every enabled drone can
    fly a route with a target in it and every plannable target is within some drone's reach.

    It reads only the distances from the drones' starts and frozen targets and from the
    airports (``PathTable.rows``): on a lazy mission, no more of the table is computed.
    """
    sources = sorted(
        {n for spec in mission.drones for n in (spec.start, *spec.prefix)}
        | set(mission.airport_nodes)
    )
    row_of = {node: i for i, node in enumerate(sources)}
    table = mission.paths.rows(sources)
    warnings: list[str] = []
    reach = np.zeros(len(mission.node_ids), dtype=np.bool_)  # targets some drone can fly to
    for spec in mission.drones:
        at = f"$.drone_configs[{json.dumps(spec.id)}]"
        who = f"drone {drone_label(spec.id)}"
        chain = [spec.start, *spec.prefix]
        used = sum(float(table[row_of[a], b]) for a, b in zip(chain, chain[1:]))
        left = spec.budget - used
        if not math.isfinite(used) or left < -_TOL:
            warnings.append(
                f"{at}.frozen_segments: {who}: its frozen legs need {used:.1f} km of fuel,"
                f" it has {spec.budget:g} km; it will not be planned"
            )
            continue
        fuel = f"fuel {spec.budget:g} km" if not spec.prefix else f"fuel left {left:.1f} km"
        last = chain[-1]
        row = table[row_of[last]]
        ends = _reach(row, spec.ends, used, spec.budget)
        rerouted = not ends
        if rerouted:
            ends = _reach(row, mission.airport_nodes, used, spec.budget)
            wanted = ", ".join(mission.node_ids[e] for e in spec.ends)
            way = min((float(row[e]) for e in spec.ends), default=math.inf)
            far = f"{way:.1f} km away" if math.isfinite(way) else "no path avoids the SAMs"
            then = (
                f"it will end at {', '.join(mission.node_ids[e] for e in ends)} instead"
                if ends
                else "no airport is within reach; it will stay where it is"
            )
            warnings.append(
                f"{at}.fuelBudget: {who}: {fuel} cannot reach its end airport {wanted}"
                f" ({far}); {then}"
            )
            if not ends:
                continue
        eligible = sorted(set(spec.eligible) - _frozen_elsewhere(mission, spec))
        if not eligible:
            continue  # scenario_problems names a drone with no eligible target
        back_rows = table[[row_of[e] for e in ends]]  # the ends' rows: symmetric distances
        tour = row[eligible] + back_rows[:, eligible].min(axis=0)
        fits = tour <= left + _TOL
        reach[np.asarray(eligible)[fits]] = True
        if not fits.any():
            best = int(np.argmin(tour))
            back = "and return" if spec.config.mode == "return" and not rerouted else "and land"
            nearest = (
                f" (the shortest, via {mission.node_ids[eligible[best]]}, is {tour[best]:.1f} km)"
                if math.isfinite(float(tour[best]))
                else ""
            )
            warnings.append(
                f"{at}.fuelBudget: {who}: {fuel} cannot reach any eligible target {back}{nearest}"
            )
    warnings.extend(_unreached_targets(mission, reach))
    return warnings


def _frozen_elsewhere(mission: Mission, spec: DroneSpec) -> set[int]:
    return {n for other in mission.drones if other is not spec for n in other.prefix}


def _unreached_targets(mission: Mission, reach: np.ndarray) -> list[str]:
    """Targets no drone can sense, or none can fly to and still end within its fuel."""
    out = []
    frozen = {n for spec in mission.drones for n in spec.prefix}
    sensed = mission.sensed
    for i, target in enumerate(mission.environment.targets):
        node = mission.index.get(target.id)
        if node is None or node not in mission.is_target or reach[node] or node in frozen:
            continue  # excluded (inside a SAM: named apart), reachable, or already flown
        at = f"$.environment.targets[{i}]"
        if node not in sensed:
            out.append(
                f"{at}.type: target {target.id}: no enabled drone senses type {target.type!r}"
            )
        else:
            out.append(f"{at}: target {target.id}: no drone can reach it within its fuel")
    return out
