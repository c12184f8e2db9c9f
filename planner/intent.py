"""A plan's intent, routed again from a new start: the same targets in the same order.

A plan made a while ago (a draft waiting for review, an agent's late proposal) still says
what the operator or the agent wanted: for each drone, the ordered targets still to visit
and where it ends. ``route_intent`` routes that intent exactly on a newly compiled mission
(new starts, the SAMs known now): SAM-avoiding legs between the same targets in the same
order. Nothing is added; what cannot be kept is dropped and named: a target that is gone
(collected, removed), inside a SAM, unreachable, no longer eligible, or that no longer fits
the fuel (dropped one at a time, the one whose removal saves the most fuel per point first).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from planner.mission import DroneSpec, Mission
from planner.model import Solution
from planner.routing import route_allocation

__all__ = ["Intent", "RoutedIntent", "intent_of", "route_intent"]

_TOL = 1e-6  # km of fuel

Intent = dict[str, tuple[str, ...]]  # drone -> ordered targets still to visit


def intent_of(solution: Solution, targets: set[str] | None = None) -> Intent:
    """Each drone's ordered targets in ``solution`` (only ``targets`` when given)."""
    return {
        d: tuple(t for t in r.visited_targets if targets is None or t in targets)
        for d, r in solution.routes.items()
    }


@dataclasses.dataclass(frozen=True)
class RoutedIntent:
    """Routes (node ids, start to end) for ``planner.solution.build_solution``."""

    routes: dict[str, list[int]]  # node indices of the mission, start to end
    dropped: dict[str, str]  # target -> why it could not be kept
    kept: Intent  # the targets routed, per drone, in order
    ends: dict[str, str]  # the end airport, per drone


def route_intent(
    mission: Mission,
    intent: Mapping[str, Sequence[str]],
    *,
    ends: Mapping[str, str] | None = None,
    gone: Mapping[str, str] | None = None,
    reorder: bool = False,
) -> RoutedIntent:
    """Route ``intent`` on ``mission``; ``ends`` are the preferred end airports (kept when
    allowed and reachable), ``gone`` the targets known to be done and why (collected...),
    which are left out silently. With ``reorder`` the intent is an allocation (each drone's
    targets, in any order): each drone's kept targets are routed exactly, best order and
    end, as many as its fuel allows (an agent's allocation says who, not in what order)."""
    gone = gone or {}
    routes: dict[str, list[int]] = {}
    dropped: dict[str, str] = {}
    over_fuel: dict[str, list[int]] = {}  # per drone, dropped for fuel in the given order
    for spec in mission.drones:
        wanted = [t for t in intent.get(spec.id, ()) if t not in gone]
        keep: list[int] = []
        for target in wanted:
            why = _why_not(mission, spec, target, keep)
            if why is None:
                keep.append(mission.index[target])
            else:
                dropped[target] = why
        chain = [spec.start, *spec.prefix]
        end = _end(mission, spec, chain + keep, (ends or {}).get(spec.id))
        while keep and _length(mission, [*chain, *keep, end]) > spec.budget + _TOL:
            worst = _least_worth(mission, chain, keep, end)
            dropped[mission.node_ids[keep[worst]]] = "no longer fits the fuel"
            over_fuel.setdefault(spec.id, []).append(keep[worst])
            del keep[worst]
            end = _end(mission, spec, chain + keep, (ends or {}).get(spec.id))
        routes[spec.id] = [*chain, *keep, end]
    if reorder:
        kept_nodes = {d: r[1 + len(mission.drone(d).prefix) : -1] for d, r in routes.items()}
        allocation = {d: [*nodes, *over_fuel.get(d, [])] for d, nodes in kept_nodes.items()}
        routes = route_allocation(mission, allocation)
        routed = {n for r in routes.values() for n in r}
        for nodes in allocation.values():
            for n in nodes:
                name = mission.node_ids[n]
                if n in routed:
                    dropped.pop(name, None)
                else:
                    dropped[name] = "no longer fits the fuel"
    kept = {
        d: tuple(mission.node_ids[n] for n in r[1 + _prefix(mission, d) : -1])
        for d, r in routes.items()
    }
    end_ids = {d: mission.node_ids[r[-1]] for d, r in routes.items()}
    return RoutedIntent(routes, dropped, kept, end_ids)


def _prefix(mission: Mission, drone_id: str) -> int:
    return len(mission.drone(drone_id).prefix)


def _why_not(mission: Mission, spec: DroneSpec, target: str, keep: list[int]) -> str | None:
    if target in mission.excluded_targets:
        return "inside a SAM"
    node = mission.index.get(target)
    if node is None or node not in mission.is_target:
        return "no longer a target"
    if node not in spec.can_visit:
        return "its sensors cannot see it"
    if node in keep or node in spec.prefix:
        return "listed twice"
    previous = keep[-1] if keep else (spec.prefix[-1] if spec.prefix else spec.start)
    if not math.isfinite(float(mission.dist[previous, node])):
        return "no path to it avoids the known SAMs"
    return None


def _length(mission: Mission, route: list[int]) -> float:
    return float(sum(float(mission.dist[a, b]) for a, b in zip(route, route[1:])))


def _end(mission: Mission, spec: DroneSpec, head: list[int], preferred: str | None) -> int:
    """The preferred end if allowed and reachable within the fuel, else the allowed end
    that makes the route shortest."""
    options = list(spec.ends)
    if preferred is not None and preferred in mission.index:
        p = mission.index[preferred]
        if p in options and _length(mission, [*head, p]) <= spec.budget + _TOL:
            return p
    return min(options, key=lambda e: (_length(mission, [*head, e]), e))


def _least_worth(mission: Mission, chain: list[int], keep: list[int], end: int) -> int:
    """The kept target whose removal saves the most fuel per point lost."""
    route = [*chain, *keep, end]
    base = len(chain)
    best, best_ratio = 0, -math.inf
    for i, node in enumerate(keep):
        k = base + i
        saved = (
            float(mission.dist[route[k - 1], node])
            + float(mission.dist[node, route[k + 1]])
            - float(mission.dist[route[k - 1], route[k + 1]])
        )
        ratio = saved / max(float(mission.scores[node]), 1e-9)
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    return best
