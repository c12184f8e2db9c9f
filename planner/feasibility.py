"""Which drones of a compiled mission can be planned at all, and how the others are helped.

A drone can be planned when, after its frozen prefix, some allowed end airport lies within
its fuel on SAM-avoiding paths. When none does (its home airport fell inside a SAM, or a
detour ate its fuel) but another airport is reachable, it is planned to end at any
reachable airport instead. When no airport is reachable it is left out, with the reason:
the solvers would fail the whole fleet for it ("no feasible route"), and one drone that
cannot be planned must never stop the others from being planned.
"""

from __future__ import annotations

import dataclasses
import math

from planner.mission import DroneSpec, Mission
from planner.model import drone_label

__all__ = ["Plannable", "plannable"]

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

        if _reach(mission, spec.ends, last, used, spec.budget):
            specs.append(spec)
            continue
        wanted = ", ".join(mission.node_ids[e] for e in spec.ends)
        blocked = all(not math.isfinite(float(dist[last, e])) for e in spec.ends)
        why = "no path avoids the known SAMs" if blocked else "not within its fuel"
        others = _reach(mission, mission.airport_nodes, last, used, spec.budget)
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


def _reach(
    mission: Mission, ends: tuple[int, ...], last: int, used: float, budget: float
) -> tuple[int, ...]:
    """The ends reachable from ``last`` with ``budget - used`` km of fuel."""
    return tuple(e for e in ends if used + float(mission.dist[last, e]) <= budget + _TOL)
